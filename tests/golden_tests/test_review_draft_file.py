"""``tuner golden review`` over a hand-edited draft file (issue 30 §4): a row the app could not show or save is one
line naming file:line, at start and when the file changes under the running app, never a bare 500 or a silent reset;
a bad body is a 422; temporaries of a killed write are removed at start."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.golden_tests.drafts import review_client
from tuner.errors import UserError
from tuner.golden import ReviewStore, read_draft


def _edit_second_row(draft: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    lines = draft.read_text("utf-8").splitlines()
    row = json.loads(lines[1])
    change(row)
    lines[1] = json.dumps(row, ensure_ascii=False)
    draft.write_text("\n".join(lines) + "\n", "utf-8")


EDITS: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "pool is a string": (lambda row: row.update(pool="chunk one, chunk two"), "pool: Input should be a valid list (got 'chunk one, chunk two')"),
    "chunk without id": (lambda row: row["pool"][1].pop("chunk_id"), "pool.2.chunk_id: missing"),
    "status Accepted": (lambda row: row["review"].update(status="Accepted"),
                        "review.status: Input should be 'pending', 'accepted', 'rejected', 'skipped' or 'no_answer' (got 'Accepted')"),
    "version as text": (lambda row: row["review"].update(version="7"), "review.version: Input should be a valid integer (got '7')"),
    "chunk ids not a list": (lambda row: row.update(relevant_chunk_ids=5), "relevant_chunk_ids: Input should be a valid list (got 5)"),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_a_bad_row_is_one_line_at_start(draft: Path, name: str) -> None:
    change, message = EDITS[name]
    _edit_second_row(draft, change)
    with pytest.raises(UserError) as error:
        ReviewStore(draft)
    assert str(error.value) == f"{draft}:2: {message}"


def test_a_bad_line_written_while_the_app_runs_is_named_not_a_bare_500(draft: Path) -> None:
    client = review_client(ReviewStore(draft), "en")
    assert client.get("/").status_code == 200
    original = draft.read_text("utf-8")
    draft.write_text(original + '{"id": "log-0004", "question": "q", "pool": [}\n', "utf-8")
    page = client.get("/")
    assert page.status_code == 500 and f"{draft}:4: malformed JSON" in page.text
    saved = client.post("/api/cases/log-0001", json={"version": 0, "action": "accept"})
    assert saved.status_code == 500 and saved.json()["error"].startswith(f"{draft}:4: malformed JSON")
    draft.write_text(original, "utf-8")
    _edit_second_row(draft, EDITS["status Accepted"][0])
    assert client.get("/api/progress").json()["error"] == f"{draft}:2: {EDITS['status Accepted'][1]}"


@pytest.mark.parametrize("body,message", [
    ({"relevant_chunk_ids": 5}, "relevant_chunk_ids: Input should be a valid array (got 5)"),
    ({"relevant_chunk_ids": [5]}, "relevant_chunk_ids.1: Input should be a valid string (got 5)"),
    ({"ground_truth": ["x"]}, "ground_truth: Input should be a valid string (got ['x'])"),
    ({"keypoints": "x"}, "keypoints: Input should be a valid array (got 'x')"),
    ({"verison": 1}, "verison: unknown key"),
    ({"action": "delete"}, "action: Input should be 'accept', 'reject', 'skip', 'reopen' or 'no_answer' (got 'delete')"),
])
def test_a_bad_field_in_a_save_is_a_422(draft: Path, body: dict[str, Any], message: str) -> None:
    before = draft.read_bytes()
    reply = review_client(ReviewStore(draft), "en").post("/api/cases/log-0001", json={"version": 0, **body})
    assert reply.status_code == 422 and reply.json()["error"] == message and draft.read_bytes() == before


def test_a_killed_write_s_temporary_is_removed_at_start(draft: Path) -> None:
    stale = draft.parent / f".{draft.name}.k2j3h4.tmp"
    stale.write_text(draft.read_text("utf-8")[:100], "utf-8")
    other = draft.parent / ".golden.jsonl.abc.tmp"  # another file's temporary is not this store's to remove
    other.write_text("x", "utf-8")
    ReviewStore(draft)
    assert not stale.exists() and other.exists()


def test_rows_without_a_review_state_start_pending(draft: Path) -> None:
    _edit_second_row(draft, lambda row: row.pop("review"))
    assert read_draft(draft)[1]["review"] == {"status": "pending", "version": 0, "updated": None, "keypoints_reviewed": False}
