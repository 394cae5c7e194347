"""Consolidation pass: wall time and peak memory (ru_maxrss of the child) at 1k / 10k / 100k records,
and embedding throughput. The store comes from bench/make_store.py (cached under --cache).

    AGENTCTX_EMBED_MODEL=../shared/models/m2v-minilm-l6-256 uv run --group dev python bench/consolidate_bench.py

Each size: a fresh copy of the built store, then ``python lib/agentctx_consolidate.py`` as a child
process (the first pass embeds every record) and a second pass right after (nothing pending).
Writes bench/results/consolidate.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
SCRIPT = os.path.join(ROOT, "lib", "agentctx_consolidate.py")
STEPS = ("index", "embed", "dedup", "expand", "scores", "cold", "others", "rank")


def one_pass(home: str, repo: str, budget: float) -> dict:
    env = {**os.environ, "AGENTCTX_HOME": home, "AGENTCTX_LLM": "0"}
    env.pop("ANTHROPIC_API_KEY", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, SCRIPT, "--cwd", repo, "--json", "--time-budget", str(budget)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    report = json.loads(out)
    emb = report["steps"].get("embeddings", {})
    return {"seconds": round(wall, 2), "pass_seconds": report.get("seconds"), "status": report["status"],
            "peak_mb": round(usage.ru_maxrss / 1024, 1), "embedded": emb.get("embedded"),
            "embed_seconds": emb.get("seconds"), "embed_per_second": emb.get("per_second"),
            "merged": report["steps"].get("dedup", {}).get("merged"),
            "expanded": report["steps"].get("expand", {}).get("expanded"),
            "rescored": report["steps"].get("scores", {}).get("rescored"),
            "archived": report["steps"].get("archive", {}).get("moved"), "timings": report.get("timings")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--cache", default="/tmp/agentctx-bench-consolidate")
    ap.add_argument("--budget", type=float, default=600, help="time box for the measured passes (s)")
    args = ap.parse_args()
    import make_store

    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        built = os.path.join(args.cache, f"store-{n}")
        if not os.path.exists(os.path.join(built, "agentctx.db")):
            shutil.rmtree(built, ignore_errors=True)
            make_store.build(built, n, quiet=True)
        home = os.path.join(args.cache, f"run-{n}")
        shutil.rmtree(home, ignore_errors=True)
        shutil.copytree(built, home, symlinks=True)
        repo = make_store.project_dir(home)
        load_before = round(os.getloadavg()[0], 2)
        first = one_pass(home, repo, args.budget)
        second = one_pass(home, repo, args.budget)
        rows.append({"records": n, "first": first, "second": second, "load_average_1m_before": load_before,
                     "load_average_1m": round(os.getloadavg()[0], 2)})
        print(json.dumps(rows[-1]), flush=True)
        shutil.rmtree(home, ignore_errors=True)
    cmd = ("AGENTCTX_EMBED_MODEL=../shared/models/m2v-minilm-l6-256 uv run --group dev python "
           f"bench/consolidate_bench.py --sizes {args.sizes}")
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = {"command": cmd, "date": date, "cpus": os.cpu_count(), "model": os.environ.get("AGENTCTX_EMBED_MODEL"),
           "rows": rows}
    results = os.path.join(ROOT, "bench", "results")
    with open(os.path.join(results, "consolidate.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=2)
    md = ["# Consolidation pass", "", f"Command: `{cmd}`, {date}, {os.cpu_count()} CPUs (a machine shared with other "
          "work: load average before and after noted)", "",
          "| records | first pass s | peak MB | embedded | embed/s | merged | expanded | archived | second pass s | "
          "second peak MB | expanded again | load 1m before / after |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    md_steps: list[str] = []
    for r in rows:
        f, s = r["first"], r["second"]
        for label, p in (("first", f), ("second", s)):
            md_steps.append(f"| {r['records']:,} {label} | "
                            + " | ".join(str((p.get('timings') or {}).get(k, '')) for k in STEPS) + " |")
        md.append(f"| {r['records']:,} | {f['seconds']} ({f['status']}) | {f['peak_mb']} | {f['embedded']} | "
                  f"{f['embed_per_second']} | {f['merged']} | {f['expanded']} | {f['archived']} | {s['seconds']} | "
                  f"{s['peak_mb']} | {s['expanded']} | {r['load_average_1m_before']} / {r['load_average_1m']} |")
    md += ["", "Seconds per step (first pass, then the second with nothing new):", "",
           "| records | " + " | ".join(STEPS) + " |", "|---|" + "---:|" * len(STEPS), *md_steps]
    with open(os.path.join(results, "consolidate.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
