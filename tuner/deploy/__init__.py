"""Deploy (front → export → **serve**): the measured retrieval as a library (:class:`Retriever`), the HTTP service
behind ``tuner serve`` and the framework adapters (``tuner.deploy.langchain``, ``tuner.deploy.llamaindex``)."""

from tuner.deploy._engine import engine_note, measured_backend, serving_engine
from tuner.deploy._retriever import Corpus, EngineCorpus, RetrievedChunk, Retriever
from tuner.retrieval import FILTER_FIELDS

__all__ = ["FILTER_FIELDS", "Corpus", "EngineCorpus", "RetrievedChunk", "Retriever", "engine_note", "measured_backend",
           "serving_engine"]
