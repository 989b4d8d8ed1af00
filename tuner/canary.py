"""Serve (export → **serve**): the online canary: the share of retrieved chunks scoring below the relevance threshold,
per time window.

A rising below rate in production retrievals tends to show weeks before business metrics fall. Input is a
JSONL log, one retrieval per line (see docs/gate.md)::

    {"timestamp": "2025-03-01T09:30:00Z", "question": "...", "chunks": [{"id": "doc-1#0", "score": 0.82}, ...]}

``timestamp`` is ISO-8601 (without an offset it is taken as UTC); ``score`` is the retriever's score
on the same scale as the threshold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tuner.errors import UserError
from tuner.io import MalformedLine, jsonl_lines, parse_jsonl_line

_DURATION = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Retrieval:
    timestamp: datetime
    scores: tuple[float, ...]


def _parse_timestamp(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError("expected an ISO-8601 string")
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _parse_record(record: Any) -> Retrieval:
    if not isinstance(record, dict):
        raise ValueError("expected a JSON object")
    try:
        timestamp = _parse_timestamp(record.get("timestamp"))
    except ValueError as exc:
        raise ValueError(f"timestamp: {exc}") from None
    if not isinstance(record.get("question"), str):
        raise ValueError("question: expected a string")
    chunks = record.get("chunks")
    if not isinstance(chunks, list):
        raise ValueError("chunks: expected a list")
    scores = []
    for index, chunk in enumerate(chunks):
        if not isinstance(chunk, dict) or not isinstance(chunk.get("id"), str):
            raise ValueError(f"chunks[{index}]: expected an object with a string 'id'")
        score = chunk.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise ValueError(f"chunks[{index}].score: expected a finite number")
        scores.append(float(score))
    return Retrieval(timestamp, tuple(scores))


def read_log(path: str | Path) -> list[Retrieval]:
    """Every retrieval of a JSONL log in timestamp order; the first bad line is an error naming ``file:line``."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    records = []
    for number, line in jsonl_lines(raw):
        try:
            records.append(_parse_record(parse_jsonl_line(line, first=number == 1)))
        except MalformedLine as exc:
            raise UserError(f"{path}:{number}: not a JSON line ({exc})") from None
        except ValueError as exc:
            raise UserError(f"{path}:{number}: {exc}") from None
    if not records:
        raise UserError(f"{path}: no retrievals in the log")
    return sorted(records, key=lambda r: r.timestamp)


def parse_window(text: str) -> timedelta | int:
    """``30m``, ``6h``, ``1d``, ``2w`` → a calendar window (aligned to the UTC epoch); ``N`` → N retrievals per window."""
    if text.isdigit() and int(text) > 0:
        return int(text)
    match = _DURATION.match(text)
    if match and int(match.group(1)) > 0:
        return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    raise UserError(f"--window: '{text}' is not a duration like 1d, 6h, 30m or a positive retrieval count")


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    retrievals: int
    chunks: int
    below: int

    @property
    def below_rate(self) -> float | None:
        """below rate = chunks scoring below the threshold / chunks retrieved; None for a window with no chunks."""
        return self.below / self.chunks if self.chunks else None

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "retrievals": self.retrievals,
                "chunks": self.chunks, "below": self.below, "below_rate": self.below_rate}


def _window(group: Sequence[Retrieval], start: datetime, end: datetime, threshold: float) -> Window:
    scores = [s for r in group for s in r.scores]
    return Window(start, end, len(group), len(scores), sum(s < threshold for s in scores))


def split_windows(records: Sequence[Retrieval], window: timedelta | int, threshold: float) -> list[Window]:
    """Consecutive windows from the first retrieval to the last, empty calendar windows included
    (their rate is None); a count window holds ``window`` retrievals (the last one may hold fewer).
    ``records`` must be in timestamp order."""
    if isinstance(window, int):
        groups = [records[i : i + window] for i in range(0, len(records), window)]
        return [_window(g, g[0].timestamp, g[-1].timestamp, threshold) for g in groups]
    first = _EPOCH + ((records[0].timestamp - _EPOCH) // window) * window
    count = (records[-1].timestamp - first) // window + 1
    buckets: list[list[Retrieval]] = [[] for _ in range(count)]
    for record in records:
        buckets[(record.timestamp - first) // window].append(record)
    return [_window(b, first + i * window, first + (i + 1) * window, threshold) for i, b in enumerate(buckets)]


def trend_slope(rates: Sequence[float | None]) -> float | None:
    """Least-squares slope of the below rate per window: Σ(i − ī)(r_i − r̄) / Σ(i − ī)² over the windows
    i that have a rate; None with fewer than two.

    >>> round(trend_slope([0.1, 0.2, None, 0.4]), 6)
    0.1
    """
    points = [(i, r) for i, r in enumerate(rates) if r is not None]
    if len(points) < 2:
        return None
    mean_i = sum(i for i, _ in points) / len(points)
    mean_r = sum(r for _, r in points) / len(points)
    spread = sum((i - mean_i) ** 2 for i, _ in points)
    return sum((i - mean_i) * (r - mean_r) for i, r in points) / spread


@dataclass(frozen=True)
class CanaryReport:
    """Windows, the slope of their below rate, and ``alarm`` when the last window with chunks exceeds the
    first by more than ``margin`` (absolute share)."""

    threshold: float
    window: str
    margin: float
    windows: tuple[Window, ...]
    slope: float | None
    rise: float | None

    @property
    def alarm(self) -> bool:
        return self.rise is not None and self.rise > self.margin

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "window": self.window, "margin": self.margin, "slope": self.slope,
                "rise": self.rise, "alarm": self.alarm, "windows": [w.to_dict() for w in self.windows]}


def canary_report(records: Sequence[Retrieval], threshold: float, window: str = "1d", margin: float = 0.05) -> CanaryReport:
    windows = split_windows(records, parse_window(window), threshold)
    rates = [w.below_rate for w in windows]
    present = [r for r in rates if r is not None]
    rise = present[-1] - present[0] if len(present) >= 2 else None
    return CanaryReport(threshold, window, margin, tuple(windows), trend_slope(rates), rise)
