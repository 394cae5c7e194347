"""A project sees only its own records (and global ones): from project B, A's ids and id prefixes are
"no record" on every surface that takes an id (CLI, MCP tools, dashboard), and nothing of A's changes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentctx import paths, project
from agentctx.store import graph, records
from agentctx.surfaces.cli import cli
from agentctx.surfaces.mcp_tools import Service, ToolInputError
from agentctx.surfaces.ui import data
from tests.conftest import make_repo


@pytest.fixture
def alpha(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "alpha", "git@github.com:acme/alpha.git")


@pytest.fixture
def beta(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "beta", "git@github.com:acme/beta.git")


def run(folder: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(folder), *args], catch_exceptions=False)


def snapshot() -> list:
    """Every record and edge as stored (access counters included)."""
    conn = sqlite3.connect(paths.db_path())
    try:
        return [sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {table}")) for table in ("records", "edges")]
    finally:
        conn.close()


def test_cli_commands_from_another_project_say_no_record(home, alpha, beta):
    theirs = json.loads(run(alpha, "record", "--type", "decision", "--title", "Alpha streams payments through Kafka",
                            "--json").stdout)
    shared = json.loads(run(alpha, "record", "--type", "preference", "--title", "Prefer small pure functions",
                            "--scope", "global", "--json").stdout)
    mine = json.loads(run(beta, "record", "--type", "decision", "--title", "Beta uses RabbitMQ", "--json").stdout)
    rid, prefix = theirs["id"], theirs["id"][:14].lower()
    before = snapshot()
    for args in (["get", rid], ["get", prefix], ["edit", rid, "--title", "Beta rewrote it"],
                 ["edit", prefix, "--body", "changed"], ["pin", rid], ["pin", prefix, "--off"], ["history", rid],
                 ["supersede", rid, "--body", "Beta says RabbitMQ", "--why", "takeover"],
                 ["record", "--type", "decision", "--title", "Beta's", "--supersedes", rid],
                 ["get", "--json", mine["id"], rid]):
        result = run(beta, *args)
        ref = (rid if prefix not in args else prefix).upper()
        assert result.exit_code == 1, (args, result.stdout)
        assert result.stderr == f"Error: no record {ref}\n", args
    assert snapshot() == before, "nothing of project A changed"
    # A's own commands reach it, and a global record is every project's.
    assert json.loads(run(alpha, "get", "--json", prefix).stdout)[0]["id"] == rid
    assert json.loads(run(alpha, "pin", rid, "--json").stdout)["pinned"] == 1
    assert json.loads(run(beta, "get", "--json", shared["id"]).stdout)[0]["title"] == "Prefer small pure functions"
    assert run(beta, "history", shared["id"]).exit_code == 0


def test_mcp_tools_from_another_project_say_no_record(home, conn, alpha, beta):
    pa = project.detect(str(alpha))
    theirs = records.add(conn, pa.id, type="decision", title="Payments go through Kafka",
                         body="Ordered per account.")
    graph.link(conn, theirs["id"], graph.entity(conn, pa.id, "file", "src/payments.py"))
    rid = theirs["id"]
    svc = Service(str(beta))
    try:
        before = snapshot()
        for ref in (rid, rid[:14]):
            with pytest.raises(ToolInputError, match=f"no record {ref} in this project"):
                svc.get([ref])
        with pytest.raises(ToolInputError, match=f"^no record {rid}$"):
            svc.supersede(rid, "RabbitMQ now", "takeover")
        with pytest.raises(ToolInputError, match=f"^no record {rid}$"):
            svc.record("decision", "Beta's broker", "RabbitMQ", supersedes=rid)
        assert svc.related("src/payments.py").startswith("No current records are linked to src/payments.py")
        assert rid not in svc.search("payments kafka")
        assert snapshot() == before, "nothing of project A changed (not even its access count)"
    finally:
        svc.close()
    own = Service(str(alpha))
    try:
        assert rid in own.get([rid[:14]]) and rid in own.related("src/payments.py")
    finally:
        own.close()


def test_dashboard_data_from_another_project_says_no_record(conn, alpha, beta):
    pa, pb = project.detect(str(alpha)), project.detect(str(beta))
    theirs = records.add(conn, pa.id, type="decision", title="Payments go through Kafka")["id"]
    before = snapshot()
    calls = [
        lambda: data.record_detail(conn, theirs, pb.id),
        lambda: data.edit(conn, pb.id, theirs, {"title": "Beta rewrote it"}),
        lambda: data.pin(conn, pb.id, theirs, True),
        lambda: data.supersede(conn, pb.id, theirs, {"body": "RabbitMQ", "rationale": "takeover"}),
    ]
    for call in calls:
        with pytest.raises(records.RecordError, match=f"^no record {theirs}$"):
            call()
    assert snapshot() == before
    assert data.record_detail(conn, theirs, pa.id)["id"] == theirs
    assert data.record_detail(conn, theirs, None)["id"] == theirs  # no project: the store-wide view, explicitly


def test_dashboard_routes_from_another_project_say_no_record(server, store, proj, conn):
    from tests.surfaces.test_ui import request, token_of

    theirs = records.add(conn, "0ther0project000", type="decision", title="Another team's broker")["id"]
    tok = {"X-Agentctx-Token": token_of(server)}
    q = f"project={proj.id}"
    before = snapshot()
    status, err, _ = request(server, "GET", f"/api/records/{theirs}?{q}")
    assert status == 400 and err["error"] == f"no record {theirs}"
    for path, body in (("edit", {"title": "rewritten"}), ("pin", {"on": True}),
                       ("supersede", {"body": "ours now", "rationale": "takeover"})):
        status, err, _ = request(server, "POST", f"/api/records/{theirs}/{path}?{q}", body, tok)
        assert status == 400 and err["error"] == f"no record {theirs}", path
    assert snapshot() == before
    status, mine, _ = request(server, "GET", f"/api/records/{store['kafka']}?{q}")
    assert status == 200 and mine["id"] == store["kafka"]
