"""The spending cap: per-day and per-session limits on model calls (extraction through the real anthropic SDK
against the fake Messages API, rollup), SessionStart's one line, `agentctx status` and `agentctx config`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentctx import clock, llm, project, settings
from agentctx.capture import extract
from agentctx.consolidation import consolidate, rollup
from agentctx.store import db, records, spend
from tests.capture.test_extract import SID, Transcript, decision, reply
from tests.support.hooks import ROOT, run_hook


@pytest.fixture
def tx(tmp_path) -> Transcript:
    return Transcript(tmp_path / "session.jsonl")


def run(tx: Transcript, repo):
    return extract.run_once(SID, str(tx.path), str(repo), client=llm.Client(timeout=10, max_retries=0))


def test_defaults_and_config(home):
    current = settings.load()
    assert current["daily_cap_usd"] == 2.0 and current["session_cap_usd"] == 0.5
    assert settings.save_user(daily_cap_usd=3, session_cap_usd=0.1)["daily_cap_usd"] == 3.0
    assert spend.caps() == (3.0, 0.1)
    with pytest.raises(ValueError, match="dollars"):
        settings.save_user(daily_cap_usd=-1)
    (home / "config.json").write_text(json.dumps({"daily_cap_usd": "lots", "session_cap_usd": True}))
    assert spend.caps() == (2.0, 0.5)  # unreadable values count as unset


def test_extraction_is_billed_to_the_day_and_the_session(api, conn, repo, tx):
    api.enqueue(reply(decisions=[decision("Use Celery for background jobs")]))
    tx.turn("Let's go with Celery for background jobs.")
    result = run(tx, repo)
    assert result.status == "written" and result.mode == "llm"
    now = spend.status(conn, SID)
    assert now["today_usd"] > 0 and now["session_usd"] == pytest.approx(now["today_usd"])
    assert now["today_usd"] == pytest.approx(result.usage.cost_usd)
    assert spend.by_day(conn)[0]["calls"] == 1


def test_at_the_daily_cap_extraction_pauses_and_keeps_only_explicit_statements(api, conn, repo, tx):
    settings.save_user(daily_cap_usd=0.01)
    with db.transaction(conn):
        spend.add(conn, "rollup", project_id=None, session_id=None, calls=3, input_tokens=9000, output_tokens=900,
                  cost_usd=0.02)
    tx.turn("We decided to deploy with Helm charts.")
    result = run(tx, repo)
    assert api.message_requests == []  # no model call at all
    assert result.mode == "explicit" and any("spending cap reached" in n and "today" in n for n in result.notes)
    proj = project.detect(str(repo))
    assert [r["title"] for r in records.current(conn, proj.id, types=["decision"])] == [
        "We decided to deploy with Helm charts."]
    # the next day the cap is fresh
    with db.transaction(conn):
        conn.execute("UPDATE spend SET day = '2000-01-01'")
    api.enqueue(reply(decisions=[decision("Deploys use Helm")]))
    tx.turn("Also, releases are tagged vX.Y.Z.")
    assert run(tx, repo).mode == "llm" and len(api.message_requests) == 1


def test_the_session_cap(api, conn, repo, tx):
    settings.save_user(session_cap_usd=0.0001)
    api.enqueue(reply(decisions=[decision("Use Celery")]))
    tx.turn("Let's go with Celery.")
    assert run(tx, repo).mode == "llm"  # under the cap before the run: it runs (and overshoots)
    tx.turn("From now on jobs retry three times.")
    result = run(tx, repo)
    assert result.mode == "explicit" and any("for this session" in n for n in result.notes)
    assert len(api.message_requests) == 1
    assert "for this session" in spend.notice(conn, SID)
    assert spend.paused(conn, "another-session") is None  # another session may still call the model


def test_rollup_pauses_at_the_cap_and_is_billed_when_it_runs(api, conn, repo):
    proj = project.detect(str(repo))
    for i in range(14):
        records.add(conn, proj.id, type="discovery", title=f"Flaky test number {i} failed on CI", body="timeout")
    api.enqueue(json.dumps({"title": "Flaky CI tests", "summary": "Timeouts on CI."}))
    report = rollup.run(conn, proj.id, client=llm.Client(timeout=10, max_retries=0), threshold=10, keep_recent=2,
                        chunk=20)
    assert report["status"] == "rolled_up"
    assert spend.day_total(conn) == pytest.approx(report["usage"]["cost_usd"])
    assert conn.execute("SELECT kind, session_id FROM spend").fetchall()[0][:] == ("rollup", None)
    settings.save_user(daily_cap_usd=0.0)  # 0: no model calls at all
    work = consolidate.Pass(conn, proj, seconds=30, dry_run=False, use_embeddings=False)
    assert work._rollup()["status"] == "paused"
    assert len(api.message_requests) == 1


def test_session_start_says_so_in_one_line(home, repo):
    conn = db.connect()
    with db.transaction(conn):
        spend.add(conn, "extraction", project_id=None, session_id="old", calls=40, input_tokens=10**6,
                  output_tokens=10**5, cost_usd=2.5)
    conn.close()
    proc = run_hook("session_start", {"session_id": "s9", "cwd": str(repo), "hook_event_name": "SessionStart",
                                      "source": "startup"}, home)
    out = json.loads(proc.stdout)
    line = out["systemMessage"]
    assert "spending cap reached: $2.50 of $2.00 today" in line and "\n" not in line
    assert out["hookSpecificOutput"]["additionalContext"]  # the digest is still injected


def test_status_shows_spend_against_the_caps(home, repo):
    conn = db.connect()
    with db.transaction(conn):
        spend.add(conn, "extraction", project_id=None, session_id="s1", calls=2, input_tokens=4000, output_tokens=300,
                  cost_usd=0.0055, stamp=clock.now())
    conn.close()
    cli = [sys.executable, "-m", "agentctx.surfaces.cli"]
    env = {"PYTHONPATH": str(ROOT / "lib"), "AGENTCTX_HOME": str(home), "PATH": "/usr/bin:/bin",
           "CLAUDE_CODE_SESSION_ID": "s1"}
    done = subprocess.run([*cli, "--project", str(repo), "status", "--json"], capture_output=True, text=True,
                          env=env, check=True)
    sp = json.loads(done.stdout)["spending"]
    assert sp["today_usd"] == pytest.approx(0.0055) and sp["daily_cap_usd"] == 2.0
    assert sp["session_id"] == "s1" and sp["session_usd"] == pytest.approx(0.0055) and sp["paused"] is None
    text = subprocess.run([*cli, "--project", str(repo), "status"], capture_output=True, text=True, env=env,
                          check=True).stdout
    assert "spending on model calls: today $0.0055 of $2.00 (daily cap) · session s1 $0.0055 of $0.50" in text
    subprocess.run([*cli, "config", "--daily-cap", "0.005"], capture_output=True, text=True, env=env, check=True)
    text = subprocess.run([*cli, "--project", str(repo), "status"], capture_output=True, text=True, env=env,
                          check=True).stdout
    assert "PAUSED: spending cap reached" in text
