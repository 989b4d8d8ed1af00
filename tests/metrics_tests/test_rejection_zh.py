"""Chinese abstentions count as rejections; Chinese answers that state a fact do not."""

from __future__ import annotations

import pytest

from tuner.generation import ABSTAIN_ZH
from tuner.metrics import rejected


@pytest.mark.parametrize(
    "answer",
    [
        "我不知道。",
        ABSTAIN_ZH,  # what the Chinese generator prompt asks for
        "抱歉，我不知道答案。",  # no spaces around the phrase: Chinese phrases match inside a run of characters
        "根据上下文无法回答这个问题。",
        "上下文中没有提到X200的价格。",
        "上下文未提及保修期限。",
        "所给段落中没有相关内容。",
        "没有足够的信息来回答。",
        "I don't know / 我不知道",
    ],
)
def test_chinese_abstentions_are_rejections(answer: str) -> None:
    assert rejected(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "X200 售价 1299 元。",
        "保修期为两年，上下文中写明了这一点。",  # "上下文中" alone is not an abstention
        "我知道答案：30天内可以退货。",
        "",
    ],
)
def test_chinese_answers_are_not_rejections(answer: str) -> None:
    assert not rejected(answer)


def test_chinese_phrases_are_matched_inside_text_but_english_ones_stay_whole_words() -> None:
    assert rejected("答：信息不足", phrases=["信息不足"])
    assert not rejected("It is not enough informationally dense", phrases=["not enough information"])
