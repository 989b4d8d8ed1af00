"""What each knob reads comes from one declaration (issue 39 §1): the conditions of ``tuner.settings.ACTS_WHEN`` and the
bounds of ``AT_MOST`` are data that the settings' validation, the search space's order and the messages all derive
from."""

from __future__ import annotations

import typing
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from tuner.settings import ACTS_WHEN, AT_MOST, DECIDERS, FIRST_STAGES, RetrievalSettings, acts
from tuner.study._space import IntParam, SearchSpace


class _Recording(Mapping[str, Any]):
    """Settings by name that remember which ones were looked at."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self.values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def _choices(name: str) -> tuple[Any, ...]:
    if name == "retriever":  # validated against the declared first stages, not a Literal
        return tuple(FIRST_STAGES)
    return typing.get_args(RetrievalSettings.model_fields[name].annotation)


@pytest.mark.parametrize("name", sorted(ACTS_WHEN))
def test_a_condition_reads_exactly_what_it_declares_and_names_real_values(name: str) -> None:
    condition = ACTS_WHEN[name]
    fields = RetrievalSettings.model_fields
    assert name in fields and set(condition.reads) <= set(fields)
    for clause in condition.clauses:
        if clause.op != ">":  # a compared value is one the setting accepts: a typo would make the knob never act
            assert clause.value in _choices(clause.setting)
    # every reachable combination of the settings it reads: the test looks at those and nothing else
    defaults = RetrievalSettings().model_dump()
    for retriever in _choices("retriever"):
        for fusion in _choices("fusion"):
            for strength in (0.0, 0.5):
                values = _Recording({**defaults, "retriever": retriever, "fusion": fusion, "rerank_strength": strength,
                                     "recency_weight": strength})
                acts(name, values)
                assert values.read <= set(condition.reads)


def test_the_words_follow_the_clauses() -> None:
    assert ACTS_WHEN["hybrid_weight"].when == "retriever is hybrid and fusion is blend"
    assert ACTS_WHEN["hybrid_weight"].reads == ("retriever", "fusion")
    assert ACTS_WHEN["dense_index"].when == "retriever is not bm25"
    assert ACTS_WHEN["reranker"].when == "rerank_strength > 0"
    assert acts("dense_index", {"retriever": "dense"}) and not acts("dense_index", {"retriever": "bm25"})
    assert not acts("reranker", {"rerank_strength": 0.0}) and acts("reranker", {"rerank_strength": 0.1})


def test_the_bound_is_one_rule_for_settings_and_sampler() -> None:
    assert AT_MOST == {"top_k": "candidate_depth"}
    with pytest.raises(ValidationError, match=r"top_k \(11\) exceeds candidate_depth \(10\)"):
        RetrievalSettings(top_k=11, candidate_depth=10)
    space = SearchSpace({"top_k": IntParam(type="int", low=1, high=25), "candidate_depth": IntParam(type="int", low=5, high=30)},
                        "space.yaml")
    # the sampler decides candidate_depth first and clips top_k to it: what settings would refuse is never drawn
    assert space.order == ["candidate_depth", "top_k"]
    clipped = space.effective("top_k", {"candidate_depth": 7})
    assert isinstance(clipped, IntParam) and clipped.high == 7


def test_deciders_are_what_conditions_read_and_what_bounds_hang_on() -> None:
    read = {setting for condition in ACTS_WHEN.values() for setting in condition.reads}
    assert set(DECIDERS) == read | set(AT_MOST.values())
