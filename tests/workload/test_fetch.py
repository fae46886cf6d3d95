"""``kramabench fetch kramabench``: download from a local HTTP server, verify, unpack safely, list what is missing.

The archive is built from ../shared/kramabench in GitHub's shape (one top-level ``Kramabench-<sha>/``
folder, the commit id in the pax header) plus, only inside the archive, a fake solution, a README and
harness code (must not be unpacked) and a git-LFS pointer in place of a lake file. Traffic goes to
127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kramabench.workload.fetch import (
    MANIFEST_NAME,
    ChecksumMismatch,
    ChecksumRequired,
    FetchError,
    FetchLimits,
    UnsafeArchive,
    fetch_official,
    fetched_root,
    find_not_stored,
    kramabench_home,
    official_root,
    read_fetch_manifest,
)

SHA = "92b7252eb841f84dfa6a5e079551bd8588947655"
OTHER_SHA = "1111111111111111111111111111111111111111"
LFS_FILE = "data/biomedical/input/1-s2.0-S0092867420301070-mmc2.xlsx"
LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    b"size 12345678\n"
)
SOLUTION = "solutions/biomedical/biomedical-easy-2.py"


# ------------------------------------------------------------------------------------------ helpers


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    tar.addfile(info, io.BytesIO(data))


def _tar_gz(build: Callable[[tarfile.TarFile], None], *, commit: str = SHA) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(
        fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers={"comment": commit}, compresslevel=1
    ) as tar:
        build(tar)
    return buf.getvalue()


class _Server:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                server.requests.append(self.path)
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def serve(self, path: str, body: bytes) -> str:
        self.files[path] = body
        return self.url(path)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture()
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


@pytest.fixture(scope="session")
def official_archive(shared_kramabench: Path) -> tuple[bytes, str, dict[str, bytes]]:
    """(archive bytes, its sha256, {unpacked relpath: expected bytes}) built from the shared copy."""
    top = f"Kramabench-{SHA}"
    expected: dict[str, bytes] = {}

    def build(tar: tarfile.TarFile) -> None:
        _add_bytes(tar, f"{top}/README.md", b"# KramaBench\n")
        _add_bytes(tar, f"{top}/benchmark/evaluator.py", b"print('harness')\n")
        for folder in ("workload", "data"):
            for path in sorted((shared_kramabench / folder).rglob("*")):
                if not path.is_file():
                    continue
                rel = path.relative_to(shared_kramabench).as_posix()
                tar.add(path, arcname=f"{top}/{rel}", recursive=False)
                expected[rel] = path.read_bytes()
        _add_bytes(tar, f"{top}/{LFS_FILE}", LFS_POINTER)
        expected[LFS_FILE] = LFS_POINTER
        sol = b"import pandas as pd\nprint(42)\n"
        _add_bytes(tar, f"{top}/{SOLUTION}", sol)
        expected[SOLUTION] = sol

    data = _tar_gz(build)
    return data, hashlib.sha256(data).hexdigest(), expected


def _leftovers(home: Path) -> list[str]:
    official = home / "official"
    if not official.exists():
        return []
    return sorted(p.name for p in official.iterdir())


# ------------------------------------------------------------------------------------------ tests


def test_home_and_root_follow_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRAMABENCH_HOME", str(tmp_path / "kb"))
    assert kramabench_home() == tmp_path / "kb"
    assert official_root() == tmp_path / "kb" / "official" / SHA
    assert official_root("abc123", home=tmp_path) == tmp_path / "official" / "abc123"
    monkeypatch.delenv("KRAMABENCH_HOME")
    assert "kramabench" in str(kramabench_home()).lower()
    with pytest.raises(FetchError, match="invalid ref"):
        official_root("../../etc")


@pytest.mark.shared
@pytest.mark.slow
def test_fetch_verifies_unpacks_and_lists_what_is_not_stored(
    tmp_path: Path,
    server: _Server,
    official_archive: tuple[bytes, str, dict[str, bytes]],
    shared_kramabench: Path,
) -> None:
    data, digest, expected = official_archive
    url = server.serve("/mitdbg/Kramabench/tar.gz/" + SHA, data)
    home = tmp_path / "home"
    shared_before = sorted(p.relative_to(shared_kramabench).as_posix() for p in shared_kramabench.rglob("*"))

    with pytest.raises(FetchError, match="not fetched yet.*kramabench fetch kramabench"):
        fetched_root(SHA, home=home)
    result = fetch_official(SHA, url=url, home=home, pins={SHA: digest}, progress=False)

    root = result.root
    assert fetched_root(SHA, home=home) == root
    assert root == official_root(SHA, home=home) and not result.reused
    # layout: only workload/, data/, solutions/ (+ the manifest), byte for byte
    assert sorted(p.name for p in root.iterdir()) == sorted(["data", "solutions", "workload", MANIFEST_NAME])
    unpacked = {
        p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST_NAME
    }
    assert set(unpacked) == set(expected)
    for rel in (LFS_FILE, SOLUTION, "workload/legal.json", "data/archeology/input/roman_cities.csv"):
        assert unpacked[rel].read_bytes() == expected[rel]
    assert _leftovers(home) == [SHA]  # no staging folder, no download left

    m = result.manifest
    assert (m.ref, m.url, m.sha256, m.verification, m.archive_commit) == (SHA, url, digest, "pinned", SHA)
    assert m.file_count == len(expected)
    assert m.total_bytes == sum(len(b) for b in expected.values())
    assert read_fetch_manifest(root) == m
    saved = json.loads((root / MANIFEST_NAME).read_text())
    assert saved["file_count"] == len(expected) and saved["fetched_at"]

    by_path = {e.path: e for e in m.not_stored}
    lfs = by_path[LFS_FILE]
    assert lfs.reason == "lfs-pointer" and lfs.lfs_size == 12345678 and lfs.lfs_oid.startswith("sha256:4d7a")
    assert "biomedical-hard-1" in lfs.referenced_by  # a task that reads mmc2.xlsx
    for rel, task in (
        ("data/biomedical/input/1-s2.0-S0092867420301070-mmc6.xlsx", "biomedical"),
        ("data/archeology/input/worldcities.csv", "archeology"),
    ):
        # upstream's listing names them without storing their content
        assert by_path[rel].reason == "not-stored" and by_path[rel].domain == task
        assert by_path[rel].referenced_by and all(i.startswith(task) for i in by_path[rel].referenced_by)
    # environment-hard-12's subtasks name beaches, not files: not listed
    assert not [e for e in m.not_stored if e.domain == "environment"]
    # everything the lake has is not listed: each listed path is absent or a pointer
    for e in m.not_stored:
        p = root / e.path
        assert (e.reason == "lfs-pointer" and p.is_file()) or not p.exists(), e
    # the shared copy itself is untouched
    assert (
        sorted(p.relative_to(shared_kramabench).as_posix() for p in shared_kramabench.rglob("*"))
        == shared_before
    )

    # second fetch: nothing downloaded again, same manifest
    n_requests = len(server.requests)
    again = fetch_official(SHA, url=url, home=home, pins={SHA: digest}, progress=False)
    assert again.reused and again.manifest == m and len(server.requests) == n_requests

    # a damaged copy (a file deleted) is fetched again
    (root / SOLUTION).unlink()
    repaired = fetch_official(SHA, url=url, home=home, pins={SHA: digest}, progress=False)
    assert not repaired.reused and (root / SOLUTION).read_bytes() == expected[SOLUTION]
    assert len(server.requests) == n_requests + 1
    assert _leftovers(home) == [SHA]


@pytest.mark.shared
@pytest.mark.slow
def test_bad_checksum_is_a_clear_error_and_leaves_nothing(
    tmp_path: Path, server: _Server, official_archive: tuple[bytes, str, dict[str, bytes]]
) -> None:
    data, digest, _ = official_archive
    url = server.serve("/a.tar.gz", data)
    home = tmp_path / "home"
    wrong = "0" * 64
    with pytest.raises(ChecksumMismatch) as info:
        fetch_official(SHA, url=url, home=home, pins={SHA: wrong}, progress=False)
    msg = str(info.value)
    assert wrong in msg and digest in msg and url in msg and "nothing was unpacked" in msg
    assert not official_root(SHA, home=home).exists()
    assert _leftovers(home) == []

    # a tampered archive against the right pin
    tampered = url.replace("/a.tar.gz", "/b.tar.gz")
    server.serve("/b.tar.gz", data[:-10] + b"0123456789")
    with pytest.raises(ChecksumMismatch):
        fetch_official(SHA, url=tampered, home=home, pins={SHA: digest}, progress=False)
    assert _leftovers(home) == []


def test_unknown_ref_needs_a_checksum_or_trust(tmp_path: Path, server: _Server) -> None:
    ref = "feedbeef"

    def build(tar: tarfile.TarFile) -> None:
        _add_bytes(
            tar, "Kramabench-feedbeef/workload/toy.json", b'[{"id": "toy-easy-1", "data_sources": ["a.csv"]}]'
        )
        _add_bytes(tar, "Kramabench-feedbeef/data/toy/input/a.csv", b"x\n1\n")

    data = _tar_gz(build)
    digest = hashlib.sha256(data).hexdigest()
    url = server.serve("/toy.tar.gz", data)
    home = tmp_path / "home"

    with pytest.raises(ChecksumRequired) as info:
        fetch_official(ref, url=url, home=home, progress=False)
    assert info.value.computed == digest and digest in str(info.value) and "--sha256" in str(info.value)
    assert not official_root(ref, home=home).exists()
    assert len(server.requests) == 1

    # the printed checksum is accepted without downloading again
    result = fetch_official(ref, url=url, home=home, sha256=digest.upper(), progress=False)
    assert result.manifest.verification == "given" and len(server.requests) == 1
    assert (result.root / "data/toy/input/a.csv").read_bytes() == b"x\n1\n"
    assert result.manifest.not_stored == []
    assert _leftovers(home) == [ref]

    # --trust on a fresh home: accepted, recorded as trusted
    trusted = fetch_official(ref, url=url, home=tmp_path / "h2", trust=True, progress=False)
    assert trusted.manifest.verification == "trusted" and trusted.manifest.sha256 == digest

    with pytest.raises(FetchError, match="differs from the pinned"):
        fetch_official(ref, url=url, home=home, sha256="a" * 64, pins={ref: digest}, progress=False)
    with pytest.raises(FetchError, match="not a sha256"):
        fetch_official(ref, url=url, home=home, sha256="xyz", progress=False)


def test_http_error_and_wrong_commit(tmp_path: Path, server: _Server) -> None:
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_official(SHA, url=server.url("/nope.tar.gz"), home=tmp_path, trust=True, progress=False)
    assert _leftovers(tmp_path) == []

    def build(tar: tarfile.TarFile) -> None:
        _add_bytes(tar, f"Kramabench-{OTHER_SHA}/workload/toy.json", b"[]")
        _add_bytes(tar, f"Kramabench-{OTHER_SHA}/data/toy/input/a.csv", b"x\n")

    url = server.serve("/other.tar.gz", _tar_gz(build, commit=OTHER_SHA))
    with pytest.raises(FetchError, match=f"of commit {OTHER_SHA}, not of the requested ref {SHA}"):
        fetch_official(SHA, url=url, home=tmp_path, trust=True, progress=False)
    assert _leftovers(tmp_path) == []

    def no_workload(tar: tarfile.TarFile) -> None:
        _add_bytes(tar, "proj-1/src/main.py", b"print(1)\n")

    url = server.serve("/nowl.tar.gz", _tar_gz(no_workload, commit="x"))
    with pytest.raises(FetchError, match="not a KramaBench repository archive"):
        fetch_official("nowl", url=url, home=tmp_path, trust=True, progress=False)
    assert _leftovers(tmp_path) == []


def _evil_dotdot(tar: tarfile.TarFile) -> None:
    _add_bytes(tar, "K-1/workload/a.json", b"[]")
    _add_bytes(tar, "K-1/data/../../../evil.txt", b"pwned")


def _evil_absolute(tar: tarfile.TarFile) -> None:
    _add_bytes(tar, "K-1/workload/a.json", b"[]")
    _add_bytes(tar, "/tmp/evil.txt", b"pwned")


def _evil_symlink(tar: tarfile.TarFile) -> None:
    _add_bytes(tar, "K-1/workload/a.json", b"[]")
    link = tarfile.TarInfo("K-1/data/escape")
    link.type = tarfile.SYMTYPE
    link.linkname = "../../../../.."
    tar.addfile(link)
    _add_bytes(tar, "K-1/data/escape/evil.txt", b"pwned")


def _evil_symlink_chain(tar: tarfile.TarFile) -> None:
    _add_bytes(tar, "K-1/workload/a.json", b"[]")
    for name, target in (("K-1/data/up", ".."), ("K-1/data/up/up2", "..")):
        link = tarfile.TarInfo(name)
        link.type = tarfile.SYMTYPE
        link.linkname = target
        tar.addfile(link)


def _evil_big(tar: tarfile.TarFile) -> None:
    _add_bytes(tar, "K-1/workload/a.json", b"[]")
    _add_bytes(tar, "K-1/data/x/input/big.bin", b"\0" * 5000)


def _evil_two_tops(tar: tarfile.TarFile) -> None:
    _add_bytes(tar, "K-1/workload/a.json", b"[]")
    _add_bytes(tar, "K-2/data/x.csv", b"1")


@pytest.mark.parametrize(
    "build, message",
    [
        (_evil_dotdot, "'..'"),
        (_evil_absolute, "absolute path"),
        (_evil_symlink, "outside"),
        (_evil_symlink_chain, "outside"),
        (_evil_big, "per-file limit"),
        (_evil_two_tops, "top-level folder"),
    ],
)
def test_unsafe_archives_are_refused(
    tmp_path: Path, server: _Server, build: Callable[[tarfile.TarFile], None], message: str
) -> None:
    url = server.serve("/evil.tar.gz", _tar_gz(build, commit="x"))
    home = tmp_path / "a" / "b" / "home"
    with pytest.raises(UnsafeArchive, match=message):
        fetch_official(
            "evil", url=url, home=home, trust=True, limits=FetchLimits(max_file_bytes=4096), progress=False
        )
    assert not official_root("evil", home=home).exists()
    assert _leftovers(home) == []
    assert not any(p.name == "evil.txt" for p in tmp_path.rglob("*"))
    assert not Path("/tmp/evil.txt").exists() or Path("/tmp/evil.txt").read_bytes() != b"pwned"


def test_links_inside_the_tree_are_kept(tmp_path: Path, server: _Server) -> None:
    def build(tar: tarfile.TarFile) -> None:
        _add_bytes(tar, "K-1/workload/toy.json", b'[{"id": "t-1", "data_sources": ["alias.csv", "b.csv"]}]')
        _add_bytes(tar, "K-1/data/toy/input/a.csv", b"x\n1\n")
        link = tarfile.TarInfo("K-1/data/toy/input/alias.csv")
        link.type = tarfile.SYMTYPE
        link.linkname = "a.csv"
        tar.addfile(link)
        hard = tarfile.TarInfo("K-1/data/toy/input/hard.csv")
        hard.type = tarfile.LNKTYPE
        hard.linkname = "K-1/data/toy/input/a.csv"
        tar.addfile(hard)

    url = server.serve("/links.tar.gz", _tar_gz(build, commit="x"))
    result = fetch_official("links", url=url, home=tmp_path, trust=True, progress=False)
    lake = result.root / "data/toy/input"
    assert (lake / "alias.csv").is_symlink() and (lake / "alias.csv").read_bytes() == b"x\n1\n"
    assert (lake / "hard.csv").read_bytes() == b"x\n1\n"
    assert [(e.path, e.reason, e.referenced_by) for e in result.manifest.not_stored] == [
        ("data/toy/input/b.csv", "missing", ["t-1"])
    ]


def test_not_stored_resolution_rules(tmp_path: Path) -> None:
    """Sources resolve by path, by file name anywhere in the lake, case-insensitively, and by glob."""
    root = tmp_path
    lake = root / "data" / "legal" / "input"
    (lake / "CSVs" / "State data").mkdir(parents=True)
    (lake / "CSVs" / "State data" / "Ohio.csv").write_text("a\n")
    (lake / "top.html").write_text("<p>")
    (lake / "CSVs" / "ptr.csv").write_bytes(LFS_POINTER)
    (root / "workload").mkdir()
    tasks = [
        {
            "id": "legal-easy-1",
            "data_sources": ["top.html", "Ohio.csv", "State Data/*", "CSVs/State data/Ohio.csv", "./"],
            "subtasks": [{"id": "legal-easy-1-1", "data_sources": "ptr.csv"}],
        },
        # free text (as in some official subtasks) is not a file reference
        {
            "id": "legal-hard-2",
            "data_sources": ["nope.csv", "Missing Dir/", "../../../etc/passwd", "Wollaston Beach"],
        },
    ]
    (root / "workload" / "legal.json").write_text(json.dumps(tasks))
    (root / "workload" / "legal-tiny.json").write_text(
        json.dumps([{"id": "legal-hard-1", "data_sources": ["Ohio.csv"]}])
    )
    (root / "workload" / "broken.json").write_text("{not json")
    got = {e.path: (e.reason, e.referenced_by) for e in find_not_stored(root)}
    assert got == {
        "data/legal/input/CSVs/ptr.csv": ("lfs-pointer", ["legal-easy-1"]),
        "data/legal/input/nope.csv": ("missing", ["legal-hard-2"]),
        "data/legal/input/Missing Dir": ("missing", ["legal-hard-2"]),
        "data/legal/input/../../../etc/passwd": ("missing", ["legal-hard-2"]),
    }


def test_cli_fetch(tmp_path: Path, server: _Server) -> None:
    from kramabench.cli.main import build_app

    def build(tar: tarfile.TarFile) -> None:
        _add_bytes(
            tar, "K-1/workload/toy.json", b'[{"id": "toy-hard-1", "data_sources": ["a.csv", "gone.csv"]}]'
        )
        _add_bytes(tar, "K-1/data/toy/input/a.csv", LFS_POINTER)

    data = _tar_gz(build, commit="x")
    url = server.serve("/cli.tar.gz", data)
    digest = hashlib.sha256(data).hexdigest()
    runner = CliRunner()
    app = build_app()
    args = ["fetch", "kramabench", "--ref", "cli1", "--url", url, "--home", str(tmp_path)]

    res = runner.invoke(app, args)
    assert res.exit_code == 3 and digest in res.output and "--sha256" in res.output

    res = runner.invoke(app, [*args, "--sha256", digest])
    assert res.exit_code == 0, res.output
    assert "fetched" in res.output and "12.3 MB" in res.output and "gone.csv" in res.output
    assert "toy-hard-1" in res.output and str(tmp_path) in res.output.replace("\n", "")

    res = runner.invoke(app, [*args, "--sha256", digest])
    assert res.exit_code == 0 and "already fetched" in res.output

    res = runner.invoke(app, ["fetch", "nothing"])
    assert res.exit_code == 2 and "unknown suite" in res.output
    assert os.listdir(tmp_path / "official") == ["cli1"]


def test_fetch_from_a_local_archive_file(tmp_path: Path) -> None:
    """--url file:///... fetches an archive downloaded by other means (offline machines)."""

    def build(tar: tarfile.TarFile) -> None:
        _add_bytes(
            tar, "Kramabench-abc/workload/toy.json", b'[{"id": "toy-easy-1", "data_sources": ["a.csv"]}]'
        )
        _add_bytes(tar, "Kramabench-abc/data/toy/input/a.csv", b"x\n1\n")

    archive = tmp_path / "kb.tar.gz"
    archive.write_bytes(_tar_gz(build, commit="x"))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    result = fetch_official(
        "local", url=archive.as_uri(), home=tmp_path / "home", sha256=digest, progress=False
    )
    assert (result.root / "data/toy/input/a.csv").read_text() == "x\n1\n"
    assert result.manifest.url == archive.as_uri() and archive.is_file()  # the user's file is left alone
    with pytest.raises(FetchError, match="download of .* failed"):
        fetch_official(
            "gone",
            url=(tmp_path / "nope.tar.gz").as_uri(),
            home=tmp_path / "home",
            trust=True,
            progress=False,
        )


def test_broken_archives_are_clear_errors(tmp_path: Path, server: _Server) -> None:
    def build(tar: tarfile.TarFile) -> None:
        _add_bytes(tar, "K-1/workload/a.json", bytes(range(256)) * 4000)

    good = _tar_gz(build, commit="x")
    for name, body, message in (
        ("trunc", good[: len(good) // 2], "is broken"),
        ("garbage", b"<html>rate limited</html>", "is not a tar archive"),
        ("empty", _tar_gz(lambda tar: None, commit="x"), "is empty"),
    ):
        url = server.serve(f"/{name}.tar.gz", body)
        with pytest.raises(FetchError, match=message) as info:
            fetch_official(name, url=url, home=tmp_path, trust=True, progress=False)
        assert url in str(info.value) and "\n" not in str(info.value)
        assert _leftovers(tmp_path) == []


@pytest.mark.shared
@pytest.mark.slow
def test_fetched_workload_runs_the_official_solutions(
    tmp_path: Path, server: _Server, shared_kramabench: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fetch (served on loopback) then ``run --workload kramabench --system reference``: the solutions read
    ./data/<domain>/input/ relative to their working directory and print the bare answer, as upstream's do."""
    from kramabench.run.runner import RunOptions
    from kramabench.run.setup import RunConfig, prepare

    tasks = json.loads((shared_kramabench / "workload" / "legal.json").read_text())[:4]
    lake = shared_kramabench / "data" / "legal" / "input"
    first = sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*.csv"))[0]

    def build(tar: tarfile.TarFile) -> None:
        top = f"Kramabench-{SHA}"
        _add_bytes(
            tar, f"{top}/workload/legal.json", (shared_kramabench / "workload" / "legal.json").read_bytes()
        )
        for p in sorted(lake.rglob("*")):
            if p.is_file():
                tar.add(p, arcname=f"{top}/{p.relative_to(shared_kramabench).as_posix()}", recursive=False)
        for i, t in enumerate(tasks):
            body = f'import pandas as pd\ndata_path = "./data/legal/input/"\nopen(data_path + {first!r}).read()\n'
            body += "raise FileNotFoundError('no such table')\n" if i == 3 else f"print({t['answer']!r})\n"
            _add_bytes(tar, f"{top}/solutions/legal/{t['id']}.py", body.encode())

    data = _tar_gz(build)
    url = server.serve("/official.tar.gz", data)
    home = tmp_path / "home"
    fetch_official(SHA, url=url, sha256=hashlib.sha256(data).hexdigest(), home=home, progress=False)
    monkeypatch.setenv("KRAMABENCH_HOME", str(home))
    cfg = RunConfig(
        workload="kramabench",
        domains=["legal"],
        system="reference",
        sandbox="local",
        results=tmp_path / "res",
        options=RunOptions(limit=4, concurrency=2),
    )
    res = prepare(cfg).run()
    recs = {r.task_id: r for r in res.records}
    for t in tasks[:3]:
        assert recs[t["id"]].status == "ok" and recs[t["id"]].score == 1.0, recs[t["id"]].error
    failed = recs[tasks[3]["id"]]
    assert (
        failed.status == "error"
        and failed.error.kind == "sandbox_error"
        and "no such table" in failed.error.message
    )
    assert res.manifest.workload["version"]["ref"] == SHA
    assert res.manifest.workload["root"] == str(home / "official" / SHA)


# ------------------------------------------------------------------------------ git blob verification


def _listing(files: dict[str, bytes], *, not_stored: dict[str, bytes] | None = None) -> str:
    """A ``git ls-tree -r -l`` listing of ``files`` (blob ids computed here with git's own formula)."""
    lines = ["# git ls-tree -r -l of a test commit"]
    for path, data in sorted(files.items()):
        blob = hashlib.sha1(b"blob " + str(len(data)).encode() + b"\0" + data).hexdigest()
        lines.append(f"100644 blob {blob} {len(data):>7}\t{path}")
    for path, data in sorted((not_stored or {}).items()):
        blob = hashlib.sha1(b"blob " + str(len(data)).encode() + b"\0" + data).hexdigest()
        lines.append(f"100644 blob {blob}     BAD\t{path}")
    return "\n".join(lines) + "\n"


def _blob_archive(files: dict[str, bytes], top: str, *, fmt: str = "gz", commit: str = "x") -> bytes:
    buf = io.BytesIO()
    if fmt == "zip":  # GitHub's zipball: the commit id is the zip comment
        import zipfile

        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.comment = commit.encode()
            for path, data in files.items():
                zf.writestr(f"{top}/{path}", data)
        return buf.getvalue()
    with tarfile.open(
        fileobj=buf, mode=f"w:{fmt}", format=tarfile.PAX_FORMAT, pax_headers={"comment": commit}
    ) as tar:
        for path, data in files.items():
            _add_bytes(tar, f"{top}/{path}", data)
    return buf.getvalue()


BLOB_FILES = {
    "workload/toy.json": json.dumps(
        [
            {"id": "toy-easy-1", "data_sources": ["a.csv", "Sales.tsv"]},
            {"id": "toy-hard-2", "data_sources": ["gone.csv"]},
        ]
    ).encode(),
    "data/toy/input/a.csv": b"x\n1\n",
    "data/toy/input/sales.csv": b"y\n2\n",
    "solutions/toy/toy-easy-1.py": b"print(1)\n",
}


@pytest.mark.parametrize("fmt", ["gz", "xz", "bz2", "zip"])
def test_blob_ids_verify_without_trust_whatever_the_compression(
    tmp_path: Path, server: _Server, fmt: str
) -> None:
    from kramabench.workload.blobs import parse_blob_listing

    listing = tmp_path / "ls-tree.txt"
    listing.write_text(_listing(BLOB_FILES, not_stored={"data/toy/input/gone.csv": b"lost\n"}))
    url = server.serve(f"/k.{fmt}", _blob_archive(BLOB_FILES, "Kramabench-k", fmt=fmt))
    # no sha256, no --trust: the listing verifies every file
    result = fetch_official("k", url=url, home=tmp_path / "h", blobs=listing, progress=False)
    m = result.manifest
    assert (
        m.verification == "blob-ids"
        and m.verified_files == len(BLOB_FILES)
        and m.blob_listing == "ls-tree.txt"
    )
    assert (result.root / "data/toy/input/a.csv").read_bytes() == b"x\n1\n"
    # gone.csv: upstream lists it without content -> not stored; Sales.tsv: a misspelling of sales.csv
    assert [(e.path, e.reason, e.referenced_by) for e in m.not_stored] == [
        ("data/toy/input/gone.csv", "not-stored", ["toy-hard-2"])
    ]
    assert [(s.source, s.nearest, s.referenced_by) for s in m.misspelt] == [
        ("Sales.tsv", "data/toy/input/sales.csv", ["toy-easy-1"])
    ]
    assert m.absent == [] and m.unverifiable == []
    table = parse_blob_listing(listing.read_text())
    assert set(table.entries) == set(BLOB_FILES) | {"data/toy/input/gone.csv"}


def test_blob_ids_refuse_a_tampered_or_foreign_file(tmp_path: Path, server: _Server) -> None:
    listing = tmp_path / "ls-tree.txt"
    listing.write_text(_listing(BLOB_FILES))
    home = tmp_path / "h"

    tampered = dict(BLOB_FILES, **{"data/toy/input/a.csv": b"x\n9\n"})  # same size, other content
    url = server.serve("/t.zip", _blob_archive(tampered, "K-t", fmt="zip"))
    with pytest.raises(ChecksumMismatch) as info:
        fetch_official("t", url=url, home=home, blobs=listing, progress=False)
    msg = str(info.value)
    assert "data/toy/input/a.csv" in msg and "differ from upstream" in msg and "nothing was unpacked" in msg
    assert _leftovers(home) == []

    extra = dict(BLOB_FILES, **{"solutions/toy/evil.py": b"import os\n"})
    url = server.serve("/e.tar.gz", _blob_archive(extra, "K-e"))
    with pytest.raises(ChecksumMismatch, match=r"upstream does not have: solutions/toy/evil.py"):
        fetch_official("e", url=url, home=home, blobs=listing, progress=False)
    assert _leftovers(home) == []

    # a file upstream stores that the archive lacks is recorded, not refused
    fewer = {k: v for k, v in BLOB_FILES.items() if k != "solutions/toy/toy-easy-1.py"}
    url = server.serve("/f.tar.gz", _blob_archive(fewer, "K-f"))
    result = fetch_official("f", url=url, home=home, blobs=listing, progress=False)
    assert result.manifest.absent == ["solutions/toy/toy-easy-1.py"] and result.manifest.verified_files == 3


def test_blob_listing_shipped_for_the_default_ref_matches_the_shared_copy(shared_kramabench: Path) -> None:
    """Every file of ../shared/kramabench has the git blob id the shipped upstream listing gives."""
    from kramabench.workload.blobs import git_blob_id, load_blob_table, verify_tree

    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object`
    table = load_blob_table(SHA)
    assert table is not None and len(table.entries) > 1800
    check = verify_tree(shared_kramabench, table, ["workload", "data"])
    assert check.ok and check.verified > 150 and not check.mismatched and not check.unknown
    assert "data/archeology/input/worldcities.csv" in check.not_stored


@pytest.mark.shared
@pytest.mark.slow
def test_cli_fetch_kramabench_verifies_the_official_archive_without_trust(
    tmp_path: Path, server: _Server, shared_kramabench: Path
) -> None:
    """`kramabench fetch kramabench` (default ref, no --sha256, no --trust) verifies an archive of the
    official files by the shipped blob listing; one changed byte in a lake file refuses it."""
    from kramabench.cli.main import build_app

    files = {
        p.relative_to(shared_kramabench).as_posix(): p.read_bytes()
        for folder in ("workload", "data")
        for p in sorted((shared_kramabench / folder).rglob("*"))
        if p.is_file()
    }
    url = server.serve("/official.tar.gz", _blob_archive(files, f"Kramabench-{SHA}", commit=SHA))
    runner = CliRunner()
    app = build_app()
    res = runner.invoke(app, ["fetch", "kramabench", "--url", url, "--home", str(tmp_path / "h")])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"{len(files)} verified by git blob id" in out and "worldcities.csv" in out
    manifest = read_fetch_manifest(official_root(SHA, home=tmp_path / "h"))
    assert (
        manifest is not None and manifest.verification == "blob-ids" and manifest.verified_files == len(files)
    )

    bad = dict(files)
    bad[
        "data/legal/input/"
        + sorted(p for p in (shared_kramabench / "data/legal/input").iterdir() if p.is_file())[0].name
    ] = b"x"
    url = server.serve("/bad.tar.gz", _blob_archive(bad, f"Kramabench-{SHA}", commit=SHA))
    res = runner.invoke(app, ["fetch", "kramabench", "--url", url, "--home", str(tmp_path / "h2")])
    assert res.exit_code == 1 and "differ from upstream" in res.output


def test_zip_archives_are_unpacked_as_safely_as_tars(tmp_path: Path, server: _Server) -> None:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("K-z/workload/toy.json", b"[]")
        zf.writestr("K-z/../../evil.py", b"x")
    url = server.serve("/evil.zip", buf.getvalue())
    with pytest.raises(UnsafeArchive, match=r"contains '\.\.'"):
        fetch_official("z", url=url, home=tmp_path, trust=True, progress=False)
    assert _leftovers(tmp_path) == []
    url = server.serve("/broken.zip", b"PK\x03\x04" + b"\0" * 40)
    with pytest.raises(FetchError):
        fetch_official("z2", url=url, home=tmp_path, trust=True, progress=False)


def _zip(entries: list[tuple[str, bytes, int]]) -> bytes:
    """A zip of (name, data, unix mode) entries; a mode with S_IFLNK makes a link whose data is its target."""
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            zf.writestr(info, data)
    return buf.getvalue()


_LINK = stat.S_IFLNK | 0o777
_FILE = stat.S_IFREG | 0o644


@pytest.mark.parametrize(
    "entries, message",
    [
        # a link that is textually inside but leads outside through a link unpacked before it
        (
            [
                ("K-z/workload/a.json", b"[]", _FILE),
                ("K-z/data/up", b"..", _LINK),
                ("K-z/data/up/up2", b"..", _LINK),
            ],
            "leads outside",
        ),
        ([("K-z/workload/a.json", b"[]", _FILE), ("K-z/data/escape", b"../../../..", _LINK)], "outside"),
        (
            [
                ("K-z/workload/a.json", b"[]", _FILE),
                ("K-z/data/x/", b"", stat.S_IFDIR | 0o755),
                ("K-z/data/x", b"1", _FILE),
            ],
            "replaces a folder",
        ),
        (
            [("K-z/workload/a.json", b"[]", _FILE), ("K-z/data/big.bin", b"\0" * 5000, _FILE)],
            "per-file limit",
        ),
        ([("K-z/workload/a.json", b"[]", _FILE), ("K-y/data/x.csv", b"1", _FILE)], "top-level folder"),
    ],
)
def test_zip_members_pass_the_same_checks_as_tar_members(
    tmp_path: Path, server: _Server, entries: list[tuple[str, bytes, int]], message: str
) -> None:
    """tar and zip members go through one placement helper: a zip gets every refusal a tar gets (before,
    the zip path had no check for a link leading outside through earlier links, nor for an entry replacing
    a folder)."""
    url = server.serve("/evil.zip", _zip(entries))
    home = tmp_path / "a" / "home"
    with pytest.raises(UnsafeArchive, match=message):
        fetch_official(
            "evil", url=url, home=home, trust=True, limits=FetchLimits(max_file_bytes=4096), progress=False
        )
    assert _leftovers(home) == []


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_zip_records_what_it_skips_like_tar(tmp_path: Path, server: _Server) -> None:
    """.DS_Store and special files of a zip are skipped and recorded in the manifest (the zip path used to
    drop .DS_Store silently and to unpack a fifo entry as a regular file); a later entry replaces an
    earlier file of the same name."""
    entries = [
        ("K-z/workload/toy.json", b"[]", _FILE),
        ("K-z/data/toy/input/a.csv", b"old\n", _FILE),
        ("K-z/data/toy/input/.DS_Store", b"junk", _FILE),
        ("K-z/data/toy/input/pipe", b"", stat.S_IFIFO | 0o644),
        ("K-z/data/toy/input/a.csv", b"x\n1\n", _FILE),
    ]
    url = server.serve("/ok.zip", _zip(entries))
    result = fetch_official("zipok", url=url, home=tmp_path, trust=True, progress=False)
    lake = result.root / "data/toy/input"
    assert (lake / "a.csv").read_bytes() == b"x\n1\n"
    assert not (lake / ".DS_Store").exists() and not (lake / "pipe").exists()
    assert result.manifest.skipped == ["data/toy/input/.DS_Store", "data/toy/input/pipe (special file)"]
