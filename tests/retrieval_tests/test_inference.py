"""Inference backends (``embedding.backend``): the option's validation, the export made once into the cache and
reused, int8 vectors kept apart from fp32 ones in the store and in rerank keys, exported fp32 vectors equal to
torch's, and a study that records its backend in the exported provenance. The exports are made once per session
(a few seconds for MiniLM) in the session's cache folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.embedding import (
    CachedEncoder, EmbeddingOptions, EmbeddingStore, InferenceBackend, SentenceTransformerEncoder, default_batch_size,
    select_device, vector_id,
)
from tuner.errors import UserError
from tuner.embedding._inference import require_packages
from tuner.retrieval._keys import rerank_key
from tuner.settings import RetrievalSettings

TEXTS = ["The river flooded in 1998.", "Paris is the capital of France.", "Bees make honey.", "A cat sat on the mat.",
         "长江是中国最长的河流，全长约6300公里。"]

pytest.importorskip("onnxruntime", reason="embedding.backend needs the optional packages: pip install 'tuner[fast]'")
pytest.importorskip("onnx", reason="embedding.backend needs the optional packages: pip install 'tuner[fast]'")


@pytest.fixture(scope="module")
def export_root(tuner_cache: Path) -> Path:
    """The session's cache, so the study below finds the exports the fixture made."""
    return tuner_cache


def model_exports(root: Path) -> list[str]:
    folder = root / "models"
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []


@pytest.fixture(scope="module")
def exports_before(export_root: Path) -> list[str]:
    """The models an earlier test of this worker left in the session's cache (a study on ``embedding.backend auto``
    exports the fp32 model the int8 one is quantized from; the local generator's tests assemble their GGUF file)."""
    return model_exports(export_root)


@pytest.fixture(scope="module")
def int8(export_root: Path, exports_before: list[str]) -> SentenceTransformerEncoder:
    """MiniLM on onnx-int8, exported (fp32 ONNX unless already there, then int8) into ``export_root`` by this first load."""
    encoder = SentenceTransformerEncoder("all-MiniLM-L6-v2", EmbeddingOptions(backend="onnx-int8"), export_root)
    encoder.encode(TEXTS[:1])
    return encoder


def test_a_bad_backend_is_one_line_naming_the_key(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, embedding={"backend": "tensorrt"})
    assert main(["run", str(study_file), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "embedding.backend" in err[0] and "'onnx-int8'" in err[0] and str(study_file) in err[0]
    assert not (tmp_path / "out").exists()


def test_a_backend_without_its_packages_is_refused_naming_them() -> None:
    backend = InferenceBackend("onnx", "onnx", "onnxruntime", True, ("onnx", "tuner_no_such_runtime"))
    with pytest.raises(UserError, match=r"^embedding.backend: onnx needs the 'fast' extra \(tuner_no_such_runtime is not installed\): "
                                         r"pip install 'tuner\[fast\]'$"):
        require_packages(backend)


def test_exported_backends_run_on_the_cpu_with_their_own_batch_size() -> None:
    assert select_device("auto", {"cuda": True, "mps": True}, "onnx-int8") == "cpu"
    assert select_device("auto", {"cuda": True, "mps": False}, "torch") == "cuda"
    with pytest.raises(UserError, match="embedding.device: cuda with embedding.backend openvino: that backend runs on the CPU"):
        select_device("cuda", {"cuda": True, "mps": False}, "openvino")
    assert (default_batch_size("cpu", "torch"), default_batch_size("cpu", "onnx-int8"), default_batch_size("cuda", "torch")) == (64, 32, 256)


def test_the_export_is_cached_and_reused_by_a_later_load(int8: SentenceTransformerEncoder, export_root: Path,
                                                          exports_before: list[str]) -> None:
    first = int8.encode(TEXTS)
    models = model_exports(export_root)
    built = sorted(set(models) - set(exports_before))
    # the int8 quantization, and the fp32 export it is made from unless an earlier test of this worker left it
    assert int8._cache.stats.by_namespace == {"models": len(built)} and 1 <= len(built) <= 2
    again = SentenceTransformerEncoder("all-MiniLM-L6-v2", EmbeddingOptions(backend="onnx-int8"), export_root)
    assert np.array_equal(again.encode(TEXTS), first)
    assert again._cache.stats.builds == 0 and again._cache.stats.hits == 1
    assert model_exports(export_root) == models


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_exported_fp32_vectors_equal_torch_vectors(backend: str, encoder: CachedEncoder, int8: SentenceTransformerEncoder,
                                                   export_root: Path) -> None:
    if backend == "openvino":
        pytest.importorskip("openvino", reason="embedding.backend openvino needs openvino: pip install 'tuner[fast]'")
    exported = SentenceTransformerEncoder("all-MiniLM-L6-v2", EmbeddingOptions(backend=backend), export_root)  # type: ignore[arg-type]
    reference = encoder.inner.encode(TEXTS)
    vectors = exported.encode(TEXTS)
    assert (vectors * reference).sum(axis=1).min() > 0.9999
    assert exported.vector_backend == "" and exported._cache.stats.builds == 0  # the fp32 export of the int8 fixture
    quantized = int8.encode(TEXTS)
    cosine = (quantized * reference).sum(axis=1)
    assert cosine.min() > 0.97 and not np.allclose(quantized, reference, atol=1e-4)  # close, and not the same vectors


def test_bf16_vectors_are_close_to_torch_and_stored_under_their_own_id(encoder: CachedEncoder, int8: SentenceTransformerEncoder,
                                                                    export_root: Path) -> None:
    pytest.importorskip("openvino", reason="embedding.backend openvino-bf16 needs openvino: pip install 'tuner[fast]'")
    bf16 = SentenceTransformerEncoder("all-MiniLM-L6-v2", EmbeddingOptions(backend="openvino-bf16"), export_root)
    cosine = (bf16.encode(TEXTS) * encoder.inner.encode(TEXTS)).sum(axis=1)
    assert cosine.min() > 0.999  # bfloat16 arithmetic where the CPU has it; fp32 where it has not
    assert bf16.vector_backend == "openvino-bf16" and bf16._cache.stats.builds == 0  # it runs the fp32 export


def test_int8_vectors_are_stored_apart_from_fp32_vectors(encoder: CachedEncoder, int8: SentenceTransformerEncoder, tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "embeddings.sqlite")
    fp32, quantized = CachedEncoder(encoder.inner, store, "query: "), CachedEncoder(int8, store, "query: ")
    assert quantized.vector_id == vector_id("all-MiniLM-L6-v2", "query: ", "onnx-int8") != fp32.vector_id
    stored_fp32 = fp32.encode(TEXTS)
    assert quantized.missing(TEXTS) == TEXTS  # fp32 vectors are never served to the int8 encoder
    stored_int8 = quantized.encode(TEXTS)
    assert np.allclose(fp32.encode(TEXTS), stored_fp32) and np.array_equal(quantized.encode(TEXTS), stored_int8)
    assert not np.allclose(stored_int8, stored_fp32, atol=1e-4)
    assert np.allclose(stored_fp32, encoder.inner.encode(TEXTS, "query: "), atol=1e-6)


def test_rerank_keys_follow_a_backend_whose_vectors_differ() -> None:
    settings = RetrievalSettings(retriever="bm25", reranker="embedding-maxsim")
    assert rerank_key(settings, "candidates") == rerank_key(settings, "candidates", "")  # torch keys are unchanged
    assert rerank_key(settings, "candidates", "onnx-int8") != rerank_key(settings, "candidates")


def test_a_study_records_its_backend_in_the_exported_provenance(int8: SentenceTransformerEncoder, tiny_dataset_dir: Path,
                                                                tmp_path: Path) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, embedding={"backend": "onnx-int8"})
    assert main(["run", str(study_file), "--trials", "2", "--no-report"]) == 0
    exported = yaml.safe_load((tmp_path / "out" / "tiny" / "config.yaml").read_text("utf-8"))
    assert exported["provenance"]["embedding_backend"] == "onnx-int8"
