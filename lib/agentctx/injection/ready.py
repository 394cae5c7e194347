"""SessionStart on stat checks alone: a digest sealed for a folder.

A SessionStart that opens the store, finds its cached digest current (``digest.current``) and has nothing
else to say (no notice, no team file to import, no session left open) seals that answer for its folder: the
seal names every file the answer was read from (the store and its WAL, the git files that give the
project, the settings files, the team file, the notice folders, the digest cache) with what ``stat`` says
of each, and a hash of the environment variables that could change it. The next SessionStart in that folder
compares those ``stat`` results, reads the cached digest and is done: no ``sqlite3``, no ``re``, no
``json`` package, a few dozen system calls.

Why a ``stat`` is enough: every write to the store appends to its WAL (or, once checkpointed, rewrites the
main file), so a write after the seal changes the size, the modification time or the inode of one of the
two. A WAL that is absent and one that is empty are the same state (SQLite deletes the WAL when its last
connection closes, and an empty one is made again by the next reader), so readers do not break the seal.
What a ``stat`` cannot see is a second change within one tick of the file system's clock; so nothing is
sealed whose modification or change time lies within ``MARGIN_NS`` of the moment the sealing run began
(``COARSE_MARGIN_NS`` on file systems that keep whole seconds): a change during or after the run then
always shows as a new time. This is git's "racily clean" rule.

Stdlib and base modules only: this is SessionStart's whole import path when the seal holds.
"""

from __future__ import annotations

import os
import stat

from agentctx import fsio, jsonfast, paths
from agentctx.project import sha256  # the builtin hash, without hashlib

VERSION = 1
MARGIN_NS = 50_000_000  # a file changed this close to the sealing run's start may change again unseen
COARSE_MARGIN_NS = 2_000_000_000  # the same where the file system keeps whole seconds (HFS+, FAT, some NFS)
# What the answer may depend on in the environment: where the store, the cache and the settings are, the
# plugin's folder and options, whether the login path is wanted, the clock tests fix. Not the PATH (uv and
# virtual environments change it; a seal is only made once the login line has nothing left to say).
ENV_NAMES = ("HOME", "LOCALAPPDATA", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "AGENTCTX_HOME",
             "AGENTCTX_CACHE_DIR", "AGENTCTX_LLM", "AGENTCTX_CLAUDE_BIN", "AGENTCTX_NOW", "ANTHROPIC_API_KEY",
             "CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT")
ENV_PREFIXES = ("CLAUDE_PLUGIN_OPTION_",)


class Sealed:
    """A sealed SessionStart answer: the project (id, name, root, remote) and the digest to inject."""

    __slots__ = ("project", "text", "record_ids", "tokens")

    def __init__(self, project: dict, text: str, record_ids: list[str], tokens: int) -> None:
        self.project, self.text, self.record_ids, self.tokens = project, text, record_ids, tokens


def environment_key() -> str:
    """A hash of the environment variables the answer may depend on (values never stored as they are)."""
    names = sorted(n for n in os.environ if n in ENV_NAMES or n.startswith(ENV_PREFIXES))
    text = "\0".join(f"{n}={os.environ[n]}" for n in names)
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_signature(path: str) -> list | None:
    """What ``stat`` says of ``path`` (None: nothing there). A folder is its type and inode only: its times
    move with every file made in it. A symbolic link is the link and what it points to."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return ["dir", st.st_dev, st.st_ino]
    sig = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode]
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
            sig += [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode]
        except OSError:
            sig.append(None)
    return sig


def wal_signature(path: str) -> list | None:
    """A WAL's signature, where absent and empty are one state (None): both mean no frame to read."""
    sig = file_signature(path)
    return None if sig is None or sig[0] == "dir" or sig[2] == 0 else sig


def listing(path: str) -> list[str] | None:
    """The names in a folder, sorted (None: no folder)."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return None


def _times(path: str) -> list[int]:
    try:
        st = os.lstat(path)
    except OSError:
        return []
    return [st.st_mtime_ns, st.st_ctime_ns]


def _recent(times: list[int], since_ns: int) -> bool:
    """A time within the margin before ``since_ns`` (or after it): a change then may be invisible later."""
    coarse = all(t % 1_000_000_000 == 0 for t in times)
    return any(t >= since_ns - (COARSE_MARGIN_NS if coarse else MARGIN_NS) for t in times)


def seal_path(real_cwd: str) -> str:
    return paths.sub("digests", "sealed", sha256(real_cwd.encode("utf-8", "surrogatepass")).hexdigest()[:32]
                     + ".json")


def seal(cwd: str, *, project: dict, cache: str, generation: int, sections: list[str], files: list[str],
         wal: str, listings: list[str], since_ns: int) -> bool:
    """Seal SessionStart's answer for ``cwd``: ``cache`` (the digest cache file, at ``generation`` with
    ``sections``) stands while ``files``, the WAL ``wal`` and the folders ``listings`` are as they are now
    and the environment is this one. ``since_ns`` is when the run that found the answer began
    (``time.time_ns()`` before it read anything). False (nothing sealed) when something it read changed
    too close to that moment."""
    if any(_recent(_times(path), since_ns) for path in (*files, wal, *listings)):
        return False
    real = os.path.realpath(cwd)
    body = {"version": VERSION, "cwd": real, "project": project, "cache": cache, "generation": generation,
            "sections": list(sections), "env": environment_key(),
            "files": {path: file_signature(path) for path in dict.fromkeys(files)},
            "wal": [wal, wal_signature(wal)], "listings": {path: listing(path) for path in dict.fromkeys(listings)}}
    os.makedirs(os.path.dirname(seal_path(real)), mode=0o700, exist_ok=True)
    fsio.write_atomic(seal_path(real), jsonfast.dumps(body, ensure_ascii=False))
    return True


def unseal(cwd: str) -> None:
    """Drop the seal of ``cwd`` (a run that found something to say)."""
    try:
        os.remove(seal_path(os.path.realpath(cwd)))
    except OSError:
        pass


def serve(cwd: str) -> Sealed | None:
    """The sealed answer for ``cwd`` when everything it was read from is as it was; else None."""
    real = os.path.realpath(cwd)
    try:
        with open(seal_path(real), "rb") as fh:
            body = jsonfast.loads(fh.read().decode("utf-8"))
        if not isinstance(body, dict) or body.get("version") != VERSION or body.get("cwd") != real:
            return None
        if body["env"] != environment_key():
            return None
        if any(file_signature(path) != sig for path, sig in body["files"].items()):
            return None
        wal, wal_sig = body["wal"]
        if wal_signature(wal) != wal_sig:
            return None
        if any(listing(path) != names for path, names in body["listings"].items()):
            return None
        with open(body["cache"], "rb") as fh:
            cached = jsonfast.loads(fh.read().decode("utf-8"))
        if cached["generation"] != body["generation"] or cached["sections"] != body["sections"]:
            return None
        text, record_ids, tokens, project = cached["text"], cached["record_ids"], cached["tokens"], body["project"]
        if (not isinstance(text, str) or not isinstance(tokens, int) or not isinstance(record_ids, list)
                or not isinstance(project, dict)):
            return None
        return Sealed(project, text, [r for r in record_ids if isinstance(r, str)], tokens)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
