"""``agentctx redact --rescan``: today's redaction rules applied to everything already stored.

Text stored before a rule existed (a ``glpat-`` token in a record, an ``npm_`` token in a log line)
is found and replaced in: the store's text columns and its FTS index (``store.scrub``), the digest
cache, the anchor backups, the team-sync base copies, the notices, the logs (and the temp-dir log
the hooks fall back to) and each known project's team file ``.agentctx/context.md``. Files are
rewritten atomically and owner-only. Stores moved aside as damaged are listed, not opened.
"""

from __future__ import annotations

import glob
import os
import sqlite3

from agentctx import fsio, logs, paths, redact, safefile
from agentctx.store import overview, scrub

REWRITE_LIMIT = 256 * 1024 * 1024  # a file cleaned in place is read whole; larger ones are left alone


def _clean(text: str) -> tuple[str, int]:
    out, found = redact.scan(text)
    return out, sum(found.values())


def _files() -> dict[str, list[str]]:
    """The files under the data directory that hold stored text, by kind."""
    data = paths.data_dir()
    fallback = os.path.join(os.environ.get("TMPDIR") or ("C:\\Temp" if os.name == "nt" else "/tmp"),
                            "agentctx-hooks.log")
    return {
        "digests": sorted(glob.glob(os.path.join(data, "digests", "*.json"))),
        "anchor_backups": sorted(glob.glob(os.path.join(data, "anchors", "*", "*.md"))),
        "team_sync_copies": sorted(glob.glob(os.path.join(data, "teamsync", "*.md"))),
        "notices": sorted(glob.glob(os.path.join(data, "notices", "*.txt"))),
        "logs": [p for p in (logs.log_path(), logs.log_path() + ".1", fallback) if os.path.isfile(p)],
        "day_logs": sorted(glob.glob(os.path.join(data, "logs", "*", "*.md"))),  # sharing/daylog.py
    }


def _rewrite(path: str, dry_run: bool, *, private: bool = True, clean=_clean) -> int:
    """Clean one text file in place (owner-only unless ``private`` is False: the team file keeps its
    mode) with ``clean`` (text -> (text, found); default: today's redaction rules, ``agentctx purge``
    passes its own); how many it found (0: left untouched)."""
    try:  # a team file is the repository's: never a device, a FIFO or a symlink written through
        data = safefile.read_bytes(path, REWRITE_LIMIT)
        if data is None or os.path.islink(path):
            return 0
        text = data.decode("utf-8", errors="surrogateescape")
    except (OSError, safefile.Refused):
        return 0
    out, found = clean(text)
    if found and not dry_run:
        mode = os.stat(path).st_mode & 0o777
        fsio.write_atomic(path, out.encode("utf-8", errors="surrogateescape"))
        os.chmod(path, (mode & 0o700 or 0o600) if private else mode)
    return found


def team_files(conn: sqlite3.Connection) -> list[str]:
    """Every known project's team file that exists on this machine."""
    from agentctx.sharing import teamsync

    out = []
    for proj in overview.projects(conn):
        root = proj.get("root")
        if root and os.path.isfile(teamsync.file_path(root)):
            out.append(teamsync.file_path(root))
    return sorted(set(out))


def run(conn: sqlite3.Connection, *, dry_run: bool = False) -> dict:
    """Scrub the store and the files; a report of what was found (and, unless ``dry_run``, replaced)."""
    report: dict = {"dry_run": dry_run, "store": scrub.scrub(conn, _clean, dry_run=dry_run)}
    changed_rows = sum(t["rows"] for t in report["store"].values())
    if not dry_run and changed_rows:
        report["compacted"] = scrub.compact(conn)
    files: dict[str, dict[str, int]] = {}
    groups = _files()
    groups["team_files"] = team_files(conn)
    for kind, found_files in groups.items():
        counts = [_rewrite(p, dry_run, private=kind != "team_files") for p in found_files]
        files[kind] = {"files": len(found_files), "changed": sum(1 for n in counts if n),
                       "secrets": sum(counts)}
    report["files"] = files
    report["damaged_copies_not_scrubbed"] = sorted(glob.glob(paths.db_path() + ".corrupt-*"))
    report["secrets"] = (sum(t["secrets"] for t in report["store"].values())
                         + sum(f["secrets"] for f in files.values()))
    return report
