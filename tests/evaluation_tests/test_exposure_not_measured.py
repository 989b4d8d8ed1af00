"""``tuner eval`` over a retrieval whose conflicting chunks tuner cannot tell (an attached collection, a service) says
its conflict exposure is not measured, as a study's trial does (issue 52 §3), in the JSON and under the table: never
a bare null that reads as "no conflicts"."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from tuner.commands._render import retrieval_table
from tuner.dataset import load_dataset
from tuner.embedding import EmbeddingContext
from tuner.evaluation import EXPOSURE_UNKNOWN, RetrievalReport, evaluate_retrieval
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings


class Unseen(RetrievalPipeline):
    """A pipeline that, like an attached collection or a service, does not tell which of its chunks conflict."""

    searches_conflicts = False


def _caption(report: RetrievalReport) -> str:
    console = Console(width=400, record=True)
    console.print(retrieval_table(report))
    return console.export_text()


def test_eval_says_exposure_not_measured_where_the_pipeline_cannot_tell(
    tiny_dataset_dir: Path, embeddings: EmbeddingContext
) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    assert dataset.conflicts  # measured in memory: a figure, not "not measured"
    settings = RetrievalSettings(retriever="bm25", top_k=2)
    measured = evaluate_retrieval(RetrievalPipeline(dataset, embeddings=embeddings), settings)
    assert measured.exposure_not_measured is None and set(measured.to_dict()["conflict_exposure"]) >= {"value", "ci"}
    unseen = evaluate_retrieval(Unseen(dataset, embeddings=embeddings), settings)
    assert unseen.exposed is None and unseen.exposure_not_measured == EXPOSURE_UNKNOWN
    assert unseen.to_dict()["conflict_exposure"] == {"not_measured": EXPOSURE_UNKNOWN}
    assert f"conflict exposure not measured: {EXPOSURE_UNKNOWN}" in " ".join(_caption(unseen).split())
    assert "conflict exposure (cases shown" in _caption(measured)
