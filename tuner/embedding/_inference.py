"""Indexes (chunks → **indexes** → candidates): faster inference for local embedding models (``embedding.backend``).

A backend runs the transformer of a sentence-transformers model folder; tokenization, pooling and normalization stay
the folder's own (:mod:`tuner.embedding._folder`), so every backend gives the same kind of vector from the same text:

==============  ============================================================================================
backend         what runs the transformer
==============  ============================================================================================
``torch``       PyTorch, fp32: the reference
``onnx``        ONNX Runtime on the model exported to ONNX, fp32 (vectors equal torch's to float rounding)
``onnx-int8``   ONNX Runtime on that export with int8 weights (dynamic quantization): other vectors
``openvino``    OpenVINO on the same ONNX export, precision pinned to fp32 (its CPU default may be bf16)
``openvino-bf16`` OpenVINO on that export computing in bfloat16 where the CPU has it (AVX-512 BF16, AMX):
                other vectors, closer to torch's than int8's (cosine ≈ 0.99997)
``auto``        the fastest of the above that is installed and whose vectors agree with torch's on this CPU
                (:func:`choose_backend`), else torch
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
import json
import logging
import os
import platform
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from tuner.cache import DiskCache, content_key
from tuner.embedding._folder import MODEL_INPUTS
from tuner.errors import NotATransformer, UserError
from tuner.extras import extra_line

if TYPE_CHECKING:
    import torch

    from tuner.embedding._folder import TextEncoderModel

log = logging.getLogger(__name__)

Backend = Literal["torch", "onnx", "onnx-int8", "openvino", "openvino-bf16", "auto"]
"""``embedding.backend`` values: a name of :data:`BACKENDS`, or ``auto`` (:func:`choose_backend`)."""

EXPORT_FORMAT = 1
"""Bumped when the export below changes, so entries written by an older one are not read."""

ONNX_OPSET = 17


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
    """Refuse ``backend`` in one line when its optional packages are missing (the ``fast`` extra brings them all)."""
    missing = [name for name in backend.packages if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(extra_line(f"embedding.backend: {backend.name}", "fast", missing))


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


def exported_file(model: TextEncoderModel, model_path: str, export: Literal["onnx", "onnx-int8"], cache: DiskCache) -> Path:
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


def _export_onnx(model: TextEncoderModel, target: Path) -> None:
    import torch

    transformer = model.transformer
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


def _input_names(model: TextEncoderModel) -> tuple[str, ...]:
    """The transformer inputs the model's tokenizer produces, in export order."""
    produced = model.tokenizer(["probe"], return_tensors="np")
    return tuple(name for name in MODEL_INPUTS if name in produced)


def _runner(backend: InferenceBackend, file: Path) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    """A function from the token arrays of a batch to its last hidden state, on the backend's runtime (CPU)."""
    if backend.runtime == "onnxruntime":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(file), providers=["CPUExecutionProvider"])
        return lambda arrays: np.asarray(session.run(["last_hidden_state"], arrays)[0])
    import openvino

    compiled = openvino.Core().compile_model(str(file), "CPU", {"INFERENCE_PRECISION_HINT": backend.precision})
    return lambda arrays: np.asarray(compiled(arrays)[0])


def first_module_if_not_a_transformer(model: TextEncoderModel) -> str | None:
    """The class name of ``model``'s first module when it is not a Hugging Face transformer taking token ids (a
    static-embedding lookup table, say: no exported backend runs it, only torch), else None."""
    try:
        model.transformer
    except NotATransformer as first:
        return str(first)
    return None


def use_backend(model: TextEncoderModel, model_path: str, backend: InferenceBackend, cache: DiskCache) -> None:
    """Make ``model`` (loaded with torch on the CPU) run its transformer on ``backend``: the torch transformer is
    replaced by the exported graph and freed. Only models whose first module is a Hugging Face transformer
    taking token ids can be exported (one line otherwise)."""
    import torch

    if backend.export is None:
        return
    first = first_module_if_not_a_transformer(model)
    if first is not None:
        raise UserError(f"embedding.backend: {backend.name} runs transformer models; {model_path} starts with {first}")
    config = model.transformer.config
    run = _runner(backend, exported_file(model, model_path, backend.export, cache))
    names = _input_names(model)

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

    model.transformer = ExportedTransformer()


AUTO_AGREEMENT = 0.9999
"""``auto`` takes a backend only when every probe vector has at least this cosine with torch fp32's."""

CHOICE_FORMAT = 1
"""Bumped when the measurement below changes, so choices it made before are measured again."""

PROBE_TEXTS: tuple[str, ...] = (
    "How long is the warranty on the Aurora X2 vacuum?",
    "The warranty covers parts and labour for 24 months from the date of purchase.",
    "Returns are accepted within 30 days if the product is unused and in its original packaging.",
    "Model B-17 ships with a 65 W charger; the 2023 edition ships with a 45 W one.",
    "Who wrote the novel that the 1962 film was based on?",
    "Reginald C. Punnett, the geneticist, devised the square that is named after him.",
    "The bridge opened to traffic on 4 September 2016 after six years of construction.",
    "Battery life: about 11 hours of video playback, 9 hours of web browsing over Wi-Fi.",
    "Error E4 means the water tank is empty: refill it and press start again.",
    "ok",
    "Thanks!",
    "Where can I download the user manual as a PDF, and is there a version in Spanish?",
    "保修期是多久？",
    "本产品自购买之日起享受两年免费保修，人为损坏除外。",
    "2016年9月4日，该项目的总投资达到1361万元。",
    "退货须在签收后七天内申请，商品需保持完好，运费由买家承担。",
    "请问这款手机支持无线充电吗？最大功率是多少瓦？",
    "旧版说明书写的是百分之五的手续费，新版已改为百分之三。",
    "Aurora X2 的电池容量为 5000 mAh，充满约需 90 分钟。",
    "会员积分在每年十二月三十一日清零，未使用的积分不予保留。",
    "The chunk is long on purpose: " + "retrieval settings trade recall against the chance that a conflicting "
    "passage reaches the model, and every knob moves both. " * 6,
    "长文本探针：" + "检索设置在召回率与冲突段落进入上下文的风险之间取舍，每个参数都会同时影响两者。" * 6,
    "SKU 4411-XL, 230 V / 50 Hz, 1.8 kg, IP54",
    "Is the discount code SAVE10 still valid after the price change on 1 March?",
)
"""The fixed texts ``auto`` measures on: English and Chinese, questions and passages, one word to a few hundred
tokens, numbers, units and mixed scripts (what a study embeds)."""


PROBE_BATCH = 8


@dataclass(frozen=True)
class BackendChoice:
    """What ``auto`` chose for a model on this machine: ``backend``, and per backend measured, the lowest cosine of
    its probe vectors with torch's and its probe texts per second (``measured``); ``cached``: read from an earlier
    measurement rather than measured now."""

    backend: str
    measured: Mapping[str, tuple[float, float]]
    cached: bool

    def describe(self) -> str:
        """One line: the choice, and what it was chosen over."""
        torch_rate = self.measured["torch"][1]
        parts = [
            f"{name} {rate / torch_rate:.2f}× torch, cosine {cosine:.6f}"
            + ("" if cosine >= AUTO_AGREEMENT else " (disagrees)")
            for name, (cosine, rate) in self.measured.items() if name != "torch"
        ]
        where = "measured earlier on this machine" if self.cached else "measured now, once for this machine"
        return f"embedding.backend auto: {self.backend} ({'; '.join(parts) or 'no other backend installed'}; {where})"


def machine_identity() -> str:
    """What makes a speed measurement of this machine's CPU valid elsewhere: architecture, core count, CPU model
    and instruction-set flags (so a container moved to another host type measures again)."""
    cpu = ""
    try:
        first = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split("\n\n")[0]
        cpu = "\n".join(line for line in first.splitlines() if line.split(":")[0].strip() in ("model name", "flags"))
    except OSError:
        cpu = platform.processor()
    return f"{platform.machine()}|{os.cpu_count()}|{hashlib.sha256(cpu.encode()).hexdigest()}"


def _installed_versions() -> tuple[str, ...]:
    names = ("torch", "transformers", "sentence-transformers", "onnx", "onnxruntime", "openvino")
    versions = []
    for name in names:
        try:
            versions.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return tuple(versions)


def installed_backends() -> list[InferenceBackend]:
    """The backends of :data:`BACKENDS` whose packages are installed, torch first."""
    return [b for b in BACKENDS.values() if all(importlib.util.find_spec(name) is not None for name in b.packages)]


def quiet_model_loading() -> None:
    """Turn off the progress bars transformers and the Hugging Face hub draw while a model loads ("Loading weights"):
    tuner reports its own progress, and a bar per load buries it."""
    from huggingface_hub.utils.tqdm import disable_progress_bars
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    disable_progress_bars()


def choose_backend(model_path: str, cache: DiskCache) -> BackendChoice:
    """The backend ``auto`` runs ``model_path`` on, on the CPU: the fastest installed backend whose vectors of
    :data:`PROBE_TEXTS` all have cosine ≥ :data:`AUTO_AGREEMENT` with torch fp32's, else torch.

    Measured once per machine (:func:`machine_identity`), model (the content of its folder) and installed versions
    of the runtimes, and kept in the tuner cache (``models/``), so a later start reads the choice: each backend
    encodes the probe once to warm up, then its speed is the best of three timed passes (batches of
    :data:`PROBE_BATCH`, so the probe's long texts do not pad every short one)."""
    key = content_key("backend-choice", CHOICE_FORMAT, EXPORT_FORMAT, model_digest(model_path), machine_identity(),
                      _installed_versions(), PROBE_TEXTS, PROBE_BATCH)

    def build(folder: Path) -> None:
        log.info("embedding.backend auto: measuring the installed backends on %s (once for this machine: a minute or two; "
                 "embedding: {backend: NAME} in the study skips it)", model_path)
        measured = _measure(model_path, cache)
        (folder / "choice.json").write_text(json.dumps({"measured": measured}, indent=1))

    cached = cache.entry_dir("models", key).exists()
    measured = cache.get_or_build("models", key, build, lambda folder: json.loads((folder / "choice.json").read_text())["measured"])
    rates = {name: (float(cosine), float(rate)) for name, (cosine, rate) in measured.items()}
    return BackendChoice(fastest_agreeing(rates), rates, cached)


AUTO_MARGIN = 1.1
"""How much faster than the fastest backend storing torch's vectors a backend with vectors of its own must be to be
chosen: its vectors are stored apart (:class:`InferenceBackend`), so the vectors an earlier fp32 run stored are not
reused, and within timing noise that is not worth it."""


def fastest_agreeing(measured: Mapping[str, tuple[float, float]]) -> str:
    """The backend of ``measured`` (name → (lowest cosine with torch, texts/s)) with the most texts per second among
    those with cosine ≥ :data:`AUTO_AGREEMENT`, torch (the reference, always measured) when none is faster; one whose
    vectors are stored apart from torch's (``openvino-bf16``) only when :data:`AUTO_MARGIN` times faster than the
    fastest whose vectors are stored with them.

    >>> fastest_agreeing({"torch": (1.0, 20.0), "onnx-int8": (0.93, 60.0), "openvino": (0.99999, 45.0)})
    'openvino'
    >>> fastest_agreeing({"torch": (1.0, 20.0), "openvino": (1.0, 45.0), "openvino-bf16": (0.99999, 48.0)})
    'openvino'
    """
    agreeing = [name for name, (cosine, _) in measured.items() if cosine >= AUTO_AGREEMENT]
    shared = max(["torch", *(n for n in agreeing if BACKENDS[n].reference_vectors)], key=lambda n: measured[n][1])
    apart = [n for n in agreeing if not BACKENDS[n].reference_vectors]
    best_apart = max(apart, key=lambda n: measured[n][1], default=None)
    if best_apart is not None and measured[best_apart][1] >= AUTO_MARGIN * measured[shared][1]:
        return best_apart
    return shared


def _measure(model_path: str, cache: DiskCache) -> dict[str, tuple[float, float]]:
    """Per installed backend: (lowest cosine of its probe vectors with torch's, probe texts per second)."""
    from tuner.embedding._folder import load_text_encoder

    quiet_model_loading()
    texts = list(PROBE_TEXTS)
    reference: np.ndarray | None = None
    measured: dict[str, tuple[float, float]] = {}
    backends = installed_backends()
    began = time.perf_counter()
    for number, backend in enumerate(backends, start=1):
        log.info("embedding.backend auto: measuring %s (%d of %d, %.0f s so far)", backend.name, number, len(backends),
                 time.perf_counter() - began)
        model = load_text_encoder(model_path, "cpu")
        use_backend(model, model_path, backend, cache)

        def encode() -> np.ndarray:
            return model.encode(texts, None, PROBE_BATCH)

        vectors = encode()
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            encode()
            timings.append(time.perf_counter() - started)
        if reference is None:
            reference = vectors
        cosine = float(np.min(np.sum(reference * vectors, axis=1)))
        measured[backend.name] = (cosine, len(texts) / min(timings))
        log.info("embedding.backend auto: %s: %.1f probe texts/s, lowest cosine with torch %.6f",
                 backend.name, measured[backend.name][1], cosine)
        first = first_module_if_not_a_transformer(model)  # only torch (installed first) gets here with such a model
        if first is not None and number < len(backends):  # the backends left all export a transformer
            log.info("embedding.backend auto: %s starts with %s, which only torch runs: %s not measured", model_path,
                     first, ", ".join(b.name for b in backends[number:]))
            break
    return measured
