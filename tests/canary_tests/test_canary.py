"""tuner canary: below rate per window from a production log, its trend, and bad-line reporting."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tuner.canary import Retrieval, canary_report, parse_window, read_log, split_windows, trend_slope
from tuner.cli import main
from tuner.errors import UserError

START = datetime(2025, 3, 1, tzinfo=timezone.utc)


def _write_rising_log(path: Path) -> None:
    """Four days of 10 retrievals of 5 chunks, with 1, 1, 2, 3 chunks per retrieval scoring below 0.5:
    below rates 20%, 20%, 40%, 60%. Lines are written newest first, with a blank line, to test sorting."""
    lines = []
    for day, below in enumerate((1, 1, 2, 3)):
        for i in range(10):
            stamp = (START + timedelta(days=day, hours=i)).isoformat().replace("+00:00", "Z")
            scores = [0.2] * below + [0.8] * (5 - below)
            chunks = [{"id": f"d{k}#0", "score": s} for k, s in enumerate(scores)]
            lines.append(json.dumps({"timestamp": stamp, "question": f"q{i}", "chunks": chunks}))
    lines.insert(5, "")
    path.write_text("\n".join(reversed(lines)) + "\n", "utf-8")


def test_below_rate_per_day_and_rising_trend(tmp_path: Path) -> None:
    log = tmp_path / "retrievals.jsonl"
    _write_rising_log(log)
    report = canary_report(read_log(log), threshold=0.5, window="1d", margin=0.1)
    assert [(w.retrievals, w.chunks, w.below) for w in report.windows] == [(10, 50, 10), (10, 50, 10), (10, 50, 20), (10, 50, 30)]
    assert [w.below_rate for w in report.windows] == [0.2, 0.2, 0.4, 0.6]
    assert report.windows[0].start == START and report.windows[0].end == START + timedelta(days=1)
    # slope of (0.2, 0.2, 0.4, 0.6) over (0, 1, 2, 3): Σ(i−1.5)(r−0.35) / Σ(i−1.5)² = 0.7 / 5 = 0.14
    assert report.slope == pytest.approx(0.14)
    assert report.rise == pytest.approx(0.4) and report.alarm
    assert not canary_report(read_log(log), threshold=0.5, window="1d", margin=0.5).alarm


def test_windows_by_count_and_empty_calendar_windows() -> None:
    records = [Retrieval(START + timedelta(hours=h), (0.1, 0.9)) for h in (0, 1, 50)]
    by_count = split_windows(records, 2, threshold=0.5)
    assert [(w.retrievals, w.below_rate) for w in by_count] == [(2, 0.5), (1, 0.5)]
    daily = split_windows(records, timedelta(days=1), threshold=0.5)
    assert [w.retrievals for w in daily] == [2, 0, 1]
    assert daily[1].below_rate is None
    assert trend_slope([None, 0.3]) is None


def test_window_specs() -> None:
    assert parse_window("1d") == timedelta(days=1) and parse_window("6h") == timedelta(hours=6)
    assert parse_window("30m") == timedelta(minutes=30) and parse_window("200") == 200
    for bad in ("0", "1y", "d", "-3", "0h"):
        with pytest.raises(UserError, match="--window"):
            parse_window(bad)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{oops", "2: not a JSON line"),
        ("[]", "2: expected a JSON object"),
        ('{"timestamp": "yesterday", "question": "q", "chunks": []}', "2: timestamp: Invalid isoformat string"),
        ('{"timestamp": "2025-03-01T00:00:00", "chunks": []}', "2: question: expected a string"),
        ('{"timestamp": "2025-03-01T00:00:00", "question": "q", "chunks": [{"id": "a", "score": "high"}]}',
         "2: chunks[0].score: expected a finite number"),
        ('{"timestamp": "2025-03-01T00:00:00", "question": "q", "chunks": [{"score": 0.3}]}',
         "2: chunks[0]: expected an object with a string 'id'"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str) -> None:
    log = tmp_path / "log.jsonl"
    good = '{"timestamp": "2025-03-01T00:00:00+01:00", "question": "q", "chunks": [{"id": "a", "score": 0.3}]}'
    log.write_text(good + "\n" + line + "\n", "utf-8")
    assert main(["canary", str(log), "--threshold", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tuner: error: {log}:{message}") and "\n" not in err


def test_cli_exit_code_is_the_alarm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "retrievals.jsonl"
    _write_rising_log(log)
    assert main(["canary", str(log), "--threshold", "0.5", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["alarm"] is True and [w["below_rate"] for w in data["windows"]] == [0.2, 0.2, 0.4, 0.6]
    assert main(["canary", str(log), "--threshold", "0.5", "--window", "20", "--margin", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "trend: +30.00% per window; last − first window: +30.0% (margin 50.0%): ok" in out
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", "utf-8")
    assert main(["canary", str(empty), "--threshold", "0.5"]) == 2
