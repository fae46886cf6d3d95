"""The work behind each ``kramabench audit`` command, as library functions: open its inputs, run the audit,
write its files. :mod:`kramabench.cli.audit` only parses the options, calls these and prints.

An input the user must fix (an unknown workload, a workload without tasks) is an :class:`AuditInputError`
whose message is one line; the command prints it as ``error: ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kramabench.audit.corrector import Proposals, propose, write_proposals
from kramabench.audit.coverage import Coverage, DerivationCheck, coverage, verify_derivations
from kramabench.audit.failures import FailuresAudit
from kramabench.audit.reference import (
    ItemVerdict,
    ReferenceAudit,
    SolutionRun,
    append_progress,
    read_progress,
)
from kramabench.audit.report import write_report
from kramabench.files import SMALL_JSON_BYTES, read_bytes, write_file
from kramabench.workload import WorkloadError, list_domains, load_errata, load_workload
from kramabench.workload.errata import Erratum
from kramabench.workload.fetch import FetchError
from kramabench.workload.loader import default_errata
from kramabench.workload.models import TaskReview, Workload
from kramabench.workload.suites import resolve_workload_root

#: (domain, task id) -> the outcome of a task an earlier audit finished
Finished = dict[tuple[str, str], tuple[SolutionRun, list[ItemVerdict]]]


class AuditInputError(ValueError):
    """An input of an audit the user must fix; the message is one line."""


def default_out_dir(kind: str, name: str) -> Path:
    """``results/audit-<kind>-<name>-<UTC stamp>`` (the name made safe for a folder, its last 40 characters)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-40:]
    return Path("results") / f"audit-{kind}-{safe}-{stamp}"


# -- audit coverage ------------------------------------------------------------------------------------------


@dataclass
class CoverageCheck:
    """What ``kramabench audit coverage`` found: the coverage, and the derivations run again (``--verify``)."""

    root: Path
    #: the errata file counted (None: the workload has none)
    errata_path: Path | None
    coverage: Coverage
    #: --verify was asked
    verify: bool
    #: an errata file was read (the derivations are run only then)
    has_errata: bool
    derivations: list[DerivationCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every task accounted for and every derivation prints its value (``--check``)."""
        return self.coverage.complete and all(c.ok for c in self.derivations)

    def as_json(self) -> dict[str, Any]:
        data = self.coverage.model_dump(mode="json")
        if self.verify:
            data["derivations"] = [c.model_dump(mode="json") for c in self.derivations]
        return data


def check_coverage(
    workload: str,
    errata: Path | None,
    *,
    domains: list[str] | None,
    verify: bool,
    open_sandbox: Callable[[], Any],
) -> CoverageCheck:
    """The errata coverage of ``workload`` (``errata``: None for the workload's own file); with ``verify`` the
    evidence is run again in the sandbox ``open_sandbox()`` returns (closed after). Raises WorkloadError or
    FetchError when the workload cannot be read."""
    root = resolve_workload_root(workload)
    path = errata or default_errata(root)
    ef = load_errata(path) if path else None
    names = domains or list_domains(root)
    wls = [load_workload(root, d, errata=ef if ef is not None else False, validate=False) for d in names]
    check = CoverageCheck(root, path, coverage(wls, ef, root=str(root)), verify, ef is not None)
    if verify and ef is not None:
        sb = open_sandbox()
        try:
            evidence: list[TaskReview | Erratum] = [*ef.reviews, *(e for e in ef.errata if e.derivation)]
            check.derivations = verify_derivations(
                [r for r in evidence if r.domain in names], {w.domain: w.lake for w in wls}, sb
            )
        finally:
            sb.close()
    return check


# -- audit reference -----------------------------------------------------------------------------------------


def open_workloads(workload: str, domains: list[str] | None, *, errata: bool) -> tuple[Path, list[Workload]]:
    """The root of ``workload`` and its workloads (``domains``: all of them when None); one that holds no task
    at all is an :class:`AuditInputError`."""
    try:
        root = resolve_workload_root(workload)
        names = domains or list_domains(root)
        wls = [load_workload(root, d, errata=errata) for d in names]
    except (WorkloadError, FetchError) as exc:
        raise AuditInputError(str(exc)) from None
    if not any(w.tasks for w in wls):
        raise AuditInputError(f"{workload}: no tasks in {', '.join(names)}")
    return root, wls


def resume_progress(out_dir: Path, *, force: bool) -> tuple[Path, Finished]:
    """``out_dir/progress.jsonl`` and the tasks an earlier audit into ``out_dir`` finished (none with
    ``force``). The file is written again with its whole lines only: a torn tail would swallow the next line."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "progress.jsonl"
    if force:
        path.unlink(missing_ok=True)
    earlier = read_progress(path)
    if path.exists():
        path.unlink()
        for run, items in earlier.values():
            append_progress(path, run, items)
    return path, earlier


def count_tasks(
    workloads: Iterable[Workload], task_ids: list[str] | None, earlier: Finished
) -> tuple[int, int]:
    """(tasks to judge, of which an earlier audit finished) among ``workloads`` (``task_ids``: only these)."""
    wls = list(workloads)
    n = sum(len(w.tasks) if not task_ids else sum(t.id in task_ids for t in w.tasks) for w in wls)
    done = sum(
        1 for w in wls for t in w.tasks if (w.domain, t.id) in earlier and (not task_ids or t.id in task_ids)
    )
    return n, done


def write_reference_files(out_dir: Path, result: ReferenceAudit, workload: str) -> tuple[Path, Path]:
    """``reference.json``, ``verdicts.jsonl`` (one row per item: pandas reads it) and the report
    (``audit.md``, ``audit.html``: their paths returned)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_file(out_dir / "reference.json", result.model_dump_json(indent=1) + "\n", regular_only=True)
    write_file(
        out_dir / "verdicts.jsonl",
        "".join(i.model_dump_json() + "\n" for i in result.items),
        regular_only=True,
    )
    return write_report(out_dir, f"Audit of the reference solutions — {workload}", ref=result)


def read_reference_audit(folder: Path) -> ReferenceAudit:
    """The ``reference.json`` an ``audit reference`` wrote into ``folder`` (OSError, ValueError if none)."""
    return ReferenceAudit.model_validate_json(
        read_bytes(folder / "reference.json", limit=SMALL_JSON_BYTES, what="reference audit")
    )


# -- audit failures ------------------------------------------------------------------------------------------


@dataclass
class FailuresOutput:
    """The files an ``audit failures`` wrote beside its reports: the errata proposed and the report."""

    proposals: Proposals
    proposals_path: Path
    markdown: Path
    page: Path


def write_failures_files(
    run_dir: Path, out_dir: Path, result: FailuresAudit, *, reference: ReferenceAudit | None
) -> FailuresOutput:
    """The errata the reports propose (``proposals.toml``, not applied) and the report (``audit.md``,
    ``audit.html``; ``reference``: an ``audit reference`` of the same workload joins it)."""
    proposals = propose(result.reports, run_workloads(run_dir, {r.domain for r in result.reports}))
    prop_path = write_proposals(out_dir / "proposals.toml", proposals)
    md, page = write_report(
        out_dir, failures_title(run_dir), failures=result, proposals=proposals, ref=reference
    )
    return FailuresOutput(proposals, prop_path, md, page)


def failures_title(run_dir: Path) -> str:
    """ "Audit of the failures of SYSTEM with MODEL on WORKLOAD (domains) — run RUN_ID", from the run's manifest
    (the folder name when the manifest cannot be read)."""
    from kramabench.runfolder import read_manifest

    try:
        m = read_manifest(run_dir)
    except (OSError, ValueError):
        return f"Audit of the failures of run {run_dir.name}"
    wl = m.workload or {}
    name = str(wl.get("name") or wl.get("root") or "?")
    domains = ", ".join(wl.get("domains") or [])
    text = f"Audit of the failures of {m.system}" + (f" with {m.model}" if m.model else "")
    text += f" on {name}" + (f" ({domains})" if domains else "")
    if m.setting != "end-to-end":
        text += f", {m.setting} setting"
    return f"{text} — run {m.run_id}"


def run_workloads(run_dir: Path, domains: Iterable[str]) -> dict[str, Workload]:
    """The workloads of ``domains`` as the run in ``run_dir`` loaded them (its root, errata or not)."""
    from kramabench.runfolder import read_manifest

    manifest = read_manifest(run_dir)
    root = Path(manifest.workload.get("root", ""))
    errata = bool(manifest.workload.get("errata", True))
    return {d: load_workload(root, d, errata=errata) for d in sorted(domains)}


__all__ = [
    "AuditInputError",
    "CoverageCheck",
    "FailuresOutput",
    "Finished",
    "check_coverage",
    "count_tasks",
    "default_out_dir",
    "failures_title",
    "open_workloads",
    "read_reference_audit",
    "resume_progress",
    "run_workloads",
    "write_failures_files",
    "write_reference_files",
]
