"""``kramabench fetch elt-bench``: ELT-Bench's official suite, fetched, verified and converted.

1. **Task specifications**: the repository archive of uiuc-kang-lab/ELT-Bench at the pinned commit; every file
   the conversion reads (``elt-bench/<db>/config.yaml``, ``data_model.yaml``, ``schemas/*.csv``,
   ``evaluation/<db>/*.sql``, ``evaluation/table.json``) is checked against the git blob ids shipped with
   kramabench (``official/specs-<ref>.txt``, written by ``scripts/elt-bench-listing.py`` from a copy of that
   commit): a missing, extra-looking or changed file stops the fetch, naming it.
2. **Data**: the archives the repository's setup script downloads (``setup/elt_setup.sh``: the REST API's
   tables, the databases' tables, the ground truth), from the locations it names (Google Drive, whose
   confirmation page for large files is followed), each checked against its sha256: the pin shipped with
   kramabench (``official/elt-bench-pins.json``), or ``--sha256 NAME=HEX``. An archive without a pin or a given
   checksum stops the fetch with its computed sha256 (to check and pin), unless ``--trust``.
3. **Conversion** (:func:`kramabench.elt.convert.convert_official`): the archives' ``data/<db>/<table>.<ext>``
   and ``gt/<db>/<model>.csv`` with the verified specifications become a complete suite, written to
   ``<kramabench home>/elt-bench/<ref>/`` with ``fetch-manifest.json``; ``--workload elt-bench`` names it.

Archives are unpacked member by member: regular files only, no absolute path, no ``..``, no link, size limits.
"""

from __future__ import annotations

import html.parser
import logging
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.files import MANIFEST_BYTES, SMALL_JSON_BYTES, read_text, replace_dir, sha256, write_file
from kramabench.files.archive import ArchiveRefused, NotAnArchive, unpack_tar
from kramabench.files.archive import unpack_zip as unpack_zip_safely
from kramabench.workload.blobs import git_blob_id, git_blob_id_file
from kramabench.workload.fetch import (
    ChecksumMismatch,
    FetchError,
    FetchLimits,
    UnsafeArchive,
    kramabench_home,
)

log = logging.getLogger(__name__)

OFFICIAL = Path(__file__).parent / "official"
PINS_FILE = OFFICIAL / "elt-bench-pins.json"
NAME = "elt-bench"
MANIFEST = "fetch-manifest.json"
_CHUNK = 1 << 20


class ArchivePin(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the file name the setup script unzips")
    url: str
    sha256: str | None = Field(None, description="None: not pinned yet (the fetch needs --sha256 or --trust)")


class EltPins(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str = Field(description="the pinned commit of uiuc-kang-lab/ELT-Bench")
    repo_url: str = Field(description="its archive; {ref} is replaced")
    listing: str = Field(description="the file of git blob ids of its task specifications (beside the pins)")
    archives: list[ArchivePin]
    note: str = ""


class EltFetchManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = NAME
    ref: str
    repo_url: str
    verified_specs: int
    archives: list[dict[str, Any]]
    data_files: int
    ground_truth_files: int
    pipelines: int
    models: int
    transpiled: int
    failed_queries: int
    fetched_at: str


class ChecksumsRequired(FetchError):
    """Data archives without a pinned or given sha256: ``computed`` maps each name to the sha256 of what was
    downloaded (check it, then pass ``--sha256 NAME=HEX`` or ``--trust``)."""

    def __init__(self, message: str, computed: dict[str, str]) -> None:
        super().__init__(message)
        self.computed = computed


def load_pins(path: Path = PINS_FILE) -> EltPins:
    return EltPins.model_validate_json(read_text(path, limit=SMALL_JSON_BYTES, what="pin file"))


#: the git blob id of bytes (what ``git ls-tree`` prints): :func:`kramabench.workload.blobs.git_blob_id`
blob_id = git_blob_id


def read_listing(path: Path) -> dict[str, str]:
    """path -> git blob id, from a listing file (``<id>  <path>`` per line, ``#`` comments; or ``git ls-tree -r
    [-l]`` output, of which the specification folders are kept)."""
    out: dict[str, str] = {}
    for line in read_text(path, limit=SMALL_JSON_BYTES, what="blob listing").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if "\t" in line:  # git ls-tree [-l]: "<mode> blob <oid> [<size>]\t<path>"
            head, _, rel = line.partition("\t")
            fields = head.split()
            if len(fields) >= 3 and fields[1] == "blob" and rel.startswith(("elt-bench/", "evaluation/")):
                out[rel.strip()] = fields[2]
            continue
        oid, _, rel = line.partition("  ")
        out[rel.strip()] = oid.strip()
    return out


def fetched_root(ref: str | None = None, *, home: Path | None = None) -> Path | None:
    """The converted suite of ``ref`` (default: the pinned one) on this machine, or None."""
    ref = ref or load_pins().ref
    root = (Path(home) if home else kramabench_home()) / NAME / ref
    return root if (root / MANIFEST).is_file() and (root / "suite.yaml").is_file() else None


# ------------------------------------------------------------------------------------------- download
class _Form(html.parser.HTMLParser):
    """The form of Google Drive's "cannot scan this file for viruses" page: its action and hidden fields."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self.action = a.get("action")
        elif tag == "input" and a.get("name") and a.get("type", "hidden") == "hidden":
            self.fields[a["name"]] = a.get("value", "")


def _get(url: str, dest: Path, *, limits: FetchLimits, timeout_s: float) -> tuple[str, str]:
    """Stream ``url`` into ``dest``; (sha256, content type)."""
    h = sha256()
    received = 0
    req = urllib.request.Request(url, headers={"User-Agent": "kramabench-fetch"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp, open(dest, "wb") as out:
            ctype = resp.headers.get("Content-Type", "")
            for chunk in iter(lambda: resp.read(_CHUNK), b""):
                received += len(chunk)
                if received > limits.max_archive_bytes:
                    raise UnsafeArchive(f"{url}: more than {limits.max_archive_bytes} bytes: refusing")
                h.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as e:
        raise FetchError(f"download of {url} failed: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise FetchError(f"download of {url} failed: {getattr(e, 'reason', e)}") from None
    return h.hexdigest(), ctype


def download(url: str, dest: Path, *, limits: FetchLimits | None = None, timeout_s: float = 120.0) -> str:
    """Download ``url`` into ``dest`` (a Google Drive confirmation page is followed once); its sha256."""
    limits = limits or FetchLimits()
    digest, ctype = _get(url, dest, limits=limits, timeout_s=timeout_s)
    if "text/html" in ctype and dest.stat().st_size < 1_000_000:
        form = _Form()
        form.feed(read_text(dest, limit=1_000_000, errors="replace"))
        if form.action and form.fields:
            nxt = urllib.parse.urljoin(url, form.action) + "?" + urllib.parse.urlencode(form.fields)
            digest, ctype = _get(nxt, dest, limits=limits, timeout_s=timeout_s)
        if "text/html" in ctype:
            raise FetchError(f"{url} answered with a web page, not the archive (moved, or a quota reached?)")
    return digest


# ------------------------------------------------------------------------------------------- unpack
def _data_zip(parts: list[str]) -> list[str] | None:
    return None if parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" else parts


def unpack_zip(archive: Path, dest: Path, *, limits: FetchLimits | None = None) -> int:
    """The regular files of a zip under ``dest`` (links and special files refused, macOS metadata skipped);
    the number of files."""
    try:
        return unpack_zip_safely(archive, dest, limits=limits or FetchLimits(), place=_data_zip).files
    except ArchiveRefused as e:
        raise UnsafeArchive(f"{archive.name}: {e}") from None
    except (NotAnArchive, zipfile.BadZipFile, EOFError) as e:
        raise FetchError(f"{archive.name} is not a readable zip archive ({e})") from None


def _repo_folders(parts: list[str]) -> list[str] | None:
    return parts[1:] if len(parts) >= 2 and parts[1] in ("elt-bench", "evaluation") else None


def unpack_repo(archive: Path, dest: Path, *, limits: FetchLimits | None = None) -> int:
    """``elt-bench/`` and ``evaluation/`` of a GitHub archive (a tar, one top-level folder) under ``dest``."""
    try:
        return unpack_tar(archive, dest, limits=limits or FetchLimits(), place=_repo_folders).files
    except ArchiveRefused as e:
        raise UnsafeArchive(f"repository archive: {e}") from None
    except (NotAnArchive, tarfile.TarError, EOFError, OSError) as e:
        raise FetchError(f"the repository archive is not a readable tar archive ({e})") from None


def verify_specs(src: Path, listing: dict[str, str]) -> int:
    """Every file of the listing present in ``src`` with its git blob id; the number verified."""
    bad: list[str] = []
    for rel, oid in listing.items():
        p = src / rel
        if not p.is_file():
            bad.append(f"{rel} (missing)")
        elif git_blob_id_file(p) != oid:
            bad.append(f"{rel} (changed)")
    if bad:
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise ChecksumMismatch(
            f"the repository archive does not hold the pinned specifications: {', '.join(bad[:5])}{more}"
        )
    return len(listing)


def _collect(unpacked: list[Path], data: Path, gt: Path) -> tuple[int, int]:
    """``data/<db>/<table>.<ext>`` and ``gt/<db>/<model>.csv`` wherever they lie in the unpacked archives, gathered
    under ``data`` and ``gt`` (a table in two archives, e.g. the API's and the databases', kept once)."""
    nd = ng = 0
    for root in unpacked:
        for f in sorted(root.rglob("*")):
            if not f.is_file():
                continue
            parts = f.relative_to(root).parts
            for i, p in enumerate(parts[:-2]):
                if p in ("data", "gt") and len(parts) - i == 3:
                    target = (data if p == "data" else gt) / parts[i + 1] / parts[i + 2]
                    if not target.exists():
                        target.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(f, target)
                        if p == "data":
                            nd += 1
                        else:
                            ng += 1
                    break
    return nd, ng


def fetch_elt_bench(
    *,
    home: Path | None = None,
    ref: str | None = None,
    repo_url: str | None = None,
    archive_urls: dict[str, str] | None = None,
    sha256: dict[str, str] | None = None,
    trust: bool = False,
    force: bool = False,
    pins: EltPins | None = None,
    listing: Path | None = None,
    limits: FetchLimits | None = None,
) -> tuple[Path, EltFetchManifest, bool]:
    """Fetch, verify and convert (see the module docstring): (root, manifest, reused)."""
    from datetime import datetime, timezone

    from kramabench.elt.convert import convert_official

    pins = pins or load_pins()
    ref = ref or pins.ref
    base = Path(home) if home else kramabench_home()
    root = base / NAME / ref
    if not force and fetched_root(ref, home=base) is not None:
        return (
            root,
            EltFetchManifest.model_validate_json(
                read_text(root / MANIFEST, limit=MANIFEST_BYTES, what="fetch manifest")
            ),
            True,
        )
    listing_path = listing or (OFFICIAL / pins.listing)
    if ref != pins.ref and listing is None:
        raise FetchError(
            f"ref {ref}: no listing of its specifications ships with kramabench (the pinned ref is "
            f"{pins.ref}); pass --listing FILE (git ls-tree output of that commit)"
        )
    expected = read_listing(listing_path)
    archives = [a.model_copy(update={"url": (archive_urls or {}).get(a.name, a.url)}) for a in pins.archives]
    given = dict(sha256 or {})
    unknown = sorted(set(given) - {a.name for a in archives})
    if unknown:
        raise FetchError(
            f"--sha256 names no archive {', '.join(unknown)} (archives: "
            f"{', '.join(a.name for a in archives)})"
        )
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".elt-bench-fetch-", dir=base))
    try:
        repo = work / "repo.tar.gz"
        try:
            download((repo_url or pins.repo_url).replace("{ref}", ref), repo, limits=limits)
        except FetchError as e:
            raise FetchError(
                f"{e} (the repository archive at {ref}: where this machine cannot reach it, download it "
                "elsewhere and name the copy with --url, a file:// URL included)"
            ) from None
        src = work / "src"
        unpack_repo(repo, src, limits=limits)
        verified = verify_specs(src, expected)
        record: list[dict[str, Any]] = []
        computed: dict[str, str] = {}
        unpacked: list[Path] = []
        for a in archives:
            path = work / a.name
            try:
                digest = download(a.url, path, limits=limits)
            except FetchError as e:
                raise FetchError(
                    f"{e} (the data archive {a.name}: where this machine cannot reach it, download it "
                    f"elsewhere and name the copy with --archive-url {a.name}=URL, a file:// URL "
                    "included)"
                ) from None
            want = given.get(a.name) or a.sha256
            if want is None:
                computed[a.name] = digest
            elif digest != want.lower():
                raise ChecksumMismatch(f"{a.name} from {a.url}: sha256 {digest}, pinned {want}")
            record.append(
                {
                    "name": a.name,
                    "url": a.url,
                    "sha256": digest,
                    "verification": "pinned"
                    if a.sha256 and a.name not in given
                    else "given"
                    if a.name in given
                    else "trusted",
                }
            )
            unpack_zip(path, work / "unpacked" / a.name, limits=limits)
            unpacked.append(work / "unpacked" / a.name)
        if computed and not trust:
            listed = ", ".join(f"{k}={v}" for k, v in computed.items())
            raise ChecksumsRequired(
                f"no pinned sha256 for {', '.join(computed)}: check the archives and pass "
                f"--sha256 NAME=HEX (computed: {listed}), or --trust",
                computed,
            )
        nd, ng = _collect(unpacked, work / "data", work / "gt")
        if not nd or not ng:
            raise FetchError(
                f"the data archives hold {nd} data file(s) under data/<db>/ and {ng} ground-truth "
                "table(s) under gt/<db>/: not ELT-Bench's data"
            )
        out = work / "suite"
        report = convert_official(src, out, data=work / "data", ground_truth=work / "gt", version=ref)
        manifest = EltFetchManifest(
            ref=ref,
            repo_url=(repo_url or pins.repo_url).replace("{ref}", ref),
            verified_specs=verified,
            archives=record,
            data_files=nd,
            ground_truth_files=ng,
            pipelines=report.pipelines,
            models=report.models,
            transpiled=report.transpiled,
            failed_queries=len(report.failed),
            fetched_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        write_file(out / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
        root.parent.mkdir(parents=True, exist_ok=True)
        replace_dir(out, root)
        return root, manifest, False
    finally:
        shutil.rmtree(work, ignore_errors=True)


__all__ = [
    "NAME",
    "ArchivePin",
    "ChecksumsRequired",
    "EltFetchManifest",
    "EltPins",
    "blob_id",
    "download",
    "fetch_elt_bench",
    "fetched_root",
    "load_pins",
    "read_listing",
    "unpack_repo",
    "unpack_zip",
    "verify_specs",
]
