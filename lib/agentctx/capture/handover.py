"""Where a session stands, kept three ways, in one module: the project handover, the session's anchor
state, and the handover derived without a model.

**The handover** (one current record per project, versioned for parallel agents) carries ADR-009's
``active_work``: ``current_task`` plus the lists ``blockers``, ``next_steps``, ``open_questions``,
``also_in_progress`` (what parallel sessions were on when their writes were merged) and ``done`` (what was
done since the request: commits, passing tests, files edited; written by the derived handover). It is a ``handover``
record with key ``handover.current``: a write from another session supersedes the previous one (history
keeps it), a later write from the same session updates that session's record, so there is one per
session. Optimistic concurrency (the Prism seed): ``read`` returns a ``version``; ``write`` takes the
version it was based on and raises ``Conflict`` if another write landed since, before touching anything.
``save`` does the whole loop: on a conflict it re-reads, merges three-way (base, mine, theirs: nothing
either side added or kept is lost) and retries.

**The anchor** (the memory-compression seed) is what a session must not lose to compaction. PreCompact
writes the session's anchor — Intent, Changes made, Decisions taken, Next steps — into ``anchors``
(``store.anchors``), merged into the previous one (each compaction adds to it rather than starting
over), plus a Markdown backup under ``<data dir>/anchors/<project>/``. There is no model at PreCompact
(it must never hold compaction up), so everything is derived: the intent is the request in progress (the
person's latest substantive request, ``transcript.latest_request``; a later one replaces it) plus
``/compact`` focus text; the changes are the files this session
wrote or edited, latest test results, commits, branch switches and PRs; the decisions are those recorded
in this session and still current; the next steps are the latest "Next steps" list Claude gave since
that request (an older list only while no newer one exists). SessionStart with source ``compact`` puts ``anchor_blocks()`` first in the digest.
Merging is by item key. All text is redacted.

**The derived handover**: when no model extracts (no key, ``--no-llm``, a spending cap reached),
:func:`derive_handover` writes the session's handover from the session's activity
(``capture.activity``) and its transcript: the task is the person's latest substantive request, the next
steps are those Claude listed last since it plus the tests still failing, the blockers the errors still
standing since that request (``capture.progress``: a later success of the same step, a commit, an edit
after which the error was not seen again, or Claude answering after an API error clears them).
"""

from __future__ import annotations

import re
import sqlite3

from agentctx import budgets, clock, ids, paths
from agentctx.capture import activity
from agentctx.project import Project
from agentctx.redact import redact
from agentctx.render import escape
from agentctx.store import anchors, db, graph, records, sessions
from agentctx.store.db import transaction

# ---------------------------------------------------------------------------------------------
# The handover record

KEY = "handover.current"
LISTS = ("blockers", "next_steps", "open_questions", "also_in_progress", "done")
FIELDS = ("current_task", *LISTS)
MAX_ITEMS = 20
MAX_ITEM_CHARS = 300
NO_TASK = "Session handover"
_HEADINGS = {
    "blockers": "Blockers:",
    "next_steps": "Next steps:",
    "open_questions": "Open questions:",
    "also_in_progress": "Also in progress (parallel sessions):",
    "done": "Done since the request:",
}
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$")


class Conflict(Exception):
    """Another write landed after the version this one was based on; nothing was written."""

    def __init__(self, expected: int, current: int):
        super().__init__(f"handover is at version {current}, not {expected}: re-read, merge and retry")
        self.expected, self.current = expected, current


def _text(value) -> str:
    text = " ".join(redact(value).split()) if isinstance(value, str) else ""
    return text[: MAX_ITEM_CHARS - 1] + "…" if len(text) > MAX_ITEM_CHARS else text


def normalize(fields: dict) -> dict:
    """Known fields only, as clean text: redacted, one line each, lists deduplicated and capped."""
    if not isinstance(fields, dict):
        raise ValueError("handover fields must be an object")
    out: dict = {"current_task": _text(fields.get("current_task"))}
    for name in LISTS:
        raw = fields.get(name) or []
        items = [raw] if isinstance(raw, str) else raw if isinstance(raw, (list, tuple)) else []
        clean = [_text(i) for i in items]
        out[name] = list(dict.fromkeys(i for i in clean if i))[:MAX_ITEMS]
    return out


def render(fields: dict) -> tuple[str, str]:
    """(title, body) of the record: the task as title, each list as a titled section."""
    lines: list[str] = []
    for name in LISTS:
        items = fields.get(name) or []
        if items:
            lines.append(_HEADINGS[name])
            numbered = name == "next_steps"
            lines += [f"{n}. {i}" if numbered else f"- {i}" for n, i in enumerate(items, 1)]
    return fields.get("current_task") or NO_TASK, "\n".join(lines)


def parse(record: dict | None) -> dict:
    """Fields back from a handover record (tolerant of hand edits: unknown lines are skipped)."""
    fields = normalize({})
    if not record:
        return fields
    title = record.get("title") or ""
    fields["current_task"] = "" if title == NO_TASK else title
    section = None
    by_heading = {v.lower(): k for k, v in _HEADINGS.items()}
    for line in (record.get("body") or "").splitlines():
        if line.strip().lower() in by_heading:
            section = by_heading[line.strip().lower()]
            continue
        m = _ITEM.match(line)
        if section and m and m.group(1) not in fields[section]:
            fields[section].append(m.group(1))
    return fields


def _meta_key(project_id: str) -> str:
    return f"handover:{project_id}"


def _version(conn: sqlite3.Connection, project_id: str) -> int:
    return db.meta_value(conn, _meta_key(project_id))


def _head(conn: sqlite3.Connection, project_id: str) -> dict | None:
    return records.by_key(conn, project_id, KEY)


def read(conn: sqlite3.Connection, project_id: str) -> dict:
    """``{"version", "fields", "record"}``: the current handover, read as one snapshot."""
    with transaction(conn, immediate=False):
        version = _version(conn, project_id)
        head = _head(conn, project_id)
    return {"version": version, "fields": parse(head), "record": head}


def write(
    conn: sqlite3.Connection, project_id: str, session_id: str, fields: dict, expected_version: int, *,
    source: str = "llm_extraction", confidence: str = "inferred",
) -> int:
    """Store ``fields`` as the handover if it is still at ``expected_version``; the new version.

    Raises Conflict (nothing written) when another write landed first. Writing what is
    already stored changes nothing and returns the current version.
    """
    title, body = render(normalize(fields))
    title, body = records.validate(
        type="handover", title=title, body=body, key=KEY, source=source, confidence=confidence
    )
    stamp = clock.now()
    with transaction(conn):
        current = _version(conn, project_id)
        if current != expected_version:
            raise Conflict(expected_version, current)
        head = _head(conn, project_id)
        if head and head["title"] == title and head["body"] == body:
            return current
        if head and head["session_id"] == session_id:
            records.revise(conn, head["id"], stamp=stamp, project_id=project_id, title=title, body=body)
        else:
            new_id = ids.new_id()
            if head:
                records.retire(conn, head["id"], stamp=stamp, project_id=project_id, by=new_id, valid_to=stamp)
            records.insert(conn, project_id, type="handover", key=KEY, title=title, body=body, confidence=confidence,
                           stamp=stamp, source=source, session_id=session_id, record_id=new_id)
        db.set_meta_value(conn, _meta_key(project_id), current + 1)
    return current + 1


def merge(base: dict, mine: dict, theirs: dict) -> dict:
    """Three-way merge: my changes relative to ``base`` applied on top of ``theirs``.

    Lists: their items minus the ones I removed, then the ones I added. Task: whoever changed
    it wins; when both did, mine is current and theirs goes to ``also_in_progress``.
    """
    base, mine, theirs = normalize(base), normalize(mine), normalize(theirs)
    out: dict = {}
    for name in LISTS:
        removed = set(base[name]) - set(mine[name])
        added = [i for i in mine[name] if i not in base[name]]
        kept = [i for i in theirs[name] if i not in removed]
        out[name] = (kept + [i for i in added if i not in kept])[:MAX_ITEMS]
    b, m, t = base["current_task"], mine["current_task"], theirs["current_task"]
    out["current_task"] = t if m == b else m
    if m != b and t not in ("", b, m) and t not in out["also_in_progress"]:
        out["also_in_progress"] = (out["also_in_progress"] + [t])[:MAX_ITEMS]
    out["also_in_progress"] = [i for i in out["also_in_progress"] if i != out["current_task"]]
    return out


def save(
    conn: sqlite3.Connection, project_id: str, session_id: str, fields: dict, *, base: dict | None = None,
    retries: int = 32, **kwargs,
) -> int:
    """Write this session's handover; on Conflict re-read, merge and retry. The new version.

    ``fields`` is the whole handover as this writer wants it, based on ``base`` (a ``read``
    result; default: read now). Raises Conflict only after ``retries`` lost races in a row.
    """
    base = base if base is not None else read(conn, project_id)
    mine = normalize(fields)
    for _ in range(retries):
        try:
            return write(conn, project_id, session_id, mine, base["version"], **kwargs)
        except Conflict:
            theirs = read(conn, project_id)
            mine = merge(base["fields"], mine, theirs["fields"])
            base = theirs
    current = read(conn, project_id)["version"]
    raise Conflict(base["version"], current)


ANCHOR_PARTS = anchors.PARTS
ANCHOR_CAPS = {"intent": 3, "changes": 40, "decisions": 20, "next_steps": 10}
ANCHOR_TEXT_CHARS = 300
# Token budget of the anchor in a compact SessionStart digest, per part (the digest caps the whole).
ANCHOR_TOKENS = {"intent": 140, "changes": 180, "decisions": 150, "next_steps": 150}
ANCHOR_HEADINGS = {"intent": "Intent", "changes": "Changes made", "decisions": "Decisions taken", "next_steps": "Next steps"}
ANCHOR_BUSY_MS = 3000

_NEXT = re.compile(
    r"^\s*(?:#+\s*)?(?:\*\*|__)?\s*(?:next steps?|next up|next(?=\s*(?:\*\*|__)?\s*:)|remaining(?: steps| work)?|to-?dos?|follow[- ]ups?)"
    r"\b\s*(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*(.*)$",
    re.IGNORECASE,
)
_STEP_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\[[ x]\])\s+(.+)$")
_INLINE_SPLIT = re.compile(r"(?:^|\s)(?:\d+[.)]|[-•])\s+")


ANCHOR_REDACT_WINDOW = 64 * 1024  # of one text, redacted before clipping: 10 MB of /compact instructions cost ~1 s


def _anchor_clip(text: str, limit: int = ANCHOR_TEXT_CHARS) -> str:
    text = " ".join(redact((text or "")[:ANCHOR_REDACT_WINDOW]).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _anchor_item(key: str, text: str) -> dict | None:
    text = _anchor_clip(text)
    return {"key": key, "text": text} if text else None


# ---------------------------------------------------------------------------------------------
# The anchor: deriving it


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
            item = _STEP_ITEM.match(follow)
            if item:
                found.append(item.group(1).strip())
            elif follow.strip() or found:
                break
    return list(dict.fromkeys(_anchor_clip(s.strip("*_ ")) for s in found if s.strip("*_ ")))[: ANCHOR_CAPS["next_steps"]]


def from_transcript(path: str) -> tuple[str, str]:
    """(the person's latest substantive request as :func:`task_text` gives it, the latest assistant text after
    it) of the transcript; "" when unknown. The request is looked for across compactions and sessionIds, queued prompts and
    slash commands included (``transcript.latest_request``)."""
    request, last, entries = _transcript_ends(path)
    return task_text(request, entries), last


def _transcript_ends(path: str):
    """(the latest substantive request's entry or None, the latest assistant text after it, the entries of
    the main chain since the last compaction, or across compactions when the request came before it)."""
    if not path:  # a missing or refused file (a FIFO, a device: logged once) reads as empty
        return None, "", []
    from agentctx.capture import transcript

    entries = transcript.read(path, across_compactions=False).entries  # only its end is wanted
    request = transcript.latest_request(path, entries)  # a short answer to Claude's question continues the one before
    last = ""
    for e in reversed(entries):
        if request is not None and e.end <= request.end:
            break  # Claude's text from before the request is about earlier work
        if e.role == "assistant" and transcript.said(e):
            last = transcript.said(e)
            break
    if request is not None and not any(e.uuid == request.uuid for e in entries):
        entries = transcript.read(path).entries  # the request came before a compaction: what it replied to is there
    return request, last, entries


def task_text(request, entries) -> str:
    """The request in progress as a handover's task: the request (a reply by number with what it picked from
    Claude's list), and after it what the person accepted
    ("yes please" to Claude's "Want me to commit it?": the task moved on to Claude's offer) or added when telling
    Claude to go on ("continue, and in parallel"), within
    ``HANDOVER_TASK_CHARS`` and ``HANDOVER_TAIL_CHARS``. An acknowledgement of a report ("ok thanks" after "Done.") adds nothing."""
    if request is None:
        return ""
    from agentctx.capture import transcript  # not at the top: SessionStart reads handovers without the parser

    said = transcript.request_text(request.text)
    reply = next((e for e in entries if e.uuid == request.uuid and e.kind == "reply"), None)
    if reply is not None:  # "2" says nothing later: name what it picked from Claude's list
        from agentctx.capture import explicit

        chosen = [st.text for st in explicit.replied(reply.text, reply.context)] or explicit.picked(reply.text,
                                                                                                  reply.context)
        if chosen:  # a bare "2" is said by the option itself (a lasting choice with its question)
            picks = "; ".join(chosen)
            said = _anchor_clip(picks if said.strip().rstrip(".!").isdigit() else f"{said} → {picks}",
                                HANDOVER_TASK_CHARS)
    accepted, asked = [], ""
    for e in entries:
        if e.end <= request.end:
            continue
        if e.role == "assistant" and transcript.said(e):
            asked = transcript.question(transcript.said(e))
        elif e.role == "user" and e.kind in ("prompt", "queued") and asked and e.text.strip():
            accepted.append(f"“{_anchor_clip(e.text, 40)}” to “{_anchor_clip(asked, 80)}”")
            asked = ""
        elif e.role == "user" and transcript.continues(e) and transcript.substantive(e):  # "continue, in parallel"
            accepted.append(f"“{_anchor_clip(e.text, 60)}”")
    said = _anchor_clip(said, HANDOVER_TASK_CHARS)
    return f"{said} {_anchor_clip('… then ' + accepted[-1], HANDOVER_TAIL_CHARS)}" if accepted else said


def derive_anchor(conn: sqlite3.Connection, project_id: str, sid: str, transcript_path: str = "",
           focus: str = "") -> dict:
    """A fresh anchor for ``sid`` from the transcript and the store (no merging here)."""
    try:
        first, last = from_transcript(transcript_path)
    except (OSError, ValueError):
        first, last = "", ""
    anchor: dict[str, list] = {part: [] for part in ANCHOR_PARTS}
    anchor["intent"] = [_anchor_item("prompt", first), _anchor_item("focus", f"Compaction focus: {focus}" if focus.strip() else "")]

    for row in graph.session_files(conn, project_id, sid, limit=200):
        times = int(row["weight"] or 1)
        anchor["changes"].append(_anchor_item(f"file:{row['name']}", f"{row['name']} (written/edited {times}×)"))
    for row in records.current(conn, project_id, types=["discovery"], session_id=sid, key_prefix="test.",
                               order="oldest", limit=10):
        anchor["changes"].append(_anchor_item(row["key"], row["title"]))
    meta = sessions.meta(conn, sid)
    for c in meta.get("commits") or []:
        if isinstance(c, dict) and c.get("sha"):
            anchor["changes"].append(
                _anchor_item(f"commit:{c['sha']}", f"commit {str(c['sha'])[:9]} on {c.get('branch', '?')}: {c.get('message', '')}"))
    if meta.get("branch"):
        anchor["changes"].append(_anchor_item("branch", f"working on branch {meta['branch']}"))
    for p in meta.get("prs") or []:
        if isinstance(p, dict) and p.get("url"):
            anchor["changes"].append(_anchor_item(f"pr:{p['url']}", f"opened PR {p['url']} {p.get('title', '')}"))

    for row in records.current(conn, project_id, types=["decision", "convention"], session_id=sid, order="oldest",
                               limit=50):
        body = " ".join((row["body"] or "").split())
        text = f"[{row['type']}] {row['title']}" + (f": {body}" if body else "")
        anchor["decisions"].append(_anchor_item(f"rec:{row['id']}", text))

    steps = next_steps(last)
    if not steps:  # no plan in the transcript since the request: the handover's, if any
        try:
            steps = list(read(conn, project_id)["fields"]["next_steps"])
        except sqlite3.Error:
            pass
    anchor["next_steps"] = [_anchor_item("step:" + s.lower(), s) for s in steps]
    return {part: [i for i in items if i] for part, items in anchor.items()}


# ---------------------------------------------------------------------------------------------
# The anchor: merging and storing


def merge_anchor(old: dict | None, new: dict, gone: set[str] = frozenset()) -> dict:
    """``new`` merged into ``old``: same key → updated in place, new keys appended, nothing dropped
    but ``gone`` keys (decisions superseded since). The intent is the request in progress (the
    latest one wins); next steps are the latest plan's alone (older ones only while none is new)."""
    old = old or {}
    out: dict[str, list] = {}
    for part in ANCHOR_PARTS:
        before = [i for i in (old.get(part) or []) if isinstance(i, dict) and i.get("key") not in gone]
        after = [i for i in new.get(part) or [] if i.get("key") not in gone]
        if part == "next_steps":
            merged = after or before
        else:
            fresh = {i["key"]: i for i in after}
            merged = [fresh.pop(i["key"], i) for i in before] + list(fresh.values())
        out[part] = merged[-ANCHOR_CAPS[part]:] if part == "changes" else merged[: ANCHOR_CAPS[part]]
    return out


def read_anchor(conn: sqlite3.Connection, sid: str) -> dict | None:
    """The stored anchor of a session (lists per part, plus version and updated_at), or None."""
    return anchors.get(conn, sid)


def update_anchor(conn: sqlite3.Connection, project_id: str, sid: str, fresh: dict) -> dict:
    """Merge ``fresh`` into the stored anchor in one write transaction; the merged anchor."""
    with db.transaction(conn):
        old = read_anchor(conn, sid)
        old_keys = [i["key"] for i in (old or {}).get("decisions", []) if str(i.get("key", "")).startswith("rec:")]
        gone = {"rec:" + rid for rid in records.retired_among(conn, project_id, [k[4:] for k in old_keys])}
        merged = merge_anchor(old, fresh, gone)
        version = (old["version"] if old else 0) + 1
        stamp = clock.now()
        anchors.put(conn, sid, project_id, merged, version, stamp)
    return {**merged, "session_id": sid, "project_id": project_id, "version": version, "updated_at": stamp}


def anchor_markdown(anchor: dict) -> str:
    """The anchor in the seed's Markdown layout (the backup file)."""
    out = [f"## Anchor State — session {anchor.get('session_id', '')} (version {anchor.get('version', 0)}, "
           f"{anchor.get('updated_at', '')})"]
    for part in ANCHOR_PARTS:
        out += ["", f"### {ANCHOR_HEADINGS[part]}", ""]
        items = anchor.get(part) or []
        numbered = part == "next_steps"
        out += [f"{n}. {i['text']}" if numbered else f"- {i['text']}" for n, i in enumerate(items, 1)] or ["(none)"]
    return "\n".join(out) + "\n"


def anchor_backup_path(project_id: str, sid: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", sid)[:120] or "unknown"
    return paths.sub("anchors", project_id, f"{safe}.md")


def write_anchor_backup(anchor: dict) -> str:
    """Write the Markdown backup atomically (temp file + rename); its path."""
    from agentctx.fsio import write_atomic

    target = anchor_backup_path(anchor["project_id"], anchor["session_id"])
    write_atomic(target, anchor_markdown(anchor))
    return target


def anchor_blocks(conn: sqlite3.Connection, sid: str) -> list[str]:
    """The anchor as digest blocks (escaped; each part within its token budget); [] when none."""
    anchor = read_anchor(conn, sid)
    if not anchor or not any(anchor.get(p) for p in ANCHOR_PARTS):
        return []
    out = ["## Where this session was before compaction (anchor state)"]
    for part in ANCHOR_PARTS:
        items = anchor.get(part) or []
        if not items:
            continue
        numbered = part == "next_steps"
        lines = [f"{ANCHOR_HEADINGS[part]}:"] + [
            f"{n}. {escape(i['text'])}" if numbered else f"- {escape(i['text'])}"
            for n, i in enumerate(items, 1)
        ]
        kept, _ = budgets.fit_blocks(lines, ANCHOR_TOKENS[part])
        if len(kept) > 1:
            out.append("\n".join(kept))
    return out if len(out) > 1 else []


# ---------------------------------------------------------------------------------------------
# The handover without a model


def where_next(conn: sqlite3.Connection, proj: Project, start: str, end: str, session_ids: list[str]) -> dict:
    """The handover's task, next steps, blockers and open questions when it was written in ``[start, end)``,
    then the next steps of those sessions' anchors."""
    out: dict = {"current_task": "", "next_steps": [], "blockers": [], "open_questions": []}
    current = read(conn, proj.id)
    head = current["record"]
    if head and (activity.within(head["recorded_at"], start, end) or activity.within(head["updated_at"], start, end)):
        fields = current["fields"]
        out["current_task"] = fields["current_task"]
        for name in ("next_steps", "blockers", "open_questions"):
            out[name] = list(fields[name])
    for sid in session_ids:
        state = read_anchor(conn, sid)
        for item in (state or {}).get("next_steps", []):
            if item["text"] not in out["next_steps"]:
                out["next_steps"].append(item["text"])
    return out


HANDOVER_TASK_CHARS = 200  # the request
HANDOVER_TAIL_CHARS = 140  # what was answered or added after it (task_text)


def handover_fields(data: dict, first_prompt: str = "", last_text: str = "",
                    standing: list[tuple[str, str]] | None = None) -> dict:
    """A handover (its fields) from a session's part of the log and its transcript ends. ``standing``: the
    errors the transcript shows still standing (``progress.standing``); without it, the log's errors not
    cleared by a later success of the same command or a test run passing."""
    steps = next_steps(last_text)
    failing = [t for t in data["tests"] if t["status"] == "failed"]
    steps += [f"Make the failing tests pass: {_anchor_clip(t['title'], 160)}" for t in failing]
    if standing is None:
        blockers = [f"Error not seen fixed: {_anchor_clip(e['title'], 160)}" for e in data["errors"]
                    if not (e["tests_passed_after"] or e.get("cleared"))]
    else:
        from agentctx.capture.progress import API_KEY  # not at the top: observe's patterns stay off SessionStart

        blockers = [_anchor_clip(text, 200) if key == API_KEY else
                    f"Error not seen fixed: {_anchor_clip(text, 160)}" for key, text in standing]
    task = _anchor_clip(first_prompt, HANDOVER_TASK_CHARS + HANDOVER_TAIL_CHARS)
    return {"current_task": task, "next_steps": steps, "blockers": blockers, "open_questions": []}


def day_summary(conn: sqlite3.Connection, proj: Project, day: str, *, session_id: str | None = None) -> dict:
    """What ``day`` did (``capture.activity``) and where it leaves the work (:func:`where_next`), as plain data
    (``session_id``: only that session's part): the daily log's material and the derived handover's."""
    data = activity.collect(conn, proj, day, session_id=session_id)
    start, end = activity.window(day)
    data["next"] = where_next(conn, proj, start, end, data.pop("session_ids"))
    return data


def derive_handover(conn: sqlite3.Connection, proj: Project, session_id: str, transcript_path: str) -> str | None:
    """Write the session's handover from its log and transcript (no model); the record id, or None
    when there is nothing to hand over. Blockers are the errors still standing since the latest request
    (``capture.progress``), read from the transcript when it shows tool calls (else from the store)."""
    from agentctx.capture import progress, transcript

    try:
        request, last, entries = _transcript_ends(transcript_path)
        steps = transcript.tool_steps(transcript_path) if transcript_path else []
    except (OSError, ValueError):
        request, last, entries, steps = None, "", [], []
    since = request.end if request else 0
    standing = progress.standing(steps, since) if progress.ran_tools(steps) else None
    fields = handover_fields(day_summary(conn, proj, activity.today(), session_id=session_id),
                             task_text(request, entries), last, standing)
    fields["done"] = progress.done(steps, since, proj.root)
    if standing is None:  # no tool call in the transcript: the store's errors, and its API errors
        fields["blockers"] += [_anchor_clip(text, 200) for key, text in progress.standing(steps, since)
                               if key == progress.API_KEY]
    if not (fields["current_task"] or fields["next_steps"] or fields["blockers"]):
        return None
    save(conn, proj.id, session_id, fields, source="hook_observation", confidence="inferred")
    head = read(conn, proj.id)["record"]
    return head["id"] if head else None
