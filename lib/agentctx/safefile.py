"""Reading files agentctx does not own (a repository's, a transcript) and writing into a repository, safely.

A cloned repository can commit anything git keeps: a symlink to ``/dev/zero`` or to a file outside the
repository, a dangling symlink, a huge file, TOML or JSON nested thousands of levels deep; a hook payload
can name a FIFO as its transcript. The one set of rules, for every reader:

* only regular files are read: no devices, FIFOs, sockets or folders; a symlink only when its target is a
  regular file inside ``root`` (when a root is given) and exists;
* the file is opened without blocking (a FIFO swapped in after the check never hangs) and checked again on
  the open descriptor; at most ``limit`` bytes are read, a larger file is refused (``read_*``) or read up
  to its bound by the caller (``open_regular``);
* parsed with a nesting bound (``MAX_DEPTH``) checked before the parser runs, so TOML
  (``tomlfile.load_toml``) or JSON (``load_json``) nested 2,000 levels deep is a bad file, not a RecursionError;
* a refused file raises :class:`Refused` (a ValueError); the caller ignores the file and keeps its
  defaults, and :func:`report` writes one log line per file version (not one per hook) and remembers it,
  so SessionStart can say it in one line (:func:`notice`).

Writes into a repository (:func:`writable`) go only to a path that is not a symlink and whose folder
resolves inside the repository. Standard library only: hooks use it.
"""

from __future__ import annotations

import os
import re
import stat

from agentctx import jsonfast, paths

MAX_DEPTH = 100
TEXT_LIMIT = 4 * 1024 * 1024
NOTICE_FILES = 4
_SHA256 = None
# The tokens ``nesting`` counts brackets among, as patterns compiled on first use (``re`` keeps them): the
# prompt hook reads git files through this module and must not pay for them, nor for ``json``.
TOML_TOKENS = r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]'
_JSON_TOKENS = r'"(?:[^"\\]|\\.)*"|[\[\]{}]'
_OPENERS = frozenset("[{")
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class Refused(ValueError):
    """A file agentctx will not read or write; ``reason`` says why in a few words."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _inside(path: str, root: str) -> bool:
    real_root = os.path.realpath(root)
    return os.path.commonpath([real_root, path]) == real_root


def resolve(path: str, root: str | None = None) -> str | None:
    """The real path to read for ``path``; None when nothing is there; Refused for what is never read."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    link = stat.S_ISLNK(st.st_mode)
    target = os.path.realpath(path) if link or root is not None else path
    if link:
        try:
            st = os.stat(target)
        except OSError:
            raise Refused(path, f"a dangling symlink (to {os.readlink(path)})") from None
        if not stat.S_ISREG(st.st_mode):
            raise Refused(path, f"a symlink to {target}, {_kind(st.st_mode)}")
    if root is not None and not _inside(target, root):
        raise Refused(path, f"{'a symlink' if link else 'a path'} to {target}, outside the repository")
    if not stat.S_ISREG(st.st_mode):
        raise Refused(path, f"{_kind(st.st_mode)}, not a regular file")
    return target


def open_regular(path: str, root: str | None = None):
    """A binary file object for ``path`` after :func:`resolve`'s checks (None when absent); Refused otherwise.

    Opened non-blocking and re-checked on the descriptor, so a FIFO or device put in its place between
    the check and the open is refused, never read.
    """
    target = resolve(path, root)
    if target is None:
        return None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(target, flags)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(path, f"{_kind(st.st_mode)}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str, limit: int, root: str | None = None) -> bytes | None:
    """The whole file (None when absent); Refused when it is not safe to read or larger than ``limit``."""
    fh = open_regular(path, root)
    if fh is None:
        return None
    with fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise Refused(path, f"larger than {_size(limit)}")
    return data


def read_text(path: str, limit: int = TEXT_LIMIT, root: str | None = None, *, binary_ok: bool = False) -> str | None:
    """The file as text (UTF-8, a BOM dropped, bad bytes replaced); Refused as :func:`read_bytes`, and for
    NUL bytes (a binary file) unless ``binary_ok``."""
    data = read_bytes(path, limit, root)
    if data is None:
        return None
    if not binary_ok and b"\x00" in data:
        raise Refused(path, "binary (it contains NUL bytes)")
    return data.decode("utf-8-sig", errors="replace")


def _size(n: int) -> str:
    return f"{n // 1048576} MiB" if n >= 1048576 else f"{n // 1024} KiB"


# -- parsing ---------------------------------------------------------------------------------------


def nesting(text: str, tokens: str = _JSON_TOKENS) -> int:
    """The deepest bracket nesting of ``text``, strings (and TOML comments) skipped (``tokens``: the pattern
    of a string, a comment or a bracket)."""
    depth = deepest = 0
    for m in re.compile(tokens).finditer(text):
        token = m.group()
        if len(token) != 1:
            continue
        if token in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def load_json(text: str | bytes, max_depth: int = MAX_DEPTH):
    """Parse JSON; ValueError when invalid or nested deeper than ``max_depth`` (checked first)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig", errors="replace")
    if ("[" in text or "{" in text) and nesting(text) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None


# -- writing ---------------------------------------------------------------------------------------


def writable(path: str, root: str) -> str:
    """``path`` when agentctx may create or replace it inside the repository at ``root``: not a symlink
    (dangling or not), and its folder resolves inside ``root``; Refused otherwise."""
    if os.path.islink(path):
        raise Refused(path, f"a symlink (to {os.readlink(path)}); agentctx never writes through one")
    folder = os.path.dirname(os.path.abspath(path))
    if not _inside(os.path.realpath(folder), root):
        raise Refused(path, f"its folder resolves to {os.path.realpath(folder)}, outside the repository")
    return path


# -- reporting -------------------------------------------------------------------------------------


def _registry() -> str:
    return os.path.join(paths.cache_dir(), "refused-files")


def _key(path: str) -> list[int]:
    try:
        st = os.lstat(path)
    except OSError:
        return []
    return [st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns]


def _digest(text: str) -> str:
    return _sha256()(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:24]


def _sha256():
    """The builtin sha256 (importing hashlib, OpenSSL, costs ~2 ms on a hook run), looked up once."""
    global _SHA256
    if _SHA256 is None:
        try:
            from _sha2 import sha256  # Python >= 3.12
        except ImportError:
            try:
                from _sha256 import sha256  # Python <= 3.11
            except ImportError:
                from hashlib import sha256
        _SHA256 = sha256
    return _SHA256


def _repository_of(path: str) -> str | None:
    """The nearest folder above ``path`` holding ``.git`` (a few ``stat``), or None."""
    folder = os.path.dirname(path)
    for _ in range(64):
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _bucket(repository: str | None) -> str:
    """The registry folder of one repository's refused files (``none``: files in no repository)."""
    return os.path.join(_registry(), _digest(repository) if repository else "none")


def _entry(path: str) -> str:
    return os.path.join(_bucket(_repository_of(path)), _digest(path) + ".json")


def report(path: str, reason: str, event: str = "files", *, per_version: bool = True) -> bool:
    """Log that ``path`` was ignored, once per version of the file (``per_version`` off: once for the path,
    as long as the reason stays the same); True when this call logged it."""
    path = os.path.abspath(path)
    entry = {"path": path, "reason": reason, "key": _key(path) if per_version else None}
    name = _entry(path)
    try:
        with open(name, encoding="utf-8") as fh:
            if jsonfast.loads(fh.read()) == entry:
                return False
    except (OSError, ValueError):
        pass
    from agentctx.logs import log

    log(event, f"{path} ignored: {reason}")
    try:
        from agentctx.fsio import write_json

        write_json(name, entry)
    except OSError:
        pass
    return True


def refuse(exc: Refused, event: str = "files") -> None:
    """:func:`report` for a Refused."""
    report(exc.path, exc.reason, event)


def notice_inputs(root: str, probe: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """What ``notice(root, probe)`` reads: (files, folders whose listing it reads)."""
    files = [os.path.abspath(os.path.join(root, rel)) for rel in probe]
    folders = {os.path.dirname(_entry(path)) for path in files} | {_bucket(os.path.abspath(root))}
    return files, sorted(folders)


def notice(root: str, probe: tuple[str, ...] = ()) -> str | None:
    """One line naming the files of the repository at ``root`` that agentctx ignores, or None.

    ``probe`` (paths relative to ``root``) are checked now, without being read; the others are those
    a reader refused earlier (a parse error, say) and that have not changed since.
    """
    found: dict[str, str] = {}
    for rel in probe:
        path = os.path.abspath(os.path.join(root, rel))
        try:
            resolve(path, root)
        except Refused as exc:
            report(path, exc.reason)
    real_root = os.path.abspath(root)
    candidates = [_entry(os.path.abspath(os.path.join(root, rel))) for rel in probe]
    if os.path.exists(os.path.join(real_root, ".git")):
        bucket = _bucket(real_root)
        try:
            candidates += [os.path.join(bucket, name) for name in sorted(os.listdir(bucket))[:500]]
        except OSError:
            pass
    for name in dict.fromkeys(candidates):
        try:
            with open(name, encoding="utf-8") as fh:
                entry = jsonfast.loads(fh.read())
            path, reason, key = entry["path"], entry["reason"], entry["key"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not isinstance(path, str) or os.path.commonpath([real_root, path]) != real_root:
            continue
        if key is None or key != _key(path):  # changed or gone since: the next reader decides again
            continue
        found[path] = reason
    if not found:
        return None
    shown = sorted(found.items())[:NOTICE_FILES]
    items = "; ".join(f"{os.path.relpath(p, real_root)} ({r})" for p, r in shown)
    more = f"; and {len(found) - len(shown)} more (see the log)" if len(found) > len(shown) else ""
    return f"agentctx ignored {len(found)} file(s) of this repository and kept its defaults: {items}{more}."
