"""Study (study file → **search space** → trials): the knobs that cannot act on a dataset, found before any trial and
kept out of the search, so a study over ``search_spaces/versions.yaml`` wastes no trials on a corpus without metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tuner.dataset import DATE, Conflict, Dataset, Document
from tuner.engine import MemoryEngine, MilvusEngine
from tuner.external import EXTERNAL_KNOBS
from tuner.progress import Reporter
from tuner.retrieval import FILTER_FIELDS, chunk_versions
from tuner.settings import FIRST_STAGES, NO_FILTER, RetrievalSettings, stage_fields
from tuner.study._space import CategoricalParam, SearchSpace

VERSION_KNOBS = ("version_policy", "stale_penalty")
"""What a family with an older dated version acts on (:func:`tuner.retrieval.chunk_versions`)."""
RECENCY_KNOBS = ("recency_weight", "recency_half_life_days")
"""What a document date acts on."""


@dataclass(frozen=True)
class InertKnob:
    """A setting of the space that cannot act on the dataset: ``value`` is what it is fixed at (its neutral value),
    ``why`` says what the dataset lacks."""

    setting: str
    value: Any
    why: str
    choice: str | None = None
    """For one choice of a categorical that cannot act: that choice (a ``metadata_filter``'s name, a ``retriever``);
    ``value`` is what the setting takes when no choice is left."""
    scope: str = "this dataset"
    """What it cannot act on: the dataset, or the study's engine."""

    @property
    def label(self) -> str:
        """The setting, with the choice when it is one: ``metadata_filter: current``."""
        return self.setting if self.choice is None else f"{self.setting}: {self.choice}"

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.label, "value": self.value, "why": self.why}

    def line(self) -> str:
        return f"{self.label} cannot act on {self.scope} ({self.why}): fixed at {self.value}, kept out of the search"


def inert_knobs(space: SearchSpace, dataset: Dataset, base: RetrievalSettings, external: bool = False,
                engine: MemoryEngine | MilvusEngine | None = None) -> list[InertKnob]:
    """The space's settings that cannot change a ranking on ``dataset`` or on ``engine``:

    - with an ``external`` retriever (a service speaking Dify's External Knowledge API), every setting but
      :data:`tuner.external.EXTERNAL_KNOBS` (``top_k``, ``relevance_threshold``): the service is asked nothing else;
    - on a Milvus ``engine``, ``dense_index``: the collection's index is searched, so it is fixed at that index's
      (``engine.dense_index``), and ``hnsw_ef`` or ``ivf_nprobe`` acts exactly where the index reads it; on an
      attached collection also what its rows fix (:func:`engine_knobs`);

    - ``version_policy``, ``stale_penalty``: no document (corpus or conflicting) has an older dated version in its
      ``metadata.family``, so no chunk is ever stale;
    - ``recency_weight``, ``recency_half_life_days``: no document has a ``metadata.date``;
    - a ``metadata_filter`` choice: a filter naming a metadata key no document has (chunk fields such as ``kind``
      always exist); with every filter inert the setting is fixed at ``none``, else only the inert choices go.

    ``dedupe`` compares chunk vectors, not metadata, so it acts on any dataset."""
    if external:
        why = "a retrieval service is asked only top_k and score_threshold"
        return [InertKnob(name, getattr(base, name), why) for name in space.params if name not in EXTERNAL_KNOBS]
    documents: list[Document | Conflict] = [*dataset.corpus, *dataset.conflicts]
    inert: list[InertKnob] = []
    if isinstance(engine, MilvusEngine):
        inert += engine_knobs(space, base, engine)
    if not chunk_versions([d.doc_id for d in documents], dataset.metadata_of, None).stale.any():
        why = "no metadata.family has an older dated version"
        inert += [InertKnob(name, RetrievalSettings.model_fields[name].default, why) for name in VERSION_KNOBS if name in space.params]
    if not any(DATE in d.metadata for d in documents):
        inert += [InertKnob(name, RetrievalSettings.model_fields[name].default, "no document has metadata.date")
                  for name in RECENCY_KNOBS if name in space.params]
    param = space.params.get("metadata_filter")
    if isinstance(param, CategoricalParam):
        keys = {key for d in documents for key in d.metadata}
        for name in param.choices:
            if name == NO_FILTER or not isinstance(name, str) or name not in base.metadata_filters:
                continue
            missing = sorted(key for key in base.metadata_filters[name] if key not in FILTER_FIELDS and key not in keys)
            if missing:
                inert.append(InertKnob("metadata_filter", NO_FILTER, f"no document has metadata.{missing[0]}", choice=name))
    return inert


ATTACH_FIXED: tuple[str, ...] = (*stage_fields("chunking"), "embedding_model", "document_prompt")
"""What an attached collection's rows fix: its chunks and the vectors of its chunks."""
BM25_RETRIEVERS: tuple[str, ...] = tuple(name for name, spec in FIRST_STAGES.items() if spec.bm25)
"""The retrievers that score BM25 terms (``bm25``, ``hybrid``): an attached collection without a BM25 field runs none."""


def engine_knobs(space: SearchSpace, base: RetrievalSettings, engine: MilvusEngine) -> list[InertKnob]:
    """The space's settings a Milvus ``engine`` fixes: ``dense_index`` at the engine's index (the collection's index
    is searched); in attach mode the chunking settings, ``embedding_model`` and ``document_prompt`` at the study's
    values (the collection holds its own chunks and vectors; the model embeds the questions and must be the one the
    collection was built with), and without a BM25 output field (``fields.sparse``) the retrievers that need BM25."""
    scope = "the milvus engine" if engine.collection is None else f"the attached collection {engine.collection}"
    fixed = []
    if "dense_index" in space.params:
        fixed.append(InertKnob("dense_index", engine.dense_index, f"it searches its {engine.index} index", scope=scope))
    if engine.collection is None or engine.fields is None:
        return fixed
    fixed += [InertKnob(name, getattr(base, name), "it holds its own chunks and their vectors", scope=scope)
              for name in ATTACH_FIXED if name in space.params]
    param = space.params.get("retriever")
    if engine.fields.sparse is None and isinstance(param, CategoricalParam):
        fixed += [InertKnob("retriever", "dense", "it has no BM25 output field, fields.sparse", choice=str(choice),
                            scope=scope) for choice in param.choices if choice in BM25_RETRIEVERS]
    return fixed


def active_space(space: SearchSpace, dataset: Dataset, base: RetrievalSettings, reporter: Reporter,
                 external: bool = False, engine: MemoryEngine | MilvusEngine | None = None,
                 ) -> tuple[SearchSpace, list[InertKnob]]:
    """The space a run searches on ``dataset`` and ``engine`` (:func:`without_inert`), each inert knob reported as one
    line first."""
    inert = inert_knobs(space, dataset, base, external, engine)
    for knob in inert:
        reporter.stage(knob.line())
    return without_inert(space, inert), inert


def without_inert(space: SearchSpace, inert: list[InertKnob]) -> SearchSpace:
    """``space`` with every inert setting fixed at its neutral value (a one-choice categorical, so trials record it
    and an enqueued value still fits) and inert choices (of ``metadata_filter``, of ``retriever``) removed: the
    choices left, or the knob's value when none is."""
    params = dict(space.params)
    for knob in inert:
        param = params.get(knob.setting)
        if knob.choice is None and param is not None:
            params[knob.setting] = CategoricalParam(type="categorical", choices=[knob.value])
        elif knob.choice is not None and isinstance(param, CategoricalParam):
            params[knob.setting] = CategoricalParam(type="categorical", choices=[
                c for c in param.choices if c != knob.choice] or [knob.value])
    return SearchSpace(params, space.source, space.conditional)


def enqueued_params(params: dict[str, Any], inert: list[InertKnob]) -> dict[str, Any]:
    """An enqueued configuration without the values of inert knobs (they change nothing on this dataset, and a value
    off the fixed one-choice distribution could not be enqueued); a ``metadata_filter`` that cannot act becomes
    ``none``."""
    fixed = {knob.setting for knob in inert if knob.choice is None}
    kept = {name: value for name, value in params.items() if name not in fixed}
    if kept.get("metadata_filter") in {knob.choice for knob in inert if knob.choice is not None}:
        kept["metadata_filter"] = NO_FILTER
    return kept
