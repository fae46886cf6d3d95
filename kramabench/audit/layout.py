"""Where a reference solution looks for the lake: the relative layout it was written for.

Official solutions read ``./data/<domain>/input/...`` from the repository root, but not all of them: some
were written to run two folders below the root (``../../data/<domain>/input/...``, ``../../input/...``),
from the domain folder (``./input/...``) or inside the lake itself (``noaa_wildfires.csv``). The audit
runs each one from a working directory where its paths resolve (:class:`PathLayout`), with the lake
read-only and nothing else of the host there.

The layout is read from the paths the solution names (:func:`path_strings`: its string literals, with the
simple joins a script makes of them: ``data_path + "x.csv"``, ``f"{data_path}/x.csv"``,
``os.path.join(d, "x.csv")``, ``Path(d) / "x.csv"``), each matched against the lake's files:
a path holding ``data/<domain>/input`` has its prefix up to there; any other relative path whose tail is a
lake file or folder (or a pattern matching some) has the rest as its prefix (:func:`infer_layout`, any
depth of ``..``). A path a failed run names (``FileNotFoundError: '../../input/x.xlsx'``) is read the same
way (:func:`prefix_of`), so a layout the literals do not show is still found.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import itertools
import posixpath
import re
import warnings
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: wildcard standing for a part of a path the solution computes (a loop variable, a function argument)
WILD = "*"
_MAX_VALUES = 24  # strings one expression may evaluate to (a name assigned in several places)
_GLOB = re.compile(r"[*?\[]")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


class PathLayout(BaseModel):
    """How a solution addresses the lake, and where the audit ran it so that its paths resolve."""

    model_config = ConfigDict(extra="forbid")

    prefix: str = Field(
        description="the lake folder as the solution writes it: './data/<domain>/input', "
        "'../../data/<domain>/input', '../../input', './input', '' (its working directory)"
    )
    lake_at: str = Field(
        description="where the lake is mounted (read-only), relative to the sandbox's working "
        "folder; '.' when the solution runs inside the lake"
    )
    cwd: str = Field(
        ".", description="the folder the solution runs in, relative to the sandbox's working folder"
    )
    also: list[str] = Field(
        default_factory=list,
        description="other prefixes the solution uses: links to the lake where they point",
    )
    standard: bool = Field(True, description="the official layout: ./data/<domain>/input from the root")
    inferred_from: str = Field("", description="what the layout was read from, in words")

    def describe(self) -> str:
        where = "the root" if self.cwd in (".", "") else f"{self.cwd}/"
        shown = self.prefix if self.prefix not in ("", ".") else "(its working directory)"
        text = f"lake at {shown}, run from {where}"
        if self.also:
            text += f" (also {', '.join(self.also)})"
        return text


# ----------------------------------------------------------------------------------- path strings
def _product(parts: list[list[str]]) -> list[str]:
    out: list[str] = []
    for combo in itertools.product(*parts):
        out.append("".join(combo))
        if len(out) >= _MAX_VALUES:
            break
    return out


def _join(parts: list[list[str]]) -> list[str]:
    """os.path.join / Path(a, b) / a / b of the parts' values (a part starting with '/' restarts)."""
    out: list[str] = []
    for combo in itertools.product(*parts):
        path = ""
        for p in combo:
            path = p if p.startswith("/") or not path else path.rstrip("/") + "/" + p
        out.append(path)
        if len(out) >= _MAX_VALUES:
            break
    return out


_PATH_CALLS = {"Path", "PurePath", "PosixPath", "PurePosixPath", "join", "joinpath"}
_KEEP_CALLS = {
    "str",
    "expanduser",
    "abspath",
    "normpath",
    "realpath",
    "resolve",
    "fspath",
    "absolute",
    "as_posix",
}


class _Evaluator:
    """The strings an expression may evaluate to, for the path-building expressions scripts use."""

    def __init__(self) -> None:
        self.names: dict[str, list[str]] = {}

    def value(self, node: ast.AST | None, *, loose: bool = False) -> list[str] | None:
        """The strings ``node`` may be; None when unknown. ``loose``: an unknown part is a wildcard."""
        if node is None:
            return None
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.JoinedStr):
            parts: list[list[str]] = []
            for v in node.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    parts.append([v.value])
                elif isinstance(v, ast.FormattedValue):
                    parts.append(self.value(v.value, loose=True) or [WILD])
                else:
                    return None
            return _product(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Div):
            left, right = self.value(node.left, loose=True), self.value(node.right, loose=True)
            if left is None and right is None:
                return None
            parts = [left or [WILD], right or [WILD]]
            return _product(parts) if isinstance(node.op, ast.Add) else _join(parts)
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            args = [self.value(a, loose=True) for a in node.args]
            if name in _PATH_CALLS:
                head = []
                if name == "joinpath" and isinstance(func, ast.Attribute):
                    head = [self.value(func.value, loose=True) or [WILD]]
                parts = head + [a or [WILD] for a in args]
                if not parts or all(p == [WILD] for p in parts):
                    return None
                return _join(parts)
            if name in _KEEP_CALLS:
                if args and args[0] is not None:
                    return args[0]
                if isinstance(func, ast.Attribute):
                    return self.value(func.value, loose=True)
            return None
        return [WILD] if loose and isinstance(node, ast.Attribute | ast.Subscript | ast.Call) else None

    def assign(self, target: ast.AST, node: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            mine = self.names.pop(target.id, None)  # ``f = join(d, f)``: the name's own value is not known
            got = self.value(node)
            if mine is not None:
                self.names[target.id] = mine
            if got:
                known = self.names.setdefault(target.id, [])
                known.extend(v for v in got if v not in known)
                del known[_MAX_VALUES:]


def path_strings(source: str) -> list[str]:
    """The strings a solution's code builds that may be paths (literals and simple joins of them), in order.

    A part it cannot know (a loop variable, a call) is :data:`WILD`. Code that does not parse gives its
    plain string literals (a regular expression over the source)."""
    try:
        with warnings.catch_warnings():  # a solution's invalid escapes are its own business
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [m.group(2) for m in re.finditer(r"([\"'])([^\"'\n]{1,500})\1", source)]
    ev = _Evaluator()
    for _ in range(2):  # a name built from another name assigned later in the text
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    ev.assign(t, node.value)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
                ev.assign(node.target, node.value)
            elif isinstance(node, ast.NamedExpr):
                ev.assign(node.target, node.value)
    # ``f = join(d, f)``: its value is the name's (collected below), not a join of the name with itself
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and isinstance(n, ast.Name) and n.id == t.id
            for t in node.targets for n in ast.walk(node.value)
        ):  # fmt: skip
            skip.update(id(n) for n in ast.walk(node.value))
    out: list[str] = []
    seen: set[str] = set()
    values = [
        ev.value(node) or [] for node in ast.walk(tree) if isinstance(node, ast.expr) and id(node) not in skip
    ]
    for got in [*values, *ev.names.values()]:
        for s in got:
            if s not in seen and _pathish(s):
                seen.add(s)
                out.append(s)
    return out


def _pathish(s: str) -> bool:
    s = s.strip()
    if not s or len(s) > 1000 or "\n" in s or s == WILD:
        return False
    return "/" in s or "\\" in s or bool(re.search(r"\.[A-Za-z0-9]{1,8}$", s))


# ---------------------------------------------------------------------------------------- matching
class LakePaths:
    """The lake's files and folders (lake-relative POSIX paths), for matching what a solution names."""

    def __init__(self, files: Iterable[str], dirs: Iterable[str] = ()) -> None:
        self.files = sorted(set(files))
        folders = set(dirs)
        for f in self.files:
            parts = f.split("/")[:-1]
            folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        self.dirs = sorted(folders)
        self._all = set(self.files) | set(self.dirs)

    @classmethod
    def of(cls, inventory: Any) -> LakePaths:
        """From a :class:`~kramabench.workload.sources.LakeInventory` (``files``, ``dirs``)."""
        return cls(inventory.files, inventory.dirs)

    def exists(self, rel: str) -> bool:
        return rel in self._all

    def matches(self, rel: str) -> list[str]:
        """Lake paths (files first) that ``rel`` names: itself, or those its wildcards match."""
        rel = rel.strip("/")
        if not rel or rel == ".":
            return ["."]
        if not _GLOB.search(rel):
            return [rel] if rel in self._all else []
        depth = rel.count("/")
        return [
            p for p in (*self.files, *self.dirs) if p.count("/") == depth and fnmatch.fnmatchcase(p, rel)
        ][:50]


def near_in_lake(rel: str, files: list[str]) -> str | None:
    """A lake file (or folder) that ``rel`` names under another spelling: letter case, folder, or a close name."""
    low = rel.lower().rstrip("/")
    for f in files:
        if f.lower() == low or f.lower().startswith(low + "/"):
            return f if f.lower() == low else f[: len(low)]
    name = posixpath.basename(low)
    same_name = [f for f in files if posixpath.basename(f).lower() == name]
    if same_name:
        return same_name[0]
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}
    for d in sorted(folders):
        if d.lower() == low or d.lower().endswith("/" + name):
            return d
    # a close spelling, but not a numbered sibling (``mmc2.xlsx`` is not a typo of ``mmc7.xlsx``)
    names = [posixpath.basename(f).lower() for f in files]
    numbered = re.sub(r"\d+", "#", name)
    close = [
        c
        for c in difflib.get_close_matches(name, names, n=3, cutoff=0.92)
        if re.sub(r"\d+", "#", c) != numbered
    ]
    return next((f for f in files if posixpath.basename(f).lower() == close[0]), None) if close else None


def is_absolute(path: str) -> bool:
    p = path.strip()
    return p.startswith(("/", "~")) or bool(_DRIVE.match(p))


def prefix_of(path: str, lake: LakePaths, domain: str) -> str | None:
    """The part of ``path`` before the lake: ``'../../input'`` for ``'../../input/x.xlsx'`` when the lake has
    ``x.xlsx``; ``'./data/<domain>/input'`` wherever that marker is; None when no tail of the path is in the
    lake (and it holds no marker). An absolute path keeps its absolute prefix."""
    raw = path.strip().replace("\\", "/")
    parts = raw.split("/")
    marker = ["data", domain, "input"]
    for i in range(len(parts) - len(marker) + 1):
        if parts[i : i + len(marker)] == marker:
            head = "/".join(parts[:i])
            return "/".join(parts[: i + len(marker)]) if _folder_like(head) else None
    for i in range(len(parts)):
        tail = [p for p in parts[i:] if p not in ("", ".")]
        if not tail or all(p == ".." for p in tail) or all(_GLOB.search(p) for p in tail):
            break
        if ".." in tail:
            continue
        if lake.matches("/".join(tail)):
            head = "/".join(parts[:i]).rstrip("/")
            if _GLOB.search(head) or not _folder_like(head):
                return None  # the folder is computed, or the text is prose around a path
            if not head and raw.startswith("/"):
                return None  # "/x.csv": a piece joined to a folder, not a path of the root
            return head
    return None


def _folder_like(head: str) -> bool:
    """A path's leading folders, not prose ending in a path (``Loading data from: ./data/...``)."""
    if is_absolute(head):
        return not re.search(r":\s", head)
    return not re.search(r"\s|:", head)


def lake_relative(path: str, prefix: str) -> str | None:
    """``path`` relative to the lake, given the solution's ``prefix`` (None when the path is not under it)."""
    norm_path = posixpath.normpath(path.replace("\\", "/")) if path.strip() else "."
    norm_prefix = posixpath.normpath(prefix) if prefix.strip() else "."
    if norm_prefix == ".":
        return None if is_absolute(path) or norm_path.startswith("..") else norm_path
    if norm_path == norm_prefix:
        return "."
    if norm_path.startswith(norm_prefix.rstrip("/") + "/"):
        return norm_path[len(norm_prefix.rstrip("/")) + 1 :]
    return None


# ----------------------------------------------------------------------------------------- layout
def _norm(prefix: str) -> str:
    return posixpath.normpath(prefix) if prefix.strip() else "."


def _ups(norm: str) -> int:
    n = 0
    for p in norm.split("/"):
        if p != "..":
            break
        n += 1
    return n


def standard_layout(domain: str, why: str = "") -> PathLayout:
    return PathLayout(prefix=f"./data/{domain}/input", lake_at=f"data/{domain}/input", cwd=".", standard=True,
                      inferred_from=why)  # fmt: skip


def _cwd_for(depth: int, domain: str, avoid: set[str]) -> str:
    """A working folder ``depth`` levels below the sandbox's: ``solutions/<domain>`` for two (where official
    solutions live), deeper levels below it."""
    names = ["solutions", domain] + [f"d{i}" for i in range(3, depth + 1)]
    names = names[:depth]
    if names and names[0] in avoid:
        names[0] = "_solutions"
    return "/".join(names) if names else "."


def layout_for(prefixes: Iterable[str], domain: str, *, why: str = "") -> PathLayout | None:
    """The layout serving ``prefixes`` (most used first); None when the first one cannot be served (an
    absolute path, a lake above the working folder). Prefixes that cannot be served beside the first are
    left out."""
    prefixes = [p for p in prefixes if not is_absolute(p)]
    if not prefixes:
        return None
    main = prefixes[0]
    norm = _norm(main)
    ups = _ups(norm)
    rest = "/".join(norm.split("/")[ups:]) if norm != "." else ""
    if ups and not rest:
        return None  # the lake would be a folder above the working folder: nothing to run it in
    std = norm == f"data/{domain}/input"
    if norm == ".":
        # the solution runs inside the lake (read-only): its files are its working directory's
        lake_at = f"data/{domain}/input"
        return PathLayout(prefix=main, lake_at=lake_at, cwd=lake_at, standard=False, inferred_from=why)
    depth = max([ups] + [_ups(_norm(p)) for p in prefixes[1:] if _norm(p) != "."])
    cwd = _cwd_for(depth, domain, {rest.split("/")[0]})
    lake_at = posixpath.normpath(posixpath.join(cwd, norm))
    also: list[str] = []
    taken = {lake_at}
    for p in prefixes[1:]:
        n = _norm(p)
        if n == ".":
            continue
        where = posixpath.normpath(posixpath.join(cwd, n))
        if (
            where.startswith("..")
            or where in taken
            or any(where.startswith(t + "/") or t.startswith(where + "/") for t in taken)
            or (cwd + "/").startswith(where + "/")
        ):
            continue  # fmt: skip
        taken.add(where)
        also.append(p)
    return PathLayout(prefix=main, lake_at=lake_at, cwd=cwd, also=also, standard=std and cwd == "." and not also,
                      inferred_from=why)  # fmt: skip


def link_targets(layout: PathLayout) -> list[str]:
    """Where the links of ``layout.also`` go, relative to the sandbox's working folder."""
    return [posixpath.normpath(posixpath.join(layout.cwd, _norm(p))) for p in layout.also]


def prefixes_of(strings: Iterable[str], lake: LakePaths, domain: str) -> tuple[list[str], list[str]]:
    """(relative prefixes, most used first; absolute ones) the path strings show."""
    votes: Counter[str] = Counter()
    first: dict[str, int] = {}
    bare = 0
    absolute: list[str] = []
    for n, s in enumerate(strings):
        if s.startswith(("http://", "https://", "s3://", "gs://")):
            continue
        p = prefix_of(s, lake, domain)
        if p is None:
            continue
        if is_absolute(p) or is_absolute(s):
            if p not in absolute:
                absolute.append(p)
            continue
        if _norm(p) == "." and "/" not in s:
            bare += 1  # a bare file name: joined to a folder somewhere, or read from the working directory
            continue
        votes[_norm(p)] += 1
        first.setdefault(_norm(p), n)
    ranked = sorted(votes, key=lambda k: (-votes[k], first[k]))
    if not ranked and bare:
        ranked = ["."]
    return ranked, absolute


def infer_layout(source: str, lake: LakePaths, domain: str, *,
                 strings: list[str] | None = None) -> tuple[PathLayout, list[str]]:  # fmt: skip
    """(the layout the solution's paths show, the absolute lake paths it names). Without any path of the lake
    in its code: the official layout. ``strings``: its :func:`path_strings`, when already at hand."""
    strings = path_strings(source) if strings is None else strings
    ranked, absolute = prefixes_of(strings, lake, domain)
    if not ranked:
        why = "no path of the lake in its code: the official layout"
        if absolute:
            why = "its paths of the lake are absolute: the official layout"
        return standard_layout(domain, why), absolute
    shown = next((s for s in strings if _norm(prefix_of(s, lake, domain) or "\0") == ranked[0]), ranked[0])
    main = _display(ranked[0], strings, lake, domain)
    others = [_display(r, strings, lake, domain) for r in ranked[1:]]
    why = f"the paths it names (e.g. {shown!r})"
    layout = layout_for([main, *others], domain, why=why)
    if layout is None:
        return standard_layout(domain, f"its paths ({shown!r}) put the lake above its working folder: the "
                               "official layout"), absolute  # fmt: skip
    return layout, absolute


def _display(norm: str, strings: list[str], lake: LakePaths, domain: str) -> str:
    """The prefix as the solution writes it (``./data/x/input`` rather than ``data/x/input``)."""
    for s in strings:
        p = prefix_of(s, lake, domain)
        if p is not None and _norm(p) == norm:
            return p.rstrip("/") if p not in ("", "/") else p
    return norm


def unmatched(strings: Iterable[str], layout: PathLayout, lake: LakePaths) -> list[str]:
    """Lake paths (relative to the lake) the solution names under its layout that match nothing in the lake:
    a missing file, or a pattern or folder with no file (what an empty glob match comes from)."""
    out: list[str] = []
    for s in strings:
        for prefix in (layout.prefix, *layout.also):
            rel = lake_relative(s, prefix)
            if rel is None or rel == "." or rel.startswith(".."):
                continue
            if rel.strip(WILD + "/") and not lake.matches(rel) and rel not in out:
                out.append(rel)
            break
    return out


__all__ = [
    "WILD",
    "LakePaths",
    "PathLayout",
    "infer_layout",
    "is_absolute",
    "lake_relative",
    "layout_for",
    "near_in_lake",
    "link_targets",
    "path_strings",
    "prefix_of",
    "prefixes_of",
    "standard_layout",
    "unmatched",
]
