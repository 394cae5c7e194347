"""The consolidation pass (ADR-012): embed, merge near-duplicates, rescore, archive, rank the digest.

SessionEnd starts it detached (``lib/agentctx_consolidate.py`` through uv, which brings model2vec,
numpy, apsw and sqlite-vec); ``agentctx consolidate`` runs it in the foreground. It is

* **single-flight**: one pass at a time for the whole store (``flight`` lock ``consolidate``);
  a second one logs that and exits;
* **time-boxed**: steps stop at the deadline (default 60 s, ``--time-budget`` or
  ``AGENTCTX_CONSOLIDATE_SECONDS``); what is left stays pending for the next pass;
* **crash-safe**: every write is its own short transaction, vectors are written before the
  records are marked embedded, the rank file is replaced atomically — a pass killed at any point
  leaves a consistent store and the next pass redoes what was unfinished.

Steps, in order, each in its own guard (one failing is logged and the later ones still run): the
full-text index check (FTS5's ``integrity-check``, rebuilt from the records when it fails), embeddings
(pending records, batches), vector clean-up, near-duplicates (``dedup``), retrieval expansion (``expand``: spellings, related words, session context), scores and prune bookkeeping (``archive.rescore``), the cold partition
(``archive.archive``), entity links (``capture.entities``), ledger rollup (paused at a spending cap),
developer profile, CLAUDE.md drift, team export and team sync with each remote (``remote.sync``),
the daily log (``sharing.daylog``), then the digest ranking for the next SessionStart (``rank``).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time

from agentctx import flight, settings
from agentctx import project as project_mod
from agentctx.logs import log
from agentctx.store import archive, db, embedding_queue, projects, records

DEFAULT_SECONDS = 60.0
BATCH = 1024  # records embedded per batch (a vector does not depend on its batch; larger batches tokenize faster)
RANK_IDS = 200  # ranked ids kept for the digest
FOCUS_RECORDS = 30  # recent records whose titles say what the project is busy with
LOCK_STALE_S = 15 * 60
STEPS = ("index", "embed", "dedup", "expand", "scores", "cold", "others", "rank")  # Pass methods, in order


def budget_seconds() -> float:
    try:
        return float(os.environ.get("AGENTCTX_CONSOLIDATE_SECONDS", DEFAULT_SECONDS))
    except ValueError:
        return DEFAULT_SECONDS


def embeddings_enabled() -> bool:
    return bool(settings.value("embeddings")) and os.environ.get("AGENTCTX_EMBEDDINGS", "").strip() != "0"


class Pass:
    """One run: the deadline, the report, and what steps share (store connection, vectors, model)."""

    def __init__(self, conn: sqlite3.Connection, proj: project_mod.Project, *, seconds: float, dry_run: bool,
                 use_embeddings: bool, lock: flight.Lock | None = None):
        self.conn, self.proj, self.dry_run, self.lock = conn, proj, dry_run, lock
        self.started = time.monotonic()
        self.deadline = self.started + seconds
        self.use_embeddings = use_embeddings
        self.embedder = None
        self.store = None
        self.report: dict = {"status": "ok", "project_id": proj.id, "dry_run": dry_run, "steps": {}, "notes": []}
        self.pause = float(os.environ.get("AGENTCTX_TEST_BATCH_PAUSE", 0) or 0)  # tests: widen the kill window

    def out_of_time(self) -> bool:
        if self.lock is not None:
            self.lock.refresh()
        if time.monotonic() > self.deadline:
            if self.report["status"] == "ok":
                self.report["status"] = "partial"
                self.note("time box reached: the rest is left for the next pass")
            return True
        return False

    def note(self, text: str) -> None:
        self.report["notes"].append(text)
        log("consolidate", text)

    # -- steps

    def index(self) -> None:
        """FTS5's integrity check of the full-text index; a failing index is rebuilt from the records
        (and the next SessionStart says so) before the steps that search it."""
        from agentctx.store import integrity

        if self.dry_run:
            problem = integrity.fts_problem(self.conn)
            self.report["steps"]["index"] = {"ok": problem is None, **({"problem": problem} if problem else {})}
            return
        done = integrity.verify_fts(self.conn, "consolidate")
        self.report["steps"]["index"] = {"ok": done is None, **({"repaired": done} if done else {})}

    def embed(self) -> None:
        if not self.use_embeddings:
            self.report["steps"]["embeddings"] = {"skipped": "embeddings are off"}
            return
        from agentctx.consolidation import embeddings
        from agentctx.store import vectors

        try:
            self.embedder = embeddings.load()
        except embeddings.EmbeddingError as exc:
            self.note(f"embeddings skipped: {exc}; search stays on FTS5")
            self.report["steps"]["embeddings"] = {"skipped": str(exc)}
            return
        self.store = vectors.Store()
        emb = self.embedder
        info = {"model": emb.tag, "backend": self.store.backend, "embedded": 0, "removed": 0}
        self.report["steps"]["embeddings"] = info
        if not self.store.ready(emb.tag, emb.dim):
            old = self.store.tag()
            if old is not None:
                self.note(f"vector store holds {old} vectors, the model is now {emb.tag}: re-embedding everything")
            if self.dry_run:
                info["would_reset"] = True
                info["pending"] = records.count_active(self.conn, None, all_projects=True)
                self.store.close()
                self.store = self.embedder = None
                return
            with db.transaction(self.conn):  # records first: a crash before the reset repeats it
                embedding_queue.reset(self.conn)
            self.store.reset(emb.tag, emb.dim)
        info["pending"] = embedding_queue.count(self.conn, emb.tag)
        if self.dry_run:
            return
        from agentctx.consolidation.embeddings import encode_records
        from agentctx.store import expansion_queue
        from agentctx.store.vectors import to_blob

        t0 = time.monotonic()
        last_seq = 0
        known: dict = {}  # text -> vector: a session neighbour in another batch is encoded once
        while not self.out_of_time():
            rows = embedding_queue.batch(self.conn, emb.tag, last_seq, BATCH)
            if not rows:
                break
            last_seq = rows[-1]["seq"]
            vecs = encode_records(emb, rows, expansion_queue.neighbours_of(self.conn, rows), known)
            self.store.upsert([(r["id"], r["project_id"], r["type"], to_blob(v)) for r, v in zip(rows, vecs, strict=True)])
            with db.transaction(self.conn):  # only records unchanged since they were read
                embedding_queue.mark_done(self.conn, emb.tag, rows)
            info["embedded"] += len(rows)
            if self.pause:
                time.sleep(self.pause)
        info["seconds"] = round(time.monotonic() - t0, 3)
        if info["embedded"]:
            info["per_second"] = round(info["embedded"] / max(info["seconds"], 1e-6))
        if not self.out_of_time():
            stale = sorted(self.store.ids() - embedding_queue.current_ids(self.conn))
            info["removed"] = self.store.delete(stale) if stale else 0

    def dedup(self) -> None:
        if self.store is None or self.out_of_time():
            return
        from agentctx import llm
        from agentctx.consolidation import dedup

        client = usage = None
        if self.llm_mode():
            try:
                client, usage = llm.Client(), llm.Usage()
            except Exception as exc:
                self.note(f"dedup without Haiku confirmation: {type(exc).__name__}: {exc}")
        merges = dedup.run(self.conn, self.store, self.proj.id, client=client, usage=usage, dry_run=self.dry_run,
                           deadline=self.deadline, embedder=self.embedder)
        self.report["steps"]["dedup"] = {"merged": len(merges), "merges": merges[:50],
                                         "confirmed_by": "haiku" if client else f"content cosine > {dedup.STRICT_THRESHOLD} and shared words"}
        if usage is not None and usage.calls:
            self.report["steps"]["dedup"]["usage"] = usage.as_dict()
        if merges and not self.dry_run:
            self.store.delete([m["merged"] for m in merges])

    def expand(self) -> None:
        """Retrieval expansion of new and changed records (``expand``): spellings, the model's related
        words (when it is loaded), session context."""
        if self.out_of_time():
            return
        from agentctx.consolidation import expand

        self.report["steps"]["expand"] = expand.run(self.conn, embedder=self.embedder, out_of_time=self.out_of_time,
                                                    dry_run=self.dry_run)

    def llm_mode(self) -> bool:
        from agentctx.capture.extract import mode

        return mode(check_sdk=True)[0] == "llm"

    def scores(self) -> None:
        if self.out_of_time():
            return
        self.report["steps"]["scores"] = archive.rescore(self.conn, dry_run=self.dry_run)

    def cold(self) -> None:
        if self.out_of_time():
            return
        moved = archive.archive(self.conn, dry_run=self.dry_run)
        self.report["steps"]["archive"] = {("would_move" if self.dry_run else "moved"): moved,
                                           "prune_candidates": len(archive.prune_candidates(self.conn, self.proj.id))}

    def others(self) -> None:
        """Entity links, ledger rollup, developer profile, CLAUDE.md drift, team export, team sync (remotes),
        the daily log."""
        from agentctx.capture import devprofile, entities
        from agentctx.remote import sync as remote_sync
        from agentctx.sharing import daylog

        steps = [
            ("entities", lambda: entities.link_project(self.conn, self.proj.id, self.proj.root), False),
            ("rollup", self._rollup, True),
            ("devprofile", lambda: devprofile.promote(self.conn), False),
            ("drift", self._drift, False),
            ("teamsync", self._team_export, False),
            ("remote", lambda: remote_sync.in_consolidation(self.conn, deadline=self.deadline), False),
            ("daylog", lambda: {"path": daylog.write(self.conn, self.proj)}, False),
        ]
        for name, call, dry_ok in steps:
            if self.out_of_time():
                return
            if self.dry_run and not dry_ok:
                self.report["steps"][name] = {"skipped": "dry run"}
                continue
            try:
                result = call()
            except Exception as exc:  # one step failing must not cost the others
                self.note(f"{name} failed: {type(exc).__name__}: {exc}")
                self.report["steps"][name] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            self.report["steps"][name] = (result if isinstance(result, dict) else {"count": len(result)}
                                          if isinstance(result, list) else {"result": _plain(result)})

    def _drift(self) -> list | dict:
        """CLAUDE.md drift; a CLAUDE.md agentctx does not read was logged once already (``safefile``)."""
        from agentctx.sharing import drift

        try:
            return drift.scan(self.conn, self.proj)
        except drift.Unreadable as exc:
            return {"skipped": str(exc)}

    def _team_export(self) -> str | dict | None:
        """The team file; one agentctx does not read or write was logged once already (``safefile``)."""
        from agentctx.sharing import teamsync

        try:
            return teamsync.export(self.conn, self.proj)
        except teamsync.Unreadable as exc:
            return {"skipped": str(exc)}

    def _rollup(self) -> dict:
        """The ledger rollup, unless a spending cap is reached (then it waits for a later pass)."""
        from agentctx.consolidation import rollup
        from agentctx.store import spend

        client = self._rollup_client()
        capped = spend.paused(self.conn) if client is not None else None
        if capped:
            return {"status": "paused", "reason": capped}
        return rollup.run(self.conn, self.proj.id, client=client, dry_run=self.dry_run)

    def _rollup_client(self):
        if not self.llm_mode():
            return None
        from agentctx import llm

        return llm.Client()

    def rank(self) -> None:
        """RRF of the stored-score order, FTS5 and vectors against what the project is busy with."""
        if self.out_of_time():
            return
        from agentctx.consolidation import hybrid
        from agentctx.injection import digest
        from agentctx.store import search

        recs = digest.in_force(self.conn, self.proj.id, limit=RANK_IDS)
        if not recs:
            self.report["steps"]["digest"] = {"ranked": 0}
            return
        focus = focus_text(self.conn, self.proj.id)
        rankings = [([r["id"] for r in recs], 1.0)]
        allowed = {r["id"] for r in recs}
        if focus:
            hits = search.search(self.conn, self.proj.id, focus, limit=RANK_IDS, types=sorted({r["type"] for r in recs}))
            rankings.append(([h.record["id"] for h in hits if h.record["id"] in allowed], hybrid.FTS_WEIGHT))
            if self.store is not None and self.embedder is not None:
                near = hybrid.vector_ids(self.store, self.embedder, self.proj.id, focus, RANK_IDS * 2)
                rankings.append(([rid for rid in near if rid in allowed], hybrid.VECTOR_WEIGHT))
        ranked = hybrid.rrf(rankings)[:RANK_IDS]
        self.report["steps"]["digest"] = {"ranked": len(ranked), "signals": len(rankings), "focus": bool(focus)}
        if self.dry_run:
            return
        digest.write_rank(self.proj.id, ranked)
        dig = digest.current(self.conn, self.proj)
        self.report["steps"]["digest"]["tokens"] = dig.tokens


def focus_text(conn: sqlite3.Connection, project_id: str) -> str:
    """The last handover and the newest discoveries and bugfixes: what the next session is likely about
    (decisions are what gets ranked, so they are not part of the query)."""
    parts = [f"{r['title']} {r['body'][:600]}" for r in records.current(conn, project_id, types=["handover"],
                                                                       order="newest", limit=1)]
    parts += [r["title"] for r in records.recent(conn, project_id, ["discovery", "bugfix"], limit=FOCUS_RECORDS)]
    return " ".join(parts)


def _plain(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)[:500]


def run(proj: project_mod.Project, *, seconds: float | None = None, dry_run: bool = False,
        use_embeddings: bool | None = None) -> dict:
    """One consolidation pass for ``proj`` (store-wide steps included); the report."""
    seconds = budget_seconds() if seconds is None else seconds
    use_embeddings = embeddings_enabled() if use_embeddings is None else use_embeddings
    lock = flight.Lock("consolidate", stale_s=max(LOCK_STALE_S, 3 * seconds))
    if not lock.acquire():
        log("consolidate", "another consolidation pass is running: this one exits (single-flight)")
        return {"status": "busy", "project_id": proj.id, "steps": {}, "notes": ["another pass is running"]}
    started = time.monotonic()
    conn = db.connect()
    work = Pass(conn, proj, seconds=seconds, dry_run=dry_run, use_embeddings=use_embeddings, lock=lock)
    try:
        with db.transaction(conn):
            projects.register(conn, proj)
        timings = work.report["timings"] = {}
        for name in STEPS:
            t0 = time.monotonic()
            try:
                getattr(work, name)()
            except Exception as exc:  # noqa: BLE001 - each step in its own guard: the later ones still run
                work.report["status"] = "failed"
                work.report["steps"].setdefault(name, {})["error"] = f"{type(exc).__name__}: {exc}"
                work.note(f"step {name} failed: {type(exc).__name__}: {exc}")
            timings[name] = round(time.monotonic() - t0, 3)
    except Exception as exc:
        work.report["status"] = "failed"
        work.note(f"pass failed: {type(exc).__name__}: {exc}")
    finally:
        if work.store is not None:
            work.store.close()
        conn.close()
        if not dry_run:  # the next SessionStart here is served on stat checks alone (injection.sealing)
            from agentctx.injection import sealing

            work.report["sealed"] = sealing.after_work(proj.root)
        lock.release()
    work.report["seconds"] = round(time.monotonic() - started, 3)
    steps = work.report["steps"]
    log("consolidate", f"{work.report['status']} in {work.report['seconds']}s: "
        + ", ".join(f"{k}={_summary(v)}" for k, v in steps.items()))
    return work.report


def _summary(step: dict) -> str:
    if not isinstance(step, dict):
        return str(step)[:60]
    keys = ("embedded", "merged", "rescored", "moved", "would_move", "ranked", "skipped", "error")
    return "/".join(f"{k}:{step[k]}" for k in keys if step.get(k) not in (None, ""))[:120] or "done"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="agentctx-consolidate", description="Run one consolidation pass.")
    ap.add_argument("--project-id", help="(SessionEnd) the session's project id; --cwd locates it")
    ap.add_argument("--session-id", help="(SessionEnd) the session that ended, for the log")
    ap.add_argument("--cwd", default=None, help="project directory (default: the current one)")
    ap.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
    ap.add_argument("--no-embeddings", action="store_true", help="FTS5 only: no model, no vectors")
    ap.add_argument("--time-budget", type=float, default=None, help=f"seconds (default {DEFAULT_SECONDS:g})")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``lib/agentctx_consolidate.py``; prints the report, exit 0 unless it failed."""
    args = parse_args(argv)
    proj = project_mod.detect(args.cwd or os.getcwd())
    if args.project_id and args.project_id != proj.id:
        log("consolidate", f"project id {args.project_id} does not match {args.cwd}: consolidating {proj.id}")
    report = run(proj, seconds=args.time_budget, dry_run=args.dry_run,
                 use_embeddings=False if args.no_embeddings else None)
    print(json.dumps(report, indent=2) if args.json else render_report(report))
    return 1 if report["status"] == "failed" else 0


def render_report(report: dict) -> str:
    lines = [f"consolidation {report['status']}" + (" (dry run)" if report.get("dry_run") else "")
             + (f" in {report['seconds']} s" if "seconds" in report else "")]
    for name, step in report["steps"].items():
        lines.append(f"  {name:<11} " + ", ".join(f"{k} {v}" for k, v in step.items()
                                                  if not isinstance(v, (list, dict)))
                     if isinstance(step, dict) else f"  {name:<11} {step}")
    lines += [f"  note: {n}" for n in report.get("notes", [])]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

