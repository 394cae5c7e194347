"""Capture on real sessions: replay the labelled dev split through the real hook processes (issue 19).

Run from the repository root::

    uv run python bench/eval/transcripts.py                 # all 21 transcripts, the no-model path
    uv run python bench/eval/transcripts.py --model-input   # and a second replay with a key (fake API)
    uv run python bench/eval/transcripts.py --only 18-      # the transcripts whose name contains "18-"
    uv run python bench/eval/transcripts.py --oracle-only   # only the oracle store (retrieval; no replay, ~5 min)

The split lives in ``../shared/eval/transcripts-dev/`` (looked for next to the repository and above it,
or ``--dev DIR``); it is never copied here. Without it the script says so and exits 0.

The method is the split's README: each transcript is one project (a fresh store, a git folder). Its
lines are played in file order as Claude Code fires the plugin's hooks, each one ``sh hooks/launch.sh
<hook>`` with the JSON payload on stdin: SessionStart at the first line of a sessionId (``resume`` when
one comes back, ``compact`` after a compaction boundary), UserPromptSubmit for each prompt the person
typed (slash commands as ``/name args``, queued prompts too), PostToolUse / PostToolUseFailure for each
tool result that hooks.json's matchers select (with the tool's input), SubagentStart / SubagentStop
around Task/Agent calls, Stop at the end of each assistant turn (``transcript_path``: a file holding the
transcript up to that line), PreCompact before each compaction boundary, SessionEnd at the end of each
sessionId; then it waits until no process of that store is left. No key, no login (the no-model path).

Figures, per transcript and overall (bench/results/transcripts.md and .json): statement recall (by type,
``via`` and language) and precision; handover correct and not stale; answered from memory and tokens
injected; with ``--model-input``, the share of statements whose quote reaches an extraction request
verbatim; noise (records by source and type) and junk; oracle memory and foreign questions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.sax.saxutils import unescape

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

LAUNCH = ROOT / "hooks" / "launch.sh"
RESULTS = ROOT / "bench" / "results"
MATCH = 0.60  # the README's matching rule
ANSWER_TYPES = ("decision", "convention", "preference")
POST_TOOL = {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}  # hooks.json matchers
POST_TOOL_FAILURE = {"Bash"}
SUBAGENT_TOOLS = {"Task", "Agent"}

# ---------------------------------------------------------------------------------------
# Matching (the README's rule)
# ---------------------------------------------------------------------------------------

STOP = set("the and or of to in on for is it be we that this with as at by an so are was were will can "
           "you your my me our us its from into then than there here if but also just".split())
_CJK = r"\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(f"[^\\W_{_CJK}]{{2,}}")


def tokens(text: str) -> set[str]:
    """Lower-cased words of 2+ characters less a stop list; character bigrams of CJK and Thai runs."""
    text = (text or "").lower()
    out = {w for w in _WORD.findall(text) if w not in STOP}
    for run in _CJK_RUN.findall(text):
        out.update(run[i:i + 2] for i in range(len(run) - 1)) if len(run) > 1 else out.add(run)
    return out


def score(quote: str, text: str) -> float:
    want = tokens(quote)
    return len(want & tokens(text)) / len(want) if want else 0.0


def assign(statements: list[dict], recs: list[dict]) -> dict[int, dict]:
    """Statement index -> record: one-to-one, best first, at >= MATCH."""
    pairs = []
    rec_tokens = [tokens(f"{r['title']} {r['body']}") for r in recs]
    for i, s in enumerate(statements):
        want = tokens(s["quote"])
        if not want:
            continue
        for j, have in enumerate(rec_tokens):
            sc = len(want & have) / len(want)
            if sc >= MATCH:
                pairs.append((sc, i, j))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    out, used = {}, set()
    for _, i, j in pairs:
        if i in out or j in used:
            continue
        out[i] = recs[j]
        used.add(j)
    return out


# ---------------------------------------------------------------------------------------
# Reading a transcript: what Claude Code would fire
# ---------------------------------------------------------------------------------------

_TAG = re.compile(r"<(command-name|command-args|command-message)>(.*?)</\1>", re.DOTALL)
_NOT_TYPED = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>", "<bash-input>",
              "<bash-stdout>", "<bash-stderr>", "<task-notification>", "[Request interrupted", "<user-prompt-submit-hook>")
_INJECTED = ("<system-reminder>", "<ide_opened_file>", "<ide_selection>", "<ide_diagnostics>")


def typed_text(obj: dict) -> str | None:
    """What the person typed on a ``user`` line (a slash command as ``/name args``), or None."""
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isSidechain") or obj.get("isCompactSummary"):
        return None
    if obj.get("isVisibleInTranscriptOnly"):
        return None
    content = (obj.get("message") or {}).get("content") if isinstance(obj.get("message"), dict) else None
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    else:
        return None
    kept = []
    for part in parts:
        text = part.strip()
        if not text or text.startswith(_INJECTED):
            continue
        if text.startswith(_NOT_TYPED):
            return None
        if "<command-name>" in text:
            tags = {k: v.strip() for k, v in _TAG.findall(text)}
            text = f"{tags.get('command-name', '')} {tags.get('command-args', '')}".strip()
        kept.append(text)
    text = "\n".join(kept).strip()
    if text.startswith("This session is being continued from a previous conversation"):
        return None
    return text or None


def queued_text(obj: dict) -> str | None:
    """A prompt the person queued while Claude worked (an ``attachment`` of type ``queued_command``)."""
    att = obj.get("attachment") if obj.get("type") == "attachment" else None
    if isinstance(att, dict) and att.get("type") == "queued_command" and att.get("commandMode", "prompt") == "prompt":
        prompt = att.get("prompt")
        if isinstance(prompt, str) and prompt.strip() and not prompt.lstrip().startswith("<task-notification>"):
            return prompt.strip()
    return None


def _result_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def parse_lines(path: Path) -> list[tuple[str, dict | None]]:
    out = []
    with open(path, "rb") as fh:
        for raw in fh:
            text = raw.decode("utf-8", errors="replace")
            try:
                obj = json.loads(text)
            except ValueError:
                obj = None
            out.append((text if text.endswith("\n") else text + "\n", obj if isinstance(obj, dict) else None))
    return out


def line_texts(lines) -> dict[str, str]:
    """uuid -> what the person typed on that line (for the handover's request)."""
    out = {}
    for _, obj in lines:
        if obj and isinstance(obj.get("uuid"), str):
            text = typed_text(obj) or queued_text(obj)
            if text:
                out[obj["uuid"]] = text
    return out


# ---------------------------------------------------------------------------------------
# Running hooks
# ---------------------------------------------------------------------------------------


def hook_env(home: Path, extra: dict | None = None) -> dict[str, str]:
    env = {
        "PATH": os.pathsep.join(dict.fromkeys([str(Path.home() / ".local" / "bin"), "/usr/local/bin", "/usr/bin",
                                               "/bin", str(Path(shutil.which("uv") or "/usr/bin/uv").parent)])),
        "HOME": str(Path.home()), "LANG": "C.UTF-8", "AGENTCTX_HOME": str(home), "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "AGENTCTX_LLM": "0",
    }
    for name in ("UV_CACHE_DIR", "XDG_CACHE_HOME", "UV_PYTHON_INSTALL_DIR", "SSL_CERT_FILE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    env.update(extra or {})
    return env


class Runner:
    """Runs hooks for one project and keeps count of what happened."""

    def __init__(self, home: Path, project: Path, env: dict[str, str]):
        self.home, self.project, self.env = home, project, env
        self.counts: Counter = Counter()
        self.failures: list[str] = []

    def hook(self, name: str, payload: dict) -> str:
        payload = {"cwd": str(self.project), **payload}
        self.counts[name] += 1
        env = self.env
        if name == "post_tool_use":
            # launch.sh hands PostToolUse to a detached process; in a session tool calls are seconds apart, so each
            # one's observation is stored before the next: the replay, which fires them back to back, runs it in place.
            env = {**env, "AGENTCTX_HOOK_DETACHED": "no"}
        try:
            done = subprocess.run(["sh", str(LAUNCH), name], input=json.dumps(payload).encode(), capture_output=True,
                                  timeout=120, env=env, cwd=str(self.project))
        except subprocess.TimeoutExpired:
            self.failures.append(f"{name}: timeout")
            return ""
        if done.returncode != 0:
            self.failures.append(f"{name}: exit {done.returncode}")
        out = done.stdout.decode(errors="replace").strip()
        if not out:
            return ""
        try:
            data = json.loads(out)
        except ValueError:
            self.failures.append(f"{name}: stdout is not JSON")
            return ""
        spec = data.get("hookSpecificOutput") or {}
        return str(spec.get("additionalContext") or "")

    def wait_background(self, timeout: float = 600) -> None:
        """Until no process runs with this store (workers, the detached SessionEnd, consolidation)."""
        mark = f"AGENTCTX_HOME={self.home}".encode()
        deadline = time.monotonic() + timeout
        time.sleep(0.5)
        while time.monotonic() < deadline:
            busy = False
            for pid in os.listdir("/proc"):
                if not pid.isdigit() or int(pid) == os.getpid():
                    continue
                try:
                    with open(f"/proc/{pid}/environ", "rb") as fh:
                        if mark in fh.read().split(b"\0"):
                            busy = True
                            break
                except OSError:
                    continue
            if not busy:
                return
            time.sleep(0.3)
        self.failures.append("background work still running after the timeout")


def replay(lines, runner: Runner, transcript: Path) -> None:
    """Fire the hooks of one transcript in file order (see the module docstring)."""
    transcript.write_text("")
    fh = open(transcript, "a", encoding="utf-8")
    seen: set[str] = set()
    current: str | None = None
    tools: dict[str, tuple[str, dict]] = {}
    turn_open = False
    last_text = ""
    compact_start = False

    def flush() -> None:
        fh.flush()

    def stop() -> None:
        nonlocal turn_open
        if turn_open and current:
            flush()
            runner.hook("stop", {"hook_event_name": "Stop", "session_id": current, "transcript_path": str(transcript),
                                 "stop_hook_active": False, "last_assistant_message": last_text})
        turn_open = False

    def end(sid: str) -> None:
        flush()
        runner.hook("session_end", {"hook_event_name": "SessionEnd", "session_id": sid,
                                    "transcript_path": str(transcript), "reason": "other"})

    def start(sid: str, source: str) -> None:
        flush()
        runner.hook("session_start", {"hook_event_name": "SessionStart", "session_id": sid, "source": source,
                                      "transcript_path": str(transcript)})

    for raw, obj in lines:
        sid = obj.get("sessionId") if obj else None
        if isinstance(sid, str) and sid and sid != current:
            if current:
                stop()
                end(current)
            start(sid, "resume" if sid in seen else "startup")
            seen.add(sid)
            current = sid
        boundary = bool(obj) and obj.get("type") == "system" and obj.get("subtype") == "compact_boundary"
        prompt = (typed_text(obj) or queued_text(obj)) if obj else None
        if boundary and current:
            stop()
            meta = obj.get("compactMetadata") or {}
            flush()
            runner.hook("pre_compact", {"hook_event_name": "PreCompact", "session_id": current,
                                        "transcript_path": str(transcript), "trigger": meta.get("trigger", "auto"),
                                        "custom_instructions": ""})
        if prompt and current and obj.get("type") == "user":
            stop()
        fh.write(raw)
        if boundary:
            compact_start = True
            continue
        if compact_start and current:
            flush()
            start(current, "compact")
            compact_start = False
        if not obj or not current or obj.get("isSidechain"):
            continue
        if prompt:
            flush()
            runner.hook("user_prompt_submit", {"hook_event_name": "UserPromptSubmit", "session_id": current,
                                               "transcript_path": str(transcript), "prompt": prompt})
            continue
        message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        content = message.get("content")
        if obj.get("type") == "assistant" and isinstance(content, list):
            turn_open = True
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and block.get("text"):
                    last_text = block["text"]
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    name, args = str(block.get("name") or ""), block.get("input") if isinstance(block.get("input"), dict) else {}
                    tools[block["id"]] = (name, args)
                    if name in SUBAGENT_TOOLS:
                        flush()
                        runner.hook("subagent_start", {"hook_event_name": "SubagentStart", "session_id": current,
                                                       "transcript_path": str(transcript), "agent_id": block["id"],
                                                       "agent_type": args.get("subagent_type") or "general-purpose"})
        elif obj.get("type") == "user" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                name, args = tools.get(block.get("tool_use_id"), ("", {}))
                text = _result_text(block.get("content"))
                flush()
                if name in SUBAGENT_TOOLS:
                    runner.hook("subagent_stop", {"hook_event_name": "SubagentStop", "session_id": current,
                                                  "transcript_path": str(transcript), "agent_id": block.get("tool_use_id"),
                                                  "agent_type": args.get("subagent_type") or "general-purpose",
                                                  "last_assistant_message": text, "stop_hook_active": False})
                elif block.get("is_error") and name in POST_TOOL_FAILURE:
                    runner.hook("post_tool_use", {"hook_event_name": "PostToolUseFailure", "session_id": current,
                                                  "transcript_path": str(transcript), "tool_name": name,
                                                  "tool_input": args, "tool_use_id": block.get("tool_use_id"),
                                                  "error": text, "is_interrupt": False})
                elif not block.get("is_error") and name in POST_TOOL:
                    response = obj.get("toolUseResult")
                    if not isinstance(response, dict):
                        response = {"stdout": text, "stderr": "", "interrupted": False}
                    runner.hook("post_tool_use", {"hook_event_name": "PostToolUse", "session_id": current,
                                                  "transcript_path": str(transcript), "tool_name": name,
                                                  "tool_input": args, "tool_response": response,
                                                  "tool_use_id": block.get("tool_use_id")})
    if current:
        stop()
        end(current)
    fh.close()


# ---------------------------------------------------------------------------------------
# Reading the store after a replay
# ---------------------------------------------------------------------------------------


_ENV_LOCK = threading.Lock()  # the store is found through AGENTCTX_HOME: one reader at a time


def _store(home: Path, project: Path):
    os.environ["AGENTCTX_HOME"] = str(home)
    from agentctx import paths
    from agentctx import project as project_mod
    from agentctx.store import db, projects

    conn = db.connect(paths.db_path())
    proj = project_mod.detect(str(project))
    projects.register(conn, proj)
    return conn, proj


def current_records(home: Path, project: Path) -> tuple[list[dict], dict | None]:
    with _ENV_LOCK:
        return _current_records(home, project)


def _current_records(home: Path, project: Path) -> tuple[list[dict], dict | None]:
    conn, proj = _store(home, project)
    try:
        rows = conn.execute("SELECT * FROM records WHERE (project_id = ? OR scope = 'global') "
                            "AND superseded_at IS NULL AND archived_at IS NULL ORDER BY recorded_at", (proj.id,))
        recs = [dict(r) for r in rows.fetchall()]
        from agentctx.capture import handover

        head = handover.read(conn, proj.id)
        return recs, head
    finally:
        conn.close()


_JUNK = re.compile(
    r"^(?:\S+ subagent concluded: )?(?:hi|hello|hey|thanks?|thank you|great|excellent|perfect|awesome|nice|ok(?:ay)?|"
    r"done|pushed successfully|all set|sure|got it|sounds good|cool)\b[\s\S]{0,40}$"
    r"|this session is being continued|<analysis>|^(?:\S+ subagent concluded: )?(?:summary|analysis):"
    r"|^(?:tests? (?:pass|fail)\w*: )?`?(?:docker run|npx |uv run |bundle exec |(?:yarn|pnpm|npm|bun) (?:test|run|exec)\b)",
    re.I)


def is_junk(rec: dict) -> bool:
    """A record nobody wants back: a greeting, an acknowledgement, a compaction summary, a command line."""
    return bool(_JUNK.search(rec["title"].strip()))


def ask(runner: Runner, question: str, sid: str, with_start: bool = True) -> tuple[str, str]:
    start = runner.hook("session_start", {"hook_event_name": "SessionStart", "session_id": sid,
                                          "source": "startup"}) if with_start else ""
    prompt = runner.hook("user_prompt_submit", {"hook_event_name": "UserPromptSubmit", "session_id": sid,
                                                "prompt": question})
    return start, prompt


def answered(label: dict, recs: list[dict], runner: Runner, tag: str) -> dict:
    """Questions with statement quotes: does a new session get a record matching one of them?"""
    from agentctx.budgets import estimate_tokens

    out = {"asked": 0, "answered": 0, "prompt_tokens": 0, "start_tokens": 0, "detail": []}
    for n, q in enumerate(label.get("questions") or []):
        quotes = q.get("statement_quotes") or []
        if not quotes:
            continue
        ids = {r["id"] for r in recs if any(score(quote, f"{r['title']} {r['body']}") >= MATCH for quote in quotes)}
        start, prompt = ask(runner, q["q"], f"{tag}-q{n}")
        hit = any(i in start or i in prompt for i in ids)
        out["asked"] += 1
        out["answered"] += hit
        out["prompt_tokens"] += estimate_tokens(prompt) if prompt else 0
        out["start_tokens"] += estimate_tokens(start) if start else 0
        out["detail"].append({"q": q["q"], "answered": hit, "matching_records": len(ids)})
    return out


# ---------------------------------------------------------------------------------------
# The handover
# ---------------------------------------------------------------------------------------


def handover_figures(label: dict, head: dict | None, request: str | None) -> dict:
    fields = (head or {}).get("fields") or {}
    rec = (head or {}).get("record")
    text = " ".join([rec["title"], rec["body"]]) if rec else ""
    out: dict = {"has": bool(rec), "current_task": fields.get("current_task", "")}
    if request is None:
        out["correct"] = None
    else:
        out["correct"] = bool(rec) and score(request[:300], text) >= MATCH
    task = label.get("task_at_end") or {}
    done = [d for d in task.get("done") or [] if d]
    stale_steps = [s for s in fields.get("next_steps") or [] if any(score(s, d) >= MATCH for d in done)]
    blockers = fields.get("blockers") or []
    stale_blockers = [b for b in blockers if not any(score(b, lb) >= MATCH or score(lb, b) >= MATCH
                                                     for lb in task.get("blockers") or [])]
    out["stale_next_steps"], out["stale_blockers"] = stale_steps, stale_blockers
    out["not_stale"] = bool(rec) and not stale_steps and not stale_blockers
    return out


# ---------------------------------------------------------------------------------------
# What a model would see: a fake Messages API on loopback
# ---------------------------------------------------------------------------------------

_EMPTY = json.dumps({"decisions": [], "preferences": [], "conventions": [], "active_work": None, "gotchas": [],
                     "flush_ok": True})


class FakeAPI:
    """Answers every POST /v1/messages with an empty extraction and keeps the request bodies."""

    def __init__(self):
        self.bodies: list[dict] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                api.bodies.append(body)
                reply = {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "x"),
                         "content": [{"type": "text", "text": _EMPTY}], "stop_reason": "end_turn",
                         "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 10}}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def texts(self) -> str:
        parts = []
        for body in self.bodies:
            for msg in body.get("messages") or []:
                content = msg.get("content")
                parts.append(content if isinstance(content, str) else _result_text(content))
        return unescape(" ".join(parts), {"&quot;": '"', "&apos;": "'"})

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _flat(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------
# One transcript
# ---------------------------------------------------------------------------------------


def _project(work: Path) -> Path:
    project = work / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def run_one(path: Path, label: dict, request_uuid: str | None, work: Path, model_input: bool) -> dict:
    lines = parse_lines(path)
    home, project = work / "home", _project(work)
    runner = Runner(home, project, hook_env(home))
    began = time.monotonic()
    replay(lines, runner, work / "transcript.jsonl")
    runner.wait_background()
    replay_s = time.monotonic() - began
    recs, head = current_records(home, project)
    statements = label.get("statements") or []
    pool = [r for r in recs if r["type"] != "handover"]
    matched = assign(statements, pool)
    written = [r for r in recs if r["type"] in ANSWER_TYPES]
    written_ids = {r["id"] for r in written}
    prec_matched = assign(statements, written)
    out: dict = {
        "file": path.name, "lines": len(lines), "broken_lines": sum(1 for _, o in lines if o is None),
        "replay_s": round(replay_s, 1), "hooks": dict(runner.counts), "hook_failures": runner.failures[:10],
        "statements": [], "records": len(recs),
        "written_dcp": len(written), "written_dcp_matched": len(prec_matched),
        # what precision counts against: the decision/convention/preference records no statement matches
        "unmatched_dcp": [f"{r['type']}: {r['title'][:160]}" for r in written
                          if r["id"] not in {m["id"] for m in prec_matched.values()}],
    }
    for i, s in enumerate(statements):
        rec = matched.get(i)
        out["statements"].append({"type": s["type"], "via": s.get("via") or "typed", "lang": s.get("lang") or "en",
                                  "uncertain": bool(s.get("uncertain")), "matched": rec is not None,
                                  "by_dcp": rec is not None and rec["id"] in written_ids, "quote": s["quote"][:80]})
    texts = line_texts(lines)
    request = texts.get(request_uuid) if request_uuid else None
    out["handover"] = handover_figures(label, head, request)
    out["memory"] = answered(label, recs, runner, "eval")
    out["noise"] = dict(Counter(f"{r['source']}/{r['type']}" for r in recs))
    sessions = len({o.get("sessionId") for _, o in lines if o and o.get("sessionId")}) or 1
    out["sessions"] = sessions
    out["junk"] = [r["title"][:100] for r in recs if is_junk(r)]
    if model_input:
        out["model_input"] = model_pass(lines, statements, work / "model")
    return out


def model_pass(lines, statements: list[dict], work: Path) -> dict:
    """Replay again with a key against the fake API; which statement quotes reach a request verbatim."""
    from agentctx.redact import redact

    work.mkdir(parents=True)
    api = FakeAPI()
    try:
        home, project = work / "home", _project(work)
        env = hook_env(home, {"ANTHROPIC_API_KEY": "sk-ant-fake-key-for-eval", "ANTHROPIC_BASE_URL": api.url,
                              "AGENTCTX_LLM": "1", "AGENTCTX_EXTRACT_IDLE": "1"})
        runner = Runner(home, project, env)
        replay(lines, runner, work / "transcript.jsonl")
        runner.wait_background()
        seen = _flat(api.texts())
    finally:
        api.close()
    hits = [_flat(redact(s["quote"])) in seen for s in statements]
    return {"requests": len(api.bodies), "statements": len(statements), "seen": sum(hits),
            "missed": [s["quote"][:80] for s, h in zip(statements, hits, strict=True) if not h]}


# ---------------------------------------------------------------------------------------
# The oracle store
# ---------------------------------------------------------------------------------------


def oracle(labels: dict[str, dict], lines_by_file: dict[str, list], work: Path) -> dict:
    """A store per project holding exactly the labelled statements; its questions, and foreign ones."""
    from agentctx.store import records

    per: dict[str, dict] = {}
    questions = [(name, q["q"]) for name, lab in labels.items() for q in lab.get("questions") or []]
    for name, lab in labels.items():
        base = work / f"oracle-{name}"
        home, project = base / "home", _project(base)
        conn, proj = _store(home, project)
        stamps = {o.get("uuid"): o.get("timestamp") for _, o in lines_by_file[name] if o}
        recs = []
        try:
            for s in lab.get("statements") or []:
                scope = s.get("scope", "project") if s["type"] == "preference" else "project"
                rec = records.add(conn, proj.id, type=s["type"], title=s.get("gist") or s["quote"][:200],
                                  body=s["quote"], scope=scope, confidence="explicit", source="import",
                                  valid_from=stamps.get(s.get("uuid")))
                recs.append(rec)
        finally:
            conn.close()
        runner = Runner(home, project, hook_env(home))
        mem = answered(lab, recs, runner, "oracle")
        foreign = [q for other, q in questions if other != name]
        injected = injected_new = 0
        for n, q in enumerate(foreign):
            _, prompt = ask(runner, q, f"foreign-{n}", with_start=False)  # the prompt's injection alone
            injected += bool(prompt)
            # As a session asks it: after its SessionStart, whose records a prompt never injects again
            _, prompt = ask(runner, q, f"foreign-started-{n}")
            injected_new += bool(prompt)
        runner.wait_background()
        per[name] = {"memory": mem, "foreign_asked": len(foreign), "foreign_injected": injected,
                     "foreign_injected_after_start": injected_new}
    return per


# ---------------------------------------------------------------------------------------
# Figures and the table
# ---------------------------------------------------------------------------------------


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f} ({a}/{b})" if b else "–"


def summarize(results: list[dict], oracle_res: dict | None) -> dict:
    allst = [s for r in results for s in r["statements"]]
    certain = [s for s in allst if not s["uncertain"]]
    groups = {}
    for key in ("type", "via", "lang"):
        g = defaultdict(lambda: [0, 0])
        for s in certain:
            g[s[key]][0] += s["matched"]
            g[s[key]][1] += 1
        groups[key] = {k: v for k, v in sorted(g.items())}
    ho = [r["handover"] for r in results]
    graded = [h for h in ho if h["correct"] is not None]
    mem = [r["memory"] for r in results]
    out = {
        "transcripts": len(results),
        "recall": [sum(s["matched"] for s in certain), len(certain)],
        "recall_dcp": [sum(s["by_dcp"] for s in certain), len(certain)],
        "precision": [sum(r["written_dcp_matched"] for r in results), sum(r["written_dcp"] for r in results)],
        "by": groups,
        "handover_correct": [sum(bool(h["correct"]) for h in graded), len(graded)],
        "handover_not_stale": [sum(h["not_stale"] for h in ho), len(ho)],
        "memory": [sum(m["answered"] for m in mem), sum(m["asked"] for m in mem)],
        "memory_prompt_tokens": sum(m["prompt_tokens"] for m in mem),
        "memory_start_tokens": sum(m["start_tokens"] for m in mem),
        "records": sum(r["records"] for r in results),
        "sessions": sum(r["sessions"] for r in results),
        "noise": dict(sum((Counter(r["noise"]) for r in results), Counter())),
        "junk": sum(len(r["junk"]) for r in results),
        "hook_failures": sum(len(r["hook_failures"]) for r in results),
    }
    if all("model_input" in r for r in results) and results:
        out["model_input"] = [sum(r["model_input"]["seen"] for r in results),
                              sum(r["model_input"]["statements"] for r in results)]
    if oracle_res:
        out["oracle_memory"] = [sum(o["memory"]["answered"] for o in oracle_res.values()),
                                sum(o["memory"]["asked"] for o in oracle_res.values())]
        out["oracle_foreign"] = [sum(o["foreign_injected"] for o in oracle_res.values()),
                                 sum(o["foreign_asked"] for o in oracle_res.values())]
        out["oracle_foreign_after_start"] = [sum(o["foreign_injected_after_start"] for o in oracle_res.values()),
                                             sum(o["foreign_asked"] for o in oracle_res.values())]
    return out


def table(results: list[dict], total: dict, oracle_res: dict | None, command: str) -> str:
    split = "the labelled split named by --dev" if " --dev " in f" {command} " else "dev split"
    lines = [f"# Capture on real sessions ({split}, no model)", "",
             f"`{command}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Method: "
             "../shared/eval/transcripts-dev/README.md (real hook processes, no key, no login).", "",
             "| figure | value |", "|---|---|"]
    lines.append(f"| statement recall (not uncertain) | {_ratio(*total['recall'])} |")
    lines.append(f"| statement recall by decision/convention/preference records | {_ratio(*total['recall_dcp'])} |")
    lines.append(f"| statement precision (d/c/p records) | {_ratio(*total['precision'])} |")
    for key, g in total["by"].items():
        for k, (a, b) in g.items():
            lines.append(f"| recall, {key} = {k} | {_ratio(a, b)} |")
    lines.append(f"| handover correct | {_ratio(*total['handover_correct'])} |")
    lines.append(f"| handover not stale | {_ratio(*total['handover_not_stale'])} |")
    lines.append(f"| answered from memory | {_ratio(*total['memory'])} |")
    asked = total["memory"][1] or 1
    lines.append(f"| tokens injected per question (prompt / SessionStart) | {total['memory_prompt_tokens'] / asked:.0f} / "
                 f"{total['memory_start_tokens'] / asked:.0f} |")
    if "model_input" in total:
        lines.append(f"| what the model would see (quote in an extraction request) | {_ratio(*total['model_input'])} |")
    else:
        lines.append("| what the model would see | not measured (run with --model-input) |")
    lines.append(f"| records per session | {total['records'] / max(total['sessions'], 1):.1f} |")
    lines.append(f"| junk records | {total['junk']} |")
    lines.append(f"| hook failures (non-zero exit, timeout, bad stdout) | {total['hook_failures']} |")
    if "oracle_memory" in total:
        lines.append(f"| oracle memory | {_ratio(*total['oracle_memory'])} |")
        lines.append(f"| foreign questions injecting anything (oracle) | {_ratio(*total['oracle_foreign'])} |")
        lines.append("| the same asked after a SessionStart (anything it had not shown) | "
                     f"{_ratio(*total['oracle_foreign_after_start'])} |")
    lines += ["", "Records by source/type: " + ", ".join(f"{k} {v}" for k, v in sorted(total["noise"].items())), ""]
    lines += ["## Per transcript", "",
              "| transcript | recall | precision | handover | not stale | memory | model sees | records | junk | oracle |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        certain = [s for s in r["statements"] if not s["uncertain"]]
        h = r["handover"]
        seen = r.get("model_input")
        orc = (oracle_res or {}).get(r["file"].removesuffix(".jsonl"))
        lines.append(
            f"| {r['file'].removesuffix('.jsonl')} | {_ratio(sum(s['matched'] for s in certain), len(certain))} | "
            f"{_ratio(r['written_dcp_matched'], r['written_dcp'])} | "
            f"{'–' if h['correct'] is None else ('yes' if h['correct'] else 'no')} | {'yes' if h['not_stale'] else 'no'} | "
            f"{_ratio(r['memory']['answered'], r['memory']['asked'])} | "
            f"{_ratio(seen['seen'], seen['statements']) if seen else '–'} | {r['records']} | {len(r['junk'])} | "
            f"{_ratio(orc['memory']['answered'], orc['memory']['asked']) if orc else '–'} |")
    return "\n".join(lines) + "\n"


def oracle_table(total: dict, oracle_res: dict, command: str) -> str:
    """The oracle figures alone (``--oracle-only``)."""
    lines = ["# Oracle memory (dev split): retrieval over exactly the labelled statements", "",
             f"`{command}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Method: "
             "../shared/eval/transcripts-dev/README.md, *oracle memory*.", "",
             "| figure | value |", "|---|---|",
             f"| oracle memory | {_ratio(*total['oracle_memory'])} |",
             f"| foreign questions injecting anything (oracle) | {_ratio(*total['oracle_foreign'])} |",
             "| the same asked after a SessionStart (anything it had not shown) | "
             f"{_ratio(*total['oracle_foreign_after_start'])} |",
             "", "| transcript | oracle memory | foreign injected | after a SessionStart |", "|---|---|---|---|"]
    for name, o in sorted(oracle_res.items()):
        lines.append(f"| {name} | {_ratio(o['memory']['answered'], o['memory']['asked'])} | "
                     f"{_ratio(o['foreign_injected'], o['foreign_asked'])} | "
                     f"{_ratio(o['foreign_injected_after_start'], o['foreign_asked'])} |")
    return "\n".join(lines) + "\n"


def public(results: list[dict], oracle_res: dict | None) -> dict:
    """The figures without a word of the split (quotes, questions, record titles stay out of the repo)."""
    out = json.loads(json.dumps({"transcripts": results, "oracle": oracle_res}))
    for t in out["transcripts"]:
        for st in t["statements"]:
            st.pop("quote", None)
        t["junk"] = len(t["junk"])
        t["unmatched_dcp"] = len(t["unmatched_dcp"])
        t.get("model_input", {}).pop("missed", None)
        h = t["handover"]
        h.pop("current_task", None)
        h["stale_next_steps"], h["stale_blockers"] = len(h["stale_next_steps"]), len(h["stale_blockers"])
        for q in t["memory"]["detail"]:
            q.pop("q", None)
    for o in (out["oracle"] or {}).values():
        for q in o["memory"]["detail"]:
            q.pop("q", None)
    return out


def find_dev(given: str | None) -> Path | None:
    if given:
        return Path(given) if Path(given, "labels").is_dir() else None
    for base in [ROOT, *ROOT.parents]:
        cand = base.parent / "shared" / "eval" / "transcripts-dev" if base == ROOT else base / "shared" / "eval" / "transcripts-dev"
        if (cand / "labels").is_dir():
            return cand
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev", help="the labelled split (default: ../shared/eval/transcripts-dev)")
    parser.add_argument("--only", help="only transcripts whose file name contains this")
    parser.add_argument("--model-input", action="store_true", help="also replay with a key against a fake API")
    parser.add_argument("--no-oracle", action="store_true", help="skip the oracle store")
    parser.add_argument("--oracle-only", action="store_true",
                        help="only the oracle store and the foreign questions (no replay; results in "
                             "<name>-oracle unless --name is given)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--name", help="results file stem under bench/results (default: transcripts)")
    parser.add_argument("--detail", help="also write every detail (quotes included) to this file, outside the repo")
    args = parser.parse_args(argv)
    if args.oracle_only and args.no_oracle:
        parser.error("--oracle-only and --no-oracle exclude each other")
    args.name = args.name or ("transcripts-oracle" if args.oracle_only else "transcripts")
    dev = find_dev(args.dev)
    if dev is None:
        print("bench/eval/transcripts: skipped, the labelled split ../shared/eval/transcripts-dev/ is not here")
        return 0
    requests = json.loads((dev / "current_request.json").read_text())
    names = sorted(p.stem for p in (dev / "labels").glob("*.json") if not args.only or args.only in p.name)
    labels = {n: json.loads((dev / "labels" / f"{n}.json").read_text()) for n in names}
    work = Path(tempfile.mkdtemp(prefix="agentctx-transcripts-"))
    try:
        def one(n):
            res = run_one(dev / "raw" / f"{n}.jsonl", labels[n], requests.get(f"{n}.jsonl"), work / n, args.model_input)
            c = [s for s in res["statements"] if not s["uncertain"]]
            print(f"{n}: recall {sum(s['matched'] for s in c)}/{len(c)}, dcp {res['written_dcp_matched']}/"
                  f"{res['written_dcp']}, handover {res['handover']['correct']}, memory {res['memory']['answered']}/"
                  f"{res['memory']['asked']}, {res['replay_s']}s", flush=True)
            return res

        results: list[dict] = []
        if not args.oracle_only:
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                results = list(pool.map(one, names))
        oracle_res = None
        if not args.no_oracle:
            oracle_res = oracle(labels, {n: parse_lines(dev / "raw" / f"{n}.jsonl") for n in names}, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = summarize(results, oracle_res)
    if args.oracle_only:  # no replay: the capture figures would be zeros, not measurements
        total = {k: total[k] for k in ("oracle_memory", "oracle_foreign", "oracle_foreign_after_start")}
    command = "uv run python bench/eval/transcripts.py " + " ".join(argv if argv is not None else sys.argv[1:])
    md = (oracle_table(total, oracle_res, command.strip()) if args.oracle_only
          else table(results, total, oracle_res, command.strip()))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(md)
    (RESULTS / f"{args.name}.json").write_text(json.dumps({"total": total, **public(results, oracle_res)},  # compact:
                                                          separators=(",", ":"), ensure_ascii=False))  # the plugin copies it
    if args.detail:  # everything, quotes included: outside the repository only
        Path(args.detail).write_text(json.dumps({"total": total, "transcripts": results, "oracle": oracle_res},
                                                indent=1, ensure_ascii=False))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
