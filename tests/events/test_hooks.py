"""Hook scripts run as separate processes with JSON on stdin, exactly as Claude Code runs them."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentctx import budgets
from agentctx.store import db, records, sessions
from tests.support.hooks import ROOT, context_of, hook_env, run_hook
from tests.support.imports import heavy_modules_loaded
from tests.support.waiting import wait_for

HOOKS = ("session_start", "user_prompt_submit", "session_end")


def payload(repo: Path, event: str, session: str = "sess-1", **extra) -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": event,
            "transcript_path": "/nonexistent.jsonl", **extra}


def store_row(sql: str, *args):
    """One row read as the dashboard or ``agentctx status`` would: session starts still waiting in files
    (``store.starts``) folded in first."""
    conn = db.connect()
    try:
        sessions.settle(conn)
        return conn.execute(sql, args).fetchone()
    finally:
        conn.close()


def test_session_start_injects_digest_within_budget(seeded, home, repo):
    proj, recs = seeded
    proc = run_hook("session_start", payload(repo, "SessionStart", source="startup"), home)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert recs["grpc"]["title"] in ctx and recs["cents"]["title"] in ctx
    assert recs["handover"]["title"] in ctx
    assert "Flaky webhook" not in ctx  # bugfixes are per-turn material, not digest
    assert budgets.estimate_tokens(ctx) <= budgets.SESSION_START_TOKENS
    assert len(ctx) < budgets.MAX_INJECTED_CHARS
    row = store_row("SELECT tokens_injected, injections, source FROM sessions WHERE session_id = 'sess-1'")
    assert row["tokens_injected"] == budgets.estimate_tokens(ctx)
    assert row["injections"] == 1 and row["source"] == "startup"


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_every_source(seeded, home, repo, source):
    proc = run_hook("session_start", payload(repo, "SessionStart", source=source), home)
    assert proc.returncode == 0
    assert "Internal services use gRPC" in context_of(proc)


def test_prompt_injects_top3_new_records_then_dedups(seeded, home, repo):
    p = payload(repo, "UserPromptSubmit", prompt="Why is the webhook signature test flaky?")
    first = context_of(run_hook("user_prompt_submit", p, home))
    second = context_of(run_hook("user_prompt_submit", p, home))
    third = run_hook("user_prompt_submit", p, home)
    assert first.count("[bugfix]") == 3
    assert second.count("[bugfix]") == 3
    shown_first = {line for line in first.splitlines() if "[bugfix]" in line}
    shown_second = {line for line in second.splitlines() if "[bugfix]" in line}
    assert not shown_first & shown_second  # nothing repeated within a session
    assert third.returncode == 0 and third.stdout == b""  # all six already injected
    for text in (first, second):
        assert budgets.estimate_tokens(text) <= budgets.TURN_TOKENS and len(text) < budgets.MAX_INJECTED_CHARS
    row = store_row("SELECT tokens_injected, injections FROM sessions WHERE session_id = 'sess-1'")
    assert row["tokens_injected"] == budgets.estimate_tokens(first) + budgets.estimate_tokens(second)
    assert row["injections"] == 2


def test_digest_records_are_not_repeated_per_turn(seeded, home, repo):
    run_hook("session_start", payload(repo, "SessionStart", source="startup"), home)
    ctx = context_of(run_hook("user_prompt_submit", payload(repo, "UserPromptSubmit", prompt="gRPC protobuf contracts"), home))
    assert ctx is None or "Internal services use gRPC" not in ctx


@pytest.mark.parametrize("prompt", ["ok", "yes", "continue", "Thanks!", "   ", ""])
def test_trivial_prompts_inject_nothing(seeded, home, repo, prompt):
    proc = run_hook("user_prompt_submit", payload(repo, "UserPromptSubmit", prompt=prompt), home)
    assert proc.returncode == 0 and proc.stdout == b""


def test_superseded_decision_is_never_injected(seeded, home, repo):
    proj, recs = seeded
    conn = db.connect()
    records.supersede(conn, proj.id, recs["grpc"]["id"], title="Internal services use REST again",
                      body="gRPC tooling was too heavy for the team.")
    conn.close()
    start = context_of(run_hook("session_start", payload(repo, "SessionStart", session="s2", source="startup"), home))
    assert "Internal services use REST again" in start and "Internal services use gRPC" not in start
    turn = context_of(run_hook("user_prompt_submit",
                               payload(repo, "UserPromptSubmit", session="s3", prompt="internal services gRPC protobuf"), home))
    assert turn and "REST again" in turn and "use gRPC" not in turn


def test_session_end_closes_session_and_cleans_dedup_state(seeded, home, repo):
    p = payload(repo, "UserPromptSubmit", prompt="flaky webhook signature test")
    assert context_of(run_hook("user_prompt_submit", p, home))
    assert store_row("SELECT COUNT(*) AS n FROM injections WHERE session_id = 'sess-1'")["n"] == 3
    proc = run_hook("session_end", payload(repo, "SessionEnd", reason="other"), home)
    assert proc.returncode == 0 and proc.stdout == b""
    proj, _ = seeded  # the work is done by a detached process (hooks/launch.sh): wait for its digest cache
    wait_for(lambda: (home / "digests" / f"{proj.id}.json").exists(), "the detached SessionEnd")
    assert store_row("SELECT COUNT(*) AS n FROM injections WHERE session_id = 'sess-1'")["n"] == 0
    row = store_row("SELECT ended_at, end_reason FROM sessions WHERE session_id = 'sess-1'")
    assert row["ended_at"] and row["end_reason"] == "other"


def test_cached_digest_is_used_only_while_fresh(seeded, home, repo):
    proj, recs = seeded
    run_hook("session_end", payload(repo, "SessionEnd", reason="other"), home)
    cache = home / "digests" / f"{proj.id}.json"
    wait_for(cache.exists, "the detached SessionEnd's digest cache")
    data = json.loads(cache.read_text())
    data["text"] = data["text"].replace("Money is integer cents", "Money is integer cents [cached]")
    cache.write_text(json.dumps(data))
    assert "[cached]" in context_of(run_hook("session_start", payload(repo, "SessionStart", source="startup"), home))
    conn = db.connect()
    records.add(conn, proj.id, type="decision", title="Queues use SQS", body="Not RabbitMQ.")
    conn.close()
    fresh = context_of(run_hook("session_start", payload(repo, "SessionStart", session="s9", source="startup"), home))
    assert "[cached]" not in fresh and "Queues use SQS" in fresh


def _assert_quiet_success(proc: subprocess.CompletedProcess[bytes]) -> None:
    assert proc.returncode == 0
    out = proc.stdout.decode().strip()
    if out:  # anything printed must be a valid hook JSON object
        assert isinstance(json.loads(out), dict)


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize(
    "stdin",
    [b"", b"not json", b"{\"session_id\": ", b"[1, 2, 3]", b"null", os.urandom(512), b"\xff\xfe\x00garbage"],
    ids=["empty", "text", "truncated", "array", "null", "random-bytes", "binary"],
)
def test_bad_stdin_fails_open(seeded, home, hook, stdin):
    proc = run_hook(hook, stdin, home)
    _assert_quiet_success(proc)
    assert proc.stdout == b""
    log = home / "logs" / "agentctx.log"
    wait_for(lambda: log.exists() and log.read_text().strip(), "the log line (SessionEnd runs detached)")
    assert log.read_text().strip().splitlines()[-1].split()[1] in ("SessionStart", "UserPromptSubmit", "SessionEnd")


@pytest.mark.parametrize("hook", HOOKS)
def test_missing_fields_are_tolerated(seeded, home, repo, hook):
    env = hook_env(home, CLAUDE_PROJECT_DIR=str(repo))
    proc = subprocess.run(["sh", str(ROOT / "hooks" / "launch.sh"), hook], input=b"{}", capture_output=True,
                          env=env, cwd=str(repo), timeout=60)
    _assert_quiet_success(proc)
    if hook == "session_start":
        assert "Internal services use gRPC" in context_of(proc)


def test_one_megabyte_prompt(seeded, home, repo):
    prompt = ("lorem ipsum dolor sit amet " * 40_000) + " why is the webhook signature test flaky?"
    assert len(prompt) > 1_000_000
    proc = run_hook("user_prompt_submit", payload(repo, "UserPromptSubmit", prompt=prompt), home)
    assert proc.returncode == 0
    ctx = context_of(proc)
    assert ctx and "Flaky webhook" in ctx and budgets.estimate_tokens(ctx) <= budgets.TURN_TOKENS


def test_hostile_prompt_syntax(seeded, home, repo):
    prompt = 'NEAR("webhook" -signature*) AND (test:flaky OR "unbalanced \'; DROP TABLE records; -- ünïcödé 测试 🚀'
    proc = run_hook("user_prompt_submit", payload(repo, "UserPromptSubmit", prompt=prompt), home)
    assert proc.returncode == 0 and "Flaky webhook" in context_of(proc)
    assert store_row("SELECT COUNT(*) AS n FROM records")["n"] == 10


def test_locked_store_fails_open_and_loses_nothing(seeded, home, repo):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys, time\n"
         f"c = sqlite3.connect({str(home / 'agentctx.db')!r}, isolation_level=None)\n"
         "c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE')\n"
         "c.execute(\"UPDATE meta SET value = value WHERE key = 'generation'\")\n"
         "print('locked', flush=True); time.sleep(6)\n"],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline().strip() == b"locked"
        for hook, p in (
            ("session_start", payload(repo, "SessionStart", source="startup")),
            ("user_prompt_submit", payload(repo, "UserPromptSubmit", prompt="flaky webhook test")),
            ("session_end", payload(repo, "SessionEnd", reason="other")),
        ):
            proc = run_hook(hook, p, home)
            _assert_quiet_success(proc)
            assert proc.stdout == b""
    finally:
        holder.wait(timeout=30)
    assert "locked" in (home / "logs" / "agentctx.log").read_text()
    assert store_row("SELECT COUNT(*) AS n FROM records")["n"] == 10


def test_read_only_store_still_injects(seeded, home, repo):
    """An unwritable store (hook run as an unprivileged user): inject what can be read, write nothing."""
    if os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists():
        pytest.skip("needs root and setpriv to drop privileges")
    base = Path(tempfile.mkdtemp(prefix="agentctx-ro-", dir="/tmp"))
    try:
        shutil.copytree(home, base / "data")
        shutil.copytree(repo, base / "widgets")  # same origin remote, so the same project id
        for part in ("hooks", "lib"):
            shutil.copytree(ROOT / part, base / "plugin" / part, ignore=shutil.ignore_patterns("__pycache__"))
        for path in [base, *base.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # owned by root: readable, not writable
        # Plain Python runs the hook script: the unprivileged user cannot reach root's uv cache.
        python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
        env = {"PATH": "/usr/bin:/bin", "AGENTCTX_HOME": str(base / "data"), "HOME": "/tmp", "TMPDIR": "/tmp"}
        proc = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python,
             str(base / "plugin" / "hooks" / "session_start.py")],
            input=json.dumps(payload(base / "widgets", "SessionStart", source="startup")).encode(),
            capture_output=True, env=env, timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        assert "Internal services use gRPC" in context_of(proc)
        check = sqlite3.connect(base / "data" / "agentctx.db")
        assert check.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0  # nothing could be written
        assert check.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 10
        check.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_corrupt_store_is_moved_aside_never_overwritten(home, repo):
    home.mkdir(parents=True)
    garbage = b"this is not a sqlite database " * 100
    (home / "agentctx.db").write_bytes(garbage)
    proc = run_hook("user_prompt_submit", payload(repo, "UserPromptSubmit", prompt="anything about webhooks"), home)
    _assert_quiet_success(proc)
    moved = list(home.glob("agentctx.db.corrupt-*"))
    assert len(moved) == 1 and moved[0].read_bytes() == garbage
    assert store_row("SELECT COUNT(*) AS n FROM records")["n"] == 0  # a fresh, working store
    start = run_hook("session_start", payload(repo, "SessionStart", source="startup"), home)
    notice = json.loads(start.stdout)["systemMessage"]
    assert "damaged" in notice and moved[0].name in notice and "\n" not in notice
    again = run_hook("session_start", payload(repo, "SessionStart", session="s2", source="startup"), home)
    assert "systemMessage" not in json.loads(again.stdout)  # shown once


def test_store_from_newer_schema_is_left_untouched(seeded, home, repo):
    conn = sqlite3.connect(home / "agentctx.db")
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    before = (home / "agentctx.db").read_bytes()
    for hook, p in (("session_start", payload(repo, "SessionStart", source="startup")),
                    ("user_prompt_submit", payload(repo, "UserPromptSubmit", prompt="flaky webhook"))):
        proc = run_hook(hook, p, home)
        _assert_quiet_success(proc)
        if hook == "session_start":  # the user is told, in one line; Claude is given nothing
            out = json.loads(proc.stdout)
            assert set(out) == {"systemMessage"} and "newer" in out["systemMessage"]
            assert "\n" not in out["systemMessage"] and "update the plugin" in out["systemMessage"]
        else:
            assert proc.stdout == b""
    assert (home / "agentctx.db").read_bytes() == before
    assert "newer" in (home / "logs" / "agentctx.log").read_text()


def test_missing_data_directory_is_created(tmp_path, repo):
    data = tmp_path / "does" / "not" / "exist"
    proc = run_hook("session_start", payload(repo, "SessionStart", source="startup"), data)
    assert proc.returncode == 0 and "No records stored" in context_of(proc)
    assert (data / "agentctx.db").exists()


def test_impossible_data_directory_fails_open(tmp_path, repo):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_hook("session_start", payload(repo, "SessionStart", source="startup"), blocker / "data",
                    env=hook_env(blocker / "data", TMPDIR=str(tmp_path)))
    assert proc.returncode == 0 and proc.stdout == b""
    assert "SessionStart" in (tmp_path / "agentctx-hooks.log").read_text()


def test_without_uv_session_start_says_so_once_and_others_stay_silent(tmp_path, repo, home):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "AGENTCTX_HOME": str(home),
           "CLAUDE_PLUGIN_ROOT": str(ROOT)}
    assert subprocess.run(["sh", "-c", "command -v uv"], env=env, capture_output=True).returncode != 0
    start = run_hook("session_start", payload(repo, "SessionStart", source="startup"), home, env=env)
    assert start.returncode == 0
    message = json.loads(start.stdout)["systemMessage"]
    assert "uv" in message and "install" in message.lower() and "\n" not in message
    for hook in ("user_prompt_submit", "session_end"):
        proc = run_hook(hook, payload(repo, "UserPromptSubmit", prompt="flaky webhook"), home, env=env)
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""


def test_disabled_by_environment(seeded, home, repo):
    proc = run_hook("session_start", payload(repo, "SessionStart", source="startup"), home,
                    env=hook_env(home, AGENTCTX_DISABLE="1"))
    assert proc.returncode == 0 and proc.stdout == b""


def test_concurrent_hooks_lose_nothing(seeded, home, repo):
    def one(i: int):
        p = payload(repo, "UserPromptSubmit", session=f"par-{i}", prompt="flaky webhook signature test")
        return run_hook("user_prompt_submit", p, home)

    with ThreadPoolExecutor(max_workers=8) as pool:
        procs = list(pool.map(one, range(16)))
    assert all(p.returncode == 0 and context_of(p) for p in procs)
    row = store_row("SELECT COUNT(*) AS n, SUM(injections) AS inj FROM sessions WHERE session_id LIKE 'par-%'")
    assert row["n"] == 16 and row["inj"] == 16
    assert store_row("SELECT COUNT(*) AS n FROM injections WHERE session_id LIKE 'par-%'")["n"] == 48


def test_hot_path_imports_nothing_heavy():
    """SessionStart / UserPromptSubmit / SessionEnd modules load only the standard library."""
    assert heavy_modules_loaded("import agentctx.events.session_start, agentctx.events.user_prompt_submit, agentctx.events.session_end, agentctx.events.frame") == []


def test_the_prompt_hook_reads_and_writes_json_without_the_json_package():
    """``json`` costs ~1.3 ms a prompt (the ``re`` patterns it compiles aside): the hot path uses ``jsonfast``."""
    assert heavy_modules_loaded("import agentctx.events.user_prompt_submit, agentctx.events.frame",
                                extra=frozenset({"json"})) == []


def test_a_prompt_answered_from_the_store_loads_no_json_package_either(seeded, repo):
    """Not only at import: a prompt's run (the project read from its git files through ``safefile``, the
    store searched, the records injected and accounted) never imports ``json``."""
    code = ("from agentctx.events.user_prompt_submit import on_user_prompt_submit\n"
            "from agentctx.hookio import HookEvent\n"
            f"payload = {{'session_id': 'no-json', 'cwd': {str(repo)!r}, 'prompt': 'why did the webhook test fail?'}}\n"
            "assert on_user_prompt_submit(HookEvent('UserPromptSubmit', payload))\n")
    assert heavy_modules_loaded(code, extra=frozenset({"json"})) == []


def test_session_start_with_nothing_changed_loads_only_what_it_uses(seeded, repo):
    """A SessionStart that finds its digest precomputed runs without the search modules (they are for
    CLAUDE.md drift and prompts) and without ``shutil`` (its archive modules; the login check looks up
    ``claude`` itself)."""
    run = (f"from agentctx.hookio import HookEvent\nfrom agentctx.events.session_start import on_session_start\n"
           f"out = on_session_start(HookEvent('SessionStart', {{'session_id': 'imports', 'cwd': {str(repo)!r}, "
           f"'source': 'startup'}}))\nassert 'Money is integer cents' in out['hookSpecificOutput']['additionalContext']")
    heavy_modules_loaded(run)  # the first start builds and caches the digest
    not_needed = frozenset({"shutil", "agentctx.store.search", "agentctx.lexicon", "bz2", "lzma"})
    assert heavy_modules_loaded(run, extra=not_needed) == []


def test_hook_scripts_and_manifests_agree():
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    assert {"SessionStart", "UserPromptSubmit", "SessionEnd"} <= set(hooks)
    for entries in hooks.values():
        for entry in entries:
            for handler in entry["hooks"]:
                script = handler["command"].split()[-1]
                assert (ROOT / "hooks" / f"{script}.py").exists()
                assert "${CLAUDE_PLUGIN_ROOT}" in handler["command"]
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "agentctx" and manifest["version"]
    assert "hooks" not in manifest  # hooks/hooks.json is auto-loaded; declaring it again breaks loading
    assert not (ROOT / ".mcp.json").exists()
    assert json.loads((ROOT / "marketplace.json").read_text()) == json.loads(
        (ROOT / ".claude-plugin" / "marketplace.json").read_text()
    )
    for word in ("SessionStart", "UserPromptSubmit", "1,500", "2,000", "redact"):
        assert word in manifest["description"]


def test_hooks_return_quickly_enough_to_never_hit_timeouts(seeded, home, repo):
    """Not a benchmark (see bench/): a guard that no hook comes near its declared timeout."""
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    for event, hook in (("SessionStart", "session_start"), ("UserPromptSubmit", "user_prompt_submit"),
                        ("SessionEnd", "session_end")):
        limit = hooks[event][0]["hooks"][0]["timeout"]
        started = time.monotonic()
        run_hook(hook, payload(repo, event, source="startup", prompt="flaky webhook", reason="other"), home)
        assert time.monotonic() - started < limit


def test_real_uv_is_preferred_over_a_version_manager_shim(seeded, home, repo, tmp_path):
    fake_home = tmp_path / "user"
    (fake_home / ".local" / "bin").mkdir(parents=True)
    real_uv = shutil.which("uv", path=hook_env(home)["PATH"])
    (fake_home / ".local" / "bin" / "uv").symlink_to(Path(real_uv).resolve())
    shims = tmp_path / "pyenv" / "shims"
    shims.mkdir(parents=True)
    marker = tmp_path / "shim-was-used"
    (shims / "uv").write_text(f"#!/bin/sh\ntouch {marker}\nexit 3\n")
    (shims / "uv").chmod(0o755)
    env = hook_env(home, PATH=f"{shims}:/usr/bin:/bin", HOME=str(fake_home),
                   UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv"))
    proc = run_hook("session_start", payload(repo, "SessionStart", source="startup"), home, env=env)
    assert proc.returncode == 0 and "Internal services use gRPC" in context_of(proc)
    assert not marker.exists()
