from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tuner.chunking import Chunk
from tuner.dataset import GoldenCase
from tuner.noise._config import NoiseConfig
from tuner.retrieval import ChunkTable, RetrievedContext


@dataclass(frozen=True)
class VariantContext:
    """The context of one variant: chunks in the order the generator sees them.

    ``injected`` counts the noise chunks added; ``shortfall`` how many of the ``n`` asked for could
    not be found in the similarity band (reported, never silently ignored).
    """

    variant: str
    chunks: tuple[Chunk, ...]
    injected: int = 0
    shortfall: int = 0

    @property
    def passages(self) -> list[str]:
        return [c.passage for c in self.chunks]


def insert_noise(base: Sequence[Chunk], noise: Sequence[Chunk], position: str, rng: random.Random) -> tuple[Chunk, ...]:
    """``base`` with ``noise`` inserted at the ``front``, the ``middle`` (after ⌊len/2⌋ base chunks), the
    ``end``, or each noise chunk at a seeded ``random`` position; base order is always preserved."""
    base, noise = list(base), list(noise)
    if position == "front":
        return tuple(noise + base)
    if position == "end":
        return tuple(base + noise)
    if position == "middle":
        cut = len(base) // 2
        return tuple(base[:cut] + noise + base[cut:])
    if position == "random":
        merged = list(base)
        for chunk in noise:
            merged.insert(rng.randint(0, len(merged)), chunk)
        return tuple(merged)
    raise ValueError(f"unknown insert position '{position}'")


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
        self, table: ChunkTable, question_vectors: np.ndarray, config: NoiseConfig, conflicts_with: Mapping[str, str]
    ) -> None:
        self.table = table
        self.config = config
        self._conflicts_with = conflicts_with
        self._similarity = question_vectors @ table.embeddings().T

    def _band(self, row: int, case: GoldenCase, band: tuple[float, float], exclude: set[str]) -> list[int]:
        sims = self._similarity[row]
        low, high = band
        relevant = set(case.relevant_doc_ids)
        return [
            i
            for i in np.flatnonzero((sims >= low) & (sims <= high))
            if not self.table.is_conflict[i] and self.table.chunks[i].doc_id not in relevant
            and self.table.chunks[i].chunk_id not in exclude
        ]

    def _sample(self, pool: list[int], rng: random.Random) -> list[Chunk]:
        picked = rng.sample(pool, min(self.config.n, len(pool)))
        return [self.table.chunks[i] for i in picked]

    def _with_noise(self, variant: str, base: Sequence[Chunk], noise: list[Chunk], rng: random.Random) -> VariantContext:
        merged = insert_noise(base, noise, self.config.position, rng)
        return VariantContext(variant, merged, len(noise), self.config.n - len(noise))

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
            return self._with_noise("v1", base, self._sample(self._band(row, case, self.config.irrelevant_band, in_base), rng), rng)
        if variant == "v2":
            return self._with_noise("v2", base, self._sample(self._band(row, case, self.config.soft_band, in_base), rng), rng)
        if variant == "v4":
            noise = self._sample(self._band(row, case, self.config.irrelevant_band, set()), rng)
            return VariantContext("v4", tuple(noise), len(noise), self.config.n - len(noise))
        if variant == "v3":
            if self.config.hard_mode == "in_index":
                if v3_in_index is None:
                    raise ValueError("v3 in_index needs the retrieval over the index with conflicts")
                injected = sum(1 for c in v3_in_index.chunks if c.source == "conflict")
                return VariantContext("v3", v3_in_index.chunks, injected)
            return self._with_noise("v3", base, self._conflict_chunks(row, case), rng)
        raise ValueError(f"unknown variant '{variant}'")

    def _conflict_chunks(self, row: int, case: GoldenCase) -> list[Chunk]:
        """The n conflict chunks most similar to the question among conflicts of the case's relevant docs."""
        relevant = set(case.relevant_doc_ids)
        pool = [
            i
            for i in np.flatnonzero(self.table.is_conflict)
            if self._conflicts_with.get(self.table.chunks[i].doc_id) in relevant
        ]
        pool.sort(key=lambda i: (-self._similarity[row, i], i))
        return [self.table.chunks[i] for i in pool[: self.config.n]]
