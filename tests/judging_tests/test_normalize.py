from __future__ import annotations

import pytest

from tuner.judging import normalize


@pytest.mark.parametrize(
    ("forms", "canonical"),
    [
        (["1,299", "1 299", "1299", "$1,299", "1,299.00"], "1299"),
        (["2024-03-01", "March 1, 2024", "1 March 2024", "Mar. 1st 2024", "1st of March, 2024", "2024/3/1"], "2024 03 01"),
        (["August 8 , 2014", "8 August 2014"], "2014 08 08"),
        (["March 2024", "Mar 2024"], "2024 03"),
        (["thirty", "30", "Thirty"], "30"),
        (["twenty-one", "twenty one", "21"], "21"),
        (["30%", "30 %", "30 percent", "30 per cent", "thirty percent"], "30 percent"),
        (["3.50", "3.5"], "3 5"),
        (["Freddy's", "Freddy 's", "Freddy’s", "FREDDYS"], "freddys"),
        (["Café", "cafe"], "cafe"),
    ],
)
def test_equivalent_forms_meet(forms: list[str], canonical: str) -> None:
    assert {normalize(form).text for form in forms} == {canonical}


def test_may_the_verb_is_not_a_date() -> None:
    assert normalize("it may 5 times").text == "it may 5 times"
    assert normalize("May 5, 2020").text == "2020 05 05"


def test_matches_are_whole_tokens_and_quote_the_source() -> None:
    text = normalize("Now: $1,299 (was 12,990 or 299).")
    span = text.find("1299")
    assert span is not None and text.quote(*span) == "1,299"
    assert text.find("299") is not None and text.quote(*text.find("299")) == "299"  # type: ignore[misc]
    assert text.find("99") is None and text.find("") is None
    dated = normalize("Released on August 8 , 2014 . Later")
    assert dated.quote(*dated.find(normalize("8 Aug 2014").text)) == "August 8 , 2014"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("forms", "canonical"),
    [
        (["1361万", "13,610,000", "一千三百六十一万", "13610000"], "13610000"),
        (["七十", "70", "seventy"], "70"),
        (["十二", "12"], "12"),
        (["二十一", "21"], "21"),
        (["一百零五", "105"], "105"),
        (["3万5千", "三万五千", "35000", "3.5万"], "35000"),
        (["1.5亿", "一亿五千万", "150,000,000"], "150000000"),
        (["一点五", "1.5"], "1 5"),
        (["２０２４", "2024"], "2024"),
        (["2016年9月4日", "二〇一六年九月四日", "2016年09月04号", "2016-09-04", "September 4, 2016"], "2016 09 04"),
        (["2016年9月", "September 2016"], "2016 09"),
        (["9月4日", "9月4号", "September 4"], "09 04"),
        (["2016年", "2016"], "2016"),
        (["百分之五", "5%", "５％", "5 percent"], "5 percent"),
        (["百分之十二点五", "12.5%"], "12 5 percent"),
        (["百分之百", "100%"], "100 percent"),
    ],
)
def test_chinese_forms_meet_their_arabic_and_iso_forms(forms: list[str], canonical: str) -> None:
    assert {normalize(form).text for form in forms} == {canonical}


def test_every_cjk_character_is_a_token() -> None:
    assert normalize("退货期为30天内。").text == "退 货 期 为 30 天 内"
    assert normalize("iPhone 15售价5999元").text == "iphone 15 售 价 5999 元"
    assert normalize("于2016-09-04发布").text == "于 2016 09 04 发 布"


def test_a_chinese_keypoint_is_found_inside_a_sentence_and_quoted_verbatim() -> None:
    text = normalize("退货期为三十天内，逾期不退。")
    span = text.find(normalize("30天").text)
    assert span is not None and text.quote(*span) == "三十天"
    dated = normalize("他于2016年9月4日抵达北京")
    assert dated.quote(*dated.find(normalize("2016-09-04").text)) == "2016年9月4日"  # type: ignore[misc]
    assert text.find(normalize("3天").text) is None  # "30 天" does not contain the token "3"


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("他十分满意", "他 十 分 满 意"),  # 十分 "very"
        ("十分钟后", "10 分 钟 后"),  # 十分钟 "ten minutes"
        ("一些人", "一 些 人"),
        ("一样好", "一 样 好"),
        ("万一下雨", "万 一 下 雨"),
        ("统一管理", "统 一 管 理"),
        ("千万别去", "千 万 别 去"),  # a run opening with 千 is not read
        ("零售价", "零 售 价"),
        ("三四天", "三 四 天"),  # "three or four days": ambiguous, left alone
        ("十五六岁", "十 五 六 岁"),
        ("有一点贵", "有 一 点 贵"),
    ],
)
def test_numeral_characters_that_count_nothing_are_left_alone(text: str, normalized: str) -> None:
    assert normalize(text).text == normalized


def test_english_quotes_keep_their_fine_spans_next_to_chinese_rules() -> None:
    text = normalize("型号X1售价12.99美元")
    assert text.text == "型 号 x1 售 价 12 99 美 元"
    assert text.quote(*text.find("12")) == "12"  # type: ignore[misc]
