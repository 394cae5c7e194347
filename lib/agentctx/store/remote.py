"""Local state of team sync (see ``agentctx.remote``): every statement on its tables, and the
few on ``records`` that a push (what to send) and a pull (applying what came) need.

* ``remotes``: one row per server (name, URL without credentials, team), with the pull cursor and the
  last attempt's outcome (status line, failures, when to try again);
* ``remote_outbox``: records changed since they were last pushed, per remote, filled by triggers on
  ``records`` (migration ``m008_remote_sync``) only while a remote is configured. ``edited`` says the
  content changed (not just a retirement); ``version`` grows with each change, so an entry that
  changed again while its push was under way stays queued;
* ``remote_projects``: how far the first full push of each shared project got (then the outbox
  carries it);
* ``remote_shares``: the user's explicit opt-in or opt-out per project;
* ``remote_purges``: purges waiting to reach each server;
* ``remote_mute``: holds a row only inside a pull's transaction, so what a pull writes is not queued
  to be pushed back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from agentctx import clock
from agentctx.store import projects
from agentctx.store.db import transaction
from agentctx.store.query import COLUMNS

_CHUNK = 500
STATE_FIELDS = ("cursor", "last_attempt_at", "last_ok_at", "status", "failures", "next_attempt_at", "report")


def _marks(n: int) -> str:
    return ",".join("?" * n)


# -- remotes ---------------------------------------------------------------------------------------


def add(conn: sqlite3.Connection, name: str, url: str, team: str | None = None) -> dict:
    """Configure a remote; ValueError if the name is taken."""
    if get(conn, name) is not None:
        raise ValueError(f"remote {name} exists: `agentctx remote remove {name}` first")
    conn.execute("INSERT INTO remotes (name, url, team, added_at) VALUES (?, ?, ?, ?)", (name, url, team, clock.now()))
    return get(conn, name)


def remove(conn: sqlite3.Connection, name: str) -> bool:
    """Forget a remote and everything queued for it (nothing on the server changes)."""
    with transaction(conn):
        gone = conn.execute("DELETE FROM remotes WHERE name = ?", (name,)).rowcount > 0
        for table in ("remote_outbox", "remote_projects", "remote_purges"):
            conn.execute(f"DELETE FROM {table} WHERE remote = ?", (name,))
    return gone


def get(conn: sqlite3.Connection, name: str) -> dict | None:
    row = conn.execute("SELECT * FROM remotes WHERE name = ?", (name,)).fetchone()
    return dict(row) if row else None


def every(conn: sqlite3.Connection) -> list[dict]:
    return [dict(r) for r in conn.execute("SELECT * FROM remotes ORDER BY name")]


def any_configured(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM remotes LIMIT 1").fetchone() is not None


def set_state(conn: sqlite3.Connection, name: str, **fields) -> None:
    """Update the remote's sync state (``STATE_FIELDS``)."""
    unknown = set(fields) - set(STATE_FIELDS)
    if unknown:
        raise TypeError(f"unknown remote state field(s): {', '.join(sorted(unknown))}")
    if fields:
        conn.execute(f"UPDATE remotes SET {', '.join(f'{k} = ?' for k in fields)} WHERE name = ?",
                     (*fields.values(), name))


# -- which projects are shared ---------------------------------------------------------------------


def set_share(conn: sqlite3.Connection, project_id: str, on: bool) -> None:
    """The user's explicit choice for a project (wins over ``.agentctx/config``). Turning it off
    forgets how far its first push got, so sharing it again pushes everything again."""
    with transaction(conn):
        conn.execute("INSERT INTO remote_shares (project_id, shared, changed_at) VALUES (?, ?, ?) "
                     "ON CONFLICT(project_id) DO UPDATE SET shared = excluded.shared, changed_at = excluded.changed_at",
                     (project_id, int(on), clock.now()))
        if not on:
            conn.execute("DELETE FROM remote_projects WHERE project_id = ?", (project_id,))


def explicit_shares(conn: sqlite3.Connection) -> dict[str, bool]:
    return {r[0]: bool(r[1]) for r in conn.execute("SELECT project_id, shared FROM remote_shares")}


def known_projects(conn: sqlite3.Connection) -> list[dict]:
    """Projects this store has seen: {id, name, root}."""
    return [{k: r[k] for k in ("id", "name", "root")} for r in projects.every(conn)]


# -- what to push ----------------------------------------------------------------------------------


def outbox(conn: sqlite3.Connection, remote: str, *, after: str = "", limit: int = _CHUNK) -> list[dict]:
    """Queued entries {record_id, edited, version}, by record id after ``after``."""
    return [dict(r) for r in conn.execute(
        "SELECT record_id, edited, version FROM remote_outbox WHERE remote = ? AND record_id > ? "
        "ORDER BY record_id LIMIT ?", (remote, after, limit))]


def outbox_count(conn: sqlite3.Connection, remote: str) -> int:
    return conn.execute("SELECT COUNT(*) FROM remote_outbox WHERE remote = ?", (remote,)).fetchone()[0]


def outbox_done(conn: sqlite3.Connection, remote: str, entries: Iterable[tuple[str, int]]) -> None:
    """Drop entries (record id, version) pushed or dropped; an entry that changed since stays."""
    conn.executemany("DELETE FROM remote_outbox WHERE remote = ? AND record_id = ? AND version = ?",
                     [(remote, rid, version) for rid, version in entries])


def edited_flags(conn: sqlite3.Connection, remote: str, record_ids: list[str]) -> dict[str, int]:
    """{record id: edited} for the queued ones among these."""
    out: dict[str, int] = {}
    for start in range(0, len(record_ids), _CHUNK):
        part = record_ids[start:start + _CHUNK]
        out.update({r[0]: r[1] for r in conn.execute(
            f"SELECT record_id, edited FROM remote_outbox WHERE remote = ? AND record_id IN ({_marks(len(part))})",
            (remote, *part))})
    return out


def full_push_position(conn: sqlite3.Connection, remote: str, project_id: str) -> int | None:
    """Where the first full push of this project stands (the last ``seq`` sent), None once complete."""
    row = conn.execute("SELECT after_seq, done FROM remote_projects WHERE remote = ? AND project_id = ?",
                       (remote, project_id)).fetchone()
    if row is None:
        return 0
    return None if row[1] else row[0]


def set_full_push_position(conn: sqlite3.Connection, remote: str, project_id: str, after_seq: int,
                           done: bool) -> None:
    conn.execute("INSERT INTO remote_projects (remote, project_id, after_seq, done) VALUES (?, ?, ?, ?) "
                 "ON CONFLICT(remote, project_id) DO UPDATE SET after_seq = excluded.after_seq, done = excluded.done",
                 (remote, project_id, after_seq, int(done)))


def project_page(conn: sqlite3.Connection, project_id: str, after_seq: int, limit: int = _CHUNK) -> list[tuple[int, str]]:
    """(seq, id) of the project's records after ``after_seq``, in insertion order."""
    return [tuple(r) for r in conn.execute(
        "SELECT seq, id FROM records WHERE project_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (project_id, after_seq, limit))]


def for_push(conn: sqlite3.Connection, record_ids: list[str]) -> dict[str, dict]:
    """{id: record} for these ids (in ``records``; archived ones stay local), each with
    ``supersedes``: the record it superseded most recently, if any."""
    out: dict[str, dict] = {}
    for start in range(0, len(record_ids), _CHUNK):
        part = record_ids[start:start + _CHUNK]
        for row in conn.execute(f"SELECT {COLUMNS}, redaction_stamp FROM records WHERE id IN "
                                f"({_marks(len(part))})", part):
            out[row["id"]] = dict(row, supersedes=None)
        for row in conn.execute(f"SELECT superseded_by, id FROM records WHERE superseded_by IN "
                                f"({_marks(len(part))}) ORDER BY superseded_at, id", part):
            if row[0] in out:
                out[row[0]]["supersedes"] = row[1]
    return out


@contextmanager
def lenient_text(conn: sqlite3.Connection) -> Iterator[None]:
    """Within: text that is not valid UTF-8 (a row another tool wrote) reads with U+FFFD instead of raising,
    so one such row never blocks a sync of every other."""
    strict = conn.text_factory
    conn.text_factory = _lenient
    try:
        yield
    finally:
        conn.text_factory = strict


def _lenient(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# -- purges ----------------------------------------------------------------------------------------


def queue_purge(conn: sqlite3.Connection, record_id: str, project_id: str) -> None:
    """Queue a purge for every configured remote (inside the caller's transaction)."""
    conn.execute("INSERT OR IGNORE INTO remote_purges (remote, record_id, project_id, requested_at) "
                 "SELECT name, ?, ?, ? FROM remotes", (record_id, project_id, clock.now()))


def purges(conn: sqlite3.Connection, remote: str) -> list[tuple[str, str]]:
    return [tuple(r) for r in conn.execute(
        "SELECT record_id, project_id FROM remote_purges WHERE remote = ? ORDER BY requested_at", (remote,))]


def purges_done(conn: sqlite3.Connection, remote: str, record_ids: Iterable[str]) -> None:
    conn.executemany("DELETE FROM remote_purges WHERE remote = ? AND record_id = ?",
                     [(remote, rid) for rid in record_ids])


def drop_queued(conn: sqlite3.Connection, record_id: str) -> None:
    """A record purged here: nothing of it is left to push."""
    conn.execute("DELETE FROM remote_outbox WHERE record_id = ?", (record_id,))


# -- applying a pull -------------------------------------------------------------------------------


@contextmanager
def muted(conn: sqlite3.Connection) -> Iterator[None]:
    """Inside the caller's transaction: writes to ``records`` are not queued for pushing."""
    conn.execute("INSERT OR IGNORE INTO remote_mute (one) VALUES (1)")
    try:
        yield
    finally:
        conn.execute("DELETE FROM remote_mute")


def local_versions(conn: sqlite3.Connection, record_ids: list[str]) -> dict[str, dict | None]:
    """{id: record} for ids in ``records``; {id: None} for ids only in the cold partition."""
    out: dict[str, dict | None] = {}
    for start in range(0, len(record_ids), _CHUNK):
        part = record_ids[start:start + _CHUNK]
        for row in conn.execute(f"SELECT id FROM records_archive WHERE id IN ({_marks(len(part))})", part):
            out[row[0]] = None
        for row in conn.execute(f"SELECT {COLUMNS} FROM records WHERE id IN ({_marks(len(part))})", part):
            out[row["id"]] = dict(row)
    return out


def owners(conn: sqlite3.Connection, record_ids: list[str]) -> dict[str, str]:
    """{id: the project that holds it here} for these ids (current, retired or in the cold partition)."""
    out: dict[str, str] = {}
    for start in range(0, len(record_ids), _CHUNK):
        part = record_ids[start:start + _CHUNK]
        for table in ("records_archive", "records"):
            out.update({r[0]: r[1] for r in conn.execute(
                f"SELECT id, project_id FROM {table} WHERE id IN ({_marks(len(part))})", part)})
    return out


_SYNCED = ("type", "key", "title", "body", "pinned", "confidence", "valid_from", "source", "updated_at",
           "superseded_at", "superseded_by", "valid_to")
_CONTENT = ("type", "key", "title", "body")


def update_synced(conn: sqlite3.Connection, record_id: str, fields: dict) -> None:
    """Set synced fields of a local record to what a pull brought (validated by the caller); a
    changed text is embedded again."""
    names = [k for k in _SYNCED if k in fields]
    if not names:
        return
    embed = ", pending_embedding = 1" if any(k in fields for k in _CONTENT) else ""
    conn.execute(f"UPDATE records SET {', '.join(f'{k} = ?' for k in names)}{embed} WHERE id = ?",
                 (*(fields[k] for k in names), record_id))
