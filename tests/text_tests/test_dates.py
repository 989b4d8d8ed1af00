"""find_dates: Chinese and English calendar dates read as ISO 8601."""

from __future__ import annotations

from tuner.text import find_dates


def test_chinese_english_and_numeric_dates() -> None:
    text = "2016年9月4日发布；二〇一六年九月四日；2023年5月修订。Updated May 2023, on 2024-01-02 and 4 September 2016."
    assert [m.iso for m in find_dates(text)] == ["2016-09-04", "2016-09-04", "2023-05", "2023-05", "2024-01-02", "2016-09-04"]
    first = find_dates(text)[0]
    assert text[first.start:first.end] == "2016年9月4日"


def test_not_dates() -> None:
    assert find_dates("version 1.3, 2.5 percent, 2016年, 2023-13, 120 staff") == []
