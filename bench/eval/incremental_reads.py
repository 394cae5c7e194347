"""Does reading a transcript piece by piece, as the extraction worker does, find what one whole read finds?

    uv run python bench/eval/incremental_reads.py [SPLIT ...] [--steps 7,23] [--json]

For each real transcript of the splits given (default: ``../shared/eval/transcripts-dev``; skipped with a message
where absent), the file is grown line by line and read from the previous read's watermark every ``step`` lines,
the cut falling anywhere: mid-turn, between a tool call and its result, between a queued prompt and its
delivery, between Claude's list and the reply. The statements the no-model path takes from those reads
(``explicit.from_entries``) are compared with those of one whole read of the file: *lost* are found whole but
never piece by piece (the watermark passed them), *extra* the other way round (lines of a branch the whole read's
chain leaves out, such as a rewound prompt, read while they were the newest). Counts only, no text.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from agentctx.capture import explicit, transcript  # noqa: E402

DEV = ROOT.parent / "shared" / "eval" / "transcripts-dev"


def compare(path: Path, step: int) -> tuple[int, int, int]:
    """(statements in a whole read, lost piece by piece, extra piece by piece)."""
    lines = path.read_bytes().split(b"\n")
    whole = {s.key for s in explicit.from_entries(transcript.read(str(path)).entries)}
    got: set[str] = set()
    fd, grown = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        mark = None
        for cut in [*range(step, len(lines), step), len(lines)]:
            Path(grown).write_bytes(b"\n".join(lines[:cut]) + (b"\n" if cut < len(lines) else b""))
            batch = transcript.read(grown, mark)
            mark = batch.watermark
            got |= {s.key for s in explicit.from_entries(batch.entries)}
    finally:
        os.unlink(grown)
    return len(whole), len(whole - got), len(got - whole)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("splits", nargs="*", type=Path, help="folders holding raw/*.jsonl (default: the dev split)")
    ap.add_argument("--steps", default="7,23", help="read every N lines (comma-separated)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    splits = args.splits or ([DEV] if DEV.is_dir() else [])
    if not splits:
        print("bench/eval/incremental_reads: skipped, ../shared/eval/transcripts-dev/ is not here")
        return 0
    rows = []
    for split in splits:
        for path in sorted((split / "raw").glob("*.jsonl")):
            for step in (int(s) for s in args.steps.split(",")):
                whole, lost, extra = compare(path, step)
                rows.append({"file": path.name, "step": step, "whole": whole, "lost": lost, "extra": extra})
    total = {"transcripts": len({(r["file"]) for r in rows}), "reads_compared": len(rows),
             "statements_whole": sum(r["whole"] for r in rows), "lost": sum(r["lost"] for r in rows),
             "extra": sum(r["extra"] for r in rows), "files_losing": len({r["file"] for r in rows if r["lost"]})}
    if args.json:
        print(json.dumps({"total": total, "rows": rows}, indent=1))
        return 0
    print(f"{total['transcripts']} transcripts, steps {args.steps}: statements in whole reads {total['statements_whole']}, "
          f"lost piece by piece {total['lost']} (in {total['files_losing']} files), extra {total['extra']}")
    for r in rows:
        if r["lost"] or r["extra"]:
            print(f"  {r['file']} every {r['step']} lines: lost {r['lost']}, extra {r['extra']} of {r['whole']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
