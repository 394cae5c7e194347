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

import re
from collections.abc import Callable, Iterable

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


class Rule:
    """One kind of secret: its label, literal anchors (lowercase: any case; else exact), a pattern.

    The replaced span is the ``s`` group when the pattern has one (so ``curl -u user:`` stays
    readable), else the whole match. ``check(match)`` may veto a match or choose another span.
    """

    __slots__ = ("label", "anchors", "source", "flags", "check", "pattern")

    def __init__(self, label: str, anchors: Iterable[str], source: str, flags: int = 0,
                 check: Callable[[re.Match[str]], tuple[int, int] | None] | None = None):
        self.label, self.source, self.flags, self.check = label, source, flags, check
        self.anchors = tuple((a, a == a.lower()) for a in anchors)  # (literal, any case)
        self.pattern: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self.pattern is None:
            self.pattern = re.compile(self.source, self.flags)
        return self.pattern

    def applies(self, text: str, lowered: str) -> bool:
        return not self.anchors or any(a in (lowered if folded else text) for a, folded in self.anchors)


# -- value checks -----------------------------------------------------------------------------------

_REFERENCE = re.compile(
    r"^(?:\$|%[A-Za-z_(]|\{\{|<[^<>]*>?$|!|\*{3,}|x{4,}$|X{4,}$|\.{3}|…|\[REDACTED:)|"
    r"^(?:process\.env|os\.environ|os\.getenv|env\(|getenv|ENV\[|settings\.|config\.|self\.|this\.)"
)
_NOT_SECRETS = frozenset(
    "none null nil true false undefined yes no on off str string int bool bytes any optional required "
    "empty password secret token key redacted hidden masked omitted placeholder example".split()
)
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:[(\[].*)?$|^[A-Za-z_]\w*[(\[].*$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_KEYWORD_PART = re.compile(_KEYWORD, re.IGNORECASE)
_WORDS = re.compile(r"_+|(?<=[a-z])(?=[A-Z])")
# TOKEN_HEADER, PASSWORD_FILE, token_ttl, password_min_length: names about a secret, not holding one.
_META_SUFFIXES = frozenset(
    "header name names env var file path url uri endpoint type field param prefix length len count ttl expiry "
    "expires format id ids dir policy scope scopes label kind mode regex pattern min max size hash hashed".split()
)
_SHELL_CWD = frozenset({"pwd", "oldpwd"})  # $PWD is the working directory, not a password


def _is_placeholder(value: str) -> bool:
    """``$VAR``, ``{{ x }}``, ``<your-key>``, ``os.environ[...]``, ``None``, ``****``: not a secret."""
    v = value.strip()
    return not v or bool(_REFERENCE.match(v)) or v.lower().strip(".") in _NOT_SECRETS


def _is_reference(value: str) -> bool:
    """A placeholder, or code naming where the secret is (``self.token``, ``get_key()``)."""
    return _is_placeholder(value) or bool(_DOTTED.match(value.strip()))


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
    if name.lower() in _SHELL_CWD or _WORDS.split(name)[-1].lower() in _META_SUFFIXES:
        return None
    kind, span = _value_span(m)
    value = m.string[span[0]:span[1]]
    if kind == "bare":
        value = value.rstrip(")]}")  # f(password=password)
    if _is_reference(value) or value.lower() == name.lower():
        return None
    if kind == "bare":
        if _IDENT.match(value) and any(_KEYWORD_PART.fullmatch(p) for p in _WORDS.split(value)):
            return None  # another variable: password=db_password, token=authToken
        sep = m.group("sep")
        spaced = sep.startswith((" ", "\t")) or sep.endswith((" ", "\t"))
        if spaced and "=" in sep and re.fullmatch(r"[a-z_]+", value):
            return None  # code: token = tok
        if ":" in sep and "=" not in sep:
            eol = m.string.find("\n", span[1])
            rest = m.string[span[1]:eol if eol >= 0 else len(m.string)]
            if re.match(r"\s+[^\s#/]", rest):
                return None  # prose: "Password: must be 8 characters"
    return span


_HIGH_ENTROPY_PARTS = frozenset(
    "key keys salt seed signature sig hmac nonce cipher signing encryption master license dsn cookie "
    "private passphrase webhook".split()
)
_LOW_RISK_PARTS = frozenset(
    "public pub primary foreign sort partition cache idempotency object row lookup map dict index "
    "checksum integrity hash digest sha etag version id ids name names type kind path file dir url".split()
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _entropy(value: str) -> float:
    import math

    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(m: re.Match[str]) -> tuple[int, int] | None:
    """A random-looking value (letters and digits, >= 3.3 bits a character) assigned to a key-like name."""
    parts = {p.lower() for chunk in re.split(r"[_.\-]+", m.group("name")) for p in _CAMEL.findall(chunk)}
    if not parts & _HIGH_ENTROPY_PARTS or parts & _LOW_RISK_PARTS:
        return None
    value = m.group("s")
    if _UUID.match(value) or not (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
        return None
    return m.span("s") if _entropy(value) >= 3.3 else None


# -- the rules, most specific first ---------------------------------------------------------------------

RULES: tuple[Rule, ...] = (
    # Keys and key files.
    Rule("private_key", ["private key"],
         r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
         re.DOTALL),
    Rule("putty_private_key", ["putty-user-key-file"],
         r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)", re.DOTALL),
    Rule("age_secret_key", ["age-secret-key-1"], r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # AI providers.
    Rule("anthropic_key", ["sk-ant-"], r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    Rule("openai_key", ["sk-"],
         r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
         r"|\bsk-[A-Za-z0-9]{32,}"),
    Rule("groq_key", ["gsk_"], r"\bgsk_[A-Za-z0-9]{48,}"),
    Rule("xai_key", ["xai-"], r"\bxai-[A-Za-z0-9]{60,}"),
    Rule("perplexity_key", ["pplx-"], r"\bpplx-[A-Za-z0-9]{40,}"),
    Rule("replicate_token", ["r8_"], r"\br8_[A-Za-z0-9]{37}\b"),
    Rule("huggingface_token", ["hf_"], r"\bhf_[A-Za-z0-9]{30,}"),
    # Clouds.
    Rule("aws_access_key", ["AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA"],
         r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b"),
    Rule("aws_secret_key", ["secret"],
         r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
    Rule("gcp_oauth_secret", ["gocspx-"], r"\bGOCSPX-[A-Za-z0-9_\-]{28}"),
    Rule("google_oauth_token", ["ya29."], r"\bya29\.[A-Za-z0-9_\-]{30,}"),
    Rule("google_api_key", ["aiza"], r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    Rule("azure_storage_key", ["accountkey"], r"(?i)\bAccountKey\s*=\s*(?P<s>[A-Za-z0-9+/]{40,}={0,2})"),
    Rule("azure_shared_access_key", ["sharedaccesskey"],
         r"(?i)\bSharedAccessKey\s*=\s*(?P<s>[A-Za-z0-9+/]{20,}={0,2})"),
    Rule("azure_sas_token", ["sig="], r"(?<=[?&])sig=(?P<s>[A-Za-z0-9%+/=]{20,})"),
    Rule("azure_client_secret", ["q~"],
         r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
    Rule("alibaba_key", ["LTAI"], r"\bLTAI[A-Za-z0-9]{12,20}\b"),
    Rule("digitalocean_token", ["_v1_"], r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    Rule("databricks_token", ["dapi"], r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    Rule("dynatrace_token", ["dt0c01."], r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"),
    Rule("flyio_token", ["flyv1"], r"\bFlyV1 fm\d_[A-Za-z0-9+/=_\-]{20,}"),
    Rule("vault_token", ["hvs.", "hvb.", "hvr."], r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    Rule("terraform_token", ["atlasv1"], r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}"),
    Rule("pulumi_token", ["pul-"], r"\bpul-[a-f0-9]{40}\b"),
    Rule("doppler_token", ["dp."], r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    Rule("planetscale_token", ["pscale_"], r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}"),
    Rule("supabase_token", ["sbp_"], r"\bsbp_[a-f0-9]{40}\b"),
    # Code hosting, registries, CI.
    Rule("github_token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
         r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    Rule("gitlab_token", ["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glimt-", "glagent-",
                          "gloas-", "glwt-", "gr1348941"],
         r"\b(?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt|glimt|glagent|gloas|glwt)-[A-Za-z0-9_\-.]{20,}"
         r"|\bGR1348941[A-Za-z0-9_\-]{20,}"),
    Rule("bitbucket_token", ["ATBB"], r"\bATBB[A-Za-z0-9]{32}\b"),
    Rule("atlassian_token", ["atatt3"], r"\bATATT3[A-Za-z0-9_\-=]{50,}"),
    Rule("npm_token", ["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b"),
    Rule("npmrc_auth", ["_auth"], r"(?<![\w.])_auth\s*=\s*(?P<s>[A-Za-z0-9+/]{8,}={0,2})"),
    Rule("pypi_token", ["pypi-ag"], r"\bpypi-Ag[A-Za-z0-9_\-]{60,}"),
    Rule("rubygems_key", ["rubygems_"], r"\brubygems_[a-f0-9]{48}\b"),
    Rule("dockerhub_token", ["dckr_pat_"], r"\bdckr_pat_[A-Za-z0-9_\-]{27,}"),
    Rule("buildkite_token", ["bkua_"], r"\bbkua_[a-f0-9]{40}\b"),
    Rule("postman_key", ["pmak-"], r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    # Messaging, email, payments, SaaS.
    Rule("slack_token", ["xox", "xapp-"], r"\bxox[abposre]-[A-Za-z0-9\-]{10,}|\bxapp-\d-[A-Za-z0-9\-]{10,}"),
    Rule("slack_webhook", ["hooks.slack.com"],
         r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+"),
    Rule("discord_webhook", ["discord"],
         r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+"),
    Rule("discord_bot_token", [], r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b"),
    Rule("telegram_bot_token", [":aa"], r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])"),
    Rule("twilio_key", ["SK"], r"\bSK[0-9a-fA-F]{32}\b"),
    Rule("sendgrid_key", ["sg."], r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    Rule("mailgun_key", ["key-"], r"\bkey-[0-9a-zA-Z]{32}\b"),
    Rule("mailchimp_key", ["-us"], r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    Rule("brevo_key", ["xkeysib-"], r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    Rule("stripe_key", ["_live_", "_test_"], r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    Rule("stripe_webhook_secret", ["whsec_"], r"\bwhsec_[A-Za-z0-9]{24,}"),
    Rule("square_token", ["sq0", "EAAA"], r"\b(?:sq0atp|sq0csp)-[A-Za-z0-9_\-]{22,43}|\bEAAA[A-Za-z0-9_\-]{60}\b"),
    Rule("plaid_token", ["access-"],
         r"\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    Rule("shopify_token", ["shp"], r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    Rule("shippo_key", ["shippo_"], r"\bshippo_(?:live|test)_[a-f0-9]{40}\b"),
    Rule("linear_key", ["lin_"], r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    Rule("notion_token", ["secret_", "ntn_"], r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b"),
    Rule("airtable_token", ["pat"], r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    Rule("figma_token", ["figd_", "figo_", "figu_"], r"\bfig[dou]_[A-Za-z0-9_\-]{40,}"),
    Rule("contentful_token", ["cfpat-"], r"\bCFPAT-[A-Za-z0-9_\-]{43}\b"),
    Rule("mapbox_token", ["sk.eyj"], r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    Rule("grafana_token", ["glc_", "glsa_"], r"\bgl(?:c|sa)_[A-Za-z0-9_\-+/=]{32,}"),
    Rule("newrelic_key", ["nrak-", "nrjs-", "nral"], r"\bNRAK-[A-Z0-9]{27}\b|\bNRJS-[a-f0-9]{19}\b|\b[a-f0-9]{36}NRAL\b"),
    Rule("sentry_token", ["sntrys_", "sntryu_"], r"\bsntr[yu]s_[A-Za-z0-9_+/=]{40,}"),
    Rule("sentry_dsn", ["sentry"], r"https?://(?P<s>[a-f0-9]{32})(?::[a-f0-9]{32})?@[A-Za-z0-9.\-]*sentry\.io"),
    Rule("fcm_server_key", ["apa91b"], r"\bAAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}"),
    # Tokens and credentials in HTTP.
    Rule("jwt", ["eyj"], r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    Rule("basic_auth", ["basic"], r"(?i)\bauthorization\s*:\s*basic\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})"),
    Rule("bearer", ["bearer"], r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9_\-.=:/+~]{16,})"),
    Rule("auth_header", ["authorization", "api-key", "x-auth-token", "x-access-token", "private-token",
                         "x-gitlab-token"],
         r"(?i)\b(?:authorization|x-api-key|api-key|x-auth-token|x-access-token|private-token|x-gitlab-token)"
         r"[\"']?\s*:\s*[\"']?(?:token\s+|apikey\s+|key\s+)?(?P<s>[A-Za-z0-9_\-.=:/+~]{12,})"),
    Rule("session_cookie", ["cookie"],
         r"(?i)\b(?:set-)?cookie\s*:[^\n]*?\b(?:session(?:id)?|sid|sess|connect\.sid|_session|auth|jwt|token)"
         r"[A-Za-z0-9_.\-]*=(?P<s>[^;\s]{16,})"),
    Rule("url_password", ["://"], r"(?<=://)[^/\s:@()\[\]{}<>]*:(?P<s>[^/\s@]+)@"),
    Rule("url_secret_param", ["token=", "key=", "secret=", "password=", "auth=", "signature=", "code="],
         r"(?i)[?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|secret|client_secret|password|"
         r"auth|signature|code)=(?P<s>[^&\s#\"'<>]{8,})"),
    # Command lines.
    Rule("mysql_password", ["mysql", "mariadb"],
         rf"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump){_CMD_TAIL}"
         rf"\s-p(?P<s>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"]+)"),
    Rule("curl_credentials", ["-u", "--user"],
         rf"(?<![\w-])(?:curl|wget|http|https|xh){_CMD_TAIL}\s(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:(?P<s>[^\s'\"]+)"),
    Rule("sshpass_password", ["sshpass"], rf"\bsshpass\s+-p\s*{_QUOTED_OR_WORD}"),
    Rule("cli_password", ["docker", "redis-cli", "podman", "helm"],
         rf"(?:\b(?:docker|podman|helm\s+registry)\s+login\b{_CMD_TAIL}\s-p|\bredis-cli\b{_CMD_TAIL}\s-a)"
         rf"\s+{_QUOTED_OR_WORD}"),
    Rule("openssl_pass", ["pass:"], r"\s-pass(?:in|out)?\s+pass:(?P<s>\S+)"),
    Rule("cli_secret_flag", ["--pass", "--token", "--secret", "--api-key", "--apikey", "--access-token",
                             "--auth-token", "--client-secret", "--private-key", "-storepass", "-keypass"],
         r"(?<![\w-])-{1,2}(?:password|passwd|pass|passphrase|token|secret|api-key|apikey|access-token|auth-token|"
         rf"client-secret|private-key|storepass|keypass)(?:=|\s+){_QUOTED_OR_WORD}"),
    Rule("netrc_password", ["machine"], r"\bmachine\s+\S+(?:\s+login\s+\S+)?\s+password\s+(?P<s>\S+)"),
    Rule("dockerconfig_auth", ['"auth"'], r"\"auth\"\s*:\s*\"(?P<s>[A-Za-z0-9+/]{12,}={0,2})\""),
    # Assignments to credential names: .env / YAML lines, then anywhere (key=value, JSON, dicts).
    Rule("credential", ["pass", "pwd", "secret", "token", "key", "auth", "credential"],
         rf"(?im)^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?(?P<name>{_NAME})(?P<sep>[ \t]*[:=][ \t]*){_VALUE}",
         check=_assignment),
    Rule("credential", ["pass", "pwd", "secret", "token", "key", "auth", "credential"],
         rf"(?i)(?<![A-Za-z0-9_.\-])[\"']?(?P<name>{_NAME})(?P<sep>[\"']?[ \t]*(?:=|:(?=[ \t]*[\"']))[ \t]*){_VALUE}",
         check=_assignment),
    Rule("high_entropy_secret", ["key", "salt", "seed", "sig", "hmac", "nonce", "cipher", "master", "license",
                                 "dsn", "cookie", "passphrase", "webhook"],
         r"(?<![A-Za-z0-9_.\-])[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,63})[\"']?[ \t]*[:=][ \t]*[\"']?"
         r"(?P<s>[A-Za-z0-9+/=_\-.~]{16,})",
         check=_high_entropy),
)

_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)


def labels() -> list[str]:
    """Every label a redaction can carry, in rule order (``credential`` has two rules)."""
    return list(dict.fromkeys(rule.label for rule in RULES))


def _in_mark(text: str, start: int, end: int) -> bool:
    """True when [start, end) touches a ``[REDACTED:...]`` already there (never redact a redaction)."""
    i = text.rfind(_MARK, 0, end)
    return i >= 0 and text.find("]", i) >= start


def _apply(rule: Rule, text: str, found: dict[str, int] | None) -> str:
    pattern = rule.compiled()
    check = rule.check or _group_span
    tag = _REDACTED.format(rule.label)
    pieces: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        span = check(m)
        if span is None or span[0] >= span[1] or _in_mark(text, *span):
            continue
        pieces += [text[last:span[0]], tag]
        last = span[1]
        if found is not None:
            found[rule.label] = found.get(rule.label, 0) + 1
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _redact(text: str, rules: Iterable[Rule], found: dict[str, int] | None = None) -> str:
    if not text:
        return text
    lowered = text.lower()
    out = text
    if "<private>" in lowered:
        out = _PRIVATE.sub("", text)
        lowered = out.lower()
    for rule in rules:
        if not rule.applies(out, lowered):
            continue
        changed = _apply(rule, out, found)
        if changed is not out:
            out, lowered = changed, changed.lower()
    return out


def redact(text: str) -> str:
    """Return ``text`` with private spans dropped and secrets replaced by ``[REDACTED:<label>]``."""
    return _redact(text, RULES)


def scan(text: str) -> tuple[str, dict[str, int]]:
    """(redacted text, {label: how many}) — what ``redact`` did, for reports."""
    found: dict[str, int] = {}
    return _redact(text, RULES, found), found


def has_secret(text: str) -> bool:
    """True when ``redact`` would change ``text``."""
    return redact(text) != text
