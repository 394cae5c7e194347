"""Single-flight lock files with stale-lock recovery, plus a "more work arrived" flag. Stdlib only.

``Lock("extract-<session>")`` is ``<data dir>/locks/<name>.lock``, created with O_EXCL and holding
the owner's pid. A lock is stale when its owner is gone or it was not refreshed for ``stale_s``
seconds; a stale lock is renamed away (atomic: one recoverer wins) and taken over. A process that
finds the lock busy sets the pending flag instead, and the owner checks it before exiting. A "final"
flag (``mark_final``) asks the owner to stop waiting and finish at once (SessionEnd).
"""

from __future__ import annotations

import json
import os
import time

from agentctx import paths

STALE_S = 45 * 60


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill(pid, 0) would terminate it on Windows: rely on age alone
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A process that exited but was never reaped (its parent was killed and, in a container, nothing
    reaps orphans): ``os.kill(pid, 0)`` still succeeds, yet it holds nothing (Linux ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


class Lock:
    """A named lock file; see the module docstring."""

    def __init__(self, name: str, stale_s: float = STALE_S):
        folder = paths.sub("locks")
        self.path = os.path.join(folder, f"{name}.lock")
        self.pending_path = os.path.join(folder, f"{name}.pending")
        self.final_path = os.path.join(folder, f"{name}.final")
        self.stale_s = stale_s
        self.owned = False

    def _create(self) -> bool:
        paths.ensure(os.path.dirname(self.path))
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as fh:
            json.dump({"pid": os.getpid(), "at": time.time()}, fh)
        self.owned = True
        return True

    def _stale_file(self, path: str) -> bool:
        try:
            age = time.time() - os.path.getmtime(path)
            with open(path, encoding="utf-8") as fh:
                owner = json.load(fh)
            pid = int(owner.get("pid", 0))
        except FileNotFoundError:
            return False
        except (OSError, ValueError, TypeError, AttributeError):
            return age > 5  # half-written by a crashed owner (a live one writes within microseconds)
        return age > self.stale_s or not _alive(pid)

    def stale(self) -> bool:
        """True when the lock file exists but its owner is gone or silent for too long."""
        return self._stale_file(self.path)

    def held(self) -> bool:
        """True when someone holds a fresh lock (a cheap check for hooks)."""
        return os.path.exists(self.path) and not self.stale()

    def acquire(self) -> bool:
        """Take the lock; False when a live owner holds it."""
        if self._create():
            return True
        if not self.stale():
            return False
        grave = f"{self.path}.stale-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.rename(self.path, grave)
        except OSError:
            return False  # another process recovered it first
        if not self._stale_file(grave):
            # Another recoverer replaced the stale lock with its own live one in between: give it back.
            try:
                os.rename(grave, self.path) if not os.path.exists(self.path) else os.remove(grave)
            except OSError:
                pass
            return False
        try:
            os.remove(grave)
        except OSError:
            pass
        return self._create()

    def refresh(self) -> None:
        """Show the owner is still working (long waits would otherwise look stale)."""
        if self.owned:
            try:
                os.utime(self.path)
            except OSError:
                pass

    def release(self) -> None:
        if self.owned:
            self.owned = False
            try:
                os.remove(self.path)
            except OSError:
                pass

    def mark_pending(self) -> None:
        """Tell the owner that more work arrived."""
        paths.ensure(os.path.dirname(self.pending_path))
        with open(self.pending_path, "a", encoding="utf-8"):
            pass

    def take_pending(self) -> bool:
        """Clear the pending flag; True if it was set."""
        try:
            os.remove(self.pending_path)
            return True
        except OSError:
            return False

    def mark_final(self) -> None:
        """Tell the owner to finish now (the session ended): no more waiting for more to arrive."""
        self.mark_pending()
        paths.ensure(os.path.dirname(self.final_path))
        with open(self.final_path, "a", encoding="utf-8"):
            pass

    def final_requested(self) -> bool:
        return os.path.exists(self.final_path)

    def take_final(self) -> bool:
        """Clear the finish-now flag; True if it was set."""
        try:
            os.remove(self.final_path)
            return True
        except OSError:
            return False

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def for_session(kind: str, session_id: str) -> Lock:
    """The lock of one kind of background work (e.g. ``extract``) for one session."""
    from agentctx.project import sha256  # the builtin module, not hashlib (OpenSSL: ~2 ms to import)

    return Lock(f"{kind}-" + sha256(session_id.encode()).hexdigest()[:16])
