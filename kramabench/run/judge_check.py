"""How far can the design judge be trusted? Flip rate, accuracy and Cohen's kappa on a labelled set.

A labelled set lives in ``<workload root>/judge_check/labels.json``::

    {"include_references": true,
     "pipelines": [{"file": "broken/harbor-easy-1-nodedupe.py", "domain": "harbor",
                    "task": "harbor-easy-1", "missing": ["kf-2", "kf-3"]}, ...]}

Cases: with ``include_references``, each task of the root that has a reference solution and key
functionalities, all functionalities labelled implemented; then each listed pipeline, its ``missing``
functionalities labelled not implemented and the others implemented. ``file`` is relative to the
``judge_check`` folder.

:func:`run_judge_check` asks the judge ``k`` times about every case (one call per case and run; the
model's response cache must be off for the runs to be independent, see the CLI). Statistics:

* an *item* is one functionality of one case; a *verdict* is one run's answer on an item (True,
  False or None = unscored);
* **flip rate** = items whose scored verdicts include both True and False / items with at least two
  scored verdicts;
* **accuracy** and **Cohen's kappa** pool every scored verdict of every run against its label (positive
  class: implemented). kappa = (p_o - p_e) / (1 - p_e), with p_e from the marginals of labels and
  verdicts; it is None when p_e = 1 (both sides constant and equal: agreement beyond chance undefined);
* unscored verdicts are counted apart and left out of accuracy and kappa.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.answers import KeyFunctionality
from kramabench.files import SMALL_JSON_BYTES, FileRefused, OutsideRoot, inside, read_text
from kramabench.scorers.design import DesignJudge, DesignVerdict
from kramabench.workload import key_functionalities, list_domains, load_workload
from kramabench.workload.solutions import read_solution, solution_of

logger = logging.getLogger(__name__)

LABELS_FILE = "judge_check/labels.json"


class JudgeCheckError(Exception):
    """A labelled set that cannot be used (names the file and the field)."""


class LabelledCase(BaseModel):
    """One pipeline with the truth about each of its task's functionalities."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="'reference:<task>' or the pipeline file relative to judge_check/")
    kind: str = Field(description="'reference' or 'broken'")
    domain: str
    task_id: str
    question: str
    code: str
    functionalities: list[KeyFunctionality]
    labels: dict[str, bool] = Field(description="kf id -> implemented")


class ConfusionCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tp: int = 0  # label implemented, judge implemented
    fp: int = 0  # label missing, judge implemented
    fn: int = 0  # label implemented, judge missing
    tn: int = 0  # label missing, judge missing

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def add(self, label: bool, verdict: bool) -> None:
        if label and verdict:
            self.tp += 1
        elif verdict:
            self.fp += 1
        elif label:
            self.fn += 1
        else:
            self.tn += 1


class CaseResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    kind: str
    task_id: str
    labels: dict[str, bool]
    verdicts: dict[str, list[bool | None]] = Field(description="kf id -> one verdict per run")
    flipped: list[str] = Field(default_factory=list)
    correct: int = 0
    scored: int = 0
    unscored: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.scored if self.scored else None


class JudgeCheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge: str
    prompt_version: str
    k: int
    n_cases: int
    n_items: int
    n_verdicts: int
    n_unscored: int
    n_flip_items: int = Field(description="items with at least two scored verdicts")
    n_flipped: int
    flip_rate: float | None
    accuracy: float | None
    kappa: float | None
    confusion: ConfusionCounts
    cases: list[CaseResult]
    judge_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0


# ---- statistics -----------------------------------------------------------------------------------


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of (label, verdict) pairs; None when empty or chance agreement is 1."""
    n = len(pairs)
    if n == 0:
        return None
    agree = sum(1 for a, b in pairs if a == b)
    p_o = agree / n
    pa = sum(1 for a, _ in pairs if a) / n
    pb = sum(1 for _, b in pairs if b) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


def flip_stats(runs_per_item: Sequence[Sequence[bool | None]]) -> tuple[int, int, float | None]:
    """(flipped items, items with >= 2 scored verdicts, flip rate) over per-item verdict lists."""
    eligible = flipped = 0
    for verdicts in runs_per_item:
        scored = [v for v in verdicts if v is not None]
        if len(scored) < 2:
            continue
        eligible += 1
        if len(set(scored)) > 1:
            flipped += 1
    return flipped, eligible, (flipped / eligible if eligible else None)


# ---- the labelled set -----------------------------------------------------------------------------


def labels_path(root: Path) -> Path:
    return Path(root) / LABELS_FILE


def load_labelled_set(root: Path, *, domains: Sequence[str] | None = None) -> list[LabelledCase]:
    """The cases of ``root``'s labelled set (see the module docstring); raises :class:`JudgeCheckError`."""
    root = Path(root)
    path = labels_path(root)
    if not path.exists():
        raise JudgeCheckError(
            f"{path}: no labelled set (judge-check needs {LABELS_FILE} under the workload root)"
        )
    try:
        spec = json.loads(read_text(path, limit=SMALL_JSON_BYTES, what="labelled set"))
    except FileRefused as e:
        raise JudgeCheckError(str(e)) from None
    except (ValueError, RecursionError) as e:
        raise JudgeCheckError(f"{path}: not valid JSON: {str(e).splitlines()[0]}") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("pipelines", []), list):
        raise JudgeCheckError(f"{path}: expected an object with a 'pipelines' list")
    all_domains = list_domains(root)
    wanted = list(domains) if domains else all_domains
    for d in wanted:
        if d not in all_domains:
            raise JudgeCheckError(f"{root}: no domain {d!r} (domains: {', '.join(all_domains)})")
    workloads = {d: load_workload(root, d) for d in wanted}
    cases: list[LabelledCase] = []
    if spec.get("include_references", True):
        for d in wanted:
            for t in workloads[d].tasks:
                kfs = key_functionalities(t)
                if not t.solution or not kfs.judgeable:
                    continue
                sol = solution_of(workloads[d], t)
                if sol is None or not sol.is_file():
                    raise JudgeCheckError(f"{root}: task {t.id}: solution {t.solution} not found")
                try:
                    code = read_solution(sol)
                except FileRefused as e:
                    raise JudgeCheckError(f"task {t.id}: solution {e}") from None
                cases.append(
                    LabelledCase(
                        name=f"reference:{t.id}",
                        kind="reference",
                        domain=d,
                        task_id=t.id,
                        question=t.query,
                        code=code,
                        functionalities=kfs.items,
                        labels={k.id: True for k in kfs.items},
                    )
                )
    base = path.parent
    for i, entry in enumerate(spec.get("pipelines", [])):
        where = f"{path}: pipelines[{i}]"
        if not isinstance(entry, dict):
            raise JudgeCheckError(f"{where}: expected an object")
        for field in ("file", "domain", "task", "missing"):
            if field not in entry:
                raise JudgeCheckError(f"{where}: missing field {field!r}")
        d = entry["domain"]
        if d not in all_domains:
            raise JudgeCheckError(f"{where}.domain: no domain {d!r} in {root}")
        if d not in workloads:
            continue
        try:
            task = workloads[d].task(entry["task"])
        except KeyError:
            raise JudgeCheckError(f"{where}.task: no task {entry['task']!r} in domain {d}") from None
        kfs = key_functionalities(task)
        missing = entry["missing"]
        if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
            raise JudgeCheckError(f"{where}.missing: expected a list of functionality ids")
        unknown = sorted(set(missing) - set(kfs.ids))
        if unknown:
            raise JudgeCheckError(
                f"{where}.missing: {', '.join(unknown)} not among {task.id}'s functionalities "
                f"({', '.join(kfs.ids) or 'none'})"
            )
        try:
            file = inside(base, entry["file"]) if isinstance(entry["file"], str) else None
        except OutsideRoot as e:
            raise JudgeCheckError(f"{where}.file: {entry['file']!r} {e}; it must lie inside {base}") from None
        if file is None:
            raise JudgeCheckError(f"{where}.file: expected a path relative to the folder of {LABELS_FILE}")
        if not file.is_file():
            raise JudgeCheckError(f"{where}.file: {file} not found")
        try:
            code = read_solution(file)
        except FileRefused as e:
            raise JudgeCheckError(f"{where}.file: {e}") from None
        cases.append(
            LabelledCase(
                name=str(entry["file"]),
                kind="broken",
                domain=d,
                task_id=task.id,
                question=task.query,
                code=code,
                functionalities=kfs.items,
                labels={k.id: k.id not in missing for k in kfs.items},
            )
        )
    if not cases:
        raise JudgeCheckError(f"{path}: the labelled set has no cases")
    return cases


# ---- running ----------------------------------------------------------------------------------------


def run_judge_check(
    judge: DesignJudge,
    cases: Sequence[LabelledCase],
    *,
    k: int = 3,
    concurrency: int = 4,
    on_verdict: Callable[[LabelledCase, int, DesignVerdict], None] | None = None,
) -> JudgeCheckResult:
    """Judge every case ``k`` times and compute the statistics (module docstring)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    jobs = [(ci, r) for r in range(k) for ci in range(len(cases))]
    results: dict[tuple[int, int], DesignVerdict] = {}

    def one(job: tuple[int, int]) -> None:
        ci, r = job
        case = cases[ci]
        v = judge.judge(case.question, case.code, case.functionalities)
        results[job] = v
        if on_verdict is not None:
            on_verdict(case, r, v)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        list(pool.map(one, jobs))

    confusion = ConfusionCounts()
    pairs: list[tuple[bool, bool]] = []
    per_item: list[list[bool | None]] = []
    case_results: list[CaseResult] = []
    n_unscored = calls = pt = ct = 0
    cost: float | None = 0.0
    for ci, case in enumerate(cases):
        verdicts: dict[str, list[bool | None]] = {kf.id: [] for kf in case.functionalities}
        for r in range(k):
            v = results[(ci, r)]
            calls += v.attempts
            pt += v.prompt_tokens
            ct += v.completion_tokens
            cost = None if (cost is None or v.cost_usd is None) else cost + v.cost_usd
            by_id = {i.id: i.implemented for i in v.items}
            for kf_id in verdicts:
                verdicts[kf_id].append(by_id.get(kf_id))
        cr = CaseResult(
            name=case.name, kind=case.kind, task_id=case.task_id, labels=case.labels, verdicts=verdicts
        )
        for kf_id, vs in verdicts.items():
            per_item.append(vs)
            label = case.labels[kf_id]
            scored = [x for x in vs if x is not None]
            if len(set(scored)) > 1:
                cr.flipped.append(kf_id)
            cr.unscored += len(vs) - len(scored)
            for x in scored:
                cr.scored += 1
                cr.correct += int(x == label)
                confusion.add(label, x)
                pairs.append((label, x))
        n_unscored += cr.unscored
        case_results.append(cr)
    flipped, eligible, rate = flip_stats(per_item)
    n = confusion.n
    return JudgeCheckResult(
        judge=judge.id,
        prompt_version=judge.prompt_version,
        k=k,
        n_cases=len(cases),
        n_items=len(per_item),
        n_verdicts=len(per_item) * k,
        n_unscored=n_unscored,
        n_flip_items=eligible,
        n_flipped=flipped,
        flip_rate=rate,
        accuracy=(confusion.tp + confusion.tn) / n if n else None,
        kappa=cohen_kappa(pairs),
        confusion=confusion,
        cases=case_results,
        judge_calls=calls,
        prompt_tokens=pt,
        completion_tokens=ct,
        cost_usd=cost,
    )


__all__ = [
    "LABELS_FILE",
    "CaseResult",
    "ConfusionCounts",
    "JudgeCheckError",
    "JudgeCheckResult",
    "LabelledCase",
    "cohen_kappa",
    "flip_stats",
    "labels_path",
    "load_labelled_set",
    "run_judge_check",
]
