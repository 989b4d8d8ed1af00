"""The local generator on the real models (Gemma 3 270M, a base model, and Qwen2.5-Coder 0.5B Instruct, a chat model,
on llama.cpp), each loaded once per test session; skipped without the ``tuner[local]`` extra."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tuner.cache import DiskCache
from tuner.generation import LOCAL_PROMPT, LocalGenerator, LocalGeneratorConfig, build_generator, cut_answer, llama_cpp_runtime
from tuner.errors import UserError
from tuner.generation._llama import LlamaCpp, _loaded, extra_buffers_here
from tuner.backends import BackendResources
from tuner.llm import Usage

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="session")
def local_generator(local_model_path: Path, tuner_cache: Path) -> LocalGenerator:
    resources = BackendResources(cache_path=tuner_cache / "local-calls.sqlite")  # the run's cache: the model file's too
    generator = build_generator(LocalGeneratorConfig(model="gemma-3-270m"), resources)
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
    safe = extra_buffers_here()  # False on a build with AMX kernels, where the model above still answered
    assert runtime.extra_buffers is safe
    assert runtime.name.endswith("(plain CPU buffers)") is not safe


def test_the_model_file_is_in_the_runs_cache_and_the_seed_does_not_reload_it(local_generator: LocalGenerator, tuner_cache: Path) -> None:
    runtime = local_generator.runtime
    assert isinstance(runtime, LlamaCpp) and runtime.path.is_relative_to(tuner_cache / "models")
    reseeded = local_generator.config.model_copy(update={"seed": 7})
    assert llama_cpp_runtime(reseeded, DiskCache(tuner_cache)) is runtime


@pytest.mark.slow
def test_generators_sharing_the_model_answer_from_several_threads_as_one_at_a_time(local_generator: LocalGenerator) -> None:
    questions = [f"What is {n} plus {n}?" for n in range(1, 5)]
    passages = [f"{n} plus {n} is {2 * n}." for n in range(1, 5)]
    config = local_generator.config.model_copy(update={"cache": False})
    serial = [local_generator.runtime.complete(LOCAL_PROMPT.render("en", q, [p]), 16, LOCAL_PROMPT.stops) for q, p in zip(questions, passages)]
    twins = [LocalGenerator(config, local_generator.runtime, None, Usage()) for _ in range(2)]
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda i: twins[i % 2].generate(questions[i], [passages[i]]), range(4)))
    assert [a.text for a in answers] == [cut_answer(r.text, LOCAL_PROMPT.stops) for r in serial]


@pytest.fixture(scope="session")
def chat_generator(chat_model_path: Path, tuner_cache: Path) -> LocalGenerator:
    resources = BackendResources(cache_path=tuner_cache / "local-calls.sqlite")
    generator = build_generator(LocalGeneratorConfig(model="qwen2.5-coder-0.5b-instruct", max_tokens=16), resources)
    assert isinstance(generator, LocalGenerator)
    return generator


@pytest.mark.slow
def test_an_instruct_model_is_asked_through_the_chat_template_in_its_gguf(chat_generator: LocalGenerator) -> None:
    runtime = chat_generator.runtime
    assert isinstance(runtime, LlamaCpp) and chat_generator.chat
    assert runtime.chat_template is not None and "<|im_start|>" in runtime.chat_template
    assert runtime.tokenize("<|im_start|>", False, True) == [runtime.tokenize("<|im_start|>", False, True)[0]]  # one special token
    reply = runtime.chat([{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Say: yes"}], 4)
    assert reply.prompt_tokens < 30 and "<|im_end|>" not in reply.text  # the turn markers read as tokens, the turn's end not written
    answer = chat_generator.generate("How long is the X200 warranty?", ["The X200 warranty is 24 months."])
    assert "24" in answer.text


def test_a_chat_prompt_cut_for_the_context_keeps_the_turns_and_the_instruction(chat_generator: LocalGenerator) -> None:
    runtime = chat_generator.runtime
    assert isinstance(runtime, LlamaCpp)
    request = chat_generator.request("How long is the X200 warranty?", ["The X200 warranty is 24 months."])
    tokens, head, stops = runtime.chat_tokens(request["messages"], str(request["kept"]))  # type: ignore[arg-type]
    kept = runtime.detokenize(tokens[:head])
    assert kept.startswith("<|im_start|>system\n") and kept.endswith("Context:\n") and "[1]" not in kept and stops == ["<|im_end|>"]
    assert head < len(tokens) - 10


def test_a_prompt_whose_fixed_part_leaves_no_room_for_the_answer_is_one_line_not_a_decode_failure(chat_model_path: Path) -> None:
    """The runtime on its own (no config to validate it): a context of 256 tokens, an answer of up to 240, a system turn
    longer than the 16 left failed in llama_decode (status 1, exit 3) before."""
    runtime = _loaded(chat_model_path.resolve(), 1, 256, "test")
    messages = [{"role": "system", "content": "Answer from the passages only. " * 8}, {"role": "user", "content": "Say: yes"}]
    with pytest.raises(UserError, match=r"^generator: context_tokens 256 leaves 16 tokens for the prompt after max_tokens 240, "
                                        r"fewer than the \d+ of its fixed part"):
        runtime.chat(messages, 240)  # type: ignore[arg-type]
    assert runtime.chat(messages, 8).completion_tokens <= 8  # the same runtime answers within its room


@pytest.mark.slow
def test_the_chat_model_answers_a_chinese_question_in_chinese(chat_generator: LocalGenerator) -> None:
    answer = chat_generator.generate("X200的保修期是多久？", ["X200的保修期是二十四个月。"])
    assert "二十四个月" in answer.text or "24个月" in answer.text


def test_the_base_model_is_asked_with_the_completion_prompt(local_generator: LocalGenerator) -> None:
    assert not local_generator.chat and local_generator.runtime.chat_template is None
