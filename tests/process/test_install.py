"""Installing with the pinned Claude Code CLI, as the README says: Claude Code copies a local marketplace
folder (all of it but .git) into its plugin cache, so an export (``git archive``: no .venv, and without what
``.gitattributes`` marks ``export-ignore``: tests, benchmarks, CI) is what to install from; a clone works too,
at its full size."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.claude_cli import claude_plugin

pytestmark = pytest.mark.claude
ROOT = Path(__file__).resolve().parents[2]


def installed_folder(home: Path) -> Path:
    listed = claude_plugin(home, "list", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    ours = [e for e in json.loads(listed.stdout) if str(e.get("id", "")).startswith("agentctx@")]
    assert len(ours) == 1, listed.stdout
    return Path(ours[0]["installPath"])


def install(home: Path, source: Path) -> Path:
    for args in (("marketplace", "add", str(source)), ("install", "agentctx@agentctx")):
        run = claude_plugin(home, *args)
        assert run.returncode == 0, run.stdout + run.stderr
    return installed_folder(home)


def size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


INSTALLED_MAX = 3_000_000  # the README's "~3 MB"


def test_an_export_installs_only_what_a_user_runs(claude, tmp_path):
    export = tmp_path / "agentctx-plugin"
    export.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(export)], input=archive, check=True)  # the README's two commands
    copied = install(tmp_path / "home", export)
    names = {p.name for p in copied.iterdir()}
    assert {".claude-plugin", "hooks", "mcp", "lib", "bin", "commands", "README.md"} <= names
    assert not names & {"tests", "bench", ".ci", "scripts", "docs", "uv.lock", ".venv"}, names
    assert size(copied) < INSTALLED_MAX, size(copied)
    print(f"installed from an export: {size(copied)} bytes")


def test_a_fresh_clone_installs_without_a_virtual_environment(claude, tmp_path):
    clone = tmp_path / "agentctx-plugin"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    copied = install(tmp_path / "home", clone)
    assert copied != clone and (copied / ".claude-plugin" / "plugin.json").is_file()
    assert not (copied / ".venv").exists() and size(copied) < 10_000_000
    print(f"installed from a clone: {size(copied)} bytes")

    # what the README warns about: an untracked .venv in the folder is copied too
    (clone / ".venv" / "lib").mkdir(parents=True)
    (clone / ".venv" / "lib" / "site.bin").write_bytes(b"x" * 100_000)
    copied = install(tmp_path / "home2", clone)
    assert (copied / ".venv" / "lib" / "site.bin").is_file()
