"""How many decisions the entity graph links to at least one file, symbol, package or command.

Run from the repository root::

    uv run python bench/entities_eval.py

On the coding evaluation set (bench/eval/coding_set.json, written through the real record API), the
deterministic linker (``capture.entities.link_project``) runs twice per project:

* **no repository**: as the set is, the projects have no files (roots under /nonexistent): only what a
  record's text itself names as a file or code span can be linked;
* **skeleton repository**: each project gets the skeleton of bench/eval/coding_repos.py (manifest,
  files, definitions). Written after reading the records: an optimistic bound (see that module).

No model is involved (the extraction model's entities need an API key: not measured here). Reports the
share of current decisions (and conventions, bugfixes) with at least one link, the kinds of links, and
every decision's links so their precision can be read. Writes bench/results/entities.json and .md.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from datetime import datetime, timezone

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, os.path.join(BENCH, "eval"))

TYPES = ("decision", "convention", "bugfix")


def run(work: str, with_repos: bool) -> dict:
    import coding
    import coding_repos

    from agentctx import project
    from agentctx.capture import entities
    from agentctx.store import db, graph, records

    home = os.path.join(work, "repos" if with_repos else "plain")
    os.environ["AGENTCTX_HOME"] = home
    os.environ["AGENTCTX_CACHE_DIR"] = os.path.join(home, "cache")
    entities._memo.clear()
    conn = db.connect()
    data = coding.load()
    built = coding.build(conn, data)
    out: dict = {"projects": {}, "kinds": Counter(), "links": []}
    totals = {t: [0, 0] for t in TYPES}
    for p in data["projects"]:
        pid = built[p["name"]][0]
        root = coding_repos.write(os.path.join(work, "src"), p["name"]) if with_repos else f"/nonexistent/{p['name']}"
        proj = project.Project(pid, p["name"], root, p["remote"])
        report = entities.link_project(conn, proj.id, proj.root)
        shares = {}
        for rtype in TYPES:
            linked, total = graph.linked_share(conn, proj.id, (rtype,))
            shares[rtype] = [linked, total]
            totals[rtype][0] += linked
            totals[rtype][1] += total
        out["projects"][p["name"]] = {"shares": shares, "report": report}
        for rec in records.current(conn, proj.id, types=["decision"], order="oldest"):
            links = graph.entities_of(conn, rec["id"])
            out["kinds"].update(e["kind"] for e in links)
            out["links"].append({"project": p["name"], "title": rec["title"],
                                 "links": [f"{e['kind']}:{e['name']}" for e in links]})
    conn.close()
    out["totals"] = totals
    out["kinds"] = dict(out["kinds"])
    return out


def pct(pair: list[int]) -> str:
    return f"{pair[0]}/{pair[1]} ({100 * pair[0] / pair[1]:.0f}%)" if pair[1] else "0/0"


def markdown(result: dict) -> str:
    lines = ["# Entity links on the coding evaluation set", "",
             f"{result['when']} · `uv run python bench/entities_eval.py` · deterministic linker only (no model)", "",
             "Share of current records linked to at least one file, symbol, package or command:", "",
             "| condition | decisions | conventions | bugfixes | link kinds (decisions) |", "|---|---|---|---|---|"]
    for name, res in (("no repository (the set as is)", result["plain"]),
                      ("skeleton repository (optimistic bound)", result["repos"])):
        t = res["totals"]
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(res["kinds"].items()))
        lines.append(f"| {name} | {pct(t['decision'])} | {pct(t['convention'])} | {pct(t['bugfix'])} | {kinds} |")
    lines += ["", "Per project, decisions (no repository → skeleton):", ""]
    for name in result["plain"]["projects"]:
        a = result["plain"]["projects"][name]["shares"]["decision"]
        b = result["repos"]["projects"][name]["shares"]["decision"]
        lines.append(f"- {name}: {pct(a)} → {pct(b)}")
    lines += ["", "Every current decision's links with the skeleton repository:", ""]
    for item in result["repos"]["links"]:
        lines.append(f"- {item['project']}: {item['title']} → {', '.join(item['links']) or '(none)'}")
    return "\n".join(lines) + "\n"


def main() -> None:
    work = tempfile.mkdtemp(prefix="agentctx-entities-")
    try:
        result = {"when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  "plain": run(work, False), "repos": run(work, True)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    with open(os.path.join(BENCH, "results", "entities.json"), "w") as fh:
        json.dump(result, fh, indent=2)
    text = markdown(result)
    with open(os.path.join(BENCH, "results", "entities.md"), "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
