"""Argument checks shared by the phantom generators."""

from __future__ import annotations

import numpy as np


def check_seed(seed) -> int:
    """``seed`` as an ``int``; ValueError unless it is a non-negative integer (``bool`` refused)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)
