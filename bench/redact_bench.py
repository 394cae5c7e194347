"""Redaction speed at 1, 10 and 50 MB: is it linear in its input?

Usage (from the repository root)::

    uv run python bench/redact_bench.py [--sizes 1,10,50] [--runs 3] [--cli 1,10] [--module PATH] [--tag NAME]

Each input shape is built by repeating one unit up to the size (megabytes of characters):

* ``transcript``: lines as a session's log holds them (prose, code, commands, a secret every ~40 lines);
* ``one_line``: the same with every newline a space (anchored rules then read one huge line);
* ``secrets_dense``: every sample of tests/support/secrets_corpus.py, one after the other;
* ``assignments``: ``DB_PASSWORD=…`` lines between log lines (thousands of matches of one rule);
* ``commands_one_line``: ``curl``, ``mysql`` and ``Cookie:`` words without their flag on one line (each
  used to rescan the rest of the line: quadratic).

Timing is in-process (``redact.scan``, median of ``--runs``; one run at 50 MB), plus whole-process
``agentctx redact`` with the text on stdin at the ``--cli`` sizes (it reads at most 16 MB). ``--module``
times another copy of ``redact.py`` (e.g. the one before this change) in-process, with ``--timeout`` per
call. Writes bench/results/redact.json and .md (``--tag``: redact-<tag>.*).
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (os.path.join(ROOT, "lib"), ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

MB = 1_000_000


def _units() -> dict[str, str]:
    from tests.support.secrets_corpus import secret_samples

    samples = secret_samples()
    lines = []
    for i in range(40):
        lines += [f"Turn {i}: the retry loop in src/pkg{i % 7}/client.py now backs off for {i % 5} seconds.",
                  f"    def fetch_{i}(self, url: str, timeout: float = 3.0) -> bytes:",
                  f"$ pytest tests/test_client.py -k retry_{i} -q  # 12 passed in 0.{i % 10}s",
                  f'{{"type": "tool_result", "content": "ok {i}", "cwd": "/home/dev/project"}}']
    secrets = [s.text for s in samples]
    for i in range(0, len(lines), 40):
        lines.insert(i, secrets[(i // 40) % len(secrets)])
    transcript = "\n".join(lines) + "\n"
    return {
        "transcript": transcript,
        "one_line": transcript.replace("\n", " "),
        "secrets_dense": "\n".join(secrets) + "\n",
        "assignments": "DB_PASSWORD=hunter2xyz99\nsome normal log line here ok\n",
        "commands_one_line": "curl http://example.com/x then mysql is fine; Cookie: a=b ",
    }


def _text(unit: str, mb: float) -> str:
    n = int(mb * MB)
    return (unit * (n // len(unit) + 1))[:n]


def _load(path: str | None):
    if path is None:
        from agentctx import redact

        return redact
    spec = importlib.util.spec_from_file_location("redact_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _time_once(path: str | None, unit: str, mb: float, out) -> None:
    module = _load(path)
    text = _text(unit, mb)
    t0 = time.perf_counter()
    _, found = module.scan(text)
    out.send((time.perf_counter() - t0, sum(found.values())))


def timed(path: str | None, unit: str, mb: float, timeout: float) -> tuple[float | None, int]:
    """(seconds, redactions) of one ``scan`` in a child process; (None, 0) past ``timeout``."""
    here, there = multiprocessing.Pipe(duplex=False)
    proc = multiprocessing.Process(target=_time_once, args=(path, unit, mb, there))
    proc.start()
    if here.poll(timeout):
        seconds, count = here.recv()
        proc.join()
        return seconds, count
    proc.kill()
    proc.join()
    return None, 0


def cli(unit: str, mb: float) -> float:
    """Whole-process ``agentctx redact`` with the text on stdin (seconds)."""
    import tempfile

    text = _text(unit, mb).encode()
    with tempfile.TemporaryDirectory(prefix="agentctx-redact-bench-") as home:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(ROOT, "lib", "agentctx_cli.py"), "redact"], input=text,
                       stdout=subprocess.DEVNULL, check=True, env={**os.environ, "AGENTCTX_HOME": home})
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,10,50")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cli", default="1,10", help="sizes (MB) also timed as whole `agentctx redact` processes")
    ap.add_argument("--module", help="time this redact.py instead of lib/agentctx/redact.py")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per call before it counts as too slow")
    ap.add_argument("--shapes", help="comma-separated subset of the input shapes")
    ap.add_argument("--tag")
    args = ap.parse_args(argv)
    sizes = [float(s) for s in args.sizes.split(",") if s]
    units = _units()
    if args.shapes:
        units = {k: v for k, v in units.items() if k in args.shapes.split(",")}
    rows = []
    for shape, unit in units.items():
        for mb in sizes:
            times, count = [], 0
            for _ in range(1 if mb >= 50 else args.runs):
                seconds, count = timed(args.module, unit, mb, args.timeout)
                if seconds is None:
                    times = []
                    break
                times.append(seconds)
            row = {"shape": shape, "mb": mb, "seconds": round(statistics.median(times), 3) if times else None,
                   "runs": len(times), "redactions": count,
                   "mb_per_second": round(mb / statistics.median(times), 2) if times else None}
            if not args.module and mb in [float(s) for s in args.cli.split(",") if s] and mb <= 16:
                row["cli_seconds"] = round(cli(unit, mb), 3)
            rows.append(row)
            print(row, flush=True)
    results = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
               "date": time.strftime("%Y-%m-%d"), "module": args.module or "lib/agentctx/redact.py",
               "load_average_1m": round(os.getloadavg()[0], 2), "timeout_s": args.timeout, "rows": rows,
               "command": "uv run python bench/redact_bench.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    from agentctx import fsio

    name = f"redact-{args.tag}" if args.tag else "redact"
    out = os.path.join(ROOT, "bench", "results")
    fsio.write_json(os.path.join(out, f"{name}.json"), results, indent=1)
    fsio.write_atomic(os.path.join(out, f"{name}.md"), render(results))
    print(render(results))
    return 0


def render(r: dict) -> str:
    sizes = sorted({row["mb"] for row in r["rows"]})
    shapes = list(dict.fromkeys(row["shape"] for row in r["rows"]))
    cell = {(row["shape"], row["mb"]): row for row in r["rows"]}

    def fmt(row: dict | None) -> str:
        if row is None:
            return ""
        if row["seconds"] is None:
            return f"> {r['timeout_s']:g} s"
        cli_s = f" (process {row['cli_seconds']} s)" if "cli_seconds" in row else ""
        return f"{row['seconds']} s{cli_s}"

    lines = [f"# Redaction speed ({r['date']})", "",
             f"Machine: {r['machine']}; load average {r['load_average_1m']} (shared machine); module {r['module']}.",
             f"Command: `{r['command'].strip()}`", "",
             "In-process `redact.scan` (median), whole `agentctx redact` process in brackets.", "",
             "| shape | " + " | ".join(f"{s:g} MB" for s in sizes) + " | MB/s at the largest |",
             "|---|" + "---:|" * (len(sizes) + 1)]
    for shape in shapes:
        last = cell.get((shape, sizes[-1]))
        speed = last["mb_per_second"] if last and last["mb_per_second"] else ""
        lines.append(f"| {shape} | " + " | ".join(fmt(cell.get((shape, s))) for s in sizes) + f" | {speed} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
