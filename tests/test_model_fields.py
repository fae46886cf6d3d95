"""A pydantic model with a field named ``model_*`` (model_calls, model_options...) declares
``protected_namespaces=()``: pydantic before 2.10 (the oldest pyproject.toml allows is 2.6) printed a
warning per such field on every command, which broke the one-line errors of the CLI."""

from __future__ import annotations

import importlib
import pkgutil

from pydantic import BaseModel


def _modules():
    for top in ("kramabench",):
        pkg = importlib.import_module(top)
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, f"{top}."):
            try:
                yield importlib.import_module(info.name)
            except ImportError:  # an optional dependency (ray, smolagents) that is not installed
                continue


def test_models_with_model_fields_allow_them():
    seen, bad = set(), []
    for mod in _modules():
        for obj in vars(mod).values():
            if not (isinstance(obj, type) and issubclass(obj, BaseModel)) or obj in seen:
                continue
            seen.add(obj)
            if not obj.__module__.startswith("kramabench"):
                continue
            own = [n for n in obj.model_fields if n.startswith("model_")]
            if own and obj.model_config.get("protected_namespaces") != ():
                bad.append(f"{obj.__module__}.{obj.__qualname__}: {', '.join(own)}")
    assert len(seen) > 20
    assert not bad, "add protected_namespaces=() to the model_config of: " + "; ".join(bad)
