"""No fact left wrong: a superseding record states the new fact (CLI, MCP, dashboard) and nothing injected
shows the old one as current; exact restatements reinforce instead of duplicating; ``ctx_search`` takes any
text; ``get`` / ``ctx_get`` list every predecessor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx import project
from agentctx.injection import digest, turn
from agentctx.store import db, projects, records
from agentctx.surfaces.mcp_tools import Service
from tests.support.cli import agentctx
from tests.support.ui_server import Server
from tests.surfaces.test_ui import request, token_of

OLD_TITLE = "API uses REST over HTTP/JSON"


def _old(conn, proj) -> dict:
    projects.register(conn, proj)
    return records.add(conn, proj.id, type="decision", title=OLD_TITLE, body="Every service exposes REST endpoints.")


def _nothing_injected_says_the_old_fact(conn, proj, new_title: str) -> None:
    dig = digest.build(conn, proj)
    assert new_title in dig.text and OLD_TITLE not in dig.text
    text, _, _ = turn.select(conn, proj.id, "fresh-session", "how does the API talk to other services, REST?")
    assert OLD_TITLE not in text


def test_title_from_body_is_the_first_sentence():
    assert records.title_from_body("API moved to gRPC") == "API moved to gRPC"
    assert records.title_from_body("API moved to gRPC. REST stays for the public edge.") == "API moved to gRPC"
    assert records.title_from_body("\n\n  Use uv, not pip\nbecause it is faster") == "Use uv, not pip"
    long = "word " * 80
    derived = records.title_from_body(long)
    assert len(derived) <= 161 and derived.endswith("…") and " wor…" not in derived


def test_cli_supersede_without_title_states_the_new_fact(home: Path, repo: Path):
    conn = db.connect()
    proj = project.detect(str(repo))
    old = _old(conn, proj)
    r = agentctx(home, "--project", str(repo), "supersede", old["id"], "--body", "API moved to gRPC", "--why", "latency")
    assert r.returncode == 0, r.stderr
    assert "API moved to gRPC" in r.stdout and "title from the body" in r.stdout
    new = records.get(conn, records.resolve(conn, old["id"], proj.id)["superseded_by"], proj.id)
    assert new["title"] == "API moved to gRPC" and "Why it changed: latency" in new["body"]
    shown = agentctx(home, "--project", str(repo), "digest").stdout
    assert "API moved to gRPC" in shown and OLD_TITLE not in shown
    _nothing_injected_says_the_old_fact(conn, proj, "API moved to gRPC")
    conn.close()


def test_mcp_supersede_without_title_states_the_new_fact(home: Path, repo: Path):
    conn = db.connect()
    proj = project.detect(str(repo))
    old = _old(conn, proj)
    service = Service(str(repo))
    try:
        out = service.supersede(old["id"], "API moved to gRPC with protobuf contracts.", "latency")
    finally:
        service.close()
    assert "API moved to gRPC with protobuf contracts" in out and "title from new_body" in out
    _nothing_injected_says_the_old_fact(conn, proj, "API moved to gRPC with protobuf contracts")
    conn.close()


def test_dashboard_supersede_without_title_states_the_new_fact(home: Path, repo: Path, tmp_path: Path):
    conn = db.connect()
    proj = project.detect(str(repo))
    old = _old(conn, proj)
    srv = Server(tmp_path, project_id=proj.id)
    try:
        status, rec, _ = request(srv, "POST", f"/api/records/{old['id']}/supersede?project={proj.id}",
                                 {"title": "", "body": "API moved to gRPC", "rationale": "latency"},
                                 {"X-Agentctx-Token": token_of(srv)})
    finally:
        srv.stop()
    assert status == 200 and rec["title"] == "API moved to gRPC", rec
    _nothing_injected_says_the_old_fact(conn, proj, "API moved to gRPC")
    conn.close()


def test_supersede_needs_something_to_say(conn, proj):
    old = _old(conn, proj)
    with pytest.raises(records.RecordError, match="what is true now"):
        records.supersede(conn, proj.id, old["id"], body="  ", title=None)


# -- exact restatements


def test_cli_restatement_reinforces_instead_of_duplicating(home: Path, repo: Path):
    first = agentctx(home, "--project", str(repo), "record", "--type", "decision", "--title",
                     "Use Postgres for the ledger", "--body", "Strong consistency.", "--json")
    assert first.returncode == 0, first.stderr
    again = agentctx(home, "--project", str(repo), "record", "--type", "decision", "--title",
                     "use  postgres for the ledger.", "--body", "strong consistency")
    assert again.returncode == 0, again.stderr
    rid = json.loads(first.stdout)["id"]
    assert again.stdout.startswith(f"already recorded {rid}") and "stated 2 times" in again.stdout
    conn = db.connect()
    proj = project.detect(str(repo))
    current = records.current(conn, proj.id, types=["decision"])
    assert [r["id"] for r in current] == [rid] and current[0]["reinforce_count"] == 1
    conn.close()


def test_mcp_restatement_reinforces_instead_of_duplicating(home: Path, repo: Path):
    service = Service(str(repo))
    try:
        first = service.record("convention", "Money is integer cents", "Never floats.")
        again = service.record("convention", "Money is integer cents", "Never floats.")
    finally:
        service.close()
    assert first.startswith("Recorded ") and again.startswith("Already recorded: ") and "stated 2 times" in again
    conn = db.connect()
    assert len(records.current(conn, project.detect(str(repo)).id, types=["convention"])) == 1
    conn.close()


@pytest.mark.parametrize("change", ["body", "type", "scope", "project", "superseded"])
def test_what_is_not_a_restatement_is_stored(conn, proj, tmp_path, change):
    first = records.add(conn, proj.id, type="decision", title="Deploy on Fridays", body="Only before noon.")
    fields = dict(type="decision", title="Deploy on Fridays", body="Only before noon.", scope="project")
    pid = proj.id
    if change == "body":
        fields["body"] = "Only after noon."
    elif change == "type":
        fields["type"] = "convention"
    elif change == "scope":
        fields["scope"] = "global"
    elif change == "project":
        pid = "another-project"
    else:
        records.supersede(conn, proj.id, first["id"], body="We never deploy on Fridays.")
    second = records.add(conn, pid, **fields)
    assert second["id"] != first["id"] and not second.get("reinforced")


# -- ctx_search with braces, every predecessor


def test_ctx_search_takes_braces_and_format_fields(home: Path, tmp_path: Path):
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "{0}-weird-{name}", remote=None)
    conn = db.connect()
    proj = project.detect(str(repo))
    records.add(conn, proj.id, type="decision", title="GET /statements/{id} returns one statement",
                body="Paginated with {cursor}.")
    conn.close()
    service = Service(str(repo))
    try:
        for query in ("GET /statements/{id}", "{0} statements {n} {}", "{{cursor}}", "statements {id!r:>10}"):
            out = service.search(query)
            assert "statements" in out.lower() or out.startswith("No current records"), out
        hit = service.search("GET /statements/{id}")
    finally:
        service.close()
    assert hit.startswith("1 current records for 'GET /statements/{id}'") and "{0}-weird-{name}" in hit


def test_get_lists_every_predecessor(home: Path, repo: Path):
    conn = db.connect()
    proj = project.detect(str(repo))
    projects.register(conn, proj)
    a = records.add(conn, proj.id, type="convention", title="Lint with flake8", key="profile.lint_command")
    b = records.add(conn, proj.id, type="convention", title="Format with black")
    merged = records.add(conn, proj.id, type="convention", title="Lint and format with ruff",
                         key="profile.lint_command", supersedes=b["id"])
    conn.close()
    r = agentctx(home, "--project", str(repo), "get", merged["id"], "--json")
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)[0]["supersedes"]) == {a["id"], b["id"]}
    text = agentctx(home, "--project", str(repo), "get", merged["id"]).stdout
    assert "Lint with flake8" in text and "Format with black" in text
    service = Service(str(repo))
    try:
        full = service.get([merged["id"]])
    finally:
        service.close()
    assert a["id"] in full and b["id"] in full
