"""The MCP tool logic in-process (agentctx.surfaces.mcp_tools): token budgets, output caps, and a long-lived connection."""

from __future__ import annotations

import os
import re

import pytest

from agentctx import budgets, paths
from agentctx.store import db, migrations, records
from agentctx.surfaces.mcp_tools import (
    GET_CHARS,
    RESULT_TOKENS,
    SEARCH_TOKENS,
    Service,
    ToolInputError,
    index_line,
)

AWKWARD = [
    "x" * 300,
    "データベースの移行は前方のみで行う、リリース済みのマイグレーションは編集しない" * 4,
    "🚀🔥✅" * 60,
    "Kafka 再平衡 " * 30,
    "a",
]


@pytest.fixture
def service(conn, repo):
    svc = Service(str(repo))
    yield svc
    svc.close()


@pytest.mark.parametrize("title", AWKWARD)
@pytest.mark.parametrize("body", ["", *AWKWARD])
def test_index_line_stays_within_its_budget(title, body):
    rec = {"id": "01JD3K5M8Z0Q4R7T9V2W6X1Y3B", "type": "convention", "valid_from": "2026-03-02T10:00:00.000000Z",
           "title": title, "body": body, "scope": "global", "confidence": "inferred", "pinned": 0}
    line = index_line(rec)
    assert budgets.estimate_tokens(line) <= RESULT_TOKENS
    assert line.startswith("- 01JD3K5M8Z0Q4R7T9V2W6X1Y3B | convention | 2026-03-02 | current/global/inferred | ")
    assert "\n" not in line


def test_clip_tokens():
    from agentctx.budgets import clip_tokens

    assert clip_tokens("short", 10) == "short"
    clipped = clip_tokens("日本語のテキスト" * 10, 5)
    assert budgets.estimate_tokens(clipped) <= 5 and clipped.endswith("…")


def test_fifteen_awkward_results_fit_in_1000_tokens(service, conn, proj):
    for i in range(30):
        records.add(conn, proj.id, type="discovery", title=f"{AWKWARD[i % 4][:290]} kafka {i}",
                    body=AWKWARD[(i + 1) % 4] + " kafka")
    text = service.search("an overview of kafka")  # a broad query: the deepest default list
    assert len(text.splitlines()) == 1 + budgets.SEARCH_RESULTS_BROAD == 16  # the header and 15 results
    assert budgets.estimate_tokens(text) <= SEARCH_TOKENS


def test_ctx_search_lists_fewer_results_for_a_narrow_query(service, conn, proj):
    for i in range(30):
        records.add(conn, proj.id, type="discovery", title=f"kafka consumer lag note {i}", body=f"partition {i}")
    narrow = service.search("kafka consumer lag")
    broad = service.search("kafka consumer lag: all the notes and their partitions?")
    assert len(narrow.splitlines()) == 1 + budgets.SEARCH_RESULTS < len(broad.splitlines()) == 1 + budgets.SEARCH_RESULTS_BROAD


def test_get_output_is_capped_and_says_so(service, conn, proj):
    big = [records.add(conn, proj.id, type="discovery", title=f"Long note {i}", body=f"word{i} " * 4000)
           for i in range(20)]
    text = service.get([r["id"] for r in big])
    assert len(text) < GET_CHARS + 20 * 600
    assert text.count("[body clipped at") == 20
    assert "ctx_get this id alone" in text
    alone = service.get([big[0]["id"]])
    assert "[body clipped" not in alone and alone.count("word0") == 4000


def test_reopens_a_store_moved_aside(service, conn, proj):
    rec = records.add(conn, proj.id, type="decision", title="Before the move", body="b")
    assert rec["id"] in service.search("before move")
    conn.close()
    db.quarantine(reason="test")  # what a hook does with a damaged store
    fresh = db.connect()
    other = records.add(fresh, proj.id, type="decision", title="After the move", body="b")
    fresh.close()
    text = service.search("before after move")
    assert other["id"] in text and rec["id"] not in text


def test_store_migrated_by_a_newer_agentctx_while_running(service, conn, proj):
    rec = records.add(conn, proj.id, type="decision", title="Fine so far", body="b")
    assert rec["id"] in service.search("fine")
    conn.execute(f"PRAGMA user_version = {migrations.LATEST + 1}")
    with pytest.raises(ToolInputError, match="newer than this agentctx understands"):
        service.search("fine")
    with pytest.raises(ToolInputError, match="Nothing was read or written"):
        service.record("decision", "t", "b")
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1


def test_project_comes_from_claude_project_dir(monkeypatch, conn, repo, tmp_path):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    monkeypatch.chdir(tmp_path)
    svc = Service()
    try:
        assert svc.from_env and svc.project().name == "widgets"
    finally:
        svc.close()
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    svc = Service()
    assert not svc.from_env and svc.project_dir == str(tmp_path)
    svc.set_project_dir(str(repo))
    assert svc.project().name == "widgets"
    svc.close()


def test_warm_opens_the_store_and_refreshes_the_profile(service, repo, conn, proj):
    (repo / "Cargo.toml").write_text('[package]\nname = "w"\nedition = "2021"\n')
    service.warm()
    keys = {r["key"] for r in records.active(conn, proj.id, ["profile"])}
    assert {"profile.stack", "profile.test_command", "profile.build_command"} <= keys
    assert os.path.exists(paths.db_path())


def test_record_files_are_validated_before_anything_is_written(service, conn):
    with pytest.raises(ToolInputError, match="at most 20"):
        service.record("decision", "t", "b", files=[f"f{i}.py" for i in range(21)])
    with pytest.raises(ToolInputError, match="files must be a list"):
        service.record("decision", "t", "b", files="a.py")
    assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 0
    text = service.record("bugfix", "Cache key collided", "b", files=["./src/a.py", "src/a.py"])
    assert text.endswith("(linked to src/a.py).")
    rid = re.search(r"[0-9A-Z]{26}", text).group(0)
    assert conn.execute("SELECT COUNT(*) FROM record_entities WHERE record_id = ?", (rid,)).fetchone()[0] == 1


def test_sqlite_errors_become_tool_errors(service, conn):
    assert "No current records" in service.search("anything at all")
    conn.execute("ALTER TABLE records RENAME TO records_elsewhere")  # a damaged schema
    with pytest.raises(ToolInputError, match="store error: no such table"):
        service.get(["01JD3K5M8Z0Q4R7T9V2W6X1Y3B"])
    conn.execute("ALTER TABLE records_elsewhere RENAME TO records")
    assert "No current records" in service.search("anything at all")  # the next call reconnects
