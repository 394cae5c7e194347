"""Two checkouts' hooks timed against each other in one run, on an existing store: wall time and child CPU time.

    git worktree add --detach /tmp/agentctx-main main          # the "before" checkout
    uv run python bench/make_store.py --home /tmp/s10k --records 10000
    uv run python bench/hooks_ab.py --a /tmp/agentctx-main --b . --home /tmp/s10k [--runs 15] [--hooks stop,...]

For each hook, ``sh <checkout>/hooks/launch.sh <hook>`` of A and of B and the bare interpreter (the script
environment's ``python -c pass``) run interleaved, with the same payload, in the store's project checkout, each
checkout's launcher finding its own folder (no ``CLAUDE_PLUGIN_ROOT``: nothing is prepared in the background).
Reported per hook and command: median wall time and median CPU time (user + sys of the child and what it waited
for, ``RUSAGE_CHILDREN``), and both as ratios to the bare interpreter's. CPU time is the steadier figure on a
loaded machine; the load average is printed with each hook. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from make_store import project_dir  # noqa: E402
from prompts import PROMPTS  # noqa: E402


def payloads(repo: str, transcript: str) -> dict[str, bytes]:
    path = os.path.join(repo, "src", "ledger.py")
    base = {"session_id": "hooks-ab", "cwd": repo, "transcript_path": "/dev/null"}
    return {name: json.dumps({**base, **extra}).encode() for name, extra in {
        "user_prompt_submit": {"hook_event_name": "UserPromptSubmit", "prompt": PROMPTS[0]},
        "session_start": {"hook_event_name": "SessionStart", "source": "startup"},
        "post_tool_use": {"hook_event_name": "PostToolUse", "tool_name": "Edit",
                          "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"},
                          "tool_response": {"filePath": path}},
        "stop": {"hook_event_name": "Stop", "transcript_path": transcript},
    }.items()}


def timed(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="the first checkout (e.g. main)")
    ap.add_argument("--b", required=True, help="the second checkout")
    ap.add_argument("--home", required=True, help="AGENTCTX_HOME of a store built by bench/make_store.py")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--hooks", default="user_prompt_submit,post_tool_use,stop,session_start")
    args = ap.parse_args(argv)
    home = os.path.abspath(args.home)
    repo = project_dir(home)
    uv = shutil.which("uv") or "uv"
    bare = subprocess.run([uv, "python", "find", "--script", os.path.join(os.path.abspath(args.b), "hooks",
                                                                          "user_prompt_submit.py")],
                          capture_output=True, text=True).stdout.strip()
    scratch = tempfile.mkdtemp(prefix="agentctx-ab-")
    transcript = os.path.join(scratch, "transcript.jsonl")
    with open(transcript, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "message": {"role": "user", "content": PROMPTS[0]}}) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PLUGIN_ROOT", "VIRTUAL_ENV")}
    env.update({"AGENTCTX_HOME": home, "AGENTCTX_LLM": "0"})
    stdin = payloads(repo, transcript)
    out: dict = {"a": args.a, "b": args.b, "home": home, "runs": args.runs, "hooks": {}}
    try:
        for hook in args.hooks.split(","):
            cmds = {"bare": [bare, "-c", "pass"], "a": ["sh", os.path.join(args.a, "hooks", "launch.sh"), hook],
                    "b": ["sh", os.path.join(args.b, "hooks", "launch.sh"), hook]}
            for cmd in cmds.values():  # warm-up: the branch's first run goes through uv and records the env
                timed(cmd, stdin[hook], env, repo)
            samples: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
            for i in range(args.runs):
                keys = list(cmds)[i % 3:] + list(cmds)[:i % 3]
                for key in keys:
                    samples[key].append(timed(cmds[key], stdin[hook], env, repo))
            med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in samples.items()}
            out["hooks"][hook] = {"loadavg": [round(x, 2) for x in os.getloadavg()], **{
                k: {"wall_ms": round(w, 1), "cpu_ms": round(c, 1), "wall_ratio": round(w / med["bare"][0], 2),
                    "cpu_ratio": round(c / med["bare"][1], 2)} for k, (w, c) in med.items()}}
            print(hook, json.dumps(out["hooks"][hook]), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
