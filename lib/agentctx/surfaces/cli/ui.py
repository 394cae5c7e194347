"""``agentctx ui``: run the dashboard (lib/agentctx_ui.py through uv), in the foreground or detached.

Detached (``--detach``, what ``/ctx-ui`` uses) it reuses a dashboard that is already running, or
starts one with ``spawn.detached``, waits until it listens and prints its URL. The server itself
exits after ``--idle-minutes`` without a request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

import click

from agentctx import paths
from agentctx.surfaces.cli.context import Ctx, Number

READY_TIMEOUT = 180.0  # the first run may fetch the server's packages from PyPI


def server_command(*, port: int | None, project_id: str | None, idle_minutes: float, browser: bool,
                   ready_file: str | None = None, quiet: bool = False,
                   watch_pids: list[int] | None = None) -> list[str] | None:
    """The argv running the dashboard server through uv (None when uv cannot be found)."""
    from agentctx.spawn import uv_script

    argv = uv_script("agentctx_ui.py", ["--idle-seconds", f"{idle_minutes * 60:g}"])
    if argv is None:
        return None
    if port:
        argv += ["--port", str(port)]
    if project_id:
        argv += ["--project-id", project_id]
    if not browser:
        argv.append("--no-browser")
    if ready_file:
        argv += ["--ready-file", ready_file]
    if quiet:
        argv.append("--quiet")
    for pid in watch_pids or []:
        argv += ["--watch-pid", str(pid)]
    return argv


def foreground(argv: list[str]) -> int:
    """Run the server as a child and return its exit status. A signal that ends this command (Ctrl-C, kill,
    a closed terminal) is passed on; and the server watches this process (and the ``uv run`` above it), so
    even ``kill -9`` of ``agentctx ui`` does not leave it running under uv."""
    import signal

    proc = subprocess.Popen(argv)
    got: list[int] = []

    def forward(signum, _frame):
        got.append(signum)
        if proc.poll() is None:
            proc.terminate()

    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), forward)
    code = proc.wait()
    return 128 + got[0] if got else code


def watched_pids() -> list[int]:
    """This process, and the ``uv run`` that started it (bin/agentctx execs uv): killing either ends the server."""
    return [os.getpid(), *([os.getppid()] if os.environ.get("UV_RUN_RECURSION_DEPTH") else [])]


def running() -> dict | None:
    """The dashboard already serving (its state file, checked by a request), or None."""
    try:
        with open(paths.sub("ui", "server.json"), encoding="utf-8") as fh:
            info = json.load(fh)
        with urllib.request.urlopen(f"http://127.0.0.1:{int(info['port'])}/api/health", timeout=2) as res:
            return info if json.load(res).get("app") == "agentctx-ui" else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _url(info: dict, project_id: str | None) -> str:
    return f"http://127.0.0.1:{info['port']}/" + (f"#/records?project={project_id}" if project_id else "")


def start_detached(argv: list[str], ready_file: str, timeout: float = READY_TIMEOUT) -> dict:
    """Start the server detached and wait for its ready file; ClickException if it never comes."""
    from agentctx.spawn import detached

    pid = detached(argv)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(ready_file, encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            time.sleep(0.1)
    raise click.ClickException(f"the dashboard (pid {pid}) did not start within {timeout:g} s; see `agentctx ui`")


@click.command("ui")
@click.option("--port", type=click.IntRange(1, 65535), help="Port, exactly (default: the ui_port setting, 7327, or the next free one).")
@click.option("--no-browser", is_flag=True, help="Do not open the browser.")
@click.option("--detach", is_flag=True, help="Run in the background, print the URL and return.")
@click.option("--idle-minutes", type=Number(min=0.01, max=10_000_000), default=30.0, show_default=True,
              help="Exit after this long without a request.")
@click.pass_obj
def ui(c: Ctx, port, no_browser, detach, idle_minutes):
    """Local dashboard on 127.0.0.1: records, graph, profile, sessions, CLAUDE.md drift."""
    project_id = c.project.id
    if not detach:
        argv = server_command(port=port, project_id=project_id, idle_minutes=idle_minutes, browser=not no_browser,
                              watch_pids=watched_pids())
        if argv is None:
            raise click.ClickException("uv not found; install it: https://docs.astral.sh/uv/")
        sys.exit(foreground(argv))
    info = None if port else running()
    if info is None:
        with tempfile.TemporaryDirectory(prefix="agentctx-ui-") as tmp:
            ready = os.path.join(tmp, "ready.json")
            argv = server_command(port=port, project_id=project_id, idle_minutes=idle_minutes, browser=False,
                                  ready_file=ready, quiet=True)
            if argv is None:
                raise click.ClickException("uv not found; install it: https://docs.astral.sh/uv/")
            info = start_detached(argv, ready)
    url = _url(info, project_id)
    click.echo(f"agentctx dashboard: {url}")
    if not no_browser:
        import webbrowser

        webbrowser.open(url)
