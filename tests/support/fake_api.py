"""A scriptable fake of the Anthropic Messages API, served on loopback.

Stdlib only (``http.server`` + ``threading``). Point Claude Code (``ANTHROPIC_BASE_URL``) or the
``anthropic`` SDK (``base_url=``) at :attr:`FakeMessagesAPI.base_url`::

    with FakeMessagesAPI() as api:
        api.enqueue(tool_use("Bash", {"command": "ls"}), text("done"))
        ...  # run the client
        assert api.find_requests("MARKER")

What it serves:

* ``POST /v1/messages`` (query string such as ``?beta=true`` ignored): a streamed answer (Server-Sent
  Events) when the body has ``"stream": true``, otherwise a JSON Message object.
* ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}`` (a rough estimate).
* ``HEAD`` and ``GET`` on any path: 200 with an empty body.

Which reply a ``/v1/messages`` request gets: if :attr:`FakeMessagesAPI.responder` is set, whatever it
returns for the request body; otherwise the next scripted reply from the queue; when the queue is
empty, ``text("OK")``. A reply is a block (:func:`text`, :func:`tool_use`), a list of blocks, a plain
``str`` (shorthand for ``text``), :func:`error` or :func:`delay`.

Every request is recorded (:attr:`FakeMessagesAPI.requests`). Should a client make side requests
(other small model calls), pass ``scripted=`` a predicate to keep them from eating scripted replies:
requests it rejects get ``text("OK")`` and leave the queue alone. (Claude Code 2.1.332 in ``-p`` mode
makes none: one streamed ``POST /v1/messages?beta=true`` per model turn. Its ``messages`` start with
the user prompt, then a ``role: system`` entry carrying hook context and the environment; see
:func:`all_text` and :func:`tool_results`.)
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "Block",
    "DelayReply",
    "ErrorReply",
    "FakeMessagesAPI",
    "RecordedRequest",
    "Reply",
    "TextBlock",
    "ToolUseBlock",
    "all_text",
    "delay",
    "error",
    "last_message",
    "text",
    "tool_results",
    "tool_use",
]

JSONDict = dict[str, Any]


# --------------------------------------------------------------------------------------------------
# Replies


@dataclass(frozen=True)
class TextBlock:
    """An assistant ``text`` content block."""

    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    """An assistant ``tool_use`` content block; ``id`` is generated when empty."""

    name: str
    input: JSONDict
    id: str = ""


Block = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error answer; ``body`` defaults to the Anthropic error envelope for ``status``."""

    status: int
    body: JSONDict | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DelayReply:
    """Sleep ``seconds`` before answering with ``then``."""

    seconds: float
    then: Reply


Reply = Block | Sequence[Block] | str | ErrorReply | DelayReply
Responder = Callable[[JSONDict], Reply]


def text(value: str) -> TextBlock:
    """A text block; as a reply on its own it ends the turn (``stop_reason: end_turn``)."""
    return TextBlock(value)


def tool_use(name: str, input: JSONDict | None = None, *, id: str = "") -> ToolUseBlock:
    """A tool call; a reply containing one ends with ``stop_reason: tool_use``."""
    return ToolUseBlock(name, dict(input or {}), id)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error(status: int, body: JSONDict | None = None, headers: dict[str, str] | None = None) -> ErrorReply:
    """An error reply, e.g. ``error(429, headers={"retry-after": "1"})`` or ``error(529)``."""
    return ErrorReply(status, body, dict(headers or {}))


def delay(seconds: float, then: Reply | None = None) -> DelayReply:
    """Answer ``then`` (default ``text("OK")``) after ``seconds``, e.g. to trip a client timeout."""
    return DelayReply(seconds, text("OK") if then is None else then)


def _error_body(status: int) -> JSONDict:
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    try:
        message = HTTPStatus(status).phrase
    except ValueError:
        message = f"HTTP {status}"
    return {"type": "error", "error": {"type": kind, "message": message}}


def _as_blocks(reply: Reply) -> list[Block]:
    if isinstance(reply, str):
        return [TextBlock(reply)]
    if isinstance(reply, (TextBlock, ToolUseBlock)):
        return [reply]
    blocks = list(reply)  # type: ignore[arg-type]
    for block in blocks:
        if not isinstance(block, (TextBlock, ToolUseBlock)):
            raise TypeError(f"not a content block: {block!r}")
    return blocks


# --------------------------------------------------------------------------------------------------
# Reading request bodies


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake server saw it. ``body`` is the parsed JSON, or None."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    time: float

    @property
    def route(self) -> str:
        """The path without its query string."""
        return urlsplit(self.path).path

    @property
    def is_messages(self) -> bool:
        """True for ``POST /v1/messages`` (not count_tokens)."""
        return self.method == "POST" and self.route.rstrip("/") == "/v1/messages"


def _texts_in_content(content: Any) -> Iterator[str]:
    """Yield the strings in a ``content`` value: a string or a list of blocks (recursing into tool_result)."""
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            yield block
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                yield block["text"]
            if "content" in block:  # tool_result, search_result, document ...
                yield from _texts_in_content(block["content"])


def all_text(request: RecordedRequest | JSONDict | None) -> list[str]:
    """Every text string of a Messages request body, in order: system, then each message's content.

    Covers ``system`` as a string or text blocks, message content as a string or blocks, ``role:
    system`` entries inside ``messages`` and ``tool_result`` contents. Accepts a recorded request or a
    body.
    """
    body = request.body if isinstance(request, RecordedRequest) else request
    if not isinstance(body, dict):
        return []
    found = list(_texts_in_content(body.get("system")))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            found.extend(_texts_in_content(message.get("content")))
    return found


def last_message(body: JSONDict) -> JSONDict:
    """The last entry of ``messages`` (an empty dict when there is none)."""
    messages = body.get("messages") or []
    return messages[-1] if messages else {}


def tool_results(body: JSONDict) -> list[JSONDict]:
    """The ``tool_result`` blocks sent since the last assistant turn: non-empty when the model just got
    tool output. (Looks past trailing ``role: system`` entries that hooks may add.)"""
    found: list[JSONDict] = []
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "assistant":
            break
        content = message.get("content")
        if isinstance(content, list):
            found[:0] = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


def _estimate_tokens(body: Any) -> int:
    return max(1, sum(len(t) for t in all_text(body)) // 4)


# --------------------------------------------------------------------------------------------------
# Rendering answers


def _message_json(msg_id: str, model: str, blocks: list[Block], input_tokens: int) -> JSONDict:
    content: list[JSONDict] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        else:
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
    stop = "tool_use" if any(isinstance(b, ToolUseBlock) for b in blocks) else "end_turn"
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": max(1, len(json.dumps(content)) // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _sse_events(message: JSONDict) -> Iterator[tuple[str, JSONDict]]:
    """The Server-Sent Events that stream ``message`` (one delta per block)."""
    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening: JSONDict = {"type": "text", "text": ""}
            delta: JSONDict = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _sse_payload(message: JSONDict) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _sse_events(message)).encode()


# --------------------------------------------------------------------------------------------------
# The server


class FakeMessagesAPI:
    """The fake API server. Use as a context manager, or call :meth:`start` / :meth:`stop`.

    ``responder`` (request body -> reply) takes precedence over the queue. ``scripted`` decides
    which ``/v1/messages`` requests are answered from the script at all (default: every one); the
    others get ``text("OK")``.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        scripted: Callable[[JSONDict], bool] | None = None,
    ) -> None:
        self.responder = responder
        self.scripted = scripted
        self._queue: deque[Reply] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> FakeMessagesAPI:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        if self._server is not None:
            return self
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-messages-api", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash); the server must be started."""
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- scripting

    def enqueue(self, *replies: Reply) -> None:
        """Append replies to the script, answered in order."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies are still unused."""
        with self._lock:
            return len(self._queue)

    def _next_reply(self, body: JSONDict) -> Reply:
        if self.scripted is not None and not self.scripted(body):
            return text("OK")
        if self.responder is not None:
            return self.responder(body)
        with self._lock:
            return self._queue.popleft() if self._queue else text("OK")

    # -- inspection

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/messages`` requests."""
        return [r for r in self.requests if r.is_messages]

    def all_text(self, request: RecordedRequest | JSONDict) -> list[str]:
        """See :func:`all_text`."""
        return all_text(request)

    def find_requests(self, containing: str) -> list[RecordedRequest]:
        """The recorded requests whose :func:`all_text` includes ``containing`` as a substring."""
        return [r for r in self.requests if any(containing in t for t in all_text(r))]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least ``count`` requests were recorded; raise TimeoutError otherwise."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"{len(self._requests)} of {count} requests after {timeout}s")
            return list(self._requests)

    def _record(self, request: RecordedRequest) -> None:
        with self._arrived:
            self._requests.append(request)
            self._arrived.notify_all()

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by :attr:`responder` or :attr:`scripted` (each answered with a 400)."""
        with self._lock:
            return list(self._errors)

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):06d}"


def _make_handler(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``api``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _read(self) -> RecordedRequest:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            recorded = RecordedRequest(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time()
            )
            api._record(recorded)
            return recorded

        def _send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", api._new_id("req"))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            try:
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. after a delay)
                self.close_connection = True

        def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(data).encode(), "application/json", headers)

        def do_HEAD(self) -> None:
            self._read()
            self._send(200, b"", "text/plain")

        def do_GET(self) -> None:
            self._read()
            self._send(200, b"", "text/plain")

        def do_POST(self) -> None:
            request = self._read()
            body = request.body if isinstance(request.body, dict) else {}
            if request.route.rstrip("/") == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": _estimate_tokens(body)})
            elif request.is_messages:
                try:
                    reply = api._next_reply(body)
                except Exception as exc:  # a broken responder: answer a non-retryable error, keep it
                    api._record_error(exc)
                    reply = error(
                        400, {"type": "error", "error": {"type": "invalid_request_error", "message": repr(exc)}}
                    )
                self._answer(body, reply)
            else:
                self._send_json(404, _error_body(404))

        def _answer(self, body: JSONDict, reply: Reply) -> None:
            while isinstance(reply, DelayReply):
                time.sleep(reply.seconds)
                reply = reply.then
            if isinstance(reply, ErrorReply):
                self._send_json(reply.status, reply.body or _error_body(reply.status), reply.headers)
                return
            blocks = [
                ToolUseBlock(b.name, b.input, b.id or api._new_id("toolu")) if isinstance(b, ToolUseBlock) else b
                for b in _as_blocks(reply)
            ]
            message = _message_json(
                api._new_id("msg"), str(body.get("model", "claude-fake")), blocks, _estimate_tokens(body)
            )
            if body.get("stream"):
                self._send(200, _sse_payload(message), "text/event-stream", {"Cache-Control": "no-cache"})
            else:
                self._send_json(200, message)

    return Handler
