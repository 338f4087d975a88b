"""Tests of medeval.metrics.multilabel: the chapter's worked toy example, the real ChestX-ray14 label
table, scikit-learn and torchmetrics as oracles, metric identities and the undefined-value policy."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from sklearn import metrics as skm

from medeval.metrics import multilabel as ml

# ------------------------------------------------------------------------------------------------
# the chapter's toy example (Tab. toymlpred / toymlmet; code version of f2)
# ------------------------------------------------------------------------------------------------
TOY_Y = np.array([[0, 1, 0, 0, 0], [1, 0, 1, 1, 1], [0, 1, 0, 0, 1]])
TOY_F = [
    np.array([[0.1, 0.9, 0.4, 0.3, 0.2], [0.6, 0.7, 0.8, 0.9, 0.6], [0.1, 0.4, 0.2, 0.1, 0.3]]),
    np.array([[0.2, 0.4, 0.1, 0.4, 0.3], [0.3, 0.2, 0.7, 0.9, 0.8], [0.1, 0.2, 0.2, 0.3, 0.8]]),
    np.array([[0.1, 0.4, 0.1, 0.7, 0.2], [0.7, 0.1, 0.9, 0.8, 0.7], [0.9, 0.8, 0.1, 0.2, 0.6]]),
]
TOY_F2_PRINTED = TOY_F[1].copy()
TOY_F2_PRINTED[2, 1] = 0.9  # the rendered table prints 0.9 where the code matrix has 0.2


def _random_case(seed, n=300, k=7, density=0.25, ties=True):
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < density).astype(int)
    y[:, 0] = 0
    y[rng.integers(n), 0] = 1  # every label has at least one positive and one negative
    y[:, 1] = 1
    y[rng.integers(n), 1] = 0
    p = rng.random((n, k))
    if ties:
        p = np.round(p, 1)  # many tied scores
    return y, p


def test_toy_bipartitions():
    h = [ml.binarize(f).astype(int) for f in TOY_F]
    np.testing.assert_array_equal(h[0], [[0, 1, 0, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(h[1], [[0, 0, 0, 0, 0], [0, 0, 1, 1, 1], [0, 0, 0, 0, 1]])
    np.testing.assert_array_equal(h[2], [[0, 0, 0, 1, 0], [1, 0, 1, 1, 1], [1, 1, 0, 0, 1]])


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        (lambda f: ml.hamming_loss(TOY_Y, ml.binarize(f)), (0.2, 0.2, 0.2)),
        (lambda f: ml.subset_accuracy(TOY_Y, ml.binarize(f)), (1 / 3, 0.0, 1 / 3)),
        (lambda f: ml.example_average_precision(TOY_Y, f, ties="last"), (0.9625, 0.75, 0.6944)),
        (lambda f: ml.example_average_precision(TOY_Y, f, ties="max"), (0.9667, 0.75, 0.6944)),
        (lambda f: ml.example_average_precision(TOY_Y, f, ties="min"), (1.0, 0.9444, 0.75)),
        (lambda f: ml.f1_micro(TOY_Y, ml.binarize(f)), (0.7692, 0.7273, 0.8)),
        (lambda f: ml.f1_macro(TOY_Y, ml.binarize(f)), (0.8333, 0.6, 0.8)),
        (
            lambda f: ml.f1_macro(TOY_Y, ml.binarize(f), convention="f_of_macro_pr", zero_division="diagnose"),
            (0.8471, 0.6, 0.8471),
        ),
        (lambda f: ml.mean_average_precision(TOY_Y, f), (0.9667, 0.9667, 0.9)),
        (lambda f: ml.macro_auc(TOY_Y, f, ties="half"), (0.9, 0.95, 0.9)),
        (lambda f: ml.coverage_error(TOY_Y, f), (2.6667, 3.3333, 3.0)),
        (lambda f: ml.ranking_loss(TOY_Y, f), (0.1667, 0.1944, 0.1944)),
    ],
)
def test_toy_table_values(metric, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        got = [metric(f) for f in TOY_F]
    np.testing.assert_allclose(got, expected, atol=5e-5)


def test_toy_claims_of_the_chapter():
    h = [ml.binarize(f) for f in TOY_F]
    hloss = [ml.hamming_loss(TOY_Y, x) for x in h]
    sacc = [ml.subset_accuracy(TOY_Y, x) for x in h]
    ap = [ml.example_average_precision(TOY_Y, f, ties="last") for f in TOY_F]
    f1mi = [ml.f1_micro(TOY_Y, x) for x in h]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        f1ma_mldr040 = [ml.f1_macro(TOY_Y, x, convention="f_of_macro_pr", zero_division="diagnose") for x in h]
    f1ma_text = [ml.f1_macro(TOY_Y, x) for x in h]
    # "No one classifier is best in terms of all metrics."
    best = {int(np.argmin(hloss)), int(np.argmax(sacc)), int(np.argmax(ap)), int(np.argmax(f1mi))}
    assert len(best) > 1
    # "There is no difference between the classifiers in terms of the hamming loss."
    assert hloss[0] == hloss[1] == hloss[2]
    # "h1 and h3 are equivalent in hloss, subsetacc and F1 macro; h1 better AP, h3 better F1 micro":
    assert sacc[0] == sacc[2] and ap[0] > ap[2] and f1mi[2] > f1mi[0]
    assert f1ma_mldr040[0] == pytest.approx(f1ma_mldr040[2], abs=1e-12)  # holds under mldr 0.4.0 ...
    assert f1ma_text[0] != pytest.approx(f1ma_text[2], abs=1e-3)  # ... but not under the text's formula
    # "F1 micro and F1 macro measure different things": they rank the classifiers differently
    assert np.argmax(f1mi) != np.argmax(f1ma_text)


def test_toy_printed_f2_contradicts_the_hamming_claim():
    h2 = ml.binarize(TOY_F2_PRINTED)
    assert ml.hamming_loss(TOY_Y, h2) == pytest.approx(2 / 15)
    assert ml.hamming_loss(TOY_Y, h2) != ml.hamming_loss(TOY_Y, ml.binarize(TOY_F[0]))
    assert ml.f1_macro(TOY_Y, h2) == pytest.approx(0.7333, abs=5e-5)


# ------------------------------------------------------------------------------------------------
# identities
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_hamming_loss_equals_micro_macro_and_example_error(seed):
    y, p = _random_case(seed)
    yp = p > 0.5
    h = ml.hamming_loss(y, yp)
    assert ml.micro_average(ml.binary_error_rate, y, yp) == pytest.approx(h, abs=1e-15)
    assert ml.macro_average(ml.binary_error_rate, y, yp) == pytest.approx(h, abs=1e-15)
    assert ml.example_average(ml.binary_error_rate, y, yp) == pytest.approx(h, abs=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_hamming_loss_subset_accuracy_bounds(seed):
    y, p = _random_case(seed, density=0.1)
    yp = p > 0.7
    h, s, k = ml.hamming_loss(y, yp), ml.subset_accuracy(y, yp), y.shape[1]
    assert (1 - s) / k <= h + 1e-15
    assert h <= 1 - s + 1e-15


def test_perfect_prediction_scores_perfectly():
    y, _ = _random_case(0)
    p = y.astype(float)
    yp = y.astype(bool)
    assert ml.hamming_loss(y, yp) == 0 and ml.subset_accuracy(y, yp) == 1
    assert ml.f1_micro(y, yp) == 1 and ml.f1_macro(y, yp) == 1
    assert ml.f1_macro(y, yp, convention="f_of_macro_pr") == 1
    np.testing.assert_array_equal(ml.per_label_auc(y, p), 1)
    np.testing.assert_array_equal(ml.per_label_average_precision(y, p), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        assert ml.mean_average_precision(y, p) == 1 and ml.example_average_precision(y, p) == 1
        assert ml.example_auc(y, p) == 1 and ml.ranking_loss(y, p) == 0 and ml.one_error(y, p) == 0
        assert ml.example_f1(y, yp) == 1 and ml.example_accuracy(y, yp) == 1


def test_all_zero_prediction_hamming_loss_is_label_density():
    y, _ = _random_case(3, density=0.05)
    assert ml.hamming_loss(y, np.zeros_like(y)) == pytest.approx(ml.label_density(y), abs=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_generic_aggregators_agree_with_fast_functions(seed):
    y, p = _random_case(seed, n=120)
    yp = p > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        assert ml.example_average(ml.binary_f1, y, yp) == pytest.approx(ml.example_f1(y, yp))
        assert ml.macro_average(ml.binary_f1, y, yp) == pytest.approx(ml.f1_macro(y, yp))
        assert ml.micro_average(ml.binary_f1, y, yp) == pytest.approx(ml.f1_micro(y, yp))
        for ties in ("correct", "half"):
            assert ml.macro_average(ml.binary_auc, y, p, ties=ties) == pytest.approx(ml.macro_auc(y, p, ties=ties))
            assert ml.example_average(ml.binary_auc, y, p, ties=ties) == pytest.approx(ml.example_auc(y, p, ties=ties))
        for ties in ("max", "min", "last", "first"):
            assert ml.macro_average(ml.binary_average_precision, y, p, ties=ties) == pytest.approx(
                ml.mean_average_precision(y, p, ties=ties)
            )
            assert ml.example_average(ml.binary_average_precision, y, p, ties=ties) == pytest.approx(
                ml.example_average_precision(y, p, ties=ties)
            )


def test_multilabel_metrics_equals_individual_functions():
    y, p = _random_case(7, n=500)
    r = ml.multilabel_metrics(y, p, threshold=0.45)
    yp = p > 0.45
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        assert r["hamming_loss"] == ml.hamming_loss(y, yp)
        assert r["f1_micro"] == ml.f1_micro(y, yp) and r["f1_macro"] == ml.f1_macro(y, yp)
        assert r["f1_macro_f_of_macro_pr"] == ml.f1_macro(y, yp, convention="f_of_macro_pr")
        assert r["mAP"] == pytest.approx(ml.mean_average_precision(y, p))
        np.testing.assert_allclose(r["per_label_auc"], ml.per_label_auc(y, p))
        assert r["macro_auc"] == pytest.approx(ml.macro_auc(y, p))
        assert r["example_ap"] == pytest.approx(ml.example_average_precision(y, p))
        assert r["example_auc"] == pytest.approx(ml.example_auc(y, p))
        assert r["ranking_loss"] == pytest.approx(ml.ranking_loss(y, p))
        assert r["coverage_error"] == pytest.approx(ml.coverage_error(y, p))
        assert r["one_error"] == pytest.approx(ml.one_error(y, p))
        assert r["n_undefined_example_ap"] == int(np.sum(y.sum(1) == 0))


# ------------------------------------------------------------------------------------------------
# scikit-learn as the oracle (random inputs, with ties)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_against_sklearn_bipartition_measures(seed):
    y, p = _random_case(seed)
    yp = p > 0.5
    yp[:, 2] = False  # a label never predicted: undefined precision
    assert ml.hamming_loss(y, yp) == pytest.approx(skm.hamming_loss(y, yp))
    assert ml.subset_accuracy(y, yp) == pytest.approx(skm.accuracy_score(y, yp))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for zd in (0.0, 1.0):
            assert ml.f1_micro(y, yp, zero_division=zd) == pytest.approx(skm.f1_score(y, yp, average="micro", zero_division=zd))
            assert ml.f1_macro(y, yp, zero_division=zd) == pytest.approx(skm.f1_score(y, yp, average="macro", zero_division=zd))
            np.testing.assert_allclose(
                ml.per_label_precision(y, yp, zero_division=zd), skm.precision_score(y, yp, average=None, zero_division=zd)
            )
            assert ml.precision_macro(y, yp, zero_division=zd) == pytest.approx(
                skm.precision_score(y, yp, average="macro", zero_division=zd)
            )
            assert ml.recall_micro(y, yp, zero_division=zd) == pytest.approx(
                skm.recall_score(y, yp, average="micro", zero_division=zd)
            )
            for ours, name in ((ml.example_precision, "precision_score"), (ml.example_recall, "recall_score"),
                               (ml.example_f1, "f1_score")):
                ref = getattr(skm, name)(y, yp, average="samples", zero_division=zd)
                assert ours(y, yp, zero_division=zd) == pytest.approx(ref)
            assert ml.example_accuracy(y, yp, zero_division=zd) == pytest.approx(
                skm.jaccard_score(y, yp, average="samples", zero_division=zd)
            )
        # NaN: sklearn excludes the undefined labels from the macro mean, as we do
        assert ml.precision_macro(y, yp) == pytest.approx(
            skm.precision_score(y, yp, average="macro", zero_division=np.nan)
        )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", [True, False])
def test_against_sklearn_ranking_measures(seed, ties):
    y, p = _random_case(seed, ties=ties)
    np.testing.assert_allclose(ml.per_label_auc(y, p, ties="half"), skm.roc_auc_score(y, p, average=None), atol=1e-12)
    assert ml.macro_auc(y, p, ties="half") == pytest.approx(skm.roc_auc_score(y, p, average="macro"), abs=1e-12)
    np.testing.assert_allclose(
        ml.per_label_average_precision(y, p), skm.average_precision_score(y, p, average=None), atol=1e-12
    )
    assert ml.mean_average_precision(y, p) == pytest.approx(skm.average_precision_score(y, p, average="macro"), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        assert ml.example_average_precision(y, p, undefined=1.0) == pytest.approx(
            skm.label_ranking_average_precision_score(y, p), abs=1e-12
        )
        assert ml.coverage_error(y, p, undefined=0.0) == pytest.approx(skm.coverage_error(y, p), abs=1e-12)
        assert ml.ranking_loss(y, p, undefined=0.0) == pytest.approx(skm.label_ranking_loss(y, p), abs=1e-12)
    # micro AUC: the paper's y*, p* stacking
    assert ml.micro_average(ml.binary_auc, y, p, ties="half") == pytest.approx(
        skm.roc_auc_score(y, p, average="micro"), abs=1e-12
    )


# ------------------------------------------------------------------------------------------------
# torchmetrics as the oracle
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_against_torchmetrics(seed):
    torch = pytest.importorskip("torch")
    tmf = pytest.importorskip("torchmetrics.functional.classification")
    y, p = _random_case(seed, n=400, ties=False)
    p = p.astype(np.float32).astype(np.float64)  # same values on both sides
    yt, pt = torch.tensor(y), torch.tensor(p)
    k = y.shape[1]
    yp = p > 0.5  # torchmetrics thresholds with preds > threshold, the chapter's rule
    np.testing.assert_allclose(ml.per_label_auc(y, p, ties="half"), tmf.multilabel_auroc(pt, yt, k, average=None).numpy(), atol=1e-6)
    np.testing.assert_allclose(
        ml.per_label_average_precision(y, p), tmf.multilabel_average_precision(pt, yt, k, average=None).numpy(), atol=1e-6
    )
    assert ml.f1_micro(y, yp) == pytest.approx(tmf.multilabel_f1_score(pt, yt, k, average="micro").item(), abs=1e-6)
    assert ml.f1_macro(y, yp, zero_division=0.0) == pytest.approx(
        tmf.multilabel_f1_score(pt, yt, k, average="macro").item(), abs=1e-6
    )
    assert ml.hamming_loss(y, yp) == pytest.approx(tmf.multilabel_hamming_distance(pt, yt, k).item(), abs=1e-6)
    assert ml.subset_accuracy(y, yp) == pytest.approx(tmf.multilabel_exact_match(pt, yt, k).item(), abs=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        assert ml.example_average_precision(y, p, undefined=1.0) == pytest.approx(
            tmf.multilabel_ranking_average_precision(pt, yt, k).item(), abs=1e-6
        )
        assert ml.coverage_error(y, p, undefined=0.0) == pytest.approx(tmf.multilabel_coverage_error(pt, yt, k).item(), abs=1e-5)
        assert ml.ranking_loss(y, p, undefined=0.0) == pytest.approx(tmf.multilabel_ranking_loss(pt, yt, k).item(), abs=1e-6)


# ------------------------------------------------------------------------------------------------
# documented differences (tie handling, conventions)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_auc_ties_correct_exceeds_standard_by_half_the_tied_pairs(seed):
    rng = np.random.default_rng(seed)
    y = rng.random(200) < 0.3
    p = rng.integers(0, 6, size=200).astype(float)  # heavy ties
    pos, neg = p[y], p[~y]
    tied = np.sum(pos[:, None] == neg[None, :])
    correct = ml.binary_auc(y, p)
    half = ml.binary_auc(y, p, ties="half")
    incorrect = ml.binary_auc(y, p, ties="incorrect")
    n_pairs = y.sum() * (~y).sum()
    assert half == pytest.approx(skm.roc_auc_score(y, p), abs=1e-12)
    assert correct - half == pytest.approx(0.5 * tied / n_pairs, abs=1e-12)
    assert half - incorrect == pytest.approx(0.5 * tied / n_pairs, abs=1e-12)
    # brute force of the chapter's formula sum I(p_u >= p_v) / (n+ n-)
    assert correct == pytest.approx(np.sum(pos[:, None] >= neg[None, :]) / n_pairs, abs=1e-12)


def test_auc_without_ties_equals_sklearn_for_every_convention():
    rng = np.random.default_rng(0)
    y = rng.random(100) < 0.4
    p = rng.random(100)
    ref = skm.roc_auc_score(y, p)
    for ties in ("correct", "half", "incorrect"):
        assert ml.binary_auc(y, p, ties=ties) == pytest.approx(ref, abs=1e-12)


def _ap_brute_force(y, p, ties):
    """Direct transcription of the chapter's AP and of mldr's average_precision (R rank ties)."""
    n = len(p)
    pos = np.flatnonzero(y)
    if ties in ("max", "min"):
        ranks = np.array([np.sum(p >= p[i]) if ties == "max" else 1 + np.sum(p > p[i]) for i in range(n)])
        return np.mean([np.sum(p[pos] >= p[i]) / ranks[i] for i in pos])
    # ordinal ranks of R rank(-p, ties.method=ties)
    keys = [(-p[i], i if ties == "first" else -i) for i in range(n)]
    order = sorted(range(n), key=lambda i: keys[i])
    ranks = np.empty(n, int)
    ranks[order] = np.arange(1, n + 1)
    return np.mean([np.sum(ranks[pos] <= ranks[i]) / ranks[i] for i in pos])


@pytest.mark.parametrize("ties", ["max", "min", "last", "first"])
@pytest.mark.parametrize("seed", range(10))
def test_average_precision_tie_conventions_brute_force(ties, seed):
    rng = np.random.default_rng(seed)
    y = rng.random(12) < 0.4
    y[0] = True
    p = rng.integers(0, 4, size=12) / 4
    assert ml.binary_average_precision(y, p, ties=ties) == pytest.approx(_ap_brute_force(y, p, ties), abs=1e-12)


def test_min_rank_average_precision_can_exceed_one():
    # two tied positives at the top: numerator 2, min rank 1 (documented; not a precision)
    assert ml.binary_average_precision([1, 1, 0], [0.9, 0.9, 0.1], ties="min") == pytest.approx(2.0)
    assert ml.binary_average_precision([1, 1, 0], [0.9, 0.9, 0.1], ties="max") == pytest.approx(1.0)


def test_label_permutation_invariance():
    y, p = _random_case(1)
    perm = np.array([3, 0, 6, 1, 5, 2, 4])
    yp = p > 0.5
    assert ml.f1_macro(y[:, perm], yp[:, perm]) == pytest.approx(ml.f1_macro(y, yp))
    assert ml.f1_micro(y[:, perm], yp[:, perm]) == pytest.approx(ml.f1_micro(y, yp))
    np.testing.assert_allclose(ml.per_label_auc(y[:, perm], p[:, perm]), ml.per_label_auc(y, p)[perm])


def test_threshold_convention():
    p = np.array([[0.5, 0.6, 0.4]])
    np.testing.assert_array_equal(ml.binarize(p), [[False, True, False]])  # the chapter: a > 0.5
    np.testing.assert_array_equal(ml.binarize(p, inclusive=True), [[True, True, False]])  # mldr: >=
    np.testing.assert_array_equal(ml.binarize(p, [0.4, 0.7, 0.3]), [[True, False, True]])
    with pytest.raises(ValueError, match="threshold"):
        ml.binarize(p, [0.5, 0.5])


def test_one_error_tie_conventions():
    y = np.array([[0, 1, 0], [1, 0, 0]])
    p = np.array([[0.9, 0.9, 0.1], [0.2, 0.5, 0.1]])
    assert ml.one_error(y, p, ties="first") == pytest.approx(1.0)  # argmax takes the first tied label
    assert ml.one_error(y, p, ties="expected") == pytest.approx((0.5 + 1.0) / 2)


# ------------------------------------------------------------------------------------------------
# the undefined-value policy
# ------------------------------------------------------------------------------------------------
def test_label_without_positives_is_excluded_and_counted():
    y, p = _random_case(2)
    y[:, 3] = 0
    per = ml.per_label_auc(y, p)
    assert np.isnan(per[3]) and np.all(np.isfinite(np.delete(per, 3)))
    with pytest.warns(ml.UndefinedMetricWarning, match="1 of 7 labels"):
        value, n = ml.macro_auc(y, p, return_count=True)
    assert n == 1 and value == pytest.approx(np.mean(np.delete(per, 3)))
    with pytest.warns(ml.UndefinedMetricWarning):
        value, n = ml.mean_average_precision(y, p, return_count=True)
    assert n == 1 and value == pytest.approx(np.nanmean(ml.per_label_average_precision(y, p)))
    # an explicit substitute (mldr's macro_auc uses 0.5) is applied and still counted
    with pytest.warns(ml.UndefinedMetricWarning):
        value, n = ml.macro_auc(y, p, undefined=0.5, return_count=True)
    assert n == 1 and value == pytest.approx((np.nansum(per) + 0.5) / 7)


def test_rows_without_labels_are_excluded_and_counted():
    y, p = _random_case(4, density=0.1)
    n_empty = int(np.sum(y.sum(1) == 0))
    assert n_empty > 0
    for fn in (ml.example_average_precision, ml.one_error, ml.coverage_error):
        with pytest.warns(ml.UndefinedMetricWarning, match=f"{n_empty} of"):
            value, n = fn(y, p, return_count=True)
        assert n == n_empty and np.isfinite(value)
    keep = y.sum(1) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        assert ml.example_average_precision(y, p) == pytest.approx(skm.label_ranking_average_precision_score(y[keep], p[keep]))
        # scikit-learn's convention = substituting 1 for the empty rows
        assert ml.example_average_precision(y, p, undefined=1.0) == pytest.approx(skm.label_ranking_average_precision_score(y, p))


def test_f1_when_nothing_true_and_nothing_predicted():
    y = np.array([[1, 0], [0, 0]])
    yp = np.array([[1, 0], [0, 0]])
    assert ml.binary_f1([0, 1], [0, 0], zero_division="diagnose") == 0.0  # defined: 0 (0/0: test_common)
    with pytest.warns(ml.UndefinedMetricWarning):
        value, n = ml.f1_macro(y, yp, return_count=True)
    assert (value, n) == (1.0, 1)
    with pytest.warns(ml.UndefinedMetricWarning):
        assert ml.f1_macro(y, yp, zero_division=0.0) == 0.5
    with pytest.warns(ml.UndefinedMetricWarning):
        value, n = ml.example_f1(y, yp, return_count=True)
    assert (value, n) == (1.0, 1)


def test_f_of_macro_pr_with_mldr_diagnose_rule():
    # mldr 0.4.0's diagnose rule: an undefined precision is 1 only if tp + fp + fn = 0
    h2 = ml.binarize(TOY_F[1])
    with pytest.warns(ml.UndefinedMetricWarning):
        assert ml.f1_macro(TOY_Y, h2, convention="f_of_macro_pr", zero_division="diagnose") == pytest.approx(0.6)
    with pytest.warns(ml.UndefinedMetricWarning):  # excluded instead: P = 1 over the 3 defined labels
        assert ml.f1_macro(TOY_Y, h2, convention="f_of_macro_pr") == pytest.approx(2 * 1 * 0.6 / 1.6)


# ------------------------------------------------------------------------------------------------
# indicators
# ------------------------------------------------------------------------------------------------
def test_indicators_on_a_hand_built_matrix():
    y = np.array([[1, 0, 0], [1, 0, 0], [0, 0, 0], [1, 1, 0], [0, 0, 0], [0, 0, 0]])
    ind = ml.multilabel_indicators(y)
    assert ind == {"N": 6, "K": 3, "LCard": 4 / 6, "LDens": 4 / 18, "LDiv": 3, "PLDiv": 0.5, "PMax": 0.5}
    np.testing.assert_array_equal(ml.labels_per_example_histogram(y), [3, 2, 1, 0])
    sets, counts = ml.labelset_counts(y)
    np.testing.assert_array_equal(counts, [3, 2, 1])
    np.testing.assert_array_equal(sets[0], [0, 0, 0])
    with pytest.warns(ml.UndefinedMetricWarning):
        m = ml.conditional_cooccurrence(y)
    assert m[0, 1] == pytest.approx(1 / 3) and m[1, 0] == 1.0 and np.all(np.isnan(m[2]))


@pytest.mark.parametrize("seed", range(3))
def test_indicator_identities(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((500, 6)) < [0.3, 0.1, 0.5, 0.05, 0.2, 0.4]).astype(int)
    y[:, 1] |= y[:, 0] & (rng.random(500) < 0.5)  # some dependence
    assert ml.label_density(y) * y.shape[1] == pytest.approx(ml.label_cardinality(y))
    phi = ml.label_correlation(y)
    np.testing.assert_allclose(phi, np.corrcoef(y, rowvar=False), atol=1e-12)
    np.testing.assert_allclose(phi**2, ml.pairwise_chi2(y) / y.shape[0], atol=1e-10)
    m = ml.conditional_cooccurrence(y)
    counts = ml.label_counts(y)
    np.testing.assert_allclose(np.diag(m), 1)
    np.testing.assert_allclose(m * counts[:, None], (m * counts[:, None]).T, atol=1e-9)
    assert ml.label_diversity(y) == len({tuple(r) for r in y})
    assert ml.proportion_most_frequent_labelset(y) == max(Counter(map(tuple, y)).values()) / y.shape[0]


def test_pairwise_chi2_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    y = (rng.random((300, 4)) < 0.3).astype(int)
    chi2 = ml.pairwise_chi2(y)
    table = np.histogram2d(y[:, 0], y[:, 2], bins=2)[0]
    assert chi2[0, 2] == pytest.approx(scipy_stats.chi2_contingency(table, correction=False)[0])


# ------------------------------------------------------------------------------------------------
# threshold tuning
# ------------------------------------------------------------------------------------------------
def test_f1_optimal_thresholds_beat_every_candidate():
    y, p = _random_case(6, n=200)
    y[:, 4] = 0
    with pytest.warns(ml.UndefinedMetricWarning, match="label"):
        _ = ml.macro_auc(y, p)  # sanity: label 4 has no positives
    t = ml.f1_optimal_thresholds(y, p)
    assert np.isnan(t[4])
    for k in range(y.shape[1]):
        if k == 4:
            continue
        best = ml.binary_f1(y[:, k], p[:, k] > t[k])
        candidates = np.r_[np.unique(p[:, k]), p[:, k].min() - 1]
        brute = max(ml.binary_f1(y[:, k], p[:, k] > c, zero_division=0.0) for c in candidates)
        assert best == pytest.approx(brute)
    t_sub = ml.f1_optimal_thresholds(y, p, undefined=0.5)
    assert t_sub[4] == 0.5


# ------------------------------------------------------------------------------------------------
# input validation
# ------------------------------------------------------------------------------------------------
def test_bad_inputs_raise_clear_errors():
    y = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="Y must hold only 0 and 1"):
        ml.hamming_loss([[0, 2], [1, 0]], y)
    with pytest.raises(ValueError, match="Y_pred must have the shape"):
        ml.hamming_loss(y, [[0, 1]])
    with pytest.raises(ValueError, match="P must be finite"):
        ml.macro_auc(y, [[0.1, np.nan], [0.3, 0.2]])
    with pytest.raises(ValueError, match="P must have shape"):
        ml.macro_auc(y, [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    with pytest.raises(ValueError, match="2-D"):
        ml.label_cardinality([0, 1, 1])
    with pytest.raises(ValueError, match="ties must be one of"):
        ml.macro_auc(y, [[0.1, 0.2], [0.3, 0.2]], ties="average")
    with pytest.raises(ValueError, match="convention must be one of"):
        ml.f1_macro(y, y, convention="mldr")
    with pytest.raises(ValueError, match="zero_division"):
        ml.f1_micro(y, y, zero_division="warn")


# ------------------------------------------------------------------------------------------------
# exact facts of the shipped ChestX-ray14 label table (spec B.2 / B.7; checked against the loader)
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cxr14():
    from medeval.data.chestxray14 import LABELS, load_labels

    df = load_labels()
    return df, df[list(LABELS)].to_numpy(), LABELS


EXPECTED_COUNTS = {
    "Atelectasis": 11559, "Cardiomegaly": 2776, "Consolidation": 4667, "Edema": 2303, "Effusion": 13317,
    "Emphysema": 2516, "Fibrosis": 1686, "Hernia": 227, "Infiltration": 19894, "Mass": 5782, "Nodule": 6331,
    "Pleural_Thickening": 3385, "Pneumonia": 1431, "Pneumothorax": 5302,
}


def test_chestxray14_sizes_and_label_counts(cxr14):
    df, y, labels = cxr14
    assert y.shape == (112120, 14)
    assert df["patient_id"].nunique() == 30805
    assert dict(zip(labels, ml.label_counts(y).tolist(), strict=True)) == EXPECTED_COUNTS
    assert int(np.sum(y.sum(1) == 0)) == 60361  # "No Finding"
    # only Infiltration, Effusion and Atelectasis occur in more than 10% of the images
    frac = ml.label_counts(y) / y.shape[0]
    assert {labels[k] for k in np.flatnonzero(frac > 0.1)} == {"Infiltration", "Effusion", "Atelectasis"}


def test_chestxray14_indicators(cxr14):
    _, y, _ = cxr14
    ind = ml.multilabel_indicators(y)
    assert ind["LCard"] == pytest.approx(0.72401, abs=1e-5)
    assert ind["LDens"] == pytest.approx(0.051715, abs=1e-6)
    assert ind["LDiv"] == 801
    assert ind["PLDiv"] == 801 / 112120
    assert ind["PMax"] == 60361 / 112120
    sets, _ = ml.labelset_counts(y)
    assert not sets[0].any()  # the most frequent label set is the empty set
    # an all-zero prediction has Hamming loss = LDens (the text prints 0.0516; it is 0.0517)
    assert ml.hamming_loss(y, np.zeros_like(y)) == ind["LDens"]
    assert round(ind["LDens"], 4) == 0.0517


def test_chestxray14_labels_per_image_histogram(cxr14):
    _, y, _ = cxr14
    hist = ml.labels_per_example_histogram(y)
    np.testing.assert_array_equal(hist[:10], [60361, 30963, 14306, 4856, 1247, 301, 67, 16, 1, 2])
    assert hist[10:].sum() == 0 and hist.sum() == 112120  # maximum 9 labels, occurring twice


def test_chestxray14_correlation_and_cooccurrence(cxr14):
    _, y, labels = cxr14
    phi = ml.label_correlation(y)
    off = phi.copy()
    np.fill_diagonal(off, -np.inf)
    u, v = np.unravel_index(np.argmax(off), off.shape)
    assert {labels[u], labels[v]} == {"Emphysema", "Pneumothorax"}
    assert phi[u, v] == pytest.approx(0.17818, abs=5e-6)
    assert phi[u, v] ** 2 == pytest.approx(ml.pairwise_chi2(y)[u, v] / y.shape[0], abs=1e-10)
    assert ml.mean_pairwise_chi2(y) == pytest.approx(283.06, abs=0.01)
    m = ml.conditional_cooccurrence(y)
    c, e = labels.index("Cardiomegaly"), labels.index("Effusion")
    assert m[c, e] == pytest.approx(0.383, abs=5e-4) and m[e, c] == pytest.approx(0.080, abs=5e-4)
    pair_counts = ml.label_pair_counts(y)[np.triu_indices(14, 1)]
    assert pair_counts.min() >= 1 and int(np.sum(pair_counts < 5)) == 4


# --------------------------------------------------------------------------------------------------
# issue #32: thresholds that reproduce their cut, scores that must be finite


def _best_f1(y, p):
    """The largest F1 over every cut of the scores (brute force)."""
    cuts = [p > t for t in np.unique(p)] + [np.ones_like(y, dtype=bool)]
    return max(skm.f1_score(y, c, zero_division=0) for c in cuts)


@pytest.mark.parametrize("upper, lower", [
    (0.7, np.nextafter(0.7, 0)),  # adjacent doubles: 0.5 * (a + b) rounds to a
    (1.7e308, 1.6e308),  # a + b overflows to inf
    (1.7e308, -1.7e308),
    (1e-323, 5e-324),  # subnormals
    (np.nextafter(0.0, 1), 0.0),
])
def test_f1_optimal_threshold_reproduces_its_cut(upper, lower):
    Y = np.array([[1], [0]])
    P = np.array([[upper], [lower]])
    t = ml.f1_optimal_thresholds(Y, P)
    assert np.isfinite(t).all() and lower <= t[0] < upper
    assert ml.binarize(P, t).ravel().tolist() == [True, False]


def test_f1_optimal_thresholds_attain_the_best_f1_on_adjacent_doubles():
    rng = np.random.default_rng(5)
    base = np.round(0.1 + 0.9 * rng.random((60, 4)), 1)
    P = base + rng.integers(0, 3, base.shape) * np.spacing(base)  # scores one or two ulps apart
    Y = (rng.random(P.shape) < 0.4).astype(int)
    Y[0] = 1
    t = ml.f1_optimal_thresholds(Y, P)
    got = ml.per_label_f1(Y, ml.binarize(P, t))
    want = [_best_f1(Y[:, k], P[:, k]) for k in range(P.shape[1])]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_binarize_refuses_non_finite_scores(bad):
    with pytest.raises(ValueError, match=r"P must be finite \(no NaN or inf\)"):
        ml.binarize([[bad, 0.7]])
    with pytest.raises(ValueError, match="P must be finite"):
        ml.binarize([bad, 0.7], inclusive=True)
