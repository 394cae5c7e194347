"""What a session or a day did, read from the store: the material of the daily log
(``sharing.daylog``) and of the handover derived without a model (``capture.handover``).

No model, so it works without a key: decisions, conventions and preferences recorded (explicit or
inferred, with what each superseded); files the sessions wrote or edited (PostToolUse observations),
commits, branches and pull requests (session metadata); test results (the last run per target); errors
met (and whether tests passed afterwards in that session) and fixes recorded; discoveries.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta

from agentctx import clock
from agentctx.project import Project
from agentctx.store import activity, graph, records

DECIDED = ("decision", "convention", "preference")
_TEST_STATUS = re.compile(r"^(Tests passed|Tests failed|No tests ran)")


def window(day: str) -> tuple[str, str]:
    """``[start, end)`` of a UTC day ``YYYY-MM-DD`` as stored timestamps (ValueError if not a date)."""
    start = datetime.strptime(day, "%Y-%m-%d")
    return clock.to_iso(start), clock.to_iso(start + timedelta(days=1))


def today() -> str:
    return clock.now()[:10]


def _meta(text: str | None) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def within(stamp: str | None, start: str, end: str) -> bool:
    """Whether a stored timestamp falls in ``[start, end)``."""
    return bool(stamp) and start <= stamp < end


def _test_status(title: str) -> str:
    m = _TEST_STATUS.match(title)
    return {"Tests passed": "passed", "Tests failed": "failed", "No tests ran": "no tests"}.get(m.group(1), "") if m else ""


def collect(conn: sqlite3.Connection, proj: Project, day: str, *, session_id: str | None = None) -> dict:
    """What the store says of ``day`` as plain data (``session_id``: only that session's part): what was
    decided, changed, tested, met and learned, and which sessions ran (``session_ids``)."""
    start, end = window(day)

    def mine(recs: list[dict]) -> list[dict]:
        return [r for r in recs if session_id is None or r["session_id"] == session_id]

    decided = []
    for r in mine(activity.records_between(conn, proj.id, start, end, DECIDED)):
        if r["source"] == "hook_observation":
            continue
        old = records.predecessor(conn, r["id"], proj.id)
        decided.append({**_brief(r), "confidence": r["confidence"], "current": r["superseded_at"] is None,
                        "supersedes": {"id": old["id"], "title": old["title"]} if old else None})
    tests: dict[str, dict] = {}
    for r in mine(activity.records_between(conn, proj.id, start, end, ["discovery"], key_prefix="test.")):
        tests[r["key"]] = {**_brief(r), "status": _test_status(r["title"]), "at": r["recorded_at"],
                           "session_id": r["session_id"]}
    errors, fixes = [], []
    for r in mine(activity.records_between(conn, proj.id, start, end, ["bugfix"], touched=True)):
        if r["source"] != "hook_observation":
            fixes.append(_brief(r))
            continue
        seen_at = r["updated_at"] or r["recorded_at"]
        passed_after = any(t["status"] == "passed" and t["session_id"] == r["session_id"] and t["at"] > seen_at
                           for t in tests.values())
        errors.append({**_brief(r), "seen": 1 + int(r["reinforce_count"] or 0), "tests_passed_after": passed_after,
                       "cleared": r["superseded_at"] is not None})  # retired: the same command succeeded later
    learned = [_brief(r) for r in mine(activity.records_between(conn, proj.id, start, end, ["discovery"]))
               if not (r["key"] or "").startswith(("test.", "rollup."))]
    sess = [s for s in activity.sessions_between(conn, proj.id, start, end)
            if session_id is None or s["session_id"] == session_id]
    commits, prs, branches = [], [], []
    for s in sess:
        meta = _meta(s["meta"])
        commits += [c for c in meta.get("commits") or [] if isinstance(c, dict) and within(c.get("at"), start, end)]
        prs += [p for p in meta.get("prs") or [] if isinstance(p, dict) and within(p.get("at"), start, end)]
        branches += [b for b in meta.get("branches") or [] if isinstance(b, str) and b not in branches]
    files = activity.files_between(conn, proj.id, start, end) if session_id is None else [
        f for f in _session_files(conn, proj.id, session_id)]
    return {
        "project": {"id": proj.id, "name": proj.name}, "day": day,
        "sessions": len(sess), "tokens_injected": sum(s["tokens_injected"] or 0 for s in sess),
        "decided": decided, "files": files, "commits": commits, "prs": prs, "branches": branches,
        "tests": list(tests.values()), "errors": errors, "fixes": fixes, "learned": learned,
        "session_ids": [s["session_id"] for s in sess],
    }


def _session_files(conn: sqlite3.Connection, project_id: str, session_id: str) -> list[dict]:
    return [{"name": f["name"], "times": int(f["weight"] or 1)} for f in graph.session_files(conn, project_id,
                                                                                             session_id)]


def _brief(r: dict) -> dict:
    return {"id": r["id"], "type": r["type"], "title": r["title"], "body": r["body"] or ""}
