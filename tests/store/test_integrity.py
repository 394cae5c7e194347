"""No write silently lost: a damaged full-text index is rebuilt on the spot (hooks, CLI, MCP, dashboard);
``agentctx doctor`` finds damage and ``--repair`` fixes it (index rebuild, salvage into a fresh store,
quarantined copies merged back, permissions); SessionStart says when the store is newer, read-only or was
replaced; a read-only store still answers; a full disk is named as such."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from agentctx import clock, ids, project
from agentctx.store import db, integrity, projects, records
from agentctx.surfaces.mcp_tools import Service
from tests.support.cli import agentctx
from tests.support.damage import damage_leaf, damage_tables
from tests.support.hooks import ROOT, run_hook


def seed(repo: Path, n: int = 300) -> project.Project:
    conn = db.connect()
    proj = project.detect(str(repo))
    projects.register(conn, proj)
    now = clock.now()
    with db.transaction(conn):
        for i in range(n):
            records.insert(conn, proj.id, type="decision", title=f"Decision {i} about the kafka topic t{i}",
                           body="Partitioned by account. " * 10, stamp=now)
    conn.close()
    return proj


def count(sql: str, *args) -> int:
    conn = sqlite3.connect(os.environ["AGENTCTX_HOME"] + "/agentctx.db")
    try:
        return conn.execute(sql, args).fetchone()[0]
    finally:
        conn.close()


def sound(home: Path) -> bool:
    conn = sqlite3.connect(home / "agentctx.db")
    try:
        return integrity.integrity_errors(conn) == [] and integrity.fts_problem(conn) is None
    finally:
        conn.close()


def hook_payload(repo: Path, event: str, **extra) -> dict:
    return {"session_id": "sess-int", "cwd": str(repo), "hook_event_name": event,
            "transcript_path": "/nonexistent.jsonl", **extra}


# -- the damaged full-text index: rebuilt where the write happens


def test_cli_write_on_a_damaged_index_rebuilds_it_and_lands(home: Path, repo: Path):
    seed(repo)
    damage_tables(home / "agentctx.db")
    r = agentctx(home, "--project", str(repo), "record", "--type", "decision", "--title",
                 "Consumer lag alerts fire at 5 minutes", "--json")
    assert r.returncode == 0, r.stderr
    assert "full-text index was damaged" in r.stderr
    found = json.loads(agentctx(home, "--project", str(repo), "search", "consumer lag", "--json").stdout)
    assert [h["title"] for h in found] == ["Consumer lag alerts fire at 5 minutes"]
    assert count("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH 'kafka'") == 300  # all indexed again
    assert sound(home)


def test_hook_observation_on_a_damaged_index_is_kept_and_the_user_told(home: Path, repo: Path):
    seed(repo, 50)
    damage_tables(home / "agentctx.db", ("records_fts_idx", "records_fts_config"))
    failure = {**hook_payload(repo, "PostToolUseFailure"), "tool_name": "Bash",
               "tool_input": {"command": "python manage.py migrate", "description": "run"},
               "error": "Exit code 1\nTraceback (most recent call last):\n  File \"m.py\", line 3\n"
                        "ValueError: ledger column missing", "is_interrupt": False}
    proc = run_hook("post_tool_use", failure, home)
    assert proc.returncode == 0 and proc.stdout == b""
    assert count("SELECT COUNT(*) FROM records WHERE type = 'bugfix' AND title LIKE '%ledger column missing%'") == 1
    log = (home / "logs" / "agentctx.log").read_text()
    assert "full-text index was damaged" in log
    start = run_hook("session_start", hook_payload(repo, "SessionStart", source="startup"), home)
    message = json.loads(start.stdout)["systemMessage"]
    assert "full-text index was damaged" in message and "nothing was lost" in message and "\n" not in message
    assert sound(home)


def test_mcp_reads_and_writes_on_a_damaged_index(home: Path, repo: Path):
    seed(repo, 40)
    damage_tables(home / "agentctx.db")
    service = Service(str(repo))
    try:
        hits = service.search("kafka topic t7")  # a read verifies the index, rebuilds it and answers
        assert "Decision 7 about the kafka topic t7" in hits
        assert sound(home) and any("full-text index" in n for n in db.take_notices())  # told at SessionStart
        out = service.record("convention", "Topics are named domain.event.v1", "Lowercase, dot separated.")
        assert "Recorded " in out
        assert "Topics are named" in service.search("topics named domain event")
    finally:
        service.close()
    assert sound(home)


def test_dashboard_write_on_a_damaged_index(home: Path, repo: Path, tmp_path: Path):
    from tests.support.ui_server import Server
    from tests.surfaces.test_ui import request, token_of

    proj = seed(repo, 20)
    conn = db.connect()
    rid = records.current(conn, proj.id, limit=1)[0]["id"]
    conn.close()
    damage_tables(home / "agentctx.db")
    srv = Server(tmp_path, project_id=proj.id)
    try:
        status, rec, _ = request(srv, "POST", f"/api/records/{rid}/edit?project={proj.id}",
                                 {"title": "Decision about the kafka topic, edited"},
                                 {"X-Agentctx-Token": token_of(srv)})
    finally:
        srv.stop()
    assert status == 200 and rec["title"] == "Decision about the kafka topic, edited"
    assert sound(home)


# -- agentctx doctor


def doctor(home: Path, *args: str) -> tuple[int, dict]:
    r = agentctx(home, "doctor", "--json", *args)
    assert r.stderr == "" or "importing" in r.stderr, r.stderr
    return r.returncode, json.loads(r.stdout)


def test_doctor_on_a_sound_store(home: Path, repo: Path):
    seed(repo, 5)
    code, report = doctor(home)
    assert code == 0 and report["problems"] == [] and report["integrity"] == "ok" and report["fts"] == "ok"
    text = agentctx(home, "doctor")
    assert text.returncode == 0 and "ok: integrity" in text.stdout


def test_doctor_rebuilds_a_damaged_index(home: Path, repo: Path):
    seed(repo)
    damage_tables(home / "agentctx.db")
    code, report = doctor(home)
    assert code == 1 and report["fts"] != "ok" and report["damaged_tables"] == []
    code, fixed = doctor(home, "--repair")
    assert code == 0, fixed
    assert any("full-text index was recreated" in a for a in fixed["actions"])
    assert fixed["problems"] == [] and sound(home) and count("SELECT COUNT(*) FROM records") == 300


def test_doctor_salvages_a_damaged_table_into_a_fresh_store(home: Path, repo: Path):
    proj = seed(repo, 400)
    conn = db.connect()
    records.add(conn, proj.id, type="convention", title="Keep this convention", body="It is on an early page.")
    conn.close()
    damage_leaf(home / "agentctx.db", "records")  # the newest rows' page: garbage
    code, report = doctor(home)
    assert code == 1 and "records" in report["damaged_tables"]
    code, fixed = doctor(home, "--repair")
    assert code == 0, fixed
    assert any(a.startswith("salvaged ") for a in fixed["actions"]), fixed["actions"]
    kept = count("SELECT COUNT(*) FROM records")
    assert 300 <= kept < 401  # only the rows on the damaged page are lost
    assert count("SELECT COUNT(*) FROM records WHERE title = 'Decision 0 about the kafka topic t0'") == 1
    assert sound(home)
    assert list(home.glob("agentctx.db.corrupt-*.salvaged"))  # the damaged file is kept
    found = json.loads(agentctx(home, "--project", str(repo), "search", "kafka topic t3", "--json").stdout)
    assert found and found[0]["title"].startswith("Decision 3 ")


def test_doctor_merges_what_a_quarantined_copy_still_holds(home: Path, repo: Path):
    seed(repo, 30)
    (home / "agentctx.db").rename(home / "agentctx.db.corrupt-20260101T000000Z")  # as a hook would have left it
    fresh = seed(repo, 0)
    conn = db.connect()
    records.add(conn, fresh.id, type="decision", title="Written after the damage")
    conn.close()
    code, report = doctor(home)
    assert code == 1 and len(report["quarantined_copies"]) == 1
    code, fixed = doctor(home, "--repair")
    assert code == 0 and any(a.startswith("merged 3") for a in fixed["actions"]), fixed["actions"]
    assert count("SELECT COUNT(*) FROM records") == 31
    assert (home / "agentctx.db.corrupt-20260101T000000Z.salvaged").exists()


def test_doctor_makes_an_old_store_owner_only(home: Path, repo: Path):
    seed(repo, 1)
    for path in [home, home / "agentctx.db", home / "logs"]:
        if path.exists():
            path.chmod(0o755 if path.is_dir() else 0o644)
    code, report = doctor(home)
    assert code == 1 and report["loose_permissions"]
    code, fixed = doctor(home, "--repair")
    assert code == 0 and stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "agentctx.db").stat().st_mode) == 0o600


def test_new_store_and_logs_are_owner_only(home: Path):
    from agentctx.logs import log

    conn = db.connect()
    with db.transaction(conn):
        conn.execute("UPDATE meta SET value = value WHERE key = 'generation'")
    log("Test", "a line")
    for path, mode in ((home, 0o700), (home / "agentctx.db", 0o600), (home / "agentctx.db-wal", 0o600),
                       (home / "agentctx.db-shm", 0o600), (home / "logs", 0o700), (home / "logs" / "agentctx.log", 0o600)):
        assert stat.S_IMODE(path.stat().st_mode) == mode, path
    conn.close()


# -- what SessionStart says


def test_session_start_says_when_the_store_is_read_only(home: Path, repo: Path):
    """Run as an unprivileged user against root's store: context is injected and the user is told, once a line."""
    if os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists():
        pytest.skip("needs root and setpriv to drop privileges")
    seed(repo, 3)
    base, env = _unprivileged_copy(home, repo)
    try:
        proc = subprocess.run(_as_nobody(_python(), str(base / "plugin" / "hooks" / "session_start.py")),
                              input=json.dumps(hook_payload(base / "widgets", "SessionStart", source="startup")).encode(),
                              capture_output=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert "kafka topic" in out["hookSpecificOutput"]["additionalContext"]
        assert "read-only" in out["systemMessage"] and "\n" not in out["systemMessage"]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_read_only_store_answers_search_and_status(home: Path, repo: Path):
    if os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists():
        pytest.skip("needs root and setpriv to drop privileges")
    seed(repo, 3)
    base, env = _unprivileged_copy(home, repo)
    try:
        import click

        shutil.copytree(Path(click.__file__).parent, base / "deps" / "click")
        for path in [*(base / "deps").rglob("*"), base / "deps"]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        cli = (f"import sys; sys.path[:0] = [{str(base / 'deps')!r}, {str(base / 'plugin' / 'lib')!r}]; "
               "from agentctx.surfaces.cli import main; sys.argv[0] = 'agentctx'; main()")
        for args in (["search", "kafka topic", "--json"], ["status", "--json"]):
            proc = subprocess.run(_as_nobody(_python(), "-c", cli, "--project", str(base / "widgets"), *args),
                                  capture_output=True, env=env, timeout=60, text=True)
            assert proc.returncode == 0, proc.stderr
            data = json.loads(proc.stdout)
            assert data if args[0] == "search" else data["records"]["decision"]["active"] == 3
        check = sqlite3.connect(base / "data" / "agentctx.db")
        assert check.execute("SELECT COUNT(*) FROM projects").fetchone()[0] == 1  # nothing new was written
        check.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _python() -> str:
    return "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable


def _as_nobody(*argv: str) -> list[str]:
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]


def _unprivileged_copy(home: Path, repo: Path) -> tuple[Path, dict]:
    """The store, the project and the plugin copied where user 65534 can read but not write them."""
    base = Path(tempfile.mkdtemp(prefix="agentctx-ro-", dir="/tmp"))
    shutil.copytree(home, base / "data")
    shutil.copytree(repo, base / "widgets")
    for part in ("hooks", "lib"):
        shutil.copytree(ROOT / part, base / "plugin" / part, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [base, *base.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    env = {"PATH": "/usr/bin:/bin", "AGENTCTX_HOME": str(base / "data"), "HOME": "/tmp", "TMPDIR": "/tmp"}
    return base, env


# -- errors that name their cause


def test_a_failed_write_reports_its_own_error_not_a_rollback_error(conn, proj):
    conn.execute("PRAGMA max_page_count = 40")  # the file cannot grow: SQLITE_FULL, as on a full disk
    with pytest.raises(sqlite3.OperationalError) as caught:
        for i in range(200):
            records.add(conn, proj.id, type="decision", title=f"Decision {i}", body="x" * 2000)
    assert "full" in str(caught.value) and "rollback" not in str(caught.value)
    assert "is full" in db.describe(caught.value) and "nothing was written" in db.describe(caught.value)
    assert not conn.in_transaction


def _mount_small_disk(target: Path, kib: int) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(target)],
                          capture_output=True).returncode == 0


def test_import_on_a_full_disk_names_the_cause(tmp_path: Path, repo: Path):
    disk = tmp_path / "disk"
    if not _mount_small_disk(disk, 600):
        pytest.skip("needs root and mount to create a small tmpfs disk")
    try:
        home = disk / "data"
        assert agentctx(home, "--project", str(repo), "status").returncode == 0
        lines = [json.dumps({"id": ids.new_id(), "type": "decision", "title": f"Decision {i}",
                             "body": os.urandom(300).hex()}) for i in range(3000)]
        source = tmp_path / "big.jsonl"
        source.write_text("\n".join(lines))
        r = agentctx(home, "--project", str(repo), "import", str(source))
        assert r.returncode == 1
        error = r.stderr.strip().splitlines()[-1]
        assert error.startswith("Error: ") and "is full" in error and "rollback" not in error, error
        check = sqlite3.connect(home / "agentctx.db")
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        check.close()
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_a_write_gets_its_turn_among_busy_writers(home: Path):
    """Another process holds the write lock 95 ms of every 100 (back-to-back writes: parallel hooks, extraction,
    consolidation). SQLite's own busy handler sleeps up to 100 ms between tries and mostly misses the 5 ms
    windows, so a hook's write was lost as "database is locked"; ``db.transaction`` then polls every 2 ms."""
    import time

    db.connect().close()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(home / 'agentctx.db')!r}, isolation_level=None, timeout=10)\n"
        "print('ready', flush=True)\n"
        "end = time.monotonic() + 30\n"
        "while time.monotonic() < end:\n"
        "    c.execute('BEGIN IMMEDIATE'); time.sleep(0.095); c.execute('COMMIT'); time.sleep(0.005)\n")],
        stdout=subprocess.PIPE)
    assert holder.stdout.readline().strip() == b"ready"
    conn = db.connect(busy_ms=300)
    failures = 0
    try:
        for _ in range(10):
            try:
                with db.transaction(conn):
                    conn.execute("UPDATE meta SET value = value WHERE key = 'generation'")
            except sqlite3.OperationalError:
                failures += 1
            time.sleep(0.013)
    finally:
        holder.kill()
        holder.wait()
        conn.close()
    assert failures == 0
