"""`tuner run --dry-run` estimates tokens on the configurations the run would try first (issue 14 §3), not on the
space's largest: the enqueued ones, then the sampler's seeded start-up draws; a context never exceeds the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.settings import RetrievalSettings
from tuner.study import load_search_space, load_study_file
from tuner.study._dry_run import context_words, planned_settings
from tuner.text import word_count


def test_planned_configurations_are_the_enqueued_then_the_seeded_draws(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    loaded = load_study_file(write_study(tmp_path, tiny_dataset_dir, budget={"trials": 4}))
    space = load_search_space(loaded.search_space_path)
    planned, how = planned_settings(loaded, space, 4)
    assert how == "1 enqueued + 3 drawn at random with seed 1, as the tpe sampler's start-up phase draws them"
    assert (planned[0].top_k, planned[0].retriever, planned[0].chunk_size) == (1, "bm25", 40)
    assert planned == planned_settings(loaded, space, 4)[0]  # the sampler's seed: the same draws every time
    assert all(1 <= s.top_k <= 4 and s.chunk_size in (20, 40) for s in planned)


def test_a_context_is_at_most_the_whole_corpus(tiny_dataset_dir: Path) -> None:
    dataset = load_dataset(str(tiny_dataset_dir))
    # one chunk per document (no document reaches 1000 words) and top_k above the 8 documents: the whole corpus
    whole = RetrievalSettings(top_k=10, candidate_depth=10, chunk_size=1000, chunk_unit="words")
    assert context_words(whole, dataset, {}) == sum(word_count(doc.text) for doc in dataset.corpus)
    # top_k 2 of those 8 chunks: two mean-length documents
    two = whole.model_copy(update={"top_k": 2})
    assert context_words(two, dataset, {}) == pytest.approx(2 * sum(word_count(d.text) for d in dataset.corpus) / 8)


def test_dry_run_says_what_its_token_estimate_is_based_on(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, budget={"trials": 4})
    assert main(["run", str(study_file), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "tokens estimated on the configurations this run would try first (1 enqueued + 3 drawn at random with seed 1" in err
    assert "per trial median ~" in err and "largest ~" in err
