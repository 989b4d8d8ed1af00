"""Dataset (**dataset** → text analysis): a knowledge base, i.e. a dataset folder that may not have a golden set yet,
the input of the golden-set commands (``tuner golden from-log``, ``synth``, ``review``)."""

from __future__ import annotations

from pathlib import Path

from tuner.dataset._load import CONFLICTS, CORPUS, GOLDEN, MANIFEST, _load_conflicts, _load_corpus, _Problems, _read_manifest, load_dataset, with_language
from tuner.dataset._model import Dataset, hash_files
from tuner.errors import DatasetError, UserError


def load_knowledge_base(path: Path) -> Dataset:
    """A dataset folder with ``corpus.jsonl`` and, optionally, ``dataset.yaml``, ``conflicts.jsonl`` and
    ``golden.jsonl``: with a golden set it is :func:`load_dataset`; without, the same validation of the other
    files and an empty ``golden``. Problems raise :class:`DatasetError` (``file:line: what``)."""
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: knowledge base folder not found")
    if (root / GOLDEN).is_file():
        return load_dataset(root)
    if not (root / CORPUS).is_file():
        raise DatasetError([f"{root / CORPUS}: missing (a knowledge base needs corpus.jsonl)"])
    problems = _Problems()
    corpus = _load_corpus(root / CORPUS, problems)
    doc_ids = {doc.doc_id for doc in corpus}
    conflicts_path = root / CONFLICTS
    conflicts = _load_conflicts(conflicts_path, doc_ids, problems) if conflicts_path.is_file() else []
    declared, models = _read_manifest(root / MANIFEST, problems)
    if problems.lines:
        raise DatasetError(problems.lines)
    files = [root / CORPUS, *(p for p in (conflicts_path, root / MANIFEST) if p.is_file())]
    return with_language(Dataset(root, tuple(corpus), (), tuple(conflicts), hash_files(files)), declared, models)
