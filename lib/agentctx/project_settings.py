"""Per-project settings kept in the repository: ``<project root>/.agentctx/config.toml``.

```toml
[capture]
enabled = false                      # store nothing from this project's sessions
exclude = ["secrets/**", "*.pem"]    # paths never captured

[digest]                             # SessionStart digest sections (all on by default)
handover = false
developer = false
```

* ``capture.enabled = false``: no observations (PostToolUse), no anchor (PreCompact), no extraction
  (Stop / SessionEnd), no subagent conclusions. Injection still works from what is stored.
* ``capture.exclude``: glob patterns, relative to the project root (``**`` and ``*`` cross folders; a
  pattern without ``/`` also matches a file name anywhere; a folder name matches what is inside).
  A matching file is never observed, linked or put in an anchor, and a transcript message that
  names one is not sent to a model or read for statements.
* ``digest.<section>``: ``profile``, ``decisions``, ``handover``, ``developer`` on or off. A section set
  here wins over the plugin option and ``agentctx config`` (``settings`` ranks the layers); one not set
  here is left to them.

Read on the hot path, so: one ``stat`` when there is no file; with a file, its parsed form is
cached (``<cache dir>/project-settings/``, keyed by the file's path, size and mtime) and the TOML is
parsed (``tomlfile.load_toml``: tomllib, or tomli on Python 3.10, with a depth bound) only when the file
changed. A file that cannot be read or parsed (not a regular file inside the repository, over 64 KiB, nested
too deep) counts as absent, with one line in the log (``safefile.report``) and SessionStart's notice. Stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import stat
from fnmatch import fnmatchcase

from agentctx import paths
from agentctx.kinds import DIGEST_SECTIONS as SECTIONS

DIR = ".agentctx"
NAME = "config.toml"
CACHE_VERSION = 2  # 2: ``digest`` holds only the sections the file sets
MAX_BYTES = 64 * 1024
MAX_PATTERNS = 200
_TOKEN = re.compile(r"[^\s\"'`<>()\[\]{},;=]+")
_memo: dict[str, tuple[tuple[int, int], Settings]] = {}


class Settings:
    """One project's file (defaults when it has none); ``digest``: only the sections the file sets."""

    __slots__ = ("root", "capture", "exclude", "digest", "path", "error")

    def __init__(self, root: str, *, capture: bool = True, exclude: tuple[str, ...] = (),
                 digest: dict[str, bool] | None = None, path: str | None = None, error: str = ""):
        self.root, self.capture, self.exclude = root, capture, tuple(exclude)
        self.digest = dict(digest or {})
        self.path, self.error = path, error

    def excluded(self, path: str) -> bool:
        """True when ``path`` (relative to the root, or absolute inside it) matches an exclusion."""
        if not self.exclude or not path:
            return False
        rel = path.replace("\\", "/")
        root = self.root.replace("\\", "/").rstrip("/") + "/"
        if rel.startswith(root):
            rel = rel[len(root):]
        elif os.path.isabs(path):
            return False
        rel = rel.removeprefix("./")
        name = rel.rsplit("/", 1)[-1]
        for pattern in self.exclude:
            pat = pattern.strip().lstrip("/")
            if not pat:
                continue
            folder = pat.rstrip("/").removesuffix("/**")
            if (fnmatchcase(rel, pat) or fnmatchcase(rel, folder + "/*")
                    or ("/" not in pat and fnmatchcase(name, pat))):
                return True
        return False

    def mentions_excluded(self, text: str) -> bool:
        """True when ``text`` names an excluded path (a tool call on it, a path in a message)."""
        if not self.exclude or not text:
            return False
        return any(self.excluded(token.rstrip(".:")) for token in _TOKEN.findall(text)
                   if "/" in token or "." in token or "\\" in token)

    def as_dict(self) -> dict:
        return {"path": self.path, "capture": self.capture, "exclude": list(self.exclude), "digest": self.digest,
                "error": self.error}


def file_path(root: str) -> str:
    return os.path.join(root, DIR, NAME)


def _cache_path(path: str) -> str:
    from agentctx.project import sha256

    return os.path.join(paths.cache_dir(), "project-settings", sha256(path.encode()).hexdigest()[:24] + ".json")


def parse(root: str, text: str, path: str | None = None) -> Settings:
    """Settings from the TOML text; ValueError naming the first problem."""
    from agentctx.tomlfile import load_toml

    data = load_toml(text)
    capture = data.get("capture", {})
    digest = data.get("digest", {})
    if not isinstance(capture, dict) or not isinstance(digest, dict):
        raise ValueError("[capture] and [digest] must be tables")
    enabled = capture.get("enabled", True)
    exclude = capture.get("exclude", [])
    if not isinstance(enabled, bool):
        raise ValueError("capture.enabled must be true or false")
    if not isinstance(exclude, list) or not all(isinstance(p, str) for p in exclude) or len(exclude) > MAX_PATTERNS:
        raise ValueError(f"capture.exclude must be a list of at most {MAX_PATTERNS} glob strings")
    unknown = set(digest) - set(SECTIONS)
    if unknown or not all(isinstance(v, bool) for v in digest.values()):
        raise ValueError(f"[digest] takes {', '.join(SECTIONS)} = true/false"
                         + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else ""))
    return Settings(root, capture=enabled, exclude=tuple(exclude), digest=digest, path=path)


def load(root: str) -> Settings:
    """The settings of the project at ``root`` (see the module docstring for the cost)."""
    path = file_path(root)
    try:
        st = os.lstat(path)  # one call on the hot path, with or without a file
    except OSError:
        return Settings(root)
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError:
            pass  # a dangling symlink is not an absent file: refused below, and logged once
    key = (st.st_size, st.st_mtime_ns)
    memo = _memo.get(path)
    if memo and memo[0] == key:
        return memo[1]
    settings = _cached(root, path, key) or _read(root, path, key)
    _memo[path] = (key, settings)
    return settings


def _cached(root: str, path: str, key: tuple[int, int]) -> Settings | None:
    try:
        with open(_cache_path(path), encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("v") != CACHE_VERSION or tuple(data["key"]) != key or data["path"] != path:
            return None
        s = data["settings"]
        return Settings(root, capture=s["capture"], exclude=tuple(s["exclude"]), digest=s["digest"], path=path,
                        error=s.get("error", ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read(root: str, path: str, key: tuple[int, int]) -> Settings:
    from agentctx import safefile

    try:
        text = safefile.read_text(path, MAX_BYTES, root)
        if text is None:
            raise FileNotFoundError(path)
        settings = parse(root, text, path)
    except (OSError, ValueError, ImportError) as exc:
        reason = exc.reason if isinstance(exc, safefile.Refused) else f"{type(exc).__name__}: {exc}"
        safefile.report(path, reason, "settings")
        settings = Settings(root, path=path, error=reason)
    try:
        from agentctx.fsio import write_json

        write_json(_cache_path(path), {"v": CACHE_VERSION, "path": path, "key": list(key), "settings": settings.as_dict()})
    except OSError:
        pass
    return settings
