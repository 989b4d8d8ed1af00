"""The built-in demo knowledge base (dataset → **demo**): a seeded fictional company whose documents have stale
versions, near-duplicate products and namesakes, with single-hop, multi-hop and long-tail golden questions.

``generate_demo(DIR, seed)`` writes it as a dataset folder; ``tuner.dataset.resolve_dataset("demo")`` builds it
into the cache on first use.
"""

from tuner.dataset.demo._generate import GENERATOR_VERSION, demo_records, generate_demo

__all__ = ["GENERATOR_VERSION", "demo_records", "generate_demo"]
