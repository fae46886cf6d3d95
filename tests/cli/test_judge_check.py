"""``kramabench judge-check`` end to end: the CLI, the real openai client and the local test server."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app
from kramabench.run.judge_check import load_labelled_set
from kramabench.workload import resolve_workload_root

_CODE_RE = re.compile(r"<<<CODE\n(.*)\nCODE>>>", re.DOTALL)
_IDS_RE = re.compile(r"one verdict for each of: ([^.\n]+)\.")


@pytest.fixture
def cli():
    app = build_app()
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args), env={"COLUMNS": "400", "NO_COLOR": "1"})

    return invoke


def _labelled_handler(flip_name: str | None = None):
    """Answers from the labels of the mini set ("Yes"/"No" strings); ``flip_name``'s kf-1 says no on call 2."""
    cases = {c.code.strip(): c for c in load_labelled_set(resolve_workload_root("mini"))}
    calls: dict[str, int] = {}

    def handler(req):
        text = req.last_user_message
        case = cases[_CODE_RE.search(text).group(1).strip()]
        n = calls[case.name] = calls.get(case.name, 0) + 1
        ids = [i.strip() for i in _IDS_RE.search(text).group(1).split(",")]
        verdicts = []
        for i in ids:
            ok = case.labels[i] and not (case.name == flip_name and i == "kf-1" and n == 2)
            verdicts.append({"id": i, "implemented": "Yes" if ok else "No", "reason": "scripted"})
        return json.dumps({"analysis": "scripted", "verdicts": verdicts})

    return handler


@pytest.mark.api
def test_judge_check_json(cli, openai_server):
    openai_server.handler = _labelled_handler(flip_name="reference:harbor-easy-1")
    model_id = f"openai-compatible/judge@{openai_server.base_url}"
    res = cli("judge-check", "--judge", model_id, "--k", "3", "--workload", "mini", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    n_cases = len(load_labelled_set(resolve_workload_root("mini")))
    assert out["judge"] == model_id and out["k"] == 3 and out["n_cases"] == n_cases
    assert len(openai_server.requests) == 3 * n_cases
    assert out["n_flipped"] == 1
    assert out["flip_rate"] == pytest.approx(1 / out["n_items"])
    c = out["confusion"]
    assert c["fp"] == 0 and c["fn"] == 1
    assert out["accuracy"] == pytest.approx((c["tp"] + c["tn"]) / (3 * out["n_items"]))
    assert 0.9 < out["kappa"] < 1.0


@pytest.mark.api
def test_judge_check_table(cli, openai_server):
    openai_server.handler = _labelled_handler()
    res = cli(
        "judge-check",
        "--judge",
        f"openai-compatible/judge@{openai_server.base_url}",
        "--k",
        "2",
        "--domain",
        "grid",
    )
    assert res.exit_code == 0, res.output
    assert "Judge check" in res.stdout
    assert "broken/grid-easy-5-utf8.py" in res.stdout and "reference:grid-easy-1" in res.stdout
    assert "harbor" not in res.stdout
    assert re.search(r"flip rate\s+0\.0%", res.stdout)
    assert re.search(r"accuracy\s+100\.0%", res.stdout)
    assert re.search(r"Cohen's kappa\s+1\.000", res.stdout)


@pytest.mark.api
def test_judge_check_unparsable_replies_are_unscored(cli, openai_server):
    openai_server.default = "I would rather not say."
    res = cli(
        "judge-check",
        "--judge",
        f"openai-compatible/judge@{openai_server.base_url}",
        "--k",
        "1",
        "--domain",
        "grid",
        "--json",
    )
    assert res.exit_code == 1, res.output  # nothing measured: not a passed check
    out = json.loads(res.stdout)
    assert len(openai_server.requests) == 2 * out["n_cases"]  # every case asked twice
    assert out["n_unscored"] == out["n_items"]
    assert out["accuracy"] is None and out["kappa"] is None and out["flip_rate"] is None


def test_judge_check_errors_are_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    res = cli("judge-check", "--judge", "openai/gpt-4o-mini")
    assert res.exit_code == 2 and "OPENAI_API_KEY" in res.output and "Traceback" not in res.output
    (tmp_path / "workload").mkdir()
    res = cli(
        "judge-check", "--judge", "openai-compatible/x@http://127.0.0.1:9/v1", "--workload", str(tmp_path)
    )
    assert res.exit_code == 2 and "no labelled set" in res.output


def test_judge_check_with_a_failing_judge_fails_clearly(cli, openai_server):
    from kramabench.testing.openai_server import Reply

    openai_server.default = Reply.error(400, "model not found (test server)")  # not retried
    res = cli(
        "judge-check",
        "--judge",
        f"openai-compatible/judge@{openai_server.base_url}",
        "--k",
        "1",
        "--domain",
        "grid",
    )
    assert res.exit_code == 1, res.output
    assert "no verdict could be scored" in res.output and "Traceback" not in res.output
