"""A reply split into its thought and its code.

The rules (replies are messy):

* ``<think>`` sections of reasoning models are dropped;
* a reply that goes on to write its own ``Observation:`` (a model imagining the output) is cut there;
* the code is every *closed* fenced block tagged ``python``/``py`` (or untagged, when it compiles as
  Python), joined in order: models often split one step over several blocks;
* a reply with a block whose closing fence never came (cut at the token limit) runs nothing: half a
  program does harm;
* the thought is the text before the first code block (``Thought:`` dropped); text after the code is kept
  with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kramabench.baselines.ds_guru.extract import fenced_blocks, strip_thinking
from kramabench.baselines.kit import compiles

_PY = {"python", "py", "python3", "py3", "ipython"}
_OBSERVATION = re.compile(
    r"^\s*\**(Observation|Observations|Output|Execution logs)\**\s*:", re.MULTILINE | re.IGNORECASE
)
_THOUGHT = re.compile(r"^\s*\**Thought\**\s*:\s*", re.IGNORECASE)


@dataclass
class Parsed:
    thought: str
    code: str | None
    #: a code block was opened but never closed (the reply was cut)
    unclosed: bool = False


def parse_reply(reply: str) -> Parsed:
    text = strip_thinking(reply or "")
    blocks = fenced_blocks(text)
    first_code = next(
        (b for b in blocks if b.lang in _PY or (not b.lang and b.closed and compiles(b.text, "<reply>"))),
        None,
    )
    if first_code is not None:  # a hallucinated observation after the first code block ends the reply
        after = text.find("\n", first_code.start)
        m = _OBSERVATION.search(text, after if after >= 0 else first_code.start)
        if m is not None:
            text = text[: m.start()]
            blocks = fenced_blocks(text)
    code_blocks = [b for b in blocks if b.lang in _PY or (not b.lang and compiles(b.text, "<reply>"))]
    closed = [b for b in code_blocks if b.closed and b.text.strip()]
    unclosed = any(not b.closed for b in code_blocks)
    start = code_blocks[0].start if code_blocks else len(text)
    thought = _THOUGHT.sub("", text[:start].strip()).strip()
    if not closed or unclosed:  # a reply cut inside its code runs nothing
        return Parsed(
            thought=thought if code_blocks else _THOUGHT.sub("", text.strip()).strip(),
            code=None,
            unclosed=unclosed,
        )
    code = "\n\n".join(b.text.rstrip() for b in closed) + "\n"
    return Parsed(thought=thought, code=code, unclosed=unclosed)


__all__ = ["Parsed", "parse_reply"]
