"""Noise floor (metrics → **ε** → front, pruning, gate): how far apart two configurations' scores must be before the
difference is real.

``calibrate`` measures it for one configuration (run-to-run noise split into judge and generator
parts, plus case-sampling noise); ``NoiseFloor`` is the result, written to ``noise_floor.json`` and
read back by studies (pruning, ε-ties on Pareto fronts) and gates. See docs/robustness.md.
"""

from tuner.noisefloor._calibrate import calibrate, public_config, with_run_seed
from tuner.noisefloor._floor import FLOOR_METRICS, NoiseComponent, NoiseFloor

__all__ = ["FLOOR_METRICS", "NoiseComponent", "NoiseFloor", "calibrate", "public_config", "with_run_seed"]
