r"""Quality statistics of multi-label data splits (chapter 5, section "Splitting Multi-Label Data").

The statistics of [Sechidis2011] and [Szymanski2017] as the thesis chapter defines them
(``papers/05-multilabel-chestxray14-evaluation.txt``; equations unnumbered). ``Y`` is the (N, K)
0/1 label matrix and ``folds`` the :math:`J` evaluation subsets :math:`F_1, \dots, F_J`, given either as a sequence of
integer index arrays or as a length-N integer array of fold numbers (0..J-1; every example in
exactly one fold). For all statistics, close to zero is better.

Text versus the thesis code (R chunk of Tab. LDprop); the text is the default, the code's
variants are options:

* **LPD normalisation.** The text averages over the :math:`K^* = K(K-1)/2` label pairs; the code divides
  the same sum by :math:`K` (``length(L)``), 6.5 times larger for :math:`K = 14` (``normalisation="labels"``).
* **FLPZ.** The text counts the (fold, label pair) combinations without positives, not counting
  label pairs with fewer positives in the whole data set than the number of folds. The code
  computes :math:`\bigl(\sum_j \#\{\text{zero pairs in fold } j\} - \#\{\text{pairs with fewer than 5
  positives}\}\bigr) / \bigl(\binom{K}{2} J\bigr)`: a proportion, with the rare pairs subtracted once rather than once per fold, and the
  threshold fixed at 5 (``variant="code"``).

Undefined values: a fold in which a label (pair) is present in every example has an infinite
positive/negative ratio; that term is NaN, excluded from the mean, and counted in an
``UndefinedMetricWarning`` (``return_count=True`` returns it).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np

from medeval.metrics._arrays import is_tensor, to_numpy
from medeval.metrics.multilabel import UndefinedMetricWarning, _check_binary

__all__ = [
    "fold_indices",
    "fold_label_counts",
    "fold_label_pair_counts",
    "label_distribution",
    "label_pair_distribution",
    "example_distribution",
    "folds_missing_a_label",
    "fold_label_zeros",
    "fold_label_pair_zeros",
    "split_quality_measures",
]


def fold_indices(folds, n_samples: int) -> list[np.ndarray]:
    """Normalise ``folds`` to a list of integer index arrays into 0..n_samples-1.

    Accepts a sequence of index arrays (e.g. the test parts of a K-fold splitter, or the
    ``(train, test)`` pairs themselves, whose test parts are used) or a length-``n_samples``
    array of fold numbers (numpy or torch).

    Examples
    --------
    >>> from medeval.metrics.split_quality import fold_indices
    >>> [f.tolist() for f in fold_indices(np.array([0, 1, 0, 1, 2]), 5)]
    [[0, 2], [1, 3], [4]]
    """
    if is_tensor(folds):  # a tensor of fold numbers; a sequence stays one (of index arrays)
        folds = to_numpy(folds)
    if isinstance(folds, np.ndarray) and folds.ndim == 1 and folds.shape[0] == n_samples and np.issubdtype(
        folds.dtype, np.integer
    ):
        if folds.min() < 0:
            raise ValueError("folds: fold numbers must be >= 0")
        return [np.flatnonzero(folds == j) for j in np.unique(folds)]
    if not isinstance(folds, Sequence) and not isinstance(folds, np.ndarray):
        raise ValueError("folds must be a sequence of index arrays or a length-N array of fold numbers")
    out = []
    for j, f in enumerate(folds):
        if isinstance(f, tuple) and len(f) == 2:  # (train_idx, test_idx) pair from a splitter
            f = f[1]
        a = to_numpy(f)
        if a.ndim != 1 or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
            raise ValueError(f"folds[{j}] must be a 1-D array of integer indices, got shape {a.shape}, dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() >= n_samples):
            raise ValueError(f"folds[{j}] has indices outside 0..{n_samples - 1}")
        out.append(a.astype(np.int64))
    if not out:
        raise ValueError("folds must contain at least one fold")
    return out


def fold_label_counts(Y, folds) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`S_{jk} = \sum_{i \in F_j} y_{ik}` (shape (J, K)) and the fold sizes :math:`N_j` (shape (J,)).

    Examples
    --------
    >>> from medeval.metrics.split_quality import fold_label_counts
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> s, n_j = fold_label_counts(Y, folds)
    >>> s.tolist(), n_j.tolist()
    ([[2, 2], [1, 1]], [3, 3])
    """
    y = _check_binary(Y, "Y")
    idx = fold_indices(folds, y.shape[0])
    s = np.stack([np.count_nonzero(y[f], axis=0) for f in idx])
    return s, np.array([f.size for f in idx])


def _pair_counts(y: np.ndarray) -> np.ndarray:
    yf = y.astype(np.float64)
    iu = np.triu_indices(y.shape[1], k=1)
    return np.rint((yf.T @ yf)[iu]).astype(np.int64)


def fold_label_pair_counts(Y, folds) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`S^*_{jk} = \sum_{i \in F_j} y^*_{ik}` for the :math:`K^* = K(K-1)/2` label pairs (:math:`u < v`,
    row-major), and :math:`N_j`.

    Examples
    --------
    >>> from medeval.metrics.split_quality import fold_label_pair_counts
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> s, n_j = fold_label_pair_counts(Y, folds)
    >>> s.tolist(), n_j.tolist()
    ([[1], [0]], [3, 3])
    """
    y = _check_binary(Y, "Y")
    idx = fold_indices(folds, y.shape[0])
    return np.stack([_pair_counts(y[f]) for f in idx]), np.array([f.size for f in idx])


def _ratio_deviation(s: np.ndarray, n_j: np.ndarray, d: np.ndarray, n: int):
    r""":math:`|S_{jk} / (N_j - S_{jk}) - D_k / (N - D_k)|` with NaN where a ratio is infinite (or 0/0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        fold_ratio = s / (n_j[:, None] - s)
        total_ratio = d / (n - d)
        dev = np.abs(fold_ratio - total_ratio[None, :])
    undefined = ~np.isfinite(dev)
    return np.where(undefined, np.nan, dev), undefined


def _report(value, n_undefined, what, return_count):
    if n_undefined:
        warnings.warn(f"{n_undefined} {what} with an infinite positive/negative ratio excluded", UndefinedMetricWarning, stacklevel=3)
    return (value, n_undefined) if return_count else value


def label_distribution(Y, folds, *, return_count: bool = False):
    r"""LD [Sechidis2011]:

    .. math::

       \mathrm{LD}=\frac{1}{K}\sum_{k=1}^{K}\left(\frac{1}{J}\sum_{j=1}^{J}\left|\frac{S_{jk}}{N_j-S_{jk}}
       -\frac{D_k}{N-D_k}\right|\right)

    :math:`S_{jk}` = positives of label :math:`k` in fold :math:`j`, :math:`D_k` = positives of label :math:`k`
    in the data set. Compares
    positive/negative *ratios* (odds), as the chapter writes it.

    Examples
    --------
    >>> from medeval.metrics.split_quality import label_distribution
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> round(label_distribution(Y, folds), 4)  # odds 2 and 1/2 in the folds vs 1 overall
    0.75
    """
    y = _check_binary(Y, "Y")
    s, n_j = fold_label_counts(y, folds)
    dev, undefined = _ratio_deviation(s, n_j, np.count_nonzero(y, axis=0), y.shape[0])
    value = float(np.nanmean(np.nanmean(dev, axis=0))) if np.any(~undefined) else float("nan")
    return _report(value, int(undefined.sum()), "fold-label terms", return_count)


def label_pair_distribution(
    Y, folds, *, normalisation: Literal["pairs", "labels"] = "pairs", return_count: bool = False
):
    r"""LPD: LD applied to the :math:`K^*` label-pair indicators :math:`y^*_{ik}` [Szymanski2017].

    .. math::

       \mathrm{LPD}=\frac{1}{K^{*}}\sum_{k=1}^{K^{*}}\left(\frac{1}{J}\sum_{j=1}^{J}\left|\frac{S^{*}_{jk}}{N_j-S^{*}_{jk}}
       -\frac{D^{*}_k}{N-D^{*}_k}\right|\right)

    The text divides by :math:`K^*` (``normalisation="pairs"``, default); the thesis code by :math:`K`
    (``"labels"``). With one label
    there is no label pair: the mean over no pairs is NaN.

    Examples
    --------
    >>> from medeval.metrics.split_quality import label_pair_distribution
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> round(label_pair_distribution(Y, folds), 4)
    0.25
    """
    if normalisation not in ("pairs", "labels"):
        raise ValueError(f"normalisation must be 'pairs' (text) or 'labels' (thesis code), got {normalisation!r}")
    y = _check_binary(Y, "Y")
    s, n_j = fold_label_pair_counts(y, folds)
    dev, undefined = _ratio_deviation(s, n_j, _pair_counts(y), y.shape[0])
    per_pair = np.nanmean(dev, axis=0) if np.any(~undefined) else np.full(dev.shape[1], np.nan)
    total = float(np.nansum(per_pair))
    divisor = per_pair.size if normalisation == "pairs" else y.shape[1]
    value = total / divisor if divisor else float("nan")  # K = 1: no label pair (was a ZeroDivisionError)
    return _report(value, int(undefined.sum()), "fold-pair terms", return_count)


def example_distribution(folds, n_samples: int, desired_sizes=None) -> float:
    r"""ED, the example distribution [Szymanski2017]:

    .. math::

       \mathrm{ED}=\frac{1}{J}\sum_{j=1}^{J}\bigl|N_j-c_j\bigr|

    with :math:`c_j` the desired fold size (default :math:`N/J`). The chapter does not compute it: with
    :math:`N` divisible by 5 random 5-fold CV gives :math:`\mathrm{ED} = 0`.

    Examples
    --------
    >>> from medeval.metrics.split_quality import example_distribution
    >>> round(example_distribution(np.array([0, 0, 0, 1, 1, 2]), 6), 4)  # sizes 3, 2, 1 vs 2: (1 + 0 + 1) / 3
    0.6667
    """
    idx = fold_indices(folds, n_samples)
    sizes = np.array([f.size for f in idx], dtype=np.float64)
    if desired_sizes is None:
        c = np.full(sizes.size, n_samples / sizes.size)
    else:
        c = to_numpy(desired_sizes, dtype=np.float64)
        if c.shape != sizes.shape:
            raise ValueError(f"desired_sizes must have one entry per fold ({sizes.size}), got {c.shape}")
    return float(np.mean(np.abs(sizes - c)))


def folds_missing_a_label(Y, folds) -> int:
    r"""FZ: the number of folds containing at least one label with no positive examples.

    .. math::

       \mathrm{FZ}=\sum_{j=1}^{J}I\bigl(\exists k:S_{jk}=0\bigr)

    Examples
    --------
    >>> from medeval.metrics.split_quality import folds_missing_a_label
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> folds_missing_a_label(Y, np.array([0, 1, 0, 1, 0, 2]))
    1
    """
    s, _ = fold_label_counts(Y, folds)
    return int(np.count_nonzero(np.any(s == 0, axis=1)))


def fold_label_zeros(Y, folds) -> int:
    r"""FLZ: the number of (fold, label) combinations with no positive examples.

    .. math::

       \mathrm{FLZ}=\sum_{j=1}^{J}\sum_{k=1}^{K}I(S_{jk}=0)

    Examples
    --------
    >>> from medeval.metrics.split_quality import fold_label_zeros
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> fold_label_zeros(Y, np.array([0, 1, 0, 1, 0, 2]))
    1
    """
    s, _ = fold_label_counts(Y, folds)
    return int(np.count_nonzero(s == 0))


def fold_label_pair_zeros(
    Y, folds, *, variant: Literal["text", "code"] = "text", min_pair_count: int | None = None
) -> float:
    r"""FLPZ: (fold, label pair) combinations with no positive examples.

    .. math::

       \mathrm{FLPZ}=\sum_{j=1}^{J}\sum_{k:\,D^{*}_k\ge J}I(S^{*}_{jk}=0)

    ``variant="text"`` (default): the count, over label pairs with at least ``min_pair_count``
    positives in the whole data set (default: the number of folds :math:`J`, as written; "the convention is
    to not count the label-pairs with a number of positive examples less than the number of splits").
    ``variant="code"``: the thesis code, :math:`\bigl(\sum_j \#\{\text{zero pairs in fold } j\} -
    \#\{\text{pairs with fewer than } m \text{ positives}\}\bigr) / (K^* J)` with :math:`m` =
    ``min_pair_count``, default 5; an int count for "text", a float proportion for "code" (NaN with one
    label: there is no label pair).

    Examples
    --------
    >>> from medeval.metrics.split_quality import fold_label_pair_zeros
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> fold_label_pair_zeros(Y, folds)
    0
    >>> fold_label_pair_zeros(Y, np.array([0, 1, 0, 1, 0, 2]), min_pair_count=1)
    2
    """
    if variant not in ("text", "code"):
        raise ValueError(f"variant must be 'text' or 'code', got {variant!r}")
    y = _check_binary(Y, "Y")
    s, _ = fold_label_pair_counts(y, folds)
    n_folds = s.shape[0]
    threshold = (n_folds if variant == "text" else 5) if min_pair_count is None else int(min_pair_count)
    total = _pair_counts(y)
    if variant == "text":
        return int(np.count_nonzero((s == 0) & (total >= threshold)[None, :]))
    if total.size == 0:  # K = 1: a proportion of no label pairs (was a ZeroDivisionError)
        return float("nan")
    return float((np.count_nonzero(s == 0) - np.count_nonzero(total < threshold)) / (total.size * n_folds))


def split_quality_measures(
    Y,
    folds,
    *,
    lpd_normalisation: Literal["pairs", "labels"] = "pairs",
    flpz_variant: Literal["text", "code"] = "text",
) -> dict[str, float]:
    """LD, LPD, ED, FZ, FLZ and FLPZ of one split (one row of the chapter's Tab. LDprop).

    Examples
    --------
    >>> from medeval.metrics.split_quality import split_quality_measures
    >>> Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [0, 1], [1, 0]])
    >>> folds = np.array([0, 0, 0, 1, 1, 1])  # fold number of each example
    >>> q = split_quality_measures(Y, folds)
    >>> {k: round(float(q[k]), 4) for k in ("LD", "LPD", "ED", "FZ", "FLZ", "FLPZ")}
    {'LD': 0.75, 'LPD': 0.25, 'ED': 0.0, 'FZ': 0.0, 'FLZ': 0.0, 'FLPZ': 0.0}
    """
    y = _check_binary(Y, "Y")
    idx = fold_indices(folds, y.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ld, n_ld = label_distribution(y, idx, return_count=True)
        lpd, n_lpd = label_pair_distribution(y, idx, normalisation=lpd_normalisation, return_count=True)
    return {
        "LD": ld,
        "LPD": lpd,
        "ED": example_distribution(idx, y.shape[0]),
        "FZ": folds_missing_a_label(y, idx),
        "FLZ": fold_label_zeros(y, idx),
        "FLPZ": fold_label_pair_zeros(y, idx, variant=flpz_variant),
        "n_undefined_LD": n_ld,
        "n_undefined_LPD": n_lpd,
    }
