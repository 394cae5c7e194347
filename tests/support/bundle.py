"""The plugin as a fresh clone has it, copied once per test run to a stable path.

uv keys a PEP 723 script's environment by the script's path, so a new copy per test made a
new environment per hook script per test (hundreds of them in the uv cache). One copy at a
fixed place under the test cache reuses the same environments run after run.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cache() -> Path:
    return Path(os.environ.get("AGENTCTX_TEST_CACHE") or Path.home() / ".cache" / "agentctx-test").expanduser()


def exported(names: list[str]) -> list[str]:
    """``names`` without the paths ``.gitattributes`` marks ``export-ignore`` (what ``git archive`` leaves out)."""
    attrs = subprocess.run(["git", "check-attr", "-z", "--stdin", "export-ignore"], cwd=ROOT, check=True,
                           input="\0".join(names).encode(), capture_output=True).stdout.decode().split("\0")
    ignored = {attrs[i] for i in range(0, len(attrs) - 2, 3) if attrs[i + 2] == "set"}
    return [n for n in names if n not in ignored]


def copy_bundle(dest: Path) -> Path:
    """Copy tracked and new (unignored) files of the checkout to ``dest`` (replacing it), as an export has them:
    without what ``.gitattributes`` marks ``export-ignore`` (tests, benchmarks, CI: what a user never runs)."""
    if dest.exists():
        shutil.rmtree(dest)
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
        check=True,
    ).stdout.decode().split("\0")
    for name in exported([n for n in names if n]):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def stable_bundle() -> Path:
    """A fresh copy of the plugin at ``<test cache>/bundle/agentctx``."""
    return copy_bundle(test_cache() / "bundle" / "agentctx")


@functools.cache
def uv_cache_dir() -> str:
    """The uv cache the developer's shell uses (``uv cache dir``: UV_CACHE_DIR, XDG_CACHE_HOME, ~/.cache/uv)."""
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    done = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else str(Path.home() / ".cache" / "uv")


def plugin_env(data: Path, *, llm: bool = False, **extra: str) -> dict[str, str]:
    """What hooks and the MCP server need inside the CLI's scrubbed environment (its HOME is a temporary
    folder): our store, uv's cache (prepared by the ``bundle`` fixture) and what the user's shell passes
    on (``scriptenvs.passthrough``); model calls from the Stop worker only when ``llm`` is set."""
    from tests.support.scriptenvs import passthrough

    env = {
        **{k: v for k, v in passthrough().items() if k != "XDG_CACHE_HOME"},  # the CLI's own caches stay in its HOME
        "AGENTCTX_HOME": str(data),
        "UV_CACHE_DIR": uv_cache_dir(),
    }
    if not llm:
        env["AGENTCTX_LLM"] = "0"
    env.update(extra)
    return env
