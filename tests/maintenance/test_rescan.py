"""``agentctx redact --rescan``: what an older agentctx stored unredacted is scrubbed everywhere, and counted."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from agentctx import clock, ids, project
from agentctx.store import db, projects
from tests.support.cli import agentctx
from tests.support.secrets_corpus import secret_samples

BY_KIND = {s.kind: s for s in secret_samples()}
GLPAT = BY_KIND["gitlab_pat"].secret
NPM = BY_KIND["npm"].secret
SENDGRID = BY_KIND["sendgrid"].secret
MYSQL = BY_KIND["mysql_password"]
HF = BY_KIND["huggingface"].secret
NEEDLES = [GLPAT, NPM, SENDGRID, MYSQL.secret, HF]


def _plant(home: Path, repo: Path, tmp: Path) -> dict[str, Path]:
    """Write secrets the way an agentctx with weaker rules would have: raw, everywhere it writes."""
    proj = project.detect(str(repo))
    conn = db.connect()
    now = clock.now()
    with db.transaction(conn):
        projects.register(conn, proj)
        conn.execute(
            "INSERT INTO records (id, project_id, type, title, body, valid_from, recorded_at, source) "
            "VALUES (?, ?, 'convention', ?, ?, ?, ?, 'cli')",
            (ids.new_id(), proj.id, f"Mirror job uses {GLPAT}", f"npm publish with {NPM}; run {MYSQL.text}", now, now))
        conn.execute(
            "INSERT INTO records (id, project_id, type, title, body, valid_from, recorded_at, source) "
            "VALUES (?, ?, 'decision', 'Email goes through SendGrid', 'plain text, nothing secret', ?, ?, 'cli')",
            (ids.new_id(), proj.id, now, now))
        columns = [r[1] for r in conn.execute("PRAGMA table_info(records_archive)")]
        row = {"id": ids.new_id(), "project_id": proj.id, "type": "discovery", "title": f"old key {SENDGRID}",
               "body": "", "valid_from": now, "recorded_at": now, "source": "cli", "superseded_at": now}
        row = {k: v for k, v in row.items() if k in columns}
        conn.execute(f"INSERT INTO records_archive ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                     tuple(row.values()))
        conn.execute("INSERT INTO sessions (session_id, project_id, started_at, meta) VALUES ('s1', ?, ?, ?)",
                     (proj.id, now, json.dumps({"commits": [{"sha": "abc1234", "message": f"token {HF}"}]})))
        conn.execute("INSERT INTO anchors (session_id, project_id, intent, changes, decisions, next_steps, version, "
                     "updated_at) VALUES ('s1', ?, ?, '[]', '[]', '[]', 1, ?)",
                     (proj.id, json.dumps([{"key": "prompt", "text": f"deploy with {NPM}"}]), now))
        conn.execute("INSERT INTO nodes (id, project_id, kind, name, created_at) VALUES (?, ?, 'file', ?, ?)",
                     (ids.new_id(), proj.id, f"scripts/{GLPAT}.sh", now))
    conn.close()
    files = {
        "digest": home / "digests" / f"{proj.id}.json",
        "anchor_backup": home / "anchors" / proj.id / "s1.md",
        "team_copy": home / "teamsync" / f"{proj.id}.md",
        "log": home / "logs" / "agentctx.log",
        "fallback_log": tmp / "agentctx-hooks.log",
        "team_file": repo / ".agentctx" / "context.md",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["digest"].write_text(json.dumps({"text": f"- Mirror job uses {GLPAT}", "tokens": 9, "record_ids": [],
                                           "generation": 3}))
    files["anchor_backup"].write_text(f"# Anchor\n\n- deploy with {NPM}\n")
    files["team_copy"].write_text(f"### Mirror job uses {GLPAT}\n")
    files["log"].write_text(f"2026-01-01T00:00:00Z Extract result: ran {MYSQL.text}\nplain line\n")
    files["fallback_log"].write_text(f"2026-01-01T00:00:00Z SessionStart error near {HF}\n")
    files["team_file"].write_text(f"# Team context (agentctx)\n\n<!-- agentctx:begin X -->\n### Mirror job uses "
                                  f"{GLPAT}\n<!-- agentctx:end X -->\n")
    files["team_file"].chmod(0o644)
    return files


def _blobs(home: Path, files: dict[str, Path]) -> dict[str, bytes]:
    found = {str(p): p.read_bytes() for p in home.rglob("*") if p.is_file()}
    found.update({str(p): p.read_bytes() for p in files.values()})
    return found


def test_rescan_scrubs_every_place_and_counts(home: Path, repo: Path, tmp_path: Path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    files = _plant(home, repo, tmp)
    assert any(GLPAT.encode() in raw for raw in _blobs(home, files).values())

    dry = agentctx(home, "redact", "--rescan", "--dry-run", "--json", TMPDIR=str(tmp))
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert planned["dry_run"] and planned["secrets"] >= 12
    assert any(GLPAT.encode() in raw for raw in _blobs(home, files).values())  # a dry run writes nothing

    done = agentctx(home, "redact", "--rescan", "--json", TMPDIR=str(tmp))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["secrets"] == planned["secrets"]
    store = report["store"]
    assert store["records"] == {"rows": 1, "secrets": 3}  # glpat in the title, npm and mysql in the body
    assert store["records_archive"]["rows"] == store["sessions"]["rows"] == store["anchors"]["rows"] == 1
    assert store["nodes"]["rows"] == 1
    assert report["compacted"] == {"fts_rebuilt": True, "vacuumed": True, "wal_truncated": True}
    for kind in ("digests", "anchor_backups", "team_sync_copies", "logs", "team_files"):
        assert report["files"][kind]["changed"] >= 1, kind
    assert report["files"]["logs"]["changed"] == 2  # the data dir's log and the temp-dir fallback

    for path, raw in _blobs(home, files).items():
        for needle in NEEDLES:
            assert needle.encode() not in raw, (needle[:12], path)
    assert "[REDACTED:gitlab_token]" in files["team_file"].read_text()
    assert files["team_file"].stat().st_mode & 0o777 == 0o644  # a committed file keeps its mode
    assert files["log"].stat().st_mode & 0o077 == 0
    assert "plain line" in files["log"].read_text()

    conn = sqlite3.connect(home / "agentctx.db")
    fts = conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH 'sendgrid'").fetchone()[0]
    gone = conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH ?", (f'"{GLPAT[6:]}"',)).fetchone()[0]
    meta = json.loads(conn.execute("SELECT meta FROM sessions").fetchone()[0])
    conn.close()
    assert fts == 1 and gone == 0 and "[REDACTED:huggingface_token]" in meta["commits"][0]["message"]

    again = agentctx(home, "redact", "--rescan", "--json", TMPDIR=str(tmp))
    assert json.loads(again.stdout)["secrets"] == 0  # idempotent


def test_redact_filter_and_plain_report(home: Path, repo: Path, tmp_path: Path):
    out = agentctx(home, "redact", input=f"use {GLPAT} now\n")
    assert out.returncode == 0 and out.stdout == "use [REDACTED:gitlab_token] now\n"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    _plant(home, repo, tmp)
    text = agentctx(home, "redact", "--rescan", TMPDIR=str(tmp))
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("replaced ") and "store records: 3 in 1 row(s)" in text.stdout
    assert "team files: 1 in 1 of 1 file(s)" in text.stdout
