"""Deterministic capture of what the person states (no model, no key needed).

Only what the person typed is read (``transcript`` entries of role ``user``: prompts, slash-command
arguments, queued prompts, answers, memory notes), never Claude's text, tool output or compaction summaries.

* An answer to Claude's multiple-choice question (AskUserQuestion, kind ``answer``) is a decision by
  construction, stored with the question and the options it was chosen from.
* A note typed after "#" for Claude Code to remember (kind ``memory``) is a statement by construction, of
  the type its shape states, else a convention.
* A reply by number or letter (``1.A  3. B``, kind ``reply``) is a decision per item, stored with the
  item of Claude's list it answers (and the option the letter names, when the list has one).
* In typed text, a sentence (a long run-on one: each clause) becomes a record when it has the shape of
  a durable choice or rule: a choice ("we decided", "let's go with / use", "use X for Y", "X instead of
  Y", "switch to"), a preference ("prefer", "I'd rather", "I like it when"), a rule ("always", "never",
  "from now on", "make sure", "keep ...", "don't / do not ...", "no X", "must"), or a scope cut ("skip X
  for now", "out of scope", "no need for X", "not now"); bullet items of a pasted brief under a heading
  such as "Requirements" or "Constraints" are decisions (not under one that names the reply asked for,
  "Output requirements": those describe this request's answer, not the project). The same shapes are
  recognised in German, French, Spanish, Portuguese, Russian, Chinese, Japanese, Korean and Thai, and such
  sentences are kept verbatim.
* A long pasted document (a spec, another agent's handover, notes: many section headings) is someone
  else's text: its rule-shaped lines are the document's, and which of them the person means to hold only
  a reader of the whole can tell (the model path sees it all). Only what the person wrote before its
  first heading is read.
* An answer or numbered reply to a question about what to do now, next or first picks the next step,
  not a lasting choice: it is left out (the handover has the request in progress); so is "let's do X"
  with a word of sequence ("let's do the controllers now"), while "let's do small.en" is a choice.
* Questions (a question mark, or "how do I ..." within the sentence), conditionals, pasted output (log
  lines, an error's name, numbered source lines, a tool's "no rows returned", a table drawn with box
  characters) and sentences with none of those shapes (one-off requests, feedback) are left out.

Records carry source ``user_statement``, confidence ``explicit``, a body quoting the statement, and a
key made from a hash of the normalized statement, so saying it again never makes a second record.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from agentctx.capture.transcript import CODE_FENCE
from agentctx.redact import redact

MAX_STATEMENT = 280
MAX_BODY = 1200
CLAUSE_ABOVE = 300  # a longer "sentence" (speech-to-text, run-on) is read clause by clause
CLAUSE_CHARS = 240
MIN_BRIEF_CHARS = 300
# A pasted document: at least this many section headings in at least this many characters. A typed
# prompt rarely has a heading, let alone three in a few pages.
DOC_HEADINGS = 3
DOC_CHARS = 3000

_I = re.I
# (type, pattern) in order: the first that matches names the type.
_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("convention", re.compile(
        r"\bfrom now on\b|\bgoing forward\b|\bfrom here on\b|\bby convention\b|"
        r"\bab (?:jetzt|sofort)\b|\bvon nun an\b|\bkünftig\b|\bin zukunft\b|\bà partir de maintenant\b|"
        r"\bde ahora en adelante\b|从现在开始|从今以后|以后都|今后|これから(?:は|も)|今後|앞으로|ต่อไปนี้|จากนี้ไป", _I)),
    ("decision", re.compile(
        r"\bwe(?:'ve| have)?\s+(?:just\s+)?decided|\b(?:we|i)\s+(?:chose|choose|picked|pick|settled on|opt for|"
        r"opted for)|let'?s\s+(?:go|stick)\s+with|(?:we|i)(?:'ll| will)\s+(?:go|stick)\s+with|go with\b|"
        r"we(?:'re| are)\s+going\s+with|the decision is|let'?s\s+(?:use|do|keep|make|build|call|name|put|target|"
        r"deploy|host|store|switch|move|stay)|(?:we|i)(?:'ll| will| want to| would like to|'d like to)?\s+use\b|"
        r"\buse\s+\S.{0,60}?\s+(?:for|as|to)\s+(?:the|all|every|our|each|this|its|any)\b|"
        r"\binstead of\b|\brather than\b|\bswitch(?:ing)? (?:to|from|over)\b|\bmigrate to\b|\breplace\s+\S.{0,40}?\swith\b|"
        r"\b(?:skip|drop|defer|postpone|leave out|park)\b.{0,60}\b(?:for now|until later|later|for the mvp|in v1)\b|"
        r"\bout of scope\b|\bnot in scope\b|\bno need (?:for|to)\b|\bwe don'?t need\b|\bnot needed\b|"
        r"\b(?:we|i)(?:'re| are|'m| am) not (?:going to|gonna)\s+(?:include|support|build|add|use|implement|ship|need)\b|"
        r"\b(?:we|i)(?: won'?t| will not) (?:include|support|build|add|use|implement|ship|need)\b|"
        r"\b(?:don'?t|do not) think we need\b|\blet'?s\s+(?!(?:see|try|check|look|test|run|debug|figure|think|talk|"
        r"discuss|go ahead|first|do it|begin|get started|continue|proceed|brainstorm|plan|review|explore|recap|"
        r"summari[sz]e|revisit|compare|evaluate|consider|copy|commit|push|merge|save|wrap up|clean up)\b)\w+|"
        r"\b(?:implemented|built|written|made|deployed|hosted|published)\s+(?:using|with|in|on|at|to)\s+\S|"
        r"\b(?:host|deploy|publish)\w*\s+(?:it\s+|this\s+|them\s+)?(?:on|to|at)\s+\S|"
        r"\b(?:name|call|rename)\s+(?:it|this|the \w+|them)\s+(?!out\b|back\b)\S|"
        r"\b(?:is|are) (?:not )?(?:required|optional)\b|\bonly\s+(?:support|target|use|need)\b|"
        r"\bwir (?:nehmen|verwenden|nutzen|benutzen|bauen|machen|setzen)\b|\blass(?:t)? uns\b|\b(?:an)?statt\b|"
        r"\banstelle\b|\bbrauchen wir\b|\bmachen wir (?:jetzt )?(?:nicht|erst)\b|\bnicht (?:nötig|notwendig)\b|"
        r"\bon (?:utilise|part sur|garde)\b|\bau lieu de\b|\busamos\b|\ben lugar de\b|\bvamos a usar\b|"
        r"\b(?:vamos usar|em vez de|ao invés de|no lugar de)\b|\b(?:используем|будем использовать|вместо)\b|"
        r"就用|改用|采用|统一用|使用|换成|改成|而不是|不用|不需要|先不|暂时不|选择|"
        r"を使(?:う|います|って)|にする|にします|ではなく|代わりに|"
        r"(?:으)?로 하(?:자|죠|겠|기로)|사용(?:하자|해|하고|할)|(?:하|가|만들|쓰|넣|두|바꾸|올리)자\b|대신|말고|필요 ?없|"
        r"(?:^|\s|จะ|เรา|ให้)ใช้|แทน|เลือก|ไม่ต้อง", _I)),
    ("preference", re.compile(
        r"^(?:please\s+|and\s+|also,?\s+|so\s+|but\s+)?(?:always|never|don'?t\s+ever|do\s+not\s+ever)\b|"
        r"\b(?:we|you)\s+(?:should\s+|must\s+)?(?:always|never)\b|"
        r"\bi\s+(?:always|never)\s+(?:want|use|prefer|write|run|put|keep|like)\b|"
        r"\bdon'?t\s+ever\b|\bdo\s+not\s+ever\b|\bi(?:'d| would)? prefer\b|\bpreferably\b|\bprefer\b|"
        r"\bi(?:'d| would) rather\b|\bi like (?:it )?when\b|\bi (?:don'?t|do not) like\b|"
        r"\bi (?:like|love|hate)\s+\w+ing\b|\bwe (?:do not|don'?t) want\b|"
        r"\b(?:immer|nie|niemals)\b|\bich (?:möchte|will|bevorzuge|hätte gern)\b|\bbevorzug|\blieber\b|"
        r"\btoujours\b|\bjamais\b|\bje préfère\b|\bsiempre\b|\bnunca\b|\bprefiero\b|"
        r"\bsempre\b|\bprefiro\b|\bвсегда\b|\bникогда\b|\bпредпочитаю\b|\bя хочу,? чтобы\b|"
        r"总是|始终|永远不|从不|偏好|更喜欢|我喜欢|我想要|我希望|"
        r"必ず|常に|絶対に?|好き|好み|"
        r"항상|언제나|절대|선호|좋겠|원해|"
        r"เสมอ|ตลอด|ชอบ|อยากได้|อยากให้|ต้องการ", _I)),
    ("convention", re.compile(
        r"\bmake sure\b|\bensure\b|\bkeep (?:it|them|the|all|every|our|this|each|things|using|just|only|one|a)\b|"
        r"\b(?:it|this|that|they|the \w+|each \w+|every \w+|all \w+)\s+(?:should|shouldn'?t|should not|shud)\s+"
        r"(?:not\s+|never\s+|always\s+|only\s+)?(?:be|have|look|show|pop|use|stay|support|run|open|go|keep)\b|"
        r"\b(?:we|you|it|they|everything|every \w+|all \w+|each \w+)\s+(?:must|mustn'?t|has to|have to)\b|"
        r"^(?:please\s+|and\s+|also,?\s+|but\s+)?(?:don'?t|do not)\s+(?!worry|know|think|understand|see|mind|care|"
        r"bother|get|forget about|do that|panic|hesitate)\w+|"
        r"^(?:no|without)\s+(?!(?:it|that|this|i|you|we|they|worries|problem|thanks|idea|luck|way|one|matter|"
        r"need to worry|not|yes|ok|okay|more|longer)\b)[\w.-]+(?!.*\b(?:exists?|existed|was|were|found|yet|"
        r"currently|(?:is|are) (?:present|available|implemented|defined|covered|tested|there))\b)|"  # a fact: "No HTTP layer exists."
        r"\b(?:bitte )?kein(?:e|en|er)?\b|\bnicht\s+(?:mehr\s+)?(?:verwenden|nutzen|benutzen|ändern|committen)\b|"
        r"\b(?:darf|dürfen) (?:nicht|kein)|\bachte darauf\b|"
        r"\bne (?:pas|jamais)\b|\bno (?:uses|usar)\b|"
        r"\b(?:asegúrate|mantén|mantenga)\b|\b(?:certifique-se|mantenha|não (?:use|usar|faça|altere|mude|crie))\b|"
        r"\b(?:убедись|убедитесь|сохраняй|нельзя|обязательно|должн[аыо]?|не (?:используй|используйте|делай|меняй|трогай))\b|"
        r"不要|别用|别再|不能|不许|必须|务必|确保|保持|一定要|(?:应该|應該|应当|應當)(?!可以|能|会|會|是)|"
        r"しないで|ないでください|禁止|維持|"
        r"하지 ?마|하지 않|금지|반드시|꼭|유지|"
        r"อย่า|ห้าม|ต้อง(?!การ)|รักษา", _I)),  # ต้องการ is "want" (a preference's shape), not "must"
]
_SKIP = re.compile(
    r"^(?:if|whether|did|do you|does|have|has|should|would|could|can|when|why|how|what|which|where|who|is|are|"
    r"wenn|falls|ob|warum|wieso|wie|was|kannst|könntest|si|por qué|如果|为什么|怎么|是否|もし|なぜ|만약|왜|ถ้า|ทำไม)\b",
    _I)
# Not a statement whatever it holds: asking for an explanation or for information (research, a search, an
# analysis: one-off work), a request to Claude, an agent's narration.
_REQUEST = re.compile(
    r"\b(?:explain\w*|understand|tell me|show me|walk me through|let me know|help me)\b|"
    r"\b(?:research|investigate|look up|web search|search the web|analy[sz]e|summari[sz]e)\b|"
    r"\b(?:i want|i need|i'?d like|i would like)\s+you\s+to\b|\b(?:can|could|would|will) you\b|"
    r"^(?:let me\b|thinking:|now i\b|i'll (?:check|look|run|start|update|fix)\b|i'm going to\b|so the\b|since\b)|"
    r"\bthe user (?:is|wants|asked|has|said)\b", _I)
# Pasted terminal output: progress counters, log levels, commit lines, checkboxes, a process's log prefix
# ("(APIServer pid=7)"), an error's name, numbered source lines, a tool's "no ... found / returned" message.
_PASTED = re.compile(
    r"^(?:\[[^\]]{0,20}\]|[0-9a-f]{7,40}\s|(?:WARNING|ERROR|INFO|DEBUG|FATAL|TRACE)\b|\$ |\d{4}-\d\d-\d\d[T ])|"
    r"^\([\w.-]+ pid=\d+\)|^(?:[A-Z]\w*)?(?:Error|Exception)\b:|^\d{1,5}\s+(?:#|//)\s|"
    r"^(?i:no)\b.{0,60}\b(?:returned|found|named|such|available|matching)\b")
# Box-drawing characters: a table or a frame pasted from a terminal or a document.
_BOX = re.compile(r"[\u2500-\u257f]")
# A question asked mid-sentence ("so how do I use it"), without a question mark.
_HOW = re.compile(r"\bhow (?:do|can|could|should|would|to) (?:i|we|you)\b", _I)
# Code and specs pasted as text: identifiers with dots or brackets, comparisons, calls.
_CODE = re.compile(r"[\w\]\)]\.\w+\(|\w\[\w|==|!=|<=|>=|[≤≥]|\w\(\)|`[^`]+`|[{};]|\b\w+_\w+\b|\b[a-z]+[A-Z]\w*\.\w+")
_REDACTED = re.compile(r"\[REDACTED:[\w.-]+\]")  # a secret's placeholder: text agentctx wrote, not code pasted
# A question by its end: a question mark, or a language's question particle or word where its questions need
# none (Thai ends them on a question word, and may add a polite particle after it).
_QUESTION_END = re.compile(
    r"(?:[?？]|吗|呢|か|까|나요|(?:ไหม|มั้ย|หรือเปล่า|หรือไม่|หรือยัง|อะไรบ้าง|ยังไง|อย่างไร|ไหน|เท่าไ(?:ร|หร่)|เหรอ|หรอ)"
    r"(?:\s*(?:ครับ|ค่ะ|คะ|นะ|จ๊ะ|จ้ะ|ฮะ))*)\s*[)\]\"'」]*$")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_CLAUSE = re.compile(r"(?<=[,，、:：])\s*|\s+(?=(?:and|but|also|und|aber|sondern|then)\s)", _I)
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(.+\S)\s*$")
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*)?[^\n]{0,40}?\b(?:requirements?|constraints?|rules?|conventions?|decisions?|tech(?:nical)?"
    r"(?: stack| choices)?|stack|scope|must[- ]haves?|non[- ]goals?|out of scope|architecture|guidelines|"
    r"anforderungen|vorgaben|regeln|exigences|requisitos)\b[^\n]{0,30}$|^\s*(?:#{1,6}\s*)?[^\n]{0,20}?"
    r"(?:要求|约束|规则|技术栈|要件|制約|요구 ?사항|규칙|제약|ข้อกำหนด)[^\n]{0,20}$", _I)
# The heading of a section of the reply asked for: its requirements are this request's, not the project's.
_OUTPUT_HEADING = re.compile(
    r"\b(?:output|deliverables?|response|report|answer|format)\b|\b(?:ausgabe|antwort|bericht|livrables?|"
    r"salida|respuesta|informe)\b|输出|回答|报告|出力|回答|報告|출력|답변|보고서|ผลลัพธ์|รายงาน", _I)
# The heading of a report's findings (an audit, a review, a test run pasted for Claude to act on): the lines under
# it are problems seen, not rules to keep.
_FINDINGS_HEADING = re.compile(
    r"\b(?:findings?|issues?|gaps?|problems?|bugs?|errors?|failures?|audit|report|review|observations?|results?|"
    r"coverage|befunde?|probleme|fehler|problèmes|hallazgos|problemas|проблемы|ошибки)\b|"
    r"问题|发现|报告|問題|指摘|문제|결과|ปัญหา", _I)
# A section heading of a pasted document: a Markdown heading, a line in bold alone, a short line in capitals
# ending in a colon.
_SECTION = re.compile(r"^\s*(?:#{1,6}\s+\S.*|\*\*[^*\n]{2,80}\*\*:?|[A-Z0-9][A-Z0-9 &/()'+.,-]{2,60}:)\s*$")
# A question about what to do now, next or first (its answer is the next step).
_SEQUENCING = re.compile(
    r"\b(?:now|next(?![.\w])|first|before (?:i|we) (?:move on|continue|start|go on)|to start with|right away)\b|"
    r"\b(?:jetzt|als nächstes|zuerst|zunächst|anfangen|beginnen|maintenant|ensuite|d'abord|commen[cç]\w*|"
    r"ahora|primero|después|a continuación|empez\w*|comenz\w*|agora|primeiro|em seguida|depois|"
    r"próximo passo|começ\w*|сейчас|теперь|сначала|дальше|следующ\w*|начн\w*|начать|начина\w*|"
    r"bây giờ|tiếp theo|trước tiên|đầu tiên|bắt đầu)\b|"
    r"现在|接下来|下一步|首先|先做|先从|从哪|今すぐ|今から|次に|まず|から始め|지금|다음|먼저|부터 시작|"
    r"ตอนนี้|ต่อไป|ก่อน|ถัดไป|เริ่ม", _I)
# An answer that chooses nothing and says nothing more: the person has not decided, or leaves it to Claude
# ("Not sure yet"; "Not sure, maybe Render" says more and stays).
_UNDECIDED = re.compile(
    r"^(?:not sure|unsure|no idea|(?:i )?(?:don'?t|do not) know|dunno|undecided|no preference|(?:let'?s )?decide later|"
    r"tbd|up to you|you decide|your call|whatever you (?:think|prefer)|weiß (?:ich )?nicht|keine ahnung|je ne sais pas|"
    r"no (?:lo )?sé|não sei|не знаю|不确定|不知道|还没想好|随便|都可以|わからない|分からない|未定|모르겠(?:어요|습니다)?|글쎄요?|"
    r"ไม่แน่ใจ|ไม่รู้)(?:\s*(?:yet|now|for now|right now|at the moment|as of now|ครับ|ค่ะ))?[\s.!…。！]*$", _I)
# A hold on the step at hand ("don't code yet", "do not push just yet"): the next step, not a lasting rule.
_NOT_YET = re.compile(r"^(?:please\s+|but\s+)?(?:don'?t|do not)\s+\w[^.!?]{0,50}?\byet\b", _I)
_LETS_DO = re.compile(r"\blet'?s\s+do\b", _I)
_ITEM_NO = re.compile(r"(?:^|\s)(\d{1,2}|[A-Ha-h])\s*[.)]\s*")
_YES_NO = re.compile(r"^(?:yes|yep|yeah|no|nope|ok|okay|sure|agreed|correct|right|ja|nein|oui|non|sí|是|对|好|不|네|예|아니|ใช่|ไม่)\b", _I)
_OPTION = re.compile(r"^\s*(?:[-*>]\s*)?(?:\*\*)?\(?([A-Ha-h])[.):]\)?(?:\*\*)?\s+(.+\S)")


class Statement:
    """One statement: the record type it maps to, its text and, for answers, what it answers."""

    __slots__ = ("type", "text", "key", "context")

    def __init__(self, type: str, text: str, context: str = ""):
        self.type, self.text, self.context = type, text, context
        self.key = "stmt." + hashlib.sha256(normalize(text).encode()).hexdigest()[:20]

    def __repr__(self) -> str:
        return f"Statement({self.type}, {self.text!r})"


def normalize(text: str) -> str:
    """Lower-case words only (any script): how two sayings of one statement compare."""
    return " ".join(_WORD.findall(text.lower()))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def sentences(text: str) -> list[str]:
    """The person's sentences: code blocks and quoted lines (``>``) dropped; a long run-on sentence is
    split into clauses."""
    text = CODE_FENCE.sub("\n", text)
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(">")]
    out = []
    for part in _SENTENCE.split("\n".join(lines)):
        part = " ".join(part.split()).strip(" -*•")
        if not part:
            continue
        if len(part) <= CLAUSE_ABOVE:
            out.append(part)
            continue
        current = ""
        for clause in _CLAUSE.split(part):
            if current and len(current) + len(clause) > CLAUSE_CHARS:
                out.append(current.strip())
                current = ""
            current = f"{current} {clause}" if current else clause
        if current.strip():
            out.append(current.strip())
    return out


def _long_enough(sentence: str) -> bool:
    if _CJK.search(sentence):
        return len(re.sub(r"\s", "", sentence)) >= 6
    return len(normalize(sentence).split()) >= 3


# Names of the four rule shapes of ``_RULES``, in order.
_SHAPE_NAMES = ("from-now-on", "choice", "preference", "rule")


def shapes(sentence: str) -> tuple[str, ...] | None:
    """The shapes a sentence has: each of ``_RULES`` it matches (by ``_SHAPE_NAMES``), and ``request``
    or ``next-step`` when it reads as one; None when it cannot be a statement whatever it says (a
    question, too short, pasted output or code)."""
    if _QUESTION_END.search(sentence) or _SKIP.match(sentence) or not _long_enough(sentence):
        return None
    if _PASTED.match(sentence) or _BOX.search(sentence) or len(_CODE.findall(_REDACTED.sub(" ", sentence))) >= 2:
        return None
    if _HOW.search(sentence):
        return None
    found = tuple(name for name, (_, pattern) in zip(_SHAPE_NAMES, _RULES, strict=True) if pattern.search(sentence))
    if _REQUEST.search(sentence):
        found += ("request",)
    if (_LETS_DO.search(sentence) and _SEQUENCING.search(sentence)) or _NOT_YET.search(sentence):
        found += ("next-step",)  # "let's do the controllers now" ("let's do small.en" is a choice), "don't code yet"
    return found


def _type_of(found: tuple[str, ...]) -> str | None:
    for name, (rtype, _) in zip(_SHAPE_NAMES, _RULES, strict=True):
        if name in found:
            return rtype
    return None


def classify(sentence: str) -> str | None:
    """The record type a sentence states by its shape alone (a durable choice, preference or rule), or None."""
    found = shapes(sentence)
    if found is None or "request" in found or "next-step" in found:
        return None
    return _type_of(found)


def _without_findings(text: str) -> str:
    """``text`` less each section under a heading of findings (``_FINDINGS_HEADING``), to the next heading."""
    out, skipping = [], False
    for line in text.splitlines():
        if _SECTION.match(line):  # "## Review findings", not "## Code review rules"
            skipping = bool(_FINDINGS_HEADING.search(line)) and not _HEADING.match(line.strip().rstrip(":："))
            if skipping:
                continue
        if not skipping:
            out.append(line)
    return "\n".join(out)


def _brief_items(text: str) -> list[str]:
    """Bullet items under a requirements-like heading of a pasted brief."""
    if len(text) < MIN_BRIEF_CHARS:
        return []
    out, under = [], False
    for line in text.splitlines():
        bullet = _BULLET.match(line)
        if bullet and under:
            out.append(" ".join(bullet.group(1).split()).strip("*"))
        elif line.strip() and not bullet:
            heading = line.strip().rstrip(":：")
            under = bool(_HEADING.match(heading)) and not _OUTPUT_HEADING.search(heading)
    return out


def split_document(text: str) -> tuple[str, str]:
    """(what the person wrote, the pasted document after it): for a long pasted document
    (``DOC_HEADINGS`` section headings in ``DOC_CHARS`` characters or more), the lines before its first
    heading and the rest; for any other message, all of it and ``""``."""
    if len(text) < DOC_CHARS:
        return text, ""
    lines = CODE_FENCE.sub("\n", text).splitlines()
    heads = [i for i, line in enumerate(lines) if _SECTION.match(line)]
    if len(heads) < DOC_HEADINGS:
        return text, ""
    return "\n".join(lines[: heads[0]]), "\n".join(lines[heads[0]:])


class Candidate(NamedTuple):
    """A sentence of a message that could be a statement, with what is known of it: its ``shapes``, whether
    it is an item of a pasted brief, the ``part`` of the message it is in (``typed``, or ``document`` for a
    long pasted document's), its place among that part's sentences and the message's length."""

    sentence: str
    shapes: tuple[str, ...]
    brief: bool
    part: str
    index: int
    count: int
    message_chars: int


def candidates(text: str, *, documents: bool = False) -> list[Candidate]:
    """The sentences of a message that could be statements (``shapes`` is not None), in order: what the
    person wrote, then, with ``documents``, the sentences of a long pasted document after it."""
    typed, document = split_document(redact(text))
    out = []
    for part, body in (("typed", typed), ("document", document if documents else "")):
        body = _without_findings(body)
        if not body:
            continue
        brief = set(_brief_items(body))
        sents = sentences(body)
        for i, sentence in enumerate(sents):
            found = shapes(sentence)
            if found is not None:
                out.append(Candidate(sentence, found, sentence in brief, part, i, len(sents), len(text)))
        for item in sorted(brief - set(sents)):  # an item the sentence split did not keep whole
            found = shapes(item)
            if found is None and not _QUESTION_END.search(item) and _long_enough(item):
                found = ()
            if found is not None:
                out.append(Candidate(item, found, True, part, len(sents), len(sents) + 1, len(text)))
    return out


def stated_type(c: Candidate) -> str | None:
    """The record type a candidate states by the rules: its first rule shape's, or a decision for an item of
    a pasted brief; None for a request or the next step."""
    if "request" in c.shapes or "next-step" in c.shapes:
        return None
    return _type_of(c.shapes) or ("decision" if c.brief else None)


def statements(user_texts) -> list[Statement]:
    """Statements in typed text, first occurrence of each, in order."""
    found: dict[str, Statement] = {}
    for text in user_texts:
        for c in candidates(text):
            rtype = stated_type(c)
            if rtype is None or (c.brief and any(c.sentence in s.text for s in found.values())):
                continue
            stmt = Statement(rtype, c.sentence)
            found.setdefault(stmt.key, stmt)
    return list(found.values())


_ANSWER_LINE = re.compile(r'^"(.+?)"="(.*)"$')


def answered(text: str) -> list[Statement]:
    """AskUserQuestion answers (``"<question>"="<answer>"`` lines, each maybe followed by ``(options: ...)``,
    as ``transcript.answer_lines`` writes them): one decision each."""
    out: list[Statement] = []
    lines = redact(text).splitlines()
    for i, line in enumerate(lines):
        found = _ANSWER_LINE.match(line.strip())
        if not found or not found.group(2).strip():
            continue
        asked, answer = found.group(1).strip(), found.group(2).strip()
        if "?" in answer or "？" in answer or _QUESTION_END.search(answer):
            continue  # the person asked back instead of choosing
        if _SEQUENCING.search(asked):
            continue  # what to do now or next: the next step, not a lasting choice
        if _UNDECIDED.match(answer):
            continue  # "Not sure yet": nothing chosen
        after = lines[i + 1].strip() if i + 1 < len(lines) else ""
        offered = f" {after}" if after.startswith("(options: ") else ""
        out.append(Statement("decision", f"{asked} → {answer}", context=asked + offered))
    return out


def noted(text: str) -> list[Statement]:
    """A note the person typed after "#" for Claude Code to remember: a statement by construction, whatever its
    shape. Its type is the one its shape states (a choice is a decision, "prefer" a preference), else a
    convention: a rule for how the work is done."""
    note = " ".join(redact(text).split())
    if not note:
        return []
    return [Statement(classify(note) or "convention", _clip(note, MAX_STATEMENT * 2))]


# The head of an item of Claude's numbered list: "1." / "2)", or a named option ("**Option 2: Copy the file**").
_LIST_HEAD = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?(?:(?:option|approach|choice|alternative)\s+(\d{1,2})\s*[:.)]|"
                        r"(\d{1,2})[.)])\s*(.+\S)", re.I)


def _plain(line: str) -> str:
    """A line of Claude's Markdown as plain text: bold marks dropped wherever they are ("**Full parity** — drag"),
    the line's own edges trimmed."""
    return line.replace("**", "").strip("* ")


def _list_items(listing: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Claude's numbered list: number -> (the item's first line, its lettered options)."""
    items: dict[str, tuple[str, dict[str, str]]] = {}
    current, gap = None, False
    for line in listing.splitlines():
        head = _LIST_HEAD.match(line)
        if head:
            current, gap = head.group(1) or head.group(2), False
            items[current] = (_plain(head.group(3)), {})
            continue
        opt = _OPTION.match(line)
        gap = gap or not line.strip()
        if opt and current:
            items[current][1].setdefault(opt.group(1).upper(), _plain(opt.group(2)))
        elif current and not gap and not line.lstrip().startswith("```") and len(items[current][0]) < 40 \
                and not items[current][1]:
            title, opts = items[current]  # a heading's question on the next line
            items[current] = (f"{title}: {_plain(line)}", opts)
    return items


def replied(text: str, listing: str) -> list[Statement]:
    """A reply by number to Claude's list: one decision per item answered (``1.A  3. B``), or per option a
    bare number picks (``2``)."""
    items = _list_items(listing)
    if not items:
        return []
    marks = list(_ITEM_NO.finditer(text))
    if not marks:
        return _picked_by_number(text, listing, items)
    out = []
    for i, mark in enumerate(marks):
        answer = text[mark.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)].strip()
        number = mark.group(1)
        if not answer or number not in items:
            continue
        item, options = items[number]
        if _SEQUENCING.search(item) and _QUESTION_END.search(item):
            continue  # a question about what to do now or next
        letter = re.match(r"^([A-Ha-h])\b(?:\s*(?:\+|and|&|,)\s*([A-Ha-h])\b)?", answer)
        chosen = answer
        if not letter and not _YES_NO.match(answer) and (_QUESTION_END.search(answer) or _REQUEST.search(answer)):
            continue  # a question or a request about the item, not a choice
        if letter:
            named = [options.get(g.upper()) for g in letter.groups() if g]
            if any(named):
                chosen = f"{answer} ({'; '.join(n for n in named if n)})"
        out.append(Statement("decision", _clip(f"{item} → {chosen}", MAX_STATEMENT * 2),
                             context=f'{number}. {item}'))
    return out


_BARE_PICK = re.compile(r"^\s*(?:(?:option|approach|choice|#)\s*)?(\d{1,2})(?:\s*(?:,|and|&|\+|/)\s*(\d{1,2}))?\s*[.!]?\s*$",
                        re.I)


def _bare_picks(text: str, items: dict[str, tuple[str, dict[str, str]]]) -> list[str]:
    """The items a bare number ("2", "option 1", "1 and 3") picks, as "2. <item>"."""
    bare = _BARE_PICK.match(text)
    numbers = dict.fromkeys(n for n in bare.groups() if n) if bare else {}
    return [f"{number}. {items[number][0]}" for number in numbers if number in items]


def picked(text: str, listing: str) -> list[str]:
    """What a bare number picks from Claude's list ("2. Write the plan first"), whether or not it is a lasting
    choice: the request a reply makes when the options were what to do next."""
    items = _list_items(listing)
    return _bare_picks(text, items) if items else []


def _picked_by_number(text: str, listing: str, items: dict[str, tuple[str, dict[str, str]]]) -> list[Statement]:
    """A bare number ("2", "option 1", "1 and 3") picking among the options Claude listed: a decision each,
    with the question the list ends on; none when the options are what to do now or next."""
    asked = _closing_question(listing)
    if not asked or _SEQUENCING.search(asked):
        return []
    return [Statement("decision", _clip(f"{asked} → {item}", MAX_STATEMENT * 2), context=asked)
            for item in _bare_picks(text, items)]


def _closing_question(listing: str) -> str:
    """The question Claude's list ends on ("Which approach would you prefer?"), in its last three lines and not
    an item of the list (a quiz's numbered questions are not a choice offered); "" when there is none."""
    lines = [ln.strip(" *#>") for ln in listing.splitlines() if ln.strip()][-3:]
    for line in reversed(lines):
        if _LIST_HEAD.match(line) or _ITEM_NO.match(line):
            continue
        asked = [q for q in re.findall(r"[^.!?。！？]*[?？]", line) if q.strip()]
        if asked:
            return asked[-1].strip()
    return ""


def from_entries(entries) -> list[Statement]:
    """Statements in transcript entries, reading role ``user`` only (by kind: answers, replies, text)."""
    found: dict[str, Statement] = {}
    for e in entries:
        if e.role != "user":
            continue
        kind = getattr(e, "kind", "prompt")
        if kind == "answer":
            got = answered(e.text)
        elif kind == "memory":
            got = noted(e.text)
        elif kind == "reply":
            got = replied(redact(e.text), getattr(e, "context", ""))
            chosen = " ".join(normalize(r.text) for r in got)  # a reply's item already stated is not said twice
            got += [t for t in statements([e.text]) if normalize(t.text) not in chosen]
        else:
            got = statements([e.text])
        for stmt in got:
            found.setdefault(stmt.key, stmt)
    return list(found.values())


def to_record(stmt: Statement) -> dict:
    """The ``records.add`` arguments for a statement."""
    if stmt.context:
        body = f'The developer answered Claude\'s question "{_clip(stmt.context, MAX_BODY)}": "{stmt.text}"'
    else:
        body = f'The developer said: "{_clip(stmt.text, MAX_BODY)}"'
    return {
        "type": stmt.type, "title": _clip(stmt.text, MAX_STATEMENT), "body": body,
        "scope": "project", "confidence": "explicit", "source": "user_statement", "key": stmt.key,
    }
