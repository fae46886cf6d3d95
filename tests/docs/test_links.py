"""Every relative link and anchor in README.md and docs/*.md resolves (the docs are read on GitHub
and in a clone: a moved page or a renamed heading must fail here, not in a reader's browser)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
_HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*\"([^\"]+)\"", re.I)
_HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*\"([^\"]+)\"", re.I)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed, spaces -> '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = text.lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        for name in _HTML_ANCHOR.findall(line):
            found.add(name)
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    out = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        bare = _CODE_SPAN.sub("", line)
        targets = _INLINE_LINK.findall(bare) + _HTML_LINK.findall(bare)
        ref = _REF_DEF.match(bare)
        if ref:
            targets.append(ref.group(1))
        out += [(number, t) for t in targets]
    return out


def broken_links(path: Path, repo: Path = REPO) -> list[str]:
    """One message per relative link of ``path`` whose file or anchor does not exist."""
    problems = []
    for number, target in links(path):
        if _SCHEME.match(target) or target.startswith("//"):
            continue  # external: not checked here (no network)
        where = f"{path.relative_to(repo)}:{number}: {target}"
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.is_relative_to(repo.resolve()):
            problems.append(f"{where}: leaves the repository")
            continue
        if not dest.exists():
            problems.append(f"{where}: no such file")
            continue
        if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(
                f"{where}: no heading or anchor '#{fragment}' in {dest.relative_to(repo.resolve())}"
            )
    return problems


def test_every_relative_link_and_anchor_resolves():
    files = doc_files()
    assert len(files) > 5, files
    problems = [p for f in files for p in broken_links(f)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_docs_pages_are_reachable_from_the_readme_or_the_index():
    linked = set()
    for f in doc_files():
        for _, target in links(f):
            if not _SCHEME.match(target) and target.partition("#")[0]:
                linked.add((f.parent / target.partition("#")[0]).resolve())
    orphans = [str(p.relative_to(REPO)) for p in doc_files()[1:] if p.resolve() not in linked]
    assert not orphans, f"docs pages no other page links to: {orphans}"


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Running and resuming", "running-and-resuming"),
        ("`kramabench workloads validate`", "kramabench-workloads-validate"),
        ("Files: manifest.json, records.jsonl", "files-manifestjson-recordsjsonl"),
        ("Docker (warm containers)", "docker-warm-containers"),
        ("What a system sees — and what not", "what-a-system-sees--and-what-not"),
    ],
)
def test_slug_follows_github(heading, anchor):
    assert slug(heading) == anchor


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\n## Twice\n\n## Twice\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md#twice-1) [ok](#top) [gone](docs/b.md) [bad](docs/a.md#twice-2)\n"
        "`[in code](nowhere.md)` [web](https://example.org/x.md)\n"
        "```\n[in a fence](nowhere.md)\n```\n\n# Top\n\n![img](docs/missing.png)\n[ref]: docs/a.md#nope\n",
        encoding="utf-8",
    )
    problems = broken_links(page, repo=tmp_path)
    assert [p.split(": ", 2)[1] for p in problems] == [
        "docs/b.md",
        "docs/a.md#twice-2",
        "docs/missing.png",
        "docs/a.md#nope",
    ], problems


def test_the_index_lists_every_page_once_with_what_it_answers():
    """docs/index.md: one list item per page of docs/ (the index aside), its link first, then a line saying
    what the page answers."""
    index = REPO / "docs" / "index.md"
    items = re.findall(
        r"^- \[[^\]]+\]\(([^)#]+)\):\s*(.+(?:\n  .+)*)", index.read_text(encoding="utf-8"), re.M
    )
    listed = [target for target, _ in items]
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md") if p.name != "index.md")
    assert sorted(listed) == pages, f"listed twice or missing: {sorted(set(listed) ^ set(pages)) or listed}"
    for target, what in items:
        assert len(what.split()) >= 8, f"docs/index.md: {target} needs a line on what it answers"
