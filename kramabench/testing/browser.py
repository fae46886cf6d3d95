"""A headless Chromium driven over the DevTools protocol, for tests and benchmarks of pages (the viewer).

Debian's ``chromium`` is started with ``--remote-debugging-pipe``: protocol messages go through two pipes
(the browser reads fd 3 and writes fd 4, each message ending in a NUL byte), so no port is opened and no
client library is needed. One page (a target attached in flat mode) is driven: navigate, evaluate
JavaScript, wait for a condition, type text as the keyboard would (``Input.insertText``; or key by key
with pauses, as a person types: :meth:`Browser.type_keys`; an input method's composition: :meth:`Browser.compose`),
take a screenshot. Console errors, uncaught exceptions and Content-Security-Policy reports are collected in
:attr:`Browser.errors`.

    with Browser() as b:
        b.goto("http://127.0.0.1:8765/")
        b.wait_for("document.querySelectorAll('tr.run').length > 0")
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

#: the flags every headless run uses (no network of its own, no first-run work)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
]


class BrowserError(RuntimeError):
    pass


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(
        self, executable: str | None = None, *, width: int = 1280, height: int = 900, timeout_s: float = 30.0
    ) -> None:
        exe = executable or find_chromium()
        if exe is None:
            raise BrowserError("headless Chromium not found (apt-get install chromium)")
        self.timeout_s = timeout_s
        self.width, self.height = width, height
        self._profile = tempfile.mkdtemp(prefix="kb-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def _fds() -> None:  # in the child: the protocol pipes at fds 3 and 4, inherited by the browser
            a, b = (
                os.dup(to_browser_r),
                os.dup(from_browser_w),
            )  # first away from 3 and 4 (a pipe may be there)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [
                exe,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # only dup2 runs in preexec_fn; close_fds=False keeps the dup'ed fds 3 and 4 (every other descriptor
            # of this process is close-on-exec, as Python opens them)
            close_fds=False,
            preexec_fn=_fds,  # noqa: PLW1509
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._id = 0
        self._lock = threading.Lock()
        self._cv = threading.Condition()
        self._replies: dict[int, dict[str, Any]] = {}
        self._closed = False
        self.events: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._reader = threading.Thread(target=self._read_loop, name="kb-chromium-read", daemon=True)
        self._reader.start()
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"
            ]
            for domain in ("Page", "Runtime", "Log"):
                self.send(f"{domain}.enable", session=True)
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session=True,
            )
        except Exception:
            self.close()
            raise

    # -- the protocol ------------------------------------------------------------------------------
    def _read_loop(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cv:
                    self._closed = True
                    self._cv.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                if "id" in msg:
                    with self._cv:
                        self._replies[msg["id"]] = msg
                        self._cv.notify_all()
                else:
                    self._event(msg)

    def _event(self, msg: dict[str, Any]) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        self.events.append(msg)
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append(
                "exception: " + (d.get("exception", {}).get("description") or d.get("text", ""))
            )
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append(
                "console: "
                + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            )
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            if e.get("level") == "error" or "Content Security Policy" in e.get("text", ""):
                self.errors.append(f"log ({e.get('source')}): {e.get('text')}")

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            self._id += 1
            mid = self._id
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        try:
            view = memoryview(data)
            while view:
                n = os.write(self._to_browser, view)
                view = view[n:]
        except OSError as e:
            raise BrowserError(f"{method}: the browser is gone ({e})") from None
        deadline = time.monotonic() + (timeout or self.timeout_s)
        with self._cv:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise BrowserError(
                        f"{method}: no reply ({'browser closed' if self._closed else 'timeout'})"
                    )
                self._cv.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    # -- a page ----------------------------------------------------------------------------------
    def goto(self, url: str, *, wait: bool = True) -> None:
        res = self.send("Page.navigate", {"url": url}, session=True)
        if res.get("errorText"):
            raise BrowserError(f"navigate {url}: {res['errorText']}")
        if wait:
            self.wait_for("document.readyState === 'complete'")

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        res = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
        )
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise BrowserError(
                f"{expression[:80]}: {d.get('exception', {}).get('description') or d.get('text')}"
            )
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 10.0, interval: float = 0.05) -> Any:
        """Evaluate until truthy in JavaScript's sense; its value (True for an object, e.g. an element).
        Raises with the expression when the time is up."""
        deadline = time.monotonic() + timeout
        last: Any = None
        probe = f"(() => {{ const v = ({expression}); return v && typeof v === 'object' ? true : v; }})()"
        while True:
            try:
                last = self.eval(probe)
            except BrowserError as e:
                last = e
            if last and not isinstance(last, BrowserError):
                return last
            if time.monotonic() > deadline:
                raise BrowserError(
                    f"waited {timeout:g} s for: {expression} (last: {last!r}; errors: {self.errors[-3:]})"
                )
            time.sleep(interval)

    def click(self, selector: str) -> None:
        ok = self.eval(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false; "
            "e.scrollIntoView({block: 'center'}); e.click(); return true; })()"
        )
        if not ok:
            raise BrowserError(f"click: nothing matches {selector}")

    def type(self, selector: str, text: str) -> None:
        """Focus an input, clear it and type ``text`` through the input pipeline (input events fire)."""
        ok = self.eval(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false; "
            "e.focus(); e.select && e.select(); return true; })()"
        )
        if not ok:
            raise BrowserError(f"type: nothing matches {selector}")
        if text:
            self.send("Input.insertText", {"text": text}, session=True)
        else:  # the selection deleted, as the Backspace key does
            for kind in ("rawKeyDown", "keyUp"):
                self.send(
                    "Input.dispatchKeyEvent",
                    {"type": kind, "key": "Backspace", "code": "Backspace", "windowsVirtualKeyCode": 8},
                    session=True,
                )

    #: keys sent by name (a key that is not a character)
    KEYS = {
        "Backspace": 8,
        "Tab": 9,
        "Enter": 13,
        "Escape": 27,
        "ArrowLeft": 37,
        "ArrowUp": 38,
        "ArrowRight": 39,
        "ArrowDown": 40,
        "Delete": 46,
        "Home": 36,
        "End": 35,
        " ": 32,
    }

    def key(self, name: str) -> None:
        """Press and release one key in whatever has the focus now (a character, or a name of :data:`KEYS`)."""
        code = self.KEYS.get(name)
        if name == "Enter":  # a key with a character: the text makes it activate a button, submit a form
            self.send(
                "Input.dispatchKeyEvent",
                {
                    "type": "keyDown",
                    "key": "Enter",
                    "code": "Enter",
                    "text": "\r",
                    "windowsVirtualKeyCode": 13,
                },
                session=True,
            )
            self.send(
                "Input.dispatchKeyEvent",
                {"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13},
                session=True,
            )
            return
        if code is not None and name != " ":
            for kind in ("rawKeyDown", "keyUp"):
                self.send(
                    "Input.dispatchKeyEvent",
                    {"type": kind, "key": name, "code": name, "windowsVirtualKeyCode": code},
                    session=True,
                )
            return
        vk = ord(name.upper()) if len(name) == 1 and name.isascii() and name.isalnum() else (code or 0)
        self.send(
            "Input.dispatchKeyEvent",
            {
                "type": "keyDown",
                "key": name,
                "text": name,
                "unmodifiedText": name,
                "windowsVirtualKeyCode": vk,
            },
            session=True,
        )
        self.send(
            "Input.dispatchKeyEvent",
            {"type": "keyUp", "key": name, "windowsVirtualKeyCode": vk},
            session=True,
        )

    def type_keys(self, text: str, *, pause_s: float = 0.0) -> None:
        """Type ``text`` key by key into whatever has the focus (never focused again between keys, as a person
        types: a page that moves the focus away loses the keys that follow), ``pause_s`` between keys."""
        for n, c in enumerate(text):
            if n and pause_s:
                time.sleep(pause_s)
            self.key(c)

    def compose(self, steps: list[str], commit: str, *, pause_s: float = 0.0) -> None:
        """An input method's composition in the focused field: each of ``steps`` shown as the text being
        composed (``compositionstart``/``update`` events), then ``commit`` inserted (``compositionend``)."""
        for s in steps:
            self.send(
                "Input.imeSetComposition",
                {"text": s, "selectionStart": len(s), "selectionEnd": len(s)},
                session=True,
            )
            if pause_s:
                time.sleep(pause_s)
        self.send("Input.insertText", {"text": commit}, session=True)

    def screenshot(self, path: Path | str, *, full_page: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            h = int(self.eval("Math.ceil(document.documentElement.scrollHeight)") or self.height)
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": min(h, 8000), "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params, session=True)["data"]
        out = Path(path)
        out.write_bytes(base64.b64decode(data))
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("Browser.close", timeout=5)
            except BrowserError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["FLAGS", "Browser", "BrowserError", "find_chromium"]
