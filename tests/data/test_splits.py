"""Splitters: disjointness, coverage, patient grouping, LIBSVM fold composition, follow-up rule."""

import numpy as np
import pytest

from medeval.data import splits as s


def _check_partition(pairs, n, n_splits=None):
    """Every pair is a disjoint cover; for K-fold the test sets partition range(n)."""
    for tr, te in pairs:
        assert tr.dtype == np.int64 and te.dtype == np.int64
        assert len(np.intersect1d(tr, te)) == 0
        np.testing.assert_array_equal(np.sort(np.r_[tr, te]), np.arange(n))
    if n_splits is not None:
        assert len(pairs) == n_splits
        all_test = np.sort(np.concatenate([te for _, te in pairs]))
        np.testing.assert_array_equal(all_test, np.arange(n))


def _patients(rng, n_patients=60):
    sizes = rng.integers(1, 8, size=n_patients)
    return np.repeat(rng.permutation(np.arange(1000, 1000 + n_patients)), sizes)


@pytest.mark.parametrize("k", [2, 5, 10])
def test_patient_kfold_groups_and_partitions(k):
    rng = np.random.default_rng(0)
    pid = _patients(rng)
    folds = s.patient_kfold(pid, k, seed=3)
    _check_partition(folds, len(pid), k)
    owner = {}
    for f, (_, te) in enumerate(folds):
        for p in np.unique(pid[te]):
            assert owner.setdefault(p, f) == f, "patient in two folds"
    sizes = [len(te) for _, te in folds]
    assert max(sizes) - min(sizes) <= np.bincount(np.unique(pid, return_inverse=True)[1]).max()


def test_patient_kfold_deterministic_and_seed_dependent():
    pid = _patients(np.random.default_rng(1))
    a, b = s.patient_kfold(pid, 5, 7), s.patient_kfold(pid, 5, 7)
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a, b, strict=True))
    c = s.patient_kfold(pid, 5, 8)
    assert any(not np.array_equal(x[1], y[1]) for x, y in zip(a, c, strict=True))
    g = s.patient_kfold(pid, 5, np.random.default_rng(7))
    _check_partition(g, len(pid), 5)


def test_patient_train_test_split():
    pid = _patients(np.random.default_rng(2), 50)
    [(tr, te)] = s.patient_train_test_split(pid, 0.2, seed=0)
    _check_partition([(tr, te)], len(pid))
    assert not set(pid[tr]) & set(pid[te])
    assert len(np.unique(pid[te])) == 10  # ceil(0.2 * 50) patients


@pytest.mark.parametrize("k", [3, 7])
def test_random_kfold_matches_sklearn_sizes(k):
    folds = s.random_kfold(103, k, seed=0)
    _check_partition(folds, 103, k)
    sizes = sorted(len(te) for _, te in folds)
    assert sizes == sorted([103 // k + (i < 103 % k) for i in range(k)])


def _fold_class_counts(folds, y):
    classes = list(dict.fromkeys(y.tolist()))
    return np.array([[int(np.sum(y[te] == c)) for c in classes] for _, te in folds])


def test_libsvm_fold_composition_25_per_class_k10():
    # LIBSVM's rule (svm.cpp, svm_cross_validation; the paper's CV, Sec. 3, ref. [10]), worked out here:
    # 25 per class, K=10 -> 2 or 3 per class, alternating; folds of 4 or 6
    y = np.r_[np.zeros(25, int), np.ones(25, int)]
    folds = s.libsvm_stratified_kfold(y, 10, seed=0)
    _check_partition(folds, 50, 10)
    counts = _fold_class_counts(folds, y)
    np.testing.assert_array_equal(counts[:, 0], [2, 3] * 5)
    np.testing.assert_array_equal(counts[:, 1], [2, 3] * 5)
    assert [len(te) for _, te in folds] == [4, 6] * 5


@pytest.mark.parametrize("seed", range(5))
def test_libsvm_fold_counts_follow_integer_division_rule(seed):
    rng = np.random.default_rng(seed)
    y = rng.choice(["a", "b", "c"], size=rng.integers(30, 90), p=[0.5, 0.3, 0.2])
    k = int(rng.integers(2, 11))
    folds = s.libsvm_stratified_kfold(y, k, seed=seed)
    _check_partition(folds, len(y), k)
    classes = list(dict.fromkeys(y.tolist()))
    counts = _fold_class_counts(folds, y)
    for ci, c in enumerate(classes):
        n_c = int(np.sum(y == c))
        expected = [(f + 1) * n_c // k - f * n_c // k for f in range(k)]
        np.testing.assert_array_equal(counts[:, ci], expected)


def test_libsvm_unshuffled_composition_is_contiguous_blocks():
    # class a at 0,2,4,...; class b at 1,3,...: fold f gets the f-th block of each class in data order
    y = np.array(["a", "b"] * 6)
    folds = s.libsvm_stratified_kfold(y, 3, seed=0, shuffle=False)
    assert [te.tolist() for _, te in folds] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    y2 = np.array([1, 1, 1, 0, 0, 1, 1])  # class 1: idx 0,1,2,5,6 ; class 0: idx 3,4
    folds2 = s.libsvm_stratified_kfold(y2, 2, seed=0, shuffle=False)
    # class 1 (n=5): fold0 gets positions 0..1 (5*1//2=2), fold1 positions 2..4; class 0 (n=2): 1 each
    assert [te.tolist() for _, te in folds2] == [[0, 1, 3], [2, 4, 5, 6]]


def test_libsvm_shuffle_is_a_permutation_within_class():
    y = np.r_[np.zeros(40, int), np.ones(20, int)]
    a = s.libsvm_stratified_kfold(y, 4, seed=1)
    b = s.libsvm_stratified_kfold(y, 4, seed=2)
    assert any(not np.array_equal(x[1], z[1]) for x, z in zip(a, b, strict=True))


def test_libsvm_leave_one_out_branch():
    y = np.array([0, 1, 0, 1, 1])
    folds = s.libsvm_stratified_kfold(y, 5, seed=0)
    _check_partition(folds, 5, 5)
    assert all(len(te) == 1 for _, te in folds)
    with pytest.raises(ValueError, match="n_splits=6 is larger"):
        s.libsvm_stratified_kfold(y, 6, seed=0)


def test_later_followup_rule_and_size():
    rng = np.random.default_rng(4)
    pid = _patients(rng, 200)
    fu = np.concatenate([rng.permutation(np.sum(pid == p)) for p in dict.fromkeys(pid.tolist())])
    shuffle = rng.permutation(len(pid))  # rows of a patient need not be contiguous or time-ordered
    pid, fu_by_row = pid[shuffle], fu[shuffle]
    [(tr, te)] = s.later_followup_split(pid, fu_by_row, 0.2, seed=0)
    _check_partition([(tr, te)], len(pid))
    assert len(te) == round(0.2 * len(pid))
    overlap = set(pid[tr]) & set(pid[te])
    assert overlap, "with 200 patients some must be shared (the rule allows it)"
    for p in overlap:
        assert fu_by_row[tr][pid[tr] == p].max() < fu_by_row[te][pid[te] == p].min()


def test_later_followup_on_real_table():
    from medeval.data.chestxray14 import load_labels

    df = load_labels()
    [(tr, te)] = s.later_followup_split(df["patient_id"], df["follow_up"], 0.2, seed=0)
    assert len(te) == 22_424
    a = df.iloc[tr].groupby("patient_id")["follow_up"].max()
    b = df.iloc[te].groupby("patient_id")["follow_up"].min()
    shared = a.index.intersection(b.index)
    assert len(shared) > 0 and (a[shared] < b[shared]).all()


def test_later_followup_three_way_rule():
    rng = np.random.default_rng(5)
    pid = _patients(rng, 300)
    fu = np.concatenate([rng.permutation(np.sum(pid == p)) * 3 for p in dict.fromkeys(pid.tolist())])
    shuffle = rng.permutation(len(pid))
    pid, fu = pid[shuffle], fu[shuffle]
    tr, va, te = s.later_followup_train_val_test_split(pid, fu, 0.1, 0.2, seed=1)
    n = len(pid)
    np.testing.assert_array_equal(np.sort(np.r_[tr, va, te]), np.arange(n))
    assert (len(va), len(te)) == (round(0.1 * n), round(0.2 * n))
    sets = [tr, va, te]
    for a in range(3):
        for b in range(a + 1, 3):
            shared = set(pid[sets[a]]) & set(pid[sets[b]])
            for p in shared:
                assert fu[sets[a]][pid[sets[a]] == p].max() < fu[sets[b]][pid[sets[b]] == p].min()
    assert set(pid[tr]) & set(pid[va]) and set(pid[va]) & set(pid[te])
    # per-patient counts equal those of the underlying random draw: same seed -> same test size per patient
    [(tr2, te2)] = s.later_followup_split(pid, fu, 0.2, seed=1)
    assert len(te2) == len(te)


def test_later_followup_rejects_duplicates_and_bad_input():
    with pytest.raises(ValueError, match="unique"):
        s.later_followup_split([1, 1, 2], [0, 0, 1], 0.5, seed=0)
    with pytest.raises(ValueError, match="test_size"):
        s.later_followup_split([1, 2], [0, 0], 1.5, seed=0)
    with pytest.raises(ValueError, match="no training samples"):
        s.later_followup_train_val_test_split([1, 2, 3], [0, 0, 0], 0.5, 0.5, seed=0)


def test_iterative_stratified_kfold_balances_labels():
    rng = np.random.default_rng(0)
    Y = (rng.random((600, 6)) < np.array([0.3, 0.1, 0.05, 0.5, 0.2, 0.02])).astype(int)
    folds = s.iterative_stratified_kfold(Y, 5, seed=0)
    _check_partition(folds, 600, 5)
    per_fold = np.array([Y[te].sum(axis=0) for _, te in folds])
    totals = Y.sum(axis=0)
    # each label's positives spread within +-2 of the ideal per-fold share
    assert np.all(np.abs(per_fold - totals / 5) <= 2)
    again = s.iterative_stratified_kfold(Y, 5, seed=0)
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(folds, again, strict=True))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: s.patient_kfold([1, 2, 3], 1, 0), "n_splits"),
        (lambda: s.patient_kfold([1, 1, 2], 3, 0), "larger than the number of patients"),
        (lambda: s.random_kfold(10, 3, seed=-1), "seed"),
        (lambda: s.random_kfold(0, 3, seed=0), "n_samples"),
        (lambda: s.patient_train_test_split([1, 2, 3], 0, 0), "test_size"),
        (lambda: s.iterative_stratified_kfold(np.array([[0, 2], [1, 0]]), 2, 0), "only 0 and 1"),
        (lambda: s.libsvm_stratified_kfold(np.zeros((3, 2)), 2, 0), "1-D"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
