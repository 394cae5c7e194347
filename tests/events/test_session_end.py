"""SessionEnd within Claude Code's budget: the hook hands the event to a detached process and returns; a waiting
extraction worker is told to finish at once; a session whose SessionEnd never ran is closed by the next
SessionStart of its project."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from agentctx import clock, project
from agentctx.store import db, projects, sessions
from tests.capture.test_extract import SID, Transcript, decision, reply
from tests.support import fake_api
from tests.support.hooks import ROOT, hook_env, run_hook
from tests.support.waiting import wait_for

LAUNCH = ROOT / "hooks" / "launch.sh"


def row(data: Path, sql: str, *args):
    """One row, read as ``agentctx status`` would: session starts waiting in files folded in first."""
    conn = db.connect(str(data / "agentctx.db"))
    try:
        sessions.settle(conn)
        found = conn.execute(sql, args).fetchone()
        return dict(found) if found else None
    finally:
        conn.close()


def logging_uv(home: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(log file, a uv that logs its pid and process group there, then runs the real uv)."""
    calls, fake_uv = tmp_path / "uv-calls", tmp_path / "uv"
    real = subprocess.run(["sh", "-c", "command -v uv"], capture_output=True, text=True, env=hook_env(home)).stdout
    fake_uv.write_text(f'#!/bin/sh\necho "$$ $(ps -o pgid= -p $$)" >>"{calls}"\nexec {real.strip()} "$@"\n')
    fake_uv.chmod(0o755)
    return calls, fake_uv


def groups_that_ran(calls: Path) -> set[str]:
    """The process groups the logging uv ran in."""
    return {line.split()[1] for line in calls.read_text().split("\n") if line.strip()}


def launch_then_kill_group(hook: str, payload: dict, env: dict) -> subprocess.Popen:
    """Run ``sh hooks/launch.sh <hook>`` in its own process group, check it printed nothing, then kill whatever is
    left in that group, as Claude Code may on exit."""
    proc = subprocess.Popen(["sh", str(LAUNCH), hook], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(ROOT), start_new_session=True)
    out, err = proc.communicate(json.dumps(payload).encode(), timeout=60)
    assert proc.returncode == 0 and out == b"" and err == b""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc


def test_the_hook_returns_at_once_and_its_process_group_may_be_killed(home: Path, repo: Path, tmp_path: Path):
    """Claude Code cancels slow SessionEnd hooks and kills them on exit: kill the hook's whole process group
    right after it returns; the detached process still closes the session."""
    run_hook("session_start", {"session_id": "s-end", "cwd": str(repo), "hook_event_name": "SessionStart"}, home)
    env = hook_env(home, TMPDIR=str(tmp_path))
    proc = subprocess.Popen(["sh", str(LAUNCH), "session_end"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(ROOT), start_new_session=True)
    out, err = proc.communicate(json.dumps({"session_id": "s-end", "cwd": str(repo), "hook_event_name": "SessionEnd",
                                            "reason": "prompt_input_exit"}).encode(), timeout=60)
    assert proc.returncode == 0 and out == b"" and err == b""
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever is left in the hook's group goes, as on Claude Code's exit
    except ProcessLookupError:
        pass
    ended = wait_for(lambda: (row(home, "SELECT ended_at, end_reason FROM sessions WHERE session_id = 's-end'")
                              or {}).get("ended_at") and row(home, "SELECT * FROM sessions WHERE session_id = 's-end'"),
                     "the detached SessionEnd")
    assert ended["end_reason"] == "prompt_input_exit"
    wait_for(lambda: not list(tmp_path.glob("agentctx-session_end.*")), "the saved event to be removed")


def test_stop_returns_before_python_runs_and_its_group_may_be_killed(home: Path, repo: Path, tmp_path: Path):
    """Stop is handed off like SessionEnd: the hook is only sh (it never runs the Python handler itself, so a uv
    that would run it leaves no trace in the hook's own time), its whole process group killed right after it
    returns, and the detached side still starts the worker, which captures what the person stated."""
    tx = Transcript(tmp_path / f"{SID}.jsonl")
    tx.turn("From now on we always deploy with blue-green releases.", "Understood.")
    calls, fake_uv = logging_uv(home, tmp_path)
    env = hook_env(home, AGENTCTX_LLM="0", AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0",
                   TMPDIR=str(tmp_path), AGENTCTX_UV=str(fake_uv), AGENTCTX_CACHE_DIR=str(tmp_path / "cache"))
    stop = {"session_id": SID, "transcript_path": str(tx.path), "cwd": str(repo), "hook_event_name": "Stop"}
    proc = launch_then_kill_group("stop", stop, env)
    rec = wait_for(lambda: row(home, "SELECT * FROM records WHERE type IN ('decision', 'convention')"),
                   "the detached Stop's worker to capture the statement", timeout=60)
    assert "blue-green" in (rec["title"] + (rec["body"] or ""))
    groups = groups_that_ran(calls)
    assert groups and str(proc.pid) not in groups  # uv ran only outside the hook's process group
    wait_for(lambda: not list(tmp_path.glob("agentctx-stop.*")), "the saved event to be removed")


def test_post_tool_use_is_handed_off_and_survives_its_group_being_killed(home: Path, repo: Path, tmp_path: Path):
    """PostToolUse is async in Claude Code, yet async hooks still running when ``claude -p`` ends are cancelled:
    the hook only saves the event and hands it to a detached process, so the observation lands even when the
    hook's process group is killed as soon as the hook returns."""
    (repo / "src").mkdir(exist_ok=True)
    target = repo / "src" / "billing.py"
    target.write_text("x = 1\n")
    calls, fake_uv = logging_uv(home, tmp_path)
    env = hook_env(home, TMPDIR=str(tmp_path), AGENTCTX_UV=str(fake_uv), AGENTCTX_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("AGENTCTX_HOOK_DETACHED", None)
    payload = {"session_id": "s-ptu", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(target), "content": "x = 1\n"},
               "tool_response": {"type": "create", "filePath": str(target)}}
    proc = launch_then_kill_group("post_tool_use", payload, env)
    node = wait_for(lambda: row(home, "SELECT * FROM nodes WHERE kind = 'file' AND name = 'src/billing.py'"),
                    "the detached PostToolUse to record the written file", timeout=60)
    assert node["project_id"] == project.detect(str(repo)).id
    groups = groups_that_ran(calls)
    assert groups and str(proc.pid) not in groups  # the handler ran only outside the hook's process group
    wait_for(lambda: not list(tmp_path.glob("agentctx-post_tool_use.*")), "the saved event to be removed")


def test_a_waiting_worker_extracts_the_tail_at_once_at_session_end(home: Path, repo: Path, tmp_path: Path):
    """The worker waits for more text (less than MIN_TOKENS new; idle wait 10 minutes here); SessionEnd makes it
    extract now, through the real SDK against a fake Messages API."""
    tx = Transcript(tmp_path / f"{SID}.jsonl")
    tx.turn("We decided to keep invoices in cents.", "Noted.")
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.text(
            reply(decisions=[decision("Invoices are kept in integer cents")]))) as api:
        env = hook_env(home, AGENTCTX_LLM="1", AGENTCTX_EXTRACT_IDLE="600", TMPDIR=str(tmp_path),
                       ANTHROPIC_API_KEY="sk-test-fake", ANTHROPIC_BASE_URL=api.base_url)
        stop = {"session_id": SID, "transcript_path": str(tx.path), "cwd": str(repo), "hook_event_name": "Stop"}
        assert run_hook("stop", stop, home, env=env).returncode == 0
        locks = home / "locks"
        wait_for(lambda: list(locks.glob("extract-*.lock")), "the worker to take its lock")
        time.sleep(3.0)  # it is waiting: for more text, or 600 s of quiet
        assert api.message_requests == [] and list(locks.glob("extract-*.lock"))
        end = {"session_id": SID, "transcript_path": str(tx.path), "cwd": str(repo), "hook_event_name": "SessionEnd",
               "reason": "other"}
        assert run_hook("session_end", end, home, env=env).returncode == 0
        rec = wait_for(lambda: row(home, "SELECT * FROM records WHERE type = 'decision'"), "the tail extracted",
                       timeout=60)
        wait_for(lambda: not list(locks.glob("extract-*")), "the worker to exit and clear its flags", timeout=60)
    assert rec["title"] == "Invoices are kept in integer cents" and len(api.message_requests) >= 1


def _open_session(data: Path, sid: str, proj: project.Project, started: str | None = None) -> None:
    conn = db.connect(str(data / "agentctx.db"))
    with db.transaction(conn):
        projects.register(conn, proj)
        sessions.start(conn, sid, proj.id, proj.root, "startup")
        if started:
            conn.execute("UPDATE sessions SET started_at = ? WHERE session_id = ?", (started, sid))
    conn.close()


def test_next_session_start_closes_sessions_left_open(home: Path, repo: Path, tmp_path: Path):
    proj = project.detect(str(repo))
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for sid in ("s-abandoned", "s-busy"):
        _open_session(home, sid, proj)
        (folder / f"{sid}.jsonl").write_text(Transcript(folder / f"{sid}.jsonl").path.read_text())
    Transcript(folder / "s-abandoned.jsonl").turn("We decided the cache TTL is 300 seconds.", "OK.")
    hour_ago = time.time() - 3600
    os.utime(folder / "s-abandoned.jsonl", (hour_ago, hour_ago))  # its SessionEnd was cancelled an hour ago
    _open_session(home, "s-no-transcript", proj, started=clock.days_before(clock.now(), 2))
    _open_session(home, "s-other-project", project.detect(str(tmp_path)))
    env = hook_env(home, AGENTCTX_LLM="0", TMPDIR=str(tmp_path))
    start = {"session_id": "s-new", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup",
             "transcript_path": str(folder / "s-new.jsonl")}
    proc = run_hook("session_start", start, home, env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    state = {sid: row(home, "SELECT ended_at, end_reason FROM sessions WHERE session_id = ?", sid)
             for sid in ("s-abandoned", "s-no-transcript", "s-busy", "s-other-project", "s-new")}
    assert state["s-abandoned"]["end_reason"] == state["s-no-transcript"]["end_reason"] == "left open"
    assert state["s-busy"]["ended_at"] is None  # its transcript is fresh: a parallel session, still running
    assert state["s-other-project"]["ended_at"] is None and state["s-new"]["ended_at"] is None
    # the rest of its end (the final extraction of its tail) ran detached
    rec = wait_for(lambda: row(home, "SELECT * FROM records WHERE type = 'decision'"), "the left-open tail", timeout=60)
    assert "300 seconds" in rec["title"]
    again = run_hook("session_start", {**start, "session_id": "s-new2"}, home, env=env)
    assert again.returncode == 0
    assert row(home, "SELECT ended_at FROM sessions WHERE session_id = 's-busy'")["ended_at"] is None
