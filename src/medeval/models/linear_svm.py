"""Linear classifiers of many small problems at once: the engines behind chapter 3's validation runs.

Chapter 3 (Mendelson et al., MICCAI 2014) fits a hard-margin linear SVM (LIBSVM's C-SVC with a large C)
on every training fold of thousands of small subsets. :func:`fit_decision_values` fits P such problems,
each a boolean training mask over the points of one subset, with one of three engines and returns the
decision value of every point of the problem's subset (the caller reads the held-out ones):

* ``"batched"``: the torch SMO of :mod:`medeval.models.batched_svm` (CPU or GPU; it also fits the
  nearest-centroid control). Torch is imported by the first call, not with this module;
* ``"active_set"``: :func:`active_set_linear_svm`, the exact C-SVC optimum by a primal-dual active-set
  method, for the problems with at most d training points (the rest go to the scikit-learn loop);
* ``"sklearn"``: a loop over ``sklearn.svm.SVC(kernel="linear")`` (LIBSVM), the reference, spread over
  processes by :func:`sklearn_jobs`.

Labels are binary in {0, 1}; class 1 is the positive class. Decision values > 0 predict class 1.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CLASSIFIERS",
    "ENGINES",
    "active_set_linear_svm",
    "fit_decision_values",
    "sklearn_jobs",
]

#: The classifiers :func:`fit_decision_values` fits: the linear C-SVC and the nearest-centroid control.
CLASSIFIERS: tuple[str, ...] = ("svm", "nearest_centroid")
#: The SVM engines of :func:`fit_decision_values`.
ENGINES: tuple[str, ...] = ("batched", "sklearn", "active_set")


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
    """Decision values (P, m) of P classifiers, each trained on ``train_mask[p]`` of subset
    ``subset_index[p]``.

    ``features`` (S, m, d), ``labels`` (S, m) in {0, 1}. ``classifier``: "svm" (linear C-SVC; large C =
    hard margin) or "nearest_centroid". ``engine``: "batched" (torch, :mod:`medeval.models.batched_svm`),
    "sklearn" (a loop over ``sklearn.svm.SVC(kernel="linear")``, the reference; SVM only) or "active_set"
    (:func:`active_set_linear_svm`, the exact optimum, for the problems with at most d training points;
    larger problems and any problem it does not solve go to the scikit-learn loop).
    ``n_jobs``: processes of the scikit-learn loop (the fits are independent); ``None`` uses every core, or
    one inside a worker process of a grid (which already runs one unit per core). The result does not depend
    on it.
    Returns (decision, n_unconverged).
    """
    sklearn_jobs(n_jobs)  # refuse a bad n_jobs whichever engine runs

    if classifier not in CLASSIFIERS:
        raise ValueError(f"classifier must be one of {CLASSIFIERS}, got {classifier!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if classifier == "nearest_centroid" or engine == "batched":  # torch engines (loaded only for them)
        from medeval.models.batched_svm import batched_linear_svm, batched_nearest_centroid
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
                every_point = np.ones((subsets.size, X.shape[-2]), dtype=bool)
                full, ok = active_set_linear_svm(X, labels, every_point, subsets, C=C)
                sv = np.ones((X.shape[0], X.shape[-2]), dtype=bool)
                sign = np.where(np.asarray(labels)[subsets] > 0, 1.0, -1.0)
                sv[subsets] = np.where(ok[:, None], sign * full <= 1 + 1e-6, True)
                initial = sv[sidx[small]]
            dec, ok = active_set_linear_svm(X, labels, mask[small], sidx[small], C=C, initial_free=initial)
            decision[small] = dec
            rest[np.flatnonzero(small)[~ok]] = True
        n_unconverged = 0
        if rest.any():
            decision[rest], n_unconverged = fit_decision_values(
                X, labels, mask[rest], sidx[rest], classifier=classifier, engine="sklearn", C=C, tol=tol,
                device=device, n_jobs=n_jobs,
            )
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
        delayed(_sklearn_fits)(X, y, mask[a:b], sidx[a:b], C, tol)
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
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
