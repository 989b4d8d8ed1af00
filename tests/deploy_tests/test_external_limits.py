"""What ``tuner eval --external`` reads of a service that misbehaves, against real local HTTP servers: a reply with far
more records than the top_k asked for (the top_k by score kept, the rest counted as dropped), a reply over the size
cap (read no further), and a service that stalls or trickles (all attempts end by the request's deadline)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tuner.testing import canned_service
from tuner.cli import main
from tuner.errors import BackendError
from tuner.external import ExternalClient, ExternalConfig

pytest.importorskip("httpx")


def _flood(count: int) -> bytes:
    """``count`` records, scores spread so that the best five are records 997, 1994, 2991, ... (score 996/997 ...)."""
    return json.dumps({"records": [{"content": f"record {n}", "score": (n % 997) / 997, "title": f"t{n}",
                                    "metadata": {"doc_id": f"doc-{n}"}} for n in range(count)]}).encode()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNER_EXTERNAL_API_KEY", "test-external-key")


def test_a_reply_with_more_records_than_top_k_keeps_the_best_by_score_and_says_what_was_dropped(
        tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with canned_service(_flood(3_000)) as url:
        client = ExternalClient(ExternalConfig(url=url, knowledge_id="kb"), None)
        kept = client.records("laptop", 5, 0.0)
        assert [r.content for r in kept] == ["record 996", "record 1993", "record 2990", "record 995", "record 1992"]
        assert (client.dropped.replies, client.dropped.records) == (1, 2_995)
        monkeypatch.setenv("TUNER_CACHE", str(tmp_path / "cache"))
        assert main(["eval", str(tiny_dataset_dir), "--external", url, "--knowledge-id", "kb", "--top-k", "5"]) == 0
    out = capsys.readouterr().out
    assert "records beyond top_k dropped from" in out and "(the service sent more than asked; the top_k by score kept)" in out


def test_a_reply_over_the_size_cap_is_read_no_further_and_stops_in_one_line(
        tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TUNER_CACHE", str(tmp_path / "cache"))
    with canned_service(_flood(20_000)) as url:  # ~1.9 MB
        started = time.monotonic()
        code = main(["eval", str(tiny_dataset_dir), "--external", url, "--knowledge-id", "kb", "--top-k", "5",
                     "--max-reply-mb", "0.5"])
        assert time.monotonic() - started < 30
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.endswith("/retrieval (knowledge kb): reply over 0.5 MB for top_k 5, read no further (max_reply_mb)")


@pytest.mark.parametrize("trickle", [0.0, 0.2])
def test_a_stalled_or_trickling_service_ends_by_the_deadline(trickle: float) -> None:
    with canned_service(None if trickle == 0 else _flood(10), trickle) as url:
        config = ExternalConfig(url=url, knowledge_id="kb", timeout=1.0, deadline=2.5, max_retries=10, backoff_base=0.05)
        client = ExternalClient(config, None)
        started = time.monotonic()
        with pytest.raises(BackendError, match=r"no reply in time \(timeout 1 s an attempt, deadline 2.5 s\) after \d attempts"):
            client.records("laptop", 5, 0.0)
        assert time.monotonic() - started < 3.5


def test_deadline_and_reply_cap_flags_are_checked(tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for flags, message in ((["--deadline", "0"], "--deadline Input should be greater than 0"),
                           (["--max-reply-mb", "-1"], "--max-reply-mb Input should be greater than 0")):
        assert main(["eval", str(tiny_dataset_dir), "--external", "http://127.0.0.1:9", "--knowledge-id", "kb", *flags]) == 2
        assert capsys.readouterr().err.strip().endswith(message)


def test_a_service_that_stalls_every_request_costs_one_deadline_not_one_per_round() -> None:
    with canned_service(None) as url:
        config = ExternalConfig(url=url, knowledge_id="kb", timeout=2.0, deadline=2.0, max_retries=0, concurrency=4)
        started = time.monotonic()
        with pytest.raises(BackendError, match="no reply in time"):
            ExternalClient(config, None).many([f"question {n}" for n in range(16)], 5, 0.0)
        assert time.monotonic() - started < 3.5  # before: the round started as the first one failed ran too, ~4 s
