"""10-fold CV fits per second: the batched torch SVM engine vs a scikit-learn SVC loop, same inputs.

    .venv/bin/python benchmarks/bench_eve.py [--subsets 200] [--per-class 25] [--device cpu|cuda|auto]

Both engines fit the same hard-margin linear SVMs (C = 1e4) on the same LIBSVM 10-fold partitions of
balanced subsets of the ADNI-like phantom pool; the script reports fits/s of each and their ratio, and
the agreement of the held-out predictions.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from medeval.data.phantoms.adni import generate_adni_pool
from medeval.data.splits import draw_balanced_subsets, libsvm_fold_ids
from medeval.models.batched_svm import batched_linear_svm, resolve_torch_device
from medeval.models.linear_svm import fit_decision_values

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine as cpu_machine  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--subsets", type=int, default=200)
    parser.add_argument("--sklearn-subsets", type=int, default=None, help="subsets for the (slow) sklearn loop")
    parser.add_argument("--per-class", type=int, default=25)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = resolve_torch_device(args.device)
    pool = generate_adni_pool(seed=0)
    X, y = pool.model.standardize(pool.features), pool.labels
    subsets = draw_balanced_subsets(y, args.per_class, args.subsets, rng=0)
    k, m = 10, subsets.shape[1]
    folds = libsvm_fold_ids(y[subsets], k, rng=1)
    mask = (folds[:, None, :] != np.arange(k)[None, :, None]).reshape(-1, m)
    sidx = np.repeat(np.arange(args.subsets), k)
    Xs, ys = X[subsets], y[subsets]
    batched_linear_svm(Xs[:2], ys[:2], mask[:20], sidx[:20], device=device)  # warm-up
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    ours = batched_linear_svm(Xs, ys, mask, sidx, device=device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    t_ours = time.perf_counter() - t0
    n_sk = args.sklearn_subsets or args.subsets
    t0 = time.perf_counter()
    ref, _ = fit_decision_values(Xs[:n_sk], ys[:n_sk], mask[: n_sk * k], sidx[: n_sk * k], engine="sklearn", n_jobs=1)
    t_sk = time.perf_counter() - t0
    fit_decision_values(Xs[:n_sk], ys[:n_sk], mask[: 2 * 64 * k], sidx[: 2 * 64 * k], engine="sklearn",
                        n_jobs=-1)  # start the worker processes (joblib reuses them), not timed
    t0 = time.perf_counter()
    ref_all, _ = fit_decision_values(Xs[:n_sk], ys[:n_sk], mask[: n_sk * k], sidx[: n_sk * k], engine="sklearn",
                                     n_jobs=-1)
    t_sk_all = time.perf_counter() - t0
    assert np.array_equal(ref, ref_all), "the multi-process loop must give the one-process decision values"
    held = ~mask[: n_sk * k]
    agree = np.mean((ours.decision[: n_sk * k] > 0)[held] == (ref > 0)[held])
    fits_ours, fits_sk = mask.shape[0] / t_ours, n_sk * k / t_sk
    print(f"machine: {cpu_machine()}, torch threads {torch.get_num_threads()}, device {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""))
    print(f"problem: {args.per_class}+{args.per_class} subjects, 80 features, 10-fold CV; "
          f"batched {mask.shape[0]} fits, sklearn {n_sk * k} fits")
    print(f"batched engine : {fits_ours:10.0f} fits/s ({t_ours:.2f} s; unconverged {ours.n_unconverged})")
    print(f"sklearn SVC    : {fits_sk:10.0f} fits/s ({t_sk:.2f} s, one process)")
    print(f"sklearn SVC    : {n_sk * k / t_sk_all:10.0f} fits/s ({t_sk_all:.2f} s, {os.cpu_count()} processes: "
          f"{t_sk / t_sk_all:.2f}x one process, same values)")
    print(f"ratio          : {fits_ours / fits_sk:10.1f} x")
    print(f"held-out prediction agreement: {100 * agree:.2f} %")


if __name__ == "__main__":
    main()
