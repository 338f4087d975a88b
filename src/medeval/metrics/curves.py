"""Threshold curves for binary scores: ROC, PR, PR-T, and mean curves over trial-models.

Source: I. A. Reshma, *Influence de la distribution des classes et évaluation en apprentissage profond*
(PhD thesis, Université Toulouse 1 Capitole, 2021), Chapter 2 (Eqs. 2.1-2.10), Chapter 4 (§4.5.2.3:
precision and FPR curves at 101 fixed thresholds on min-max-normalised scores) and Chapter 5
(Algorithms 1-5: PR-T curves and their AUCs, the mean PR curve and mean PR-AUC with ROC-space
interpolation and explicit rules for tied recall).

Conventions
-----------
* Labels are binary (``0``/``1`` or ``bool``); ``1`` is the positive class. Scores are finite reals, larger
  means "more positive". ``pos``/``neg`` are the numbers of positive/negative examples.
* Everything is sort-based (``O(n log n)`` time, ``O(n)`` memory): no ``n x thresholds`` matrix is ever
  built, so the 10.5 M scores of the CAMELYON16 test set fit in memory (``benchmarks/bench_curves.py``).
* ROC curves have one point per *distinct* score (plus the start ``(0, 0)``), so they do not depend on the
  order of examples with tied scores (a mixed tie becomes one diagonal segment). This is scikit-learn's
  ``roc_curve(..., drop_intermediate=False)``.

Edge-case policy
----------------
* Curves, AUCs and the mean-PR algorithms need ``pos > 0`` and ``neg > 0`` (Algorithm 1: "Require
  pos > 0, neg > 0"); otherwise they raise ``ValueError`` naming ``y_true``.
* Min-max normalisation of constant scores is undefined and raises ``ValueError``.
* Single-threshold rates (:func:`confusion_rates`) return ``NaN`` where a denominator is zero (recall with no
  positives, precision with no predicted positives, FPR with no negatives); the F-measure is ``0`` when
  precision and recall are both defined and both ``0``, and ``NaN`` when either is undefined.

Array inputs may be numpy arrays, sequences or torch tensors (also on the GPU or requiring grad; converted
by ``medeval.metrics._arrays.to_numpy``). This module imports nothing from medeval outside
``medeval.metrics`` (numpy and scipy otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from medeval.metrics._arrays import to_numpy
from medeval.metrics._ranks import auc_from_stats, tie_group_stats

__all__ = [
    "ConfusionRates",
    "MeanCurve",
    "PRTCurve",
    "PRTAUC",
    "PRCurve",
    "RocCurve",
    "argmax_precision_ttest",
    "confusion_rates",
    "fixed_threshold_grid",
    "interpolated_pr_points",
    "linear_pr_auc",
    "mean_pr_auc",
    "mean_pr_curve",
    "mean_prt_curves",
    "mean_roc_curve",
    "min_max_normalize",
    "pr_auc_roc_interpolated",
    "pr_curve",
    "pr_t_auc",
    "pr_t_curve",
    "AUC_TIES",
    "roc_auc",
    "roc_curve",
    "trapezoid_auc",
    "vertical_average",
]


# --------------------------------------------------------------------------------------------------
# input validation


def _binary_labels_and_scores(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels as booleans (0/1 or bool accepted) and finite float scores, or ``ValueError`` naming the argument."""
    if y.dtype != bool:
        if y.size and not np.isin(y, (0, 1)).all():
            raise ValueError("y_true must hold binary labels (0/1 or bool)")
        y = y.astype(bool)
    if not np.isfinite(s).all():
        raise ValueError("y_score must be finite (no NaN or inf)")
    return y, s


def _check_binary_problem(y_true, y_score) -> tuple[np.ndarray, np.ndarray]:
    y = to_numpy(y_true)
    s = to_numpy(y_score, dtype=np.float64)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"y_true and y_score must be 1-D, got shapes {y.shape} and {s.shape}")
    if y.shape != s.shape:
        raise ValueError(f"y_true and y_score must have the same length, got {y.shape[0]} and {s.shape[0]}")
    y, s = _binary_labels_and_scores(y, s)
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            f"y_true must contain both classes (pos > 0 and neg > 0, thesis Algorithm 1), got pos={n_pos}, "
            f"neg={n_neg}: recall/ROC/PR are undefined without positives and FPR without negatives"
        )
    return y, s


# --------------------------------------------------------------------------------------------------
# single-threshold rates (Eqs. 2.1-2.4)


@dataclass(frozen=True)
class ConfusionRates:
    """Recall (TPR), precision (PPV), FPR and F-measure; arrays broadcast like the counts."""

    recall: np.ndarray
    precision: np.ndarray
    fpr: np.ndarray
    f_measure: np.ndarray


def _safe_ratio(num, den) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def confusion_rates(tp, fp, fn, tn) -> ConfusionRates:
    r"""Single-threshold metrics from confusion counts (thesis Eqs. 2.1-2.4).

    .. math::

       \begin{aligned}
       \mathrm{Recall} &= \frac{TP}{TP + FN}, &
       \mathrm{Precision} &= \frac{TP}{TP + FP},\\
       F &= \frac{2\,\mathrm{Precision}\cdot\mathrm{Recall}}{\mathrm{Precision} + \mathrm{Recall}}, &
       FPR &= \frac{FP}{FP + TN}.
       \end{aligned}

    Edge cases: a zero denominator gives ``NaN`` (never a silent 0 or 1); :math:`F = 0` when
    :math:`\mathrm{Precision} = \mathrm{Recall} = 0`; :math:`F` is ``NaN`` when either is ``NaN``. Counts may be scalars or arrays (broadcast).

    Examples
    --------
    >>> from medeval.metrics.curves import confusion_rates
    >>> r = confusion_rates(tp=3, fp=1, fn=2, tn=4)
    >>> print(f"recall={float(r.recall):.4f} precision={float(r.precision):.4f} "
    ...       f"F={float(r.f_measure):.4f} FPR={float(r.fpr):.4f}")
    recall=0.6000 precision=0.7500 F=0.6667 FPR=0.2000
    """
    tp, fp, fn, tn = (to_numpy(v, dtype=np.float64) for v in (tp, fp, fn, tn))
    for name, v in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn)):
        if np.any(v < 0) or not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must hold finite non-negative counts")
    recall = _safe_ratio(tp, tp + fn)
    precision = _safe_ratio(tp, tp + fp)
    fpr = _safe_ratio(fp, fp + tn)
    with np.errstate(divide="ignore", invalid="ignore"):
        both_zero = (precision == 0) & (recall == 0)
        f = np.where(both_zero, 0.0, 2 * precision * recall / np.where(both_zero, 1.0, precision + recall))
    f = np.where(np.isnan(precision) | np.isnan(recall), np.nan, f)
    return ConfusionRates(recall=recall, precision=precision, fpr=fpr, f_measure=f)


# --------------------------------------------------------------------------------------------------
# ROC and PR curves (Eqs. 2.5, 2.6)


@dataclass(frozen=True)
class RocCurve:
    """ROC points in order of decreasing threshold, starting at ``(0, 0)`` (threshold ``+inf``).

    ``tp``/``fp`` are the cumulative counts; :math:`tpr = tp / pos`, :math:`fpr = fp / neg`.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_pos: int
    n_neg: int


def roc_curve(y_true, y_score) -> RocCurve:
    r"""ROC curve (thesis Eq. 2.5), one point per distinct score plus ``(0, 0)``.

    .. math::

       ROC_{curve} = \{(fpr(t), tpr(t)) : -\infty < t < \infty\}

    Examples are ranked by decreasing score (Saito & Rehmsmeier 2015); all examples with the same score
    enter together, so the curve does not depend on the order of tied examples. Identical to
    ``sklearn.metrics.roc_curve(y_true, y_score, drop_intermediate=False)`` except that the first threshold is
    ``+inf``. Raises ``ValueError`` when a class is absent.

    Examples
    --------
    >>> from medeval.metrics.curves import roc_curve
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> roc = roc_curve(y, s)
    >>> roc.fpr.tolist(), roc.tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    y, s = _check_binary_problem(y_true, y_score)
    order = np.argsort(s, kind="stable")[::-1]
    s_sorted = s[order]
    y_sorted = y[order]
    del order
    last_of_group = np.flatnonzero(np.diff(s_sorted)) if s_sorted.size > 1 else np.empty(0, dtype=np.int64)
    last_of_group = np.r_[last_of_group, s_sorted.size - 1]
    tp = np.cumsum(y_sorted, dtype=np.int64)[last_of_group]
    fp = (last_of_group + 1) - tp
    n_pos = int(tp[-1])
    n_neg = int(fp[-1])
    tp = np.r_[0, tp]
    fp = np.r_[0, fp]
    return RocCurve(
        fpr=fp / n_neg,
        tpr=tp / n_pos,
        thresholds=np.r_[np.inf, s_sorted[last_of_group]],
        tp=tp,
        fp=fp,
        n_pos=n_pos,
        n_neg=n_neg,
    )


def trapezoid_auc(x, y) -> float:
    r"""Area under a curve by the trapezoid rule (thesis Eq. 2.10).

    .. math::

       \int_a^b f(x)\,dx \approx \sum_{k=1}^{N} (x_{k+1} - x_k)\,\frac{f(x_k) + f(x_{k+1})}{2}

    ``x`` must be monotone (non-decreasing); NaN values raise ``ValueError``.

    Examples
    --------
    >>> from medeval.metrics.curves import trapezoid_auc
    >>> trapezoid_auc([0.0, 0.5, 1.0], [0.0, 1.0, 1.0])
    0.75
    """
    x = to_numpy(x, dtype=np.float64)
    y = to_numpy(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not contain NaN")
    if np.any(np.diff(x) < 0):
        raise ValueError("x must be non-decreasing")
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


AUC_TIES = ("half", "correct", "incorrect")


def roc_auc(y_true, y_score, *, ties: str = "half", undefined="raise", sample_mask=None):
    r"""ROC-AUC: the probability that a positive outscores a negative (thesis Eqs. 2.5 and 2.10).

    .. math::

       \text{ROC-AUC} = \int_0^1 tpr \; d(fpr)
       = \frac{1}{pos \cdot neg} \sum_{i:\,y_i = 1} \; \sum_{j:\,y_j = 0}
         \Bigl[\mathbb{1}(s_i > s_j) + \tfrac{1}{2}\,\mathbb{1}(s_i = s_j)\Bigr]

    A tie :math:`s_i = s_j` counts :math:`\tfrac{1}{2}` as written (``ties="half"``, the default: the trapezoid
    area under :func:`roc_curve`, the Mann-Whitney statistic and ``sklearn.metrics.roc_auc_score``), 1
    (``"correct"``: the indicator :math:`I(p_u \ge p_v)` of the multi-label chapter) or 0 (``"incorrect"``).
    This is the one AUC of the package: :mod:`medeval.metrics.multilabel`, the EVE scores and every experiment
    call it.

    Vectorised: ``y_true`` and ``y_score`` of shape ``(..., n)`` give one AUC per row (a float for 1-D input).
    ``sample_mask`` (boolean, broadcast to that shape) keeps only the marked examples of each row.

    Undefined when a row has no positive or no negative example: ``undefined="raise"`` (default) raises
    ``ValueError`` naming ``y_true``; a number (e.g. ``np.nan``) is returned for such rows instead.

    Examples
    --------
    >>> from medeval.metrics.curves import roc_auc
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> round(roc_auc(y, s), 4)
    0.75
    >>> roc_auc([0, 1, 1], [0.5, 0.5, 0.9], ties="correct"), roc_auc([0, 1, 1], [0.5, 0.5, 0.9])
    (1.0, 0.75)
    """
    if ties not in AUC_TIES:
        raise ValueError(f"ties must be one of {AUC_TIES}, got {ties!r}")
    if isinstance(undefined, bool):
        raise ValueError(f"undefined must be 'raise' or a number (e.g. np.nan), got {undefined!r}")
    if not (isinstance(undefined, str) and undefined == "raise"):
        try:
            undefined = float(undefined)
        except (TypeError, ValueError):
            raise ValueError(f"undefined must be 'raise' or a number (e.g. np.nan), got {undefined!r}") from None
    y = to_numpy(y_true)
    s = to_numpy(y_score, dtype=np.float64)
    if y.shape != s.shape or y.ndim == 0:
        raise ValueError(f"y_true and y_score must have the same shape (..., n), got {y.shape} and {s.shape}")
    y, s = _binary_labels_and_scores(y, s)
    mask = None
    if sample_mask is not None:
        mask = to_numpy(sample_mask)
        if mask.dtype != bool:
            raise ValueError(f"sample_mask must be boolean, got dtype {mask.dtype}")
        try:
            mask = np.broadcast_to(mask, y.shape)
        except ValueError:
            raise ValueError(f"sample_mask of shape {mask.shape} does not broadcast to y_true's {y.shape}") from None
    if y.shape[-1] == 0:
        value, undefined_rows = np.full(y.shape[:-1], np.nan), np.ones(y.shape[:-1], dtype=bool)
        ranks = {"n_pos": np.zeros(y.shape[:-1], dtype=np.int64), "n_neg": np.zeros(y.shape[:-1], dtype=np.int64)}
    else:
        ranks = tie_group_stats(y, s, mask)
        value, undefined_rows = auc_from_stats(ranks, ties)
    pos, neg = ranks["n_pos"], ranks["n_neg"]
    defined = ~undefined_rows
    if not np.all(defined):
        if isinstance(undefined, str):
            bad = tuple(int(i) for i in np.argwhere(~np.asarray(defined))[0])  # () for one row
            where = f" in row {bad[0] if len(bad) == 1 else bad}" if bad else ""
            raise ValueError(
                f"y_true must contain both classes for an AUC (pos > 0 and neg > 0, thesis Algorithm 1){where}, "
                f"got pos={int(np.asarray(pos)[bad])}, neg={int(np.asarray(neg)[bad])}; pass undefined=np.nan "
                "to get NaN for such rows"
            )
        value = np.where(defined, value, undefined)
    return float(value) if y.ndim == 1 else np.asarray(value, dtype=np.float64)


@dataclass(frozen=True)
class PRCurve:
    """PR points in order of decreasing threshold (increasing recall), one per distinct score."""

    recall: np.ndarray
    precision: np.ndarray
    thresholds: np.ndarray


def pr_curve(y_true, y_score) -> PRCurve:
    r"""PR curve (thesis Eq. 2.6, after Boyd et al. 2013).

    .. math::

       PR_{curve} = \{(recall(t), prec(t)) : -\infty < t < \infty\}

    One point per distinct score threshold, so precision is always defined (:math:`TP + FP \ge 1`). No artificial
    point at recall 0 is added (scikit-learn appends ``(0, 1)``); otherwise this equals
    ``sklearn.metrics.precision_recall_curve`` reversed. Raises ``ValueError`` when a class is absent.

    Examples
    --------
    >>> from medeval.metrics.curves import pr_curve
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> pr = pr_curve(y, s)
    >>> pr.recall.tolist(), np.round(pr.precision, 4).tolist()
    ([0.5, 0.5, 1.0, 1.0], [1.0, 0.5, 0.6667, 0.5])
    """
    roc = roc_curve(y_true, y_score)
    tp, fp = roc.tp[1:], roc.fp[1:]
    return PRCurve(recall=tp / roc.n_pos, precision=tp / (tp + fp), thresholds=roc.thresholds[1:])


# --------------------------------------------------------------------------------------------------
# fixed-threshold curves: precision / FPR curves (Ch. 4) and PR-T (Algorithms 1-2)


def min_max_normalize(y_score) -> np.ndarray:
    r"""Min-max normalisation of the scores (thesis Algorithm 1, line 1; §4.5.2.3).

    .. math::

       s^n_j = \frac{s_j - \min_k s_k}{\max_k s_k - \min_k s_k}

    The maximum maps exactly to 1.0 and the minimum to 0.0. Constant scores raise ``ValueError``
    (the normalisation is undefined), and so do NaN and inf. Where :math:`\max_k s_k - \min_k s_k` overflows (finite
    scores spanning more than about 1.8e308) both differences are taken of the halved scores, which is
    the same ratio.

    Examples
    --------
    >>> from medeval.metrics.curves import min_max_normalize
    >>> min_max_normalize([2.0, 4.0, 6.0, 3.0]).tolist()
    [0.0, 0.5, 1.0, 0.25]
    """
    s = to_numpy(y_score, dtype=np.float64)
    if s.size == 0:
        raise ValueError("y_score must not be empty")
    lo, hi = float(s.min()), float(s.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError("y_score must be finite (no NaN or inf)")
    if hi == lo:
        raise ValueError("y_score is constant: min-max normalisation is undefined")
    if np.isinf(hi - lo):
        return (0.5 * s - 0.5 * lo) / (0.5 * hi - 0.5 * lo)
    return (s - lo) / (hi - lo)


def fixed_threshold_grid(n_thresholds: int = 101) -> np.ndarray:
    r"""The thesis's equally spaced thresholds :math:`T = \{0, \frac{1}{N-1}, \dots, 1\}` (101 points = step 0.01).

    Each threshold is the double nearest to :math:`i / (N - 1)`, computed as that one division: ``np.linspace``
    puts 10 of the 101 thresholds one ulp above :math:`i / 100` (0.35, 0.41, ... 0.95), so a score equal to such a
    threshold would be predicted negative by :math:`s \ge t`.

    Examples
    --------
    >>> from medeval.metrics.curves import fixed_threshold_grid
    >>> fixed_threshold_grid(5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> len(fixed_threshold_grid())
    101
    """
    if int(n_thresholds) != n_thresholds or n_thresholds < 2:
        raise ValueError(f"n_thresholds must be an integer >= 2, got {n_thresholds!r}")
    return _unit_grid(int(n_thresholds))


def _unit_grid(n: int) -> np.ndarray:
    """``i / (n - 1)`` for ``i = 0 .. n - 1``, each one correctly rounded division (exact where representable)."""
    if n < 2:
        raise ValueError(f"a grid on [0, 1] needs at least 2 points, got {n}")
    return np.arange(n, dtype=np.float64) / (n - 1)


@dataclass(frozen=True)
class PRTCurve:
    r"""Confusion counts and rates at fixed thresholds :math:`t` (predicted positive iff :math:`s^n_j \ge t`).

    ``precision`` and ``recall`` are the PR-T curves (Algorithm 1); ``precision`` and ``fpr`` are the
    thesis's Chapter 4 "precision curve" (Eq. 2.7) and "FPR curve" (Eq. 2.8).
    """

    thresholds: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    fpr: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray
    n_pos: int
    n_neg: int


def _grid_counts_at_or_above(s: np.ndarray, y: np.ndarray, t: np.ndarray,
                             chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    r"""Positives and negatives with :math:`s_j \ge t_i` for every threshold of the grid :math:`t_i = i / (K-1)`
    (:func:`fixed_threshold_grid`): ``(tp, fp)``, each of length :math:`K`.

    For each score, :math:`g = \lfloor s (K-1) \rfloor` (clipped to the grid) is the index of the last threshold at
    or below it up to one step of rounding either way, which one comparison with each neighbour corrects, so that
    :math:`g + 1 = |\{i : t_i \le s\}|` exactly; the counts of :math:`g + 1` per class, summed from the top, are
    the counts at or above each threshold. Scores outside :math:`[0, 1]` (unnormalised) land on the grid's ends.
    Works through the scores in chunks that stay in the CPU's cache."""
    k = t.size
    above = np.append(t, np.inf)  # above[g + 1]: the next threshold (none above the last)
    total = np.zeros(k + 1, dtype=np.int64)
    positive = np.zeros(k + 1, dtype=np.int64)
    for start in range(0, s.size, chunk):
        sc, yc = s[start:start + chunk], y[start:start + chunk]
        g = np.clip(sc * (k - 1), -1.0, float(k)).astype(np.intp)  # in float first: a huge score stays on the grid
        np.clip(g, 0, k - 1, out=g)
        g += sc >= above[g + 1]
        g -= sc < t[g]
        g += 1  # thresholds at or below each score
        total += np.bincount(g, minlength=k + 1)
        positive += np.bincount(g[yc], minlength=k + 1)
    tp = np.cumsum(positive[::-1])[::-1][1:]
    return tp, np.cumsum(total[::-1])[::-1][1:] - tp


def pr_t_curve(y_true, y_score, *, n_thresholds: int = 101, thresholds=None, normalize: bool = True) -> PRTCurve:
    r"""PR-T points (thesis Algorithm 1) and the Chapter 4 precision/FPR curves (Eqs. 2.7, 2.8).

    .. math::

       \begin{aligned}
       s^n_j &= \frac{s_j - \min_k s_k}{\max_k s_k - \min_k s_k}, \\
       prec(t_i) &= \frac{TP_i}{TP_i + FP_i}, \qquad recall(t_i) = \frac{TP_i}{TP_i + FN_i},
       \end{aligned}

    and :math:`fpr(t_i) = \frac{FP_i}{FP_i + TN_i}`. Scores are min-max normalised (``normalize=True``, the
    thesis's procedure); then for each threshold :math:`t_i` in :math:`T` (default 101 points 0.00, 0.01, ...,
    1.00) an example is predicted positive iff :math:`s^n_j \ge t_i`.

    Implementation: on the default grid (:func:`fixed_threshold_grid`), each score's number of thresholds at or
    below it is read off the grid's spacing and corrected by one comparison on each side, then counted per
    class (``O(n)``, :func:`_grid_counts_at_or_above`); with ``thresholds`` given, positives' and negatives'
    scores are sorted once and counted with ``searchsorted`` (``O(n log n)``). Both count exactly
    :math:`s \ge t_i`, independent of the order of examples and of how ties are ordered.
    Given ``thresholds`` (one or more, strictly increasing) and ``normalize=False``, it is the confusion counts
    of the raw scores at exactly those thresholds.

    Edge cases: ``ValueError`` if a class is absent (Algorithm 1 requires :math:`pos > 0`, :math:`neg > 0`) or the scores
    are constant. With normalisation every :math:`t \le 1` has at least one predicted positive (the maximum), so
    precision is always defined. Without normalisation, thresholds above the maximum score give
    ``precision = NaN`` (no predicted positive).

    Examples
    --------
    >>> from medeval.metrics.curves import pr_t_curve
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> c = pr_t_curve(y, s, thresholds=[0.0, 0.5])  # s_n = [0, 0.4286, 0.3571, 1]
    >>> int(c.tp[1]), int(c.fp[1]), float(c.precision[1]), float(c.recall[1])  # at t = 0.5: only s_n = 1
    (1, 0, 1.0, 0.5)
    >>> c = pr_t_curve(y, s, n_thresholds=5)
    >>> np.round(c.precision, 4).tolist()
    [0.5, 0.6667, 1.0, 1.0, 1.0]
    """
    y, s = _check_binary_problem(y_true, y_score)
    if normalize:
        s = min_max_normalize(s)
    t = fixed_threshold_grid(n_thresholds) if thresholds is None else to_numpy(thresholds, dtype=np.float64)
    if t.ndim != 1 or t.size < 1 or np.any(np.diff(t) <= 0) or not np.isfinite(t).all():
        raise ValueError("thresholds must be a 1-D strictly increasing finite array with >= 1 value")
    n_pos = int(np.count_nonzero(y))
    n_neg = y.size - n_pos
    if thresholds is None:
        tp, fp = _grid_counts_at_or_above(s, y, t)
    else:
        tp = n_pos - np.searchsorted(np.sort(s[y]), t, side="left")
        fp = n_neg - np.searchsorted(np.sort(s[~y]), t, side="left")
    fn = n_pos - tp
    tn = n_neg - fp
    rates = confusion_rates(tp, fp, fn, tn)
    return PRTCurve(
        thresholds=t,
        precision=rates.precision,
        recall=rates.recall,
        fpr=rates.fpr,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        n_pos=n_pos,
        n_neg=n_neg,
    )


@dataclass(frozen=True)
class PRTAUC:
    """Areas under the fixed-threshold curves (trapezoid over the threshold axis)."""

    precision: float
    recall: float
    fpr: float


def pr_t_auc(curve: PRTCurve, *, min_thresholds: int = 101) -> PRTAUC:
    r"""PR-T AUCs (thesis Algorithm 2) and the Chapter 4 FPR-curve AUC.

    .. math::

       \begin{aligned}
       \text{precision-AUC} &= \sum_{i=1}^{|T|-1} \Delta t \, \frac{prec(t_i) + prec(t_{i+1})}{2}, \\
       \text{recall-AUC} &= \sum_{i=1}^{|T|-1} \Delta t \, \frac{recall(t_i) + recall(t_{i+1})}{2}.
       \end{aligned}

    The FPR-curve AUC is the same sum over :math:`fpr(t_i)`; with the 101 thresholds of Chapter 4
    (:math:`\Delta t = 1/100`)

    .. math::

       A_{\mathrm{fpr}} = \sum_{i=0}^{99} \frac{\mathrm{fpr}(t_i) + \mathrm{fpr}(t_{i+1})}{200}.

    Algorithm 2 requires :math:`|T| \ge 101` (``min_thresholds``); fewer thresholds raise ``ValueError``. NaN
    precision (only possible with un-normalised scores) raises ``ValueError``. As :math:`\Delta t \to 0` the recall-AUC
    tends to the mean normalised score of the positives and the FPR-AUC to that of the negatives
    (layer-cake identity).

    Examples
    --------
    >>> from medeval.metrics.curves import pr_t_auc, pr_t_curve
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> auc = pr_t_auc(pr_t_curve(y, s))
    >>> print(f"precision={auc.precision:.4f} recall={auc.recall:.4f} fpr={auc.fpr:.4f}")
    precision=0.8458 recall=0.6775 fpr=0.2150
    """
    if curve.thresholds.size < min_thresholds:
        raise ValueError(
            f"curve has {curve.thresholds.size} thresholds; Algorithm 2 requires at least {min_thresholds}"
        )
    return PRTAUC(
        precision=trapezoid_auc(curve.thresholds, curve.precision),
        recall=trapezoid_auc(curve.thresholds, curve.recall),
        fpr=trapezoid_auc(curve.thresholds, curve.fpr),
    )


# --------------------------------------------------------------------------------------------------
# mean curves


@dataclass(frozen=True)
class MeanCurve:
    """A vertically averaged curve: ``per_trial`` has one row per trial-model on the common ``grid``."""

    grid: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    per_trial: np.ndarray


def _mean_std(rows: np.ndarray, grid: np.ndarray, ddof: int) -> MeanCurve:
    rows = np.asarray(rows, dtype=np.float64)
    std = rows.std(axis=0, ddof=ddof) if rows.shape[0] > ddof else np.full(rows.shape[1], np.nan)
    return MeanCurve(grid=grid, mean=rows.mean(axis=0), std=std, per_trial=rows)


def vertical_average(xs: Sequence, ys: Sequence, grid, *, ddof: int = 0) -> MeanCurve:
    r"""Vertical averaging of curves :math:`y = f_i(x)` on a common ``grid`` (Fawcett 2006, thesis §5.2.2).

    For ROC curves (:func:`mean_roc_curve`) this is

    .. math::

       \overline{ROC}(fpr) = \frac{1}{nT} \sum_{i=1}^{nT} ROC_i(fpr)

    For each grid value the curve's value is the *maximum* ``y`` among its points with exactly that ``x``;
    otherwise it is linearly interpolated between the neighbouring points. Each ``x`` must be
    non-decreasing and cover the grid. Used for mean ROC curves (linear interpolation is valid in ROC space)
    and, as the thesis's Chapter 4 did (1,001 points), for the *naive* mean PR curve that Chapter 5 deems
    incorrect (compare :func:`mean_pr_curve`). Mean and std (``ddof``) are taken over trials. NaN or inf in a
    curve or in the grid raises ``ValueError`` (a NaN ``x`` has no place in the order the interpolation needs).

    Examples
    --------
    >>> from medeval.metrics.curves import vertical_average
    >>> avg = vertical_average([[0, 1], [0, 0.5, 1]], [[0, 1], [0, 1, 1]], grid=[0, 0.5, 1])
    >>> avg.mean.tolist(), avg.std.tolist()
    ([0.0, 0.75, 1.0], [0.0, 0.25, 0.0])
    """
    grid = to_numpy(grid, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all():
        raise ValueError(f"grid must be a non-empty 1-D array of finite values, got shape {grid.shape}")
    if len(xs) != len(ys) or len(xs) == 0:
        raise ValueError("xs and ys must be non-empty sequences of equal length (one curve per trial)")
    rows = []
    for x, y in zip(xs, ys, strict=True):
        x = to_numpy(x, dtype=np.float64)
        y = to_numpy(y, dtype=np.float64)
        if x.shape != y.shape or x.ndim != 1:
            raise ValueError("each curve's x and y must be 1-D of equal length")
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise ValueError("each curve's x and y must be finite (no NaN or inf)")
        if np.any(np.diff(x) < 0):
            raise ValueError("each curve's x must be non-decreasing")
        if grid.min() < x[0] - 1e-12 or grid.max() > x[-1] + 1e-12:
            raise ValueError(f"grid [{grid.min()}, {grid.max()}] is outside a curve's x range [{x[0]}, {x[-1]}]")
        right = np.searchsorted(x, grid, side="right")  # points with x <= g are [0, right)
        at_or_left = np.clip(right - 1, 0, x.size - 1)
        exact = x[at_or_left] == grid
        # max y among points with x == g: curves are monotone within a tie only for ROC, so take it explicitly
        left_eq = np.searchsorted(x, grid, side="left")
        values = np.empty_like(grid)
        for k in np.flatnonzero(exact):
            values[k] = y[left_eq[k] : right[k]].max()
        inner = ~exact
        lo = np.clip(right[inner] - 1, 0, x.size - 1)
        hi = np.clip(right[inner], 0, x.size - 1)
        dx = x[hi] - x[lo]
        w = np.where(dx > 0, (grid[inner] - x[lo]) / np.where(dx > 0, dx, 1.0), 0.0)
        values[inner] = y[lo] + w * (y[hi] - y[lo])
        rows.append(values)
    return _mean_std(np.vstack(rows), grid, ddof)


def mean_roc_curve(rocs: Sequence[RocCurve], *, n_points: int = 1001, ddof: int = 0) -> MeanCurve:
    r"""Mean ROC curve by vertical averaging over an FPR grid (Fawcett 2006; thesis §4.5.2.3 used 1,001 points).

    .. math::

       \overline{ROC}(fpr) = \frac{1}{nT} \sum_{i=1}^{nT} ROC_i(fpr)

    Examples
    --------
    >>> from medeval.metrics.curves import mean_roc_curve, roc_curve
    >>> y = [0, 0, 1, 1]
    >>> rocs = [roc_curve(y, [0.1, 0.4, 0.35, 0.8]), roc_curve(y, [0.1, 0.2, 0.3, 0.4])]
    >>> curve = mean_roc_curve(rocs, n_points=5)
    >>> curve.grid.tolist(), np.round(curve.mean, 4).tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.75, 0.75, 1.0, 1.0, 1.0])
    """
    if not rocs:
        raise ValueError("rocs must contain at least one ROC curve")
    grid = _unit_grid(int(n_points))
    return vertical_average([r.fpr for r in rocs], [r.tpr for r in rocs], grid, ddof=ddof)


def mean_prt_curves(curves: Sequence[PRTCurve], *, ddof: int = 0) -> dict[str, MeanCurve]:
    r"""Threshold-wise mean and std of PR-T / precision / FPR curves (thesis §5.4.4: no interpolation needed).

    .. math::

       \overline{prec}(t_i) = \frac{1}{nT} \sum_{k=1}^{nT} prec_k(t_i), \qquad
       \overline{recall}(t_i) = \frac{1}{nT} \sum_{k=1}^{nT} recall_k(t_i)

    and likewise :math:`\overline{fpr}(t_i)`.

    All curves must share the same thresholds. Returns ``{"precision", "recall", "fpr"}`` -> :class:`MeanCurve`.

    Examples
    --------
    >>> from medeval.metrics.curves import mean_prt_curves, pr_t_curve
    >>> y = [0, 0, 1, 1]
    >>> curves = [pr_t_curve(y, [0.1, 0.4, 0.35, 0.8], n_thresholds=5),
    ...           pr_t_curve(y, [0.3, 0.2, 0.1, 0.4], n_thresholds=5)]
    >>> mean = mean_prt_curves(curves)
    >>> np.round(mean["precision"].mean, 4).tolist()
    [0.5, 0.5, 0.75, 1.0, 1.0]
    """
    if not curves:
        raise ValueError("curves must contain at least one PR-T curve")
    t = curves[0].thresholds
    for c in curves[1:]:
        if c.thresholds.shape != t.shape or not np.array_equal(c.thresholds, t):
            raise ValueError("all PR-T curves must share the same thresholds")
    return {
        name: _mean_std(np.vstack([getattr(c, name) for c in curves]), t, ddof)
        for name in ("precision", "recall", "fpr")
    }


# --------------------------------------------------------------------------------------------------
# mean PR curve and PR-AUC with ROC-space interpolation and tie rules (Algorithms 3-5)


def _tie_group(roc: RocCurve, tp_target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index range ``[lo, hi)`` of ROC points whose TP equals ``tp_target`` (integer-exact, tolerant to
    rounding of ``tpr_m * pos``); ``lo == hi`` means no exact point (``lo`` = first point with larger TP)."""
    tol = 1e-7
    lo = np.searchsorted(roc.tp, tp_target - tol, side="left")
    hi = np.searchsorted(roc.tp, tp_target + tol, side="right")
    return lo, hi


def _fp_for_tp(roc: RocCurve, tp_m: float, lo: int, hi: int, mode: str) -> np.ndarray:
    """FP count(s) for one recall grid point: Algorithm 3's FPR_FOR_TPR (``mode="curve"``) or Algorithm 5's
    RECALL_PREC_FOR_AUC (``mode="auc"``), in FP counts instead of rates (``fp = fpr * neg``)."""
    last = roc.tp.size
    if hi > lo:  # tpr_m coincides with real ROC point(s)
        if hi - lo == 1:
            return roc.fp[lo : lo + 1].astype(np.float64)
        group = roc.fp[lo:hi].astype(np.float64)
        if lo == 0:  # start-point tie: negatives ranked first -> their cost, the maximum FPR
            return group[-1:]
        if hi == last:  # end-point tie at TPR = 1: reward, the minimum FPR
            return group[:1]
        if mode == "curve":  # intermediate tie: median (Boyd et al. 2013)
            return np.array([np.median(group)])
        return group  # AUC: keep every tied FPR (min for the left interval, max for the right)
    # Eq. 5.2: linear interpolation in ROC space between points lo - 1 and lo
    tp0, tp1 = roc.tp[lo - 1], roc.tp[lo]
    fp0, fp1 = roc.fp[lo - 1], roc.fp[lo]
    return np.array([fp0 + (fp1 - fp0) * (tp_m - tp0) / (tp1 - tp0)])


def interpolated_pr_points(
    roc: RocCurve, *, n_points: int = 101, mode: str = "curve"
) -> tuple[np.ndarray, np.ndarray]:
    r"""Recall/precision points of one trial-model on a recall grid (thesis Algorithms 3 and 5, Eq. 5.2).

    For each :math:`tpr_m` in :math:`\{0, \frac{1}{n_{points}-1}, \dots, 1\}` strictly between ROC points
    :math:`j-1` and :math:`j`, interpolate in ROC space (Eq. 5.2, which is Davis & Goadrich's
    :math:`FP_x = FP_A + skew \cdot x`, Eq. 5.1) and take the precision there (Alg. 3 line 5 / Alg. 5 line 24):

    .. math::

       \begin{aligned}
       fpr_m &= fpr_{j-1} + (fpr_j - fpr_{j-1}) \, \frac{tpr_m - tpr_{j-1}}{tpr_j - tpr_{j-1}}, \\
       prec_m &= \frac{tpr_m \cdot pos}{tpr_m \cdot pos + fpr_m \cdot neg}.
       \end{aligned}

    If :math:`tpr_m` equals a single ROC point, its FPR is used; a group :math:`FPR_j` of ROC points tied at
    :math:`tpr_m` gives

    .. math::

       fpr(tpr_m) =
       \begin{cases}
         \max FPR_j & \text{start tie (the cost of negatives ranked first),} \\
         \operatorname{median} FPR_j & \text{intermediate tie (Boyd et al. 2013),} \\
         \min FPR_j & \text{end tie at } tpr_m = 1 \text{ (a reward).}
       \end{cases}

    The start tie is the group containing :math:`(0, 0)`. The median is ``mode="curve"`` (Algorithm 3);
    ``mode="auc"`` (Algorithm 5) keeps all tied FPRs of an intermediate tie in increasing order (the minimum
    bounds the left interval, the maximum the right one).

    The undefined start precision :math:`0/0` (the thesis tests ``== inf``) is replaced by the next point's
    (Alg. 3 line 6, Alg. 4 line 9). "End" is read as the tie group at :math:`TPR = 1` (the thesis's literal
    :math:`j = |ROC|` would classify it as intermediate and contradict its own Example 1).

    Returns ``(recall, precision)``; in ``mode="curve"`` both have ``n_points`` entries.

    Examples
    --------
    >>> from medeval.metrics.curves import interpolated_pr_points, roc_curve
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> recall, precision = interpolated_pr_points(roc_curve(y, s), n_points=5)
    >>> recall.tolist(), np.round(precision, 4).tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [1.0, 1.0, 0.6667, 0.6, 0.6667])
    """
    if mode not in ("curve", "auc"):
        raise ValueError(f"mode must be 'curve' or 'auc', got {mode!r}")
    if int(n_points) != n_points or n_points < 2:
        raise ValueError(f"n_points must be an integer >= 2, got {n_points!r}")
    grid = _unit_grid(int(n_points))
    tp_grid = grid * roc.n_pos
    lo, hi = _tie_group(roc, tp_grid)
    recalls, precisions = [], []
    for m, tp_m in enumerate(tp_grid):
        exact_tp = float(roc.tp[lo[m]]) if hi[m] > lo[m] else tp_m
        fps = _fp_for_tp(roc, exact_tp, int(lo[m]), int(hi[m]), mode)
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = exact_tp / (exact_tp + fps)
        recalls.append(np.full(fps.size, grid[m]))
        precisions.append(prec)
    recall = np.concatenate(recalls)
    precision = np.concatenate(precisions)
    if np.isnan(precision[0]):
        precision[0] = precision[1]
    return recall, precision


def mean_pr_curve(rocs: Sequence[RocCurve], *, n_points: int = 101, ddof: int = 0) -> MeanCurve:
    r"""Mean PR curve over trial-models (thesis Algorithm 3): ROC-space interpolation with the tie rules of
    :func:`interpolated_pr_points` (``mode="curve"``), then vertical averaging (mean ± std) per recall.

    .. math::

       PREC_{mean}[m] = \frac{1}{nT} \sum_{i=1}^{nT} PREC_s[i][m] \;\pm\; \operatorname{std}_i PREC_s[i][m].

    Examples
    --------
    >>> from medeval.metrics.curves import mean_pr_curve, roc_curve
    >>> y = [0, 0, 1, 1]
    >>> rocs = [roc_curve(y, [0.1, 0.4, 0.35, 0.8]), roc_curve(y, [0.1, 0.2, 0.3, 0.4])]
    >>> curve = mean_pr_curve(rocs, n_points=5)
    >>> curve.grid.tolist(), np.round(curve.mean, 4).tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [1.0, 1.0, 0.8333, 0.8, 0.8333])
    """
    if not rocs:
        raise ValueError("rocs must contain at least one ROC curve")
    rows = [interpolated_pr_points(r, n_points=n_points, mode="curve")[1] for r in rocs]
    return _mean_std(np.vstack(rows), _unit_grid(int(n_points)), ddof)


def pr_auc_roc_interpolated(roc: RocCurve, *, n_points: int = 101) -> float:
    r"""PR-AUC of one trial-model (thesis Algorithm 4 body with Algorithm 5): trapezoid over the recall grid,
    keeping every tied FPR at intermediate ties (zero-width steps).

    .. math::

       \begin{aligned}
       AUCs[i] &= \sum_{k=1}^{j-1} \frac{PREC_i[k] + PREC_i[k+1]}{2} \\
       &\qquad \times \bigl(RECALL_i[k+1] - RECALL_i[k]\bigr)
       \end{aligned}

    Examples
    --------
    >>> from medeval.metrics.curves import pr_auc_roc_interpolated, roc_curve
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> round(pr_auc_roc_interpolated(roc_curve(y, s)), 4)
    0.7973
    """
    recall, precision = interpolated_pr_points(roc, n_points=n_points, mode="auc")
    return trapezoid_auc(recall, precision)


def mean_pr_auc(rocs: Sequence[RocCurve], *, n_points: int = 101, ddof: int = 0) -> tuple[float, float, np.ndarray]:
    r"""Mean PR-AUC over trial-models (thesis Algorithm 4): ``(mean, std, per_trial_aucs)``.

    .. math::

       \begin{aligned}
       AUCs[i] &= \sum_{k=1}^{j-1} \frac{PREC_i[k] + PREC_i[k+1]}{2} \\
       &\qquad \times \bigl(RECALL_i[k+1] - RECALL_i[k]\bigr), \\
       \text{PR-AUC}_{mean} &= \operatorname{mean}_i AUCs[i] \pm \operatorname{std}_i AUCs[i].
       \end{aligned}

    Examples
    --------
    >>> from medeval.metrics.curves import mean_pr_auc, roc_curve
    >>> y = [0, 0, 1, 1]
    >>> rocs = [roc_curve(y, [0.1, 0.4, 0.35, 0.8]), roc_curve(y, [0.1, 0.2, 0.3, 0.4])]
    >>> mean, std, per_trial = mean_pr_auc(rocs)
    >>> round(mean, 4), round(std, 4), np.round(per_trial, 4).tolist()
    (0.8986, 0.1014, [0.7973, 1.0])
    """
    if not rocs:
        raise ValueError("rocs must contain at least one ROC curve")
    aucs = np.array([pr_auc_roc_interpolated(r, n_points=n_points) for r in rocs])
    std = float(aucs.std(ddof=ddof)) if aucs.size > ddof else float("nan")
    return float(aucs.mean()), std, aucs


def linear_pr_auc(pr: PRCurve, *, n_points: int = 101) -> float:
    r"""PR-AUC after *naive linear* interpolation in PR space on a recall grid (for comparison only).

    .. math::

       prec(r) = prec_{j-1} + (prec_j - prec_{j-1}) \, \frac{r - recall_{j-1}}{recall_j - recall_{j-1}}

    The area is the trapezoid rule (:func:`trapezoid_auc`) over the grid.

    This is the interpolation the thesis's Chapter 4 used for mean PR curves and that Chapter 5 (after Davis &
    Goadrich 2006) calls incorrect. The curve is extended to recall 0 with its first precision; ties in recall
    take the maximum precision (vertical averaging rule).

    Examples
    --------
    >>> from medeval.metrics.curves import linear_pr_auc, pr_curve
    >>> y = [0, 0, 1, 1]
    >>> s = [0.1, 0.4, 0.35, 0.8]
    >>> round(linear_pr_auc(pr_curve(y, s)), 4)
    0.7942
    """
    recall = np.r_[0.0, pr.recall]
    precision = np.r_[pr.precision[0], pr.precision]
    grid = _unit_grid(int(n_points))
    curve = vertical_average([recall], [precision], grid)
    return trapezoid_auc(grid, curve.mean)


# --------------------------------------------------------------------------------------------------
# statistics


def argmax_precision_ttest(precision_a, precision_b, *, equal_var: bool = False, alternative: str = "two-sided"):
    r"""t-test comparing the argmax-decision precision of two groups of trial-models (thesis §4.5.2.3).

    The thesis does not state the test; we default to Welch's unpaired two-sided t-test
    (``scipy.stats.ttest_ind(equal_var=False)``) because the runs of two training distributions are
    independent:

    .. math::

       t = \frac{\bar x_a - \bar x_b}{\sqrt{s_a^2 / n_a + s_b^2 / n_b}}

    with the Welch-Satterthwaite degrees of freedom. (The chapter's run-matched comparison, the paired
    :math:`T = \bar d / (s_d / \sqrt{n})`, is :func:`medeval.core.claims.decide_paired`.) Returns scipy's result (``statistic``, ``pvalue``). NaN precisions raise ``ValueError``;
    each group needs at least two runs.

    Examples
    --------
    >>> from medeval.metrics.curves import argmax_precision_ttest
    >>> res = argmax_precision_ttest([0.80, 0.82, 0.79], [0.70, 0.72, 0.69])
    >>> print(f"t={res.statistic:.3f} p={res.pvalue:.5f}")
    t=8.018 p=0.00131
    """
    a = to_numpy(precision_a, dtype=np.float64)
    b = to_numpy(precision_b, dtype=np.float64)
    for name, v in (("precision_a", a), ("precision_b", b)):
        if v.ndim != 1 or v.size < 2:
            raise ValueError(f"{name} must be 1-D with at least 2 runs, got shape {v.shape}")
        if np.isnan(v).any():
            raise ValueError(f"{name} contains NaN (a run with no predicted positive); drop or report it first")
    return stats.ttest_ind(a, b, equal_var=equal_var, alternative=alternative)
