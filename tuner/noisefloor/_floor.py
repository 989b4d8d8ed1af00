"""Noise floor (metrics → **ε** → front, pruning, gate): the noise floor of one configuration, as written to and read
from ``noise_floor.json``."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tuner.errors import UserError
from tuner.io import atomic_write_json, renamed_key
from tuner.metrics import RETRIEVAL_METRICS
from tuner.objectives import DELTA, EXPOSURE, RECALL
from tuner.stats import min_detectable_difference

FLOOR_METRICS = (RECALL, *(name for name in RETRIEVAL_METRICS if name != RECALL), EXPOSURE, "faithful_v0", "faithful_v3",
                 DELTA)
"""Metric names a noise floor covers, as studies and gates name their objectives: every retrieval metric of the
registry (recall@k first), conflict exposure and the faithfulness ones."""
UNSCORED = "no case was scored in every run"
"""The start of a faithfulness metric's ``undefined`` reason when no case has a score in every run and variant."""


@dataclass(frozen=True)
class NoiseComponent:
    """Where one metric's noise comes from.

    ``run_sd``: standard deviation of the metric between regenerate runs (answers generated and judged
    anew). ``judge_var`` / ``generator_var``: mean per-case run-to-run variance from re-judging the same
    answers, and the rest; ``judge_share`` / ``generator_share`` their shares (None when a metric has no
    run-to-run variance at all, e.g. retrieval metrics counted from labels). ``bootstrap_sd``: the
    case-sampling standard error of the metric over the ``n`` scored cases (of ``n_total``; the others
    are counted in ``missing`` by reason).
    """

    run_sd: float
    bootstrap_sd: float
    judge_var: float
    generator_var: float
    judge_share: float | None
    generator_share: float | None
    n: int
    n_total: int
    missing: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class NoiseFloor:
    """Per objective, the smallest difference between two configurations that is not noise.

    ``objectives[name]`` = ``min_detectable_difference(run_sd, bootstrap_sd, z)`` of ``components[name]``.
    Objectives that could not be measured (e.g. faithfulness on a retrieval-only dataset) are absent
    from both and listed in ``undefined`` with the reason.

    >>> floor = NoiseFloor.from_file("noise_floor.json")  # doctest: +SKIP
    >>> floor.objectives["v3_delta_faithful"]  # doctest: +SKIP
    0.083
    """

    objectives: dict[str, float]
    components: dict[str, NoiseComponent]
    runs: int
    n_cases: int
    settings: dict[str, Any]
    dataset_hash: str
    generator: dict[str, Any]
    judge: dict[str, Any]
    variant_config: dict[str, Any]
    calls: dict[str, int] = field(default_factory=dict)
    undefined: dict[str, str] = field(default_factory=dict)
    z: float = 1.96

    def unscored(self) -> str | None:
        """Why no case could be scored, when the golden set has keypoints and no case has a faithfulness score in every
        run and variant (the missing scores counted by reason); None otherwise, a retrieval-only dataset included.

        >>> NoiseFloor({}, {}, 2, 6, {}, "", {}, {}, {}, undefined={"faithful_v0": UNSCORED + ": malformed_reply 6"}).unscored()
        'no case was scored in every run: malformed_reply 6'
        """
        reason = self.undefined.get("faithful_v0")
        return reason if reason is not None and reason.startswith(UNSCORED) else None

    def run_margins(self) -> dict[str, float]:
        """Per objective, the part of the floor that comes from run-to-run noise: z · √2 · run_sd.

        This is the margin a paired comparison on the same cases must clear: the case-sampling part
        of the floor is what the paired test itself measures on those cases, so it is not added again.
        """
        return {name: min_detectable_difference(c.run_sd, 0.0, self.z) for name, c in self.components.items()}

    def run_sd(self) -> dict[str, float]:
        """Per objective, one configuration's run-to-run sd (``NoiseComponent.run_sd``): what a paired comparison adds
        for each of the two configurations, with no z to undo."""
        return {name: c.run_sd for name, c in self.components.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "objectives": dict(self.objectives),
            "components": {name: asdict(c) for name, c in self.components.items()},
            "runs": self.runs,
            "n_cases": self.n_cases,
            "z": self.z,
            "settings": self.settings,
            "dataset_hash": self.dataset_hash,
            "generator": self.generator,
            "judge": self.judge,
            "variant_config": self.variant_config,
            "calls": self.calls,
            "undefined": self.undefined,
        }

    def write(self, path: str | Path) -> None:
        """Write the JSON atomically: a reader sees the previous floor or this one, never half of one."""
        atomic_write_json(path, self.to_dict())

    @classmethod
    def from_file(cls, path: str | Path) -> NoiseFloor:
        """Read a file written by ``tuner calibrate``; a missing or malformed file is one :class:`UserError` line."""
        try:
            data = json.loads(Path(path).read_text("utf-8"))
        except OSError as exc:
            raise UserError(f"{path}: cannot read noise floor: {exc.strerror}") from None
        except ValueError as exc:
            raise UserError(f"{path}: malformed JSON: {exc}") from None
        try:
            # floors written before issue 39 call the variants' configuration "noise"
            data = renamed_key(data, "noise", "variant_config")
            floor = cls(
                objectives={str(k): float(v) for k, v in data["objectives"].items()},
                components={str(k): NoiseComponent(**v) for k, v in data["components"].items()},
                runs=int(data["runs"]),
                n_cases=int(data["n_cases"]),
                settings=dict(data["settings"]),
                dataset_hash=str(data["dataset_hash"]),
                generator=dict(data["generator"]),
                judge=dict(data["judge"]),
                variant_config=dict(data["variant_config"]),
                calls=dict(data.get("calls", {})),
                undefined=dict(data.get("undefined", {})),
                z=float(data.get("z", 1.96)),
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise UserError(f"{path}: not a noise floor written by 'tuner calibrate' ({type(exc).__name__}: {exc})") from None
        bad = [name for name, value in floor.objectives.items() if not math.isfinite(value) or value < 0]
        if bad:
            raise UserError(f"{path}: objectives.{bad[0]}: a noise floor must be a finite non-negative number")
        return floor
