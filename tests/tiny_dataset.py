"""A tiny hand-written dataset (products, policies, a stale version) shared by tests that need retrieval."""

from __future__ import annotations

from pathlib import Path

from tuner.io import write_jsonl

CORPUS = [
    ("aurora-x200", "Aurora X200 laptop", "The Aurora X200 laptop costs $1,299 and ships with 16 GB of memory. "
     "Its battery lasts 14 hours. The X200 weighs 1.3 kg and has a 14-inch display."),
    ("aurora-x210", "Aurora X210 laptop", "The Aurora X210 laptop costs $1,499 and ships with 32 GB of memory. "
     "Its battery lasts 12 hours. The X210 weighs 1.4 kg and has a 15-inch display."),
    ("returns", "Return policy", "Customers may return any product within 30 days of delivery for a full refund. "
     "Opened software cannot be returned. Refunds are issued to the original payment method within 5 business days."),
    ("warranty", "Warranty policy", "All laptops carry a 2-year limited warranty covering manufacturing defects. "
     "Accidental damage is not covered. Warranty claims require the original receipt."),
    ("shipping", "Shipping", "Standard shipping takes 3 to 5 business days and is free on orders over $50. "
     "Express shipping takes 1 business day and costs $15."),
    ("mercury-partner", "Mercury Logistics", "Mercury Logistics is our delivery partner in Europe. "
     "Mercury Logistics delivers to 28 countries and offers tracking for every parcel."),
    ("mercury-router", "Mercury router", "The Mercury router supports Wi-Fi 6 and covers up to 200 square meters. "
     "The Mercury router costs $199."),
    ("security", "Security policy", "Passwords must be at least 12 characters long and are rotated every 90 days. "
     "Two-factor authentication is mandatory for administrators. " * 3),
]
CONFLICTS = [
    ("aurora-x200-2023", "Aurora X200 laptop (2023)", "The Aurora X200 laptop costs $1,199 and ships with 8 GB of memory. "
     "Battery life is 11 hours.", "aurora-x200", ["$1,199", "8 GB"]),
    ("returns-2022", "Return policy (2022)", "Products can be returned within 14 days of delivery for a refund.",
     "returns", ["14 days"]),
]
GOLDEN = [
    ("q1", "How much does the Aurora X200 laptop cost?", "It costs $1,299.", [["$1,299", "1299 dollars"]], ["aurora-x200"], "single_hop", ["$1,199"]),
    ("q2", "How many days do customers have to return a product?", "30 days.", [["30 days", "thirty days"]], ["returns"], "single_hop", ["14 days"]),
    ("q3", "How long is the laptop warranty?", "Two years.", [["2-year", "two years", "2 years"]], ["warranty"], "single_hop", []),
    ("q4", "How much memory do the X200 and the X210 have?", "16 GB and 32 GB.", ["16 GB", "32 GB"], ["aurora-x200", "aurora-x210"], "multi_hop", ["8 GB"]),
    ("q5", "How many countries does Mercury Logistics deliver to?", "28 countries.", ["28 countries"], ["mercury-partner"], "long_tail", []),
    ("q6", "What does express shipping cost?", "$15.", ["$15"], ["shipping"], "single_hop", []),
]


def write_tiny_dataset(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "corpus.jsonl", [{"doc_id": d, "title": t, "text": x} for d, t, x in CORPUS])
    write_jsonl(
        root / "conflicts.jsonl",
        [
            {"doc_id": d, "title": t, "text": x, "conflicts_with": c, "kind": "stale_version", "severity": "moderate", "wrong_values": w}
            for d, t, x, c, w in CONFLICTS
        ],
    )
    write_jsonl(
        root / "golden.jsonl",
        [
            {"id": i, "question": q, "ground_truth": g, "keypoints": k, "relevant_doc_ids": r, "category": c, "wrong_answers": w}
            for i, q, g, k, r, c, w in GOLDEN
        ],
    )
    return root
