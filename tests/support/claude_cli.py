"""Locate, install and run the pinned Claude Code CLI in an isolated, offline environment.

The CLI is installed with npm into a cache folder outside the repository (``$AGENTCTX_TEST_CACHE`` or
``~/.cache/agentctx-test``, subfolder ``claude-code-<version>``) and reused between runs;
``$AGENTCTX_CLAUDE_BIN`` overrides the location entirely. Every run gets an environment built from
scratch (``env -i`` style): nothing from the caller leaks in unless passed as ``extra_env``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CLAUDE_CODE_VERSION",
    "ClaudeCLIUnavailable",
    "ClaudeRun",
    "claude_bin",
    "claude_env",
    "claude_plugin",
    "find_claude",
    "install_claude",
    "run_claude",
    "run_claude_session",
]

CLAUDE_CODE_VERSION = "2.1.332"
_PACKAGE = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"


class ClaudeCLIUnavailable(RuntimeError):
    """The pinned CLI is not installed and cannot be installed (no npm, or npm failed)."""


# --------------------------------------------------------------------------------------------------
# Locating and installing


def _install_dir() -> Path:
    cache = os.environ.get("AGENTCTX_TEST_CACHE") or str(Path.home() / ".cache" / "agentctx-test")
    return Path(cache).expanduser() / f"claude-code-{CLAUDE_CODE_VERSION}"


def claude_bin() -> Path:
    """Where the pinned CLI lives (or will live once :func:`install_claude` ran); may not exist yet."""
    override = os.environ.get("AGENTCTX_CLAUDE_BIN")
    if override:
        return Path(override).expanduser()
    return _install_dir() / "node_modules" / ".bin" / "claude"


def _works(binary: Path) -> bool:
    """True when ``binary --version`` reports the pinned version."""
    if not os.access(binary, os.X_OK):
        return False
    try:
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip().startswith(CLAUDE_CODE_VERSION)


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path``, so parallel pytest workers install only once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install_claude(timeout: float = 900) -> Path:
    """Return the pinned CLI, installing it with npm first if needed (idempotent, lock-protected).

    With ``$AGENTCTX_CLAUDE_BIN`` set nothing is installed. Raises :class:`ClaudeCLIUnavailable` when
    the binary is missing and npm is absent or fails.
    """
    binary = claude_bin()
    if os.environ.get("AGENTCTX_CLAUDE_BIN"):
        if not _works(binary):
            raise ClaudeCLIUnavailable(f"$AGENTCTX_CLAUDE_BIN={binary} is not Claude Code {CLAUDE_CODE_VERSION}")
        return binary
    folder = _install_dir()
    with _file_lock(folder.with_name(folder.name + ".lock")):
        if _works(binary):
            return binary
        npm = shutil.which("npm")
        if npm is None:
            raise ClaudeCLIUnavailable(f"npm not found on PATH; cannot install {_PACKAGE}")
        folder.mkdir(parents=True, exist_ok=True)
        # Node < 22 prints EBADENGINE but the package only wraps a native binary, so that is fine.
        cmd = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), _PACKAGE]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise ClaudeCLIUnavailable(f"{' '.join(cmd)} timed out after {timeout}s") from exc
        if done.returncode != 0 or not _works(binary):
            output = (done.stdout + done.stderr)[-4000:]
            raise ClaudeCLIUnavailable(f"{' '.join(cmd)} exited {done.returncode}; {binary} unusable\n{output}")
    return binary


def find_claude() -> Path | None:
    """The pinned CLI if it is usable or can be installed, else None (for ``pytest.skip``)."""
    try:
        return install_claude()
    except ClaudeCLIUnavailable:
        return None


# --------------------------------------------------------------------------------------------------
# Running


def claude_env(home: Path, base_url: str | None = None, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A from-scratch environment isolating the CLI in ``home`` and keeping it offline.

    ``PATH`` is the caller's ``~/.local/bin`` (where uv installs itself), then the system directories,
    then, if ``uv`` lives elsewhere, its directory last (so it cannot shadow the system ``python3``).
    Hooks therefore run the system ``python3``; pass ``extra_env={"PATH": ...}`` to change that.
    """
    home = Path(home)
    tmp = home / "tmp"
    config = home / ".claude"
    for folder in (tmp, config):
        folder.mkdir(parents=True, exist_ok=True)
    path = [str(Path.home() / ".local" / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
    uv = shutil.which("uv", path=os.pathsep.join(path)) or shutil.which("uv")
    if uv is not None:
        path.append(str(Path(uv).parent))
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(path)),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "TMPDIR": str(tmp),
        "CLAUDE_CODE_TMPDIR": str(tmp),
        "ANTHROPIC_API_KEY": "dummy",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_FEEDBACK_SURVEY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    env.update(extra_env or {})
    return env


@dataclass(frozen=True)
class ClaudeRun:
    """The outcome of one CLI invocation."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    debug_log: str
    duration: float
    mcp_servers: tuple = ()  # run_claude_session: the MCP servers' status when the prompt was sent

    @property
    def json(self) -> Any:
        """``stdout`` parsed as JSON; for ``stream-json`` a list of the parsed lines; None if unparseable."""
        try:
            return json.loads(self.stdout)
        except ValueError:
            pass
        try:
            return [json.loads(line) for line in self.stdout.splitlines() if line.strip()] or None
        except ValueError:
            return None

    @property
    def result(self) -> Any:
        """The run's result: the ``json`` output, or the ``{"type": "result"}`` event of ``stream-json``."""
        data = self.json
        if isinstance(data, list):
            return next((e for e in reversed(data) if isinstance(e, dict) and e.get("type") == "result"), None)
        return data

    def check(self) -> ClaudeRun:
        """Raise AssertionError with the output and log tail unless the run exited 0."""
        if self.returncode != 0:
            raise AssertionError(
                f"claude exited {self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}\n"
                f"debug log tail:\n{self.debug_log[-5000:]}"
            )
        return self


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float, debug_file: Path | None) -> ClaudeRun:
    started = time.monotonic()
    try:
        done = subprocess.run(
            args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        out, err = exc.stdout or b"", exc.stderr or b""
        returncode = -9
        stdout = out.decode(errors="replace") if isinstance(out, bytes) else out
        stderr = (err.decode(errors="replace") if isinstance(err, bytes) else err) + f"\n[timed out after {timeout}s]"
    log = debug_file.read_text(errors="replace") if debug_file is not None and debug_file.exists() else ""
    return ClaudeRun(args, returncode, stdout, stderr, log, time.monotonic() - started)


def run_claude(
    workdir: Path,
    home: Path,
    prompt: str,
    *,
    base_url: str,
    plugin_dir: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 120,
    output_format: str = "json",
) -> ClaudeRun:
    """Run ``claude -p <prompt>`` in ``workdir`` against ``base_url``, isolated in ``home``.

    Adds ``--output-format``, ``--plugin-dir`` (if given) and ``--debug-file <home>/logs/debug-<n>.log``;
    ``extra_args`` go last (e.g. ``--allowedTools``, ``--verbose``). Does not raise on failure: see
    :meth:`ClaudeRun.check`.
    """
    home = Path(home)
    env = claude_env(home, base_url, extra_env)
    debug_file = _fresh_path(home / "logs", "debug", ".log")
    args = [str(claude_bin()), "-p", prompt, "--output-format", output_format]
    if plugin_dir is not None:
        args += ["--plugin-dir", str(plugin_dir)]
    args += ["--debug-file", str(debug_file), *extra_args]
    return _run(args, Path(workdir), env, timeout, debug_file)


def run_claude_session(
    workdir: Path,
    home: Path,
    prompt: str,
    *,
    base_url: str,
    plugin_dir: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 120,
    ready_timeout: float = 120,
) -> ClaudeRun:
    """Like :func:`run_claude`, but the prompt is sent the way a user's session gets there: once the MCP
    servers are connected.

    Claude Code connects MCP servers in the background (``MCP_CONNECTION_NONBLOCKING``): ``-p`` waits about
    2 s for them, then sends its first request without a server that is still starting (no tools, no
    instructions). A person sees the server in ``/mcp`` and an SDK client asks ``mcpServerStatus``; here
    the session runs with ``--input-format stream-json`` and is asked the same (``mcp_status`` control
    requests) until every server is ``connected`` (AssertionError naming the status if one fails or does
    not connect within ``ready_timeout``); then the prompt goes in as a user message and the run ends at
    its ``result`` event. ``stdout`` is the ``stream-json`` output (see :attr:`ClaudeRun.result`).
    """
    home = Path(home)
    env = claude_env(home, base_url, extra_env)
    debug_file = _fresh_path(home / "logs", "debug", ".log")
    args = [str(claude_bin()), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    if plugin_dir is not None:
        args += ["--plugin-dir", str(plugin_dir)]
    args += ["--debug-file", str(debug_file), *extra_args]
    started = time.monotonic()
    lines: list[str] = []
    arrived = threading.Condition()
    errors = tempfile.TemporaryFile()
    proc = subprocess.Popen(args, cwd=Path(workdir), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=errors, text=True)

    def read() -> None:
        for line in proc.stdout:
            with arrived:
                lines.append(line)
                arrived.notify_all()
        with arrived:
            arrived.notify_all()

    def wait_line(match: str, deadline: float) -> dict | None:
        """The first output line containing ``match``, parsed; None at the deadline or once the output ended."""
        with arrived:
            while True:
                found = next((line for line in lines if match in line), None)
                if found is not None:
                    return json.loads(found)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not reader.is_alive():
                    return None
                arrived.wait(min(0.25, remaining))

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    servers: list[dict] = []
    try:
        deadline = time.monotonic() + ready_timeout
        for n in range(1, 100_000):
            send({"type": "control_request", "request_id": f"mcp-status-{n}", "request": {"subtype": "mcp_status"}})
            answer = wait_line(f'"request_id":"mcp-status-{n}"', deadline)
            if answer is None:
                raise AssertionError(f"no answer to mcp_status within {ready_timeout}s (exit {proc.poll()})")
            servers = answer["response"].get("response", {}).get("mcpServers", [])
            waiting = [s for s in servers if s.get("status") == "pending"]
            broken = [s for s in servers if s.get("status") not in ("pending", "connected")]
            if broken:
                raise AssertionError(f"MCP server not connected: {json.dumps(broken)[:2000]}")
            if not waiting:
                break
            if time.monotonic() >= deadline:
                raise AssertionError(f"MCP servers still pending after {ready_timeout}s: {json.dumps(waiting)}")
            time.sleep(0.2)
        send({"type": "user", "message": {"role": "user", "content": prompt}})
        done = wait_line('"type":"result"', time.monotonic() + timeout)
        proc.stdin.close()
        try:
            proc.wait(timeout=30 if done else 5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        returncode = proc.returncode if done else -9
    except AssertionError as exc:
        proc.kill()
        proc.wait()
        log = debug_file.read_text(errors="replace") if debug_file.exists() else ""
        raise AssertionError(f"{exc}\ndebug log tail:\n{log[-5000:]}") from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        reader.join(timeout=10)
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
        errors.close()
    log = debug_file.read_text(errors="replace") if debug_file.exists() else ""
    if not done:
        stderr += f"\n[no result within {timeout}s]"
    return ClaudeRun(args, returncode, "".join(lines), stderr, log, time.monotonic() - started, tuple(servers))


def claude_plugin(home: Path, *args: str, cwd: Path | None = None, timeout: float = 120) -> ClaudeRun:
    """Run ``claude plugin <args>`` (validate, marketplace add, install, list ...) isolated in ``home``.

    No API is involved; ``ANTHROPIC_BASE_URL`` points at a closed loopback port so nothing leaks out.
    """
    home = Path(home)
    env = claude_env(home, "http://127.0.0.1:9")
    return _run([str(claude_bin()), "plugin", *args], Path(cwd or home), env, timeout, None)


def _fresh_path(folder: Path, stem: str, suffix: str) -> Path:
    """Reserve and return ``folder/stem-<n>suffix`` for the first ``n`` not yet taken."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        candidate = folder / f"{stem}-{n}{suffix}"
        try:
            candidate.touch(exist_ok=False)  # reserve the name
        except FileExistsError:
            continue
        return candidate
    raise RuntimeError(f"no free {stem}-N{suffix} name in {folder}")
