"""kramabench's model as smolagents' model: every call goes through kramabench's managed model (response
cache, cost, rate limits, retries, budgets, recording and ``replay/``)."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal, cast

import smolagents
from smolagents.models import get_clean_message_list, tool_role_conversions

from kramabench.baselines.code_agent.clock import TaskClock
from kramabench.contracts.model import ChatMessage, Completion, Model, ModelOptions
from kramabench.contracts.system import OutcomeError


class TaskTimeSpent(Exception):
    """The task's wall-clock budget was spent before a model call: the agent ends (outcome ``wall_limit``)."""

    def __init__(self, outcome: OutcomeError) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


def cut_at_stop(text: str, stop: list[str] | None) -> str:
    """The text up to the first stop sequence (kramabench's providers send no stop sequences: the cut is
    made here, the same on a recorded and a replayed call)."""
    if not stop:
        return text
    cut = min((i for s in stop if s and (i := text.find(s)) >= 0), default=-1)
    return text if cut < 0 else text[:cut]


#: the roles of a kramabench ChatMessage
ChatRole = Literal["system", "user", "assistant"]


def _role(role: Any) -> ChatRole:
    """smolagents' roles are MessageRole members (a str enum); pydantic before 2.10 refuses an enum member
    for a Literal, so the plain value goes into ChatMessage (a role other than these three is the user's)."""
    value = role.value if isinstance(role, Enum) else str(role)
    return cast(ChatRole, value) if value in ("system", "user", "assistant") else "user"


def text_of(content: Any) -> str:
    """The text of a smolagents message's content (a string, or a list of parts of which the text ones count)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


class KramabenchModel(smolagents.Model):  # type: ignore[misc]  # smolagents ships no type information (Any to mypy)
    """A ``smolagents.Model`` whose ``generate`` calls a kramabench :class:`Model`; the completions are kept
    in ``completions`` (their cost, latency and cache status go into the task's steps and usage)."""

    def __init__(self, model: Model, options: ModelOptions, clock: TaskClock | None = None) -> None:
        super().__init__(model_id=model.id, flatten_messages_as_text=True)
        self.kb_model = model
        self.kb_options = options
        self.clock = clock
        #: set when a call was refused because the task's wall-clock budget was spent
        self.stop: OutcomeError | None = None
        self.completions: list[Completion] = []

    def generate(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> smolagents.ChatMessage:
        if self.clock is not None and (spent := self.clock.wall_spent(len(self.completions))) is not None:
            self.stop = spent
            raise TaskTimeSpent(spent)
        clean = get_clean_message_list(
            messages, role_conversions=tool_role_conversions, flatten_messages_as_text=True
        )
        msgs = [ChatMessage(role=_role(m["role"]), content=text_of(m.get("content"))) for m in clean]
        options = (
            self.kb_options.model_copy(update={"response_format_json": True})
            if response_format
            else self.kb_options
        )
        c = self.kb_model.complete(
            msgs, options
        )  # a ModelError ends the agent (smolagents: AgentGenerationError)
        self.completions.append(c)
        return smolagents.ChatMessage(
            role=smolagents.MessageRole.ASSISTANT,
            content=cut_at_stop(c.text, stop_sequences),
            token_usage=smolagents.TokenUsage(
                input_tokens=c.usage.prompt_tokens, output_tokens=c.usage.completion_tokens
            ),
        )


__all__ = ["KramabenchModel", "TaskTimeSpent", "cut_at_stop", "text_of"]
