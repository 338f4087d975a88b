"""The appendix page "Re-executing a chapter with new parameters": a small, real experiment that shows the
pipeline (profiles, overrides, validation, grid executor, recorded outputs) on scikit-learn's breast-cancer
data (WDBC).

The experiment: how does the spread of a hold-out accuracy estimate shrink with the size of the test set?
For each test-set size, ``n_repeats`` random stratified hold-out splits of WDBC are drawn, a logistic
regression is fitted on the rest, and the accuracy on the test set is recorded. :func:`shrinkage_check` is the
page's check (not a claim: the page reproduces no paper).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy import stats

from medeval.core.claims import Check
from medeval.experiments.rerun_demo_params import WDBC_CASES, Params

ALPHA = 0.05


@functools.cache
def wdbc() -> tuple[np.ndarray, np.ndarray]:
    """WDBC's features and labels (scikit-learn's bundled copy), read once per process and read-only: a page
    fits a few hundred models on them, and parsing the CSV took 40 % of each fit."""
    from sklearn.datasets import load_breast_cancer

    x, y = load_breast_cancer(return_X_y=True)
    x.flags.writeable = y.flags.writeable = False
    return x, y


def holdout_accuracy(test_size: int, repeat: int, seed: int, regularisation_c: float) -> dict:
    """One hold-out run: accuracy of a logistic regression on a stratified random test set of ``test_size``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if not 10 <= test_size <= 400:
        raise ValueError(f"test_size must be between 10 and 400 (WDBC has {WDBC_CASES} cases), got {test_size}")
    x, y = wdbc()
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_size, stratify=y, random_state=np.random.SeedSequence([seed, test_size, repeat]).generate_state(1)[0]
    )
    model = make_pipeline(StandardScaler(), LogisticRegression(C=regularisation_c, max_iter=2000))
    model.fit(x_tr, y_tr)
    return {"test_size": test_size, "repeat": repeat, "accuracy": float(model.score(x_te, y_te))}


def grid(params: Params) -> list[dict]:
    return [
        {"test_size": n, "repeat": r, "seed": params.seed, "regularisation_c": params.regularisation_c}
        for n in params.test_sizes for r in range(params.n_repeats)
    ]


def summarise(runs: list[dict]) -> pd.DataFrame:
    """Mean and SD of the accuracy per test-set size, next to the binomial SD sqrt(p(1-p)/n)."""
    frame = pd.DataFrame(runs)
    out = frame.groupby("test_size")["accuracy"].agg(["mean", "std", "count"]).reset_index()
    out["binomial_sd"] = np.sqrt(out["mean"] * (1 - out["mean"]) / out["test_size"])
    return out


def shrinkage_check(runs: list[dict], *, alpha: float = ALPHA) -> Check:
    """Does the SD of the hold-out accuracy shrink from the smallest to the largest test-set size?

    The variance-ratio F-test: F = s²(smallest) / s²(largest) with (n₁ − 1, n₂ − 1) degrees of freedom. The check
    passes when P(F' ≥ F) < ``alpha`` (the spread shrinks) and fails when P(F' ≤ F) < ``alpha`` (it grows); in
    between, the sign of the difference alone decides nothing and the check is undecided (``passed=None``), as it
    is with fewer than two test-set sizes, fewer than two repeats per size, or no spread at the largest size.
    """
    frame = pd.DataFrame(runs)
    sizes = sorted(frame["test_size"].unique())
    expected = (f"F-test of s²(smallest) / s²(largest test set): > 1 at α = {alpha} passes, < 1 at α = {alpha} "
                "fails, otherwise undecided")
    name = "the SD of a hold-out accuracy shrinks as the test set grows"
    where = "textbook (binomial sampling: SD = sqrt(p(1 − p)/n))"
    if len(sizes) < 2:
        return Check(name, where, expected, f"only one test-set size ({sizes}): undecided", None)
    a = frame.loc[frame["test_size"] == sizes[0], "accuracy"].to_numpy(float)
    b = frame.loc[frame["test_size"] == sizes[-1], "accuracy"].to_numpy(float)
    if len(a) < 2 or len(b) < 2:
        return Check(name, where, expected, f"needs 2 repeats per size, has {len(a)} and {len(b)}: undecided", None)
    va, vb = a.var(ddof=1), b.var(ddof=1)
    head = f"SD {np.sqrt(va):.3f} (n = {sizes[0]}) -> {np.sqrt(vb):.3f} (n = {sizes[-1]}), {len(a)} + {len(b)} repeats"
    if np.ptp(b) == 0:  # all equal (e.g. at the ceiling): the ratio is undefined, not evidence
        return Check(name, where, expected, f"{head}: no spread at the largest size, F undefined: undecided", None)
    f = va / vb
    p_shrinks = float(stats.f.sf(f, len(a) - 1, len(b) - 1))
    p_grows = float(stats.f.cdf(f, len(a) - 1, len(b) - 1))
    passed = True if p_shrinks < alpha else (False if p_grows < alpha else None)
    return Check(name, where, expected, f"{head}; F = {f:.2f}, p (shrinks) = {p_shrinks:.3g}, p (grows) = "
                 f"{p_grows:.3g}", passed)
