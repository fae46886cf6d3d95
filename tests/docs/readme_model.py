"""The scripted local model behind the README's examples (served by ``kramabench.testing.OpenAIServer``).

It plays two roles, told apart by the first message of a conversation:

- the **agent** (``code-agent``, or ``smolagents-code-agent`` in smolagents' reply format) on the bundled
  ``mini`` workload: step 1 runs the task's reference solution in the agent's session (the lake folder the
  prompt names passed as its argument), step 2 reads the JSON line that the observation shows and calls
  ``final_answer`` with its main answer. For the tasks in :data:`WRONG` it answers
  ``0`` instead, so that the run has failures for the audit to examine;
- the **Auditor** of ``kramabench audit failures``: it runs the reference solution once, then reports the
  failure as the system's (``flawed-logic``), with the reference solution as its derivation (which the audit
  runs again and scores against the gold itself).

Nothing here is taken on trust by the tests: the agent's answers are scored by the run, the derivations run by
the audit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "workloads" / "mini"

#: tasks the scripted agent answers wrong (``final_answer(0)``), one per domain
WRONG = frozenset({"grid-easy-2", "harbor-easy-1"})

AUDITOR_MARK = "You audit one failed task"


def _tasks() -> dict[str, dict]:
    tasks = {}
    for path in sorted((MINI / "workload").glob("*.json")):
        for task in json.loads(path.read_text(encoding="utf-8")):
            tasks[task["id"]] = task
    return tasks


TASKS = _tasks()


def task_of(text: str) -> str:
    """The id of the mini task whose question ``text`` holds."""
    found = [tid for tid, t in TASKS.items() if t["query"] in text]
    if len(found) != 1:
        raise ValueError(f"the prompt holds {len(found)} mini questions, not one")
    return found[0]


def solution(task_id: str) -> str:
    return (MINI / TASKS[task_id]["solution"]).read_text(encoding="utf-8")


def run_solution_code(task_id: str, lake: str) -> str:
    """Python that runs the task's reference solution on ``lake`` (it prints one JSON object)."""
    return (
        "import sys\n"
        f"sys.argv = ['solution', {lake!r}]\n"
        f"exec(compile({solution(task_id)!r}, 'solution', 'exec'), {{'__name__': '__main__'}})\n"
    )


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _lake(text: str, pattern: str) -> str:
    m = re.search(pattern, text)
    if not m:
        raise ValueError(f"the prompt names no lake folder ({pattern})")
    return m.group(1).rstrip(".;,")


def _printed_json(messages: list[dict]) -> dict:
    """The JSON object the solution printed, from the latest message that shows one (the observation)."""
    for message in reversed(messages):
        for line in reversed(_text(message).splitlines()):
            line = line.strip()
            if line.startswith('{"main-task"'):
                return json.loads(line)
    raise ValueError("no observation shows the JSON line of the solution")


SMOLAGENTS_MARK = "Thought, Code, and Observation"


def _step(thought: str, code: str, smolagents: bool) -> str:
    """One reply in the agent's own format: the code agent's fenced block, or smolagents' <code> tags."""
    if smolagents:
        return f"Thought: {thought}\n<code>\n{code.rstrip()}\n</code>\n"
    return f"{thought}\n```python\n{code.rstrip()}\n```"


def agent_reply(messages: list[dict]) -> str:
    """The agent's next reply: run the solution, then give its main answer (0 for :data:`WRONG`)."""
    smolagents = SMOLAGENTS_MARK in _text(messages[0])
    user = [_text(m) for m in messages if m.get("role") == "user"]
    tid = task_of(user[0])
    if not any(m.get("role") == "assistant" for m in messages):
        lake = _lake(_text(messages[0]) + "\n" + user[0], r"The data lake is the read-only folder (\S+)")
        return _step("I run the pipeline on the lake.", run_solution_code(tid, lake), smolagents)
    if tid in WRONG:
        return _step("The answer is 0.", "final_answer(0)", smolagents)
    answer = _printed_json(messages[1:])["main-task"]
    code = f"import json\nfinal_answer(json.loads({json.dumps(answer)!r}))"
    return _step("The pipeline printed its answer.", code, smolagents)


def main_answer_code(task_id: str, lake: str) -> str:
    """Python that prints the main answer of the task's reference solution on ``lake`` (a derivation)."""
    return (
        "import contextlib, io, json\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        + "".join(f"    {line}\n" for line in run_solution_code(task_id, lake).splitlines())
        + "print(json.loads(out.getvalue().strip().splitlines()[-1])['main-task'])\n"
    )


def auditor_reply(messages: list[dict]) -> str:
    """The Auditor: run the reference solution once, then report a system failure with the solution's main
    answer as its derivation."""
    tid = re.search(r"^Task (\S+) \(domain", _text(messages[1]), re.M).group(1)
    lake = _lake(_text(messages[0]), r"data lake at (\S+) \(read-only\)")
    if len(messages) <= 2:
        return "Let me run the reference solution.\n```python\n" + run_solution_code(tid, lake) + "```"
    report = {
        "root_cause": "the system answered 0; the reference solution, run on the lake, prints the gold",
        "attribution": "system",
        "category": "flawed-logic",
        "evidence": ["the reference solution reproduces the gold"],
        "derivation_code": main_answer_code(tid, lake),
    }
    return "Here is my report.\n```json\n" + json.dumps(report) + "\n```"


def reply(request) -> str:  # noqa: ANN001 (a kramabench.testing.ChatRequest)
    """The handler for ``OpenAIServer.handler``."""
    messages = request.messages
    if AUDITOR_MARK in _text(messages[0]):
        return auditor_reply(messages)
    return agent_reply(messages)
