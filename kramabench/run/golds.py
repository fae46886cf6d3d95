"""A run's records seen against one gold: official (the workload files, the paper-comparable number) or
verified (official + errata).

A record holds its score against the run's gold (``Record.gold``) and, when an erratum changed the item's
gold, its score against the other one (``Record.other_gold``). :func:`records_under` turns a run's records
into the records it would have against one gold, so that every table (the end-of-run table, ``score``,
the report) computes both numbers with the same code.

Records written before both golds were kept carry neither field: the manifest's ``workload.errata`` says
which gold they hold, and for a verified run its ``errata_applied`` lists the corrections, so an answer
whose gold was corrected is scored again here against the official value (without a judge: a paraphrase
answer stays unscored, said in the notes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kramabench.contracts.records import GoldName, Manifest, Record
from kramabench.files import sha256_file
from kramabench.runfolder.golds import GOLD_TITLES, GOLDS, OFFICIAL, VERIFIED, old_official_values, run_gold


@dataclass
class GoldView:
    """Records as scored against one gold, with notes on what could not be known."""

    gold: GoldName
    records: list[Record]
    #: items whose score differs from the run's gold (an erratum changed their gold)
    changed: int = 0
    notes: list[str] = field(default_factory=list)


def _rescore_old(r: Record, fields: dict[str, Any]) -> Record:
    """An old record's main answer scored against the official values of ``fields``."""
    from kramabench.run.scoring import score_answer

    expected = fields.get("answer", r.expected)
    at = fields.get("answer_type", r.answer_type)
    upd: dict[str, Any] = {"expected": expected, "answer_type": at}
    if r.answer is not None and r.metric != "no_answer":
        s = score_answer(expected, r.answer, at, None, where=r.task_id)
        details = {**s.details, "rescored": "against the official gold when the report was made (no judge)"}
        upd.update(score=s.value, unscored=s.unscored, metric=s.metric, score_details=details)
    return r.model_copy(update=upd)


def records_under(records: list[Record], gold: GoldName, manifest: Manifest | None = None) -> GoldView:
    """The records as scored against ``gold``: each record's own score where it holds that gold (or where
    both golds are the same for it), its ``other_gold`` where an erratum changed it."""
    default = run_gold(manifest)
    old_fix = (
        old_official_values(manifest.errata_applied)
        if manifest is not None and gold == OFFICIAL and default == VERIFIED
        else {}
    )
    out: list[Record] = []
    changed = 0
    unknown = 0
    rescored = 0
    for r in records:
        mine = r.gold or default
        if mine == gold:
            out.append(r)
            continue
        o = r.other_gold
        if o is not None and o.gold == gold:
            changed += 1
            out.append(
                r.model_copy(
                    update={
                        "gold": gold,
                        "expected": o.expected,
                        "answer_type": o.answer_type,
                        "score": o.score,
                        "unscored": o.unscored,
                        "metric": o.metric,
                        "score_details": o.score_details,
                        "subtask_scores": {**r.subtask_scores, **o.subtask_scores},
                        "subtask_details": {**r.subtask_details, **o.subtask_details},
                    }
                )
            )
            continue
        if r.gold is not None:  # recorded with both golds in mind: the same gold for this item
            out.append(r.model_copy(update={"gold": gold}))
            continue
        fix = old_fix.get((r.task_id, r.subtask_id))
        if fix:
            changed += 1
            rescored += 1
            out.append(_rescore_old(r, fix).model_copy(update={"gold": gold}))
        else:
            if gold == VERIFIED:
                unknown += 1
            out.append(r.model_copy(update={"gold": gold}))
    view = GoldView(gold=gold, records=out, changed=changed)
    if unknown:
        view.notes.append(
            f"{unknown} record(s) of a --no-errata run were written before kramabench scored both golds: their "
            "verified score is their official one"
        )
    if rescored:
        view.notes.append(
            f"{rescored} answer(s) recorded before both golds were kept were scored against the official gold "
            "when this table was made, without a judge"
        )
    return view


def with_errata_file(
    records: list[Record], manifest: Manifest, errata: Path
) -> tuple[list[Record], Manifest, list[str]]:
    """The run's records with ``errata`` as their verified gold (for ``kramabench report --errata FILE``: score a
    run with proposed errata without copying the workload): each record holds the official gold, and its
    ``other_gold`` the score against official + ``errata`` where that differs. An answer whose new verified
    gold is the one the run already scored against keeps that score (its judge verdict included); any other
    changed answer is scored again here, without a judge (a paraphrase stays unscored, counted in the notes).
    Returns (records, a manifest copy naming the errata file, notes). Raises ValueError when the run's
    workload root is not on this machine or the file cannot be applied."""

    from kramabench.contracts.records import GoldScore
    from kramabench.workload import WorkloadError, load_workload
    from kramabench.workload.errata import same_json
    from kramabench.workload.gold import gold_changes

    root = Path(str(manifest.workload.get("root") or ""))
    if not (root / "workload").is_dir():
        raise ValueError(
            f"--errata: the run's workload root {root} is not on this machine; the run cannot be "
            "scored again against other errata here"
        )
    domains = sorted({r.domain for r in records})
    changes: dict[str, dict[Any, Any]] = {}
    try:
        for d in domains:
            raw = load_workload(root, d, errata=False, validate=False)
            new = load_workload(root, d, errata=Path(errata), validate=False)
            changes[d] = gold_changes(raw, new)
    except WorkloadError as e:
        raise ValueError(f"--errata {errata}: {e}") from None
    from kramabench.workload.errata import load_errata

    reviewed = load_errata(Path(errata))  # loads: load_workload read it above
    classes = {d: reviewed.classes(d) for d in domains}
    views = both_golds(records, manifest)
    verified = {(r.domain, *r.key): r for r in views[VERIFIED].records}
    out: list[Record] = []
    rescored = unscored = 0

    def rescore(
        expected: Any, at: str | None, answer: Any, where: str
    ) -> tuple[float | None, bool, str | None, dict[str, Any]]:
        nonlocal rescored, unscored
        from kramabench.run.scoring import score_answer

        rescored += 1
        s = score_answer(expected, answer, at, None, where=where)
        if s.unscored:
            unscored += 1
        return (
            s.value,
            s.unscored,
            s.metric,
            {**s.details, "rescored": f"against {Path(errata).name}, without a judge"},
        )

    for r in views[OFFICIAL].records:
        cls = classes.get(r.domain, {}).get(r.task_id, r.gold_class)  # the file's review, else the run's
        base = r.model_copy(update={"gold": OFFICIAL, "other_gold": None, "gold_class": cls})
        ch = changes.get(r.domain) or {}
        main_key = (r.task_id, r.subtask_id if r.setting == "subtasks" else None)
        subs = [(r.task_id, sid) for sid in r.subtask_scores] if r.setting != "subtasks" else []
        mine = {k: ch[k] for k in [main_key, *subs] if k in ch}
        if r.setting == "pipeline-design" or not mine:
            out.append(base)
            continue
        v = verified.get((r.domain, *r.key))
        g = mine.get(main_key)
        if g is None:  # only subtasks changed: the main answer keeps its official score
            expected, at, score, uns, metric, details = (
                r.expected,
                r.answer_type,
                r.score,
                r.unscored,
                r.metric,
                r.score_details,
            )
        elif not g.present:
            expected, at, score, uns, metric, details = (
                None,
                None,
                None,
                True,
                None,
                {"reason": "not in the verified workload"},
            )
        else:
            at = g.answer_type
            expected = g.answer
            if v is not None and same_json(v.expected, g.answer) and v.answer_type == at:
                score, uns, metric, details = v.score, v.unscored, v.metric, v.score_details
            elif r.answer is None or r.metric == "no_answer":
                score, uns, metric, details = r.score, r.unscored, r.metric, r.score_details
            else:
                score, uns, metric, details = rescore(expected, at, r.answer, r.task_id)
        sub_scores: dict[str, float | None] = {}
        for (_t, sid), sg in mine.items():
            if sid is None or r.setting == "subtasks":
                continue
            if not sg.present:
                sub_scores[sid] = None
            elif sid not in r.subtask_answers:
                sub_scores[sid] = r.subtask_scores.get(sid)
            else:
                sub_scores[sid] = rescore(sg.answer, sg.answer_type, r.subtask_answers[sid], sid)[0]
        out.append(
            base.model_copy(
                update={
                    "other_gold": GoldScore(
                        gold=VERIFIED,
                        expected=expected,
                        answer_type=at,
                        score=score,
                        unscored=uns,
                        metric=metric,
                        score_details=details or {},
                        subtask_scores=sub_scores,
                    )
                }
            )
        )
    m = manifest.model_copy(deep=True)
    try:
        digest = sha256_file(errata)
    except OSError:
        digest = None
    m.workload["gold"] = VERIFIED
    m.workload["errata_file"] = {
        "path": str(errata),
        "sha256": digest,
        "default": False,
        "applied_by": "kramabench report --errata",
    }
    notes = [
        f"verified gold: the official gold + {errata} (given to the report; the run itself was scored "
        f"against {'its default errata' if manifest.workload.get('errata', True) else 'the raw files'})"
    ]
    if rescored:
        notes.append(
            f"{rescored} answer(s) whose gold the errata file changes were scored again for this report, "
            f"without a judge"
            + (f" ({unscored} left unscored: only a judge could decide)" if unscored else "")
        )
    return out, m, notes


def both_golds(records: list[Record], manifest: Manifest | None = None) -> dict[GoldName, GoldView]:
    """The official and the verified view of the same records."""
    return {g: records_under(records, g, manifest) for g in GOLDS}


__all__ = [
    "GOLDS",
    "GOLD_TITLES",
    "OFFICIAL",
    "VERIFIED",
    "GoldView",
    "both_golds",
    "records_under",
    "run_gold",
    "with_errata_file",
]
