"""The rules of team sync, in one place: what never leaves the machine, and how versions of a record
combine. Pure functions over plain dicts (the *wire* form below); the server applies them when a push
arrives and the client when a pull arrives, so both sides reach the same state.

Wire form: ``WIRE`` fields, timestamps as stored locally (ISO 8601 UTC, fixed width: text order is
time order), ``pinned`` a bool, ``supersedes`` the record it replaced (its predecessor), if any.

* **Stays local** (:func:`withheld`): handovers (one person's session state), the detected project
  profile (``profile`` records and ``profile.*`` keys), hook observations (test runs, error stubs),
  global preferences (the developer profile), like the team file; and anything in a project the user
  did not opt in (the caller knows which). Titles and bodies are redacted again on the way out
  (:func:`outgoing`), unless the record's ``redaction_stamp`` says these rules redacted this very text
  when it was written: ``<private>`` spans are dropped, secrets replaced; a title that is empty then
  keeps the record local.
* **Combine** (:func:`combine`, the server's version first): the content (title, body, type, key,
  pinned, confidence, valid_from, source) of the side that changed it last, where the local side
  counts only when it edited the content since it last synced; a retirement is never undone (the
  server's, when it has one, else the local one).
* **The newer current** (:func:`newest_current`): when two people superseded one fact (the current heads
  of the chains that start from one record), or two current records hold one key in one project, all are
  kept; the newest (recorded_at, then id) stays current and supersedes the others. As the team file does.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentctx import kinds

WIRE = ("id", "project_id", "type", "key", "title", "body", "pinned", "confidence", "source", "supersedes",
        "valid_from", "valid_to", "recorded_at", "superseded_at", "superseded_by", "updated_at")
CONTENT = ("type", "key", "title", "body", "pinned", "confidence", "valid_from", "source", "updated_at")
RETIREMENT = ("superseded_at", "superseded_by", "valid_to")
LOCAL_TYPES = kinds.LOCAL_TYPES  # as the team file: session state, detected per machine


def withheld(rec: dict) -> str | None:
    """Why this local record never leaves the machine (None: it may, if its project is shared)."""
    if rec["type"] in LOCAL_TYPES:
        return rec["type"]
    if (rec.get("key") or "").startswith("profile."):
        return "profile"
    if rec.get("source") == "hook_observation":
        return "hook observation"
    if rec.get("scope", "project") != "project":
        return "global"
    return None


def outgoing(rec: dict, supersedes: str | None = None) -> tuple[dict | None, bool]:
    """(the wire copy of a local record, redacted again; whether redaction changed it). None when
    nothing is left of the title once private spans and secrets are removed."""
    from agentctx import redact

    title, body = rec["title"] or "", rec["body"] or ""
    if rec.get("redaction_stamp") != redact.stamp(title, body):  # not redacted by these rules as it stands
        title, body = redact.redact_all([title, body])
    title, body = " ".join(title.split()), body.strip()
    changed = title != " ".join((rec["title"] or "").split()) or body != (rec["body"] or "").strip()
    if not title:
        return None, True
    out = {k: rec.get(k) for k in WIRE}
    out.update(title=title, body=body, pinned=bool(rec.get("pinned")), supersedes=supersedes)
    return out, changed


def _stamp(rec: dict) -> str:
    return rec.get("updated_at") or rec["recorded_at"]


def combine(server: dict | None, local: dict, local_edited: bool) -> dict:
    """The record both sides should hold, from the server's version (None: it has none) and the
    local one; ``local_edited``: the local content changed since the last sync."""
    if server is None:
        return dict(local)
    out = dict(server)
    if local_edited and _stamp(local) > _stamp(server):
        out.update({k: local[k] for k in CONTENT})
    if not server.get("superseded_at") and local.get("superseded_at"):
        out.update({k: local[k] for k in RETIREMENT})
    if not out.get("supersedes") and local.get("supersedes"):
        out["supersedes"] = local["supersedes"]
    return out


def differs(a: dict, b: dict) -> bool:
    """True when two wire records differ in any synced field."""
    return any(a.get(k) != b.get(k) for k in WIRE)


def _order(rec: dict) -> tuple[str, str]:
    return rec["recorded_at"], rec["id"]


def newest_current(groups: Iterable[list[dict]]) -> dict[str, dict]:
    """{id: its retirement} for every current record that is not the newest of one of its groups.

    A group is a list of current records competing for one place (superseding the same record, or
    holding the same key in one project). A record losing in several groups is superseded by the
    newest of those winners; the result does not depend on the order of the groups.
    """
    beaten: dict[str, tuple[dict, dict]] = {}
    for group in groups:
        if len(group) < 2:
            continue
        winner = max(group, key=_order)
        for rec in group:
            if rec["id"] == winner["id"]:
                continue
            seen = beaten.get(rec["id"])
            if seen is None or _order(winner) > _order(seen[1]):
                beaten[rec["id"]] = (rec, winner)
    return {rid: retirement(rec, winner) for rid, (rec, winner) in beaten.items()}


def retirement(rec: dict, by: dict) -> dict:
    """The retirement fields of ``rec`` superseded by ``by`` (deterministic: from ``by``'s own times, so
    every client computes the same values)."""
    return {"superseded_at": max(by["recorded_at"], rec["recorded_at"]), "superseded_by": by["id"],
            "valid_to": max(by["valid_from"], rec["valid_from"])}
