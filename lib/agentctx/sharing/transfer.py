"""Moving records in and out: JSONL import/export (lossless) and the Markdown export."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from agentctx import clock
from agentctx.kinds import HEADINGS, TYPES
from agentctx.logs import log
from agentctx.safefile import load_json
from agentctx.store import projects as project_rows
from agentctx.store import records

BATCH = 1000


@dataclass
class ImportReport:
    added: int = 0
    existing: int = 0
    refused: int = 0  # ids another project holds here (logged with both project ids)
    errors: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"added": self.added, "existing": self.existing, "refused": self.refused,
                "errors": [{"line": n, "error": e} for n, e in self.errors]}


def import_jsonl(
    conn: sqlite3.Connection,
    project_id: str,
    lines: Iterable[str | Exception],
    *,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import JSONL records; bad lines are reported by number and the good ones still land (an Exception
    among ``lines`` is that line's error: the reader refused it).

    Lines are committed in batches of 1,000; ``dry_run`` validates everything and rolls back.
    """
    report = ImportReport()
    pending = 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        for number, line in enumerate(lines, start=1):
            if progress:
                progress(1)
            if isinstance(line, Exception):  # the reader's own refusal (a line over its bound)
                report.errors.append((number, f"invalid: {line}"))
                continue
            if number == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark, as some editors write
            if not line.strip():
                continue
            conn.execute("SAVEPOINT line")
            try:
                outcome = records.restore(conn, project_id, load_json(line))
            except records.ForeignRecord as exc:
                conn.execute("ROLLBACK TO line")
                conn.execute("RELEASE line")
                report.refused += 1
                report.errors.append((number, f"refused: {exc}"))
                log("import", f"line {number}: {exc}")
                continue
            except (ValueError, TypeError, KeyError) as exc:
                conn.execute("ROLLBACK TO line")
                message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                report.errors.append((number, f"{type(exc).__name__ if isinstance(exc, json.JSONDecodeError) else 'invalid'}: {message}"))
                conn.execute("RELEASE line")
                continue
            conn.execute("RELEASE line")
            if outcome == "added":
                report.added += 1
            else:
                report.existing += 1
            pending += 1
            if pending >= BATCH and not dry_run:
                conn.execute("COMMIT")
                conn.execute("BEGIN IMMEDIATE")
                pending = 0
        conn.execute("ROLLBACK" if dry_run else "COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back already (a full disk): keep the real error
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        raise
    return report


def iter_records(conn: sqlite3.Connection, project_id: str | None, *, include_superseded: bool = True) -> Iterator[dict]:
    """Records of one project (None: all), oldest first."""
    return records.dump(conn, project_id, include_superseded=include_superseded)


def export_jsonl(conn: sqlite3.Connection, project_id: str | None) -> Iterator[str]:
    """Every record as one JSON line (the import format)."""
    for rec in iter_records(conn, project_id):
        yield json.dumps(rec, ensure_ascii=False)


def _md_record(rec: dict) -> list[str]:
    flags = [f"id `{rec['id']}`", f"valid from {rec['valid_from'][:10]}", rec["confidence"], f"source {rec['source']}"]
    if rec["pinned"]:
        flags.append("pinned")
    if rec["key"]:
        flags.append(f"key `{rec['key']}`")
    if rec["scope"] == "global":
        flags.append("global")
    out = [f"#### {rec['title']}", "", "*" + " · ".join(flags) + "*", ""]
    if rec["body"]:
        out += [rec["body"], ""]
    return out


def export_markdown(conn: sqlite3.Connection, project_id: str | None) -> Iterator[str]:
    """The store as organized Markdown: per project, per type, then the superseded history."""
    projects = {r["id"]: r for r in project_rows.every(conn)}
    ids = [project_id] if project_id else records.project_ids(conn)
    yield f"# agentctx export ({clock.now()[:10]})\n"
    for pid in ids:
        info = projects.get(pid, {"name": pid, "remote": None, "root": None})
        yield f"## Project {info['name']}\n"
        yield f"*id `{pid}`" + (f" · {info['remote']}" if info.get("remote") else "") + (
            f" · {info['root']}" if info.get("root") else "") + "*\n"
        recs = list(iter_records(conn, pid))
        current = [r for r in recs if not r["superseded_at"]]
        if not recs:
            yield "_No records._\n"
        for rtype in TYPES:
            group = [r for r in current if r["type"] == rtype]
            if not group:
                continue
            group.sort(key=lambda r: (not r["pinned"], r["valid_from"]), reverse=False)
            yield f"### {HEADINGS[rtype]} ({len(group)})\n"
            for rec in group:
                yield "\n".join(_md_record(rec))
        old = [r for r in recs if r["superseded_at"]]
        if old:
            yield f"### History: superseded ({len(old)})\n"
            for rec in sorted(old, key=lambda r: r["valid_from"]):
                span = f"{rec['valid_from'][:10]} → {(rec['valid_to'] or rec['superseded_at'])[:10]}"
                yield (f"- ~~{rec['title']}~~ ({rec['type']}, valid {span}, id `{rec['id']}`), "
                       f"superseded by `{rec['superseded_by']}`")
            yield ""
