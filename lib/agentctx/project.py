"""Which project a directory belongs to, read from ``.git`` without running git.

project_id = sha256 of the normalized ``origin`` remote (else the first remote), so clones
on other machines share an id; with no remote, of the main repository root, so every
worktree of one repository shares it; outside git, of the directory itself. The user's home
is a boundary: a repository at HOME (dotfiles) or above it is never the project of a folder inside it.
"""

from __future__ import annotations

import os

GIT_FILE_LIMIT = 1024 * 1024  # .git/config, HEAD, commondir: a few hundred bytes in practice

try:  # the builtin module: importing hashlib (OpenSSL) costs ~2 ms on every hook run
    from _sha2 import sha256  # Python >= 3.12
except ImportError:
    try:
        from _sha256 import sha256  # Python <= 3.11
    except ImportError:
        from hashlib import sha256


class Project:
    """A project's identity. (A plain class: ``dataclasses`` costs ~13 ms to import.)"""

    __slots__ = ("id", "name", "root", "remote")

    def __init__(self, id: str, name: str, root: str, remote: str | None):
        self.id, self.name, self.root, self.remote = id, name, root, remote

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Project) and (self.id, self.root) == (other.id, other.root)

    def __hash__(self) -> int:
        return hash((self.id, self.root))

    def __repr__(self) -> str:
        return f"Project(id={self.id!r}, name={self.name!r}, root={self.root!r}, remote={self.remote!r})"


def _hash(text: str) -> str:
    return sha256(text.encode("utf-8")).hexdigest()[:16]


def normalize_remote(url: str) -> str:
    """``git@GitHub.com:Org/Repo.git`` and ``https://u:p@github.com/org/repo`` → ``github.com/org/repo``."""
    import re  # here, not at the top: SessionStart's sealed path imports this module for ``working_dir`` only

    url = url.strip()
    scp = re.match(r"^(?:[\w.\-]+@)?([\w.\-]+):(?!//)(.+)$", url)
    if scp and "://" not in url and not re.match(r"^[A-Za-z]:[\\/]", url):
        host, path = scp.group(1), scp.group(2)
    else:
        m = re.match(r"^[A-Za-z][\w+.\-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?(/.*)?$", url)
        if m:
            host, path = m.group(1), m.group(2) or ""
        else:  # a local path remote
            return "path:" + os.path.normcase(os.path.realpath(os.path.expanduser(url)))
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host.lower()}/{path.lower()}".rstrip("/")


def _read(path: str, probes: list[str] | None = None) -> str | None:
    """A git metadata file's text (HEAD, config, commondir, a ``.git`` file): regular and bounded, else None.
    ``probes`` collects the path (see ``detect``)."""
    from agentctx import safefile

    if probes is not None:
        probes.append(path)
    try:
        return safefile.read_text(path, GIT_FILE_LIMIT, binary_ok=True)
    except (OSError, safefile.Refused):
        return None


def _remote_url(config_text: str) -> str | None:
    """``origin``'s url from a git config, else the first remote's."""
    import re

    remotes: dict[str, str] = {}
    current = None
    for line in config_text.splitlines():
        line = line.strip()
        header = re.match(r'^\[remote\s+"(.+)"\]$', line)
        if header:
            current = header.group(1)
            continue
        if line.startswith("["):
            current = None
            continue
        if current and current not in remotes:
            kv = re.match(r"^url\s*=\s*(.+)$", line)
            if kv:
                remotes[current] = kv.group(1).strip().strip('"')
    return remotes.get("origin") or next(iter(remotes.values()), None)


def _home() -> str | None:
    home = os.path.expanduser("~")  # never empty: "~" itself when no home is known
    return os.path.normcase(os.path.realpath(home)) if home != "~" else None


def _git_dirs(start: str, probes: list[str] | None = None) -> tuple[str, str] | None:
    """(work tree root, common git dir) for the repository containing ``start``.

    The user's home is a boundary: a repository at HOME (dotfiles) is the project only of HOME itself,
    and a repository above HOME is nobody's project below it. Otherwise every folder under a dotfiles
    HOME would be one project, and a decision of ~/work/client1 would be injected in ~/work/client2.
    """
    home = _home()
    key = os.path.normcase(start)
    here = start
    while True:
        at_home = os.path.normcase(here) == home  # ``here`` walks up from ``start``: only reached from inside HOME
        if at_home and key != home:
            return None
        dotgit = os.path.join(here, ".git")
        if probes is not None:
            probes.append(dotgit)
        if os.path.isdir(dotgit):
            common = _read(os.path.join(dotgit, "commondir"), probes)
            gitdir = dotgit
            if common:
                gitdir = os.path.normpath(os.path.join(dotgit, common.strip()))
            return here, gitdir
        if os.path.isfile(dotgit):
            import re

            text = _read(dotgit, probes) or ""
            m = re.match(r"^gitdir:\s*(.+)$", text.strip())
            if m:
                gitdir = os.path.normpath(os.path.join(here, m.group(1).strip()))
                common = _read(os.path.join(gitdir, "commondir"), probes)
                if common:
                    gitdir = os.path.normpath(os.path.join(gitdir, common.strip()))
                return here, gitdir
        parent = os.path.dirname(here)
        if parent == here or at_home:
            return None
        here = parent


def working_dir(candidate: str | None = None) -> str:
    """The folder a hook or tool works in: ``candidate`` when it is a folder, else ``CLAUDE_PROJECT_DIR``
    when that is one, else the process's current directory. The one rule for every entry point."""
    for found in (candidate, os.environ.get("CLAUDE_PROJECT_DIR")):
        if found and os.path.isdir(found):
            return found
    return os.getcwd()


def detect(cwd: str | None = None, *, probes: list[str] | None = None) -> Project:
    """The project for ``cwd`` (default: the current directory); see ``_git_dirs`` for HOME. ``probes``, when
    given, collects every path the answer was read from (found or not), for ``injection.ready``'s seal."""
    start = os.path.realpath(cwd or os.getcwd())
    found = _git_dirs(start, probes)
    if found is None:
        return Project(_hash("path:" + os.path.normcase(start)), os.path.basename(start) or start, start, None)
    worktree, common = found
    url = _remote_url(_read(os.path.join(common, "config"), probes) or "")
    if os.path.basename(common) == ".git":
        main_root = os.path.dirname(common)
        main_name = os.path.basename(main_root)
    else:  # a bare repository, --separate-git-dir or a submodule: the shared git dir is the identity
        main_root = common
        main_name = os.path.basename(common).removesuffix(".git") or os.path.basename(worktree)
    if url:
        normalized = normalize_remote(url)
        name = normalized.rstrip("/").rsplit("/", 1)[-1] or main_name
        return Project(_hash(normalized), name, worktree, normalized)
    return Project(_hash("path:" + os.path.normcase(main_root)), main_name, worktree, None)
