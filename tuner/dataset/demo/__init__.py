"""The built-in demo knowledge base (dataset → **demo**): a seeded fictional company whose documents have stale
versions, near-duplicate products and namesakes, with single-hop, multi-hop and long-tail golden questions.

The generator is shared; each language (``en``, ``zh``) is a data set of templates (:class:`Language`).
``generate_demo(DIR, seed, language=...)`` writes it as a dataset folder;
``tuner.dataset.resolve_dataset("demo")`` / ``("demo-zh")`` builds it into the cache on first use.
"""

from tuner.dataset.demo._generate import GENERATOR_VERSION, LANGUAGES, demo_language, demo_records, generate_demo
from tuner.dataset.demo._language import Language

__all__ = ["GENERATOR_VERSION", "LANGUAGES", "Language", "demo_language", "demo_records", "generate_demo"]
