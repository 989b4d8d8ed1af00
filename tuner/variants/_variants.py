"""Variants (ranking → **variants** → answers): each case's v0–v4 contexts, chunks sampled by similarity band and injected."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tuner.chunking import Chunk
from tuner.dataset import GoldenCase
from tuner.variants._config import SHORTFALL_WARNING, VariantsConfig
from tuner.retrieval import ChunkTable, RetrievedContext


@dataclass(frozen=True)
class VariantContext:
    """The context of one variant: chunks in the order the generator sees them.

    ``injected`` counts the chunks injected; ``shortfall`` how many of the ones asked for could
    not be found in the similarity band (reported, never silently ignored; see :func:`shortfall_warning`).
    v3 ``in_index`` asks for none: its conflicts are whatever the retrieval brings.
    """

    variant: str
    chunks: tuple[Chunk, ...]
    injected: int = 0
    shortfall: int = 0

    @property
    def passages(self) -> list[str]:
        return [c.passage for c in self.chunks]


def insert_injected(base: Sequence[Chunk], injected: Sequence[Chunk], position: str, rng: random.Random) -> tuple[Chunk, ...]:
    """``base`` with ``injected`` inserted at the ``front``, the ``middle`` (after ⌊len/2⌋ base chunks), the
    ``end``, or each injected chunk at a seeded ``random`` position; base order is always preserved."""
    base, injected = list(base), list(injected)
    if position == "front":
        return tuple(injected + base)
    if position == "end":
        return tuple(base + injected)
    if position == "middle":
        cut = len(base) // 2
        return tuple(base[:cut] + injected + base[cut:])
    if position == "random":
        merged = list(base)
        for chunk in injected:
            merged.insert(rng.randint(0, len(merged)), chunk)
        return tuple(merged)
    raise ValueError(f"unknown insert position '{position}'")


def shortfall_warning(variant: str, injected: int, shortfall: int, limit: float = SHORTFALL_WARNING) -> str | None:
    """A warning when more than ``limit`` of a variant's injection slots went unfilled, else None.

    slots = injected + shortfall; warn when shortfall / slots > ``limit``. A variant short of its injected
    measures less perturbation than configured, so its Δ is biased toward 0 ("robust").

    >>> shortfall_warning("v2", 3, 357)
    'v2: 357 of 360 injection slots unfilled (99%): too few chunks in its similarity band; its Δ understates the effect'
    """
    slots = injected + shortfall
    if not slots or shortfall / slots <= limit:
        return None
    return (
        f"{variant}: {shortfall} of {slots} injection slots unfilled ({shortfall / slots:.0%}): "
        + ("too few conflicting chunks for the relevant documents" if variant == "v3" else "too few chunks in its similarity band")
        + "; its Δ understates the effect"
    )


def _case_rng(seed: int, case_id: str, variant: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{case_id}:{variant}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class VariantBuilder:
    """Builds v0–v4 contexts for the cases of one chunk table.

    Noise chunks never come from a case's relevant documents; v1/v2/v4 draw only corpus chunks (never
    conflicting ones), so only v3 carries contradictions. Sampling is seeded per (seed, case, variant),
    so a variant is the same for every trial that shares the chunk table.
    """

    def __init__(
        self, table: ChunkTable, question_vectors: Callable[[], np.ndarray], config: VariantsConfig,
        conflicts_with: Mapping[str, str],
    ) -> None:
        self.table = table
        self.config = config
        self._conflicts_with = conflicts_with
        self._question_vectors = question_vectors
        self._clean = ~np.asarray(table.is_conflict, dtype=bool)

    @cached_property
    def _similarity(self) -> np.ndarray:
        """Cosine of every question with every chunk. Computed on first use: v0 and v3 ``in_index`` need none, so a
        study that asks for those only (every trial does) embeds no chunk for its BM25 trials."""
        similarity: np.ndarray = self._question_vectors() @ self.table.embeddings().T
        return similarity

    def band_bounds(self, row: int, kind: str) -> tuple[float, float]:
        """The cosine band of ``kind`` (``soft`` or ``irrelevant``) for question number ``row``.

        absolute: the configured cosine band. relative: (Q(q_low), Q(q_high)) where Q is the quantile
        function (linear interpolation) of the question's cosine over every clean chunk of the table.
        """
        if self.config.band == "absolute":
            return self.config.soft_band if kind == "soft" else self.config.irrelevant_band
        quantiles = self.config.soft_quantiles if kind == "soft" else self.config.irrelevant_quantiles
        sims = self._similarity[row][self._clean]
        if sims.size == 0:
            return (1.0, -1.0)
        low, high = np.quantile(sims, quantiles)
        return float(low), float(high)

    def _band(self, row: int, case: GoldenCase, kind: str, exclude: set[str]) -> list[int]:
        sims = self._similarity[row]
        low, high = self.band_bounds(row, kind)
        relevant = set(case.relevant_doc_ids)
        return [
            int(i)
            for i in np.flatnonzero((sims >= low) & (sims <= high))
            if not self.table.is_conflict[i] and self.table.chunks[i].doc_id not in relevant
            and self.table.chunks[i].chunk_id not in exclude
        ]

    def _sample(self, variant: str, pool: list[int], rng: random.Random) -> list[Chunk]:
        picked = rng.sample(pool, min(self.config.count(variant), len(pool)))
        return [self.table.chunks[i] for i in picked]

    def _with_injected(self, variant: str, base: Sequence[Chunk], injected: list[Chunk], rng: random.Random) -> VariantContext:
        merged = insert_injected(base, injected, self.config.position, rng)
        return VariantContext(variant, merged, len(injected), self.config.count(variant) - len(injected))

    def build(
        self, row: int, case: GoldenCase, v0: RetrievedContext, v3_in_index: RetrievedContext | None, variant: str
    ) -> VariantContext:
        """The ``variant`` context of golden case number ``row`` (v3 ``in_index`` needs the all-view retrieval)."""
        rng = _case_rng(self.config.seed, case.id, variant)
        base = v0.chunks
        in_base = {c.chunk_id for c in base}
        if variant == "v0":
            return VariantContext("v0", base)
        if variant == "v1":
            return self._with_injected("v1", base, self._sample("v1", self._band(row, case, "irrelevant", in_base), rng), rng)
        if variant == "v2":
            return self._with_injected("v2", base, self._sample("v2", self._band(row, case, "soft", in_base), rng), rng)
        if variant == "v4":
            unrelated = self._sample("v4", self._band(row, case, "irrelevant", set()), rng)
            return VariantContext("v4", tuple(unrelated), len(unrelated), self.config.count("v4") - len(unrelated))
        if variant == "v3":
            if self.config.hard_mode == "in_index":
                if v3_in_index is None:
                    raise ValueError("v3 in_index needs the retrieval over the index with conflicts")
                injected = sum(1 for c in v3_in_index.chunks if c.conflicting)
                return VariantContext("v3", v3_in_index.chunks, injected)
            return self._with_injected("v3", base, self._conflict_chunks(row, case), rng)
        raise ValueError(f"unknown variant '{variant}'")

    def _conflict_chunks(self, row: int, case: GoldenCase) -> list[Chunk]:
        """The ``n.v3`` conflict chunks most similar to the question among conflicts of the case's relevant docs."""
        relevant = set(case.relevant_doc_ids)
        pool = [
            i
            for i in np.flatnonzero(self.table.is_conflict)
            if self._conflicts_with.get(self.table.chunks[i].doc_id) in relevant
        ]
        pool.sort(key=lambda i: (-self._similarity[row, i], i))
        return [self.table.chunks[i] for i in pool[: self.config.count("v3")]]
