"""The stdlib MCP server's protocol edges, as raw JSON-RPC lines to the real process (mcp/launch.sh); the SDK's
client covers the ordinary path in tests/test_mcp.py. And how the server finds its prepared packages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx import prepare

ROOT = Path(__file__).resolve().parents[2]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


def exchange(lines: list[str | dict], tmp_path: Path, **env: str) -> tuple[list[dict], str]:
    """Send ``lines`` (one message each), close stdin; every answer line and stderr."""
    data = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in lines).encode()
    done = subprocess.run(["sh", str(ROOT / "mcp" / "launch.sh")], input=data, capture_output=True, timeout=120,
                          env={**os.environ, "AGENTCTX_HOME": str(tmp_path / "data"),
                               "AGENTCTX_CACHE_DIR": str(tmp_path / "cache"), "CLAUDE_PROJECT_DIR": str(tmp_path),
                               **env})
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.decode().splitlines()], done.stderr.decode()


def by_id(answers: list[dict]) -> dict:
    return {a.get("id"): a for a in answers}


def test_version_negotiation_capabilities_and_small_methods(tmp_path):
    old = {**INIT, "id": 2, "params": {**INIT["params"], "protocolVersion": "2024-11-05"}}
    unknown = {**INIT, "id": 3, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}}
    answers = by_id(exchange([INIT, old, unknown, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                              {"jsonrpc": "2.0", "id": 4, "method": "ping"},
                              {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"},
                              {"jsonrpc": "2.0", "id": 6, "method": "resources/list"},
                              {"jsonrpc": "2.0", "id": 7, "method": "no/such"},
                              {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}],
                             tmp_path)[0])
    assert answers[1]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[2]["result"]["protocolVersion"] == "2024-11-05"
    assert answers[3]["result"]["protocolVersion"] == "2025-11-25"  # unknown: the newest we speak
    assert answers[1]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert answers[4]["result"] == {}
    assert answers[5]["result"] == {"prompts": []} and answers[6]["result"] == {"resources": []}
    assert answers[7]["error"]["code"] == -32601
    assert set(answers) == {1, 2, 3, 4, 5, 6, 7}  # notifications get no answer


def test_bad_lines_get_json_rpc_errors_and_the_server_keeps_serving(tmp_path):
    answers, stderr = exchange(["{not json", json.dumps([{"jsonrpc": "2.0", "id": 8, "method": "ping"},
                                                         {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}]),
                                {"id": 10, "method": "ping"}, {"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                                                               "params": ["not", "an", "object"]},
                                {"jsonrpc": "2.0", "id": 12, "method": "tools/call",
                                 "params": {"name": "ctx_get", "arguments": {"ids": "not-a-list"}}},
                                {"jsonrpc": "2.0", "id": 13, "method": "ping"}], tmp_path)
    assert answers[0] == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700,
                                                                  "message": "Parse error: not a JSON message"}}
    found = by_id(answers)
    assert found[8]["result"] == {} and len(found[9]["result"]["tools"]) == 7  # a batch
    assert found[10]["error"]["code"] == -32600 and found[11]["error"]["code"] == -32602
    assert found[12]["result"]["isError"] and "ids: expected a list of strings" in \
        found[12]["result"]["content"][0]["text"]
    assert found[13]["result"] == {}
    assert "Traceback" not in stderr


@pytest.mark.parametrize("started_with", ["SIGINT default", "SIGINT ignored"])
def test_sigint_ends_the_server_quietly(tmp_path, started_with):
    """Claude Code ends its MCP servers with SIGINT: exit 0, no traceback; also when the server was started with
    SIGINT ignored, as everything a shell's background job starts is."""
    import signal

    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if started_with == "SIGINT ignored" else None
    proc = subprocess.Popen(["sh", str(ROOT / "mcp" / "launch.sh")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "AGENTCTX_HOME": str(tmp_path)},
                            preexec_fn=ignore)
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    assert proc.stderr.read() == b""


def test_utf8_both_ways_with_no_packages_on_an_existing_store(tmp_path, monkeypatch):
    from agentctx.store import db

    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path / "data"))
    db.connect().close()  # the store exists (SessionStart made it); the server runs without any packages
    record = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ctx_record", "arguments": {
        "type": "decision", "title": "Zeitzonen: immer UTC — 日本語も", "body": "Grüße"}}}
    search = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "ctx_search", "arguments": {"query": "Zeitzonen"}}}
    answers = by_id(exchange([INIT, record], tmp_path)[0])
    assert not answers[2]["result"]["isError"], answers[2]
    answers = by_id(exchange([INIT, search], tmp_path)[0])
    assert "Zeitzonen: immer UTC — 日本語も" in answers[3]["result"]["content"][0]["text"]


def test_the_server_starts_on_the_standard_library_alone(tmp_path):
    """-X importtime of the real start: nothing outside the standard library and lib/agentctx before tools/list."""
    done = subprocess.run([sys.executable, "-S", "-X", "importtime", str(ROOT / "mcp" / "server.py")],
                          input=(json.dumps(INIT) + "\n").encode(), capture_output=True, timeout=60,
                          env={**os.environ, "AGENTCTX_HOME": str(tmp_path)})
    assert json.loads(done.stdout.decode().splitlines()[0])["result"]["serverInfo"]["name"] == "agentctx"
    modules = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.decode().splitlines()
               if line.startswith("import time:") and "|" in line} - {"imported package"}
    stdlib = set(sys.stdlib_module_names) | {"agentctx", "encodings", "_frozen_importlib_external"}
    assert modules <= stdlib, modules - stdlib
    assert not {"sqlite3", "agentctx.store"} & modules


@pytest.fixture
def marked(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCTX_CACHE_DIR", str(tmp_path / "cache"))
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"version": "1"}')
    site = tmp_path / "site-packages"
    site.mkdir()
    marker = Path(prepare.marker(str(plugin)))
    marker.parent.mkdir(parents=True)

    def write(version: str) -> None:
        marker.write_text(json.dumps({"status": "done", "envs": {"mcp/server.py": {
            "python": "/x/bin/python", "version": version, "paths": [str(site)]}}}))

    monkeypatch.setattr(sys, "path", list(sys.path))
    return plugin, site, write


def test_prepared_packages_are_used_by_the_same_python_version_only(marked):
    plugin, site, write = marked
    assert not prepare.use_packages(str(plugin), "mcp/server.py")  # nothing prepared yet
    write("2.7")
    assert not prepare.use_packages(str(plugin), "mcp/server.py") and str(site) not in sys.path
    write(f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert prepare.use_packages(str(plugin), "mcp/server.py")
    assert sys.path[1] == str(site)  # after lib/, before the interpreter's own site-packages
