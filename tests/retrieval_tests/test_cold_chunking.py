"""The cold path's batches and worker processes change no chunk (issue 39 §2): the chunk table a corpus gets, byte for
byte, is the one the code before batching wrote (digests pinned from it), BM25 terms of a batch are those of one text
at a time, and a corpus cut and indexed in shards by worker processes gets the same table and index."""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from itertools import count
from pathlib import Path

import pytest

from tests.tiny_dataset import write_tiny_dataset
from tuner.chunking import chunk_dataset, chunk_spans, unit_spans
from tuner.dataset import Dataset, load_dataset
from tuner.io import write_jsonl
from tuner import workers
from tuner.retrieval._bm25 import build_index
from tuner.retrieval._table import _write_chunks
from tuner.settings import RetrievalSettings
from tuner.text import STOPWORDS_LATIN, STOPWORDS_ZH, analyzer_term_ids, analyzer_tokens, bm25_token_lists, normalize_text
from tuner.text import _segment, _tokens
from tuner.text._segment import SEGMENTERS

SENTENCES = [
    "Nimbus X2的保修期是两年，电池续航14小时。", "售价为5999元（含税），２０２３年５月起上市！", "它支持Wi-Fi 6与蓝牙5.3；",
    "“这款笔记本很轻。”他说。", "The Aurora X200 costs $1,299 and weighs 1.3 kg.", "退货须在30天内办理，已拆封的软件除外。",
    "Express shipping takes 1 business day.", "㐀㐁是扩展A区的字，𠀀在扩展B区。", "第三季度营收同比增长一成五……",
    "\n\n", "　全角空格开头的一句。", "Versions 2.5 and 3.0 differ; see section 4.",
]


def _mixed_corpus(root: Path) -> Dataset:
    """The tiny dataset's documents and conflicts, plus forty documents of 3–30 sentences drawn with a fixed seed
    (Chinese, English, mixed, rare ideographs, blank lines, full-width forms)."""
    write_tiny_dataset(root)
    rng = random.Random(39)
    corpus = [json.loads(line) for line in (root / "corpus.jsonl").read_text("utf-8").splitlines()]
    corpus += [{"doc_id": f"mixed-{n}", "title": f"文档{n}", "text": "".join(rng.choices(SENTENCES, k=rng.randint(3, 30)))}
               for n in range(40)]
    write_jsonl(root / "corpus.jsonl", corpus)
    return load_dataset(root)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# sha256 of chunks.jsonl as the chunk cache writes it, from the code before batching (commit 1451d6b)
BEFORE = {
    ("tokens", 24, 0.25): "ab8db847cbf112b70b7a1ca97e6105bfe010825fef855de9eb7098ecaf1808b8",
    ("chars", 40, 0.1): "4400ba3007832f1768cd9ca918e6a115bee67d5881f605032d0cb1366d220b34",
}


@pytest.mark.parametrize(("unit", "size", "overlap"), sorted(BEFORE))
def test_the_chunk_table_is_byte_identical_to_the_one_before_batching(
    tmp_path: Path, unit: str, size: int, overlap: float
) -> None:
    dataset = _mixed_corpus(tmp_path / "data")
    chunking = RetrievalSettings(chunk_unit=unit, chunk_size=size, chunk_overlap=overlap).chunking  # type: ignore[arg-type]
    chunks = chunk_dataset(dataset, chunking)
    _write_chunks(chunks, tmp_path)
    assert _digest((tmp_path / "chunks.jsonl").read_bytes()) == BEFORE[(unit, size, overlap)]
    # and document by document through the one-text path
    units = unit_spans(chunking.chunk_unit, chunking.tokenizer)
    one_by_one = [(doc.doc_id, span) for doc in [*dataset.corpus, *dataset.conflicts]
                  for span in chunk_spans(doc.text, units, size, overlap, snap=True)]
    assert [(chunk.doc_id, (chunk.start, chunk.end)) for chunk in chunks] == one_by_one


# sha256 of the BM25 terms of every chunk (tokens unit above), one JSON list per chunk, from the code before batching
BM25_BEFORE = "fa06bfdd35f5173c4cf0f2835a9e6392565a68a512487111ee8276699e921235"


def test_bm25_terms_of_a_batch_are_those_one_segmenter_call_per_run_gave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = _mixed_corpus(tmp_path / "data")
    passages = [chunk.passage for chunk in chunk_dataset(dataset, RetrievalSettings(chunk_size=24, chunk_overlap=0.25).chunking)]
    terms = "\n".join(json.dumps(tokens, ensure_ascii=False) for tokens in bm25_token_lists(passages))
    assert _digest(terms.encode("utf-8")) == BM25_BEFORE
    assert list(bm25_token_lists(["", "only english words here", "纯中文"])) == [[], ["only", "english", "words", "here"], ["纯中文"]]
    # one text at a time, with the segmenter jieba instead of rjieba: the same words as one call per run
    texts = ["保修期是两年，电池14小时", "㐀㐁与𠀀在扩展区 and more", "iPhone 15的售价是5999元"]
    for name in SEGMENTERS:
        with monkeypatch.context() as patched:
            patched.setattr(_segment, "SEGMENTER", name)
            patched.setattr(_tokens, "SEGMENTER", name)
            batched = list(bm25_token_lists(texts))
            alone = [[w for cjk, latin in _tokens._word_rule()[1].findall(normalize_text(text))
                      for w in (_segment.segmenter(name)(cjk) if cjk else [latin])
                      if w not in STOPWORDS_ZH and w not in STOPWORDS_LATIN] for text in texts]
            assert batched == alone


@pytest.mark.parametrize("language", ["en", "zh"])
def test_term_ids_are_the_token_lists_numbered_in_order_of_first_occurrence(tmp_path: Path, language: str) -> None:
    dataset = _mixed_corpus(tmp_path / "data")
    passages = [chunk.passage for chunk in chunk_dataset(dataset, RetrievalSettings(chunk_size=24, chunk_overlap=0.25).chunking)]
    # passages without terms (empty, stopwords only, punctuation only) among them
    passages[6:6] = ["", "的了", "the and of", "。！？", "\n", "a"]
    vocab: defaultdict[str, int] = defaultdict(count().__next__)
    flat, counts = [], []
    for terms in (analyzer_tokens(p, language) for p in passages):  # type: ignore[arg-type]
        flat += [vocab[term] for term in terms or ["<empty>"]]
        counts.append(len(terms or ["<empty>"]))
    terms, ids, lengths = analyzer_term_ids(passages, "<empty>", language)  # type: ignore[arg-type]
    assert terms == list(vocab) and ids.tolist() == flat and lengths.tolist() == counts
    assert analyzer_term_ids([], "<empty>", "zh")[0] == [] and analyzer_term_ids(["的"], "<empty>", "zh")[0] == ["<empty>"]


def test_worker_processes_cut_and_index_as_one_process_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = _mixed_corpus(tmp_path / "data")
    chunking = RetrievalSettings(chunk_size=24, chunk_overlap=0.25).chunking
    alone = build_index([chunk.passage for chunk in chunk_dataset(dataset, chunking)], 1.5, 0.75, "zh")
    monkeypatch.setattr(workers, "PARALLEL_MIN_CHARS", 0)  # this small corpus in shards, on two workers
    monkeypatch.setattr(workers, "worker_count", lambda: 2)
    chunks = chunk_dataset(dataset, chunking)
    _write_chunks(chunks, tmp_path)
    assert _digest((tmp_path / "chunks.jsonl").read_bytes()) == BEFORE[("tokens", 24, 0.25)]
    sharded = build_index([chunk.passage for chunk in chunks], 1.5, 0.75, "zh")
    assert sharded.vocab_dict == alone.vocab_dict and list(sharded.vocab_dict) == list(alone.vocab_dict)
    for name in ("data", "indices", "indptr"):
        assert sharded.scores[name].dtype == alone.scores[name].dtype
        assert sharded.scores[name].tobytes() == alone.scores[name].tobytes()
