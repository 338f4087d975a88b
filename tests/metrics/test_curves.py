"""Tests of medeval.metrics.curves against the thesis's worked examples, scikit-learn and invariances."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import (
    average_precision_score,
    precision_recall_curve,
    precision_score,
    recall_score,
    roc_auc_score,
)
from sklearn.metrics import roc_curve as sk_roc_curve

from medeval.metrics import curves as C


def _random_problem(seed: int, n: int = 500, prevalence: float = 0.2, tie_decimals: int | None = 2):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    y[:2] = [True, False]
    s = rng.normal(size=n) + 1.2 * y
    if tie_decimals is not None:
        s = np.round(s, tie_decimals)
    return y.astype(int), s


def _ranked(labels):
    """Scores for a ranked list (first = highest score, all distinct)."""
    return np.asarray(labels), np.arange(len(labels), 0, -1, dtype=float)


# ---------------------------------------------------------------------------- single-threshold rates


def test_tables_5_1_and_5_2_recomputed_with_small_delta_prec_erratum():
    # Table 5.1: (TP, FN, FP, TN)
    table = {
        ("Large", "m1"): (80_000, 400, 4_000, 10_000_000),
        ("Large", "m2"): (80_200, 200, 2_000, 10_002_000),
        ("Small", "m1"): (8_000, 400, 4_000, 100_000),
        ("Small", "m2"): (8_200, 200, 2_000, 102_000),
    }
    rates = {k: C.confusion_rates(tp=v[0], fp=v[2], fn=v[1], tn=v[3]) for k, v in table.items()}

    def delta(size, attr):
        return abs(float(getattr(rates[(size, "m2")], attr)) - float(getattr(rates[(size, "m1")], attr)))

    assert delta("Large", "recall") == pytest.approx(0.0025, abs=5e-5)
    assert delta("Large", "fpr") == pytest.approx(0.0002, abs=5e-5)
    assert delta("Large", "precision") == pytest.approx(0.0233, abs=5e-5)
    assert delta("Small", "recall") == pytest.approx(0.0238, abs=5e-5)
    assert delta("Small", "fpr") == pytest.approx(0.0192, abs=5e-5)
    # erratum: the thesis prints .005; the formula gives 8,200/10,200 - 8,000/12,000 = 0.137
    assert delta("Small", "precision") == pytest.approx(8_200 / 10_200 - 8_000 / 12_000)
    assert delta("Small", "precision") == pytest.approx(0.137, abs=5e-4)
    assert abs(delta("Small", "precision") - 0.005) > 0.1


def test_confusion_rates_edge_policy():
    r = C.confusion_rates(tp=[0, 0, 3], fp=[0, 5, 1], fn=[0, 2, 1], tn=[4, 0, 0])
    assert np.isnan(r.recall[0]) and np.isnan(r.precision[0]) and np.isnan(r.f_measure[0])
    assert r.fpr[0] == 0.0
    assert r.precision[1] == 0 and r.recall[1] == 0 and r.f_measure[1] == 0  # P = R = 0 -> F = 0
    assert r.fpr[2] == 1.0
    assert r.f_measure[2] == pytest.approx(0.75)
    assert np.isnan(C.confusion_rates(1, 0, 0, 0).fpr)  # no negatives -> FPR undefined
    with pytest.raises(ValueError, match="tp"):
        C.confusion_rates(-1, 0, 0, 0)


# ---------------------------------------------------------------------------- ROC / PR vs scikit-learn


@pytest.mark.parametrize("seed", range(4))
def test_roc_and_pr_match_sklearn(seed):
    y, s = _random_problem(seed)
    roc = C.roc_curve(y, s)
    fpr, tpr, _ = sk_roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(roc.fpr, fpr)
    np.testing.assert_allclose(roc.tpr, tpr)
    assert C.roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    pr = C.pr_curve(y, s)
    precision, recall, thresholds = precision_recall_curve(y, s)
    np.testing.assert_allclose(pr.precision, precision[:-1][::-1])
    np.testing.assert_allclose(pr.recall, recall[:-1][::-1])
    np.testing.assert_allclose(pr.thresholds, thresholds[::-1])


@pytest.mark.parametrize(
    "y, s, match",
    [
        ([0, 0, 0], [0.1, 0.2, 0.3], "pos=0"),
        ([1, 1], [0.1, 0.2], "neg=0"),
        ([1, 0, 2], [0.1, 0.2, 0.3], "binary"),
        ([1, 0], [0.1, np.nan], "finite"),
    ],
)
def test_degenerate_inputs_raise(y, s, match):
    for fn in (C.roc_curve, C.pr_curve, C.pr_t_curve, C.roc_auc):
        with pytest.raises(ValueError, match=match):
            fn(y, s)


# ---------------------------------------------------------------------------- PR-T (Algorithms 1-2)


def _algorithm_1_literal(y, s, thresholds):
    """The thesis's Algorithm 1 written as a loop over thresholds (O(n |T|)), via scikit-learn's scores."""
    sn = (s - s.min()) / (s.max() - s.min())
    prec, rec = [], []
    for t in thresholds:
        pred = (sn >= t).astype(int)
        prec.append(precision_score(y, pred, zero_division=np.nan))
        rec.append(recall_score(y, pred))
    return np.array(prec), np.array(rec)


@pytest.mark.parametrize("seed", range(3))
def test_pr_t_matches_literal_algorithm_1(seed):
    y, s = _random_problem(seed, n=300)
    curve = C.pr_t_curve(y, s)
    prec, rec = _algorithm_1_literal(y, s, curve.thresholds)
    np.testing.assert_allclose(curve.precision, prec)
    np.testing.assert_allclose(curve.recall, rec)


@pytest.mark.parametrize("seed", range(5))
def test_pr_t_identities(seed):
    y, s = _random_problem(seed, n=2000, prevalence=0.1 + 0.1 * seed)
    curve = C.pr_t_curve(y, s)
    n_pos = int(y.sum())
    assert curve.recall[0] == 1.0
    assert curve.precision[0] == pytest.approx(n_pos / y.size)
    assert curve.fpr[0] == 1.0
    assert np.all(np.diff(curve.recall) <= 0)
    assert np.all(np.diff(curve.fpr) <= 0)
    assert not np.isnan(curve.precision).any()  # no division by zero for t in [0, 1]
    np.testing.assert_array_equal(curve.tp + curve.fn, n_pos)
    # recall(t) > prec(t)  <=>  FP(t) > FN(t)   (both share TP)
    np.testing.assert_array_equal(curve.recall > curve.precision, curve.fp > curve.fn)
    # layer-cake identity: recall-AUC ~ mean normalised positive score, FPR-AUC ~ mean negative score
    sn = C.min_max_normalize(s)
    auc = C.pr_t_auc(curve)
    assert auc.recall == pytest.approx(sn[y == 1].mean(), abs=1e-2)
    assert auc.fpr == pytest.approx(sn[y == 0].mean(), abs=1e-2)
    fine = C.pr_t_auc(C.pr_t_curve(y, s, n_thresholds=1001))
    assert fine.recall == pytest.approx(sn[y == 1].mean(), abs=1e-3)
    assert 0 <= auc.precision <= 1 and 0 <= auc.recall <= 1


def test_prior_sensitivity_of_precision_but_not_recall_or_roc():
    y, s = _random_problem(5, n=1000, tie_decimals=None)
    neg = y == 0
    # replicate the negatives 5 times (keeps the score extremes, changes the prior)
    y5 = np.r_[y, np.repeat(y[neg], 4)]
    s5 = np.r_[s, np.tile(s[neg], 4)]
    a, b = C.pr_t_curve(y, s), C.pr_t_curve(y5, s5)
    np.testing.assert_allclose(a.recall, b.recall)
    np.testing.assert_allclose(a.fpr, b.fpr)
    assert C.pr_t_auc(b).precision < C.pr_t_auc(a).precision - 0.05
    assert C.roc_auc(y, s) == pytest.approx(C.roc_auc(y5, s5))
    assert average_precision_score(y5, s5) < average_precision_score(y, s)


def test_random_scores_give_chance_levels():
    rng = np.random.default_rng(0)
    y = (rng.random(20_000) < 0.1).astype(int)
    s = rng.random(20_000)
    assert C.roc_auc(y, s) == pytest.approx(0.5, abs=0.02)
    assert C.pr_auc_roc_interpolated(C.roc_curve(y, s)) == pytest.approx(y.mean(), abs=0.02)


# ---------------------------------------------------------------------------- mean PR (Algorithms 3-5)


def test_example_1_endpoint_precisions():
    y1, s1 = _ranked([1, 0, 1, 0, 0])
    y2, s2 = _ranked([1, 0, 0, 0, 1])
    _, p1 = C.interpolated_pr_points(C.roc_curve(y1, s1))
    _, p2 = C.interpolated_pr_points(C.roc_curve(y2, s2))
    assert p1[-1] == pytest.approx(2 / 3)  # end tie at TPR 1: minimum FPR 1/3 (reward)
    assert p2[-1] == pytest.approx(2 / 5)  # no tie: pos / (pos + neg)
    # Saito & Rehmsmeier's endpoint (2/5 for both) is what the last point of the plain PR curve gives
    assert C.pr_curve(y1, s1).precision[-1] == pytest.approx(2 / 5)
    mean = C.mean_pr_curve([C.roc_curve(y1, s1), C.roc_curve(y2, s2)])
    assert mean.mean[-1] == pytest.approx((2 / 3 + 2 / 5) / 2)


def test_start_tie_uses_maximum_fpr_so_precision_is_zero():
    y, s = _ranked([0, 0, 1, 0, 1, 1])  # two negatives ranked first
    recall, precision = C.interpolated_pr_points(C.roc_curve(y, s), n_points=4)
    assert recall[0] == 0 and precision[0] == 0.0
    _, precision_auc = C.interpolated_pr_points(C.roc_curve(y, s), n_points=4, mode="auc")
    assert precision_auc[0] == 0.0


def test_undefined_start_is_replaced_by_next_point():
    y, s = _ranked([1, 0, 1, 1, 0])  # first example positive: (0, 0) is not tied, 0/0 at recall 0
    _, precision = C.interpolated_pr_points(C.roc_curve(y, s), n_points=4)
    assert not np.isnan(precision).any()
    assert precision[0] == precision[1]


def test_intermediate_tie_median_for_curve_all_for_auc():
    y, s = _ranked([1, 0, 0, 0, 1])  # TPR 0.5 tied at FP = 0, 1, 2, 3; end not tied
    roc = C.roc_curve(y, s)
    recall, precision = C.interpolated_pr_points(roc, n_points=3)  # grid 0, 0.5, 1
    assert precision[1] == pytest.approx(1 / (1 + 1.5))  # median FP = 1.5
    recall_auc, precision_auc = C.interpolated_pr_points(roc, n_points=3, mode="auc")
    np.testing.assert_allclose(recall_auc, [0, 0.5, 0.5, 0.5, 0.5, 1])
    np.testing.assert_allclose(precision_auc, [1, 1, 1 / 2, 1 / 3, 1 / 4, 2 / 5])
    # area: [0, .5] under precision 1 (min FPR on the left); [.5, 1] from 1/4 (max FPR) to 2/5
    assert C.pr_auc_roc_interpolated(roc, n_points=3) == pytest.approx(0.5 + 0.5 * (0.25 + 0.4) / 2)


def test_interpolation_matches_davis_goadrich_and_real_vertices():
    y, s = _random_problem(3, n=97, tie_decimals=None)
    roc = C.roc_curve(y, s)
    pos = roc.n_pos
    recall, precision = C.interpolated_pr_points(roc, n_points=10 * pos + 1)  # every 10th point: a TP count
    checked = {"vertex": 0, "interpolated": 0}
    for r, p in zip(recall[1:], precision[1:], strict=True):  # recall 0: start rule, tested above
        tp_x = r * pos
        k = np.searchsorted(roc.tp, tp_x - 1e-9)
        if abs(roc.tp[k] - tp_x) < 1e-7:
            group = roc.fp[roc.tp == roc.tp[k]]
            if group.size == 1:  # real vertex: exact precision
                assert p == pytest.approx(roc.tp[k] / (roc.tp[k] + group[0]))
                checked["vertex"] += 1
            continue
        a = k - 1  # previous vertex A, next vertex B = k
        skew = (roc.fp[k] - roc.fp[a]) / (roc.tp[k] - roc.tp[a])
        fp_x = roc.fp[a] + skew * (tp_x - roc.tp[a])  # Davis & Goadrich Eq. 5.1
        assert p == pytest.approx(tp_x / (tp_x + fp_x))
        checked["interpolated"] += 1
    assert checked["vertex"] >= 2 and checked["interpolated"] >= 100, checked  # neither branch is vacuous


@pytest.mark.parametrize("seed", range(3))
def test_pr_auc_grid_resolution_and_sanity(seed):
    y, s = _random_problem(seed, n=3000, tie_decimals=None)
    roc = C.roc_curve(y, s)
    a101 = C.pr_auc_roc_interpolated(roc, n_points=101)
    a1001 = C.pr_auc_roc_interpolated(roc, n_points=1001)
    assert abs(a101 - a1001) < 1e-2
    assert 0 <= a101 <= 1
    assert a1001 == pytest.approx(average_precision_score(y, s), abs=0.03)


def test_mean_pr_auc_and_curve_over_trials():
    rocs = [C.roc_curve(*_random_problem(seed, n=400)) for seed in range(5)]
    mean, std, per = C.mean_pr_auc(rocs)
    assert per.shape == (5,) and mean == pytest.approx(per.mean()) and std == pytest.approx(per.std())
    curve = C.mean_pr_curve(rocs)
    assert curve.per_trial.shape == (5, 101)
    assert np.all((curve.mean >= 0) & (curve.mean <= 1))
    np.testing.assert_allclose(curve.std, curve.per_trial.std(axis=0))


# ---------------------------------------------------------------------------- vertical averaging


def test_vertical_average_of_identical_rocs_has_zero_std_and_matches_interp():
    y, s = _random_problem(2, tie_decimals=None)
    roc = C.roc_curve(y, s)
    mean = C.mean_roc_curve([roc, roc, roc], n_points=201)
    np.testing.assert_allclose(mean.std, 0, atol=1e-12)
    # maximum TPR at each exact FPR, linear interpolation elsewhere
    for g, v in zip(mean.grid, mean.mean, strict=True):
        at = roc.fpr == g
        if at.any():
            assert v == pytest.approx(roc.tpr[at].max())
        else:
            k = np.searchsorted(roc.fpr, g)
            assert v == pytest.approx(np.interp(g, roc.fpr[k - 1 : k + 1], roc.tpr[k - 1 : k + 1]))


def test_mean_prt_curves_are_threshold_wise():
    curves = [C.pr_t_curve(*_random_problem(seed)) for seed in range(4)]
    mean = C.mean_prt_curves(curves)
    np.testing.assert_allclose(mean["precision"].mean, np.mean([c.precision for c in curves], axis=0))
    with pytest.raises(ValueError, match="thresholds"):
        C.mean_prt_curves([curves[0], C.pr_t_curve(*_random_problem(0), n_thresholds=201)])


def test_linear_pr_auc_differs_from_roc_space_interpolation_on_sparse_curves():
    # one positive on top, then a tie of one positive with nine negatives: PR has two points far apart
    y = np.array([1, 1] + [0] * 9)
    s = np.array([2.0] + [1.0] * 10)
    pr = C.pr_curve(y, s)
    naive = C.linear_pr_auc(pr)
    proper = C.pr_auc_roc_interpolated(C.roc_curve(y, s))
    assert naive > proper + 0.1  # linear PR interpolation inflates the area (Davis & Goadrich 2006)


# ---------------------------------------------------------------------------- t-test


def test_argmax_precision_ttest_is_welch_by_default():
    a = np.array([0.8, 0.82, 0.79, 0.85, 0.81])
    b = np.array([0.7, 0.75, 0.72, 0.69, 0.74, 0.71])
    res = C.argmax_precision_ttest(a, b)
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert res.pvalue == pytest.approx(ref.pvalue)
    with pytest.raises(ValueError, match="precision_b"):
        C.argmax_precision_ttest(a, [0.5, np.nan])
    with pytest.raises(ValueError, match="at least 2"):
        C.argmax_precision_ttest(a, [0.5])


def test_threshold_grid_is_exact_and_a_score_at_a_threshold_counts_as_positive():
    """T = {i / 100}: each threshold is the division i / 100 (np.linspace is one ulp above it at 10 of the 101), and
    a score equal to a threshold is predicted positive (s >= t), as documented."""
    from medeval.metrics.curves import fixed_threshold_grid, pr_t_curve

    grid = fixed_threshold_grid()
    assert [float(t) for t in grid] == [i / 100 for i in range(101)]
    assert all(float(f"{i / 100}") == grid[i] for i in range(101))
    for i in range(1, 100):
        score = i / 100  # the positive sits exactly on threshold i
        curve = pr_t_curve([0, 1], [0.0, score], normalize=False)
        assert curve.recall[i] == 1.0 and curve.recall[i + 1] == 0.0, i


# --------------------------------------------------------------------------------------------------
# the one AUC: tie policies, masks, rows, the undefined case


def _pair_count_auc(y, s, tie_credit):
    pos, neg = s[y == 1], s[y == 0]
    return np.mean([[1.0 if u > v else tie_credit if u == v else 0.0 for v in neg] for u in pos])


def test_roc_auc_tie_policies_masks_and_rows_against_pair_counting_and_sklearn():
    rng = np.random.default_rng(21)
    checked = 0
    for _ in range(150):
        n = int(rng.integers(2, 30))
        y = rng.integers(0, 2, n)
        s = np.round(rng.random(n), 1)  # many ties
        if y.min() == y.max():
            continue
        assert C.roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        for ties, credit in (("half", 0.5), ("correct", 1.0), ("incorrect", 0.0)):
            assert C.roc_auc(y, s, ties=ties) == pytest.approx(_pair_count_auc(y, s, credit), abs=1e-12)
        keep = rng.random(n) < 0.6
        if 0 < y[keep].sum() < keep.sum():
            assert C.roc_auc(y, s, sample_mask=keep) == pytest.approx(roc_auc_score(y[keep], s[keep]), abs=1e-12)
            checked += 1
    assert checked > 50
    Y, S = rng.integers(0, 2, (6, 40)), rng.random((6, 40))
    Y[2] = 1  # a row without negatives
    rows = C.roc_auc(Y, S, undefined=np.nan)
    assert np.isnan(rows[2]) and rows.shape == (6,)
    for i in (0, 1, 3, 4, 5):
        assert rows[i] == pytest.approx(roc_auc_score(Y[i], S[i]), abs=1e-12)


def test_roc_auc_undefined_policy_and_bad_arguments():
    with pytest.raises(ValueError, match=r"y_true must contain both classes.*pos=3, neg=0"):
        C.roc_auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"in row 1"):
        C.roc_auc([[0, 1], [1, 1]], [[0.1, 0.2], [0.3, 0.4]])
    assert np.isnan(C.roc_auc([0, 0], [0.1, 0.2], undefined=np.nan))
    assert C.roc_auc([0, 0], [0.1, 0.2], undefined=0.5) == 0.5
    assert np.isnan(C.roc_auc([0, 1, 1], [0.1, 0.2, 0.3], sample_mask=[True, False, False], undefined=np.nan))
    with pytest.raises(ValueError, match="ties must be one of"):
        C.roc_auc([0, 1], [0.1, 0.2], ties="average")
    with pytest.raises(ValueError, match="undefined must be 'raise' or a number"):
        C.roc_auc([0, 1], [0.1, 0.2], undefined="nan please")
    with pytest.raises(ValueError, match="y_score must be finite"):
        C.roc_auc([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError, match="sample_mask must be boolean"):
        C.roc_auc([0, 1, 1], [0.1, 0.2, 0.3], sample_mask=[1, 0, 1])
    with pytest.raises(ValueError, match=r"sample_mask of shape \(2,\) does not broadcast"):
        C.roc_auc([0, 1, 1], [0.1, 0.2, 0.3], sample_mask=[True, False])
    with pytest.raises(ValueError, match="undefined must be"):
        C.roc_auc([0, 1], [0.1, 0.2], undefined=True)


# --------------------------------------------------------------------------------------------------
# issue #32: normalisation of huge scores, non-finite curves, a single threshold


def test_min_max_normalize_of_scores_spanning_more_than_the_largest_double():
    big = np.finfo(np.float64).max
    assert C.min_max_normalize([-1e308, 0, 1e308]).tolist() == [0.0, 0.5, 1.0]
    assert C.min_max_normalize([-big, big, 0.0]).tolist() == [0.0, 1.0, 0.5]
    s = np.array([-1e308, -5e307, 0, 2e307, 1e308])
    np.testing.assert_allclose(C.min_max_normalize(s), C.min_max_normalize(s / 1e300), rtol=1e-15)
    curve = C.pr_t_curve([0, 0, 1, 1, 1], s)
    assert not np.isnan(curve.precision).any() and curve.tp[0] == 3 and curve.tp[-1] == 1
    assert C.pr_t_curve([0, 0, 1, 1, 1], s).tp.tolist() == C.pr_t_curve([0, 0, 1, 1, 1], s / 1e300).tp.tolist()


def test_vertical_average_refuses_non_finite_curves_and_grids():
    with pytest.raises(ValueError, match="x and y must be finite"):
        C.vertical_average([[0, np.nan, 1]], [[0, 0.5, 1]], [0, 0.5, 1])
    with pytest.raises(ValueError, match="x and y must be finite"):
        C.vertical_average([[0, 0.5, 1]], [[0, np.nan, 1]], [0, 0.5, 1])
    with pytest.raises(ValueError, match="grid must be a non-empty 1-D array of finite values"):
        C.vertical_average([[0, 0.5, 1]], [[0, 0.5, 1]], [0, np.nan, 1])


def test_pr_t_curve_at_one_raw_threshold_counts_a_score_at_it_as_positive():
    c = C.pr_t_curve([1, 0, 0, 1], [0.35, 0.35, 0.1, 0.9], thresholds=[0.35], normalize=False)
    assert (c.tp.tolist(), c.fp.tolist(), c.fn.tolist(), c.tn.tolist()) == ([2], [1], [0], [1])
    with pytest.raises(ValueError, match=">= 1 value"):
        C.pr_t_curve([1, 0], [0.3, 0.1], thresholds=[], normalize=False)


@pytest.mark.parametrize("n_thresholds", [2, 5, 101, 1001])
@pytest.mark.parametrize("kind", ["uniform", "on_thresholds", "tied", "unnormalised", "huge"])
def test_the_grid_counts_equal_counting_every_threshold_by_comparison(kind, n_thresholds):
    """pr_t_curve's O(n) count on the default grid (_grid_counts_at_or_above) against s >= t_i counted one threshold
    at a time, on scores that sit exactly on thresholds, heavy ties, raw scores beyond [0, 1] and huge ones."""
    rng = np.random.default_rng(n_thresholds)
    t = C.fixed_threshold_grid(n_thresholds)
    s = {"uniform": rng.random(5000),
         "on_thresholds": rng.choice(t, 5000),
         "tied": rng.choice([0.0, 0.35, 0.41, 0.95, 1.0], 5000),
         "unnormalised": rng.normal(0.5, 2.0, 5000),
         "huge": rng.choice([-1e300, -1.0, 0.5, 2.0, 1e300], 5000)}[kind]
    y = rng.random(s.size) < 0.3
    c = C.pr_t_curve(y, s, n_thresholds=n_thresholds, normalize=False)
    assert c.tp.tolist() == [int(np.sum(s[y] >= ti)) for ti in t]
    assert c.fp.tolist() == [int(np.sum(s[~y] >= ti)) for ti in t]
    sorted_path = C.pr_t_curve(y, s, thresholds=t, normalize=False)  # the sort-based count of given thresholds
    assert np.array_equal(c.tp, sorted_path.tp) and np.array_equal(c.fp, sorted_path.fp)
