"""The deliberate differences the ``elt`` setting records for how S3 sources are served."""

from __future__ import annotations

import pytest

from kramabench.elt.sources import SourceOptions


def test_s3_as_files_says_why_chosen_or_moto_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """-S s3=files is a choice: the recorded difference says so, never that moto is missing (it is installed)."""
    from kramabench.elt.sources import s3, sourceset

    chosen = SourceOptions(s3="files").differences(["s3"])
    assert any("chosen: -S s3=files" in d for d in chosen) and not any(
        "moto is not installed" in d for d in chosen
    )
    monkeypatch.setattr(s3, "s3_server_available", lambda: False)
    auto = SourceOptions().differences(["s3"])
    assert sourceset.S3_AS_FILES in auto and "moto is not installed" in sourceset.S3_AS_FILES
