"""Study (**study file** → trials): everything a study can be told wrong is checked before any work, in ``tuner run``
and in ``--dry-run`` alike, so a bad space or enqueue is one line naming the file and key, not a failed trial."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from tuner.dataset import Dataset
from tuner.errors import UserError, describe_validation_error
from tuner.settings import ACTS_WHEN, AT_MOST, DECIDERS, RetrievalSettings, acts, format_settings
from tuner.study._config import LoadedStudy
from tuner.study._space import CategoricalParam, FloatParam, IntParam, SearchSpace, extremes


def _in_space(param: IntParam | FloatParam | CategoricalParam, value: Any) -> bool:
    if isinstance(param, CategoricalParam):
        return value in param.choices
    return isinstance(value, int | float) and not isinstance(value, bool) and param.low <= value <= param.high


def check_study(loaded: LoadedStudy, space: SearchSpace, dataset: Dataset) -> None:
    """Raise a one-line :class:`UserError` for the first problem found:

    - a value the sampler can give that the setting does not accept (an unknown retriever, a threshold outside
      [0, 1], ...), walked as the sampler walks the space (:meth:`SearchSpace.corners`): ``top_k`` is clipped to each
      ``candidate_depth``, so a space of top_k 1–25 and candidate_depth {10, 30} passes and every trial of it runs,
      while a ``top_k`` above the largest depth, a fixed ``top_k`` above a searched depth, or a ``top_k`` whose low
      is, does not;
    - a smallest ``top_k`` larger than the corpus has documents;
    - an enqueued configuration outside the space, with a setting the space does not search, one that does not exist,
      one its other values do not let act (``hybrid_weight`` on a bm25 trial), or settings that do not validate;
    - a robustness objective on a dataset without keypoints or without conflicting documents;
    - on an engine without BM25 (an attached Milvus collection without it, :func:`_check_bm25`), a retriever that
      needs it;
    - what the generator and the judge name outside the file (:meth:`LoadedStudy.check_backends`).
    """
    loaded.check_backends()
    base = loaded.base_settings.model_dump()
    _check_bm25(loaded, space)
    for knob, bound in AT_MOST.items():
        if knob in space.params:  # values past every bound the space reaches could never be sampled: a mistake
            highest = max(extremes(space.params[knob]))
            deepest = max(extremes(space.params[bound])) if bound in space.params else base[bound]
            if highest > deepest:
                raise UserError(f"{space.source}: {knob}: {highest!r} is not allowed: {knob} ({highest}) exceeds {bound} "
                                f"({deepest}), the largest this study gives it")
    for values, name, value in space.corners(base):
        try:
            RetrievalSettings(**values)
        except ValidationError as exc:
            field = exc.errors()[0]["loc"][:1]
            if name is None and field and field[0] in space.params:  # a decider's own value (retriever: splade)
                name, value = str(field[0]), values[field[0]]
            deciding = {d: values[d] for d in DECIDERS if d in space.params and d != name}
            where = f"{name}: {value!r} is not allowed" if name is not None else "not allowed"
            raise UserError(f"{space.source}: {where}{' with ' + format_settings(deciding) if deciding else ''}: "
                            f"{describe_validation_error(exc)}") from None
    top_k = space.params.get("top_k")
    if top_k is not None:
        lowest = min(int(v) for v in extremes(top_k))
        if lowest > len(dataset.corpus):
            raise UserError(f"{space.source}: top_k starts at {lowest}, more than the {len(dataset.corpus)} documents "
                            f"of {loaded.dataset}: every trial would retrieve (nearly) the whole corpus")
    for index, params in enumerate(loaded.config.enqueue):
        merged = {**base, **params}
        for name, value in params.items():
            where = f"{loaded.path}: enqueue[{index}].{name}"
            if name in space.params and not _in_space(space.params[name], value):
                raise UserError(f"{where}: {value!r} is outside the search space ({space.source})")
            if name not in RetrievalSettings.model_fields:
                raise UserError(f"{where}: not a retrieval setting")
            if name not in space.params:
                raise UserError(f"{where}: not a parameter of the search space ({space.source}), so no trial would use it: "
                                "add it to the space, or set it under 'settings:' for every trial")
            if space.conditional and not acts(name, merged):
                raise UserError(f"{where}: acts only when {ACTS_WHEN[name].when}, which this configuration is not: leave it out")
        try:
            RetrievalSettings(**merged)
        except ValidationError as exc:
            raise UserError(f"{loaded.path}: enqueue[{index}]: {describe_validation_error(exc)}") from None
    if dataset.retrieval_only:
        raise UserError(f"{loaded.dataset}: no keypoints: a study needs them for its robustness objective "
                        "(use 'tuner eval' for retrieval metrics)")
    if not dataset.conflicts:
        raise UserError(f"{loaded.dataset}: no conflicting documents (conflicts.jsonl), so v3 would measure nothing: "
                        f"write some with 'tuner corrupt {loaded.dataset}'")


def _check_bm25(loaded: LoadedStudy, space: SearchSpace) -> None:
    """An engine without BM25 (an attached collection without a BM25 output field, ``fields.sparse``) searches
    ``dense`` only: a fixed ``retriever`` or an enqueued one that needs BM25 is refused (a space's bm25 and hybrid
    choices are dropped with a line instead, :meth:`tuner.engine.Engine.fixed_knobs`)."""
    lacking = loaded.engine.without_bm25()
    if lacking is None:
        return
    why = f"needs BM25, and {lacking}"
    if "retriever" not in space.params and loaded.base_settings.retriever != "dense":
        raise UserError(f"{loaded.path}: settings.retriever: {loaded.base_settings.retriever} {why}: set retriever: dense")
    for index, params in enumerate(loaded.config.enqueue):
        if params.get("retriever", "dense") != "dense":
            raise UserError(f"{loaded.path}: enqueue[{index}].retriever: {params['retriever']} {why}")
