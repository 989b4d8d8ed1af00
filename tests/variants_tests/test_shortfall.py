from __future__ import annotations

from tuner.variants import shortfall_warning


def test_a_shortfall_above_ten_percent_of_slots_warns() -> None:
    # 1 of 10 slots unfilled is exactly 10%: no warning; 2 of 18 is 11.1%: a warning
    assert shortfall_warning("v1", 9, 1) is None
    assert shortfall_warning("v2", 16, 2) == (
        "v2: 2 of 18 injection slots unfilled (11%): too few chunks in its similarity band; its Δ understates the effect"
    )
    assert shortfall_warning("v3", 0, 3) == (
        "v3: 3 of 3 injection slots unfilled (100%): too few conflicting chunks for the relevant documents; "
        "its Δ understates the effect"
    )


def test_no_slots_no_warning() -> None:
    # v0 and v3 in_index ask for no injection slots
    assert shortfall_warning("v0", 0, 0) is None
    assert shortfall_warning("v3", 5, 0) is None
