"""Build the docker sandbox image: from a Dockerfile (registry) or offline (debootstrap + docker import).

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
import tempfile
import time
from pathlib import Path

from kramabench.contracts.sandbox import SandboxUnavailable

log = logging.getLogger(__name__)

#: bump when the image contents change, so ``--if-missing`` rebuilds
IMAGE_VERSION = "1"
DEFAULT_IMAGE = f"kramabench-sandbox:{IMAGE_VERSION}"

#: Debian packages of the offline image (bookworm names)
OFFLINE_PACKAGES = [
    "python3",
    "python3-pandas",
    "python3-numpy",
    "python3-scipy",
    "python3-openpyxl",
    "python3-xlrd",
    "python3-bs4",
    "python3-lxml",
    "python3-html5lib",
    "python3-dateutil",
    "python3-tz",
    "python3-tabulate",
    "python3-sklearn",
    "python3-statsmodels",
    "tzdata",
]

#: import names whose versions are recorded (labels ``kramabench.version.<name>``)
VERSIONED_MODULES = ["pandas", "numpy", "scipy", "openpyxl", "bs4", "lxml", "sklearn", "statsmodels"]

_VERSIONS_SNIPPET = (
    "import json, platform, importlib\n"
    "out = {'python': platform.python_version()}\n"
    f"for m in {VERSIONED_MODULES!r}:\n"
    "    try:\n"
    "        out[m] = getattr(importlib.import_module(m), '__version__', 'unknown')\n"
    "    except Exception:\n"
    "        out[m] = 'missing'\n"
    "print(json.dumps(out))\n"
)

DOCKERFILE = Path(__file__).resolve().parents[2] / "docker" / "Dockerfile"


def versions_snippet() -> str:
    """Python code printing a JSON object of the interpreter and package versions."""
    return _VERSIONS_SNIPPET


def debian_mirror(sources_dirs: tuple[str, ...] = ("/etc/apt/sources.list", "/etc/apt/sources.list.d")) -> tuple[str, str]:
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


def _docker_client():
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is a dependency
        raise SandboxUnavailable("the 'docker' Python package is not installed (pip install docker)") from e
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as e:
        raise SandboxUnavailable(
            f"no Docker engine answers ({e}); start one (bash scripts/start-dockerd.sh) or use --backend local"
        ) from e
    return client


def image_exists(tag: str = DEFAULT_IMAGE) -> bool:
    import docker.errors

    client = _docker_client()
    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def build_offline(
    tag: str = DEFAULT_IMAGE,
    *,
    packages: list[str] | None = None,
    mirror: str | None = None,
    suite: str | None = None,
    workdir: Path | None = None,
) -> dict[str, object]:
    """Build ``tag`` with debootstrap + docker import; returns a summary (image id, versions, timings)."""
    if os.geteuid() != 0:
        raise SandboxUnavailable("the offline image build runs debootstrap, which needs root (run it with sudo)")
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
        cmd = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(pkgs)}",
            suite,
            str(root),
            mirror,
        ]
        log.info("running %s", " ".join(cmd))
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-20:])
            raise SandboxUnavailable(f"debootstrap failed (exit {proc.returncode}):\n{tail}")
        t_boot = time.monotonic() - t0
        # Slim the tree: package caches, docs, man pages, apt lists.
        for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info"):
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
        ver = subprocess.run(
            [shutil.which("chroot") or "/usr/sbin/chroot", str(root), "/usr/bin/python3", "-c", versions_snippet()],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        )
        versions = json.loads(ver.stdout) if ver.returncode == 0 else {}
        labels = {
            "kramabench.sandbox": IMAGE_VERSION,
            "kramabench.build": "offline-debootstrap",
            "kramabench.debian": f"{suite} {mirror}",
        }
        labels.update({f"kramabench.version.{k}": str(v) for k, v in versions.items()})
        changes = [
            "ENV PATH=/usr/local/bin:/usr/bin:/bin",
            "ENV LANG=C.UTF-8",
            "ENV PYTHONDONTWRITEBYTECODE=1",
            "WORKDIR /work",
            'CMD ["python3"]',
        ] + [f'LABEL {k}="{v}"' for k, v in labels.items()]
        t1 = time.monotonic()
        tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        repo, _, tagname = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
        try:
            out = client.api.import_image(src=tar.stdout, repository=repo, tag=tagname, changes=changes, stream_src=True)
        finally:
            tar.stdout.close()
            tar.wait()
        t_import = time.monotonic() - t1
        if tar.returncode != 0:
            raise SandboxUnavailable(f"tar of the root filesystem failed (exit {tar.returncode})")
        log.debug("docker import: %s", out)
    image = client.images.get(tag)
    return {
        "tag": tag,
        "image_id": image.id,
        "versions": versions,
        "debootstrap_s": round(t_boot, 1),
        "import_s": round(t_import, 1),
        "total_s": round(time.monotonic() - t0, 1),
        "mirror": mirror,
        "suite": suite,
    }


def build_dockerfile(tag: str = DEFAULT_IMAGE, dockerfile: Path = DOCKERFILE) -> dict[str, object]:
    """Build ``tag`` from docker/Dockerfile (needs a registry for the python:3.11-slim base and PyPI)."""
    if not dockerfile.is_file():
        raise SandboxUnavailable(f"Dockerfile not found at {dockerfile}; use --offline")
    client = _docker_client()
    t0 = time.monotonic()
    try:
        image, _logs = client.images.build(
            path=str(dockerfile.parent), dockerfile=dockerfile.name, tag=tag, rm=True, labels={"kramabench.sandbox": IMAGE_VERSION}
        )
    except Exception as e:
        raise SandboxUnavailable(f"docker build failed: {e} (no registry? try: kramabench sandbox build --offline)") from e
    return {"tag": tag, "image_id": image.id, "total_s": round(time.monotonic() - t0, 1)}


__all__ = [
    "DEFAULT_IMAGE",
    "IMAGE_VERSION",
    "OFFLINE_PACKAGES",
    "build_dockerfile",
    "build_offline",
    "debian_mirror",
    "image_exists",
    "versions_snippet",
]
