"""Chapter 4a: the training class-distribution study (Reshma 2021, thesis Chapter 4) on slide phantoms.

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
in one streaming pass) when they are present, otherwise a 1:``imbalance`` subsample of the PCam test split
(``cls_imbalanced_test``). Missing files raise the data layer's error naming the dataset.
"""

from __future__ import annotations

import warnings
import zlib
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from medeval.data import training_sets as ts
from medeval.experiments import histology as H
from medeval.metrics import curves as C
from medeval.runtime.device import limit_cpu_threads
from medeval.runtime.params import ChapterParams

HYPOTHESIS_NAMES = tuple(ts.HYPOTHESIS_DISTRIBUTIONS)
PRELIMINARY_NAMES = tuple(ts.PRELIMINARY_DISTRIBUTIONS)

#: Thesis Table 4.4 (MLNTO, U-Net, method 1 with e = 500 px, mean over 27 test WSIs): (R, P, F) per class.
PAPER_TABLE_4_4 = {
    "Natural": {"C": (0.88, 0.61, 0.68), "notC": (0.96, 0.53, 0.65), "O": (1.0, 0.93, 0.96)},
    "C-biased": {"C": (0.943, 0.47, 0.58), "notC": (0.89, 0.68, 0.74), "O": (1.0, 0.94, 0.97)},
    "notC-biased": {"C": (0.72, 0.78, 0.71), "notC": (0.98, 0.36, 0.51), "O": (1.0, 0.93, 0.96)},
    "Balanced_S": {"C": (0.939, 0.49, 0.59), "notC": (0.96, 0.41, 0.55), "O": (1.0, 0.95, 0.97)},
    "Balanced_L": {"C": (0.89, 0.52, 0.61), "notC": (0.97, 0.44, 0.57), "O": (1.0, 0.93, 0.96)},
}


class HistologyParams(ChapterParams):
    """The fields chapters 4a and 4b share: slide phantoms, the binary patch classifier (PCam-like task), the
    training hyper-parameters, the fixed-threshold curves and the real-data switches (profile ``full``)."""

    slide_size: int = Field(384, ge=64, le=8192, description="side of each slide phantom (pixels)")
    n_train_slides: int = Field(8, ge=1, le=500, description="training slide phantoms")
    n_test_slides: int = Field(4, ge=1, le=500, description="test slide phantoms")
    patch_size: int = Field(32, ge=8, le=512, description="patch side l (4a: training/inference stride l/2)")
    batch_size: int = Field(32, ge=1, le=1024, description="mini-batch size")
    lr: float = Field(3e-3, gt=0, le=1, description="Adam learning rate (thesis U-Net: 1e-5 for 35 epochs at 384 px)")
    n_thresholds: int = Field(
        101, ge=101, le=10001, description="fixed thresholds of the precision / FPR / PR-T curves (Alg. 2: >= 101)")
    cls_central_size: int = Field(16, ge=1, description="central region of the binary patch label (PCam: 32 of 96)")
    cls_test_stride: int = Field(8, ge=1, description="stride of the classification test patches (CAMELYON16: 32)")
    cls_extra_test_slides: int = Field(4, ge=0, le=500, description="extra test slides for the 1:12 test set")
    imbalance: int = Field(12, ge=1, le=1000, description="negatives per positive in the imbalanced test set")
    cls_base_channels: int = Field(8, ge=2, le=256, description="patch classifier width")
    cls_n_blocks: int = Field(3, ge=1, le=6, description="patch classifier conv blocks")
    cls_epochs: int = Field(6, ge=1, le=200, description="patch classifier epochs")
    cls_unit_cap: int | None = Field(150, ge=1, description="cap on U for the patch classifier (null = from the data)")

    data_source: Literal["phantom", "real"] = Field(
        "phantom", description="phantom: slide phantoms (4b: and digits); real: PCam for training, PCam and "
                               "CAMELYON16 for testing (4b: and CIFAR-10)"
    )
    cls_imbalanced_test: Literal["auto", "camelyon16", "pcam_subsample"] = Field(
        "auto", description="data_source=real: large imbalanced test set; auto = CAMELYON16 test patches when "
                            "present, else a 1:imbalance subsample of the PCam test split")
    c16_slides: list[str] | None = Field(
        None, min_length=1, description="CAMELYON16 test slides to use, e.g. [test_001] (null = all)")
    c16_level: int = Field(2, ge=0, le=9, description="CAMELYON16 pyramid level of the patches (PCam: 2)")
    c16_min_tissue_fraction: float = Field(
        0.5, ge=0, le=1, description="CAMELYON16: tissue fraction (Otsu) a patch's central region needs")
    c16_tissue_channel: Literal["grey", "saturation"] = Field("grey", description="CAMELYON16: Otsu channel")


def validate_histology(P) -> None:
    """Cross-field checks of :class:`HistologyParams` (before any compute) for ``data_source=real``: PCam present,
    PCam's patch geometry, and CAMELYON16 present when required."""
    if P.data_source != "real":
        return
    from medeval.data.manifest import require

    require("pcam")
    if P.patch_size != 96 or P.cls_central_size != 32:
        raise ValueError(f"data_source=real uses PCam's 96 px patches with a 32 px central region; got "
                         f"patch_size={P.patch_size}, cls_central_size={P.cls_central_size}")
    imbalanced_test_source(P)  # raises when cls_imbalanced_test = camelyon16 and it is absent


class Params(HistologyParams):
    """Parameters of chapter 4a (``medeval params 04a-class-distribution`` prints them with their ranges)."""

    unit_cap: int | None = Field(
        60, ge=1, description="cap on the unit U (patches); null = U from the data as in the thesis"
    )
    preliminary_fraction: float = Field(
        0.25, gt=0, le=1, description="fraction of every category used by the Table 4.3 sets (keeps composition)"
    )
    base_channels: int = Field(8, ge=2, le=128, description="U-Net width at the first level")
    depth: int = Field(2, ge=1, le=5, description="U-Net down/up levels")
    epochs: int = Field(8, ge=1, le=200, description="U-Net training epochs")
    n_runs: int = Field(2, ge=2, le=50, description="runs per hypothesis distribution (thesis: 10)")
    n_preliminary_runs: int = Field(1, ge=1, le=50, description="runs per Table 4.3 distribution")
    hypothesis_experiments: list[str] = Field(
        list(HYPOTHESIS_NAMES), min_length=2, description="which of E1.a ... E4.c to run"
    )
    tile_sizes: list[int] = Field(
        [1, 2, 4, 8, 16, 32, 64], min_length=1, description="evaluation patch sizes e (method 1 sweep)"
    )
    evaluation_tile: int = Field(16, ge=1, description="e of the Table 4.4 analogue (thesis: 500 px)")
    cls_runs: int = Field(2, ge=2, le=50, description="runs per E2 distribution in the classification study")


# --------------------------------------------------------------------------------------------------
# configurations and grids


def data_config(P: Params) -> dict:
    if P.slide_size % (P.patch_size // 2):
        raise ValueError(f"slide_size ({P.slide_size}) must be a multiple of patch_size / 2 ({P.patch_size // 2})")
    if P.patch_size % 2**P.depth:
        raise ValueError(f"patch_size ({P.patch_size}) must be divisible by 2**depth ({2**P.depth})")
    return {"n_train_slides": P.n_train_slides, "n_test_slides": P.n_test_slides, "slide_size": P.slide_size,
            "patch_size": P.patch_size, "seed": P.seed}


def model_config(P: Params) -> dict:
    return {"base_channels": P.base_channels, "depth": P.depth, "epochs": P.epochs, "batch_size": P.batch_size,
            "lr": P.lr}


def cls_config(P: Params) -> dict:
    if (P.patch_size - P.cls_central_size) % 2 or P.cls_central_size > P.patch_size:
        raise ValueError("cls_central_size must be <= patch_size with an even difference (a centred region)")
    return {"central_size": P.cls_central_size, "test_stride": P.cls_test_stride,
            "extra_test_slides": P.cls_extra_test_slides, "imbalance": P.imbalance,
            "base_channels": P.cls_base_channels, "n_blocks": P.cls_n_blocks, "epochs": P.cls_epochs,
            "batch_size": P.batch_size, "lr": P.lr, "unit_cap": P.cls_unit_cap}


def validate(P: Params) -> None:
    """Cross-field checks, before any compute."""
    data_config(P)
    cls_config(P)
    bad = sorted(set(P.hypothesis_experiments) - set(HYPOTHESIS_NAMES))
    if bad:
        raise ValueError(f"hypothesis_experiments: unknown {bad}; valid: {list(HYPOTHESIS_NAMES)}")
    if P.evaluation_tile not in P.tile_sizes:
        raise ValueError(f"evaluation_tile ({P.evaluation_tile}) must be one of tile_sizes {P.tile_sizes}")
    validate_histology(P)


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


def classification_grid(P: Params) -> list[dict]:
    return [
        {"distribution": d, "run": r, "data": data_config(P), "cls": cls_config(P), "device": P.device}
        for d in ("E2.a", "E2.b", "E2.c") for r in range(P.cls_runs)
    ]


def classification_fn(P: Params):
    """The run function of the classification study for the chosen data source."""
    return pcam_classification_run if P.data_source == "real" else H.classification_run


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


def distribution_table(results: list[dict]) -> pd.DataFrame:
    """Tables 4.3 and 4.5-4.8 analogue: the composition actually drawn (run 0 of each distribution)."""
    rows = []
    for r in results:
        if r["run"] != 0:
            continue
        dist = {**ts.PRELIMINARY_DISTRIBUTIONS, **ts.HYPOTHESIS_DISTRIBUTIONS}[r["distribution"]]
        rows.append({"distribution": r["distribution"], "table": dist.table, "ratio / set": dist.label,
                     "U": r["unit"], **{k: r["taken"].get(k, 0) for k in ts.CATEGORIES},
                     "total": sum(r["taken"].values()), "shortfall": "; ".join(r["shortfalls"]) or "none"})
    return pd.DataFrame(rows)


def table_4_4(results: list[dict], tile: int) -> pd.DataFrame:
    """Recall / precision / F per class (method 1, tile ``e``), mean over runs of the per-image means."""
    rows = []
    for r in results:
        for cls, m in r["method1"][tile].items():
            rows.append({"distribution": r["distribution"], "class": cls, "run": r["run"], "R": m["recall"],
                         "P": m["precision"], "F": m["f_measure"],
                         "undefined images (R)": m["n_undefined_recall"]})
    df = pd.DataFrame(rows)
    return df.groupby(["distribution", "class"], sort=False).mean(numeric_only=True).drop(columns="run").reset_index()


def table_4_4_paper() -> pd.DataFrame:
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


def sweep_trend(sweep: pd.DataFrame, metric: str) -> float:
    """Spearman correlation between e and ``metric`` over all distributions and ROI classes (sign = trend)."""
    from scipy import stats

    roi = sweep[sweep["class"].isin(["C", "notC"])].dropna(subset=[metric])
    return float(stats.spearmanr(roi["e"], roi[metric]).statistic)


# --------------------------------------------------------------------------------------------------
# curves, AUCs and t-tests


def run_metrics(y_true, score, argmax_positive, n_thresholds: int = 101) -> dict:
    """Single-run summary: ROC-AUC, PR-AUC (Algorithms 4-5), PR-T / precision / FPR AUCs, argmax precision."""
    roc = C.roc_curve(y_true, score)
    prt = C.pr_t_curve(y_true, score, n_thresholds=n_thresholds)
    auc = C.pr_t_auc(prt)
    return {
        "roc": roc, "prt": prt,
        "roc_auc": C.trapezoid_auc(roc.fpr, roc.tpr),
        "pr_auc": C.pr_auc_roc_interpolated(roc),
        "precision_auc": auc.precision, "recall_auc": auc.recall, "fpr_auc": auc.fpr,
        "argmax_precision": H.argmax_precision(y_true, argmax_positive),
        "argmax_recall": float(np.mean(np.asarray(argmax_positive)[np.asarray(y_true, bool)])),
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


def auc_table(summary: dict[str, dict]) -> pd.DataFrame:
    rows = []
    for d, s in summary.items():
        row = {"distribution": d, "runs": len(s["runs"])}
        for k in ("roc_auc", "pr_auc", "precision_auc", "recall_auc", "fpr_auc", "argmax_precision",
                  "argmax_recall"):
            v = np.array([m[k] for m in s["runs"]], dtype=float)
            row[k] = float(np.nanmean(v))
            row[k + "_std"] = float(np.nanstd(v))
        rows.append(row)
    return pd.DataFrame(rows)


#: the thesis's comparisons: (hypothesis, a, b, expected direction of argmax precision a vs b)
COMPARISONS = (
    ("H1", "E1.b", "E1.a", ">"),
    ("H2", "E2.b", "E2.a", ">"),
    ("H2", "E2.b", "E2.c", ">"),
    ("H3", "E3.a", "E2.a", ">"),
    ("H3", "E3.b", "E2.b", ">"),
    ("H3", "E3.c", "E2.c", "<"),
    ("H2", "E3.b", "E3.a", ">"),
    ("H2", "E3.b", "E3.c", ">"),
    ("H4", "E4.b", "E3.b", ">="),
    ("H4", "E4.c", "E3.c", ">="),
    ("H4", "E4.a", "E3.a", ">="),
    ("H2", "E4.b", "E4.c", ">"),
)


def argmax_precision_ttests(summary: dict[str, dict], comparisons=COMPARISONS) -> pd.DataFrame:
    """Welch t-tests on argmax precision for the thesis's pairs of distributions (both must have been run)."""
    rows = []
    for hyp, a, b, direction in comparisons:
        if a not in summary or b not in summary:
            continue
        pa = np.array([m["argmax_precision"] for m in summary[a]["runs"]])
        pb = np.array([m["argmax_precision"] for m in summary[b]["runs"]])
        ok = ~np.isnan(pa).any() and ~np.isnan(pb).any() and pa.size > 1 and pb.size > 1
        if ok and (pa.std() > 0 or pb.std() > 0):
            with warnings.catch_warnings():  # nearly identical runs: scipy warns, the p-value is still valid
                warnings.filterwarnings("ignore", message="Precision loss", category=RuntimeWarning)
                res = C.argmax_precision_ttest(pa, pb)
            t, p = float(res.statistic), float(res.pvalue)
        else:
            t, p = float("nan"), float("nan")
        diff = float(np.nanmean(pa) - np.nanmean(pb))
        agrees = diff > 0 if direction == ">" else diff < 0 if direction == "<" else diff >= -0.01
        rows.append({"hypothesis": hyp, "a": a, "b": b, "paper direction": f"{a} {direction} {b}",
                     "mean a": float(np.nanmean(pa)), "mean b": float(np.nanmean(pb)), "difference": diff,
                     "t": t, "p": p, "same direction as paper": bool(agrees)})
    return pd.DataFrame(rows)


def hypothesis_verdicts(aucs: pd.DataFrame, tests: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """One row per hypothesis: the thesis's verdict, the evidence here and whether it agrees."""
    a = aucs.set_index("distribution")

    def get(d, k):
        return float(a.loc[d, k]) if d in a.index else float("nan")

    def test_rows(h):
        return tests[tests["hypothesis"] == h]

    rows = []
    # H1 (natural is not optimal) -- the thesis REJECTS it: natural E1.b beats balanced E1.a
    h1 = test_rows("H1")
    if len(h1):
        ok = get("E1.b", "precision_auc") > get("E1.a", "precision_auc") and get("E1.b", "fpr_auc") < get(
            "E1.a", "fpr_auc")
        rows.append({"hypothesis": "H1: the natural distribution is not optimal", "paper": "rejected (E1.b > E1.a)",
                     "evidence": f"precision-AUC E1.b {get('E1.b', 'precision_auc'):.3f} vs E1.a "
                                 f"{get('E1.a', 'precision_auc'):.3f}; FPR-AUC {get('E1.b', 'fpr_auc'):.3f} vs "
                                 f"{get('E1.a', 'fpr_auc'):.3f}; argmax-precision p = {h1['p'].iloc[0]:.3g}",
                     "ours": "rejected" if ok else "not rejected", "agrees": ok})
    # H2 (over-representing notC reduces FP) -- accepted: the notC-biased sets have the highest precision AUC
    groups = [g for g in ("E2", "E3", "E4") if all(f"{g}.{s}" in a.index for s in "abc")]
    if groups:
        wins = [get(f"{g}.b", "precision_auc") >= max(get(f"{g}.a", "precision_auc"), get(f"{g}.c", "precision_auc"))
                for g in groups]
        fewer_fp = [get(f"{g}.b", "fpr_auc") <= min(get(f"{g}.a", "fpr_auc"), get(f"{g}.c", "fpr_auc"))
                    for g in groups]
        ok = sum(wins) > len(groups) / 2
        rows.append({"hypothesis": "H2: over-representing ¬C reduces false positives", "paper": "accepted",
                     "evidence": f"¬C-biased set has the highest precision-AUC in {sum(wins)}/{len(groups)} groups "
                                 f"and the lowest FPR-AUC in {sum(fewer_fp)}/{len(groups)}",
                     "ours": "accepted" if ok else "not accepted", "agrees": ok})
    h3 = test_rows("H3")
    if len(h3):
        ab = h3[h3["a"].isin(["E3.a", "E3.b"])]
        ok = bool(ab["same direction as paper"].all())
        rows.append({"hypothesis": "H3: mixed patches are more useful than single-label ones",
                     "paper": "accepted for E3.a, E3.b; not for E3.c",
                     "evidence": "; ".join(f"{r.a} - {r.b} = {r.difference:+.3f} (p = {r.p:.3g})"
                                           for r in h3.itertuples()),
                     "ours": "accepted" if ok else "not accepted", "agrees": ok})
    h4 = test_rows("H4")
    if len(h4):
        ok = bool(h4["same direction as paper"].mean() >= 0.5)
        rows.append({"hypothesis": "H4: non-ROI (O) patches are useful", "paper": "accepted (small effect)",
                     "evidence": "; ".join(f"{r.a} - {r.b} = {r.difference:+.3f} (p = {r.p:.3g})"
                                           for r in h4.itertuples()),
                     "ours": "accepted" if ok else "not accepted", "agrees": ok})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# real data (profile full): PCam for training, PCam test and CAMELYON16 test patches for evaluation


def imbalanced_test_source(P) -> str:
    """Which large imbalanced test set the classification study uses: ``phantom`` (the phantom test slides at
    1:``imbalance``), ``camelyon16`` (every test patch of the CAMELYON16 test slides, the thesis's set) or
    ``pcam_subsample`` (a 1:``imbalance`` subsample of the PCam test split). ``cls_imbalanced_test="auto"`` picks
    CAMELYON16 when its files are present and says so; ``"camelyon16"`` requires them."""
    from medeval.data.manifest import DatasetUnavailableError, require

    if P.data_source == "phantom":
        return "phantom"
    if P.cls_imbalanced_test == "pcam_subsample":
        return "pcam_subsample"
    try:
        require("camelyon16")
    except DatasetUnavailableError:
        if P.cls_imbalanced_test == "camelyon16":
            raise
        return "pcam_subsample"
    return "camelyon16"


def camelyon16_geometry(P):
    """The PCam patch procedure with this chapter's sizes: level ``c16_level``, ``patch_size``, stride
    ``cls_test_stride``, central region ``cls_central_size`` (full profile: 2, 96, 32, 32 as in the thesis)."""
    from medeval.data.camelyon16 import PatchGeometry

    return PatchGeometry(level=P.c16_level, patch_size=P.patch_size, stride=P.cls_test_stride,
                         central_size=P.cls_central_size, min_tissue_fraction=P.c16_min_tissue_fraction,
                         tissue_channel=P.c16_tissue_channel)


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
    the per-slide summary of :func:`medeval.data.camelyon16.camelyon16_test_patch_table`. With ``cache_dir`` the
    per-slide extraction and the score matrix (float32, runs x patches) are cached, keyed by the weights, the
    geometry and the table.
    """
    from pathlib import Path

    from medeval.data.camelyon16 import camelyon16_test_patch_table, iter_patch_batches

    geometry = camelyon16_geometry(P)
    cache = Path(cache_dir) if cache_dir is not None else None
    table, summary = camelyon16_test_patch_table(
        geometry=geometry, slides=P.c16_slides, cache_dir=cache / "slides" if cache else None,
        scheduler=P.scheduler, max_workers=P.max_workers)
    if table.empty:
        raise ValueError("no CAMELYON16 test patch passed the background filter; check c16_min_tissue_fraction")
    path = cache / f"scores-{_scores_key(runs, geometry, table)}.npy" if cache else None
    if path is not None and path.exists():
        scores = np.load(path)
    else:
        models = [rebuild_patch_classifier(r) for r in runs]
        batches = iter_patch_batches(table, dict(zip(summary["slide"], summary["path"], strict=True)), geometry,
                                     batch_size=batch_size)
        scores = H.score_patch_stream(models, batches, len(table), device=P.device)
        if path is not None:
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, scores)
            tmp.replace(path)
    y = table["label"].to_numpy(dtype=bool)
    out = []
    for k, r in enumerate(runs):
        r = dict(r)
        r["imbalanced"] = {"y_true": y, "score_c": scores[k], "argmax_c": scores[k] > 0.5}
        r["imbalanced_source"] = "camelyon16"
        out.append(r)
    return out, table, summary


def with_imbalanced_test(runs: list[dict], P, cache_dir=None):
    """The classification runs with the imbalanced test set :func:`imbalanced_test_source` chooses, and a
    description of it: ``(runs, source, table, summary)`` (table/summary only for CAMELYON16)."""
    source = imbalanced_test_source(P)
    if source == "camelyon16":
        runs, table, summary = attach_camelyon16(runs, P, cache_dir=cache_dir)
        return runs, source, table, summary
    return runs, source, None, None
