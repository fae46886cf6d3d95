"""The system registry: built-ins, module:Class, options, entry points, needs of a system."""

from __future__ import annotations

import sys
import textwrap

import pytest

from kramabench.systems import SystemContext, SystemNotFound, available_systems, get_system_spec
from kramabench.systems.parsing import parse_printed_answer


def test_builtins_are_registered():
    specs = available_systems()
    assert {"reference", "replay"} <= set(specs)
    assert specs["reference"].privileged and specs["reference"].needs_sandbox
    assert specs["replay"].privileged and not specs["replay"].needs_model


def test_unknown_system_lists_the_available_ones():
    with pytest.raises(SystemNotFound, match="available: .*reference"):
        get_system_spec("no-such-system")
    with pytest.raises(SystemNotFound, match="cannot import module"):
        get_system_spec("no_such_module_xyz:Thing")
    with pytest.raises(SystemNotFound, match="has no attribute"):
        get_system_spec("json:NoSuchThing")


@pytest.fixture
def mod(tmp_path, monkeypatch):
    (tmp_path / "my_systems.py").write_text(
        textwrap.dedent("""
        from kramabench.contracts.system import SystemOutput

        class WithModel:
            name = "with-model"
            def __init__(self, model, temperature: float = 0.0):
                self.model, self.temperature = model, temperature
            def solve(self, task):
                return SystemOutput(answer=self.temperature)

        class Plain:
            name = "plain"
            def solve(self, task):
                return SystemOutput(answer=1)

        def factory(ctx):
            return Plain()
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_systems", None)
    return tmp_path


def test_module_class_gets_model_and_options(mod):
    spec = get_system_spec("my_systems:WithModel")
    assert spec.needs_model and not spec.needs_sandbox and not spec.privileged
    s = spec.build(SystemContext(options={"temperature": 0.5}, model="M"))
    assert s.model == "M" and s.temperature == 0.5
    with pytest.raises(ValueError, match="no option 'top_k'.*accepts: temperature"):
        spec.build(SystemContext(options={"top_k": 3}, model="M"))


def test_factory_function_and_plain_class(mod):
    assert get_system_spec("my_systems:factory").build(SystemContext()).name == "plain"
    spec = get_system_spec("my_systems:Plain")
    assert not spec.needs_model
    assert spec.build(SystemContext()).name == "plain"


def test_ordinary_systems_never_get_the_resolver(mod):
    from kramabench.systems.context import TaskResolver

    ctx = SystemContext(resolver=TaskResolver())
    get_system_spec("my_systems:Plain").build(ctx)
    assert ctx.resolver is None


def test_entry_point_system(tmp_path, monkeypatch, mod):
    dist = tmp_path / "mysys-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mysys\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[kramabench.systems]\nmy-plain = my_systems:Plain\n")
    import importlib

    from kramabench import plugins

    importlib.invalidate_caches()
    monkeypatch.setattr(plugins, "_scanned", {})  # read the metadata again (restored after the test)
    monkeypatch.setattr(plugins, "_loaded", {})
    assert "my-plain" in available_systems()
    spec = get_system_spec("my-plain")
    assert spec.build(SystemContext()).name == "plain"


def test_parse_printed_answer_takes_the_last_object_with_main_task():
    out = 'log {"a": 1}\n{"main-task": 1}\nwarning\n{"main-task": [1, 2], "subtask-1": "x"}\n{"other": 3}\n'
    assert parse_printed_answer(out) == {"main-task": [1, 2], "subtask-1": "x"}
    assert parse_printed_answer('{"main-task": {"nested": {"x": 1}}}') == {"main-task": {"nested": {"x": 1}}}
    assert parse_printed_answer("no json {broken") is None
    # a Python dict printed without json.dumps (a reference solution's print(d)) is read as DS-Guru reads it
    assert parse_printed_answer("log\n{'main-task': 3, 'subtask-1': None}\n") == {
        "main-task": 3,
        "subtask-1": None,
    }
