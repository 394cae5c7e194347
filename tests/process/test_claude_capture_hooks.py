"""Capture, part A, end to end: PostToolUse and PreCompact fired by the real Claude Code CLI (pinned)
against a scripted fake model; and the detached-worker seam SessionEnd uses."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agentctx import project, spawn
from agentctx.capture import handover
from agentctx.events import session_end
from agentctx.hookio import HookEvent
from agentctx.store import db
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.bundle import plugin_env
from tests.support.claude_cli import claude_plugin, run_claude
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]



# ---------------------------------------------------------------------------------------
# The detached-worker seam (no CLI needed)
# ---------------------------------------------------------------------------------------

PROBE = """\
import json, os, sys, time
out = os.environ["PROBE_OUT"]
deadline = time.time() + 60
while not os.path.exists(out + ".go") and time.time() < deadline:  # the parent must not be waiting on us
    time.sleep(0.02)
null = os.stat(os.devnull)
fds = {str(fd): [os.fstat(fd).st_rdev == null.st_rdev, os.fstat(fd).st_ino == null.st_ino] for fd in (0, 1, 2)}
data = {"argv": sys.argv[1:], "sid": os.getsid(0), "saw_go": os.path.exists(out + ".go"), "fds": fds}
with open(out + ".tmp", "w") as fh:
    json.dump(data, fh)
os.replace(out + ".tmp", out)
"""


def _probe_result(out: Path) -> dict:
    return wait_for(lambda: json.loads(out.read_text()) if out.exists() else None, "the detached worker")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX session check")
def test_detached_worker_runs_in_its_own_session_with_null_stdio_and_is_not_waited_for(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    out = tmp_path / "probe.json"
    pid = spawn.detached([sys.executable, str(script), "a b", "--x"], env={**os.environ, "PROBE_OUT": str(out)})
    (tmp_path / "probe.json.go").touch()  # only after detached() returned: had it waited, the probe saw no go
    got = _probe_result(out)
    assert pid > 0 and got["argv"] == ["a b", "--x"] and got["saw_go"] is True
    assert got["sid"] == pid != os.getsid(0)  # a session leader of its own: setsid
    assert all(all(v) for v in got["fds"].values()), got["fds"]


def test_detached_reports_a_missing_program(tmp_path):
    with pytest.raises(OSError):
        spawn.detached([str(tmp_path / "no-such-program")])


def test_session_end_runs_consolidation_as_a_uv_script(home, repo, monkeypatch):
    argv = session_end.consolidation_command("p", "s", str(repo))
    assert argv is not None and argv[argv.index("--script") + 1] == str(ROOT / "lib" / "agentctx_consolidate.py")
    assert argv[-6:] == ["--project-id", "p", "--session-id", "s", "--cwd", str(repo)]
    monkeypatch.setattr(spawn, "LIB_DIR", str(ROOT / "no_such_folder"))
    assert session_end.consolidation_command("p", "s") is None and session_end.start_consolidation("p", "s") is None


def test_session_end_starts_consolidation_detached(home, repo, tmp_path, monkeypatch):
    probe = tmp_path / "agentctx_consolidate.py"
    probe.write_text(PROBE)
    monkeypatch.setattr(spawn, "LIB_DIR", str(tmp_path))
    out = tmp_path / "probe.json"
    monkeypatch.setenv("PROBE_OUT", str(out))
    proj = project.detect(str(repo))
    assert session_end.on_session_end(HookEvent.of("SessionEnd", session_id="s1", cwd=str(repo), reason="other")) is None
    (tmp_path / "probe.json.go").touch()
    got = _probe_result(out)
    assert got["argv"] == ["--project-id", proj.id, "--session-id", "s1", "--cwd", proj.root] and got["saw_go"]
    assert got["sid"] != os.getsid(0) and all(all(v) for v in got["fds"].values())


# ---------------------------------------------------------------------------------------
# Through the real Claude Code CLI
# ---------------------------------------------------------------------------------------


def store_has(sql: str, *args):
    conn = db.connect()
    try:
        return [dict(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


@pytest.mark.claude
def test_plugin_declares_the_capture_hooks(claude, bundle, tmp_path):
    report = json.loads(claude_plugin(tmp_path / "home", "validate", "--json", str(bundle)).stdout)
    events = {h["event"] for h in report["provides"]["hooks"]}
    assert {"PostToolUse", "PostToolUseFailure", "PreCompact"} <= events


@pytest.mark.claude
def test_tool_calls_compaction_and_resume_through_the_real_cli(claude, bundle, tmp_path, monkeypatch):
    """Write + a failing Bash fire PostToolUse / PostToolUseFailure for real; /compact fires PreCompact;
    the resumed session's model sees the anchor that SessionStart(compact) injected."""
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    work = make_repo(tmp_path / "shop", remote="https://github.com/acme/shop.git")
    (work / "src").mkdir()
    db.connect().close()
    proj = project.detect(str(work))
    home = tmp_path / "home"
    target = work / "src" / "refunds.py"

    def observed(sid_like: str = "%"):
        return store_has(
            "SELECT n.name, e.to_id FROM nodes n JOIN edges e ON e.from_id = n.id AND e.rel_type = 'observed_in' "
            "WHERE n.project_id = ? AND n.kind = 'file' AND e.to_id LIKE ?", proj.id, sid_like)

    def bugfix():
        return store_has("SELECT title, source FROM records WHERE project_id = ? AND type = 'bugfix'", proj.id)

    def responder(body: dict):
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if turn == 0:
            return fake_api.tool_use("Write", {"file_path": str(target), "content": "def refund(): ...\n"})
        if turn == 1:
            return fake_api.tool_use("Bash", {"command": "python3 -c 'import requests_mockx'",
                                              "description": "check the dependency"})
        wait_for(lambda: observed() and bugfix(), "the async PostToolUse hooks")  # async: let them land
        return fake_api.text("The refund endpoint is written.\n\nNext steps:\n1. Wire the ledger client\n"
                             "2. Add requests_mockx to the dev dependencies")

    with fake_api.FakeMessagesAPI(responder=responder) as api:
        run = run_claude(work, home, "Add a refund endpoint to the shop.", base_url=api.base_url, plugin_dir=bundle,
                         extra_env=plugin_env(data), extra_args=["--allowedTools", "Write,Bash"]).check()
    sid = run.json["session_id"]
    assert target.exists()
    assert observed(sid) == [{"name": "src/refunds.py", "to_id": sid}]
    assert bugfix() == [{"title": "ModuleNotFoundError: No module named 'requests_mockx' "
                                  "(in `python3 -c 'import requests_mockx'`)", "source": "hook_observation"}]

    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("<summary>A refund endpoint was added.</summary>"))
        run_claude(work, home, "/compact keep the ledger details", base_url=api.base_url, plugin_dir=bundle,
                   extra_env=plugin_env(data), extra_args=["--resume", sid]).check()
    conn = db.connect()
    got = handover.read_anchor(conn, sid)
    conn.close()
    assert got is not None and got["project_id"] == proj.id
    assert [i["text"] for i in got["intent"]] == ["Add a refund endpoint to the shop.",
                                                  "Compaction focus: keep the ledger details"]
    assert "src/refunds.py (written/edited 1×)" in [i["text"] for i in got["changes"]]
    assert [i["text"] for i in got["next_steps"]][:2] == ["Wire the ledger client",
                                                         "Add requests_mockx to the dev dependencies"]
    assert Path(handover.anchor_backup_path(proj.id, sid)).exists()

    with fake_api.FakeMessagesAPI() as api:
        api.enqueue(fake_api.text("Continuing."))
        run_claude(work, home, "Carry on.", base_url=api.base_url, plugin_dir=bundle, extra_env=plugin_env(data),
                   extra_args=["--resume", sid]).check()
        seen = "\n".join(t for r in api.message_requests for t in api.all_text(r))
    assert "Where this session was before compaction (anchor state)" in seen
    assert "src/refunds.py" in seen and "1. Wire the ledger client" in seen
