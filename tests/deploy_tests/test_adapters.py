from __future__ import annotations


import pytest

from tuner.dataset import Document
from tuner.deploy import Retriever
from tuner.embedding import EmbeddingContext
from tuner.export import export_document, write_export
from tuner.settings import RetrievalSettings

pytestmark = pytest.mark.slow  # the module's retriever loads and runs the embedding model

QUERIES = ("How long is the warranty on laptops?", "What does express shipping cost?", "refund within 30 days")


def _shop() -> list[Document]:
    return [
        Document("warranty", "All laptops carry a 2-year limited warranty covering manufacturing defects. "
                 "Accidental damage is not covered.", "Warranty", {"team": "support"}),
        Document("returns", "Customers may return any product within 30 days of delivery for a full refund.", "Returns",
                 {"team": "sales"}),
        Document("shipping", "Standard shipping takes 3 to 5 business days. Express shipping costs $15.", "Shipping",
                 {"team": "sales"}),
    ]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory, embeddings: EmbeddingContext) -> Retriever:
    """A hybrid, reranked retriever over three documents, on the session's models (loaded once per worker)."""
    settings = RetrievalSettings(top_k=3, chunk_size=12, retriever="hybrid", rerank_strength=0.4, candidate_depth=6)
    path = write_export(tmp_path_factory.mktemp("adapters") / "deploy.env", export_document(settings.model_dump(), {}))
    return Retriever.from_config(path, corpus=_shop(), embeddings=embeddings)


def test_langchain_invoke_returns_the_tuner_chunks(retriever: Retriever) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document as LangChainDocument

    from tuner.deploy.langchain import TunerLangChainRetriever

    adapter = TunerLangChainRetriever(retriever=retriever)
    for query in QUERIES:
        documents = adapter.invoke(query)
        expected = retriever.retrieve(query)
        assert all(isinstance(d, LangChainDocument) for d in documents) and len(documents) == len(expected) > 0
        assert [(d.page_content, d.metadata["doc_id"], d.metadata["score"]) for d in documents] == [
            (c.text, c.doc_id, c.score) for c in expected]
    assert [d.metadata["team"] for d in TunerLangChainRetriever(retriever=retriever, top_k=1, filters={"team": "sales"})
            .invoke("warranty")] == ["sales"]


def test_llamaindex_retrieve_returns_the_tuner_chunks(retriever: Retriever) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import NodeWithScore

    from tuner.deploy.llamaindex import TunerLlamaIndexRetriever

    adapter = TunerLlamaIndexRetriever(retriever)
    for query in QUERIES:
        nodes = adapter.retrieve(query)
        expected = retriever.retrieve(query)
        assert all(isinstance(n, NodeWithScore) for n in nodes) and len(nodes) == len(expected) > 0
        assert [(n.node.get_content(), n.node.ref_doc_id, n.score) for n in nodes] == [
            (c.text, c.doc_id, c.score) for c in expected]
        assert [(n.node.start_char_idx, n.node.end_char_idx) for n in nodes] == [c.span for c in expected]
    assert len(TunerLlamaIndexRetriever(retriever, top_k=1).retrieve("shipping")) == 1
