"""The MCP server and the dashboard against a hostile repository (tests/support/hostile.py): every MCP tool through
the SDK's real stdio client, every dashboard route over HTTP, each server process under the same address-space
limit as the hooks and the CLI. Used by tests/process/test_hostile_surfaces.py and bench/reliability_bench.py.

Each call is timed out (a hang is a failure, not a stuck run) and reported as a ``Call``: what was asked, whether
it returned, how (an MCP error result or an HTTP status) and its text."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.support import hostile

CALL_TIMEOUT_S = 120
START_TIMEOUT_S = 180
MCP_TITLE = "Invoices are numbered per calendar year"  # what ctx_record stores; the dashboard's writes use it


class Call:
    """One MCP tool call or HTTP request: ``done`` (returned in time), ``failed`` (an MCP error result or an
    HTTP status >= 500), ``status`` (HTTP), ``text``."""

    __slots__ = ("what", "done", "failed", "status", "text", "seconds")

    def __init__(self, what: str, done: bool, failed: bool, text: str, seconds: float, status: int | None = None):
        self.what, self.done, self.failed, self.text, self.seconds, self.status = what, done, failed, text, seconds, status

    def __repr__(self) -> str:
        return f"Call({self.what!r}, done={self.done}, failed={self.failed}, status={self.status}, {self.text[:200]!r})"


def record_id(home: Path, title: str = hostile.TITLE) -> str:
    """The id of the decision the hostile run recorded first (read-only)."""
    conn = sqlite3.connect(f"file:{home / 'agentctx.db'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id FROM records WHERE title = ?", (title,)).fetchone()[0]
    finally:
        conn.close()


def mcp_calls(rid: str) -> list[tuple[str, dict]]:
    """(tool, arguments): every tool, aimed at the files a hostile repository plants."""
    return [
        ("ctx_project", {}),
        ("ctx_search", {"query": "payments retry backoff"}),
        ("ctx_search", {"query": "payments", "file": "src/app.py"}),
        ("ctx_get", {"ids": [rid]}),
        ("ctx_related", {"file": "src/app.py"}),
        ("ctx_related", {"file": "pyproject.toml"}),
        ("ctx_record", {"type": "decision", "title": MCP_TITLE,
                        "body": "The numbering in src/app.py restarts each January; see pyproject.toml and Makefile.",
                        "files": ["src/app.py", "pyproject.toml", "CLAUDE.md"]}),
        ("ctx_supersede", {"old_id": rid, "new_body": "Payments retry five times with backoff.",
                           "rationale": "The acquirer asked for more retries."}),
        ("ctx_sync_claudemd", {}),
    ]


def limited_server(params):
    """``params`` (the plugin.json MCP server) run under ``hostile.MEMORY_LIMIT`` of address space: the same
    command behind ``ulimit -v`` in sh, since the SDK's client spawns it itself."""
    from mcp.client.stdio import StdioServerParameters

    kib = hostile.MEMORY_LIMIT // 1024
    return StdioServerParameters(command="sh", args=["-c", f'ulimit -v {kib} && exec "$@"', "sh", params.command,
                                                     *params.args], env=params.env, cwd=params.cwd)


def run_mcp(repo: Path, home: Path, rid: str, errlog_path: Path) -> list[Call]:
    """Every tool of the MCP server started as Claude Code starts it (cwd and CLAUDE_PROJECT_DIR the repository)."""
    from tests.surfaces.test_mcp import Client, declared_server

    env = {"AGENTCTX_HOME": str(home), "CLAUDE_PROJECT_DIR": str(repo)}
    out: list[Call] = []
    with open(errlog_path, "w+") as errlog:
        client = Client(limited_server(declared_server(env, repo)), errlog)
        try:
            for tool, args in mcp_calls(rid):
                what = f"{tool}({', '.join(f'{k}={v!r}' for k, v in args.items())[:80]})"
                t = time.perf_counter()
                try:  # the client's session times a request out after 120 s (test_mcp.Client)
                    result = client.call(tool, args)
                except Exception as exc:  # noqa: BLE001 - a timeout or a dead server: reported, not raised
                    out.append(Call(what, False, True, f"{type(exc).__name__}: {exc}", time.perf_counter() - t))
                    continue
                text = "".join(c.text for c in result.content if c.type == "text")
                out.append(Call(what, True, bool(result.is_error), text, time.perf_counter() - t))
        finally:
            client.close()
    return out


def ui_requests(project_id: str, rid: str) -> list[tuple[str, str, dict | None]]:
    """(method, path, JSON body): every dashboard route, the writes last (purge rewrites the team file); ``rid``
    a current record (edited, pinned, superseded, then forgetting it is refused as superseded, and it is purged)."""
    q = f"?project={project_id}"
    rec = f"/api/records/{rid}"
    return [
        ("GET", "/", None), ("GET", "/api/health", None), ("GET", "/api/projects", None),
        ("GET", f"/api/records{q}&q=payments", None), ("GET", f"{rec}{q}", None),
        ("GET", f"/api/graph{q}", None), ("GET", f"/api/profile{q}", None), ("GET", f"/api/sessions{q}", None),
        ("GET", f"/api/drift{q}", None), ("POST", f"/api/sync/proposal{q}", {}),
        ("POST", f"{rec}/edit{q}", {"body": "Exponential backoff, capped at 30 s."}),
        ("POST", f"{rec}/pin{q}", {"on": True}),
        ("POST", f"{rec}/supersede{q}", {"body": "Payments retry four times with backoff.", "rationale": "load"}),
        ("POST", f"{rec}/forget{q}", {"confirm": True}),
        ("POST", f"{rec}/purge{q}", {"confirm": True}),
        ("GET", "/static/app.js", None),
    ]


class _Dashboard:
    """The dashboard server (lib/agentctx_ui.py through uv) under the memory limit; ``port`` once it listens."""

    def __init__(self, home: Path, project_id: str, ready: Path):
        from agentctx.surfaces.cli.ui import server_command
        from tests.support.cli import UV

        argv = server_command(port=None, project_id=project_id, idle_minutes=5, browser=False,
                              ready_file=str(ready), quiet=True)
        env = {**os.environ, "AGENTCTX_HOME": str(home)}
        env["PATH"] = os.path.dirname(UV) + os.pathsep + env.get("PATH", "")
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                     preexec_fn=hostile.limit_memory())
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"dashboard did not start: {self.proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
        self.port = json.loads(ready.read_text())["port"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_ui(home: Path, project_id: str, rid: str, folder: Path) -> list[Call]:
    """Every dashboard route against the store of a hostile repository, the token from the page as a browser."""
    import http.client
    import re

    server = _Dashboard(home, project_id, folder / f"ui-ready-{time.monotonic_ns()}.json")
    out: list[Call] = []
    try:
        token = ""
        for method, path, body in ui_requests(project_id, rid):
            t = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=CALL_TIMEOUT_S)
            headers = {"Host": f"127.0.0.1:{server.port}"}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers.update({"Content-Type": "application/json", "Content-Length": str(len(data)),
                                "X-Agentctx-Token": token})
            try:
                conn.request(method, path, body=data, headers=headers)
                res = conn.getresponse()
                text = res.read().decode(errors="replace")
            except OSError as exc:  # a timeout or a dead server
                out.append(Call(f"{method} {path}", False, True, f"{type(exc).__name__}: {exc}",
                                time.perf_counter() - t))
                continue
            finally:
                conn.close()
            if path == "/":
                found = re.search(r'name="agentctx-token" content="([^"]+)"', text)
                token = found.group(1) if found else ""
            out.append(Call(f"{method} {path}", True, res.status >= 500, text, time.perf_counter() - t, res.status))
    finally:
        server.stop()
    return out
