"""Fixtures of the sandbox tests: real backends (bwrap, a real Docker engine) and a planted lake.

Locally a missing backend skips its tests with the reason; in CI (``CI=true``) it fails them, because
.ci/run installs bubblewrap, starts dockerd and builds the image, so both must be there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

from kramabench.sandbox import SandboxUnavailable, get_sandbox

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _unavailable(backend: str, err: Exception):
    msg = f"{backend} sandbox unavailable: {err}"
    if IN_CI:
        pytest.fail(f"{msg} (CI=true: the {backend} backend must work in CI)")
    pytest.skip(msg)


@pytest.fixture(scope="session")
def local_sandbox():
    try:
        sb = get_sandbox("local")
    except SandboxUnavailable as e:
        _unavailable("local", e)
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def local_cold_sandbox():
    """The local backend without its fork server: a new bwrap and interpreter per run."""
    try:
        sb = get_sandbox("local", fork_server=False)
    except SandboxUnavailable as e:
        _unavailable("local", e)
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def docker_sandbox():
    try:
        sb = get_sandbox("docker")
    except SandboxUnavailable as e:
        _unavailable("docker", e)
    yield sb
    sb.close()


@pytest.fixture(params=["local", "local_cold", pytest.param("docker", marks=pytest.mark.docker)])
def sandbox(request):
    """Each isolated backend in turn; the local one warm (its fork server, the default) and cold."""
    return request.getfixturevalue(f"{request.param}_sandbox")


class Planted:
    """A lake with a CSV, and beside it (outside the lake) a workload JSON holding a secret answer."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lake = root / "data" / "demo" / "input"
        self.lake.mkdir(parents=True)
        (self.lake / "sales.csv").write_text("region,amount\nnorth,10\nsouth,32\n")
        (self.lake / "sub").mkdir()
        (self.lake / "sub" / "notes.txt").write_text("lake notes\n")
        self.secret = f"GOLD-ANSWER-{uuid.uuid4().hex}"
        self.answers = root / "workload" / "demo.json"
        self.answers.parent.mkdir()
        self.answers.write_text(f'{{"tasks": [{{"id": "demo-easy-1", "answer": "{self.secret}"}}]}}')
        # the docker backend runs as nobody: the planted tree is world-readable like a real lake
        for dirpath, _dirnames, filenames in os.walk(root):
            os.chmod(dirpath, 0o755)
            for f in filenames:
                os.chmod(os.path.join(dirpath, f), 0o644)
        os.chmod(root, 0o755)

    def snapshot(self) -> dict[str, bytes]:
        """Every file under the planted root, to prove the host is untouched."""
        out = {}
        for p in sorted(self.root.rglob("*")):
            out[str(p.relative_to(self.root))] = (
                p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir>"
            )
        return out


@pytest.fixture
def planted():
    root = Path(tempfile.mkdtemp(prefix="kb-sandbox-test-"))
    try:
        yield Planted(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
