"""tuner stress: conditions are metadata views of one index; accuracy with Wilson intervals; positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.generation import build_generator, parse_generator_config
from tuner.judging import KeypointVerdict, build_judge, parse_judge_config
from tuner.llm import BackendResources
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import wilson_interval
from tuner.evaluation import Responder
from tuner.stress import (
    UNFILTERED_NOTE,
    CaseResult,
    Condition,
    StressEvaluator,
    StressReport,
    compare_with_clean,
    stress_conditions,
    stress_html,
    stress_markdown,
)

S, C, A = "supported", "contradicted", "absent"


@pytest.fixture(scope="module")
def run(corrupted_dir: Path, encoder: CachedEncoder) -> tuple[RetrievalPipeline, StressReport]:
    pipeline = RetrievalPipeline(load_dataset(corrupted_dir), encoder=encoder)
    resources = BackendResources(encoder=encoder)
    generator = build_generator(parse_generator_config(None, "test"), resources)
    judge = build_judge(parse_judge_config(None, "test"), resources)
    return pipeline, StressEvaluator(pipeline, Responder(generator, judge)).run(RetrievalSettings(top_k=5))


def test_conditions_are_every_kind_and_severity_present(corrupted_dir: Path) -> None:
    names = [c.name for c in stress_conditions(load_dataset(corrupted_dir))]
    assert names == [
        "clean", "unfiltered", "contradiction_injection/moderate", "factual_corruption/obvious",
        "factual_corruption/subtle", "numeric_typo/moderate", "relevance_poisoning/subtle", "stale_version/moderate",
    ]
    views = {c.name: c.view for c in stress_conditions(load_dataset(corrupted_dir))}
    assert views["unfiltered"] == "all" and views["numeric_typo/moderate"] == "kind=numeric_typo,severity=moderate"


def test_every_condition_comes_from_one_index_selected_by_metadata(run: tuple[RetrievalPipeline, StressReport]) -> None:
    pipeline, report = run
    assert len(pipeline._tables) == 1 and len(pipeline._retrievers) == 1
    labels = {c.doc_id: (c.kind, c.severity) for c in pipeline.dataset.conflicts}
    seen = {}
    for name, result in report.conditions.items():
        conflicts = {doc for case in result.cases for doc in case.conflicts}
        seen[name] = conflicts
        kind, severity = result.condition.kind, result.condition.severity
        if name == "clean":
            assert not conflicts
        elif kind is not None:
            assert {labels[doc] for doc in conflicts} <= {(kind, severity)}
    assert seen["factual_corruption/subtle"] == {"x200-fact-subtle"}
    assert seen["contradiction_injection/moderate"] == {"returns-contra"}
    assert len({labels[d] for d in seen["unfiltered"]}) > 1


def test_accuracy_is_a_wilson_proportion_and_corruption_misleads(run: tuple[RetrievalPipeline, StressReport]) -> None:
    _, report = run
    for result in report.conditions.values():
        correct = sum(bool(case.correct) for case in result.cases)
        assert result.accuracy.value == correct / result.accuracy.n
        assert result.accuracy.ci == wilson_interval(correct, result.accuracy.n)
    clean = report.conditions["clean"]
    assert clean.accuracy.n == 6 and clean.delta == 0.0
    contra = report.conditions["contradiction_injection/moderate"]
    # q2's answer adopts the injected "7 days" (one of the 5 cases right when clean)
    assert contra.delta == pytest.approx(-1 / 6) and contra.misled_rate == pytest.approx(1 / 5) and contra.misled_n == 5
    assert report.conditions["stale_version/moderate"].delta == pytest.approx(-1 / 6)
    # the relevance-poisoning filler is retrieved but withholds rather than misleads
    poison = report.conditions["relevance_poisoning/subtle"]
    assert poison.exposed > 0 and poison.misled_rate == 0.0 and poison.delta == 0.0


def test_positions_inject_the_same_conflicts(run: tuple[RetrievalPipeline, StressReport]) -> None:
    _, report = run
    assert list(report.positions) == ["front", "middle", "end"]
    for result in report.positions.values():
        # q1, q2 and q4 have conflicting copies of a relevant document
        assert result.accuracy.n_total == 3
        assert result.accuracy.ci == wilson_interval(round(result.accuracy.value * 3), 3)


def test_compare_with_clean_by_hand() -> None:
    def case(i: int, correct: bool | None, *answers: str) -> CaseResult:
        return CaseResult(f"q{i}", correct, None if correct is not None else "timeout",
                          tuple(KeypointVerdict(a, S) for a in answers) if correct is not None else ())

    clean = [case(1, True, S), case(2, True, S, S), case(3, False, A), case(4, True, S)]
    noisy = [case(1, False, C), case(2, False, S, A), case(3, True, S), case(4, None)]
    result = compare_with_clean(Condition("x", "kind=x"), noisy, clean)
    # paired: q1 q2 q3; clean right 2, noisy right 1 → Δ = −1/3; right when clean: q1 (misled), q2 (not)
    assert result.delta == pytest.approx(-1 / 3)
    assert (result.misled_rate, result.misled_n) == (0.5, 2)
    assert (result.accuracy.value, result.accuracy.n, result.accuracy.missing) == (1 / 3, 3, {"timeout": 1})


def test_outputs_and_json_shape(run: tuple[RetrievalPipeline, StressReport]) -> None:
    _, report = run
    data = json.loads(json.dumps(report.to_dict()))
    assert data["note"] == UNFILTERED_NOTE
    for entry in data["conditions"].values():
        assert {"accuracy", "ci", "delta", "misled_rate", "n"} <= set(entry)
    assert set(data["positions"]) == {"front", "middle", "end"}
    assert {"accuracy", "ci", "n"} <= set(data["positions"]["end"])
    markdown, page = stress_markdown(report), stress_html(report)
    assert "| contradiction_injection/moderate | 66.7% [30.0%, 90.3%] | 6/6 | -16.7 pts | 20.0% (of 5) | 2 |" in markdown
    assert "not a worst-case sensitivity" in markdown and "not a worst-case sensitivity" in page
    assert "<script" not in page and "http" not in page and page.startswith("<!DOCTYPE html>")


def test_cli_writes_reports_and_json(tmp_path: Path, corrupted_dir: Path, tiny_dataset_dir: Path,
                                     encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "deploy.yaml"
    config.write_text("settings: {top_k: 5}\n", "utf-8")
    assert main(["stress", "--config", str(config), "--dataset", str(corrupted_dir), "--json", "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["conditions"]["contradiction_injection/moderate"]["delta"] == pytest.approx(-1 / 6)
    assert (tmp_path / "stress.md").is_file() and (tmp_path / "stress.html").is_file()
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("corpus.jsonl", "golden.jsonl"):
        (bare / name).write_bytes((tiny_dataset_dir / name).read_bytes())
    assert main(["stress", "--config", str(config), "--dataset", str(bare)]) == 2
    assert "no conflicting documents (conflicts.jsonl)" in capsys.readouterr().err
