"""Single-flight locks: a lock whose owner died is taken over, even when the dead owner was never reaped
(a sync killed with kill -9 in a container whose init reaps no orphans left a zombie that looked alive)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import pytest

from agentctx import flight


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="zombies are read from /proc")
def test_a_lock_held_by_an_unreaped_dead_process_is_stale(home):
    was = signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # an ignored SIGCHLD reaps children at once: no zombie
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        deadline = time.monotonic() + 30
        while not flight._zombie(pid) and time.monotonic() < deadline:  # the child exits; unreaped, a zombie
            time.sleep(0.01)
        assert flight._zombie(pid)
        lock = flight.Lock("remote-sync", stale_s=3600)
        os.makedirs(os.path.dirname(lock.path), exist_ok=True)
        with open(lock.path, "w") as fh:
            json.dump({"pid": pid, "at": 0}, fh)
        assert lock.stale() and lock.acquire()
        lock.release()
        live = flight.Lock("remote-sync", stale_s=3600)
        assert live.acquire() and not flight.Lock("remote-sync", stale_s=3600).acquire()  # a live owner still holds
        live.release()
    finally:
        os.waitpid(pid, 0)
        signal.signal(signal.SIGCHLD, was)
