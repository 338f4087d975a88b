"""The batched torch SVM against scikit-learn's SVC (LIBSVM) on random problems."""

import numpy as np
import pytest
from scipy import stats
from sklearn.neighbors import NearestCentroid
from sklearn.svm import SVC

from medeval.data.splits import libsvm_fold_ids
from medeval.models.batched_svm import batched_linear_svm, batched_nearest_centroid


def _problems(seed, n_subsets, n_per_class, d, shift, n_splits=10):
    rng = np.random.default_rng(seed)
    m = 2 * n_per_class
    X = rng.normal(size=(n_subsets, m, d))
    y = np.tile(np.r_[np.zeros(n_per_class), np.ones(n_per_class)], (n_subsets, 1)).astype(int)
    X[y == 1, : d // 4] += shift
    folds = libsvm_fold_ids(y, n_splits, rng)
    mask = (folds[:, None, :] != np.arange(n_splits)[None, :, None]).reshape(-1, m)
    return X, y, folds, mask, np.repeat(np.arange(n_subsets), n_splits)


def _sklearn(X, y, mask, sidx, C, tol=1e-3):
    out = np.empty(mask.shape)
    for p, s in enumerate(sidx):
        out[p] = SVC(kernel="linear", C=C, tol=tol).fit(X[s][mask[p]], y[s][mask[p]]).decision_function(X[s])
    return out


@pytest.mark.parametrize(
    "n_per_class, d, shift, C",
    [(10, 30, 0.8, 1e4), (25, 80, 0.5, 1e4), (25, 10, 0.6, 1.0)],  # hard margin (separable) and soft margin
)
def test_held_out_decisions_agree_with_sklearn(n_per_class, d, shift, C):
    X, y, folds, mask, sidx = _problems(0, 30, n_per_class, d, shift)
    ours = batched_linear_svm(X, y, mask, sidx, C=C, device="cpu")
    assert ours.n_unconverged == 0
    ref = _sklearn(X, y, mask, sidx, C)
    held_out = ~mask
    agree = np.mean((ours.decision > 0)[held_out] == (ref > 0)[held_out])
    assert agree >= 0.995
    # decision values match to the solvers' tolerance
    assert np.median(np.abs(ours.decision - ref)[held_out]) < 0.02


def test_cv_accuracy_distribution_matches_sklearn():
    n_subsets, n_splits = 40, 10
    X, y, folds, mask, sidx = _problems(1, n_subsets, 15, 40, 0.6, n_splits)
    m = X.shape[1]
    accs = []
    for dec in (batched_linear_svm(X, y, mask, sidx, device="cpu").decision, _sklearn(X, y, mask, sidx, 1e4)):
        dec = dec.reshape(n_subsets, n_splits, m)
        pooled = np.take_along_axis(dec, folds[:, None, :], axis=1)[:, 0, :]
        accs.append(((pooled > 0) == y.astype(bool)).mean(axis=1))
    ours, ref = accs
    assert np.mean(ours == ref) >= 0.9  # the same CV accuracy on almost every subset
    assert abs(ours.mean() - ref.mean()) < 0.01
    assert stats.ks_2samp(ours, ref).pvalue > 0.5


def test_labels_in_plus_minus_one_and_single_subset():
    X, y, folds, mask, sidx = _problems(2, 1, 10, 20, 1.0)
    a = batched_linear_svm(X[0], y[0], mask, sidx, device="cpu").decision
    b = batched_linear_svm(X, 2 * y - 1, mask, sidx, device="cpu").decision
    np.testing.assert_allclose(a, b)


def test_nearest_centroid_matches_sklearn():
    X, y, folds, mask, sidx = _problems(3, 5, 10, 8, 1.0)
    dec = batched_nearest_centroid(X, y, mask, sidx, device="cpu").decision
    for p, s in enumerate(sidx):
        clf = NearestCentroid().fit(X[s][mask[p]], y[s][mask[p]])
        np.testing.assert_array_equal(dec[p] > 0, clf.predict(X[s]) == 1)


def test_iteration_limit_is_reported():
    X, y, folds, mask, sidx = _problems(4, 2, 25, 5, 0.1)  # overlapping classes, huge C: slow
    res = batched_linear_svm(X, y, mask, sidx, C=1e6, max_iter=5, device="cpu")
    assert res.n_unconverged > 0 and res.n_iter.max() <= 5


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"C": 0.0}, "C must be"),
        ({"tol": -1.0}, "tol must be"),
        ({"labels": "bad"}, "labels must be binary"),
        ({"train_mask": "one_class"}, "both classes"),
        ({"subset_index": [5]}, "subset_index"),
    ],
)
def test_bad_input(kwargs, match):
    X, y, folds, mask, sidx = _problems(5, 1, 5, 4, 1.0, n_splits=5)
    args = {"features": X, "labels": y, "train_mask": mask, "subset_index": sidx}
    if kwargs.get("labels") == "bad":
        args["labels"] = y * 3
    elif kwargs.get("train_mask") == "one_class":
        args["train_mask"] = np.tile(y[0] == 1, (mask.shape[0], 1))
    elif "subset_index" in kwargs:
        args["train_mask"], args["subset_index"] = mask[:1], kwargs["subset_index"]
    extra = {k: v for k, v in kwargs.items() if k in ("C", "tol")}
    with pytest.raises(ValueError, match=match):
        batched_linear_svm(**args, **extra, device="cpu")
