"""Script environments prepared before they are needed (agentctx.prepare): every entry script has a current
lock, and the first SessionStart of a plugin folder prepares them all in the background and says so once."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentctx import prepare
from tests.support import bundle
from tests.support.hooks import context_of, hook_env
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")


def test_every_entry_script_is_found_mcp_server_first():
    found = prepare.scripts(str(ROOT))
    assert found[0] == "mcp/server.py"
    expected = {f"hooks/{p.name}" for p in (ROOT / "hooks").glob("*.py")} | {"mcp/server.py"} | {
        f"lib/{p.name}" for p in (ROOT / "lib").glob("agentctx_*.py")}
    assert set(found) == expected


@pytest.mark.parametrize("script", prepare.scripts(str(ROOT)))
def test_every_entry_script_has_a_committed_current_lock(script):
    """``uv run --script X`` installs exactly what X.lock pins (no resolution on a user's machine)."""
    assert (ROOT / f"{script}.lock").is_file(), f"run: uv lock --script {script}"
    done = subprocess.run([UV, "lock", "--script", str(ROOT / script), "--check", "--offline"],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"{script}.lock is outdated; run: uv lock --script {script}\n{done.stderr}"


def payload(repo: Path, session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}


@pytest.mark.parametrize("python", ["found", "none"])
def test_the_first_session_start_prepares_every_environment_in_the_background(tmp_path, home, repo, monkeypatch,
                                                                              python):
    """With a Python 3.10+ the MCP server needs no environment, so nothing is said; without one (AGENTCTX_PYTHON=-)
    its tools arrive in the next session, and one line the person sees says so, once."""
    # The plugin as installed into a new folder (a stable one: uv keeps one environment per script path).
    plugin = bundle.copy_bundle(bundle.test_cache() / "bundle" / "prepare-check")
    monkeypatch.setenv("AGENTCTX_CACHE_DIR", str(tmp_path / "cache"))  # nothing prepared yet, as on a new machine
    env = hook_env(home, CLAUDE_PLUGIN_ROOT=str(plugin), **({"AGENTCTX_PYTHON": "-"} if python == "none" else {}))

    first = subprocess.run(["sh", str(plugin / "hooks" / "launch.sh"), "session_start"], env=env,
                           input=json.dumps(payload(repo)).encode(), capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    if python == "none":
        assert out["systemMessage"].startswith("agentctx is getting ready") and "\n" not in out["systemMessage"]
        assert "MCP tools arrive in the next session" in out["systemMessage"]
    else:
        assert "systemMessage" not in out, out
    assert "<agentctx-context" in context_of(first)  # the digest is injected as always

    marker = Path(prepare.marker(str(plugin)))
    done = wait_for(lambda: marker.exists() and json.loads(marker.read_text()).get("status") in ("done", "failed")
                    and json.loads(marker.read_text()), "the detached preparation", timeout=600)
    assert done["status"] == "done" and done["scripts"] == len(prepare.scripts(str(plugin))), done
    log = (home / "logs" / "agentctx.log").read_text()
    assert f"prepare {done['scripts']} script environments ready in" in log
    server_env = done["envs"]["mcp/server.py"]  # where the stdlib-started server finds its packages
    assert server_env["version"].startswith("3.") and any(Path(p, "numpy").is_dir() for p in server_env["paths"])

    # every environment exists now: the MCP server starts offline, without uv resolving or downloading anything
    server = subprocess.run([UV, "run", "--offline", "--quiet", "--script", str(plugin / "mcp" / "server.py")],
                            env={**env, "AGENTCTX_HOME": str(home)}, stdin=subprocess.DEVNULL, capture_output=True,
                            timeout=120)
    assert server.returncode == 0, server.stderr

    again = subprocess.run(["sh", str(plugin / "hooks" / "launch.sh"), "session_start"], env=env,
                           input=json.dumps(payload(repo, "s2")).encode(), capture_output=True, timeout=120)
    assert "systemMessage" not in json.loads(again.stdout)  # said once


def test_a_failed_preparation_is_retried_later_without_telling_again(tmp_path, home, monkeypatch):
    monkeypatch.setenv("AGENTCTX_CACHE_DIR", str(tmp_path / "cache"))
    plugin = tmp_path / "plugin"  # a plugin folder without scripts: the real worker finishes at once
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "agentctx", "version": "9.9.9"}')
    marker = Path(prepare.marker(str(plugin)))
    marker.parent.mkdir(parents=True)
    marker.write_text(json.dumps({"status": "failed", "finished": 0, "failed": {"mcp/server.py": "offline"}}))
    assert prepare.at_session_start(str(plugin)) is None  # quiet
    assert wait_for(lambda: json.loads(marker.read_text()).get("status") == "done", "the retry")
    recent = {"status": "failed", "finished": __import__("time").time(), "failed": {"x": "y"}}
    marker.write_text(json.dumps(recent))
    assert prepare.at_session_start(str(plugin)) is None
    assert json.loads(marker.read_text()) == recent  # too soon: not retried yet


def test_a_new_plugin_version_is_prepared_again(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCTX_CACHE_DIR", str(tmp_path / "cache"))
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"version": "1.0.0"}')
    before = prepare.marker(str(plugin))
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"version": "1.1.0"}')
    assert prepare.marker(str(plugin)) != before
