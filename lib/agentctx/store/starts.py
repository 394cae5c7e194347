"""SessionStarts not yet written to the store.

SessionStart does not open the store for writing (``injection.ready``: a sealed digest is served on stat
checks alone, and a run that wrote to the store could not seal). What it would have written (the session's
row, its project, its folder, the records it injected) is left here as one small file per start, and folded
into the store by the next process that reads or writes that session (``sessions.settle``), before anything
else: UserPromptSubmit's dedup sees what SessionStart injected. Stdlib only, no ``sqlite3``: SessionStart's
sealed path imports this module.
"""

from __future__ import annotations

import os
import time

from agentctx import fsio, jsonfast, paths
from agentctx.project import sha256  # the builtin hash, without hashlib

SUFFIX = ".json"
ABANDONED_S = 24 * 3600
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def folder() -> str:
    return paths.sub("starts")


def _key(session_id: str) -> str:
    """The session's part of a file name: the id itself when it is plain, else a hash of it."""
    if 0 < len(session_id) <= 100 and set(session_id) <= _SAFE:
        return session_id
    return "h" + sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def note(session_id: str, project: dict, cwd: str, source: str, record_ids: list[str], tokens: int) -> str:
    """Leave one SessionStart for the store (``project``: id, name, root, remote); the file written."""
    entry = {"session_id": session_id, "project": project, "cwd": cwd, "source": source,
             "record_ids": list(record_ids), "tokens": int(tokens), "at": time.time()}
    name = f"{_key(session_id)}.{time.time_ns()}.{os.getpid()}{SUFFIX}"
    os.makedirs(folder(), mode=0o700, exist_ok=True)
    return fsio.write_atomic(os.path.join(folder(), name), jsonfast.dumps(entry))


def take(session_id: str | None = None) -> list[tuple[str, dict]]:
    """Claim the waiting starts of ``session_id`` (None: of every session), oldest first, as
    (claimed file, entry). A claim is a rename, so two processes never fold one start twice; the caller
    removes the files once the store has them (``done``) or gives them back (``release``)."""
    try:
        names = os.listdir(folder())
    except OSError:
        return []
    prefix = None if session_id is None else _key(session_id) + "."
    found = []
    for name in names:
        if name.endswith(".taking"):
            _drop_abandoned(os.path.join(folder(), name))
            continue
        if not name.endswith(SUFFIX) or (prefix is not None and not name.startswith(prefix)):
            continue
        parts = name[: -len(SUFFIX)].rsplit(".", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        found.append((int(parts[1]), name))
    taken = []
    for _, name in sorted(found):
        path = os.path.join(folder(), name)
        claimed = f"{path}.{os.getpid()}.taking"
        try:
            os.rename(path, claimed)
        except OSError:  # another process took it first
            continue
        try:
            with open(claimed, encoding="utf-8") as fh:
                entry = jsonfast.loads(fh.read())
        except (OSError, ValueError):
            entry = None
        if not _valid(entry, session_id):
            _remove(claimed)  # unreadable or not what it says: nothing to fold
            continue
        taken.append((claimed, entry))
    return taken


def _valid(entry: object, session_id: str | None) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("project"), dict):
        return False
    if not all(isinstance(entry.get(k), str) for k in ("session_id", "cwd", "source")):
        return False
    if session_id is not None and entry["session_id"] != session_id:
        return False
    project = entry["project"]
    return (all(isinstance(project.get(k), str) for k in ("id", "name", "root"))
            and isinstance(entry.get("record_ids"), list) and isinstance(entry.get("tokens"), int))


def done(taken: list[tuple[str, dict]]) -> None:
    """The store has these starts: remove their files."""
    for claimed, _ in taken:
        _remove(claimed)


def release(taken: list[tuple[str, dict]]) -> None:
    """The store could not take these starts (locked, read-only): put them back for the next process."""
    for claimed, _ in taken:
        try:
            os.rename(claimed, claimed.rsplit(".", 2)[0])
        except OSError:
            pass


def _drop_abandoned(path: str) -> None:
    """A claim older than ``ABANDONED_S`` belongs to a process that died folding it (what it wrote, if it
    committed, is in the store): the file goes."""
    try:
        if time.time() - os.stat(path).st_mtime > ABANDONED_S:
            os.remove(path)
    except OSError:
        pass


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
