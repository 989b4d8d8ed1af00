"""``embedding.backend: auto``: the fastest installed backend whose vectors agree with torch fp32's, measured once per
machine, model and installed versions, then read from the cache; the encoder runs the chosen backend and a study
records it. The measurement here is real (torch and onnx on a three-text probe, so the session's onnx export is the
only export it makes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.retrieval_tests.test_folder_model import static_embedding_folder
from tests.study_tests.test_study import write_study
from tuner.cache import DiskCache
from tuner.cli import main
from tuner.embedding import BACKENDS, CachedEncoder, EmbeddingOptions, SentenceTransformerEncoder, resolve_model_path, select_device
from tuner.embedding import _inference as inference
from tuner.embedding._inference import AUTO_AGREEMENT, choose_backend, fastest_agreeing

pytest.importorskip("onnxruntime", reason="embedding.backend needs the optional packages: pip install 'tuner[fast]'")
pytest.importorskip("onnx", reason="embedding.backend needs the optional packages: pip install 'tuner[fast]'")

PROBE = ("How long is the warranty?", "保修期是多久？", "The warranty covers parts and labour for 24 months.")


@pytest.fixture
def measurements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A short probe over torch and onnx; the list records each real measurement made."""
    made: list[str] = []
    measure = inference._measure

    def counted(model_path: str, cache: DiskCache) -> dict[str, tuple[float, float]]:
        made.append(model_path)
        return measure(model_path, cache)

    monkeypatch.setattr(inference, "PROBE_TEXTS", PROBE)
    monkeypatch.setattr(inference, "installed_backends", lambda: [BACKENDS["torch"], BACKENDS["onnx"]])
    monkeypatch.setattr(inference, "_measure", counted)
    return made


def test_the_fastest_agreeing_backend_wins_and_torch_is_the_fallback() -> None:
    # int8 is fastest but disagrees (0.93 < 0.9999); openvino agrees and beats torch
    assert fastest_agreeing({"torch": (1.0, 20.0), "onnx-int8": (0.93, 60.0), "openvino": (0.99999, 45.0)}) == "openvino"
    # nothing that agrees is faster than torch
    assert fastest_agreeing({"torch": (1.0, 20.0), "onnx": (0.99999, 19.0), "onnx-int8": (0.99, 80.0)}) == "torch"
    # the threshold is inclusive
    assert fastest_agreeing({"torch": (1.0, 20.0), "onnx": (AUTO_AGREEMENT, 21.0)}) == "onnx"
    # vectors stored apart from torch's (bf16) win only when 1.1x faster than the best that shares them
    assert fastest_agreeing({"torch": (1.0, 20.0), "openvino": (1.0, 30.0), "openvino-bf16": (1.0, 32.9)}) == "openvino"
    assert fastest_agreeing({"torch": (1.0, 20.0), "openvino": (1.0, 30.0), "openvino-bf16": (1.0, 33.0)}) == "openvino-bf16"


def test_auto_selects_a_device_like_torch() -> None:
    assert select_device("auto", {"cuda": True, "mps": False}, "auto") == "cuda"
    assert select_device("auto", {"cuda": False, "mps": False}, "auto") == "cpu"


def test_the_choice_is_measured_once_then_read_from_the_cache(measurements: list[str], tuner_cache: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = resolve_model_path("all-MiniLM-L6-v2")
    first = choose_backend(path, DiskCache(tuner_cache))
    assert not first.cached and measurements == [path]
    assert set(first.measured) == {"torch", "onnx"}
    assert first.measured["onnx"][0] >= AUTO_AGREEMENT  # fp32 ONNX agrees with torch on this CPU
    assert all(rate > 0 for _, rate in first.measured.values())
    assert first.backend == fastest_agreeing(first.measured)
    assert first.backend in first.describe() and "measured now" in first.describe()

    again = choose_backend(path, DiskCache(tuner_cache))
    assert again.cached and again.backend == first.backend and again.measured == first.measured
    assert measurements == [path]  # not measured again

    monkeypatch.setattr(inference, "machine_identity", lambda: "another machine")
    elsewhere = choose_backend(path, DiskCache(tuner_cache))
    assert not elsewhere.cached and len(measurements) == 2


def test_a_model_that_does_not_start_with_a_transformer_is_measured_on_torch_alone(
        measurements: list[str], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """No exported backend runs a static-embedding model (a lookup table): ``auto`` measures torch, says why the
    others were not measured, and chooses it, where it stopped with the exported backends' refusal before."""
    folder = str(static_embedding_folder(tmp_path / "static"))
    with caplog.at_level("INFO", logger="tuner.embedding._inference"):
        choice = choose_backend(folder, DiskCache(tmp_path / "cache"))
    assert measurements == [folder] and choice.backend == "torch" and set(choice.measured) == {"torch"}
    assert "starts with StaticEmbedding, which only torch runs: onnx not measured" in caplog.text
    entries = [sorted(f.name for f in entry.iterdir()) for entry in (tmp_path / "cache" / "models").iterdir()]
    assert entries == [["MANIFEST.json", "choice.json"]]  # the choice kept, nothing exported


def test_an_auto_encoder_runs_the_chosen_backend_with_vectors_that_agree(measurements: list[str], tuner_cache: Path,
                                                                         encoder: CachedEncoder) -> None:
    auto = SentenceTransformerEncoder("all-MiniLM-L6-v2", EmbeddingOptions(backend="auto"), tuner_cache)
    assert auto.choice is not None and auto.backend == auto.choice.backend != "auto"
    assert auto.vector_backend == ""  # an agreeing choice stores its vectors with torch's
    texts = ["Paris is the capital of France.", "长江是中国最长的河流。"]
    reference = encoder.inner.encode(texts)
    assert np.all(np.sum(auto.encode(texts) * reference, axis=1) >= AUTO_AGREEMENT)


def test_a_study_with_auto_records_the_backend_it_ran(measurements: list[str], tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, embedding={"backend": "auto"})
    assert main(["run", str(study_file), "--trials", "1", "--no-report"]) == 0
    exported = yaml.safe_load((tmp_path / "out" / "tiny" / "config.yaml").read_text("utf-8"))
    assert exported["provenance"]["embedding_backend"] in ("torch", "onnx")
    assert len(measurements) <= 1  # measured at most once in the process, whatever ran before
