"""The coding set (``coding_set.json``): four projects' records and developer prompts, written by hand.

Records are written through the real record API, oldest first, one session per project and date,
with supersession as ``records.supersede`` does it. Prompts are answerable (``answer`` names the
records that answer them; kind ``trap`` when worded like a superseded record rather than its
replacement) or unrelated to the project they are asked in (``other-project``, ``generic``,
``trivial``): those should inject nothing.
"""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "coding_set.json")
UNRELATED = ("other-project", "generic", "trivial")


def load() -> dict:
    with open(DATA, encoding="utf-8") as fh:
        return json.load(fh)


def kind(prompt: dict) -> str:
    return prompt.get("kind") or "answer"


def project_of(name: str, remote: str):
    from agentctx import project

    return project.Project("coding-" + name, name, "/nonexistent/" + name, remote)


def build(conn, data: dict) -> dict[str, tuple[str, dict[str, str]]]:
    """Write every project; {project name: (project id, record key → record id)}."""
    from agentctx import clock
    from agentctx.store import projects, records

    out = {}
    saved = os.environ.get("AGENTCTX_NOW")
    for p in data["projects"]:
        proj = project_of(p["name"], p["remote"])
        projects.register(conn, proj)
        ids: dict[str, str] = {}
        for r in sorted(p["records"], key=lambda r: r["date"]):  # stable: file order within a day
            stamp = clock.parse(r["date"] + "T10:00:00Z")
            session = f"{proj.id}-{r['date']}"
            os.environ["AGENTCTX_NOW"] = stamp  # transaction time = the session's time
            if r.get("supersedes"):
                rec = records.supersede(conn, proj.id, ids[r["supersedes"]], title=r["title"], body=r["body"],
                                        valid_from=stamp, session_id=session)
            else:
                rec = records.add(conn, proj.id, type=r["type"], title=r["title"], body=r["body"], valid_from=stamp,
                                  recorded_at=stamp, session_id=session)
            ids[r["key"]] = rec["id"]
        out[p["name"]] = (proj.id, ids)
    if saved is None:
        os.environ.pop("AGENTCTX_NOW", None)
    else:
        os.environ["AGENTCTX_NOW"] = saved
    return out
