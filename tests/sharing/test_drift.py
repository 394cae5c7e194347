"""CLAUDE.md drift (ADR-013): fixture CLAUDE.md files, `agentctx sync`, the SessionStart note and the MCP tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentctx import project
from agentctx.consolidation import worker
from agentctx.injection import digest
from agentctx.sharing import drift
from agentctx.store import db, records
from agentctx.surfaces.cli import cli
from tests.conftest import make_repo
from tests.support.hooks import context_of, hook_env, run_hook


@pytest.fixture
def facts(conn, proj):
    rest = records.add(conn, proj.id, type="decision", title="Services talk over REST", body="JSON over HTTP.")
    grpc = records.supersede(conn, proj.id, rest["id"], title="Services talk over gRPC",
                             body="Protobuf contracts between payments and ledger.", rationale="speed")
    cents = records.add(conn, proj.id, type="convention", title="Money is stored as integer cents",
                        body="Never floats for amounts.")
    jobs = records.add(conn, proj.id, type="decision", title="Background jobs run on Dramatiq")
    records.add(conn, proj.id, type="decision", title="Maybe switch the cache to Valkey", confidence="inferred")
    records.add(conn, proj.id, type="discovery", title="Uploads over 2 GB time out at the proxy")
    return {"rest": rest, "grpc": grpc, "cents": cents, "jobs": jobs}


def kinds(found: list[dict]) -> dict[str, str]:
    return {c["record_id"]: c["kind"] for c in found}


def sync(repo: Path, *args: str, input: str | None = None):
    return CliRunner().invoke(cli, ["--project", str(repo), "sync", *args], input=input, catch_exceptions=False)


def test_missing_claudemd_makes_every_settled_decision_a_candidate(conn, proj, facts):
    found = drift.scan(conn, proj)
    # inferred decisions and discoveries are never candidates; the superseded REST record neither
    assert kinds(found) == {facts["grpc"]["id"]: "missing", facts["cents"]["id"]: "missing",
                            facts["jobs"]["id"]: "missing"}
    assert {r["record_id"] for r in drift.stored(conn, proj.id)} == set(kinds(found))
    prop = drift.proposal(conn, proj)
    assert prop["exists"] is False and "+- Money is stored as integer cents" in prop["diff"]
    assert not (Path(proj.root) / "CLAUDE.md").exists()  # a proposal writes nothing


def test_present_content_is_not_drift(conn, proj, facts, repo):
    (repo / "CLAUDE.md").write_text(
        "# Widgets\n\n## Architecture\n\n- Our services talk to each other over gRPC (protobuf).\n"
        "- Background jobs run on Dramatiq workers.\n\nMoney amounts are stored as integer cents, never floats.\n")
    assert drift.scan(conn, proj) == []
    assert drift.proposal(conn, proj)["diff"] == ""


def test_contradicted_and_superseded_content(conn, proj, facts, repo):
    (repo / "CLAUDE.md").write_text("# Widgets\n\n- Services talk over REST with JSON.\n"
                                    "- Money is stored as integer cents.\n- Background jobs run on Dramatiq.\n")
    found = drift.scan(conn, proj)
    assert kinds(found) == {facts["grpc"]["id"]: "contradicted"}
    assert "CLAUDE.md:3" in found[0]["detail"] and found[0]["score"] == 1.0
    prop = drift.proposal(conn, proj)
    assert prop["lines"][0].startswith("~~Services talk over REST with JSON.~~")
    assert "-- Services talk over REST with JSON." in prop["diff"]
    assert "+- ~~Services talk over REST with JSON.~~" in prop["diff"]
    assert "+- Services talk over gRPC: Protobuf contracts" in prop["diff"]
    # CLAUDE.md says both: the stale line is flagged alone
    (repo / "CLAUDE.md").write_text("- Services talk over REST with JSON.\n- Services talk over gRPC.\n"
                                    "- Money is stored as integer cents.\n- Background jobs run on Dramatiq.\n")
    assert kinds(drift.scan(conn, proj)) == {facts["grpc"]["id"]: "superseded_in_claudemd"}
    prop = drift.proposal(conn, proj)
    assert prop["lines"] == [f"~~Services talk over REST with JSON.~~ (CLAUDE.md:1, superseded by {facts['grpc']['id']})"]


def test_dot_claude_claudemd_counts_too(conn, proj, facts, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "CLAUDE.md").write_text("Services talk over gRPC. Money is stored as integer cents.\n\n"
                                                "Background jobs run on Dramatiq.\n")
    assert drift.scan(conn, proj) == []


@pytest.mark.parametrize("content, message", [
    (b"# big\n" + b"- a line of project notes\n" * 200_000, "4 MiB"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 10, "binary"),
    (b"\xff\xfe# utf-16?\n", "not UTF-8"),
])
def test_huge_or_binary_claudemd_is_refused_and_nothing_changes(conn, proj, facts, repo, content, message):
    drift.scan(conn, proj)
    before = drift.stored(conn, proj.id)
    (repo / "CLAUDE.md").write_bytes(content)
    with pytest.raises(drift.DriftError, match=message):
        drift.scan(conn, proj)
    assert drift.stored(conn, proj.id) == before
    result = sync(repo, "--yes")
    assert result.exit_code == 1 and message in result.stderr
    assert (repo / "CLAUDE.md").read_bytes() == content


def test_sync_applies_only_on_confirmation(conn, proj, facts, repo):
    original = "# Widgets\n\n- Services talk over REST with JSON.\n"
    (repo / "CLAUDE.md").write_text(original)
    shown = sync(repo, input="n\n")
    assert shown.exit_code == 0 and "Not applied" in shown.stdout and "--- a/CLAUDE.md" in shown.stdout
    assert (repo / "CLAUDE.md").read_text() == original
    data = json.loads(sync(repo, "--json").stdout)
    assert data["applied"] is False and len(data["candidates"]) == 3 and data["diff"]
    assert (repo / "CLAUDE.md").read_text() == original
    done = sync(repo, input="y\n")
    assert done.exit_code == 0 and "Applied" in done.stdout
    text = (repo / "CLAUDE.md").read_text()
    assert "- ~~Services talk over REST with JSON.~~" in text and drift.SECTION in text
    assert drift.scan(conn, proj) == []  # applied: no drift left
    assert "nothing to propose" in sync(repo).stdout


def test_sync_yes_applies_without_prompt(conn, proj, facts, repo):
    result = sync(repo, "--yes", "--json")
    assert json.loads(result.stdout)["applied"] is True
    assert "Background jobs run on Dramatiq" in (repo / "CLAUDE.md").read_text()


def test_note_needs_two_candidates_and_never_reads_claudemd(conn, proj, facts, repo):
    (repo / "CLAUDE.md").write_text("Services talk over gRPC. Background jobs run on Dramatiq.\n")
    drift.scan(conn, proj)
    assert len(drift.stored(conn, proj.id)) == 1
    assert drift.note(conn, proj.id) is None
    assert "CLAUDE.md" not in digest.current(conn, proj).text
    (repo / "CLAUDE.md").unlink()
    drift.scan(conn, proj)
    note = drift.note(conn, proj.id)
    assert note.startswith("3 decisions/conventions") and "agentctx sync" in note
    (repo / "CLAUDE.md").write_bytes(b"\x00" * 10)  # SessionStart reads the drift table only
    assert note in digest.current(conn, proj).text  # the cached digest was invalidated by the scan


def test_session_start_hook_mentions_drift(home, conn, proj, facts, repo):
    drift.scan(conn, proj)
    proc = run_hook("session_start", {"session_id": "s-drift", "cwd": str(repo), "source": "startup",
                                      "hook_event_name": "SessionStart"}, home, env=hook_env(home))
    assert proc.returncode == 0, proc.stderr
    text = context_of(proc)
    assert "3 decisions/conventions in the context store are not reflected in CLAUDE.md" in text
    from agentctx import budgets

    assert budgets.estimate_tokens(text) <= budgets.SESSION_START_TOKENS


def test_extraction_rescans_drift(conn, proj, repo, monkeypatch):

    transcript = repo / "t.jsonl"
    lines = [{"type": "user", "sessionId": "s1", "uuid": f"u{i}", "message": {"role": "user", "content": text}}
             for i, text in enumerate(["We decided to use Postgres for the ledger.",
                                       "From now on, always run ruff before committing."])]
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setenv("AGENTCTX_LLM", "0")
    result = worker.extract("s1", str(transcript), str(repo), conn=conn)
    assert result.written, result
    assert {c["record_id"] for c in drift.stored(conn, proj.id)} >= set(result.written)


def test_ctx_sync_claudemd_through_the_mcp_client(tmp_path):
    from tests.surfaces.test_mcp import Client, declared_server

    data, work = tmp_path / "data", make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    (work / "CLAUDE.md").write_text("# Shop\n\n- Services talk over REST with JSON.\n")
    import os

    old = os.environ.get("AGENTCTX_HOME")
    os.environ["AGENTCTX_HOME"] = str(data)
    try:
        conn = db.connect()
        proj = project.detect(str(work))
        rest = records.add(conn, proj.id, type="decision", title="Services talk over REST")
        grpc = records.supersede(conn, proj.id, rest["id"], title="Services talk over gRPC", body="protobuf",
                                 rationale="speed")
        conn.close()
    finally:
        if old is None:
            os.environ.pop("AGENTCTX_HOME", None)
        else:
            os.environ["AGENTCTX_HOME"] = old
    with open(tmp_path / "server.log", "w+") as errlog:
        client = Client(declared_server({"AGENTCTX_HOME": str(data), "CLAUDE_PROJECT_DIR": str(work)}, work), errlog)
        try:
            tool = next(t for t in client.tools() if t.name == "ctx_sync_claudemd")
            assert len(tool.description.encode()) < 2048
            text = client.text("ctx_sync_claudemd")
            assert f"~~Services talk over REST with JSON.~~ (CLAUDE.md:3, superseded by {grpc['id']})" in text
            assert "+- Services talk over gRPC: protobuf" in text and "agentctx sync --yes" in text
            assert (work / "CLAUDE.md").read_text() == "# Shop\n\n- Services talk over REST with JSON.\n"
            (work / "CLAUDE.md").write_bytes(b"x" * (drift.MAX_BYTES + 1))
            assert "4 MiB" in client.error("ctx_sync_claudemd", {})
        finally:
            client.close()
