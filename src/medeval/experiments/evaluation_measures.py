"""Chapter 5: evaluation measures for imbalanced test sets — PR-T and the tie-aware mean PR (thesis Chapter 5).

Units:

* :func:`table_5_1` / :func:`table_5_2`: the thesis's confusion-matrix example recomputed (Small ΔPrec erratum);
* :func:`tie_cases`: Example 1 and the start / intermediate / end ties of Fig. 5.7 through Algorithms 3-5;
* :func:`phantom_classification_run`: an En (negative:positive = 3:1), Ep (1:3) or E2.a (2:2) patch classifier on
  slide-phantom patches (the PCam→CAMELYON16 stand-in), the patches degraded by stain variation and pixel noise
  (:func:`degrade_patches`) so that the task sits in the quality band instead of at ROC-AUC 0.998;
* :func:`digits_run`: an En or Ep model on scikit-learn's digits, one digit versus the rest (1:9, a bundled
  real-image stand-in for the CIFAR-10 automobile task); negatives drawn equally from the 9 other digits (§5.5.3);
* ``data_source="real"`` (profile ``full``) runs the thesis's own tasks instead: En/Ep/E2.a trained on PCam and
  tested on the CAMELYON16 test patches (:func:`medeval.experiments.class_distribution.pcam_classification_run`,
  :func:`~medeval.experiments.class_distribution.with_imbalanced_test`) and CIFAR-10 automobile vs rest
  (:func:`medeval.experiments.cifar10_binary.cifar10_run`, ResNet50 with the Keras augmentation);
* :func:`run_grids`: every trial-model of the chapter through the grid executor;
* :func:`trial_table`: per-trial figures (ROC, PR, PR-T, errors at the representative
  threshold, precision at a *matched* recall, PR-T after correcting the training prior) that the claims of
  :mod:`medeval.experiments.evaluation_measures_claims` are decided on;
* :func:`score_histograms`, :func:`error_counts_by_threshold`, :func:`separability`: the analyses of §5.6-5.9;
* :func:`run`: the chapter's one entry point, every computation above for a parameter set, as :class:`Results`
  (each task summarised by :func:`summarise_task` into a :class:`TaskResults`).

Why a matched comparison: En and Ep differ by the prior they were trained on, which mostly shifts the
calibration of their scores. At a *fixed* threshold that shift alone gives En the higher precision and Ep the
higher recall, whatever the quality of the two rankings. Precision at the same recall (:func:`precision_at_recall`)
and PR-T after a prior correction (:func:`prior_corrected`) remove the shift, so they tell a better model from
a shifted one.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from medeval.experiments import class_distribution as cd
from medeval.experiments import histology as H
from medeval.experiments.evaluation_measures_params import Params  # noqa: F401 - re-exported
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
#: A printed Δ of Table 5.2 agrees with ours within this: three decimals, and the thesis subtracts rounded terms
#: (Large ΔPrec: 0.976 − 0.952 = .024 while the unrounded difference is 0.0233).
PRINTED_TOLERANCE = 0.001
#: Models are compared only when every group's mean ROC-AUC on the test set exceeds this ("did not train").
QUALITY_FLOOR = 0.7
#: Where the default models should land (off the ceiling, where a difference between models can show).
QUALITY_BAND = (0.75, 0.95)
#: The dashed line of Fig. 5.1 (raw score; also the argmax decision of a two-class softmax).
REPRESENTATIVE_THRESHOLD = 0.5
#: Fig. 5.4: "precision is about 1.0 when recall is below 0.3".
LOW_RECALL = 0.3
#: Training prior P(positive) of each binary training distribution (Table 5.3, Table 4.6).
TRAINING_PRIOR = {"En": 0.25, "Ep": 0.75, "E2.a": 0.5, "E2.b": 0.25, "E2.c": 0.75}
#: The common prior of the recalibrated comparison: every model's scores are moved to En's training prior
#: (:func:`prior_corrected`), so En is left as the thesis evaluated it and Ep becomes "the same Ep model, calibrated
#: as En is". Moving both to another common prior maps both by the same monotone function, so which model makes
#: more FP or FN at a common threshold does not change. (Moving Ep alone to the test set's prior, 1:9, would put it
#: on the other side of En and reintroduce a calibration gap of the opposite sign.)
RECALIBRATION_PRIOR = TRAINING_PRIOR["En"]
#: Columns of :func:`trial_table` that depend on the calibration (fixed thresholds) and their values after moving the
#: model's scores to :data:`RECALIBRATION_PRIOR`; ROC and PR figures are invariant to that monotone map.
RECALIBRATED_COLUMNS = {"precision-AUC (PR-T)": "precision-AUC (recalibrated)",
                        "recall-AUC (PR-T)": "recall-AUC (recalibrated)",
                        "FP at t": "FP at t (recalibrated)", "FN at t": "FN at t (recalibrated)"}
#: En and Ep have the designs of E2.b and E2.c (§5.5.1), so Fig. 5.5 re-uses them next to E2.a.
FIG55_NAMES = {"E2.a": "E2.a", "En": "E2.b", "Ep": "E2.c"}
#: The two tasks of the chapter, by role: the large histology test set and the moderate CIFAR-10 one.
TASK_ROLES = ("histology", "cifar")


def phantom_configs(P: Params) -> tuple[dict, dict]:
    """The (data, cls) dictionaries of the histology runs (:func:`phantom_classification_run`)."""
    return cd.data_config(P), cd.cls_config(P)


def degradation_config(P: Params) -> dict:
    return {"stain_jitter": float(P.stain_jitter), "pixel_noise": float(P.pixel_noise)}


# --------------------------------------------------------------------------------------------------
# phantom patches (the PCam -> CAMELYON16 stand-in)


def degrade_patches(images: np.ndarray, *, stain_jitter: float, pixel_noise: float, seed: int,
                    block: int = 2048) -> np.ndarray:
    """Patches with stain variation and pixel noise, as uint8.

    Each patch ``k`` gets its own stain: every RGB channel is multiplied by ``exp(stain_jitter · z_c)`` and a grey
    offset ``60 · stain_jitter · z_0`` is added (``z ~ N(0, 1)``), as slides stained and scanned on different
    days differ; then independent Gaussian noise of σ ``pixel_noise`` is added to every pixel. Patch ``k``'s
    draw depends only on ``(seed, k // block)`` and its place in the block, so a patch is degraded the same way
    in every run. ``stain_jitter = pixel_noise = 0`` returns the patches unchanged.
    """
    images = np.asarray(images)
    if stain_jitter == 0 and pixel_noise == 0:
        return images
    out = np.empty_like(images, dtype=np.uint8)
    for b, start in enumerate(range(0, images.shape[0], block)):
        x = images[start:start + block].astype(np.float32)
        rng = np.random.default_rng([int(seed), b])
        n = x.shape[0]
        gain = np.exp(stain_jitter * rng.standard_normal((n, 1, 1, 3))).astype(np.float32)
        offset = (60.0 * stain_jitter * rng.standard_normal((n, 1, 1, 1))).astype(np.float32)
        x = x * gain + offset
        if pixel_noise > 0:
            x += (pixel_noise * rng.standard_normal(x.shape)).astype(np.float32)
        out[start:start + n] = np.clip(np.rint(x), 0, 255).astype(np.uint8)
    return out


@functools.lru_cache(maxsize=2)
def _degraded(which: str, data_key: str, cls_key: str, degrade_key: str):
    data, cls, deg = json.loads(data_key), json.loads(cls_key), json.loads(degrade_key)
    seed = int(data["seed"]) * 7_919 + (1 if which == "train" else 2)
    if which == "train":
        images, masks, _ = H.training_patches(data)
        return degrade_patches(images, seed=seed, **deg), masks
    test = H.classification_test_sets(data, cls)
    return degrade_patches(test["images"], seed=seed, **deg), test


def phantom_classification_run(*, distribution: str, run: int, data: dict, cls: dict, degrade: dict,
                               device: str = "cpu") -> dict:
    """Train one patch classifier on a binary distribution (En, Ep, E2.a, ...) and score both test sets.

    As :func:`medeval.experiments.histology.classification_run` (same patches, labels, U, training-set draw,
    seeds and network), on patches degraded by :func:`degrade_patches` with ``degrade`` (training and test
    patches alike, fixed per patch). Returns labels and C-probabilities on the balanced and the imbalanced test
    sets and the argmax decision.
    """
    from medeval.data.training_sets import BINARY_DISTRIBUTIONS

    if distribution not in BINARY_DISTRIBUTIONS:  # before any patch is made
        raise ValueError(f"distribution must be one of {list(BINARY_DISTRIBUTIONS)}, got {distribution!r}")
    keys = [json.dumps(v, sort_keys=True) for v in (data, cls, degrade)]
    images, masks = _degraded("train", *keys)
    test_images, test = _degraded("test", *keys)
    return H.train_and_score_patch_classifier(distribution=distribution, run=run, data=data, cls=cls,
                                              device=device, train_images=images, train_masks=masks,
                                              test={**test, "images": test_images})


def histology_fn(P: Params):
    """The histology run: degraded slide-phantom patches or, with real data, PCam."""
    return cd.pcam_classification_run if P.data_source == "real" else phantom_classification_run


def phantom_grid(P: Params) -> list[dict]:
    """En / Ep / E2.a trials of the histology task (phantom patches, or PCam with ``data_source=real``)."""
    data, cls = phantom_configs(P)
    extra = {} if P.data_source == "real" else {"degrade": degradation_config(P)}
    return [{"distribution": d, "run": r, "data": data, "cls": cls, "device": P.device, **extra}
            for d in ("En", "Ep", "E2.a") for r in range(P.n_trials)]


def cifar10_grid(P: Params) -> list[dict]:
    """En/Ep trials of the CIFAR-10 automobile-vs-rest task (``data_source=real``)."""
    from medeval.data.manifest import file_hash

    digest = file_hash(P.cifar_weights) if P.cifar_weights is not None else None
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


def run_grids(P: Params, cache_dir=None) -> dict[str, dict]:
    """Every trial-model of the chapter: ``{role: {"name", "basis", "runs", "substitution"}}`` for the roles of
    :data:`TASK_ROLES` (the large histology test set and the moderate CIFAR-10 one); with real data the histology
    task also has a ``"note"``: what stood in for the CAMELYON16 test patches and why (empty when nothing did).

    ``cache_dir`` (a folder) keeps finished runs so an interrupted chapter resumes; each task has its own
    sub-folder. Phantom: degraded slide-phantom patches (En, Ep, E2.a) and digits (En, Ep). Real data: PCam
    trained, tested on CAMELYON16 (or a 1:``imbalance`` PCam subsample), and CIFAR-10.
    """
    from pathlib import Path

    from medeval.models.training import load_optimizer_machinery

    load_optimizer_machinery()  # before the pools fork: the workers share it

    def sub(name):
        return None if cache_dir is None else Path(cache_dir) / name

    return _real_tasks(P, sub) if P.data_source == "real" else _phantom_tasks(P, sub)


def _real_tasks(P: Params, sub) -> dict[str, dict]:
    """The thesis's own tasks (:func:`run_grids` with ``data_source=real``): PCam trained, tested on CAMELYON16 (or
    what stood in for it), and CIFAR-10; ``sub(name)`` is each grid's cache folder."""
    from medeval.experiments.cifar10_binary import cifar10_run
    from medeval.runtime.grid import run_grid

    hist = run_grid(histology_fn(P), phantom_grid(P), cache_dir=sub("en-ep-pcam"), scheduler=P.scheduler,
                    max_workers=P.max_workers, desc="En/Ep/E2.a PCam trials")
    imb = cd.with_imbalanced_test(hist, P, cache_dir=sub("camelyon16"))
    cifar = run_grid(cifar10_run, cifar10_grid(P), cache_dir=sub("en-ep-cifar10"), scheduler=P.scheduler,
                     max_workers=P.max_workers, desc="En/Ep CIFAR-10 trials")
    hist_name = "PCam→CAMELYON16" if imb.source == "camelyon16" else "PCam→PCam subsample"
    hist_sub = "our small patch CNN for the G-CNN" + (
        "" if imb.source == "camelyon16" else "; a 1:imbalance subsample of the PCam test split for CAMELYON16")
    cifar_sub = "" if P.cifar_model == "resnet50" else f"{P.cifar_model} for ResNet50"
    return {"histology": {"name": hist_name, "basis": "real", "runs": imb.runs, "note": imb.note,
                          "substitution": hist_sub},
            "cifar": {"name": "CIFAR-10", "basis": "real", "runs": cifar, "substitution": cifar_sub}}


def _phantom_tasks(P: Params, sub) -> dict[str, dict]:
    """The default tasks (:func:`run_grids`): degraded slide-phantom patches and the digits; ``sub(name)`` is each
    grid's cache folder."""
    from medeval.runtime.grid import run_grid

    hist = run_grid(histology_fn(P), phantom_grid(P), cache_dir=sub("en-ep-phantom"), scheduler=P.scheduler,
                    max_workers=P.max_workers, desc="En/Ep/E2.a phantom trials")
    digits = run_grid(digits_run, digits_grid(P), cache_dir=sub("en-ep-digits"), scheduler=P.scheduler,
                      max_workers=1, desc="En/Ep digits trials")
    return {"histology": {"name": "phantom patches", "basis": "phantom", "runs": hist,
                          "substitution": "degraded slide-phantom patches and a small CNN for PCam→CAMELYON16"},
            "cifar": {"name": "digits", "basis": "real", "runs": digits, "substitution": digits_substitution(P)}}


def digits_substitution(P: Params) -> str:
    """What stands in for CIFAR-10 automobile vs rest (ResNet50) on the default task, in words."""
    model = "a logistic regression" if P.digits_model == "logistic" else "a one-hidden-layer MLP"
    return (f"8×8 handwritten digits (UCI, scikit-learn's load_digits; digit {P.positive_digit} vs rest, 1:9) and "
            f"{model} for CIFAR-10 (automobile vs rest, ResNet50)")


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


def algorithm3_pr_points(roc: C.RocCurve, n_points: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """The PR curve drawn for one trial-model (Figs. 5.2 and 5.7): ``(recall, precision)`` of Algorithm 3 on a
    grid of ``n_points`` recalls, interpolated in ROC space from ``roc``
    (:func:`medeval.metrics.curves.interpolated_pr_points`, ``mode="curve"``)."""
    return C.interpolated_pr_points(roc, n_points=n_points)


def tie_case_curves(name: str, n_points: int = 101) -> dict:
    """The curves of the ranked list ``TIE_CASES[name]`` (Example 1 figure): its ROC curve (``"roc"``), the PR
    curve of Algorithm 3 (``"recall"``, ``"precision"``, :func:`algorithm3_pr_points`) and the plain PR points
    (``"pr"``, :func:`medeval.metrics.curves.pr_curve`)."""
    y, s = ranked_scores(TIE_CASES[name])
    roc = C.roc_curve(y, s)
    recall, precision = algorithm3_pr_points(roc, n_points)
    return {"roc": roc, "recall": recall, "precision": precision, "pr": C.pr_curve(y, s)}


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


@functools.lru_cache(maxsize=4)
def _digits_split(seed: int, test_fraction: float):
    """The fixed stratified train/test split of the digits (pixels scaled to [0, 1]); read-only arrays."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    parts = train_test_split(digits.data / 16.0, digits.target, test_size=test_fraction, stratify=digits.target,
                             random_state=seed)
    for a in parts:
        a.setflags(write=False)
    return tuple(parts)


def digits_run(*, distribution: str, run: int, positive_digit: int, seed: int, test_fraction: float,
               model: str = "logistic") -> dict:
    """One En (negative:positive = 3:1) or Ep (1:3) trial-model on the digits (Table 5.3, §5.5.3).

    Fixed stratified train/test split (``seed``); U = floor(#positives in train / 3); 4U examples with the
    negatives drawn equally from the nine other digits; 20 % held out for validation (unused by the model);
    the test set keeps the natural 1:9 ratio.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    from medeval.data.one_vs_rest import biased_subset
    from medeval.data.training_sets import train_validation_split

    if distribution not in ("En", "Ep"):
        raise ValueError(f"distribution must be 'En' or 'Ep', got {distribution!r}")
    x_tr, x_te, d_tr, d_te = _digits_split(int(seed), float(test_fraction))
    rng = np.random.default_rng([seed, run, 0 if distribution == "En" else 1])
    subset = biased_subset(d_tr, distribution, positive_class=positive_digit, seed=rng)
    train, _ = train_validation_split(subset.size, seed=rng)  # 20 % validation held out (thesis §5.5.3)
    idx = subset.indices[train]
    unit, n_pos, n_neg = subset.unit, subset.n_pos, subset.n_neg
    y = (d_tr[idx] == positive_digit).astype(int)
    if model == "logistic":
        # newton-cg solves the same L2-regularised problem as the default lbfgs, 8x faster on 64 features
        clf = LogisticRegression(C=1.0, max_iter=2000, solver="newton-cg")
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


def error_counts_by_threshold(runs: list[dict], key: str = "imbalanced", n_thresholds: int = 101) -> pd.DataFrame:
    """Mean FP and FN over the trial-models of each model at each raw-score threshold (the dashed line of
    Fig. 5.1 moved across the score axis).

    The thresholds are the exact grid ``i / (n_thresholds - 1)`` (:func:`medeval.metrics.curves.fixed_threshold_grid`)
    and the counts are :func:`medeval.metrics.curves.pr_t_curve`'s on the raw scores (positive iff ``score >= t``):
    ``np.linspace`` would put 0.35, 0.41, ... one ulp above themselves, so a score of exactly 0.35 would count as a
    negative prediction there."""
    grid = C.fixed_threshold_grid(n_thresholds)
    rows = []
    for d in sorted({r["distribution"] for r in runs}):
        curves = [C.pr_t_curve(r[key]["y_true"], r[key]["score_c"], thresholds=grid, normalize=False)
                  for r in runs if r["distribution"] == d]
        fp = np.mean([c.fp for c in curves], axis=0)
        fn = np.mean([c.fn for c in curves], axis=0)
        rows += [{"model": d, "threshold": t, "FP": a, "FN": b} for t, a, b in zip(grid, fp, fn, strict=True)]
    return pd.DataFrame(rows)


def ordering_share(counts: pd.DataFrame, a: str = "En", b: str = "Ep") -> float:
    """Share of the thresholds in (0, 1) at which ``a`` makes more FN and ``b`` more FP (mean counts) — Fig. 5.1's
    "at almost all positions of the threshold line". Thresholds where both models make the same FP and the same
    FN (e.g. no error at all) are left out."""
    wide = counts.pivot(index="threshold", columns="model", values=["FP", "FN"])
    wide = wide[(wide.index > 0) & (wide.index < 1)]
    same = (wide[("FP", a)] == wide[("FP", b)]) & (wide[("FN", a)] == wide[("FN", b)])
    wide = wide[~same]
    if wide.empty:
        return float("nan")
    ok = (wide[("FN", a)] > wide[("FN", b)]) & (wide[("FP", b)] > wide[("FP", a)])
    return float(ok.mean())


def prior_corrected(score, train_prior: float, target_prior: float = 0.5) -> np.ndarray:
    r"""Scores moved from the training prior to ``target_prior`` (Saerens, Latinne & Decaestecker 2002):
    the odds of each score :math:`s` are multiplied by the ratio of the priors' odds,

    .. math::

       \frac{s'}{1 - s'} = \frac{s}{1 - s} \cdot \frac{\pi_t / (1 - \pi_t)}{\pi_s / (1 - \pi_s)}.

    A monotone map: ROC and PR do not change, a fixed
    threshold does. Scores of exactly 0 or 1 stay where they are."""
    if not (0 < train_prior < 1 and 0 < target_prior < 1):
        raise ValueError(f"priors must lie in (0, 1), got {train_prior} and {target_prior}")
    s = np.asarray(score, dtype=np.float64)
    w = (target_prior / (1 - target_prior)) / (train_prior / (1 - train_prior))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = s * w / (s * w + (1 - s))
    return np.where(np.isfinite(out), out, s)


def precision_at_recall(roc: C.RocCurve, recall: float) -> float:
    r"""Precision at a given recall, read off the ROC curve (Eq. 5.2: linear interpolation in ROC space).

    The operating point is the first one (highest threshold) that reaches ``recall``: if a ROC vertex has exactly
    that TP count its FP count is used (the fewest false positives at that recall), else FP is interpolated
    between the neighbouring vertices. NaN at recall 0. With :math:`r^*` = ``recall``:

    .. math::

       prec(r^*) = \frac{r^* \cdot pos}{r^* \cdot pos + fpr(r^*) \cdot neg}
    """
    if not 0 <= recall <= 1:
        raise ValueError(f"recall must lie in [0, 1], got {recall}")
    tp_m = recall * roc.n_pos
    if tp_m == 0:
        return float("nan")
    j = int(np.searchsorted(roc.tp, tp_m - 1e-9, side="left"))
    if abs(roc.tp[j] - tp_m) < 1e-9:
        fp = float(roc.fp[j])
    else:
        tp0, tp1, fp0, fp1 = roc.tp[j - 1], roc.tp[j], roc.fp[j - 1], roc.fp[j]
        fp = float(fp0 + (fp1 - fp0) * (tp_m - tp0) / (tp1 - tp0))
    return float(tp_m / (tp_m + fp))


def _low_recall_figures(roc: C.RocCurve, n_points: int, low: float = LOW_RECALL) -> tuple[float, float]:
    """Fig. 5.4: mean precision of the Algorithm-3 curve at recalls in (0, low) and the share of the PR-AUC
    (Algorithms 4-5) that lies at recall <= low."""
    r, p = C.interpolated_pr_points(roc, n_points=n_points, mode="curve")
    inside = (r > 0) & (r < low - 1e-12)
    ra, pa = C.interpolated_pr_points(roc, n_points=n_points, mode="auc")
    total = C.trapezoid_auc(ra, pa)
    keep = ra <= low + 1e-12
    part = C.trapezoid_auc(ra[keep], pa[keep]) if keep.sum() > 1 else 0.0
    return float(np.mean(p[inside])) if inside.any() else float("nan"), float(part / total) if total > 0 else np.nan


def trial_table(runs: list[dict], key: str = "imbalanced", *, n_thresholds: int = 101, n_recall_points: int = 101,
                threshold: float = REPRESENTATIVE_THRESHOLD, matched_recall: float | None = None,
                names: dict[str, str] | None = None) -> tuple[pd.DataFrame, dict]:
    """One row per trial-model: every figure the chapter's claims are decided on; and the summary of
    :func:`medeval.experiments.class_distribution.summarise_runs` (mean curves) for the plots.

    Columns: ``ROC-AUC``; PR-AUC by Algorithms 4-5 on 101 and 1,001 recall points; scikit-learn's average
    precision; PR-AUC after naive linear interpolation in PR space; PR-T ``precision-AUC`` / ``recall-AUC``
    (Algorithms 1-2) on the raw scores and after :func:`prior_corrected` to a balanced prior; precision, recall,
    FP and FN at the raw ``threshold``; the PR-T areas and FP, FN at ``threshold`` after moving the scores to
    :data:`RECALIBRATION_PRIOR` (:data:`RECALIBRATED_COLUMNS`; Saerens, Latinne & Decaestecker 2002); ``precision at matched recall`` (:func:`precision_at_recall` at
    ``matched_recall``, by default the mean recall of the En models at ``threshold``); and the Fig. 5.4 figures.
    """
    summary = cd.summarise_runs(runs, key=key, n_thresholds=n_thresholds)
    rows, rocs = [], []
    by_model: dict[str, list[dict]] = {}
    for r in runs:
        by_model.setdefault(r["distribution"], []).append(r)
    for d, group in by_model.items():
        for k, (r, m) in enumerate(zip(group, summary[d]["runs"], strict=True)):
            y, s = np.asarray(r[key]["y_true"], dtype=bool), np.asarray(r[key]["score_c"], dtype=np.float64)
            roc = m["roc"]
            tp, fp = roc.tp[1:], roc.fp[1:]
            pr = C.PRCurve(recall=tp / roc.n_pos, precision=tp / (tp + fp), thresholds=roc.thresholds[1:])
            ap = float(np.sum(np.diff(np.r_[0.0, pr.recall]) * pr.precision))  # = sklearn average_precision_score
            at_t = C.pr_t_curve(y, s, thresholds=[threshold], normalize=False)
            tp_t, fp_t, fn_t = int(at_t.tp[0]), int(at_t.fp[0]), int(at_t.fn[0])
            corrected = C.pr_t_auc(C.pr_t_curve(y, prior_corrected(s, TRAINING_PRIOR.get(d, 0.5)),
                                                n_thresholds=n_thresholds))
            s_rec = prior_corrected(s, TRAINING_PRIOR.get(d, 0.5), RECALIBRATION_PRIOR)
            recal = C.pr_t_auc(C.pr_t_curve(y, s_rec, n_thresholds=n_thresholds))
            at_t_rec = C.pr_t_curve(y, s_rec, thresholds=[threshold], normalize=False)
            low_prec, low_share = _low_recall_figures(roc, n_recall_points)
            rows.append({
                "model": (names or {}).get(d, d), "trial": k,
                "ROC-AUC": m["roc_auc"], "PR-AUC (Alg. 4-5)": m["pr_auc"],
                "PR-AUC (Alg. 4-5, 1001 points)": C.pr_auc_roc_interpolated(roc, n_points=1001),
                "average precision": ap, "linear PR-AUC": C.linear_pr_auc(pr, n_points=n_recall_points),
                "precision-AUC (PR-T)": m["precision_auc"], "recall-AUC (PR-T)": m["recall_auc"],
                "precision-AUC (prior-corrected)": corrected.precision,
                "recall-AUC (prior-corrected)": corrected.recall,
                "precision-AUC (recalibrated)": recal.precision, "recall-AUC (recalibrated)": recal.recall,
                "FP at t (recalibrated)": int(at_t_rec.fp[0]), "FN at t (recalibrated)": int(at_t_rec.fn[0]),
                "precision at t": tp_t / (tp_t + fp_t) if tp_t + fp_t else np.nan,
                "recall at t": tp_t / int(y.sum()), "FP at t": fp_t, "FN at t": fn_t,
                "precision at recall < 0.3": low_prec, "PR-AUC share at recall ≤ 0.3": low_share,
                "test positives": int(roc.n_pos), "test negatives": int(roc.n_neg),
            })
            rocs.append(roc)
    table = pd.DataFrame(rows)
    if matched_recall is None:
        en = table.loc[table.model == (names or {}).get("En", "En"), "recall at t"]
        matched_recall = float(en.mean()) if len(en) else float("nan")
    table["precision at matched recall"] = [
        precision_at_recall(roc, matched_recall) if np.isfinite(matched_recall) and matched_recall > 0 else np.nan
        for roc in rocs]
    return table, {"summary": summary, "matched_recall": float(matched_recall)}


def grid_control(n_pos: int, n_neg: int, *, n_draws: int = 40, seed: int = 0) -> pd.DataFrame:
    """The control of "101 or 1,001 recall points give the same PR-AUC" (§5.9): PR-AUC by Algorithms 4-5 on 101 and
    on 1,001 recall points for ``n_draws`` random rankings (uniform scores) of a test set with ``n_pos`` positives
    and ``n_neg`` negatives — inputs with no model in them. If the two grids agree there too, their agreement on
    trained models follows from the trapezoid rule (its error on a grid of step h is at most about h times the total
    variation of the precision curve), not from the models."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(int(n_pos), bool), np.zeros(int(n_neg), bool)]
    rows = []
    for _ in range(n_draws):
        roc = C.roc_curve(y, rng.random(y.size))
        rows.append({"PR-AUC (Alg. 4-5)": C.pr_auc_roc_interpolated(roc, n_points=101),
                     "PR-AUC (Alg. 4-5, 1001 points)": C.pr_auc_roc_interpolated(roc, n_points=1001)})
    return pd.DataFrame(rows)


def quality_band(trials: pd.DataFrame, measure: str = "ROC-AUC") -> dict:
    """The quality figure of each model (mean over its trial-models), its range over single trial-models, and
    whether every model's mean lies in :data:`QUALITY_BAND`."""
    v = trials[measure].astype(float)
    lo, hi = QUALITY_BAND
    means = {str(k): float(x) for k, x in trials.groupby("model")[measure].mean().items()}
    return {"measure": measure, "min": float(v.min()), "max": float(v.max()), "means": means,
            "in_band": all(lo <= x <= hi for x in means.values()), "band": [lo, hi]}


def prior_corrected_curves(runs: list[dict], key: str = "imbalanced", n_thresholds: int = 101,
                           target_prior: float = 0.5) -> dict[str, dict]:
    """Mean PR-T curves (threshold-wise mean ± std) per model after :func:`prior_corrected` moved every model's
    scores from its training prior to ``target_prior``."""
    by_model: dict[str, list] = {}
    for r in runs:
        s = prior_corrected(r[key]["score_c"], TRAINING_PRIOR.get(r["distribution"], 0.5), target_prior)
        by_model.setdefault(r["distribution"], []).append(C.pr_t_curve(r[key]["y_true"], s,
                                                                        n_thresholds=n_thresholds))
    return {d: C.mean_prt_curves(curves) for d, curves in by_model.items()}


def separability(trials: pd.DataFrame, a: str = "En", b: str = "Ep") -> pd.DataFrame:
    r"""Per metric: the means of ``a`` and ``b``, ``|Δ|``, the mean across-trial std and the standardised separation
    (Cohen's d): how well each measure separates the two models.

    .. math::

       d = \frac{\lvert \bar M_{En} - \bar M_{Ep} \rvert}{\sqrt{(sd_{En}^2 + sd_{Ep}^2) / 2}}"""
    metrics = [c for c in ("ROC-AUC", "PR-AUC (Alg. 4-5)", "average precision", "linear PR-AUC",
                           "precision-AUC (PR-T)", "recall-AUC (PR-T)", "precision at matched recall",
                           "precision-AUC (prior-corrected)", "recall-AUC (prior-corrected)") if c in trials]
    g = trials.groupby("model")[metrics]
    mean, std = g.mean(), g.std(ddof=1)
    pooled = np.sqrt((std.loc[a] ** 2 + std.loc[b] ** 2) / 2)
    delta = (mean.loc[a] - mean.loc[b]).abs()
    return pd.DataFrame({"metric": metrics, f"{a} mean": mean.loc[a].values, f"{b} mean": mean.loc[b].values,
                         "|Δ|": delta.values, "mean std": std.mean().values,
                         "Cohen's d": (delta / pooled.replace(0, np.nan)).values})


# --------------------------------------------------------------------------------------------------
# checks (formula identities and the paper's worked examples, computed)


def table_checks(t52: pd.DataFrame, ties: pd.DataFrame) -> list[dict]:
    """Checks of Tables 5.1-5.2 and of Example 1 / Fig. 5.7 (the printed Δs our Eqs. 2.1, 2.2, 2.4 reproduce; the
    Small ΔPrec, which they do not, is an erratum instead)."""
    rows = []
    for _, r in t52.iterrows():
        for name in ("TPR", "FPR", "Prec"):
            printed, computed = float(r[f"printed Δ{name}"]), float(r[f"Δ{name}"])
            if abs(computed - printed) > PRINTED_TOLERANCE:
                continue  # an erratum, not a check
            rows.append({"check": f"Table 5.2 {r['test set']} Δ{name} from Table 5.1 (Eqs. 2.1, 2.4, 2.2)",
                         "where": "Table 5.2", "expected": f"{printed:.3f} (printed, ± {PRINTED_TOLERANCE})",
                         "computed": f"{computed:.4f}", "passed": True})
    ex = ties.set_index("case")
    e1, e2 = float(ex.loc["Example 1, model 1", "prec at recall 1 (Alg. 3)"]), float(
        ex.loc["Example 1, model 2", "prec at recall 1 (Alg. 3)"])
    rows.append({"check": "Example 1: endpoint precision by Algorithm 3 (end tie takes the minimum FPR)",
                 "where": "§5.2.2, Example 1", "expected": "2/3 and 2/5", "computed": f"{e1:.4f} and {e2:.4f}",
                 "passed": abs(e1 - 2 / 3) < 1e-12 and abs(e2 - 0.4) < 1e-12})
    s1, s2 = (float(ex.loc[c, "plain PR endpoint"]) for c in ("Example 1, model 1", "Example 1, model 2"))
    rows.append({"check": "Example 1: Saito & Rehmsmeier's endpoint is 2/5 for both models",
                 "where": "§5.2.2, Example 1", "expected": "2/5 and 2/5", "computed": f"{s1:.4f} and {s2:.4f}",
                 "passed": abs(s1 - 0.4) < 1e-12 and abs(s2 - 0.4) < 1e-12})
    start = float(ex.loc["Case 1: start tie", "prec at recall 0 (Alg. 3)"])
    rows.append({"check": "Fig. 5.7 case 1: a start tie takes the maximum FPR (precision 0 at recall 0)",
                 "where": "Fig. 5.7, Alg. 3 line 21", "expected": "0", "computed": f"{start:.4f}",
                 "passed": start == 0.0})
    end = float(ex.loc["Case 3: end tie", "prec at recall 1 (Alg. 3)"])
    rows.append({"check": "Fig. 5.7 case 3: an end tie takes the minimum FPR (4 TP, 1 FP: precision 0.8)",
                 "where": "Fig. 5.7, Alg. 3 line 23", "expected": "0.8", "computed": f"{end:.4f}",
                 "passed": abs(end - 0.8) < 1e-12})
    return rows


def pr_t_checks(runs: list[dict], key: str = "imbalanced", n_thresholds: int = 101, task: str = "") -> list[dict]:
    """PR-T identities on every trial-model of a task (derived here from thesis Algs. 1-2; the FP/FN rule is
    stated in §5.4.4): recall(0) = 1 and precision(0) = prevalence; recall non-increasing; recall-AUC = mean
    min-max-normalised positive score within ``1/(|T| − 1)``; recall(t) > precision(t) ⇔ FP(t) > FN(t); our
    average precision = scikit-learn's."""
    from sklearn.metrics import average_precision_score

    ok = {"start": True, "monotone": True, "auc": True, "fp_fn": True, "ap": True}
    worst_auc = 0.0
    for r in runs:
        y, s = np.asarray(r[key]["y_true"], bool), np.asarray(r[key]["score_c"], np.float64)
        prt = C.pr_t_curve(y, s, n_thresholds=n_thresholds)
        prev = y.mean()
        ok["start"] &= bool(prt.recall[0] == 1 and abs(prt.precision[0] - prev) < 1e-12)
        ok["monotone"] &= bool(np.all(np.diff(prt.recall) <= 1e-12))
        sn = C.min_max_normalize(s)
        err = abs(C.pr_t_auc(prt).recall - sn[y].mean())
        worst_auc = max(worst_auc, err)
        ok["auc"] &= bool(err <= 1 / (n_thresholds - 1))
        defined = prt.tp > 0  # at TP = 0 recall and precision are both 0 whatever FP and FN are
        ok["fp_fn"] &= bool(np.all(((prt.recall > prt.precision) == (prt.fp > prt.fn))[defined]))
        roc = C.roc_curve(y, s)
        tp, fpc = roc.tp[1:], roc.fp[1:]
        ap = float(np.sum(np.diff(np.r_[0.0, tp / roc.n_pos]) * (tp / (tp + fpc))))
        ok["ap"] &= bool(abs(ap - average_precision_score(y, s)) < 1e-10)
    n = len(runs)
    where = f"§5.4, {task}" if task else "§5.4"
    return [
        {"check": "PR-T: recall(0) = 1 and precision(0) = pos / (pos + neg)", "where": where,
         "expected": f"on all {n} trial-models", "computed": "holds" if ok["start"] else "fails",
         "passed": ok["start"]},
        {"check": "PR-T: recall non-increasing in t", "where": where, "expected": f"on all {n} trial-models",
         "computed": "holds" if ok["monotone"] else "fails", "passed": ok["monotone"]},
        {"check": "PR-T: recall-AUC = mean normalised positive score (within Δt)", "where": where,
         "expected": f"|error| ≤ {1 / (n_thresholds - 1):.3f}", "computed": f"max |error| {worst_auc:.2e}",
         "passed": ok["auc"]},
        {"check": "PR-T: recall(t) > precision(t) ⇔ FP(t) > FN(t)", "where": "§5.4.4, " + where,
         "expected": "at every threshold", "computed": "holds" if ok["fp_fn"] else "fails", "passed": ok["fp_fn"]},
        {"check": "average precision = scikit-learn's average_precision_score", "where": where,
         "expected": "|Δ| < 1e-10", "computed": "holds" if ok["ap"] else "fails", "passed": ok["ap"]},
    ]


# --------------------------------------------------------------------------------------------------
# the chapter: every computation, once

#: The columns of the table of precision at the matched recall and the PR-T areas before and after the prior
#: correction (section "A better model or a shifted one?").
MATCHED_COLUMNS = ("precision at matched recall", "precision-AUC (PR-T)", "precision-AUC (prior-corrected)",
                   "recall-AUC (PR-T)", "recall-AUC (prior-corrected)")
#: The columns of the Fig. 5.5 table (E2.a, E2.b, E2.c on the balanced test set).
FIG55_COLUMNS = ("ROC-AUC", "PR-AUC (Alg. 4-5)", "precision-AUC (PR-T)", "recall-AUC (PR-T)")


@dataclass
class Fig55Results:
    """Fig. 5.5: E2.a, E2.b (the En runs) and E2.c (the Ep runs) on the balanced test set of the histology task.

    ``trials``: the per-trial table (:func:`trial_table` with :data:`FIG55_NAMES`); ``summary``: its mean curves per
    model (for the figure); ``quality_band``: :func:`quality_band` of ``trials``; ``areas``: the mean and the
    standard deviation over trial-models of :data:`FIG55_COLUMNS` per model (:func:`mean_and_std`)."""

    trials: pd.DataFrame
    summary: dict
    quality_band: dict
    areas: tuple[pd.DataFrame, pd.DataFrame]


@dataclass
class TaskResults:
    """One task of the chapter (a role of :data:`TASK_ROLES`), everything the page shows and the claims read of it.

    ``name``, ``basis`` (``"phantom"`` or ``"real"``), ``substitution`` (what stands in for the thesis's data and
    model, in words) and ``note`` (with real data: what stood in for the CAMELYON16 test patches and why; else
    empty) describe the task; ``runs`` are its trial-models as :func:`run_grids` returned them. On the imbalanced
    test set, En and Ep: ``trials`` (:func:`trial_table`), ``summary`` (mean curves per model), ``matched_recall``
    (r*), ``error_counts`` (:func:`error_counts_by_threshold`, ``hist_bins`` thresholds) and their
    ``ordering_share``, ``quality_band``, ``score_histograms`` (Fig. 5.1), ``first_trial_pr`` (the Algorithm-3 PR
    points of each model's first trial-model, Fig. 5.2), ``pr_auc_by_model`` (mean PR-AUC of Algorithms 4-5, Fig.
    5.4), ``prior_corrected_curves`` (mean PR-T curves after :func:`prior_corrected`), ``matched_areas``
    (:func:`mean_and_std` of :data:`MATCHED_COLUMNS`), ``separability`` (:func:`separability`), ``random_rankings``
    (:func:`grid_control` on a test set of this size: the control of the grid check) and ``checks`` (the PR-T
    identities, :func:`pr_t_checks`). ``fig55``: E2.a/E2.b/E2.c on the balanced test set, or ``None`` where the task
    has no E2.a runs or no balanced test set."""

    name: str
    basis: str
    substitution: str
    note: str
    runs: list[dict]
    trials: pd.DataFrame
    summary: dict
    matched_recall: float
    error_counts: pd.DataFrame
    ordering_share: float
    quality_band: dict
    score_histograms: pd.DataFrame
    first_trial_pr: dict[str, tuple[np.ndarray, np.ndarray]]
    pr_auc_by_model: dict[str, float]
    prior_corrected_curves: dict[str, dict]
    matched_areas: tuple[pd.DataFrame, pd.DataFrame]
    separability: pd.DataFrame
    random_rankings: pd.DataFrame
    checks: list[dict]
    fig55: Fig55Results | None = None


@dataclass
class Results:
    """Everything Chapter 5 computes for one parameter set (:func:`run`).

    ``table_5_1`` / ``table_5_2``: the thesis's confusion-matrix example and its differences, recomputed
    (:func:`table_5_1`, :func:`table_5_2`); ``tie_cases``: Example 1 and Fig. 5.7 through Algorithms 3-5
    (:func:`tie_cases`) and ``example1_curves`` the curves of Example 1's two rankings (:func:`tie_case_curves`);
    ``table_checks``: the checks of Tables 5.1-5.2 and the tie cases (:func:`table_checks`); ``tasks``: the two
    tasks by role (histology, then cifar), each a :class:`TaskResults`; ``overview``: one row per task (test set,
    trial-models, the ROC-AUC band reached, :func:`task_overview`); ``errors_at_threshold``: mean FP and FN at the
    representative threshold per task and model (:func:`mean_errors_at_threshold`)."""

    table_5_1: pd.DataFrame
    table_5_2: pd.DataFrame
    tie_cases: pd.DataFrame
    example1_curves: dict[str, dict]
    table_checks: list[dict]
    tasks: dict[str, TaskResults]
    overview: pd.DataFrame
    errors_at_threshold: pd.DataFrame


def mean_and_std(trials: pd.DataFrame, columns, by: tuple[str, ...] = ("model",)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The mean and the standard deviation (ddof = 1) over trial-models of ``columns``, per group of ``by``."""
    g = trials.groupby(list(by))[list(columns)]
    return g.mean(), g.std()


def _fig55(runs: list[dict], P: Params) -> Fig55Results | None:
    """Fig. 5.5's models on the balanced test set, or ``None`` where E2.a or the balanced test set is absent."""
    if not (any(r["distribution"] == "E2.a" for r in runs) and all("balanced" in r for r in runs)):
        return None
    bal, extra = trial_table(runs, "balanced", n_thresholds=P.n_thresholds, n_recall_points=P.n_recall_points,
                             names=FIG55_NAMES)
    return Fig55Results(trials=bal, summary=extra["summary"], quality_band=quality_band(bal),
                        areas=mean_and_std(bal, FIG55_COLUMNS))


def summarise_task(task: dict, P: Params) -> TaskResults:
    """Everything the chapter reads from one task of :func:`run_grids`: the per-trial table of En and Ep on the
    imbalanced test set, the matched recall, the error counts by threshold and the Fig. 5.1 ordering share, the
    quality band, the figures' curves and histograms, the separability table, the random rankings of the grid
    check and the PR-T identities; for the histology task also Fig. 5.5 on the balanced test set."""
    runs = task["runs"]
    en_ep = [r for r in runs if r["distribution"] in ("En", "Ep")]
    trials, extra = trial_table(en_ep, "imbalanced", n_thresholds=P.n_thresholds, n_recall_points=P.n_recall_points)
    counts = error_counts_by_threshold(en_ep, "imbalanced", n_thresholds=P.hist_bins)
    summary = extra["summary"]
    return TaskResults(
        name=task["name"], basis=task["basis"], substitution=task.get("substitution", ""),
        note=task.get("note", ""), runs=runs, trials=trials, summary=summary,
        matched_recall=extra["matched_recall"], error_counts=counts, ordering_share=ordering_share(counts),
        quality_band=quality_band(trials), score_histograms=score_histograms(en_ep, bins=P.hist_bins),
        first_trial_pr={m: algorithm3_pr_points(summary[m]["runs"][0]["roc"], P.n_recall_points)
                        for m in ("En", "Ep")},
        pr_auc_by_model={m: float(trials.loc[trials.model == m, "PR-AUC (Alg. 4-5)"].mean()) for m in ("En", "Ep")},
        prior_corrected_curves=prior_corrected_curves(en_ep, n_thresholds=P.n_thresholds),
        matched_areas=mean_and_std(trials, MATCHED_COLUMNS), separability=separability(trials),
        random_rankings=grid_control(int(trials["test positives"].iloc[0]), int(trials["test negatives"].iloc[0])),
        checks=pr_t_checks(en_ep, n_thresholds=P.n_thresholds, task=task["name"]), fig55=_fig55(runs, P))


def task_overview(tasks: dict[str, TaskResults]) -> pd.DataFrame:
    """One row per task: its test-set size and positives, the trial-models per model, each model's mean ROC-AUC,
    the ROC-AUC range over trial-models and whether every model's mean lies in :data:`QUALITY_BAND`."""
    rows = []
    for t in tasks.values():
        q = t.quality_band
        rows.append({"task": t.name, "basis": t.basis,
                     "test examples": int(t.trials["test positives"].iloc[0] + t.trials["test negatives"].iloc[0]),
                     "positives": int(t.trials["test positives"].iloc[0]),
                     "trial-models per model": int(t.trials.groupby("model").size().min()),
                     "mean ROC-AUC by model": ", ".join(f"{m} {v:.3f}" for m, v in q["means"].items()),
                     "ROC-AUC range": f"{q['min']:.3f}–{q['max']:.3f}", "means in band": q["in_band"]})
    return pd.DataFrame(rows)


def mean_errors_at_threshold(tasks: dict[str, TaskResults]) -> pd.DataFrame:
    """Mean FP and FN at :data:`REPRESENTATIVE_THRESHOLD` over the trial-models, per task and model (columns
    ``model``, ``FP at t``, ``FN at t``, ``task``)."""
    return pd.concat([t.trials.groupby("model")[["FP at t", "FN at t"]].mean().assign(task=t.name)
                      for t in tasks.values()]).reset_index()


def run(P: Params, cache_dir=None) -> Results:
    """Every computation of Chapter 5 for the parameters ``P``: Tables 5.1-5.2, the tie cases and their checks,
    and the two tasks' grids of trial-models (:func:`run_grids`, cached in sub-folders of ``cache_dir``; ``None``:
    no cache), each summarised by :func:`summarise_task`."""
    t51 = table_5_1()
    t52 = table_5_2(t51)
    ties = tie_cases(P.n_recall_points)
    tasks = {role: summarise_task(task, P) for role, task in run_grids(P, cache_dir=cache_dir).items()}
    return Results(table_5_1=t51, table_5_2=t52, tie_cases=ties,
                   example1_curves={name: tie_case_curves(name, P.n_recall_points)
                                    for name in ("Example 1, model 1", "Example 1, model 2")},
                   table_checks=table_checks(t52, ties), tasks=tasks, overview=task_overview(tasks),
                   errors_at_threshold=mean_errors_at_threshold(tasks))
