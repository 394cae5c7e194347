"""Schema migrations: named functions applied in order by sqlite-utils' own ``Migrations``.

The functions are listed here at import (no sqlite-utils import: the hook hot path imports this
module for ``LATEST``); ``apply`` hands them to ``sqlite_utils.Migrations("agentctx")``, which
records each in ``_sqlite_migrations`` and skips those already there. ``PRAGMA user_version``
holds the number applied, so the hot path checks the schema with one pragma. Never edit a
released migration: add a new one.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # avoids importing typing (~4 ms) on the hook hot path
if TYPE_CHECKING:  # sqlite-utils costs ~230 ms to import: only ``apply`` imports it.
    import sqlite3

    from sqlite_utils import Database

MIGRATIONS: list[Callable[[Database], None]] = []


def migration(fn: Callable[[Database], None]) -> Callable[[Database], None]:
    """Register ``fn`` as the next migration."""
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(db: Database) -> None:
    """Records (bi-temporal, with provenance), graph tables, sessions, FTS5, meta."""
    db["records"].create(
        {
            "seq": int,  # stable rowid for the FTS5 index (VACUUM keeps INTEGER PRIMARY KEY)
            "id": str,  # ULID
            "project_id": str,
            "type": str,
            "key": str,  # structured key, e.g. profile.test_command: a new one supersedes the old
            "title": str,
            "body": str,
            "scope": str,
            "pinned": int,
            "confidence": str,
            "reinforce_count": int,
            "valid_from": str,  # valid time: when the fact became true
            "valid_to": str,  # valid time: when it stopped being true (set on supersession)
            "recorded_at": str,  # transaction time: when the store learned it
            "superseded_at": str,  # transaction time: when the store retired it (NULL = current)
            "superseded_by": str,
            "updated_at": str,
            "access_count": int,
            "last_accessed": str,
            "score": float,
            "claudemd_drift_score": float,
            "source": str,  # llm_extraction | hook_observation | mcp_tool | cli | import | demo
            "session_id": str,
            "pending_embedding": int,
        },
        pk="seq",
        not_null={"id", "project_id", "type", "title", "body", "valid_from", "recorded_at", "source"},
        defaults={
            "body": "",
            "scope": "project",
            "pinned": 0,
            "confidence": "inferred",
            "reinforce_count": 0,
            "access_count": 0,
            "score": 1.0,
            "claudemd_drift_score": 0.0,
            "pending_embedding": 1,
        },
    )
    db["records"].create_index(["id"], unique=True)
    db["records"].create_index(["project_id", "superseded_at", "type"])
    db["records"].create_index(["superseded_by"])
    db["records"].create_index(["scope", "type"])
    db.execute(
        "CREATE UNIQUE INDEX records_active_key ON records(project_id, key) "
        "WHERE key IS NOT NULL AND superseded_at IS NULL"
    )
    db["records"].enable_fts(["title", "body"], tokenize="porter unicode61 remove_diacritics 2")
    # Our own triggers: re-index only when indexed text changes, not on access counters.
    db.execute(
        "CREATE TRIGGER records_fts_ai AFTER INSERT ON records BEGIN "
        "INSERT INTO records_fts(rowid, title, body) VALUES (new.seq, new.title, new.body); END"
    )
    db.execute(
        "CREATE TRIGGER records_fts_ad AFTER DELETE ON records BEGIN "
        "INSERT INTO records_fts(records_fts, rowid, title, body) "
        "VALUES ('delete', old.seq, old.title, old.body); END"
    )
    db.execute(
        "CREATE TRIGGER records_fts_au AFTER UPDATE OF title, body ON records BEGIN "
        "INSERT INTO records_fts(records_fts, rowid, title, body) "
        "VALUES ('delete', old.seq, old.title, old.body); "
        "INSERT INTO records_fts(rowid, title, body) VALUES (new.seq, new.title, new.body); END"
    )

    db["meta"].create({"key": str, "value": int}, pk="key")
    db["meta"].insert({"key": "generation", "value": 0})
    # The generation counts changes that can alter a digest; a cached digest from another
    # generation is stale. Access counters are deliberately not part of it.
    bump = "UPDATE meta SET value = value + 1 WHERE key = 'generation';"
    db.execute(f"CREATE TRIGGER records_gen_ai AFTER INSERT ON records BEGIN {bump} END")
    db.execute(f"CREATE TRIGGER records_gen_ad AFTER DELETE ON records BEGIN {bump} END")
    db.execute(
        "CREATE TRIGGER records_gen_au AFTER UPDATE OF type, key, title, body, scope, pinned, "
        "confidence, valid_from, valid_to, superseded_at, superseded_by, score ON records "
        f"BEGIN {bump} END"
    )

    db["projects"].create(
        {"id": str, "name": str, "root": str, "remote": str, "first_seen": str, "last_seen": str},
        pk="id",
    )
    db["nodes"].create(
        {"id": str, "project_id": str, "kind": str, "name": str, "created_at": str}, pk="id"
    )
    db["nodes"].create_index(["project_id", "kind", "name"], unique=True)
    db["edges"].create(
        {"id": str, "from_id": str, "to_id": str, "rel_type": str, "weight": float, "created_at": str},
        pk="id",
        not_null={"from_id", "to_id", "rel_type"},
        defaults={"weight": 1.0},
    )
    db["edges"].create_index(["from_id"])
    db["edges"].create_index(["to_id"])
    db["edges"].create_index(["from_id", "to_id", "rel_type"], unique=True)
    db["record_entities"].create({"record_id": str, "entity_id": str}, pk=("record_id", "entity_id"))
    db["record_entities"].create_index(["entity_id"])

    db["sessions"].create(
        {
            "session_id": str,
            "project_id": str,
            "cwd": str,
            "source": str,
            "started_at": str,
            "ended_at": str,
            "end_reason": str,
            "tokens_injected": int,
            "injections": int,
            "extraction_cost_usd": float,
        },
        pk="session_id",
        defaults={"tokens_injected": 0, "injections": 0, "extraction_cost_usd": 0.0},
    )
    db["sessions"].create_index(["project_id", "started_at"])
    # Per-session dedup state for UserPromptSubmit; rows are deleted at SessionEnd.
    db["injections"].create(
        {"session_id": str, "record_id": str, "injected_at": str, "tokens": int, "event": str},
        pk=("session_id", "record_id"),
    )
    db["injections"].create_index(["injected_at"])


@migration
def m002_active_by_type_index(db: Database) -> None:
    """Top current records of one type in ranking order, read straight from an index."""
    db["records"].create_index(
        ["project_id", "type", "superseded_at", "pinned", "score", "recorded_at"],
        index_name="records_active_rank",
    )


@migration
def m003_capture(db: Database) -> None:
    """Session metadata and extraction watermark; anchors that survive compaction."""
    sessions = db["sessions"]
    sessions.add_column("meta", str)  # JSON: git branch switches, commits, PRs seen in the session
    sessions.add_column("extraction_watermark", str)  # where the last extraction stopped in the transcript
    sessions.add_column("extraction_runs", int, not_null_default=0)
    sessions.add_column("extraction_input_tokens", int, not_null_default=0)
    sessions.add_column("extraction_output_tokens", int, not_null_default=0)
    # One anchor per session (Intent / Changes made / Decisions taken / Next steps), merged at
    # each PreCompact; ``version`` increases with every write.
    db["anchors"].create(
        {"session_id": str, "project_id": str, "intent": str, "changes": str, "decisions": str,
         "next_steps": str, "version": int, "updated_at": str},
        pk="session_id",
        defaults={"version": 0},
    )
    db["anchors"].create_index(["project_id", "updated_at"])


@migration
def m004_consolidation_and_sync(db: Database) -> None:
    """Archive state and embedding bookkeeping on records; the cold partition; CLAUDE.md drift
    candidates; team-export sync state."""
    records = db["records"]
    records.add_column("archived_at", str)  # soft-archived (rolled up); hidden from retrieval, kept for history
    records.add_column("low_score_since", str)  # first time score fell below the prune threshold
    records.add_column("embedded_model", str)  # the model its vector came from (re-embed on change)
    records.create_index(["archived_at"])
    # Cold partition: superseded > 90 days moves here (same columns, no FTS), still read by history.
    columns = [row[1] for row in db.execute("PRAGMA table_info(records)").fetchall()]
    db.execute(f"CREATE TABLE records_archive AS SELECT {', '.join(columns)} FROM records WHERE 0")
    db["records_archive"].create_index(["id"], unique=True)
    db["records_archive"].create_index(["project_id", "valid_from"])
    db["drift"].create(
        {"record_id": str, "project_id": str, "score": float, "kind": str, "detail": str, "updated_at": str},
        pk="record_id",
    )
    db["drift"].create_index(["project_id", "score"])
    db["team_sync"].create({"project_id": str, "path": str, "sha256": str, "synced_at": str}, pk="project_id")


@migration
def m005_current_count_index(db: Database) -> None:
    """Count a project's current (not superseded, not archived) records from an index alone:
    without ``archived_at`` in an index the count reads every row (75 ms at 100k records)."""
    db["records"].create_index(["project_id", "superseded_at", "archived_at"], index_name="records_current")


@migration
def m006_drop_unused_columns(db: Database) -> None:
    """Drop columns nothing ever wrote: ``records.claudemd_drift_score`` (drift lives in the ``drift``
    table; import still accepts the field) and ``injections.tokens`` (always 0; the session row
    holds the token totals). ``DROP COLUMN`` needs SQLite 3.35: on an older library the columns
    stay, unread (the cold partition keeps the same columns as ``records`` either way)."""
    import sqlite3

    if sqlite3.sqlite_version_info < (3, 35, 0):
        return
    for table, column in (("records", "claudemd_drift_score"), ("records_archive", "claudemd_drift_score"),
                          ("injections", "tokens")):
        if column in {c.name for c in db[table].columns}:
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")


@migration
def m007_spend_and_session_folder(db: Database) -> None:
    """Model spending, one row per run (extraction, rollup), by UTC day and session: what the spending
    caps are checked against. The folder each session is in now (``current_cwd`` and its project),
    which follows ``cd``: the MCP tools answer for that project. Sessions' past extraction costs are
    carried over (dated by the session's start)."""
    db["spend"].create(
        {"id": int, "day": str, "at": str, "project_id": str, "session_id": str, "kind": str, "calls": int,
         "input_tokens": int, "output_tokens": int, "cost_usd": float},
        pk="id", not_null={"day", "at", "kind"},
        defaults={"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
    )
    db["spend"].create_index(["day"])
    db["spend"].create_index(["session_id"])
    db.execute(
        "INSERT INTO spend (day, at, project_id, session_id, kind, calls, input_tokens, output_tokens, cost_usd) "
        "SELECT substr(started_at, 1, 10), started_at, project_id, session_id, 'extraction', extraction_runs, "
        "extraction_input_tokens, extraction_output_tokens, extraction_cost_usd FROM sessions "
        "WHERE extraction_cost_usd > 0 AND started_at IS NOT NULL"
    )
    db["sessions"].add_column("current_cwd", str)
    db["sessions"].add_column("current_project_id", str)


@migration
def m008_remote_sync(db: Database) -> None:
    """Team sync through PostgreSQL (``agentctx.store.remote``): remotes with their cursor and status,
    opt-ins, pending purges, and an outbox that triggers fill when a synced column of a record changes
    (only while a remote is configured; never during a pull, which holds a ``remote_mute`` row)."""
    db.execute("CREATE TABLE remotes (name TEXT PRIMARY KEY, url TEXT NOT NULL, team TEXT, added_at TEXT NOT NULL, "
               "cursor INTEGER NOT NULL DEFAULT 0, last_attempt_at TEXT, last_ok_at TEXT, status TEXT, "
               "failures INTEGER NOT NULL DEFAULT 0, next_attempt_at TEXT, report TEXT)")
    db.execute("CREATE TABLE remote_shares (project_id TEXT PRIMARY KEY, shared INTEGER NOT NULL, "
               "changed_at TEXT NOT NULL)")
    db.execute("CREATE TABLE remote_outbox (remote TEXT NOT NULL, record_id TEXT NOT NULL, "
               "edited INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (remote, record_id))")
    db.execute("CREATE TABLE remote_projects (remote TEXT NOT NULL, project_id TEXT NOT NULL, "
               "after_seq INTEGER NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (remote, project_id))")
    db.execute("CREATE TABLE remote_purges (remote TEXT NOT NULL, record_id TEXT NOT NULL, project_id TEXT NOT NULL, "
               "requested_at TEXT NOT NULL, PRIMARY KEY (remote, record_id))")
    db.execute("CREATE TABLE remote_mute (one INTEGER PRIMARY KEY)")
    when = "WHEN EXISTS (SELECT 1 FROM remotes) AND NOT EXISTS (SELECT 1 FROM remote_mute)"
    queue = ("INSERT INTO remote_outbox (remote, record_id, edited) SELECT name, new.id, {edited} FROM remotes "
             "WHERE true ON CONFLICT (remote, record_id) DO UPDATE SET version = version + 1, "
             "edited = max(edited, excluded.edited);")
    db.execute(f"CREATE TRIGGER remote_outbox_ai AFTER INSERT ON records {when} BEGIN {queue.format(edited=1)} END")
    db.execute("CREATE TRIGGER remote_outbox_content AFTER UPDATE OF type, key, title, body, scope, pinned, confidence, "
               f"valid_from ON records {when} BEGIN {queue.format(edited=1)} END")
    db.execute("CREATE TRIGGER remote_outbox_retired AFTER UPDATE OF superseded_at, superseded_by, valid_to ON records "
               f"{when} BEGIN {queue.format(edited=0)} END")


@migration
def m009_retrieval_expansion(db: Database) -> None:
    """What the consolidation pass adds to a record for retrieval (``agentctx.consolidation.expand``):
    ``terms``, spellings and related words its text implies (indexed as a third, low-weight column
    of a rebuilt ``records_fts``), and ``context``, the word stems of its neighbours in the same
    session (read by the second ranking stage; never indexed, never shown); ``expand_pending`` marks
    records to (re)do. An edit of a record's text, or its deletion, clears what was derived from it
    (its own terms, its session's contexts) in the same statement, so no copy of old text outlives it.
    One trigger body does the index work and the clearing, in a fixed order; its own clearing (terms set
    to NULL, text unchanged) is excluded by its WHEN clause, so it is right whether or not the
    connection has ``recursive_triggers`` on (sqlite-utils turns it on)."""
    for table in ("records", "records_archive"):
        db[table].add_column("terms", str)
        db[table].add_column("context", str)
        db[table].add_column("expand_pending", int, not_null_default=1)
    db["records"].create_index(["session_id", "seq"], index_name="records_session")
    for trigger in ("records_fts_ai", "records_fts_ad", "records_fts_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    # Built under a new name, then renamed: an FTS5 table dropped and created again under the same name in
    # one transaction leaves the migrating connection with stale index state (writes then fail as malformed).
    db.execute("CREATE VIRTUAL TABLE records_fts_new USING fts5(title, body, terms, "
               "tokenize='porter unicode61 remove_diacritics 2', content='records', content_rowid='seq')")
    db.execute("INSERT INTO records_fts_new(records_fts_new) VALUES ('rebuild')")
    db.execute("DROP TABLE IF EXISTS records_fts")
    db.execute("ALTER TABLE records_fts_new RENAME TO records_fts")
    session = ("{row}.session_id IS NOT NULL AND session_id = {row}.session_id AND project_id = {row}.project_id")
    db.execute(
        "CREATE TRIGGER records_fts_ai AFTER INSERT ON records BEGIN "
        "INSERT INTO records_fts(rowid, title, body, terms) VALUES (new.seq, new.title, new.body, new.terms); END"
    )
    db.execute(
        "CREATE TRIGGER records_fts_ad AFTER DELETE ON records BEGIN "
        "INSERT INTO records_fts(records_fts, rowid, title, body, terms) "
        "VALUES ('delete', old.seq, old.title, old.body, old.terms); "
        f"UPDATE records SET context = NULL, expand_pending = 1 WHERE {session.format(row='old')}; END"
    )
    stale = f"(new.title IS NOT old.title OR new.body IS NOT old.body) AND (seq = new.seq OR {session.format(row='new')})"
    db.execute(
        "CREATE TRIGGER records_fts_au AFTER UPDATE OF title, body, terms ON records "
        "WHEN new.terms IS NOT NULL OR old.terms IS NULL OR new.title IS NOT old.title OR new.body IS NOT old.body "
        "BEGIN "
        "INSERT INTO records_fts(records_fts, rowid, title, body, terms) "
        "VALUES ('delete', old.seq, old.title, old.body, old.terms); "
        "INSERT INTO records_fts(rowid, title, body, terms) VALUES (new.seq, new.title, new.body, new.terms); "
        # the text changed: what was derived from the old text goes (index entries first, then the row)
        "INSERT INTO records_fts(records_fts, rowid, title, body, terms) "
        f"SELECT 'delete', seq, title, body, terms FROM records WHERE terms IS NOT NULL AND {stale}; "
        "INSERT INTO records_fts(rowid, title, body, terms) "
        f"SELECT seq, title, body, NULL FROM records WHERE terms IS NOT NULL AND {stale}; "
        f"UPDATE records SET terms = NULL, context = NULL, expand_pending = 1 WHERE {stale}; END"
    )


@migration
def m010_redaction_stamp(db: Database) -> None:
    """``redaction_stamp``: ``redact.stamp(title, body)`` of a record whose text was redacted when written
    (NULL: unknown, as for every record before this). A push sends a record whose stamp still matches
    without scanning it again (``remote.rules.outgoing``)."""
    for table in ("records", "records_archive"):  # the two keep the same columns
        db[table].add_column("redaction_stamp", str)


LATEST = len(MIGRATIONS)


SET_NAME = "agentctx"  # the migration set's name in ``_sqlite_migrations``


def apply(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in one IMMEDIATE transaction; return the names applied.

    Safe against concurrent callers (the second waits, then finds nothing to do) and
    against crashes (a failed run leaves the store exactly as it was: each migration runs
    in a savepoint of the one transaction).
    """
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        if current >= LATEST:
            conn.execute("COMMIT")
            return []
        plan = sqlite_utils.Migrations(SET_NAME)
        for fn in MIGRATIONS:
            plan()(fn)
        _adopt_legacy_log(db, plan)
        done = [m.name for m in plan.pending(db)]
        plan.apply(db)
        conn.execute(f"PRAGMA user_version = {LATEST}")
        conn.execute("COMMIT")
        return done
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _adopt_legacy_log(db: Database, plan) -> None:
    """Stores made before agentctx used sqlite-utils' Migrations logged them in ``_migrations``:
    move those names (with their times) into ``_sqlite_migrations`` once, so none runs again."""
    if not db["_migrations"].exists():
        return
    plan.ensure_migrations_table(db)
    rows = db.execute("SELECT name, applied_at FROM _migrations ORDER BY rowid").fetchall()
    db["_sqlite_migrations"].insert_all(
        ({"migration_set": SET_NAME, "name": name, "applied_at": at} for name, at in rows), ignore=True
    )
    db["_migrations"].drop()
