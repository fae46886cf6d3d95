"""``audit reference`` runs each kind of reference solution the way its author ran it, or says why it cannot.

Synthetic solutions over the planted ``lab`` lake (tests/audit/planted.py), one per kind: notebook cells
ending in a bare expression (a DataFrame, a ranking Series, a scalar, a print before the expression),
solutions written for another folder (``../../data/<domain>/input``, ``../../../input``, ``./input``,
inside the lake, a layout only their error shows), and the ways a solution cannot run (a missing lake
file, an empty glob match, a missing package, a wrong letter case, a plain bug).
"""

from __future__ import annotations

import sys
from io import StringIO
from pathlib import Path

import pytest

from kramabench.audit.reference import audit_reference
from kramabench.workload import load_workload

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

pytestmark = pytest.mark.slow

HEAD = planted.HEAD


def _task(tid: str, query: str, answer, answer_type: str, sources=("measurements.csv",)) -> dict:  # noqa: ANN001
    return {**planted._task(tid, query, answer, answer_type), "data_sources": list(sources)}


KINDS = {
    # notebook cells: the last line is a bare expression
    "lab-easy-1": (HEAD + "df.groupby('site').agg({'x': 'sum', 'y': 'max'}).reset_index()\n",
                   _task("lab-easy-1", "Which site has the largest total x?", "S2", "string_exact")),
    "lab-easy-10": (HEAD + "df.groupby('site')['x'].sum().sort_values(ascending=False)\n",
                   _task("lab-easy-10", "Which site has the largest total x?", "S2", "string_exact")),
    "lab-easy-3": (HEAD + "df['x'].sum()\n", _task("lab-easy-3", "What is the sum of x?", 210, "numeric_exact")),
    "lab-easy-4": (HEAD + "print('rows:', len(df))\ndf['y'].max()\n",
                   _task("lab-easy-4", "What is the largest y?", 41, "numeric_exact")),
    "lab-easy-5": (HEAD + "import sys\nprint(int(df['x'].sum()))\nsys.exit(0)\n",
                   _task("lab-easy-5", "What is the sum of x?", 210, "numeric_exact")),
    # other layouts of the lake
    "lab-easy-6": ("import pandas as pd\ndata_path = '../../data/lab/input/'\n"
                   "df = pd.read_csv(data_path + 'measurements.csv')\nprint(len(df))\n",
                   _task("lab-easy-6", "How many rows?", 20, "numeric_exact")),
    "lab-easy-7": ("import pandas as pd\nfrom pathlib import Path\nBASE = Path('../../../input')\n"
                   "df = pd.read_csv(BASE / 'measurements.csv')\nprint(df['x'].sum())\n",
                   _task("lab-easy-7", "What is the sum of x?", 210, "numeric_exact")),
    "lab-easy-8": ("import pandas as pd\nprint(len(pd.read_csv('./input/sites.csv')))\n",
                   _task("lab-easy-8", "How many sites?", 3, "numeric_exact", ["sites.csv"])),
    "lab-easy-9": ("import pandas as pd\nprint(len(pd.read_csv('measurements.csv')))\n",
                   _task("lab-easy-9", "How many rows?", 20, "numeric_exact")),
    "lab-hard-1": ("import os\nimport pandas as pd\nbase = '/'.join(['..', '..', 'input'])\n"
                   "print(len(pd.read_csv(os.path.join(base, 'measurements.csv'))))\n",
                   _task("lab-hard-1", "How many rows?", 20, "numeric_exact")),
    "lab-easy-11": ("import pandas as pd\na = pd.read_csv('../../data/lab/input/measurements.csv')\n"
                    "b = pd.read_csv('./input/sites.csv')\nlen(a) + len(b)\n",
                    _task("lab-easy-11", "Rows of both files?", 23, "numeric_exact", ["measurements.csv", "sites.csv"])),
    # cannot run
    "lab-hard-2": ("import pandas as pd\nw = pd.read_csv('./data/lab/input/worldcities.csv')\nprint(len(w))\n",
                   _task("lab-hard-2", "How many world cities?", 3, "numeric_exact", ["worldcities.csv"])),
    "lab-hard-3": ("import glob\nimport pandas as pd\nfiles = sorted(glob.glob('./data/lab/input/archive/*.csv'))\n"
                   "df = pd.concat([pd.read_csv(f) for f in files])\nprint(len(df))\n",
                   _task("lab-hard-3", "How many archived rows?", 40, "numeric_exact", ["archive/*.csv"])),
    "lab-hard-4": ("import os\nimport pandas as pd\nbase = './data/lab/input/'\n"
                   "names = [f for f in os.listdir(base) if f.startswith('archive_')]\n"
                   "df = pd.concat([pd.read_csv(base + f) for f in names])\nprint(len(df))\n",
                   _task("lab-hard-4", "How many archived rows?", 40, "numeric_exact", ["archive_*.csv"])),
    "lab-hard-5": ("import geopandas_not_installed_here\nprint(1)\n",
                   _task("lab-hard-5", "How many polygons?", 1, "numeric_exact")),
    "lab-hard-6": ("import pandas as pd\nprint(len(pd.read_csv('./data/lab/input/Measurements.csv')))\n",
                   _task("lab-hard-6", "How many rows?", 20, "numeric_exact")),
    "lab-hard-7": (HEAD + "print(int(df['x'].sum()) / (len(df) - 20))\n",
                   _task("lab-hard-7", "What is the sum of x?", 210, "numeric_exact")),
}  # fmt: skip


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    from kramabench.sandbox.registry import get_sandbox

    root = planted.build(tmp_path_factory.mktemp("kinds"), tasks=KINDS)
    sb = get_sandbox("local")
    try:
        wl = load_workload(root, "lab")
        yield audit_reference([wl], sb, workload_name="lab", root=root, sandbox_name="local", timeout_s=60)
    finally:
        sb.close()


def _of(audit, tid: str):  # noqa: ANN001, ANN202
    run = next(r for r in audit.runs if r.task_id == tid)
    item = next(i for i in audit.tasks() if i.task_id == tid)
    return run, item


def test_a_bare_dataframe_is_shown_and_read_as_the_output(audit) -> None:  # noqa: ANN001
    import pandas as pd

    run, item = _of(audit, "lab-easy-1")
    assert run.exit_code == 0 and run.read_from == "value" and not run.stdout_tail.strip()
    frame = (
        pd.read_csv(StringIO(planted.MEASUREMENTS))
        .groupby("site")
        .agg({"x": "sum", "y": "max"})
        .reset_index()
    )
    assert run.value.split() == repr(frame).split()  # the frame's text, as a notebook shows it
    # a table with no one answer in it: judged by a person (or --extract-model), never "prints nothing"
    assert (
        item.verdict == "unscored" and item.cause is None and item.cause_detail.startswith("no answer read")
    )
    proposal = next(p for p in audit.proposals if p.task_id == "lab-easy-1")
    assert proposal.klass == "solution-defect" and "no answer that can be read" in proposal.why


def test_a_ranking_series_a_scalar_and_a_print_before_the_expression(audit) -> None:  # noqa: ANN001
    run, item = _of(audit, "lab-easy-10")
    assert run.read_from == "value" and item.verdict == "reproduces" and item.extraction.value == "S2"
    assert "first label" in item.extraction.note
    run, item = _of(audit, "lab-easy-3")
    assert run.read_from == "value" and run.value.strip() in ("np.int64(210)", "210")
    assert item.verdict == "reproduces" and item.extraction.method == "bare-value"
    run, item = _of(audit, "lab-easy-4")
    assert run.read_from == "printed+value" and run.stdout_tail.strip() == "rows: 20"
    assert item.verdict == "reproduces" and item.extraction.value == 41  # the value, shown after the print
    run, item = _of(audit, "lab-easy-5")  # sys.exit(0) ends a script well
    assert run.exit_code == 0 and run.read_from == "printed" and item.verdict == "reproduces"


@pytest.mark.parametrize(
    ("tid", "prefix", "lake_at", "cwd"),
    [
        ("lab-easy-6", "../../data/lab/input", "data/lab/input", "solutions/lab"),
        ("lab-easy-7", "../../../input", "input", "solutions/lab/d3"),
        ("lab-easy-8", "./input", "input", "."),
        ("lab-easy-9", "", "data/lab/input", "data/lab/input"),
        ("lab-hard-1", "../../input", "input", "solutions/lab"),
        ("lab-easy-11", "../../data/lab/input", "data/lab/input", "solutions/lab"),  # and ./input, by a link
    ],
)
def test_solutions_run_from_where_their_paths_resolve(
    audit, tid: str, prefix: str, lake_at: str, cwd: str
) -> None:  # noqa: ANN001
    run, item = _of(audit, tid)
    assert item.verdict == "reproduces", (tid, item.cause, item.cause_detail, run.stderr_tail[-300:])
    assert (run.layout.prefix, run.layout.lake_at, run.layout.cwd) == (prefix, lake_at, cwd)
    assert not run.layout.standard
    assert run.files_read, "the lake files it read are recorded"
    if tid == "lab-easy-11":
        assert run.layout.also == ["./input"] and run.read_from == "value"
    if tid == "lab-hard-1":  # a folder the code computes: the layout comes from the path its first run named
        assert (
            "error" in run.layout.inferred_from and "../../input/measurements.csv" in run.layout.inferred_from
        )


def test_every_cannot_run_names_its_cause_in_the_benchmarks_terms(audit) -> None:  # noqa: ANN001
    expected = {
        "lab-hard-2": ("missing-lake-file", "missing-lake-file"),
        "lab-hard-3": ("missing-lake-file", "missing-lake-file"),
        "lab-hard-4": ("missing-lake-file", "missing-lake-file"),
        "lab-hard-5": ("missing-module", "missing-package"),
        "lab-hard-6": ("wrong-path", "solution-bug"),
        "lab-hard-7": ("crash", "solution-bug"),
    }
    got = {t: (i.cause, i.attributed_to) for t in expected for i in [_of(audit, t)[1]]}
    assert got == expected
    assert all(i.verdict == "cannot-run" for t in expected for i in [_of(audit, t)[1]])
    run, item = _of(audit, "lab-hard-2")
    assert "worldcities.csv: not in the lake" in run.evidence
    assert any(f.startswith("data_source_missing") for f in run.findings)  # the validator's finding, linked
    run, item = _of(audit, "lab-hard-3")  # an empty glob match, then a crash that says nothing of files
    assert "No objects to concatenate" in item.cause_detail and "archive/*.csv" in item.cause_detail
    assert run.cause_files == ["archive/*.csv"]
    assert any("data_source_missing" in f and "archive/*.csv" in f for f in run.findings)
    run, item = _of(
        audit, "lab-hard-4"
    )  # the pattern is in no literal: the task's missing data source says it
    assert "archive_*.csv" in item.cause_detail and "No objects to concatenate" in item.cause_detail
    assert any("data_source_missing" in e for e in run.evidence)
    run, item = _of(audit, "lab-hard-6")
    assert (
        "'Measurements.csv'" not in item.cause_detail
        and "the lake has 'measurements.csv'" in item.cause_detail
    )
    run, item = _of(audit, "lab-hard-7")
    assert "ZeroDivisionError" in item.cause_detail
    for tid in ("lab-hard-2", "lab-hard-3", "lab-hard-4"):
        p = next(p for p in audit.proposals if p.task_id == tid)
        assert p.klass == "unreproducible" and p.absent, (tid, p)
    for tid in ("lab-hard-6", "lab-hard-7"):
        assert next(p for p in audit.proposals if p.task_id == tid).klass == "solution-defect"
    # nothing is called "prints nothing" or "path layout": those were the audit's own failures
    assert not {i.cause for i in audit.items} & {"prints-nothing", "path-layout"}


@pytest.mark.docker
def test_the_same_runs_in_the_docker_sandbox() -> None:
    """A layout two folders down, a second prefix served by a link, a notebook value, an empty match: the same
    outcomes in a container (a lake mounted read-only, the links and folders made in its workspace)."""
    import os
    import shutil
    import tempfile

    from kramabench.contracts.sandbox import SandboxUnavailable
    from kramabench.sandbox.registry import get_sandbox

    tasks = {t: KINDS[t] for t in ("lab-easy-4", "lab-easy-6", "lab-easy-11", "lab-hard-1", "lab-hard-3")}
    base = Path(tempfile.mkdtemp(prefix="kb-audit-kinds-"))  # pytest's own tmp folders are 0700
    try:
        root = planted.build(base / "lab", tasks=tasks)
        planted.world_readable(base)  # the docker backend runs as nobody: a readable lake
        try:
            sb = get_sandbox("docker")
        except SandboxUnavailable as exc:
            if os.environ.get("CI") == "true":
                pytest.fail(f"docker sandbox unavailable in CI: {exc}")
            pytest.skip(f"docker sandbox unavailable: {exc}")
        try:
            audit = audit_reference([load_workload(root, "lab")], sb, workload_name="lab", root=root,
                                    sandbox_name="docker", timeout_s=120)  # fmt: skip
        finally:
            sb.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    got = {i.task_id: (i.verdict, i.cause) for i in audit.tasks()}
    assert got == {"lab-easy-4": ("reproduces", None), "lab-easy-6": ("reproduces", None),
                   "lab-hard-1": ("reproduces", None), "lab-hard-3": ("cannot-run", "missing-lake-file"),
                   "lab-easy-11": ("reproduces", None)}, [(r.task_id, r.cause_detail, r.stderr_tail[-300:]) for r in audit.runs]  # fmt: skip
    run, _item = _of(audit, "lab-easy-11")
    assert run.layout.also == ["./input"] and run.read_from == "value"
    assert _of(audit, "lab-easy-4")[0].read_from == "printed+value"


def test_the_page_shows_how_each_ran_and_the_evidence(audit, tmp_path: Path) -> None:  # noqa: ANN001
    from kramabench.audit.report import sections, write_report

    secs = {name: rows for name, _h, rows, _n in sections(audit)}
    ran = {r[1]: r for r in secs["How solutions were run"]}
    assert "lake at ../../data/lab/input, run from solutions/lab/" in ran["lab-easy-6"][2]
    assert ran["lab-easy-3"][4] == "the value of its last expression" and "210" in ran["lab-easy-3"][5]
    why = {r[1]: r for r in secs["Cannot run: the evidence"]}
    assert why["lab-hard-3"][2] == "missing-lake-file" and "data_source_missing" in why["lab-hard-3"][5]
    assert why["lab-hard-5"][2] == "missing-package"
    assert {r[0] for r in secs["Why solutions cannot run"]} == {
        "missing-lake-file",
        "missing-package",
        "solution-bug",
    }
    md, _page = write_report(tmp_path, "kinds", ref=audit)
    assert "How solutions were run" in Path(md).read_text()
