"""Dates in metadata (issue 22 §2): ISO 8601 and Chinese dates, and the day numbers recency compares."""

from __future__ import annotations

import datetime as dt

import pytest

from tuner.text import day_number, parse_date


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
