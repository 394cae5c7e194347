"""Ledger rollup of a 10k-record store: time, model calls and input tokens per run.

Builds a store with ``bench/make_store.py`` (the target project holds ~80% of the records, about
half of them discoveries and bugfixes), then runs ``rollup.run`` (the real anthropic SDK against
the fake Messages API from the test suite, answering a fixed valid summary, optionally after
``--latency`` seconds) until the project is below the threshold. Each run takes at most
``rollup.MAX_CHUNKS`` chunks, so a large backlog is worked off over several consolidation passes.
Token counts are what the fake API reports (~4 characters per token); cost at Haiku 4.5 prices.

    uv run python bench/rollup_bench.py                 # ~1 minute
    uv run python bench/rollup_bench.py --records 1000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lib"), str(ROOT / "bench")]

import make_store  # noqa: E402

from tests.support import fake_api  # noqa: E402

ANSWER = json.dumps({"title": "Recurring payment-service failures and their fixes",
                     "summary": "Timeouts in the ledger client came from missing retries; " * 12})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the fake API waits per call")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "rollup"))
    args = parser.parse_args(argv)
    home = tempfile.mkdtemp(prefix="agentctx-rollup-bench-")
    make_store.build(home, args.records, quiet=True)
    from agentctx import llm, project
    from agentctx.consolidation import rollup
    from agentctx.store import db

    proj = project.detect(make_store.project_dir(home))
    reply = fake_api.delay(args.latency, fake_api.text(ANSWER)) if args.latency else fake_api.text(ANSWER)
    runs = []
    with fake_api.FakeMessagesAPI(responder=lambda body: reply) as api:
        os.environ.update(ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY="sk-bench-fake")
        conn = db.connect()
        t0 = time.perf_counter()
        plan = rollup.run(conn, proj.id, dry_run=True)
        dry_ms = (time.perf_counter() - t0) * 1000
        client = llm.Client(timeout=30, max_retries=0)
        while True:
            t0 = time.perf_counter()
            report = rollup.run(conn, proj.id, client=client)
            seconds = time.perf_counter() - t0
            if report["status"] != "rolled_up":
                break
            u = report["usage"]
            runs.append({"seconds": round(seconds, 2), "active_before": report["active"],
                         "sources": len(report["sources"]), "chunks": report["chunks"],
                         "meta_rounds": report["meta_rounds"], "calls": u["calls"],
                         "input_tokens": u["input_tokens"], "output_tokens": u["output_tokens"],
                         "cost_usd": u["cost_usd"], "max_prompt_chars": max(report["prompt_chars"])})
        final = report
        conn.close()
    result = {
        "command": "uv run python bench/rollup_bench.py" + (f" --records {args.records}" if args.records != 10_000 else "")
        + (f" --latency {args.latency:g}" if args.latency else "")
        + (f" --out {os.path.relpath(args.out, ROOT)}" if args.out != parser.get_default("out") else ""),
        "records": args.records, "latency_s": args.latency, "dry_run_ms": round(dry_ms, 1),
        "ledger_records_before": plan["active"], "runs": runs, "final_status": final["status"],
        "active_after": final["active"], "total_seconds": round(sum(r["seconds"] for r in runs), 2),
        "total_calls": sum(r["calls"] for r in runs), "total_input_tokens": sum(r["input_tokens"] for r in runs),
        "total_cost_usd": round(sum(r["cost_usd"] for r in runs), 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "loadavg": [round(x, 2) for x in os.getloadavg()], "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    Path(args.out + ".json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Ledger rollup bench", "", f"Command: `{result['command']}` ({result['date']}, load average "
        f"{' / '.join(map(str, result['loadavg']))} at the end, 2 vCPUs shared with other work).", "",
        f"Store: {args.records:,} records (bench/make_store.py); the target project held "
        f"{plan['active']:,} active discoveries/bugfixes. Fake API latency {args.latency} s per call. "
        f"Dry run (plan only): {dry_ms:.0f} ms.", "",
        "| run | active before | rolled up | chunks | meta rounds | calls | input tokens | output tokens | cost | "
        "largest prompt (chars) | time |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(f"| {i} | {r['active_before']:,} | {r['sources']:,} | {r['chunks']} | {r['meta_rounds']} | "
                     f"{r['calls']} | {r['input_tokens']:,} | {r['output_tokens']:,} | ${r['cost_usd']:.3f} | "
                     f"{r['max_prompt_chars']:,} | {r['seconds']:.2f} s |")
    lines += ["", f"Total: {len(runs)} runs, {result['total_calls']} calls, {result['total_input_tokens']:,} input "
              f"tokens, ${result['total_cost_usd']:.3f}, {result['total_seconds']:.1f} s; "
              f"{final['active']} active ledger records left ({final['status']}). Peak RSS {result['peak_rss_mb']} MB "
              "(store build included).", ""]
    Path(args.out + ".md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
