from __future__ import annotations

import random
import re

import pytest

from tuner.corruption._perturb import PLAUSIBLE, TYPO, NumberRule, negation, perturb_numeral, shift_date
from tuner.corruption._text import answer_spans, find_entities, find_values, sentence_spans


def values(text: str) -> list[tuple[str, str]]:
    return [(text[v.start : v.end], v.kind) for v in find_values(text)]


def test_values_are_typed_and_not_glued_to_words() -> None:
    text = "The X100 v2.1 costs $1,299.99 or 1,100 EUR, saves 15% since 2021-03-04, 5 March 2024 and June 2023; 1.5 kg."
    assert values(text) == [
        ("$1,299.99", "money"), ("1,100 EUR", "money"), ("15%", "percent"), ("2021-03-04", "date"),
        ("5 March 2024", "date"), ("June 2023", "date"), ("1.5", "number"),
    ]  # fmt: skip


def test_a_number_after_a_name_belongs_to_the_name() -> None:
    text = "Windows 11 runs on the Globex Pro 7. In 3 days it ships."
    assert values(text) == [("3", "number")]
    assert [text[e.start : e.end] for e in find_entities(text, find_values(text))] == ["Windows 11", "Globex Pro 7"]


def test_entities_skip_sentence_openers_and_dates() -> None:
    text = "Returns go to Acme Corp in March 2024. The Acme Corp team is in Oslo. Oslo is cold."
    names = [text[e.start : e.end] for e in find_entities(text, find_values(text))]
    assert names == ["Acme Corp", "Acme Corp", "Oslo", "Oslo"]


def test_answer_spans_widen_to_whole_values_and_merge() -> None:
    text = "It costs $12.99 for 12 months."
    spans = answer_spans(text, (("12",), ("12.99",)), find_values(text))
    assert [(text[s.start : s.end], sorted(s.keypoints)) for s in spans] == [("$12.99", [0, 1]), ("12", [0])]


def test_sentences_do_not_break_inside_an_answer() -> None:
    text = "Ask Dr. Smith. He knows."
    spans = answer_spans(text, (("Dr. Smith",),), find_values(text))
    assert [text[a:b] for a, b in sentence_spans(text, spans)] == ["Ask Dr. Smith.", "He knows."]


@pytest.mark.parametrize(
    ("numeral", "shape"),
    [("1,299", r"^\d{1,3}(,\d{3})*$"), ("12.50", r"^\d+\.\d\d$"), ("7", r"^\d+$"), ("0", r"^\d+$")],
)
def test_numerals_keep_their_written_form_and_always_change(numeral: str, shape: str) -> None:
    for rule in (*PLAUSIBLE.numbers.values(), *TYPO.numbers.values()):
        for seed in range(20):
            new = perturb_numeral(numeral, rule, random.Random(seed))
            assert new != numeral and re.match(shape, new), (numeral, rule, new)


def test_division_that_would_round_to_zero_multiplies() -> None:
    assert all(float(perturb_numeral("3", NumberRule(20.0, 200.0), random.Random(s))) >= 60 for s in range(20))


MONTH = "(January|February|March|April|May|June|July|August|September|October|November|December)"
ABBR = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"


@pytest.mark.parametrize(
    ("date", "shape"),
    [
        ("2024-03-05", r"\d{4}-\d\d-\d\d"),
        ("March 5, 2024", MONTH + r" \d{1,2}, \d{4}"),
        ("Mar 5, 2024", ABBR + r" \d{1,2}, \d{4}"),
        ("5th March 2024", r"\d{1,2}(st|nd|rd|th) " + MONTH + r" \d{4}"),
        ("March 2024", MONTH + r" \d{4}"),
        ("2024", r"\d{4}"),
    ],
)
def test_dates_keep_their_format(date: str, shape: str) -> None:
    for style in (PLAUSIBLE, TYPO):
        for rules in style.dates.values():
            for seed in range(10):
                new = shift_date(date, rules, random.Random(seed))
                assert new != date and re.fullmatch(shape, new), new


def test_ordinals_follow_the_new_day() -> None:
    for seed in range(30):
        day, suffix = re.match(r"(\d+)(\w\w)", shift_date("5th March 2024", PLAUSIBLE.dates["subtle"], random.Random(seed))).groups()  # type: ignore[union-attr]
        assert suffix == ("th" if 11 <= int(day) <= 13 else {"1": "st", "2": "nd", "3": "rd"}.get(day[-1], "th"))


def test_month_end_is_clamped_when_months_move() -> None:
    for seed in range(20):
        new = shift_date("2024-01-31", {"day": PLAUSIBLE.dates["moderate"]["day"]}, random.Random(seed))
        assert new[:7] != "2024-01" and int(new[-2:]) <= 31


@pytest.mark.parametrize(
    ("sentence", "statement", "expected"),
    [
        ("The X100 is waterproof.", "waterproof", "The X100 is not waterproof."),
        ("The plan includes free shipping.", "free shipping", "The plan does not include free shipping."),
        ("You can return opened software.", "opened software", "You cannot return opened software."),
        ("Free returns are offered.", "Free returns", "Free returns are not offered."),
        ("It has been certified.", "certified", "It has not been certified."),
    ],
)
def test_negation(sentence: str, statement: str, expected: str) -> None:
    start = sentence.index(statement)
    edit = negation(sentence, start, start + len(statement))
    assert edit is not None
    assert sentence[: edit[0]] + edit[2] + sentence[edit[1] :] == expected


def test_already_negated_or_verbless_sentences_are_left_alone() -> None:
    assert negation("It is not waterproof.", 13, 23) is None
    assert negation("Waterproof, of course.", 0, 10) is None
