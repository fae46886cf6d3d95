"""A static copy of the viewer for chosen runs (``kramabench view --bundle DIR``): the same pages, read-only,
opened from a plain folder (``file://``) or any static file server, with no Python and no kramabench.

The bundle holds the page's own files and, for each run, the answers the live viewer would give
(:class:`~kramabench.view.api.ViewApi`), written when the bundle is made: the run list, each run's summary,
rows (with the text its search looks in), floors, tables by domain and difficulty, each record (cut where long,
rendered) with its whole values apart, its model calls, its artifacts' previews and copies, and every ordered
comparison of the chosen runs. The page (``static/bundle.js``) filters, searches, sorts and pages those rows
itself, by the live viewer's rules. Each data file is a script handing its answer to ``KB_DATA`` (a page opened
from ``file://`` may not fetch files beside it; it may run the scripts beside it).

Nothing of a run can run in the bundle: answers are JSON in those scripts (``json.dumps``, so no string can close
or break out of the call), the page puts them in as text; an artifact is copied as an image when it is a PNG,
JPEG, GIF or WebP image (an SVG image becomes a ``data:`` URL, shown only as an image), as ``.txt`` when it is
text (HTML and SVG source included: never a page that runs), else as ``.bin`` (a download).
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from kramabench.files import sha256_hex
from kramabench.view import artifacts as arts
from kramabench.view.api import ApiError, ViewApi
from kramabench.view.page import page_html
from kramabench.view.render import style_css

log = logging.getLogger(__name__)

#: the file that marks a folder as a bundle (a bundle is written again over an older one, never over anything else)
MARKER = ".kramabench-bundle"
#: an artifact larger than this is listed but not copied
MAX_ARTIFACT_BYTES = 64 << 20
#: characters of a record's search text kept for the bundle's search
MAX_TEXT_CHARS = 200_000
#: comparisons are written for every ordered choice of up to this many runs (the chosen order, and each pair)
MAX_PAIR_RUNS = 8

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'none'"
)

#: the page of a static copy
INDEX_HTML = page_html(copy_csp=PAGE_CSP)

IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".gif", ".webp"}


class BundleError(Exception):
    """A bundle that cannot be written (the folder holds something else, a run that is not there)."""


@dataclass
class BundleResult:
    path: Path
    runs: list[str]
    files: int
    bytes: int
    notes: list[str]


def _js(name: str, doc: Any) -> bytes:
    body = json.dumps(doc, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=str)
    return f"KB_DATA({json.dumps(name)}, {body});\n".encode()


def _finite(doc: Any) -> Any:
    from kramabench.view.server import _finite as fin

    return fin(doc)


class _Writer:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.files = 0
        self.bytes = 0

    def data(self, name: str, doc: Any) -> str:
        try:
            raw = _js(name, doc)
        except ValueError:  # NaN or infinity in a record: as text, as the server sends them
            raw = _js(name, _finite(doc))
        self.write(f"data/{name}.js", raw)
        return name

    def write(self, rel: str, raw: bytes) -> None:
        p = self.out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(raw)
        self.files += 1
        self.bytes += len(raw)


def _prepare(out: Path) -> None:
    """An empty folder, or an older bundle (replaced); anything else is refused."""
    if out.is_symlink():
        raise BundleError(f"{out}: a symbolic link; choose a folder")
    if out.exists():
        if not out.is_dir():
            raise BundleError(f"{out}: not a folder")
        entries = [e for e in os.listdir(out)]
        if entries and MARKER not in entries:
            raise BundleError(f"{out}: not empty and not a kramabench bundle; choose an empty or new folder")
        for e in entries:
            p = out / e
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def write_bundle(
    results: Path, out: Path, runs: list[str] | None = None, progress: Callable[[str], None] | None = None
) -> BundleResult:
    """Write a static copy of the viewer for ``runs`` (default: every run of ``results``) into ``out``."""
    say = progress or (lambda _m: None)
    api = ViewApi(results)
    api.index.scan()
    names = [f.name for f in api.index.all()]
    chosen = names if not runs else list(dict.fromkeys(runs))
    missing = [r for r in chosen if r not in names]
    if missing:
        raise BundleError(f"no run {missing[0]!r} in {api.index.root} (runs: {', '.join(names) or 'none'})")
    if not chosen:
        raise BundleError(f"no runs in {api.index.root}")
    out = Path(out)
    _prepare(out)
    w = _Writer(out)
    notes: list[str] = []
    static = resources.files("kramabench.view") / "static"
    for name in ("app.js", "app.css", "bundle.js"):
        w.write(f"static/{name}", (static / name).read_bytes())
    w.write("static/hl.css", style_css().encode())
    w.write("index.html", INDEX_HTML.encode())
    w.write(MARKER, b"a static copy of kramabench view; written again by kramabench view --bundle\n")

    index: dict[str, Any] = {"runs": {}, "artifacts": {}, "compare": {}}
    all_runs = api.api_runs()
    all_runs["runs"] = [s for s in all_runs["runs"] if s["run"] in chosen]
    all_runs["results"] = (
        f"static copy of {len(chosen)} run{'s' if len(chosen) != 1 else ''} from {api.index.root}"
    )
    w.data("runs", all_runs)
    for k, name in enumerate(chosen):
        say(f"{name}: records")
        d = f"r{k}"
        index["runs"][name] = d
        f = api.run(name)
        _run(api, f, d, w, index, notes)
    say("comparisons")
    orders: list[tuple[str, ...]] = []
    if len(chosen) >= 2:
        orders.append(tuple(chosen))
        if len(chosen) <= MAX_PAIR_RUNS:
            orders.extend(p for p in itertools.permutations(chosen, 2) if p != tuple(chosen))
        else:
            notes.append(
                f"comparisons of pairs are written for at most {MAX_PAIR_RUNS} runs; this bundle holds the "
                "comparison of all its runs in the chosen order only"
            )
    for n, order in enumerate(orders):
        both: dict[str, Any] = {}
        for g in ("verified", "official"):
            doc = api.api_compare({"runs": [",".join(order)], "gold": [g], "limit": ["1000"]})
            rows, off = list(doc["rows"]), 1000
            while len(rows) < doc["total"]:
                more = api.api_compare(
                    {"runs": [",".join(order)], "gold": [g], "limit": ["1000"], "offset": [str(off)]}
                )
                rows.extend(more["rows"])
                off += 1000
            doc["rows"] = rows
            both[g] = doc
        default = api.api_compare({"runs": [",".join(order)], "limit": ["1"]})["gold"]
        both["default_gold"] = default
        index["compare"][",".join(order)] = w.data(f"compare/c{n}", both)
    w.data("index", index)
    return BundleResult(out, chosen, w.files, w.bytes, notes)


def _run(api: ViewApi, f: Any, d: str, w: _Writer, index: dict[str, Any], notes: list[str]) -> None:
    w.data(f"{d}/run", api.api_run(f))
    rows_all = f.snapshot(all_attempts=True)
    summary = f.summary()
    rows_doc = []
    for r in rows_all:
        j = r.to_json()
        j["text"] = r.text[:MAX_TEXT_CHARS]
        rows_doc.append(j)
    # the score of what a one-cell filter keeps (one domain, one difficulty): the live viewer's, with its interval
    kept: dict[str, Any] = {}
    for key, values in (
        ("domain", {r.domain for r in rows_all}),
        ("difficulty", {r.difficulty for r in rows_all if r.difficulty}),
    ):
        for v in sorted(values):
            doc = api.api_rows(f, {key: [v], "limit": ["1"]})
            if doc["kept"] is not None:
                kept[f"{key}={v}"] = doc["kept"]
    w.data(f"{d}/rows", {"rows": rows_doc, "summary": summary, "kept": kept})
    try:
        w.data(f"{d}/golds", api.api_golds(f))
    except Exception as e:  # noqa: BLE001 - the floors of a broken run: said on its page, never a failed bundle
        log.warning("%s: floors: %s", f.name, e)
    w.data(f"{d}/breakdown", api.api_breakdown(f))
    calls = api.calls_available(f)
    arts_index: dict[str, Any] = {}
    index["artifacts"][f.name] = arts_index
    n_art = 0
    for r in rows_all:
        try:
            doc = api.api_record(f, {"i": [str(r.i)]})
        except ApiError as e:
            notes.append(f"{f.name} record {r.i}: {e}")
            continue
        w.data(f"{d}/rec/{r.i}", doc)
        if doc["cuts"]:
            rec, _problem = f.read_record(r)
            if rec is not None:
                from kramabench.view.cut import value_at

                w.data(f"{d}/full/{r.i}", {p: value_at(rec, p) for p in doc["cuts"]})
        if calls and doc["record"] is not None:
            _calls(api, f, d, r.i, w)
        for path in r.artifacts:
            if path in arts_index:
                continue
            n_art += 1
            arts_index[path] = _artifact(api, f, d, path, n_art, w, notes)


def _calls(api: ViewApi, f: Any, d: str, i: int, w: _Writer) -> None:
    """A record's calls: the list, and each call whole, its messages kept once (a conversation's calls repeat
    the messages before them)."""
    summary = api.api_calls(f, {"i": [str(i)]})
    messages: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    for c in summary["calls"]:
        try:
            one = api.api_call(f, {"i": [str(i)], "index": [str(c["index"])], "kind": [c["kind"]]})
        except ApiError:
            continue
        call = one.get("call")
        if isinstance(call, dict) and isinstance(call.get("messages"), list):
            ids = []
            for m in call["messages"]:
                key = sha256_hex(json.dumps(m, sort_keys=True, default=str))[:16]
                messages.setdefault(key, m)
                ids.append(key)
            one = {**one, "call": {**call, "messages": ids}}
        calls[f"{c['kind']}:{c['index']}"] = one
    w.data(f"{d}/calls/{i}", {"doc": summary, "calls": calls, "messages": messages})


def _artifact(
    api: ViewApi, f: Any, d: str, path: str, n: int, w: _Writer, notes: list[str]
) -> dict[str, Any]:
    """An artifact copied into the bundle (see the module: never as a page that runs) with its preview."""
    try:
        real = arts.resolve(f, path)
    except arts.ArtifactError as e:
        return {"file": None, "note": str(e)}
    out: dict[str, Any] = {}
    ext = real.suffix.lower()
    size = real.stat().st_size
    try:
        out["preview"] = w.data(f"{d}/preview/{n}", api.api_preview(f, {"path": [path]}))
    except ApiError as e:
        out["note"] = str(e)
    if size > MAX_ARTIFACT_BYTES:
        notes.append(f"{f.name}: {path} ({size} bytes) is not copied (over {MAX_ARTIFACT_BYTES >> 20} MB)")
        return out
    data = arts.read_bytes(real, MAX_ARTIFACT_BYTES)
    if ext in IMAGE_EXTS:
        rel = f"{d}/artifacts/{n}{ext}"
        out["image"] = rel
    elif ext == ".svg":
        rel = f"{d}/artifacts/{n}.svg.txt"
        out["image_data"] = True
        out["image"] = None
    elif ext in arts.TEXT_EXTS:
        rel = f"{d}/artifacts/{n}{ext}.txt"
    else:
        rel = f"{d}/artifacts/{n}.bin"
    w.write(f"data/{rel}", data)
    out["file"] = rel
    if ext == ".svg":  # shown as an image only (an image never runs its scripts); opened, its source as text
        out["image_url"] = "data:image/svg+xml;base64," + base64.b64encode(data).decode()
    return out


__all__ = ["MARKER", "BundleError", "BundleResult", "write_bundle"]
