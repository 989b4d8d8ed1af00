"""A synthetic tuner study written through optuna's public API, following the trial data contract."""

from __future__ import annotations

import math
import random
from pathlib import Path

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import TrialState, create_trial

DISTRIBUTIONS = {
    "top_k": IntDistribution(2, 10),
    "relevance_threshold": FloatDistribution(0.3, 0.8),
    "rerank_strength": FloatDistribution(0.0, 1.0),
    "chunk_size": IntDistribution(128, 512, step=64),
    "chunk_overlap": FloatDistribution(0.0, 0.3),
    "retriever": CategoricalDistribution(["bm25", "dense", "hybrid"]),
}
CATEGORIES = ("pricing", "policy", "product")
NOISE_FLOOR = {"recall_at_k": 0.03, "v3_delta_faithful": 0.04}


def _measure(params: dict[str, object], rng: random.Random) -> tuple[float, float, float]:
    """recall rises and saturates with top_k and falls with the threshold; Δfaithful rises with both top_k and recall."""
    k = int(params["top_k"])  # type: ignore[arg-type]
    threshold = float(params["relevance_threshold"])  # type: ignore[arg-type]
    rerank = float(params["rerank_strength"])  # type: ignore[arg-type]
    recall = min(0.98, (1 - math.exp(-k / 3.5)) * (1.25 - 0.5 * threshold) + rng.uniform(-0.03, 0.03))
    delta = max(0.0, 0.02 * k - 0.12 * threshold - 0.05 * rerank + 0.12 + rng.uniform(-0.02, 0.02))
    words = k * int(params["chunk_size"]) * (1 - threshold * 0.4)  # type: ignore[arg-type]
    return round(recall, 4), round(delta, 4), round(words, 1)


def build_study(storage: str, complete: int = 24, pruned: int = 4, failed: int = 1, seed: int = 7) -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = random.Random(seed)
    study = optuna.create_study(study_name="synthetic", storage=storage, directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    study.set_user_attr("noise_floor", NOISE_FLOOR)
    for index in range(complete + pruned + failed):
        params = {
            "top_k": rng.randint(2, 10),
            "relevance_threshold": round(rng.uniform(0.3, 0.8), 3),
            "rerank_strength": round(rng.uniform(0.0, 1.0), 3),
            "chunk_size": rng.choice([128, 192, 256, 320, 384, 448, 512]),
            "chunk_overlap": round(rng.uniform(0.0, 0.3), 3),
            "retriever": rng.choice(["bm25", "dense", "hybrid"]),
        }
        recall, delta, words = _measure(params, rng)
        calls = {"generator": 60, "judge": 240, "tokens": 91_000}
        if index < complete:
            by_category = {
                c: {"recall_at_k": round(recall + rng.uniform(-0.05, 0.05), 4),
                    "v3_delta_faithful": None if c == "product" and index % 5 == 0 else round(delta + rng.uniform(-0.03, 0.03), 4),
                    "n": 10}
                for c in CATEGORIES
            }
            attrs = {
                "ci": {"recall_at_k": [recall - 0.03, min(1.0, recall + 0.025)], "v3_delta_faithful": [max(0.0, delta - 0.04), delta + 0.05]},
                "context_words": words, "n": 30, "n_total": 30, "by_category": by_category, "calls": calls,
            }
            trial = create_trial(values=[recall, delta], params=params, distributions=DISTRIBUTIONS, user_attrs=attrs)
        elif index < complete + pruned:
            attrs = {
                "pruning": {"look": 1, "cases_used": 10, "dominated_by": 0, "p_value": 0.001,
                            "differences": {"recall_at_k": 0.2, "v3_delta_faithful": 0.1}},
                "calls": {"generator": 20, "judge": 80, "tokens": 30_000},
            }
            if index % 2 == 0:
                attrs["partial_values"] = {"recall_at_k": recall - 0.2, "v3_delta_faithful": delta + 0.1}
            trial = create_trial(state=TrialState.PRUNED, params=params, distributions=DISTRIBUTIONS, user_attrs=attrs)
        else:
            trial = create_trial(state=TrialState.FAIL, params=params, distributions=DISTRIBUTIONS)
        study.add_trial(trial)
    return study


def sqlite_storage(folder: Path) -> str:
    return f"sqlite:///{folder / 'study.db'}"
