"""Forgetting a record: the one rule behind ``agentctx forget`` / ``purge`` and the dashboard's buttons.

* **forget**: the record leaves the current view with no replacement. It is retired
  (``superseded_at`` set, no successor, ``valid_to`` now), so search, the digest, every injection and
  the MCP tools stop showing it, while ``agentctx history`` and ``get`` still do, marked as forgotten.
* **purge**: the record is removed from every place agentctx keeps on disk, and the report says what
  went where: its row in the store (or the cold partition) and the FTS index (rebuilt, then the file
  vacuumed with ``secure_delete`` and the WAL truncated, so the text is not left in free pages),
  its links, edges, injection and drift rows, anchors and session metadata quoting it, its vector
  (the sqlite-vec mirror is rebuilt from the vector table by the next consolidation pass when this
  process cannot load the extension), the digest cache and ranking that carried it, lines naming it
  in the anchor backups, the daily logs, the notices and the log files, and its block in the team file
  ``.agentctx/context.md`` (teammates' stores retire it when they pull that change; their copies and
  git history are theirs to rewrite). With team remotes configured (``agentctx remote``) the purge is
  also queued for each: gone from the server, and from teammates' stores, at the next syncs.

Both are scoped to one project: only that project's records (a global preference counts as its
recording project's). The file scrubbing is ``rescan``'s (issue 11), with a cleaner that drops the
lines naming the record instead of redacting.
"""

from __future__ import annotations

import os
import sqlite3

from agentctx import clock
from agentctx.store import db, records
from agentctx.store import purge as store_purge

MIN_WORD_CHARS = 5  # shorter words are common English: they never single a record out
MAX_WORDS = 60  # words of a record checked for being its own (each check is one scan)
DERIVED_TYPES = ("handover",)  # records agentctx writes from others' words: regenerated, not kept as they are
NEEDLE_CHARS = 60  # a title or body is matched by its first characters: logs and anchors clip long text
MIN_NEEDLE_CHARS = 12  # shorter titles ("Use tabs") are too common to match safely: the id still is


def forget(conn: sqlite3.Connection, project_id: str, ref: str) -> dict:
    """Retire a current record of the project without a replacement; the record as it is now."""
    rec = records.resolve(conn, ref, project_id)
    if rec["project_id"] != project_id:
        raise records.RecordError(f"record {rec['id']} belongs to another project (a global preference recorded "
                                  "there): forget it from that project")
    if rec["superseded_at"]:
        how = f"superseded by {rec['superseded_by']}" if rec["superseded_by"] else "forgotten"
        raise records.RecordError(f"record {rec['id']} is already {how}; purge it to remove it from disk")
    stamp = clock.now()
    with db.transaction(conn):
        records.retire(conn, rec["id"], stamp=stamp, project_id=project_id, valid_to=stamp, mark_updated=True)
    return records.get(conn, rec["id"], project_id)


def needles(rec: dict) -> list[str]:
    """What identifies the record's text in other places: its id, and its title and body (first characters)."""
    out = [rec["id"]]
    for text in (rec["title"], rec["body"] or ""):
        text = " ".join(text.split())
        if len(text) >= MIN_NEEDLE_CHARS:
            out.append(text[:NEEDLE_CHARS])
    return out


def own_words(conn: sqlite3.Connection, rec: dict) -> list[str]:
    """The record's distinctive words: those of its title and body (``MIN_WORD_CHARS`` or longer) that no
    other record holds, handovers aside (they quote prompts, so they are cleaned, not counted). Any
    copy of such a word elsewhere came from this record."""
    from agentctx import lexicon

    seen: dict[str, None] = {}
    for tok in lexicon.tokens(f"{rec['title']}\n{rec['body'] or ''}"):
        if len(tok) >= MIN_WORD_CHARS and tok.isalnum() and not tok.isdigit():
            seen.setdefault(tok, None)
        if len(seen) >= MAX_WORDS:
            break
    return [w for w in seen if not store_purge.used_elsewhere(conn, rec["id"], w, DERIVED_TYPES)]


def _hit(text: str, marks: list[str]) -> bool:
    low = text.lower()
    flat = " ".join(low.split())
    return any(m in low or m in flat for m in marks)


def _line_cleaner(marks: list[str]):
    """text -> (text without the lines naming the record, lines dropped). Case-insensitive."""
    marks = [m.lower() for m in marks]

    def clean(text: str) -> tuple[str, int]:
        kept, dropped = [], 0
        for line in text.splitlines(keepends=True):
            if _hit(line, marks):
                dropped += 1
            else:
                kept.append(line)
        return "".join(kept), dropped
    return clean


def _value_cleaner(marks: list[str]):
    """For stored values (anchor items, session metadata, drift details): a value naming the record is
    replaced whole."""
    marks = [m.lower() for m in marks]

    def clean(text: str) -> tuple[str, int]:
        return ("[purged]", 1) if _hit(text, marks) else (text, 0)
    return clean


def purge(conn: sqlite3.Connection, project_id: str, ref: str, *, dry_run: bool = False,
          edit_claude_md: bool = False) -> dict:
    """Remove a record of the project from every place on disk (see the module docstring); the report.
    With ``dry_run``, what would be removed (nothing is). ``edit_claude_md`` (``agentctx purge``, the
    user's own command): the CLAUDE.md lines agentctx wrote for it (``sync --yes``) are removed too;
    otherwise they are named in the report with the command that removes them."""
    from agentctx.maintenance import rescan
    from agentctx.sharing import teamsync
    from agentctx.sharing.drift import DriftError
    from agentctx.store import scrub

    rec = store_purge.find(conn, ref, project_id)
    words = own_words(conn, rec)
    marks = needles(rec) + words
    report: dict = {"id": rec["id"], "type": rec["type"], "title": rec["title"], "dry_run": dry_run,
                    "was": "archived (cold partition)" if rec["table"] == "records_archive" else
                    "current" if not rec["superseded_at"] else "retired"}
    try:  # the team file first: an import between the two steps must not bring it back
        if dry_run:
            path = teamsync.file_path(_root(conn, project_id) or "")
            report["team_file"] = path if os.path.isfile(path) and rec["id"] in _read(path) else None
        else:
            report["team_file"] = teamsync.drop_blocks(conn, project_id, {rec["id"]})
    except (DriftError, OSError, ValueError) as exc:
        report["team_file"] = None
        report["team_file_error"] = str(exc)
    from agentctx.store import remote as remote_store

    report["remotes"] = [r["name"] for r in remote_store.every(conn)]  # team servers: gone there at the next sync
    if dry_run:
        report["store"] = {"rows": 1}
    else:
        with db.transaction(conn):  # queued first: a crash before the delete still purges everywhere
            remote_store.queue_purge(conn, rec["id"], project_id)
            remote_store.drop_queued(conn, rec["id"])
        report["store"] = store_purge.delete(conn, rec["id"], project_id)
    report["own_words"] = len(words)
    report.update(_quotes(conn, project_id, rec["id"], marks, words, dry_run))
    report["claude_md"] = _claude_md(conn, project_id, rec["id"], marks, edit=edit_claude_md and not dry_run)
    report["moved_aside"] = _moved_aside(project_id, rec["id"], marks, words, dry_run)
    report["vectors"] = _vectors(rec["id"], dry_run)
    files: dict[str, dict] = {}
    for kind, found in rescan._files().items():
        if kind == "digests":  # JSON caches: removed whole when they carry it (rebuilt when next needed)
            hits = [p for p in found if any(m in _read(p) for m in marks)]
            if not dry_run:
                for p in hits:
                    os.remove(p)
            files[kind] = {"files": len(found), "changed": len(hits), "lines": 0}
            continue
        counts = [rescan._rewrite(p, dry_run, clean=_line_cleaner(marks)) for p in found]
        files[kind] = {"files": len(found), "changed": sum(1 for n in counts if n), "lines": sum(counts)}
    report["files"] = files
    if not dry_run:
        report["compacted"] = scrub.compact(conn)
    return report


def _quotes(conn: sqlite3.Connection, project_id: str, record_id: str, marks: list[str], words: list[str],
            dry_run: bool) -> dict:
    """What quotes the record inside a store: values in anchors, sessions and drift rows (replaced),
    handovers (regenerated), neighbours' retrieval expansion (cleared, worked out again), and the
    user's own records quoting it (named)."""
    from agentctx import lexicon
    from agentctx.store import scrub

    out: dict = {"quoted": scrub.scrub(conn, _value_cleaner(marks), dry_run=dry_run,
                                       tables=("anchors", "sessions", "drift"))}
    out["derived"], out["quoted_by"] = _derived_records(conn, project_id, record_id, marks, dry_run)
    out["expansion"] = 0
    if not dry_run:
        with db.transaction(conn):
            out["expansion"] = store_purge.forget_expansion(conn, sorted({lexicon.stem(w) for w in words}))
    return out


def _derived_records(conn: sqlite3.Connection, project_id: str, record_id: str, marks: list[str],
                     dry_run: bool) -> tuple[int, list[dict]]:
    """Other records quoting the purged one. Handovers are regenerated without the lines naming it (a
    title naming it becomes its first remaining line); any other record is the user's: named, with the
    commands that change it. (handovers rewritten, [{id, type, command}])."""
    from agentctx.capture import handover

    clean = _line_cleaner(marks)
    rewritten, named = 0, []
    with db.transaction(conn):
        for other in store_purge.quoting(conn, project_id, [m for m in marks if m != record_id] + [record_id]):
            if other["id"] == record_id:
                continue
            if other["type"] not in DERIVED_TYPES:
                named.append({"id": other["id"], "type": other["type"],
                              "command": f"agentctx edit {other['id']}  (or: agentctx purge {other['id']} --yes)"})
                continue
            body, _ = clean(other["body"] or "")
            title = other["title"]
            if clean(title)[1]:
                first = next((ln.strip(" -*\t") for ln in body.splitlines() if ln.strip(" -*\t")), "")
                title = first[:120] or handover.NO_TASK
            rewritten += 1
            if not dry_run:
                store_purge.rewrite(conn, other["table"], other["id"], title, body)
    return rewritten, named


def _claude_md(conn: sqlite3.Connection, project_id: str, record_id: str, marks: list[str], *, edit: bool) -> dict:
    """CLAUDE.md lines naming the record. Those agentctx wrote (``sync --yes``, marked ``<!-- agentctx ID
    -->``) are removed when ``edit``, else named with the command; others are the user's: named."""
    from agentctx.fsio import write_atomic
    from agentctx.sharing.drift import FILES

    root = _root(conn, project_id)
    out: dict = {"removed": [], "named": []}
    if not root:
        return out
    tag = f"<!-- agentctx {record_id} -->"
    low = [m.lower() for m in marks]
    for name in FILES:
        path = os.path.join(root, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        text = _read(path)
        kept, removed = [], []
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            if tag in line and edit:
                removed.append(number)
                continue
            kept.append(line)
            if tag in line:
                out["named"].append({"path": path, "line": number, "command": f"agentctx purge {record_id} --yes"})
            elif _hit(line, low):
                out["named"].append({"path": path, "line": number, "command": f"edit {name} by hand (your text)"})
        if removed:
            write_atomic(path, "".join(kept).encode("utf-8"))
            out["removed"] += [f"{path}:{n}" for n in removed]
    return out


def _moved_aside(project_id: str, record_id: str, marks: list[str], words: list[str], dry_run: bool) -> dict:
    """Stores moved aside as damaged (``agentctx.db.corrupt-*``): each that still opens is purged the same
    way (the record, what quotes it, the index rebuilt, the file vacuumed); one that does not is named
    with the command that removes it (``agentctx doctor --repair`` would merge what it holds back)."""
    import glob

    from agentctx import paths
    from agentctx.store import scrub

    out: dict = {"cleaned": [], "named": []}
    for copy in sorted(glob.glob(paths.db_path() + ".corrupt-*")):
        if copy.endswith(("-wal", "-shm", ".salvaged")):
            continue
        try:
            side = sqlite3.connect(copy, timeout=5, isolation_level=None)
            side.row_factory = sqlite3.Row
            try:
                held = any(side.execute(f"SELECT 1 FROM {t} WHERE id = ?", (record_id,)).fetchone()
                           for t in store_purge.TABLES)
                quoted = _quotes(side, project_id, record_id, marks, words, True)
                if not (held or quoted["derived"] or any(n["rows"] for n in quoted["quoted"].values())):
                    continue
                if not dry_run:
                    with db.transaction(side):
                        for t in store_purge.TABLES:
                            side.execute(f"DELETE FROM {t} WHERE id = ?", (record_id,))
                    _quotes(side, project_id, record_id, marks, words, False)
                    scrub.compact(side)
                out["cleaned"].append(copy)
            finally:
                side.close()
        except sqlite3.Error as exc:
            out["named"].append({"path": copy, "error": str(exc), "command": f"rm -f '{copy}' '{copy}-wal' '{copy}-shm'"})
    return out


def _root(conn: sqlite3.Connection, project_id: str) -> str | None:
    from agentctx.sharing.drift import DriftError, project_root

    try:
        return project_root(conn, project_id)[1]
    except DriftError:
        return None


def _read(path: str) -> str:
    from agentctx import safefile

    try:
        return safefile.read_text(path, safefile.TEXT_LIMIT * 16, binary_ok=True) or ""
    except (OSError, safefile.Refused):
        return ""


def _vectors(record_id: str, dry_run: bool) -> dict:
    """Remove the record's vector from ``vectors.db`` (when that file exists)."""
    from agentctx.store import vectors

    if not os.path.exists(vectors.path()):
        return {"removed": 0}
    try:
        store = vectors.Store(busy_ms=5000)
    except Exception as exc:  # noqa: BLE001 - an unreadable vector file: say so, the rest is done
        return {"removed": 0, "error": f"{type(exc).__name__}: {exc}"}
    try:
        if dry_run:
            return {"removed": int(record_id in store.ids())}
        removed = store.delete([record_id])
        out: dict = {"removed": removed}
        if removed and store.backend != "vec0":
            out["index"] = "the sqlite-vec mirror is rebuilt from the vector table at the next consolidation pass"
        if removed:
            try:
                store.execute("VACUUM")  # freed pages would still hold the id
                out["vacuumed"] = True
            except Exception as exc:  # noqa: BLE001 - e.g. a vec0 table this process cannot load
                out["vacuumed"] = False
                out["vacuum_error"] = str(exc)
        return out
    finally:
        store.close()
