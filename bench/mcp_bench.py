"""The MCP server: time until ``initialize`` and ``tools/list`` are answered, ctx_search latency, tokens per result.

Run from the repository root::

    uv run python bench/mcp_bench.py                 # stores of 10k and 100k records
    uv run python bench/mcp_bench.py --quick         # 10k only, fewer runs (writes mcp-quick.*)
    uv run python bench/mcp_bench.py --drop-caches   # also true cold starts (Linux, root: drops the page cache)
    uv run python bench/mcp_bench.py --empty-cache 3 # also 3 starts from an EMPTY uv cache (downloads from PyPI)

Startup is timed as Claude Code starts the server: ``sh mcp/launch.sh`` (the plugin.json entry; it runs
the server with a Python found by lib/find_python.sh, no uv), a JSON-RPC ``initialize`` written to its stdin
at once, the clock stopped when the answer line arrives; then ``tools/list`` (target: within 150 ms of the
spawn, warm) and a first ``ctx_search`` (which opens the store: everything but the protocol waits for it).
Kinds of start:

* first start: the server copied to a new folder (no uv environment needed) and Python compiles every
  module on first import;
* cold: the first start after that, in a new process (bytecode cached, OS page cache warm, as after any
  earlier session); with ``--drop-caches`` also cold starts after ``echo 3 > /proc/sys/vm/drop_caches``;
* warm: later starts of the same environment;
* with ``--empty-cache N``: N starts from an empty uv cache (``UV_CACHE_DIR`` a new temporary folder), as on
  a machine that never ran agentctx (the server starts without any uv environment since issue 20); and N more
  with the lock removed.

Also timed, each in a new process: ``pass`` with that Python, the imports before ``tools/list``
(``agentctx.surfaces.mcp_stdio``), the first tool call's (``agentctx.surfaces.mcp_tools``), and what the
server no longer pays: ``import mcp.server.mcpserver`` (the MCP SDK, with this benchmark's own Python, which
has it) and ``uv run --script`` on an empty script with the server's dependencies.

ctx_search is timed in-process (``agentctx.surfaces.mcp_tools.Service``, the object the server holds) over 30
keyword queries on stores built by bench/make_store.py, and over stdio through a running server
(JSON-RPC round trip). Tokens use ``agentctx.budgets.estimate_tokens``. Writes bench/results/mcp.json
and bench/results/mcp.md. Stdlib + the agentctx package only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(ROOT, "lib"))
sys.path.insert(0, BENCH)

from make_store import build as build_store  # noqa: E402
from make_store import project_dir  # noqa: E402

from agentctx import budgets  # noqa: E402

QUERIES = [
    "redis cache", "celery retry", "webhook signature", "invoice rounding", "stripe refund", "jwt refresh token",
    "postgres deadlock", "kafka consumer", "docker compose", "terraform state", "pytest fixtures", "ruff lint",
    "alembic migration", "rate limiter", "checkout cart", "payout ledger", "sentry alert", "opentelemetry tracing",
    "grpc protobuf", "nextjs build", "typescript strict", "auth login session", "subscription trial",
    "s3 upload", "graphql schema", "sqlalchemy session", "kubernetes helm deploy", "coupon discount",
    "timezone bug", "flaky test",
]
TARGETS = {"tools_list_warm_ms": 150, "search_median_ms_10k": 10, "tokens_15_results": 1000}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}


def sh(cmd: list[str], **kw) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def stats(samples: list[float]) -> dict:
    ordered = sorted(samples)
    n = len(ordered)
    return {"runs": n, "median_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[max(0, math.ceil(0.95 * n) - 1)], 2),
            "min_ms": round(ordered[0], 2), "max_ms": round(ordered[-1], 2),
            "samples_ms": [round(s, 2) for s in samples]}


def server_env(home: str, project: str, *, offline: bool = True) -> dict[str, str]:
    uv = shutil.which("uv") or os.path.expanduser("~/.local/bin/uv")
    env = {"PATH": os.pathsep.join(dict.fromkeys([os.path.dirname(uv), "/usr/local/bin", "/usr/bin", "/bin"])),
           "HOME": os.path.expanduser("~"), "LANG": "C.UTF-8", "AGENTCTX_HOME": home,
           "CLAUDE_PROJECT_DIR": project}
    for name, value in os.environ.items():  # what a shell passes on: uv settings, CA bundles, cache location
        if name.startswith("UV_") or name in ("XDG_CACHE_HOME", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR"):
            env[name] = value
    if offline:
        env["UV_OFFLINE"] = "1"
    return env


class Server:
    """One server process spoken to with raw JSON-RPC lines (no client library in the timing)."""

    def __init__(self, plugin_root: str, env: dict[str, str], cwd: str):
        self.t0 = time.perf_counter()
        self.errors = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(["sh", os.path.join(plugin_root, "mcp", "launch.sh")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.errors, env=env, cwd=cwd)
        self.next_id = 10

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def answer(self, msg_id: int) -> dict:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                self.proc.wait()
                self.errors.seek(0)
                raise RuntimeError(f"server exited ({self.proc.returncode}) before answering request {msg_id}: "
                                   + self.errors.read().decode(errors="replace")[-2000:])
            data = json.loads(line)
            if data.get("id") == msg_id:
                if "error" in data:
                    raise RuntimeError(f"request {msg_id} failed: {data['error']}")
                return data["result"]

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})})
        return self.answer(self.next_id)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000

    def close(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.errors.close()


def start(plugin_root: str, env: dict[str, str], cwd: str) -> dict:
    """Start a server, initialize, list tools, search once; the times since the process was spawned."""
    server = Server(plugin_root, env, cwd)
    try:
        server.send(INIT)
        init = server.answer(1)
        t_init = server.elapsed_ms()
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = server.request("tools/list")["tools"]
        t_list = server.elapsed_ms()
        server.request("tools/call", {"name": "ctx_search", "arguments": {"query": "redis cache"}})
        t_search = server.elapsed_ms()
    finally:
        server.close()
    assert init["serverInfo"]["name"] == "agentctx" and {"ctx_search", "ctx_get"} <= {t["name"] for t in tools}
    return {"initialize_ms": t_init, "tools_list_ms": t_list, "first_search_ms": t_search}


def copy_plugin(dest: str) -> str:
    """What the server needs, at a new path (so uv makes a new script environment for it)."""
    shutil.copytree(os.path.join(ROOT, "mcp"), os.path.join(dest, "mcp"))
    shutil.copytree(os.path.join(ROOT, "lib", "agentctx"), os.path.join(dest, "lib", "agentctx"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("find_uv.sh", "find_python.sh"):
        shutil.copy2(os.path.join(ROOT, "lib", name), os.path.join(dest, "lib", name))
    shutil.copytree(os.path.join(ROOT, ".claude-plugin"), os.path.join(dest, ".claude-plugin"))
    return dest


def script_env_dir(script: str, env: dict[str, str]) -> str | None:
    python = sh(["uv", "python", "find", "--script", script], env=env)
    return os.path.dirname(os.path.dirname(python)) if "environments-v2" in python else None


def drop_caches() -> bool:
    try:
        subprocess.run(["sync"], check=False)
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return True
    except OSError:
        return False


def bench_empty_cache(work: str, home: str, project: str, runs: int) -> tuple[list[dict], list[dict]]:
    """Starts from an empty uv cache (online), each in a new plugin folder and a new temporary cache: with the
    lock and without it, interleaved (alternating which goes first) so network conditions hit both alike."""
    samples: dict[bool, list[dict]] = {True: [], False: []}
    for n in range(runs):
        for locked in ((True, False) if n % 2 == 0 else (False, True)):
            root = copy_plugin(os.path.join(work, f"plugin-empty-{'locked' if locked else 'unlocked'}-{n}"))
            if not locked:
                os.remove(os.path.join(root, "mcp", "server.py.lock"))
            cache = tempfile.mkdtemp(prefix="agentctx-bench-uv-cache-")
            try:
                env = {**server_env(home, project, offline=False), "UV_CACHE_DIR": cache}
                samples[locked].append(start(root, env, project))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
    return samples[True], samples[False]


def bench_startup(work: str, home: str, project: str, runs: int, fresh: int, cold_drop: int,
                  empty_cache: int = 0) -> dict:
    env = server_env(home, project)
    summary: dict[str, list] = {"empty_cache": [], "empty_cache_unlocked": [], "first": [], "cold": [], "warm": [],
                                "cold_dropped": []}
    if empty_cache:
        summary["empty_cache"], summary["empty_cache_unlocked"] = bench_empty_cache(work, home, project, empty_cache)
    for n in range(fresh):
        root = copy_plugin(os.path.join(work, f"plugin-{n}"))
        env_dir = None
        try:
            summary["first"].append(start(root, env, project))
            summary["cold"].append(start(root, env, project))
            env_dir = script_env_dir(os.path.join(root, "mcp", "server.py"), env)
        finally:
            if env_dir:
                shutil.rmtree(env_dir, ignore_errors=True)  # leave uv's cache as it was
    for _ in range(2):  # warm-up of the repository's own environment
        start(ROOT, env, project)
    for _ in range(runs):
        summary["warm"].append(start(ROOT, env, project))
    for _ in range(cold_drop):
        if not drop_caches():
            break
        summary["cold_dropped"].append(start(ROOT, env, project))
    out = {}
    for kind, samples in summary.items():
        if samples:
            out[kind] = {key: stats([s[key] for s in samples]) for key in samples[0]}
    return out


def server_python() -> str:
    """The interpreter mcp/launch.sh runs the server with (lib/find_python.sh), with the PATH the startup runs get
    (not this benchmark's own, which ``uv run`` starts with the project's virtual environment)."""
    return sh(["sh", "-c", '. "$1/lib/find_python.sh"; find_python; printf %s "$py_bin"', "sh", ROOT],
              env=server_env("", ""))


def bench_imports(runs: int) -> dict:
    env = {**os.environ, "UV_OFFLINE": "1"}
    python = server_python()
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty_with_server_deps.py")
        with open(os.path.join(ROOT, "mcp", "server.py"), encoding="utf-8") as fh:
            header = fh.read().split("# ///", 2)
        with open(empty, "w", encoding="utf-8") as fh:
            fh.write("# /// script" + header[1].split("# /// script", 1)[-1] + "# ///\npass\n")
        shutil.copy2(os.path.join(ROOT, "mcp", "server.py.lock"), empty + ".lock")
        timed = "import time; t = time.perf_counter(); import {}; print((time.perf_counter() - t) * 1000)"
        cases = {  # label: (command, True when the child prints its own import time)
            f"{python} -S -c pass (the server's Python), process wall time": ([python, "-S", "-c", "pass"], False),
            "import agentctx.surfaces.mcp_stdio (all the server imports before tools/list), inside the process": (
                [python, "-S", "-c", timed.format("agentctx.surfaces.mcp_stdio")], True),
            "import agentctx.surfaces.mcp_tools (the first tool call's imports), inside the process": (
                [python, "-S", "-c", timed.format("agentctx.surfaces.mcp_tools")], True),
            "import mcp.server.mcpserver (the MCP SDK the server used before), inside the process": (
                [sys.executable, "-c", timed.format("mcp.server.mcpserver")], True),
            "uv run --script on an empty script with the server's dependencies (avoided now), wall time": (
                ["uv", "run", "--quiet", "--script", empty], False),
        }
        out = {}
        for label, (cmd, inside) in cases.items():
            samples = []
            for i in range(runs + 2):
                t0 = time.perf_counter()
                done = subprocess.run(cmd, check=True, env={**env, "PYTHONPATH": os.path.join(ROOT, "lib")},
                                      capture_output=True, text=True, cwd=tmp)
                wall = (time.perf_counter() - t0) * 1000
                if i >= 2:
                    samples.append(float(done.stdout.strip()) if inside else wall)
            out[label] = stats(samples)
    out["_python"] = python
    return out


def bench_search(home: str, project: str, rounds: int) -> dict:
    os.environ["AGENTCTX_HOME"] = home
    from agentctx.surfaces import mcp_tools

    service = mcp_tools.Service(project)
    service.warm()
    for q in QUERIES[:5]:
        service.search(q)
    samples, get_samples, line_tokens, answer_tokens, full = [], [], [], [], 0
    ids: list[str] = []
    for r in range(rounds):
        for q in QUERIES:
            t0 = time.perf_counter()
            text = service.search(q)
            samples.append((time.perf_counter() - t0) * 1000)
            if r == 0:
                lines = text.splitlines()[1:]
                line_tokens += [budgets.estimate_tokens(line) for line in lines]
                answer_tokens.append(budgets.estimate_tokens(text))
                full += len(lines) == mcp_tools.SEARCH_RESULTS
                ids = [line.split(" | ", 1)[0][2:] for line in lines[:3]] or ids
                t0 = time.perf_counter()
                service.get(ids)
                get_samples.append((time.perf_counter() - t0) * 1000)
    service.close()
    return {
        "ctx_search": stats(samples), "ctx_get_3_ids": stats(get_samples),
        "tokens_per_result": {"mean": round(statistics.fmean(line_tokens), 1), "max": max(line_tokens),
                              "results": len(line_tokens)},
        "tokens_per_answer": {"max": max(answer_tokens), "mean": round(statistics.fmean(answer_tokens), 1),
                              "answers_with_15_results": full, "answers": len(answer_tokens)},
    }


def bench_stdio_search(home: str, project: str, rounds: int) -> dict:
    server = Server(ROOT, server_env(home, project), project)
    samples = []
    try:
        server.send(INIT)
        server.answer(1)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for q in QUERIES[:5]:
            server.request("tools/call", {"name": "ctx_search", "arguments": {"query": q}})
        for _ in range(rounds):
            for q in QUERIES:
                t0 = time.perf_counter()
                result = server.request("tools/call", {"name": "ctx_search", "arguments": {"query": q}})
                samples.append((time.perf_counter() - t0) * 1000)
                assert not result.get("isError"), result
    finally:
        server.close()
    return stats(samples)


def machine() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass
    return {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu_count": os.cpu_count(), "cpu_model": cpu or platform.processor(), "platform": platform.platform(),
        "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "uv_version": sh(["uv", "--version"]),
        "git_commit": sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]),
        "git_dirty": bool(sh(["git", "-C", ROOT, "status", "--porcelain", "--", "lib", "mcp"])),
    }


def ms(entry: dict) -> str:
    return f"{entry['median_ms']:,.1f} / {entry['p95_ms']:,.1f}"


def ok(value: float, limit: float) -> str:
    return "✅" if value <= limit else "❌"


def report(data: dict, command: str) -> str:
    m, s = data["machine"], data["startup"]
    lines = [
        "# agentctx MCP server benchmark", "",
        f"{m['date_utc']} · {m['cpu_count']} CPUs ({m['cpu_model']}) · {m['platform']} · server on Python "
        f"{data['server_python']} · {m['uv_version']} · commit {m['git_commit']}"
        + (" (lib/ or mcp/ modified)" if m["git_dirty"] else "")
        + (f" · load average {', '.join(f'{x:.2f}' for x in m['loadavg_at_start'])} at start"
           if m.get("loadavg_at_start") else ""),
        "", f"Command: `{command}`. Times in ms, median / p95.", "",
        "## Startup (`sh mcp/launch.sh`, as plugin.json declares it; 10k-record store)", "",
        "| start | runs | `initialize` answered | `tools/list` answered | first `ctx_search` answered |",
        "|---|---:|---:|---:|---:|",
    ]
    labels = {"empty_cache": "empty uv cache (the server needs no uv environment)",
              "empty_cache_unlocked": "empty uv cache, lock removed",
              "first": "first start: a new plugin folder (no uv environment needed) + bytecode compile",
              "cold": "cold: first start after that, new process",
              "cold_dropped": "cold, OS page cache dropped before each start",
              "warm": "warm: later starts"}
    for kind in ("empty_cache", "empty_cache_unlocked", "first", "cold", "cold_dropped", "warm"):
        if kind in s:
            row = s[kind]
            mark = f" {ok(row['tools_list_ms']['median_ms'], TARGETS['tools_list_warm_ms'])}" \
                if kind == "warm" else ""
            lines.append(f"| {labels[kind]} | {row['initialize_ms']['runs']} | {ms(row['initialize_ms'])} | "
                         f"{ms(row['tools_list_ms'])}{mark} | {ms(row['first_search_ms'])} |")
    lines += ["", f"Target: `tools/list` answered ≤ {TARGETS['tools_list_warm_ms']:,} ms after the spawn, warm. "
              "Where the time goes (new process each run):", "", "| process | median / p95 |", "|---|---:|"]
    for label, entry in data["imports"].items():
        if not label.startswith("_"):
            lines.append(f"| `{label}` | {ms(entry)} |")
    lines += ["", "## ctx_search", "",
              "| | " + " | ".join(f"{n:,} records" for n in data["sizes"]) + " |",
              "|---|" + "---:|" * len(data["sizes"])]
    per = [data["search"][str(n)] for n in data["sizes"]]

    def row(label: str, cells: list[str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    row("ctx_search in-process (`Service.search`, 30 keyword queries)",
        [ms(p["in_process"]["ctx_search"]) + (f" {ok(p['in_process']['ctx_search']['median_ms'], TARGETS['search_median_ms_10k'])}"
                                              if n == 10_000 else "") for n, p in zip(data["sizes"], per, strict=True)])
    row("ctx_search over stdio (JSON-RPC round trip to the running server)", [ms(p["stdio"]) for p in per])
    row("ctx_get, 3 ids, in-process", [ms(p["in_process"]["ctx_get_3_ids"]) for p in per])
    row("tokens per result: mean / max", [f"{p['in_process']['tokens_per_result']['mean']} / "
                                          f"{p['in_process']['tokens_per_result']['max']}" for p in per])
    row("tokens per answer: mean / max (target: 15 results ≤ 1,000)",
        [f"{p['in_process']['tokens_per_answer']['mean']} / {p['in_process']['tokens_per_answer']['max']} "
         f"{ok(p['in_process']['tokens_per_answer']['max'], TARGETS['tokens_15_results'])}" for p in per])
    row("answers with 15 results", [f"{p['in_process']['tokens_per_answer']['answers_with_15_results']} of "
                                    f"{p['in_process']['tokens_per_answer']['answers']}" for p in per])
    row("store build time (make_store.py)", [f"{p['store_build_seconds']} s" for p in per])
    lines += ["", "Tokens: `agentctx.budgets.estimate_tokens` (ASCII ¼ token per character, anything else 1)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="store sizes (comma-separated)")
    ap.add_argument("--runs", type=int, default=15, help="warm starts (default 15)")
    ap.add_argument("--fresh", type=int, default=3, help="first starts, each in a new script environment")
    ap.add_argument("--rounds", type=int, default=10, help="passes over the 30 queries (default 10)")
    ap.add_argument("--drop-caches", action="store_true", help="also time cold starts with the page cache dropped")
    ap.add_argument("--empty-cache", type=int, default=0, metavar="N",
                    help="also N starts from an empty uv cache (online; downloads the server's wheels each time)")
    ap.add_argument("--quick", action="store_true", help="10k only, few runs; writes mcp-quick.*")
    ap.add_argument("--out", default=os.path.join(BENCH, "results"))
    args = ap.parse_args(argv)
    sizes = [10_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    if args.quick:
        args.runs, args.fresh, args.rounds = 5, 1, 3
    command = "uv run python bench/mcp_bench.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    data: dict = {"machine": machine(), "sizes": sizes, "targets": TARGETS, "queries": QUERIES, "search": {}}
    from agentctx import prepare

    print("preparing the checkout's script environments (as the first SessionStart does) ...", flush=True)
    data["prepared"] = prepare.run(ROOT, prepare.marker(ROOT))["status"]  # the server finds its packages by it
    with tempfile.TemporaryDirectory(prefix="agentctx-mcp-bench-") as work:
        for n in sizes:
            home = os.path.join(work, f"store-{n}")
            print(f"building a {n:,}-record store ...", flush=True)
            summary = build_store(home, n, quiet=True)
            project = project_dir(home)
            if n == sizes[0]:
                print("startup ...", flush=True)
                data["startup"] = bench_startup(work, home, project, args.runs, args.fresh,
                                                min(5, args.runs) if args.drop_caches else 0, args.empty_cache)
                data["imports"] = bench_imports(args.runs)
                data["server_python"] = sh([data["imports"]["_python"], "-S", "-c",
                                            "import sys; print(sys.version.split()[0])"])
            print(f"ctx_search at {n:,} records ...", flush=True)
            data["search"][str(n)] = {"in_process": bench_search(home, project, args.rounds),
                                      "stdio": bench_stdio_search(home, project, max(1, args.rounds // 2)),
                                      "store_build_seconds": summary["build_seconds"]}
    data["machine"]["loadavg_at_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    os.makedirs(args.out, exist_ok=True)
    stem = "mcp-quick" if args.quick else "mcp"
    with open(os.path.join(args.out, stem + ".json"), "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    text = report(data, command)
    with open(os.path.join(args.out, stem + ".md"), "w", encoding="utf-8") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
