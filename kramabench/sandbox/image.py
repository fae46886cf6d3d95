"""Build the docker sandbox image from the sandbox lock: from a Dockerfile (registry) or offline.

The offline build needs no container registry: it makes a minimal Debian root filesystem with
``debootstrap --variant=minbase`` from the Debian mirror configured for apt on this machine, adds the
Python data stack from Debian packages, records the Python and package versions as image labels (read
back by :meth:`DockerSandbox.info` for run manifests) and pipes the tree into ``docker import``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kramabench.contracts.sandbox import SandboxUnavailable

if TYPE_CHECKING:
    from kramabench.sandbox.environment.lock import SandboxLock

log = logging.getLogger(__name__)

#: the image layout (bump when it changes); the packages are named by the lock hash in the tag
IMAGE_VERSION = "2"
IMAGE_REPO = "kramabench-sandbox"
#: the sandbox lock's virtual environment inside the image (first on the docker backend's PATH)
ENV_PREFIX = "/opt/kramabench"

#: Debian packages of the offline image: the interpreter only (+ venv for the environment, tzdata);
#: the Python packages come from the sandbox lock, as wheels
OFFLINE_PACKAGES = ["python3", "python3-venv", "tzdata"]


def _dockerfile() -> Path:
    from kramabench import data_dir

    return data_dir("docker") / "Dockerfile"


#: the Dockerfile of the sandbox image (in the checkout's or the installed wheel's ``docker/``)
DOCKERFILE = _dockerfile()


def image_tag(lock: SandboxLock | None = None) -> str:
    """``kramabench-sandbox:<lock hash, 12 hex>`` of the sandbox lock in force (or of ``lock``)."""
    from kramabench.sandbox.environment import load_lock

    return f"{IMAGE_REPO}:{(lock or load_lock()).short}"


def default_image() -> str:
    return image_tag()


def versions_snippet() -> str:
    """Python code printing a JSON object of the interpreter and package versions (of the sandbox
    environment's key packages, by import name: labels ``kramabench.version.<name>``)."""
    from kramabench.sandbox.environment.local_env import KEY_MODULES

    return (
        "import json, platform, importlib\n"
        "out = {'python': platform.python_version()}\n"
        f"for m in {KEY_MODULES!r}:\n"
        "    try:\n"
        "        out[m] = getattr(importlib.import_module(m), '__version__', 'unknown')\n"
        "    except Exception:\n"
        "        out[m] = 'missing'\n"
        "print(json.dumps(out))\n"
    )


def debian_mirror(
    sources_dirs: tuple[str, ...] = ("/etc/apt/sources.list", "/etc/apt/sources.list.d"),
) -> tuple[str, str]:
    """(mirror URL, suite) of the main Debian archive configured for apt here.

    Reads both the one-line format (``deb URL SUITE ...``) and deb822 ``.sources`` files; skips
    security and updates suites. Raises SandboxUnavailable when nothing usable is configured.
    """
    files: list[Path] = []
    for entry in sources_dirs:
        p = Path(entry)
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            files.extend(sorted(q for q in p.iterdir() if q.suffix in (".list", ".sources")))
    candidates: list[tuple[str, str]] = []
    for f in files:
        try:
            text = f.read_text()
        except OSError:
            continue
        if f.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields: dict[str, str] = {}
                for line in stanza.splitlines():
                    if line.startswith("#") or ":" not in line:
                        continue
                    k, v = line.split(":", 1)
                    fields[k.strip().lower()] = v.strip()
                if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
                    continue
                for uri in fields.get("uris", "").split():
                    for suite in fields.get("suites", "").split():
                        candidates.append((uri, suite))
        else:
            for line in text.splitlines():
                parts = line.split("#", 1)[0].split()
                if len(parts) >= 3 and parts[0] == "deb":
                    rest = [p for p in parts[1:] if not p.startswith("[")]
                    if parts[1].startswith("["):
                        # deb [opts] URL SUITE
                        rest = parts[1:]
                        while rest and not rest[0].endswith("]"):
                            rest = rest[1:]
                        rest = rest[1:]
                    if len(rest) >= 2:
                        candidates.append((rest[0], rest[1]))
    for uri, suite in candidates:
        if "security" in uri or "security" in suite or "-" in suite:
            continue
        if "debian" in uri:
            return uri, suite
    if candidates:
        return candidates[0]
    raise SandboxUnavailable(
        "no Debian mirror found in /etc/apt/sources.list(.d); the offline image build needs one "
        "(or build from docker/Dockerfile with a registry: kramabench sandbox build)"
    )


def _docker_client() -> Any:
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is a dependency
        raise SandboxUnavailable("the 'docker' Python package is not installed (pip install docker)") from e
    try:
        sdk: Any = docker  # untyped (and, for mypy, shadowed by the repository's docker/ folder)
        client = sdk.from_env(timeout=600)
        client.ping()
    except Exception as e:
        raise SandboxUnavailable(
            f"no Docker engine answers ({e}); start one (bash scripts/start-dockerd.sh) or use --backend local"
        ) from e
    return client


def image_exists(tag: str | None = None) -> bool:
    import docker.errors

    client = _docker_client()
    try:
        client.images.get(tag or default_image())
        return True
    except docker.errors.ImageNotFound:
        return False


def _chroot(root: Path, *cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [shutil.which("chroot") or "/usr/sbin/chroot", str(root), *cmd],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )


def download_wheels(lock: SandboxLock, python_version: str) -> Path:
    """The lock's wheels for CPython ``python_version`` on this machine's architecture, downloaded on the
    host (``pip download --only-binary=:all: --platform manylinux2014_<arch>``) into the cache, where a
    later build finds them."""
    import platform

    from kramabench.sandbox.environment import kramabench_home

    arch = platform.machine() or "x86_64"
    tag = "cp" + python_version.replace(".", "")
    dest = kramabench_home() / "wheels" / f"{tag}-manylinux_{arch}"
    dest.mkdir(parents=True, exist_ok=True)
    reqs = dest / f"{lock.short}.txt"
    reqs.write_text(lock.text())
    _pip(
        "download",
        python_version,
        ["-d", str(dest), "-r", str(reqs)],
        f"cannot download the sandbox lock's wheels for Python {python_version} (is the package index reachable?)",
    )
    return dest


def _install_wheels(lock: SandboxLock, wheels: Path, site: Path, python_version: str) -> None:
    """Install the lock's wheels into the image's environment from the host (pip --target: no network,
    no interpreter run in the root filesystem)."""
    reqs = wheels / f"{lock.short}.txt"
    options = [
        "--no-index",
        "--find-links",
        str(wheels),
        "--no-compile",
        "--target",
        str(site),
        "-r",
        str(reqs),
    ]
    _pip("install", python_version, options, "cannot install the sandbox lock into the image")


def _pip(verb: str, python_version: str, options: list[str], failure: str) -> None:
    """``pip <verb>`` (download, install) of binary wheels only, without their dependencies (the lock holds
    them all), for CPython ``python_version`` on manylinux for this machine's architecture, with ``options``;
    SandboxUnavailable (``failure`` and pip's last lines) when pip fails."""
    import platform

    arch = platform.machine() or "x86_64"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        verb,
        "-q",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "--platform",
        f"manylinux2014_{arch}",
        "--python-version",
        python_version,
        "--implementation",
        "cp",
        *options,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " | ".join([ln for ln in proc.stderr.splitlines() if "Location 'file" not in ln][-3:])
        raise SandboxUnavailable(f"{failure}: {tail}")


def _move_scripts(site: Path, bindir: Path, python: str) -> None:
    """The console scripts of the lock's packages (``dbt``, ...), which ``pip --target`` leaves in
    ``<site>/bin`` with the host's interpreter in their first line, moved into the environment's ``bin`` (on
    the image's PATH) and started by the image's interpreter."""
    scripts = site / "bin"
    if not scripts.is_dir():
        return
    bindir.mkdir(parents=True, exist_ok=True)
    for f in sorted(scripts.iterdir()):
        if not f.is_file():
            continue
        data = f.read_bytes()
        if data.startswith(b"#!"):
            first, _, rest = data.partition(b"\n")
            if b"python" in first:
                data = b"#!" + python.encode() + b"\n" + rest
        dest = bindir / f.name
        if not dest.exists():
            dest.write_bytes(data)
            dest.chmod(0o755)
    shutil.rmtree(scripts, ignore_errors=True)


def build_offline(
    tag: str | None = None,
    *,
    lock: SandboxLock | None = None,
    packages: list[str] | None = None,
    mirror: str | None = None,
    suite: str | None = None,
    workdir: Path | None = None,
) -> dict[str, object]:
    """Build ``tag`` with debootstrap (Debian's python3) + the sandbox lock's wheels + docker import.

    Returns a summary (image id, lock hash, versions, timings)."""
    from kramabench.sandbox.environment import load_lock
    from kramabench.sandbox.environment.local_env import _PROBE

    lock = lock or load_lock()
    tag = tag or image_tag(lock)
    if os.geteuid() != 0:
        raise SandboxUnavailable(
            "the offline image build runs debootstrap, which needs root (run it with sudo)"
        )
    if shutil.which("debootstrap") is None:
        raise SandboxUnavailable("debootstrap is not installed (apt-get install debootstrap)")
    client = _docker_client()
    if mirror is None or suite is None:
        m, s = debian_mirror()
        mirror = mirror or m
        suite = suite or s
    pkgs = packages or OFFLINE_PACKAGES
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kb-rootfs-", dir=workdir) as tmp:
        root = Path(tmp) / "rootfs"
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(pkgs)}", suite, str(root), mirror]
        log.info("running %s", " ".join(cmd))
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-20:])
            raise SandboxUnavailable(f"debootstrap failed (exit {proc.returncode}):\n{tail}")
        t_boot = time.monotonic() - t0
        pv = _chroot(root, "/usr/bin/python3", "-c", "import platform; print(platform.python_version())")
        if pv.returncode != 0:
            raise SandboxUnavailable(f"the image's python3 does not run: {pv.stderr.strip()[-300:]}")
        full_version = pv.stdout.strip()
        py_version = ".".join(full_version.split(".")[:2])
        # the environment: a venv of Debian's python3 holding exactly the lock's wheels
        venv = _chroot(root, "/usr/bin/python3", "-m", "venv", "--without-pip", ENV_PREFIX)
        if venv.returncode != 0:
            raise SandboxUnavailable(f"cannot create {ENV_PREFIX} in the image: {venv.stderr.strip()[-300:]}")
        t1 = time.monotonic()
        wheels = download_wheels(lock, py_version)
        t_download = time.monotonic() - t1
        site = root / ENV_PREFIX.lstrip("/") / "lib" / f"python{py_version}" / "site-packages"
        _install_wheels(lock, wheels, site, py_version)
        _move_scripts(site, root / ENV_PREFIX.lstrip("/") / "bin", f"{ENV_PREFIX}/bin/python")
        facts_run = _chroot(root, f"{ENV_PREFIX}/bin/python", "-I", "-c", _PROBE)
        if facts_run.returncode != 0:
            raise SandboxUnavailable(
                f"the image's environment does not start: {facts_run.stderr.strip()[-300:]}"
            )
        env_packages: dict[str, str] = json.loads(facts_run.stdout)["packages"]
        missing = [n for n in lock.pins if n not in env_packages]
        if missing:
            raise SandboxUnavailable(f"the image lacks {', '.join(missing)} after installing the lock")
        # Slim the tree: package caches, docs, man pages, apt lists.
        for sub in (
            "var/cache/apt/archives",
            "var/lib/apt/lists",
            "usr/share/doc",
            "usr/share/man",
            "usr/share/info",
        ):
            d = root / sub
            if d.is_dir():
                for child in d.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child, ignore_errors=True)
                    else:
                        child.unlink(missing_ok=True)
        # mount points; docker copies a tmpfs target's mode from the image, so /work must be 1777
        (root / "lake").mkdir(exist_ok=True)
        (root / "work").mkdir(exist_ok=True)
        os.chmod(root / "work", 0o1777)
        os.chmod(root / "tmp", 0o1777)
        ver = _chroot(root, f"{ENV_PREFIX}/bin/python", "-c", versions_snippet())
        versions = json.loads(ver.stdout) if ver.returncode == 0 else {}
        labels = {
            "kramabench.sandbox": IMAGE_VERSION,
            "kramabench.build": "offline-debootstrap",
            "kramabench.debian": f"{suite} {mirror}",
            "kramabench.lock": lock.hash,
        }
        labels.update({f"kramabench.version.{k}": str(v) for k, v in versions.items()})
        changes = [
            f"ENV PATH={ENV_PREFIX}/bin:/usr/local/bin:/usr/bin:/bin",
            "ENV LANG=C.UTF-8",
            "ENV PYTHONDONTWRITEBYTECODE=1",
            "WORKDIR /work",
            'CMD ["python3"]',
        ] + [f'LABEL {k}="{v}"' for k, v in labels.items()]
        t2 = time.monotonic()
        tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        repo, _, tagname = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
        try:
            out = client.api.import_image(
                src=tar.stdout, repository=repo, tag=tagname, changes=changes, stream_src=True
            )
        finally:
            if tar.stdout is not None:
                tar.stdout.close()
            tar.wait()
        t_import = time.monotonic() - t2
        if tar.returncode != 0:
            raise SandboxUnavailable(f"tar of the root filesystem failed (exit {tar.returncode})")
        log.debug("docker import: %s", out)
    image = client.images.get(tag)
    return {
        "tag": tag,
        "image_id": image.id,
        "lock_hash": lock.hash,
        "python": full_version,
        "versions": versions,
        "debootstrap_s": round(t_boot, 1),
        "wheels_s": round(t_download, 1),
        "import_s": round(t_import, 1),
        "total_s": round(time.monotonic() - t0, 1),
        "mirror": mirror,
        "suite": suite,
    }


def build_dockerfile(
    tag: str | None = None, dockerfile: Path = DOCKERFILE, *, lock: SandboxLock | None = None
) -> dict[str, object]:
    """Build ``tag`` from docker/Dockerfile (needs a registry for the python:3.11-slim base, and PyPI);
    the build context holds the Dockerfile and the sandbox lock, which it installs."""
    from kramabench.sandbox.environment import load_lock

    lock = lock or load_lock()
    tag = tag or image_tag(lock)
    if not dockerfile.is_file():
        raise SandboxUnavailable(f"Dockerfile not found at {dockerfile}; use --offline")
    client = _docker_client()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kb-docker-context-") as ctx:
        shutil.copy(dockerfile, Path(ctx) / "Dockerfile")
        (Path(ctx) / "sandbox.lock").write_text(lock.text())
        try:
            image, _logs = client.images.build(
                path=ctx,
                dockerfile="Dockerfile",
                tag=tag,
                rm=True,
                labels={"kramabench.sandbox": IMAGE_VERSION, "kramabench.lock": lock.hash},
            )
        except Exception as e:
            raise SandboxUnavailable(
                f"docker build failed: {e} (no registry? try: kramabench sandbox build --offline)"
            ) from e
    return {
        "tag": tag,
        "image_id": image.id,
        "lock_hash": lock.hash,
        "total_s": round(time.monotonic() - t0, 1),
    }


__all__ = [
    "ENV_PREFIX",
    "IMAGE_REPO",
    "IMAGE_VERSION",
    "OFFLINE_PACKAGES",
    "build_dockerfile",
    "build_offline",
    "debian_mirror",
    "default_image",
    "download_wheels",
    "image_tag",
    "image_exists",
    "versions_snippet",
]
