"""kramabench.plugins: names from metadata, the built-ins through the project's own entry points,
a built-in name kept when a plug-in declares it too, register()/unregister() for one process."""

from __future__ import annotations

import importlib
import sys

import pytest

from kramabench import plugins


@pytest.fixture
def fresh(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(plugins, "_scanned", {})
    monkeypatch.setattr(plugins, "_loaded", {})
    monkeypatch.setattr(plugins, "_registered", {})
    return monkeypatch


def _dist(tmp_path, name: str, entry_points: str, module: str = "") -> None:  # type: ignore[no-untyped-def]
    d = tmp_path / f"{name}-1.0.dist-info"
    d.mkdir()
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (d / "entry_points.txt").write_text(entry_points)
    if module:
        (tmp_path / f"{name}.py").write_text(module)


def test_every_builtin_is_an_entry_point_of_kramabench(fresh) -> None:  # type: ignore[no-untyped-def]
    expected = {
        "systems": {
            "reference",
            "replay",
            "ds-guru-naive",
            "ds-guru-simple",
            "ds-guru-self-correcting",
            "ds-guru-rich",
        },
        "settings": {"end-to-end", "pipeline-design", "subtasks"},
        "scorers": {
            "string_exact",
            "string_approximate",
            "numeric_exact",
            "numeric_approximate",
            "list_exact",
            "list_approximate",
        },
        "sandboxes": {"local", "docker", "unsafe-subprocess"},
        "providers": {"openai", "together", "openai-compatible", "replay"},
    }
    for kind, names in expected.items():
        found = plugins.plugins(kind)
        assert names <= set(found), kind
        assert all(found[n].builtin for n in names), kind
    assert plugins.get("systems", "ds-guru-simple").value == "kramabench.baselines.ds_guru.plugin:SIMPLE"
    # ours, not a paper variant: reachable by name, with the richer rendering in its effective options
    rich = plugins.load("systems", "ds-guru-rich")
    assert rich.option_defaults["lake_rendering"] == "rich" and "not the paper's" in rich.description


def test_a_plugin_cannot_take_a_builtin_name(fresh, tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    _dist(
        tmp_path,
        "kb_squatter",
        "[kramabench.sandboxes]\nlocal = kb_squatter:Fake\nfresh-box = kb_squatter:Fake\n",
        "class Fake:\n    pass\n",
    )
    fresh.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    found = plugins.plugins("sandboxes")
    assert found["local"].builtin and found["local"].value == "kramabench.sandbox.local:LocalSandbox"
    assert found["fresh-box"].distribution == "kb_squatter"
    assert "declared twice" in caplog.text
    assert plugins.load("sandboxes", "fresh-box").__name__ == "Fake"


def test_unknown_and_broken_plugins_say_what_is_installed(fresh, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _dist(
        tmp_path,
        "kb_broken",
        "[kramabench.scorers]\nbroken_type = kb_broken:score\n",
        "raise RuntimeError('boom')\n",
    )
    fresh.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    with pytest.raises(plugins.PluginNotFound, match=r"unknown sandbox 'nope'; available: .*local"):
        plugins.get("sandboxes", "nope")
    with pytest.raises(plugins.PluginError, match=r"scorer 'broken_type' .*kb_broken.*RuntimeError: boom"):
        plugins.load("scorers", "broken_type")
    sys.modules.pop("kb_broken", None)


def test_register_shadows_until_unregistered(fresh) -> None:  # type: ignore[no-untyped-def]
    def mine(expected, predicted, **kw):  # type: ignore[no-untyped-def]
        return None

    plugins.register("scorers", "numeric_exact", mine)
    assert plugins.load("scorers", "numeric_exact") is mine
    assert plugins.get("scorers", "numeric_exact").distribution == plugins.RUNTIME
    plugins.unregister("scorers", "numeric_exact")
    assert plugins.load("scorers", "numeric_exact").__module__ == "kramabench.scorers.scalar"
    with pytest.raises(ValueError, match="unknown plug-in kind"):
        plugins.names("widgets")
