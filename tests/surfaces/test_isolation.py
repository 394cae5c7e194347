"""A project sees only its own records (and global preferences), proven at every surface: every CLI command
that takes an id or lists records, every MCP tool and every dashboard route, run from project B against
project A's records (full ids and prefixes). Refused writes change nothing of A's."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentctx import paths, project
from agentctx.store import db, graph, projects, records
from agentctx.surfaces.cli import cli
from agentctx.surfaces.mcp_tools import Service, ToolInputError
from tests.conftest import make_repo

SECRET_WORD = "Alphaonly"  # a word only project A's records contain


@pytest.fixture
def world(home: Path, tmp_path: Path) -> dict:
    repo_a = make_repo(tmp_path / "alpha", "git@github.com:acme/alpha.git")
    repo_b = make_repo(tmp_path / "beta", "git@github.com:acme/beta.git")
    (repo_a / "CLAUDE.md").write_text("# Alpha\n")
    (repo_b / "CLAUDE.md").write_text("# Beta\n")
    conn = db.connect()
    a, b = project.detect(str(repo_a)), project.detect(str(repo_b))
    for p in (a, b):
        projects.register(conn, p)
    ids = {
        "decision": records.add(conn, a.id, type="decision", title=f"{SECRET_WORD} services use Postgres",
                                body=f"{SECRET_WORD} ledger needs transactions.")["id"],
        "convention": records.add(conn, a.id, type="convention", title=f"{SECRET_WORD} migrations are reviewed",
                                  body="Two approvals.")["id"],
        "preference": records.add(conn, a.id, type="preference", title=f"{SECRET_WORD} prefers tabs",
                                  body="In this project only.")["id"],
        "handover": records.add(conn, a.id, type="handover", title=f"{SECRET_WORD} handover: finish the ledger",
                                body="Next: tests.")["id"],
    }
    graph.link(conn, ids["decision"], graph.entity(conn, a.id, "file", "src/ledger.py"))
    records.add(conn, b.id, type="decision", title="Beta services use Mongo", body="Documents.")
    conn.close()
    return {"a": a, "b": b, "repo_a": repo_a, "repo_b": repo_b, "ids": ids}


def snapshot_a(world) -> list[tuple]:
    conn = sqlite3.connect(paths.db_path())
    try:
        return conn.execute("SELECT * FROM records WHERE project_id = ? ORDER BY seq", (world["a"].id,)).fetchall()
    finally:
        conn.close()


def refs(world, name: str) -> list[str]:
    rid = world["ids"][name]
    return [rid, rid[:20].lower()]  # the full id, and a prefix no record of B shares


def run_b(world, *args: str, input: str | None = None):
    return CliRunner().invoke(cli, ["--project", str(world["repo_b"]), *args], input=input, catch_exceptions=False)


# -- the command line


BY_ID = {
    "get": lambda ref: ["get", ref],
    "edit": lambda ref: ["edit", ref, "--title", "hijacked"],
    "pin": lambda ref: ["pin", ref],
    "unpin": lambda ref: ["pin", ref, "--off"],
    "supersede": lambda ref: ["supersede", ref, "--body", "hijacked"],
    "history": lambda ref: ["history", ref],
    "record --supersedes": lambda ref: ["record", "--type", "decision", "--title", "hijacked", "--supersedes", ref],
    "forget": lambda ref: ["forget", ref],
    "purge --dry-run": lambda ref: ["purge", ref, "--dry-run"],
    "purge --yes": lambda ref: ["purge", ref, "--yes"],
    "profile edit": lambda ref: ["profile", "edit", ref, "--rule", "hijacked"],
    "profile clear": lambda ref: ["profile", "clear", ref],
}


@pytest.mark.parametrize("command", sorted(BY_ID))
@pytest.mark.parametrize("name", ["decision", "preference"])
def test_cli_commands_by_id_refuse_another_projects_records(world, command, name):
    before = snapshot_a(world)
    for ref in refs(world, name):
        for as_json in ([], ["--json"]):
            result = run_b(world, *BY_ID[command](ref), *as_json)
            assert result.exit_code != 0, (command, ref, result.stdout)
            assert result.stderr.startswith("Error: ") and SECRET_WORD not in result.stdout + result.stderr
    assert snapshot_a(world) == before


LISTINGS = [
    ["list"], ["list", "--json"], ["search", f"{SECRET_WORD} Postgres"], ["search", f"{SECRET_WORD}", "--all", "--json"],
    ["history"], ["history", "--json"], ["export"], ["export", "--json"], ["status"], ["status", "--json"],
    ["digest"], ["digest", "--json"], ["inject", f"why {SECRET_WORD} Postgres?"], ["handover"], ["handover", "--json"],
    ["profile", "show"], ["profile", "show", "--json"], ["log", "--json"], ["sync", "--json"],
]


@pytest.mark.parametrize("args", LISTINGS, ids=lambda a: " ".join(a))
def test_cli_listings_show_only_this_projects_records(world, args):
    result = run_b(world, *args)
    assert result.exit_code == 0, result.stderr
    assert SECRET_WORD not in result.stdout, result.stdout[:500]


def test_cli_team_export_writes_only_this_projects_records(world):
    assert run_b(world, "team", "export").exit_code == 0
    assert SECRET_WORD not in (world["repo_b"] / ".agentctx" / "context.md").read_text()


def test_cli_from_project_a_still_sees_its_own(world):
    result = CliRunner().invoke(cli, ["--project", str(world["repo_a"]), "get", refs(world, "decision")[1], "--json"])
    assert result.exit_code == 0 and SECRET_WORD in result.stdout


# -- the MCP tools


@pytest.fixture
def service_b(world):
    service = Service(str(world["repo_b"]))
    yield service
    service.close()


@pytest.mark.parametrize("name", ["decision", "preference", "handover"])
def test_mcp_tools_by_id_refuse_another_projects_records(world, service_b, name):
    before = snapshot_a(world)
    for ref in refs(world, name):
        calls = [(service_b.get, ([ref],), {}), (service_b.supersede, (ref, "hijacked", "because"), {}),
                 (service_b.record, ("decision", "hijacked", ""), {"supersedes": ref})]
        for tool, args, kwargs in calls:
            with pytest.raises(ToolInputError) as refused:
                tool(*args, **kwargs)
            assert SECRET_WORD not in str(refused.value)
    assert snapshot_a(world) == before


def test_mcp_reads_show_only_this_projects_records(world, service_b):
    outputs = [
        service_b.search(f"{SECRET_WORD} Postgres services"),
        service_b.search(f"{SECRET_WORD} ledger", scope="all"),
        service_b.related("src/ledger.py"),
        service_b.project_profile(),
        service_b.sync_claudemd(),
    ]
    for out in outputs:  # (a search echoes its query: look for A's ids and titles, not the word)
        assert not any(rid in out for rid in world["ids"].values()), out[:300]
        assert not any(t in out for t in ("use Postgres", "migrations are reviewed", "prefers tabs", "finish the")), out
    assert "Beta services use Mongo" in service_b.search("services Mongo")


# -- the dashboard routes


@pytest.fixture
def server_b(world, tmp_path):
    from tests.support.ui_server import Server

    srv = Server(tmp_path, project_id=world["b"].id)
    yield srv
    srv.stop()


def test_dashboard_routes_refuse_and_hide_another_projects_records(world, server_b):
    from tests.surfaces.test_ui import request, token_of

    b = world["b"].id
    token = {"X-Agentctx-Token": token_of(server_b)}
    before = snapshot_a(world)
    for name in ("decision", "preference", "handover"):
        for ref in refs(world, name):
            status, body, _ = request(server_b, "GET", f"/api/records/{ref}?project={b}")
            assert status == 400 and SECRET_WORD not in json.dumps(body)
            for action, payload in (("edit", {"title": "hijacked"}), ("pin", {"on": True}),
                                    ("supersede", {"body": "hijacked"}), ("forget", {"confirm": True}),
                                    ("purge", {"confirm": True})):
                status, body, _ = request(server_b, "POST", f"/api/records/{ref}/{action}?project={b}", payload, token)
                assert status == 400, (action, ref, status, body)
                assert SECRET_WORD not in json.dumps(body)
    assert snapshot_a(world) == before
    for path in (f"/api/records?project={b}", f"/api/records?project={b}&q={SECRET_WORD}",
                 f"/api/records?project={b}&status=all", f"/api/graph?project={b}", f"/api/profile?project={b}",
                 f"/api/sessions?project={b}", f"/api/drift?project={b}"):
        status, body, _ = request(server_b, "GET", path)
        assert status == 200 and SECRET_WORD not in json.dumps(body), path
    status, body, _ = request(server_b, "POST", f"/api/sync/proposal?project={b}", {}, token)
    assert status == 200 and SECRET_WORD not in json.dumps(body)
    status, body, _ = request(server_b, "GET", f"/api/records?project={b}")
    assert [r["title"] for r in body] == ["Beta services use Mongo"]
