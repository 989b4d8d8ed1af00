from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import optuna
import pytest
import yaml

import tuner
from tuner.cli import main
from tuner.dataset import Document, load_dataset
from tuner.embedding import EmbeddingContext
from tuner.deploy import Retriever
from tuner.evaluation import evaluate_retrieval
from tuner.export import export_document, read_export, write_export
from tuner.io import write_jsonl
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.front import TrialRecord, study_front
from tuner.text import split_sentences

SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 4},
    "retriever": {"type": "categorical", "choices": ["bm25", "dense", "hybrid"]},
    "chunk_size": {"type": "categorical", "choices": [20, 40]},
    "rerank_strength": {"type": "float", "low": 0.0, "high": 0.6, "step": 0.15},
    "relevance_threshold": {"type": "float", "low": 0.0, "high": 0.3, "step": 0.05},
    "hybrid_weight": {"type": "float", "low": 0.1, "high": 0.9, "step": 0.1},
    "fusion": {"type": "categorical", "choices": ["blend", "rrf"]},
    "rrf_k": {"type": "categorical", "choices": [5, 60]},
    "version_policy": {"type": "categorical", "choices": ["all", "latest"]},
    "recency_weight": {"type": "float", "low": 0.0, "high": 0.4, "step": 0.2},
    "recency_half_life_days": {"type": "categorical", "choices": [30.0, 365.0]},
    "dedupe": {"type": "categorical", "choices": [1.0, 0.8]},
}


def _dated_copy(source: Path, target: Path) -> Path:
    """The tiny dataset with a date (a month apart) and a family on every corpus document, so that the recency
    and version knobs change scores in the round trip."""
    target.mkdir()
    for name in ("golden.jsonl", "conflicts.jsonl"):
        (target / name).write_bytes((source / name).read_bytes())
    rows = [json.loads(line) for line in (source / "corpus.jsonl").read_text().splitlines() if line.strip()]
    for month, row in enumerate(rows, start=1):
        row["metadata"] = {"family": row["doc_id"], "date": f"2024-{month:02d}-01"}
    write_jsonl(target / "corpus.jsonl", rows)
    return target


@pytest.mark.slow
def test_every_front_trial_exported_and_rebuilt_returns_the_chunks_its_evaluation_ranked(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    dated = _dated_copy(tiny_dataset_dir, tmp_path / "dated")
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    study_file = tmp_path / "study.yaml"
    study_file.write_text(yaml.safe_dump({
        "name": "roundtrip", "dataset": str(dated), "search_space": "space.yaml",
        "settings": {"candidate_depth": 10}, "budget": {"trials": 6}, "pruning": {"enabled": False},
        "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}, "sampler": {"name": "random", "seed": 3},
        "enqueue": [{"top_k": 3, "retriever": "hybrid", "chunk_size": 20, "rerank_strength": 0.45,
                     "relevance_threshold": 0.15, "hybrid_weight": 0.7, "version_policy": "latest",
                     "recency_weight": 0.2, "recency_half_life_days": 30.0, "dedupe": 0.8},
                    {"top_k": 2, "retriever": "hybrid", "fusion": "rrf", "rrf_k": 5, "chunk_size": 40, "rerank_strength": 0.0,
                     "relevance_threshold": 0.0, "version_policy": "all", "recency_weight": 0.0, "dedupe": 1.0}],
        "output": "out",
    }))
    assert main(["-q", "run", str(study_file), "--no-report"]) == 0
    study = optuna.load_study(study_name="roundtrip", storage=f"sqlite:///{tmp_path / 'out' / 'roundtrip' / 'study.db'}")
    _, _, front = study_front(study)
    assert front
    dataset = load_dataset(dated)
    pipeline = RetrievalPipeline(dataset)
    blended = versioned = 0
    # the front's trials and the enqueued ones: trial 0 turns the version knobs, trial 1 fuses by reciprocal rank
    for number in sorted({entry.number for entry in front} | {0, 1}):
        trial = study.trials[number]
        measured = RetrievalSettings(**(TrialRecord.from_trial(trial).settings or {}))
        # the pipeline re-run on the trial's own settings is the trial's evaluation: it gives its recall@k
        assert evaluate_retrieval(pipeline, measured, "clean").overall["recall_at_k"].value == pytest.approx(trial.values[0])
        expected = pipeline.retrieve(measured, "clean")
        for suffix in (".yaml", ".env"):
            exported = tmp_path / f"trial{number}{suffix}"
            assert main(["export", str(study_file), "--trial", str(number), "-o", str(exported)]) == 0
            retriever = Retriever.from_config(exported, corpus=dated)
            for context, case in zip(expected, dataset.golden):
                got = retriever.retrieve(case.question)
                assert [c.metadata["chunk_id"] for c in got] == [c.chunk_id for c in context.chunks], (number, case.id)
                assert [c.score for c in got] == pytest.approx(list(context.scores), abs=1e-6)
        blended += measured.rerank_strength > 0
        versioned += measured.recency_weight > 0 and measured.dedupe < 1
        assert "0000000" not in exported.read_text()  # floats rounded to the search space's step
    assert blended, "the front should hold a trial that blends reranker scores"
    # version_policy cannot act here (each document is its own family, so none is stale): the run fixes it at all
    assert versioned, "the enqueued trial uses recency and dedupe"
    assert (TrialRecord.from_trial(study.trials[1]).settings or {})["fusion"] == "rrf"
    for framework in ("langchain", "llamaindex"):
        native = tmp_path / f"{framework}.yaml"
        assert main(["export", str(study_file), "--pick", "knee", "--format", framework, "-o", str(native)]) == 0
        assert yaml.safe_load(native.read_text())["framework"] == framework


def _shop() -> list[Document]:
    return [
        Document("warranty", "All laptops carry a 2-year limited warranty covering manufacturing defects.", "Warranty",
                 {"team": "support"}),
        Document("returns", "Customers may return any product within 30 days of delivery for a full refund.", "Returns",
                 {"team": "sales"}),
        Document("shipping", "Standard shipping takes 3 to 5 business days. Express shipping costs $15.", "Shipping",
                 {"team": "sales"}),
    ]


def _settings(**settings: object) -> RetrievalSettings:
    return RetrievalSettings(**{"top_k": 2, "chunk_size": 16, "retriever": "hybrid", "candidate_depth": 10,
                                "rerank_strength": 0.3, **settings})  # type: ignore[arg-type]


def _config(tmp_path: Path, suffix: str = ".yaml", **settings: object) -> Path:
    values = _settings(**settings).model_dump()
    return write_export(tmp_path / f"deploy{suffix}", export_document(values, {"study": "shop", "trial": 7}))


def test_retrieved_chunks_carry_text_span_score_and_metadata(tmp_path: Path) -> None:
    retriever = tuner.Retriever.from_config(_config(tmp_path), corpus=_shop())
    best = retriever.retrieve("How long is the warranty on laptops?")[0]
    document = _shop()[0]
    assert best.doc_id == "warranty" and document.text[best.span[0]:best.span[1]] == best.text
    assert 0.0 < best.score <= 1.0 and best.metadata["team"] == "support" and best.metadata["title"] == "Warranty"
    assert len(retriever.retrieve("shipping", top_k=1)) == 1
    assert {c.doc_id for c in retriever.retrieve("How long is the warranty?", filters={"team": "sales"})} <= {"returns", "shipping"}
    with pytest.raises(ValueError, match="candidate_depth"):
        retriever.retrieve("warranty", top_k=11)


def test_an_unseen_question_embeds_only_itself_and_writes_nothing_to_the_store(tmp_path: Path) -> None:
    embeddings = EmbeddingContext()
    retriever = Retriever.from_config(_config(tmp_path), corpus=_shop(), embeddings=embeddings)
    encoder = embeddings.encoder(retriever.settings.embedding_model)
    sentences = [s for doc in _shop() for s in split_sentences(doc.text)]
    assert encoder.missing(sentences) == []  # the reranker's sentence vectors were stored when the index was built
    question = "Is accidental damage covered by the laptop warranty, ticket 7413?"
    before = encoder.texts_encoded
    first = retriever.retrieve(question)
    assert encoder.texts_encoded - before == 1  # the question, once, for the first stage and the reranker both
    assert retriever.retrieve(question) == first and encoder.texts_encoded - before == 1
    assert encoder.with_prompt(retriever.settings.query_prompt).missing([question]) == [question]


def test_a_configuration_that_never_embeds_is_served_without_torch(tmp_path: Path, tiny_dataset_dir: Path) -> None:
    """BM25 without a rerank or dedupe never runs the embedding model, so building its retriever (what ``tuner serve``
    does before it is ready) imports neither torch nor sentence-transformers: ~8 s of CPU less at every start."""
    import subprocess
    import sys

    config = write_export(tmp_path / "deploy.yaml", export_document(
        RetrievalSettings(top_k=3, chunk_size=32, retriever="bm25").model_dump(), {"study": "tiny", "trial": 0}))
    code = (f"import sys\nfrom tuner.deploy import Retriever\n"
            f"retriever = Retriever.from_config({str(config)!r}, corpus={str(tiny_dataset_dir)!r})\n"
            "assert retriever.retrieve('How long is the laptop warranty?')\n"
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "TUNER_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.strip() == "[]"


# a setting off its default in every stage (the rerank stage's only setting, the reranker, offline has one choice; it
# acts through rerank_strength): an update that chunks, embeds, searches or ranks new documents otherwise than a
# fresh build does fails the test below
EVERY_STAGE: dict[str, object] = {
    "chunk_unit": "chars", "chunk_size": 60, "chunk_overlap": 0.2,
    "query_prompt": "query: ", "document_prompt": "passage: ",
    "fusion": "rrf", "rrf_k": 5, "dense_index": "hnsw",
    "relevance_threshold": 0.01, "dedupe": 0.98,
}


def test_the_update_parity_settings_leave_no_stage_at_its_defaults() -> None:
    from tuner.settings import STAGES, stage_fields

    settings, default = _settings(**EVERY_STAGE), RetrievalSettings()
    for stage in STAGES:
        moved = [name for name in stage_fields(stage) if getattr(settings, name) != getattr(default, name)]
        assert moved or stage == "rerank", f"no setting of stage {stage} differs from its default"


@pytest.mark.slow
def test_added_superseded_and_deleted_documents_match_a_fresh_build(tmp_path: Path) -> None:
    config = _config(tmp_path, **EVERY_STAGE)
    retriever = Retriever.from_config(config, corpus=_shop())
    newer = Document("warranty", "All laptops now carry a 3-year warranty, accidental damage included.", "Warranty")
    added = Document("security", "Passwords must be at least 12 characters long.", "Security")
    assert retriever.add_documents([newer, added]) >= 2
    assert retriever.delete_documents(["returns", "unknown"]) == 1
    fresh = Retriever.from_config(config, corpus=[_shop()[2], newer, added])
    for query in ("How long is the warranty?", "return a product within 30 days", "password length", "express shipping"):
        got = retriever.retrieve(query, top_k=5)
        assert all(c.doc_id != "returns" and "2-year" not in c.text for c in got)
        assert [(c.doc_id, c.span) for c in got] == [(c.doc_id, c.span) for c in fresh.retrieve(query, top_k=5)]
        assert [c.score for c in got] == pytest.approx([c.score for c in fresh.retrieve(query, top_k=5)], abs=1e-6)
    assert retriever.document_count == 3


def test_updates_while_other_threads_retrieve(tmp_path: Path) -> None:
    retriever = Retriever.from_config(_config(tmp_path, retriever="bm25", rerank_strength=0.0), corpus=_shop())
    failures: list[BaseException] = []
    stop = threading.Event()

    def ask() -> None:
        while not stop.is_set():
            try:
                after_delete = deleted.is_set()  # read before the query starts: a query begun earlier may see the old index
                assert not after_delete or "returns" not in {c.doc_id for c in retriever.retrieve("return within 30 days")}
            except BaseException as exc:  # noqa: BLE001 (collected and re-raised in the test thread)
                failures.append(exc)
                return

    deleted = threading.Event()
    readers = [threading.Thread(target=ask) for _ in range(3)]
    for reader in readers:
        reader.start()
    for n in range(5):
        retriever.add_documents([Document(f"note-{n}", f"Note {n}: returns are handled by the sales team.")])
    retriever.delete_documents(["returns"])
    deleted.set()
    retriever.add_documents([Document("faq", "Customers may return products within 30 days.")])
    stop.set()
    for reader in readers:
        reader.join()
    assert not failures
    assert "returns" not in {c.doc_id for c in retriever.retrieve("return within 30 days", top_k=5)}


def test_env_export_reads_back_the_same_settings_and_provenance(tmp_path: Path) -> None:
    yaml_config = read_export(_config(tmp_path, ".yaml", query_prompt="query: ", relevance_threshold=0.15000000000000002))
    env_path = _config(tmp_path, ".env", query_prompt="query: ", relevance_threshold=0.15000000000000002)
    env_config = read_export(env_path)
    assert env_config.settings == yaml_config.settings and env_config.settings.query_prompt == "query: "
    assert env_config.provenance == yaml_config.provenance == {"study": "shop", "trial": 7, "tool": f"tuner {tuner.__version__}"}
    assert 'TUNER_QUERY_PROMPT="query: "' in env_path.read_text()


def test_bad_env_key_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.env"
    bad.write_text("OTHER_TOOL=1\nTUNER_TOP_KK=3\n")
    with pytest.raises(tuner.UserError, match=r"bad.env:2: TUNER_TOP_KK: not a retrieval setting"):
        read_export(bad)
    bad.write_text("TUNER_TOP_K=0\n")
    with pytest.raises(tuner.UserError, match=r"bad.env: top_k"):
        read_export(bad)


def test_exports_honour_the_umask_and_round_floats_to_the_step(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = write_export(tmp_path / "out" / "deploy.yaml", export_document({"rerank_strength": 0.15000000000000002,
                                                                             "hybrid_weight": 0.30000000000000004},
                                                                            {}, {"rerank_strength": 0.05}))
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    settings = yaml.safe_load(path.read_text())["settings"]
    assert settings["rerank_strength"] == 0.15 and str(settings["rerank_strength"]) == "0.15"
    assert settings["hybrid_weight"] == 0.30000000000000004  # no step known: the value is kept as measured


def test_written_folders_honour_the_umask(tmp_path: Path) -> None:
    from tuner.io import atomic_directory, atomic_write_json

    old = os.umask(0o022)
    try:
        with atomic_directory(tmp_path / "shared") as staging:
            atomic_write_json(staging / "baseline.json", {"recall_at_k": 0.9})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "shared" / "baseline.json").stat().st_mode) == 0o644


def test_cache_entries_honour_the_umask_whatever_their_builder_wrote(tmp_path: Path) -> None:
    """A team-shared cache: a builder whose library writes its files 0600 (safetensors' ``save_file``, as the packaged
    model's conversion uses) still leaves an entry every member of the group can read."""
    import numpy as np
    from safetensors.numpy import save_file

    from tuner.cache import DiskCache

    def build(folder: Path) -> None:
        save_file({"w": np.zeros(2, dtype=np.float32)}, str(folder / "model.safetensors"))
        (folder / "sub").mkdir(mode=0o700)
        (folder / "sub" / "x.json").write_text("{}")
        (folder / "sub" / "x.json").chmod(0o600)

    old = os.umask(0o022)
    try:
        entry = DiskCache(tmp_path / "cache").get_or_build("models", "k", build, lambda folder: folder)
    finally:
        os.umask(old)
    assert {p.relative_to(entry).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in entry.rglob("*")} == {
        "model.safetensors": 0o644, "sub": 0o755, "sub/x.json": 0o644, "MANIFEST.json": 0o644}
