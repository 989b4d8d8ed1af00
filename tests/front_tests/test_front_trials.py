"""``front_trials``: the study loop's one-read form of ``study.best_trials`` gives Optuna's own front, trial for trial."""

from __future__ import annotations

import random

import optuna
import pytest

from tuner.front import front_trials


def _study(seed: int, directions: list[str], constrained: bool) -> optuna.Study:
    """Trials of every state, values drawn from a few levels (so ties and exact duplicates occur) and, when
    ``constrained``, constraints that make some complete trials infeasible and leave others without any."""
    rng = random.Random(seed)
    study = optuna.create_study(directions=directions, sampler=optuna.samplers.RandomSampler(seed))
    for _ in range(rng.randint(0, 40)):
        trial = study.ask()
        trial.suggest_float("x", 0.0, 1.0)
        if constrained and rng.random() < 0.8:
            trial.set_constraint("scorable", rng.choice([-1.0, 0.0, 0.0, 1.0]))
        state = rng.choice([optuna.trial.TrialState.COMPLETE] * 6 + [optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.FAIL, None])
        if state is None:
            continue  # left running
        values = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, float("inf")]) for _ in directions]
        study.tell(trial, values if state == optuna.trial.TrialState.COMPLETE else None, state=state)
    return study


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize("directions", [["maximize", "minimize"], ["maximize", "minimize", "minimize"], ["minimize"]])
@pytest.mark.parametrize("constrained", [False, True])
def test_front_trials_is_optunas_best_trials(directions: list[str], constrained: bool) -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    for seed in range(20):
        study = _study(seed, directions, constrained)
        assert [t.number for t in front_trials(study)] == [t.number for t in study.best_trials], seed
