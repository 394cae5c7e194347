"""Redaction: what must never be stored, and prose that must survive untouched."""

from __future__ import annotations

import pytest

from agentctx.redact import redact
from agentctx.store import db, records

SECRETS = {
    "anthropic": "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3,
    "openai": "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3" * 2,
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "google": "AIza" + "SyA-1234567890abcdefghijklmnopqrstu",
}

ASSIGNMENTS = [
    ("password=hunter2secret", "hunter2secret"),
    ("connect with password=hunter2 to prod", "hunter2"),
    ('config = {"api_key": "abcd1234"}', "abcd1234"),
    ("export GITHUB_TOKEN=ghx_abc123", "ghx_abc123"),
    ("DB_PASSWORD: s3cret!!", "s3cret!!"),
    ("PASSWORD: letmein", "letmein"),
    ('secret_key = "supersecret"', "supersecret"),
    ("apiKey=XYZ123456", "XYZ123456"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"),
    ("postgres://admin:pa55word@db.internal:5432/app", "pa55word"),
]

PROSE = [
    "Author: Jane Doe",
    "our auth: JWT with RS256",
    "Authentication: uses OAuth",
    "tokens: 5 per request",
    "use a token bucket for rate limits",
    "the password reset flow sends an email",
]


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_key_formats_are_redacted(kind):
    text = f"config uses {SECRETS[kind]} for the client"
    out = redact(text)
    assert SECRETS[kind] not in out and "[REDACTED:" in out and redact(text) != text


@pytest.mark.parametrize(("text", "secret"), ASSIGNMENTS)
def test_credential_assignments_are_redacted(text, secret):
    assert secret not in redact(text)


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_auth_survives(text):
    assert redact(text) == text


def test_private_spans_and_pem_keys_vanish():
    text = (
        "keep this <private>my home address is 1 Main St</private> and this\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----\nend"
    )
    out = redact(text)
    assert "Main St" not in out and "MIIEowIBAAKCAQEA7" not in out
    assert out.startswith("keep this") and "and this" in out and out.endswith("end")
    assert "unterminated" not in redact("x <private>unterminated secret to the end")


def test_nothing_secret_reaches_the_database_file(home):
    conn = db.connect()
    body = "\n".join([*SECRETS.values(), *(t for t, _ in ASSIGNMENTS), "<private>diary entry</private>"])
    rec = records.add(conn, "p1", type="discovery", title=f"creds {SECRETS['github']}", body=body)
    records.edit(conn, rec["id"], body=body + "\nmore: " + SECRETS["anthropic"], all_projects=True)
    conn.close()
    raw = b"".join(p.read_bytes() for p in home.glob("agentctx.db*"))
    for secret in [*SECRETS.values(), *(s for _, s in ASSIGNMENTS), "diary entry"]:
        assert secret.encode() not in raw, secret
