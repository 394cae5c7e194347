"""The daily log: one Markdown file per project and UTC day that a person can open.

``<data dir>/logs/<project name>-<id prefix>/<YYYY-MM-DD>.md``, written by the consolidation pass
after each session and by ``agentctx log``. What it says, all from the store (no model, so it works
without a key):

* **Decided**: decisions, conventions and preferences recorded that day, explicit or inferred, and
  what each superseded;
* **Changed**: files the sessions wrote or edited (PostToolUse observations), commits, branches and
  pull requests (session metadata), test results (the last run per target), errors met (and whether
  tests passed afterwards in that session), and fixes recorded;
* **Learned**: discoveries, subagents' conclusions among them;
* **Next**: the handover's task, next steps, blockers and open questions, and the anchors' next steps.

When no model extracts (no key, ``--no-llm``, a spending cap reached), :func:`derive_handover` writes the
session's handover from the same material: the task is the session's first prompt, the next steps are
those Claude listed last plus the tests still failing, the blockers the errors not seen fixed.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from datetime import datetime, timedelta

from agentctx import clock, fsio, paths
from agentctx.project import Project
from agentctx.store import activity, records

DECIDED = ("decision", "convention", "preference")
TASK_CHARS = 200
_TEST_STATUS = re.compile(r"^(Tests passed|Tests failed|No tests ran)")


def window(day: str) -> tuple[str, str]:
    """``[start, end)`` of a UTC day ``YYYY-MM-DD`` as stored timestamps (ValueError if not a date)."""
    start = datetime.strptime(day, "%Y-%m-%d")
    return clock.to_iso(start), clock.to_iso(start + timedelta(days=1))


def today() -> str:
    return clock.now()[:10]


def folder(proj: Project) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", proj.name or "project")[:60] or "project"
    return paths.sub("logs", f"{safe}-{proj.id[:8]}")


def path(proj: Project, day: str) -> str:
    return os.path.join(folder(proj), f"{day}.md")


def _meta(text: str | None) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _in(stamp: str | None, start: str, end: str) -> bool:
    return bool(stamp) and start <= stamp < end


def _test_status(title: str) -> str:
    m = _TEST_STATUS.match(title)
    return {"Tests passed": "passed", "Tests failed": "failed", "No tests ran": "no tests"}.get(m.group(1), "") if m else ""


def collect(conn: sqlite3.Connection, proj: Project, day: str, *, session_id: str | None = None) -> dict:
    """Everything the log of ``day`` says, as plain data (``session_id``: only that session's part)."""
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
        errors.append({**_brief(r), "seen": 1 + int(r["reinforce_count"] or 0), "tests_passed_after": passed_after})
    learned = [_brief(r) for r in mine(activity.records_between(conn, proj.id, start, end, ["discovery"]))
               if not (r["key"] or "").startswith(("test.", "rollup."))]
    sess = [s for s in activity.sessions_between(conn, proj.id, start, end)
            if session_id is None or s["session_id"] == session_id]
    commits, prs, branches = [], [], []
    for s in sess:
        meta = _meta(s["meta"])
        commits += [c for c in meta.get("commits") or [] if isinstance(c, dict) and _in(c.get("at"), start, end)]
        prs += [p for p in meta.get("prs") or [] if isinstance(p, dict) and _in(p.get("at"), start, end)]
        branches += [b for b in meta.get("branches") or [] if isinstance(b, str) and b not in branches]
    files = activity.files_between(conn, proj.id, start, end) if session_id is None else [
        f for f in _session_files(conn, proj.id, session_id)]
    return {
        "project": {"id": proj.id, "name": proj.name}, "day": day,
        "sessions": len(sess), "tokens_injected": sum(s["tokens_injected"] or 0 for s in sess),
        "decided": decided, "files": files, "commits": commits, "prs": prs, "branches": branches,
        "tests": list(tests.values()), "errors": errors, "fixes": fixes, "learned": learned,
        "next": _next(conn, proj, start, end, sess),
    }


def _session_files(conn: sqlite3.Connection, project_id: str, session_id: str) -> list[dict]:
    from agentctx.store import graph

    return [{"name": f["name"], "times": int(f["weight"] or 1)} for f in graph.session_files(conn, project_id,
                                                                                             session_id)]


def _brief(r: dict) -> dict:
    return {"id": r["id"], "type": r["type"], "title": r["title"], "body": r["body"] or ""}


def _next(conn: sqlite3.Connection, proj: Project, start: str, end: str, sess: list[dict]) -> dict:
    from agentctx.capture import anchor, handover

    out: dict = {"current_task": "", "next_steps": [], "blockers": [], "open_questions": []}
    current = handover.read(conn, proj.id)
    head = current["record"]
    if head and (_in(head["recorded_at"], start, end) or _in(head["updated_at"], start, end)):
        fields = current["fields"]
        out["current_task"] = fields["current_task"]
        for name in ("next_steps", "blockers", "open_questions"):
            out[name] = list(fields[name])
    for s in sess:
        state = anchor.read(conn, s["session_id"])
        for item in (state or {}).get("next_steps", []):
            if item["text"] not in out["next_steps"]:
                out["next_steps"].append(item["text"])
    return out


def _clip(text: str, limit: int = 240) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def render(data: dict) -> str:
    """The log as Markdown."""
    lines = [f"# {data['project']['name']} — {data['day']}", ""]
    lines.append(f"{data['sessions']} session(s) · {data['tokens_injected']:,} tokens injected by agentctx")
    if data["decided"]:
        lines += ["", "## Decided", ""]
        for d in data["decided"]:
            how = "explicit" if d["confidence"] != "inferred" else "inferred"
            extra = f"; supersedes “{_clip(d['supersedes']['title'], 100)}”" if d["supersedes"] else ""
            later = "" if d["current"] else "; since superseded"
            body = f": {_clip(d['body'])}" if d["body"] else ""
            lines.append(f"- [{d['type']}] {_clip(d['title'])}{body} ({how}{extra}{later}; `{d['id']}`)")
    changed: list[str] = []
    if data["files"]:
        changed += ["", "### Files", ""] + [f"- `{f['name']}` ({f['times']}×)" for f in data["files"][:60]]
        if len(data["files"]) > 60:
            changed.append(f"- … and {len(data['files']) - 60} more")
    if data["commits"] or data["prs"] or data["branches"]:
        changed += ["", "### Commits and branches", ""]
        changed += [f"- {str(c.get('sha', ''))[:9]} on {c.get('branch', '?')}: {_clip(c.get('message', ''), 160)}"
                    for c in data["commits"]]
        changed += [f"- pull request {p.get('url')} {_clip(p.get('title', ''), 120)}".rstrip() for p in data["prs"]]
        if data["branches"]:
            changed.append("- branches: " + ", ".join(f"`{b}`" for b in data["branches"]))
    if data["tests"]:
        changed += ["", "### Test results (last run per target)", ""]
        changed += [f"- {t['status'] or 'ran'}: {_clip(t['title'], 200)}"
                    + (f" — {_clip(t['body'], 160)}" if t["body"] else "") for t in data["tests"]]
    if data["errors"] or data["fixes"]:
        changed += ["", "### Errors and fixes", ""]
        changed += [f"- error: {_clip(e['title'], 200)} (seen {e['seen']}×"
                    + ("; tests passed afterwards" if e["tests_passed_after"] else "") + ")" for e in data["errors"]]
        changed += [f"- fixed: {_clip(f['title'], 200)}" + (f" — {_clip(f['body'], 200)}" if f["body"] else "")
                    for f in data["fixes"]]
    if changed:
        lines += ["", "## Changed", *changed]
    if data["learned"]:
        lines += ["", "## Learned", ""] + [f"- {_clip(x['title'], 200)}" + (f" — {_clip(x['body'], 200)}"
                                                                              if x["body"] else "")
                                           for x in data["learned"]]
    nxt = data["next"]
    if any(nxt.values()):
        lines += ["", "## Next", ""]
        if nxt["current_task"]:
            lines += [f"Current task: {_clip(nxt['current_task'])}", ""]
        lines += [f"{n}. {_clip(s)}" for n, s in enumerate(nxt["next_steps"], 1)]
        lines += [f"- blocker: {_clip(b)}" for b in nxt["blockers"]]
        lines += [f"- open question: {_clip(q)}" for q in nxt["open_questions"]]
    if len(lines) == 3:
        lines += ["", "Nothing was recorded for this project on this day."]
    return "\n".join(lines) + "\n"


def empty(data: dict) -> bool:
    return not any(data[k] for k in ("decided", "files", "commits", "prs", "tests", "errors", "fixes", "learned")) \
        and not any(data["next"].values()) and not data["sessions"]


def write(conn: sqlite3.Connection, proj: Project, day: str | None = None) -> str | None:
    """Write (replace) the log file of ``day`` (default today); its path, or None for a day with nothing."""
    day = day or today()
    data = collect(conn, proj, day)
    if empty(data):
        return None
    return fsio.write_atomic(path(proj, day), render(data))


# ---------------------------------------------------------------------------------------------
# The handover without a model


def handover_fields(data: dict, first_prompt: str = "", last_text: str = "") -> dict:
    """A handover (``capture.handover`` fields) from a session's part of the log and its transcript ends."""
    from agentctx.capture import anchor

    steps = anchor.next_steps(last_text)
    failing = [t for t in data["tests"] if t["status"] == "failed"]
    steps += [f"Make the failing tests pass: {_clip(t['title'], 160)}" for t in failing]
    steps += [s for s in data["next"]["next_steps"] if s not in steps]
    blockers = [f"Error not seen fixed: {_clip(e['title'], 160)}" for e in data["errors"] if not e["tests_passed_after"]]
    task = _clip(first_prompt, TASK_CHARS)
    return {"current_task": task, "next_steps": steps, "blockers": blockers, "open_questions": []}


def derive_handover(conn: sqlite3.Connection, proj: Project, session_id: str, transcript_path: str) -> str | None:
    """Write the session's handover from its log and transcript (no model); the record id, or None
    when there is nothing to hand over."""
    from agentctx.capture import anchor, handover

    try:
        first, last = anchor.from_transcript(transcript_path)
    except (OSError, ValueError):
        first, last = "", ""
    data = collect(conn, proj, today(), session_id=session_id)
    fields = handover_fields(data, first, last)
    if not (fields["current_task"] or fields["next_steps"] or fields["blockers"]):
        return None
    handover.save(conn, proj.id, session_id, fields, source="hook_observation", confidence="inferred")
    head = handover.read(conn, proj.id)["record"]
    return head["id"] if head else None
