"""When uv cannot install: SessionStart says so in one line the person sees, with the cause and the fix, once
per cause; every other hook stays silent; the MCP server still starts and lists its tools.

Real processes throughout: the hooks through hooks/launch.sh with JSON stdin, the real uv with an empty cache
(``UV_CACHE_DIR`` a new folder, so nothing is installed yet, as right after an install on a new machine)
failing for real causes on loopback: offline (``UV_OFFLINE``), a proxy that refuses (``HTTPS_PROXY`` at a closed
port), and a TLS-intercepting proxy whose certificate uv rejects (a loopback CONNECT proxy with a self-signed
certificate made by ``openssl``).
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from agentctx import prepare
from tests.support import bundle
from tests.support.hooks import hook_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plugin() -> Path:
    return bundle.copy_bundle(bundle.test_cache() / "bundle" / "uv-failures")


@pytest.fixture
def world(tmp_path, plugin):
    """A hook environment in which nothing is installed: empty uv cache, empty agentctx cache and store."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    env = hook_env(tmp_path / "data", CLAUDE_PLUGIN_ROOT=str(plugin), UV_CACHE_DIR=str(tmp_path / "uv-cache"),
                   AGENTCTX_CACHE_DIR=str(tmp_path / "cache"), TMPDIR=str(tmp_path))
    for name in ("UV_OFFLINE", "UV_NATIVE_TLS", "SSL_CERT_FILE", "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        env.pop(name, None)
    return plugin, repo, env


def hook(plugin: Path, event: str, repo: Path, env: dict, session: str = "s1") -> subprocess.CompletedProcess:
    payload = {"session_id": session, "cwd": str(repo), "hook_event_name": event, "prompt": "hello",
               "transcript_path": str(repo / "t.jsonl"), "source": "startup"}
    script = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "Stop": "stop",
              "PostToolUse": "post_tool_use"}[event]
    return subprocess.run(["sh", str(plugin / "hooks" / "launch.sh"), script], env=env, cwd=repo,
                          input=json.dumps(payload).encode(), capture_output=True, timeout=180)


class InterceptingProxy:
    """An HTTPS proxy on 127.0.0.1 that answers CONNECT and then presents its own self-signed certificate,
    as TLS-inspecting corporate proxies and antivirus products do."""

    def __init__(self, folder: Path):
        if shutil.which("openssl") is None:
            pytest.skip("openssl not available to make a certificate")
        self.cert, key = folder / "proxy-ca.pem", folder / "proxy-key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                        str(self.cert), "-days", "2", "-subj", "/CN=intercepting-proxy"], check=True,
                       capture_output=True)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(self.cert), str(key))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.context.wrap_socket(conn, server_side=True).recv(1)
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.sock.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr
    assert done.stderr == b"", done.stderr  # uv's messages are never passed on
    out = json.loads(done.stdout)
    assert set(out) == {"systemMessage"}, out
    line = out["systemMessage"]
    assert "\n" not in line and len(line) < 600, line
    return line


def silent(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b"", done


@pytest.mark.parametrize("cause", ["certificate", "offline", "proxy"])
def test_session_start_says_why_uv_failed_once_and_the_other_hooks_stay_silent(world, tmp_path, cause):
    plugin, repo, env = world
    proxy = None
    if cause == "certificate":
        proxy = InterceptingProxy(tmp_path)
        env["HTTPS_PROXY"] = env["HTTP_PROXY"] = proxy.url
    elif cause == "offline":
        env["UV_OFFLINE"] = "1"
    else:
        env["HTTPS_PROXY"] = env["HTTP_PROXY"] = f"http://127.0.0.1:{closed_port()}"
    try:
        line = one_line(hook(plugin, "SessionStart", repo, env))
        fixes = {"certificate": ("certificate", "UV_NATIVE_TLS=1", "SSL_CERT_FILE="),
                 "offline": ("offline", "UV_OFFLINE", "online"),
                 "proxy": ("proxy", "HTTPS_PROXY", "NO_PROXY")}[cause]
        for words in fixes:
            assert words in line, line
        assert line.startswith("agentctx cannot install its Python packages with uv")
        assert "agentctx is inactive" in line  # no store yet: nothing works until uv can install
        for event in ("UserPromptSubmit", "PostToolUse", "Stop"):
            silent(hook(plugin, event, repo, env))
        silent(hook(plugin, "SessionStart", repo, env, session="s2"))  # once per cause
        log = (tmp_path / "agentctx-hooks.log").read_text()
        assert "launch session_start: uv exited" in log
        assert not list(tmp_path.glob("agentctx-uv-*"))  # uv's messages were read and removed
    finally:
        if proxy:
            proxy.close()


def test_a_new_cause_is_told_and_a_success_lets_the_same_cause_be_told_again(world):
    plugin, repo, env = world
    env["UV_OFFLINE"] = "1"
    assert "offline" in one_line(hook(plugin, "SessionStart", repo, env))
    env.pop("UV_OFFLINE")
    env["HTTPS_PROXY"] = env["HTTP_PROXY"] = f"http://127.0.0.1:{closed_port()}"
    assert "proxy" in one_line(hook(plugin, "SessionStart", repo, env, session="s2"))
    silent(hook(plugin, "SessionStart", repo, env, session="s3"))
    cache = Path(env["AGENTCTX_CACHE_DIR"])
    assert {p.name for p in (cache / "notices").iterdir()} == {"uv-offline", "uv-proxy"}
    run_env = dict(env)
    run_env.pop("HTTPS_PROXY")
    run_env.pop("HTTP_PROXY")
    empty = Path(env["TMPDIR"]) / "empty-plugin"  # a folder without scripts: a preparation that succeeds
    (empty / ".claude-plugin").mkdir(parents=True)
    (empty / ".claude-plugin" / "plugin.json").write_text('{"version": "1"}')
    done = subprocess.run(["python3", "-m", "agentctx.prepare", "--root", str(empty)], capture_output=True,
                          env={**run_env, "PYTHONPATH": str(ROOT / "lib")}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not list((cache / "notices").iterdir())


def test_the_mcp_server_lists_its_tools_with_nothing_installed(world):
    """No uv environment at all (empty cache, offline): the server still answers initialize and tools/list."""
    plugin, repo, env = world
    env["UV_OFFLINE"] = "1"
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ctx_search", "arguments": {"query": "x"}}},
    ]
    done = subprocess.run(["sh", str(plugin / "mcp" / "launch.sh")], env={**env, "CLAUDE_PROJECT_DIR": str(repo)},
                          input="".join(json.dumps(m) + "\n" for m in messages).encode(), capture_output=True,
                          timeout=60)
    answers = {a["id"]: a for a in map(json.loads, done.stdout.decode().splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "agentctx"
    assert len(answers[2]["result"]["tools"]) == 7
    search = answers[3]["result"]  # no store and no sqlite-utils to create one: a readable refusal
    assert search["isError"] and "Python packages are not installed" in search["content"][0]["text"], search
    assert not (Path(env["UV_CACHE_DIR"]) / "environments-v2").exists()  # uv was never asked


UV_MESSAGES = {
    "certificate": "error: Failed to download `click==8.5.1`\n  cause: client error (Connect)\n"
                   "  cause: invalid peer certificate: UnknownIssuer\n",
    "offline": "error: Failed to download `click==8.5.1`\n  cause: Network connectivity is disabled, but the "
               "requested data wasn't found in the cache: https://files.pythonhosted.org/x.whl\n",
    "proxy": "  cause: client error (Connect)\n  cause: tunnel error: failed to create underlying connection\n"
             "  cause: tcp connect error\n  cause: Connection refused (os error 111)\n",
    "network": "  cause: error sending request for url (https://files.pythonhosted.org/x.whl)\n  cause: client error "
               "(Connect)\n  cause: dns error: failed to lookup address information: Temporary failure in name "
               "resolution\n",
}


@pytest.mark.parametrize("cause", UV_MESSAGES)
def test_classify(cause):
    found, line = prepare.classify(UV_MESSAGES[cause])
    assert found == cause
    assert "Fix:" in line and "(uv: " in line


def test_classify_unknown_keeps_uvs_last_line():
    found, line = prepare.classify("error: something new\n  cause: the disk is full\n")
    assert found == "uv" and "the disk is full" in line


def test_a_failed_preparation_is_told_once_by_session_start(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCTX_CACHE_DIR", str(tmp_path / "cache"))
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"version": "1"}')
    marker = Path(prepare.marker(str(plugin)))
    marker.parent.mkdir(parents=True)
    cause, notice = prepare.classify(UV_MESSAGES["certificate"])
    marker.write_text(json.dumps({"status": "failed", "finished": __import__("time").time(), "cause": cause,
                                  "notice": notice, "failed": {"mcp/server.py": "uv exited 2"}}))
    line = prepare.at_session_start(str(plugin))
    assert line and "UV_NATIVE_TLS" in line and "parts of agentctx are inactive" in line
    assert prepare.at_session_start(str(plugin)) is None
