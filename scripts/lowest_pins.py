"""Print pip constraints that pin every dependency of pyproject.toml (with the dev and ray extras) to the
oldest release its lower bound allows: ``pandas>=2.0`` -> ``pandas==2.0.*``, ``hypothesis>=6`` ->
``hypothesis==6.0.*``, ``typer~=0.29.2`` -> ``typer==0.29.2``. The test suite must pass with these as with
the newest releases (docs/development.md):

    python scripts/lowest_pins.py > /tmp/lowest.txt
    python3.10 -m venv /tmp/lowest && /tmp/lowest/bin/pip install -c /tmp/lowest.txt -e ".[dev]"
    /tmp/lowest/bin/python -m pytest
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(\[[^\]]*\])?\s*([^;]*?)\s*(;.*)?$")


def lowest(requirement: str) -> str | None:
    """The constraint of one requirement string, or None (no lower bound, or kramabench itself)."""
    m = _REQ.match(requirement)
    if not m:
        raise ValueError(f"cannot read requirement {requirement!r}")
    name, _, spec, marker = m.groups()
    if name.lower() == "kramabench":
        return None
    bound = re.search(r"(~=|>=|==)\s*([0-9][0-9A-Za-z.]*)", spec)
    if bound is None:
        return None
    op, version = bound.groups()
    parts = version.split(".")
    if op == "==" or len(parts) >= 3:
        pin = f"=={version}"
    else:
        pin = f"=={'.'.join(parts + ['0'] * (2 - len(parts)))}.*"
    return f"{name}{pin}{marker or ''}"


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    seen: set[str] = set()
    for r in reqs:
        line = lowest(r)
        if line and line not in seen:
            seen.add(line)
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
