from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

VARIANTS = ("v0", "v1", "v2", "v3", "v4")
"""v0 base · v1 irrelevant · v2 relevant-soft · v3 relevant-hard (conflicts) · v4 all-noise."""


class NoiseConfig(BaseModel):
    """How noise is injected. Every count, band and position is explicit configuration.

    ``n`` chunks are injected into v1, v2 and v3-``inject`` (and make up all of v4). Bands are cosine
    similarities between the question and a chunk, with the embedding model of the trial.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int = Field(2, ge=1, le=50)
    position: Literal["front", "middle", "end", "random"] = "end"
    seed: int = 0
    irrelevant_band: tuple[float, float] = (0.0, 0.4)
    soft_band: tuple[float, float] = (0.70, 0.85)
    hard_mode: Literal["in_index", "inject"] = "in_index"

    @model_validator(mode="after")
    def _bands_ordered(self) -> NoiseConfig:
        for name in ("irrelevant_band", "soft_band"):
            low, high = getattr(self, name)
            if not -1.0 <= low <= high <= 1.0:
                raise ValueError(f"{name} must be [low, high] with -1 <= low <= high <= 1, got [{low}, {high}]")
        return self
