"""LoCoMo dev split (``../shared/eval/locomo-dev.json``) loaded the way a user's store holds it.

Conventions (``../shared/eval/README.md``): one record per dialog turn, body ``speaker: text``
plus `` [image: caption]``, valid from its session's date, one project per conversation;
questions of categories 1–4 whose evidence ids name turns of the conversation; recall_any@k.

Each turn becomes a ``discovery`` record (the type a fact learnt in a session gets, and one
that decays) titled only with its session number (no content words: the body carries the turn, as
the README fixes), written through the real
record API with the session as ``session_id``. The data never enters the repository: it is
read from the shared folder, and everything here skips with a message when it is absent.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.environ.get("AGENTCTX_EVAL_LOCOMO") or os.path.join(ROOT, "..", "shared", "eval", "locomo-dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_SESSION = re.compile(r"session_(\d+)$")


def missing() -> str | None:
    """Why the data cannot be used here, or None when it can."""
    if not os.path.isfile(DATA):
        return (f"LoCoMo dev split not found at {os.path.normpath(DATA)} (it lives in ../shared/eval, outside the "
                "repository; set AGENTCTX_EVAL_LOCOMO to its path): LoCoMo figures skipped")
    return None


def load() -> list[dict]:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)


def session_date(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` as a naive UTC datetime."""
    return datetime.strptime(" ".join(text.replace(",", "").split()), "%I:%M %p on %d %B %Y")


def turns(conv: dict) -> list[dict]:
    """Every turn in order: dia_id, session number, date, body, speaker."""
    c = conv["conversation"]
    out = []
    for key in sorted((k for k in c if _SESSION.match(k)), key=lambda k: int(_SESSION.match(k).group(1))):
        n = int(_SESSION.match(key).group(1))
        date = session_date(c[f"{key}_date_time"])
        for i, t in enumerate(c[key]):
            body = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                body += f" [image: {t['blip_caption']}]"
            out.append({"dia_id": t["dia_id"], "session": n, "date": date + timedelta(seconds=i),
                        "speaker": t["speaker"], "body": body})
    return out


def questions(conv: dict, known: set[str]) -> list[dict]:
    """Questions of categories 1–4 with at least one valid evidence id."""
    out = []
    for q in conv["qa"]:
        if q.get("category") not in CATEGORIES:
            continue
        ev = {e for part in q.get("evidence", []) for e in re.split(r"[;\s]+", str(part)) if e}
        ev &= known
        if ev:
            out.append({"question": q["question"], "evidence": ev, "category": q["category"]})
    return out


def last_date(conv: dict) -> datetime:
    return max(t["date"] for t in turns(conv))


def title_for(turn: dict) -> str:
    """A neutral title (a turn has none): the session it came from, no content words."""
    return f"Session {turn['session']}"


def build(conn, conv: dict) -> tuple[str, dict[str, str]]:
    """Write one conversation as a project's records; (project id, dia_id → record id)."""
    from agentctx import clock
    from agentctx import ids as record_ids
    from agentctx.store import projects, records

    proj = project_of(conv)
    projects.register(conn, proj)
    ids: dict[str, str] = {}
    for t in turns(conv):
        stamp = clock.to_iso(t["date"])
        # an explicit id: a turn that repeats an earlier one ("Bye!") is still its own record
        rec = records.add(conn, proj.id, type="discovery", title=title_for(t), body=t["body"], valid_from=stamp,
                          recorded_at=stamp, source="import", session_id=f"{proj.id}-s{t['session']}",
                          record_id=record_ids.new_id())
        ids[t["dia_id"]] = rec["id"]
    return proj.id, ids


def project_of(conv: dict):
    from agentctx import project

    pid = "locomo-" + conv["sample_id"]
    return project.Project(pid, conv["sample_id"], "/nonexistent/" + pid, None)
