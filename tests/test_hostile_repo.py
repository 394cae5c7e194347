"""A hostile repository (issue 22, part 1): each kind of file a clone can hold (a symlink to /dev/zero, a FIFO,
a socket, a symlink out of the repository, a dangling symlink, a 4 GiB file, TOML and JSON nested 2,000 deep)
planted at every path agentctx reads, in a real git repository. Every hook runs as a process with JSON stdin,
then the CLI and the consolidation pass, each under a 2 GiB address-space limit and a timeout: each finishes,
exits as it should, keeps working with its defaults (the stored decision is still injected), reports each
file once in the log and names them in SessionStart's one notice line, and writes nothing outside the
repository and the data dir (nor through a symlink)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support import hostile
from tests.support.cli import BIN, UV
from tests.support.hooks import LAUNCH, ROOT, hook_env
from tests.support.models import TEST_MODEL
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX file kinds")

TITLE = "Payments retry three times with backoff"
HOOK_TIMEOUT = 90
CLI_TIMEOUT = 300


def _env(home: Path) -> dict[str, str]:
    return hook_env(home, AGENTCTX_EMBED_MODEL=str(TEST_MODEL))


def hook(name: str, payload: dict, home: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["sh", str(LAUNCH), name], input=json.dumps(payload).encode(), capture_output=True,
                          timeout=HOOK_TIMEOUT, env=_env(home), cwd=str(ROOT), preexec_fn=hostile.limit_memory())


def cli(home: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**_env(home), "PATH": os.path.dirname(UV) + os.pathsep + _env(home)["PATH"]}
    return subprocess.run([str(BIN), "--project", str(repo), *args], capture_output=True, text=True, env=env,
                          cwd=str(repo), timeout=CLI_TIMEOUT, preexec_fn=hostile.limit_memory(), stdin=subprocess.DEVNULL)


def _payloads(repo: Path, transcript: Path) -> list[tuple[str, dict]]:
    base = {"session_id": "s-hostile", "cwd": str(repo), "transcript_path": str(transcript)}
    return [
        ("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        ("user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                "prompt": "how many times do payments retry, and what backoff?"}),
        ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Write",
                           "tool_input": {"file_path": str(repo / "src" / "app.py"), "content": "x = 1\n"},
                           "tool_response": {"success": True}}),
        ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                           "tool_input": {"command": "make test"}, "tool_response": {"stdout": "2 passed"}}),
        ("cwd_changed", {**base, "hook_event_name": "CwdChanged", "old_cwd": str(repo), "new_cwd": str(repo / "src")}),
        ("subagent_start", {**base, "hook_event_name": "SubagentStart", "agent_id": "a1", "agent_type": "Explore"}),
        ("subagent_stop", {**base, "hook_event_name": "SubagentStop", "agent_id": "a1", "agent_type": "Explore",
                           "agent_transcript_path": str(transcript),
                           "last_assistant_message": "Payments retry three times; the backoff doubles."}),
        ("pre_compact", {**base, "hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""}),
        ("stop", {**base, "hook_event_name": "Stop"}),
        ("session_end", {**base, "hook_event_name": "SessionEnd", "reason": "other"}),
    ]


def _ignored(home: Path) -> list[str]:
    log = home / "logs" / "agentctx.log"
    return [ln for ln in log.read_text().splitlines() if " ignored: " in ln] if log.exists() else []


def _idle(home: Path) -> bool:
    """No detached extraction or consolidation is running (their lock files are gone)."""
    locks = home / "locks"
    return not locks.exists() or not [p for p in locks.iterdir() if p.suffix == ".lock" or ".lock." in p.name]


@pytest.mark.parametrize("kind", hostile.KINDS)
def test_every_entry_point_holds_against_a_hostile_repository(tmp_path: Path, kind: str) -> None:
    home = tmp_path / "data"
    repo, outside, transcript = hostile.make(tmp_path / "clone", kind)
    before = hostile.snapshot(outside)
    recorded = cli(home, repo, "record", "--type", "decision", "--title", TITLE)
    assert recorded.returncode == 0, recorded.stderr

    outputs = {}
    for name, payload in _payloads(repo, transcript):
        proc = hook(name, payload, home)
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        assert b"Traceback" not in proc.stderr, (name, proc.stderr[-2000:])
        outputs.setdefault(name, proc)
    wait_for(lambda: _idle(home), "the detached extraction and consolidation to finish", timeout=240)

    start = json.loads(outputs["session_start"].stdout)
    assert TITLE in start["hookSpecificOutput"]["additionalContext"], "defaults kept: the digest is injected"
    log_text = (home / "logs" / "agentctx.log").read_text()
    assert not re.search(r"(?i)\b(error|recursionerror|memoryerror)\b", log_text), log_text

    runs = {
        "status": cli(home, repo, "status"),
        "remote status": cli(home, repo, "remote", "status"),
        "consolidate": cli(home, repo, "consolidate"),
        "sync --yes": cli(home, repo, "sync", "--yes"),
        "team export": cli(home, repo, "team", "export"),
        "doctor": cli(home, repo, "doctor"),
    }
    refused_md = kind != "deep"  # a 2,000-deep Markdown line is still Markdown
    expected = {"status": 0, "remote status": 0, "consolidate": 0, "sync --yes": 1 if refused_md else 0,
                "team export": 1 if refused_md else 0}
    for what, proc in runs.items():
        assert "Traceback" not in proc.stderr, (what, proc.stderr[-2000:])
        if what in expected:
            assert proc.returncode == expected[what], (what, proc.returncode, proc.stdout[-1000:], proc.stderr[-1000:])
        if proc.returncode and what != "doctor":  # doctor prints its findings, not one error
            errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error: ")]
            assert len(errors) == 1, (what, proc.stderr)
    if refused_md:
        assert "CLAUDE.md" in runs["sync --yes"].stderr and "context.md" in runs["team export"].stderr

    # Reported once: one log line per refused file, however many processes met it.
    lines = _ignored(home)
    per_path: dict[str, int] = {}
    for ln in lines:
        path = re.search(r" (\S+) ignored: ", ln).group(1)
        per_path[path] = per_path.get(path, 0) + 1
    assert all(n == 1 for n in per_path.values()), lines
    expect = {str(repo / rel) for rel in (*hostile.PARSED, *hostile.MARKDOWN)} if kind != "deep" else \
        {str(repo / rel) for rel in hostile.PARSED}
    if kind != "huge":  # a source file is read up to its bound, not refused
        expect |= {str(repo / "src" / "app.py")} if kind not in ("deep",) else set()
    missing = expect - set(per_path)
    assert not missing, (missing, lines)
    if kind not in ("outside", "huge"):  # an empty transcript; a 4 GiB one is read up to its window
        assert str(transcript) in per_path, lines

    # Named in SessionStart's notice, in one line (a second session sees them all).
    again = hook("session_start", {"session_id": "s-2", "cwd": str(repo), "hook_event_name": "SessionStart",
                                   "source": "startup"}, home)
    notice = json.loads(again.stdout).get("systemMessage", "")
    assert "\n" not in notice and "agentctx ignored" in notice and "config.toml" in notice, notice
    assert TITLE in json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]

    # Nothing written outside the repository and the data dir, nor through a symlink.
    assert hostile.snapshot(outside) == before
    assert not (outside / "created-by-agentctx").exists()
    for rel in hostile.WRITTEN:
        if kind in ("dangling", "outside", "devzero"):
            assert os.path.islink(repo / rel), rel
    for rel in hostile.TARGETS:
        if kind in ("devzero", "outside", "dangling"):
            assert os.path.islink(repo / rel), f"{rel} was replaced"
