"""Dates: in metadata (ISO 8601 and Chinese dates, the day numbers recency compares) and found in texts (find_dates)."""

from __future__ import annotations

import datetime as dt

import pytest

from tuner.text import day_number, find_dates, parse_date


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-03-01", dt.date(2024, 3, 1)),
    ("2024-03-01T09:30:00", dt.datetime(2024, 3, 1, 9, 30)),
    ("2024-03-01 09:30", dt.datetime(2024, 3, 1, 9, 30)),
    ("2024年3月1日", dt.date(2024, 3, 1)),
    ("二〇二四年三月一日", dt.date(2024, 3, 1)),
    ("二零二四年十二月三十一号", dt.date(2024, 12, 31)),
    ("２０２４年３月１日", dt.date(2024, 3, 1)),
    ("2024年2月30日", None),
    ("2024-13-01", None),
    ("March 1, 2024", None),
    ("", None),
])
def test_parse_date(text: str, expected: dt.date | None) -> None:
    assert parse_date(text) == expected


def test_day_number_counts_days_and_fractions_of_a_day() -> None:
    # 2024-03-01 is day 738946 of the proleptic Gregorian calendar (date.toordinal); noon is half a day later
    assert day_number(dt.date(2024, 3, 1)) == 738946.0
    assert day_number(dt.datetime(2024, 3, 1, 12)) == 738946.5
    assert day_number(dt.date(2024, 3, 2)) - day_number(dt.date(2024, 2, 28)) == 3  # 2024 is a leap year


def test_chinese_english_and_numeric_dates() -> None:
    text = "2016年9月4日发布；二〇一六年九月四日；2023年5月修订。Updated May 2023, on 2024-01-02 and 4 September 2016."
    assert [m.iso for m in find_dates(text)] == ["2016-09-04", "2016-09-04", "2023-05", "2023-05", "2024-01-02", "2016-09-04"]
    first = find_dates(text)[0]
    assert text[first.start:first.end] == "2016年9月4日"


def test_not_dates() -> None:
    assert find_dates("version 1.3, 2.5 percent, 2016年, 2023-13, 120 staff") == []
