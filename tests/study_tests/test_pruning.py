from __future__ import annotations

from tuner.study import PruneEvidence, TrialProfile, should_prune

MARGIN = {"recall_at_k": 0.125, "v3_delta_faithful": 0.05}  # binary fractions: exact comparisons
N = 40
CLEAN = [1.0] * N


def _misled(cases: list[int], n: int = N) -> list[float]:
    """Faithfulness at v3 over n cases: 0 on ``cases``, 1 elsewhere."""
    return [0.0 if i in cases else 1.0 for i in range(n)]


def _check(current: TrialProfile, front: list[TrialProfile], look: int = 1, looks: int = 5) -> PruneEvidence | None:
    return should_prune(current, front, MARGIN, look, looks, 0.05, "bonferroni", use_context_words=False)


def test_clearly_dominated_trial_is_pruned_with_its_evidence() -> None:
    robust = TrialProfile(0, 0.9, 100.0, CLEAN, CLEAN)  # complete: Δ = 0 on all 40 cases
    misled = TrialProfile(7, 0.7, 100.0, CLEAN[:20], _misled(list(range(0, 20, 2)), 20))  # half of 20 cases lost
    evidence = _check(misled, [robust])
    assert evidence is not None
    assert (evidence.dominated_by, evidence.cases_used, evidence.n_total) == (0, 20, 40)
    assert evidence.differences == {"recall_at_k": 0.2, "v3_delta_faithful": 0.5}
    assert evidence.alpha == 0.01  # 0.05 over 5 looks
    assert evidence.p_value < 0.01
    assert PruneEvidence.from_dict(evidence.to_dict()) == evidence


def test_a_tie_within_the_margin_is_not_pruned() -> None:
    front = TrialProfile(0, 0.9, 100.0, CLEAN, _misled([0, 1]))  # Δ = 2/40 = 0.05
    # evaluated on every case: Δ = 4/40 = 0.10, worse by exactly the margin, not more; the answer is exact
    assert _check(TrialProfile(3, 0.7, 100.0, CLEAN, _misled([0, 1, 2, 3])), [front]) is None
    # worse by more than the margin on every case: pruned even at the last look
    assert _check(TrialProfile(4, 0.7, 100.0, CLEAN, _misled([0, 1, 2, 3, 4])), [front], look=5) is not None


def test_better_recall_or_recall_within_its_margin_protects_a_less_robust_trial() -> None:
    front = TrialProfile(0, 0.875, 100.0, CLEAN, CLEAN)
    lost = _misled(list(range(10)), 20)
    assert _check(TrialProfile(4, 0.9, 100.0, CLEAN[:20], lost), [front]) is None  # better recall
    assert _check(TrialProfile(5, 0.75, 100.0, CLEAN[:20], lost), [front]) is None  # 0.125 lower: the margin
    assert _check(TrialProfile(6, 0.625, 100.0, CLEAN[:20], lost), [front]) is not None


def test_the_rival_is_the_most_robust_front_trial_with_better_recall() -> None:
    high_recall = TrialProfile(0, 0.95, 100.0, CLEAN, _misled([0, 1, 2]))
    robust_but_low = TrialProfile(1, 0.6, 100.0, CLEAN, CLEAN)  # lower Δ, but worse recall than the trial
    robust = TrialProfile(2, 0.9, 100.0, CLEAN, CLEAN)
    trial = TrialProfile(9, 0.7, 100.0, CLEAN[:20], _misled(list(range(0, 20, 2)), 20))
    evidence = _check(trial, [high_recall, robust_but_low, robust])
    assert evidence is not None and evidence.dominated_by == 2


def test_too_few_cases_or_missing_scores_never_prune() -> None:
    front = TrialProfile(0, 1.0, 100.0, CLEAN, CLEAN)
    assert _check(TrialProfile(1, 0.2, 100.0, [1.0, None], [0.0, None]), [front]) is None
    assert _check(TrialProfile(1, 0.2, 100.0, [1.0, 1.0], [0.0, 0.0]), [front]) is None  # no spread: no evidence
    assert _check(TrialProfile(1, 0.2, 100.0, CLEAN[:10], _misled([0], 10)), []) is None  # no front yet


def test_repeated_looks_spend_less_alpha_per_look() -> None:
    front = TrialProfile(0, 1.0, 100.0, CLEAN, CLEAN)
    noisy = TrialProfile(1, 0.5, 100.0, CLEAN[:12], _misled([1, 4, 7, 10], 12))  # 4 of 12 lost
    single_look = should_prune(noisy, [front], MARGIN, 1, 1, 0.05, "bonferroni", False)
    many_looks = should_prune(noisy, [front], MARGIN, 1, 20, 0.05, "bonferroni", False)
    assert single_look is not None and single_look.p_value > 0.05 / 20
    assert many_looks is None


def test_context_words_must_also_be_worse_when_it_is_an_objective() -> None:
    front = TrialProfile(0, 0.9, 300.0, CLEAN, CLEAN)
    cheaper = TrialProfile(1, 0.7, 100.0, CLEAN[:20], _misled(list(range(10)), 20))
    assert should_prune(cheaper, [front], MARGIN, 1, 5, 0.05, "bonferroni", True) is None
    assert should_prune(cheaper, [front], MARGIN, 1, 5, 0.05, "bonferroni", False) is not None


def test_a_completed_trial_is_profiled_from_its_values_and_per_case_scores() -> None:
    from optuna.distributions import IntDistribution
    from optuna.trial import TrialState, create_trial

    from tuner.study import trial_profile

    attrs = {"context_words": 120.0, "f0": [1.0, 0.5], "f3": [0.0, None]}
    complete = create_trial(values=[0.75, 0.4], params={"top_k": 2}, distributions={"top_k": IntDistribution(1, 4)}, user_attrs=attrs)
    complete.number = 3
    assert trial_profile(complete) == TrialProfile(3, 0.75, 120.0, (1.0, 0.5), (0.0, None))
    pruned = create_trial(state=TrialState.PRUNED, user_attrs=attrs)
    assert trial_profile(pruned) is None  # no values: never a rival


def test_progress_names_the_rival_and_the_evidence_of_a_pruned_trial() -> None:
    from optuna.trial import TrialState, create_trial

    from tuner.study._run import _outcome

    evidence = {"cases_used": 60, "n_total": 180, "dominated_by": 3, "p_value": 0.00213}
    assert _outcome(create_trial(state=TrialState.PRUNED, user_attrs={"pruning": evidence})) == (
        "pruned after 60/180 cases (beaten by #3, p=0.0021)"
    )
    assert _outcome(create_trial(values=[0.5, 0.1])) == "complete"
