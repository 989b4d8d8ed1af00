"""Serve (export → **gate** in CI): gate thresholds: what a regression is, as data (a YAML file validated once, unknown
keys rejected)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

from tuner.errors import UserError, describe_validation_error
from tuner.io import read_yaml_mapping
from tuner.metrics import RETRIEVAL_METRICS
from tuner.objectives import RECALL
from tuner.strict import StrictModel


class DeltaLimits(StrictModel):
    """Δfaithful grade limits: Δ ≤ ``warn`` passes, ``warn`` < Δ ≤ ``fail`` warns, Δ > ``fail`` fails."""

    warn: float = Field(0.05, ge=0.0, le=1.0)
    fail: float = Field(0.15, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> DeltaLimits:
        if self.warn > self.fail:
            raise ValueError(f"warn ({self.warn}) must not exceed fail ({self.fail})")
        return self


_LIMITS_DOC = """Largest allowed relative drop of each retrieval metric vs the baseline; ``null`` = reported, not gated.

relative drop = (baseline − current) / baseline, both means over the same cases."""


def _retrieval_limits() -> type[BaseModel]:
    """One field per metric of the registry (recall@k first, as docs/gate.md lists them), its default the entry's
    ``gate_drop``: a new retrieval metric is gated without an edit here."""
    names = [RECALL, *(name for name in RETRIEVAL_METRICS if name != RECALL)]
    fields: dict[str, Any] = {name: (float | None, Field(RETRIEVAL_METRICS[name].gate_drop, ge=0.0, le=1.0))
                              for name in names}
    return create_model("RetrievalLimits", __base__=StrictModel, __module__=__name__,
                        __doc__=_LIMITS_DOC, **fields)


if TYPE_CHECKING:
    RetrievalLimits = BaseModel
else:
    RetrievalLimits = _retrieval_limits()


class JudgeCheck(StrictModel):
    """The judge self-check: the first ``cases`` sampled cases are judged a second time and at least
    ``min_agreement`` of their keypoint verdicts (answer and context side together) must be identical."""

    min_agreement: float = Field(0.95, ge=0.0, le=1.0)
    cases: int = Field(20, ge=0)


class GateThresholds(StrictModel):
    """Everything ``tuner gate`` compares against, with the defaults of docs/gate.md.

    ``delta_faithful`` grades the whole sample; each category is graded with ``categories[name]``
    if listed, else ``category_default``, and only when it has at least ``category_min_cases``
    paired cases (below that, one case moves Δ by 20% or more: the bucket is shown, not gated).
    ``min_compared`` is the share of measured cases that must still ask what the baseline measured (same
    question, relevant documents and keypoints); below it the comparison would say little about today's
    golden set, and the gate stops with exit 2 asking for a new baseline.
    """

    retrieval: RetrievalLimits = RetrievalLimits()
    delta_faithful: DeltaLimits = DeltaLimits()
    category_default: DeltaLimits = DeltaLimits(warn=0.05, fail=0.20)
    categories: dict[str, DeltaLimits] = Field(default_factory=dict)
    category_min_cases: int = Field(5, ge=1)
    judge_check: JudgeCheck = JudgeCheck()
    min_compared: float = Field(0.5, gt=0.0, le=1.0)

    def category_limits(self, category: str) -> DeltaLimits:
        return self.categories.get(category, self.category_default)


def thresholds_from_mapping(values: dict[str, Any], source: str) -> GateThresholds:
    """Validate thresholds; the first bad key or value becomes one line naming ``source`` and the key."""
    try:
        return GateThresholds.model_validate(values)
    except ValidationError as exc:
        raise UserError(f"{source}: {describe_validation_error(exc)}") from None


def load_thresholds(path: str | Path) -> GateThresholds:
    """Thresholds from a YAML file naming any subset of the keys (the rest keep their defaults)."""
    data = read_yaml_mapping(path, "gate thresholds")
    return thresholds_from_mapping(data, str(path))
