"""Train/test splitters: patient-level, LIBSVM-exact stratified, random, follow-up-aware, iterative; and the
balanced subsets and validation strategies of chapter 3, vectorised over many subsets.

Every splitter returns a list of ``(train_idx, test_idx)`` pairs of sorted int64 index arrays into the
input (the single-split functions return a list with one pair), takes ``seed`` as an int or a
``numpy.random.Generator``, and is deterministic for a given seed.

Chapter 3 (Mendelson et al., MICCAI 2014) evaluates a classifier on thousands of small balanced subsets
drawn from a pool, so its index-level logic works on whole arrays of subsets at once (binary labels in
{0, 1}, class 1 positive; ``rng`` as an int, a ``numpy.random.Generator`` or None):

* drawing balanced subsets, disjoint subset pairs and parents (:func:`draw_balanced_subsets`,
  :func:`draw_disjoint_subset_pairs`, :func:`draw_parent`);
* the validation strategies: LIBSVM-style stratified K-fold ("balanced CV implemented exactly as in
  ... LIBSVM"), repeated K-fold (MKCV), leave-one-out and stratified hold-out (:class:`Strategy`,
  :func:`parse_strategy`), and the fold id of every point of every subset (:func:`libsvm_fold_ids`,
  :func:`strategy_fold_ids`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from medeval.data.seeding import as_generator

__all__ = [
    "Strategy",
    "check_binary_labels",
    "draw_balanced_subsets",
    "draw_disjoint_subset_pairs",
    "draw_parent",
    "iterative_stratified_kfold",
    "later_followup_split",
    "later_followup_train_val_test_split",
    "libsvm_fold_ids",
    "libsvm_stratified_kfold",
    "max_disjoint_subset_size",
    "parse_strategy",
    "patient_kfold",
    "patient_train_test_split",
    "random_kfold",
    "strategy_fold_ids",
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


# ----------------------------------------------------------------------------------------------------------
# balanced subsets and validation strategies, vectorised over many subsets (chapter 3: Mendelson et al.,
# MICCAI 2014). Labels are binary in {0, 1}; class 1 is the positive class (AD, malignant). ``rng`` is
# anything ``medeval.data.seeding.as_generator`` takes (None: fresh entropy).


def check_binary_labels(labels, name: str = "labels") -> np.ndarray:
    """Return ``labels`` as an int array in {0, 1}; anything else raises ``ValueError``."""
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {y.shape}")
    values = set(np.unique(y).tolist())
    if not values <= {0, 1}:
        raise ValueError(
            f"{name} must be binary in {{0, 1}} (1 = positive class), got values {sorted(values)[:5]}"
        )
    return y.astype(np.int64)


def _class_members(y: np.ndarray, pool) -> list[np.ndarray]:
    pool = np.arange(y.size) if pool is None else np.asarray(pool, dtype=np.int64)
    return [pool[y[pool] == c] for c in (0, 1)]


def max_disjoint_subset_size(labels, pool=None) -> int:
    """Largest per-class size n for which two disjoint balanced subsets fit in ``pool``: min_c ⌊N_c/2⌋."""
    y = check_binary_labels(labels)
    return int(min(len(m) for m in _class_members(y, pool)) // 2)


def _draw_from_classes(members, n_per_class, n_draws, rng, n_blocks=1) -> np.ndarray:
    """(n_draws, n_blocks, 2 * n_per_class) indices: n_blocks disjoint balanced blocks per draw."""
    out = np.empty((n_draws, n_blocks, 2 * n_per_class), dtype=np.int64)
    for c, idx in enumerate(members):
        need = n_blocks * n_per_class
        # a random permutation per draw, vectorised: argsort of uniform keys, keep the first `need`
        keys = rng.random((n_draws, idx.size))
        if need < idx.size:
            first = np.argpartition(keys, need - 1, axis=1)[:, :need]
            # argpartition leaves the chosen ones in an arbitrary (index-dependent) order: order them by
            # key so that the split into blocks is uniformly random too
            by_key = np.argsort(np.take_along_axis(keys, first, axis=1), axis=1)
            first = np.take_along_axis(first, by_key, axis=1)
        else:
            first = np.argsort(keys, axis=1)
        chosen = idx[first]
        out[:, :, c * n_per_class : (c + 1) * n_per_class] = chosen.reshape(n_draws, n_blocks, n_per_class)
    # shuffle the order of the points inside each subset (LIBSVM regroups by class anyway)
    order = np.argsort(rng.random(out.shape), axis=-1)
    return np.take_along_axis(out, order, axis=-1)


def draw_parent(labels, parent_per_class: int, rng=None, pool=None) -> np.ndarray:
    """A random "parent" set of ``parent_per_class`` subjects of each class (Sec. 3.1), as indices."""
    y = check_binary_labels(labels)
    members = _class_members(y, pool)
    if parent_per_class < 1:
        raise ValueError(f"parent_per_class must be >= 1, got {parent_per_class}")
    for c, idx in enumerate(members):
        if parent_per_class > idx.size:
            raise ValueError(
                f"parent_per_class={parent_per_class} exceeds the {idx.size} subjects of class {c} "
                "in the pool"
            )
    return _draw_from_classes(members, parent_per_class, 1, as_generator(rng, name="rng"))[0, 0]


def draw_balanced_subsets(labels, n_per_class: int, n_subsets: int, rng=None, pool=None) -> np.ndarray:
    """``n_subsets`` random balanced subsets of ``pool`` (default all), each with ``n_per_class`` per class.

    Subsets are drawn independently and may overlap each other (as NEVE's subsets do). Returns an
    (n_subsets, 2 n_per_class) int array of indices into ``labels``.
    """
    y = check_binary_labels(labels)
    if n_per_class < 1 or n_subsets < 1:
        raise ValueError(f"n_per_class and n_subsets must be >= 1, got {n_per_class} and {n_subsets}")
    members = _class_members(y, pool)
    for c, idx in enumerate(members):
        if n_per_class > idx.size:
            raise ValueError(
                f"n_per_class={n_per_class} exceeds the {idx.size} subjects of class {c} in the pool"
            )
    return _draw_from_classes(members, n_per_class, n_subsets, as_generator(rng, name="rng"))[:, 0]


def draw_disjoint_subset_pairs(labels, n_per_class: int, n_pairs: int, rng=None, pool=None) -> np.ndarray:
    """R pairs of disjoint balanced subsets (EVE's pairs, Sec. 2): an (R, 2, 2 n_per_class) index array.

    Within a pair the two subsets share no subject; different pairs are drawn independently and may
    overlap. Each subset holds exactly ``n_per_class`` subjects of each class. A size for which two
    disjoint subsets do not fit (2 n_per_class > the smaller class of ``pool``) raises ``ValueError``
    (callers scanning a grid of sizes should check :func:`max_disjoint_subset_size` first and record
    NaN with the reason, as the paper omits such points).
    """
    y = check_binary_labels(labels)
    if n_per_class < 1 or n_pairs < 1:
        raise ValueError(f"n_per_class and n_pairs must be >= 1, got {n_per_class} and {n_pairs}")
    members = _class_members(y, pool)
    for c, idx in enumerate(members):
        if 2 * n_per_class > idx.size:
            raise ValueError(
                f"n_per_class={n_per_class} is too large for disjoint subset pairs: a pair needs "
                f"2 x {n_per_class} = {2 * n_per_class} subjects of class {c} but the pool has {idx.size} "
                f"(largest possible: {max_disjoint_subset_size(y, pool)})"
            )
    return _draw_from_classes(members, n_per_class, n_pairs, as_generator(rng, name="rng"), n_blocks=2)


# the validation strategies and their fold ids


@dataclass(frozen=True)
class Strategy:
    """A validation strategy: ``kind`` in {"kfold", "loo", "holdout"}.

    ``kfold``: LIBSVM-style stratified K-fold, repeated ``n_repeats`` times with fresh partitions
    (MKCV) and averaged. ``loo``: leave-one-out (deterministic, one repeat). ``holdout``: a stratified
    split with ``test_fraction`` of each class held out, repeated ``n_repeats`` times and averaged.
    """

    kind: Literal["kfold", "loo", "holdout"] = "kfold"
    n_splits: int = 10
    n_repeats: int = 1
    test_fraction: float = 0.5

    def __post_init__(self):
        if self.kind not in ("kfold", "loo", "holdout"):
            raise ValueError(f"Strategy.kind must be 'kfold', 'loo' or 'holdout', got {self.kind!r}")
        if self.kind == "kfold" and self.n_splits < 2:
            raise ValueError(f"Strategy.n_splits must be >= 2 for K-fold, got {self.n_splits}")
        if self.n_repeats < 1:
            raise ValueError(f"Strategy.n_repeats must be >= 1, got {self.n_repeats}")
        if self.kind == "loo" and self.n_repeats != 1:
            raise ValueError("Strategy: leave-one-out is deterministic; n_repeats must be 1")
        if self.kind == "holdout" and not 0 < self.test_fraction < 1:
            raise ValueError(f"Strategy.test_fraction must be in (0, 1), got {self.test_fraction}")

    @property
    def name(self) -> str:
        if self.kind == "kfold":
            return f"{self.n_splits}x{self.n_repeats}"
        if self.kind == "loo":
            return "LOO"
        return f"holdout{self.test_fraction:g}x{self.n_repeats}"


_KFOLD = re.compile(r"^(\d+)\s*[x×]\s*(\d+)$")
_HOLDOUT = re.compile(r"^holdout(0?\.\d+)?(?:x(\d+))?$")


def parse_strategy(spec: str | Strategy) -> Strategy:
    """A :class:`Strategy` from its name: "10x1" / "10x10" / "3x10" (K-fold x repeats), "LOO", "holdout",
    "holdout0.3x5"."""
    if isinstance(spec, Strategy):
        return spec
    text = str(spec).strip().lower()
    if text == "loo":
        return Strategy("loo", n_splits=0)
    match = _KFOLD.match(text)
    if match:
        return Strategy("kfold", int(match.group(1)), int(match.group(2)))
    match = _HOLDOUT.match(text)
    if match:
        fraction = float(match.group(1)) if match.group(1) else 0.5
        return Strategy("holdout", 0, int(match.group(2) or 1), fraction)
    raise ValueError(f"strategy must look like '10x1', '3x10', 'LOO' or 'holdout0.3x5', got {spec!r}")


def _within_class_ranks(y_rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random rank of each point among the points of its class in its row (a within-class shuffle)."""
    keys = rng.random(y_rows.shape)
    order = np.lexsort((keys, y_rows), axis=-1)
    sorted_y = np.take_along_axis(y_rows, order, axis=-1)
    n_neg = (y_rows == 0).sum(axis=-1, keepdims=True)
    position = np.broadcast_to(np.arange(y_rows.shape[-1]), y_rows.shape)
    rank_sorted = np.where(sorted_y == 0, position, position - n_neg)
    ranks = np.empty_like(rank_sorted)
    np.put_along_axis(ranks, order, rank_sorted, axis=-1)
    return ranks


def libsvm_fold_ids(subset_labels, n_splits: int, rng=None) -> np.ndarray:
    """Fold of every point for LIBSVM's stratified K-fold, vectorised over rows.

    LIBSVM (``svm_cross_validation`` in svm.cpp, C-SVC with nr_fold < l) groups the points by class,
    shuffles each class, and sends elements [⌊i n_c/K⌋, ⌊(i+1) n_c/K⌋) of class c to fold i. A point
    of within-class rank r therefore lands in fold ⌈(r+1)K/n_c⌉ - 1. Fold i thus holds
    ⌊(i+1)n_c/K⌋ - ⌊i n_c/K⌋ points of class c (25 per class, K = 10: 2, 3, 2, 3, ...).

    ``subset_labels``: (m,) or (..., m) binary labels; returns int fold ids of the same shape. This is
    the vectorised twin of :func:`libsvm_stratified_kfold` (same composition; the tests check it),
    needed because the experiments draw up to millions of partitions.
    """
    y = np.asarray(subset_labels).astype(np.int64)
    if n_splits < 2:
        raise ValueError(f"n_splits must be >= 2, got {n_splits}")
    if y.shape[-1] < n_splits:
        raise ValueError(f"n_splits={n_splits} exceeds the {y.shape[-1]} points of a subset")
    ranks = _within_class_ranks(y, as_generator(rng, name="rng"))
    n_class = np.where(y == 0, (y == 0).sum(-1, keepdims=True), (y == 1).sum(-1, keepdims=True))
    return ((ranks + 1) * n_splits + n_class - 1) // n_class - 1


def _holdout_fold_ids(y: np.ndarray, test_fraction: float, rng) -> np.ndarray:
    """0 for held-out points (round(test_fraction n_c) per class, at least 1), 1 for training points."""
    ranks = _within_class_ranks(y, rng)
    n_class = np.where(y == 0, (y == 0).sum(-1, keepdims=True), (y == 1).sum(-1, keepdims=True))
    n_test = np.clip(np.rint(test_fraction * n_class), 1, n_class - 1)
    return np.where(ranks < n_test, 0, 1)


def strategy_fold_ids(subset_labels, strategy: Strategy | str, rng=None) -> tuple[np.ndarray, int]:
    """(S, M, m) fold ids for S subsets and M repeats, and the number of evaluated folds.

    Problem k of a repeat trains on the points with fold id ≠ k and tests on fold k, for
    k < n_evaluated (K for K-fold, m for LOO, 1 for hold-out whose fold 1 is training only).
    """
    strategy = parse_strategy(strategy)
    y = np.asarray(subset_labels).astype(np.int64)
    if y.ndim == 1:
        y = y[None]
    rng = as_generator(rng, name="rng")
    n_subsets, m = y.shape
    if strategy.kind == "loo":
        return np.broadcast_to(np.arange(m), (n_subsets, 1, m)).copy(), m
    y_rep = np.broadcast_to(y[:, None, :], (n_subsets, strategy.n_repeats, m))
    if strategy.kind == "kfold":
        return libsvm_fold_ids(y_rep, strategy.n_splits, rng), strategy.n_splits
    return _holdout_fold_ids(y_rep, strategy.test_fraction, rng), 1
