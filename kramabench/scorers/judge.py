"""The paraphrase judge: is a predicted string an equivalent answer to the question?

:class:`Judge` is the protocol scorers use (``paraphrase(question, expected, predicted) -> Verdict``).
:class:`ModelJudge` implements it over any :class:`kramabench.contracts.model.Model`: it asks for a JSON
verdict ``{"equivalent": true|false, "reason": "..."}`` and reads the reply with :func:`parse_verdict`:

* the JSON object may be wrapped in a code fence or surrounded by text; the verdict field may be called
  ``equivalent``, ``equivalence``, ``match``, ``same``, ``correct``, ``verdict`` or ``answer`` and hold a
  boolean or ``"yes"``/``"no"``/``"true"``/``"false"``/``"equivalent"``/``"not equivalent"``;
* without JSON, a reply that is the word yes/no/true/false, alone or followed by punctuation ("No.",
  "Yes, both name the same beach"), and does not contain the other word, is read as such ("no idea" is
  not a verdict);
* anything else is **unparsable**: ``equivalent=None``, and the scorer marks the answer unscored —
  never 0 and never "yes". A model error (:class:`~kramabench.contracts.model.ModelError`) is unparsable too.

Verdicts are cached in memory and, with ``cache_path``, in a JSON-lines file, keyed by (judge model,
prompt version, question, expected, predicted). Unparsable verdicts and errors are not cached, so a later
run asks again.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from kramabench.contracts.model import ChatMessage, Model, ModelError, ModelOptions
from kramabench.contracts.scoring import CountsCalls, Judge, Verdict
from kramabench.files import FileRefused, LongLine, iter_lines, open_append, open_regular, sha256_hex

logger = logging.getLogger(__name__)

PROMPTS: dict[str, tuple[str, str]] = {
    "paraphrase-v1": (
        "You grade answers to data-analysis questions. Decide whether a predicted answer is equivalent "
        "to the reference answer: it states the same fact, value or entity, possibly in other words, "
        "with different capitalisation, punctuation, abbreviation or an added unit. It is NOT equivalent "
        "when it names a different entity or value, is more vague, hedges between options, or does not "
        "answer. Reply with one JSON object and nothing else: "
        '{"equivalent": true or false, "reason": "<one short sentence>"}',
        "Question: {question}\nReference answer: {expected}\nPredicted answer: {predicted}",
    ),
}
DEFAULT_PROMPT_VERSION = "paraphrase-v1"


# ---- reading a verdict ----------------------------------------------------------------------------

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_VERDICT_KEYS = (
    "equivalent",
    "equivalence",
    "is_equivalent",
    "match",
    "matches",
    "same",
    "correct",
    "verdict",
    "answer",
)
_YES = {"yes", "y", "true", "equivalent", "same", "match", "correct", "1"}
_NO = {
    "no",
    "n",
    "false",
    "not equivalent",
    "not_equivalent",
    "nonequivalent",
    "different",
    "no match",
    "incorrect",
    "not the same",
    "0",
}
#: a bare verdict word: the whole reply, or followed by punctuation ("No.", "Yes, both name ...");
#: "no idea", "No clue", "true to some extent" are not verdicts
_WORD_RE = re.compile(
    r"""^\W*(yes|no|true|false)(?=\s*$|[ \t]*\n|\s*[.,;:!)\]*"'\-\u2013\u2014])""", re.IGNORECASE
)


def _as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        s = v.strip().strip(".!").lower()
        if s in _YES:
            return True
        if s in _NO:
            return False
    return None


def _json_objects(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    blocks = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    dec = json.JSONDecoder()
    for block in blocks:
        i = block.find("{")
        while i != -1 and len(out) < 10:
            try:
                obj, end = dec.raw_decode(block, i)
            except ValueError:
                i = block.find("{", i + 1)
                continue
            if isinstance(obj, dict):
                out.append(obj)
            i = block.find("{", end)
    return out


def parse_verdict(text: str) -> Verdict:
    """Read a judge reply (see the module docstring). Never raises."""
    raw = text if isinstance(text, str) else str(text)
    for obj in _json_objects(raw):
        lowered = {str(k).lower(): v for k, v in obj.items()}
        for key in _VERDICT_KEYS:
            if key in lowered:
                b = _as_bool(lowered[key])
                if b is not None:
                    reason = lowered.get("reason") or lowered.get("explanation") or ""
                    return Verdict(equivalent=b, reason=str(reason)[:500], raw=raw)
    m = _WORD_RE.match(raw.strip())
    if m:
        word = m.group(1).lower()
        b = word in ("yes", "true")
        others = ("no", "false") if b else ("yes", "true")
        rest = raw.lower()[m.end() :]
        if not any(re.search(rf"\b{o}\b", rest) for o in others):
            return Verdict(equivalent=b, reason=raw.strip()[:500], raw=raw)
    return Verdict(equivalent=None, reason="unparsable judge reply", raw=raw)


# ---- cache ----------------------------------------------------------------------------------------


def cache_key(judge_id: str, prompt_version: str, question: str | None, expected: str, predicted: str) -> str:
    payload = json.dumps([judge_id, prompt_version, question or "", expected, predicted], ensure_ascii=False)
    return sha256_hex(payload)


class JudgeCache:
    """Verdicts by key, in memory and (optionally) appended to a JSON-lines file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._mem: dict[str, Verdict] = {}
        self._lock = threading.Lock()
        if self.path and os.path.lexists(self.path):
            self._load()

    def _load(self) -> None:
        """Read the verdicts, streamed (a line longer than 1 MB is no verdict); a cache that is not a regular
        file (a FIFO, ``/dev/zero``) is a :class:`ValueError` naming it, in one line."""
        assert self.path is not None
        bad = 0
        try:
            with open_regular(self.path, what="judge cache") as fh:
                for _n, line, _ended in iter_lines(fh, max_line=1 << 20):
                    if isinstance(line, LongLine) or not line.strip():
                        bad += not isinstance(line, bytes)
                        continue
                    try:
                        row = json.loads(line)
                        self._mem[row["key"]] = Verdict.model_validate(row["verdict"])
                    except (ValueError, KeyError, TypeError, RecursionError):
                        bad += 1
        except FileRefused as e:
            raise ValueError(f"--judge-cache {e}") from None
        if bad:
            logger.warning("judge cache %s: %d unreadable line(s) ignored", self.path, bad)

    def get(self, key: str) -> Verdict | None:
        v = self._mem.get(key)
        return v.model_copy(update={"cached": True}) if v is not None else None

    def put(self, key: str, verdict: Verdict) -> None:
        if verdict.equivalent is None:
            return
        with self._lock:
            self._mem[key] = verdict
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = open_append(self.path)  # a regular file only: never a FIFO that would block
                try:
                    os.write(
                        fd,
                        (
                            json.dumps({"key": key, "verdict": verdict.model_dump()}, ensure_ascii=False)
                            + "\n"
                        ).encode("utf-8"),
                    )
                finally:
                    os.close(fd)

    def __len__(self) -> int:
        return len(self._mem)


# ---- the model-backed judge -----------------------------------------------------------------------


class ModelBackedJudge:
    """What a judge that asks a :class:`Model` keeps: the model and its id, a prompt version (one of the
    judge's ``prompts``), the options of its calls (JSON replies, at temperature 0, of at most ``max_tokens``
    unless given), and its ``counters`` (then ``cost_usd``) added to under a lock."""

    #: what the judge is called in the error for an unknown prompt version
    what: ClassVar[str]
    prompts: ClassVar[Mapping[str, object]]
    default_prompt_version: ClassVar[str]
    max_tokens: ClassVar[int]
    counters: ClassVar[tuple[str, ...]]

    def __init__(
        self, model: Model, *, prompt_version: str | None = None, options: ModelOptions | None = None
    ) -> None:
        version = self.default_prompt_version if prompt_version is None else prompt_version
        if version not in self.prompts:
            raise ValueError(f"unknown {self.what} prompt version {version!r}; known: {sorted(self.prompts)}")
        self.model = model
        self.id = model.id
        self.prompt_version = version
        self.options = options or ModelOptions(
            temperature=0.0, max_tokens=self.max_tokens, response_format_json=True
        )
        self.stats: dict[str, float] = {**dict.fromkeys(self.counters, 0), "cost_usd": 0.0}
        self._lock = threading.Lock()

    def _count(self, **adds: float | None) -> None:
        """Add to the counters at once (a cost of None or 0 adds nothing)."""
        with self._lock:
            for key, n in adds.items():
                if n:
                    self.stats[key] += n


class ModelJudge(ModelBackedJudge):
    """A :class:`Judge` that asks a :class:`Model` for a JSON verdict."""

    what = "judge"
    prompts = PROMPTS
    default_prompt_version = DEFAULT_PROMPT_VERSION
    max_tokens = 300
    counters = ("calls", "cache_hits", "unparsable", "errors")

    def __init__(
        self,
        model: Model,
        *,
        prompt_version: str = DEFAULT_PROMPT_VERSION,
        cache: JudgeCache | None = None,
        cache_path: str | Path | None = None,
        options: ModelOptions | None = None,
    ) -> None:
        super().__init__(model, prompt_version=prompt_version, options=options)
        self.cache = cache if cache is not None else JudgeCache(cache_path)

    def messages(self, question: str | None, expected: str, predicted: str) -> list[ChatMessage]:
        system, user = PROMPTS[self.prompt_version]
        text = user.format(question=question or "(not given)", expected=expected, predicted=predicted)
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=text)]

    def paraphrase(self, question: str | None, expected: str, predicted: str) -> Verdict:
        key = cache_key(self.id, self.prompt_version, question, expected, predicted)
        hit = self.cache.get(key)
        if hit is not None:
            self._count(cache_hits=1)
            return hit
        msgs = self.messages(question, expected, predicted)
        try:
            try:
                completion = self.model.complete(msgs, self.options)
            except ModelError as e:
                # servers without JSON mode (older llama.cpp, some vLLM setups) refuse response_format with
                # a 400 naming it: ask again without it, and from then on (the prompt asks for JSON anyway)
                said = e.message.lower()
                if (
                    e.kind != "bad_request"
                    or not self.options.response_format_json
                    or not any(w in said for w in ("response_format", "response format", "json"))
                ):
                    raise
                logger.warning("judge %s refused JSON mode (%s); asking without it", self.id, e.message[:200])
                self.options = self.options.model_copy(update={"response_format_json": False})
                completion = self.model.complete(msgs, self.options)
        except ModelError as e:
            logger.warning("judge %s failed: %s", self.id, e)
            self._count(errors=1)
            return Verdict(equivalent=None, reason=f"judge model error ({e.kind}): {e.message}"[:500])
        verdict = parse_verdict(completion.text)
        self._count(calls=1, cost_usd=completion.cost_usd, unparsable=verdict.equivalent is None)
        self.cache.put(key, verdict)
        return verdict


__all__ = [
    "DEFAULT_PROMPT_VERSION",
    "PROMPTS",
    "CountsCalls",
    "Judge",
    "JudgeCache",
    "ModelBackedJudge",
    "ModelJudge",
    "Verdict",
    "cache_key",
    "parse_verdict",
]
