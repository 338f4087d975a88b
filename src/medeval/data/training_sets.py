"""Training-set builder for the class-distribution study (Reshma 2021, thesis §4.4-4.5 and §5.5).

Patches are first sorted into the thesis's categories (Table 4.1; see :mod:`medeval.data.patching`):

``"O"``      other / non-ROI only (background, fat, fibrous tissue),
``"C"``      cancer pixels and no non-cancer lymph-node pixels,
``"notC"``   non-cancer lymph-node pixels and no cancer pixels,
``"mixed"``  both C and notC pixels (C&¬C, a multi-label patch).

For binary data (PCam-like) only ``"C"`` (positive) and ``"notC"`` (negative) exist.

A *distribution* says how many patches of each category a training set holds:

* the five preliminary sets of Table 4.3 take *every* available patch of their categories, so their sizes
  differ (e.g. MLNTO: 4,922 / 20,250 / 22,196 / 37,524 / 127,898);
* the hypothesis sets E1.a-E4.c (Tables 4.5-4.8) and En/Ep (Table 5.3) are ratios in units ``U``:
  ``U = floor(min(#C, #notC) / 3)`` (the smallest single-label ROI class divided by the largest ratio weight, 3),
  optionally rounded down to a round number (MLNTO: 15,328 / 3 = 5,109 -> ``U = 5,000`` with
  ``round_down_to=1000``; PCam: 131,072 / 3 -> ``U = 43,690``). Every set of a group has the same size
  (9U for E1, 4U for E2-E4, En and Ep).

Exact counts: category ``k`` gets ``w_k * U`` patches. When some ``w_k * U`` are not integers (``1.5 U`` with odd
``U``) they are floored and the missing patches go, one each, to the categories with the largest fractional
parts (ties in category order), so the total is exactly ``sum(w) * U``.

Shortfall policy (the thesis needed 5,000 mixed patches for E3/E4 but had 4,922 and does not say what it did):
``shortfall="use_available"`` (default) takes every available patch of the short category, so that set is
smaller than the others; ``"oversample"`` draws the missing patches again (with replacement) from the same
category, keeping the size exact; ``"raise"`` refuses. Every shortfall is logged (``logging`` warning) and listed
in :attr:`TrainingSet.shortfalls`.

Sampling: within each category the patches are drawn uniformly without replacement, then the whole training set
is shuffled so that mini-batches mix categories (thesis §4.5.1.2). Every function takes a seed or a
``numpy.random.Generator``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from medeval.data.seeding import as_generator

__all__ = [
    "BINARY_DISTRIBUTIONS",
    "CATEGORIES",
    "HYPOTHESIS_DISTRIBUTIONS",
    "PRELIMINARY_DISTRIBUTIONS",
    "ALL",
    "Distribution",
    "TrainingSet",
    "build_training_set",
    "category_counts",
    "distribution_counts",
    "train_validation_split",
    "unit_size",
]

logger = logging.getLogger(__name__)

CATEGORIES = ("O", "C", "notC", "mixed")
ALL = "all"  # weight meaning "every available patch of this category" (Table 4.3)
SHORTFALL_POLICIES = ("use_available", "oversample", "raise")


@dataclass(frozen=True)
class Distribution:
    """A training distribution: ``weights`` maps category -> ratio weight in units U, or ``ALL``."""

    name: str
    label: str
    weights: Mapping[str, float | str]
    hypotheses: tuple[str, ...] = ()
    table: str = ""

    @property
    def uses_unit(self) -> bool:
        return all(w != ALL for w in self.weights.values())

    @property
    def total_units(self) -> float:
        if not self.uses_unit:
            raise ValueError(f"distribution {self.name} takes all available patches; it has no size in units")
        return float(sum(self.weights.values()))


def _d(name, label, table, hyps=(), **w):
    return Distribution(name=name, label=label, weights=dict(w), hypotheses=tuple(hyps), table=table)


#: Table 4.3: the preliminary study's five training sets (all available patches of the listed categories).
PRELIMINARY_DISTRIBUTIONS: dict[str, Distribution] = {
    d.name: d
    for d in (
        _d("Balanced_S", "(C&¬C): pixel-balanced, small", "4.3", mixed=ALL),
        _d("C-biased", "(C, C&¬C)", "4.3", C=ALL, mixed=ALL),
        _d("notC-biased", "(¬C, C&¬C)", "4.3", notC=ALL, mixed=ALL),
        _d("Balanced_L", "(C, ¬C, C&¬C): three classes almost balanced", "4.3", C=ALL, notC=ALL, mixed=ALL),
        _d("Natural", "All: O-biased, the natural distribution", "4.3", O=ALL, C=ALL, notC=ALL, mixed=ALL),
    )
}

#: Tables 4.5-4.8: the hypothesis-driven sets E1.a-E4.c, ratios in units U.
HYPOTHESIS_DISTRIBUTIONS: dict[str, Distribution] = {
    d.name: d
    for d in (
        _d("E1.a", "balanced O:C:¬C = 3:3:3", "4.5", ("H1",), O=3, C=3, notC=3),
        _d("E1.b", "natural (over-represented O) 7:1:1", "4.5", ("H1",), O=7, C=1, notC=1),
        _d("E2.a", "balanced C:¬C = 2:2", "4.6", ("H2",), C=2, notC=2),
        _d("E2.b", "over-represented ¬C, C:¬C = 1:3", "4.6", ("H2",), C=1, notC=3),
        _d("E2.c", "over-represented C, C:¬C = 3:1", "4.6", ("H2",), C=3, notC=1),
        _d("E3.a", "balanced C:¬C:C&¬C = 1.5:1.5:1", "4.7", ("H2", "H3"), C=1.5, notC=1.5, mixed=1),
        _d("E3.b", "over-represented ¬C, 0:3:1", "4.7", ("H2", "H3"), notC=3, mixed=1),
        _d("E3.c", "over-represented C, 3:0:1", "4.7", ("H2", "H3"), C=3, mixed=1),
        _d("E4.a", "balanced O:C:¬C:C&¬C = 1:1:1:1", "4.8", ("H2", "H4"), O=1, C=1, notC=1, mixed=1),
        _d("E4.b", "over-represented ¬C, 1:0:2:1", "4.8", ("H2", "H4"), O=1, notC=2, mixed=1),
        _d("E4.c", "over-represented C, 1:2:0:1", "4.8", ("H2", "H4"), O=1, C=2, mixed=1),
    )
}

#: Binary tasks (PCam-like; Chapter 5's En = E2.b and Ep = E2.c, Table 5.3): C positive, notC negative.
BINARY_DISTRIBUTIONS: dict[str, Distribution] = {
    "E2.a": HYPOTHESIS_DISTRIBUTIONS["E2.a"],
    "E2.b": HYPOTHESIS_DISTRIBUTIONS["E2.b"],
    "E2.c": HYPOTHESIS_DISTRIBUTIONS["E2.c"],
    "En": _d("En", "negative-biased, negative:positive = 3:1", "5.3", ("H2",), C=1, notC=3),
    "Ep": _d("Ep", "positive-biased, negative:positive = 1:3", "5.3", ("H2",), C=3, notC=1),
}


def _check_categories(categories) -> np.ndarray:
    cats = np.asarray(categories).astype(str)
    if cats.ndim != 1:
        raise ValueError(f"categories must be a 1-D array of category names, got shape {cats.shape}")
    bad = sorted(set(np.unique(cats)) - set(CATEGORIES))
    if bad:
        raise ValueError(f"categories must only hold {CATEGORIES}, got {bad}")
    return cats


def category_counts(categories) -> dict[str, int]:
    """Number of patches per category (every category of :data:`CATEGORIES`, zero when absent)."""
    cats = _check_categories(categories)
    return {c: int(np.count_nonzero(cats == c)) for c in CATEGORIES}


def unit_size(counts: Mapping[str, int], *, largest_weight: int = 3, round_down_to: int | None = None) -> int:
    r""":math:`\mathbb{U} = \lfloor \min(\#\mathbb{C}, \#\neg\mathbb{C}) / \max_k w_k \rfloor`, optionally rounded down
    to a multiple of ``round_down_to``.

    Thesis §4.5.1.1 / §5.5.1: "U = n/3, where n is the size of the smallest class ... and 3 is its largest
    presence in the considered training subset's class ratios". MLNTO: ``unit_size({"C": 15328, "notC": 17274},
    round_down_to=1000) == 5000``; PCam: ``unit_size({"C": 131072, "notC": 131072}) == 43690``.
    Raises ``ValueError`` when U would be 0.
    """
    for key in ("C", "notC"):
        if key not in counts:
            raise ValueError(f"counts must have a {key!r} entry")
    smallest = min(int(counts["C"]), int(counts["notC"]))
    unit = smallest // int(largest_weight)
    if round_down_to:
        unit = (unit // int(round_down_to)) * int(round_down_to)
    if unit < 1:
        raise ValueError(
            f"unit size U is 0: the smallest single-label ROI category has {smallest} patches "
            f"(need >= {largest_weight}{' and a smaller round_down_to' if round_down_to else ''})"
        )
    return unit


def distribution_counts(distribution: Distribution, unit: int | None = None, available=None) -> dict[str, int]:
    r"""Requested patches per category (exact integers summing to :math:`\sum_k w_k\,\mathbb{U}`, see module docs),
    or every available patch for ``ALL`` weights (then ``available`` counts are required).

    .. math::

       n_k = w_k\,\mathbb{U}, \qquad \pi_k = \frac{n_k}{\sum_j n_j} = \frac{w_k}{\sum_j w_j}"""
    requested: dict[str, int] = {}
    if distribution.uses_unit:
        if unit is None or int(unit) != unit or unit < 1:
            raise ValueError(f"unit must be a positive integer for {distribution.name}, got {unit!r}")
        raw = {k: float(w) * unit for k, w in distribution.weights.items() if float(w) > 0}
        total = round(sum(raw.values()))
        floors = {k: math.floor(v + 1e-9) for k, v in raw.items()}
        missing = total - sum(floors.values())
        order = sorted(raw, key=lambda k: (-(raw[k] - floors[k]), CATEGORIES.index(k)))
        for k in order[:missing]:
            floors[k] += 1
        requested = floors
    else:
        if available is None:
            raise ValueError(f"available counts are needed for {distribution.name} (takes all patches)")
        for k, w in distribution.weights.items():
            if w != ALL:
                raise ValueError(f"{distribution.name}: mixing ALL and unit weights is not supported")
            requested[k] = int(available[k])
    return requested


@dataclass
class TrainingSet:
    """Indices (into the categorised patch list) of one training set, shuffled, with its bookkeeping."""

    distribution: str
    indices: np.ndarray
    requested: dict[str, int]
    taken: dict[str, int]
    shortfalls: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return int(self.indices.size)


def build_training_set(
    categories,
    distribution: Distribution,
    unit: int | None = None,
    *,
    seed: int | np.random.Generator = 0,
    shortfall: str = "use_available",
) -> TrainingSet:
    """Draw a training set with the exact composition of ``distribution`` (see the module docstring).

    ``categories`` is the category name of every available patch. Returns indices into it, shuffled.
    """
    if shortfall not in SHORTFALL_POLICIES:
        raise ValueError(f"shortfall must be one of {SHORTFALL_POLICIES}, got {shortfall!r}")
    cats = _check_categories(categories)
    rng = as_generator(seed)
    available = category_counts(cats)
    requested = distribution_counts(distribution, unit, available)
    parts, taken, notes = [], {}, []
    for k in CATEGORIES:
        n = requested.get(k, 0)
        if n == 0:
            continue
        pool = np.flatnonzero(cats == k)
        if pool.size < n:
            msg = (
                f"{distribution.name}: category {k!r} has {pool.size} patches but {n} are requested "
                f"(shortfall {n - pool.size}); policy {shortfall!r}"
            )
            if shortfall == "raise" or pool.size == 0:
                raise ValueError(msg + ("" if pool.size else " and none is available"))
            logger.warning(msg)
            notes.append(msg)
            if shortfall == "use_available":
                chosen = rng.permutation(pool)
            else:
                chosen = np.r_[rng.permutation(pool), rng.choice(pool, size=n - pool.size, replace=True)]
        else:
            chosen = rng.choice(pool, size=n, replace=False)
        parts.append(chosen)
        taken[k] = int(chosen.size)
    indices = rng.permutation(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)
    return TrainingSet(distribution.name, indices, requested, taken, notes)


def train_validation_split(n: int, *, validation_fraction: float = 0.2, seed: int | np.random.Generator = 0):
    """Random split of ``range(n)`` into training and validation indices (thesis: 80 % / 20 %)."""
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    if n < 2:
        raise ValueError(f"n must be >= 2 to split, got {n}")
    rng = as_generator(seed)
    perm = rng.permutation(n)
    n_val = max(1, int(round(validation_fraction * n)))
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])
