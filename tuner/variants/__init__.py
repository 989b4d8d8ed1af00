"""Variants (ranking → **variants** → answers): variants v0–v4 of a case's context (see docs/robustness.md and
mission.md).

Between variants only the context changes: the question, prompt template, generator and judge
settings stay fixed, so a change in the answer is caused by the injected content.
"""

from tuner.variants._config import GRADED_VARIANTS, SHORTFALL_WARNING, VARIANTS, BandMode, VariantsConfig, InjectedCounts
from tuner.variants._variants import VariantBuilder, VariantContext, insert_injected, shortfall_warning

__all__ = [
    "GRADED_VARIANTS",
    "SHORTFALL_WARNING",
    "VARIANTS",
    "BandMode",
    "VariantsConfig",
    "InjectedCounts",
    "VariantBuilder",
    "VariantContext",
    "insert_injected",
    "shortfall_warning",
]
