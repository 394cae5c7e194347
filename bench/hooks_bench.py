"""Whole-process wall time of the agentctx hooks, run exactly as Claude Code runs them.

Run from the repository root::

    uv run python bench/hooks_bench.py                 # 1k, 10k, 100k, 300k records, 40 runs per case
    uv run python bench/hooks_bench.py --sizes 10000,100000 --runs 15   # a modest run on a shared machine
    uv run python bench/hooks_bench.py --quick         # smoke check: 1k records, 10 runs

For each store size it builds a fresh store with bench/make_store.py, then times
``sh hooks/launch.sh <hook>`` (JSON on stdin, cwd = the project checkout, a minimal hook
environment with uv found where its installer puts it) after warm-up runs:

* SessionStart, warm digest cache (the normal case after a SessionEnd);
* SessionStart, digest built live (the cache file deleted before each run);
* UserPromptSubmit, cycling through 30 prompts (bench/prompts.py), a fresh session_id each
  run so per-session dedup never empties the result;
* PostToolUse, an Edit of one of 50 files (an observation stored each run);
* Stop with a transcript, a fresh session each run (the event handed to a detached process, which starts the
  extraction worker; the next run waits, untimed, until both have finished, so they never load the timed runs);
* the same SessionStart (warm) and UserPromptSubmit run by the script environment's Python
  directly (no launcher, no uv), to separate the launcher's share from ours;
* the bare interpreter: the script environment's ``python -c pass``, interleaved with the hooks.

Each hook's median is also reported as a ratio to that bare interpreter's median at the same size
(same run, same load), the form the targets take (issue 21): UserPromptSubmit <= 2.5x at 10k and
<= 4x at 100k, SessionStart (warm) <= 2x, PostToolUse and Stop <= 2.5x. The load average is
recorded before and after each size.

Baselines in the same run: ``python3 -c pass`` with the real interpreter (and through the
pyenv shim when ``python3`` is one), the interpreter uv runs the hooks with (the script
environment's), and ``uv run --quiet --script`` on a script with no dependencies and on
one with the hooks' dependency list. Also: database size (file + WAL after a checkpoint)
and the largest SessionStart injection, checked against the 1,500-token cap.

Writes bench/results/hooks.json (raw numbers and machine info) and bench/results/hooks.md
(the table, also printed). Stdlib + the agentctx package only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, BENCH)

from make_store import build as build_store  # noqa: E402
from make_store import summarize  # noqa: E402
from prompts import PROMPTS  # noqa: E402

from agentctx import budgets  # noqa: E402

LAUNCH = os.path.join(ROOT, "hooks", "launch.sh")
RATIO_TARGETS = {  # (case, records or None for every size) -> max median / the bare interpreter's median (issue 21)
    ("user_prompt_submit", 10_000): 2.5,
    ("user_prompt_submit", 100_000): 4.0,
    ("session_start_sealed", None): 2.0,
    ("post_tool_use", None): 2.5,
    ("stop", None): 2.5,
}
BARE = "bare_python"  # the case every ratio is taken against
FLOOR = "floor_python"  # what any Python hook reading the store costs at least (bench/baselines/floor.py)


def ratio_target(key: str, records: int) -> float | None:
    return RATIO_TARGETS.get((key, records), RATIO_TARGETS.get((key, None)))
_ID_RE = re.compile(r"id ([0-9A-HJKMNP-TV-Z]{26})\)")


# ---------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------


def _private_tmp(home: str) -> str:
    path = os.path.join(home, "tmp")
    os.makedirs(path, exist_ok=True)
    return path


def hook_env(home: str, project_dir: str) -> dict[str, str]:
    """The environment a hook gets: minimal PATH (uv where its installer puts it), the store."""
    local_bin = os.path.join(os.path.expanduser("~"), ".local", "bin")
    env = {
        "PATH": os.pathsep.join([local_bin, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": os.path.expanduser("~"),
        "LANG": "C.UTF-8",
        "AGENTCTX_HOME": home,
        "CLAUDE_PLUGIN_ROOT": ROOT,
        "CLAUDE_PROJECT_DIR": project_dir,
        "TMPDIR": _private_tmp(home),  # the bench waits for the detached Stop by its saved event there
        "AGENTCTX_LLM": "0",  # Stop's worker extracts without a model: no network, a short background run
    }
    for name in ("UV_CACHE_DIR", "UV_PYTHON", "UV_OFFLINE", "XDG_CACHE_HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def run_once(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: str) -> tuple[float, bytes]:
    t0 = time.perf_counter_ns()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter_ns() - t0) / 1e6
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[:500]}")
    return elapsed, proc.stdout


def stats(samples: list[float]) -> dict:
    ordered = sorted(samples)
    n = len(ordered)
    return {
        "runs": n,
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[max(0, math.ceil(0.95 * n) - 1)], 2),  # nearest rank
        "min_ms": round(ordered[0], 2),
        "max_ms": round(ordered[-1], 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
        "samples_ms": [round(s, 3) for s in samples],
    }


@dataclass
class Case:
    """One thing to time: a command, its stdin, and untimed hooks around each run."""

    key: str
    label: str
    cmd: list[str]
    env: dict[str, str]
    cwd: str
    stdin: bytes | Callable[[int], bytes] = b""
    before: Callable[[int], None] | None = None  # untimed, before each run (i < 0: warm-up)
    after: Callable[[int, bytes], None] | None = None  # untimed, after each run
    samples: list[float] = field(default_factory=list)

    def run(self, i: int) -> None:
        data = self.stdin(i) if callable(self.stdin) else self.stdin
        if self.before:
            self.before(i)
        ms, out = run_once(self.cmd, data, self.env, self.cwd)
        if self.after:
            self.after(i, out)
        if i >= 0:
            self.samples.append(ms)


def measure(cases: list[Case], *, runs: int, warmup: int) -> dict[str, dict]:
    """Warm each case up, then time them interleaved: run i executes every case once, in an
    order rotated by i, so background load and cache effects fall on all cases alike."""
    for case in cases:
        for i in range(-warmup, 0):
            case.run(i)
    for i in range(runs):
        k = i % len(cases)
        for case in cases[k:] + cases[:k]:
            case.run(i)
    out = {}
    for case in cases:
        out[case.key] = stats(case.samples)
        print(f"  {case.label:<48} median {out[case.key]['median_ms']:7.1f} ms   "
              f"p95 {out[case.key]['p95_ms']:7.1f} ms", flush=True)
    return out


def context_of(stdout: bytes) -> str:
    text = stdout.decode("utf-8", errors="replace").strip()
    if not text:
        return ""
    return json.loads(text).get("hookSpecificOutput", {}).get("additionalContext", "")


# ---------------------------------------------------------------------------------------
# Environment facts
# ---------------------------------------------------------------------------------------


def sh(cmd: list[str], **kw) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30, **kw).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def user_path() -> str:
    """The caller's shell PATH: without the project virtualenv that ``uv run`` puts first,
    nor the directories ``pyenv exec`` adds when uv itself was started through a pyenv shim."""
    venv = os.environ.get("VIRTUAL_ENV")
    skip = {os.path.join(venv, "bin"), os.path.join(venv, "Scripts")} if venv else set()
    pyenv = os.environ.get("PYENV_ROOT")
    added_by_pyenv = (os.path.join(pyenv, "versions"), os.path.join(pyenv, "libexec"),
                      os.path.join(pyenv, "plugins")) if pyenv else ()
    keep = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or entry in skip or (added_by_pyenv and entry.startswith(added_by_pyenv)):
            continue
        keep.append(entry)
    return os.pathsep.join(keep)


def prepare_env(env: dict[str, str]) -> dict[str, str]:
    """For untimed set-up runs that may have to create a uv script environment: the hook
    environment plus the caller's (proxy and certificate settings, for the package index)."""
    return {**os.environ, **env}


def prepare_script(uv: str, script: str, env: dict[str, str]) -> None:
    """Create the script's uv environment (untimed), so timed runs measure the warm case."""
    proc = subprocess.run([uv, "run", "--quiet", "--script", script], input=b"", env=prepare_env(env),
                          capture_output=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"could not prepare {script}: {proc.stderr.decode(errors='replace')[:400]}")


def resolve_interpreters(env: dict[str, str]) -> dict:
    """The real python3, the shim (if python3 is one), the hooks' script env, uv."""
    user_python3 = shutil.which("python3", path=user_path()) or "python3"
    real = sh([user_python3, "-c", "import sys; print(sys.executable)"]) or user_python3
    uv = shutil.which("uv", path=env["PATH"])
    if not uv:
        raise SystemExit("uv not found on the hook PATH: install it (https://docs.astral.sh/uv/)")
    script_python = {}
    for hook in ("session_start", "user_prompt_submit", "session_end"):
        script = os.path.join(ROOT, "hooks", f"{hook}.py")
        prepare_script(uv, script, env)  # creates the environment if needed (empty stdin: a no-op run)
        script_python[hook] = sh([uv, "python", "find", "--script", script], env=env)
    for name in ("empty.py", "hook_deps.py"):
        prepare_script(uv, os.path.join(BENCH, "baselines", name), env)
    return {
        "python3_on_path": user_python3,
        "python3_real": real,
        "python3_is_shim": os.path.realpath(user_python3) != os.path.realpath(real),
        "uv": uv,
        "uv_real": os.path.realpath(uv),
        "uv_on_user_path": shutil.which("uv") or "",
        "script_python": script_python,
        "script_python_real": os.path.realpath(script_python["user_prompt_submit"]),
    }


_HOOK_IMPORTS = {  # what each hook script imports (see hooks/*.py)
    "session_start": "agentctx.events.frame, agentctx.events.session_start",
    "user_prompt_submit": "agentctx.events.frame, agentctx.events.user_prompt_submit",
    "post_tool_use": "agentctx.events.frame, agentctx.events.post_tool_use",
    "stop": "agentctx.events.frame, agentctx.events.stop",
    "session_end": "agentctx.events.frame, agentctx.events.session_end",
}
_MODULES_CODE = (
    "import sys; sys.path.insert(0, sys.argv[1]); import {imports}; "
    "print('\\n'.join(sorted(m.__file__ for n, m in sys.modules.items() "
    "if n.startswith('agentctx') and getattr(m, '__file__', None))))"
)


def hook_files(python: str) -> dict[str, list[str]]:
    """Per hook, the files a run of it loads: launch.sh, its script and the
    agentctx modules it imports (found by importing them in the hooks' interpreter)."""
    out = {}
    for hook, imports in _HOOK_IMPORTS.items():
        modules = subprocess.run([python, "-c", _MODULES_CODE.format(imports=imports), os.path.join(ROOT, "lib")],
                                 capture_output=True, text=True).stdout.split()
        files = [os.path.join(ROOT, "hooks", n) for n in ("launch.sh", f"{hook}.py")] + modules
        out[hook] = sorted(os.path.relpath(f, ROOT) for f in files)
    return out


def code_hashes(files: list[str]) -> dict[str, str]:
    """sha256 (12 hex digits) of each file, keyed by its path relative to the repository."""
    import hashlib

    out = {}
    for rel in files:
        try:
            with open(os.path.join(ROOT, rel), "rb") as fh:
                out[rel] = hashlib.sha256(fh.read()).hexdigest()[:12]
        except OSError:
            out[rel] = "missing"
    return out


def code_hash(hashes: dict[str, str]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:12]


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine_info(interp: dict, env: dict[str, str]) -> dict:
    script_py = interp["script_python"]["user_prompt_submit"]
    per_hook = hook_files(script_py)
    files = code_hashes(sorted({f for fs in per_hook.values() for f in fs}))
    return {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu_count": os.cpu_count(),
        "loadavg_at_start": loadavg(),
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python_bench": sys.version.split()[0],
        "python_hooks": sh([script_py, "-c", "import sys; print(sys.version.split()[0])"]),
        "sqlite_hooks": sh([script_py, "-c", "import sqlite3; print(sqlite3.sqlite_version)"]),
        "uv_version": sh([interp["uv"], "--version"], env=env),
        "git_commit": sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]),
        "git_dirty": bool(sh(["git", "-C", ROOT, "status", "--porcelain", "--", "lib", "hooks"])),
        "hook_code_files": files,
        "hook_code_files_by_hook": per_hook,
        "code_hash": code_hash(files),
        "interpreters": interp,
    }


# ---------------------------------------------------------------------------------------
# The benchmark
# ---------------------------------------------------------------------------------------


def baseline_cases(interp: dict, env: dict[str, str], cwd: str) -> list[Case]:
    user_env = {**os.environ, "PATH": user_path()}
    real = interp["python3_real"]
    cases = [
        Case("python3_real", f"{real} -c pass", [real, "-c", "pass"], user_env, cwd),
        Case("python3_real_no_site", "  same, -S (no site / .pth files)", [real, "-S", "-c", "pass"], user_env, cwd),
    ]
    if interp["python3_is_shim"]:
        cases.append(Case("python3_shim", f"{interp['python3_on_path']} -c pass (shim)",
                          [interp["python3_on_path"], "-c", "pass"], user_env, cwd))
    cases += [
        Case("script_python", "hook script-env python -c pass",
             [interp["script_python"]["user_prompt_submit"], "-c", "pass"], env, cwd),
        Case("uv_empty_script", "uv run --script (dependencies = [])",
             [interp["uv"], "run", "--quiet", "--script", os.path.join(BENCH, "baselines", "empty.py")], env, cwd),
        Case("uv_deps_script", "uv run --script (hooks' deps, no work)",
             [interp["uv"], "run", "--quiet", "--script", os.path.join(BENCH, "baselines", "hook_deps.py")], env, cwd),
    ]
    return cases


def consolidate_store(home: str, project_dir: str) -> dict:
    """One full consolidation pass in-process (what SessionEnd starts), so the hooks meet the store as it
    is between sessions: retrieval expansion done (``terms`` indexed, ``context`` stored), and vectors when
    ``AGENTCTX_EMBED_MODEL`` names a model."""
    os.environ["AGENTCTX_HOME"] = home
    from agentctx import project
    from agentctx.consolidation import consolidate

    t0 = time.perf_counter()
    report = consolidate.run(project.detect(project_dir), seconds=3600,
                             use_embeddings=bool(os.environ.get("AGENTCTX_EMBED_MODEL")))
    return {"seconds": round(time.perf_counter() - t0, 1), "status": report["status"],
            "expanded": report["steps"].get("expand", {}).get("expanded")}


def bench_size(n: int, work: str, interp: dict, runs: int, warmup: int, consolidate: bool = False) -> dict:
    home = os.path.join(work, f"store-{n}")
    if os.path.exists(home):
        shutil.rmtree(home)
    print(f"\n{n:,} records: building store in {home}", flush=True)
    store = build_store(home, n, quiet=True)
    print(f"  built in {store['build_seconds']} s; {store['db_bytes']:,} bytes "
          f"({store['db_bytes_per_10k_records']:,} per 10k records)", flush=True)
    if consolidate:
        store["consolidation"] = consolidate_store(home, store["project_dir"])
        print(f"  consolidated in {store['consolidation']['seconds']} s", flush=True)
    repo = store["project_dir"]
    env = hook_env(home, repo)
    cache = os.path.join(home, "digests", f"{store['project_id']}.json")
    launch = lambda hook: ["sh", LAUNCH, hook]  # noqa: E731
    direct = lambda hook: [interp["script_python"][hook], os.path.join(ROOT, "hooks", f"{hook}.py")]  # noqa: E731
    def fresh_session() -> str:  # every run is a new session: per-session dedup never empties a result
        return f"bench-{uuid.uuid4().hex}"

    def ss_payload(i):
        return json.dumps({"session_id": fresh_session(), "transcript_path": "/dev/null", "cwd": repo,
                           "hook_event_name": "SessionStart", "source": "startup"}).encode()

    def ups_payload(i):
        return json.dumps({"session_id": fresh_session(), "transcript_path": "/dev/null", "cwd": repo,
                           "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
                           "prompt": PROMPTS[i % len(PROMPTS)]}).encode()

    def ptu_payload(i):
        path = os.path.join(repo, "src", f"module_{i % 50:02d}.py")
        return json.dumps({"session_id": f"bench-ptu-{i % 5}", "transcript_path": "/dev/null", "cwd": repo,
                           "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": f"toolu_{i}",
                           "tool_input": {"file_path": path, "old_string": "a = 1", "new_string": "a = 2"},
                           "tool_response": {"filePath": path, "oldString": "a = 1", "newString": "a = 2",
                                             "structuredPatch": [], "userModified": False}}).encode()

    transcript = os.path.join(home, "bench-transcript.jsonl")
    with open(transcript, "w", encoding="utf-8") as fh:
        for turn in range(3):
            fh.write(json.dumps({"type": "user", "message": {"role": "user", "content": PROMPTS[turn]}}) + "\n")
            fh.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "We decided to keep retries in the client, with jittered backoff."}]}}) + "\n")
    locks = os.path.join(home, "locks")

    def stop_payload(i):
        return json.dumps({"session_id": fresh_session(), "transcript_path": transcript, "cwd": repo,
                           "hook_event_name": "Stop", "stop_hook_active": False}).encode()

    tmp = env["TMPDIR"]

    def stop_before(i):
        """Untimed: wait until the previous run's detached Stop has finished (launch.sh hands the event to a
        detached process, which removes its saved copy, agentctx-stop.*, when done) and so has the worker it
        started (its lock file is gone)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                busy = any(name.startswith("agentctx-stop.") for name in os.listdir(tmp)) or \
                    any(name.endswith(".lock") for name in os.listdir(locks))
            except FileNotFoundError:
                busy = False
            if not busy:
                return
            time.sleep(0.02)

    def ptu_before(i):
        """Untimed: wait until the previous run's detached PostToolUse is done (its saved copy is gone)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if not any(name.startswith("agentctx-post_tool_use.") for name in os.listdir(tmp)):
                    return
            except FileNotFoundError:
                return
            time.sleep(0.01)

    # The normal path: SessionEnd leaves a digest cache behind.
    run_once(launch("session_end"), json.dumps({"session_id": fresh_session(), "cwd": repo,
                                                "hook_event_name": "SessionEnd", "reason": "other"}).encode(),
             env, repo)
    deadline = time.monotonic() + 120  # SessionEnd hands its work to a detached process (hooks/launch.sh)
    while not os.path.exists(cache) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not os.path.exists(cache):
        raise RuntimeError(f"SessionEnd left no digest cache at {cache}")
    # ... and starts the consolidation pass detached: wait (untimed) until it is done, so it never loads the
    # timed runs (minutes at 100k and more).
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline and os.path.isdir(locks) and \
            any(name.endswith(".lock") for name in os.listdir(locks)):
        time.sleep(0.2)

    injected_ss: list[dict] = []
    cache_rebuilt = {"warm": 0}

    def ss_check(kind):
        def after(i, out):
            text = context_of(out)
            if not text:
                raise RuntimeError(f"SessionStart ({kind}) injected nothing")
            injected_ss.append({"kind": kind, "tokens": budgets.estimate_tokens(text), "chars": len(text),
                                "records": len(_ID_RE.findall(text))})
        return after

    state = {}

    def warm_before(i):
        state["mtime"] = os.stat(cache).st_mtime_ns

    def warm_after(i, out):
        ss_check("warm")(i, out)
        if os.stat(cache).st_mtime_ns != state["mtime"]:
            cache_rebuilt["warm"] += 1

    def live_before(i):
        try:
            os.remove(cache)
        except FileNotFoundError:
            pass

    ups_log: list[dict] = []

    def ups_after(i, out):
        text = context_of(out)
        if i >= 0 and len(ups_log) < runs:
            ups_log.append({"prompt": i % len(PROMPTS), "records": len(_ID_RE.findall(text)),
                            "tokens": budgets.estimate_tokens(text), "chars": len(text)})

    load_before = loadavg()
    cases = measure([
        Case(BARE, "bare interpreter: script-env python -c pass", [interp["script_python"]["user_prompt_submit"],
                                                                   "-c", "pass"], env, repo),
        Case(FLOOR, "floor: script-env python reading its JSON, the store read-only, printing JSON",
             [interp["script_python"]["user_prompt_submit"], os.path.join(BENCH, "baselines", "floor.py")], env, repo,
             ss_payload),
        Case("session_start_warm", "SessionStart, warm digest cache", launch("session_start"), env, repo,
             ss_payload, warm_before, warm_after),
        Case("session_start_live", "SessionStart, digest built live", launch("session_start"), env, repo,
             ss_payload, live_before, ss_check("live")),
        Case("user_prompt_submit", "UserPromptSubmit", launch("user_prompt_submit"), env, repo,
             ups_payload, None, ups_after),
        Case("post_tool_use", "PostToolUse, Edit of one of 50 files, handed to a detached process",
             launch("post_tool_use"), env, repo, ptu_payload, ptu_before),
        Case("stop", "Stop, worker started detached", launch("stop"), env, repo, stop_payload, stop_before),
        # The same hooks without uv in front: the script environment's Python runs the file.
        Case("direct_session_start_warm", "SessionStart warm, script-env python, no uv", direct("session_start"),
             env, repo, ss_payload, warm_before, warm_after),
        Case("direct_user_prompt_submit", "UserPromptSubmit, script-env python, no uv",
             direct("user_prompt_submit"), env, repo, ups_payload),
    ], runs=runs, warmup=warmup)
    sealed = measure_sealed(interp, env, repo, ss_payload, ss_check, runs=runs, warmup=warmup)
    cases.update(sealed.pop("cases"))
    ups_records = [u["records"] for u in ups_log]
    log_file = os.path.join(home, "logs", "agentctx.log")
    hook_log = open(log_file, encoding="utf-8").read().splitlines() if os.path.exists(log_file) else []
    after = summarize(home)
    stop_before(0)  # leave no worker running
    bare = cases[BARE]["median_ms"]
    return {
        "records": n,
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "ratios": {key: round(c["median_ms"] / (cases[SEALED_BARE]["median_ms"] if key in SEALED_CASES else bare), 2)
                   for key, c in cases.items() if key not in (BARE, SEALED_BARE)},
        "sealed_phase": sealed,
        "store": store,
        "store_after_runs": {k: after[k] for k in ("db_bytes", "db_bytes_per_10k_records")},
        "cases": cases,
        "session_start_injection": {
            "max_tokens": max(x["tokens"] for x in injected_ss),
            "max_chars": max(x["chars"] for x in injected_ss),
            "records_injected": sorted({x["records"] for x in injected_ss}),
            "cap_tokens": budgets.SESSION_START_TOKENS,
            "warm_runs_that_rebuilt_cache": cache_rebuilt["warm"],
        },
        "user_prompt_submit_injection": {
            "records_per_run_mean": round(statistics.fmean(ups_records), 2),
            "records_per_run_min": min(ups_records),
            "records_per_run_max": max(ups_records),
            "runs_injecting_nothing": sum(1 for r in ups_records if r == 0),
            "max_tokens": max(u["tokens"] for u in ups_log),
            "per_run": ups_log,
        },
        "hook_log_lines": hook_log[-20:],
    }


SEALED_BARE = "bare_python_sealed_phase"
SEALED_CASES = ("session_start_sealed", "direct_session_start_sealed")


def measure_sealed(interp: dict, env: dict[str, str], repo: str, payload, check, *, runs: int,
                   warmup: int) -> dict:
    """SessionStart when nothing changed since the last start in this folder: the seal (``injection.ready``)
    holds, and the answer is served on stat checks alone. Timed in a phase of its own, interleaved with the
    bare interpreter only: in the main phase every other hook writes the store between two SessionStarts,
    and a SessionStart after a write runs whole (that is the "warm digest cache" row). Starts run whole
    first, a margin apart, until one seals (as the first start after a change does)."""
    os.environ["AGENTCTX_HOME"] = env["AGENTCTX_HOME"]  # where ready.seal_path looks
    from agentctx.injection import ready

    seal = ready.seal_path(os.path.realpath(repo))
    for i in range(20):
        if os.path.exists(seal):
            break
        run_once(["sh", LAUNCH, "session_start"], payload(i), env, repo)
        time.sleep(ready.MARGIN_NS / 1e9 * 2)
    if not os.path.exists(seal):
        raise RuntimeError("no SessionStart sealed its answer (see the hook log)")
    before = os.stat(seal).st_mtime_ns
    cases = measure([
        Case(SEALED_BARE, "bare interpreter, sealed phase", [interp["script_python"]["user_prompt_submit"], "-c",
                                                              "pass"], env, repo),
        Case("session_start_sealed", "SessionStart, nothing changed (sealed)", ["sh", LAUNCH, "session_start"], env,
             repo, payload, None, check("sealed")),
        Case("direct_session_start_sealed", "SessionStart sealed, script-env python, no uv",
             [interp["script_python"]["session_start"], os.path.join(ROOT, "hooks", "session_start.py")], env, repo,
             payload, None, check("sealed")),
    ], runs=runs, warmup=warmup)
    return {"cases": cases, "served_sealed_throughout": os.path.exists(seal) and os.stat(seal).st_mtime_ns == before}


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------

CASE_LABELS = [
    (BARE, "bare interpreter: the script environment's `python -c pass`, interleaved"),
    (FLOOR, "floor: the same interpreter parsing the JSON, reading the store read-only, printing JSON "
            "(`bench/baselines/floor.py`, nothing of agentctx)"),
    ("session_start_sealed", "SessionStart, nothing changed since the last start here: served sealed "
                             "(`sh hooks/launch.sh session_start`; own phase, ratio to that phase's bare interpreter)"),
    ("direct_session_start_sealed", "↳ SessionStart sealed, same Python without launcher or uv"),
    ("session_start_warm", "SessionStart after other hooks wrote the store, digest cache warm: the whole start "
                           "(`sh hooks/launch.sh session_start`)"),
    ("session_start_live", "SessionStart, digest built live (cache deleted before each run)"),
    ("user_prompt_submit", "UserPromptSubmit, 30 prompts cycled (`sh hooks/launch.sh user_prompt_submit`)"),
    ("post_tool_use", "PostToolUse, an Edit, handed to a detached process (`sh hooks/launch.sh post_tool_use`)"),
    ("stop", "Stop, handed to a detached process that starts the worker (`sh hooks/launch.sh stop`)"),
    ("direct_session_start_warm", "↳ SessionStart warm, same Python without launcher or uv"),
    ("direct_user_prompt_submit", "↳ UserPromptSubmit, same Python without launcher or uv"),
]
BASELINE_LABELS = [
    ("python3_real", "`python3 -c pass`, real interpreter ({python3_real})"),
    ("python3_real_no_site", "`python3 -S -c pass`, same interpreter without site / .pth files"),
    ("python3_shim", "`python3 -c pass` through the pyenv shim ({python3_on_path})"),
    ("script_python", "`python -c pass` with the hooks' script-environment interpreter"),
    ("uv_empty_script", "`uv run --quiet --script` on an empty script, `dependencies = []`"),
    ("uv_deps_script", "`uv run --quiet --script` on an empty script with the hooks' dependencies"),
]


def describe_changes(result: dict) -> str:
    """"file (used by: hook, ...)" for each file that changed while the benchmark ran."""
    timed = {"session_start", "user_prompt_submit", "post_tool_use", "stop"}
    parts = []
    for f, hooks in result.get("code_changed_during_run", {}).items():
        note = ", ".join(hooks) + ("" if timed & set(hooks) else "; not a timed hook")
        parts.append(f"{f} (used by {note})")
    return "; ".join(parts)


def markdown(result: dict) -> str:
    m = result["machine"]
    sizes = result["sizes"]
    lines = [
        "# agentctx hook benchmark",
        "",
        f"{m['date_utc']} · {m['cpu_count']} CPUs ({m['cpu_model']}) · {m['platform']} · hooks on Python "
        f"{m['python_hooks']} (SQLite {m['sqlite_hooks']}) · {m['uv_version']} · commit {m['git_commit']}"
        + (" (lib/ or hooks/ modified)" if m["git_dirty"] else "") + f" · hook code hash {m['code_hash']}"
        + (" ⚠️ changed during the run: " + describe_changes(result) if result.get("code_changed_during_run") else ""),
        "",
        f"Load average (1, 5, 15 min): {m.get('loadavg_at_start')} at the start; "
        + "; ".join(f"{s['records']:,}: {s.get('loadavg_before', '?')} before, {s.get('loadavg_after')} after"
                    for s in sizes) + ".",
        "",
        f"Whole-process wall time in ms, median / p95 over {result['runs']} runs after {result['warmup']} "
        "warm-up runs. Command: `" + result["command"] + "`."
        + ("" if not sizes or "consolidation" not in sizes[0]["store"] else
           " Each store had a full consolidation pass before timing (retrieval expansion indexed): "
           + ", ".join(f"{s['store']['consolidation']['seconds']} s at {s['records']:,}" for s in sizes) + "."),
        "",
    ]
    head = "| case | " + " | ".join(f"{s['records']:,} records" for s in sizes) + " |"
    lines += [head, "|---|" + "---:|" * len(sizes)]
    for key, label in CASE_LABELS:
        cells = []
        for s in sizes:
            c = s["cases"].get(key)
            if c is None:
                cells.append("–")
                continue
            ratio = s.get("ratios", {}).get(key)
            target = ratio_target(key, s["records"])
            mark = "" if target is None or ratio is None else (
                " ✅" if ratio <= target else f" ❌ (target ≤ {target}×)")
            cells.append(f"{c['median_ms']:.1f} / {c['p95_ms']:.1f}" + ("" if ratio is None else f" ({ratio}×)")
                         + mark)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "(n×) is the median over the bare interpreter's median at the same size; ✅/❌ mark the "
              "targets of issue 21."]
    lines += ["", "Baselines, same run (median / p95 ms; measured before the hooks and again after them):", "",
              "| baseline | before | after |", "|---|---:|---:|"]
    for key, label in BASELINE_LABELS:
        if key in result["baselines"]:
            cells = [f"{b[key]['median_ms']:.1f} / {b[key]['p95_ms']:.1f}" if key in b else "–"
                     for b in (result["baselines"], result.get("baselines_end", {}))]
            lines.append(f"| {label.format(**m['interpreters'])} | " + " | ".join(cells) + " |")
    lines += ["", "Store and injection:", "",
              "| | " + " | ".join(f"{s['records']:,} records" for s in sizes) + " |",
              "|---|" + "---:|" * len(sizes)]
    rows = [
        ("records in the benchmarked project (active)",
         lambda s: f"{s['store']['records_target_project']:,} ({s['store']['records_target_active']:,})"),
        ("superseded / pinned / global", lambda s: f"{s['store']['superseded']:,} / {s['store']['pinned']} / "
                                                   f"{s['store']['global_preferences']}"),
        ("distinct FTS terms", lambda s: f"{s['store']['fts_distinct_terms']:,}"),
        ("database bytes (file + WAL after checkpoint)", lambda s: f"{s['store']['db_bytes']:,}"),
        ("bytes per 10k records", lambda s: f"{s['store']['db_bytes_per_10k_records']:,}"),
        ("store build time (make_store.py)", lambda s: f"{s['store']['build_seconds']} s"),
        ("SessionStart max tokens / chars (cap 1,500 tokens)",
         lambda s: f"{s['session_start_injection']['max_tokens']:,} / {s['session_start_injection']['max_chars']:,}"
         + (" ✅" if s["session_start_injection"]["max_tokens"] <= 1500 else " ❌")),
        ("UserPromptSubmit records injected per run: mean (min–max)",
         lambda s: f"{s['user_prompt_submit_injection']['records_per_run_mean']} "
                   f"({s['user_prompt_submit_injection']['records_per_run_min']}–"
                   f"{s['user_prompt_submit_injection']['records_per_run_max']})"),
        ("UserPromptSubmit max tokens (cap 2,000)", lambda s: f"{s['user_prompt_submit_injection']['max_tokens']:,}"),
        ("sealed phase: the seal held through every run (no start ran whole)",
         lambda s: "yes" if s.get("sealed_phase", {}).get("served_sealed_throughout") else "no ❌"),
    ]
    for label, fn in rows:
        lines.append(f"| {label} | " + " | ".join(fn(s) for s in sizes) + " |")
    problems = [f"{s['records']:,}: {line}" for s in sizes for line in s["hook_log_lines"]]
    if problems:
        lines += ["", "Hook log lines during the run (errors make timings meaningless):", ""]
        lines += [f"- `{p}`" for p in problems]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="agentctx hook wall-time benchmark (see bench/README.md)")
    ap.add_argument("--sizes", default="1000,10000,100000,300000", help="comma-separated record counts")
    ap.add_argument("--runs", type=int, default=40, help="timed runs per case (default 40)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed warm-up runs per case (default 5)")
    ap.add_argument("--quick", action="store_true", help="smoke check: 1000 records, 10 runs, 2 warm-ups")
    ap.add_argument("--work-dir", default=None, help="where stores are built (default: a temp dir, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the stores after the run")
    ap.add_argument("--consolidate", action="store_true",
                    help="run a consolidation pass on each store before timing (expansion indexed, as between sessions)")
    ap.add_argument("--out", default=os.path.join(BENCH, "results"),
                    help="results folder (default bench/results; --quick writes hooks-quick.*)")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.runs, args.warmup = "1000", 10, 2
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    work = args.work_dir or tempfile.mkdtemp(prefix="agentctx-bench-")
    os.makedirs(work, exist_ok=True)
    command = "uv run python bench/hooks_bench.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])
                                                       if (argv if argv is not None else sys.argv[1:]) else "")

    scratch_env = hook_env(os.path.join(work, "scratch-home"), ROOT)
    interp = resolve_interpreters(scratch_env)
    machine = machine_info(interp, scratch_env)
    print(f"machine: {machine['cpu_count']} CPUs, hooks on Python {machine['python_hooks']}, "
          f"{machine['uv_version']} ({interp['uv_real']})", flush=True)
    t0 = time.time()
    print("baselines", flush=True)
    result = {"command": command.strip(), "runs": args.runs, "warmup": args.warmup, "machine": machine,
              "baselines": measure(baseline_cases(interp, scratch_env, work), runs=args.runs, warmup=args.warmup),
              "sizes": []}
    try:
        for n in sizes:
            result["sizes"].append(bench_size(n, work, interp, args.runs, args.warmup, args.consolidate))
        print("baselines again, after the hooks (drift check)", flush=True)
        result["baselines_end"] = measure(baseline_cases(interp, scratch_env, work), runs=args.runs,
                                          warmup=args.warmup)
    finally:
        if not args.keep and not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    result["wall_seconds"] = round(time.time() - t0, 1)
    result["loadavg_at_end"] = loadavg()
    end_files = code_hashes(list(machine["hook_code_files"]))
    changed = sorted(f for f in machine["hook_code_files"] if end_files.get(f) != machine["hook_code_files"][f])
    result["code_changed_during_run"] = {
        f: [h for h, fs in machine["hook_code_files_by_hook"].items() if f in fs] for f in changed}
    if changed:
        print("WARNING: code the hooks run changed during the run: " + describe_changes(result), file=sys.stderr)

    os.makedirs(args.out, exist_ok=True)
    stem = "hooks-quick" if args.quick else "hooks"
    with open(os.path.join(args.out, f"{stem}.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, ensure_ascii=False)
    md = markdown(result)
    with open(os.path.join(args.out, f"{stem}.md"), "w", encoding="utf-8") as fh:
        fh.write(md)
    print("\n" + md)
    print(f"wrote {os.path.join(args.out, stem)}.json and .md ({result['wall_seconds']} s)")


if __name__ == "__main__":
    main()
