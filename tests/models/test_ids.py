"""Model ids are parsed in one place (kramabench.models.ids.ModelId): the registry, the run id, the model
object's provider/model/base URL and the replayed run folder all read the same parts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kramabench.models import ManagedModel, ModelError, ModelId
from kramabench.models.ids import split_compatible
from kramabench.run.setup import new_run_id


@pytest.mark.parametrize("text, provider, model, base_url, short", [
    ("openai/gpt-4o", "openai", "gpt-4o", None, "gpt-4o"),
    ("together/meta-llama/Llama-3.3-70B-Instruct-Turbo", "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo",
     None, "Llama-3.3-70B-Instruct-Turbo"),
    ("openai-compatible/qwen2.5-coder@http://127.0.0.1:8000/v1", "openai-compatible", "qwen2.5-coder",
     "http://127.0.0.1:8000/v1", "qwen2.5-coder"),
    # the model may itself hold '/' and '@'; the URL starts at the last '@http(s)://'
    ("openai-compatible/org/m@v2@https://h.example/v1", "openai-compatible", "org/m@v2", "https://h.example/v1", "m@v2"),
    ("replay/results/run-1/", "replay", "results/run-1/", None, "run-1"),
])  # fmt: skip
def test_the_parts_of_an_id(text, provider, model, base_url, short):
    mid = ModelId.parse(text)
    assert (mid.provider, mid.model, mid.base_url, mid.short_name) == (provider, model, base_url, short)
    assert str(mid) == text
    p, rest = mid  # unpacks as (provider, rest), as parse_model_id's tuple did
    assert (p, f"{p}/{rest}") == (provider, text)


@pytest.mark.parametrize("bad", ["gpt-4o", "/x", "openai/", "", None, 3])
def test_a_bad_id_is_a_bad_request_that_names_the_form(bad):
    with pytest.raises(ModelError) as ei:
        ModelId.parse(bad)
    assert ei.value.kind == "bad_request" and "<provider>/<model>" in ei.value.message


def test_replay_dir_and_compatible_url():
    assert ModelId.parse("replay/~/runs/a").replay_dir == Path("~/runs/a").expanduser()
    assert ModelId.parse("openai/gpt-4o").replay_dir is None
    assert split_compatible("m@http://h:1/v1") == ("m", "http://h:1/v1")
    with pytest.raises(ModelError, match="openai-compatible/<model>@<base_url>"):
        split_compatible("m-without-url")


def test_run_ids_and_the_model_object_read_the_same_parts():
    run_id = new_run_id("ds-guru-simple", "openai-compatible/org/qwen@http://127.0.0.1:9/v1")
    # stamp, system, the model's short name (not its provider or URL), a random suffix; the date itself
    # may hold "127", so the URL's absence is checked on the whole shape, not on a substring
    assert re.fullmatch(r"\d{8}-\d{6}-ds-guru-simple-qwen-[0-9a-f]{4}", run_id), run_id
    assert "-nonsense-" in new_run_id("reference", "nonsense")  # a bad id still gives a run id

    class Bare:  # a backend that names neither its provider nor its model
        def complete(self, messages, options=None):
            raise AssertionError

    m = ManagedModel(Bare(), "openai-compatible/org/qwen@http://127.0.0.1:9/v1")
    assert (m.provider, m.model, m.base_url) == ("openai-compatible", "org/qwen", "http://127.0.0.1:9/v1")
