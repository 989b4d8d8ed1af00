"""Answers (variants → **answers** → verdicts): the llama.cpp runtime under the local generator: one GGUF model loaded
through llama-cpp-python's low-level API (:class:`LlamaCpp`), decoded greedily for a completion prompt or a chat
through the file's own template, its log sent to Python's logging, one loaded model per file and settings in a process
(:func:`_loaded`), and what a reply is (:class:`Generated`) for any runtime (:class:`Runtime`)."""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tuner.errors import UserError
from tuner.llm import Message

if TYPE_CHECKING:
    import numpy as np


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


def default_threads() -> int:
    """One fewer than the cores this process may run on (its CPU affinity), at least 1: llama.cpp's threads wait for
    each other by spinning, so one thread that loses its core to the rest of tuner (retrieval, judging) or to another
    process stalls them all (bench/HISTORY.md "Issue 32": on a loaded 2-core machine 1 thread took 0.8 s a call where
    2 took 4-6 s)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1)


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
        if head >= room:  # llama.cpp would fail mid-answer (llama_decode status 1: no room left in its context)
            raise UserError(f"generator: context_tokens {self.context_tokens} leaves {room} tokens for the prompt after "
                            f"max_tokens {max_tokens}, fewer than the {head} of its fixed part (the template's turns, "
                            "the instruction): raise generator.context_tokens or lower generator.max_tokens")
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
