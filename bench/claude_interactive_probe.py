"""Does an interactive Claude Code session wait for a slow plugin MCP server? A probe through tmux.

    uv run --group dev python bench/claude_interactive_probe.py 0 5 0 5     # server start delays, seconds

For each delay D: the pinned CLI (tests/support/claude_cli.py) starts in a tmux pane, isolated like the tests'
runs (onboarding, folder trust and the API key pre-accepted in its config), with a plugin holding only
agentctx's MCP server behind ``sleep D`` (``ENABLE_TOOL_SEARCH=false``); once the prompt box shows, "hello" and
Enter are typed; printed: seconds from spawn to the prompt box, from Enter to the first model request (the
fake Messages API on 127.0.0.1), and whether agentctx's tools were in that request, with the debug log's MCP
lines. Prints only (a probe, not a benchmark with medians).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH.parent / "lib"), str(BENCH)]

import claude_start_bench as csb  # noqa: E402

from tests.support import bundle, fake_api  # noqa: E402
from tests.support.claude_cli import claude_bin, claude_env, install_claude  # noqa: E402


def pane(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def probe(delay: float) -> None:
    work = Path(tempfile.mkdtemp(prefix="agentctx-probe-work-"))
    (work / ".git").mkdir()
    home = Path(tempfile.mkdtemp(prefix="agentctx-probe-home-"))
    plugin = csb.slow_server_plugin(Path(tempfile.mkdtemp(prefix="agentctx-probe-plugin-")), delay)
    with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.text("Hello.")) as api:
        env = claude_env(home, api.base_url, {**bundle.plugin_env(home / "data"), "ENABLE_TOOL_SEARCH": "false",
                                              "TERM": "xterm-256color"})
        (Path(env["CLAUDE_CONFIG_DIR"]) / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True, "theme": "dark", "numStartups": 5,
            "projects": {str(work): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
            "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]], "rejected": []}}))
        debug = home / "debug.log"
        cmd = "env -i " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + \
            f" {shlex.quote(str(claude_bin()))} --plugin-dir {shlex.quote(str(plugin))} --debug-file {debug}"
        session = f"agentctx-probe-{os.getpid()}"
        t0 = time.monotonic()
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "45", "-c", str(work), cmd],
                       check=True)
        try:
            ready = None
            for _ in range(600):
                if "\u276f" in pane(session) and "auto mode" in pane(session):
                    ready = time.monotonic() - t0
                    break
                time.sleep(0.1)
            if ready is None:
                print(f"delay {delay}: no prompt box within 60 s\n{pane(session)}")
                return
            subprocess.run(["tmux", "send-keys", "-t", session, "hello"], check=True)
            time.sleep(0.3)
            subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
            sent = time.monotonic()
            first = None
            for _ in range(600):
                first = next((r for r in api.requests if r.is_messages and (r.body or {}).get("tools")), None)
                if first is not None:
                    break
                time.sleep(0.1)
            waited = time.monotonic() - sent
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    tools = first is not None and csb.TOOL in [t.get("name") for t in first.body["tools"]]
    print(f"delay {delay} s: prompt box after {ready:.2f} s; first model request {waited:.2f} s after Enter; "
          f"agentctx tools in it: {tools}")
    for line in (debug.read_text(errors="replace") if debug.exists() else "").splitlines():
        if ("plugin:agentctx" in line and ("Starting" in line or "Successfully" in line)) or "[API REQUEST]" in line:
            print("   ", line[:160])


if __name__ == "__main__":
    install_claude()
    for arg in sys.argv[1:] or ["0", "5"]:
        probe(float(arg))
