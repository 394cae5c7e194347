"""Read Claude Code's transcript JSONL: the main conversation, incrementally. Stdlib only.

The format is internal to Claude Code and changes between releases, so the reader relies only
on what Anthropic's own SDK relies on (see docs/claude-code-platform.md §4):

* chain lines (``user``, ``assistant``, ``system``, ``progress``, ``attachment``) carry ``uuid`` /
  ``parentUuid``; every other type (``summary``, ``queue-operation``, ``api-request`` ...) is skipped;
* the main chain is rebuilt by walking ``parentUuid`` up from the newest leaf that is not a
  sidechain, meta or team line; a compact boundary's ``logicalParentUuid`` is followed only to lines
  of the same read (never read before), so after a compaction the ``isCompactSummary`` message stands
  in for what earlier reads took, and a read that spans a compaction loses nothing;
* one API response is split over several ``assistant`` lines sharing ``message.id``: merged;
* what the person typed is kept whole and marked by ``kind``: prompts, slash commands as
  ``/name args`` (``command``), prompts queued while Claude worked (``queued``, an ``attachment``
  line, or, where a release wrote none for a prompt delivered mid-turn, the queue's ``enqueue`` line
  followed by its ``remove``), answers to AskUserQuestion with the question and its options (``answer``), numbered or
  lettered replies with the list they answer (``reply``, the list in ``context``), what they typed when
  rejecting a tool call or a plan (``feedback``);
* ``<system-reminder>`` blocks, hook output, IDE selections and harness wrappers
  (``<local-command-stdout>`` ...) are stripped; thinking blocks are dropped; tool calls and results
  are kept short; Claude's long messages keep their head and tail;
* a truncated or still-growing last line (no newline yet) is left for the next read.

Incremental use: :func:`read` takes a :class:`Watermark` (byte offset just past the last line
consumed, plus that entry's uuid) and returns only the main-chain entries after it, with the
watermark to store once they are processed.
"""

from __future__ import annotations

import json
import os
import re

from agentctx import safefile

CHAIN_TYPES = ("user", "assistant", "system", "progress", "attachment")
MAX_TOOL_CHARS = 400  # a tool call or result is context, not content: keep it short
MAX_TEXT_CHARS = 12_000  # one message; longer ones keep their head and tail
MAX_READ_BYTES = 64 * 1024 * 1024  # one read's window; a longer remainder is read by the next call

_REMINDER = re.compile(
    r"<(system-reminder|user-prompt-submit-hook|ide_selection|ide_opened_file|ide_diagnostics)>.*?(?:</\1>|\Z)",
    re.DOTALL | re.IGNORECASE)
_COMMAND = re.compile(r"<(command-name|command-args)>(.*?)</\1>", re.DOTALL)
_COMMAND_NAME = re.compile(r"^/[\w:.-]+(?:\s|$)")
_TASK_RESULT = re.compile(r"<result>(.*?)(?:</result>|\Z)", re.DOTALL)
# A note the person typed after "#" for Claude Code to remember: theirs by construction. Claude Code writes it on a
# branch of its own (the conversation goes on from the line before it), so it is off the main chain.
_MEMORY_NOTE = re.compile(r"^\s*<user-memory-input>(.*?)</user-memory-input>\s*$", re.DOTALL)
_HARNESS = re.compile(
    r"^\s*(?:<local-command-(?:stdout|stderr|caveat)>|<session-start-hook>|"
    r"<tick>|<goal>|\[Request interrupted by user|<ide_opened_file>|<ide_selection>|<bash-(?:input|stdout|stderr)>|"
    r"<bash-notification>|Unknown (?:skill|slash command): \S+\s*$)"  # a background shell's notice; an unknown /name
)


class Watermark:
    """Where the last processed read stopped: ``offset`` bytes into the file, at entry ``uuid``; ``queued``
    holds the prompts the person had queued whose fate the read could not see yet (``_with_queued_only``)."""

    __slots__ = ("offset", "uuid", "queued")

    def __init__(self, offset: int = 0, uuid: str | None = None, queued: tuple[str, ...] = ()):
        self.offset, self.uuid, self.queued = int(offset), uuid, tuple(queued)

    def dumps(self) -> str:
        data: dict = {"v": 1, "offset": self.offset, "uuid": self.uuid}
        if self.queued:
            data["queued"] = list(self.queued)
        return json.dumps(data)

    @classmethod
    def loads(cls, text: str | None) -> Watermark:
        """Parse a stored watermark; anything unreadable means "from the start"."""
        try:
            data = json.loads(text or "")
            queued = data.get("queued") or ()
            if not isinstance(queued, list) or not all(isinstance(q, str) for q in queued):
                queued = ()
            return cls(int(data.get("offset") or 0), data.get("uuid"), tuple(queued))
        except (ValueError, TypeError, AttributeError):
            return cls()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Watermark) and (self.offset, self.uuid, self.queued) == (
            other.offset, other.uuid, other.queued)

    def __repr__(self) -> str:
        return f"Watermark(offset={self.offset}, uuid={self.uuid!r}, queued={len(self.queued)})"


class Entry:
    """One visible message: role ``user``, ``assistant``, ``tool`` (a tool result) or ``summary``.

    A ``user`` entry's ``kind`` says how the person said it: ``prompt``, ``command``, ``queued``,
    ``answer`` (to AskUserQuestion), ``reply`` (to a numbered or lettered list, in ``context``),
    ``feedback`` (typed on rejecting a tool call or a plan) or ``memory`` (a note typed after "#" for Claude
    Code to remember).
    """

    __slots__ = ("uuid", "role", "text", "timestamp", "end", "kind", "context")

    def __init__(self, uuid: str, role: str, text: str, timestamp: str, end: int, kind: str = "", context: str = ""):
        self.uuid, self.role, self.text, self.timestamp, self.end = uuid, role, text, timestamp, end
        self.kind = kind or ("prompt" if role == "user" else "")
        self.context = context

    def __repr__(self) -> str:
        return f"Entry({self.role}, {self.text[:40]!r})"


class Batch:
    """The result of :meth:`read`: new entries and the watermark that covers them."""

    __slots__ = ("entries", "watermark", "restarted", "lines", "skipped")

    def __init__(self, entries: list[Entry], watermark: Watermark, restarted: bool, lines: int, skipped: int):
        self.entries, self.watermark, self.restarted = entries, watermark, restarted
        self.lines, self.skipped = lines, skipped


def clean_text(text: str) -> str:
    """Drop ``<system-reminder>`` blocks, hook output, IDE context and harness wrappers; a slash
    command becomes ``/name args``; trim."""
    text = _REMINDER.sub("", text)
    if "<command-name>" in text:
        tags = {name: value.strip() for name, value in _COMMAND.findall(text)}
        return f"{tags.get('command-name', '')} {tags.get('command-args', '')}".strip()
    if _HARNESS.match(text):
        return ""
    return text.strip()


# Claude Code's text for AskUserQuestion answers in the tool result: ``User has answered your questions:
# "<question>"="<answer>", "<question>"="<answer>". You can now continue ...``. Read when the line has no
# structured ``toolUseResult`` (some releases and tools that copy transcripts leave it out).
_ANSWERED = "User has answered your questions:"
_ASKED_IDS: set[str] = set()  # ids of AskUserQuestion calls met by this process's reads
_ANSWER_PAIR = re.compile(r'"(.+?)"="(.*?)"(?=\s*,\s*"|\s*\.\s*You can now continue|\s*\.?\s*$)', re.DOTALL)


def _flat(text: object) -> str:
    return " ".join(str(text).split())


def answer_lines(question: str, answer: str, options: list[str]) -> str:
    """One AskUserQuestion answer as the transcript reader gives it: ``"<question>"="<answer>"`` (Claude
    Code's own notation, on one line), then ``(options: a; b)`` when options were offered."""
    head = f'"{_flat(question)}"="{_flat(answer)}"'
    return f"{head}\n(options: {'; '.join(_flat(o) for o in options)})" if options else head


def answers(result: object, content: object = None, *, asked: bool = False) -> str:
    """An AskUserQuestion result as the person's answers, each with its question and the options offered
    (``answer_lines``): from the structured ``toolUseResult``, else from the tool result's text (``content``);
    "" when it holds none."""
    lines = []
    if isinstance(result, dict) and isinstance(result.get("answers"), dict):
        asked = {q.get("question"): q for q in result.get("questions") or [] if isinstance(q, dict)}
        for question, answer in result["answers"].items():
            if not isinstance(answer, str) or not answer.strip():
                continue
            spec = asked.get(question) or {}
            options = [o.get("label") for o in spec.get("options") or [] if isinstance(o, dict) and o.get("label")]
            lines.append(answer_lines(str(question), answer, options))
        return "\n".join(lines)
    text = _tool_result_text(content).strip() if content is not None and asked else ""
    if text.startswith(_ANSWERED):
        for question, answer in _ANSWER_PAIR.findall(text[len(_ANSWERED):]):
            if answer.strip():
                lines.append(answer_lines(question, answer, []))
    return "\n".join(lines)


# Claude Code's text for a tool call (or a plan) the person rejected and told Claude what to do instead, in the
# wordings its releases have used: the words after the marker are theirs, up to the hint some versions append
# (and a closing ``</tool_use_error>``). Without words ("STOP what you are doing ...") nothing was typed; "The
# user wants to clarify these questions." is the harness's own text for an AskUserQuestion the person chose to
# talk about, not words they typed.
_DENIED = ("To tell you how to proceed, the user said:", "The user provided the following reason for the rejection:")
_DENIAL_TAIL = re.compile(r"(?:\n\s*\nNote: The user's next message may contain a correction or preference\b.*)?"
                          r"(?:\s*</tool_use_error>)?\s*\Z", re.DOTALL)
_HARNESS_FEEDBACK = ("The user wants to clarify these questions.",)
_REJECTED = "The user doesn't want to proceed with this tool use."


def feedback(content: object) -> str:
    """What the person typed when rejecting a tool call or a plan (a ``tool_result``'s content), "" when the
    result is not such a rejection or they typed nothing."""
    text = _tool_result_text(content).strip()
    for prefix in ("Error:", "<tool_use_error>"):
        text = text[len(prefix):].lstrip() if text.startswith(prefix) else text
    if not text.startswith(_REJECTED):  # only Claude Code's own text; tool output quoting it is not the person
        return ""
    for marker in _DENIED:
        at = text.find(marker)
        if at >= 0:
            said = _DENIAL_TAIL.sub("", text[at + len(marker):]).strip()
            if said and not said.startswith(_HARNESS_FEEDBACK):
                return clean_text(said)
            return ""
    return ""


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return f"{text[:head]} […{len(text) - limit} characters cut…] {text[-(limit - head):]}"


def _one_line(value: object, limit: int = MAX_TOOL_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _clip(" ".join(text.split()), limit)


def _tool_result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "\n".join(parts)


def _spoken(is_user: bool, text: str) -> tuple[str, str]:
    """(role, text) of a text block. A background subagent's report arrives as a user line that the
    harness wrote (``<task-notification>``): it is the subagent's output, a tool result, never the
    developer speaking."""
    if not is_user:
        return "assistant", text
    if text.startswith("<task-notification>"):
        found = _TASK_RESULT.search(text)
        return "tool", f"[subagent result: {_one_line(found.group(1) if found else text)}]"
    if text.startswith("This session is being continued from a previous conversation"):
        return "summary", text
    note = _MEMORY_NOTE.match(text)
    if note:
        return "memory", note.group(1).strip()
    return ("command" if text.startswith("/") and _COMMAND_NAME.match(text) else "user"), text


def _blocks(line: dict) -> list[tuple[str, str]]:
    """(role, text) pieces of one user/assistant line, cleaned."""
    message = line.get("message")
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    is_user = line.get("type") == "user"
    if line.get("isCompactSummary"):
        text = content if isinstance(content, str) else _tool_result_text(content)
        return [("summary", text.strip())] if text.strip() else []
    if isinstance(content, str):
        piece = _spoken(is_user, clean_text(content))
        return [piece] if piece[1] else []  # an empty memory note is nothing said either
    out: list[tuple[str, str]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            piece = _spoken(is_user, clean_text(block["text"]))
            if piece[1]:
                out.append(piece)
        elif kind == "tool_use" and not is_user:
            if block.get("name") == "AskUserQuestion" and isinstance(block.get("id"), str):
                _ASKED_IDS.add(block["id"])  # its result's text may be read as the person's answers
            out.append(("assistant", f"[tool {block.get('name', '?')}: {_one_line(block.get('input', {}))}]"))
        elif kind == "tool_result":
            chosen = answers(line.get("toolUseResult"), block.get("content"),
                             asked=str(block.get("tool_use_id") or "") in _ASKED_IDS) if is_user else ""
            if chosen:  # the person's answer to Claude's question, not tool output
                out.append(("answer", chosen))
                continue
            said = feedback(block.get("content")) if is_user else ""
            if said:  # the person's words on rejecting a tool call or a plan
                out.append(("feedback", said))
                continue
            text = clean_text(_tool_result_text(block.get("content")))
            flag = " error" if block.get("is_error") else ""
            if text:
                out.append(("tool", f"[tool result{flag}: {_one_line(text)}]"))
        # thinking, redacted_thinking, images, documents: not content worth extracting
    return out


def _lines(buf: bytes, pos: int):
    """Yield (parsed object or None, byte offset just past the line) for the complete lines of ``buf``,
    which starts at byte ``pos`` of the file."""
    start = 0
    while True:
        nl = buf.find(b"\n", start)
        if nl < 0:
            return  # no newline yet: a truncated or still-growing last line, left for later
        raw = buf[start:nl].strip()
        start = nl + 1
        obj = None
        if raw:
            try:
                obj = json.loads(raw.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError):  # RecursionError: nested thousands deep, a bad line
                obj = None
        yield obj, pos + start


def _valid_offset(fh, offset: int, size: int) -> bool:
    """A stored offset still fits this file: within it and just after a newline."""
    if offset <= 0:
        return offset == 0
    if offset > size:
        return False
    fh.seek(offset - 1)
    return fh.read(1) == b"\n"


def _open(path: str):
    """The transcript opened for reading (``safefile``: a regular file only), or None; a refused one is
    logged once."""
    try:
        return safefile.open_regular(path)
    except safefile.Refused as exc:
        safefile.refuse(exc, "transcript")
    except (OSError, ValueError):
        pass
    return None


def read(path: str, watermark: Watermark | None = None, *, across_compactions: bool = True) -> Batch:
    """Main-chain entries after ``watermark`` (or the whole file), and the watermark past them.

    A missing (or refused: a FIFO, a device) file gives an empty batch and the same watermark. If the
    file shrank or the stored offset no longer falls on a line boundary (the file was replaced), reading
    starts over from the top and ``restarted`` is set. One call reads at most ``MAX_READ_BYTES``; the
    rest is read by the next. A file none of whose lines is a Claude Code line is logged, once.
    ``across_compactions=False``: the chain ends at a compaction boundary even within this read (for a
    reader that wants only the session's end, as the handover and the anchor do).
    """
    mark = watermark or Watermark()
    fh = _open(path) if path else None
    if fh is None:
        return Batch([], mark, False, 0, 0)
    with fh:
        size = os.fstat(fh.fileno()).st_size
        restarted = not _valid_offset(fh, mark.offset, size)
        offset = 0 if restarted else mark.offset
        fh.seek(offset)
        buf = fh.read(min(size - offset, MAX_READ_BYTES)) if size > offset else b""
    nodes: dict[str, dict] = {}
    order: list[str] = []
    ends: dict[str, int] = {}
    has_child: set[str] = set()
    end = offset
    lines = skipped = typed = 0
    queue: list[tuple[dict, int]] = []
    for obj, line_end in _lines(buf, offset):
        lines += 1
        end = line_end
        typed += isinstance(obj, dict) and isinstance(obj.get("type"), str)
        if isinstance(obj, dict) and obj.get("type") == "queue-operation":
            queue.append((obj, line_end))
        if not isinstance(obj, dict) or obj.get("type") not in CHAIN_TYPES or not isinstance(obj.get("uuid"), str):
            skipped += 1
            continue
        uid = obj["uuid"]
        if uid not in nodes:
            order.append(uid)
        nodes[uid] = obj
        ends[uid] = line_end
        parent = obj.get("parentUuid")
        if isinstance(parent, str):
            has_child.add(parent)
    if offset == 0 and lines and not typed:
        safefile.report(path, "an unknown shape: no line is a JSON object with a \"type\" (not Claude Code's "
                              "JSONL); nothing was read from it", "transcript", per_version=False)
    chain = _main_chain(nodes, order, has_child, across_compactions)
    pending = () if restarted else mark.queued
    entries, waiting = _with_queued_only(_entries(chain, ends), queue, pending, offset)
    entries = _with_notes_off_chain(entries, chain, nodes, order, ends)
    if offset and chain:
        _reply_context(path, offset, chain, entries)
    last_uuid = chain[-1]["uuid"] if chain else (None if restarted else mark.uuid)
    return Batch(entries, Watermark(end, last_uuid, waiting), restarted, lines, skipped)


LOOKBACK_BYTES = 1024 * 1024  # before a read's start: where the list a reply answers is looked for


def _reply_context(path: str, offset: int, chain: list[dict], entries: list[Entry]) -> None:
    """A read whose first message of the person's is a numbered reply that no list of this read answers (the
    worker ran when Claude's turn ended, or mid-turn after Claude's list and before its last tool call, so the
    list was read before): the list is looked for walking up the reply's parents, through this read's lines and
    on into the lines before ``offset``, and the reply gets it as its context."""
    first = next((e for e in entries if e.role == "user"), None)
    if first is None or first.kind != "prompt" or not is_reply(first.text):
        return
    line = next((n for n in chain if n["uuid"] == first.uuid), None)
    parent = line.get("parentUuid") if line else None
    fh = _open(path) if isinstance(parent, str) else None
    if fh is None:
        return
    with fh:
        start = max(0, offset - LOOKBACK_BYTES)
        fh.seek(start)
        buf = fh.read(offset - start)
    if start:
        cut = buf.find(b"\n") + 1
        buf, start = buf[cut:], start + cut
    before = {obj["uuid"]: obj for obj, _ in _lines(buf, start)
              if isinstance(obj, dict) and isinstance(obj.get("uuid"), str)}
    # the walk may begin in this read: lines written after Claude's last message (turn-end ``system`` lines,
    # ``progress``) come before the reply here, the list before ``offset``
    before.update((n["uuid"], n) for n in chain if n["uuid"] != first.uuid)
    seen: set[str] = set()
    while isinstance(parent, str) and parent in before and parent not in seen:
        seen.add(parent)
        node = before[parent]
        if node.get("type") == "assistant" and not node.get("isSidechain"):
            # Claude's message the reply follows, whole (its lines of one message id) as a whole read joins it: the
            # list is there or nowhere
            listed = _list_of("\n".join(_message_text(node, before)))
            if listed:
                first.kind, first.context = "reply", listed
            return
        elif node.get("type") == "user" and any(role in ("user", "command") for role, _ in _blocks(node)):
            return  # the person spoke before: no list was answered
        parent = node.get("parentUuid")


def _message_text(node: dict, lines: dict[str, dict]) -> list[str]:
    """Claude's text in ``node`` and in the lines of the same message before it (a message's text and tool calls
    are written as lines of their own), in order."""
    mid = (node.get("message") or {}).get("id")
    texts: list[str] = []
    while True:
        texts.insert(0, "\n".join(text for role, text in _blocks(node) if role == "assistant"))
        up = lines.get(node.get("parentUuid") or "")
        if not (mid and up and up.get("type") == "assistant" and (up.get("message") or {}).get("id") == mid):
            return texts
        node = up


def _is_boundary(line: dict) -> bool:
    """A compaction boundary. The walk crosses it to ``logicalParentUuid`` only within one read: lines before
    it that this read holds were never read (a read waiting for enough conversation can span a compaction),
    while what an earlier read took stays behind the summary."""
    return line.get("type") == "system" and line.get("subtype") == "compact_boundary"


def _main_chain(nodes: dict[str, dict], order: list[str], has_child: set[str],
                across_compactions: bool = True) -> list[dict]:
    """Root-to-leaf lines of the newest main-thread leaf (within what was read).

    As in Anthropic's SDK: each terminal line (no child) walks up to its nearest user or
    assistant line, its leaf; the newest leaf that is not a sidechain, meta or team line wins,
    else the newest leaf that is not a sidechain. A line whose parent is not in this read continues from
    the nearest main-thread line before it in the read, so a missing line costs itself and not everything
    before it: a line that is not JSON (the file was damaged there), a line the file never got (transcripts
    committed to repositories lack some), a line written before its parent (Claude Code writes a tool result
    before its call: a read ending between the two), a compaction boundary whose logical parent Claude Code
    did not write. Only lines of this read are taken, never one an earlier read took; the first line of a
    read that begins mid-conversation has none before it and ends the walk.
    """
    leaves: list[dict] = []
    for uid in reversed(order):  # newest first
        if uid in has_child:
            continue
        node, seen = nodes[uid], set()
        while node is not None and node["uuid"] not in seen and node.get("type") not in ("user", "assistant"):
            seen.add(node["uuid"])
            parent = node.get("parentUuid")
            node = nodes.get(parent) if isinstance(parent, str) else None
        if node is not None and node.get("type") in ("user", "assistant"):
            leaves.append(node)
    main = [n for n in leaves if not (n.get("isSidechain") or n.get("isMeta") or n.get("teamName"))]
    leaf = (main or [n for n in leaves if not n.get("isSidechain")] or [None])[0]
    chain: list[dict] = []
    seen = set()
    position: dict[str, int] = {}
    node = leaf
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        chain.append(node)
        parent = node.get("parentUuid")
        uid, boundary = node["uuid"], parent is None and across_compactions and _is_boundary(node)
        if boundary:
            parent = node.get("logicalParentUuid")  # found only when this read holds it (see _is_boundary)
        node = nodes.get(parent) if isinstance(parent, str) else None
        if node is None and isinstance(parent, str):  # not in this read: go on from the line before it
            node = _before(nodes, order, uid, position)
    chain.reverse()
    return chain


def _before(nodes: dict[str, dict], order: list[str], uid: str, position: dict[str, int]) -> dict | None:
    """The nearest user or assistant line of the main thread before ``uid`` in this read (``position``: the
    index of each uid in ``order``, built on first use)."""
    if not position:
        position.update((u, i) for i, u in enumerate(order))
    for i in range(position[uid] - 1, -1, -1):
        prev = order[i]
        node = nodes[prev]
        if node.get("type") in ("user", "assistant") and not (node.get("isSidechain") or node.get("teamName")):
            return node
    return None


_KINDS = {"answer": "answer", "command": "command", "feedback": "feedback", "memory": "memory"}  # piece role -> kind of a ``user`` entry
_REPLY = re.compile(r"^\s*(?:\d{1,2}|[A-Ha-h])\s*[.):]\s*\S", re.MULTILINE)
# An item of Claude's list: "1.", "B)", or a named option ("**Option 2: Copy the file**").
_LIST_ITEM = re.compile(r"^\s*(?:[#*>\s]*)(?:\*\*)?(?:(?:\d{1,2}|[A-Ha-h])[.)]|(?:option|approach|choice|alternative)\s+"
                        r"(?:\d{1,2}|[A-Ha-h])\s*[:.)])\s*\S", re.MULTILINE | re.IGNORECASE)
MAX_CONTEXT_CHARS = 4000


def _queued(line: dict) -> str:
    """A prompt the person queued while Claude worked (an ``attachment`` of type ``queued_command``)."""
    att = line.get("attachment")
    if not isinstance(att, dict) or att.get("type") != "queued_command":
        return ""
    prompt = att.get("prompt")
    if att.get("commandMode", "prompt") != "prompt" or not isinstance(prompt, str):
        return ""
    return clean_text(prompt) if not prompt.lstrip().startswith("<task-notification>") else ""


_NOT_DELIVERED = ("cleared_on_cancel", "dropped_by_hook")  # a queue ``remove`` that dropped the prompt (2.1.x)


MAX_QUEUED_WAITING = 10  # queued prompts a watermark carries to the next read


def _with_queued_only(entries: list[Entry], queue: list[tuple[dict, int]], waiting: tuple[str, ...] = (),
                      offset: int = 0) -> tuple[list[Entry], tuple[str, ...]]:
    """``entries`` with the prompts that reached Claude only through the queue, each in its file place, and
    the queued prompts whose fate this read cannot see yet.

    Some releases write no line for a queued prompt delivered while Claude works: the queue's
    ``enqueue`` line holds its text and a ``remove`` follows (a prompt submitted the usual way is
    ``dequeue``-d and has its own ``user`` line). An enqueued prompt counts when the next queue
    operation after it is ``remove`` (not one whose ``reason`` says the prompt was dropped) and no line
    of the read carries its text; notifications and slash commands in the queue are the harness's. One
    enqueued with no operation after it yet waits in the watermark (``waiting``, from the read before,
    stands first in the queue), so a read that ends between the two loses nothing.
    """
    ops = [({"operation": "enqueue", "content": text}, offset) for text in waiting] + queue
    said = [" ".join(e.text.split()) for e in entries if e.role == "user"]
    found: list[Entry] = []
    still: list[str] = []
    for i, (op, end) in enumerate(ops):
        content = op.get("content")
        if op.get("operation") != "enqueue" or not isinstance(content, str) or content.lstrip().startswith(("<", "/")):
            continue
        after = next((o for o, _ in ops[i + 1:] if o.get("operation") != "enqueue"), None)
        if after is None:
            still.append(content)
            continue
        delivered = after.get("operation") == "remove" and after.get("reason") not in _NOT_DELIVERED
        text = clean_text(content) if delivered else ""
        flat = " ".join(text.split())
        if flat and not any(flat in s for s in said):
            stamp = op.get("timestamp") if isinstance(op.get("timestamp"), str) else ""
            found.append(Entry(f"queue-{end}-{i}", "user", text, stamp, end, "queued"))
            said.append(flat)
    return _in_file_order(entries, found), tuple(still[-MAX_QUEUED_WAITING:])


def _in_file_order(entries: list[Entry], found: list[Entry]) -> list[Entry]:
    """``entries`` with each of ``found`` inserted at its place in the file (by ``end``)."""
    if not found:
        return entries
    entries = list(entries)
    for entry in found:
        at = next((k for k, e in enumerate(entries) if e.end > entry.end), len(entries))
        entries.insert(at, entry)
    return entries


def _with_notes_off_chain(entries: list[Entry], chain: list[dict], nodes: dict[str, dict], order: list[str],
                          ends: dict[str, int]) -> list[Entry]:
    """``entries`` with the person's memory notes (``_MEMORY_NOTE``) of this read that the main chain does not
    pass through, each in its file place: Claude Code writes a note on a branch of its own and goes on from
    the line before it. Only notes after the chain's first line count (a chain that ends at a compaction
    leaves what came before it out)."""
    if not chain:
        return entries
    on_chain = {n["uuid"] for n in chain}
    start = ends[chain[0]["uuid"]]
    found = [e for uid in order if uid not in on_chain and ends[uid] > start and _holds_note(nodes[uid])
             for e in _entries([nodes[uid]], ends) if e.kind == "memory"]
    return _in_file_order(entries, found)


def _holds_note(line: dict) -> bool:
    """A main-thread user line with a memory note in its text (a cheap test before reading it whole)."""
    message = line.get("message")
    if line.get("type") != "user" or line.get("isSidechain") or not isinstance(message, dict):
        return False
    content = message.get("content")
    texts = [content] if isinstance(content, str) else [
        b.get("text") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    return any(isinstance(t, str) and "<user-memory-input>" in t for t in texts)


def is_reply(text: str) -> bool:
    """A short answer by number or letter (``1.A 2. yes``, ``B``) to a list Claude gave."""
    text = text.strip()
    return len(text) <= 1500 and (bool(_REPLY.match(text)) or bool(re.fullmatch(r"[A-Ha-h1-9][.)]?", text)))


def _list_of(text: str) -> str:
    """Claude's message as the list a reply answers ("" when it has no numbered or lettered items)."""
    if len(_LIST_ITEM.findall(text)) < 2:
        return ""
    return text if len(text) <= MAX_CONTEXT_CHARS else text[-MAX_CONTEXT_CHARS:]


def _entries(chain: list[dict], ends: dict[str, int]) -> list[Entry]:
    """Visible messages of the chain, assistant lines of one response merged by ``message.id``."""
    out: list[Entry] = []
    by_message: dict[str, tuple[Entry, set[str]]] = {}
    for line in chain:
        if line.get("type") == "attachment":
            text = _queued(line)
            if text and isinstance(line.get("uuid"), str):
                stamp = line.get("timestamp") if isinstance(line.get("timestamp"), str) else ""
                out.append(Entry(line["uuid"], "user", text, stamp, ends[line["uuid"]], "queued"))
            continue
        if line.get("type") not in ("user", "assistant") or line.get("isMeta") or line.get("isSidechain"):
            continue
        if line.get("isVisibleInTranscriptOnly") and not line.get("isCompactSummary"):
            continue
        pieces = _blocks(line)
        if not pieces:
            continue
        uid, stamp = line["uuid"], line.get("timestamp") if isinstance(line.get("timestamp"), str) else ""
        message = line.get("message") or {}
        mid = message.get("id") if line.get("type") == "assistant" else None
        if isinstance(mid, str) and mid in by_message:
            target, seen = by_message[mid]
            fresh = [text for _, text in pieces if text not in seen]
            seen.update(fresh)
            if fresh:
                target.text = _clip("\n".join([target.text, *fresh]), MAX_TEXT_CHARS)
            target.uuid, target.end = uid, ends[uid]
            continue
        for role, text in pieces:  # consecutive pieces of one role become one entry
            kind = _KINDS.get(role, "prompt" if role == "user" else "")
            role = "user" if role in _KINDS else role
            if role != "user":
                text = _clip(text, MAX_TEXT_CHARS)  # what the person typed is never cut
            if out and out[-1].uuid == uid and out[-1].role == role and out[-1].kind == kind:
                out[-1].text = f"{out[-1].text}\n{text}" if role == "user" else _clip(f"{out[-1].text}\n{text}",
                                                                                    MAX_TEXT_CHARS)
                continue
            entry = Entry(uid, role, text, stamp, ends[uid], kind)
            if kind == "prompt" and is_reply(text):
                # the list Claude gave last, unless the person spoke (a /compact too) or a compaction came since
                last = next((e for e in reversed(out) if e.role != "tool"), None)
                listed = _list_of(last.text) if last and last.role == "assistant" else ""
                if listed:
                    entry.kind, entry.context = "reply", listed
            out.append(entry)
        if isinstance(mid, str):
            by_message[mid] = (out[-1], {text for _, text in pieces})
    return out


# Built-in commands that run the harness, not a request for work.
HOUSEKEEPING = frozenset(
    "/compact /clear /exit /quit /cost /model /help /context /status /resume /login /logout /mcp /config /memory "
    "/permissions /doctor /init /ide /terminal-setup /vim /theme /usage /agents /hooks /plugin /export /rewind "
    "/add-dir /bug /release-notes /upgrade /statusline /output-style /todos /fast /btw /rate-limit-options "
    "/extra-usage /privacy-settings /feedback /stickers /sandbox /skills /keybindings /install-github-app "
    "/remote-env".split())
_GREETING = r"hey|hi|hello|good (?:morning|afternoon|evening)|hallo|moin|hola|你好|嗨|안녕(?:하세요)?|สวัสดี(?:ครับ|ค่ะ)?"
_ACK_WORD = (rf"(?:{_GREETING}|"
             r"ok(?:ay)?|k|yes|yep|yeah|y|no|nope|sure|thanks?|thank you|thx|great|perfect|nice|cool|good|done|"
             r"go|go on|go ahead|continue|proceed|keep going|carry on|next|lgtm|do it|sounds good|looks good|please|"
             r"weiter|ja|nein|danke|好|好的|继续|可以|是|对|谢谢|네|응|계속|감사|ครับ|ค่ะ|ได้|ต่อ|ขอบคุณ)")
_ACK = re.compile(rf"^{_ACK_WORD}(?:[\s,.!。！~]+{_ACK_WORD})*[\s,.!。！~]*$", re.IGNORECASE)


# An acknowledgement or greeting opening a request ("Okay let's do controllers now!", "Great, now add tests"):
# the request is what follows it.
_LEAD_ACK = re.compile(
    rf"^(?:(?:ok(?:ay)?|alright|all right)\b[\s,.!]*|(?:{_GREETING}|great|perfect|thanks?|thank you|nice|cool|"
    r"awesome|excellent|好的|好|谢谢|네|좋아요?|ครับ|ค่ะ)\s*[,.!。！，]+\s*)+", re.IGNORECASE)


def request_text(text: str) -> str:
    """A request without the acknowledgement or greeting it opens with (the whole text when that is all)."""
    text = text.strip()
    rest = _LEAD_ACK.sub("", text, count=1)
    return rest[:1].upper() + rest[1:] if rest and rest != text else text


def substantive(entry: Entry) -> bool:
    """A request for work: a prompt, a queued prompt or a slash command the person typed, not an
    acknowledgement ("ok", "continue"), not a housekeeping command (``/compact``), not an answer."""
    if entry.role != "user" or entry.kind not in ("prompt", "queued", "command"):
        return False
    text = entry.text.strip()
    if entry.kind == "command" and text.split(maxsplit=1)[0].lower() in HOUSEKEEPING:
        return False
    return bool(text) and not _ACK.match(text)


def _tail(path: str):
    """(parsed object or None, byte offset past the line) of the file's last ``MAX_READ_BYTES``, from a line
    start: what is wanted of a session's end. Empty for a missing or refused file (logged once)."""
    fh = _open(path) if path else None
    if fh is None:
        return
    with fh:
        size = os.fstat(fh.fileno()).st_size
        pos = max(0, size - MAX_READ_BYTES)
        fh.seek(pos)
        buf = fh.read(size - pos)
    if pos:
        cut = buf.find(b"\n") + 1
        buf, pos = buf[cut:], pos + cut
    yield from _lines(buf, pos)


def person_entries(path: str) -> list[Entry]:
    """Everything the person typed in the file, in file order, across compactions and sessionIds
    (sidechains and meta lines left out)."""
    lines: list[dict] = []
    ends: dict[str, int] = {}
    queue: list[tuple[dict, int]] = []
    for obj, end in _tail(path):
        if isinstance(obj, dict) and obj.get("type") in ("user", "attachment") and isinstance(obj.get("uuid"), str):
            if not obj.get("isSidechain"):
                lines.append(obj)
                ends[obj["uuid"]] = end
        elif isinstance(obj, dict) and obj.get("type") == "queue-operation":
            queue.append((obj, end))
    return [e for e in _with_queued_only(_entries(lines, ends), queue)[0] if e.role == "user"]


class Step:
    """One thing the session did, in file order: a tool call with its outcome (``tool``: its name, ``command``
    for Bash, ``files`` for a file edit, ``failed``, ``output``), or an API error in Claude's place (``tool`` is
    ``api_error``, ``output`` its message), or Claude's reply (``tool`` is ``reply``)."""

    __slots__ = ("end", "tool", "command", "files", "failed", "output")

    def __init__(self, end: int, tool: str, command: str = "", files: tuple = (), failed: bool = False,
                 output: str = ""):
        self.end, self.tool, self.command, self.files, self.failed, self.output = end, tool, command, files, failed, output

    def __repr__(self) -> str:
        return f"Step({self.tool}, {self.command or self.output[:40]!r}, failed={self.failed})"


MAX_STEP_OUTPUT = 200_000  # of one tool result: errors and summaries are at its start and end
_FILE_KEYS = ("file_path", "notebook_path")


def _api_error(line: dict, content: list) -> str:
    """The message of an API error Claude Code wrote in Claude's place ("" for any other line)."""
    if not line.get("isApiErrorMessage"):
        return ""
    text = " ".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    inner = re.search(r'"message"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
    if inner:
        text = f"{text.split('{', 1)[0].strip()} {inner.group(1)}"
    return " ".join(text.split())


def tool_steps(path: str) -> list[Step]:
    """What the session did, in file order (the file's tail, sidechains left out): tool calls with their
    outcome, API errors, and Claude's replies; for telling which errors still stand at the end."""
    calls: dict[str, tuple[str, dict]] = {}
    out: list[Step] = []
    for obj, end in _tail(path):
        if not isinstance(obj, dict) or obj.get("isSidechain") or obj.get("type") not in ("user", "assistant"):
            continue
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        if obj["type"] == "assistant":
            error = _api_error(obj, content)
            if error:
                out.append(Step(end, "api_error", failed=True, output=error))
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    args = block.get("input") if isinstance(block.get("input"), dict) else {}
                    calls[block["id"]] = (str(block.get("name") or ""), args)
                elif block.get("type") == "text" and str(block.get("text") or "").strip():
                    out.append(Step(end, "reply"))
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            name, args = calls.pop(block.get("tool_use_id"), ("", {}))
            if not name:
                continue
            text = _tool_result_text(block.get("content"))
            if len(text) > MAX_STEP_OUTPUT:
                text = text[: MAX_STEP_OUTPUT // 2] + "\n" + text[-MAX_STEP_OUTPUT // 2:]
            command = args.get("command") if name == "Bash" and isinstance(args.get("command"), str) else ""
            files = tuple(v for k in _FILE_KEYS if isinstance(v := args.get(k), str) and v) if not command else ()
            out.append(Step(end, name, command, files, bool(block.get("is_error")), text))
    return out


# A short reply to Claude's closing question is an answer, not a new request (:func:`answers_claude`): one that opens by
# saying yes, or whose words Claude's message named (an alternative it offered). At most this many words (for
# text written without spaces, ANSWER_CHARS characters).
ANSWER_WORDS = 5
ANSWER_CHARS = 12
# A yes that answers (not "ok", which as often opens a new request: "ok, now add the export").
_YES = re.compile(
    r"^(?:yes|yep|yeah|yup|sure|ja|jawohl|genau|oui|sí|si|sim|claro|да|ага|vâng|có|được|"
    r"是的?|好的?|可以|对|行|嗯|はい|ええ|うん|네|예|응|좋아요?|ใช่|ได้)(?=$|[\s,.!。！，、~])", re.IGNORECASE)
_ANSWER_WORD = re.compile(r"\w+")


def said(entry: Entry) -> str:
    """What a message says in words: its text less the ``[tool …]`` lines that stand for its tool calls."""
    return "\n".join(ln for ln in entry.text.splitlines() if not ln.startswith("[tool ")).strip()


CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)  # a Markdown code block, closed or running to the end
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n")
_ENDS_ASKING = re.compile(r"[?？][)\]\"'»”*]*$")


def question(text: str) -> str:
    """The question Claude's text ends on, "" when none: a sentence ending in a question mark in its last
    paragraph, code blocks aside ("Should it go through Git? For example: ```scp …```" asks)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", CODE_FENCE.sub("\n\n", text)) if p.strip()]
    if not paragraphs:
        return ""
    found = [x.strip(" -*•") for x in _SENTENCE_END.split(paragraphs[-1].replace("**", "")) if _ENDS_ASKING.search(x.strip())]
    return found[-1] if found else ""


def asks(text: str) -> bool:
    """Whether Claude's text ends on a question (:func:`question`)."""
    return bool(question(text))


def answers_claude(entry: Entry, claude_said: str) -> bool:
    """Whether a prompt is a short answer to the question Claude's message before it ends on (``claude_said``,
    nothing when the person spoke since): it opens with a yes ("yes, do that", "응 그렇게 해줘") or each of its
    words is in Claude's message ("Git" to "…through Git, or as a zip?"). Such a reply continues the request
    Claude asked about; it is not a new one (:func:`latest_request`)."""
    if entry.kind not in ("prompt", "queued") or not asks(claude_said):
        return False
    text = entry.text.strip()
    words = _ANSWER_WORD.findall(text.lower())
    spaced = len(text.split()) > 1 or text.isascii()
    if not words or (len(words) > ANSWER_WORDS if spaced else len("".join(text.split())) > ANSWER_CHARS):
        return False
    if _YES.match(text):
        return True
    offered = set(_ANSWER_WORD.findall(claude_said.lower()))
    return spaced and all(w in offered for w in words)


def _claude_before(chain: list[Entry]) -> dict[str, str]:
    """For each prompt of ``chain`` (a read's entries), Claude's last text before it with no message of the
    person's between; absent when the person spoke last, and for a reply by number or letter to Claude's list
    (the request names what it picked: ``handover.task_text``)."""
    out: dict[str, str] = {}
    last = ""
    for e in chain:
        if e.role == "assistant":
            last = said(e) or last
        elif e.role == "user":
            if last and e.kind in ("prompt", "queued"):
                out[e.uuid] = last
            last = ""
    return out


# A prompt that tells Claude to go on, saying how ("continue and in parallel", "proceed, but skip the docs"): the
# request in progress goes on with what it adds; it is not a new one.
_CONTINUES = re.compile(
    r"^(?:ok(?:ay)?[\s,.!]*)?(?:continue|proceed|go on|keep going|carry on|resume|weiter|mach weiter|continúa|continua|"
    r"continuez|продолжай|продолжи|继续|계속|ต่อ)\b", re.IGNORECASE)


def continues(entry: Entry) -> bool:
    """Whether a prompt tells Claude to go on with the request in progress (with or without more said)."""
    return entry.kind in ("prompt", "queued") and bool(_CONTINUES.match(entry.text.strip()))


def latest_request(path: str, chain: list[Entry] | None = None) -> Entry | None:
    """The person's latest substantive request in the file (see :func:`substantive`), or None; a prompt that
    tells Claude to go on (:func:`continues`) is passed over for the request before it. With ``chain`` (the
    entries of a read of the file), so is a short answer to Claude's question in it (:func:`answers_claude`).
    When the file holds nothing else (the request was made in an earlier file), the latest of those is it."""
    before = _claude_before(chain) if chain else {}
    requests = [e for e in person_entries(path) if substantive(e)]
    return next((e for e in reversed(requests) if not continues(e) and not answers_claude(e, before.get(e.uuid, ""))),
                requests[-1] if requests else None)
