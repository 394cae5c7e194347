"""Secret redaction: the one place that decides what never reaches the store or a model.

``redact(text)`` removes ``<private>...</private>`` spans entirely and replaces API keys,
tokens, private keys and credential assignments with ``[REDACTED:<kind>]``.
"""

from __future__ import annotations

import re

_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

# (kind, pattern). Order matters: specific key formats before generic assignments.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private_key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.DOTALL)),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("aws_secret_key", re.compile(
        r"(?i)\baws_?secret_?(?:access_?)?key\b\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}[\"']?")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+")),
    ("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer", re.compile(r"(?i)\b(authorization\s*:\s*bearer|bearer)\s+[A-Za-z0-9_\-.=:/+]{16,}")),
    ("url_password", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
]

# Credential assignments. A name counts when it contains one of these words (``DB_PASSWORD``,
# ``apiKey``, ``GITHUB_TOKEN``); bare "auth" does not, so prose like "our auth: JWT" survives.
_KEYWORD = (
    r"(?:pass(?:word|wd)?|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|"
    r"client[_\-]?secret|auth[_\-]?token|authorization|credentials?|session[_\-]?key)"
)
_NAME = rf"(?=[A-Za-z_])[A-Za-z0-9_.\-]*?{_KEYWORD}(?:_[A-Za-z0-9_]*)?"
_VALUE = r"(?P<value>\"[^\"\n]{3,}\"|'[^'\n]{3,}'|[^\s,;\"'`]{3,})"
# At a line start, .env / YAML style: ``export API_KEY=...``, ``password: ...``.
_LINE_ASSIGNMENT = re.compile(
    rf"(?im)^(?P<lead>[ \t]*(?:export[ \t]+)?)(?P<name>{_NAME})(?P<sep>[ \t]*[:=][ \t]*){_VALUE}"
)
# Anywhere: ``password=hunter2`` and quoted ``"token": "abc"`` (JSON, YAML, Python dicts).
_INLINE_ASSIGNMENT = re.compile(
    rf"(?i)(?P<lead>(?<![A-Za-z0-9_.\-])[\"']?)(?P<name>{_NAME})"
    rf"(?P<sep>[\"']?[ \t]*(?:=|:(?=[ \t]*[\"']))[ \t]*){_VALUE}"
)

_REDACTED = "[REDACTED:{}]"


def _assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.startswith("[REDACTED:"):
        return match.group(0)
    return f"{match.group('lead') or ''}{match.group('name')}{match.group('sep')}[REDACTED:credential]"


def redact(text: str) -> str:
    """Return ``text`` with private spans dropped and secrets replaced."""
    if not text:
        return text
    out = _PRIVATE.sub("", text)
    for kind, pattern in _PATTERNS:
        out = pattern.sub(_REDACTED.format(kind), out)
    out = _LINE_ASSIGNMENT.sub(_assignment, out)
    return _INLINE_ASSIGNMENT.sub(_assignment, out)


def has_secret(text: str) -> bool:
    """True when ``redact`` would change ``text``."""
    return redact(text) != text
