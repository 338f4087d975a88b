"""Many small linear classifiers fitted at once in torch (CPU or GPU).

The resampling experiments of chapter 3 (Mendelson et al., MICCAI 2014) need up to ~10⁸ fits of a
hard-margin linear SVM on tens to a few hundred subjects. Each fit is tiny, so instead of looping over
scikit-learn's ``SVC`` we solve a whole batch of problems in lock step:

* ``batched_linear_svm`` solves the C-SVC dual of LIBSVM/scikit-learn exactly (with the bias and its
  equality constraint Σ yᵢαᵢ = 0), by sequential minimal optimisation with LIBSVM's second-order
  working-set selection (WSS2, Fan, Chen & Lin, JMLR 2005) and LIBSVM's stopping rule
  (maximal violation ≤ ``tol``) and bias rule (mean over free support vectors), run for every problem
  of the batch in parallel. Problems that have converged take zero steps.
* ``batched_nearest_centroid`` is the closed-form control classifier.

A *problem* is one training set: a boolean ``train_mask`` over the points of one *subset* (the data
one validation strategy runs on). All folds of a subset share its kernel matrix K = X Xᵀ, which is
computed once per subset. Decision values are returned for every point of the subset, so the caller
reads the held-out ones.

Variables. With βₜ = yₜαₜ the dual is  min ½ βᵀKβ - Σ yₜβₜ  s.t. Σ βₜ = 0,  βₜ ∈ [Lₜ, Uₜ]  with
[0, C] for yₜ = +1, [-C, 0] for yₜ = -1 and [0, 0] for points outside the training set. The gradient
is g = Kβ - y; an SMO step moves β along eᵢ - eⱼ. The decision function is f(x) = Σ βₜ xₜ·x - ρ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "BatchedLinearModel",
    "batched_linear_svm",
    "batched_nearest_centroid",
    "resolve_torch_device",
]


def resolve_torch_device(device: str | torch.device | None) -> torch.device:
    """``medeval.models.device.resolve_device`` ("auto" → CUDA when present, else CPU)."""
    if isinstance(device, torch.device):
        return device
    from medeval.models.device import resolve_device

    return torch.device(resolve_device("auto" if device is None else device))


@dataclass
class BatchedLinearModel:
    """Decision values of P fitted linear classifiers on the points of their subsets.

    ``decision``: (P, m) f(x) for every point of the problem's subset (training points included);
    ``n_iter``: (P,) SMO iterations taken (0 for closed-form models); ``converged``: (P,) bool.
    """

    decision: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray

    @property
    def n_unconverged(self) -> int:
        return int(np.sum(~self.converged))


def _validate(features, labels, train_mask, subset_index):
    X = np.asarray(features, dtype=float)
    if X.ndim == 2:
        X = X[None]
    if X.ndim != 3:
        raise ValueError(f"features must have shape (n_subsets, n_points, n_features), got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("features contains non-finite values")
    y = np.asarray(labels)
    if y.ndim == 1:
        y = y[None]
    if y.shape != X.shape[:2]:
        raise ValueError(f"labels must have shape {X.shape[:2]} (n_subsets, n_points), got {y.shape}")
    values = np.unique(y)
    if not (set(values.tolist()) <= {0, 1} or set(values.tolist()) <= {-1, 1}):
        raise ValueError(f"labels must be binary in {{0, 1}} or {{-1, +1}}, got values {values[:5]}")
    y_pm = np.where(y > 0, 1.0, -1.0)
    mask = np.asarray(train_mask, dtype=bool)
    if mask.ndim == 1:
        mask = mask[None]
    if mask.ndim != 2 or mask.shape[1] != X.shape[1]:
        raise ValueError(f"train_mask must have shape (n_problems, {X.shape[1]}), got {mask.shape}")
    if subset_index is None:
        if mask.shape[0] != X.shape[0]:
            raise ValueError("subset_index is required when n_problems != n_subsets")
        sidx = np.arange(X.shape[0])
    else:
        sidx = np.asarray(subset_index, dtype=np.int64).reshape(-1)
        if sidx.shape[0] != mask.shape[0]:
            raise ValueError(f"subset_index must have one entry per problem ({mask.shape[0]}), got {sidx.shape[0]}")
        if sidx.size and (sidx.min() < 0 or sidx.max() >= X.shape[0]):
            raise ValueError(f"subset_index must lie in [0, {X.shape[0]})")
    y_train = y_pm[sidx] * mask
    if np.any((y_train > 0).sum(axis=1) == 0) or np.any((y_train < 0).sum(axis=1) == 0):
        raise ValueError("every problem's training set (train_mask) must contain both classes")
    return X, y_pm, mask, sidx


def batched_linear_svm(
    features,
    labels,
    train_mask,
    subset_index=None,
    *,
    C: float = 1e4,
    tol: float = 1e-3,
    max_iter: int | None = None,
    device: str | torch.device | None = "cpu",
    dtype: torch.dtype = torch.float64,
    chunk_size: int | None = None,
    check_every: int = 8,
) -> BatchedLinearModel:
    """Fit P linear C-SVMs (LIBSVM's C-SVC with a linear kernel) at once and return decision values.

    Parameters
    ----------
    features : (S, m, d) array, the points of S subsets (or (m, d) for one subset).
    labels : (S, m) array in {0, 1} or {-1, +1}; class 1 / +1 is the positive class (f > 0).
    train_mask : (P, m) bool, the training points of each problem (held-out points have β fixed at 0).
    subset_index : (P,) ints, the subset each problem belongs to (default: problem p ↔ subset p).
    C : box constraint. A large C gives the hard-margin limit on separable training sets.
    tol : stopping tolerance on the maximal KKT violation (LIBSVM's ``eps``; scikit-learn's ``tol``).
    max_iter : SMO iterations per problem (default max(100 000, 100 m)); problems that hit it are
        reported in ``converged`` (never silently accepted as converged).
    device : "cpu", "cuda", "auto" or a torch.device (via ``medeval.models.device``).
    chunk_size : problems solved together (bounds memory at ~chunk_size·m numbers besides K). ``None``: 65,536
        on CUDA, 4,096 on the CPU (on an H200, 65,536 ran 4.4x faster than 4,096 at 25 + 25 subjects and 2.2x at
        60 + 60; ``benchmarks/bench_gpu.py``).

    Returns
    -------
    BatchedLinearModel
        The (P, m) decision values ``f(x) = Σ βₜ xₜ·x - ρ``.
    """
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C}")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    X, y_pm, mask, sidx = _validate(features, labels, train_mask, subset_index)
    m = X.shape[1]
    max_iter = int(max_iter) if max_iter is not None else max(100_000, 100 * m)
    dev = resolve_torch_device(device)
    if chunk_size is None:
        chunk_size = 65_536 if dev.type == "cuda" else 4096
    if int(chunk_size) != chunk_size or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}")
    chunk_size = int(chunk_size)

    Xt = torch.as_tensor(X, dtype=dtype, device=dev)
    K = torch.bmm(Xt, Xt.transpose(1, 2))  # (S, m, m), shared by all folds of a subset
    diag = torch.diagonal(K, dim1=1, dim2=2)
    y_all = torch.as_tensor(y_pm, dtype=dtype, device=dev)

    n_problems = mask.shape[0]
    decision = np.empty((n_problems, m), dtype=float)
    n_iter = np.zeros(n_problems, dtype=np.int64)
    converged = np.zeros(n_problems, dtype=bool)
    for start in range(0, n_problems, chunk_size):
        stop = min(start + chunk_size, n_problems)
        beta, grad, iters, done = _smo_chunk(
            K, diag, y_all, sidx[start:stop], mask[start:stop], C, tol, max_iter, check_every
        )
        s_idx = torch.as_tensor(sidx[start:stop], device=dev)
        train = torch.as_tensor(mask[start:stop], device=dev)
        y = y_all[s_idx]
        upper = torch.where(train & (y > 0), torch.full_like(y, C), torch.zeros_like(y))
        lower = torch.where(train & (y < 0), torch.full_like(y, -C), torch.zeros_like(y))
        # exact gradient (removes the drift of the incremental updates), in slices to bound memory
        kbeta = torch.empty_like(beta)
        step = max(1, 2**24 // (m * m))
        for a in range(0, stop - start, step):
            kbeta[a : a + step] = torch.bmm(K[s_idx[a : a + step]], beta[a : a + step, :, None])[:, :, 0]
        grad = kbeta - y
        # LIBSVM's rho: mean gradient over free support vectors, else the midpoint of the bounds
        inf = torch.tensor(float("inf"), dtype=dtype, device=dev)
        free = train & (beta > lower) & (beta < upper)
        n_free = free.sum(dim=1)
        rho_free = torch.where(free, grad, torch.zeros_like(grad)).sum(dim=1) / n_free.clamp(min=1)
        at_lower = train & ~free & (beta <= lower)
        at_upper = train & ~free & (beta >= upper)
        ub = torch.where(at_lower, grad, inf).min(dim=1).values
        lb = torch.where(at_upper, grad, -inf).max(dim=1).values
        rho = torch.where(n_free > 0, rho_free, 0.5 * (ub + lb))
        decision[start:stop] = (kbeta - rho[:, None]).cpu().numpy()
        n_iter[start:stop] = iters.cpu().numpy()
        converged[start:stop] = done.cpu().numpy()
    return BatchedLinearModel(decision=decision, n_iter=n_iter, converged=converged)


def _smo_chunk(K, diag, y_all, sidx, mask, C, tol, max_iter, check_every, compact_fraction=0.25):
    """Run batched SMO (WSS2) on one chunk of problems; returns (beta, grad, n_iter, converged).

    Every ``check_every`` iterations converged problems are written out and removed from the working
    batch once they are at least ``compact_fraction`` of it, so slow problems do not keep the fast
    ones busy.
    """
    dev, dtype = K.device, K.dtype
    n, m = mask.shape
    K_flat = K.reshape(-1, m)
    s_all = torch.as_tensor(sidx, device=dev)
    train_all = torch.as_tensor(mask, device=dev)
    y_full = y_all[s_all]
    upper_full = torch.where(train_all & (y_full > 0), torch.full_like(y_full, C), torch.zeros_like(y_full))
    lower_full = torch.where(train_all & (y_full < 0), torch.full_like(y_full, -C), torch.zeros_like(y_full))
    beta_out = torch.zeros_like(y_full)
    grad_out = -y_full.clone()
    iters_out = torch.zeros(n, dtype=torch.int64, device=dev)
    done_out = torch.zeros(n, dtype=torch.bool, device=dev)

    live = torch.arange(n, device=dev)
    s_idx, upper, lower = s_all, upper_full, lower_full
    beta, grad = beta_out.clone(), grad_out.clone()
    dg = diag[s_idx]
    iters = torch.zeros(n, dtype=torch.int64, device=dev)
    inf = torch.tensor(float("inf"), dtype=dtype, device=dev)
    tau = 1e-12
    for it in range(max_iter + 1):
        can_up = beta < upper
        can_down = beta > lower
        g_i, i = torch.where(can_up, grad, inf).min(dim=1)
        g_max = torch.where(can_down, grad, -inf).max(dim=1).values
        active = (g_max - g_i) > tol
        if it % check_every == 0 or it == max_iter:
            finished = ~active
            n_finished = int(finished.sum())
            if it == max_iter or n_finished == len(live) or n_finished >= compact_fraction * len(live):
                rows_done = live[finished] if it < max_iter else live
                keep = ~finished if it < max_iter else torch.zeros_like(finished)
                sel = finished if it < max_iter else torch.ones_like(finished)
                beta_out[rows_done] = beta[sel]
                grad_out[rows_done] = grad[sel]
                iters_out[rows_done] = iters[sel]
                done_out[rows_done] = finished[sel]
                if not bool(keep.any()):
                    break
                live, s_idx, upper, lower = live[keep], s_idx[keep], upper[keep], lower[keep]
                beta, grad, iters, dg = beta[keep], grad[keep], iters[keep], dg[keep]
                g_i, i, active = g_i[keep], i[keep], active[keep]
                can_down = can_down[keep]
        # flat indices: row r, column c of a (B, m) tensor is element r*m + c; K rows via K_flat
        base = torch.arange(len(live), device=dev) * m
        flat_i = base + i
        K_i = K_flat.index_select(0, s_idx * m + i)
        dg_i = dg.reshape(-1).index_select(0, flat_i)
        curvature = torch.clamp(dg + (dg_i[:, None] - 2.0 * K_i), min=tau)
        gain = grad - g_i[:, None]
        score = torch.where(can_down & (gain > 0), gain * gain / curvature, -inf)
        j = score.argmax(dim=1)
        flat_j = base + j
        K_j = K_flat.index_select(0, s_idx * m + j)
        beta_flat, upper_flat, lower_flat = beta.reshape(-1), upper.reshape(-1), lower.reshape(-1)
        beta_i, beta_j = beta_flat.index_select(0, flat_i), beta_flat.index_select(0, flat_j)
        upper_i, lower_j = upper_flat.index_select(0, flat_i), lower_flat.index_select(0, flat_j)
        step = gain.reshape(-1).index_select(0, flat_j) / curvature.reshape(-1).index_select(0, flat_j)
        step = torch.minimum(torch.minimum(step, upper_i - beta_i), beta_j - lower_j)
        step = torch.where(active, step, torch.zeros_like(step))
        iters += active
        beta_flat.index_copy_(0, flat_i, torch.minimum(beta_i + step, upper_i))
        beta_flat.index_copy_(0, flat_j, torch.maximum(beta_j - step, lower_j))
        grad.addcmul_(step[:, None], K_i - K_j)
    return beta_out, grad_out, iters_out, done_out


def batched_nearest_centroid(
    features,
    labels,
    train_mask,
    subset_index=None,
    *,
    device: str | torch.device | None = "cpu",
    dtype: torch.dtype = torch.float64,
    chunk_size: int = 4096,
) -> BatchedLinearModel:
    """Nearest-centroid classifiers (Euclidean), the stable control learner, fitted in a batch.

    f(x) = (μ₊ - μ₋)·x - (‖μ₊‖² - ‖μ₋‖²)/2, with μ± the training means of each class; f > 0 ⇔ x is
    closer to the positive centroid. Same inputs and output as :func:`batched_linear_svm`.
    """
    X, y_pm, mask, sidx = _validate(features, labels, train_mask, subset_index)
    dev = resolve_torch_device(device)
    Xt = torch.as_tensor(X, dtype=dtype, device=dev)
    y_all = torch.as_tensor(y_pm, dtype=dtype, device=dev)
    decision = np.empty(mask.shape, dtype=float)
    for start in range(0, mask.shape[0], chunk_size):
        stop = min(start + chunk_size, mask.shape[0])
        s_idx = torch.as_tensor(sidx[start:stop], device=dev)
        train = torch.as_tensor(mask[start:stop], device=dev).to(dtype)
        y = y_all[s_idx]
        Xs = Xt[s_idx]
        pos = train * (y > 0)
        neg = train * (y < 0)
        mu_pos = torch.einsum("pm,pmd->pd", pos, Xs) / pos.sum(1, keepdim=True)
        mu_neg = torch.einsum("pm,pmd->pd", neg, Xs) / neg.sum(1, keepdim=True)
        w = mu_pos - mu_neg
        b = -0.5 * ((mu_pos**2).sum(1) - (mu_neg**2).sum(1))
        decision[start:stop] = (torch.einsum("pmd,pd->pm", Xs, w) + b[:, None]).cpu().numpy()
    n = mask.shape[0]
    return BatchedLinearModel(decision=decision, n_iter=np.zeros(n, dtype=np.int64), converged=np.ones(n, dtype=bool))
