"""Redaction rules at their edges: which lines a rule reads, word boundaries, quoted values, what counts as a
reference or as prose, the entropy threshold of 3.3 bits a character, marks already there and the counts."""

from __future__ import annotations

import pytest

from agentctx import redact as R

GHP = "ghp_" + "R8sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2p"
GHP_2 = "ghp_" + "Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9Pa0Sd1Fg3"
GITHUB_PAT = "github_pat_11ABCDEFG0" + "x7Y2z" * 16
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
DISCORD = "MTk4NjIyNDgzNDcxOTI1MjQ4Mz" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWsZnCjm1XVW7vR"
NPM_AUTH = "ZGVwbG95OnMzY3JldFB3MTIz"  # base64 of deploy:s3cretPw123
CRED = "[REDACTED:credential]"


# ---------------------------------------------------------------- which lines a rule reads


@pytest.mark.parametrize(("text", "expected"), [
    ("password=hunter2pw\nnext", f"password={CRED}\nnext"),  # the first line
    ("\npassword=hunter2pw", f"\npassword={CRED}"),  # after a leading empty line
    ("intro\n\nDB_PASSWORD=hunter2pw\nmore", f"intro\n\nDB_PASSWORD={CRED}\nmore"),  # a middle line
    ("two lines\nmysql -uroot -pS3cretPw db", "two lines\nmysql -uroot -p[REDACTED:mysql_password] db"),  # the last
    ("a=1 password=hunter2pw token=f00dfeed99", f"a=1 password={CRED} token={CRED}"),  # two on one line
])
def test_a_rule_reads_every_line_that_holds_its_anchor(text, expected):
    """Anchored rules run only on the lines that contain an anchor: first, middle, last (no newline after it)
    and right after a leading empty line."""
    assert R.redact(text) == expected


@pytest.mark.parametrize("before", ["İstanbul office", "İ" * 40, "ŞİRKET İÇİ NOTLAR\nİzmir"])
def test_a_capital_dotted_i_earlier_in_the_text_does_not_hide_a_later_secret(before):
    """``"İ".lower()`` is two characters; anchors are found in the lowered text and read in the original, so
    each line position must be the same in both."""
    assert R.redact(f"{before}\npassword=hunter2pw") == f"{before}\npassword={CRED}"
    assert R.redact(f"{before}\nmysql -uroot -pS3cretPw db") == f"{before}\nmysql -uroot -p[REDACTED:mysql_password] db"


# ---------------------------------------------------------------- one rule, several patterns


def test_both_patterns_of_a_rule_are_redacted_whichever_comes_first_in_the_text():
    """github_token has two patterns (``ghp_`` and ``github_pat_``); the later pattern's key first in the
    text is redacted too, and both are counted."""
    for text in (f"old {GITHUB_PAT} new {GHP}", f"old {GHP} new {GITHUB_PAT}"):
        out, found = R.scan(text)
        assert GHP not in out and GITHUB_PAT not in out and out.count("[REDACTED:github_token]") == 2, out
        assert found == {"github_token": 2}


def test_overlapping_matches_of_one_rule_give_one_mark():
    """A Slack app token glued to a bot token is one match of the first pattern; the second pattern's match
    inside it adds nothing."""
    text = "xoxb-1234567890-xapp-1-A1B2C3D4E5F6G7 done"
    assert R.scan(text) == ("[REDACTED:slack_token] done", {"slack_token": 1})


# ---------------------------------------------------------------- word boundaries


def test_a_key_glued_to_a_longer_word_is_not_that_key_and_later_keys_still_are():
    assert R.redact(f"x{GHP}") == f"x{GHP}"
    assert R.redact(f"x{GHP} and {GHP_2}") == f"x{GHP} and [REDACTED:github_token]"
    assert R.redact(f"({GHP})") == "([REDACTED:github_token])"


def test_an_npmrc_auth_line_is_redacted_and_an_attribute_named_auth_is_not():
    """npmrc_auth may not follow a word character or a dot: ``client._auth`` is code."""
    assert R.redact(f"//registry.npmjs.org/:_auth={NPM_AUTH}") == "//registry.npmjs.org/:_auth=[REDACTED:npmrc_auth]"
    assert R.redact(f"_auth = {NPM_AUTH}") == "_auth = [REDACTED:npmrc_auth]"
    for code in (f"client._auth = {NPM_AUTH}", f"my_auth={NPM_AUTH}"):
        assert R.redact(code) == code


def test_a_discord_token_inside_a_dashed_name_is_not_one():
    """discord_bot_token may not follow a word character or a dash."""
    assert R.redact(f"bot {DISCORD} ok") == "bot [REDACTED:discord_bot_token] ok"
    assert R.redact(f"bot-{DISCORD}") == f"bot-{DISCORD}"


def test_a_rule_is_built_from_named_parts():
    """A rule takes its label, pattern, anchors and boundary by name, and runs only where an anchor occurs."""
    rule = R.Rule(label="ticket_key", source=r"tks_[a-z0-9]{12}", lines=["tks_"], after="word-", check=None)
    assert R._redact("use tks_abcdef123456 now", [rule]) == "use [REDACTED:ticket_key] now"
    assert R._redact("use x-tks_abcdef123456 now", [rule]) == "use x-tks_abcdef123456 now"
    assert R._redact("use TKS_abcdef123456 now", [rule]) == "use TKS_abcdef123456 now"


# ---------------------------------------------------------------- quoted values and placeholders


@pytest.mark.parametrize(("text", "expected"), [
    ("sshpass -p 'hunter2pw' ssh host", "sshpass -p '[REDACTED:sshpass_password]' ssh host"),
    ('sshpass -p "hunter2pw" ssh host', 'sshpass -p "[REDACTED:sshpass_password]" ssh host'),
    # a quote at one end only is part of the password
    ("git clone https://ci:'s3cretPw9@git.example/x", "git clone https://ci:[REDACTED:url_password]@git.example/x"),
    ("git clone https://ci:s3cretPw9'@git.example/x", "git clone https://ci:[REDACTED:url_password]@git.example/x"),
    # a password that is one quote mark is still a password
    ("git clone https://ci:'@git.example/x", "git clone https://ci:[REDACTED:url_password]@git.example/x"),
])
def test_a_quoted_value_is_redacted_inside_its_quotes(text, expected):
    assert R.redact(text) == expected


@pytest.mark.parametrize("text", [
    'sshpass -p "$SSHPASS" ssh host', "sshpass -p $SSHPASS ssh host", "sshpass -p '' ssh host",
    "vault login --token 'xxxx'", "tool --password 'None' --user me", 'tool --password "<your-password>"',
    "tool --password '{{ db_password }}'", "tool --secret ENV[SECRET]",
])
def test_a_quoted_or_bare_placeholder_is_left_alone(text):
    assert R.redact(text) == text


# ---------------------------------------------------------------- assignments to credential names


@pytest.mark.parametrize("text", [
    "export PWD=/home/jane/src", "OLDPWD=/tmp/build", "PASSWORD_FILE=/run/secrets/db", "passwordFile: /run/db.pw",
    "connect(password=password)", "password=db_password", "token=authToken", '{"client_secret": "client_secret"}',
    '"password": "${DB_PASSWORD}"', "password: os.environ['DB_PASSWORD']", "login(user, password=pw1)",
    "login(password=pw1, user=u)", "token = tok", "token =tok", "token= tok", "Password: must be 8 characters",
])
def test_references_and_code_assigned_to_credential_names_are_left_alone(text):
    assert R.redact(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("DB_PWD=hunter2pw", f"DB_PWD={CRED}"),
    ("FILE_PASSWORD=hunter2pw", f"FILE_PASSWORD={CRED}"),
    ("password=hunter2pw", f"password={CRED}"),
    ("token=tok", f"token={CRED}"),
    ("token = Tok9", f"token = {CRED}"),
    ("connect(password='hunter2pw')", f"connect(password='{CRED}')"),
    ("password: hunter2pw", f"password: {CRED}"),
    ("password: hunter2pw # rotated", f"password: {CRED} # rotated"),
    ("password: hunter2pw // old", f"password: {CRED} // old"),
    ("password: hunter2pw\t", f"password: {CRED}\t"),
    ("password: hunter2pw\nnext: line", f"password: {CRED}\nnext: line"),
])
def test_values_assigned_to_credential_names_are_redacted(text, expected):
    assert R.redact(text) == expected


# ---------------------------------------------------------------- high-entropy values


@pytest.mark.parametrize("name", ["SIGNING_KEY", "signingKey", "hmac.salt", "WEBHOOK-SEED"])
def test_a_value_of_3_3_bits_a_character_is_a_secret_and_of_3_28_is_not(name):
    """``a1b2c3d4e5a1b2c3d4e`` carries 3.30 bits a character, one character less 3.28."""
    assert R._entropy("a1b2c3d4e5a1b2c3d4e") == pytest.approx(3.3006, abs=1e-4)
    assert R._entropy("a1b2c3d4e5a1b2c3d4") == pytest.approx(3.2810, abs=1e-4)
    assert R.redact(f"{name}=a1b2c3d4e5a1b2c3d4e") == f"{name}=[REDACTED:high_entropy_secret]"
    assert R.redact(f"{name}=a1b2c3d4e5a1b2c3d4") == f"{name}=a1b2c3d4e5a1b2c3d4"


def test_entropy_is_shannons_bits_a_character():
    assert R._entropy("a1b2c3d4e5f6g7h8") == 4.0
    assert R._entropy("aabb") == 1.0
    assert R._entropy("aaab") == pytest.approx(0.8113, abs=1e-4)
    assert R._entropy("zzzzzzzz") == 0.0


@pytest.mark.parametrize("text", [
    "CACHE_KEY=8f4a2c9e1b7d3f6a0c5e",  # a low-risk part wins
    "publicKey: 8f4a2c9e1b7d3f6a0c5e",
    "MONKEY=8f4a2c9e1b7d3f6a0c5e",  # no key-like part
    "ENCRYPTION_KEY=3f2b8c1e-9a4d-4e7f-b6c5-1d2e3f4a5b6c",  # a UUID
    "SIGNING_KEY=qwertyuiopasdfghjklzxcvbnm",  # letters only
    "SIGNING_KEY=31415926535897932384626",  # digits only
])
def test_ids_hashes_and_plain_words_under_key_names_are_left_alone(text):
    assert R.redact(text) == text


def test_a_high_entropy_value_under_a_key_name_is_redacted():
    assert R.redact("MASTER_KEY=8f4a2c9e1b7d3f6a0c5e") == "MASTER_KEY=[REDACTED:high_entropy_secret]"


# ---------------------------------------------------------------- marks already there, counts, private spans


def test_a_value_that_holds_an_earlier_mark_is_not_redacted_again():
    """The JWT is redacted first; the session cookie around it then touches the mark and stays as it is."""
    assert R.redact(f"Cookie: session=abcdef.{JWT}") == "Cookie: session=abcdef.[REDACTED:jwt]"


def test_a_mark_hides_nothing_after_it():
    assert R.redact(f"{GHP} then password=hunter2pw") == f"[REDACTED:github_token] then password={CRED}"
    assert R.redact("[REDACTED:jwt] then password=hunter2pw") == f"[REDACTED:jwt] then password={CRED}"


def test_text_that_only_says_redacted_hides_no_secret():
    """Only ``[REDACTED:<label>]`` is a mark: an unclosed ``[REDACTED:`` with a secret after it is not."""
    assert R.redact("[REDACTED: see password=hunter2pw here]") == f"[REDACTED: see password={CRED} here]"
    assert R.redact("notes [REDACTED:x y] password=hunter2pw") == f"notes [REDACTED:x y] password={CRED}"


def test_a_value_ending_in_a_bracket_with_no_mark_before_it_is_redacted():
    """No ``[REDACTED:`` anywhere before the value: a closing bracket after it is no mark."""
    assert "correcthorsebattery" not in R.redact("password=correcthorsebattery]")
    assert "horsebatterystaple" not in R.redact("api_key: horsebatterystaple]")


def test_a_match_left_alone_does_not_stop_the_rule():
    """The reference is kept and the rule goes on to the next match on the line."""
    assert R.redact("password=$DB_PASSWORD token=f00dfeed99") == f"password=$DB_PASSWORD token={CRED}"
    assert R.redact("token = tok, password=hunter2pw") == f"token = tok, password={CRED}"


def test_scan_counts_each_redaction_under_its_label():
    out, found = R.scan(f"{GHP} {GHP_2}\npassword=hunter2pw\nplain")
    assert found == {"github_token": 2, "credential": 1}
    assert out == f"[REDACTED:github_token] [REDACTED:github_token]\npassword={CRED}\nplain"
    assert R.scan("nothing here") == ("nothing here", {})
    assert R.scan("") == ("", {})


def test_secrets_after_a_private_span_are_found_at_their_new_place():
    """Dropping a private span shifts every line after it; the anchors are looked up again."""
    text = "<private>" + "diary " * 30 + "</private>\nDB_PASSWORD=hunter2pw\n<PRIVATE>x</Private> token=f00dfeed99"
    assert R.redact(text) == f"\nDB_PASSWORD={CRED}\n token={CRED}"


def test_redacting_twice_changes_nothing_more():
    text = f"{GHP}\nCookie: session=abcdef.{JWT}\npassword=hunter2pw\nSIGNING_KEY=a1b2c3d4e5a1b2c3d4e"
    once = R.redact(text)
    assert R.redact(once) == once and R.scan(once)[1] == {} and R.redact(text) != text and R.redact(once) == once


# ---------------------------------------------------------------- the prefilter and linear scans


def _corpus_texts() -> list[str]:
    from tests.support.secrets_corpus import clean_texts, in_contexts, secret_samples

    texts = []
    for sample in secret_samples():
        texts += [sample.text, *in_contexts(sample)]
    return texts + list(clean_texts().values())


def test_the_prefilter_changes_no_result():
    """A rule skipped because none of its trigger literals is in the text would have found nothing: every
    corpus text (secrets in every context, and the clean texts) redacts the same with the prefilter off."""
    texts = _corpus_texts()
    for text in texts + ["\n".join(texts)]:
        assert R._redact(text, R.RULES) == R._redact(text, R.RULES, prefilter=False), text[:200]


def test_redacting_texts_together_is_redacting_each():
    """``redact_all`` runs the prefilter once over a record's title and body: the same result as one by one,
    a secret split across the two is not joined, and a private span in one is removed from it alone."""
    texts = _corpus_texts()
    pairs = list(zip(texts, reversed(texts), strict=True)) + [("ghp", "_" + GHP[4:]), ("<private>x</private>gh", GHP)]
    for pair in pairs:
        assert R.redact_all(list(pair)) == [R.redact(t) for t in pair]


def test_every_rule_but_one_has_triggers_and_they_are_its_literal_prefixes():
    rules = {r.label: r for r in R.RULES}
    assert [r.label for r in R.RULES if r.triggers is None] == ["discord_bot_token"]  # starts with [MNO]
    assert rules["aws_access_key"].triggers[:2] == (("AKIA", False), ("ASIA", False))
    assert rules["google_oauth_token"].triggers == (("ya29.", False),)  # an escaped dot is a literal
    assert rules["sentry_dsn"].triggers == (("http", False),)  # https?: the optional s is dropped
    assert rules["bearer"].triggers == (("bearer", True),)  # (?i): found in the lowered text


def test_a_text_with_no_trigger_is_returned_as_it_is():
    text = "plain words about the weather, nothing else"
    assert all(not r.may_match(text, text.lower()) for r in R.RULES if r.triggers is not None)
    assert R.redact(text) is text


@pytest.mark.parametrize(("unit", "last"), [
    ("curl http://example.com/x then ", "curl -u deploy:S3cretPw9 https://x"),
    ("mysql is a database, ", "mysql -uroot -pS3cretPw9 db"),
    ("Cookie: a=b ", "Cookie: sessionid=0123456789abcdefXYZ"),
    ("docker login and redis-cli ", "redis-cli -a S3cretPw9x"),
])
def test_a_long_line_of_commands_without_their_flag_still_finds_the_one_with_it(unit, last):
    """After a command whose flag is not found the scan jumps to the end of that command: a later command
    on the same line, after a ``;`` or on the next line, is still read."""
    text = unit * 2000 + "; " + last + "\n" + unit * 50 + "\n" + last
    out = R.redact(text)
    assert out.count("[REDACTED:") == 2, out[-300:]
    assert out == R._redact(text, R.RULES, prefilter=False)


def test_a_mark_far_before_a_secret_does_not_hide_it_and_many_secrets_each_get_one():
    text = "[REDACTED:jwt]\n" + "filler line\n" * 5000 + "password=hunter2pw\n" * 3000
    out = R.redact(text)
    assert out.count(CRED) == 3000
    assert R.redact("[REDACTED:x password=hunter2pw") == f"[REDACTED:x password={CRED}"
