"""The fail-open frame every hook runs in: read stdin JSON once into a ``HookEvent``, call the
handler with it, print, exit 0.

Any error (bad stdin, locked or damaged store, a bug) is written as one line to the log
and the hook exits 0 with no output, so agentctx never blocks or erases anything in a
session. A damaged store is moved aside and the handler retried once on a fresh store;
a damaged full-text index is rebuilt and the handler retried.
"""

from __future__ import annotations

import os
import sys

from agentctx import envstamp, paths
from agentctx.hookio import Handler, HookEvent, emit, read_payload
from agentctx.logs import log


def run(event: str, handler: Handler) -> None:
    """Run ``handler`` as the hook for ``event`` and exit 0, whatever happens."""
    code = 0
    stamp = envstamp.take()  # started through uv by the launcher: record the environment for its next run
    try:
        if os.environ.get("AGENTCTX_DISABLE"):
            return
        payload = read_payload()
        output = _call(event, handler, HookEvent(event, payload))
        if output:
            emit(output)
    except BaseException as exc:  # noqa: BLE001 - fail open, always
        if not isinstance(exc, SystemExit):
            log(event, f"error: {type(exc).__name__}: {_cause(exc)}")
    finally:
        try:
            sys.stdout.flush()
        except Exception:  # noqa: BLE001
            pass
        if stamp:
            try:
                envstamp.record_this_run(stamp, sys.argv[0])
            except Exception:  # noqa: BLE001 - a record not written only means uv checks the next run too
                pass
        os._exit(code)


def _cause(exc: BaseException) -> str:
    """The error as the log should say it: a full disk, a read-only or locked store named as such."""
    import sqlite3

    if isinstance(exc, (OSError, sqlite3.Error)):
        from agentctx.store import db

        return db.describe(exc)
    return str(exc)


def _call(event: str, handler: Handler, hook: HookEvent) -> dict | None:
    try:
        return handler(hook)
    except Exception as exc:
        from agentctx.store import db, integrity

        if integrity.index_suspect(exc):  # a damaged full-text index is rebuilt, never a lost write
            done = integrity.repair_index(paths.db_path())
            if done:
                log(event, f"{done}; retrying")
                db.add_notice(f"agentctx: {done}; nothing was lost.")
                return handler(hook)
        if not db.is_corruption(exc):
            raise
        moved = db.quarantine(reason=str(exc))
        log(event, f"store damaged ({exc}); moved to {moved}; retrying on a fresh store")
        return handler(hook)
