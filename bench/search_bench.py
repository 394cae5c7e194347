"""In-process latency of both retrieval paths on realistic stores, before and after a consolidation pass.

    uv run python bench/search_bench.py                   # 10k and 100k records
    uv run python bench/search_bench.py --sizes 10000     # one size

For each size a store is built with bench/make_store.py, then timed, per query (median and p95 over the
30 prompts of bench/prompts.py, ``--rounds`` passes after a warm-up pass):

* the UserPromptSubmit selection (``injection.turn.select``, a fresh session each time): FTS5 candidates,
  the second ranking stage, the answer gate; on the store as built, and after ``agentctx consolidate``
  (expansion terms indexed, session context stored);
* ``ctx_search`` in-process (``surfaces.mcp_tools.Service.search``, the object the MCP server holds) over the
  30 keyword queries of bench/mcp_bench.py, after the pass with the embedding model (``AGENTCTX_EMBED_MODEL``,
  default ../shared/models/m2v-minilm-l6-256): the hybrid ranking (FTS5 + vectors + session neighbours);
  skipped with a message without the model.

Writes bench/results/search.json and bench/results/search.md.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, BENCH)

from make_store import build as build_store  # noqa: E402
from make_store import project_dir  # noqa: E402
from mcp_bench import QUERIES  # noqa: E402
from prompts import PROMPTS  # noqa: E402

MODEL = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "m2v-minilm-l6-256"))


def stats(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"runs": len(ordered), "median_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)], 2)}


def time_calls(fn, rounds: int, inputs: list[str] = PROMPTS) -> dict:
    for p in inputs:  # warm-up: page cache, statement cache, lazily built tables
        fn(p)
    samples = []
    for _ in range(rounds):
        for p in inputs:
            t0 = time.perf_counter()
            fn(p)
            samples.append((time.perf_counter() - t0) * 1000)
    return stats(samples)


def bench_size(n: int, rounds: int, model: bool) -> dict:
    from agentctx import project
    from agentctx.consolidation import consolidate
    from agentctx.injection import turn
    from agentctx.store import db
    from agentctx.surfaces import mcp_tools

    out: dict = {"records": n}
    with tempfile.TemporaryDirectory() as home:
        build_store(home, n, quiet=True)
        proj = project.detect(project_dir(home))
        conn = db.connect()
        counter = iter(range(10**9))

        def hook(prompt: str):
            return turn.select(conn, proj.id, f"bench-{next(counter)}", prompt)

        out["hook_as_built"] = time_calls(hook, rounds)
        t0 = time.perf_counter()
        report = consolidate.run(proj, seconds=3600, use_embeddings=model)
        out["consolidate_s"] = round(time.perf_counter() - t0, 1)
        out["consolidate_steps"] = report.get("timings")
        conn.close()  # as between sessions: the pass's writes checkpointed, a new connection (hooks open their own)
        conn = db.connect()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        out["hook_consolidated"] = time_calls(hook, rounds)
        injected = [len(hook(p)[1]) for p in PROMPTS]
        out["records_injected_per_prompt"] = round(statistics.fmean(injected), 2)
        out["prompts_with_nothing_injected"] = sum(1 for k in injected if not k)
        if model:
            service = mcp_tools.Service(project_dir(home))
            service.warm()
            assert service.vectors() is not None, "vectors were not loaded"
            out["ctx_search_hybrid"] = time_calls(service.search, rounds, QUERIES)
            service.close()
        conn.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(BENCH, "results"))
    args = ap.parse_args(argv)
    if not os.environ.get("AGENTCTX_EMBED_MODEL") and os.path.isdir(MODEL):
        os.environ["AGENTCTX_EMBED_MODEL"] = MODEL
    model = os.path.isdir(os.path.expanduser(os.environ.get("AGENTCTX_EMBED_MODEL", MODEL)))
    if not model:
        print(f"ctx_search hybrid skipped: no model at {MODEL} (../shared is absent; set AGENTCTX_EMBED_MODEL)",
              file=sys.stderr)
    os.environ["AGENTCTX_LLM"] = "0"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    results = {"command": "uv run python bench/search_bench.py" + (f" --sizes {args.sizes}" if args.sizes !=
                                                                   "10000,100000" else ""),
               "load_average_1m_start": load, "cpus": os.cpu_count(), "sizes": []}
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"{size:,} records ...", flush=True)
        results["sizes"].append(bench_size(size, args.rounds, model))
    results["load_average_1m_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    md = ["# Retrieval latency, in-process (bench/search_bench.py)", "",
          f"Command: `{results['command']}`; {results['cpus']} CPUs; load average (1 min) "
          f"{results['load_average_1m_start']} at the start, {results['load_average_1m_end']} at the end. "
          "Median / p95 ms per call over the 30 prompts of bench/prompts.py (ctx_search: the 30 keyword queries of "
          "bench/mcp_bench.py).", "",
          "| | " + " | ".join(f"{s['records']:,} records" for s in results["sizes"]) + " |",
          "|---|" + "---:|" * len(results["sizes"])]
    rows = [("UserPromptSubmit selection (`turn.select`), store as built", "hook_as_built"),
            ("UserPromptSubmit selection after `agentctx consolidate`", "hook_consolidated"),
            ("ctx_search in-process (hybrid, after the pass with the model)", "ctx_search_hybrid")]
    for label, key in rows:
        md.append(f"| {label} | " + " | ".join(
            f"{s[key]['median_ms']} / {s[key]['p95_ms']}" if key in s else "–" for s in results["sizes"]) + " |")
    md.append("| consolidation pass (s) | " + " | ".join(str(s["consolidate_s"]) for s in results["sizes"]) + " |")
    md.append("| records injected per prompt (prompts with none of 30) | " + " | ".join(
        f"{s['records_injected_per_prompt']} ({s['prompts_with_nothing_injected']})" for s in results["sizes"]) + " |")
    from agentctx import fsio

    fsio.write_json(os.path.join(args.out, "search.json"), results, indent=1)
    fsio.write_atomic(os.path.join(args.out, "search.md"), "\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
