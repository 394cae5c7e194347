"""Turn-end extraction (ADR-009): what a session added since the last run becomes records.

:func:`run_once` reads the transcript from the session's watermark (``sessions.
extraction_watermark``), and then, by mode:

* ``llm``: Claude Haiku 4.5 with the ADR-009 prompt, windowed (whole / head+tail / map-reduce),
  the reply validated strictly; decisions, preferences, conventions and gotchas become records,
  active_work the session's handover;
* ``claude_login``: no key, a logged-in ``claude`` found: the same, through ``claude -p`` (``vialogin``);
* ``explicit``: no model (or ``agentctx config --no-llm``): the developer's explicit statements
  (see ``explicit.py``).

Records are written first, each idempotently (a stable key per fact), then the watermark,
counters and cost in one transaction. Any failure (API error, timeout, bad JSON, schema break)
writes no record and leaves the watermark where it was, so the next run retries. The detached,
debounced, single-flight loop around this is ``worker.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3

from agentctx import project as project_mod
from agentctx import project_settings, settings
from agentctx.budgets import estimate_tokens
from agentctx.capture import explicit, prompts, schema, transcript
from agentctx.store import db, projects, records, sessions

MIN_TOKENS = int(os.environ.get("AGENTCTX_EXTRACT_MIN_TOKENS", 3000))  # debounce: batch size
CONTEXT_RECORDS = 60  # current decisions / conventions / preferences shown to the model
MAX_TITLE = 280
PARALLEL = 4  # map-reduce chunk calls in flight at once


class Result:
    """What one run did. ``status``: nothing | waiting | flush_ok | written | failed."""

    def __init__(self, status: str, mode: str = "", **info):
        self.status, self.mode = status, mode
        self.written: list[str] = info.get("written", [])
        self.tokens: int = info.get("tokens", 0)
        self.usage = info.get("usage")
        self.error: str = info.get("error", "")
        self.window: str = info.get("window", "")
        self.notes: list[str] = info.get("notes", [])
        self.why: str = info.get("why", "")  # why this path (no model: said once in the log, shown by status)

    def as_dict(self) -> dict:
        return {"status": self.status, "mode": self.mode, "written": self.written, "tokens": self.tokens,
                "window": self.window, "error": self.error, "notes": self.notes, "why": self.why,
                "usage": self.usage.as_dict() if self.usage else None}

    def __repr__(self) -> str:
        return f"Result({self.status}, {self.mode}, written={len(self.written)}, error={self.error!r})"


def mode(check_sdk: bool = True) -> tuple[str, str]:
    """(``llm`` | ``claude_login`` | ``explicit``, why) for this environment and configuration.

    ``check_sdk=False`` answers for the worker's environment (which has the SDK) from one that may not.
    """
    current = settings.load()
    if not current["llm"]:
        return "explicit", (f"LLM extraction is off (the llm setting, from the {current.sources['llm']} layer: "
                            "agentctx config --llm / --no-llm, or the plugin option)")
    if os.environ.get("AGENTCTX_LLM", "").strip() == "0":
        return "explicit", "LLM extraction is off (AGENTCTX_LLM=0)"
    from agentctx import llm

    missing = llm.available(check_sdk)
    if not missing:
        return "llm", "ANTHROPIC_API_KEY is set: through the Anthropic API"
    if os.environ.get("ANTHROPIC_API_KEY", "").strip():
        return "explicit", f"{missing}: LLM extraction skipped"
    if not current["claude_login"]:
        return "explicit", "no ANTHROPIC_API_KEY and extraction through the Claude Code login is off " \
            "(agentctx config --claude-login): the no-model path (explicit capture)"
    from agentctx import vialogin

    use, why = vialogin.route()
    if not use:
        vialogin.say_once(why)  # logged once per reason; status shows it every time
        return "explicit", why
    return "claude_login", why


def _session_row(conn: sqlite3.Connection, sid: str, proj: project_mod.Project, cwd: str) -> dict:
    sessions.ensure(conn, sid, proj.id, cwd)
    return sessions.get(conn, sid)


def _save(conn: sqlite3.Connection, sid: str, mark: transcript.Watermark | None, usage=None, run: bool = True,
          project_id: str | None = None) -> None:
    """Advance the watermark (if given) and add a run's usage and cost, in one transaction; the cost
    also counts against the spending caps (``spend.record``)."""
    billed = usage is not None and bool(usage.calls)
    sessions.save_extraction(
        conn, sid, watermark=None if mark is None else mark.dumps(), run=run, billed=billed,
        **({"input_tokens": usage.input_total, "output_tokens": usage.output, "cost_usd": usage.cost_usd}
           if billed else {}),
    )
    if billed:
        from agentctx.store import spend

        spend.record(conn, "extraction", usage, project_id=project_id, session_id=sid)


def run_once(session_id: str, transcript_path: str, cwd: str | None = None, *, force: bool = True,
             min_tokens: int = MIN_TOKENS, client=None, conn: sqlite3.Connection | None = None) -> Result:
    """Extract what the transcript added since the watermark (see the module docstring).

    Without ``force``, less than ``min_tokens`` of new conversation is left for later
    (status ``waiting``). ``client`` overrides the model client (``llm.Client``).
    """
    own = conn is None
    conn = conn or db.connect()
    try:
        cwd = cwd or os.getcwd()
        proj = project_mod.detect(cwd)
        projects.register(conn, proj)
        row = _session_row(conn, session_id, proj, cwd)
        mark = transcript.Watermark.loads(row["extraction_watermark"])
        batch = transcript.read(transcript_path, mark)
        in_repo = project_settings.load(proj.root)
        if not in_repo.capture:  # .agentctx/config.toml: nothing of this project's sessions is kept
            if batch.watermark != mark:
                _save(conn, session_id, batch.watermark, run=False)
            return Result("nothing", notes=["capture is off for this project (.agentctx/config.toml)"])
        batch.entries = [e for e in batch.entries if not in_repo.mentions_excluded(e.text)]  # never sent or read
        blocks = prompts.fences(batch.entries)
        tokens = sum(estimate_tokens(b) + 1 for b in blocks)
        if not blocks:
            if batch.watermark != mark:
                _save(conn, session_id, batch.watermark, run=False)
            return Result("nothing")
        how, why = mode()
        capped = None
        if how != "explicit":  # the spending cap: a model run waits, explicit capture costs nothing
            from agentctx.store import spend

            capped = spend.paused(conn, session_id)
            if capped:
                how = "explicit"
        if not force and how != "explicit" and tokens < min_tokens:  # explicit capture costs nothing: no wait
            return Result("waiting", tokens=tokens)
        if how == "explicit":
            result = _run_explicit(conn, proj, session_id, batch)
            if capped:  # why there is no model run this time
                result.notes.append(capped)
            result.why = capped or why  # the path's own reason is logged once (vialogin.say_once), not per run
            _derived_handover(conn, proj, session_id, transcript_path, result)
        else:
            if client is None and how == "claude_login":
                from agentctx.vialogin import LoginClient, notice_once

                client = LoginClient()
                caps = settings.load()
                told = notice_once(float(caps["daily_cap_usd"]), float(caps["session_cap_usd"]))
                if told:  # not shown at a SessionStart yet (e.g. the login is in the keychain): the next one
                    db.add_notice(told)
            result = _run_llm(conn, proj, session_id, batch, blocks, client)
            result.mode = how
        result.tokens = tokens
        return result
    finally:
        if own:
            conn.close()


def _derived_handover(conn, proj, sid: str, transcript_path: str, result: Result) -> None:
    """No model: the session's handover comes from its activity and transcript (``handover.derive_handover``)."""
    from agentctx.capture import handover

    try:
        rid = handover.derive_handover(conn, proj, sid, transcript_path)
    except (OSError, ValueError, sqlite3.Error) as exc:
        result.notes.append(f"handover not derived: {type(exc).__name__}: {exc}")
        return
    if rid:
        result.notes.append(f"handover {rid} derived from the daily log")


def _run_explicit(conn, proj, sid, batch) -> Result:
    written = []
    for stmt in explicit.from_entries(batch.entries):
        rec = _write(conn, proj.id, sid, explicit.to_record(stmt))
        if rec:
            written.append(rec)
    _save(conn, sid, batch.watermark)
    return Result("written" if written else "nothing", "explicit", written=written)


def _context(conn, proj) -> list[dict]:
    return records.active(conn, proj.id, ("decision", "convention", "preference"), limit=CONTEXT_RECORDS,
                          include_global=True)


def _run_llm(conn, proj, sid, batch, blocks, client) -> Result:
    from agentctx import llm
    from agentctx.capture import handover

    usage = llm.Usage()
    recs = _context(conn, proj)
    base = handover.read(conn, proj.id)  # what active_work replaces; concurrent writes get merged
    window, wins = prompts.windows(blocks)
    try:
        client = client or llm.Client()
        data = _ask(client, wins, recs, usage)
    except (llm.LLMError, schema.SchemaError) as exc:
        _save(conn, sid, None, usage, run=False, project_id=proj.id)  # what was billed is counted; nothing else moves
        return Result("failed", "llm", usage=usage, error=f"{type(exc).__name__}: {exc}", window=window)
    if data["flush_ok"]:
        _save(conn, sid, batch.watermark, usage, project_id=proj.id)
        return Result("flush_ok", "llm", usage=usage, window=window)
    notes: list[str] = []
    written = apply(conn, proj, sid, data, recs, notes, base)
    _save(conn, sid, batch.watermark, usage, project_id=proj.id)
    return Result("written" if written else "nothing", "llm", written=written, usage=usage, window=window,
                  notes=notes)


def _ask(client, wins: list[list[str]], recs: list[dict], usage) -> dict:
    """One call per window; with several windows (map-reduce), a synthesis call merges them."""
    if len(wins) == 1:
        return schema.parse(client.complete(prompts.SYSTEM, prompts.user_message(wins[0], recs), usage))
    from concurrent.futures import ThreadPoolExecutor

    def one(args):
        i, win = args
        return schema.parse(client.complete(prompts.SYSTEM, prompts.user_message(win, recs, f"{i}/{len(wins)}"),
                                            usage))

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        parts = list(pool.map(one, enumerate(wins, 1)))
    useful = [p for p in parts if not p["flush_ok"]]
    if len(useful) <= 1:
        return useful[0] if useful else parts[-1]
    replies = [json.dumps(p, ensure_ascii=False) for p in useful]
    return schema.parse(client.complete(prompts.SYSTEM, prompts.synthesis_message(replies, recs), usage))


def _key(rtype: str, title: str) -> str:
    return f"llm.{rtype}." + hashlib.sha256(explicit.normalize(title).encode()).hexdigest()[:20]


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1].rstrip() + "…"


def _supersedable(recs: list[dict], ref, notes: list[str]) -> str | None:
    """The id a decision may supersede: a current decision or convention shown to the model."""
    if not ref:
        return None
    ref = str(ref).strip().upper()
    matches = [r for r in recs if r["type"] in ("decision", "convention") and len(ref) >= 8 and r["id"].startswith(ref)]
    if len(matches) != 1:
        notes.append(f"supersedes {ref!r} ignored: not a current decision or convention")
        return None
    return matches[0]["id"]


def plan(data: dict, recs: list[dict], notes: list[str]) -> list[dict]:
    """``records.add`` arguments for a validated reply (without handover)."""
    out = []
    for d in data["decisions"]:
        out.append({"type": "decision", "title": _title(d["what"]), "body": d["rationale"],
                    "confidence": d["confidence"], "supersedes": _supersedable(recs, d["supersedes"], notes),
                    "entities": d.get("entities") or []})
    for p in data["preferences"]:
        out.append({"type": "preference", "title": _title(p["rule"]), "body": f"Category: {p['category']}.",
                    "confidence": p["confidence"], "scope": p["scope"]})
    for c in data["conventions"]:
        out.append({"type": "convention", "title": _title(c["convention"]), "body": f"Applies to: {c['scope']}.",
                    "confidence": c["confidence"], "entities": c.get("entities") or []})
    for g in data["gotchas"]:
        out.append({"type": "discovery", "title": _title(g["pattern"]), "body": g["why_it_matters"],
                    "confidence": "inferred", "entities": g.get("entities") or []})
    for item in out:
        item.update(source="llm_extraction", key=_key(item["type"], item["title"]))
    return out


def apply(conn, proj, sid: str, data: dict, recs: list[dict], notes: list[str], base: dict | None = None) -> list[str]:
    """Write a validated reply's records and handover; return the ids written."""
    items = []
    for item in plan(data, recs, notes):
        try:
            records.validate(type=item["type"], title=item["title"], body=item["body"],
                             scope=item.get("scope", "project"), confidence=item["confidence"],
                             key=item["key"], source=item["source"])
        except records.RecordError as exc:
            notes.append(f"{item['type']} dropped: {exc}")
            continue
        items.append(item)
    written: list[str] = []
    named: dict[str, list[str]] = {}  # record id -> the entities the model said it is about
    for item in items:
        rid = _write(conn, proj.id, sid, item)
        if rid:
            written.append(rid)
            named[rid] = item.get("entities") or []
    _link(conn, proj, named, notes)
    if schema.has_work(data):
        rid = _write_handover(conn, proj, sid, data["active_work"], base)
        if rid:
            written.append(rid)
    return written


def _write(conn, project_id: str, sid: str, item: dict) -> str | None:
    """``records.add`` unless this session already wrote the same fact (a retried run)."""
    if item["type"] == "preference" and item.get("scope") == "global":
        from agentctx.capture import devprofile  # the same rule from any project reinforces one record (ADR-010)

        seen = devprofile.find(conn, item["key"])
        if seen:
            return seen["id"] if devprofile.sighting(conn, seen, sid, item["confidence"] == "explicit") else None
    holder = records.by_key(conn, project_id, item["key"])
    if holder and holder["session_id"] == sid and not item.get("supersedes"):
        return None
    fields = {k: v for k, v in item.items() if k not in ("key", "entities")}
    _, rec = records.upsert_by_key(conn, project_id, item["key"], session_id=sid, same=_said_again, **fields)
    return rec["id"]


def _link(conn, proj, named: dict[str, list[str]], notes: list[str]) -> None:
    """Link the records just written to what they mention and what the model said they are about
    (``capture.entities``); a failure costs the links, never the records."""
    if not named:
        return
    from agentctx.capture import entities

    try:
        vocab = entities.vocabulary(proj.root)
        with db.transaction(conn):
            for rid, names in named.items():
                rec = records.get(conn, rid, proj.id)
                if rec and rec["scope"] == "project":  # a global preference is about no project's files
                    entities.link_record(conn, proj.id, rec, vocab, extra=entities.resolve(names, vocab))
    except (OSError, ValueError, sqlite3.Error) as exc:
        notes.append(f"entity links skipped: {type(exc).__name__}: {exc}")


def _said_again(holder: dict, title: str, body: str) -> bool:
    """The same fact in other words (case, spacing, punctuation): it reinforces, it does not replace."""
    return explicit.normalize(holder["title"]) == explicit.normalize(title) and \
        explicit.normalize(holder["body"]) == explicit.normalize(body)


def _write_handover(conn, proj, sid: str, work: dict, base: dict | None) -> str | None:
    """The session's handover from active_work (optimistic concurrency: ``handover.save``)."""
    from agentctx.capture import handover

    handover.save(conn, proj.id, sid, work, base=base, source="llm_extraction", confidence="inferred")
    head = handover.read(conn, proj.id)["record"]
    return head["id"] if head else None
