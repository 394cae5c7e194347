"""Team sync through a real PostgreSQL server started by the suite (tests/support/postgres.py): clients
converge (two, then ten at once), conflicting supersessions keep both with the newer current, an
offline client catches up, each team's copy of a project is its own (another team sharing it first blocks
and learns nothing), a purge propagates, a secret never reaches the server, TLS settings are honoured and
credentials never stored, a server migrated from s003 with data keeps working."""

from __future__ import annotations

import itertools
import json
import os
import secrets
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentctx import project
from agentctx.remote import client, rules, schema
from agentctx.remote import sync as engine
from agentctx.store import db, projects, records
from agentctx.store import remote as store
from tests.conftest import make_repo
from tests.support import postgres
from tests.support.imports import heavy_modules_loaded

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = "git@github.com:acme/widgets.git"
_databases = itertools.count()


# -- without a server ---------------------------------------------------------------------------------


def test_urls_never_carry_a_password():
    assert client.check_url("postgresql://alice@db.example.com/agentctx?sslmode=verify-full")
    for bad in ("postgresql://alice:hunter2@db/agentctx", "postgres://db/agentctx?password=hunter2",
                "mysql://alice@db/x", "db.example.com"):
        with pytest.raises(ValueError):
            client.check_url(bad)


def test_what_stays_local():
    base = {"type": "decision", "key": None, "source": "cli", "scope": "project"}
    assert rules.withheld(base) is None
    assert rules.withheld(base | {"type": "handover"}) == "handover"
    assert rules.withheld(base | {"type": "profile"}) == "profile"
    assert rules.withheld(base | {"type": "convention", "key": "profile.test_command"}) == "profile"
    assert rules.withheld(base | {"source": "hook_observation"}) == "hook observation"
    assert rules.withheld(base | {"type": "preference", "scope": "global"}) == "global"


def test_a_text_these_rules_redacted_is_not_scanned_again_on_push(tmp_path, monkeypatch):
    """A record written through ``records`` is stamped (rules fingerprint + its text); a push sends it
    without redacting it again. A text changed by anything else, or stamped by other rules, is scanned."""
    from agentctx import redact

    conn = db.connect(str(tmp_path / "agentctx.db"))
    proj = project.detect(make_repo(tmp_path / "repo"))
    projects.register(conn, proj)
    rec = records.add(conn, proj.id, type="decision", title="Use the retry loop", body="It backs off.")
    stored = conn.execute("SELECT title, body, redaction_stamp FROM records WHERE id = ?", (rec["id"],)).fetchone()
    assert stored["redaction_stamp"] == redact.stamp(stored["title"], stored["body"])
    row = store.for_push(conn, [rec["id"]])[rec["id"]]

    def no_scan(texts):
        raise AssertionError("scanned again")

    monkeypatch.setattr(redact, "redact_all", no_scan)
    wire, changed = rules.outgoing(row)
    assert wire["title"] == "Use the retry loop" and not changed
    monkeypatch.undo()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with db.transaction(conn):  # an older writer: the stamp no longer matches the text
        conn.execute("UPDATE records SET body = ? WHERE id = ?", (f"token {token}", rec["id"]))
    wire, changed = rules.outgoing(store.for_push(conn, [rec["id"]])[rec["id"]])
    assert token not in wire["body"] and changed
    monkeypatch.setattr(redact, "version", lambda: "other rules")  # a rule changed since it was stamped
    seen = []
    monkeypatch.setattr(redact, "redact_all", lambda texts: seen.extend(texts) or texts)
    rules.outgoing(row)
    assert seen == ["Use the retry loop", "It backs off."]


def test_newer_current_does_not_depend_on_group_order():
    def rec(i, t):
        return {"id": i, "recorded_at": t, "valid_from": t}
    a, b, c = rec("A", "2026-01-01"), rec("B", "2026-01-02"), rec("C", "2026-01-03")
    one = rules.newest_current([[a, b], [b, c]])
    two = rules.newest_current([[b, c], [a, b]])
    assert one == two and set(one) == {"A", "B"} and one["B"]["superseded_by"] == "C" and one["A"]["superseded_by"] == "B"


def test_hot_path_never_imports_psycopg():
    hot = ("import agentctx.events.session_start, agentctx.events.user_prompt_submit, "
           "agentctx.events.session_end, agentctx.events.frame")
    assert heavy_modules_loaded(hot, extra=frozenset({"psycopg"})) == []
    # The sync modules import it only when they talk to a server.
    assert heavy_modules_loaded("import agentctx.remote.sync", extra=frozenset({"psycopg"})) == []


# -- a real server ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg():
    reason = postgres.unavailable()
    if reason:
        pytest.skip(reason)
    server = postgres.Server().start()
    yield server
    server.stop()


class Team:
    """A fresh database with the agentctx schema, and members whose passwords are only in PGPASSFILE."""

    def __init__(self, pg: postgres.Server, folder: Path, monkeypatch):
        self.pg, self.n = pg, next(_databases)
        self.db = f"team{self.n}_{os.getpid()}"
        pg.create_database(self.db)
        with pg.admin(self.db) as conn:
            assert schema.migrate(conn) == list(schema.NAMES)
            assert schema.migrate(conn) == []  # applied once
        self.passwords: dict[str, str] = {}
        self.pgpass = folder / "pgpass"
        monkeypatch.setenv("PGPASSFILE", str(self.pgpass))
        monkeypatch.delenv("PGPASSWORD", raising=False)

    def team(self, name: str) -> str:
        role = f"{name}_{self.n}_{os.getpid()}"
        with self.pg.admin(self.db) as conn:
            schema.add_team(conn, role)
        return role

    def member(self, name: str, *teams: str) -> str:
        role = f"{name}_{self.n}_{os.getpid()}"
        self.passwords[role] = secrets.token_hex(12)
        with self.pg.admin(self.db) as conn:
            for team in teams:
                schema.add_member(conn, role, team, password=self.passwords[role])
        postgres.write_pgpass(str(self.pgpass), self.passwords)
        return role

    def url(self, role: str, **params) -> str:
        return self.pg.dsn(self.db, role, **params)

    def rows(self, sql: str, *args):
        with self.pg.admin(self.db) as conn:
            return conn.execute(sql, args).fetchall()


@pytest.fixture
def team(pg, tmp_path, monkeypatch) -> Team:
    return Team(pg, tmp_path, monkeypatch)


class Client:
    """One teammate's machine: a store of its own, a checkout of the shared repository, a remote."""

    def __init__(self, folder: Path, url: str | None, *, origin: str = ORIGIN, share: bool = True,
                 team: str | None = None):
        self.folder = folder
        self.conn = db.connect(str(folder / "data" / "agentctx.db"))
        self.proj = project.detect(str(make_repo(folder / "widgets", origin)))
        projects.register(self.conn, self.proj)
        if url:
            store.add(self.conn, "team", url, team)
        if share:
            store.set_share(self.conn, self.proj.id, True)

    def add(self, title: str, rtype: str = "decision", **kw) -> dict:
        return records.add(self.conn, self.proj.id, type=rtype, title=title, **kw)

    def sync(self) -> dict:
        report = engine.sync_remote(self.conn, "team")
        assert report["status"] == "ok", report
        return report

    def state(self) -> dict[str, tuple]:
        """The project's records as teammates should all see them."""
        return {r["id"]: (r["type"], r["title"], r["body"], r["superseded_by"], r["superseded_at"] is None)
                for r in records.dump(self.conn, self.proj.id) if not rules.withheld(r)}

    def current_titles(self) -> set[str]:
        return {r["title"] for r in records.current(self.conn, self.proj.id)}


def server_state(team: Team, project_id: str) -> dict[str, tuple]:
    rows = team.rows("SELECT id, type, title, body, superseded_by, superseded_at IS NULL FROM agentctx.records "
                     "WHERE project_id = %s", project_id)
    return {r[0]: tuple(r[1:]) for r in rows}


def test_two_clients_converge(team, tmp_path):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    bob = Client(tmp_path / "bob", team.url(team.member("bob", crew)))
    assert alice.proj.id == bob.proj.id  # the same repository on two machines: one project id
    a1 = alice.add("Use PostgreSQL 16 for the shared store", body="Row-level security per team.")
    alice.add("Commits follow Conventional Commits", "convention")
    bob.add("pytest -x stops at the first failure", "discovery")
    # What never leaves the machine.
    alice.add("Where I stopped: the migration runner", "handover")
    alice.add("test command", "profile", key="profile.test_command", body="uv run pytest")
    alice.add("FAILED tests/test_x.py", "bugfix", source="hook_observation")
    records.add(alice.conn, alice.proj.id, type="preference", title="I like short answers", scope="global")

    first = alice.sync()
    assert first["pushed"] == 2 and first["withheld"] == {"handover": 1, "profile": 1, "hook observation": 1,
                                                          "global": 1}
    bob.sync()
    alice.sync()
    assert alice.state() == bob.state() and len(alice.state()) == 3
    assert server_state(team, alice.proj.id) == {k: (*v[:3], v[3], v[4]) for k, v in alice.state().items()}
    titles = {r[0] for r in team.rows("SELECT title FROM agentctx.records")}
    assert not {t for t in titles if "stopped" in t or "test command" in t or "FAILED" in t or "short" in t}
    # Provenance: who pushed it and from what source; both time axes kept exactly.
    author, source, recorded = team.rows("SELECT author, source, recorded_at FROM agentctx.records WHERE id = %s",
                                         a1["id"])[0]
    assert author.startswith("alice_") and source == "cli"
    from agentctx import clock
    assert clock.to_iso(recorded) == a1["recorded_at"]
    assert records.get(bob.conn, a1["id"], bob.proj.id)["recorded_at"] == a1["recorded_at"]

    # A supersession made by Bob reaches Alice; an edit made by Alice reaches Bob.
    new = records.supersede(bob.conn, bob.proj.id, a1["id"], body="PostgreSQL 17 now", title="Use PostgreSQL 17")
    conv = next(r for r in records.current(alice.conn, alice.proj.id) if r["type"] == "convention")
    records.edit(alice.conn, conv["id"], title="Commits follow Conventional Commits 1.0", project_id=alice.proj.id)
    bob.sync()
    alice.sync()
    bob.sync()
    assert alice.state() == bob.state()
    assert "Use PostgreSQL 17" in alice.current_titles() and "Use PostgreSQL 16 for the shared store" not in alice.current_titles()
    assert records.get(alice.conn, a1["id"], alice.proj.id)["superseded_by"] == new["id"]
    assert "Commits follow Conventional Commits 1.0" in bob.current_titles()


def test_push_is_idempotent_and_pull_is_incremental(team, tmp_path):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    for i in range(30):
        alice.add(f"Decision number {i}")
    assert alice.sync()["pushed"] == 30
    changes = team.rows("SELECT count(*) FROM agentctx.changes")[0][0]
    # Push the same records again (as after a crash between the server's commit and the local one).
    with db.transaction(alice.conn):
        for r in records.current(alice.conn, alice.proj.id):
            alice.conn.execute("UPDATE records SET pinned = pinned WHERE id = ?", (r["id"],))
    again = alice.sync()
    assert again["pushed"] == 0 and again["unchanged"] == 30
    assert team.rows("SELECT count(*) FROM agentctx.changes")[0][0] == changes
    assert store.outbox_count(alice.conn, "team") == 0
    # Nothing changed: pulling brings nothing back (Alice's own changes were already applied).
    quiet = alice.sync()
    assert quiet["pushed"] == 0 and quiet["pulled"] == 0
    cursor = store.get(alice.conn, "team")["cursor"]
    assert cursor == team.rows("SELECT max(seq) FROM agentctx.changes")[0][0]


def test_ten_clients_converge_concurrently(team, tmp_path):
    crew = team.team("crew")
    clients = [Client(tmp_path / f"c{i}", team.url(team.member(f"dev{i}", crew))) for i in range(10)]
    for i, c in enumerate(clients):
        for j in range(25):
            c.add(f"Client {i} decision {j}", body=f"because {i}.{j}")
    shared = clients[0].add("Shared API style: REST")
    clients[0].sync()
    for c in clients[1:]:
        c.sync()
    # Three of them supersede the same record at once, on different machines.
    for i in (3, 5, 7):
        records.supersede(clients[i].conn, clients[i].proj.id, shared["id"], body=f"gRPC, says client {i}",
                          title=f"Shared API style: gRPC ({i})")

    errors: list = []

    def run(c: Client) -> None:
        try:
            for _ in range(2):
                c.sync()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for c in clients:  # one more round: everyone sees everything
        c.sync()
    states = [c.state() for c in clients]
    assert all(s == states[0] for s in states[1:])
    assert len(states[0]) == 10 * 25 + 1 + 3
    assert server_state(team, clients[0].proj.id) == states[0]
    api = {t for t in clients[0].current_titles() if t.startswith("Shared API style")}
    assert len(api) == 1  # three supersessions kept, one current: the newest
    newest = max((r for r in records.dump(clients[0].conn, clients[0].proj.id) if "gRPC (" in r["title"]),
                 key=lambda r: (r["recorded_at"], r["id"]))
    assert api == {newest["title"]}


@pytest.mark.parametrize("first", ["older", "newer"])
def test_conflicting_supersessions_keep_both_newer_current(team, tmp_path, first):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    bob = Client(tmp_path / "bob", team.url(team.member("bob", crew)))
    rest = alice.add("API style: REST over HTTP/JSON")
    alice.sync()
    bob.sync()
    older = records.supersede(alice.conn, alice.proj.id, rest["id"], body="gRPC everywhere", title="API style: gRPC")
    newer = records.supersede(bob.conn, bob.proj.id, rest["id"], body="GraphQL for the web", title="API style: GraphQL")
    order = [alice, bob] if first == "older" else [bob, alice]
    for c in order + order:
        c.sync()
    assert alice.state() == bob.state() == server_state(team, alice.proj.id)
    for c in (alice, bob):
        assert {t for t in c.current_titles() if t.startswith("API style")} == {"API style: GraphQL"}
        kept = records.get(c.conn, older["id"], c.proj.id)
        assert kept["superseded_by"] == newer["id"] and kept["superseded_at"] is not None  # kept, in history
        assert records.get(c.conn, rest["id"], c.proj.id)["superseded_by"] == newer["id"]
    # Chains: Alice supersedes a fact once, Bob twice before syncing; the newest head wins, both chains kept.
    base = alice.add("Cache: none")
    alice.sync()
    bob.sync()
    a1 = records.supersede(alice.conn, alice.proj.id, base["id"], body="Redis", title="Cache: Redis")
    b1 = records.supersede(bob.conn, bob.proj.id, base["id"], body="Memcached", title="Cache: Memcached")
    b2 = records.supersede(bob.conn, bob.proj.id, b1["id"], body="Memcached, 2 nodes", title="Cache: Memcached x2")
    for c in order + order:
        c.sync()
    assert alice.state() == bob.state() == server_state(team, alice.proj.id)
    for c in (alice, bob):
        assert {t for t in c.current_titles() if t.startswith("Cache:")} == {"Cache: Memcached x2"}
        assert records.get(c.conn, a1["id"], c.proj.id)["superseded_by"] == b2["id"]
        assert records.get(c.conn, base["id"], c.proj.id)["superseded_by"] == b1["id"]
    # The same with a key: two people set the same keyed fact; the newer holds the key everywhere.
    k1 = alice.add("Release branch is release/1.x", "convention", key="release.branch")
    k2 = bob.add("Release branch is release/2.x", "convention", key="release.branch")
    for c in order + order:
        c.sync()
    for c in (alice, bob):
        assert records.by_key(c.conn, c.proj.id, "release.branch")["id"] == k2["id"]
        assert records.get(c.conn, k1["id"], c.proj.id)["superseded_by"] == k2["id"]


def test_offline_client_catches_up(team, pg, tmp_path):
    crew = team.team("crew")
    gate = postgres.Gate(pg.port)
    carol = Client(tmp_path / "carol", team.pg.dsn(team.db, team.member("carol", crew), port=gate.port))
    dave = Client(tmp_path / "dave", team.url(team.member("dave", crew)))
    base = dave.add("Deploys go through the staging cluster")
    dave.sync()
    carol.sync()
    gate.down()
    try:
        mine = [carol.add(f"Carol's offline finding {i}", "discovery") for i in range(5)]
        failed = engine.sync_remote(carol.conn, "team")
        assert failed["status"] == "offline"
        line = store.get(carol.conn, "team")["status"]
        assert line.startswith("offline at ") and "\n" not in line and "nothing local is lost" in line
        assert store.get(carol.conn, "team")["failures"] == 1
        first_retry = store.get(carol.conn, "team")["next_attempt_at"]
        engine.sync_remote(carol.conn, "team")
        assert store.get(carol.conn, "team")["failures"] == 2
        assert store.get(carol.conn, "team")["next_attempt_at"] > first_retry  # backoff grows
        # The consolidation pass does not hammer a server that is down: it waits for the backoff.
        assert engine.in_consolidation(carol.conn)["team"]["status"] == "waiting"
        assert store.get(carol.conn, "team")["failures"] == 2
        assert store.outbox_count(carol.conn, "team") >= 5  # nothing local is lost
        # Meanwhile the team moves on: 200 new records, a supersession, a purge.
        for i in range(200):
            dave.add(f"Team decision {i}")
        records.supersede(dave.conn, dave.proj.id, base["id"], body="Deploys go through canary first",
                          title="Deploys go through canary")
        gone = dave.add("Temporary note about the old VPN")
        dave.sync()
        from agentctx.maintenance import forgetting
        forgetting.purge(dave.conn, dave.proj.id, gone["id"])
        dave.sync()
    finally:
        gate.up()
    back = carol.sync()
    assert back["pushed"] == 5 and back["pulled"] >= 201
    dave.sync()
    assert carol.state() == dave.state()
    assert {r["id"] for r in mine} <= set(dave.state())
    assert store.get(carol.conn, "team")["failures"] == 0 and store.get(carol.conn, "team")["status"].startswith("ok")
    assert records.get(carol.conn, gone["id"], carol.proj.id) is None
    assert "Deploys go through canary" in carol.current_titles()


def test_another_team_sharing_my_project_first_neither_blocks_nor_learns(team, tmp_path):
    import psycopg

    red, blue = team.team("red"), team.team("blue")
    alice_role, bob_role, mallory_role = team.member("alice", red), team.member("bob", red), team.member("mallory", blue)
    # Blue's member knows red's repository URL (so its project id) and shares it first.
    mallory = Client(tmp_path / "mallory", team.url(mallory_role))
    mallory.add("Mallory's decision")
    assert mallory.sync()["pushed"] == 1
    # Red shares and syncs as if nobody had: nothing refused, nothing of blue's pulled.
    alice = Client(tmp_path / "alice", team.url(alice_role))
    bob = Client(tmp_path / "bob", team.url(bob_role))
    assert alice.proj.id == mallory.proj.id
    secret = alice.add("Red's secret roadmap decision")
    first = alice.sync()
    assert first["pushed"] == 1 and first["pulled"] == 0 and first["team"] == red
    assert bob.sync()["pulled"] == 1
    assert bob.current_titles() == {"Red's secret roadmap decision"}
    mallory.add("Mallory's second decision")
    assert mallory.sync()["pulled"] == 0
    assert mallory.current_titles() == {"Mallory's decision", "Mallory's second decision"}
    assert alice.sync()["pulled"] == 0 and "Mallory's decision" not in alice.current_titles()
    assert sorted(r[0] for r in team.rows("SELECT team FROM agentctx.projects WHERE id = %s", alice.proj.id)) == \
        sorted([red, blue])
    # A purge in red's copy reaches red only; blue's copy (even of the same id) is untouched.
    with _member_conn(team, mallory_role) as conn:  # blue plants red's id in its own copy
        _plant(conn, blue, mallory.proj.id, secret["id"], "blue's row with red's id")
    CliRunner().invoke(_cli(), ["--project", str(alice.proj.root), "purge", secret["id"], "--yes"],
                       env={"AGENTCTX_HOME": str(alice.folder / "data")})
    alice.sync()
    assert bob.sync()["purged_here"] == 1
    assert team.rows("SELECT team FROM agentctx.purged WHERE id = %s", secret["id"]) == [(red,)]
    assert team.rows("SELECT title FROM agentctx.records WHERE id = %s", secret["id"]) == [("blue's row with red's id",)]
    report = mallory.sync()
    assert report["purged_here"] == 0 and "blue's row with red's id" in mallory.current_titles()
    # Red's change numbers run on without gaps: blue's activity shows nowhere in them.
    seqs = [r[0] for r in team.rows("SELECT seq FROM agentctx.changes WHERE team = %s ORDER BY seq", red)]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    # Straight SQL as blue's member: only blue's rows, nothing of red's can be read, written or counted.
    with client.connect(team.url(mallory_role)) as conn:
        assert conn.execute("SELECT DISTINCT team FROM agentctx.records").fetchall() == [(blue,)]
        assert conn.execute("SELECT DISTINCT team FROM agentctx.changes").fetchall() == [(blue,)]
        assert conn.execute("SELECT team FROM agentctx.projects").fetchall() == [(blue,)]
        assert conn.execute("SELECT count(*) FROM agentctx.purged").fetchone()[0] == 0
        assert conn.execute("UPDATE agentctx.records SET title = 'x' WHERE team = %s", (red,)).rowcount == 0
        assert conn.execute("DELETE FROM agentctx.records WHERE team = %s", (red,)).rowcount == 0
        with pytest.raises(psycopg.errors.RaiseException):  # a row cannot move to another team
            conn.execute("UPDATE agentctx.records SET team = %s", (red,))
        red_seq = team.rows("SELECT agentctx.team_sequence(%s)::text", red)[0][0]
        for sql, args in ((f"SELECT last_value FROM {red_seq}", ()), ("SELECT nextval(%s)", (red_seq,)),
                          ("SELECT agentctx.next_change(%s)", (red,)), ("SELECT agentctx.team_sequence(%s)", (red,))):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql, args)
        # Every error is the same whether red has this project (and this id) or not.
        errors = []
        for pid, rid in ((alice.proj.id, secret["id"]), (alice.proj.id, "01JZZZZZZZZZZZZZZZZZZZZZZ7"),
                         ("0123456789abcdef", "01JZZZZZZZZZZZZZZZZZZZZZZ7")):
            with pytest.raises(psycopg.Error) as caught:
                _plant(conn, red, pid, rid, "probe")
            errors.append((type(caught.value).__name__, str(caught.value).replace(rid, "ID").replace(pid, "P")))
            for sql in ("INSERT INTO agentctx.projects (id, team) VALUES (%(p)s, %(t)s)",
                        "INSERT INTO agentctx.purged (team, id, project_id) VALUES (%(t)s, %(r)s, %(p)s)",
                        "INSERT INTO agentctx.changes (team, project_id, record_id, op) VALUES (%(t)s, %(p)s, %(r)s, "
                        "'purge')"):
                with pytest.raises(psycopg.Error) as caught:
                    conn.execute(sql, {"t": red, "p": pid, "r": rid})
                errors.append((type(caught.value).__name__, str(caught.value).replace(rid, "ID").replace(pid, "P")))
        assert errors[:4] == errors[4:8] == errors[8:], errors
        assert all(kind == "InsufficientPrivilege" for kind, _ in errors), errors
    # The client's own words about a team it is not in are the same whether that team exists or not.
    said = []
    for name in (red, "nosuchteam"):
        with client.connect(team.url(mallory_role)) as conn, pytest.raises(client.RemoteError) as caught:
            client.team_of(conn, name)
        said.append(str(caught.value).replace(name, "T"))
    assert said[0] == said[1]


def test_a_member_in_two_teams_keeps_them_apart(team, tmp_path):
    red, blue = team.team("red"), team.team("blue")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", red)))
    mallory = Client(tmp_path / "mallory", team.url(team.member("mallory", blue)))
    alice.add("Red's decision")
    mallory.add("Blue's decision")
    alice.sync()
    mallory.sync()
    carol_role = team.member("carol", red, blue)
    unnamed = Client(tmp_path / "carol", team.url(carol_role))
    report = engine.sync_remote(unnamed.conn, "team")
    assert report["status"] == "error" and "several teams" in report["error"] and "--team" in report["error"]
    as_blue = Client(tmp_path / "carol-blue", team.url(carol_role), team=blue)
    assert as_blue.sync()["pulled"] == 1 and as_blue.current_titles() == {"Blue's decision"}
    as_red = Client(tmp_path / "carol-red", team.url(carol_role), team=red)
    as_red.add("Carol's red decision")
    assert as_red.sync()["pulled"] == 1
    assert as_red.current_titles() == {"Red's decision", "Carol's red decision"}
    assert mallory.sync()["pulled"] == 0 and alice.sync()["pulled"] == 1
    assert team.rows("SELECT team FROM agentctx.records WHERE title = %s", "Carol's red decision") == [(red,)]


def test_a_server_migrated_from_s003_with_data_keeps_working(team, pg, tmp_path, monkeypatch):
    import psycopg

    db_name = f"old_{os.getpid()}_{next(_databases)}"
    pg.create_database(db_name)
    with pg.admin(db_name) as conn:  # a server as it was before s004, with both teams' data
        monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:3])
        assert schema.migrate(conn) == ["s001_tables", "s002_row_level_security", "s003_record_identity"]
        monkeypatch.undo()
        monkeypatch.setenv("PGPASSFILE", str(team.pgpass))
        red, blue = f"red_old_{os.getpid()}", f"blue_old_{os.getpid()}"
        for name in (red, blue):
            schema.add_team(conn, name)
        conn.execute("INSERT INTO agentctx.projects (id, team) VALUES ('00000000000000a1', %s), "
                     "('00000000000000b1', %s)", (red, blue))
        old = {}
        for pid, rid, title in (("00000000000000a1", "01JAAAAAAAAAAAAAAAAAAAAAA1", "Red before the upgrade"),
                                ("00000000000000b1", "01JBBBBBBBBBBBBBBBBBBBBBB1", "Blue before the upgrade"),
                                ("00000000000000a1", "01JAAAAAAAAAAAAAAAAAAAAAA2", "Red's second, later purged")):
            conn.execute("INSERT INTO agentctx.records (id, project_id, type, title, confidence, source, valid_from, "
                         "recorded_at) VALUES (%s, %s, 'decision', %s, 'explicit', 'cli', now(), now())",
                         (rid, pid, title))
            seq = conn.execute("INSERT INTO agentctx.changes (project_id, record_id, op) VALUES (%s, %s, 'upsert') "
                               "RETURNING seq", (pid, rid)).fetchone()[0]
            conn.execute("UPDATE agentctx.records SET seq = %s WHERE id = %s AND project_id = %s", (seq, rid, pid))
            old[rid] = seq
        conn.execute("DELETE FROM agentctx.records WHERE id = '01JAAAAAAAAAAAAAAAAAAAAAA2'")
        conn.execute("INSERT INTO agentctx.purged (id, project_id) VALUES ('01JAAAAAAAAAAAAAAAAAAAAAA2', "
                     "'00000000000000a1')")
        conn.execute("INSERT INTO agentctx.changes (project_id, record_id, op) VALUES ('00000000000000a1', "
                     "'01JAAAAAAAAAAAAAAAAAAAAAA2', 'purge')")
        top = conn.execute("SELECT max(seq) FROM agentctx.changes").fetchone()[0]
        assert schema.migrate(conn) == ["s004_team_copies"]
        assert schema.migrate(conn) == []
        assert conn.execute("SELECT project_id, team FROM agentctx.records ORDER BY id").fetchall() == [
            ("00000000000000a1", red), ("00000000000000b1", blue)]
        assert conn.execute("SELECT team FROM agentctx.purged").fetchall() == [(red,)]
        assert conn.execute("SELECT team, count(*) FROM agentctx.changes GROUP BY team ORDER BY team").fetchall() == \
            sorted([(red, 3), (blue, 1)])
        with pytest.raises(psycopg.errors.RaiseException):  # still append-only, even for the owner
            conn.execute("DELETE FROM agentctx.changes")
    # A member of red, whose store had pulled up to the first change before the upgrade, carries on.
    team.passwords[f"ann_{os.getpid()}"] = secrets.token_hex(12)
    ann_role = f"ann_{os.getpid()}"
    with pg.admin(db_name) as conn:
        schema.add_member(conn, ann_role, red, password=team.passwords[ann_role])
        schema.add_member(conn, f"mal_{os.getpid()}", blue, password="x" * 16)
    postgres.write_pgpass(str(team.pgpass), team.passwords | {f"mal_{os.getpid()}": "x" * 16})
    ann = Client(tmp_path / "ann", pg.dsn(db_name, ann_role), origin=ORIGIN, share=False)
    projects.register(ann.conn, project.Project("00000000000000a1", "old", str(tmp_path / "old"), ""))
    store.set_share(ann.conn, "00000000000000a1", True)
    store.set_state(ann.conn, "team", cursor=old["01JAAAAAAAAAAAAAAAAAAAAAA1"] - 1)
    report = ann.sync()
    assert report["pulled"] == 1 and report["team"] == red
    assert {r["title"] for r in records.current(ann.conn, "00000000000000a1")} == {"Red before the upgrade"}
    # The purged id stays purged; new changes are numbered after every number given before the upgrade.
    mine = records.add(ann.conn, "00000000000000a1", type="decision", title="Red after the upgrade")
    ann.sync()
    with pg.admin(db_name) as conn:
        assert conn.execute("SELECT seq FROM agentctx.changes WHERE record_id = %s", (mine["id"],)).fetchone()[0] == top + 1
        assert conn.execute("SELECT count(*) FROM agentctx.records WHERE id = '01JAAAAAAAAAAAAAAAAAAAAAA2'").fetchone()[0] == 0
    # Blue shares red's old project for itself: a copy of its own, red's untouched.
    mal = Client(tmp_path / "mal", pg.dsn(db_name, f"mal_{os.getpid()}"), share=False)
    projects.register(mal.conn, project.Project("00000000000000a1", "old", str(tmp_path / "old2"), ""))
    store.set_share(mal.conn, "00000000000000a1", True)
    records.add(mal.conn, "00000000000000a1", type="decision", title="Blue's copy")
    rep = mal.sync()
    assert rep["pushed"] == 1 and rep["pulled"] == 1  # blue's own old record, in its own project
    assert {r["title"] for r in records.current(mal.conn, "00000000000000a1")} == {"Blue's copy"}
    assert ann.sync()["pulled"] == 0


def test_purge_propagates(team, tmp_path):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    bob = Client(tmp_path / "bob", team.url(team.member("bob", crew)))
    leaked = alice.add("The staging DB lives at 10.0.0.7 with the shared admin login")
    kept = alice.add("Staging is rebuilt nightly")
    alice.sync()
    bob.sync()
    assert records.get(bob.conn, leaked["id"], bob.proj.id) is not None
    # Bob committed a team file holding it, and pins it (an edit): neither may bring it back later.
    from agentctx.sharing import teamsync
    team_file = Path(teamsync.export(bob.conn, bob.proj, create=True))
    assert leaked["id"] in team_file.read_text()
    records.pin(bob.conn, leaked["id"], project_id=bob.proj.id)

    # `agentctx purge` (forgetting.purge) queues the purge for every remote.
    result = CliRunner().invoke(_cli(), ["--project", str(alice.proj.root), "purge", leaked["id"], "--yes",
                                         "--json"], env={"AGENTCTX_HOME": str(alice.folder / "data")})
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["store"]["records"] == 1 and out["remotes"] == ["team"]
    assert records.get(alice.conn, leaked["id"], alice.proj.id) is None
    alice.sync()
    assert team.rows("SELECT count(*) FROM agentctx.records WHERE id = %s", leaked["id"])[0][0] == 0
    assert team.rows("SELECT op FROM agentctx.changes WHERE record_id = %s ORDER BY seq DESC LIMIT 1",
                     leaked["id"])[0][0] == "purge"
    report = bob.sync()
    assert report["purged_here"] == 1
    assert store.purges(bob.conn, "team") == []  # not sent back to the server it came from
    assert records.get(bob.conn, leaked["id"], bob.proj.id) is None
    assert not records.dump(bob.conn, None) or leaked["id"] not in {r["id"] for r in records.dump(bob.conn, None)}
    from agentctx.store import search
    assert not [h for h in search.search(bob.conn, bob.proj.id, "staging admin login") if h.record["id"] == leaked["id"]]
    assert team.rows("SELECT count(*) FROM agentctx.records WHERE id = %s", leaked["id"])[0][0] == 0
    assert records.get(bob.conn, kept["id"], bob.proj.id) is not None
    assert leaked["id"] not in team_file.read_text() and kept["id"] in team_file.read_text()
    teamsync.import_changes(bob.conn, bob.proj, force=True)
    bob.sync()
    assert records.get(bob.conn, leaked["id"], bob.proj.id) is None
    # Bob's stale pinned copy was in his outbox: pushing it was refused, nothing came back; one purge in the log.
    assert team.rows("SELECT count(*) FROM agentctx.changes WHERE op = 'purge'")[0][0] == 1
    # The purged content is nowhere on the server: only its id in the tombstone and the log.
    dump = _server_text(team)
    assert "10.0.0.7" not in dump and leaked["id"] in dump


def _cli():
    from agentctx.surfaces.cli import cli

    return cli


def _server_text(team: Team) -> str:
    """Every row of every agentctx table on the server, as text."""
    tables = [r[0] for r in team.rows("SELECT tablename FROM pg_tables WHERE schemaname = 'agentctx'")]
    return "\n".join(str(row) for t in tables for row in team.rows(f"SELECT t::text FROM agentctx.{t} t"))


def test_a_secret_never_reaches_the_server(team, tmp_path):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    password = "Tr0ub4dor&3-horse-battery"
    # Stored before a rule existed (as an older agentctx would have): planted straight into the store.
    rec = alice.add("Mirror job uses a token")
    with db.transaction(alice.conn):
        alice.conn.execute("UPDATE records SET body = ?, title = ? WHERE id = ?",
                           (f"export GITHUB_TOKEN={token}\nDB_PASSWORD={password}\n"
                            "<private>my home address is 1 Infinite Loop</private> rotate monthly",
                            f"Mirror job uses {token}", rec["id"]))
    only_private = alice.add("placeholder")
    with db.transaction(alice.conn):
        alice.conn.execute("UPDATE records SET title = ? WHERE id = ?", ("<private>all of it</private>",
                                                                         only_private["id"]))
    report = alice.sync()
    assert report["pushed"] == 1 and report["redacted"] == 1 and report["withheld"] == {"private": 1}
    text = _server_text(team)
    for secret in (token, password, "Infinite Loop", "all of it"):
        assert secret not in text
    assert "[REDACTED:" in text and "rotate monthly" in text


def test_tls_settings_are_honoured_and_credentials_never_stored(team, pg, tmp_path, monkeypatch):
    if not pg.ssl:
        pytest.skip("openssl is not installed: the test server has no certificate")
    crew = team.team("crew")
    role = team.member("alice", crew)
    home = tmp_path / "alice" / "data"
    runner = CliRunner()
    env = {"AGENTCTX_HOME": str(home)}
    repo = make_repo(tmp_path / "alice" / "widgets", ORIGIN)
    bad = runner.invoke(_cli(), ["remote", "add", "team", f"postgresql://{role}:{team.passwords[role]}@127.0.0.1/x"],
                        env=env)
    assert bad.exit_code != 0 and "password" in bad.output
    url = pg.dsn(team.db, role, host="localhost", sslmode="verify-full", sslrootcert=pg.ca)
    assert runner.invoke(_cli(), ["remote", "add", "team", url], env=env).exit_code == 0
    assert runner.invoke(_cli(), ["--project", str(repo), "remote", "share"], env=env).exit_code == 0
    assert runner.invoke(_cli(), ["--project", str(repo), "record", "--type", "decision", "--title", "TLS only"],
                         env=env).exit_code == 0
    done = runner.invoke(_cli(), ["--project", str(repo), "remote", "sync", "--json"], env=env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["team"]["pushed"] == 1
    with client.connect(url) as conn:
        assert conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()[0] is True
    with client.connect(pg.dsn(team.db, role, sslmode="disable")) as conn:
        assert conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()[0] is False
    # verify-full against a CA that did not sign the server's certificate: refused, reported as offline.
    other_ca = tmp_path / "other.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(tmp_path / "k"),
                    "-out", str(other_ca), "-days", "1", "-subj", "/CN=other"], capture_output=True, check=True)
    with pytest.raises(client.Unreachable):
        client.connect(pg.dsn(team.db, role, host="localhost", sslmode="verify-full", sslrootcert=str(other_ca)))
    # The password is in PGPASSFILE only: no agentctx file holds it.
    for path in home.rglob("*"):
        if path.is_file():
            assert team.passwords[role].encode() not in path.read_bytes(), path
    status = runner.invoke(_cli(), ["--project", str(repo), "remote", "status", "--json"], env=env)
    state = json.loads(status.output)
    assert state["remotes"][0]["url"] == url and state["remotes"][0]["status"].startswith("ok")


@pytest.mark.parametrize("name", ["config", "config.toml"])
def test_opt_in_through_the_repository_file_and_opt_out(team, tmp_path, name):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)), share=False)
    other = project.detect(str(make_repo(tmp_path / "alice" / "private-tool", "git@github.com:alice/tool.git")))
    projects.register(alice.conn, other)
    records.add(alice.conn, other.id, type="decision", title="My private tool uses Tcl")
    alice.add("Widgets use SI units")
    report = alice.sync()
    assert report["pushed"] == 0 and report["withheld"] == {"project not shared": 2}
    config = Path(alice.proj.root) / ".agentctx" / name
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[remote]\nshare = true\n")
    report = alice.sync()  # the first full push of a newly shared project
    assert report["pushed"] == 1
    assert {r[0] for r in team.rows("SELECT title FROM agentctx.records")} == {"Widgets use SI units"}
    store.set_share(alice.conn, alice.proj.id, False)  # the user's word wins over the file
    alice.add("Widgets ship as wheels")
    assert alice.sync()["pushed"] == 0
    assert {r[0] for r in team.rows("SELECT title FROM agentctx.records")} == {"Widgets use SI units"}


def test_consolidation_pass_syncs(team, tmp_path, monkeypatch):
    from agentctx.consolidation import consolidate

    crew = team.team("crew")
    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path / "alice" / "data"))
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    alice.add("Consolidation pushes this")
    report = consolidate.run(alice.proj, seconds=30, use_embeddings=False)
    assert report["steps"]["remote"]["team"]["status"] == "ok", report
    assert report["steps"]["remote"]["team"]["pushed"] == 1
    assert team.rows("SELECT title FROM agentctx.records")[0][0] == "Consolidation pushes this"


def test_a_pass_with_nothing_to_send_leaves_a_fresh_remote_alone_without_psycopg(team, tmp_path):
    """Nothing queued and synced less than PULL_EVERY_S ago: the pass's remote step runs local queries only
    (psycopg not imported); something to send, or a last sync long enough ago, goes to the server."""
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    alice.add("Synced before the pass")
    alice.sync()
    db_path = alice.folder / "data" / "agentctx.db"
    code = (f"from agentctx.store import db\nfrom agentctx.remote import sync\n"
            f"print(sync.in_consolidation(db.connect({str(db_path)!r})))")
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, 'lib')\n{code}\n"
                          "print('psycopg' in sys.modules)"], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**os.environ, "PGPASSFILE": str(team.pgpass)})
    step, imported = out.stdout.strip().splitlines()
    assert "'quiet'" in step and imported == "False", out.stdout
    alice.add("Queued after the sync")
    report = engine.in_consolidation(alice.conn)
    assert report["team"]["status"] == "ok" and report["team"]["pushed"] == 1
    with db.transaction(alice.conn):
        store.set_state(alice.conn, "team", last_ok_at="2020-01-01T00:00:00.000000Z")
    assert engine.in_consolidation(alice.conn)["team"]["status"] == "ok"  # time to look for teammates' changes
    assert engine.in_consolidation(alice.conn)["team"]["status"] == "quiet"


def test_detached_consolidation_script_syncs(team, tmp_path):
    """The process SessionEnd starts (uv run --script lib/agentctx_consolidate.py) has psycopg and syncs."""
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    alice.add("Pushed from the detached pass")
    alice.conn.close()
    env = {**os.environ, "AGENTCTX_HOME": str(alice.folder / "data"), "PGPASSFILE": str(team.pgpass)}
    out = subprocess.run(["uv", "run", "--quiet", "--script", str(ROOT / "lib" / "agentctx_consolidate.py"),
                          "--cwd", alice.proj.root, "--no-embeddings", "--json"], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["steps"]["remote"]["team"]["pushed"] == 1
    assert team.rows("SELECT title FROM agentctx.records")[0][0] == "Pushed from the detached pass"


def test_cli_dry_run_status_and_admin(team, pg, tmp_path):
    env = {"AGENTCTX_HOME": str(tmp_path / "data")}
    runner = CliRunner()
    admin_url = f"postgresql://{postgres.ADMIN}@127.0.0.1:{pg.port}/{team.db}?sslmode=disable"
    with_pw = {**env, "PGPASSWORD": pg.password}
    out = runner.invoke(_cli(), ["remote", "admin", "migrate", admin_url, "--json"], env=with_pw)
    assert out.exit_code == 0 and json.loads(out.output) == {"applied": []}
    t = f"ops_{team.n}_{os.getpid()}"
    assert runner.invoke(_cli(), ["remote", "admin", "team", admin_url, t], env=with_pw).exit_code == 0
    role = f"erin_{team.n}_{os.getpid()}"
    out = runner.invoke(_cli(), ["remote", "admin", "member", admin_url, role, "--team", t, "--password-env", "NEWPW",
                                 "--json"], env={**with_pw, "NEWPW": "pw-erin-123"})
    assert out.exit_code == 0 and json.loads(out.output)["created"] is True
    team.passwords[role] = "pw-erin-123"
    postgres.write_pgpass(str(team.pgpass), team.passwords)
    repo = make_repo(tmp_path / "widgets", ORIGIN)
    url = pg.dsn(team.db, role)
    assert runner.invoke(_cli(), ["remote", "add", "team", url], env=env).exit_code == 0
    assert runner.invoke(_cli(), ["--project", str(repo), "remote", "share", "--json"], env=env).exit_code == 0
    for title in ("One", "Two"):
        runner.invoke(_cli(), ["--project", str(repo), "record", "--type", "decision", "--title", title], env=env)
    plan = runner.invoke(_cli(), ["--project", str(repo), "remote", "sync", "--dry-run", "--json"], env=env)
    assert plan.exit_code == 0, plan.output
    assert json.loads(plan.output)["team"]["would_push"] == 2 and json.loads(plan.output)["team"]["would_pull"] == 0
    assert team.rows("SELECT count(*) FROM agentctx.records")[0][0] == 0  # a dry run writes nothing
    text = runner.invoke(_cli(), ["--project", str(repo), "remote", "sync"], env=env)
    assert text.exit_code == 0 and "pushed 2" in text.output
    status = runner.invoke(_cli(), ["--project", str(repo), "remote", "status"], env=env)
    assert "ok at" in status.output and "widgets" in status.output
    # A server that cannot be reached: one line, exit 1, retried later.
    assert runner.invoke(_cli(), ["remote", "add", "down", f"postgresql://{role}@127.0.0.1:{postgres.free_port()}/x"],
                         env=env).exit_code == 0
    down = runner.invoke(_cli(), ["--project", str(repo), "remote", "sync", "down"], env=env)
    assert down.exit_code == 1 and down.output.startswith("down: offline:") and len(down.output.splitlines()) == 1


def test_provenance_is_set_by_the_server(team, tmp_path):
    crew = team.team("crew")
    alice_role, bob_role = team.member("alice", crew), team.member("bob", crew)
    alice = Client(tmp_path / "alice", team.url(alice_role))
    rec = alice.add("Release on Tuesdays")
    alice.sync()
    with client.connect(team.url(bob_role)) as conn:  # Bob writes as himself, claiming to be someone else
        conn.execute("UPDATE agentctx.records SET title = 'Release on Fridays', author = 'nobody', "
                     "updated_by = 'nobody' WHERE id = %s", (rec["id"],))
        conn.execute("INSERT INTO agentctx.changes (seq, team, project_id, record_id, op, author) "
                     "VALUES (1, %s, %s, %s, 'upsert', 'nobody')", (crew, alice.proj.id, rec["id"]))
    assert team.rows("SELECT author, updated_by FROM agentctx.records")[0] == (alice_role, bob_role)
    assert {r[0] for r in team.rows("SELECT author FROM agentctx.changes")} == {alice_role, bob_role}
    assert team.rows("SELECT count(*) FROM agentctx.changes WHERE seq = 1")[0][0] == 1  # Alice's, not a forged one


def test_a_sync_cut_short_by_the_time_box_resumes(team, tmp_path, monkeypatch):
    import time

    monkeypatch.setattr(engine, "PUSH_BATCH", 100)
    monkeypatch.setattr(engine, "PULL_PAGE", 100)
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    bob = Client(tmp_path / "bob", team.url(team.member("bob", crew)))
    for i in range(350):
        alice.add(f"Batch decision {i}")
    first = engine.sync_remote(alice.conn, "team", deadline=time.monotonic())  # the pass's time is up already
    assert first["status"] == "ok" and not first["complete"] and first["pushed"] == 100
    rounds = 1
    while team.rows("SELECT count(*) FROM agentctx.records")[0][0] < 350:
        engine.sync_remote(alice.conn, "team", deadline=time.monotonic())
        rounds += 1
    assert rounds == 4
    pulled = engine.sync_remote(bob.conn, "team", deadline=time.monotonic())
    assert pulled["pulled"] == 100 and store.get(bob.conn, "team")["cursor"] > 0
    assert bob.sync()["pulled"] == 250
    assert alice.state() == bob.state()


# -- trust: nothing written outside its project, no squatting, nothing told about other teams (issue 22)

OTHER_ORIGIN = "git@github.com:acme/private-notes.git"


def _admin_run(team: Team, sql: str) -> None:
    with team.pg.admin(team.db) as conn:
        conn.execute(sql)


def _member_conn(team: Team, role: str):
    return client.connect(team.url(role))


def _plant(conn, team_role: str, project_id: str, record_id: str, title: str) -> None:
    """A row written straight into the server by a member (what a hostile teammate can do with psql)."""
    conn.execute("INSERT INTO agentctx.records (team, id, project_id, type, title, confidence, source, valid_from, "
                 "recorded_at) VALUES (%s, %s, %s, 'decision', %s, 'explicit', 'cli', now(), now())",
                 (team_role, record_id, project_id, title))
    seq = conn.execute("INSERT INTO agentctx.changes (team, project_id, record_id, op) VALUES (%s, %s, %s, 'upsert') "
                       "RETURNING seq", (team_role, project_id, record_id)).fetchone()[0]
    conn.execute("UPDATE agentctx.records SET seq = %s WHERE team = %s AND id = %s AND project_id = %s",
                 (seq, team_role, record_id, project_id))


def test_a_pull_never_overwrites_a_record_of_another_project_or_an_unshared_one(team, tmp_path, home):
    crew = team.team("crew")
    alice_role, bob_role = team.member("alice", crew), team.member("bob", crew)
    alice = Client(tmp_path / "alice", team.url(alice_role))
    bob = Client(tmp_path / "bob", team.url(bob_role))
    # Alice's private project on the same machine: never shared.
    private = project.detect(str(make_repo(tmp_path / "alice" / "notes", OTHER_ORIGIN)))
    projects.register(alice.conn, private)
    mine = records.add(alice.conn, private.id, type="decision", title="My private salary negotiation notes")
    alice.add("Shared: the API is REST")
    alice.sync()
    bob.sync()
    with _member_conn(team, bob_role) as conn:
        # 1. Into the shared project, carrying the private record's id.
        _plant(conn, crew, alice.proj.id, mine["id"], "HIJACKED by a teammate")
        # 2. Into the private project itself, created on the server by the teammate who knows its id.
        conn.execute("INSERT INTO agentctx.projects (id, name, team) VALUES (%s, 'notes', %s)", (private.id, crew))
        _plant(conn, crew, private.id, mine["id"], "HIJACKED again")
        _plant(conn, crew, private.id, "01JZZZZZZZZZZZZZZZZZZZZZZ1", "Planted into the unshared project")
    report = alice.sync()
    assert report["refused"] == 3, report
    assert report["refused_why"] == {"id of another project": 1, "project not shared": 2}
    kept = records.get(alice.conn, mine["id"], private.id)
    assert kept["title"] == "My private salary negotiation notes"
    assert records.get(alice.conn, "01JZZZZZZZZZZZZZZZZZZZZZZ1", private.id) is None
    assert "refused" in store.get(alice.conn, "team")["status"]
    log = (home / "logs" / "agentctx.log").read_text()
    assert f"record {mine['id']} for project {alice.proj.id}" in log and f"belongs to project {private.id}" in log
    assert alice.sync()["refused"] == 0, "reported once; the cursor moved past it"
    # A purge of that id relayed through the shared project does not reach the private record either.
    with _member_conn(team, bob_role) as conn:
        conn.execute("INSERT INTO agentctx.changes (team, project_id, record_id, op) VALUES (%s, %s, %s, 'purge')",
                     (crew, alice.proj.id, mine["id"]))
    assert alice.sync()["refused"] == 1
    assert records.get(alice.conn, mine["id"], private.id) is not None


def test_another_teams_row_never_blocks_my_push_and_tells_nothing(team, tmp_path):
    import psycopg

    red, blue = team.team("red"), team.team("blue")
    alice_role, mallory_role = team.member("alice", red), team.member("mallory", blue)
    alice = Client(tmp_path / "alice", team.url(alice_role))
    mallory = Client(tmp_path / "mallory", team.url(mallory_role), origin=OTHER_ORIGIN)
    mallory.add("Blue's own decision")
    mallory.sync()
    waiting = alice.add("Red's decision not pushed yet")
    # Mallory squats the id in her own project before Alice pushes it (ids are ULIDs: guessable by time).
    with _member_conn(team, mallory_role) as conn:
        _plant(conn, blue, mallory.proj.id, waiting["id"], "squatted")
    first = alice.sync()
    assert first["pushed"] == 1 and first["rejected"] == {}
    assert {r[0] for r in team.rows("SELECT project_id FROM agentctx.records WHERE id = %s", waiting["id"])} == \
        {alice.proj.id, mallory.proj.id}
    mallory.sync()  # she gets her own planted row, nothing of red's
    assert mallory.current_titles() == {"Blue's own decision", "squatted"}
    with _member_conn(team, mallory_role) as conn:
        # Writing into red's project fails the same way whether the id exists there or not.
        errors = []
        for rid in (waiting["id"], "01JZZZZZZZZZZZZZZZZZZZZZZ2"):
            with pytest.raises(psycopg.Error) as caught:
                _plant(conn, red, alice.proj.id, rid, "probe")
            errors.append((type(caught.value), str(caught.value).replace(rid, "ID")))
        assert errors[0] == errors[1] and errors[0][0] is psycopg.errors.InsufficientPrivilege
        # An ON CONFLICT probe in her own project says nothing about red's ids.
        assert conn.execute("INSERT INTO agentctx.records (team, id, project_id, type, title, confidence, source, "
                            "valid_from, recorded_at) VALUES (%s, %s, %s, 'decision', 'p', 'explicit', 'cli', now(), "
                            "now()) ON CONFLICT DO NOTHING",
                            (blue, "01JZZZZZZZZZZZZZZZZZZZZZZ3", mallory.proj.id)).rowcount == 1
        # No counts of other teams' rows or changes: the sequences and the statistics views are closed.
        red_seq = team.rows("SELECT agentctx.team_sequence(%s)::text", red)[0][0]
        for sql in (f"SELECT last_value FROM {red_seq}", f"SELECT agentctx.next_change('{red}')",
                    "SELECT n_live_tup FROM pg_stat_user_tables", "SELECT * FROM pg_statio_user_tables",
                    "SELECT last_value FROM pg_sequences"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
    _admin_run(team, "ANALYZE agentctx.records")
    with _member_conn(team, mallory_role) as conn:  # pg_stats hides tables under row-level security
        assert conn.execute("SELECT count(*) FROM pg_stats WHERE schemaname = 'agentctx' "
                            "AND tablename = 'records'").fetchone()[0] == 0


def test_an_unmergeable_record_is_reported_once_and_the_rest_syncs(team, tmp_path, home):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    # The server's admin refuses one kind of title (a rule of theirs the client cannot know).
    _admin_run(team, "ALTER TABLE agentctx.records ADD CONSTRAINT no_drafts CHECK (title NOT LIKE 'DRAFT%')")
    alice.add("First decision")
    bad = alice.add("DRAFT: not for the server")
    alice.add("Third decision")
    report = alice.sync()
    assert report["status"] == "ok" and report["pushed"] == 2 and list(report["rejected"]) == [bad["id"]]
    assert "refused by the server" in store.get(alice.conn, "team")["status"]
    assert alice.sync()["rejected"] == {}, "reported once"
    log = (home / "logs" / "agentctx.log").read_text()
    assert log.count(f"record {bad['id']} of project {alice.proj.id} was refused by the server") == 1


def test_import_and_the_team_file_refuse_an_id_of_another_project(home, tmp_path):
    from agentctx.sharing import teamsync, transfer

    conn = db.connect()
    private = project.detect(str(make_repo(tmp_path / "notes", OTHER_ORIGIN)))
    shared = project.detect(str(make_repo(tmp_path / "widgets", ORIGIN)))
    for p in (private, shared):
        projects.register(conn, p)
    mine = records.add(conn, private.id, type="decision", title="Private: the office door code")
    line = json.dumps({"id": mine["id"], "type": "decision", "title": "HIJACKED via import"})
    report = transfer.import_jsonl(conn, shared.id, [line, json.dumps({"type": "decision", "title": "Fine one"})])
    assert report.refused == 1 and report.added == 1
    assert records.get(conn, mine["id"], private.id)["title"] == "Private: the office door code"
    # The team file of the shared repository carries the private id.
    export = records.add(conn, shared.id, type="decision", title="Shared decision for the file")
    path = Path(teamsync.export(conn, shared, create=True))
    path.write_text(path.read_text().replace(export["id"], mine["id"]).replace("Shared decision for the file",
                                                                              "HIJACKED via the team file"))
    out = teamsync.import_changes(conn, shared, force=True)
    assert out["refused"] == 1
    assert records.get(conn, mine["id"], private.id)["title"] == "Private: the office door code"
    log = (home / "logs" / "agentctx.log").read_text()
    assert log.count(f"exists here in project {private.id}; refused for project {shared.id}") == 2
    conn.close()


def test_admin_scrub_removes_purged_text_from_the_table_files(team, pg, tmp_path):
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    leaked = alice.add("Purge me: zebracornflakes hunter-token")
    alice.sync()
    _admin_run(team, "CHECKPOINT")

    def heap() -> bytes:
        rel = team.rows("SELECT pg_relation_filepath('agentctx.records')")[0][0]
        return Path(pg.data, rel).read_bytes()

    assert b"zebracornflakes" in heap()
    with db.transaction(alice.conn):
        store.queue_purge(alice.conn, leaked["id"], alice.proj.id)
    alice.sync()
    _admin_run(team, "CHECKPOINT")
    assert b"zebracornflakes" in heap(), "DELETE leaves the text in the table file"
    result = CliRunner().invoke(_cli(), ["remote", "admin", "scrub", team.pg.dsn(team.db, postgres.ADMIN), "--json"],
                                env={"AGENTCTX_HOME": str(tmp_path / "admin"), "PGPASSWORD": pg.password,
                                     "PGSSLMODE": "disable"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["vacuumed"][0] == "records"
    assert b"zebracornflakes" not in heap()


def test_a_row_with_invalid_utf8_never_blocks_a_push(team, tmp_path):
    """A row another tool wrote with bytes that are not UTF-8 goes out with U+FFFD; the rest is pushed too."""
    crew = team.team("crew")
    alice = Client(tmp_path / "alice", team.url(team.member("alice", crew)))
    good = alice.add("Use PostgreSQL 16 for the shared store")
    broken = alice.add("Broken title")
    with db.transaction(alice.conn):
        alice.conn.execute("UPDATE records SET title = CAST(X'4361666520C3A9FF20626164' AS TEXT) WHERE id = ?",
                           (broken["id"],))
    report = alice.sync()
    assert report["status"] == "ok" and report["pushed"] == 2
    titles = {r[0]: r[1] for r in team.rows("SELECT id, title FROM agentctx.records")}
    assert titles[good["id"]] == "Use PostgreSQL 16 for the shared store"
    assert titles[broken["id"]] == "Cafe \u00e9\ufffd bad"
