"""The detached extraction worker the Stop hook starts: single-flight, debounced, incremental.

One worker per session at a time (``flight`` lock with stale-lock recovery); a Stop that finds
it running only sets its pending flag. The worker extracts (``extract.run_once``) once
``extract.MIN_TOKENS`` of new conversation piled up, or once the transcript has been quiet for
``IDLE_S`` seconds (the user stopped typing or left), or at once with ``--final``; then it
looks again and exits when nothing is new. So a long session costs about one extraction of it,
not one per turn. While waiting it only stats the transcript.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time

from agentctx import flight, project
from agentctx.capture.extract import MIN_TOKENS, Result, run_once
from agentctx.logs import log
from agentctx.sharing import drift
from agentctx.store import db

IDLE_S = float(os.environ.get("AGENTCTX_EXTRACT_IDLE", 120))
MAX_WAIT_S = 30 * 60  # a worker never waits longer than this for the debounce
POLL_S = 2.0




def _quiet_for(path: str) -> float:
    try:
        return time.time() - os.path.getmtime(path)
    except OSError:
        return float("inf")


def extract(session_id: str, transcript_path: str, cwd: str | None = None, **kwargs) -> Result:
    """One extraction run (``capture.extract.run_once``, same arguments), then CLAUDE.md drift
    (ADR-013) when it wrote records."""
    result = run_once(session_id, transcript_path, cwd, **kwargs)
    if result.written:
        conn = kwargs.get("conn")
        own = conn is None
        conn = conn or db.connect()
        try:
            drift.scan(conn, project.detect(cwd or os.getcwd()))
        except (OSError, ValueError, sqlite3.Error) as exc:
            result.notes.append(f"drift scan skipped: {exc}")
        finally:
            if own:
                conn.close()
    return result


def work(session_id: str, transcript_path: str, cwd: str | None = None, *, final: bool = False,
         idle_s: float = IDLE_S, min_tokens: int = MIN_TOKENS) -> list[Result]:
    """The worker: single-flight, debounced, incremental (see the module docstring)."""
    lock = flight.for_session("extract", session_id)
    if not lock.acquire():
        if final:
            lock.mark_final()
        else:
            lock.mark_pending()
        return [Result("busy")]
    results: list[Result] = []
    started = time.monotonic()
    for _ in range(3):  # again when a Stop or SessionEnd flagged more between the last look and the release
        try:
            while True:
                lock.take_pending()
                final = lock.take_final() or final  # SessionEnd: finish now, do not wait for more
                force = final or _quiet_for(transcript_path) >= idle_s or time.monotonic() - started >= MAX_WAIT_S
                result = extract(session_id, transcript_path, cwd, force=force, min_tokens=min_tokens)
                if result.status != "waiting":
                    results.append(result)
                    _log_result(session_id, result)
                if result.status == "failed":
                    break  # the next Stop retries; never loop on a failing API
                if result.status in ("nothing", "flush_ok") and not lock.take_pending():
                    break
                if result.status == "waiting":
                    _wait_for_change(transcript_path, idle_s, lock)
            if final and results and results[-1].status != "failed":
                from agentctx.injection import sealing

                sealing.after_work(cwd or os.getcwd())  # the session is over: seal the next start, lock still held
        finally:
            lock.release()
        if results and results[-1].status == "failed":
            break
        if not (os.path.exists(lock.pending_path) or lock.final_requested()) or not lock.acquire():
            break
    return results


def _wait_for_change(path: str, idle_s: float, lock: flight.Lock) -> None:
    """Sleep until the transcript changes or has been quiet for ``idle_s`` (stat calls only)."""
    def stamp():
        try:
            st = os.stat(path)
            return st.st_size, st.st_mtime_ns
        except OSError:
            return None

    before = stamp()
    while stamp() == before and _quiet_for(path) < idle_s and not lock.final_requested():
        time.sleep(min(POLL_S, max(0.05, idle_s - _quiet_for(path))))
        lock.refresh()


def _log_result(sid: str, r: Result) -> None:
    parts = [f"extract {sid[:12]}: {r.status}", r.mode]
    if r.written:
        parts.append(f"{len(r.written)} records")
    if r.usage is not None and r.usage.calls:
        u = r.usage
        parts.append(f"{u.calls} calls, {u.input_total} in / {u.output} out tokens, ${u.cost_usd:.5f}")
    if r.window:
        parts.append(f"window {r.window}")
    parts += r.notes
    if r.error:
        parts.append(r.error)
    from agentctx.redact import redact

    log("Extract", redact("; ".join(p for p in parts if p)))


def _rebase(argv: list[str]) -> int:
    """Run on as a detached child of this interpreter (it has the SDK) so ``uv run`` can exit:
    a waiting worker is then one small process, not two."""
    from agentctx.spawn import detached, script_path

    try:
        detached([sys.executable, script_path("agentctx_worker.py"), *[a for a in argv if a != "--background"]])
    except OSError as exc:
        log("Extract", f"worker not started: {exc}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``agentctx_worker.py --session-id S --transcript PATH [--cwd DIR] [--final] [--json]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="agentctx-extract", description="Extract records from a transcript.")
    parser.add_argument("--session-id", required=True)
    parser.add_argument("--transcript", required=True)
    parser.add_argument("--cwd")
    parser.add_argument("--final", action="store_true", help="Do not wait for the debounce: extract now.")
    parser.add_argument("--json", action="store_true", help="Print what was done as JSON.")
    parser.add_argument("--background", action="store_true",
                        help="Re-start detached from uv with this interpreter and return (what Stop uses).")
    args = parser.parse_args(argv)
    if args.background:
        return _rebase(argv if argv is not None else sys.argv[1:])
    try:
        results = work(args.session_id, args.transcript, args.cwd, final=args.final)
    except Exception as exc:  # noqa: BLE001 - a worker logs and exits 0
        log("Extract", f"extract {args.session_id[:12]}: error: {type(exc).__name__}: {exc}")
        return 0
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    return 0
