"""``tuner pareto`` counts pruned trials as ``tuner run`` and the report do (issue 30 §5): a repeated configuration
that was not evaluated again is not a pruned trial."""

from __future__ import annotations

import optuna
import pytest
from optuna.distributions import IntDistribution

from tuner.cli import main
from tuner.front import StudyRecord, TrialRecord


def test_pareto_says_pruned_and_repeated_apart(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import tuner.commands.pareto as pareto
    import tuner.study

    study = optuna.create_study(directions=["maximize", "minimize"], study_name="counts")
    StudyRecord(objectives=["recall_at_k", "v3_delta_faithful"], noise_floor={"recall_at_k": 0.02}).write(study)
    distributions = {"top_k": IntDistribution(1, 5)}
    study.add_trial(optuna.trial.create_trial(params={"top_k": 1}, distributions=distributions, values=[0.5, 0.1],
                                              user_attrs=TrialRecord(context_words=120.0, n=10, n_total=10).to_attrs()))
    study.add_trial(optuna.trial.create_trial(params={"top_k": 2}, distributions=distributions, state=optuna.trial.TrialState.PRUNED))
    for _ in range(3):
        study.add_trial(optuna.trial.create_trial(params={"top_k": 1}, distributions=distributions, state=optuna.trial.TrialState.PRUNED,
                                                  user_attrs=TrialRecord(duplicate_of=0).to_attrs()))
    monkeypatch.setattr(pareto, "loaded_study", lambda _args: None)
    monkeypatch.setattr(tuner.study, "load_study", lambda _loaded: study)
    assert main(["pareto", "study.yaml"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(1 complete, 1 pruned, 3 repeated configurations not evaluated again)" in out
