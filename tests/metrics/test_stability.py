"""Tests of medeval.metrics.stability against the paper's tables, exact rational arithmetic,
scikit-learn / scipy references and invariance properties (symmetry in the two models, shared
permutations of the instances, monotone maps and torch input: test_common.py, for every score)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import cohen_kappa_score

from medeval.metrics import stability as st

COUNT_SCORES = st.BINARY_SCORES + st.AGREEMENT_INDICATORS


def all_tables(max_n: int) -> np.ndarray:
    """Every 2x2 table (n00, n01, n10, n11) with 1 <= N <= max_n."""
    rows = [
        (n00, n01, n10, n - n00 - n01 - n10)
        for n in range(1, max_n + 1)
        for n00 in range(n + 1)
        for n01 in range(n + 1 - n00)
        for n10 in range(n + 1 - n00 - n01)
    ]
    return np.array(rows, dtype=np.int64)


TABLES_30 = all_tables(30)


def score(name, table):
    return getattr(st, name)(*np.asarray(table).T)


def maps_from_table(n00, n01, n10, n11, rng=None):
    """Two binary maps realising a given 2x2 table (optionally shuffled)."""
    a = np.array([0] * n00 + [0] * n01 + [1] * n10 + [1] * n11, dtype=float)
    b = np.array([0] * n00 + [1] * n01 + [0] * n10 + [1] * n11, dtype=float)
    if rng is not None:
        perm = rng.permutation(a.size)
        a, b = a[perm], b[perm]
    return a, b


# ------------------------------------------------------------------------------------------
# the paper's worked examples
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "table, aj, apj",
    [
        ((40, 10, 10, 40), 0.60, 0.43),  # Table IIa, balanced
        ((0, 30, 30, 40), -0.43, -0.18),  # Table IIb, imbalanced
        ((20, 20, 20, 40), 0.17, 0.09),  # Table IIIa, symmetric imbalance
        ((20, 35, 5, 40), 0.24, 0.14),  # Table IIIb, asymmetric (row total 45, printed 55)
    ],
)
def test_tables_ii_and_iii(table, aj, apj):
    assert st.adjusted_jaccard(*table) == pytest.approx(aj, abs=5e-3)
    assert st.adjusted_positive_jaccard(*table) == pytest.approx(apj, abs=5e-3)


def test_tables_ii_iii_exact_values():
    assert st.adjusted_positive_jaccard(40, 10, 10, 40) == pytest.approx(3 / 7, abs=1e-15)
    assert st.adjusted_positive_jaccard(0, 30, 30, 40) == pytest.approx(-3 / 17, abs=1e-15)
    assert st.adjusted_jaccard(0, 30, 30, 40) == pytest.approx(-3 / 7, abs=1e-15)
    # Feinstein-Cicchetti: symmetric imbalance scores lower than asymmetric imbalance
    assert st.adjusted_positive_jaccard(20, 20, 20, 40) < st.adjusted_positive_jaccard(20, 35, 5, 40)
    assert st.adjusted_jaccard(20, 20, 20, 40) < st.adjusted_jaccard(20, 35, 5, 40)


def fig9_lines(step=5):
    """The four lines of Fig. 9 (Appendix C), N = 200 throughout, tuples (n00, n01, n10, n11)."""
    k = np.arange(0, 51, step)
    return {
        "blue": np.stack([50 + 0 * k, 50 + 0 * k, 50 - k, 50 + k], axis=1),
        "green": np.stack([50 - k, 50 + 0 * k, 50 + 0 * k, 50 + k], axis=1),
        "black": np.stack([50 + 0 * k, 50 - k, 50 + k, 50 + 0 * k], axis=1),
        "red": np.stack([50 - k, 50 + 0 * k, 50 + k, 50 + 0 * k], axis=1),
    }


def test_table_ix_and_fig9():
    assert st.adjusted_positive_jaccard(50, 50, 50, 50) == 0.0
    green_end = st.adjusted_positive_jaccard(0, 50, 50, 100)  # Table IX, green line
    black_end = st.adjusted_positive_jaccard(50, 0, 100, 50)  # Table IX, black dotted line
    assert green_end == pytest.approx(-1 / 7, abs=1e-15)
    assert black_end == pytest.approx(1 / 9, abs=1e-15)
    assert black_end > green_end  # smaller positive agreement, higher score
    lines = {name: score("adjusted_positive_jaccard", t) for name, t in fig9_lines(step=1).items()}
    assert lines["blue"][0] == 0.0 and np.all(np.diff(lines["blue"]) > 0)  # from chance (n01 = n10) upwards
    assert lines["blue"][-1] == pytest.approx(1 / 3)
    assert np.all(np.diff(lines["green"]) < 0)
    assert np.all(np.diff(lines["black"]) > 0)
    assert np.all(np.diff(lines["red"]) < 0) and lines["red"][-1] == pytest.approx(-0.2)
    for t in fig9_lines().values():
        assert np.all(t.sum(axis=1) == 200)


# ------------------------------------------------------------------------------------------
# Appendix A closed forms = Eqs. 18 and 19 (exact rational arithmetic, every table with N <= 30)
# ------------------------------------------------------------------------------------------
def eq18(n00, n01, n10, n11):
    n = n00 + n01 + n10 + n11
    expected = Fraction((n10 + n11) * (n01 + n11), n)
    den = n10 + n01 + n11 - expected
    return None if den == 0 else (n11 - expected) / den


def eq19(n00, n01, n10, n11):
    n = n00 + n01 + n10 + n11
    e11 = Fraction((n10 + n11) * (n01 + n11), n)
    e00 = Fraction((n00 + n01) * (n00 + n10), n)
    den = n - e11 - e00
    return None if den == 0 else (n11 + n00 - e11 - e00) / den


def appendix_a_apj(n00, n01, n10, n11):
    n = n00 + n01 + n10 + n11
    den = n00 * n11 - n01 * n10 + (n10 + n01) * n
    return None if den == 0 else Fraction(n11 * n00 - n01 * n10, den)


def appendix_a_aj(n00, n01, n10, n11):
    n = n00 + n01 + n10 + n11
    den = 2 * n11 * n00 - 2 * n01 * n10 + (n01 + n10) * n
    return None if den == 0 else Fraction(2 * n11 * n00 - 2 * n01 * n10, den)


def test_closed_forms_equal_eqs_18_19_on_every_table():
    apj = score("adjusted_positive_jaccard", TABLES_30)
    aj = score("adjusted_jaccard", TABLES_30)
    for row, ours_apj, ours_aj in zip(TABLES_30.tolist(), apj, aj, strict=True):
        e18, a18 = eq18(*row), appendix_a_apj(*row)
        e19, a19 = eq19(*row), appendix_a_aj(*row)
        assert e18 == a18 and e19 == a19, row  # exact identity of the rational numbers
        if e18 is None:
            assert np.isnan(ours_apj), row
        else:
            assert abs(ours_apj - float(e18)) < 1e-12, row
        if e19 is None:
            assert np.isnan(ours_aj), row
        else:
            assert abs(ours_aj - float(e19)) < 1e-12, row


def test_nan_iff_both_models_constant_same_class():
    t = TABLES_30
    n = t.sum(axis=1)
    same_constant = (t[:, 0] == n) | (t[:, 3] == n)
    for name in ("adjusted_positive_jaccard", "adjusted_jaccard", "heuristic_adjusted_positive_jaccard"):
        assert np.array_equal(np.isnan(score(name, t)), same_constant), name
    assert np.array_equal(np.isnan(score("positive_jaccard", t)), t[:, 0] == n)


# ------------------------------------------------------------------------------------------
# ranges, extremes and orderings (every table with N <= 30)
# ------------------------------------------------------------------------------------------
def test_ranges(in_range):
    """Every table with N <= 30; NaN only on the documented 0/0 tables (below 5% for every score)."""
    t = TABLES_30
    lo_hi = {
        "adjusted_positive_jaccard": (-1 / 3, 1),
        "adjusted_jaccard": (-1, 1),
        "heuristic_adjusted_positive_jaccard": (0, 1),
        "positive_jaccard": (0, 1),
        "positive_overlap": (0, 1),
        "total_agreement_ratio": (0, 1),
        "positive_agreement_ratio": (0, 1),
        "negative_agreement_ratio": (0, 1),
    }
    for name, (lo, hi) in lo_hi.items():
        in_range(score(name, t).tolist(), lo - 1e-12, hi + 1e-12, finite_share=0.95)
    # S_APO lies in [1 - N, 1]: (S_APO - 1) / N in [-1, 0]
    apo = score("adjusted_positive_overlap", t)
    in_range(((apo - 1) / t.sum(axis=1)).tolist(), -1 - 1e-12, 1e-12, finite_share=0.95)


def test_apj_minimum_is_attained_exactly_when_n11_n00_zero_and_n01_eq_n10():
    t = TABLES_30
    apj = score("adjusted_positive_jaccard", t)
    aj = score("adjusted_jaccard", t)
    at_min = np.isclose(apj, -1 / 3, atol=1e-12)
    expected = (t[:, 0] == 0) & (t[:, 3] == 0) & (t[:, 1] == t[:, 2]) & (t[:, 1] > 0)
    assert np.array_equal(at_min, expected)  # for every k, not only k = 1 as Appendix A says
    assert np.array_equal(np.isclose(aj, -1, atol=1e-12), expected)
    assert np.nanmax(apj) == 1.0


def test_apo_reaches_one_minus_n():
    assert st.adjusted_positive_overlap(0, 9, 1, 0) == pytest.approx(-9)
    assert st.adjusted_positive_overlap(0, 29, 1, 0) == pytest.approx(-29)


def test_ordering_apj_le_hapj_le_j_and_hapj_simplification():
    t = TABLES_30
    apj, hapj, j = (score(s, t) for s in ("adjusted_positive_jaccard", "heuristic_adjusted_positive_jaccard", "positive_jaccard"))
    ok = ~np.isnan(apj) & ~np.isnan(hapj) & ~np.isnan(j)
    assert np.all(apj[ok] <= hapj[ok] + 1e-12) and np.all(hapj[ok] <= j[ok] + 1e-12)
    n00, n01, n10, n11 = t.T
    m = np.minimum(n11, n00)
    simplified = np.divide(m, n01 + n10 + m, out=np.full(m.shape, np.nan), where=(n01 + n10 + m) > 0)
    assert np.allclose(hapj, simplified, equal_nan=True, atol=1e-12)
    below = (n10 + n11) + (n01 + n11) <= t.sum(axis=1)
    both = below & ~np.isnan(j)
    assert np.allclose(hapj[both], j[both], atol=1e-12)


def test_apj_strictly_increasing_in_n11():
    for n00, n01, n10 in itertools.product(range(0, 8), repeat=3):
        n11 = np.arange(0 if n00 + n01 + n10 else 1, 12)
        values = st.adjusted_positive_jaccard(n00, n01, n10, n11)
        finite = ~np.isnan(values)
        # Appendix A's derivative numerator is (n01 + n10)(n01 + n00)(n10 + n00): positive unless a
        # factor vanishes (the paper says "always positive"; with n00 = 0 and n01 or n10 = 0 one model
        # is all-positive and S_APJ stays 0)
        if (n01 + n10) * (n01 + n00) * (n10 + n00) > 0:
            assert np.all(np.diff(values[finite]) > 0), (n00, n01, n10)
        elif n01 + n10 > 0:
            assert np.all(values[finite] == 0), (n00, n01, n10)


def test_edge_cases():
    n = 16
    for name in ("adjusted_positive_jaccard", "adjusted_jaccard"):
        f = getattr(st, name)
        assert np.isnan(f(n, 0, 0, 0)) and np.isnan(f(0, 0, 0, n))  # both constant, same class
        assert f(6, 0, 10, 0) == 0.0 and f(0, 6, 0, 10) == 0.0  # exactly one model constant
        assert f(0, n, 0, 0) == 0.0 and f(0, 0, n, 0) == 0.0  # opposite constants
        assert f(6, 0, 0, 10) == 1.0  # identical non-constant maps
    assert st.positive_jaccard(6, 0, 0, 10) == 1.0
    assert st.positive_overlap(5, 7, 0, 4) == 1.0  # subset -> 1, the flaw the paper cites
    assert np.isnan(st.positive_overlap(5, 7, 0, 0))  # empty positive set: 0 / 0
    assert st.total_agreement_ratio(3, 1, 2, 4) == pytest.approx(0.7)
    assert st.total_agreement_ratio(3, 1, 2, 4, positive_only=True) == pytest.approx(0.4)
    assert st.positive_agreement_ratio(3, 1, 2, 4) == pytest.approx(8 / 11)
    assert st.negative_agreement_ratio(3, 1, 2, 4) == pytest.approx(6 / 9)
    ind = st.kappa_paradox_indicators(20, 35, 5, 40)
    assert ind["n0_minus_n1"] == 55 - 45 and ind["n_0_minus_n_1"] == 25 - 75


def test_complement_invariance_and_apj_is_a_monotone_function_of_kappa():
    """Complementing both maps swaps n00 <-> n11 and n01 <-> n10. Both closed forms are invariant to it
    (one might expect APJ not to be: Eq. 18's numerator N n11 - n1* n*1 = n11 n00 - n01 n10 is
    symmetric). In fact S_APJ = S_AJ / (2 - S_AJ), the Jaccard-Dice relation, on every table."""
    t = TABLES_30
    n00, n01, n10, n11 = t.T
    for name in ("adjusted_jaccard", "adjusted_positive_jaccard"):
        f = getattr(st, name)
        assert np.allclose(f(n00, n01, n10, n11), f(n11, n10, n01, n00), equal_nan=True, atol=1e-12), name
    aj = st.adjusted_jaccard(n00, n01, n10, n11)
    assert np.allclose(st.adjusted_positive_jaccard(n00, n01, n10, n11), aj / (2 - aj), equal_nan=True, atol=1e-12)
    # ... whereas the uncorrected positive Jaccard is not complement-invariant
    assert st.positive_jaccard(10, 5, 5, 80) != pytest.approx(st.positive_jaccard(80, 5, 5, 10))


# ------------------------------------------------------------------------------------------
# references: scikit-learn, scipy
# ------------------------------------------------------------------------------------------
def test_adjusted_jaccard_equals_cohen_kappa():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 300))
        p = rng.random(2)
        a, b = rng.random(n) < p[0], rng.random(n) < p[1]
        if (a == b).all() and (a.all() or (~a).all()):
            continue
        ours = st.adjusted_jaccard(*st.agreement_counts(a, b))
        assert abs(ours - cohen_kappa_score(a, b)) < 1e-12


def test_correlations_equal_scipy_with_ties():
    rng = np.random.default_rng(1)
    for dtype in (np.float64, np.float32):
        a = rng.random((40, 64)).astype(dtype)
        b = rng.random((40, 64)).astype(dtype)
        a[:10] = np.round(a[:10], 1)  # ties in a
        b[5:20] = np.round(b[5:20], 1)  # ties in b, some rows tied in both
        b[30, :8] = a[30, :8] = 1.0
        for ours_f, ref_f in (
            (st.pearson_correlation, scipy.stats.pearsonr),
            (st.spearman_correlation, scipy.stats.spearmanr),
            (st.kendall_tau, scipy.stats.kendalltau),
        ):
            ours = ours_f(a, b)
            ref = [ref_f(x.astype(float), y.astype(float))[0] for x, y in zip(a, b, strict=True)]
            np.testing.assert_allclose(ours, ref, atol=1e-12, err_msg=ours_f.__name__)


@pytest.mark.parametrize("n", [362, 363, 1500])
def test_kendall_counts_pairs_in_a_wide_enough_accumulator(n):
    """The concordant count is summed in uint16 while C(N, 2) < 2^16 (N <= 362) and in uint32 above: at the
    boundary and beyond, with bags that are almost perfectly concordant (the count near C(N, 2)), tau still
    equals scipy's, for the pair function and for every pair of ``pairwise_stability``."""
    rng = np.random.default_rng(n)
    base = np.sort(rng.random((2, n)), axis=1)
    p = np.stack([base, base + rng.normal(0, 1e-4, base.shape), base[:, ::-1].copy()])  # (3 models, 2 bags, n)
    ref = [[scipy.stats.kendalltau(p[i, b], p[j, b])[0] for b in range(2)] for i, j in st.model_pairs(3)]
    np.testing.assert_allclose(st.pairwise_stability(p, scores=["kendall"]).scores["kendall"], ref, atol=1e-12)
    np.testing.assert_allclose(st.kendall_tau(p[0], p[1]), ref[0], atol=1e-12)
    assert ref[0][0] > 0.99 and ref[1][0] == pytest.approx(-1.0)


def test_kendall_tau_a_matches_table_i_formula():
    rng = np.random.default_rng(2)
    a, b = rng.random((5, 30)), rng.random((5, 30))
    for x, y in zip(a, b, strict=True):
        c = d = 0
        for r, s in itertools.combinations(range(30), 2):
            prod = (x[r] - x[s]) * (y[r] - y[s])
            c += prod > 0
            d += prod < 0
        assert st.kendall_tau(x, y, variant="a") == pytest.approx((c - d) / (30 * 29 / 2), abs=1e-12)


def test_spearman_properties():
    rng = np.random.default_rng(3)
    w = rng.random(100)
    assert st.spearman_correlation(w, w) == pytest.approx(1.0)
    assert st.spearman_correlation(w, 1 - w) == pytest.approx(-1.0)
    assert st.spearman_correlation(w, w**3) == pytest.approx(1.0)
    assert st.pearson_correlation(w, w**3) < 0.99
    v = rng.random(100)  # tie-free: the textbook formula of Table I (without its stray sqrt) applies
    d = scipy.stats.rankdata(w) - scipy.stats.rankdata(v)
    assert st.spearman_correlation(w, v) == pytest.approx(1 - 6 * np.sum(d**2) / (100 * (100**2 - 1)), abs=1e-12)
    const = np.full(100, 0.3)
    for f in (st.pearson_correlation, st.spearman_correlation, st.kendall_tau):
        assert np.isnan(f(w, const)) and np.isnan(f(const, w))


# ------------------------------------------------------------------------------------------
# symmetry, invariance, agreement of the two code paths
# ------------------------------------------------------------------------------------------
def random_predictions(rng, n_models=4, n_bags=30, n_instances=49, dtype=np.float64):
    p = rng.random((n_models, n_bags, n_instances))
    p[:, :5] = np.round(p[:, :5], 1)  # ties
    p[:, 5] = 0.2  # a bag where every model is constant and negative
    p[1, 6] = 0.9  # one constant model
    return p.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pairwise_stability_matches_pair_functions(dtype):
    rng = np.random.default_rng(4)
    p = random_predictions(rng, dtype=dtype)
    result = st.pairwise_stability(p, threshold=0.5)
    i, j = result.pairs.T
    assert result.pairs.shape == (6, 2)
    counts = st.agreement_counts(p[i], p[j])
    for name in COUNT_SCORES:
        np.testing.assert_allclose(result.scores[name], getattr(st, name)(*counts), atol=1e-12, err_msg=name)
    np.testing.assert_allclose(result.scores["pearson"], st.pearson_correlation(p[i], p[j]), atol=1e-12)
    np.testing.assert_allclose(result.scores["spearman"], st.spearman_correlation(p[i], p[j]), atol=1e-12)
    np.testing.assert_allclose(result.scores["kendall"], st.kendall_tau(p[i], p[j]), atol=1e-12)
    tau_a = st.pairwise_stability(p, scores=["kendall"], kendall_variant="a").scores["kendall"]
    np.testing.assert_allclose(tau_a, st.kendall_tau(p[i], p[j], variant="a"), atol=1e-12)


def test_pairwise_stability_in_threads_equals_one_thread_and_the_pair_functions():
    """Blocks of bags scored in threads give the same numbers as one thread; the rank fast path for maps without
    ties (float32 network outputs) agrees with the pair-level Spearman and Kendall."""
    rng = np.random.default_rng(11)
    p = rng.random((3, 200, 256)).astype(np.float32)  # 200 bags of 256 instances: several blocks
    p[:, :40] = np.round(p[:, :40], 1)  # ties in some bags only
    one = st.pairwise_stability(p, n_threads=1)
    three = st.pairwise_stability(p, n_threads=3)
    for name in st.SCORE_NAMES:
        np.testing.assert_array_equal(one.scores[name], three.scores[name], err_msg=name)
    i, j = one.pairs.T
    np.testing.assert_allclose(one.scores["spearman"], st.spearman_correlation(p[i], p[j]), atol=1e-12)
    np.testing.assert_allclose(one.scores["kendall"], st.kendall_tau(p[i], p[j]), atol=1e-12)
    for bad in (0, 1.5, -2):
        with pytest.raises(ValueError, match="n_threads"):
            st.pairwise_stability(p[:, :2], n_threads=bad)


def test_pairwise_ranks_equal_scipy_on_clipped_maps_with_signed_zeros():
    """Saturated maps (many exact 0s and 1s, as clipped or saturated sigmoid outputs) and -0.0 next to 0.0: the
    shared rank structure of pairwise_stability (one unstable argsort per map; ties resolved on tied positions
    only) gives scipy's Spearman and Kendall tau-b on every (pair, bag)."""
    rng = np.random.default_rng(12)
    signal = rng.random((1, 60, 96))
    p = np.clip(signal + rng.normal(0, 0.3, (3, 60, 96)), 0, 1).astype(np.float32)
    p[0, :20, :5] = -0.0  # equal to 0.0: must tie with the clipped zeros
    p[1, 30] = 0.0  # a constant map: NaN for both correlations
    result = st.pairwise_stability(p, scores=["spearman", "kendall"], n_threads=2)
    for k, (i, j) in enumerate(result.pairs):
        for b in range(p.shape[1]):
            x, y = p[i, b].astype(float), p[j, b].astype(float)
            for name, ref in (("spearman", scipy.stats.spearmanr), ("kendall", scipy.stats.kendalltau)):
                expected = ref(x, y)[0]
                got = result.scores[name][k, b]
                if np.isnan(expected):
                    assert np.isnan(got), (name, i, j, b)
                else:
                    assert got == pytest.approx(expected, abs=1e-12), (name, i, j, b)


def test_aggregation_nan_mean_and_counts():
    per_pair = np.array([[0.5, np.nan, np.nan], [0.1, 0.2, np.nan], [0.3, np.nan, np.nan]])
    mean, n_nan = st.aggregate_over_pairs(per_pair)
    np.testing.assert_allclose(mean[:2], [0.3, 0.2])
    assert np.isnan(mean[2]) and list(n_nan) == [0, 2, 3]
    rng = np.random.default_rng(6)
    p = random_predictions(rng, n_models=5)
    result = st.pairwise_stability(p)
    assert result.scores["adjusted_positive_jaccard"].shape == (10, p.shape[1])  # C(5, 2) pairs
    summary = result.summary().set_index("score")
    apj = result.per_bag("adjusted_positive_jaccard")
    assert np.isnan(apj[5]) and result.nan_pairs_per_bag("adjusted_positive_jaccard")[5] == 10
    assert summary.loc["adjusted_positive_jaccard", "n_bags_all_nan"] >= 1
    assert summary.loc["adjusted_positive_jaccard", "mean"] == pytest.approx(np.nanmean(apj))
    assert summary.loc["adjusted_positive_jaccard", "std"] == pytest.approx(np.nanstd(apj))
    assert result.nan_count_per_pair("spearman").sum() == np.isnan(result.scores["spearman"]).sum()


def test_selections_positive_and_annotated_bags():
    rng = np.random.default_rng(7)
    p = random_predictions(rng, n_bags=8)
    labels = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    inst = np.full((8, p.shape[-1]), np.nan)
    inst[[0, 3]] = rng.random((2, p.shape[-1])) < 0.3
    pos = st.positive_bag_mask(labels)
    ann = st.annotated_bag_mask(inst)
    assert list(np.flatnonzero(ann)) == [0, 3]
    sel = st.pairwise_stability(p, bag_mask=pos)
    full = st.pairwise_stability(p)
    assert list(sel.bag_index) == [0, 2, 3, 6]
    np.testing.assert_allclose(sel.scores["spearman"], full.scores["spearman"][:, pos], atol=1e-12)
    with pytest.raises(ValueError, match="bag_mask"):
        st.pairwise_stability(p, bag_mask=labels)
    bad = inst.copy()
    bad[1, :3] = 1
    with pytest.raises(ValueError, match="instance_labels"):
        st.annotated_bag_mask(bad)


def test_votes_and_chance_level():
    rng = np.random.default_rng(8)
    p = rng.random((5, 2000, 256))
    hist = st.vote_histogram(p)
    assert hist.shape == (2000, 6) and np.all(hist.sum(axis=1) == 256)
    stable = np.repeat(rng.random((1, 3, 256)), 5, axis=0)
    h = st.vote_histogram(stable)
    assert np.all(h[:, 1:5] == 0)  # a perfectly stable bag votes only 0 or 5
    result = st.pairwise_stability(p[:2], scores=["adjusted_positive_jaccard", "adjusted_jaccard", "positive_jaccard", "spearman"])
    s = result.summary().set_index("score")["mean"]
    assert abs(s["adjusted_positive_jaccard"]) < 0.02 and abs(s["adjusted_jaccard"]) < 0.02
    assert abs(s["spearman"]) < 0.02 and abs(s["positive_jaccard"] - 1 / 3) < 0.02


def test_localization_metrics():
    truth = np.array([0, 1, 1, 1, 0, 0], dtype=float)
    pred = np.array([0.1, 0.9, 0.6, 0.2, 0.7, 0.0])
    dice = st.instance_dice(pred, truth)
    jac = st.instance_jaccard(pred, truth)
    assert dice == pytest.approx(2 * 2 / (2 * 2 + 1 + 1)) and jac == pytest.approx(2 / 4)
    assert dice == pytest.approx(2 * jac / (1 + jac))
    assert st.instance_dice(truth, truth) == 1.0 and st.instance_dice(np.zeros(6), truth) == 0.0
    assert np.isnan(st.instance_dice(np.zeros(6), np.zeros(6)))
    acc = st.localization_accuracy(np.array([0.05, 0.1, 0.5, np.nan]))
    np.testing.assert_array_equal(acc[:3], [0, 1, 1])
    assert np.isnan(acc[3])
    many = np.stack([pred, truth])  # two models against one label map (broadcast)
    np.testing.assert_allclose(st.instance_dice(many, truth), [dice, 1.0])


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------
def test_bad_input_raises():
    rng = np.random.default_rng(9)
    a, b = rng.random((3, 10)), rng.random((3, 11))
    with pytest.raises(ValueError, match="same shape"):
        st.spearman_correlation(a, b)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        st.kendall_tau(a * 2, a)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        st.pairwise_stability(rng.random((3, 4, 5)) - 0.5)
    with pytest.raises(ValueError, match="NaN"):
        st.pearson_correlation(np.array([0.1, np.nan]), np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="n_models"):
        st.model_pairs(1)
    with pytest.raises(ValueError, match=r"n_models, n_bags, n_instances"):
        st.pairwise_stability(rng.random((3, 5)))
    with pytest.raises(ValueError, match="n01"):
        st.adjusted_positive_jaccard(1, -1, 2, 3)
    with pytest.raises(ValueError, match="integer"):
        st.adjusted_jaccard(1.5, 1, 2, 3)
    with pytest.raises(ValueError, match="broadcastable"):
        st.positive_jaccard(np.ones(3), np.ones(2), 1, 1)
    with pytest.raises(ValueError, match="threshold"):
        st.agreement_counts(a, a, threshold=1.5)
    with pytest.raises(ValueError, match="variant"):
        st.kendall_tau(a, a, variant="c")
    with pytest.raises(ValueError, match="scores"):
        st.pairwise_stability(rng.random((2, 4, 5)), scores=["dice"])


# --------------------------------------------------------------------------------------------------
# issue #32: Pearson's correlation of tiny probabilities


@pytest.mark.parametrize("scale", [0.25, 1e-100, 1e-170, 1e-300])
def test_pearson_is_scale_invariant_down_to_1e_300(scale):
    """The centred values were squared before rescaling: below ~1e-154 the squares underflow to 0 and the
    correlation came out NaN (scipy: 0.9)."""
    a, b = scale * np.r_[0, 1, 2, 3, 4.0], scale * np.r_[0, 1, 3, 2, 4.0]
    assert st.pearson_correlation(a, b) == pytest.approx(scipy.stats.pearsonr(a, b)[0], abs=1e-12)
    assert st.pearson_correlation(a, b) == pytest.approx(0.9, abs=1e-12)
    scores = st.pairwise_stability(np.stack([a, b])[:, None, :], scores=("pearson",)).scores["pearson"]
    assert scores.tolist() == [[pytest.approx(0.9, abs=1e-12)]]


def test_pearson_of_tiny_maps_matches_scipy_on_random_rows():
    rng = np.random.default_rng(3)
    a, b = rng.random((20, 15)), rng.random((20, 15))
    for scale in (1e-160, 1e-250, 1e-300):
        got = st.pearson_correlation(scale * a, scale * b)
        want = [scipy.stats.pearsonr(scale * x, scale * y)[0] for x, y in zip(a, b, strict=True)]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got, st.pearson_correlation(a, b), rtol=0, atol=1e-12)
