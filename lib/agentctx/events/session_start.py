"""SessionStart: inject the digest (``injection.digest``), import a changed team file, note the session
(``store.starts``: folded into the store by the next process that touches it) and what was injected;
queued notices go to the user in one line.

When nothing changed since a SessionStart in this folder found its digest current and had nothing else to
say (or the last session's background work found the same: ``injection.sealing``), a new session's answer is served
from that seal (``injection.ready``) on ``stat`` checks alone: the store is
not opened, and nothing but the standard library's smallest modules is imported. Anything else runs the
whole handler, which seals its answer for the next start when it can.
"""

from __future__ import annotations

import time

from agentctx import paths, project
from agentctx.hookio import HOOK_BUSY_MS, HookEvent
from agentctx.injection import ready
from agentctx.logs import log
from agentctx.store import starts


def _team_import(conn, proj: project.Project) -> bool:
    """Read .agentctx/context.md back when it changed (a stat and one query when it did not). Whether
    there was nothing to do."""
    import sqlite3

    from agentctx.sharing import teamsync

    try:
        done = teamsync.at_session_start(conn, proj)
    except teamsync.Unreadable:  # logged once (safefile) and named in the notice
        return False
    except (OSError, ValueError, sqlite3.Error) as exc:  # a bad team file must not cost the digest
        log("SessionStart", f"team import skipped: {type(exc).__name__}: {exc}")
        return False
    if done:
        log("SessionStart", f"team file {done}")
    return not done


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
    from agentctx import safefile
    from agentctx.injection import sealing

    try:
        return safefile.notice(proj.root, probe=sealing.own_files())
    except (OSError, ValueError) as exc:
        log("SessionStart", f"file check skipped: {type(exc).__name__}: {exc}")
        return None


def on_session_start(event: HookEvent) -> dict | None:
    """SessionStart hook: inject the digest; show queued notices to the user."""
    # Only a new session is served sealed: after a compaction the anchor leads, and a resumed or cleared session
    # has a past of its own (its spending may have reached the session's cap: a line the seal cannot know).
    if event.source == "startup":
        sealed = ready.serve(event.cwd)
        if sealed is not None:
            _note(event, sealed.project, sealed.record_ids, sealed.tokens)
            return _output(sealed.text)
    return _whole(event)


def _output(text: str, notices: list[str] | None = None) -> dict:
    output: dict = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    if notices:
        from agentctx import budgets

        output["systemMessage"] = budgets.clip(" ".join(notices), 1000)
    return output


def _note(event: HookEvent, proj: dict, record_ids: list[str], tokens: int) -> None:
    """Leave the session's start for the store (``store.starts``): its row, project, folder, what was injected."""
    try:
        starts.note(event.session_id, proj, event.cwd, event.source, record_ids, tokens)
    except OSError as exc:  # an unwritable data folder: inject anyway
        log("SessionStart", f"session not noted: {type(exc).__name__}: {exc}")


def _whole(event: HookEvent) -> dict | None:
    """The whole SessionStart: open the store, build or read the digest, say what there is to say, and seal
    the answer for the next start when there was nothing to say but the digest."""
    import sqlite3

    from agentctx import budgets, prepare
    from agentctx.injection import digest, sealing
    from agentctx.store import db, spend

    since = time.time_ns()  # before anything is read: what changes after this cannot be sealed over
    sid, source = event.session_id, event.source
    probes: list[str] = []
    proj = project.detect(event.cwd, probes=probes)
    try:
        conn = db.connect(busy_ms=HOOK_BUSY_MS)
    except db.StoreError as exc:  # a store from a newer agentctx (or unwritable and behind): say so, do nothing
        log("SessionStart", f"store refused: {exc}")
        return {"systemMessage": budgets.clip(f"agentctx is off for this session: {exc}.", 1000)}
    read_only = db.is_read_only(conn)
    quiet = not read_only and source != "compact"
    try:
        quiet = _team_import(conn, proj) and quiet
        dig = digest.current(conn, proj)
        if source == "compact":  # the session's anchor state first (see capture/handover.py); never cached
            from agentctx.capture import handover

            try:
                lead = handover.anchor_blocks(conn, sid)
            except (sqlite3.Error, ValueError) as exc:  # a bad anchor must not cost the digest
                log("SessionStart", f"anchor skipped: {type(exc).__name__}: {exc}")
                lead = []
            dig = digest.build(conn, proj, lead=lead) if lead else dig
        if not read_only:
            try:  # a session whose SessionEnd was cancelled is closed now (one indexed query when none is)
                from agentctx.events.session_end import close_left_open

                # one closed is a write (no seal); one not yet quiet for long enough waits for a later whole start
                quiet = not close_left_open(conn, proj, event) and quiet
            except (sqlite3.Error, OSError) as exc:
                log("SessionStart", f"closing sessions left open skipped: {type(exc).__name__}: {exc}")
                quiet = False
            # a file, not a row: a start that wrote the store could not seal (``sessions.settle`` folds it in)
            _note(event, {"id": proj.id, "name": proj.name, "root": proj.root, "remote": proj.remote},
                  dig.record_ids, dig.tokens)
        try:
            capped = spend.notice(conn, sid)
            quiet = quiet and sealing.quiet(conn, proj)  # asked before this run takes the notices and tells
        except sqlite3.Error as exc:  # the cap line must not cost the digest
            log("SessionStart", f"spending check skipped: {type(exc).__name__}: {exc}")
            capped, quiet = None, False
    finally:
        conn.close()
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
    sealed = False
    if quiet and not notices:
        try:
            sealed = sealing.seal(event.cwd, proj, dig, probes, since)
        except (OSError, ValueError) as exc:
            log("SessionStart", f"not sealed: {type(exc).__name__}: {exc}")
    if not sealed and source != "compact":
        ready.unseal(event.cwd)
    return _output(dig.text, notices)
