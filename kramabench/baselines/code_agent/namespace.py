"""What the agent's code finds in its interpreter: ``final_answer(value)`` and ``shell(command)``.

:data:`PRELUDE` is Python run inside the session (never on the host) before the first step and again
after the interpreter was restarted (a step that timed out or crashed loses every variable). It defines:

* ``final_answer(answer, subtasks=None)``: converts the value to plain JSON the way the scorers read answers
  (a DataFrame, Series, numpy value or set included, see :func:`plain` below), writes it to
  :data:`ANSWER_FILE` in the workspace and ends the step by raising ``_KramabenchFinalAnswer`` (a
  ``BaseException``, so an ``except Exception`` in the agent's code does not swallow it);
* ``shell(command, timeout=None, input=None)``: runs a command in the workspace (a string goes to
  ``/bin/sh -c``, a list is run as it is), prints its output and exit code, returns the
  ``CompletedProcess``; a command that is not installed is exit code 127. This is how an agent reaches the
  tools of its sandbox (``duckdb``, ``psql``, ``dbt``, ... where the environment has them).

The conversion (``plain``):

* numbers, strings, booleans and None stay; NaN and infinities become None (no answer, not a number);
* a numpy scalar is its Python value; a numpy array its nested list; a Decimal a float;
* a pandas DataFrame of one cell is that value, of one column the column's values, of one row the row's
  values, else the list of its rows (each a list); a Series or an Index its values; a pandas or numpy
  container of one element is that element (a list scorer reads a lone value as a one-element list, a
  number scorer needs the value);
* a set is a sorted list; a tuple a list; a dict keeps its keys as strings;
* a date or time its ISO text (a timestamp at midnight: the date alone); ``pd.NA``/``NaT`` None;
* anything else is refused with a TypeError the agent sees (its step fails; it can try again).
"""

from __future__ import annotations

#: where ``final_answer`` writes the answer, relative to the workspace
ANSWER_FILE = ".kramabench/final_answer.json"
#: the exception type ``final_answer`` raises to end the step
FINAL_ANSWER_EXCEPTION = "_KramabenchFinalAnswer"

PRELUDE = r'''
def __kramabench_prelude(answer_path):
    import datetime as _dt
    import decimal as _decimal
    import json as _json
    import math as _math
    import os as _os
    import subprocess as _sp
    import sys as _sys

    class _KramabenchFinalAnswer(BaseException):
        """Ends the step: the final answer was given (not an error)."""

    def plain(value, _depth=0):
        if _depth > 60:
            raise TypeError("final_answer: the value is nested more than 60 levels deep")
        v = value
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            return float(v) if _math.isfinite(v) else None
        if isinstance(v, _decimal.Decimal):
            return plain(float(v), _depth + 1)
        pd = _sys.modules.get("pandas")
        np = _sys.modules.get("numpy")
        if pd is not None:
            if v is pd.NA or v is pd.NaT:
                return None
            if isinstance(v, pd.DataFrame):
                rows, cols = v.shape
                if rows * cols == 1:
                    return plain(v.iat[0, 0], _depth + 1)
                if cols == 1:
                    return [plain(x, _depth + 1) for x in v.iloc[:, 0].tolist()]
                if rows == 1:
                    return [plain(x, _depth + 1) for x in v.iloc[0].tolist()]
                return [[plain(x, _depth + 2) for x in row] for row in v.itertuples(index=False, name=None)]
            if isinstance(v, (pd.Series, pd.Index)):
                items = v.tolist()
                if len(items) == 1:
                    return plain(items[0], _depth + 1)
                return [plain(x, _depth + 1) for x in items]
            if isinstance(v, pd.Timedelta):
                return str(v)
        if isinstance(v, _dt.datetime):
            if v.tzinfo is None and v.time() == _dt.time(0, 0):
                return v.date().isoformat()
            return v.isoformat()
        if isinstance(v, (_dt.date, _dt.time)):
            return v.isoformat()
        if np is not None:
            if isinstance(v, np.ndarray):
                if v.size == 1:
                    return plain(v.reshape(-1)[0], _depth + 1)
                return plain(v.tolist(), _depth + 1)
            if isinstance(v, np.generic):
                if isinstance(v, np.datetime64):
                    return None if np.isnat(v) else str(v)
                return plain(v.item(), _depth + 1)
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                key = plain(k, _depth + 1)
                out[key if isinstance(key, str) else _json.dumps(key)] = plain(x, _depth + 1)
            return out
        if isinstance(v, (list, tuple)):
            return [plain(x, _depth + 1) for x in v]
        if isinstance(v, (set, frozenset)):
            items = [plain(x, _depth + 1) for x in v]
            try:
                return sorted(items)
            except TypeError:
                return sorted(items, key=lambda x: _json.dumps(x, sort_keys=True))
        raise TypeError(
            f"final_answer: a {type(v).__name__} is not an answer; give a number, a string, a list or a dict "
            "(a DataFrame, Series, numpy value or set is converted for you)"
        )

    def final_answer(answer, subtasks=None):
        """End the task with `answer` (a number, string, list, dict, DataFrame, Series, numpy value or set)."""
        doc = {"answer": plain(answer)}
        if subtasks is not None:
            if not isinstance(subtasks, dict):
                raise TypeError("final_answer: subtasks must be a dict of subtask id -> answer")
            doc["subtasks"] = {str(k): plain(x) for k, x in subtasks.items()}
        text = _json.dumps(doc, allow_nan=False, ensure_ascii=False)
        _os.makedirs(_os.path.dirname(answer_path), exist_ok=True)
        tmp = answer_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        _os.replace(tmp, answer_path)
        raise _KramabenchFinalAnswer("the final answer was given")

    class _Done(_sp.CompletedProcess):
        def __repr__(self):
            return f"<exit code {self.returncode}>"

    def shell(command, timeout=None, input=None):
        """Run `command` in the working directory (a string: through /bin/sh; a list: as it is); print its output
        and exit code; return the CompletedProcess (.returncode, .stdout, .stderr)."""
        argv = [str(a) for a in command] if isinstance(command, (list, tuple)) else ["/bin/sh", "-c", str(command)]
        try:
            r = _sp.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, input=input)
        except FileNotFoundError:
            msg = f"shell: command not found: {argv[0]}"
            print(msg, file=_sys.stderr)
            print("[exit code 127]")
            return _Done(argv, 127, "", msg)
        except _sp.TimeoutExpired as e:
            out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            print(out, end="")
            print(err, end="", file=_sys.stderr)
            print(f"[stopped after {timeout} s]")
            return _Done(argv, -9, out, err)
        if r.stdout:
            print(r.stdout, end="" if r.stdout.endswith("\n") else "\n")
        if r.stderr:
            print(r.stderr, end="" if r.stderr.endswith("\n") else "\n", file=_sys.stderr)
        print(f"[exit code {r.returncode}]")
        return _Done(argv, r.returncode, r.stdout, r.stderr)

    final_answer.__module__ = shell.__module__ = "agent"
    return final_answer, shell


final_answer, shell = __kramabench_prelude(__import__("os").path.join(__import__("os").getcwd(), __KRAMABENCH_ANSWER_FILE__))
del __kramabench_prelude
'''


def prelude() -> str:
    """The prelude, run in the session's working directory (the workspace: where the answer file goes)."""
    return PRELUDE.replace("__KRAMABENCH_ANSWER_FILE__", repr(ANSWER_FILE))


__all__ = ["ANSWER_FILE", "FINAL_ANSWER_EXCEPTION", "PRELUDE", "prelude"]
