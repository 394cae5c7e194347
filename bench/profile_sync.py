"""Where a first push and a pull into an empty store spend their time (cProfile, cumulative), against the
real PostgreSQL of tests/support/postgres.py. For development; the numbers are bench/remote_bench.py's.

    uv run --group dev python bench/profile_sync.py [--records 10000] [--top 35]
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import pstats
import secrets
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (HERE, os.path.join(HERE, "..", "lib"), os.path.join(HERE, "..")):
    sys.path.insert(0, _p)


def profiled(label: str, fn, top: int) -> dict:
    prof = cProfile.Profile()
    t0 = time.monotonic()
    prof.enable()
    report = fn()
    prof.disable()
    print(f"{label}: {time.monotonic() - t0:.2f} s, status {report['status']}, pushed {report['pushed']}, "
          f"pulled {report['pulled']}")
    pstats.Stats(prof).sort_stats("cumtime").print_stats(top)
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--top", type=int, default=35)
    args = ap.parse_args()
    import make_store
    import remote_bench

    from agentctx.remote import schema, sync
    from tests.support import postgres

    server = postgres.Server(fsync=True).start()
    work = tempfile.mkdtemp(prefix="agentctx-profile-sync-")
    try:
        server.create_database("b")
        members = [(f"dev{i}", secrets.token_hex(12)) for i in range(2)]
        with server.admin("b") as conn:
            schema.migrate(conn)
            schema.add_team(conn, "t")
            for role, pw in members:
                schema.add_member(conn, role, "t", password=pw)
        os.environ["PGPASSFILE"] = postgres.write_pgpass(os.path.join(work, "pgpass"), dict(members))
        seed = os.path.join(work, "seed")
        make_store.build(seed, math.ceil(args.records / remote_bench.SHAREABLE_SHARE), batch=5000, quiet=True)
        conn, _ = remote_bench._client(seed, server.dsn("b", members[0][0]))
        profiled("first push", lambda: sync.sync_remote(conn, "team"), args.top)
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        conn, _ = remote_bench._client(empty, server.dsn("b", members[1][0]))
        profiled("pull into an empty store", lambda: sync.sync_remote(conn, "team"), args.top)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
