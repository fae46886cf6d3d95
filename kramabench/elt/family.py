"""The ``elt`` workload family: an ELT suite as a workload a run can take (``--workload elt-mini``).

A suite (:mod:`kramabench.elt.suite`) is one domain (its name); each pipeline is a task
(:class:`EltTask`, answer type ``table``) whose reference solution is the folder ``solutions/<id>/``. The
workload's *lake* is what a system is shown of each pipeline before its sources start: a folder per
pipeline with ``data_model.yaml`` and ``schemas/`` (written once per content into the cache,
``<kramabench home>/elt-specs/``); the ``elt`` setting (:mod:`kramabench.elt.setting`) starts the sources
just before the task is solved and hands the system the full task folder (``config.yaml`` and the files).

A pipeline with an ``error`` finding (an invalid ``pipeline.yaml``, a missing evaluation query, a ragged
ground truth) cannot run: it stays a task marked ``left_out`` with its findings' messages, which the ``elt``
setting records as failed without asking the system (so it counts in SRDEL and SRDT, as the paper's fixed
denominators count every pipeline), and the run says so when it starts. When no pipeline can run, the suite
has no task (the run says why and runs nothing). A suite that holds specifications only (``content: specs``,
e.g. the official suite converted without its data) has no task to run, and says how to get the data.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

from pydantic import Field

from kramabench.elt.suite import FAMILY, Pipeline, Suite, is_suite, load_suite
from kramabench.elt.suite.loader import SUITE_FILE
from kramabench.elt.suite.models import DataModel
from kramabench.files import MB, SMALL_JSON_BYTES, publish_dir, read_bytes, read_text, sha256
from kramabench.workload.errors import WorkloadError
from kramabench.workload.models import ErratumApplied, Finding, Task, Workload

log = logging.getLogger(__name__)

#: the answer type of an ELT task: tables compared with the ground truth (kramabench.elt.compare.scorer)
ANSWER_TYPE = "table"


class EltTask(Task):
    """One pipeline as a task of a run."""

    pipeline: Pipeline = Field(description="the pipeline as loaded (errata applied)")
    schema_name: str = Field("main", description="the warehouse schema of the suite")
    suite_name: str = ""
    left_out: str | None = Field(
        None,
        description="why the pipeline cannot run (its error findings): it is recorded "
        "as failed without asking the system, and counts in SRDEL and SRDT",
    )


def instruction(pipeline: Pipeline, schema: str) -> str:
    """The task posed to a system: what to extract, load and build, and where (written for this project)."""
    text = (
        "Build an ELT pipeline. The task folder holds config.yaml (the sources, how to reach them and their "
        "credentials, and the warehouse), data_model.yaml (the data models to build, with their columns) and "
        "schemas/ (the columns of each source table).\n"
        "1. Extract every source table named in config.yaml and load it, under the same name and with all its "
        f"rows, into the DuckDB warehouse file named in config.yaml (warehouse.path, in your working "
        f"directory), schema {schema!r}.\n"
        "2. Build each data model of data_model.yaml from the loaded tables, as a table or view in the same "
        "schema, named as the model, with the columns listed there (dbt with its DuckDB adapter is "
        "installed).\n"
        "Leave the warehouse file in your working directory when you are done: it is collected and checked."
    )
    if pipeline.instruction:
        text += "\n" + pipeline.instruction.strip()
    return text


def _suite_name(root: Path) -> str:
    import yaml

    try:
        doc = yaml.safe_load(read_text(Path(root) / SUITE_FILE, limit=16 * MB, what="suite file"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        doc = None
    name = doc.get("name") if isinstance(doc, dict) else None
    return str(name or Path(root).name)


def _errata_arg(root: Path, errata: object) -> bool | list[str]:
    """``load_workload``'s errata argument as an ELT suite takes it: True, False, or errata set names (a
    path names the set ``errata/<name>.toml`` of the suite)."""
    if isinstance(errata, bool):
        return errata
    if isinstance(errata, str):
        return [errata]
    if isinstance(errata, list | tuple):
        return [str(x) for x in errata]
    if isinstance(errata, os.PathLike):
        p = Path(errata)
        if p.parent.resolve() == (Path(root) / "errata").resolve() and p.suffix == ".toml":
            return [p.stem]
        raise WorkloadError(
            f"{p}: an ELT suite's errata are sets in {Path(root) / 'errata'}/<name>.toml; name one of them",
            file=str(p),
        )
    raise WorkloadError(
        f"{root}: errata {errata!r} cannot be applied to an ELT suite (True, False or set names)"
    )


def _spec_home() -> Path:
    from kramabench.workload.fetch import kramabench_home

    return kramabench_home() / "elt-specs"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "suite"


def spec_folder(suite: Suite, pipelines: list[Pipeline], *, home: Path | None = None) -> Path:
    """The folder systems are shown before a task's sources start: ``<id>/data_model.yaml`` and
    ``<id>/schemas/`` of each pipeline, written once per content (its name holds the content's sha256)."""
    from kramabench.elt.sources.sourceset import write_spec

    base = Path(home) if home is not None else _spec_home()
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=base))
    try:
        for p in pipelines:
            write_spec(p, tmp / p.id)
        h = sha256()
        for f in sorted(x for x in tmp.rglob("*") if x.is_file()):
            h.update(
                f.relative_to(tmp).as_posix().encode() + b"\0" + read_bytes(f, limit=SMALL_JSON_BYTES) + b"\0"
            )
        final = base / f"{_safe(suite.name)}-{h.hexdigest()[:16]}"
        if final.is_dir():
            return final
        for d in [tmp, *(x for x in tmp.rglob("*") if x.is_dir())]:
            os.chmod(d, 0o755)
        publish_dir(tmp, final)  # or another process wrote the same content meanwhile
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _task(suite: Suite, p: Pipeline) -> EltTask:
    solution = f"solutions/{p.id}"
    return EltTask(
        id=p.id,
        query=instruction(p, suite.schema_name),
        answer={"tables": dict(p.tables), "models": [m.name for m in p.models]},
        answer_type=ANSWER_TYPE,
        solution=solution if (suite.root / solution).is_dir() else None,
        pipeline=p,
        schema_name=suite.schema_name,
        suite_name=suite.name,
    )


class EltFamily:
    """ELT suites (``suite.yaml`` with ``family: elt``)."""

    name = FAMILY
    default_setting = "elt"

    def detect(self, root: Path) -> bool:
        return is_suite(Path(root))

    def list_domains(self, root: Path) -> list[str]:
        if not is_suite(Path(root)):
            raise WorkloadError(f"{root}: not an ELT suite (no suite.yaml with family: elt)", file=str(root))
        return [_suite_name(Path(root))]

    def count_tasks(self, root: Path, domain: str) -> int | None:
        pdir = Path(root) / "pipelines"
        return sum(1 for p in pdir.iterdir() if p.is_dir()) if pdir.is_dir() else 0

    def fetched_suites(self) -> dict[str, Path]:
        """``elt-bench`` (the pinned ref) and ``elt-bench@<ref>`` (others) fetched on this machine."""
        from kramabench.elt.fetch import MANIFEST, NAME, load_pins

        base = _spec_home().parent / NAME
        if not base.is_dir():
            return {}
        pinned = load_pins().ref
        out: dict[str, Path] = {}
        for d in sorted(base.iterdir()):
            if (
                d.is_dir()
                and not d.name.startswith(".")
                and (d / MANIFEST).is_file()
                and (d / "suite.yaml").is_file()
            ):
                out[NAME if d.name == pinned else f"{NAME}@{d.name}"] = d
        return out

    def fetch_hints(self) -> dict[str, str]:
        return {
            "elt-bench": "fetch it with: kramabench fetch elt-bench (ELT-Bench's specifications, data and ground "
            "truth, verified and converted)"
        }

    def load(self, root: Path, domain: str, *, errata: object = True, validate: bool = True) -> Workload:
        root = Path(root)
        suite = load_suite(root, errata=_errata_arg(root, errata), validate=validate)
        if domain != suite.name:
            raise WorkloadError(
                f"{root / SUITE_FILE}: no domain {domain!r}: the suite is one domain, {suite.name!r}",
                file=str(root / SUITE_FILE),
            )
        findings = list(suite.findings)
        failing = {f.task_id for f in findings if f.severity == "error" and f.task_id}
        runnable = [p for p in suite.pipelines if p.id not in failing]
        left_out = _left_out(root, suite, findings, failing) if runnable else []
        if suite.content != "complete":
            findings.append(
                Finding(
                    severity="error",
                    code="suite_specs_only",
                    domain=suite.name,
                    file=str(root / SUITE_FILE),
                    field="content",
                    message=f"{suite.name} holds the specifications only (no source data, no ground "
                    "truth): no pipeline can run; the official suite with its data comes from `kramabench fetch elt-bench`",
                )
            )
            runnable = []
        errata_applied = [
            ErratumApplied(
                task_id=e.pipeline,
                subtask_id=e.model,
                field=f"{e.action}:{e.target}" if e.target else e.action,
                old=e.old,
                new=e.new,
                reason=f"[{e.errata}] {e.reason}",
            )
            for e in suite.errata
        ]
        try:
            lake = spec_folder(suite, runnable)
        except OSError as e:
            raise WorkloadError(
                f"{root}: cannot write the pipelines' specifications into the cache: {e}"
            ) from None
        tasks = [_task(suite, p) for p in runnable] + [
            _task(suite, p).model_copy(update={"left_out": why, "solution": None}) for p, why in left_out
        ]
        return Workload(
            domain=suite.name,
            root=root,
            source=root / SUITE_FILE,
            lake=lake,
            tasks=sorted(tasks, key=lambda t: t.id),
            findings=findings,
            errata=errata_applied,
            content_hash=suite.content_hash,
        )


def _left_out(
    root: Path, suite: Suite, findings: list[Finding], failing: set[str]
) -> list[tuple[Pipeline, str]]:
    """The pipelines an error finding keeps from running, each with the findings' messages: as loaded, or (a
    ``pipeline.yaml`` that could not be read) a stand-in whose data models are the evaluation queries and
    ground-truth tables of its folder (the original counts a pipeline's models by its evaluation queries)."""
    loaded = {p.id: p for p in suite.pipelines}
    out: list[tuple[Pipeline, str]] = []
    for pid in sorted(failing):
        why = "; ".join(f.message for f in findings if f.task_id == pid and f.severity == "error")
        p = loaded.get(pid)
        if p is None:
            folder = Path(root) / "pipelines" / pid
            if not folder.is_dir():
                continue
            names = {
                f.stem.lower(): f.stem
                for sub, ext in (("evaluation", ".sql"), ("ground_truth", ".csv"))
                for f in sorted((folder / sub).glob(f"*{ext}"))
                if not f.name.endswith(".snowflake.sql")
            }
            p = Pipeline(id=pid, folder=folder, models=[DataModel(name=n) for n in names.values()])
        out.append((p, why))
    return out


#: the family's one instance (its entry point)
FAMILY_ENTRY = EltFamily()


__all__ = ["ANSWER_TYPE", "FAMILY_ENTRY", "EltFamily", "EltTask", "instruction", "spec_folder"]
