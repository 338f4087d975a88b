"""Chapter 3: the empirical variance estimator (EVE) for validating CAD classifiers.

Reproduces Mendelson et al., "The empirical variance estimator for computer aided diagnosis: lessons
for algorithm validation" (MICCAI 2015). Every experiment is a pure function of its arguments (a seed
included) that returns a tidy DataFrame; the grids go through :func:`medeval.runtime.grid.run_grid`
(local processes or Dask). Units take a ``config`` dict (dataset, classifier, engine, C, ...) so that
they are picklable and cacheable.

Experiments (paper section):

* :func:`drawstring_unit` (3.1): E[EVE] and E[NEVE] within parents of P subjects per class;
* :func:`characterization_unit` (3.2): EVE, NEVE, fold-wise (NFW) and binomial variances at one size;
* :func:`strategy_unit` (3.3): bias, SD and MSE of 10x1, 10x10, 3x1, 3x10 relative to LOO;
* :func:`known_truth_unit` (ours): EVE on finite phantom pools against the Monte Carlo truth;
* :func:`comparison_unit` (ours): a worked CI and a paired SVM-vs-centroid comparison;
* :func:`bridge_unit` (ours): EVE for the macro-AUC of a multi-label problem (chapter 5's metric).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from medeval.metrics.variance import (
    empirical_variance_estimate,
    empirical_variance_estimate_standard_error,
    eve_confidence_interval,
    naive_binomial_variance,
    naive_empirical_variance_estimate,
    naive_foldwise_variance,
    paired_comparison,
    sample_variance_standard_error,
    strategy_bias_variance_mse,
)
from medeval.runtime.params import ChapterParams
from medeval.validation import (
    draw_balanced_subsets,
    draw_disjoint_subset_pairs,
    draw_parent,
    max_disjoint_subset_size,
    parse_strategy,
    run_validation,
    verify_hard_margin_limit,
)

DATASETS = ("adni_phantom", "wdbc", "adni")
PAPER_COUNTS = {
    "drawstring_parent_sizes": list(range(25, 156, 2)),
    "drawstring_n_parents": 500,
    "drawstring_n_pairs": 500,
    "characterization_n_pairs": 10_000,
    "characterization_sizes": "10 .. 125 per class (step not stated)",
    "strategy_n_pairs": 2_500,
}

PerClass = Annotated[int, Field(ge=2, le=1000)]


class Params(ChapterParams):
    """Parameters of chapter 3 (counts default to a few minutes on a 2-core CPU; paper values in `full`)."""

    dataset: Literal["adni_phantom", "wdbc", "adni"] = Field(
        "adni_phantom",
        description="main pool: 'adni_phantom' (synthetic 370 HC / 252 AD), 'wdbc' (scikit-learn), 'adni' (your CSV)",
    )
    adni_csv: str | None = Field(
        None, description="path of an ADNI regional-volume CSV (subject_id, diagnosis HC|AD, regions); "
        "null = $MEDEVAL_DATA/adni/adni_regional_volumes.csv via the data manifest"
    )
    effect_size: float = Field(1.5, gt=0, le=5, description="AD atrophy in medial temporal regions (HC SDs), phantom only")
    n_features: int = Field(80, ge=6, le=200, description="regions of the ADNI-like phantom")
    classifier: Literal["svm", "nearest_centroid"] = Field("svm", description="main learner (the paper: hard-margin linear SVM)")
    engine: Literal["auto", "batched", "sklearn"] = Field(
        "auto", description="SVM fitting: 'batched' torch solver (CPU/GPU), a scikit-learn SVC loop, or 'auto' "
        "(batched on CUDA, scikit-learn on the CPU, where the loop is faster; see benchmarks/results/eve.md)"
    )
    svm_c: float = Field(1e4, gt=0, le=1e9, description="SVM box constraint C (verified to be in the hard-margin limit)")
    svm_tol: float = Field(1e-3, gt=0, le=0.1, description="SVM stopping tolerance (LIBSVM eps)")
    hard_margin_factor: float = Field(100.0, ge=2, le=1e6, description="C is in the hard-margin limit if C x factor changes no prediction")
    metric: Literal["accuracy", "sensitivity", "specificity", "auc"] = Field("accuracy", description="performance metric")
    n_splits: int = Field(10, ge=2, le=50, description="K of the K-fold CV in the drawstring and characterization")

    drawstring_parent_sizes: list[PerClass] = Field(
        [25, 35, 50, 70, 100, 155], min_length=2, max_length=100, description="parent sizes P (per class); paper 25..155 step 2"
    )
    drawstring_subset_size: PerClass = Field(25, description="subjects per class in each drawstring subset (paper 25)")
    drawstring_n_parents: int = Field(16, ge=2, le=10_000, description="parents per P (paper 500)")
    drawstring_n_pairs: int = Field(16, ge=2, le=100_000, description="disjoint pairs per parent (paper 500); NEVE uses 2x this many subsets")

    characterization_sizes: list[PerClass] = Field(
        [10, 25, 50, 100], min_length=2, max_length=100, description="subset sizes per class (paper 10..125)"
    )
    characterization_n_pairs: int = Field(100, ge=2, le=1_000_000, description="disjoint pairs per size (paper 10,000)")

    strategy_sizes: list[PerClass] = Field([10, 25], min_length=1, max_length=20, description="subset sizes for the strategy comparison")
    strategy_n_pairs: int = Field(60, ge=2, le=100_000, description="disjoint pairs per size (paper 2,500)")
    strategies: list[str] = Field(
        ["10x1", "10x10", "3x1", "3x10", "LOO"], min_length=2, description="strategies compared with leave-one-out (must include LOO)"
    )

    truth_sizes: list[PerClass] = Field([10, 25], min_length=1, max_length=20, description="sizes of the known-truth check (phantom)")
    truth_n_pools: int = Field(8, ge=2, le=10_000, description="independent finite phantom pools (370/252) in the known-truth check")
    truth_pairs_per_pool: int = Field(15, ge=1, le=100_000, description="disjoint pairs per pool in the known-truth check")
    truth_n_draws: int = Field(300, ge=10, le=1_000_000, description="fresh draws for the Monte Carlo true variance")

    setting_sizes: list[PerClass] = Field([10, 25, 50], min_length=1, max_length=20, description="sizes of the learner x data comparison")
    setting_n_pairs: int = Field(60, ge=2, le=100_000, description="disjoint pairs per size in the learner x data comparison")

    comparison_size: PerClass = Field(25, description="subset size (per class) of the worked CI / comparison example")
    comparison_n_pairs: int = Field(40, ge=2, le=100_000, description="pairs in the worked CI / comparison example")

    bridge_n_pairs: int = Field(30, ge=2, le=100_000, description="pairs for EVE on the multi-label macro-AUC")
    bridge_size: int = Field(100, ge=20, le=2000, description="images per subset in the multi-label bridge")

    @model_validator(mode="after")
    def _check(self):
        if "LOO" not in [s.upper() for s in self.strategies]:
            raise ValueError("strategies must include 'LOO' (the reference of the comparison)")
        for s in self.strategies:
            parse_strategy(s)
        small = [p for p in self.drawstring_parent_sizes if p < self.drawstring_subset_size]
        if small:
            raise ValueError(
                f"drawstring_parent_sizes {small} are below drawstring_subset_size={self.drawstring_subset_size}: "
                "a parent must hold at least one subset"
            )
        if max(self.drawstring_parent_sizes) < 2 * self.drawstring_subset_size:
            raise ValueError(
                f"drawstring_parent_sizes {self.drawstring_parent_sizes}: at least one must be >= 2 x "
                f"drawstring_subset_size = {2 * self.drawstring_subset_size}, where a disjoint pair (EVE) fits"
            )
        return self


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------
def adni_csv_path(adni_csv: str | None = None):
    """The ADNI regional-volume CSV: ``adni_csv`` if given, else the manifest location
    ``$MEDEVAL_DATA/adni/adni_regional_volumes.csv``. A missing file raises ``DatasetUnavailableError``
    with instructions (never replaced by the phantom)."""
    from pathlib import Path

    from medeval.data.manifest import DatasetUnavailableError, require

    if adni_csv is None:
        return require("adni") / "adni_regional_volumes.csv"
    path = Path(adni_csv).expanduser()
    if not path.is_file():
        raise DatasetUnavailableError(
            f"adni: the regional-volume CSV given as adni_csv={adni_csv!r} ({path.resolve()}) does not exist; "
            "see `medeval data list` (id 'adni') for how to obtain ADNI access and build it"
        )
    return path


def adni_csv_digest(adni_csv: str | None = None) -> str:
    """SHA-256 of the ADNI CSV's bytes: part of every unit's config, so that cached grid results are
    never reused for a changed CSV (and a worker reading a different file fails instead of mixing data)."""
    import hashlib

    return hashlib.sha256(adni_csv_path(adni_csv).read_bytes()).hexdigest()


def load_pool(dataset: str, *, seed: int = 0, effect_size: float = 1.5, n_features: int = 80, adni_csv: str | None = None):
    """(features standardised, labels in {0, 1} with 1 = AD / malignant, phantom model or None).

    * "adni_phantom": :func:`medeval.data.phantoms.adni.generate_adni_pool` (370 HC / 252 AD),
      z-scored with the model's HC population mean and SD (the same map for fresh draws);
    * "wdbc": scikit-learn's breast-cancer data (212 malignant / 357 benign), z-scored on the pool;
    * "adni": your regional-volume CSV through ``medeval.data.readers.read_regional_volumes``
      (``adni_csv`` or the manifest location, see :func:`adni_csv_path`; one row per subject, so
      duplicate subject ids, e.g. follow-up scans, are refused by the reader), z-scored on the pool.
    Standardisation is our choice: the paper does not mention one.
    """
    if dataset == "adni_phantom":
        from medeval.data.phantoms.adni import generate_adni_pool

        pool = generate_adni_pool(seed=seed, effect_size=effect_size, n_features=n_features)
        return pool.model.standardize(pool.features), pool.labels, pool.model
    names = None
    if dataset == "wdbc":
        from sklearn.datasets import load_breast_cancer

        X, target = load_breast_cancer(return_X_y=True)
        y = (target == 0).astype(np.int64)  # scikit-learn codes malignant as 0
    elif dataset == "adni":
        from medeval.data.readers import read_regional_volumes, regional_volume_arrays

        path = adni_csv_path(adni_csv)
        table = read_regional_volumes(path)
        X, y = regional_volume_arrays(table)
        names = [c for c in table.columns if c not in ("subject_id", "diagnosis")]
        missing = [name for c, name in enumerate(("HC", "AD")) if not np.any(y == c)]
        if missing:
            raise ValueError(f"{path}: no subject with diagnosis {missing[0]!r}; chapter 3 needs both HC and AD")
    else:
        raise ValueError(f"dataset must be one of {DATASETS}, got {dataset!r}")
    sd = X.std(axis=0)
    if np.any(sd == 0):
        const = np.flatnonzero(sd == 0)[:5]
        raise ValueError(f"dataset {dataset!r}: feature(s) {[names[i] for i in const] if names else const} are constant")
    return (X - X.mean(axis=0)) / sd, y, None


def check_pool_fits(P: Params, labels) -> None:
    """Refuse, before any compute, sizes that the main pool cannot hold (e.g. the paper's sizes on a
    smaller ADNI CSV), naming the parameter and the largest value that fits."""
    y = np.asarray(labels)
    smallest = int(min(np.sum(y == 0), np.sum(y == 1)))
    pair_max = smallest // 2
    where = f"the {P.dataset!r} pool ({int(np.sum(y == 0))} negatives, {int(np.sum(y == 1))} positives)"
    problems = []
    too_big = [p for p in P.drawstring_parent_sizes if p > smallest]
    if too_big:
        problems.append(f"drawstring_parent_sizes {too_big} exceed the smaller class (at most {smallest} per class)")
    too_big = [n for n in P.strategy_sizes if n > pair_max]
    if too_big:
        problems.append(f"strategy_sizes {too_big} too large for two disjoint subsets (at most {pair_max} per class)")
    if P.comparison_size > pair_max:
        problems.append(f"comparison_size={P.comparison_size} too large for two disjoint subsets "
                        f"(at most {pair_max} per class)")
    fitting = [n for n in P.characterization_sizes if n <= pair_max]
    if len(fitting) < 2:
        problems.append(f"characterization_sizes {P.characterization_sizes}: fewer than two sizes fit two disjoint "
                        f"subsets (at most {pair_max} per class; larger sizes are omitted, as in the paper)")
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))


def _pool_from_config(config: dict):
    if config["dataset"] == "adni" and config.get("data_digest") is not None:
        digest = adni_csv_digest(config.get("adni_csv"))
        if digest != config["data_digest"]:
            raise ValueError(
                f"adni: the CSV {adni_csv_path(config.get('adni_csv'))} changed since the run was configured "
                f"(sha256 {digest[:12]} != {config['data_digest'][:12]}); re-run the chapter"
            )
    return load_pool(
        config["dataset"], seed=config.get("data_seed", 0), effect_size=config.get("effect_size", 1.5),
        n_features=config.get("n_features", 80), adni_csv=config.get("adni_csv"),
    )


def make_config(P: Params, **changes) -> dict:
    """The JSON-serialisable settings every unit needs, taken from the chapter parameters.

    For ``dataset == "adni"`` it holds ``data_digest``, the SHA-256 of the CSV: the grid cache keys on
    it, so a changed CSV is never answered with cached results.
    """
    engine = P.engine
    if engine == "auto":
        from medeval.runtime.device import resolve_device

        engine = "batched" if resolve_device(P.device).type == "cuda" else "sklearn"
    config = {
        "dataset": P.dataset, "adni_csv": P.adni_csv, "effect_size": P.effect_size, "n_features": P.n_features,
        "data_seed": P.seed, "classifier": P.classifier, "engine": engine, "C": P.svm_c, "tol": P.svm_tol,
        "device": P.device, "metric": P.metric,
    }
    config.update(changes)
    if config["dataset"] == "adni":
        config["data_digest"] = adni_csv_digest(config["adni_csv"])
    return config


def _validate(X, y, subsets, strategy, config, rng, metrics=None):
    return run_validation(
        X, y, subsets, strategy, rng=rng, classifier=config["classifier"], metrics=metrics or (config["metric"],),
        engine=config["engine"], C=config["C"], tol=config["tol"], device=config["device"],
    )


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), *[int(k) for k in keys]])


# ----------------------------------------------------------------------------------------------
# 3.1 drawstring
# ----------------------------------------------------------------------------------------------
def drawstring_unit(config: dict, parent_size: int, subset_size: int, n_parents: int, n_pairs: int,
                    n_splits: int, seed: int) -> pd.DataFrame:
    """Sec. 3.1: for ``n_parents`` parents of ``parent_size`` per class, EVE (``n_pairs`` disjoint pairs)
    and NEVE (2 x ``n_pairs`` independently drawn, overlapping subsets) of ``n_splits``-fold CV on
    subsets of ``subset_size`` per class. One row per parent; EVE is NaN (with ``eve_note``) where two
    disjoint subsets do not fit in the parent (P < 2n), as in the paper.
    """
    X, y, _ = _pool_from_config(config)
    rng = _rng(seed, 31, parent_size)
    metric = config["metric"]
    rows = []
    for parent_id in range(n_parents):
        parent = draw_parent(y, parent_size, rng)
        row = {"parent_size": parent_size, "parent": parent_id}
        neve_subsets = draw_balanced_subsets(y, subset_size, 2 * n_pairs, rng, pool=parent)
        fits_pairs = max_disjoint_subset_size(y, parent) >= subset_size
        all_subsets = neve_subsets
        if fits_pairs:
            pairs = draw_disjoint_subset_pairs(y, subset_size, n_pairs, rng, pool=parent)
            all_subsets = np.concatenate([neve_subsets, pairs.reshape(2 * n_pairs, -1)])
        scores = _validate(X, y, all_subsets, f"{n_splits}x1", config, rng).scores[metric]
        row["neve"] = naive_empirical_variance_estimate(scores[: 2 * n_pairs])
        row["mean_score"] = float(scores.mean())
        if fits_pairs:
            pair_scores = scores[2 * n_pairs :].reshape(n_pairs, 2)
            row["eve"] = empirical_variance_estimate(pair_scores[:, 0], pair_scores[:, 1])
            row["eve_note"] = ""
        else:
            row["eve"] = np.nan
            row["eve_note"] = f"P={parent_size} < 2n={2 * subset_size}: no disjoint pair fits"
        rows.append(row)
    return pd.DataFrame(rows)


def summarise_drawstring(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and Monte Carlo SE of EVE and NEVE across parents, per P."""
    def se(x):
        x = x.dropna()
        return x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan

    out = frame.groupby("parent_size").agg(
        eve=("eve", "mean"), eve_se=("eve", se), neve=("neve", "mean"), neve_se=("neve", se),
        mean_score=("mean_score", "mean"), n_parents=("parent", "count"),
    )
    return out.reset_index()


def drawstring_slope(summary: pd.DataFrame) -> dict:
    """Weighted least-squares slope of E[EVE] against P with its SE (flat ⇔ |slope| < 2 SE)."""
    s = summary.dropna(subset=["eve", "eve_se"])
    if len(s) < 2:
        return {"slope": np.nan, "slope_se": np.nan, "z": np.nan}
    x, yv, w = s["parent_size"].to_numpy(float), s["eve"].to_numpy(), 1 / np.maximum(s["eve_se"].to_numpy(), 1e-12) ** 2
    xm = np.sum(w * x) / w.sum()
    slope = np.sum(w * (x - xm) * yv) / np.sum(w * (x - xm) ** 2)
    slope_se = 1 / np.sqrt(np.sum(w * (x - xm) ** 2))
    return {"slope": float(slope), "slope_se": float(slope_se), "z": float(slope / slope_se)}


# ----------------------------------------------------------------------------------------------
# 3.2 characterization
# ----------------------------------------------------------------------------------------------
def characterization_unit(config: dict, subset_size: int, n_pairs: int, n_splits: int, seed: int) -> pd.DataFrame:
    """Sec. 3.2 at one size: EVE, NEVE, NFW and binomial variances of ``n_splits``-fold CV.

    NEVE here is the sample variance of the 2R subsets of the pairs (disjoint within a pair,
    overlapping across pairs: "randomly selected from all available data, and allowed to overlap").
    A size too large for disjoint pairs in the pool gives one row of NaNs with the reason.
    """
    X, y, _ = _pool_from_config(config)
    metric = config["metric"]
    base = {"subset_size": subset_size, "n_items": 2 * subset_size, "classifier": config["classifier"],
            "dataset": config["dataset"], "n_pairs": n_pairs}
    largest = max_disjoint_subset_size(y)
    if subset_size > largest:
        return pd.DataFrame([{**base, "mean_score": np.nan, "eve": np.nan, "eve_se": np.nan, "neve": np.nan,
                              "nfw": np.nan, "binomial": np.nan,
                              "note": f"n={subset_size} > {largest}: two disjoint subsets do not fit in the pool"}])
    rng = _rng(seed, 32, subset_size)
    pairs = draw_disjoint_subset_pairs(y, subset_size, n_pairs, rng)
    result = _validate(X, y, pairs.reshape(2 * n_pairs, -1), f"{n_splits}x1", config, rng)
    scores = result.scores[metric].reshape(n_pairs, 2)
    fold_scores = result.fold_scores[metric]
    p = float(scores.mean())
    row = {
        **base,
        "mean_score": p,
        "eve": empirical_variance_estimate(scores[:, 0], scores[:, 1]),
        "eve_se": empirical_variance_estimate_standard_error(scores[:, 0], scores[:, 1]),
        "neve": naive_empirical_variance_estimate(scores.ravel()),
        "nfw": naive_foldwise_variance(fold_scores) if np.all(np.isfinite(fold_scores)) else np.nan,
        "binomial": naive_binomial_variance(p, 2 * subset_size) if metric != "auc" else np.nan,
        "n_unconverged": result.n_unconverged,
        "note": "",
    }
    return pd.DataFrame([row])


def characterization_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the Fig. 2 (right) ratios to the binomial variance, and NEVE/EVE, NFW/EVE."""
    out = frame.copy()
    for col in ("eve", "neve", "nfw"):
        out[f"{col}_to_binomial"] = out[col] / out["binomial"]
    out["neve_to_eve"] = out["neve"] / out["eve"]
    out["nfw_to_eve"] = out["nfw"] / out["eve"]
    out["sd_eve"] = np.sqrt(out["eve"])
    return out


# ----------------------------------------------------------------------------------------------
# 3.3 validation strategies
# ----------------------------------------------------------------------------------------------
def strategy_unit(config: dict, subset_size: int, n_pairs: int, strategies: list[str], seed: int) -> pd.DataFrame:
    """Sec. 3.3 at one size: every strategy on the same ``n_pairs`` disjoint pairs; bias, variance (EVE)
    and MSE as estimators of the expected LOO performance, plus the ratios to LOO (Fig. 3)."""
    X, y, _ = _pool_from_config(config)
    metric = config["metric"]
    rng = _rng(seed, 33, subset_size)
    pairs = draw_disjoint_subset_pairs(y, subset_size, n_pairs, rng)
    subsets = pairs.reshape(2 * n_pairs, -1)
    scores = {}
    for name in strategies:
        strategy = parse_strategy(name)
        scores[strategy.name] = _validate(X, y, subsets, strategy, config, rng).scores[metric].reshape(n_pairs, 2)
    reference = scores["LOO"]
    rows = []
    for name, s in scores.items():
        errors = strategy_bias_variance_mse(s[:, 0], s[:, 1], reference[:, 0], reference[:, 1])
        rows.append({"subset_size": subset_size, "strategy": name, "n_pairs": n_pairs, **errors.to_dict()})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# known truth (phantom)
# ----------------------------------------------------------------------------------------------
def known_truth_unit(config: dict, subset_size: int, n_pools: int, pairs_per_pool: int, n_draws: int,
                     n_splits: int, seed: int) -> pd.DataFrame:
    """EVE on finite ADNI-like pools (370/252) against the true variance from fresh draws.

    Truth: ``n_draws`` independent fresh balanced samples of ``subset_size`` per class from the
    generating model, each validated with ``n_splits``-fold CV; σ² = their sample variance (SE from
    :func:`sample_variance_standard_error`). The draws are also paired to give the true variance of
    the mean of two half-size estimates, which ½·EVE should match. EVE: ``pairs_per_pool`` disjoint
    pairs in each of ``n_pools`` fresh pools; its SE is the spread of the per-pool EVEs (it includes
    the pool-to-pool variation). ``z`` = (EVE - σ²) / √(SE_EVE² + SE_σ²).
    """
    if config["dataset"] != "adni_phantom":
        raise ValueError("known_truth_unit needs config['dataset'] == 'adni_phantom' (the truth must be computable)")
    from medeval.data.phantoms.adni import adni_phantom_model

    model = adni_phantom_model(n_features=config.get("n_features", 80), effect_size=config.get("effect_size", 1.5),
                               seed=config.get("data_seed", 0))
    metric = config["metric"]
    rng = _rng(seed, 34, subset_size)
    strategy = f"{n_splits}x1"
    # truth from fresh draws: one subject set per draw, stacked as "subsets" of a big array
    feats, labs = [], []
    for _ in range(n_draws):
        Xd, yd = model.sample(subset_size, subset_size, rng)
        feats.append(model.standardize(Xd))
        labs.append(yd)
    X_fresh = np.concatenate(feats)
    y_fresh = np.concatenate(labs)
    subsets = np.arange(X_fresh.shape[0]).reshape(n_draws, 2 * subset_size)
    fresh = _validate(X_fresh, y_fresh, subsets, strategy, config, rng).scores[metric]
    true_var = float(np.var(fresh, ddof=1))
    true_se = sample_variance_standard_error(fresh)
    halves = fresh[: 2 * (n_draws // 2)].reshape(-1, 2).mean(axis=1)
    true_half_var = float(np.var(halves, ddof=1))
    true_half_se = sample_variance_standard_error(halves) if halves.size >= 4 else np.nan
    # EVE on finite pools
    per_pool = []
    for _ in range(n_pools):
        Xp, yp = model.sample(370, 252, rng)
        Xp = model.standardize(Xp)
        pairs = draw_disjoint_subset_pairs(yp, subset_size, pairs_per_pool, rng)
        s = _validate(Xp, yp, pairs.reshape(2 * pairs_per_pool, -1), strategy, config, rng).scores[metric].reshape(-1, 2)
        per_pool.append(empirical_variance_estimate(s[:, 0], s[:, 1]))
    per_pool = np.asarray(per_pool)
    eve = float(per_pool.mean())
    eve_se = float(per_pool.std(ddof=1) / np.sqrt(n_pools))
    z = (eve - true_var) / np.sqrt(eve_se**2 + true_se**2)
    z_half = (eve / 2 - true_half_var) / np.sqrt((eve_se / 2) ** 2 + true_half_se**2)
    return pd.DataFrame([{
        "subset_size": subset_size, "true_variance": true_var, "true_variance_se": true_se, "eve": eve, "eve_se": eve_se,
        "z": float(z), "true_variance_mean_of_halves": true_half_var, "half_eve": eve / 2, "z_half": float(z_half),
        "true_mean_score": float(fresh.mean()), "n_draws": n_draws, "n_pools": n_pools, "pairs_per_pool": pairs_per_pool,
    }])


# ----------------------------------------------------------------------------------------------
# worked CI and paired comparison
# ----------------------------------------------------------------------------------------------
def comparison_unit(config: dict, subset_size: int, n_pairs: int, n_splits: int, seed: int, level: float = 0.95) -> dict:
    """A worked example: SVM and nearest centroid on the same disjoint pairs *and the same folds*.

    Returns the per-pair scores, the EVE CIs of each learner (scheme 2, ½V) and the paired
    comparison (EVE of the difference), next to the naive binomial CI of the SVM.
    """
    X, y, _ = _pool_from_config(config)
    metric = config["metric"]
    pairs = draw_disjoint_subset_pairs(y, subset_size, n_pairs, _rng(seed, 35, subset_size))
    subsets = pairs.reshape(2 * n_pairs, -1)
    scores = {}
    for clf in ("svm", "nearest_centroid"):
        # the same generator seed ⇒ the same fold partitions for both learners
        scores[clf] = _validate(X, y, subsets, f"{n_splits}x1", {**config, "classifier": clf},
                                _rng(seed, 36, subset_size)).scores[metric].reshape(n_pairs, 2)
    out = {"subset_size": subset_size, "n_pairs": n_pairs, "level": level, "scores": {k: v.tolist() for k, v in scores.items()}}
    for clf, s in scores.items():
        centre, low, high = eve_confidence_interval(s[:, 0], s[:, 1], level=level)
        out[f"ci_{clf}"] = {"centre": centre, "low": low, "high": high}
    p = float(scores["svm"].mean())
    from scipy import stats

    half_width = stats.norm.ppf(0.5 + level / 2) * np.sqrt(naive_binomial_variance(p, 4 * subset_size))
    out["binomial_ci_svm"] = {"centre": p, "low": p - half_width, "high": p + half_width}
    out["paired"] = paired_comparison(scores["svm"][:, 0], scores["svm"][:, 1], scores["nearest_centroid"][:, 0],
                                      scores["nearest_centroid"][:, 1], level=level).to_dict()
    return out


def hard_margin_unit(config: dict, subset_sizes: list[int], factor: float, seed: int, n_subsets: int = 10) -> pd.DataFrame:
    """The paper's hard-margin check at each size: does C x ``factor`` change any held-out prediction?"""
    X, y, _ = _pool_from_config(config)
    rows = []
    for n in subset_sizes:
        if n > int(min(np.sum(y == 0), np.sum(y == 1))):
            continue
        res = verify_hard_margin_limit(X, y, n, config["C"], factor=factor, n_subsets=n_subsets,
                                       rng=_rng(seed, 37, n), engine=config["engine"], tol=config["tol"],
                                       device=config["device"])
        rows.append({"subset_size": n, **res})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# bridge: EVE for a multi-label macro-AUC (chapter 5's metric)
# ----------------------------------------------------------------------------------------------
def bridge_unit(n_pairs: int, subset_size: int, seed: int, n_labels: int = 5, n_splits: int = 5) -> dict:
    """EVE for the macro-AUC of a small multi-label task (scikit-learn's ``make_multilabel_classification``).

    Pool: 2,000 samples, 20 features, ``n_labels`` labels. For R disjoint pairs of ``subset_size``
    samples, ``n_splits``-fold CV (plain random folds) of a per-label ridge classifier gives pooled
    scores; the performance is ``medeval.metrics.multilabel.macro_auc`` (chapter 5), cross-checked
    against ``sklearn.metrics.roc_auc_score(average="macro")``. Reports EVE, NEVE and the naive
    "fold-wise SD" of macro-AUC.
    """
    from sklearn.datasets import make_multilabel_classification
    from sklearn.linear_model import Ridge
    from sklearn.metrics import roc_auc_score

    from medeval.metrics.multilabel import macro_auc

    X, Y = make_multilabel_classification(n_samples=2000, n_features=20, n_classes=n_labels, n_labels=2,
                                          random_state=int(seed) % 2**31)
    X = (X - X.mean(0)) / X.std(0)
    rng = _rng(seed, 38)
    if 2 * subset_size > X.shape[0]:
        raise ValueError(f"subset_size={subset_size} is too large for disjoint pairs in a pool of {X.shape[0]}")
    values, fold_values, max_diff = np.empty((n_pairs, 2)), [], 0.0
    for r in range(n_pairs):
        perm = rng.permutation(X.shape[0])[: 2 * subset_size].reshape(2, subset_size)
        for half in range(2):
            idx = perm[half]
            folds = rng.permutation(subset_size) % n_splits
            pred = np.empty((subset_size, n_labels))
            per_fold = []
            for k in range(n_splits):
                tr, te = folds != k, folds == k
                pred[te] = Ridge(alpha=1.0).fit(X[idx][tr], Y[idx][tr]).predict(X[idx][te])
                per_fold.append(macro_auc(Y[idx][te], pred[te]))
            values[r, half] = macro_auc(Y[idx], pred)
            max_diff = max(max_diff, abs(values[r, half] - roc_auc_score(Y[idx], pred, average="macro")))
            fold_values.append(per_fold)
    fold_values = np.asarray(fold_values, dtype=float)
    ok = np.all(np.isfinite(fold_values), axis=1)
    return {
        "n_pairs": n_pairs, "subset_size": subset_size, "mean_macro_auc": float(values.mean()),
        "eve": empirical_variance_estimate(values[:, 0], values[:, 1]),
        "eve_se": empirical_variance_estimate_standard_error(values[:, 0], values[:, 1]),
        "neve": naive_empirical_variance_estimate(values.ravel()),
        "nfw": naive_foldwise_variance(fold_values[ok]) if ok.any() else float("nan"),
        "n_subsets_without_foldwise": int((~ok).sum()),
        "max_abs_difference_vs_sklearn": float(max_diff),
    }
