"""Setting a run up from its configuration: workloads, system, model, sandbox, judge, store, manifest.

Everything that can fail for a reason the user must fix (unknown workload or domain, unknown system,
missing API key, no sandbox backend, an existing run folder) fails here, *before any task starts*, with
a :class:`RunSetupError` whose message is one clear line.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kramabench import plugins
from kramabench.contracts.model import ModelError
from kramabench.contracts.records import Manifest, Record
from kramabench.contracts.run import RunConfig, RunOptions
from kramabench.contracts.sandbox import SandboxUnavailable
from kramabench.contracts.system import Configured
from kramabench.files import FileRefused, check_regular, check_writable_dir, sha256_file
from kramabench.models import ModelId, get_model
from kramabench.run.lakeview import list_lake_files
from kramabench.run.paths import results_dir
from kramabench.run.plan import ResumeState, RunPlan
from kramabench.run.progress import Progress
from kramabench.run.provenance import (
    git_revision,
    lake_fingerprint,
    package_versions,
    solutions_fingerprint,
    workload_version,
)
from kramabench.run.runner import Runner, RunResult
from kramabench.run.settings import (
    Described,
    RemoteStaged,
    Setting,
    Staged,
    configure_setting,
    get_setting,
    setting_family,
    setting_names,
)
from kramabench.run.store import RunLocked, RunStore, RunUnwritable
from kramabench.run.throttle import FatalGuard, LimitedModel
from kramabench.runfolder import MANIFEST, iter_records
from kramabench.sandbox import open_sandbox
from kramabench.systems.context import SystemContext
from kramabench.systems.registry import SystemNotFound, get_system_spec
from kramabench.systems.spec import SystemSpec
from kramabench.workload import (
    Workload,
    WorkloadError,
    benchmark_notes,
    list_domains,
    load_workload,
    resolve_workload_root,
)
from kramabench.workload.families import KRAMABENCH_FAMILY, WorkloadFamily, family_of
from kramabench.workload.gold import changes_for, gold_of_run, task_classes
from kramabench.workload.loader import default_errata
from kramabench.workload.selection import keep_tasks, select_task_ids

log = logging.getLogger(__name__)


class RunSetupError(RuntimeError):
    """A run cannot start; the message says why and what to do."""


class ModelUnusable(RunSetupError):
    """The preflight of a model or judge failed: key refused, model unknown, endpoint unreachable."""


def _workload_root(name: str) -> Path:
    """:func:`kramabench.workload.resolve_workload_root`, its error as a :class:`RunSetupError`."""
    try:
        return Path(resolve_workload_root(name))
    except WorkloadError as e:
        raise RunSetupError(str(e).strip("'\"")) from e


def default_domains(available: list[str]) -> list[str]:
    """All domains, except ``<d>-tiny`` when ``<d>`` is there too (the official quick-test subsets, whose
    tasks repeat those of ``<d>``); name such a domain with ``--domain`` to run it."""
    return [d for d in available if not (d.endswith("-tiny") and d[: -len("-tiny")] in available)]


def errata_arg(config: RunConfig) -> bool | Path:
    """What the loader applies for a run: the named errata file, the default errata, or none."""
    if config.errata_file is not None:
        if not config.errata:
            raise RunSetupError("--no-errata and --errata FILE exclude each other")
        return Path(config.errata_file)
    return config.errata


def load_gold_changes(workloads: list[Workload], errata: bool | Path) -> dict[str, dict[Any, Any]]:
    """Per domain, the items whose gold differs between the official and the verified view, with their gold
    in the view the run did not load (kramabench.workload.gold): those answers are scored against both."""
    out: dict[str, dict[Any, Any]] = {}
    for w in workloads:
        try:
            out[w.domain] = changes_for(w, errata)
        except WorkloadError as e:
            raise RunSetupError(str(e)) from e
    return out


def _errata_file_info(root: Path, errata: bool | Path) -> dict[str, Any] | None:
    """The errata file a run applies (path and sha256), None when it applies none."""

    if errata is False:
        return None
    path = Path(errata) if not isinstance(errata, bool) else default_errata(root)
    if path is None:
        return None
    try:
        digest = sha256_file(path)
    except OSError:
        digest = None
    return {"path": str(path), "sha256": digest, "default": isinstance(errata, bool)}


def load_workloads(root: Path, domains: list[str], errata: bool | Path) -> list[Workload]:
    try:
        available = list_domains(root)
    except WorkloadError as e:
        raise RunSetupError(str(e)) from e
    if not domains:
        domains = default_domains(available)
    unknown = [d for d in domains if d not in available]
    if unknown:
        raise RunSetupError(
            f"{root}: unknown domain(s) {', '.join(unknown)}; available: {', '.join(available) or 'none'}"
        )
    out = []
    for d in domains:
        try:
            wl = load_workload(root, d, errata=errata)
        except WorkloadError as e:
            raise RunSetupError(str(e)) from e
        except (OSError, ValueError) as e:
            raise RunSetupError(f"{root}/workload/{d}.json: {e}") from e
        if not Path(wl.lake).is_dir():
            raise RunSetupError(f"{d}: data lake {wl.lake} is missing")
        if not os.access(wl.lake, os.R_OK | os.X_OK):  # not "a lake that holds no files"
            raise RunSetupError(
                f"{d}: data lake {wl.lake} cannot be listed (permission denied); give it read "
                "permission (chmod a+rx)"
            )
        out.append(wl)
    if not any(w.tasks for w in out):  # every task was dropped by an error finding: say which, do not run 0
        raise RunSetupError(_no_task_message(root, out))
    return out


def _check_family(setting: Setting, family: WorkloadFamily[Workload], workload: str) -> None:
    """A setting runs the workloads of one family: ``--setting elt`` on ``mini`` (or ``end-to-end`` on an ELT
    suite) is refused, naming the settings that fit."""
    have = setting_family(setting)
    if have == family.name:
        return
    fitting = []
    for name in setting_names():
        try:
            if setting_family(get_setting(name)) == family.name:
                fitting.append(name)
        except Exception:  # noqa: BLE001 - a broken plug-in is not a hint
            continue
    raise RunSetupError(
        f"setting {setting.name!r} runs workloads of the {have!r} family, and {workload} is of the {family.name!r} "
        f"family (its settings: {', '.join(fitting) or 'none installed'}; default {family.default_setting})"
    )


def _check_system_options(spec: SystemSpec, given: dict[str, Any]) -> None:
    """An unknown ``-o key=value`` is refused before anything is made, naming the system's valid options."""
    import inspect

    if not given:
        return
    if spec.options is not None:
        if spec.options.model_config.get("extra") != "forbid":
            return
    elif spec.options_from is not None:
        try:
            params = inspect.signature(spec.options_from).parameters.values()
        except (TypeError, ValueError):
            return
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return  # takes any keyword: nothing to check here
    infos = spec.option_infos()
    valid = {o.name for o in infos}
    unknown = [k for k in given if k not in valid and not _nested_option(spec.options, k)]
    if not unknown:
        return
    import difflib

    hints = [
        f"{k!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(k, valid, n=1)) else repr(k)
        for k in unknown
    ]
    listed = ", ".join(f"{o.name} ({o.type}, default {o.default})" for o in infos) or "none"
    raise RunSetupError(f"system {spec.name!r} has no option {', '.join(hints)}; its options: {listed}")


def _nested_option(model: type[BaseModel] | None, key: str) -> bool:
    """``key`` names a field of an option that is itself an options model (``limits.memory_mb``,
    ``model_options.temperature``), at any depth."""
    import typing

    parts = key.replace("-", "_").split(".")
    if len(parts) < 2 or model is None:
        return False
    cls: Any = model
    for part in parts:
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or part not in cls.model_fields:
            return False
        ann = cls.model_fields[part].annotation
        kinds = [
            a for a in (typing.get_args(ann) or (ann,)) if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        cls = kinds[0] if kinds else ann
    return True


def _no_task_message(root: Path, workloads: list[Workload]) -> str:
    """Why no task of the chosen domains can run: the error findings that dropped them, or an empty file."""
    errors = [f for w in workloads for f in w.findings if f.severity == "error"]
    names = ", ".join(w.domain for w in workloads)
    if not errors:
        return f"{root}: the workload of {names} holds no task; nothing to run"
    shown = "; ".join(
        f"{f.domain}/{f.task_id or '-'}{'.' + f.field if f.field else ''} [{f.code}]: {f.message}"
        for f in errors[:5]
    )
    more = f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
    return (
        f"{root}: no task of {names} can run, every one was dropped by an error finding ({len(errors)}): {shown}{more} "
        f"(all of them: kramabench workloads validate {root})"
    )


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-")[:40] or "x"


def new_run_id(system: str, model: str | None) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    parts = [stamp, _slug(system.split(":")[-1])]
    if model:
        try:
            name = ModelId.parse(model).short_name  # the model name, not its provider or URL
        except ModelError:
            name = model
        parts.append(_slug(name))
    return "-".join(parts + [secrets.token_hex(2)])


@dataclass
class Prepared:
    """A checked :class:`RunPlan` and the Runner that executes it."""

    plan: RunPlan
    runner: Runner

    @property
    def store(self) -> RunStore:
        return self.plan.store

    @property
    def manifest(self) -> Manifest:
        return self.plan.manifest

    @property
    def config(self) -> RunConfig:
        return self.plan.config

    def run(self) -> RunResult:
        try:
            return self.runner.run()
        finally:
            for c in self.plan.closers:
                try:
                    c()
                except Exception as e:  # noqa: BLE001
                    log.warning("cleanup failed: %s", e)


def _make_model(
    model_id: str,
    limit: int,
    guard: FatalGuard | None = None,
    *,
    role: str = "model",
    timeout_s: float | None = None,
    cache: bool = True,
) -> Any:
    """The model of a run, checked by one cheap preflight request (key, endpoint, model name); ``timeout_s``:
    the deadline of each attempt of its calls (``--model-timeout``; None: 120 s); ``cache=False``: the
    response cache is neither read nor written (``--no-cache``)."""
    try:
        model = get_model(model_id, timeout_s=timeout_s, cache=None if cache else False)
    except ModelError as e:
        raise RunSetupError(
            f"{role} {model_id}: {e.message}" if e.kind != "missing_key" else e.message
        ) from e
    except (ValueError, KeyError) as e:
        raise RunSetupError(f"{role} {model_id}: {e}") from e
    try:
        model.preflight()
    except ModelError as e:
        raise ModelUnusable(f"{role} {e.message} [{e.kind}]; nothing was run") from e
    return LimitedModel(model, limit, guard)


def _make_sandbox(backend: str, limit: int) -> Any:
    try:
        return open_sandbox(backend, concurrency=limit)
    except SandboxUnavailable as e:
        raise RunSetupError(str(e)) from e


def _make_judge(
    judge_id: str,
    limit: int,
    setting: Setting,
    guard: FatalGuard | None = None,
    timeout_s: float | None = None,
    cache: bool = True,
) -> Any:
    """The judge of a run: the setting says which (the design judge for pipeline-design, else the paraphrase
    judge), on a model made and checked (preflight) like the system's."""
    return setting.make_judge(
        _make_model(judge_id, limit, guard, role="judge", timeout_s=timeout_s, cache=cache)
    )


def open_resume(results: Path, run_id: str | None) -> ResumeState:
    """The run to continue: its folder and its manifest (read here, once); it must not be running elsewhere."""
    if not run_id:
        raise RunSetupError("--resume needs --run-id (the folder name under the results folder)")
    results = results_dir(results)
    store = RunStore(results / run_id)
    if not store.dir.is_dir():
        what = "is not a folder" if store.dir.exists() else "does not exist"
        raise RunSetupError(f"cannot resume: {store.dir} {what} (no run {run_id!r} under {results})")
    if not store.exists():
        raise RunSetupError(f"cannot resume: {store.dir} has no {MANIFEST}")
    try:
        store.check_files()  # a link or a device planted in the run folder: refused before anything is read
    except RunUnwritable as e:
        raise RunSetupError(f"cannot resume: {e}") from e
    try:
        manifest = store.read_manifest()
    except (ValueError, FileNotFoundError) as e:
        raise RunSetupError(str(e)) from e
    try:  # a run still in progress elsewhere cannot be resumed (it would write the same keys twice)
        store.lock()
        check_writable_dir(store.dir, what="run folder")
        if os.path.lexists(store.records_path):
            check_regular(store.records_path, what="records file")
    except RunLocked as e:
        raise RunSetupError(f"cannot resume: {e}") from e
    except (RunUnwritable, FileRefused) as e:
        raise RunSetupError(f"cannot resume: {e}") from e
    finally:
        store.unlock()
    _check_records_belong(store, manifest)
    return ResumeState(store, manifest)


def _check_records_belong(store: RunStore, manifest: Manifest) -> None:
    """Refuse to resume a run whose ``records.jsonl`` holds records of another run (a manifest copied over
    another run's records): each record carries its run id, system, model, setting and domain."""
    domains = set(manifest.workload.get("domains") or [])
    try:
        for n, rec, _torn in iter_records(store.records_path):
            if not isinstance(rec, Record):
                continue
            theirs: dict[str, str | None] = {
                "run id": rec.run_id,
                "system": rec.system,
                "setting": rec.setting,
            }
            ours: dict[str, str | None] = {
                "run id": manifest.run_id,
                "system": manifest.system,
                "setting": manifest.setting,
            }
            if manifest.model is not None or rec.model is not None:
                theirs["model"], ours["model"] = rec.model, manifest.model
            diff = [k for k in theirs if theirs[k] != ours[k]]
            if domains and rec.domain not in domains:
                diff.append("domain")
                theirs["domain"], ours["domain"] = rec.domain, ", ".join(sorted(domains))
            if diff:
                k = diff[0]
                raise RunSetupError(
                    f"cannot resume {manifest.run_id}: {store.records_path} line {n} is a record of another run "
                    f"({k} {theirs[k]!r}, the manifest says {ours[k]!r}); a run folder holds one run's manifest "
                    "and records: start a new run, or restore the folder"
                )
    except FileRefused as e:
        raise RunSetupError(f"cannot resume: {e}") from e


def prepare(
    config: RunConfig,
    *,
    resume: ResumeState | None = None,
    progress: Progress | None = None,
    command: list[str] | None = None,
) -> Prepared:
    """Resolve and check everything once into a :class:`RunPlan` and the Runner that executes it; nothing
    runs and no run folder is created on failure. ``resume``: the run to continue, if the caller already
    opened it (:func:`open_resume`; else it is opened here when ``config.resume``)."""
    opts = config.options
    results = results_dir(config.results)  # absolute, once: every path of the run derives from it

    # resume: the run folder and its manifest come first; they fill what the command line left out
    store: RunStore | None = None
    old: Manifest | None = None
    if config.resume:
        resume = resume or open_resume(results, config.run_id)
        store, old = resume.store, resume.manifest
        _check_resume(config, old)
    else:
        resume = None

    _check_executor(opts)
    if opts.retry_errors and not config.resume:
        raise RunSetupError(
            "--retry-errors needs --resume --run-id RUN: it runs the error outcomes of that run again"
        )

    root = _workload_root(config.workload)
    family = family_of(root)
    if opts.setting is None:  # the workload's own setting (recorded resolved: a resume runs the same one)
        opts.setting = family.default_setting
    try:
        setting = get_setting(opts.setting)
    except KeyError as e:
        raise RunSetupError(str(e).strip("'\"")) from e
    except (TypeError, plugins.PluginError) as e:
        raise RunSetupError(f"setting {opts.setting!r} cannot be used: {e}") from e
    try:
        setting = configure_setting(setting, config.setting_options)
    except ValueError as e:
        raise RunSetupError(str(e)) from e
    _check_family(setting, family, config.workload)
    if isinstance(setting, Staged) and not isinstance(setting, RemoteStaged) and opts.executor != "local":
        raise RunSetupError(
            f"setting {setting.name!r} starts each task's services on this machine just before the task "
            "is solved: it runs with --executor local"
        )

    spec_name = config.system
    try:
        spec = get_system_spec(spec_name)
    except SystemNotFound as e:
        raise RunSetupError(str(e)) from e
    _check_system_options(spec, config.system_options)

    workloads = load_workloads(root, config.domains, errata_arg(config))
    selection = _selection(config, workloads, old)

    if spec.needs_model and not config.model:
        raise RunSetupError(f"system {spec_name!r} needs a model: pass --model (e.g. openai/gpt-4o-mini)")

    run_id: str | None = None
    if old is None:  # a new run: its folder must be free (checked before any model or sandbox is made)
        run_id = config.run_id or new_run_id(config.system, config.model)
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", run_id):
            raise RunSetupError(f"--run-id {run_id!r}: use letters, digits, '.', '_' and '-' only")
        store = RunStore(results / run_id)
        try:
            check_writable_dir(results, what="results folder")
        except FileRefused as e:
            raise RunSetupError(f"{e} (--results or KRAMABENCH_RESULTS)") from e
        if os.path.lexists(store.dir) and (
            not store.dir.is_dir() or store.exists() or any(store.dir.iterdir())
        ):
            raise RunSetupError(
                f"{store.dir} already exists: add --resume to continue it, or choose another --run-id"
            )

    closers: list[Any] = []
    try:
        return _prepare_rest(
            config,
            spec,
            setting,
            root,
            workloads,
            selection,
            store,
            resume,
            run_id,
            closers,
            progress,
            command,
        )
    except BaseException:
        for c in closers:  # e.g. the sandbox made before a later check failed
            try:
                c()
            except Exception:  # noqa: BLE001
                pass
        raise


def _prepare_rest(
    config: RunConfig,
    spec: SystemSpec,
    setting: Setting,
    root: Path,
    workloads: list[Workload],
    selection: Selection,
    store: RunStore | None,
    resume: ResumeState | None,
    run_id: str | None,
    closers: list[Any],
    progress: Progress | None,
    command: list[str] | None,
) -> Prepared:
    opts = config.options
    old = resume.manifest if resume is not None else None
    guard = FatalGuard()
    limit = opts.model_concurrency or opts.concurrency
    model = (
        _make_model(config.model, limit, guard, timeout_s=opts.model_timeout_s, cache=opts.response_cache)
        if config.model
        else None
    )
    judge_id = config.judge or setting.default_judge
    judge = (
        _make_judge(judge_id, limit, setting, guard, opts.model_timeout_s, opts.response_cache)
        if judge_id
        else None
    )
    sandbox = None
    if spec.needs_sandbox:
        sandbox = _make_sandbox(config.sandbox, opts.sandbox_concurrency or opts.concurrency)
        closers.append(sandbox.close)

    # workload provenance (and a check that a resumed run sees the same workload)
    family = family_of(root)
    wl_info: dict[str, Any] = {
        "name": config.workload,
        "root": str(root),
        "family": family.name,
        "domains": [w.domain for w in workloads],
        "errata": config.errata,
        "version": workload_version(root),
        "content": {},
    }
    errata: list[dict[str, Any]] = []
    # the official and the verified gold of KramaBench's layout (errata files); another family's workloads carry
    # their corrections in their own terms (an ELT suite's errata sets, applied per comparator)
    two_golds = family.name == KRAMABENCH_FAMILY
    gold_changes = load_gold_changes(workloads, errata_arg(config)) if two_golds else {}
    wl_info["gold"] = gold_of_run(errata_arg(config))
    wl_info["errata_file"] = _errata_file_info(root, errata_arg(config)) if two_golds else None
    wl_info["gold_changes"] = {d: len(c) for d, c in gold_changes.items()}
    try:
        gold_classes = {w.domain: task_classes(w, errata_arg(config)) for w in workloads} if two_golds else {}
    except WorkloadError as e:
        raise RunSetupError(str(e)) from e
    wl_info["gold_classes"] = {d: dict(Counter(c.values())) for d, c in gold_classes.items() if c}
    for w in workloads:
        files = list_lake_files(Path(w.lake), readable_only=False)  # the fingerprint names unreadable ones
        wl_info["content"][w.domain] = {
            "json_sha256": w.content_hash,
            "tasks": len(w.tasks),
            "subtasks": sum(len(t.subtasks) for t in w.tasks),
            "findings_error": sum(1 for f in w.findings if f.severity == "error"),
            "lake": lake_fingerprint(Path(w.lake), files),
            "solutions_sha256": solutions_fingerprint([Runner.solution_of(w, t) for t in w.tasks]),
        }
        errata += [{"domain": w.domain, **e.model_dump(mode="json")} for e in w.errata]

    if (
        spec.name == "reference"
        and spec.source == "built-in"
        and not any(c["solutions_sha256"] for c in wl_info["content"].values())
    ):
        raise RunSetupError(
            f"the reference system runs each task's reference solution, and {root} has none "
            f"(expected solutions/<domain>/<task-id>.py or solutions/<task-id>.py); the official workloads "
            "come with them through `kramabench fetch kramabench`, then `--workload kramabench`"
        )

    if old is not None:
        for d, c in wl_info["content"].items():
            was = old.workload.get("content", {}).get(d)
            if was and was.get("json_sha256") != c["json_sha256"]:
                raise RunSetupError(
                    f"cannot resume {config.run_id}: workload {d} changed since the run started "
                    f"(sha256 {str(was.get('json_sha256'))[:12]} -> {str(c['json_sha256'])[:12]}); start a new run"
                )
            was_lake = (was or {}).get("lake", {}).get("listing_sha256")
            if was_lake and was_lake != c["lake"]["listing_sha256"]:
                raise RunSetupError(
                    f"cannot resume {config.run_id}: the data lake of {d} changed since the run started "
                    f"(files or sizes differ: {was['lake'].get('files')} -> {c['lake']['files']} files); start a new run"
                )
            was_content = (was or {}).get("lake", {}).get("content_sha256")
            if was_content and was_content != c["lake"]["content_sha256"]:
                raise RunSetupError(
                    f"cannot resume {config.run_id}: the content of a file of the data lake of {d} changed since the "
                    "run started; start a new run"
                )

    sandbox_info: dict[str, Any] = {"backend": config.sandbox if sandbox is not None else None}
    if sandbox is not None:
        try:
            sandbox_info.update(sandbox.info())
        except Exception as e:  # noqa: BLE001
            sandbox_info["info_error"] = str(e)

    if old is None:
        assert store is not None and run_id is not None and opts.setting is not None  # resolved by prepare()
        manifest = Manifest(
            run_id=run_id,
            created_at=datetime.now(timezone.utc),
            command=list(command if command is not None else sys.argv),
            setting=opts.setting,
            workload=wl_info,
            errata_applied=errata,
            system=config.system,
            system_options=config.system_options,
            model=_model_display(config.model),
            judge=judge_id,
            sandbox=sandbox_info,
            packages=package_versions(),
            git_revision=git_revision(),
            seed=opts.seed,
            concurrency=opts.concurrency,
            options={
                "config": config.model_dump(mode="json", exclude={"resume", "run_id"}),
                "call_key_salt": _call_key_salt(config.model),
                "selections": selection.selections,
            },
        )
    else:
        manifest = old
        manifest.options["selections"] = selection.selections
        manifest.resumed_at.append(datetime.now(timezone.utc))
        rev = git_revision()
        if rev != manifest.git_revision:
            log.warning(
                "resuming %s with code at %s (the run started at %s)",
                manifest.run_id,
                rev,
                manifest.git_revision,
            )
            manifest.options.setdefault("resumed_git_revisions", []).append(rev)
        manifest.sandbox = sandbox_info if sandbox is not None else manifest.sandbox
        manifest.packages = package_versions()

    if selection.task_ids is not None:
        workloads = keep_tasks(workloads, selection.task_ids)
    if isinstance(setting, Described):
        try:  # of the tasks the run selected (a run of one pipeline: that pipeline's sources)
            manifest.options["setting_info"] = setting.describe(workloads)
        except Exception as e:  # noqa: BLE001 - provenance must not stop a run
            log.warning("the setting's description is not recorded: %s", e)
    assert store is not None
    ctx = SystemContext(
        options=dict(config.system_options),
        model=model,
        model_id=config.model,
        sandbox=sandbox,
        seed=opts.seed,
    )
    notes = _benchmark_notes(workloads, family.name == KRAMABENCH_FAMILY, sandbox is not None)
    manifest.workload["benchmark_notes"] = {
        d: {t: [n.code for n in ns] for t, ns in by.items()} for d, by in notes.items() if by
    }
    plan = RunPlan(
        config=config,
        root=root,
        workloads=workloads,
        spec=spec,
        system_context=ctx,
        setting=setting,
        judge=judge,
        store=store,
        manifest=manifest,
        resume=resume,
        closers=closers,
        guard=guard,
        gold=gold_of_run(errata_arg(config)),
        gold_changes=gold_changes,
        gold_classes=gold_classes,
        benchmark_notes=notes,
    )
    runner = Runner(plan, progress=progress)
    try:
        runner.build_system()
    except Exception as e:  # noqa: BLE001 - any failure to build the system stops the run before it starts
        raise RunSetupError(f"system {config.system!r} could not be built: {e}") from e
    # the options the system runs with, defaults included (system_options holds only what was given)
    if isinstance(runner.system, Configured):
        try:
            manifest.options["system_options_effective"] = runner.system.options.model_dump(mode="json")
        except Exception as e:  # noqa: BLE001 - provenance must not stop a run
            log.warning("system options not recorded: %s", e)
    _join_cluster(opts)
    return Prepared(plan=plan, runner=runner)


def _benchmark_notes(
    workloads: list[Workload], kramabench_family: bool, sandboxed: bool
) -> dict[str, dict[str, Any]]:
    """Per domain, the tasks of the run the benchmark cannot support (kramabench.workload.notes): data sources
    missing from the lake, documented absent or outside it, a review that classes the task unreproducible
    and, for a system that runs code in the sandbox, an official solution importing a module the sandbox
    lacks. Another family's workloads state their limits in their own terms: none here."""
    if not kramabench_family:
        return {}
    modules: set[str] | None = None
    if sandboxed:
        try:
            from kramabench.sandbox.environment import import_names

            modules = {m for mods in import_names().values() for m in mods}
        except Exception as e:  # noqa: BLE001 - the lock's modules are a note's evidence, never needed to run
            log.warning("the sandbox's modules are not known (%s): solutions' imports are not checked", e)
    out: dict[str, dict[str, Any]] = {}
    for w in workloads:
        try:
            out[w.domain] = benchmark_notes(w, modules=modules)
        except Exception as e:  # noqa: BLE001 - a note must not stop a run
            log.warning("%s: the tasks the benchmark cannot support are not known: %s", w.domain, e)
    return out


def _join_cluster(opts: RunOptions) -> None:
    """``--executor ray``: the cluster is joined (or a local Ray started) now, so that an address where no Ray
    answers is one line within seconds, before the manifest says ``running``."""
    if opts.executor != "ray":
        return
    from kramabench.run.executor import ExecutorUnavailable
    from kramabench.run.executor.ray_executor import connect

    try:
        connect(opts.ray_address)
    except ExecutorUnavailable as e:
        raise RunSetupError(str(e)) from None


@dataclass
class Selection:
    """The tasks a run runs: ``task_ids`` per domain (None: every task), from the ``selections`` recorded in
    the manifest (``options.selections``: each ``--task``/``--exclude-task`` choice the run was started or
    resumed with, with the ids it chose)."""

    task_ids: dict[str, list[str]] | None
    selections: list[dict[str, Any]]


def _selection(config: RunConfig, workloads: list[Workload], old: Manifest | None) -> Selection:
    """The tasks of ``--task``/``--exclude-task``; on resume, a new choice adds its tasks to those of the
    choices before it (a plain ``--resume`` runs what every recorded choice chose)."""
    try:
        ids = select_task_ids(workloads, config.tasks, config.exclude_tasks)
    except WorkloadError as e:
        raise RunSetupError(str(e)) from e
    choice = {"tasks": list(config.tasks), "exclude_tasks": list(config.exclude_tasks)}
    entry: dict[str, Any] = {**choice, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if config.tasks or config.exclude_tasks:
        entry["task_ids"] = ids
    if old is None:
        selections = [entry]
    else:  # a run from before selections were recorded ran every task
        selections = list(old.options.get("selections") or [{"tasks": [], "exclude_tasks": []}])
        if choice not in [{k: s.get(k, []) for k in choice} for s in selections]:
            selections.append(entry)
    if any("task_ids" not in s for s in selections):
        return Selection(None, selections)
    union: dict[str, set[str]] = {}
    for s in selections:
        for d, tids in s["task_ids"].items():
            union.setdefault(d, set()).update(tids)
    chosen = {w.domain: [t.id for t in w.tasks if t.id in union.get(w.domain, ())] for w in workloads}
    return Selection(chosen, selections)


def _model_display(model_id: str | None) -> str | None:
    """The model as the run shows it (kramabench.models.ids.ModelId.display: ``replay/<run folder name>`` for
    a replay, never ``replay//<absolute path>``); the id as given stays in the options (``--resume``)."""
    if not model_id:
        return model_id
    try:
        return ModelId.parse(model_id).display
    except Exception:  # noqa: BLE001 - a bad id was refused earlier; shown as given
        return model_id


def _call_key_salt(model_id: str | None) -> str:
    """A fresh salt for the keys of recorded model calls; a run replaying ``replay/<dir>`` reuses the salt
    of that run so that its tasks find their recorded calls."""
    replay_dir = ModelId.parse(model_id).replay_dir if model_id else None
    if replay_dir is not None:
        src = RunStore(replay_dir)
        try:
            salt = src.read_manifest().options.get("call_key_salt")
        except (FileNotFoundError, ValueError):
            salt = None
        if salt:
            return str(salt)
        log.warning("%s: no call-key salt in its manifest; recorded calls will not match", src.dir)
    return secrets.token_hex(16)


def _check_executor(opts: RunOptions) -> None:
    """``--executor ray`` needs Ray installed; ``--ray-address`` needs ``--executor ray``."""
    if opts.ray_address and opts.executor != "ray":
        raise RunSetupError("--ray-address needs --executor ray")
    if opts.executor == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise RunSetupError(
                "--executor ray needs Ray on this machine and on every node: pip install 'kramabench[ray]'"
            )
        if opts.ray_address:  # nothing listens there: one line now, not minutes of Ray's retries later
            from kramabench.run.executor import ExecutorUnavailable
            from kramabench.run.executor.ray_executor import probe

            try:
                probe(opts.ray_address)
            except ExecutorUnavailable as e:
                raise RunSetupError(str(e)) from None


def _check_resume(config: RunConfig, old: Manifest) -> None:
    was = RunConfig.model_validate({**old.options.get("config", {}), "run_id": old.run_id, "resume": True})
    fields = {
        "workload",
        "system",
        "model",
        "sandbox",
        "errata",
        "errata_file",
        "domains",
        "system_options",
        "judge",
        "setting_options",
    }
    now, then = config.model_dump(include=fields), was.model_dump(include=fields)
    for name in sorted(fields):
        a, b = now[name], then[name]
        if a != b:
            raise RunSetupError(
                f"cannot resume {old.run_id}: it was started with {name}={b!r}, now {name}={a!r}; "
                "resume with the same options or start a new run"
            )
    if config.options.setting is None:  # not given: the run's own (recorded resolved when it started)
        config.options.setting = was.options.setting or old.setting
    if config.options.setting != (was.options.setting or old.setting):
        raise RunSetupError(f"cannot resume {old.run_id}: it is a {was.options.setting or old.setting} run")
    if config.options.normalise_percent != was.options.normalise_percent:
        flag = "--normalise-percent" if was.options.normalise_percent else "--paper-percent"
        raise RunSetupError(
            f"cannot resume {old.run_id}: it was scored with {flag}; resume with the same scoring"
        )


def config_for_resume(resume: ResumeState, results: Path) -> RunConfig:
    """The configuration a run was started with, from its manifest (so ``--resume --run-id X`` needs
    nothing else)."""
    cfg = resume.manifest.options.get("config")
    if not cfg:
        raise RunSetupError(f"cannot resume {resume.manifest.run_id}: its manifest records no configuration")
    return RunConfig.model_validate(
        {**cfg, "run_id": resume.manifest.run_id, "resume": True, "results": str(results)}
    )


__all__ = [
    "ModelUnusable",
    "Prepared",
    "RunConfig",
    "RunSetupError",
    "config_for_resume",
    "new_run_id",
    "open_resume",
    "prepare",
]
