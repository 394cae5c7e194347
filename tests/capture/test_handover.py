"""The project handover: one per session, versioned, merged instead of clobbered under concurrency."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentctx import paths
from agentctx.capture import handover
from agentctx.injection import digest
from agentctx.store import db, records
from agentctx.surfaces.cli import cli

WORK = {"current_task": "Refund endpoint", "blockers": ["ledger API keys missing"],
        "next_steps": ["wire the ledger client", "add the refund test"], "open_questions": ["partial refunds?"]}


def active_handovers(conn, project_id: str) -> list[dict]:
    return [dict(r) for r in conn.execute(
        "SELECT * FROM records WHERE project_id = ? AND type = 'handover' AND superseded_at IS NULL", (project_id,))]


def test_write_read_round_trip_and_versions(conn, proj):
    empty = handover.read(conn, proj.id)
    assert empty["version"] == 0 and empty["record"] is None and empty["fields"]["next_steps"] == []
    assert handover.write(conn, proj.id, "s1", WORK, 0) == 1
    got = handover.read(conn, proj.id)
    assert got["version"] == 1
    assert got["fields"] == {**WORK, "also_in_progress": [], "done": []}
    rec = got["record"]
    assert rec["type"] == "handover" and rec["title"] == "Refund endpoint" and rec["session_id"] == "s1"
    assert "Next steps:\n1. wire the ledger client\n2. add the refund test" in rec["body"]
    assert handover.write(conn, proj.id, "s1", WORK, 1) == 1  # the same content: no new version


def test_stale_version_is_rejected_and_nothing_is_written(conn, proj):
    handover.write(conn, proj.id, "s1", WORK, 0)
    before = conn.execute("SELECT COUNT(*), MAX(recorded_at) FROM records").fetchone()[:]
    with pytest.raises(handover.Conflict) as exc:
        handover.write(conn, proj.id, "s2", {"current_task": "something else"}, 0)
    assert exc.value.expected == 0 and exc.value.current == 1
    assert conn.execute("SELECT COUNT(*), MAX(recorded_at) FROM records").fetchone()[:] == before
    assert handover.read(conn, proj.id)["fields"]["current_task"] == "Refund endpoint"


def test_one_record_per_session_superseding_the_previous_session(conn, proj):
    handover.write(conn, proj.id, "s1", WORK, 0)
    handover.write(conn, proj.id, "s1", {**WORK, "next_steps": ["add the refund test"]}, 1)
    assert conn.execute("SELECT COUNT(*) FROM records WHERE type = 'handover'").fetchone()[0] == 1  # updated in place
    handover.write(conn, proj.id, "s2", {"current_task": "Invoice PDFs", "next_steps": ["fonts"]}, 2)
    recs = [dict(r) for r in conn.execute("SELECT * FROM records WHERE type = 'handover' ORDER BY recorded_at")]
    assert [(r["session_id"], r["superseded_by"] is not None) for r in recs] == [("s1", True), ("s2", False)]
    assert recs[0]["superseded_by"] == recs[1]["id"]
    before, _ = records.lineage(conn, recs[1]["id"], all_projects=True)
    assert [r["id"] for r in before] == [recs[0]["id"]]
    assert len(active_handovers(conn, proj.id)) == 1


def test_digest_shows_the_current_handover(conn, proj):
    handover.write(conn, proj.id, "s1", WORK, 0)
    handover.write(conn, proj.id, "s2", {"current_task": "Invoice PDFs", "next_steps": ["embed Noto fonts"]}, 1)
    text = digest.build(conn, proj).text
    assert "Invoice PDFs" in text and "embed Noto fonts" in text and "Refund endpoint" not in text


def test_three_way_merge():
    base = {"current_task": "A", "next_steps": ["x", "y"], "blockers": ["b1"]}
    mine = {"current_task": "A", "next_steps": ["y", "z"], "blockers": ["b1"]}  # I did x, added z
    theirs = {"current_task": "B", "next_steps": ["x", "y", "w"], "blockers": []}  # they changed the task, added w
    out = handover.merge(base, mine, theirs)
    assert out["current_task"] == "B"
    assert out["next_steps"] == ["y", "w", "z"]
    assert out["blockers"] == []  # they resolved it
    both = handover.merge({"current_task": "A"}, {"current_task": "C"}, {"current_task": "B"})
    assert both["current_task"] == "C" and both["also_in_progress"] == ["B"]


def test_conflict_then_merge_then_retry(conn, proj, home):
    """Two agents read version 0; B writes first; A's save conflicts, merges B's state in, retries."""
    other = db.connect()
    try:
        base_a = handover.read(conn, proj.id)
        base_b = handover.read(other, proj.id)
        handover.save(other, proj.id, "agent-b", {"current_task": "Invoice PDFs", "next_steps": ["embed fonts"]},
                      base=base_b)
        version = handover.save(conn, proj.id, "agent-a", {"current_task": "Refunds", "next_steps": ["ledger client"]},
                                base=base_a)
    finally:
        other.close()
    assert version == 2
    fields = handover.read(conn, proj.id)["fields"]
    assert fields["current_task"] == "Refunds"
    assert fields["next_steps"] == ["embed fonts", "ledger client"]
    assert fields["also_in_progress"] == ["Invoice PDFs"]


def test_save_gives_up_only_after_retries(conn, proj, monkeypatch):
    real_write = handover.write

    def always_late(c, pid, sid, fields, expected, **kw):
        real_write(c, pid, "someone-else", {"next_steps": [f"n{expected}"]}, expected)  # another write lands first
        return real_write(c, pid, sid, fields, expected, **kw)

    monkeypatch.setattr(handover, "write", always_late)
    with pytest.raises(handover.Conflict):
        handover.save(conn, proj.id, "s1", {"current_task": "T"}, retries=3)


def test_interleaving_writers_on_separate_connections_never_clobber(conn, proj, home):
    """8 agents (threads, one connection each) × 2 saves, each adding one next step, all at once:
    every step survives and every save made exactly one version."""
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def agent(n: int) -> None:
        c = db.connect(busy_ms=10_000)
        try:
            start.wait()
            for k in range(2):
                base = handover.read(c, proj.id)
                fields = {**base["fields"], "current_task": f"task of agent {n}",
                          "next_steps": [*base["fields"]["next_steps"], f"step {n}.{k}"]}
                handover.save(c, proj.id, f"agent-{n}", fields, base=base)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            c.close()

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    got = handover.read(conn, proj.id)
    assert got["version"] == 16
    assert sorted(got["fields"]["next_steps"]) == sorted(f"step {n}.{k}" for n in range(8) for k in range(2))
    tasks = [got["fields"]["current_task"], *got["fields"]["also_in_progress"]]
    assert len(tasks) == len(set(tasks)) and got["fields"]["current_task"].startswith("task of agent")
    assert len(active_handovers(conn, proj.id)) == 1


def test_secrets_and_private_spans_never_stored(conn, proj):
    key = "sk-ant-" + "api03-" + "A" * 40
    handover.write(conn, proj.id, "s1", {"current_task": f"rotate {key}",
                                         "next_steps": ["<private>call Dana at home</private>", f"password={key}"]}, 0)
    dump = "\n".join(sqlite3.connect(paths.db_path()).iterdump())
    assert key not in dump and "Dana" not in dump
    assert handover.read(conn, proj.id)["fields"]["next_steps"] == ["password=[REDACTED:anthropic_key]"]


def test_bad_fields_are_rejected_or_cleaned(conn, proj):
    with pytest.raises(ValueError):
        handover.write(conn, proj.id, "s1", ["not", "a", "dict"], 0)  # type: ignore[arg-type]
    handover.write(conn, proj.id, "s1", {"current_task": 42, "next_steps": "just one", "blockers": [None, "", "b"],
                                         "unknown": "ignored"}, 0)
    assert handover.read(conn, proj.id)["fields"] == {"current_task": "", "blockers": ["b"], "next_steps": ["just one"],
                                                      "open_questions": [], "also_in_progress": [], "done": []}
    assert handover.read(conn, proj.id)["record"]["title"] == handover.NO_TASK


def test_cli_shows_the_handover(home: Path, repo: Path, conn, proj):
    runner = CliRunner()
    empty = runner.invoke(cli, ["--project", str(repo), "handover"], catch_exceptions=False)
    assert empty.exit_code == 0 and "no handover" in empty.stdout
    handover.write(conn, proj.id, "s1", WORK, 0)
    shown = runner.invoke(cli, ["--project", str(repo), "handover"], catch_exceptions=False)
    assert shown.exit_code == 0 and "Refund endpoint" in shown.stdout and "version 1" in shown.stdout
    assert "1. wire the ledger client" in shown.stdout
    data = json.loads(runner.invoke(cli, ["--project", str(repo), "handover", "--json"], catch_exceptions=False).stdout)
    assert data["version"] == 1 and data["next_steps"] == WORK["next_steps"] and data["record"]["session_id"] == "s1"
