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

The material is read by ``capture.activity`` (and the Next part by ``capture.handover``), which the
handover derived without a model uses too.
"""

from __future__ import annotations

import os
import re
import sqlite3

from agentctx import fsio, paths
from agentctx.capture import activity, handover
from agentctx.project import Project


def folder(proj: Project) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", proj.name or "project")[:60] or "project"
    return paths.sub("logs", f"{safe}-{proj.id[:8]}")


def path(proj: Project, day: str) -> str:
    return os.path.join(folder(proj), f"{day}.md")


collect = handover.day_summary  # everything the log of a day says, as plain data


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
    day = day or activity.today()
    data = collect(conn, proj, day)
    if empty(data):
        return None
    return fsio.write_atomic(path(proj, day), render(data))


