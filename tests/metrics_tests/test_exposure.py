"""Conflict exposure and Δfaithful's parts, computed by hand in the comments."""

from __future__ import annotations

import pytest

from tuner.metrics import delta_faithful, delta_parts, exposed


def test_a_context_is_exposed_by_any_conflicting_chunk() -> None:
    assert exposed([False, False, True])
    assert not exposed([False, False])
    assert not exposed([])


def test_delta_splits_into_at_risk_times_susceptibility() -> None:
    # case   f0   f3   exposed
    #  a     1    0    yes       Σ f0 = 2.5; exposed Σ f0 = 1.5 → at risk 1.5 / 2.5 = 0.6
    #  b     0.5  0.5  yes       exposed loss (1 − 0) + (0.5 − 0.5) = 1 → susceptibility 1 / 1.5 = 2/3
    #  c     1    1    no        unexposed loss 0
    #  d     0    0    no        Δ = (2.5 − 1.5) / 2.5 = 0.4 = 0.6 · 2/3 + 0
    f0, f3, shown = [1.0, 0.5, 1.0, 0.0], [0.0, 0.5, 1.0, 0.0], [True, True, False, False]
    parts = delta_parts(f0, f3, shown)
    assert (parts.n, parts.exposed) == (4, 2)
    assert parts.at_risk == pytest.approx(0.6)
    assert parts.susceptibility == pytest.approx(2 / 3)
    assert parts.unexposed_loss == 0.0
    assert parts.at_risk * parts.susceptibility + parts.unexposed_loss == pytest.approx(delta_faithful(f0, f3))
    assert parts.delta == pytest.approx(0.4)


def test_an_unexposed_loss_is_kept_apart() -> None:
    # f0 (1, 1), f3 (0.5, 0.5), only the first exposed: at risk 1/2, susceptibility 0.5/1, unexposed loss 0.5/2
    parts = delta_parts([1.0, 1.0], [0.5, 0.5], [True, False])
    assert (parts.at_risk, parts.susceptibility, parts.unexposed_loss) == (0.5, 0.5, 0.25)
    assert 0.5 * 0.5 + 0.25 == pytest.approx(delta_faithful([1.0, 1.0], [0.5, 0.5]))


def test_susceptibility_is_undefined_without_an_exposed_case() -> None:
    parts = delta_parts([1.0, 0.5], [1.0, 0.5], [False, False])
    assert (parts.exposed, parts.at_risk, parts.susceptibility, parts.unexposed_loss) == (0, 0.0, None, 0.0)
    # exposed, but nothing faithful at v0 on them: nothing to lose, so no susceptibility either
    assert delta_parts([0.0, 1.0], [0.0, 1.0], [True, False]).susceptibility is None
    # nothing faithful at all: Δ is undefined, and so is every share of it
    nothing = delta_parts([0.0], [0.0], [True])
    assert (nothing.at_risk, nothing.susceptibility, nothing.unexposed_loss) == (None, None, None)


def test_lists_of_different_length_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        delta_parts([1.0], [1.0, 0.0], [True])
