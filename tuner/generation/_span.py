"""Typed answer spans for the extractive reader: what a question asks for, and where that is in a sentence.

A reader that answers "When was X released?" with a whole sentence states the date, and every other
date, number and name of that sentence too. This module lets the offline reader commit to one value:

- :func:`question_parts`: a question that asks two things ("..., and what is ...?", "…？…又是多少？",
  "A和B的售价分别是多少？") becomes two questions, each answered on its own;
- :func:`answer_type`: what a question asks for, from its question words (when / how many / who …,
  哪一天 / 多少 / 几 / 谁 …): a ``date``, a ``number`` (with its unit or currency), an ``entity``
  (a name), or ``sentence`` when nothing narrower is asked;
- :func:`extract_span`: in the chosen sentence, the candidate span of that type nearest the question's
  content words. Spans that repeat the question ("in 1998" asked about 1998) are never the answer.

The rules read only the question and the sentence (never keypoints or labels), in English and Chinese.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tuner.text import CJK, CJK_CHARS, NUMBER, STOPWORDS_LATIN, STOPWORDS_ZH, bm25_tokens, normalize_text, parse_number, segment

AnswerType = Literal["date", "number", "entity", "sentence"]

_TYPE_RULES: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    ("date", re.compile(
        r"\bwhen\b|\b(?:what|which) (?:year|date|day|month)\b|\bdate\b"
        r"|哪一?天|哪一?年|哪个月|几月|几号|什么时候|何时|日期",
        re.IGNORECASE,
    )),
    ("number", re.compile(
        r"\bhow (?:many|much|long|old|far|tall|big|large|high|fast|often)\b"
        r"|\bwhat (?:percentage|percent|number|amount)\b|\bnumber of\b|\bprice\b|\bcost\b"
        r"|多少|几|价格|售价|费用",
        re.IGNORECASE,
    )),
    ("entity", re.compile(
        r"\bwho(?:m|se)?\b|\bwhich\b|\bwhere\b|谁|哪位|哪个|哪家|哪里|哪儿|什么地方|叫什么",
        re.IGNORECASE,
    )),
)  # fmt: skip
"""First match wins, so "in which year" is a date and "how many days" a number, not an entity."""

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_ZH_DIGIT = "0-9〇零一二两三四五六七八九十"
_DATE = re.compile(
    rf"\b(?:{_MONTH}\s+{_DAY}\s*,?\s*\d{{4}}|{_DAY}\s+(?:of\s+)?{_MONTH}\s*,?\s*\d{{4}}|{_MONTH}\s+\d{{4}}"
    rf"|{_MONTH}\s+{_DAY}|\d{{4}}-\d{{2}}-\d{{2}}|(?:1\d|20)\d{{2}}s?)\b"
    rf"|[{_ZH_DIGIT}]{{2,4}}年(?:[{_ZH_DIGIT}]{{1,2}}月(?:[{_ZH_DIGIT}]{{1,3}}[日号])?)?"
    rf"|[{_ZH_DIGIT}]{{1,2}}月[{_ZH_DIGIT}]{{1,3}}[日号]",
    re.IGNORECASE,
)
"""A date: "August 8, 2014" (also "August 8 , 2014" as Natural Questions tokenizes it), "8 August 2014",
"March 2014", "2014-08-08", a year (1000–2099, or a decade "1990s"); 2016年9月4日, 2016年9月, 9月4日."""

_CURRENCY = re.compile(r"(?:US\$|\$|€|£|¥|￥|RMB\s?|USD\s?)$")
"""A currency right before a number ($1,299), part of the amount."""

_DAYTIME = re.compile(r"(?:上午|下午|晚上|凌晨|早上|中午)$")
"""The time of day right before a Chinese clock time (上午7点), part of it."""

_UNIT = re.compile(
    rf"\s*(?:%|percent\b|per cent\b|[㎡℃])"
    rf"|(?P<cjk>[{CJK_CHARS}]+)"
    rf"|\s*(?P<word>[A-Za-z][A-Za-z-]*)(?:\s+per\s+[A-Za-z]+)?"
)
"""What follows a number and may belong to it: a percent or unit sign, a run of ideographs (its first
segmented word is the unit: 30天, 2999元, 1073万用户), or an English word (kg, hours, Mbps, million,
"pages per minute"); see :func:`_unit_end`."""

_MAGNITUDES = frozenset({"thousand", "million", "billion", "trillion", "k", "m", "bn"})
"""The words an amount of money may carry after its number ($5 million)."""

_CLASSIFIERS = frozenset({"个", "多个", "余个"})
"""Chinese measure words that need the word after them to make a unit (48个月, 9个工作日)."""

_CLAUSE = re.compile(r"[，,；;。！？!?]")
"""What ends a clause: a candidate is ranked by the question words in its own clause."""

_ENTITY = re.compile(
    r"[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|de|da|von|van|and|&)\s+)?[A-Z0-9][\w'’.&-]*)*"
    r"|《[^》]+》|“[^”]+”|「[^」]+」"
)
"""A name: a run of capitalized words (with of/the/de/van/and inside: "Bank of America", "Aurora A48"),
or a title in Chinese or curly quotes (《红楼梦》)."""


def question_parts(question: str) -> list[str]:
    """The one or two questions that ``question`` asks, in order.

    "What is A, and what is B?" → ["What is A", "what is B?"]; "A是多少？B又是多少？" → both sentences
    (a third question stays with the second); "A和B的售价分别是多少？" → ["A的售价是多少？", "B的售价是多少？"].
    Anything else is one question.
    """
    english = re.split(r",?\s+and\s+(?=(?:what|how|when|who|whom|whose|where|which)\b)", question, maxsplit=1, flags=re.I)
    if len(english) == 2:
        return [part.strip() for part in english]
    respectively = re.fullmatch(r"(?P<a>.+?)和(?P<b>.+?)的(?P<what>.+?)分别(?P<rest>.*)", question.strip())
    if respectively:
        a, b, what, rest = respectively.group("a", "b", "what", "rest")
        return [f"{a}的{what}{rest}", f"{b}的{what}{rest}"]
    chinese = [p for p in re.split(r"(?<=[？?])", question.strip()) if p.strip()]
    if len(chinese) >= 2 and CJK.search(question):
        return [chinese[0].strip(), "".join(chinese[1:]).strip()]
    return [question]


def answer_type(question: str) -> AnswerType:
    """What ``question`` asks for, by the first rule of :data:`_TYPE_RULES` its words match; else ``sentence``."""
    for kind, pattern in _TYPE_RULES:
        if pattern.search(question):
            return kind
    return "sentence"


@dataclass(frozen=True)
class Span:
    """``text[start:end]`` of a sentence, a candidate answer of one :data:`AnswerType`."""

    start: int
    end: int
    text: str


def _dates(sentence: str) -> list[Span]:
    return [Span(m.start(), m.end(), m.group()) for m in _DATE.finditer(sentence)]


def _unit_end(sentence: str, end: int, money: bool) -> int:
    """Where the unit after a number ending at ``end`` ends (``end`` when there is none).

    Chinese: the first segmented word of the ideographs that follow (天 of 30天内, 元 of 2999元起),
    with the next word after a measure word (个 + 月); a particle (的, 是 …) is no unit. English: the
    next word unless it is a stopword ("8 in", "3 of"), with "per X" after it; after an amount of
    ``money`` ($5) only a magnitude ("million") is.
    """
    unit = _UNIT.match(sentence, end)
    if unit is None:
        return end
    if unit.group("cjk"):
        words = segment(unit.group("cjk"))
        if words[0] in _CLASSIFIERS:
            return end + sum(len(word) for word in words[:2])
        return end if words[0] in STOPWORDS_ZH else end + len(words[0])
    word = unit.group("word")
    if word and (word.lower() in STOPWORDS_LATIN or money and word.lower() not in _MAGNITUDES):
        return end
    return unit.end()


def _numbers(sentence: str) -> list[Span]:
    """Numbers with their currency before and unit after; not a number inside a date or a name (X1, A48)."""
    dates = _dates(sentence)
    spans = []
    for match in NUMBER.finditer(sentence):
        if match.group("number") is None or parse_number(match.group("number")) is None:
            continue
        start, end = match.span("number")
        if any(d.start <= start < d.end for d in dates) or (start > 0 and sentence[start - 1].isascii() and sentence[start - 1].isalpha()):
            continue
        before = sentence[max(0, start - 5):start]
        currency = _CURRENCY.search(before)
        prefix = currency or _DAYTIME.search(before)
        if prefix:
            start -= len(prefix.group())
        end = _unit_end(sentence, end, money=currency is not None)
        spans.append(Span(start, end, sentence[start:end]))
    return spans


def _entities(sentence: str) -> list[Span]:
    """Names, except a lone capitalized stopword ("The", "In" opening a sentence); a sentence's full stop
    is not part of the last word ("Sullivan.") but an initial's is ("J.")."""
    spans = []
    for match in _ENTITY.finditer(sentence):
        text = match.group()
        if text.endswith(".") and not re.search(r"\b\w\.$", text):
            text = text[:-1]
        if text.lower() not in STOPWORDS_LATIN:
            spans.append(Span(match.start(), match.start() + len(text), text))
    return spans


_CANDIDATES = {"date": _dates, "number": _numbers, "entity": _entities}


def _anchors(question: str, sentence: str) -> list[tuple[int, int]]:
    """Where the question's content words (its BM25 terms) occur in ``sentence``, as character spans."""
    lowered = normalize_text(sentence)
    if len(lowered) != len(sentence):  # NFKC changed the length: positions would not line up
        lowered = sentence.lower()
    found = []
    for term in set(bm25_tokens(question)):
        found += [(m.start(), m.end()) for m in re.finditer(re.escape(term), lowered)]
    return found


def _rank(span: Span, sentence: str, anchors: list[tuple[int, int]]) -> tuple[int, int, int]:
    """Sort key of a candidate, best first: (−question words in its clause, distance, start).

    The clause is the text between the clause breaks (，,；;。!?) around the span; distance =
    min over anchors (a, b) of max(0, a − span.end, span.start − b), 0 when they touch.
    """
    breaks = [m.start() for m in _CLAUSE.finditer(sentence)]
    left = max((b for b in breaks if b < span.start), default=-1)
    right = min((b for b in breaks if b >= span.end), default=len(sentence))
    in_clause = {sentence[a:b].lower() for a, b in anchors if left < a and b <= right}
    distance = min((max(0, a - span.end, span.start - b) for a, b in anchors), default=0)
    return -len(in_clause), distance, span.start


def extract_span(question: str, sentence: str, kind: AnswerType) -> str | None:
    """The span of type ``kind`` in ``sentence`` nearest the question's content words; None if there is none.

    Candidates are ranked by :func:`_rank`: the most distinct question words in the candidate's own
    clause, then the nearest one, then the leftmost. A candidate all of whose BM25 terms are among the
    question's (the value or name the question itself gives) is skipped. ``sentence`` type: None.
    """
    if kind == "sentence":
        return None
    asked = set(bm25_tokens(question))
    candidates = [s for s in _CANDIDATES[kind](sentence) if not asked.issuperset(bm25_tokens(s.text) or [""])]
    if not candidates:
        return None
    anchors = _anchors(question, sentence)
    return min(candidates, key=lambda s: _rank(s, sentence, anchors)).text.strip()
