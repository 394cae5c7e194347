"""Team file benchmark: export and import of .agentctx/context.md at 10k records, and the SessionStart check.

Usage (from the repository root)::

    uv run python bench/teamsync_bench.py [--records 17700] [--runs 5]

Builds a store with ``bench/make_store.py`` (its target project gets ~80% of the records; the
team file holds that project's current, shareable ones), then times, in-process, median / p95:
``teamsync.export`` (render + write), ``import_changes`` into an empty store (every block new),
a forced re-import where nothing changed, the SessionStart check on an unchanged file, and the
import of one edited block after a "pull" at several file sizes (what SessionStart does inline up
to ``teamsync.INLINE_BYTES``). Writes bench/results/teamsync.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import make_store  # noqa: E402

from agentctx import project  # noqa: E402
from agentctx.sharing import teamsync  # noqa: E402
from agentctx.store import db, projects  # noqa: E402


def stats(samples: list[float]) -> dict:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"median_ms": round(statistics.median(ms), 2), "p95_ms": round(p95, 2), "runs": len(ms)}


def timed(fn, runs: int, setup=None) -> dict:
    out = []
    for _ in range(runs):
        if setup:
            setup()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return stats(out)


def use(home: str):
    os.environ["AGENTCTX_HOME"] = home
    return db.connect()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=17_700, help="records in the built store (default 17700: ~10k in the team file)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    load = os.getloadavg()
    work = tempfile.mkdtemp(prefix="agentctx-teamsync-")
    try:
        src = os.path.join(work, "alice")
        make_store.build(src, args.records, quiet=True)
        repo = make_store.project_dir(src)
        proj = project.detect(repo)
        conn = use(src)
        projects.register(conn, proj)
        shared = len(teamsync.shareable(conn, proj.id))
        path = teamsync.file_path(repo)

        def fresh_export():
            if os.path.exists(path):
                os.remove(path)
            conn.execute("DELETE FROM team_sync")
        results: dict = {"records_in_store": args.records, "blocks": shared}
        results["export (render + write, file absent)"] = timed(
            lambda: teamsync.export(conn, proj, create=True), args.runs, fresh_export)
        results["export again (unchanged: sha check, render, compare)"] = timed(
            lambda: teamsync.export(conn, proj), args.runs)
        results["file_bytes"] = os.path.getsize(path)
        conn.close()

        counter = iter(range(10_000))

        def empty_store():
            home = os.path.join(work, f"bob{next(counter)}")
            state["conn"] = use(home)
            projects.register(state["conn"], proj)
        state: dict = {}
        results["import into an empty store (every block new)"] = timed(
            lambda: teamsync.import_changes(state["conn"], proj), max(2, args.runs // 2), empty_store)
        bob = state["conn"]
        results["import --force, nothing changed (all unchanged)"] = timed(
            lambda: teamsync.import_changes(bob, proj, force=True), args.runs)
        results["import, file unchanged (sha256 equal)"] = timed(
            lambda: teamsync.import_changes(bob, proj), args.runs)
        os.utime(path)  # mtime newer than the sync: the check must hash
        teamsync.import_changes(bob, proj)
        results["SessionStart check, file unchanged (stat + one query)"] = timed(
            lambda: teamsync.changed(bob, proj.id, repo), 200)

        # After a pull: one edited block, files of several sizes (the inline/detached decision)
        text = open(path, encoding="utf-8").read()
        blocks = text.split("\n<!-- agentctx:begin ")
        small: dict = {}
        for target in (16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024):
            keep, size = [blocks[0]], len(blocks[0])
            for b in blocks[1:]:
                if size >= target:
                    break
                keep.append(b)
                size += len(b) + 22
            body = "\n<!-- agentctx:begin ".join(keep)
            home = os.path.join(work, f"pull{target}")
            c = use(home)
            projects.register(c, proj)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(body)
            teamsync.import_changes(c, proj)
            edits = iter(range(1000))

            def edit(edits=edits, body=body):
                n = next(edits)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(body.replace("\n### ", f"\n### edit {n} ", 1))
            small[f"{len(body) // 1024} KiB, {len(keep) - 1} blocks"] = timed(
                lambda c=c: teamsync.import_changes(c, proj), args.runs, edit)
            c.close()
        results["import after a pull, one block edited"] = small
        bob.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(),
            "cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load],
            "command": "uv run python bench/teamsync_bench.py" + (f" --records {args.records}" if args.records != 17_700
                                                                 else "") + (f" --runs {args.runs}" if args.runs != 5 else "")}
    out = {"meta": meta, "results": results}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "teamsync.json"), "w") as fh:
        json.dump(out, fh, indent=2)
    lines = ["# Team file (.agentctx/context.md) benchmark", "",
             f"{meta['when']} · {meta['cpus']} CPUs · Python {meta['python']} · load average "
             f"{', '.join(map(str, meta['load_average_at_start']))} at start (machine shared: expect noise)", "",
             f"Command: `{meta['command']}`. In-process times in ms, median / p95.", "",
             f"Store: {args.records:,} records (bench/make_store.py); the team file holds the target project's "
             f"{results['blocks']:,} current shareable records ({results['file_bytes'] / 1048576:.1f} MiB).", "",
             "| operation | median / p95 ms |", "|---|---:|"]
    for name, value in results.items():
        if isinstance(value, dict) and "median_ms" in value:
            lines.append(f"| {name} | {value['median_ms']:,} / {value['p95_ms']:,} |")
    lines += ["", "After a pull, one block edited (what SessionStart imports inline up to "
              f"{teamsync.INLINE_BYTES // 1024} KiB, detached above):", "", "| file | median / p95 ms |", "|---|---:|"]
    for name, value in results["import after a pull, one block edited"].items():
        lines.append(f"| {name} | {value['median_ms']:,} / {value['p95_ms']:,} |")
    with open(os.path.join(ROOT, "bench", "results", "teamsync.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
