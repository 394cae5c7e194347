"""When SessionStart's answer may be sealed (``ready``), and what a seal names.

Two places seal: a whole SessionStart that had nothing to say but the digest (``events.session_start``),
and the background work once it is done (``after_work``: the extraction worker's final run of a session,
the consolidation pass), so the first start after a session is served sealed as well. Both ask ``quiet``,
the one rule for "SessionStart would say nothing but the digest, now or as time passes", and name the same
files (``inputs``).
"""

from __future__ import annotations

import os
import sqlite3
import time

from agentctx import paths, prepare, project, safefile, settings, vialogin
from agentctx.injection import digest, ready
from agentctx.logs import log
from agentctx.sharing import drift, teamsync
from agentctx.store import db, spend

AFTER_WORK_BUSY_MS = 2000


def own_files() -> tuple[str, ...]:
    """agentctx's own files in a repository, relative to its root (SessionStart checks them every time)."""
    from agentctx import project_settings

    return (os.path.join(project_settings.DIR, project_settings.NAME), *drift.FILES,
            os.path.join(teamsync.DIR, teamsync.NAME), os.path.join(teamsync.DIR, ".gitattributes"))


def quiet(conn: sqlite3.Connection, proj: project.Project) -> bool:
    """Whether a SessionStart in ``proj`` would say nothing but the digest, now and while nothing changes: a
    writable store, no queued notice, no team file to import, no spending cap reached, no login line left
    to show, the plugin's environments prepared, none of agentctx's own files refused. (Sessions left open
    are not asked about: the next whole start closes them.)"""
    if db.is_read_only(conn) or ready.listing(paths.sub("notices")):
        return False
    if teamsync.changed(conn, proj.id, proj.root) is not None or spend.notice(conn) is not None:
        return False
    if not vialogin.silent_at_start():
        return False
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if root and not prepare.settled(root):
        return False
    return safefile.notice(proj.root, probe=own_files()) is None


def seal(cwd: str, proj: project.Project, dig: digest.Digest, probes: list[str], since_ns: int) -> bool:
    """Seal ``dig`` as SessionStart's answer in ``cwd``, naming every file it was read from: the store, the
    git files that gave ``proj`` (``probes``, from ``project.detect``), the settings, the team file, the
    login and preparation state, the digest cache, agentctx's own repository files and the notice folders."""
    store = paths.db_path()
    own, folders = safefile.notice_inputs(proj.root, own_files())
    files = [store, *probes, *settings.inputs(proj.root), teamsync.file_path(proj.root), vialogin.state_file(),
             digest.cache_path(proj.id), *own]
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if root:
        files += [prepare.marker(root), os.path.join(root, ".claude-plugin", "plugin.json")]
    return ready.seal(cwd, project={"id": proj.id, "name": proj.name, "root": proj.root, "remote": proj.remote},
                      cache=digest.cache_path(proj.id), generation=dig.generation, sections=dig.sections,
                      files=files, wal=store + "-wal", listings=[paths.sub("notices"), *folders], since_ns=since_ns)


def after_work(cwd: str) -> bool:
    """Seal SessionStart's answer in ``cwd`` once this process's work on the store is done: waits out the
    margin of its own last writes, reads the digest (building its cache when it is behind, then once more
    after the margin) and seals when ``quiet``. Never raises; whether it sealed."""
    try:
        for _ in range(2):
            time.sleep(2 * ready.MARGIN_NS / 1e9)  # this process's last writes, and its cache, age past the margin
            since = time.time_ns()
            probes: list[str] = []
            proj = project.detect(cwd, probes=probes)
            conn = db.connect(busy_ms=AFTER_WORK_BUSY_MS)
            try:
                if not quiet(conn, proj):
                    return False
                dig = digest.current(conn, proj)
            finally:
                conn.close()
            if seal(cwd, proj, dig, probes, since):
                return True
    except (OSError, ValueError, sqlite3.Error, db.StoreError) as exc:
        log("seal", f"not sealed after work: {type(exc).__name__}: {exc}")
    return False
