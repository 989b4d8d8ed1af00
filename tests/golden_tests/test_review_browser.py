"""The review app in a real browser: Debian's chromium driven by Selenium through chromium-driver labels a case, edits a
keypoint, reloads and resumes where it stopped; a second tab's stale write is refused on the page."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.golden_tests.drafts import copy_kb, write_case_draft
from tests.net import free_port
from tuner.golden import ReviewStore, read_draft

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                       reason="needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"),
]


@pytest.fixture
def served(kb_dir: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    import uvicorn

    from tuner.golden.review_app import build_review_app

    kb = copy_kb(kb_dir, tmp_path / "kb")
    (tmp_path / "drafts").mkdir()
    draft = write_case_draft(kb, tmp_path / "drafts")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(build_review_app(ReviewStore(draft), "en"), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the review app did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", draft
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-background-networking", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                     f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,1600"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def _wait(condition: Any, what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _rows(draft: Path) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in read_draft(draft)}


def test_label_edit_reload_and_resume(served: tuple[str, Path], browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, draft = served
    browser.get(url + "/")
    question = browser.find_element(By.ID, "question")
    assert question.text == "How much does the Aurora X200 laptop cost?"
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("1")  # check the first chunk of the pool
    message = browser.find_element(By.ID, "message")
    _wait(lambda: message.text == "Saved (v1)", "the checkbox to be saved")
    assert _rows(draft)["log-0001"]["relevant_doc_ids"] == ["aurora-x200"]
    body.send_keys("a")  # accept: saved, then the next case
    _wait(lambda: browser.current_url.endswith("/case/log-0002?filter=all"), "the next case")
    assert browser.find_element(By.ID, "question").text == "顺丰次日达要加多少运费？"
    assert _rows(draft)["log-0001"]["review"]["status"] == "accepted"

    keypoints = browser.find_element(By.ID, "keypoints")
    keypoints.click()
    keypoints.send_keys("15元 | 十五元")
    keypoints.send_keys(Keys.ESCAPE)  # leaves the field, which saves it
    _wait(lambda: browser.find_element(By.ID, "message").text.startswith("Saved"), "the keypoint to be saved")
    _wait(lambda: _rows(draft)["log-0002"]["keypoints"] == [["15元", "十五元"]], "the keypoint in the draft file")
    assert _rows(draft)["log-0002"]["review"]["keypoints_reviewed"] is True
    assert "found in chunks 1" in browser.find_element(By.ID, "kpfound").text
    assert browser.find_elements(By.CSS_SELECTOR, "#pool mark.k")[0].text == "１５元"

    browser.refresh()
    assert browser.find_element(By.ID, "keypoints").get_attribute("value") == "15元 | 十五元"
    answer = browser.find_element(By.ID, "answer")
    answer.send_keys("顺丰次日达另付15元。")
    browser.get(url + "/")  # left while typing: the edit still reaches the server
    _wait(lambda: _rows(draft)["log-0002"]["ground_truth"] == "顺丰次日达另付15元。", "the last edit sent as the page unloads")
    # the first page resumes at the first case not yet reviewed
    assert browser.find_element(By.ID, "question").text == "顺丰次日达要加多少运费？"
    assert "reviewed 1/3" in browser.find_element(By.ID, "progress").text

    # a second tab skips the case; the first tab's next write names an older version and is refused
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get(url + "/case/log-0002")
    browser.find_element(By.ID, "skip").click()
    _wait(lambda: browser.current_url.endswith("/case/log-0003?filter=all"), "the second tab to move on")
    browser.switch_to.window(first)
    browser.find_elements(By.CSS_SELECTOR, "input.pick")[0].click()
    stale = _wait(lambda: browser.find_element(By.ID, "message").text, "the refusal")
    assert stale == "Not saved: this case was changed in another tab or window. Reload the page to see the current version."
    row = _rows(draft)["log-0002"]
    assert (row["review"]["status"], row["relevant_chunk_ids"], row["keypoints"]) == ("skipped", [], [["15元", "十五元"]])
    lines = [json.loads(line) for line in (draft.parent / "review.log.jsonl").read_text("utf-8").splitlines()]
    log = [e for e in lines if "id" in e]  # saves; the other lines are markers naming the draft file
    assert [(e["id"], e["action"]) for e in log] == [
        ("log-0001", None), ("log-0001", "accept"), ("log-0002", None), ("log-0002", None), ("log-0002", "skip")]
    assert sorted(log[3]["changes"]) == ["ground_truth"]


def test_search_box_adds_a_chunk_beyond_the_pool_and_no_answer_moves_on(served: tuple[str, Path], browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, draft = served
    browser.get(url + "/case/log-0003")
    assert browser.find_element(By.ID, "search-note").text == ("Search: BM25 only (all-MiniLM-L6-v2 does not cover this "
                                                                "knowledge base's language, zh)")
    browser.find_element(By.TAG_NAME, "body").send_keys("/")  # the key focuses the search box
    box = browser.switch_to.active_element
    assert box.get_attribute("id") == "search"
    box.send_keys("礼品卡 兑换现金", Keys.ENTER)
    hits = _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#search-results input.hit"), "the search results")
    assert hits[0].get_attribute("value") == "zh-gift-card#0-27"
    hits[0].click()
    _wait(lambda: browser.find_element(By.ID, "message").text == "Saved (v1)", "the found chunk to be saved")
    row = _rows(draft)["log-0003"]
    assert (row["pool"][-1]["found_by"], row["relevant_doc_ids"]) == ("search", ["zh-gift-card"])
    assert "found by search" in browser.find_element(By.ID, "pool").text
    hits[0].click()  # unchecked again: the label goes, the chunk stays in the pool
    _wait(lambda: _rows(draft)["log-0003"]["relevant_chunk_ids"] == [], "the label to be removed")

    browser.get(url + "/case/log-0002")
    browser.find_element(By.ID, "no_answer").click()
    _wait(lambda: browser.current_url.endswith("/case/log-0003?filter=all"), "the next case")
    assert _rows(draft)["log-0002"]["review"]["status"] == "no_answer"


def test_the_chinese_page_layout_badges_search_hits_and_export_result(served: tuple[str, Path], browser: Any) -> None:
    """Issue 38 §2, as a new user saw it: the search box under the pool, search hits with their rank and whether the pool
    already holds them, a no-answer badge unlike a pending one, and the export's result beside its button, in Chinese."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, draft = served
    browser.get(url + "/case/log-0002")
    browser.find_element(By.ID, "lang").click()  # the interface in Chinese (a cookie)
    _wait(lambda: browser.find_element(By.ID, "export").text == "导出已通过", "the Chinese interface")
    top = {name: browser.find_element(By.ID, name).rect["y"] for name in ("pool", "search-box", "answer")}
    assert top["pool"] < top["search-box"] < top["answer"]
    pending = browser.find_element(By.ID, "status").value_of_css_property("background-color")

    browser.find_element(By.ID, "search").send_keys("顺丰 运费", Keys.ENTER)
    hits = _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#search-results label.chunk"), "the search results")
    assert hits[0].find_element(By.CSS_SELECTOR, ".n").text == "#1"
    assert "已在候选池中，第 1 条" in hits[0].text  # zh-shipping is the pool's first candidate
    _screenshot(browser, "review-zh-search.png")

    browser.find_element(By.ID, "no_answer").click()
    _wait(lambda: browser.current_url.endswith("/case/log-0003?filter=all"), "the next case")
    browser.get(url + "/case/log-0002")
    status = browser.find_element(By.ID, "status")
    assert status.text == "知识库中无答案" or status.get_attribute("data-status") == "no_answer"
    assert status.value_of_css_property("background-color") != pending

    browser.get(url + "/case/log-0001")
    browser.find_elements(By.CSS_SELECTOR, "input.pick")[0].click()
    _wait(lambda: browser.find_element(By.ID, "message").text.startswith("已保存"), "the checkbox to be saved")
    browser.find_element(By.ID, "accept").click()
    _wait(lambda: browser.current_url.endswith("/case/log-0002?filter=all"), "the next case")
    button = browser.find_element(By.ID, "export")
    button.click()
    result = _wait(lambda: browser.find_element(By.ID, "export-result").text and browser.find_element(By.ID, "export-result"), "the export")
    assert result.text.startswith("已导出 1 条到 ") and "标注来自" in result.text and "chunks" not in result.text, result.text
    assert abs(result.rect["y"] - (button.rect["y"] + button.rect["height"])) < 80  # beside the button, not a screen below
    _screenshot(browser, "review-zh-export.png")


def _screenshot(browser: Any, name: str) -> None:
    """For a person to look at: ``TUNER_SCREENSHOTS=/tmp/shots pytest -m browser`` saves the pages there."""
    shots = os.environ.get("TUNER_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(shots) / name))
