"""Golden set (reference answers → **keypoints**): ``tuner golden keypoints``: fill a case's missing keypoints from its
reference answer by offline rules.

A keypoint is a checkable fact with aliases, any one of which counts. The rules take from the answer: version numbers
(``2.9.4``), dates (``2016年9月4日`` with alias ``2016-09-04``), percentages (``百分之十二`` / ``12%``), numbers with their
unit (``七十天`` with alias ``70天``; Chinese units of :data:`ZH_UNITS` such as ``分贝``, ``分钟``, ``平方米``; a measure
word with the noun it counts, ``20个字符``; English units of one or two words, ``2.2 kg``, ``3 business days``,
``46 pages per minute``, ``54 °C``, ``9 a.m.``), a rate before it (``每天12小时``), a currency sign (``$2,009``), a time
of day (``上午7点`` with alias ``7:00``), a number with a Chinese magnitude (``1073万用户``), years after
``in``/``since``/... and numbers with thousands separators that a relevant document also has, titles in 《》 and
quoted spans, named spans that also occur in a relevant document (English capitalized names; Chinese words jieba tags
as names of persons, places, organizations or other proper nouns — ``nr``, ``ns``, ``nt``, ``nz`` — adjacent ones
joined, :data:`NAMED_SPAN` characters long), and, when nothing else is found, a short answer (at most
:data:`SHORT_ANSWER` words) that occurs whole in a relevant document, as one keypoint. Not facts: digits glued to a
letter (the ``10`` of ``M10``), ``一`` in fixed words (``充一次电``), and the common nouns jieba tags as places
(:data:`_NOT_NAMES`). On the demo's reference answers: bench/HISTORY.md, "Issue 38 §2".

With a chat model (:func:`fill_keypoints` given a client), the model splits the answer into atomic checkable facts, asked
in the answer's language (:data:`PROMPTS`), each fact with aliases copied from the relevant documents; an alias not
found verbatim in one of them (after :func:`tuner.text.normalize_text`) is dropped, and so is a fact left without any.

A case a person reviewed (``"keypoints_reviewed": true``) or that already has keypoints is never changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from tuner.dataset import CORPUS, GOLDEN, load_knowledge_base
from tuner.errors import UserError
from tuner.golden._ask import Spend
from tuner.io import atomic_write_bytes, atomic_write_text, jsonl_lines, jsonl_text, parse_jsonl_line
from tuner.llm import ChatClient, fill, json_object
from tuner.text import (
    CJK_CHARS, NUMBER, STOPWORDS_LATIN, Language, detect_language, find_dates, format_number, has_chinese, normalize_text, parse_number, tag,
    word_count,
)

SHORT_ANSWER = 8
NAMED_SPAN = (2, 20)
"""Length limits (characters) of a Chinese named span: one character is too ambiguous to check, a long run is a clause."""
_NAMED_FLAGS = ("nr", "ns", "nt", "nz")
_CJK = re.compile(f"[{CJK_CHARS}]")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")
_YEAR = re.compile(r"1\d{3}|20\d{2}")
_BEFORE_YEAR = re.compile(r"\b(?:in|since|by|until|till|from|before|after|during)\s+$", re.IGNORECASE)
BACKUP_SUFFIX = ".bak"

_PERCENT = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?:%|％|\s*percent\b|\s*per\s+cent\b)|百分之(?P<zh>[零〇一二三四五六七八九十百千点\d.]+)")
ZH_UNITS = (
    "平方公里", "平方千米", "平方米", "立方米", "公里", "千米", "厘米", "毫米", "米", "千克", "公斤", "毫克", "克", "吨", "升", "毫升",
    "个小时", "小时", "分钟", "秒钟", "秒", "个工作日", "工作日", "天", "周", "个星期", "星期", "个月", "月", "年", "岁", "期",
    "分贝", "赫兹", "流明", "像素", "瓦", "伏", "毫安时", "摄氏度", "度",
    "美元", "港元", "欧元", "英镑", "日元", "元", "块", "倍",
    "个", "名", "位", "只", "件", "台", "张", "页", "项", "条", "家", "座", "所", "人", "次", "款", "种", "套",
)
"""Chinese units and measure words a number takes, longest first where one begins another (``分贝`` and ``分钟``
before ``分`` alone is never a unit: ``20分`` is a score)."""
_MEASURE_WORDS = frozenset("个名位只件台张页项条家座所种套款")
"""Measure words, which count a noun: the noun after one is part of the fact (``20个字符``, ``94名员工``)."""
_UNIT = re.compile(
    r"\s?(?P<unit>°C|°F|℃|℉|㎡|[ap]\.m\.(?!\w)"
    r"|(?:square|cubic|business|working|calendar)\s+[A-Za-z]{2,12}(?![A-Za-z])"
    r"|[A-Za-z]{1,12}(?![A-Za-z])(?:\s+(?:per|a)\s+[a-z]{3,9}(?![A-Za-z]))?"
    rf"|{'|'.join(ZH_UNITS)})")
_CURRENCY = re.compile(r"(?:US\$|HK\$|[$¥￥€£])\s?$")
_PER = re.compile(r"(?:每天|每日|每周|每月|每年|每次)$")
_CLOCK = re.compile(r"(?:上午|下午|晚上|早上|凌晨|中午)$")
_VERSION = re.compile(r"(?<![\w.])[vV]?\d+\.\d+\.\d+(?!\w|\.\d)")
_FIXED_ONE = re.compile(r"一(?:次|下|些|般|样|起|定|直|切|点|会)")
"""``一`` in fixed words, not a count: ``充一次电`` (charge it once), ``一般`` (usually)."""
_NOT_NAMES = frozenset({"蓝牙", "日志"})
"""Common nouns jieba's dictionary tags as place names (``ns``): Bluetooth, log."""
_QUOTED = re.compile(r"《(?P<a>[^》]{1,60})》|“(?P<b>[^”]{1,60})”|「(?P<c>[^」]{1,60})」|\"(?P<d>[^\"]{1,60})\"")
_NAME = re.compile(r"\b[A-Z][A-Za-z0-9'’.-]*(?:\s+(?:of|the|de|and|von|van|&)?\s*[A-Z][A-Za-z0-9'’.-]*)*")

PROMPTS: dict[Language, str] = {
    "en": (
        "Split the reference answer below into its atomic checkable facts, so that a grader can check one by one whether "
        "another answer states each of them.\n"
        "Rules:\n"
        "- One fact per keypoint: a number with its unit, a date, a name, a short clause. Leave out filler and opinions.\n"
        "- Each keypoint is a list of aliases, different ways of writing the same fact; every alias is copied exactly, "
        "character for character, from the documents below. Leave out a fact the documents do not contain.\n"
        'Reply with only a JSON object: {"keypoints": [["alias", "..."]]}\n\n'
        "QUESTION: {question}\nREFERENCE ANSWER: {answer}\n\n{documents}"
    ),
    "zh": (
        "把下面的参考答案拆成一个个可以单独核对的原子事实，以便评分者逐条检查另一个回答是否说出了每一条。\n"
        "要求：\n"
        "- 每个要点只含一个事实：带单位的数字、日期、名称或一个短小的分句。不要收录套话和观点。\n"
        "- 每个要点是一组同义表述；每个表述都必须从下面的文档中逐字复制。文档中没有的事实不要收录。\n"
        '只回复一个 JSON 对象：{"keypoints": [["表述", "..."]]}\n\n'
        "问题：{question}\n参考答案：{answer}\n\n{documents}"
    ),
}
"""The request of the chat-model mode, in the answer's language."""
_DOCUMENT_LABEL = {"en": "DOCUMENT {n}", "zh": "文档{n}"}


def _squash(text: str) -> str:
    """What "occurs in the document" compares: NFKC lower case without spaces (passages may read ``August 8 , 2014``)."""
    return re.sub(r"[\s,，]+", "", normalize_text(text))


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in taken)


def rule_keypoints(answer: str, documents: Sequence[str]) -> list[tuple[str, ...]]:
    """Keypoints of ``answer`` by the offline rules (module doc); named spans must occur in one of ``documents``.

    >>> rule_keypoints("他于2016年9月4日获得七十万元，占百分之十二，著有《活着》。", [])
    [('2016年9月4日', '2016-09-04'), ('七十万元', '700000元'), ('百分之十二', '12%'), ('活着',)]
    >>> rule_keypoints("七十", ["他活了七十岁"])
    [('七十', '70')]
    """
    found: list[tuple[int, tuple[str, ...]]] = []
    taken: list[tuple[int, int]] = []
    docs = [_squash(doc) for doc in documents]

    def add(start: int, end: int, aliases: tuple[str, ...]) -> None:
        if not _overlaps(start, end, taken):
            taken.append((start, end))
            found.append((start, tuple(dict.fromkeys(a.strip() for a in aliases if a.strip()))))

    for match in _VERSION.finditer(answer):
        add(match.start(), match.end(), (match[0],))
    for mention in find_dates(answer):
        add(mention.start, mention.end, (answer[mention.start:mention.end], mention.iso))
    for match in _PERCENT.finditer(answer):
        percent = match["n"] or (format_number(v) if (v := parse_number(match["zh"])) is not None else None)
        if percent is not None:
            add(match.start(), match.end(), (match[0], f"{percent}%"))
    for match in NUMBER.finditer(answer):
        numeral = match.groupdict().get("number")
        value = parse_number(numeral) if numeral else None
        if value is None or not numeral or _part_of_word(answer, match.start()) or _FIXED_ONE.match(answer, match.start()):
            continue
        fact = _quantity(answer, match.start(), match.end(), numeral, value)
        if fact is not None:
            add(*fact)
        elif _bare_number(answer, match.start(), numeral) and any(_squash(numeral) in doc for doc in docs):
            add(match.start(), match.end(), (numeral, format_number(value)))
    for match in _QUOTED.finditer(answer):
        inner = next(g for g in match.groups() if g)
        add(match.start(), match.end(), (inner,))
    for match in _NAME.finditer(answer):
        name = match[0].rstrip(".")
        words = name.split()
        if words and words[0].lower() in STOPWORDS_LATIN:
            name = " ".join(words[1:])
        before = answer[: match.start()].rstrip()
        if len(name.split()) == 1 and (not before or before[-1] in ".!?。！？"):
            continue  # one capitalized word opening a sentence is just a sentence start
        if len(name) > 2 and any(_squash(name) in doc for doc in docs):
            add(match.start(), match.start() + len(name), (name,))
    for start, name in chinese_names(answer):
        if name not in _NOT_NAMES and any(_squash(name) in doc for doc in docs):
            add(start, start + len(name), (name,))
    short = answer.strip().rstrip("。.")
    if not found and short and word_count(short) <= SHORT_ANSWER and any(_squash(short) in doc for doc in docs):
        # a short answer found whole in a document, with no fact of its own inside, is one fact
        number = parse_number(short)
        dates = find_dates(short)
        alias = format_number(number) if number is not None else dates[0].iso if len(dates) == 1 and len(short) - len(dates[0].iso) < 4 else None
        add(0, len(answer), (short, alias) if alias else (short,))
    return [aliases for _, aliases in sorted(found, key=lambda item: item[0])]


def _part_of_word(answer: str, start: int) -> bool:
    """A number glued to the Latin letter before it is part of a code, not a quantity (``M10``, ``Z48``)."""
    return start > 0 and answer[start - 1].isascii() and answer[start - 1].isalpha()


def _quantity(answer: str, start: int, end: int, numeral: str, value: Fraction) -> tuple[int, int, tuple[str, ...]] | None:
    """The fact a number at ``answer[start:end]`` states, as ``(start, end, aliases)``, else ``None``: with its unit
    (``18小时``, ``2.2 kg``, ``46 pages per minute``; a Chinese measure word takes its noun: ``20个字符``), a
    ``每天``-style rate before it (``每天12小时``), a currency sign (``$2,009``), a time of day (``上午7点``: ``7:00``),
    or a Chinese magnitude alone (``1073万``)."""
    arabic = format_number(value)
    if answer.startswith("点", end) and (clock := _CLOCK.search(answer, 0, start)) is not None:
        hour = int(value) + (12 if clock[0] in ("下午", "晚上") and value < 12 else 0)
        return clock.start(), end + 1, (answer[clock.start():end + 1], f"{hour}:00")
    unit = _UNIT.match(answer, end)
    if unit is not None and unit["unit"].split()[0].lower() not in STOPWORDS_LATIN:
        stop = unit.end()
        name = unit["unit"] if has_chinese(unit["unit"]) and has_chinese(numeral) else unit[0]
        if unit["unit"] in _MEASURE_WORDS:
            noun = _noun_at(answer, stop)
            stop, name = stop + len(noun), name + noun
        rate = _PER.search(answer, 0, start)
        first = rate.start() if rate is not None else start
        return first, stop, (answer[first:stop], (rate[0] if rate is not None else "") + arabic + name)
    currency = _CURRENCY.search(answer, 0, start)
    if currency is not None:
        return currency.start(), end, (answer[currency.start():end], currency[0].strip() + arabic)
    if numeral[-1] in "万亿":
        noun = _noun_at(answer, end)
        return start, end + len(noun), (numeral + noun, arabic + noun) if noun else (numeral, arabic)
    return None


def _noun_at(text: str, start: int) -> str:
    """The Chinese noun jieba reads at ``text[start:]`` (``字符``, ``员工``, ``工作日``), else ``""``."""
    words = tag(text[start:start + 8])
    if words and words[0][1][0] in "nt" and len(words[0][0]) <= 4 and _CJK.match(words[0][0]):
        return words[0][0]
    return ""


def _bare_number(answer: str, start: int, numeral: str) -> bool:
    """A number without a unit that is still a fact: a year after ``in``, ``since``, ... (``In 1978``), or a large
    number written with thousands separators (``559,277``)."""
    if _GROUPED.fullmatch(numeral):
        return True
    return bool(_YEAR.fullmatch(numeral) and _BEFORE_YEAR.search(answer[:start]))


def chinese_names(text: str) -> list[tuple[int, str]]:
    """``(offset, span)`` of the Chinese named spans of ``text``: runs of adjacent words jieba tags ``nr``, ``ns``,
    ``nt`` or ``nz`` (``nrfg``, ``nrt`` included), written in Chinese, within :data:`NAMED_SPAN` characters.

    >>> chinese_names("马飚在广西柳州钢铁厂当工人。")
    [(0, '马飚'), (3, '广西柳州')]
    """
    spans: list[tuple[int, str]] = []
    offset, run_start, run = 0, 0, ""
    for word, flag in [*tag(text), ("", "x")]:
        if word and flag.startswith(_NAMED_FLAGS) and _CJK.search(word):
            run_start, run = (run_start, run + word) if run else (offset, word)
        else:
            if NAMED_SPAN[0] <= len(run) <= NAMED_SPAN[1]:
                spans.append((run_start, run))
            run = ""
        offset += len(word)
    return spans


def keypoint_list(items: object) -> list[list[str]] | None:
    """A reply's keypoints as lists of stripped, non-empty aliases (one string is one alias; empty keypoints left
    out); ``None`` when it is not a list of strings and lists of strings."""
    if not isinstance(items, list):
        return None
    cleaned = []
    for item in items:
        aliases = [item] if isinstance(item, str) else item if isinstance(item, list) else None
        if aliases is None or not all(isinstance(a, str) for a in aliases):
            return None
        if any(a.strip() for a in aliases):
            cleaned.append([a.strip() for a in aliases if a.strip()])
    return cleaned


def aliases_found(keypoints: list[list[str]], documents: Sequence[str]) -> list[list[str]]:
    """Per keypoint, its aliases that occur verbatim in one of ``documents`` (after :func:`tuner.text.normalize_text`);
    an empty list where none does.

    >>> aliases_found([["２-Year", "two years"], ["45 days"]], ["a 2-year warranty", "within 30 days"])
    [['２-Year'], []]
    """
    normal = [normalize_text(doc) for doc in documents]
    return [[a for a in k if any(normalize_text(a) in doc for doc in normal)] for k in keypoints]


def keypoint_prompt(question: str, answer: str, documents: Sequence[str]) -> str:
    """The chat-model request for one case, in the answer's language."""
    language = detect_language([answer])
    listed = "\n\n".join(f"{_DOCUMENT_LABEL[language].format(n=i)}:\n{doc}" for i, doc in enumerate(documents, start=1))
    return fill(PROMPTS[language], question=question, answer=answer, documents=listed)


def parse_keypoints(reply: str) -> list[list[str]] | None:
    """The ``keypoints`` of a reply holding one JSON object; ``None`` when there is none or it is mistyped (nothing is
    guessed from free text)."""
    payload = json_object(reply)
    return None if payload is None or "keypoints" not in payload else keypoint_list(payload["keypoints"])


@dataclass
class KeypointsReport:
    """Case ids filled (with their keypoints), left alone because a person reviewed them, or that could not be filled
    (no rule matched; with a model, no fact had an alias found verbatim); with a model also the cases whose reply was
    malformed (``unparseable``), whose request failed, or that the token budget left for a re-run, the facts dropped
    for want of a verbatim alias, and what was sent (``spend``)."""

    filled: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    reviewed: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    unparseable: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    not_reached: list[str] = field(default_factory=list)
    dropped_facts: int = 0
    spend: Spend | None = None
    backup: Path | None = None


@dataclass(frozen=True)
class PendingCase:
    """A case whose keypoints are to be filled: its reference answer and its relevant documents' texts."""

    case_id: str
    question: str
    answer: str
    documents: tuple[str, ...]

    @property
    def prompt(self) -> str:
        return keypoint_prompt(self.question, self.answer, self.documents)


def _golden(dataset: Path) -> tuple[Path, bytes, list[dict[str, Any]], dict[str, str]]:
    """``golden.jsonl``'s path, bytes and rows, and the text (title and body) of every corpus document."""
    kb = load_knowledge_base(dataset)
    golden = Path(dataset) / GOLDEN
    if not golden.is_file():
        raise UserError(f"{golden}: missing (keypoints are filled in a golden set; {CORPUS} alone has none)")
    raw = golden.read_bytes()
    rows = [parse_jsonl_line(line, first=number == 1) for number, line in jsonl_lines(raw)]  # validated by the load above
    return golden, raw, rows, {doc.doc_id: f"{doc.title}\n{doc.text}" for doc in kb.corpus}


def pending_cases(dataset: Path) -> list[PendingCase]:
    """The cases of ``dataset/golden.jsonl`` with no keypoints that no person reviewed, in file order."""
    _, _, rows, texts = _golden(dataset)
    return _pending(rows, texts)


def _pending(rows: list[dict[str, Any]], texts: dict[str, str]) -> list[PendingCase]:
    return [PendingCase(row["id"], row["question"], row["ground_truth"], tuple(texts[d] for d in row["relevant_doc_ids"]))
            for row in rows if not row["keypoints"] and row.get("keypoints_reviewed") is not True]


def fill_keypoints(dataset: Path, client: ChatClient | None = None, *, budget: int | None = None, concurrency: int = 1) -> KeypointsReport:
    """Fill empty ``keypoints`` of ``dataset/golden.jsonl`` in place, by :func:`rule_keypoints`, or with ``client`` by
    the chat model (at most ``concurrency`` requests in flight; none sent once ``budget`` tokens are spent, the rest left
    for a re-run). The old file is kept as ``golden.jsonl.bak`` beside it. Other fields and untouched rows are written
    back as they were read."""
    golden, raw, rows, texts = _golden(dataset)
    report = KeypointsReport(reviewed=[r["id"] for r in rows if not r["keypoints"] and r.get("keypoints_reviewed") is True])
    pending = _pending(rows, texts)
    found: dict[str, list[tuple[str, ...]]] = {}
    if client is None:
        for case in pending:
            found[case.case_id] = rule_keypoints(case.answer, case.documents)
    else:
        report.spend = Spend(budget=budget)
        for start in range(0, len(pending), concurrency):
            batch = pending[start:start + concurrency]
            if report.spend.exhausted():
                report.not_reached = [case.case_id for case in pending[start:]]
                break
            for case, reply in zip(batch, report.spend.ask(client, [case.prompt for case in batch], concurrency)):
                facts = None if reply is None else parse_keypoints(reply)
                if reply is None:
                    report.failed.append(case.case_id)
                elif facts is None:
                    report.unparseable.append(case.case_id)
                else:
                    kept = [aliases for aliases in aliases_found(facts, case.documents) if aliases]
                    report.dropped_facts += len(facts) - len(kept)
                    found[case.case_id] = [tuple(dict.fromkeys(aliases)) for aliases in kept]
    for case_id, keypoints in found.items():
        if keypoints:
            report.filled[case_id] = keypoints
        else:
            report.unmatched.append(case_id)
    if report.filled:
        for row in rows:
            if row["id"] in report.filled:
                row["keypoints"] = [list(k) for k in report.filled[row["id"]]]
        report.backup = golden.with_name(golden.name + BACKUP_SUFFIX)
        atomic_write_bytes(report.backup, raw)
        atomic_write_text(golden, jsonl_text(rows))
    return report
