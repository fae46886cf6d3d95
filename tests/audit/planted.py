"""A small workload in the official layout, built by the tests, with planted defects.

Domain ``lab``: a lake of two CSV files and tasks whose reference solutions print in each official
style (a JSON object, a bare value, prose) or fail in each way the audit names (missing lake file,
missing module, an absolute path of the author's machine, library version, timeout, printing nothing). ``lab-easy-3``'s gold is
planted wrong (a benchmark error); the others' golds are right.
"""

from __future__ import annotations

import json
from pathlib import Path

MEASUREMENTS = "site,x,y\n" + "".join(f"S{i % 3},{i},{2 * i + (i % 4)}\n" for i in range(1, 21))
SITES = "site,region\nS0,North\nS1,South\nS2,North\n"


def _task(tid: str, query: str, answer, answer_type: str, subtasks=()) -> dict:  # noqa: ANN001
    return {
        "id": tid, "query": query, "answer": answer, "answer_type": answer_type,
        "data_sources": ["measurements.csv"],
        "subtasks": [
            {"id": f"{tid}-{i}", "step": s[0], "query": s[1], "answer": s[2], "answer_type": s[3],
             "data_sources": ["measurements.csv"]}
            for i, s in enumerate(subtasks, start=1)
        ],
    }  # fmt: skip


HEAD = "import pandas as pd\ndf = pd.read_csv('./data/lab/input/measurements.csv')\n"
#: task id -> (solution code, task JSON)
TASKS = {
    "lab-easy-1": (
        HEAD
        + "import json\nprint(json.dumps({'main-task': int(df['x'].sum()), 'subtask-1': int(len(df))}))\n",
        _task(
            "lab-easy-1",
            "What is the sum of x?",
            210,
            "numeric_exact",
            [("Count rows.", "How many measurements are there?", 20, "numeric_exact")],
        ),
    ),
    "lab-easy-2": (
        HEAD + "r = df['x'].corr(df['y'])\nprint(f'Correlation coefficient: {r:.3f}')\n",
        _task(
            "lab-easy-2",
            "What is the Pearson correlation of x and y? Round to 3 decimal places.",
            None,
            "numeric_approximate",
        ),
    ),
    "lab-easy-3": (  # the gold is planted wrong: the solution is right
        HEAD + "print(df['y'].max())\n",
        _task("lab-easy-3", "What is the largest y?", 99, "numeric_exact"),
    ),
    "lab-easy-4": (
        "import pandas as pd\nw = pd.read_csv('./data/lab/input/worldcities.csv')\nprint(len(w))\n",
        _task("lab-easy-4", "How many world cities are listed?", 3, "numeric_exact"),
    ),
    "lab-easy-5": (
        "import geopandas_not_installed_here\nprint(1)\n",
        _task("lab-easy-5", "How many polygons?", 1, "numeric_exact"),
    ),
    "lab-easy-6": (
        "import pandas as pd\ndf = pd.read_csv('/Users/someone/Kramabench/measurements.csv')\nprint(len(df))\n",
        _task("lab-easy-6", "How many rows?", 20, "numeric_exact"),
    ),
    "lab-easy-7": (
        "import pandas as pd\nprint(pd.np.mean([1, 2]))\n",
        _task("lab-easy-7", "What is the mean of 1 and 2?", 1.5, "numeric_exact"),
    ),
    "lab-hard-1": (
        "import time\ntime.sleep(60)\nprint(1)\n",
        _task("lab-hard-1", "What is one?", 1, "numeric_exact"),
    ),
    "lab-hard-2": (
        HEAD + "total = df['x'].sum()\n",
        _task("lab-hard-2", "What is the sum of x?", 210, "numeric_exact"),
    ),
}


def build(root: Path, *, tasks: dict | None = None) -> Path:
    """Write the workload under ``root`` (official layout) and return ``root``."""
    tasks = TASKS if tasks is None else tasks
    lake = root / "data" / "lab" / "input"
    lake.mkdir(parents=True, exist_ok=True)
    (lake / "measurements.csv").write_text(MEASUREMENTS)
    (lake / "sites.csv").write_text(SITES)
    (root / "workload").mkdir(exist_ok=True)
    sol = root / "solutions" / "lab"
    sol.mkdir(parents=True, exist_ok=True)
    entries = []
    for tid, (code, task) in tasks.items():
        (sol / f"{tid}.py").write_text(code)
        entries.append(task)
    # lab-easy-2's gold is the true correlation (computed here, not by the solution)
    from io import StringIO

    import pandas as pd

    df = pd.read_csv(StringIO(MEASUREMENTS))
    for e in entries:
        if e["id"] == "lab-easy-2":
            e["answer"] = round(float(df["x"].corr(df["y"])), 3)
    (root / "workload" / "lab.json").write_text(json.dumps(entries, indent=1))
    return root


def world_readable(base: Path) -> None:
    """Folders and files under ``base`` readable by anyone: the docker backend runs the code as nobody (pytest's
    own tmp folders are 0700)."""
    import os

    os.chmod(base, 0o755)
    for dirpath, _dirs, files in os.walk(base):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)
