"""Chapter 3: the empirical variance estimator (EVE) for validating CAD classifiers.

Reproduces Mendelson et al., "The empirical variance estimator for computer aided diagnosis: lessons
for algorithm validation" (MICCAI 2014). Every experiment is a pure function of its arguments (a seed
included) that returns a tidy DataFrame; the grids go through :func:`medeval.runtime.grid.run_grid`
(local processes or Dask). Units take a ``config`` dict (dataset, classifier, engine, C, ...) so that
they are picklable and cacheable.

Experiments (paper section):

* :func:`drawstring_unit` (3.1): E[EVE] and E[NEVE] within parents of P subjects per class, for every metric;
* :func:`characterization_unit` (3.2): EVE, NEVE, fold-wise (NFW) and binomial variances at one size;
* :func:`strategy_unit` (3.3): bias, SD and MSE of 10x1, 10x10, 3x1, 3x10 relative to LOO;
* :func:`truth_draws_unit` and :func:`truth_pools_unit` (ours): the Monte Carlo truth from fresh phantom
  draws, and EVE on finite phantom pools (with a second fold partition for a paired test under a true null);
* :func:`comparison_unit` (ours): a worked CI and a paired SVM-vs-centroid comparison;
* :func:`bridge_unit` (ours): EVE for the macro-AUC of a multi-label problem (chapter 5's metric).

:func:`run_validation` runs one validation strategy on many subsets at once and scores it
(:class:`ValidationResult`): the fold ids of :mod:`medeval.data.splits`, the fits of
:func:`medeval.models.linear_svm.fit_decision_values` (the batched torch engine, the exact active-set solver
or a scikit-learn ``SVC`` loop as the reference) and the measures of
:func:`medeval.metrics.decision_values.decision_value_scores` on the pooled held-out decisions (as LIBSVM's
``svm_cross_validation`` does), averaged over repeats. :func:`verify_hard_margin_limit` checks the paper's
hard-margin criterion.

:func:`run` is the chapter (the protocol of :mod:`medeval.core.chapter`): it builds every grid of the chapter and
runs it as one grid (:func:`run_chapter_grid`, so that local workers stay busy), assembles the parts and computes
what the page shows and records, returned as one :class:`Results`; :mod:`medeval.experiments.eve_claims` decides
the paper's claims from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from medeval.data.seeding import as_generator
from medeval.data.splits import (
    Strategy,
    check_binary_labels,
    draw_balanced_subsets,
    draw_disjoint_subset_pairs,
    draw_parent,
    libsvm_fold_ids,
    max_disjoint_subset_size,
    parse_strategy,
    strategy_fold_ids,
)
from medeval.experiments.eve_params import DATASETS, HARD_MARGIN_SPLITS, PAPER_COUNTS, Params  # noqa: F401
from medeval.metrics.decision_values import DECISION_VALUE_SCORES, decision_value_scores
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
from medeval.models.linear_svm import fit_decision_values

#: The validation metrics every experiment can report (one fit, all metrics).
METRICS: tuple[str, ...] = DECISION_VALUE_SCORES


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
    from medeval.data.manifest import file_hash

    return file_hash(adni_csv_path(adni_csv))


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
    smaller ADNI CSV), naming the parameter and the largest value that fits (the rules of
    :meth:`medeval.experiments.eve_params.Params.pool_violations`, which the pre-flight applies to an ADNI CSV and
    the schema to the pools of known size)."""
    y = np.asarray(labels)
    negatives, positives = int(np.sum(y == 0)), int(np.sum(y == 1))
    problems = P.pool_violations(f"the {P.dataset!r} pool ({negatives} negatives, {positives} positives)",
                                 negatives, positives)
    if problems:
        raise ValueError("; ".join(v.rule for v in problems))


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
    if engine == "auto":  # the batched engine on a GPU (device cuda, or auto where one is visible)
        from medeval.models.cuda import cuda_device_name

        on_gpu = P.device.startswith("cuda") or (P.device == "auto" and cuda_device_name() is not None)
        engine = "batched" if on_gpu else "active_set"
    config = {
        "dataset": P.dataset, "adni_csv": P.adni_csv, "effect_size": P.effect_size, "n_features": P.n_features,
        "data_seed": P.seed, "classifier": P.classifier, "engine": engine, "C": P.svm_c, "tol": P.svm_tol,
        "device": P.device, "metric": P.metric,
    }
    config.update(changes)
    if config["dataset"] == "adni":
        config["data_digest"] = adni_csv_digest(config["adni_csv"])
    return config


# ----------------------------------------------------------------------------------------------
# validation runs: one strategy on many subsets, and the hard-margin check
# ----------------------------------------------------------------------------------------------
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


def _validation_inputs(features, labels, subsets, metrics, require_balanced: bool):
    """The checked inputs of :func:`run_validation`: (features as floats, labels in {0, 1}, an (S, m) index array).

    Refuses features that do not match the labels, subsets that are not an index array into the samples, metrics
    outside :data:`METRICS`, unbalanced subsets (with ``require_balanced``) and subsets that list a sample twice.
    """
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
    n_pos = y[idx].sum(axis=1)
    if require_balanced and np.any(2 * n_pos != idx.shape[1]):
        bad = int(np.sum(2 * n_pos != idx.shape[1]))
        raise ValueError(
            f"subsets: {bad} subset(s) are not balanced (equal numbers of each class are required; "
            "pass require_balanced=False to allow it)"
        )
    if np.any(np.array([len(set(row)) for row in idx[: min(len(idx), 64)]]) != idx.shape[1]):
        raise ValueError("subsets: a subset lists the same sample twice")
    return X, y, idx


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
    X, y, idx = _validation_inputs(features, labels, subsets, metrics, require_balanced)
    y_sub = y[idx]
    rng = as_generator(rng, name="rng")
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
        own_fold = np.minimum(folds, n_eval - 1)[:, :, None, :]  # the fold that tests each point
        pooled = np.take_along_axis(decision, own_fold, axis=2)[:, :, 0, :]
        labels_rep = np.broadcast_to(y_sub[start:stop, None, :], folds.shape)
        in_fold = ~train_mask  # (s, M, n_eval, m): the test points of each fold
        for metric in metrics:
            repeat_scores[metric][start:stop] = decision_value_scores(pooled, labels_rep, tested, metric)
            scores[metric][start:stop] = repeat_scores[metric][start:stop].mean(axis=1)
            fold_scores[metric][start:stop] = decision_value_scores(
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
    rng = as_generator(rng, name="rng")
    y = check_binary_labels(labels)
    subsets = draw_balanced_subsets(y, n_per_class, n_subsets, rng)
    fold_ids = libsvm_fold_ids(y[subsets], n_splits, rng)
    m = subsets.shape[1]
    train_mask = (fold_ids[:, None, :] != np.arange(n_splits)[None, :, None]).reshape(-1, m)
    subset_index = np.repeat(np.arange(n_subsets), n_splits)
    X = np.asarray(features, dtype=float)[subsets]
    out, n_unconverged = [], 0
    for c_value in (C, C * factor):
        decision, unconverged = fit_decision_values(X, y[subsets], train_mask, subset_index, engine=engine,
                                                    C=c_value, tol=tol, device=device)
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


def _validate(X, y, subsets, strategy, config, rng, metrics=None):
    """``run_validation`` with the config's learner and engine; ``metrics`` defaults to the config's metric."""
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
                    n_splits: int, seed: int, part: int = 0) -> pd.DataFrame:
    """Sec. 3.1: for ``n_parents`` parents of ``parent_size`` per class, EVE and NEVE of ``n_splits``-fold CV on
    subsets of ``subset_size`` per class, for every metric of :data:`METRICS` at once (the
    same fits).

    Where two disjoint subsets fit in the parent (P ≥ 2n), EVE comes from ``n_pairs`` disjoint pairs and NEVE is
    the sample variance of the same 2R subsets, which overlap across pairs: the paper produced all its estimators
    "from a number of disjoint pairs of validation experiments" (Sec. 3). Where no pair fits (P < 2n), EVE is NaN
    with ``eve_note`` (omitted, as in the paper) and NEVE comes from 2R independently drawn, overlapping subsets.
    One row per parent; the columns ``eve``, ``neve``, ``mean_score`` hold the config's metric, ``eve_<metric>``,
    ``neve_<metric>``, ``mean_<metric>`` every metric. ``part`` numbers independent batches of parents.
    """
    X, y, _ = _pool_from_config(config)
    rng = _rng(seed, 31, parent_size, part)
    metric = config["metric"]
    rows, all_subsets, fits = [], [], []
    for _ in range(n_parents):
        parent = draw_parent(y, parent_size, rng)
        fits_pairs = max_disjoint_subset_size(y, parent) >= subset_size
        if fits_pairs:
            subsets = draw_disjoint_subset_pairs(y, subset_size, n_pairs, rng, pool=parent).reshape(2 * n_pairs, -1)
        else:
            subsets = draw_balanced_subsets(y, subset_size, 2 * n_pairs, rng, pool=parent)
        all_subsets.append(subsets)
        fits.append(fits_pairs)
    # every parent's subsets in one batched validation
    scores_all = _validate(X, y, np.concatenate(all_subsets), f"{n_splits}x1", config, rng, metrics=METRICS).scores
    for parent_id, fits_pairs in enumerate(fits):
        row = {"parent_size": parent_size, "parent": part * n_parents + parent_id}
        scores = {k: v[parent_id * 2 * n_pairs : (parent_id + 1) * 2 * n_pairs] for k, v in scores_all.items()}
        for name in METRICS:
            s = scores[name]
            row[f"neve_{name}"] = naive_empirical_variance_estimate(s)
            row[f"mean_{name}"] = float(s.mean())
            pair = s.reshape(n_pairs, 2)
            row[f"eve_{name}"] = empirical_variance_estimate(pair[:, 0], pair[:, 1]) if fits_pairs else np.nan
        row["eve"], row["neve"], row["mean_score"] = row[f"eve_{metric}"], row[f"neve_{metric}"], row[f"mean_{metric}"]
        row["eve_note"] = "" if fits_pairs else f"P={parent_size} < 2n={2 * subset_size}: no disjoint pair fits"
        rows.append(row)
    return pd.DataFrame(rows)


def summarise_drawstring(frame: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """Mean and Monte Carlo SE of EVE and NEVE across parents, per P (``metric`` None: the main columns)."""
    def se(x):
        x = x.dropna()
        return x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan

    e, n, m = ("eve", "neve", "mean_score") if metric is None else (f"eve_{metric}", f"neve_{metric}", f"mean_{metric}")
    out = frame.groupby("parent_size").agg(
        eve=(e, "mean"), eve_se=(e, se), neve=(n, "mean"), neve_se=(n, se),
        mean_score=(m, "mean"), n_parents=("parent", "count"),
    )
    return out.reset_index()


def drawstring_slope(frame: pd.DataFrame, metric: str | None = None) -> dict:
    """Least-squares line of the parents' EVE against P (over the P where EVE exists), with the SE of its slope.

    One point per parent (unweighted: under the claim every parent has the same expected EVE, and weights taken
    from the skewed per-P spreads would bias the line); the slope's SE is the heteroscedasticity-consistent
    (HC1) one from the residuals. Flatness
    (Sec. 4.1, "the proposed estimator stays constant") is an equivalence claim, decided in
    :func:`medeval.experiments.eve_claims.decide_eve_flat`: the line's change over the P range relative to the
    mean EVE (``relative_change`` ± ``relative_change_se``) must lie within a stated margin by two one-sided
    tests. A slope that is merely "not significant" supports nothing.
    """
    col = "eve" if metric is None else f"eve_{metric}"
    s = frame.dropna(subset=[col])
    x, yv = s["parent_size"].to_numpy(float), s[col].to_numpy(float)
    n_p = int(np.unique(x).size)
    nan = {"slope": np.nan, "slope_se": np.nan, "z": np.nan, "relative_change": np.nan, "relative_change_se": np.nan,
           "p_range": np.nan, "mean_eve": float(yv.mean()) if len(yv) else np.nan, "n_p": n_p, "n_parents": len(x)}
    if n_p < 2 or len(x) < 3:
        return nan
    xm, ym = x.mean(), yv.mean()
    sxx = np.sum((x - xm) ** 2)
    slope = np.sum((x - xm) * (yv - ym)) / sxx
    resid = yv - ym - slope * (x - xm)
    # heteroscedasticity-consistent (HC1) SE: the parents' spread differs between parent sizes
    slope_se = float(np.sqrt(np.sum((x - xm) ** 2 * resid**2) / sxx**2 * len(x) / (len(x) - 2)))
    p_range = float(x.max() - x.min())
    return {"slope": float(slope), "slope_se": slope_se, "z": float(slope / slope_se) if slope_se > 0 else np.nan,
            "relative_change": float(slope * p_range / ym), "relative_change_se": float(slope_se * p_range / ym),
            "p_range": p_range, "mean_eve": float(ym), "n_p": n_p, "n_parents": len(x)}


# ----------------------------------------------------------------------------------------------
# 3.2 characterization
# ----------------------------------------------------------------------------------------------
#: columns of the unit frames that hold raw per-pair arrays (dropped from recorded tables)
RAW_COLUMNS = ("pair_scores", "nfw_subset")


def characterization_unit(config: dict, subset_size: int, n_pairs: int, n_splits: int, seed: int) -> pd.DataFrame:
    """Sec. 3.2 at one size: EVE, NEVE, NFW and binomial variances of ``n_splits``-fold CV.

    NEVE here is the sample variance of the 2R subsets of the pairs (disjoint within a pair,
    overlapping across pairs: "randomly selected from all available data, and allowed to overlap").
    A size too large for disjoint pairs in the pool gives one row of NaNs with the reason. The row also
    carries the raw per-pair scores (``pair_scores``, (R, 2)) and each subset's fold-wise variance
    s²(fold scores)/K (``nfw_subset``, (2R,)), from which the claims bootstrap their intervals.
    """
    X, y, _ = _pool_from_config(config)
    metric = config["metric"]
    base = {"subset_size": subset_size, "n_items": 2 * subset_size, "classifier": config["classifier"],
            "dataset": config["dataset"], "n_pairs": n_pairs}
    largest = max_disjoint_subset_size(y)
    if subset_size > largest:
        return pd.DataFrame([{**base, "mean_score": np.nan, "eve": np.nan, "eve_se": np.nan, "neve": np.nan,
                              "nfw": np.nan, "binomial": np.nan, "n_unconverged": 0,
                              "note": f"n={subset_size} > {largest}: two disjoint subsets do not fit in the pool",
                              "pair_scores": None, "nfw_subset": None}])
    rng = _rng(seed, 32, subset_size)
    pairs = draw_disjoint_subset_pairs(y, subset_size, n_pairs, rng)
    result = _validate(X, y, pairs.reshape(2 * n_pairs, -1), f"{n_splits}x1", config, rng)
    scores = result.scores[metric].reshape(n_pairs, 2)
    fold_scores = result.fold_scores[metric]
    finite_folds = bool(np.all(np.isfinite(fold_scores)))
    p = float(scores.mean())
    row = {
        **base,
        "mean_score": p,
        "eve": empirical_variance_estimate(scores[:, 0], scores[:, 1]),
        "eve_se": empirical_variance_estimate_standard_error(scores[:, 0], scores[:, 1]),
        "neve": naive_empirical_variance_estimate(scores.ravel()),
        "nfw": naive_foldwise_variance(fold_scores) if finite_folds else np.nan,
        "binomial": naive_binomial_variance(p, 2 * subset_size) if metric != "auc" else np.nan,
        "n_unconverged": result.n_unconverged,
        "note": "",
        "pair_scores": scores,
        "nfw_subset": np.var(fold_scores, axis=1, ddof=1) / fold_scores.shape[1] if finite_folds else None,
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


def without_raw(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without the raw per-pair array columns (:data:`RAW_COLUMNS`), for display and recording."""
    return frame.drop(columns=[c for c in RAW_COLUMNS if c in frame.columns])


# ----------------------------------------------------------------------------------------------
# 3.3 validation strategies
# ----------------------------------------------------------------------------------------------
def strategy_unit(config: dict, subset_size: int, n_pairs: int, strategies: list[str], seed: int,
                  part: int = 0) -> pd.DataFrame:
    """Sec. 3.3 at one size: every strategy on the same ``n_pairs`` disjoint pairs; bias, variance (EVE)
    and MSE as estimators of the expected LOO performance, plus the ratios to LOO (Fig. 3).

    An unrepeated K-fold strategy whose repeated version is also listed (10x1 next to 10x10) is read off the
    first repeat of the repeated run: the same fits, a 10x1 on the same subsets with the same partition, which
    also makes the comparison of the two paired. One row per strategy; ``pair_scores`` holds its (R, 2) scores.
    """
    X, y, _ = _pool_from_config(config)
    metric = config["metric"]
    rng = _rng(seed, 33, subset_size, part)
    pairs = draw_disjoint_subset_pairs(y, subset_size, n_pairs, rng)
    subsets = pairs.reshape(2 * n_pairs, -1)
    parsed = [parse_strategy(name) for name in strategies]
    repeated = {s.n_splits: s for s in parsed if s.kind == "kfold" and s.n_repeats > 1}
    runs = {}
    for strategy in parsed:
        if strategy.kind == "kfold" and strategy.n_repeats == 1 and strategy.n_splits in repeated:
            continue
        runs[strategy.name] = _validate(X, y, subsets, strategy, config, rng)
    scores = {}
    for strategy in parsed:
        if strategy.name in runs:
            scores[strategy.name] = runs[strategy.name].scores[metric].reshape(n_pairs, 2)
        else:
            source = runs[repeated[strategy.n_splits].name]
            scores[strategy.name] = source.repeat_scores[metric][:, 0].reshape(n_pairs, 2)
    return strategy_frame(scores, subset_size)


def strategy_frame(scores: dict[str, np.ndarray], subset_size: int) -> pd.DataFrame:
    """Fig. 3's rows from each strategy's (R, 2) scores on shared pairs (``scores`` must hold "LOO")."""
    reference = scores["LOO"]
    rows = []
    for name, s in scores.items():
        errors = strategy_bias_variance_mse(s[:, 0], s[:, 1], reference[:, 0], reference[:, 1])
        rows.append({"subset_size": subset_size, "strategy": name, "n_pairs": len(s), **errors.to_dict(),
                     "pair_scores": s})
    return pd.DataFrame(rows)


def merge_strategy_parts(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """One Fig. 3 frame per size from the parts of :func:`strategy_unit` (their pairs concatenated)."""
    out = []
    for size, group in pd.concat(frames, ignore_index=True).groupby("subset_size", sort=True):
        names = list(dict.fromkeys(group["strategy"]))
        scores = {n: np.concatenate(group.loc[group["strategy"] == n, "pair_scores"].tolist()) for n in names}
        out.append(strategy_frame(scores, int(size)))
    return pd.concat(out, ignore_index=True)


# ----------------------------------------------------------------------------------------------
# known truth (phantom)
# ----------------------------------------------------------------------------------------------
def _phantom_model(config: dict):
    if config["dataset"] != "adni_phantom":
        raise ValueError("the known-truth units need config['dataset'] == 'adni_phantom' (the truth must be computable)")
    from medeval.data.phantoms.adni import adni_phantom_model

    return adni_phantom_model(n_features=config.get("n_features", 80), effect_size=config.get("effect_size", 1.5),
                              seed=config.get("data_seed", 0))


def truth_draws_unit(config: dict, subset_size: int, n_draws: int, n_splits: int, seed: int, part: int = 0) -> dict:
    """The Monte Carlo truth: ``n_draws`` independent fresh balanced samples of ``subset_size`` per class from the
    phantom's generating model, each validated with ``n_splits``-fold CV. Returns ``{metric: (n_draws,) scores}``
    for every metric (their sample variance is the true variance σ²(n), their mean the expected performance)."""
    model = _phantom_model(config)
    rng = _rng(seed, 34, subset_size, part)
    X, y = model.sample(n_draws * subset_size, n_draws * subset_size, rng)  # HC first, then AD
    X = model.standardize(X)
    hc = np.arange(n_draws * subset_size).reshape(n_draws, subset_size)
    subsets = np.concatenate([hc, hc + n_draws * subset_size], axis=1)
    scores = _validate(X, y, subsets, f"{n_splits}x1", config, rng, metrics=METRICS).scores
    return {name: np.asarray(v) for name, v in scores.items()}


def truth_pools_unit(config: dict, subset_size: int, n_pools: int, pairs_per_pool: int, null_pairs: int,
                     n_splits: int, seed: int, part: int = 0) -> dict:
    """EVE as the paper computes it, on ``n_pools`` independent finite ADNI-like pools (370 HC / 252 AD) from the
    phantom: ``pairs_per_pool`` disjoint pairs per pool, ``n_splits``-fold CV on each subset.

    The first ``null_pairs`` pairs of each pool are validated a second time with an independent fold partition:
    "algorithm A" and "algorithm B" are then the same SVM, so a paired comparison of the two runs has a true null
    (equal expected performance) and its rejection rate is its type-I error.

    Returns ``{"scores": {metric: (n_pools, R, 2)}, "null_scores": {metric: (n_pools, null_pairs, 2)}}``.
    All pools are stacked into one array so that one batched validation fits them together.
    """
    model = _phantom_model(config)
    rng = _rng(seed, 35, subset_size, part)
    feats, subsets = [], []
    for k in range(n_pools):
        Xp, yp = model.sample(370, 252, rng)
        feats.append(model.standardize(Xp))
        pairs = draw_disjoint_subset_pairs(yp, subset_size, pairs_per_pool, rng)
        subsets.append(pairs + k * len(yp))
        labels = yp
    X = np.concatenate(feats)
    y = np.tile(labels, n_pools)
    idx = np.stack(subsets)  # (n_pools, R, 2, m)
    m = idx.shape[-1]
    strategy = f"{n_splits}x1"
    scores = _validate(X, y, idx.reshape(-1, m), strategy, config, rng, metrics=METRICS).scores
    out = {"scores": {k: v.reshape(n_pools, pairs_per_pool, 2) for k, v in scores.items()}, "null_scores": {}}
    if null_pairs > 0:
        again = _validate(X, y, idx[:, :null_pairs].reshape(-1, m), strategy, config, rng, metrics=METRICS).scores
        out["null_scores"] = {k: v.reshape(n_pools, null_pairs, 2) for k, v in again.items()}
    return out


def truth_summary(draws: np.ndarray, pool_scores: np.ndarray, subset_size: int) -> dict:
    r"""EVE on finite pools against the truth at one size, for one metric.

    .. math::

       \hat\sigma^2(n_c) = \frac{1}{D-1}\sum_{d=1}^{D}\bigl(x_d-\bar{x}\bigr)^2,\qquad
       \text{relative bias} = \frac{\overline{\mathcal{V}}}{\hat\sigma^2(n_c)} - 1 .

    ``draws``: (D,) fresh-draw scores; ``pool_scores``: (n_pools, R, 2). :math:`\hat\sigma^2` = var(draws) with its SE
    (:func:`sample_variance_standard_error`); the true variance of the mean of two half-size estimates comes
    from pairing consecutive draws. EVE is the mean of the per-pool EVEs and its SE their spread / :math:`\sqrt{n_{pools}}`
    (it includes the pool-to-pool variation). ``relative_bias`` as above with a delta-method SE;
    ``z`` :math:`= (\overline{\mathcal{V}} - \hat\sigma^2)/\sqrt{SE_{EVE}^2 + SE_{\sigma^2}^2}` (a ``|z|`` below 3 reads as no bias detectable at this precision).
    """
    draws = np.asarray(draws, dtype=float)
    pool_scores = np.asarray(pool_scores, dtype=float)
    n_pools = pool_scores.shape[0]
    true_var = float(np.var(draws, ddof=1))
    true_se = sample_variance_standard_error(draws)
    halves = draws[: 2 * (len(draws) // 2)].reshape(-1, 2).mean(axis=1)
    half_var = float(np.var(halves, ddof=1))
    half_se = sample_variance_standard_error(halves) if halves.size >= 4 else np.nan
    per_pool = np.array([empirical_variance_estimate(p[:, 0], p[:, 1]) for p in pool_scores])
    eve = float(per_pool.mean())
    eve_se = float(per_pool.std(ddof=1) / np.sqrt(n_pools)) if n_pools > 1 else np.nan
    rel = eve / true_var - 1 if true_var > 0 else np.nan
    rel_se = float(np.sqrt(eve_se**2 + (eve / true_var) ** 2 * true_se**2) / true_var) if true_var > 0 else np.nan
    half_rel = (eve / 2) / half_var - 1 if half_var > 0 else np.nan
    half_rel_se = (float(np.sqrt((eve_se / 2) ** 2 + ((eve / 2) / half_var) ** 2 * half_se**2) / half_var)
                   if half_var > 0 else np.nan)
    return {
        "subset_size": subset_size, "true_variance": true_var, "true_variance_se": true_se, "eve": eve, "eve_se": eve_se,
        "z": float((eve - true_var) / np.sqrt(eve_se**2 + true_se**2)),
        "relative_bias": float(rel), "relative_bias_se": rel_se,
        "true_variance_mean_of_halves": half_var, "true_variance_mean_of_halves_se": half_se, "half_eve": eve / 2,
        "half_relative_bias": float(half_rel), "half_relative_bias_se": half_rel_se,
        "z_half": float((eve / 2 - half_var) / np.sqrt((eve_se / 2) ** 2 + half_se**2)),
        "true_mean_score": float(draws.mean()), "n_draws": len(draws), "n_pools": n_pools,
        "pairs_per_pool": pool_scores.shape[1],
    }


def known_truth_unit(config: dict, subset_size: int, n_pools: int, pairs_per_pool: int, n_draws: int,
                     n_splits: int, seed: int) -> pd.DataFrame:
    """EVE on finite ADNI-like pools against the true variance from fresh draws, for the config's metric
    (:func:`truth_draws_unit` + :func:`truth_pools_unit` + :func:`truth_summary` in one call)."""
    draws = truth_draws_unit(config, subset_size, n_draws, n_splits, seed)
    pools = truth_pools_unit(config, subset_size, n_pools, pairs_per_pool, 0, n_splits, seed)
    metric = config["metric"]
    return pd.DataFrame([truth_summary(draws[metric], pools["scores"][metric], subset_size)])


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
    return {**out, **comparison_statistics(scores, subset_size, level)}


def comparison_statistics(scores: dict, subset_size: int, level: float = 0.95) -> dict:
    """The intervals and the paired test of the worked example, from each learner's (R, 2) scores on the
    same disjoint pairs and folds (``scores["svm"]``, ``scores["nearest_centroid"]``: arrays or nested lists).

    ``ci_<learner>``: the EVE interval of the learner's expected score (scheme 2, ½V,
    :func:`medeval.metrics.variance.eve_confidence_interval`); ``binomial_ci_svm``: the naive binomial
    interval of the SVM's mean score over the 4 ``subset_size`` test items of a pair; ``paired``: SVM −
    nearest centroid by the EVE of the paired differences (:func:`medeval.metrics.variance.paired_comparison`,
    as a dict).
    """
    from scipy import stats

    scores = {clf: np.asarray(s, dtype=float) for clf, s in scores.items()}
    out = {}
    for clf, s in scores.items():
        centre, low, high = eve_confidence_interval(s[:, 0], s[:, 1], level=level)
        out[f"ci_{clf}"] = {"centre": centre, "low": low, "high": high}
    p = float(scores["svm"].mean())
    half_width = stats.norm.ppf(0.5 + level / 2) * np.sqrt(naive_binomial_variance(p, 4 * subset_size))
    out["binomial_ci_svm"] = {"centre": p, "low": p - half_width, "high": p + half_width}
    out["paired"] = paired_comparison(scores["svm"][:, 0], scores["svm"][:, 1], scores["nearest_centroid"][:, 0],
                                      scores["nearest_centroid"][:, 1], level=level).to_dict()
    return out


def hard_margin_unit(config: dict, subset_sizes: list[int], factor: float, seed: int, n_subsets: int = 10,
                     n_splits: int = HARD_MARGIN_SPLITS) -> pd.DataFrame:
    """The paper's hard-margin check at each size: does C x ``factor`` change any held-out prediction of
    ``n_splits``-fold CV (the chapter's K)?"""
    X, y, _ = _pool_from_config(config)
    rows = []
    for n in subset_sizes:
        if n > int(min(np.sum(y == 0), np.sum(y == 1))):
            continue
        res = verify_hard_margin_limit(X, y, n, config["C"], factor=factor, n_subsets=n_subsets, n_splits=n_splits,
                                       rng=_rng(seed, 37, n), engine=config["engine"], tol=config["tol"],
                                       device=config["device"])
        rows.append({"subset_size": n, **res})
    return pd.DataFrame(rows)


def engine_check_unit(config: dict, subset_size: int, n_subsets: int, n_splits: int, seed: int) -> dict:
    """The config's SVM engine against LIBSVM (scikit-learn's ``SVC``) run to a tight tolerance (1e-7) on the same
    10-fold problems: the share of held-out predictions that agree and the largest relative change of a held-out
    decision value. The active-set engine solves the C-SVC exactly, so it should agree with a converged LIBSVM."""
    X, y, _ = _pool_from_config(config)
    rng = _rng(seed, 39, subset_size)
    subsets = draw_balanced_subsets(y, subset_size, n_subsets, rng)
    folds = libsvm_fold_ids(y[subsets], n_splits, rng)
    m = subsets.shape[1]
    train = (folds[:, None, :] != np.arange(n_splits)[None, :, None]).reshape(-1, m)
    sidx = np.repeat(np.arange(n_subsets), n_splits)
    kw = {"C": config["C"], "device": config["device"]}
    ours, unconverged = fit_decision_values(X[subsets], y[subsets], train, sidx, engine=config["engine"], tol=config["tol"], **kw)
    ref, ref_unconverged = fit_decision_values(X[subsets], y[subsets], train, sidx, engine="sklearn", tol=1e-7, **kw)
    held = ~train
    rel = np.abs(ours - ref)[held] / np.maximum(np.abs(ref[held]), 1e-12)
    return {"engine": config["engine"], "subset_size": subset_size, "n_problems": int(train.shape[0]),
            "agreement": float(((ours > 0) == (ref > 0))[held].mean()), "max_relative_difference": float(rel.max()),
            "median_relative_difference": float(np.median(rel)), "n_unconverged": int(unconverged + ref_unconverged)}


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


# ----------------------------------------------------------------------------------------------
# the whole chapter as one grid
# ----------------------------------------------------------------------------------------------
UNITS = {
    "hard_margin": hard_margin_unit, "engine_check": engine_check_unit, "drawstring": drawstring_unit,
    "characterization": characterization_unit, "strategies": strategy_unit, "truth_draws": truth_draws_unit,
    "truth_pools": truth_pools_unit, "settings": characterization_unit, "comparison": comparison_unit,
    "bridge": bridge_unit,
}


def chapter_unit(kind: str, args: dict):
    """One run of the chapter's grid: ``UNITS[kind](**args)`` (module level, JSON arguments, so it runs in a
    worker process or on Dask)."""
    return UNITS[kind](**args)


def _split(total: int, size: int) -> list[int]:
    """``total`` in parts of at most ``size`` (the last one smaller)."""
    parts = [size] * (total // size)
    if total % size:
        parts.append(total % size)
    return parts


def characterization_pairs(P: Params, size: int) -> int:
    """Pairs at one characterization size: ``characterization_n_pairs_small`` up to 25 per class, else
    ``characterization_n_pairs``."""
    small = P.characterization_n_pairs_small
    return small if small is not None and size <= 25 else P.characterization_n_pairs


def setting_list(P: Params) -> list[tuple[str, str]]:
    """(dataset, classifier) of the learner x data comparison (section 5 of the page)."""
    return [(d, c) for d in dict.fromkeys(["adni_phantom", "wdbc", P.dataset]) for c in ("svm", "nearest_centroid")]


def chapter_grid(P: Params) -> list[dict]:
    """Every run of the chapter as ``{"kind", "args"}`` (largest first, so that the pool's tail is short).

    Large counts are split into parts (parents of the drawstring, pairs of the strategies, draws and pools of
    the known truth) so that two or more workers share them; each part has its own random stream.
    """
    config = make_config(P)
    phantom = make_config(P, dataset="adni_phantom")
    runs: list[tuple[float, dict]] = []

    def add(kind, cost, **args):
        runs.append((cost, {"kind": kind, "args": args}))

    n, k = P.drawstring_subset_size, P.n_splits
    for p in P.drawstring_parent_sizes:
        per_part = max(1, 400 // P.drawstring_n_pairs)
        for part, count in enumerate(_split(P.drawstring_n_parents, per_part)):
            add("drawstring", count * P.drawstring_n_pairs * 2 * k * n**2, config=config, parent_size=p,
                subset_size=n, n_parents=count, n_pairs=P.drawstring_n_pairs, n_splits=k, seed=P.seed, part=part)
    for size in P.characterization_sizes:
        pairs = characterization_pairs(P, size)
        add("characterization", pairs * 2 * k * size**2 * (4 if size > 40 else 1), config=config,
            subset_size=size, n_pairs=pairs, n_splits=k, seed=P.seed)
    fits_per_subset = sum(parse_strategy(s).n_repeats * (parse_strategy(s).n_splits or 2) for s in P.strategies)
    for size in P.strategy_sizes:
        for part, count in enumerate(_split(P.strategy_n_pairs, 50)):
            add("strategies", count * 2 * fits_per_subset * size**2, config=config, subset_size=size, n_pairs=count,
                strategies=list(P.strategies), seed=P.seed, part=part)
    for size in P.truth_sizes:
        for part, count in enumerate(_split(P.truth_n_draws, 1000)):
            add("truth_draws", count * k * size**2, config=phantom, subset_size=size, n_draws=count, n_splits=k,
                seed=P.seed, part=part)
        per_part = max(1, 1000 // P.truth_pairs_per_pool)
        for part, count in enumerate(_split(P.truth_n_pools, per_part)):
            add("truth_pools", count * (2 * P.truth_pairs_per_pool + 2 * P.truth_null_pairs) * k * size**2,
                config=phantom, subset_size=size, n_pools=count, pairs_per_pool=P.truth_pairs_per_pool,
                null_pairs=P.truth_null_pairs, n_splits=k, seed=P.seed, part=part)
    for d, c in setting_list(P):
        for size in P.setting_sizes:
            add("settings", P.setting_n_pairs * 2 * k * size**2 * (4 if c == "svm" and size > 20 else 1),
                config=make_config(P, dataset=d, classifier=c), subset_size=size, n_pairs=P.setting_n_pairs,
                n_splits=k, seed=P.seed)
    hm_sizes = sorted(set(P.characterization_sizes) | {P.drawstring_subset_size})
    add("hard_margin", 10 * k * sum(s**2 for s in hm_sizes), config=config, subset_sizes=hm_sizes,
        factor=P.hard_margin_factor, seed=P.seed, n_subsets=5, n_splits=k)
    add("engine_check", 5 * k * P.comparison_size**2 * 20, config=config, subset_size=P.comparison_size,
        n_subsets=5, n_splits=k, seed=P.seed)
    add("comparison", P.comparison_n_pairs * 4 * k * P.comparison_size**2, config=config,
        subset_size=P.comparison_size, n_pairs=P.comparison_n_pairs, n_splits=k, seed=P.seed)
    add("bridge", P.bridge_n_pairs * 100, n_pairs=P.bridge_n_pairs, subset_size=P.bridge_size, seed=P.seed)
    runs.sort(key=lambda r: -r[0])
    return [r[1] for r in runs]


def run_chapter_grid(P: Params, cache_dir=None) -> dict[str, list[tuple[dict, object]]]:
    """Run the chapter's grid (:func:`chapter_grid`) as one grid through :func:`medeval.runtime.grid.run_grid`
    (cached under ``cache_dir``; None: no cache) and group the results by kind: ``{kind: [(args, value), ...]}``,
    each kind's runs in grid order."""
    from medeval.runtime.grid import run_grid

    grid = chapter_grid(P)
    values = run_grid(chapter_unit, grid, cache_dir=cache_dir, scheduler=P.scheduler, max_workers=P.max_workers,
                      desc="chapter 3 grid")
    by: dict[str, list[tuple[dict, object]]] = {}
    for run, value in zip(grid, values, strict=True):
        by.setdefault(run["kind"], []).append((run["args"], value))
    return by


def merge_drawstring_parts(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """One drawstring frame from the parts of :func:`drawstring_unit`, one row per parent, by parent size."""
    ds = pd.concat(frames, ignore_index=True)
    return ds.sort_values(["parent_size", "parent"], kind="stable").reset_index(drop=True)


def merge_characterization_parts(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """One characterization frame (one row per size, with :func:`characterization_ratios`) from the units' rows."""
    char = pd.concat(frames, ignore_index=True)
    return characterization_ratios(char.sort_values("subset_size").reset_index(drop=True))


def merge_setting_parts(frames: list[pd.DataFrame], P: Params) -> pd.DataFrame:
    """The learner x data comparison: one row per setting and size, the settings in the order of
    :func:`setting_list`, with :func:`characterization_ratios`."""
    settings = pd.concat(frames, ignore_index=True)
    order = {s: i for i, s in enumerate(setting_list(P))}
    settings["_o"] = [order[(d, c)] for d, c in zip(settings["dataset"], settings["classifier"], strict=True)]
    return characterization_ratios(settings.sort_values(["_o", "subset_size"]).drop(columns="_o")
                                   .reset_index(drop=True))


def merge_truth_parts(draws: list[tuple[dict, dict]], pools: list[tuple[dict, dict]]) -> dict:
    """The known truth per size from the parts of :func:`truth_draws_unit` and :func:`truth_pools_unit` (each a list
    of ``(args, value)``): ``{size: {"draws": {metric: (D,)}, "pools": {metric: (n_pools, R, 2)},
    "null": {metric: (n_pools, R_null, 2)}}}``, the parts concatenated in order, sizes ascending."""
    truth: dict = {}
    for kind, parts in (("truth_draws", draws), ("truth_pools", pools)):
        for args, value in sorted(parts, key=lambda av: (av[0]["subset_size"], av[0]["part"])):
            t = truth.setdefault(args["subset_size"], {"draws": {}, "pools": {}, "null": {}})
            if kind == "truth_draws":
                for metric, v in value.items():
                    t["draws"][metric] = np.concatenate([t["draws"].get(metric, np.empty(0)), v])
            else:
                for key, field in (("scores", "pools"), ("null_scores", "null")):
                    for metric, v in value[key].items():
                        prev = t[field].get(metric)
                        t[field][metric] = v if prev is None else np.concatenate([prev, v])
    return dict(sorted(truth.items()))


#: the SVM's mean 10-fold CV accuracy must exceed this wherever a claim uses it (our choice; the claims of
#: :mod:`medeval.experiments.eve_claims` are [n/a] "did not train" below it)
QUALITY_FLOOR = 0.7


def quality_figures(drawstring: pd.DataFrame | None, truth: dict | None) -> dict[str, float]:
    """The SVM's mean 10-fold CV accuracy wherever the claims use it: the main pool (the drawstring's subsets) and
    the phantom's fresh draws at each known-truth size."""
    q: dict[str, float] = {}
    if drawstring is not None and len(drawstring) and "mean_accuracy" in drawstring:
        q["pool, drawstring subsets"] = float(drawstring["mean_accuracy"].mean())
    for n, t in (truth or {}).items():
        if "accuracy" in t["draws"]:
            q[f"phantom, fresh draws n={n}"] = float(np.mean(t["draws"]["accuracy"]))
    return q


def quality_band(quality: dict[str, float]) -> dict:
    """The band of :func:`quality_figures` (``min``, ``max``, ``per_model``) with the chapter's ``floor``."""
    vals = list(quality.values())
    return {"min": min(vals) if vals else float("nan"), "max": max(vals) if vals else float("nan"),
            "floor": QUALITY_FLOOR, "per_model": quality}


def mse_identity_error(strategies: pd.DataFrame) -> pd.Series:
    """The absolute error ``|MSE − (variance + bias²)|`` of every strategy row (Sec. 3.3, :eq:`eq-eve-mse`): zero to rounding."""
    return (strategies["mse"] - (strategies["variance"] + strategies["bias"] ** 2)).abs()


def lowest_mse(strategies: pd.DataFrame) -> pd.DataFrame:
    """Per size, the strategy row with the lowest MSE relative to LOO (``mse_ratio``)."""
    return strategies.loc[strategies.groupby("subset_size")["mse_ratio"].idxmin()]


def known_truth_table(truth: dict) -> pd.DataFrame:
    """:func:`truth_frame` for every metric of :data:`METRICS`, stacked with a ``metric`` column."""
    return pd.concat([truth_frame(truth, m).assign(metric=m) for m in METRICS], ignore_index=True)


def settings_summary(settings: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, classifier), in the settings' order: the mean over the setting sizes of the mean score,
    EVE/binomial and NFW/EVE."""
    columns = ["mean_score", "eve_to_binomial", "nfw_to_eve"]
    return settings.groupby(["dataset", "classifier"], sort=False)[columns].mean()


def interval_width_ratio(comparison: dict) -> float:
    """How many times as wide the SVM's EVE interval (½V) is as its naive binomial interval."""
    ci, binomial = comparison["ci_svm"], comparison["binomial_ci_svm"]
    return (ci["high"] - ci["low"]) / (binomial["high"] - binomial["low"])


@dataclass
class Results:
    """Everything chapter 3 computes for one parameter set (:func:`run`); the notebook shows and records it, and
    :func:`medeval.experiments.eve_claims.claim_inputs` reads it.

    Main pool and SVM: ``pool`` (``dataset``, ``n_negative``, ``n_positive``, ``n_features`` of the main pool);
    ``hard_margin`` (one row per subset size, :func:`hard_margin_unit`) and ``hard_margin_in_limit`` (every size in
    the limit); ``engine_check`` (the engine against LIBSVM, :func:`engine_check_unit`); ``quality_band`` (the
    SVM's accuracy where the claims use it, :func:`quality_band`).

    Drawstring (Sec. 3.1): ``drawstring`` (one row per parent, :func:`drawstring_unit`); ``drawstring_summary``
    (:func:`summarise_drawstring` of the chapter's metric, one row per P) and ``drawstring_summary_by_metric`` (the
    same for every metric of :data:`METRICS`); ``drawstring_slope`` (:func:`drawstring_slope`);
    ``drawstring_omitted_parent_sizes`` (P without EVE: no disjoint pair fits); ``drawstring_neve_to_eve_largest_p``
    (E[NEVE]/E[EVE] at the largest P with EVE).

    Characterization (Sec. 3.2): ``characterization`` (one row per size with its ratios and raw per-pair arrays,
    :func:`characterization_unit`) and ``characterization_omitted_sizes`` (sizes too large for disjoint pairs).

    Strategies (Sec. 3.3): ``strategies`` (one row per size and strategy with raw per-pair arrays and
    ``mse_identity_error``, :func:`strategy_unit`) and ``lowest_mse`` (per size, the row of the lowest MSE).

    Known truth (ours): ``truth`` (per size: ``draws`` {metric: (D,)}, ``pools`` {metric: (n_pools, R, 2)}, ``null``
    {metric: (n_pools, R_null, 2)}); ``known_truth`` (:func:`truth_summary` per metric and size) and
    ``truth_n_draws`` (the fewest fresh draws of a size, for the chapter's metric).

    Learner x data (section 5 of the page): ``settings`` (one row per setting and size), ``settings_summary`` (mean
    per setting) and ``setting_eve_to_binomial`` (``"dataset/classifier"`` → mean EVE/binomial).

    Worked example and bridge: ``comparison`` (:func:`comparison_unit` without its scores), ``comparison_scores``
    ({learner: (R, 2) scores as lists}), ``interval_width_ratio`` (:func:`interval_width_ratio`); ``bridge``
    (:func:`bridge_unit`); ``pair_check`` (:func:`pair_check`).
    """

    pool: dict
    hard_margin: pd.DataFrame
    hard_margin_in_limit: bool
    engine_check: dict
    quality_band: dict
    drawstring: pd.DataFrame
    drawstring_summary: pd.DataFrame
    drawstring_summary_by_metric: dict[str, pd.DataFrame]
    drawstring_slope: dict
    drawstring_omitted_parent_sizes: list[int]
    drawstring_neve_to_eve_largest_p: float
    characterization: pd.DataFrame
    characterization_omitted_sizes: list[int]
    strategies: pd.DataFrame
    lowest_mse: pd.DataFrame
    truth: dict
    known_truth: pd.DataFrame
    truth_n_draws: int
    settings: pd.DataFrame
    settings_summary: pd.DataFrame
    setting_eve_to_binomial: dict[str, float]
    comparison: dict
    comparison_scores: dict[str, list]
    interval_width_ratio: float
    bridge: dict
    pair_check: dict


def pool_summary(P: Params, features, labels) -> dict:
    """The main pool in numbers: its dataset, negatives (HC / benign), positives (AD / malignant) and features."""
    y = np.asarray(labels)
    return {"dataset": P.dataset, "n_negative": int((y == 0).sum()), "n_positive": int((y == 1).sum()),
            "n_features": int(np.shape(features)[1])}


def run(P: Params, cache_dir=None) -> Results:
    """Every computation of chapter 3 for the parameters ``P``: the grid of runs (:func:`run_chapter_grid`, cached
    under ``cache_dir``; None: no cache), assembled, and what the page shows and records from it (:class:`Results`).

    Sizes that the main pool cannot hold are refused before any compute (:func:`check_pool_fits`: the schema
    refuses them for the pools of known size, the pre-flight for an ADNI CSV; kept for direct callers).
    """
    X, y, _ = load_pool(P.dataset, seed=P.seed, effect_size=P.effect_size, n_features=P.n_features,
                        adni_csv=P.adni_csv)
    check_pool_fits(P, y)
    by = run_chapter_grid(P, cache_dir)
    drawstring = merge_drawstring_parts([v for _, v in by["drawstring"]])
    summary = summarise_drawstring(drawstring)
    with_eve = summary.dropna(subset=["eve"])
    characterization = merge_characterization_parts([v for _, v in by["characterization"]])
    strategies = merge_strategy_parts([v for _, v in by["strategies"]])
    strategies = strategies.assign(mse_identity_error=mse_identity_error(strategies))
    truth = merge_truth_parts(by.get("truth_draws", []), by.get("truth_pools", []))
    known_truth = known_truth_table(truth)
    settings = merge_setting_parts([v for _, v in by["settings"]], P)
    settings_means = settings_summary(settings)
    hard_margin, comparison = by["hard_margin"][0][1], dict(by["comparison"][0][1])
    comparison_scores = comparison.pop("scores")
    return Results(
        pool=pool_summary(P, X, y), hard_margin=hard_margin, hard_margin_in_limit=bool(hard_margin["in_limit"].all()),
        engine_check=by["engine_check"][0][1], quality_band=quality_band(quality_figures(drawstring, truth)),
        drawstring=drawstring, drawstring_summary=summary,
        drawstring_summary_by_metric={m: summarise_drawstring(drawstring, m) for m in METRICS},
        drawstring_slope=drawstring_slope(drawstring),
        drawstring_omitted_parent_sizes=sorted(
            drawstring.loc[drawstring["eve"].isna(), "parent_size"].unique().tolist()),
        drawstring_neve_to_eve_largest_p=float(with_eve["neve"].iloc[-1] / with_eve["eve"].iloc[-1]),
        characterization=characterization,
        characterization_omitted_sizes=characterization.loc[characterization["eve"].isna(), "subset_size"].tolist(),
        strategies=strategies, lowest_mse=lowest_mse(strategies), truth=truth, known_truth=known_truth,
        truth_n_draws=int(known_truth.loc[known_truth["metric"] == P.metric, "n_draws"].min()),
        settings=settings, settings_summary=settings_means,
        setting_eve_to_binomial={f"{d}/{c}": float(v) for (d, c), v in settings_means["eve_to_binomial"].items()},
        comparison=comparison, comparison_scores=comparison_scores,
        interval_width_ratio=interval_width_ratio(comparison),
        bridge=by["bridge"][0][1], pair_check=pair_check(P),
    )


def pair_check(P: Params) -> dict:
    """Subset validity (no fits): draw ``strategy_n_pairs`` pairs of the largest strategy size from the main pool and
    count those that are disjoint with exactly n of each class in both subsets."""
    _, y, _ = load_pool(P.dataset, seed=P.seed, effect_size=P.effect_size, n_features=P.n_features, adni_csv=P.adni_csv)
    n = max(P.strategy_sizes)
    pairs = draw_disjoint_subset_pairs(y, n, P.strategy_n_pairs, _rng(P.seed, 40))
    valid = sum(int(not set(a) & set(b) and len(set(a)) == len(set(b)) == 2 * n and y[a].sum() == y[b].sum() == n)
                for a, b in pairs)
    return {"subset_size": n, "n_pairs": len(pairs), "valid": valid}


def truth_frame(truth: dict, metric: str) -> pd.DataFrame:
    """One :func:`truth_summary` row per size for ``metric``."""
    return pd.DataFrame([truth_summary(t["draws"][metric], t["pools"][metric], size) for size, t in truth.items()])
