"""Timestamps: ISO 8601 in UTC with a fixed width, so text order is time order."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def now() -> str:
    """The current time, or ``AGENTCTX_NOW`` when set (tests and the demo use it)."""
    fixed = os.environ.get("AGENTCTX_NOW")
    if fixed:
        return parse(fixed)
    return datetime.now(timezone.utc).strftime(FORMAT)


def at(epoch: float) -> str:
    """A time given in seconds since the epoch as a stored timestamp (``AGENTCTX_NOW``, when set, as in ``now``)."""
    if os.environ.get("AGENTCTX_NOW"):
        return now()
    return datetime.fromtimestamp(epoch, timezone.utc).strftime(FORMAT)


def to_iso(dt: datetime) -> str:
    """A datetime (naive means UTC) as a stored timestamp."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime(FORMAT)


def parse(text: str, *, end_of_day: bool = False) -> str:
    """Normalize a user-given date or datetime to a stored timestamp.

    ``2026-04-01`` means the start of that day, or its last microsecond with ``end_of_day``
    (so "what was true on April 1" includes facts recorded during that day).
    Raises ValueError with a readable message on anything else.
    """
    raw = text.strip()
    if not raw:
        raise ValueError("empty date")
    candidate = raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw
    try:
        dt = datetime.fromisoformat(candidate)
    except ValueError:
        raise ValueError(f"not an ISO date or datetime: {text!r}") from None
    if len(raw) == 10 and end_of_day:
        dt = dt + timedelta(days=1) - timedelta(microseconds=1)
    return to_iso(dt)


def to_datetime(stamp: str) -> datetime | None:
    """A stored timestamp as a naive UTC datetime (fromisoformat: ~10x faster than strptime)."""
    try:
        return datetime.fromisoformat(stamp[:-1] if stamp.endswith("Z") else stamp)
    except (ValueError, TypeError):
        return None


def age_days(stamp: str | None, reference: str | datetime | None = None) -> float:
    """Days between a stored timestamp and ``reference`` (default: now); 0 if unknown."""
    then = to_datetime(stamp) if stamp else None
    ref = reference if isinstance(reference, datetime) else to_datetime(reference or now())
    if then is None or ref is None:
        return 0.0
    return max(0.0, (ref - then).total_seconds() / 86400.0)


def days_before(stamp: str, days: float) -> str:
    """The stored timestamp ``days`` before ``stamp``."""
    return to_iso(datetime.strptime(stamp, FORMAT) - timedelta(days=days))
