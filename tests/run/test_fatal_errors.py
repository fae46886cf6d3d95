"""Fatal model errors (a refused key, an unknown model, an unreachable endpoint) stop a run early: the
preflight before the first task, or the first such error during the run; at most one request per model,
a non-zero exit code, one clear line, and a resume that runs the affected tasks again."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from kramabench.contracts.records import Record
from kramabench.contracts.system import OutcomeError
from kramabench.run.runner import is_fatal_record
from kramabench.run.store import RunStore
from kramabench.testing import OpenAIServer, Reply

from .synth import make_workload, write_system_module

pytestmark = pytest.mark.api


def _env(repo_root, sysmods, tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "TOGETHER"))}
    env["PYTHONPATH"] = os.pathsep.join([str(repo_root), str(sysmods)])
    env["KRAMABENCH_CACHE"] = str(tmp_path / "cache")
    env["COLUMNS"] = "200"
    env.update(extra)
    return env


def _run(args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "kramabench", "run", *args], capture_output=True, text=True, **kw
    )


def _requests(server: OpenAIServer) -> int:
    return len(server.chat_requests) + len(server.other_requests)


def _error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("error:")]


@pytest.mark.parametrize("provider", ["openai-compatible", "openai"])
def test_refused_key_stops_before_any_task_with_one_request(tmp_path, repo_root, provider):
    """DS-Guru on the bundled workload against a server answering 401: one request, exit 3, one line."""
    with OpenAIServer(api_key="sk-right") as server:
        if provider == "openai":
            model = "openai/gpt-4o-mini"
            extra = {"OPENAI_API_KEY": "sk-wrong", "OPENAI_BASE_URL": server.base_url}
        else:
            model = f"openai-compatible/test-model@{server.base_url}"
            extra = {"OPENAI_COMPATIBLE_API_KEY": "sk-wrong"}
        p = _run(
            [
                "--workload",
                "mini",
                "--system",
                "ds-guru-simple",
                "--model",
                model,
                "--judge",
                model,
                "--results",
                str(tmp_path / "res"),
                "--progress",
                "none",
            ],
            cwd=repo_root,
            env=_env(repo_root, tmp_path, tmp_path, **extra),
            timeout=300,
        )
        assert _requests(server) == 1, (server.other_requests, len(server.chat_requests))
    assert p.returncode == 3, p.stderr
    assert "Traceback" not in p.stderr
    lines = _error_lines(p.stderr)
    assert len(lines) == 1 and "key was refused" in lines[0] and "[auth]" in lines[0], p.stderr
    assert not (tmp_path / "res").exists()  # nothing was run, no run folder


def test_unreachable_endpoint_is_one_line_without_retries(tmp_path, repo_root):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    p = _run(
        [
            "--workload",
            "mini",
            "--system",
            "ds-guru-simple",
            "--model",
            f"openai-compatible/m@http://127.0.0.1:{port}/v1",
            "--results",
            str(tmp_path / "res"),
        ],
        cwd=repo_root,
        env=_env(repo_root, tmp_path, tmp_path),
        timeout=120,
    )
    assert p.returncode == 3
    lines = _error_lines(p.stderr)
    assert len(lines) == 1 and f"cannot reach http://127.0.0.1:{port}/v1" in lines[0], p.stderr
    assert "retrying" not in p.stderr and "Traceback" not in p.stderr


def test_unknown_openai_model_found_by_the_preflight(tmp_path, repo_root):
    with OpenAIServer(models=["gpt-4o-mini"]) as server:
        p = _run(
            [
                "--workload",
                "mini",
                "--system",
                "ds-guru-simple",
                "--model",
                "openai/gpt-4o-mni",
                "--results",
                str(tmp_path / "res"),
            ],
            cwd=repo_root,
            env=_env(repo_root, tmp_path, tmp_path, OPENAI_API_KEY="k", OPENAI_BASE_URL=server.base_url),
            timeout=120,
        )
        assert _requests(server) == 1 and server.chat_requests == []
    assert p.returncode == 3
    lines = _error_lines(p.stderr)
    assert len(lines) == 1 and "no model 'gpt-4o-mni'" in lines[0] and "[not_found]" in lines[0], p.stderr


@pytest.mark.parametrize("fault", ["auth", "not_found"])
def test_fatal_error_during_the_run_stops_it_and_resume_runs_those_tasks(tmp_path, repo_root, fault):
    """The preflight passes (the listing works) but chat calls fail fatally: one chat request, the run is
    interrupted with the cause, exit 3, the resume command printed; the resume runs every task."""
    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    n = 8
    root = make_workload(tmp_path / "wl", n=n)
    res = tmp_path / "res"
    env = _env(repo_root, sysmods, tmp_path)

    def answer(req):
        import re

        m = re.search(r"\[answer=(.*?)\]", req.last_user_message)
        return m.group(1) if m else "null"

    with OpenAIServer(models=["test-model"]) as server:
        if fault == "auth":
            server.default = Reply.error(401, "Incorrect API key provided")
            name = "test-model"
        else:
            name = "no-such-model"  # the listing works; the chat call answers 404 model_not_found
        model = f"openai-compatible/{name}@{server.base_url}"
        p = _run(
            [
                "--workload",
                str(root),
                "--system",
                f"{module}:Modelled",
                "--model",
                model,
                "--results",
                str(res),
                "--run-id",
                "r",
                "-j",
                "4",
                "--progress",
                "none",
            ],
            cwd=repo_root,
            env=env,
            timeout=300,
        )
        assert len(server.chat_requests) == 1, len(server.chat_requests)
        assert p.returncode == 3, p.stderr
        lines = _error_lines(p.stderr)
        assert len(lines) == 1 and "fatal model error" in lines[0] and fault in lines[0], p.stderr
        assert "kramabench run --resume --run-id r" in p.stderr and "Traceback" not in p.stderr
        m = RunStore(res / "r").read_manifest()
        assert m.status == "interrupted" and m.stop_reason and m.stop_reason.startswith(fault)
        assert not any(r.status == "error" for r in RunStore(res / "r").read().records)

        # fixed (the server now answers): a plain resume runs every task
        server.default = "null"
        server.handler = answer
        if fault == "not_found":
            server.models.append(name)
        p2 = _run(
            ["--resume", "--run-id", "r", "--results", str(res), "--progress", "none"],
            cwd=repo_root,
            env=env,
            timeout=300,
        )
    assert p2.returncode == 0, p2.stderr
    recs = RunStore(res / "r").read().records
    assert len(recs) == n and all(r.status == "ok" and r.score == 1.0 for r in recs)
    assert RunStore(res / "r").read_manifest().status == "finished"


def test_every_task_errored_exits_non_zero(tmp_path, repo_root):
    sysmods = tmp_path / "mods"
    module = write_system_module(sysmods).split(":")[0]
    root = make_workload(tmp_path / "wl", n=3, crash=(0, 1, 2))
    p = _run(
        [
            "--workload",
            str(root),
            "--system",
            f"{module}:Scripted",
            "--results",
            str(tmp_path / "res"),
            "--progress",
            "none",
            "--no-report",
        ],
        cwd=repo_root,
        env=_env(repo_root, sysmods, tmp_path),
        timeout=300,
    )
    assert p.returncode == 4, p.stderr
    lines = _error_lines(p.stderr)
    assert len(lines) == 1 and "every one of the 3 outcome(s) is an error (system_crash)" in lines[0], (
        p.stderr
    )


def test_older_records_of_fatal_errors_are_run_again():
    def rec(kind, message):
        return Record.model_construct(status="error", error=OutcomeError(kind=kind, message=message))

    assert is_fatal_record(rec("model_error", "auth: openai/gpt-4o: HTTP 401: bad key (after 1 attempt)"))
    assert is_fatal_record(rec("model_error", "not_found: HTTP 404"))
    assert not is_fatal_record(rec("model_error", "rate_limit: HTTP 429"))
    assert not is_fatal_record(rec("system_crash", "auth: not a model error"))


def test_help_shows_the_per_call_timeout_and_the_budget(repo_root):
    from kramabench.contracts.model import DEFAULT_TIMEOUT_S, ModelOptions

    p = subprocess.run(
        [sys.executable, "-m", "kramabench", "run", "--help"],
        capture_output=True,
        text=True,
        cwd=repo_root,
        env={**os.environ, "COLUMNS": "200"},
        timeout=60,
    )
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", p.stdout).split())  # typer's panels, if any, drawn away
    o = ModelOptions()
    assert "--model-budget" in text and "--model-timeout" in text
    assert f"tried again (default {DEFAULT_TIMEOUT_S:g})" in text and f"up to {o.max_attempts} times" in text


def test_manifest_json_has_stop_reason_field():
    from kramabench.contracts.records import Manifest

    assert "stop_reason" in Manifest.model_fields
    assert (
        json.loads(Manifest(run_id="x", created_at="2026-01-01T00:00:00Z", system="s").model_dump_json())[
            "stop_reason"
        ]
        is None
    )
