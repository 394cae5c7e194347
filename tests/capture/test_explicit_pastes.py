"""The no-model path on pasted material: a long document with sections yields only what the person wrote
before it; a short brief's requirements are decisions, its output requirements are not; answers that pick
the next step, requests for information and a reply restated as text add nothing. Texts made here."""

from __future__ import annotations

from agentctx.capture import explicit, transcript

RULES = ["Never use floats for money.", "Always log the request id.", "Do not call the ledger from the UI.",
         "Use Postgres for every service.", "Keep the public API stable."]


def document(lead: str, sections: int, prose: int = 12) -> str:
    """A pasted spec: ``sections`` headings, each with prose and rule-shaped lines, over 3,000 characters."""
    parts = [lead, ""] if lead else []
    for n in range(sections):
        parts += [f"## Section {n + 1}: component {n + 1}", "",
                  "This component receives events from the queue and turns them into ledger entries. " * prose,
                  "", *[f"- {rule}" for rule in RULES], ""]
    return "\n".join(parts)


def titles(texts) -> list[str]:
    return [s.text for s in explicit.statements(texts)]


def test_a_long_pasted_document_yields_only_the_lead_in():
    text = document("Here is the spec for the billing service. Let's use Go for the workers.", sections=4)
    assert len(text) >= explicit.DOC_CHARS
    assert titles([text]) == ["Let's use Go for the workers."]


def test_a_document_is_recognised_at_its_limits():
    three = document("", sections=3)
    assert len(three) >= explicit.DOC_CHARS and titles([three]) == []
    two = document("", sections=2, prose=18)  # two headings: a message with sections, not a pasted document
    assert len(two) >= explicit.DOC_CHARS and set(RULES) <= set(titles([two]))
    short = "\n".join(["# A", "Never use floats for money.", "# B", "Always log the request id.", "# C",
                       "The ledger keeps one row per entry. " * 70])  # sections, but under 3,000 characters
    assert len(short) < explicit.DOC_CHARS and titles([short]) == ["Never use floats for money.",
                                                                   "Always log the request id."]


def test_a_brief_s_requirements_are_decisions_but_not_its_output_requirements():
    brief = ("Build a small tool that reconciles the bank export with the ledger every night and reports what "
             "differs to the finance team.\n\nRequirements:\n- Python 3.12 with the standard library only\n"
             "- Runs as a cron job on the existing host\n\nOutput requirements:\n"
             "- Executive summary with totals per account\n- Detailed table of mismatches\n")
    got = titles([brief])
    assert "Python 3.12 with the standard library only" in got and "Runs as a cron job on the existing host" in got
    assert not [t for t in got if "summary" in t or "mismatches" in t]


def test_answers_that_pick_the_next_step_are_not_decisions():
    lasting = explicit.answered('"Which database should the service use?"="PostgreSQL"\n'
                                "(options: PostgreSQL; MySQL)")
    assert [s.text for s in lasting] == ["Which database should the service use? → PostgreSQL"]
    for question in ("Which module should we build first?", "What should I do next?",
                     "Shall I create the scaffold now?"):
        assert explicit.answered(f'"{question}"="A"\n(options: A; B)') == []
    assert explicit.answered('"Which framework, Next.js or Remix?"="Next.js"\n(options: Next.js; Remix)')


def test_requests_for_information_are_not_statements():
    for sentence in ("Do some research on the fastest JSON parser for us", "Don't do a web search, think it through",
                     "Analyze the logs from last night", "I need an explaination of the retry logic"):
        assert explicit.classify(sentence) is None, sentence


def test_a_reply_s_choice_restated_as_text_is_one_statement():
    listing = "Questions:\n1. Which logger?\n   A) structlog\n   B) stdlib logging\n2. Which formatter?"
    entry = transcript.Entry("u1", "user", "1. B 2. let's use ruff for formatting", "", 10, "reply", listing)
    got = [s.text for s in explicit.from_entries([entry])]
    assert len([t for t in got if "ruff" in t]) == 1
    assert any(t.startswith("Which logger? → B") for t in got)
