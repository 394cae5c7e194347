"""Retrieval quality of both retrieval paths, on LoCoMo dev (../shared/eval) and on the coding set.

Paths measured, each on a store built through the real record API in a temporary data dir:

* **hot**: what UserPromptSubmit searches with: ``search.search`` with the hook's arguments
  (relative floor), read to depth 10 for recall@3/5/10; no model.
* **injected**: what the hook actually injects (``turn.select``, a fresh session per prompt):
  recall at the injected budget, records and tokens per prompt, the share of injected records
  that answer the prompt, how often nothing is injected.
* **hybrid**: what ``ctx_search`` ranks with after a consolidation pass with the model
  (``AGENTCTX_EMBED_MODEL``, default ``../shared/models/m2v-minilm-l6-256``).
* **bm25** (LoCoMo only): plain Okapi BM25 (bm25.py), no product code: the floor.

LoCoMo follows ../shared/eval/README.md (760 questions of categories 1–4, recall_any@k) and is
measured twice: with the clock today and with the clock at the day after each conversation's last
session. The coding set (coding_set.json) is measured at its own "now". Per-query latency is the
in-process time of each call (median and p95).

    uv run python bench/eval/run_eval.py                 # both sets; writes bench/results/eval.{json,md}
    uv run python bench/eval/run_eval.py --only coding   # the coding set alone (no ../shared needed)
    uv run python bench/eval/run_eval.py --no-hybrid     # no consolidation pass, no model

Where ../shared is absent, the LoCoMo part and the hybrid path are skipped with a message.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, HERE)

import bm25  # noqa: E402
import coding  # noqa: E402
import locomo  # noqa: E402

MODEL = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "m2v-minilm-l6-256"))
KS = (3, 5, 10)
DEPTH = max(KS)
COMMAND = "uv run python bench/eval/run_eval.py"


# ---------------------------------------------------------------------------------------------
# The paths
# ---------------------------------------------------------------------------------------------


class Paths:
    """The retrieval paths over one open store; ``vec`` is (vector store, embedder) or None."""

    def __init__(self, conn, vec=None):
        self.conn, self.vec = conn, vec
        self.session = 0

    def hot(self, pid: str, prompt: str) -> list[str]:
        from agentctx.scoring import RELATIVE_FLOOR
        from agentctx.store import search

        return [h.record["id"] for h in search.search(self.conn, pid, prompt, limit=DEPTH,
                                                       relative_floor=RELATIVE_FLOOR)]

    def injected(self, pid: str, prompt: str) -> tuple[list[str], int]:
        from agentctx.injection import turn

        self.session += 1
        _, ids, tokens = turn.select(self.conn, pid, f"eval-session-{self.session}", prompt)
        return ids, tokens

    def in_session(self, proj, prompt: str) -> tuple[list[str], list[str]]:
        """(the SessionStart digest's record ids, what the prompt then injects): a new session as the hooks see
        it, where a prompt never injects again what SessionStart showed."""
        from agentctx.injection import digest, turn
        from agentctx.store import sessions

        self.session += 1
        sid = f"eval-session-{self.session}"
        start = digest.build(self.conn, proj)
        self.conn.execute("SAVEPOINT eval_session")  # the accounting touches records: undone, so no prompt
        try:  # sees another's use
            sessions.account(self.conn, sid, proj.id, "SessionStart", start.record_ids, start.tokens)
            _, ids, _ = turn.select(self.conn, proj.id, sid, prompt)
        finally:
            self.conn.execute("ROLLBACK TO eval_session")
            self.conn.execute("RELEASE eval_session")
        return start.record_ids, ids

    def hybrid(self, pid: str, prompt: str) -> list[str]:
        from agentctx.consolidation import hybrid

        store, emb = self.vec
        return [r["id"] for r in hybrid.search_records(self.conn, pid, prompt, store=store, embedder=emb,
                                                       limit=DEPTH)]


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - t0) * 1000.0


def latency(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)], 2)}


class Tally:
    """recall_any@k overall and per group, plus latencies."""

    def __init__(self):
        self.hits: dict[tuple[str, int], list[int]] = {}
        self.ms: list[float] = []

    def add(self, group: str, got: list[str], want: set[str], ms: float) -> int | None:
        self.ms.append(ms)
        rank = next((i + 1 for i, g in enumerate(got) if g in want), None)
        for g in ("all", group):
            for k in KS:
                self.hits.setdefault((g, k), []).append(int(rank is not None and rank <= k))
        return rank

    def report(self) -> dict:
        groups = sorted({g for g, _ in self.hits}, key=lambda g: (g != "all", g))
        out = {g: {f"@{k}": round(statistics.fmean(self.hits[(g, k)]), 3) for k in KS} for g in groups}
        for g in groups:
            out[g]["n"] = len(self.hits[(g, KS[0])])
        return {"recall": out, "latency": latency(self.ms)}


class Injections:
    """What the hook injects: recall at the budget, precision, records and tokens, silence."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, kind: str, ids: list[str], tokens: int, want: set[str], stale: set[str], ms: float) -> None:
        self.rows.append({"kind": kind, "n": len(ids), "tokens": tokens, "ms": ms,
                          "relevant": len(want & set(ids)), "hit": bool(want & set(ids)),
                          "stale": len(stale & set(ids))})

    def report(self) -> dict:
        answerable = [r for r in self.rows if r["kind"] not in coding.UNRELATED]
        unrelated = [r for r in self.rows if r["kind"] in coding.UNRELATED]
        out: dict = {"latency": latency([r["ms"] for r in self.rows])}
        if answerable:
            shown = sum(r["n"] for r in answerable)
            out.update(
                answerable=len(answerable),
                recall_at_budget=round(statistics.fmean(r["hit"] for r in answerable), 3),
                precision=round(sum(r["relevant"] for r in answerable) / shown, 3) if shown else None,
                records_per_prompt=round(statistics.fmean(r["n"] for r in answerable), 2),
                tokens_per_prompt=round(statistics.fmean(r["tokens"] for r in answerable), 1),
                answered_but_empty=round(statistics.fmean(r["n"] == 0 for r in answerable), 3),
                max_records=max(r["n"] for r in answerable),
                max_tokens=max(r["tokens"] for r in answerable),
            )
        if unrelated:
            out["unrelated"] = {k: {"n": len(rs), "silent": round(statistics.fmean(r["n"] == 0 for r in rs), 3),
                                    "tokens_per_prompt": round(statistics.fmean(r["tokens"] for r in rs), 1)}
                                for k in coding.UNRELATED if (rs := [r for r in unrelated if r["kind"] == k])}
            out["unrelated"]["all"] = {"n": len(unrelated),
                                       "silent": round(statistics.fmean(r["n"] == 0 for r in unrelated), 3),
                                       "tokens_per_prompt": round(statistics.fmean(r["tokens"] for r in unrelated), 1)}
        out["stale_injected"] = sum(r["stale"] for r in self.rows)
        return out


# ---------------------------------------------------------------------------------------------
# Data sets
# ---------------------------------------------------------------------------------------------


def open_vectors():
    """(vector store, embedder) for the configured model, or None with a message."""
    from agentctx.consolidation import embeddings
    from agentctx.store import vectors

    try:
        emb = embeddings.load(download=False)
    except embeddings.EmbeddingError as exc:
        print(f"hybrid skipped: {exc}", file=sys.stderr)
        return None
    return vectors.Store(), emb


def consolidate(projects, use_embeddings: bool) -> None:
    """One consolidation pass per project, as SessionEnd leaves the store (expansion always; vectors
    only with the model)."""
    from agentctx.consolidation import consolidate as pass_

    for proj in projects:
        report = pass_.run(proj, seconds=3600, use_embeddings=use_embeddings)
        if report["status"] != "ok":
            raise SystemExit(f"consolidation of {proj.id} ended {report['status']}: {report.get('notes')}")


def set_clock(stamp: str | None) -> None:
    if stamp:
        os.environ["AGENTCTX_NOW"] = stamp
    else:
        os.environ.pop("AGENTCTX_NOW", None)


def run_locomo(conn, hybrid: bool) -> dict:
    from agentctx import clock

    convs = locomo.load()
    built = []
    for conv in convs:
        pid, ids = locomo.build(conn, conv)
        built.append((conv, pid, ids, locomo.questions(conv, set(ids))))
    consolidate([locomo.project_of(c) for c in convs], hybrid)
    vec = open_vectors() if hybrid else None
    paths = Paths(conn, vec)
    out: dict = {"questions": sum(len(q) for *_, q in built), "records": sum(len(i) for _, _, i, _ in built)}
    floor = Tally()
    for conv, _pid, _ids, qs in built:
        index = bm25.Index([(t["dia_id"], t["body"]) for t in locomo.turns(conv)])
        for q in qs:
            got, ms = timed(index.search, q["question"], DEPTH)
            floor.add(locomo.CATEGORIES[q["category"]], got, q["evidence"], ms)
    out["bm25"] = floor.report()
    for when in ("today", "day_after"):
        tallies = {"hot": Tally(), **({"hybrid": Tally()} if vec else {})}
        inj = Injections()
        for conv, pid, ids, qs in built:
            day_after = (locomo.last_date(conv) + timedelta(days=1)).replace(hour=12, minute=0, second=0)
            set_clock(clock.to_iso(day_after) if when == "day_after" else None)
            back = {rid: dia for dia, rid in ids.items()}
            for q in qs:
                cat = locomo.CATEGORIES[q["category"]]
                for name, tally in tallies.items():
                    got, ms = timed(getattr(paths, name), pid, q["question"])
                    tally.add(cat, [back.get(r) for r in got], q["evidence"], ms)
                (rids, tokens), ms = timed(paths.injected, pid, q["question"])
                inj.add(cat, [back.get(r) for r in rids], tokens, q["evidence"], set(), ms)
        set_clock(None)
        out[when] = {name: t.report() for name, t in tallies.items()}
        out[when]["injected"] = inj.report()
    return out


def run_coding(conn, hybrid: bool) -> dict:
    data = coding.load()
    saved = os.environ.get("AGENTCTX_NOW")
    built = coding.build(conn, data)
    set_clock(data["now"])
    consolidate([coding.project_of(p["name"], p["remote"]) for p in data["projects"]], hybrid)
    vec = open_vectors() if hybrid else None
    paths = Paths(conn, vec)
    set_clock(data["now"])
    superseded = {r[0] for r in conn.execute("SELECT id FROM records WHERE superseded_at IS NOT NULL")}
    tallies = {"hot": Tally(), **({"hybrid": Tally()} if vec else {})}
    stale = {name: 0 for name in tallies}
    inj = Injections()
    misses: list[dict] = []
    projects = {p["name"]: coding.project_of(p["name"], p["remote"]) for p in data["projects"]}
    session: dict[bool, list[bool]] = {False: [], True: []}  # answerable: answered; unrelated: silent
    for p in data["prompts"]:
        pid, ids = built[p["project"]]
        want = {ids[k] for k in p.get("answer", [])}
        kind = coding.kind(p)
        for name, tally in tallies.items():
            got, ms = timed(getattr(paths, name), pid, p["prompt"])
            stale[name] += bool(superseded & set(got[:3]))
            if want:
                rank = tally.add(kind, got, want, ms)
                if name == "hot" and (rank is None or rank > 3):
                    misses.append({"prompt": p["prompt"], "rank": rank})
        (rids, tokens), ms = timed(paths.injected, pid, p["prompt"])
        inj.add(kind, rids, tokens, want, superseded, ms)
        shown, rids = paths.in_session(projects[p["project"]], p["prompt"])
        session[kind in coding.UNRELATED].append(bool(want & set(shown + rids)) if want else not rids)
    set_clock(saved)
    out: dict = {"prompts": len(data["prompts"]), "records": sum(len(p["records"]) for p in data["projects"]),
                 "projects": len(data["projects"])}
    for name, tally in tallies.items():
        out[name] = {**tally.report(), "stale_top3": stale[name]}
    out["injected"] = inj.report()
    out["in_session"] = {"answered": round(statistics.fmean(session[False]), 3),
                         "unrelated_silent": round(statistics.fmean(session[True]), 3)}
    out["hot_misses_top3"] = misses
    return out


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def _r(block: dict, group: str = "all") -> str:
    rec = block["recall"][group]
    return " | ".join(f"{rec[f'@{k}']:.3f}" for k in KS)


def markdown(out: dict) -> list[str]:
    md = ["# Retrieval evaluation (bench/eval)", "", f"Command: `{out['command']}`  ",
          f"Model for the hybrid path: `{out.get('model') or 'none (skipped)'}`; load average at the start "
          f"{out['load_average_1m']}.", ""]
    lo = out.get("locomo")
    if isinstance(lo, dict):
        md += [f"## LoCoMo dev ({lo['questions']} questions, {lo['records']} turn records; recall_any@k)", "",
               "| path | clock | @3 | @5 | @10 | p50 / p95 ms per query |", "|---|---|---:|---:|---:|---:|",
               f"| plain Okapi BM25 (floor, no product code) | – | {_r(lo['bm25'])} | "
               f"{lo['bm25']['latency']['p50_ms']} / {lo['bm25']['latency']['p95_ms']} |"]
        for when in ("today", "day_after"):
            for name, label in (("hot", "UserPromptSubmit search"), ("hybrid", "ctx_search hybrid")):
                if name in lo[when]:
                    b = lo[when][name]
                    md.append(f"| {label} | {when.replace('_', ' ')} | {_r(b)} | "
                              f"{b['latency']['p50_ms']} / {b['latency']['p95_ms']} |")
        cats = [c for c in locomo.CATEGORIES.values()]
        md += ["", "recall_any@5 per category:", "",
               "| path | clock | " + " | ".join(f"{c} ({lo['bm25']['recall'][c]['n']})" for c in cats) + " |",
               "|---|---|" + "---:|" * len(cats),
               "| plain BM25 | – | " + " | ".join(f"{lo['bm25']['recall'][c]['@5']:.3f}" for c in cats) + " |"]
        for when in ("today", "day_after"):
            for name, label in (("hot", "UserPromptSubmit search"), ("hybrid", "ctx_search hybrid")):
                if name in lo[when]:
                    md.append(f"| {label} | {when.replace('_', ' ')} | "
                              + " | ".join(f"{lo[when][name]['recall'][c]['@5']:.3f}" for c in cats) + " |")
        md += ["", "What UserPromptSubmit injects (a fresh session per question):", "",
               "| clock | recall at the injected budget | records / question | tokens / question | "
               "share of injected turns that are evidence | nothing injected |", "|---|---:|---:|---:|---:|---:|"]
        for when in ("today", "day_after"):
            i = lo[when]["injected"]
            md.append(f"| {when.replace('_', ' ')} | {i['recall_at_budget']:.3f} | {i['records_per_prompt']} | "
                      f"{i['tokens_per_prompt']} | {i['precision']} | {i['answered_but_empty']:.3f} |")
    elif lo:
        md += ["## LoCoMo dev", "", f"Skipped: {lo}"]
    co = out.get("coding")
    if co:
        md += ["", f"## Coding set ({co['prompts']} prompts over {co['records']} records of {co['projects']} projects; "
               "bench/eval/coding_set.json)", "",
               "| path | @3 | @5 | @10 | traps @3 | stale in top 3 | p50 / p95 ms |", "|---|---:|---:|---:|---:|---:|---:|"]
        for name, label in (("hot", "UserPromptSubmit search"), ("hybrid", "ctx_search hybrid")):
            if name in co:
                b = co[name]
                trap = b["recall"].get("trap", {}).get("@3")
                md.append(f"| {label} | {_r(b)} | {trap:.3f} | {b['stale_top3']} | "
                          f"{b['latency']['p50_ms']} / {b['latency']['p95_ms']} |")
        i = co["injected"]
        u = i["unrelated"]
        md += ["", "What UserPromptSubmit injects:", "",
               "| answerable prompts | recall at the injected budget | injected records that answer | "
               "records / prompt | tokens / prompt | answerable with nothing injected | stale injected |",
               "|---:|---:|---:|---:|---:|---:|---:|",
               f"| {i['answerable']} | {i['recall_at_budget']:.3f} | {i['precision']} | {i['records_per_prompt']} | "
               f"{i['tokens_per_prompt']} | {i['answered_but_empty']:.3f} | {i['stale_injected']} |", "",
               "| unrelated prompts | n | silent (nothing injected) | tokens / prompt |", "|---|---:|---:|---:|"]
        for k in (*coding.UNRELATED, "all"):
            if k in u:
                md.append(f"| {k} | {u[k]['n']} | {u[k]['silent']:.3f} | {u[k]['tokens_per_prompt']} |")
        s = co["in_session"]
        md += ["", "As a session sees it (a new session per prompt: its SessionStart digest, then the prompt, which "
               "never injects again what SessionStart showed): answerable prompts with an answer in the digest or "
               f"the injection {s['answered']:.3f}; unrelated prompts with nothing new injected {s['unrelated_silent']:.3f}."]
    return md


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("locomo", "coding"), help="one data set")
    ap.add_argument("--no-hybrid", action="store_true", help="skip the consolidation pass and the hybrid path")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"), help="where eval.json/eval.md go")
    args = ap.parse_args(argv)
    if not os.environ.get("AGENTCTX_EMBED_MODEL") and os.path.isdir(MODEL):
        os.environ["AGENTCTX_EMBED_MODEL"] = MODEL
    hybrid = not args.no_hybrid
    if hybrid and not os.path.isdir(os.path.expanduser(os.environ.get("AGENTCTX_EMBED_MODEL", MODEL))):
        print(f"hybrid skipped: no model at {MODEL} (../shared is absent; set AGENTCTX_EMBED_MODEL)", file=sys.stderr)
        hybrid = False
    os.environ["AGENTCTX_LLM"] = "0"
    out: dict = {"command": COMMAND + (f" --only {args.only}" if args.only else "")
                 + (" --no-hybrid" if args.no_hybrid else ""),
                 "model": os.path.basename(os.environ["AGENTCTX_EMBED_MODEL"]) if hybrid else None,
                 "load_average_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None}
    from agentctx.store import db

    for name, run in (("locomo", run_locomo), ("coding", run_coding)):
        if args.only and args.only != name:
            continue
        if name == "locomo" and locomo.missing():
            print(locomo.missing(), file=sys.stderr)
            out[name] = locomo.missing()
            continue
        with tempfile.TemporaryDirectory() as home:
            os.environ["AGENTCTX_HOME"] = home
            conn = db.connect()
            conn.execute("PRAGMA synchronous = OFF")  # a throwaway store: build it fast
            try:
                out[name] = run(conn, hybrid)
            finally:
                conn.close()
    md = markdown(out)
    if not args.only:
        from agentctx import fsio

        fsio.write_json(os.path.join(args.out, "eval.json"), out, indent=1)
        fsio.write_atomic(os.path.join(args.out, "eval.md"), "\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
