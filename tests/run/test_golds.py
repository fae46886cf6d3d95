"""Both golds of a run: every answer scored against the official gold (the files) and the verified gold
(official + errata); the record keeps the run's gold in ``score`` and the other in ``other_gold``."""

from __future__ import annotations

import pytest

from kramabench.run.runner import RunOptions
from kramabench.run.setup import RunConfig, RunSetupError, prepare
from kramabench.run.store import RunStore
from kramabench.workload import load_workload
from kramabench.workload.gold import changes_for

from .synth import make_workload

#: task 1's gold 0 corrected to 5 (the scripted system answers 0: right on the official gold only); task 2's
#: subtask 2 corrected from 4 to 7; task 3's answer type from numeric_exact to string_exact (same answer 6)
ERRATA = """
[[erratum]]
domain = "synth"
task = "synth-easy-1"
field = "answer"
old = 0
new = 5
reason = "the gold counts the header row"

[[erratum]]
domain = "synth"
task = "synth-easy-2"
subtask = "synth-easy-2-2"
field = "answer"
old = 4
new = 7
reason = "a planted correction of a subtask"

[[review]]
domain = "synth"
task = "synth-easy-1"
class = "gold-defect"
why = "the gold counts the header row"
evidence = "the solution's len(rows) includes the header"
derivation = "print(5)"
derived = 5

[[review]]
domain = "synth"
task = "synth-easy-3"
class = "reproduces"
why = "the solution prints 6"

[[erratum]]
domain = "synth"
task = "synth-easy-4"
field = "query"
old = "What is v for k=3? [answer=9]"
new = "What is v for k=3, exactly? [answer=9]"
reason = "a question reworded: the gold is the same"
"""


def cfg(root, system, results, **kw) -> RunConfig:
    opts = kw.pop("options", {})
    return RunConfig(workload=str(root), system=system, results=results, options=RunOptions(**opts), **kw)


@pytest.fixture
def errata_root(tmp_path):
    root = make_workload(tmp_path / "wl", n=4)
    (root / "errata.toml").write_text(ERRATA)
    return root


def test_changes_list_only_items_whose_gold_differs(errata_root):
    verified = load_workload(errata_root, "synth")
    changes = changes_for(verified, True)
    assert set(changes) == {
        ("synth-easy-1", None),
        ("synth-easy-2", "synth-easy-2-2"),
    }  # a new query is no change
    assert changes[("synth-easy-1", None)].answer == 0  # the official gold, seen from the verified view
    raw = load_workload(errata_root, "synth", errata=False)
    back = changes_for(raw, False)
    assert back[("synth-easy-1", None)].answer == 5 and back[("synth-easy-2", "synth-easy-2-2")].answer == 7


def test_a_run_scores_against_both_golds(tmp_path, scripted, errata_root):
    system, _ = scripted
    res = prepare(
        cfg(errata_root, system, tmp_path / "res", run_id="v", options={"pose_subtasks": True})
    ).run()
    recs = {r.task_id: r for r in res.records}
    one = recs["synth-easy-1"]
    assert one.gold == "verified" and one.expected == 5 and one.score == 0.0
    assert one.other_gold is not None and one.other_gold.gold == "official"
    assert (
        one.other_gold.expected == 0
        and one.other_gold.score == 1.0
        and one.other_gold.metric == "numeric_exact"
    )
    two = recs["synth-easy-2"]  # only a subtask's gold changed: scored apart against both golds
    assert two.score == 1.0 and two.subtask_scores["synth-easy-2-2"] == 0.0
    assert two.other_gold.score == 1.0 and two.other_gold.subtask_scores["synth-easy-2-2"] == 1.0
    assert recs["synth-easy-4"].other_gold is None and recs["synth-easy-4"].gold == "verified"
    # the task's reviewed class travels with its record, also in a --no-errata run (below)
    assert one.gold_class == "gold-defect" and recs["synth-easy-3"].gold_class == "reproduces"
    assert recs["synth-easy-2"].gold_class is None
    m = RunStore(tmp_path / "res" / "v").read_manifest()
    assert m.workload["gold_classes"] == {"synth": {"gold-defect": 1, "reproduces": 1}}
    assert m.workload["gold"] == "verified" and m.workload["gold_changes"] == {"synth": 2}
    assert (
        m.workload["errata_file"]["path"].endswith("errata.toml")
        and len(m.workload["errata_file"]["sha256"]) == 64
    )


def test_no_errata_run_holds_the_official_gold_and_scores_the_verified_beside(
    tmp_path, scripted, errata_root
):
    system, _ = scripted
    res = prepare(cfg(errata_root, system, tmp_path / "res", run_id="o", errata=False)).run()
    one = next(r for r in res.records if r.task_id == "synth-easy-1")
    assert (
        one.gold == "official" and one.expected == 0 and one.score == 1.0 and one.gold_class == "gold-defect"
    )
    assert one.other_gold.gold == "verified" and one.other_gold.expected == 5 and one.other_gold.score == 0.0
    # the subtasks were not posed: a subtask's changed gold gives no second score
    assert next(r for r in res.records if r.task_id == "synth-easy-2").other_gold is None


def test_subtask_setting_scores_the_changed_subtask_twice(tmp_path, scripted, errata_root):
    system, _ = scripted
    res = prepare(
        cfg(errata_root, system, tmp_path / "res", run_id="s", options={"setting": "subtasks"})
    ).run()
    recs = {(r.task_id, r.subtask_id): r for r in res.records}
    changed = recs[("synth-easy-2", "synth-easy-2-2")]
    assert changed.expected == 7 and changed.score == 0.0
    assert changed.other_gold.expected == 4 and changed.other_gold.score == 1.0
    assert all(r.other_gold is None for k, r in recs.items() if k != ("synth-easy-2", "synth-easy-2-2"))


def test_an_errata_file_replaces_the_default(tmp_path, scripted, errata_root):
    system, _ = scripted
    proposed = tmp_path / "proposed.toml"
    proposed.write_text(
        '[[erratum]]\ndomain = "synth"\ntask = "synth-easy-2"\nsubtask = "synth-easy-2-2"\n'
        'field = "answer"\nold = 4\nnew = 7\nreason = "a proposal"\n'
    )
    res = prepare(cfg(errata_root, system, tmp_path / "res", run_id="p", errata_file=proposed)).run()
    recs = {r.task_id: r for r in res.records}
    assert recs["synth-easy-1"].score == 1.0 and recs["synth-easy-1"].other_gold is None  # not in this file
    m = RunStore(tmp_path / "res" / "p").read_manifest()
    assert (
        m.workload["errata_file"]["path"] == str(proposed) and m.workload["errata_file"]["default"] is False
    )
    with pytest.raises(RunSetupError, match="exclude each other"):
        prepare(cfg(errata_root, system, tmp_path / "res", run_id="q", errata=False, errata_file=proposed))


PERCENT_TASKS = [
    {
        "id": "toy-easy-1",
        "query": "What percentage of rows are empty? [answer=12.5]",
        "answer": 0.125,
        "answer_type": "numeric_exact",
    },
    {"id": "toy-easy-2", "query": "How many rows? [answer=300]", "answer": 3, "answer_type": "numeric_exact"},
]


def test_percent_normalisation_is_a_named_option_recorded_in_the_manifest(tmp_path, scripted):
    from kramabench.report import write_report

    from .synth import write_root

    system, _ = scripted
    root = write_root(tmp_path / "wl", PERCENT_TASKS)
    paper = prepare(cfg(root, system, tmp_path / "res", run_id="paper")).run()
    rec = {r.task_id: r for r in paper.records}
    assert rec["toy-easy-1"].score == 0.0 and rec["toy-easy-1"].score_details["scale_mismatch"] == "x100"
    md = write_report([paper.run_dir], tmp_path / "rep").markdown.read_text()
    assert "scale_mismatch: x100" in md  # in the task's row
    assert "2 answer(s) are the gold times or divided by 100" in md and "would rescale them" in md

    norm = prepare(
        cfg(root, system, tmp_path / "res", run_id="norm", options={"normalise_percent": True})
    ).run()
    rec = {r.task_id: r for r in norm.records}
    one = rec["toy-easy-1"]
    assert (
        one.score == 1.0
        and one.score_details["percent_normalised"] == "x100"
        and one.score_details["paper_score"] == 0.0
    )
    assert (
        rec["toy-easy-2"].score == 0.0
    )  # 300 for 3, but the question is no percentage: wrong, as in the paper
    m = RunStore(tmp_path / "res" / "norm").read_manifest()
    assert m.options["config"]["options"]["normalise_percent"] is True
    with pytest.raises(RunSetupError, match="scored with --normalise-percent"):
        prepare(cfg(root, system, tmp_path / "res", run_id="norm", resume=True))


def test_official_gold_from_the_applied_errata_matches_a_second_load(tmp_path):
    """The fast path (the errata's old values) gives what loading the raw file again gives; a renamed
    subtask stays the same item."""
    from kramabench.workload.gold import gold_changes, official_from_applied, same_gold

    root = make_workload(tmp_path / "wl", n=4)
    (root / "errata.toml").write_text(
        ERRATA
        + """
[[erratum]]
domain = "synth"
task = "synth-easy-3"
subtask = "synth-easy-3-2"
field = "id"
old = "synth-easy-3-2"
new = "synth-easy-3-9"
reason = "renamed"

[[erratum]]
domain = "synth"
task = "synth-easy-3"
subtask = "synth-easy-3-9"
field = "answer"
old = 4
new = 5
reason = "a correction addressed by the new id"

[[erratum]]
domain = "synth"
task = "synth-easy-4"
field = "answer_type"
old = "numeric_exact"
new = "numeric_approximate"
reason = "a type change"
"""
    )
    verified = load_workload(root, "synth")
    fast = official_from_applied(verified)
    slow = gold_changes(verified, load_workload(root, "synth", errata=False, validate=False))
    assert fast is not None
    assert fast[("synth-easy-3", "synth-easy-3-9")].answer == 4  # the renamed subtask's file value
    assert slow[("synth-easy-3", "synth-easy-3-9")].present is False  # a second load cannot pair it
    assert fast[("synth-easy-4", None)].answer_type == "numeric_exact"
    renamed = ("synth-easy-3", "synth-easy-3-9")
    assert set(fast) == set(slow)
    assert all(same_gold(fast[k], slow[k]) for k in set(fast) - {renamed})


def test_a_run_recorded_before_both_golds_resumes_and_reports_both(tmp_path, scripted, errata_root):
    """Records and a manifest written before both golds were kept: resume adds records with both golds, and
    the table and the report score the old records' corrected answers against the official value again."""
    import json

    from kramabench.report import write_report
    from kramabench.run.table import domain_table

    system, _ = scripted
    prepare(cfg(errata_root, system, tmp_path / "res", run_id="old")).run()
    run = tmp_path / "res" / "old"
    lines = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    old = []
    for r in lines:
        if r["task_id"] == "synth-easy-4":
            continue  # not run yet when the older version stopped
        for k in ("gold", "other_gold", "gold_class"):
            r.pop(k, None)
        old.append(json.dumps(r))
    (run / "records.jsonl").write_text("\n".join(old) + "\n")
    m = json.loads((run / "manifest.json").read_text())
    for k in ("gold", "errata_file", "gold_changes", "gold_classes"):
        m["workload"].pop(k, None)
    m["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(m))

    res = prepare(cfg(errata_root, system, tmp_path / "res", run_id="old", resume=True)).run()
    recs = {r.task_id: r for r in res.records}
    assert recs["synth-easy-4"].gold == "verified" and recs["synth-easy-1"].gold is None
    _rows, total = domain_table(res.records, manifest=RunStore(run).read_manifest())
    assert (
        total.mean == 0.75 and total.official_mean == 1.0
    )  # synth-easy-1 scored again against its old gold 0
    md = write_report([run], tmp_path / "rep").markdown.read_text()
    assert "scored against the official gold when this table was made, without a judge" in md
