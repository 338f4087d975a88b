"""Class-biased one-vs-rest training subsets drawn from a multi-class data set (thesis §5.5.1-5.5.3).

Chapter 5 of Reshma (2021) turns a multi-class data set into a binary one (CIFAR-10: "automobile" positive,
the nine other classes negative) and trains on subsets whose class ratio is fixed in units ``U``:

* ``U = floor(n / 3)``, ``n`` the size of the smallest binary class of the original training set (the
  positives: 5,000 automobiles -> ``U = 1,666``) and 3 the largest ratio weight (§5.5.1, as §4.5.1.1;
  :func:`medeval.data.training_sets.unit_size`);
* ``En`` = negative:positive 3:1 (``U`` positives, ``3U`` negatives), ``Ep`` = 1:3 (``3U`` positives, ``U``
  negatives), 4U examples in all (6,664 for CIFAR-10; Table 5.3, :data:`~medeval.data.training_sets.BINARY_DISTRIBUTIONS`);
* "each negative class has an equal number of examples" (§5.5.3): the negatives are split over the negative
  classes with :func:`equal_counts` (counts differ by at most one; the remainder goes, one each, to the
  lowest-numbered negative classes, so the split is deterministic).

Within each class the examples are drawn uniformly without replacement; the subset is then shuffled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medeval.data import training_sets as ts
from medeval.data.seeding import as_generator

__all__ = ["OneVsRestSubset", "biased_subset", "equal_counts"]


def equal_counts(total: int, n_groups: int) -> np.ndarray:
    """Split ``total`` into ``n_groups`` non-negative integers that differ by at most one.

    ``counts[k] = total // n_groups + (1 if k < total % n_groups else 0)``: the remainder goes to the first
    groups, so the result is deterministic and sums to ``total`` (e.g. ``equal_counts(4998, 9)`` gives
    ``[556, 556, 556, 555, 555, 555, 555, 555, 555]``).
    """
    if int(total) != total or total < 0:
        raise ValueError(f"total must be a non-negative integer, got {total!r}")
    if int(n_groups) != n_groups or n_groups < 1:
        raise ValueError(f"n_groups must be a positive integer, got {n_groups!r}")
    total, n_groups = int(total), int(n_groups)
    counts = np.full(n_groups, total // n_groups, dtype=np.int64)
    counts[: total % n_groups] += 1
    return counts


@dataclass
class OneVsRestSubset:
    """A class-biased binary training subset: ``indices`` into the original labels, shuffled.

    ``unit`` is U; ``n_pos`` / ``n_neg`` the positive / negative counts; ``negatives_per_class`` maps each
    negative class label to the number drawn from it.
    """

    distribution: str
    positive_class: int
    indices: np.ndarray
    unit: int
    n_pos: int
    n_neg: int
    negatives_per_class: dict[int, int]

    @property
    def size(self) -> int:
        return int(self.indices.size)


def biased_subset(
    labels,
    distribution: str,
    *,
    positive_class: int,
    seed: int | np.random.Generator = 0,
    unit_cap: int | None = None,
) -> OneVsRestSubset:
    """Draw a one-vs-rest training subset with the class ratio of ``distribution`` (thesis §5.5.1, §5.5.3).

    Parameters
    ----------
    labels : 1-D integer class labels of the original training set (e.g. CIFAR-10's 50,000).
    distribution : a name of :data:`medeval.data.training_sets.BINARY_DISTRIBUTIONS` (``"En"``: 3:1
        negative:positive; ``"Ep"``: 1:3; also ``"E2.a"`` 2:2, ``"E2.b"`` = En, ``"E2.c"`` = Ep).
    positive_class : the label that becomes the positive class; every other label present is negative.
    seed : seed or ``numpy.random.Generator`` for the draw.
    unit_cap : optional upper bound on U (a smaller, scaled-down subset with the same ratio).

    Notes
    -----
    Procedure: ``U = floor(min(#positive, #negative) / 3)`` (:func:`~medeval.data.training_sets.unit_size`;
    CIFAR-10: ``floor(5000 / 3) = 1666``), capped by ``unit_cap``; ``n_pos = w_pos U`` and ``n_neg = w_neg U``
    (:func:`~medeval.data.training_sets.distribution_counts`); ``n_pos`` positives drawn without replacement;
    the ``n_neg`` negatives split over the negative classes in increasing label order with
    :func:`equal_counts` and drawn without replacement within each class; the union shuffled.
    Raises ``ValueError`` when a negative class holds fewer examples than its share.
    """
    dist = ts.BINARY_DISTRIBUTIONS.get(distribution)
    if dist is None:
        raise ValueError(f"distribution must be one of {list(ts.BINARY_DISTRIBUTIONS)}, got {distribution!r}")
    y = np.asarray(labels)
    if y.ndim != 1 or not (np.issubdtype(y.dtype, np.integer) or y.size == 0):
        raise ValueError(f"labels must be a 1-D integer array, got shape {y.shape} and dtype {y.dtype}")
    positive_class = int(positive_class)
    pos_pool = np.flatnonzero(y == positive_class)
    if pos_pool.size == 0:
        raise ValueError(f"positive_class {positive_class} does not occur in labels")
    negative_classes = [int(c) for c in np.unique(y) if c != positive_class]
    if not negative_classes:
        raise ValueError(
            f"labels hold only the positive class {positive_class}; at least one other is needed"
        )
    if unit_cap is not None and (int(unit_cap) != unit_cap or unit_cap < 1):
        raise ValueError(f"unit_cap must be a positive integer or None, got {unit_cap!r}")
    rng = as_generator(seed)

    unit = ts.unit_size({"C": int(pos_pool.size), "notC": int(y.size - pos_pool.size)})
    if unit_cap is not None:
        unit = min(unit, int(unit_cap))
    requested = ts.distribution_counts(dist, unit)
    n_pos, n_neg = int(requested.get("C", 0)), int(requested.get("notC", 0))

    per_class = equal_counts(n_neg, len(negative_classes))
    parts = [rng.choice(pos_pool, size=n_pos, replace=False)]
    for c, k in zip(negative_classes, per_class, strict=True):
        pool = np.flatnonzero(y == c)
        if pool.size < k:
            raise ValueError(
                f"{distribution}: negative class {c} has {pool.size} examples but {k} are needed "
                f"(equal share of {n_neg} negatives over {len(negative_classes)} classes)"
            )
        parts.append(rng.choice(pool, size=int(k), replace=False))
    indices = rng.permutation(np.concatenate(parts)).astype(np.int64)
    return OneVsRestSubset(
        distribution=distribution,
        positive_class=positive_class,
        indices=indices,
        unit=int(unit),
        n_pos=n_pos,
        n_neg=n_neg,
        negatives_per_class={c: int(k) for c, k in zip(negative_classes, per_class, strict=True)},
    )
