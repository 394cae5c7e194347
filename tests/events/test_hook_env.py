"""The tests' hook environment carries what a user's shell passes to Claude Code, and so to its hooks: uv's
settings and the CA bundle variables (without them, hook tests fail on a machine with its own certificates
once uv's cached index needs revalidating), and the launcher hands all of it on to uv."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hooks import hook_env, run_hook

SHELL = {
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
    "SSL_CERT_DIR": "/etc/ssl/certs",
    "REQUESTS_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt",
    "CURL_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt",
    "UV_INDEX_URL": "https://pypi.internal.example/simple",
    "UV_NATIVE_TLS": "1",
    "UV_OFFLINE": "1",
}


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    values = {**SHELL, "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def test_hook_env_passes_the_shells_uv_and_ca_settings(shell, tmp_path):
    env = hook_env(tmp_path / "data")
    for name, value in shell.items():
        assert env.get(name) == value, name
    assert env["AGENTCTX_HOME"] == str(tmp_path / "data") and env["AGENTCTX_LLM"] == "0"


def test_hook_env_leaves_out_what_the_shell_does_not_set(monkeypatch, tmp_path):
    for name in (*SHELL, "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    env = hook_env(tmp_path / "data")
    assert not set(env) & {*SHELL, "XDG_CACHE_HOME"}


def test_the_launcher_hands_them_on_to_uv(shell, tmp_path):
    """A stand-in uv records the environment it was started with."""
    seen = tmp_path / "uv-env"
    uv = tmp_path / "bin" / "uv"
    uv.parent.mkdir()
    uv.write_text(f"#!/bin/sh\ncat >/dev/null\nenv > {seen}\n")
    uv.chmod(0o755)
    proc = run_hook("user_prompt_submit", {"prompt": "x"}, tmp_path / "data",
                    env=hook_env(tmp_path / "data", AGENTCTX_UV=str(uv)))
    assert proc.returncode == 0
    got = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    for name, value in shell.items():
        assert got.get(name) == value, name
