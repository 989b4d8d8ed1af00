"""Deploy (front → export → **serve**): the measured retrieval as a library (:class:`Retriever`), the HTTP service
behind ``tuner serve`` and the framework adapters (``tuner.deploy.langchain``, ``tuner.deploy.llamaindex``)."""

from tuner.deploy._retriever import FILTER_FIELDS, Corpus, RetrievedChunk, Retriever

__all__ = ["FILTER_FIELDS", "Corpus", "RetrievedChunk", "Retriever"]
