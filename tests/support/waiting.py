"""Waiting for detached processes and async hooks, which have no other way to say they are done."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(check: Callable[[], T], what: str, timeout: float = 120.0, interval: float = 0.05) -> T:
    """Poll ``check`` until it returns something truthy and return it; AssertionError on timeout.

    The timeout is generous on purpose: how long the wait takes is not what is tested.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(interval)
    raise AssertionError(f"gave up waiting for {what}")
