"""Secrets in lake text are masked before it goes to a model; ordinary data is left alone."""

from __future__ import annotations

import pytest

from kramabench.lake import LakeIndex, LakeOptions
from kramabench.lake.secrets import MASK, mask_secrets, mask_values
from tests.lake.prompt_truth import check_lake_text


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ('conn = psycopg2.connect(host="db", user="bob", password="Tr0ub4dor&3")', "Tr0ub4dor&3", "password"),
        ("DB_PASSWORD=hunter22", "hunter22", "password"),
        ("DB_PASS = 'x9y8'", "x9y8", "password"),
        ('{"api_key": "abcd1234efgh"}', "abcd1234efgh", "api_key"),
        ("client_secret: s3cr3tvalue", "s3cr3tvalue", "secret"),
        ("auth_token = 'tok_live_123456'", "tok_live_123456", "token"),
        ("url = postgres://analyst:pa55word@db.example.org/x", "pa55word", "url_password"),
        ("Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234", "auth_header"),
        ("key = sk-abcdefghijklmnopqrstuvwxyz12", "sk-abcdefghijklmnopqrstuvwxyz12", "openai_key"),
        ("id AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        (
            "gh = ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_token",
        ),
    ],
)
def test_secrets_are_masked(text, secret, kind):
    out, kinds = mask_secrets(text)
    assert secret not in out and MASK in out and kind in kinds, (out, kinds)


@pytest.mark.parametrize(
    "text",
    [
        "token_count,site\n3,A\n",
        "password = os.environ['DB_PASSWORD']",
        "password = getpass()",
        "password = None",
        '<a href="/wiki/Main" accesskey="z">Main page</a>',
        'mw.user.tokens.set({"patrolToken":"+\\\\","csrfToken":"+\\\\"});',
        "the token: 3",
        "year,passengers,secretariat_count\n2001,12,3\n",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert mask_secrets(text) == (text, [])


def test_a_private_key_over_many_lines_is_masked_in_snippets(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    body = "".join(f"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo{i:04d}\n" for i in range(30))
    (lake / "deploy.pem").write_text(
        "-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\nafter\n"
    )
    idx = LakeIndex.build(lake, LakeOptions(max_rows=40), cache_dir=False)
    for style in ("paper", "rich"):
        r = idx.render(budget_tokens=5000, style=style)
        assert "QUJDREVG" not in r.text and r.masked == {"deploy.pem": ["private_key"]}, (style, r.text)
        # the lines shown differ from the file's where masked, and the prompt says so
        assert (
            "   note: secret values (passwords, keys, tokens) in its lines are shown as [MASKED]\n" in r.text
        )
        assert "\nafter\n" in r.text and check_lake_text(r.text, lake, prefix="") == []


def test_secrets_known_by_value_are_masked_wherever_they_appear():
    """A task's random password printed alone (no ``password:`` before it) is found by its value."""
    pw = "Xb3_q-9ZrT"
    text = f"{pw}\npostgresql://postgres:{pw}@127.0.0.1/shop {pw}x"
    assert mask_values(text, [pw, ""]) == (f"{MASK}\npostgresql://postgres:{MASK}@127.0.0.1/shop {MASK}x", 3)
    assert mask_values(text, []) == (text, 0)
    # a value holding another is masked whole, not its inner part first
    assert mask_values("abcdef", ["cd", "abcdef"]) == (MASK, 1)
