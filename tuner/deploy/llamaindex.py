"""Deploy (front → export → **serve**): :class:`tuner.Retriever` as a LlamaIndex retriever (``pip install 'tuner[llamaindex]'``).

>>> from tuner.deploy.llamaindex import TunerLlamaIndexRetriever  # doctest: +SKIP
>>> retriever = TunerLlamaIndexRetriever.from_config("deploy.yaml", corpus="data/shop")  # doctest: +SKIP
>>> retriever.retrieve("How long is the warranty?")[0].node.ref_doc_id  # doctest: +SKIP
'warranty'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode

from tuner.deploy._retriever import Corpus, Retriever


class TunerLlamaIndexRetriever(BaseRetriever):
    """The measured retrieval behind LlamaIndex's retriever interface: one ``NodeWithScore`` per chunk, best first;
    the node's id is the chunk id, its source document the chunk's document, its character span
    ``start_char_idx``/``end_char_idx``, and its metadata the chunk's and the document's."""

    def __init__(self, retriever: Retriever, top_k: int | None = None, filters: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.retriever = retriever
        self.top_k = top_k
        self.filters = filters

    @classmethod
    def from_config(cls, path: str | Path, corpus: Corpus, **kwargs: Any) -> TunerLlamaIndexRetriever:
        return cls(Retriever.from_config(path, corpus), **kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = []
        for chunk in self.retriever.retrieve(query_bundle.query_str, self.top_k, self.filters):
            node = TextNode(id_=chunk.metadata["chunk_id"], text=chunk.text, start_char_idx=chunk.span[0],
                            end_char_idx=chunk.span[1], metadata={**chunk.metadata, "doc_id": chunk.doc_id},
                            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=chunk.doc_id)})
            nodes.append(NodeWithScore(node=node, score=chunk.score))
        return nodes
