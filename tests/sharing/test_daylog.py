"""The daily log: what was decided, what changed, what is next, from observations (hooks as processes),
explicit statements (extraction without a key), anchors and the handover; `agentctx log`; the file in the
data directory; the handover derived from it when no model is available."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx import clock, project
from agentctx.capture import extract, handover
from agentctx.consolidation import consolidate
from agentctx.sharing import daylog
from tests.capture.test_extract import SID, Transcript
from tests.support.hooks import ROOT, run_hook


def bash(repo: Path, command: str, stdout: str = "", error: str | None = None) -> dict:
    base = {"session_id": SID, "cwd": str(repo), "tool_name": "Bash", "tool_input": {"command": command},
            "transcript_path": "/nonexistent.jsonl"}
    if error is not None:
        return {**base, "hook_event_name": "PostToolUseFailure", "error": error}
    return {**base, "hook_event_name": "PostToolUse", "tool_response": {"stdout": stdout, "stderr": "",
                                                                         "interrupted": False}}


@pytest.fixture
def day_of_work(home: Path, repo: Path, tmp_path: Path, monkeypatch):
    """One session: a file written, an error, then passing tests and a commit (PostToolUse hooks as processes),
    the developer's explicit statements and Claude's last message listing next steps (the transcript)."""
    monkeypatch.setenv("AGENTCTX_LLM", "0")  # no model: what works without a key
    (repo / "refunds.py").write_text("def refund(): ...\n")
    run_hook("post_tool_use", {"session_id": SID, "cwd": str(repo), "hook_event_name": "PostToolUse",
                               "tool_name": "Write", "tool_input": {"file_path": str(repo / "refunds.py")},
                               "tool_response": {"filePath": str(repo / "refunds.py"), "success": True}}, home)
    run_hook("post_tool_use", bash(repo, "python -m pytest tests/test_refunds.py", error=(
        "Exit code 1\nTraceback (most recent call last):\n  File \"refunds.py\", line 3, in refund\n"
        "ZeroDivisionError: division by zero")), home)
    run_hook("post_tool_use", bash(repo, "python -m pytest tests/test_refunds.py",
                                   "tests/test_refunds.py ...\n===== 3 passed in 0.12s =====\n"), home)
    run_hook("post_tool_use", bash(repo, 'git commit -am "Add refunds"',
                                   "[main 1a2b3c4] Add refunds\n 1 file changed, 3 insertions(+)\n"), home)
    tx = Transcript(tmp_path / "session.jsonl")
    tx.turn("Add a refund endpoint to the billing API. We decided that refunds are always issued in cents.",
            "Done: refunds.py has the endpoint and its tests pass.\n\nNext steps:\n1. Expose refunds in the admin UI\n"
            "2. Email the customer a receipt")
    result = extract.run_once(SID, str(tx.path), str(repo))
    assert result.mode == "explicit"
    return project.detect(str(repo)), result


def test_the_days_log_from_what_was_observed_and_stated(day_of_work, conn, repo):
    proj, result = day_of_work
    data = daylog.collect(conn, proj, clock.now()[:10])
    assert [d["title"] for d in data["decided"]] == ["We decided that refunds are always issued in cents."]
    assert data["decided"][0]["confidence"] == "explicit"
    assert [f["name"] for f in data["files"]] == ["refunds.py"]
    assert data["commits"][0]["sha"] == "1a2b3c4" and data["commits"][0]["message"] == "Add refunds"
    assert data["tests"][0]["status"] == "passed" and "3 passed" in data["tests"][0]["title"]
    assert data["errors"][0]["title"].startswith("ZeroDivisionError: division by zero")
    assert data["errors"][0]["tests_passed_after"] is True
    assert data["next"]["current_task"].startswith("Add a refund endpoint to the billing API")
    assert data["next"]["next_steps"][:2] == ["Expose refunds in the admin UI", "Email the customer a receipt"]
    text = daylog.render(data)
    for heading in ("## Decided", "## Changed", "### Files", "### Commits and branches", "### Test results",
                    "### Errors and fixes", "## Next"):
        assert heading in text
    assert "- error: ZeroDivisionError: division by zero" in text and "tests passed afterwards" in text
    assert "1. Expose refunds in the admin UI" in text


def test_without_a_model_the_handover_is_derived_from_the_log(day_of_work, conn):
    proj, result = day_of_work
    assert any("derived from the daily log" in n for n in result.notes)
    current = handover.read(conn, proj.id)
    rec = current["record"]
    assert rec["confidence"] == "inferred" and rec["source"] == "hook_observation" and rec["session_id"] == SID
    fields = current["fields"]
    assert fields["current_task"].startswith("Add a refund endpoint")
    assert fields["next_steps"][:2] == ["Expose refunds in the admin UI", "Email the customer a receipt"]
    assert fields["blockers"] == []  # the error was followed by passing tests


def test_failing_tests_and_unfixed_errors_become_next_steps_and_blockers(home, repo, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCTX_LLM", "0")
    run_hook("post_tool_use", bash(repo, "pytest", error="Exit code 1\nFAILED tests/test_a.py::test_x\n"
                                                         "===== 1 failed, 2 passed in 0.3s ====="), home)
    run_hook("post_tool_use", bash(repo, "python app.py", error="Exit code 1\nKeyError: 'DATABASE_URL'"), home)
    tx = Transcript(tmp_path / "t.jsonl").turn("Why does the app crash on start?", "It needs DATABASE_URL.")
    extract.run_once(SID, str(tx.path), str(repo))
    fields = handover.read(conn, project.detect(str(repo)).id)["fields"]
    assert any(s.startswith("Make the failing tests pass: Tests failed: `pytest`") for s in fields["next_steps"])
    assert fields["blockers"] == ["Error not seen fixed: KeyError: 'DATABASE_URL' (in `python app.py`)"]


def cli(home: Path, repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT / "lib"), "AGENTCTX_HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "agentctx.surfaces.cli", *args], capture_output=True, text=True,
                          env=env, cwd=repo)


def test_agentctx_log_prints_writes_and_takes_a_day_and_a_project(day_of_work, home, repo, tmp_path):
    proj, _ = day_of_work
    today = clock.now()[:10]
    done = cli(home, repo, "log")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"# widgets — {today}") and "## Decided" in done.stdout
    path = Path(daylog.path(proj, today))
    assert path.read_text() == done.stdout and f"written to {path}" in done.stderr
    assert path.parent.name == f"widgets-{proj.id[:8]}" and path.parent.parent == home / "logs"
    data = json.loads(cli(home, tmp_path, "log", "--project", "widgets", "--json").stdout)  # by name, elsewhere
    assert data["path"] == str(path) and data["decided"][0]["title"].startswith("We decided")
    assert json.loads(cli(home, tmp_path, "log", "--project", proj.id[:6], "--json").stdout)["day"] == today
    empty = cli(home, repo, "log", "--day", "2001-02-03")
    assert "Nothing was recorded for this project on this day." in empty.stdout
    assert not os.path.exists(daylog.path(proj, "2001-02-03"))
    assert cli(home, repo, "log", "--day", "yesterday").returncode == 2
    assert cli(home, repo, "log", "--project", "nope").returncode == 2


def test_the_consolidation_pass_writes_the_days_log(day_of_work, home, repo):
    proj, _ = day_of_work
    report = consolidate.run(proj, seconds=60, use_embeddings=False)
    path = report["steps"]["daylog"]["path"]
    assert path == daylog.path(proj, clock.now()[:10])
    assert "refunds.py" in Path(path).read_text() and "## Next" in Path(path).read_text()
