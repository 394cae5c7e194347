"""Retrieval quality on the scripted history (history.py): FTS5 alone vs hybrid (RRF of FTS5 + vectors).

Builds the store in a temporary data dir through the real record API (supersession included),
runs one consolidation pass (embeddings), then asks every question both ways and reports
recall@3, MRR (over the top 10) and the stale-hit rate (a superseded record in the top 3).

    AGENTCTX_EMBED_MODEL=../shared/models/m2v-minilm-l6-256 uv run python bench/eval/run_eval.py

Writes bench/results/eval.json and eval.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, HERE)


def build(home: str):
    os.environ["AGENTCTX_HOME"] = home
    os.environ["AGENTCTX_LLM"] = "0"
    from history import EVENTS

    from agentctx import project
    from agentctx.store import db, records

    repo = os.path.join(home, "tidepool")
    os.makedirs(repo)
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "remote", "add", "origin", "git@example.com:acme/tidepool.git"], check=True)
    proj = project.detect(repo)
    conn = db.connect()
    project.register(conn, proj)
    ids: dict[str, str] = {}
    for name, day, rtype, title, body, supersedes in EVENTS:
        os.environ["AGENTCTX_NOW"] = f"{day}T12:00:00Z"
        if supersedes:
            rec = records.supersede(conn, proj.id, ids[supersedes], body=body, title=title, valid_from=day)
        else:
            rec = records.add(conn, proj.id, type=rtype, title=title, body=body, valid_from=day, confidence="explicit")
        ids[name] = rec["id"]
    os.environ["AGENTCTX_NOW"] = "2026-06-02T09:00:00Z"
    return conn, proj, ids


def evaluate(conn, proj, ids, *, store=None, embedder=None) -> dict:
    from history import QUESTIONS

    from agentctx.consolidation import hybrid

    superseded = {r[0] for r in conn.execute("SELECT id FROM records WHERE superseded_at IS NOT NULL")}
    recall = mrr = stale = 0.0
    rows = []
    for question, names in QUESTIONS:
        want = {ids[n] for n in names}
        got = [r["id"] for r in hybrid.search_records(conn, proj.id, question, store=store, embedder=embedder, limit=10)]
        top3 = got[:3]
        recall += len(want & set(top3)) / len(want)
        rank = next((i + 1 for i, rid in enumerate(got) if rid in want), None)
        mrr += 1.0 / rank if rank else 0.0
        stale_hit = bool(superseded & set(top3))
        stale += stale_hit
        rows.append({"question": question, "rank": rank, "stale_hit": stale_hit})
    n = len(QUESTIONS)
    return {"recall_at_3": round(recall / n, 3), "mrr": round(mrr / n, 3), "stale_hit_rate": round(stale / n, 3),
            "questions": rows}


def main() -> int:
    with tempfile.TemporaryDirectory() as home:
        conn, proj, ids = build(home)
        from agentctx.consolidation import consolidate, embeddings
        from agentctx.store import vectors

        report = consolidate.run(proj, seconds=300)
        fts = evaluate(conn, proj, ids)
        emb = embeddings.load(download=False)
        store = vectors.Store()
        hyb = evaluate(conn, proj, ids, store=store, embedder=emb)
        store.close()
        conn.close()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    out = {"model": emb.tag, "pass": report["status"], "questions": len(fts["questions"]),
           "fts5": fts, "hybrid": hyb, "load_average_1m": load,
           "command": "AGENTCTX_EMBED_MODEL=../shared/models/m2v-minilm-l6-256 uv run python bench/eval/run_eval.py"}
    results = os.path.join(ROOT, "bench", "results")
    with open(os.path.join(results, "eval.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=2)
    md = [
        "# Retrieval evaluation (bench/eval)", "",
        f"Command: `{out['command']}`  ", f"Model: `{emb.tag}`; {out['questions']} questions over "
        "29 records of a scripted 7-session history (5 decisions superseded along the way).", "",
        "| ranking | recall@3 | MRR | stale-hit rate |", "|---|---:|---:|---:|",
        f"| FTS5 only (hot path) | {fts['recall_at_3']:.3f} | {fts['mrr']:.3f} | {fts['stale_hit_rate']:.3f} |",
        f"| hybrid (RRF FTS5 + vectors) | {hyb['recall_at_3']:.3f} | {hyb['mrr']:.3f} | {hyb['stale_hit_rate']:.3f} |",
        "", "| question | FTS5 rank | hybrid rank |", "|---|---:|---:|",
    ]
    for a, b in zip(fts["questions"], hyb["questions"], strict=True):
        md.append(f"| {a['question']} | {a['rank'] or '–'} | {b['rank'] or '–'} |")
    with open(os.path.join(results, "eval.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md[:9]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
