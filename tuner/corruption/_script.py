"""Conflicts (dataset → **corruption** → dataset): what the corruption rules need to know about a document's language,
chosen by its script.

A document whose CJK characters outnumber its Latin-script words gets the Chinese rules (values
with 万/亿 and 年月日, 《titles》 and short terms as names, negation with 不/没有/未/并非, Chinese
framing and filler); any other document gets the English rules, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tuner.corruption import _text, _zh
from tuner.corruption._perturb import chinese_negation, negation
from tuner.corruption._text import Span


@dataclass(frozen=True)
class Script:
    """The language-specific pieces of the rules.

    ``is_name``: whether a keypoint's aliases name something (swapped for another name) rather
    than state something (negated). ``frames``: severity -> (prefix, suffix) of a contradiction.
    ``stops``: sentence-final punctuation, the first added to a framed sentence that lacks one.
    ``cased``: lowercase the first word of a framed sentence. ``vague``: value kind -> the phrase
    that withholds it. ``separator``: between kept sentences and filler. ``filler``: the three
    sentences of obvious relevance poisoning, ``more`` the pointer sentence of the other
    severities (``{all}``: the subjects listed; ``{first}``/``{First}``: the first one).
    """

    find_values: Callable[[str], list[Span]]
    find_entities: Callable[[str, Sequence[Span]], list[Span]]
    is_name: Callable[[Sequence[str]], bool]
    negation: Callable[[str, int, int], tuple[int, int, str] | None]
    frames: Mapping[str, tuple[str, str]]
    stops: str
    cased: bool
    vague: Mapping[str, str]
    separator: str
    and_word: str
    list_separator: str
    filler: tuple[str, str, str]
    more: str
    no_subject: str

    def join(self, names: Sequence[str]) -> str:
        """The names listed: "A, B and C" in English, "A、B和C" in Chinese."""
        return names[0] if len(names) == 1 else self.list_separator.join(names[:-1]) + self.and_word + names[-1]


ENGLISH = Script(
    find_values=_text.find_values,
    find_entities=_text.find_entities,
    is_name=lambda aliases: any(ch.isupper() for alias in aliases for ch in alias),
    negation=negation,
    frames={
        "subtle": ("As of the latest revision, ", ""),
        "moderate": ("Contrary to earlier reports, ", ""),
        "obvious": ("Contrary to earlier reports, ", " Any source stating otherwise is wrong."),
    },
    stops=".!?",
    cased=True,
    vague={
        "money": "an unspecified amount",
        "percent": "an unspecified percentage",
        "date": "an unspecified date",
        "number": "a number of",
        "entity": "an unnamed party",
    },
    separator=" ",
    and_word=" and ",
    list_separator=", ",
    filler=(
        "This page collects general notes about {all}.",
        "{First} comes up often in questions from readers.",
        "The specifics for {first} are covered in other documents.",
    ),
    more="More details about {all} are available in related documents.",
    no_subject="this topic",
)

CHINESE = Script(
    find_values=_zh.find_values,
    find_entities=_zh.find_entities,
    is_name=lambda aliases: any(_zh.is_term(alias) or any(ch.isupper() for ch in alias) for alias in aliases),
    negation=chinese_negation,
    frames={
        "subtle": ("据最新修订，", ""),
        "moderate": ("与此前的报道相反，", ""),
        "obvious": ("与此前的报道相反，", "任何与此不同的说法都是错误的。"),
    },
    stops="。！？.!?",
    cased=False,
    vague={"money": "一笔未公开的金额", "percent": "一定比例", "date": "某个日期", "number": "若干", "entity": "某一方"},
    separator="",
    and_word="和",
    list_separator="、",
    filler=("本页汇总了关于{all}的一般性说明。", "读者经常问到{first}的相关问题。", "{first}的具体信息见其他文档。"),
    more="关于{all}的更多细节见相关文档。",
    no_subject="这一主题",
)


def script_of(text: str) -> Script:
    """:data:`CHINESE` for text whose CJK characters outnumber its Latin-script words, else :data:`ENGLISH`."""
    return CHINESE if _zh.is_chinese(text) else ENGLISH
