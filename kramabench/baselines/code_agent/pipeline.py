"""An agent's ``pipeline_code``: the code of its steps as one script, a faithful account of the state its
answer came from (what the pipeline-design judge reads; docs/agents.md).

Every step whose code ran is there, in order, under a ``# --- step N ---`` line:

* a step that ran to its end (``ok``), or gave the final answer: its code (after ``final_answer(...)``,
  nothing of the step ran, and those lines are left out);
* a step that raised: the top-level statements that ran before the one that raised (so a variable it
  defined before its error, which later steps used, is defined here too); the statement that raised and the
  rest of the step are left out, the marker says so and names the exception (a statement that raised partway,
  e.g. a loop, may have done part of its work: that part is not in the script);
* a step that did not compile (``SyntaxError``): nothing of it ran; only its marker;
* a step stopped at its time limit, killed (out of memory, the interpreter died): left out, its marker says
  so, and that the interpreter was restarted: variables defined above were lost (files written stay).

The script never holds code that did not run, so a judge cannot credit it; it runs where the agent's code
ran (``final_answer`` and ``shell`` are the agent's helpers).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kramabench.baselines.kit import compiles
from kramabench.contracts.session import PythonError
from kramabench.files import one_line

from .namespace import FINAL_ANSWER_EXCEPTION

HEADER = (
    "# The code of the agent's steps, in the order they ran: the state its answer came from. Code that did "
    "not run\n# is left out, each place marked. final_answer() and shell() are the agent's helpers."
)

_FRAME = re.compile(r'File "<step \d+>", line (\d+)')
_NOT_COMPILED = frozenset({"SyntaxError", "IndentationError", "TabError"})


@dataclass(frozen=True)
class RanStep:
    """A step whose code went to the session: its number, code, outcome, the exception it raised."""

    step: int
    code: str
    outcome: str
    error: PythonError | None = None
    state_lost: bool = False


def _one_line(text: str, n: int = 160) -> str:
    return one_line(text, n)


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _error_line(error: PythonError) -> int | None:
    """The line of the step's own code that was running when ``error`` was raised (its top-level frame), from
    the traceback of the raised exception (the last one of a chain)."""
    tb = error.traceback or ""
    at = tb.rfind("Traceback (most recent call last)")
    m = _FRAME.search(tb, at if at >= 0 else 0)
    return int(m.group(1)) if m else None


def _ran_before(code: str, line: int) -> tuple[str, str] | None:
    """(the code of the top-level statements before the one holding ``line``, the statement that raised) or
    None when the code cannot be parsed or no statement holds the line."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # nesting too deep for the parser: no code
        return None
    lines = code.splitlines(keepends=True)
    for stmt in tree.body:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        end = stmt.end_lineno or stmt.lineno
        if first <= line <= end:
            head = "".join(lines[: first - 1])
            if first == stmt.lineno and stmt.col_offset > 0:  # `a = 1; b = 1 / 0`: a ran
                part = lines[first - 1].encode("utf-8")[: stmt.col_offset].decode("utf-8", "replace")
                part = part.rstrip().rstrip(";").rstrip()
                if part.strip():
                    head += part + "\n"
            text = "".join(lines[first - 1 : end])
            return head, text
    return None


def _step_block(s: RanStep) -> str:
    code = s.code.rstrip()
    lost = " The interpreter was restarted: variables defined above were lost (files written stay)."
    if s.outcome in ("timeout", "oom", "crashed"):
        what = {
            "timeout": "was stopped at its time limit",
            "oom": "ran out of memory",
            "crashed": "was killed (the interpreter died)",
        }[s.outcome]
        return f"# --- step {s.step}: it {what}; its code is left out.{lost} ---"
    err = s.error
    final = s.outcome in ("final_answer", "answer_error") or (
        err is not None and err.type == FINAL_ANSWER_EXCEPTION
    )
    if err is None or s.outcome == "ok":
        # an ok step that lost the state: the interpreter had died since the step before (restarted first)
        before = " The interpreter had been restarted before it ran: variables defined above were lost."
        return f"# --- step {s.step}{':' + before if s.state_lost else ''} ---\n{code}"
    if err.type in _NOT_COMPILED and not compiles(s.code, "<step>"):
        return (
            f"# --- step {s.step}: its code did not compile ({err.type}: {_one_line(err.message)}); "
            "nothing of it ran, it is left out ---"
        )
    line = _error_line(err)
    split = _ran_before(s.code, line) if line is not None else None
    if split is None:
        what = "gave its answer" if final else f"raised {err.type}: {_one_line(err.message)}"
        return f"# --- step {s.step}: it {what} at a place that cannot be told; its code is left out ---"
    head, stmt = split
    rest = s.code.splitlines()[len((head + stmt).splitlines()) :]
    if final:
        block = f"# --- step {s.step} ---\n{(head + stmt).rstrip()}"
        if any(x.strip() for x in rest):
            block += f"\n# (the {_lines(len(rest))} after final_answer(...) did not run: left out)"
        return block
    n_left = len(stmt.splitlines()) + len(rest)
    marker = (
        f"# --- step {s.step}: the statement at line {line} raised {err.type}: {_one_line(err.message)}; "
        f"it and the rest of the step ({_lines(n_left)}) are left out"
    )
    body = head.rstrip()
    if not body.strip():
        return f"{marker}: nothing of the step ran to its end ---"
    return f"{marker}; the statements before it ran: ---\n{body}"


def pipeline_code(steps: Sequence[RanStep]) -> str | None:
    """The steps' code as one script (see the module docstring); None when no step ran code."""
    if not steps:
        return None
    return HEADER + "\n\n" + "\n\n".join(_step_block(s) for s in steps) + "\n"


__all__ = ["HEADER", "RanStep", "pipeline_code"]
