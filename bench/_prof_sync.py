"""Profile one first push and one pull into an empty store (cProfile), for development."""
import cProfile, os, pstats, secrets, shutil, sys, tempfile, time, math
sys.path[:0] = [os.path.join(os.path.dirname(__file__)), os.path.join(os.path.dirname(__file__), "..", "lib"),
                os.path.join(os.path.dirname(__file__), "..")]
import remote_bench, make_store
from tests.support import postgres
from agentctx.sharing.remote import schema, sync

n = int(sys.argv[1])
server = postgres.Server(fsync=True).start()
work = tempfile.mkdtemp(prefix="agentctx-prof-sync-")
try:
    server.create_database("b")
    members = [(f"dev{i}", secrets.token_hex(12)) for i in range(2)]
    with server.admin("b") as conn:
        schema.migrate(conn); schema.add_team(conn, "t")
        for role, pw in members: schema.add_member(conn, role, "t", password=pw)
    os.environ["PGPASSFILE"] = postgres.write_pgpass(os.path.join(work, "pgpass"), dict(members))
    seed = os.path.join(work, "seed")
    make_store.build(seed, math.ceil(n / remote_bench.SHAREABLE_SHARE), batch=5000, quiet=True)
    conn, _ = remote_bench._client(seed, server.dsn("b", members[0][0]))
    pr = cProfile.Profile(); t0 = time.monotonic(); pr.enable()
    rep = sync.sync_remote(conn, "team")
    pr.disable(); print("push", round(time.monotonic() - t0, 2), rep["pushed"], rep["status"])
    pstats.Stats(pr).sort_stats("cumtime").print_stats(35)
    empty = os.path.join(work, "empty"); os.makedirs(empty)
    conn, _ = remote_bench._client(empty, server.dsn("b", members[1][0]))
    pr = cProfile.Profile(); t0 = time.monotonic(); pr.enable()
    rep = sync.sync_remote(conn, "team")
    pr.disable(); print("pull", round(time.monotonic() - t0, 2), rep["pulled"], rep["status"])
    pstats.Stats(pr).sort_stats("cumtime").print_stats(45)
finally:
    server.stop(); shutil.rmtree(work, ignore_errors=True)
