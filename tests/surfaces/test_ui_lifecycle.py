"""The dashboard process: a restart binds the same port at once (SO_REUSEADDR), killing ``agentctx ui`` (even
with SIGKILL) takes the server under uv with it, and the graph tooltip shows titles as text, never as HTML."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from agentctx import paths, project
from agentctx.flight import _alive
from agentctx.store import db, graph, projects, records
from agentctx.surfaces.cli.ui import server_command
from tests.support.cli import BIN, UV
from tests.support.waiting import wait_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port: int, tmp: Path) -> tuple[subprocess.Popen, dict]:
    ready = tmp / f"ready-{time.monotonic_ns()}.json"
    argv = server_command(port=port, project_id=None, idle_minutes=5, browser=False, ready_file=str(ready), quiet=True)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    info = wait_for(lambda: json.loads(ready.read_text()) if ready.exists() else (
        pytest.fail(f"server exited: {proc.stderr.read().decode()}") if proc.poll() is not None else None), "ready")
    return proc, info


def health(port: int) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/health", headers={"Host": f"127.0.0.1:{port}"})
    body = json.loads(conn.getresponse().read())
    conn.close()
    return body


def test_a_restart_on_the_same_port_works_at_once(home: Path, tmp_path: Path):
    port = free_port()
    first, _ = start(port, tmp_path)
    try:
        conns = []
        for _ in range(5):  # keep-alive connections the server side closes at shutdown: TIME_WAIT on its port
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/api/health", headers={"Host": f"127.0.0.1:{port}"})
            c.getresponse().read()
            conns.append(c)
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)
    second, info = start(port, tmp_path)
    try:
        assert info["port"] == port and health(port)["app"] == "agentctx-ui"
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
        for c in conns:
            c.close()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_agentctx_ui_ends_the_server_under_uv(home: Path, repo: Path, sig):
    port = free_port()
    env = {**os.environ, "AGENTCTX_HOME": str(home), "PATH": os.path.dirname(UV) + os.pathsep + os.environ["PATH"]}
    ui = subprocess.Popen([str(BIN), "--project", str(repo), "ui", "--no-browser", "--port", str(port)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    state = Path(paths.sub("ui", "server.json"))
    info = wait_for(lambda: json.loads(state.read_text()) if state.exists() else None, "the dashboard to listen")
    server_pid = info["pid"]
    assert server_pid != ui.pid and health(port)["pid"] == server_pid
    ui.send_signal(sig)  # the process a user (or a closed terminal) kills: bin/agentctx, i.e. uv run
    ui.wait(timeout=30)
    wait_for(lambda: not _alive(server_pid), "the server to exit")
    with pytest.raises(OSError):
        health(port)


def test_graph_tooltip_shows_a_title_as_text(home: Path, repo: Path, tmp_path: Path):
    chromium = "/usr/bin/chromium"
    if not os.path.exists(chromium):
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    from tests.support.ui_server import Server

    conn = db.connect()
    proj = project.detect(str(repo))
    projects.register(conn, proj)
    evil = '<img src=x onerror="window.__pwned=1"><b>bold</b> title'
    rec = records.add(conn, proj.id, type="decision", title=evil, body="")
    graph.link(conn, rec["id"], graph.entity(conn, proj.id, "file", "src/invoice.py"))
    conn.close()
    srv = Server(tmp_path, project_id=proj.id)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                         args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(f"{srv.url}/#/graph?project={proj.id}")
            page.wait_for_selector('[data-testid="graph"] canvas')
            page.wait_for_function("() => window.__agentctxGraph && window.__agentctxGraph.graphData().nodes.length")
            label = page.evaluate("""() => {
              const g = window.__agentctxGraph;
              const node = g.graphData().nodes.find(n => n.kind === 'record');
              const html = g.nodeLabel()(node);
              const probe = document.createElement('div');
              probe.innerHTML = html;  // what force-graph does with it
              document.body.appendChild(probe);
              return {html, text: probe.textContent, imgs: probe.querySelectorAll('img').length,
                      bolds: probe.querySelectorAll('b').length};
            }""")
            pwned = page.evaluate("() => window.__pwned === 1")
            browser.close()
    finally:
        srv.stop()
    assert label["imgs"] == 0 and label["bolds"] == 0 and not pwned
    assert label["text"] == f"decision: {evil}"
