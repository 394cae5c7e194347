"""What a session did since the latest request and which errors still stand at its end (the derived
handover's "done since" and blockers), read from a transcript made here: an error is cleared by a later
success of the same step, a commit, an edit it did not survive, Claude answering after an API error. Then
the real Stop hook and worker."""

from __future__ import annotations

from pathlib import Path

from agentctx.capture import progress, transcript
from tests.capture.test_real_speech import SID, Session
from tests.conftest import make_repo
from tests.process.test_claude_extraction import rows, worker_idle
from tests.support.hooks import context_of, hook_env, run_hook
from tests.support.waiting import wait_for

TRACE = "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"


class Work(Session):
    """A session whose Claude runs tools: each call a tool_use line and its tool_result line."""

    calls = 0

    def run(self, tool: str, args: dict, output: str = "", error: bool = False) -> None:
        Work.calls += 1
        tid = f"toolu_{Work.calls}"
        self.assistant({"type": "tool_use", "id": tid, "name": tool, "input": args})
        self.user([{"type": "tool_result", "tool_use_id": tid, "content": output, "is_error": error}])

    def bash(self, command: str, output: str = "", error: bool = False) -> None:
        self.run("Bash", {"command": command}, ("Exit code 1\n" if error else "") + output, error)

    def edit(self, path: str) -> None:
        self.run("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "The file has been updated.")

    def api_error(self, message: str) -> None:
        self.add("assistant", isApiErrorMessage=True, message={
            "id": f"err_{self.n}", "role": "assistant", "model": "<synthetic>",
            "content": [{"type": "text", "text": f'API Error: 429 {{"type":"error","error":{{"message":"{message}"}}}}'}]})


def standing(s: Session) -> list[str]:
    request = transcript.latest_request(str(s.path))
    return [text for _, text in progress.standing(transcript.tool_steps(str(s.path)), request.end if request else 0)]


def test_an_error_nothing_answered_stands(tmp_path: Path):
    s = Work(tmp_path / "t.jsonl")
    s.user("Start the app.")
    s.bash("python app.py", TRACE + "KeyError: 'DATABASE_URL'", error=True)
    s.say("It needs DATABASE_URL; set it and tell me.")
    assert standing(s) == ["KeyError: 'DATABASE_URL' (in `python app.py`)"]


def test_the_same_step_succeeding_with_other_flags_clears_it_and_another_step_does_not(tmp_path: Path):
    s = Work(tmp_path / "t.jsonl")
    s.user("Build the site and deploy it.")
    s.bash("npm run build", "npm error Missing script: build", error=True)
    s.bash("cd web && npm run deploy", "npm error code E401", error=True)
    s.bash("npm run build -- --verbose 2>&1 | tail -5", "built in 2.1s")  # the same step, other flags
    s.bash("npm run lint", "0 problems")  # another step: the deploy error still stands
    s.bash("cat deploy.log", "Error: unauthorized")  # content shown is neither an error nor progress
    assert standing(s) == ["npm error code E401 (in `cd web && npm run deploy`)"]


def test_an_edit_the_error_does_not_survive_clears_it_but_a_recurrence_stands(tmp_path: Path):
    s = Work(tmp_path / "t.jsonl")
    s.user("Fix the crash on start.")
    s.bash("python app.py", TRACE + "ZeroDivisionError: division by zero", error=True)
    s.edit("app.py")
    assert standing(s) == []  # fixed by editing, not seen again
    s.bash("python app.py --port 9000", TRACE + "ZeroDivisionError: division by zero", error=True)
    assert standing(s) == ["ZeroDivisionError: division by zero (in `python app.py --port 9000`)"]


def test_a_commit_clears_what_failed_before_it(tmp_path: Path):
    s = Work(tmp_path / "t.jsonl")
    s.user("Tidy up and commit.")
    s.bash("make lint", "Makefile:3: *** missing separator.  Stop.\nmake: *** [lint] Error 2", error=True)
    assert standing(s)
    s.bash('git commit -am "Tidy"', "[main 1a2b3c4] Tidy\n 2 files changed, 3 insertions(+)\n")
    assert standing(s) == []


def test_errors_before_the_latest_request_are_earlier_work(tmp_path: Path):
    s = Work(tmp_path / "t.jsonl")
    s.user("Start the app.")
    s.bash("python app.py", TRACE + "KeyError: 'DATABASE_URL'", error=True)
    s.say("It needs DATABASE_URL.")
    s.user("Leave that; write the README instead.")
    s.say("Writing it.")
    assert standing(s) == []


def test_an_api_error_stands_until_claude_answers_again(tmp_path: Path):
    s = Work(tmp_path / "t.jsonl")
    s.user("Draft the grant application.")
    s.api_error("You have exceeded your quota")
    assert standing(s) == ["API Error: 429 You have exceeded your quota"]
    s.say("Here is the draft.")
    assert standing(s) == []


def test_done_since_the_request_names_commits_passing_tests_and_files(tmp_path: Path):
    s = Work(tmp_path / "t.jsonl")
    s.user("Start the app.")
    s.edit("/srv/shop/old.py")  # before the latest request: earlier work
    s.user("Add refunds.")
    for n in range(8):
        s.edit(f"/srv/shop/billing/refund_{n}.py")
    s.edit("/srv/shop/billing/refund_0.py")  # twice: named once
    s.bash("pytest tests/test_refunds.py", "===== 3 passed in 0.12s =====")
    s.bash("pytest tests/test_ledger.py", "===== 1 passed in 0.1s =====")
    s.bash("pytest tests/test_ledger.py", "FAILED tests/test_ledger.py::test_x\n===== 1 failed in 0.1s =====",
           error=True)  # its latest run failed: not done
    s.bash('git commit -am "Add refunds"', "[main 1a2b3c4] Add refunds\n 8 files changed\n")
    s.bash("git push origin main", "error: failed to push some refs to 'origin'", error=True)  # not done
    s.bash("git push origin main 2>&1", "To github.com:shop/shop.git\n   1a2b3c4..5d6e7f8  main -> main")
    request = transcript.latest_request(str(s.path))
    got = progress.done(transcript.tool_steps(str(s.path)), request.end, "/srv/shop")
    assert got == ["commit 1a2b3c4 on main: Add refunds", "pushed: `git push origin main 2>&1`",
                   "Tests passed: `pytest tests/test_refunds.py` (3 passed)",
                   "edited billing/refund_0.py, billing/refund_1.py, billing/refund_2.py, billing/refund_3.py, "
                   "billing/refund_4.py, billing/refund_5.py and 2 more"]
    for n in range(progress.DONE_ITEMS + 1):
        s.bash(f'git commit -m "step {n}"', f"[main {n + 1:07x}] step {n}\n")
    assert len(progress.done(transcript.tool_steps(str(s.path)), request.end, "/srv/shop")) == progress.DONE_ITEMS


def test_the_stop_hook_hands_over_only_what_still_blocks_and_the_offer_accepted(tmp_path: Path):
    data, work = tmp_path / "data", make_repo(tmp_path / "shop")
    s = Work(tmp_path / "t.jsonl")
    s.user("Ship the invoice exporter.")
    s.bash("python export.py", TRACE + "ModuleNotFoundError: No module named 'reportlab'", error=True)
    s.bash("pip install reportlab", "Successfully installed reportlab")
    s.bash("python export.py --all", "wrote 12 invoices")  # the same step: cleared
    s.edit(str(work / "export.py"))
    s.bash("git push origin main", "fatal: Authentication failed for 'https://example.invalid/shop.git'",
           error=True)
    s.say("Exported. The push failed: the remote refused the credentials. Want me to retry over SSH?")
    s.user("yes please")
    s.say("Please add your SSH key first.")
    env = hook_env(data, AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0")
    payload = {"session_id": SID, "transcript_path": str(s.path), "cwd": str(work), "hook_event_name": "Stop",
               "stop_hook_active": False}
    assert run_hook("stop", payload, data, env=env).returncode == 0
    wait_for(lambda: worker_idle(data, SID) and rows(data, "SELECT id FROM records WHERE type = 'handover'"),
             "the derived handover")
    [head] = rows(data, "SELECT title, body FROM records WHERE type = 'handover' AND superseded_at IS NULL")
    assert head["title"].startswith("Ship the invoice exporter. … then “yes please” to “")
    assert "retry over SSH?" in head["title"]
    assert "fatal: Authentication failed" in head["body"]
    assert "reportlab" not in head["body"]  # cleared by the same step succeeding later
    assert "Done since the request:\n- edited export.py" in head["body"]


def test_after_compaction_the_digest_shows_a_commit_once(tmp_path: Path):
    """The anchor's changes and the handover's "done since" name the same commit in the same words: the
    compact digest shows it once."""
    data, work = tmp_path / "data", make_repo(tmp_path / "shop")
    s = Work(tmp_path / "t.jsonl")
    s.user("Add refunds.")
    commit, out = 'git commit -am "Add refunds"', "[main 1a2b3c4] Add refunds\n 1 file changed\n"
    s.bash(commit, out)
    s.say("Committed.")
    env = hook_env(data, AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0")
    base = {"session_id": SID, "transcript_path": str(s.path), "cwd": str(work)}
    assert run_hook("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                      "tool_input": {"command": commit},
                                      "tool_response": {"stdout": out, "stderr": "", "interrupted": False}},
                    data, env=env).returncode == 0
    assert run_hook("stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False}, data,
                    env=env).returncode == 0
    wait_for(lambda: worker_idle(data, SID) and rows(data, "SELECT id FROM records WHERE type = 'handover'"),
             "the derived handover")
    [head] = rows(data, "SELECT body FROM records WHERE type = 'handover' AND superseded_at IS NULL")
    assert "commit 1a2b3c4 on main: Add refunds" in head["body"]
    assert run_hook("pre_compact", {**base, "hook_event_name": "PreCompact", "trigger": "manual",
                                    "custom_instructions": ""}, data, env=env).returncode == 0
    started = run_hook("session_start", {**base, "hook_event_name": "SessionStart", "source": "compact"}, data,
                       env=env)
    digest = context_of(started) or ""
    assert "Changes made" in digest and digest.count("1a2b3c4") == 1
