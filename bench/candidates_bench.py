"""The per-prompt query with its candidate generation bounded (``store.search.candidate_match``) and
unbounded (every informative word ORed, as before issue 21), on an existing store.

    uv run python bench/make_store.py --home /tmp/s100k --records 100000   # once
    uv run python bench/candidates_bench.py --home /tmp/s100k [--rounds 3] [--postings N]

For each of the 30 prompts of bench/prompts.py, in-process and in a fresh session each time: what
UserPromptSubmit would inject (``injection.turn.select``) and the top 10 of ``search.search`` with
the hook's arguments, both ways. Prints the agreement (same injected records, same top 3, top-10
overlap) and the median / p95 time per prompt of each way (the best of ``--rounds`` runs per prompt).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, BENCH)

from prompts import PROMPTS  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True, help="AGENTCTX_HOME of a store built by bench/make_store.py")
    ap.add_argument("--rounds", type=int, default=3, help="runs per prompt and way; the fastest counts")
    ap.add_argument("--postings", type=int, default=None, help="the bound to try (default: CANDIDATE_POSTINGS)")
    args = ap.parse_args(argv)
    os.environ["AGENTCTX_HOME"] = os.path.abspath(args.home)
    from make_store import project_dir

    from agentctx import project
    from agentctx.injection import turn
    from agentctx.store import db, search

    proj = project.detect(project_dir(os.environ["AGENTCTX_HOME"]))
    conn = db.connect()
    default = search.CANDIDATE_POSTINGS
    bound = args.postings or default
    ways = {"bounded": bound, "unbounded": 10**12}
    times: dict[str, list[float]] = {w: [] for w in ways}
    picked: dict[str, list] = {w: [] for w in ways}
    for i, prompt in enumerate(PROMPTS):
        for way, postings in ways.items():
            search.CANDIDATE_POSTINGS = postings
            best = math.inf
            for r in range(args.rounds):
                t0 = time.perf_counter()
                chosen = turn.select(conn, proj.id, f"cand-{way}-{i}-{r}", prompt)
                best = min(best, (time.perf_counter() - t0) * 1000)
            top = [h.record["id"] for h in search.search(conn, proj.id, prompt, limit=10,
                                                         relative_floor=turn.RELATIVE_FLOOR)]
            times[way].append(best)
            picked[way].append((list(chosen[1]), top))
    search.CANDIDATE_POSTINGS = default
    n = len(PROMPTS)
    same_injected = sum(picked["bounded"][i][0] == picked["unbounded"][i][0] for i in range(n))
    same_top3 = sum(picked["bounded"][i][1][:3] == picked["unbounded"][i][1][:3] for i in range(n))
    overlap = statistics.fmean(len(set(picked["bounded"][i][1]) & set(picked["unbounded"][i][1]))
                               / max(1, len(picked["unbounded"][i][1])) for i in range(n))
    out = {"home": args.home, "prompts": n, "candidate_postings": bound, "loadavg": [round(x, 2) for x in os.getloadavg()],
           "same_injected": same_injected, "same_top3": same_top3, "top10_overlap": round(overlap, 3)}
    for way in ways:
        ordered = sorted(times[way])
        out[f"{way}_median_ms"] = round(statistics.median(ordered), 2)
        out[f"{way}_p95_ms"] = round(ordered[max(0, math.ceil(0.95 * n) - 1)], 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
