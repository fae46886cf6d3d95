"""``kramabench fetch elt-bench`` against a local archive server (never the internet): the repository archive
holding two official pipelines' specifications (from ../shared/elt-bench), checked file by file against a
listing of git blob ids; three data archives as the setup script names them (one behind a Google-Drive-style
confirmation page), checked by sha256; converted into a complete suite that ``--workload elt-bench`` names."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from kramabench.elt.fetch import (
    ArchivePin,
    ChecksumsRequired,
    EltPins,
    blob_id,
    fetch_elt_bench,
    read_listing,
)
from kramabench.workload.fetch import ChecksumMismatch, FetchError, UnsafeArchive

#: ../shared/elt-bench beside the repo; KRAMABENCH_SHARED overrides it (as for every test of shared data)
SHARED = (
    Path(os.environ.get("KRAMABENCH_SHARED") or Path(__file__).resolve().parents[3] / "shared") / "elt-bench"
)
PIPELINES = ("amplitude", "human_resources")


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, *a: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith(
            "/drive/confirm"
        ):  # the page a large file gets first, as Google Drive sends it
            page = (
                b'<html><body><form id="download-form" action="/drive/real" method="get">'
                b'<input type="hidden" name="id" value="gt"><input type="hidden" name="confirm" value="t">'
                b'<input type="submit" value="Download anyway"></form></body></html>'
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        if self.path.startswith("/drive/real?"):
            self.path = "/gt.zip"
        super().do_GET()


@pytest.fixture
def server(tmp_path: Path):
    root = tmp_path / "www"
    root.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _rows(header: list[str], n: int) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for i in range(n):
        w.writerow([i + 1 if j == 0 else f"v{i}" for j in range(len(header))])
    return buf.getvalue()


def _upstream(www: Path) -> tuple[dict[str, str], EltPins, Path]:
    """The repository archive and the three data archives in ``www``; the listing; pins naming them."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is missing")
    counts = json.loads((SHARED / "evaluation" / "table.json").read_text())
    files: dict[str, bytes] = {}
    for p in PIPELINES:
        for f in sorted((SHARED / "elt-bench" / p).rglob("*")):
            if f.is_file():
                files[f.relative_to(SHARED).as_posix()] = f.read_bytes()
        for f in sorted((SHARED / "evaluation" / p).glob("*.sql")):
            files[f.relative_to(SHARED).as_posix()] = f.read_bytes()
    table = json.dumps({p: counts[p] for p in PIPELINES}).encode()
    files["evaluation/table.json"] = table
    with tarfile.open(www / "repo.tar.gz", "w:gz") as tar:
        for rel, data in {
            **files,
            "README.md": b"upstream readme\n",
            "setup/elt_setup.sh": b"# not read\n",
        }.items():
            info = tarfile.TarInfo(f"ELT-Bench-abc1234/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    listing = www.parent / "listing.txt"
    listing.write_text("".join(f"{blob_id(d)}  {r}\n" for r, d in files.items()))
    # the data: each source table with its row count (csv; the API's tables in their own archive), and ground truth
    api, db, gt = {}, {}, {}
    for p in PIPELINES:
        cfg = yaml.safe_load((SHARED / "elt-bench" / p / "config.yaml").read_text())
        api_tables = set(((cfg.get("custom_api") or {}).get("config") or {}).get("tables") or [])
        for t, n in counts[p].items():
            schema = SHARED / "elt-bench" / p / "schemas" / f"{t}.csv"
            header = [r["column_name"] for r in csv.DictReader(schema.open())] if schema.is_file() else ["id"]
            ext = (
                next(
                    (
                        Path(f["path"]).suffix.lstrip(".")
                        for f in cfg.get("flat_files") or []
                        if f["table"] == t
                    ),
                    None,
                )
                or next(
                    (
                        Path(d["path"]).suffix.lstrip(".")
                        for d in (cfg.get("aws_s3") or {}).get("data") or []
                        if d["table"] == t
                    ),
                    None,
                )
                or "csv"
            )
            text = _rows(header, n)
            if ext == "jsonl":
                text = "".join(json.dumps(r) + "\n" for r in csv.DictReader(io.StringIO(text)))
            (api if t in api_tables else db)[f"data/{p}/{t}.{ext}"] = text
        dm = yaml.safe_load((SHARED / "elt-bench" / p / "data_model.yaml").read_text())
        for m in dm["models"]:
            gt[f"gt/{p}/{m['name']}.csv"] = _rows([c["name"] for c in m["columns"]], 3)
    digests = {}
    for name, members in (("data_api.zip", api), ("data_db.zip", db), ("gt.zip", gt)):
        with zipfile.ZipFile(www / name, "w") as zf:
            for rel, text in members.items():
                zf.writestr(rel, text)
            zf.writestr("__MACOSX/._junk", b"\0")
        digests[name] = hashlib.sha256((www / name).read_bytes()).hexdigest()
    return digests, EltPins(ref="abc1234", repo_url="", listing="listing.txt", archives=[]), listing


def _pins(base: str, digests: dict[str, str], *, pinned: bool = True) -> EltPins:
    return EltPins(
        ref="abc1234",
        repo_url=f"{base}/repo.tar.gz",
        listing="listing.txt",
        archives=[
            ArchivePin(
                name="data_api.zip",
                url=f"{base}/data_api.zip",
                sha256=digests["data_api.zip"] if pinned else None,
            ),
            ArchivePin(
                name="data_db.zip",
                url=f"{base}/data_db.zip",
                sha256=digests["data_db.zip"] if pinned else None,
            ),
            ArchivePin(
                name="gt.zip", url=f"{base}/drive/confirm?id=gt", sha256=digests["gt.zip"] if pinned else None
            ),
        ],
    )


def test_fetch_verifies_and_converts_into_a_complete_suite(server, tmp_path: Path) -> None:
    www, base = server
    digests, _, listing = _upstream(www)
    home = tmp_path / "home"
    root, m, reused = fetch_elt_bench(home=home, pins=_pins(base, digests), listing=listing)
    assert not reused and root == home / "elt-bench" / "abc1234"
    assert m.verified_specs == len(read_listing(listing)) and m.pipelines == 2 and m.failed_queries == 0
    assert {a["verification"] for a in m.archives} == {"pinned"}
    from kramabench.elt.suite import load_suite

    suite = load_suite(root, deep=True)
    assert suite.content == "complete" and [p.id for p in suite.pipelines] == list(PIPELINES)
    assert not [f for f in suite.findings if f.severity == "error"], [f.message for f in suite.findings][:5]
    hr = suite.pipeline("human_resources")
    assert all(s.data for s in hr.sources) and all(m.ground_truth for m in hr.models)
    # fetched again: the complete copy is reused
    assert fetch_elt_bench(home=home, pins=_pins(base, digests), listing=listing)[2] is True


def test_the_fetched_suite_is_named_elt_bench(server, tmp_path: Path) -> None:
    www, base = server
    digests, _, listing = _upstream(www)
    home = tmp_path / "home"
    root, _, _ = fetch_elt_bench(
        home=home,
        ref="166569c",
        pins=_pins(base, digests).model_copy(update={"ref": "166569c"}),
        listing=listing,
    )
    env = {**os.environ, "KRAMABENCH_HOME": str(home), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sys.executable, "-m", "kramabench", "workloads", "validate", "elt-bench"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "elt-bench" in r.stdout and str(root) in r.stdout.replace("\n", "")


def test_a_changed_specification_or_archive_stops_the_fetch(server, tmp_path: Path) -> None:
    www, base = server
    digests, _, listing = _upstream(www)
    pins = _pins(base, digests)
    bad = {**digests, "data_db.zip": "0" * 64}
    with pytest.raises(ChecksumMismatch, match="data_db.zip .*sha256"):
        fetch_elt_bench(home=tmp_path / "h1", pins=_pins(base, bad), listing=listing)
    tampered = listing.read_text().replace(listing.read_text().split()[0], "f" * 40, 1)
    listing2 = tmp_path / "tampered.txt"
    listing2.write_text(tampered)
    with pytest.raises(ChecksumMismatch, match="elt-bench/amplitude/.* \\(changed\\)"):
        fetch_elt_bench(home=tmp_path / "h2", pins=pins, listing=listing2)
    assert not (tmp_path / "h1" / "elt-bench" / "abc1234").exists()


def test_unpinned_archives_need_a_checksum_or_trust(server, tmp_path: Path) -> None:
    www, base = server
    digests, _, listing = _upstream(www)
    with pytest.raises(ChecksumsRequired) as e:
        fetch_elt_bench(home=tmp_path / "h", pins=_pins(base, digests, pinned=False), listing=listing)
    assert e.value.computed == digests
    root, m, _ = fetch_elt_bench(
        home=tmp_path / "h",
        pins=_pins(base, digests, pinned=False),
        listing=listing,
        sha256={"gt.zip": digests["gt.zip"]},
        trust=True,
    )
    assert {a["name"]: a["verification"] for a in m.archives} == {
        "data_api.zip": "trusted",
        "data_db.zip": "trusted",
        "gt.zip": "given",
    }
    with pytest.raises(FetchError, match="names no archive"):
        fetch_elt_bench(
            home=tmp_path / "h3", pins=_pins(base, digests), listing=listing, sha256={"x.zip": "0" * 64}
        )


def test_a_hostile_archive_is_refused(server, tmp_path: Path) -> None:
    www, base = server
    digests, _, listing = _upstream(www)
    with zipfile.ZipFile(www / "data_db.zip", "w") as zf:
        zf.writestr("../../escape.csv", "a\n1\n")
    digests["data_db.zip"] = hashlib.sha256((www / "data_db.zip").read_bytes()).hexdigest()
    with pytest.raises(UnsafeArchive, match="contains '..'"):
        fetch_elt_bench(home=tmp_path / "h", pins=_pins(base, digests), listing=listing)
    assert not (tmp_path / "escape.csv").exists() and not (tmp_path / "h" / "escape.csv").exists()


def test_the_cli_fetches_and_says_what_it_verified(server, tmp_path: Path) -> None:
    """``kramabench fetch elt-bench`` with mirrors of the data archives: unpinned at first (exit 3 with the computed
    sha256s), then with them given."""
    www, base = server
    digests, _, listing = _upstream(www)

    env = {**os.environ, "KRAMABENCH_HOME": str(tmp_path / "home")}
    args = [
        sys.executable,
        "-m",
        "kramabench",
        "fetch",
        "elt-bench",
        "--ref",
        "abc1234",
        "--url",
        f"{base}/repo.tar.gz",
        "--blobs",
        str(listing),
        "--archive-url",
        f"data_api.zip={base}/data_api.zip",
        "--archive-url",
        f"data_db.zip={base}/data_db.zip",
        "--archive-url",
        f"gt.zip={base}/drive/confirm?id=gt",
    ]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 3 and f"sha256 gt.zip={digests['gt.zip']}" in r.stdout, r.stdout + r.stderr
    given = [x for name, d in digests.items() for x in ("--sha256", f"{name}={d}")]
    r = subprocess.run([*args, *given], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fetched" in r.stdout and "2 pipelines" in r.stdout and "(given)" in r.stdout


def test_an_unreachable_upstream_is_an_explained_error_and_copies_fetched_elsewhere_work(
    server, tmp_path: Path
) -> None:
    """Offline (here: a port nobody listens on) the fetch stops with one line naming what it could not download
    and the option that names a copy; the same archives as file:// copies then fetch and convert."""
    www, base = server
    digests, _, listing = _upstream(www)

    env = {**os.environ, "KRAMABENCH_HOME": str(tmp_path / "home")}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "kramabench",
            "fetch",
            "elt-bench",
            "--ref",
            "abc1234",
            "--url",
            "http://127.0.0.1:1/repo.tar.gz",
            "--blobs",
            str(listing),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "download of http://127.0.0.1:1/repo.tar.gz failed" in r.stderr and "--url" in r.stderr, r.stderr
    pins = _pins(base, digests)
    dead = pins.model_copy(
        update={
            "archives": [
                a.model_copy(update={"url": "http://127.0.0.1:1/x.zip"}) if a.name == "data_db.zip" else a
                for a in pins.archives
            ]
        }
    )
    with pytest.raises(FetchError, match="data archive data_db.zip.*--archive-url data_db.zip=URL"):
        fetch_elt_bench(home=tmp_path / "h", pins=dead, listing=listing)
    copies = {n: (www / n).as_uri() for n in ("data_api.zip", "data_db.zip")} | {
        "gt.zip": (www / "gt.zip").as_uri()
    }
    root, m, _ = fetch_elt_bench(
        home=tmp_path / "h",
        pins=dead,
        listing=listing,
        repo_url=(www / "repo.tar.gz").as_uri(),
        archive_urls=copies,
    )
    assert m.pipelines == 2 and {a["verification"] for a in m.archives} == {"pinned"}
