"""Per-project settings in the repository (.agentctx/config.toml): capture off, paths never captured, digest
sections. Hooks run as processes; the hot path pays one stat without a file and a cached parse with one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentctx import project, project_settings, settings
from agentctx.store import db, records
from tests.support.hooks import context_of, run_hook
from tests.support.imports import heavy_modules_loaded


def settings_file(repo: Path, text: str) -> Path:
    (repo / ".agentctx").mkdir(exist_ok=True)
    path = repo / ".agentctx" / "config.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file(repo):
    s = project_settings.load(str(repo))
    assert s.capture is True and s.exclude == () and s.digest == {}
    assert settings.load(str(repo)).sections == ("profile", "decisions", "handover", "developer")
    assert s.path is None and not s.excluded("src/app.py")


def test_parse_and_exclusion_rules(repo, home):
    settings_file(repo, '[capture]\nenabled = false\nexclude = ["secrets/**", "*.pem", "build/", ".env"]\n'
                        '[digest]\nhandover = false\ndeveloper = false\n')
    s = project_settings.load(str(repo))
    assert s.capture is False and s.digest == {"handover": False, "developer": False}
    assert settings.load(str(repo)).sections == ("profile", "decisions")
    for path in ("secrets/prod.env", "secrets/a/b/c.txt", "certs/server.pem", "server.pem", "build/out/x.js", ".env",
                 str(repo / "secrets" / "x"), "./secrets/y"):
        assert s.excluded(path), path
    for path in ("src/secrets.py", "src/app.py", "pem.txt", "rebuild/x", "/elsewhere/secrets/x", ".envrc"):
        assert not s.excluded(path), path
    assert s.mentions_excluded(f'[tool Read: {{"file_path": "{repo}/secrets/prod.env"}}]')
    assert s.mentions_excluded("cat certs/server.pem")
    assert not s.mentions_excluded("edited src/app.py and ran pytest")


@pytest.mark.parametrize("text, problem", [
    ("[capture]\nenabled = 'no'\n", "capture.enabled"),
    ("[capture]\nexclude = 'secrets'\n", "capture.exclude"),
    ("[digest]\nsidebar = false\n", "unknown: sidebar"),
    ("[capture\n", "end of a table declaration"),
])
def test_a_bad_file_counts_as_absent_and_says_why(repo, home, text, problem):
    settings_file(repo, text)
    s = project_settings.load(str(repo))
    assert s.capture is True and s.exclude == () and problem.lower() in s.error.lower()


def test_a_dangling_symlink_is_refused_and_logged_once_not_taken_for_absent(repo, home, tmp_path):
    (repo / ".agentctx").mkdir(exist_ok=True)
    (repo / ".agentctx" / "config.toml").symlink_to(tmp_path / "nowhere" / "config.toml")
    for _ in range(2):
        project_settings._memo.clear()  # each a new process
        s = project_settings.load(str(repo))
        assert s.capture is True and s.exclude == () and "dangling symlink" in s.error
    log = (home / "logs" / "agentctx.log").read_text()
    assert log.count(f"{repo / '.agentctx' / 'config.toml'} ignored: a dangling symlink") == 1


def test_the_parse_is_cached_until_the_file_changes(repo, home, monkeypatch):
    path = settings_file(repo, "[capture]\nenabled = false\n")
    assert project_settings.load(str(repo)).capture is False
    project_settings._memo.clear()  # a new process: the cache file answers without parsing TOML
    monkeypatch.setattr(project_settings, "parse", lambda *a, **k: pytest.fail("parsed again"))
    assert project_settings.load(str(repo)).capture is False
    monkeypatch.undo()
    path.write_text("[capture]\nenabled = true\n# changed\n")
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10_000_000))
    assert project_settings.load(str(repo)).capture is True


def test_the_hot_path_stays_stdlib_and_parses_no_toml_without_a_file(repo):
    code = f"from agentctx import project_settings; project_settings.load({str(repo)!r})"
    assert heavy_modules_loaded(code, frozenset({"tomllib", "tomli"})) == []


def tool_payload(repo: Path, tool: str, tool_input: dict, response: dict, session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": tool_input, "tool_response": response, "transcript_path": "/nonexistent.jsonl"}


def count(sql: str) -> int:
    conn = db.connect()
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def test_capture_off_stores_nothing_from_the_capture_hooks(repo, home):
    settings_file(repo, "[capture]\nenabled = false\n")
    write = tool_payload(repo, "Write", {"file_path": str(repo / "app.py"), "content": "x"},
                         {"filePath": str(repo / "app.py"), "success": True})
    failing = tool_payload(repo, "Bash", {"command": "python app.py"}, {}) | {
        "hook_event_name": "PostToolUseFailure", "error": "Exit code 1\nTraceback (most recent call last):\n"
                                                          "ZeroDivisionError: division by zero"}
    assert run_hook("post_tool_use", write, home).returncode == 0
    assert run_hook("post_tool_use", failing, home).returncode == 0
    assert run_hook("pre_compact", {"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreCompact",
                                    "trigger": "manual", "transcript_path": "/nonexistent.jsonl"}, home).returncode == 0
    assert count("SELECT COUNT(*) FROM nodes") == 0 and count("SELECT COUNT(*) FROM records") == 0
    assert count("SELECT COUNT(*) FROM anchors") == 0
    # with capture on, the same calls are observed (the control)
    settings_file(repo, "[capture]\nenabled = true\n")
    run_hook("post_tool_use", write, home)
    run_hook("post_tool_use", failing, home)
    assert count("SELECT COUNT(*) FROM nodes") == 1 and count("SELECT COUNT(*) FROM records") == 1


def test_excluded_paths_are_never_captured(repo, home):
    settings_file(repo, '[capture]\nexclude = ["secrets/**"]\n')
    (repo / "secrets").mkdir()
    for name in ("secrets/prod.env", "app.py"):
        run_hook("post_tool_use", tool_payload(repo, "Edit", {"file_path": str(repo / name)},
                                               {"filePath": str(repo / name)}), home)
    run_hook("post_tool_use", tool_payload(repo, "Bash", {"command": "python secrets/rotate.py"}, {}) | {
        "hook_event_name": "PostToolUseFailure", "error": "Exit code 1\nKeyError: 'PROD_TOKEN'"}, home)
    conn = db.connect()
    try:
        assert [r[0] for r in conn.execute("SELECT name FROM nodes")] == ["app.py"]
        assert records.count_all(conn) == 0  # the failing command ran an excluded file: nothing kept
    finally:
        conn.close()


def test_digest_sections_can_be_turned_off(repo, home):
    conn = db.connect()
    proj = project.detect(str(repo))
    dec = records.add(conn, proj.id, type="decision", title="Internal services use gRPC", body="")
    hand = records.add(conn, proj.id, type="handover", key="handover.current", title="Refund endpoint half done",
                       body="Next steps:\n1. wire the ledger client")
    conn.close()
    start = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    text = context_of(run_hook("session_start", start, home))
    assert dec["id"] in text and hand["id"] in text
    settings_file(repo, "[digest]\nhandover = false\n")
    text = context_of(run_hook("session_start", start, home))  # the cached digest is not reused across settings
    assert dec["id"] in text and hand["id"] not in text and "## Last session handover" not in text
    settings_file(repo, "[digest]\ndecisions = false\nhandover = false\nprofile = false\ndeveloper = false\n")
    text = context_of(run_hook("session_start", start, home))
    assert dec["id"] not in text and "searchable" in text  # only the one-line hint is left
    out = json.loads(run_hook("session_start", start, home).stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
