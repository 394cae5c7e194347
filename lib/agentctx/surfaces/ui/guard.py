"""ADR-015 request checks for the dashboard, as a plain ASGI middleware.

Refused with 403 (and nothing read or written): a Host header other than ``127.0.0.1:<port>`` or
``localhost:<port>`` (DNS rebinding); ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``
(a request another site's page made); an ``Origin`` that is not the server's own; a write
(any method but GET/HEAD) without the per-start token in ``X-Agentctx-Token``. Responses never
set cookies and carry a strict Content-Security-Policy. A refusal is one line in the agentctx log.
Every request counts as activity for the idle timer.
"""

from __future__ import annotations

import hmac
import json
import time

TOKEN_HEADER = "x-agentctx-token"
SAFE_METHODS = frozenset({"GET", "HEAD"})
ALLOWED_FETCH_SITES = frozenset({"same-origin", "none"})


class Activity:
    """When the last request arrived (monotonic seconds)."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def touch(self) -> None:
        self.last = time.monotonic()

    def idle_for(self) -> float:
        return time.monotonic() - self.last


def refusal(scope: dict, port: int, token: str) -> str | None:
    """Why this request is refused, or None when it may proceed."""
    headers: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        key = name.decode("latin-1").lower()
        if key in headers:  # a repeated security header is ambiguous: refuse it
            if key in ("host", "origin", "sec-fetch-site", TOKEN_HEADER):
                return f"repeated {key} header"
            continue
        headers[key] = value.decode("latin-1")
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
    host = headers.get("host", "").lower()
    if host not in hosts:
        return "unexpected Host header"
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in ALLOWED_FETCH_SITES:
        return "cross-site request"
    origin = headers.get("origin")
    if origin is not None and origin.lower() != f"http://{host}":
        return "foreign Origin"
    if scope.get("method", "GET").upper() not in SAFE_METHODS:
        given = headers.get(TOKEN_HEADER, "")
        if not given or not hmac.compare_digest(given.encode("utf-8", "replace"), token.encode()):
            return "missing or wrong token"
    return None


SECURITY_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class Guard:
    """Wraps the app: refuses what :func:`refusal` names, adds security headers, drops cookies."""

    def __init__(self, app, *, port: int, token: str, activity: Activity, csp: str):
        self.app, self.port, self.token, self.activity = app, port, token, activity
        self.headers = [*SECURITY_HEADERS, (b"content-security-policy", csp.encode())]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        self.activity.touch()
        why = refusal(scope, self.port, self.token)
        if why is not None:
            from agentctx.logs import log

            log("ui", f"refused {scope.get('method')} {scope.get('path')}: {why}")
            body = json.dumps({"error": f"refused: {why}"}).encode()
            await send({"type": "http.response.start", "status": 403, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                *self.headers]})
            await send({"type": "http.response.body", "body": body})
            return

        async def guarded_send(message):
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"set-cookie"]
                message = {**message, "headers": kept + self.headers}
            await send(message)

        await self.app(scope, receive, guarded_send)
