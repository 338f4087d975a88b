"""The one coercion of a seed to a numpy random generator, used by every function of medeval that draws."""

from __future__ import annotations

import numpy as np

__all__ = ["as_generator"]


def as_generator(seed, *, name: str = "seed", required: bool = False) -> np.random.Generator:
    """A :class:`numpy.random.Generator` from ``seed``.

    A Generator is returned as it is (callers then share one stream); a non-negative integer, a sequence of
    non-negative integers or a :class:`numpy.random.SeedSequence` seeds a fresh PCG64 (``np.random.default_rng``);
    ``None`` draws fresh entropy from the operating system, unless ``required`` (then it is refused, because the
    result must be reproducible). Booleans, floats, negative integers and anything else are refused with a message
    that names ``name``.

    Examples
    --------
    >>> from medeval.data.seeding import as_generator
    >>> g = as_generator(0)
    >>> as_generator(g) is g, float(as_generator(0).random()) == float(g.random())
    (True, True)
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        if required:
            raise ValueError(f"{name} must be a non-negative integer or a numpy.random.Generator, got None")
        return np.random.default_rng()
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    sequence = isinstance(seed, (list, tuple, np.ndarray))
    values = list(seed) if sequence else [seed]
    if not values or not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= 0
                             for v in values):
        raise ValueError(f"{name} must be a non-negative integer (or a sequence of them) or a numpy.random.Generator, "
                         f"got {seed!r}")
    return np.random.default_rng([int(v) for v in values] if sequence else int(seed))
