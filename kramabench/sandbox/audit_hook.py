# The audit hook of the bootstrap program (standard library only), the first part of its source: the
# program every backend starts inside the sandbox is this file, session_server.py and bootstrap.py, one after
# the other (kramabench.sandbox.interpreter.bootstrap_source), passed with ``python -c``. Both the code of a
# run (bootstrap.py's _child) and a session's interpreter (session_server.py's _kernel_main) install it.
#
# It reports which lake files the code names: Python's open()/os.open (pandas, numpy, openpyxl, ...);
# sqlite3.connect (sqlite opens its file in C); a program started with subprocess or os.system/exec reads
# what its arguments name. The report is a claim of the code's own process, which the code can forge: the
# harness keeps only entries that are files of the lake (kramabench.sandbox.reports.parse_audit).
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_AUDITED = ("open", "sqlite3.connect", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn")


def _lake_audit(prefixes: list[str], workdir: str, found: "Callable[[str], None]") -> None:
    """Install the audit hook: ``found(rel)`` is called with the path, relative to its lake folder, of each
    path under one of ``prefixes`` (the lake and its aliases) the code names; relative paths are taken from
    the current folder (``workdir`` when it is gone). ``found`` keeps what it wants (once each, a cap)."""
    roots = [p.rstrip("/") + "/" for p in prefixes]
    busy = [False]

    def note(path: object) -> None:
        if isinstance(path, int) or path is None:
            return
        text = path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else str(path)
        if text.startswith("file:"):  # sqlite URIs
            text = text[5:].split("?", 1)[0]
        if not text.startswith("/"):
            try:
                base = os.getcwd()
            except BaseException:
                base = workdir
            text = base + "/" + text
        text = os.path.normpath(text)
        for pre in roots:
            if text.startswith(pre):
                rel = text[len(pre) :]
                if rel:
                    found(rel)
                break

    def hook(event: str, args: "tuple[Any, ...]") -> None:
        if busy[0] or event not in _AUDITED:
            return
        busy[0] = True
        try:
            if event in ("open", "sqlite3.connect"):
                note(args[0])
            elif event == "os.system":
                for word in str(args[0]).split():
                    note(word.strip("'\""))
            else:  # subprocess.Popen(executable, args, cwd, env); os.exec/posix_spawn(path, args, env)
                words = args[1]
                for arg in [words] if isinstance(words, str | bytes) else list(words or ()):
                    note(arg)
        except BaseException:
            pass
        finally:
            busy[0] = False

    sys.addaudithook(hook)
