"""docs/file-formats.md describes every saved field, and no field that is gone: its tables are checked
against the pydantic models that write manifest.json, records.jsonl, calls.jsonl and score reports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "file-formats.md"


def documented_fields(heading: str) -> set[str]:
    """The `names` in the first column of the table under ``## heading`` (up to the next ## heading)."""
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/file-formats.md has no section '## {heading}'"
    names = set()
    for line in m.group(1).splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`(\w+)`", line.split("|")[1]))
    return names


def model(name: str):
    if name == "CallRecord":
        from kramabench.models import CallRecord

        return CallRecord
    from kramabench.run import Manifest, Record

    return {"Manifest": Manifest, "Record": Record}[name]


@pytest.mark.parametrize(
    ("heading", "model_name"),
    [("manifest.json", "Manifest"), ("records.jsonl", "Record"), ("calls.jsonl", "CallRecord")],
)
def test_every_saved_field_is_documented(heading, model_name):
    fields = set(model(model_name).model_fields)
    documented = documented_fields(heading)
    assert fields, model_name
    assert not fields - documented, (
        f"{model_name} fields missing from docs/file-formats.md: {sorted(fields - documented)}"
    )
    assert not documented - fields, (
        f"docs/file-formats.md names fields {model_name} no longer has: {sorted(documented - fields)}"
    )
