"""A search that only varies what can act (issue 29 §4): define-by-run sampling, top_k within candidate_depth, the
up-front check agreeing with the sampler, and enqueued values that could not act refused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.settings import RetrievalSettings, acts
from tuner.front import TrialRecord
from tuner.study import load_study_file, run_study
from tuner.study._samplers import SamplerConfig
from tuner.study._samplers import build_sampler
from tuner.study._space import IntParam, SearchSpace, load_search_space

# the demo study that passed the old check and then ended after 137 s on "top_k (14) exceeds candidate_depth (10)"
DEMO_SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 25},
    "candidate_depth": {"type": "categorical", "choices": [10, 30]},
}
WIDE_SPACE = {
    **DEMO_SPACE,
    "retriever": {"type": "categorical", "choices": ["bm25", "dense", "hybrid"]},
    "fusion": {"type": "categorical", "choices": ["blend", "rrf"]},
    "hybrid_weight": {"type": "float", "low": 0.0, "high": 1.0, "step": 0.25},
    "rrf_k": {"type": "categorical", "choices": [10, 60]},
    "rerank_strength": {"type": "float", "low": 0.0, "high": 1.0, "step": 0.5},
    "reranker": {"type": "categorical", "choices": ["embedding-maxsim", "cross-encoder:/models/x"]},
    "dense_index": {"type": "categorical", "choices": ["flat", "hnsw"]},
}


def _space(tmp_path: Path, params: dict[str, Any], conditional: bool = True) -> SearchSpace:
    path = tmp_path / "wide.yaml"
    path.write_text(yaml.safe_dump(params))
    return load_search_space(path, conditional)


@pytest.mark.parametrize("sampler", ["random", "tpe"])
def test_a_trial_samples_only_the_knobs_its_choices_let_act_and_top_k_within_depth(tmp_path: Path, sampler: str) -> None:
    space = _space(tmp_path, WIDE_SPACE)
    base = RetrievalSettings().model_dump()
    study = optuna.create_study(directions=["maximize", "minimize"], sampler=build_sampler(SamplerConfig(name=sampler, seed=0), space))  # type: ignore[arg-type]
    seen: set[tuple[str, bool]] = set()
    for _ in range(60):
        trial = study.ask()
        params = space.suggest(trial, base)
        assert trial.params == params
        settings = RetrievalSettings(**{**base, **params})  # validates: top_k ≤ candidate_depth on every trial
        for name in WIDE_SPACE:
            assert (name in params) == acts(name, settings.model_dump()), (name, params)
            seen.add((name, name in params))
        study.tell(trial, [settings.top_k / settings.candidate_depth, settings.rerank_strength])
    # every conditional knob was both sampled and left out, and top_k reached past the shallow depth
    assert {(name, sampled) for name in ("fusion", "hybrid_weight", "rrf_k", "reranker", "dense_index")
            for sampled in (True, False)} <= seen
    assert any(t.params["top_k"] > 10 for t in study.trials) and all(
        t.params["top_k"] <= t.params["candidate_depth"] for t in study.trials)


def test_without_conditional_sampling_every_knob_is_sampled(tmp_path: Path) -> None:
    space = _space(tmp_path, {k: v for k, v in WIDE_SPACE.items() if k not in DEMO_SPACE}, conditional=False)
    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0)).ask()
    assert set(space.suggest(trial, RetrievalSettings().model_dump())) == set(WIDE_SPACE) - set(DEMO_SPACE)


def test_conditional_tpe_is_multivariate_on_the_group_decomposed_space(tmp_path: Path) -> None:
    conditional = build_sampler(SamplerConfig(), _space(tmp_path, WIDE_SPACE))
    flat = build_sampler(SamplerConfig(), _space(tmp_path, WIDE_SPACE, conditional=False))
    assert isinstance(conditional, optuna.samplers.TPESampler) and isinstance(flat, optuna.samplers.TPESampler)
    assert (conditional._multivariate, conditional._group) == (True, True)
    assert not flat._multivariate and not flat._group
    overridden = build_sampler(SamplerConfig(options={"multivariate": False}), _space(tmp_path, WIDE_SPACE))
    assert not getattr(overridden, "_multivariate")


def test_a_clipped_top_k_keeps_its_step() -> None:
    space = SearchSpace({"top_k": IntParam(type="int", low=2, high=25, step=4)}, "space.yaml")
    clipped = space.effective("top_k", {"candidate_depth": 13})
    assert isinstance(clipped, IntParam) and (clipped.low, clipped.high, clipped.step) == (2, 10, 4)


def test_the_demo_space_that_ended_on_top_k_now_passes_the_check_and_runs(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, settings={"retriever": "bm25", "chunk_size": 40},
                             enqueue=[{"top_k": 10, "candidate_depth": 10}, {"top_k": 20, "candidate_depth": 30}],
                             budget={"trials": 2}, sampler={"name": "random", "seed": 4}, pruning={"enabled": False})
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(DEMO_SPACE))
    assert main(["-q", "run", str(study_file), "--dry-run"]) == 0
    result = run_study(load_study_file(study_file))
    assert result.fault is None and result.study.trials
    assert not [t for t in result.study.trials if t.state == optuna.trial.TrialState.FAIL]
    settings = [TrialRecord.from_trial(t).settings or {} for t in result.study.trials]
    assert all(s["top_k"] <= s["candidate_depth"] for s in settings)
    assert any(s["candidate_depth"] == 10 for s in settings) and any(s["top_k"] > 10 for s in settings)


@pytest.mark.parametrize(
    ("space", "overrides", "message"),
    [
        # a categorical top_k cannot be clipped per trial (Optuna keeps a categorical's choices fixed)
        ({"top_k": {"type": "categorical", "choices": [2, 5]}, "candidate_depth": {"type": "categorical", "choices": [3, 30]}},
         {"settings": {}}, r"space.yaml: top_k: 5 is not allowed with candidate_depth=3: top_k \(5\) exceeds candidate_depth \(3\)"),
        # a top_k the study fixes is not clipped either
        ({"candidate_depth": {"type": "categorical", "choices": [3, 30]}}, {"settings": {"top_k": 20}}, r"space.yaml: not allowed with candidate_depth=3: top_k \(20\) exceeds candidate_depth \(3\)"),
        ({"top_k": {"type": "int", "low": 5, "high": 8}, "candidate_depth": {"type": "categorical", "choices": [3, 30]}},
         {"settings": {}}, r"space.yaml: top_k: 5 is not allowed with candidate_depth=3"),
        ({"retriever": {"type": "categorical", "choices": ["bm25", "hybrid"]}, "hybrid_weight": {"type": "float", "low": 0, "high": 1}},
         {"enqueue": [{"retriever": "bm25", "hybrid_weight": 0.3}]},
         r"study.yaml: enqueue\[0\].hybrid_weight: acts only when retriever is hybrid and fusion is blend, which this "
         r"configuration is not: leave it out"),
        ({"top_k": {"type": "int", "low": 1, "high": 8}, "candidate_depth": {"type": "categorical", "choices": [4, 8]}},
         {"settings": {}, "enqueue": [{"top_k": 6, "candidate_depth": 4}]},
         r"study.yaml: enqueue\[0\]: top_k \(6\) exceeds candidate_depth \(4\)"),
        ({"reranker": {"type": "categorical", "choices": ["embedding-maxsim", "colbert"]}}, {"settings": {"rerank_strength": 0.5}},
         r"space.yaml: reranker: 'colbert' is not allowed: reranker: unknown reranker 'colbert'"),
    ],
)
def test_the_check_agrees_with_the_sampler(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    space: dict[str, Any], overrides: dict[str, Any], message: str,
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, **{"enqueue": [], **overrides})
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    assert main(["run", str(study_file), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and len(err.strip().splitlines()) == 1, err


def test_a_reranker_is_validated_with_the_other_settings() -> None:
    from tuner.errors import UserError
    from tuner.settings import settings_from_mapping

    with pytest.raises(UserError, match=r"^deploy.yaml: reranker: unknown reranker 'colbert' \(known: cross-encoder, embedding-maxsim\)$"):
        settings_from_mapping({"reranker": "colbert"}, "deploy.yaml")
    with pytest.raises(UserError, match=r"needs a model: cross-encoder:NAME_OR_PATH"):
        settings_from_mapping({"reranker": "cross-encoder"}, "deploy.yaml")
    assert settings_from_mapping({"reranker": "cross-encoder:/models/x"}, "deploy.yaml").reranker == "cross-encoder:/models/x"
