"""``kramabench score``: predictions file in, tables and JSON out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kramabench.cli.main import build_app
from kramabench.run.predictions import read_predictions

from .synth import write_root

TASKS = [
    {
        "id": "toy-easy-1",
        "query": "How many rows?",
        "answer": 12,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
        "subtasks": [
            {
                "id": "toy-easy-1-1",
                "query": "Which file?",
                "answer": "a.csv",
                "answer_type": "string_exact",
                "data_sources": "a.csv",
            },
            {
                "id": "toy-easy-1-2",
                "query": "Columns?",
                "answer": ["x", "y"],
                "answer_type": "list_exact",
                "data_sources": ["a.csv"],
            },
        ],
    },
    {
        "id": "toy-easy-2",
        "query": "Which beach?",
        "answer": "Wollaston Beach",
        "answer_type": "string_approximate",
        "data_sources": ["a.csv"],
        "subtasks": [],
    },
    {
        "id": "toy-hard-3",
        "query": "Share?",
        "answer": 0.15,
        "answer_type": "numeric_exact",
        "data_sources": ["a.csv"],
        "subtasks": [],
    },
    {
        "id": "toy-hard-4",
        "query": "Values?",
        "answer": [1.0, 2.0, 3.0],
        "answer_type": "list_approximate",
        "data_sources": ["a.csv"],
        "subtasks": [],
    },
]


@pytest.fixture
def workload_root(tmp_path: Path) -> Path:
    return write_root(tmp_path / "wl", TASKS)


def write_preds(path: Path, rows: list, extra: str = "") -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + extra)
    return path


def invoke(*args: str):
    return CliRunner().invoke(build_app(), ["score", *args], catch_exceptions=False)


def test_score_writes_json_and_prints_tables(workload_root, tmp_path):
    preds = write_preds(
        tmp_path / "p.jsonl",
        [
            {
                "task_id": "toy-easy-1",
                "answer": "12.0",
                "subtask_answers": {"toy-easy-1-1": "A.CSV", "toy-easy-1-9": 1},
            },
            {"task_id": "toy-hard-3", "answer": 15},
            {"task_id": "toy-hard-4", "answer": "[3.1, 1.0]"},
            {"task_id": "ghost-1", "answer": 1},
        ],
        extra="{not json\n",
    )
    out = tmp_path / "scores.json"
    r = invoke(
        "--workload",
        str(workload_root),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--output",
        str(out),
        "--bootstrap",
        "500",
    )
    assert r.exit_code == 0, r.output
    assert "toy-easy-1" in r.output and "Summary" in r.output
    assert "unknown_task" in r.output and "bad_line" in r.output
    report = json.loads(out.read_text())
    items = {(i["task_id"], i["subtask_id"]): i for i in report["items"]}
    assert items[("toy-easy-1", None)]["value"] == 1.0
    assert items[("toy-easy-2", None)]["reason"] == "missing" and items[("toy-easy-2", None)]["value"] == 0.0
    assert items[("toy-hard-3", None)]["value"] == 0.0
    assert items[("toy-hard-3", None)]["details"]["scale_mismatch"] == "x100"
    assert items[("toy-hard-4", None)]["value"] == pytest.approx(0.8)
    # subtasks: one answered, one missing; reported apart from the main tasks
    assert items[("toy-easy-1", "toy-easy-1-1")]["value"] == 1.0
    assert items[("toy-easy-1", "toy-easy-1-2")]["reason"] == "missing"
    summary = report["summary"]
    assert summary["domains"]["toy"]["main"]["mean"] == pytest.approx((1 + 0 + 0 + 0.8) / 4)
    assert summary["domains"]["toy"]["main"]["n_missing"] == 1
    assert summary["domains"]["toy"]["subtasks"]["mean"] == pytest.approx(0.5)
    assert {p["code"] for p in report["problems"]} == {"unknown_task", "unknown_subtask", "bad_line"}
    assert report["subtasks_scored"] is True


def test_string_approximate_without_judge_is_unscored_not_zero(workload_root, tmp_path):
    preds = write_preds(tmp_path / "p.jsonl", [{"task_id": "toy-easy-2", "answer": "the beach at Wollaston"}])
    out = tmp_path / "s.json"
    r = invoke(
        "--workload",
        str(workload_root),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--output",
        str(out),
        "--bootstrap",
        "100",
    )
    assert r.exit_code == 0
    assert "need a paraphrase judge" in r.output
    report = json.loads(out.read_text())
    item = next(i for i in report["items"] if i["task_id"] == "toy-easy-2")
    assert item["unscored"] and item["value"] is None
    assert report["summary"]["domains"]["toy"]["main"]["n_unscored"] == 1
    # no subtask answers anywhere: subtasks are not scored at all
    assert report["subtasks_scored"] is False
    assert all(i["subtask_id"] is None for i in report["items"])


def test_paired_comparison_with_baseline(workload_root, tmp_path):
    worse = write_preds(tmp_path / "b.jsonl", [{"task_id": "toy-easy-1", "answer": 11}])
    better = write_preds(
        tmp_path / "a.jsonl",
        [{"task_id": "toy-easy-1", "answer": 12}, {"task_id": "toy-hard-3", "answer": "15%"}],
    )
    base = tmp_path / "base.json"
    assert (
        invoke(
            "--workload",
            str(workload_root),
            "--domain",
            "toy",
            "--predictions",
            str(worse),
            "--output",
            str(base),
            "--bootstrap",
            "200",
        ).exit_code
        == 0
    )
    out = tmp_path / "new.json"
    r = invoke(
        "--workload",
        str(workload_root),
        "--domain",
        "toy",
        "--predictions",
        str(better),
        "--output",
        str(out),
        "--baseline",
        str(base),
        "--bootstrap",
        "200",
    )
    assert r.exit_code == 0, r.output
    assert "vs baseline" in r.output
    c = json.loads(out.read_text())["comparison"]
    # all four tasks are scored in both runs (missing = 0); two improved
    assert c["n_common"] == 4 and c["mean_diff"] == pytest.approx(0.5) and c["wins_a"] == 2 and c["ties"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--domain", "nope"], "nope.json"),
        (["--domain", "toy", "--predictions-missing"], "no such predictions file"),
        (["--domain", "toy", "--judge", "some-model"], "--judge"),
    ],
)
def test_errors_are_one_line(workload_root, tmp_path, args, message):
    preds = write_preds(tmp_path / "p.jsonl", [{"task_id": "toy-easy-1", "answer": 12}])
    if "--predictions-missing" in args:
        args = [a for a in args if a != "--predictions-missing"]
        preds = tmp_path / "absent.jsonl"
    r = invoke("--workload", str(workload_root), "--predictions", str(preds), *args)
    assert r.exit_code == 2
    err = r.stderr if hasattr(r, "stderr") else r.output
    assert message in err and "Traceback" not in r.output
    assert len(err.strip().splitlines()) == 1


def test_read_predictions_records_and_problems(tmp_path):
    path = write_preds(
        tmp_path / "p.jsonl",
        [
            {"task_id": "t-1", "answer": 1},
            {"task_id": "t-1", "answer": 2},
            {"answer": 3},
            [1, 2],
            {"task_id": "t-2", "subtask_id": "t-2-1", "answer": "x", "status": "ok"},
            {"task_id": "t-3", "answer": None, "subtask_answers": "oops"},
        ],
        extra="\n\n",
    )
    preds, problems = read_predictions(path)
    assert preds["t-1"].answer == 2
    assert preds["t-2"].subtask_answers == {"t-2-1": "x"} and not preds["t-2"].has_answer
    assert preds["t-3"].answer is None and preds["t-3"].has_answer
    codes = [(p.code, p.line) for p in problems]
    assert ("duplicate_task", 2) in codes and ("no_task_id", 3) in codes and ("bad_line", 4) in codes
    assert ("bad_line", 6) in codes


@pytest.mark.shared
def test_score_on_official_domain(shared_kramabench, tmp_path):
    from kramabench.workload import load_workload

    # gold answers as the scorer sees them: errata applied (ids, types and values corrected)
    tasks = load_workload(shared_kramabench, "legal").tasks
    rows = [
        {"task_id": t.id, "answer": t.answer, "subtask_answers": {s.id: s.answer for s in t.subtasks}}
        for t in tasks
    ]
    preds = write_preds(tmp_path / "gold.jsonl", rows)
    out = tmp_path / "s.json"
    r = invoke(
        "--workload",
        str(shared_kramabench),
        "--domain",
        "legal",
        "--predictions",
        str(preds),
        "--output",
        str(out),
        "--bootstrap",
        "200",
        "--no-tasks",
    )
    assert r.exit_code == 0, r.output
    s = json.loads(out.read_text())["summary"]["domains"]["legal"]
    assert s["main"]["mean"] == 1.0 and s["main"]["n"] == len(tasks)
    assert s["subtasks"]["mean"] == 1.0


def test_judge_wiring_through_get_model(workload_root, tmp_path, monkeypatch):
    """--judge MODEL builds a ModelJudge over kramabench.models.get_model(MODEL); verdicts and the judge's
    model id and prompt version land in the output. (The HTTP path of real providers is tested with the
    models package; here get_model returns a protocol-conformant model that answers from a script.)"""
    import kramabench.models as models_pkg
    from kramabench.contracts.model import Completion

    class ScriptModel:
        def __init__(self, model_id):
            self.id = model_id
            self.calls = 0

        def complete(self, messages, options=None):
            self.calls += 1
            text = messages[-1].content
            ok = "the beach at Wollaston" in text
            return Completion(text=json.dumps({"equivalent": ok, "reason": "scripted"}), model=self.id)

    made = []

    def fake_get_model(model_id, **opts):
        made.append(ScriptModel(model_id))
        return made[-1]

    monkeypatch.setattr(models_pkg, "get_model", fake_get_model, raising=False)
    preds = write_preds(tmp_path / "p.jsonl", [{"task_id": "toy-easy-2", "answer": "the beach at Wollaston"}])
    out = tmp_path / "s.json"
    cache = tmp_path / "judge.jsonl"
    args = [
        "--workload",
        str(workload_root),
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--output",
        str(out),
        "--bootstrap",
        "100",
        "--judge",
        "script/judge-1",
        "--judge-cache",
        str(cache),
    ]
    r = invoke(*args)
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    item = next(i for i in report["items"] if i["task_id"] == "toy-easy-2")
    assert item["value"] == 1.0 and item["details"]["judge"]["model"] == "script/judge-1"
    assert item["details"]["judge"]["prompt_version"] == "paraphrase-v1"
    assert report["judge"]["model"] == "script/judge-1" and report["judge"]["stats"]["calls"] == 1
    # a second run answers from the on-disk cache
    assert invoke(*args).exit_code == 0
    assert made[-1].calls == 0
    assert json.loads(out.read_text())["judge"]["stats"]["cache_hits"] == 1


def test_score_workloads_in_parallel_keeps_order(scripted_judge):
    from kramabench.run.predictions import Prediction, score_workloads
    from kramabench.workload.models import Task, Workload

    tasks = [
        Task(id=f"t-{i}", query="q", answer=f"answer {i}", answer_type="string_approximate")
        for i in range(40)
    ]
    wl = Workload(domain="d", root=Path("."), source=Path("d.json"), lake=Path("."), tasks=tasks)
    preds = {t.id: Prediction(task_id=t.id, answer=f"paraphrase {i}") for i, t in enumerate(tasks)}
    judge = scripted_judge({(f"answer {i}", f"paraphrase {i}"): i % 2 == 0 for i in range(40)})
    seen = []
    items, problems, with_subs = score_workloads([wl], preds, judge=judge, workers=8, progress=seen.append)
    assert [i.task_id for i in items] == [t.id for t in tasks]
    assert [i.value for i in items] == [1.0 if i % 2 == 0 else 0.0 for i in range(40)]
    assert len(judge.calls) == 40 and sorted(seen) == sorted(t.id for t in tasks)
    assert problems == [] and not with_subs


# -- predictions files of other shapes -----------------------------------------------------------------


def test_predictions_with_bom_crlf_no_final_newline(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_bytes(
        b'\xef\xbb\xbf{"task_id": "toy-easy-1", "answer": 12}\r\n{"task_id": "toy-hard-3", "answer": 0.15}'
    )
    preds, problems = read_predictions(p)
    assert problems == [] and preds["toy-easy-1"].answer == 12 and preds["toy-hard-3"].answer == 0.15


def test_predictions_as_one_json_array(workload_root, tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps([{"task_id": "toy-easy-1", "answer": 12}, {"task_id": "toy-hard-3", "answer": "15%"},
                             ["not", "an", "object"]], indent=2))  # fmt: skip
    preds, problems = read_predictions(p)
    assert set(preds) == {"toy-easy-1", "toy-hard-3"}
    assert [(x.code, x.line) for x in problems] == [("bad_line", 3)]
    out = tmp_path / "s.json"
    r = invoke(
        "--workload",
        str(workload_root),
        "--domain",
        "toy",
        "--predictions",
        str(p),
        "--output",
        str(out),
        "--bootstrap",
        "100",
    )
    assert r.exit_code == 0, r.output
    by_id = {i["task_id"]: i["value"] for i in json.loads(out.read_text())["items"]}
    assert by_id["toy-easy-1"] == 1.0 and by_id["toy-hard-3"] == 1.0


def test_predictions_problems_name_keys_and_empty_file(tmp_path, workload_root):
    p = write_preds(tmp_path / "p.jsonl", [{"id": "toy-easy-1", "prediction": 12}, {"task_id": "toy-easy-1"},
                                           {"task_id": 7, "answer": 1}])  # fmt: skip
    preds, problems = read_predictions(p)
    got = [(x.code, x.line) for x in problems]
    assert got == [("no_task_id", 1), ("no_answer", 2), ("no_task_id", 3)]
    assert "keys: id, prediction" in problems[0].message and "int 7" in problems[2].message
    assert preds["toy-easy-1"].answer is None and preds["toy-easy-1"].has_answer
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert [x.code for x in read_predictions(empty)[1]] == ["empty_file"]
    # a subtask id used as a task id: the problem says where it belongs
    p = write_preds(tmp_path / "s.jsonl", [{"task_id": "toy-easy-1-1", "answer": "a.csv"}])
    out = tmp_path / "s.json"
    r = invoke(
        "--workload",
        str(workload_root),
        "--domain",
        "toy",
        "--predictions",
        str(p),
        "--output",
        str(out),
        "--bootstrap",
        "100",
    )
    assert r.exit_code == 0
    [prob] = json.loads(out.read_text())["problems"]
    assert prob["code"] == "unknown_task" and "is a subtask of toy-easy-1" in prob["message"]


def test_more_errors_are_one_line_without_traceback(workload_root, tmp_path):
    preds = write_preds(tmp_path / "p.jsonl", [{"task_id": "toy-easy-1", "answer": 12}])
    base = ["--workload", str(workload_root), "--domain", "toy"]

    def one_line(r, needle):
        assert r.exit_code == 2, r.output
        assert (
            "Traceback" not in r.output and len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr
        ), r.stderr

    (tmp_path / "folder.jsonl").mkdir()
    one_line(
        invoke(*base, "--predictions", str(tmp_path / "folder.jsonl")), "is a folder, not a predictions file"
    )
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    one_line(invoke(*base, "--predictions", str(preds), "--output", str(blocker / "out.json")), "--output")
    # a predictions file at mode 000, read by a process that cannot ignore permissions
    import os
    import subprocess
    import sys

    from kramabench.testing.hostile import unprivileged

    preds.chmod(0)
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [*unprivileged(), sys.executable, "-m", "kramabench", "score", *base, "--predictions", str(preds)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("error: ") and str(preds) in line and "not readable" in line


def test_domain_named_twice_is_scored_once(workload_root, tmp_path):
    preds = write_preds(tmp_path / "p.jsonl", [{"task_id": "toy-easy-1", "answer": 12}])
    out = tmp_path / "s.json"
    r = invoke(
        "--workload",
        str(workload_root),
        "--domain",
        "toy",
        "--domain",
        "toy",
        "--predictions",
        str(preds),
        "--output",
        str(out),
        "--bootstrap",
        "100",
    )
    assert r.exit_code == 0, r.output
    report = json.loads(out.read_text())
    assert report["domains"] == ["toy"] and len(report["items"]) == len(TASKS)


def test_summary_readable_in_80_columns(workload_root, tmp_path):
    import re

    preds = write_preds(tmp_path / "p.jsonl", [
        {"task_id": "toy-easy-1", "answer": 12, "subtask_answers": {"toy-easy-1-1": "a.csv"}},
        {"task_id": "toy-hard-3", "answer": 0.15},
    ])  # fmt: skip
    r = CliRunner().invoke(build_app(), ["score", "--workload", str(workload_root), "--domain", "toy",
                                         "--predictions", str(preds), "--bootstrap", "200"],
                           env={"COLUMNS": "80", "NO_COLOR": "1"})  # fmt: skip
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    row = next(ln for ln in lines if ln.startswith("toy "))
    cis = re.findall(r"\d+\.\d\s+\[\d+\.\d, \d+\.\d\]", row)
    assert len(cis) == 2, row  # the main score and the subtask mean, each with its whole interval on one line
    # the one format of run, score and report: percent with one decimal, a pooled "total" row
    assert any(ln.startswith("total ") for ln in lines)
    # both golds side by side (here the same: no erratum touches the toy domain), then the floors
    header = next(ln for ln in lines if "verified" in ln and "official" in ln)
    assert header.index("verified") < header.index("official")
    assert "floors (both golds, the same 4 tasks): constant 0" in r.stdout


def test_records_of_a_retried_task_keep_the_latest_attempt(tmp_path):
    p = write_preds(tmp_path / "records.jsonl", [
        {"task_id": "toy-easy-1", "attempt": 1, "answer": 12, "status": "ok"},
        {"task_id": "toy-easy-1", "attempt": 0, "answer": None, "status": "error"},  # out of order
        {"task_id": "toy-hard-3", "attempt": 0, "answer": None, "status": "error"},
        {"task_id": "toy-hard-3", "attempt": 1, "answer": 0.15, "status": "ok"},
        {"task_id": "toy-hard-4", "answer": [1]},
        {"task_id": "toy-hard-4", "answer": [2]},
    ])  # fmt: skip
    preds, problems = read_predictions(p)
    assert (
        preds["toy-easy-1"].answer == 12
        and preds["toy-hard-3"].answer == 0.15
        and preds["toy-hard-4"].answer == [2]
    )
    assert [(x.code, x.line) for x in problems] == [("duplicate_task", 6)]
