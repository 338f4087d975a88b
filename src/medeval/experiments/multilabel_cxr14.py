"""Chapter 5: multi-label data analysis and evaluation on ChestX-ray14.

Reproduces the thesis chapter "Data and Evaluation" (``papers/05-multilabel-chestxray14-evaluation.txt``):
the label distribution of the real label table (112,120 images), the multi-label indicators, label
dependence, the toy evaluation example, the 10 x 5-fold split-quality experiment, and, beyond the
chapter (which trains no model), a multi-label CNN evaluated with the metrics the chapter chooses
(per-label AUC, F1 micro/macro, mAP) with patient-clustered bootstrap intervals, the empirical variance
estimator of chapter 3, and fixed versus tuned thresholds.

Every function is a pure function of its arguments (data, parameters, seed) and returns a tidy
DataFrame, a dict or a small dataclass. :func:`run` does every computation of the chapter for one parameter
set and returns them as one :class:`Results`; the notebook ``notebooks/05-multilabel.py`` calls it once and
then only displays, records, plots and explains.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from torch.utils.data import Dataset

from medeval.experiments.multilabel_cxr14_params import Params
from medeval.metrics import multilabel as ml
from medeval.metrics import split_quality as sq
from medeval.metrics.multilabel import UndefinedMetricWarning  # re-exported for the notebook

__all__ = [
    "Params",
    "PUBLISHED_AUC",
    "TOY_LABELS",
    "TOY_SCORES",
    "TOY_F2_PRINTED",
    "TOY_METRICS",
    "Results",
    "run",
    "load_label_matrix",
    "label_frequency_table",
    "label_count_table",
    "indicator_row",
    "most_frequent_labelset",
    "no_finding_hamming_loss",
    "UndefinedMetricWarning",
    "dependence_matrices",
    "dependence_summary",
    "toy_example",
    "toy_best_sets",
    "label_proportions",
    "labels_per_image_percent",
    "split_statistics",
    "split_experiment",
    "run_split_experiment",
    "summarise_split_experiment",
    "split_headline_figures",
    "mean_label_odds",
    "expected_fold_label_zeros",
    "three_way_split",
    "patient_overlap",
    "overlap_headline_figures",
    "patient_bootstrap",
    "evaluate_scores",
    "eve_test_set_variance",
    "threshold_comparison",
    "CnnRun",
    "run_phantom_cnn",
    "require_real_images",
    "run_real_cnn",
    "run_cnn",
    "cnn_quality",
    "real_auc_by_protocol",
    "published_auc_comparison",
    "real_run_table",
    "per_label_auc_rows",
    "published_auc_tables",
]


# ------------------------------------------------------------------------------------------------
# published reference values (literature, for comparison only)
# ------------------------------------------------------------------------------------------------
#: Per-label test AUC published for ChestX-ray14: Wang et al. 2017 (arXiv:1705.02315), Yao et al. 2017
#: (arXiv:1710.10501), Rajpurkar et al. 2017 "CheXNet" (arXiv:1711.05225); as tabulated in the
#: arnoweng/CheXNet README (https://github.com/arnoweng/CheXNet). The three used different random splits.
PUBLISHED_AUC = pd.DataFrame(
    {
        "Wang 2017": [0.716, 0.807, 0.708, 0.835, 0.784, 0.815, 0.769, 0.767, 0.609, 0.706, 0.671, 0.708, 0.633, 0.806],
        "Yao 2017": [0.772, 0.904, 0.788, 0.882, 0.859, 0.829, 0.767, 0.914, 0.695, 0.792, 0.717, 0.765, 0.713, 0.841],
        "CheXNet": [0.8094, 0.9248, 0.7901, 0.8878, 0.8638, 0.9371, 0.8047, 0.9164, 0.7345, 0.8676, 0.7802, 0.8062, 0.7680, 0.8887],
    },
    index=pd.Index(
        ["Atelectasis", "Cardiomegaly", "Consolidation", "Edema", "Effusion", "Emphysema", "Fibrosis", "Hernia",
         "Infiltration", "Mass", "Nodule", "Pleural_Thickening", "Pneumonia", "Pneumothorax"],
        name="label",
    ),
)

# ------------------------------------------------------------------------------------------------
# the real label table
# ------------------------------------------------------------------------------------------------
def load_label_matrix():
    """The shipped ChestX-ray14 label table: ``(table, Y, labels)`` with Y the (112120, 14) uint8 matrix."""
    from medeval.data.chestxray14 import LABELS, load_labels

    table = load_labels()
    return table, table[list(LABELS)].to_numpy(), LABELS


def label_frequency_table(Y, labels) -> pd.DataFrame:
    """Per-label count and proportion of observations, most frequent first (Fig. labelcount (a))."""
    counts = ml.label_counts(Y)
    frame = pd.DataFrame({"label": list(labels), "count": counts, "proportion": counts / np.asarray(Y).shape[0]})
    return frame.sort_values("count", ascending=False, kind="stable").reset_index(drop=True)


def label_count_table(Y) -> pd.DataFrame:
    """Number of observations with 0, 1, ..., max labels (Fig. labelcount (b))."""
    hist = ml.labels_per_example_histogram(Y)
    top = int(np.flatnonzero(hist)[-1])
    hist = hist[: top + 1]
    return pd.DataFrame({"n_labels": np.arange(top + 1), "count": hist, "proportion": hist / hist.sum()})


def label_proportions(frequency: pd.DataFrame) -> dict[str, float]:
    """Label → share of X-rays carrying it, from :func:`label_frequency_table` (most frequent first)."""
    return dict(zip(frequency["label"], frequency["proportion"], strict=True))


def labels_per_image_percent(counts: pd.DataFrame) -> dict[str, float]:
    r"""Percentage of X-rays with no label, exactly one and several (the text's 54 %, 27 % and 19 %), from
    :func:`label_count_table`: :math:`100\,\#\{i : |Y_i| = c\}/N` for ``"0"`` and ``"1"``, and the rest summed for
    ``"2+"`` (Sec. Label Distribution, Fig. labelcount (b))."""
    share = counts["proportion"]
    return {"0": 100 * share.iloc[0], "1": 100 * share.iloc[1], "2+": 100 * share.iloc[2:].sum()}


def indicator_row(Y, name: str = "ChestX-ray14") -> pd.DataFrame:
    """The data set's row of Tab. mlprop: N, K, LCard, LDens, LDiv, PLDiv, PMax."""
    row = ml.multilabel_indicators(Y)
    return pd.DataFrame([{"dataset": name, **row}])


def most_frequent_labelset(Y) -> tuple[np.ndarray, int]:
    """The most frequent label set of ``Y`` (a bool row over the labels; all False = no finding) and the
    number of observations that carry it (the numerator of PMax)."""
    sets, counts = ml.labelset_counts(Y)
    return sets[0], int(counts[0])


def no_finding_hamming_loss(Y) -> float:
    """Hamming loss of the prediction "no label for any observation": the share of ones in ``Y``, i.e.
    LDens."""
    return ml.hamming_loss(Y, np.zeros_like(Y))


def dependence_matrices(Y, labels) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pearson (phi) correlation and conditional co-occurrence P(column | row) (Fig. corrs)."""
    idx = pd.Index(list(labels))
    return (
        pd.DataFrame(ml.label_correlation(Y), index=idx, columns=idx),
        pd.DataFrame(ml.conditional_cooccurrence(Y), index=idx, columns=idx),
    )


def dependence_summary(Y, labels) -> dict:
    """Most / least correlated pair, phi^2 = chi^2/N check, the Cardiomegaly/Effusion asymmetry, rare pairs."""
    labels = list(labels)
    phi = ml.label_correlation(Y)
    chi2 = ml.pairwise_chi2(Y)
    iu = np.triu_indices(len(labels), k=1)
    upper = phi[iu]
    hi, lo = int(np.nanargmax(upper)), int(np.nanargmin(upper))
    m = ml.conditional_cooccurrence(Y)
    c, e = labels.index("Cardiomegaly"), labels.index("Effusion")
    pair_counts = ml.label_pair_counts(Y)[iu]
    n = np.asarray(Y).shape[0]
    counts = ml.label_counts(Y).astype(np.float64)
    joint = m * counts[:, None]  # M[u, v] count_u = joint count of (u, v), which must be symmetric
    return {
        "max_corr_pair": [labels[iu[0][hi]], labels[iu[1][hi]]],
        "max_corr": float(upper[hi]),
        "min_corr_pair": [labels[iu[0][lo]], labels[iu[1][lo]]],
        "min_corr": float(upper[lo]),
        "max_abs_phi2_minus_chi2_over_n": float(np.nanmax(np.abs(phi**2 - chi2 / n))),
        "mean_pairwise_chi2": ml.mean_pairwise_chi2(Y),
        "p_effusion_given_cardiomegaly": float(m[c, e]),
        "p_cardiomegaly_given_effusion": float(m[e, c]),
        "max_joint_count_asymmetry": float(np.nanmax(np.abs(joint - joint.T))),
        "n_pairs_never_cooccurring": int(np.sum(pair_counts == 0)),
        "pairs_below_5": [
            f"{labels[iu[0][j]]}-{labels[iu[1][j]]} ({int(pair_counts[j])})" for j in np.flatnonzero(pair_counts < 5)
        ],
    }


# ------------------------------------------------------------------------------------------------
# toy example (Tab. toymlpred / toymlmet)
# ------------------------------------------------------------------------------------------------
TOY_LABELS = np.array([[0, 1, 0, 0, 0], [1, 0, 1, 1, 1], [0, 1, 0, 0, 1]])
#: The scores of the three classifiers as in the chapter's R code (matrices f1, f2, f3).
TOY_SCORES = (
    np.array([[0.1, 0.9, 0.4, 0.3, 0.2], [0.6, 0.7, 0.8, 0.9, 0.6], [0.1, 0.4, 0.2, 0.1, 0.3]]),
    np.array([[0.2, 0.4, 0.1, 0.4, 0.3], [0.3, 0.2, 0.7, 0.9, 0.8], [0.1, 0.2, 0.2, 0.3, 0.8]]),
    np.array([[0.1, 0.4, 0.1, 0.7, 0.2], [0.7, 0.1, 0.9, 0.8, 0.7], [0.9, 0.8, 0.1, 0.2, 0.6]]),
)
#: f2 as the rendered Table tab:toymlpred prints it: 0.9 instead of the code's 0.2 for label 2 of x_3.
TOY_F2_PRINTED = np.array([[0.2, 0.4, 0.1, 0.4, 0.3], [0.3, 0.2, 0.7, 0.9, 0.8], [0.1, 0.9, 0.2, 0.3, 0.8]])


def _toy_metrics(scores) -> dict[str, float]:
    h = ml.binarize(scores)  # t(a) = 1 if a > 0.5; no toy score equals 0.5, so mldr's >= agrees
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        return {
            "hloss": ml.hamming_loss(TOY_LABELS, h),
            "subsetacc": ml.subset_accuracy(TOY_LABELS, h),
            "AP example (mldr ties 'last')": ml.example_average_precision(TOY_LABELS, scores, ties="last", undefined=1.0),
            "AP example (max-rank ties, sklearn LRAP)": ml.example_average_precision(TOY_LABELS, scores, ties="max"),
            "AP example (min-rank ties)": ml.example_average_precision(TOY_LABELS, scores, ties="min"),
            "F1 micro": ml.f1_micro(TOY_LABELS, h),
            "F1 macro (text: mean of per-label F1)": ml.f1_macro(TOY_LABELS, h),
            "F1 macro (mldr 0.4.0: F of macro P, R)": ml.f1_macro(
                TOY_LABELS, h, convention="f_of_macro_pr", zero_division="diagnose"
            ),
            "mAP": ml.mean_average_precision(TOY_LABELS, scores),
            "AUC macro (ties correct)": ml.macro_auc(TOY_LABELS, scores),
            "coverage": ml.coverage_error(TOY_LABELS, scores),
            "ranking loss": ml.ranking_loss(TOY_LABELS, scores),
            # the text: "the hamming loss is equivalent to the err^macro and err^micro" (a check, not a claim)
            "err micro": ml.micro_average(ml.binary_error_rate, TOY_LABELS, h),
            "err macro": ml.macro_average(ml.binary_error_rate, TOY_LABELS, h),
        }


#: The five rows of Tab. toymlmet: (row in the toy metrics table, label, better direction).
TOY_METRICS = (
    ("hloss", "Hamming loss", "min"),
    ("subsetacc", "subset accuracy", "max"),
    ("AP example (mldr ties 'last')", "AP example", "max"),
    ("F1 micro", "F1 micro", "max"),
    ("F1 macro (text: mean of per-label F1)", "F1 macro", "max"),
)
#: The toy example's three classifiers (columns of the toy metrics table).
TOY_CLASSIFIERS = ("h1", "h2", "h3")


def _toy_frame(toy) -> pd.DataFrame:
    """The toy metrics as a metric x classifier DataFrame, from a DataFrame or from recorded row records."""
    if isinstance(toy, pd.DataFrame):
        return toy if toy.index.name == "metric" or "metric" not in toy.columns else toy.set_index("metric")
    return pd.DataFrame(list(toy)).set_index("metric")


def toy_best_sets(toy) -> dict[str, list[str]]:
    """For each metric of Tab. toymlmet, the classifiers with the best value (ties included, to 1e-12).

    ``toy`` is the metric x classifier table of :func:`toy_example` (or its recorded row records)."""
    m = _toy_frame(toy)
    out = {}
    for row, label, better in TOY_METRICS:
        v = m.loc[row, list(TOY_CLASSIFIERS)].astype(float)
        best = v.min() if better == "min" else v.max()
        out[label] = [h for h in TOY_CLASSIFIERS if abs(v[h] - best) <= 1e-12]
    return out


def toy_example() -> dict[str, pd.DataFrame]:
    """The toy table (Tab. toymlmet) with the code's f2 (h1, h2, h3) and with the printed f2 ("h2 (printed f2)").

    Returns ``{"metrics": metric x classifier}``; the chapter's four statements about it are decided in
    :mod:`medeval.experiments.multilabel_cxr14_claims`.
    """
    cols = {f"h{j + 1}": _toy_metrics(s) for j, s in enumerate(TOY_SCORES)}
    cols["h2 (printed f2)"] = _toy_metrics(TOY_F2_PRINTED)
    metrics = pd.DataFrame(cols)
    metrics.index.name = "metric"
    return {"metrics": metrics}


# ------------------------------------------------------------------------------------------------
# split experiment (Tab. LDprop)
# ------------------------------------------------------------------------------------------------
def split_statistics(Y, folds) -> dict[str, float]:
    """LD, LPD (text and thesis-code normalisation), ED, FZ, FLZ, FLPZ (text and code) of one split."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        text = sq.split_quality_measures(Y, folds)
        code_lpd = sq.label_pair_distribution(Y, folds, normalisation="labels")
    return {
        "LD": text["LD"],
        "LPD": text["LPD"],
        "LPD (code, 1/K)": code_lpd,
        "ED": text["ED"],
        "FZ": text["FZ"],
        "FLZ": text["FLZ"],
        "FLPZ": text["FLPZ"],
        "FLPZ (code, proportion)": sq.fold_label_pair_zeros(Y, folds, variant="code"),
    }


def split_experiment(
    Y,
    *,
    n_repetitions: int,
    n_folds: int,
    seed: int,
    method: Literal["random", "iterative"] = "random",
    progress: bool = False,
) -> pd.DataFrame:
    """Repeated K-fold splits of Y and their quality statistics, one row per repetition.

    ``method="random"``: plain random folds at image level (the thesis: caret ``createFolds(1:N)``,
    effectively random equal-size folds ignoring patients). ``"iterative"``: iterative stratification
    (Sechidis et al. 2011, via ``iterstrat``), the extension the chapter discusses but does not run.
    Repetition r uses the seed sequence (seed, r).
    """
    from medeval.data.splits import iterative_stratified_kfold, random_kfold

    if method not in ("random", "iterative"):
        raise ValueError(f"method must be 'random' or 'iterative', got {method!r}")
    y = np.asarray(Y)
    rows = []
    reps = range(n_repetitions)
    if progress:
        from tqdm.std import tqdm

        reps = tqdm(reps, desc=f"{method} {n_folds}-fold", leave=False)
    for r in reps:
        rng = np.random.default_rng([seed, r])
        t0 = time.perf_counter()
        if method == "random":
            folds = random_kfold(y.shape[0], n_folds, rng)
        else:
            folds = iterative_stratified_kfold(y, n_folds, rng)
        seconds = time.perf_counter() - t0
        rows.append({"method": method, "repetition": r, **split_statistics(y, folds), "split_seconds": seconds})
    return pd.DataFrame(rows)


def run_split_experiment(Y, params: Params) -> tuple[pd.DataFrame, np.ndarray]:
    """The split experiment of the chapter's parameters: random folds, and iterative stratification when
    ``iterative_repetitions > 0``, on all images or on a random ``split_subsample`` of them.

    Returns ``(runs, Y_split)``: one row per (method, repetition) as :func:`split_experiment` gives, and the
    label matrix the folds were drawn from.
    """
    y = np.asarray(Y)
    if params.split_subsample is not None:
        sub = np.sort(np.random.default_rng([params.split_seed, 1]).choice(len(y), params.split_subsample, replace=False))
        y = y[sub]
    frames = [split_experiment(y, n_repetitions=params.split_repetitions, n_folds=params.split_folds,
                               seed=params.split_seed, method="random")]
    if params.iterative_repetitions:
        frames.append(split_experiment(y, n_repetitions=params.iterative_repetitions, n_folds=params.split_folds,
                                       seed=params.split_seed, method="iterative"))
    return pd.concat(frames, ignore_index=True), y


def mean_label_odds(Y) -> float:
    """(1/K) sum_k D_k / (N - D_k): the mean positive/negative ratio of the labels, the scale of LD's terms.

    LD averages ``|fold odds - data-set odds|`` over the labels, so LD / mean_label_odds is LD as a fraction of
    the typical odds it measures. Labels that are all positive have infinite odds and are left out.
    """
    y = np.asarray(Y)
    d = y.sum(0).astype(np.float64)
    neg = y.shape[0] - d
    odds = np.divide(d, neg, out=np.full_like(d, np.nan), where=neg > 0)
    return float(np.nanmean(odds))


def expected_fold_label_zeros(Y, n_folds: int) -> float:
    """Expected FLZ of one random ``n_folds``-fold split of Y, in closed form.

    A fold of n_j images drawn at random without replacement has no positive of label k with the
    hypergeometric probability C(N - D_k, n_j) / C(N, n_j); FLZ's expectation is the sum over folds and
    labels. Fold sizes are those of :func:`medeval.data.splits.random_kfold` (the first N mod J folds one larger).
    """
    from scipy.special import gammaln

    y = np.asarray(Y)
    n = y.shape[0]
    d = y.sum(0).astype(np.float64)
    sizes = np.full(n_folds, n // n_folds, dtype=np.float64)
    sizes[: n % n_folds] += 1
    total = 0.0
    for nj in sizes:
        # log C(N - D, nj) - log C(N, nj) = lgamma(N-D+1) + lgamma(N-nj+1) - lgamma(N-D-nj+1) - lgamma(N+1)
        ok = n - d - nj >= 0
        logp = (gammaln(n - d[ok] + 1) + gammaln(n - nj + 1) - gammaln(n - d[ok] - nj + 1) - gammaln(n + 1))
        total += float(np.exp(logp).sum())
    return total


def summarise_split_experiment(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and SD over repetitions of every statistic, per method (the layout of Tab. LDprop)."""
    stats = [c for c in frame.columns if c not in ("method", "repetition", "split_seconds")]
    long = frame.melt(id_vars=["method"], value_vars=stats, var_name="statistic")
    out = long.groupby(["statistic", "method"], sort=False)["value"].agg(["mean", "std"]).unstack("method")
    methods = list(dict.fromkeys(frame["method"]))
    out = out[[(a, m) for m in methods for a in ("mean", "std")]]
    out.columns = [f"{m} {a}" for a, m in out.columns]
    return out.reindex(stats)


def split_headline_figures(runs: pd.DataFrame) -> dict:
    """The figures of the split experiment the chapter records and states (Tab. LDprop), from
    :func:`run_split_experiment`'s rows.

    Of the random folds: ``LD_random_runs`` (LD of every repetition), ``LD_mean`` and ``LD_sd`` (mean and SD over
    the repetitions), ``LPD_mean``, ``LPD_code_mean`` (the thesis code's 1/K normalisation), ``FZ_max``,
    ``FLZ_max``, ``FLPZ_mean``, ``ED_max`` and ``random_split_seconds`` (mean time of a split). Of iterative
    stratification: ``LD_iterative_runs`` (empty when it did not run) and, when it ran, ``LD_iterative_mean``,
    ``LPD_iterative_mean`` and ``iterative_split_seconds``.
    """
    rand = runs[runs["method"] == "random"]
    it = runs[runs["method"] == "iterative"]
    out = {
        "LD_random_runs": rand["LD"].tolist(), "LD_iterative_runs": it["LD"].tolist(),
        "LD_mean": rand["LD"].mean(), "LD_sd": rand["LD"].std(), "LPD_mean": rand["LPD"].mean(),
        "LPD_code_mean": rand["LPD (code, 1/K)"].mean(), "FZ_max": rand["FZ"].max(), "FLZ_max": rand["FLZ"].max(),
        "FLPZ_mean": rand["FLPZ"].mean(), "ED_max": rand["ED"].max(),
        "random_split_seconds": rand["split_seconds"].mean(),
    }
    if len(it):
        out.update(LD_iterative_mean=it["LD"].mean(), LPD_iterative_mean=it["LPD"].mean(),
                   iterative_split_seconds=it["split_seconds"].mean())
    return out


# ------------------------------------------------------------------------------------------------
# patient overlap
# ------------------------------------------------------------------------------------------------
def three_way_split(
    table: pd.DataFrame, strategy: Literal["random", "patient", "later_followup"], seed
) -> dict[str, np.ndarray]:
    """A 70/10/20 train/validation/test split of the label table (index arrays).

    ``"random"``: images at random, ignoring patients (Wang 2017, Yao 2017). ``"patient"``: no patient
    in two sets (Rajpurkar 2017). ``"later_followup"``: the thesis rule, random sampling where a patient's
    validation images come after its training images and its test images after both (``Follow-up #``
    is the proxy for the date): the test set is drawn first, then validation from the rest.
    """
    from medeval.data.splits import later_followup_split, patient_train_test_split

    rng = np.random.default_rng(seed)
    n = len(table)
    pid = table["patient_id"].to_numpy()
    if strategy == "random":
        perm = rng.permutation(n)
        n_test, n_val = int(round(0.2 * n)), int(round(0.1 * n))
        parts = {"test": perm[:n_test], "validation": perm[n_test:n_test + n_val], "train": perm[n_test + n_val:]}
        return {k: np.sort(v) for k, v in parts.items()}
    if strategy == "patient":
        rest, test = patient_train_test_split(pid, 0.2, rng)[0]
        tr, va = patient_train_test_split(pid[rest], 0.125, rng)[0]
    elif strategy == "later_followup":
        fu = table["follow_up"].to_numpy()
        rest, test = later_followup_split(pid, fu, 0.2, rng)[0]
        tr, va = later_followup_split(pid[rest], fu[rest], 0.125, rng)[0]
    else:
        raise ValueError(f"strategy must be 'random', 'patient' or 'later_followup', got {strategy!r}")
    return {"train": np.sort(rest[tr]), "validation": np.sort(rest[va]), "test": np.sort(test)}


def _overlap_stats(table, earlier_idx, later_idx) -> dict[str, float]:
    pid = table["patient_id"].to_numpy()
    fu = table["follow_up"].to_numpy()
    a = pd.DataFrame({"p": pid[earlier_idx], "f": fu[earlier_idx]}).groupby("p")["f"].max()
    b = pd.DataFrame({"p": pid[later_idx], "f": fu[later_idx]}).groupby("p")["f"].min()
    shared = a.index.intersection(b.index)
    violations = int(np.sum(a.loc[shared].to_numpy() >= b.loc[shared].to_numpy()))
    later_in_shared = np.isin(pid[later_idx], shared)
    return {
        "shared_patients": int(len(shared)),
        "images_of_shared_patients_pct": float(100 * later_in_shared.mean()),
        "rule_violations": violations,
    }


def patient_overlap(table: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Patient overlap of 70/10/20 splits under the three strategies of :func:`three_way_split`.

    One row per (strategy, pair of sets): patients present in both, the percentage of the later set's
    images that belong to them, and violations of the thesis rule (patients whose latest image in the
    earlier set is not before their earliest image in the later set). Also the realised proportions.
    """
    rows = []
    n = len(table)
    for strategy in ("random", "patient", "later_followup"):
        parts = three_way_split(table, strategy, seed)
        sizes = {k: 100 * len(v) / n for k, v in parts.items()}
        for earlier, later in (("train", "validation"), ("train", "test"), ("validation", "test")):
            rows.append({
                "strategy": strategy, "sets": f"{earlier} -> {later}",
                **_overlap_stats(table, parts[earlier], parts[later]),
                "train_pct": sizes["train"], "validation_pct": sizes["validation"], "test_pct": sizes["test"],
            })
    return pd.DataFrame(rows)


def overlap_headline_figures(overlap: pd.DataFrame) -> dict:
    """The patient-overlap figures the chapter records and states, from :func:`patient_overlap`'s rows.

    ``random_test_images_shared_pct`` and ``random_rule_violations`` (random image split, train -> test),
    ``later_followup_test_images_shared_pct`` (the thesis rule, train -> test), ``later_followup_rule_violations``
    (the thesis rule, summed over its three pairs of sets) and ``patient_level_shared`` (patients shared by the
    patient-level split, summed over its three pairs; 0 by construction).
    """
    row = overlap.set_index(["strategy", "sets"])
    return {
        "random_test_images_shared_pct": row.loc[("random", "train -> test"), "images_of_shared_patients_pct"],
        "random_rule_violations": int(row.loc[("random", "train -> test"), "rule_violations"]),
        "later_followup_test_images_shared_pct":
            row.loc[("later_followup", "train -> test"), "images_of_shared_patients_pct"],
        "later_followup_rule_violations": int(row.loc["later_followup", "rule_violations"].sum()),
        "patient_level_shared": int(row.loc["patient", "shared_patients"].sum()),
    }


# ------------------------------------------------------------------------------------------------
# evaluation with patient-clustered bootstrap intervals
# ------------------------------------------------------------------------------------------------
def patient_bootstrap(patient_id, statistic, *, n_bootstrap: int, seed) -> np.ndarray:
    """Patient-clustered bootstrap: resample patients with replacement, keep all their images.

    ``statistic(idx)`` gets the image indices of one replicate (with repeats) and returns a 1-D array.
    Returns the (n_bootstrap, n_statistics) replicate matrix (NaN where a statistic was undefined).
    """
    pid = np.asarray(patient_id)
    if pid.ndim != 1 or pid.size == 0:
        raise ValueError(f"patient_id must be a non-empty 1-D array, got shape {pid.shape}")
    if n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be >= 1, got {n_bootstrap}")
    _, code = np.unique(pid, return_inverse=True)
    n_pat = code.max() + 1
    order = np.argsort(code, kind="stable")
    starts = np.r_[0, np.cumsum(np.bincount(code, minlength=n_pat))]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_bootstrap):
        weights = np.bincount(rng.integers(0, n_pat, n_pat), minlength=n_pat)
        chosen = np.repeat(np.arange(n_pat), weights)
        idx = np.concatenate([order[starts[p]:starts[p + 1]] for p in chosen]) if chosen.size else order[:0]
        out.append(np.asarray(statistic(idx), dtype=np.float64))
    return np.vstack(out)


def _headline_statistics(y, p, thresholds, labels):
    """Per-label AUC, F1 micro, F1 macro, mAP (the metrics the chapter decides to report)."""
    yp = ml.binarize(p, thresholds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        auc = ml.per_label_auc(y, p)
        values = {f"AUC {lab}": a for lab, a in zip(labels, auc, strict=True)}
        values["AUC macro"] = float(np.nanmean(auc)) if np.any(np.isfinite(auc)) else np.nan
        values["F1 micro"] = ml.f1_micro(y, yp)
        values["F1 macro"] = ml.f1_macro(y, yp)
        values["F1 macro (F of macro P, R)"] = ml.f1_macro(y, yp, convention="f_of_macro_pr")
        values["mAP"] = ml.mean_average_precision(y, p)
    return values


def evaluate_scores(
    Y, P, patient_id, *, labels, thresholds=0.5, n_bootstrap: int, seed, level: float = 0.95
) -> pd.DataFrame:
    r"""Point estimates with patient-clustered percentile bootstrap CIs.

    .. math::

       \bigl[\hat\theta^{*}_{(\alpha/2)},\ \hat\theta^{*}_{(1-\alpha/2)}\bigr],\qquad \alpha=0.05,

    the percentiles of the replicates :math:`\hat\theta^{*}` of :func:`patient_bootstrap`.

    Rows: per-label AUC (the chapter's AUC, ties counted as correct), AUC macro, F1 micro, F1 macro
    (both conventions), mAP. Columns: value, ci_low, ci_high, n_positives (per-label rows), and
    ``n_undefined_replicates`` (replicates in which the statistic was undefined, e.g. a resample without
    a positive of a rare label; those replicates are excluded from the interval).
    """
    y = np.asarray(Y).astype(bool)
    p = np.asarray(P, dtype=np.float64)
    point = _headline_statistics(y, p, thresholds, labels)
    names = list(point)
    reps = patient_bootstrap(
        patient_id, lambda idx: list(_headline_statistics(y[idx], p[idx], thresholds, labels).values()),
        n_bootstrap=n_bootstrap, seed=seed,
    )
    alpha = (1 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanquantile(reps, alpha, axis=0)
        hi = np.nanquantile(reps, 1 - alpha, axis=0)
    n_pos = {f"AUC {lab}": int(c) for lab, c in zip(labels, y.sum(0), strict=True)}
    return pd.DataFrame({
        "metric": names,
        "value": [point[k] for k in names],
        "ci_low": lo,
        "ci_high": hi,
        "n_positives": [n_pos.get(k, np.nan) for k in names],
        "n_undefined_replicates": np.isnan(reps).sum(0),
    })


def eve_test_set_variance(Y, P, patient_id, *, n_pairs: int, n_bootstrap: int, seed, thresholds=0.5) -> pd.DataFrame:
    """Chapter 3's empirical variance estimator applied to the test-set evaluation of a trained model.

    EVE applies to the part of the variance that comes from the finite test set (the model is fixed):
    the test patients are split at random into two disjoint halves ``n_pairs`` times, each headline
    metric is computed on both halves, and Eq. (1) of Mendelson et al. gives V (the variance at half
    size); ``target="mean_of_halves"`` (V/2) estimates the variance of the full-test-set estimate. It is
    compared with the patient-clustered bootstrap variance of the full-test-set estimate. Training
    variability is not covered (it would need retraining on disjoint training sets).
    """
    from medeval.metrics.variance import empirical_variance_estimate

    y = np.asarray(Y).astype(bool)
    p = np.asarray(P, dtype=np.float64)
    pid = np.asarray(patient_id)
    patients = np.unique(pid)
    rng = np.random.default_rng(seed)
    keys = ["AUC macro", "F1 micro", "F1 macro", "mAP"]
    first, second = [], []
    for _ in range(n_pairs):
        half = rng.permutation(patients)[: len(patients) // 2]
        in_first = np.isin(pid, half)
        a = _headline_statistics(y[in_first], p[in_first], thresholds, [str(k) for k in range(y.shape[1])])
        b = _headline_statistics(y[~in_first], p[~in_first], thresholds, [str(k) for k in range(y.shape[1])])
        first.append([a[k] for k in keys])
        second.append([b[k] for k in keys])
    first, second = np.array(first), np.array(second)
    boot = patient_bootstrap(
        pid,
        lambda idx: [_headline_statistics(y[idx], p[idx], thresholds, [str(k) for k in range(y.shape[1])])[k] for k in keys],
        n_bootstrap=n_bootstrap, seed=rng,
    )
    rows = []
    for j, k in enumerate(keys):
        ok = np.isfinite(first[:, j]) & np.isfinite(second[:, j])
        half_var = empirical_variance_estimate(first[ok, j], second[ok, j]) if ok.sum() >= 1 else np.nan
        full_var = empirical_variance_estimate(first[ok, j], second[ok, j], target="mean_of_halves") if ok.sum() >= 1 else np.nan
        rows.append({
            "metric": k,
            "eve_sd_half_test_set": float(np.sqrt(half_var)),
            "eve_sd_full_test_set": float(np.sqrt(full_var)),
            "bootstrap_sd_full_test_set": float(np.nanstd(boot[:, j], ddof=1)),
            "n_pairs_used": int(ok.sum()),
        })
    return pd.DataFrame(rows)


def threshold_comparison(
    Y_val, P_val, Y_test, P_test, patient_id_test, *, labels, n_bootstrap: int, seed
) -> dict[str, pd.DataFrame]:
    """t(a) = I(a > 0.5) versus per-label thresholds maximising F1 on the validation set.

    Returns ``{"thresholds": label, threshold, tuned_on_validation, "metrics": metric, at_0.5, tuned,
    difference, diff_ci_low, diff_ci_high}``; differences (tuned - 0.5) get paired patient-clustered
    bootstrap CIs. Labels with no validation positive cannot be tuned: they keep 0.5 (reported).
    """
    tuned = ml.f1_optimal_thresholds(Y_val, P_val)
    not_tuned = np.isnan(tuned)
    tuned = np.where(not_tuned, 0.5, tuned)
    y = np.asarray(Y_test).astype(bool)
    p = np.asarray(P_test, dtype=np.float64)

    def stats(idx, t):
        yp = ml.binarize(p[idx], t)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
            return [
                ml.f1_micro(y[idx], yp), ml.f1_macro(y[idx], yp), ml.example_f1(y[idx], yp, zero_division=np.nan),
                ml.hamming_loss(y[idx], yp), ml.subset_accuracy(y[idx], yp),
                float(yp.sum(1).mean()),
            ]

    names = ["F1 micro", "F1 macro", "F1 example", "Hamming loss", "subset accuracy", "labels predicted per image"]
    all_idx = np.arange(len(y))
    at_half, at_tuned = np.array(stats(all_idx, 0.5)), np.array(stats(all_idx, tuned))
    diffs = patient_bootstrap(
        patient_id_test, lambda idx: np.array(stats(idx, tuned)) - np.array(stats(idx, 0.5)), n_bootstrap=n_bootstrap, seed=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(diffs, 0.025, axis=0), np.nanquantile(diffs, 0.975, axis=0)
    metrics = pd.DataFrame({
        "metric": names, "at_0.5": at_half, "tuned": at_tuned, "difference": at_tuned - at_half,
        "diff_ci_low": lo, "diff_ci_high": hi,
    })
    thresholds = pd.DataFrame({"label": list(labels), "threshold": tuned, "tuned_on_validation": ~not_tuned})
    return {"thresholds": thresholds, "metrics": metrics}


# ------------------------------------------------------------------------------------------------
# the CNN
# ------------------------------------------------------------------------------------------------
def _bce_loss(logits, target):
    import torch.nn.functional as F

    return F.binary_cross_entropy_with_logits(logits, target.float())


@dataclass
class CnnRun:
    """Scores of one trained multi-label CNN on its validation and test sets."""

    labels: tuple[str, ...]
    y_val: np.ndarray
    p_val: np.ndarray
    y_test: np.ndarray
    p_test: np.ndarray
    patient_test: np.ndarray
    loss_history: list[float]
    train_seconds: float
    n_train: int
    info: dict = field(default_factory=dict)


def _train_and_score(x_train, y_train, x_eval_list, params: Params, seed: int):
    import torch

    from medeval.models.multilabel_cnn import MultiLabelCNN
    from medeval.models.training import predict, train_model

    torch.manual_seed(seed)
    model = MultiLabelCNN(y_train.shape[1], backbone=params.backbone, in_channels=1, weights_path=params.weights_path)
    t0 = time.perf_counter()
    history = train_model(
        model, x_train if not isinstance(x_train, np.ndarray) else (x_train, y_train.astype(np.float32)), _bce_loss,
        epochs=params.epochs, batch_size=params.batch_size, lr=params.learning_rate, device=params.device, seed=seed,
    )
    seconds = time.perf_counter() - t0
    scores = []
    for x in x_eval_list:
        if callable(x):  # lazily loaded real images: x() yields arrays chunk by chunk
            parts = [predict(model, chunk, device=params.device) for chunk in x()]
            logits = np.concatenate(parts)
        else:
            logits = predict(model, x, device=params.device)
        scores.append(1.0 / (1.0 + np.exp(-logits.astype(np.float64))))
    return scores, history, seconds


def downsample_images(images: np.ndarray, size: int) -> np.ndarray:
    """Block-average (N, H, H) images to (N, size, size); ``size`` must divide H."""
    n, h, w = images.shape
    if h != w or h % size:
        raise ValueError(f"input_size {size} must divide the image side {h} (square images expected)")
    f = h // size
    if f == 1:
        return images
    return images.reshape(n, size, f, size, f).mean(axis=(2, 4), dtype=np.float32)


def run_phantom_cnn(params: Params, seed: int) -> CnnRun:
    """Train the multi-label CNN on chest phantoms whose label sets follow the real table.

    ``params.n_images`` phantoms (``generate_chest_phantoms``, label sets drawn from the real joint
    distribution, patient ids from the sampled rows) are split 70/10/20 at patient level; the model is
    trained on the 70%, thresholds are tuned on the 10%, everything is reported on the 20%.
    """
    from medeval.data.chestxray14 import LABELS
    from medeval.data.phantoms.chest import generate_chest_phantoms
    from medeval.data.splits import patient_train_test_split

    ph = generate_chest_phantoms(params.n_images, params.image_size, seed=seed, difficulty=params.difficulty)
    rng = np.random.default_rng([seed, 5])
    rest, test = patient_train_test_split(ph.patient_id, 0.2, rng)[0]
    tr, va = patient_train_test_split(ph.patient_id[rest], 0.125, rng)[0]
    train, val = rest[tr], rest[va]
    x = downsample_images(ph.images, params.input_size or params.image_size)[:, None]
    y = ph.labels
    (p_val, p_test), history, seconds = _train_and_score(x[train], y[train], [x[val], x[test]], params, seed)
    return CnnRun(
        labels=tuple(LABELS), y_val=y[val], p_val=p_val, y_test=y[test], p_test=p_test,
        patient_test=ph.patient_id[test], loss_history=history, train_seconds=seconds, n_train=len(train),
        info={"n_validation": len(val), "n_test": len(test), "data": "phantom",
              "train_label_counts": y[train].sum(0).tolist()},
    )


class _RealImages(Dataset):
    """Lazily loaded, resized real images as a torch Dataset (x: (1, s, s) float32, y: (14,) float32)."""

    def __init__(self, reader, indices, size):
        self.reader, self.indices, self.size = reader, np.asarray(indices), size
        self.y = reader.labels()[self.indices].astype(np.float32)

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, i):
        import torch

        img = self.reader.image(int(self.indices[i]), size=self.size)
        return torch.from_numpy(img[None]), torch.from_numpy(self.y[i])

    def chunks(self, chunk: int = 512):
        for start in range(0, len(self.indices), chunk):
            idx = self.indices[start:start + chunk]
            yield self.reader.images(idx, size=self.size)[:, None]


def require_real_images():
    """The local folder of dataset ``chestxray14-images``, or DatasetUnavailableError naming it and how to get it."""
    from medeval.data.manifest import require

    return require("chestxray14-images")


def run_real_cnn(params: Params, seed: int, protocol: Literal["holdout_70_10_20", "kfold_5"]) -> list[CnnRun]:
    """The CNN on the real ChestX-ray14 images (dataset ``chestxray14-images``), full profile.

    ``holdout_70_10_20``: the thesis's hold-out protocol (70/10/20 as in Wang, Yao and Rajpurkar) with its
    patient rule (a patient's validation/test images are later than its training images). ``kfold_5``:
    5-fold CV; with the thesis rule every image must be a test image once, so folds are patient-level
    (no patient in two folds), and 1/8 of each training part (later follow-ups) tunes thresholds.
    The images are those of the label table present in the folder (all 112,120 in the release; a warning
    gives the count when some are missing, and ``info["n_images"]`` records it).
    Raises :class:`medeval.data.manifest.DatasetUnavailableError` naming the dataset when the images are
    absent, and the ``device`` error (e.g. ``device='cuda'`` without CUDA) before any image is read;
    nothing is substituted.
    """
    from medeval.data.chestxray14 import LABELS, load_labels
    from medeval.data.readers import ChestXray14Images
    from medeval.data.splits import later_followup_split, patient_kfold
    from medeval.models.device import resolve_device

    resolve_device(params.device)
    root = require_real_images()
    image_dir = root / "images" if (root / "images").is_dir() else root
    labels = load_labels()
    reader = ChestXray14Images(image_dir, labels)  # the label table restricted to the images present
    table = reader.table
    n_listed = len(labels)
    if len(table) < n_listed:
        warnings.warn(
            f"{n_listed - len(table)} of the {n_listed} ChestX-ray14 images are missing from {image_dir}; "
            f"the CNN uses the {len(table)} present",
            stacklevel=2,
        )
    pid = table["patient_id"].to_numpy()
    fu = table["follow_up"].to_numpy()
    rng = np.random.default_rng([seed, 7])
    if protocol == "holdout_70_10_20":
        parts = three_way_split(table, "later_followup", rng)
        splits = [(parts["train"], parts["validation"], parts["test"])]
    elif protocol == "kfold_5":
        splits = []
        for rest, test in patient_kfold(pid, 5, rng):
            tr, va = later_followup_split(pid[rest], fu[rest], 0.125, rng)[0]
            splits.append((rest[tr], rest[va], test))
    else:
        raise ValueError(f"protocol must be 'holdout_70_10_20' or 'kfold_5', got {protocol!r}")
    runs = []
    size = params.input_size or params.image_size  # real images are resized straight to the CNN input
    for j, (train, val, test) in enumerate(splits):
        ds_train = _RealImages(reader, train, size)
        ds_val, ds_test = _RealImages(reader, val, size), _RealImages(reader, test, size)
        (p_val, p_test), history, seconds = _train_and_score(
            ds_train, ds_train.y, [ds_val.chunks, ds_test.chunks], params, seed + j
        )
        runs.append(CnnRun(
            labels=tuple(LABELS), y_val=ds_val.y.astype(np.uint8), p_val=p_val, y_test=ds_test.y.astype(np.uint8),
            p_test=p_test, patient_test=pid[test], loss_history=history, train_seconds=seconds, n_train=len(train),
            info={"protocol": protocol, "fold": j, "n_validation": len(val), "n_test": len(test), "data": "real",
                  "n_images": len(table), "n_patients": int(np.unique(pid).size)},
        ))
    return runs


def run_cnn(params: Params) -> dict[str, list[CnnRun]]:
    """The chapter's CNN runs: ``{"phantom": [one run]}`` on phantoms, or one entry per protocol of
    ``params.real_protocols`` (one run per hold-out split or fold) on the real images."""
    if params.data_source == "phantom":
        return {"phantom": [run_phantom_cnn(params, params.seed)]}
    return {protocol: run_real_cnn(params, params.seed, protocol) for protocol in params.real_protocols}


#: The chapter's quality floor: a CNN is compared with anything only when its test macro AUC exceeds it.
QUALITY_FLOOR = 0.7
#: Where a phantom task should put the default model (off the ceiling, where differences can show).
QUALITY_BAND = (0.75, 0.95)


def cnn_quality(evaluation: pd.DataFrame, labels) -> dict:
    """The trained CNN's quality figures: test macro AUC with its CI, the range of the defined per-label AUCs,
    how many per-label AUCs reach 0.95 or more (at the ceiling), the floor and the band, and whether the macro
    AUC clears the floor and lies in the band."""
    ev = evaluation.set_index("metric")
    per_label = ev.loc[[f"AUC {lab}" for lab in labels], "value"].to_numpy(dtype=np.float64)
    defined = per_label[np.isfinite(per_label)]
    auc = float(ev.loc["AUC macro", "value"])
    return {
        "macro_auc": auc,
        "macro_auc_ci": [float(ev.loc["AUC macro", "ci_low"]), float(ev.loc["AUC macro", "ci_high"])],
        "per_label_auc_min": float(defined.min()) if defined.size else float("nan"),
        "per_label_auc_max": float(defined.max()) if defined.size else float("nan"),
        "n_labels_defined": int(defined.size),
        "n_labels_at_ceiling": int(np.sum(defined >= 0.95)),
        "floor": QUALITY_FLOOR,
        "band": list(QUALITY_BAND),
        "above_floor": bool(np.isfinite(auc) and auc > QUALITY_FLOOR),
        "in_band": bool(QUALITY_BAND[0] <= auc <= QUALITY_BAND[1]),
    }


def real_auc_by_protocol(cnn_runs: dict[str, list[CnnRun]]) -> dict[str, pd.DataFrame]:
    """Per protocol: the mean over its runs of our per-label test AUC next to the published values."""
    out = {}
    for protocol, runs in cnn_runs.items():
        labels = list(runs[0].labels)
        aucs = pd.DataFrame({f"fold {r.info.get('fold', j)}": ml.per_label_auc(r.y_test, r.p_test)
                             for j, r in enumerate(runs)}, index=labels).mean(axis=1)
        out[protocol] = published_auc_comparison(aucs)
    return out


def published_auc_comparison(per_label_auc: pd.Series) -> pd.DataFrame:
    """Our per-label AUC next to Wang 2017, Yao 2017 and CheXNet (:data:`PUBLISHED_AUC`)."""
    out = PUBLISHED_AUC.copy()
    out.insert(0, "ours", per_label_auc.reindex(out.index).to_numpy())
    out.loc["mean"] = out.mean(numeric_only=True)
    return out


def per_label_auc_rows(evaluation: pd.DataFrame, labels) -> pd.DataFrame:
    """The per-label AUC rows of :func:`evaluate_scores` (index ``AUC <label>``, in the order of ``labels``)."""
    return evaluation.set_index("metric").loc[[f"AUC {lab}" for lab in labels]]


def real_run_table(cnn_runs: dict[str, list[CnnRun]]) -> pd.DataFrame:
    """One row per real-image CNN run (protocol and fold): the images found, their patients, and the size of the
    training, validation and test parts (images; test patients)."""
    return pd.DataFrame(
        [{"protocol": r.info["protocol"], "fold": r.info["fold"], "n_images": r.info["n_images"],
          "n_patients": r.info["n_patients"], "n_train": r.n_train, "n_validation": r.info["n_validation"],
          "n_test": r.info["n_test"], "n_test_patients": int(np.unique(r.patient_test).size)}
         for runs in cnn_runs.values() for r in runs])


def published_auc_tables(cnn_runs: dict[str, list[CnnRun]], evaluation: pd.DataFrame,
                         data_source: str) -> dict[str, pd.DataFrame]:
    """Our per-label test AUC next to the published values (:func:`published_auc_comparison`): on real images one
    table per protocol (:func:`real_auc_by_protocol`); on phantoms ``{"phantom": ...}`` with the evaluated run's
    per-label AUC (:func:`per_label_auc_rows`; not comparable, shown for reference)."""
    if data_source == "real":
        return real_auc_by_protocol(cnn_runs)
    labels = list(next(iter(cnn_runs.values()))[0].labels)
    return {"phantom": published_auc_comparison(per_label_auc_rows(evaluation, labels)["value"].set_axis(labels))}


# ------------------------------------------------------------------------------------------------
# the chapter: every computation for one parameter set
# ------------------------------------------------------------------------------------------------
@dataclass
class Results:
    """Everything chapter 5 computes for one parameter set (:func:`run`); the notebook shows and records it, and
    :func:`medeval.experiments.multilabel_cxr14_claims.claim_inputs` reads it.

    Label table (Sec. Label Distribution; the whole shipped table at every profile): ``labels`` (the 14 findings),
    ``n_images`` (N), ``n_labels`` (K), ``n_patients``; ``label_frequency`` (:func:`label_frequency_table`) and
    ``label_proportions`` (:func:`label_proportions`); ``label_count_histogram`` (:func:`label_count_table`),
    ``labels_per_image_pct`` (:func:`labels_per_image_percent`), ``max_labels`` (the most labels on one X-ray) and
    ``max_labels_count`` (X-rays carrying that many); ``indicators`` (Tab. mlprop's row, :func:`indicator_row`);
    ``most_frequent_labelset`` (a bool row over the labels) and ``most_frequent_labelset_count``
    (:func:`most_frequent_labelset`); ``no_finding_hamming_loss`` (:func:`no_finding_hamming_loss`).

    Label dependence (Fig. corrs): ``correlation`` and ``cooccurrence`` (label x label, :func:`dependence_matrices`)
    and ``dependence`` (:func:`dependence_summary`).

    Toy example (Tab. toymlmet): ``toy_metrics`` (metric x classifier, :func:`toy_example`) and ``toy_best``
    (metric -> the best classifiers, :func:`toy_best_sets`).

    Split experiment (Tab. LDprop): ``split_runs`` (one row per method and repetition, :func:`run_split_experiment`),
    ``split_summary`` (:func:`summarise_split_experiment`), ``split_n_images`` (images the folds were drawn from),
    ``split_figures`` (:func:`split_headline_figures`), ``mean_label_odds`` (:func:`mean_label_odds`) and
    ``expected_flz`` (:func:`expected_fold_label_zeros`) of those images.

    Patient overlap: ``patient_overlap`` (:func:`patient_overlap`) and ``overlap_figures``
    (:func:`overlap_headline_figures`).

    The CNN: ``cnn_runs`` (:func:`run_cnn`) and ``cnn_real_runs`` (:func:`real_run_table`; None on phantoms). Of the
    evaluated run (:attr:`evaluated_run`: the first run of the first protocol): ``evaluation``
    (:func:`evaluate_scores`), ``n_labels_undefined_auc`` (labels without a test AUC), ``cnn_quality``
    (:func:`cnn_quality`), ``eve`` (:func:`eve_test_set_variance`), ``threshold_comparison``
    (:func:`threshold_comparison`) and ``n_thresholds_not_tuned`` (labels that kept 0.5); ``published_auc``
    (:func:`published_auc_tables`).
    """

    labels: tuple[str, ...]
    n_images: int
    n_labels: int
    n_patients: int
    label_frequency: pd.DataFrame
    label_proportions: dict[str, float]
    label_count_histogram: pd.DataFrame
    labels_per_image_pct: dict[str, float]
    max_labels: int
    max_labels_count: int
    indicators: pd.DataFrame
    most_frequent_labelset: np.ndarray
    most_frequent_labelset_count: int
    no_finding_hamming_loss: float
    correlation: pd.DataFrame
    cooccurrence: pd.DataFrame
    dependence: dict
    toy_metrics: pd.DataFrame
    toy_best: dict[str, list[str]]
    split_runs: pd.DataFrame
    split_summary: pd.DataFrame
    split_n_images: int
    split_figures: dict
    mean_label_odds: float
    expected_flz: float
    patient_overlap: pd.DataFrame
    overlap_figures: dict
    cnn_runs: dict[str, list[CnnRun]]
    cnn_real_runs: pd.DataFrame | None
    evaluation: pd.DataFrame
    n_labels_undefined_auc: int
    cnn_quality: dict
    eve: pd.DataFrame
    threshold_comparison: dict[str, pd.DataFrame]
    n_thresholds_not_tuned: int
    published_auc: dict[str, pd.DataFrame]

    @property
    def evaluated_run(self) -> CnnRun:
        """The CNN run the chapter evaluates: the first run of the first protocol (the only one on phantoms)."""
        return next(iter(self.cnn_runs.values()))[0]


def _label_table_fields(table: pd.DataFrame, Y, labels) -> dict:
    """The :class:`Results` fields of the label table: counts, distribution, indicators, dependence."""
    frequency, counts = label_frequency_table(Y, labels), label_count_table(Y)
    top_set, top_set_count = most_frequent_labelset(Y)
    correlation, cooccurrence = dependence_matrices(Y, labels)
    return dict(
        labels=tuple(labels), n_images=Y.shape[0], n_labels=Y.shape[1], n_patients=int(table["patient_id"].nunique()),
        label_frequency=frequency, label_proportions=label_proportions(frequency), label_count_histogram=counts,
        labels_per_image_pct=labels_per_image_percent(counts), max_labels=int(counts["n_labels"].iloc[-1]),
        max_labels_count=int(counts["count"].iloc[-1]), indicators=indicator_row(Y),
        most_frequent_labelset=top_set, most_frequent_labelset_count=top_set_count,
        no_finding_hamming_loss=no_finding_hamming_loss(Y), correlation=correlation, cooccurrence=cooccurrence,
        dependence=dependence_summary(Y, labels),
    )


def _split_fields(Y, P: Params) -> dict:
    """The :class:`Results` fields of the split experiment (:func:`run_split_experiment` and its figures)."""
    runs, y_split = run_split_experiment(Y, P)
    return dict(split_runs=runs, split_summary=summarise_split_experiment(runs), split_n_images=int(y_split.shape[0]),
                split_figures=split_headline_figures(runs), mean_label_odds=mean_label_odds(y_split),
                expected_flz=expected_fold_label_zeros(y_split, P.split_folds))


def _cnn_fields(P: Params) -> dict:
    """The :class:`Results` fields of the CNN: its runs (:func:`run_cnn`), and the evaluation of the first run of
    the first protocol with bootstrap intervals, EVE and tuned thresholds (seeds ``P.seed``, ``+ 1``, ``+ 2``)."""
    cnn_runs = run_cnn(P)
    first = next(iter(cnn_runs.values()))[0]
    evaluation = evaluate_scores(first.y_test, first.p_test, first.patient_test, labels=first.labels,
                                 n_bootstrap=P.n_bootstrap, seed=P.seed)
    eve = eve_test_set_variance(first.y_test, first.p_test, first.patient_test, n_pairs=P.eve_pairs,
                                n_bootstrap=P.n_bootstrap, seed=P.seed + 1)
    thresholds = threshold_comparison(first.y_val, first.p_val, first.y_test, first.p_test, first.patient_test,
                                      labels=first.labels, n_bootstrap=P.n_bootstrap, seed=P.seed + 2)
    return dict(
        cnn_runs=cnn_runs, cnn_real_runs=real_run_table(cnn_runs) if P.data_source == "real" else None,
        evaluation=evaluation,
        n_labels_undefined_auc=int(per_label_auc_rows(evaluation, first.labels)["value"].isna().sum()),
        cnn_quality=cnn_quality(evaluation, first.labels), eve=eve, threshold_comparison=thresholds,
        n_thresholds_not_tuned=int((~thresholds["thresholds"]["tuned_on_validation"]).sum()),
        published_auc=published_auc_tables(cnn_runs, evaluation, P.data_source),
    )


def run(P: Params, cache_dir=None) -> Results:
    """Every computation of chapter 5 for the parameters ``P``, in the order the page shows them: the real label
    table's statistics and dependence, the toy example (Tab. toymlmet), the split experiment
    (:func:`run_split_experiment`), the patient overlap of 70/10/20 splits, and the CNN (:func:`run_cnn`) with its
    evaluation (:class:`Results`).

    ``cache_dir`` is accepted for the chapter protocol and unused: the chapter runs no grid of runs (one split
    experiment, one CNN per protocol and fold), so nothing is cached and every call computes afresh.
    """
    table, Y, labels = load_label_matrix()
    label_fields = _label_table_fields(table, Y, labels)
    toy_metrics = toy_example()["metrics"]
    split_fields = _split_fields(Y, P)
    overlap = patient_overlap(table, seed=P.seed)
    return Results(**label_fields, toy_metrics=toy_metrics, toy_best=toy_best_sets(toy_metrics), **split_fields,
                   patient_overlap=overlap, overlap_figures=overlap_headline_figures(overlap), **_cnn_fields(P))
