"""Fixtures shared by the hook tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import db, records


@pytest.fixture
def seeded(home: Path, repo: Path):
    """A store with a few decisions, conventions, bugfixes and a handover for ``repo``."""
    conn = db.connect()
    proj = project.detect(str(repo))
    add = lambda **kw: records.add(conn, proj.id, **kw)  # noqa: E731
    recs = {
        "grpc": add(type="decision", title="Internal services use gRPC", body="Protobuf contracts live in /proto."),
        "cents": add(type="decision", title="Money is integer cents", body="Never floats for amounts.", pinned=True),
        "problem": add(type="convention", title="Errors are problem+json", body="RFC 9457 bodies for every 4xx."),
        "handover": add(type="handover", title="Refund endpoint half done", body="Next: wire the ledger client."),
    }
    for i in range(6):
        recs[f"flaky{i}"] = add(
            type="bugfix", title=f"Flaky webhook test number {i}",
            body=f"The webhook signature test {i} failed because the clock skew check used local time.",
        )
    conn.close()
    return proj, recs
