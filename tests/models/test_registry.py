"""The provider registry: user providers get the cache, recording and error wrapping too."""

from __future__ import annotations

import pytest

from kramabench.models import (
    ChatMessage,
    Completion,
    ModelError,
    get_model,
    load_calls,
    parse_model_id,
    providers,
    recording,
    register_provider,
)

MSGS = [ChatMessage(role="user", content="hi")]


class Upper:
    """A toy provider: answers with the upper-cased last message; crashes on 'crash'."""

    provider = "upper"
    base_url = None

    def __init__(self, model: str, shout: bool = False) -> None:
        self.model = model
        self.id = f"upper/{model}"
        self.shout = shout
        self.calls = 0

    def complete(self, messages, options=None) -> Completion:
        self.calls += 1
        text = messages[-1].content
        if text == "crash":
            raise RuntimeError("provider bug")
        return Completion(text=text.upper() + ("!" if self.shout else ""), cost_usd=None, model=self.model)


@pytest.fixture(scope="module", autouse=True)
def _upper_provider():
    register_provider("upper", lambda rest, **opts: Upper(rest, **opts), replace=True)


def test_custom_provider_is_listed_and_used(tmp_path):
    assert {"openai", "together", "openai-compatible", "replay", "upper"} <= set(providers())
    model = get_model("upper/v1", shout=True)
    assert model.complete(MSGS).text == "HI!"
    assert model.complete(MSGS).cached  # temperature 0: cached like any provider
    assert model.backend.calls == 1


def test_custom_provider_errors_become_model_errors_and_are_recorded(tmp_path):
    model = get_model("upper/v1", cache=False)
    with recording.CallRecorder(tmp_path) as rec, recording.scope("t", rec):
        with pytest.raises(ModelError) as ei:
            model.complete([ChatMessage(role="user", content="crash")])
        model.complete(MSGS)
    assert ei.value.kind == "other" and "provider bug" in ei.value.message
    calls = load_calls(tmp_path)
    assert [c.error.kind if c.error else c.text for c in calls] == ["other", "HI"]


def test_bad_factory_arguments_are_model_errors():
    with pytest.raises(ModelError, match="upper/v1"):
        get_model("upper/v1", volume=11)


def test_register_refuses_silent_replacement():
    with pytest.raises(ValueError, match="already registered"):
        register_provider("openai", lambda rest, **o: None)
    with pytest.raises(ValueError):
        register_provider("a/b", lambda rest, **o: None)


def test_parse_model_id():
    assert parse_model_id("together/meta-llama/Llama-3.3-70B-Instruct-Turbo") == (
        "together",
        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    )
    assert parse_model_id("replay//abs/run") == ("replay", "/abs/run")


def test_messages_may_be_dicts_but_are_validated():
    model = get_model("upper/v1", cache=False)
    assert model.complete([{"role": "user", "content": "x"}]).text == "X"
    with pytest.raises(ModelError) as ei:
        model.complete([{"role": "robot", "content": "x"}])
    assert ei.value.kind == "bad_request"
