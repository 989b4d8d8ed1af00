from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tiny_dataset import write_tiny_dataset

CORRUPTED = [
    ("x200-fact-subtle", "aurora-x200", "factual_corruption", "subtle",
     "The Aurora X200 laptop costs $1,249 and ships with 16 GB of memory. Its battery lasts 14 hours.", ["$1,249"]),
    ("x200-fact-obvious", "aurora-x200", "factual_corruption", "obvious",
     "The Aurora X200 laptop costs $9,999 and ships with 16 GB of memory.", ["$9,999"]),
    ("x200-typo", "aurora-x200", "numeric_typo", "moderate",
     "The Aurora X200 laptop costs $1,29 and ships with 61 GB of memory. Its battery lasts 41 hours.", ["$1,29", "61 GB"]),
    ("returns-contra", "returns", "contradiction_injection", "moderate",
     "Customers may return any product within 7 days of delivery. Returns after 7 days are refused.", ["7 days"]),
    ("returns-poison", "returns", "relevance_poisoning", "subtle",
     "Customers often ask about returning products. Our team is happy to explain how returns work.", []),
]


@pytest.fixture(scope="session")
def corrupted_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny dataset (with its two stale_version conflicts) plus five corrupted copies of several kinds."""
    root = write_tiny_dataset(tmp_path_factory.mktemp("corrupted"))
    extra = [
        {"doc_id": d, "conflicts_with": c, "kind": k, "severity": s, "text": t, "wrong_values": w, "title": ""}
        for d, c, k, s, t, w in CORRUPTED
    ]
    with (root / "conflicts.jsonl").open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in extra)
    return root
