"""Token cost of the SubagentStart brief, and whole-process time of the hooks added for issue 13.

Run from the repository root::

    uv run python bench/briefs_bench.py            # coding set + 10k-record store, 30 runs per hook
    uv run python bench/briefs_bench.py --quick    # 1k-record store, 8 runs

1. The brief a subagent of each type gets (``injection.briefs.brief``: its tokens by
   ``budgets.estimate_tokens``, characters and records shown), for the four projects of the coding
   evaluation set (bench/eval/coding_set.json, written through the real record API) and for the target
   project of a synthetic store (bench/make_store.py), where the 800-token cap binds.
2. Medians of ``sh hooks/launch.sh <hook>`` with JSON on stdin (bench/hooks_bench.py's timing: warm-up,
   interleaved runs) on that store, SessionStart alongside as the baseline: SubagentStart (Plan: the largest brief; Explore), SubagentStop (a
   conclusion stored), and the synchronous PostToolUse hook after a Bash ``cd`` (cwd_changed), which
   Claude waits for.

Writes bench/results/briefs.json and bench/results/briefs.md (also printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import uuid
from datetime import datetime, timezone

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(BENCH, "eval"))

from hooks_bench import LAUNCH, Case, hook_env, machine_info, measure, resolve_interpreters  # noqa: E402
from make_store import build as build_store  # noqa: E402

TYPES = ("Explore", "Plan", "general-purpose", "my-plugin:reviewer", "statusline-setup")


def brief_costs(conn, proj) -> dict:
    from agentctx.injection import briefs

    out = {}
    for agent_type in TYPES:
        dig = briefs.brief(conn, proj, agent_type)
        out[agent_type] = ({"tokens": dig.tokens, "chars": len(dig.text), "records": len(dig.record_ids)}
                           if dig else {"tokens": 0, "chars": 0, "records": 0})
    return out


def coding_set(work: str) -> dict:
    import coding

    from agentctx.store import db

    os.environ["AGENTCTX_HOME"] = os.path.join(work, "coding")
    conn = db.connect()
    data = coding.load()
    built = coding.build(conn, data)
    out = {}
    for p in data["projects"]:
        proj = coding.project_of(p["name"], p["remote"])
        assert built[p["name"]][0] == proj.id
        out[p["name"]] = brief_costs(conn, proj)
    conn.close()
    return out


def synthetic(work: str, n: int, runs: int, warmup: int) -> tuple[dict, dict]:
    from agentctx import project
    from agentctx.store import db

    home = os.path.join(work, f"store-{n}")
    store = build_store(home, n, quiet=True)
    repo = store["project_dir"]
    os.environ["AGENTCTX_HOME"] = home
    conn = db.connect()
    costs = brief_costs(conn, project.detect(repo))
    conn.close()
    env = hook_env(home, repo)
    other = os.path.join(work, "other-repo")
    os.makedirs(os.path.join(other, ".git"), exist_ok=True)

    def payload(**fields):
        return lambda i: json.dumps({"session_id": f"bench-{uuid.uuid4().hex}", "cwd": repo,
                                     "transcript_path": "/dev/null", **fields}).encode()

    conclusion = ("The retry queue lives in src/jobs/retry.py; failed jobs are re-sent three times with "
                  "exponential backoff and then parked in the dead-letter table. ") * 3
    cases = [
        Case("session_start", "SessionStart (baseline, same run)", ["sh", LAUNCH, "session_start"], env, repo,
             payload(hook_event_name="SessionStart", source="startup")),
        Case("subagent_start_plan", "SubagentStart (Plan)", ["sh", LAUNCH, "subagent_start"], env, repo,
             payload(hook_event_name="SubagentStart", agent_id="a1", agent_type="Plan")),
        Case("subagent_start_explore", "SubagentStart (Explore)", ["sh", LAUNCH, "subagent_start"], env, repo,
             payload(hook_event_name="SubagentStart", agent_id="a1", agent_type="Explore")),
        Case("subagent_stop", "SubagentStop (conclusion stored)", ["sh", LAUNCH, "subagent_stop"], env, repo,
             payload(hook_event_name="SubagentStop", agent_id="a2", agent_type="Explore", stop_hook_active=False,
                     last_assistant_message=conclusion)),
        Case("cwd_changed", "PostToolUse after Bash cd (cwd_changed)", ["sh", LAUNCH, "cwd_changed"], env, repo,
             lambda i: json.dumps({"session_id": "bench-cd", "cwd": other if i % 2 else repo,
                                   "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                   "tool_input": {"command": "cd somewhere"}, "tool_response": {}}).encode()),
    ]
    print(f"\n{n:,} records: hooks", flush=True)
    return costs, measure(cases, runs=runs, warmup=warmup)


def markdown(result: dict) -> str:
    lines = ["# SubagentStart brief and issue-13 hooks", "",
             f"{result['when']} · {result['machine']['cpu_count']} CPUs ({result['machine']['cpu_model']}), load average {result['machine']['loadavg_at_start']} at the start · `uv run python bench/briefs_bench.py"
             f"{' --quick' if result['quick'] else ''}`", "",
             "## Brief size by subagent type (tokens by agentctx's estimator; cap 800)", "",
             "| project | " + " | ".join(TYPES) + " |", "|---|" + "---|" * len(TYPES)]
    for name, costs in [*result["coding_set"].items(), (f"synthetic {result['records']:,}", result["synthetic"])]:
        lines.append(f"| {name} | " + " | ".join(f"{c['tokens']} ({c['records']} rec)" for c in costs.values()) + " |")
    lines += ["", "## Whole-process time (medians)", "", "| hook | median ms | p95 ms |", "|---|---|---|"]
    for key, s in result["hooks"].items():
        lines.append(f"| {key} | {s['median_ms']} | {s['p95_ms']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n, runs, warmup = (1_000, 8, 2) if args.quick else (10_000, 30, 5)
    work = tempfile.mkdtemp(prefix="agentctx-briefs-")
    try:
        coding_costs = coding_set(work)
        costs, hooks = synthetic(work, n, runs, warmup)
        env = hook_env(os.path.join(work, "x"), ROOT)
        result = {"when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "quick": args.quick,
                  "records": n, "coding_set": coding_costs, "synthetic": costs,
                  "hooks": {k: {x: v for x, v in s.items() if x != "samples_ms"} for k, s in hooks.items()},
                  "machine": machine_info(resolve_interpreters(env), env)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    suffix = "-quick" if args.quick else ""
    with open(os.path.join(BENCH, "results", f"briefs{suffix}.json"), "w") as fh:
        json.dump(result, fh, indent=2)
    text = markdown(result)
    with open(os.path.join(BENCH, "results", f"briefs{suffix}.md"), "w") as fh:
        fh.write(text)
    print("\n" + text)


if __name__ == "__main__":
    main()
