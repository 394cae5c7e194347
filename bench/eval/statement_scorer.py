"""Would a learned scorer tell the person's statements from the rest better than ``explicit``'s rules?

    uv run python bench/eval/statement_scorer.py /work/train/a /work/train/b [--json]

An experiment, measured out of fold on labelled real sessions that are in neither evaluation split (each
folder laid out like ``../shared/eval/transcripts-dev``: ``raw/*.jsonl``, ``labels/*.json`` with
``statements``). Never give it an evaluation split: its figures would then say nothing about other people.

Every sentence the rules consider in what the person typed, pasted documents included
(``explicit.candidates``), is one example: positive when it matches a labelled statement of the same
message (the eval's rule, 60% of the words either way), left out when that statement is marked uncertain,
negative otherwise. The scorer is logistic regression (L2, Adagrad) over the sentence's rule shapes, its
words and word pairs, CJK/Thai character pairs, its length, its place in the message, the message's length
and how it was said; features seen in at least two sessions. Five folds by session; it reports precision
and recall of the rules and of the scorer at several thresholds. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT))

from agentctx.capture import explicit, transcript  # noqa: E402
from bench.eval.transcripts import MATCH, tokens  # noqa: E402

FOLDS = 5
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
_LATIN = re.compile(r"[a-z][a-z'’-]*[a-z]|[a-z]", re.I)
_SCRIPT = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


def _bucket(n: int, edges: tuple[int, ...]) -> str:
    return next((str(e) for e in edges if n <= e), f">{edges[-1]}")


def features(c: explicit.Candidate, kind: str) -> list[str]:
    """The features of one candidate sentence of a message said as ``kind``."""
    words = [w.lower() for w in _LATIN.findall(c.sentence)]
    place = "only" if c.count == 1 else "first" if c.index == 0 else "last" if c.index == c.count - 1 else "mid"
    out = ["bias", f"kind:{kind}", f"part:{c.part}", f"place:{place}", f"len:{_bucket(len(words), (3, 6, 10, 16, 25, 40))}",
           f"msg:{_bucket(c.message_chars, (80, 200, 500, 1500, 4000))}", *(f"shape:{s}" for s in c.shapes or ("none",))]
    out += ["brief"] * c.brief + [f"first:{w}" for w in words[:1]]
    out += [f"w:{w}" for w in set(words)] + [f"b:{a} {b}" for a, b in set(zip(words, words[1:], strict=False))]
    for run in _SCRIPT.findall(c.sentence):
        out += [f"c:{run[i:i + 2]}" for i in range(len(run) - 1)] or [f"c:{run}"]
    return out


def _matches(sentence: str, quote: str) -> bool:
    q, s = tokens(quote), tokens(sentence)
    inter = len(q & s)
    return bool(q and s) and (inter >= MATCH * len(q) or (len(s) >= 2 and inter >= MATCH * len(s)))


def examples(split: Path) -> list[dict]:
    """One example per candidate sentence of the split's sessions."""
    out = []
    for label_path in sorted((split / "labels").glob("*.json")):
        label = json.loads(label_path.read_text(encoding="utf-8"))
        raw = split / "raw" / (label_path.stem + ".jsonl")
        if not raw.exists():
            print(f"skipped {label_path.name}: no raw file", file=sys.stderr)
            continue
        entries = transcript.person_entries(str(raw))
        by_entry: dict[int, list[dict]] = {}
        for st in label.get("statements", []):
            quote = " ".join(st.get("quote", "").split())
            home = [i for i, e in enumerate(entries) if quote and quote in " ".join(e.text.split())] or \
                   [i for i, e in enumerate(entries) if e.uuid == st.get("uuid")]
            for i in home[:1]:
                by_entry.setdefault(i, []).append(st)
        for i, e in enumerate(entries):
            if e.kind == "answer":
                continue  # a decision by construction
            for c in explicit.candidates(e.text, documents=True):
                hits = [st for st in by_entry.get(i, []) if _matches(c.sentence, st["quote"])]
                if hits and all(st.get("uncertain") for st in hits):
                    continue
                out.append({"session": f"{split.name}/{label_path.stem}", "features": features(c, e.kind),
                            "y": int(bool(hits)), "rule": c.part == "typed" and explicit.stated_type(c) is not None})
    return out


def _p(weights: dict[str, float], feats: list[str]) -> float:
    z = sum(weights.get(f, 0.0) for f in feats)
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def train(rows: list[dict], l2: float, epochs: int) -> dict[str, float]:
    seen: dict[str, set[str]] = {}
    for r in rows:
        for f in r["features"]:
            seen.setdefault(f, set()).add(r["session"])
    vocab = {f for f, s in seen.items() if len(s) >= 2}
    w: dict[str, float] = {}
    g2: dict[str, float] = {}
    pos = sum(r["y"] for r in rows) or 1
    up = max(1.0, (len(rows) - pos) / pos) ** 0.5  # the rarer class counts a little more
    order = list(range(len(rows)))
    rng = random.Random(7)
    for _ in range(epochs):
        rng.shuffle(order)
        for i in order:
            feats = [f for f in rows[i]["features"] if f in vocab]
            grad = (_p(w, feats) - rows[i]["y"]) * (up if rows[i]["y"] else 1.0)
            for f in feats:
                g = grad + l2 * w.get(f, 0.0)
                g2[f] = g2.get(f, 0.0) + g * g
                w[f] = w.get(f, 0.0) - 0.3 * g / (math.sqrt(g2[f]) + 1e-8)
    return w


def _fold(session: str) -> int:
    return int(hashlib.sha1(session.encode()).hexdigest(), 16) % FOLDS


def figures(rows: list[dict], kept: list[bool]) -> dict:
    tp = sum(1 for r, k in zip(rows, kept, strict=True) if k and r["y"])
    n, pos = sum(kept), sum(r["y"] for r in rows)
    return {"kept": n, "precision": round(tp / n, 3) if n else 0.0, "recall": round(tp / pos, 3) if pos else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("splits", nargs="+", type=Path, help="labelled split folders in neither evaluation split")
    ap.add_argument("--l2", type=float, default=0.05)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    rows = [r for split in args.splits for r in examples(split)]
    if not any(r["y"] for r in rows):
        print("no labelled statement found in the splits given", file=sys.stderr)
        return 1
    probs = [0.0] * len(rows)
    for k in range(FOLDS):
        w = train([r for r in rows if _fold(r["session"]) != k], args.l2, args.epochs)
        for i, r in enumerate(rows):
            if _fold(r["session"]) == k:
                probs[i] = _p(w, r["features"])
    result = {"sessions": len({r["session"] for r in rows}), "sentences": len(rows),
              "statements": sum(r["y"] for r in rows), "rules": figures(rows, [r["rule"] for r in rows]),
              "scorer": {str(t): figures(rows, [p >= t for p in probs]) for t in THRESHOLDS}}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{result['sessions']} sessions, {result['sentences']} candidate sentences, {result['statements']} statements "
          f"(out of fold, {FOLDS} folds by session)")
    print("| kept by | sentences kept | precision | recall |\n|---|---:|---:|---:|")
    print("| the rules (`explicit`) | {kept} | {precision:.2f} | {recall:.2f} |".format(**result["rules"]))
    for t, fig in result["scorer"].items():
        print(f"| the scorer, p ≥ {t} | {fig['kept']} | {fig['precision']:.2f} | {fig['recall']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
