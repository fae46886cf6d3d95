"""The bundled ``mini`` workloads: shape, dirt of the lakes, reproducible data, reference solutions.

Every reference solution runs as a real subprocess against a copy of the lake (so a solution that read
the committed folder, or anything else outside the lake, would fail) with a temporary working folder,
and must reproduce every stored answer.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "workloads" / "mini"
DOMAINS = sorted(p.stem for p in (MINI / "workload").glob("*.json"))
ANSWER_TYPES = {
    "string_exact",
    "string_approximate",
    "numeric_exact",
    "numeric_approximate",
    "list_exact",
    "list_approximate",
}
MAX_LAKE_BYTES = 5 * 1024 * 1024
ROUND_RE = re.compile(r"round(?: each value)? to (\d+) decimal places?", re.IGNORECASE)


def _tasks(domain: str) -> list[dict]:
    return json.loads((MINI / "workload" / f"{domain}.json").read_text(encoding="utf-8"))


def _lake(domain: str) -> Path:
    return MINI / "data" / domain / "input"


ALL_TASKS = [(d, t) for d in DOMAINS for t in _tasks(d)]


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name} in JSON")


def _strict_json(text: str):
    return json.loads(text, parse_constant=_reject_constant)


def _digits(query: str) -> int | None:
    m = ROUND_RE.search(query)
    return int(m.group(1)) if m else None


# ------------------------------------------------------------------------------------ workload shape
def test_domains_present():
    assert len(DOMAINS) >= 2, DOMAINS
    for d in DOMAINS:
        assert _lake(d).is_dir(), f"no lake for {d}"


@pytest.mark.parametrize("domain", DOMAINS)
def test_domain_shape(domain):
    tasks = _tasks(domain)
    assert len(tasks) >= 10
    ids = [t["id"] for t in tasks] + [s["id"] for t in tasks for s in t["subtasks"]]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    difficulties = {t["id"].split("-")[1] for t in tasks}
    assert {"easy", "hard"} <= difficulties
    types = {t["answer_type"] for t in tasks} | {s["answer_type"] for t in tasks for s in t["subtasks"]}
    assert types == ANSWER_TYPES, f"{domain}: missing {ANSWER_TYPES - types}"


@pytest.mark.parametrize("domain,task", ALL_TASKS, ids=[t["id"] for _, t in ALL_TASKS])
def test_task_fields(domain, task):
    assert re.fullmatch(rf"{domain}-(easy|hard)-\d+", task["id"])
    for key in ("query", "answer", "answer_type", "data_sources", "subtasks", "key_functionalities"):
        assert key in task, f"{task['id']}: no {key}"
    assert task["answer_type"] in ANSWER_TYPES
    assert task["subtasks"], f"{task['id']}: no subtasks"
    assert 2 <= len(task["key_functionalities"]) <= 5
    for i, kf in enumerate(task["key_functionalities"], 1):
        assert kf["id"] == f"kf-{i}" and len(kf["description"]) > 20
    assert task["solution"] == f"solutions/{task['id']}.py"
    assert (MINI / task["solution"]).is_file()
    for i, st in enumerate(task["subtasks"], 1):
        assert st["id"] == f"{task['id']}-{i}"
        for key in ("step", "query", "answer", "answer_type", "data_sources"):
            assert key in st and st[key] not in (None, "", []), f"{st['id']}: {key} missing or empty"
        assert st["answer_type"] in ANSWER_TYPES
    for obj in [task, *task["subtasks"]]:
        _check_answer_fits(obj)


def _check_answer_fits(obj: dict) -> None:
    where, ans, kind = obj["id"], obj["answer"], obj["answer_type"].split("_")[0]
    if kind == "string":
        assert isinstance(ans, str) and ans.strip(), where
    elif kind == "numeric":
        assert isinstance(ans, (int, float)) and not isinstance(ans, bool), where
        assert math.isfinite(ans), where
    else:
        assert isinstance(ans, list) and ans, where
        assert all(v is not None for v in ans), where
    digits = _digits(obj["query"])
    values = ans if isinstance(ans, list) else [ans]
    if digits is not None:
        for v in values:
            assert isinstance(v, (int, float)), f"{where}: rounding asked, answer not numeric"
            assert round(v, digits) == v, f"{where}: {v} is not rounded to {digits} decimals"
    if obj["answer_type"] == "list_exact" and all(isinstance(v, str) for v in ans):
        # list_exact answers are compared in order: the query must give the order rule
        assert "sorted" in obj["query"] or "order" in obj["query"], f"{where}: no order rule in the query"


@pytest.mark.parametrize("domain", DOMAINS)
def test_data_sources_resolve(domain):
    lake = _lake(domain)
    files = {p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file()}
    for t in _tasks(domain):
        for obj in [t, *t["subtasks"]]:
            assert isinstance(obj["data_sources"], list), obj["id"]
            for src in obj["data_sources"]:
                assert src in files or list(lake.glob(src)), f"{obj['id']}: {src} matches no file"


# ------------------------------------------------------------------------------------------ the lakes
def test_lakes_small_enough():
    total = sum(p.stat().st_size for p in (MINI / "data").rglob("*") if p.is_file())
    assert 0 < total <= MAX_LAKE_BYTES, total


def _read(rel: str) -> bytes:
    return (MINI / "data" / rel).read_bytes()


def test_semicolon_csv_with_decimal_commas():
    text = _read("harbor/input/port_calls/2024/calls_2024_Q1.csv").decode("utf-8")
    header, first = text.splitlines()[:2]
    assert header.count(";") >= 5 and "," not in header
    assert re.search(r";\d{1,3}(\.\d{3})*,\d;", text), "no decimal-comma number"
    assert re.search(r";\d{1,3}\.\d{3},\d;", text), "no '.' thousands separator"
    q3 = _read("harbor/input/port_calls/2024/calls_2024_Q3.csv")
    assert b"\r\n" in q3, "the Q3 export uses CRLF line ends"


def test_tab_separated_file():
    lines = _read("grid/input/stations.tsv").decode("utf-8").splitlines()
    assert all(line.count("\t") == 6 for line in lines)
    assert any("\tNA\t" in line for line in lines)


def test_xlsx_with_title_rows_above_header():
    from openpyxl import load_workbook

    for rel, header_row, first_header in [
        ("harbor/input/tariffs/port_dues_2024.xlsx", 5, "LOCODE"),
        ("grid/input/plants/generating_units.xlsx", 4, "Plant ID"),
    ]:
        ws = load_workbook(MINI / "data" / rel, read_only=True).worksheets[0]
        rows = list(ws.iter_rows(values_only=True))
        assert rows[0][0] and all(v is None for v in rows[0][1:]), f"{rel}: row 1 is not a title row"
        assert rows[header_row - 1][0] == first_header, rel
        # a note below the table
        assert isinstance(rows[-1][0], str) and all(v is None for v in rows[-1][1:]), rel


def test_nested_json_with_mixed_types():
    reg = json.loads(_read("harbor/input/registry/vessels.json"))["vessels"]
    assert isinstance(reg[0]["dimensions"], dict) and isinstance(reg[0]["tonnage"], dict)
    gross = [v["tonnage"].get("gross", "<absent>") for v in reg]
    kinds = {type(g).__name__ for g in gross}
    assert {"int", "str", "NoneType"} <= kinds
    assert "unknown" in gross and "<absent>" in gross
    assert {type(v["imo"]).__name__ for v in reg} == {"int", "str"}
    events = json.loads(_read("grid/input/outages/outage_events_2023.json"))["events"]
    assert isinstance(events[0]["impact"]["feeders"], list)
    assert {type(e["lost_capacity_mw"]).__name__ for e in events} == {"float", "str"}
    assert any(e["period"]["end"] is None for e in events)


def test_html_tables_with_caption_and_decoy():
    for rel in ("harbor/input/ports.html", "grid/input/regional_statistics.html"):
        html = _read(rel).decode("utf-8")
        assert html.count("<table") >= 2, f"{rel}: no decoy table"
        assert "<caption>" in html
        assert re.search(r"<td>\d{1,3},\d{3}", html), f"{rel}: no thousands separators"


def test_latin1_files_with_accents():
    for rel in ("harbor/input/agents/shipping_agents.csv", "grid/input/operators/operators_latin1.csv"):
        raw = _read(rel)
        with pytest.raises(UnicodeDecodeError):
            raw.decode("utf-8")
        text = raw.decode("latin-1")
        assert re.search(r"[éãçñöøüÆÅØ]", text), rel


def test_fixed_width_files():
    # (file, data-line pattern, columns that are blank on every data line, max line length)
    cases = [
        ("harbor/input/inspections/psc_2024.txt", r"^\d{4}-\d{2}-\d{2} ", [10, 19, 26, 32, 36], 60),
        ("grid/input/weather/daily/WX101.txt", r"^\d{8} ", [8, 9], 40),
    ]
    for rel, pattern, gaps, max_len in cases:
        text = _read(rel).decode("utf-8")
        lines = [ln for ln in text.splitlines() if re.match(pattern, ln)]
        assert len(lines) > 300, rel
        assert not any(sep in text for sep in ("\t", ";")), f"{rel}: delimited, not fixed-width"
        for ln in lines:
            assert len(ln) <= max_len and all(len(ln) <= g or ln[g] == " " for g in gaps), f"{rel}: {ln!r}"
    psc = _read("harbor/input/inspections/psc_2024.txt").decode("utf-8")
    assert psc.count("DATE       IMO") > 1, "repeated page headers expected"
    wx = _read("grid/input/weather/daily/WX202.txt").decode("utf-8")
    assert "-99.9" in wx


def test_missing_value_markers_and_subfolders():
    calls = "".join(
        _read(f"harbor/input/port_calls/2024/calls_2024_Q{q}.csv").decode("utf-8") for q in range(1, 5)
    )
    assert ";NA;" in calls and ";-;" in calls and ";;" in calls
    gen = "".join(_read(f"grid/input/generation/2023/gen_2023-{m:02d}.csv").decode() for m in range(1, 13))
    for marker in (",n/a\n", ",-\n", ",unknown\n", ",\n"):
        assert marker in gen, marker
    assert re.search(r",\d+\n", gen) and re.search(r",\d+\.\d\n", gen), "integers and decimals mixed"
    deep = [
        p for p in (MINI / "data").rglob("*") if p.is_file() and len(p.relative_to(MINI / "data").parts) >= 5
    ]
    assert deep, "expected files in nested subfolders"


# ---------------------------------------------------------------------------------- regeneration
@pytest.mark.slow
def test_generator_reproduces_committed_lakes(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(MINI / "generate.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    committed = {p.relative_to(MINI / "data").as_posix() for p in (MINI / "data").rglob("*") if p.is_file()}
    fresh = {
        p.relative_to(tmp_path / "data").as_posix() for p in (tmp_path / "data").rglob("*") if p.is_file()
    }
    assert committed == fresh
    from openpyxl import load_workbook

    for rel in sorted(committed):
        a, b = (MINI / "data" / rel), (tmp_path / "data" / rel)
        if rel.endswith(".xlsx"):
            wa, wb = load_workbook(a), load_workbook(b)
            assert wa.sheetnames == wb.sheetnames
            for sa, sb in zip(wa.worksheets, wb.worksheets, strict=True):
                assert list(sa.iter_rows(values_only=True)) == list(sb.iter_rows(values_only=True)), rel
        else:
            assert a.read_bytes() == b.read_bytes(), f"{rel} differs from a fresh generation"


# -------------------------------------------------------------------------- reference solutions
def _run(script: Path, args: list[str], cwd: Path, env_extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "KRAMABENCH_LAKE"}
    env.update(env_extra or {})
    proc = subprocess.run(
        [sys.executable, str(script), *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stderr[-3000:]}"
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, f"{script.name} must print exactly one line, printed:\n{proc.stdout[-2000:]}"
    out = _strict_json(lines[0])
    assert isinstance(out, dict)
    return out


@pytest.fixture(scope="module")
def lake_copies(tmp_path_factory) -> dict[str, Path]:
    """A copy of each lake somewhere else, so solutions can only see what they are given."""
    base = tmp_path_factory.mktemp("lakes")
    out = {}
    for d in DOMAINS:
        dst = base / d / "lake"
        shutil.copytree(_lake(d), dst)
        out[d] = dst
    return out


def _close(obj: dict, got: float, want: float) -> bool:
    """Within one unit of the rounding the query asks for (else a relative 1e-6)."""
    digits = _digits(obj["query"])
    if digits is None:
        return math.isclose(got, want, rel_tol=1e-6)
    return abs(got - want) <= 10.0**-digits * 1.0001


def _assert_matches(obj: dict, got) -> None:
    where, want, atype = obj["id"], obj["answer"], obj["answer_type"]
    got = _strict_json(json.dumps(got))  # the JSON round trip a scorer would see
    if atype == "string_exact":
        assert got == want, f"{where}: {got!r} != {want!r}"
    elif atype == "string_approximate":
        assert isinstance(got, str) and got.strip().casefold() == want.strip().casefold(), f"{where}: {got!r}"
    elif atype == "numeric_exact":
        assert got == want and type(got) is type(want), f"{where}: {got!r} != {want!r}"
    elif atype == "numeric_approximate":
        assert isinstance(got, (int, float)), where
        assert _close(obj, got, want), f"{where}: {got} vs {want}"
    elif atype == "list_exact":
        assert got == want, f"{where}: {got!r} != {want!r}"
    elif atype == "list_approximate":
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r}"
        if all(isinstance(v, (int, float)) for v in want):
            for g, w in zip(sorted(got), sorted(want), strict=True):
                assert _close(obj, g, w), f"{where}: {got} vs {want}"
        else:
            assert Counter(map(str, got)) == Counter(map(str, want)), f"{where}: {got!r} != {want!r}"
    else:  # pragma: no cover - guarded by test_task_fields
        raise AssertionError(f"{where}: unknown answer type {atype}")


@pytest.mark.slow
@pytest.mark.parametrize("domain,task", ALL_TASKS, ids=[t["id"] for _, t in ALL_TASKS])
def test_reference_solution_reproduces_answers(domain, task, lake_copies, tmp_path):
    out = _run(MINI / task["solution"], [str(lake_copies[domain])], cwd=tmp_path)
    expected_keys = ["main-task"] + [f"subtask-{i}" for i in range(1, len(task["subtasks"]) + 1)]
    assert sorted(out) == sorted(expected_keys)
    _assert_matches(task, out["main-task"])
    for i, st in enumerate(task["subtasks"], 1):
        _assert_matches(st, out[f"subtask-{i}"])


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["env", "cwd"])
def test_solution_lake_conventions(mode, lake_copies, tmp_path):
    """Without an argument the lake is $KRAMABENCH_LAKE, else ./data/<domain>/input/ under the cwd."""
    domain = DOMAINS[0] if mode == "env" else DOMAINS[-1]
    task = _tasks(domain)[0]
    script = MINI / task["solution"]
    if mode == "env":
        out = _run(script, [], cwd=tmp_path, env_extra={"KRAMABENCH_LAKE": str(lake_copies[domain])})
    else:
        shutil.copytree(lake_copies[domain], tmp_path / "data" / domain / "input")
        out = _run(script, [], cwd=tmp_path)
    _assert_matches(task, out["main-task"])
    for i, st in enumerate(task["subtasks"], 1):
        _assert_matches(st, out[f"subtask-{i}"])


def test_solutions_only_name_lake_paths():
    """A static guard beside the lake-copy run: no solution names a path of the repository."""
    for script in (MINI / "solutions").glob("*.py"):
        text = script.read_text(encoding="utf-8")
        assert "workloads/" not in text and "../" not in text and "/work/" not in text, script.name
        imports = set(re.findall(r"^\s*(?:from|import) (\w+)", text, re.MULTILINE))
        assert imports <= {
            "json",
            "os",
            "re",
            "sys",
            "pathlib",
            "pandas",
            "numpy",
            "openpyxl",
            "lxml",
            "bs4",
            "io",
            "math",
            "__future__",
        }, f"{script.name}: {imports}"
    solution_ids = {p.stem for p in (MINI / "solutions").glob("*.py")}
    assert solution_ids == {t["id"] for _, t in ALL_TASKS}


def test_loader_reads_bundled_workloads_when_available():
    """Once kramabench.workload.load_workload exists, the bundled workloads load with no error findings."""
    import kramabench.workload as kw

    if not hasattr(kw, "load_workload"):
        pytest.skip("kramabench.workload.load_workload has not landed yet")
    for d in DOMAINS:
        wl = kw.load_workload(MINI, d)
        assert len(wl.tasks) == len(_tasks(d))
        errors = [f for f in wl.findings if f.severity == "error"]
        assert not errors, errors
        assert all(t.solution == f"solutions/{t.id}.py" for t in wl.tasks)


@pytest.mark.parametrize("domain", DOMAINS)
def test_tasks_fit_the_workload_models(domain):
    """Every task validates into the typed contract (Task, Subtask, KeyFunctionality)."""
    from kramabench.contracts.answers import AnswerType
    from kramabench.workload import Difficulty, Task, difficulty_from_id

    for raw in _tasks(domain):
        task = Task.model_validate({**raw, "difficulty": difficulty_from_id(raw["id"])})
        assert task.difficulty in (Difficulty.EASY, Difficulty.HARD)
        # answer types are kept as plain strings, each the name of a built-in AnswerType
        assert type(task.answer_type) is str and task.answer_type in set(AnswerType)
        assert all(type(st.answer_type) is str and st.answer_type in set(AnswerType) for st in task.subtasks)
        assert [kf.id for kf in task.key_functionalities] == [kf["id"] for kf in raw["key_functionalities"]]
        assert task.solution == raw["solution"]
