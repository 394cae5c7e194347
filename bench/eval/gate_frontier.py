"""The injection gate's trade-off, in process: what UserPromptSubmit injects for the oracle store of the
transcripts dev split and for the coding set, under the shipped gate and under other lexical gates.

    uv run python bench/eval/gate_frontier.py          # both sets, ~1 min; prints a table

Two stores are built, as the other evaluations build them:

* the *oracle* stores of ``transcripts.py`` (one store per transcript holding exactly its labelled
  statements, ``../shared/eval/transcripts-dev/README.md``): answered-from-memory for its questions (the
  SessionStart digest or the prompt's injection holds a record matching a statement of the answer), and
  how often a question of another transcript injects anything;
* the coding set (``coding_set.json``, after the consolidation pass as ``run_eval.py`` runs it): recall at
  the injected budget, answerable prompts with nothing injected, unrelated prompts left silent.

For each prompt the search runs once (``search.search`` with the hook's candidates); each gate then decides
from those candidates what would be injected (``scoring.worth_injecting`` for the shipped one, the same
relative cutoff and depth for the others). The shipped gate's figures equal those of the hook processes
(``transcripts.py --oracle-only``, ``run_eval.py``). The other gates are the families tried for issue 19
(docs/benchmarks.md, "Retrieval quality"): a record matching one prompt word only must cover at least a
share of the prompt's word weight, or hold a word of at least some letters, or have no rival candidate
holding another of the prompt's words. The split is dev data: read the table as the shape of a trade-off,
never as a place to pick constants from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(HERE))

import coding  # noqa: E402
import transcripts  # noqa: E402

UNRELATED = coding.UNRELATED


class Case:
    """One prompt asked in one project: its candidates, what answers it, what the digest already showed."""

    __slots__ = ("set", "kind", "prompt", "want", "digest", "hits", "broad", "trivial", "own")

    def __init__(self, set_: str, kind: str, prompt: str, want: set[str], digest: bool, hits: list, broad: bool,
                 trivial: bool, own: list[set[str]]):
        self.set, self.kind, self.prompt, self.want, self.digest = set_, kind, prompt, want, digest
        self.hits, self.broad, self.trivial, self.own = hits, broad, trivial, own


def _case(conn, pid: str, set_: str, kind: str, prompt: str, want: set[str], digest: bool = False) -> Case:
    from agentctx import budgets, lexicon
    from agentctx.scoring import RELATIVE_FLOOR
    from agentctx.store import search

    trivial = search.is_trivial(prompt)
    hits = [] if trivial else search.search(conn, pid, prompt, limit=search.CANDIDATES, relative_floor=RELATIVE_FLOOR)
    words = search.terms(prompt)
    own = []
    for h in hits:
        stems = {lexicon.stem(t) for t in lexicon.tokens(f"{h.record['title']} {h.record['body']}")}
        own.append({w for w in words if lexicon.stem(w) in stems})
    return Case(set_, kind, prompt, want, digest, hits, budgets.turn_depth(prompt)[2], trivial, own)


def oracle_cases(dev: Path, work: Path) -> list[Case]:
    from agentctx import project as project_mod
    from agentctx.injection import digest
    from agentctx.store import db, projects, records

    names = sorted(p.stem for p in (dev / "labels").glob("*.json"))
    labels = {n: json.loads((dev / "labels" / f"{n}.json").read_text()) for n in names}
    questions = [(n, q["q"]) for n, lab in labels.items() for q in lab.get("questions") or []]
    cases = []
    for name in names:
        base = work / f"oracle-{name}"
        subprocess.run(["git", "init", "-q", str(base / "project")], check=True)
        os.environ["AGENTCTX_HOME"] = str(base / "home")
        conn = db.connect()
        try:
            proj = project_mod.detect(str(base / "project"))
            projects.register(conn, proj)
            stamps = {o.get("uuid"): o.get("timestamp")
                      for _, o in transcripts.parse_lines(dev / "raw" / f"{name}.jsonl") if o}
            recs = []
            for s in labels[name].get("statements") or []:  # as transcripts.oracle writes them
                scope = s.get("scope", "project") if s["type"] == "preference" else "project"
                recs.append(records.add(conn, proj.id, type=s["type"], title=s.get("gist") or s["quote"][:200],
                                        body=s["quote"], scope=scope, confidence="explicit", source="import",
                                        valid_from=stamps.get(s.get("uuid"))))
            conn.commit()
            start = digest.build(conn, proj).text
            for q in labels[name].get("questions") or []:
                quotes = q.get("statement_quotes") or []
                if not quotes:
                    continue
                want = {r["id"] for r in recs if any(transcripts.score(quote, f"{r['title']} {r['body']}")
                                                     >= transcripts.MATCH for quote in quotes)}
                cases.append(_case(conn, proj.id, "oracle", "answer", q["q"], want, any(i in start for i in want)))
            cases += [_case(conn, proj.id, "oracle", "foreign", q, set()) for other, q in questions if other != name]
        finally:
            conn.close()
    return cases


def coding_cases(work: Path) -> list[Case]:
    from agentctx.consolidation import consolidate
    from agentctx.store import db

    os.environ["AGENTCTX_HOME"] = str(work / "coding")
    data = coding.load()
    conn = db.connect()
    try:
        built = coding.build(conn, data)
        os.environ["AGENTCTX_NOW"] = data["now"]
        for p in data["projects"]:  # as run_eval.py leaves the store: the pass without the model
            consolidate.run(coding.project_of(p["name"], p["remote"]), seconds=3600, use_embeddings=False)
        out = []
        for p in data["prompts"]:
            pid, ids = built[p["project"]]
            out.append(_case(conn, pid, "coding", coding.kind(p), p["prompt"], {ids[k] for k in p.get("answer", [])}))
        return out
    finally:
        os.environ.pop("AGENTCTX_NOW", None)
        conn.close()


# ---------------------------------------------------------------------------------------------
# Gates: (case) -> indexes of the hits that pass, before the relative cutoff and the depth
# ---------------------------------------------------------------------------------------------

Gate = Callable[[Case], list[int]]


def shipped(case: Case) -> list:
    from agentctx.scoring import worth_injecting

    return worth_injecting(case.hits, broad=case.broad)


def _cut(case: Case, passing: list[int]) -> list:
    from agentctx.scoring import INJECT_CUTOFF, INJECT_CUTOFF_BROAD

    if not passing:
        return []
    best = max(h.score for h in case.hits)
    cutoff = (INJECT_CUTOFF_BROAD if case.broad else INJECT_CUTOFF) * best
    return [case.hits[i] for i in passing if case.hits[i].record.get("pinned") or case.hits[i].score >= cutoff]


def _answers(case: Case, i: int) -> bool:
    """The shipped rule's "answers the prompt" (``scoring.worth_injecting``)."""
    from agentctx.scoring import MIN_COVERAGE, MIN_MATCHED

    h = case.hits[i]
    return bool(h.record.get("pinned")) or h.coverage >= MIN_COVERAGE or h.matched >= MIN_MATCHED


def single_floor(share: float) -> Gate:
    """A record matching one prompt word only must cover ``share`` of the prompt's word weight."""
    return lambda c: _cut(c, [i for i in range(len(c.hits))
                              if _answers(c, i) and (c.hits[i].matched >= 2 or c.hits[i].coverage >= share)])


def single_length(letters: int) -> Gate:
    """A record matching one prompt word only must hold it in its own text, ``letters`` letters or longer
    (long words are the rarer ones, Zipf's law of abbreviation)."""
    return lambda c: _cut(c, [i for i in range(len(c.hits)) if _answers(c, i) and (
        c.hits[i].matched >= 2 or any(len(w) >= letters for w in c.own[i]))])


def single_no_rival(ratio: float) -> Gate:
    """A record matching one prompt word only passes unless another candidate scoring at least ``ratio`` of
    it holds a prompt word it lacks (the prompt's words scattered over unrelated records)."""
    def gate(c: Case) -> list:
        keep = []
        for i, h in enumerate(c.hits):
            if not _answers(c, i):
                continue
            rival = any(j != i and (c.own[j] - c.own[i]) and x.score >= ratio * h.score for j, x in enumerate(c.hits))
            if h.matched >= 2 or not rival:
                keep.append(i)
        return _cut(c, keep)
    return gate


def figures(cases: list[Case], gate: Callable[[Case], list]) -> dict:
    from agentctx import budgets

    f = {"oracle": [0, 0], "foreign": [0, 0], "recall": [0, 0], "nothing": [0, 0], "silent": [0, 0]}
    for c in cases:
        got = [] if c.trivial else gate(c)[: budgets.TURN_RECORDS_BROAD if c.broad else budgets.TURN_RECORDS]
        ids = {h.record["id"] for h in got}
        if c.set == "oracle" and c.kind == "answer":
            f["oracle"][0] += bool(c.digest or ids & c.want)
            f["oracle"][1] += 1
        elif c.set == "oracle":
            f["foreign"][0] += bool(ids)
            f["foreign"][1] += 1
        elif c.kind in UNRELATED:
            f["silent"][0] += not ids
            f["silent"][1] += 1
        else:
            f["recall"][0] += bool(ids & c.want)
            f["nothing"][0] += not ids
            f["recall"][1] += 1
            f["nothing"][1] += 1
    return {k: round(a / b, 3) if b else None for k, (a, b) in f.items()}


GATES: list[tuple[str, Callable[[Case], list]]] = [
    ("shipped (scoring.worth_injecting)", shipped),
    *[(f"one-word match covers >= {s}", single_floor(s)) for s in (0.25, 0.3, 0.35, 0.4, 0.5)],
    *[(f"one-word match on a word of >= {n} letters", single_length(n)) for n in (5, 6, 7)],
    *[(f"one-word match with no rival at >= {r} of its score", single_no_rival(r)) for r in (0.3, 0.5)],
]


def main() -> int:
    dev = transcripts.find_dev(None)
    if dev is None:
        print("bench/eval/gate_frontier: skipped, the labelled split ../shared/eval/transcripts-dev/ is not here")
        return 0
    with tempfile.TemporaryDirectory(prefix="agentctx-gates-") as tmp:
        cases = oracle_cases(dev, Path(tmp)) + coding_cases(Path(tmp))
    print("| gate | oracle memory | foreign questions injecting | coding: recall at the injected budget | "
          "answerable with nothing | unrelated silent |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, gate in GATES:
        f = figures(cases, gate)
        print(f"| {label} | {f['oracle']} | {f['foreign']} | {f['recall']} | {f['nothing']} | {f['silent']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
