"""The local generator on the real model (Gemma 3 270M on llama.cpp), loaded once per test session; skipped without
the ``tuner[local]`` extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.generation import LocalGenerator, LocalGeneratorConfig, build_generator
from tuner.generation._local import LlamaCpp, extra_buffers_here
from tuner.backends import BackendResources

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="session")
def local_generator(local_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> LocalGenerator:
    resources = BackendResources(cache_path=tmp_path_factory.mktemp("local") / "calls.sqlite")
    generator = build_generator(LocalGeneratorConfig(), resources)
    assert isinstance(generator, LocalGenerator)
    return generator


def test_answers_an_english_question_from_its_passage(local_generator: LocalGenerator) -> None:
    answer = local_generator.generate(
        "How long is the warranty of the X200 router?",
        ["The X200 router comes with a warranty of 24 months from the date of purchase."],
    )
    assert "24" in answer.text and "\n" not in answer.text


def test_answers_a_chinese_question_in_chinese(local_generator: LocalGenerator) -> None:
    answer = local_generator.generate("X200路由器的保修期是多久？", ["X200路由器的保修期是二十四个月，自购买之日起计算。"])
    assert "二十四个月" in answer.text or "24个月" in answer.text


def test_greedy_answers_repeat_and_the_second_comes_from_the_cache(local_generator: LocalGenerator) -> None:
    question, passages = "Who founded the company?", ["Acme Rockets was founded by Jane Doe in 1987 in Tucson."]
    first = local_generator.generate(question, passages)
    before = local_generator.usage.snapshot()
    assert local_generator.generate(question, passages) == first
    after = local_generator.usage.snapshot()
    assert (after.cache_hits - before.cache_hits, after.calls - before.calls) == (1, 0)
    fresh = LocalGenerator(local_generator.config.model_copy(update={"cache": False}), local_generator.runtime, None, local_generator.usage)
    assert fresh.generate(question, passages) == first


def test_the_model_loads_with_extra_buffers_only_where_they_are_safe(local_generator: LocalGenerator) -> None:
    runtime = local_generator.runtime
    assert isinstance(runtime, LlamaCpp)
    safe = extra_buffers_here()
    assert runtime.llama.model_params.use_extra_bufts is safe
    assert runtime.name.endswith("(plain CPU buffers)") is not safe
