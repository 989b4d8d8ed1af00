from __future__ import annotations

from fractions import Fraction

import pytest

from tuner.text import NUMBER, chinese_numeral, format_number, parse_number


@pytest.mark.parametrize(
    ("numeral", "value"),
    [
        ("七十", 70), ("十二", 12), ("二十一", 21), ("一百零五", 105), ("一千零五十", 1050), ("一百二", 120),
        ("两万三", 23000), ("三千五", 3500), ("1361万", 13610000), ("1,361万", 13610000), ("3万5千", 35000),
        ("3万5", 35000), ("十万", 100000), ("一亿三千万", 130000000), ("三万亿", 3 * 10**12), ("一亿零五", 100000005),
        ("1.5亿", 150000000), ("3.5万", 35000), ("一点五", Fraction(3, 2)), ("零点五", Fraction(1, 2)),
        ("二〇一六", 2016), ("一九九八", 1998), ("两", 2), ("十", 10),
    ],
)  # fmt: skip
def test_parse_number(numeral: str, value: Fraction | int) -> None:
    assert parse_number(numeral) == value


@pytest.mark.parametrize("numeral", ["三四", "十五六", "两三", "十百", "万", "千万"])
def test_ambiguous_or_malformed_numerals_are_not_read(numeral: str) -> None:
    assert parse_number(numeral) is None


@pytest.mark.parametrize(
    ("value", "written"),
    [(0, "零"), (7, "七"), (10, "十"), (15, "十五"), (70, "七十"), (105, "一百零五"), (110, "一百一十"),
     (1005, "一千零五"), (10000, "一万"), (100015, "十万零一十五"), (13610000, "一千三百六十一万"),
     (100000005, "一亿零五")],
)  # fmt: skip
def test_chinese_numeral_writes_what_parse_number_reads(value: int, written: str) -> None:
    assert chinese_numeral(value) == written and parse_number(written) == value


def test_format_number_is_exact() -> None:
    assert [format_number(Fraction(v)) for v in ("150000000", "1.5", "0.125")] == ["150000000", "1.5", "0.125"]


def test_number_pattern_skips_words_that_count_nothing() -> None:
    found = [(m["word"], m["number"]) for m in NUMBER.finditer("十分钟和十分好，一些人在2016年买了1361万元")]
    assert found == [(None, "十"), ("十分", None), ("一些", None), (None, "2016"), (None, "1361万")]
