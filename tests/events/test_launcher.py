"""hooks/launch.sh runs a hook's prepared uv environment directly while its lock is unchanged, and goes
through uv on any doubt (a changed lock, a missing interpreter, another uv), failing open as before.

Every case runs the real hook processes of a copy of the plugin (so its locks can be changed), with a
stand-in uv that logs each call and hands it to the real uv: which path a run took is read from that log,
never from timings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agentctx import envstamp, project
from agentctx.store import db, records
from tests.support.hooks import ROOT, context_of, hook_env

PROMPT = "why does the webhook signature test fail"


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """The launcher, the UserPromptSubmit script and lib/ copied (file times kept, so the locks are old)."""
    dest = tmp_path / "plugin"
    (dest / "hooks").mkdir(parents=True)
    for name in ("launch.sh", "user_prompt_submit.py", "user_prompt_submit.py.lock"):
        shutil.copy2(ROOT / "hooks" / name, dest / "hooks" / name)
    shutil.copytree(ROOT / "lib", dest / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@pytest.fixture
def uv(tmp_path: Path) -> tuple[Path, Path]:
    """(a stand-in uv that logs its calls and runs the real one, the log)."""
    real = shutil.which("uv", path=hook_env(tmp_path)["PATH"])
    assert real
    calls = tmp_path / "uv-calls"
    wrapper = tmp_path / "bin" / "uv"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, calls


@pytest.fixture
def stored(home: Path, repo: Path) -> None:
    conn = db.connect()
    records.add(conn, project.detect(str(repo)).id, type="bugfix", title="Webhook signature test used local time",
                body="The webhook signature test failed because the clock skew check used local time.")
    conn.close()


def run(plugin: Path, home: Path, repo: Path, uv: Path, tmp_path: Path, session: str) -> subprocess.CompletedProcess:
    env = hook_env(home, CLAUDE_PLUGIN_ROOT=str(plugin), AGENTCTX_UV=str(uv), TMPDIR=str(tmp_path),
                   AGENTCTX_CACHE_DIR=str(tmp_path / "cache"))
    payload = {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    return subprocess.run(["sh", str(plugin / "hooks" / "launch.sh"), "user_prompt_submit"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=str(repo),
                          timeout=120)


def uv_runs(calls: Path) -> int:
    return sum(1 for line in calls.read_text().splitlines() if line.startswith("run ")) if calls.exists() else 0


def record_of(plugin: Path, uv: Path, tmp_path: Path) -> Path:
    env = hook_env(tmp_path, AGENTCTX_UV=str(uv), AGENTCTX_CACHE_DIR=str(tmp_path / "cache"))
    found, stamp, _key = envstamp.locate(str(plugin / "hooks" / "user_prompt_submit.py"), env)
    assert found == str(uv) and stamp.startswith(str(tmp_path / "cache"))
    return Path(stamp)


def hooks_log(tmp_path: Path) -> list[str]:
    log = tmp_path / "agentctx-hooks.log"
    return log.read_text().splitlines() if log.exists() else []


def test_after_one_run_through_uv_the_next_runs_skip_it(plugin, uv, home, repo, tmp_path, stored):
    wrapper, calls = uv
    first = run(plugin, home, repo, wrapper, tmp_path, "s1")
    assert first.returncode == 0 and "Webhook signature test used local time" in context_of(first)
    assert uv_runs(calls) == 1
    stamp = record_of(plugin, wrapper, tmp_path)
    interpreter, key = stamp.read_text().splitlines()
    assert (Path(interpreter).parent.parent / "pyvenv.cfg").is_file() and key.startswith(f"uv={wrapper} ")
    assert not str(stamp).startswith(str(plugin)) and not any(p.name.startswith("launch") for p in plugin.iterdir())
    for session in ("s2", "s3"):
        again = run(plugin, home, repo, wrapper, tmp_path, session)
        assert again.returncode == 0 and context_of(again) == context_of(first)
    assert uv_runs(calls) == 1, "the prepared environment was run without uv"
    assert hooks_log(tmp_path) == []


def test_a_changed_lock_goes_through_uv_until_it_is_old_enough_to_trust(plugin, uv, home, repo, tmp_path, stored):
    wrapper, calls = uv
    run(plugin, home, repo, wrapper, tmp_path, "s1")
    assert uv_runs(calls) == 1
    lock = plugin / "hooks" / "user_prompt_submit.py.lock"
    lock.write_text(lock.read_text())  # rewritten now: newer than the record
    for session in ("s2", "s3"):
        proc = run(plugin, home, repo, wrapper, tmp_path, session)
        assert proc.returncode == 0 and "Webhook signature test used local time" in context_of(proc)
    assert uv_runs(calls) == 3, "a lock changed this recently is never trusted, nor recorded"
    past = time.time() - 60
    os.utime(lock, (past, past))
    record_of(plugin, wrapper, tmp_path).unlink()
    run(plugin, home, repo, wrapper, tmp_path, "s4")  # through uv, which records the environment again
    run(plugin, home, repo, wrapper, tmp_path, "s5")
    assert uv_runs(calls) == 4


def test_a_changed_script_goes_through_uv(plugin, uv, home, repo, tmp_path, stored):
    wrapper, calls = uv
    run(plugin, home, repo, wrapper, tmp_path, "s1")
    script = plugin / "hooks" / "user_prompt_submit.py"
    script.write_text(script.read_text())
    run(plugin, home, repo, wrapper, tmp_path, "s2")
    assert uv_runs(calls) == 2


def test_a_missing_interpreter_goes_through_uv_which_records_the_real_one(plugin, uv, home, repo, tmp_path, stored):
    wrapper, calls = uv
    run(plugin, home, repo, wrapper, tmp_path, "s1")
    stamp = record_of(plugin, wrapper, tmp_path)
    interpreter, key = stamp.read_text().splitlines()
    stamp.write_text(f"{tmp_path / 'gone' / 'bin' / 'python'}\n{key}\n")
    past = time.time() - 60  # the record itself is still newer than the lock: only the interpreter is missing
    os.utime(plugin / "hooks" / "user_prompt_submit.py.lock", (past - 60, past - 60))
    os.utime(plugin / "hooks" / "user_prompt_submit.py", (past - 60, past - 60))
    proc = run(plugin, home, repo, wrapper, tmp_path, "s2")
    assert proc.returncode == 0 and "Webhook signature test used local time" in context_of(proc)
    assert uv_runs(calls) == 2
    assert stamp.read_text().splitlines()[0] == interpreter
    run(plugin, home, repo, wrapper, tmp_path, "s3")
    assert uv_runs(calls) == 2


def test_a_record_made_by_another_uv_or_uv_setting_goes_through_uv(plugin, uv, home, repo, tmp_path, stored):
    wrapper, calls = uv
    run(plugin, home, repo, wrapper, tmp_path, "s1")
    stamp = record_of(plugin, wrapper, tmp_path)
    interpreter, key = stamp.read_text().splitlines()
    stamp.write_text(f"{interpreter}\n{key.replace(f'uv={wrapper}', 'uv=/elsewhere/uv')}\n")
    run(plugin, home, repo, wrapper, tmp_path, "s2")
    assert uv_runs(calls) == 2


def test_a_broken_environment_fails_open_and_the_next_run_goes_through_uv(plugin, uv, home, repo, tmp_path, stored):
    """The recorded interpreter exists but cannot run the hook (here it exits 3 at once): exit 0, no
    output, one line in the launcher's log, the record gone; the next run is through uv and injects."""
    wrapper, calls = uv
    run(plugin, home, repo, wrapper, tmp_path, "s1")
    stamp = record_of(plugin, wrapper, tmp_path)
    _interpreter, key = stamp.read_text().splitlines()
    broken = tmp_path / "broken-env" / "bin" / "python"
    broken.parent.mkdir(parents=True)
    broken.write_text("#!/bin/sh\ncat >/dev/null\necho 'Fatal Python error: init_fs_encoding' >&2\nexit 3\n")
    broken.chmod(0o755)
    stamp.write_text(f"{broken}\n{key}\n")
    past = time.time() - 60
    for name in ("user_prompt_submit.py", "user_prompt_submit.py.lock"):
        os.utime(plugin / "hooks" / name, (past - 60, past - 60))
    proc = run(plugin, home, repo, wrapper, tmp_path, "s2")
    assert proc.returncode == 0 and proc.stdout == b""
    (line,) = hooks_log(tmp_path)
    assert "launch user_prompt_submit: python exited 3" in line
    assert not stamp.exists() and uv_runs(calls) == 1
    proc = run(plugin, home, repo, wrapper, tmp_path, "s3")
    assert proc.returncode == 0 and "Webhook signature test used local time" in context_of(proc)
    assert uv_runs(calls) == 2


def test_uv_failing_on_the_path_through_it_still_fails_open(plugin, home, repo, tmp_path):
    """No record yet, uv fails (offline, nothing cached): exit 0, no output, the usual line, no record."""
    failing = tmp_path / "bin" / "uv"
    failing.parent.mkdir()
    failing.write_text("#!/bin/sh\ncat >/dev/null\nexit 2\n")
    failing.chmod(0o755)
    proc = run(plugin, home, repo, failing, tmp_path, "s1")
    assert proc.returncode == 0 and proc.stdout == b""
    assert hooks_log(tmp_path)[0].endswith("launch user_prompt_submit: uv exited 2")
    assert not list((tmp_path / "cache").rglob("user_prompt_submit.py"))


def test_a_record_is_written_only_for_a_lock_older_than_the_run(tmp_path):
    script = tmp_path / "hooks" / "x.py"
    script.parent.mkdir()
    script.write_text("pass\n")
    (tmp_path / "hooks" / "x.py.lock").write_text("version = 1\n")
    venv = tmp_path / "env"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    stamp = tmp_path / "cache" / "launch" / "x.py"
    now = time.time()
    assert not envstamp.write(str(stamp), "uv=u", str(script), str(venv / "bin" / "python"), now)
    assert not stamp.exists()
    assert not envstamp.write(str(stamp), "uv=u", str(script), "/usr/bin/python3", now + 60), "not a venv"
    assert envstamp.write(str(stamp), "uv=u", str(script), str(venv / "bin" / "python"), now + 60)
    assert stamp.read_text() == f"{venv / 'bin' / 'python'}\nuv=u\n"


def test_preparing_a_folder_records_its_hooks_environments(script_envs):
    """The suite's own preparation (agentctx.prepare, as the first SessionStart of an install runs it)
    leaves a record for every hook script whose environment uv synced."""
    hooks = {f"hooks/{p.name}" for p in (ROOT / "hooks").glob("*.py")}
    assert script_envs["recorded"] == len(hooks - set(script_envs["failed"])) > 0
    # Other tests run hooks with other uv settings since (a record under their key): record it again here
    # as prepare does, then read what the launcher will read in this environment.
    script = str(ROOT / "hooks" / "session_start.py")
    assert envstamp.for_prepared(str(ROOT), "hooks/session_start.py", time.time() + envstamp.MARGIN_S + 1)
    _uv, stamp, key = envstamp.locate(script)
    interpreter, was = Path(stamp).read_text().splitlines()
    assert was == key and (Path(interpreter).parent.parent / "pyvenv.cfg").is_file()
