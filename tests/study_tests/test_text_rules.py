"""A study records the rules by which tuner turned text into scores when it is created (the text layer and the BM25
list rule, :data:`tuner.retrieval.TEXT_RULES`), and a resumed one created under other rules is refused in one line:
trials measured under two BM25 rules in one front are not comparable."""

from __future__ import annotations

from tuner.retrieval import TEXT_RULES
from tuner.study._resume import changed_text_rules

OLD = {"text_layer": "text-v3-analyzer-jieba", "bm25_list": "bm25-list-filled"}


def test_a_changed_rule_is_found_where_it_acts() -> None:
    assert changed_text_rules(TEXT_RULES, TEXT_RULES, bm25=True) == []
    assert changed_text_rules(OLD, TEXT_RULES, bm25=True) == ["text_layer", "bm25_list"]
    only_list = {**TEXT_RULES, "bm25_list": OLD["bm25_list"]}
    assert changed_text_rules(only_list, TEXT_RULES, bm25=True) == ["bm25_list"]
    assert changed_text_rules(only_list, TEXT_RULES, bm25=False) == []  # a dense-only study scores no BM25 list
    assert changed_text_rules({"text_layer": TEXT_RULES["text_layer"]}, TEXT_RULES, bm25=True) == []  # not recorded

