"""Indexes (chunks → **indexes** → candidates): faster inference for local embedding models (``embedding.backend``).

A backend runs the transformer of a sentence-transformers model; tokenization, pooling and normalization stay
sentence-transformers' own, so every backend gives the same kind of vector from the same text:

==============  ============================================================================================
backend         what runs the transformer
==============  ============================================================================================
``torch``       PyTorch, fp32: the reference
``onnx``        ONNX Runtime on the model exported to ONNX, fp32 (vectors equal torch's to float rounding)
``onnx-int8``   ONNX Runtime on that export with int8 weights (dynamic quantization): other vectors
``openvino``    OpenVINO on the same ONNX export, precision pinned to fp32 (its CPU default may be bf16)
``openvino-bf16`` OpenVINO on that export computing in bfloat16 where the CPU has it (AVX-512 BF16, AMX):
                other vectors, closer to torch's than int8's (cosine ≈ 0.99997)
==============  ============================================================================================

sentence-transformers' own ``backend="onnx"``/``"openvino"`` loaders need optimum-onnx / optimum-intel, and no
release of either installs beside transformers 5.24 (optimum-onnx wants transformers < 4.58, optimum-intel
< 5.6 and another torch). So the export is done here with the same tools they wrap: ``torch.onnx.export`` of
the transformer, ``onnxruntime.quantization.quantize_dynamic`` with their ``avx512_vnni`` settings (int8
weights per channel, unsigned int8 activations, full range), and the runtimes themselves.

The export happens once per model and backend, offline, into the tuner cache (``models/`` beside chunks and
indexes, a :class:`tuner.cache.DiskCache` entry: built in a staging folder, renamed into place, checksummed,
shared by later runs and other processes). Its key is the content of the model folder, the backend's export
and the versions of the tools that wrote it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from tuner.cache import DiskCache, content_key
from tuner.errors import UserError

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

Backend = Literal["torch", "onnx", "onnx-int8", "openvino", "openvino-bf16"]

EXPORT_FORMAT = 1
"""Bumped when the export below changes, so entries written by an older one are not read."""

ONNX_OPSET = 17
_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class InferenceBackend:
    """One ``embedding.backend``: which exported file it runs (None: the torch model itself), with which runtime,
    in which precision the runtime computes, and whether its vectors are the reference's. ``reference_vectors``
    backends share torch's vector id in the
    embedding store: their max |Δ| to torch (~1e-7, bench/embed_throughput.py) is the size of the difference
    torch itself shows between batch sizes, so mixing them changes nothing a run could see."""

    name: str
    export: Literal["onnx", "onnx-int8"] | None
    runtime: Literal["torch", "onnxruntime", "openvino"]
    reference_vectors: bool
    packages: tuple[str, ...]
    precision: Literal["f32", "bf16"] = "f32"


BACKENDS: Mapping[str, InferenceBackend] = {
    backend.name: backend
    for backend in (
        InferenceBackend("torch", None, "torch", True, ()),
        InferenceBackend("onnx", "onnx", "onnxruntime", True, ("onnx", "onnxruntime")),
        InferenceBackend("onnx-int8", "onnx-int8", "onnxruntime", False, ("onnx", "onnxruntime")),
        InferenceBackend("openvino", "onnx", "openvino", True, ("onnx", "openvino")),
        InferenceBackend("openvino-bf16", "onnx", "openvino", False, ("onnx", "openvino"), "bf16"),
    )
}


def require_packages(backend: InferenceBackend) -> None:
    """Refuse ``backend`` in one line when its optional packages are missing (``pip install 'tuner[fast]'``)."""
    missing = [name for name in backend.packages if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(
            f"embedding.backend: {backend.name} needs the optional packages {', '.join(missing)}: pip install 'tuner[fast]'"
        )


def model_digest(folder: str | Path) -> str:
    """sha256 over the relative paths and bytes of every file in a model folder: the model an export was made from."""
    root = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _tool_versions(export: str) -> tuple[str, ...]:
    names = ("torch", "onnx") if export == "onnx" else ("torch", "onnx", "onnxruntime")
    return tuple(f"{name}=={importlib.metadata.version(name)}" for name in names)


def exported_file(model: SentenceTransformer, model_path: str, export: Literal["onnx", "onnx-int8"], cache: DiskCache) -> Path:
    """The ONNX file of ``model`` (loaded from ``model_path`` with torch) for ``export``, from the cache, exported
    there first when missing (with a progress line: a few seconds for MiniLM)."""
    digest = model_digest(model_path)
    key = content_key("model-export", EXPORT_FORMAT, digest, export, ONNX_OPSET, *_tool_versions(export))

    def build(folder: Path) -> None:
        started = time.perf_counter()
        log.info("exporting %s for embedding.backend %s (once; kept in %s)", model_path, export, cache.root / "models")
        if export == "onnx":
            _export_onnx(model, folder / "model.onnx")
        else:
            _quantize_int8(exported_file(model, model_path, "onnx", cache), folder / "model.onnx")
        log.info("exported %s for %s in %.1fs", Path(model_path).name, export, time.perf_counter() - started)

    return cache.get_or_build("models", key, build, lambda folder: folder / "model.onnx")


def _export_onnx(model: SentenceTransformer, target: Path) -> None:
    import torch

    transformer = cast("torch.nn.Module", model[0].model)
    names = _input_names(model)
    sample = model.tokenizer(["an export sample", "a second, longer export sample"], padding=True, return_tensors="pt")

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return cast("torch.Tensor", self.transformer(**dict(zip(names, inputs))).last_hidden_state)

    axes = {name: {0: "batch", 1: "sequence"} for name in (*names, "last_hidden_state")}
    with warnings.catch_warnings():  # tracer notes about Python control flow the fixed graph does not need
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHidden().eval(), tuple(sample[name] for name in names), str(target), input_names=list(names),
            output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=ONNX_OPSET, dynamo=False,
        )


def _quantize_int8(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    prepared = target.with_name("prepared.onnx")
    quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
    quantize_dynamic(str(prepared), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=False)
    prepared.unlink()


def _input_names(model: SentenceTransformer) -> tuple[str, ...]:
    """The transformer inputs the model's tokenizer produces, in export order."""
    produced = model.tokenizer(["probe"], return_tensors="np")
    return tuple(name for name in _MODEL_INPUTS if name in produced)


def _runner(backend: InferenceBackend, file: Path) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    """A function from the token arrays of a batch to its last hidden state, on the backend's runtime (CPU)."""
    if backend.runtime == "onnxruntime":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(file), providers=["CPUExecutionProvider"])
        return lambda arrays: np.asarray(session.run(["last_hidden_state"], arrays)[0])
    import openvino

    compiled = openvino.Core().compile_model(str(file), "CPU", {"INFERENCE_PRECISION_HINT": backend.precision})
    return lambda arrays: np.asarray(compiled(arrays)[0])


def use_backend(model: SentenceTransformer, model_path: str, backend: InferenceBackend, cache: DiskCache) -> None:
    """Make ``model`` (loaded with torch on the CPU) run its transformer on ``backend``: the torch transformer is
    replaced by the exported graph and freed. Only models whose first module is a Hugging Face transformer
    taking token ids can be exported."""
    import torch
    from sentence_transformers.base.modules.transformer import Transformer

    if backend.export is None:
        return
    if not isinstance(model[0], Transformer) or not hasattr(model[0].model, "config"):
        raise UserError(f"embedding.backend: {backend.name} runs transformer models; {model_path} starts with {type(model[0]).__name__}")
    run = _runner(backend, exported_file(model, model_path, backend.export, cache))
    names = _input_names(model)
    config = model[0].model.config

    class ExportedTransformer(torch.nn.Module):
        """Stands in for the transformer: the same inputs, the same ``last_hidden_state``, from the exported graph."""

        def __init__(self) -> None:
            super().__init__()
            self.config = config

        @property
        def device(self) -> torch.device:
            return torch.device("cpu")

        def forward(self, **features: Any) -> dict[str, torch.Tensor]:
            arrays = {name: features[name].numpy().astype(np.int64) for name in names}
            return {"last_hidden_state": torch.from_numpy(run(arrays))}

    model[0].model = ExportedTransformer()
