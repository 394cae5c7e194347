"""What a session did since the person's latest request, and which errors still stand at its end: the
"done since" and the blockers of a handover written without a model.

Read from the transcript (``transcript.tool_steps``), in order. **Done**: the commits made, pushes and pull
requests, the test runs that passed (the latest run of each step) and the files edited, since the request. **Blockers**: An error is a Bash command whose output
names one (``observe.error_signature``, the signature that keys the ``bugfix`` stubs) or an API error that
Claude Code wrote in Claude's place (a quota, a credit balance, an invalid model). An error no longer stands
once, after its last sighting:

* the same step succeeded: the same command, or the same program and subcommand or script with other
  flags (``observe.step_key``: ``npm run build`` failed, ``npm run build -- --verbose`` passed);
* a commit was made: the work was recorded, so what failed before it was dealt with or left behind;
* a file was edited and the error was not seen again: it was fixed by editing (an error that comes back
  is a new sighting, and the edits before it do not count);
* for an API error: Claude answered again.

Only what happened since the person's latest substantive request counts: an error met in earlier work is
not a blocker of the request in progress (the session moved on).
"""

from __future__ import annotations

import os

from agentctx.capture import observe

EDIT_TOOLS = frozenset(observe.FILE_TOOLS)
API_KEY = "api-error"
DONE_ITEMS = 5  # a handover's "done since" is a reminder, not a log: the daily log has the rest
DONE_FILES = 6  # files named in the one "edited" item


class _Open:
    __slots__ = ("text", "step", "command")

    def __init__(self, text: str, step: str, command: str):
        self.text, self.step, self.command = text, step, command


def _short(command: str) -> str:
    first = " ".join(command.strip().splitlines()[0].split()) if command.strip() else ""
    return first if len(first) <= 80 else first[:79] + "…"


def ran_tools(steps) -> bool:
    """Whether the transcript shows tool calls (else the errors are known only from the store's stubs)."""
    return any(step.tool not in ("reply", "api_error") for step in steps)


def standing(steps, since: int = 0) -> list[tuple[str, str]]:
    """(key, text) of each error still standing after ``steps`` (those ending past byte ``since``), oldest
    first; the key is the ``bugfix`` stub's (``observe.signature_key``) or ``api-error``."""
    open_: dict[str, _Open] = {}
    for step in steps:
        if step.end <= since:
            continue
        if step.tool == "api_error":
            open_.pop(API_KEY, None)
            said = step.output if step.output.lower().startswith("api error") else f"API error: {step.output}"
            open_[API_KEY] = _Open(said, "", "")
        elif step.tool == "reply":
            open_.pop(API_KEY, None)
        elif step.tool in EDIT_TOOLS:
            if not step.failed:  # edited after the error: fixed unless it is seen again
                for key in [k for k in open_ if k != API_KEY]:
                    del open_[key]
        elif step.tool == "Bash" and step.command.strip():
            _bash(step, open_)
    return [(key, o.text) for key, o in open_.items()]


def _bash(step, open_: dict[str, _Open]) -> None:
    command = step.command
    test = observe.test_command(command)
    signature = observe.error_signature(step.output, failed=step.failed, viewer=observe.is_viewer(command),
                                        test_run=test is not None)
    if signature:
        key = observe.signature_key(signature)
        open_.pop(key, None)  # a new sighting: the latest one is what stands
        open_[key] = _Open(f"{signature} (in `{_short(command)}`)", observe.step_key(command), command.strip())
        return
    if step.failed or observe.is_viewer(command):
        return  # a failure without a signature, or content shown: neither an error nor progress
    if any(e["kind"] == "commit" for e in observe.git_events(command, step.output)):
        for key in [k for k in open_ if k != API_KEY]:
            del open_[key]
        return
    same = observe.step_key(command)
    for key in [k for k, o in open_.items() if o.command == command.strip() or (same and o.step == same)]:
        del open_[key]


def _pushed(step) -> bool:
    """A ``git push`` that went through (no error in its output)."""
    return ("git", "push") in observe.programs(step.command) and not observe.error_signature(step.output, failed=False)


def done(steps, since: int = 0, root: str = "") -> list[str]:
    """What was done after byte ``since``: commits, passing test runs, the files edited (relative to
    ``root``), at most ``DONE_ITEMS`` items."""
    commits: list[str] = []
    tests: dict[str, str] = {}
    files: list[str] = []
    for step in steps:
        if step.end <= since:
            continue
        if step.tool in EDIT_TOOLS and not step.failed:
            for path in step.files:
                name = os.path.relpath(path, root) if root and path.startswith(root.rstrip(os.sep) + os.sep) else path
                if name not in files:
                    files.append(name)
        elif step.tool == "Bash" and step.command.strip():
            for event in [] if step.failed else observe.git_events(step.command, step.output):
                if event["kind"] == "commit":
                    # worded as the anchor's changes, so a digest showing both drops the repeat
                    commits.append(f"commit {event['sha'][:9]} on {event['branch']}: {event['message']}")
                elif event["kind"] == "pr":
                    commits.append(f"opened {event['url']}")
            if not step.failed and _pushed(step):
                commits.append(f"pushed: `{_short(step.command)}`")
            test = observe.test_command(step.command)
            if test:
                outcome = observe.test_outcome(test[0], step.output, failed=step.failed,
                                               piped="|" in step.command.replace("||", ""))
                what = " ".join([test[0], *sorted(test[1])])  # worded as the test run's record (observe)
                if outcome and outcome["status"] == "passed":
                    tests[what] = f"Tests passed: `{_short(what)}` ({outcome['summary']})"
                else:
                    tests.pop(what, None)
    out = commits[-DONE_ITEMS:] + list(tests.values())
    if files:
        more = f" and {len(files) - DONE_FILES} more" if len(files) > DONE_FILES else ""
        out.append("edited " + ", ".join(files[:DONE_FILES]) + more)
    return [observe.redact(item) for item in out[:DONE_ITEMS]]
