"""Deploy (front → export → **serve**): :class:`tuner.Retriever` as a LangChain retriever (``pip install 'tuner[langchain]'``).

>>> from tuner.deploy.langchain import TunerLangChainRetriever  # doctest: +SKIP
>>> retriever = TunerLangChainRetriever.from_config("deploy.yaml", corpus="data/shop")  # doctest: +SKIP
>>> retriever.invoke("How long is the warranty?")[0].metadata["doc_id"]  # doctest: +SKIP
'warranty'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from tuner.deploy._retriever import Corpus, Retriever


class TunerLangChainRetriever(BaseRetriever):
    """The measured retrieval behind LangChain's retriever interface: one ``Document`` per chunk, best first, with
    ``doc_id``, ``span``, ``score``, ``chunk_id``, ``title`` and the document's metadata in ``metadata``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Retriever
    top_k: int | None = None
    filters: dict[str, Any] | None = None

    @classmethod
    def from_config(cls, path: str | Path, corpus: Corpus, **kwargs: Any) -> TunerLangChainRetriever:
        return cls(retriever=Retriever.from_config(path, corpus), **kwargs)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [
            Document(page_content=chunk.text, id=chunk.metadata["chunk_id"],
                     metadata={**chunk.metadata, "doc_id": chunk.doc_id, "span": list(chunk.span), "score": chunk.score})
            for chunk in self.retriever.retrieve(query, self.top_k, self.filters)
        ]
