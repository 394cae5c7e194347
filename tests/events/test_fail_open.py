"""Fail open, at every layer a hook goes through: the frame (``frame.run``), each hook script on its own, and the
launcher (``hooks/launch.sh``) when uv itself fails. Any error means exit 0, no output, one log line: exit 2 from
UserPromptSubmit would erase the user's prompt, and from Stop it would keep Claude going."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hooks import ROOT, hook_env, run_hook
from tests.support.waiting import wait_for

SCRIPTS = sorted(p.stem for p in (ROOT / "hooks").glob("*.py"))
BAD_STDIN = {"empty": b"", "text": b"not json", "truncated": b'{"session_id": ', "array": b"[1, 2]",
             "binary": b"\xff\xfe\x00garbage"}


def log_lines(data: Path) -> list[str]:
    path = data / "logs" / "agentctx.log"
    return path.read_text().splitlines() if path.exists() else []


# ---------------------------------------------------------------- the frame


FRAME = """
import sys
sys.path.insert(0, {lib!r})
from agentctx.events import frame

def handler(event):
{body}

frame.run("UserPromptSubmit", handler)
print("not reached")
"""


def run_frame(body: str, data: Path, stdin: bytes = b'{"prompt": "hello", "session_id": "s1"}', **env: str):
    code = FRAME.format(lib=str(ROOT / "lib"), body="\n".join("    " + line for line in body.splitlines()))
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(data), "AGENTCTX_HOME": str(data), **env}
    return subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, env=environ, timeout=60)


@pytest.mark.parametrize(("body", "logged"), [
    ('raise RuntimeError("boom")', "error: RuntimeError: boom"),
    ('raise KeyError("gone")', "error: KeyError: 'gone'"),
    ("raise KeyboardInterrupt", "error: KeyboardInterrupt"),
    ("raise MemoryError", "error: MemoryError"),
    ("return {'hookSpecificOutput': object()}", "error: TypeError"),  # output that cannot be printed
])
def test_an_exception_in_the_handler_exits_0_silently_with_one_log_line(tmp_path, body, logged):
    proc = run_frame(body, tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == b"" and proc.stderr == b""
    lines = log_lines(tmp_path)
    assert len(lines) == 1 and " UserPromptSubmit " in lines[0] and logged in lines[0], lines


@pytest.mark.parametrize("code", [1, 2])
def test_a_handler_that_exits_non_zero_still_exits_0(tmp_path, code):
    proc = run_frame(f"sys.exit({code})", tmp_path)
    assert proc.returncode == 0 and proc.stdout == b""
    assert log_lines(tmp_path) == [], "SystemExit is a way out, not an error to log"


def test_the_handler_gets_the_event_and_its_output_is_printed_as_json(tmp_path):
    body = 'return {"hookSpecificOutput": {"additionalContext": event.prompt + " " + event.session_id}}'
    proc = run_frame(body, tmp_path)
    assert proc.returncode == 0 and proc.stderr == b""
    assert json.loads(proc.stdout) == {"hookSpecificOutput": {"additionalContext": "hello s1"}}
    assert log_lines(tmp_path) == []


def test_output_is_utf8_json_and_interrupts_are_typed(tmp_path):
    body = ('return {"hookSpecificOutput": {"additionalContext": "数据库 " + repr(event.is_interrupt)}}')
    proc = run_frame(body, tmp_path, stdin=json.dumps({"is_interrupt": True}).encode())
    assert proc.stdout == '{"hookSpecificOutput": {"additionalContext": "数据库 True"}}'.encode()
    for value in (False, "true", 1, None):
        proc = run_frame(body, tmp_path, stdin=json.dumps({"is_interrupt": value}).encode())
        assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == "数据库 False", value


def test_a_closed_stdout_still_exits_0(tmp_path):
    """Claude Code gone (the pipe closed) while the hook prints: exit 0 all the same."""
    code = FRAME.format(lib=str(ROOT / "lib"), body='    return {"hookSpecificOutput": {"x": "y" * 300000}}')
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-c", code], input=b"{}", stdout=write, stderr=subprocess.PIPE,
                              env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
                                   "AGENTCTX_HOME": str(tmp_path)}, timeout=60)
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr
    assert any("BrokenPipeError" in line for line in log_lines(tmp_path))


def test_nothing_is_printed_for_an_empty_answer(tmp_path):
    proc = run_frame("return None", tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"" and log_lines(tmp_path) == []


@pytest.mark.parametrize("stdin", list(BAD_STDIN.values()), ids=list(BAD_STDIN))
def test_bad_stdin_never_reaches_the_handler(tmp_path, stdin):
    proc = run_frame('raise AssertionError("the handler ran")', tmp_path, stdin=stdin)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    (line,) = log_lines(tmp_path)
    assert "the handler ran" not in line and " UserPromptSubmit error: " in line


def test_disabled_means_no_handler_and_no_log(tmp_path):
    proc = run_frame('raise AssertionError("the handler ran")', tmp_path, AGENTCTX_DISABLE="1")
    assert proc.returncode == 0 and proc.stdout == b"" and log_lines(tmp_path) == []


def test_stdin_is_read_up_to_16_mib():
    from agentctx import hookio

    limit = 16 * 1024 * 1024
    head = b'{"prompt": "'
    exact = head + b"x" * (limit - len(head) - 2) + b'"}'
    assert len(exact) == limit
    assert len(hookio.read_payload(io.BytesIO(exact))["prompt"]) == limit - len(head) - 2
    with pytest.raises(ValueError, match="larger than"):
        hookio.read_payload(io.BytesIO(exact[:-2] + b'x"}'))


@pytest.mark.parametrize(("stdin", "error"), [(b"  \n ", "empty stdin"), (b"[1]", "not an object"),
                                              (b'"text"', "not an object")])
def test_stdin_must_be_one_json_object(stdin, error):
    from agentctx import hookio

    with pytest.raises(ValueError, match=error):
        hookio.read_payload(io.BytesIO(stdin))


# ---------------------------------------------------------------- each hook script on its own


def test_every_hook_script_is_covered():
    assert {"session_start", "user_prompt_submit", "post_tool_use", "pre_compact", "stop", "session_end"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("stdin", list(BAD_STDIN.values()), ids=list(BAD_STDIN))
def test_each_hook_script_alone_with_bad_stdin_exits_0_with_no_output(tmp_path, script, stdin):
    """The script run directly by Python (no launcher, no uv): the frame alone keeps it open."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "AGENTCTX_HOME": str(tmp_path / "data"),
           "AGENTCTX_LLM": "0", "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(ROOT / "hooks" / f"{script}.py")], input=stdin, capture_output=True,
                          env=env, cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"" and proc.stderr == b""
    assert len(log_lines(tmp_path / "data")) == 1


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_hook_script_alone_with_an_unusable_store_exits_0_with_no_output(tmp_path, script, repo):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "AGENTCTX_HOME": str(blocker / "data"),
           "AGENTCTX_LLM": "0", "TMPDIR": str(tmp_path)}
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "X", "source": "startup",
               "prompt": "why is the webhook test flaky", "tool_name": "Bash", "reason": "other",
               "tool_input": {"command": "pytest"}, "tool_response": {"stdout": "1 failed", "exit_code": 1}}
    proc = subprocess.run([sys.executable, str(ROOT / "hooks" / f"{script}.py")], input=json.dumps(payload).encode(),
                          capture_output=True, env=env, cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"" and proc.stderr == b""


# ---------------------------------------------------------------- the launcher


def fake_uv(folder: Path, code: int, stdout: str = "") -> Path:
    """An executable standing in for uv that fails as uv does when it cannot resolve or fetch packages."""
    folder.mkdir(parents=True, exist_ok=True)
    uv = folder / "uv"
    uv.write_text("#!/bin/sh\ncat >/dev/null\n"
                  + (f"printf '%s' '{stdout}'\n" if stdout else "")
                  + "echo 'error: Failed to fetch: https://pypi.org/simple/sqlite-utils/' >&2\n"
                  + f"exit {code}\n")
    uv.chmod(0o755)
    return uv


@pytest.mark.parametrize("code", [1, 2, 101])
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_launcher_exits_0_when_uv_fails(tmp_path, repo, script, code):
    uv = fake_uv(tmp_path / "bin", code)
    env = hook_env(tmp_path / "data", AGENTCTX_UV=str(uv), TMPDIR=str(tmp_path), AGENTCTX_CACHE_DIR=str(tmp_path))
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": "anything"}
    proc = run_hook(script, payload, tmp_path / "data", env=env)
    assert proc.returncode == 0 and proc.stderr == b""
    if script == "session_start":  # one line the person sees: why, and the fix (tests/test_uv_failures.py)
        assert "PyPI (files.pythonhosted.org) could not be reached" in json.loads(proc.stdout)["systemMessage"]
    else:
        assert proc.stdout == b""
    log = tmp_path / "agentctx-hooks.log"
    wait_for(lambda: log.exists() and log.read_text().strip(), "the launcher's log line (SessionEnd runs detached)")
    (line,) = log.read_text().splitlines()
    assert line.endswith(f"launch {script}: uv exited {code}: error: Failed to fetch: "
                         "https://pypi.org/simple/sqlite-utils/"), line


def test_the_launcher_uses_agentctx_uv_first_and_passes_stdin_and_stdout(tmp_path, repo):
    """The same fake uv that succeeds: whatever it prints is the hook's output, and nothing is logged."""
    uv = fake_uv(tmp_path / "bin", 0, stdout='{"ok": true}')
    env = hook_env(tmp_path / "data", AGENTCTX_UV=str(uv), TMPDIR=str(tmp_path))
    proc = run_hook("user_prompt_submit", {"prompt": "x"}, tmp_path / "data", env=env)
    assert proc.returncode == 0 and proc.stdout == b'{"ok": true}'
    assert not (tmp_path / "agentctx-hooks.log").exists()


def test_the_launcher_exits_0_even_when_the_hook_script_itself_fails(tmp_path, repo):
    """A plugin folder whose hook script is broken (a bad update): uv runs it, Python fails, the launcher
    still exits 0 and logs the exit code."""
    plugin = tmp_path / "plugin"
    (plugin / "hooks").mkdir(parents=True)
    (plugin / "lib").mkdir()
    (plugin / "hooks" / "launch.sh").write_text((ROOT / "hooks" / "launch.sh").read_text())
    (plugin / "lib" / "find_uv.sh").write_text((ROOT / "lib" / "find_uv.sh").read_text())
    (plugin / "hooks" / "user_prompt_submit.py").write_text(
        "# /// script\n# dependencies = []\n# ///\nimport sys\nsys.exit(2)\n")
    env = hook_env(tmp_path / "data", CLAUDE_PLUGIN_ROOT=str(plugin), TMPDIR=str(tmp_path))
    proc = subprocess.run(["sh", str(plugin / "hooks" / "launch.sh"), "user_prompt_submit"], input=b"{}",
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout == b""
    assert "launch user_prompt_submit: uv exited 2" in (tmp_path / "agentctx-hooks.log").read_text()
