"""Runs README commands exactly as written, beside the scripted local model, in a network namespace of its own.

``unshare --net -- python tests/docs/readme_session.py PLAN.json OUT.json``: a fresh network namespace has
only its own loopback, so the fixed address the README names (the model server's 127.0.0.1:8000, the
viewer's 127.0.0.1:8765) is free whatever else runs on the machine, and nothing here can reach or disturb
another process's port. In it, this script brings ``lo`` up, serves :mod:`readme_model` with
``kramabench.testing.OpenAIServer`` on the plan's port (any free one when it names none), and runs the plan's steps in order, each with
``bash -c COMMAND`` in the plan's folder:

- ``{"command": ...}``: run to its end; its exit code, output and the chat requests it made are recorded;
- ``{"command": ..., "serve": [url, ...]}``: started as a user starts it, the URLs read once they answer,
  then stopped with Ctrl-C (SIGINT to its process group), as a user stops it.

The outcome of each step goes to OUT.json; the test judges it.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    """``ip link set lo up`` without iproute2 (a new network namespace has ``lo`` down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _tail(text: str, n: int = 20000) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def run_step(step: dict, cwd: str, env: dict, server) -> dict:  # noqa: ANN001
    before = len(server.requests)
    t0 = time.monotonic()
    if "serve" not in step:
        done = subprocess.run(
            ["bash", "-c", step["command"]],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=step.get("timeout", 900),
        )
        return {
            "command": step["command"],
            "returncode": done.returncode,
            "stdout": _tail(done.stdout),
            "stderr": _tail(done.stderr),
            "requests": len(server.requests) - before,
            "seconds": round(time.monotonic() - t0, 1),
        }
    proc = subprocess.Popen(
        ["bash", "-c", step["command"]],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    pages: dict[str, dict] = {}
    try:
        deadline = time.monotonic() + step.get("timeout", 60)
        for url in step["serve"]:
            while True:
                try:
                    with urllib.request.urlopen(url, timeout=10) as r:
                        pages[url] = {
                            "status": r.status,
                            "type": r.headers.get("Content-Type"),
                            "body": r.read().decode("utf-8", "replace"),
                        }
                    break
                except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        pages[url] = {"error": repr(e)}
                        break
                    time.sleep(0.2)
        running = proc.poll() is None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
        try:
            out, err = proc.communicate(timeout=20)
            stopped_by_ctrl_c = True
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            stopped_by_ctrl_c = False
    return {
        "command": step["command"],
        "returncode": proc.returncode,
        "stdout": _tail(out),
        "stderr": _tail(err),
        "pages": pages,
        "was_serving": running,
        "stopped_by_ctrl_c": stopped_by_ctrl_c,
        "requests": len(server.requests) - before,
        "seconds": round(time.monotonic() - t0, 1),
    }


def main(plan_path: str, out_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text(encoding="utf-8"))
    loopback_up()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import readme_model

    from kramabench.testing import OpenAIServer

    results = []
    with OpenAIServer(port=plan.get("model_port") or 0) as server:  # 0: a plan that needs no model
        server.handler = readme_model.reply
        for step in plan["steps"]:
            results.append(run_step(step, plan["cwd"], plan["env"], server))
            Path(out_path).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
