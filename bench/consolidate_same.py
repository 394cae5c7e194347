"""Do two checkouts' consolidation passes give the same store? One pass (or more) of each on its own copy of
the same built store, at a fixed clock, then every column of ``records``, ``records_archive``, the edges
(by record, relation and weight: entity node ids are random), every vector (a hash of its bytes, its
project, type and ``checked``) and the ranked digest files compared, column by column, after each pass.

    AGENTCTX_EMBED_MODEL=../shared/models/m2v-minilm-l6-256 uv run --group dev python bench/consolidate_same.py \\
        --a /path/to/old/checkout --b . --records 30000 --passes 2

Prints, per pass, the wall time of each step of each side and the columns that differ (with an example);
exit 0 when every pass matched. (The stores are kept under --work for a look afterwards.)
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
NOW = "2026-12-04T21:00:00Z"

CHILD = r"""
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "lib"))
from agentctx import project
from agentctx.consolidation import consolidate
proj = project.detect(sys.argv[2])
for _ in range(int(sys.argv[3])):
    report = consolidate.run(proj, seconds=3600)
    print(json.dumps({"status": report["status"], "seconds": report["seconds"], "timings": report["timings"]}),
          flush=True)
    sys.stdin.readline()  # the parent snapshots the store between passes
"""


def snapshot(home: str) -> dict:
    out: dict = {}
    conn = sqlite3.connect(os.path.join(home, "agentctx.db"))
    for table in ("records", "records_archive"):
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        out[table] = {r[cols.index("id")]: dict(zip(cols, r, strict=True)) for r in conn.execute(f"SELECT * FROM {table}")}
    edges = collections.Counter(conn.execute("SELECT from_id, rel_type, weight, created_at FROM edges"))
    out["edges"] = {k: {"count": n} for k, n in edges.items()}
    conn.close()
    vec = sqlite3.connect(os.path.join(home, "vectors.db"))
    out["vectors"] = {rid: {"project_id": p, "type": t, "checked": c, "vec": hashlib.sha1(b).hexdigest()}
                      for rid, p, t, c, b in vec.execute("SELECT record_id, project_id, type, checked, vec FROM vectors")}
    vec.close()
    digests = {}
    for folder, subfolders, files in os.walk(os.path.join(home, "digests")):
        if "sealed" in subfolders:  # a sealed start is named by its folder's path, which differs between the copies
            subfolders.remove("sealed")
        for name in files:
            with open(os.path.join(folder, name), "rb") as fh:
                digests[name] = {"sha1": hashlib.sha1(fh.read()).hexdigest()}
    out["digests"] = digests
    return out


def compare(a: dict, b: dict) -> list[str]:
    problems = []
    for table in a:
        ta, tb = a[table], b[table]
        if set(ta) != set(tb):
            problems.append(f"{table}: {len(set(ta) - set(tb))} rows only in a, {len(set(tb) - set(ta))} only in b")
        differ: dict[str, list] = {}
        for key in set(ta) & set(tb):
            for col, value in ta[key].items():
                if tb[key].get(col) != value:
                    differ.setdefault(col, []).append(key)
        for col, keys in sorted(differ.items()):
            k = keys[0]
            problems.append(f"{table}.{col}: {len(keys)} rows differ, e.g. {k}: {ta[k][col]!r:.80} | {tb[k][col]!r:.80}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="checkout A (its lib/ is imported)")
    ap.add_argument("--b", default=ROOT, help="checkout B (default: this one)")
    ap.add_argument("--records", type=int, default=10000)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--work", default="/tmp/agentctx-consolidate-same")
    args = ap.parse_args()
    import make_store

    built = os.path.join(args.work, f"store-{args.records}")
    if not os.path.exists(os.path.join(built, "agentctx.db")):
        shutil.rmtree(built, ignore_errors=True)
        make_store.build(built, args.records, quiet=True)
    snaps: dict[str, list] = {}
    for side, checkout in (("a", args.a), ("b", args.b)):
        home = os.path.join(args.work, f"run-{side}")
        shutil.rmtree(home, ignore_errors=True)
        shutil.copytree(built, home, symlinks=True)
        env = {**os.environ, "AGENTCTX_HOME": home, "AGENTCTX_LLM": "0", "AGENTCTX_NOW": NOW}
        env.pop("ANTHROPIC_API_KEY", None)
        proc = subprocess.Popen([sys.executable, "-c", CHILD, os.path.abspath(checkout), make_store.project_dir(home),
                                 str(args.passes)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        snaps[side] = []
        for i in range(args.passes):
            report = json.loads(proc.stdout.readline())
            print(f"{side} pass {i + 1}: {report['status']} {report['seconds']} s {report['timings']}", flush=True)
            snaps[side].append(pickle.dumps(snapshot(home)))
            proc.stdin.write("\n")
            proc.stdin.flush()
        proc.wait()
    same = True
    for i in range(args.passes):
        problems = compare(pickle.loads(snaps["a"][i]), pickle.loads(snaps["b"][i]))
        same = same and not problems
        print(f"pass {i + 1}: " + ("identical" if not problems else "DIFFERENT"))
        for line in problems:
            print("  " + line)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
