"""Whole-process wall time of the capture hooks (issue 4, part A), run as Claude Code runs them.

Run from the repository root::

    uv run python bench/post_tool_use_bench.py                # 10k-record store, 40 runs per case
    uv run python bench/post_tool_use_bench.py --runs 60 --records 100000
    uv run python bench/post_tool_use_bench.py --quick        # smoke check: 1k records, 10 runs

Builds a store with bench/make_store.py (its project checkout is the hooks' cwd), then times
``sh hooks/launch.sh <hook>`` with JSON on stdin and a minimal hook environment, after warm-up
runs, the cases interleaved (run i executes every case once, in an order rotated by i):

* PostToolUse Write, cycling over 50 files in 5 sessions (new nodes first, then repeat touches);
* PostToolUse Edit of one file (the edge weight grows);
* PostToolUseFailure Bash with a pytest collection error (a bugfix stub, then reinforced);
* PostToolUseFailure / PostToolUse Bash test run, failing and passing in turn (a test record
  superseded each run: the most writes of any case);
* PostToolUse Bash ``ls`` (nothing to store: the floor of the hook);
* SessionEnd (closes a session, refreshes the digest cache);
* PreCompact on a synthetic transcript (default ~3 MB, Claude Code 2.1.332's line shapes) for a
  session with 30 observed files, decisions and a handover (the anchor merged each run).

Baseline in the same run: ``uv run --quiet --script`` on a script with the hooks' dependencies
and no work. Writes bench/results/capture_hooks.json and .md (also printed). Targets (issue 4):
PostToolUse median <= 60 ms, SessionEnd <= 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime, timezone

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, BENCH)

from hooks_bench import Case, measure  # noqa: E402
from make_store import build as build_store  # noqa: E402
from make_store import project_dir  # noqa: E402

from agentctx import project  # noqa: E402
from agentctx.capture import handover  # noqa: E402
from agentctx.store import db, graph, records  # noqa: E402

LAUNCH = os.path.join(ROOT, "hooks", "launch.sh")
TARGETS = {"write": 60, "bash_error": 60, "edit": 60, "test_run": 60, "bash_quiet": 60, "session_end": 100}
HOOKS = ("post_tool_use", "pre_compact", "session_end")


def hook_env(home: str, project: str) -> dict[str, str]:
    local_bin = os.path.join(os.path.expanduser("~"), ".local", "bin")
    env = {"PATH": os.pathsep.join([local_bin, "/usr/local/bin", "/usr/bin", "/bin"]), "HOME": os.path.expanduser("~"),
           "LANG": "C.UTF-8", "AGENTCTX_HOME": home, "CLAUDE_PLUGIN_ROOT": ROOT, "CLAUDE_PROJECT_DIR": project,
           "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
           # launch.sh hands PostToolUse (and SessionEnd) to a detached process; this benchmark times the handlers'
           # work, so they run in the hook's own process (bench/hooks_bench.py times the hand-off Claude Code sees).
           "AGENTCTX_HOOK_DETACHED": "no"}
    for name in ("UV_CACHE_DIR", "UV_PYTHON", "UV_OFFLINE", "XDG_CACHE_HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _silent(i: int, out: bytes) -> None:
    """Capture hooks print nothing: any output is a bug, not a timing."""
    if out:
        raise RuntimeError(f"run {i}: unexpected stdout {out[:200]!r}")


def timed(cases: list[Case], runs: int, warmup: int) -> dict:
    """hooks_bench.measure (interleaved runs), with each case's label kept in the results."""
    out = measure(cases, runs=runs, warmup=warmup)
    return {case.key: {"label": case.label, **out[case.key]} for case in cases}


# ---------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------

PYTEST_ERROR = ("==== ERRORS ====\n____ ERROR collecting tests/test_api.py ____\nImportError while importing test "
                "module '{root}/tests/test_api.py'.\nTraceback:\ntests/test_api.py:1: in <module>\n    import "
                "requests_mock\nE   ModuleNotFoundError: No module named 'requests_mock'\n==== short test summary "
                "info ====\nERROR tests/test_api.py\n==== 1 error in 0.08s ====\n")
PYTEST_FAIL = ("tests/test_ledger.py .F.\n==== FAILURES ====\nE       assert 10 == 9\n==== short test summary info "
               "====\nFAILED tests/test_ledger.py::test_refund - assert 10 == 9\n==== 1 failed, 2 passed in 0.12s ====\n")
PYTEST_PASS = "tests/test_ledger.py ...                      [100%]\n\n3 passed in 0.05s\n"


def base_payload(proj_dir: str, event: str, session: str) -> dict:
    return {"session_id": session, "transcript_path": "/nonexistent.jsonl", "cwd": proj_dir, "prompt_id": "p",
            "permission_mode": "default", "effort": {"level": "medium"}, "hook_event_name": event,
            "tool_use_id": "toolu_01", "duration_ms": 20}


def payloads(proj_dir: str, transcript: str) -> dict:
    def write(i: int) -> bytes:
        path = os.path.join(proj_dir, "src", f"module_{i % 50:02d}.py")
        return json.dumps({**base_payload(proj_dir, "PostToolUse", f"bench-{i % 5}"), "tool_name": "Write",
                           "tool_input": {"file_path": path, "content": "x = 1\n" * 40},
                           "tool_response": {"type": "create", "filePath": path, "content": "x = 1\n" * 40,
                                             "structuredPatch": [], "originalFile": None}}).encode()

    path = os.path.join(proj_dir, "src", "ledger.py")
    edit = json.dumps({**base_payload(proj_dir, "PostToolUse", "bench-edit"), "tool_name": "Edit",
                       "tool_input": {"file_path": path, "old_string": "a", "new_string": "b", "replace_all": False},
                       "tool_response": {"filePath": path, "oldString": "a", "newString": "b", "originalFile": "a\n",
                                         "structuredPatch": [], "userModified": False, "replaceAll": False}}).encode()
    error = json.dumps({**base_payload(proj_dir, "PostToolUseFailure", "bench-err"), "tool_name": "Bash",
                        "tool_input": {"command": "uv run pytest tests/", "description": "tests"},
                        "error": "Exit code 2\n" + PYTEST_ERROR.format(root=proj_dir), "is_interrupt": False}).encode()

    def test_run(i: int) -> bytes:
        command = {"command": "pytest tests/test_ledger.py", "description": "tests"}
        if i % 2:
            return json.dumps({**base_payload(proj_dir, "PostToolUseFailure", "bench-test"), "tool_name": "Bash",
                               "tool_input": command, "error": "Exit code 1\n" + PYTEST_FAIL,
                               "is_interrupt": False}).encode()
        return json.dumps({**base_payload(proj_dir, "PostToolUse", "bench-test"), "tool_name": "Bash",
                           "tool_input": command, "tool_response": {"stdout": PYTEST_PASS, "stderr": "",
                                                                    "interrupted": False, "isImage": False}}).encode()

    quiet = json.dumps({**base_payload(proj_dir, "PostToolUse", "bench-ls"), "tool_name": "Bash",
                        "tool_input": {"command": "ls -la src", "description": "list"},
                        "tool_response": {"stdout": "total 8\n" + "-rw-r--r-- 1 u u 10 f.py\n" * 30, "stderr": "",
                                          "interrupted": False, "isImage": False}}).encode()

    def end(i: int) -> bytes:
        return json.dumps({"session_id": f"bench-end-{i}", "transcript_path": "/x", "cwd": proj_dir,
                           "hook_event_name": "SessionEnd", "reason": "other"}).encode()

    compact = json.dumps({"session_id": "bench-compact", "transcript_path": transcript, "cwd": proj_dir,
                          "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}).encode()
    return {"write": write, "edit": edit, "bash_error": error, "test_run": test_run, "bash_quiet": quiet,
            "session_end": end, "pre_compact": compact}


def make_transcript(path: str, session: str, turns: int) -> int:
    """A transcript in Claude Code 2.1.332's line shapes: prompts, assistant text and tool calls one
    block per line, tool results, attachments and the large api-request lines; its size in bytes."""
    parent = None
    filler = "lorem ipsum dolor sit amet " * 40

    def line(kind: str, message: dict | None = None, **extra) -> str:
        nonlocal parent
        uid = str(uuid.uuid4())
        obj = {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": uid, "sessionId": session,
               "timestamp": "2026-11-29T14:08:11.218Z", "cwd": "/w", "version": "2.1.332", **extra}
        if message is not None:
            obj["message"] = message
        parent = uid
        return json.dumps(obj)

    with open(path, "w", encoding="utf-8") as fh:
        for t in range(turns):
            fh.write(line("user", {"role": "user", "content": f"Turn {t}: refactor the ledger module. {filler[:200]}"}) + "\n")
            fh.write(json.dumps({"type": "api-request", "sessionId": session, "params": {"blob": filler * 4}}) + "\n")
            mid = f"msg_{t:06d}"
            fh.write(line("assistant", {"id": mid, "type": "message", "role": "assistant",
                                        "content": [{"type": "text", "text": f"Working on it. {filler}"}]}) + "\n")
            tid = f"toolu_{t:06d}"
            fh.write(line("assistant", {"id": mid, "type": "message", "role": "assistant",
                                        "content": [{"type": "tool_use", "id": tid, "name": "Edit",
                                                     "input": {"file_path": "/w/src/ledger.py", "old_string": filler,
                                                               "new_string": filler}}]}) + "\n")
            fh.write(line("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                                "content": filler}]}) + "\n")
        fh.write(line("assistant", {"id": "msg_last", "type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Done.\n\nNext steps:\n1. Load-test the retry path\n2. Update the runbook"}]}) + "\n")
    return os.path.getsize(path)


def seed_session(proj: project.Project) -> None:
    """The PreCompact session: 30 observed files, two decisions, a handover."""
    conn = db.connect()
    try:
        with db.transaction(conn):
            conn.execute("INSERT OR IGNORE INTO sessions (session_id, project_id, started_at, meta) VALUES (?, ?, ?, ?)",
                         ("bench-compact", proj.id, "2026-11-29T00:00:00.000000Z",
                          json.dumps({"branch": "feat/ledger", "commits": [
                              {"sha": "9f8e7d6", "branch": "feat/ledger", "message": "Ledger retries"}]})))
            for i in range(30):
                graph.edge(conn, graph.entity(conn, proj.id, "file", f"src/ledger/part_{i:02d}.py"), "bench-compact",
                           "observed_in")
        for i in range(2):
            records.add(conn, proj.id, type="decision", title=f"Ledger decision {i}: retries use jittered backoff",
                        session_id="bench-compact", source="llm_extraction")
        handover.save(conn, proj.id, "bench-compact", {"current_task": "Ledger retries",
                                                        "next_steps": ["Ship behind a flag"]})
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def machine_info(uv: str) -> dict:
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo", encoding="utf-8")
                   if ln.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    dirty = subprocess.run(["git", "status", "--porcelain", "lib", "hooks"], cwd=ROOT, capture_output=True,
                           text=True).stdout
    return {"when": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "cpus": os.cpu_count(), "cpu": cpu,
            "platform": platform.platform(), "python": platform.python_version(),
            "uv": subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.strip(),
            "commit": commit.strip(), "lib_or_hooks_uncommitted": bool(dirty.strip())}


def markdown(result: dict) -> str:
    m = result["machine"]
    lines = [
        "# agentctx capture hooks benchmark (issue 4, part A)", "",
        f"{m['when']} · {m['cpus']} CPUs ({m['cpu']}) · {m['platform']} · {m['uv']} · commit {m['commit']}"
        + (" (lib/ or hooks/ uncommitted changes)" if m["lib_or_hooks_uncommitted"] else ""), "",
        f"Whole-process wall time of `sh hooks/launch.sh <hook>` (JSON on stdin, minimal hook environment), "
        f"{result['runs']} runs per case after {result['warmup']} warm-up runs, cases interleaved. Store: "
        f"{result['records']:,} records (bench/make_store.py). Command: `{result['command']}`.", "",
        "| case | median ms | p95 ms | min | max | target (median) |", "|---|---:|---:|---:|---:|---|",
    ]
    for key, case in result["cases"].items():
        target = TARGETS.get(key)
        verdict = "" if target is None else (f"≤ {target} ✅" if case["median_ms"] <= target else f"≤ {target} ❌")
        lines.append(f"| {case['label']} | {case['median_ms']:.1f} | {case['p95_ms']:.1f} | {case['min_ms']:.1f} | "
                     f"{case['max_ms']:.1f} | {verdict} |")
    lines += ["", f"PreCompact transcript: {result['transcript_bytes']:,} bytes, {result['transcript_turns']} turns. "
              "The PreCompact hook is synchronous (it must finish before SessionStart(compact) reads the anchor) "
              "but has no latency target: compaction itself is a model call.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--turns", type=int, default=400, help="PreCompact transcript length in turns (default ~3 MB)")
    ap.add_argument("--quick", action="store_true", help="1k records, 10 runs, 2 warm-up runs, 100 turns")
    ap.add_argument("--out", default=os.path.join(BENCH, "results"))
    args = ap.parse_args(argv)
    if args.quick:
        args.records, args.runs, args.warmup, args.turns = 1000, 10, 2, 100
    if args.runs < 30 and not args.quick:
        raise SystemExit("--runs must be at least 30")
    work = tempfile.mkdtemp(prefix="agentctx-capture-bench-")
    try:
        home = os.path.join(work, "store")
        print(f"building a {args.records:,}-record store in {home}", flush=True)
        build_store(home, args.records)
        proj_dir = project_dir(home)
        os.environ["AGENTCTX_HOME"] = home
        proj = project.detect(proj_dir)
        os.makedirs(os.path.join(proj_dir, "src"), exist_ok=True)
        seed_session(proj)
        transcript = os.path.join(work, "transcript.jsonl")
        size = make_transcript(transcript, "bench-compact", args.turns)
        env = hook_env(home, proj_dir)
        uv = shutil.which("uv", path=env["PATH"])
        if not uv:
            raise SystemExit("uv not found on the hook PATH")
        for script in [*(os.path.join(ROOT, "hooks", f"{h}.py") for h in HOOKS),
                       os.path.join(BENCH, "baselines", "hook_deps.py")]:  # create the script envs (untimed)
            subprocess.run([uv, "run", "--quiet", "--script", script], input=b"{}", env={**os.environ, **env},
                           capture_output=True, cwd=ROOT, check=True)
        data = payloads(proj_dir, transcript)
        launch = lambda hook: ["sh", LAUNCH, hook]  # noqa: E731
        post = launch("post_tool_use")
        hook = {"env": env, "cwd": proj_dir, "after": _silent}
        cases = [
            Case("write", "PostToolUse Write (50 files, 5 sessions)", post, stdin=data["write"], **hook),
            Case("edit", "PostToolUse Edit (one file, repeated)", post, stdin=data["edit"], **hook),
            Case("bash_error", "PostToolUseFailure Bash error → bugfix stub (reinforced)", post,
                 stdin=data["bash_error"], **hook),
            Case("test_run", "PostToolUse[Failure] Bash pytest, fail/pass alternating", post,
                 stdin=data["test_run"], **hook),
            Case("bash_quiet", "PostToolUse Bash `ls` (nothing stored)", post, stdin=data["bash_quiet"], **hook),
            Case("session_end", "SessionEnd", launch("session_end"), stdin=data["session_end"], **hook),
            Case("pre_compact", "PreCompact (anchor merged, backup written)", launch("pre_compact"),
                 stdin=data["pre_compact"], **hook),
            Case("baseline_uv", "baseline: `uv run --script`, hooks' dependencies, no work",
                 [uv, "run", "--quiet", "--script", os.path.join(BENCH, "baselines", "hook_deps.py")], **hook),
        ]
        print(f"timing {len(cases)} cases × {args.runs} runs", flush=True)
        result = {"machine": machine_info(uv), "records": args.records, "runs": args.runs, "warmup": args.warmup,
                  "transcript_bytes": size, "transcript_turns": args.turns,
                  "command": "uv run python bench/post_tool_use_bench.py" + ("".join(
                      f" {a}" for a in (argv if argv is not None else sys.argv[1:]))),
                  "cases": timed(cases, args.runs, args.warmup)}
        conn = db.connect()
        bugs = conn.execute("SELECT reinforce_count FROM records WHERE key LIKE 'bugfix.sig:%'").fetchall()
        anchor_version = conn.execute("SELECT version FROM anchors WHERE session_id = 'bench-compact'").fetchone()
        conn.close()
        result["checks"] = {"bugfix_stubs": len(bugs), "bugfix_reinforced": bugs[0][0] if bugs else 0,
                            "anchor_version": anchor_version[0] if anchor_version else 0}
        assert result["checks"]["bugfix_stubs"] == 1 and result["checks"]["anchor_version"] >= args.runs
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    name = "capture_hooks-quick" if args.quick else "capture_hooks"
    with open(os.path.join(args.out, f"{name}.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    text = markdown(result)
    with open(os.path.join(args.out, f"{name}.md"), "w", encoding="utf-8") as fh:
        fh.write(text)
    print("\n" + text)


if __name__ == "__main__":
    main()
