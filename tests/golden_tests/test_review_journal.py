"""The review app's saves (issues 38 §1, 39 §1): appended to the review log and replayed, so that every acknowledged
save survives ``kill -9`` although the draft file is rewritten only now and then; line separators inside a saved
answer; two rows with one id; the page's assets shipped as package files."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest

from tests.golden_tests.drafts import review_client
from tests.net import free_port, wait_until_ready
from tuner.errors import UserError
from tuner.golden import DraftCase, ReviewStore, load_draft, read_draft
from tuner.golden import _review
from tuner.golden.review_app import asset

ROOT = Path(__file__).resolve().parents[2]


def test_a_saved_answer_holding_line_separators_reads_back_after_reload_and_restart(draft: Path) -> None:
    """Text pasted from a PDF holds U+2028/U+2029/U+0085: inside a JSON string they are text, not line ends."""
    answer = "Warranty\u2028is 24 months.\u2029See\u0085the card."
    client = review_client(ReviewStore(draft), "en")
    assert client.post("/api/cases/log-0003", json={"version": 0, "ground_truth": answer}).status_code == 200
    assert client.get("/").status_code == 200 and client.get("/api/progress").status_code == 200
    assert client.post("/api/cases/log-0003", json={"version": 1, "action": "skip"}).status_code == 200
    assert {row["id"]: row for row in read_draft(draft)}["log-0003"]["ground_truth"] == answer
    restarted = ReviewStore(draft)
    restarted.flush()  # the draft file itself rewritten with the answer: still one row per line
    assert len(draft.read_text("utf-8").split("\n")) == 4
    again = review_client(ReviewStore(draft), "en")
    page = again.get("/case/log-0003")
    assert page.status_code == 200 and "Warranty\u2028is 24 months." in page.text
    assert {row["id"]: row for row in read_draft(draft)}["log-0003"]["review"]["version"] == 2


def test_two_rows_with_one_id_are_refused_at_start_naming_both_lines(draft: Path) -> None:
    lines = draft.read_text("utf-8").splitlines()
    draft.write_text("\n".join([*lines, lines[1]]) + "\n", "utf-8")  # two from-log drafts concatenated
    with pytest.raises(UserError) as error:
        ReviewStore(draft)
    assert str(error.value) == f"{draft}:4: id 'log-0002' is also on line 2: every row needs its own (two drafts concatenated?)"


def test_saves_are_appended_and_the_draft_rewritten_every_so_many(draft: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_review, "COMPACT_EVERY", 3)
    original = draft.read_bytes()
    store = ReviewStore(draft)
    store.update("log-0001", 0, None, ground_truth="one")
    store.update("log-0001", 1, None, ground_truth="two")
    assert draft.read_bytes() == original  # on disk in the log only ...
    assert load_draft(draft)[0].ground_truth == "two"  # ... and read back from it
    store.update("log-0001", 2, "accept")
    assert draft.read_bytes() != original and json.loads(draft.read_text("utf-8").split("\n")[0])["review"]["version"] == 3
    log = [json.loads(line) for line in store.log_path.read_text("utf-8").splitlines()]
    assert ["draft" in e for e in log] == [True, False, False, False, True]
    # a new draft written over the old one (from-log --force) is not touched by the old log's saves
    rows = read_draft(draft)
    rows[0]["review"] = {"status": "pending", "version": 0, "updated": None, "keypoints_reviewed": False}
    draft.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    assert load_draft(draft)[0].review.version == 0
    fresh = ReviewStore(draft)
    assert fresh.update("log-0001", 0, "reject").review.version == 1
    assert load_draft(draft)[0].review.status == "rejected"


def test_a_torn_last_log_line_is_ignored_and_cut_before_the_next_save(draft: Path) -> None:
    store = ReviewStore(draft)
    store.update("log-0002", 0, "skip")
    with store.log_path.open("a", encoding="utf-8") as log:
        log.write('{"time": "2026-01-01T00:00:00+00:00", "id": "log-0002", "version": 2, "cha')  # killed midway
    assert load_draft(draft)[1].review.status == "skipped"
    ReviewStore(draft).update("log-0002", 1, "accept")
    assert all(json.loads(line) for line in store.log_path.read_text("utf-8").splitlines())
    assert load_draft(draft)[1].review.status == "accepted"


def test_every_acknowledged_save_survives_kill_9(draft: Path) -> None:
    """The real command as a process: saves acknowledged over HTTP, then SIGKILL (no shutdown, no rewrite)."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([sys.executable, "-m", "tuner", "golden", "review", str(draft), "--port", str(port), "--lang", "en"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(server, url, 60, "/api/progress")
        page = httpx.get(f"{url}/").text
        state = json.loads(re.search(r'<script type="application/json" id="state">(.*?)</script>', page, re.S)[1])  # type: ignore[index]
        headers = {state["token_header"]: state["token"]}
        answers = {"log-0001": "It costs $1,299.\u2028Taxes extra.", "log-0002": "15元", "log-0003": "24 months"}
        for number, (case_id, answer) in enumerate(answers.items()):
            assert httpx.post(f"{url}/api/cases/{case_id}", json={"version": 0, "ground_truth": answer}, headers=headers).status_code == 200
            action = ("accept", "no_answer", "skip")[number]
            assert httpx.post(f"{url}/api/cases/{case_id}", json={"version": 1, "action": action}, headers=headers).status_code == 200
    finally:
        server.send_signal(signal.SIGKILL)
        server.communicate(timeout=30)
    rows = {row["id"]: row for row in read_draft(draft)}
    assert {case_id: row["ground_truth"] for case_id, row in rows.items()} == answers
    assert [rows[c]["review"]["status"] for c in answers] == ["accepted", "no_answer", "skipped"]
    assert all(row["review"]["version"] == 2 for row in rows.values())
    assert ReviewStore(draft).progress()["reviewed"] == 2


def test_the_page_assets_are_package_files_that_ship() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"]["tuner.golden"]
    static = ROOT / "tuner" / "golden" / "static"
    shipped = {path.name for pattern in declared for path in static.parent.glob(pattern)}
    assert shipped == {"review.css", "review.js"} == {path.name for path in static.iterdir()}
    assert "function save(body)" in asset("review.js") and ".status[data-status=no_answer]" in asset("review.css")


def test_rows_are_typed(draft: Path) -> None:
    rows = ReviewStore(draft).rows()
    assert all(isinstance(row, DraftCase) for row in rows) and rows[0].pool[0].ranks == {"bm25": 1, "dense": 1, "hybrid": 1}
