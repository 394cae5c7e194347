"""Mutation testing of the rule modules (issue 15): is every rule guarded by a test that fails when it breaks?

Run from the repository root (the tests need the dev group; cosmic-ray is not a project dependency: ``--with``
adds it for this run)::

    uv run --group dev --with cosmic-ray==8.7.0 python bench/mutation.py                 # every target, 2 jobs
    uv run --group dev --with cosmic-ray==8.7.0 python bench/mutation.py --targets budgets,digest
    uv run --group dev --with cosmic-ray==8.7.0 python bench/mutation.py --before        # without issue 15's test files
    uv run --group dev --with cosmic-ray==8.7.0 python bench/mutation.py --report-only   # rewrite the .md from the .json

**Tool.** `cosmic-ray <https://cosmic-ray.readthedocs.io>`_ (maintained, 8.x) generates the mutants and applies
each one to the file (``cosmic_ray.mutating.use_mutation``). mutmut 3 was not usable: it mutates code inside
functions only (its README says so), and the rules this run is about are mostly module constants
(``SESSION_START_TOKENS = 1500``, ``THRESHOLD = 0.92``, ``DAILY_DECAY``); its trampolines also cannot reach the
hook processes the tests start under uv's script environments. Operators: every number ±1, ``not`` added or
removed, ``and``/``or`` swapped, ``True``/``False`` swapped, comparison boundaries (``<``↔``<=``, ``>``↔``>=``,
``==``↔``!=``, ``is``↔``is not``), one replacement per arithmetic operator (``+``↔``-``, ``*``↔``/``, ``//``→``/``),
``-x``→``+x``, ``break``↔``continue``, loops that run zero times and exception handlers that catch nothing.

Rules that live in SQL text or in the POSIX-sh launcher are out of reach of every Python mutation tool, so a
short list of **rule mutants** (``RULE_MUTANTS``) is applied by text replacement and reported apart: superseded
records presented as current, the project scope widened, pinned-first orders dropped, the launcher passing uv's
exit code through, a version-manager shim preferred.

**Isolation.** The run never touches the checkout: it copies the tracked and new files
(``tests.support.bundle.copy_bundle``) into one folder per job under ``--work-dir`` (replaced at each run; a
fixed place, so uv reuses the copies' script environments) and mutates only there.
Each target's mutants run against that target's test files only (``TARGETS``), ``pytest -x`` (first failure
kills), with ``lib/__pycache__`` removed before each run (hook processes write bytecode, and a mutant of the same
size and second would otherwise load the previous mutant's). Before the mutants, each target's tests run on the
unmutated copy: a test that already fails there (another change in progress) is deselected and reported, so it
cannot "kill" anything. A mutant whose tests outrun 3 × that baseline (≥ 20 s) counts as killed (a loop
that never ends).

Writes ``bench/results/<tag>.json`` (every mutant and its outcome) and ``bench/results/<tag>.md`` (score per
target, survivors with the explanation kept in ``bench/mutants/<target>.toml``; an unexplained survivor is marked
so). Runs over disjoint targets (``--tag mutation-<name> --targets <name>``, e.g. one per session in parallel) are
written as one report with ``--merge``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import multiprocessing
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
TOOL = "cosmic-ray"

# Issue 15's new test files: left out with --before, to measure the suite as it was.
NEW_TESTS = ("tests/injection/test_limits.py", "tests/events/test_fail_open.py", "tests/architecture/test_rules_across_layers.py", "tests/consolidation/test_dedup_rules.py")


@dataclass
class Target:
    """One rule module: the file mutated, the functions mutated (None: all), the tests that guard it."""

    name: str
    path: str
    tests: list[str]
    functions: frozenset[str] | None = None
    what: str = ""


CONSOLIDATE_DEDUP = [
    "tests/consolidation/test_consolidate.py::test_near_duplicates_merge_into_the_older_record",
    "tests/consolidation/test_consolidate.py::test_a_model_confirms_candidate_pairs",
    "tests/consolidation/test_consolidate.py::test_without_a_model_similar_but_different_facts_are_never_merged",
    "tests/consolidation/test_consolidate.py::test_with_an_api_key_haiku_confirms_merges_through_the_real_sdk",
]
# records.py: the functions that hold project scoping, supersession and the pinned-first read.
RECORD_RULES = frozenset({
    "scope_sql", "current_sql", "resolve", "get", "retire", "_replace", "_supersedable", "supersede", "add",
    "upsert_by_key", "_stated_wins", "active", "history",
})

HOOK_FAIL_OPEN = [f"tests/events/test_hooks.py::{name}" for name in (
    "test_bad_stdin_fails_open", "test_missing_fields_are_tolerated", "test_corrupt_store_is_moved_aside_never_overwritten",
    "test_disabled_by_environment", "test_store_from_newer_schema_is_left_untouched")]

TARGETS = [
    Target("budgets", "lib/agentctx/budgets.py",
           ["tests/injection/test_limits.py", "tests/injection/test_retrieval.py", "tests/base/test_budgets.py",
            "tests/architecture/test_one_source.py::test_clip_tokens_keeps_the_longest_prefix_that_fits"],
           what="token estimator, caps, block fitting, per-prompt depth"),
    Target("scoring", "lib/agentctx/scoring.py",
           ["tests/architecture/test_rules_across_layers.py", "tests/injection/test_retrieval.py", "tests/store/test_search.py",
            "tests/consolidation/test_consolidate.py::test_scores_decay_by_type_and_mark_prune_candidates"],
           what="type weights, decay, stored score, what is worth injecting"),
    Target("search", "lib/agentctx/store/search.py",
           ["tests/architecture/test_rules_across_layers.py", "tests/injection/test_retrieval.py", "tests/store/test_search.py", "tests/base/test_budgets.py"],
           what="retrieval and ranking"),
    Target("redact", "lib/agentctx/redact.py",
           ["tests/architecture/test_rules_across_layers.py", "tests/base/test_redact.py", "tests/base/test_redaction_recall.py",
            "tests/base/test_redaction_corpus.py"], what="secret redaction"),
    Target("render", "lib/agentctx/render.py",
           ["tests/injection/test_limits.py", "tests/architecture/test_rules_across_layers.py", "tests/base/test_budgets.py"], what="escaping and fencing"),
    Target("digest", "lib/agentctx/injection/digest.py",
           ["tests/injection/test_limits.py", "tests/architecture/test_rules_across_layers.py", "tests/base/test_budgets.py",
            "tests/consolidation/test_consolidate.py::test_the_digest_follows_the_consolidated_ranking_and_new_records_come_first",
            "tests/events/test_hooks.py::test_cached_digest_is_used_only_while_fresh"],
           what="SessionStart digest and its 1,500-token cap"),
    Target("turn", "lib/agentctx/injection/turn.py", ["tests/injection/test_limits.py", "tests/injection/test_retrieval.py",
                                                      "tests/base/test_budgets.py"],
           what="per-prompt selection, 3 (8) records, 2,000 tokens"),
    Target("dedup", "lib/agentctx/consolidation/dedup.py",
           ["tests/consolidation/test_dedup_rules.py", "tests/architecture/test_rules_across_layers.py", *CONSOLIDATE_DEDUP],
           what="near-duplicate threshold and merge"),
    Target("hookio", "lib/agentctx/hookio.py",
           ["tests/events/test_fail_open.py", "tests/base/test_hookevent.py", *HOOK_FAIL_OPEN],
           what="the hook's typed input and output"),
    Target("frame", "lib/agentctx/events/frame.py",
           ["tests/events/test_fail_open.py", "tests/events/test_hookio_rules.py", *HOOK_FAIL_OPEN,
            "tests/store/test_integrity.py::test_hook_observation_on_a_damaged_index_is_kept_and_the_user_told"],
           what="the fail-open frame"),
    Target("project", "lib/agentctx/project.py",
           ["tests/architecture/test_rules_across_layers.py", "tests/base/test_project.py", "tests/base/test_project_home.py"],
           what="project identity"),
    Target("records", "lib/agentctx/store/records.py", ["tests/architecture/test_rules_across_layers.py", "tests/store/test_store.py"],
           functions=RECORD_RULES, what="project scoping and supersession"),
]
LAUNCHER_TESTS = ["tests/events/test_fail_open.py",
                  "tests/events/test_hooks.py::test_without_uv_session_start_says_so_once_and_others_stay_silent",
                  "tests/events/test_hooks.py::test_real_uv_is_preferred_over_a_version_manager_shim"]

# (target, file, text, replacement, what the mutant breaks). The text must occur exactly once.
RULE_MUTANTS = [
    ("launcher", "hooks/launch.sh", "\nexit 0\n", "\nexit $rc\n", "uv's exit code passed through (exit 2 erases the prompt)"),
    ("launcher", "hooks/launch.sh", 'if [ -z "$uv_bin" ]; then', 'if [ -n "$uv_bin" ]; then', "uv found = uv missing"),
    ("launcher", "hooks/launch.sh", 'if [ "$event" = "session_start" ]; then', "if false; then",
     "no notice when uv is missing"),
    ("launcher", "lib/find_uv.sh", '*/shims/*) [ -n "$shim" ] || shim="$candidate" ;;',
     '*/shims/*) uv_bin="$candidate"; return 0 ;;', "a version-manager shim preferred"),
    ("records", "lib/agentctx/store/records.py", 'return f"{a}superseded_at IS NULL AND {a}archived_at IS NULL"',
     'return f"{a}archived_at IS NULL"', "superseded records are current"),
    ("records", "lib/agentctx/store/records.py", "return f\"({a}project_id = ? OR {a}scope = 'global')\", (project_id,)",
     'return f"({a}project_id = ? OR 1)", (project_id,)', "scope widened to every project"),
    ("records", "lib/agentctx/store/records.py", "return f\"{a}project_id = ?\", (project_id,)",
     'return f"({a}project_id = ? OR 1)", (project_id,)', "project-only scope widened"),
    ("records", "lib/agentctx/store/records.py", '"rank": "pinned DESC, score DESC, recorded_at DESC"',
     '"rank": "score DESC, recorded_at DESC"', "pinned records not first (named order)"),
    ("records", "lib/agentctx/store/records.py", 'key=lambda r: (r["pinned"], r["score"], r["recorded_at"])',
     'key=lambda r: (r["score"], r["recorded_at"])', "pinned records not first (digest read)"),
    ("records", "lib/agentctx/store/records.py", "+ f\" WHERE id = ? AND superseded_at IS NULL AND {where}\"",
     "+ f\" WHERE id = ? AND {where}\"", "a retired record retired again (history rewritten)"),
    ("records", "lib/agentctx/store/records.py", "WHEN ? > valid_from THEN ? ELSE valid_from END",
     "WHEN ? IS NOT NULL THEN ? ELSE valid_from END", "valid_to before valid_from"),
    ("search", "lib/agentctx/store/search.py", "clause = \"(r.project_id = ? OR r.scope = 'global')\"",
     'clause = "(r.project_id = ? OR 1)"', "search scope widened to every project"),
]
RULE_TESTS = {"launcher": LAUNCHER_TESTS, "records": ["tests/architecture/test_rules_across_layers.py", "tests/store/test_store.py"],
              "search": ["tests/architecture/test_rules_across_layers.py", "tests/store/test_search.py"]}

# cosmic-ray operators used (see the module docstring).
OPERATORS = re.compile(
    r"core/(?:ReplaceBinaryOperator_(?:Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Div)"
    r"|ReplaceComparisonOperator_(?:Eq_NotEq|NotEq_Eq|Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Is_IsNot|IsNot_Is)"
    r"|ReplaceUnaryOperator_(?:USub_UAdd|Delete_Not|Delete_USub)|AddNot|ReplaceTrueWithFalse|ReplaceFalseWithTrue"
    r"|ReplaceAndWithOr|ReplaceOrWithAnd|ReplaceBreakWithContinue|ReplaceContinueWithBreak|ExceptionReplacer"
    r"|NumberReplacer|ZeroIterationForLoop)$"
)

# Per target, ``bench/mutants/<target>.toml`` may add test files (``tests = [...]``, run before the ones above:
# put the fast, rule-specific tests first, since the first failure kills) and list the survivors that are
# equivalent or harmless (``[[explained]]`` tables: ``operator`` regex, ``source`` substring of the mutated line,
# optional ``function``, and ``why``). The first match explains a survivor; the report flags every other one.
MUTANTS_DIR = BENCH / "mutants"


def _target_config(name: str) -> dict:
    import tomllib

    path = MUTANTS_DIR / f"{name}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def explained() -> list[tuple[str, str | None, str, str, str]]:
    """(target, function or None, operator regex, source substring, why) from every target's file."""
    out = []
    for path in sorted(MUTANTS_DIR.glob("*.toml")):
        for e in _target_config(path.stem).get("explained", []):
            why = ("Equivalent: " if e.get("equivalent") else "Harmless: ") + e["why"]
            out.append((path.stem, e.get("function"), e["operator"], e["source"], why))
    return out


def tests_of(target: Target) -> list[str]:
    """The target's extra tests (its toml) first, then the ones listed here, without repeats."""
    extra = _target_config(target.name).get("tests", [])
    return list(dict.fromkeys([*extra, *target.tests]))


# ---------------------------------------------------------------------------------------------------------
# Jobs


@dataclass
class Job:
    target: str
    kind: str  # "cr" (cosmic-ray mutation) or "rule" (text replacement)
    path: str
    operator: str
    function: str | None
    line: int
    source: str
    tests: list[str]
    spec: dict = field(default_factory=dict)  # cr: operator_name, occurrence, operator_args; rule: old, new, what


def _python() -> str:
    return sys.executable


def _tests_for(tests: list[str], before: bool) -> list[str]:
    out = []
    for t in tests:
        file = t.split("::", 1)[0]
        if before and file in NEW_TESTS:
            continue
        if (ROOT / file).exists():
            out.append(t)
    return out


def _cr_jobs(copy: Path, target: Target, tests: list[str]) -> list[Job]:
    from cosmic_ray.commands.init import _all_work_items  # the enumeration ``cosmic-ray init`` uses

    lines = (copy / target.path).read_text(encoding="utf-8").splitlines()
    jobs = []
    cwd = os.getcwd()
    os.chdir(copy)
    try:
        items = list(_all_work_items([Path(target.path)], {}))
    finally:
        os.chdir(cwd)
    for item in items:
        (m,) = item.mutations
        if not OPERATORS.match(m.operator_name):
            continue
        if target.functions is not None and m.definition_name not in target.functions:
            continue
        line = m.start_pos[0]
        if m.operator_name.startswith("core/ReplaceBinaryOperator_Mul") and not _binary_star(lines[line - 1],
                                                                                         m.start_pos[1]):
            continue  # a parameter list's bare ``*`` or an unpacking ``*x``: not an operator (parso matches it)
        jobs.append(Job(target.name, "cr", target.path, m.operator_name.split("/", 1)[1], m.definition_name, line,
                        lines[line - 1].strip(), tests,
                        {"operator_name": m.operator_name, "occurrence": m.occurrence,
                         "operator_args": dict(m.operator_args)}))
    return jobs


def _binary_star(line: str, col: int) -> bool:
    """True when the ``*`` at ``col`` multiplies (an operand on both sides)."""
    before, after = line[:col].rstrip(), line[col + 1:].lstrip()
    return bool(before) and before[-1] not in "(,[=:" and not before.endswith(("def", "lambda")) \
        and bool(after) and after[0] not in ",)"


def _rule_jobs(copy: Path, before: bool, only: set[str] | None) -> list[Job]:
    jobs = []
    for target, path, old, new, what in RULE_MUTANTS:
        if only and target not in only:
            continue
        text = (copy / path).read_text(encoding="utf-8")
        line = text[: text.find(old)].count("\n") + 1 if old in text else 0
        rule_tests = [*_target_config(target).get("rule_tests", []), *RULE_TESTS[target]]
        jobs.append(Job(target, "rule", path, "rule", None, line, old.strip(), _tests_for(rule_tests, before),
                        {"old": old, "new": new, "what": what}))
    return jobs


# ---------------------------------------------------------------------------------------------------------
# Running tests in one copy


def run_tests(copy: Path, tests: list[str], deselect: list[str], timeout: float, *, first_failure: bool = True
              ) -> tuple[str, float, str]:
    """(outcome, seconds, output tail): "survived" (exit 0), "killed" (a failure), "timeout", "no-tests"."""
    for cache in (copy / "lib").rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    cmd = [_python(), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mutation", "--no-header", "-rfE",
           *(["-x"] if first_failure else []), *tests, *(f"--deselect={d}" for d in deselect)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(copy / "lib"), str(copy), str(copy / "bench")]),
           PREPARED: "" if first_failure is False else "1"}
    started = time.monotonic()
    global _CHILD
    proc = subprocess.Popen(cmd, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    _CHILD = proc.pid
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        return "timeout", time.monotonic() - started, ""
    finally:
        _CHILD = None
    seconds = time.monotonic() - started
    text = out.decode("utf-8", "replace")
    if proc.returncode == 0:
        return "survived", seconds, text[-2000:]
    if proc.returncode == 5:
        return "no-tests", seconds, text[-2000:]
    return "killed", seconds, text[-4000:]


PREPARED = "AGENTCTX_MUTATION_PREPARED"


def pytest_configure(config) -> None:
    """Loaded into each mutant's pytest (``-p mutation``): the copy's script environments were prepared by its
    baseline run (the suite's session fixture runs ``uv sync --script`` on every entry script, ~1 s a run),
    so that run's outcome is reused rather than done again for every mutant."""
    if not os.environ.get(PREPARED):
        return
    from tests.support import scriptenvs

    prepared = getattr(scriptenvs, "_prepared", None)
    if isinstance(prepared, dict):
        prepared.setdefault(str(Path(config.rootpath).resolve()), {"status": "done", "failed": {}})


_COPY: Path | None = None
_CHILD: int | None = None  # the test run a worker is waiting for (its own session: killed as a group)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _stop_worker(signum, frame) -> None:
    """A stopped run leaves no test process behind (a mutant that never ends would run on)."""
    if _CHILD is not None:
        _kill_group(_CHILD)
    os._exit(1)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _init_worker(queue) -> None:
    global _COPY
    signal.signal(signal.SIGTERM, _stop_worker)
    signal.signal(signal.SIGINT, _stop_worker)
    _COPY = Path(queue.get())
    try:
        os.nice(10)  # the machine is shared
    except OSError:
        pass


def _diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), path, path, n=0)
    return "".join(line for line in lines if not line.startswith(("---", "+++")))


def _execute(args: tuple[Job, list[str], float]) -> dict:
    job, deselect, timeout = args
    copy = _COPY
    assert copy is not None
    result = {"target": job.target, "kind": job.kind, "path": job.path, "operator": job.operator,
              "function": job.function, "line": job.line, "source": job.source}
    if job.kind == "rule":
        result["what"] = job.spec["what"]
        file = copy / job.path
        original = file.read_text(encoding="utf-8")
        if original.count(job.spec["old"]) != 1:
            return {**result, "outcome": "not-applicable", "seconds": 0.0, "diff": ""}
        mutated = original.replace(job.spec["old"], job.spec["new"])
        file.write_text(mutated, encoding="utf-8")
        try:
            outcome, seconds, output = run_tests(copy, job.tests, deselect, timeout)
        finally:
            file.write_text(original, encoding="utf-8")
        return {**result, "outcome": outcome, "seconds": round(seconds, 2), "diff": _diff(original, mutated, job.path),
                "output": output if outcome == "survived" else _failure_line(output)}
    import cosmic_ray.plugins
    from cosmic_ray.mutating import use_mutation

    operator = cosmic_ray.plugins.get_operator(job.spec["operator_name"])(**job.spec["operator_args"])
    cwd = os.getcwd()
    os.chdir(copy)
    try:
        with use_mutation(Path(job.path), operator, job.spec["occurrence"]) as (original, mutated):
            if mutated is None:
                return {**result, "outcome": "no-mutation", "seconds": 0.0, "diff": ""}
            outcome, seconds, output = run_tests(copy, job.tests, deselect, timeout)
    finally:
        os.chdir(cwd)
    return {**result, "outcome": outcome, "seconds": round(seconds, 2), "diff": _diff(original, mutated, job.path),
            "output": output if outcome == "survived" else _failure_line(output)}


def _failure_line(output: str) -> str:
    """The first FAILED/ERROR line of a killing run: which test killed the mutant."""
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line[:300]
    return ""


def _baseline(args: tuple[str, list[str]]) -> dict:
    """Run a target's tests on the unmutated copy; the failing ones are deselected for its mutants."""
    name, tests = args
    copy = _COPY
    assert copy is not None
    outcome, seconds, output = run_tests(copy, tests, [], 1800, first_failure=False)
    failing = [line.split(" ", 1)[1].split(" - ", 1)[0] for line in output.splitlines()
               if line.startswith(("FAILED ", "ERROR "))]
    if outcome == "killed" and not failing:  # no summary lines (a collection error): cannot be used
        return {"target": name, "seconds": seconds, "deselect": [], "usable": False, "output": output[-1500:]}
    if failing:  # confirm the rest passes, and time it
        outcome, seconds, output = run_tests(copy, tests, failing, 1800, first_failure=False)
    return {"target": name, "seconds": seconds, "deselect": failing, "usable": outcome == "survived",
            "output": "" if outcome == "survived" else output[-1500:]}


# ---------------------------------------------------------------------------------------------------------
# Report


def explain(m: dict) -> str | None:
    for target, function, operator, snippet, why in explained():
        if (m["target"] == target and (function is None or m["function"] == function)
                and re.search(operator, m["operator"]) and snippet in m["source"]):
            return why
    return None


def _score(ms: list[dict]) -> tuple[int, int, int]:
    counted = [m for m in ms if m["outcome"] in ("killed", "timeout", "survived")]
    killed = sum(m["outcome"] != "survived" for m in counted)
    return len(counted), killed, len(counted) - killed


def render_md(data: dict) -> str:
    mutants = data["mutants"]
    runs = (f"{len(data['merged'])} runs over disjoint targets (1–{data['jobs']} jobs each at nice 10, several at "
            f"once), {data['minutes']} min of wall time summed" if data.get("merged")
            else f"{data['jobs']} jobs at nice 10, {data['minutes']} min wall")
    out = [f"# Mutation testing of the rule modules ({data['tag']})", "",
           f"Measured {data['date']} on {data['machine']}; {runs}.",
           f"Tool: {TOOL} {data['tool_version']} (generation and application of mutants) + "
           f"{sum(m['kind'] == 'rule' for m in mutants)} rule mutants applied as text (SQL text and the sh launcher, "
           "which no Python mutation tool reaches).",
           f"Command: `{data['command']}`", ""]
    if data["before"]:
        out += ["Test files of issue 15 left out (`--before`): " + ", ".join(f"`{t}`" for t in NEW_TESTS), ""]
    out += ["Score: killed / mutants. Without equivalents: killed / (mutants − survivors shown to be equivalent, i.e. "
            "no test can tell them from the original).", "",
            "| target | what | mutants | killed | survived | of which equivalent | score | without equivalents |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]

    def row(label: str, what: str, ms: list[dict], bold: bool = False) -> str:
        n, k, s = _score(ms)
        eq = sum(m["outcome"] == "survived" and (m.get("why") or explain(m) or "").startswith("Equivalent")
                 for m in ms)
        cells = [str(n), str(k), str(s), str(eq), f"{100 * k / n:.1f}%" if n else "",
                 f"{100 * k / (n - eq):.1f}%" if n - eq else ""]
        cells = [f"**{c}**" if bold and c else c for c in cells]
        return f"| {label} | {what} | " + " | ".join(cells) + " |"

    names = [t.name for t in TARGETS if any(m["target"] == t.name and m["kind"] == "cr" for m in mutants)]
    for name in names:
        what = next(t.what for t in TARGETS if t.name == name)
        out.append(row(name, what, [m for m in mutants if m["target"] == name and m["kind"] == "cr"]))
    cr = [m for m in mutants if m["kind"] == "cr"]
    if cr:
        out.append(row(f"**all ({TOOL})**", "", cr, bold=True))
    rules = [m for m in mutants if m["kind"] == "rule"]
    if rules:
        out.append(row("rule mutants", "SQL text, launcher", rules))
        out.append(row("**total**", "", mutants, bold=True))
    other = [m for m in mutants if m["outcome"] not in ("killed", "timeout", "survived")]
    timeouts = sum(m["outcome"] == "timeout" for m in mutants)
    out += ["", f"Timeouts (counted as killed): {timeouts}. Not run: {len(other)} "
                f"({', '.join(sorted({m['outcome'] for m in other})) or 'none'})."]
    base = data.get("baselines", {})
    dropped = {name: b["deselect"] for name, b in base.items() if b.get("deselect")}
    unusable = [name for name, b in base.items() if not b.get("usable")]
    if dropped or unusable:
        out += ["", "Tests failing on the unmutated tree at run time (deselected for that target's mutants):"]
        out += [f"- {name}: " + ", ".join(f"`{d}`" for d in ds) for name, ds in dropped.items()]
        out += [f"- {name}: baseline unusable, target skipped" for name in unusable]
    survivors = [m for m in mutants if m["outcome"] == "survived"]
    out += ["", f"## Surviving mutants ({len(survivors)})", ""]
    unexplained = 0
    for m in sorted(survivors, key=lambda m: (m["target"], m["line"])):
        why = m.get("why") or explain(m)
        unexplained += why is None
        change = " / ".join(line[1:].strip() for line in m["diff"].splitlines() if line.startswith("+"))[:160]
        where = f"{m['path']}:{m['line']}" + (f" `{m['function']}`" if m["function"] else "")
        out.append(f"- **{m['target']}** {where}, {m['operator']}: `{m['source'][:120]}` → `{change}`  ")
        out.append(f"  {why or '**UNEXPLAINED**'}")
    if not survivors:
        out.append("None.")
    out += ["", f"Unexplained survivors: {unexplained}."]
    return "\n".join(out) + "\n"


def merge(tags: list[str], tag: str) -> dict:
    """One report from runs over disjoint targets (each measured on its own, e.g. in parallel sessions)."""
    runs = [json.loads((RESULTS / f"{t}.json").read_text()) for t in tags]
    seen: dict[str, str] = {}
    for t, run in zip(tags, runs, strict=True):
        for name in {m["target"] for m in run["mutants"]}:
            if name in seen:
                raise SystemExit(f"target {name} is in both {seen[name]} and {t}")
            seen[name] = t
    return {"tag": tag, "merged": tags, "date": " … ".join(sorted({min(r["date"] for r in runs), max(r["date"] for r in runs)})),
            "machine": runs[0]["machine"], "jobs": max(r["jobs"] for r in runs),
            "minutes": round(sum(r["minutes"] for r in runs), 1), "tool_version": runs[0]["tool_version"],
            "command": " && ".join(r["command"] for r in runs) + " && uv run python bench/mutation.py --merge "
                       + ",".join(tags),
            "before": any(r["before"] for r in runs),
            "baselines": {k: v for r in runs for k, v in r["baselines"].items()},
            "mutants": sorted((m for r in runs for m in r["mutants"]),
                              key=lambda m: (m["target"], m["path"], m["line"], m["operator"]))}


# ---------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="parallel test runs, one copy of the tree each (default 2)")
    ap.add_argument("--targets", default="", help="comma-separated target names (default: all, plus rule mutants)")
    ap.add_argument("--before", action="store_true", help=f"leave out issue 15's test files {NEW_TESTS}")
    ap.add_argument("--tag", default=None, help="results file name (default: mutation, or mutation-before)")
    ap.add_argument("--work-dir", default=None,
                    help="where the copies go (default: <test cache>/mutation, so uv reuses their script environments)")
    ap.add_argument("--limit", type=int, default=0, help="at most N mutants per target (a smoke run)")
    ap.add_argument("--report-only", action="store_true", help="rewrite <tag>.md from <tag>.json")
    ap.add_argument("--merge", default="",
                    help="comma-separated tags of runs over disjoint targets: written together as <tag>.json/.md")
    args = ap.parse_args(argv)
    tag = args.tag or ("mutation-before" if args.before else "mutation")
    json_path, md_path = RESULTS / f"{tag}.json", RESULTS / f"{tag}.md"
    if args.merge:
        json_path.write_text(json.dumps(merge([t for t in args.merge.split(",") if t], tag), indent=1,
                                        ensure_ascii=False) + "\n")
    if args.report_only or args.merge:
        data = json.loads(json_path.read_text())
        for m in data["mutants"]:  # explanations as they stand now
            m["why"] = explain(m) if m["outcome"] == "survived" else None
        md_path.write_text(render_md(data))
        print(md_path.read_text())
        return 0

    from importlib.metadata import version

    sys.path.insert(0, str(ROOT))
    from tests.support.bundle import copy_bundle, test_cache

    os.nice(10)
    only = {t for t in args.targets.split(",") if t}
    work = Path(args.work_dir) if args.work_dir else test_cache() / "mutation"
    copies = [copy_bundle(work / f"copy{i}") for i in range(args.jobs)]
    for copy in copies:  # uv keys script environments by path: each copy's, once (the suite's own state dir)
        subprocess.run([_python(), "-m", "agentctx.prepare", "--root", str(copy)], cwd=copy, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(copy / "lib"),
                            "AGENTCTX_CACHE_DIR": str(test_cache() / "state")}, timeout=1800)
    started = time.monotonic()
    jobs: list[Job] = []
    targets = [t for t in TARGETS if not only or t.name in only]
    for t in targets:
        tests = _tests_for(tests_of(t), args.before)
        found = _cr_jobs(copies[0], t, tests)
        jobs += found[: args.limit] if args.limit else found
    jobs += _rule_jobs(copies[0], args.before, only or None)
    suites = sorted({(j.target, tuple(j.tests)) for j in jobs})
    print(f"{len(jobs)} mutants over {len(targets)} targets; {args.jobs} copies in {work}", file=sys.stderr)

    signal.signal(signal.SIGTERM, _interrupt)  # leaving the pool's block then stops the workers and their tests
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    for c in copies:
        queue.put(str(c))
    results: list[dict] = []
    with ctx.Pool(args.jobs, initializer=_init_worker, initargs=(queue,)) as pool:
        baselines = {}
        for (name, tests), b in zip(suites, pool.map(_baseline, [(n, list(ts)) for n, ts in suites]), strict=True):
            baselines[f"{name}|{' '.join(tests)}"] = b
            print(f"baseline {name}: {b['seconds']:.1f} s, deselected {len(b['deselect'])}, usable {b['usable']}",
                  file=sys.stderr)
        work_items = []
        for j in jobs:
            b = baselines[f"{j.target}|{' '.join(j.tests)}"]
            if b["usable"]:
                work_items.append((j, b["deselect"], max(20.0, 3 * b["seconds"])))
        done = 0
        for r in pool.imap_unordered(_execute, work_items):
            results.append(r)
            done += 1
            if done % 25 == 0 or done == len(work_items):
                n, k, s = _score(results)
                print(f"{done}/{len(work_items)} run, {k} killed, {s} survived, "
                      f"{(time.monotonic() - started) / 60:.1f} min", file=sys.stderr)
                RESULTS.mkdir(exist_ok=True)
                (RESULTS / f"{tag}.partial.json").write_text(json.dumps(results, ensure_ascii=False))
    minutes = round((time.monotonic() - started) / 60, 1)
    for r in results:
        r["why"] = explain(r) if r["outcome"] == "survived" else None
    by_target = {}
    for b in baselines.values():
        by_target.setdefault(b["target"], {"seconds": 0.0, "deselect": [], "usable": True})
        by_target[b["target"]]["seconds"] += round(b["seconds"], 1)
        by_target[b["target"]]["deselect"] += b["deselect"]
        by_target[b["target"]]["usable"] &= b["usable"]
    command = "uv run --group dev --with cosmic-ray==8.7.0 python bench/mutation.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    data = {"tag": tag, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "jobs": args.jobs, "minutes": minutes, "tool_version": version("cosmic-ray"), "command": command,
            "before": args.before, "baselines": by_target,
            "mutants": sorted(results, key=lambda m: (m["target"], m["path"], m["line"], m["operator"]))}
    RESULTS.mkdir(exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    (RESULTS / f"{tag}.partial.json").unlink(missing_ok=True)
    md_path.write_text(render_md(data))
    print(md_path.read_text())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("mutation run stopped; its test processes were stopped with it", file=sys.stderr)
        sys.exit(130)
