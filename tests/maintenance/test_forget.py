"""Forgetting: `agentctx forget ID` retires a record with no replacement (kept in history); `agentctx purge ID
--yes` removes it from every place on disk and says what it removed; the dashboard's API does the same after
confirmation. Scoped to the project. The CLI runs as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx import clock, logs, paths, project
from agentctx.capture import handover
from agentctx.injection import digest
from agentctx.sharing import daylog, teamsync
from agentctx.store import archive, db, records, search, sessions, vectors
from tests.conftest import make_repo
from tests.support.hooks import ROOT

MARK = "QUOKKA-BLUEFIN-77"


def cli(home: Path, repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT / "lib"), "AGENTCTX_HOME": str(home), "PATH": "/usr/bin:/bin",
           "TMPDIR": str(home.parent)}
    return subprocess.run([sys.executable, "-m", "agentctx.surfaces.cli", *args], capture_output=True, text=True,
                          env=env, cwd=repo)


@pytest.fixture
def placed(home: Path, repo: Path, conn, monkeypatch):
    """A record whose text sits in every place agentctx writes: store, FTS, vectors, digest cache and ranking,
    anchors (table and backup), session data, the log, the daily log and the team file; plus an archived one."""
    monkeypatch.setenv("TMPDIR", str(home.parent))
    proj = project.detect(str(repo))
    keep = records.add(conn, proj.id, type="decision", title="Invoices are PDFs rendered with WeasyPrint", body="")
    rec = records.add(conn, proj.id, type="decision", title=f"The staging codename is {MARK} for the deploy",
                      body=f"Deploys to staging use the {MARK} bucket; never paste it into tickets.")
    old = records.add(conn, proj.id, type="convention", title=f"Old convention about {MARK} archives", body="")
    records.supersede(conn, proj.id, old["id"], body="Archives are gone.")
    archive.archive(conn, now=clock.days_before("2100-01-01T00:00:00.000000Z", 0))
    assert conn.execute("SELECT COUNT(*) FROM records_archive WHERE id = ?", (old["id"],)).fetchone()[0] == 1
    with db.transaction(conn):
        sessions.start(conn, "s1", proj.id, proj.root, "startup")
        sessions.account(conn, "s1", proj.id, "SessionStart", [rec["id"], keep["id"]], 100)
    digest.current(conn, proj)
    digest.write_rank(proj.id, [rec["id"], keep["id"]])
    state = handover.update_anchor(conn, proj.id, "s1", {"intent": [], "changes": [], "next_steps": [], "decisions": [
        {"key": f"rec:{rec['id']}", "text": f"[decision] {rec['title']}"},
        {"key": f"rec:{keep['id']}", "text": f"[decision] {keep['title']}"}]})
    handover.write_anchor_backup(state)
    logs.log("Extract", f"wrote {rec['id']} ({rec['title']})")
    logs.log("Extract", "an unrelated line that stays")
    daylog.write(conn, proj)
    teamsync.export(conn, proj, create=True)
    store = vectors.Store()
    store.reset("test-model", 4)
    store.upsert([(rec["id"], proj.id, "decision", vectors.to_blob([0.1, 0.2, 0.3, 0.4])),
                  (keep["id"], proj.id, "decision", vectors.to_blob([0.4, 0.3, 0.2, 0.1]))])
    store.close()
    return proj, rec, keep, old


def everything_on_disk(home: Path, repo: Path) -> dict[str, bytes]:
    files = {}
    for folder in (home, repo / ".agentctx"):
        for dirpath, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(dirpath, name)
                with open(path, "rb") as fh:
                    files[path] = fh.read()
    tmp_log = home.parent / "agentctx-hooks.log"
    if tmp_log.exists():
        files[str(tmp_log)] = tmp_log.read_bytes()
    return files


def test_forget_retires_without_a_replacement_and_history_keeps_it(placed, home, repo, conn):
    proj, rec, keep, _ = placed
    done = cli(home, repo, "forget", rec["id"][:16], "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["id"] == rec["id"] and out["superseded_at"] and out["superseded_by"] is None
    assert [h.record["id"] for h in search.search(conn, proj.id, MARK)] == []  # gone from search and injection
    assert rec["id"] not in digest.build(conn, proj).text
    assert rec["id"] in [r["id"] for r in records.history(conn, proj.id, at=rec["valid_from"])]  # what was true then
    shown = cli(home, repo, "get", rec["id"]).stdout
    assert "RETIRED at" in shown and "(forgotten)" in shown and MARK in shown
    again = cli(home, repo, "forget", rec["id"])
    assert again.returncode == 1 and "already forgotten" in again.stderr


def test_purge_needs_yes_and_dry_run_changes_nothing(placed, home, repo, conn):
    proj, rec, _, _ = placed
    before = everything_on_disk(home, repo)
    refused = cli(home, repo, "purge", rec["id"])
    assert refused.returncode == 2 and "--yes" in refused.stderr
    dry = cli(home, repo, "purge", rec["id"], "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith(f"would purge {rec['id']}")
    assert "team file: would remove its block" in dry.stdout
    after = everything_on_disk(home, repo)
    assert {p for p in before if p.endswith((".json", ".md"))} == {p for p in after if p.endswith((".json", ".md"))}
    assert records.get(conn, rec["id"], proj.id) is not None


def test_purge_removes_it_from_every_place_on_disk(placed, home, repo, conn):
    proj, rec, keep, old = placed
    assert any(MARK.encode() in data for data in everything_on_disk(home, repo).values())
    conn.close()  # the purge vacuums the store: no other connection may hold it open
    done = cli(home, repo, "purge", rec["id"], "--yes")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith(f"purged {rec['id']}  decision: The staging codename is {MARK}")
    for said in ("store: removed 1 records", "1 injections", "vacuumed", "vectors: removed its vector",
                 "digests: removed 2 file(s)", "anchor backups: removed 1 line(s)", "logs: removed 1 line(s)",
                 "day logs: removed", "team file: removed its block", "anchors: removed the record's text"):
        assert said in text, (said, text)
    archived = cli(home, repo, "purge", old["id"], "--yes", "--json")  # an archived record too
    assert archived.returncode == 0 and json.loads(archived.stdout)["was"] == "archived (cold partition)"
    for path, data in everything_on_disk(home, repo).items():
        assert MARK.encode() not in data, path  # not in the store file, its WAL, vectors.db, any log or cache
        assert rec["id"].encode() not in data, path
    conn = db.connect()
    try:
        assert records.get(conn, keep["id"], proj.id) is not None  # the rest is untouched
        assert conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH ?", (f'"{MARK}"',)).fetchone()[0] == 0
        assert keep["id"] in (repo / ".agentctx" / "context.md").read_text()
        assert teamsync.import_changes(conn, proj)["status"] == "unchanged"  # the edit is taken as synced
        store = vectors.Store()
        assert store.ids() == {keep["id"]}
        store.close()
        kept = [i["key"] for i in handover.read_anchor(conn, "s1")["decisions"]]
        assert f"rec:{keep['id']}" in kept
        assert "an unrelated line that stays" in Path(logs.log_path()).read_text()
    finally:
        conn.close()


def test_a_purge_is_queued_for_team_remotes(placed, home, repo, conn):
    from agentctx.store import remote

    _, rec, _, _ = placed
    remote.add(conn, "team", "postgresql://db.example/agentctx")
    done = cli(home, repo, "purge", rec["id"], "--yes")
    assert "team remotes: queued for team" in done.stdout
    assert remote.purges(conn, "team") == [(rec["id"], rec["project_id"])]


def test_forget_and_purge_are_scoped_to_the_project(placed, home, repo, tmp_path):
    _, rec, _, _ = placed
    other = make_repo(tmp_path / "other", remote="https://github.com/acme/other.git")
    for command in (["forget", rec["id"]], ["purge", rec["id"], "--yes"]):
        done = cli(home, other, *command)
        assert done.returncode == 1 and f"no record {rec['id']}" in done.stderr
    assert MARK in cli(home, repo, "get", rec["id"]).stdout


def test_the_dashboard_forgets_and_purges_only_when_confirmed(server, store, proj, conn):
    from tests.surfaces.test_ui import request, token_of

    tok = {"X-Agentctx-Token": token_of(server)}
    rid = store["kafka"]
    path = f"/api/records/{rid}/forget?project={proj.id}"
    status, body, _ = request(server, "POST", path, {}, tok)
    assert status == 400 and "confirm" in body["error"]
    assert records.get(conn, rid, proj.id)["superseded_at"] is None
    status, body, _ = request(server, "POST", path, {"confirm": True}, tok)
    assert status == 200 and body["superseded_at"] and body["superseded_by"] is None
    status, body, _ = request(server, "POST", f"/api/records/{rid}/purge?project={proj.id}", {"confirm": True}, tok)
    assert status == 200 and body["id"] == rid and body["store"]["records"] == 1
    assert records.get(conn, rid, proj.id) is None
    status, body, _ = request(server, "POST", f"/api/records/{rid}/purge?project={proj.id}", {"confirm": True}, tok)
    assert status == 400 and "no record" in body["error"]
    status, body, _ = request(server, "POST", f"/api/records/{store['conv']}/purge?project=someone-else",
                              {"confirm": True}, tok)
    assert status == 400 and records.get(conn, store["conv"], proj.id) is not None


def test_needles_skip_short_titles():
    from agentctx.maintenance import forgetting

    rec = {"id": "01ABCDEFGHJKMNPQRSTVWXYZ00", "title": "Use tabs", "body": "x" * 100}
    assert forgetting.needles(rec) == [rec["id"], "x" * forgetting.NEEDLE_CHARS]
    assert paths.data_dir()  # the data dir rule is the one every place uses
