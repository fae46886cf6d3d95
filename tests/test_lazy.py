"""The packages that import their names on first use (kramabench._lazy): the names the type checker sees
(their ``if TYPE_CHECKING:`` imports) are the names they export at run time (``_LAZY``, ``__all__``)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

LAZY_PACKAGES = ["kramabench.contracts", "kramabench.run", "kramabench.scorers"]


def _typed_names(package: str) -> dict[str, str]:
    """name -> module of the ``if TYPE_CHECKING:`` imports of ``package``'s ``__init__.py``."""
    source = Path(importlib.import_module(package).__file__ or "").read_text()
    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for alias in imp.names:
                    # re-exported explicitly (`X as X`): __all__ is not a literal mypy could read
                    assert alias.asname == alias.name, f"{package}: {alias.name} imported as {alias.asname}"
                    names[alias.name] = imp.module
    return names


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_the_typed_names_are_the_exported_names(package: str) -> None:
    pkg = importlib.import_module(package)
    typed = _typed_names(package)
    if typed:  # a package without typed imports exports its names as Any (kramabench.scorers)
        assert typed == pkg._LAZY
    assert pkg.__all__ == list(pkg._LAZY)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_exported_name_resolves_to_its_home(package: str) -> None:
    pkg = importlib.import_module(package)
    for name, module in pkg._LAZY.items():
        assert getattr(pkg, name) is getattr(importlib.import_module(module), name), name
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        pkg.not_a_name  # noqa: B018
