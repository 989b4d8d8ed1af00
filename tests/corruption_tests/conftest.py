"""A small hand-made dataset with prices, dates, counts, names and a yes/no statement."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.dataset import Dataset, load_dataset
from tuner.io import write_jsonl

CORPUS = [
    {
        "doc_id": "x200",
        "title": "Aurora X200",
        "text": "The Aurora X200 laptop costs $1,299 and was released on March 5, 2024. "
        "Aurora Labs designs it in Oslo. It is waterproof and includes a 2-year warranty.",
    },
    {
        "doc_id": "returns",
        "title": "Return policy",
        "text": "Customers of Nimbus Retail may return any product within 30 days of delivery. "
        "Refunds are issued within 5 business days.",
    },
    {
        "doc_id": "partner",
        "title": "Delivery partner",
        "text": "Mercury Logistics is our delivery partner in Europe. "
        "It has delivered to 28 countries since 2019-06-01.",
    },
    {"doc_id": "router", "title": "Vega R7", "text": "The Vega R7 router from Vega Networks costs $199."},
    {"doc_id": "courier", "title": "Courier", "text": "Mercury Freight and Polar Express handle parcels in Canada."},
]
GOLDEN = [
    {"id": "price", "question": "How much does the X200 cost?", "ground_truth": "$1,299.",
     "keypoints": [["$1,299", "1299 dollars"]], "relevant_doc_ids": ["x200"]},
    {"id": "release", "question": "When was the X200 released?", "ground_truth": "March 5, 2024.",
     "keypoints": ["March 5, 2024"], "relevant_doc_ids": ["x200"]},
    {"id": "window", "question": "How long is the return window?", "ground_truth": "30 days.",
     "keypoints": [["30 days", "thirty days"]], "relevant_doc_ids": ["returns"]},
    {"id": "carrier", "question": "Who delivers in Europe?", "ground_truth": "Mercury Logistics.",
     "keypoints": ["Mercury Logistics"], "relevant_doc_ids": ["partner"], "wrong_answers": ["Polar Express"]},
]  # fmt: skip


def write_handmade(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "corpus.jsonl", CORPUS)
    write_jsonl(root / "golden.jsonl", GOLDEN)
    return root


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    return write_handmade(tmp_path / "handmade")


@pytest.fixture
def dataset(dataset_dir: Path) -> Dataset:
    return load_dataset(dataset_dir)
