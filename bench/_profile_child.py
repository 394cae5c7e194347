"""Child process for bench/profile_hooks.py: one hook invocation, timed phase by phase.

Run by the hooks' own interpreter (the uv script environment's Python), in a fresh process
each time, so imports, connection opening and SQLite's page cache are as cold as in a real
hook run. It mirrors ``user_prompt_submit.on_user_prompt_submit`` and ``session_start.on_session_start`` step by step,
calling the same library functions, and prints one JSON object of milliseconds per phase.

    python bench/_profile_child.py ups '<prompt>'   # UserPromptSubmit
    python bench/_profile_child.py ss               # SessionStart (cache used if fresh)
    python bench/_profile_child.py parts            # digest.build and search sub-steps
"""

import time

T0 = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lib"))
MARKS: list[tuple[str, float]] = []


def mark(name: str) -> None:
    MARKS.append((name, time.perf_counter()))


def report(extra: dict | None = None) -> None:
    out, last = {}, T0
    for name, at in MARKS:
        out[name] = round((at - last) * 1000, 3)
        last = at
    out["total_in_process"] = round((last - T0) * 1000, 3)
    out.update(extra or {})
    print(json.dumps(out))


def _wrap(module, name: str, bucket: dict) -> None:
    """Accumulate the time spent in ``module.name`` (if it exists) into ``bucket[name]``."""
    original = getattr(module, name, None)
    if original is None:
        return
    bucket[name] = 0.0

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            bucket[name] += (time.perf_counter() - t) * 1000

    setattr(module, name, timed)


def ups(prompt: str) -> None:
    from agentctx import hookio  # noqa: F401  (what the hook script imports first)

    mark("import_hookio")
    from agentctx.injection import turn

    mark("import_turn")
    from agentctx import project
    from agentctx.hookio import HOOK_BUSY_MS
    from agentctx.store import db, search, sessions

    # Time search's internal steps without re-implementing them: wrap what exists.
    inner: dict[str, float] = {}
    for name in ("informative", "_fts", "_rank", "_like", "_pinned"):
        _wrap(search, name, inner)
    sid = f"profile-{os.getpid()}-{time.time_ns()}"
    proj = project.detect(os.getcwd())
    mark("project_detect")
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    mark("db_connect")
    t = time.perf_counter()
    text, ids, tokens = turn.select(conn, proj.id, sid, prompt)  # injected_ids + search + render
    select_ms = (time.perf_counter() - t) * 1000
    mark("select")
    if text:
        with db.transaction(conn):
            sessions.account(conn, sid, proj.id, "UserPromptSubmit", ids, tokens)
    mark("account_commit")
    conn.close()
    mark("close")
    json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}})
    mark("emit")
    # Split "select" into its parts (_fts includes _rank; select includes all of search).
    fts_sql = inner.get("_fts", 0.0) - inner.get("_rank", 0.0)
    parts = {
        "select.informative_term_counts": inner.get("informative", 0.0),
        "select.fts_sql": fts_sql,
        "select.rank_python": inner.get("_rank", 0.0),
        "select.other (terms, dedup, render)": select_ms - inner.get("informative", 0.0) - inner.get("_fts", 0.0)
        - inner.get("_like", 0.0) - inner.get("_pinned", 0.0),
    }
    report({**{k: round(v, 3) for k, v in parts.items()}, "terms": len(search.terms(prompt)), "injected": len(ids)})


def ss() -> None:
    from agentctx import hookio  # noqa: F401

    mark("import_hookio")
    from agentctx.injection import digest  # noqa: F401

    mark("import_digest")
    from agentctx import project
    from agentctx.hookio import HOOK_BUSY_MS
    from agentctx.store import db, projects, sessions

    sid = f"profile-{os.getpid()}-{time.time_ns()}"
    proj = project.detect(os.getcwd())
    mark("project_detect")
    conn = db.connect(busy_ms=HOOK_BUSY_MS)
    mark("db_connect")
    gen = db.generation(conn)
    cached = digest.read_cache(proj.id, gen)
    mark("read_cache")
    if cached is None:
        dig = digest.build(conn, proj)
        dig.generation = gen
        mark("digest_build")
        digest.write_cache(proj.id, dig)
        mark("write_cache")
    else:
        dig = cached
    with db.transaction(conn):
        projects.register(conn, proj)
        sessions.start(conn, sid, proj.id, proj.root, "startup")
        sessions.account(conn, sid, proj.id, "SessionStart", dig.record_ids, dig.tokens)
    mark("account_commit")
    conn.close()
    mark("close")
    db.take_notices()
    json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": dig.text}})
    mark("emit")
    report({"cache_hit": cached is not None})


def parts() -> None:
    """digest.build's queries one by one (fresh connection each), as build() runs them."""
    from agentctx import project
    from agentctx.store import db, records

    proj = project.detect(os.getcwd())
    steps = {
        "active_profile": lambda c: records.active(c, proj.id, ["profile"], limit=20),
        "active_decisions_conventions": lambda c: records.active(c, proj.id, ["decision", "convention"], limit=40),
        "active_handover": lambda c: records.active(c, proj.id, ["handover"], limit=1),
        "global_preferences": lambda c: records.global_preferences(c),
    }
    if hasattr(records, "count_active"):
        steps["count_active"] = lambda c: records.count_active(c, proj.id)
    else:
        steps["counts"] = lambda c: records.counts(c, proj.id)
    out = {}
    for name, fn in steps.items():
        conn = db.connect()
        t = time.perf_counter()
        fn(conn)
        out[name] = round((time.perf_counter() - t) * 1000, 3)
        conn.close()
    print(json.dumps(out))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "ups":
        ups(sys.argv[2])
    elif mode == "ss":
        ss()
    else:
        parts()
