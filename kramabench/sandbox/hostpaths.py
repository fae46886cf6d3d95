"""The host's folders as a sandbox's output names them: stable placeholders, never the machine's paths.

Code in the local sandbox runs the sandbox environment's interpreter at its host path
(``<KRAMABENCH_HOME>/sandbox-env/<lock hash>/``), so a library's traceback, ``sys.executable`` or
``pandas.__file__`` name it; an unsafe backend shows the host's interpreter. What a sandbox returns to a
system (a run's stdout and stderr, a session call's output, traceback, value and explanation) has those
folders replaced by placeholders:

- ``<sandbox-env>``: the sandbox environment (its folder as run, and as resolved);
- ``<python>``: the other folders of its interpreter (a base prefix outside ``/usr``);
- ``<kramabench-home>``: ``KRAMABENCH_HOME`` (fetched workloads and their lakes, ELT specs, wheels);
- ``<kramabench-cache>``: the model response cache folder (``KRAMABENCH_CACHE``);
- ``<kramabench>``: the checkout of kramabench itself (an installed package: its folder, as
  ``<kramabench>/kramabench``).

So a model never learns where it runs, and a recorded run replays identically on another machine, in
another folder, with another cache. A docker sandbox's paths are the image's (the same everywhere).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from kramabench.contracts.sandbox import ExecResult
from kramabench.contracts.session import CommandResult, PythonResult

#: characters a path may go on with (a folder named as a prefix of another is not replaced inside it)
_AFTER = r"(?=[/\\\s'\"`:,;)\]}>|]|$)"

T = TypeVar("T")
#: what a sandbox returns, masked by :meth:`HostPaths.result`
Masked = TypeVar("Masked", ExecResult, PythonResult, CommandResult)


class HostPaths:
    """Replaces host folders by placeholders in text (longest folder first; a folder and its resolved path)."""

    def __init__(self, named: Iterable[tuple[str | os.PathLike[str] | None, str]]) -> None:
        pairs: dict[str, str] = {}
        for path, name in named:
            if not path:
                continue
            for p in {os.path.abspath(os.fspath(path)), os.path.realpath(os.fspath(path))}:
                p = p.rstrip("/")
                if p.count("/") >= 2 or (p.count("/") == 1 and len(p) > 4):  # never "/" or a short top folder
                    pairs.setdefault(p, name)
        self.pairs = sorted(pairs.items(), key=lambda kv: (-len(kv[0]), kv[0]))
        self._re = re.compile("|".join(re.escape(p) for p, _ in self.pairs) + _AFTER) if self.pairs else None
        self._names = dict(self.pairs)

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def mask(self, text: T) -> T:
        """``text`` with every host folder replaced by its placeholder (anything that is not a str as is)."""
        if not isinstance(text, str) or self._re is None or "/" not in text:
            return text
        return self._re.sub(lambda m: self._names[m.group(0)], text)  # type: ignore[return-value]

    def result(self, r: Masked) -> Masked:
        """A copy of a sandbox's result (an ExecResult, PythonResult, CommandResult) with its texts masked, its
        exception's too."""
        if not self:
            return r
        texts = {"stdout": r.stdout, "stderr": r.stderr, "explanation": r.explanation}
        if isinstance(r, PythonResult):
            texts["value"] = r.value
        update: dict[str, Any] = {k: self.mask(v) for k, v in texts.items() if v is not None}
        if isinstance(r, PythonResult) and r.error is not None:
            e = r.error
            update["error"] = e.model_copy(
                update={
                    "type": self.mask(e.type),
                    "message": self.mask(e.message),
                    "traceback": self.mask(e.traceback),
                }
            )
        return r.model_copy(update=update)


def _kramabench_home() -> Path | None:
    from kramabench.sandbox.environment.local_env import kramabench_home

    try:
        return kramabench_home()
    except Exception:  # noqa: BLE001 - no user cache dir: nothing to hide
        return None


def _response_cache() -> str | None:
    env = os.environ.get("KRAMABENCH_CACHE", "").strip()
    return env or None


def host_paths(executable: str | None = None, binds: Iterable[str] = ()) -> HostPaths:
    """The placeholders of this machine: the sandbox environment of ``executable`` (its venv folder) and the
    interpreter's other folders ``binds``, KRAMABENCH_HOME, the response cache, the kramabench checkout."""
    named: list[tuple[str | None, str]] = []
    env_dir = None
    if executable:
        env_dir = os.path.dirname(os.path.dirname(os.path.abspath(executable)))
        named.append((env_dir, "<sandbox-env>"))
    for b in binds:
        if env_dir is None or os.path.realpath(b) != os.path.realpath(env_dir):
            named.append((b, "<python>"))
    home = _kramabench_home()
    named.append((str(home) if home else None, "<kramabench-home>"))
    named.append((_response_cache(), "<kramabench-cache>"))
    import kramabench

    package = Path(kramabench.__file__).resolve().parent
    checkout = package.parent if (package.parent / "pyproject.toml").is_file() else None
    named.append((str(checkout), "<kramabench>") if checkout else (str(package), "<kramabench>/kramabench"))
    return HostPaths(named)


__all__ = ["HostPaths", "host_paths"]
