"""Files shown whole (a task's specification, kramabench.lake.whole): every file whole when they fit the budget;
otherwise shared max-min fairly, a cut file keeping its first lines and saying how many; secrets masked; a file
that cannot be shown says why."""

from __future__ import annotations

import os
from pathlib import Path

from kramabench.lake import estimate_tokens, whole_files


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "config.yaml").write_text(
        "postgres:\n  config:\n    user: postgres\n    password: Zq9-unguessable-x\n"
        "warehouse:\n  path: shop.duckdb\n"
    )
    (tmp_path / "data_model.yaml").write_text(
        "".join(f"- name: model_{i}\n  description: the {i}th model\n" for i in range(200))
    )
    (tmp_path / "schemas" / "orders.csv").write_text("column_name,column_description\norder_id,the order\n")
    return tmp_path


def test_every_file_whole_when_they_fit(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    shown = whole_files(root, ["config.yaml", "data_model.yaml", "schemas/orders.csv"], budget_tokens=100_000)
    assert [f.path for f in shown] == ["config.yaml", "data_model.yaml", "schemas/orders.csv"]
    assert not any(f.cut for f in shown) and [f.lines_shown for f in shown] == [6, 400, 2]
    assert shown[2].text == (root / "schemas" / "orders.csv").read_text()
    # the password masked, nothing else of the file changed
    assert "Zq9-unguessable-x" not in shown[0].text and "password: [MASKED]" in shown[0].text
    assert shown[0].masked == ["password"] and "path: shop.duckdb" in shown[0].text


def test_a_small_budget_is_shared_fairly_and_a_cut_file_says_how_much_it_shows(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    shown = whole_files(root, ["config.yaml", "data_model.yaml", "schemas/orders.csv"], budget_tokens=400)
    config, model, schema = shown
    assert not config.cut and not schema.cut  # the small files whole
    assert model.cut and 0 < model.lines_shown < model.lines_total == 400
    assert model.text == "".join(
        (root / "data_model.yaml").read_text().splitlines(keepends=True)[: model.lines_shown]
    )
    assert sum(f.tokens for f in shown) <= 400 and model.tokens == estimate_tokens(model.text)


def test_a_file_that_cannot_be_shown_says_why(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    (root / "binary.yaml").write_bytes(b"\xff\xfe\x00bad")
    os.symlink("/etc/passwd", root / "out.yaml")
    shown = {
        f.path: f for f in whole_files(root, ["binary.yaml", "out.yaml", "missing.yaml"], budget_tokens=1000)
    }
    assert "UTF-8" in (shown["binary.yaml"].error or "")
    assert shown["out.yaml"].error == "not inside the folder" and shown["out.yaml"].text == ""
    assert shown["missing.yaml"].error and not shown["missing.yaml"].cut
