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


def test_pareto_params_stay_whole_in_120_columns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38 §2: at 120 columns the params (what gets deployed) were cut to ``relevance_t…``; now one differing
    setting per line, and the settings every entry shares said once under the table."""
    import re
    import sys

    import tuner.commands.pareto as pareto
    import tuner.study
    from optuna.distributions import CategoricalDistribution, FloatDistribution

    study = optuna.create_study(directions=["maximize", "minimize"], study_name="params")
    StudyRecord(objectives=["recall_at_k", "v3_delta_faithful"], noise_floor={"recall_at_k": 0.02}).write(study)
    distributions = {"top_k": IntDistribution(1, 10), "relevance_threshold": FloatDistribution(0.0, 0.9),
                     "chunk_size": IntDistribution(100, 600), "retriever": CategoricalDistribution(["bm25", "dense"])}
    for values, top_k, threshold in (([0.5, 0.1], 4, 0.35), ([0.7, 0.2], 8, 0.15000000000000002)):
        study.add_trial(optuna.trial.create_trial(
            params={"top_k": top_k, "relevance_threshold": threshold, "chunk_size": 300, "retriever": "bm25"},
            distributions=distributions, values=values, user_attrs=TrialRecord(context_words=120.0, n=10, n_total=10).to_attrs()))
    monkeypatch.setattr(pareto, "loaded_study", lambda _args: None)
    monkeypatch.setattr(tuner.study, "load_study", lambda _loaded: study)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["pareto", "study.yaml"]) == 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)  # a terminal gets styles
    assert max(len(line) for line in out.splitlines() if line[:1] in "┏┃┡│└") <= 120
    assert "relevance_threshold=0.35" in out and "relevance_threshold=0.15" in out and "top_k=8" in out
    assert "every front entry has chunk_size=300, retriever=bm25" in out
