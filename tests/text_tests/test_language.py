from __future__ import annotations

import pytest

from tuner.text import ZH_THRESHOLD, cjk_share, detect_language


def test_share_counts_cjk_ideographs_against_ascii_letters_only() -> None:
    # 3 ideographs (售价元) against 7 letters (iPhone + the digits do not count: 15, 8999)
    assert cjk_share(["iPhone 15 售价 8999 元"]) == pytest.approx(3 / 9)
    assert cjk_share(["", "123 !?"]) == 0.0
    assert cjk_share(["北京", "ab"]) == 0.5


def test_detection() -> None:
    assert detect_language(["Customers may return any product within 30 days."]) == "en"
    assert detect_language(["本店支持七天无理由退货。", "Aurora X200笔记本电脑享受两年整机保修。"]) == "zh"
    # an English paragraph quoting one Chinese name stays English
    assert detect_language(["The office in 北京 opens at nine and closes at six every weekday."]) == "en"
    assert detect_language([]) == "en"


def test_threshold_is_the_documented_boundary() -> None:
    # 1 ideograph against 4 letters: exactly ZH_THRESHOLD (0.2)
    assert cjk_share(["好abcd"]) == ZH_THRESHOLD and detect_language(["好abcd"]) == "zh"
    assert detect_language(["好abcde"]) == "en"
