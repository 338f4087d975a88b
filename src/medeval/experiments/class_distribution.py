"""Chapter 4: the training class-distribution study (Reshma 2021, thesis Chapter 4) on slide phantoms.

Experiments (each a grid of runs through :func:`medeval.runtime.grid.run_grid`):

* ``preliminary``: the five Table 4.3 distributions, U-Net, method-1 evaluation (Table 4.4 analogue and the
  evaluation-patch-size sweep of Fig. 4.3);
* ``hypotheses``: E1.a-E4.c (Tables 4.5-4.8), U-Net, method-2 patch scores -> mean ROC / PR / precision / FPR
  curves, AUCs and t-tests on argmax precision (Figs 4.6-4.12; H1-H4);
* ``classification``: E2.a/b/c on a PCam-like binary patch task, evaluated on a balanced test set and on a large
  1:12 imbalanced one (Figs 4.13-4.14).

``data_source="real"`` (profile ``full``) trains the classifier on the PCam HDF5 training split and scores the PCam
test split (balanced) and, as the large imbalanced test set, every test patch of the CAMELYON16 test slides
(:mod:`medeval.data.camelyon16`: Otsu at level 2, 96 px patches, stride 32, 32 px central region; all runs scored
in one streaming pass). ``cls_imbalanced_test`` decides what happens when that test set is incomplete: refused
before any compute, naming the missing slides and files (``camelyon16``, the default), or a 1:``imbalance``
subsample of the PCam test split stands in, as asked (``pcam_subsample``) or as allowed (``auto``), and the page
says what stood in and why (:func:`~medeval.experiments.class_distribution_params.imbalanced_test_choice`).

The schema (:class:`~medeval.experiments.class_distribution_params.Params`), its rules across fields and its
resource estimate live in the light module :mod:`medeval.experiments.class_distribution_params`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from medeval.data import training_sets as ts
from medeval.data.training_sets import (  # noqa: F401 - re-exported: categories and distributions
    CATEGORIES,
    HYPOTHESIS_DISTRIBUTIONS,
    PRELIMINARY_DISTRIBUTIONS,
)
from medeval.experiments import histology as H
from medeval.experiments.class_distribution_params import (  # noqa: F401 - re-exported
    HYPOTHESIS_NAMES,
    PHANTOM_DEFAULTS,
    PRELIMINARY_NAMES,
    HistologyParams,
    Params,
    camelyon16_problems,
    imbalanced_test_choice,
)
from medeval.metrics import curves as C
from medeval.models.device import limit_cpu_threads

if HYPOTHESIS_NAMES != tuple(ts.HYPOTHESIS_DISTRIBUTIONS) or PRELIMINARY_NAMES != tuple(
        ts.PRELIMINARY_DISTRIBUTIONS):  # the light schema module spells the names out
    raise ImportError("class_distribution_params: distribution names differ from medeval.data.training_sets")
#: Every training distribution of the chapter: Table 4.3's preliminary sets, then Tables 4.5-4.8's E1.a-E4.c.
TRAINING_DISTRIBUTIONS = {**ts.PRELIMINARY_DISTRIBUTIONS, **ts.HYPOTHESIS_DISTRIBUTIONS}


def display_name(name: str) -> str:
    """A training distribution as the chapter's figures and tables name it: the thesis's name with ¬C for notC,
    and for the hypothesis sets (E1-E4, thesis Tables 4.5-4.8) what the set favours, read from its label:
    ``"E2.b (¬C-heavy)"``, ``"E2.a (balanced)"``, ``"E1.b (natural)"``. A name the chapter does not define comes
    back with ¬C only (e.g. En, Ep of Chapter 5)."""
    dist = ts.HYPOTHESIS_DISTRIBUTIONS.get(name)
    if dist is None:
        return name.replace("notC", "¬C")
    head = dist.label.split(",")[0].split(" (")[0]
    favours = head.split(" ")[0] if head.startswith(("balanced", "natural")) else (
        head.replace("over-represented ", "") + "-heavy")
    return f"{name} ({favours})"


# --------------------------------------------------------------------------------------------------
# configurations and grids (the rules across fields live in the schema, class_distribution_params; the checks
# here protect direct callers of the run functions)


def data_config(P: Params) -> dict:
    """The data configuration of the runs. Phantom layout fields that differ from the phantom's defaults go in
    ``"slide_layout"`` (absent when all are at their defaults, so earlier configurations keep their cache keys).
    Chapter 5 passes its own parameters (no ``depth``, no layout fields: the phantom's defaults)."""
    if P.slide_size % (P.patch_size // 2):
        raise ValueError(f"slide_size ({P.slide_size}) must be a multiple of patch_size / 2 ({P.patch_size // 2})")
    depth = getattr(P, "depth", None)  # Chapter 5 has no U-Net
    if depth is not None and P.patch_size % 2**depth:
        raise ValueError(f"patch_size ({P.patch_size}) must be divisible by 2**depth ({2**depth})")
    out = {"n_train_slides": P.n_train_slides, "n_test_slides": P.n_test_slides, "slide_size": P.slide_size,
           "patch_size": P.patch_size, "seed": P.seed}
    layout = {k: float(getattr(P, k)) for k, v in PHANTOM_DEFAULTS.items()
              if getattr(P, k, v) is not None and float(getattr(P, k, v)) != v}
    if layout:
        out["slide_layout"] = layout
    return out


def model_config(P: Params) -> dict:
    """The U-Net's configuration. ``recalibrate_bn``: after training, the BatchNorm running statistics are
    re-estimated from the training patches (:func:`medeval.models.training.recalibrate_batch_norm`). With the
    few optimiser steps a CPU profile affords (Balanced_S: 3 batches × 8 epochs), PyTorch's running variance
    still holds about 0.9^24 ≈ 8 % of its initial 1, so evaluation normalises with the wrong scale and the argmax
    of a well-ranking model (patch ROC-AUC 0.98) can predict one class everywhere (when the recalibration was
    introduced, 8 of the 15 default-profile Table 4.4 runs of 8 epochs did). No weight changes and no class is
    reweighted, so the training distribution still shapes the decisions; the rows of chapter 4 name every run
    that still never predicts a class."""
    return {"base_channels": P.base_channels, "depth": P.depth, "epochs": P.epochs, "batch_size": P.batch_size,
            "lr": P.lr, "recalibrate_bn": True}


def cls_config(P: Params) -> dict:
    if (P.patch_size - P.cls_central_size) % 2 or P.cls_central_size > P.patch_size:
        raise ValueError("cls_central_size must be <= patch_size with an even difference (a centred region)")
    return {"central_size": P.cls_central_size, "test_stride": P.cls_test_stride,
            "extra_test_slides": P.cls_extra_test_slides, "imbalance": P.imbalance,
            "base_channels": P.cls_base_channels, "n_blocks": P.cls_n_blocks, "epochs": P.cls_epochs,
            "batch_size": P.batch_size, "lr": P.lr, "unit_cap": P.cls_unit_cap}


def preliminary_grid(P: Params) -> list[dict]:
    return [
        {"distribution": d, "run": r, "data": data_config(P), "model": model_config(P), "tile_sizes": P.tile_sizes,
         "preliminary_fraction": P.preliminary_fraction, "device": P.device}
        for d in PRELIMINARY_NAMES for r in range(P.n_preliminary_runs)
    ]


def hypothesis_grid(P: Params, heatmaps=("E3.a", "E3.b", "E3.c")) -> list[dict]:
    return [
        {"distribution": d, "run": r, "data": data_config(P), "model": model_config(P),
         "tile_sizes": [P.evaluation_tile], "unit_cap": P.unit_cap, "device": P.device,
         "keep_heatmap": bool(r == 0 and d in heatmaps)}
        for d in P.hypothesis_experiments for r in range(P.n_runs)
    ]


def ensemble_grid(grid: list[dict], size: int) -> list[dict]:
    """Segmentation grid entries regrouped for :func:`medeval.experiments.histology.segmentation_runs`: the runs of
    each distribution in chunks of ``size`` (in run order), one entry per chunk with ``runs`` and
    ``keep_heatmap_runs``. ``size`` 1 returns ``grid`` unchanged (one run per entry, as before ensembles)."""
    if size <= 1:
        return grid
    chunks: dict[str, list[dict]] = {}
    for g in grid:
        chunks.setdefault(g["distribution"], []).append(g)
    out = []
    for entries in chunks.values():
        entries = sorted(entries, key=lambda g: g["run"])
        for start in range(0, len(entries), size):
            part = entries[start:start + size]
            common = {k: v for k, v in part[0].items() if k not in ("run", "keep_heatmap")}
            entry = {**common, "runs": [g["run"] for g in part]}
            if any("keep_heatmap" in g for g in part):
                entry["keep_heatmap_runs"] = [g["run"] for g in part if g.get("keep_heatmap")]
            out.append(entry)
    return out


def classification_grid(P: Params) -> list[dict]:
    return [
        {"distribution": d, "run": r, "data": data_config(P), "cls": cls_config(P), "device": P.device}
        for d in ("E2.a", "E2.b", "E2.c") for r in range(P.cls_runs)
    ]


# --------------------------------------------------------------------------------------------------
# the whole study: one grid, one process pool


def study_task(*, task: str, **kwargs) -> dict:
    """One run of the study: ``task`` = ``segmentation`` (:func:`~medeval.experiments.histology.segmentation_run`),
    ``segmentation_ensemble`` (several runs of one distribution trained together,
    :func:`~medeval.experiments.histology.segmentation_runs`, which returns a list), ``classification``
    (``classification_ensemble``: :func:`~medeval.experiments.histology.classification_runs`) (:func:`~medeval.experiments.histology.classification_run`) or ``classification_pcam``
    (:func:`pcam_classification_run`)."""
    fn = {"segmentation": H.segmentation_run, "segmentation_ensemble": H.segmentation_runs,
          "classification": H.classification_run, "classification_ensemble": H.classification_runs,
          "classification_pcam": pcam_classification_run}.get(task)
    if fn is None:
        raise ValueError("task must be segmentation, segmentation_ensemble, classification, classification_ensemble "
                         f"or classification_pcam, got {task!r}")
    return fn(**kwargs)


def study_grid(P: Params) -> list[dict]:
    """Every run of the chapter (Table 4.3 sets, E1.a-E4.c, the E2 classifiers) as one grid of :func:`study_task`
    calls, each tagged with its ``study``; the largest training sets come first so that two workers finish
    together."""
    together = P.ensemble_size > 1
    cls_task = ("classification_pcam" if P.data_source == "real"
                else "classification_ensemble" if together else "classification")
    seg_task = "segmentation_ensemble" if together else "segmentation"
    cls_grid = classification_grid(P) if cls_task != "classification_ensemble" else ensemble_grid(
        classification_grid(P), P.ensemble_size)
    grid = ([{"study": "preliminary", "task": seg_task, **g}
             for g in ensemble_grid(preliminary_grid(P), P.ensemble_size)]
            + [{"study": "hypotheses", "task": seg_task, **g}
               for g in ensemble_grid(hypothesis_grid(P), P.ensemble_size)]
            + [{"study": "classification", "task": cls_task, **g} for g in cls_grid])
    _, _, cats = H.training_patches(data_config(P))
    counts = ts.category_counts(cats)
    unit = min(ts.unit_size(counts), P.unit_cap) if P.unit_cap else ts.unit_size(counts)

    def cost(g):
        if g["study"] == "classification":
            # measured: a classifier run costs about as much as an E2 U-Net run
            return 4 * unit * len(g.get("runs", [None]))
        dist = {**ts.PRELIMINARY_DISTRIBUTIONS, **ts.HYPOTHESIS_DISTRIBUTIONS}[g["distribution"]]
        members = len(g.get("runs", [None]))
        if dist.uses_unit:
            return members * dist.total_units * unit
        return members * P.preliminary_fraction * sum(counts.get(k, 0) for k in dist.weights)

    return sorted(grid, key=cost, reverse=True)


def warm_up(P: Params) -> None:
    """Build the slides, the patch tables and torch's optimiser machinery in this process before a local process
    pool forks, so that every worker inherits them instead of rebuilding them (seconds per worker)."""
    from medeval.models.training import load_optimizer_machinery

    data = data_config(P)
    H.train_test_slides(data)
    H.training_patches(data)
    if P.data_source == "phantom":
        H.classification_test_sets(data, cls_config(P))
    load_optimizer_machinery()


def run_study(P: Params, cache_dir=None, camelyon16_cache_dir=None) -> dict:
    """Run the whole chapter's grid (:func:`study_grid`) through :func:`medeval.runtime.grid.run_grid` and attach
    the large imbalanced test set to the classifiers (:func:`with_imbalanced_test`).

    Returns ``{"preliminary", "hypotheses", "classification"}`` (the run dicts, in grid order within each study)
    and ``imbalanced_source``, ``imbalanced_note`` (what stood in for the CAMELYON16 test patches and why; empty
    when nothing did), ``c16_table``, ``c16_summary``.
    """
    from medeval.runtime.grid import run_grid

    grid = study_grid(P)
    warm_up(P)
    tasks = [{k: v for k, v in g.items() if k != "study"} for g in grid]
    results = run_grid(study_task, tasks, cache_dir=cache_dir, scheduler=P.scheduler, max_workers=P.max_workers,
                       desc="Chapter 4 runs")
    out = {name: [] for name in ("preliminary", "hypotheses", "classification")}
    for g, r in zip(grid, results, strict=True):  # an ensemble entry returns one result per run
        out[g["study"]].extend(r if g["task"].endswith("_ensemble") else [r])
    order = {"preliminary": PRELIMINARY_NAMES, "hypotheses": HYPOTHESIS_NAMES, "classification": ("E2.a", "E2.b", "E2.c")}
    for name, names in order.items():
        out[name].sort(key=lambda r, names=names: (names.index(r["distribution"]), r["run"]))
    imb = with_imbalanced_test(out["classification"], P, cache_dir=camelyon16_cache_dir)
    out.update(classification=imb.runs, imbalanced_source=imb.source, imbalanced_note=imb.note, c16_table=imb.table,
               c16_summary=imb.summary)
    return out


# --------------------------------------------------------------------------------------------------
# tables


def patch_category_table(P: Params) -> pd.DataFrame:
    """Table 4.2 analogue: training patches per category, with U (uncapped and as used)."""
    _, _, cats = H.training_patches(data_config(P))
    counts = ts.category_counts(cats)
    unit = ts.unit_size(counts)
    df = pd.DataFrame({"category": list(counts), "patches": list(counts.values())})
    df.attrs.update(unit=unit, unit_used=min(unit, P.unit_cap) if P.unit_cap else unit, total=int(sum(counts.values())))
    return df


def distribution_proportions(categories: pd.DataFrame) -> pd.DataFrame:
    """Every training distribution of the chapter (:data:`TRAINING_DISTRIBUTIONS`) applied to this run's
    patch counts ``categories`` (:func:`patch_category_table`): ``w_k U`` patches of category ``k`` with
    ``U = categories.attrs["unit_used"]`` (Eq. cd-ratio), or every available patch of the categories a
    Table 4.3 set takes whole (Eq. cd-prelim). One row per distribution: its thesis table, its ``size`` and
    the class proportions ``π <category>`` (one column per :data:`CATEGORIES`, summing to 1)."""
    available = categories.set_index("category")["patches"].to_dict()
    unit = categories.attrs["unit_used"]
    rows = []
    for name, dist in TRAINING_DISTRIBUTIONS.items():
        n = ts.distribution_counts(dist, unit=unit if dist.uses_unit else None, available=available)
        total = sum(n.values())
        rows.append({"distribution": name, "thesis table": dist.table, "size": total,
                     **{f"π {k}": n.get(k, 0) / total for k in ts.CATEGORIES}})
    return pd.DataFrame(rows)


def distribution_table(results: list[dict]) -> pd.DataFrame:
    """Tables 4.3 and 4.5-4.8 analogue: the composition actually drawn (run 0 of each distribution)."""
    rows = []
    for r in results:
        if r["run"] != 0:
            continue
        dist = TRAINING_DISTRIBUTIONS[r["distribution"]]
        rows.append({"distribution": r["distribution"], "table": dist.table, "ratio / set": dist.label,
                     "U": r["unit"], **{k: r["taken"].get(k, 0) for k in ts.CATEGORIES},
                     "total": sum(r["taken"].values()), "shortfall": "; ".join(r["shortfalls"]) or "none"})
    return pd.DataFrame(rows)


def f_measure_of(m: dict) -> float:
    """The method-1 F-measure of one run and class, with F = 0 when the recall is 0 on every slide: then TP = 0
    and FN > 0 on every slide, so F = 2TP / (2TP + FP + FN) = 0 even where no pixel of the class is predicted and
    the precision is undefined (the per-slide mean would otherwise skip those slides and report NaN)."""
    f = m["f_measure"]
    if (f is None or not np.isfinite(f)) and m["recall"] == 0:
        return 0.0
    return f


def table_4_4(results: list[dict], tile: int) -> pd.DataFrame:
    """Recall / precision / F per class (method 1, tile ``e``), mean over runs of the per-image means (F = 0 where
    the class is never found, :func:`f_measure_of`)."""
    rows = []
    for r in results:
        for cls, m in r["method1"][tile].items():
            rows.append({"distribution": r["distribution"], "class": cls, "run": r["run"], "R": m["recall"],
                         "P": m["precision"], "F": f_measure_of(m),
                         "undefined images (R)": m["n_undefined_recall"]})
    df = pd.DataFrame(rows)
    return df.groupby(["distribution", "class"], sort=False).mean(numeric_only=True).drop(columns="run").reset_index()


def table_4_4_paper() -> pd.DataFrame:
    """Thesis Table 4.4 as printed, one row per distribution and class (R, P, F)."""
    from medeval.experiments.class_distribution_claims import PAPER_TABLE_4_4

    return pd.DataFrame([
        {"distribution": d, "class": c, "R": v[0], "P": v[1], "F": v[2]}
        for d, per in PAPER_TABLE_4_4.items() for c, v in per.items()
    ])


def patch_size_sweep(results: list[dict]) -> pd.DataFrame:
    """Method-1 recall and precision per evaluation tile size e (Fig. 4.3), mean over runs."""
    rows = [
        {"distribution": r["distribution"], "e": int(e), "class": cls, "recall": m["recall"],
         "precision": m["precision"]}
        for r in results for e, per in r["method1"].items() for cls, m in per.items()
    ]
    return pd.DataFrame(rows).groupby(["distribution", "class", "e"], sort=False).mean().reset_index()


# --------------------------------------------------------------------------------------------------
# curves, AUCs and t-tests


def run_metrics(y_true, score, argmax_positive, n_thresholds: int = 101) -> dict:
    """Single-run summary: ROC-AUC, PR-AUC (Algorithms 4-5), PR-T / precision / FPR AUCs, argmax precision."""
    roc = C.roc_curve(y_true, score)
    prt = C.pr_t_curve(y_true, score, n_thresholds=n_thresholds)
    auc = C.pr_t_auc(prt)
    return {
        "roc": roc, "prt": prt,
        "roc_auc": C.roc_auc(y_true, score),
        "pr_auc": C.pr_auc_roc_interpolated(roc),
        "precision_auc": auc.precision, "recall_auc": auc.recall, "fpr_auc": auc.fpr,
        "argmax_precision": H.argmax_precision(y_true, argmax_positive),
        "argmax_recall": float(np.mean(np.asarray(argmax_positive)[np.asarray(y_true, bool)])),
        "argmax_fpr": float(np.mean(np.asarray(argmax_positive)[~np.asarray(y_true, bool)])),
    }


def summarise_runs(results: list[dict], key: str | None = None, n_thresholds: int = 101) -> dict[str, dict]:
    """Per distribution: per-run metrics and the mean curves (ROC vertical average, PR Algorithm 3,
    threshold-wise precision/recall/FPR)."""
    by_dist: dict[str, list[dict]] = {}
    for r in results:
        src = r[key] if key else r
        by_dist.setdefault(r["distribution"], []).append(
            run_metrics(src["y_true"], src["score_c"], src["argmax_c"], n_thresholds))
    out = {}
    for d, runs in by_dist.items():
        rocs = [m["roc"] for m in runs]
        out[d] = {
            "runs": runs,
            "mean_roc": C.mean_roc_curve(rocs, n_points=101),
            "mean_pr": C.mean_pr_curve(rocs),
            "mean_prt": C.mean_prt_curves([m["prt"] for m in runs]),
        }
    return out


RUN_METRICS = ("roc_auc", "pr_auc", "precision_auc", "recall_auc", "fpr_auc", "argmax_precision", "argmax_recall",
               "argmax_fpr")


def run_table(summary: dict[str, dict], **columns) -> pd.DataFrame:
    """One row per run of :func:`summarise_runs`'s output: distribution, run (order within the distribution) and
    the :data:`RUN_METRICS`; ``columns`` are added as constant columns (e.g. ``test_set="balanced"``)."""
    rows = [{"distribution": d, "run": k, **{m: float(r[m]) for m in RUN_METRICS}, **columns}
            for d, s in summary.items() for k, r in enumerate(s["runs"])]
    return pd.DataFrame(rows, columns=["distribution", "run", *RUN_METRICS, *columns])


def preliminary_run_table(results: list[dict]) -> pd.DataFrame:
    """Method-1 recall / precision / F per run, evaluation tile e and class, with each run's quality figure
    ``roc_auc`` (patch ROC-AUC of its method-2 C scores): the input of the Table 4.4 and Fig. 4.3 rules.

    ``fp_in_true_tiles``: the share of the run's pixel-level false positives of the class that lie inside a truly
    positive tile of side e (:func:`~medeval.metrics.segmentation.false_positives_in_true_tiles`, pooled over the
    test slides); NaN where the run has no false-positive pixel of the class or did not record them."""
    rows = []
    for r in results:
        roc = C.roc_curve(r["y_true"], r["score_c"])
        q = float(C.trapezoid_auc(roc.fpr, roc.tpr))
        for e, per in r["method1"].items():
            for cls, m in per.items():
                n_fp = m.get("fp_pixels", 0)
                rows.append({"distribution": r["distribution"], "run": r["run"], "e": int(e), "class": cls,
                             "R": m["recall"], "P": m["precision"], "F": f_measure_of(m), "roc_auc": q,
                             "fp_in_true_tiles": m["fp_in_true_tiles"] / n_fp if n_fp else float("nan")})
    return pd.DataFrame(rows)


def auc_table(summary: dict[str, dict]) -> pd.DataFrame:
    rows = []
    for d, s in summary.items():
        row = {"distribution": d, "runs": len(s["runs"])}
        for k in RUN_METRICS:
            v = np.array([m[k] for m in s["runs"]], dtype=float)
            row[k] = float(np.nanmean(v))
            row[k + "_std"] = float(np.nanstd(v))
        rows.append(row)
    return pd.DataFrame(rows)


def quality_band(tables: dict, floor: float) -> dict:
    """The quality of the models, per study: the range over distributions of the mean patch ROC-AUC and mean argmax
    precision, and how many runs trained (ROC-AUC above ``floor``)."""
    out = {}
    frames = {"preliminary": tables["prelim"].drop_duplicates(["distribution", "run"]), "hypotheses": tables["hyp"],
              **{f"classification ({k})": g for k, g in tables["cls"].groupby("test_set")}}
    for name, df in frames.items():
        if df.empty:
            continue
        means = df.groupby("distribution").mean(numeric_only=True)
        row = {"roc_auc": [float(means["roc_auc"].min()), float(means["roc_auc"].max())],
               "runs_trained": int((df["roc_auc"] > floor).sum()), "runs": int(len(df))}
        if "argmax_precision" in means:
            row["argmax_precision"] = [float(means["argmax_precision"].min()), float(means["argmax_precision"].max())]
        out[name] = row
    return out


def quality_band_text(band: dict, floor: float) -> str:
    """One Markdown line per study from :func:`quality_band`."""
    lines = []
    for name, q in band.items():
        text = f"* **{name}**: mean patch ROC-AUC per distribution {q['roc_auc'][0]:.3f}–{q['roc_auc'][1]:.3f}"
        if "argmax_precision" in q:
            text += f", mean argmax precision {q['argmax_precision'][0]:.3f}–{q['argmax_precision'][1]:.3f}"
        lines.append(text + f"; {q['runs_trained']} of {q['runs']} runs above the floor (ROC-AUC > {floor}).")
    return "\n".join(lines)


def imbalanced_label(runs: list[dict], source: str) -> str:
    """'1:12.0 test set (phantom patches)': the large imbalanced test set of the classification runs."""
    y = np.asarray(runs[0]["imbalanced"]["y_true"], dtype=bool)
    ratio = float((~y).sum() / max(int(y.sum()), 1))
    what = {"phantom": "phantom test-slide patches", "pcam_subsample": "pcam_subsample: a subsample of the PCam test "
            "split", "camelyon16": "camelyon16: the CAMELYON16 test patches"}.get(source, source)
    return f"1:{ratio:.1f} test set ({what})"


def study_tables(study: dict, P: Params) -> dict:
    """The per-run tables of a :func:`run_study` result: ``prelim`` (method 1 per run, e and class),
    ``hyp`` and ``cls`` (:func:`run_table`), and the summaries behind the curves (``hyp_summary``,
    ``cls_summary`` per test set)."""
    hyp_summary = summarise_runs(study["hypotheses"], n_thresholds=P.n_thresholds)
    cls_summary = {k: summarise_runs(study["classification"], key=k, n_thresholds=P.n_thresholds)
                   for k in ("balanced", "imbalanced")}
    return {
        "prelim": preliminary_run_table(study["preliminary"]),
        "hyp": run_table(hyp_summary),
        "cls": pd.concat([run_table(s, test_set=k) for k, s in cls_summary.items()], ignore_index=True),
        "hyp_summary": hyp_summary, "cls_summary": cls_summary,
    }


# --------------------------------------------------------------------------------------------------
# real data (profile full): PCam for training, PCam test and CAMELYON16 test patches for evaluation


def imbalanced_test_source(P) -> str:
    """Which large imbalanced test set the classification study uses: ``phantom`` (the phantom test slides at
    1:``imbalance``), ``camelyon16`` (every test patch of the CAMELYON16 test slides, the thesis's set) or
    ``pcam_subsample`` (a 1:``imbalance`` subsample of the PCam test split); see
    :func:`~medeval.experiments.class_distribution_params.imbalanced_test_choice`, which also says why."""
    return imbalanced_test_choice(P)[0]


def camelyon16_geometry(P):
    """The PCam patch procedure with this chapter's sizes: level ``c16_level``, ``patch_size``, stride
    ``cls_test_stride``, central region ``cls_central_size`` (full profile: 2, 96, 32, 32 as in the thesis)."""
    from medeval.data.camelyon16 import PatchGeometry

    return PatchGeometry(level=P.c16_level, patch_size=P.patch_size, stride=P.cls_test_stride,
                         central_size=P.cls_central_size, min_tissue_fraction=P.c16_min_tissue_fraction,
                         tissue_channel=P.c16_tissue_channel)


def camelyon16_most_tumour_slide_maps(table: pd.DataFrame, summary: pd.DataFrame, scores, P) -> dict:
    """Thesis Fig. 3.4 for classification, on the CAMELYON16 test slide with the most tumour patches:
    ``slide`` (its name) and two maps on its patch grid at stride ``cls_test_stride``
    (:func:`medeval.data.camelyon16.patch_score_map`, NaN = background): ``truth``, the central-region
    labels, and ``score``, the patch ``scores`` (one per row of ``table``, e.g. a run's P(C)). ``table`` and
    ``summary`` are the CAMELYON16 patch table and per-slide summary of :func:`with_imbalanced_test`."""
    from medeval.data.camelyon16 import patch_score_map

    best = summary.sort_values("positives").iloc[-1]
    on_slide = (table["slide"] == best.slide).to_numpy()
    stride = camelyon16_geometry(P).stride

    def grid(values):
        return patch_score_map(table["x"][on_slide], table["y"][on_slide], values, best.level_size, stride)

    return {"slide": best.slide, "truth": grid(table["label"].to_numpy()[on_slide]),
            "score": grid(np.asarray(scores)[on_slide])}


def _state_to_numpy(net) -> dict:
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def rebuild_patch_classifier(run: dict):
    """The trained :class:`medeval.models.unet.PatchClassifier` of a classification run (from its saved state)."""
    import torch

    from medeval.models.unet import PatchClassifier

    if "model_state" not in run:
        raise KeyError(f"run {run.get('distribution')}/{run.get('run')} has no saved model_state")
    net = PatchClassifier(**run["model_config"])
    net.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in run["model_state"].items()})
    return net


def pcam_classification_run(*, distribution: str, run: int, data: dict, cls: dict, device: str = "cpu") -> dict:
    """One classifier trained on the real PCam training split with a binary distribution (E2.a/b/c, En, Ep;
    U = floor(#positives / 3) = 43,690 as in the thesis), scored on the PCam test split (balanced 1:1) and on a
    1:``imbalance`` subsample of it (every negative, a fixed subset of positives). The trained weights are
    returned (``model_state``) so that :func:`attach_camelyon16` can score the CAMELYON16 test patches of all runs
    in one pass. Raises the data layer's ``DatasetUnavailableError`` naming ``pcam`` when the files are absent.
    """
    import torch

    from medeval.data.manifest import require
    from medeval.data.readers import PCamH5
    from medeval.models.training import predict, train_model
    from medeval.models.unet import PatchClassifier, classification_loss

    dist = ts.BINARY_DISTRIBUTIONS.get(distribution)
    if dist is None:
        raise ValueError(f"distribution must be one of {list(ts.BINARY_DISTRIBUTIONS)}, got {distribution!r}")
    root = require("pcam")
    limit_cpu_threads(device)
    train = PCamH5.from_dir(root, "train")
    test = PCamH5.from_dir(root, "test")
    labels = train.labels()
    cats = np.where(labels == 1, "C", "notC")
    unit = ts.unit_size(ts.category_counts(cats))
    unit = min(unit, cls["unit_cap"]) if cls.get("unit_cap") else unit
    seed = int(data["seed"]) * 1_000 + 500 + int(run)
    rng = np.random.default_rng([seed, zlib.crc32(distribution.encode())])
    tset = ts.build_training_set(cats, dist, unit, seed=rng)
    idx = np.sort(tset.indices)
    x, y = train[idx]
    torch.manual_seed(seed)
    config = {"base_channels": int(cls["base_channels"]), "n_blocks": int(cls["n_blocks"])}
    net = PatchClassifier(**config)
    history = train_model(net, H.UInt8PatchDataset(x, y), classification_loss, epochs=cls["epochs"],
                          batch_size=cls["batch_size"], lr=cls["lr"], device=device, seed=seed)
    del x
    xt, yt = test[:]
    probs = predict(net, H.uint8_nchw(xt), device=device, batch_size=512, forward=H.uint8_softmax_probabilities)
    yt = yt.astype(bool)
    balanced = {"y_true": yt, "score_c": probs[:, 1].astype(np.float32), "argmax_c": probs.argmax(1) == 1}
    sub_rng = np.random.default_rng(int(data["seed"]) + 17)
    neg, pos = np.flatnonzero(~yt), np.flatnonzero(yt)
    keep = np.sort(np.r_[neg, sub_rng.choice(pos, min(pos.size, neg.size // int(cls["imbalance"])), replace=False)])
    imbalanced = {k: v[keep] for k, v in balanced.items()}
    return {"distribution": distribution, "run": int(run), "unit": unit, "taken": tset.taken,
            "train_size": int(idx.size), "loss_history": history, "balanced": balanced, "imbalanced": imbalanced,
            "imbalanced_source": "pcam_subsample", "model_config": config, "model_state": _state_to_numpy(net)}


def _scores_key(runs: list[dict], geometry, table: pd.DataFrame) -> str:
    import hashlib

    h = hashlib.sha256()
    h.update(repr(sorted(vars(geometry).items())).encode())
    h.update(pd.util.hash_pandas_object(table[["x", "y", "label"]], index=False).values.tobytes())
    h.update(np.asarray(table["slide"].astype(str)).astype("U").tobytes())
    for r in runs:
        h.update(repr(r["model_config"]).encode())
        for k in sorted(r["model_state"]):
            h.update(k.encode())
            h.update(np.ascontiguousarray(r["model_state"][k]).tobytes())
    return h.hexdigest()[:24]


def attach_camelyon16(runs: list[dict], P, cache_dir=None, batch_size: int = 512):
    """Score every run's classifier on the CAMELYON16 test patches (one streaming pass for all runs) and make
    those patches each run's ``imbalanced`` test set (``imbalanced_source = "camelyon16"``).

    Returns ``(runs, table, summary)``: new run dicts, the patch table (slide, x, y, label, tissue_fraction) and
    the per-slide summary of :func:`medeval.experiments.histology.camelyon16_test_patch_table`. With ``cache_dir`` the
    per-slide extraction and the score matrix (float32, runs x patches) are cached, the scores as a verified
    grid-cache entry (:func:`medeval.runtime.grid.cached_value`) keyed by the weights, the geometry and the table.
    """
    from pathlib import Path

    from medeval.data.camelyon16 import iter_patch_batches
    from medeval.experiments.histology import camelyon16_test_patch_table

    geometry = camelyon16_geometry(P)
    cache = Path(cache_dir) if cache_dir is not None else None
    table, summary = camelyon16_test_patch_table(
        geometry=geometry, slides=P.c16_slides, cache_dir=cache / "slides" if cache else None,
        scheduler=P.scheduler, max_workers=P.max_workers)
    if table.empty:
        raise ValueError("no CAMELYON16 test patch passed the background filter; check c16_min_tissue_fraction")

    def score_every_run():
        models = [rebuild_patch_classifier(r) for r in runs]
        batches = iter_patch_batches(table, dict(zip(summary["slide"], summary["path"], strict=True)), geometry,
                                     batch_size=batch_size)
        return H.score_patch_stream(models, batches, len(table), device=P.device)

    if cache is None:
        scores = score_every_run()
    else:
        from medeval.runtime.grid import cached_value

        scores = cached_value(score_every_run, cache_dir=cache, name="camelyon16-scores",
                              key=_scores_key(runs, geometry, table))
    y = table["label"].to_numpy(dtype=bool)
    out = []
    for k, r in enumerate(runs):
        r = dict(r)
        r["imbalanced"] = {"y_true": y, "score_c": scores[k], "argmax_c": scores[k] > 0.5}
        r["imbalanced_source"] = "camelyon16"
        out.append(r)
    return out, table, summary


class ImbalancedTest(NamedTuple):
    """The classification runs with their large imbalanced test set (:func:`with_imbalanced_test`)."""

    runs: list[dict]
    source: str  # phantom | camelyon16 | pcam_subsample
    note: str  # what stood in for the CAMELYON16 test patches and why ("" when nothing did)
    table: pd.DataFrame | None  # CAMELYON16 only: the patch table ...
    summary: pd.DataFrame | None  # ... and the per-slide summary


def with_imbalanced_test(runs: list[dict], P, cache_dir=None) -> ImbalancedTest:
    """The classification runs with the imbalanced test set that
    :func:`~medeval.experiments.class_distribution_params.imbalanced_test_choice` chooses, and why."""
    source, note = imbalanced_test_choice(P)
    if source == "camelyon16":
        runs, table, summary = attach_camelyon16(runs, P, cache_dir=cache_dir)
        return ImbalancedTest(runs, source, note, table, summary)
    return ImbalancedTest(runs, source, note, None, None)


# --------------------------------------------------------------------------------------------------
# the chapter's entry point (medeval.core.chapter)


@dataclass
class Results:
    """Everything Chapter 4 computes for one parameter set.

    ``categories``: training patches per category (Table 4.2 analogue, :func:`patch_category_table`; its
    ``attrs`` hold ``unit`` and ``unit_used``); ``proportions``: every training distribution's size and class
    proportions (:func:`distribution_proportions`); ``study``: the run dicts of the three studies and what stood in
    for the CAMELYON16 test patches (:func:`run_study`); ``tables``: the per-run tables and curve summaries
    (:func:`study_tables`); ``quality_band``: the models' quality per study (:func:`quality_band`);
    ``table_4_4``: the Table 4.4 analogue (:func:`table_4_4`); ``patch_size_sweep``: Fig. 4.3's sweep
    (:func:`patch_size_sweep`); ``hypothesis_aucs`` and ``classification_aucs`` (per test set): the areas per
    distribution, mean and SD over runs (:func:`auc_table`); ``imbalanced_label`` and ``imbalanced_ratio``: the
    large imbalanced test set of the classifiers (:func:`imbalanced_label`); ``camelyon16_maps``: the stitched
    maps of the CAMELYON16 test slide with most tumour (:func:`camelyon16_most_tumour_slide_maps`; ``None`` unless
    the CAMELYON16 test patches were scored); ``preliminary_sets`` and ``hypothesis_sets``: the training sets as
    drawn by run 0 of each distribution, patches per category (Tables 4.3 and 4.5-4.8 analogue,
    :func:`distribution_table`); ``camelyon16_demo``: the CAMELYON16 test-patch extraction on one slide phantom in
    the CAMELYON16 format (:func:`~medeval.experiments.histology.camelyon16_extraction_demo` with
    :data:`CAMELYON16_DEMO_GEOMETRY`)."""

    categories: pd.DataFrame
    proportions: pd.DataFrame
    study: dict
    tables: dict
    quality_band: dict
    table_4_4: pd.DataFrame
    patch_size_sweep: pd.DataFrame
    hypothesis_aucs: pd.DataFrame
    classification_aucs: pd.DataFrame
    imbalanced_label: str
    imbalanced_ratio: float
    camelyon16_maps: dict | None
    preliminary_sets: pd.DataFrame
    hypothesis_sets: pd.DataFrame
    camelyon16_demo: dict


#: the geometry of the page's CAMELYON16 extraction demo: PCam's (96 px patches, stride 32, 32 px centres) scaled
#: down by 4 so that the grid stays visible, at level 2 of a 1024 x 1536 slide phantom
CAMELYON16_DEMO_GEOMETRY = {"height": 1024, "width": 1536, "level": 2, "patch_size": 24, "stride": 8,
                            "central_size": 8}


def run(P: Params, cache_dir=None) -> Results:
    """The whole chapter for ``P``: the patch categories, the one grid of every run (cached under ``cache_dir``;
    the CAMELYON16 scores under its ``camelyon16`` sub-folder) and the tables, quality band and summaries the page
    shows and the claims read, and the CAMELYON16 extraction demo on one slide phantom (slide seed ``P.seed``)."""
    categories = patch_category_table(P)
    study = run_study(P, cache_dir=cache_dir,
                      camelyon16_cache_dir=None if cache_dir is None else Path(cache_dir) / "camelyon16")
    tables = study_tables(study, P)
    cls_runs = study["classification"]
    y = np.asarray(cls_runs[0]["imbalanced"]["y_true"], dtype=bool)
    maps = None
    if study["c16_table"] is not None:
        maps = camelyon16_most_tumour_slide_maps(study["c16_table"], study["c16_summary"],
                                                 cls_runs[0]["imbalanced"]["score_c"], P)
    return Results(
        categories=categories, proportions=distribution_proportions(categories), study=study, tables=tables,
        quality_band=quality_band(tables, P.quality_floor), table_4_4=table_4_4(study["preliminary"], P.evaluation_tile),
        patch_size_sweep=patch_size_sweep(study["preliminary"]), hypothesis_aucs=auc_table(tables["hyp_summary"]),
        classification_aucs=pd.concat([auc_table(s).assign(test_set=t) for t, s in tables["cls_summary"].items()],
                                      ignore_index=True),
        imbalanced_label=imbalanced_label(cls_runs, study["imbalanced_source"]),
        imbalanced_ratio=float((~y).sum() / max(int(y.sum()), 1)), camelyon16_maps=maps,
        preliminary_sets=distribution_table(study["preliminary"]), hypothesis_sets=distribution_table(study["hypotheses"]),
        camelyon16_demo=H.camelyon16_extraction_demo(P.seed, **CAMELYON16_DEMO_GEOMETRY))
