"""One run, one interval: a run written by the real ``kramabench run`` (two domains, partial scores, an error,
an erratum that changes one gold) is shown through every surface that prints its score -- the end-of-run
domain table, ``kramabench score`` on its records, the report's card, golds table, domain tables and
Markdown, the viewer's run list, run header, floors panel and comparison -- and every surface prints the
same digits, those of :func:`kramabench.scorers.stats.bootstrap_ci` over the per-task scores computed here by hand.
A copy of the run under another name, its records in another order, gets the identical intervals."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kramabench.scorers.stats import bootstrap_ci, format_ci, format_pct
from tests.run.synth import write_system_module

#: (domain, task number, answer type, gold, the system's answer, official gold when an erratum changed it)
ERRATUM_TASK = ("alpha", 2)


def _tasks() -> tuple[dict[str, list[dict]], dict[str, dict[tuple[str, str], float]]]:
    """Two domains of tasks whose scores (numeric-approximate answers off by various amounts, exact ones right
    or wrong, a crash) are many distinct values; and the expected per-task scores under each gold."""
    rng = random.Random(34)
    workloads: dict[str, list[dict]] = {}
    expected: dict[str, dict[tuple[str, str], float]] = {"official": {}, "verified": {}}
    for domain, n in (("alpha", 13), ("beta", 9)):
        tasks = []
        for i in range(1, n + 1):
            tid = f"{domain}-{'easy' if i % 3 else 'hard'}-{i}"
            flags = ""
            if i % 4 == 0:
                gold, answer, kind = 7, (7 if i % 8 == 0 else 8), "numeric_exact"
                value = 1.0 if answer == gold else 0.0
            else:
                gold = 100
                answer = round(100 * (1 + rng.choice([0, 0, 0.02, 0.07, 0.3, 0.5, 1.5, 4.0])), 2)
                if (domain, i) == ERRATUM_TASK:
                    answer = 150  # the erratum makes it right
                kind = "numeric_approximate"
                value = 1.0 / (1.0 + abs(answer - gold) / gold)
            if domain == "beta" and i == 5:
                flags = " [crash]"
                value = 0.0
            tasks.append(
                {
                    "id": tid,
                    "query": f"What is the figure of {tid}? [answer={json.dumps(answer)}]{flags}",
                    "answer": gold,
                    "answer_type": kind,
                    "data_sources": ["numbers.csv"],
                    "subtasks": [],
                }
            )
            expected["official"][(domain, tid)] = value
            expected["verified"][(domain, tid)] = value
        workloads[domain] = tasks
    # the erratum: alpha's task 2 gets the system's answer as its corrected gold (verified 1.0)
    d, i = ERRATUM_TASK
    t = workloads[d][i - 1]
    expected["verified"][(d, t["id"])] = 1.0
    return workloads, expected


def _write_root(root: Path, workloads: dict[str, list[dict]]) -> None:
    (root / "workload").mkdir(parents=True)
    for domain, tasks in workloads.items():
        lake = root / "data" / domain / "input"
        lake.mkdir(parents=True)
        (lake / "numbers.csv").write_text("k,v\n1,2\n")
        (root / "workload" / f"{domain}.json").write_text(json.dumps(tasks, indent=1))
    d, i = ERRATUM_TASK
    t = workloads[d][i - 1]
    new = json.loads(re.search(r"\[answer=(.*?)\]", t["query"]).group(1))
    (root / "errata.toml").write_text(
        f'[[erratum]]\ndomain = "{d}"\ntask = "{t["id"]}"\nfield = "answer"\nold = {t["answer"]}\nnew = {new}\n'
        'reason = "a planted correction"\n'
    )


def _ci(values: dict) -> str:
    lo, hi = bootstrap_ci(values)
    return format_ci(lo, hi)


def _cell(values: dict) -> str:
    return f"{format_pct(sum(values.values()) / len(values))} {_ci(values)}"


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory, repo_root: Path):
    base = tmp_path_factory.mktemp("one-interval")
    workloads, expected = _tasks()
    root = base / "wl"
    _write_root(root, workloads)
    sysmods = base / "sysmods"
    system = write_system_module(sysmods)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(repo_root), str(sysmods)]),
        COLUMNS="200",
        KRAMABENCH_CACHE=str(base / "cache"),
    )
    res = base / "results"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "run",
            "--workload",
            str(root),
            "--system",
            system,
            "--results",
            str(res),
            "--run-id",
            "first",
            "--concurrency",
            "2",
        ],
        cwd=repo_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    # the records in another order than the run wrote them (a concurrent run writes in any order), and a copy
    # of the run under another name and id, its records in a third order
    lines = (res / "first" / "records.jsonl").read_text().splitlines()
    random.Random(1).shuffle(lines)
    (res / "first" / "records.jsonl").write_text("\n".join(lines) + "\n")
    shutil.copytree(res / "first", res / "second")
    random.Random(2).shuffle(lines)
    (res / "second" / "records.jsonl").write_text(
        "\n".join(lines).replace('"run_id":"first"', '"run_id":"second"') + "\n"
    )
    m = json.loads((res / "second" / "manifest.json").read_text())
    m["run_id"] = "second"
    (res / "second" / "manifest.json").write_text(json.dumps(m))
    return {"root": root, "results": res, "expected": expected, "run_stdout": p.stdout, "env": env}


def _expected_texts(expected: dict[str, dict[tuple[str, str], float]]) -> dict[str, str]:
    out = {}
    for g, vals in expected.items():
        out[f"{g}:total"] = _cell(vals)
        for d in ("alpha", "beta"):
            out[f"{g}:{d}"] = _cell({k: v for k, v in vals.items() if k[0] == d})
    return out


def test_the_golds_differ_and_the_intervals_are_not_trivial(one_run) -> None:
    exp = _expected_texts(one_run["expected"])
    assert exp["official:total"] != exp["verified:total"]
    assert len({v for v in one_run["expected"]["official"].values()}) > 5


def test_the_end_of_run_table_prints_the_one_interval(one_run) -> None:
    exp = _expected_texts(one_run["expected"])
    rows = {}
    for line in one_run["run_stdout"].splitlines():
        cells = [c.strip() for c in re.split(r"[│┃|]", line) if c.strip()]
        if cells and cells[0] in ("alpha", "beta", "total"):
            rows[cells[0]] = cells
    for name in ("alpha", "beta", "total"):
        verified = exp[f"verified:{name}"]
        assert rows[name][2] + " " + rows[name][3] == verified, (name, rows[name])
        assert rows[name][4] == exp[f"official:{name}"].split(" ")[0]


def test_score_prints_the_one_interval(one_run, tmp_path: Path) -> None:
    from rich.console import Console

    from kramabench.cli.score import run_score

    exp = _expected_texts(one_run["expected"])
    console = Console(record=True, width=200, color_system=None)
    report = run_score(
        workload=one_run["root"],
        domains=["alpha", "beta"],
        predictions=one_run["results"] / "first" / "records.jsonl",
        console=console,
        output=tmp_path / "scores.json",
    )
    text = console.export_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃|]", line) if c.strip()]
        if cells and cells[0] in ("alpha", "beta", "total"):
            rows[cells[0]] = cells
    for name in ("alpha", "beta", "total"):
        assert " ".join(rows[name][2:4]) == exp[f"verified:{name}"], rows[name]
        assert " ".join(rows[name][4:6]) == exp[f"official:{name}"], rows[name]
    s = report.summaries
    assert format_ci(s["official"].overall.ci_low, s["official"].overall.ci_high) == _ci(
        one_run["expected"]["official"]
    )


def test_the_report_prints_the_one_interval(one_run, tmp_path: Path) -> None:
    from kramabench.report.build import write_report

    exp = _expected_texts(one_run["expected"])
    res = one_run["results"]
    paths = write_report([res / "first", res / "second"], tmp_path / "report")
    html = paths.html.read_text()
    md = paths.markdown.read_text().replace("**", "")  # the best cell of a column is in bold
    v_total, o_total = exp["verified:total"], exp["official:total"]
    # the cards: the run's own gold (verified) in big, for both runs
    cards = re.findall(r'<div class="big">([\d.]+)<small>% (\[[\d.]+, [\d.]+\])</small>', html)
    assert cards == [tuple(v_total.split(" ", 1))] * 2
    # the golds section: "this run" under each gold, for both runs
    golds = re.findall(
        r'<tr class="gl system"><td>this run</td><td[^>]*>([\d.]+ \[[\d.]+, [\d.]+\])[^<]*</td>'
        r"<td[^>]*>([\d.]+ \[[\d.]+, [\d.]+\])",
        html,
    )
    assert golds == [(o_total, v_total)] * 2
    # the domain tables (verified, then official): every cell of both runs
    for gold in ("verified", "official"):
        for d in ("alpha", "beta", "total"):
            v, ci = exp[f"{gold}:{d}"].split(" ", 1)
            assert html.count(f'<span class="v">{v}</span><span class="ci">{ci}</span>') >= 2, (gold, d)
    # Markdown: the golds lines and the domain tables' rows
    assert md.count(f"| {o_total} n=") >= 2 and md.count(f"| {v_total} n=") >= 2
    assert re.findall(r"\| [^|]+ \| first \| [^|]+ \| [^|]+ \| \d+ \| ([^|]+) \|", md) == [v_total]
    for gold in ("verified", "official"):
        row = f"| {exp[f'{gold}:alpha']} n=13 | {exp[f'{gold}:beta']} n=9 | {exp[f'{gold}:total']} n=22 |"
        assert md.count(row) == 2, (gold, row)


def test_the_viewer_serves_the_one_interval(one_run) -> None:
    from kramabench.view.compare import CompareQuery, compare
    from kramabench.view.golds import floors_panel
    from kramabench.view.runs import ResultsIndex

    exp = _expected_texts(one_run["expected"])
    idx = ResultsIndex(one_run["results"])
    idx.scan()
    runs = [idx.get("first"), idx.get("second")]
    for f in runs:
        s = f.summary()
        for g in ("official", "verified"):
            x = s["golds"][g]
            assert f"{format_pct(x['score'])} {format_ci(x['ci_low'], x['ci_high'])}" == exp[f"{g}:total"]
            panel = floors_panel(f)["scores"][g]
            assert (
                f"{format_pct(panel['score'])} {format_ci(panel['ci_low'], panel['ci_high'])}"
                == exp[f"{g}:total"]
            )
        assert format_ci(s["ci_low"], s["ci_high"]) == exp["verified:total"].split(" ", 1)[1]
    doc = compare(runs, CompareQuery(runs=["first", "second"]))
    for s in doc["runs"]:
        for g in ("official", "verified"):
            x = s["golds"][g]
            assert f"{format_pct(x['score'])} {format_ci(x['ci_low'], x['ci_high'])}" == exp[f"{g}:total"]
    # the same per-task scores: no difference, an interval of one point
    for g in ("official", "verified"):
        pair = doc["pairs_by_gold"][g][0]
        assert pair["mean_diff"] == 0 and pair["ci_low"] == pair["ci_high"] == 0


@pytest.mark.browser
def test_the_viewer_pages_print_the_one_interval(one_run) -> None:
    from kramabench.testing.browser import Browser, find_chromium
    from kramabench.view.server import ViewServer

    if find_chromium() is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium; scripts/install.sh --all)")
    exp = _expected_texts(one_run["expected"])
    ci_of = {g: exp[f"{g}:total"].split(" ", 1)[1] for g in ("official", "verified")}
    with ViewServer(one_run["results"], poll_s=0.2) as server, Browser(width=1400, height=900) as b:
        b.goto(server.url)
        b.wait_for("document.querySelectorAll('tr.run').length === 2")
        cells = b.eval("[...document.querySelectorAll('tr.run td.score')].map(td => td.textContent)")
        assert len(cells) == 4
        for text in cells:
            assert any(ci in text for ci in ci_of.values()), text
        assert (
            sum(ci_of["official"] in t for t in cells) == 2
            and sum(ci_of["verified"] in t for t in cells) == 2
        )
        b.goto(server.url + "?run=first")
        b.wait_for("document.querySelector('.gold-score.official') !== null")
        for g in ("official", "verified"):
            assert ci_of[g] in b.eval(f"document.querySelector('.gold-score.{g}').textContent")
