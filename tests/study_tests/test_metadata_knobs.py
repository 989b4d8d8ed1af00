"""Issue 22 §3: the ``metadata_filter`` knob (named filters of the study file, searched within by the first stage)
and knobs that cannot act on a dataset, reported and kept out of the search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.errors import UserError
from tuner.export import export_document, read_export, write_export
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings, settings_from_mapping
from tuner.study import load_search_space, load_study_file
from tuner.study._inert import inert_knobs, without_inert
from tuner.study._space import CategoricalParam

VERSIONS_SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 3},
    "version_policy": {"type": "categorical", "choices": ["all", "latest"]},
    "stale_penalty": {"type": "float", "low": 0.0, "high": 1.0, "step": 0.5},
    "recency_weight": {"type": "float", "low": 0.0, "high": 0.4, "step": 0.2},
    "recency_half_life_days": {"type": "categorical", "choices": [30.0, 365.0]},
    "dedupe": {"type": "categorical", "choices": [1.0, 0.9]},
    "metadata_filter": {"type": "categorical", "choices": ["none", "current", "corpus"]},
}
FILTERS = {"current": {"status": "current"}, "corpus": {"source": "corpus"}}


def _study(tmp_path: Path, dataset: Path, space: dict[str, object] = VERSIONS_SPACE, **overrides: object) -> Path:
    study_file = write_study(tmp_path, dataset, filters=FILTERS, enqueue=[], budget={"trials": 2}, **overrides)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    return study_file


def test_an_unknown_filter_name_is_one_line_naming_the_key(tiny_dataset_dir: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UserError, match=r"^settings: metadata_filter: unknown filter 'stale' \(defined: none, current\)$"):
        settings_from_mapping({"metadata_filters": {"current": {"status": "current"}}, "metadata_filter": "stale"}, "settings")
    bad_space = {**VERSIONS_SPACE, "metadata_filter": {"type": "categorical", "choices": ["none", "curent"]}}
    assert main(["run", str(_study(tmp_path, tiny_dataset_dir, bad_space)), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "space.yaml: metadata_filter: 'curent'" in err and "unknown filter 'curent'" in err
    assert main(["run", str(_study(tmp_path, tiny_dataset_dir, settings={"metadata_filter": "x"})), "--dry-run"]) == 2
    assert "study.yaml: settings: metadata_filter: unknown filter 'x'" in capsys.readouterr().err


def test_the_filter_keeps_the_first_stage_within_its_chunks_and_travels_with_the_export(tiny_dataset_dir: Path,
                                                                                         tmp_path: Path) -> None:
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir))
    laptops = {"laptops": {"doc_id": ["aurora-x200", "aurora-x210"]}}
    settings = RetrievalSettings(retriever="bm25", chunk_size=40, top_k=3, candidate_depth=8, metadata_filters=laptops,
                                 metadata_filter="laptops")
    contexts = pipeline.retrieve(settings, "all")
    assert {doc for context in contexts for doc in context.doc_ids} == {"aurora-x200", "aurora-x210"}
    unfiltered = pipeline.retrieve(settings.model_copy(update={"metadata_filter": "none"}), "all")
    assert {doc for context in unfiltered for doc in context.doc_ids} > {"aurora-x200", "aurora-x210"}
    for suffix in (".yaml", ".env"):
        path = write_export(tmp_path / f"deploy{suffix}", export_document(settings.model_dump(), {"trial": 0}))
        assert read_export(path).settings == settings  # the definition, not only the name


def test_knobs_without_metadata_are_reported_and_kept_out_of_the_search(tiny_dataset_dir: Path, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    study_file = _study(tmp_path, tiny_dataset_dir)
    assert main(["run", str(study_file), "--dry-run", "--json"]) == 0
    captured = capsys.readouterr()
    inert = {row["setting"]: row["value"] for row in json.loads(captured.out)["inert_knobs"]}
    assert inert == {"version_policy": "all", "stale_penalty": 0.0, "recency_weight": 0.0, "recency_half_life_days": 365.0,
                     "metadata_filter: current": "none"}
    assert "version_policy cannot act on this dataset (no metadata.family has an older dated version)" in captured.err
    assert "metadata_filter: current cannot act on this dataset (no document has metadata.status)" in captured.err
    loaded = load_study_file(study_file)
    space = without_inert(load_search_space(loaded.search_space_path),
                          inert_knobs(load_search_space(loaded.search_space_path), load_dataset(tiny_dataset_dir),
                                      loaded.base_settings))
    assert space.params["version_policy"] == CategoricalParam(type="categorical", choices=["all"])
    assert space.params["metadata_filter"] == CategoricalParam(type="categorical", choices=["none", "corpus"])
    assert space.params["dedupe"] == CategoricalParam(type="categorical", choices=[1.0, 0.9])  # vectors, not metadata
    assert main(["run", str(study_file), "--no-report", "--trials", "2"]) == 0
    assert "stale_penalty cannot act on this dataset" in capsys.readouterr().err  # the run's first lines too
    assert main(["trials", str(study_file), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["param.stale_penalty"] for row in rows} == {0.0} and {row["param.recency_weight"] for row in rows} == {0.0}


def test_with_metadata_nothing_is_kept_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = _study(tmp_path, Path("demo"), {**VERSIONS_SPACE, "top_k": {"type": "int", "low": 4, "high": 6}})
    assert main(["run", str(study_file), "--dry-run", "--json"]) == 0
    # the demo dates every document, puts each stale edition in its current document's family, and marks status
    assert json.loads(capsys.readouterr().out)["inert_knobs"] == []


def test_the_filter_flags_are_derived_and_a_mapping_is_read_as_yaml(tiny_dataset_dir: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.cli import build_parser
    from tuner.commands._common import settings_from_args

    args = build_parser().parse_args(["eval", str(tiny_dataset_dir), "--metadata-filters", "{laptops: {doc_id: [aurora-x200]}}",
                                      "--metadata-filter", "laptops"])
    settings = settings_from_args(args)
    assert settings.active_filter == {"doc_id": ["aurora-x200"]}
    with pytest.raises(SystemExit) as exited:
        main(["eval", str(tiny_dataset_dir), "--metadata-filters", "[not, a, mapping]"])
    assert exited.value.code == 2
    assert "--metadata-filters: expected a YAML mapping" in capsys.readouterr().err


def test_an_enqueued_configuration_drops_what_cannot_act() -> None:
    from tuner.study._inert import InertKnob, enqueued_params

    inert = [InertKnob("version_policy", "all", "no family"), InertKnob("metadata_filter", "none", "no status", choice="current")]
    assert enqueued_params({"top_k": 3, "version_policy": "latest", "metadata_filter": "current"}, inert) == {
        "top_k": 3, "metadata_filter": "none"}
    assert enqueued_params({"metadata_filter": "corpus", "dedupe": 0.9}, inert) == {"metadata_filter": "corpus", "dedupe": 0.9}
