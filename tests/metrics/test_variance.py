"""EVE and the naive variance models: formula identities, invariances and bad input."""

import numpy as np
import pytest
from scipy import stats

from medeval.metrics import variance as V


@pytest.fixture
def pairs():
    rng = np.random.default_rng(0)
    return rng.uniform(0.6, 0.9, 50), rng.uniform(0.6, 0.9, 50)


def test_eve_equals_mean_of_two_sample_variances(pairs):
    x1, x2 = pairs
    per_pair = np.var(np.stack([x1, x2]), axis=0, ddof=1)  # Eq. (1) with n = 2
    assert V.empirical_variance_estimate(x1, x2) == pytest.approx(per_pair.mean(), rel=1e-12)
    assert V.empirical_variance_estimate(x1, x2) == pytest.approx(np.mean((x1 - x2) ** 2) / 2, rel=1e-12)


def test_eve_targets_and_shift_invariance(pairs):
    """(Symmetry in the two subsets, the order of the pairs and R = 1: test_common.py.)"""
    x1, x2 = pairs
    v = V.empirical_variance_estimate(x1, x2)
    assert V.empirical_variance_estimate(x1, x2, target="full_size") == v
    assert V.empirical_variance_estimate(x1, x2, target="mean_of_halves") == pytest.approx(v / 2)
    assert V.empirical_variance_estimate(x1 + 3.0, x2 + 3.0) == pytest.approx(v)  # shift invariance


def test_eve_is_unbiased_for_independent_pairs():
    rng = np.random.default_rng(2)
    sigma2 = 0.01
    estimates = [V.empirical_variance_estimate(*rng.normal(0.8, np.sqrt(sigma2), (2, 20))) for _ in range(4000)]
    se = np.std(estimates, ddof=1) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - sigma2) < 3 * se


def test_eve_standard_error(pairs):
    x1, x2 = pairs
    v = V.pair_variances(x1, x2)
    assert V.empirical_variance_estimate_standard_error(x1, x2) == pytest.approx(np.std(v, ddof=1) / np.sqrt(v.size))
    with pytest.raises(ValueError, match="at least 2 pairs"):
        V.empirical_variance_estimate_standard_error([0.5], [0.6])


def test_naive_estimators():
    s = np.array([0.7, 0.8, 0.75, 0.9])
    assert V.naive_empirical_variance_estimate(s) == pytest.approx(np.var(s, ddof=1))
    folds = np.array([[1.0, 0.5, 0.5, 1.0], [0.5, 0.5, 1.0, 1.0]])
    expected = np.mean(np.var(folds, axis=1, ddof=1) / 4)
    assert V.naive_foldwise_variance(folds) == pytest.approx(expected)
    assert V.naive_foldwise_variance(folds[0]) == pytest.approx(np.var(folds[0], ddof=1) / 4)
    assert V.naive_binomial_variance(0.8, 50) == pytest.approx(0.8 * 0.2 / 50)
    np.testing.assert_allclose(V.naive_binomial_variance([0.5, 0.9], [10, 20]), [0.025, 0.0045])


def test_sample_variance_se_matches_normal_theory():
    rng = np.random.default_rng(3)
    x = rng.normal(0, 2.0, 200_000)
    # normal data: SE(s^2) ~ sigma^2 sqrt(2/(R-1))
    assert V.sample_variance_standard_error(x) == pytest.approx(4.0 * np.sqrt(2 / (x.size - 1)), rel=0.03)


def test_confidence_interval_and_comparison(pairs):
    x1, x2 = pairs
    low, high = V.normal_confidence_interval(0.8, 0.0004, 0.95)
    assert (high - low) / 2 == pytest.approx(stats.norm.ppf(0.975) * 0.02)
    centre, lo, hi = V.eve_confidence_interval(x1, x2)
    assert centre == pytest.approx(np.mean([x1, x2]))
    assert (hi - lo) / 2 == pytest.approx(stats.norm.ppf(0.975) * np.sqrt(V.empirical_variance_estimate(x1, x2) / 2))
    # comparing an algorithm with itself shifted by a constant: the difference has zero variance
    res = V.paired_comparison(x1 + 0.1, x2 + 0.1, x1, x2)
    assert res.mean_difference == pytest.approx(0.1) and res.variance == pytest.approx(0, abs=1e-30)
    assert res.p_value == 0.0
    res = V.paired_comparison(x1, x2, x2, x1)  # antisymmetric: mean difference 0
    assert res.mean_difference == pytest.approx(0, abs=1e-12) and res.p_value == pytest.approx(1.0)
    rng = np.random.default_rng(4)
    b1, b2 = x1 + rng.normal(0.02, 0.01, x1.size), x2 + rng.normal(0.02, 0.01, x2.size)
    res = V.paired_comparison(b1, b2, x1, x2)
    d1, d2 = b1 - x1, b2 - x2
    assert res.variance == pytest.approx(np.mean((d1 - d2) ** 2) / 4)
    assert res.z == pytest.approx(np.mean([d1, d2]) / np.sqrt(res.variance))
    assert res.p_value == pytest.approx(2 * stats.norm.sf(abs(res.z)))


def test_strategy_errors_mse_decomposition(pairs):
    x1, x2 = pairs
    rng = np.random.default_rng(5)
    s1, s2 = x1 - 0.03 + rng.normal(0, 0.01, x1.size), x2 - 0.03 + rng.normal(0, 0.01, x2.size)
    e = V.strategy_bias_variance_mse(s1, s2, x1, x2)
    assert e.mse == pytest.approx(e.variance + e.bias**2, abs=1e-15)
    assert e.bias == pytest.approx(np.mean([s1, s2]) - np.mean([x1, x2]))
    assert e.variance == pytest.approx(V.empirical_variance_estimate(s1, s2))
    assert e.sd_ratio == pytest.approx(np.sqrt(e.variance / e.reference_variance))
    assert e.mse_ratio == pytest.approx(e.mse / e.reference_variance)
    ref = V.strategy_bias_variance_mse(x1, x2, x1, x2)
    assert (ref.bias, ref.sd_ratio, ref.bias_ratio, ref.mse_ratio) == (0.0, 1.0, 0.0, 1.0)
    flat = V.strategy_bias_variance_mse(s1, s2, np.ones(50), np.ones(50))
    assert np.isnan(flat.sd_ratio)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: V.empirical_variance_estimate([0.5, 0.6], [0.5]), "same length"),
        (lambda: V.empirical_variance_estimate([0.5, np.nan], [0.5, 0.6]), "non-finite"),
        (lambda: V.empirical_variance_estimate([[0.5]], [[0.5]]), "one-dimensional"),
        (lambda: V.empirical_variance_estimate([0.5], [0.5], target="full"), "target"),
        (lambda: V.naive_foldwise_variance([[0.5, np.nan]]), "non-finite"),
        (lambda: V.normal_confidence_interval(0.5, -1.0), "variance"),
        (lambda: V.normal_confidence_interval(0.5, 0.1, level=1.0), "level"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
