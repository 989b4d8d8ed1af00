"""Study (**study file** → trials): everything a study can be told wrong is checked before any work, in ``tuner run``
and in ``--dry-run`` alike, so a bad space or enqueue is one line naming the file and key, not a failed trial."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from tuner.dataset import Dataset
from tuner.errors import UserError, describe_validation_error
from tuner.settings import RetrievalSettings
from tuner.study._config import LoadedStudy
from tuner.study._space import CategoricalParam, FloatParam, IntParam, SearchSpace


def _extremes(param: IntParam | FloatParam | CategoricalParam) -> list[Any]:
    """The values that decide whether a distribution fits a setting: every choice, or its low and high."""
    return list(param.choices) if isinstance(param, CategoricalParam) else [param.low, param.high]


def _in_space(param: IntParam | FloatParam | CategoricalParam, value: Any) -> bool:
    if isinstance(param, CategoricalParam):
        return value in param.choices
    return isinstance(value, int | float) and not isinstance(value, bool) and param.low <= value <= param.high


def check_study(loaded: LoadedStudy, space: SearchSpace, dataset: Dataset) -> None:
    """Raise a one-line :class:`UserError` for the first problem found:

    - a search-space value the setting does not accept (an unknown retriever, a threshold outside [0, 1], a
      ``top_k`` above ``candidate_depth``, ...);
    - a smallest ``top_k`` larger than the corpus has documents;
    - an enqueued configuration outside the space, with a setting the space does not search, or one that does not exist;
    - a robustness objective on a dataset without keypoints or without conflicting documents.
    """
    base = loaded.base_settings.model_dump()
    for name, param in space.params.items():
        for value in _extremes(param):
            try:
                RetrievalSettings(**{**base, name: value})
            except ValidationError as exc:
                raise UserError(f"{space.source}: {name}: {value!r} is not allowed: {describe_validation_error(exc)}") from None
    top_k = space.params.get("top_k")
    if top_k is not None:
        values = [int(v) for v in _extremes(top_k)]
        if min(values) > len(dataset.corpus):
            raise UserError(f"{space.source}: top_k starts at {min(values)}, more than the {len(dataset.corpus)} documents "
                            f"of {loaded.dataset}: every trial would retrieve (nearly) the whole corpus")
    for index, params in enumerate(loaded.config.enqueue):
        for name, value in params.items():
            where = f"{loaded.path}: enqueue[{index}].{name}"
            if name in space.params and not _in_space(space.params[name], value):
                raise UserError(f"{where}: {value!r} is outside the search space ({space.source})")
            if name not in RetrievalSettings.model_fields:
                raise UserError(f"{where}: not a retrieval setting")
            if name not in space.params:
                raise UserError(f"{where}: not a parameter of the search space ({space.source}), so no trial would use it: "
                                "add it to the space, or set it under 'settings:' for every trial")
    if dataset.retrieval_only:
        raise UserError(f"{loaded.dataset}: no keypoints: a study needs them for its robustness objective "
                        "(use 'tuner eval' for retrieval metrics)")
    if not dataset.conflicts:
        raise UserError(f"{loaded.dataset}: no conflicting documents (conflicts.jsonl), so v3 would measure nothing: "
                        f"write some with 'tuner corrupt {loaded.dataset}'")
