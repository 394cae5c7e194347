"""PostToolUse / PostToolUseFailure observations: parsing units, then the hook as a real process."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentctx import paths, project
from agentctx.capture import observe
from agentctx.store import db
from tests.support.hooks import ROOT, run_hook
from tests.support.imports import heavy_modules_loaded


@pytest.fixture(scope="module", autouse=True)
def _warm_hook_envs(tmp_path_factory):
    """Create the hooks' uv script environments once with the full environment, as .ci/run does for
    the other hooks: the hook runs below get a minimal environment (no proxy or CA settings)."""
    data = tmp_path_factory.mktemp("warm")
    for hook in ("post_tool_use",):
        subprocess.run([shutil.which("uv") or "uv", "run", "--quiet", "--script", str(ROOT / "hooks" / f"{hook}.py")],
                       input=b"{}", env={**os.environ, "AGENTCTX_HOME": str(data)}, cwd=ROOT, capture_output=True,
                       timeout=600)


# ---------------------------------------------------------------------------------------
# Payloads shaped like Claude Code 2.1.332's (captured from the real CLI)
# ---------------------------------------------------------------------------------------


def _common(repo: Path, event: str, session: str) -> dict:
    return {"session_id": session, "transcript_path": "/nonexistent.jsonl", "cwd": str(repo),
            "prompt_id": "p-1", "permission_mode": "default", "effort": {"level": "medium"},
            "hook_event_name": event, "tool_use_id": "toolu_01", "duration_ms": 12}


def write_payload(repo: Path, path: str, session: str = "sess-1", tool: str = "Write") -> dict:
    full = str(repo / path) if not path.startswith("/") else path
    if tool == "Write":
        tool_input = {"file_path": full, "content": "print('hi')\n"}
        response = {"type": "create", "filePath": full, "content": "print('hi')\n", "structuredPatch": [],
                    "originalFile": None, "userModified": False}
    elif tool == "NotebookEdit":
        tool_input = {"notebook_path": full, "new_source": "x = 1", "cell_id": "c1"}
        response = {"new_source": "x = 1", "cell_id": "c1", "cell_type": "code", "edit_mode": "replace"}
    else:
        tool_input = {"file_path": full, "old_string": "hi", "new_string": "ho", "replace_all": False}
        response = {"filePath": full, "oldString": "hi", "newString": "ho", "originalFile": "print('hi')\n",
                    "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                         "lines": ["-print('hi')", "+print('ho')"]}],
                    "userModified": False, "replaceAll": False}
        if tool == "MultiEdit":
            tool_input = {"file_path": full, "edits": [{"old_string": "hi", "new_string": "ho"}]}
    return {**_common(repo, "PostToolUse", session), "tool_name": tool, "tool_input": tool_input,
            "tool_response": response}


def bash_ok(repo: Path, command: str, stdout: str = "", stderr: str = "", session: str = "sess-1") -> dict:
    return {**_common(repo, "PostToolUse", session), "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run"},
            "tool_response": {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False,
                              "noOutputExpected": False}}


def bash_failed(repo: Path, command: str, output: str, code: int = 1, session: str = "sess-1") -> dict:
    return {**_common(repo, "PostToolUseFailure", session), "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run"},
            "error": f"Exit code {code}\n{output}", "is_interrupt": False}


PYTEST_COLLECTION_ERROR = """\
==================================== ERRORS ====================================
_______________________ ERROR collecting tests/test_api.py _______________________
ImportError while importing test module '{root}/tests/test_api.py'.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package)
tests/test_api.py:1: in <module>
    import requests_mock
E   ModuleNotFoundError: No module named 'requests_mock'
=========================== short test summary info ============================
ERROR tests/test_api.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.08s ===============================
"""

PYTEST_FAIL = """\
============================= test session starts ==============================
collected 3 items

tests/test_api.py .F.                                                    [100%]

=================================== FAILURES ===================================
_________________________________ test_refund __________________________________
    def test_refund():
>       assert refund(10) == 9
E       assert 10 == 9
tests/test_api.py:12: AssertionError
=========================== short test summary info ============================
FAILED tests/test_api.py::test_refund - assert 10 == 9
========================= 1 failed, 2 passed in 0.12s ==========================
"""

PYTEST_PASS = "tests/test_api.py ...                                                    [100%]\n\n3 passed in 0.05s\n"


def store():
    conn = db.connect()
    conn.row_factory = sqlite3.Row
    return conn


def rows(sql: str, *args) -> list[dict]:
    conn = store()
    try:
        return [dict(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


def run_ok(payload: dict, home: Path):
    proc = run_hook("post_tool_use", payload, home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"", "PostToolUse must print nothing"
    log = Path(paths.sub("logs", "agentctx.log"))
    assert not log.exists() or "error" not in log.read_text(), log.read_text()
    return proc


@pytest.fixture
def proj(home: Path, repo: Path) -> project.Project:
    db.connect().close()  # the store exists, as after any SessionStart
    return project.detect(str(repo))


# ---------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("output, failed, expected", [
    ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    import foo\n"
     "ModuleNotFoundError: No module named 'foo'", True, "ModuleNotFoundError: No module named 'foo'"),
    ("Traceback (most recent call last):\n  File \"a.py\", line 3\nKeyError: 'x'\n\nDuring handling...\n"
     "Traceback (most recent call last):\n  File \"a.py\", line 5\nValueError: bad config", False,
     "ValueError: bad config"),
    ("error[E0308]: mismatched types\n --> src/main.rs:4:18", True, "error[E0308]: mismatched types"),
    ("src/main.c:3:5: error: expected ';' before 'return'", True, "src/main.c:3:5: error: expected ';' before 'return'"),
    ("src/app.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.", True,
     "src/app.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'."),
    ("npm ERR! code ELIFECYCLE\nnpm ERR! errno 1", True, "npm ERR! code ELIFECYCLE"),
    ("goroutine 1 [running]:\npanic: runtime error: index out of range [3] with length 2", True,
     "panic: runtime error: index out of range [3] with length 2"),
    ("thread 'main' panicked at src/main.rs:2:5:\nexplicit panic", True,
     "thread 'main' panicked at src/main.rs:2:5: explicit panic"),
    ("sh: line 1: 4242 Segmentation fault      (core dumped) ./a.out", True,
     "sh: line 1: 4242 Segmentation fault      (core dumped) ./a.out"),
    ("fatal: not a git repository (or any of the parent directories): .git", True,
     "fatal: not a git repository (or any of the parent directories): .git"),
    ("bash: line 1: pyest: command not found", True, "bash: line 1: pyest: command not found"),
    ("make: *** [Makefile:3: all] Error 1", True, "make: *** [Makefile:3: all] Error 1"),
])
def test_error_signatures(output, failed, expected):
    assert observe.error_signature(output, failed=failed) == expected


@pytest.mark.parametrize("output, failed, viewer, test_run", [
    ("all good\n3 files changed", False, False, False),
    ("fatal: only counts when the command failed", False, False, False),  # weak signature, exit 0
    ("src/a.py:12: error: found by grep", False, True, False),  # content shown by a viewer
    ("out\nerr", True, False, False),  # non-zero exit, nothing that reads like an error
    ("E       AssertionError: assert 10 == 9\n1 failed in 0.1s", True, False, True),  # a failing test is a result
])
def test_no_error_signature(output, failed, viewer, test_run):
    assert observe.error_signature(output, failed=failed, viewer=viewer, test_run=test_run) is None


@pytest.mark.parametrize("command, viewer", [
    ("cat build.log", True), ("cd src && grep -rn 'error:' .", True), ("git log -p", True), ("rg fatal", True),
    ("pytest", False), ("git commit -m x", False), ("cd web && npm run build", False), ("make 2>&1 | tail", False),
])
def test_viewers(command, viewer):
    assert observe.is_viewer(command) is viewer


def test_signature_key_ignores_paths_line_numbers_hex_and_numbers():
    a = observe.signature_key('File "/home/a/proj/app.py", line 12: KeyError at 0x7ffd1234 after 3 tries')
    b = observe.signature_key('File "/srv/b/app.py", line 97: KeyError at 0x55aa9 after 10 tries')
    c = observe.signature_key("ModuleNotFoundError: No module named 'requests_mock'")
    d = observe.signature_key("ModuleNotFoundError: No module named 'httpx'")
    assert a == b and c != d and a.startswith("bugfix.sig:")


@pytest.mark.parametrize("command, expected", [
    ("pytest", ("pytest", [])),
    ("uv run pytest tests/test_api.py::test_refund -k 'refund and not slow' -x 2>&1 | tail -30",
     ("pytest", ["tests/test_api.py::test_refund"])),
    ("python3 -m pytest -q tests/", ("pytest", ["tests/"])),
    ("cd web && npx vitest run src/cart.test.ts", ("vitest", ["src/cart.test.ts"])),
    ("npx jest --runInBand", ("jest", [])),
    ("npm test", ("npm test", [])),
    ("go test ./pkg/... -run TestRefund -count=1", ("go test", ["./pkg/..."])),
    ("cargo test refund", ("cargo test", ["refund"])),
    ("CI=1 timeout 300 pytest tests/test_a.py", ("pytest", ["tests/test_a.py"])),
])
def test_test_commands(command, expected):
    assert observe.test_command(command) == expected


@pytest.mark.parametrize("command", ["ls tests", "cat pytest.ini", "git log", "echo pytest", "make build"])
def test_not_test_commands(command):
    assert observe.test_command(command) is None


def test_test_outcomes():
    assert observe.test_outcome("pytest", PYTEST_FAIL, failed=True, piped=False) == {
        "status": "failed", "summary": "1 failed, 2 passed", "failing": ["tests/test_api.py::test_refund"]}
    assert observe.test_outcome("pytest", PYTEST_FAIL, failed=False, piped=True)["status"] == "failed"
    assert observe.test_outcome("pytest", PYTEST_PASS, failed=False, piped=False)["status"] == "passed"
    # every test passed, yet the command failed (a coverage threshold): failed, and the summary says why
    jest = "PASS api/session.spec.ts\nTests:       62 passed, 62 total\nJest: coverage threshold not met"
    assert observe.test_outcome("npm test", "Exit code 1\n" + jest, failed=True, piped=False) == {
        "status": "failed", "summary": "62 passed, 62 total; exit code 1", "failing": []}
    assert observe.test_outcome("pytest", "collected 0 items\n\n==== no tests ran in 0.01s ====", failed=True,
                                piped=False)["status"] == "no tests"
    assert observe.test_outcome("pytest", "....", failed=False, piped=True) is None  # `| head`: unknowable
    jest = "FAIL src/cart.test.js\n  ● cart › adds\n\nTests:       1 failed, 3 passed, 4 total\n"
    assert observe.test_outcome("jest", jest, failed=True, piped=False) == {
        "status": "failed", "summary": "1 failed, 3 passed, 4 total", "failing": ["src/cart.test.js"]}
    vitest = " ✓ src/a.test.ts (2)\n Test Files  1 passed (1)\n      Tests  2 passed (2)\n"
    assert observe.test_outcome("vitest", vitest, failed=False, piped=False)["summary"] == "2 passed (2)"
    go = "--- FAIL: TestRefund (0.00s)\nFAIL\nFAIL\texample.com/shop/pay\t0.01s\nok  \texample.com/shop/cart\t0.02s\n"
    assert observe.test_outcome("go test", go, failed=True, piped=False) == {
        "status": "failed", "summary": "1 packages ok, 1 failed", "failing": ["TestRefund"]}
    cargo = "test tests::refund ... FAILED\ntest tests::cart ... ok\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored"
    assert observe.test_outcome("cargo test", cargo, failed=True, piped=False)["failing"] == ["tests::refund"]


def test_git_events_need_confirming_output():
    commit = observe.git_events('git add -A && git commit -m "Refunds: ledger client"',
                                "[feat/refunds 1a2b3c4] Refunds: ledger client\n 2 files changed, 30 insertions(+)")
    assert commit == [{"kind": "commit", "sha": "1a2b3c4", "branch": "feat/refunds", "message": "Refunds: ledger client"}]
    assert observe.git_events("git checkout -b feat/x", "Switched to a new branch 'feat/x'") == [
        {"kind": "branch", "branch": "feat/x"}]
    assert observe.git_events("git checkout app.py", "Updated 1 path from the index") == []  # a file, not a branch
    assert observe.git_events("git commit -m x", "nothing to commit, working tree clean") == []
    pr = observe.git_events('gh pr create --title "Refunds" --body "..."', "https://github.com/acme/shop/pull/42\n")
    assert pr == [{"kind": "pr", "url": "https://github.com/acme/shop/pull/42", "title": "Refunds"}]


def test_merge_meta_merges_and_caps():
    meta = {"commits": [{"sha": "a" * 7, "branch": "main", "message": "m", "at": "t"}], "custom": 1}
    out = observe.merge_meta(meta, [{"kind": "commit", "sha": "a" * 7, "branch": "main", "message": "m"},
                                    {"kind": "branch", "branch": "dev"}], "t2")
    assert len(out["commits"]) == 1 and out["branch"] == "dev" and out["branches"] == ["dev"] and out["custom"] == 1
    many = [{"kind": "commit", "sha": f"{i:07x}", "branch": "b", "message": "m"} for i in range(80)]
    assert len(observe.merge_meta({}, many, "t")["commits"]) == observe.MAX_META_ITEMS


# ---------------------------------------------------------------------------------------
# The hook as a process
# ---------------------------------------------------------------------------------------


def file_nodes(project_id: str) -> dict[str, str]:
    return {r["name"]: r["id"] for r in rows("SELECT id, name FROM nodes WHERE project_id = ? AND kind = 'file'",
                                             project_id)}


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit", "NotebookEdit"])
def test_file_tools_become_file_nodes_observed_in_the_session(home, repo, proj, tool):
    (repo / "src").mkdir()
    name = "src/notebook.ipynb" if tool == "NotebookEdit" else "src/app.py"
    run_ok(write_payload(repo, name, tool=tool), home)
    nodes = file_nodes(proj.id)
    assert list(nodes) == [name]
    edge = rows("SELECT * FROM edges WHERE from_id = ? AND rel_type = 'observed_in'", nodes[name])
    assert [(e["to_id"], e["weight"]) for e in edge] == [("sess-1", 1.0)]
    assert rows("SELECT project_id FROM sessions WHERE session_id = 'sess-1'") == [{"project_id": proj.id}]


def test_repeated_edits_add_weight_and_other_sessions_get_their_own_edge(home, repo, proj):
    for session in ("sess-1", "sess-1", "sess-1", "sess-2"):
        run_ok(write_payload(repo, "app.py", session=session, tool="Edit"), home)
    node = file_nodes(proj.id)["app.py"]
    got = {r["to_id"]: r["weight"] for r in rows("SELECT to_id, weight FROM edges WHERE from_id = ?", node)}
    assert got == {"sess-1": 3.0, "sess-2": 1.0}


def test_paths_are_relative_to_the_project_root_from_a_subdirectory(home, repo, proj):
    sub = repo / "pkg" / "inner"
    sub.mkdir(parents=True)
    payload = write_payload(repo, str(sub / "mod.py"))
    payload["cwd"] = str(sub)
    run_ok(payload, home)
    assert list(file_nodes(proj.id)) == ["pkg/inner/mod.py"]


@pytest.mark.parametrize("path", ["/etc/hosts", "/tmp/scratch.py", ".git/config"])
def test_files_outside_the_project_or_in_git_are_not_recorded(home, repo, proj, path):
    run_ok(write_payload(repo, path), home)
    assert file_nodes(proj.id) == {}


def test_error_becomes_bugfix_stub_and_repeats_reinforce(home, repo, proj):
    out = PYTEST_COLLECTION_ERROR.format(root=repo)
    run_ok(bash_failed(repo, "pytest tests/", out, code=2), home)
    other_path = out.replace(str(repo), "/ci/build/7").replace("0.08s", "0.31s")
    run_ok(bash_failed(repo, "python -m pytest -x tests/", other_path, code=2, session="sess-2"), home)
    bugs = rows("SELECT * FROM records WHERE type = 'bugfix'")
    assert len(bugs) == 1, bugs
    bug = bugs[0]
    assert bug["title"] == "ModuleNotFoundError: No module named 'requests_mock' (in `pytest tests/`)"
    assert bug["body"] == "" and bug["source"] == "hook_observation" and bug["confidence"] == "inferred"
    assert bug["key"].startswith("bugfix.sig:") and bug["reinforce_count"] == 1 and bug["superseded_at"] is None
    linked = rows("SELECT n.name FROM record_entities re JOIN nodes n ON n.id = re.entity_id WHERE re.record_id = ?",
                  bug["id"])
    assert {"name": "tests/test_api.py"} in linked


def test_a_different_error_is_a_different_stub(home, repo, proj):
    run_ok(bash_failed(repo, "python app.py", "Traceback (most recent call last):\n  File \"app.py\", line 3\n"
                                             "KeyError: 'currency'"), home)
    run_ok(bash_failed(repo, "python app.py", "Traceback (most recent call last):\n  File \"app.py\", line 3\n"
                                             "TypeError: unsupported operand type(s)"), home)
    assert len(rows("SELECT id FROM records WHERE type = 'bugfix' AND superseded_at IS NULL")) == 2


def test_quiet_commands_touch_nothing(home, repo, proj):
    run_ok(bash_ok(repo, "ls -la", "total 0\n"), home)
    run_ok(bash_ok(repo, 'grep -rn "error:" src/', "src/a.py:3: error: boom\nsrc/b.py:9: fatal: x"), home)
    run_ok(bash_failed(repo, "grep -q needle hay.txt", ""), home)
    assert rows("SELECT COUNT(*) AS n FROM records")[0]["n"] == 0
    assert rows("SELECT COUNT(*) AS n FROM sessions")[0]["n"] == 0


def test_test_runs_record_pass_fail_linked_to_test_files_latest_supersedes(home, repo, proj):
    (repo / "tests").mkdir()
    (repo / "tests" / "test_api.py").write_text("def test_refund(): ...\n")
    run_ok(bash_failed(repo, "pytest tests/test_api.py", PYTEST_FAIL), home)
    run_ok(bash_ok(repo, "pytest tests/test_api.py", PYTEST_PASS), home)
    run_ok(bash_ok(repo, "pytest tests/test_api.py", PYTEST_PASS), home)  # same result again: reinforces
    recs = rows("SELECT * FROM records WHERE key = 'test.pytest:tests/test_api.py' ORDER BY recorded_at")
    assert [r["title"] for r in recs] == [
        "Tests failed: `pytest tests/test_api.py` (1 failed, 2 passed)",
        "Tests passed: `pytest tests/test_api.py` (3 passed)",
    ]
    assert recs[0]["body"] == "Failing: tests/test_api.py::test_refund"
    assert recs[0]["superseded_by"] == recs[1]["id"] and recs[1]["superseded_at"] is None
    assert recs[1]["reinforce_count"] == 1 and recs[1]["type"] == "discovery"
    for rec in recs:
        linked = rows("SELECT n.name, n.kind FROM record_entities re JOIN nodes n ON n.id = re.entity_id "
                      "WHERE re.record_id = ?", rec["id"])
        assert linked == [{"name": "tests/test_api.py", "kind": "file"}]
    assert rows("SELECT COUNT(*) AS n FROM records WHERE type = 'bugfix'")[0]["n"] == 0  # assertions are results


def test_git_operations_merge_into_session_meta(home, repo, proj):
    run_ok(bash_ok(repo, "git checkout -b feat/refunds", stderr="Switched to a new branch 'feat/refunds'"), home)
    run_ok(bash_ok(repo, 'git commit -am "Refunds via ledger"', "[feat/refunds 9f8e7d6] Refunds via ledger\n"
                                                                  " 1 file changed"), home)
    run_ok(bash_ok(repo, 'gh pr create --title "Refunds" --body x', "https://github.com/acme/widgets/pull/7\n"), home)
    run_ok(bash_ok(repo, "git switch main", stderr="Switched to branch 'main'"), home)
    meta = json.loads(rows("SELECT meta FROM sessions WHERE session_id = 'sess-1'")[0]["meta"])
    assert meta["branch"] == "main" and meta["branches"] == ["feat/refunds", "main"]
    assert [(c["sha"], c["branch"], c["message"]) for c in meta["commits"]] == [
        ("9f8e7d6", "feat/refunds", "Refunds via ledger")]
    assert [(p["url"], p["title"]) for p in meta["prs"]] == [("https://github.com/acme/widgets/pull/7", "Refunds")]


def test_meta_written_by_others_is_kept(home, repo, proj):
    conn = store()
    conn.execute("INSERT INTO sessions (session_id, project_id, started_at, meta) VALUES ('sess-1', ?, 'x', ?)",
                 (proj.id, json.dumps({"extraction": {"runs": 2}})))
    conn.close()
    run_ok(bash_ok(repo, "git switch main", stderr="Switched to branch 'main'"), home)
    meta = json.loads(rows("SELECT meta FROM sessions WHERE session_id = 'sess-1'")[0]["meta"])
    assert meta == {"extraction": {"runs": 2}, "branch": "main", "branches": ["main"]}


SECRETS = {
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "aws": "AKIA" + "IOSFODNN7EXAMPLQ",
    "password": "hunter2-correct-horse",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
}


def test_secrets_in_bash_output_and_commands_are_never_stored(home, repo, proj):
    s = SECRETS
    run_ok(bash_failed(repo, f"curl -H 'Authorization: Bearer {s['github']}' https://api.example.com",
                       f"Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                       f"PermissionError: denied for token={s['github']} key {s['aws']}"), home)
    run_ok(bash_failed(repo, f"DB_PASSWORD={s['password']} pytest tests/",
                       f"FAILED tests/test_db.py::test_login - password={s['password']}\n"
                       f"==== 1 failed in 0.1s ====\nE   ConnectionError: login {s['stripe']}"), home)
    run_ok(bash_ok(repo, f'git commit -m "rotate {s["stripe"]}"', f"[main abc1234] rotate {s['stripe']}\n"), home)
    run_ok(write_payload(repo, f"src/password={s['password']}.py"), home)
    assert rows("SELECT COUNT(*) AS n FROM records")[0]["n"] >= 2  # stored, but redacted
    conn = sqlite3.connect(paths.db_path())
    dump = "\n".join(conn.iterdump())
    conn.close()
    for name, secret in s.items():
        assert secret not in dump, name
    assert "[REDACTED:" in dump


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1,2]", b'{"tool_name": "Bash"}',
                                   b'{"tool_name": "Write", "tool_input": "x", "cwd": "/nonexistent"}',
                                   b'{"tool_name": "Bash", "tool_input": {"command": 5}, "tool_response": []}'])
def test_bad_payloads_fail_open_silently(home, stdin):
    proc = run_hook("post_tool_use", stdin, home)
    assert proc.returncode == 0 and proc.stdout == b""


def test_many_concurrent_writers_lose_nothing(home, repo, proj):
    """32 hook processes at once: 24 distinct file writes and 8 identical errors."""
    traceback = "Traceback (most recent call last):\n  File \"a.py\", line 2\nRuntimeError: pool exhausted"
    payloads = [write_payload(repo, f"src/mod_{i:02d}.py", session=f"par-{i % 4}") for i in range(24)]
    payloads += [bash_failed(repo, "python a.py", traceback, session=f"par-{i}") for i in range(8)]
    with ThreadPoolExecutor(max_workers=32) as pool:
        procs = list(pool.map(lambda p: run_hook("post_tool_use", p, home), payloads))
    assert all(p.returncode == 0 and p.stdout == b"" for p in procs)
    assert len([n for n in file_nodes(proj.id) if n.startswith("src/mod_")]) == 24
    assert rows("SELECT COUNT(*) AS n FROM edges WHERE rel_type = 'observed_in'")[0]["n"] == 24
    bugs = rows("SELECT reinforce_count FROM records WHERE type = 'bugfix'")
    assert bugs == [{"reinforce_count": 7}]
    log = Path(paths.sub("logs", "agentctx.log"))
    assert not log.exists(), log.read_text()


def test_capture_modules_import_only_the_standard_library():
    """The PostToolUse / PreCompact path, including the lazily imported store modules."""
    code = (
        "import agentctx.capture.observe as o, agentctx.capture.handover, agentctx.capture.handover, agentctx.spawn, agentctx.hookio\n"
        "o.error_signature('Traceback (most recent call last):\\nKeyError: 1', failed=True)\n"
        "o.test_outcome('pytest', '1 passed in 0.1s', failed=False, piped=False); o.git_events('git commit', '')\n"
        "o.signature_key('x'); o.redact('x')\n"
        "import agentctx.store.db, agentctx.store.graph, agentctx.project, agentctx.store.records, agentctx.capture.transcript\n"
    )
    assert heavy_modules_loaded(code, extra=frozenset({"subprocess", "hashlib"})) == []


def test_manifest_declares_the_capture_hooks():
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    post, cd = hooks["PostToolUse"]
    assert set(post["matcher"].split("|")) == {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}
    assert post["hooks"][0]["async"] is True and post["hooks"][0]["command"].endswith(" post_tool_use")
    # a Bash cd / pushd: the session's folder is stored before the next tool call (capture/cwd_changed.py)
    assert cd["matcher"] == "Bash" and [h["if"] for h in cd["hooks"]] == ["Bash(cd *)", "Bash(pushd *)"]
    assert all(not h.get("async") and h["command"].endswith(" cwd_changed") for h in cd["hooks"])
    (failure,) = hooks["PostToolUseFailure"]  # a Bash command that exits non-zero arrives here
    assert failure["matcher"] == "Bash" and failure["hooks"][0]["async"] is True
    (pre,) = hooks["PreCompact"]
    assert not pre["hooks"][0].get("async") and pre["hooks"][0]["command"].endswith(" pre_compact")


# -- issue 19: observations that are signal ------------------------------------------------------


@pytest.mark.parametrize("command, expected", [
    ("make test", ("make test", [])),
    ("bin/rails test test/models/user_test.rb", ("rails test", ["test/models/user_test.rb"])),
    ("bundle exec rspec spec/models --format documentation", ("rspec", ["spec/models"])),
    ("pnpm test -- --watch=false", ("pnpm test", [])),
    ("yarn test", ("yarn test", [])),
    ("bun test", ("bun test", [])),
    ("./gradlew test", ("gradle test", [])),
    ("mvn -q test", ("mvn test", [])),
    ("dotnet test MyApp.Tests", ("dotnet test", ["MyApp.Tests"])),
    ("docker run --rm -v $PWD:/app -w /app node:20 npx vitest run src/a.test.ts", ("vitest", ["src/a.test.ts"])),
    ("docker compose exec web pytest -q tests/", ("pytest", ["tests/"])),
    ("npx vitest run --reporter=verbose 2>&1 | tail -20", ("vitest", [])),
])
def test_more_runners_and_wrappers(command, expected):
    assert observe.test_command(command) == expected


def test_one_record_per_runner_and_target_whatever_the_flags_and_wrappers(home, repo, proj):
    out = " Test Files  1 passed (1)\n      Tests  12 passed (12)\n"
    for cmd in ("npx vitest run", "npx vitest run --reporter=verbose 2>&1 | tail -20",
                "docker run --rm -v $PWD:/app node:20 npx vitest run"):
        run_ok(bash_ok(repo, cmd, out), home)
    recs = rows("SELECT title FROM records WHERE type = 'discovery' AND superseded_at IS NULL")
    assert [r["title"] for r in recs] == ["Tests passed: `vitest` (12 passed (12))"]  # no command line in the title


def test_a_later_success_of_the_same_command_retires_its_bugfix_stub(home, repo, proj):
    failing = "Collecting leftpad\nERROR: No matching distribution found for leftpad==9.9"
    run_ok(bash_failed(repo, "pip install leftpad==9.9", failing), home)
    assert rows("SELECT id FROM records WHERE type = 'bugfix' AND superseded_at IS NULL")
    run_ok(bash_ok(repo, "ls"), home)  # another command: the stub stays
    assert rows("SELECT id FROM records WHERE type = 'bugfix' AND superseded_at IS NULL")
    run_ok(bash_ok(repo, "cd . && pip install leftpad==9.9 2>&1 | tail -3", "Successfully installed leftpad"), home)
    assert rows("SELECT id FROM records WHERE type = 'bugfix' AND superseded_at IS NULL") == []
    assert len(rows("SELECT id FROM records WHERE type = 'bugfix'")) == 1  # history keeps it


def test_make_test_failure_is_a_test_result_not_a_bugfix(home, repo, proj):
    out = "python -m unittest\n.F\nFAIL: test_x (t.T)\nRan 2 tests in 0.01s\n\nFAILED (failures=1)\nmake: *** [test] Error 1"
    run_ok(bash_failed(repo, "make test", out, code=2), home)
    assert rows("SELECT id FROM records WHERE type = 'bugfix'") == []
    [rec] = rows("SELECT title FROM records WHERE type = 'discovery'")
    assert rec["title"].startswith("Tests failed: `make test` (2 tests, 1 failed)")


def test_quiet_git_commit_is_read_back_from_git(home, repo, proj, tmp_path):
    import subprocess

    work = tmp_path / "real"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "a.txt").write_text("a")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "Add a"], check=True)
    run_ok(bash_ok(work, "git commit -q -m 'Add a'", ""), home)
    meta = json.loads(rows("SELECT meta FROM sessions WHERE session_id = 'sess-1'")[0]["meta"])
    assert [(c["branch"], c["message"]) for c in meta["commits"]] == [("main", "Add a")]


def test_home_paths_are_stored_as_tilde(home, repo, proj):
    where = Path.home() / "src" / "app" / "main.py"
    run_ok(bash_failed(repo, f"python {where}", f"Traceback (most recent call last):\n  File \"{where}\", line 1\n"
                                                "NameError: name 'x' is not defined"), home)
    [rec] = rows("SELECT title FROM records WHERE type = 'bugfix'")
    assert str(Path.home()) not in rec["title"] and "~/src/app/main.py" in rec["title"]
