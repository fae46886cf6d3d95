"""Hostile lake files for tests and benchmarks: decompression bombs, special files, huge inputs.

>>> write_xlsx_bomb(Path("bomb.xlsx"), inflated_bytes=1 << 30)   # ~1 MB on disk, 1 GB of cell text
>>> make_hostile_lake(Path("lake"))                               # one of each kind
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_CT = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WB = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WB_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'worksheet" Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'sharedStrings" Target="sharedStrings.xml"/></Relationships>'
)
_SHEET = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    '<row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>'
)


def write_xlsx_bomb(path: Path, inflated_bytes: int = 1 << 30) -> Path:
    """A valid one-cell workbook whose single shared string is ``inflated_bytes`` of text: about 1/1000 of
    that on disk. Written in streamed chunks (never held in memory)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", _CT)
        z.writestr("_rels/.rels", _RELS)
        z.writestr("xl/workbook.xml", _WB)
        z.writestr("xl/_rels/workbook.xml.rels", _WB_RELS)
        z.writestr("xl/worksheets/sheet1.xml", _SHEET)
        head = (
            b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1">'
            b"<si><t>"
        )
        tail = b"</t></si></sst>"
        body = max(0, inflated_bytes - len(head) - len(tail))
        info = zipfile.ZipInfo("xl/sharedStrings.xml")
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as f:
            f.write(head)
            chunk = b"A" * (1 << 20)
            while body > 0:
                n = min(body, len(chunk))
                f.write(chunk[:n])
                body -= n
            f.write(tail)
    return path


def write_gzip_bomb(path: Path, inflated_bytes: int = 1 << 30) -> Path:
    """A gzip file of ``inflated_bytes`` of CSV-looking text (about 1/1000 on disk)."""
    row = b"1,2,3\n" * 100_000
    with gzip.open(path, "wb", compresslevel=9) as g:
        g.write(b"a,b,c\n")
        left = inflated_bytes
        while left > 0:
            g.write(row[: min(left, len(row))])
            left -= len(row)
    return path


def _html(path: Path, size: int, table: bool = True) -> None:
    with open(path, "w") as f:
        f.write("<html><body><table><tr><th>a</th><th>b</th></tr>" if table else "<html><body>")
        row = ("<tr><td>1</td><td>2</td></tr>" if table else "<p>some <b>prose</b> here</p>\n") * 1000
        while f.tell() + len(row) + 30 < size:
            f.write(row)
        f.write("</table></body></html>" if table else "</body></html>")


def _json(path: Path, size: int, item: str) -> None:
    with open(path, "w") as f:
        f.write("[")
        part = ",".join([item] * 100_000)
        while f.tell() + len(part) < size:
            f.write(part + ",")
        f.write(item + "]")


def make_hostile_lake(
    root: Path, *, bomb_bytes: int = 1 << 30, html_parse_bound: int = 4 << 20, json_parse_bound: int = 4 << 20
) -> Path:
    """A lake of one hostile file of each kind: an xlsx bomb, a gzip bomb, a FIFO, HTML pages and JSON
    lists just under and far above the readers' parse bounds, and one ordinary CSV."""
    root.mkdir(parents=True, exist_ok=True)
    write_xlsx_bomb(root / "bomb.xlsx", bomb_bytes)
    write_gzip_bomb(root / "bomb.csv.gz", bomb_bytes)
    fifo = root / "pipe.csv"
    if not fifo.exists():
        os.mkfifo(fifo)
    # just under the parse bounds (the worst a reader still parses) and far above them (never parsed)
    # (the bounds are the lake readers' LakeOptions.max_html_bytes / max_json_bytes)
    _html(root / "page.html", html_parse_bound - 4096)
    _html(root / "prose.html", html_parse_bound - 4096, table=False)  # no table: no slower parser tried
    _html(root / "big.html", 40 * 1024 * 1024)
    _json(root / "objects.json", json_parse_bound - 4096, "{}")  # small objects: the most memory per byte
    _json(root / "numbers.json", 60 * 1024 * 1024, "1234")
    (root / "ok.csv").write_text("x,y\n1,2\n3,4\n")
    return root


def make_escaping_workload(root: Path, secret: Path, domain: str = "esc") -> Path:
    """A workload root (one CSV lake, five tasks) whose every named path tries to leave it for ``secret`` (a
    host file outside the root): a ``solution`` that is absolute, one that climbs out with ``..``, a
    ``solutions/<id>.py`` link to it, the root's ``VERSION`` and ``manifest.json`` as links to it, a lake file linking to it, and a judge-check labelled set whose pipeline ``file`` climbs out. Task 5 has
    a proper solution inside the root. No byte of ``secret`` may reach a record, a prompt or a report."""
    import json
    import os

    lake = root / "data" / domain / "input"
    lake.mkdir(parents=True, exist_ok=True)
    (lake / "a.csv").write_text("k,v\n1,3\n2,6\n")
    (lake / "answers.csv").symlink_to(secret)
    sols = root / "solutions"
    sols.mkdir(exist_ok=True)
    (sols / f"{domain}-easy-3.py").symlink_to(secret)
    (sols / f"{domain}-easy-5.py").write_text("import json\nprint(json.dumps({'main-task': 3}))\n")
    for name in ("VERSION", "manifest.json"):
        (root / name).symlink_to(secret)
    rel = os.path.relpath(secret, root)

    def task(i: int, **extra: object) -> dict[str, object]:
        return {
            "id": f"{domain}-easy-{i}",
            "query": f"What is v for k=1? ({i})",
            "answer": 3,
            "answer_type": "numeric_exact",
            "data_sources": ["a.csv"],
            "key_functionalities": ["reads a.csv", "picks the row of k=1"],
            **extra,
        }

    (root / "workload").mkdir(exist_ok=True)
    (root / "workload" / f"{domain}.json").write_text(json.dumps([
        task(1, solution=str(secret)), task(2, solution=rel), task(3), task(4, solution=f"solutions/../{rel}"),
        task(5),
    ]))  # fmt: skip
    jc = root / "judge_check"
    jc.mkdir(exist_ok=True)
    (jc / "labels.json").write_text(
        json.dumps(
            {
                "include_references": True,
                "pipelines": [
                    {
                        "file": os.path.relpath(secret, jc),
                        "domain": domain,
                        "task": f"{domain}-easy-5",
                        "missing": [],
                    }
                ],
            }
        )
    )
    return root


def write_big_run(
    run_dir: Path,
    n_records: int = 50_000,
    *,
    code_bytes: int = 2000,
    transcript_bytes: int = 2000,
    domains: int = 4,
    run_id: str = "big",
) -> Path:
    """A run folder of ``n_records`` records (each with ``code_bytes`` of pipeline code and a transcript of about
    ``transcript_bytes``), written line by line: what ``kramabench report`` meets after a long sweep."""
    import json
    from datetime import datetime, timezone

    run_dir.mkdir(parents=True, exist_ok=True)
    now = datetime.now(timezone.utc).isoformat()
    manifest = {
        "run_id": run_id,
        "created_at": now,
        "finished_at": now,
        "system": "hostile-big",
        "model": "m",
        "status": "finished",
        "workload": {"name": "big", "domains": [f"d{i}" for i in range(domains)]},
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    code = ("x = 1  # padding\n" * (code_bytes // 17 + 1))[:code_bytes]
    turn = {"role": "assistant", "content": "y" * 200}
    transcript = [turn] * max(0, transcript_bytes // 230)
    with open(run_dir / "records.jsonl", "w") as f:
        for i in range(n_records):
            ok = i % 3 != 0
            rec = {
                "run_id": run_id,
                "domain": f"d{i % domains}",
                "task_id": f"d{i % domains}-easy-{i}",
                "status": "ok" if ok else "error",
                "system": "hostile-big",
                "model": "m",
                "answer_type": "numeric_exact",
                "expected": i,
                "answer": i if i % 2 else i + 1,
                "score": (1.0 if i % 2 else 0.0) if ok else 0.0,
                "metric": "numeric_exact",
                "pipeline_code": code,
                "transcript": transcript,
                "wall_s": 1.5,
                "error": None if ok else {"kind": "sandbox_error", "message": "Traceback ... " * 20},
                "usage": {"prompt_tokens": 100, "completion_tokens": 50, "cost_usd": 0.001, "model_calls": 1},
            }
            f.write(json.dumps(rec) + "\n")
    return run_dir


_PEAK = (
    "import os, resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(rc)\n"
)


def run_measured(cmd: list[str], **kw: Any) -> tuple[subprocess.CompletedProcess[Any], float]:
    """``subprocess.run(cmd, **kw)`` and the peak resident memory of ``cmd`` (and its children) in MB,
    measured by a wrapper process of its own (so earlier children of the caller do not count)."""
    import sys

    with tempfile.NamedTemporaryFile(prefix="kb-peak-", suffix=".txt", delete=False) as f:
        figure = Path(f.name)
    try:
        out = subprocess.run([sys.executable, "-c", _PEAK, str(figure), *cmd], **kw)
        text = figure.read_text().strip()
        return out, (int(text) / 1024 if text else float("nan"))
    finally:
        figure.unlink(missing_ok=True)


def unprivileged() -> list[str]:
    """An argv prefix that runs a command without the power to ignore file permissions: as root, ``setpriv``
    drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (so a file at mode 000 cannot be read, a folder at 0555
    not written), as anyone else nothing is needed. Raises RuntimeError when root lacks ``setpriv``."""
    if os.geteuid() != 0:
        return []
    tool = shutil.which("setpriv")
    if tool is None:
        raise RuntimeError("setpriv (util-linux) is needed to drop root's file-permission override")
    return [tool, "--bounding-set", "-dac_override,-dac_read_search", "--"]


@contextlib.contextmanager
def small_disk(size: int = 256 * 1024, base: Path | None = None) -> Iterator[Path]:
    """A folder on a file system of ``size`` bytes (a tmpfs mounted for the test; root only), removed after:
    what a full disk does to a write. Raises RuntimeError when it cannot be mounted."""
    where = Path(tempfile.mkdtemp(prefix="kb-small-disk-", dir=base))
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        where.rmdir()
        raise RuntimeError(f"cannot mount a small tmpfs: {res.stderr.strip() or res.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
        with contextlib.suppress(OSError):
            where.rmdir()


def fill_disk(folder: Path, leave: int = 0) -> Path:
    """Fill the file system of ``folder`` (one ballast file) until at most ``leave`` bytes are free."""
    ballast = folder / ".ballast"
    with open(ballast, "ab") as f:
        block = b"\0" * (1 << 16)
        while True:
            free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
            if free <= leave:
                break
            try:
                f.write(block[: max(1, min(len(block), free - leave))])
                f.flush()
            except OSError:
                break
    return ballast


__all__ = [
    "HOSTILE_NAMES",
    "UNICODE_NAMES",
    "make_hostile_names_workload",
    "fill_disk", "make_escaping_workload", "make_hostile_lake", "run_measured", "small_disk", "unprivileged", "write_big_run", "write_gzip_bomb",
    "write_xlsx_bomb",
]  # fmt: skip


#: names a hostile workload gives its tasks and lake files: a terminal title (OSC), a colour (CSI), a forged
#: line, a right-to-left override, a bell, a zero-width space
HOSTILE_NAMES = (
    "\x1b]0;pwned\x07",
    "\x1b[31mred\x1b[0m",
    "\nforged line",
    "\u202eevil",
    "\x07bell\u200b",
)


#: names beyond ASCII: what a terminal whose encoding is ASCII (PYTHONIOENCODING=ascii) must still print
UNICODE_NAMES = ("-αβγ", "-数据", "-é", "-😀")


def make_hostile_names_workload(
    root: Path, source: Path, domain: str = "grid", n: int = 4, names: tuple[str, ...] = HOSTILE_NAMES
) -> Path:
    """A copy of the first ``n`` tasks of ``domain`` of the workload at ``source`` (the official layout, e.g.
    the bundled mini) whose task ids and subtask ids end in ``names`` (default :data:`HOSTILE_NAMES`) and whose
    lake holds one more file for each of those names: what a terminal, a Markdown renderer and a browser must
    show, not obey. Returns the root."""
    import json
    import shutil

    shutil.copytree(source / "data" / domain, root / "data" / domain)
    if (source / "solutions").is_dir():
        shutil.copytree(source / "solutions", root / "solutions")
    (root / "workload").mkdir(parents=True, exist_ok=True)
    tasks = json.loads((source / "workload" / f"{domain}.json").read_text(encoding="utf-8"))[:n]
    for i, task in enumerate(tasks):
        bad = names[i % len(names)]
        if not task.get("solution"):
            task["solution"] = f"solutions/{task['id']}.py"
        old = task["id"]
        task["id"] = old + bad
        for st in task.get("subtasks", []):  # a subtask's id starts with its task's
            st["id"] = task["id"] + st["id"][len(old) :]
    (root / "workload" / f"{domain}.json").write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    lake = root / "data" / domain / "input"
    for i, bad in enumerate(names):
        (lake / f"file{i}{bad}.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    for dirpath, _dirs, files in os.walk(
        root
    ):  # world-readable, like a real lake (the docker sandbox's nobody)
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return root
