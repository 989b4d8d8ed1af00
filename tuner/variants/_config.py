"""Variants (ranking → **variants** → answers): the variant names and how chunks are injected into them, as validated configuration."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field, field_validator, model_validator

from tuner.strict import StrictModel

VARIANTS = ("v0", "v1", "v2", "v3", "v4")
"""v0 base · v1 irrelevant · v2 relevant-soft · v3 relevant-hard (conflicts) · v4 unrelated-only."""
GRADED_VARIANTS: Final = ("v1", "v2", "v3")
"""Variants whose Δfaithful is graded; v4 (no relevant context at all) is judged by its rejection rate."""
SHORTFALL_WARNING: Final = 0.10
"""A variant whose shortfall exceeds this share of its injection slots is reported with a warning: its Δ
measures fewer injected chunks than were asked for (at worst none, and then a Δ of 0 says nothing)."""

BandMode = Literal["relative", "absolute"]


class InjectedCounts(StrictModel):
    """Chunks injected per variant: v1, v2 and v3-``inject`` add them to v0, v4 is made of them.

    The defaults follow the seed practice: 3 injected chunks for v1–v3, 4 for v4. A study file may give
    one number instead (``variants: {n: 2}``, the form before per-variant counts): every variant gets it.
    """

    v1: int = Field(3, ge=1, le=50)
    v2: int = Field(3, ge=1, le=50)
    v3: int = Field(3, ge=1, le=50)
    v4: int = Field(4, ge=1, le=50)

    def describe(self) -> str:
        """``"v1 3, v2 3, v3 3, v4 4"``, or ``"2"`` when every variant gets the same count."""
        counts = self.model_dump()
        if len(set(counts.values())) == 1:
            return str(self.v1)
        return ", ".join(f"{variant} {count}" for variant, count in counts.items())


class VariantsConfig(StrictModel):
    """How the variants v1–v4 are built: which chunks are injected, how many and where. Every count, band and position is explicit configuration.

    ``n`` chunks per variant (:class:`InjectedCounts`; one number means that many for every variant).
    Bands select v1/v4 (``irrelevant``) and v2 (``soft``) injected chunks among the clean corpus chunks of the
    trial's chunk table, by the cosine between the question and a chunk with the trial's embedding model:

    - ``band: relative`` (default): per question, relative to its own similarity distribution. A chunk
      is in a band when its cosine lies between the question's ``q_low`` and ``q_high`` quantiles of
      cosine over all clean chunks: ``soft_quantiles`` (default top 5%, 0.95–1.0) is the near-miss
      zone just below the relevant chunks (which sit at the very top and are excluded, as are the
      chunks already in v0); ``irrelevant_quantiles`` (default 0.0–0.5) is the lower half. It means the
      same with any embedder: MiniLM puts almost no chunk above a cosine of 0.70.
    - ``band: absolute``: fixed cosine bands, ``soft_band`` (default 0.70–0.85, the practice's near-miss
      band for its embedders) and ``irrelevant_band`` (default 0.0–0.4).
    """

    n: InjectedCounts = InjectedCounts()
    position: Literal["front", "middle", "end", "random"] = "end"
    seed: int = 0
    band: BandMode = "relative"
    irrelevant_quantiles: tuple[float, float] = (0.0, 0.5)
    soft_quantiles: tuple[float, float] = (0.95, 1.0)
    irrelevant_band: tuple[float, float] = (0.0, 0.4)
    soft_band: tuple[float, float] = (0.70, 0.85)
    hard_mode: Literal["in_index", "inject"] = "in_index"

    @field_validator("n", mode="before")
    @classmethod
    def _one_count_for_all(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return {variant: value for variant in InjectedCounts.model_fields}
        return value

    @model_validator(mode="after")
    def _bands_ordered(self) -> VariantsConfig:
        for name, lowest in (("irrelevant_band", -1.0), ("soft_band", -1.0), ("irrelevant_quantiles", 0.0), ("soft_quantiles", 0.0)):
            low, high = getattr(self, name)
            if not lowest <= low <= high <= 1.0:
                raise ValueError(f"{name} must be [low, high] with {lowest:g} <= low <= high <= 1, got [{low}, {high}]")
        return self

    def count(self, variant: str) -> int:
        """Injected chunks asked for in ``variant`` (v1–v4)."""
        return int(getattr(self.n, variant))

    def describe(self) -> str:
        """One line for reports: counts, position, band mode and its bands, v3 mode, seed."""
        if self.band == "relative":
            bands = f"relative bands (quantiles: v2 {_pair(self.soft_quantiles)}, v1/v4 {_pair(self.irrelevant_quantiles)})"
        else:
            bands = f"absolute bands (cosine: v2 {_pair(self.soft_band)}, v1/v4 {_pair(self.irrelevant_band)})"
        return f"injected n={self.n.describe()} at {self.position}, {bands}, v3 {self.hard_mode}, seed {self.seed}"


def _pair(bounds: tuple[float, float]) -> str:
    return f"{bounds[0]:g}–{bounds[1]:g}"
