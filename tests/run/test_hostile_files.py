"""Hostile files given to a run, second battery (issue 28): paths that lead out of the workload root, files
that are not regular (devices, FIFOs, links), oversized files, unwritable run folders. Each through the CLI,
as a user meets it: one line, the right exit code, no traceback, and no host file in any record or prompt."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.run.store import RunStore
from kramabench.testing.hostile import run_measured

from .synth import make_workload, write_system_module

REPO = Path(__file__).resolve().parents[2]
SECRET = "HOST-SECRET-91c2"


def _kb(
    *args: str,
    timeout: float = 300,
    env: dict | None = None,
    prefix: list[str] | None = None,
    cwd: Path = REPO,
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "kramabench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300", **(env or {})},
    )


def _one_error_line(out: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in out.stderr, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stderr
    return lines[0]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    p = tmp_path / "host" / "passwd"
    p.parent.mkdir()
    p.write_text(f"root:x:0:0:{SECRET}:/root:/bin/bash\n")
    return p


@pytest.mark.api
def test_a_solution_outside_the_root_never_reaches_a_record_or_the_judge(tmp_path, secret, openai_server):
    root = make_workload(tmp_path / "wl", n=4, solutions=True)
    wf = root / "workload" / "synth.json"
    tasks = json.loads(wf.read_text())
    tasks[0]["solution"] = str(secret)
    tasks[1]["solution"] = os.path.relpath(secret, root)
    for i in (1, 2, 3):  # no solution of the layout's to fall back to
        (root / "solutions" / f"synth-easy-{i}.py").unlink()
    (root / "solutions" / "synth-easy-3.py").symlink_to(secret)
    for t in tasks:
        t["key_functionalities"] = ["reads the file"]
    wf.write_text(json.dumps(tasks))
    openai_server.handler = lambda req: json.dumps(
        {
            "verdicts": [
                {"id": i, "implemented": True, "reason": "x"}
                for i in re.findall(r"^- (kf-\d+):", req.last_user_message, re.M)
            ]
        }
    )
    res = tmp_path / "res"
    out = _kb(
        "run",
        "--workload",
        str(root),
        "--system",
        "reference",
        "--setting",
        "pipeline-design",
        "--judge",
        f"openai-compatible/j@{openai_server.base_url}",
        "--results",
        str(res),
        "--run-id",
        "pd",
        "--progress",
        "none",
        "--no-report",
    )
    assert "Traceback" not in out.stderr, out.stderr
    recs = {r.task_id: r for r in RunStore(res / "pd").read().records}
    assert set(recs) == {f"synth-easy-{i}" for i in range(1, 5)}
    for tid in ("synth-easy-1", "synth-easy-2", "synth-easy-3"):
        assert recs[tid].status == "error" and recs[tid].error.kind == "no_solution", recs[tid]
    assert recs["synth-easy-4"].status == "ok" and "numbers.csv" in recs["synth-easy-4"].pipeline_code
    every_byte = "".join(p.read_text(errors="replace") for p in (res / "pd").rglob("*") if p.is_file())
    assert SECRET not in every_byte
    assert openai_server.requests and all(SECRET not in json.dumps(r.body) for r in openai_server.requests)
    # the design judge's calls are paid for: each is in calls.jsonl, apart from the system's calls
    from kramabench.models import load_calls

    calls = load_calls(res / "pd")
    assert len(calls) == len(openai_server.requests) >= 1
    assert all(c.task_key.endswith(":judge") for c in calls)


# -- score: predictions and outputs ------------------------------------------------------------------------

TOY = [
    {
        "id": "toy-easy-1",
        "query": "How many rows?",
        "answer": 12,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
    },
    {
        "id": "toy-easy-2",
        "query": "Share?",
        "answer": 0.5,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
    },
]


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    from .synth import write_root

    return write_root(tmp_path / "wl", TOY)


@pytest.mark.slow
def test_score_streams_a_huge_predictions_file_and_summarises_repeated_warnings(toy, tmp_path):
    """400,000 lines (unknown tasks, duplicates, bad lines): bounded memory, a bounded number of warnings,
    every problem counted in --output."""
    preds = tmp_path / "p.jsonl"
    n = 400_000
    with open(preds, "w") as f:
        f.write(json.dumps({"task_id": "toy-easy-1", "answer": 12}) + "\n")
        for i in range(n):
            k = i % 4
            if k == 0:
                f.write(json.dumps({"task_id": f"ghost-{i}", "answer": i}) + "\n")
            elif k == 1:
                f.write(json.dumps({"task_id": "toy-easy-2", "answer": 0.5}) + "\n")
            elif k == 2:
                f.write("{not json at all\n")
            else:
                f.write(json.dumps({"id": f"x-{i}", "prediction": i}) + "\n")
    out_json = tmp_path / "s.json"
    cmd = [
        sys.executable,
        "-m",
        "kramabench",
        "score",
        "--workload",
        str(toy),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--output",
        str(out_json),
        "--bootstrap",
        "200",
    ]
    out, peak = run_measured(
        cmd,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"},
    )
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) < 150, out.stdout[-2000:]
    assert "99,980 more unknown_task problem(s) not shown (100,000 in all" in out.stdout
    report = json.loads(out_json.read_text())
    assert report["problem_counts"] == {
        "unknown_task": n // 4,
        "duplicate_task": n // 4 - 1,
        "bad_line": n // 4,
        "no_task_id": n // 4,
    }
    assert len(report["problems"]) <= 4 * 20
    assert {i["task_id"]: i["value"] for i in report["items"]} == {"toy-easy-1": 1.0, "toy-easy-2": 1.0}
    assert peak < 400, f"peak {peak:.0f} MB"
    print(f"score on {n:,} lines: peak {peak:.0f} MB")


@pytest.mark.parametrize("value", ["0", "-5", "1000000000"])
def test_score_refuses_absurd_bootstrap(toy, tmp_path, value):
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"task_id": "toy-easy-1", "answer": 12}) + "\n")
    out = _kb(
        "score", "--workload", str(toy), "--domain", "toy", "--predictions", str(preds), "--bootstrap", value
    )
    assert out.returncode == 2
    assert "--bootstrap" in _one_error_line(out) and "between 1 and 1,000,000" in out.stderr


@pytest.mark.parametrize("make", ["fifo", "dev-zero", "folder"])
def test_score_refuses_predictions_that_are_not_regular_files(toy, tmp_path, make):
    p = tmp_path / "p.jsonl"
    if make == "fifo":
        os.mkfifo(p)
    elif make == "dev-zero":
        p.symlink_to("/dev/zero")
    else:
        p.mkdir()
    out = _kb("score", "--workload", str(toy), "--domain", "toy", "--predictions", str(p), timeout=60)
    assert out.returncode == 2 and str(p) in _one_error_line(out)


def test_score_output_to_dev_stdout_and_through_links_and_pipes(toy, tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"task_id": "toy-easy-1", "answer": 12}) + "\n")
    base = [
        "score",
        "--workload",
        str(toy),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--bootstrap",
        "100",
        "--no-tasks",
    ]
    # /dev/stdout: the JSON arrives on stdout after the tables; /dev/stdout itself is untouched
    out = _kb(*base, "--output", "/dev/stdout")
    assert out.returncode == 0, out.stderr
    assert '"problem_counts"' in out.stdout and os.path.islink("/dev/stdout")
    # a link to /dev/null stays a link; a link to a regular file keeps the link and changes the file
    null_link = tmp_path / "null.json"
    null_link.symlink_to("/dev/null")
    assert _kb(*base, "--output", str(null_link)).returncode == 0
    assert null_link.is_symlink() and os.readlink(null_link) == "/dev/null"
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert _kb(*base, "--output", str(link)).returncode == 0
    assert link.is_symlink() and json.loads(real.read_text())["items"]
    # a FIFO with a reader gets the JSON; the FIFO stays a FIFO
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    import time

    time.sleep(0.3)
    assert _kb(*base, "--output", str(fifo)).returncode == 0
    assert json.loads(reader.communicate(timeout=60)[0])["items"]
    import stat

    assert stat.S_ISFIFO(fifo.stat().st_mode)
    # a folder, a link to nothing: refused before scoring, one line, exit 2
    for bad, words in ((tmp_path, "is a folder"), (tmp_path / "dangling.json", "link to nothing")):
        if bad.name == "dangling.json":
            bad.symlink_to(tmp_path / "nowhere")
        out = _kb(*base, "--output", str(bad))
        assert out.returncode == 2 and words in _one_error_line(out)
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


# -- one task id in two domains ------------------------------------------------------------------------------


def _two_domains(root: Path) -> Path:
    from .synth import write_root

    for dom, ans in (("alpha", 3), ("beta", 7)):
        write_root(root, [
            {"id": "x-easy-1", "query": f"What is it? [answer={ans}]", "answer": ans, "answer_type": "numeric_exact",
             "data_sources": ["a.csv"]},
            {"id": f"{dom}-easy-2", "query": "Other? [answer=1]", "answer": 1, "answer_type": "numeric_exact",
             "data_sources": ["a.csv"]},
        ], domain=dom)  # fmt: skip
    return root


def test_one_task_id_in_two_domains_loses_nothing(tmp_path):
    root = _two_domains(tmp_path / "wl")
    mods = tmp_path / "mods"
    spec = write_system_module(mods)
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(mods)])}
    # validate: a warning on both domains
    out = _kb("workloads", "validate", str(root), "--json")
    shared = [
        (f["domain"], f["task_id"])
        for d in json.loads(out.stdout)["domains"]
        for f in d["findings"]
        if f["code"] == "task_id_shared"
    ]
    assert sorted(shared) == [("alpha", "x-easy-1"), ("beta", "x-easy-1")]
    # run, resume, report: both records kept
    res = tmp_path / "res"
    args = (
        "run",
        "--workload",
        str(root),
        "--system",
        spec,
        "--results",
        str(res),
        "--run-id",
        "two",
        "--progress",
        "none",
        "--no-report",
    )
    assert _kb(*args, env=env).returncode == 0
    recs = RunStore(res / "two").read().records
    assert sorted((r.domain, r.task_id, r.answer, r.score) for r in recs) == [
        ("alpha", "alpha-easy-2", 1, 1.0),
        ("alpha", "x-easy-1", 3, 1.0),
        ("beta", "beta-easy-2", 1, 1.0),
        ("beta", "x-easy-1", 7, 1.0),
    ]
    again = _kb(
        "run",
        "--resume",
        "--run-id",
        "two",
        "--results",
        str(res),
        "--progress",
        "none",
        "--no-report",
        env=env,
    )
    assert again.returncode == 0 and "4 task(s) already recorded were skipped" in again.stderr
    rep = _kb("report", str(res / "two"))
    assert rep.returncode == 0 and "duplicate record key" not in rep.stdout + rep.stderr
    from kramabench.report.load import load_run

    assert len(load_run(res / "two").outcomes()) == 4
    # score: the run's records name their domain, so each domain gets its own answer
    out_json = tmp_path / "s.json"
    sc = _kb(
        "score",
        "--workload",
        str(root),
        "--domain",
        "alpha",
        "--domain",
        "beta",
        "--predictions",
        str(res / "two" / "records.jsonl"),
        "--output",
        str(out_json),
        "--bootstrap",
        "100",
    )
    assert sc.returncode == 0, sc.stderr
    items = {(i["domain"], i["task_id"]): i["value"] for i in json.loads(out_json.read_text())["items"]}
    assert items == {
        ("alpha", "x-easy-1"): 1.0,
        ("alpha", "alpha-easy-2"): 1.0,
        ("beta", "x-easy-1"): 1.0,
        ("beta", "beta-easy-2"): 1.0,
    }
    # a line without a domain cannot say which x-easy-1 it answers: applied to neither, and said so
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"task_id": "x-easy-1", "answer": 3}) + "\n")
    sc = _kb(
        "score",
        "--workload",
        str(root),
        "--domain",
        "alpha",
        "--domain",
        "beta",
        "--predictions",
        str(preds),
        "--output",
        str(out_json),
        "--bootstrap",
        "100",
    )
    assert sc.returncode == 0, sc.stderr
    report = json.loads(out_json.read_text())
    assert [p["code"] for p in report["problems"]] == ["ambiguous_task"]
    assert {(i["domain"], i["task_id"]): i["value"] for i in report["items"]}[("beta", "x-easy-1")] == 0.0


# -- run folders: foreign manifests, permissions, setup errors -----------------------------------------------


@pytest.fixture
def scripted(tmp_path: Path) -> tuple[Path, dict]:
    """A small synthetic workload and the scripted system (module kb_scripted, and the same as kb_other)."""
    root = make_workload(tmp_path / "wl", n=3)
    mods = tmp_path / "mods"
    write_system_module(mods)
    write_system_module(mods, name="kb_other")
    return root, {"PYTHONPATH": os.pathsep.join([str(REPO), str(mods)])}


def _run(
    root: Path,
    results: Path,
    run_id: str,
    env: dict,
    system: str = "kb_scripted:Scripted",
    *extra: str,
    prefix: list[str] | None = None,
) -> subprocess.CompletedProcess:
    args = ["run", "--progress", "none", "--no-report", "--run-id", run_id]
    if results is not None:
        args += ["--results", str(results)]
    if root is not None:
        args += ["--workload", str(root), "--system", system]
    return _kb(*args, *extra, env=env, prefix=prefix)


def test_resume_refuses_a_manifest_of_another_run_over_existing_records(scripted, tmp_path):
    root, env = scripted
    assert _run(root, tmp_path / "r1", "t", env).returncode == 0
    assert _run(root, tmp_path / "r2", "t", env, "kb_other:Scripted").returncode == 0
    assert _run(root, tmp_path / "r3", "u", env).returncode == 0
    run = tmp_path / "r1" / "t"
    before = (run / "records.jsonl").read_bytes()
    for other, words in (
        (tmp_path / "r2" / "t", "system 'kb_scripted:Scripted', the manifest says 'kb_other:Scripted'"),
        (tmp_path / "r3" / "u", "run id 't', the manifest says 'u'"),
    ):
        (run / "manifest.json").write_bytes((other / "manifest.json").read_bytes())
        out = _kb(
            "run",
            "--resume",
            "--run-id",
            "t",
            "--results",
            str(tmp_path / "r1"),
            "--progress",
            "none",
            "--no-report",
            env=env,
        )
        assert out.returncode == 2
        line = _one_error_line(out)
        assert "is a record of another run" in line and words in line
    assert (run / "records.jsonl").read_bytes() == before


def test_results_that_is_a_file_or_unwritable_is_a_setup_error(scripted, tmp_path):
    root, env = scripted
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = _run(root, afile, "a", env)
    assert out.returncode == 2 and "is a regular file, not a folder" in _one_error_line(out)
    out = _run(root, afile / "sub", "a", env)
    assert out.returncode == 2 and "not a folder" in _one_error_line(out)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    from kramabench.testing.hostile import unprivileged

    out = _kb(
        "run",
        "--workload",
        str(root),
        "--system",
        "kb_scripted:Scripted",
        "--progress",
        "none",
        "--no-report",
        env={**env, "KRAMABENCH_RESULTS": str(ro / "results")},
        prefix=unprivileged(),
    )
    assert out.returncode == 2 and "not writable" in _one_error_line(out)
    assert not (ro / "results").exists()


def test_resume_of_a_read_only_run_folder_or_a_records_folder_is_a_setup_error(scripted, tmp_path):
    from kramabench.testing.hostile import unprivileged

    root, env = scripted
    res = tmp_path / "res"
    assert _run(root, res, "a", env).returncode == 0
    run = res / "a"
    run.chmod(0o555)
    try:
        out = _kb(
            "run",
            "--resume",
            "--run-id",
            "a",
            "--results",
            str(res),
            "--progress",
            "none",
            "--no-report",
            env=env,
            prefix=unprivileged(),
        )
    finally:
        run.chmod(0o755)
    assert out.returncode == 2 and "not writable" in _one_error_line(out)
    (run / "records.jsonl").rename(run / "saved.jsonl")
    (run / "records.jsonl").mkdir()
    out = _kb(
        "run",
        "--resume",
        "--run-id",
        "a",
        "--results",
        str(res),
        "--progress",
        "none",
        "--no-report",
        env=env,
    )
    assert out.returncode == 2 and "records.jsonl: is a folder, not a regular file" in _one_error_line(out)
    rep = _kb("report", str(run))
    assert rep.returncode != 0 and "records.jsonl: is a folder" in _one_error_line(rep)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "big"])
def test_a_manifest_or_records_that_is_a_device_a_fifo_or_huge_is_refused_in_one_line(
    scripted, tmp_path, target
):
    root, env = scripted
    res = tmp_path / "res"
    assert _run(root, res, "a", env).returncode == 0
    run = res / "a"
    for name in ("manifest.json", "records.jsonl"):
        p = run / name
        saved = p.read_bytes()
        p.unlink()
        if target == "fifo":
            os.mkfifo(p)
        elif target == "big":
            with open(p, "wb") as f:
                f.truncate(65 << 20 if name == "manifest.json" else 0)
                if name == "records.jsonl":  # one line of 300 MB (sparse): longer than a record may be
                    f.seek(300 << 20)
                    f.write(b"\n")
        else:
            p.symlink_to(target)
        for args in (
            ("report", str(run)),
            ("run", "--resume", "--run-id", "a", "--results", str(res), "--progress", "none", "--no-report"),
        ):
            out, peak = run_measured(
                [sys.executable, "-m", "kramabench", *args],
                capture_output=True,
                text=True,
                cwd=REPO,
                timeout=120,
                env={**os.environ, **env, "COLUMNS": "300"},
            )
            assert "Traceback" not in out.stderr, out.stderr
            assert peak < 400, (args, peak)
            if target == "big" and name == "records.jsonl":  # a line too long is skipped and said, not read
                assert "longer than" in out.stderr + out.stdout or out.returncode != 0, out.stderr
            else:
                assert out.returncode != 0 and str(p) in _one_error_line(out), (args, out.stderr)
        p.unlink()
        p.write_bytes(saved)


def test_unreadable_lake_files_and_folders_are_findings_not_tracebacks(scripted, tmp_path):
    from kramabench.testing.hostile import unprivileged

    root, env = scripted
    lake = root / "data" / "synth" / "input"
    (lake / "locked").mkdir()
    (lake / "locked" / "x.csv").write_text("a\n1\n")
    (lake / "locked").chmod(0)
    (lake / "sub" / "notes.txt").chmod(0)
    try:
        val = _kb("workloads", "validate", str(root), "--json", prefix=unprivileged())
        findings = [
            f
            for d in json.loads(val.stdout)["domains"]
            for f in d["findings"]
            if f["code"] == "lake_unreadable"
        ]
        assert sorted(f["message"].split(" in the data lake")[0] for f in findings) == [
            "locked/",
            "sub/notes.txt",
        ]
        for view in ("hardlink", "copy"):
            out = _run(
                root,
                tmp_path / "res",
                view,
                env,
                "kb_scripted:Scripted",
                "--lake-view",
                view,
                prefix=unprivileged(),
            )
            assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
            assert "cannot be read" in out.stderr
            m = json.loads((tmp_path / "res" / view / "manifest.json").read_text())
            assert m["workload"]["content"]["synth"]["lake"]["n_unreadable"] == 1
    finally:
        (lake / "locked").chmod(0o755)
        (lake / "sub" / "notes.txt").chmod(0o644)


# -- outputs cut, golds of the wrong type ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_output_cut_at_the_limit_is_reported_as_cut(tmp_path, backend):
    """A solution printing a 3 MB answer: the output is cut at 1 MB, and the record says so (not "printed
    nothing" / "did not print a JSON object")."""
    root = make_workload(tmp_path / "wl", n=1, solutions=True)
    (root / "solutions" / "synth-easy-1.py").write_text(
        "import json\nprint(json.dumps({'main-task': list(range(500_000))}))\n"
    )
    res = tmp_path / "res"
    out = _kb(
        "run",
        "--workload",
        str(root),
        "--system",
        "reference",
        "--sandbox",
        backend,
        "--results",
        str(res),
        "--run-id",
        "cut",
        "--progress",
        "none",
        "--no-report",
        timeout=600,
    )
    assert "Traceback" not in out.stderr, out.stderr
    [rec] = RunStore(res / "cut").read().records
    assert rec.status == "error" and rec.error.kind == "no_answer", rec.error
    assert "output was cut" in rec.error.message and "printed nothing" not in rec.error.message


def test_ds_guru_feedback_says_the_output_was_cut():
    from kramabench.baselines.ds_guru.prompts import describe_failure
    from kramabench.contracts.sandbox import ExecResult

    cut = ExecResult(
        stdout="x",
        stderr="",
        exit_code=0,
        timed_out=False,
        oom=False,
        wall_s=0.1,
        truncated=True,
        explanation="output cut at 1,048,576 bytes (stdout 3,000,000 bytes)",
    )
    text = describe_failure(cut, code_found=True, answer_found=False)
    assert "output was cut" in text and "did not print a JSON object" not in text


@pytest.mark.parametrize(
    "gold,answer_type", [(True, "numeric_exact"), (False, "list_exact"), (True, "numeric_approximate")]
)
def test_a_gold_of_the_wrong_json_type_is_unscored_with_a_reason(tmp_path, gold, answer_type):
    from .synth import write_root

    root = write_root(
        tmp_path / "wl",
        [
            {
                "id": "toy-easy-1",
                "query": "q",
                "answer": gold,
                "answer_type": answer_type,
                "data_sources": ["a.csv"],
            }
        ],
    )
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"task_id": "toy-easy-1", "answer": 1}) + "\n")
    out_json = tmp_path / "s.json"
    out = _kb(
        "score",
        "--workload",
        str(root),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--output",
        str(out_json),
        "--bootstrap",
        "100",
    )
    assert out.returncode == 0, out.stderr
    [item] = json.loads(out_json.read_text())["items"]
    assert item["unscored"] and item["value"] is None and item["reason"] == "gold_wrong_type"
    assert "the gold is a boolean" in item["details"]["gold_problem"]


def test_a_full_disk_stops_the_run_with_its_cause_and_leaves_no_temporary_file(tmp_path):
    from kramabench.testing.hostile import fill_disk, small_disk

    root = make_workload(tmp_path / "wl", n=60)
    mods = tmp_path / "mods"
    spec = write_system_module(mods)
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(mods)])}
    try:
        disk = small_disk(512 * 1024)
        folder = disk.__enter__()
    except RuntimeError as e:
        pytest.skip(str(e))
    try:
        res = folder / "res"
        res.mkdir()
        fill_disk(folder, leave=24 * 1024)
        out = _kb(
            "run",
            "--workload",
            str(root),
            "--system",
            spec,
            "--results",
            str(res),
            "--run-id",
            "full",
            "--progress",
            "none",
            "--no-report",
            env=env,
        )
        assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
        assert "disk is full" in out.stderr or "no space left" in out.stderr.lower(), out.stderr
        assert "killed" not in out.stderr
        left = [p.name for p in (res / "full").iterdir()] if (res / "full").exists() else []
        assert not [n for n in left if n.endswith(".tmp")], left
        if (res / "full" / "records.jsonl").exists():
            data = (res / "full" / "records.jsonl").read_bytes()
            assert not data or data.endswith(b"\n")  # no half record left behind
        (folder / ".ballast").unlink()  # space again: the run resumes and finishes
        again = _kb(
            "run",
            "--resume",
            "--run-id",
            "full",
            "--results",
            str(res),
            "--progress",
            "none",
            "--no-report",
            env=env,
        )
        if (res / "full" / "manifest.json").exists():
            assert again.returncode == 0, again.stderr
            assert len(RunStore(res / "full").read().records) == 60
    finally:
        disk.__exit__(None, None, None)


# -- report: a run of 20,000 records -------------------------------------------------------------------------


@pytest.mark.slow
def test_report_on_a_huge_run_stays_bounded_in_memory_and_page_size(tmp_path):
    from kramabench.testing.hostile import write_big_run

    run = write_big_run(tmp_path / "big", 20_000, code_bytes=3000, transcript_bytes=3000)
    with open(
        run / "records.jsonl", "a"
    ) as f:  # and lines that are not records: counted, not listed one by one
        f.write("{not a record}\n" * 500)
    out, peak = run_measured(
        [sys.executable, "-m", "kramabench", "report", str(run)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"},
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    html = (run / "report.html").read_text()
    assert len(html) < 40 * 1024 * 1024, len(html)
    assert "15,000 more task rows of this run not shown" in html
    assert "left out of the report (its size is bounded): see records.jsonl" in html
    assert "490 more line(s) that are not valid records" in out.stderr
    assert "are cut to their start in this report" in out.stderr
    print(f"report on 20,000 records: peak {peak:.0f} MB, page {len(html) / 1e6:.1f} MB")
    assert peak < 600, peak


def test_report_page_holds_a_bounded_amount_of_details(tmp_path, monkeypatch):
    import kramabench.report.render_html as rh
    from kramabench.report.build import collect
    from kramabench.report.load import DetailBudget, load_run
    from kramabench.testing.hostile import write_big_run

    run = write_big_run(tmp_path / "small", 60, code_bytes=4000, transcript_bytes=0)
    monkeypatch.setattr(rh, "DETAIL_HTML_BYTES", 50_000)
    monkeypatch.setattr(rh, "MAX_TASK_ROWS", 40)
    html = rh.render_html(collect([load_run(run, DetailBudget())]))
    shown = html.count("<h4>Pipeline code</h4>")
    assert 5 <= shown < 20, shown  # about 50 KB of details, then a note in each row
    assert html.count("Details left out") == 40 - shown
    assert "20 more task rows of this run not shown" in html


def test_a_lake_folder_that_cannot_be_listed_is_said_so(scripted, tmp_path):
    from kramabench.testing.hostile import unprivileged

    root, env = scripted
    lake = root / "data" / "synth" / "input"
    lake.chmod(0)
    try:
        val = _kb("workloads", "validate", str(root), "--json", prefix=unprivileged())
        [f] = [f for d in json.loads(val.stdout)["domains"] for f in d["findings"]]
        assert (
            f["code"] == "lake_unreadable" and f["severity"] == "error" and "cannot be listed" in f["message"]
        )
        out = _run(root, tmp_path / "res", "x", env, prefix=unprivileged())
        assert out.returncode == 2 and "cannot be listed (permission denied)" in _one_error_line(out)
        assert "holds no files" not in out.stderr + val.stdout
    finally:
        lake.chmod(0o755)


# -- every path a workload names, at once ----------------------------------------------------------------------


@pytest.mark.api
@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_no_host_file_outside_the_root_reaches_a_record_a_prompt_or_a_report(
    tmp_path, secret, openai_server, backend
):
    from kramabench.testing.hostile import make_escaping_workload

    root = make_escaping_workload(tmp_path / "wl", secret)
    res = tmp_path / "res"
    model = f"openai-compatible/m@{openai_server.base_url}"

    def handler(req):
        text = req.last_user_message
        if "kf-" in text:  # the design judge
            return json.dumps(
                {
                    "verdicts": [
                        {"id": i, "implemented": True, "reason": "x"}
                        for i in re.findall(r"^- (kf-\d+):", text, re.M)
                    ]
                }
            )
        return "```python\nimport json, os\nprint(json.dumps({'main-task': sorted(os.listdir('.'))}))\n```"

    openai_server.handler = handler
    val = _kb("workloads", "validate", str(root), "--json")
    assert val.returncode == 1
    runs = {
        "ref": ("--system", "reference", "--sandbox", backend),
        "pd": ("--system", "reference", "--setting", "pipeline-design", "--judge", model),
        "guru": ("--system", "ds-guru-simple", "--model", model, "--sandbox", backend),
    }
    outputs = [val.stdout + val.stderr]
    for run_id, args in runs.items():
        out = _kb(
            "run",
            "--workload",
            str(root),
            *args,
            "--results",
            str(res),
            "--run-id",
            run_id,
            "--progress",
            "none",
            timeout=600,
        )
        assert "Traceback" not in out.stderr, out.stderr
        outputs.append(out.stdout + out.stderr)
    recs = {r.task_id: r for r in RunStore(res / "ref").read().records}
    assert recs["esc-easy-5"].status == "ok" and recs["esc-easy-5"].answer == 3
    assert all(recs[f"esc-easy-{i}"].error.kind == "no_solution" for i in (1, 2, 3, 4))
    jc = _kb("judge-check", "--workload", str(root), "--judge", model)
    assert jc.returncode != 0 and "climbs out with '..'" in jc.stdout + jc.stderr, jc.stdout + jc.stderr
    outputs.append(jc.stdout + jc.stderr)
    every_byte = "".join(p.read_text(errors="replace") for p in res.rglob("*") if p.is_file())
    every_byte += "".join(outputs) + "".join(json.dumps(r.body) for r in openai_server.requests)
    assert SECRET not in every_byte
    m = json.loads((res / "ref" / "manifest.json").read_text())
    assert "version" not in m["workload"]["version"]  # the root's VERSION link out of the root is not read
    # the root's errata.toml as a link out: refused in one line
    (root / "errata.toml").symlink_to(secret)
    out = _kb("workloads", "validate", str(root))
    assert out.returncode == 2 and "leads out through a symbolic link" in _one_error_line(out)


@pytest.mark.parametrize("name", [".lock", "records.jsonl", "calls.jsonl", "manifest.json"])
def test_links_planted_in_a_run_folder_are_never_written_through(scripted, tmp_path, name):
    root, env = scripted
    res = tmp_path / "res"
    assert _run(root, res, "a", env).returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious host file\n")
    p = res / "a" / name
    if name == "records.jsonl":  # a torn last line, so that a repair would cut the file it reaches
        victim.write_text("precious host file without newline")
    p.unlink(missing_ok=True)
    p.symlink_to(victim)
    before = victim.read_bytes()
    out = _kb(
        "run",
        "--resume",
        "--run-id",
        "a",
        "--results",
        str(res),
        "--progress",
        "none",
        "--no-report",
        env=env,
    )
    assert "Traceback" not in out.stderr, out.stderr
    if name != "manifest.json":  # a manifest link is read (and refused as no manifest), never replaced
        assert out.returncode == 2 and "symbolic link" in _one_error_line(out)
    else:
        assert out.returncode != 0
    assert victim.read_bytes() == before and p.is_symlink()
    assert not list(tmp_path.glob("victim.txt.torn"))


@pytest.mark.slow
def test_json_of_millions_of_tiny_values_is_refused_before_parsing(toy, tmp_path):
    """20 million empty lists in 30 MB: a workload file, a predictions line, a predictions array and a
    manifest of that shape are refused (or skipped) without parsing: memory stays bounded."""
    bomb = "[" + ",".join(["[]"] * 10_000_000) + "]"
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300"}

    def kb(*args):
        return run_measured(
            [sys.executable, "-m", "kramabench", *args],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
            env=env,
        )

    wl = tmp_path / "bombwl"
    (wl / "workload").mkdir(parents=True)
    (wl / "data" / "d" / "input").mkdir(parents=True)
    (wl / "workload" / "d.json").write_text(bomb)
    out, peak = kb("workloads", "validate", str(wl))
    assert (
        out.returncode == 2 and "JSON values, more than the 8,000,000" in _one_error_line(out) and peak < 400
    )
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        json.dumps({"task_id": "toy-easy-1", "answer": 12})
        + "\n"
        + '{"task_id": "toy-easy-2", "answer": '
        + bomb
        + "}\n"
    )
    out, peak = kb(
        "score", "--workload", str(toy), "--domain", "toy", "--predictions", str(preds), "--bootstrap", "100"
    )
    assert out.returncode == 0 and "bad_line" in out.stdout and "JSON values" in out.stdout and peak < 400, (
        out.stderr
    )
    preds.write_text("[" + json.dumps({"task_id": "toy-easy-1", "answer": 12}) + "," + bomb + "]")
    out, peak = kb("score", "--workload", str(toy), "--domain", "toy", "--predictions", str(preds))
    assert out.returncode == 2 and "JSON values" in _one_error_line(out) and peak < 400
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(
        '{"run_id": "x", "created_at": "2025-01-01T00:00:00Z", "system": "s", "x": ' + bomb + "}"
    )
    out, peak = kb("report", str(run))
    assert out.returncode != 0 and "JSON values" in _one_error_line(out) and peak < 400


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_mode_000_lake_file_with_a_sandbox_is_no_traceback(tmp_path, backend):
    """The reference system in a sandbox over a lake holding a file at mode 000: the run finishes, every task
    recorded (local: as a process that cannot ignore permissions; docker: the container's user cannot read
    it either)."""
    from kramabench.testing.hostile import unprivileged

    root = make_workload(tmp_path / "wl", n=2, solutions=True)
    locked = root / "data" / "synth" / "input" / "sub" / "notes.txt"
    locked.chmod(0)
    res = tmp_path / "res"
    try:
        out = _kb(
            "run",
            "--workload",
            str(root),
            "--system",
            "reference",
            "--sandbox",
            backend,
            "--results",
            str(res),
            "--run-id",
            "m0",
            "--progress",
            "none",
            "--no-report",
            timeout=600,
            prefix=unprivileged() if backend == "local" else None,
        )
    finally:
        locked.chmod(0o644)
    assert "Traceback" not in out.stderr, out.stderr
    recs = RunStore(res / "m0").read().records
    assert len(recs) == 2 and all(r.status == "ok" and r.score == 1.0 for r in recs), [r.error for r in recs]
