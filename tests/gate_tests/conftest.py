from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.generation import build_generator, parse_generator_config
from tuner.judging import VERDICTS, KeypointVerdict, build_judge, parse_judge_config
from tuner.llm import RequestCount
from tuner.backends import BackendResources
from tuner.variants import VariantsConfig
from tuner.retrieval import RetrievalPipeline
from tuner.gate import RobustnessSetup


class FlakyJudge:
    """Implements the Judge protocol with seeded random verdicts: a judge that disagrees with itself."""

    name = "flaky"
    concurrency = 1

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.requests_made = RequestCount()

    def judge(
        self,
        question: str,
        answer: str,
        contexts: Sequence[str],
        keypoints: Sequence[tuple[str, ...]],
        wrong_answers: Sequence[str],
    ) -> list[KeypointVerdict]:
        return [KeypointVerdict(self.rng.choice(VERDICTS), self.rng.choice(VERDICTS)) for _ in keypoints]


@pytest.fixture
def pipeline(tiny_dataset_dir: Path, encoder: CachedEncoder) -> RetrievalPipeline:
    return RetrievalPipeline(load_dataset(tiny_dataset_dir), encoder=encoder)


@pytest.fixture
def setup(encoder: CachedEncoder) -> RobustnessSetup:
    resources = BackendResources(encoder=encoder)
    judge = build_judge(parse_judge_config(None, "test"), resources)
    return RobustnessSetup(
        generator=build_generator(parse_generator_config(None, "test"), resources),
        judge=judge,
        variant_config=VariantsConfig(),
        recheck=judge,
    )


@pytest.fixture
def write_yaml(tmp_path: Path):
    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, "utf-8")
        return path

    return write
