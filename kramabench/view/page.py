"""The viewer's one HTML page, as the server serves it (``/``) and as a static copy writes it (``index.html``)."""

from __future__ import annotations

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{head}<title>{title}</title>
<link rel="stylesheet" href="{base}static/app.css">
<link rel="stylesheet" href="{base}static/hl.css">
</head>
<body>
<header id="top">
  <a href="{home}" id="home">kramabench view</a>
  <span id="crumbs"></span>
  <span id="live" class="live off" title="{live_title}">{live}</span>
</header>
<main id="main"><p class="muted">Loading…</p></main>
{scripts}<script src="{base}static/app.js"></script>
</body>
</html>
"""

#: a static copy's own head lines: its Content-Security-Policy (no server sends one), no referrer, no icon request
_COPY_HEAD = """<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
"""
#: a static copy's data, loaded before the page's script: the copy's API (kramabench.view.bundle) and its runs
_COPY_SCRIPTS = """<script src="static/bundle.js"></script>
<script src="data/index.js"></script>
"""


def page_html(copy_csp: str | None = None) -> str:
    """The page the server serves; with ``copy_csp`` (its Content-Security-Policy) the page of a static copy:
    its links relative to its folder, no live updates, its data in scripts beside it."""
    copy = copy_csp is not None
    return _PAGE.format(
        head=_COPY_HEAD.format(csp=copy_csp) if copy else "",
        title="kramabench view (static copy)" if copy else "kramabench view",
        base="" if copy else "/",
        home="index.html" if copy else "/",
        live_title="a static copy: no live updates" if copy else "live updates",
        live="static copy" if copy else "○ connecting",
        scripts=_COPY_SCRIPTS if copy else "",
    )


__all__ = ["page_html"]
