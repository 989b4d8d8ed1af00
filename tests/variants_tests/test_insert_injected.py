from __future__ import annotations

import random

import pytest

from tuner.chunking import Chunk
from tuner.variants import insert_injected


def _chunks(*names: str) -> tuple[Chunk, ...]:
    return tuple(Chunk(chunk_id=name, doc_id=name, start=0, end=1, text=name) for name in names)


def _ids(chunks: tuple[Chunk, ...]) -> list[str]:
    return [c.chunk_id for c in chunks]


BASE = _chunks("a", "b", "c", "d", "e")
NOISE = _chunks("x", "y")


@pytest.mark.parametrize(
    ("position", "expected"),
    [
        ("front", ["x", "y", "a", "b", "c", "d", "e"]),
        ("middle", ["a", "b", "x", "y", "c", "d", "e"]),
        ("end", ["a", "b", "c", "d", "e", "x", "y"]),
    ],
)
def test_fixed_positions(position: str, expected: list[str]) -> None:
    assert _ids(insert_injected(BASE, NOISE, position, random.Random(0))) == expected


def test_middle_of_an_even_context_splits_it_in_half() -> None:
    assert _ids(insert_injected(BASE[:4], NOISE, "middle", random.Random(0))) == ["a", "b", "x", "y", "c", "d"]


def test_random_positions_keep_base_order_are_seeded_and_vary() -> None:
    placements = set()
    for seed in range(30):
        merged = _ids(insert_injected(BASE, NOISE, "random", random.Random(seed)))
        assert sorted(merged) == sorted(_ids(BASE) + _ids(NOISE))
        assert [c for c in merged if c not in ("x", "y")] == _ids(BASE)
        assert merged == _ids(insert_injected(BASE, NOISE, "random", random.Random(seed)))
        placements.add((merged.index("x"), merged.index("y")))
    assert len(placements) > 5


def test_unknown_position_is_a_bug() -> None:
    with pytest.raises(ValueError, match="sideways"):
        insert_injected(BASE, NOISE, "sideways", random.Random(0))
