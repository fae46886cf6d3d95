"""The planted-fault corpus (tests/elt/corpus.py): every warehouse scored as a run scores it (the isolated reader,
both comparators) and by two oracles written from the published behaviour. On every case:

* ``elt-bench`` agrees with the original's evaluation with the named fixes applied (``oracle_original`` with
  ``ALL_FIXES``), and its ``unfixed_correct`` with the original's own verdict (no fixes);
* ``verified`` agrees with ELT-Bench-Verified's rules with kramabench's named differences applied
  (``oracle_verified``, written from Verified's published document and code); Verified's own verdict (no
  differences) is the case's label unless the case names the differences that decide it, and those are
  exactly the differences that, applied alone to Verified's rules, turn its verdict around;
* all of them agree with the case's labels (what the rules say of the planted fault, written by hand).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from kramabench.elt.scoring import score_pipeline
from kramabench.elt.suite.loader import load_suite
from tests.elt import oracle_original, oracle_verified
from tests.elt.corpus import CASES, PIPELINES, Case, build_warehouse
from tests.elt.suites import write_suite

#: case -> model -> what was seen; filled by the cases, summed last
SEEN: dict[str, dict[str, dict]] = {}


def _suite_for(case: Case, root: Path) -> Path:
    specs = {pid: copy.deepcopy(p["spec"]) for pid, p in PIPELINES.items() if pid == case.pipeline}
    specs[case.pipeline]["ground_truth"].update(case.ground_truth)
    return write_suite(root, specs, name="corpus")


def _verified_oracle(stage1: bool, warehouse: Path, query: str, gt: Path) -> tuple[bool, bool, list[str]]:
    """(Verified's own verdict, with the named differences, the differences that alone turn it around)."""
    if not stage1:
        return False, False, []
    try:
        g, got = oracle_verified.frames(warehouse, query, gt)
    except Exception:  # noqa: BLE001 - a failing query or an unreadable table: wrong under every rule
        return False, False, []
    return oracle_verified.deciding(g, got)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_planted_fault_scores_as_the_original_and_verified_rules_say(case: Case, tmp_path: Path) -> None:
    suite = load_suite(_suite_for(case, tmp_path / "suite"), validate=False)
    p = suite.pipeline(case.pipeline)
    wh = build_warehouse(case, tmp_path / "warehouse")
    ours = score_pipeline(suite, p, wh, isolated=True)

    models = {m.name: ((p.folder / m.evaluation).read_text(), p.folder / m.ground_truth) for m in p.models}
    o_stage1, original = oracle_original.evaluate(wh, suite.schema_name, p.tables, models)
    _, fixed = oracle_original.evaluate(wh, suite.schema_name, p.tables, models, oracle_original.ALL_FIXES)
    rules = {m: _verified_oracle(o_stage1, wh, q, g) for m, (q, g) in models.items()}

    assert ours.stage1.passed == o_stage1 == case.stage1, (ours.stage1, case.why)
    labels = case.verdicts()
    SEEN[case.name] = {}
    for m in ours.models:
        res = m.results
        mine = (
            bool(res.get("elt-bench") and res["elt-bench"].unfixed_correct),
            m.correct("elt-bench"),
            m.correct("verified"),
        )
        own, full, alone = rules[m.model]
        theirs = (original[m.model], fixed[m.model], full)
        named = sorted(case.differs.get(m.model, ()))
        SEEN[case.name][m.model] = {
            "ours": mine,
            "oracles": theirs,
            "label": labels[m.model],
            "own": own,
            "alone": alone,
            "named": named,
        }
        detail = {c: r.model_dump(exclude_defaults=True) for c, r in res.items()} or m.error
        assert theirs == labels[m.model], (
            f"{case.name}/{m.model}: the oracles say {theirs}, the label {labels[m.model]} ({case.why})"
        )
        # Verified's own verdict, and the named differences that decide where it is not ours
        assert own == (full if not named else not full), (
            f"{case.name}/{m.model}: Verified's own verdict is {own}, ours {full}; the case names {named} ({case.why})"
        )
        if named:
            assert sorted(alone) == named, (
                f"{case.name}/{m.model}: decided by {alone}, the case names {named}"
            )
        assert mine == theirs, (
            f"{case.name}/{m.model}: ours {mine}, the oracles {theirs} ({case.why}): {detail}"
        )


@pytest.mark.slow
def test_the_corpus_is_broad_and_every_case_agreed() -> None:
    """Dozens of single-fault warehouses over several pipelines; the agreement figures and the models the
    named differences decide (printed with -s)."""
    if len(SEEN) < len(CASES):
        pytest.skip("run with the whole corpus (the cases above)")
    assert len(CASES) >= 90 and len({c.pipeline for c in CASES}) >= 5
    pairs = [v for case in SEEN.values() for v in case.values()]
    agree = [sum(p["ours"][k] == p["oracles"][k] for p in pairs) for k in range(3)]
    own = sum(p["ours"][2] == p["own"] for p in pairs)
    decided = sorted(
        f"{c}/{m}: {', '.join(v['named'])}" for c, ms in SEEN.items() for m, v in ms.items() if v["named"]
    )
    print(
        f"\ncorpus: {len(SEEN)} warehouses, {len(pairs)} data models: elt-bench vs the original with its fixes "
        f"{agree[1]}/{len(pairs)}; elt-bench's unfixed verdict vs the original {agree[0]}/{len(pairs)}; the fixes "
        f"changed {sum(p['oracles'][0] != p['oracles'][1] for p in pairs)} verdict(s); verified vs Verified's rules "
        f"with the named differences {agree[2]}/{len(pairs)}, vs Verified's own verdict {own}/{len(pairs)}; "
        f"the named differences decide {len(decided)}:\n  " + "\n  ".join(decided)
    )
    assert agree == [len(pairs)] * 3
    assert own == len(pairs) - len(decided)
    # every kind of verdict occurs: the corpus tells the comparators apart
    kinds = {p["label"] for p in pairs}
    assert {
        (True, True, True),
        (False, False, False),
        (False, True, True),
        (False, False, True),
        (True, True, False),
    } <= kinds
    # every named difference decides some case (``a, b``: each alone; ``a+b``: only together)
    assert {d for p in pairs for n in p["named"] for d in n.split("+")} == set(oracle_verified.DIFFERENCES)
