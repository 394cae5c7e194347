"""What agentctx adds to a Claude Code session's start: the pinned CLI's ``claude -p`` with the plugin and without.

Run from the repository root (needs the pinned CLI, tests/support/claude_cli.py installs it; no network
beyond loopback: the model is tests/support/fake_api.py)::

    uv run python bench/claude_start_bench.py                  # 10 pairs + the MCP wait curve
    uv run python bench/claude_start_bench.py --pairs 5 --no-curve
    uv run python bench/claude_start_bench.py --plugin /path/to/other/checkout --out-stem claude_start-main

Two measurements, each a whole ``claude -p "hello"`` process (wall time, spawn to exit):

* **paired**: the plugin (this checkout copied to a stable folder under the test cache, its script
  environments prepared as the first SessionStart does) against no plugin, and against its MCP server alone
  (a plugin with only that mcpServers entry: what the server costs a session), in rounds whose order
  rotates, so load drift hits all alike. Reported: the medians, the ratio of
  the medians and the median of the per-pair ratios (target <= 1.15), and from Claude Code's debug log
  how long the MCP server took to connect and how long each hook ran.
  With ``--minimal-server`` also a plugin whose only part is the least MCP server there can be
  (bench/baselines/minimal_mcp.py: stdlib, one tool): what Claude Code adds for any plugin MCP server; and the
  least a plugin like agentctx can be (that server, SessionStart and UserPromptSubmit hooks that only read the
  store, bench/baselines/floor.py, and Stop ``true``).
* **MCP wait curve**: a plugin with only an MCP server (agentctx's, behind ``sleep D``), no hooks, for
  several delays D: how long ``-p`` waits for a plugin MCP server that is slow to start, and from which
  delay on the first request to the model goes out without its tools (``ENABLE_TOOL_SEARCH=false``, so
  the tools are listed in the request itself).

Writes bench/results/<stem>.json and .md (stem ``claude_start`` unless ``--out-stem``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(ROOT / "lib")]

from tests.support import bundle, fake_api  # noqa: E402
from tests.support.claude_cli import CLAUDE_CODE_VERSION, install_claude, run_claude  # noqa: E402

TARGET_RATIO = 1.15
TOOL = "mcp__plugin_agentctx_agentctx__ctx_search"
CONNECTED = re.compile(r'MCP server "plugin:agentctx:agentctx": Successfully connected .* in (\d+)ms')
HUNG: list[dict] = []  # runs that failed and were run again, reported
HOOK = re.compile(r"Hooks: (\w+)(?::\w+)? \[.*\] \(plugin agentctx@\w+\) finished with status \d+ \((\d+)ms\)")


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 3) if xs else float("nan")


def prepared_plugin(source: Path) -> Path:
    """``source`` copied to a stable folder (uv keys script environments by path) and prepared."""
    from agentctx import prepare

    name = "bench-claude-start" if source == ROOT else f"bench-claude-start-{abs(hash(str(source))) % 10**6}"
    dest = bundle.test_cache() / "bundle" / name
    if source == ROOT:
        bundle.copy_bundle(dest)
    else:
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "bench", "tests"))
    outcome = prepare.run(str(dest))
    if outcome["status"] != "done":
        raise SystemExit(f"could not prepare {dest}: {outcome['failed']}")
    return dest


def slow_server_plugin(folder: Path, delay: float, source: Path = ROOT) -> Path:
    """A plugin with only the MCP server of ``source``, started ``delay`` seconds late; no hooks."""
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    command = f"sleep {delay}; exec sh '{source / 'mcp' / 'launch.sh'}'" if delay else \
        f"exec sh '{source / 'mcp' / 'launch.sh'}'"
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps({
        "name": "agentctx", "version": "0.0.0",
        "mcpServers": {"agentctx": {"command": "sh", "args": ["-c", command]}}}))
    return folder


def minimal_server_plugin(folder: Path) -> Path:
    """A plugin with only bench/baselines/minimal_mcp.py as its MCP server (one tool, nothing else): what Claude
    Code adds to a session for any plugin MCP server."""
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps({
        "name": "minimal", "version": "0.0.0",
        "mcpServers": {"minimal": {"command": "python3", "args": ["-S", str(BENCH / "baselines" / "minimal_mcp.py")]}}}))
    return folder


def floor_plugin(folder: Path) -> Path:
    """The least a plugin like agentctx can be: the minimal MCP server, and SessionStart and UserPromptSubmit hooks
    that are bench/baselines/floor.py (read the event, open the store read-only, print JSON), Stop a shell ``true``."""
    minimal_server_plugin(folder)
    (folder / "hooks").mkdir(exist_ok=True)
    floor = f"python3 '{BENCH / 'baselines' / 'floor.py'}'"
    (folder / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": floor}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": floor}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}))
    return folder


def one_run(work: Path, api: fake_api.FakeMessagesAPI, plugin: Path | None, extra: dict[str, str],
            store: Path | None = None, home: Path | None = None) -> dict:
    """One ``claude -p`` in a new HOME; agentctx's data and cache folders are new too unless ``store`` names a
    folder kept between runs (a returning user's session: the store exists, its digest is precomputed, and the
    launcher's records of the prepared script environments are in agentctx's cache folder, as they are for
    anyone whose HOME stays the same). Claude Code's own state is new in every run, with or without the plugin,
    unless ``home`` names a HOME kept between runs (``--same-home``)."""
    kept_home = home is not None
    home = home or Path(tempfile.mkdtemp(prefix="agentctx-claude-start-"))
    kept = {"AGENTCTX_CACHE_DIR": str(store / "cache")} if store is not None else {}
    try:
        before = len(api.requests)
        for attempt in range(3):  # a loaded machine made the CLI hang before any plugin loaded, once in ~30 runs
            run = run_claude(work, home, "hello", base_url=api.base_url, plugin_dir=plugin,
                             extra_env={**bundle.plugin_env(store or home / "data"), **kept, **extra}, timeout=90)
            if run.returncode == 0 or attempt == 2:
                break
            print(f"  (run failed with exit {run.returncode}; again)", flush=True)
            HUNG.append({"plugin": str(plugin), "exit": run.returncode, "last_log_line": run.debug_log[-300:]})
        run.check()
        out: dict = {"wall_s": round(run.duration, 3)}
        connected = CONNECTED.search(run.debug_log)
        if connected:
            out["mcp_connect_ms"] = int(connected.group(1))
        hooks: dict[str, int] = {}
        for event, ms in HOOK.findall(run.debug_log):
            hooks[event] = hooks.get(event, 0) + int(ms)
        if hooks:
            out["hooks_ms"] = hooks
        first = next((r for r in api.requests[before:] if r.is_messages and (r.body or {}).get("tools")), None)
        if first is not None:
            out["tools_in_first_request"] = TOOL in [t.get("name") for t in first.body["tools"]]
        return out
    finally:
        if not kept_home:
            shutil.rmtree(home, ignore_errors=True)


def bench_pairs(work: Path, api, plugin: Path, pairs: int, mcp_only: Path, store: Path | None = None,
                minimal: Path | None = None, homes: dict[str, Path] | None = None) -> dict:
    """Rounds of (no plugin, the plugin, its MCP server alone[, a minimal MCP server alone]), the order rotating
    each round; with ``store``, every run keeps agentctx's data there (after one untimed run that creates it);
    with ``homes``, each arm keeps one HOME through its runs."""
    homes = homes or {}
    if store is not None:
        one_run(work, api, plugin, {}, store, homes.get("with"))
    runs: dict[str, list[dict]] = {"with": [], "without": [], "mcp_only": [], "minimal_mcp": [], "floor_plugin": []}
    arms = {"with": plugin, "without": None, "mcp_only": mcp_only,
            **({"minimal_mcp": minimal, "floor_plugin": floor_plugin(minimal.parent / "floor-plugin")}
               if minimal else {})}
    kinds = list(arms)
    for n in range(pairs):
        for kind in kinds[n % len(kinds):] + kinds[:n % len(kinds)]:
            runs[kind].append(one_run(work, api, arms[kind], {}, store, homes.get(kind)))
        print(f"  round {n + 1}/{pairs}: " + ", ".join(f"{k} {runs[k][-1]['wall_s']} s" for k in kinds), flush=True)
    with_s = [r["wall_s"] for r in runs["with"]]
    without_s = [r["wall_s"] for r in runs["without"]]
    mcp_s = [r["wall_s"] for r in runs["mcp_only"]]
    hooks: dict[str, list[int]] = {}
    for r in runs["with"]:
        for event, ms in r.get("hooks_ms", {}).items():
            hooks.setdefault(event, []).append(ms)
    return {
        "pairs": pairs, "with_median_s": median(with_s), "without_median_s": median(without_s),
        "ratio_of_medians": round(median(with_s) / median(without_s), 3),
        "median_pair_ratio": round(statistics.median(w / o for w, o in zip(with_s, without_s, strict=True)), 3),
        "mcp_only_median_s": median(mcp_s),
        "mcp_only_median_pair_ratio": round(statistics.median(m / o for m, o in zip(mcp_s, without_s, strict=True)),
                                            3),
        **{f"{arm}_median_s": median([r["wall_s"] for r in runs[arm]]) for arm in ("minimal_mcp", "floor_plugin")
           if runs[arm]},
        **{f"{arm}_median_pair_ratio": round(statistics.median(
            m["wall_s"] / o for m, o in zip(runs[arm], without_s, strict=True)), 3)
           for arm in ("minimal_mcp", "floor_plugin") if runs[arm]},
        "mcp_connect_ms_median": median([r["mcp_connect_ms"] for r in runs["with"] if "mcp_connect_ms" in r]),
        "mcp_only_connect_ms_median": median([r["mcp_connect_ms"] for r in runs["mcp_only"]
                                              if "mcp_connect_ms" in r]),
        "hooks_ms_median": {event: median(ms) for event, ms in hooks.items()},
        "runs": runs,
    }


def bench_curve(work: Path, api, delays: list[float], runs: int, scratch: Path) -> list[dict]:
    rows = []
    extra = {"ENABLE_TOOL_SEARCH": "false"}
    for delay in [None, *delays]:
        samples = []
        for n in range(runs):
            plugin = None if delay is None else slow_server_plugin(scratch / f"slow-{delay}-{n}", delay)
            samples.append(one_run(work, api, plugin, extra))
        rows.append({"delay_s": delay, "wall_median_s": median([s["wall_s"] for s in samples]),
                     "tools_in_first_request": [s.get("tools_in_first_request") for s in samples],
                     "samples": samples})
        print(f"  server delay {delay}: {rows[-1]['wall_median_s']} s, tools {rows[-1]['tools_in_first_request']}",
              flush=True)
    return rows


def report(data: dict, command: str) -> str:
    m, p = data["machine"], data["pairs"]
    lines = ["# Session start with and without agentctx (pinned Claude Code CLI)", "",
             f"{m['date_utc']} · Claude Code {CLAUDE_CODE_VERSION} · {m['cpu_count']} CPUs · load average "
             f"{', '.join(f'{x:.2f}' for x in m['loadavg_at_start'])} at start, "
             f"{', '.join(f'{x:.2f}' for x in m['loadavg_at_end'])} at end · plugin {data['plugin']}", "",
             f"Command: `{command}`. `claude -p \"hello\"` against the fake Messages API on 127.0.0.1, whole process."
             + (f" agentctx's store: {data['store']}." if data.get("store") else ""),
             "", "## Paired: with the plugin over without", "",
             "| pairs | with (median) | without (median) | ratio of medians | median pair ratio | MCP connected in |",
             "|---:|---:|---:|---:|---:|---:|",
             f"| {p['pairs']} | {p['with_median_s']} s | {p['without_median_s']} s | {p['ratio_of_medians']} | "
             f"{p['median_pair_ratio']} {'✅' if p['median_pair_ratio'] <= TARGET_RATIO else '❌'} | "
             f"{p['mcp_connect_ms_median']} ms |",
             f"| (its MCP server alone, no hooks) | {p['mcp_only_median_s']} s | | | "
             f"{p['mcp_only_median_pair_ratio']} | {p['mcp_only_connect_ms_median']} ms |",
             *([f"| (a minimal MCP server alone: bench/baselines/minimal_mcp.py) | {p['minimal_mcp_median_s']} s | | | "
                f"{p['minimal_mcp_median_pair_ratio']} | |",
                f"| (the least such a plugin can be: that server, SessionStart and UserPromptSubmit hooks that are "
                f"bench/baselines/floor.py, Stop `true`) | {p['floor_plugin_median_s']} s | | | "
                f"{p['floor_plugin_median_pair_ratio']} | |"] if "minimal_mcp_median_s" in p else []), "",
             f"Target: ≤ {TARGET_RATIO}×. Hooks (median ms, from Claude Code's debug log): "
             + ", ".join(f"{event} {ms}" for event, ms in sorted(p["hooks_ms_median"].items())) + "."
             + (f" {len(data['runs_repeated'])} run(s) failed (the CLI hung) and were run again."
                if data.get("runs_repeated") else "")]
    if data.get("curve"):
        lines += ["", "## How long `-p` waits for a slow plugin MCP server", "",
                  "agentctx's server behind `sleep D`, no hooks, `ENABLE_TOOL_SEARCH=false`.", "",
                  "| server start delay | wall (median) | agentctx tools in the first model request |",
                  "|---|---:|---|"]
        for row in data["curve"]:
            label = "no plugin" if row["delay_s"] is None else f"{row['delay_s']} s"
            seen = row["tools_in_first_request"]
            tools = "—" if row["delay_s"] is None else f"{sum(1 for s in seen if s)} of {len(seen)}"
            lines.append(f"| {label} | {row['wall_median_s']} s | {tools} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--curve-runs", type=int, default=2, help="runs per delay of the MCP wait curve")
    ap.add_argument("--delays", default="0,1,2,3,5", help="server start delays (seconds) of the wait curve")
    ap.add_argument("--no-curve", action="store_true")
    ap.add_argument("--plugin", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    ap.add_argument("--out-stem", default="claude_start")
    ap.add_argument("--returning", action="store_true",
                    help="keep agentctx's store and cache folder between runs (a returning user), instead of new ones each run")
    ap.add_argument("--same-home", action="store_true",
                    help="with --returning: each arm keeps one HOME through its runs (Claude Code's own state and the "
                         "environment stay as a returning user's do), instead of a new HOME each run")
    ap.add_argument("--minimal-server", action="store_true",
                    help="also time a plugin whose only part is a minimal MCP server (bench/baselines/minimal_mcp.py)")
    args = ap.parse_args(argv)
    install_claude()
    command = "uv run python bench/claude_start_bench.py" + (
        " " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    data: dict = {"machine": {"date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                              "cpu_count": os.cpu_count(), "loadavg_at_start": os.getloadavg()},
                  "plugin": str(args.plugin)}
    plugin = prepared_plugin(args.plugin.resolve())
    with tempfile.TemporaryDirectory(prefix="agentctx-claude-start-") as scratch:
        work = Path(scratch) / "project"
        (work / ".git").mkdir(parents=True)
        (work / ".git" / "config").write_text("[core]\n\tbare = false\n")
        with fake_api.FakeMessagesAPI(responder=lambda body: fake_api.text("Hello.")) as api:
            one_run(work, api, plugin, {})  # warm-up: the CLI's and the plugin's first start
            one_run(work, api, None, {})
            print("paired runs ...", flush=True)
            mcp_only = slow_server_plugin(Path(scratch) / "mcp-only", 0, plugin)
            store = Path(tempfile.mkdtemp(prefix="agentctx-claude-start-store-")) if args.returning else None
            minimal = minimal_server_plugin(Path(scratch) / "minimal-mcp") if args.minimal_server else None
            homes = ({kind: Path(tempfile.mkdtemp(prefix=f"agentctx-claude-start-home-{kind}-", dir=scratch))
                      for kind in ("with", "without", "mcp_only", "minimal_mcp", "floor_plugin")}
                     if args.same_home else None)
            data["pairs"] = bench_pairs(work, api, plugin, args.pairs, mcp_only, store, minimal, homes)
            data["store"] = "kept between runs (a returning user)" if store else "new for every run (a first session)"
            if homes:
                data["store"] += "; each arm's HOME kept through its runs"
            if not args.no_curve:
                print("MCP wait curve ...", flush=True)
                data["curve"] = bench_curve(work, api, [float(d) for d in args.delays.split(",")], args.curve_runs,
                                            Path(scratch))
    data["machine"]["loadavg_at_end"] = os.getloadavg()
    data["runs_repeated"] = HUNG
    out = BENCH / "results"
    out.mkdir(exist_ok=True)
    (out / f"{args.out_stem}.json").write_text(json.dumps(data, indent=1))
    text = report(data, command)
    (out / f"{args.out_stem}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    t0 = time.monotonic()
    main()
    print(f"({time.monotonic() - t0:.0f} s)")
