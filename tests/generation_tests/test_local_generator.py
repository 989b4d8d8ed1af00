"""The local generator's prompt, answer cut and cache, with a scripted runtime in place of the model (the real model is
tested in test_local_model.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tuner.errors import UserError
from tuner.generation import LOCAL_PROMPT, GENERATORS, Answer, LocalGenerator, LocalGeneratorConfig, LocalPrompt, Shot, cut_answer, require_local
from tuner.generation import _local
from tuner.generation._local import Generated
from tuner.llm import CallCache, Usage


class ScriptedRuntime:
    """Replies with ``reply`` to every prompt and records the prompts it was given."""

    def __init__(self, reply: str, name: str = "scripted 1") -> None:
        self.reply = reply
        self.name = name
        self.prompts: list[str] = []
        self.stops: list[tuple[str, ...]] = []

    def complete(self, prompt: str, max_tokens: int, stops: Sequence[str]) -> Generated:
        self.prompts.append(prompt)
        self.stops.append(tuple(stops))
        return Generated(self.reply, prompt_tokens=len(prompt.split()), completion_tokens=3)


def generator(runtime: ScriptedRuntime, store: CallCache | None = None, prompt: LocalPrompt = LOCAL_PROMPT, **config: object) -> LocalGenerator:
    return LocalGenerator(LocalGeneratorConfig.model_validate(config), runtime, store, Usage(), prompt)


def test_prompt_is_an_instruction_a_worked_example_passages_question_and_cue_in_the_question_language() -> None:
    runtime = ScriptedRuntime("24 months")
    generator(runtime).generate("How long is the warranty?", ["The warranty is 24 months.", "Old: 12 months."])
    generator(runtime).generate("保修期是多久？", ["保修期为二十四个月。"])
    assert runtime.prompts == [
        "Copy the sentence of the passages that answers the question.\n\n"
        "Halvard Lighting is a lamp maker based in Gothenburg. It also makes ceiling fans and garden lights.\n\n"
        "The Lumen K2 desk lamp was released by Halvard Lighting in March 2019. It uses a 9-watt LED and has three brightness levels.\n\n"
        "Question: When was the Lumen K2 desk lamp released?\nAnswer: The Lumen K2 desk lamp was released by Halvard Lighting in March 2019.\n\n"
        "The warranty is 24 months.\n\nOld: 12 months.\n\nQuestion: How long is the warranty?\nAnswer:",
        "请从段落中抄出回答问题的那一句话。\n\n青柳电器公司成立于2008年，总部位于杭州，主要生产小家电。\n\n"
        "青柳牌电热水壶于2020年5月上市，容量为1.7升，采用不锈钢内胆。\n\n问题：青柳牌电热水壶是什么时候上市的？\n"
        "回答：青柳牌电热水壶于2020年5月上市，容量为1.7升，采用不锈钢内胆。\n\n"
        "保修期为二十四个月。\n\n问题：保修期是多久？\n回答：",
    ]
    assert runtime.stops == [("\n", "Question:", "问题："), ("\n", "Question:", "问题：")]


def test_pinned_prompt_language_overrides_the_question() -> None:
    runtime = ScriptedRuntime("24")
    generator(runtime, prompt_language="en").generate("保修期是多久？", ["保修期为二十四个月。"])
    assert runtime.prompts[0].startswith("Copy the sentence of the passages")


@pytest.mark.parametrize(("continuation", "answer"), [
    ("\n  24 months.\nQuestion: and the price?\nAnswer: $99", "24 months."),
    (" 24 months. Question: and the price?", "24 months."),
    (" 保修期为24个月。问题：价格是多少？", "保修期为24个月。"),
    (" Answer: 1889\n", "1889"),
    (" 回答：1889年", "1889年"),
    ("\n\n1. 罗马大学\n", "罗马大学"),
    ("\nAnswer:\n", ""),
])
def test_the_answer_ends_at_the_first_stop(continuation: str, answer: str) -> None:
    assert generator(ScriptedRuntime(continuation)).generate("How long?", ["x"]) == Answer.of(answer)
    assert cut_answer(" \n\t\n") == ""


def test_with_a_blank_line_stop_a_title_line_is_kept_with_the_line_after_it() -> None:
    assert cut_answer(" The Raven\nA poem about loss.\n\nQuestion: next", ("\n\n", "Question:")) == "The Raven A poem about loss."
    assert cut_answer("\nAnswer:\nJohn Sullivan\n\n", ("\n\n",)) == "John Sullivan"


def test_a_blank_continuation_is_a_missing_empty_answer() -> None:
    assert generator(ScriptedRuntime("\n \n")).generate("How long?", ["x"]) == Answer.missing("empty_answer")


def test_a_changed_prompt_or_stop_rule_is_a_new_answer_not_a_cached_one(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    question, passages = "How long?", ["The warranty is 24 months."]
    assert generator(ScriptedRuntime("24 months"), cache).generate(question, passages) == Answer("24 months")
    reworded = LocalPrompt({"en": "Read and answer.\n\n{context}\n\nQuestion: {question}\nAnswer:", "zh": "{context}{question}"}, LOCAL_PROMPT.stops)
    runtime = ScriptedRuntime("two years")
    assert generator(runtime, cache, reworded).generate(question, passages) == Answer("two years") and len(runtime.prompts) == 1
    restopped = LocalPrompt(LOCAL_PROMPT.body, ("\n",), LOCAL_PROMPT.instruction)
    runtime = ScriptedRuntime("24 months, from purchase")
    assert generator(runtime, cache, restopped).generate(question, passages) == Answer("24 months, from purchase")
    assert len(runtime.prompts) == 1
    shot = Shot(("The lamp uses a 9-watt LED.",), "What LED does the lamp use?", "A 9-watt LED.")
    with_example = LocalPrompt(LOCAL_PROMPT.body, LOCAL_PROMPT.stops, LOCAL_PROMPT.instruction, {"en": (shot,)})
    runtime = ScriptedRuntime("The warranty is 24 months.")
    assert generator(runtime, cache, with_example).generate(question, passages) == Answer("The warranty is 24 months.")
    assert len(runtime.prompts) == 1 and "Answer: A 9-watt LED.\n\nThe warranty is 24 months." in runtime.prompts[0]


def test_the_seed_is_not_part_of_the_answer_key(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    generator(ScriptedRuntime("24 months"), cache, seed=1).generate("How long?", ["x"])
    again = ScriptedRuntime("other")
    assert generator(again, cache, seed=2).generate("How long?", ["x"]) == Answer("24 months") and again.prompts == []


def test_answers_are_cached_by_prompt_and_runtime(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    first = ScriptedRuntime("24 months")
    generator(first, cache).generate("How long?", ["The warranty is 24 months."])
    again = ScriptedRuntime("something else")
    second = generator(again, cache)
    assert second.generate("How long?", ["The warranty is 24 months."]) == Answer("24 months")
    assert again.prompts == [] and second.usage.snapshot().cache_hits == 1
    assert second.requests_made.value == 1
    assert second.generate("How long?", ["Another passage."]) == Answer("something else")
    other_runtime = ScriptedRuntime("from another runtime", name="scripted 2")
    assert generator(other_runtime, cache).generate("How long?", ["The warranty is 24 months."]) == Answer("from another runtime")
    uncached = ScriptedRuntime("fresh")
    assert generator(uncached, cache, cache=False).generate("How long?", ["The warranty is 24 months."]) == Answer("fresh")


def test_a_call_counts_its_tokens() -> None:
    runtime = ScriptedRuntime("24 months")
    local = generator(runtime)
    local.generate("How long?", ["The warranty is 24 months."])
    usage = local.usage.snapshot()
    assert (usage.calls, usage.completion_tokens) == (1, 3) and usage.prompt_tokens > 0


def test_config_is_parsed_from_a_generator_mapping() -> None:
    config = GENERATORS.parse({"backend": "local", "model": "gemma-3-270m", "threads": 2}, "study.yaml")
    assert isinstance(config, LocalGeneratorConfig) and config.threads == 2 and config.max_tokens == 48
    with pytest.raises(UserError, match=r"^study.yaml: generator\.model"):
        GENERATORS.parse({"backend": "local", "model": "gpt-5"}, "study.yaml")


def test_without_the_extra_one_line_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_local, "_importable", lambda module: module != "llama_cpp")
    with pytest.raises(UserError) as caught:
        require_local()
    message = str(caught.value)
    assert "\n" not in message and "tuner[local]" in message and "llama_cpp" in message


def test_robustness_names_the_extra_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.cli import main

    study = tmp_path / "local.yaml"
    study.write_text("generator: {backend: local, model: gemma-3-270m}\n")
    monkeypatch.setattr(_local, "_importable", lambda module: False)
    assert main(["robustness", "demo", "--generator", str(study)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "tuner[local]" in error


def test_extra_buffers_are_off_when_the_build_has_amx_kernels() -> None:
    amx = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
    assert not _local.extra_buffers_safe(amx)
    assert _local.extra_buffers_safe(amx.replace("AMX_INT8 = 1 | ", ""))
    assert _local.extra_buffers_safe(amx.replace("AMX_INT8 = 1", "AMX_INT8 = 0"))
