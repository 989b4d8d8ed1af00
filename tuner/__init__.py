"""tuner: multi-objective tuning of RAG retrieval settings."""

__version__ = "0.1.0"
