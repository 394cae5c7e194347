"""Secret redaction: the one place that decides what never reaches the store, a file or a model.

``redact(text)`` drops ``<private>...</private>`` spans and replaces every secret it recognises
with ``[REDACTED:<label>]``. Each rule has its own label, so a test can prove every rule is needed:

* provider formats (``sk-ant-``, ``ghp_``, ``glpat-``, ``SG.x.y``, ``npm_``, ``hf_``, ``AKIA…``,
  Telegram bot tokens, Azure ``AccountKey=`` …), PEM/OpenSSH/PGP private keys and JWTs;
* credentials in headers (``Authorization: Bearer/Basic/Token``), URLs (``scheme://user:pw@``, secret
  query parameters) and command lines (``mysql -p…``, ``curl -u user:pw``, ``sshpass -p``,
  ``--password …``, ``.netrc``);
* assignments to credential-like names (``DB_PASSWORD=…``, ``"api_key": "…"``, ``token: …``), and
  high-entropy values assigned to key-like names (``SIGNING_KEY=8f4a…``).

Values that are references, not secrets (``$VAR``, ``${{ secrets.X }}``, ``os.environ[...]``,
``self.token``, ``None``, ``<your-key>``), are left alone, as are hashes, UUIDs, base64 images and
lockfile integrity strings (no rule looks for those). Patterns are compiled on first use, and a
rule runs only when one of its literal anchors occurs in the text (one ``lower()`` and a few
substring checks), so a 100 KB text with no secret costs a handful of scans.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator

_REDACTED = "[REDACTED:{}]"
_MARK = "[REDACTED:"

# A name counts as a credential name when it contains one of these words (``DB_PASSWORD``, ``apiKey``,
# ``GITHUB_TOKEN``); bare "auth" does not, so prose like "our auth: JWT" survives.
_KEYWORD = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|"
    r"client[_\-]?secret|auth[_\-]?(?:token|key)|authorization|credentials?|session[_\-]?key)"
)
_NAME = rf"(?=[A-Za-z_])[A-Za-z0-9_.\-]{{0,64}}?{_KEYWORD}(?:_[A-Za-z0-9_]*)?"
_VALUE = r"(?:\"(?P<dq>[^\"\n]{3,})\"|'(?P<sq>[^'\n]{3,})'|(?P<bare>[^\s,;\"'`]{3,}))"
_QUOTED_OR_WORD = r"(?P<s>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"]+)"
_CMD_TAIL = r"[^\n|;&]*?"  # the rest of one simple command
_CMD_END = r"[\n|;&]"  # what ends one (a rule's ``heads``)


@functools.cache
def _rx(source: str, flags: int = 0) -> re.Pattern[str]:
    """A helper pattern, compiled on first use."""
    return re.compile(source, flags)


_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


_LITERAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_:/ \"'=~")


def _prefix(source: str) -> list[str] | None:
    """The literal(s) every match of ``source`` starts with (after zero-width assertions), or None."""
    s = source
    for assertion in (r"\b", "(?<!", "(?<="):
        if s.startswith(assertion):
            s = s[2:] if assertion == r"\b" else s[s.index(")") + 1:]
    if s.startswith("(?:"):  # (?:AKIA|ASIA|...): plain alternatives only
        inner, _, rest = s[3:].partition(")")
        alts = inner.split("|")
        if all(a and set(a) <= _LITERAL for a in alts) and not rest.startswith(("?", "*", "{")):
            return alts
        return None
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in ".-/+\"'":
            out.append(s[i + 1])
            i += 2
        elif s[i] in _LITERAL:
            out.append(s[i])
            i += 1
        else:
            break
    if out and i < len(s) and s[i] in "?*{":
        out.pop()  # the last literal is optional
    return ["".join(out)] if out else None


def _triggers(sources: tuple[str, ...], flags: int) -> tuple[tuple[str, bool], ...] | None:
    found: list[tuple[str, bool]] = []
    for source in sources:
        folded = bool(flags & re.IGNORECASE)
        if source.startswith("(?i)"):
            source, folded = source[4:], True
        elif source.startswith("(?") and source[2:3].isalpha():
            return None  # other inline flags: no prefix taken
        literals = _prefix(source)
        if literals is None:
            return None
        found += [(lit.lower() if folded else lit, folded) for lit in literals]
    return tuple(dict.fromkeys(found))


class Rule:
    """One kind of secret: its label, a pattern, and how to find candidates cheaply.

    * The replaced span is the ``s`` group when the pattern has one (so ``curl -u user:`` stays
      readable), else the whole match; ``check(match)`` may veto a match or choose another span.
    * ``after``: characters that may not come right before a match (a word boundary by default).
      Patterns start with their literal prefix instead of ``\\b``, so the regex engine can jump
      to it (``\\bgsk_`` scans 25x slower than ``gsk_``).
    * ``lines``: literal anchors (lowercase: any case; else exact). The pattern then runs only on
      the lines that contain one (credential names, command names): a whole-text scan for
      ``password=`` in 100 KB of prose costs ~10 ms, the few lines that say "pass" almost nothing.

    * ``heads`` (one per source, or None): for a pattern shaped *command, then anything up to the end of
      the command, then a flag* (``curl … -u user:pw``), the command alone and what ends a command. A
      command whose flag is not found before the command ends means no later command in that stretch has
      one either, so the scan jumps to its end: linear, where a plain ``finditer`` rescans the rest of the
      stretch from every command word in it (quadratic on a long line of them).
    """

    __slots__ = ("label", "sources", "flags", "check", "after", "lines", "heads", "patterns", "head_patterns",
                 "triggers")

    def __init__(self, label: str, source: str | tuple[str, ...], flags: int = 0, *, lines: Iterable[str] = (),
                 after: str | None = "word", check: Callable[[re.Match[str]], tuple[int, int] | None] | None = None,
                 heads: tuple[tuple[str, str] | None, ...] | None = None):
        self.label, self.flags, self.check = label, flags, check
        self.sources = (source,) if isinstance(source, str) else source  # one literal prefix each: fast scans
        after = after or ""
        self.after = frozenset(after.removeprefix("word")) | (_WORD_CHARS if after.startswith("word") else frozenset())
        self.lines = tuple((a, a == a.lower()) for a in lines)  # (literal, any case)
        self.heads = heads or (None,) * len(self.sources)
        # The prefilter: literals one of which every match holds (the anchors, else each source's literal
        # prefix); None when a source has none, so the rule always runs.
        self.triggers = self.lines or _triggers(self.sources, flags)
        self.patterns: list[re.Pattern[str]] | None = None
        self.head_patterns: list[tuple[re.Pattern[str], re.Pattern[str]] | None] = []

    def may_match(self, text: str, lowered: str) -> bool:
        """The prefilter: False when no match is possible (no trigger literal in the text)."""
        return self.triggers is None or any(t in (lowered if folded else text) for t, folded in self.triggers)

    def compiled(self) -> list[re.Pattern[str]]:
        if self.patterns is None:
            self.head_patterns = [None if h is None else (re.compile(h[0], self.flags), re.compile(h[1]))
                                  for h in self.heads]
            self.patterns = [re.compile(source, self.flags) for source in self.sources]
        return self.patterns

    def _ranges(self, text: str, lowered: str) -> list[tuple[int, int]]:
        """The lines holding an anchor, each once, in text order (linear: one look back per line)."""
        if not self.lines:
            return [(0, len(text))]
        hits: list[int] = []
        for anchor, folded in self.lines:
            hay = lowered if folded else text
            at = hay.find(anchor)
            while at >= 0:
                hits.append(at)
                at = hay.find(anchor, at + len(anchor))
        ranges: list[tuple[int, int]] = []
        line_end = -1  # end of the last line taken (its newline, or len(text))
        for at in sorted(hits):
            if at <= line_end:
                continue  # on the line already taken
            start = text.rfind("\n", max(line_end, 0), at) + 1 if line_end >= 0 else text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            line_end = len(text) if end < 0 else end
            ranges.append((start, line_end))
        return ranges

    @staticmethod
    def _headed(pattern: re.Pattern[str], head: re.Pattern[str], stop: re.Pattern[str], text: str,
                start: int, end: int) -> Iterator[re.Match[str]]:
        """``pattern.finditer`` for a headed pattern: after a failed command, on to the end of that command."""
        pos = start
        while pos < end:
            h = head.search(text, pos, end)
            if h is None:
                return
            m = pattern.match(text, h.start(), end)
            if m is not None:
                yield m
                pos = max(m.end(), h.start() + 1)
                continue
            s = stop.search(text, h.end(), end)
            pos = end if s is None else s.end()

    def matches(self, text: str, lowered: str) -> list[re.Match[str]]:
        """Candidate matches in text order: on the whole text, or on the anchored lines only."""
        ranges = self._ranges(text, lowered)
        if not ranges:
            return []
        found: list[re.Match[str]] = []
        for pattern, head in zip(self.compiled(), self.head_patterns, strict=True):
            for start, end in ranges:
                found += pattern.finditer(text, start, end) if head is None else self._headed(
                    pattern, *head, text, start, end)
        return sorted(found, key=lambda m: m.start())  # one pattern's matches already are; several interleave


# -- value checks -----------------------------------------------------------------------------------

_REFERENCE = (
    r"^(?:\$|%[A-Za-z_(]|\{\{|<[^<>]*>?$|!|\*{3,}|x{4,}$|X{4,}$|\.{3}|…|\[REDACTED:)|"
    r"^(?:process\.env|os\.environ|os\.getenv|env\(|getenv|ENV\[|settings\.|config\.|self\.|this\.)"
)
_NOT_SECRETS = frozenset(
    "none null nil true false undefined yes no on off str string int bool bytes any optional required "
    "empty password secret token key redacted hidden masked omitted placeholder example".split()
)
_DOTTED = r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:[(\[].*)?$|^[A-Za-z_]\w*[(\[].*$"
_IDENT = r"^[A-Za-z_]\w*$"
_WORDS = r"_+|(?<=[a-z])(?=[A-Z])"
# TOKEN_HEADER, PASSWORD_FILE, token_ttl, password_min_length: names about a secret, not holding one.
_META_SUFFIXES = frozenset(
    "header name names env var file path url uri endpoint type field param prefix length len count ttl expiry "
    "expires format id ids dir policy scope scopes label kind mode regex pattern min max size hash hashed".split()
)
_SHELL_CWD = frozenset({"pwd", "oldpwd"})  # $PWD is the working directory, not a password
_MORE_WORDS = r"[^\S\n]+[^\s#/]"


def _is_placeholder(value: str) -> bool:
    """``$VAR``, ``{{ x }}``, ``<your-key>``, ``os.environ[...]``, ``None``, ``****``: not a secret."""
    v = value.strip()
    return not v or bool(_rx(_REFERENCE).match(v)) or v.lower().strip(".") in _NOT_SECRETS


def _is_reference(value: str) -> bool:
    """A placeholder, or code naming where the secret is (``self.token``, ``get_key()``)."""
    return _is_placeholder(value) or bool(_rx(_DOTTED).match(value.strip()))


def _group_span(m: re.Match[str]) -> tuple[int, int] | None:
    if "s" not in m.re.groupindex or m.group("s") is None:
        return m.span()
    value = m.group("s")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        if _is_placeholder(value[1:-1]):
            return None
        start, end = m.span("s")
        return start + 1, end - 1
    return None if _is_placeholder(value) else m.span("s")


def _value_span(m: re.Match[str]) -> tuple[str, tuple[int, int]]:
    for group in ("dq", "sq", "bare"):
        if m.group(group) is not None:
            return group, m.span(group)
    raise AssertionError("unreachable")


def _assignment(m: re.Match[str]) -> tuple[int, int] | None:
    """A credential name assigned a value: redact the value unless it is a reference or code."""
    name = m.group("name")
    if name.lower() in _SHELL_CWD or _rx(_WORDS).split(name)[-1].lower() in _META_SUFFIXES:
        return None
    kind, span = _value_span(m)
    value = m.string[span[0]:span[1]]
    if kind == "bare":
        value = value.rstrip(")]}")  # f(password=password)
    if _is_reference(value) or value.lower() == name.lower():
        return None
    if kind == "bare":
        if _rx(_IDENT).match(value) and any(_rx(_KEYWORD, re.IGNORECASE).fullmatch(p) for p in _rx(_WORDS).split(value)):
            return None  # another variable: password=db_password, token=authToken
        after = m.string[span[1]:span[1] + 1]
        if _rx(_IDENT).match(value) and (after in (",", ")") or m.string[span[0]:span[1]].endswith(")")):
            return None  # a keyword argument in code: connect(user, password=pw)
        sep = m.group("sep")
        spaced = sep.startswith((" ", "\t")) or sep.endswith((" ", "\t"))
        if spaced and "=" in sep and _rx(r"[a-z_]+").fullmatch(value):
            return None  # code: token = tok
        if ":" in sep and _rx(_MORE_WORDS).match(m.string, span[1]):
            return None  # prose, more words on the line: "Password: must be 8 characters"
    return span


_HIGH_ENTROPY_PARTS = frozenset(
    "key keys salt seed signature sig hmac nonce cipher signing encryption master license dsn cookie "
    "private passphrase webhook".split()
)
_LOW_RISK_PARTS = frozenset(
    "public pub primary foreign sort partition cache idempotency object row lookup map dict index "
    "checksum integrity hash digest sha etag version id ids name names type kind path file dir url".split()
)
_UUID = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_CAMEL = r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+"
_NAME_PARTS = r"[_.\-]+"


def _entropy(value: str) -> float:
    import math

    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(m: re.Match[str]) -> tuple[int, int] | None:
    """A random-looking value (letters and digits, >= 3.3 bits a character) assigned to a key-like name."""
    parts = {p.lower() for chunk in _rx(_NAME_PARTS).split(m.group("name")) for p in _rx(_CAMEL).findall(chunk)}
    if not parts & _HIGH_ENTROPY_PARTS or parts & _LOW_RISK_PARTS:
        return None
    value = m.group("s")
    if _rx(_UUID).match(value) or not (_rx(r"\d").search(value) and _rx(r"[A-Za-z]").search(value)):
        return None
    return m.span("s") if _entropy(value) >= 3.3 else None


# -- the rules, most specific first ---------------------------------------------------------------------

_MYSQL = r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)"
_CURL = r"(?<![\w-])(?:curl|wget|xh)"
_LOGIN = r"\b(?:docker|podman|helm\s+registry)\s+login\b"
_REDIS = r"\bredis-cli\b"
_CREDENTIAL_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "credential")

RULES: tuple[Rule, ...] = (
    # Keys and key files.
    Rule("private_key",
         r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
         re.DOTALL, after=None),
    Rule("putty_private_key", r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)", re.DOTALL),
    Rule("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # AI providers.
    Rule("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    Rule("openai_key",
         r"sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{32,})"),
    Rule("groq_key", r"gsk_[A-Za-z0-9]{48,}"),
    Rule("xai_key", r"xai-[A-Za-z0-9]{60,}"),
    Rule("perplexity_key", r"pplx-[A-Za-z0-9]{40,}"),
    Rule("replicate_token", r"r8_[A-Za-z0-9]{37}\b"),
    Rule("huggingface_token", r"hf_[A-Za-z0-9]{30,}"),
    # Clouds.
    Rule("aws_access_key", r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b"),
    Rule("aws_secret_key",
         r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
         lines=["aws"]),
    Rule("gcp_oauth_secret", r"GOCSPX-[A-Za-z0-9_\-]{28}"),
    Rule("google_oauth_token", r"ya29\.[A-Za-z0-9_\-]{30,}"),
    Rule("google_api_key", r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    Rule("azure_storage_key", r"(?i)\bAccountKey\s*=\s*(?P<s>[A-Za-z0-9+/]{40,}={0,2})", lines=["accountkey"]),
    Rule("azure_shared_access_key", r"(?i)\bSharedAccessKey\s*=\s*(?P<s>[A-Za-z0-9+/]{20,}={0,2})",
         lines=["sharedaccesskey"]),
    Rule("azure_sas_token", r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{20,})", lines=["sig="], after=None),
    Rule("azure_client_secret",
         r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])", lines=["Q~"]),
    Rule("alibaba_key", r"LTAI[A-Za-z0-9]{12,20}\b"),
    Rule("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}\b"),
    Rule("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?\b"),
    Rule("dynatrace_token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"),
    Rule("flyio_token", r"FlyV1 fm\d_[A-Za-z0-9+/=_\-]{20,}"),
    Rule("vault_token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    Rule("terraform_token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", lines=["atlasv1"]),
    Rule("pulumi_token", r"pul-[a-f0-9]{40}\b"),
    Rule("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    Rule("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}"),
    Rule("supabase_token", r"sbp_[a-f0-9]{40}\b"),
    # Code hosting, registries, CI.
    Rule("github_token", (r"gh[pousr]_[A-Za-z0-9]{30,}", r"github_pat_[A-Za-z0-9_]{40,}")),
    Rule("gitlab_token",
         (r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|wt)-[A-Za-z0-9_\-.]{20,}", r"GR1348941[A-Za-z0-9_\-]{20,}")),
    Rule("bitbucket_token", r"ATBB[A-Za-z0-9]{32}\b"),
    Rule("atlassian_token", r"ATATT3[A-Za-z0-9_\-=]{50,}"),
    Rule("npm_token", r"npm_[A-Za-z0-9]{36}\b"),
    Rule("npmrc_auth", r"_auth\s*=\s*(?P<s>[A-Za-z0-9+/]{8,}={0,2})", after="word."),
    Rule("pypi_token", r"pypi-Ag[A-Za-z0-9_\-]{60,}"),
    Rule("rubygems_key", r"rubygems_[a-f0-9]{48}\b"),
    Rule("dockerhub_token", r"dckr_pat_[A-Za-z0-9_\-]{27,}"),
    Rule("buildkite_token", r"bkua_[a-f0-9]{40}\b"),
    Rule("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    # Messaging, email, payments, SaaS.
    Rule("slack_token", (r"xox[abposre]-[A-Za-z0-9\-]{10,}", r"xapp-\d-[A-Za-z0-9\-]{10,}")),
    Rule("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+"),
    Rule("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+"),
    Rule("discord_bot_token", r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b",
         after="word-"),
    Rule("telegram_bot_token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", lines=[":AA"]),
    Rule("twilio_key", r"SK[0-9a-fA-F]{32}\b"),
    Rule("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    Rule("mailgun_key", r"key-[0-9a-zA-Z]{32}\b"),
    Rule("mailchimp_key", r"\b[0-9a-f]{32}-us\d{1,2}\b", lines=["-us"]),
    Rule("brevo_key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    Rule("stripe_key", tuple(rf"{p}_(?:live|test)_[A-Za-z0-9]{{16,}}" for p in ("sk", "rk", "pk"))),
    Rule("stripe_webhook_secret", r"whsec_[A-Za-z0-9]{24,}"),
    Rule("square_token", (r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}", r"EAAA[A-Za-z0-9_\-]{60}\b")),
    Rule("plaid_token",
         r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    Rule("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    Rule("shippo_key", r"shippo_(?:live|test)_[a-f0-9]{40}\b"),
    Rule("linear_key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    Rule("notion_token", (r"secret_[A-Za-z0-9]{43}\b", r"ntn_[A-Za-z0-9]{40,}\b")),
    Rule("airtable_token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    Rule("figma_token", r"fig[dou]_[A-Za-z0-9_\-]{40,}"),
    Rule("contentful_token", r"CFPAT-[A-Za-z0-9_\-]{43}\b"),
    Rule("mapbox_token", r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    Rule("grafana_token", r"gl(?:c|sa)_[A-Za-z0-9_\-+/=]{32,}"),
    Rule("newrelic_key", (r"NRAK-[A-Z0-9]{27}\b", r"NRJS-[a-f0-9]{19}\b")),
    Rule("sentry_token", r"sntr[yu]s_[A-Za-z0-9_+/=]{40,}"),
    Rule("sentry_dsn", r"https?://(?P<s>[a-f0-9]{32})(?::[a-f0-9]{32})?@[A-Za-z0-9.\-]*sentry\.io"),
    Rule("fcm_server_key", r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}"),
    # Tokens and credentials in HTTP.
    Rule("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    Rule("basic_auth", r"(?i)\bauthorization\s*:\s*basic\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})", lines=["basic"]),
    Rule("bearer", r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9_\-.=:/+~]{16,})", lines=["bearer"]),
    Rule("auth_header",
         r"(?i)\b(?:authorization|x-api-key|api-key|x-auth-token|x-access-token|private-token|x-gitlab-token)"
         r"[\"']?\s*:\s*[\"']?(?:token\s+|apikey\s+|key\s+)?(?P<s>[A-Za-z0-9_\-.=:/+~]{12,})",
         lines=["authorization", "api-key", "x-auth-token", "x-access-token", "private-token", "x-gitlab-token"]),
    Rule("session_cookie",
         r"(?i)\b(?:set-)?cookie\s*:[^\n]*?\b(?:session(?:id)?|sid|sess|connect\.sid|_session|auth|jwt|token)"
         r"[A-Za-z0-9_.\-]*=(?P<s>[^;\s]{16,})", lines=["cookie"], heads=((r"(?i)\b(?:set-)?cookie\s*:", r"\n"),)),
    Rule("url_password", r"://[^/\s:@()\[\]{}<>]*:(?P<s>[^/\s@]+)@", after=None),
    Rule("url_secret_param",
         r"(?i)[?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|secret|client_secret|password|"
         r"auth|signature|code)=(?P<s>[^&\s#\"'<>]{8,})",
         lines=["token=", "key=", "secret=", "password=", "auth=", "signature=", "code="], after=None),
    # Command lines.
    Rule("mysql_password",
         rf"{_MYSQL}{_CMD_TAIL}\s-p(?P<s>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"]+)", lines=["mysql", "mariadb"],
         heads=((_MYSQL, _CMD_END),)),
    Rule("curl_credentials",
         rf"{_CURL}{_CMD_TAIL}\s(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:(?P<s>[^\s'\"]+)",
         lines=["curl", "wget", "xh "], heads=((_CURL, _CMD_END),)),
    Rule("sshpass_password", rf"\bsshpass\s+-p\s*{_QUOTED_OR_WORD}", lines=["sshpass"]),
    Rule("cli_password",
         (rf"{_LOGIN}{_CMD_TAIL}\s-p\s+{_QUOTED_OR_WORD}", rf"{_REDIS}{_CMD_TAIL}\s-a\s+{_QUOTED_OR_WORD}"),
         lines=["docker", "podman", "helm", "redis-cli"], heads=((_LOGIN, _CMD_END), (_REDIS, _CMD_END))),
    Rule("openssl_pass", r"\s-pass(?:in|out)?\s+pass:(?P<s>\S+)", lines=["pass:"], after=None),
    Rule("cli_secret_flag",
         r"(?<![\w-])-{1,2}(?:password|passwd|pass|passphrase|token|secret|api-key|apikey|access-token|auth-token|"
         rf"client-secret|private-key|storepass|keypass)(?:=|\s+){_QUOTED_OR_WORD}",
         lines=["-pass", "-token", "-secret", "-key", "-apikey", "storepass", "keypass"]),
    Rule("netrc_password", r"\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(?P<s>\S+)", lines=["machine"]),
    Rule("dockerconfig_auth", r"\"auth\"\s*:\s*\"(?P<s>[A-Za-z0-9+/]{12,}={0,2})\"", after=None),
    # Assignments to credential names: .env / YAML lines, then anywhere (key=value, JSON, dicts).
    Rule("credential",
         rf"(?im)^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?(?P<name>{_NAME})(?P<sep>[ \t]*[:=][ \t]*){_VALUE}",
         lines=_CREDENTIAL_WORDS, check=_assignment),
    Rule("credential",
         rf"(?i)(?<![A-Za-z0-9_.\-])[\"']?(?P<name>{_NAME})(?P<sep>[\"']?[ \t]*(?:=|:(?=[ \t]*[\"']))[ \t]*){_VALUE}",
         lines=_CREDENTIAL_WORDS, check=_assignment),
    Rule("high_entropy_secret",
         r"(?<![A-Za-z0-9_.\-])[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,63})[\"']?[ \t]*[:=][ \t]*[\"']?"
         r"(?P<s>[A-Za-z0-9+/=_\-.~]{16,})",
         lines=["key", "salt", "seed", "sig", "hmac", "nonce", "cipher", "master", "license", "dsn", "cookie",
                "passphrase", "webhook"], check=_high_entropy),
)

_PRIVATE = r"(?is)<private>.*?(?:</private>|\Z)"


class _Marks:
    """The ``[REDACTED:`` openings of one text, found once, so each candidate costs a bisection."""

    __slots__ = ("text", "starts", "closes")

    def __init__(self, text: str):
        self.text = text
        self.starts: list[int] = []
        self.closes: list[int] = []  # the first "]" at or after each opening (-1: none)
        at, close, unclosed = text.find(_MARK), -1, False
        while at >= 0:
            if close < at and not unclosed:
                close = text.find("]", at)
                unclosed = close < 0  # none after this opening, so none after any later one
            self.starts.append(at)
            self.closes.append(close)
            at = text.find(_MARK, at + 1)

    def touch(self, start: int, end: int) -> bool:
        """True when [start, end) touches a ``[REDACTED:<label>]`` already there (never redact a redaction).

        Only a label closes a mark: text that merely says ``[REDACTED: ...`` hides nothing after it."""
        k = bisect.bisect_right(self.starts, end - len(_MARK)) - 1  # the last opening that fits before ``end``
        if k < 0:
            return False
        i, close = self.starts[k], self.closes[k]
        return close >= start and self.text[i + len(_MARK):close].replace("_", "").isalpha()


def _apply(rule: Rule, text: str, lowered: str, found: dict[str, int] | None) -> str:
    check = rule.check or _group_span
    tag = _REDACTED.format(rule.label)
    pieces: list[str] = []
    last = 0
    marks: _Marks | None = None
    for m in rule.matches(text, lowered):
        if m.start() > 0 and text[m.start() - 1] in rule.after:
            continue  # inside a longer word
        span = check(m)
        if span is None or span[0] < last:
            continue
        if marks is None:
            marks = _Marks(text)
        if marks.touch(*span):
            continue
        pieces += [text[last:span[0]], tag]
        last = span[1]
        if found is not None:
            found[rule.label] = found.get(rule.label, 0) + 1
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _lower(text: str) -> str:
    """``text.lower()`` one character for one (rule anchors are found by position): ``İ`` alone lowers to two."""
    return text.replace("\u0130", "i").lower()


class _Prefilter:
    """Every rule's trigger literals in one table: a text costs one substring check per distinct literal
    (about 140, in C), not a Python call per rule, and names the few rules that can match it. A mark a rule
    writes (``[REDACTED:github_token]`` holds ``token``) may trigger later rules: those are added too (no
    literal holds a bracket, so none can straddle a mark's edge)."""

    def __init__(self, rules: tuple[Rule, ...]):
        self.rules = rules
        self.always = [i for i, r in enumerate(rules) if r.triggers is None]
        index: dict[tuple[str, bool], list[int]] = {}
        for i, rule in enumerate(rules):
            for trigger in rule.triggers or ():
                index.setdefault(trigger, []).append(i)
        self.literals = [(lit, folded, ids) for (lit, folded), ids in index.items()]
        self.by_mark: dict[str, set[int]] = {}

    def candidates(self, text: str, lowered: str) -> set[int]:
        out = set(self.always)
        for lit, folded, ids in self.literals:
            if lit in (lowered if folded else text):
                out.update(ids)
        return out

    def after_mark(self, label: str) -> set[int]:
        if label not in self.by_mark:
            tag = _REDACTED.format(label)
            self.by_mark[label] = self.candidates(tag, _lower(tag))
        return self.by_mark[label]


_PREFILTERS: dict[int, _Prefilter] = {}


def _table(rules: tuple[Rule, ...]) -> _Prefilter:
    table = _PREFILTERS.get(id(rules))
    if table is None or table.rules is not rules:
        table = _PREFILTERS[id(rules)] = _Prefilter(rules)
    return table


def _redact(text: str, rules: Iterable[Rule], found: dict[str, int] | None = None, *, prefilter: bool = True,
            todo: set[int] | None = None) -> str:
    """``todo``: the prefilter's rule numbers, computed by the caller (:func:`redact_all`)."""
    if not text:
        return text
    lowered = _lower(text)
    out = text
    if "<private>" in lowered:
        out = _rx(_PRIVATE).sub("", text)
        lowered = _lower(out)
        todo = None  # removing a span joins what was around it: look again
    rules = tuple(rules)
    table = _table(rules) if prefilter else None
    if table is not None:
        todo = set(todo) if todo is not None else table.candidates(out, lowered)
    for i, rule in enumerate(rules):
        if table is not None and i not in todo:
            continue
        changed = _apply(rule, out, lowered, found)
        if changed is not out:
            out, lowered = changed, _lower(changed)
            if table is not None:
                todo |= table.after_mark(rule.label)
    return out


@functools.cache
def version() -> str:
    """A fingerprint of these rules (this module's source): it changes whenever a rule may."""
    import hashlib

    try:
        with open(__file__, "rb") as fh:
            data = fh.read()
    except OSError:  # no source beside the module: the rules themselves
        data = repr([(r.label, r.sources, r.flags, r.lines, sorted(r.after)) for r in RULES]).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def stamp(title: str, body: str) -> str:
    """What a store keeps beside a text these rules redacted (``records.redaction_stamp``): the rules'
    fingerprint hashed with the text itself, so a text any other writer changed, or a rule change, no
    longer matches and is scanned again; a match needs no second scan (a push re-sends it as it is)."""
    import hashlib

    data = f"{version()}\0{title}\0{body}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def redact(text: str) -> str:
    """Return ``text`` with private spans dropped and secrets replaced by ``[REDACTED:<label>]``."""
    return _redact(text, RULES)


def redact_all(texts: list[str]) -> list[str]:
    """``[redact(t) for t in texts]`` with one prefilter pass over them all (a record's title and body):
    a literal cannot span two texts joined by a NUL, so the union of their candidates is that pass's."""
    joined = "\0".join(texts)
    todo = _table(RULES).candidates(joined, _lower(joined))
    return [_redact(text, RULES, todo=todo) for text in texts]


def scan(text: str) -> tuple[str, dict[str, int]]:
    """(redacted text, {label: how many}) — what ``redact`` did, for reports."""
    found: dict[str, int] = {}
    return _redact(text, RULES, found), found
