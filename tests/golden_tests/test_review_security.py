"""``tuner golden review`` against a hostile page in the reviewer's own browser: cross-site writes (a form posting
text/plain, a foreign Origin, no token), DNS rebinding (a foreign Host) and case data that tries to leave the page's
JSON script element."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.golden_tests.drafts import TOKEN, review_client
from tuner.golden import ReviewStore, read_draft
from tuner.golden.review_app import build_review_app
from tuner.http_guard import TOKEN_HEADER

FORGED = json.dumps({"version": 0, "action": "accept", "ground_truth": "pwned"})


@pytest.mark.parametrize("headers,status", [
    # the curl: a form on another site posts text/plain, which needs no preflight
    ({"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403),
    ({"Origin": "null", "Content-Type": "application/json", TOKEN_HEADER: TOKEN}, 403),
    ({"Content-Type": "text/plain", TOKEN_HEADER: TOKEN}, 415),
    ({"Content-Type": "application/x-www-form-urlencoded", TOKEN_HEADER: TOKEN}, 415),
    ({"Content-Type": "application/json"}, 403),
    ({"Content-Type": "application/json", TOKEN_HEADER: "guessed"}, 403),
    ({"Host": "evil.example:8765", "Content-Type": "application/json", TOKEN_HEADER: TOKEN}, 421),
])
def test_a_write_without_json_origin_host_or_token_is_refused_and_changes_nothing(
        draft: Path, headers: dict[str, str], status: int) -> None:
    client = TestClient(build_review_app(ReviewStore(draft), "en", TOKEN), base_url="http://127.0.0.1:8765")
    before = draft.read_bytes()
    refused = client.post("/api/cases/log-0001", content=FORGED, headers=headers)
    assert refused.status_code == status and refused.json()["error"]
    exported = client.post("/api/export", content="{}", headers=headers)
    assert exported.status_code == status
    assert draft.read_bytes() == before and not (draft.parent.parent / "kb" / "golden.jsonl").exists()


def test_a_foreign_host_cannot_read_the_pages_either(draft: Path) -> None:
    # DNS rebinding: evil.example resolves to 127.0.0.1, so the hostile page is same-origin with what it fetches
    client = review_client(ReviewStore(draft), "en")
    for path in ("/", "/case/log-0001", "/api/progress"):
        assert client.get(path, headers={"Host": "evil.example:8765"}).status_code == 421
        assert client.get(path, headers={"Host": "localhost:8765"}).status_code == 200


def test_the_page_carries_the_token_and_its_own_origin_may_write(draft: Path) -> None:
    client = TestClient(build_review_app(ReviewStore(draft), "en"), base_url="http://127.0.0.1:8765")
    page = client.get("/").text
    state = json.loads(re.search(r'<script type="application/json" id="state">(.*?)</script>', page, re.DOTALL)[1])  # type: ignore[index]
    assert len(state["token"]) >= 40 and state["token_header"] == TOKEN_HEADER
    saved = client.post("/api/cases/log-0001", content=FORGED, headers={
        "Origin": "http://127.0.0.1:8765", "Content-Type": "application/json; charset=utf-8", TOKEN_HEADER: state["token"]})
    assert saved.status_code == 200, saved.text
    assert {r["id"]: r for r in read_draft(draft)}["log-0001"]["review"]["status"] == "accepted"
    # each app has its own token: another run's page does not open this one
    other = TestClient(build_review_app(ReviewStore(draft), "en"), base_url="http://127.0.0.1:8765").get("/").text
    assert state["token"] not in other


def test_case_data_cannot_leave_the_json_script_element(draft: Path) -> None:
    hostile = "x</script><!--<script>alert(1)</script>"
    draft.write_text(draft.read_text("utf-8").replace('"log-0001"', json.dumps(hostile)), "utf-8")
    page = review_client(ReviewStore(draft), "en").get(f"/case/{hostile}").text
    start = page.index('<script type="application/json" id="state">') + len('<script type="application/json" id="state">')
    payload = page[start:page.index("</script>", start)]
    assert "<" not in payload and json.loads(payload)["id"] == hostile


def test_a_body_nested_too_deep_is_a_400_like_any_malformed_one(draft: Path) -> None:
    client = review_client(ReviewStore(draft), "en")
    before = draft.read_bytes()
    for body, depth in ((b'{"a":' * 50_000 + b"1" + b"}" * 50_000, 50_000),
                        (b'{"version": 0, "keypoints": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", 50_001)):
        reply = client.post("/api/cases/log-0001", content=body, headers={"Content-Type": "application/json"})
        assert reply.status_code == 400
        assert reply.json() == {"error": f"body: JSON nested {depth} levels deep, at most 64 allowed"}
    assert draft.read_bytes() == before
