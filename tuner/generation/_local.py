"""Answers (variants → **answers** → verdicts): a real language model run on this machine, offline, by llama.cpp
(``llama-cpp-python``): a GGUF file named by ``model_path``, or a packaged one named by ``model`` (:data:`LOCAL_MODELS`:
Qwen2.5-Coder 0.5B Instruct, Gemma 3 270M), assembled from its packages once per package version into the run's
cache (``models/``); nothing is downloaded at run time.

A chat (instruction-tuned) model gets a system instruction and one user message with the numbered passages and the
question (:data:`CHAT_PROMPT`), turned into its prompt by the chat template in its own GGUF file, the way
llama-cpp-python's ``create_chat_completion`` does; its answer is its reply. A base model gets a completion prompt in
the question's language (:data:`LOCAL_PROMPT`: one instruction line, a worked example, the passages, the question and
an answer cue), decoded greedily until it ends the line or starts the next question (the prompt's ``stops``), and its
answer is what it wrote before that (:func:`cut_answer`). Which of the two a model is comes from its GGUF file
(:func:`uses_chat`) unless ``chat`` says. Answers are kept in the call cache of every LLM backend
(:class:`tuner.llm.CallStore`), keyed by the model file, the runtime version, the full prompt (or the messages and the
template) and the stop rule.

The llama.cpp runtime that runs the model is :mod:`tuner.generation._llama`; the packaged models and how their files are
assembled, :mod:`tuner.generation._models`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from tuner.backends import BackendResources
from tuner.cache import DiskCache
from tuner.errors import UserError
from tuner.generation._base import Answer
from tuner.generation._llama import Generated, LlamaCpp, Runtime, _loaded, default_threads, file_identity
from tuner.generation._models import LOCAL_MODELS, LocalModelName, model_file, require_local
from tuner.generation._openai import INSTRUCTIONS, QUESTION_BODIES
from tuner.generation._prompts import ChatPrompt, LocalPrompt, PromptLanguage, Shot, prompt_language
from tuner.llm import CachedReply, CallStore, Message, RequestCount, Usage, request_key
from tuner.strict import StrictModel
from tuner.text import Language

_SHOT_PASSAGES: Mapping[Language, tuple[str, ...]] = {
    "en": ("Halvard Lighting is a lamp maker based in Gothenburg. It also makes ceiling fans and garden lights.",
           "The Lumen K2 desk lamp was released by Halvard Lighting in March 2019. It uses a 9-watt LED and has three "
           "brightness levels."),
    "zh": ("青柳电器公司成立于2008年，总部位于杭州，主要生产小家电。", "青柳牌电热水壶于2020年5月上市，容量为1.7升，采用不锈钢内胆。"),
}
LOCAL_PROMPT = LocalPrompt(
    body={"en": "{context}\n\nQuestion: {question}\nAnswer:", "zh": "{context}\n\n问题：{question}\n回答："},
    instruction={
        "en": "Copy the sentence of the passages that answers the question.",
        "zh": "请从段落中抄出回答问题的那一句话。",
    },
    shots={
        "en": (Shot(_SHOT_PASSAGES["en"], "When was the Lumen K2 desk lamp released?",
                    "The Lumen K2 desk lamp was released by Halvard Lighting in March 2019."),),
        "zh": (Shot(_SHOT_PASSAGES["zh"], "青柳牌电热水壶是什么时候上市的？", _SHOT_PASSAGES["zh"][1]),),
    },
    stops=("\n", "Question:", "问题："),
)
"""The local generator's prompt: an instruction to copy the answering sentence, one worked example per language
(hand-written, invented products: two passages, the answer in the second, copied as written), the passages, the
question and an answer cue. Chosen on the development sets (demo, demo-zh, ConflictNQ val, CMRC 2018 trial):
bench/HISTORY.md "Issue 37 §2" has every variant tried and its reading efficiency."""
CHAT_PROMPT = ChatPrompt(INSTRUCTIONS, QUESTION_BODIES)
"""A chat model's prompt: the hosted generator's default prompt (``tuner.generation._openai.PROMPT_TEMPLATES``: answer
from the numbered passages only, ``I don't know.`` / ``我不知道。`` when they hold no answer, one or two sentences; the
passages; the question) as one user message in the question's language, the model's template adding its own default
system turn, as a chat server asked by the ``openai`` generator does. Chosen over the instruction as the system
message on 20 tuning cases each of ConflictNQ val and CMRC 2018 (Qwen2.5-Coder 0.5B: reading efficiency 0.23 → 0.38
and 0.35 → 0.47; bench/RESULTS.md "Local chat reader (issue 46)" has the variants and the held-out cases)."""


ChatSetting = Literal["auto", "on", "off"]
PROMPT_ROOM = 128
"""The fewest context tokens a local prompt may be left after the answer's ``max_tokens``: a chat prompt's fixed part
(the template's system turn, the instruction, the cues) takes 60 tokens of Qwen2.5-Coder 0.5B in English, 71 in Chinese,
and the question and some passage text must fit beside it (a longer prompt is cut in its passages: :meth:`LlamaCpp.chat`;
a runtime whose fixed part alone is too long says so in one line)."""


class LocalGeneratorConfig(StrictModel):
    """``generator: {backend: local, model: qwen2.5-coder-0.5b-instruct}`` or ``{backend: local, model_path: FILE.gguf}`` (needs
    ``tuner[local]``).

    ``model``: a packaged model of :data:`LOCAL_MODELS` (default Qwen2.5-Coder 0.5B Instruct: it reads CMRC and
    the demos far better than Gemma 3 270M and ConflictNQ val as well, at about three times its CPU a call;
    bench/RESULTS.md "Local chat reader (issue 46)");
    ``model_path``: any GGUF file instead (not both).
    ``chat``: ``auto`` asks the model through its chat template when :func:`uses_chat` says it is a chat model,
    ``on`` always (the file must hold a template), ``off`` never (the completion prompt :data:`LOCAL_PROMPT`).

    ``max_tokens``: the most tokens an answer may take (decoding also stops at the prompt's ``stops``).
    ``threads``: CPU threads llama.cpp uses (default: one fewer than the cores this process may run on, see
    :func:`default_threads`).
    ``context_tokens``: the model's context window for prompt and answer; a longer prompt keeps its end
    (the question) and loses the start of the passages, and is counted in the usage like any other. At least
    :data:`PROMPT_ROOM` of its tokens must be left for the prompt after ``max_tokens``.
    ``seed``: accepted and ignored (decoding is greedy, so no seed changes an answer; kept so that older study
    files still load).
    ``prompt_language``: the language of the prompt (``auto``: the question's, see :data:`LOCAL_PROMPT`).
    ``cache``: keep every answer in the LLM call cache, so a repeated prompt costs nothing.
    """

    backend: Literal["local"] = "local"
    model: LocalModelName = "qwen2.5-coder-0.5b-instruct"
    model_path: Path | None = None
    chat: ChatSetting = "auto"
    max_tokens: int = Field(48, ge=1, le=512)
    threads: int | None = Field(None, ge=1, le=256)
    context_tokens: int = Field(2048, ge=256, le=32768)
    seed: int = 0
    prompt_language: PromptLanguage = "auto"
    cache: bool = True

    @model_validator(mode="after")
    def _one_model(self) -> LocalGeneratorConfig:
        if self.model_path is not None and "model" in self.model_fields_set:
            raise ValueError("name either model (a packaged model) or model_path (a GGUF file), not both")
        if self.context_tokens - self.max_tokens < PROMPT_ROOM:
            raise ValueError(
                f"max_tokens {self.max_tokens} leaves {self.context_tokens - self.max_tokens} of the {self.context_tokens} "
                f"context_tokens for the prompt, which needs at least {PROMPT_ROOM}: lower max_tokens to "
                f"{self.context_tokens - PROMPT_ROOM} or raise context_tokens to {self.max_tokens + PROMPT_ROOM}")
        return self

    @property
    def model_name(self) -> str:
        """The model as the cache key and the reports name it: the packaged model's name, or the file's."""
        return self.model if self.model_path is None else self.model_path.name


INSTRUCT_MARKS = frozenset({"instruct", "chat", "it", "sft", "rlhf", "dpo"})
"""Words of a GGUF's ``general.finetune`` or ``general.name`` that mark an instruction-tuned model (``Instruct``,
``Instruct-AWQ``, ``gemma-3-270m-it``, ``Chat``)."""


def is_instruct(metadata: Mapping[str, str]) -> bool:
    """Whether a GGUF's metadata names an instruction-tuned model: a word of :data:`INSTRUCT_MARKS` in its
    ``general.finetune`` or ``general.name``.

    >>> is_instruct({"general.name": "Qwen2.5 Coder 0.5B Instruct AWQ", "general.finetune": "Instruct-AWQ"})
    True
    >>> is_instruct({"general.name": "Gemma 3 270m"}), is_instruct({"general.name": "Mistral 7B Instruct v0.3"})
    (False, True)
    """
    text = " ".join(metadata.get(key, "") for key in ("general.finetune", "general.name")).lower()
    return bool(INSTRUCT_MARKS & set(re.split(r"[^a-z0-9]+", text)))


def uses_chat(setting: ChatSetting, chat_template: str | None, metadata: Mapping[str, str], source: str) -> bool:
    """Whether the model of ``source`` (its file, for the error) is asked through its chat template: ``on`` (it must
    have one), ``off``, or ``auto``: when its GGUF holds a chat template (``tokenizer.chat_template``) **and** names an
    instruction-tuned model (:func:`is_instruct`; a base model's file may carry a template it was never tuned on).

    >>> uses_chat("auto", "{{ messages }}", {"general.finetune": "Instruct"}, "m.gguf")
    True
    >>> uses_chat("auto", "{{ messages }}", {"general.name": "Gemma 3 270m"}, "m.gguf"), uses_chat("off", "{{ messages }}", {"general.finetune": "Instruct"}, "m.gguf")
    (False, False)
    """
    if setting == "on" and chat_template is None:
        raise UserError(f"{source}: generator.chat is on, but this model file holds no chat template (tokenizer.chat_template)")
    if setting != "auto":
        return setting == "on"
    return chat_template is not None and is_instruct(metadata)


def cut_answer(text: str, stops: Sequence[str] = ("\n",)) -> str:
    """The answer in a base model's continuation: from its first non-blank character to the first of ``stops``
    (the end of the line, the next question it starts writing), its lines joined by spaces, without a list marker or
    a repeated answer cue in front, stripped ("" when nothing is left).

    >>> cut_answer("\\n 24 months.\\nQuestion: what else?")
    '24 months.'
    >>> cut_answer(" 保修期为24个月。问题：价格是多少？", ("\\n", "问题："))
    '保修期为24个月。'
    >>> cut_answer(" Answer: 1889", ("\\n",)), cut_answer("\\n\\n1. 罗马大学\\n"), cut_answer(" The Raven\\nA poem.\\n\\n", ("\\n\\n",))
    ('1889', '罗马大学', 'The Raven A poem.')
    """
    answer = text.lstrip()
    ends = [index for index in (answer.find(stop) for stop in stops) if index > 0]
    answer = " ".join(line.strip() for line in (answer[: min(ends)] if ends else answer).splitlines() if line.strip())
    answer = _LIST_MARKER.sub("", answer, count=1)
    for cue in ANSWER_CUES:
        if answer.startswith(cue):
            answer = answer[len(cue):]
    return answer.strip()


_LIST_MARKER = re.compile(r"^(?:\d{1,2}[.)]\s+|\d{1,2}、\s*|[-*•]\s+)")
"""A list item's marker (``1. ``, ``- ``) a base model sometimes starts its answer with."""
ANSWER_CUES = ("Answer:", "回答：", "答案：", "答：")
"""Cues a base model sometimes repeats before its answer."""


class LocalGenerator:
    """Answers with a local model. A chat model (:func:`uses_chat`) is asked with ``chat_prompt`` (default
    :data:`CHAT_PROMPT`) through its chat template, and its reply, lines joined, is the answer; a base model with
    ``prompt`` (default :data:`LOCAL_PROMPT`), the greedy continuation cut at the prompt's stops. Both in the question's
    language.

    A blank answer is ``Answer.missing("empty_answer")``. ``concurrency`` is 1: llama.cpp already uses every thread
    for one sequence, and the runtime decodes one sequence at a time.
    """

    name = "local"
    concurrency = 1

    def __init__(
        self, config: LocalGeneratorConfig, runtime: Runtime, cache: CallStore | None, usage: Usage,
        prompt: LocalPrompt = LOCAL_PROMPT, chat_prompt: ChatPrompt = CHAT_PROMPT,
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.cache = cache if config.cache else None
        self.usage = usage
        self.local_prompt = prompt
        self.chat_prompt = chat_prompt
        self.chat = uses_chat(config.chat, runtime.chat_template, runtime.metadata, config.model_name)
        self.requests_made = RequestCount()

    def prompt(self, question: str, contexts: Sequence[str]) -> str:
        """The completion prompt a base model is given."""
        return self.local_prompt.render(self._language(question), question, contexts)

    def messages(self, question: str, contexts: Sequence[str]) -> list[Message]:
        """The system and user messages a chat model is given."""
        return self.chat_prompt.messages(self._language(question), question, contexts)

    def _language(self, question: str) -> Language:
        return prompt_language(question, self.config.prompt_language)

    def request(self, question: str, contexts: Sequence[str]) -> dict[str, object]:
        """Everything that determines the reply, hence the cache key: a changed prompt, template or stop rule is a new
        answer (decoding is greedy, so no temperature and no seed)."""
        common = {
            "backend": "local", "model": self.config.model_name, "file": self.runtime.identity, "runtime": self.runtime.name,
            "max_tokens": self.config.max_tokens, "context_tokens": self.config.context_tokens,
        }
        if self.chat:
            template = hashlib.sha256(str(self.runtime.chat_template).encode("utf-8")).hexdigest()
            kept = self.chat_prompt.kept(self._language(question))  # what a cut keeps decides the reply too
            return {**common, "messages": [dict(m) for m in self.messages(question, contexts)], "chat_template": template, "kept": kept}
        return {**common, "prompt": self.prompt(question, contexts), "stops": list(self.local_prompt.stops)}

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        request = self.request(question, contexts)
        self.requests_made.add()
        if self.cache is None:
            return self._answer(self._run(request).text)
        key = request_key(request)
        with self.cache.claim(key):
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.add(cache_hits=1)
                return self._answer(hit.text)
            reply = self._run(request)
            self.cache.put(key, request, CachedReply(reply.text, reply.prompt_tokens, reply.completion_tokens))
        return self._answer(reply.text)

    def _answer(self, text: str) -> Answer:
        return Answer.of(cut_answer(text, () if self.chat else self.local_prompt.stops))

    def _run(self, request: Mapping[str, Any]) -> Generated:
        if self.chat:
            reply = self.runtime.chat(request["messages"], self.config.max_tokens, str(request["kept"]))
        else:
            reply = self.runtime.complete(str(request["prompt"]), self.config.max_tokens, self.local_prompt.stops)
        self.usage.add(calls=1, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        return reply


def check_local(config: LocalGeneratorConfig) -> None:
    """What ``config`` needs installed (:func:`require_local`: llama-cpp-python, a packaged model's packages) and its
    ``model_path`` a file."""
    require_local(config.model if config.model_path is None else None)
    if config.model_path is not None and not config.model_path.expanduser().is_file():
        raise UserError(f"generator.model_path: {config.model_path.expanduser()} is not a file")


def llama_cpp_runtime(config: LocalGeneratorConfig, cache: DiskCache | None = None) -> LlamaCpp:
    """The loaded model of ``config``: its ``model_path``, or its packaged model's file assembled into ``cache``
    (default: the tuner cache)."""
    if config.model_path is not None:
        check_local(config)
        path = config.model_path.expanduser()
        return _loaded(path.resolve(), config.threads or default_threads(), config.context_tokens, file_identity(path.resolve()))
    require_local(config.model)
    source = LOCAL_MODELS[config.model]
    return _loaded(model_file(config.model, cache), config.threads or default_threads(), config.context_tokens, f"sha256:{source.sha256}")


def build_local(config: LocalGeneratorConfig, resources: BackendResources) -> LocalGenerator:
    """The local generator of a run: a packaged model's file in the run's cache folder (where its LLM call cache
    lives)."""
    folder = resources.cache_path.parent if resources.cache_path is not None else None
    cache = resources.call_cache() if config.cache else None
    return LocalGenerator(config, llama_cpp_runtime(config, DiskCache(folder)), cache, resources.usage)
