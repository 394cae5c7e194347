"""The developer profile (ADR-010): repeats reinforce, promotion, the digest section, the profile CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentctx import budgets, llm, project
from agentctx.capture import devprofile, extract, schema
from agentctx.injection import digest
from agentctx.store import graph, projects, records
from agentctx.surfaces.cli import cli
from tests.conftest import make_repo
from tests.support import fake_api

ROOT = Path(__file__).resolve().parents[2]
RULE = "Type hints on every public function"


def reply(*prefs: dict) -> dict:
    return schema.validate({"decisions": [], "preferences": list(prefs), "conventions": [], "active_work": None,
                            "gotchas": [], "flush_ok": False})


def pref(rule: str = RULE, confidence: str = "inferred", scope: str = "global") -> dict:
    return {"category": "style", "rule": rule, "confidence": confidence, "scope": scope}


def state(conn, proj, sid: str, *prefs: dict) -> list[str]:
    """What the turn-end extraction writes for a reply holding these preferences."""
    return extract.apply(conn, proj, sid, reply(*prefs), [], [])


def globals_(conn) -> list[dict]:
    return [dict(r) for r in conn.execute("SELECT * FROM records WHERE type = 'preference' AND scope = 'global'")]


@pytest.fixture
def other(tmp_path, conn) -> project.Project:
    p = project.detect(str(make_repo(tmp_path / "gadgets", "git@github.com:acme/gadgets.git")))
    projects.register(conn, p)
    return p


@pytest.fixture
def here(conn, proj) -> project.Project:
    projects.register(conn, proj)
    return proj


def developer_section(text: str) -> str:
    start = text.index("## Developer profile")
    rest = text[start:].split("\n")
    lines = [rest[0]] + [ln for ln in rest[1:] if not ln.startswith(("##", "</agentctx", "No records", "Full text"))
                         and "searchable" not in ln]
    return "\n".join(lines)


def test_inferred_is_promoted_after_three_distinct_sessions(conn, here, other):
    state(conn, here, "s1", pref())
    state(conn, here, "s1", pref("type hints on EVERY public function."))  # a retried run: not a new session
    state(conn, here, "s2", pref())
    [rec] = globals_(conn)
    assert rec["confidence"] == "inferred" and devprofile.sessions_of(conn, rec["id"]) == ["s1", "s2"]
    assert devprofile.promote(conn) == 0
    assert "Type hints" not in digest.build(conn, here).text  # inferred: only found by search
    state(conn, other, "s3", pref())  # another project: the same global record is reinforced
    [rec] = globals_(conn)
    assert rec["project_id"] == here.id and rec["reinforce_count"] == 2
    assert devprofile.sessions_of(conn, rec["id"]) == ["s1", "s2", "s3"]
    assert records.resolve(conn, rec["id"], all_projects=True)["confidence"] == "reinforced"  # promoted on the third session
    assert devprofile.promote(conn) == 0
    for p in (here, other):
        assert RULE in developer_section(digest.build(conn, p).text)


def test_promote_sweeps_preferences_seen_in_three_sessions(conn, here):
    recs = [records.add(conn, here.id, type="preference", title=f"Rule {i}", scope="global", confidence="inferred",
                        session_id="s0", source="import") for i in range(3)]
    project_pref = records.add(conn, here.id, type="preference", title="Local", confidence="inferred", session_id="s0")
    for rec in (recs[0], recs[1], project_pref):
        for sid in ("s1", "s2"):
            graph.edge(conn, rec["id"], sid, "derives_from")
    graph.edge(conn, recs[2]["id"], recs[0]["id"], "derives_from")  # an edge to a record is not a session
    graph.edge(conn, recs[2]["id"], "s1", "derives_from")
    assert devprofile.promote(conn) == 2
    assert [records.resolve(conn, r["id"], all_projects=True)["confidence"] for r in (*recs, project_pref)] == [
        "reinforced", "reinforced", "inferred", "inferred"]
    assert devprofile.promote(conn) == 0


def test_one_explicit_statement_promotes_at_once(conn, here, other):
    state(conn, here, "s1", pref())
    state(conn, other, "s2", pref(confidence="explicit"))
    [rec] = globals_(conn)
    assert rec["confidence"] == "reinforced"
    assert RULE in digest.build(conn, other).text
    state(conn, here, "s3", pref("Squash commits before merging", confidence="explicit"))
    new = [r for r in globals_(conn) if r["title"].startswith("Squash")]
    assert new[0]["confidence"] == "explicit" and "Squash commits" in digest.build(conn, other).text


def test_project_preferences_are_not_shared(conn, here, other):
    state(conn, here, "s1", pref(scope="project"))
    state(conn, other, "s2", pref(scope="project"))
    rows = conn.execute("SELECT project_id FROM records WHERE type = 'preference'").fetchall()
    assert sorted(r[0] for r in rows) == sorted([here.id, other.id])
    assert not globals_(conn)


def test_digest_developer_section_stays_within_budget(conn, here):
    for i in range(40):
        state(conn, here, f"s{i}", pref(f"Preference number {i} written out at length " + "padding words " * 15,
                                        confidence="explicit"))
    text = digest.build(conn, here).text
    section = developer_section(text)
    shown = section.count("Preference number")
    assert 1 <= shown < 40
    assert budgets.estimate_tokens(section) <= digest.SECTION_TOKENS["developer"]
    assert budgets.estimate_tokens(text) <= budgets.SESSION_START_TOKENS


def test_extraction_through_the_sdk_reinforces_across_sessions(monkeypatch, tmp_path, home, here, conn):
    answer = json.dumps({**reply(pref()), "preferences": [pref()]})
    with fake_api.FakeMessagesAPI(responder=lambda body: answer) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake-key")
        for sid in ("a", "b", "c"):
            path = tmp_path / f"{sid}.jsonl"
            line = {"type": "user", "uuid": f"u-{sid}", "parentUuid": None, "sessionId": sid,
                    "timestamp": "2026-03-01T10:00:00.000Z",
                    "message": {"role": "user", "content": "Add type hints to the public functions again please."}}
            path.write_text(json.dumps(line) + "\n")
            result = extract.run_once(sid, str(path), here.root, client=llm.Client(timeout=10, max_retries=0))
            assert result.status == "written", result
    [rec] = globals_(conn)
    assert devprofile.sessions_of(conn, rec["id"]) == ["a", "b", "c"] and rec["confidence"] == "reinforced"


# -- the CLI -----------------------------------------------------------------------------------------


@pytest.fixture
def run(home, repo):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, ["--project", str(repo), *args], catch_exceptions=False)

    return invoke


def test_profile_show_edit_clear(conn, here, other, run):
    for sid in ("s1", "s2", "s3"):
        state(conn, here, sid, pref())
    state(conn, here, "s4", pref("Prefers tabs", confidence="inferred"))
    out = run("profile", "show")
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines[0].startswith("* ") and "reinforced" in lines[0] and "3 session(s)" in lines[0]  # promoted on show
    assert lines[1].startswith("  ") and "inferred" in lines[1] and "Prefers tabs" in lines[1]
    data = json.loads(run("profile", "show", "--json").stdout)
    rid = data[0]["id"]
    assert [(r["title"], r["in_digest"], r["sessions"]) for r in data] == [(RULE, True, 3), ("Prefers tabs", False, 1)]

    edited = json.loads(run("profile", "edit", rid[:10], "--rule", "Type hints on public APIs", "--json").stdout)
    assert edited["title"] == "Type hints on public APIs" and edited["scope"] == "global"
    tabs = data[1]["id"]
    out = run("profile", "edit", tabs, "--project-only")
    assert out.exit_code == 0 and records.resolve(conn, tabs, all_projects=True)["scope"] == "project"
    out = run("profile", "edit", tabs, "--rule", "x")
    assert out.exit_code == 1 and "not a global preference" in out.stderr
    assert run("profile", "edit", rid).exit_code == 1

    out = run("profile", "clear", rid)
    assert out.exit_code == 0 and "cleared" in out.stdout
    gone = records.resolve(conn, rid, all_projects=True)
    assert gone["superseded_at"] and gone["valid_to"] and gone["superseded_by"] is None
    assert "Type hints" not in digest.build(conn, here).text
    assert json.loads(run("profile", "show", "--json").stdout) == []
    assert rid in {r["id"] for r in records.history(conn, here.id, at=gone["valid_from"])}  # history keeps it
    assert run("profile", "clear", rid).exit_code == 1  # already cleared
    decision = records.add(conn, here.id, type="decision", title="We use Postgres")
    assert run("profile", "clear", decision["id"]).exit_code == 1


UV = shutil.which("uv") or os.path.expanduser("~/.local/bin/uv")


@pytest.mark.skipif(not os.path.exists(UV), reason="uv is not installed")
def test_real_executable_profile_show(home, conn, here):
    state(conn, here, "s1", pref(confidence="explicit"))
    env = {**os.environ, "AGENTCTX_HOME": str(home), "PATH": os.path.dirname(UV) + os.pathsep + os.environ["PATH"]}
    env.pop("AGENTCTX_NOW", None)
    r = subprocess.run([str(ROOT / "bin" / "agentctx"), "--project", here.root, "profile", "show", "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    [rec] = json.loads(r.stdout)
    assert rec["title"] == RULE and rec["confidence"] == "explicit" and rec["in_digest"] is True
