"""Every setting, where it can be set, and the one precedence rule. Stdlib only (the hooks read it).

For each setting the first layer that holds a valid value wins, for every reader alike (hooks, the MCP
server, the CLI, the dashboard):

1. ``project``: the repository's ``.agentctx/config.toml`` (``project_settings``), for the settings a
   repository may choose: the digest sections (``[digest] handover = false``). A cloned repository cannot
   turn model calls on, raise a spending cap or pick a port.
2. ``plugin``: the plugin option (``userConfig`` in ``.claude-plugin/plugin.json``, set in Claude Code's
   ``/plugin`` dialog, ``claude plugin install --config KEY=VALUE`` or ``claude plugin configure``). Claude
   Code exports the options that are set to hooks as ``CLAUDE_PLUGIN_OPTION_<KEY>``; a process without it
   (the CLI in a terminal, the MCP server) reads the same values where Claude Code keeps them:
   ``pluginConfigs["agentctx@<marketplace>"].options`` in ``$CLAUDE_CONFIG_DIR/settings.json``
   (``~/.claude/settings.json``). An option left unset is absent from both, so the next layer answers.
3. ``user``: ``<data dir>/config.json``, written by ``agentctx config``.
4. ``default``: the table below.

A value of the wrong type at a layer is skipped, with a note, and the next layer answers. The plugin
manifest's ``userConfig`` is this table's image (``tests`` compare them). ``capture.enabled`` and
``capture.exclude`` exist only in the project file (``project_settings``): there is no other layer to rank.
"""

from __future__ import annotations

import json
import os

from agentctx import paths
from agentctx.kinds import DIGEST_SECTIONS as SECTIONS

OPTION_ENV = "CLAUDE_PLUGIN_OPTION_"
LAYERS = ("project", "plugin", "user", "default")


class Setting:
    """One setting: its key (also the plugin option's key and the config.json key), its kind (``bool``,
    ``usd``: US dollars >= 0, ``port``: 1-65535), default, the manifest's title and description, and the
    ``(table, key)`` it has in the project file, if a repository may set it."""

    __slots__ = ("key", "kind", "default", "title", "description", "project")

    def __init__(self, key: str, kind: str, default: bool | float | int, title: str, description: str,
                 project: tuple[str, str] | None = None):
        self.key, self.kind, self.default = key, kind, default
        self.title, self.description, self.project = title, description, project


SETTINGS: tuple[Setting, ...] = (
    Setting("llm", "bool", True, "Extract with the Anthropic API",
            "At the end of a turn, extract decisions and preferences from the transcript with Claude Haiku when "
            "ANTHROPIC_API_KEY is set. Off: only your explicit statements are kept."),
    Setting("claude_login", "bool", True, "Extract through your Claude Code login",
            "Without ANTHROPIC_API_KEY, extract by running claude -p with your own login when a logged-in claude "
            "is found (counts against your plan)."),
    Setting("daily_cap_usd", "usd", 2.0, "Daily spending cap (USD)",
            "Model calls (extraction, rollup) pause for the rest of the UTC day once they cost this much, all "
            "projects together, at Haiku prices. 0 allows none."),
    Setting("session_cap_usd", "usd", 0.5, "Per-session spending cap (USD)",
            "Model calls pause for the rest of a session once it cost this much. 0 allows none."),
    Setting("embeddings", "bool", True, "Local embeddings",
            "Compute local embeddings at session end for near-duplicate merging and hybrid search. Off: "
            "search uses SQLite full-text search alone."),
    Setting("ui_port", "port", 7327, "Dashboard port",
            "The port agentctx ui tries first on 127.0.0.1 (then the next free one)."),
    *(Setting(f"digest_{name}", "bool", True, f"Session start: {label}",
              f"Inject the {label.lower()} at session start.", ("digest", name))
      for name, label in (("profile", "Project profile"), ("decisions", "Decisions and conventions"),
                          ("handover", "Last session handover"), ("developer", "Developer preferences"))),
)
BY_KEY = {s.key: s for s in SETTINGS}


def coerce(setting: Setting, value: object) -> bool | float | int | None:
    """``value`` as this setting's type, or None when it is not one. Strings are what the environment
    holds (``true``/``false``, numbers as text)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if setting.kind == "bool":
            value = {"true": True, "1": True, "on": True, "false": False, "0": False, "off": False}.get(text)
        else:
            try:
                value = float(text)
            except ValueError:
                return None
    if setting.kind == "bool":
        return value if isinstance(value, bool) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    if setting.kind == "usd":
        return float(value) if 0 <= value < float("inf") else None
    return int(value) if value == int(value) and 1 <= value <= 65535 else None


class Resolved:
    """The settings in force for one place: ``values[key]``, ``sources[key]`` (a layer of ``LAYERS``),
    ``where[key]`` (the file or variable it came from, "" for a default) and ``notes`` (values skipped)."""

    __slots__ = ("values", "sources", "where", "notes")

    def __init__(self) -> None:
        self.values: dict[str, bool | float | int] = {}
        self.sources: dict[str, str] = {}
        self.where: dict[str, str] = {}
        self.notes: list[str] = []

    def __getitem__(self, key: str) -> bool | float | int:
        return self.values[key]

    @property
    def sections(self) -> tuple[str, ...]:
        """The SessionStart digest sections that are on, in digest order."""
        return tuple(name for name in SECTIONS if self.values[f"digest_{name}"])

    def as_dict(self) -> dict:
        return {key: {"value": self.values[key], "source": self.sources[key], "where": self.where[key]}
                for key in self.values}


def user_path() -> str:
    """The user config file (``agentctx config``)."""
    return paths.sub("config.json")


def inputs(root: str | None = None) -> list[str]:
    """The files ``load`` reads for the project at ``root``, found or not (the environment's
    ``OPTION_ENV`` variables aside): what must be unchanged for its answer to stand."""
    files = [user_path(), claude_settings_path()]
    if root:
        from agentctx import project_settings

        files.append(project_settings.file_path(root))
    return files


def claude_settings_path() -> str:
    """Claude Code's user settings file, where it keeps the plugin options that are not sensitive."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "settings.json")


def _read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def plugin_options() -> tuple[dict, str]:
    """(the options Claude Code keeps for this plugin, the file): the enabled ``agentctx@*`` entry first."""
    path = claude_settings_path()
    data = _read_json(path)
    configs, enabled = data.get("pluginConfigs"), data.get("enabledPlugins")
    if not isinstance(configs, dict):
        return {}, path
    ids = sorted((k for k in configs if isinstance(k, str) and k.startswith("agentctx@")),
                 key=lambda k: not (isinstance(enabled, dict) and enabled.get(k) is True))
    for plugin_id in ids:
        entry = configs[plugin_id]
        options = entry.get("options") if isinstance(entry, dict) else None
        if isinstance(options, dict):
            return options, path
    return {}, path


def load(root: str | None = None) -> Resolved:
    """The settings in force for the project at ``root`` (None: outside any project, no project layer)."""
    project_digest: dict[str, bool] = {}
    project_file = ""
    if root:
        from agentctx import project_settings

        proj = project_settings.load(root)
        project_digest, project_file = proj.digest, proj.path or ""
    user = _read_json(user_path())
    options: dict | None = None
    out = Resolved()
    for s in SETTINGS:
        found: list[tuple[str, str, object]] = []
        if s.project and s.project[1] in project_digest:
            found.append(("project", project_file, project_digest[s.project[1]]))
        env = OPTION_ENV + s.key.upper()
        if env in os.environ:
            found.append(("plugin", env, os.environ[env]))
        else:
            if options is None:
                options, options_file = plugin_options()
            if s.key in options:
                found.append(("plugin", options_file, options[s.key]))
        if s.key in user:
            found.append(("user", user_path(), user[s.key]))
        found.append(("default", "", s.default))
        for layer, where, raw in found:
            value = coerce(s, raw)
            if value is None:
                out.notes.append(f"{s.key}: {raw!r} from {where or layer} is not a valid {s.kind}; ignored")
                continue
            out.values[s.key], out.sources[s.key], out.where[s.key] = value, layer, where
            break
    return out


def value(key: str, root: str | None = None) -> bool | float | int:
    """One setting in force (see ``load``)."""
    return load(root)[key]


def save_user(**changes: object) -> dict:
    """Validate ``changes`` and write them to the user config file atomically; return the file's settings.
    ValueError naming the first unknown key or invalid value."""
    clean: dict[str, bool | float | int] = {}
    for key, raw in changes.items():
        setting = BY_KEY.get(key)
        if setting is None:
            raise ValueError(f"unknown setting {key!r}; known: {', '.join(BY_KEY)}")
        coerced = coerce(setting, raw)
        if coerced is None:
            expected = {"bool": "true or false", "usd": "a number of US dollars >= 0",
                        "port": "a port from 1 to 65535"}[setting.kind]
            raise ValueError(f"{key} must be {expected}, not {raw!r}")
        clean[key] = coerced
    current = {k: v for k, v in _read_json(user_path()).items() if k in BY_KEY}
    current.update(clean)
    from agentctx.fsio import write_atomic

    write_atomic(user_path(), json.dumps(current, indent=2, sort_keys=True) + "\n")
    return current


def manifest_options() -> dict:
    """The ``userConfig`` block of ``.claude-plugin/plugin.json`` this table implies (no ``default``: an
    option with one would always be set, hiding ``agentctx config``; the description names the default)."""
    out = {}
    for s in SETTINGS:
        shown = ("on" if s.default else "off") if s.kind == "bool" else s.default
        option: dict = {"type": "boolean" if s.kind == "bool" else "number", "title": s.title,
                        "description": f"{s.description} Default: {shown}."}
        if s.kind == "usd":
            option["min"] = 0
        elif s.kind == "port":
            option.update(min=1, max=65535)
        out[s.key] = option
    return out
