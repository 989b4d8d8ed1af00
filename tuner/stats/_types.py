"""Statistics (metrics → **estimates**): the per-case value types the statistics functions accept."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

FloatValues = Sequence[float] | NDArray[np.floating]
"""One score per case: a list or a 1-d numpy array."""
