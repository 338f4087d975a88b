"""Validation strategies run on many subsets at once, and the disjoint subset pairs EVE needs.

Chapter 3 (Mendelson et al., MICCAI 2015) evaluates a classifier on thousands of small balanced
subsets drawn from a pool. This module holds the index-level logic and the evaluation loop:

* drawing balanced subsets, disjoint subset pairs and parents (:func:`draw_balanced_subsets`,
  :func:`draw_disjoint_subset_pairs`, :func:`draw_parent`);
* the validation strategies: LIBSVM-style stratified K-fold ("balanced CV implemented exactly as in
  ... LIBSVM"), repeated K-fold (MKCV), leave-one-out and stratified hold-out (:class:`Strategy`);
* :func:`run_validation`, which runs one strategy on S subsets with a classifier (the batched torch
  engine of :mod:`medeval.models.batched_svm`, the exact active-set solver of
  :func:`active_set_linear_svm`, or a scikit-learn ``SVC`` loop as the reference) and returns
  per-subset scores for accuracy, sensitivity, specificity and AUC, plus fold-wise and per-repeat scores.

Labels are binary in {0, 1}; class 1 is the positive class (AD, malignant). Decision values > 0
predict class 1. Metrics are computed on the pooled held-out predictions of each CV run (as LIBSVM's
``svm_cross_validation`` does), then averaged over repeats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from medeval.data.seeding import as_generator
from medeval.metrics.curves import roc_auc

__all__ = [
    "METRICS",
    "CLASSIFIERS",
    "Strategy",
    "parse_strategy",
    "check_binary_labels",
    "max_disjoint_subset_size",
    "draw_parent",
    "draw_balanced_subsets",
    "draw_disjoint_subset_pairs",
    "libsvm_fold_ids",
    "strategy_fold_ids",
    "score_decisions",
    "ValidationResult",
    "run_validation",
    "fit_decision_values",
    "active_set_linear_svm",
    "ENGINES",
    "verify_hard_margin_limit",
]

#: The validation metrics every experiment can report (one fit, all metrics).
METRICS: tuple[str, ...] = ("accuracy", "sensitivity", "specificity", "auc")
CLASSIFIERS: tuple[str, ...] = ("svm", "nearest_centroid")
ENGINES: tuple[str, ...] = ("batched", "sklearn", "active_set")


# ----------------------------------------------------------------------------------------------
# labels and subsets
# ----------------------------------------------------------------------------------------------
def check_binary_labels(labels, name: str = "labels") -> np.ndarray:
    """Return ``labels`` as an int array in {0, 1}; anything else raises ``ValueError``."""
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {y.shape}")
    values = set(np.unique(y).tolist())
    if not values <= {0, 1}:
        raise ValueError(f"{name} must be binary in {{0, 1}} (1 = positive class), got values {sorted(values)[:5]}")
    return y.astype(np.int64)


def _as_rng(rng) -> np.random.Generator:
    return as_generator(rng, name="rng")


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
            first = np.take_along_axis(first, np.argsort(np.take_along_axis(keys, first, axis=1), axis=1), axis=1)
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
            raise ValueError(f"parent_per_class={parent_per_class} exceeds the {idx.size} subjects of class {c} in the pool")
    return _draw_from_classes(members, parent_per_class, 1, _as_rng(rng))[0, 0]


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
            raise ValueError(f"n_per_class={n_per_class} exceeds the {idx.size} subjects of class {c} in the pool")
    return _draw_from_classes(members, n_per_class, n_subsets, _as_rng(rng))[:, 0]


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
    return _draw_from_classes(members, n_per_class, n_pairs, _as_rng(rng), n_blocks=2)


# ----------------------------------------------------------------------------------------------
# strategies and folds
# ----------------------------------------------------------------------------------------------
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
    """"10x1" / "10x10" / "3x10" (K-fold x repeats), "LOO", "holdout", "holdout0.3x5" → :class:`Strategy`."""
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
    the vectorised twin of ``medeval.data.splits.libsvm_stratified_kfold`` (same composition; the
    tests check it), needed because the experiments draw up to millions of partitions.
    """
    y = np.asarray(subset_labels).astype(np.int64)
    if n_splits < 2:
        raise ValueError(f"n_splits must be >= 2, got {n_splits}")
    if y.shape[-1] < n_splits:
        raise ValueError(f"n_splits={n_splits} exceeds the {y.shape[-1]} points of a subset")
    ranks = _within_class_ranks(y, _as_rng(rng))
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
    rng = _as_rng(rng)
    n_subsets, m = y.shape
    if strategy.kind == "loo":
        return np.broadcast_to(np.arange(m), (n_subsets, 1, m)).copy(), m
    y_rep = np.broadcast_to(y[:, None, :], (n_subsets, strategy.n_repeats, m))
    if strategy.kind == "kfold":
        return libsvm_fold_ids(y_rep, strategy.n_splits, rng), strategy.n_splits
    return _holdout_fold_ids(y_rep, strategy.test_fraction, rng), 1


# ----------------------------------------------------------------------------------------------
# metrics on pooled decisions
# ----------------------------------------------------------------------------------------------
def score_decisions(decision, labels, mask, metric: str) -> np.ndarray:
    """A metric of each row (last axis = points) over the points where ``mask`` is true.

    accuracy = mean(1[f > 0] == y); sensitivity = TP/P; specificity = TN/N; AUC = :func:`medeval.metrics.curves.roc_auc` (ties count 1/2, as in
    ``sklearn.metrics.roc_auc_score``). A row without
    points (or, for sensitivity/specificity/AUC, without the class it needs) gives NaN.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    f = np.asarray(decision, dtype=float)
    y = np.broadcast_to(np.asarray(labels), f.shape).astype(bool)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), f.shape)
    pred = f > 0
    n_pos = (mask & y).sum(-1)
    n_neg = (mask & ~y).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "accuracy":
            return ((pred == y) & mask).sum(-1) / (n_pos + n_neg)
        if metric == "sensitivity":
            return (pred & y & mask).sum(-1) / n_pos
        if metric == "specificity":
            return (~pred & ~y & mask).sum(-1) / n_neg
        # points outside the mask may hold anything (NaN where no decision was made): they take no part
        return np.asarray(roc_auc(y, np.where(mask, f, 0.0), sample_mask=mask, undefined=np.nan))


# ----------------------------------------------------------------------------------------------
# fitting
# ----------------------------------------------------------------------------------------------
def active_set_linear_svm(
    features,
    labels,
    train_mask,
    subset_index,
    *,
    C: float = 1e4,
    max_iter: int = 60,
    chunk: int = 1024,
    initial_free=None,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact linear C-SVC of many small problems at once, by a primal-dual active-set method.

    The dual of LIBSVM's C-SVC is  min ½ αᵀQα − Σαᵢ  s.t. 0 ≤ αᵢ ≤ C, Σ sᵢαᵢ = 0, with sᵢ = ±1 and
    Qᵢⱼ = sᵢsⱼ xᵢ·xⱼ. With g = Qα − 1 + b s (g_i = s_i f(x_i) − 1), its KKT conditions are g_i ≥ 0 where
    αᵢ = 0, g_i ≤ 0 where αᵢ = C and g_i = 0 for the free αᵢ. Each iteration guesses the three sets
    (Hintermüller, Ito & Kunisch, SIAM J. Optim. 13, 2003: a point is at 0 when g_i − αᵢ/q > 0, at C when
    −g_i + (αᵢ − C)/q > 0, q the mean diagonal of Q), solves the KKT linear system of the free points and
    the equality constraint exactly (one batched ``numpy.linalg.solve``), and stops when the sets no longer
    change, which is the exact optimum. Unlike SMO there is no stopping tolerance: the solution is the
    C-SVC optimum to rounding, which is why it can disagree with LIBSVM (``tol`` = 1e-3) on a few points
    that lie on the decision boundary, and agrees with LIBSVM run at ``tol`` = 1e-7 (the tests check it).

    The KKT system is non-singular when no more than d + 1 points are free, which holds for every guess
    when a problem has at most d training points; :func:`fit_decision_values` sends only such problems
    here (the small-sample regime of chapter 3, where this solver is 5-80x faster than the LIBSVM loop).

    ``features`` (S, m, d), ``labels`` (S, m) in {0, 1}, ``train_mask`` (P, m), ``subset_index`` (P,).
    ``initial_free`` (P, m) bool, optional: the first guess of the free points (default: every training
    point); a good guess (the support vectors of a related problem) saves iterations, never accuracy.
    Returns (decision (P, m), converged (P,) bool); a problem that does not converge in ``max_iter``
    iterations (or whose system is singular) is returned unconverged for the caller to refit.
    """
    X = np.asarray(features, dtype=float)
    y = np.asarray(labels)
    mask = np.asarray(train_mask, dtype=bool)
    sidx = np.asarray(subset_index, dtype=np.int64)
    n_problems, m = mask.shape
    K_sub = X @ np.swapaxes(X, 1, 2)  # (S, m, m) linear kernel of each subset
    s_sub = np.where(y > 0, 1.0, -1.0)
    decision = np.zeros((n_problems, m))
    converged = np.zeros(n_problems, dtype=bool)
    for start in range(0, n_problems, chunk):
        stop = min(start + chunk, n_problems)
        K = K_sub[sidx[start:stop]]
        s_full = s_sub[sidx[start:stop]]
        tr = mask[start:stop]
        n_train = tr.sum(axis=1)
        mt = int(n_train.max())
        # compact every problem to its training points (padded with inert points fixed at 0)
        order = np.argsort(~tr, axis=1, kind="stable")[:, :mt]
        valid = np.arange(mt)[None, :] < n_train[:, None]
        s = np.where(valid, np.take_along_axis(s_full, order, axis=1), 0.0)
        Kt = np.take_along_axis(np.take_along_axis(K, order[:, :, None], axis=1), order[:, None, :], axis=2)
        Q = Kt * s[:, :, None] * s[:, None, :]
        q = np.maximum(np.einsum("pii->p", Q) / np.maximum(n_train, 1), 1e-300)[:, None]
        alpha = np.zeros_like(s)
        b = np.zeros(len(s))
        free, upper = valid.copy(), np.zeros_like(valid)
        if initial_free is not None:
            free &= np.take_along_axis(np.asarray(initial_free, dtype=bool)[start:stop], order, axis=1)
        done = np.zeros(len(s), dtype=bool)
        diag = np.arange(mt)
        for _ in range(max_iter):
            idx = np.flatnonzero(~done)
            if idx.size == 0:
                break
            F, U, Qa, sa = free[idx], upper[idx], Q[idx], s[idx]
            A = np.zeros((idx.size, mt + 1, mt + 1))
            A[:, :mt, :mt] = np.where(F[:, :, None], Qa, 0.0)
            A[:, :mt, mt] = np.where(F, sa, 0.0)
            A[:, diag, diag] = np.where(F, A[:, diag, diag], 1.0)  # fixed points: α_i = 0 or C
            A[:, mt, :mt] = sa
            rhs = np.where(F, 1.0, np.where(U, C, 0.0))
            rhs = np.concatenate([rhs, np.zeros((idx.size, 1))], axis=1)
            none_free = ~F.any(axis=1)
            if none_free.any():  # no free point: b is not determined by the system, keep it
                A[none_free, :mt, mt] = 0.0
                A[none_free, mt, :] = 0.0
                A[none_free, mt, mt] = 1.0
                rhs[none_free, mt] = b[idx[none_free]]
            try:
                sol = np.linalg.solve(A, rhs[..., None])[..., 0]
            except np.linalg.LinAlgError:
                break  # a singular guess: leave the remaining problems unconverged (refitted by the caller)
            a_new, b_new = sol[:, :mt], sol[:, mt]
            g = np.einsum("pij,pj->pi", Qa, a_new) - 1.0 + sa * b_new[:, None]
            valid_a = valid[idx]
            at_zero = valid_a & (g - a_new / q[idx] > 0)
            at_c = valid_a & ~at_zero & (-g + (a_new - C) / q[idx] > 0)
            new_free = valid_a & ~at_zero & ~at_c
            same = np.all(new_free == F, axis=1) & np.all(at_c == U, axis=1)
            alpha[idx], b[idx] = a_new, b_new
            free[idx], upper[idx] = new_free, at_c
            done[idx[same]] = True
        beta = np.zeros_like(s_full)
        np.put_along_axis(beta, order, np.where(valid, alpha * s, 0.0), axis=1)
        decision[start:stop] = np.einsum("pij,pj->pi", K, beta) + b[:, None]
        converged[start:stop] = done
    return decision, converged


def fit_decision_values(
    features,
    labels,
    train_mask,
    subset_index,
    *,
    classifier: str = "svm",
    engine: str = "batched",
    C: float = 1e4,
    tol: float = 1e-3,
    device="cpu",
    n_jobs: int | None = None,
):
    """Decision values (P, m) of P classifiers, each trained on ``train_mask[p]`` of subset ``subset_index[p]``.

    ``features`` (S, m, d), ``labels`` (S, m) in {0, 1}. ``classifier``: "svm" (linear C-SVC; large C =
    hard margin) or "nearest_centroid". ``engine``: "batched" (torch, :mod:`medeval.models.batched_svm`),
    "sklearn" (a loop over ``sklearn.svm.SVC(kernel="linear")``, the reference; SVM only) or "active_set"
    (:func:`active_set_linear_svm`, the exact optimum, for the problems with at most d training points;
    larger problems and any problem it does not solve go to the scikit-learn loop).
    ``n_jobs``: processes of the scikit-learn loop (the fits are independent); ``None`` uses every core, or one
    inside a worker process of a grid (which already runs one unit per core). The result does not depend on it.
    Returns (decision, n_unconverged).
    """
    from medeval.models.batched_svm import batched_linear_svm, batched_nearest_centroid

    sklearn_jobs(n_jobs)  # refuse a bad n_jobs whichever engine runs

    if classifier not in CLASSIFIERS:
        raise ValueError(f"classifier must be one of {CLASSIFIERS}, got {classifier!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if classifier == "nearest_centroid":
        model = batched_nearest_centroid(features, labels, train_mask, subset_index, device=device)
        return model.decision, 0
    if engine == "batched":
        model = batched_linear_svm(features, labels, train_mask, subset_index, C=C, tol=tol, device=device)
        return model.decision, model.n_unconverged
    if engine == "active_set":
        X = np.asarray(features, dtype=float)
        mask = np.asarray(train_mask, dtype=bool)
        sidx = np.asarray(subset_index, dtype=np.int64)
        decision = np.empty(mask.shape, dtype=float)
        small = mask.sum(axis=1) <= X.shape[-1]
        rest = ~small
        if small.any():
            initial = None
            if X.shape[-2] <= X.shape[-1]:
                # warm start: the support vectors of each subset's full problem (the folds drop a few points)
                subsets = np.unique(sidx[small])
                full, ok = active_set_linear_svm(X, labels, np.ones((subsets.size, X.shape[-2]), dtype=bool), subsets,
                                                 C=C)
                sv = np.ones((X.shape[0], X.shape[-2]), dtype=bool)
                sign = np.where(np.asarray(labels)[subsets] > 0, 1.0, -1.0)
                sv[subsets] = np.where(ok[:, None], sign * full <= 1 + 1e-6, True)
                initial = sv[sidx[small]]
            dec, ok = active_set_linear_svm(X, labels, mask[small], sidx[small], C=C, initial_free=initial)
            decision[small] = dec
            rest[np.flatnonzero(small)[~ok]] = True
        n_unconverged = 0
        if rest.any():
            decision[rest], n_unconverged = fit_decision_values(X, labels, mask[rest], sidx[rest], classifier=classifier,
                                                                engine="sklearn", C=C, tol=tol, device=device,
                                                                n_jobs=n_jobs)
        return decision, n_unconverged
    X = np.asarray(features, dtype=float)
    y = np.asarray(labels)
    mask = np.asarray(train_mask, dtype=bool)
    sidx = np.asarray(subset_index)
    jobs = min(sklearn_jobs(n_jobs), max(1, mask.shape[0] // 64))  # at least 64 fits per process
    if jobs <= 1:
        return _sklearn_fits(X, y, mask, sidx, C, tol)
    from joblib import Parallel, delayed

    bounds = np.linspace(0, mask.shape[0], jobs + 1).astype(int)
    parts = Parallel(n_jobs=jobs)(
        delayed(_sklearn_fits)(X, y, mask[a:b], sidx[a:b], C, tol) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    )
    return np.concatenate([d for d, _ in parts]), sum(u for _, u in parts)


def sklearn_jobs(n_jobs: int | None = None) -> int:
    """Processes for the scikit-learn loop: ``n_jobs`` if given (``-1``: every core), else every core, or one
    inside a worker process (a grid already runs one unit per core there)."""
    import multiprocessing
    import os

    if n_jobs is not None:
        if int(n_jobs) != n_jobs or n_jobs == 0 or n_jobs < -1:
            raise ValueError(f"n_jobs must be a positive integer, -1 (every core) or None, got {n_jobs!r}")
        return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
    return 1 if multiprocessing.parent_process() is not None else (os.cpu_count() or 1)


def _sklearn_fits(X, y, mask, subset_index, C, tol):
    """The reference loop: one ``sklearn.svm.SVC(kernel="linear")`` per problem; (decision, n_unconverged)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC

    decision = np.empty(mask.shape, dtype=float)
    # the batched engine's iteration limit: without one, LIBSVM with a huge C on a training set that is not
    # linearly separable runs for hours; problems that hit it are counted, never silently accepted
    max_iter = max(100_000, 100 * X.shape[-2])
    n_unconverged = 0
    for p, s in enumerate(subset_index):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = SVC(kernel="linear", C=C, tol=tol, max_iter=max_iter).fit(X[s][mask[p]], y[s][mask[p]])
        n_unconverged += int(clf.fit_status_ != 0)
        decision[p] = clf.decision_function(X[s])
    return decision, n_unconverged


@dataclass
class ValidationResult:
    """Scores of one strategy on S subsets.

    ``scores[metric]``: (S,) the strategy's estimate on each subset (pooled over folds, averaged
    over repeats). ``fold_scores[metric]``: (S, M·K) the score of every evaluated fold (NaN where a
    fold lacks a class the metric needs; LOO folds give 0/1 accuracies). ``n_unconverged``: SVM
    problems that hit the iteration limit. ``repeat_scores[metric]``: (S, M) the estimate of every
    repeat (its first column is the unrepeated strategy on the same subsets: 3x10 contains a 3x1).
    """

    strategy: str
    scores: dict[str, np.ndarray]
    fold_scores: dict[str, np.ndarray]
    n_unconverged: int
    repeat_scores: dict[str, np.ndarray] = None


def run_validation(
    features,
    labels,
    subsets,
    strategy: Strategy | str,
    *,
    rng=None,
    classifier: str = "svm",
    metrics=("accuracy",),
    engine: str = "batched",
    C: float = 1e4,
    tol: float = 1e-3,
    device="cpu",
    require_balanced: bool = True,
    max_problem_points: int = 2**22,
) -> ValidationResult:
    """Run ``strategy`` on each row of ``subsets`` (an (S, m) index array into ``features``/``labels``).

    With ``require_balanced`` (the paper's setting: "subsets with equal numbers of subjects from each
    class") an unbalanced subset raises ``ValueError``. Work is split into chunks of subsets so that
    at most ``max_problem_points`` (problems x points) are fitted at once.
    """
    strategy = parse_strategy(strategy)
    X = np.asarray(features, dtype=float)
    y = check_binary_labels(labels)
    if X.ndim != 2 or X.shape[0] != y.size:
        raise ValueError(f"features must have shape (n_samples={y.size}, n_features), got {X.shape}")
    idx = np.asarray(subsets, dtype=np.int64)
    if idx.ndim == 1:
        idx = idx[None]
    if idx.ndim != 2 or idx.size == 0:
        raise ValueError(f"subsets must be an (n_subsets, subset_size) index array, got shape {idx.shape}")
    if idx.min() < 0 or idx.max() >= y.size:
        raise ValueError(f"subsets must index into the {y.size} samples")
    for metric in metrics:
        if metric not in METRICS:
            raise ValueError(f"metrics must be drawn from {METRICS}, got {metric!r}")
    y_sub = y[idx]
    n_pos = y_sub.sum(axis=1)
    if require_balanced and np.any(2 * n_pos != idx.shape[1]):
        bad = int(np.sum(2 * n_pos != idx.shape[1]))
        raise ValueError(
            f"subsets: {bad} subset(s) are not balanced (equal numbers of each class are required; "
            "pass require_balanced=False to allow it)"
        )
    if np.any(np.array([len(set(row)) for row in idx[: min(len(idx), 64)]]) != idx.shape[1]):
        raise ValueError("subsets: a subset lists the same sample twice")
    rng = _as_rng(rng)
    fold_ids, n_eval = strategy_fold_ids(y_sub, strategy, rng)
    n_subsets, n_repeats, m = fold_ids.shape
    per_subset = n_repeats * n_eval * m
    chunk = max(1, max_problem_points // per_subset)

    scores = {metric: np.empty(n_subsets) for metric in metrics}
    repeat_scores = {metric: np.empty((n_subsets, n_repeats)) for metric in metrics}
    fold_scores = {metric: np.empty((n_subsets, n_repeats * n_eval)) for metric in metrics}
    n_unconverged = 0
    for start in range(0, n_subsets, chunk):
        stop = min(start + chunk, n_subsets)
        folds = fold_ids[start:stop]  # (s, M, m)
        s = stop - start
        k = np.arange(n_eval)
        train_mask = folds[:, :, None, :] != k[None, None, :, None]  # (s, M, n_eval, m)
        subset_index = np.repeat(np.arange(s), n_repeats * n_eval)
        decision, unconverged = fit_decision_values(
            X[idx[start:stop]], y_sub[start:stop], train_mask.reshape(-1, m), subset_index,
            classifier=classifier, engine=engine, C=C, tol=tol, device=device,
        )
        n_unconverged += unconverged
        decision = decision.reshape(s, n_repeats, n_eval, m)
        tested = folds < n_eval  # (s, M, m)
        pooled = np.take_along_axis(decision, np.minimum(folds, n_eval - 1)[:, :, None, :], axis=2)[:, :, 0, :]
        labels_rep = np.broadcast_to(y_sub[start:stop, None, :], folds.shape)
        in_fold = ~train_mask  # (s, M, n_eval, m): the test points of each fold
        for metric in metrics:
            repeat_scores[metric][start:stop] = score_decisions(pooled, labels_rep, tested, metric)
            scores[metric][start:stop] = repeat_scores[metric][start:stop].mean(axis=1)
            fold_scores[metric][start:stop] = score_decisions(
                decision, labels_rep[:, :, None, :], in_fold, metric
            ).reshape(s, -1)
    return ValidationResult(strategy.name, scores, fold_scores, n_unconverged, repeat_scores)


def verify_hard_margin_limit(
    features,
    labels,
    n_per_class: int,
    C: float,
    *,
    factor: float = 100.0,
    n_subsets: int = 20,
    n_splits: int = 10,
    rng=None,
    engine: str = "sklearn",
    tol: float = 1e-3,
    device="cpu",
) -> dict:
    """Check the paper's criterion for the hard-margin limit: increasing C "brought about no change".

    Runs ``n_splits``-fold CV on ``n_subsets`` random balanced subsets with C and with ``factor`` x C
    (same folds) and reports the fraction of held-out predictions that agree, the largest change of a
    CV accuracy, and the largest relative change of a decision value. ``in_limit`` is True when every
    prediction agrees and every SVM converged (``n_unconverged``: fits that hit the iteration limit, e.g.
    on training sets that are not linearly separable).
    """
    rng = _as_rng(rng)
    y = check_binary_labels(labels)
    subsets = draw_balanced_subsets(y, n_per_class, n_subsets, rng)
    fold_ids = libsvm_fold_ids(y[subsets], n_splits, rng)
    m = subsets.shape[1]
    train_mask = (fold_ids[:, None, :] != np.arange(n_splits)[None, :, None]).reshape(-1, m)
    subset_index = np.repeat(np.arange(n_subsets), n_splits)
    X = np.asarray(features, dtype=float)[subsets]
    out, n_unconverged = [], 0
    for c_value in (C, C * factor):
        decision, unconverged = fit_decision_values(X, y[subsets], train_mask, subset_index, engine=engine, C=c_value,
                                                    tol=tol, device=device)
        out.append(decision.reshape(n_subsets, n_splits, m))
        n_unconverged += int(unconverged)
    held_out = ~train_mask.reshape(n_subsets, n_splits, m)
    same = ((out[0] > 0) == (out[1] > 0))[held_out]
    rel = np.abs(out[0] - out[1])[held_out] / np.maximum(np.abs(out[1][held_out]), 1e-12)
    accs = []
    for dec in out:
        pooled = np.where(held_out, dec, 0).sum(axis=1)
        accs.append(((pooled > 0) == y[subsets].astype(bool)).mean(axis=1))
    return {
        "C": float(C),
        "C_larger": float(C * factor),
        "prediction_agreement": float(same.mean()),
        "max_accuracy_change": float(np.max(np.abs(accs[0] - accs[1]))),
        "median_relative_decision_change": float(np.median(rel)),
        "in_limit": bool(same.all() and n_unconverged == 0),
        "n_predictions": int(same.size),
        "n_unconverged": n_unconverged,
    }
