"""Scripted replies for the planted workload: the system under test (DS-Guru) and the Auditor.

The system's replies are the planted pipelines of ``workloads/planted/audit_check/labels.json`` (and a
right one for lab-easy-4); the auditor's replies run code first, then give the report a careful auditor
would give. Everything the audit then claims (gold reproduced, correction verified) is checked by the
audit running the code itself, not taken from these replies.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kramabench import REPO_ROOT

PLANTED = REPO_ROOT / "workloads" / "planted"
LABELS = json.loads((PLANTED / "audit_check" / "labels.json").read_text())
TASKS = {t["id"]: t for t in json.loads((PLANTED / "workload" / "lab.json").read_text())}
AUDITOR_MARK = "You audit one failed task"

RIGHT_EASY_4 = "import json\nimport os\n\nimport pandas as pd\n\nLAKE = os.environ.get('KRAMABENCH_LAKE', 'data/lab/input')\nm = pd.read_csv(f'{LAKE}/measurements.csv')\nprint(json.dumps({'main-task': len(m)}))\n"  # noqa: E501

READ = (
    "import pandas as pd\nm = pd.read_csv('{lake}/measurements.csv')\ns = pd.read_csv('{lake}/sites.csv')\n"
)
NORTH = "j = m.merge(s, left_on='site', right_on='code')\nnorth = j[j['region'] == 'North']\n"

#: task -> (exploration code, report); {lake} is replaced by the lake folder the auditor is told
AUDIT = {
    "lab-easy-1": (
        READ + NORTH + "print(north['x'].sum(), m['x'].sum())\n",
        {
            "root_cause": "the pipeline sums x over all sites; the question asks for the North sites only",
            "attribution": "system",
            "category": "flawed-logic",
            "evidence": [
                "sum over North sites is 116 (the gold)",
                "sum over all sites is 252 (the system's answer)",
            ],
            "derivation_code": READ + NORTH + "print(int(north['x'].sum()))\n",
        },
    ),
    "lab-easy-2": (
        READ + "print(m['y'].max())\n",
        {
            "root_cause": "the gold 93.2 has its digits swapped: the largest y in the lake is 39.2",
            "attribution": "benchmark",
            "category": "gold-calculation-error",
            "evidence": ["max(y) = 39.2", "no value of 93.2 exists in any column"],
            # the mistaken computation: the right maximum with its first two digits swapped makes the gold
            "derivation_code": READ + "t = '%.1f' % m['y'].max()\nprint(t[1] + t[0] + t[2:])\n",
            "correct_answer": 39.2,
            "correct_code": READ + "print(m['y'].max())\n",
        },
    ),
    "lab-easy-3": (
        None,
        {
            "root_cause": "the system's answer 'Site S4' names the right site; string_exact compares the text",
            "attribution": "benchmark",
            "category": "evaluation-false-positive",
            "sub_kind": "format",
            "evidence": ["mean y is largest at S4"],
            "derivation_code": READ + "print(m.groupby('site')['y'].mean().idxmax())\n",
        },
    ),
    "lab-hard-1": (
        READ + NORTH + "print(round(north['y'].sum(), 1))\n",
        {
            "root_cause": "the pipeline joins the sites on the day instead of the site code",
            "attribution": "system",
            "category": "join-error",
            "evidence": ["joined by site code the North total is 228.8 (the gold)"],
            "derivation_code": READ + NORTH + "print(round(float(north['y'].sum()), 1))\n",
        },
    ),
}


def _task_of(text: str) -> str | None:
    m = re.search(r"^Task (\S+) \(domain", text, re.M)
    if m:
        return m.group(1)
    for tid, t in TASKS.items():
        if t["query"] in text:
            return tid
    return None


def _lake_of(text: str, pattern: str) -> str:
    m = re.search(pattern, text)
    assert m, "the prompt names no lake folder"
    return m.group(1)


def system_reply(request) -> str:  # noqa: ANN001
    """DS-Guru's model: the planted pipeline of the task in the prompt, with the lake folder it is told."""
    text = "\n".join(m["content"] for m in request.body["messages"])
    tid = _task_of(text)
    lake = _lake_of(text, r"The data lake is the folder (\S+) \(")
    code = next((c["system_code"] for c in LABELS["cases"] if c["task_id"] == tid), RIGHT_EASY_4)
    code = code.replace("os.environ.get('KRAMABENCH_LAKE', 'data/lab/input')", repr(lake))
    return f"```python\n{code}```"


def auditor_reply(request, overrides: dict | None = None) -> str:  # noqa: ANN001
    """The Auditor: explore once (when the script says so), then report."""
    msgs = request.body["messages"]
    text = "\n".join(m["content"] for m in msgs)
    tid = _task_of(msgs[1]["content"])
    lake = _lake_of(msgs[0]["content"], r"data lake at (\S+) \(read-only\)")
    explore, report = AUDIT[tid]
    report = dict(report, **((overrides or {}).get(tid, {})))
    if explore is not None and "Run: " not in text:
        return "Let me look at the data first.\n```python\n" + explore.format(lake=lake) + "```"
    filled = {
        k: (v.format(lake=lake) if isinstance(v, str) and k.endswith("_code") else v)
        for k, v in report.items()
    }
    return "Here is my report.\n```json\n" + json.dumps(filled) + "\n```"


def handler(overrides: dict | None = None):  # noqa: ANN201
    def handle(request):  # noqa: ANN001, ANN202
        first = request.body["messages"][0]["content"]
        if AUDITOR_MARK in first:
            return auditor_reply(request, overrides)
        return system_reply(request)

    return handle


def lake_path() -> Path:
    return PLANTED / "data" / "lab" / "input"
