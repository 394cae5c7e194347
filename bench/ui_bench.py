"""Dashboard API latency: record search (and the other views) at 10k records, over real HTTP.

Run from the repository root::

    uv run python bench/ui_bench.py            # 10k-record store, 5 rounds of 30 queries
    uv run python bench/ui_bench.py --quick    # 2 rounds (writes ui-quick.*)

Builds a store with bench/make_store.py, starts the real dashboard server (``lib/agentctx_ui.py``
through uv, as ``agentctx ui`` does) and times requests over one keep-alive HTTP connection, the clock
around request + full response read. The same record searches are also timed in-process
(``agentctx.surfaces.ui.data.record_list``) to separate the store from HTTP/JSON overhead. Writes
bench/results/ui.json and bench/results/ui.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
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
from mcp_bench import QUERIES  # noqa: E402

TARGET_P95_MS = 100.0  # interactive search: results within a tenth of a second


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def stats(values: list[float]) -> dict:
    return {"n": len(values), "median_ms": round(statistics.median(values), 2), "p95_ms": round(pct(values, 95), 2),
            "max_ms": round(max(values), 2)}


class Client:
    """One keep-alive connection to the dashboard, with its own Host header."""

    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def get(self, path: str) -> tuple[float, int, int, object]:
        t0 = time.perf_counter()
        self.conn.request("GET", path, headers={"Host": f"127.0.0.1:{self.port}"})
        res = self.conn.getresponse()
        raw = res.read()
        ms = (time.perf_counter() - t0) * 1000
        if res.status != 200:
            raise RuntimeError(f"{path}: {res.status} {raw[:200]!r}")
        return ms, res.status, len(raw), json.loads(raw)


def start_server(ready: str) -> subprocess.Popen:
    from agentctx.surfaces.cli.ui import server_command

    argv = server_command(port=None, project_id=None, idle_minutes=30, browser=False, ready_file=ready, quiet=True)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while not os.path.exists(ready):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"dashboard did not start: {proc.stderr.read().decode() if proc.poll() is not None else ''}")
        time.sleep(0.1)
    return proc


def run(records: int, rounds: int) -> dict:
    work = tempfile.mkdtemp(prefix="agentctx-ui-bench-")
    home = os.path.join(work, "home")
    t0 = time.perf_counter()
    build_store(home, records, quiet=True)
    build_s = time.perf_counter() - t0
    from agentctx import project
    from agentctx.store import db
    from agentctx.surfaces.ui import data

    pid = project.detect(project_dir(home)).id
    ready = os.path.join(work, "ready.json")
    proc = start_server(ready)
    try:
        port = json.load(open(ready))["port"]
        client = Client(port)
        client.get("/api/health")
        out: dict = {"records": records, "store_build_s": round(build_s, 3), "rounds": rounds}
        cases = {
            "search, current records (q, limit 100)": lambda q: f"/api/records?project={pid}&q={q}&limit=100",
            "search, all statuses": lambda q: f"/api/records?project={pid}&q={q}&status=all&limit=100",
            "search, type=decision": lambda q: f"/api/records?project={pid}&q={q}&type=decision&limit=100",
        }
        hits: list[int] = []
        sizes: list[int] = []
        for name, path in cases.items():
            times = []
            for _ in range(rounds):
                for query in QUERIES:
                    ms, _, size, body = client.get(path(query.replace(" ", "+")))
                    times.append(ms)
                    if name.startswith("search, current"):
                        hits.append(len(body))
                        sizes.append(size)
            out[name] = stats(times)
        out["results per search: mean / max"] = [round(statistics.mean(hits), 1), max(hits)]
        out["response bytes per search: median / max"] = [int(statistics.median(sizes)), max(sizes)]
        others = {
            "list, newest 100 (no query)": f"/api/records?project={pid}&limit=100",
            "list, superseded 100": f"/api/records?project={pid}&status=superseded&limit=100",
            "projects": "/api/projects",
            "graph (≤ 600 edges)": f"/api/graph?project={pid}",
            "sessions": f"/api/sessions?project={pid}",
            "drift table": f"/api/drift?project={pid}",
        }
        for name, path in others.items():
            out[name] = stats([client.get(path)[0] for _ in range(rounds * 6)])
        os.environ["AGENTCTX_HOME"] = home
        conn = db.connect()
        times = []
        for _ in range(rounds):
            for query in QUERIES:
                t = time.perf_counter()
                data.record_list(conn, pid, query=query, limit=100)
                times.append((time.perf_counter() - t) * 1000)
        conn.close()
        out["in-process data.record_list (same searches)"] = stats(times)
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def sh(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return "?"


def markdown(data: dict) -> str:
    m = data["machine"]
    r = data["result"]
    lines = [
        "# agentctx dashboard API benchmark", "",
        f"{m['date_utc']} · {m['cpu_count']} CPUs · {m['platform']} · Python {m['python']} · commit {m['git_commit']}"
        f" · load average {', '.join(f'{x:.2f}' for x in m['loadavg_at_start'])} at start,"
        f" {', '.join(f'{x:.2f}' for x in m['loadavg_at_end'])} at end (shared machine: expect noise)", "",
        f"Command: `{data['command']}`. Real server (`lib/agentctx_ui.py` through uv, uvicorn + Starlette), one "
        f"keep-alive HTTP connection, clock around request + full response read. {r['records']:,}-record store from "
        f"bench/make_store.py (built in {r['store_build_s']} s); {len(QUERIES)} keyword queries × {r['rounds']} rounds.",
        "", "| request | n | median ms | p95 ms | max ms |", "|---|---:|---:|---:|---:|",
    ]
    for name, value in r.items():
        if isinstance(value, dict):
            ok = " ✅" if name.startswith("search") and value["p95_ms"] <= TARGET_P95_MS else ""
            lines.append(f"| {name} | {value['n']} | {value['median_ms']} | {value['p95_ms']}{ok} | {value['max_ms']} |")
    lines += ["", f"Results per search (mean / max): {r['results per search: mean / max'][0]} / "
              f"{r['results per search: mean / max'][1]}; response size (median / max): "
              f"{r['response bytes per search: median / max'][0]:,} / {r['response bytes per search: median / max'][1]:,} bytes.",
              f"Target (ours; the issue sets none): search p95 ≤ {TARGET_P95_MS:g} ms over HTTP (✅ = met).", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 rounds; writes ui-quick.*")
    ap.add_argument("--records", type=int, default=10_000)
    args = ap.parse_args()
    rounds = 2 if args.quick else 5
    machine = {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "cpu_count": os.cpu_count(),
        "platform": platform.platform(), "python": platform.python_version(),
        "git_commit": sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]),
        "loadavg_at_start": os.getloadavg(),
    }
    result = run(args.records, rounds)
    machine["loadavg_at_end"] = os.getloadavg()
    command = "uv run python bench/ui_bench.py" + (" --quick" if args.quick else "") + (
        f" --records {args.records}" if args.records != 10_000 else "")
    data = {"command": command, "machine": machine, "result": result}
    name = "ui-quick" if args.quick else "ui"
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    with open(os.path.join(BENCH, "results", f"{name}.json"), "w") as fh:
        json.dump(data, fh, indent=2)
    text = markdown(data)
    with open(os.path.join(BENCH, "results", f"{name}.md"), "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
