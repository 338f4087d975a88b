"""Tests of medeval.metrics.split_quality on tiny hand-built matrices and against brute-force loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from medeval.metrics import split_quality as sq
from medeval.metrics.multilabel import UndefinedMetricWarning

# 6 examples x 3 labels; two folds {0,1,2} and {3,4,5}
Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 1], [0, 0, 0], [1, 1, 0]])
FOLDS = [np.array([0, 1, 2]), np.array([3, 4, 5])]


def test_hand_built_label_distribution():
    # D = (4, 3, 1): ratios 2, 1, 0.2; fold 0: S = (2, 2, 0) -> 2, 2, 0; fold 1: S = (2, 1, 1) -> 2, 0.5, 0.5
    # |dev| fold 0 = (0, 1, 0.2), fold 1 = (0, 0.5, 0.3) -> per label (0, 0.75, 0.25) -> LD = 1/3
    assert sq.label_distribution(Y, FOLDS) == pytest.approx(1 / 3)


def test_hand_built_label_pair_distribution():
    # pairs (0,1), (0,2), (1,2): D* = (2, 1, 0) -> ratios 0.5, 0.2, 0
    # fold 0: (1, 0, 0) -> 0.5, 0, 0; fold 1: (1, 1, 0) -> 0.5, 0.5, 0 -> per pair (0, 0.25, 0)
    assert sq.label_pair_distribution(Y, FOLDS) == pytest.approx(0.25 / 3)
    counts, sizes = sq.fold_label_pair_counts(Y, FOLDS)
    np.testing.assert_array_equal(counts, [[1, 0, 0], [1, 1, 0]])
    np.testing.assert_array_equal(sizes, [3, 3])


def test_hand_built_zero_counts():
    assert sq.folds_missing_a_label(Y, FOLDS) == 1
    assert sq.fold_label_zeros(Y, FOLDS) == 1
    # text: only pair (0,1) has >= J = 2 positives, and it is present in both folds
    assert sq.fold_label_pair_zeros(Y, FOLDS) == 0
    assert sq.fold_label_pair_zeros(Y, FOLDS, min_pair_count=1) == 1  # pair (0,2) missing from fold 0
    # code: (3 zero fold-pairs - 3 pairs with < 5 positives) / (3 pairs * 2 folds)
    assert sq.fold_label_pair_zeros(Y, FOLDS, variant="code") == 0.0
    assert sq.fold_label_pair_zeros(Y, FOLDS, variant="code", min_pair_count=2) == pytest.approx(1 / 6)


def test_example_distribution():
    assert sq.example_distribution(FOLDS, 6) == 0.0
    assert sq.example_distribution([np.array([0, 1]), np.array([2, 3, 4, 5])], 6) == 1.0
    assert sq.example_distribution(FOLDS, 6, desired_sizes=[2, 4]) == 1.0


def test_fold_formats_are_equivalent():
    assignment = np.array([0, 0, 0, 1, 1, 1])
    pairs = [(np.array([3, 4, 5]), np.array([0, 1, 2])), (np.array([0, 1, 2]), np.array([3, 4, 5]))]
    ref = sq.split_quality_measures(Y, FOLDS)
    assert sq.split_quality_measures(Y, assignment) == ref
    assert sq.split_quality_measures(Y, pairs) == ref
    assert ref["FZ"] == 1 and ref["ED"] == 0.0


def test_infinite_ratio_is_excluded_and_counted():
    folds = [np.array([0, 1, 3, 5]), np.array([2, 4])]  # label 0 present in every example of fold 0
    with pytest.warns(UndefinedMetricWarning, match="1 fold-label"):
        value, n = sq.label_distribution(Y, folds, return_count=True)
    assert n == 1
    # fold 1: S0 = 0 -> |0 - 2| = 2; label 1: fold 0 S=2/N=4 -> 1, fold 1 S=1/N=2 -> 1 (dev 0, 0);
    # label 2: fold 0 1/3 -> dev 2/15, fold 1 0 -> 0.2
    expected = np.mean([2.0, 0.0, np.mean([2 / 15, 0.2])])
    assert value == pytest.approx(expected)


def _brute_force(y, folds, pairs_normalisation=True):
    n, k = y.shape
    pair_list = list(itertools.combinations(range(k), 2))
    ystar = np.stack([y[:, u] & y[:, v] for u, v in pair_list], axis=1)

    def dist(z):
        total = z.sum(0)
        out = []
        for col in range(z.shape[1]):
            devs = []
            for f in folds:
                s = z[f, col].sum()
                devs.append(abs(s / (len(f) - s) - total[col] / (n - total[col])))
            out.append(np.mean(devs))
        return np.sum(out)

    ld = dist(y) / k
    lpd = dist(ystar) / (len(pair_list) if pairs_normalisation else k)
    flpz = sum(int(ystar[f, c].sum() == 0) for f in folds for c in range(len(pair_list)) if ystar[:, c].sum() >= len(folds))
    return ld, lpd, flpz


@pytest.mark.parametrize("seed", range(4))
def test_against_brute_force_on_random_splits(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((400, 5)) < [0.3, 0.2, 0.1, 0.05, 0.02]).astype(int)
    assignment = rng.permutation(np.arange(400) % 5)
    folds = [np.flatnonzero(assignment == j) for j in range(5)]
    ld, lpd, flpz = _brute_force(y, folds)
    assert sq.label_distribution(y, folds) == pytest.approx(ld, abs=1e-12)
    assert sq.label_pair_distribution(y, folds) == pytest.approx(lpd, abs=1e-12)
    assert sq.fold_label_pair_zeros(y, folds) == flpz
    # the thesis code divides the LPD sum by K instead of K* = K(K-1)/2
    assert sq.label_pair_distribution(y, folds, normalisation="labels") == pytest.approx(lpd * 10 / 5, abs=1e-12)


def test_perfectly_stratified_split_has_zero_ld():
    y = np.array([[1, 0], [0, 1], [0, 0], [1, 1]] * 2)
    folds = [np.arange(4), np.arange(4, 8)]  # identical halves
    assert sq.label_distribution(y, folds) == 0.0
    assert sq.label_pair_distribution(y, folds) == 0.0


def test_bad_folds_raise():
    with pytest.raises(ValueError, match="integer indices"):
        sq.label_distribution(Y, [np.array([0.5, 1.0])])
    with pytest.raises(ValueError, match="normalisation"):
        sq.label_pair_distribution(Y, FOLDS, normalisation="K")
    with pytest.raises(ValueError, match="variant"):
        sq.fold_label_pair_zeros(Y, FOLDS, variant="R")
