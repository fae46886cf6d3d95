"""Model ids, parsed in one place: ``<provider>/<rest>``.

- ``openai/gpt-4o``, ``together/meta-llama/Llama-3.3-70B-Instruct-Turbo``: the model is ``rest``
- ``openai-compatible/<model>@<base_url>``: the model may hold ``/`` and ``@``; the URL starts at the last
  ``@http://`` or ``@https://``
- ``replay/<run_dir>``: the run folder whose recorded calls are served

Everything that needs a part of an id (the registry, the run id, the model object's provider and model
name, the replayed run folder) asks :class:`ModelId`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from kramabench.contracts.model import ModelError

COMPATIBLE = "openai-compatible"
REPLAY = "replay"


class ModelId(NamedTuple):
    """A parsed model id; unpacks as ``provider, rest``."""

    provider: str
    rest: str

    @classmethod
    def parse(cls, model_id: object) -> ModelId:
        """``"together/meta-llama/Llama-3.3"`` -> ``ModelId("together", "meta-llama/Llama-3.3")``; a bad id
        is a ``ModelError("bad_request")`` that says the expected form."""
        if isinstance(model_id, ModelId):
            return model_id
        if model_id is not None and not isinstance(model_id, str):
            raise ModelError(
                "bad_request",
                f"bad model id {model_id!r}: a string <provider>/<model> is expected, "
                f"not {type(model_id).__name__}",
            )
        provider, sep, rest = (model_id or "").strip().partition("/")
        if not sep or not provider or not rest:
            raise ModelError(
                "bad_request",
                f"bad model id {model_id!r}: expected <provider>/<model>, e.g. "
                f"openai/gpt-4o (providers: {_known_providers()})",
            )
        return cls(provider, rest)

    def __str__(self) -> str:
        return f"{self.provider}/{self.rest}"

    @property
    def model(self) -> str:
        """The provider's model name: ``rest`` without the base URL of an ``openai-compatible`` id."""
        return _split_url(self.rest)[0] if self.provider == COMPATIBLE else self.rest

    @property
    def base_url(self) -> str | None:
        """The base URL of an ``openai-compatible`` id (None for other providers or when absent)."""
        return _split_url(self.rest)[1] if self.provider == COMPATIBLE else None

    @property
    def short_name(self) -> str:
        """The last segment of the model name, for run ids: ``Llama-3.3`` of ``together/meta-llama/Llama-3.3``,
        ``qwen`` of ``openai-compatible/qwen@http://...``, the folder name of ``replay/<run_dir>``."""
        name = self.model.rstrip("/")
        return name.rsplit("/", 1)[-1] or name

    @property
    def display(self) -> str:
        """The id as runs show it (a manifest's and a record's ``model``, the report, the viewer): the id
        itself, but ``replay/<run folder name>`` for a replay (``replay//home/me/results/run-1``, an absolute
        folder, would show as ``replay//...``; the whole path stays in the run's options)."""
        if self.provider == REPLAY:
            name = Path(self.rest.rstrip("/")).expanduser().name
            return f"{REPLAY}/{name or self.rest}"
        return str(self)

    @property
    def replay_dir(self) -> Path | None:
        """The run folder of a ``replay/<run_dir>`` id (None for other providers)."""
        return Path(self.rest).expanduser() if self.provider == REPLAY else None


def parse_model_id(model_id: object) -> ModelId:
    """:meth:`ModelId.parse` (``provider, rest = parse_model_id(...)`` unpacks it)."""
    return ModelId.parse(model_id)


def split_compatible(rest: str) -> tuple[str, str]:
    """``"<model>@<base_url>"`` -> (model, base_url) of an ``openai-compatible`` id; no URL is an error."""
    model, url = _split_url(rest)
    if url is None:
        raise ModelError(
            "bad_request",
            f"{COMPATIBLE}/{rest}: expected {COMPATIBLE}/<model>@<base_url>, "
            f"e.g. {COMPATIBLE}/Qwen2.5-Coder-32B@http://localhost:8000/v1",
        )
    return model, url


def _split_url(rest: str) -> tuple[str, str | None]:
    ats = [m.start() for m in re.finditer(r"@(?=https?://)", rest)]
    if not ats or ats[-1] == 0:
        return rest, None
    return rest[: ats[-1]], rest[ats[-1] + 1 :]


def _known_providers() -> str:
    from kramabench import plugins

    return ", ".join(plugins.names("providers"))


__all__ = ["COMPATIBLE", "REPLAY", "ModelId", "parse_model_id", "split_compatible"]
