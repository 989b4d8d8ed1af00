"""Study (study file → **search space** → trials): the knobs that cannot act on a dataset, found before any trial and
kept out of the search, so a study over ``search_spaces/versions.yaml`` wastes no trials on a corpus without metadata."""

from __future__ import annotations

from typing import Any

from tuner.dataset import DATE, Conflict, Dataset, Document
from tuner.engine import Engine, InertKnob, MemoryEngine, SpaceChoices
from tuner.progress import Reporter
from tuner.retrieval import FILTER_FIELDS, chunk_versions
from tuner.settings import NO_FILTER, RetrievalSettings
from tuner.study._space import CategoricalParam, SearchSpace

VERSION_KNOBS = ("version_policy", "stale_penalty")
"""What a family with an older dated version acts on (:func:`tuner.retrieval.chunk_versions`)."""
RECENCY_KNOBS = ("recency_weight", "recency_half_life_days")
"""What a document date acts on."""


def inert_knobs(space: SearchSpace, dataset: Dataset, base: RetrievalSettings,
                engine: Engine = MemoryEngine()) -> list[InertKnob]:
    """The space's settings that cannot change a ranking on ``dataset`` or on ``engine``:

    - on an engine asked only some settings (:attr:`tuner.engine.Engine.asked_only`: a service speaking Dify's
      External Knowledge API is asked ``top_k`` and ``relevance_threshold``), every other one: the service is asked
      nothing else, whatever the dataset;
    - what the ``engine`` fixes (:meth:`tuner.engine.Engine.fixed_knobs`): on Milvus ``dense_index`` at the
      collection's index (``hnsw_ef`` or ``ivf_nprobe`` then acts exactly where the index reads it), and on an
      attached collection also what its rows fix;

    - ``version_policy``, ``stale_penalty``: no document (corpus or conflicting) has an older dated version in its
      ``metadata.family``, so no chunk is ever stale;
    - ``recency_weight``, ``recency_half_life_days``: no document has a ``metadata.date``;
    - a ``metadata_filter`` choice: a filter naming a metadata key no document has (chunk fields such as ``kind``
      always exist); with every filter inert the setting is fixed at ``none``, else only the inert choices go.

    ``dedupe`` compares chunk vectors, not metadata, so it acts on any dataset."""
    if engine.asked_only is not None:
        asked, why = engine.asked_only
        return [InertKnob(name, getattr(base, name), why) for name in space.params if name not in asked]
    documents: list[Document | Conflict] = [*dataset.corpus, *dataset.conflicts]
    inert: list[InertKnob] = engine.fixed_knobs(space_choices(space), base)
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


def space_choices(space: SearchSpace) -> SpaceChoices:
    """``space`` as an engine reads it: each setting, with its choices when it is categorical."""
    return {name: param.choices if isinstance(param, CategoricalParam) else None for name, param in space.params.items()}


def active_space(space: SearchSpace, dataset: Dataset, base: RetrievalSettings, reporter: Reporter,
                 engine: Engine = MemoryEngine()) -> tuple[SearchSpace, list[InertKnob]]:
    """The space a run searches on ``dataset`` and ``engine`` (:func:`without_inert`), each inert knob reported as one
    line first."""
    inert = inert_knobs(space, dataset, base, engine)
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
