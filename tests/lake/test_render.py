"""Rendering under a shared token budget."""

from __future__ import annotations

from pathlib import Path

from kramabench.lake import LakeIndex, LakeOptions, estimate_tokens


def _lake(tmp_path: Path, n_files: int, n_rows: int, width: int = 4, same_columns: bool = False) -> Path:
    root = tmp_path / f"lake{n_files}x{n_rows}"
    root.mkdir()
    for f in range(n_files):
        lines = [",".join(f"col{j}" if same_columns else f"f{f}col{j}" for j in range(width))]
        lines += [",".join(f"v{f}_{i}_{j}" for j in range(width)) for i in range(n_rows)]
        (root / f"file{f:04d}.csv").write_text("\n".join(lines) + "\n")
    return root


def test_whole_table_under_n_rows_else_first_n(tmp_path: Path) -> None:
    root = _lake(tmp_path, 1, 3)
    idx = LakeIndex.build(root, LakeOptions(max_rows=5), cache_dir=False)
    text = idx.render(budget_tokens=100_000).text
    assert "all 3 rows: lines 1-4 of 4 as in the file (the header on line 1):\n```\nf0col0,f0col1" in text
    assert "v0_2_3" in text
    root2 = _lake(tmp_path, 1, 50)
    idx2 = LakeIndex.build(root2, LakeOptions(max_rows=5), cache_dir=False)
    text2 = idx2.render(budget_tokens=100_000).text
    assert "the first 5 of 50 rows: lines 1-6 of 51 as in the file (the header on line 1):" in text2
    assert "v0_4_0" in text2 and "v0_5_0" not in text2


def test_budget_is_respected_and_shared_fairly(tmp_path: Path) -> None:
    root = _lake(tmp_path, 30, 40, width=8)
    idx = LakeIndex.build(root, cache_dir=False)
    full = idx.render(budget_tokens=10**9)
    for budget in (1500, 3000, 6000, 12000):
        r = idx.render(budget_tokens=budget)
        assert r.tokens <= budget
        assert estimate_tokens(r.text) <= budget
        assert r.mode == "detail"
        # every file is named; detail is shared (a common cap, then the leftover in small steps)
        for f in range(30):
            assert f"file{f:04d}.csv" in r.text
        # (the level of the first row also carries its label and the code fence: one step costlier)
        assert max(r.levels.values()) - min(r.levels.values()) <= 3
        if budget >= 6000:
            assert min(r.levels.values()) >= 1  # everyone gets its columns before anyone gets rows
    assert idx.render(budget_tokens=12000).tokens < full.tokens


def test_small_files_keep_detail_next_to_a_huge_one(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    root.mkdir()
    (root / "small.csv").write_text("a,b\n1,2\n3,4\n")
    wide = ",".join(f"c{j}" for j in range(300))
    rows = "\n".join(",".join(f"x{i}{j}" for j in range(300)) for i in range(20))
    (root / "wide.csv").write_text(wide + "\n" + rows + "\n")
    idx = LakeIndex.build(root, cache_dir=False)
    r = idx.render(budget_tokens=2000)
    assert r.tokens <= 2000
    assert (
        "all 2 rows: lines 1-3 of 3 as in the file" in r.text and "3,4" in r.text
    )  # the small file is shown whole
    assert "wide.csv" in r.text


def test_same_column_files_of_a_folder_are_shown_once(tmp_path: Path) -> None:
    root = _lake(tmp_path, 5, 30, same_columns=True)
    (root / "other.csv").write_text("x,y\n1,2\n")
    idx = LakeIndex.build(root, cache_dir=False)
    r = idx.render(budget_tokens=100_000, path_prefix="/lake")
    assert r.mode == "detail"
    assert r.text.count("columns:\n") == 2  # file0000.csv for the five, and other.csv
    assert (
        "+ 4 more files in /lake/ with the same columns: file0001.csv (30 rows), file0002.csv (30 rows)"
        in r.text
    )
    (tmp_path / "two").mkdir()
    two = _lake(tmp_path / "two", 2, 3, same_columns=True)
    assert LakeIndex.build(two, cache_dir=False).render(budget_tokens=100_000).text.count("columns:\n") == 2


def test_many_files_with_one_schema_are_grouped(tmp_path: Path) -> None:
    root = _lake(tmp_path, 400, 2, same_columns=True)
    (root / "other.csv").write_text("x,y\n1,2\n")
    idx = LakeIndex.build(root, cache_dir=False)
    r = idx.render(budget_tokens=1000)
    assert estimate_tokens(r.text) <= 1000
    assert (
        "file0000.csv" in r.text
        and "+ 399 more files with the same columns" in r.text
        and "other.csv" in r.text
    )
    assert "(all named file0*.csv)" in r.text


def test_too_many_different_files_fall_back_to_a_name_list(tmp_path: Path) -> None:
    root = tmp_path / "varied"
    root.mkdir()
    for i in range(400):
        (root / f"f{i:03d}.csv").write_text(f"c{i},d{i}\n1,2\n")
    idx = LakeIndex.build(root, cache_dir=False)
    r = idx.render(budget_tokens=1000)
    assert r.mode == "names" and estimate_tokens(r.text) <= 1000
    assert "f000.csv" in r.text and "more files not listed" in r.text


def test_without_content_no_cell_value_appears(tmp_path: Path) -> None:
    root = _lake(tmp_path, 3, 5)
    idx = LakeIndex.build(root, cache_dir=False)
    text = idx.render(budget_tokens=10_000, content=False, path_prefix="/data").text
    assert "/data/file0000.csv" in text
    assert "f0col0" not in text and "v0_" not in text


def test_render_of_a_cached_index_is_fast_enough_to_repeat(tmp_path: Path) -> None:
    root = _lake(tmp_path, 50, 20)
    idx = LakeIndex.build(root, cache_dir=False)
    a = idx.render(budget_tokens=4000, path_prefix="/lake")
    b = idx.render(budget_tokens=4000, path_prefix="/lake")
    assert a.text == b.text  # deterministic, second one served from the prepared renders
    assert a.text.startswith("- /lake/file0000.csv")
