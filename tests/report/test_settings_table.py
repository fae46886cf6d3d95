"""The Table-6 shape in ``kramabench report``: rows = system x setting, columns = models."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup

from kramabench.contracts.records import Manifest
from kramabench.report import load_run, settings_table, write_report


def _md_table(md: str, heading: str, keys: int = 2) -> dict[str, dict[str, str]]:
    lines = md.split(f"## {heading}\n", 1)[1].lstrip("\n").splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    header, body = rows[0], rows[2:]
    return {" · ".join(r[:keys]): dict(zip(header[keys:], r[keys:], strict=True)) for r in body}


def _mean(cell: str) -> float:
    return float(re.match(r"^\**([\d.]+)", cell).group(1))


def _run(
    synth, base: Path, run_id: str, system: str, model: str | None, setting: str, rows, judge=None
) -> Path:
    """rows: (domain, task, subtask or None, score, unscored)"""
    recs = []
    for domain, task, sub, score, unscored in rows:
        recs.append(
            synth.rec(
                run_id,
                model,
                domain,
                task,
                score,
                setting=setting,
                subtask_id=sub,
                unscored=unscored,
                system=system,
                score_details={"judge": judge} if setting == "pipeline-design" else {},
            )
        )
    man = Manifest(
        run_id=run_id,
        created_at=synth.T0,
        finished_at=synth.T0,
        system=system,
        model=model,
        setting=setting,
        judge=judge,
        status="finished",
    )
    return synth.write(base / run_id, man, recs)


@pytest.fixture()
def settings_runs(tmp_path: Path, synth: SimpleNamespace) -> list[Path]:
    _rec = synth.rec

    def rec(run_id, model, domain, task, score, **kw):
        system = kw.pop("system")
        r = _rec(run_id, model, domain, task, score, **kw)
        return r.model_copy(update={"system": system})

    s = SimpleNamespace(rec=rec, T0=synth.T0, write=synth.write)
    base = tmp_path / "results"
    return [
        # end-to-end, model A: tasks 1.0, 0.0 -> 50
        _run(
            s,
            base,
            "e2e-a",
            "ds-guru",
            "model-a",
            "end-to-end",
            [("d", "d-easy-1", None, 1.0, False), ("d", "d-easy-2", None, 0.0, False)],
        ),
        # pipeline design, model A: 0.75, 0.5, one task not judgeable (unscored) -> 62.5 (+1 unscored)
        _run(
            s,
            base,
            "pd-a",
            "ds-guru",
            "model-a",
            "pipeline-design",
            [
                ("d", "d-easy-1", None, 0.75, False),
                ("d", "d-easy-2", None, 0.5, False),
                ("d", "d-easy-3", None, None, True),
            ],
            judge="openai/judge-x",
        ),
        # subtasks, model A: task 1 mean(1, 0) = 0.5, task 2 mean(1, unscored) = 1.0 -> 75
        _run(
            s,
            base,
            "st-a",
            "ds-guru",
            "model-a",
            "subtasks",
            [
                ("d", "d-easy-1", "d-easy-1-1", 1.0, False),
                ("d", "d-easy-1", "d-easy-1-2", 0.0, False),
                ("d", "d-easy-2", "d-easy-2-1", 1.0, False),
                ("d", "d-easy-2", "d-easy-2-2", None, True),
            ],
        ),
        # pipeline design, model B, split over two runs (one per domain): 1.0 and 0.0 -> 50, pooled
        _run(
            s,
            base,
            "pd-b1",
            "ds-guru",
            "model-b",
            "pipeline-design",
            [("d", "d-easy-1", None, 1.0, False)],
            judge="openai/judge-x",
        ),
        _run(
            s,
            base,
            "pd-b2",
            "ds-guru",
            "model-b",
            "pipeline-design",
            [("e", "e-easy-1", None, 0.0, False)],
            judge="openai/judge-x",
        ),
        # the reference system has no model
        _run(
            s,
            base,
            "ref",
            "reference",
            None,
            "pipeline-design",
            [("d", "d-easy-1", None, 1.0, False)],
            judge="openai/judge-x",
        ),
    ]


def test_settings_table_numbers(settings_runs: list[Path]) -> None:
    t = settings_table([load_run(p) for p in settings_runs])
    assert t is not None
    assert t.key_headers == ["System", "Setting"]
    assert t.columns == ["model-a", "model-b", "–"]
    by = {tuple(r.keys): r.cells for r in t.rows}
    assert list(by) == [
        ("ds-guru", "End-to-end"),
        ("ds-guru", "Pipeline design"),
        ("ds-guru", "Subtask implementation"),
        ("reference", "Pipeline design"),
    ]
    e2e, pd, st, ref = by.values()
    assert e2e[0].mean == pytest.approx(0.5) and e2e[0].n == 2 and e2e[1].n == 0 and e2e[1].mean is None
    assert pd[0].mean == pytest.approx(0.625) and pd[0].n == 2 and pd[0].n_unscored == 1
    assert pd[1].mean == pytest.approx(0.5) and pd[1].n == 2
    assert st[0].mean == pytest.approx(0.75) and st[0].n == 2 and st[0].n_unscored == 0
    assert ref[2].mean == 1.0 and ref[0].n == 0
    assert any("pooled from runs pd-b1, pd-b2" in n for n in t.notes)
    assert any("judged by openai/judge-x" in n for n in t.notes)


def test_settings_table_in_markdown_and_html(settings_runs: list[Path], tmp_path: Path) -> None:
    paths = write_report(settings_runs, tmp_path / "out")
    md = paths.markdown.read_text()
    assert "| System | Setting | model-a | model-b | – |" in md
    t = _md_table(md, "Settings by model")
    assert _mean(t["ds-guru · Pipeline design"]["model-a"]) == pytest.approx(62.5)
    assert "(+1 unscored)" in t["ds-guru · Pipeline design"]["model-a"]
    assert _mean(t["ds-guru · Subtask implementation"]["model-a"]) == pytest.approx(75.0)
    assert t["ds-guru · End-to-end"]["model-b"] == "–"
    soup = BeautifulSoup(paths.html.read_text(), "html.parser")
    section = soup.find("section", id="settings-by-model")
    assert section is not None
    heads = [th.get_text() for th in section.find_all("th")]
    assert heads == ["System", "Setting", "model-a", "model-b", "–"]
    assert len(section.find("tbody").find_all("tr")) == 4


def test_no_settings_table_for_end_to_end_only(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    assert settings_table([load_run(p) for p in two_runs]) is None
    md = write_report(list(two_runs), tmp_path / "out").markdown.read_text()
    assert "Settings by model" not in md
