"""A dataset manifest may name the dataset's default models and prompts; study and command-line settings override them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset, manifest_model_defaults
from tuner.embedding import CachedEncoder
from tuner.errors import DatasetError
from tuner.settings import settings_from_mapping
from tuner.study import load_study_file

BGE_ZH_QUERY = "为这个句子生成表示以用于检索相关文章："


def with_manifest(source: Path, target: Path, manifest: str) -> Path:
    shutil.copytree(source, target)
    (target / "dataset.yaml").write_text(manifest, "utf-8")
    return target


def test_manifest_model_keys_become_the_datasets_defaults(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    manifest = "language: en\nembedding_model: BAAI/bge-small-zh-v1.5\nquery_prompt: auto\nreranker: embedding-maxsim\n"
    folder = with_manifest(tiny_dataset_dir, tmp_path / "ds", manifest)
    expected = {"embedding_model": "BAAI/bge-small-zh-v1.5", "query_prompt": "auto", "reranker": "embedding-maxsim"}
    assert load_dataset(folder).model_defaults == expected == manifest_model_defaults(folder)
    assert load_dataset(tiny_dataset_dir).model_defaults == {} == manifest_model_defaults(tiny_dataset_dir)


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        ("embedding_model: ''\n", "embedding_model: must be a model name, got ''"),
        ("query_prompt: 3\n", "query_prompt: must be a string, got 3"),
        ("embedding: bge\n", "unknown key 'embedding' (known: language, embedding_model, reranker, query_prompt, document_prompt)"),
    ],
)
def test_a_bad_model_key_is_one_line(tiny_dataset_dir: Path, tmp_path: Path, manifest: str, problem: str) -> None:
    folder = with_manifest(tiny_dataset_dir, tmp_path / "ds", manifest)
    with pytest.raises(DatasetError) as info:
        load_dataset(folder)
    assert info.value.problems == [f"{folder / 'dataset.yaml'}: {problem}"]


def test_given_settings_override_defaults_and_auto_follows_the_merged_model() -> None:
    defaults = {"embedding_model": "BAAI/bge-small-zh-v1.5", "query_prompt": "auto"}
    assert settings_from_mapping({}, "s", defaults).query_prompt == BGE_ZH_QUERY
    e5 = settings_from_mapping({"embedding_model": "intfloat/e5-small-v2"}, "s", defaults)
    assert (e5.embedding_model, e5.query_prompt) == ("intfloat/e5-small-v2", "query: ")
    assert settings_from_mapping({"query_prompt": "q: "}, "s", defaults).query_prompt == "q: "


@pytest.mark.slow
def test_commands_use_the_manifest_defaults_under_their_flags(
    tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]
) -> None:
    # the command's encoder shares the session's embedding store: fresh prompts show what questions were encoded with
    folder = with_manifest(tiny_dataset_dir, tmp_path / "ds", "query_prompt: 'manifest query: '\n")
    questions = [case.question for case in load_dataset(folder).golden]
    from_manifest, from_flag = encoder.with_prompt("manifest query: "), encoder.with_prompt("flag query: ")
    args = ["eval", str(folder), "--retriever", "dense", "--chunk-size", "40", "--json"]
    assert main(args) == 0
    assert from_manifest.missing(questions) == [] and from_flag.missing(questions) == questions
    assert main([*args, "--query-prompt", "flag query: "]) == 0
    assert from_flag.missing(questions) == []
    capsys.readouterr()


def test_study_settings_override_the_manifest(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    with_manifest(tiny_dataset_dir, tmp_path / "ds", "embedding_model: BAAI/bge-small-zh-v1.5\nquery_prompt: auto\n")
    study = tmp_path / "study.yaml"
    study.write_text("name: t\ndataset: ds\n", "utf-8")
    base = load_study_file(study).base_settings
    assert (base.embedding_model, base.query_prompt) == ("BAAI/bge-small-zh-v1.5", BGE_ZH_QUERY)
    study.write_text("name: t\ndataset: ds\nsettings: {embedding_model: intfloat/multilingual-e5-small}\n", "utf-8")
    base = load_study_file(study).base_settings
    assert (base.embedding_model, base.query_prompt) == ("intfloat/multilingual-e5-small", "query: ")
