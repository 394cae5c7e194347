"""Reliability: nothing lost, nothing locked, nothing crashes, nothing secret kept.

    uv run --group dev python bench/reliability_bench.py            # full run (~5 min on 2 cores)
    uv run --group dev python bench/reliability_bench.py --quick    # smoke run (~1 min), writes reliability-quick.*

1. **Concurrent writers**: N processes adding records, N real hook processes (PostToolUseFailure error stubs,
   SessionStart and UserPromptSubmit accounting) and consolidation passes, all at once on one store. Counts
   the records each writer says it wrote against what the store holds (lost), and every "locked" / "busy"
   error printed by a writer or logged by a hook.
2. **Fuzzed hook inputs**: >= 5,000 inputs (broken JSON, random bytes, wrong types in every field, huge and
   odd strings, missing / bad paths, garbage transcripts) through every hook's real fail-open frame
   (``frame.run``, which ends with ``os._exit``): each in a forked child of one warm interpreter, stdin
   from a file, stdout and stderr captured. Counts non-zero exits, tracebacks on stderr and stdout that
   is neither empty nor a JSON object. A sample also runs as real processes (``sh hooks/launch.sh``).
3. **kill -9 during consolidation**: the real consolidation pass (through uv, embedding with model2vec when
   ``AGENTCTX_EMBED_MODEL`` names a model) killed with SIGKILL at random moments, its whole process group;
   after each kill, ``PRAGMA integrity_check``, the FTS index check, the vector file and the row count.
4. **Redaction**: recall over the secrets corpus (tests/support/secrets_corpus.py: >= 60 kinds, each in
   several contexts), false positives on the clean corpus and on real text (this repository's code and
   docs, ../shared docs and the evaluation conversations), and ``redact()`` time on 100 KB.
5. **Inputs that used to take minutes**: ``observe.segments`` on 692 KiB of ``VAR=x`` words, PreCompact
   with 10 MB of custom instructions (a process), and the SessionEnd hook's wall time.
6. **Hostile repositories** (``hostile_repo``; alone: ``--only hostile_repo``): a symlink to /dev/zero, a
   FIFO, a socket, a symlink out of the repository, a dangling symlink, a 4 GiB file and TOML/JSON nested
   2,000 deep at every path agentctx reads; every hook, the CLI and the consolidation pass under a 2 GiB
   address-space limit; inputs tried and held, each refused file logged once, nothing written outside.
   The MCP server (every tool, through the SDK's stdio client) and the dashboard (every HTTP route) against the
   same repositories under the same limit (``hostile_surfaces``; alone: ``--only hostile_surfaces``).

6. **Trust (issue 22)**, also alone with ``--trust-only``: FTS rows replaced by random bytes of the same length
   (averages, structure, leaves, docsize), each answered by the CLI, the prompt hook and MCP, the index rebuilt
   and the next SessionStart told; the purge grep (a record's made-up words in every file of the data dir and
   the repository after purge, the next consolidation and the next session, all processes); attacks on a real
   PostgreSQL by a teammate and by another team's member; kill -9 of `agentctx remote sync` while writers run.

Writes bench/results/reliability.{json,md} (``--trust-only``: reliability-trust.{json,md}).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import random
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
sys.path[:0] = [ROOT, os.path.join(ROOT, "lib"), BENCH]

from make_store import build as build_store  # noqa: E402
from make_store import project_dir  # noqa: E402

from tests.support.hooks import hook_env  # noqa: E402

LAUNCH = os.path.join(ROOT, "hooks", "launch.sh")
SHARED_MODEL = os.path.join(os.path.dirname(ROOT), "shared", "models", "m2v-minilm-l6-256")
LOCKED = re.compile(r"database is locked|database table is locked|\bbusy\b", re.IGNORECASE)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _count(db: str, sql: str, *args) -> int:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(sql, args).fetchone()[0]
    finally:
        conn.close()


def _sound(home: str) -> dict:
    """integrity_check, the FTS index, the vector file."""
    from agentctx.store import integrity

    conn = sqlite3.connect(os.path.join(home, "agentctx.db"), timeout=30)
    try:
        errors = integrity.integrity_errors(conn)
        fts = integrity.fts_problem(conn)
    finally:
        conn.close()
    vec = os.path.join(home, "vectors.db")
    vec_ok = True
    if os.path.exists(vec):
        v = sqlite3.connect(vec, timeout=30)
        try:
            vec_ok = v.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        except sqlite3.DatabaseError:
            vec_ok = False
        finally:
            v.close()
    return {"integrity_ok": errors == [], "fts_ok": fts is None, "vectors_ok": vec_ok,
            "detail": errors[:3] + ([fts] if fts else [])}


# -- 1. concurrent writers ------------------------------------------------------------------------------

WRITER = r"""
import os, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "lib"))
from agentctx.store import db, records
w, n, pid = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ok, errors = 0, []
conn = db.connect()
for i in range(n):
    try:
        records.add(conn, pid, type="discovery", title=f"bench writer {w} record {i}", body="concurrent write " * 8)
        ok += 1
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
print(ok)
for e in errors:
    print(e, file=sys.stderr)
"""


# A writer that keeps writing (at least n records, one every 20 ms) until the file named by argv[5] exists: the
# kill -9 trials of `remote sync` need records arriving during every sync, not only during the first.
PACED_WRITER = r"""
import os, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "lib"))
from agentctx.store import db, records
w, n, pid, stop = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
ok, errors, i = 0, [], 0
conn = db.connect()
while i < n or not os.path.exists(stop):
    try:
        records.add(conn, pid, type="discovery", title=f"bench writer {w} record {i}", body="concurrent write " * 8)
        ok += 1
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    i += 1
    time.sleep(0.02)
print(ok)
for e in errors:
    print(e, file=sys.stderr)
"""


def _letters(n: int) -> str:
    """A distinct word per number, with no digits (error signatures normalize numbers away)."""
    word = ""
    while True:
        n, r = divmod(n, 26)
        word = "abcdefghijklmnopqrstuvwxyz"[r] + word
        if n == 0:
            return "q" + word


def concurrency(work: str, *, writers: int, per_writer: int, hooks: int, consolidations: int, model: str | None) -> dict:
    home = os.path.join(work, "concurrent")
    build_store(home, 2000, quiet=True)
    os.environ["AGENTCTX_HOME"] = home
    from agentctx import project

    repo = project_dir(home)
    proj = project.detect(repo)
    env = hook_env(home)
    env.pop("AGENTCTX_NOW", None)
    if model:
        env["AGENTCTX_EMBED_MODEL"] = model
    python = sys.executable
    db_path = os.path.join(home, "agentctx.db")
    before = _count(db_path, "SELECT COUNT(*) FROM records")
    t0 = time.perf_counter()
    procs = [subprocess.Popen([python, "-c", WRITER, ROOT, str(w), str(per_writer), proj.id], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for w in range(writers)]
    consol = [subprocess.Popen(["uv", "run", "--quiet", "--script", os.path.join(ROOT, "lib", "agentctx_consolidate.py"),
                                "--project-id", proj.id, "--session-id", f"bench-{i}", "--cwd", repo, "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
              for i in range(consolidations)]

    def hook(i: int) -> tuple[int, str]:
        kind = i % 3
        if kind == 0:
            name, payload = "post_tool_use", {
                "session_id": f"bench-hook-{i}", "cwd": repo, "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash", "tool_input": {"command": f"python job_{i}.py"},
                "error": f"Exit code 1\nTraceback (most recent call last):\nValueError: bench hook failure {_letters(i)}"}
        elif kind == 1:
            name, payload = "session_start", {"session_id": f"bench-hook-{i}", "cwd": repo,
                                              "hook_event_name": "SessionStart", "source": "startup"}
        else:
            name, payload = "user_prompt_submit", {"session_id": f"bench-hook-{i}", "cwd": repo,
                                                   "hook_event_name": "UserPromptSubmit",
                                                   "prompt": "why is the ledger webhook flaky in production?"}
        p = subprocess.run(["sh", LAUNCH, name], input=json.dumps(payload).encode(), capture_output=True,
                           env={**env, "AGENTCTX_HOOK_DETACHED": "no"}, timeout=300)  # counted right after
        return p.returncode, p.stderr.decode(errors="replace")

    with ThreadPoolExecutor(max_workers=4) as pool:
        hook_results = list(pool.map(hook, range(hooks)))
    outputs = [p.communicate(timeout=900) for p in procs]
    consol_out = [p.communicate(timeout=900) for p in consol]
    elapsed = time.perf_counter() - t0
    written = sum(int(out.strip() or 0) for out, _ in outputs)
    found = _count(db_path, "SELECT COUNT(*) FROM records WHERE title LIKE 'bench writer %'")
    stubs_expected = len([i for i in range(hooks) if i % 3 == 0])
    stubs = _count(db_path, "SELECT COUNT(*) FROM records WHERE title LIKE '%bench hook failure%'")
    from agentctx.store import db as store_db
    from agentctx.store import sessions

    reader = store_db.connect(db_path)  # as `agentctx status` reads: the starts SessionStart left in files folded in
    try:
        sessions.settle(reader)
    finally:
        reader.close()
    starts = _count(db_path, "SELECT COUNT(*) FROM sessions WHERE session_id LIKE 'bench-hook-%' AND injections > 0")
    starts_expected = len([i for i in range(hooks) if i % 3 != 0])
    log = ""
    for path in glob.glob(os.path.join(home, "logs", "agentctx.log*")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            log += fh.read()
    locked = (sum(len(LOCKED.findall(err)) for _, err in outputs) + sum(len(LOCKED.findall(err)) for _, err in consol_out)
              + sum(len(LOCKED.findall(err)) for _, err in hook_results) + len(LOCKED.findall(log)))
    sound = _sound(home)
    return {
        "writers": writers, "records_per_writer": per_writer, "hook_processes": hooks, "consolidation_passes": consolidations,
        "records_before": before, "seconds": round(elapsed, 1),
        "records_written": written, "records_found": found, "records_lost": writers * per_writer - found,
        "writer_errors": sum(len(err.splitlines()) for _, err in outputs),
        "hook_stubs_expected": stubs_expected, "hook_stubs_found": stubs,
        "hook_sessions_expected": starts_expected, "hook_sessions_found": starts,
        "hook_nonzero_exits": sum(1 for rc, _ in hook_results if rc != 0),
        "consolidation_exit_codes": [p.returncode for p in consol],
        "locked_errors": locked, **sound,
    }


# -- 2. fuzzed hook inputs -------------------------------------------------------------------------------

def _hooks() -> dict[str, tuple[str, str, str]]:
    """{script: (event, module, handler)} read from hooks/*.py, so a new hook is fuzzed too."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "hooks", "*.py"))):
        text = open(path, encoding="utf-8").read()
        imp = re.search(r"from (agentctx\.[\w.]+) import (on_\w+)", text)
        run = re.search(r'frame\.run\("(\w+)"', text)
        if imp and run:
            out[os.path.basename(path)[:-3]] = (run.group(1), imp.group(1), imp.group(2))
    return out


ODD_STRINGS = ["", " ", "\x00", "\x00" * 50, "💥" * 1000, "é" * 5000, "\ud800", "\n" * 1000, "'; DROP TABLE records;--",
               'NEAR("a" b*) AND (x OR', "../" * 50 + "etc/passwd", "/", "/dev/null", "/proc/self/mem", "C:\\Windows",
               "${HOME}", "$(rm -rf /)", "`id`", "%s%s%s%n", "{0}{n}{}", "<private>", "</agentctx-context>",
               "password=hunter2hunter2 sk-ant-" + "a" * 40, "x" * 200_000, "ok", "continue", "A=1 " * 5000 + "pytest"]
ODD_VALUES = [None, True, False, 0, -1, 2 ** 63, 1.5e308, float("nan"), [], {}, [1, "a", None], {"a": {"b": [1]}},
              ["x"] * 1000]


def _base(event: str, ctx: dict) -> dict:
    common = {"session_id": f"fuzz-{random.randrange(50)}", "cwd": random.choice(ctx["dirs"]),
              "transcript_path": random.choice(ctx["transcripts"]), "hook_event_name": event}
    extra = {
        "SessionStart": {"source": random.choice(["startup", "resume", "clear", "compact", "fork", "weird"])},
        "UserPromptSubmit": {"prompt": random.choice(ctx["prompts"])},
        "PostToolUse": {"tool_name": random.choice(["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "Read"]),
                        "tool_input": {"command": random.choice(ctx["commands"]), "file_path": random.choice(ctx["files"]),
                                       "notebook_path": random.choice(ctx["files"])},
                        "tool_response": {"stdout": random.choice(ctx["outputs"]), "stderr": random.choice(ctx["outputs"]),
                                          "filePath": random.choice(ctx["files"]), "success": random.choice([True, False])}},
        "PreCompact": {"trigger": random.choice(["manual", "auto"]), "custom_instructions": random.choice(ctx["prompts"])},
        "Stop": {"stop_hook_active": random.choice([True, False]), "last_assistant_message": random.choice(ctx["prompts"])},
        "SessionEnd": {"reason": random.choice(["clear", "logout", "prompt_input_exit", "other", ""])},
        "SubagentStart": {"agent_type": random.choice(["Explore", "Plan", "", "x" * 500]), "agent_id": "a1"},
        "SubagentStop": {"agent_type": "Explore", "agent_id": "a1", "agent_transcript_path": random.choice(ctx["transcripts"]),
                         "last_assistant_message": random.choice(ctx["prompts"])},
        "CwdChanged": {"old_cwd": random.choice(ctx["dirs"]), "new_cwd": random.choice(ctx["dirs"])},
    }.get(event, {})
    if event == "PostToolUse" and random.random() < 0.5:
        common["hook_event_name"] = "PostToolUseFailure"
        extra["error"] = "Exit code 1\n" + random.choice(ctx["outputs"])
        extra["is_interrupt"] = random.choice([True, False, "yes"])
    return {**common, **extra}


def _mutate(payload: dict) -> bytes:
    """One fuzzed stdin: a whole-input corruption, or field-level ones."""
    roll = random.random()
    text = json.dumps(payload, ensure_ascii=random.random() < 0.5, allow_nan=True)
    if roll < 0.06:
        return random.choice([b"", b"null", b"[]", b"42", b'"text"', b"{", b"{\"a\":", text[: random.randrange(len(text))].encode("utf-8", "surrogatepass"),
                              os.urandom(random.randrange(1, 4096)), b"\xff\xfe" + text.encode("utf-16-le", "surrogatepass"),
                              b"[" * 100_000 + b"]" * 100_000, ("{" + '"a":{' * 50_000 + "}" * 50_001).encode()])
    if roll < 0.08:
        return text.encode("utf-8", "surrogatepass")[: random.randrange(1, len(text) + 1)] + os.urandom(8)
    fields = list(payload)
    for _ in range(random.randrange(1, 4)):
        key = random.choice(fields + ["tool_input", "tool_response", "extra_field"])
        action = random.random()
        if action < 0.25:
            payload.pop(key, None)
        elif action < 0.5:
            payload[key] = random.choice(ODD_VALUES)
        elif action < 0.8:
            payload[key] = random.choice(ODD_STRINGS)
        elif isinstance(payload.get(key), dict):
            inner = payload[key]
            for k in list(inner) or ["command"]:
                inner[k] = random.choice(ODD_STRINGS + ODD_VALUES)
    try:
        return json.dumps(payload, allow_nan=True).encode("utf-8", errors="surrogatepass")
    except (TypeError, ValueError):
        return b"{}"


def _fuzz_context(work: str) -> dict:
    base = os.path.join(work, "fuzz-files")
    os.makedirs(base, exist_ok=True)
    repo = os.path.join(base, "repo")
    os.makedirs(os.path.join(repo, ".git"), exist_ok=True)
    with open(os.path.join(repo, ".git", "config"), "w") as fh:
        fh.write('[remote "origin"]\n\turl = git@github.com:acme/fuzz.git\n')
    not_dir = os.path.join(base, "a-file")
    open(not_dir, "w").write("x")
    transcripts = []
    for name, data in [("valid.jsonl", "".join(json.dumps({"type": "user", "uuid": f"u{i}", "parentUuid": None,
                                                             "message": {"role": "user", "content": f"We decided {i}."}})
                                                 + "\n" for i in range(20))),
                       ("garbage.jsonl", os.urandom(20_000).decode("latin-1")),
                       ("truncated.jsonl", '{"type": "user", "message": {"role": "user", "content": "hal'),
                       ("huge-line.jsonl", json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 2_000_000}}))]:
        path = os.path.join(base, name)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(data)
        transcripts.append(path)
    return {
        "dirs": [repo, os.path.join(repo, "src"), base, not_dir, "/nonexistent/dir", "", "/"],
        "transcripts": [*transcripts, "/nonexistent.jsonl", base, "/dev/null", ""],
        "files": [os.path.join(repo, "src", "app.py"), "relative/file.py", "/etc/hosts", "", "../../x", base],
        "prompts": ["why is the ledger webhook flaky?", "ok", "", "x" * 100_000, *ODD_STRINGS[:12]],
        "commands": ["pytest -q", "git commit -m 'fix'", "npm test", "go test ./...", "cargo test", "A=1 " * 20_000 + "pytest",
                     "git checkout -b feature/x", "gh pr create --title t", "cat .env", *ODD_STRINGS[:10]],
        "outputs": ["FAILED tests/test_a.py::test_x - AssertionError\n1 failed, 2 passed in 0.1s", "Traceback (most recent "
                    "call last):\nValueError: boom", "npm ERR! code E404", "panic: runtime error", "ok", "",
                    "\x1b[31merror\x1b[0m: linker failed", "x" * 300_000, *ODD_STRINGS[:6]],
    }


def fuzz(work: str, *, n: int, process_sample: int, seed: int) -> dict:
    random.seed(seed)
    home = os.path.join(work, "fuzz")
    build_store(home, 300, quiet=True)
    os.environ["AGENTCTX_HOME"] = home
    os.environ["AGENTCTX_LLM"] = "0"
    for name in ("UV", "AGENTCTX_UV", "ANTHROPIC_API_KEY", "CLAUDE_PROJECT_DIR"):
        os.environ.pop(name, None)
    saved_path = os.environ.get("PATH", "")
    os.environ["PATH"] = "/usr/bin:/bin"  # no uv: no thousands of detached workers (each logs that it is missing)
    hooks = _hooks()
    import importlib

    from agentctx.events import frame

    handlers = {script: (event, getattr(importlib.import_module(mod), fn)) for script, (event, mod, fn) in hooks.items()}
    ctx = _fuzz_context(work)
    out_dir = tempfile.mkdtemp(dir=work)
    results = {"inputs": 0, "nonzero_exits": 0, "tracebacks": 0, "bad_stdout": 0, "by_hook": {}, "examples": []}
    t0 = time.perf_counter()
    scripts = sorted(handlers)
    for i in range(n):
        script = scripts[i % len(scripts)]
        event, handler = handlers[script]
        stdin = _mutate(_base(event, ctx))
        in_path, out_path, err_path = (os.path.join(out_dir, x) for x in ("in", "out", "err"))
        with open(in_path, "wb") as fh:
            fh.write(stdin)
        pid = os.fork()
        if pid == 0:  # the child: exactly what a hook process does after its imports
            try:
                fd_in = os.open(in_path, os.O_RDONLY)
                fd_out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                fd_err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd_in, 0)
                os.dup2(fd_out, 1)
                os.dup2(fd_err, 2)
                sys.stdin = open(0, closefd=False)
                frame.run(event, handler)
            finally:
                os._exit(99)  # never reached: frame.run always exits
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out = open(out_path, "rb").read()
        err = open(err_path, "rb").read().decode(errors="replace")
        results["inputs"] += 1
        stats = results["by_hook"].setdefault(script, {"inputs": 0, "nonzero": 0, "tracebacks": 0})
        stats["inputs"] += 1
        bad_out = False
        if out.strip():
            try:
                bad_out = not isinstance(json.loads(out), dict)
            except ValueError:
                bad_out = True
        if code != 0 or "Traceback" in err or bad_out:
            stats["nonzero"] += code != 0
            stats["tracebacks"] += "Traceback" in err
            results["nonzero_exits"] += code != 0
            results["tracebacks"] += "Traceback" in err
            results["bad_stdout"] += bad_out
            if len(results["examples"]) < 10:
                results["examples"].append({"hook": script, "code": code, "stderr": err[-500:], "stdin": stdin[:200].decode(errors="replace")})
    results["seconds_in_process"] = round(time.perf_counter() - t0, 1)
    os.environ["PATH"] = saved_path
    # A sample as real processes, exactly as Claude Code runs them.
    env = hook_env(home)
    env["PATH"] = "/usr/bin:/bin:" + os.path.dirname(_uv())
    proc_stats = {"inputs": 0, "nonzero_exits": 0, "tracebacks": 0, "bad_stdout": 0}
    for i in range(process_sample):
        script = scripts[i % len(scripts)]
        stdin = _mutate(_base(handlers[script][0], ctx))
        p = subprocess.run(["sh", LAUNCH, script], input=stdin, capture_output=True, env=env, timeout=300)
        proc_stats["inputs"] += 1
        proc_stats["nonzero_exits"] += p.returncode != 0
        proc_stats["tracebacks"] += b"Traceback" in p.stderr
        if p.stdout.strip():
            try:
                proc_stats["bad_stdout"] += not isinstance(json.loads(p.stdout), dict)
            except ValueError:
                proc_stats["bad_stdout"] += 1
    results["processes"] = proc_stats
    log = ""
    for path in glob.glob(os.path.join(home, "logs", "agentctx.log*")):
        log += open(path, encoding="utf-8", errors="replace").read()
    results["log_lines"] = len(log.splitlines())
    results.update(_sound(home))
    return results


def _uv() -> str:
    import shutil

    return shutil.which("uv") or os.path.expanduser("~/.local/bin/uv")


# -- 3. kill -9 during consolidation -----------------------------------------------------------------------

def kill_consolidation(work: str, *, kills: int, records: int, model: str | None, seed: int) -> dict:
    random.seed(seed)
    home = os.path.join(work, "kill")
    build_store(home, records, quiet=True)
    os.environ["AGENTCTX_HOME"] = home
    from agentctx import project

    repo = project_dir(home)
    proj = project.detect(repo)
    env = hook_env(home)
    if model:
        env["AGENTCTX_EMBED_MODEL"] = model
    db_path = os.path.join(home, "agentctx.db")
    total = lambda: _count(db_path, "SELECT (SELECT COUNT(*) FROM records) + (SELECT COUNT(*) FROM records_archive)")  # noqa: E731
    rows_before = total()
    argv = [_uv(), "run", "--quiet", "--script", os.path.join(ROOT, "lib", "agentctx_consolidate.py"), "--project-id",
            proj.id, "--session-id", "bench-kill", "--cwd", repo, "--time-budget", "600"]
    trials = []
    for _ in range(kills):
        delay = random.uniform(0.3, 6.0)
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        time.sleep(delay)
        finished = p.poll() is not None
        try:
            os.killpg(p.pid, signal.SIGKILL)  # uv and the Python it runs: the whole group
        except ProcessLookupError:
            pass
        p.wait()
        state = _sound(home)
        trials.append({"after_s": round(delay, 2), "finished_before_kill": finished, **state,
                       "rows": total()})
    done = subprocess.run(argv + ["--json"], capture_output=True, text=True, env=env, timeout=1800)
    final = _sound(home)
    return {"records": records, "kills": kills, "model": model, "rows_before": rows_before,
            "trials_sound": sum(1 for t in trials if t["integrity_ok"] and t["fts_ok"] and t["vectors_ok"]),
            "trials_rows_kept": sum(1 for t in trials if t["rows"] == rows_before),
            "final_pass_exit": done.returncode, "final": final, "trials": trials}


# -- 4. redaction -----------------------------------------------------------------------------------------

def _texts_of(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _texts_of(v, out)
    elif isinstance(value, list):
        for v in value:
            _texts_of(v, out)


def redaction(runs: int) -> dict:
    from agentctx import redact
    from tests.support.secrets_corpus import clean_texts, in_contexts, secret_samples

    samples = secret_samples()
    total = leaked = labelled = 0
    for s in samples:
        for text in in_contexts(s):
            total += 1
            out = redact.redact(text)
            mid = len(s.secret) // 4
            if s.secret in out or (len(s.secret) >= 16 and s.secret[mid:mid + 12] in out):
                leaked += 1
        if s.label == "private" or f"[REDACTED:{s.label}]" in redact.redact(s.text):
            labelled += 1
    clean = clean_texts()
    clean_lines = sum(len(t.splitlines()) for t in clean.values())
    clean_changed = sum(sum(1 for a, b in zip(t.splitlines(), redact.redact(t).splitlines(), strict=False) if a != b)
                        for t in clean.values())
    real: list[str] = []
    for pattern in ("lib/**/*.py", "bench/*.py", "*.md", "bench/results/*.md", "commands/*.md"):
        for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            if not path.endswith("redact.py") and not os.path.basename(path).startswith("reliability"):
                real.append(open(path, encoding="utf-8", errors="replace").read())
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    for path in glob.glob(os.path.join(shared, "docs", "*.md")) + glob.glob(os.path.join(shared, "seeds", "*.txt")):
        real.append(open(path, encoding="utf-8", errors="replace").read())
    eval_file = os.path.join(shared, "eval", "locomo-dev.json")
    if os.path.exists(eval_file):
        conv: list[str] = []
        _texts_of(json.load(open(eval_file, encoding="utf-8")), conv)
        real.append("\n".join(conv))
    real_lines = real_changed = 0
    examples = []
    for text in real:
        a, b = text.splitlines(), redact.redact(text).splitlines()
        real_lines += len(a)
        for x, y in zip(a, b, strict=False):
            if x != y:
                real_changed += 1
                if len(examples) < 8:
                    examples.append(x.strip()[:120])
    speed = {}
    code = (open(os.path.join(ROOT, "lib", "agentctx", "surfaces", "mcp_tools.py"), encoding="utf-8").read() * 10)[:100_000]
    prose = ("\n".join(real[-1:]) * 2)[:100_000] if real else code
    dense = ("\n".join(s.text for s in samples) * 30)[:100_000]
    redact.redact("warm up")
    for name, text in (("code", code), ("prose", prose), ("secrets_dense", dense)):
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            redact.redact(text)
            times.append((time.perf_counter() - t) * 1000)
        speed[name] = {"chars": len(text), "median_ms": round(statistics.median(times), 2),
                       "p95_ms": round(sorted(times)[int(0.95 * (len(times) - 1))], 2)}
    return {"kinds": len({s.kind for s in samples}), "rules": len(redact.RULES), "labels": len({rule.label for rule in redact.RULES}),
            "secrets_in_contexts": total, "leaked": leaked, "recall": round((total - leaked) / total, 4),
            "kinds_with_their_own_label": labelled,
            "clean_corpus": {"texts": len(clean), "lines": clean_lines, "lines_changed": clean_changed},
            "real_text": {"lines": real_lines, "lines_changed": real_changed,
                          "false_positive_rate": round(real_changed / max(real_lines, 1), 5), "examples": examples},
            "speed_100kb": speed}


# -- 5. inputs that used to take minutes ------------------------------------------------------------------

def pathological(work: str, runs: int) -> dict:
    from agentctx.capture import observe

    command = "A=1 " * (692 * 1024 // 4) + "pytest"
    t = time.perf_counter()
    observe.segments(command)
    segments_s = time.perf_counter() - t
    home = os.path.join(work, "patho")
    os.makedirs(os.path.join(home, "repo", ".git"), exist_ok=True)
    repo = os.path.join(home, "repo")
    env = hook_env(os.path.join(home, "data"))
    focus = "Keep the payment flow; never log secrets. " * (10 * 1024 * 1024 // 42)
    payload = json.dumps({"session_id": "p1", "cwd": repo, "hook_event_name": "PreCompact", "trigger": "manual",
                          "custom_instructions": focus, "transcript_path": "/nonexistent.jsonl"}).encode()
    subprocess.run(["sh", LAUNCH, "pre_compact"], input=payload, capture_output=True, env=env, timeout=300)  # warm-up
    t = time.perf_counter()
    p = subprocess.run(["sh", LAUNCH, "pre_compact"], input=payload, capture_output=True, env=env, timeout=300)
    compact_s = time.perf_counter() - t
    end = json.dumps({"session_id": "p2", "cwd": repo, "hook_event_name": "SessionEnd", "reason": "other"}).encode()
    # Interleaved: the hook as shipped (the event handed to a detached process) and the same work done inside
    # the hook, as before (AGENTCTX_HOOK_DETACHED=1 is what the detached side runs with).
    times: dict[str, list[float]] = {"handed_off": [], "in_the_hook": []}
    inline = {**env, "AGENTCTX_HOOK_DETACHED": "1"}
    for i in range(2 * runs):
        kind = ("handed_off", "in_the_hook")[i % 2]
        t = time.perf_counter()
        subprocess.run(["sh", LAUNCH, "session_end"], input=end, capture_output=True, timeout=60,
                       env=env if kind == "handed_off" else inline)
        times[kind].append((time.perf_counter() - t) * 1000)

    def stats(values: list[float]) -> dict:
        return {"median": round(statistics.median(values), 1),
                "p95": round(sorted(values)[int(0.95 * (len(values) - 1))], 1), "max": round(max(values), 1),
                "runs": len(values)}

    return {"segments_692KiB_s": round(segments_s, 3), "pre_compact_10MB_s": round(compact_s, 2),
            "pre_compact_exit": p.returncode, "session_end_hook_ms": stats(times["handed_off"]),
            "session_end_in_the_hook_ms": stats(times["in_the_hook"])}


# -- trust (issue 22): FTS row damage, the purge grep, team-server attacks, kill -9 and writers during sync -----

FTS_KINDS = {  # records_fts_data / shadow rows replaced with random bytes of the same length
    "averages": ("records_fts_data", "id = 1"),
    "structure": ("records_fts_data", "id = 10"),
    "leaves": ("records_fts_data", "id > 10"),
    "docsize": ("records_fts_docsize", "1"),
}


def _cli(home: str, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {}), "AGENTCTX_HOME": home}
    full.pop("AGENTCTX_NOW", None)
    return subprocess.run([os.path.join(ROOT, "bin", "agentctx"), *args], capture_output=True, text=True, env=full,
                          timeout=timeout)


def _hook(name: str, payload: dict, home: str) -> subprocess.CompletedProcess:
    env = hook_env(home)
    env.pop("AGENTCTX_NOW", None)
    return subprocess.run(["sh", LAUNCH, name], input=json.dumps(payload).encode(), capture_output=True, env=env,
                          timeout=300)


def _seed_store(home: str, n: int) -> tuple[str, object]:
    os.makedirs(home, exist_ok=True)
    os.environ["AGENTCTX_HOME"] = home
    from agentctx import clock, project
    from agentctx.store import db, projects, records

    repo = os.path.join(home, "repo")
    os.makedirs(os.path.join(repo, ".git"), exist_ok=True)
    with open(os.path.join(repo, ".git", "config"), "w") as fh:
        fh.write('[remote "origin"]\n\turl = git@github.com:bench/trust.git\n')
    conn = db.connect(os.path.join(home, "agentctx.db"))
    proj = project.detect(repo)
    projects.register(conn, proj)
    with db.transaction(conn):
        for i in range(n):
            records.insert(conn, proj.id, type="decision", title=f"Decision {i} about the kafka topic t{i}",
                           body="Partitioned by account. " * 10, stamp=clock.now())
    conn.close()
    return repo, proj


def fts_damage(work: str, *, trials: int, seed: int, kinds: tuple[str, ...] = tuple(FTS_KINDS)) -> dict:
    """Each kind of FTS row damage, ``trials`` random byte patterns each; after each: `agentctx search` (a
    process), the UserPromptSubmit hook (a process) and the MCP service answer with the expected record,
    the index passes FTS5's integrity check afterwards (repaired by the search that met an error, or, when
    none did because the bytes read as plausible totals, by the next consolidation pass, a process) and the
    next SessionStart says it was rebuilt."""
    from agentctx.store import integrity

    rnd = random.Random(seed)
    out: dict = {"kinds": {}, "trials": 0, "held": 0}
    for kind, (table, where) in ((k, FTS_KINDS[k]) for k in kinds):
        held = tried = undetected = by_pass = 0
        failed: dict = {}
        for t in range(trials):
            home = os.path.join(work, f"fts-{kind}-{t}")
            repo, proj = _seed_store(home, 150)
            db_path = os.path.join(home, "agentctx.db")
            conn = sqlite3.connect(db_path)
            col = "block" if table == "records_fts_data" else "sz"
            rows = conn.execute(f"SELECT id, length({col}) FROM {table} WHERE {where}").fetchall()
            for rid, size in rows:
                conn.execute(f"UPDATE {table} SET {col} = ? WHERE id = ?", (rnd.randbytes(size or 1), rid))
            conn.commit()
            conn.close()
            check = sqlite3.connect(db_path)
            if integrity.fts_problem(check) is None:
                undetected += 1  # the bytes happened to decode: nothing to find, nothing to recover
                check.close()
                continue
            check.close()
            tried += 1
            want = f"Decision {7 + t} about the kafka topic t{7 + t}"
            s = _cli(home, "--project", repo, "search", f"kafka topic t{7 + t}", "--json")
            ok_cli = s.returncode == 0 and "Traceback" not in s.stderr and want in s.stdout
            os.environ["AGENTCTX_HOME"] = home
            p = _hook("user_prompt_submit", {"session_id": f"fts-{t}", "cwd": repo, "hook_event_name": "UserPromptSubmit",
                                             "prompt": f"how is the kafka topic t{7 + t} partitioned?",
                                             "transcript_path": "/nonexistent.jsonl"}, home)
            ok_hook = p.returncode == 0 and want in p.stdout.decode(errors="replace")
            from agentctx.surfaces.mcp_tools import Service

            service = Service(repo)
            try:
                ok_mcp = want in service.search(f"kafka topic t{7 + t}")
            finally:
                service.close()
            check = sqlite3.connect(db_path)
            ok_index = integrity.fts_problem(check) is None
            check.close()
            if not ok_index:  # the searches met no error (the bytes read as plausible totals): the next pass checks
                _cli(home, "--project", repo, "consolidate", "--no-embeddings")
                check = sqlite3.connect(db_path)
                ok_index = integrity.fts_problem(check) is None
                check.close()
                by_pass += ok_index
            start = _hook("session_start", {"session_id": f"fts-s-{t}", "cwd": repo, "hook_event_name": "SessionStart",
                                            "source": "startup", "transcript_path": "/nonexistent.jsonl"}, home)
            ok_told = "full-text index" in start.stdout.decode(errors="replace")
            held += ok_cli and ok_hook and ok_mcp and ok_index and ok_told
            for check_name, ok in (("cli", ok_cli), ("hook", ok_hook), ("mcp", ok_mcp), ("index", ok_index),
                                   ("told", ok_told)):
                if not ok:
                    failed[check_name] = failed.get(check_name, 0) + 1
                    if check_name == "cli":
                        failed.setdefault("cli_stderr", s.stderr[-300:])
        out["kinds"][kind] = {"rows": len(rows), "tried": tried, "held": held, "bytes_that_decoded": undetected,
                              "repaired_by_the_next_consolidation": by_pass, "failed": failed}
        out["trials"] += tried
        out["held"] += held
    return out


PURGE_STAGES = ("before purge", "after purge", "after the next consolidation", "after the next session")


def _traces(words: list[str], *folders: str) -> list[str]:
    found = re.compile("|".join(map(re.escape, words)).encode(), re.IGNORECASE)
    hits: dict[str, None] = {}  # by real path: the repository may lie inside the data dir
    for folder in folders:
        for dirpath, _, names in os.walk(folder):
            for name in names:
                path = os.path.realpath(os.path.join(dirpath, name))
                try:
                    with open(path, "rb") as fh:
                        if found.search(fh.read()):
                            hits[path] = None
                except OSError:
                    continue
    return [os.path.relpath(p, folders[0]) for p in hits]


def purge_grep(work: str, *, trials: int, seed: int) -> dict:
    """A record whose two made-up words agentctx copies everywhere it can (handover titled with the first
    prompt, anchors, session data, neighbours' expansion, digest, daily log, team file, CLAUDE.md through
    `sync --yes`, a store moved aside): files holding either word at each stage, all steps processes."""
    rnd = random.Random(seed)
    per_stage = {s: 0 for s in PURGE_STAGES}
    examples: list[str] = []
    for t in range(trials):
        home = os.path.join(work, f"purge-{t}")
        repo, proj = _seed_store(home, 40)
        words = ["".join(rnd.choice("bcdfghklmnprstvz") + rnd.choice("aeiou") for _ in range(5)) for _ in range(2)]
        os.environ["AGENTCTX_HOME"] = home
        from agentctx.capture import handover
        from agentctx.sharing import teamsync
        from agentctx.store import db, records, sessions

        conn = db.connect(os.path.join(home, "agentctx.db"))
        with db.transaction(conn):
            sessions.start(conn, "s1", proj.id, proj.root, "startup")
        records.add(conn, proj.id, type="discovery", title="The nightly job runs on the old runner", session_id="s1")
        target = records.add(conn, proj.id, type="decision", title=f"Ledger migrations run through {words[0]}",
                             body=f"{words[0]} applies them; {words[1]} keeps the audit trail.", session_id="s1")
        records.add(conn, proj.id, type="convention", title="Migrations are reviewed by two people", session_id="s1")
        transcript = os.path.join(work, f"purge-{t}.jsonl")
        with open(transcript, "w") as fh:
            fh.write(json.dumps({"type": "user", "sessionId": "s1", "uuid": "u1", "message": {
                "role": "user", "content": f"Move the ledger migrations to {words[0]} and {words[1]}"}}) + "\n")
        handover.derive_handover(conn, proj, "s1", transcript)
        teamsync.export(conn, proj, create=True)
        conn.close()
        _cli(home, "--project", repo, "consolidate", "--no-embeddings")
        _cli(home, "--project", repo, "sync", "--yes")
        side = sqlite3.connect(os.path.join(home, "agentctx.db.corrupt-20260101T000000000000Z"))
        src = sqlite3.connect(os.path.join(home, "agentctx.db"))
        src.backup(side)
        src.close()
        side.close()
        per_stage["before purge"] += len(_traces(words, home, repo))
        _cli(home, "--project", repo, "purge", target["id"], "--yes")
        found = _traces(words, home, repo)
        per_stage["after purge"] += len(found)
        examples += found
        _cli(home, "--project", repo, "consolidate", "--no-embeddings")
        found = _traces(words, home, repo)
        per_stage["after the next consolidation"] += len(found)
        examples += found
        for name, extra in (("session_start", {"hook_event_name": "SessionStart", "source": "startup"}),
                            ("user_prompt_submit", {"hook_event_name": "UserPromptSubmit",
                                                    "prompt": "how do the ledger migrations run?"})):
            _hook(name, {"session_id": "s2", "cwd": repo, "transcript_path": "/nonexistent.jsonl", **extra}, home)
        found = _traces(words, home, repo)
        per_stage["after the next session"] += len(found)
        examples += found
    return {"trials": trials, "files_with_the_words": per_stage,
            "held": trials if not any(per_stage[s] for s in PURGE_STAGES[1:]) else 0, "examples": sorted(set(examples))[:10]}


def _team_server(work: str):
    """A PostgreSQL server (tests/support/postgres.py) with the schema, teams red and blue; (server, db, urls,
    pgpass path, admin conn factory) or None when none can start here."""
    from tests.support import postgres

    if postgres.unavailable():
        return None
    server = postgres.Server().start()
    name = "trust"
    server.create_database(name)
    from agentctx.remote import schema

    with server.admin(name) as conn:
        schema.migrate(conn)
        for team in ("red", "blue"):
            schema.add_team(conn, team)
    passwords = {}
    for role, team in (("alice", "red"), ("bob", "red"), ("mallory", "blue")):
        passwords[role] = f"pw-{role}-{random.random()}"
        with server.admin(name) as conn:
            schema.add_member(conn, role, team, password=passwords[role])
    pgpass = postgres.write_pgpass(os.path.join(work, "pgpass"), passwords)
    os.environ["PGPASSFILE"] = pgpass
    urls = {role: server.dsn(name, role) for role in passwords}
    return server, name, urls, pgpass


def _client(work: str, who: str, url: str, origin: str = "git@github.com:bench/trust.git", share: bool = True):
    from agentctx import project
    from agentctx.store import db, projects
    from agentctx.store import remote as store

    home = os.path.join(work, who)
    repo = os.path.join(home, "repo")
    os.makedirs(os.path.join(repo, ".git"), exist_ok=True)
    with open(os.path.join(repo, ".git", "config"), "w") as fh:
        fh.write(f'[remote "origin"]\n\turl = {origin}\n')
    conn = db.connect(os.path.join(home, "agentctx.db"))
    proj = project.detect(repo)
    projects.register(conn, proj)
    store.add(conn, "team", url)
    if share:
        store.set_share(conn, proj.id, True)
    return conn, proj, home, repo


def _plant(conn, team: str, project_id: str, record_id: str, title: str) -> None:
    conn.execute("INSERT INTO agentctx.records (team, id, project_id, type, title, confidence, source, valid_from, "
                 "recorded_at) VALUES (%s, %s, %s, 'decision', %s, 'explicit', 'cli', now(), now())",
                 (team, record_id, project_id, title))
    seq = conn.execute("INSERT INTO agentctx.changes (team, project_id, record_id, op) VALUES (%s, %s, %s, 'upsert') "
                       "RETURNING seq", (team, project_id, record_id)).fetchone()[0]
    conn.execute("UPDATE agentctx.records SET seq = %s WHERE team = %s AND id = %s AND project_id = %s",
                 (seq, team, record_id, project_id))


def team_attacks(work: str) -> dict:
    """Attacks by a teammate (same team) and by a member of another team, each tried and checked."""
    setup = _team_server(work)
    if setup is None:
        return {"skipped": "no PostgreSQL here"}
    server, name, urls, _ = setup
    import psycopg

    from agentctx import project
    from agentctx.remote import client
    from agentctx.remote import sync as engine
    from agentctx.store import projects, records

    results: dict[str, bool] = {}
    try:
        # The squat: blue's member knows red's repository URL (so its project id) and shares it first.
        squat, sproj, _, _ = _client(work, "mallory-squat", urls["mallory"])
        records.add(squat, sproj.id, type="decision", title="Blue shared red's project first")
        squatted = engine.sync_remote(squat, "team")
        alice, aproj, ahome, _ = _client(work, "alice", urls["alice"])
        bob, bproj, _, _ = _client(work, "bob", urls["bob"])
        mal, mproj, _, _ = _client(work, "mallory", urls["mallory"], origin="git@github.com:blue/other.git")
        private_repo = os.path.join(ahome, "private")
        os.makedirs(os.path.join(private_repo, ".git"), exist_ok=True)
        private = project.detect(private_repo)
        projects.register(alice, private)
        mine = records.add(alice, private.id, type="decision", title="Private notes")
        records.add(alice, aproj.id, type="decision", title="Shared decision")
        waiting = records.add(alice, aproj.id, type="decision", title="Not pushed yet")
        engine.sync_remote(bob, "team")
        records.add(mal, mproj.id, type="decision", title="Blue decision")
        engine.sync_remote(mal, "team")
        with client.connect(urls["mallory"]) as m:  # squat an id red has not pushed yet
            _plant(m, "blue", mproj.id, waiting["id"], "squatted")
        first = engine.sync_remote(alice, "team")
        results["another team's squatted id does not block my push"] = first["status"] == "ok" and first["pushed"] >= 2
        titles = {r["title"] for r in records.current(alice, aproj.id)}
        results["another team sharing my project first: I share, sync, see nothing of theirs"] = (
            squatted["status"] == "ok" and squatted["pushed"] == 1 and sproj.id == aproj.id and first["pulled"] == 0
            and "Blue shared red's project first" not in titles)
        again = engine.sync_remote(squat, "team")
        results["... and the squatter sees nothing of mine"] = (
            again["status"] == "ok" and {r["title"] for r in records.current(squat, sproj.id)} ==
            {"Blue shared red's project first"})
        with client.connect(urls["bob"]) as b:
            _plant(b, "red", aproj.id, mine["id"], "HIJACKED")
            b.execute("INSERT INTO agentctx.projects (id, name, team) VALUES (%s, 'p', 'red')", (private.id,))
            _plant(b, "red", private.id, mine["id"], "HIJACKED again")
            b.execute("INSERT INTO agentctx.changes (team, project_id, record_id, op) VALUES ('red', %s, %s, 'purge')",
                      (aproj.id, mine["id"]))
        rep = engine.sync_remote(alice, "team")
        kept = records.get(alice, mine["id"], private.id)
        results["teammate's row with my private id in a shared project refused"] = kept["title"] == "Private notes"
        results["teammate's row in my unshared project refused"] = rep["refused_why"].get("project not shared", 0) >= 1
        results["teammate's purge of my private id refused"] = kept is not None
        results["refusals counted in the report"] = rep["refused"] == 3
        with client.connect(urls["mallory"]) as m:
            errs = []
            for pid, rid in ((aproj.id, waiting["id"]), (aproj.id, "01JZZZZZZZZZZZZZZZZZZZZZZ9"),
                             ("0123456789abcdef", "01JZZZZZZZZZZZZZZZZZZZZZZ9")):
                try:
                    _plant(m, "red", pid, rid, "probe")
                    errs.append("written")
                except psycopg.Error as exc:
                    errs.append(type(exc).__name__ + str(exc).replace(rid, "ID").replace(pid, "P"))
            results["writing into another team's project: same error whether the project and id exist"] = (
                len(set(errs)) == 1 and errs[0] != "written")
            try:
                client.team_of(m, "red")
                told = ["accepted"]
            except client.RemoteError as exc:
                told = [str(exc).replace("red", "T")]
            try:
                client.team_of(m, "nosuchteam")
            except client.RemoteError as exc:
                told.append(str(exc).replace("nosuchteam", "T"))
            results["the client's words about another team: the same whether it exists"] = (
                len(told) == 2 and told[0] == told[1])
            seqs = [r[0] for r in server_query(server, name, "SELECT seq FROM agentctx.changes WHERE team = 'red' "
                                                             "ORDER BY seq")]
            results["red's change numbers show no gap for blue's activity"] = seqs == list(range(seqs[0],
                                                                                                 seqs[0] + len(seqs)))
            red_seq = server_query(server, name, "SELECT agentctx.team_sequence('red')::text")[0][0]
            for label, sql in (("read another team's change sequence", f"SELECT last_value FROM {red_seq}"),
                               ("advance another team's change sequence", f"SELECT nextval('{red_seq}')"),
                               ("take another team's change number", "SELECT agentctx.next_change('red')"),
                               ("pg_stat_user_tables", "SELECT n_live_tup FROM pg_stat_user_tables"),
                               ("pg_statio_user_tables", "SELECT * FROM pg_statio_user_tables"),
                               ("pg_sequences", "SELECT last_value FROM pg_sequences")):
                try:
                    m.execute(sql).fetchall()
                    results[f"member cannot {label}"] = False
                except psycopg.errors.InsufficientPrivilege:
                    results[f"member cannot {label}"] = True
            with server.admin(name) as a:
                a.execute("ANALYZE agentctx.records")
            results["pg_stats hides the records table"] = m.execute(
                "SELECT count(*) FROM pg_stats WHERE schemaname = 'agentctx' AND tablename = 'records'").fetchone()[0] == 0
            results["other team's rows invisible (its copy of the same project included)"] = m.execute(
                "SELECT count(*) FROM agentctx.records WHERE team <> 'blue' OR title IN ('Shared decision', "
                "'Not pushed yet')").fetchone()[0] == 0
            results["other team's changes and tombstones invisible"] = m.execute(
                "SELECT (SELECT count(*) FROM agentctx.changes WHERE team <> 'blue') + "
                "(SELECT count(*) FROM agentctx.purged WHERE team <> 'blue')").fetchone()[0] == 0
            results["update of other team's rows touches nothing"] = m.execute(
                "UPDATE agentctx.records SET title = 'x' WHERE team = 'red'").rowcount == 0
            results["delete of other team's rows touches nothing"] = m.execute(
                "DELETE FROM agentctx.records WHERE team = 'red'").rowcount == 0
            try:
                m.execute("DELETE FROM agentctx.changes")
                results["change log append-only"] = False
            except psycopg.Error:
                results["change log append-only"] = True
        with server.admin(name) as a:
            a.execute("ALTER TABLE agentctx.records ADD CONSTRAINT no_drafts CHECK (title NOT LIKE 'DRAFT%')")
        records.add(alice, aproj.id, type="decision", title="DRAFT refused by the server")
        good = records.add(alice, aproj.id, type="decision", title="Fine after the draft")
        rep = engine.sync_remote(alice, "team")
        results["an unmergeable row is reported once and the rest syncs"] = (
            rep["status"] == "ok" and len(rep["rejected"]) == 1 and
            bool(server_rows(server, name, good["id"])))
    finally:
        server.stop()
    return {"attacks": len(results), "held": sum(results.values()), "each": results}


def server_query(server, name: str, sql: str) -> list:
    with server.admin(name) as a:
        return a.execute(sql).fetchall()


def server_rows(server, name: str, record_id: str) -> int:
    with server.admin(name) as a:
        return a.execute("SELECT count(*) FROM agentctx.records WHERE id = %s", (record_id,)).fetchone()[0]


def sync_under_fire(work: str, *, kills: int, writers: int, per_writer: int, seed: int) -> dict:
    """`agentctx remote sync` (a process) killed with SIGKILL at a random moment (0.4-1.6 s after its start: uv,
    then connecting, pushing and pulling) while record writers keep writing to the same store (each at least
    ``per_writer`` records, until the last sync); then a full sync and a teammate's sync: every record exactly
    once on the server and in the teammate's store, nothing "locked", the store sound. A sync that finished
    before its moment is counted, not killed."""
    setup = _team_server(work)
    if setup is None:
        return {"skipped": "no PostgreSQL here"}
    server, name, urls, pgpass = setup
    rnd = random.Random(seed)
    from agentctx.remote import sync as engine
    from agentctx.store import records

    try:
        alice, aproj, ahome, arepo = _client(work, "alice-k", urls["alice"])
        bob, bproj, _, _ = _client(work, "bob-k", urls["bob"])
        alice.close()
        env = hook_env(ahome)
        env.pop("AGENTCTX_NOW", None)
        env["PGPASSFILE"] = pgpass
        stop = os.path.join(work, "writers-stop")
        procs = [subprocess.Popen([sys.executable, "-c", PACED_WRITER, ROOT, str(w), str(per_writer), aproj.id, stop],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for w in range(writers)]
        killed = 0
        errors = ""
        for _ in range(kills):
            p = subprocess.Popen([os.path.join(ROOT, "bin", "agentctx"), "remote", "sync"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
            time.sleep(rnd.uniform(0.4, 1.6))
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                killed += 1
            _, err = p.communicate()
            errors += err or ""
        open(stop, "w").close()
        outs = [p.communicate(timeout=900) for p in procs]
        errors += "".join(e for _, e in outs)
        written = sum(int(out.strip() or 0) for out, _ in outs)
        final = _cli(ahome, "remote", "sync", "--json", env={"PGPASSFILE": pgpass})
        from agentctx.store import db

        alice = db.connect(os.path.join(ahome, "agentctx.db"))
        engine.sync_remote(bob, "team")
        mine = {r["id"] for r in records.dump(alice, aproj.id) if r["title"].startswith("bench writer ")}
        theirs = {r["id"] for r in records.dump(bob, bproj.id) if r["title"].startswith("bench writer ")}
        with server.admin(name) as a:
            on_server = a.execute("SELECT id, count(*) FROM agentctx.records WHERE title LIKE 'bench writer %' "
                                  "GROUP BY id").fetchall()
        sound = _sound(ahome)
        alice.close()
    finally:
        server.stop()
    return {"sync_processes": kills, "killed": killed, "writers": writers, "records_written": written,
            "records_here": len(mine), "on_server": len(on_server),
            "duplicates_on_server": sum(1 for _, n in on_server if n > 1),
            "missing_on_server": len(mine - {i for i, _ in on_server}), "missing_at_teammate": len(mine - theirs),
            "locked_errors": len(LOCKED.findall(errors)), "final_sync_exit": final.returncode,
            "final_sync": {k: v.get("status") for k, v in _json_or(final.stdout).items()}, **sound}


def _json_or(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def trust_held(r: dict) -> bool:
    d, g, a, k = (r.get(n) or {} for n in ("fts_damage", "purge_grep", "team_attacks", "sync_under_fire"))
    return (d.get("held") == d.get("trials") and g.get("held") == g.get("trials")
            and ("skipped" in a or a.get("held") == a.get("attacks"))
            and ("skipped" in k or (k.get("missing_on_server") == 0 and k.get("duplicates_on_server") == 0
                                    and k.get("missing_at_teammate") == 0 and k.get("locked_errors") == 0)))


def run_trust(work: str, result: dict, *, quick: bool, seed: int) -> None:
    """The trust sections (issue 22), into ``result``."""
    print("FTS row damage ...", flush=True)
    result["fts_damage"] = fts_damage(work, trials=2 if quick else 6, seed=seed)
    print("purge grep ...", flush=True)
    result["purge_grep"] = purge_grep(work, trials=1 if quick else 3, seed=seed)
    print("team-server attacks ...", flush=True)
    result["team_attacks"] = team_attacks(work)
    print("kill -9 and writers during sync ...", flush=True)
    result["sync_under_fire"] = sync_under_fire(work, kills=3 if quick else 20, writers=2 if quick else 4,
                                                per_writer=100 if quick else 300, seed=seed)


def trust_markdown(r: dict) -> list[str]:
    lines = []
    d = r.get("fts_damage")
    if d:
        each = ", ".join(f"{k} {v['held']}/{v['tried']}" for k, v in d["kinds"].items())
        late = sum(v.get("repaired_by_the_next_consolidation", 0) for v in d["kinds"].values())
        lines.append(f"| FTS rows replaced by random bytes of the same length ({each}; held = CLI search, prompt hook "
                     f"and MCP answer, the index sound after (rebuilt by the search that met the damage, or by the "
                     f"next consolidation pass: {late}), the next SessionStart told) | {d['held']} of {d['trials']} held |")
    g = r.get("purge_grep")
    if g:
        st = g["files_with_the_words"]
        lines.append(f"| purge grep ({g['trials']} records, words copied to {st['before purge']} files first) | files "
                     f"still holding them: {st['after purge']} after purge, {st['after the next consolidation']} after "
                     f"the next consolidation, {st['after the next session']} after the next session |")
    a = r.get("team_attacks")
    if a:
        lines.append("| team-server attacks, two teams (teammate hijacks, another team sharing my project first, id squatting, probes, counters and statistics) | "
                     + (a["skipped"] if "skipped" in a else f"{a['held']} of {a['attacks']} held") + " |")
    k = r.get("sync_under_fire")
    if k:
        lines.append("| kill -9 during `remote sync` with writers running | " + (k["skipped"] if "skipped" in k else
                     f"{k['killed']} of {k['sync_processes']} syncs killed (the rest finished first), {k['writers']} "
                     f"writers writing throughout, {k['records_written']:,} records: {k['missing_on_server']} missing "
                     "on the server, "
                     f"{k['duplicates_on_server']} duplicated, {k['missing_at_teammate']} missing at the teammate, "
                     f"{k['locked_errors']} \"locked\", store {'sound' if k.get('integrity_ok') and k.get('fts_ok') else 'NOT sound'}") + " |")
    return lines


# -- 6. hostile repositories (issue 22, part 1) ------------------------------------------------------------

def hostile_repo(work: str) -> dict:
    """Each file kind a clone can hold (tests/support/hostile.py) planted at every path agentctx reads, in a
    real git repository; every hook as a process with JSON stdin, then the CLI and the consolidation pass,
    each under a 2 GiB address-space limit and a timeout. An input (one process against one repository)
    holds when it finishes in time, exits as it should, prints no traceback, and, per repository, each
    refused file has exactly one log line, nothing outside the repository changed and no symlink was
    written through. Reports inputs tried and held, per kind, and the children's peak RSS."""
    import resource
    from pathlib import Path

    from tests.support import hostile
    from tests.support.cli import BIN, UV

    model = os.path.join(ROOT, "tests", "fixtures", "models", "m2v-tiny-64")
    kinds: dict[str, dict] = {}
    started = time.perf_counter()
    for kind in hostile.KINDS:
        base = Path(work) / "hostile" / kind
        home = base / "data"
        repo, outside, transcript = hostile.make(base / "clone", kind)
        before = hostile.snapshot(outside)
        env = hook_env(str(home), AGENTCTX_EMBED_MODEL=model)
        env["PATH"] = os.path.dirname(UV) + os.pathsep + env["PATH"]
        tally = {"inputs": 0, "held": 0, "slowest_s": 0.0, "failures": []}

        def run(argv: list[str], stdin: bytes | None, expect: int | None, what: str, *, _env=env, _repo=repo,
                _tally=tally) -> None:
            _hostile_run(argv, stdin, expect, what, _env, str(_repo), _tally)

        run([str(BIN), "--project", str(repo), "record", "--type", "decision", "--title", hostile.TITLE], None, 0,
            "record")
        for name, payload in hostile.payloads(repo, transcript):
            _hostile_run(["sh", LAUNCH, name], json.dumps(payload).encode(), 0, name,
                         {**env, **hostile.in_place(name)}, str(repo), tally)
        deadline = time.monotonic() + 240
        while not hostile.idle(home) and time.monotonic() < deadline:
            time.sleep(0.1)
        for args in hostile.CLI_RUNS:
            run([str(BIN), "--project", str(repo), *args], None, hostile.expected_exit(kind, args), " ".join(args))
        log = home / "logs" / "agentctx.log"
        counts = hostile.reports(log.read_text() if log.exists() else "")
        expected = hostile.expected_reports(repo, transcript, kind)
        once = sum(1 for path in expected if counts.get(path) == 1)
        repeated = sorted(p for p, n in counts.items() if n > 1)
        untouched = hostile.snapshot(outside) == before and not (outside / "created-by-agentctx").exists()
        links_kept = all(os.path.islink(repo / rel) for rel in (*hostile.TARGETS, *hostile.WRITTEN)
                         if kind in ("devzero", "outside", "dangling"))
        kinds[kind] = {"inputs": tally["inputs"], "held": tally["held"], "files_reported_once": once,
                       "files_expected": len(expected), "files_reported_twice": repeated,
                       "outside_untouched": untouched, "symlinks_kept": links_kept,
                       "slowest_process_s": round(tally["slowest_s"], 2), "failures": tally["failures"][:5]}
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    tried = sum(k["inputs"] for k in kinds.values())
    held = sum(k["held"] for k in kinds.values())
    return {"kinds": kinds, "inputs": tried, "held": held, "hook_runs": len(hostile.payloads(Path(work), Path(work))),
            "cli_commands": len(hostile.CLI_RUNS),
            "repositories_sound": sum(1 for k in kinds.values() if k["files_reported_once"] == k["files_expected"]
                                      and not k["files_reported_twice"] and k["outside_untouched"]
                                      and k["symlinks_kept"]),
            "memory_limit_gib": hostile.MEMORY_LIMIT / 2**30, "children_peak_rss_mib": round(peak / 1024, 1),
            "seconds": round(time.perf_counter() - started, 1)}


def hostile_surfaces(work: str) -> dict:
    """The MCP server (the SDK's real stdio client, every tool) and the dashboard (every HTTP route, writes
    included) against each hostile repository kind, each server under the 2 GiB address-space limit
    (tests/support/hostile_surfaces.py). A call holds when it returns in time and does not fail on the server's
    side (an MCP error result is allowed only for ctx_sync_claudemd refusing a CLAUDE.md it will not read; an
    HTTP status < 500); per repository, each refused file has exactly one log line and nothing outside changed."""
    from pathlib import Path

    from agentctx import project
    from tests.support import hostile
    from tests.support import hostile_surfaces as surfaces
    from tests.support.cli import BIN, UV

    model = os.path.join(ROOT, "tests", "fixtures", "models", "m2v-tiny-64")
    saved = os.environ.get("AGENTCTX_EMBED_MODEL")
    os.environ["AGENTCTX_EMBED_MODEL"] = model  # the dashboard inherits it
    kinds: dict[str, dict] = {}
    started = time.perf_counter()
    try:
        for kind in hostile.KINDS:
            base = Path(work) / "hostile-surfaces" / kind
            home = base / "data"
            repo, outside, transcript = hostile.make(base / "clone", kind)
            before = hostile.snapshot(outside)
            env = hook_env(str(home), AGENTCTX_EMBED_MODEL=model)
            env["PATH"] = os.path.dirname(UV) + os.pathsep + env["PATH"]
            subprocess.run([str(BIN), "--project", str(repo), "record", "--type", "decision", "--title",
                            hostile.TITLE], capture_output=True, env=env, cwd=str(repo), timeout=300)
            failures: list[str] = []
            try:
                mcp = surfaces.run_mcp(repo, home, surfaces.record_id(home), base / "mcp-stderr.log")
            except Exception as exc:  # noqa: BLE001 - the server did not start or died: every call failed
                mcp = [surfaces.Call(t, False, True, f"{type(exc).__name__}: {exc}", 0.0)
                       for t, _ in surfaces.mcp_calls("x")]
            mcp_held = [c.done and (not c.failed or c.what.startswith("ctx_sync_claudemd")) for c in mcp]
            try:
                ui = surfaces.run_ui(home, project.detect(str(repo)).id, surfaces.record_id(home, surfaces.MCP_TITLE),
                                     base)
            except Exception as exc:  # noqa: BLE001
                ui = [surfaces.Call(f"{m} {p}", False, True, f"{type(exc).__name__}: {exc}", 0.0)
                      for m, p, _ in surfaces.ui_requests("x", "x")]
            ui_held = [c.done and not c.failed for c in ui]
            failures += [f"{c.what}: {c.text[:200]}" for c, ok in zip(mcp + ui, mcp_held + ui_held, strict=True) if not ok]
            log = home / "logs" / "agentctx.log"
            counts = hostile.reports(log.read_text() if log.exists() else "")
            expected = hostile.expected_reports(repo, transcript, kind) - {str(transcript)}
            kinds[kind] = {"mcp_calls": len(mcp), "mcp_held": sum(mcp_held), "http_requests": len(ui),
                           "http_held": sum(ui_held), "files_expected": len(expected),
                           "files_reported_once": sum(1 for p in expected if counts.get(p) == 1),
                           "files_reported_twice": sorted(p for p, n in counts.items() if n > 1),
                           "outside_untouched": hostile.snapshot(outside) == before
                           and not (outside / "created-by-agentctx").exists(),
                           "slowest_call_s": round(max(c.seconds for c in mcp + ui), 2), "failures": failures[:5]}
    finally:
        if saved is None:
            os.environ.pop("AGENTCTX_EMBED_MODEL", None)
        else:
            os.environ["AGENTCTX_EMBED_MODEL"] = saved
    return {"kinds": kinds, "inputs": sum(k["mcp_calls"] + k["http_requests"] for k in kinds.values()),
            "held": sum(k["mcp_held"] + k["http_held"] for k in kinds.values()),
            "repositories_sound": sum(1 for k in kinds.values() if k["files_reported_once"] == k["files_expected"]
                                      and not k["files_reported_twice"] and k["outside_untouched"]),
            "mcp_tools": len(surfaces.mcp_calls("x")), "http_routes": len(surfaces.ui_requests("x", "x")),
            "memory_limit_gib": hostile.MEMORY_LIMIT / 2**30, "seconds": round(time.perf_counter() - started, 1)}


def _hostile_run(argv: list[str], stdin: bytes | None, expect: int | None, what: str, env: dict, cwd: str,
                 tally: dict) -> None:
    """One process against a hostile repository, counted in ``tally`` (held: in time, the exit expected,
    no traceback)."""
    from tests.support import hostile

    tally["inputs"] += 1
    t = time.perf_counter()
    try:
        p = subprocess.run(argv, input=stdin or b"", capture_output=True, env=env, cwd=cwd, timeout=300,
                           preexec_fn=hostile.limit_memory())
    except subprocess.TimeoutExpired:
        tally["failures"].append(f"{what}: timed out")
        return
    tally["slowest_s"] = max(tally["slowest_s"], time.perf_counter() - t)
    if b"Traceback" in p.stderr or (expect is not None and p.returncode != expect):
        tally["failures"].append(f"{what}: exit {p.returncode} {p.stderr[-300:]!r}")
        return
    tally["held"] += 1


def hostile_markdown(h: dict) -> list[str]:
    """The hostile-repository rows of the report."""
    rows = [f"| hostile repositories ({len(h['kinds'])} kinds: {', '.join(h['kinds'])}; per repository "
            f"{h['hook_runs']} hook runs, `record` and {h['cli_commands']} CLI commands with the consolidation pass, "
            f"each under a {h['memory_limit_gib']:g} GiB address-space limit) | {h['held']} of "
            f"{h['inputs']} inputs held; {h['repositories_sound']} of {len(h['kinds'])} repositories: each refused file "
            f"logged once, nothing outside written, no symlink written through; children's peak RSS "
            f"{h['children_peak_rss_mib']} MiB |"]
    for kind, k in h["kinds"].items():
        rows.append(f"| ... {kind} | {k['held']}/{k['inputs']} held, {k['files_reported_once']}/{k['files_expected']} "
                    f"files reported once, slowest process {k['slowest_process_s']} s |")
    return rows


def hostile_surfaces_markdown(h: dict) -> list[str]:
    """The MCP-and-dashboard rows of the report."""
    rows = [f"| hostile repositories, MCP server and dashboard ({len(h['kinds'])} kinds; per repository "
            f"{h['mcp_tools']} MCP tool calls through the SDK's stdio client and {h['http_routes']} dashboard "
            f"requests, writes included, each server under a {h['memory_limit_gib']:g} GiB address-space limit) | "
            f"{h['held']} of {h['inputs']} calls held; {h['repositories_sound']} of {len(h['kinds'])} repositories: "
            "each refused file logged once, nothing outside written |"]
    for kind, k in h["kinds"].items():
        rows.append(f"| ... {kind} | MCP {k['mcp_held']}/{k['mcp_calls']}, HTTP {k['http_held']}/{k['http_requests']}, "
                    f"{k['files_reported_once']}/{k['files_expected']} files reported once, slowest call "
                    f"{k['slowest_call_s']} s |")
    return rows


# -- report ----------------------------------------------------------------------------------------------

def markdown(r: dict) -> str:
    c, f, k, x, p = r["concurrency"], r["fuzz"], r["kill"], r["redaction"], r["pathological"]
    lines = [
        "# Reliability benchmark", "",
        f"Measured {r['when']} on {r['machine']}. Command: `{r['command']}`.", "",
        "| what | result |", "|---|---|",
        f"| concurrent writers: {c['writers']} record writers x {c['records_per_writer']}, {c['hook_processes']} hook "
        f"processes, {c['consolidation_passes']} consolidation passes, at once ({c['seconds']} s) | "
        f"{c['records_lost']} records lost, {c['hook_stubs_expected'] - c['hook_stubs_found']} hook observations lost, "
        f"{c['hook_sessions_expected'] - c['hook_sessions_found']} injections unaccounted, {c['locked_errors']} "
        f"\"locked\"/\"busy\" errors, integrity {'ok' if c['integrity_ok'] and c['fts_ok'] else 'FAILED'} |",
        f"| fuzzed hook inputs through the real fail-open frame ({f['inputs']:,} in forked children, "
        f"{len(f['by_hook'])} hooks, {f['seconds_in_process']} s) | {f['nonzero_exits']} non-zero exits, "
        f"{f['tracebacks']} tracebacks, {f['bad_stdout']} invalid outputs |",
        f"| ... and as real processes (`sh hooks/launch.sh`, {f['processes']['inputs']}) | "
        f"{f['processes']['nonzero_exits']} non-zero exits, {f['processes']['tracebacks']} tracebacks, "
        f"{f['processes']['bad_stdout']} invalid outputs |",
        f"| kill -9 during consolidation ({k['kills']} kills at random moments, {k['records']:,} records"
        f"{', embedding' if k['model'] else ''}) | integrity, FTS and vectors sound after {k['trials_sound']} of "
        f"{k['kills']}; rows kept after {k['trials_rows_kept']} of {k['kills']}; next full pass exit "
        f"{k['final_pass_exit']} |",
        f"| redaction recall ({x['kinds']} kinds, {x['secrets_in_contexts']} secrets in context, {x['rules']} rules) | "
        f"{x['recall']:.1%} ({x['leaked']} leaked); {x['kinds_with_their_own_label']} of {x['kinds']} kinds get "
        "their rule's own label |",
        f"| redaction false positives: clean corpus ({x['clean_corpus']['lines']:,} lines: hashes, UUIDs, base64 "
        f"images, lockfiles, code, logs, prose) | {x['clean_corpus']['lines_changed']} lines changed |",
        f"| redaction false positives: real text ({x['real_text']['lines']:,} lines: this repository, ../shared docs, "
        f"eval conversations) | {x['real_text']['lines_changed']} lines changed "
        f"({x['real_text']['false_positive_rate']:.3%}) |",
        "| `redact()` on 100 KB: code / prose / dense with secrets | " + " / ".join(
            f"{v['median_ms']} ms" for v in x["speed_100kb"].values()) + " median |",
        f"| `observe.segments` on 692 KiB of `VAR=x` words | {p['segments_692KiB_s']} s |",
        f"| PreCompact with 10 MB of custom instructions (whole process) | {p['pre_compact_10MB_s']} s |",
        f"| SessionEnd hook wall time, {p['session_end_hook_ms']['runs']} runs each, interleaved: handed to a detached "
        f"process (as shipped) / the same work inside the hook (before) | {p['session_end_hook_ms']['median']} / "
        f"{p['session_end_in_the_hook_ms']['median']} ms median, {p['session_end_hook_ms']['p95']} / "
        f"{p['session_end_in_the_hook_ms']['p95']} p95 |",
        *trust_markdown(r),
        *(hostile_markdown(r["hostile_repo"]) if "hostile_repo" in r else []),
        *(hostile_surfaces_markdown(r["hostile_surfaces"]) if "hostile_surfaces" in r else []),
        "", "Examples of real-text lines redaction changed:", "",
        *[f"- `{e}`" for e in x["real_text"]["examples"]],
    ]
    if f["examples"]:
        lines += ["", "Fuzz failures:", "", *[f"- {e['hook']} exit {e['code']}: {e['stderr'][-200:]!r}" for e in f["examples"]]]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller run; writes reliability-quick.*")
    ap.add_argument("--fuzz", type=int, default=None, help="fuzzed inputs (default 6000; quick 700)")
    ap.add_argument("--writers", type=int, default=None, help="record-writer processes (default 6; quick 3)")
    ap.add_argument("--kills", type=int, default=None, help="kill -9 trials (default 12; quick 3)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--trust-only", action="store_true", help="only the trust sections (issue 22); writes reliability-trust*")
    ap.add_argument("--out", default=os.path.join(BENCH, "results"))
    ap.add_argument("--only", choices=["hostile_repo", "hostile_surfaces"],
                    help="run this section alone (writes reliability-<section>.*)")
    args = ap.parse_args()
    if args.only:
        return only_hostile(args.only, args.out)
    quick = args.quick
    model = os.environ.get("AGENTCTX_EMBED_MODEL") or (SHARED_MODEL if os.path.isdir(SHARED_MODEL) else None)
    result = {"when": _now(), "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
              f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}",
              "command": "uv run --group dev python bench/reliability_bench.py" + (" --quick" if quick else "")}
    if args.trust_only:
        result["command"] += " --trust-only"
        with tempfile.TemporaryDirectory(prefix="agentctx-reliability-") as work:
            run_trust(work, result, quick=quick, seed=args.seed)
        name = "reliability-trust-quick" if quick else "reliability-trust"
        os.makedirs(args.out, exist_ok=True)
        text = "\n".join(["# Reliability benchmark: trust (issue 22)", "",
                          f"Measured {result['when']} on {result['machine']}. Command: `{result['command']}`.", "",
                          "| what | result |", "|---|---|", *trust_markdown(result)]) + "\n"
        with open(os.path.join(args.out, f"{name}.json"), "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1, ensure_ascii=False)
        with open(os.path.join(args.out, f"{name}.md"), "w", encoding="utf-8") as fh:
            fh.write(text)
        print(text)
        return 0 if trust_held(result) else 1
    with tempfile.TemporaryDirectory(prefix="agentctx-reliability-") as work:
        print("redaction ...", flush=True)
        result["redaction"] = redaction(runs=10 if quick else 30)
        print("pathological inputs ...", flush=True)
        result["pathological"] = pathological(work, runs=5 if quick else 20)
        print("concurrent writers ...", flush=True)
        result["concurrency"] = concurrency(work, writers=args.writers or (3 if quick else 6),
                                            per_writer=100 if quick else 300, hooks=30 if quick else 120,
                                            consolidations=1 if quick else 2, model=model)
        print("kill -9 during consolidation ...", flush=True)
        result["kill"] = kill_consolidation(work, kills=args.kills or (3 if quick else 12),
                                            records=2000 if quick else 10_000, model=model, seed=args.seed)
        print("hostile repositories ...", flush=True)
        result["hostile_repo"] = hostile_repo(work)
        print("hostile repositories: MCP server and dashboard ...", flush=True)
        result["hostile_surfaces"] = hostile_surfaces(work)
        print("fuzzing the hooks ...", flush=True)
        result["fuzz"] = fuzz(work, n=args.fuzz or (700 if quick else 6000), process_sample=30 if quick else 300,
                              seed=args.seed)
        run_trust(work, result, quick=quick, seed=args.seed)
    name = "reliability-quick" if quick else "reliability"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{name}.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, ensure_ascii=False)
    with open(os.path.join(args.out, f"{name}.md"), "w", encoding="utf-8") as fh:
        fh.write(markdown(result))
    print(markdown(result))
    ok = (result["concurrency"]["records_lost"] == 0 and result["concurrency"]["locked_errors"] == 0
          and result["fuzz"]["nonzero_exits"] == 0 and result["fuzz"]["tracebacks"] == 0
          and result["kill"]["trials_sound"] == result["kill"]["kills"] and result["redaction"]["leaked"] == 0
          and trust_held(result) and _hostile_held(result["hostile_repo"])
          and _hostile_held(result["hostile_surfaces"]))
    return 0 if ok else 1


def _hostile_held(h: dict) -> bool:
    return h["held"] == h["inputs"] and h["repositories_sound"] == len(h["kinds"])


def only_hostile(section: str, out: str) -> int:
    """``--only hostile_repo|hostile_surfaces``: that section alone, in bench/results/reliability-<section>.{json,md}."""
    run, rows = {"hostile_repo": (hostile_repo, hostile_markdown),
                 "hostile_surfaces": (hostile_surfaces, hostile_surfaces_markdown)}[section]
    result = {"when": _now(), "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
              f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}",
              "command": f"uv run --group dev python bench/reliability_bench.py --only {section}"}
    with tempfile.TemporaryDirectory(prefix="agentctx-hostile-") as work:
        result[section] = run(work)
    text = "\n".join(["# Reliability: hostile repositories", "",
                      f"Measured {result['when']} on {result['machine']}. Command: `{result['command']}`.", "",
                      "| what | result |", "|---|---|", *rows(result[section])]) + "\n"
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"reliability-{section}.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, ensure_ascii=False)
    with open(os.path.join(out, f"reliability-{section}.md"), "w", encoding="utf-8") as fh:
        fh.write(text)
    print(text)
    return 0 if _hostile_held(result[section]) else 1


if __name__ == "__main__":
    threading.current_thread().name = "reliability"
    sys.exit(main())
