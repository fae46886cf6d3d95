"""A synthetic workload in the official layout, plus scripted systems, for runner tests and bench/runner.py.

Each task's query carries its own answer (``... [answer=<json>]``) so that a scripted system can answer
deterministically without a model; ``[crash]`` makes it raise, ``[none]`` makes it return no answer,
``[sleep=S]`` makes it take S seconds, ``[gate=PATH]`` makes it wait until PATH exists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

SYSTEM_MODULE = '''
import json, os, re, time
from kramabench.contracts.system import SystemOutput, SystemUsage

class Scripted:
    name = "scripted"

    def __init__(self, delay: float = 0.0, wrong: bool = False):
        self.delay = float(delay)
        self.wrong = wrong

    def solve(self, task):
        q = task.query
        m = re.search(r"\\[sleep=([0-9.]+)\\]", q)
        time.sleep(float(m.group(1)) if m else self.delay)
        g = re.search(r"\\[gate=(.*?)\\]", q)
        while g and not os.path.exists(g.group(1)):  # blocks until the test opens the gate
            time.sleep(0.02)
        if "[crash]" in q:
            raise RuntimeError("scripted crash")
        if "[none]" in q:
            return SystemOutput()
        ans = json.loads(re.search(r"\\[answer=(.*?)\\]", q).group(1))
        if self.wrong and isinstance(ans, (int, float)):
            ans = ans * 2 + 1
        subs = {}
        for st in task.subtasks or []:
            sm = re.search(r"\\[answer=(.*?)\\]", st.query)
            subs[st.key] = json.loads(sm.group(1))
        return SystemOutput(answer=ans, subtask_answers=subs,
                            usage=SystemUsage(prompt_tokens=10, completion_tokens=5, cost_usd=0.001, model_calls=1))


class Modelled:
    """Asks its model for the answer (one call per task): for tests of model recording and replay."""

    name = "modelled"

    def __init__(self, model, delay: float = 0.0):
        self.model = model
        self.delay = float(delay)

    def solve(self, task):
        from kramabench.contracts.model import ChatMessage

        time.sleep(self.delay)
        g = re.search(r"\\[gate=(.*?)\\]", task.query)
        while g and not os.path.exists(g.group(1)):
            time.sleep(0.02)
        c = self.model.complete([ChatMessage(role="user", content=task.query)])
        return SystemOutput(answer=json.loads(c.text), transcript=[{"text": c.text}],
                            usage=SystemUsage(prompt_tokens=c.usage.prompt_tokens,
                                              completion_tokens=c.usage.completion_tokens,
                                              cost_usd=c.cost_usd, model_calls=1))
'''


def write_system_module(folder: Path, name: str = "kb_scripted") -> str:
    """Write the scripted system as an importable module in ``folder``; returns ``module:Class``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(SYSTEM_MODULE)
    return f"{name}:Scripted"


def make_workload(
    root: Path,
    domain: str = "synth",
    n: int = 10,
    *,
    crash: tuple[int, ...] = (),
    none: tuple[int, ...] = (),
    sleep: dict[int, float] | None = None,
    gate: tuple[tuple[int, ...], Path] | None = None,
    solutions: bool = False,
) -> Path:
    """Write ``<root>/workload/<domain>.json`` and a small lake; returns root."""
    sleep = sleep or {}
    lake = root / "data" / domain / "input"
    (lake / "sub").mkdir(parents=True, exist_ok=True)
    (lake / "numbers.csv").write_text("k,v\n" + "".join(f"{i},{i * 3}\n" for i in range(n)))
    (lake / "sub" / "notes.txt").write_text("nothing to see\n")
    (lake / ".DS_Store").write_bytes(b"\0junk")
    (root / "workload").mkdir(parents=True, exist_ok=True)
    tasks = []
    for i in range(n):
        tid = f"{domain}-easy-{i + 1}"
        flags = ""
        if i in crash:
            flags += " [crash]"
        if i in none:
            flags += " [none]"
        if i in sleep:
            flags += f" [sleep={sleep[i]}]"
        if gate and i in gate[0]:
            flags += f" [gate={gate[1]}]"
        tasks.append(
            {
                "id": tid,
                "query": f"What is v for k={i}? [answer={i * 3}]{flags}",
                "answer": i * 3,
                "answer_type": "numeric_exact",
                "data_sources": ["numbers.csv"],
                "subtasks": [
                    {
                        "id": f"{tid}-1",
                        "query": 'Which file holds v? [answer="numbers.csv"]',
                        "step": "find the file",
                        "answer": "numbers.csv",
                        "answer_type": "string_exact",
                        "data_sources": ["numbers.csv"],
                    },
                    {
                        "id": f"{tid}-2",
                        "query": f"How many rows? [answer={n}]",
                        "step": "count rows",
                        "answer": n,
                        "answer_type": "numeric_exact",
                        "data_sources": ["numbers.csv"],
                    },
                ],
            }
        )
        if solutions:
            sol = root / "solutions" / f"{tid}.py"
            sol.parent.mkdir(parents=True, exist_ok=True)
            sol.write_text(
                "import csv, json\n"
                f"rows = list(csv.DictReader(open('data/{domain}/input/numbers.csv')))\n"
                f"v = [int(r['v']) for r in rows if int(r['k']) == {i}][0]\n"
                "print('some log line')\n"
                "print(json.dumps({'main-task': v, 'subtask-1': 'numbers.csv', 'subtask-2': len(rows)}))\n"
            )
    (root / "workload" / f"{domain}.json").write_text(json.dumps(tasks, indent=1))
    return root


def write_root(
    root: Path, tasks: list[dict], *, domain: str = "toy", files: dict[str, str] | None = None
) -> Path:
    """A workload root in the official layout holding ``tasks`` as ``workload/<domain>.json`` and a lake of
    ``files`` (name -> text; default one small CSV ``a.csv``); returns ``root``."""
    lake = root / "data" / domain / "input"
    lake.mkdir(parents=True)
    (root / "workload").mkdir(parents=True, exist_ok=True)
    for name, text in (files if files is not None else {"a.csv": "x,y\n1,2\n"}).items():
        (lake / name).write_text(text)
    (root / "workload" / f"{domain}.json").write_text(json.dumps(tasks))
    return root


def install_scripted(tmp_path: Path, monkeypatch) -> tuple[str, Path]:
    """Write the scripted system module, make it importable here and in subprocesses; (module:Class, folder)."""
    import sys

    folder = tmp_path / "sysmods"
    target = write_system_module(folder)
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(target.split(":")[0], None)
    return target, folder


def answer_in(query: str):
    return json.loads(re.search(r"\[answer=(.*?)\]", query).group(1))


__all__ = ["answer_in", "install_scripted", "make_workload", "write_root", "write_system_module"]
