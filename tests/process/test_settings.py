"""One precedence for every setting and every reader (``agentctx.settings``): the repository's
.agentctx/config.toml, then the plugin option (CLAUDE_PLUGIN_OPTION_<KEY> in a hook, Claude Code's
settings.json elsewhere), then config.json (``agentctx config``), then the default. Checked through the
real CLI process, real hook processes and the pinned Claude Code CLI (``--config`` at install)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx import project, settings
from agentctx.store import db, records
from tests.conftest import make_repo
from tests.support import fake_api
from tests.support.bundle import plugin_env
from tests.support.claude_cli import claude_plugin, run_claude
from tests.support.cli import agentctx
from tests.support.hooks import context_of, hook_env, run_hook
from tests.support.imports import heavy_modules_loaded

ROOT = Path(__file__).resolve().parents[2]


def claude_settings(folder: Path, options: dict, plugin_id: str = "agentctx@agentctx") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "settings.json"
    path.write_text(json.dumps({"enabledPlugins": {plugin_id: True},
                                "pluginConfigs": {plugin_id: {"options": options}}}))
    return path


def shown(home: Path, repo: Path, **env: str) -> dict:
    run = agentctx(home, "config", "--show", "--json", cwd=repo, **env)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout)


def test_each_layer_wins_over_the_next_in_the_cli_process(tmp_path, repo, home):
    claude_dir = tmp_path / "claude"
    env = {"CLAUDE_CONFIG_DIR": str(claude_dir)}
    out = shown(home, repo, **env)["settings"]
    assert {k: v["source"] for k, v in out.items()} == {s.key: "default" for s in settings.SETTINGS}
    assert out["daily_cap_usd"]["value"] == 2.0 and out["ui_port"]["value"] == 7327

    # user config, written by the CLI itself
    run = agentctx(home, "config", "--daily-cap", "3", "--digest", "handover=off", "--ui-port", "7400",
                   "--no-embeddings", cwd=repo, **env)
    assert run.returncode == 0, run.stderr
    out = shown(home, repo, **env)["settings"]
    assert out["daily_cap_usd"] == {"value": 3.0, "source": "user", "where": str(home / "config.json")}
    assert out["digest_handover"]["value"] is False and out["embeddings"]["value"] is False
    assert out["ui_port"]["value"] == 7400

    # the plugin option as Claude Code keeps it (a terminal has no CLAUDE_PLUGIN_OPTION_*)
    path = claude_settings(claude_dir, {"daily_cap_usd": 4, "digest_handover": True})
    out = shown(home, repo, **env)["settings"]
    assert out["daily_cap_usd"] == {"value": 4.0, "source": "plugin", "where": str(path)}
    assert out["digest_handover"]["value"] is True and out["embeddings"]["source"] == "user"
    run = agentctx(home, "config", "--daily-cap", "3.5", cwd=repo, **env)  # saved, but the option decides
    assert "daily_cap_usd saved to" in run.stdout and "plugin layer" in run.stdout

    # the plugin option as a hook's environment has it wins over the file; a bad value falls through
    out = shown(home, repo, CLAUDE_PLUGIN_OPTION_DAILY_CAP_USD="5", **env)["settings"]
    assert out["daily_cap_usd"] == {"value": 5.0, "source": "plugin", "where": "CLAUDE_PLUGIN_OPTION_DAILY_CAP_USD"}
    bad = shown(home, repo, CLAUDE_PLUGIN_OPTION_DAILY_CAP_USD="lots", **env)
    assert bad["settings"]["daily_cap_usd"]["value"] == 3.5  # the next layer: the user config
    assert any("daily_cap_usd" in n and "lots" in n for n in bad["notes"])

    # the repository's file wins over all of them, for what a repository may set
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "config.toml").write_text("[digest]\nhandover = false\n")
    out = shown(home, repo, **env)["settings"]
    assert out["digest_handover"] == {"value": False, "source": "project",
                                      "where": str(repo / ".agentctx" / "config.toml")}
    text = agentctx(home, "config", cwd=repo, **env).stdout
    assert "digest_handover: off  (project: " in text and f"daily_cap_usd: $4.00  (plugin: {path})" in text


def test_invalid_values_are_refused_when_saved(home, repo):
    for args, message in ((("--digest", "sidebar=off"), "SECTION=on|off"), (("--ui-port", "0"), "0")):
        run = agentctx(home, "config", *args, cwd=repo)
        assert run.returncode != 0 and message in run.stderr
    with pytest.raises(ValueError, match="unknown setting"):
        settings.save_user(colour=True)
    with pytest.raises(ValueError, match="port"):
        settings.save_user(ui_port=70000)
    assert settings.save_user(ui_port="7400") == {"ui_port": 7400}  # strings are what an environment holds


def test_a_hook_process_reads_the_same_precedence(repo, home, tmp_path):
    conn = db.connect()
    proj = project.detect(str(repo))
    dec = records.add(conn, proj.id, type="decision", title="Internal services use gRPC", body="")
    conn.close()
    start = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    base = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert dec["id"] in context_of(run_hook("session_start", start, home, env=hook_env(home, **base)))
    settings.save_user(digest_decisions=False)  # user config
    assert dec["id"] not in context_of(run_hook("session_start", start, home, env=hook_env(home, **base)))
    option = hook_env(home, CLAUDE_PLUGIN_OPTION_DIGEST_DECISIONS="true", **base)  # the plugin option wins
    assert dec["id"] in context_of(run_hook("session_start", start, home, env=option))
    (repo / ".agentctx").mkdir()
    (repo / ".agentctx" / "config.toml").write_text("[digest]\ndecisions = false\n")  # the project file wins
    assert dec["id"] not in context_of(run_hook("session_start", start, home, env=option))


def test_the_hot_path_reads_settings_with_the_standard_library(repo, home):
    code = f"from agentctx import settings\nsettings.load({str(repo)!r})"
    assert heavy_modules_loaded(code) == []


def test_the_manifest_options_are_the_settings_table():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["userConfig"] == settings.manifest_options()
    assert set(manifest["userConfig"]) == {s.key for s in settings.SETTINGS}
    assert not any("default" in o or o.get("sensitive") for o in manifest["userConfig"].values())
    from tests.support.claude_cli import CLAUDE_CODE_VERSION

    assert manifest["engines"]["claude-code"] == f">={CLAUDE_CODE_VERSION}"  # the version the suite runs


@pytest.mark.claude
def test_an_option_set_at_install_reaches_hooks_and_the_cli(claude, bundle, tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("AGENTCTX_HOME", str(data))
    work = make_repo(tmp_path / "shop")
    home = tmp_path / "home"
    conn = db.connect()
    proj = project.detect(str(work))
    records.add(conn, proj.id, type="decision", title="Background jobs run on Celery with Redis", body="")
    records.add(conn, proj.id, type="profile", key="profile.test_command", title="Test command", body="make test")
    conn.close()
    assert claude_plugin(home, "marketplace", "add", str(bundle)).returncode == 0
    installed = claude_plugin(home, "install", "agentctx@agentctx", "--config", "digest_decisions=false", "--json")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    stored = json.loads((home / ".claude" / "settings.json").read_text())
    assert stored["pluginConfigs"]["agentctx@agentctx"]["options"] == {"digest_decisions": False}

    def seen() -> str:
        with fake_api.FakeMessagesAPI() as api:
            api.enqueue(fake_api.text("Noted."))
            run_claude(work, home, "What runs the background jobs?", base_url=api.base_url,
                       extra_env=plugin_env(data)).check()
            text = "\n".join(t for r in api.message_requests for t in api.all_text(r))
        start = text.index("SessionStart hook additional context")
        return text[start:text.index("</agentctx-context>", start)]  # the SessionStart digest alone

    text = seen()
    assert "make test" in text and "Celery with Redis" not in text  # the hook saw the option
    out = shown(data, work, CLAUDE_CONFIG_DIR=str(home / ".claude"))["settings"]["digest_decisions"]
    assert out == {"value": False, "source": "plugin", "where": str(home / ".claude" / "settings.json")}
    (work / ".agentctx").mkdir()
    (work / ".agentctx" / "config.toml").write_text("[digest]\ndecisions = true\n")
    assert "Celery with Redis" in seen()  # the repository's file wins over the option
