"""Chapter 4b: evaluation measures for imbalanced test sets — PR-T and the tie-aware mean PR (thesis Chapter 5).

Units:

* :func:`table_5_1` / :func:`table_5_2`: the thesis's confusion-matrix example recomputed (Small ΔPrec erratum);
* :func:`tie_cases`: Example 1 and the start / intermediate / end ties of Fig. 5.7 through Algorithms 3-5;
* :func:`digits_run`: an En (3:1) or Ep (1:3) model on scikit-learn's digits, one digit versus the rest (1:9, a
  bundled real-image stand-in for the CIFAR-10 automobile task); negatives drawn equally from the 9 other
  digits as in §5.5.3;
* En/Ep on slide-phantom patches reuse :func:`medeval.experiments.histology.classification_run`;
* ``data_source="real"`` (profile ``full``) runs the thesis's own tasks instead: En/Ep trained on PCam and tested
  on the CAMELYON16 test patches (:func:`medeval.experiments.class_distribution.pcam_classification_run`,
  :func:`~medeval.experiments.class_distribution.with_imbalanced_test`) and CIFAR-10 automobile vs rest
  (:func:`medeval.experiments.cifar10_binary.cifar10_run`, ResNet50 with the Keras augmentation);
* :func:`metric_comparison`, :func:`score_histograms`: the analyses of §5.6-5.9.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from medeval.experiments import class_distribution as cd
from medeval.experiments import histology as H
from medeval.metrics import curves as C

#: Thesis Table 5.1 (TP, FN, FP, TN).
TABLE_5_1 = {
    ("Large", "m1"): (80_000, 400, 4_000, 10_000_000),
    ("Large", "m2"): (80_200, 200, 2_000, 10_002_000),
    ("Small", "m1"): (8_000, 400, 4_000, 100_000),
    ("Small", "m2"): (8_200, 200, 2_000, 102_000),
}
#: Thesis Table 5.2 as printed: (ΔTPR, ΔFPR, ΔPrec).
TABLE_5_2_PRINTED = {"Large": (0.003, 0.000, 0.024), "Small": (0.024, 0.019, 0.005)}


class Params(cd.HistologyParams):
    """Parameters of chapter 4b (``medeval params 04b-evaluation-measures``)."""

    n_trials: int = Field(4, ge=2, le=50, description="trial-models per En/Ep on the phantom patches (thesis: 10)")
    n_digit_trials: int = Field(10, ge=2, le=100, description="trial-models per En/Ep on digits (thesis: 10)")
    positive_digit: int = Field(8, ge=0, le=9, description="the digit used as positive class (1:9 one-vs-rest)")
    digits_test_fraction: float = Field(0.5, gt=0.1, lt=0.9, description="held-out fraction of the digits")
    digits_model: Literal["logistic", "mlp"] = Field("logistic", description="classifier on the 64 digit pixels")
    n_recall_points: int = Field(101, ge=11, le=10001, description="recall grid of the mean PR curve (Alg. 3)")
    hist_bins: int = Field(101, ge=10, le=1000, description="score-histogram bins (Fig. 5.1: 101)")
    n_cifar_trials: int = Field(10, ge=2, le=100, description="data_source=real: trial-models per En/Ep on CIFAR-10")
    cifar_model: Literal["resnet50", "resnet18", "small_cnn"] = Field(
        "resnet50", description="CIFAR-10 classifier (thesis: ResNet50 pre-trained on ImageNet)")
    cifar_weights: str | None = Field(
        None, description="local torchvision ImageNet state dict for the ResNet (null = train from scratch)")
    cifar_max_epochs: int = Field(100, ge=1, le=1000, description="CIFAR-10 epoch limit (early stopping decides)")
    cifar_batch_size: int = Field(32, ge=1, le=4096, description="CIFAR-10 mini-batch (thesis: 32)")
    cifar_lr: float = Field(1e-4, gt=0, le=1, description="CIFAR-10 starting Adam learning rate (thesis: 1e-4)")
    cifar_lr_patience: int = Field(10, ge=1, le=1000, description="epochs without improvement before lr x 0.3")
    cifar_early_stopping_patience: int = Field(
        20, ge=1, le=1000, description="epochs without validation improvement before stopping (thesis: not given)")
    cifar_augment: bool = Field(True, description="Keras-style rotation 15, shift 5/32, horizontal flip")


def phantom_configs(P: Params) -> tuple[dict, dict]:
    """The (data, cls) dictionaries of :func:`medeval.experiments.histology.classification_run`."""
    shared = P.model_dump(include=set(cd.HistologyParams.model_fields))
    q = cd.Params(**shared, depth=1)  # depth: U-Net only; 1 imposes no constraint on patch_size
    return cd.data_config(q), cd.cls_config(q)


def validate(P: Params) -> None:
    """Cross-field checks before any compute (real data present, PCam geometry)."""
    phantom_configs(P)
    cd.validate_histology(P)
    if P.data_source == "real":
        from medeval.data.manifest import require

        require("cifar10")
        if P.cifar_weights is not None:
            from pathlib import Path

            if not Path(P.cifar_weights).expanduser().is_file():
                raise ValueError(f"cifar_weights: {P.cifar_weights} is not a file (a local torch state dict)")
            if P.cifar_model == "small_cnn":
                raise ValueError("cifar_weights needs cifar_model resnet50 or resnet18")


def histology_fn(P: Params):
    """The En/Ep histology run: slide-phantom patches or, with real data, PCam."""
    return cd.pcam_classification_run if P.data_source == "real" else H.classification_run


def phantom_grid(P: Params) -> list[dict]:
    """En/Ep trials of the histology task (phantom patches, or PCam with ``data_source=real``)."""
    data, cls = phantom_configs(P)
    return [{"distribution": d, "run": r, "data": data, "cls": cls, "device": P.device}
            for d in ("En", "Ep") for r in range(P.n_trials)]


def cifar10_grid(P: Params) -> list[dict]:
    """En/Ep trials of the CIFAR-10 automobile-vs-rest task (``data_source=real``)."""
    from medeval.experiments.cifar10_binary import file_sha256

    digest = file_sha256(P.cifar_weights) if P.cifar_weights is not None else None
    return [{"distribution": d, "run": r, "seed": P.seed, "model": P.cifar_model, "weights_path": P.cifar_weights,
             "weights_sha256": digest,
             "max_epochs": P.cifar_max_epochs, "batch_size": P.cifar_batch_size, "lr": P.cifar_lr,
             "lr_patience": P.cifar_lr_patience, "early_stopping_patience": P.cifar_early_stopping_patience,
             "augment": P.cifar_augment, "device": P.device}
            for d in ("En", "Ep") for r in range(P.n_cifar_trials)]


def digits_grid(P: Params) -> list[dict]:
    return [{"distribution": d, "run": r, "positive_digit": P.positive_digit, "seed": P.seed,
             "test_fraction": P.digits_test_fraction, "model": P.digits_model}
            for d in ("En", "Ep") for r in range(P.n_digit_trials)]


# --------------------------------------------------------------------------------------------------
# Tables 5.1 and 5.2


def table_5_1() -> pd.DataFrame:
    return pd.DataFrame([{"test set": s, "model": m, "TP": v[0], "FN": v[1], "FP": v[2], "TN": v[3]}
                         for (s, m), v in TABLE_5_1.items()])


def table_5_2(t51: pd.DataFrame | None = None) -> pd.DataFrame:
    """TPR, FPR and precision of m1 and m2 (Eqs. 2.1, 2.4, 2.2) and their differences, next to the printed Δs."""
    t51 = table_5_1() if t51 is None else t51
    rows = []
    for size, g in t51.groupby("test set", sort=False):
        r = {m: C.confusion_rates(tp=x.TP, fp=x.FP, fn=x.FN, tn=x.TN) for m, x in zip(g.model, g.itertuples(),
                                                                                        strict=True)}
        row = {"test set": size}
        for name, attr in (("TPR", "recall"), ("FPR", "fpr"), ("Prec", "precision")):
            row[f"{name} m1"] = float(getattr(r["m1"], attr))
            row[f"{name} m2"] = float(getattr(r["m2"], attr))
            row[f"Δ{name}"] = abs(row[f"{name} m2"] - row[f"{name} m1"])
        printed = TABLE_5_2_PRINTED[size]
        row.update({"printed ΔTPR": printed[0], "printed ΔFPR": printed[1], "printed ΔPrec": printed[2]})
        row["erratum"] = "; ".join(
            f"Δ{n}: printed {p:.3f}, computed {row[f'Δ{n}']:.4f}"
            for n, p in zip(("TPR", "FPR", "Prec"), printed, strict=True) if abs(round(row[f"Δ{n}"], 3) - p) > 0.0015
        ) or "none"
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# ties (Example 1, Fig. 5.7)


TIE_CASES = {
    "Example 1, model 1": [1, 0, 1, 0, 0],
    "Example 1, model 2": [1, 0, 0, 0, 1],
    "Case 1: start tie": [0, 0, 1, 0, 1, 1, 0],
    "Case 2: intermediate tie (TPR 0.75)": [1, 1, 1, 0, 0, 1, 0],
    "Case 3: end tie": [1, 1, 0, 1, 1, 0, 0],
}


def ranked_scores(labels) -> tuple[np.ndarray, np.ndarray]:
    """Labels of a ranked list (first = highest score) with distinct descending scores."""
    y = np.asarray(labels)
    return y, np.arange(y.size, 0, -1, dtype=float)


def tie_cases(n_points: int = 101) -> pd.DataFrame:
    """Each tie case through Algorithm 3 (mean-curve precision at recall 0, at the tied recall and at recall 1),
    Algorithms 4-5 (PR-AUC), the plain PR curve's endpoint (Saito & Rehmsmeier's 2/5 in Example 1), scikit-learn's
    average precision and naive linear PR interpolation."""
    from sklearn.metrics import average_precision_score

    rows = []
    for name, labels in TIE_CASES.items():
        y, s = ranked_scores(labels)
        roc = C.roc_curve(y, s)
        recall, prec = C.interpolated_pr_points(roc, n_points=n_points)
        rows.append({
            "case": name, "ranking": "".join(map(str, labels)),
            "prec at recall 0 (Alg. 3)": prec[0],
            "prec at recall 1 (Alg. 3)": prec[-1],
            "plain PR endpoint": C.pr_curve(y, s).precision[-1],
            "PR-AUC (Alg. 4-5)": C.pr_auc_roc_interpolated(roc, n_points=n_points),
            "sklearn AP": average_precision_score(y, s),
            "linear PR-AUC": C.linear_pr_auc(C.pr_curve(y, s), n_points=n_points),
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# digits one-vs-rest (stand-in for CIFAR-10 automobile vs rest)


def digits_run(*, distribution: str, run: int, positive_digit: int, seed: int, test_fraction: float,
               model: str = "logistic") -> dict:
    """One En (negative:positive = 3:1) or Ep (1:3) trial-model on the digits (Table 5.3, §5.5.3).

    Fixed stratified train/test split (``seed``); U = floor(#positives in train / 3); 4U examples with the
    negatives drawn equally from the nine other digits; 20 % held out for validation (unused by the model);
    the test set keeps the natural 1:9 ratio.
    """
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    from medeval.data.one_vs_rest import biased_subset
    from medeval.data.training_sets import train_validation_split

    if distribution not in ("En", "Ep"):
        raise ValueError(f"distribution must be 'En' or 'Ep', got {distribution!r}")
    digits = load_digits()
    x, d = digits.data / 16.0, digits.target
    x_tr, x_te, d_tr, d_te = train_test_split(x, d, test_size=test_fraction, stratify=d, random_state=seed)
    rng = np.random.default_rng([seed, run, 0 if distribution == "En" else 1])
    subset = biased_subset(d_tr, distribution, positive_class=positive_digit, seed=rng)
    train, _ = train_validation_split(subset.size, seed=rng)  # 20 % validation held out (thesis §5.5.3)
    idx = subset.indices[train]
    unit, n_pos, n_neg = subset.unit, subset.n_pos, subset.n_neg
    y = (d_tr[idx] == positive_digit).astype(int)
    if model == "logistic":
        clf = LogisticRegression(C=1.0, max_iter=2000)
    else:
        clf = MLPClassifier(hidden_layer_sizes=(32,), max_iter=400, random_state=int(rng.integers(2**31)))
    clf.fit(x_tr[idx], y)
    score = clf.predict_proba(x_te)[:, 1]
    return {"distribution": distribution, "run": int(run), "unit": int(unit), "n_pos": int(n_pos),
            "n_neg": int(n_neg), "train_size": int(idx.size),
            "imbalanced": {"y_true": d_te == positive_digit, "score_c": score, "argmax_c": score >= 0.5}}


# --------------------------------------------------------------------------------------------------
# analyses


def score_histograms(runs: list[dict], key: str = "imbalanced", bins: int = 101) -> pd.DataFrame:
    """Mean (over trial-models) count of test examples per score bin, by model and actual class (Fig. 5.1)."""
    edges = np.linspace(0, 1, bins + 1)
    rows = []
    for d in sorted({r["distribution"] for r in runs}):
        for actual, flag in (("negative", False), ("positive", True)):
            counts = np.mean([np.histogram(np.asarray(r[key]["score_c"])[np.asarray(r[key]["y_true"]) == flag],
                                           bins=edges)[0] for r in runs if r["distribution"] == d], axis=0)
            rows += [{"model": d, "actual": actual, "bin_left": edges[i], "mean_count": counts[i]}
                     for i in range(bins)]
    return pd.DataFrame(rows)


def errors_at_threshold(runs: list[dict], key: str = "imbalanced", threshold: float = 0.5) -> pd.DataFrame:
    """Mean FP and FN per model at a raw-score threshold (the dashed line of Fig. 5.1)."""
    rows = []
    for r in runs:
        y = np.asarray(r[key]["y_true"], bool)
        p = np.asarray(r[key]["score_c"]) >= threshold
        rows.append({"model": r["distribution"], "FP": int(np.sum(p & ~y)), "FN": int(np.sum(~p & y))})
    return pd.DataFrame(rows).groupby("model").mean().reset_index()


def metric_comparison(summary: dict[str, dict]) -> pd.DataFrame:
    """Per trial: ROC-AUC, PR-AUC (Alg. 4-5), sklearn AP, linear-interpolation PR-AUC and PR-T AUCs."""
    rows = []
    for d, s in summary.items():
        for k, m in enumerate(s["runs"]):
            roc, prt = m["roc"], m["prt"]
            tp, fp = roc.tp[1:], roc.fp[1:]
            pr = C.PRCurve(recall=tp / roc.n_pos, precision=tp / (tp + fp), thresholds=roc.thresholds[1:])
            ap = float(np.sum(np.diff(np.r_[0.0, pr.recall]) * pr.precision))  # = sklearn average_precision_score
            rows.append({"model": d, "trial": k, "ROC-AUC": m["roc_auc"], "PR-AUC (Alg. 4-5)": m["pr_auc"],
                         "average precision": ap, "linear PR-AUC": C.linear_pr_auc(pr),
                         "precision-AUC (PR-T)": m["precision_auc"], "recall-AUC (PR-T)": m["recall_auc"],
                         "test positives": int(prt.n_pos), "test negatives": int(prt.n_neg)})
    return pd.DataFrame(rows)


def separability(comparison: pd.DataFrame, a: str = "En", b: str = "Ep") -> pd.DataFrame:
    """|mean(a) - mean(b)| and the mean across-trial std of each metric: how well each separates the models."""
    metrics = [c for c in comparison.columns if "AUC" in c or c == "average precision"]
    g = comparison.groupby("model")[metrics]
    mean, std = g.mean(), g.std(ddof=0)
    return pd.DataFrame({"metric": metrics, f"{a} mean": mean.loc[a].values, f"{b} mean": mean.loc[b].values,
                         "|Δ|": (mean.loc[a] - mean.loc[b]).abs().values, "mean std": std.mean().values})
