"""Capture on real speech (issue 19): what the person typed, in every form Claude Code writes it, reaches
the extraction and the no-model path; nothing else does. Transcript reading in process, then the real
Stop hook and worker as processes over a small transcript made here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx.capture import explicit, transcript
from tests.conftest import make_repo
from tests.process.test_claude_extraction import rows, worker_idle
from tests.support import fake_api
from tests.support.hooks import hook_env, run_hook
from tests.support.waiting import wait_for

SID = "s-real-speech"
QUESTION = "Which database should the service use?"


class Session:
    """Lines in Claude Code's on-disk shape, chained by parentUuid."""

    def __init__(self, path: Path):
        self.path, self.last, self.n = path, None, 0
        path.write_text("")

    def add(self, kind: str, **fields) -> str:
        self.n += 1
        uid = f"u-{self.n:04d}"
        line = {"type": kind, "uuid": uid, "parentUuid": self.last, "isSidechain": False, "sessionId": SID,
                "timestamp": f"2026-03-01T10:{self.n:02d}:00.000Z", **fields}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.last = uid
        return uid

    def user(self, content) -> str:
        return self.add("user", message={"role": "user", "content": content})

    def assistant(self, *blocks: dict) -> str:
        return self.add("assistant", message={"id": f"msg_{self.n}", "role": "assistant", "content": list(blocks)})

    def say(self, text: str) -> str:
        return self.assistant({"type": "text", "text": text})


def build(path: Path) -> Session:
    s = Session(path)
    s.user("<command-message>plan</command-message>\n<command-name>/plan</command-name>\n"
           "<command-args>we'll use Redis for the job queue</command-args>")
    s.say("Planning.")
    s.user([{"type": "text", "text": "<ide_selection>we decided to use Oracle everywhere</ide_selection>"},
            {"type": "text", "text": "Never commit generated files."}])
    s.assistant({"type": "tool_use", "id": "toolu_ask", "name": "AskUserQuestion",
                 "input": {"questions": [{"question": QUESTION, "options": [{"label": "PostgreSQL"},
                                                                            {"label": "MySQL"}]}]}})
    s.add("user", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_ask",
         "content": f'Your questions have been answered: "{QUESTION}"="PostgreSQL".'}]},
        toolUseResult={"questions": [{"question": QUESTION, "options": [{"label": "PostgreSQL"}, {"label": "MySQL"}]}],
                       "answers": {QUESTION: "PostgreSQL"}})
    s.add("attachment", attachment={"type": "queued_command", "prompt": "Prefer small pure functions over classes.",
                                    "commandMode": "prompt"})
    s.assistant({"type": "tool_use", "id": "toolu_bash", "name": "Bash", "input": {"command": "make test"}})
    s.user([{"type": "tool_result", "tool_use_id": "toolu_bash", "content": "we decided to ship on Fridays (log)"}])
    s.say("Questions:\n1. Which logger?\n   A) structlog\n   B) stdlib logging\n2. Which formatter?\n   A) ruff\n   B) black")
    s.user("1. B 2. A")
    s.user("我们就用 Tauri 做桌面端，不要用 Electron。")
    s.user("Wir nehmen SQLite für den Prototyp.")
    s.user("Can you fix the failing test?")
    before = s.last  # a note typed after "#": Claude Code writes it on a branch and goes on from the line before it
    s.user("<user-memory-input>Do not add your signature to commit messages</user-memory-input>")
    s.user("(no content)")
    s.last = before
    s.user("<task-notification><result>we decided to drop the cache</result></task-notification>")
    s.assistant({"type": "tool_use", "id": "toolu_edit", "name": "Edit", "input": {"file_path": "/w/settings.ini"}})
    s.user([{"type": "tool_result", "tool_use_id": "toolu_edit", "is_error": True,
             "content": REJECTED + "the user said:\nKeep the config in pyproject.toml, not in a separate file." + HINT}])
    s.assistant({"type": "tool_use", "id": "toolu_plan", "name": "ExitPlanMode", "input": {"plan": "we decided on MongoDB"}})
    s.user([{"type": "tool_result", "tool_use_id": "toolu_plan", "is_error": True,
             "content": REJECTED + "the user said:\nThe user wants to clarify these questions.\n    This means they "
                        "may have additional information.\n\n    Questions asked:\n- \"we decided on MongoDB?\""}])
    s.assistant({"type": "tool_use", "id": "toolu_w", "name": "Write", "input": {"file_path": "/w/Makefile"}})
    s.user([{"type": "tool_result", "tool_use_id": "toolu_w", "is_error": True,  # the wording of other releases
             "content": "<tool_use_error>" + REJECTED.replace("To tell you how to proceed, ", "") + "The user provided "
                        "the following reason for the rejection:  Use just instead of make for every task.</tool_use_error>"}])
    s.assistant({"type": "tool_use", "id": "toolu_rm", "name": "Bash", "input": {"command": "rm -rf build"}})
    s.user([{"type": "tool_result", "tool_use_id": "toolu_rm", "is_error": True,
             "content": REJECTED.replace("To tell you how to proceed, ", "") + "STOP what you are doing." + HINT}])
    return s


# Claude Code's text for a rejected tool call (2.1.x), with the hint some versions append.
REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
            "the new_string was NOT written to the file). To tell you how to proceed, ")
HINT = ("\n\nNote: The user's next message may contain a correction or preference. Pay close attention — if they "
        "explain what went wrong or how they'd prefer you to work, consider saving that to memory for future sessions.")


def test_the_person_s_words_are_read_in_every_form(tmp_path):
    build(tmp_path / "t.jsonl")
    entries = transcript.read(str(tmp_path / "t.jsonl")).entries
    said = [(e.kind, e.text) for e in entries if e.role == "user"]
    kinds = dict((k, t) for k, t in said)
    assert kinds["command"] == "/plan we'll use Redis for the job queue"
    assert kinds["queued"] == "Prefer small pure functions over classes."
    assert QUESTION in kinds["answer"] and "PostgreSQL; MySQL" in kinds["answer"] and f'"{QUESTION}"="PostgreSQL"' in kinds["answer"]
    reply = next(e for e in entries if e.kind == "reply")
    assert reply.text == "1. B 2. A" and "structlog" in reply.context
    assert kinds["memory"] == "Do not add your signature to commit messages"  # off the main chain, still read
    assert "(no content)" not in kinds.values()
    # typed on rejecting a tool call: the person's words alone, without Claude Code's text or hint
    assert [t for k, t in said if k == "feedback"] == ["Keep the config in pyproject.toml, not in a separate file.",
                                                       "Use just instead of make for every task."]
    typed = " ".join(t for _, t in said)
    assert "Oracle" not in typed and "Fridays" not in typed and "drop the cache" not in typed
    assert "MongoDB" not in typed and "clarify" not in typed and "STOP" not in typed and "Note:" not in typed


def test_no_model_path_keeps_choices_and_rules_and_leaves_out_the_rest(tmp_path):
    build(tmp_path / "t.jsonl")
    stmts = explicit.from_entries(transcript.read(str(tmp_path / "t.jsonl")).entries)
    titles = [s.text for s in stmts]
    assert f"{QUESTION} → PostgreSQL" in titles
    assert any("Redis for the job queue" in t for t in titles)
    assert "Never commit generated files." in titles
    assert "Prefer small pure functions over classes." in titles
    assert any("stdlib logging" in t for t in titles) and any("ruff" in t for t in titles)
    assert any(t.startswith("我们就用 Tauri") for t in titles)  # kept verbatim
    assert "Wir nehmen SQLite für den Prototyp." in titles
    assert "Keep the config in pyproject.toml, not in a separate file." in titles
    assert "Use just instead of make for every task." in titles
    assert [s.type for s in stmts if s.text == "Do not add your signature to commit messages"] == ["convention"]
    joined = " ".join(titles)
    assert "fix the failing test" not in joined and "Oracle" not in joined and "Fridays" not in joined
    assert "MongoDB" not in joined


@pytest.mark.parametrize("sentence", [
    "prefer ruby, no rails wrapper", "I choose Render with SQLite and a small persistent disk",
    "let's use the dotenv convention", "Use pnpm for all packages", "keep the API stable", "Yes let's do small.en",
    "skip the admin page for now", "make sure every migration is reversible", "Don't use emojis in the UI.",
    "Sempre escreva os testes antes do código.", "Use Tailwind em vez de CSS puro.",  # Portuguese
    "Всегда пиши тесты на pytest.", "Храним сессии в Redis вместо памяти.",  # Russian
    "Mantén todos los endpoints asíncronos.",
    "we're not gonna include a browser inside", "We won't support Windows.",  # scope cuts
    "ต้องใช้ TypeScript ทุกไฟล์", "ห้ามแก้ไฟล์ test",  # Thai: must, must not
    "summary里的格式应该用旧的", "日誌應該寫到 session-logs 倉庫",  # Chinese "should", simplified and traditional
])
def test_durable_shapes_are_statements(sentence):
    assert explicit.classify(sentence) is not None


@pytest.mark.parametrize("sentence", [
    "Can we use Redis?", "Let me know when done", "I want you to look at the logs", "Thanks, looks great!",
    "Don't worry about it", "No, that is wrong", "run the tests please", "[5/10] Deploying to GitHub Pages...",
    "status must be OPEN and msg.value must be >= MIN_BET", "Explain why we decided to use Kafka",
    "ok let's do the settings page next",  # what to do now, not a lasting choice
    "(APIServer pid=4711) make sure you are logged in to the hub", "Error: No more than 12 functions can be deployed",
    "93    # fail here loudly instead of in the parser", "No rows returned by the query",
    "│ keep it simple │ always on │", "so how do I use it instead of the old client",
    "Dunno the app name now, let's brainstorm that one.", "Great, let's copy this chat history into the app dir",
    "dont code yet", "do not push just yet",  # a hold on the step at hand
    "No HTTP request layer exists.", "No tests were found for the parser.",  # facts, not rules
    "เราต้องมีอะไรบ้าง", "ใช้ Tailwind แทน CSS ธรรมดาไหมครับ", "จะเก็บข้อมูลไว้ที่ไหน",
    "这应该是一个缓存的bug", "但這應該可以更進化",  # Chinese "should" as a guess: "probably is", "could"
])
def test_questions_requests_and_pasted_output_are_not(sentence):
    assert explicit.classify(sentence) is None


def test_thai_want_is_a_wish_not_a_rule_and_some_is_not_a_question():
    """ต้องการ ("want") holds ต้อง ("must"): a wish's shape, like 我想要; บ้าง alone is "some", not a question."""
    assert explicit.classify("แล้วฉันต้องการเปิด shop ที่มีสองฝั่ง") == "preference"
    assert explicit.classify("ต้องใช้ TypeScript ทุกไฟล์") == "convention"
    assert explicit.shapes("รู้ JS/HTML/CSS บ้าง") is not None


def test_a_report_s_findings_pasted_to_be_fixed_are_not_rules():
    """Lines under a heading of findings (an audit, a review, a coverage report) describe problems seen; the rules
    the person states beside them are kept."""
    text = ("very good job, now fix these\n\n## Key Gaps\n- No transport-layer API tests.\n- Never mocked the DB, "
            "always hit it.\n\n## Rules\n- Never commit without running the tests.")
    assert [st.text for st in explicit.statements([text])] == ["Never commit without running the tests."]
    rules = "## Code review rules\n- Never merge your own pull request.\n\n## Review findings\n- Never mocked the DB."
    assert [st.text for st in explicit.statements([rules])] == ["Never merge your own pull request."]


@pytest.mark.parametrize("answer", ["Not sure yet", "I don't know", "up to you", "不确定", "모르겠어요", "ไม่แน่ใจ"])
def test_an_answer_that_chooses_nothing_is_no_decision(answer):
    lines = transcript.answer_lines("How should projects be isolated?", answer, ["One folder each", "Shared"])
    assert explicit.answered(lines) == []
    assert explicit.answered(transcript.answer_lines("How should projects be isolated?", "One folder each", [])) != []
    says_more = transcript.answer_lines("Where do we deploy?", f"{answer}, maybe Render", ["Render", "Fly"])
    assert [st.text for st in explicit.answered(says_more)] == [f"Where do we deploy? → {answer}, maybe Render"]


def test_telling_claude_to_go_on_continues_the_request(tmp_path):
    """"continue, and in parallel" goes on with the request in progress, saying how: the handover keeps the request
    and adds it, and a bare "continue" adds nothing."""
    assert handover_title(tmp_path, "Refactor the CMS page by page, three pages at a time.", "Batch 1 done.",
                          "continue and in parallel", "Batch 2 done.", "continue", "Batch 3 done.") == (
        "Refactor the CMS page by page, three pages at a time. … then “continue and in parallel”")
    # a session resumed in a new file, whose only prompt tells Claude to go on: that is the request it has
    (tmp_path / "resumed").mkdir()
    assert handover_title(tmp_path / "resumed", "continue generating the report", "Generating.") == (
        "continue generating the report")


def test_stop_hook_stores_them_through_the_worker(tmp_path):
    data, work = tmp_path / "data", make_repo(tmp_path / "shop")
    s = build(tmp_path / "t.jsonl")
    env = hook_env(data, AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0")
    payload = {"session_id": SID, "transcript_path": str(s.path), "cwd": str(work), "hook_event_name": "Stop",
               "stop_hook_active": False}
    assert run_hook("stop", payload, data, env=env).returncode == 0
    wait_for(lambda: worker_idle(data, SID) and rows(data, "SELECT id FROM records WHERE source='user_statement'"),
             "the worker's records")
    recs = rows(data, "SELECT type, title, body FROM records WHERE source = 'user_statement'")
    by_title = {r["title"]: r for r in recs}
    chosen = by_title[f"{QUESTION} → PostgreSQL"]
    assert chosen["type"] == "decision" and "MySQL" in chosen["body"]  # stored with the question and options
    assert "Prefer small pure functions over classes." in by_title
    assert by_title["Do not add your signature to commit messages"]["type"] == "convention"
    assert not [r for r in recs if "Oracle" in r["title"] or "Fridays" in r["title"] or "fix the" in r["title"]]


def test_the_model_sees_everything_typed_and_nothing_injected(tmp_path):
    data, work = tmp_path / "data", make_repo(tmp_path / "shop")
    s = build(tmp_path / "t.jsonl")
    empty = json.dumps({"decisions": [], "preferences": [], "conventions": [], "active_work": None, "gotchas": [],
                        "flush_ok": True})
    with fake_api.FakeMessagesAPI() as api:
        api.responder = lambda body: fake_api.text(empty)
        env = hook_env(data, AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0", AGENTCTX_LLM="1",
                       ANTHROPIC_API_KEY="sk-test-fake", ANTHROPIC_BASE_URL=api.base_url)
        payload = {"session_id": SID, "transcript_path": str(s.path), "cwd": str(work), "hook_event_name": "Stop"}
        assert run_hook("stop", payload, data, env=env).returncode == 0
        wait_for(lambda: api.message_requests and worker_idle(data, SID), "the extraction request")
        sent = " ".join(" ".join(api.all_text(r)) for r in api.message_requests)
    for typed in ("/plan we'll use Redis", "Prefer small pure functions", "PostgreSQL; MySQL",
                  'kind="answer"', 'kind="queued"', 'kind="reply"', "我们就用 Tauri", "Wir nehmen SQLite",
                  'kind="feedback"', "Keep the config in pyproject.toml", "Use just instead of make",
                  'kind="memory"', "Do not add your signature to commit messages"):
        assert typed in sent, typed
    assert "we decided to use Oracle" not in sent  # the IDE selection never reaches the model


def handover_after_stop(data: Path, work: Path, s: Session) -> dict:
    """The current handover once the real Stop hook and its worker have read the session."""
    env = hook_env(data, AGENTCTX_EXTRACT_IDLE="0", AGENTCTX_EXTRACT_MIN_TOKENS="0")
    payload = {"session_id": SID, "transcript_path": str(s.path), "cwd": str(work), "hook_event_name": "Stop"}
    assert run_hook("stop", payload, data, env=env).returncode == 0
    wait_for(lambda: worker_idle(data, SID) and rows(data, "SELECT id FROM records WHERE type = 'handover'"),
             "the derived handover")
    [head] = rows(data, "SELECT title, body FROM records WHERE type = 'handover' AND superseded_at IS NULL")
    return head


def handover_title(tmp_path: Path, *turns: str) -> str:
    """The handover's title after a session of ``turns``, the person's and Claude's in turn."""
    s = Session(tmp_path / "t.jsonl")
    for i, text in enumerate(turns):
        (s.say if i % 2 else s.user)(text)
    return handover_after_stop(tmp_path / "data", make_repo(tmp_path / "work"), s)["title"]


def test_the_handover_names_the_latest_request_across_compactions_and_sessions(tmp_path):
    data, work = tmp_path / "data", make_repo(tmp_path / "shop")
    s = Session(tmp_path / "t.jsonl")
    s.user("Build the invoice exporter.")
    s.say("Done.\n\nNext steps:\n- Add CSV export")
    s.add("system", subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=s.last)
    s.last = None
    s.add("user", isCompactSummary=True, isVisibleInTranscriptOnly=True,
          message={"role": "user", "content": "This session is being continued from a previous conversation. "
                                              "Summary: Build the invoice exporter."})
    s.user("Now add PDF rendering to the exporter.")
    s.say("Working on it.")
    s.add("attachment", attachment={"type": "queued_command", "prompt": "Also email the PDF to the customer.",
                                    "commandMode": "prompt"})
    s.say("PDF rendering added.\n\nNext steps:\n1. Wire the SMTP client\n2. Add a retry")
    s.user("ok thanks")
    s.user("<command-name>/compact</command-name><command-args></command-args>")
    head = handover_after_stop(data, work, s)
    assert head["title"] == "Also email the PDF to the customer."
    assert "Wire the SMTP client" in head["body"] and "Add CSV export" not in head["body"]  # the latest plan only


def test_the_handover_task_is_the_request_not_the_greeting_or_acknowledgement_around_it(tmp_path):
    data, work = tmp_path / "data", make_repo(tmp_path / "shop")
    s = Session(tmp_path / "t.jsonl")
    s.user("Build the invoice exporter.")
    s.say("Done.")
    s.user("Okay let's do the PDF rendering now!")
    s.say("PDF rendering added.")
    s.user("hey")  # a greeting asks for nothing: the request in progress stays the one before it
    s.say("Hi! What next?")
    head = handover_after_stop(data, work, s)
    assert head["title"] == "Let's do the PDF rendering now!"




@pytest.mark.parametrize(("question", "reply"), [
    ("Should it go through Git, or as a zip attached to the issue?", "Git"),  # an alternative Claude named
    ("지금 대화내용을 그쪽에서 이어지도록 옮길까요?", "응 그렇게 해줘"),  # "yes, do it that way"
    ("Want me to sign it as well?", "yes, and push it"),
    ("要我现在把它部署到服务器吗？", "好的，就这样做"),
])
def test_a_short_answer_to_claude_s_question_continues_the_request_it_answers(tmp_path, question, reply):
    """The handover's task is the request Claude asked about, with the answer after it, not the answer alone."""
    title = handover_title(tmp_path, "Get this session log over to the desktop app.", f"I can do that. {question}", reply)
    assert title.startswith("Get this session log over to the desktop app. … then “") and reply in title


@pytest.mark.parametrize(("question", "reply"), [
    ("Anything else?", "add a dark mode"),  # words Claude did not offer: a new request
    ("Should I keep the old parser?", "why would we need it?"),  # a question back
    ("Done. Should I also update the docs?", "no, rewrite the exporter in Rust first"),  # more than an answer
    ("Should I also add tests?", "ok, now add the CSV export"),  # "ok" opens a new request
])
def test_a_new_request_after_claude_s_question_is_the_request(tmp_path, question, reply):
    title = handover_title(tmp_path, "Get this session log over to the desktop app.", question, reply)
    assert title == transcript.request_text(reply)


@pytest.mark.parametrize(("said", "asked"), [
    ("Okay let's do controllers now!", "Let's do controllers now!"),
    ("Great, now add tests.", "Now add tests."),
    ("Thanks! Could you deploy it", "Could you deploy it"),
    ("好的，继续写测试", "继续写测试"),
    ("Great work on the parser, now split it", "Great work on the parser, now split it"),  # praise is content
    ("No, use Postgres", "No, use Postgres"),  # a correction is the request
    ("ok", "ok"),
])
def test_a_request_loses_only_its_opening_acknowledgement(said, asked):
    assert transcript.request_text(said) == asked


@pytest.mark.parametrize("said", ["hey", "Hi!", "hello", "good morning", "你好", "สวัสดีครับ", "ok thanks"])
def test_greetings_and_acknowledgements_are_not_requests(said):
    assert not transcript.substantive(transcript.Entry("u-1", "user", said, "2026-03-01T10:00:00Z", 0))
    assert transcript.substantive(transcript.Entry("u-2", "user", f"{said} Add a login page.", "", 0))


def test_a_prompt_delivered_mid_turn_through_the_queue_alone_is_read(tmp_path):
    """Some releases write no line for a queued prompt Claude got while working: only the queue's enqueue
    (with the text) and a remove. A prompt submitted the usual way (dequeue, then its own line) is read once;
    one the queue dropped (cancelled) and the queue's notifications are not read."""
    s = Session(tmp_path / "t.jsonl")
    s.user("Build the import page.")
    queue = [("enqueue", "Use Postgres for the import staging tables."), ("remove", None),
             ("enqueue", "<task-notification><result>we decided to use Oracle</result></task-notification>"),
             ("remove", None), ("enqueue", "Never use Oracle for staging."), ("remove", "cleared_on_cancel"),
             ("enqueue", "Also add a progress bar."), ("dequeue", None)]
    with open(s.path, "a", encoding="utf-8") as fh:
        for op, content in queue:
            line = {"type": "queue-operation", "operation": op, "timestamp": "2026-03-01T10:30:00.000Z",
                    "sessionId": SID}
            if content and op == "remove":
                line["reason"] = content  # dropped: never delivered
            elif content:
                line["content"] = content
            fh.write(json.dumps(line) + "\n")
    s.user("Also add a progress bar.")
    s.say("Done.")
    for entries in (transcript.read(str(s.path)).entries, transcript.person_entries(str(s.path))):
        said = [(e.kind, e.text) for e in entries if e.role == "user"]
        assert said == [("prompt", "Build the import page."), ("queued", "Use Postgres for the import staging tables."),
                        ("prompt", "Also add a progress bar.")]
    assert [st.text for st in explicit.from_entries(transcript.read(str(s.path)).entries)] == [
        "Use Postgres for the import staging tables."]


def test_a_numbered_message_after_the_person_spoke_is_not_a_reply_to_claude_s_list(tmp_path):
    """A numbered list the person types after a /compact (or any message of theirs) is their own list, not
    a reply to Claude's last one; read whole or from a watermark after the compaction, it is the same."""
    s = Session(tmp_path / "t.jsonl")
    s.user("Improve the charts.")
    s.say("Done:\n1. Added the legend\n2. Added the tooltips\n3. Slowed the animation")
    cut = s.path.stat().st_size
    s.user("<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args></command-args>")
    s.user("1. Fix the tooltip flicker\n2. Use Redis for the chart cache everywhere")
    for batch in (transcript.read(str(s.path)), transcript.read(str(s.path), transcript.Watermark(cut, None))):
        typed = [e for e in batch.entries if e.role == "user" and e.text.startswith("1.")]
        assert [e.kind for e in typed] == ["prompt"]
    s.say("Which cache?\n1. Redis\n2. Memcached")
    s.user("1")
    assert transcript.read(str(s.path)).entries[-1].kind == "reply"  # right after Claude's list it is one


def test_a_reply_read_after_the_turn_end_lines_still_finds_claude_s_list(tmp_path):
    """Claude Code writes lines after Claude's last message (turn duration, stop-hook summaries); a worker that
    read up to the list meets those lines first, then the reply: the list is still found through them."""
    s = Session(tmp_path / "t.jsonl")
    s.user("Plan the storage layer.")
    s.say("Two questions:\n1. Which database?\n   A) PostgreSQL\n   B) SQLite\n2. Which ORM?\n   A) SQLAlchemy\n   B) none")
    first = transcript.read(str(s.path))
    s.add("system", subtype="turn_duration", durationMs=1200, isMeta=False)
    s.add("progress", data={"type": "hook_progress"})
    s.user("1. B 2. A")
    later = transcript.read(str(s.path), first.watermark)
    reply = next(e for e in later.entries if e.role == "user")
    assert reply.kind == "reply" and "SQLAlchemy" in reply.context
    titles = [st.text for st in explicit.from_entries(later.entries)]
    assert any("SQLite" in t for t in titles) and any("SQLAlchemy" in t for t in titles)




@pytest.mark.parametrize("then_says", [False, True])
def test_a_reply_read_after_claude_s_tool_call_finds_the_list_a_whole_read_finds(tmp_path, then_says):
    """Claude Code writes a message's text and its tool call as lines of their own (one message id). A worker that
    read up to the text, mid-turn, meets the tool call and its result first, then the reply: the list is found as
    a whole read finds it; after a later message of Claude's without a list, neither read takes it as a reply."""
    s = Session(tmp_path / "t.jsonl")
    s.user("Plan the storage layer.")
    listing = "Two questions:\n1. Which database?\n   A) PostgreSQL\n   B) SQLite\n2. Which ORM?\n   A) SQLAlchemy\n   B) none"
    s.add("assistant", message={"id": "msg_plan", "role": "assistant", "content": [{"type": "text", "text": listing}]})
    first = transcript.read(str(s.path))
    s.add("assistant", message={"id": "msg_plan", "role": "assistant",
                                "content": [{"type": "tool_use", "id": "toolu_todo", "name": "TodoWrite", "input": {}}]})
    s.add("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_todo",
                                                         "content": "Todos updated"}]})
    if then_says:
        s.say("Saved the plan to the todo list.")
    s.user("1. B 2. A")
    for read in (transcript.read(str(s.path), first.watermark), transcript.read(str(s.path))):
        reply = next(e for e in read.entries if e.role == "user" and e.text.startswith("1. B"))
        assert (reply.kind == "reply") is not then_says
        titles = [st.text for st in explicit.from_entries(read.entries)]
        assert any("SQLAlchemy" in t for t in titles) is not then_says
def test_a_queued_prompt_whose_fate_the_read_cannot_see_waits_in_the_watermark(tmp_path):
    """A read that ends between the enqueue and the remove neither loses the prompt nor reads it twice: the
    watermark (as the store keeps it) carries it to the next read, which reads it once the remove is there;
    one the next read sees dequeued is read from its own line."""
    s = Session(tmp_path / "t.jsonl")
    s.user("Build the import page.")

    def queue(op: str, content: str | None = None) -> None:
        line = {"type": "queue-operation", "operation": op, "timestamp": "2026-03-01T10:30:00.000Z", "sessionId": SID}
        with open(s.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**line, **({"content": content} if content else {})}) + "\n")

    queue("enqueue", "Use Postgres for the import staging tables.")
    queue("enqueue", "Also add a progress bar.")
    first = transcript.read(str(s.path))
    assert [e.text for e in first.entries if e.kind == "queued"] == []
    mark = transcript.Watermark.loads(first.watermark.dumps())
    assert mark == first.watermark and len(mark.queued) == 2
    queue("remove")
    queue("dequeue")
    s.user("Also add a progress bar.")
    second = transcript.read(str(s.path), mark)
    said = [(e.kind, e.text) for e in second.entries if e.role == "user"]
    assert said == [("queued", "Use Postgres for the import staging tables."), ("prompt", "Also add a progress bar.")]
    assert second.watermark.queued == ()


def test_what_claude_code_writes_in_the_person_s_place_is_no_request(tmp_path):
    """An unknown slash command's answer ("Unknown skill: load"), a background shell's notice and the built-in
    rate-limit menu are Claude Code's: the latest request is the person's before them."""
    s = Session(tmp_path / "t.jsonl")
    s.user("Add the export button to the report page.")
    s.say("Added.")
    s.user("Unknown skill: load")
    s.user("<bash-notification>\n<shell-id>b1</shell-id>\n<status>completed</status>\n</bash-notification>")
    s.user("<command-name>/rate-limit-options</command-name>\n<command-message>rate-limit-options</command-message>")
    assert transcript.latest_request(str(s.path)).text == "Add the export button to the report page."
    assert [e.text for e in transcript.read(str(s.path)).entries if e.role == "user" and e.kind == "prompt"] == [
        "Add the export button to the report page."]


def test_a_bare_number_picking_claude_s_option_is_a_decision_and_the_handover_names_it(tmp_path):
    """Claude offers named options ("**Option 1: …**") and the person answers "2": a decision with the option
    it picks, and the handover says which option rather than "2". A pick of what to do next is no decision, and
    the handover and the anchor name it too."""
    from agentctx.capture import handover

    data, work = tmp_path / "data", make_repo(tmp_path / "cmds")
    s = Session(tmp_path / "t.jsonl")
    s.user("Make my commands folder available to every project.")
    s.say("Two ways:\n\n**Option 1: Symlink the commands folder**\n```bash\nln -s ~/src/cmds ~/.claude/commands\n```\n\n"
          "**Option 2: Copy the files into ~/.claude/commands**\n\nWhich approach would you prefer?")
    s.user("2")
    entries = transcript.read(str(s.path)).entries
    assert entries[-1].kind == "reply"
    assert [st.text for st in explicit.from_entries(entries) if st.type == "decision"] == [
        "Which approach would you prefer? → 2. Copy the files into ~/.claude/commands"]
    head = handover_after_stop(data, work, s)
    assert head["title"].startswith("Which approach would you prefer? → 2. Copy the files")
    s.say("Would you like me to:\n1. **Port build.md** first?\n2. Port test.md first?\n\nTell me and I'll start.")
    s.user("1")  # what to do first: the next step, not a lasting choice, but the request in progress is the option
    entries = transcript.read(str(s.path)).entries
    assert explicit.from_entries(entries[-1:]) == []
    request = transcript.latest_request(str(s.path))
    assert handover.task_text(request, entries) == "1. Port build.md first?"
    assert handover.from_transcript(str(s.path))[0] == "1. Port build.md first?"  # what the anchor holds
    s.say("Porting build.md.")
    before, s.last = s.last, None  # as Claude Code writes a compaction: a boundary with no parent, the summary after
    s.add("system", subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=before)
    s.add("user", isCompactSummary=True, isVisibleInTranscriptOnly=True,
          message={"role": "user", "content": "This session is being continued from a previous conversation."})
    assert handover.from_transcript(str(s.path))[0] == "1. Port build.md first?"  # the pick came before a compaction


@pytest.mark.parametrize("asked", [
    "Womit sollen wir anfangen?", "Par quoi veux-tu commencer ?", "¿Por cuál empezamos?", "O que fazemos agora?",
    "Qual é o próximo passo?", "С чего начнём?", "Что делаем дальше?", "Bây giờ làm gì?", "先从哪个开始？",
    "どれから始めますか？", "어느 것부터 시작할까요?", "จะเริ่มจากอันไหนดี?"])
def test_a_pick_of_what_to_do_first_is_the_next_step_in_any_language(asked):
    """An answer to Claude's question about what to do now, next or first picks the next step, in the languages
    whose statement shapes are read; a question that offers a lasting choice still gives a decision."""
    assert explicit.answered(transcript.answer_lines(asked, "The API", ["The API", "The UI"])) == []
    listing = f"1. The API\n2. The UI\n\n{asked}"
    assert explicit.replied("1", listing) == []
    chosen = "Welche Datenbank nehmen wir?"
    assert [st.text for st in explicit.replied("1", f"1. PostgreSQL\n2. SQLite\n\n{chosen}")] == [
        f"{chosen} → 1. PostgreSQL"]



def test_a_lettered_reply_s_record_is_plain_text_whatever_claude_put_in_bold():
    """Claude's interview lists put bold marks inside a line ("**What's your target?** Should we…", "**A) Full
    parity** — drag-drop"): the record names the item and the option without them."""
    listing = ("### 1. Scope & MVP\n**What's your target for v0.1?** Should we aim for:\n"
               "- **A) Full COSMIC parity** — drag-drop zones, stacks, keyboard\n- **B) Core tiling first** — mouse later\n\n"
               "### 2. Window decorations\nHow should stacks render?\n- **A) Native tab bar** (like Safari)\n- B) Custom")
    assert [st.text for st in explicit.replied("1. A 2. B", listing)] == [
        "Scope & MVP: What's your target for v0.1? Should we aim for: → A (Full COSMIC parity — drag-drop zones, "
        "stacks, keyboard)",
        "Window decorations: How should stacks render? → B (Custom)"]


def test_an_empty_memory_note_is_nothing_said(tmp_path):
    s = Session(tmp_path / "t.jsonl")
    s.user("Add the export button.")
    s.user("<user-memory-input>  </user-memory-input>")
    s.user([{"type": "text", "text": "<user-memory-input>Use tabs in Makefiles</user-memory-input>"}])
    said = [(e.kind, e.text) for e in transcript.read(str(s.path)).entries if e.role == "user"]
    assert said == [("prompt", "Add the export button."), ("memory", "Use tabs in Makefiles")]
    assert [(st.type, st.text) for st in explicit.noted("Use tabs in Makefiles")] == [("convention", "Use tabs in Makefiles")]
    assert [st.type for st in explicit.noted("I prefer tabs in Makefiles")] == ["preference"]
