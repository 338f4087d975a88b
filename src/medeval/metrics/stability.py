"""Localization stability of instance classifiers (Romanova, van Schoren & Cheplygina).

Two similarly trained instance classifiers f' and f'' predict every instance j of a bag i.
A *stability score* compares the two prediction maps ``W'_i`` and ``W''_i`` without any
instance labels. This module implements every score the paper proposes or analyses, its
kappa-paradox indicators, the aggregation over all ``C(M, 2)`` model pairs and the
localization metrics (DICE, Jaccard, localization accuracy) used to judge the scores.

Binary scores (Sec. III-A) are functions of the 2x2 agreement table of one bag::

    n11 = #{j: y'_j = 1, y''_j = 1}    n10 = #{j: y'_j = 1, y''_j = 0}
    n01 = #{j: y'_j = 0, y''_j = 1}    n00 = #{j: y'_j = 0, y''_j = 0}
    N = n00 + n01 + n10 + n11,  n1* = n10 + n11,  n*1 = n01 + n11,  n0* = n00 + n01,  n*0 = n00 + n10

obtained from probabilities by Eq. 10, ``y_j = 1 iff f(x_j) >= T`` (T = 0.5 in the paper; the
authors' stability code uses a strict ``>``, available as ``inclusive=False``, the flag name
``medeval.metrics.multilabel.binarize`` uses too). They take the four
counts as arrays of any (broadcastable) shape and are vectorised over them; compute the counts
with :func:`agreement_counts`. Probability scores (Sec. III-B) take the two prediction maps,
shaped ``(..., n_instances)``, and are vectorised over the leading axes. :func:`pairwise_stability`
takes the maps of ``M`` models, ``(n_models, n_bags, n_instances)``, and evaluates every score on
every bag and every one of the ``C(M, 2)`` model pairs at once (per-model ranks and bitsets are
computed once and shared by the pairs).

Edge-case policy: a score whose formula is ``0 / 0`` on a bag is NaN there (never replaced by 0
or 1: Sec. VI-B of the paper declines to); each function's docstring states exactly when. The
aggregation over pairs is a nan-mean per bag and reports the number of NaN pairs per bag and per
pair. Bad input raises ``ValueError`` naming the parameter: mismatched shapes, probabilities
outside [0, 1] or not finite, negative or non-integer counts, fewer than two models.

Errata of the paper handled here (see the chapter notebook): Eq. 20 prints ``TAR = n11 / N``, the
total agreement ratio of Cicchetti & Feinstein is ``(n11 + n00) / N`` (the default here, the
printed form is ``positive_only=True``); Table I's Pearson and Spearman formulas are garbled
(standard forms are used); Kendall's tau as printed is tau-a, the authors' code uses scipy's
tau-b (the default here, tau-a is ``variant="a"``).

This module imports nothing from medeval except ``medeval.metrics._arrays`` (numpy/scipy otherwise), so
the two can be lifted out together. Torch tensors are accepted (also on the GPU or requiring grad;
converted by ``medeval.metrics._arrays.to_numpy``).
"""

from __future__ import annotations

import functools
import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from medeval.metrics._arrays import to_numpy

__all__ = [
    "BINARY_SCORES",
    "AGREEMENT_INDICATORS",
    "PROBABILITY_SCORES",
    "SCORE_NAMES",
    "AgreementCounts",
    "PairwiseStability",
    "adjusted_jaccard",
    "adjusted_positive_jaccard",
    "adjusted_positive_overlap",
    "agreement_counts",
    "aggregate_over_pairs",
    "annotated_bag_mask",
    "binarize_instances",
    "heuristic_adjusted_positive_jaccard",
    "instance_dice",
    "instance_jaccard",
    "kappa_paradox_indicators",
    "kendall_tau",
    "localization_accuracy",
    "model_pairs",
    "negative_agreement_ratio",
    "pairwise_stability",
    "pearson_correlation",
    "positive_agreement_ratio",
    "positive_bag_mask",
    "positive_jaccard",
    "positive_overlap",
    "positive_votes",
    "spearman_correlation",
    "total_agreement_ratio",
    "vote_histogram",
]

#: Binary stability scores (Sec. III-A, Eqs. 7, 15-19), in the paper's order.
BINARY_SCORES = (
    "positive_jaccard",
    "positive_overlap",
    "adjusted_positive_overlap",
    "heuristic_adjusted_positive_jaccard",
    "adjusted_positive_jaccard",
    "adjusted_jaccard",
)
#: Kappa-paradox indicators (Sec. III-C, Eqs. 20-22).
AGREEMENT_INDICATORS = ("total_agreement_ratio", "positive_agreement_ratio", "negative_agreement_ratio")
#: Probability (continuous) stability scores (Sec. III-B).
PROBABILITY_SCORES = ("pearson", "spearman", "kendall")
#: Every score :func:`pairwise_stability` can compute.
SCORE_NAMES = BINARY_SCORES + AGREEMENT_INDICATORS + PROBABILITY_SCORES


# --------------------------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------------------------
def _as_array(x, name: str) -> np.ndarray:
    arr = to_numpy(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    return arr


def _check_probabilities(x, name: str, min_ndim: int = 1) -> np.ndarray:
    arr = _as_array(x, name)
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}")
    if arr.shape[-1] < 1:
        raise ValueError(f"{name} must hold at least one instance (last axis), got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype != np.float32:  # float32 (network outputs) is kept: exact and faster to sort
        arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite probabilities in [0, 1]; it holds NaN or inf")
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(
            f"{name} must be probabilities in [0, 1], got values in [{arr.min():.4g}, {arr.max():.4g}]"
        )
    return arr


def _check_pair(pred_a, pred_b) -> tuple[np.ndarray, np.ndarray]:
    a = _check_probabilities(pred_a, "pred_a")
    b = _check_probabilities(pred_b, "pred_b")
    if a.shape != b.shape:
        raise ValueError(
            f"pred_a and pred_b must have the same shape (..., n_instances), got {a.shape} and {b.shape}"
        )
    return a, b


def _check_threshold(threshold: float) -> float:
    t = float(threshold)
    if not (0.0 <= t <= 1.0):
        raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
    return t


def _check_counts(n00, n01, n10, n11) -> tuple[np.ndarray, ...]:
    names = ("n00", "n01", "n10", "n11")
    arrays = []
    for name, value in zip(names, (n00, n01, n10, n11), strict=True):
        arr = _as_array(value, name).astype(np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite counts; it holds NaN or inf")
        if np.any(arr < 0):
            raise ValueError(f"{name} must be non-negative counts, got minimum {arr.min()}")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must be integer counts")
        arrays.append(arr)
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError as err:
        shapes = ", ".join(f"{n}={a.shape}" for n, a in zip(names, arrays, strict=True))
        raise ValueError(f"the counts n00, n01, n10, n11 must have broadcastable shapes, got {shapes}") from err
    total = arrays[0] + arrays[1] + arrays[2] + arrays[3]
    if np.any(total < 1):
        raise ValueError("each 2x2 table must hold at least one instance (N = n00 + n01 + n10 + n11 >= 1)")
    return tuple(arrays)


def _count_score(fn):
    """Validate the four counts (see :func:`_check_counts`) before a count-based score; the unvalidated
    formula stays available as ``fn.__wrapped__`` for callers whose counts are valid by construction."""

    @functools.wraps(fn)
    def wrapper(n00, n01, n10, n11, **kwargs):
        return fn(*_check_counts(n00, n01, n10, n11), **kwargs)

    return wrapper


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` with NaN exactly where the denominator is 0 (the 0/0 cases)."""
    numerator, denominator = np.broadcast_arrays(
        np.asarray(numerator, dtype=np.float64), np.asarray(denominator, dtype=np.float64)
    )
    out = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out[()] if out.ndim == 0 else out


# --------------------------------------------------------------------------------------------
# agreement table
# --------------------------------------------------------------------------------------------
class AgreementCounts(NamedTuple):
    """The 2x2 agreement table of two binary maps per bag (rows f', columns f'')."""

    n00: np.ndarray
    n01: np.ndarray
    n10: np.ndarray
    n11: np.ndarray


def binarize_instances(predictions, threshold: float = 0.5, *, inclusive: bool = True) -> np.ndarray:
    r"""Binary instance predictions of Eq. 10, with :math:`T(\text{binary})` = ``threshold``:

    .. math::

       \hat y_{ij} = \begin{cases} 1, & f(x_{ij}) \ge T(\text{binary}) \\ 0, & \text{otherwise} \end{cases}

    :math:`f(x_{ij}) \ge T` is replaced by :math:`f(x_{ij}) > T` with ``inclusive=False``, as the authors' stability
    code does. Probabilities must lie
    in [0, 1] (else ``ValueError``); boolean maps pass through unchanged. (The multi-label chapter's
    thresholding, :func:`medeval.metrics.multilabel.binarize`, is ``>`` by default: a different paper's rule.)

    Examples
    --------
    >>> from medeval.metrics.stability import binarize_instances
    >>> binarize_instances([0.2, 0.5, 0.7]).tolist()
    [False, True, True]
    >>> binarize_instances([0.2, 0.5, 0.7], inclusive=False).tolist()
    [False, False, True]
    """
    p = _check_probabilities(predictions, "predictions")
    t = _check_threshold(threshold)
    return p >= t if inclusive else p > t


def agreement_counts(pred_a, pred_b, *, threshold: float = 0.5, inclusive: bool = True) -> AgreementCounts:
    r"""Agreement table ``(n00, n01, n10, n11)`` of two prediction maps of shape ``(..., N)``.

    .. math::

       n_{ab} = \bigl|\{x_{ij} : \hat y'_{ij} = a \wedge \hat y''_{ij} = b\}\bigr|, \quad a, b \in \{0, 1\}, \qquad
       N = n_{00} + n_{01} + n_{10} + n_{11}

    The maps are binarised with Eq. 10 at ``threshold`` (see :func:`binarize_instances`); the counts have
    the leading shape ``(...)``. ``n01`` counts instances negative for ``pred_a`` (:math:`f'`) and positive
    for ``pred_b`` (:math:`f''`), as in Eq. 7.

    Examples
    --------
    >>> from medeval.metrics.stability import agreement_counts
    >>> counts = agreement_counts([0.9, 0.2, 0.6, 0.1, 0.3, 0.8], [0.8, 0.6, 0.3, 0.2, 0.1, 0.7])
    >>> tuple(int(n) for n in counts)  # (n00, n01, n10, n11)
    (2, 1, 1, 2)
    """
    a, b = _check_pair(pred_a, pred_b)
    t = _check_threshold(threshold)
    ya = a >= t if inclusive else a > t
    yb = b >= t if inclusive else b > t
    n = a.shape[-1]
    n11 = np.count_nonzero(ya & yb, axis=-1)
    n10 = np.count_nonzero(ya, axis=-1) - n11
    n01 = np.count_nonzero(yb, axis=-1) - n11
    n00 = n - n11 - n10 - n01
    return AgreementCounts(*(np.asarray(c, dtype=np.int64) for c in (n00, n01, n10, n11)))


# --------------------------------------------------------------------------------------------
# binary stability scores (Sec. III-A)
# --------------------------------------------------------------------------------------------
@_count_score
def positive_jaccard(n00, n01, n10, n11) -> np.ndarray:
    r"""Positive Jaccard stability of Cheplygina et al. (2015), Eq. 7.

    .. math::

       S_J(W'_i, W''_i) = \frac{n_{11}}{n_{01} + n_{10} + n_{11}}

    In :math:`[0, 1]`. NaN iff :math:`n_{00} = N` (no model predicts any
    positive instance). Not corrected for chance: two independent maps with half of the
    instances positive score 1/3 on average.

    Examples
    --------
    >>> from medeval.metrics.stability import positive_jaccard
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(positive_jaccard(n00, n01, n10, n11)), 4)  # 5 / (5 + 3 + 2)
    0.5
    """
    return _divide(n11, n01 + n10 + n11)


@_count_score
def positive_overlap(n00, n01, n10, n11) -> np.ndarray:
    r"""Positive overlap :math:`S_{PO}` (Szymkiewicz-Simpson coefficient), Eq. 15 (the first of the three discarded
    scores below).

    .. math::

       \begin{aligned}
       S_{PO} &= \frac{n_{11}}{\min(n_{10}, n_{01}) + n_{11}}, \qquad
       S_{APO} = \frac{n_{11} - \mathbb{E}(n_{11})}{\min(n_{1*}, n_{*1}) - \mathbb{E}(n_{11})}, \\
       S_{HAPJ} &= \frac{n_{11} - m}{n_{10} + n_{01} + n_{11} - m}, \qquad m = \max(n_{*1} + n_{1*} - N,\ 0).
       \end{aligned}

    In :math:`[0, 1]`; 1 whenever one positive set contains the
    other (the flaw for which the paper discards it). NaN iff ``n11 = 0`` and
    ``min(n10, n01) = 0`` (a model with no positive instance: its overlap is 0 / 0).

    Examples
    --------
    >>> from medeval.metrics.stability import positive_overlap
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(positive_overlap(n00, n01, n10, n11)), 4)  # 5 / min(5 + 2, 5 + 3)
    0.7143
    """
    return _divide(n11, np.minimum(n10, n01) + n11)


@_count_score
def adjusted_positive_overlap(n00, n01, n10, n11) -> np.ndarray:
    r"""Adjusted positive overlap :math:`S_{APO}`, Eq. 16 (the second of the three discarded scores below).

    .. math::

       \begin{aligned}
       S_{PO} &= \frac{n_{11}}{\min(n_{10}, n_{01}) + n_{11}}, \qquad
       S_{APO} = \frac{n_{11} - \mathbb{E}(n_{11})}{\min(n_{1*}, n_{*1}) - \mathbb{E}(n_{11})}, \\
       S_{HAPJ} &= \frac{n_{11} - m}{n_{10} + n_{01} + n_{11} - m}, \qquad m = \max(n_{*1} + n_{1*} - N,\ 0).
       \end{aligned}

    With :math:`\mathbb{E}(n_{11}) = n_{1*}\, n_{*1} / N`; evaluated as
    :math:`(N n_{11} - n_{1*} n_{*1}) / (N \min(n_{1*}, n_{*1}) - n_{1*} n_{*1})` (Eq. 16 times N / N, exact in integer
    arithmetic). Range ``[1 - N, 1]``: ``1 - N`` at ``n01 = N - 1, n10 = 1`` (paper). NaN iff
    ``min(n1*, n*1) = 0`` or ``max(n1*, n*1) = N`` (one model predicts no, or only, positives).

    Examples
    --------
    >>> from medeval.metrics.stability import adjusted_positive_overlap
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(adjusted_positive_overlap(n00, n01, n10, n11)), 4)
    0.6894
    """
    n = n00 + n01 + n10 + n11
    row, col = n10 + n11, n01 + n11
    return _divide(n * n11 - row * col, n * np.minimum(row, col) - row * col)


@_count_score
def heuristic_adjusted_positive_jaccard(n00, n01, n10, n11) -> np.ndarray:
    r"""Heuristic adjustment of positive Jaccard :math:`S_{HAPJ}`, Eq. 17 (the third of the three discarded scores
    below).

    .. math::

       \begin{aligned}
       S_{PO} &= \frac{n_{11}}{\min(n_{10}, n_{01}) + n_{11}}, \qquad
       S_{APO} = \frac{n_{11} - \mathbb{E}(n_{11})}{\min(n_{1*}, n_{*1}) - \mathbb{E}(n_{11})}, \\
       S_{HAPJ} &= \frac{n_{11} - m}{n_{10} + n_{01} + n_{11} - m}, \qquad m = \max(n_{*1} + n_{1*} - N,\ 0).
       \end{aligned}

    :math:`m` is the overlap forced by the pigeonhole principle (the paper's text writes :math:`N - (n_{*1} + n_{1*})`,
    a sign slip). Since :math:`n_{1*} + n_{*1} - N = n_{11} - n_{00}` this equals
    :math:`\min(n_{11}, n_{00}) / (n_{01} + n_{10} + \min(n_{11}, n_{00}))`,
    in [0, 1], and equals :func:`positive_jaccard` whenever ``n1* + n*1 <= N``. NaN iff
    ``n00 = N`` or ``n11 = N`` (both models predict every instance as the same class).

    Examples
    --------
    >>> from medeval.metrics.stability import heuristic_adjusted_positive_jaccard
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(heuristic_adjusted_positive_jaccard(n00, n01, n10, n11)), 4)
    0.5
    """
    n = n00 + n01 + n10 + n11
    forced = np.maximum((n01 + n11) + (n10 + n11) - n, 0.0)
    return _divide(n11 - forced, n10 + n01 + n11 - forced)


@_count_score
def adjusted_positive_jaccard(n00, n01, n10, n11) -> np.ndarray:
    r"""Adjusted positive Jaccard :math:`S_{APJ}`, Eq. 18 (the binary score the paper keeps).

    .. math::

       S_{APJ}(W'_i, W''_i) = \frac{n_{11} - \mathbb{E}(n_{11})}{n_{10} + n_{01} + n_{11} - \mathbb{E}(n_{11})},
       \qquad \mathbb{E}(n_{11}) = \frac{n_{1*}\, n_{*1}}{N}

    Evaluated through the Appendix A closed form
    :math:`S_{APJ} = (n_{11} n_{00} - n_{01} n_{10}) / (n_{11} n_{00} - n_{01} n_{10} + (n_{10} + n_{01}) N)`, which is
    exact in integer arithmetic. Range [-1/3, 1]: the minimum -1/3 is attained iff ``n11 = n00 = 0`` and
    ``n01 = n10`` (any value, not only 1 as Appendix A states), the maximum 1 iff
    ``n01 = n10 = 0`` with ``n11, n00 > 0``. NaN iff ``n00 = N`` or ``n11 = N``; 0 when exactly one
    model is constant or the two are opposite constants. Increasing in ``n11`` (strictly unless
    ``n00 = 0`` and one of ``n01``, ``n10`` is 0, where it stays 0; Appendix A says "always").

    Since :math:`N n_{11} - n_{1*} n_{*1} = n_{11} n_{00} - n_{01} n_{10}`, :math:`S_{APJ}` is symmetric in positives
    and negatives (invariant to complementing both maps) and is a monotone function of Cohen's kappa,
    :math:`S_{APJ} = \frac{S_{AJ}}{2 - S_{AJ}}` (the Jaccard-Dice relation), which is why the paper finds the two
    interchangeable (Sec. IV-F).

    Examples
    --------
    >>> from medeval.metrics.stability import adjusted_positive_jaccard
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(adjusted_positive_jaccard(n00, n01, n10, n11)), 4)
    0.4703
    """
    n = n00 + n01 + n10 + n11
    numerator = n11 * n00 - n01 * n10
    return _divide(numerator, numerator + (n10 + n01) * n)


@_count_score
def adjusted_jaccard(n00, n01, n10, n11) -> np.ndarray:
    r"""Adjusted Jaccard :math:`S_{AJ}`, Eq. 19; identical to Cohen's kappa.

    .. math::

       S_{AJ}(W'_i, W''_i) = \frac{n_{11} + n_{00} - \mathbb{E}(n_{11}) - \mathbb{E}(n_{00})}
       {N - \mathbb{E}(n_{11}) - \mathbb{E}(n_{00})}, \qquad \mathbb{E}(n_{00}) = \frac{n_{0*}\, n_{*0}}{N}

    With :math:`\mathbb{E}(n_{11}) = n_{1*}\, n_{*1} / N`; evaluated through the Appendix A closed form
    :math:`(2 n_{11} n_{00} - 2 n_{01} n_{10}) / (2 n_{11} n_{00} - 2 n_{01} n_{10} + (n_{01} + n_{10}) N)`. Range [-1, 1]; NaN iff
    ``n00 = N`` or ``n11 = N``; 0 when exactly one model is constant or the two are opposite
    constants. Invariant to complementing both maps (swapping n00 and n11).

    Examples
    --------
    >>> from medeval.metrics.stability import adjusted_jaccard
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(adjusted_jaccard(n00, n01, n10, n11)), 4)
    0.6398
    """
    n = n00 + n01 + n10 + n11
    numerator = 2.0 * (n11 * n00 - n01 * n10)
    return _divide(numerator, numerator + (n01 + n10) * n)


# --------------------------------------------------------------------------------------------
# kappa-paradox indicators (Sec. III-C)
# --------------------------------------------------------------------------------------------
@_count_score
def total_agreement_ratio(n00, n01, n10, n11, *, positive_only: bool = False) -> np.ndarray:
    r"""Total agreement ratio TAR (Eq. 20; Cicchetti & Feinstein 1990), the first of the three ratios below.

    .. math::

       \mathrm{TAR} = \frac{n_{11} + n_{00}}{N}, \qquad
       \mathrm{PAR} = \frac{2 n_{11}}{2 n_{11} + n_{01} + n_{10}}, \qquad
       \mathrm{NAR} = \frac{2 n_{00}}{2 n_{00} + n_{01} + n_{10}}

    Default: TAR as above, the observed agreement of Cicchetti & Feinstein. Eq. 20 as printed,
    :math:`n_{11} / N`, drops :math:`n_{00}` (an erratum: it is neither "total" nor the cited index);
    ``positive_only=True`` returns the printed form. Never NaN (N >= 1).

    Examples
    --------
    >>> from medeval.metrics.stability import total_agreement_ratio
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(total_agreement_ratio(n00, n01, n10, n11)), 4)  # (90 + 5) / 100
    0.95
    """
    n = n00 + n01 + n10 + n11
    return _divide(n11 if positive_only else n11 + n00, n)


@_count_score
def positive_agreement_ratio(n00, n01, n10, n11) -> np.ndarray:
    r"""Positive agreement ratio PAR, Eq. 21 (the second of the three ratios below); NaN iff :math:`n_{00} = N`.

    .. math::

       \mathrm{TAR} = \frac{n_{11} + n_{00}}{N}, \qquad
       \mathrm{PAR} = \frac{2 n_{11}}{2 n_{11} + n_{01} + n_{10}}, \qquad
       \mathrm{NAR} = \frac{2 n_{00}}{2 n_{00} + n_{01} + n_{10}}

    Examples
    --------
    >>> from medeval.metrics.stability import positive_agreement_ratio
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(positive_agreement_ratio(n00, n01, n10, n11)), 4)  # 10 / 15
    0.6667
    """
    return _divide(2.0 * n11, 2.0 * n11 + n01 + n10)


@_count_score
def negative_agreement_ratio(n00, n01, n10, n11) -> np.ndarray:
    r"""Negative agreement ratio NAR, Eq. 22 (the third of the three ratios below); NaN iff :math:`n_{11} = N`.

    .. math::

       \mathrm{TAR} = \frac{n_{11} + n_{00}}{N}, \qquad
       \mathrm{PAR} = \frac{2 n_{11}}{2 n_{11} + n_{01} + n_{10}}, \qquad
       \mathrm{NAR} = \frac{2 n_{00}}{2 n_{00} + n_{01} + n_{10}}

    Examples
    --------
    >>> from medeval.metrics.stability import negative_agreement_ratio
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> round(float(negative_agreement_ratio(n00, n01, n10, n11)), 4)  # 180 / 185
    0.973
    """
    return _divide(2.0 * n00, 2.0 * n00 + n01 + n10)


def kappa_paradox_indicators(n00, n01, n10, n11) -> dict[str, np.ndarray]:
    r"""TAR, PAR, NAR and the balance/symmetry indicators of Sec. III-C.

    .. math::

       \mathrm{TAR} = \frac{n_{11} + n_{00}}{N}, \qquad
       \mathrm{PAR} = \frac{2 n_{11}}{2 n_{11} + n_{01} + n_{10}}, \qquad
       \mathrm{NAR} = \frac{2 n_{00}}{2 n_{00} + n_{01} + n_{10}}

    Returns a dict with ``TAR``, ``PAR``, ``NAR`` (above), ``TAR_printed`` (Eq. 20 as printed,
    :math:`n_{11} / N`), ``PAR_minus_NAR`` (balance), ``n0_minus_n1`` (:math:`n_{0*} - n_{1*}`, imbalance of
    :math:`f'`) and ``n_0_minus_n_1`` (:math:`n_{*0} - n_{*1}`, imbalance of :math:`f''`; reported by the authors'
    code).

    Examples
    --------
    >>> from medeval.metrics.stability import kappa_paradox_indicators
    >>> n00, n01, n10, n11 = 90, 3, 2, 5
    >>> ind = kappa_paradox_indicators(n00, n01, n10, n11)
    >>> [round(float(ind[k]), 4) for k in ("TAR", "PAR", "NAR", "PAR_minus_NAR")]
    [0.95, 0.6667, 0.973, -0.3063]
    """
    n00, n01, n10, n11 = _check_counts(n00, n01, n10, n11)
    par = positive_agreement_ratio(n00, n01, n10, n11)
    nar = negative_agreement_ratio(n00, n01, n10, n11)
    return {
        "TAR": total_agreement_ratio(n00, n01, n10, n11),
        "TAR_printed": total_agreement_ratio(n00, n01, n10, n11, positive_only=True),
        "PAR": par,
        "NAR": nar,
        "PAR_minus_NAR": par - nar,
        "n0_minus_n1": (n00 + n01) - (n10 + n11),
        "n_0_minus_n_1": (n00 + n10) - (n01 + n11),
    }


# --------------------------------------------------------------------------------------------
# probability scores (Sec. III-B)
# --------------------------------------------------------------------------------------------
def _standardize(x: np.ndarray) -> np.ndarray:
    """Centred, unit-norm rows along the last axis; all-NaN rows where a row is constant.

    Each centred row is brought to [-1, 1) by the power of two of its largest absolute value before it is
    squared (``scipy.stats.pearsonr`` divides by that value): squares of deviations below about 1e-154
    underflow to 0, so maps of tiny probabilities (1e-170 * [0, 1, 2, 3, 4]) would otherwise have a zero norm
    and a NaN correlation. A power of two scales exactly, so wherever nothing underflowed the result is the
    same to the last bit as without it.
    """
    x = np.asarray(x, dtype=np.float64)
    centred = x - x.mean(axis=-1, keepdims=True)
    constant = (x.max(axis=-1) == x.min(axis=-1))[..., None]
    largest = np.abs(centred).max(axis=-1, keepdims=True) if x.shape[-1] else np.zeros(x.shape[:-1] + (1,))
    scaled = np.ldexp(centred, -np.frexp(largest)[1])
    norm = np.sqrt(np.einsum("...n,...n->...", scaled, scaled))[..., None]
    out = np.full(x.shape, np.nan)
    np.divide(scaled, norm, out=out, where=~constant & (norm > 0))
    return out


def _clip_correlation(r: np.ndarray) -> np.ndarray:
    return np.clip(r, -1.0, 1.0)


def pearson_correlation(pred_a, pred_b) -> np.ndarray:
    r"""Pearson's product-moment correlation of two maps along the last axis (Sec. III-B-1).

    .. math::

       r(W'_i, W''_i) = \frac{\sum_j (W'_{ij} - \bar W'_i)(W''_{ij} - \bar W''_i)}
       {\sqrt{\sum_j (W'_{ij} - \bar W'_i)^2 \, \sum_j (W''_{ij} - \bar W''_i)^2}}

    The standard form (Table I prints a garbled formula). Equals ``scipy.stats.pearsonr``.
    NaN iff one of the two maps is constant on the bag.

    Examples
    --------
    >>> from medeval.metrics.stability import pearson_correlation
    >>> round(float(pearson_correlation([0.9, 0.2, 0.6, 0.1], [0.8, 0.4, 0.3, 0.2])), 4)
    0.8057
    """
    a, b = _check_pair(pred_a, pred_b)
    return _clip_correlation(np.einsum("...n,...n->...", _standardize(a), _standardize(b)))


class _Ranks(NamedTuple):
    """Rank structure of maps along the last axis, shared by Spearman and Kendall.

    ``order``: each row's ascending order. In instance order: ``group_start``, the number of
    instances strictly smaller (it labels the instance's tie group); ``double_ranks``,
    ``2 rank - (N + 1)`` with average ranks for ties (integers); ``tied``, whether the instance
    shares its value with another (``None`` when no row has a tie). ``tied_pairs``: per row, the
    pairs tied with each other, ``sum_groups C(t, 2)``.
    """

    order: np.ndarray
    group_start: np.ndarray
    double_ranks: np.ndarray
    tied: np.ndarray | None
    tied_pairs: np.ndarray


def _ranks(x: np.ndarray) -> _Ranks:
    """The rank structure of ``(..., N)`` maps from one argsort per row.

    Ties need no particular order within a row (numpy's vectorised argsort is not stable), since
    every quantity depends on tie groups only; tie groups are resolved on the tied positions
    alone, which are few in probability maps.
    """
    shape, n = x.shape, x.shape[-1]
    rows = x.size // n if n else 0
    order = np.argsort(x, axis=-1)
    offset = (np.arange(rows, dtype=np.int64) * n).reshape(shape[:-1] + (1,))
    flat_order = (order + offset).ravel()  # flat index of the instance at each flat sorted position
    values_sorted = np.take(x.ravel(), flat_order)
    new_group = np.ones(rows * n, dtype=bool)
    np.not_equal(values_sorted[1:], values_sorted[:-1], out=new_group[1:])
    new_group[::n] = True
    last = np.ones(rows * n, dtype=bool)
    last[:-1] = new_group[1:]
    in_row = np.broadcast_to(np.arange(n, dtype=np.int64), (rows, n)).ravel()
    # each instance's place in its row's order, written in instance order by one scatter; ties are corrected
    # below at the (few) tied instances only
    group_start = np.empty(rows * n, dtype=np.int64)
    group_start[flat_order] = in_row
    double_ranks = 2 * group_start - (n - 1)
    tied_sorted = ~(new_group & last)
    tied_pairs = np.zeros(rows, dtype=np.int64)
    tied = None
    if tied_sorted.any():
        at = np.flatnonzero(tied_sorted)  # positions in groups of two or more, group by group
        first = new_group[at]
        group = np.cumsum(first) - 1
        g_start, g_end = at[first], at[last[at]]
        row_offset = at - in_row[at]
        instance = flat_order[at]
        group_start[instance] = g_start[group] - row_offset
        double_ranks[instance] = g_start[group] + g_end[group] - 2 * row_offset - (n - 1)
        size = g_end - g_start + 1
        tied_pairs = np.bincount(g_start // n, weights=size * (size - 1) // 2, minlength=rows).astype(np.int64)
        tied = np.zeros(rows * n, dtype=bool)
        tied[instance] = True
        tied = tied.reshape(shape)
    return _Ranks(
        order=order,
        group_start=group_start.reshape(shape),
        double_ranks=double_ranks.reshape(shape),
        tied=tied,
        tied_pairs=tied_pairs.reshape(shape[:-1]),
    )


def _standardized_ranks(r: _Ranks) -> np.ndarray:
    """Average ranks centred and scaled to unit norm (NaN rows where every value ties).

    The ranks' mean is always ``(N + 1) / 2``; centring and the squared norm are exact in integers
    (``sum (2 rank - N - 1)^2 = (N (N^2 - 1) - sum_groups (t^3 - t)) / 3``).
    """
    u = r.double_ranks
    sum_sq = np.einsum("...n,...n->...", u, u)[..., None]
    out = np.full(u.shape, np.nan)
    np.divide(u, np.sqrt(sum_sq, dtype=np.float64), out=out, where=sum_sq > 0)
    return out


def spearman_correlation(pred_a, pred_b) -> np.ndarray:
    r"""Spearman's rank correlation :math:`S_S` of two maps along the last axis (Sec. III-B-2; the kept score).

    .. math::

       S_S(W'_i, W''_i) = r\bigl(\operatorname{rank}(W'_i), \operatorname{rank}(W''_i)\bigr)
       = 1 - \frac{6 \sum_j \bigl(\operatorname{rank}(W'_{ij}) - \operatorname{rank}(W''_{ij})\bigr)^2}{N (N^2 - 1)}

    Pearson's correlation of the average (fractional) ranks, which equals the second form when there are no ties
    (Table I carries a stray square-root factor) and ``scipy.stats.spearmanr`` always. Negative values are
    kept (Sec. VI-C-1). NaN iff one of the two maps is constant on the bag.

    Examples
    --------
    >>> from medeval.metrics.stability import spearman_correlation
    >>> round(float(spearman_correlation([0.9, 0.2, 0.6, 0.1], [0.8, 0.4, 0.3, 0.2])), 4)
    0.8
    """
    a, b = _check_pair(pred_a, pred_b)
    za = _standardized_ranks(_ranks(a))
    zb = _standardized_ranks(_ranks(b))
    return _clip_correlation(np.einsum("...n,...n->...", za, zb))


# Kendall's tau through bitsets: for each instance i, G_i = {j : x_j < x_i} packed in 64-bit words.
# The number of concordant pairs is sum_i |G'_i & G''_i| (each concordant pair counted once, at the
# instance that is larger in both maps), which costs N * N / 64 word operations per pair instead of
# N^2 / 2 comparisons, and the bitsets are built once per model and shared by all pairs.
def _less_than_bitsets(r: _Ranks) -> np.ndarray:
    """``(..., n_words * N)`` uint64 bitsets: word ``w * N + i`` of a row holds bit j iff ``x_{64 w + j} < x_i``.

    In sorted order the set of smaller instances grows by one instance per position; its words are
    running sums of one-hot words (the bits are disjoint, so sum = OR), read at each instance's
    tie-group start (prefix 0 is the empty set).
    """
    lead, n = r.order.shape[:-1], r.order.shape[-1]
    n_words = (n + 63) // 64
    rows = int(np.prod(lead, dtype=np.int64))
    order = r.order.reshape(rows, n)
    gather = (np.arange(rows, dtype=np.int64)[:, None] * (n + 1) + r.group_start.reshape(rows, n)).ravel()
    idx = np.arange(n)
    prefix = np.zeros((rows, n + 1), dtype=np.uint64)
    out = np.empty((rows, n_words, n), dtype=np.uint64)
    for w in range(n_words):
        one_hot = np.zeros(n, dtype=np.uint64)
        in_word = idx // 64 == w
        one_hot[in_word] = np.left_shift(np.uint64(1), (idx[in_word] % 64).astype(np.uint64))
        np.take(one_hot, order, out=prefix[:, 1:], mode="clip")
        np.cumsum(prefix, axis=1, out=prefix)
        out[:, w] = np.take(prefix.ravel(), gather, mode="clip").reshape(rows, n)
    return out.reshape(lead + (n_words * n,))


def _count_concordant(bits_a: np.ndarray, bits_b: np.ndarray, n_instances: int, buffers=None) -> np.ndarray:
    """``sum_i |G'_i & G''_i|`` over the last axis (words and instances), as int64.

    A row's sum is a count of instance pairs, at most ``C(N, 2)``, so the per-word popcounts (uint8) are summed in
    the narrowest unsigned type that holds ``C(N, 2)`` (uint16 up to N = 362: half the time of an int64
    accumulator). ``buffers``: optional ``(uint64, uint8)`` arrays of the operands' shape, reused across calls.
    """
    both, counts = buffers if buffers is not None else (None, None)
    both = np.bitwise_and(bits_a, bits_b, out=both)
    counts = np.bitwise_count(both, out=counts)
    most = n_instances * (n_instances - 1) // 2
    acc = np.uint16 if most < 2**16 else np.uint32 if most < 2**32 else np.uint64
    return counts.sum(axis=-1, dtype=acc).astype(np.int64)


def _jointly_tied_pairs(row, label_a, label_b, n: int, n_rows: int) -> np.ndarray:
    """Pairs tied in both maps, per row, from the instances tied in both (``row`` ascending).

    ``label_a``/``label_b``: the instances' tie-group labels (``group_start``) in each map; the
    pairs tied in both are those sharing both labels: sum over (label_a, label_b) groups of
    C(size, 2), from one sort of the (usually few) instances tied in both maps.
    """
    key = np.sort((row.astype(np.int64) * n + label_a) * n + label_b)
    if key.size == 0:
        return np.zeros(n_rows, dtype=np.int64)
    first = np.ones(key.size, dtype=bool)
    np.not_equal(key[1:], key[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    sizes = np.diff(np.append(starts, key.size))
    pairs = sizes * (sizes - 1) // 2
    return np.bincount(key[starts] // (n * n), weights=pairs, minlength=n_rows).astype(np.int64)


def _kendall_from_parts(concordant, n_pairs, untied_a, untied_b, tied_b_only, variant):
    """tau from C, the untied counts and U = pairs tied in b only: C - D = 2C - n_a + U."""
    difference = 2.0 * concordant - untied_a + tied_b_only
    if variant == "b":
        return _clip_correlation(_divide(difference, np.sqrt(untied_a * untied_b)))
    return _divide(difference, np.broadcast_to(n_pairs, np.shape(difference)) * (untied_a * untied_b > 0))


def _check_variant(variant: str) -> str:
    if variant not in ("a", "b"):
        raise ValueError(f"variant must be 'a' (tau-a, as printed in Table I) or 'b' (tau-b), got {variant!r}")
    return variant


def _rows_per_chunk(n_instances: int, copies: int, budget_bytes: int = 4 * 2**20) -> int:
    """Rows per block so that a block's bitsets stay near the per-core cache (4 MiB; larger blocks were slower on
    the 2-core benchmark machine, `benchmarks/bench_stability.py`)."""
    per_row = n_instances * ((n_instances + 63) // 64) * 8 * max(copies, 1)
    return max(1, budget_bytes // per_row)


def kendall_tau(pred_a, pred_b, *, variant: str = "b") -> np.ndarray:
    r"""Kendall's rank correlation of two maps along the last axis (Sec. III-B-3).

    .. math::

       \tau_b = \frac{C - D}{\sqrt{(C + D + T')(C + D + T'')}}, \qquad \tau_a = \frac{C - D}{\binom{N}{2}}

    With :math:`C` concordant and :math:`D` discordant pairs among the :math:`\binom{N}{2}` instance pairs and
    :math:`T'`, :math:`T''` the pairs tied only in :math:`f'` resp. :math:`f''`: ``variant="b"`` (default;
    ``scipy.stats.kendalltau`` as used by the authors' code) is :math:`\tau_b`, ``variant="a"`` (the formula printed in
    Table I) is :math:`\tau_a`.
    The paper's text calls tau "the ratio between concordant and discordant pairs"; it is their
    normalised difference. NaN iff one of the two maps is constant on the bag (both variants).

    Examples
    --------
    >>> from medeval.metrics.stability import kendall_tau
    >>> round(float(kendall_tau([0.9, 0.2, 0.6, 0.1], [0.8, 0.4, 0.3, 0.2])), 4)  # (5 - 1) / 6
    0.6667
    """
    variant = _check_variant(variant)
    a, b = _check_pair(pred_a, pred_b)
    lead, n = a.shape[:-1], a.shape[-1]
    a2, b2 = a.reshape(-1, n), b.reshape(-1, n)
    out = np.empty(a2.shape[0])
    step = _rows_per_chunk(n, copies=6)
    for s in range(0, a2.shape[0], step):
        out[s : s + step] = _kendall_rows(a2[s : s + step], b2[s : s + step], variant)
    return out.reshape(lead)[()] if lead else out[0]


def _kendall_rows(a: np.ndarray, b: np.ndarray, variant: str) -> np.ndarray:
    rows, n = a.shape
    ra, rb = _ranks(a), _ranks(b)
    concordant = _count_concordant(_less_than_bitsets(ra), _less_than_bitsets(rb), n)
    n_pairs = n * (n - 1) // 2
    tied_a, tied_b = ra.tied_pairs, rb.tied_pairs
    tied_both = np.zeros(rows, dtype=np.int64)
    if ra.tied is not None and rb.tied is not None:
        flat = np.flatnonzero(ra.tied & rb.tied)
        tied_both = _jointly_tied_pairs(
            flat // n, ra.group_start.ravel()[flat], rb.group_start.ravel()[flat], n, rows
        )
    return _kendall_from_parts(
        concordant, n_pairs, n_pairs - tied_a, n_pairs - tied_b, tied_b - tied_both, variant
    )


# --------------------------------------------------------------------------------------------
# aggregation over model pairs (Sec. IV-E, V-C)
# --------------------------------------------------------------------------------------------
def model_pairs(n_models: int) -> np.ndarray:
    """All ``C(M, 2)`` unordered model pairs ``(i, j), i < j`` as an ``(n_pairs, 2)`` array.

    Examples
    --------
    >>> from medeval.metrics.stability import model_pairs
    >>> model_pairs(3).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    if int(n_models) < 2:
        raise ValueError(f"n_models must be at least 2 to form a pair, got {n_models}")
    return np.array(list(itertools.combinations(range(int(n_models)), 2)), dtype=np.int64)


def aggregate_over_pairs(per_pair) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-bag nan-mean over model pairs, with the number of NaN pairs per bag.

    .. math::

       \bar S_i = \frac{1}{|\mathcal{P}_i|} \sum_{(m, m') \in \mathcal{P}_i} S\bigl(W^{(m)}_i, W^{(m')}_i\bigr)

    ``per_pair`` has shape ``(n_pairs, n_bags)``. Returns ``(mean, n_nan)``, each ``(n_bags,)``;
    ``mean`` is NaN for a bag whose pairs are all NaN (its ``n_nan`` equals ``n_pairs``). NaN pairs
    are never counted as 0 or 1 (Sec. VI-B).

    Examples
    --------
    >>> from medeval.metrics.stability import aggregate_over_pairs
    >>> mean, n_nan = aggregate_over_pairs([[0.5, np.nan], [0.7, np.nan], [0.9, 0.2]])
    >>> np.round(mean, 4).tolist(), n_nan.tolist()
    ([0.7, 0.2], [0, 2])
    """
    values = to_numpy(per_pair, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"per_pair must have shape (n_pairs, n_bags), got {values.shape}")
    finite = ~np.isnan(values)
    n_valid = finite.sum(axis=0)
    total = np.where(finite, values, 0.0).sum(axis=0)
    mean = _divide(total, n_valid)
    return np.atleast_1d(mean), values.shape[0] - n_valid


@dataclass
class PairwiseStability:
    r"""Stability scores of ``M`` models on a set of bags, for every model pair.

    .. math::

       \bar S_i = \frac{1}{|\mathcal{P}_i|} \sum_{(m, m') \in \mathcal{P}_i} S\bigl(W^{(m)}_i, W^{(m')}_i\bigr)

    ``pairs`` is ``(n_pairs, 2)`` (model indices), ``bag_index`` the positions of the scored bags
    in the input, ``scores[name]`` an ``(n_pairs, n_bags)`` array of pairwise scores.
    """

    pairs: np.ndarray
    bag_index: np.ndarray
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    threshold: float = 0.5

    @property
    def n_bags(self) -> int:
        return int(self.bag_index.size)

    def per_bag(self, name: str) -> np.ndarray:
        """Nan-mean over the pairs: the per-bag stability of Sec. V-C, ``(n_bags,)``."""
        return aggregate_over_pairs(self._get(name))[0]

    def nan_pairs_per_bag(self, name: str) -> np.ndarray:
        """Number of model pairs whose score is NaN, per bag."""
        return aggregate_over_pairs(self._get(name))[1]

    def nan_count_per_pair(self, name: str) -> np.ndarray:
        """Number of bags on which each model pair's score is NaN, ``(n_pairs,)``."""
        return np.isnan(self._get(name)).sum(axis=1)

    def _get(self, name: str) -> np.ndarray:
        if name not in self.scores:
            raise ValueError(f"score {name!r} was not computed; available: {sorted(self.scores)}")
        return self.scores[name]

    def per_bag_frame(self):
        """Tidy per-bag table: ``bag`` plus one column per score (nan-mean over pairs)."""
        import pandas as pd

        data = {"bag": self.bag_index}
        for name in self.scores:
            data[name] = self.per_bag(name)
        return pd.DataFrame(data)

    def summary(self):
        """One row per score: mean and population std over bags of the per-bag means, NaN counts.

        Columns: ``score, mean, std, n_bags, n_bags_all_nan, n_nan_pairs, nan_pair_fraction``.
        Bags whose pairs are all NaN are left out of mean and std and counted in ``n_bags_all_nan``.
        """
        import pandas as pd

        rows = []
        for name, values in self.scores.items():
            mean, n_nan = aggregate_over_pairs(values)
            valid = ~np.isnan(mean)
            rows.append(
                {
                    "score": name,
                    "mean": float(mean[valid].mean()) if valid.any() else float("nan"),
                    "std": float(mean[valid].std()) if valid.any() else float("nan"),
                    "n_bags": int(mean.size),
                    "n_bags_all_nan": int((~valid).sum()),
                    "n_nan_pairs": int(n_nan.sum()),
                    "nan_pair_fraction": float(n_nan.sum() / values.size) if values.size else float("nan"),
                }
            )
        return pd.DataFrame(rows)


def _check_predictions(predictions) -> np.ndarray:
    p = _check_probabilities(predictions, "predictions")
    if p.ndim != 3:
        raise ValueError(f"predictions must have shape (n_models, n_bags, n_instances), got {p.shape}")
    if p.shape[0] < 2:
        raise ValueError(f"predictions must hold at least two models (axis 0), got {p.shape[0]}")
    return p


def _check_bag_mask(bag_mask, n_bags: int) -> np.ndarray:
    if bag_mask is None:
        return np.arange(n_bags)
    mask = to_numpy(bag_mask)
    if mask.dtype != bool or mask.shape != (n_bags,):
        raise ValueError(f"bag_mask must be a boolean array of shape ({n_bags},), got {mask.dtype} {mask.shape}")
    return np.flatnonzero(mask)


def _pair_dot(x: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``sum_n x[b, i, n] * x[b, j, n]`` for each pair (i, j) of ``x`` shaped (bags, models, n):
    ``(n_pairs, n_bags)``, through one batched Gram matrix (bags, models, models)."""
    gram = np.matmul(x, np.swapaxes(x, 1, 2))
    return gram[:, pairs[:, 0], pairs[:, 1]].T


def pairwise_stability(
    predictions,
    *,
    threshold: float = 0.5,
    inclusive: bool = True,
    scores=None,
    bag_mask=None,
    kendall_variant: str = "b",
    n_threads: int | None = None,
) -> PairwiseStability:
    r"""Every stability score for every model pair on every bag, vectorised (Sec. IV-E, Fig. 4).

    .. math::

       \bar S_i = \frac{1}{|\mathcal{P}_i|} \sum_{(m, m') \in \mathcal{P}_i} S\bigl(W^{(m)}_i, W^{(m')}_i\bigr)

    ``predictions``: instance probabilities of M >= 2 models, ``(n_models, n_bags, n_instances)``.
    Binary scores use Eq. 10 at ``threshold`` (``inclusive=False``: ``>`` as in the authors' code).
    ``scores``: names from :data:`SCORE_NAMES` (default all). ``bag_mask``: boolean ``(n_bags,)``
    selecting the bags to score (e.g. :func:`positive_bag_mask`, :func:`annotated_bag_mask`).
    Each score agrees with the corresponding pair-level function of this module; ranks and Kendall
    bitsets are computed once per model and shared by the ``C(M, 2)`` pairs. Blocks of bags are scored
    in ``n_threads`` threads (default: one per CPU core; numpy's sorts, gathers and bitwise kernels run
    outside the GIL); the result does not depend on ``n_threads``.

    Examples
    --------
    >>> from medeval.metrics.stability import pairwise_stability
    >>> pred = np.array([[[0.9, 0.2, 0.6, 0.1]], [[0.8, 0.4, 0.3, 0.2]], [[0.7, 0.6, 0.4, 0.1]]])
    >>> pred.shape  # (models, bags, instances)
    (3, 1, 4)
    >>> ps = pairwise_stability(pred, scores=["positive_jaccard"])
    >>> ps.pairs.tolist(), np.round(ps.scores["positive_jaccard"], 4).tolist()
    ([[0, 1], [0, 2], [1, 2]], [[0.5], [0.3333], [0.5]])
    """
    p = _check_predictions(predictions)
    t = _check_threshold(threshold)
    kendall_variant = _check_variant(kendall_variant)
    names = SCORE_NAMES if scores is None else tuple(scores)
    unknown = [s for s in names if s not in SCORE_NAMES]
    if unknown:
        raise ValueError(f"scores must be names from {SCORE_NAMES}, got unknown {unknown}")
    bag_index = _check_bag_mask(bag_mask, p.shape[1])
    p = p[:, bag_index]
    n_models, n_bags, n = p.shape
    pairs = model_pairs(n_models)
    out = {name: np.empty((len(pairs), n_bags)) for name in names}

    if n_threads is not None and (int(n_threads) != n_threads or n_threads < 1):
        raise ValueError(f"n_threads must be a positive integer or None, got {n_threads!r}")
    need_binary = any(s in names for s in BINARY_SCORES + AGREEMENT_INDICATORS)
    step = _rows_per_chunk(n, copies=n_models + 4) if "kendall" in names else 4096

    def score_block(s0: int) -> None:
        chunk = np.ascontiguousarray(np.swapaxes(p[:, s0 : s0 + step], 0, 1))  # (bags, models, n)
        sl = slice(s0, s0 + chunk.shape[0])
        if need_binary:
            y = (chunk >= t if inclusive else chunk > t).astype(np.float64)
            n11 = _pair_dot(y, pairs)
            positives = y.sum(axis=-1).T  # (models, bags)
            n10 = positives[pairs[:, 0]] - n11
            n01 = positives[pairs[:, 1]] - n11
            n00 = n - n11 - n10 - n01
            counts = (n00, n01, n10, n11)
            for name in names:
                if name in BINARY_SCORES or name in AGREEMENT_INDICATORS:
                    out[name][:, sl] = _COUNT_SCORES[name].__wrapped__(*counts)
        if "pearson" in names:
            out["pearson"][:, sl] = _clip_correlation(_pair_dot(_standardize(chunk), pairs))
        if "spearman" in names or "kendall" in names:
            ranks = _ranks(chunk)
        if "spearman" in names:
            out["spearman"][:, sl] = _clip_correlation(_pair_dot(_standardized_ranks(ranks), pairs))
        if "kendall" in names:
            out["kendall"][:, sl] = _kendall_pairs(ranks, pairs, kendall_variant)

    blocks = range(0, n_bags, step)
    workers = min(len(blocks), int(n_threads) if n_threads is not None else (os.cpu_count() or 1))
    if workers <= 1:
        for s0 in blocks:
            score_block(s0)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for future in [pool.submit(score_block, s0) for s0 in blocks]:
                future.result()
    return PairwiseStability(pairs=pairs, bag_index=bag_index, scores=out, threshold=t)


def _kendall_pairs(ranks: _Ranks, pairs, variant) -> np.ndarray:
    n_bags, n_models, n = ranks.order.shape
    # model-major bitsets (models, bags, words * n): each model's are contiguous, which the pairs' AND reads
    # twice as fast as the strided bag-major slices; the (4x smaller) integer ranks are transposed, not the bits
    by_model = ranks._replace(order=np.ascontiguousarray(np.swapaxes(ranks.order, 0, 1)),
                              group_start=np.ascontiguousarray(np.swapaxes(ranks.group_start, 0, 1)))
    bits = _less_than_bitsets(by_model)
    i, j = pairs[:, 0], pairs[:, 1]
    concordant = np.empty((len(pairs), n_bags), dtype=np.int64)
    buffers = (np.empty(bits.shape[1:], dtype=np.uint64), np.empty(bits.shape[1:], dtype=np.uint8))
    for k, (a, b) in enumerate(pairs):  # one pair at a time keeps the temporaries small
        concordant[k] = _count_concordant(bits[a], bits[b], n, buffers)
    n_pairs = n * (n - 1) // 2
    tied = ranks.tied_pairs.T  # (models, bags)
    tied_both = np.zeros((len(pairs), n_bags), dtype=np.int64)
    if ranks.tied is not None:
        # instances tied in both maps of a pair, as flat indices into (bags, pairs, n)
        flat = np.flatnonzero(ranks.tied[:, i] & ranks.tied[:, j])
        row, instance = np.divmod(flat, n)
        bag, k = np.divmod(row, len(pairs))
        labels = ranks.group_start.reshape(-1)
        label_a = labels[(bag * n_models + i[k]) * n + instance]
        label_b = labels[(bag * n_models + j[k]) * n + instance]
        tied_both = _jointly_tied_pairs(row, label_a, label_b, n, n_bags * len(pairs)).reshape(n_bags, -1).T
    return _kendall_from_parts(
        concordant, n_pairs, n_pairs - tied[i], n_pairs - tied[j], tied[j] - tied_both, variant
    )


_COUNT_SCORES = {
    "positive_jaccard": positive_jaccard,
    "positive_overlap": positive_overlap,
    "adjusted_positive_overlap": adjusted_positive_overlap,
    "heuristic_adjusted_positive_jaccard": heuristic_adjusted_positive_jaccard,
    "adjusted_positive_jaccard": adjusted_positive_jaccard,
    "adjusted_jaccard": adjusted_jaccard,
    "total_agreement_ratio": total_agreement_ratio,
    "positive_agreement_ratio": positive_agreement_ratio,
    "negative_agreement_ratio": negative_agreement_ratio,
}


# --------------------------------------------------------------------------------------------
# bag selections and votes
# --------------------------------------------------------------------------------------------
def positive_bag_mask(bag_labels) -> np.ndarray:
    """Boolean mask of positive bags (``Y_i = 1``); stability is reported on these (Table VII "*").

    ``bag_labels`` must be 0/1 (or boolean), shape ``(n_bags,)``.

    Examples
    --------
    >>> from medeval.metrics.stability import positive_bag_mask
    >>> positive_bag_mask([1, 0, 1]).tolist()
    [True, False, True]
    """
    labels = _as_array(bag_labels, "bag_labels")
    if labels.ndim != 1 or not np.all(np.isin(labels, (0, 1))):
        raise ValueError("bag_labels must be a 1-D array of 0/1 bag labels")
    return labels.astype(bool)


def annotated_bag_mask(instance_labels) -> np.ndarray:
    """Boolean mask of bags that carry instance labels (Table VI, Figs. 6-7).

    ``instance_labels`` has shape ``(n_bags, n_instances)``: 0/1 for annotated bags, all NaN (or all
    negative, e.g. -1) for bags without instance labels. A row mixing missing and known entries
    raises ``ValueError``.

    Examples
    --------
    >>> from medeval.metrics.stability import annotated_bag_mask
    >>> annotated_bag_mask(np.array([[1, 0], [-1, -1], [0, 0]])).tolist()
    [True, False, True]
    """
    labels = _as_array(instance_labels, "instance_labels").astype(np.float64)
    if labels.ndim != 2:
        raise ValueError(f"instance_labels must have shape (n_bags, n_instances), got {labels.shape}")
    missing = np.isnan(labels) | (labels < 0)
    known = ~missing
    mixed = known.any(axis=1) & missing.any(axis=1)
    if np.any(mixed):
        raise ValueError(f"instance_labels rows must be fully known or fully missing; rows {np.flatnonzero(mixed)[:5]} mix both")
    if np.any(~np.isin(labels[known], (0.0, 1.0))):
        raise ValueError("instance_labels must be 0/1 where known")
    return known.all(axis=1)


def positive_votes(predictions, *, threshold: float = 0.5, inclusive: bool = True) -> np.ndarray:
    """How many of the M models predict each instance positive, ``(n_bags, n_instances)`` in 0..M (Fig. 5).

    Examples
    --------
    >>> from medeval.metrics.stability import positive_votes
    >>> pred = np.array([[[0.9, 0.2, 0.6, 0.1]], [[0.8, 0.4, 0.3, 0.2]], [[0.7, 0.6, 0.4, 0.1]]])
    >>> pred.shape  # (models, bags, instances)
    (3, 1, 4)
    >>> positive_votes(pred).tolist()
    [[3, 1, 1, 0]]
    """
    p = _check_predictions(predictions)
    y = binarize_instances(p, threshold, inclusive=inclusive)
    return y.sum(axis=0)


def vote_histogram(predictions, *, threshold: float = 0.5, inclusive: bool = True) -> np.ndarray:
    """Per-bag histogram of positive votes, ``(n_bags, M + 1)`` (Fig. 5).

    Entry ``[i, k]`` counts the instances of bag i that exactly k models predict positive; a perfectly
    stable bag has mass only at k = 0 and k = M.

    Examples
    --------
    >>> from medeval.metrics.stability import vote_histogram
    >>> pred = np.array([[[0.9, 0.2, 0.6, 0.1]], [[0.8, 0.4, 0.3, 0.2]], [[0.7, 0.6, 0.4, 0.1]]])
    >>> pred.shape  # (models, bags, instances)
    (3, 1, 4)
    >>> vote_histogram(pred).tolist()  # instances with 0, 1, 2, 3 positive votes
    [[1, 2, 0, 1]]
    """
    p = _check_predictions(predictions)
    votes = positive_votes(p, threshold=threshold, inclusive=inclusive)
    n_models = p.shape[0]
    return (votes[..., None] == np.arange(n_models + 1)).sum(axis=1)


# --------------------------------------------------------------------------------------------
# localization performance (Sec. II-E)
# --------------------------------------------------------------------------------------------
def _localization_counts(predictions, instance_labels, threshold, inclusive):
    p = _check_probabilities(predictions, "predictions")
    labels = _as_array(instance_labels, "instance_labels")
    try:
        np.broadcast_shapes(labels.shape, p.shape)
    except ValueError as err:
        raise ValueError(
            f"instance_labels {labels.shape} must broadcast against predictions {p.shape} (same last axis)"
        ) from err
    if labels.ndim == 0 or labels.shape[-1] != p.shape[-1]:
        raise ValueError(f"instance_labels must have n_instances = {p.shape[-1]} on the last axis, got {labels.shape}")
    if not np.all(np.isin(labels, (0, 1))):
        raise ValueError("instance_labels must be 0/1")
    y = binarize_instances(p, threshold, inclusive=inclusive)
    truth = labels.astype(bool)
    tp = np.count_nonzero(y & truth, axis=-1)
    fp = np.count_nonzero(y & ~truth, axis=-1)
    fn = np.count_nonzero(~y & truth, axis=-1)
    return tp, fp, fn


def instance_dice(predictions, instance_labels, *, threshold: float = 0.5, inclusive: bool = True) -> np.ndarray:
    r"""DICE of Eq. 12 per bag, after Eq. 10 at ``threshold``:

    .. math::

       \mathrm{DICE}(x_i \mid bbox_i) = \frac{2\,TP}{2\,TP + FP + FN}

    ``predictions`` ``(..., N)`` probabilities, ``instance_labels`` 0/1 of the same trailing shape
    (Eq. 11: 1 inside the annotation). NaN iff the bag has no labelled positive and no predicted
    positive instance.

    Examples
    --------
    >>> from medeval.metrics.stability import instance_dice
    >>> round(float(instance_dice([0.9, 0.7, 0.2, 0.1], [1, 0, 1, 0])), 4)  # 2 / (2 + 1 + 1)
    0.5
    """
    tp, fp, fn = _localization_counts(predictions, instance_labels, threshold, inclusive)
    return _divide(2.0 * tp, 2.0 * tp + fp + fn)


def instance_jaccard(predictions, instance_labels, *, threshold: float = 0.5, inclusive: bool = True) -> np.ndarray:
    r"""Jaccard index of Eq. 13 per bag; NaN in the same case as :func:`instance_dice`.

    .. math::

       \mathrm{Jacc}(x_i \mid bbox_i) = \frac{TP}{TP + FP + FN}

    Examples
    --------
    >>> from medeval.metrics.stability import instance_jaccard
    >>> round(float(instance_jaccard([0.9, 0.7, 0.2, 0.1], [1, 0, 1, 0])), 4)  # 1 / (1 + 1 + 1)
    0.3333
    """
    tp, fp, fn = _localization_counts(predictions, instance_labels, threshold, inclusive)
    return _divide(tp, tp + fp + fn)


def localization_accuracy(jaccard, *, jaccard_threshold: float = 0.1) -> np.ndarray:
    r"""Localization accuracy of Eq. 14 per bag, with :math:`T(\text{Jacc})` = 0.1 in the paper:

    .. math::

       \mathrm{Accuracy}(x_i \mid bbox_i) = \begin{cases} 1, & \mathrm{Jacc}(x_i \mid bbox_i) \ge T(\text{Jacc}) \\
       0, & \text{otherwise} \end{cases}

    NaN Jaccard values stay NaN (the bag is not counted); average with ``np.nanmean``.

    Examples
    --------
    >>> from medeval.metrics.stability import localization_accuracy
    >>> localization_accuracy([0.05, 0.1, 0.6]).tolist()
    [0.0, 1.0, 1.0]
    """
    j = to_numpy(jaccard, dtype=np.float64)
    if not (0.0 <= float(jaccard_threshold) <= 1.0):
        raise ValueError(f"jaccard_threshold must lie in [0, 1], got {jaccard_threshold}")
    return np.where(np.isnan(j), np.nan, (j >= jaccard_threshold).astype(np.float64))
