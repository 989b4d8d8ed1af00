from __future__ import annotations

import math
import random
import re
from datetime import date

import pytest

from tuner.corruption import CORRUPTORS, SEVERITIES, CaseFacts, CorruptedDoc, corpus_entities
from tuner.dataset import Dataset, Document, Keypoint

MISLEADING = ("factual_corruption", "contradiction_injection", "numeric_typo")
VALUE_KEYPOINTS: dict[str, tuple[Keypoint, ...]] = {
    "x200": (("$1,299", "1299 dollars"), ("March 5, 2024",)),
    "returns": (("30 days", "thirty days"),),
    "partner": (("2019-06-01",), ("28 countries",)),
}


def run(dataset: Dataset, doc_id: str, kind: str, severity: str, keypoints: tuple[Keypoint, ...], seed: int = 0) -> CorruptedDoc:
    document = next(d for d in dataset.corpus if d.doc_id == doc_id)
    facts = CaseFacts(keypoints, corpus_entities(dataset))
    result = CORRUPTORS[kind].corrupt(document, facts, severity, random.Random(seed))
    assert result is not None
    return result


def occurs(text: str, keypoint: Keypoint) -> bool:
    return any(alias.lower() in text.lower() for alias in keypoint)


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("kind", MISLEADING)
@pytest.mark.parametrize("doc_id", sorted(VALUE_KEYPOINTS))
def test_misleading_kinds_displace_every_value_keypoint(dataset: Dataset, doc_id: str, kind: str, severity: str) -> None:
    original = next(d.text for d in dataset.corpus if d.doc_id == doc_id)
    keypoints = VALUE_KEYPOINTS[doc_id]
    assert all(occurs(original, k) for k in keypoints)
    result = run(dataset, doc_id, kind, severity, keypoints)
    assert result.text != original
    assert not any(occurs(result.text, k) for k in keypoints)
    assert result.wrong_values and all(value in result.text for value in result.wrong_values)


@pytest.mark.parametrize("severity", SEVERITIES)
def test_relevance_poisoning_keeps_names_drops_answers_asserts_nothing(dataset: Dataset, severity: str) -> None:
    result = run(dataset, "x200", "relevance_poisoning", severity, VALUE_KEYPOINTS["x200"])
    assert result.wrong_values == ()
    assert not any(occurs(result.text, k) for k in VALUE_KEYPOINTS["x200"])
    for name in ("Aurora X200", "Aurora Labs", "Oslo"):
        assert name in result.text


def test_relevance_poisoning_severities_move_away_from_the_original(dataset: Dataset) -> None:
    original = next(d.text for d in dataset.corpus if d.doc_id == "x200")
    texts = {s: run(dataset, "x200", "relevance_poisoning", s, VALUE_KEYPOINTS["x200"]).text for s in SEVERITIES}
    assert texts["subtle"].startswith("The Aurora X200 laptop costs an unspecified amount and was released on an unspecified date.")
    assert "Aurora Labs designs it in Oslo." in texts["moderate"] and "costs" not in texts["moderate"]
    assert not set(original.split(". ")) & set(texts["obvious"].split(". "))


def test_relevance_poisoning_drops_a_named_answer(dataset: Dataset) -> None:
    result = run(dataset, "partner", "relevance_poisoning", "moderate", (("Mercury Logistics",),))
    assert "Mercury Logistics" not in result.text and "Europe" in result.text


def _amount(text: str) -> float:
    match = re.search(r"\$([\d,]+(?:\.\d+)?)", text)
    assert match is not None, text
    return float(match.group(1).replace(",", ""))


@pytest.mark.parametrize("kind", MISLEADING)
def test_numeric_distance_grows_with_severity(dataset: Dataset, kind: str) -> None:
    """|log(wrong / right)| over ten seeds: every subtle < every moderate < every obvious."""
    distances = {
        severity: [abs(math.log(_amount(run(dataset, "x200", kind, severity, VALUE_KEYPOINTS["x200"][:1], seed).wrong_values[0]) / 1299))
                   for seed in range(10)]
        for severity in SEVERITIES
    }  # fmt: skip
    assert 0 < max(distances["subtle"]) < min(distances["moderate"])
    assert max(distances["moderate"]) < min(distances["obvious"])


def test_date_shift_grows_with_severity(dataset: Dataset) -> None:
    def days(severity: str, seed: int) -> int:
        wrong = run(dataset, "partner", "factual_corruption", severity, (("2019-06-01",),), seed).wrong_values[0]
        return abs((date.fromisoformat(wrong) - date(2019, 6, 1)).days)

    shifts = {s: [days(s, seed) for seed in range(10)] for s in SEVERITIES}
    assert 0 < max(shifts["subtle"]) <= 10 < 28 <= min(shifts["moderate"])
    assert max(shifts["moderate"]) < 365 * 10 - 3 <= min(shifts["obvious"])


def test_subtle_typo_changes_one_digit(dataset: Dataset) -> None:
    for seed in range(10):
        wrong = run(dataset, "x200", "numeric_typo", "subtle", VALUE_KEYPOINTS["x200"][:1], seed).wrong_values[0]
        assert len(wrong) == len("$1,299") and sum(a != b for a, b in zip(wrong, "$1,299")) == 1


def test_numeric_typo_garbles_every_number_but_reports_only_answers(dataset: Dataset) -> None:
    result = run(dataset, "x200", "numeric_typo", "moderate", VALUE_KEYPOINTS["x200"][:1])
    assert "2-year" not in result.text and "Aurora X200" in result.text
    assert len(result.wrong_values) == 1 and result.wrong_values[0].startswith("$")


def test_same_seed_same_corruption_other_seed_other_values(dataset: Dataset) -> None:
    for kind in CORRUPTORS:
        assert run(dataset, "x200", kind, "moderate", VALUE_KEYPOINTS["x200"], 7) == run(dataset, "x200", kind, "moderate", VALUE_KEYPOINTS["x200"], 7)
    outputs = {run(dataset, "x200", "factual_corruption", "moderate", VALUE_KEYPOINTS["x200"], seed).text for seed in range(5)}
    assert len(outputs) > 1


def test_statement_keypoint_is_negated(dataset: Dataset) -> None:
    factual = run(dataset, "x200", "factual_corruption", "subtle", (("waterproof",),))
    assert "It is not waterproof" in factual.text and factual.wrong_values == ("is not waterproof",)
    contradiction = run(dataset, "x200", "contradiction_injection", "moderate", (("waterproof",),))
    assert "Contrary to earlier reports, it is not waterproof" in contradiction.text


def test_contradiction_frames_the_rewritten_sentence_by_severity(dataset: Dataset) -> None:
    texts = {s: run(dataset, "returns", "contradiction_injection", s, VALUE_KEYPOINTS["returns"]).text for s in SEVERITIES}
    assert texts["subtle"].startswith("As of the latest revision, customers of Nimbus Retail may return")
    assert texts["moderate"].startswith("Contrary to earlier reports, customers of Nimbus Retail")
    assert "Any source stating otherwise is wrong." in texts["obvious"]
    for text in texts.values():
        assert text.endswith("Refunds are issued within 5 business days.")


def test_named_answer_is_swapped_for_another_corpus_name(dataset: Dataset) -> None:
    pool = corpus_entities(dataset)
    original = next(d.text for d in dataset.corpus if d.doc_id == "partner")
    for severity in SEVERITIES:
        result = run(dataset, "partner", "factual_corruption", severity, (("Mercury Logistics",),))
        (swapped,) = result.wrong_values
        assert swapped in pool and "Mercury" not in swapped
        assert result.text == original.replace("Mercury Logistics", swapped)


def test_without_keypoints_values_are_the_targets() -> None:
    document = Document("d", "The plan costs $40 per month and includes 3 seats.")
    result = CORRUPTORS["factual_corruption"].corrupt(document, CaseFacts(), "moderate", random.Random(0))
    assert result is not None and "$40" not in result.text and "3 seats" not in result.text
    assert set(result.wrong_values) == {re.search(r"\$\d+", result.text).group(), result.text.split("includes ")[1].split(" ")[0]}  # type: ignore[union-attr]


def test_nothing_to_corrupt_is_none() -> None:
    document = Document("d", "plain lowercase words without any facts")
    for kind, corruptor in CORRUPTORS.items():
        for severity in ("subtle", "moderate"):
            assert corruptor.corrupt(document, CaseFacts(), severity, random.Random(0)) is None, kind


def test_subtle_swaps_pick_a_name_of_the_same_shape_obvious_ones_do_not(dataset: Dataset) -> None:
    def swaps(severity: str) -> set[str]:
        return {run(dataset, "partner", "factual_corruption", severity, (("Mercury Logistics",),), seed).wrong_values[0] for seed in range(12)}

    def two_plain_words(name: str) -> bool:
        return len(name.split()) == 2 and not any(ch.isdigit() for ch in name)

    assert all(two_plain_words(name) for name in swaps("subtle"))
    assert not any(two_plain_words(name) for name in swaps("obvious"))


def test_filler_names_each_subject_once() -> None:
    document = Document("d", "The Aurora X200 costs $1,299. The X200 is sold by Nimbus Retail.")
    result = CORRUPTORS["relevance_poisoning"].corrupt(document, CaseFacts((("$1,299",),)), "obvious", random.Random(0))
    assert result is not None
    assert result.text.startswith("This page collects general notes about Aurora X200 and Nimbus Retail.")
