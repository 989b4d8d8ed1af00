"""Golden set (reference answers → **keypoints**): ``tuner golden keypoints``: fill a case's missing keypoints from its
reference answer by offline rules.

A keypoint is a checkable fact with aliases, any one of which counts. The rules take from the answer: dates
(``2016年9月4日`` with alias ``2016-09-04``), percentages (``百分之十二`` / ``12%``), numbers with their unit (``七十天``
with alias ``70天``), titles in 《》 and quoted spans, English capitalized names that also occur in a relevant document,
and, first, a short answer (at most :data:`SHORT_ANSWER` words) that occurs whole in a relevant document, as one keypoint. A case a person
reviewed (``"keypoints_reviewed": true``) or that already has keypoints is never changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuner.dataset import CORPUS, GOLDEN, load_knowledge_base
from tuner.errors import UserError
from tuner.io import atomic_write_bytes, atomic_write_text
from tuner.text import NUMBER, STOPWORDS_LATIN, find_dates, format_number, has_chinese, normalize_text, parse_number, word_count

SHORT_ANSWER = 8
BACKUP_SUFFIX = ".bak"

_PERCENT = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?:%|％|\s*percent\b|\s*per\s+cent\b)|百分之(?P<zh>[零〇一二三四五六七八九十百千点\d.]+)")
_UNIT = re.compile(r"\s?(?P<unit>[A-Za-z]{1,12}\b|[个名位只件天年月日周岁元美港万亿千百米公里克吨倍人次条项家座所]{1,3})")
_QUOTED = re.compile(r"《(?P<a>[^》]{1,60})》|“(?P<b>[^”]{1,60})”|「(?P<c>[^」]{1,60})」|\"(?P<d>[^\"]{1,60})\"")
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|the|de|and|von|van|&)?\s*[A-Z][\w'’.-]*)*")


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

    short = answer.strip().rstrip("。.")
    if short and word_count(short) <= SHORT_ANSWER and any(_squash(short) in doc for doc in docs):
        # a short answer found whole in a document is one fact: the spans inside it are not keypoints of their own
        number = parse_number(short)
        dates = find_dates(short)
        alias = format_number(number) if number is not None else dates[0].iso if len(dates) == 1 and len(short) - len(dates[0].iso) < 4 else None
        add(0, len(answer), (short, alias) if alias else (short,))
    for mention in find_dates(answer):
        add(mention.start, mention.end, (answer[mention.start:mention.end], mention.iso))
    for match in _PERCENT.finditer(answer):
        percent = match["n"] or (format_number(v) if (v := parse_number(match["zh"])) is not None else None)
        if percent is not None:
            add(match.start(), match.end(), (match[0], f"{percent}%"))
    for match in NUMBER.finditer(answer):
        numeral = match.groupdict().get("number")
        value = parse_number(numeral) if numeral else None
        unit = _UNIT.match(answer, match.end())
        if value is None or unit is None or unit["unit"].lower() in STOPWORDS_LATIN:
            continue
        span = answer[match.start():unit.end()]
        arabic = format_number(value) + (unit[0] if not has_chinese(unit["unit"]) or not has_chinese(numeral or "") else unit["unit"])
        add(match.start(), unit.end(), (span, arabic))
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
    return [aliases for _, aliases in sorted(found, key=lambda item: item[0])]


@dataclass
class KeypointsReport:
    """Case ids filled (with their keypoints), left alone because a person reviewed them, or that no rule matched."""

    filled: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    reviewed: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    backup: Path | None = None


def fill_keypoints(dataset: Path) -> KeypointsReport:
    """Fill empty ``keypoints`` of ``dataset/golden.jsonl`` in place by :func:`rule_keypoints`; the old file is kept
    as ``golden.jsonl.bak`` beside it. Other fields and untouched rows are written back as they were read."""
    kb = load_knowledge_base(dataset)
    golden = Path(dataset) / GOLDEN
    if not golden.is_file():
        raise UserError(f"{golden}: missing (keypoints are filled in a golden set; {CORPUS} alone has none)")
    texts = {doc.doc_id: f"{doc.title}\n{doc.text}" for doc in kb.corpus}
    report = KeypointsReport()
    lines: list[str] = []
    raw = golden.read_bytes()
    for line in raw.decode("utf-8").splitlines():
        if not line.strip():
            continue
        row: dict[str, Any] = json.loads(line)
        if not row["keypoints"]:
            if row.get("keypoints_reviewed") is True:
                report.reviewed.append(row["id"])
            else:
                keypoints = rule_keypoints(row["ground_truth"], [texts[d] for d in row["relevant_doc_ids"]])
                if keypoints:
                    row["keypoints"] = [list(k) for k in keypoints]
                    report.filled[row["id"]] = keypoints
                else:
                    report.unmatched.append(row["id"])
        lines.append(json.dumps(row, ensure_ascii=False))
    if report.filled:
        report.backup = golden.with_name(golden.name + BACKUP_SUFFIX)
        atomic_write_bytes(report.backup, raw)
        atomic_write_text(golden, "\n".join(lines) + "\n")
    return report
