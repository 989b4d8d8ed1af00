"""Saves per second of the review app's store (issue 39 §1): one reviewer's edits on a full-size draft.

The draft: the Chinese demo's 180 golden questions as draft cases, each with a pool of 20 corpus documents (the
median pool of ``tuner golden from-log`` at depth 10 is 17–20 chunks), about 2 MB of JSONL. The load: ``--saves``
edits through :meth:`tuner.golden.ReviewStore.update`, as the page sends them (a reference answer typed in pauses, a
checkbox, an accept), each naming the version it read; cases in a seeded order. Reported: saves per second (wall and
CPU), and bytes written per save (all writes of the process, Linux ``/proc/self/io``), of which the review log. ``--http`` sends the same saves through the app (FastAPI's
test client: routing, token check, JSON) instead.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/review_saves.py [--saves 300] [--http]
(to measure another checkout, put it first on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from tuner.dataset import generate_demo
from tuner.golden import ReviewStore, draft_case, write_draft


def _draft(folder: Path) -> Path:
    kb = generate_demo(folder / "kb", 0, language="zh")
    docs = list(kb.corpus)
    rows = []
    for number, case in enumerate(kb.golden, start=1):
        start = (number * 7) % len(docs)
        pool_docs = [d for d in docs if d.doc_id in case.relevant_doc_ids] + docs[start:start + 20]
        pool = [{"doc_id": d.doc_id, "chunk_id": f"{d.doc_id}#0-{len(d.text)}", "title": d.title, "text": d.text,
                 "ranks": {"bm25": rank, "hybrid": None}} for rank, d in enumerate(pool_docs[:20], start=1)]
        rows.append(draft_case(f"log-{number:04d}", case.question, pool, kb.path, source="log", stratum="head", count=1,
                               relevant_doc_ids=case.relevant_doc_ids))
    path = folder / "drafts" / "review.jsonl"
    write_draft(path, rows)
    return path


def _written() -> int:
    """Bytes this process has written so far (``wchar`` of /proc/self/io: every write call, to any file)."""
    return int(next(line.split()[1] for line in Path("/proc/self/io").read_text().splitlines() if line.startswith("wchar:")))


def _edits(row: dict[str, Any], step: int) -> dict[str, Any]:
    kind = step % 3
    if kind == 0:
        return {"ground_truth": f"答案 {step}：保修期为24个月。"}
    if kind == 1:
        return {"relevant_chunk_ids": [row["pool"][step % len(row["pool"])]["chunk_id"]]}
    return {"action": "accept" if step % 2 else "skip"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--http", action="store_true", help="through the app (FastAPI test client)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
        draft = _draft(Path(tmp))
        store = ReviewStore(draft)
        client = None
        if args.http:
            from fastapi.testclient import TestClient

            from tuner.golden.review_app import build_review_app
            from tuner.http_guard import TOKEN_HEADER
            client = TestClient(build_review_app(store, "zh", "bench"), base_url="http://127.0.0.1:8765", headers={TOKEN_HEADER: "bench"})
        rows = {row["id"]: row for row in (dict(r) if isinstance(r, dict) else r.record() for r in store.rows())}
        versions = {case_id: 0 for case_id in rows}
        order = list(rows)
        random.Random(0).shuffle(order)
        log = draft.with_name("review.log.jsonl")
        log_before = log.stat().st_size if log.exists() else 0
        written, wall, cpu = _written(), time.perf_counter(), time.process_time()
        for step in range(args.saves):
            case_id = order[step % len(order)]
            edit = _edits(rows[case_id], step)
            if client is not None:
                reply = client.post(f"/api/cases/{case_id}", json={"version": versions[case_id], **edit})
                assert reply.status_code == 200, reply.text
                saved = reply.json()["row"]
            else:
                action = edit.pop("action", None)
                saved = store.update(case_id, versions[case_id], action, **edit)
                saved = saved if isinstance(saved, dict) else saved.record()
            versions[case_id] = saved["review"]["version"]
        wall, cpu, written = time.perf_counter() - wall, time.process_time() - cpu, _written() - written
        log_bytes = (log.stat().st_size if log.exists() else 0) - log_before
        print(f"{'http' if args.http else 'store'}: {args.saves} saves on a {draft.stat().st_size / 1e6:.2f} MB draft "
              f"({len(rows)} cases): {args.saves / wall:.0f} saves/s wall ({wall:.2f} s), {args.saves / cpu:.0f} saves/s CPU "
              f"({cpu:.2f} s); written per save {written / args.saves / 1e3:.1f} kB, of which the log {log_bytes / args.saves / 1e3:.2f} kB; "
              f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
