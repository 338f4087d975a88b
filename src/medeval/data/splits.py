"""Train/test splitters: patient-level, LIBSVM-exact stratified, random, follow-up-aware, iterative.

Every splitter returns a list of ``(train_idx, test_idx)`` pairs of sorted int64 index arrays into the
input (the single-split functions return a list with one pair), takes ``seed`` as an int or a
``numpy.random.Generator``, and is deterministic for a given seed.
"""

from __future__ import annotations

import numpy as np

from medeval.data.seeding import as_generator

__all__ = [
    "iterative_stratified_kfold",
    "later_followup_split",
    "later_followup_train_val_test_split",
    "libsvm_stratified_kfold",
    "patient_kfold",
    "patient_train_test_split",
    "random_kfold",
]


def _rng(seed) -> np.random.Generator:
    return as_generator(seed, required=True)


def _int_seed(seed) -> int:
    """An int seed for scikit-learn/iterstrat from an int or a Generator (which is advanced)."""
    return int(_rng(seed).integers(0, 2**31 - 1))


def _check_n_splits(n_splits, n_items: int, what: str) -> int:
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 2:
        raise ValueError(f"n_splits must be an int >= 2, got {n_splits!r}")
    if n_splits > n_items:
        raise ValueError(f"n_splits={n_splits} is larger than the number of {what} ({n_items})")
    return int(n_splits)


def _check_fraction(test_size, name: str = "test_size") -> float:
    if (
        isinstance(test_size, bool)
        or not isinstance(test_size, (int, float, np.floating))
        or not 0 < test_size < 1
    ):
        raise ValueError(f"{name} must be a fraction in (0, 1), got {test_size!r}")
    return float(test_size)


def _pairs_from_fold_ids(fold_of: np.ndarray, n_splits: int) -> list[tuple[np.ndarray, np.ndarray]]:
    idx = np.arange(len(fold_of), dtype=np.int64)
    return [(idx[fold_of != k], idx[fold_of == k]) for k in range(n_splits)]


# ----------------------------------------------------------------------------------------------------------
# patient-level


def patient_kfold(patient_ids, n_splits: int, seed) -> list[tuple[np.ndarray, np.ndarray]]:
    """K folds such that all images of a patient are in the same fold (no patient in two folds).

    Patients are shuffled with ``seed``, then assigned greedily, largest patients first (ties in
    shuffled order), to the fold with the fewest images so far — the balancing rule of scikit-learn's
    ``GroupKFold`` with a seeded tie order. Fold sizes in images differ by at most the largest patient.
    """
    pid = np.asarray(patient_ids)
    if pid.ndim != 1 or len(pid) == 0:
        raise ValueError(f"patient_ids must be a non-empty 1-D array, got shape {pid.shape}")
    uniques, inverse, counts = np.unique(pid, return_inverse=True, return_counts=True)
    k = _check_n_splits(n_splits, len(uniques), "patients")
    rng = _rng(seed)
    order = rng.permutation(len(uniques))
    order = order[np.argsort(-counts[order], kind="stable")]
    fold_size = np.zeros(k, dtype=np.int64)
    fold_of_patient = np.empty(len(uniques), dtype=np.int64)
    for p in order:
        f = int(np.argmin(fold_size))
        fold_of_patient[p] = f
        fold_size[f] += counts[p]
    return _pairs_from_fold_ids(fold_of_patient[inverse], k)


def patient_train_test_split(patient_ids, test_size: float, seed) -> list[tuple[np.ndarray, np.ndarray]]:
    """One train/test split at patient level: a random ``test_size`` fraction of *patients* is test.

    The number of test patients is ``ceil(test_size * n_patients)`` (scikit-learn's
    ``GroupShuffleSplit`` rule, which chapter 1's authors used), at least 1 and at most n_patients - 1.
    """
    pid = np.asarray(patient_ids)
    if pid.ndim != 1 or len(pid) == 0:
        raise ValueError(f"patient_ids must be a non-empty 1-D array, got shape {pid.shape}")
    frac = _check_fraction(test_size)
    uniques, inverse = np.unique(pid, return_inverse=True)
    if len(uniques) < 2:
        raise ValueError("patient_ids must contain at least 2 patients for a train/test split")
    n_test = min(max(int(np.ceil(frac * len(uniques))), 1), len(uniques) - 1)
    test_patients = np.zeros(len(uniques), dtype=bool)
    test_patients[_rng(seed).permutation(len(uniques))[:n_test]] = True
    is_test = test_patients[inverse]
    idx = np.arange(len(pid), dtype=np.int64)
    return [(idx[~is_test], idx[is_test])]


# ----------------------------------------------------------------------------------------------------------
# random


def random_kfold(n_samples: int, n_splits: int, seed) -> list[tuple[np.ndarray, np.ndarray]]:
    """Plain shuffled K-fold at sample level (scikit-learn ``KFold(shuffle=True)``: the first
    ``n_samples % n_splits`` folds get one extra sample)."""
    from sklearn.model_selection import KFold

    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
    k = _check_n_splits(n_splits, int(n_samples), "samples")
    kf = KFold(n_splits=k, shuffle=True, random_state=_int_seed(seed))
    return [
        (np.sort(tr).astype(np.int64), np.sort(te).astype(np.int64))
        for tr, te in kf.split(np.zeros(n_samples))
    ]


# ----------------------------------------------------------------------------------------------------------
# LIBSVM


def libsvm_stratified_kfold(
    y, n_splits: int, seed, *, shuffle: bool = True
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified K-fold with exactly LIBSVM's fold composition (``svm_cross_validation``, C-SVC).

    LIBSVM (svm.cpp) for classification with ``nr_fold < l``:

    1. ``svm_group_classes``: classes are ordered by first occurrence in ``y``; ``start[c]`` and
       ``count[c]`` give each class's block of sample indices (in data order).
    2. Each class block is shuffled in place with a Fisher–Yates pass
       (``j = i + rand() % (count[c] - i)``; swap), classes in that order.
    3. Fold ``f`` receives, from every class ``c``, the block positions
       ``start[c] + f*count[c]/nr_fold ... start[c] + (f+1)*count[c]/nr_fold - 1`` (integer division),
       so a class of ``n_c`` samples gives fold f ``floor((f+1) n_c/K) - floor(f n_c/K)`` samples.
       (The EVE paper's "balanced CV implemented exactly as in LIBSVM".)

    With ``nr_fold == l`` LIBSVM instead draws one random permutation and cuts it at ``f*l/nr_fold``
    (leave-one-out when K = n); that branch is reproduced too. LIBSVM silently lowers ``nr_fold > l`` to
    ``l``; here that raises ValueError. The random numbers come from ``numpy`` (``seed``) rather than C's
    ``rand()``, so the *rule* is reproduced exactly, not LIBSVM's particular draws. ``shuffle=False``
    skips step 2 (fold f then gets each class's f-th contiguous block), which makes the composition
    fully deterministic and checkable.
    """
    y = np.asarray(y)
    if y.ndim != 1 or len(y) == 0:
        raise ValueError(f"y must be a non-empty 1-D array of class labels, got shape {y.shape}")
    n = len(y)
    k = _check_n_splits(n_splits, n, "samples")
    rng = _rng(seed)
    fold_of = np.empty(n, dtype=np.int64)
    if k == n:
        perm = rng.permutation(n) if shuffle else np.arange(n)
        bounds = [f * n // k for f in range(k + 1)]
        for f in range(k):
            fold_of[perm[bounds[f] : bounds[f + 1]]] = f
        return _pairs_from_fold_ids(fold_of, k)
    # classes in order of first occurrence (svm_group_classes)
    _, first = np.unique(y, return_index=True)
    classes = y[np.sort(first)]
    for c in classes:
        block = np.flatnonzero(y == c)  # data order within the class
        count = len(block)
        if shuffle:
            for i in range(count):  # Fisher–Yates exactly as in svm.cpp
                j = i + int(rng.integers(0, count - i))
                block[i], block[j] = block[j], block[i]
        for f in range(k):
            begin, end = f * count // k, (f + 1) * count // k
            fold_of[block[begin:end]] = f
    return _pairs_from_fold_ids(fold_of, k)


# ----------------------------------------------------------------------------------------------------------
# follow-up aware


def _followup_assign(patient_ids, follow_up, sizes: list[float], seed) -> np.ndarray:
    """Set id per sample (0 = train, 1.. = later sets) for :func:`later_followup_split` and
    :func:`later_followup_train_val_test_split`: random draw of the set sizes, then each patient's drawn
    slots are moved to its latest follow-ups, the last set getting the latest."""
    pid = np.asarray(patient_ids)
    fu = np.asarray(follow_up)
    if pid.ndim != 1 or fu.shape != pid.shape or len(pid) < len(sizes) + 1:
        raise ValueError(
            "patient_ids and follow_up must be 1-D arrays of the same length >= "
            f"{len(sizes) + 1}, got {pid.shape} and {fu.shape}"
        )
    if not np.issubdtype(fu.dtype, np.number) or not np.all(np.isfinite(fu)):
        raise ValueError("follow_up must be finite numbers (e.g. the 'Follow-up #' column)")
    n = len(pid)
    counts = [max(int(round(f * n)), 1) for f in sizes]
    if sum(counts) >= n:
        raise ValueError(f"the held-out fractions {sizes} leave no training samples out of {n}")
    _, pcode = np.unique(pid, return_inverse=True)
    # sort by patient, then follow-up: each patient's images become a contiguous, time-ordered run
    order = np.lexsort((fu, pcode))
    sp, sf = pcode[order], fu[order]
    dup = (sp[1:] == sp[:-1]) & (sf[1:] == sf[:-1])
    if dup.any():
        i = order[1:][dup][0]
        raise ValueError(
            f"(patient_id, follow_up) pairs must be unique; {pid[i]!r} has follow_up {fu[i]!r} twice"
        )
    # step 1: a purely random draw of the set sizes
    drawn = np.zeros(n, dtype=np.int64)
    perm = _rng(seed).permutation(n)
    start = 0
    for k, c in enumerate(counts, start=1):
        drawn[perm[start : start + c]] = k
        start += c
    # step 2: per patient, the last set takes the latest follow-ups, the set before it the next ones...
    run_end = np.r_[np.flatnonzero(sp[1:] != sp[:-1]), n - 1]  # last sorted position of each patient
    run_of = np.repeat(np.arange(len(run_end)), np.diff(np.r_[-1, run_end]))
    from_end = run_end[run_of] - np.arange(n)  # 0 = the patient's latest follow-up
    assign_sorted = np.zeros(n, dtype=np.int64)
    offset = np.zeros(pcode.max() + 1, dtype=np.int64)
    for k in range(len(counts), 0, -1):
        t = np.bincount(pcode, weights=drawn == k, minlength=pcode.max() + 1).astype(np.int64)
        take = (from_end >= offset[sp]) & (from_end < offset[sp] + t[sp])
        assign_sorted[take] = k
        offset += t
    assign = np.empty(n, dtype=np.int64)
    assign[order] = assign_sorted
    return assign


def later_followup_split(
    patient_ids, follow_up, test_size: float, seed
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random train/test split where a patient in both sets has only *later* images in test.

    The rule (chapter 5, "Data and Evaluation", Splits): "We also ensure that if there is patient
    overlap between a test and training set, the X-ray(s) in the test set is taken at a date after the
    X-ray(s) taken in the training set." The release has no dates; ``follow_up`` (the ``Follow-up #``
    column) is the proxy.

    Procedure (the thesis does not give one; this is our reading of "random sampling plus the rule"):

    1. draw ``round(test_size * N)`` images uniformly at random (the thesis's random sampling);
    2. for each patient with ``t`` drawn images, move the draw to that patient's ``t`` *latest* images
       (largest ``follow_up``).

    Step 2 keeps the test size and the number of test images per patient of a purely random draw,
    and guarantees ``max(follow_up in train) < min(follow_up in test)`` for every patient present in
    both. ``(patient_id, follow_up)`` pairs must be unique (ValueError otherwise), which the
    ChestX-ray14 table satisfies.
    """
    frac = _check_fraction(test_size)
    assign = _followup_assign(patient_ids, follow_up, [frac], seed)
    idx = np.arange(len(assign), dtype=np.int64)
    return [(idx[assign == 0], idx[assign == 1])]


def later_followup_train_val_test_split(
    patient_ids, follow_up, val_size: float, test_size: float, seed
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(train, validation, test) index arrays with the thesis's full rule (chapter 5, Splits):
    "X-rays in the validation set are either not from the same patients that are in the training set
    or if from the same patients, taken at a future date. The same should hold for the test set, with
    respect to the training and validation sets."

    Same procedure as :func:`later_followup_split` with two held-out sets: a random draw of the three
    sizes, then within each patient the test slots take the latest follow-ups and the validation slots
    the next latest, so per patient ``train < validation < test`` in ``follow_up``. The thesis's
    70/10/20 protocol is ``val_size=0.1, test_size=0.2``.
    """
    v = _check_fraction(val_size, "val_size")
    t = _check_fraction(test_size)
    assign = _followup_assign(patient_ids, follow_up, [v, t], seed)
    idx = np.arange(len(assign), dtype=np.int64)
    return idx[assign == 0], idx[assign == 1], idx[assign == 2]


# ----------------------------------------------------------------------------------------------------------
# iterative stratification (multi-label)


def iterative_stratified_kfold(Y, n_splits: int, seed) -> list[tuple[np.ndarray, np.ndarray]]:
    """Multi-label iterative stratification (Sechidis et al. 2011) via ``iterstrat``'s
    ``MultilabelStratifiedKFold(shuffle=True)``. ``Y`` is an (N, K) 0/1 matrix."""
    from iterstrat.ml_stratifiers import MultilabelStratifiedKFold

    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[0] == 0:
        raise ValueError(f"Y must be a non-empty 2-D (n_samples, n_labels) 0/1 matrix, got shape {Y.shape}")
    if not np.isin(Y, (0, 1)).all():
        raise ValueError("Y must contain only 0 and 1")
    k = _check_n_splits(n_splits, Y.shape[0], "samples")
    mskf = MultilabelStratifiedKFold(n_splits=k, shuffle=True, random_state=_int_seed(seed))
    return [
        (np.sort(tr).astype(np.int64), np.sort(te).astype(np.int64))
        for tr, te in mskf.split(np.zeros((Y.shape[0], 1)), Y.astype(int))
    ]
