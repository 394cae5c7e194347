"""Team sync benchmark against a real PostgreSQL server (tests/support/postgres.py starts one on 127.0.0.1).

Usage (from the repository root)::

    uv run --group dev python bench/remote_bench.py [--clients 10] [--records 1000] [--pull 100000] [--runs 15]

1. **Converge**: ``--clients`` processes, each with its own store holding ``--records`` new records of
   one shared project (10% of them supersessions of its own earlier ones), start syncing at the same
   moment and sync in a loop until their store holds every client's records. Time from the start
   signal until the last client has everything (and each client's own time and number of syncs).
2. **Pull into an empty store**: a store built by ``bench/make_store.py`` (realistic text, 10%
   superseded) is pushed once (the first full push of a newly shared project: timed too), then a new
   client with an empty store pulls all ``--pull`` records.
3. **Consolidation pass, nothing changed**: the remote step (``sync.in_consolidation``: connect over
   TLS, check the schema, nothing to push, an empty pull) timed in fresh processes (psycopg's import
   included, as in the detached pass) and in-process (warm), against the same step with no remote
   configured; and whole passes (``consolidate.run``, no embeddings) with and without the remote.

The server runs with fsync on (PostgreSQL's defaults apart from the loopback listener). Medians;
whole numbers of the machine in the results. Writes bench/results/remote.json and .md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (os.path.join(ROOT, "lib"), os.path.join(ROOT, "bench"), ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

ORIGIN = "git@github.com:acme/payments-platform.git"  # make_store's target project
SHAREABLE_SHARE = 0.6445  # make_store: shareable records of the target project / all records (measured)


def _repo(folder: str) -> str:
    import make_store

    path = os.path.join(folder, "repo", "payments-platform")
    make_store.make_repo(path)
    return path


def _client(home: str, url: str):
    """(store connection, project) of a client whose store is in ``home``, the remote and the share set."""
    from agentctx import project
    from agentctx.store import db, projects
    from agentctx.store import remote as store

    conn = db.connect(os.path.join(home, "agentctx.db"))
    proj = project.detect(_repo(home))
    projects.register(conn, proj)
    if store.get(conn, "team") is None:
        store.add(conn, "team", url)
        store.set_share(conn, proj.id, True)
    return conn, proj


# -- child processes ------------------------------------------------------------------------------------


def child_converge(args) -> None:
    from agentctx.remote import sync
    from agentctx.store import records

    conn, proj = _client(args.home, args.url)
    mine = []
    for j in range(args.records):
        if j % 10 == 9:  # a supersession of one of its own earlier records
            old = mine.pop(0)
            mine.append(records.supersede(conn, proj.id, old["id"], body=f"revised by client {args.index} at {j}",
                                          title=f"{old['title']} (revised)"))
        else:
            mine.append(records.add(conn, proj.id, type=("decision", "convention", "discovery")[j % 3],
                                    title=f"Client {args.index} fact {j}: use module m{j % 97} for task t{j}",
                                    body=f"Rationale {j} from client {args.index}; see src/pkg{j % 13}/mod{j % 7}.py"))
    import psycopg  # noqa: F401 - imported before the start: ten machines would not share two cores for it

    with open(args.ready, "w") as fh:
        fh.write("ready")
    while not os.path.exists(args.go):
        time.sleep(0.005)
    t0 = time.monotonic()
    syncs = 0
    expect = args.clients * args.records
    while True:
        report = sync.sync_remote(conn, "team")
        syncs += 1
        if report["status"] != "ok":
            raise SystemExit(f"sync failed: {report}")
        have = conn.execute("SELECT COUNT(*) FROM records WHERE project_id = ?", (proj.id,)).fetchone()[0]
        if have >= expect:
            break
    print(json.dumps({"seconds": time.monotonic() - t0, "syncs": syncs, "records": have}))


def child_noop(args) -> None:
    """Time the consolidation pass's remote step once, in a fresh process (psycopg imported here)."""
    from agentctx.remote import sync
    from agentctx.store import db

    conn = db.connect(os.path.join(args.home, "agentctx.db"))
    if args.due:  # the last sync long ago: the step goes to the server even with nothing to send
        from agentctx.store import remote as store

        with db.transaction(conn):
            store.set_state(conn, "team", last_ok_at="2020-01-01T00:00:00.000000Z")
    t0 = time.perf_counter()
    report = sync.in_consolidation(conn)
    t1 = time.perf_counter()
    imported = "psycopg" in sys.modules
    report_again = sync.in_consolidation(conn)  # the same process again: no import, a new connection
    t2 = time.perf_counter()
    print(json.dumps({"step_ms": (t1 - t0) * 1000, "again_ms": (t2 - t1) * 1000, "imported": imported,
                      "report": report, "report_again": report_again}))


# -- the parent -----------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def converge(server, dbname: str, members: list[tuple[str, str]], work: str, records: int) -> dict:
    homes = []
    procs = []
    go = os.path.join(work, "go")
    for i, (role, _) in enumerate(members):
        home = os.path.join(work, f"c{i}")
        os.makedirs(home)
        homes.append(home)
        ready = os.path.join(home, "ready")
        procs.append((ready, subprocess.Popen(
            [sys.executable, __file__, "--child", "converge", "--home", home, "--url", server.dsn(dbname, role),
             "--records", str(records), "--clients", str(len(members)), "--index", str(i), "--ready", ready,
             "--go", go], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "AGENTCTX_HOME": home})))
    while not all(os.path.exists(r) for r, _ in procs):
        for _, p in procs:
            if p.poll() is not None:
                raise SystemExit(f"a client failed before the start: {p.stderr.read()}")
        time.sleep(0.05)
    t0 = time.monotonic()
    with open(go, "w") as fh:
        fh.write("go")
    results = []
    for _, p in procs:
        out, err = p.communicate(timeout=1800)
        if p.returncode != 0:
            raise SystemExit(f"a client failed: {err}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.monotonic() - t0
    return {"clients": len(members), "records_per_client": records, "total_records": len(members) * records,
            "converged_seconds": round(wall, 2),
            "per_client_seconds": sorted(round(r["seconds"], 2) for r in results),
            "syncs_per_client": sorted(r["syncs"] for r in results)}


def pull_100k(server, dbname: str, members: list[tuple[str, str]], work: str, target: int) -> dict:
    import make_store

    from agentctx.remote import sync

    seed_home = os.path.join(work, "seed")
    total = math.ceil(target / SHAREABLE_SHARE)
    built = make_store.build(seed_home, total, batch=5000, quiet=True)
    conn, _ = _client(seed_home, server.dsn(dbname, members[0][0]))
    t0 = time.monotonic()
    pushed = sync.sync_remote(conn, "team")
    push_s = time.monotonic() - t0
    assert pushed["status"] == "ok" and pushed["complete"], pushed
    conn.close()
    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    conn, proj = _client(empty, server.dsn(dbname, members[1][0]))
    t0 = time.monotonic()
    pulled = sync.sync_remote(conn, "team")
    pull_s = time.monotonic() - t0
    assert pulled["status"] == "ok" and pulled["complete"], pulled
    have = conn.execute("SELECT COUNT(*) FROM records WHERE project_id = ?", (proj.id,)).fetchone()[0]
    # How much of the pull is the redaction every record gets before it is stored (records.validate).
    from agentctx.store import records

    sample = list(records.dump(conn, proj.id))[:5000]
    t0 = time.perf_counter()
    for rec in sample:
        records.validate(type=rec["type"], title=rec["title"], body=rec["body"], confidence=rec["confidence"],
                         source=rec["source"])
    validate_ms = (time.perf_counter() - t0) * 1000 / len(sample)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(os.path.join(empty, "agentctx.db"))
    conn.close()
    return {"store_built_records": built["records_requested"], "pushed_records": pushed["pushed"],
            "first_push_seconds": round(push_s, 2), "pulled_records": pulled["pulled"], "records_in_store": have,
            "pull_seconds": round(pull_s, 2), "pull_records_per_second": round(pulled["pulled"] / pull_s),
            "validate_and_redact_ms_per_record": round(validate_ms, 3),
            "store_mb_after_pull": round(size / 1e6, 1)}


def noop_cost(server, dbname: str, members: list[tuple[str, str]], work: str, runs: int) -> dict:
    from agentctx.consolidation import consolidate
    from agentctx.remote import sync
    from agentctx.store import records
    from agentctx.store import remote as store

    home = os.path.join(work, "noop")
    os.makedirs(home)
    os.environ["AGENTCTX_HOME"] = home
    conn, proj = _client(home, server.dsn(dbname, members[2][0]))
    for j in range(200):
        records.add(conn, proj.id, type="decision", title=f"Noop bench decision {j}")
    assert sync.sync_remote(conn, "team")["status"] == "ok"
    assert sync.sync_remote(conn, "team")["pulled"] == 0

    def fresh(n: int, due: bool = False) -> list[dict]:
        out = []
        for _ in range(n):
            proc = subprocess.run([sys.executable, __file__, "--child", "noop", "--home", home] + ["--due"] * due,
                                  capture_output=True, text=True, env=os.environ.copy(), check=True)
            out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        return out

    with_remote = fresh(runs)  # synced just now: nothing to send, the server not asked (no psycopg)
    due = fresh(runs, due=True)  # the last sync long ago: psycopg imported, TLS connect, an empty pull
    assert all(r["report"]["team"]["status"] in ("ok", "quiet") and r["report"]["team"]["pushed"] == 0
               and r["report"]["team"]["pulled"] == 0 for r in with_remote + due), (with_remote + due)[:1]
    warm = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sync.in_consolidation(conn)
        warm.append((time.perf_counter() - t0) * 1000)

    def passes() -> list[float]:
        out = []
        for _ in range(max(5, runs // 2)):
            t0 = time.perf_counter()
            report = consolidate.run(proj, seconds=60, use_embeddings=False)
            out.append((time.perf_counter() - t0) * 1000)
            assert report["status"] == "ok", report
        return out

    pass_with = passes()
    url = store.get(conn, "team")["url"]
    store.remove(conn, "team")
    without = fresh(runs)
    pass_without = passes()
    store.add(conn, "team", url)
    conn.close()
    return {
        "step_fresh_process_ms": median([r["step_ms"] for r in with_remote]),
        "step_fresh_process_imported_psycopg": sum(r["imported"] for r in with_remote),
        "step_fresh_process_server_due_ms": median([r["step_ms"] for r in due]),
        "step_fresh_process_second_call_ms": median([r["again_ms"] for r in with_remote]),
        "step_warm_ms": median(warm),
        "step_no_remote_ms": median([r["step_ms"] for r in without]),
        "pass_with_remote_ms": median(pass_with), "pass_without_remote_ms": median(pass_without),
        "added_to_pass_ms": round(median(pass_with) - median(pass_without), 2),
        "runs": runs, "tls": True,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--pull", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--child", choices=("converge", "noop"))
    for name in ("--home", "--url", "--ready", "--go"):
        ap.add_argument(name)
    ap.add_argument("--due", action="store_true")
    ap.add_argument("--index", type=int, default=0)
    args = ap.parse_args(argv)
    if args.child == "converge":
        return child_converge(args)
    if args.child == "noop":
        return child_noop(args)

    from tests.support import postgres

    reason = postgres.unavailable()
    if reason:
        raise SystemExit(f"cannot run: {reason}")
    from agentctx.remote import schema

    os.environ.pop("ANTHROPIC_API_KEY", None)  # the consolidation passes below make no model calls
    server = postgres.Server(fsync=True).start()
    work = tempfile.mkdtemp(prefix="agentctx-remote-bench-")
    try:
        dbname = "bench"
        server.create_database(dbname)
        members = [(f"dev{i}", secrets.token_hex(12)) for i in range(max(args.clients, 3))]
        with server.admin(dbname) as conn:
            schema.migrate(conn)
            schema.add_team(conn, "bench_team")
            for role, pw in members:
                schema.add_member(conn, role, "bench_team", password=pw)
        os.environ["PGPASSFILE"] = postgres.write_pgpass(os.path.join(work, "pgpass"), dict(members))
        results = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
                   "server": server.admin().execute("SHOW server_version").fetchone()[0] + " (loopback, TLS, fsync on)",
                   "date": time.strftime("%Y-%m-%d"), "load_average_at_start": os.getloadavg()[0]}
        print("converge …", flush=True)
        results["converge"] = converge(server, dbname, members[:args.clients], work, args.records)
        print(json.dumps(results["converge"]), flush=True)
        print("pull …", flush=True)
        with server.admin() as conn:
            conn.execute('CREATE DATABASE "bench_pull"')
        with server.admin("bench_pull") as conn:
            schema.migrate(conn)
            schema.add_team(conn, "bench_team")
            for role, pw in members:
                schema.add_member(conn, role, "bench_team", password=pw)
        results["pull"] = pull_100k(server, "bench_pull", members, work, args.pull)
        print(json.dumps(results["pull"]), flush=True)
        print("no-op consolidation cost …", flush=True)
        results["noop"] = noop_cost(server, dbname, members, work, args.runs)
        print(json.dumps(results["noop"]), flush=True)
        results["load_average_at_end"] = os.getloadavg()[0]
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    out = os.path.join(ROOT, "bench", "results")
    with open(os.path.join(out, "remote.json"), "w") as fh:
        json.dump(results, fh, indent=2)
    with open(os.path.join(out, "remote.md"), "w") as fh:
        fh.write(render(results, argv))
    print(render(results, argv))


def render(r: dict, argv) -> str:
    c, p, n = r["converge"], r["pull"], r["noop"]
    return "\n".join([
        f"# Team sync benchmark ({r['date']})", "",
        f"Machine: {r['machine']}; server PostgreSQL {r['server']}; the server and every client share the "
        f"machine (load average {r['load_average_at_start']:.1f} at the start, {r['load_average_at_end']:.1f} at the "
        "end, other work included).",
        f"Command: `uv run --group dev python bench/remote_bench.py {' '.join(argv or sys.argv[1:])}`".rstrip() + "", "",
        "| what | result |", "|---|---|",
        f"| {c['clients']} clients × {c['records_per_client']:,} records, pushing and pulling concurrently: time until "
        f"every store holds all {c['total_records']:,} | {c['converged_seconds']} s (per client {c['per_client_seconds'][0]}"
        f"–{c['per_client_seconds'][-1]} s; syncs per client: {c['syncs_per_client'][0]}–{c['syncs_per_client'][-1]}) |",
        f"| first push of a newly shared project, {p['pushed_records']:,} records | {p['first_push_seconds']} s |",
        f"| pull of {p['pulled_records']:,} records into an empty store | {p['pull_seconds']} s "
        f"({p['pull_records_per_second']:,} records/s; store {p['store_mb_after_pull']} MB) |",
        f"| of which: validation and redaction of each record before it is stored | "
        f"{p['validate_and_redact_ms_per_record']} ms per record |",
        f"| consolidation step when nothing changed, fresh process, synced < 2 min ago (local queries; psycopg "
        f"imported in {n.get('step_fresh_process_imported_psycopg', '?')} of {n['runs']} runs) | "
        f"{n['step_fresh_process_ms']} ms median |",
        f"| same, the last sync long ago (psycopg import, TLS connect, an empty pull) | "
        f"{n.get('step_fresh_process_server_due_ms', '')} ms median |",
        f"| same process, second call (psycopg imported; new TLS connection) | "
        f"{n['step_fresh_process_second_call_ms']} ms |",
        f"| warm, in a long-lived process | {n['step_warm_ms']} ms |",
        f"| same step with no remote configured | {n['step_no_remote_ms']} ms |",
        f"| whole consolidation pass (no embeddings), with / without the remote | {n['pass_with_remote_ms']} / "
        f"{n['pass_without_remote_ms']} ms (+{n['added_to_pass_ms']} ms) |", ""])


if __name__ == "__main__":
    main()
