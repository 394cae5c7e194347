"""A Model Context Protocol server over stdio, in the standard library: JSON-RPC 2.0, one message a line.

Why not the MCP SDK: importing ``mcp.server.mcpserver`` alone takes ~0.5-1 s (pydantic models, the
client, HTTP transports), and Claude Code waits for every MCP server before it sends the first prompt.
This server answers ``initialize`` and ``tools/list`` from ``mcp_schema`` after a few milliseconds and
loads the store, the search and everything else on the first ``tools/call`` (``Handler.open``).

What it speaks (the tools part of MCP, protocol versions 2024-11-05 to 2025-11-25): ``initialize``
(version negotiation: the client's version if known, else the newest), ``ping``, ``tools/list``,
``tools/call`` (each on its own thread, so a slow call does not hold up pings or other calls),
empty ``prompts/list`` / ``resources/list`` / ``resources/templates/list``; notifications are accepted and
ignored (a cancelled call still runs to its end; its answer is dropped). One request goes the other way:
``roots/list``, through ``Session.request``. Anything else is JSON-RPC ``-32601``; a line that is not
JSON, ``-32700``. Output goes to stdout only; logs to stderr.
"""

from __future__ import annotations

import json
import sys
import threading

from agentctx.surfaces import mcp_schema

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # newest last
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
EMPTY_LISTS = {"prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"}


class Handler:
    """What the server serves: override ``open`` (called once, on the first tool call) and ``call``."""

    def open(self, session: Session) -> None:
        """Prepare for tool calls (import, connect); runs on the first call's thread."""

    def call(self, session: Session, tool: mcp_schema.Tool, args: list) -> str:
        """The text answer of one call; raise ``CallRefused`` for a tool error the model should read."""
        raise CallRefused(f"{tool.name} is not available")

    def close(self) -> None:
        """The client hung up."""


class CallRefused(Exception):
    """A tool call that failed in a way the model should be told (its message becomes the tool's answer)."""


class Session:
    """One client on (stdin, stdout): reads requests, writes answers, runs tool calls on threads."""

    def __init__(self, handler: Handler, name: str, version: str, instructions: str, reader=None, writer=None):
        self.handler, self.name, self.version, self.instructions = handler, name, version, instructions
        self.reader = reader or sys.stdin.buffer
        self.writer = writer or sys.stdout.buffer
        self.client_capabilities: dict = {}
        self._write_lock = threading.Lock()
        self._open_lock = threading.Lock()
        self._opened = False
        self._pending: dict[str, list] = {}  # our request id -> [Event, response]
        self._next_id = 0
        self._calls: list[threading.Thread] = []

    # -- output

    def send(self, message: dict) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            self.writer.write(data)
            self.writer.flush()

    def _result(self, msg_id, result: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _error(self, msg_id, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def request(self, method: str, params: dict | None = None, timeout: float = 5.0) -> dict:
        """Ask the client (e.g. ``roots/list``) and wait for its result; raises on an error or timeout.
        Call it from a tool call's thread, never from the reading loop."""
        with self._write_lock:
            self._next_id += 1
            msg_id = f"agentctx-{self._next_id}"
        slot: list = [threading.Event(), None]
        self._pending[msg_id] = slot
        try:
            self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params else {})})
            if not slot[0].wait(timeout):
                raise TimeoutError(f"{method}: no answer within {timeout:g} s")
        finally:
            self._pending.pop(msg_id, None)
        answer = slot[1] or {}
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error'].get('message', answer['error'])}")
        return answer.get("result") or {}

    # -- input

    def serve(self) -> None:
        """Read until the client closes stdin (or interrupts: Claude Code sends SIGINT at its exit), then close
        the handler. SIGINT ends it even when it was started with SIGINT ignored (a shell's background job
        passes that on to everything it starts), so the client's way of ending its servers always works."""
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            for line in self.reader:
                if line.strip():
                    self._line(line)
            self.wait_calls(10)
        except KeyboardInterrupt:
            pass
        finally:
            self.handler.close()

    def _line(self, line: bytes) -> None:
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError:
            self._error(None, PARSE_ERROR, "Parse error: not a JSON message")
            return
        for one in message if isinstance(message, list) else [message]:  # batches: 2025-03-26 allowed them
            self._message(one)

    def _message(self, msg: object) -> None:
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            self._error(msg.get("id") if isinstance(msg, dict) else None, INVALID_REQUEST, "Invalid request")
            return
        method, msg_id = msg.get("method"), msg.get("id")
        if method is None:  # an answer to one of our requests
            slot = self._pending.get(msg_id) if isinstance(msg_id, str) else None
            if slot is not None:
                slot[1] = msg
                slot[0].set()
            return
        if msg_id is None:  # a notification: initialized, cancelled, roots changed ... nothing to answer
            return
        params = msg.get("params") or {}
        if not isinstance(params, dict):
            self._error(msg_id, INVALID_PARAMS, "params must be an object")
        elif method == "initialize":
            self._initialize(msg_id, params)
        elif method == "ping":
            self._result(msg_id, {})
        elif method == "tools/list":
            self._result(msg_id, {"tools": mcp_schema.tool_list()})
        elif method == "tools/call":
            thread = threading.Thread(target=self._call, args=(msg_id, params), name="agentctx-call", daemon=True)
            self._calls = [t for t in self._calls if t.is_alive()] + [thread]
            thread.start()
        elif method in EMPTY_LISTS:
            self._result(msg_id, {EMPTY_LISTS[method]: []})
        else:
            self._error(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")

    def _initialize(self, msg_id, params: dict) -> None:
        asked = params.get("protocolVersion")
        caps = params.get("capabilities")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        self._result(msg_id, {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[-1],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": self.name, "version": self.version},
            "instructions": self.instructions,
        })

    def _call(self, msg_id, params: dict) -> None:
        name = params.get("name")
        tool = mcp_schema.BY_NAME.get(name) if isinstance(name, str) else None
        if tool is None:
            self._result(msg_id, _text(f"Unknown tool: {name}", error=True))
            return
        try:
            args = mcp_schema.arguments(tool, params.get("arguments"))
        except ValueError as exc:
            self._result(msg_id, _text(f"Error executing tool {tool.name}: {exc}", error=True))
            return
        try:
            with self._open_lock:
                if not self._opened:
                    self.handler.open(self)
                    self._opened = True
            self._result(msg_id, _text(self.handler.call(self, tool, args)))
        except CallRefused as exc:
            self._result(msg_id, _text(str(exc), error=True))
        except Exception as exc:  # noqa: BLE001 - the server keeps serving; the model reads what failed
            print(f"agentctx-mcp: {tool.name} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            self._result(msg_id, _text(f"internal error in agentctx ({type(exc).__name__}: {exc})", error=True))

    def wait_calls(self, timeout: float) -> None:
        """Let running tool calls finish (after stdin closed), up to ``timeout`` seconds in all."""
        for thread in list(self._calls):
            thread.join(timeout)


def _text(text: str, error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": error}
