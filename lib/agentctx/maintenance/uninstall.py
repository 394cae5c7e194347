"""What agentctx put outside its store, found and removed (``agentctx uninstall``).

* ``environment``: the uv script environments of every agentctx plugin folder (``<uv cache>/environments-v2/
  <script>-<hash>``). uv keys them by the script's path, so each is found the way uv finds it:
  ``uv python find --script`` on the scripts of each folder that still exists, and, for folders already
  gone, the environments the preparation recorded (``envs``: each script's Python) in ``<cache dir>/ready/``.
  Only a folder inside an ``environments-v*`` bucket with a ``pyvenv.cfg`` is ever taken.
* ``plugin-copy``: copies under ``<Claude config>/plugins/cache/agentctx/`` other than the installed one
  (Claude Code leaves the old versions there; ``claude plugin uninstall`` removes the installed one).
* ``cache``: agentctx's cache folder (``paths.cache_dir``).
* ``data``: the store and everything in the data folder, only when asked (``purge_data``).

``plan`` only looks; ``remove`` deletes what a plan lists, the script environments last (the command may
run from one of them).
"""

from __future__ import annotations

import json
import os
import shutil

from agentctx import paths, prepare, settings, spawn

KINDS = ("plugin-copy", "cache", "data", "environment")  # the order things are removed in


def size(path: str) -> int:
    """Bytes below ``path`` (links not followed)."""
    if os.path.isfile(path) or os.path.islink(path):
        return os.lstat(path).st_size
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _plugins_dir() -> str:
    return os.path.join(os.path.dirname(settings.claude_settings_path()), "plugins")


def installed_paths() -> set[str]:
    """The install paths Claude Code records for ``agentctx@*`` (``plugins/installed_plugins.json``)."""
    try:
        with open(os.path.join(_plugins_dir(), "installed_plugins.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        entries = data.get("plugins", {})
    except (OSError, ValueError, AttributeError):
        return set()
    out = set()
    for plugin_id, installs in entries.items() if isinstance(entries, dict) else ():
        if str(plugin_id).startswith("agentctx@") and isinstance(installs, list):
            out |= {os.path.abspath(i["installPath"]) for i in installs if isinstance(i, dict) and i.get("installPath")}
    return out


def plugin_copies() -> list[str]:
    """Every agentctx folder in Claude Code's plugin cache (``cache/<marketplace>/agentctx/<version>``)."""
    base = os.path.join(_plugins_dir(), "cache")
    found = []
    try:
        marketplaces = sorted(os.listdir(base))
    except OSError:
        return []
    for market in marketplaces:
        folder = os.path.join(base, market, "agentctx")
        try:
            versions = sorted(os.listdir(folder))
        except OSError:
            continue
        found += [os.path.join(folder, v) for v in versions if os.path.isdir(os.path.join(folder, v))]
    return found


def _markers() -> list[dict]:
    folder = os.path.join(paths.cache_dir(), "ready")
    out = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(state, dict):
            out.append(state)
    return out


def is_environment(path: str, script: str | None = None) -> bool:
    """A uv script environment: a folder in an ``environments-v*`` bucket with a ``pyvenv.cfg`` (and, given the
    script, named after it as uv names them: ``<stem, _ as ->-<hash>``)."""
    path = os.path.abspath(path)
    if script is not None:
        stem = os.path.splitext(os.path.basename(script))[0].replace("_", "-").lower()
        if not os.path.basename(path).startswith(stem + "-"):
            return False
    return (os.path.basename(os.path.dirname(path)).startswith("environments-v")
            and os.path.isfile(os.path.join(path, "pyvenv.cfg")))


def environments(roots: list[str], uv: str | None) -> dict[str, str]:
    """{environment folder: the script it belongs to} for every plugin folder in ``roots`` and every folder
    a preparation recorded."""
    found: dict[str, str] = {}
    for state in _markers():  # ``envs``: what the preparation recorded of each script's environment (its Python)
        recorded = state.get("envs")
        for rel, info in (recorded.items() if isinstance(recorded, dict) else ()):
            python = info.get("python") if isinstance(info, dict) else None
            env = os.path.dirname(os.path.dirname(python)) if isinstance(python, str) else ""
            if env and is_environment(env, rel):
                found[os.path.abspath(env)] = os.path.join(str(state.get("root", "?")), str(rel))
    if uv:
        for root in roots:
            if os.path.isdir(root):
                for rel, env in prepare.environments(root, prepare.scripts(root), uv).items():
                    found[os.path.abspath(env)] = os.path.join(root, rel)
    return found


def plan(*, purge_data: bool = False) -> list[dict]:
    """What ``remove`` would delete: ``{"kind", "path", "bytes", "why"}`` in removal order."""
    installed = installed_paths()
    copies = plugin_copies()
    roots = list(dict.fromkeys([prepare.plugin_root(), *copies,
                                *(str(s["root"]) for s in _markers() if isinstance(s.get("root"), str))]))
    items = [{"kind": "plugin-copy", "path": c, "why": "an old plugin version Claude Code left behind"}
             for c in copies if os.path.abspath(c) not in installed]
    if os.path.isdir(paths.cache_dir()):
        items.append({"kind": "cache", "path": paths.cache_dir(), "why": "agentctx's cache folder"})
    if purge_data and os.path.isdir(paths.data_dir()):
        items.append({"kind": "data", "path": paths.data_dir(), "why": "the store, logs and settings"})
    for env, script in sorted(environments(roots, spawn.find_uv()).items()):
        items.append({"kind": "environment", "path": env, "why": f"uv script environment of {script}"})
    for item in items:
        item["bytes"] = size(item["path"])
    return items


def remove(items: list[dict]) -> list[dict]:
    """Delete what ``plan`` listed (in its order); each item gets ``removed`` (and ``error`` if it failed)."""
    for item in sorted(items, key=lambda i: KINDS.index(i["kind"])):
        path = item["path"]
        if item["kind"] == "environment" and not is_environment(path):
            item.update(removed=False, error="not a uv script environment")
            continue
        try:
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
            item["removed"] = True
        except FileNotFoundError:
            item["removed"] = True
        except OSError as exc:
            item.update(removed=False, error=f"{type(exc).__name__}: {exc}")
    return items
