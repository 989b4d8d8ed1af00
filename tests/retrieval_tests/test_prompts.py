"""Query and document prompts: the right prompt for each side, and every key a vector is stored under names it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder, preset_prompts, vector_id
from tuner.embedding._stores import text_hash
from tuner.errors import UserError
from tuner.rerank import build_reranker
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings, settings_from_mapping
from tuner.text import split_sentences

BGE_ZH_QUERY = "为这个句子生成表示以用于检索相关文章："
TEXT = "The Aurora X200 laptop costs $1,299."


def test_a_prompt_is_put_before_the_text(encoder: CachedEncoder) -> None:
    prompted = encoder.with_prompt("query: ").encode([TEXT])
    by_hand = encoder.encode(["query: " + TEXT])
    np.testing.assert_allclose(prompted, by_hand, atol=1e-5)
    assert not np.allclose(prompted, encoder.encode([TEXT]), atol=1e-3)


def test_same_text_under_another_prompt_is_another_stored_vector(encoder: CachedEncoder) -> None:
    text = "Express shipping takes 1 business day."
    query, passage = encoder.with_prompt("query: "), encoder.with_prompt("passage: ")
    query.encode([text])
    passage.encode([text])
    assert (query.vector_id, passage.vector_id) == ("all-MiniLM-L6-v2|prompt=query: ", "all-MiniLM-L6-v2|prompt=passage: ")
    stored_query = encoder.store.get_many(query.vector_id, [text_hash(text)])[text_hash(text)]
    stored_passage = encoder.store.get_many(passage.vector_id, [text_hash(text)])[text_hash(text)]
    assert not np.allclose(stored_query, stored_passage, atol=1e-3)
    assert query.missing([text]) == [] and encoder.with_prompt("search: ").missing([text]) == [text]


def test_no_prompt_keeps_the_key_vectors_had_before_prompts(encoder: CachedEncoder) -> None:
    text = "Standard shipping is free on orders over $50."
    assert encoder.prompt == "" and encoder.vector_id == vector_id("all-MiniLM-L6-v2", "") == "all-MiniLM-L6-v2"
    assert encoder.with_prompt("") is encoder
    vector = encoder.encode([text])[0]
    np.testing.assert_array_equal(encoder.store.get_many("all-MiniLM-L6-v2", [text_hash(text)])[text_hash(text)], vector)


def test_presets_follow_the_model_cards() -> None:
    assert preset_prompts("BAAI/bge-small-zh-v1.5") == (BGE_ZH_QUERY, "")
    assert preset_prompts("/models/bge-large-zh-v1.5") == (BGE_ZH_QUERY, "")
    assert preset_prompts("intfloat/multilingual-e5-base") == ("query: ", "passage: ")
    assert preset_prompts("intfloat/e5-small-v2") == ("query: ", "passage: ")
    assert preset_prompts("BAAI/bge-m3") is None and preset_prompts("all-MiniLM-L6-v2") is None


def test_auto_is_replaced_by_the_preset_text() -> None:
    settings = settings_from_mapping({"embedding_model": "BAAI/bge-small-zh-v1.5", "query_prompt": "auto", "document_prompt": "auto"}, "s.yaml")
    assert (settings.query_prompt, settings.document_prompt) == (BGE_ZH_QUERY, "")
    e5 = settings_from_mapping({"embedding_model": "intfloat/multilingual-e5-small", "document_prompt": "auto"}, "s.yaml")
    assert (e5.query_prompt, e5.document_prompt) == ("", "passage: ")
    with pytest.raises(UserError) as info:
        settings_from_mapping({"query_prompt": "auto"}, "s.yaml")
    assert str(info.value) == (
        "s.yaml: query_prompt: no preset prompt for embedding model 'all-MiniLM-L6-v2': write the prompt text itself"
    )


def test_encoding_is_the_model_alone_without_prompts() -> None:
    assert RetrievalSettings().encoding == "all-MiniLM-L6-v2"
    assert RetrievalSettings(query_prompt="q: ").encoding == '["all-MiniLM-L6-v2", "q: ", ""]'
    assert RetrievalSettings(document_prompt="q: ").encoding != RetrievalSettings(query_prompt="q: ").encoding


@pytest.fixture()
def pipeline(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> RetrievalPipeline:
    return RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=DiskCache(tmp_path / "cache"), encoder=encoder)


def test_candidate_keys_change_with_the_query_prompt(pipeline: RetrievalPipeline) -> None:
    settings = RetrievalSettings(retriever="dense", chunk_size=40)
    plain = pipeline.candidates(settings)
    prompted = pipeline.candidates(settings.model_copy(update={"query_prompt": "query: "}))
    assert prompted.key != plain.key


def test_chunks_use_the_document_prompt_and_questions_the_query_prompt(pipeline: RetrievalPipeline, encoder: CachedEncoder) -> None:
    settings = RetrievalSettings(retriever="dense", chunk_size=40, query_prompt="query: ", document_prompt="passage: ")
    candidates = pipeline.candidates(settings)
    table = pipeline.table(settings)
    assert table.encoder.prompt == "passage: " and table.key == pipeline.table(RetrievalSettings(chunk_size=40)).key
    assert encoder.with_prompt("passage: ").missing(table.passages) == []
    questions = encoder.with_prompt("query: ").encode(pipeline.queries)
    np.testing.assert_array_equal(pipeline.query_vectors(settings), questions)
    # dense scores are cos(query-prompted question, passage-prompted chunk), clipped to [0, 1]
    passages = encoder.with_prompt("passage: ").encode(table.passages)
    row, first = 0, candidates.indices[0][0]
    assert candidates.scores[row][0] == pytest.approx(float(np.clip(passages[first] @ questions[row], 0, 1)), abs=1e-5)


def test_maxsim_reranker_encodes_sentences_as_documents_and_the_question_as_a_query(encoder: CachedEncoder) -> None:
    passage = "The X200 weighs 1.3 kg. Its battery lasts 14 hours."
    question = "How long does the battery last?"
    reranker = build_reranker("embedding-maxsim", encoder.with_prompt("passage: "), "query: ")
    sentences = split_sentences(passage)
    by_hand = max(encoder.encode(["passage: " + s for s in sentences]) @ encoder.encode(["query: " + question])[0])
    assert reranker.score(question, [passage])[0] == pytest.approx(max(0.0, float(by_hand)), abs=1e-5)


def test_prompts_are_command_line_flags(tiny_dataset_dir: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]) -> None:
    # the command's encoder shares the session's embedding store ($TUNER_CACHE): prompts unused elsewhere
    # show whether the questions and chunks really were encoded with them
    questions = [case.question for case in load_dataset(tiny_dataset_dir).golden]
    query, document = encoder.with_prompt("cli query: "), encoder.with_prompt("cli passage: ")
    assert query.missing(questions) == questions
    args = ["eval", str(tiny_dataset_dir), "--retriever", "dense", "--chunk-size", "40", "--json"]
    assert main([*args, "--query-prompt", "cli query: ", "--document-prompt", "cli passage: "]) == 0
    assert 0.0 <= json.loads(capsys.readouterr().out)["recall_at_k"] <= 1.0
    assert query.missing(questions) == [] and document.missing(questions) == questions
    assert main([*args, "--query-prompt", "auto"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "query_prompt" in err[0] and "no preset prompt" in err[0]
