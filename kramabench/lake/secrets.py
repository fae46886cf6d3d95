"""Mask secrets in lake text before it goes to a model.

Lake files sometimes hold credentials (an official lake ships a script with a hard-coded database
password). Nothing of them must reach a model provider, so every text built from the lake (snippets,
program output fed back) goes through :func:`mask_secrets`, which replaces the secret value with
``[MASKED]`` and says which kinds it found, so that the masking can be recorded.

What is masked:

* ``name = value`` / ``name: value`` / ``"name": "value"`` / ``name=value`` (``.env``, INI, YAML, JSON,
  code, URLs' query strings) where the name mentions a password, passwd, pwd, secret, token, API key,
  access key, private key, credential or auth key; the value is masked when it is a literal (quoted, or
  a bare word), not a call or a variable read (``os.environ[...]``, ``getpass()``);
* user:password in URLs (``postgres://user:pw@host``);
* ``Bearer <token>`` and ``Authorization: Basic <token>`` headers;
* tokens with a known shape: OpenAI (``sk-...``), AWS access key ids (``AKIA...``), GitHub (``ghp_...``,
  ``github_pat_...``), Slack (``xox?-...``), Google API keys (``AIza...``), JWTs, PEM private key blocks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

MASK = "[MASKED]"

_NAME = r"[\w.-]*?(?:passw(?:or)?d|passwd|_pass\b|passphrase|\bpwd|secret|token|api[_-]?key|apikey|access[_-]key|private[_-]?key|credentials?|auth[_-]?key)[\w.-]*"
# name, optional closing quote, the separator, then a quoted value or a bare word
_ASSIGN = re.compile(
    rf"""(?P<name>["']?{_NAME}["']?)(?P<sep>\s*(?::=|=>|=|:)\s*)
    (?:(?P<q>["'])(?P<qval>[^"'\n]{{1,400}})(?P=q)|(?P<val>[^\s"',;()\[\]{{}}<>]{{1,400}})(?![(\[.\w]))""",
    re.IGNORECASE | re.VERBOSE,
)
_NOT_SECRETS = {
    "none",
    "null",
    "nil",
    "true",
    "false",
    "",
    "***",
    "changeme",
    "xxx",
    "<password>",
    "password",
    MASK.lower(),
}
_URL_CREDS = re.compile(
    r"(?P<pre>\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,100}:)(?P<pw>[^\s@/]{1,200})(?P<at>@)", re.IGNORECASE
)
_BEARER = re.compile(r"(?P<pre>\b(?:Bearer|Basic)\s+)(?P<tok>[A-Za-z0-9._~+/=-]{12,})")
_SHAPES: list[tuple[str, re.Pattern[str]]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL
        ),
    ),
    ("openai_key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
]
#: lower-case fragments one of which every secret pattern needs (a fast pre-check: most text has none)
_NEEDLES = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    "auth",
    "bearer",
    "basic",
    "://",
    "sk-",
    "akia",
    "asia",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat",
    "xox",
    "aiza",
    "eyj",
    "private",
)


def may_hold_secrets(text: str) -> bool:
    """False when ``text`` cannot hold any secret :func:`mask_secrets` masks (a fast pre-check)."""
    low = text.lower()
    return any(n in low for n in _NEEDLES)


def _kind_of(name: str) -> str:
    n = name.lower()
    for word, kind in (
        ("pass", "password"),
        ("pwd", "password"),
        ("secret", "secret"),
        ("token", "token"),
        ("private", "private_key"),
        ("credential", "credential"),
    ):
        if word in n:
            return kind
    return "api_key"


def mask_secrets(text: str) -> tuple[str, list[str]]:
    """``text`` with secret values replaced by ``[MASKED]``, and the kinds found (one per masked value)."""
    if not text or not may_hold_secrets(text):
        return text, []
    found: list[str] = []

    def shape(kind: str) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            found.append(kind)
            return MASK

        return sub

    for kind, pat in _SHAPES:
        text = pat.sub(shape(kind), text)

    def url(m: re.Match[str]) -> str:
        if m.group("pw") == MASK:
            return m.group(0)
        found.append("url_password")
        return m.group("pre") + MASK + m.group("at")

    text = _URL_CREDS.sub(url, text)

    def bearer(m: re.Match[str]) -> str:
        if m.group("tok") == MASK:
            return m.group(0)
        found.append("auth_header")
        return m.group("pre") + MASK

    text = _BEARER.sub(bearer, text)

    def assign(m: re.Match[str]) -> str:
        value = m.group("qval") if m.group("q") else m.group("val")
        if value is None or value.strip().lower() in _NOT_SECRETS or MASK in value:
            return m.group(0)
        kind = _kind_of(m.group("name"))
        short = 1 if kind in ("password", "secret") else 4  # a token of 1-3 characters is no token
        if len(value.strip()) < short or not any(ch.isalnum() for ch in value):
            return m.group(0)  # "csrfToken": "+\\" (a placeholder of web pages)
        if not m.group("q") and value.isdigit() and len(value) < 4:
            return m.group(0)  # "token: 3" in a table of counts is not a secret
        found.append(kind)
        q = m.group("q") or ""
        return f"{m.group('name')}{m.group('sep')}{q}{MASK}{q}"

    text = _ASSIGN.sub(assign, text)
    return text, found


def mask_values(text: str, values: Sequence[str]) -> tuple[str, int]:
    """``text`` with every occurrence of each of ``values`` (secrets known by value: a task's random password,
    which no pattern finds when it is printed alone) replaced by ``[MASKED]``, and how many were. The longest
    value first (one that holds another is masked whole); empty values are ignored."""
    count = 0
    for v in sorted({v for v in values if v}, key=len, reverse=True):
        n = text.count(v)
        if n:
            text = text.replace(v, MASK)
            count += n
    return text, count


__all__ = ["MASK", "mask_secrets", "mask_values", "may_hold_secrets"]
