"""Chapter 00-template-chapter: Template chapter title.

Scaffold experiment (replace it with the paper's): the ROC-AUC of one feature of the Wisconsin diagnostic
breast-cancer data (WDBC, as bundled with scikit-learn) as a score for malignancy, over ``n_repeats`` bootstrap
resamples of ``n_samples`` cases each, and the same resamples with the labels permuted: the control on which the
chapter's claim must fail.

:func:`run` is the chapter's one entry point (:mod:`medeval.core.chapter`): the grid of resamples through the
grid executor, summarised in a :class:`Results`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from medeval.experiments.template_chapter_params import Params
from medeval.metrics import roc_auc

__all__ = ["Params", "Results", "feature_auc", "grid", "run", "summarise"]


def feature_auc(feature: str, n_samples: int, repeat: int, seed: int, permuted: bool = False) -> dict:
    """One bootstrap resample: the ROC-AUC of ``feature`` as a score for malignancy on ``n_samples`` cases drawn
    with replacement (random state ``SeedSequence([seed, repeat])``); with ``permuted`` the labels of the resample
    are shuffled first, which makes any true AUC 1/2."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    column = list(data.feature_names).index(feature)
    rng = np.random.default_rng([seed, repeat])
    rows = rng.integers(0, len(data.target), n_samples)
    malignant = data.target[rows] == 0  # scikit-learn codes malignant as 0
    if permuted:
        malignant = rng.permutation(malignant)
    return {"repeat": repeat, "permuted": permuted,
            "auc": float(roc_auc(malignant, data.data[rows, column], undefined=np.nan))}


def grid(params: Params) -> list[dict]:
    """The runs of the chapter: each bootstrap resample, with the true labels and with the labels permuted."""
    return [{"feature": params.feature, "n_samples": params.n_samples, "repeat": r, "seed": params.seed,
             "permuted": permuted} for permuted in (False, True) for r in range(params.n_repeats)]


def summarise(runs: list[dict], alpha: float) -> pd.DataFrame:
    """Mean ROC-AUC over the resamples and its two-sided percentile interval at level ``alpha``."""
    auc = np.array([r["auc"] for r in runs], dtype=float)
    auc = auc[np.isfinite(auc)]
    low, high = np.quantile(auc, [alpha / 2, 1 - alpha / 2]) if len(auc) else (np.nan, np.nan)
    return pd.DataFrame([{"resamples": len(auc), "mean_auc": float(np.mean(auc)) if len(auc) else np.nan,
                          "low": float(low), "high": float(high)}])


@dataclass
class Results:
    """Everything the chapter computes for one parameter set.

    ``runs``: one dict per resample (``repeat``, ``permuted``, ``auc``); ``summary`` and ``control``: the
    :func:`summarise` of the resamples with the true labels and with the labels permuted."""

    runs: list[dict]
    summary: pd.DataFrame
    control: pd.DataFrame


def run(P: Params, cache_dir=None) -> Results:
    """The chapter's grid of resamples (cached under ``cache_dir`` when given), summarised."""
    from medeval.runtime.grid import run_grid

    runs = run_grid(feature_auc, grid(P), cache_dir=cache_dir, scheduler=P.scheduler, max_workers=P.max_workers)
    return Results(runs=runs, summary=summarise([r for r in runs if not r["permuted"]], P.alpha),
                   control=summarise([r for r in runs if r["permuted"]], P.alpha))
