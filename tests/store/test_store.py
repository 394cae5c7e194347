"""The store: schema and migrations, record operations, supersession, bi-temporal history, sessions."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentctx import clock, paths, project
from agentctx.store import db, migrations, records, sessions
from agentctx.store.records import RecordError

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "lib"


def _gen(conn: sqlite3.Connection) -> int:
    return db.generation(conn)


def _count(conn: sqlite3.Connection, table: str = "records") -> int:
    return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def _snapshot(conn: sqlite3.Connection) -> list[tuple]:
    """Every stored column of every record, plus edges and the generation."""
    recs = [tuple(r) for r in conn.execute("SELECT * FROM records ORDER BY seq")]
    edges = [tuple(r) for r in conn.execute("SELECT from_id, to_id, rel_type FROM edges ORDER BY from_id")]
    return [*recs, ("edges", *edges), ("generation", _gen(conn))]


# ---------------------------------------------------------------- schema and migrations


def test_migrations_applied_in_order_and_recorded(conn: sqlite3.Connection) -> None:
    names = [fn.__name__ for fn in migrations.MIGRATIONS]
    assert names, "at least one migration is registered"
    assert names == sorted(names), "migration names sort in application order"
    assert migrations.LATEST == len(names)
    rows = conn.execute("SELECT migration_set, name, applied_at FROM _sqlite_migrations ORDER BY id").fetchall()
    assert [r["name"] for r in rows] == names and {r["migration_set"] for r in rows} == {migrations.SET_NAME}
    for r in rows:
        assert r["applied_at"].startswith(("2025", "2026", "2027", "2028", "2029", "203"))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations.LATEST


def test_schema_has_the_data_model_tables(conn: sqlite3.Connection) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    for name in ("records", "records_fts", "nodes", "edges", "record_entities", "sessions", "injections", "meta",
                 "projects", "_sqlite_migrations"):
        assert name in tables, name
    cols = {r["name"] for r in conn.execute("PRAGMA table_info(records)")}
    for col in ("id", "project_id", "type", "title", "body", "scope", "pinned", "confidence", "reinforce_count",
                "valid_from", "valid_to", "recorded_at", "superseded_at", "superseded_by", "access_count",
                "last_accessed", "score", "source", "session_id", "pending_embedding"):
        assert col in cols, col
    assert "claudemd_drift_score" not in cols  # never written: dropped by m006
    assert "tokens" not in {r["name"] for r in conn.execute("PRAGMA table_info(injections)")}  # always 0: dropped
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"records_fts_ai", "records_fts_ad", "records_fts_au"} <= triggers


def test_wal_mode_and_busy_timeout(conn: sqlite3.Connection) -> None:
    assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    other = db.connect(busy_ms=1234)
    try:
        assert other.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
        assert other.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    finally:
        other.close()


def test_store_lives_in_agentctx_home(home: Path, conn: sqlite3.Connection) -> None:
    assert paths.db_path() == str(home / "agentctx.db")
    assert (home / "agentctx.db").is_file()


def test_reconnect_is_a_no_op(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = db.connect()
    before = [tuple(r) for r in first.execute("SELECT name, applied_at FROM _sqlite_migrations")]
    gen = _gen(first)
    first.close()

    calls: list[object] = []
    original = migrations.apply
    monkeypatch.setattr(migrations, "apply", lambda c: calls.append(c) or original(c))
    again = db.connect()
    try:
        assert calls == [], "a current store must not run migrations again"
        assert [tuple(r) for r in again.execute("SELECT name, applied_at FROM _sqlite_migrations")] == before
        assert _gen(again) == gen
        assert migrations.apply(again) == []  # and applying explicitly finds nothing to do
    finally:
        again.close()


def test_newer_schema_is_refused_and_untouched(home: Path, proj: project.Project) -> None:
    conn = db.connect()
    records.add(conn, proj.id, type="decision", title="Keep me exactly as I am")
    conn.execute(f"PRAGMA user_version = {migrations.LATEST + 1}")
    conn.close()
    path = Path(paths.db_path())
    digest_before = hashlib.sha256(path.read_bytes()).hexdigest()

    with pytest.raises(db.NewerSchemaError) as info:
        db.connect()
    assert str(migrations.LATEST + 1) in str(info.value) and "newer" in str(info.value)
    with pytest.raises(db.StoreError):
        db.connect(migrate=False)

    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest_before
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == migrations.LATEST + 1
        assert raw.execute("SELECT title FROM records").fetchall() == [("Keep me exactly as I am",)]
    finally:
        raw.close()


def test_migrate_false_on_an_old_store_raises_store_error(tmp_path: Path) -> None:
    with pytest.raises(db.StoreError) as info:
        db.connect(str(tmp_path / "fresh.db"), migrate=False)
    assert "needs migrating" in str(info.value)


def test_failed_migration_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(database) -> None:
        database.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    broken.__name__ = "m999_broken"
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, broken])
    monkeypatch.setattr(migrations, "LATEST", len(migrations.MIGRATIONS) + 1)
    path = str(tmp_path / "s.db")
    with pytest.raises(RuntimeError, match="boom"):
        db.connect(path)
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 0
        names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
        assert "half_done" not in names and "records" not in names and "_sqlite_migrations" not in names
    finally:
        raw.close()


_RACER = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from agentctx.store import db, migrations
applied = []
original = migrations.apply
def recording(conn):
    done = original(conn)
    applied.extend(done)
    return done
migrations.apply = recording
go = sys.argv[3]
while not os.path.exists(go):
    time.sleep(0.001)
conn = db.connect(sys.argv[2])
conn.execute("SELECT COUNT(*) FROM records").fetchone()
conn.close()
print(json.dumps(applied))
"""


def test_concurrent_first_connects_in_processes(tmp_path: Path) -> None:
    path = tmp_path / "race" / "agentctx.db"
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", _RACER, str(LIB), str(path), str(go)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    go.write_text("go")
    applied: list[str] = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        applied += json.loads(out.strip().splitlines()[-1])
    names = [fn.__name__ for fn in migrations.MIGRATIONS]
    assert applied == names, "every migration ran exactly once across all processes"
    conn = db.connect(str(path))
    try:
        assert [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")] == names
        assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations.LATEST
        assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    finally:
        conn.close()


def test_concurrent_first_connects_in_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "threads.db")
    applied: list[str] = []
    original = migrations.apply
    monkeypatch.setattr(migrations, "apply", lambda c: applied.extend(original(c)) or [])
    barrier = threading.Barrier(6)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            barrier.wait()
            c = db.connect(path)
            c.execute("SELECT COUNT(*) FROM records").fetchone()
            c.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert applied == [fn.__name__ for fn in migrations.MIGRATIONS]


def test_first_connect_waits_for_a_writer_instead_of_failing(tmp_path: Path) -> None:
    """Switching a new store to WAL while another connection holds the write lock gets SQLITE_BUSY
    at once (SQLite's deadlock avoidance skips the busy handler): connect must retry, not fail."""
    path = str(tmp_path / "busy.db")
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE other_tool (x)")
    released = threading.Event()

    def release() -> None:
        threading.Event().wait(0.3)
        writer.execute("COMMIT")
        released.set()

    t = threading.Thread(target=release)
    t.start()
    try:
        conn = db.connect(path, busy_ms=10_000)
    finally:
        t.join()
        writer.close()
    try:
        assert released.is_set()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations.LATEST
    finally:
        conn.close()


# ---------------------------------------------------------------- record, resolve, validation


def test_add_returns_the_stored_record(conn: sqlite3.Connection, proj: project.Project,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-05-04T10:00:00Z")
    rec = records.add(conn, proj.id, type="decision", title="  Use   PostgreSQL 16  ",
                      body="  Because of JSONB.  ", session_id="s-1")
    assert rec["title"] == "Use PostgreSQL 16"
    assert rec["body"] == "Because of JSONB."
    assert rec["project_id"] == proj.id
    assert rec["type"] == "decision" and rec["scope"] == "project" and rec["confidence"] == "explicit"
    assert rec["pinned"] == 0 and rec["reinforce_count"] == 0 and rec["access_count"] == 0
    assert rec["recorded_at"] == rec["valid_from"] == "2026-05-04T10:00:00.000000Z"
    assert rec["superseded_at"] is None and rec["superseded_by"] is None and rec["valid_to"] is None
    assert rec["source"] == "cli" and rec["session_id"] == "s-1"
    assert len(rec["id"]) == 26
    assert records.resolve(conn, rec["id"], all_projects=True) == rec


def test_resolve_by_full_id_and_unique_prefix(conn: sqlite3.Connection, proj: project.Project) -> None:
    a = records.add(conn, proj.id, type="decision", title="A", record_id="01JAAAAAAAAAAAAAAAAAAAAAA1")
    b = records.add(conn, proj.id, type="decision", title="B", record_id="01JAAAAAAAAAAAAAAAAAAAAAB2")
    records.add(conn, proj.id, type="decision", title="C", record_id="01JCCCCCCCCCCCCCCCCCCCCCC3")
    assert records.resolve(conn, a["id"], all_projects=True)["title"] == "A"
    assert records.resolve(conn, a["id"].lower(), all_projects=True)["title"] == "A"  # case-insensitive
    assert records.resolve(conn, "01JAAAAAAAAAAAAAAAAAAAAAB", all_projects=True)["id"] == b["id"]
    assert records.resolve(conn, "01JCCC", all_projects=True)["title"] == "C"
    assert records.resolve(conn, " 01jccc ", all_projects=True)["title"] == "C"
    assert [records.resolve(conn, ref, all_projects=True)["title"] for ref in ["01JCCC", a["id"]]] == ["C", "A"]


def test_resolve_ambiguous_prefix(conn: sqlite3.Connection, proj: project.Project) -> None:
    records.add(conn, proj.id, type="decision", title="A", record_id="01JAAAAAAAAAAAAAAAAAAAAAA1")
    records.add(conn, proj.id, type="decision", title="B", record_id="01JAAAAAAAAAAAAAAAAAAAAAB2")
    with pytest.raises(RecordError) as info:
        records.resolve(conn, "01JAAA", all_projects=True)
    assert str(info.value) == "01JAAA matches several records; give more of the id"


@pytest.mark.parametrize(("ref", "message"), [
    ("01JZZZZZZZZZZZZZZZZZZZZZZZ", "no record 01JZZZZZZZZZZZZZZZZZZZZZZZ"),
    ("01JZZZ", "no record 01JZZZ"),
    ("hello!", "HELLO! is not a record id"),
    ("01J", "01J is not a record id"),
    ("", "(empty) is not a record id"),
])
def test_resolve_unknown_or_malformed_id(conn: sqlite3.Connection, proj: project.Project, ref: str,
                                         message: str) -> None:
    records.add(conn, proj.id, type="decision", title="A", record_id="01JAAAAAAAAAAAAAAAAAAAAAA1")
    with pytest.raises(RecordError) as info:
        records.resolve(conn, ref, all_projects=True)
    assert str(info.value) == message


def test_resolve_with_project_filter(conn: sqlite3.Connection, proj: project.Project) -> None:
    """Records of other projects are invisible through a project filter (global ones are not)."""
    other = "0ther0project000"
    records.add(conn, other, type="decision", title="other 1", record_id="01JBBBBBBBBBBBBBBBBBBBBBB1")
    records.add(conn, other, type="decision", title="other 2", record_id="01JBBBBBBBBBBBBBBBBBBBBBB2")
    mine = records.add(conn, proj.id, type="decision", title="mine", record_id="01JBBBBBBBBBBBBBBBBBBBBBB3")
    glob = records.add(conn, other, type="preference", title="global pref", scope="global",
                       record_id="01JGGGGGGGGGGGGGGGGGGGGGG1")
    assert records.resolve(conn, "01JBBB", project_id=proj.id)["id"] == mine["id"]
    assert records.resolve(conn, "01JGGG", project_id=proj.id)["id"] == glob["id"]
    with pytest.raises(RecordError, match="no record"):
        records.resolve(conn, "01JBBBBBBBBBBBBBBBBBBBBBB1", project_id=proj.id)
    with pytest.raises(RecordError, match="several"):
        records.resolve(conn, "01JBBB", all_projects=True)


@pytest.mark.parametrize(("fields", "fragment"), [
    ({"type": "opinion"}, "unknown type 'opinion'"),
    ({"scope": "team"}, "unknown scope 'team'"),
    ({"confidence": "certain"}, "unknown confidence 'certain'"),
    ({"source": "telepathy"}, "unknown source 'telepathy'"),
    ({"title": ""}, "non-empty title"),
    ({"title": "   \n\t "}, "non-empty title"),
    ({"title": "x" * 301}, "title is 301 characters; the limit is 300"),
    ({"body": "b" * 1_000_000}, "body is 1,000,000 characters; the limit is 32,000"),
    ({"title": "nul\x00byte"}, "NUL"),
    ({"body": "nul\x00byte"}, "NUL"),
    ({"key": "   "}, "key must be non-empty"),
    ({"key": "k" * 201}, "at most 200"),
    ({"title": "<private>only secret</private>"}, "empty once private spans are removed"),
])
def test_validation_errors_store_nothing(conn: sqlite3.Connection, proj: project.Project, fields: dict,
                                         fragment: str) -> None:
    args = {"type": "decision", "title": "A fine title", "body": ""} | fields
    gen = _gen(conn)
    with pytest.raises(RecordError) as info:
        records.add(conn, proj.id, **args)
    assert fragment in str(info.value)
    assert _count(conn) == 0
    assert _gen(conn) == gen


def test_limits_are_inclusive(conn: sqlite3.Connection, proj: project.Project) -> None:
    rec = records.add(conn, proj.id, type="discovery", title="t" * 300, body="b" * 32_000, key="k" * 200)
    assert len(rec["title"]) == 300 and len(rec["body"]) == 32_000


# ---------------------------------------------------------------- redaction before storage

SECRETS = {
    "anthropic": "sk-ant-api03-Zq8vN3xK7pL2mR9tW4yB6cD1fG5hJ0kQ",
    "github": "ghp_R7tY2uI9oP4aS6dF8gH1jK3lZ5xC0vB2nM4q",
    "password": "hunter2secret",
    "pem": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7PrivKeyMaterial",
    "private": "zyxwvuqqspanmarker9",
}


def _db_bytes(path: str) -> bytes:
    data = b""
    for suffix in ("", "-wal"):
        if os.path.exists(path + suffix):
            data += Path(path + suffix).read_bytes()
    return data


def _fts_terms(conn: sqlite3.Connection) -> set[str]:
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, records_fts, 'row')")
    return {r[0] for r in conn.execute("SELECT term FROM temp.vocab")}


def test_secrets_never_reach_the_database_file(home: Path, proj: project.Project) -> None:
    conn = db.connect()
    body = (
        f"Call the API with {SECRETS['anthropic']} and push with {SECRETS['github']}.\n"
        f"password={SECRETS['password']}\n"
        "-----BEGIN RSA PRIVATE KEY-----\n"
        f"{SECRETS['pem']}\n"
        "-----END RSA PRIVATE KEY-----\n"
        f"Visible part <private>{SECRETS['private']} and more</private> stays."
    )
    rec = records.add(conn, proj.id, type="discovery", title=f"Deploy token {SECRETS['github']}", body=body)
    edited = records.edit(conn, rec["id"], body=body + f"\nedited with {SECRETS['anthropic']}", all_projects=True)
    second = records.add(conn, proj.id, type="bugfix", title="second", body=f"PASSWORD: {SECRETS['password']}")

    for r in (records.resolve(conn, rec["id"], all_projects=True), edited, second):
        for secret in SECRETS.values():
            assert secret not in r["title"] and secret not in r["body"]
    assert "[REDACTED:anthropic_key]" in edited["body"]
    assert "[REDACTED:github_token]" in edited["title"]
    assert "[REDACTED:private_key]" in edited["body"]
    assert "password=[REDACTED:credential]" in edited["body"]
    assert "Visible part  stays." in edited["body"]

    terms = _fts_terms(conn)
    assert {"call", "deploi", "push"} <= terms  # the index is populated (porter-stemmed)...
    for term in terms:  # ...but with no piece of any secret
        if len(term) >= 6:
            assert not any(term in secret.lower() for secret in SECRETS.values()), term

    raw = _db_bytes(paths.db_path())
    assert b"Visible part" in raw
    for secret in SECRETS.values():
        assert secret.encode() not in raw, secret
        assert secret.lower().encode() not in raw, secret
    conn.close()
    raw = _db_bytes(paths.db_path())  # after the WAL checkpoint on close
    for secret in SECRETS.values():
        assert secret.encode() not in raw and secret.lower().encode() not in raw, secret


# ---------------------------------------------------------------- edit and pin


def test_edit_in_place_keeps_fts_in_sync(conn: sqlite3.Connection, proj: project.Project) -> None:
    rec = records.add(conn, proj.id, type="convention", title="Tabs for indentation", body="Use tabs in makefiles")

    def match(word: str) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT r.id FROM records_fts JOIN records r ON r.seq = records_fts.rowid WHERE records_fts MATCH ?",
            (word,))]

    assert match("tabs") == [rec["id"]]
    gen = _gen(conn)
    out = records.edit(conn, rec["id"], title="Spaces for indentation", body="Four spaces in python files", all_projects=True)
    assert out["id"] == rec["id"]
    assert out["title"] == "Spaces for indentation" and out["body"] == "Four spaces in python files"
    assert out["updated_at"] is not None
    assert _count(conn) == 1, "edit changes the row in place"
    assert match("tabs") == [] and match("makefiles") == []
    assert match("spaces") == [rec["id"]] and match("python") == [rec["id"]]
    assert _gen(conn) == gen + 1

    only_title = records.edit(conn, rec["id"], title="Four spaces for indentation", all_projects=True)
    assert only_title["body"] == "Four spaces in python files"
    typed = records.edit(conn, rec["id"], type="preference", scope="global", confidence="inferred", all_projects=True)
    assert (typed["type"], typed["scope"], typed["confidence"]) == ("preference", "global", "inferred")
    with pytest.raises(RecordError, match="unknown type"):
        records.edit(conn, rec["id"], type="nonsense", all_projects=True)
    with pytest.raises(RecordError, match="non-empty title"):
        records.edit(conn, rec["id"], title="  ", all_projects=True)
    assert records.resolve(conn, rec["id"], all_projects=True)["title"] == "Four spaces for indentation"


def test_editing_a_superseded_record_is_refused(conn: sqlite3.Connection, proj: project.Project) -> None:
    old = records.add(conn, proj.id, type="decision", title="REST between services")
    new = records.supersede(conn, proj.id, old["id"], title="gRPC between services", body="")
    before = _snapshot(conn)
    with pytest.raises(RecordError) as info:
        records.edit(conn, old["id"], title="changed history", all_projects=True)
    assert str(info.value) == f"record {old['id']} is superseded by {new['id']}; edit that one"
    assert _snapshot(conn) == before


def test_pin_and_unpin(conn: sqlite3.Connection, proj: project.Project) -> None:
    rec = records.add(conn, proj.id, type="decision", title="Money is integer cents")
    gen = _gen(conn)
    assert records.pin(conn, rec["id"], all_projects=True)["pinned"] == 1
    assert _gen(conn) == gen + 1
    assert records.active(conn, proj.id)[0]["id"] == rec["id"]
    assert records.pin(conn, rec["id"][:12], on=False, all_projects=True)["pinned"] == 0
    new = records.supersede(conn, proj.id, rec["id"], body="and currency codes")
    with pytest.raises(RecordError, match=f"pin its successor {new['id']}"):
        records.pin(conn, rec["id"], all_projects=True)
    assert records.pin(conn, rec["id"], on=False, all_projects=True)["pinned"] == 0  # unpinning history is harmless


def test_pinned_records_come_first_in_active(conn: sqlite3.Connection, proj: project.Project,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-01T00:00:00Z")
    old = records.add(conn, proj.id, type="decision", title="old one")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-02-01T00:00:00Z")
    new = records.add(conn, proj.id, type="decision", title="new one")
    assert [r["id"] for r in records.active(conn, proj.id)] == [new["id"], old["id"]]
    records.pin(conn, old["id"], all_projects=True)
    assert [r["id"] for r in records.active(conn, proj.id)] == [old["id"], new["id"]]


# ---------------------------------------------------------------- supersession


def test_supersede_explicit(conn: sqlite3.Connection, proj: project.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-10T09:00:00Z")
    old = records.add(conn, proj.id, type="decision", title="Services talk REST", body="JSON bodies",
                      valid_from="2026-01-01T00:00:00.000000Z", key=None, pinned=True)
    monkeypatch.setenv("AGENTCTX_NOW", "2026-03-05T12:00:00Z")
    gen = _gen(conn)
    new = records.supersede(conn, proj.id, old["id"], title="Services talk gRPC", body="protobuf in /proto",
                            rationale="latency", valid_from="2026-03-01T00:00:00.000000Z")
    assert _gen(conn) > gen
    assert new["type"] == "decision" and new["pinned"] == 1 and new["confidence"] == "explicit"
    assert new["body"] == "protobuf in /proto\n\nWhy it changed: latency"
    assert new["valid_from"] == "2026-03-01T00:00:00.000000Z"
    assert new["recorded_at"] == "2026-03-05T12:00:00.000000Z"
    assert new["superseded_at"] is None

    retired = records.resolve(conn, old["id"], all_projects=True)
    assert retired["superseded_at"] == "2026-03-05T12:00:00.000000Z"
    assert retired["superseded_by"] == new["id"]
    assert retired["valid_to"] == new["valid_from"]
    assert retired["title"] == "Services talk REST" and retired["body"] == "JSON bodies"  # nothing rewritten

    edge = conn.execute("SELECT from_id, to_id, rel_type FROM edges").fetchall()
    assert [tuple(e) for e in edge] == [(new["id"], old["id"], "supersedes")]

    before, after = records.lineage(conn, new["id"], all_projects=True)
    assert [r["id"] for r in before] == [old["id"]] and after == []
    before, after = records.lineage(conn, old["id"], all_projects=True)
    assert before == [] and [r["id"] for r in after] == [new["id"]]
    assert [r["id"] for r in records.active(conn, proj.id)] == [new["id"]]


def test_lineage_of_a_chain(conn: sqlite3.Connection, proj: project.Project) -> None:
    a = records.add(conn, proj.id, type="decision", title="v1")
    b = records.supersede(conn, proj.id, a["id"], title="v2", body="")
    c = records.supersede(conn, proj.id, b["id"], title="v3", body="")
    before, after = records.lineage(conn, c["id"], all_projects=True)
    assert [r["title"] for r in before] == ["v2", "v1"] and after == []
    before, after = records.lineage(conn, a["id"], all_projects=True)
    assert before == [] and [r["title"] for r in after] == ["v2", "v3"]
    before, after = records.lineage(conn, b["id"], all_projects=True)
    assert [r["title"] for r in before] == ["v1"] and [r["title"] for r in after] == ["v3"]


def test_supersede_via_add_supersedes(conn: sqlite3.Connection, proj: project.Project) -> None:
    old = records.add(conn, proj.id, type="convention", title="Black formatting")
    new = records.add(conn, proj.id, type="convention", title="Ruff formatting", supersedes=old["id"][:10])
    assert records.resolve(conn, old["id"], all_projects=True)["superseded_by"] == new["id"]


def test_superseding_twice_or_missing_fails_and_changes_nothing(conn: sqlite3.Connection,
                                                                 proj: project.Project) -> None:
    old = records.add(conn, proj.id, type="decision", title="v1")
    new = records.supersede(conn, proj.id, old["id"], body="v2 body")
    before = _snapshot(conn)
    with pytest.raises(RecordError) as info:
        records.supersede(conn, proj.id, old["id"], body="v3 body")
    assert str(info.value) == f"record {old['id']} is already superseded (by {new['id']}); supersede that one"
    assert _snapshot(conn) == before
    with pytest.raises(RecordError, match="already superseded"):
        records.add(conn, proj.id, type="decision", title="v3", supersedes=old["id"])
    assert _snapshot(conn) == before
    with pytest.raises(RecordError, match="no record 01JZZZZZZZZZZZZZZZZZZZZZZZ"):
        records.supersede(conn, proj.id, "01JZZZZZZZZZZZZZZZZZZZZZZZ", body="x")
    with pytest.raises(RecordError, match="no record"):
        records.add(conn, proj.id, type="decision", title="v3", supersedes="01JZZZZZZZZZZZZZZZZZZZZZZZ")
    assert _snapshot(conn) == before


def test_superseding_another_projects_record_is_refused(conn: sqlite3.Connection, proj: project.Project) -> None:
    theirs = records.add(conn, "someoneelse00000", type="decision", title="theirs")
    before = _snapshot(conn)
    with pytest.raises(RecordError, match=f"no record {theirs['id']}"):  # another project's id is not found
        records.add(conn, proj.id, type="decision", title="mine", supersedes=theirs["id"])
    assert _snapshot(conn) == before


def test_supersede_by_key(conn: sqlite3.Connection, proj: project.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-04-01T00:00:00Z")
    first = records.add(conn, proj.id, type="profile", title="Test command", body="pytest -q",
                        key="profile.test_command")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-04-02T00:00:00Z")
    second = records.add(conn, proj.id, type="profile", title="Test command", body="uv run pytest -q",
                         key="profile.test_command")
    assert second["id"] != first["id"]
    old = records.resolve(conn, first["id"], all_projects=True)
    assert old["superseded_by"] == second["id"]
    assert old["superseded_at"] == "2026-04-02T00:00:00.000000Z"
    assert old["valid_to"] == second["valid_from"] == "2026-04-02T00:00:00.000000Z"
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE from_id = ? AND to_id = ? AND rel_type = 'supersedes'",
                        (second["id"], first["id"])).fetchone()[0] == 1
    active = records.active(conn, proj.id, ["profile"])
    assert [r["id"] for r in active] == [second["id"]]

    # the same statement again only reinforces the active record
    gen = _gen(conn)
    n = _count(conn)
    again = records.add(conn, proj.id, type="profile", title="Test command", body="uv run pytest -q",
                        key="profile.test_command")
    assert again["id"] == second["id"]
    assert again["reinforce_count"] == 1
    assert _count(conn) == n
    records.add(conn, proj.id, type="profile", title=" Test   command ", body="uv run pytest -q  ",
                key="profile.test_command")
    assert records.resolve(conn, second["id"], all_projects=True)["reinforce_count"] == 2
    assert _count(conn) == n
    assert _gen(conn) == gen, "reinforcement changes nothing a digest shows"

    # keys are per project: another project's record with the same key is independent
    other = records.add(conn, "otherproject0000", type="profile", title="Test command", body="make test",
                        key="profile.test_command")
    assert records.resolve(conn, second["id"], all_projects=True)["superseded_at"] is None
    assert other["superseded_at"] is None


def test_partial_unique_index_allows_one_active_record_per_key(conn: sqlite3.Connection,
                                                               proj: project.Project) -> None:
    rec = records.add(conn, proj.id, type="profile", title="Lint", body="ruff", key="profile.lint")
    insert = (
        "INSERT INTO records (id, project_id, type, key, title, body, valid_from, recorded_at, source, superseded_at) "
        "VALUES (?, ?, 'profile', 'profile.lint', 'Lint', 'flake8', '2026-01-01', '2026-01-01', 'cli', ?)"
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("01JDUPDUPDUPDUPDUPDUPDUPD1", proj.id, None))
    # a superseded row with the same key is fine, and so is the same key in another project
    conn.execute(insert, ("01JDUPDUPDUPDUPDUPDUPDUPD2", proj.id, "2026-01-02"))
    conn.execute(insert, ("01JDUPDUPDUPDUPDUPDUPDUPD3", "otherproject0000", None))
    assert records.resolve(conn, rec["id"], all_projects=True)["superseded_at"] is None


# ---------------------------------------------------------------- history on both time axes


def test_history_valid_time(conn: sqlite3.Connection, proj: project.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-15T00:00:00Z")
    rest = records.add(conn, proj.id, type="decision", title="REST", valid_from=clock.parse("2026-01-12"))
    monkeypatch.setenv("AGENTCTX_NOW", "2026-03-02T00:00:00Z")
    grpc = records.supersede(conn, proj.id, rest["id"], title="gRPC", body="", valid_from=clock.parse("2026-03-01"))

    def titles(**kw) -> list[str]:
        return [r["title"] for r in records.history(conn, proj.id, **kw)]

    assert titles(at=clock.parse("2026-01-11", end_of_day=True)) == []
    assert titles(at=clock.parse("2026-01-12", end_of_day=True)) == ["REST"]
    assert titles(at=clock.parse("2026-02-15", end_of_day=True)) == ["REST"]
    assert titles(at=clock.parse("2026-02-28", end_of_day=True)) == ["REST"]
    assert titles(at=clock.parse("2026-03-01", end_of_day=True)) == ["gRPC"]
    assert titles() == ["gRPC"]
    assert grpc["superseded_at"] is None


def test_history_transaction_time(conn: sqlite3.Connection, proj: project.Project,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision recorded today, back-dated to March, is invisible as the store knew it yesterday."""
    monkeypatch.setenv("AGENTCTX_NOW", "2026-06-10T12:00:00Z")
    rec = records.add(conn, proj.id, type="decision", title="Adopt trunk-based development",
                      valid_from=clock.parse("2026-03-01"))
    march = clock.parse("2026-03-15", end_of_day=True)
    yesterday = clock.parse("2026-06-09", end_of_day=True)
    assert [r["id"] for r in records.history(conn, proj.id, at=march)] == [rec["id"]]
    assert records.history(conn, proj.id, at=march, known_at=yesterday) == []
    assert [r["id"] for r in records.history(conn, proj.id, at=march, known_at="2026-06-10T12:00:00.000000Z")] \
        == [rec["id"]]


def test_history_superseded_fact_on_both_axes(conn: sqlite3.Connection, proj: project.Project,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-12T10:00:00Z")
    v1 = records.add(conn, proj.id, type="decision", title="Deploy on Heroku")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-04-20T10:00:00Z")
    v2 = records.supersede(conn, proj.id, v1["id"], title="Deploy on Fly.io", body="",
                           valid_from=clock.parse("2026-04-01"))
    monkeypatch.setenv("AGENTCTX_NOW", "2026-07-01T00:00:00Z")

    def ids(at: str, known_at: str | None = None) -> list[str]:
        return [r["id"] for r in records.history(
            conn, proj.id, at=clock.parse(at, end_of_day=True),
            known_at=clock.parse(known_at, end_of_day=True) if known_at else None)]

    # inside its validity, the superseded fact is visible (as known now)
    assert ids("2026-02-01") == [v1["id"]]
    assert ids("2026-03-31") == [v1["id"]]
    assert ids("2026-04-01") == [v2["id"]]
    # April 10 as the store knew it on April 15: the switch was not recorded yet
    assert ids("2026-04-10", known_at="2026-04-15") == [v1["id"]]
    # ... and as known on April 20 (after the supersession was recorded)
    assert ids("2026-04-10", known_at="2026-04-20") == [v2["id"]]
    # before anything was recorded, nothing was known
    assert ids("2026-02-01", known_at="2026-01-11") == []


def test_history_filters_by_type_and_project(conn: sqlite3.Connection, proj: project.Project) -> None:
    records.add(conn, proj.id, type="decision", title="d")
    records.add(conn, proj.id, type="bugfix", title="b")
    records.add(conn, "otherproject0000", type="decision", title="other")
    records.add(conn, "otherproject0000", type="preference", title="global pref", scope="global")
    assert sorted(r["title"] for r in records.history(conn, proj.id)) == ["b", "d", "global pref"]
    assert [r["title"] for r in records.history(conn, proj.id, types=["bugfix"])] == ["b"]


# ---------------------------------------------------------------- generation counter


def test_generation_bumps_on_changes_not_on_access(conn: sqlite3.Connection, proj: project.Project) -> None:
    g0 = _gen(conn)
    rec = records.add(conn, proj.id, type="decision", title="first")
    g1 = _gen(conn)
    assert g1 == g0 + 1
    records.edit(conn, rec["id"], body="more detail", all_projects=True)
    g2 = _gen(conn)
    assert g2 == g1 + 1
    records.touch(conn, [rec["id"]], all_projects=True)
    with db.transaction(conn):
        sessions.account(conn, "sess", proj.id, "UserPromptSubmit", [rec["id"]], 120)
    assert _gen(conn) == g2, "access counters must not invalidate the cached digest"
    assert records.resolve(conn, rec["id"], all_projects=True)["access_count"] == 2
    records.supersede(conn, proj.id, rec["id"], body="changed")
    assert _gen(conn) == g2 + 2, "one for retiring the old record, one for the new one"
    records.pin(conn, records.active(conn, proj.id)[0]["id"], all_projects=True)
    assert _gen(conn) == g2 + 3


# ---------------------------------------------------------------- sessions


def test_sessions_start_account_end(conn: sqlite3.Connection, proj: project.Project,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_NOW", "2026-05-01T08:00:00Z")
    a = records.add(conn, proj.id, type="decision", title="a")
    b = records.add(conn, proj.id, type="decision", title="b")
    sessions.start(conn, "s1", proj.id, proj.root, "startup")
    sessions.account(conn, "s1", proj.id, "SessionStart", [a["id"]], 300)
    sessions.account(conn, "s1", proj.id, "UserPromptSubmit", [a["id"], b["id"]], 150)
    row = conn.execute("SELECT * FROM sessions WHERE session_id = 's1'").fetchone()
    assert row["tokens_injected"] == 450 and row["injections"] == 2
    assert row["project_id"] == proj.id and row["source"] == "startup" and row["ended_at"] is None
    assert sessions.injected_ids(conn, "s1") == {a["id"], b["id"]}
    assert records.resolve(conn, a["id"], all_projects=True)["access_count"] == 2
    assert records.resolve(conn, a["id"], all_projects=True)["last_accessed"] == "2026-05-01T08:00:00.000000Z"

    # another session's dedup state is separate
    sessions.account(conn, "s2", proj.id, "UserPromptSubmit", [b["id"]], 50)
    assert sessions.injected_ids(conn, "s2") == {b["id"]}

    monkeypatch.setenv("AGENTCTX_NOW", "2026-05-01T09:00:00Z")
    sessions.end(conn, "s1", "logout")
    row = conn.execute("SELECT * FROM sessions WHERE session_id = 's1'").fetchone()
    assert row["ended_at"] == "2026-05-01T09:00:00.000000Z" and row["end_reason"] == "logout"
    assert row["tokens_injected"] == 450
    assert sessions.injected_ids(conn, "s1") == set()
    assert sessions.injected_ids(conn, "s2") == {b["id"]}

    # resuming reopens the session and keeps accumulating
    sessions.start(conn, "s1", proj.id, proj.root, "resume")
    sessions.account(conn, "s1", proj.id, "SessionStart", [], 10)
    row = conn.execute("SELECT * FROM sessions WHERE session_id = 's1'").fetchone()
    assert row["ended_at"] is None and row["tokens_injected"] == 460 and row["source"] == "resume"


@pytest.mark.parametrize(("source", "kept"), [("compact", False), ("clear", False), ("resume", True),
                                              ("startup", True)])
def test_compact_and_clear_reset_dedup(conn: sqlite3.Connection, proj: project.Project, source: str,
                                       kept: bool) -> None:
    a = records.add(conn, proj.id, type="decision", title="a")
    sessions.start(conn, "s1", proj.id, proj.root, "startup")
    sessions.account(conn, "s1", proj.id, "UserPromptSubmit", [a["id"]], 40)
    sessions.start(conn, "s1", proj.id, proj.root, source)
    assert sessions.injected_ids(conn, "s1") == ({a["id"]} if kept else set())
    assert conn.execute("SELECT tokens_injected FROM sessions WHERE session_id = 's1'").fetchone()[0] == 40


def test_session_end_drops_stale_dedup_rows(conn: sqlite3.Connection, proj: project.Project,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    a = records.add(conn, proj.id, type="decision", title="a")
    monkeypatch.setenv("AGENTCTX_NOW", "2026-05-01T00:00:00Z")
    sessions.account(conn, "abandoned", proj.id, "UserPromptSubmit", [a["id"]], 40)
    monkeypatch.setenv("AGENTCTX_NOW", "2026-05-03T00:00:00Z")
    sessions.account(conn, "recent", proj.id, "UserPromptSubmit", [a["id"]], 40)
    monkeypatch.setenv("AGENTCTX_NOW", "2026-05-05T00:00:00Z")
    sessions.end(conn, "other", None)
    assert sessions.injected_ids(conn, "abandoned") == set()
    assert sessions.injected_ids(conn, "recent") == {a["id"]}


def test_counts(conn: sqlite3.Connection, proj: project.Project) -> None:
    a = records.add(conn, proj.id, type="decision", title="a")
    records.supersede(conn, proj.id, a["id"], body="b")
    records.add(conn, proj.id, type="bugfix", title="c")
    records.add(conn, "otherproject0000", type="bugfix", title="d")
    assert records.counts(conn, proj.id) == {"decision": {"active": 1, "superseded": 1, "archived": 0},
                                             "bugfix": {"active": 1, "superseded": 0, "archived": 0}}
    assert records.counts(conn)["bugfix"] == {"active": 2, "superseded": 0, "archived": 0}


def test_a_store_that_logged_migrations_in_the_old_table_adopts_them(tmp_path: Path) -> None:
    """Stores made before sqlite-utils' Migrations kept their log in ``_migrations``: nothing runs twice."""
    path = str(tmp_path / "old.db")
    conn = db.connect(path)
    first = migrations.MIGRATIONS[0].__name__
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    conn.executemany("INSERT INTO _migrations VALUES (?, '2026-01-01T00:00:00.000000Z')",
                     [(fn.__name__,) for fn in migrations.MIGRATIONS])
    conn.execute("DELETE FROM _sqlite_migrations")
    conn.execute(f"PRAGMA user_version = {migrations.LATEST - 1}")
    conn.close()
    again = db.connect(path)  # would fail ("table records already exists") if any migration ran again
    try:
        rows = again.execute("SELECT name, applied_at FROM _sqlite_migrations ORDER BY id").fetchall()
        assert [r[0] for r in rows] == [fn.__name__ for fn in migrations.MIGRATIONS]
        assert rows[0][0] == first and rows[0][1] == "2026-01-01T00:00:00.000000Z"
        assert not again.execute("SELECT 1 FROM sqlite_master WHERE name = '_migrations'").fetchone()
    finally:
        again.close()


@pytest.mark.skipif(sqlite3.sqlite_version_info < (3, 35, 0), reason="DROP COLUMN needs SQLite 3.35")
def test_m006_drops_the_never_written_columns_and_import_still_takes_the_field(
        tmp_path: Path, proj: project.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """``records.claudemd_drift_score`` (never written) and ``injections.tokens`` (always 0) go; rows stay;
    an export from an older version, which carried the field, still imports."""
    from agentctx.sharing import transfer

    path = str(tmp_path / "m005.db")

    def columns(conn: sqlite3.Connection, table: str) -> set[str]:
        return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}

    with monkeypatch.context() as m:  # a store as the version before m006 left it
        m.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:5])
        m.setattr(migrations, "LATEST", 5)
        old = db.connect(path)
        assert "claudemd_drift_score" in columns(old, "records") & columns(old, "records_archive")
        assert "tokens" in columns(old, "injections")
        records.add(old, proj.id, type="decision", title="Kept across the migration", record_id="01JKEPTKEPTKEPTKEPTKEPTKE1")
        old.execute("INSERT INTO injections (session_id, record_id, injected_at, tokens, event) "
                    "VALUES ('s-1', '01JKEPTKEPTKEPTKEPTKEPTKE1', '2026-01-01T00:00:00.000000Z', 0, 'SessionStart')")
        old.close()
    conn = db.connect(path)
    try:
        assert "claudemd_drift_score" not in columns(conn, "records") | columns(conn, "records_archive")
        assert "tokens" not in columns(conn, "injections")
        assert columns(conn, "records") - {"seq"} == columns(conn, "records_archive") - {"seq"}
        assert records.get(conn, "01JKEPTKEPTKEPTKEPTKEPTKE1", proj.id)["title"] == "Kept across the migration"
        assert sessions.injected_ids(conn, "s-1") == {"01JKEPTKEPTKEPTKEPTKEPTKE1"}
        line = json.dumps({"id": "01JEXPRTEXPRTEXPRTEXPRTEXP", "type": "convention", "title": "Tabs, not spaces",
                           "claudemd_drift_score": 0.0})
        report = transfer.import_jsonl(conn, proj.id, [line])
        assert (report.added, report.errors) == (1, [])
    finally:
        conn.close()
