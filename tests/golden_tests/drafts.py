"""Hand-made draft files over the golden tests' knowledge base (no retrieval needed), for the review app's tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.text_tests.zh_fixture import DOCS as ZH_DOCS
from tests.tiny_dataset import CORPUS
from tuner.golden import ReviewStore, draft_case, write_draft
from tuner.http_guard import TOKEN_HEADER

TOKEN = "test-token"

_TEXT = {d: (t, x) for d, t, x in CORPUS} | {f"zh-{d}": ("", x) for d, x in ZH_DOCS}


def chunk(doc_id: str, bm25: int | None, dense: int | None, hybrid: int | None) -> dict[str, object]:
    title, text = _TEXT[doc_id]
    return {"doc_id": doc_id, "chunk_id": f"{doc_id}#0-{len(text)}", "title": title, "text": text,
            "ranks": {"bm25": bm25, "dense": dense, "hybrid": hybrid}}


def review_client(store: ReviewStore, language: str | None = None, **options: Any) -> TestClient:
    """A test client of the review app over ``store``, as its page talks to it: a loopback Host and the run's token."""
    from tuner.golden.review_app import build_review_app

    return TestClient(build_review_app(store, language, TOKEN), base_url="http://127.0.0.1:8765",
                      headers={TOKEN_HEADER: TOKEN}, **options)


def copy_kb(kb_dir: Path, target: Path) -> Path:
    target.mkdir(parents=True)
    for name in ("corpus.jsonl", "dataset.yaml"):
        if (kb_dir / name).is_file():
            shutil.copyfile(kb_dir / name, target / name)
    return target


def write_case_draft(kb: Path, folder: Path) -> Path:
    """Three draft cases: English with keypoints, Chinese without, English retrieval-only."""
    rows = [
        draft_case("log-0001", "How much does the Aurora X200 laptop cost?",
                   [chunk("aurora-x200", 1, 1, 1), chunk("aurora-x210", 2, 2, 2), chunk("mercury-router", None, 3, 3)], kb,
                   source="log", stratum="head", count=52, ground_truth="It costs $1,299.", keypoints=[["$1,299"]]),
        draft_case("log-0002", "顺丰次日达要加多少运费？", [chunk("zh-shipping", 1, 1, 1), chunk("zh-member", 2, None, 2)], kb,
                   source="log", stratum="torso", count=20),
        draft_case("log-0003", "How long is the laptop warranty?", [chunk("warranty", 1, 1, 1), chunk("returns", 2, 2, 2)], kb,
                   source="log", stratum="tail", count=1),
    ]
    path = folder / "review.jsonl"
    write_draft(path, rows)
    return path


def write_conflict_candidates(kb: Path) -> Path:
    """Candidates as ``tuner golden conflicts`` writes them (conflicts.jsonl rows, no review state)."""
    rows = [
        {"doc_id": "aurora-x200-2023", "text": "The Aurora X200 laptop costs $1,199 and ships with 8 GB of memory.",
         "conflicts_with": "aurora-x200", "kind": "stale_version", "wrong_values": ["$1,199", "8 GB"]},
        {"doc_id": "zh-shipping-old", "text": "顺丰次日达需要另付１０元运费。", "conflicts_with": "zh-shipping",
         "kind": "stale_version", "wrong_values": ["１０元"]},
    ]
    path = kb / "conflicts.candidates.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path
