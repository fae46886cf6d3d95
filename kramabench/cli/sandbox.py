"""``kramabench sandbox``: run one script in a sandbox, build the docker image, show backend info."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from kramabench import plugins
from kramabench.cli._common import fail


def _fail(msg: str, code: int = 2) -> None:
    raise fail(msg, code)


def register(app: typer.Typer) -> None:
    sub = typer.Typer(
        help="Run code in a sandbox, build the sandbox image, show backend versions.", no_args_is_help=True
    )
    app.add_typer(sub, name="sandbox")

    @sub.command("run")
    def run_cmd(
        script: Path = typer.Argument(..., help="Python file to run (read on the host, run in the sandbox)"),
        lake: Path = typer.Option(..., "--lake", help="data-lake folder, mounted read-only"),
        backend: str = typer.Option(
            "local", "--backend", "-b", help=f"one of: {', '.join(plugins.names('sandboxes'))}"
        ),
        timeout: float = typer.Option(120.0, "--timeout", help="wall-clock limit, seconds"),
        memory: int = typer.Option(4096, "--memory", help="memory limit, MB"),
        workdir_lake: str | None = typer.Option(
            None, "--workdir-lake", help="also show the lake at this path relative to the working directory"
        ),
        image: str | None = typer.Option(None, "--image", help="docker image (docker backend)"),
    ) -> None:
        """Run SCRIPT once and print the ExecResult as JSON (exit code 0 if it ran to success, 1 if not)."""
        from pydantic import ValidationError

        from kramabench.sandbox import Limits, SandboxUnavailable, open_sandbox

        if not script.is_file():
            _fail(f"script not found: {script}")
        if not lake.is_dir():
            _fail(f"lake folder not found: {lake}")
        opts: dict[str, Any] = (
            {"image": image} if image and backend == "docker" else {}
        )  # the backend's options
        try:
            limits = Limits(wall_timeout_s=timeout, memory_mb=memory)
        except ValidationError as e:
            flags = {"wall_timeout_s": "--timeout", "memory_mb": "--memory"}
            _fail(
                "bad limits: "
                + "; ".join(
                    f"{flags.get(str(err['loc'][0]), err['loc'][0])} {err['msg'].lower()} (got {err.get('input')!r})"
                    for err in e.errors()
                )
            )
        try:
            sb = open_sandbox(backend, **opts)
        except SandboxUnavailable as e:
            _fail(str(e))
        try:
            from kramabench.files import FileRefused, read_text

            try:
                code = read_text(script, limit=8 << 20, what="script", errors="surrogateescape")
            except FileRefused as e:
                _fail(str(e))
            res = sb.run(code, lake, limits, workdir_lake=workdir_lake)
        finally:
            sb.close()
        typer.echo(res.model_dump_json(indent=2))
        raise typer.Exit(0 if res.ok else 1)

    @sub.command("build")
    def build_cmd(
        backend: str = typer.Option(
            "docker", "--backend", "-b", help="local (the sandbox venv) or docker (the image)"
        ),
        offline: bool = typer.Option(
            False, "--offline", help="docker: debootstrap + docker import (no registry needed)"
        ),
        if_missing: bool = typer.Option(False, "--if-missing", help="do nothing when it is already built"),
        force: bool = typer.Option(False, "--force", help="build again even if it exists"),
        tag: str | None = typer.Option(
            None, "--tag", help="docker image name (default kramabench-sandbox:<lock hash>)"
        ),
        extra_lock: list[Path] = typer.Option(
            None, "--extra-lock", help="more exact pins (name==version per line) added to the sandbox lock"
        ),
    ) -> None:
        """Build the sandbox environment from the sandbox lock: the local venv, or the docker image."""
        from kramabench.sandbox import SandboxUnavailable
        from kramabench.sandbox.environment import (
            LockError,
            SandboxEnvironmentError,
            build_local_env,
            load_lock,
        )

        extras: list[str | Path] | None = [str(p) for p in extra_lock] if extra_lock else None
        try:
            lock = load_lock(extras)
        except LockError as e:
            _fail(str(e))
        if backend == "local":
            try:
                facts = build_local_env(extras, force=force)
            except (SandboxEnvironmentError, LockError) as e:
                _fail(str(e), 1)
            typer.echo(
                json.dumps(
                    {
                        "backend": "local",
                        "lock_hash": lock.hash,
                        "python": facts.python,
                        "executable": facts.executable,
                        "packages": facts.key_versions(),
                    },
                    indent=2,
                )
            )
            return
        if backend != "docker":
            _fail(f"--backend must be local or docker (got {backend!r})")
        from kramabench.sandbox.image import build_dockerfile, build_offline, image_exists, image_tag

        tag = tag or image_tag(lock)
        try:
            if (if_missing and not force) and image_exists(tag):
                typer.echo(f"{tag} already present", err=True)
                return
            typer.echo(
                f"building {tag} ({'offline: debootstrap + docker import' if offline else 'docker/Dockerfile'})...",
                err=True,
            )
            summary = build_offline(tag, lock=lock) if offline else build_dockerfile(tag, lock=lock)
        except SandboxUnavailable as e:
            _fail(str(e), 1)
        typer.echo(json.dumps(summary, indent=2))

    @sub.command("info")
    def info_cmd(
        backend: list[str] = typer.Option(
            None, "--backend", "-b", help="backends to show (default: local and docker)"
        ),
    ) -> None:
        """Show each backend's availability, Python and package versions (as recorded in run manifests)."""
        from kramabench.sandbox import SandboxUnavailable, open_sandbox

        out: dict[str, object] = {}
        for name in backend or ["local", "docker"]:
            try:
                sb = open_sandbox(name)
            except SandboxUnavailable as e:
                out[name] = {"available": False, "reason": str(e)}
                continue
            try:
                out[name] = {"available": True, **sb.info()}
            finally:
                sb.close()
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")


__all__ = ["register"]
