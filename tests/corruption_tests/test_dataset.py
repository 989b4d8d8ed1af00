from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tuner.corruption import (
    CORRUPTORS,
    NOTHING_TO_CORRUPT,
    SEVERITIES,
    conflicts_jsonl,
    corrupt_dataset,
    relevant_facts,
    with_wrong_answers,
    wrong_answers_by_case,
)
from tuner.dataset import Conflict, Dataset, GoldenCase


def test_each_relevant_document_once_per_kind_and_severity(dataset: Dataset) -> None:
    run = corrupt_dataset(dataset, CORRUPTORS, SEVERITIES)
    made = {c.doc_id for c in run.conflicts} | {f"{d}__{k}__{s}" for d, k, s, _ in run.skipped}
    expected = {f"{d}__{k}__{s}" for d in ("x200", "returns", "partner") for k in CORRUPTORS for s in SEVERITIES}
    assert made == expected and len(run.conflicts) + len(run.skipped) == len(expected)
    assert all(c.conflicts_with == c.doc_id.split("__")[0] for c in run.conflicts)
    assert {c.title for c in run.conflicts if c.conflicts_with == "x200"} == {"Aurora X200"}


def test_keypoints_of_all_cases_sharing_a_document_are_corrupted_together(dataset: Dataset) -> None:
    assert relevant_facts(dataset)["x200"] == (("$1,299", "1299 dollars"), ("March 5, 2024",))
    run = corrupt_dataset(dataset, {"factual_corruption": CORRUPTORS["factual_corruption"]}, ["moderate"])
    x200 = next(c for c in run.conflicts if c.conflicts_with == "x200")
    assert "$1,299" not in x200.text and "March 5, 2024" not in x200.text and len(x200.wrong_values) == 2


def test_conflicts_do_not_depend_on_what_else_is_selected(dataset: Dataset) -> None:
    everything = {c.doc_id: c for c in corrupt_dataset(dataset, CORRUPTORS, SEVERITIES, seed=3).conflicts}
    one = corrupt_dataset(dataset, {"numeric_typo": CORRUPTORS["numeric_typo"]}, ["obvious"], seed=3).conflicts
    assert one and all(everything[c.doc_id] == c for c in one)
    assert corrupt_dataset(dataset, CORRUPTORS, SEVERITIES, seed=3).conflicts == tuple(everything.values())
    assert corrupt_dataset(dataset, CORRUPTORS, SEVERITIES, seed=4).conflicts != tuple(everything.values())


def test_max_docs_is_a_seeded_sample(dataset: Dataset) -> None:
    def sampled(seed: int) -> set[str]:
        return {c.conflicts_with for c in corrupt_dataset(dataset, CORRUPTORS, ["subtle"], seed=seed, max_docs=2).conflicts}

    assert len(sampled(0)) == 2 and sampled(0) == sampled(0)
    assert len({frozenset(sampled(seed)) for seed in range(8)}) > 1


def test_skips_carry_their_reason(dataset: Dataset) -> None:
    run = corrupt_dataset(dataset, {"numeric_typo": CORRUPTORS["numeric_typo"]}, SEVERITIES)
    assert run.skipped == () and len(run.conflicts) == 9
    unanswered = GoldenCase("ports", "Which ports?", "Halifax.", (("Halifax",),), ("courier",))
    with_unanswered = dataclasses.replace(dataset, golden=(*dataset.golden, unanswered))
    run = corrupt_dataset(with_unanswered, {"relevance_poisoning": CORRUPTORS["relevance_poisoning"]}, SEVERITIES)
    assert set(run.skipped) == {("courier", "relevance_poisoning", s, NOTHING_TO_CORRUPT) for s in ("subtle", "moderate")}
    assert "courier__relevance_poisoning__obvious" in {c.doc_id for c in run.conflicts}


def test_wrong_answers_match_the_case_type_and_skip_what_a_right_answer_contains(dataset: Dataset) -> None:
    conflicts = [
        Conflict("a", "t", "x200", wrong_values=("$1,499", "1299", "May 1, 2024")),
        Conflict("b", "t", "partner", wrong_values=("Polar Express", "Vega Networks")),
        Conflict("c", "t", "router", wrong_values=("$10",)),
    ]
    assert wrong_answers_by_case(dataset, conflicts) == {
        "price": ("$1,499",),
        "release": ("May 1, 2024",),
        "carrier": ("Vega Networks",),
    }


def test_with_wrong_answers_rewrites_only_the_touched_lines(dataset_dir: Path) -> None:
    original = (dataset_dir / "golden.jsonl").read_text("utf-8")
    updated = with_wrong_answers(original, {"window": ("45 days",), "carrier": ("Vega Networks",)})
    before, after = original.split("\n"), updated.split("\n")
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and changed == [2, 3]
    assert json.loads(after[2])["wrong_answers"] == ["45 days"]
    assert json.loads(after[3])["wrong_answers"] == ["Polar Express", "Vega Networks"]


def test_records_are_one_json_object_per_line(dataset: Dataset) -> None:
    run = corrupt_dataset(dataset, CORRUPTORS, ["subtle"])
    lines = conflicts_jsonl(run.conflicts).splitlines()
    first = json.loads(lines[0])
    assert len(lines) == len(run.conflicts)
    assert list(first) == ["doc_id", "text", "conflicts_with", "kind", "severity", "wrong_values", "title"]
