"""The project handover: one current record per project, versioned for parallel agents.

A handover carries ADR-009's ``active_work``: ``current_task`` plus the lists ``blockers``,
``next_steps``, ``open_questions`` and ``also_in_progress`` (what parallel sessions were on
when their writes were merged). It is a ``handover`` record with key ``handover.current``:
a write from another session supersedes the previous one (history keeps it), a later write
from the same session updates that session's record, so there is one per session.

Optimistic concurrency (the Prism seed): ``read`` returns a ``version``; ``write`` takes the
version it was based on and raises ``Conflict`` if another write landed since, before
touching anything. ``save`` does the whole loop: on a conflict it re-reads, merges three-way
(base, mine, theirs: nothing either side added or kept is lost) and retries.
"""

from __future__ import annotations

import re
import sqlite3

from agentctx import clock, ids
from agentctx.redact import redact
from agentctx.store import db, records
from agentctx.store.db import transaction

KEY = "handover.current"
LISTS = ("blockers", "next_steps", "open_questions", "also_in_progress")
FIELDS = ("current_task", *LISTS)
MAX_ITEMS = 20
MAX_ITEM_CHARS = 300
NO_TASK = "Session handover"
_HEADINGS = {
    "blockers": "Blockers:",
    "next_steps": "Next steps:",
    "open_questions": "Open questions:",
    "also_in_progress": "Also in progress (parallel sessions):",
}
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$")


class Conflict(Exception):
    """Another write landed after the version this one was based on; nothing was written."""

    def __init__(self, expected: int, current: int):
        super().__init__(f"handover is at version {current}, not {expected}: re-read, merge and retry")
        self.expected, self.current = expected, current


def _text(value) -> str:
    text = " ".join(redact(value).split()) if isinstance(value, str) else ""
    return text[: MAX_ITEM_CHARS - 1] + "…" if len(text) > MAX_ITEM_CHARS else text


def normalize(fields: dict) -> dict:
    """Known fields only, as clean text: redacted, one line each, lists deduplicated and capped."""
    if not isinstance(fields, dict):
        raise ValueError("handover fields must be an object")
    out: dict = {"current_task": _text(fields.get("current_task"))}
    for name in LISTS:
        raw = fields.get(name) or []
        items = [raw] if isinstance(raw, str) else raw if isinstance(raw, (list, tuple)) else []
        clean = [_text(i) for i in items]
        out[name] = list(dict.fromkeys(i for i in clean if i))[:MAX_ITEMS]
    return out


def render(fields: dict) -> tuple[str, str]:
    """(title, body) of the record: the task as title, each list as a titled section."""
    lines: list[str] = []
    for name in LISTS:
        items = fields.get(name) or []
        if items:
            lines.append(_HEADINGS[name])
            numbered = name == "next_steps"
            lines += [f"{n}. {i}" if numbered else f"- {i}" for n, i in enumerate(items, 1)]
    return fields.get("current_task") or NO_TASK, "\n".join(lines)


def parse(record: dict | None) -> dict:
    """Fields back from a handover record (tolerant of hand edits: unknown lines are skipped)."""
    fields = normalize({})
    if not record:
        return fields
    title = record.get("title") or ""
    fields["current_task"] = "" if title == NO_TASK else title
    section = None
    by_heading = {v.lower(): k for k, v in _HEADINGS.items()}
    for line in (record.get("body") or "").splitlines():
        if line.strip().lower() in by_heading:
            section = by_heading[line.strip().lower()]
            continue
        m = _ITEM.match(line)
        if section and m and m.group(1) not in fields[section]:
            fields[section].append(m.group(1))
    return fields


def _meta_key(project_id: str) -> str:
    return f"handover:{project_id}"


def _version(conn: sqlite3.Connection, project_id: str) -> int:
    return db.meta_value(conn, _meta_key(project_id))


def _head(conn: sqlite3.Connection, project_id: str) -> dict | None:
    return records.by_key(conn, project_id, KEY)


def read(conn: sqlite3.Connection, project_id: str) -> dict:
    """``{"version", "fields", "record"}``: the current handover, read as one snapshot."""
    with transaction(conn, immediate=False):
        version = _version(conn, project_id)
        head = _head(conn, project_id)
    return {"version": version, "fields": parse(head), "record": head}


def write(
    conn: sqlite3.Connection, project_id: str, session_id: str, fields: dict, expected_version: int, *,
    source: str = "llm_extraction", confidence: str = "inferred",
) -> int:
    """Store ``fields`` as the handover if it is still at ``expected_version``; the new version.

    Raises Conflict (nothing written) when another write landed first. Writing what is
    already stored changes nothing and returns the current version.
    """
    title, body = render(normalize(fields))
    title, body = records.validate(
        type="handover", title=title, body=body, key=KEY, source=source, confidence=confidence
    )
    stamp = clock.now()
    with transaction(conn):
        current = _version(conn, project_id)
        if current != expected_version:
            raise Conflict(expected_version, current)
        head = _head(conn, project_id)
        if head and head["title"] == title and head["body"] == body:
            return current
        if head and head["session_id"] == session_id:
            records.revise(conn, head["id"], stamp=stamp, project_id=project_id, title=title, body=body)
        else:
            new_id = ids.new_id()
            if head:
                records.retire(conn, head["id"], stamp=stamp, project_id=project_id, by=new_id, valid_to=stamp)
            records.insert(conn, project_id, type="handover", key=KEY, title=title, body=body, confidence=confidence,
                           stamp=stamp, source=source, session_id=session_id, record_id=new_id)
        db.set_meta_value(conn, _meta_key(project_id), current + 1)
    return current + 1


def merge(base: dict, mine: dict, theirs: dict) -> dict:
    """Three-way merge: my changes relative to ``base`` applied on top of ``theirs``.

    Lists: their items minus the ones I removed, then the ones I added. Task: whoever changed
    it wins; when both did, mine is current and theirs goes to ``also_in_progress``.
    """
    base, mine, theirs = normalize(base), normalize(mine), normalize(theirs)
    out: dict = {}
    for name in LISTS:
        removed = set(base[name]) - set(mine[name])
        added = [i for i in mine[name] if i not in base[name]]
        kept = [i for i in theirs[name] if i not in removed]
        out[name] = (kept + [i for i in added if i not in kept])[:MAX_ITEMS]
    b, m, t = base["current_task"], mine["current_task"], theirs["current_task"]
    out["current_task"] = t if m == b else m
    if m != b and t not in ("", b, m) and t not in out["also_in_progress"]:
        out["also_in_progress"] = (out["also_in_progress"] + [t])[:MAX_ITEMS]
    out["also_in_progress"] = [i for i in out["also_in_progress"] if i != out["current_task"]]
    return out


def save(
    conn: sqlite3.Connection, project_id: str, session_id: str, fields: dict, *, base: dict | None = None,
    retries: int = 32, **kwargs,
) -> int:
    """Write this session's handover; on Conflict re-read, merge and retry. The new version.

    ``fields`` is the whole handover as this writer wants it, based on ``base`` (a ``read``
    result; default: read now). Raises Conflict only after ``retries`` lost races in a row.
    """
    base = base if base is not None else read(conn, project_id)
    mine = normalize(fields)
    for _ in range(retries):
        try:
            return write(conn, project_id, session_id, mine, base["version"], **kwargs)
        except Conflict:
            theirs = read(conn, project_id)
            mine = merge(base["fields"], mine, theirs["fields"])
            base = theirs
    current = read(conn, project_id)["version"]
    raise Conflict(base["version"], current)
