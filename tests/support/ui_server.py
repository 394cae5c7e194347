"""Dashboard test support: a seeded store and the real server (lib/agentctx_ui.py through uv)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from agentctx import project
from agentctx.store import graph, projects, records, sessions
from agentctx.surfaces.cli.ui import server_command

START_TIMEOUT = 180.0  # the first run may fetch starlette/uvicorn into uv's cache


def seed(conn, proj: project.Project) -> dict:
    """Records, a supersession chain, file links, sessions with costs and a CLAUDE.md that drifts."""
    projects.register(conn, proj)
    ids = {}
    ids["kafka"] = records.add(conn, proj.id, type="decision", title="Use Kafka for the payment events",
                               body="Ordered per account; replayable.")["id"]
    ids["rest"] = records.add(conn, proj.id, type="decision", title="Services talk REST between each other",
                              body="JSON over HTTP.")["id"]
    ids["grpc"] = records.supersede(conn, proj.id, ids["rest"], body="gRPC with protobuf contracts.",
                                    title="Services talk gRPC between each other", rationale="latency")["id"]
    ids["conv"] = records.add(conn, proj.id, type="convention", title="Migrations are forward-only",
                              body="Never edit a released migration.")["id"]
    ids["bug"] = records.add(conn, proj.id, type="bugfix", title="Retry the ledger write on SQLITE_BUSY")["id"]
    ids["pref"] = records.add(conn, proj.id, type="preference", title="Prefer small pure functions",
                              scope="global")["id"]
    for name, rid in (("src/payments/events.py", ids["kafka"]), ("src/rpc/client.py", ids["grpc"]),
                      ("src/rpc/client.py", ids["rest"]), ("migrations/0001.sql", ids["conv"])):
        graph.link(conn, rid, graph.entity(conn, proj.id, "file", name))
    for i, (day, tokens, cost) in enumerate([("2026-11-20", 1200, 0.004), ("2026-11-22", 300, 0.0),
                                             ("2026-11-25", 2100, 0.011), ("2026-11-28", 900, 0.002)]):
        sid = f"sess-{i}"
        sessions.start(conn, sid, proj.id, proj.root, "startup")
        conn.execute("UPDATE sessions SET started_at = ?, tokens_injected = ?, injections = 3, "
                     "extraction_cost_usd = ?, extraction_runs = 1 WHERE session_id = ?",
                     (f"{day}T10:00:00.000000Z", tokens, cost, sid))
    Path(proj.root, "CLAUDE.md").write_text("# Widgets\n\n- Services talk REST between each other.\n")
    return ids


def store_snapshot(conn) -> list[tuple]:
    """Every record row, to compare before and after a refused request."""
    return [tuple(r) for r in conn.execute("SELECT * FROM records ORDER BY seq")]


class Server:
    """The dashboard server as a child process; ``url``/``port`` once it listens."""

    def __init__(self, tmp: Path, *, project_id: str | None = None, idle_minutes: float = 5.0):
        self.ready = tmp / f"ui-ready-{time.monotonic_ns()}.json"
        argv = server_command(port=None, project_id=project_id, idle_minutes=idle_minutes, browser=False,
                              ready_file=str(self.ready), quiet=True)
        assert argv is not None, "uv not found"
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
        deadline = time.monotonic() + START_TIMEOUT
        while not self.ready.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"dashboard exited {self.proc.returncode}: {self.proc.stderr.read().decode()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("dashboard did not start")
            time.sleep(0.1)
        info = json.loads(self.ready.read_text())
        self.port, self.pid = info["port"], info["pid"]
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def store(conn, proj):
    """A seeded store for the dashboard tests."""
    return seed(conn, proj)


@pytest.fixture
def server(store, tmp_path, proj):
    """The dashboard server on a free port, stopped after the test."""
    srv = Server(tmp_path, project_id=proj.id)
    yield srv
    srv.stop()
