"""SessionStart served from its seal (``injection.ready``): stat checks only, never stale, nothing lost.

The hooks run as processes (``sh hooks/launch.sh``), the store is written by other connections as the
worker, the CLI or another session would write it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agentctx import budgets, paths
from agentctx.injection import ready
from agentctx.store import db, records, sessions
from tests.capture.test_extract import SID, Transcript
from tests.support.hooks import context_of, hook_env, run_hook
from tests.support.imports import heavy_modules_loaded
from tests.support.waiting import wait_for


def start(repo: Path, home: Path, session: str, source: str = "startup"):
    proc = run_hook("session_start", {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart",
                                      "transcript_path": "/nonexistent.jsonl", "source": source}, home)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def seal_path(repo: Path) -> Path:
    return Path(ready.seal_path(str(repo.resolve())))


def sealed_start(repo: Path, home: Path) -> dict:
    """Start sessions until one seals its answer (the first builds the digest cache, a file too new to seal
    over); the answer of the sealing run."""
    for i in range(8):
        out = start(repo, home, f"sealing-{i}")
        if seal_path(repo).exists():
            return out
        time.sleep(ready.MARGIN_NS / 1e9 * 1.5)
    raise AssertionError("no SessionStart sealed its answer")


def test_a_quiet_start_is_sealed_and_the_next_is_served_without_the_store(seeded, home, repo, monkeypatch):
    whole = sealed_start(repo, home)
    served = start(repo, home, "served")
    assert served == whole
    # the sealed path itself, in a clean interpreter with the hooks' environment (the seal is for it):
    # no sqlite3, no re, no json package, no datetime
    env = hook_env(home)
    for name in list(os.environ):
        if name not in env:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    run = (f"from agentctx.hookio import HookEvent\nfrom agentctx.events.session_start import on_session_start\n"
           f"out = on_session_start(HookEvent('SessionStart', {{'session_id': 'imports', 'cwd': {str(repo)!r}, "
           f"'source': 'startup'}}))\nassert 'Money is integer cents' in out['hookSpecificOutput']['additionalContext']")
    assert heavy_modules_loaded(run, extra=frozenset({"sqlite3", "re", "json", "datetime"})) == []


def test_a_fact_superseded_after_the_seal_is_never_shown_as_current(seeded, home, repo):
    proj, recs = seeded
    sealed_start(repo, home)
    conn = db.connect()  # another process's write, right after the seal: the WAL grows
    records.add(conn, proj.id, type="decision", title="Money is a Decimal with 4 places",
                body="Cents were not enough for FX.", supersedes=recs["cents"]["id"], pinned=True)
    conn.close()
    ctx = start(repo, home, "after-write")["hookSpecificOutput"]["additionalContext"]
    assert "Money is a Decimal with 4 places" in ctx and "Money is integer cents" not in ctx
    # and after SQLite checkpointed and deleted the WAL (its last connection closed), the same
    conn = db.connect()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert "Money is integer cents" not in start(repo, home, "after-checkpoint")["hookSpecificOutput"]["additionalContext"]


def test_the_first_prompt_after_a_sealed_start_does_not_repeat_what_it_injected(seeded, home, repo):
    sealed_start(repo, home)
    ctx = start(repo, home, "s-prompt")["hookSpecificOutput"]["additionalContext"]
    assert seal_path(repo).exists() and "Money is integer cents" in ctx
    assert list(Path(paths.sub("starts")).glob("s-prompt.*.json"))  # noted, not yet in the store
    proc = run_hook("user_prompt_submit", {"session_id": "s-prompt", "cwd": str(repo), "hook_event_name":
                                           "UserPromptSubmit", "transcript_path": "/nonexistent.jsonl",
                                           "prompt": "how do we store money amounts, integer cents?"}, home)
    assert proc.returncode == 0, proc.stderr
    assert "Money is integer cents" not in (context_of(proc) or "")
    conn = db.connect()
    try:
        row = sessions.get(conn, "s-prompt")
        assert row["project_id"] == seeded[0].id and row["cwd"] == str(repo.resolve()) and row["source"] == "startup"
        assert seeded[1]["cents"]["id"] in sessions.injected_ids(conn, "s-prompt")
        assert row["injections"] >= 1 and row["tokens_injected"] >= budgets.estimate_tokens(ctx)
    finally:
        conn.close()
    assert not list(Path(paths.sub("starts")).glob("s-prompt.*"))  # folded once, file gone


def test_a_notice_queued_after_the_seal_is_shown_and_the_settings_are_read_again(seeded, home, repo):
    sealed_start(repo, home)
    db.add_notice("agentctx: a line for the person")
    out = start(repo, home, "noticed")
    assert "a line for the person" in out.get("systemMessage", "")
    (repo / ".agentctx").mkdir(exist_ok=True)
    (repo / ".agentctx" / "config.toml").write_text("[digest]\nhandover = false\n")
    ctx = start(repo, home, "configured")["hookSpecificOutput"]["additionalContext"]
    assert "Refund endpoint half done" not in ctx and "Money is integer cents" in ctx


def test_a_new_remote_is_a_new_project(seeded, home, repo):
    sealed_start(repo, home)
    config = repo / ".git" / "config"
    config.write_text(config.read_text().replace("acme/widgets", "acme/other"))
    ctx = start(repo, home, "moved")["hookSpecificOutput"]["additionalContext"]
    assert "Money is integer cents" not in ctx  # the records belong to the project the folder was


def test_after_a_compaction_the_whole_start_runs(seeded, home, repo):
    sealed_start(repo, home)
    start(repo, home, "compacted")
    assert seal_path(repo).exists()
    out = start(repo, home, "compacted", source="compact")
    assert "Money is integer cents" in out["hookSpecificOutput"]["additionalContext"]
    conn = db.connect()
    try:  # both starts folded in the order they happened: the session is the compacted one
        assert sessions.get(conn, "compacted")["source"] == "compact"
    finally:
        conn.close()


def test_after_a_session_ends_its_background_work_seals_the_next_start(seeded, home, repo, tmp_path):
    """The real order: a start, a prompt (which writes the store), a decision typed, the session's end
    handed off; the final extraction and the consolidation pass run detached and the last of them seals. The
    next start is then served sealed, with the decision the session stated, nothing stale."""
    tx = Transcript(tmp_path / f"{SID}.jsonl")
    tx.turn("We decided the cache TTL is 300 seconds.", "OK.")
    env = hook_env(home, AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0")
    base = {"session_id": SID, "cwd": str(repo), "transcript_path": str(tx.path)}
    assert run_hook("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}, home,
                    env=env).returncode == 0
    assert run_hook("user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                           "prompt": "money amounts: integer cents?"}, home, env=env).returncode == 0
    assert run_hook("session_end", {**base, "hook_event_name": "SessionEnd", "reason": "other"}, home,
                    env=env).returncode == 0
    locks, log = Path(paths.sub("locks")), Path(paths.sub("logs", "agentctx.log"))
    # both are done (each seals while it still holds its lock, then logs or returns)
    wait_for(lambda: log.exists() and f"extract {SID[:12]}: " in log.read_text() and " consolidate " in
             log.read_text() and not list(locks.glob("*.lock")), "the final extraction and the pass", timeout=120)
    assert seal_path(repo).exists()
    sealed_at = seal_path(repo).stat().st_mtime_ns
    ctx = start(repo, home, "next")["hookSpecificOutput"]["additionalContext"]
    assert "cache TTL is 300 seconds" in ctx and "Money is integer cents" in ctx
    assert seal_path(repo).stat().st_mtime_ns == sealed_at  # served from the seal, not a whole run sealing again


def test_a_resumed_session_is_never_served_sealed_its_own_cap_is_told(seeded, home, repo):
    """The seal knows the day's spending, not a session's: a resumed session whose extraction reached the
    session cap runs whole and is told, though a new session's start is served sealed."""
    from agentctx.store import spend

    conn = db.connect()
    spend.add(conn, "extraction", project_id=seeded[0].id, session_id="resumed", calls=1, input_tokens=1,
              output_tokens=1, cost_usd=0.6)  # over the session's 0.50, under the day's 2.00
    conn.close()
    sealed_start(repo, home)
    sealed_at = seal_path(repo).stat().st_mtime_ns
    assert "systemMessage" not in start(repo, home, "new-one")
    assert seal_path(repo).stat().st_mtime_ns == sealed_at
    assert "for this session" in start(repo, home, "resumed", source="resume").get("systemMessage", "")
