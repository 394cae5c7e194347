"""The fail-open frame's rules at their edges (``hookio``) and the launcher's (``hooks/launch.sh``, ``lib/find_uv.sh``):
what a damaged, locked or read-only store does to a hook, how long a hook waits for a lock, what is printed when
the handler printed too, and which uv the launcher runs. Every case is driven through the real entry point: the
frame in its own Python process (``frame.run``), the launcher with ``sh``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx import clock, hookio, project
from agentctx.store import db, projects, records
from tests.support.damage import damage_tables
from tests.support.hooks import ROOT, hook_env, run_hook

# ---------------------------------------------------------------- the frame

FRAME = """
import sys
sys.path.insert(0, {lib!r})
from agentctx.events import frame

def handler(event):
{body}

frame.run({event!r}, handler)
print("not reached")
"""

# A handler that notes each call in ``calls`` beside the store, so a test can count the retries.
COUNTED = """import os, sqlite3
os.makedirs(os.environ["AGENTCTX_HOME"], exist_ok=True)
calls = os.path.join(os.environ["AGENTCTX_HOME"], "calls")
with open(calls, "a") as fh:
    fh.write("call\\n")
"""


def run_frame(body: str, data: Path, *, event: str = "UserPromptSubmit", stdin: bytes = b'{"session_id": "s1"}',
              stdout=subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    code = FRAME.format(lib=str(ROOT / "lib"), event=event,
                        body="\n".join("    " + line for line in body.splitlines()))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(data), "AGENTCTX_HOME": str(data),
           "TMPDIR": str(data)}
    return subprocess.run([sys.executable, "-c", code], input=stdin, stdout=stdout, stderr=subprocess.PIPE,
                          env=env, timeout=60)


def log_lines(data: Path) -> list[str]:
    path = data / "logs" / "agentctx.log"
    return path.read_text().splitlines() if path.exists() else []


def calls(data: Path) -> int:
    path = data / "calls"
    return len(path.read_text().splitlines()) if path.exists() else 0


def notices(data: Path) -> list[str]:
    folder = data / "notices"
    return [p.read_text() for p in sorted(folder.iterdir())] if folder.exists() else []


def moved_aside(data: Path) -> list[str]:
    return sorted(p.name for p in data.glob("agentctx.db.corrupt-*"))


def seeded_store(data: Path, repo: Path, n: int = 30) -> Path:
    """A real store in ``data`` with ``n`` records of one project (the ``home`` fixture points at ``data``)."""
    conn = db.connect()
    proj = project.detect(str(repo))
    projects.register(conn, proj)
    with db.transaction(conn):
        for i in range(n):
            records.insert(conn, proj.id, type="decision", title=f"Decision {i} about the kafka topic t{i}",
                           body="Partitioned by account. " * 5, stamp=clock.now())
    conn.close()
    return data / "agentctx.db"


def test_a_damaged_full_text_index_is_rebuilt_and_the_handler_run_again_on_the_same_store(home, repo):
    """The handler's own search fails on the damaged index; the frame rebuilds the index from the records, tells
    the user nothing was lost, and the second run answers from the same store (nothing moved aside)."""
    store = seeded_store(home, repo)
    damage_tables(store, ("records_fts_idx", "records_fts_config"))
    body = COUNTED + """conn = sqlite3.connect(os.path.join(os.environ["AGENTCTX_HOME"], "agentctx.db"))
n = conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH 'kafka'").fetchone()[0]
return {"hookSpecificOutput": {"additionalContext": f"{n} found"}}"""
    proc = run_frame(body, home)
    assert proc.returncode == 0 and proc.stderr == b""
    assert json.loads(proc.stdout) == {"hookSpecificOutput": {"additionalContext": "30 found"}}
    assert calls(home) == 2
    assert moved_aside(home) == []
    (line,) = log_lines(home)
    assert " UserPromptSubmit the full-text index was damaged and was " in line and line.endswith("; retrying")
    (notice,) = notices(home)
    assert notice.startswith("agentctx: the full-text index was damaged") and notice.endswith("; nothing was lost.")


@pytest.mark.parametrize("error", ["database disk image is malformed", "file is not a database"])
def test_a_damaged_store_is_moved_aside_and_the_handler_run_once_more_on_a_fresh_one(home, repo, error):
    """A damaged file (not the index: its other tables are sound, so there is no index to rebuild) is moved aside,
    never overwritten; the user is told at the next SessionStart; the handler runs again, once, and its answer is
    printed."""
    seeded_store(home, repo)
    body = COUNTED + f"""if len(open(calls).read().splitlines()) == 1:
    raise sqlite3.DatabaseError({error!r})
return {{"hookSpecificOutput": {{"additionalContext": "second run"}}}}"""
    proc = run_frame(body, home)
    assert proc.returncode == 0 and proc.stderr == b""
    assert json.loads(proc.stdout) == {"hookSpecificOutput": {"additionalContext": "second run"}}
    assert calls(home) == 2
    (moved,) = moved_aside(home)
    (line,) = log_lines(home)
    assert f" UserPromptSubmit store damaged ({error}); moved to " in line and moved in line
    assert line.endswith("; retrying on a fresh store")
    (notice,) = notices(home)
    assert "the context store was damaged" in notice and moved in notice


def test_a_store_damaged_twice_in_a_row_is_moved_aside_once_and_the_hook_gives_up(home, repo):
    seeded_store(home, repo)
    body = COUNTED + 'raise sqlite3.DatabaseError("database disk image is malformed")'
    proc = run_frame(body, home)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert calls(home) == 2 and len(moved_aside(home)) == 1
    first, second = log_lines(home)
    assert " UserPromptSubmit store damaged (database disk image is malformed); moved to " in first
    assert second.endswith(" UserPromptSubmit error: DatabaseError: database disk image is malformed")


@pytest.mark.parametrize(("error", "said"), [
    ('sqlite3.OperationalError("database is locked")', "is busy (another agentctx process holds a lock): try again"
                                                       " (database is locked)"),
    ('sqlite3.OperationalError("attempt to write a readonly database")',
     "is read-only: nothing was written (attempt to write a readonly database)"),
    ('OSError(28, "No space left on device")', "is full"),
])
def test_a_locked_read_only_or_full_store_is_named_as_such_and_never_moved_or_retried(home, repo, error, said):
    """Not damage: the store stays where it is, the handler is not run again, and the log line says what the user
    can act on."""
    seeded_store(home, repo)
    proc = run_frame(COUNTED + f"raise {error}", home)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert calls(home) == 1 and moved_aside(home) == [] and notices(home) == []
    (line,) = log_lines(home)
    assert " UserPromptSubmit error: " in line and said in line, line


def test_any_other_error_is_logged_in_its_own_words(home):
    proc = run_frame(COUNTED + 'raise RuntimeError("the store is locked, said the handler")', home)
    assert proc.returncode == 0 and proc.stdout == b""
    (line,) = log_lines(home)
    assert line.endswith(" UserPromptSubmit error: RuntimeError: the store is locked, said the handler")
    assert calls(home) == 1


def test_a_handler_that_printed_to_a_closed_stdout_still_exits_0(tmp_path):
    """Claude Code gone before the hook ends: the text the handler left in Python's own stdout buffer cannot be
    written when the frame flushes it on the way out; the hook still exits 0 and prints nothing on stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = run_frame('print("a line of its own")\nreturn None', tmp_path, stdout=write)
    finally:
        os.close(write)
    assert proc.returncode == 0 and proc.stderr == b""


def test_a_handler_that_printed_and_returned_nothing_exits_0_with_what_it_printed(tmp_path):
    proc = run_frame('print("a line of its own")\nreturn None', tmp_path)
    assert proc.returncode == 0 and proc.stdout == b"a line of its own\n" and log_lines(tmp_path) == []


def test_an_oversized_stdin_is_read_no_further_than_16_mib_and_one_byte():
    """Telling that stdin is over the limit costs one byte past it, never the rest of a runaway payload."""
    import io

    limit = 16 * 1024 * 1024
    stream = io.BytesIO(b'{"prompt": "' + b"x" * (limit + 4096) + b'"}')
    with pytest.raises(ValueError, match=f"stdin larger than {limit} bytes"):
        hookio.read_payload(stream)
    assert stream.tell() == limit + 1


# ---------------------------------------------------------------- how long a hook waits for a lock


@pytest.mark.parametrize(("module", "handler", "event"), [
    ("agentctx.events.user_prompt_submit", "on_user_prompt_submit", "UserPromptSubmit"),
    ("agentctx.events.session_start", "on_session_start", "SessionStart"),
])
def test_a_hook_waits_1000_ms_for_a_store_another_process_writes(home, repo, monkeypatch, module, handler, event):
    """A hook on the hot path waits at most a second for a lock (the CLI and workers wait 5000 ms): the busy
    timeout of the connection the handler really opens."""
    import importlib

    seeded_store(home, repo)
    opened = []
    real_connect = db.connect

    def connect(*args, **kwargs):
        conn = real_connect(*args, **kwargs)
        opened.append(conn.execute("PRAGMA busy_timeout").fetchone()[0])
        return conn

    monkeypatch.setattr(db, "connect", connect)
    on_event = getattr(importlib.import_module(module), handler)
    on_event(hookio.HookEvent.of(event, session_id="s1", cwd=str(repo), source="startup",
                                 prompt="which kafka topic is partitioned by account"))
    assert opened and set(opened) == {1000}


# ---------------------------------------------------------------- the launcher and which uv it runs


def find_uv(env: dict[str, str]) -> str:
    """``lib/find_uv.sh`` as the launcher sources it: the uv it settles on ("" for none)."""
    proc = subprocess.run(["sh", "-c", '. "$1"; find_uv; printf %s "$uv_bin"', "sh", str(ROOT / "lib" / "find_uv.sh")],
                          env=env, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def bare_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal hook environment with no uv on it unless a test puts one there."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), **extra}


def no_system_uv(tmp_path: Path) -> None:
    if find_uv(bare_env(tmp_path / "nobody")):
        pytest.skip("this machine has uv in a system folder find_uv always looks in")


def test_a_real_uv_is_preferred_to_a_shim_found_before_it(tmp_path):
    """A version-manager shim costs ~50 ms a call: a real uv found later in the search order wins over it."""
    shim = executable(tmp_path / "mise" / "shims" / "uv")
    real = executable(tmp_path / "user" / ".local" / "bin" / "uv")
    assert find_uv(bare_env(tmp_path / "user", XDG_BIN_HOME=str(shim.parent))) == str(real)
    assert find_uv(bare_env(tmp_path / "user", PATH=f"{shim.parent}:/usr/bin:/bin")) == str(real)


def test_the_first_shim_is_used_when_there_is_no_real_uv(tmp_path):
    no_system_uv(tmp_path)
    first = executable(tmp_path / "asdf" / "shims" / "uv")
    second = executable(tmp_path / "pyenv" / "shims" / "uv")
    env = bare_env(tmp_path / "user", XDG_BIN_HOME=str(first.parent), PATH=f"{second.parent}:/usr/bin:/bin")
    assert find_uv(env) == str(first)
    assert find_uv(bare_env(tmp_path / "user", PATH=f"{second.parent}:/usr/bin:/bin")) == str(second)


def test_agentctx_uv_comes_first_and_a_missing_or_non_executable_one_is_passed_over(tmp_path):
    real = executable(tmp_path / "user" / ".local" / "bin" / "uv")
    chosen = executable(tmp_path / "chosen" / "uv")
    assert find_uv(bare_env(tmp_path / "user", AGENTCTX_UV=str(chosen))) == str(chosen)
    assert find_uv(bare_env(tmp_path / "user", AGENTCTX_UV=str(tmp_path / "missing"))) == str(real)
    chosen.chmod(0o644)
    assert find_uv(bare_env(tmp_path / "user", AGENTCTX_UV=str(chosen))) == str(real)


def fake_uv(folder: Path, code: int, stdout: str = "") -> Path:
    """An executable standing in for uv: reads the hook's stdin, prints ``stdout``, exits ``code``."""
    return executable(folder / "uv", "#!/bin/sh\ncat >/dev/null\n"
                      + (f"printf '%s' '{stdout}'\n" if stdout else "") + f"exit {code}\n")


@pytest.mark.parametrize("code", [1, 2])
def test_the_launcher_exits_0_when_uv_exits_non_zero(tmp_path, code):
    """uv's exit 2 passed on would erase the user's prompt (UserPromptSubmit) or keep Claude going (Stop)."""
    uv = fake_uv(tmp_path / "bin", code, stdout='{"partial": true}')
    env = hook_env(tmp_path / "data", AGENTCTX_UV=str(uv), TMPDIR=str(tmp_path))
    proc = run_hook("user_prompt_submit", {"prompt": "x"}, tmp_path / "data", env=env)
    assert proc.returncode == 0 and proc.stdout == b'{"partial": true}'
    assert (tmp_path / "agentctx-hooks.log").read_text().endswith(f" launch user_prompt_submit: uv exited {code}\n")


def test_the_launcher_runs_the_uv_it_found_and_passes_its_output_on(tmp_path):
    uv = fake_uv(tmp_path / "bin", 0, stdout='{"ok": true}')
    env = hook_env(tmp_path / "data", AGENTCTX_UV=str(uv), TMPDIR=str(tmp_path))
    proc = run_hook("session_start", {"source": "startup"}, tmp_path / "data", env=env)
    assert proc.returncode == 0 and proc.stdout == b'{"ok": true}' and proc.stderr == b""


def test_without_uv_session_start_prints_one_notice_and_other_hooks_nothing(tmp_path):
    no_system_uv(tmp_path)
    env = {**bare_env(tmp_path / "nobody"), "CLAUDE_PLUGIN_ROOT": str(ROOT), "TMPDIR": str(tmp_path)}
    start = run_hook("session_start", {"source": "startup"}, tmp_path / "data", env=env)
    assert start.returncode == 0 and start.stderr == b""
    message = json.loads(start.stdout)["systemMessage"]
    assert message.startswith("agentctx is inactive: uv was not found.") and "\n" not in message
    prompt = run_hook("user_prompt_submit", {"prompt": "x"}, tmp_path / "data", env=env)
    assert prompt.returncode == 0 and prompt.stdout == b"" and prompt.stderr == b""
    assert not (tmp_path / "agentctx-hooks.log").exists()
