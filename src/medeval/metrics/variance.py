"""Variance estimators for the performance of a validation strategy.

Reference: A. F. Mendelson, M. A. Zuluaga, L. Thurfjell, B. F. Hutton, S. Ourselin, "The empirical
variance estimator for computer aided diagnosis: lessons for algorithm validation" (MICCAI 2014),
following Nadeau & Bengio, "Inference for the generalization error", Machine Learning 52 (2003).

Vocabulary. A *validation strategy* (10-fold CV, 10 x 10-fold CV, leave-one-out, hold-out, ...) run on
one subset of the data gives one performance estimate ``x`` (accuracy, sensitivity, AUC, ...). The
*empirical variance estimator* (EVE) runs the strategy on the two members of each of R pairs of
disjoint, equally sized, randomly drawn subsets and averages the two-sample variances (Eq. 1).

All functions take array-likes (numpy arrays, lists or torch tensors, also on the GPU or requiring grad;
converted by ``medeval.metrics._arrays.to_numpy``) and return floats or small dataclasses. Edge-case
policy: non-finite scores, empty inputs, shape mismatches and out-of-range arguments raise ``ValueError``
naming the parameter; nothing is silently replaced. This module imports nothing from medeval except
``medeval.metrics._arrays`` and fits no model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from scipy import stats

from medeval.metrics._arrays import to_numpy

__all__ = [
    "EVE_TARGETS",
    "empirical_variance_estimate",
    "empirical_variance_estimate_standard_error",
    "pair_variances",
    "naive_empirical_variance_estimate",
    "naive_foldwise_variance",
    "naive_binomial_variance",
    "sample_variance_standard_error",
    "normal_confidence_interval",
    "eve_confidence_interval",
    "PairedComparison",
    "paired_comparison",
    "StrategyErrors",
    "strategy_bias_variance_mse",
]

EveTarget = Literal["half_size", "full_size", "mean_of_halves"]
EVE_TARGETS: tuple[str, ...] = ("half_size", "full_size", "mean_of_halves")


def _as_finite_1d(values, name: str, min_size: int = 1) -> np.ndarray:
    array = to_numpy(values, dtype=np.float64)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one score per subset), got shape {array.shape}")
    if array.size < min_size:
        raise ValueError(f"{name} needs at least {min_size} value(s), got {array.size}")
    if not np.all(np.isfinite(array)):
        bad = int(np.sum(~np.isfinite(array)))
        raise ValueError(f"{name} contains {bad} non-finite value(s); scores must be finite")
    return array


def _pair_arrays(scores_first, scores_second) -> tuple[np.ndarray, np.ndarray]:
    first = _as_finite_1d(scores_first, "scores_first")
    second = _as_finite_1d(scores_second, "scores_second")
    if first.shape != second.shape:
        raise ValueError(
            "scores_first and scores_second must have the same length (one value per subset pair), "
            f"got {first.size} and {second.size}"
        )
    return first, second


def _check_target(target: str) -> None:
    if target not in EVE_TARGETS:
        raise ValueError(f"target must be one of {EVE_TARGETS}, got {target!r}")


def pair_variances(scores_first, scores_second) -> np.ndarray:
    r"""Two-sample unbiased variance of every disjoint pair, the summand of Eq. (1).

    For pair :math:`r` with scores :math:`x_r^{(1)}, x_r^{(2)}` and mean :math:`\bar{x}_r`, the summand
    :math:`v_r = \frac{1}{n-1}\sum_{i=1}^{n}\bigl(x_r^{(i)}-\bar{x}_r\bigr)^2 = \tfrac12\bigl(x_r^{(1)}-x_r^{(2)}\bigr)^2`
    of

    .. math::

       \begin{aligned}
       \mathcal{V} &= \frac{1}{R}\sum_{r=1}^{R}\left(\frac{1}{n-1}\sum_{i=1}^{n}\bigl(x_r^{(i)}-\bar{x}_r\bigr)^2\right),
       \quad \text{where } n = 2,\\
       &= \frac{1}{2R}\sum_{r=1}^{R}\bigl(x_r^{(1)}-x_r^{(2)}\bigr)^2 .
       \end{aligned}

    Examples
    --------
    >>> from medeval.metrics.variance import pair_variances
    >>> first = [0.80, 0.70, 0.75]
    >>> second = [0.78, 0.74, 0.71]  # R = 3 disjoint subset pairs
    >>> np.round(pair_variances(first, second), 6).tolist()  # (x1 - x2)^2 / 2
    [0.0002, 0.0008, 0.0008]
    """
    first, second = _pair_arrays(scores_first, scores_second)
    return 0.5 * (first - second) ** 2


def empirical_variance_estimate(scores_first, scores_second, *, target: EveTarget = "half_size") -> float:
    r"""Empirical variance estimator (EVE) over R disjoint subset pairs, Eq. (1) of Mendelson et al.

    .. math::

       \begin{aligned}
       \mathcal{V} &= \frac{1}{R}\sum_{r=1}^{R}\left(\frac{1}{n-1}\sum_{i=1}^{n}\bigl(x_r^{(i)}-\bar{x}_r\bigr)^2\right),
       \quad \text{where } n = 2,\\
       &= \frac{1}{2R}\sum_{r=1}^{R}\bigl(x_r^{(1)}-x_r^{(2)}\bigr)^2 .
       \end{aligned}

    where :math:`x_r^{(1)}, x_r^{(2)}` are the performances of the whole validation strategy on the two disjoint
    subsets of pair :math:`r` (``scores_first[r]``, ``scores_second[r]``).

    The paper (Section 2) gives two uses of :math:`\mathcal{V}` when N examples are available and the subsets
    have N/2:

    * ``target="half_size"`` (default): :math:`\mathcal{V}`, an unbiased estimate of the variance of the strategy's
      performance on a subset of the size used (scheme 2, the one the paper's experiments use);
    * ``target="full_size"``: :math:`\mathcal{V}` again, read as a *conservative* estimate of the variance on the full N
      (scheme 1; needs only that performance becomes more stable at larger N [Nadeau & Bengio]);
    * ``target="mean_of_halves"``: :math:`\tfrac12\mathcal{V}`, an unbiased estimate of the variance of the mean of
      the two half-size estimates (scheme 2):

      .. math::

         \operatorname{E}\bigl[\tfrac12\,\mathcal{V}\bigr] = \operatorname{Var}\Bigl(\tfrac12\bigl(x^{(1)}+x^{(2)}\bigr)\Bigr) .

    Edge cases: non-finite scores, empty or mismatched inputs raise ``ValueError``. R = 1 is allowed
    (an unbiased but very noisy estimate).

    Examples
    --------
    >>> from medeval.metrics.variance import empirical_variance_estimate
    >>> first = [0.80, 0.70, 0.75]
    >>> second = [0.78, 0.74, 0.71]  # R = 3 disjoint subset pairs
    >>> round(empirical_variance_estimate(first, second), 6)  # (0.02^2 + 0.04^2 + 0.04^2) / 6
    0.0006
    >>> round(empirical_variance_estimate(first, second, target="mean_of_halves"), 6)
    0.0003
    """
    _check_target(target)
    value = float(np.mean(pair_variances(scores_first, scores_second)))
    return 0.5 * value if target == "mean_of_halves" else value


def empirical_variance_estimate_standard_error(
    scores_first, scores_second, *, target: EveTarget = "half_size"
) -> float:
    r"""Monte Carlo standard error of EVE over the R pairs: :math:`\operatorname{SD}(v_r)/\sqrt{R}` (ddof = 1).

    This is the sampling error of the average in Eq. (1) treating the R pairs as independent
    (true when each pair is drawn from fresh data; approximate when pairs reuse a finite pool).
    Requires R ≥ 2, else ``ValueError``.

    Examples
    --------
    >>> from medeval.metrics.variance import empirical_variance_estimate_standard_error
    >>> first = [0.80, 0.70, 0.75]
    >>> second = [0.78, 0.74, 0.71]  # R = 3 disjoint subset pairs
    >>> round(empirical_variance_estimate_standard_error(first, second), 6)
    0.0002
    """
    _check_target(target)
    variances = pair_variances(scores_first, scores_second)
    if variances.size < 2:
        raise ValueError("scores_first/scores_second need at least 2 pairs for a standard error")
    se = float(np.std(variances, ddof=1) / np.sqrt(variances.size))
    return 0.5 * se if target == "mean_of_halves" else se


def naive_empirical_variance_estimate(scores) -> float:
    r"""Naive empirical variance estimate (NEVE), Section 3 of Mendelson et al.

    .. math::

       \mathrm{NEVE} = \frac{1}{S-1}\sum_{s=1}^{S}\bigl(x_s-\bar{x}\bigr)^2 .

    NEVE treats the performances :math:`x_1, \dots, x_S` on :math:`S` randomly selected subsets (drawn from all
    available data and allowed to overlap) as independent and returns their sample variance (above). Overlap makes
    the scores positively correlated, so :math:`\mathbb{E}[\mathrm{NEVE}] = \sigma^2 - \overline{\mathrm{cov}}
    \le \sigma^2`: NEVE is
    biased down when the subsets are a large fraction of the pool. Needs S ≥ 2 finite scores, else
    ``ValueError``.

    Examples
    --------
    >>> from medeval.metrics.variance import naive_empirical_variance_estimate
    >>> round(naive_empirical_variance_estimate([0.80, 0.70, 0.75, 0.78, 0.74, 0.71]), 6)
    0.001507
    """
    values = _as_finite_1d(scores, "scores", min_size=2)
    return float(np.var(values, ddof=1))


def naive_foldwise_variance(fold_scores) -> float:
    r"""Naive fold-wise variance model (NFW), Section 3 of Mendelson et al.

    .. math::

       \mathrm{NFW} = \frac{1}{S}\sum_{s=1}^{S}\frac{1}{K(K-1)}\sum_{k=1}^{K}\bigl(a_{s,k}-\bar{a}_s\bigr)^2 .

    Treats the performance :math:`a_{s,1}, \dots, a_{s,K}` in each of the :math:`K` folds of subset :math:`s` as
    independent observations, so the variance of their mean is estimated by :math:`s^2(a_s)/K`; the paper takes
    "the mean variance estimate across all subsets used" (above). The per-subset formula is our reading (the paper gives it in words only). For repeated K-fold
    pass all M·K folds of a subset as one row (every fold treated as independent).

    ``fold_scores``: array (S, K) with K ≥ 2, or (K,) for one subset. Non-finite values raise
    ``ValueError`` (use a metric that is defined on every fold).

    Examples
    --------
    >>> from medeval.metrics.variance import naive_foldwise_variance
    >>> round(naive_foldwise_variance([[0.8, 0.6, 0.7], [0.9, 0.7, 0.8]]), 6)  # s^2 / K = 0.01 / 3
    0.003333
    """
    array = to_numpy(fold_scores, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2:
        raise ValueError(f"fold_scores must have shape (n_subsets, n_folds), got {array.shape}")
    if array.shape[0] < 1 or array.shape[1] < 2:
        raise ValueError(f"fold_scores needs at least 1 subset and 2 folds, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(
            f"fold_scores contains {int(np.sum(~np.isfinite(array)))} non-finite value(s); "
            "the fold-wise model needs a metric defined on every fold"
        )
    n_folds = array.shape[1]
    return float(np.mean(np.var(array, axis=1, ddof=1) / n_folds))


def naive_binomial_variance(performance, n_items) -> float | np.ndarray:
    r"""Naive binomial variance model, Section 3.2 of Mendelson et al.

    Assumes the results on the :math:`n` items are independent Bernoulli trials with success probability
    :math:`p` (the mean performance):

    .. math::

       \mathrm{Var}_{\mathrm{bin}} = \frac{p(1-p)}{n} .

    For a balanced subset of :math:`n_c` per class, :math:`n = 2 n_c`. Its square root is the standard deviation
    of a hold-out accuracy :math:`\hat p` on :math:`n` cases,
    :math:`\operatorname{SD}(\hat p) = \sqrt{\frac{p\,(1-p)}{n}}`.

    ``performance`` must lie in [0, 1] and ``n_items`` be ≥ 1, else ``ValueError``. Vectorised over
    array inputs (returns an array then).

    Examples
    --------
    >>> from medeval.metrics.variance import naive_binomial_variance
    >>> round(naive_binomial_variance(0.8, 100), 6)  # 0.8 * 0.2 / 100
    0.0016
    """
    p = to_numpy(performance, dtype=np.float64)
    n = to_numpy(n_items, dtype=np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError("performance must be finite and within [0, 1]")
    if not np.all(np.isfinite(n)) or np.any(n < 1):
        raise ValueError("n_items must be finite and >= 1")
    out = p * (1.0 - p) / n
    return float(out) if out.ndim == 0 else out


def sample_variance_standard_error(values) -> float:
    r"""Standard error of the sample variance :math:`s^2` of :math:`R` i.i.d. values (no normality assumed).

    .. math::

       \operatorname{Var}(s^2) = \frac{1}{R}\Bigl(m_4 - \sigma^4\,\frac{R-3}{R-1}\Bigr)

    with :math:`m_4` the fourth central moment and :math:`\sigma^2` estimated by :math:`s^2` (plug-in). Used for
    the Monte Carlo error of a "true" variance computed from fresh draws, such as the chapter's

    .. math::

       \hat\sigma^2(n_c) = \frac{1}{D-1}\sum_{d=1}^{D}\bigl(x_d-\bar{x}\bigr)^2,\qquad
       \text{relative bias} = \frac{\overline{\mathcal{V}}}{\hat\sigma^2(n_c)} - 1 .

    Needs R ≥ 4, else ``ValueError``.

    Examples
    --------
    >>> from medeval.metrics.variance import sample_variance_standard_error
    >>> round(sample_variance_standard_error([1.0, 2.0, 3.0, 4.0, 5.0]), 4)
    0.8573
    """
    array = _as_finite_1d(values, "values", min_size=4)
    n = array.size
    centred = array - array.mean()
    s2 = float(np.var(array, ddof=1))
    m4 = float(np.mean(centred**4))
    var_s2 = (m4 - s2**2 * (n - 3) / (n - 1)) / n
    return float(np.sqrt(max(var_s2, 0.0)))


def normal_confidence_interval(estimate: float, variance: float, level: float = 0.95) -> tuple[float, float]:
    r"""Normal-theory interval :math:`\text{estimate} \pm z_{1-\alpha/2}\sqrt{\text{variance}}`,
    :math:`\alpha = 1 - \text{level}`; with the EVE of the chapter:

    .. math::

       \bar{x} \pm z_{1-\alpha/2}\sqrt{\tfrac12\,\mathcal{V}},\qquad
       \bar{x} = \frac{1}{2R}\sum_{r=1}^{R}\bigl(x_r^{(1)}+x_r^{(2)}\bigr)

    The paper argues that an unbiased variance "is able to provide statistically convincing
    comparison and confidence intervals" but writes no formula; this is the standard
    normal-approximation interval of Nadeau & Bengio. ``variance`` must be ≥ 0 and finite,
    ``level`` in (0, 1), else ``ValueError``.

    Examples
    --------
    >>> from medeval.metrics.variance import normal_confidence_interval
    >>> low, high = normal_confidence_interval(0.75, 0.0004)  # 0.75 +- 1.96 * 0.02
    >>> round(low, 4), round(high, 4)
    (0.7108, 0.7892)
    """
    if not np.isfinite(estimate):
        raise ValueError("estimate must be finite")
    if not np.isfinite(variance) or variance < 0:
        raise ValueError(f"variance must be finite and >= 0, got {variance}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    half_width = float(stats.norm.ppf(0.5 + level / 2) * np.sqrt(variance))
    return float(estimate - half_width), float(estimate + half_width)


def eve_confidence_interval(
    scores_first, scores_second, *, level: float = 0.95, target: EveTarget = "mean_of_halves"
) -> tuple[float, float, float]:
    r"""Confidence interval for the expected performance from R disjoint subset pairs.

    .. math::

       \bar{x} \pm z_{1-\alpha/2}\sqrt{\tfrac12\,\mathcal{V}},\qquad
       \bar{x} = \frac{1}{2R}\sum_{r=1}^{R}\bigl(x_r^{(1)}+x_r^{(2)}\bigr)

    Centre: the mean :math:`\bar{x}` of all 2R scores. Variance (Section 2 of Mendelson et al.):

    * ``"mean_of_halves"`` (default, scheme 2): :math:`\tfrac12\mathcal{V}`, as above — the centre is read as the mean of two half-size
      estimates; the interval is for the expected performance at the subset size;
    * ``"half_size"``: :math:`\mathcal{V}` — interval for a single run at the subset size;
    * ``"full_size"``: :math:`\mathcal{V}` — conservative interval for a run on the full N (scheme 1).

    Averaging over R overlapping pairs reduces the variance of the centre below :math:`\tfrac12\mathcal{V}` by an unknown
    amount, so the interval is conservative in that respect. Returns (centre, low, high).

    Examples
    --------
    >>> from medeval.metrics.variance import eve_confidence_interval
    >>> first = [0.80, 0.70, 0.75]
    >>> second = [0.78, 0.74, 0.71]  # R = 3 disjoint subset pairs
    >>> centre, low, high = eve_confidence_interval(first, second)
    >>> round(centre, 4), round(low, 4), round(high, 4)
    (0.7467, 0.7127, 0.7806)
    """
    first, second = _pair_arrays(scores_first, scores_second)
    variance = empirical_variance_estimate(first, second, target=target)
    centre = float(np.mean(np.concatenate([first, second])))
    low, high = normal_confidence_interval(centre, variance, level)
    return centre, low, high


@dataclass(frozen=True)
class PairedComparison:
    r"""Result of :func:`paired_comparison` (A minus B).

    .. math::

       \mathcal{V}_d = \frac{1}{2R}\sum_{r=1}^{R}\bigl(d_r^{(1)}-d_r^{(2)}\bigr)^2,\qquad
       z = \frac{\bar{d}}{\sqrt{\mathcal{V}_d/2}},\qquad p = 2\bigl(1-\Phi(|z|)\bigr)
    """

    mean_difference: float
    variance: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    n_pairs: int
    target: str

    def to_dict(self) -> dict:
        return asdict(self)


def paired_comparison(
    first_a, second_a, first_b, second_b, *, level: float = 0.95, target: EveTarget = "mean_of_halves"
) -> PairedComparison:
    r"""Compare algorithms A and B evaluated on the *same* disjoint subset pairs (and same folds).

    .. math::

       \mathcal{V}_d = \frac{1}{2R}\sum_{r=1}^{R}\bigl(d_r^{(1)}-d_r^{(2)}\bigr)^2,\qquad
       z = \frac{\bar{d}}{\sqrt{\mathcal{V}_d/2}},\qquad p = 2\bigl(1-\Phi(|z|)\bigr)

    The paired difference :math:`d_r^{(i)} = x_{A,r}^{(i)} - x_{B,r}^{(i)}` is itself a performance statistic, so
    EVE (Eq. 1) applies to it (:math:`\mathcal{V}_d` above). With :math:`\bar d` the mean of the 2R differences and
    :math:`\mathrm{Var} = \tfrac12\mathcal{V}_d` (``target="mean_of_halves"``, scheme 2, as above) or
    :math:`\mathcal{V}_d` (scheme 1, conservative)

    .. math::

        z = \bar d / \sqrt{\mathrm{Var}}, \quad p = 2\,(1 - \Phi(|z|)), \quad
        \mathrm{CI} = \bar d \pm z_{1-\alpha/2} \sqrt{\mathrm{Var}}

    This is the normal-theory test the paper alludes to ("statistically convincing comparison"),
    written out by us. If V_d = 0 (identical differences on every subset) z is ±inf (or NaN when
    d̄ = 0) and the p-value 0 (or 1); this is reported, not hidden.

    Examples
    --------
    >>> from medeval.metrics.variance import paired_comparison
    >>> first = [0.80, 0.70, 0.75]
    >>> second = [0.78, 0.74, 0.71]  # R = 3 disjoint subset pairs
    >>> res = paired_comparison(first, second, [0.76, 0.66, 0.73], [0.75, 0.71, 0.66])
    >>> print(f"d={res.mean_difference:.4f} z={res.z:.3f} p={res.p_value:.4f}")
    d=0.0350 z=3.656 p=0.0003
    """
    a1, a2 = _pair_arrays(first_a, second_a)
    b1, b2 = _pair_arrays(first_b, second_b)
    if a1.shape != b1.shape:
        raise ValueError(f"algorithm A has {a1.size} pairs but algorithm B has {b1.size}; they must share pairs")
    d1, d2 = a1 - b1, a2 - b2
    variance = empirical_variance_estimate(d1, d2, target=target)
    mean_difference = float(np.mean(np.concatenate([d1, d2])))
    if variance > 0:
        z = mean_difference / np.sqrt(variance)
        p_value = float(2 * stats.norm.sf(abs(z)))
    else:
        z = np.nan if mean_difference == 0 else np.sign(mean_difference) * np.inf
        p_value = 1.0 if mean_difference == 0 else 0.0
    low, high = normal_confidence_interval(mean_difference, variance, level)
    return PairedComparison(mean_difference, variance, float(z), p_value, low, high, int(a1.size), target)


@dataclass(frozen=True)
class StrategyErrors:
    r"""Bias, variance and MSE of a strategy as an estimator of the expected reference performance.

    .. math::

       \frac{\sqrt{\mathcal{V}_s}}{\sqrt{\mathcal{V}_{\mathrm{LOO}}}},\qquad
       \frac{\mathrm{bias}_s}{\sqrt{\mathcal{V}_{\mathrm{LOO}}}},\qquad
       \frac{\mathrm{MSE}_s}{\mathcal{V}_{\mathrm{LOO}}} .
    """

    mean: float
    bias: float
    variance: float
    mse: float
    reference_variance: float
    sd_ratio: float
    bias_ratio: float
    mse_ratio: float

    def to_dict(self) -> dict:
        return asdict(self)


def strategy_bias_variance_mse(first, second, reference_first, reference_second) -> StrategyErrors:
    r"""Bias, variance and MSE of a validation strategy relative to leave-one-out (Sec. 3.3, Fig. 3).

    The strategy :math:`s` and the reference (leave-one-out) are run on the same R disjoint subset pairs.
    Under the paper's normality assumptions, as an estimator of :math:`\theta = \mathrm{E}[x_{\mathrm{LOO}}]`
    (means over the same 2R subsets; :math:`\mathcal{V}_s` is EVE, Eq. 1):

    .. math::

       \mathrm{bias}_s = \bar{x}_s - \bar{x}_{\mathrm{LOO}},\qquad
       \mathrm{var}_s = \mathcal{V}_s,\qquad
       \mathrm{MSE}_s = \mathrm{var}_s + \mathrm{bias}_s^2 ,

    .. math::

       \frac{\sqrt{\mathcal{V}_s}}{\sqrt{\mathcal{V}_{\mathrm{LOO}}}},\qquad
       \frac{\mathrm{bias}_s}{\sqrt{\mathcal{V}_{\mathrm{LOO}}}},\qquad
       \frac{\mathrm{MSE}_s}{\mathcal{V}_{\mathrm{LOO}}} .

    Fig. 3 normalises "by those of the leave one out validation itself": we report ``sd_ratio``, ``bias_ratio`` and
    ``mse_ratio``, the three ratios above (LOO's own MSE is its variance; because LOO has no bias of its own,
    dividing the bias by :math:`\sqrt{\mathcal{V}_{\mathrm{LOO}}}` is our reading). A zero reference variance
    makes the ratios NaN.

    Examples
    --------
    >>> from medeval.metrics.variance import strategy_bias_variance_mse
    >>> first = [0.80, 0.70, 0.75]
    >>> second = [0.78, 0.74, 0.71]  # R = 3 disjoint subset pairs
    >>> e = strategy_bias_variance_mse(first, second, [0.77, 0.70, 0.72], [0.76, 0.71, 0.70])
    >>> print(f"bias={e.bias:.4f} variance={e.variance:.6f} mse={e.mse:.6f} sd_ratio={e.sd_ratio:.3f}")
    bias=0.0200 variance=0.000600 mse=0.001000 sd_ratio=2.449
    """
    s1, s2 = _pair_arrays(first, second)
    r1, r2 = _pair_arrays(reference_first, reference_second)
    if s1.shape != r1.shape:
        raise ValueError(f"strategy has {s1.size} pairs but reference has {r1.size}; they must share pairs")
    mean = float(np.mean(np.concatenate([s1, s2])))
    bias = mean - float(np.mean(np.concatenate([r1, r2])))
    variance = empirical_variance_estimate(s1, s2)
    reference_variance = empirical_variance_estimate(r1, r2)
    mse = variance + bias**2
    if reference_variance > 0:
        sd_ratio = float(np.sqrt(variance / reference_variance))
        bias_ratio = float(bias / np.sqrt(reference_variance))
        mse_ratio = float(mse / reference_variance)
    else:
        sd_ratio = bias_ratio = mse_ratio = float("nan")
    return StrategyErrors(mean, bias, variance, mse, reference_variance, sd_ratio, bias_ratio, mse_ratio)
