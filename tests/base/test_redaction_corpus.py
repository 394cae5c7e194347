"""Planted secrets: none may reach the database file or any request the (fake) model API receives."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx import llm, logs, paths
from agentctx.capture import extract
from agentctx.consolidation import worker
from agentctx.store import db
from tests.capture.test_extract import SID, Transcript, decision, reply

# name -> (text planted in the session, the secret part that must never be stored or sent)
CORPUS = {
    "anthropic": ("export ANTHROPIC_KEY_VALUE sk-ant-api03-" + "Q7x9" * 23 + "AA", "Q7x9Q7x9Q7x9Q7x9"),
    "openai": ("the key is sk-proj-" + "Zt4Lm8Pq" * 6, "Zt4Lm8PqZt4Lm8Pq"),
    "openai_legacy": ("old key sk-" + "aB3dE5gH7jK9" * 4, "aB3dE5gH7jK9aB3d"),
    "aws_access": ("AWS id AKIAQ3EGRLTJV7BX4Z2Y in the config", "AKIAQ3EGRLTJV7BX4Z2Y"),
    "aws_secret": ("aws_secret_access_key = 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", "wJalrXUtnFEMI/K7MDENG"),
    "github": ("push with ghp_R8sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2p", "ghp_R8sT2uV4wX6yZ8aB0cD2eF4gH6i"),
    "github_pat": ("token github_pat_11ABCDEFG0" + "x7Y2z" * 16, "x7Y2zx7Y2zx7Y2zx7Y2z"),
    "slack": ("bot xoxb-2048123456-4096123456789-Hq3Rt5Yu7Io9Pa1Sd3Fg5Hj7", "Hq3Rt5Yu7Io9Pa1Sd3Fg5Hj7"),
    "slack_webhook": ("hook https://hooks.slack.com/services/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",
                      "Wq8Er6Ty4Ui2Op0As9Df7Gh5"),
    "stripe": ("charge with sk_live_51Hx7Kp2Lq9Wm3Nz8Rt4Vb6Yc", "51Hx7Kp2Lq9Wm3Nz8Rt4Vb6Yc"),
    "stripe_restricted": ("rk_live_9Mn8Bv7Cx6Zl5Kj4Hg3Fd2Sa", "9Mn8Bv7Cx6Zl5Kj4Hg3Fd2Sa"),
    "jwt": ("Authorization: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZG1pbi0xMjM0NSJ9."
            "Sfl9KxwRJSMeKKF2QT4fwpMeJf36POk6yJV", "Sfl9KxwRJSMeKKF2QT4fwpMeJf36POk6yJV"),
    "pem": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7Vq3kPrivateKeyBodyLine9xY\n"
            "Kp2Lq9Wm3Nz8Rt4Vb6YcSecondLine\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7Vq3kPrivateKey"),
    "password_assign": ("connect with password=Tr0ub4dor&3horse", "Tr0ub4dor&3horse"),
    "token_assign": ("curl -H x token=f00dfeed1234abcd5678", "f00dfeed1234abcd5678"),
    "json_secret": ('{"client_secret": "cs-98af7e6d5c4b3a21"}', "cs-98af7e6d5c4b3a21"),
    "dotenv": ("DATABASE_PASSWORD=pg-Sup3rS3cret-2026\nexport REDIS_AUTH_TOKEN=rd-77hx99qq11zz", "pg-Sup3rS3cret-2026"),
    "dotenv_2": ("export REDIS_AUTH_TOKEN=rd-77hx99qq11zz", "rd-77hx99qq11zz"),
    "private": ("<private>my home address is 42 Quillon Lane</private> done", "42 Quillon Lane"),
    "private_unclosed": ("notes <private>the safe combination is 31-7-22", "31-7-22"),
}


def plant(tx: Transcript) -> None:
    """Every secret in a user message, in Claude's text, and in tool output, plus explicit statements."""
    for name, (text, _) in CORPUS.items():
        tx.user(f"We decided to keep using this ({name}): {text}")
        tx.assistant(f"Noted the {name} value: {text}")
        tx.tool(f"$ cat .env\n{text}")


def assert_absent(data_dir: Path, bodies: list[str]) -> None:
    blobs = {p.name: p.read_bytes() for p in data_dir.rglob("*") if p.is_file()}
    assert any(name.startswith("agentctx.db") for name in blobs)
    for name, (_, needle) in CORPUS.items():
        for file, raw in blobs.items():
            assert needle.encode() not in raw, f"{name} secret found in {file}"
        for i, body in enumerate(bodies):
            assert needle not in body, f"{name} secret sent in request {i}"


def test_corpus_needles_are_really_in_the_transcript(tmp_path):
    tx = Transcript(tmp_path / "t.jsonl")
    plant(tx)
    raw = tx.path.read_text()
    assert all(needle in raw.replace("\\n", "\n") for _, needle in CORPUS.values())


def test_llm_path_stores_and_sends_no_secret(api, tmp_path, repo, home):
    tx = Transcript(tmp_path / "t.jsonl")
    plant(tx)
    # A model that echoes every secret back in what it extracts: storage must still redact.
    echoed = [decision(f"Use {text}"[:1900], rationale=text) for _, (text, _) in CORPUS.items()]
    work = {"current_task": CORPUS["stripe"][0], "blockers": [CORPUS["pem"][0]], "next_steps": [CORPUS["jwt"][0]],
            "open_questions": [CORPUS["dotenv"][0]]}
    api.enqueue(reply(decisions=echoed[:30], active_work=work,
                      gotchas=[{"pattern": CORPUS["aws_secret"][0], "why_it_matters": CORPUS["private"][0]}]))
    result = extract.run_once(SID, str(tx.path), str(repo), client=llm.Client(timeout=10, max_retries=0))
    assert result.status == "written" and len(result.written) > 10
    logs.log("Extract", f"result {result.as_dict()}")  # whatever the worker logs must be clean too
    db.connect().close()
    bodies = [json.dumps(r.body) for r in api.requests]
    assert bodies and all("REDACTED" in b for b in bodies)
    assert_absent(Path(paths.data_dir()), bodies)


def test_explicit_path_stores_no_secret(tmp_path, repo, home, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    tx = Transcript(tmp_path / "t.jsonl")
    plant(tx)
    result = extract.run_once(SID, str(tx.path), str(repo))
    # every statement is kept but the three whose secret is pasted code (an `export A_B=…` line, a JSON object):
    # pasted code is not a statement (issue 19); a redaction mark does not make a sentence code
    assert result.mode == "explicit" and len(result.written) >= len(CORPUS) - 3
    assert_absent(Path(paths.data_dir()), [])


def test_failed_extraction_logs_no_secret(api, tmp_path, repo, home):
    tx = Transcript(tmp_path / "t.jsonl")
    plant(tx)
    api.enqueue("not json " + CORPUS["github"][0])  # a broken reply that contains a secret
    result = extract.run_once(SID, str(tx.path), str(repo), client=llm.Client(timeout=10, max_retries=0))
    assert result.status == "failed"
    worker._log_result(SID, result)
    bodies = [json.dumps(r.body) for r in api.requests]
    assert_absent(Path(paths.data_dir()), bodies)
