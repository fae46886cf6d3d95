"""``audit reference`` proposes a class per task from what it found, by the findings, never by task name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kramabench.audit.reference import audit_reference
from kramabench.workload import load_errata, load_workload

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

T = planted._task
H = planted.HEAD
#: task id -> (solution, task, expected class, expected confidence); golds: sum x = 210, 20 rows, max y = 61
TASKS = {
    "lab-easy-1": (H + "print(int(df['x'].sum()))\n", T("lab-easy-1", "What is the sum of x?", 210, "numeric_exact"),
                   "reproduces", "likely"),
    "lab-hard-4": (H + "print((df['x'] > 10).mean())\n",
                   T("lab-hard-4", "What percentage of rows have x above 10?", 50, "numeric_exact"),
                   "solution-defect", "likely"),
    "lab-easy-3": ("print('The region with most sites is north, with 7 sites')\n",
                   T("lab-easy-3", "Which region has the most sites?", "North", "string_exact"),
                   "solution-defect", "likely"),
    "lab-easy-4": ("import pandas as pd\nprint(len(pd.read_csv('./data/lab/input/worldcities.csv')))\n",
                   T("lab-easy-4", "How many cities?", 3, "numeric_exact"), "unreproducible", "likely"),
    "lab-easy-5": ("import pandas as pd\nprint(len(pd.read_csv('./data/lab/input/Measurements.csv')))\n",
                   T("lab-easy-5", "How many rows?", 20, "numeric_exact"), "solution-defect", "likely"),
    "lab-easy-6": (H + "print(int(df['y'].max()))\n", T("lab-easy-6", "What is the largest y?", 99, "numeric_exact"),
                   "gold-defect", "candidate"),
    "lab-easy-7": (H + "print(len(df))\n",
                   T("lab-easy-7", "What is the sum of x?", 210, "numeric_exact",
                     [("Count rows.", "How many rows are there?", 20, "numeric_exact")]),
                   "solution-defect", "likely"),
    "lab-easy-8": ("print('36.7%')\n",
                   T("lab-easy-8", "What percentage of days was it open? Give an integer.", 37, "numeric_exact"),
                   "solution-defect", "likely"),
    "lab-easy-9": (H + "print(int(df['y'].max()))\n", T("lab-easy-9", "What is the largest y?", 98, "numeric_exact"),
                   "gold-defect", "likely"),
    "lab-hard-1": ("import pandas as pd\nprint(len(pd.read_csv('./data/lab/input/nowhere_at_all.csv')))\n",
                   T("lab-hard-1", "How many?", 3, "numeric_exact"), "unreproducible", "candidate"),
    "lab-hard-2": (H + "total = df['x'].sum()\n", T("lab-hard-2", "What is the sum of x?", 210, "numeric_exact"),
                   "solution-defect", "likely"),
    "lab-hard-3": ("import pandas as pd\nprint(len(pd.read_excel('./data/lab/input/big.xlsx')))\n",
                   T("lab-hard-3", "How many rows in big?", 5, "numeric_exact"), "unreproducible", "likely"),
    "lab-hard-5": ("print(True)\n",
                   T("lab-hard-5", "Is the sum of x larger or smaller than 100? Answer with True or False.", "True",
                     "string_exact"), "ambiguous", "candidate"),
    "lab-hard-6": ("print('Yes')\n",
                   T("lab-hard-6", "Is the sum of x above 100, or not? Answer Yes or No.", "Yes", "string_exact"),
                   "reproduces", "likely"),
    "lab-hard-7": ("import pandas as pd\nprint(len(pd.read_csv('./data/lab/input/pointer.csv')))\n",
                   T("lab-hard-7", "How many rows in pointer?", 500, "numeric_exact"), "unreproducible", "likely"),
    "lab-hard-8": ("import glob\nprint(len(glob.glob('./data/lab/input/gone/*.csv')))\n",
                   dict(T("lab-hard-8", "How many files in gone?", 2, "numeric_exact"), data_sources=["gone/*"]),
                   "unreproducible", "candidate"),
}  # fmt: skip

ERRATA = """
[[erratum]]
domain = "lab"
task = "lab-easy-9"
field = "answer"
old = 98
new = 41
reason = "the largest y is 41"

[[absent]]
domain = "lab"
path = "worldcities.csv"
reason = "not stored upstream"

[[absent]]
domain = "lab"
path = "gone/b.csv"
reason = "not stored upstream"

[[absent]]
domain = "lab"
path = "big.xlsx"
reason = "a git-LFS pointer upstream"
"""


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    from kramabench.sandbox.registry import get_sandbox

    root = planted.build(tmp_path_factory.mktemp("classes"), tasks={k: v[:2] for k, v in TASKS.items()})
    (root / "errata.toml").write_text(ERRATA)
    (root / "data" / "lab" / "input" / "big.xlsx").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 12345\n"
    )
    (root / "data" / "lab" / "input" / "pointer.csv").write_text(  # a pointer no errata document
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "1" * 64 + "\nsize 999\n"
    )
    (root / "data" / "lab" / "input" / "gone").mkdir()
    (root / "data" / "lab" / "input" / "gone" / "a.csv").write_text("x\n1\n")
    sb = get_sandbox("local")
    try:
        return audit_reference([load_workload(root, "lab")], sb, workload_name="lab", root=root, sandbox_name="local",
                               timeout_s=30)  # fmt: skip
    finally:
        sb.close()


@pytest.mark.slow
def test_each_finding_gets_its_class(audit) -> None:  # noqa: ANN001
    got = {p.task_id: (p.klass, p.confidence) for p in audit.proposals}
    assert got == {tid: (v[2], v[3]) for tid, v in TASKS.items()}
    by = {p.task_id: p for p in audit.proposals}
    assert by["lab-easy-4"].absent == ["worldcities.csv"] and by["lab-hard-3"].absent == ["big.xlsx"]
    assert "Measurements.csv" in by["lab-easy-5"].why and "measurements.csv" in by["lab-easy-5"].why
    assert "a fraction where the gold is a percentage" in by["lab-hard-4"].why
    assert "lab-easy-7-1" in by["lab-easy-7"].why
    assert "corrected gold 41" in by["lab-easy-9"].why
    assert "larger or smaller" in by["lab-hard-5"].why
    assert by["lab-hard-7"].absent == ["pointer.csv"] and "git-LFS pointer" in by["lab-hard-7"].why
    assert by["lab-hard-8"].absent == ["gone/b.csv"]


@pytest.mark.slow
def test_proposed_reviews_file_is_a_draft_that_loads_once_uncommented(audit, tmp_path: Path) -> None:  # noqa: ANN001
    from kramabench.audit.classes import write_proposed_reviews

    path = write_proposed_reviews(tmp_path / "reviews-proposed.toml", audit.proposals)
    text = path.read_text()
    assert load_errata(path).reviews == []  # all commented out: nothing is a review until a person says so
    keep = [p.task_id for p in audit.proposals if p.klass in ("reproduces", "solution-defect")]
    blocks = [b for b in text.split("\n\n") if any(f'task = "{t}"' in b for t in keep)]
    uncommented = "\n\n".join("\n".join(ln[2:] for ln in b.splitlines() if ln.startswith("# ") and "=" in ln
                                        or ln == "# [[review]]") for b in blocks)  # fmt: skip
    (tmp_path / "reviews.toml").write_text(uncommented.replace("[[review]]", "\n[[review]]"))
    ef = load_errata(tmp_path / "reviews.toml")
    assert sorted(r.task for r in ef.reviews) == sorted(keep)


def test_upstream_listing_names_the_files_it_does_not_store() -> None:
    """The two domains not in ../shared are covered too: their unstored files come from the shipped listing."""
    from kramabench.audit.classes import upstream_not_stored, yes_no_alternatives

    assert "usa.gpkg" in upstream_not_stored("wildfire")
    assert any(p.startswith("swarmb/") for p in upstream_not_stored("astronomy"))
    assert upstream_not_stored("archeology") == ["worldcities.csv"] and upstream_not_stored("legal") == []
    assert yes_no_alternatives(
        "Is the year different or the same as 2007? Answer with True or False.", "False"
    )
    assert yes_no_alternatives("Is it the same year? Answer with True or False.", "False") is None
    assert yes_no_alternatives("Is it different or the same?", 2007) is None  # not a yes/no gold
