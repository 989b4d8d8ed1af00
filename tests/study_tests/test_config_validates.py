"""A study configuration validates itself (issue 53): ``StudyConfig.model_validate`` refuses what ``tuner run`` refuses
its file for, with the same line; YAML's on/off where the docs write them (issue 54 §2.12); every path a study names
checked before any work (§2.13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.errors import UserError, describe_validation_error
from tuner.study import StudyConfig, load_study_file

SERVICE = {"backend": "external", "url": "http://127.0.0.1:9", "knowledge_id": "kb"}
PRICELESS = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": None}

REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"objectives": ["recall_at_k", "v3_delta_faithfull"]}, "objectives: unknown ['v3_delta_faithfull']"),
    ({"objectives": ["v3_delta_faithful", "recall_at_k"]}, "objectives: must start with recall_at_k"),
    ({"objectives": ["recall_at_k", "v3_delta_faithful", "recall_at_k"]},
     "objectives: a third objective can only be context_words"),
    ({"objectives": ["recall_at_k", "conflict_exposure"], "variants": {"hard_mode": "inject"}},
     "conflict_exposure (objectives, constraints.max_exposure) needs variants.hard_mode: in_index"),
    ({"constraints": {"max_latency_ms": 50}, "retriever": SERVICE}, "constraints.max_latency_ms: the search time of"),
    ({"budget": {"max_cost": 1.0}, "judge": {**PRICELESS, "backend": "llm"}}, "budget.max_cost: judge.pricing is not set"),
    ({"engine": {"backend": "milvus", "uri": "kb.db"}, "retriever": SERVICE},
     "engine: a retriever: service searches its own index"),
    ({"engine": {"backend": "milvus", "uri": "kb.db", "index": "HNSW"}, "settings": {"dense_index": "flat"}},
     "settings.dense_index: 'flat', but the engine's index is HNSW"),
    ({"retriever": SERVICE, "variants": {"hard_mode": "in_index"}},
     "variants.hard_mode: an external retriever needs inject"),
    ({"noise_floor": {"recall_at_k": "tiny"}}, "noise_floor: recall_at_k: expected a number, got 'tiny'"),
]


@pytest.mark.parametrize(("given", "line"), REFUSED, ids=[line.split(":")[0] + str(i) for i, (_, line) in enumerate(REFUSED)])
def test_a_config_built_in_python_is_refused_with_the_line_tuner_run_prints(
    given: dict[str, Any], line: str, tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError) as built:
        StudyConfig.model_validate({"name": "tiny", "dataset": str(tiny_dataset_dir), **given})
    said = describe_validation_error(built.value)
    assert said.startswith(line)
    study = write_study(tmp_path, tiny_dataset_dir, **given)
    with pytest.raises(UserError) as loaded:
        load_study_file(study)
    assert str(loaded.value) == f"{study}: {said}"


def test_a_service_or_an_attached_collection_gets_inject_without_asking(tiny_dataset_dir: Path) -> None:
    config = StudyConfig.model_validate({"name": "t", "dataset": str(tiny_dataset_dir), "retriever": SERVICE})
    assert config.variants.hard_mode == "inject"
    attached = {"backend": "milvus", "uri": "kb.db", "collection": "kb",
                "fields": {"text": "content", "vector": "embedding", "doc_id": "source_doc"}}
    config = StudyConfig.model_validate({"name": "t", "dataset": str(tiny_dataset_dir), "engine": attached})
    assert config.variants.hard_mode == "inject"
    # an attached collection's own conflicting rows can be searched in_index (refused once read, if it has none:
    # tests/engine_tests/test_attach.py), in either spelling
    for key in ("variants", "noise"):
        given = StudyConfig.model_validate({"name": "t", "dataset": str(tiny_dataset_dir), "engine": attached,
                                            key: {"hard_mode": "in_index"}})
        assert given.variants.hard_mode == "in_index"


def test_yaml_on_and_off_read_as_the_docs_write_them(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    """docs/backends.md writes ``chat: on``; YAML 1.1 reads it as true, which the chat setting refused before."""
    study = write_study(tmp_path, tiny_dataset_dir, pruning={"enabled": False})
    text = study.read_text() + "generator:\n  backend: local\n  chat: on\njudge:\n  backend: lexical\n"
    study.write_text(text.replace("enabled: false", "enabled: off"))
    loaded = load_study_file(study)
    assert loaded.config.generator.chat == "on" and loaded.config.pruning.enabled is False  # type: ignore[union-attr]
    study.write_text(text.replace("chat: on", "chat: off"))
    assert load_study_file(study).config.generator.chat == "off"  # type: ignore[union-attr]


@pytest.mark.parametrize("written", ["off", "false", "[0.1]"])
def test_a_noise_floor_that_is_no_name_nor_mapping_is_one_plain_line(written: str, tiny_dataset_dir: Path,
                                                                   tmp_path: Path) -> None:
    study = write_study(tmp_path, tiny_dataset_dir)
    data = yaml.safe_load(study.read_text())
    del data["noise_floor"]
    study.write_text(yaml.safe_dump(data) + f"noise_floor: {written}\n")
    with pytest.raises(UserError) as refused:
        load_study_file(study)
    line = str(refused.value)
    assert line.startswith(f"{study}: noise_floor: expected auto, a noise floor file written by tuner calibrate")
    assert ".str" not in line and "dict[" not in line


def test_a_noise_floor_file_that_is_not_there_is_refused_when_the_study_is_loaded(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 54 §2.13: ``noise_floor: none`` (no such file) was refused after 207 s of work; now before any."""
    study = write_study(tmp_path, tiny_dataset_dir, noise_floor="none")
    with pytest.raises(UserError, match=r"noise_floor: 'none': no such file"):
        load_study_file(study)
    assert main(["run", str(study), "--dry-run"]) == 2
    assert "noise_floor: 'none': no such file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    (tmp_path / "floor.json").write_text(json.dumps({"objectives": {}}))
    study = write_study(tmp_path, tiny_dataset_dir, noise_floor="floor.json")
    with pytest.raises(UserError, match="floor.json"):  # read, not only found: a malformed file stops here too
        load_study_file(study)


NAMED_OUTSIDE: list[tuple[str, str]] = [
    ("generator: {backend: local, model_path: MISSING/model.gguf}", r"generator.model_path: .*absent/model.gguf is not a file"),
    ("generator: {backend: callable, function: 'tuner_no_such_module:answer'}",
     "generator.function: cannot import module 'tuner_no_such_module'"),
    ("judge: {backend: llm, base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: TUNER_TEST_UNSET_KEY}",
     "environment variable TUNER_TEST_UNSET_KEY is not set"),
]


@pytest.mark.parametrize(("block", "line"), NAMED_OUTSIDE, ids=["model_path", "function", "api_key_env"])
def test_what_a_backend_names_outside_the_file_is_checked_when_the_study_is_loaded(
    block: str, line: str, tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 54 §2.13: a missing API key was found after the first stages ran (101 s on the demo), at the first
    request; the model file, the module and the key are now checked before any model or index (``tuner run`` and
    its dry run), while a command that only reads the study (``tuner trials``) needs none of them."""
    monkeypatch.delenv("TUNER_TEST_UNSET_KEY", raising=False)
    study = write_study(tmp_path, tiny_dataset_dir)
    data = yaml.safe_load(study.read_text())
    role = block.split(":")[0]
    data.pop(role, None)
    study.write_text(yaml.safe_dump(data) + block.replace("MISSING", str(tmp_path / "absent")) + "\n")
    loaded = load_study_file(study)
    with pytest.raises(UserError, match=line) as refused:
        loaded.check_backends()
    assert str(refused.value).startswith(f"{study}: ")
    assert main(["run", str(study), "--dry-run"]) == 2
    monkeypatch.setenv("TUNER_TEST_UNSET_KEY", "sk-test")
    if role == "judge":  # the same study with the key set passes
        loaded.check_backends()


def test_a_service_as_engine_is_the_study_the_retriever_key_wrote(tiny_dataset_dir: Path) -> None:
    """``engine: {backend: external, ...}`` (issue 53) and ``retriever:`` (before it) are one study: the same engine
    measured, v3 injected, the latency constraint refused."""
    base = {"name": "t", "dataset": str(tiny_dataset_dir)}
    old, new = (StudyConfig.model_validate({**base, key: SERVICE}) for key in ("retriever", "engine"))
    assert old.searched_engine == new.searched_engine and new.searched_engine.backend == "external"
    assert old.variants.hard_mode == new.variants.hard_mode == "inject"
    for key in ("retriever", "engine"):
        with pytest.raises(ValidationError, match="variants.hard_mode: an external retriever needs inject"):
            StudyConfig.model_validate({**base, key: SERVICE, "variants": {"hard_mode": "in_index"}})
        with pytest.raises(ValidationError, match="constraints.max_latency_ms: the search time of"):
            StudyConfig.model_validate({**base, key: SERVICE, "constraints": {"max_latency_ms": 50}})
