"""PostToolUse / PostToolUseFailure: deterministic observations (ADR-012 path B). No model.

* Write / Edit / MultiEdit / NotebookEdit: the file becomes an entity node (path relative to
  the project root) with an ``observed_in`` edge to the session (its weight counts touches).
* Bash: an error signature becomes a ``bugfix`` stub (title only, ``hook_observation``,
  ``inferred``) keyed by a normalized signature, so a repeat reinforces it; a later success of
  the same command retires it (a marker file per failing command keeps that check off the
  store); a test run (make test, rails test, rspec, npm/pnpm/yarn/bun test, go test, cargo
  test, pytest, jest, vitest, mvn/gradle test, dotnet test; behind wrappers such as
  ``docker run``, ``uv run``, ``npx``) becomes a pass/fail ``discovery`` keyed per runner and
  target, so the latest result supersedes the last, titled by runner and target (never the
  raw command line), linked to its test files; git commit (any flags: ``-q`` is read back
  from git), branch switch and ``gh pr create`` are merged into ``sessions.meta``. Paths under
  the home folder are stored as ``~/…``.

Claude Code reports a Bash command that exits non-zero as PostToolUseFailure (``error`` =
``"Exit code N\\n"`` + output), so both events come here. Prints nothing; everything stored
is redacted. Stdlib only: this runs once per tool call.
"""

from __future__ import annotations

import os
import re

from agentctx.hookio import HookEvent

TYPE_CHECKING = False  # the store modules load only when there is something to store
if TYPE_CHECKING:
    import sqlite3

    from agentctx.project import Project

BUSY_MS = 5000  # async hook: nobody waits, so wait for the lock rather than lose the observation
FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
MAX_SCAN_CHARS = 200_000  # of Bash output: the start and the end, where errors and summaries are
MAX_META_ITEMS = 50
TITLE_CHARS = 240

# Programs whose output is content (a file, a search hit, a log), not their own error.
_VIEWERS = {
    "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "echo",
    "printf", "find", "ls", "tree", "jq", "yq", "wc", "sort", "uniq", "diff", "cmp", "file", "stat", "which",
    "type", "test", "[", "true", "false", "history", "man", "nl", "bat", "xxd", "od", "hexdump", "strings",
}
_VIEWER_GIT = {"log", "show", "diff", "grep", "blame", "status", "reflog", "cat-file"}
_SETUP = {"cd", "pushd", "popd", "source", ".", "export", "set", "unset", "alias"}
_WRAPPERS = {"sudo", "time", "nice", "nohup", "command", "exec", "env", "timeout", "xargs"}
_RUNNERS_PREFIX = (("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
                   ("rye", "run"), ("pnpm", "exec"), ("yarn", "exec"), ("bundle", "exec"), ("pixi", "run"),
                   ("npm", "exec"), ("bun", "x"))
_CONTAINERS = {"docker", "podman", "nerdctl", "docker-compose", "kubectl"}  # the command runs inside: look further

# Error signatures, most specific first: (pattern, strong). The matching line is the signature.
# Strong ones count even when the command exited 0 (``pytest 2>&1 | tail`` exits with tail's 0).
_EXCEPTION = re.compile(r"^(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Fault)(?::\s*.*)?)$")
_SIGNATURES = [
    (_EXCEPTION, True),
    (re.compile(r"^error\[E\d{4}\]: .+$"), True),  # rustc
    (re.compile(r"^\S+?:\d+(?::\d+)?:\s*(?:fatal )?error:\s*.+$"), True),  # gcc, clang, go build, mypy
    (re.compile(r"^(?:\S+?\(\d+,\d+\): |\S+ - )?error TS\d+: .+$"), True),  # tsc
    (re.compile(r"^npm (?:ERR!|error) .+$"), True),
    (re.compile(r"^(?:panic: .+|thread '[^']*' panicked at .+)$"), True),
    (re.compile(r"^.*(?:Segmentation fault|core dumped|SIGSEGV|SIGABRT|Bus error).*$"), True),
    (re.compile(r"^(?:error|ERROR|Error|fatal|FATAL|Fatal)(?:\[\w+\])?[:!]\s+.+$"), False),
    (re.compile(r"^(?:\S+: )*\S+: (?:command )?not found$"), False),
]
_ERRORISH = re.compile(
    r"(?i)\b(error|failed|failure|fatal|cannot|can't|couldn't|denied|not found|no such|invalid|unable|"
    r"refused|exception|undefined|unknown|missing)\b"
)
_ASSERTION = re.compile(r"(?i)^(?:E\s+)?(?:AssertionError|assert\b)|assertion .*failed|^assertion")

# Normalizing a signature: what varies between two occurrences of the same error.
_NORM = [
    (re.compile(r"(?:[A-Za-z]:)?(?:[\w.~\-]*[/\\])+[\w.\-]*"), "<path>"),
    (re.compile(r"\bline \d+"), "line #"),
    (re.compile(r":\d+(?::\d+)?\b"), ":#"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b[0-9a-f]{7,}\b"), "<hex>"),
    (re.compile(r"\d+"), "#"),
]


# ---------------------------------------------------------------------------------------
# Parsing (pure functions)
# ---------------------------------------------------------------------------------------


def redact(text: str) -> str:
    """``redact.redact``, imported on first use (its patterns cost ~3 ms to compile), with the home
    folder written as ``~``."""
    from agentctx.paths import tilde
    from agentctx.redact import redact as _redact

    return tilde(_redact(text))


def _sha(text: str) -> str:
    from agentctx.project import sha256  # the builtin module, not hashlib (OpenSSL: ~2 ms to import)

    return sha256(text.encode("utf-8")).hexdigest()


_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")
MAX_COMMAND_CHARS = 100_000  # of a Bash command line: what runs is named at its start

_REDIRECT = re.compile(r"(?:^|(?<=\s))\d*(?:&>|>>?|<)(?:&\d+|\s*[^\s&|;<>]+)")


def segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line (split on ``&& || ; | &`` and newlines), as words."""
    import shlex

    out = []
    command = _REDIRECT.sub(" ", command[:MAX_COMMAND_CHARS])
    for part in re.split(r"&&|\|\||[;|&\n]", command):
        try:
            words = shlex.split(part, posix=True)
        except ValueError:
            words = part.split()
        # Skip by index and slice once: slicing per skipped word is quadratic (692 KiB of FOO=x took 56 s).
        i = 0
        while i < len(words) and _ASSIGN.match(words[i]):  # FOO=bar cmd
            i += 1
        while i < len(words) and words[i] in _WRAPPERS:
            i += 1
            while i < len(words) and (words[i].startswith("-") or words[i].replace(".", "").isdigit()):
                i += 1  # timeout 60, nice -n 5
        for first, second in _RUNNERS_PREFIX:
            if words[i:i + 2] == [first, second]:
                i += 2
                while i < len(words) and words[i].startswith("-"):
                    i += 1
        if i < len(words):
            out.append(words[i:])
    return out


def _program(words: list[str]) -> str:
    return os.path.basename(words[0]) if words else ""


def is_viewer(command: str) -> bool:
    """True when the line's first program only shows content (``cat``, ``grep``, ``git log``)."""
    segs = [w for w in segments(command) if _program(w) not in _SETUP]
    if not segs:
        return True
    words = segs[0]
    prog = _program(words)
    if prog == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return sub in _VIEWER_GIT
    return prog in _VIEWERS


def _scan_text(text: str) -> str:
    if len(text) <= MAX_SCAN_CHARS:
        return text
    half = MAX_SCAN_CHARS // 2
    return text[:half] + "\n" + text[-half:]


def error_signature(output: str, *, failed: bool, viewer: bool = False, test_run: bool = False) -> str | None:
    """The line that names the error in ``output``, or None.

    ``failed``: the command exited non-zero (then weaker signatures, and a last line that
    reads like an error, count too). Content shown by a viewer (``grep error:``) is never an
    error; in a test run an assertion failure is the test result, not a bug.
    """
    if viewer or not output:
        return None
    lines = [ln.strip() for ln in _scan_text(output).splitlines()]
    order = range(len(lines))
    if "Traceback (most recent call last):" in output:
        order = range(len(lines) - 1, -1, -1)  # the exception line ends a traceback: prefer the last
    for pattern, strong in _SIGNATURES:
        if not (strong or failed):
            continue
        for i in order:
            line = lines[i]
            if not pattern.match(line) or (test_run and _ASSERTION.search(line)):
                continue
            text = re.sub(r"^E\s+", "", line)
            if text.endswith(":") and i + 1 < len(lines) and lines[i + 1]:  # rust: message on the next line
                text += " " + lines[i + 1]
            return text[:TITLE_CHARS]
    if failed and not test_run:
        tail = [ln for ln in lines if ln and not ln.startswith("Exit code ")]
        if tail and _ERRORISH.search(tail[-1]):
            return tail[-1][:TITLE_CHARS]
    return None


def signature_key(signature: str) -> str:
    """``bugfix.sig:<hash>`` of the signature without paths, line numbers, hex and numbers."""
    text = redact(signature)
    for pattern, repl in _NORM:
        text = pattern.sub(repl, text)
    norm = " ".join(text.lower().split())
    return "bugfix.sig:" + _sha(norm)[:16]


# --- test runs ---------------------------------------------------------------------------

_VALUE_OPTIONS = {
    "-k", "-m", "-n", "-p", "-c", "-o", "-W", "--maxfail", "--tb", "--rootdir", "--confcutdir", "--durations",
    "--junitxml", "--cov", "--cov-report", "--log-level", "--timeout", "-t", "--testNamePattern", "--reporter",
    "--config", "--testPathPattern", "--project", "-run", "--run", "-count", "-timeout", "-tags", "--tags",
    "-coverprofile", "-bench", "--package", "--features", "--target", "--test", "--bin", "-j", "--jobs",
    "--dir", "--root", "--environment", "--shard", "--workspace-root", "--format", "--require", "--seed",
    "--filter", "--logger", "--configuration", "--framework", "--order", "--tag", "--example", "--pattern", "--out",
}


def _runner(words: list[str]) -> tuple[str, list[str]] | None:
    """(runner, the words after it) when ``words`` start a test run."""
    prog = _program(words)
    if prog in ("pytest", "py.test"):
        return "pytest", words[1:]
    if re.match(r"^python[\d.]*$", prog) and words[1:3] == ["-m", "pytest"]:
        return "pytest", words[3:]
    if prog in ("jest", "vitest", "rspec", "mocha", "ava"):
        return prog, [w for w in words[1:] if w not in ("run", "watch")]
    if prog in ("npx", "bunx", "pnpx") and len(words) > 1 and words[1] in ("jest", "vitest", "rspec", "mocha"):
        return words[1], [w for w in words[2:] if w not in ("run", "--")]
    if prog in ("npm", "yarn", "pnpm", "bun") and (
        words[1:2] == ["test"] or words[1:3] == ["run", "test"] or words[1:2] == ["t"]
    ):
        return prog + " test", [w for w in words[2:] if w not in ("run", "test", "--")]
    if prog == "go" and words[1:2] == ["test"]:
        return "go test", words[2:]
    if prog == "cargo" and (words[1:2] == ["test"] or words[1:3] == ["nextest", "run"]):
        return "cargo test", words[2:] if words[1] == "test" else words[3:]
    if prog in ("make", "gmake") and any(re.match(r"^(?:test|tests|check)(?:[-_:]\w+)?$", w) for w in words[1:]):
        target = next(w for w in words[1:] if re.match(r"^(?:test|tests|check)(?:[-_:]\w+)?$", w))
        return f"make {target}", []
    if prog in ("rails", "rake") and words[1:2] == ["test"]:
        return "rails test", words[2:]
    if prog in ("mvn", "mvnw", "gradle", "gradlew") and any(w in ("test", "check") or w.endswith(":test")
                                                            for w in words[1:]):
        return ("mvn" if prog.startswith("mvn") else "gradle") + " test", [
            w for w in words[1:] if w not in ("test", "check", "clean", "verify") and not w.endswith(":test")]
    if prog == "dotnet" and words[1:2] == ["test"]:
        return "dotnet test", words[2:]
    return None


def test_command(command: str) -> tuple[str, list[str]] | None:
    """(runner, targets) when the line runs a test suite (see the module docstring), wrappers and
    containers (``docker run … image pytest``) looked through; flags are never targets."""
    for words in segments(command):
        found = _runner(words)
        if found is None and _program(words) in _CONTAINERS:
            found = next((r for i in range(1, len(words)) if (r := _runner(words[i:]))), None)
        if found is None:
            continue
        runner, rest = found
        targets, skip = [], False
        for w in rest:
            if skip:
                skip = False
            elif w.startswith("-"):
                skip = w in _VALUE_OPTIONS
            elif w != "--":
                targets.append(w)
        return runner, targets
    return None


def _count(text: str, word: str) -> int:
    return sum(int(n) for n in re.findall(rf"(\d+) {word}", text))


def test_outcome(runner: str, output: str, *, failed: bool, piped: bool) -> dict | None:
    """``{"status", "summary", "failing"}`` for a test run's output; None when unknowable.

    A pipeline (``pytest | tail``) exits with its last stage's status, so there only a parsed
    summary counts.
    """
    text = _scan_text(output)
    summary, failing, npass, nfail = "", [], 0, 0
    if runner not in ("go test", "cargo test"):  # pytest, also behind `npm test` / `make`-like wrappers
        found = re.findall(r"^=*\s*((?:\d+ \w+,? ?)+|no tests ran) in [\d.]+s\b.*$", text, re.M)
        if found:
            summary = found[-1].strip().rstrip(",")
            npass, nfail = _count(summary, "passed"), _count(summary, "failed") + _count(summary, "errors?")
            failing = re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.M)
    if not summary:  # jest: "Tests:  1 failed, 3 passed, 4 total"; vitest: "Tests  1 failed | 3 passed (4)"
        found = re.findall(r"^\s*Tests:?\s+(\d+ (?:failed|passed).*)$", text, re.M)
        if found:
            summary = " ".join(found[-1].split())
            npass, nfail = _count(summary, "passed"), _count(summary, "failed")
            failing = re.findall(r"^\s*(?:FAIL|❯|×)\s+(\S+\.\w+)", text, re.M)
    if not summary:  # rspec: "12 examples, 1 failure"; minitest/rails: "5 runs, 9 assertions, 1 failures, 0 errors"
        found = re.findall(r"^(\d+) examples?, (\d+) failures?.*$", text, re.M)
        if found:
            npass, nfail = int(found[-1][0]) - int(found[-1][1]), int(found[-1][1])
            summary = f"{found[-1][0]} examples, {nfail} failures"
        found = [] if summary else re.findall(r"^(\d+) runs?, \d+ assertions?, (\d+) failures?, (\d+) errors?", text, re.M)
        if found:
            runs, fails, errs = (int(x) for x in found[-1])
            npass, nfail = runs - fails - errs, fails + errs
            summary = f"{runs} runs, {fails} failures, {errs} errors"
    if not summary:  # maven/gradle surefire: "Tests run: 5, Failures: 1, Errors: 0"; dotnet: "Failed: 0, Passed: 5"
        found = re.findall(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+)", text)
        if found:
            runs, fails, errs = (int(x) for x in found[-1])
            npass, nfail = runs - fails - errs, fails + errs
            summary = f"{runs} run, {fails} failures, {errs} errors"
        found = [] if summary else re.findall(r"Failed:\s+(\d+), Passed:\s+(\d+)", text)
        if found:
            nfail, npass = int(found[-1][0]), int(found[-1][1])
            summary = f"{npass} passed, {nfail} failed"
    if not summary:  # unittest (behind make test): "Ran 12 tests in 0.3s" then "OK" or "FAILED (failures=1)"
        ran = re.findall(r"^Ran (\d+) tests? in [\d.]+s", text, re.M)
        if ran:
            bad = re.findall(r"^FAILED \((?:failures|errors)=(\d+)(?:, (?:failures|errors)=(\d+))?", text, re.M)
            nfail = sum(int(x or 0) for x in bad[-1]) if bad else 0
            npass = int(ran[-1]) - nfail
            summary = f"{ran[-1]} tests, {nfail} failed"
    if not summary and runner == "go test":
        oks, fails = re.findall(r"^ok\s+(\S+)", text, re.M), re.findall(r"^FAIL\s+(\S+)\s", text, re.M)
        if oks or fails:
            npass, nfail = len(oks), len(fails)
            summary = f"{npass} packages ok, {nfail} failed"
            failing = re.findall(r"^\s*--- FAIL: (\S+)", text, re.M) or fails
    if not summary and runner == "cargo test":
        found = re.findall(r"^test result: \w+\. (\d+) passed; (\d+) failed", text, re.M)
        if found:
            npass, nfail = sum(int(p) for p, _ in found), sum(int(f) for _, f in found)
            summary = f"{npass} passed, {nfail} failed"
            failing = re.findall(r"^test (\S+) \.\.\. FAILED", text, re.M)
    code = re.match(r"Exit code (\d+)", output) if failed else None
    exit_code = code.group(1) if code else "non-zero" if failed else "0"
    if not summary:
        if piped:
            return None
        summary = f"exit code {exit_code}"
    status = "failed" if nfail or (failed and not piped) else "passed"
    if status == "failed" and not nfail and npass and not piped:  # every test passed, yet the run failed (a
        summary = f"{summary}; exit code {exit_code}"  # coverage threshold, open handles): say so in the summary
    if summary == "no tests ran" or (not npass and not nfail and summary.startswith(("0 ", "no "))):
        status = "no tests"
    return {"status": status, "summary": summary[:160], "failing": list(dict.fromkeys(failing))[:10]}


# --- git ---------------------------------------------------------------------------------

_COMMIT = re.compile(r"^\[(?P<branch>[^\s\]]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<msg>.+)$", re.M)
_SWITCH = re.compile(r"Switched to (?:a new )?branch '([^']+)'|Reset branch '([^']+)'")
_PR_URL = re.compile(r"https://\S+/pull/\d+")


def _subcommand(words: list[str]) -> str:
    """The sub-command of ``git -C dir -c k=v commit -q``: options and their values skipped."""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    return words[i] if i < len(words) else ""


def _commit_message(segs: list[list[str]]) -> str:
    for w in segs:
        if _program(w) == "git" and _subcommand(w) == "commit":
            for i, x in enumerate(w[:-1]):
                if x in ("-m", "--message"):
                    return w[i + 1].splitlines()[0] if w[i + 1] else ""
                if x.startswith("-") and not x.startswith("--") and x.endswith("m") and len(x) <= 4:
                    return w[i + 1].splitlines()[0] if w[i + 1] else ""  # -am, -qm
    return ""


def quiet_commit(command: str, output: str, cwd: str) -> dict | None:
    """A ``git commit`` that succeeded without printing its ``[branch sha] msg`` line (``-q``): the
    commit read back from git (HEAD), or None."""
    segs = segments(command)
    if not any(_program(w) == "git" and _subcommand(w) == "commit" for w in segs) or _COMMIT.search(output):
        return None
    import subprocess

    try:
        done = subprocess.run(["git", "-C", cwd, "log", "-1", "--format=%H%x00%D%x00%s"], capture_output=True,
                              text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    parts = done.stdout.strip().split("\0")
    if done.returncode != 0 or len(parts) != 3 or not parts[0]:
        return None
    branch = re.search(r"HEAD -> ([^,\s]+)", parts[1])
    return {"kind": "commit", "sha": parts[0][:12], "branch": branch.group(1) if branch else "HEAD",
            "message": parts[2] or _commit_message(segs)}


def programs(command: str) -> set[tuple[str, str]]:
    """(program, sub-command) of each simple command of a shell line: ``("git", "push")``."""
    return {(_program(w), _subcommand(w)) for w in segments(command)}


def git_events(command: str, output: str) -> list[dict]:
    """Commits, branch switches and PRs this command made (confirmed by its output)."""
    segs = segments(command)
    progs = programs(command)
    events: list[dict] = []
    if ("git", "commit") in progs:
        for m in _COMMIT.finditer(output):
            events.append({"kind": "commit", "sha": m["sha"], "branch": m["branch"], "message": m["msg"].strip()})
    if ("git", "checkout") in progs or ("git", "switch") in progs:
        for m in _SWITCH.finditer(output):
            events.append({"kind": "branch", "branch": m.group(1) or m.group(2)})
    if ("gh", "pr") in progs and any(_program(w) == "gh" and "create" in w for w in segs):
        title = ""
        for w in segs:
            for i, x in enumerate(w[:-1]):
                if x in ("--title", "-t"):
                    title = w[i + 1]
        for url in dict.fromkeys(_PR_URL.findall(output)):
            events.append({"kind": "pr", "url": url, "title": title})
    return events


def merge_meta(meta: dict, events: list[dict], stamp: str) -> dict:
    """``sessions.meta`` with ``events`` merged in (lists deduplicated and capped, latest branch)."""
    for ev in events:
        if ev["kind"] == "commit":
            commits = meta.setdefault("commits", [])
            if all(c.get("sha") != ev["sha"] for c in commits):
                commits.append({"sha": ev["sha"], "branch": ev["branch"], "message": ev["message"][:300], "at": stamp})
            meta["branch"] = ev["branch"]
        elif ev["kind"] == "branch":
            meta["branch"] = ev["branch"]
            branches = meta.setdefault("branches", [])
            if ev["branch"] not in branches:
                branches.append(ev["branch"])
        elif ev["kind"] == "pr":
            prs = meta.setdefault("prs", [])
            if all(p.get("url") != ev["url"] for p in prs):
                prs.append({"url": ev["url"], "title": ev["title"][:300], "at": stamp})
    for name in ("commits", "branches", "prs"):
        if name in meta:
            meta[name] = meta[name][-MAX_META_ITEMS:]
    return meta


def _redact_tree(value):
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: _redact_tree(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------
# The hook
# ---------------------------------------------------------------------------------------


def _inside(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (forward slashes), or None when it is outside or in .git."""
    from agentctx.store import graph

    if not path or not graph.is_file_name(path):  # a traceback's "<string>", "<frozen ...>": no file at all
        return None
    path = path if os.path.isabs(path) else os.path.join(root, path)
    name = graph.normalize_path(path, root)
    if os.path.isabs(name) or name.startswith(".."):
        real = graph.normalize_path(os.path.realpath(path), root)
        if os.path.isabs(real) or real.startswith(".."):
            return None
        name = real
    if name == "." or name == ".git" or name.startswith(".git/"):
        return None
    from agentctx.project_settings import load

    if load(root).excluded(name):  # .agentctx/config.toml: a path never captured
        return None
    return redact(name)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _command_key(command: str) -> str:
    """What "the same command" means: its programs and arguments, without setup (``cd``), viewers
    (``| tail``), redirections and spacing."""
    segs = [w for w in segments(command) if _program(w) not in _SETUP and _program(w) not in _VIEWERS]
    return " ".join(" ".join(w) for w in segs)


_SUBCOMMAND = re.compile(r"^[a-z][a-z-]*$")


def step_key(command: str) -> str:
    """What "the same step" means, looser than the same command: per simple command (setup and viewers left
    out), the program and its first word that is not an option, and a second one when the first is a
    subcommand (``npm run build``, ``cargo build``, ``python scripts/seed.py``), whatever the flags."""
    keys = []
    for words in segments(command):
        prog = _program(words)
        if prog in _SETUP or prog in _VIEWERS:
            continue
        args = [w for w in words[1:] if not w.startswith("-")][:2]
        if args and not _SUBCOMMAND.match(args[0]):
            args = args[:1]
        keys.append(" ".join([prog, *args]))
    return " && ".join(keys)


def _failing_marker(command: str) -> str:
    """The marker file of a command whose failure left bugfix stubs (its presence costs one stat)."""
    from agentctx import paths

    return os.path.join(paths.data_dir(), "failing", _sha(_command_key(command) or command)[:20])


def _remember_failure(marker: str, record_id: str) -> None:
    import json

    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        ids = []
        if os.path.exists(marker):
            with open(marker, encoding="utf-8") as fh:
                ids = [i for i in json.load(fh) if isinstance(i, str)]
        if record_id not in ids:
            ids = (ids + [record_id])[-20:]
        with open(marker, "w", encoding="utf-8") as fh:
            json.dump(ids, fh)
    except (OSError, ValueError):
        pass


def _retire_failures(conn: sqlite3.Connection, project_id: str, marker: str, stamp: str) -> None:
    """The same command succeeded: its bugfix stubs are retired (history keeps them)."""
    import json

    from agentctx.store import db, records

    try:
        with open(marker, encoding="utf-8") as fh:
            ids = [i for i in json.load(fh) if isinstance(i, str)]
    except (OSError, ValueError):
        ids = []
    with db.transaction(conn):
        for rid in ids:
            rec = records.get(conn, rid, project_id)
            if rec and rec["type"] == "bugfix" and rec["source"] == "hook_observation":
                records.retire(conn, rid, stamp=stamp, project_id=project_id, mark_updated=True)
    try:
        os.unlink(marker)
    except OSError:
        pass


def _short(command: str) -> str:
    first = " ".join(command.strip().splitlines()[0].split()) if command.strip() else ""
    return first if len(first) <= 80 else first[:79] + "…"


def observe_file(tool: str, tool_input: dict, response: dict, sid: str, base: str) -> None:
    """A file written by ``tool``: a ``file`` node observed in the session."""
    path = tool_input.get(FILE_TOOLS[tool]) or response.get("filePath") or response.get("notebook_path") or ""
    if not isinstance(path, str) or response.get("success") is False:
        return
    from agentctx import project
    from agentctx.store import db, graph, sessions

    proj = project.detect(base)
    name = _inside(path if os.path.isabs(path) else os.path.join(base, path), proj.root) if path else None
    if not name:
        return
    conn = db.connect(busy_ms=BUSY_MS)
    try:
        with db.transaction(conn):
            sessions.ensure(conn, sid, proj.id, proj.root)
            node = graph.entity(conn, proj.id, "file", name)
            graph.edge(conn, node, sid, "observed_in")
    finally:
        conn.close()


def _link_files(conn: sqlite3.Connection, proj: Project, record_id: str, paths: list[str], base: str) -> None:
    names = []
    for p in paths:
        name = _inside(p if os.path.isabs(p) else os.path.join(base, p), proj.root)
        if name and name not in names:
            names.append(name)
    if not names:
        return
    from agentctx.store import db, graph

    with db.transaction(conn):
        for name in names[:10]:
            kind = "file" if os.path.isfile(os.path.join(proj.root, name)) or "." in os.path.basename(name) else "module"
            graph.link(conn, record_id, graph.entity(conn, proj.id, kind, name))


_FILE_IN_ERROR = re.compile(r"""(?:File "([^"]+)", line \d+|^([\w./\\-]+\.\w+):\d+(?::\d+)?:|^\s*--> ([\w./\\-]+\.\w+):\d+)""", re.M)


def observe_bash(event: HookEvent) -> None:
    """A Bash call (PostToolUse, or PostToolUseFailure for a non-zero exit): error stubs, test outcomes,
    git events. Reads nothing from the store unless the output shows one of them."""
    command = event.tool_input.get("command") if isinstance(event.tool_input.get("command"), str) else ""
    if not command.strip():
        return
    failed = event.name == "PostToolUseFailure"
    if failed:
        if event.is_interrupt:
            return
        output = event.error
    else:
        response = event.tool_response
        if response.get("interrupted"):
            return
        output = "\n".join(v for v in (response.get("stdout"), response.get("stderr")) if isinstance(v, str))
    sid, base = event.session_id, event.cwd
    test = test_command(command)
    events = git_events(command, output)  # confirmed by output, so also when a later step failed
    if not failed and not any(e["kind"] == "commit" for e in events):
        quiet = quiet_commit(command, output, base)
        if quiet:
            events.append(quiet)
    signature = error_signature(output, failed=failed, viewer=is_viewer(command), test_run=test is not None)
    outcome = None
    if test:
        outcome = test_outcome(test[0], output, failed=failed, piped="|" in command.replace("||", ""))
    marker = _failing_marker(command)
    cleared = not failed and not signature and os.path.exists(marker) and (
        outcome is None or outcome["status"] == "passed")
    if not (signature or outcome or events or cleared):
        return  # the common case: no store access at all
    from agentctx import clock, project
    from agentctx.store import db, records, sessions

    proj = project.detect(base)
    conn = db.connect(busy_ms=BUSY_MS)
    try:
        stamp = clock.now()
        if events:
            with db.transaction(conn):
                sessions.ensure(conn, sid, proj.id, proj.root)
                meta = merge_meta(sessions.meta(conn, sid), _redact_tree(events), stamp)
                sessions.set_meta(conn, sid, meta)
        if signature:
            title = redact(f"{signature} (in `{_short(command)}`)")
            _, rec = records.upsert_by_key(  # a repeat reinforces the stub, whatever its wording
                conn, proj.id, signature_key(signature), type="bugfix", title=title[:records.MAX_TITLE_CHARS],
                source="hook_observation", confidence="inferred", session_id=sid, same=lambda *_: True,
            )
            files = [next(g for g in m.groups() if g) for m in _FILE_IN_ERROR.finditer(_scan_text(output))]
            _link_files(conn, proj, rec["id"], files[-3:], base)
            _remember_failure(marker, rec["id"])
        if cleared:
            _retire_failures(conn, proj.id, marker, stamp)
        if test and outcome:
            runner, targets = test
            target = redact(" ".join(sorted(targets))) or "*"
            key = f"test.{runner.replace(' ', '_')}:{target}"
            if len(key) > records.MAX_KEY_CHARS:
                key = key[:180] + ":" + _sha(key)[:12]
            verb = {"passed": "Tests passed", "failed": "Tests failed", "no tests": "No tests ran"}[outcome["status"]]
            what = runner if target == "*" else f"{runner} {target}"
            title = f"{verb}: `{_clip(what, 120)}` ({outcome['summary']})"
            body = ("Failing: " + ", ".join(outcome["failing"])) if outcome["failing"] else ""
            rec = records.add(
                conn, proj.id, type="discovery", key=key, title=title[:records.MAX_TITLE_CHARS], body=body,
                source="hook_observation", confidence="inferred", session_id=sid,
            )
            files = [t.split("::")[0] for t in targets] + [f.split("::")[0] for f in outcome["failing"]]
            _link_files(conn, proj, rec["id"], [f for f in files if "/" in f or "." in f], base)
    finally:
        conn.close()
