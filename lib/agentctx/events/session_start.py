"""SessionStart: inject the digest (``injection.digest``), import a changed team file, register the
session and account what was injected; queued notices go to the user in one line."""

from __future__ import annotations

import os
import sqlite3

from agentctx import budgets, paths, prepare, project
from agentctx.hookio import HOOK_BUSY_MS, HookEvent
from agentctx.injection import digest
from agentctx.logs import log
from agentctx.store import db, projects, sessions, spend


def _team_import(conn: sqlite3.Connection, proj: project.Project) -> None:
    """Read .agentctx/context.md back when it changed (a stat and one query when it did not)."""
    from agentctx.sharing import teamsync

    try:
        done = teamsync.at_session_start(conn, proj)
    except teamsync.Unreadable:  # logged once (safefile) and named in the notice
        return
    except (OSError, ValueError, sqlite3.Error) as exc:  # a bad team file must not cost the digest
        log("SessionStart", f"team import skipped: {type(exc).__name__}: {exc}")
        return
    if done:
        log("SessionStart", f"team file {done}")


def _login_notice() -> str | None:
    """The once-only line saying extraction runs through the person's Claude Code login (``vialogin``)."""
    from agentctx import vialogin

    try:
        return vialogin.notice_at_start()
    except (OSError, ValueError) as exc:
        log("SessionStart", f"login notice skipped: {type(exc).__name__}: {exc}")
        return None


def _ignored_files(proj: project.Project) -> str | None:
    """One line naming the repository's files agentctx refuses to read (``safefile``): its own files are
    checked now (a few ``lstat``), the others come from the readers that refused them."""
    from agentctx import project_settings, safefile
    from agentctx.sharing import drift, teamsync

    own = (os.path.join(project_settings.DIR, project_settings.NAME), *drift.FILES,
           os.path.join(teamsync.DIR, teamsync.NAME), os.path.join(teamsync.DIR, ".gitattributes"))
    try:
        return safefile.notice(proj.root, probe=own)
    except (OSError, ValueError) as exc:
        log("SessionStart", f"file check skipped: {type(exc).__name__}: {exc}")
        return None


def on_session_start(event: HookEvent) -> dict | None:
    """SessionStart hook: inject the digest; show queued notices to the user."""
    sid, source = event.session_id, event.source
    proj = project.detect(event.cwd)
    try:
        conn = db.connect(busy_ms=HOOK_BUSY_MS)
    except db.StoreError as exc:  # a store from a newer agentctx (or unwritable and behind): say so, do nothing
        log("SessionStart", f"store refused: {exc}")
        return {"systemMessage": budgets.clip(f"agentctx is off for this session: {exc}.", 1000)}
    read_only = db.is_read_only(conn)
    try:
        _team_import(conn, proj)
        dig = digest.current(conn, proj)
        if source == "compact":  # the session's anchor state first (see capture/handover.py); never cached
            from agentctx.capture import handover

            try:
                lead = handover.anchor_blocks(conn, sid)
            except (sqlite3.Error, ValueError) as exc:  # a bad anchor must not cost the digest
                log("SessionStart", f"anchor skipped: {type(exc).__name__}: {exc}")
                lead = []
            dig = digest.build(conn, proj, lead=lead) if lead else dig
        try:
            with db.transaction(conn):
                projects.register(conn, proj)
                sessions.start(conn, sid, proj.id, proj.root, source)
                sessions.follow(conn, sid, proj.id, event.cwd)  # where the MCP tools answer (capture/cwd_changed.py)
                sessions.account(conn, sid, proj.id, "SessionStart", dig.record_ids, dig.tokens)
        except sqlite3.Error as exc:  # read-only or locked store: inject anyway
            log("SessionStart", f"accounting skipped: {type(exc).__name__}: {exc}")
        if not read_only:
            try:  # a session whose SessionEnd was cancelled is closed now (one indexed query when none is)
                from agentctx.events.session_end import close_left_open

                close_left_open(conn, proj, event)
            except (sqlite3.Error, OSError) as exc:
                log("SessionStart", f"closing sessions left open skipped: {type(exc).__name__}: {exc}")
        try:
            capped = spend.notice(conn, sid)
        except sqlite3.Error as exc:  # the cap line must not cost the digest
            log("SessionStart", f"spending check skipped: {type(exc).__name__}: {exc}")
            capped = None
    finally:
        conn.close()
    output: dict = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": dig.text}}
    notices = db.take_notices() + ([capped] if capped else [])
    login = _login_notice()
    if login and login not in notices:  # the worker may have queued the same line
        notices.append(login)
    if read_only:
        notices.append(f"agentctx: the store at {paths.db_path()} is read-only for this user: context is injected, "
                       "but nothing from this session will be saved (make the file and its folder writable).")
    ignored = _ignored_files(proj)
    if ignored:
        notices.append(ignored)
    getting_ready = prepare.at_session_start()  # first session of this plugin folder: envs prepared detached
    if getting_ready:
        notices.insert(0, getting_ready)
    if notices:
        output["systemMessage"] = budgets.clip(" ".join(notices), 1000)
    return output
