"""Self-checks of the test harness: the fake Messages API, and the real Claude Code CLI driven against it."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import (
    CLAUDE_CODE_VERSION,
    ClaudeCLIUnavailable,
    claude_plugin,
    install_claude,
    run_claude,
)
from tests.support.fake_api import (
    FakeMessagesAPI,
    all_text,
    delay,
    error,
    text,
    tool_results,
    tool_use,
)

# --------------------------------------------------------------------------------------------------
# Fake API over plain HTTP


def _post(url: str, body: dict[str, Any], timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def _sse(payload: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in payload.decode().split("\n\n"):
        if not chunk.strip():
            continue
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def _body(content: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 100, "messages": [{"role": "user", "content": content}], **extra}


def test_non_streaming_message_shape() -> None:
    with FakeMessagesAPI([text("hello")]) as api:
        status, headers, raw = _post(f"{api.base_url}/v1/messages", _body())
    assert status == 200 and headers["content-type"] == "application/json"
    message = json.loads(raw)
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["id"].startswith("msg_") and message["model"] == "claude-test"
    assert message["content"] == [{"type": "text", "text": "hello"}]
    assert message["stop_reason"] == "end_turn" and message["stop_sequence"] is None
    assert set(message["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }


def test_non_streaming_tool_use_and_default_reply() -> None:
    with FakeMessagesAPI([[text("calling"), tool_use("lookup", {"q": "x"})]]) as api:
        first = json.loads(_post(f"{api.base_url}/v1/messages?beta=true", _body())[2])
        second = json.loads(_post(f"{api.base_url}/v1/messages", _body())[2])
    assert first["stop_reason"] == "tool_use"
    assert first["content"][1]["name"] == "lookup" and first["content"][1]["input"] == {"q": "x"}
    assert first["content"][1]["id"].startswith("toolu_")
    assert second["content"] == [{"type": "text", "text": "OK"}]  # queue exhausted


def test_streaming_events() -> None:
    with FakeMessagesAPI([[text("thinking aloud"), tool_use("lookup", {"q": [1, 2]})]]) as api:
        status, headers, raw = _post(f"{api.base_url}/v1/messages?beta=true", _body(stream=True))
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = _sse(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    assert events[0][1]["message"]["content"] == [] and events[0][1]["message"]["stop_reason"] is None
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "thinking aloud"}
    assert events[4][1]["content_block"]["type"] == "tool_use" and events[4][1]["content_block"]["input"] == {}
    assert events[5][1]["delta"]["type"] == "input_json_delta"
    assert json.loads(events[5][1]["delta"]["partial_json"]) == {"q": [1, 2]}
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"
    assert "output_tokens" in events[7][1]["usage"]


def test_error_replies() -> None:
    with FakeMessagesAPI([error(429, headers={"retry-after": "3"}), error(529), error(400, {"custom": 1})]) as api:
        status, headers, raw = _post(f"{api.base_url}/v1/messages", _body())
        assert status == 429 and headers["retry-after"] == "3"
        assert json.loads(raw)["error"]["type"] == "rate_limit_error"
        status, _, raw = _post(f"{api.base_url}/v1/messages", _body(stream=True))
        assert status == 529 and json.loads(raw) == {
            "type": "error",
            "error": {"type": "overloaded_error", "message": json.loads(raw)["error"]["message"]},
        }
        assert _post(f"{api.base_url}/v1/messages", _body())[2] == b'{"custom": 1}'


def test_delay_reply_trips_client_timeout() -> None:
    with FakeMessagesAPI([delay(0.3, text("late")), delay(2)]) as api:
        started = time.monotonic()
        assert json.loads(_post(f"{api.base_url}/v1/messages", _body())[2])["content"][0]["text"] == "late"
        assert time.monotonic() - started >= 0.3
        with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
            _post(f"{api.base_url}/v1/messages", _body(), timeout=0.5)


def test_responder_sees_body_and_broken_responder_is_reported() -> None:
    def responder(body: dict[str, Any]) -> Any:
        if tool_results(body):
            return text("got " + str(tool_results(body)[0]["content"]))
        if body.get("explode"):
            raise ValueError("boom")
        return tool_use("lookup", {})

    conversation = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}]},
        {"role": "system", "content": "trailing hook context"},
    ]
    with FakeMessagesAPI(responder=responder) as api:
        first = json.loads(_post(f"{api.base_url}/v1/messages", _body())[2])
        second = json.loads(_post(f"{api.base_url}/v1/messages", {"model": "m", "messages": conversation})[2])
        status, _, _ = _post(f"{api.base_url}/v1/messages", _body(explode=True))
        assert first["stop_reason"] == "tool_use"
        assert second["content"][0]["text"] == "got 42"
        assert status == 400 and [str(e) for e in api.errors] == ["boom"]


def test_scripted_predicate_keeps_queue_for_main_requests() -> None:
    with FakeMessagesAPI([text("scripted")], scripted=lambda body: body.get("max_tokens", 0) > 1000) as api:
        side = json.loads(_post(f"{api.base_url}/v1/messages", _body())[2])
        main = json.loads(_post(f"{api.base_url}/v1/messages", _body(max_tokens=32000))[2])
    assert side["content"][0]["text"] == "OK" and main["content"][0]["text"] == "scripted"


def test_recording_all_text_and_other_routes() -> None:
    body = {
        "model": "m",
        "system": [{"type": "text", "text": "SYS-BLOCK"}],
        "messages": [
            {"role": "user", "content": "plain string"},
            {"role": "system", "content": [{"type": "text", "text": "ROLE-SYSTEM"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "NESTED"}]},
                    {"type": "tool_result", "tool_use_id": "t", "content": "FLAT"},
                ],
            },
        ],
    }
    with FakeMessagesAPI() as api:
        _post(f"{api.base_url}/v1/messages?beta=true", body)
        status, _, raw = _post(f"{api.base_url}/v1/messages/count_tokens", body)
        assert status == 200 and json.loads(raw)["input_tokens"] >= 1
        for method in ("HEAD", "GET"):
            with urllib.request.urlopen(urllib.request.Request(f"{api.base_url}/", method=method)) as response:
                assert response.status == 200 and response.read() == b""
        requests = api.requests
    assert [(r.method, r.route) for r in requests] == [
        ("POST", "/v1/messages"),
        ("POST", "/v1/messages/count_tokens"),
        ("HEAD", "/"),
        ("GET", "/"),
    ]
    assert requests[0].path == "/v1/messages?beta=true" and requests[0].headers["content-type"] == "application/json"
    assert api.all_text(requests[0]) == ["SYS-BLOCK", "plain string", "ROLE-SYSTEM", "NESTED", "FLAT"]
    assert all_text(body) == api.all_text(requests[0])
    assert api.find_requests("ROLE-SYS") == requests[:2]
    assert api.find_requests("absent") == []
    assert [r.route for r in api.message_requests] == ["/v1/messages"]


# --------------------------------------------------------------------------------------------------
# The real CLI


@pytest.fixture(scope="module")
def claude() -> Path:
    """The pinned CLI, installed on first use; skips when it cannot be installed."""
    try:
        return install_claude()
    except ClaudeCLIUnavailable as exc:
        pytest.skip(f"Claude Code {CLAUDE_CODE_VERSION} unavailable: {exc}")


def _context_hook(event: str, marker: str, runner: str) -> dict[str, Any]:
    payload = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": marker}})
    if runner == "python3":
        command = f'python3 -c "import json; print(json.dumps({json.loads(payload)!r}))"'
    else:
        command = f"printf '%s\\n' '{payload}'"
    return {"hooks": [{"type": "command", "command": command, "timeout": 20}]}


@pytest.fixture()
def harnesscheck_plugin(tmp_path: Path) -> Path:
    """A throwaway plugin whose SessionStart / UserPromptSubmit hooks inject MARKER-SS-123 / MARKER-UPS-456."""
    root = tmp_path / "harnesscheck"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / "hooks").mkdir()
    manifest = {"name": "harnesscheck", "version": "0.0.1", "description": "Test harness self-check"}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    hooks = {
        "hooks": {
            "SessionStart": [_context_hook("SessionStart", "MARKER-SS-123", "python3")],
            "UserPromptSubmit": [_context_hook("UserPromptSubmit", "MARKER-UPS-456", "sh")],
        }
    }
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks, indent=2))
    return root


@pytest.mark.claude
def test_cli_hook_context_reaches_fake_api(claude: Path, tmp_path: Path, harnesscheck_plugin: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    with FakeMessagesAPI([text("harness reply")]) as api:
        run = run_claude(workdir, tmp_path / "home", "say hi", base_url=api.base_url, plugin_dir=harnesscheck_plugin)
    run.check()
    assert run.json["result"] == "harness reply" and run.json["is_error"] is False
    assert "harnesscheck" in run.debug_log

    main = api.find_requests("say hi")
    assert len(main) == 1 and main[0].is_messages and main[0].body["stream"] is True
    messages = main[0].body["messages"]
    carriers = [m for m in messages if any("MARKER-SS-123" in t for t in all_text({"messages": [m]}))]
    assert len(carriers) == 1 and carriers[0]["role"] == "system"
    carrier_text = "\n".join(all_text({"messages": carriers}))
    assert "SessionStart hook additional context: MARKER-SS-123" in carrier_text
    assert "UserPromptSubmit hook additional context: MARKER-UPS-456" in carrier_text
    assert not any("MARKER" in t for t in all_text({"system": main[0].body["system"]}))


@pytest.mark.claude
def test_cli_tool_round_trip(claude: Path, tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> Any:
        results = tool_results(body)
        if results:
            return text(f"tool said: {results[0]['content']}")
        return [text("running it"), tool_use("Bash", {"command": "echo harness-$((40+2))", "description": "echo"})]

    workdir = tmp_path / "work"
    workdir.mkdir()
    with FakeMessagesAPI(responder=responder) as api:
        run = run_claude(
            workdir, tmp_path / "home", "run it", base_url=api.base_url, extra_args=["--allowedTools", "Bash"]
        )
    run.check()
    assert run.json["result"] == "tool said: harness-42" and run.json["num_turns"] == 2
    assert len(api.message_requests) == 2 and not api.errors


@pytest.mark.claude
def test_cli_plugin_validate(claude: Path, tmp_path: Path, harnesscheck_plugin: Path) -> None:
    run = claude_plugin(tmp_path / "home", "validate", "--json", str(harnesscheck_plugin)).check()
    report = json.loads(run.stdout)
    assert report["success"] is True
    assert {hook["event"] for hook in report["provides"]["hooks"]} == {"SessionStart", "UserPromptSubmit"}
