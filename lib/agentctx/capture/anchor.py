"""Anchor state (the memory-compression seed): what a session must not lose to compaction.

PreCompact writes the session's anchor — Intent, Changes made, Decisions taken, Next steps —
into ``anchors``, merged into the previous one (each compaction adds to it rather than
starting over), plus a Markdown backup under ``<data dir>/anchors/<project>/``. There is no
model at PreCompact (it must never hold compaction up), so everything is derived:

* intent: the session's first real prompt (the earliest seen wins), plus ``/compact`` focus text;
* changes: files this session wrote or edited (``observed_in`` edges), latest test results,
  commits, branch switches and PRs (``sessions.meta``);
* decisions: decisions and conventions recorded in this session and still current;
* next steps: the last assistant message's "Next steps" list, then the handover's.

SessionStart with source ``compact`` puts ``blocks()`` first in the digest. Each column holds a
JSON list of ``{"key", "text"}`` items; merging is by key. All text is redacted.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3

from agentctx import budgets, clock, paths
from agentctx.injection import render
from agentctx.redact import redact
from agentctx.store import db, graph, records, sessions

PARTS = ("intent", "changes", "decisions", "next_steps")
CAPS = {"intent": 3, "changes": 40, "decisions": 20, "next_steps": 10}
TEXT_CHARS = 300
# Token budget of the anchor in a compact SessionStart digest, per part (the digest caps the whole).
TOKENS = {"intent": 140, "changes": 180, "decisions": 150, "next_steps": 150}
HEADINGS = {"intent": "Intent", "changes": "Changes made", "decisions": "Decisions taken", "next_steps": "Next steps"}
BUSY_MS = 3000

_NEXT = re.compile(
    r"^\s*(?:#+\s*)?(?:\*\*|__)?\s*(?:next steps?|next up|next(?=\s*(?:\*\*|__)?\s*:)|remaining(?: steps| work)?|to-?dos?|follow[- ]ups?)"
    r"\b\s*(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*(.*)$",
    re.IGNORECASE,
)
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\[[ x]\])\s+(.+)$")
_INLINE_SPLIT = re.compile(r"(?:^|\s)(?:\d+[.)]|[-•])\s+")


REDACT_WINDOW = 64 * 1024  # of one text, redacted before clipping: 10 MB of /compact instructions cost ~1 s


def _clip(text: str, limit: int = TEXT_CHARS) -> str:
    text = " ".join(redact((text or "")[:REDACT_WINDOW]).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _item(key: str, text: str) -> dict | None:
    text = _clip(text)
    return {"key": key, "text": text} if text else None


# ---------------------------------------------------------------------------------------
# Deriving an anchor
# ---------------------------------------------------------------------------------------


def next_steps(text: str) -> list[str]:
    """The items of a "Next steps" list in an assistant message (a list below the heading, or inline)."""
    lines = (text or "").splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        m = _NEXT.match(line)
        if not m:
            continue
        inline = m.group(1).strip().strip("*_").strip()
        if inline:
            parts = [p.strip() for p in _INLINE_SPLIT.split(inline) if p.strip()]
            found += parts if parts else [inline]
        for follow in lines[i + 1:]:
            item = _ITEM.match(follow)
            if item:
                found.append(item.group(1).strip())
            elif follow.strip() or found:
                break
    return list(dict.fromkeys(_clip(s.strip("*_ ")) for s in found if s.strip("*_ ")))[: CAPS["next_steps"]]


def from_transcript(path: str) -> tuple[str, str]:
    """(first real user prompt, last assistant text) of the transcript's main chain; "" when unknown."""
    if not path or not os.path.isfile(path):
        return "", ""
    from agentctx.capture import transcript

    entries = transcript.read(path).entries
    first = next((e.text for e in entries if e.role == "user"), "")
    last = ""
    for e in reversed(entries):
        if e.role != "assistant":
            continue
        last = "\n".join(ln for ln in e.text.splitlines() if not ln.startswith("[tool "))
        if last.strip():
            break
    return first, last


def derive(conn: sqlite3.Connection, project_id: str, sid: str, transcript_path: str = "",
           focus: str = "") -> dict:
    """A fresh anchor for ``sid`` from the transcript and the store (no merging here)."""
    try:
        first, last = from_transcript(transcript_path)
    except (OSError, ValueError):
        first, last = "", ""
    anchor: dict[str, list] = {part: [] for part in PARTS}
    anchor["intent"] = [_item("prompt", first), _item("focus", f"Compaction focus: {focus}" if focus.strip() else "")]

    for row in graph.session_files(conn, project_id, sid, limit=200):
        times = int(row["weight"] or 1)
        anchor["changes"].append(_item(f"file:{row['name']}", f"{row['name']} (written/edited {times}×)"))
    for row in records.current(conn, project_id, types=["discovery"], session_id=sid, key_prefix="test.",
                               order="oldest", limit=10):
        anchor["changes"].append(_item(row["key"], row["title"]))
    meta = sessions.meta(conn, sid)
    for c in meta.get("commits") or []:
        if isinstance(c, dict) and c.get("sha"):
            anchor["changes"].append(
                _item(f"commit:{c['sha']}", f"commit {str(c['sha'])[:9]} on {c.get('branch', '?')}: {c.get('message', '')}"))
    if meta.get("branch"):
        anchor["changes"].append(_item("branch", f"working on branch {meta['branch']}"))
    for p in meta.get("prs") or []:
        if isinstance(p, dict) and p.get("url"):
            anchor["changes"].append(_item(f"pr:{p['url']}", f"opened PR {p['url']} {p.get('title', '')}"))

    for row in records.current(conn, project_id, types=["decision", "convention"], session_id=sid, order="oldest",
                               limit=50):
        body = " ".join((row["body"] or "").split())
        text = f"[{row['type']}] {row['title']}" + (f": {body}" if body else "")
        anchor["decisions"].append(_item(f"rec:{row['id']}", text))

    steps = next_steps(last)
    try:
        from agentctx.capture import handover

        steps += [s for s in handover.read(conn, project_id)["fields"]["next_steps"] if s not in steps]
    except sqlite3.Error:
        pass
    anchor["next_steps"] = [_item("step:" + s.lower(), s) for s in steps]
    return {part: [i for i in items if i] for part, items in anchor.items()}


# ---------------------------------------------------------------------------------------
# Merging and storing
# ---------------------------------------------------------------------------------------


def merge(old: dict | None, new: dict, gone: set[str] = frozenset()) -> dict:
    """``new`` merged into ``old``: same key → updated in place, new keys appended, nothing dropped
    but ``gone`` keys (decisions superseded since). The first prompt seen stays the intent;
    the latest next steps come first."""
    old = old or {}
    out: dict[str, list] = {}
    for part in PARTS:
        before = [i for i in (old.get(part) or []) if isinstance(i, dict) and i.get("key") not in gone]
        after = [i for i in new.get(part) or [] if i.get("key") not in gone]
        if part == "next_steps":
            keys = {i["key"] for i in after}
            merged = after + [i for i in before if i["key"] not in keys]
        else:
            fresh = {i["key"]: i for i in after}
            if part == "intent" and any(i["key"] == "prompt" for i in before):
                fresh.pop("prompt", None)
            merged = [fresh.pop(i["key"], i) for i in before] + list(fresh.values())
        out[part] = merged[-CAPS[part]:] if part == "changes" else merged[: CAPS[part]]
    return out


def read(conn: sqlite3.Connection, sid: str) -> dict | None:
    """The stored anchor of a session (lists per part, plus version and updated_at), or None."""
    row = conn.execute("SELECT * FROM anchors WHERE session_id = ?", (sid,)).fetchone()
    if not row:
        return None
    out: dict = {"session_id": sid, "project_id": row["project_id"], "version": row["version"],
                 "updated_at": row["updated_at"]}
    for part in PARTS:
        try:
            items = json.loads(row[part] or "[]")
        except ValueError:
            items = []
        items = items if isinstance(items, list) else []
        out[part] = [i for i in items if isinstance(i, dict) and isinstance(i.get("key"), str)
                     and isinstance(i.get("text"), str)]
    return out


def update(conn: sqlite3.Connection, project_id: str, sid: str, fresh: dict) -> dict:
    """Merge ``fresh`` into the stored anchor in one write transaction; the merged anchor."""
    with db.transaction(conn):
        old = read(conn, sid)
        old_keys = [i["key"] for i in (old or {}).get("decisions", []) if str(i.get("key", "")).startswith("rec:")]
        gone = {"rec:" + rid for rid in records.retired_among(conn, project_id, [k[4:] for k in old_keys])}
        merged = merge(old, fresh, gone)
        version = (old["version"] if old else 0) + 1
        stamp = clock.now()
        conn.execute(
            "INSERT INTO anchors (session_id, project_id, intent, changes, decisions, next_steps, version, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET project_id = excluded.project_id, "
            "intent = excluded.intent, changes = excluded.changes, decisions = excluded.decisions, "
            "next_steps = excluded.next_steps, version = excluded.version, updated_at = excluded.updated_at",
            (sid, project_id, *(json.dumps(merged[p], ensure_ascii=False) for p in PARTS), version, stamp),
        )
    return {**merged, "session_id": sid, "project_id": project_id, "version": version, "updated_at": stamp}


def markdown(anchor: dict) -> str:
    """The anchor in the seed's Markdown layout (the backup file)."""
    out = [f"## Anchor State — session {anchor.get('session_id', '')} (version {anchor.get('version', 0)}, "
           f"{anchor.get('updated_at', '')})"]
    for part in PARTS:
        out += ["", f"### {HEADINGS[part]}", ""]
        items = anchor.get(part) or []
        numbered = part == "next_steps"
        out += [f"{n}. {i['text']}" if numbered else f"- {i['text']}" for n, i in enumerate(items, 1)] or ["(none)"]
    return "\n".join(out) + "\n"


def backup_path(project_id: str, sid: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", sid)[:120] or "unknown"
    return paths.sub("anchors", project_id, f"{safe}.md")


def write_backup(anchor: dict) -> str:
    """Write the Markdown backup atomically (temp file + rename); its path."""
    from agentctx.fsio import write_atomic

    target = backup_path(anchor["project_id"], anchor["session_id"])
    write_atomic(target, markdown(anchor))
    return target


def blocks(conn: sqlite3.Connection, sid: str) -> list[str]:
    """The anchor as digest blocks (escaped; each part within its token budget); [] when none."""
    anchor = read(conn, sid)
    if not anchor or not any(anchor.get(p) for p in PARTS):
        return []
    out = ["## Where this session was before compaction (anchor state)"]
    for part in PARTS:
        items = anchor.get(part) or []
        if not items:
            continue
        numbered = part == "next_steps"
        lines = [f"{HEADINGS[part]}:"] + [
            f"{n}. {render.escape(i['text'])}" if numbered else f"- {render.escape(i['text'])}"
            for n, i in enumerate(items, 1)
        ]
        kept, _ = budgets.fit_blocks(lines, TOKENS[part])
        if len(kept) > 1:
            out.append("\n".join(kept))
    return out if len(out) > 1 else []
