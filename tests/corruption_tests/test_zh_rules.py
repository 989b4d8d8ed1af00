"""Chinese documents get Chinese rules: values with 万/亿 and 年月日, terms as names, 不/没有/未/并非."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from tuner.corruption import CORRUPTORS, SEVERITIES, CaseFacts, CorruptedDoc, corpus_entities
from tuner.corruption._perturb import PLAUSIBLE, TYPO, chinese_negation, shift_date
from tuner.corruption._text import answer_spans
from tuner.corruption._zh import find_entities, find_values, is_chinese, is_term
from tuner.dataset import Dataset, Document, GoldenCase, Keypoint
from tuner.judging import LexicalJudge
from tuner.text import parse_number

MISLEADING = ("factual_corruption", "contradiction_injection", "numeric_typo")
RETURNS = "本店退货期为30天，退款在5个工作日内到账。"
LAUNCH = "旗舰机X200售价5999元，于2016年9月4日发布，已售出1361万台。"
STORES = "该品牌在全国共有七十家门店。"
GAME = "基于《跑跑卡丁车》与《泡泡堂》开发的游戏，由韩国Nexon开发。中国大陆由盛大游戏运营，台湾由游戏橘子运营。"
WINE = "白葡萄酒比红葡萄酒含有更多的亚硫酸盐，适合搭配海鲜。"
POOL = ("游戏橘子", "腾讯游戏", "盛大网络", "晋国", "Nexon")


def corrupt(text: str, kind: str, severity: str, keypoints: tuple[Keypoint, ...], seed: int = 0) -> CorruptedDoc:
    result = CORRUPTORS[kind].corrupt(Document("d", text, title="标题"), CaseFacts(keypoints, POOL), severity, random.Random(seed))
    assert result is not None
    return result


def test_values_are_typed_and_read_through_chinese_units() -> None:
    text = "X200售价5999元，于2016年9月4日发布，9月10日开售，售出1361万台，占百分之五，增长12%，共七十家店，3个国家，1.5亿元，¥299。"
    assert [(text[v.start : v.end], v.kind) for v in find_values(text)] == [
        ("5999元", "money"), ("2016年9月4日", "date"), ("9月10日", "date"), ("1361万", "number"), ("百分之五", "percent"),
        ("12%", "percent"), ("七十", "number"), ("3", "number"), ("1.5亿元", "money"), ("¥299", "money"),
    ]  # fmt: skip


def test_lone_one_and_month_names_are_not_values() -> None:
    assert find_values("一个游戏在9月上线，两岸统一发行。") == []


def test_names_are_latin_names_and_titles() -> None:
    text = "由韩国Nexon开发，MIT OpenCourseWare与《泡泡堂》，iPhone 15"
    assert [text[e.start : e.end] for e in find_entities(text)] == ["Nexon", "MIT OpenCourseWare", "《泡泡堂》"]


def test_script_and_terms() -> None:
    assert is_chinese("iPhone 15售价5999元") and not is_chinese("The X100 costs $1,299 in 北京")
    assert is_term("盛大游戏") and not is_term("玩家以水枪泡封敌人") and not is_term("不是") and not is_term("Nexon")


def test_an_answer_inside_unsegmented_text_is_not_widened_to_the_clause() -> None:
    spans = answer_spans(RETURNS, (("30天",),), find_values(RETURNS))
    assert [RETURNS[s.start : s.end] for s in spans] == ["30天"]


@pytest.mark.parametrize(
    ("sentence", "statement", "expected"),
    [
        ("该机型是防水的", "防水", "该机型不是防水的"),
        ("退货期为三十天", "三十天", "退货期并非三十天"),
        ("本店有会员折扣", "会员折扣", "本店没有会员折扣"),
        ("新版已经发布", "发布", "新版并未发布"),
        ("系统支持中文输入", "中文输入", "系统不支持中文输入"),
        ("白葡萄酒比红葡萄酒含有更多的亚硫酸盐", "白葡萄酒比红葡萄酒含有更多的亚硫酸盐", "白葡萄酒比红葡萄酒不含有更多的亚硫酸盐"),
        ("天气很好，该机型是防水的", "天气", None),  # the predicate is in another clause
        ("或是红色，因为所有人都喜欢", "红色", None),
        ("它不是防水的", "防水", None),
    ],
)
def test_chinese_negation(sentence: str, statement: str, expected: str | None) -> None:
    start = sentence.index(statement)
    edit = chinese_negation(sentence, start, start + len(statement))
    assert (None if edit is None else sentence[: edit[0]] + edit[2] + sentence[edit[1] :]) == expected


@pytest.mark.parametrize(
    ("date", "shape"),
    [
        ("2016年9月4日", r"\d{4}年[1-9]\d?月[1-9]\d?日"),
        ("2016年09月04日", r"\d{4}年\d\d月\d\d日"),
        ("2016年9月", r"\d{4}年[1-9]\d?月"),
        ("9月4号", r"[1-9]\d?月[1-9]\d?号"),
        ("2016年", r"\d{4}年"),
    ],
)
def test_chinese_dates_keep_their_format_and_always_move(date: str, shape: str) -> None:
    for style in (PLAUSIBLE, TYPO):
        for rules in style.dates.values():
            for seed in range(10):
                new = shift_date(date, rules, random.Random(seed))
                assert new != date and re.fullmatch(shape, new), new


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("kind", MISLEADING)
@pytest.mark.parametrize(
    ("text", "keypoint"), [(RETURNS, ("30天", "三十天")), (LAUNCH, ("2016年9月4日",)), (LAUNCH, ("1361万",)), (STORES, ("七十家",))]
)
def test_misleading_kinds_displace_chinese_values_and_the_judge_finds_the_wrong_ones(
    text: str, keypoint: Keypoint, kind: str, severity: str
) -> None:
    result = corrupt(text, kind, severity, (keypoint,))
    assert not any(alias in result.text for alias in keypoint)
    assert result.wrong_values and all(value in result.text for value in result.wrong_values)
    (verdict,) = LexicalJudge().judge("?", result.wrong_values[0], [result.text], [keypoint], result.wrong_values)
    assert (verdict.answer, verdict.context) == ("contradicted", "contradicted")


def test_chinese_numerals_are_rewritten_in_chinese() -> None:
    for severity in SEVERITIES:
        (wrong,) = corrupt(STORES, "factual_corruption", severity, (("七十家",),)).wrong_values
        assert re.fullmatch("[一二三四五六七八九十百千万亿零]+家", wrong) and parse_number(wrong[:-1]) != 70


def test_numeric_distance_grows_with_severity_in_chinese() -> None:
    def distance(severity: str, seed: int) -> float:
        (wrong,) = corrupt(LAUNCH, "factual_corruption", severity, (("5999元",),), seed).wrong_values
        return abs(math.log(int(wrong.removesuffix("元")) / 5999))

    distances = {s: [distance(s, seed) for seed in range(10)] for s in SEVERITIES}
    assert 0 < max(distances["subtle"]) < min(distances["moderate"])
    assert max(distances["moderate"]) < min(distances["obvious"])


def test_a_term_is_swapped_for_a_chinese_name_of_the_same_length_when_subtle() -> None:
    subtle = {corrupt(GAME, "factual_corruption", "subtle", (("盛大游戏",),), seed).wrong_values[0] for seed in range(8)}
    obvious = {corrupt(GAME, "factual_corruption", "obvious", (("盛大游戏",),), seed).wrong_values[0] for seed in range(8)}
    assert subtle <= {"游戏橘子", "腾讯游戏", "盛大网络"}
    assert "晋国" in obvious and "Nexon" not in obvious  # a Chinese name is swapped for a Chinese one
    result = corrupt(GAME, "factual_corruption", "subtle", (("盛大游戏",),))
    assert result.text == GAME.replace("盛大游戏", result.wrong_values[0], 1)


def test_a_statement_is_negated_and_framed_by_severity() -> None:
    keypoints = (("白葡萄酒比红葡萄酒含有更多的亚硫酸盐",),)
    factual = corrupt(WINE, "factual_corruption", "subtle", keypoints)
    assert factual.text == "白葡萄酒比红葡萄酒不含有更多的亚硫酸盐，适合搭配海鲜。"
    assert factual.wrong_values == ("白葡萄酒比红葡萄酒不含有更多的亚硫酸盐",)
    texts = {s: corrupt(WINE, "contradiction_injection", s, keypoints).text for s in SEVERITIES}
    assert texts["subtle"] == "据最新修订，" + factual.text
    assert texts["moderate"] == "与此前的报道相反，" + factual.text
    assert texts["obvious"] == "与此前的报道相反，" + factual.text + "任何与此不同的说法都是错误的。"


def test_relevance_poisoning_in_chinese_keeps_the_names_and_withholds_the_answer() -> None:
    keypoints = (("盛大游戏",),)
    subtle, moderate, obvious = (corrupt(GAME, "relevance_poisoning", s, keypoints) for s in SEVERITIES)
    assert subtle.text == GAME.replace("盛大游戏", "某一方")
    # moderate drops the answer-bearing sentence (split at 。) and keeps the other one
    assert moderate.text == "基于《跑跑卡丁车》与《泡泡堂》开发的游戏，由韩国Nexon开发。关于《跑跑卡丁车》、《泡泡堂》和Nexon的更多细节见相关文档。"
    assert obvious.text.startswith("本页汇总了关于《跑跑卡丁车》、《泡泡堂》和Nexon的一般性说明。")
    assert all(r.wrong_values == () and "盛大游戏" not in r.text for r in (subtle, moderate, obvious))
    assert corrupt(RETURNS, "relevance_poisoning", "subtle", (("30天",),)).text == (
        "本店退货期为若干天，退款在5个工作日内到账。关于标题的更多细节见相关文档。"  # the title stands in for missing names
    )


def test_the_swap_pool_holds_chinese_names_and_term_answers() -> None:
    dataset = Dataset(
        path=Path("zh"),
        corpus=(Document("game", GAME),),
        golden=(GoldenCase("q", "谁在中国大陆运营？", "盛大游戏", (("盛大游戏",), ("玩家以水枪泡封敌人",)), ("game",)),),
    )
    assert corpus_entities(dataset) == ("《跑跑卡丁车》", "《泡泡堂》", "Nexon", "盛大游戏")
