"""Chapter 2: RoDeO and IoU-based metrics for pathology detection (Meissen, Müller et al., MIDL 2023).

:func:`run` is the chapter's one entry point (:mod:`medeval.core.chapter`): every computation of the chapter for a
parameter set, returned as one :class:`Results` that ``notebooks/02-rodeo.py`` shows and records and
:func:`medeval.experiments.rodeo_claims.claim_inputs` reads. Its parts, pure functions of (parameters, seed):

* :func:`load_oracle_targets` — the real NIH box list (984 boxes, 880 images), split 50/50 at patient
  level as in the paper; the oracle experiments run on the test half, in normalised coordinates.
* :func:`oracle_predictions` — one oracle model: App. A corruptions composed in a fixed order.
* :func:`evaluate_detections` — every metric of the chapter on one (predictions, targets) pair.
* :func:`figure_settings` / :func:`run_oracle_figure` / :func:`run_oracle_figures` — the sweeps of Figs. 3, 4, 5,
  7, 8, 9, 10, 11 (each setting repeated ``n_runs`` times, as the paper's "mean of 5 runs"), one grid task per figure.
* :func:`shift_map` / :func:`shift_probe` — Fig. 2: AP@50, mAP, IoU and RoDeO localisation over centre offsets.
* :func:`analytic_curves` — the closed forms overlaid on the figures.
* :func:`train_cam_detector` / :func:`cam_boxes` / :func:`detector_table` / :func:`bootstrap_table` — the
  Table 1 analogue: a weakly supervised multi-label CNN, boxes from class activation maps; :func:`detector_quality`
  its quality band against :data:`AUC_FLOOR`.
* :func:`paper_table1_consistency` — the harmonic-mean check of the paper's Table 1 (Atelectasis erratum).
* :func:`oracle_target_cells`, :func:`literal_eq8_localization`, :func:`fig6_curves`, :func:`all_wrong_control` —
  further inputs of the chapter's claims and checks (decided in :mod:`medeval.experiments.rodeo_claims`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.data import corruptions as C
from medeval.data.seeding import as_generator
from medeval.experiments.rodeo_params import FloatList, Params, ProbList  # noqa: F401 (re-exported)
from medeval.metrics.detection import (
    MAP_IOU_THRESHOLDS,
    ImageBoxes,
    accuracy_at_iou,
    average_precision_at_iou,
    robust_detection_outcome,
)

#: The 8 ChestX-ray8 box classes, in the order of the paper's Table 1.
CLASSES: tuple[str, ...] = (
    "Atelectasis",
    "Cardiomegaly",
    "Effusion",
    "Infiltration",
    "Mass",
    "Nodule",
    "Pneumonia",
    "Pneumothorax",
)

#: Table 1 of the paper (CheXNet, test split, %), for the consistency check and the comparison.
PAPER_TABLE1 = pd.DataFrame(
    [
        ("Atelectasis", 21.6, 17.3, 6.9, 28.4, 37.1, 2.0),
        ("Cardiomegaly", 55.7, 70.4, 45.8, 55.6, 86.2, 31.7),
        ("Effusion", 21.9, 15.5, 9.2, 13.7, 33.4, 5.1),
        ("Infiltration", 11.0, 15.9, 8.1, 10.8, 31.6, 3.0),
        ("Mass", 10.6, 11.4, 4.3, 7.2, 59.4, 1.6),
        ("Nodule", 16.9, 3.0, 0.8, 1.9, 55.7, 0.0),
        ("Pneumonia", 9.2, 38.3, 19.2, 16.0, 71.6, 2.1),
        ("Pneumothorax", 26.6, 14.3, 12.5, 16.0, 65.8, 1.0),
        ("Total", 19.8, 19.9, 10.9, 15.6, 55.1, 5.8),
    ],
    columns=["class", "classification", "localization", "shape_matching", "total", "acc@30", "mAP"],
)

#: Names of the metric columns returned by :func:`evaluate_detections`.
IOU_SHOWN = (0.1, 0.3, 0.5)

#: The detector's quality floor, per class: the test AUC of the image-level classifier of that class. A claim about
#: a class whose classifier is at or below it is [n/a]: for that class the detector did not train and its readings
#: are not evidence either way (:mod:`medeval.experiments.rodeo_claims`); :func:`detector_quality` reports the band.
AUC_FLOOR = 0.7


# ------------------------------------------------------------------------------------------------------
# data


def load_oracle_targets(test_fraction: float = 0.5, seed: int = 0) -> tuple[ImageBoxes, pd.DataFrame]:
    """The NIH box list's test half (patient-level split) as normalised ``xywh`` :class:`ImageBoxes`.

    Returns ``(targets, table)``; ``table`` has one row per box (image_index, finding, x, y, w, h in
    pixels, image id, class id). Coordinates are divided by the 1024-pixel image size, so the App. A
    boxes of size 0.25 are "a quarter of the image".
    """
    from medeval.data.chestxray14 import IMAGE_SIZE, load_boxes, patient_id_of
    from medeval.data.splits import patient_train_test_split

    boxes = load_boxes(box_format="xywh")
    images = np.array(sorted(boxes["image_index"].unique()))
    ((_, test_idx),) = patient_train_test_split(patient_id_of(images), test_size=test_fraction, seed=seed)
    test_images = images[np.sort(test_idx)]
    table = boxes[boxes["image_index"].isin(test_images)].copy()
    image_id = {name: i for i, name in enumerate(test_images)}
    table["image"] = table["image_index"].map(image_id).astype(np.int64)
    table["class_id"] = table["finding"].map({c: i for i, c in enumerate(CLASSES)})
    if table["class_id"].isna().any():
        raise ValueError(
            f"box findings outside the 8 classes: {sorted(set(table['finding']) - set(CLASSES))}"
        )
    table["class_id"] = table["class_id"].astype(np.int64)
    targets = ImageBoxes.from_arrays(
        table[["x", "y", "w", "h"]].to_numpy() / IMAGE_SIZE,
        table["class_id"].to_numpy(),
        table["image"].to_numpy(),
        box_format="xywh",
        n_images=len(test_images),
        name="NIH boxes",
    )
    return targets, table.reset_index(drop=True)


def box_list_summary() -> dict:
    """Counts of the shipped NIH box list (boxes, images, per class) and the mean box size (fraction of 1024)."""
    from medeval.data.chestxray14 import IMAGE_SIZE, load_boxes

    b = load_boxes(box_format="xywh")
    return {
        "n_boxes": len(b),
        "n_images": int(b["image_index"].nunique()),
        "boxes_per_class": b["finding"].value_counts().reindex(list(CLASSES)).astype(int).to_dict(),
        "mean_box_width": float(b["w"].mean() / IMAGE_SIZE),
        "mean_box_height": float(b["h"].mean() / IMAGE_SIZE),
        "mean_box_side_sqrt_area": float(np.sqrt(b["w"] * b["h"]).mean() / IMAGE_SIZE),
    }


# ------------------------------------------------------------------------------------------------------
# oracle models


def oracle_predictions(
    targets: ImageBoxes,
    rng,
    *,
    sigma_pos: float = 0.0,
    sigma_shape: float = 0.0,
    position_bias: float = 0.0,
    sigma_size: float = 0.0,
    sigma_ratio: float = 0.0,
    p_underpred: float = 0.0,
    p_overpred: float = 0.0,
    expected_duplicates: float = 0.0,
    p_confuse: float = 0.0,
    random_box_size: float | None = None,
) -> ImageBoxes:
    r"""An oracle model (paper Sec. 4, App. A): corrupted copies of ``targets`` (normalised coordinates).

    Position and shape noise (:func:`medeval.data.corruptions.position_noise`, ``shape_noise``):

    .. math::

       \begin{gathered}
       \hat x \sim \mathcal N\bigl(x, (w\,\sigma_{pos})^2\bigr),\quad \hat y \sim \mathcal N\bigl(y, (h\,\sigma_{pos})^2\bigr),
       \\ \ln \hat w \sim \mathcal N(\ln w, \sigma_{shape}^2),\quad \ln \hat h \sim \mathcal N(\ln h, \sigma_{shape}^2) .
       \end{gathered}

    Order: [random boxes of size s replace the oracle boxes] → class under-prediction → box
    duplication → class confusion → position bias → position noise → shape, size, aspect-ratio noise →
    class over-prediction (its new boxes are added last, uncorrupted). Each step draws from ``rng``.
    """
    g = as_generator(rng, name="rng")
    k = len(CLASSES)
    if random_box_size is not None:
        return C.random_boxes_of_size(
            targets, random_box_size, g, num_classes=k, image_size=1.0, p_overpred=p_overpred
        )
    p = C.class_underprediction(targets, p_underpred, g)
    p = C.box_duplication(p, expected_duplicates, g)
    p = C.class_confusion(p, p_confuse, g, num_classes=k)
    p = C.position_bias(p, position_bias, g)
    p = C.position_noise(p, sigma_pos, g)
    p = C.shape_noise(p, sigma_shape, g)
    p = C.size_noise(p, sigma_size, g)
    p = C.aspect_ratio_noise(p, sigma_ratio, g)
    return C.class_overprediction(p, p_overpred, g, num_classes=k, image_size=1.0)


def evaluate_detections(predictions: ImageBoxes, targets: ImageBoxes) -> dict[str, float]:
    """RoDeO (total and sub-scores), acc@IoU and AP@IoU at 0.1/0.3/0.5 and mAP (0.1-0.7), all class means
    except RoDeO (pooled, as defined). Predictions without scores share one confidence (see AP@IoU)."""
    fmt = targets.box_format
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r = robust_detection_outcome(
            predictions, targets, box_format=fmt, class_names=CLASSES, per_class=False
        )
    out = {
        "RoDeO": r.total,
        "RoDeO loc": r.localization,
        "RoDeO shape": r.shape_matching,
        "RoDeO cls": r.classification,
    }
    for t in IOU_SHOWN:
        out[f"acc@{round(t * 100)}"] = accuracy_at_iou(
            predictions, targets, box_format=fmt, class_names=CLASSES, iou_threshold=t
        ).mean
    aps = {
        t: average_precision_at_iou(
            predictions, targets, box_format=fmt, class_names=CLASSES, iou_threshold=t
        ).mean
        for t in MAP_IOU_THRESHOLDS
    }
    for t in IOU_SHOWN:
        out[f"AP@{round(t * 100)}"] = aps[t]
    out["mAP"] = float(np.mean(list(aps.values())))
    return out


#: The oracle figures: name -> (caption, varied parameters, fixed parameters).
FIGURES = {
    "fig3": ("Box oracle: position noise × shape noise", ("sigma_pos", "sigma_shape"), {}),
    "fig4": ("Class under-prediction (σ_pos = 0.5)", ("p_underpred",), {"sigma_pos": 0.5}),
    "fig5": ("Box duplication (σ_pos = 0.5)", ("expected_duplicates",), {"sigma_pos": 0.5}),
    "fig7": (
        "Class oracle with random boxes of size s × class over-prediction",
        ("random_box_size", "p_overpred"),
        {},
    ),
    "fig8": ("Position bias × position noise", ("position_bias", "sigma_pos"), {}),
    "fig9": ("Size and aspect-ratio noise", ("sigma_size", "sigma_ratio"), {}),
    "fig10": ("Class over-prediction (σ_pos = 0.5)", ("p_overpred",), {"sigma_pos": 0.5}),
    "fig11": ("Class confusion (σ_pos = 0.5)", ("p_confuse",), {"sigma_pos": 0.5}),
}


def figure_settings(figure: str, params: Params) -> list[dict]:
    """The oracle settings (keyword arguments of :func:`oracle_predictions`) swept by one figure."""
    if figure not in FIGURES:
        raise ValueError(f"figure must be one of {list(FIGURES)}, got {figure!r}")
    _, varied, fixed = FIGURES[figure]
    values = {
        "sigma_pos": params.sigma_pos,
        "sigma_shape": params.sigma_shape,
        "p_underpred": params.p_values,
        "p_overpred": params.p_values,
        "p_confuse": params.p_values,
        "expected_duplicates": params.expected_duplicates,
        "random_box_size": params.random_box_sizes,
        "position_bias": params.position_bias,
        "sigma_size": params.sigma_size,
        "sigma_ratio": params.sigma_ratio,
    }
    if figure == "fig7":  # a few over-prediction levels for the second axis
        grid = [
            {"random_box_size": s, "p_overpred": p}
            for p in (0.0, 0.1, 0.3)
            for s in values["random_box_size"]
        ]
    elif figure == "fig9":  # the two corruptions separately, as the two panels of Fig. 9
        grid = [{"sigma_size": s, "sigma_ratio": 0.0} for s in values["sigma_size"]]
        # the uncorrupted setting (0, 0) once: the size panel holds it when sigma_size has 0
        have_origin = 0.0 in values["sigma_size"]
        grid += [{"sigma_size": 0.0, "sigma_ratio": s} for s in values["sigma_ratio"] if s != 0 or not have_origin]
    elif figure == "fig8":
        grid = [
            {"position_bias": b, "sigma_pos": s} for s in (0.0, 0.25, 0.5) for b in values["position_bias"]
        ]
    elif len(varied) == 2:
        grid = [{varied[0]: a, varied[1]: b} for a in values[varied[0]] for b in values[varied[1]]]
    else:
        grid = [{varied[0]: a} for a in values[varied[0]]]
    return [{**fixed, **g} for g in grid]


def run_oracle_figure(figure: str, params_json: dict, seed: int) -> list[dict]:
    """All settings × runs of one figure; one record per (setting, run) with every metric.

    Module-level and JSON-argument so that :func:`medeval.runtime.grid.run_grid` can run the figures in
    parallel and cache them. Run ``r`` of setting ``j`` uses the seed sequence (seed, figure, j, r).
    """
    params = Params(**params_json)
    targets, _ = load_oracle_targets(params.oracle_test_fraction, seed)
    fig_no = int(figure.removeprefix("fig"))
    rows = []
    for j, setting in enumerate(figure_settings(figure, params)):
        for run in range(params.n_runs):
            preds = oracle_predictions(targets, np.random.SeedSequence([seed, fig_no, j, run]), **setting)
            rows.append(
                {"figure": figure, "setting": j, "run": run, **setting, **evaluate_detections(preds, targets)}
            )
    return rows


def run_oracle_figures(
    params: Params, seed: int, *, cache_dir=None, scheduler=None, max_workers=None
) -> dict[str, pd.DataFrame]:
    """Every oracle figure of :data:`FIGURES` (one grid task per figure, cached and run in parallel by
    :func:`medeval.runtime.grid.run_grid`); returns ``{figure: DataFrame of one row per (setting, run)}``."""
    from medeval.runtime.grid import run_grid

    params_json = params.model_dump(mode="json")
    figures = list(FIGURES)
    results = run_grid(
        run_oracle_figure,
        [{"figure": f, "params_json": params_json, "seed": seed} for f in figures],
        cache_dir=cache_dir,
        scheduler=scheduler,
        max_workers=max_workers,
        desc="oracle figures",
    )
    return {f: pd.DataFrame(rows) for f, rows in zip(figures, results, strict=True)}


def oracle_target_cells(targets: ImageBoxes) -> dict[str, int]:
    """Counts of the oracle test set: images, boxes, (image, class) cells and the cells holding a box.
    ``1 − occupied/cells`` is the share of true-negative cells that dominates acc@IoU."""
    occupied = len(set(zip(targets.image_ids.tolist(), targets.labels.tolist(), strict=True)))
    return {
        "n_images": int(targets.n_images),
        "n_boxes": len(targets),
        "n_cells": int(targets.n_images * len(CLASSES)),
        "n_occupied_cells": int(occupied),
    }


def all_wrong_predictions(targets: ImageBoxes, shift: float = 2.0) -> ImageBoxes:
    """The control of the acc@IoU claims: every target box, with its class, moved off its object.

    Each centre moves by ``shift`` of its box's width along x and of its height along y,
    ``x̂ = x + shift·w``, ``ŷ = y + shift·h``; for ``shift ≥ 1`` no prediction overlaps its own target
    (IoU = 0), so every box is wrong at every IoU threshold, while the (image, class) cells that hold a box
    stay the same as the targets'. RoDeO loc of a pair is then ``2^(−2·shift²)`` (Eq. 2; 0.0039 at 2).
    """
    if not shift >= 1:
        raise ValueError(f"shift must be >= 1 (boxes off their objects), got {shift}")
    c = C._centre(targets).copy()
    c[:, 0] += shift * c[:, 2]
    c[:, 1] += shift * c[:, 3]
    return C._with(targets, c)


def all_wrong_control(targets: ImageBoxes, shift: float = 2.0) -> dict:
    """Every metric of :func:`evaluate_detections` for :func:`all_wrong_predictions`, with the per-class
    acc@30 and the share of empty (image, class) cells.

    With every box wrong, class c has TP = 0, FP = FN = n_c (its boxes) and TN = its empty cells, so
    ``acc@t_c = TN_c / (TN_c + 2 n_c)`` at every threshold (App. E): acc@IoU's floor set by the true negatives.
    """
    preds = all_wrong_predictions(targets, shift)
    out = evaluate_detections(preds, targets)
    acc = accuracy_at_iou(preds, targets, box_format=targets.box_format, class_names=CLASSES, iou_threshold=0.3)
    cells = oracle_target_cells(targets)
    out["acc@30 per class"] = dict(zip(CLASSES, (float(v) for v in acc.per_class), strict=True))
    out["empty_cell_share"] = 1 - cells["n_occupied_cells"] / cells["n_cells"]
    out["shift"] = float(shift)
    return out


def literal_eq8_localization(targets: ImageBoxes, biases, seed: int) -> dict[float, float]:
    """Mean RoDeO loc of the oracle boxes moved by Eq. 8 *as printed* (offset ``|Δp|·cos φ / w``), per bias;
    with the multiplication we use, ``loc = 2^(−|Δp|²)`` for every box."""
    out = {}
    for j, b in enumerate(biases):
        g = np.random.default_rng([seed, 8, 1000 + j])
        preds = C.position_bias(targets, float(b), g, literal_eq8=True)
        out[float(b)] = evaluate_detections(preds, targets)["RoDeO loc"]
    return out


def summarise_runs(rows: list[dict] | pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean, standard deviation, min and max over runs of every metric, per setting (long format)."""
    frame = pd.DataFrame(rows)
    metrics = [c for c in frame.columns if c.startswith(("RoDeO", "acc@", "AP@", "mAP"))]
    long = frame.melt(id_vars=by + ["run"], value_vars=metrics, var_name="metric", value_name="value")
    return long.groupby(by + ["metric"], sort=False)["value"].agg(["mean", "std", "min", "max"]).reset_index()


def analytic_curves(x: np.ndarray) -> dict[str, np.ndarray]:
    """Closed forms for one box per pair (derived here from Eqs. 2-5 and the App. A corruption models):

    * position noise σ: E[loc] = 1 / (1 + 2 ln2 σ²) (d² ~ σ² χ²₂);
    * position bias ``|Δp|``: ``loc = 2^(−|Δp|²)``;
    * uniform scale s: shape = min(s, 1/s)²; E over ln s ~ N(0, σ²) is computed numerically;
    * aspect change (area kept): ``shape = 1 / (2 e^{|Δ ln a|/2} − 1)``;
    * class flips to a uniformly random other class with probability q (K classes):
      cls = max(0, (K(1 − q) − 1)/(K − 1)); for class confusion with probability p, the share of
      correct labels is 1 − E[relabelled] (Monte Carlo in :func:`confusion_accuracy`);
    * under-prediction p (with the loc at σ = 0.5): every sub-score × (1 − p);
      duplication E[D]: every sub-score × 1/(1 + E[D]).
    """
    x = np.asarray(x, dtype=np.float64)
    ln2 = np.log(2.0)
    z, w = _normal_grid()

    def expected_scale_shape(sigma):
        s = np.exp(np.outer(sigma, z))
        return (np.minimum(s, 1 / s) ** 2) @ w

    def expected_ratio_shape(sigma):
        d = np.abs(np.outer(sigma, z))
        return (1 / (2 * np.exp(d / 2) - 1)) @ w

    return {
        "loc_position_noise": 1 / (1 + 2 * ln2 * x**2),
        "loc_position_bias": 2.0 ** (-(x**2)),
        "shape_size_noise": expected_scale_shape(x),
        "shape_aspect_noise": expected_ratio_shape(x),
        "scale_shape": np.minimum(x, 1 / np.where(x > 0, x, np.inf)) ** 2,
    }


def _normal_grid(n: int = 4001, half_width: float = 9.0):
    """Nodes and weights of E[f(Z)], Z ~ N(0, 1), by the trapezoid rule; the odd node count puts a node at 0,
    where the integrands here have their kink (Gauss-Hermite is inaccurate for non-smooth integrands)."""
    z = np.linspace(-half_width, half_width, n)
    w = np.exp(-0.5 * z**2)
    w[[0, -1]] *= 0.5
    return z, w / w.sum()


def shape_noise_expectation(sigma) -> np.ndarray:
    """E[cIoU] under Eq. 9 (independent ln ŵ/w, ln ĥ/h ~ N(0, σ²)): with a = ŵ/w, b = ĥ/h,
    cIoU = min(a,1)·min(b,1) / (ab + 1 − min(a,1)·min(b,1)); 2-D quadrature with a node at the kink."""
    z, w = _normal_grid(801)
    out = []
    for s in np.atleast_1d(np.asarray(sigma, dtype=np.float64)):
        a = np.exp(s * z)[:, None]
        b = np.exp(s * z)[None, :]
        inter = np.minimum(a, 1) * np.minimum(b, 1)
        out.append(float(w @ (inter / (a * b + 1 - inter)) @ w))
    return np.array(out)


def confusion_accuracy(
    p: np.ndarray, n_classes: int = len(CLASSES), n_draws: int = 20000, seed: int = 0
) -> np.ndarray:
    r"""Probability that a box keeps its class under ``class_confusion`` with probability ``p`` (Monte Carlo
    over the random selection and permutation): :math:`1 - p + p\,E[1/|S| \mid c \in S]`."""
    rng = np.random.default_rng(seed)
    out = []
    for q in np.atleast_1d(p):
        sel = rng.random((n_draws, n_classes)) < q
        size = sel.sum(1)
        # class 0 keeps its label if not selected, or if selected and the permutation fixes it (1/|S|)
        keep = np.where(sel[:, 0], 1.0 / np.maximum(size, 1), 1.0)
        out.append(keep.mean())
    return np.array(out)


def classification_closed_form(accuracy, n_classes: int = len(CLASSES)):
    """RoDeO cls for matched pairs with a share ``accuracy`` of correct classes: max(0, (K·acc − 1)/(K − 1))."""
    acc = np.asarray(accuracy, dtype=np.float64)
    return np.maximum(0.0, (n_classes * acc - 1) / (n_classes - 1))


# ------------------------------------------------------------------------------------------------------
# Fig. 2


def shift_map(grid_size: int = 41, max_offset: float = 1.5) -> dict[str, np.ndarray]:
    """Fig. 2: square, equal-sized target and prediction offset by (Δx, Δy) target sizes.

    Every cell is its own one-image dataset with one prediction and one target of the same class: its AP at a
    threshold t is 1 when IoU ≥ t and 0 otherwise (precision = recall = 1 or 0), so AP@50 and mAP (thresholds
    0.1-0.7) follow from the library's IoU; IoU and RoDeO localisation are the library's. The library's
    ``average_precision_at_iou`` is run on the cells of the central row and of the diagonal, and
    ``"ap_library_max_abs_dev"`` reports its largest deviation from that closed form (a check).
    Returns the offsets and four ``(grid_size, grid_size)`` maps (rows: Δy, columns: Δx).
    """
    from medeval.metrics.box_overlap import paired_iou
    from medeval.metrics.detection import localization_similarity

    offsets = np.linspace(-max_offset, max_offset, grid_size)
    dy, dx = np.meshgrid(offsets, offsets, indexing="ij")
    target = np.array([0.0, 0.0, 1.0, 1.0])
    preds = np.column_stack([dx.ravel(), dy.ravel(), np.ones(dx.size), np.ones(dx.size)])
    targets = np.tile(target, (dx.size, 1))
    iou = paired_iou(preds, targets, box_format="xywh").reshape(dx.shape)
    loc = localization_similarity(preds, targets, box_format="xywh").reshape(dx.shape)
    hits = np.stack([iou >= th for th in MAP_IOU_THRESHOLDS]).astype(np.float64)  # AP of one pair per threshold
    ap50 = hits[MAP_IOU_THRESHOLDS.index(0.5)]
    m_ap = hits.mean(0)
    names = ("finding", "other")  # two classes: MCC-based metrics need K >= 2
    mid = grid_size // 2
    probe = sorted({mid * grid_size + j for j in range(grid_size)} | {j * grid_size + j for j in range(grid_size)})
    dev = 0.0
    for i in probe:
        p = [np.append(preds[i], 0.0)[None]]
        t = [np.append(target, 0.0)[None]]
        aps = [
            average_precision_at_iou(p, t, box_format="xywh", class_names=names, iou_threshold=th).mean
            for th in MAP_IOU_THRESHOLDS
        ]
        dev = max(dev, float(np.max(np.abs(np.array(aps) - hits.reshape(len(MAP_IOU_THRESHOLDS), -1)[:, i]))))
    return {
        "offsets": offsets,
        "AP@50": ap50,
        "mAP": m_ap,
        "IoU": iou,
        "RoDeO loc": loc,
        "ap_library_max_abs_dev": dev,
        "ap_library_cells": len(probe),
    }


def shift_probe(maps: dict[str, np.ndarray]) -> dict[str, float]:
    """Fig. 2 read-outs: IoU and RoDeO loc at a distance of half a target size along an axis and along the
    diagonal, and the share of the shift map where AP@50 is non-zero and where RoDeO loc exceeds 0.01."""
    from medeval.metrics.box_overlap import paired_iou
    from medeval.metrics.detection import localization_similarity

    box = np.array([[0.0, 0.0, 1.0, 1.0]])
    diag = 1 / np.sqrt(2)
    probes = {"axis": np.array([[0.5, 0.0, 1.0, 1.0]]), "diagonal": np.array([[0.5 * diag, 0.5 * diag, 1.0, 1.0]])}
    out = {
        f"{metric}_{where}": float(fn(b, box, box_format="xywh")[0])
        for where, b in probes.items()
        for metric, fn in (("iou", paired_iou), ("loc", localization_similarity))
    }
    out["ap50_nonzero_area_fraction"] = float((maps["AP@50"] > 0).mean())
    out["loc_nonzero_area_fraction"] = float((maps["RoDeO loc"] > 0.01).mean())
    # isotropy over the whole map: loc depends on Δx² + Δy² only
    off = maps["offsets"]
    r2 = off[None, :] ** 2 + off[:, None] ** 2
    out["loc_max_abs_dev_from_radial"] = float(np.max(np.abs(maps["RoDeO loc"] - 2.0 ** (-r2))))
    if "ap_library_max_abs_dev" in maps:
        out["ap_library_max_abs_dev"] = float(maps["ap_library_max_abs_dev"])
        out["ap_library_cells"] = int(maps["ap_library_cells"])
    return out


def hausdorff_distance_centred(wt, ht, wp, hp) -> np.ndarray:
    r"""Hausdorff distance between two solid axis-aligned boxes with the same centre (sizes :math:`w_t \times h_t`
    and :math:`w_p \times h_p`): the larger of the two directed distances, each the distance from a corner of
    one box :math:`a` to the other box :math:`b`,
    :math:`\sqrt{\max(0, (w_a - w_b)/2)^2 + \max(0, (h_a - h_b)/2)^2}`. It is the :math:`d_H` of the
    chapter's Hausdorff similarity,

    .. math::

       \mathrm{HS}(\mathcal B^t, \mathcal B^p) = 1 - \frac{d_H(\mathcal B^t, \mathcal B^p)}{\ell},
       \qquad \ell = \tfrac12 \sqrt{(\mathcal B^t_w)^2 + (\mathcal B^t_h)^2}"""
    wt, ht, wp, hp = (np.asarray(v, dtype=np.float64) for v in (wt, ht, wp, hp))

    def directed(wa, ha, wb, hb):
        return np.hypot(np.maximum(0, (wa - wb) / 2), np.maximum(0, (ha - hb) / 2))

    return np.maximum(directed(wp, hp, wt, ht), directed(wt, ht, wp, hp))


def fig6_curves(max_factor: float = 8.0, n: int = 141, side: float = 0.25) -> dict[str, pd.DataFrame]:
    """App. C / Fig. 6: cIoU and a Hausdorff similarity between a fixed square target of side ``side`` and
    (a) a box scaled by a factor ``f`` (aspect kept), (b) a box of the same area with its aspect ratio changed
    by ``f`` (``w·f × h/f``), for ``f`` from 1 to ``max_factor``.

    The paper gives no formula for its Hausdorff similarity; we use ``1 − d_H / ℓ`` with ``d_H`` the Hausdorff
    distance of the centred boxes and ``ℓ`` the target's half-diagonal (a fixed normaliser; another one only
    rescales the curve). cIoU is the library's :func:`medeval.metrics.box_overlap.paired_centered_iou`.
    """
    from medeval.metrics.box_overlap import paired_centered_iou

    f = np.linspace(1.0, max_factor, n)
    wt = ht = float(side)
    half_diag = np.hypot(wt, ht) / 2
    out = {}
    for panel, (wp, hp) in {"size": (wt * f, ht * f), "aspect": (wt * f, ht / f)}.items():
        zeros = np.zeros_like(f)
        pred = np.column_stack([zeros, zeros, wp, hp])
        target = np.column_stack([zeros, zeros, np.full_like(f, wt), np.full_like(f, ht)])
        ciou = paired_centered_iou(pred, target, box_format="cxcywh")
        hs = 1 - hausdorff_distance_centred(wt, ht, wp, hp) / half_diag
        out[panel] = pd.DataFrame({"factor": f, "cIoU": ciou, "Hausdorff similarity": hs})
    return out


# ------------------------------------------------------------------------------------------------------
# Table 1 analogue: weakly supervised CNN, boxes from CAMs


def cam_boxes(
    cams: np.ndarray, thresholds=(60, 180), scores: np.ndarray | None = None, min_score: float = 0.0
) -> ImageBoxes:
    """Boxes from class activation maps (paper App. B, after Wang et al. 2017).

    ``cams``: ``(N, K, H, W)`` maps at the image size. Per image, the maps of all K classes are
    min-max normalised *jointly* to 0-255 (our reading of "normalize the heatmaps per image"; a per-class
    normalisation would put boxes of every class in every image), binarised at each threshold, and a box
    is drawn around each 8-connected component; its class is that of the map. ``scores`` (N, K), if
    given, becomes each box's confidence (we pass the image-level class probability); classes with
    ``scores < min_score`` get no boxes (0 = the paper's literal procedure: every class map is boxed).
    Returns top-left ``xywh`` pixel boxes.
    """
    from scipy import ndimage

    cams = np.asarray(cams, dtype=np.float64)
    if cams.ndim != 4:
        raise ValueError(f"cams must have shape (N, K, H, W), got {cams.shape}")
    n, k = cams.shape[:2]
    lo = cams.reshape(n, -1).min(1)[:, None, None, None]
    hi = cams.reshape(n, -1).max(1)[:, None, None, None]
    norm = (cams - lo) / np.where(hi > lo, hi - lo, 1.0) * 255.0
    rows = []
    structure = np.ones((3, 3), bool)
    for i in range(n):
        for c in range(k):
            if scores is not None and scores[i, c] < min_score:
                continue
            for thr in thresholds:
                labelled, count = ndimage.label(norm[i, c] >= thr, structure=structure)
                for sl in ndimage.find_objects(labelled):
                    y0, y1, x0, x1 = sl[0].start, sl[0].stop, sl[1].start, sl[1].stop
                    rows.append((i, c, x0, y0, x1 - x0, y1 - y0, np.nan if scores is None else scores[i, c]))
    arr = np.array(rows, dtype=np.float64).reshape(-1, 7)
    return ImageBoxes.from_arrays(
        arr[:, 2:6],
        arr[:, 1],
        arr[:, 0],
        box_format="xywh",
        n_images=n,
        scores=None if scores is None else arr[:, 6],
        name="CAM boxes",
    )


def phantom_detection_data(params: Params, seed: int):
    """Phantoms of the 8 classes, split by patient into training and test images.

    Returns ``(train_images, train_labels, test_images, test_targets, info)``; the test set keeps only the
    images that have at least one box (as the paper evaluates on the boxed images); ``info`` counts them.
    """
    from medeval.data.chestxray14 import LABELS
    from medeval.data.phantoms.chest import generate_chest_phantoms
    from medeval.data.splits import patient_train_test_split

    n = params.n_train + params.n_test
    ph = generate_chest_phantoms(n, params.image_size, seed=seed, findings=list(CLASSES))
    cols = [LABELS.index(c) for c in CLASSES]
    labels = ph.labels[:, cols].astype(np.float32)
    ((train_idx, test_idx),) = patient_train_test_split(ph.patient_id, test_size=params.n_test / n, seed=seed)
    boxes = ph.boxes[ph.boxes["finding"].isin(CLASSES)]
    test_idx = np.sort(test_idx)
    boxed = np.intersect1d(test_idx, boxes["image"].unique())
    remap = {int(old): new for new, old in enumerate(boxed)}
    tb = boxes[boxes["image"].isin(boxed)]
    targets = ImageBoxes.from_arrays(
        tb[["x", "y", "w", "h"]].to_numpy(np.float64),
        tb["finding"].map({c: i for i, c in enumerate(CLASSES)}).to_numpy(),
        tb["image"].map(remap).to_numpy(),
        box_format="xywh",
        n_images=len(boxed),
        name="phantom boxes",
    )
    info = {
        "data": "phantom",
        "n_train": len(train_idx),
        "n_train_patients": int(np.unique(ph.patient_id[train_idx]).size),
        "n_test": len(boxed),
        "n_test_patients": int(np.unique(ph.patient_id[boxed]).size),
        "n_test_boxes": len(tb),
    }
    return ph.images[train_idx], labels[train_idx], ph.images[boxed], targets, info


def chestxray14_detection_data(params: Params, seed: int):
    """Real ChestX-ray14 (full profile), resized to ``image_size``.

    Test set: the boxed images of the oracle test part (the patient-level split of the whole NIH box list
    with ``oracle_test_fraction`` and ``seed``, as :func:`load_oracle_targets`) that are present in the image
    folder, with their NIH boxes rescaled from 1024 px to ``image_size``. Training set: ``n_train`` images
    drawn at random (``seed``) from the images present of patients without any boxed image (weak supervision:
    image-level labels of the 8 classes only), so no test patient is trained on.

    Returns ``(x_train, y_train, x_test, targets, info)``; ``info`` counts the images and patients used and
    the listed test images missing from the folder (a warning names them; the full release has them all).
    Raises ``DatasetUnavailableError`` naming ``chestxray14-images`` and how to fetch it when absent,
    ``ValueError`` naming ``n_train`` when fewer training images are present.
    """
    from medeval.data.chestxray14 import IMAGE_SIZE, load_boxes, load_labels, patient_id_of
    from medeval.data.manifest import require
    from medeval.data.readers import ChestXray14Images
    from medeval.data.splits import patient_train_test_split

    root = require("chestxray14-images")
    image_dir = root / "images" if (root / "images").is_dir() else root
    labels = load_labels()
    boxes = load_boxes(box_format="xywh")
    present = ChestXray14Images(image_dir, labels).table  # the label table restricted to the images found
    boxed_names = np.array(sorted(boxes["image_index"].unique()))
    boxed_patients = set(patient_id_of(boxed_names).tolist())
    ((_, test_idx),) = patient_train_test_split(
        patient_id_of(boxed_names), test_size=params.oracle_test_fraction, seed=seed
    )
    test_names = boxed_names[np.sort(test_idx)]
    test_table = present[present["image_index"].isin(test_names)].reset_index(drop=True)
    n_missing = len(test_names) - len(test_table)
    if len(test_table) == 0:
        raise FileNotFoundError(
            f"none of the {len(test_names)} boxed test images (e.g. {test_names[0]}) is in {image_dir}"
        )
    if n_missing:
        warnings.warn(
            f"{n_missing} of the {len(test_names)} boxed test images are missing from {image_dir}; "
            f"the detector is evaluated on the {len(test_table)} present",
            stacklevel=2,
        )
    pool = present[~present["patient_id"].isin(boxed_patients)]
    if len(pool) < params.n_train:
        raise ValueError(
            f"n_train={params.n_train} but only {len(pool)} images of patients without boxes are in {image_dir}"
        )
    rng = np.random.default_rng(seed)
    train_table = pool.iloc[np.sort(rng.permutation(len(pool))[: params.n_train])].reset_index(drop=True)
    size = params.image_size
    x_train = ChestXray14Images(image_dir, train_table, require_all=True).images(size=size)
    y_train = train_table[list(CLASSES)].to_numpy(np.float32, copy=True)  # writable (pandas copy-on-write)
    x_test = ChestXray14Images(image_dir, test_table, require_all=True).images(size=size)
    order = {name: i for i, name in enumerate(test_table["image_index"])}
    tb = boxes[boxes["image_index"].isin(order)]
    targets = ImageBoxes.from_arrays(
        tb[["x", "y", "w", "h"]].to_numpy() * (size / IMAGE_SIZE),
        tb["finding"].map({c: i for i, c in enumerate(CLASSES)}).to_numpy(),
        tb["image_index"].map(order).to_numpy(),
        box_format="xywh",
        n_images=len(order),
        name="NIH boxes",
    )
    info = {
        "data": "chestxray14",
        "n_images_found": len(present),
        "n_train": len(train_table),
        "n_train_patients": int(train_table["patient_id"].nunique()),
        "n_train_pool": len(pool),
        "n_test": len(test_table),
        "n_test_patients": int(test_table["patient_id"].nunique()),
        "n_test_listed": len(test_names),
        "n_test_missing": int(n_missing),
        "n_test_boxes": len(tb),
        "train_image_index": train_table["image_index"].tolist(),
        "test_image_index": test_table["image_index"].tolist(),
    }
    return x_train, y_train, x_test, targets, info


def train_cam_detector(params: Params, seed: int) -> dict:
    """Train the weakly supervised multi-label CNN (image-level labels only) and predict CAM boxes.

    Returns ``{"predictions", "targets", "probabilities", "history", "auc", "data"}``: CAM boxes (with the
    image-level class probability as confidence), the test targets, test probabilities (N, 8), the
    per-epoch training loss, the per-class test AUC of the classifier and the data counts (``info`` of
    :func:`phantom_detection_data` / :func:`chestxray14_detection_data`).
    """
    import torch

    from medeval.metrics.curves import roc_auc
    from medeval.models.device import resolve_device
    from medeval.models.multilabel_cnn import MultiLabelCNN
    from medeval.models.training import predict, train_model

    device = resolve_device(params.device)  # before loading: a bad device fails at once, naming `device`
    if params.detector_data == "phantom":
        x_train, y_train, x_test, targets, info = phantom_detection_data(params, seed)
    else:
        x_train, y_train, x_test, targets, info = chestxray14_detection_data(params, seed)
    mean, std = float(x_train.mean()), float(x_train.std()) or 1.0  # training-set statistics (App. B)
    x_train = x_train.astype(np.float32, copy=False)
    x_train -= mean  # in place: the full profile holds n_train images of image_size² float32 in memory
    x_train /= std
    torch.manual_seed(seed)
    model = MultiLabelCNN(len(CLASSES), backbone=params.backbone)
    history = train_model(
        model,
        (x_train[:, None], y_train),
        torch.nn.BCEWithLogitsLoss(),
        epochs=params.epochs,
        batch_size=params.batch_size,
        lr=params.lr,
        weight_decay=params.weight_decay,
        device=device,
        seed=seed,
    )
    xt = ((x_test - mean) / std)[:, None].astype(np.float32)
    probs = 1 / (1 + np.exp(-predict(model, xt, device=device)))
    cams = predict(model, xt, device=device, forward=lambda m, x: m.class_activation_maps(x), batch_size=32)
    preds = cam_boxes(cams, params.cam_thresholds, scores=probs, min_score=params.cam_min_probability)
    present = np.zeros((targets.n_images, len(CLASSES)))
    present[targets.image_ids, targets.labels] = 1
    auc = dict(zip(CLASSES, roc_auc(present.T, probs.T, undefined=np.nan).tolist(), strict=True))
    return {
        "predictions": preds,
        "targets": targets,
        "probabilities": probs,
        "history": history,
        "auc": auc,
        "data": info,
    }


def detector_table(predictions: ImageBoxes, targets: ImageBoxes) -> pd.DataFrame:
    """Table 1 columns per class and Total (%): RoDeO cls, loc, shape, total (pooled over images), acc@30
    and mAP (0.1-0.7; Total = mean over classes, as in the paper), plus the box counts of RoDeO's matching and
    acc@30's confusion counts ``tp@30, fp@30, fn@30, tn@30`` (TN: (image, class) cells without any box)."""
    from medeval.metrics.detection import detection_mean_average_precision

    fmt = targets.box_format
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r = robust_detection_outcome(predictions, targets, box_format=fmt, class_names=CLASSES)
    acc = accuracy_at_iou(predictions, targets, box_format=fmt, class_names=CLASSES, iou_threshold=0.3)
    m_ap = detection_mean_average_precision(predictions, targets, box_format=fmt, class_names=CLASSES)
    table = pd.DataFrame(r.per_class_records())
    table["acc@30"] = np.r_[acc.per_class, acc.mean]
    table["mAP"] = np.r_[m_ap.per_class, m_ap.mean]
    pct = ["classification", "localization", "shape_matching", "total", "acc@30", "mAP"]
    table[pct] = table[pct] * 100
    for name in ("tp", "fp", "fn", "tn"):
        table[f"{name}@30"] = np.r_[acc.counts[name], acc.counts[name].sum()].astype(np.int64)
    return table[["class", *pct, "n_matched", "n_overpredicted", "n_missed", *ACC30_COUNTS]]


#: acc@30's per-class confusion counts in :func:`detector_table`.
ACC30_COUNTS = ("tp@30", "fp@30", "fn@30", "tn@30")
TABLE1_METRICS = ("classification", "localization", "shape_matching", "total", "acc@30", "mAP")


def bootstrap_samples(predictions: ImageBoxes, targets: ImageBoxes, n_bootstrap: int, seed: int) -> pd.DataFrame:
    """:func:`detector_table` on ``n_bootstrap`` resamples of the test images (with replacement; predictions
    follow their image), stacked with a ``resample`` column: the draws behind every bootstrap interval and
    every per-class reading of the chapter's claims."""
    if n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be >= 1, got {n_bootstrap}")
    rng = np.random.default_rng(seed)
    tables = []
    for b in range(n_bootstrap):
        idx = rng.integers(0, targets.n_images, targets.n_images)
        tables.append(detector_table(predictions.subset_images(idx), targets.subset_images(idx)).assign(resample=b))
    return pd.concat(tables, ignore_index=True)


def bootstrap_table(
    predictions: ImageBoxes, targets: ImageBoxes, n_bootstrap: int, seed: int, level: float = 0.95
) -> pd.DataFrame:
    """Percentile bootstrap CIs over test images of every :func:`detector_table` cell (long format:
    class, metric, low, high). Images are resampled with replacement; predictions follow their image."""
    return bootstrap_intervals(bootstrap_samples(predictions, targets, n_bootstrap, seed), level)


def bootstrap_intervals(samples: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    r"""Percentile intervals :math:`\bigl[\hat\theta^{*}_{(\alpha/2)},\ \hat\theta^{*}_{(1-\alpha/2)}\bigr]` (long
    format: class, metric, low, high) of the Table-1 metrics in
    :func:`bootstrap_samples`' output."""
    long = samples.melt(id_vars=["class"], value_vars=list(TABLE1_METRICS), var_name="metric")
    a = (1 - level) / 2
    ci = long.groupby(["class", "metric"], sort=False)["value"].quantile([a, 1 - a]).unstack()
    ci.columns = ["low", "high"]
    return ci.reset_index()


def paper_table1_consistency(table: pd.DataFrame | None = None, tolerance: float = 0.15) -> pd.DataFrame:
    """Recompute each row's RoDeO total as the harmonic mean (Eq. 6) of its sub-scores.

    Default: the paper's Table 1; rows whose reported total differs by more than ``tolerance`` points
    are flagged (the paper's Atelectasis row: 28.4 reported, 12.0 recomputed). Also usable on our table.
    """
    t = (PAPER_TABLE1 if table is None else table).copy()
    subs = t[["classification", "localization", "shape_matching"]].to_numpy(np.float64)
    with np.errstate(divide="ignore"):
        hm = 3 / (1 / subs).sum(1)
    t["total_recomputed"] = hm
    t["difference"] = t["total"] - hm
    t["consistent"] = np.abs(t["difference"]) <= tolerance
    return t[
        [
            "class",
            "classification",
            "localization",
            "shape_matching",
            "total",
            "total_recomputed",
            "difference",
            "consistent",
        ]
    ]


def paper_total_rows() -> dict[str, float]:
    """How the paper's Total row is formed: mean of the class rows (acc@30, mAP) vs pooled (RoDeO)."""
    cls_rows = PAPER_TABLE1[PAPER_TABLE1["class"] != "Total"]
    total = PAPER_TABLE1[PAPER_TABLE1["class"] == "Total"].iloc[0]
    return {
        f"{col}_mean_of_classes": float(cls_rows[col].mean())
        for col in ["classification", "localization", "shape_matching", "total", "acc@30", "mAP"]
    } | {
        f"{col}_reported_total": float(total[col])
        for col in ["classification", "localization", "acc@30", "mAP"]
    }


# ------------------------------------------------------------------------------------------------------
# the chapter's run


def detector_quality(auc: dict[str, float]) -> dict:
    """The detector's quality band: the mean, lowest and highest per-class test AUC of its image-level classifier,
    and whether the mean lies above :data:`AUC_FLOOR` (the claims gate each class on its own AUC)."""
    values = pd.Series(auc, dtype=float)
    return {"measure": "per-class test AUC of the image-level classifier", "mean": float(values.mean()),
            "min": float(values.min()), "max": float(values.max()), "floor_on_mean": AUC_FLOOR,
            "passes_floor": bool(values.mean() > AUC_FLOOR)}


@dataclass
class Results:
    """Everything chapter 2 computes for one parameter set (:func:`run`); the notebook shows and records it, and
    :func:`medeval.experiments.rodeo_claims.claim_inputs` reads it.

    Data: ``box_summary`` (:func:`box_list_summary` of the whole NIH box list); ``targets`` (the oracle test half,
    :func:`load_oracle_targets`); ``cells`` (its :func:`oracle_target_cells`) and ``empty_cell_share`` (the share
    of its (image, class) cells without a box, the true negatives of acc@IoU).

    Fig. 2: ``shift_maps`` (:func:`shift_map`: the offsets and four score maps) and ``fig2`` (its read-outs,
    :func:`shift_probe`).

    Oracle figures: ``oracle`` ({figure: one row per (setting, run)}, :func:`run_oracle_figures`) and
    ``oracle_runs`` ({figure: its number of rows}); ``fig6`` (the closed-form curves of App. C, :func:`fig6_curves`);
    ``eq8_literal_loc`` ({largest position bias: mean RoDeO loc with Eq. 8 as printed},
    :func:`literal_eq8_localization`); ``all_wrong_control`` (every metric with every box moved off its object,
    :func:`all_wrong_control`: the control of the acc@IoU readings).

    Table 1 analogue: ``detector`` (:func:`train_cam_detector`: CAM boxes, targets, probabilities, loss history,
    per-class AUC and data counts); ``table1`` (:func:`detector_table` of its boxes, % per class and Total);
    ``detector_quality`` (:func:`detector_quality`) and ``classes_below_floor`` (the classes whose AUC is not above
    :data:`AUC_FLOOR`); ``table1_boot`` (:func:`bootstrap_samples`, None when ``n_bootstrap`` is 0) and
    ``table1_ci`` (their :func:`bootstrap_intervals`, or None); ``paper_table1_check``
    (:func:`paper_table1_consistency` of the paper's Table 1).
    """

    box_summary: dict
    targets: ImageBoxes
    cells: dict[str, int]
    empty_cell_share: float
    shift_maps: dict[str, np.ndarray]
    fig2: dict[str, float]
    oracle: dict[str, pd.DataFrame]
    oracle_runs: dict[str, int]
    fig6: dict[str, pd.DataFrame]
    eq8_literal_loc: dict[float, float]
    all_wrong_control: dict
    detector: dict
    table1: pd.DataFrame
    detector_quality: dict
    classes_below_floor: list[str]
    table1_boot: pd.DataFrame | None
    table1_ci: pd.DataFrame | None
    paper_table1_check: pd.DataFrame


def run(P: Params, cache_dir=None) -> Results:
    """Every computation of chapter 2 for the parameters ``P`` (:class:`Results`): the box list and its oracle test
    half, Fig. 2's shift map, the oracle figures (one grid through :func:`medeval.runtime.grid.run_grid`, cached in
    the sub-folder ``oracle-figures`` of ``cache_dir``; None: no cache), Fig. 6's closed forms, the weakly supervised
    detector with its Table 1, bootstrap intervals and quality band, the consistency of the paper's Table 1, Eq. 8 as
    printed and the all-wrong control."""
    summary = box_list_summary()
    targets, _ = load_oracle_targets(P.oracle_test_fraction, P.seed)
    cells = oracle_target_cells(targets)
    maps = shift_map(P.shift_grid_size, P.shift_range)
    oracle = run_oracle_figures(P, P.seed, cache_dir=None if cache_dir is None else Path(cache_dir) / "oracle-figures",
                                scheduler=P.scheduler, max_workers=P.max_workers)
    fig6 = fig6_curves()
    detector = train_cam_detector(P, P.seed)
    table1 = detector_table(detector["predictions"], detector["targets"])
    boot = (bootstrap_samples(detector["predictions"], detector["targets"], P.n_bootstrap, P.seed)
            if P.n_bootstrap > 0 else None)
    return Results(
        box_summary=summary, targets=targets, cells=cells,
        empty_cell_share=1 - cells["n_occupied_cells"] / cells["n_cells"],
        shift_maps=maps, fig2=shift_probe(maps), oracle=oracle,
        oracle_runs={f: int(len(frame)) for f, frame in oracle.items()}, fig6=fig6,
        eq8_literal_loc=literal_eq8_localization(targets, [max(P.position_bias)], P.seed),
        all_wrong_control=all_wrong_control(targets), detector=detector, table1=table1,
        detector_quality=detector_quality(detector["auc"]),
        classes_below_floor=[c for c, v in detector["auc"].items() if not v > AUC_FLOOR],
        table1_boot=boot, table1_ci=None if boot is None else bootstrap_intervals(boot),
        paper_table1_check=paper_table1_consistency(),
    )
