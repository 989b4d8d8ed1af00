"""tuner stress: the RAGStress conditions are metadata views of one index; metrics, outputs and the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.chunking import CONFLICT
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.evaluation import Responder
from tuner.generation import build_generator, parse_generator_config
from tuner.judging import build_judge, parse_judge_config
from tuner.backends import BackendResources
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import wilson_interval
from tuner.stress import (
    CLEAN_PLUS,
    NO_RETRIEVAL,
    UNFILTERED_NOTE,
    StressEvaluator,
    StressReport,
    matrix_pairs,
    stress_conditions,
    stress_html,
    stress_json,
    stress_markdown,
)

OWN = {
    "factual_corruption/subtle": {"x200-fact-subtle"},
    "factual_corruption/obvious": {"x200-fact-obvious"},
    "contradiction_injection/moderate": {"returns-contra"},
    "numeric_typo/moderate": {"x200-typo"},
    "relevance_poisoning/subtle": {"returns-poison"},
    "stale_version/moderate": {"aurora-x200-2023", "returns-2022"},
}


@pytest.fixture(scope="module")
def run(corrupted_dir: Path, encoder: CachedEncoder) -> tuple[RetrievalPipeline, StressReport]:
    pipeline = RetrievalPipeline(load_dataset(corrupted_dir), encoder=encoder)
    resources = BackendResources(encoder=encoder)
    generator = build_generator(parse_generator_config(None, "test"), resources)
    judge = build_judge(parse_judge_config(None, "test"), resources)
    report = StressEvaluator(pipeline, Responder(generator, judge)).run(RetrievalSettings(top_k=5), "deploy", clean_plus_type=True)
    return pipeline, report


def test_the_fifteen_conditions_and_the_extras(corrupted_dir: Path) -> None:
    dataset = load_dataset(corrupted_dir)
    assert len(matrix_pairs(dataset)) == 13  # the 4 × 3 of the taxonomy, then stale_version/moderate
    conditions = stress_conditions(dataset)
    assert [c.name for c in conditions] == ["no_retrieval", "clean", "unfiltered", *OWN]
    views = {c.name: c.view for c in conditions}
    assert views["no_retrieval"] is None and views["clean"] == "clean" and views["unfiltered"] == "all"
    assert views["numeric_typo/moderate"] == "only:kind=numeric_typo,severity=moderate"
    extras = [c for c in stress_conditions(dataset, clean_plus_type=True) if c.name.startswith(CLEAN_PLUS)]
    assert [c.name for c in extras] == [CLEAN_PLUS + name for name in OWN]
    assert extras[0].view == "kind=factual_corruption,severity=subtle"


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
def test_each_type_severity_condition_retrieves_only_its_own_documents(corrupted_dir: Path, encoder: CachedEncoder,
                                                                       retriever: str) -> None:
    pipeline = RetrievalPipeline(load_dataset(corrupted_dir), encoder=encoder)
    settings = RetrievalSettings(retriever=retriever, top_k=20, candidate_depth=50, chunk_size=40)
    for condition in stress_conditions(pipeline.dataset, clean_plus_type=True):
        if condition.view is None:
            continue
        chunks = [chunk for ctx in pipeline.retrieve(settings, condition.view) for chunk in ctx.chunks]
        conflicts = {c.doc_id for c in chunks if c.source == CONFLICT}
        if condition.name == "clean":
            assert chunks and not conflicts
        elif condition.name == "unfiltered":
            assert conflicts == set().union(*OWN.values())
        elif condition.name.startswith(CLEAN_PLUS):
            assert conflicts == OWN[condition.name.removeprefix(CLEAN_PLUS)] and len(conflicts) < len(chunks)
        else:
            # only that type's and severity's corrupted documents, and (top_k 20 over a handful of chunks) all of them
            assert all(c.source == CONFLICT for c in chunks), condition.name
            assert {(c.kind, c.severity) for c in chunks} == {(condition.kind, condition.severity)}
            assert conflicts == OWN[condition.name]
    assert len(pipeline._tables) == 1 and len(pipeline._retrievers) == 1


def test_metrics_of_a_real_run(run: tuple[RetrievalPipeline, StressReport]) -> None:
    _, report = run
    for result in report.conditions.values():
        correct = sum(bool(case.correct) for case in result.cases)
        assert result.accuracy.value == correct / result.accuracy.n
        assert result.accuracy.ci == wilson_interval(correct, result.accuracy.n)
    clean, none = report.conditions["clean"], report.conditions[NO_RETRIEVAL]
    assert (clean.accuracy.n, clean.delta.value, clean.rho.value, clean.corrupted_share) == (6, 0.0, 0.0, 0.0)
    # the extractive reader abstains with no context: every query retrieved nothing, no answer is right
    assert (none.rho.value, none.accuracy.value, none.retrieved_chunks, none.corrupted_share) == (1.0, 0.0, 0, None)
    assert none.delta.value == pytest.approx(5 / 6) and none.misled.value == 1.0
    contra = report.conditions["contradiction_injection/moderate"]
    # only the corrupted returns policy is retrievable: every chunk of every context is corrupted, and the one
    # question that shares nothing with it retrieves nothing (a zero first-stage score is not a retrieval)
    assert contra.corrupted_share == 1.0 and contra.rho.value == pytest.approx(1 / 6)
    assert contra.accuracy.value == pytest.approx(0 / 6)
    assert contra.delta.value == pytest.approx(5 / 6) and (contra.misled.value, contra.misled.n) == (1.0, 5)
    unfiltered = report.conditions["unfiltered"]
    assert 0 < unfiltered.corrupted_share < 1  # type: ignore[operator]
    mixed = report.conditions[CLEAN_PLUS + "contradiction_injection/moderate"]
    # q2's answer adopts the injected "7 days" (one of the 5 cases right when clean)
    assert mixed.delta.value == pytest.approx(1 / 6) and (mixed.misled.value, mixed.misled.n) == (pytest.approx(1 / 5), 5)
    assert report.absent == (
        "factual_corruption/moderate", "contradiction_injection/subtle", "contradiction_injection/obvious",
        "numeric_typo/subtle", "numeric_typo/obvious", "relevance_poisoning/moderate", "relevance_poisoning/obvious",
    )


def test_positions_inject_the_same_conflicts(run: tuple[RetrievalPipeline, StressReport]) -> None:
    _, report = run
    assert list(report.positions) == ["front", "middle", "end"]
    for result in report.positions.values():
        # q1, q2 and q4 have conflicting copies of a relevant document
        assert result.accuracy.n_total == 3
        assert result.accuracy.ci == wilson_interval(round(result.accuracy.value * 3), 3)  # type: ignore[operator]


def test_outputs_and_json_keys(run: tuple[RetrievalPipeline, StressReport]) -> None:
    _, report = run
    data = json.loads(json.dumps(stress_json(report)))
    assert list(data) == ["note", "definitions", "label", "settings", "conditions", "clean_plus_type", "absent",
                          "hypotheses", "positions", "injected_conflicts"]
    assert data["note"] == UNFILTERED_NOTE
    for entry in [*data["conditions"].values(), *data["clean_plus_type"].values()]:
        assert list(entry) == ["view", "kind", "severity", "accuracy", "delta", "rho", "misled", "corrupted_share", "exposed"]
        assert list(entry["accuracy"]) == ["value", "n", "n_total", "ci", "missing"]
        assert list(entry["delta"]) == ["value", "ci", "n"]
    assert list(data["hypotheses"]) == ["type_delta", "order", "observed_order", "no_retrieval_accuracy",
                                        "below_no_retrieval", "severity"]
    markdown, page = stress_markdown(report), stress_html(report)
    assert "| contradiction_injection/moderate | 0.0% [0.0%, 39.0%] (6/6) | +83.3 [" in markdown
    assert "## Extra: clean+type" in markdown and "| clean+contradiction_injection/moderate | 66.7% [30.0%, 90.3%] (6/6) |" in markdown
    assert "not a worst-case sensitivity" in markdown and "not a worst-case sensitivity" in page
    assert '<table class="heat">' in page and "rgba(214,39,40," in page
    assert "<script" not in page and "http" not in page and page.startswith("<!DOCTYPE html>")


def test_cli_writes_reports_and_json(tmp_path: Path, corrupted_dir: Path, tiny_dataset_dir: Path,
                                     encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "deploy.yaml"
    config.write_text("settings: {top_k: 5}\n", "utf-8")
    assert main(["stress", "--config", str(config), "--dataset", str(corrupted_dir), "--json", "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["conditions"]["contradiction_injection/moderate"]["delta"]["value"] == pytest.approx(5 / 6)
    assert data["clean_plus_type"] == {}
    assert json.loads((tmp_path / "stress.json").read_text("utf-8")) == data
    assert (tmp_path / "stress.md").is_file() and (tmp_path / "stress.html").is_file()
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("corpus.jsonl", "golden.jsonl"):
        (bare / name).write_bytes((tiny_dataset_dir / name).read_bytes())
    assert main(["stress", "--config", str(config), "--dataset", str(bare)]) == 2
    assert "no conflicting documents (conflicts.jsonl)" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["configurations", "generators"])
def test_cli_compare_reports_gamma_per_type(tmp_path: Path, corrupted_dir: Path, encoder: CachedEncoder,
                                           capsys: pytest.CaptureFixture[str], what: str) -> None:
    if what == "configurations":
        a, b = tmp_path / "wide.yaml", tmp_path / "strict.yaml"
        a.write_text("settings: {top_k: 5}\n", "utf-8")
        b.write_text("settings: {top_k: 2, relevance_threshold: 0.5}\n", "utf-8")
        mode = ["--compare", str(a), str(b)]
    else:
        config, a, b = tmp_path / "deploy.yaml", tmp_path / "reader.yaml", tmp_path / "picky.yaml"
        config.write_text("settings: {top_k: 5}\n", "utf-8")
        a.write_text("generator: {backend: extractive}\n", "utf-8")
        b.write_text("generator: {backend: extractive, similarity_floor: 0.6}\n", "utf-8")
        mode = ["--config", str(config), "--compare-generators", str(a), str(b)]
    out = tmp_path / "out"
    out.mkdir()
    assert main(["stress", *mode, "--dataset", str(corrupted_dir), "--json", "--out", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["first"], data["second"]) == (a.name, b.name)
    first, second = data["reports"]
    for kind, value in data["gamma"].items():
        one = [e["delta"]["value"] for e in first["conditions"].values() if e["kind"] == kind]
        two = [e["delta"]["value"] for e in second["conditions"].values() if e["kind"] == kind]
        assert value == pytest.approx(sum(one) / len(one) - sum(two) / len(two))
    assert set(data["gamma"]) == {"factual_corruption", "contradiction_injection", "numeric_typo",
                                  "relevance_poisoning", "stale_version"}
    if what == "configurations":
        # every corrupted cell is 0/6 under both; clean is 5/6 wide and 3/6 strict: Γ = 5/6 − 3/6 for every type
        assert data["gamma"] == pytest.approx(dict.fromkeys(data["gamma"], 1 / 3))
        # the threshold empties contexts: ρ(clean) = 3/6; no relevance-poisoning filler scores 0.5
        assert second["conditions"]["clean"]["rho"]["value"] == 0.5
        assert second["conditions"]["relevance_poisoning/subtle"]["rho"]["value"] == 1.0
    assert f"## Γ_t({a.name}, {b.name})" in (out / "stress.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "--config: required (or --compare A B)"),
        (["--config", "{c}", "--compare", "{c}", "{c}"], "--compare: give the two settings files instead of --config"),
        (["--config", "{c}", "--generator", "{c}", "--compare-generators", "{c}", "{c}"], "--compare-generators: give the two"),
        (["--config", "{c}", "--injected", "0"], "--injected: must be between 1 and 50"),
        (["--config", "{c}", "--noise-n", "51"], "--injected: must be between 1 and 50"),  # the spelling before issue 39
    ],
)
def test_cli_user_errors(tmp_path: Path, corrupted_dir: Path, capsys: pytest.CaptureFixture[str],
                         extra: list[str], message: str) -> None:
    config = tmp_path / "deploy.yaml"
    config.write_text("settings: {top_k: 5}\n", "utf-8")
    args = ["stress", "--dataset", str(corrupted_dir), "--out", str(tmp_path), *(a.format(c=config) for a in extra)]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "stress.md").exists()


@pytest.mark.parametrize("argv,folder", [
    (["--config", "out/demo/config.yaml"], "out/demo"),
    (["--compare", "runs/a/config.yaml", "runs/b/config.yaml"], "runs/a"),
    (["--config", "out/demo/config.yaml", "--out", "elsewhere"], "elsewhere"),
])
def test_stress_writes_beside_the_settings_file_not_into_the_current_folder(argv: list[str], folder: str) -> None:
    from tuner.cli import build_parser
    from tuner.commands.stress import output_folder

    assert output_folder(build_parser().parse_args(["stress", "--dataset", "d", *argv])) == folder
