"""Indexes (chunks → **indexes** → candidates): a sentence-transformers model folder, loaded and run.

Importing the ``sentence_transformers`` package costs every process that embeds ~2 s of CPU beyond what loading the
same model with transformers takes (its ``__init__`` imports the trainers, the cross-encoder, scikit-learn and
SciPy): each ``tuner run`` worker and ``tuner serve`` paid it before its first vector. The folders retrieval models
come in are almost all one shape, a Hugging Face encoder, then pooling (mean or CLS), then optionally
normalization, text only, so :class:`FolderModel` reads such a folder's ``modules.json`` and configs and runs those
steps with transformers and torch alone, the way ``SentenceTransformer.encode`` runs them: the same tokenizer
settings, the same batches (texts sorted longest first), the same pooling arithmetic, normalized as tuner asks. Its
vectors are bit-identical to sentence-transformers' (tests/retrieval_tests/test_folder_model.py checks MiniLM,
multilingual-e5-small and a CLS-pooled folder against ``SentenceTransformer``), so the vectors stored and cached
before stay valid. Any other folder (a Dense layer, a router, custom code, max or weighted pooling, a default
prompt, lower-casing, an encoder–decoder) is run by sentence-transformers itself (:class:`SentenceTransformersModel`).

Both are a :class:`TextEncoderModel`: the inference backends (:mod:`tuner.embedding._inference`) replace its
``transformer`` with an exported graph and keep the rest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import numpy as np

from tuner.errors import NotATransformer

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
"""The token arrays an encoder takes, in export order."""

_MODULE_TYPES = {  # the module classes of modules.json this module runs, by every name sentence-transformers writes
    f"sentence_transformers.{where}.{name}": name for name in ("Transformer", "Pooling", "Normalize")
    for where in ("models", "base.modules", "sentence_transformer.modules")
}
_SBERT_KEYS = {"max_seq_length", "do_lower_case"}  # sentence_bert_config.json keys read here; others fall back


class TextEncoderModel(Protocol):
    """A loaded embedding model: its tokenizer, the torch module whose ``last_hidden_state`` it pools (replaceable:
    an inference backend puts its exported graph there) and the normalized vectors of texts."""

    @property
    def tokenizer(self) -> Any: ...

    @property
    def transformer(self) -> torch.nn.Module: ...

    @transformer.setter
    def transformer(self, module: torch.nn.Module) -> None: ...

    def dimension(self) -> int:
        """The length of the vectors."""
        ...

    def to(self, device: str) -> None:
        """Run on ``device`` from now on."""
        ...

    def encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> np.ndarray:
        """Unit-length float32 vectors of ``texts``, each encoded with ``prompt`` before it, ``batch_size`` at a time."""
        ...


@dataclass(frozen=True)
class FolderLayout:
    """What a folder :class:`FolderModel` can run holds: where the encoder is, how many tokens it reads
    (``max_seq_length``, None: the tokenizer's and the model's own limit), the pooling and whether a Normalize
    module follows it."""

    encoder: Path
    max_seq_length: int | None
    pooling: Literal["mean", "cls"]
    dimension: int
    normalize: bool


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def folder_layout(folder: str | Path) -> FolderLayout | None:
    """The layout of the sentence-transformers folder ``folder`` when :class:`FolderModel` runs it as
    sentence-transformers does, None otherwise (the folder is then loaded with sentence-transformers)."""
    root = Path(folder)
    try:
        modules = _read_json(root / "modules.json")
        kinds = [_MODULE_TYPES.get(module.get("type", "")) for module in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        encoder = root / modules[0].get("path", "")
        sbert_file = encoder / "sentence_bert_config.json"
        sbert = _read_json(sbert_file) if sbert_file.exists() else {}
        if set(sbert) - _SBERT_KEYS or sbert.get("do_lower_case", False):
            return None
        model_config = _read_json(encoder / "config.json")
        if model_config.get("auto_map") or model_config.get("is_encoder_decoder"):
            return None
        st_file = root / "config_sentence_transformers.json"
        if st_file.exists() and _read_json(st_file).get("default_prompt_name"):
            return None
        pooling_config = _read_json(root / modules[1]["path"] / "config.json")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None
    pooling = _pooling_mode(pooling_config)
    if pooling is None:
        return None
    return FolderLayout(encoder, sbert.get("max_seq_length"), pooling, int(pooling_config["word_embedding_dimension"]),
                        len(kinds) == 3)


def _pooling_mode(config: dict[str, Any]) -> Literal["mean", "cls"] | None:
    """The single pooling mode of a Pooling config ("mean" or "cls"), in the current (``pooling_mode``) or the legacy
    (``pooling_mode_mean_tokens``…) form; None for any other mode or combination, or a prompt left out of the mean."""
    if not config.get("include_prompt", True):
        return None
    if "pooling_mode" in config:
        mode = config["pooling_mode"]
        modes = [mode] if isinstance(mode, str) else list(mode)
    else:
        legacy = {"cls": "pooling_mode_cls_token", "mean": "pooling_mode_mean_tokens", "max": "pooling_mode_max_tokens",
                  "mean_sqrt_len_tokens": "pooling_mode_mean_sqrt_len_tokens", "weightedmean": "pooling_mode_weightedmean_tokens",
                  "lasttoken": "pooling_mode_lasttoken"}
        modes = [mode for mode, key in legacy.items() if config.get(key)]
    return cast('Literal["mean", "cls"]', modes[0]) if modes in (["mean"], ["cls"]) else None


def load_text_encoder(folder: str, device: str) -> TextEncoderModel:
    """The model of the sentence-transformers folder ``folder`` on ``device``: a :class:`FolderModel` where its
    layout allows (:func:`folder_layout`), else sentence-transformers' own."""
    layout = folder_layout(folder)
    return FolderModel(layout, device) if layout is not None else SentenceTransformersModel(folder, device)


class FolderModel:
    """A Transformer → Pooling (mean or CLS) → optional Normalize folder run with transformers: the steps of
    ``SentenceTransformer.encode`` (sentence-transformers 6.3) for text, in the same order and arithmetic."""

    def __init__(self, layout: FolderLayout, device: str) -> None:
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        self.layout = layout
        config = AutoConfig.from_pretrained(str(layout.encoder))
        self.transformer = AutoModel.from_pretrained(str(layout.encoder), config=config)
        if layout.max_seq_length is not None:
            self.tokenizer = AutoTokenizer.from_pretrained(str(layout.encoder), model_max_length=layout.max_seq_length)
        else:  # sentence-transformers caps the tokenizer's limit at the model's positions
            self.tokenizer = AutoTokenizer.from_pretrained(str(layout.encoder))
            positions = getattr(config, "max_position_embeddings", -1)
            if positions != -1:
                self.tokenizer.model_max_length = min(self.tokenizer.model_max_length, positions)
        self.device = device
        self.transformer.to(device)

    def dimension(self) -> int:
        return self.layout.dimension

    def to(self, device: str) -> None:
        self.device = device
        self.transformer.to(device)

    def encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> np.ndarray:
        import torch

        items = list(texts)
        if not items:
            return np.zeros((0, self.dimension()), dtype=np.float32)
        order = np.argsort([-len(text) for text in items])  # as sentence-transformers sorts: by characters, longest first
        vectors: list[torch.Tensor] = []
        self.transformer.eval()
        with torch.inference_mode():
            for start in range(0, len(items), batch_size):
                batch = [(prompt or "") + items[index] for index in order[start:start + batch_size]]
                vectors.extend(self._embed(batch))
        ordered = torch.stack([vectors[index] for index in np.argsort(order)])
        return np.asarray(ordered.float().numpy(), dtype=np.float32)

    def _embed(self, batch: list[str]) -> torch.Tensor:
        """The pooled, normalized vectors of one batch of texts (prompts already put before them)."""
        import torch

        tokens = self.tokenizer(batch, padding=True, truncation="longest_first", return_tensors="pt")
        inputs = {name: tokens[name].to(self.device) for name in MODEL_INPUTS if name in tokens}
        hidden = self.transformer(**inputs, return_dict=True)["last_hidden_state"]
        mask = inputs["attention_mask"]
        pooled = pool(hidden, mask, self.layout.pooling)
        if self.layout.normalize:  # the folder's Normalize module, then encode's normalize_embeddings: ST runs both
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=-1)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu()


def pool(hidden: torch.Tensor, mask: torch.Tensor, mode: Literal["mean", "cls"]) -> torch.Tensor:
    """Sentence vectors from token vectors ``hidden`` (batch × tokens × d) under ``mask`` (batch × tokens, 1 for a
    token, 0 for padding), as sentence-transformers' Pooling computes them:

    - mean: Σₜ mₜ·hₜ / max(Σₜ mₜ, 1e-9), summed in float32 for half-precision token vectors
    - cls: the vector of the first unmasked token
    """
    import torch

    if mode == "cls":
        first = mask.to(torch.int).argmax(dim=1)
        return torch.gather(hidden, 1, first.unsqueeze(-1).unsqueeze(1).expand(-1, 1, hidden.shape[-1])).squeeze(1)
    accumulate = torch.float32 if hidden.dtype in (torch.float16, torch.bfloat16) else hidden.dtype
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    total = (hidden * weights).sum(dim=1, dtype=accumulate)
    count = torch.clamp(weights.sum(dim=1, dtype=accumulate), min=1e-9)
    return (total / count).to(hidden.dtype)


class SentenceTransformersModel:
    """A folder :class:`FolderModel` does not run, loaded by sentence-transformers; only models whose first module
    is a Hugging Face transformer have a ``transformer`` an inference backend can replace."""

    def __init__(self, folder: str, device: str) -> None:
        from sentence_transformers import SentenceTransformer

        self.folder = folder
        self.model: SentenceTransformer = SentenceTransformer(folder, device=device)

    @property
    def tokenizer(self) -> Any:
        return self.model.tokenizer

    @property
    def transformer(self) -> torch.nn.Module:
        from sentence_transformers.base.modules.transformer import Transformer

        first = self.model[0]
        if not isinstance(first, Transformer) or not hasattr(first.model, "config"):
            raise NotATransformer(type(first).__name__)
        return cast("torch.nn.Module", first.model)

    @transformer.setter
    def transformer(self, module: torch.nn.Module) -> None:
        self.model[0].model = module

    def dimension(self) -> int:
        # sentence-transformers 6 renamed it (the old name warns); 5.x has only the old one
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(dimension() or 0)

    def to(self, device: str) -> None:
        self.model.to(device)

    def encode(self, texts: Sequence[str], prompt: str | None, batch_size: int) -> np.ndarray:
        vectors = self.model.encode(list(texts), prompt=prompt or None, batch_size=batch_size, normalize_embeddings=True,
                                    show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)
