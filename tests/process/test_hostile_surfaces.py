"""The MCP server and the dashboard against a hostile repository (issue 22): each kind of file tests/support/hostile.py
plants (a symlink to /dev/zero, a FIFO, a socket, a symlink out of the repository, a dangling symlink, a sparse
4 GiB file, TOML and JSON nested 2,000 deep) at every path agentctx reads. The MCP server runs as Claude Code
starts it, through the SDK's real stdio client, and every tool is called (ctx_project and ctx_sync_claudemd read
the repository's files, ctx_record links files); then the dashboard server serves every route over HTTP, its
writes included (a purge rewrites the team file). Both under the same 2 GiB address-space limit as the hooks:
every call returns, none fails on the server's side, each refused file has exactly one log line, and nothing
outside the repository is written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentctx import project
from tests.support import hostile, hostile_surfaces
from tests.support.cli import BIN, UV
from tests.support.hooks import hook_env
from tests.support.models import TEST_MODEL

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX file kinds")


@pytest.fixture
def embed_model(monkeypatch):
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(TEST_MODEL))  # the MCP and dashboard processes inherit it


@pytest.mark.parametrize("kind", hostile.KINDS)
def test_mcp_and_dashboard_hold_against_a_hostile_repository(tmp_path: Path, kind: str, embed_model) -> None:
    home = tmp_path / "data"
    repo, outside, transcript = hostile.make(tmp_path / "clone", kind)
    before = hostile.snapshot(outside)
    env = {**hook_env(home, AGENTCTX_EMBED_MODEL=str(TEST_MODEL))}
    env["PATH"] = os.path.dirname(UV) + os.pathsep + env["PATH"]
    recorded = subprocess.run([str(BIN), "--project", str(repo), "record", "--type", "decision", "--title",
                               hostile.TITLE], capture_output=True, text=True, env=env, cwd=str(repo), timeout=300)
    assert recorded.returncode == 0, recorded.stderr

    calls = hostile_surfaces.run_mcp(repo, home, hostile_surfaces.record_id(home), tmp_path / "mcp-stderr.log")
    assert [c.what.split("(")[0] for c in calls] == [t for t, _ in hostile_surfaces.mcp_calls("x")]
    assert all(c.done for c in calls), [c for c in calls if not c.done]
    by_tool = {c.what.split("(")[0]: c for c in calls}
    for tool in ("ctx_project", "ctx_search", "ctx_get", "ctx_related", "ctx_record", "ctx_supersede"):
        assert not by_tool[tool].failed, by_tool[tool]
    assert hostile.TITLE in by_tool["ctx_get"].text and "Recorded" in by_tool["ctx_record"].text
    sync = by_tool["ctx_sync_claudemd"]
    if kind == "deep":  # a 2,000-deep Markdown line is still Markdown
        assert not sync.failed, sync
    else:  # refused, saying which file and why, in one message
        assert sync.failed and "CLAUDE.md" in sync.text and "not compared" in sync.text, sync

    pid = project.detect(str(repo)).id
    answers = hostile_surfaces.run_ui(home, pid, hostile_surfaces.record_id(home, hostile_surfaces.MCP_TITLE), tmp_path)
    assert all(a.done and not a.failed for a in answers), [a for a in answers if not a.done or a.failed]
    status = {a.what.split("?")[0]: a.status for a in answers}
    assert all(code == 200 for what, code in status.items() if what.startswith("GET")), status
    for route in ("edit", "pin", "supersede", "purge"):
        assert status[next(w for w in status if w.endswith("/" + route))] == 200, status
    proposal = next(a for a in answers if "sync/proposal" in a.what)
    if kind != "deep":
        assert "nothing was compared" in proposal.text and "CLAUDE.md" in proposal.text, proposal

    # Each refused file logged once, whichever process met it first; nothing outside written.
    counts = hostile.reports((home / "logs" / "agentctx.log").read_text())
    assert all(n == 1 for n in counts.values()), counts
    missing = hostile.expected_reports(repo, transcript, kind) - {str(transcript)} - set(counts)
    assert not missing, (missing, counts)
    assert hostile.snapshot(outside) == before
    assert not (outside / "created-by-agentctx").exists()
    if kind in ("devzero", "outside", "dangling"):
        assert all(os.path.islink(repo / rel) for rel in hostile.TARGETS)
