"""Study (trials → **tracking**): optional experiment tracking of every finished trial through optuna-integration's
MLflow and Weights & Biases callbacks (``tracking:`` in the study file, extras ``tuner[mlflow]`` / ``tuner[wandb]``).

Each trial becomes one run: its objective values as metrics under the objective names, its full retrieval settings
(the study's fixed settings with the trial's own values on top) as parameters. Credentials stay where each tool reads
them (``MLFLOW_TRACKING_TOKEN``/``MLFLOW_TRACKING_PASSWORD``, ``WANDB_API_KEY``); a study file cannot hold one."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import optuna
from pydantic import Field

from tuner.errors import UserError
from tuner.extras import import_extra
from tuner.redaction import redact
from tuner.strict import StrictModel

TrialCallback = Callable[[optuna.Study, optuna.trial.FrozenTrial], None]


class MlflowTracking(StrictModel):

    tracking_uri: str | None = Field(None, description="MLflow tracking URI; unset: MLFLOW_TRACKING_URI or MLflow's default")
    experiment: str | None = Field(None, description="experiment name; unset: the study name")
    tags: dict[str, str] = Field(default_factory=dict, description="tags set on every run")


class WandbTracking(StrictModel):

    project: str | None = None
    entity: str | None = None
    group: str | None = None
    mode: Literal["online", "offline", "disabled"] | None = Field(None, description="unset: WANDB_MODE or online")
    dir: str | None = Field(None, description="folder for W&B's local files")
    tags: list[str] = Field(default_factory=list)


class TrackingConfig(StrictModel):

    mlflow: MlflowTracking | None = None
    wandb: WandbTracking | None = None


def tracking_callbacks(
    config: TrackingConfig, study_name: str, metric_names: list[str], fixed_settings: Mapping[str, Any]
) -> list[TrialCallback]:
    """One Optuna callback per configured tracker; none when ``tracking:`` is absent. ``fixed_settings`` are the
    settings the search space does not vary (each run adds the trial's searched values)."""
    callbacks: list[TrialCallback] = []
    if config.mlflow is not None:
        callbacks.append(_mlflow_callback(config.mlflow, study_name, metric_names, fixed_settings))
    if config.wandb is not None:
        callbacks.append(_wandb_callback(config.wandb, study_name, metric_names, fixed_settings))
    return callbacks


def _mlflow_callback(
    config: MlflowTracking, study_name: str, metric_names: list[str], fixed_settings: Mapping[str, Any]
) -> TrialCallback:
    mlflow = import_extra("mlflow", "tracking: mlflow", "mlflow")

    class SettingsCallback(import_extra("optuna_integration.mlflow", "tracking: mlflow", "mlflow").MLflowCallback):  # type: ignore[misc]
        """Logs the trial's full settings, not only the searched parameters."""

        def _log_params(self, params: dict[str, Any]) -> None:
            mlflow.log_params({**fixed_settings, **params})

    where = redact(config.tracking_uri or mlflow.get_tracking_uri())
    try:
        # resolved now, so an unreachable server or a bad URI stops the run before any trial
        if config.tracking_uri is not None:
            mlflow.set_tracking_uri(config.tracking_uri)
        experiment = mlflow.set_experiment(config.experiment or study_name)
    except Exception as exc:  # MLflow raises its own and the HTTP client's exceptions
        raise UserError(f"tracking: mlflow at {where}: {redact(str(exc).splitlines()[0])}") from None
    with warnings.catch_warnings():
        # optuna-integration 4.9 deprecated its tracking callbacks (removal in 6.0; the extra pins <6)
        warnings.simplefilter("ignore", FutureWarning)
        callback: TrialCallback = SettingsCallback(
            tracking_uri=config.tracking_uri, metric_name=metric_names, create_experiment=False,
            mlflow_kwargs={"experiment_id": experiment.experiment_id, "tags": dict(config.tags) or None},
            tag_trial_user_attrs=False,
        )
    return callback


def _wandb_callback(
    config: WandbTracking, study_name: str, metric_names: list[str], fixed_settings: Mapping[str, Any]
) -> TrialCallback:
    import_extra("wandb", "tracking: wandb", "wandb")  # optuna-integration would only find it missing when the first trial ends
    callback_class = import_extra("optuna_integration.wandb", "tracking: wandb", "wandb").WeightsAndBiasesCallback
    if config.dir is not None:
        Path(config.dir).mkdir(parents=True, exist_ok=True)
    # the run's config starts as the fixed settings; the callback adds the trial's searched values
    kwargs = {
        "project": config.project or study_name, "entity": config.entity, "group": config.group, "mode": config.mode,
        "dir": config.dir, "tags": list(config.tags), "config": dict(fixed_settings),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        callback: TrialCallback = callback_class(
            metric_name=metric_names, wandb_kwargs={k: v for k, v in kwargs.items() if v is not None}, as_multirun=True
        )
    return callback
