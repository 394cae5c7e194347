"""The dashboard server: Starlette routes over ``ui.data``, behind ``ui.guard``, run by uvicorn.

Binds 127.0.0.1 only (the ``ui_port`` setting, 7327, or the next free one unless one is given), prints and optionally
opens the URL, and exits once no request arrived for ``idle_seconds`` (30 minutes by default).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import json
import os
import secrets
import socket
import sqlite3

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agentctx import fsio, kinds, paths, settings
from agentctx.store import db, records
from agentctx.surfaces.ui import data
from agentctx.surfaces.ui.guard import Activity, Guard

HERE = os.path.dirname(os.path.abspath(__file__))
PORT_TRIES = 20
IDLE_SECONDS = 30 * 60
MAX_BODY = 256 * 1024
VENDOR = {
    "preact": "/vendor/preact@10.29.8/preact.module.js",
    "preact/hooks": "/vendor/preact@10.29.8/hooks.module.js",
    "htm": "/vendor/htm@3.1.1/htm.module.js",
}
GRAPH_LIB = "/vendor/force-graph@1.52.0/force-graph.min.js"


class Fail(Exception):
    """A request the API rejects with 400 and a message."""


def _conn() -> sqlite3.Connection:
    return db.connect()


def _api(fn):
    """Run ``fn(request, conn)`` in a fresh connection; bad input → 400 with the message."""

    def endpoint(request: Request):
        for attempt in (1, 2):
            conn = _conn()
            try:
                return JSONResponse(fn(request, conn))
            except (records.RecordError, Fail, ValueError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
            except sqlite3.DatabaseError as exc:
                conn.close()
                from agentctx.store import integrity  # a damaged full-text index is rebuilt, then retried

                if attempt == 1 and integrity.index_suspect(exc) and integrity.repair_index(paths.db_path()):
                    continue
                return JSONResponse({"error": db.describe(exc)}, status_code=503)
            finally:
                conn.close()
        raise AssertionError("unreachable")

    return endpoint


def _project_id(request: Request) -> str:
    pid = request.query_params.get("project", "")
    if not pid:
        raise Fail("project is required")
    return pid


def _body(request: Request) -> dict:
    """The JSON object of a write request (read synchronously from the cached body)."""
    raw = request.state.raw
    if len(raw) > MAX_BODY:  # the declared length was checked; this is what actually arrived
        raise Fail("request body too large")
    try:
        value = json.loads(raw or b"{}")
    except ValueError:
        raise Fail("the body is not JSON") from None
    if not isinstance(value, dict):
        raise Fail("the body must be a JSON object")
    return value


def _write(fn):
    """A POST endpoint: reads the body, then runs ``fn(request, conn, body)`` like ``_api``."""
    inner = _api(lambda request, conn: fn(request, conn, _body(request)))

    async def endpoint(request: Request):
        if "application/json" not in request.headers.get("content-type", ""):
            return JSONResponse({"error": "send application/json"}, status_code=415)
        size = request.headers.get("content-length", "")
        if not size.isdigit() or int(size) > MAX_BODY:
            return JSONResponse({"error": f"send a JSON body of at most {MAX_BODY} bytes"}, status_code=413)
        request.state.raw = await request.body()
        return await asyncio.to_thread(inner, request)

    return endpoint


def _records(request: Request, conn):
    q = request.query_params
    return data.record_list(
        conn, _project_id(request), query=q.get("q", ""), types=q.getlist("type"), scope=q.get("scope") or None,
        status=q.get("status", "current"), limit=int(q.get("limit", "100")),
    )


def routes() -> list:
    return [
        Route("/api/projects", _api(lambda r, c: data.projects(c))),
        Route("/api/records", _api(_records)),
        Route("/api/records/{ref}", _api(lambda r, c: data.record_detail(
            c, r.path_params["ref"], r.query_params.get("project") or None))),
        Route("/api/records/{ref}/edit", _write(
            lambda r, c, b: data.edit(c, _project_id(r), r.path_params["ref"], b)), methods=["POST"]),
        Route("/api/records/{ref}/pin", _write(
            lambda r, c, b: data.pin(c, _project_id(r), r.path_params["ref"], b.get("on", True))), methods=["POST"]),
        Route("/api/records/{ref}/supersede", _write(
            lambda r, c, b: data.supersede(c, _project_id(r), r.path_params["ref"], b)), methods=["POST"]),
        Route("/api/records/{ref}/forget", _write(
            lambda r, c, b: data.forget(c, _project_id(r), r.path_params["ref"], b)), methods=["POST"]),
        Route("/api/records/{ref}/purge", _write(
            lambda r, c, b: data.purge(c, _project_id(r), r.path_params["ref"], b)), methods=["POST"]),
        Route("/api/graph", _api(lambda r, c: data.graph(c, _project_id(r)))),
        Route("/api/profile", _api(lambda r, c: data.profile(c, _project_id(r)))),
        Route("/api/sessions", _api(lambda r, c: data.sessions(c, _project_id(r)))),
        Route("/api/drift", _api(lambda r, c: data.drift_candidates(c, _project_id(r)))),
        Route("/api/sync/proposal", _write(lambda r, c, b: data.sync_proposal(c, _project_id(r))), methods=["POST"]),
    ]


def _importmap() -> str:
    return json.dumps({"imports": VENDOR})


def csp() -> str:
    digest = base64.b64encode(hashlib.sha256(_importmap().encode()).digest()).decode()
    return ("default-src 'none'; script-src 'self' 'sha256-" + digest + "'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def index_page(token: str, project_id: str | None) -> str:
    with open(os.path.join(HERE, "static", "index.html"), encoding="utf-8") as fh:
        page = fh.read()
    return (page.replace("{{IMPORTMAP}}", _importmap())
            .replace("{{TOKEN}}", html.escape(token))
            .replace("{{PROJECT}}", html.escape(project_id or ""))
            .replace("{{TYPES}}", html.escape(json.dumps(list(kinds.TYPES))))
            .replace("{{COLOURS}}", html.escape(json.dumps(kinds.COLOURS)))
            .replace("{{GRAPH_LIB}}", GRAPH_LIB))


def build(*, port: int, token: str, project_id: str | None = None, activity: Activity | None = None):
    """The guarded ASGI app for a server listening on 127.0.0.1:``port``."""
    page = index_page(token, project_id)

    async def index(request: Request):
        return HTMLResponse(page)

    async def health(request: Request):
        return JSONResponse({"app": "agentctx-ui", "pid": os.getpid()})

    app = Starlette(routes=[
        Route("/", index),
        Route("/api/health", health),
        *routes(),
        Mount("/static", StaticFiles(directory=os.path.join(HERE, "static"))),
        Mount("/vendor", StaticFiles(directory=os.path.join(HERE, "vendor"))),
    ])
    return Guard(app, port=port, token=token, activity=activity or Activity(), csp=csp())


def bind(port: int | None) -> socket.socket:
    """A listening socket on 127.0.0.1: ``port`` exactly, or the ``ui_port`` setting (7327) or the next free one."""
    first = int(settings.value("ui_port"))
    candidates = [port] if port else range(first, min(first + PORT_TRIES, 65536))
    last: OSError | None = None
    for candidate in candidates:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Accepted connections inherit it: without it a keep-alive response written in two parts (head,
        # body) waits ~40 ms for the client's delayed ACK (Nagle).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if os.name != "nt":  # a restart may bind the port its predecessor's connections leave in TIME_WAIT
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (on Windows it would allow stealing it)
        try:
            sock.bind(("127.0.0.1", candidate))
        except OSError as exc:
            sock.close()
            last = exc
            continue
        sock.listen(64)
        return sock
    raise OSError(f"no free port on 127.0.0.1 ({last})")


def state_path() -> str:
    return paths.sub("ui", "server.json")


def _write_json(path: str, value: dict) -> None:
    fsio.write_json(path, value)


def serve(*, port: int | None = None, idle_seconds: float = IDLE_SECONDS, open_browser: bool = False,
          project_id: str | None = None, ready_file: str | None = None, quiet: bool = False,
          watch_pids: list[int] | None = None) -> int:
    """Run the dashboard until idle, or until a process in ``watch_pids`` is gone (the ``agentctx ui`` that
    started it in the foreground: killing that must not leave the server running); the exit status."""
    from agentctx.flight import _alive  # the one "is this process alive" rule

    watch_pids = [p for p in (watch_pids or []) if p > 0]
    import uvicorn

    sock = bind(port)
    bound = sock.getsockname()[1]
    url = f"http://127.0.0.1:{bound}/" + (f"#/records?project={project_id}" if project_id else "")
    activity = Activity()
    token = secrets.token_urlsafe(32)
    app = build(port=bound, token=token, project_id=project_id, activity=activity)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False,
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    info = {"url": url, "port": bound, "pid": os.getpid()}

    async def watch_idle():
        while not server.started:
            await asyncio.sleep(0.05)
        _write_json(state_path(), info)
        if ready_file:
            _write_json(ready_file, info)
        if not quiet:
            print(f"agentctx dashboard: {url}  (exits after {idle_seconds:g} idle seconds)", flush=True)
        if open_browser:
            import webbrowser

            await asyncio.to_thread(webbrowser.open, url)
        while not server.should_exit:
            await asyncio.sleep(max(0.05, min(1.0 if watch_pids else 30.0, idle_seconds / 4)))
            if activity.idle_for() >= idle_seconds or not all(_alive(p) for p in watch_pids):
                server.should_exit = True

    async def main():
        watcher = asyncio.create_task(watch_idle())
        try:
            await server.serve(sockets=[sock])
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    try:
        asyncio.run(main())
    finally:
        sock.close()
        with contextlib.suppress(OSError, ValueError):
            with open(state_path(), encoding="utf-8") as fh:
                if json.load(fh).get("pid") == os.getpid():
                    os.remove(state_path())
    return 0
