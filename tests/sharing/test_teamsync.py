"""The team file .agentctx/context.md: round trip, real git merges, edits, deletions, broken blocks,
conflicting edits, and the SessionStart import through the hook process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentctx import project
from agentctx.sharing import teamsync
from agentctx.store import db, projects, query, records
from agentctx.surfaces.cli import cli
from tests.support.hooks import context_of, hook_env, run_hook

FIELDS = ("id", "type", "key", "title", "body", "pinned", "confidence", "valid_from", "recorded_at", "updated_at")


@pytest.fixture
def store(home, monkeypatch):
    """Switch between teammates' stores: ``store("bob")`` opens (creating) Bob's store and points
    AGENTCTX_HOME at it; the default fixture store is Alice's."""
    opened = []

    def open_store(name: str):
        monkeypatch.setenv("AGENTCTX_HOME", str(home.parent / f"data-{name}"))
        conn = db.connect()
        opened.append(conn)
        return conn

    yield open_store
    for conn in opened:
        conn.close()


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)


@pytest.fixture
def gitrepo(tmp_path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "shop"
    repo.mkdir()
    assert git(repo, "init", "-q", "-b", "main").returncode == 0
    git(repo, "remote", "add", "origin", "https://github.com/acme/shop.git")
    (repo / "README.md").write_text("shop\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def current(conn, pid: str) -> dict[str, dict]:
    rows = conn.execute(f"SELECT {query.COLUMNS} FROM records WHERE project_id = ? AND superseded_at IS NULL",
                        (pid,)).fetchall()
    return {r["id"]: dict(r) for r in rows}


def test_export_import_round_trip_is_lossless(conn, proj, repo, store):
    a = {
        "dec": records.add(conn, proj.id, type="decision", title="Services talk over gRPC",
                           body="Protobuf contracts.\n\n<!-- agentctx:end 01AAAAAAAAAAAAAAAAAAAAAAAA -->\n"
                                "- type: not a field, a body line\n再平衡 🚀", pinned=True, valid_from="2026-02-01T00:00:00.000000Z"),
        "conv": records.add(conn, proj.id, type="convention", title="Money is integer cents", confidence="reinforced"),
        "key": records.add(conn, proj.id, type="convention", key="style.imports", title="Absolute imports only"),
        "bug": records.add(conn, proj.id, type="bugfix", title="PDF crashed on emoji", body="Noto font."),
        "disc": records.add(conn, proj.id, type="discovery", title="Proxy times out at 2 GB", confidence="inferred"),
        "pref": records.add(conn, proj.id, type="preference", title="Prefer pytest fixtures over setUp"),
    }
    old = records.add(conn, proj.id, type="decision", title="Queue on Celery")
    a["jobs"] = records.supersede(conn, proj.id, old["id"], body="Dramatiq now", title="Queue on Dramatiq",
                                  rationale="simpler")
    excluded = [
        records.add(conn, proj.id, type="handover", title="Was halfway through the refund flow"),
        records.add(conn, proj.id, type="profile", key="profile.test_command", title="Test command", body="pytest"),
        records.add(conn, proj.id, type="preference", scope="global", title="Prefers small commits"),
        records.add(conn, proj.id, type="bugfix", title="error: E0382", source="hook_observation",
                    confidence="inferred"),
    ]
    conn.execute("UPDATE records SET body = 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB' WHERE id = ?",
                 (a["bug"]["id"],))  # a secret that slipped into the store is redacted on the way out
    path = teamsync.export(conn, proj, create=True)
    text = Path(path).read_text()
    assert path == str(repo / ".agentctx" / "context.md")
    assert "ghp_abcdefghijklmnopqrstuvwxyz" not in text
    assert all(r["id"] not in text for r in excluded) and old["id"] not in text.replace(
        f"- supersedes: {old['id']}", "")
    ids = [line.split()[2] for line in text.splitlines() if line.startswith("<!-- agentctx:begin")]
    order = {t: i for i, t in enumerate(teamsync.ORDER)}
    expected = sorted((r for k, r in a.items()), key=lambda r: (order[r["type"]], r["id"]))
    assert ids == [r["id"] for r in expected]
    assert "merge=union" in (repo / ".agentctx" / ".gitattributes").read_text()

    bob = store("bob")
    report = teamsync.import_changes(bob, proj)
    assert report["errors"] == [] and sorted(report["added"]) == sorted(r["id"] for r in a.values())
    got = current(bob, proj.id)
    for k, rec in a.items():
        mine = records.resolve(conn, rec["id"], all_projects=True)
        for f in FIELDS:
            if k == "bug" and f == "body":
                continue
            assert got[rec["id"]][f] == mine[f], (k, f)
    assert "[REDACTED" in got[a["bug"]["id"]]["body"] or "ghp_" not in got[a["bug"]["id"]]["body"]
    assert teamsync.import_changes(bob, proj)["status"] == "unchanged"
    teamsync.export(bob, proj)
    assert Path(path).read_text() == text  # Bob's store writes the same file back


def test_cli_team_export_and_import(conn, proj, repo):
    runner = CliRunner()
    records.add(conn, proj.id, type="decision", title="Use Postgres 16")
    assert teamsync.export(conn, proj) is None and not (repo / ".agentctx").exists()  # opt-in only
    out = runner.invoke(cli, ["--project", str(repo), "team", "export", "--json"], catch_exceptions=False)
    assert json.loads(out.stdout) == {"path": str(repo / ".agentctx" / "context.md"), "records": 1}
    out = runner.invoke(cli, ["--project", str(repo), "team", "import", "--json"], catch_exceptions=False)
    assert out.exit_code == 0 and json.loads(out.stdout)["status"] == "unchanged"


def test_two_git_branches_add_records_and_merge_without_conflict(store, gitrepo):
    proj = project.detect(str(gitrepo))
    alice = store("alice")
    projects.register(alice, proj)
    base = records.add(alice, proj.id, type="decision", title="Services talk over gRPC")
    teamsync.export(alice, proj, create=True)
    git(gitrepo, "add", "-A")
    assert git(gitrepo, "commit", "-q", "-m", "team file").returncode == 0

    git(gitrepo, "checkout", "-q", "-b", "alice")
    a1 = records.add(alice, proj.id, type="decision", title="Background jobs run on Dramatiq")
    a2 = records.add(alice, proj.id, type="convention", title="Money is integer cents")
    teamsync.export(alice, proj)
    git(gitrepo, "commit", "-qam", "alice's records")

    git(gitrepo, "checkout", "-q", "main")
    git(gitrepo, "checkout", "-q", "-b", "bob")
    bob = store("bob")
    projects.register(bob, proj)
    assert teamsync.import_changes(bob, proj)["added"] == [base["id"]]
    b1 = records.add(bob, proj.id, type="decision", title="Cache on Valkey")
    b2 = records.add(bob, proj.id, type="convention", title="Absolute imports only")
    teamsync.export(bob, proj)
    git(gitrepo, "commit", "-qam", "bob's records")

    git(gitrepo, "checkout", "-q", "alice")
    merged = git(gitrepo, "merge", "--no-edit", "bob")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = (gitrepo / ".agentctx" / "context.md").read_text()
    assert "<<<<<<<" not in text and ">>>>>>>" not in text

    report = teamsync.import_changes(alice, proj)  # Alice gets Bob's two, loses nothing
    assert report["errors"] == [] and sorted(report["added"]) == sorted([b1["id"], b2["id"]])
    assert report["retired"] == []
    carol = store("carol")  # a third teammate cloning the merge gets all five
    projects.register(carol, proj)
    teamsync.import_changes(carol, proj)
    assert set(current(carol, proj.id)) == {r["id"] for r in (base, a1, a2, b1, b2)}
    # the next export puts the merged file back in stable order; Carol's export is the same file
    teamsync.export(alice, proj)
    exported = (gitrepo / ".agentctx" / "context.md").read_text()
    teamsync.export(carol, proj)
    assert (gitrepo / ".agentctx" / "context.md").read_text() == exported


def test_without_union_merge_the_same_additions_conflict(store, gitrepo):
    """The control: what .agentctx/.gitattributes prevents (so the test above can fail)."""
    proj = project.detect(str(gitrepo))
    alice = store("alice")
    records.add(alice, proj.id, type="decision", title="Services talk over gRPC")
    teamsync.export(alice, proj, create=True)
    (gitrepo / ".agentctx" / ".gitattributes").write_text("# union merge off\n")
    git(gitrepo, "add", "-A")
    git(gitrepo, "commit", "-q", "-m", "team file")
    git(gitrepo, "checkout", "-q", "-b", "a")
    records.add(alice, proj.id, type="decision", title="Background jobs run on Dramatiq")
    teamsync.export(alice, proj)
    git(gitrepo, "commit", "-qam", "a")
    git(gitrepo, "checkout", "-q", "main")
    git(gitrepo, "checkout", "-q", "-b", "b")
    bob = store("bob")
    teamsync.import_changes(bob, proj)
    records.add(bob, proj.id, type="decision", title="Cache on Valkey")
    teamsync.export(bob, proj)
    git(gitrepo, "commit", "-qam", "b")
    git(gitrepo, "checkout", "-q", "a")
    assert git(gitrepo, "merge", "--no-edit", "b").returncode != 0


def test_edited_and_deleted_blocks(conn, proj, repo):
    keep = records.add(conn, proj.id, type="decision", title="Services talk over REST", body="JSON")
    gone = records.add(conn, proj.id, type="convention", title="Tabs for indentation")
    keyed = records.add(conn, proj.id, type="convention", key="style.quotes", title="Single quotes")
    path = Path(teamsync.export(conn, proj, create=True))
    text = path.read_text().replace("### Services talk over REST", "### Services talk over gRPC")
    text = text.replace("### Single quotes", "### Double quotes")
    start = text.index(f"<!-- agentctx:begin {gone['id']} -->")
    end = text.index(f"<!-- agentctx:end {gone['id']} -->") + len(f"<!-- agentctx:end {gone['id']} -->")
    path.write_text(text[:start] + text[end:])
    report = teamsync.import_changes(conn, proj)
    assert report["errors"] == [] and report["retired"] == [gone["id"]]
    assert {e["id"] for e in report["edited"]} == {keep["id"], keyed["id"]}
    now = current(conn, proj.id)
    assert keep["id"] not in now and gone["id"] not in now
    titles = sorted(r["title"] for r in now.values())
    assert titles == ["Double quotes", "Services talk over gRPC"]
    assert records.resolve(conn, gone["id"], all_projects=True)["superseded_at"]  # retired, never deleted
    new_keep = next(r for r in now.values() if r["title"] == "Services talk over gRPC")
    assert records.resolve(conn, keep["id"], all_projects=True)["superseded_by"] == new_keep["id"] and new_keep["body"] == "JSON"
    assert next(r for r in now.values() if r["title"] == "Double quotes")["key"] == "style.quotes"
    again = teamsync.import_changes(conn, proj, force=True)  # idempotent: the chain already says it
    assert again["added"] == again["edited"] == again["retired"] == [] and again["unchanged"] == 2
    teamsync.export(conn, proj)
    assert f"- supersedes: {keep['id']}" in path.read_text()


def test_broken_blocks_are_reported_by_line_and_kept(conn, proj, repo):
    good = records.add(conn, proj.id, type="decision", title="Use Postgres 16")
    path = Path(teamsync.export(conn, proj, create=True))
    rid1, rid2, rid3 = "01JDAAAAAAAAAAAAAAAAAAAAA1", "01JDAAAAAAAAAAAAAAAAAAAAA2", "01JDAAAAAAAAAAAAAAAAAAAAA3"
    lines = path.read_text().splitlines()
    extra = [
        f"<!-- agentctx:begin {rid1} -->", "### A new convention from a teammate", "- type: convention",
        "", "Body.", f"<!-- agentctx:end {rid1} -->",
        f"<!-- agentctx:begin {rid2} -->", "### Has no end marker", "- type: decision",
        f"<!-- agentctx:begin {rid3} -->", "### Unknown type", "- type: opinion", f"<!-- agentctx:end {rid3} -->",
        "<<<<<<< HEAD", "=======", ">>>>>>> theirs",
        "<!-- agentctx:begin not-an-id -->", "### x", "- type: decision", "<!-- agentctx:end not-an-id -->",
    ]
    first = len(lines) + 1
    path.write_text("\n".join(lines + extra) + "\n")
    report = teamsync.import_changes(conn, proj)
    assert report["added"] == [rid1]
    errors = {e["line"]: e["error"] for e in report["errors"]}
    assert sorted(errors) == [first + 6, first + 9, first + 13, first + 14, first + 15, first + 16]
    assert "no end marker" in errors[first + 6] and "opinion" in errors[first + 9]
    assert "conflict marker" in errors[first + 13] and "not a 26-character" in errors[first + 16]
    assert set(current(conn, proj.id)) == {good["id"], rid1}
    result = CliRunner().invoke(cli, ["--project", str(repo), "team", "import", "--force"], catch_exceptions=False)
    assert result.exit_code == 1 and f"line {first + 6}:" in result.stderr
    teamsync.export(conn, proj)  # nothing lost: the broken text is kept verbatim at the end
    text = path.read_text()
    assert teamsync.BROKEN_HEADING in text and "### Has no end marker" in text and "- type: opinion" in text
    assert f"<!-- agentctx:end {rid1} -->" in text.split(teamsync.BROKEN_HEADING)[0]
    assert len(teamsync.parse(text)[1]) == 6  # still reported, not silently dropped


def test_conflicting_edits_keep_both_and_the_newer_is_current(conn, proj, repo):
    rec = records.add(conn, proj.id, type="decision", title="Retry payments 3 times")
    path = Path(teamsync.export(conn, proj, create=True))
    text = path.read_text()
    start = text.index(f"<!-- agentctx:begin {rec['id']} -->")
    end = text.index(f"<!-- agentctx:end {rec['id']} -->") + len(f"<!-- agentctx:end {rec['id']} -->")
    block = text[start:end]
    newer = block.replace("### Retry payments 3 times", "### Retry payments 5 times").replace(
        "- confidence: explicit", "- confidence: explicit\n- updated: 2030-01-02T00:00:00Z")
    older = block.replace("### Retry payments 3 times", "### Retry payments 4 times").replace(
        "- confidence: explicit", "- confidence: explicit\n- updated: 2030-01-01T00:00:00Z")
    path.write_text(text[:start] + newer + "\n" + older + text[end:])  # a conflict resolved by keeping both
    report = teamsync.import_changes(conn, proj)
    assert report["errors"] == []
    now = current(conn, proj.id)
    assert [r["title"] for r in now.values()] == ["Retry payments 5 times"]
    titles = {r["title"]: r for r in (dict(x) for x in conn.execute(
        f"SELECT {query.COLUMNS} FROM records WHERE project_id = ?", (proj.id,)))}
    assert set(titles) == {"Retry payments 3 times", "Retry payments 4 times", "Retry payments 5 times"}
    assert titles["Retry payments 4 times"]["superseded_by"] == titles["Retry payments 5 times"]["id"]
    assert titles["Retry payments 3 times"]["superseded_by"] == titles["Retry payments 4 times"]["id"]
    # an edit older than what this store already has is kept in history, not made current
    path.write_text(path.read_text().replace("Retry payments 5 times", "Retry payments 2 times").replace(
        "2030-01-02", "2020-01-01"))
    report = teamsync.import_changes(conn, proj)
    assert len(report["conflicts"]) == 1
    assert [r["title"] for r in current(conn, proj.id).values()] == ["Retry payments 5 times"]


def test_huge_or_binary_team_file_is_refused(conn, proj, repo):
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "context.md").write_bytes(b"\x00\x01binary")
    with pytest.raises(teamsync.TeamSyncError, match="binary"):
        teamsync.import_changes(conn, proj)
    result = CliRunner().invoke(cli, ["--project", str(repo), "team", "import"], catch_exceptions=False)
    assert result.exit_code == 1 and "binary" in result.stderr


def test_session_start_imports_a_changed_team_file(home, conn, proj, repo, store):
    records.add(conn, proj.id, type="decision", title="Services talk over gRPC")
    teamsync.export(conn, proj, create=True)
    bob = store("bob")  # Bob's store has never seen the file (a fresh clone)
    env = hook_env(home.parent / "data-bob")
    payload = {"session_id": "s-team", "cwd": str(repo), "source": "startup", "hook_event_name": "SessionStart"}
    proc = run_hook("session_start", payload, home.parent / "data-bob", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Services talk over gRPC" in context_of(proc)
    assert [r["title"] for r in current(bob, proj.id).values()] == ["Services talk over gRPC"]
    sync = bob.execute("SELECT sha256, synced_at FROM team_sync WHERE project_id = ?", (proj.id,)).fetchone()
    assert sync is not None
    # unchanged file: the next start does not import again (the sync row is untouched)
    proc = run_hook("session_start", {**payload, "session_id": "s-team-2"}, home.parent / "data-bob", env=env)
    assert proc.returncode == 0
    assert tuple(bob.execute("SELECT sha256, synced_at FROM team_sync").fetchone()) == tuple(sync)
    # a teammate's new block after a pull shows up at the next start
    path = repo / ".agentctx" / "context.md"
    path.write_text(path.read_text() + "\n<!-- agentctx:begin 01JDAAAAAAAAAAAAAAAAAAAAA9 -->\n"
                    "### Cache on Valkey\n- type: decision\n<!-- agentctx:end 01JDAAAAAAAAAAAAAAAAAAAAA9 -->\n")
    proc = run_hook("session_start", {**payload, "session_id": "s-team-3"}, home.parent / "data-bob", env=env)
    assert "Cache on Valkey" in context_of(proc)
    # a broken file never costs the digest
    path.write_bytes(b"\x00")
    proc = run_hook("session_start", {**payload, "session_id": "s-team-4"}, home.parent / "data-bob", env=env)
    assert proc.returncode == 0 and "Cache on Valkey" in context_of(proc)


def test_session_start_imports_a_large_team_file_detached(home, conn, proj, repo, store):
    import time

    for i in range(80):
        records.add(conn, proj.id, type="discovery", title=f"Finding number {i} about the ledger",
                    body="The ledger service batches writes every 200 ms. " * 6)
    path = Path(teamsync.export(conn, proj, create=True))
    assert path.stat().st_size > teamsync.INLINE_BYTES
    bob = store("bob")
    env = hook_env(home.parent / "data-bob")
    payload = {"session_id": "s-big", "cwd": str(repo), "source": "startup", "hook_event_name": "SessionStart"}
    proc = run_hook("session_start", payload, home.parent / "data-bob", env=env)
    assert proc.returncode == 0, proc.stderr
    log_file = home.parent / "data-bob" / "logs" / "agentctx.log"

    def log() -> str:
        return log_file.read_text() if log_file.exists() else ""
    deadline = time.monotonic() + 120  # waits for the detached import to finish; asserts no duration
    while time.monotonic() < deadline and "TeamImport" not in log():
        time.sleep(0.2)
    assert "team file started detached" in log() and "TeamImport imported: +80" in log()
    assert len(current(bob, proj.id)) == 80
