"""``kramabench audit failures``: a real DS-Guru run on the planted workload, audited by a scripted Auditor.

The system under test and the auditor are the real code paths (runner, DS-Guru loop, sandbox, openai
client) talking to the local OpenAI-compatible server; only the model replies are scripted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

pytestmark = [pytest.mark.api, pytest.mark.slow]


def _cli(*args: str):  # noqa: ANN202
    from kramabench.cli.main import build_app

    return CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.fixture
def planted_run(tmp_path: Path, openai_server, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: ANN001
    openai_server.handler = scripted.handler()
    res = _cli("run", "-w", "planted", "-s", "ds-guru-naive", "-m", f"openai-compatible/sut@{openai_server.base_url}",
               "--sandbox", "local", "--results", str(tmp_path / "results"), "--run-id", "sut")  # fmt: skip
    assert res.exit_code == 0, res.output
    return tmp_path / "results" / "sut"


def test_planted_errors_are_attributed_to_whom_they_belong(
    planted_run: Path, openai_server, tmp_path: Path
) -> None:  # noqa: ANN001
    system_requests = list(openai_server.requests)
    # the system under test never saw a gold answer (93.2 is lab-easy-2's planted gold)
    assert system_requests and not any("93.2" in json.dumps(r.body) for r in system_requests)

    ref_dir = tmp_path / "reference"
    assert _cli("audit", "reference", "-w", "planted", "-o", str(ref_dir)).exit_code == 0
    res = _cli("audit", "failures", str(planted_run), "--auditor", f"openai-compatible/auditor@{openai_server.base_url}",
               "--concurrency", "2", "--reference", str(ref_dir))  # fmt: skip
    assert res.exit_code == 0, res.output
    out_dir = planted_run / "audit"
    reports = {
        r["task_id"]: r for r in map(json.loads, (out_dir / "failures.jsonl").read_text().splitlines())
    }
    # lab-easy-4 was answered right: not a failure, not audited
    assert set(reports) == {"lab-easy-1", "lab-easy-2", "lab-easy-3", "lab-hard-1"}
    got = {t: (r["attribution"], r["category"], r["sub_kind"]) for t, r in reports.items()}
    assert got == {
        "lab-easy-1": ("system", "flawed-logic", None),  # planted system error
        "lab-easy-2": ("benchmark", "gold-calculation-error", None),  # planted gold error
        "lab-easy-3": ("benchmark", "evaluation-false-positive", "format"),  # correct but rejected
        "lab-hard-1": ("system", "join-error", None),  # planted system error
    }
    # the audit ran the derivations itself: the system errors' golds are reproduced by the code
    for tid in ("lab-easy-1", "lab-hard-1", "lab-easy-3"):
        assert reports[tid]["gold_reproduced"] is True and reports[tid]["derivation"]["ran"], tid
    gold_error = reports["lab-easy-2"]
    # a derivation that makes the wrong gold is the best evidence of a gold error, not a problem of the report
    assert gold_error["gold_reproduced"] is True and gold_error["derivation"]["printed"] == 93.2
    assert gold_error["problems"] == [] and "shows how the gold was made" in gold_error["evidence"][0]
    assert gold_error["correction"]["ran"] and gold_error["correction"]["printed"] == 39.2
    assert gold_error["correction"]["matches"] is True
    # the exploration code ran in the sandbox against the lake and its output went back to the auditor
    runs = [e for e in reports["lab-easy-2"]["transcript"] if "ran" in e]
    assert runs and runs[0]["ran"] == "ok" and "39.2" in runs[0]["stdout"]
    auditor_requests = [r for r in openai_server.requests[len(system_requests) :]]
    assert any("Gold answer: 93.2" in json.dumps(r.body) for r in auditor_requests)

    text = " ".join(res.output.split())
    assert "2 of 4 failures (50%) attributable to the benchmark, 2 to the system, 0 undecided" in text
    md = (out_dir / "audit.md").read_text()
    assert "2 of 4 audited failures (50%) are attributable to the benchmark" in md
    # one page: the headline first, then the reference solutions (lab-easy-2's differs from its gold), proposals
    order = [
        md.index(h) for h in ("## Failures by attribution", "## Reference solutions", "## Proposed errata")
    ]
    assert order == sorted(order) and "| lab | 4 | 1 | 0 | 0 |" in md and "gold 93.2, printed 39.2" in md
    page = (out_dir / "audit.html").read_text()
    assert "<html>" in page
    # titled by what ran, not by the folder; every report in full: root cause, evidence, code and what it printed
    assert (
        md.startswith("# Audit of the failures of ds-guru-naive with openai-compatible/sut@")
        and "— run sut" in md
    )
    assert "the pipeline joins the sites on the day instead of the site code" in md
    assert "## Failure reports" in md and "### lab/lab-easy-2 — benchmark: gold-calculation-error" in md
    assert "print(t[1] + t[0] + t[2:])" in md and "printed 93.2" in md and "printed 39.2" in md
    assert "the derivation shows how the wrong gold was made" in md
    assert "Failure reports" in page and "print(t[1] + t[0] + t[2:])" in page

    # Corrector: a new answer from the verified correction, a type change for the rejected format
    from kramabench.audit.corrector import read_proposals

    props = {p[2]: p for p in read_proposals(out_dir / "proposals.toml")}
    new_answer = props["lab/lab-easy-2"]
    assert new_answer[1] == "new-answer" and new_answer[3]["new"] == 39.2 and new_answer[3]["old"] == 93.2
    # the reason names each code by its own hash: the correction's, and the derivation that made the old gold
    import hashlib

    reason = new_answer[3]["reason"]
    fix = hashlib.sha256(gold_error["correction"]["code"].encode()).hexdigest()[:12]
    how = hashlib.sha256(gold_error["derivation"]["code"].encode()).hexdigest()[:12]
    assert (
        f"the correction code, sha256 {fix}" in reason
        and f"the derivation, sha256 {how}…, reproduces" in reason
    )
    assert (
        props["lab/lab-easy-3"][1] == "type-change"
        and props["lab/lab-easy-3"][3]["new"] == "string_approximate"
    )
    assert not any(
        k in props for k in ("lab/lab-easy-1", "lab/lab-hard-1")
    )  # system errors: nothing to correct

    errata = tmp_path / "errata.toml"
    res = _cli(
        "audit", "apply", str(out_dir / "proposals.toml"), "--accept", new_answer[0], "--errata", str(errata)
    )
    assert res.exit_code == 0, res.output
    from kramabench.workload import load_workload

    wl = load_workload(scripted.PLANTED, "lab", errata=errata)
    assert wl.task("lab-easy-2").answer == 39.2 and wl.task("lab-easy-3").answer_type == "string_exact"
    res = _cli("audit", "apply", str(out_dir / "proposals.toml"), "--accept", "P99", "--errata", str(errata))
    assert res.exit_code == 2 and "no proposal P99" in res.output

    # resume: the reports are kept, no auditor call is made again
    n = len(openai_server.requests)
    res = _cli(
        "audit",
        "failures",
        str(planted_run),
        "--auditor",
        f"openai-compatible/auditor@{openai_server.base_url}",
    )
    assert res.exit_code == 0 and "(4 reports reused)" in " ".join(res.output.split())
    assert len(openai_server.requests) == n


def test_reliability_kappa_on_the_labelled_set(
    openai_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    model = f"openai-compatible/auditor@{openai_server.base_url}"
    openai_server.handler = scripted.handler()
    res = _cli("audit", "reliability", "--auditor", model, "--k", "2", "--json")
    assert res.exit_code == 0, res.output
    result = json.loads(res.output)
    assert (
        result["kappa_attribution"] == 1.0 and result["kappa_category"] == 1.0 and result["flip_rate"] == 0.0
    )

    # an auditor that blames the system for the planted gold error in one run of two
    calls = {"n": 0}
    wrong = scripted.handler({"lab-easy-2": {"attribution": "system", "category": "flawed-logic"}})
    right = scripted.handler()

    def flaky(request):  # noqa: ANN001, ANN202
        text = json.dumps(request.body)
        if "Task lab-easy-2 " in text and "Run: " in text:
            calls["n"] += 1
            return (wrong if calls["n"] == 1 else right)(request)
        return right(request)

    openai_server.handler = flaky
    res = _cli("audit", "reliability", "--auditor", model, "--k", "2", "--json")
    result = json.loads(res.output)
    assert (
        result["flip_rate"] == 0.25
        and 0 < result["kappa_attribution"] < 1
        and result["accuracy_attribution"] == 7 / 8
    )
