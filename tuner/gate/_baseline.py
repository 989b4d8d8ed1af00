"""Serve (export → **gate** in CI): the gate baseline: per-case metric values of an accepted run, plus a history of
earlier runs' means.

Per-case values (not only means) are kept so a gate run on a subset of the baseline's cases is
compared on exactly those cases, and so probabilistic metrics can be compared case by case.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from tuner.cache import content_key
from tuner.dataset import GoldenCase
from tuner.errors import UserError, describe_validation_error
from tuner.io import atomic_write_json, renamed_key
from tuner.strict import StrictModel

BASELINE_FORMAT = 1


class BaselineRun(StrictModel):
    """The means of one accepted run: an entry of ``Baseline.history``."""

    written_at: str
    tool_version: str
    dataset_hash: str
    n_cases: int = Field(ge=0)
    summary: dict[str, float | None]


class Baseline(StrictModel):
    """``retrieval[metric][case_id]`` over every case; ``faithful[variant][case_id]`` over the sampled
    cases (``null`` = no score); ``summary`` holds the means (names as in noise-floor files, e.g.
    ``recall_at_k``, ``faithful_v0``, ``v3_delta_faithful``); ``history`` the earlier runs, oldest first;
    ``cases[case_id]`` the fingerprint of what each case asked (:func:`case_fingerprint`), so a case whose id was
    kept for another question is not compared as if paired (empty in baselines written before it existed)."""

    format: int = BASELINE_FORMAT
    written_at: str
    tool_version: str
    dataset_hash: str
    settings: dict[str, Any]
    variant_config: dict[str, Any]
    variants: list[str]
    retrieval: dict[str, dict[str, float]]
    faithful: dict[str, dict[str, float | None]]
    summary: dict[str, float | None]
    history: list[BaselineRun] = Field(default_factory=list)
    cases: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        # baselines written before issue 39 call the variants' configuration "noise"
        return renamed_key(data, "noise", "variant_config")

    def as_run(self) -> BaselineRun:
        n_cases = len(next(iter(self.retrieval.values()), {}))
        return BaselineRun(
            written_at=self.written_at,
            tool_version=self.tool_version,
            dataset_hash=self.dataset_hash,
            n_cases=n_cases,
            summary=self.summary,
        )

    def runs(self, last: int) -> list[BaselineRun]:
        """The last ``last`` accepted runs, this one included, oldest first."""
        return [*self.history, self.as_run()][-last:]


def case_fingerprint(case: GoldenCase) -> str:
    """What a case measures: its question, its relevant document ids (as a set) and its keypoints; a change of any
    of them makes it another case, whatever its id."""
    return content_key("gate-case", case.question, sorted(case.relevant_doc_ids), case.keypoints)


def load_baseline(path: str | Path) -> Baseline:
    """Read and validate a baseline file; anything wrong is one line naming the file (and key)."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: baseline not found (write one with --write-baseline)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read baseline: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: malformed baseline: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: malformed baseline: expected a JSON object")
    if data.get("format") != BASELINE_FORMAT:
        raise UserError(f"{path}: malformed baseline: format must be {BASELINE_FORMAT}, got {data.get('format')!r}")
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: malformed baseline: {describe_validation_error(exc)}") from None


def write_baseline(path: str | Path, baseline: Baseline, previous: Baseline | None) -> Baseline:
    """Write ``baseline`` atomically, carrying ``previous``'s history forward with ``previous`` appended."""
    if previous is not None:
        baseline = baseline.model_copy(update={"history": [*previous.history, previous.as_run()]})
    atomic_write_json(path, baseline.model_dump(mode="json"))
    return baseline


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()

