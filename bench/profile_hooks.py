"""Where the hooks' time goes, phase by phase, and what candidate fixes would save.

Run from the repository root::

    uv run python bench/profile_hooks.py                      # 1k, 10k, 100k records
    uv run python bench/profile_hooks.py --sizes 100000 --runs 20

For each size it builds a store with bench/make_store.py and then:

1. runs bench/_profile_child.py in fresh processes with the hooks' own interpreter, which
   replays UserPromptSubmit (the 30 prompts of bench/prompts.py) and SessionStart (warm
   cache, and live build) step by step: imports, project detection, connect, SQL, Python
   ranking, rendering, the accounting transaction, close. Medians per phase.
2. times digest.build's queries one by one, and prints their EXPLAIN QUERY PLAN and the
   FTS query's, with how many documents each prompt's OR query matches.
3. unless ``--no-prototypes``, compares search variants on the same store, without
   touching lib/: today's ``search.search``; the foundation commit's single FTS query that
   joins every match before sorting; and today's search with every prompt word (the
   ``informative`` pruning off), with how often its top 3 differs. And first-call costs of
   imports in a fresh interpreter (``hashlib`` vs the builtin ``_sha256``, ``strptime`` vs
   ``fromisoformat``).

Writes bench/results/profile.json and bench/results/profile.md (also printed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, BENCH)

from hooks_bench import hook_env, prepare_script  # noqa: E402
from make_store import build as build_store  # noqa: E402
from prompts import PROMPTS  # noqa: E402

CHILD = os.path.join(BENCH, "_profile_child.py")


def med(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def run_child(python: str, args: list[str], env: dict, cwd: str) -> dict:
    proc = subprocess.run([python, CHILD, *args], capture_output=True, env=env, cwd=cwd, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"profile child {args[:1]} failed: {proc.stderr[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def phase_medians(samples: list[dict]) -> dict:
    keys = [k for k in samples[0] if isinstance(samples[0][k], (int, float)) and not isinstance(samples[0][k], bool)]
    return {k: med([s[k] for s in samples if k in s]) for k in keys}


def query_plans(home: str, project_dir: str) -> dict:
    """EXPLAIN QUERY PLAN of every statement digest.build and search.search run (traced)."""
    from agentctx import project
    from agentctx.injection import digest
    from agentctx.scoring import RELATIVE_FLOOR
    from agentctx.store import db, search

    os.environ["AGENTCTX_HOME"] = home
    proj = project.detect(project_dir)
    conn = db.connect()
    seen: dict[str, str] = {}

    def trace(sql: str) -> None:
        head = sql.lstrip().split(None, 1)[0].upper()
        if head in ("SELECT", "WITH") and sql not in seen:
            seen[sql] = ""

    conn.set_trace_callback(trace)
    digest.build(conn, proj)
    search.search(conn, proj.id, PROMPTS[7], limit=3, relative_floor=RELATIVE_FLOOR)
    conn.set_trace_callback(None)
    out = {}
    for sql in seen:
        short = " ".join(sql.split())
        short = re.sub(r"SELECT (?:r\.)?id, .*? FROM", "SELECT <columns> FROM", short)
        short = short[:260] + ("…" if len(short) > 260 else "")
        while short in out:
            short += " "
        try:
            out[short] = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
        except sqlite3.Error as exc:
            out[short] = [f"(not explained: {exc})"]
    conn.close()
    return out


# ---------------------------------------------------------------------------------------
# Prototypes (on a copy of the store; lib/ untouched)
# ---------------------------------------------------------------------------------------


def _timed(db_path: str, fn, runs: int) -> tuple[float, object]:
    """Median ms of fn(conn) over fresh connections (SQLite's page cache cold, as in a hook)."""
    times, result = [], None
    for _ in range(runs):
        conn = sqlite3.connect(db_path)
        conn.row_factory = sqlite3.Row
        t = time.perf_counter()
        result = fn(conn)
        times.append((time.perf_counter() - t) * 1000)
        conn.close()
    return med(times), result


def prototypes(home: str, project_id: str, runs: int) -> dict:
    """Search variants on the benchmark store, each against ``search.search`` as it is now.

    * naive: one FTS query joining every match to its row before sorting (the foundation
      commit's query), to show what the two-phase query saves;
    * all words: today's search with ``informative`` (dropping near-ubiquitous words)
      switched off, to show what that pruning saves and how much it changes the top 3.
    """
    from agentctx.scoring import RELATIVE_FLOOR
    from agentctx.store import db, search
    from agentctx.store.query import COLUMNS

    os.environ["AGENTCTX_HOME"] = home
    cols = ", ".join("r." + c.strip() for c in COLUMNS.split(","))
    naive_sql = (
        f"SELECT {cols}, bm25(records_fts, 3.0, 1.0) AS bm FROM records_fts JOIN records r ON "
        "r.seq = records_fts.rowid WHERE records_fts MATCH ? AND (r.project_id = ? OR r.scope = 'global') "
        "AND r.superseded_at IS NULL ORDER BY bm LIMIT ?")

    def timed(fn) -> tuple[float, object]:
        times, result = [], None
        for _ in range(runs):
            conn = db.connect()
            t = time.perf_counter()
            result = fn(conn)
            times.append((time.perf_counter() - t) * 1000)
            conn.close()
        return med(times), result

    def top3(conn, prompt):
        return [h.record["id"] for h in search.search(conn, project_id, prompt, limit=3,
                                                      relative_floor=RELATIVE_FLOOR)]

    now_t, naive_t, all_t, overlap, matched, kept_terms = [], [], [], [], [], []
    has_informative = hasattr(search, "informative")
    for prompt in PROMPTS:
        t_now, ids_now = timed(lambda c, p=prompt: top3(c, p))
        now_t.append(t_now)
        q = search.fts_query(prompt)
        naive_t.append(timed(lambda c, q=q: c.execute(naive_sql, (q, project_id, 60)).fetchall())[0])
        conn = db.connect()
        matched.append(conn.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (q,)).fetchone()[0])
        if has_informative:
            kept_terms.append((len(search.informative(conn, search.terms(prompt))), len(search.terms(prompt))))
        conn.close()
        if has_informative:
            original = search.informative
            search.informative = lambda conn, words: words  # every word, as before the pruning
            try:
                t_all, ids_all = timed(lambda c, p=prompt: top3(c, p))
            finally:
                search.informative = original
            all_t.append(t_all)
            overlap.append(len(set(ids_now) & set(ids_all)) / max(1, len(ids_all)))
    out = {
        "search_now_median_ms": med(now_t), "search_now_max_ms": round(max(now_t), 2),
        "naive_single_query_median_ms": med(naive_t), "naive_single_query_max_ms": round(max(naive_t), 2),
        "docs_matched_all_words_median": int(statistics.median(matched)), "docs_matched_all_words_max": max(matched),
    }
    if has_informative:
        out.update({
            "search_all_words_median_ms": med(all_t), "search_all_words_max_ms": round(max(all_t), 2),
            "top3_overlap_with_all_words_mean": round(statistics.fmean(overlap), 3),
            "prompts_with_identical_top3": sum(1 for o in overlap if o == 1.0),
            "terms_kept_of_total": f"{sum(k for k, _ in kept_terms)}/{sum(t for _, t in kept_terms)}",
        })
    return out


def import_prototypes(python: str) -> dict:
    """First-call costs in a fresh interpreter: strptime vs fromisoformat, hashlib vs _sha256."""
    code = r"""
import time, json
stamp = '2025-03-04T05:06:07.123456Z'
t = time.perf_counter(); import datetime; t_dt = time.perf_counter()
datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%S.%fZ'); t_sp = time.perf_counter()
for _ in range(60): datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%S.%fZ')
t_sp60 = time.perf_counter()
for _ in range(61): datetime.datetime.fromisoformat(stamp[:-1])
t_iso = time.perf_counter()
import hashlib; t_hl = time.perf_counter()
print(json.dumps({'import_datetime_ms': (t_dt - t) * 1e3, 'strptime_first_call_ms': (t_sp - t_dt) * 1e3,
                  'strptime_60_more_ms': (t_sp60 - t_sp) * 1e3, 'fromisoformat_61_calls_ms': (t_iso - t_sp60) * 1e3,
                  'import_hashlib_ms': (t_hl - t_iso) * 1e3}))
"""
    code2 = r"""
import time, json
t = time.perf_counter()
try:
    from _sha2 import sha256
except ImportError:
    from _sha256 import sha256
print(json.dumps({'import_builtin_sha256_ms': (time.perf_counter() - t) * 1e3}))
"""
    samples, samples2 = [], []
    for _ in range(15):
        samples.append(json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True).stdout))
        samples2.append(json.loads(subprocess.run([python, "-c", code2], capture_output=True, text=True).stdout))
    return {**phase_medians(samples), **phase_medians(samples2)}


# ---------------------------------------------------------------------------------------


def profile_size(n: int, work: str, python: str, runs: int, with_prototypes: bool) -> dict:
    home = os.path.join(work, f"store-{n}")
    if os.path.exists(home):
        shutil.rmtree(home)
    print(f"\n{n:,} records: building store", flush=True)
    store = build_store(home, n, quiet=True)
    repo = store["project_dir"]
    env = hook_env(home, repo)
    cache = os.path.join(home, "digests", f"{store['project_id']}.json")

    ups = [run_child(python, ["ups", PROMPTS[i % len(PROMPTS)]], env, repo) for i in range(max(runs, len(PROMPTS)))]
    run_child(python, ["ss"], env, repo)  # leaves a fresh cache
    warm = [run_child(python, ["ss"], env, repo) for _ in range(runs)]
    live = []
    for _ in range(runs):
        os.remove(cache)
        live.append(run_child(python, ["ss"], env, repo))
    parts = [run_child(python, ["parts"], env, repo) for _ in range(max(5, runs // 2))]
    result = {
        "records": n,
        "user_prompt_submit": phase_medians(ups),
        "user_prompt_submit_by_prompt": [{k: u[k] for k in ("select.fts_sql", "select.informative_term_counts", "terms", "injected")} for u in ups[: len(PROMPTS)]],
        "session_start_warm": phase_medians(warm),
        "session_start_live": phase_medians(live),
        "digest_build_parts": phase_medians(parts),
    }
    result["query_plans"] = query_plans(home, repo)
    if with_prototypes:
        result["prototypes"] = prototypes(home, store["project_id"], max(5, runs // 4))
    for key in ("user_prompt_submit", "session_start_warm", "session_start_live"):
        print(f"  {key:<20} in-process total median {result[key]['total_in_process']:.1f} ms", flush=True)
    return result


def markdown(res: dict) -> str:
    sizes = res["sizes"]
    head = "| phase (median ms, in-process) | " + " | ".join(f"{s['records']:,}" for s in sizes) + " |"
    sep = "|---|" + "---:|" * len(sizes)
    lines = ["# Where the hook time goes", "",
             f"Hooks' interpreter: `{res['python']}`. Fresh process per sample; medians. Whole-process time = "
             "`sh` + uv (see hooks.md: uv run on an empty script minus `python -c pass`) + interpreter start "
             "(`python -c pass`) + the in-process total below.", ""]
    for key, title in (("user_prompt_submit", "UserPromptSubmit"), ("session_start_warm", "SessionStart, warm cache"),
                       ("session_start_live", "SessionStart, live digest")):
        lines += [f"## {title}", "", head, sep]
        phases = [k for k in sizes[-1][key] if k not in ("terms", "candidates", "injected")]
        for ph in phases:
            lines.append(f"| {ph} | " + " | ".join(f"{s[key].get(ph, 0):.2f}" for s in sizes) + " |")
        lines.append("")
    lines += ["## digest.build queries (fresh connection each)", "", head, sep]
    for ph in sizes[-1]["digest_build_parts"]:
        lines.append(f"| {ph} | " + " | ".join(f"{s['digest_build_parts'][ph]:.2f}" for s in sizes) + " |")
    lines += ["", "## Query plans of the statements digest.build and search.search run (largest store)", ""]
    for sql, plan in sizes[-1]["query_plans"].items():
        lines.append(f"- `{sql}`: " + " → ".join(f"**{p}**" for p in plan))
    if "prototypes" in sizes[-1]:
        lines += ["", "## Search variants (median / max ms per prompt, in-process, fresh connection)", "",
                  head.replace("phase (median ms, in-process)", "variant"), sep]
        rows = [
            ("search.search now", lambda p: f"{p['search_now_median_ms']:.1f} / {p['search_now_max_ms']:.1f}"),
            ("one query joining every match (foundation commit)",
             lambda p: f"{p['naive_single_query_median_ms']:.1f} / {p['naive_single_query_max_ms']:.1f}"),
            ("documents matched by all the prompt's words (median / max)",
             lambda p: f"{p['docs_matched_all_words_median']:,} / {p['docs_matched_all_words_max']:,}"),
        ]
        if "search_all_words_median_ms" in sizes[-1]["prototypes"]:
            rows += [
                ("search.search with every word (informative() off)",
                 lambda p: f"{p['search_all_words_median_ms']:.1f} / {p['search_all_words_max_ms']:.1f}"),
                ("  query words kept by informative()", lambda p: p["terms_kept_of_total"]),
                ("  top 3 identical to every-word search (prompts)",
                 lambda p: f"{p['prompts_with_identical_top3']}/30 (mean overlap {p['top3_overlap_with_all_words_mean']:.2f})"),
            ]
        for label, fn in rows:
            lines.append(f"| {label} | " + " | ".join(fn(s["prototypes"]) for s in sizes) + " |")
    imp = res.get("import_prototypes")
    if imp:
        lines += ["", "## First-call costs in a fresh interpreter (median ms)", "",
                  "| step | ms |", "|---|---:|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in imp.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="phase-by-phase profile of the agentctx hooks (see bench/README.md)")
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=30, help="fresh processes per case (UserPromptSubmit: ≥ 30)")
    ap.add_argument("--no-prototypes", action="store_true", help="skip the prototyped fixes")
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--out", default=os.path.join(BENCH, "results"))
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    work = args.work_dir or tempfile.mkdtemp(prefix="agentctx-profile-")
    os.makedirs(work, exist_ok=True)
    env = hook_env(os.path.join(work, "scratch"), ROOT)
    uv = shutil.which("uv", path=env["PATH"])
    prepare_script(uv, os.path.join(ROOT, "hooks", "user_prompt_submit.py"), env)
    python = subprocess.run([uv, "python", "find", "--script", os.path.join(ROOT, "hooks", "user_prompt_submit.py")],
                            capture_output=True, text=True, env=env).stdout.strip()
    res = {"python": python, "sizes": []}
    try:
        for n in sizes:
            res["sizes"].append(profile_size(n, work, python, args.runs, not args.no_prototypes))
        res["import_prototypes"] = import_prototypes(python)
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "profile.json"), "w", encoding="utf-8") as fh:
        json.dump(res, fh, indent=1)
    md = markdown(res)
    with open(os.path.join(args.out, "profile.md"), "w", encoding="utf-8") as fh:
        fh.write(md)
    print("\n" + md)


if __name__ == "__main__":
    main()
