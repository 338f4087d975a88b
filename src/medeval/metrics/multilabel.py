r"""Multi-label dataset indicators and evaluation measures (chapter 5).

The definitions follow the thesis chapter "Data and Evaluation" on ChestX-ray14
(``papers/05-multilabel-chestxray14-evaluation.txt``; its equations are unnumbered, so
docstrings cite them by section: "Label Distribution", "Metrics", "Splitting Multi-Label
Data"). Notation: ``Y`` is the (N, K) 0/1 matrix of true labels :math:`y_{ik}`, ``Y_pred`` the (N, K)
0/1 matrix of predicted labels and ``P`` the (N, K) matrix of real-valued scores :math:`p_{ik}`.

Conventions fixed here (the chapter leaves them open; see the chapter-5 notebook):

* **Threshold.** ``binarize`` implements the chapter's :math:`t(a) = 1` if :math:`a > 0.5` (strict);
  mldr, which produced the chapter's toy table, uses :math:`\ge` (``inclusive=True``).
* **AUC ties.** The chapter's AUC counts a tied positive/negative pair as *correctly*
  ordered, :math:`I(p_u \ge p_v)` (``ties="correct"``, the default). The Mann-Whitney / scikit-learn
  convention counts it as one half (``ties="half"``); the two differ by exactly
  :math:`\tfrac{1}{2} \#\{\text{tied pairs}\} / (n_+ n_-)`.
* **AP rank ties.** The chapter's AP uses :math:`\operatorname{rank}(p_i)` without saying how ties are ranked.
  The default ``ties="max"`` gives every member of a tie group the group's largest rank, which is the
  only choice for which the chapter's numerator :math:`\sum_j I(p_j \ge p_i)` never exceeds
  :math:`\operatorname{rank}(p_i)`; it
  equals scikit-learn's ``label_ranking_average_precision_score`` (rows) and
  ``average_precision_score`` (columns). ``"min"`` gives the group's smallest rank with the
  same numerator (R ``ties.method="min"``; optimistic, and it can exceed 1 when positives are
  tied, so it is not a precision then). ``"last"`` is mldr >= 0.4 / MULAN: ordinal ranks from
  R ``rank(-p, ties.method="last")`` (later columns rank higher inside a tie) and numerator
  :math:`\#\{\text{positives ranked at or above}\}`; ``"first"`` is its mirror.
* **Undefined values.** Every quantity that can be 0/0 (a label with no positives, a row with
  no labels, F1 when nothing is true and nothing predicted) is NaN by default, is *excluded*
  from averages, and the number of undefined items is reported: every averaged metric accepts
  ``return_count=True`` and then returns ``(value, n_undefined)``; an
  ``UndefinedMetricWarning`` names the count. A number may be substituted instead, explicitly
  (``undefined=1.0`` reproduces scikit-learn's LRAP on empty rows, ``zero_division=0`` its
  F1); the count is still reported. ``zero_division="diagnose"`` is mldr's rule (1 if
  :math:`tp + fp + fn = 0`, else 0). Nothing is silently replaced.

Torch tensors are accepted (also on the GPU or requiring grad; converted by
``medeval.metrics._arrays.to_numpy``). This module imports only numpy and ``medeval.metrics``;
scikit-learn and torchmetrics serve as test oracles.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Literal

import numpy as np

from medeval.metrics._arrays import to_numpy
from medeval.metrics._ranks import auc_from_stats as _auc_from_stats
from medeval.metrics._ranks import tie_group_stats as _tie_group_stats
from medeval.metrics.curves import roc_auc

__all__ = [
    "UndefinedMetricWarning",
    "binarize",
    # indicators
    "label_counts",
    "label_cardinality",
    "label_density",
    "labelset_counts",
    "label_diversity",
    "proportion_distinct_labelsets",
    "proportion_most_frequent_labelset",
    "labels_per_example_histogram",
    "multilabel_indicators",
    "label_pair_counts",
    "label_correlation",
    "pairwise_chi2",
    "mean_pairwise_chi2",
    "conditional_cooccurrence",
    # binary building blocks
    "binary_error_rate",
    "binary_f1",
    "binary_average_precision",
    "binary_auc",
    # aggregation
    "example_average",
    "macro_average",
    "micro_average",
    # bipartition measures
    "hamming_loss",
    "subset_accuracy",
    "per_label_precision",
    "per_label_recall",
    "per_label_f1",
    "precision_micro",
    "recall_micro",
    "f1_micro",
    "precision_macro",
    "recall_macro",
    "f1_macro",
    "example_precision",
    "example_recall",
    "example_f1",
    "example_accuracy",
    # ranking measures
    "per_label_auc",
    "macro_auc",
    "per_label_average_precision",
    "mean_average_precision",
    "example_average_precision",
    "example_auc",
    "one_error",
    "coverage_error",
    "ranking_loss",
    # thresholds and summary
    "f1_optimal_thresholds",
    "multilabel_metrics",
]

AucTies = Literal["correct", "half", "incorrect"]
ApTies = Literal["max", "min", "last", "first"]
ZeroDivision = float | Literal["diagnose"]


class UndefinedMetricWarning(RuntimeWarning):
    """A metric had undefined (0/0) items; they were excluded or substituted as documented."""


# --------------------------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------------------------
def _check_binary(x, name: str, ndim: int = 2) -> np.ndarray:
    a = to_numpy(x)
    if a.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array of 0/1 labels, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {a.shape}")
    if a.dtype == bool:
        return a
    if not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"{name} must hold 0/1 values, got dtype {a.dtype}")
    if not np.all((a == 0) | (a == 1)):
        raise ValueError(f"{name} must hold only 0 and 1 (binary label indicators)")
    return a.astype(bool)


def _check_scores(x, name: str, shape: tuple[int, ...]) -> np.ndarray:
    a = to_numpy(x)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"{name} must be a real-valued score array, got dtype {a.dtype}")
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape} (the shape of the labels), got {a.shape}")
    a = a.astype(np.float64, copy=False)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return a


def _check_pair(Y, Y_pred, ndim: int = 2) -> tuple[np.ndarray, np.ndarray]:
    y = _check_binary(Y, "Y" if ndim == 2 else "y", ndim)
    yp = _check_binary(Y_pred, "Y_pred" if ndim == 2 else "y_pred", ndim)
    if y.shape != yp.shape:
        raise ValueError(f"Y_pred must have the shape of Y {y.shape}, got {yp.shape}")
    return y, yp


def _check_label_scores(Y, P, ndim: int = 2) -> tuple[np.ndarray, np.ndarray]:
    y = _check_binary(Y, "Y" if ndim == 2 else "y", ndim)
    return y, _check_scores(P, "P" if ndim == 2 else "p", y.shape)


def _check_undefined(undefined, name: str = "undefined") -> float:
    try:
        value = float(undefined)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be NaN (exclude and count) or a number, got {undefined!r}") from None
    return value


def _check_zero_division(zero_division) -> ZeroDivision:
    if isinstance(zero_division, str):
        if zero_division != "diagnose":
            raise ValueError(f"zero_division must be NaN, a number or 'diagnose', got {zero_division!r}")
        return zero_division
    return _check_undefined(zero_division, "zero_division")


def _choice(value, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# undefined-value policy
# --------------------------------------------------------------------------------------------
def _safe_ratio(num, den, zero_division, tp_fp_fn=None):
    """num/den elementwise; where den == 0 apply the zero_division policy."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.divide(num, den, out=np.full(np.broadcast(num, den).shape, np.nan), where=den != 0)
    undefined = den == 0
    if np.any(undefined):
        if isinstance(zero_division, str):  # "diagnose" (mldr / MULAN)
            out = np.where(undefined, np.where(np.asarray(tp_fp_fn) == 0, 1.0, 0.0), out)
        else:
            out = np.where(undefined, zero_division, out)
    return out, undefined


def _mean_with_policy(values, undefined_mask, what: str, return_count: bool):
    """Mean over the non-NaN values; report how many items were undefined."""
    values = np.asarray(values, dtype=np.float64)
    n_undefined = int(np.count_nonzero(undefined_mask))
    keep = ~np.isnan(values)
    if n_undefined:
        warnings.warn(
            f"{n_undefined} of {values.size} {what} undefined (0/0); "
            + ("excluded from the mean" if np.all(np.isnan(values[undefined_mask])) else "substituted"),
            UndefinedMetricWarning,
            stacklevel=3,
        )
    value = float(values[keep].mean()) if np.any(keep) else float("nan")
    return (value, n_undefined) if return_count else value


def _scalar_with_policy(value, undefined: bool, what: str, return_count: bool):
    if undefined:
        warnings.warn(f"{what} undefined (0/0)", UndefinedMetricWarning, stacklevel=3)
    value = float(value)
    return (value, int(undefined)) if return_count else value


# --------------------------------------------------------------------------------------------
# thresholding
# --------------------------------------------------------------------------------------------
def binarize(P, threshold=0.5, *, inclusive: bool = False) -> np.ndarray:
    r"""Thresholding function :math:`t(\cdot)` of :math:`h(x) = t(f(x))` (section "Classification vs Ranking").

    .. math::

       t(a)=\begin{cases}1 & \text{if } a>0.5\\ 0 & \text{otherwise.}\end{cases}

    The chapter's rule, with ``threshold`` in place of 0.5 (its default); ``inclusive=True`` gives mldr's
    :math:`a \ge` ``threshold``. ``threshold`` is a scalar or one value per label (shape (K,)). Scores must be
    finite: a NaN score has no side of the threshold, so NaN or inf in ``P`` raises ``ValueError``
    (as every scoring function of this module does).

    Examples
    --------
    >>> from medeval.metrics.multilabel import binarize
    >>> binarize([[0.9, 0.5, 0.2]]).tolist()
    [[True, False, False]]
    >>> binarize([[0.9, 0.5, 0.2]], inclusive=True).tolist()
    [[True, True, False]]
    """
    p = to_numpy(P, dtype=np.float64)
    if p.ndim not in (1, 2):
        raise ValueError(f"P must be a 1-D or 2-D score array, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError("P must be finite (no NaN or inf)")
    t = to_numpy(threshold, dtype=np.float64)
    if t.ndim > 1 or (t.ndim == 1 and t.shape[0] != p.shape[-1]):
        raise ValueError(f"threshold must be a scalar or have one value per label ({p.shape[-1]}), got {t.shape}")
    if np.any(np.isnan(t)):
        raise ValueError("threshold must not contain NaN")
    return p >= t if inclusive else p > t


# --------------------------------------------------------------------------------------------
# dataset indicators (section "Label Distribution")
# --------------------------------------------------------------------------------------------
def label_counts(Y) -> np.ndarray:
    r"""Number of examples carrying each label, :math:`\sum_i y_{ik}` (shape (K,)).

    Examples
    --------
    >>> from medeval.metrics.multilabel import label_counts
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> label_counts(Y).tolist()
    [3, 2, 2]
    """
    y = _check_binary(Y, "Y")
    return np.count_nonzero(y, axis=0)


def label_cardinality(Y) -> float:
    r"""Label cardinality [Tsoumakas2007]: mean number of labels per example.

    .. math::

       \operatorname{LCard}(D)=\frac{1}{N}\sum_{i=1}^{N}\sum_{k=1}^{K}y_{ik}


    Examples
    --------
    >>> from medeval.metrics.multilabel import label_cardinality
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> label_cardinality(Y)  # 7 labels / 4 examples
    1.75
    """
    y = _check_binary(Y, "Y")
    return float(np.count_nonzero(y) / y.shape[0])


def label_density(Y) -> float:
    r"""Label density [Tsoumakas2007].

    .. math::

       \operatorname{LDens}(D)=\frac{1}{K}\operatorname{LCard}(D)=\frac{1}{NK}\sum_{i=1}^{N}\sum_{k=1}^{K}y_{ik}


    Examples
    --------
    >>> from medeval.metrics.multilabel import label_density
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> round(label_density(Y), 4)  # 7 / (4 * 3)
    0.5833
    """
    y = _check_binary(Y, "Y")
    return float(np.count_nonzero(y) / y.size)


def labelset_counts(Y) -> tuple[np.ndarray, np.ndarray]:
    """Distinct label sets and how often each occurs, most frequent first.

    Returns ``(labelsets, counts)``: a (M, K) bool array of the M distinct rows of ``Y`` and
    their (M,) counts, sorted by decreasing count (ties: lexicographic order of the packed rows).

    Examples
    --------
    >>> from medeval.metrics.multilabel import labelset_counts
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> sets, counts = labelset_counts(Y)
    >>> sets.tolist(), counts.tolist()
    ([[True, False, True], [False, True, False], [True, True, False]], [2, 1, 1])
    """
    y = _check_binary(Y, "Y")
    packed = np.packbits(y, axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    return y[first[order]], counts[order]


def label_diversity(Y) -> int:
    r"""Label diversity [Zhang2014]: the number of distinct label sets.

    .. math::

       \operatorname{LDiv}(D)=\bigl|\{Y \mid \exists\,\boldsymbol x:(\boldsymbol x,Y)\in D\}\bigr|


    Examples
    --------
    >>> from medeval.metrics.multilabel import label_diversity
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> label_diversity(Y)
    3
    """
    return int(labelset_counts(Y)[1].size)


def proportion_distinct_labelsets(Y) -> float:
    r"""Proportion of distinct label sets [Read2011].

    .. math::

       \operatorname{PLDiv}(D)=\frac{1}{N}\operatorname{LDiv}(D)


    Examples
    --------
    >>> from medeval.metrics.multilabel import proportion_distinct_labelsets
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> proportion_distinct_labelsets(Y)
    0.75
    """
    y = _check_binary(Y, "Y")
    return label_diversity(y) / y.shape[0]


def proportion_most_frequent_labelset(Y) -> float:
    r"""Proportion of the most frequent label set [Read2011].

    .. math::

       \operatorname{PMax}(D)=\max_{Y}\frac{\operatorname{count}(Y,D)}{N}

    with :math:`\operatorname{count}(Y,D)` the number of examples whose label set is :math:`Y`.


    Examples
    --------
    >>> from medeval.metrics.multilabel import proportion_most_frequent_labelset
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> proportion_most_frequent_labelset(Y)
    0.5
    """
    y = _check_binary(Y, "Y")
    return float(labelset_counts(y)[1][0] / y.shape[0])


def labels_per_example_histogram(Y) -> np.ndarray:
    """Number of examples with exactly 0, 1, ..., K labels (shape (K+1,); sums to N).

    Examples
    --------
    >>> from medeval.metrics.multilabel import labels_per_example_histogram
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> labels_per_example_histogram(Y).tolist()
    [0, 1, 3, 0]
    """
    y = _check_binary(Y, "Y")
    return np.bincount(np.count_nonzero(y, axis=1), minlength=y.shape[1] + 1)


def multilabel_indicators(Y) -> dict[str, float]:
    """The chapter's Table tab:mlprop row: N, K, LCard, LDens, LDiv, PLDiv, PMax.

    Examples
    --------
    >>> from medeval.metrics.multilabel import multilabel_indicators
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> {k: round(float(v), 4) for k, v in multilabel_indicators(Y).items()}
    {'N': 4.0, 'K': 3.0, 'LCard': 1.75, 'LDens': 0.5833, 'LDiv': 3.0, 'PLDiv': 0.75, 'PMax': 0.5}
    """
    y = _check_binary(Y, "Y")
    sets, counts = labelset_counts(y)
    n, k = y.shape
    return {
        "N": n,
        "K": k,
        "LCard": float(np.count_nonzero(y) / n),
        "LDens": float(np.count_nonzero(y) / y.size),
        "LDiv": int(counts.size),
        "PLDiv": counts.size / n,
        "PMax": float(counts[0] / n),
    }


def label_pair_counts(Y) -> np.ndarray:
    r"""Joint counts :math:`C = Y^\top Y`, :math:`C_{uv} = \sum_i y_{iu} y_{iv}` (diagonal: label counts), int64.

    Examples
    --------
    >>> from medeval.metrics.multilabel import label_pair_counts
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> label_pair_counts(Y).tolist()
    [[3, 1, 2], [1, 2, 0], [2, 0, 2]]
    """
    y = _check_binary(Y, "Y")
    yf = y.astype(np.float64)  # BLAS; exact for counts < 2**53
    return np.rint(yf.T @ yf).astype(np.int64)


def _two_by_two(y: np.ndarray):
    n = y.shape[0]
    c = label_pair_counts(y).astype(np.float64)
    s = np.diag(c)
    a = c  # both present
    b = s[:, None] - c  # u present, v absent
    cc = s[None, :] - c  # u absent, v present
    d = n - s[:, None] - s[None, :] + c  # both absent
    return n, a, b, cc, d


def label_correlation(Y) -> np.ndarray:
    r"""Pearson correlation :math:`\phi` between every pair of binary labels (section "Label Distribution").

    .. math::

       \phi_{uv}=\frac{ad-bc}{\sqrt{(a+b)(c+d)(a+c)(b+d)}}

    from the :math:`2\times2` table :math:`a, b, c, d` of labels :math:`u` and :math:`v` (both present; only
    :math:`u`; only :math:`v`; neither), equal to the sample Pearson correlation of the 0/1 columns, R's ``cor(Y)``). A label that is
    constant (never or always present) has no correlation: its row and column are NaN and an
    ``UndefinedMetricWarning`` gives the count.

    Examples
    --------
    >>> from medeval.metrics.multilabel import label_correlation
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> np.round(label_correlation(Y), 4).tolist()
    [[1.0, -0.5774, 0.5774], [-0.5774, 1.0, -1.0], [0.5774, -1.0, 1.0]]
    """
    y = _check_binary(Y, "Y")
    _, a, b, c, d = _two_by_two(y)
    den = np.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    phi, undefined = _safe_ratio(a * d - b * c, den, np.nan)
    n_const = int(np.count_nonzero(np.diag(undefined)))
    if n_const:
        warnings.warn(f"{n_const} constant label(s): correlation undefined (NaN)", UndefinedMetricWarning, stacklevel=2)
    return phi


def pairwise_chi2(Y) -> np.ndarray:
    r"""Pearson :math:`\chi^2` statistic of the :math:`2\times2` table of every label pair, without continuity
    correction.

    .. math::

       \chi^{2}_{uv} = \frac{N\,(ad-bc)^2}{(a+b)(c+d)(a+c)(b+d)}, \qquad \phi_{uv}^{2}=\frac{\chi^{2}_{uv}}{N}

    (the identity the chapter quotes from [Chekina2011]; :math:`a, b, c, d` as in :func:`label_correlation`). NaN for constant labels (0/0).

    Examples
    --------
    >>> from medeval.metrics.multilabel import pairwise_chi2
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> np.round(pairwise_chi2(Y), 4).tolist()
    [[4.0, 1.3333, 1.3333], [1.3333, 4.0, 4.0], [1.3333, 4.0, 4.0]]
    """
    y = _check_binary(Y, "Y")
    n, a, b, c, d = _two_by_two(y)
    chi2, _ = _safe_ratio(n * (a * d - b * c) ** 2, (a + b) * (c + d) * (a + c) * (b + d), np.nan)
    return chi2


def mean_pairwise_chi2(Y) -> float:
    r"""Mean :math:`\chi^2` over the :math:`K(K-1)/2` label pairs, the meta-feature of [Chekina2011].

    Examples
    --------
    >>> from medeval.metrics.multilabel import mean_pairwise_chi2
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> round(mean_pairwise_chi2(Y), 4)
    2.2222
    """
    chi2 = pairwise_chi2(Y)
    iu = np.triu_indices(chi2.shape[0], k=1)
    return float(np.nanmean(chi2[iu]))


def conditional_cooccurrence(Y) -> np.ndarray:
    r"""Asymmetric co-occurrence, an estimate of :math:`P(Y_v \mid Y_u)`.

    .. math::

       M_{uv}=\frac{\sum_{i=1}^{N}y_{iu}\,y_{iv}}{\sum_{i=1}^{N}y_{iu}}\approx P(Y_v\mid Y_u)

    Section "Label Distribution", Fig. corrs (b): :math:`u` is the row (the chapter's y-axis), :math:`v` the
    column. Diagonal = 1. Rows of labels with no positives are NaN (0/0) with a warning.

    Examples
    --------
    >>> from medeval.metrics.multilabel import conditional_cooccurrence
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> np.round(conditional_cooccurrence(Y), 4).tolist()
    [[1.0, 0.3333, 0.6667], [0.5, 1.0, 0.0], [1.0, 0.0, 1.0]]
    """
    y = _check_binary(Y, "Y")
    c = label_pair_counts(y).astype(np.float64)
    m, undefined = _safe_ratio(c, np.diag(c)[:, None] * np.ones_like(c), np.nan)
    n_empty = int(np.count_nonzero(undefined[:, 0]))
    if n_empty:
        warnings.warn(f"{n_empty} label(s) without positives: co-occurrence rows NaN", UndefinedMetricWarning, stacklevel=2)
    return m


# --------------------------------------------------------------------------------------------
# rank statistics shared by the ranking measures (computed along the last axis)
# --------------------------------------------------------------------------------------------
def _ap_max_from_stats(st, ties: str = "max") -> tuple[np.ndarray, np.ndarray]:
    ys = st["ys"]
    n = ys.shape[-1]
    n_pos = st["n_pos"]
    # for a positive i: #positives with p >= p_i over rank(p_i); the max rank is #{j: p_j >= p_i},
    # the min rank 1 + #{j: p_j > p_i}
    rank = n - st["start"] if ties == "max" else n - st["end"]
    frac = (n_pos[..., None] - st["pos_before"]) / rank
    num = np.where(ys, frac, 0.0).sum(axis=-1)
    return _safe_ratio(num, n_pos, np.nan)


def _ap_ordinal(y: np.ndarray, p: np.ndarray, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """AP with ordinal ranks, ties broken by position ("first") or reverse position ("last")."""
    n = p.shape[-1]
    if ties == "first":
        order = np.argsort(-p, axis=-1, kind="stable")
    else:
        order = (n - 1) - np.argsort(-p[..., ::-1], axis=-1, kind="stable")
    ys = np.take_along_axis(y, order, -1)
    cpos = np.cumsum(ys, axis=-1)
    num = np.where(ys, cpos / np.arange(1, n + 1), 0.0).sum(axis=-1)
    return _safe_ratio(num, ys.sum(axis=-1), np.nan)


def _average_precision_last_axis(y, p, ties: str):
    if ties in ("max", "min"):
        return _ap_max_from_stats(_tie_group_stats(y, p), ties)
    return _ap_ordinal(y, p, ties)


# --------------------------------------------------------------------------------------------
# binary building blocks on n-vectors (section "Metrics")
# --------------------------------------------------------------------------------------------
def binary_error_rate(y, y_pred) -> float:
    r"""Binary error rate (section "Metrics").

    .. math::

       \operatorname{err}(\boldsymbol y,\hat{\boldsymbol y})=\frac{1}{n}\sum_{i=1}^{n}I(y_i\neq\hat y_i)


    Examples
    --------
    >>> from medeval.metrics.multilabel import binary_error_rate
    >>> binary_error_rate([1, 0, 1, 1], [1, 1, 1, 0])
    0.5
    """
    y, yp = _check_pair(y, y_pred, ndim=1)
    return float(np.count_nonzero(y != yp) / y.size)


def binary_f1(y, y_pred, *, zero_division: ZeroDivision = np.nan) -> float:
    r"""Binary :math:`F_1` (section "Metrics").

    .. math::

       F_1(\boldsymbol y,\hat{\boldsymbol y})=\frac{2\sum_{i=1}^{n}y_i\hat y_i}{\sum_{i=1}^{n}y_i+\sum_{i=1}^{n}\hat y_i}


    Undefined when nothing is true and nothing is predicted: returns ``zero_division``
    (default NaN; ``"diagnose"`` = mldr's 1).

    Examples
    --------
    >>> from medeval.metrics.multilabel import binary_f1
    >>> round(binary_f1([1, 0, 1, 1], [1, 1, 1, 0]), 4)  # 2 * 2 / (3 + 3)
    0.6667
    """
    y, yp = _check_pair(y, y_pred, ndim=1)
    zd = _check_zero_division(zero_division)
    tp = np.count_nonzero(y & yp)
    den = np.count_nonzero(y) + np.count_nonzero(yp)
    out, _ = _safe_ratio(2 * tp, den, zd, tp_fp_fn=den - tp)
    return float(out)


def binary_average_precision(y, p, *, ties: ApTies = "max") -> float:
    r"""Binary average precision (section "Metrics").

    .. math::

       \operatorname{AP}(\boldsymbol y,\boldsymbol p)=\frac{1}{\sum_{i=1}^{n}y_i}\sum_{i;\,y_i=1}
       \frac{\sum_{j;\,y_j=1}I(p_j\ge p_i)}{\operatorname{rank}(p_i)}

    :math:`\operatorname{rank}` sorts :math:`\boldsymbol p` from highest to lowest (values 1..n). ``ties`` chooses how tied scores are
    ranked (module docstring); with ``"max"`` this equals scikit-learn's
    ``average_precision_score``. Undefined (NaN) when y has no positives.

    Examples
    --------
    >>> from medeval.metrics.multilabel import binary_average_precision
    >>> round(binary_average_precision([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]), 4)  # (1/1 + 2/3) / 2
    0.8333
    """
    y, p = _check_label_scores(y, p, ndim=1)
    _choice(ties, "ties", ("max", "min", "last", "first"))
    out, _ = _average_precision_last_axis(y[None, :], p[None, :], ties)
    return float(out[0])


def binary_auc(y, p, *, ties: AucTies = "correct") -> float:
    r"""Binary AUC (section "Metrics").

    .. math::

       \operatorname{AUC}(\boldsymbol y,\boldsymbol p)=\frac{\sum_{u;\,y_u=1}\sum_{v;\,y_v=0}I(p_u\ge p_v)}
       {\sum_{i=1}^{n}y_i\,\sum_{i=1}^{n}(1-y_i)}


    The chapter counts tied pairs as correctly ordered (``ties="correct"``); ``"half"`` is the
    Mann-Whitney / scikit-learn convention, ``"incorrect"`` counts them as errors. Undefined
    (NaN) when :math:`\boldsymbol y` has no positives or no negatives.

    Examples
    --------
    >>> from medeval.metrics.multilabel import binary_auc
    >>> round(binary_auc([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]), 4)  # 3 of 4 pairs ordered
    0.75
    """
    y, p = _check_label_scores(y, p, ndim=1)
    _choice(ties, "ties", ("correct", "half", "incorrect"))
    return roc_auc(y, p, ties=ties, undefined=np.nan)


# --------------------------------------------------------------------------------------------
# generic aggregation (section "Metrics": example-based, macro, micro)
# --------------------------------------------------------------------------------------------
def example_average(metric: Callable[..., float], Y, Z, *, return_count: bool = False, **kwargs):
    r"""Example-based aggregation of a binary measure :math:`B` (section "Metrics").

    .. math::

       B^{\text{example}}=\frac{1}{N}\sum_{i=1}^{N}B(\boldsymbol y_i,\hat{\boldsymbol y}_i)

    with the scores :math:`\boldsymbol p_i` in place of :math:`\hat{\boldsymbol y}_i` for ranking measures.

    ``metric`` is a binary building block (e.g. ``binary_f1``). Rows where it is NaN are
    excluded and counted. Loops over rows: for large N use the dedicated functions
    (``example_f1``, ``example_average_precision``, ...), which agree with this.

    Examples
    --------
    >>> from medeval.metrics.multilabel import example_average, binary_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(example_average(binary_f1, Y, Y_pred), 4)
    0.7833
    """
    y = _check_binary(Y, "Y")
    z = to_numpy(Z)
    if z.shape != y.shape:
        raise ValueError(f"Z must have the shape of Y {y.shape}, got {z.shape}")
    values = np.array([metric(y[i], z[i], **kwargs) for i in range(y.shape[0])], dtype=np.float64)
    return _mean_with_policy(values, np.isnan(values), "examples", return_count)


def macro_average(metric: Callable[..., float], Y, Z, *, return_count: bool = False, **kwargs):
    r"""Macro aggregation of a binary measure :math:`B`; NaN labels are excluded and counted.

    .. math::

       B^{\text{macro}}=\frac{1}{K}\sum_{k=1}^{K}B(\boldsymbol y_{(k)},\hat{\boldsymbol y}_{(k)})

    with the scores :math:`\boldsymbol p_{(k)}` in place of :math:`\hat{\boldsymbol y}_{(k)}` for ranking measures.


    Examples
    --------
    >>> from medeval.metrics.multilabel import macro_average, binary_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(macro_average(binary_f1, Y, Y_pred), 4)
    0.7556
    """
    y = _check_binary(Y, "Y")
    z = to_numpy(Z)
    if z.shape != y.shape:
        raise ValueError(f"Z must have the shape of Y {y.shape}, got {z.shape}")
    values = np.array([metric(y[:, k], z[:, k], **kwargs) for k in range(y.shape[1])], dtype=np.float64)
    return _mean_with_policy(values, np.isnan(values), "labels", return_count)


def micro_average(metric: Callable[..., float], Y, Z, **kwargs) -> float:
    r"""Micro aggregation of a binary measure :math:`B` on the :math:`NK`-vectors stacked row by row.

    .. math::

       B^{\text{micro}}=B(\boldsymbol y^{*},\hat{\boldsymbol y}^{*}),\qquad
       \boldsymbol y^{*}=(y_{11},\dots,y_{1K},y_{21},\dots,y_{NK})^{\top}


    Examples
    --------
    >>> from medeval.metrics.multilabel import micro_average, binary_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(micro_average(binary_f1, Y, Y_pred), 4)
    0.7692
    """
    y = _check_binary(Y, "Y")
    z = to_numpy(Z)
    if z.shape != y.shape:
        raise ValueError(f"Z must have the shape of Y {y.shape}, got {z.shape}")
    return float(metric(y.reshape(-1), z.reshape(-1), **kwargs))


# --------------------------------------------------------------------------------------------
# bipartition measures
# --------------------------------------------------------------------------------------------
def hamming_loss(Y, Y_pred) -> float:
    r"""Hamming loss (section "Metrics").

    .. math::

       \operatorname{hloss}(\hat h)=\frac{1}{N}\sum_{i=1}^{N}\operatorname{err}(\boldsymbol y_i,\hat{\boldsymbol y}_i)
       =\frac{1}{N}\sum_{i=1}^{N}\frac{1}{K}\sum_{k=1}^{K}I(y_{ik}\neq\hat y_{ik})

    It equals :math:`\operatorname{err}^{\text{example}} = \operatorname{err}^{\text{macro}} =
    \operatorname{err}^{\text{micro}}`.


    Examples
    --------
    >>> from medeval.metrics.multilabel import hamming_loss
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(hamming_loss(Y, Y_pred), 4)  # 4 wrong cells of 12
    0.25
    """
    y, yp = _check_pair(Y, Y_pred)
    return float(np.count_nonzero(y != yp) / y.size)


def subset_accuracy(Y, Y_pred) -> float:
    r"""Subset accuracy: the fraction of exactly predicted label sets.

    .. math::

       \operatorname{subsetacc}(\hat h)=\frac{1}{N}\sum_{i=1}^{N}I(\boldsymbol y_i=\hat{\boldsymbol y}_i)


    Examples
    --------
    >>> from medeval.metrics.multilabel import subset_accuracy
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> subset_accuracy(Y, Y_pred)
    0.25
    """
    y, yp = _check_pair(Y, Y_pred)
    return float(np.count_nonzero(np.all(y == yp, axis=1)) / y.shape[0])


def _confusion(y, yp, axis):
    tp = np.count_nonzero(y & yp, axis=axis)
    n_true = np.count_nonzero(y, axis=axis)
    n_pred = np.count_nonzero(yp, axis=axis)
    return tp, n_pred - tp, n_true - tp  # tp, fp, fn


def per_label_precision(Y, Y_pred, *, zero_division: ZeroDivision = np.nan) -> np.ndarray:
    r"""Precision :math:`\mathrm{tp}_k / (\mathrm{tp}_k + \mathrm{fp}_k)` of every label; :math:`0/0` (label never
    predicted) gives ``zero_division``.

    Examples
    --------
    >>> from medeval.metrics.multilabel import per_label_precision
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> np.round(per_label_precision(Y, Y_pred), 4).tolist()
    [1.0, 0.6667, 1.0]
    """
    y, yp = _check_pair(Y, Y_pred)
    zd = _check_zero_division(zero_division)
    tp, fp, fn = _confusion(y, yp, 0)
    return _safe_ratio(tp, tp + fp, zd, tp + fp + fn)[0]


def per_label_recall(Y, Y_pred, *, zero_division: ZeroDivision = np.nan) -> np.ndarray:
    r"""Recall :math:`\mathrm{tp}_k / (\mathrm{tp}_k + \mathrm{fn}_k)` of every label; :math:`0/0` (label never
    true) gives ``zero_division``.

    Examples
    --------
    >>> from medeval.metrics.multilabel import per_label_recall
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> np.round(per_label_recall(Y, Y_pred), 4).tolist()
    [0.6667, 1.0, 0.5]
    """
    y, yp = _check_pair(Y, Y_pred)
    zd = _check_zero_division(zero_division)
    tp, fp, fn = _confusion(y, yp, 0)
    return _safe_ratio(tp, tp + fn, zd, tp + fp + fn)[0]


def per_label_f1(Y, Y_pred, *, zero_division: ZeroDivision = np.nan) -> np.ndarray:
    r""":math:`F_1(\boldsymbol y_{(k)}, \hat{\boldsymbol y}_{(k)}) = 2\,\mathrm{tp}_k / (2\,\mathrm{tp}_k + \mathrm{fp}_k
    + \mathrm{fn}_k)` of every label; :math:`0/0` gives ``zero_division``.

    Examples
    --------
    >>> from medeval.metrics.multilabel import per_label_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> np.round(per_label_f1(Y, Y_pred), 4).tolist()
    [0.8, 0.8, 0.6667]
    """
    y, yp = _check_pair(Y, Y_pred)
    zd = _check_zero_division(zero_division)
    tp, fp, fn = _confusion(y, yp, 0)
    return _safe_ratio(2 * tp, 2 * tp + fp + fn, zd, tp + fp + fn)[0]


def _micro(Y, Y_pred, kind, zero_division, return_count):
    y, yp = _check_pair(Y, Y_pred)
    zd = _check_zero_division(zero_division)
    tp, fp, fn = (int(v.sum()) for v in _confusion(y, yp, 0))
    num, den = {"precision": (tp, tp + fp), "recall": (tp, tp + fn), "f1": (2 * tp, 2 * tp + fp + fn)}[kind]
    value, undefined = _safe_ratio(num, den, zd, tp + fp + fn)
    return _scalar_with_policy(value, bool(undefined), f"micro {kind}", return_count)


def precision_micro(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Micro precision :math:`\sum_k \mathrm{tp}_k / \sum_k (\mathrm{tp}_k + \mathrm{fp}_k)`.

    Examples
    --------
    >>> from medeval.metrics.multilabel import precision_micro
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(precision_micro(Y, Y_pred), 4)
    0.8333
    """
    return _micro(Y, Y_pred, "precision", zero_division, return_count)


def recall_micro(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Micro recall :math:`\sum_k \mathrm{tp}_k / \sum_k (\mathrm{tp}_k + \mathrm{fn}_k)`.

    Examples
    --------
    >>> from medeval.metrics.multilabel import recall_micro
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(recall_micro(Y, Y_pred), 4)
    0.7143
    """
    return _micro(Y, Y_pred, "recall", zero_division, return_count)


def f1_micro(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Micro :math:`F_1`, :math:`F_1(\boldsymbol y^{*},\hat{\boldsymbol y}^{*})` (section "Metrics").

    .. math::

       F_1^{\text{micro}}=\frac{2\sum_k\mathrm{tp}_k}{2\sum_k\mathrm{tp}_k+\sum_k\mathrm{fp}_k+\sum_k\mathrm{fn}_k}


    Examples
    --------
    >>> from medeval.metrics.multilabel import f1_micro
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(f1_micro(Y, Y_pred), 4)
    0.7692
    """
    return _micro(Y, Y_pred, "f1", zero_division, return_count)


def precision_macro(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Macro precision :math:`\frac{1}{K}\sum_k \mathrm{precision}_k`; labels never predicted are undefined
    (``zero_division``).

    Examples
    --------
    >>> from medeval.metrics.multilabel import precision_macro
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(precision_macro(Y, Y_pred), 4)
    0.8889
    """
    y, yp = _check_pair(Y, Y_pred)
    tp, fp, _ = _confusion(y, yp, 0)
    values = per_label_precision(y, yp, zero_division=zero_division)
    return _mean_with_policy(values, tp + fp == 0, "labels", return_count)


def recall_macro(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Macro recall :math:`\frac{1}{K}\sum_k \mathrm{recall}_k`; labels without positives are undefined
    (``zero_division``).

    Examples
    --------
    >>> from medeval.metrics.multilabel import recall_macro
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(recall_macro(Y, Y_pred), 4)
    0.7222
    """
    y, yp = _check_pair(Y, Y_pred)
    tp, _, fn = _confusion(y, yp, 0)
    values = per_label_recall(y, yp, zero_division=zero_division)
    return _mean_with_policy(values, tp + fn == 0, "labels", return_count)


def f1_macro(
    Y,
    Y_pred,
    *,
    convention: Literal["mean_of_f1", "f_of_macro_pr"] = "mean_of_f1",
    zero_division: ZeroDivision = np.nan,
    return_count: bool = False,
):
    r"""Macro F1, in the two conventions found in the chapter's sources.

    * ``"mean_of_f1"`` (default; the chapter's definition, = scikit-learn ``f1_score(average="macro")``,
      = mldr >= 0.4.2). A label with :math:`\mathrm{tp}_k + \mathrm{fp}_k + \mathrm{fn}_k = 0` is undefined
      (``zero_division``):

      .. math::

         F_1^{\text{macro}}=\frac{1}{K}\sum_{k=1}^{K}\frac{2\,\mathrm{tp}_k}{2\,\mathrm{tp}_k+\mathrm{fp}_k+\mathrm{fn}_k}

    * ``"f_of_macro_pr"``: the F of the macro precision and recall, as mldr 0.4.0/0.4.1 computed
      ``macro_fmeasure`` (the version that produced the chapter's toy table; use ``zero_division="diagnose"``
      to match mldr's handling of labels never predicted / never true). Undefined if
      :math:`P^{\text{macro}} + R^{\text{macro}} = 0`:

      .. math::

         \begin{aligned}
         \tilde F_1^{\text{macro}}&=\frac{2\,P^{\text{macro}}R^{\text{macro}}}{P^{\text{macro}}+R^{\text{macro}}},\\
         P^{\text{macro}}&=\frac{1}{K}\sum_{k=1}^{K}\frac{\mathrm{tp}_k}{\mathrm{tp}_k+\mathrm{fp}_k},\qquad
         R^{\text{macro}}=\frac{1}{K}\sum_{k=1}^{K}\frac{\mathrm{tp}_k}{\mathrm{tp}_k+\mathrm{fn}_k}.
         \end{aligned}

    The count returned with ``return_count=True`` is the number of undefined per-label values
    (F1 for ``mean_of_f1``; precisions plus recalls for ``f_of_macro_pr``).

    Examples
    --------
    >>> from medeval.metrics.multilabel import f1_macro
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(f1_macro(Y, Y_pred), 4)
    0.7556
    >>> round(f1_macro(Y, Y_pred, convention="f_of_macro_pr"), 4)
    0.7969
    """
    _choice(convention, "convention", ("mean_of_f1", "f_of_macro_pr"))
    y, yp = _check_pair(Y, Y_pred)
    tp, fp, fn = _confusion(y, yp, 0)
    if convention == "mean_of_f1":
        values = per_label_f1(y, yp, zero_division=zero_division)
        return _mean_with_policy(values, tp + fp + fn == 0, "labels", return_count)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        p, n_p = precision_macro(y, yp, zero_division=zero_division, return_count=True)
        r, n_r = recall_macro(y, yp, zero_division=zero_division, return_count=True)
    n_undefined = n_p + n_r
    if n_undefined:
        warnings.warn(f"{n_undefined} per-label precision/recall values undefined (0/0)", UndefinedMetricWarning, stacklevel=2)
    value, _ = _safe_ratio(2 * p * r, p + r, np.nan)
    value = float(value)
    return (value, n_undefined) if return_count else value


def _example_ratio(Y, Y_pred, kind, zero_division, return_count):
    y, yp = _check_pair(Y, Y_pred)
    zd = _check_zero_division(zero_division)
    tp, fp, fn = _confusion(y, yp, 1)
    num, den = {
        "precision": (tp, tp + fp),
        "recall": (tp, tp + fn),
        "f1": (2 * tp, 2 * tp + fp + fn),
        "accuracy": (tp, tp + fp + fn),
    }[kind]
    values, undefined = _safe_ratio(num, den, zd, tp + fp + fn)
    return _mean_with_policy(values, undefined, "examples", return_count)


def example_precision(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Example-based precision (section "Metrics").

    .. math::

       P^{\text{example}}=\frac{1}{N}\sum_{i=1}^{N}\frac{|Y_i\cap\hat Y_i|}{|\hat Y_i|}


    Rows with nothing predicted are undefined.

    Examples
    --------
    >>> from medeval.metrics.multilabel import example_precision
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(example_precision(Y, Y_pred), 4)
    0.9167
    """
    return _example_ratio(Y, Y_pred, "precision", zero_division, return_count)


def example_recall(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Example-based recall (section "Metrics").

    .. math::

       R^{\text{example}}=\frac{1}{N}\sum_{i=1}^{N}\frac{|Y_i\cap\hat Y_i|}{|Y_i|}


    Rows with no labels are undefined.

    Examples
    --------
    >>> from medeval.metrics.multilabel import example_recall
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(example_recall(Y, Y_pred), 4)
    0.75
    """
    return _example_ratio(Y, Y_pred, "recall", zero_division, return_count)


def example_f1(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Example-based :math:`F_1`, the mean of the rows' :math:`F_1(\boldsymbol y_i, \hat{\boldsymbol y}_i)`.

    .. math::

       F_1^{\text{example}}=\frac{1}{N}\sum_{i=1}^{N}\frac{2\,|Y_i\cap\hat Y_i|}{|Y_i|+|\hat Y_i|}


    Rows with :math:`|Y_i| = |\hat Y_i| = 0` are undefined.

    mldr's ``fmeasure`` is instead the F of example-averaged precision and recall.

    Examples
    --------
    >>> from medeval.metrics.multilabel import example_f1
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(example_f1(Y, Y_pred), 4)  # (2/3 + 1 + 4/5 + 2/3) / 4
    0.7833
    """
    return _example_ratio(Y, Y_pred, "f1", zero_division, return_count)


def example_accuracy(Y, Y_pred, *, zero_division: ZeroDivision = np.nan, return_count: bool = False):
    r"""Example-based accuracy (Jaccard) :math:`\frac{1}{N} \sum_i |Y_i \cap \hat Y_i| / |Y_i \cup \hat Y_i|`
    [Wu2016].

    Examples
    --------
    >>> from medeval.metrics.multilabel import example_accuracy
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> Y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 1, 0]])
    >>> round(example_accuracy(Y, Y_pred), 4)
    0.6667
    """
    return _example_ratio(Y, Y_pred, "accuracy", zero_division, return_count)


# --------------------------------------------------------------------------------------------
# ranking measures
# --------------------------------------------------------------------------------------------
def _apply_undefined(values, undefined_mask, undefined):
    u = _check_undefined(undefined)
    if not np.isnan(u):
        values = np.where(undefined_mask, u, values)
    return values


def per_label_auc(Y, P, *, ties: AucTies = "correct", undefined: float = np.nan) -> np.ndarray:
    r"""The chapter's binary AUC of every label (shape (K,)).

    .. math::

       \operatorname{AUC}_k=\operatorname{AUC}(\boldsymbol y_{(k)},\boldsymbol p_{(k)})

    ``ties="correct"`` is the chapter's :math:`I(p_u \ge p_v)`; ``"half"`` equals scikit-learn's
    ``roc_auc_score(average=None)``. Labels with no positives or no negatives are
    ``undefined`` (NaN by default).

    Examples
    --------
    >>> from medeval.metrics.multilabel import per_label_auc
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> np.round(per_label_auc(Y, P), 4).tolist()
    [1.0, 1.0, 1.0]
    """
    y, p = _check_label_scores(Y, P)
    _choice(ties, "ties", ("correct", "half", "incorrect"))
    values = roc_auc(y.T, p.T, ties=ties, undefined=np.nan)
    mask = np.isnan(values)
    return _apply_undefined(values, mask, undefined)


def macro_auc(Y, P, *, ties: AucTies = "correct", undefined: float = np.nan, return_count: bool = False):
    r"""Macro AUC; undefined labels excluded (NaN) or substituted.

    .. math::

       \operatorname{AUC}_k=\operatorname{AUC}(\boldsymbol y_{(k)},\boldsymbol p_{(k)}),\qquad
       \operatorname{AUC}^{\text{macro}}=\frac{1}{K}\sum_{k=1}^{K}\operatorname{AUC}_k.


    Examples
    --------
    >>> from medeval.metrics.multilabel import macro_auc
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> round(macro_auc(Y, P), 4)
    1.0
    """
    y, p = _check_label_scores(Y, P)
    _choice(ties, "ties", ("correct", "half", "incorrect"))
    values = roc_auc(y.T, p.T, ties=ties, undefined=np.nan)
    mask = np.isnan(values)
    return _mean_with_policy(_apply_undefined(values, mask, undefined), mask, "labels", return_count)


def per_label_average_precision(Y, P, *, ties: ApTies = "max", undefined: float = np.nan) -> np.ndarray:
    r""":math:`\operatorname{AP}(\boldsymbol y_{(k)},\boldsymbol p_{(k)})` of every label, the terms of
    :math:`\operatorname{mAP}` (:func:`mean_average_precision`); labels with no positives are ``undefined``
    (NaN).

    Examples
    --------
    >>> from medeval.metrics.multilabel import per_label_average_precision
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> np.round(per_label_average_precision(Y, P), 4).tolist()
    [1.0, 1.0, 0.8333]
    """
    y, p = _check_label_scores(Y, P)
    _choice(ties, "ties", ("max", "min", "last", "first"))
    values, mask = _average_precision_last_axis(y.T, p.T, ties)
    return _apply_undefined(values, mask, undefined)


def mean_average_precision(Y, P, *, ties: ApTies = "max", undefined: float = np.nan, return_count: bool = False):
    r"""Mean average precision, :math:`\operatorname{AP}^{\text{macro}}` [Zhu2017].

    .. math::

       \operatorname{mAP}=\frac{1}{K}\sum_{k=1}^{K}\operatorname{AP}(\boldsymbol y_{(k)},\boldsymbol p_{(k)})


    With ``ties="max"`` equals scikit-learn ``average_precision_score(average="macro")`` when
    every label has a positive. Labels without positives: NaN, excluded and counted.

    Examples
    --------
    >>> from medeval.metrics.multilabel import mean_average_precision
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> round(mean_average_precision(Y, P), 4)
    0.9444
    """
    y, p = _check_label_scores(Y, P)
    _choice(ties, "ties", ("max", "min", "last", "first"))
    values, mask = _average_precision_last_axis(y.T, p.T, ties)
    return _mean_with_policy(_apply_undefined(values, mask, undefined), mask, "labels", return_count)


def example_average_precision(Y, P, *, ties: ApTies = "max", undefined: float = np.nan, return_count: bool = False):
    r"""Example-based average precision (section "Metrics", with :math:`\boldsymbol p_i` for ranking measures).

    .. math::

       \operatorname{AP}^{\text{example}}=\frac{1}{N}\sum_{i=1}^{N}\operatorname{AP}(\boldsymbol y_i,\boldsymbol p_i)


    ``ties="max"`` with ``undefined=1.0`` is scikit-learn's
    ``label_ranking_average_precision_score``; ``ties="last"`` with ``undefined=1.0`` is mldr's
    ``average_precision``. Rows with no labels (54% of ChestX-ray14) are undefined: by default
    excluded and counted.

    Examples
    --------
    >>> from medeval.metrics.multilabel import example_average_precision
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> round(example_average_precision(Y, P), 4)
    0.9167
    """
    y, p = _check_label_scores(Y, P)
    _choice(ties, "ties", ("max", "min", "last", "first"))
    values, mask = _average_precision_last_axis(y, p, ties)
    return _mean_with_policy(_apply_undefined(values, mask, undefined), mask, "examples", return_count)


def example_auc(Y, P, *, ties: AucTies = "correct", undefined: float = np.nan, return_count: bool = False):
    r""":math:`\operatorname{AUC}^{\text{example}} = \frac{1}{N} \sum_i \operatorname{AUC}(\boldsymbol y_i,
    \boldsymbol p_i)`; rows with no positive or no negative label undefined.

    mldr's ``example_auc`` substitutes 0.5 (``undefined=0.5``) and uses pROC (``ties="half"``).

    Examples
    --------
    >>> from medeval.metrics.multilabel import example_auc
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> round(example_auc(Y, P), 4)
    0.75
    """
    y, p = _check_label_scores(Y, P)
    _choice(ties, "ties", ("correct", "half", "incorrect"))
    values = roc_auc(y, p, ties=ties, undefined=np.nan)
    mask = np.isnan(values)
    return _mean_with_policy(_apply_undefined(values, mask, undefined), mask, "examples", return_count)


def one_error(
    Y, P, *, ties: Literal["expected", "first"] = "expected", undefined: float = np.nan, return_count: bool = False
):
    """One-error: the fraction of examples whose top-ranked label is not a true label [Wu2016].

    Ties for the top score: ``"expected"`` (default) counts the fraction of tied top labels that
    are false (the expectation under random tie breaking); ``"first"`` takes the first tied
    label (mldr's ``which.max``). Rows with no labels are undefined (mldr counts them as errors:
    ``undefined=1.0``).

    Examples
    --------
    >>> from medeval.metrics.multilabel import one_error
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> one_error(Y, P)
    0.0
    """
    y, p = _check_label_scores(Y, P)
    _choice(ties, "ties", ("expected", "first"))
    if ties == "first":
        top = np.argmax(p, axis=1)
        values = 1.0 - y[np.arange(y.shape[0]), top]
    else:
        at_top = p == p.max(axis=1, keepdims=True)
        values = np.count_nonzero(at_top & ~y, axis=1) / np.count_nonzero(at_top, axis=1)
    mask = ~np.any(y, axis=1)
    values = np.where(mask, np.nan, values)
    return _mean_with_policy(_apply_undefined(values, mask, undefined), mask, "examples", return_count)


def coverage_error(Y, P, *, undefined: float = np.nan, return_count: bool = False):
    r"""Coverage (section "Metrics"), ranks with max-rank ties.

    .. math::

       \operatorname{coverage}=\frac{1}{N}\sum_{i=1}^{N}\max_{\lambda_k\in Y_i}\operatorname{rank}(\boldsymbol p_i)_k


    How far down the ranking one must go to cover every true label, as in scikit-learn
    ``coverage_error`` (Zhang and Zhou's coverage, used by mldr, is this minus one, with
    ordinal ranks). Rows with no labels are undefined (scikit-learn: 0, ``undefined=0.0``).

    Examples
    --------
    >>> from medeval.metrics.multilabel import coverage_error
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> coverage_error(Y, P)
    2.25
    """
    y, p = _check_label_scores(Y, P)
    st = _tie_group_stats(y, p)
    k = y.shape[1]
    values = np.where(st["ys"], k - st["start"], 0).max(axis=1).astype(np.float64)
    mask = st["n_pos"] == 0
    values = np.where(mask, np.nan, values)
    return _mean_with_policy(_apply_undefined(values, mask, undefined), mask, "examples", return_count)


def ranking_loss(Y, P, *, undefined: float = np.nan, return_count: bool = False):
    r"""Ranking loss (section "Metrics").

    .. math::

       \operatorname{rloss}=\frac{1}{N}\sum_{i=1}^{N}
       \frac{\bigl|\{(u,v):\lambda_u\in Y_i,\ \lambda_v\in\bar Y_i,\ p_{iu}\le p_{iv}\}\bigr|}{|Y_i|\,|\bar Y_i|}.

    Tied pairs count as mis-ordered (scikit-learn ``label_ranking_loss``, mldr); it equals
    :math:`1 - \operatorname{AUC}^{\text{example}}` with ``ties="correct"`` minus the tie fraction. Rows with no positive or no
    negative label are undefined (scikit-learn: 0, ``undefined=0.0``).

    Examples
    --------
    >>> from medeval.metrics.multilabel import ranking_loss
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> round(ranking_loss(Y, P), 4)
    0.25
    """
    y, p = _check_label_scores(Y, P)
    auc_strict = roc_auc(y, p, ties="incorrect", undefined=np.nan)
    mask = np.isnan(auc_strict)
    values = 1.0 - auc_strict
    return _mean_with_policy(_apply_undefined(values, mask, undefined), mask, "examples", return_count)


# --------------------------------------------------------------------------------------------
# per-label threshold tuning
# --------------------------------------------------------------------------------------------
def _cut_between(upper: float, lower: float | None) -> float:
    """A threshold t with ``lower <= t < upper`` (``t < upper`` alone without ``lower``): the midpoint where it
    lies strictly below ``upper``, else the largest double below ``upper``."""
    below = np.nextafter(upper, -np.inf)
    if lower is None:
        return float(below)
    middle = 0.5 * upper + 0.5 * lower  # halves first: (upper + lower) overflows above ~9e307
    return float(max(middle, lower)) if middle < upper else float(below)


def f1_optimal_thresholds(Y, P, *, undefined: float = np.nan) -> np.ndarray:
    r"""Per-label thresholds maximising :math:`F_1` on the given (validation) data.

    .. math::

       t_k=\arg\max_{t}\,F_1\bigl(\boldsymbol y^{\text{val}}_{(k)},\,I(\boldsymbol p^{\text{val}}_{(k)}>t)\bigr)

    Every distinct cut of the sorted scores is tried; :math:`t_k` is the midpoint between the lowest
    score predicted positive, :math:`a`, and the next lower score, :math:`b` (so the strict rule :math:`a > t` of
    ``binarize`` reproduces the cut), computed as :math:`a/2 + b/2` so that it cannot overflow. Where the
    midpoint rounds onto :math:`a` (:math:`a` and :math:`b` adjacent doubles) :math:`t_k` is the largest double
    below :math:`a`, i.e. :math:`b`; with no lower score (every example predicted positive) it is the largest
    double below :math:`a`. So ``binarize(P, t)``
    always reproduces the chosen cut. Labels without positives have no optimum: ``undefined`` (NaN by
    default; the caller substitutes explicitly, e.g. 0.5, and reports it).

    Examples
    --------
    >>> from medeval.metrics.multilabel import f1_optimal_thresholds
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> np.round(f1_optimal_thresholds(Y, P), 4).tolist()
    [0.35, 0.7, 0.3]
    """
    y, p = _check_label_scores(Y, P)
    n, k = y.shape
    out = np.full(k, np.nan)
    for j in range(k):
        order = np.argsort(-p[:, j], kind="stable")
        ps = p[order, j]
        ys = y[order, j]
        n_pos = int(ys.sum())
        if n_pos == 0:
            continue
        last_of_group = np.r_[ps[1:] != ps[:-1], True]
        tp = np.cumsum(ys)[last_of_group]
        r = np.flatnonzero(last_of_group) + 1  # number predicted positive at each cut
        f1 = 2 * tp / (n_pos + r)
        best = int(np.argmax(f1))
        cut = r[best]
        out[j] = _cut_between(ps[cut - 1], ps[cut] if cut < n else None)
    return _apply_undefined(out, np.isnan(out), undefined)


# --------------------------------------------------------------------------------------------
# everything at once (shares the sorting work)
# --------------------------------------------------------------------------------------------
def multilabel_metrics(
    Y,
    P,
    *,
    threshold=0.5,
    inclusive: bool = False,
    auc_ties: AucTies = "correct",
    zero_division: ZeroDivision = np.nan,
) -> dict[str, float | np.ndarray]:
    """All measures of this module for scores ``P`` and threshold ``threshold``.

    Returns a dict: bipartition measures (hloss, subset accuracy, F1 micro/macro in both
    conventions, example-based precision/recall/F1/accuracy), ranking measures (per-label AUC,
    macro AUC, per-label AP, mAP, AP^example, AUC^example, one-error, coverage, ranking loss),
    and ``n_undefined_*`` counts for every averaged measure. Undefined items follow the module's
    default policy (NaN, excluded, counted).

    Examples
    --------
    >>> from medeval.metrics.multilabel import multilabel_metrics
    >>> Y = np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    >>> P = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1], [0.7, 0.6, 0.5], [0.4, 0.9, 0.5]])
    >>> m = multilabel_metrics(Y, P)
    >>> round(m["hamming_loss"], 4), round(m["f1_micro"], 4), round(m["macro_auc"], 4)
    (0.25, 0.7692, 1.0)
    """
    y, p = _check_label_scores(Y, P)
    yp = binarize(p, threshold, inclusive=inclusive)
    out: dict[str, float | np.ndarray] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        out["hamming_loss"] = hamming_loss(y, yp)
        out["subset_accuracy"] = subset_accuracy(y, yp)
        out["f1_micro"], out["n_undefined_f1_micro"] = f1_micro(y, yp, zero_division=zero_division, return_count=True)
        out["f1_macro"], out["n_undefined_f1_macro"] = f1_macro(y, yp, zero_division=zero_division, return_count=True)
        out["f1_macro_f_of_macro_pr"], out["n_undefined_f1_macro_f_of_macro_pr"] = f1_macro(
            y, yp, convention="f_of_macro_pr", zero_division=zero_division, return_count=True
        )
        for name, fn in (
            ("example_precision", example_precision),
            ("example_recall", example_recall),
            ("example_f1", example_f1),
            ("example_accuracy", example_accuracy),
        ):
            out[name], out[f"n_undefined_{name}"] = fn(y, yp, zero_division=zero_division, return_count=True)
        # label-wise ranking measures share one column sort (the AUC through roc_auc's own core)
        st = _tie_group_stats(y.T, p.T)
        auc, auc_mask = _auc_from_stats(st, auc_ties)
        ap, ap_mask = _ap_max_from_stats(st)
        out["per_label_auc"] = auc
        out["macro_auc"], out["n_undefined_macro_auc"] = _mean_with_policy(auc, auc_mask, "labels", True)
        out["per_label_ap"] = ap
        out["mAP"], out["n_undefined_mAP"] = _mean_with_policy(ap, ap_mask, "labels", True)
        # example-wise ranking measures share one row sort
        sr = _tie_group_stats(y, p)
        ap_ex, ap_ex_mask = _ap_max_from_stats(sr)
        out["example_ap"], out["n_undefined_example_ap"] = _mean_with_policy(ap_ex, ap_ex_mask, "examples", True)
        auc_ex, auc_ex_mask = _auc_from_stats(sr, auc_ties)
        out["example_auc"], out["n_undefined_example_auc"] = _mean_with_policy(auc_ex, auc_ex_mask, "examples", True)
        strict, strict_mask = _auc_from_stats(sr, "incorrect")
        out["ranking_loss"], out["n_undefined_ranking_loss"] = _mean_with_policy(1.0 - strict, strict_mask, "examples", True)
        k = y.shape[1]
        cov = np.where(sr["ys"], k - sr["start"], 0).max(axis=1).astype(np.float64)
        empty = sr["n_pos"] == 0
        out["coverage_error"], out["n_undefined_coverage_error"] = _mean_with_policy(
            np.where(empty, np.nan, cov), empty, "examples", True
        )
        out["one_error"], out["n_undefined_one_error"] = one_error(y, p, return_count=True)
    return out
