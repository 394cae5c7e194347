"""``agentctx uninstall`` run from a plugin installed by the pinned Claude Code CLI: it removes the uv script
environments of every agentctx plugin folder (also of one already gone, from what its preparation recorded),
the plugin copies Claude Code left behind, the cache folder; the store only with --purge-data and --yes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.bundle import uv_cache_dir
from tests.support.claude_cli import claude_env, claude_plugin
from tests.support.cli import UV

pytestmark = pytest.mark.claude
ROOT = Path(__file__).resolve().parents[2]


def script_env(script: Path, env: dict) -> Path:
    """Create the script's uv environment (offline, from the warm cache) and return its folder."""
    subprocess.run([UV, "sync", "--quiet", "--offline", "--script", str(script)], env=env, check=True,
                   capture_output=True)
    done = subprocess.run([UV, "sync", "--dry-run", "--offline", "--script", str(script)], env=env, check=True,
                          capture_output=True, text=True)
    line = next(x for x in (done.stdout + done.stderr).splitlines() if "Would use script environment at:" in x)
    return Path(line.split(": ", 1)[1].strip())


def test_uninstall_removes_what_agentctx_put_outside_the_store(claude, bundle, tmp_path):
    home = tmp_path / "home"
    assert claude_plugin(home, "marketplace", "add", str(bundle)).returncode == 0
    assert claude_plugin(home, "install", "agentctx@agentctx").returncode == 0
    installed = Path(next(e["installPath"] for e in json.loads(claude_plugin(home, "list", "--json").stdout)
                          if e["id"] == "agentctx@agentctx"))
    leftover = installed.with_name("0.0.9")  # an older version Claude Code left in its cache
    shutil.copytree(installed, leftover)
    data, cache = tmp_path / "data", tmp_path / "agentctx-cache"
    env = {**claude_env(home), "AGENTCTX_HOME": str(data), "AGENTCTX_CACHE_DIR": str(cache),
           "UV_CACHE_DIR": uv_cache_dir(), "UV_OFFLINE": "1", "PATH": f"{Path(UV).parent}:/usr/bin:/bin"}
    envs = {"leftover": script_env(leftover / "hooks" / "session_start.py", env)}

    # a plugin folder that was prepared (its environments recorded) and is gone since
    gone = tmp_path / "gone-plugin"
    for rel in (".claude-plugin/plugin.json", "hooks/pre_compact.py", "hooks/pre_compact.py.lock"):
        (gone / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(installed / rel, gone / rel)
    run = subprocess.run(["python3", "-m", "agentctx.prepare", "--root", str(gone)], env={
        **env, "PYTHONPATH": str(installed / "lib")}, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    envs["gone"] = Path(json.loads(run.stdout)["envs"]["hooks/pre_compact.py"]["python"]).parent.parent
    shutil.rmtree(gone)
    data.mkdir(exist_ok=True)  # (the preparation logged there)
    (data / "agentctx.db").write_bytes(b"the store")
    agentctx = [str(installed / "bin" / "agentctx")]  # the CLI of the installed plugin, as a user runs it

    dry = subprocess.run([*agentctx, "uninstall", "--dry-run", "--json"], env=env, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    paths = {(i["kind"], i["path"]) for i in planned["items"]}
    assert ("plugin-copy", str(leftover)) in paths and not any(p == str(installed) for _, p in paths)
    assert ("cache", str(cache)) in paths and not any(k == "data" for k, _ in paths)
    for folder in envs.values():
        assert ("environment", str(folder)) in paths
    cli_env = next(p for k, p in paths if k == "environment" and Path(p).name.startswith("agentctx-cli-"))
    assert all(Path(p).exists() for _, p in paths) and planned["kept"] == [str(data)]  # nothing removed yet

    done = subprocess.run([*agentctx, "uninstall", "--json"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert all(i["removed"] for i in report["items"]) and report["bytes"] > 0
    assert not leftover.exists() and not cache.exists() and not Path(cli_env).exists()
    assert not any(folder.exists() for folder in envs.values())
    assert installed.is_dir() and (data / "agentctx.db").read_bytes() == b"the store"  # the store stays

    refused = subprocess.run([*agentctx, "uninstall", "--purge-data"], env=env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL)
    assert refused.returncode != 0 and "--yes" in refused.stderr and (data / "agentctx.db").exists()
    purged = subprocess.run([*agentctx, "uninstall", "--purge-data", "--yes"], env=env, capture_output=True,
                            text=True)
    assert purged.returncode == 0, purged.stderr
    assert not data.exists() and "claude plugin uninstall agentctx@agentctx" in purged.stdout
    assert claude_plugin(home, "uninstall", "agentctx@agentctx").returncode == 0
    assert installed.is_dir()  # Claude Code keeps its copy; run from it once more, agentctx removes that too
    last = subprocess.run([*agentctx, "uninstall", "--json"], env=env, capture_output=True, text=True)
    assert last.returncode == 0, last.stdout + last.stderr
    assert ("plugin-copy", str(installed)) in {(i["kind"], i["path"]) for i in json.loads(last.stdout)["items"]}
    assert not os.path.exists(installed)
