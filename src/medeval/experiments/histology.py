"""Shared units of chapter 4 (Reshma 2021): slide-phantom data, one segmentation run, one classification run.

Every function is a pure function of its (JSON-serialisable) arguments and a seed, so runs go through
:func:`medeval.runtime.grid.run_grid` (cached, resumable, local processes or Dask).

Pipeline (thesis §3.2, §4.5.1.2), scaled down to the CPU:

1. *Data.* ``n_train_slides`` / ``n_test_slides`` slide phantoms (:mod:`medeval.data.phantoms.slide`: mask
   0 = O, 1 = ¬C, 2 = C). Training patches of size ``patch_size`` are extracted with stride ``patch_size / 2`` and categorised with
   the thesis's Table 4.1 (:func:`medeval.data.patching.categorize_patches`).
2. *Training set.* :func:`medeval.data.training_sets.build_training_set` draws the distribution's exact counts
   (U from the available C and ¬C patches), then a random 80/20 train/validation split (the validation part is
   held out as in the thesis; it is not used for early stopping).
3. *Model.* U-Net (3 classes, softmax, categorical cross-entropy, Adam) or the patch classifier (binary).
4. *Inference.* Overlapping patches of size ``patch_size`` with stride ``r = patch_size / 2``; the central ``r x r`` probabilities
   of each patch are stitched into a full map (the slide is reflect-padded by ``patch_size / 4`` so the central regions tile
   it exactly).
5. *Evaluation.* Method 1 on the argmax map for every evaluation tile size ``e``; method 2 (class-wise max over
   each inference patch's central region) gives one C-score and one argmax label per patch; the patch's ground
   truth is "C present in the central region" (Table 4.1, binary rule).
"""

from __future__ import annotations

import dataclasses
import functools
import zlib
from dataclasses import dataclass

import numpy as np
from torch.utils.data import Dataset as _TorchDataset

from medeval.data import training_sets as ts
from medeval.metrics.curves import confusion_rates
from medeval.metrics.segmentation import (
    central_region_class_max,
    false_positives_in_true_tiles,
    patch_based_evaluation,
)
from medeval.models.device import limit_cpu_threads

CLASS_INDEX = {"O": 0, "notC": 1, "C": 2}
CLASS_NAMES = ("O", "notC", "C")


# --------------------------------------------------------------------------------------------------
# data


@dataclass(frozen=True)
class SlideSet:
    images: np.ndarray  # (n, H, W, 3) uint8
    masks: np.ndarray  # (n, H, W) uint8: 0 = O, 1 = notC, 2 = C


@functools.lru_cache(maxsize=8)
def slide_set(n_slides: int, slide_size: int, seed: int, layout: tuple = ()) -> SlideSet:
    """``n_slides`` slide phantoms of ``slide_size`` x ``slide_size`` pixels; slide ``i`` uses seed ``seed + i``.

    ``layout`` holds extra keyword arguments of :func:`medeval.data.phantoms.slide.slide_layout` as sorted
    ``(name, value)`` pairs (hashable, for the cache); empty = the phantom's defaults."""
    from medeval.data.phantoms.slide import generate_slide

    if n_slides < 1:
        raise ValueError(f"n_slides must be >= 1, got {n_slides}")
    kwargs = dict(layout)
    slides = [generate_slide(slide_size, slide_size, seed=int(seed) + i, **kwargs) for i in range(n_slides)]
    images = np.stack([np.asarray(s.image, dtype=np.uint8) for s in slides])
    masks = np.stack([np.asarray(s.mask, dtype=np.uint8) for s in slides])
    return SlideSet(images, masks)


def slide_layout_key(data: dict) -> tuple:
    """The phantom layout arguments of a data configuration (its optional ``"slide_layout"`` dict, e.g.
    ``{"germinal_similarity": 0.6}``) as the sorted, hashable pairs :func:`slide_set` takes."""
    return tuple(sorted((str(k), v) for k, v in (data.get("slide_layout") or {}).items()))


def train_test_slides(data: dict) -> tuple[SlideSet, SlideSet]:
    """Training and test slides of a data configuration (disjoint seeds)."""
    layout = slide_layout_key(data)
    train = slide_set(data["n_train_slides"], data["slide_size"], data["seed"] * 10_000, layout)
    test = slide_set(data["n_test_slides"], data["slide_size"], data["seed"] * 10_000 + 5_000, layout)
    return train, test


def _grid_patches(arr: np.ndarray, patch_size: int, stride: int) -> np.ndarray:
    """All ``patch_size`` windows of ``arr`` (n, H, W, ...) at ``stride``, shape (n * k, patch_size, patch_size, ...)."""
    n, h, w = arr.shape[:3]
    rows = range(0, h - patch_size + 1, stride)
    cols = range(0, w - patch_size + 1, stride)
    out = [arr[:, r : r + patch_size, c : c + patch_size] for r in rows for c in cols]
    out = np.stack(out, axis=1)  # (n, k, patch_size, patch_size, ...)
    return out.reshape(n * len(rows) * len(cols), *out.shape[2:])


@functools.lru_cache(maxsize=8)
def _patch_table(n_slides: int, slide_size: int, seed: int, patch_size: int, stride: int, layout: tuple = ()):
    slides = slide_set(n_slides, slide_size, seed, layout)
    images = _grid_patches(slides.images, patch_size, stride)
    masks = _grid_patches(slides.masks, patch_size, stride)
    return images, masks


def training_patches(data: dict):
    """Training patches ``(images (N, patch_size, patch_size, 3) uint8, masks (N, patch_size, patch_size) uint8, categories (N,) str)``.

    Systematic overlapping extraction with stride ``patch_size / 2`` from pixel (0, 0) (thesis §3.2.1) and Table 4.1
    categories.
    """
    from medeval.data.patching import categorize_patches

    size = data["patch_size"]
    images, masks = _patch_table(data["n_train_slides"], data["slide_size"], data["seed"] * 10_000, size, size // 2,
                                 slide_layout_key(data))
    return images, masks, np.asarray(categorize_patches(masks)).astype(str)


def binary_patch_labels(masks: np.ndarray, central_size: int) -> np.ndarray:
    """PCam rule (Table 4.1, binary): a patch is C when its central ``r x r`` region holds a C pixel."""
    from medeval.data.patching import central_region_labels

    return np.asarray(central_region_labels(masks, central_size), dtype=bool)


def binary_categories(masks: np.ndarray, central_size: int) -> np.ndarray:
    return np.where(binary_patch_labels(masks, central_size), "C", "notC")


def _to_tensor_images(images: np.ndarray) -> np.ndarray:
    return (images.astype(np.float32) / 255.0).transpose(0, 3, 1, 2)  # thesis: pixel / 255 into [0, 1]


# --------------------------------------------------------------------------------------------------
# inference


def stitched_probabilities(model, image: np.ndarray, patch_size: int, device: str, batch_size: int = 64):
    """Sliding-window inference of a segmentation model on one slide (thesis §3.2.3, Fig. 3.4).

    Returns ``(prob_map (3, H, W) float32, patch_scores (k, 3))``: the stitched central-region probabilities and
    method 2's class-wise maxima over each inference patch's central region (``r = patch_size / 2``). ``H`` and ``W`` must
    be multiples of ``r``.
    """
    from medeval.models.training import predict
    from medeval.models.unet import softmax_probabilities

    size = patch_size
    r = size // 2
    h, w = image.shape[:2]
    if h % r or w % r:
        raise ValueError(f"slide size {(h, w)} must be a multiple of the central region size {r}")
    pad = r // 2
    padded = np.pad(image, ((pad, pad), (pad, pad), (0, 0)), mode="reflect")
    patches = _grid_patches(padded[None], size, r)
    probs = predict(model, _to_tensor_images(patches), device=device, batch_size=batch_size,
                    forward=softmax_probabilities, amp=False)
    centre = probs[:, :, pad : pad + r, pad : pad + r]
    n_r, n_c = h // r, w // r
    prob_map = centre.reshape(n_r, n_c, 3, r, r).transpose(2, 0, 3, 1, 4).reshape(3, h, w)
    return prob_map.astype(np.float32), central_region_class_max(probs, r)


def _centre_truth(mask: np.ndarray, r: int) -> np.ndarray:
    h, w = mask.shape
    tiles = mask.reshape(h // r, r, w // r, r).transpose(0, 2, 1, 3).reshape(-1, r * r)
    return (tiles == CLASS_INDEX["C"]).any(axis=1)


# --------------------------------------------------------------------------------------------------
# one segmentation run


SELECT_EPOCH = ("val_loss", "val_macro_recall")


def _training_options(model: dict, x: np.ndarray, val_images: np.ndarray, val_masks: np.ndarray,
                      device: str) -> tuple[dict, dict]:
    """The opt-in training options of a segmentation ``model`` configuration, as keyword arguments of
    :class:`~medeval.models.unet.UNet` and :func:`~medeval.models.training.train_model`. Each is absent by default
    (the run then trains exactly as before):

    * ``norm`` (``"batch"`` default, ``"group"``, ``"none"``) and ``input_standardise`` (standardise each input
      channel by the training patches' mean and std): :class:`~medeval.models.unet.UNet`;
    * ``warmup_epochs``, ``max_grad_norm``, ``recalibrate_bn``: :func:`~medeval.models.training.train_model`;
    * ``select_epoch``: keep the epoch with the best score on the run's 20 % validation split (held out by the
      80/20 split, thesis §4.5.1.2): ``"val_loss"`` (lowest mean per-pixel cross-entropy) or
      ``"val_macro_recall"`` (highest unweighted mean over O, ¬C, C of the per-pixel argmax recall).
    """
    import torch

    from medeval.models.training import predict
    from medeval.models.unet import segmentation_loss

    net_kw: dict = {}
    if model.get("norm") is not None:
        net_kw["norm"] = model["norm"]
    if model.get("input_standardise"):
        net_kw["input_mean"] = x.mean(axis=(0, 2, 3)).tolist()
        net_kw["input_std"] = np.maximum(x.std(axis=(0, 2, 3)), 1e-6).tolist()
    train_kw = {k: model[k] for k in ("warmup_epochs", "max_grad_norm", "recalibrate_bn") if model.get(k)}
    select = model.get("select_epoch")
    if select is not None:
        if select not in SELECT_EPOCH:
            raise ValueError(f"select_epoch must be one of {SELECT_EPOCH} or None, got {select!r}")
        if len(val_masks) == 0:
            raise ValueError("select_epoch needs a non-empty validation split")
        xv = _to_tensor_images(val_images)
        yv = torch.as_tensor(val_masks.astype(np.int64))

        def score(net) -> float:
            logits = torch.as_tensor(predict(net, xv, device=device, amp=False))
            if select == "val_loss":
                return -float(segmentation_loss(logits, yv))
            pred = logits.argmax(1)
            recalls = [float((pred[yv == k] == k).float().mean()) for k in range(3) if bool((yv == k).any())]
            return float(np.mean(recalls))

        train_kw["select_epoch"] = score
    return net_kw, train_kw


def segmentation_run(
    *,
    distribution: str,
    run: int,
    data: dict,
    model: dict,
    tile_sizes: list[int],
    unit_round_down_to: int | None = None,
    unit_cap: int | None = None,
    preliminary_fraction: float = 1.0,
    shortfall: str = "use_available",
    device: str = "cpu",
    keep_heatmap: bool = False,
) -> dict:
    """Train one U-Net on one training distribution and evaluate it on the test slides.

    ``distribution`` names a preliminary (Table 4.3) or hypothesis (Tables 4.5-4.8) distribution; ``run``
    re-draws the training subset, the 80/20 split and the initialisation. ``unit_cap`` caps U (a CPU-scale
    deviation: the thesis uses U from the data); ``preliminary_fraction`` subsamples every category of a Table 4.3
    set by the same fraction (keeping its composition) so the Natural set stays trainable on a CPU. Returns a dict with the training-set
    bookkeeping, method-1 P/R/F per class and tile size, method-2 labels/scores/argmax per test patch, and
    optionally the C-probability heatmap of the first test slide.

    ``model`` may also hold the opt-in training options of :func:`_training_options` (``recalibrate_bn``,
    ``warmup_epochs``, ``max_grad_norm``, ``select_epoch``, ``norm``, ``input_standardise``); without them the run
    is the same as before they existed.
    """
    from medeval.models.training import train_model
    from medeval.models.unet import segmentation_loss

    setup = _segmentation_setup(distribution=distribution, run=run, data=data, model=model,
                                unit_round_down_to=unit_round_down_to, unit_cap=unit_cap,
                                preliminary_fraction=preliminary_fraction, shortfall=shortfall, device=device)
    history = train_model(setup["net"], setup["train"], segmentation_loss, epochs=model["epochs"],
                          batch_size=model["batch_size"], lr=model["lr"], device=device, seed=setup["seed"], amp=False,
                          **setup["train_kw"])
    return _segmentation_evaluate(setup, history, data=data, tile_sizes=tile_sizes, device=device,
                                  keep_heatmap=keep_heatmap)


#: training options a stacked ensemble cannot apply member by member (each needs a per-member decision)
ENSEMBLE_UNSUPPORTED = ("max_grad_norm", "select_epoch")


def segmentation_runs(
    *,
    distribution: str,
    runs: list[int],
    data: dict,
    model: dict,
    tile_sizes: list[int],
    unit_round_down_to: int | None = None,
    unit_cap: int | None = None,
    preliminary_fraction: float = 1.0,
    shortfall: str = "use_available",
    device: str = "cpu",
    keep_heatmap_runs: list[int] = (),
) -> list[dict]:
    """:func:`segmentation_run` for several ``runs`` of one ``distribution``, their U-Nets trained together as one
    stacked ensemble (:func:`medeval.models.ensemble.train_ensemble`): each run draws its own training subset,
    split, initialisation and data order from its own seed, exactly as alone, and is evaluated alone. Returns one
    result per run, in the order of ``runs`` (``keep_heatmap_runs``: the runs whose heatmap is kept).

    The runs of one distribution hold equally many training patches (the distribution fixes every category's
    count), which the ensemble needs; the options of :data:`ENSEMBLE_UNSUPPORTED` are refused.
    """
    from medeval.models.ensemble import train_ensemble
    from medeval.models.unet import segmentation_loss

    if not runs:
        raise ValueError("runs: give at least one run")
    bad = [k for k in ENSEMBLE_UNSUPPORTED if model.get(k)]
    if bad:
        raise ValueError(f"model options {bad} need one decision per run: train these runs one at a time "
                         "(ensemble_size 1)")
    setups = [_segmentation_setup(distribution=distribution, run=r, data=data, model=model,
                                  unit_round_down_to=unit_round_down_to, unit_cap=unit_cap,
                                  preliminary_fraction=preliminary_fraction, shortfall=shortfall, device=device)
              for r in runs]
    histories = train_ensemble([s["net"] for s in setups], [s["train"] for s in setups], segmentation_loss,
                               epochs=model["epochs"], seeds=[s["seed"] for s in setups],
                               batch_size=model["batch_size"], lr=model["lr"], device=device, amp=False,
                               **setup_ensemble_options(setups[0]["train_kw"]))
    return [_segmentation_evaluate(s, h, data=data, tile_sizes=tile_sizes, device=device,
                                   keep_heatmap=r in set(keep_heatmap_runs))
            for s, h, r in zip(setups, histories, runs, strict=True)]


def setup_ensemble_options(train_kw: dict) -> dict:
    """The keyword arguments of :func:`~medeval.models.ensemble.train_ensemble` among a run's training options."""
    return {k: v for k, v in train_kw.items() if k in ("warmup_epochs", "recalibrate_bn")}


def _segmentation_setup(*, distribution, run, data, model, unit_round_down_to, unit_cap, preliminary_fraction,
                        shortfall, device) -> dict:
    """A segmentation run up to its training: the training-set draw, the 80/20 split, the seeded U-Net and its
    training options (``seed``, ``net``, ``train`` = (inputs, masks), ``train_kw`` and the bookkeeping)."""
    import torch

    from medeval.models.unet import UNet

    dist = {**ts.PRELIMINARY_DISTRIBUTIONS, **ts.HYPOTHESIS_DISTRIBUTIONS}.get(distribution)
    if dist is None:
        raise ValueError(f"distribution must be one of the Table 4.3 / 4.5-4.8 names, got {distribution!r}")
    seed = int(data["seed"]) * 1_000 + int(run)
    rng = np.random.default_rng([seed, zlib.crc32(distribution.encode())])
    limit_cpu_threads(device)
    images, masks, cats = training_patches(data)
    counts = ts.category_counts(cats)
    unit = None
    if dist.uses_unit:
        unit = ts.unit_size(counts, round_down_to=unit_round_down_to)
        unit = min(unit, unit_cap) if unit_cap else unit
    elif not 0 < preliminary_fraction <= 1:
        raise ValueError(f"preliminary_fraction must be in (0, 1], got {preliminary_fraction!r}")
    available = np.arange(cats.size)
    if not dist.uses_unit and preliminary_fraction < 1:
        keep = [rng.choice(np.flatnonzero(cats == k), int(round(preliminary_fraction * np.sum(cats == k))),
                           replace=False) for k in ts.CATEGORIES]
        available = np.sort(np.concatenate(keep))
    tset = ts.build_training_set(cats[available], dist, unit, seed=rng, shortfall=shortfall)
    tset.indices = available[tset.indices]
    train_idx, val_idx = ts.train_validation_split(tset.size, seed=rng)
    idx = tset.indices[train_idx]
    x = _to_tensor_images(images[idx])
    y = masks[idx].astype(np.int64)
    net_kw, train_kw = _training_options(model, x, images[tset.indices[val_idx]], masks[tset.indices[val_idx]],
                                         device)
    torch.manual_seed(seed)
    net = UNet(base_channels=model["base_channels"], depth=model["depth"], **net_kw)
    return {"distribution": distribution, "run": int(run), "seed": seed, "unit": unit, "tset": tset,
            "train_size": int(idx.size), "net": net, "train": (x, y), "train_kw": train_kw}


def _segmentation_evaluate(setup: dict, history: list[float], *, data: dict, tile_sizes: list[int], device: str,
                           keep_heatmap: bool) -> dict:
    """A trained segmentation run on the test slides: method 1 per tile size, method 2 per inference patch."""
    net, tset = setup["net"], setup["tset"]
    _, test = train_test_slides(data)
    size = data["patch_size"]
    prob_maps, scores, truths = [], [], []
    for img, msk in zip(test.images, test.masks, strict=True):
        pm, ps = stitched_probabilities(net, img, size, device)
        prob_maps.append(pm)
        scores.append(ps)
        truths.append(_centre_truth(msk, size // 2))
    pred_masks = [pm.argmax(0) for pm in prob_maps]
    method1 = {}
    for e in tile_sizes:
        ev = patch_based_evaluation(pred_masks, list(test.masks), e, classes=(0, 1, 2))
        # per class, the pixel-level false positives and those inside a truly positive tile of side e, summed over
        # the test slides: why method-1 precision moves with e
        fp = {k: np.sum([false_positives_in_true_tiles(p, t, e, k) for p, t in zip(pred_masks, test.masks,
                                                                                   strict=True)], axis=0)
              for k in CLASS_INDEX.values()}
        method1[int(e)] = {
            name: {
                "recall": float(ev.mean_recall[k]),
                "precision": float(ev.mean_precision[k]),
                "f_measure": float(ev.mean_f_measure[k]),
                "n_undefined_recall": int(ev.n_undefined_recall[k]),
                "n_undefined_precision": int(ev.n_undefined_precision[k]),
                "fp_pixels": int(fp[k][0]),
                "fp_in_true_tiles": int(fp[k][1]),
            }
            for name, k in CLASS_INDEX.items()
        }
    patch_scores = np.concatenate(scores)
    y_true = np.concatenate(truths)
    argmax_c = patch_scores.argmax(1) == CLASS_INDEX["C"]
    return {
        "distribution": setup["distribution"],
        "run": setup["run"],
        "unit": setup["unit"],
        "requested": tset.requested,
        "taken": tset.taken,
        "train_size": setup["train_size"],
        "shortfalls": tset.shortfalls,
        "loss_history": history,
        "method1": method1,
        "y_true": y_true,
        "score_c": patch_scores[:, CLASS_INDEX["C"]].astype(np.float32),
        "argmax_c": argmax_c,
        "heatmap": prob_maps[0][CLASS_INDEX["C"]] if keep_heatmap else None,
    }


def argmax_precision(y_true, predicted_positive) -> float:
    r"""Precision of the argmax decision (NaN when nothing is predicted positive).

    A patch is predicted :math:`\mathbb{C}` when :math:`s^{\mathbb{C}}_{ij}` is its largest class score, and
    :math:`\mathrm{Precision} = \frac{TP}{TP + FP}` over the patches."""
    y = np.asarray(y_true, dtype=bool)
    p = np.asarray(predicted_positive, dtype=bool)
    return float(confusion_rates(np.sum(y & p), np.sum(~y & p), np.sum(y & ~p), np.sum(~y & ~p)).precision)


# --------------------------------------------------------------------------------------------------
# one classification run (PCam-like binary patches)


def classification_test_sets(data: dict, cls: dict) -> dict:
    """Fixed binary test sets from the test slides: ``balanced`` (1:1, like the PCam test split) and
    ``imbalanced`` (C:notC = 1 : ``cls['imbalance']``, like the CAMELYON16 test patches).

    Patches of size ``patch_size`` at stride ``cls['test_stride']``; labels by the central-region rule. The imbalanced
    set keeps every negative and as many positives as the ratio allows (or all positives and a subsample of
    negatives); the balanced set pairs every positive with a random negative.
    """
    size = data["patch_size"]
    images, masks = _patch_table(data["n_test_slides"] + cls["extra_test_slides"], data["slide_size"],
                                 data["seed"] * 10_000 + 5_000, size, cls["test_stride"], slide_layout_key(data))
    y = binary_patch_labels(masks, cls["central_size"])
    rng = np.random.default_rng(data["seed"] + 17)
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    if pos.size < 2 or neg.size < 2:
        raise ValueError("the test slides hold too few positive or negative patches for the classification study")
    n_bal = min(pos.size, neg.size)
    balanced = np.sort(np.r_[rng.choice(pos, n_bal, replace=False), rng.choice(neg, n_bal, replace=False)])
    ratio = int(cls["imbalance"])
    n_pos_imb = min(pos.size, neg.size // ratio)
    imbalanced = np.sort(np.r_[rng.choice(pos, n_pos_imb, replace=False),
                               rng.choice(neg, n_pos_imb * ratio, replace=False)])
    return {"images": images, "labels": y, "balanced": balanced, "imbalanced": imbalanced}


def classification_run(*, distribution: str, run: int, data: dict, cls: dict, device: str = "cpu") -> dict:
    """Train one patch classifier on a binary distribution (E2.a/b/c, En, Ep) and score both test sets.

    Training patches: the slide-phantom training patches (stride ``patch_size / 2``) with the binary central-region label;
    U = floor(min(#C, #notC) / 3) as in §5.5.1. Returns labels and C-probabilities on the balanced and the
    imbalanced test sets and the argmax decision.
    """
    images, masks, _ = training_patches(data)
    test = classification_test_sets(data, cls)
    return train_and_score_patch_classifier(distribution=distribution, run=run, data=data, cls=cls, device=device,
                                            train_images=images, train_masks=masks, test=test)


def train_and_score_patch_classifier(*, distribution: str, run: int, data: dict, cls: dict, device: str,
                                     train_images: np.ndarray, train_masks: np.ndarray, test: dict) -> dict:
    """The body of :func:`classification_run` on given patches: the training-set draw (U, the binary distribution,
    the validation split), the seeded network and its training, then the scores on ``test`` (a dict as
    :func:`classification_test_sets` returns: ``images``, ``labels``, ``balanced``, ``imbalanced``)."""
    from medeval.models.training import train_model
    from medeval.models.unet import classification_loss

    setup = _classifier_setup(distribution=distribution, run=run, cls=cls, data=data, device=device,
                              train_images=train_images, train_masks=train_masks)
    train_model(setup["net"], setup["train"], classification_loss, epochs=cls["epochs"], batch_size=cls["batch_size"],
                lr=cls["lr"], device=device, seed=setup["seed"], amp=False)
    return _score_patch_classifier(setup, test, device)


def classification_runs(*, distribution: str, runs: list[int], data: dict, cls: dict, device: str = "cpu") -> list:
    """:func:`classification_run` for several ``runs`` of one binary ``distribution``, their classifiers trained
    together as one stacked ensemble (:func:`medeval.models.ensemble.train_ensemble`; each run exactly as alone)."""
    from medeval.models.ensemble import train_ensemble
    from medeval.models.unet import classification_loss

    if not runs:
        raise ValueError("runs: give at least one run")
    images, masks, _ = training_patches(data)
    test = classification_test_sets(data, cls)
    setups = [_classifier_setup(distribution=distribution, run=r, cls=cls, data=data, device=device,
                                train_images=images, train_masks=masks) for r in runs]
    train_ensemble([s["net"] for s in setups], [s["train"] for s in setups], classification_loss,
                   epochs=cls["epochs"], seeds=[s["seed"] for s in setups], batch_size=cls["batch_size"], lr=cls["lr"],
                   device=device, amp=False)
    return [_score_patch_classifier(s, test, device) for s in setups]


def _classifier_setup(*, distribution, run, cls, data, device, train_images, train_masks) -> dict:
    """A classification run up to its training: the binary training-set draw, the split and the seeded network."""
    import torch

    from medeval.models.unet import PatchClassifier

    dist = ts.BINARY_DISTRIBUTIONS.get(distribution)
    if dist is None:
        raise ValueError(f"distribution must be one of {list(ts.BINARY_DISTRIBUTIONS)}, got {distribution!r}")
    seed = int(data["seed"]) * 1_000 + 500 + int(run)
    rng = np.random.default_rng([seed, zlib.crc32(distribution.encode())])
    limit_cpu_threads(device)
    cats = binary_categories(train_masks, cls["central_size"])
    unit = ts.unit_size(ts.category_counts(cats))
    unit = min(unit, cls["unit_cap"]) if cls.get("unit_cap") else unit
    tset = ts.build_training_set(cats, dist, unit, seed=rng)
    train_idx, _ = ts.train_validation_split(tset.size, seed=rng)
    idx = tset.indices[train_idx]
    x = _to_tensor_images(train_images[idx])
    y = (cats[idx] == "C").astype(np.int64)
    torch.manual_seed(seed)
    net = PatchClassifier(base_channels=cls["base_channels"], n_blocks=cls["n_blocks"])
    return {"distribution": distribution, "run": int(run), "seed": seed, "unit": int(unit), "taken": tset.taken,
            "train_size": int(idx.size), "net": net, "train": (x, y)}


def _score_patch_classifier(setup: dict, test: dict, device: str) -> dict:
    """A trained classifier's C-probabilities and argmax decisions on the balanced and imbalanced test sets."""
    from medeval.models.training import predict

    out = {k: setup[k] for k in ("distribution", "run", "unit", "taken", "train_size")}
    all_idx = np.union1d(test["balanced"], test["imbalanced"])
    # uint8 in memory, divided by 255 one batch at a time (the same float32 values as _to_tensor_images), so that
    # scoring a large test set costs 3 bytes per pixel instead of 24
    probs = predict(setup["net"], uint8_nchw(test["images"][all_idx]), device=device, batch_size=256,
                    forward=uint8_softmax_probabilities, amp=False)
    lookup = np.searchsorted(all_idx, np.arange(len(test["images"])))
    for name in ("balanced", "imbalanced"):
        rows = lookup[test[name]]
        out[name] = {
            "y_true": np.asarray(test["labels"][test[name]], dtype=bool),
            "score_c": probs[rows, 1].astype(np.float32),
            "argmax_c": probs[rows].argmax(1) == 1,
        }
    return out


# --------------------------------------------------------------------------------------------------
# real patches: uint8 in memory, float only per batch; one streaming pass that scores several models


class UInt8PatchDataset(_TorchDataset):
    """``(images (N, H, W, 3) uint8, labels (N,))`` as a torch Dataset of ``(float CHW image in [0, 1], label)``.

    Pixels are divided by 255 (thesis §3.2.2) one item at a time, so a 175,000-patch PCam training set stays
    4.8 GB of uint8 instead of 19 GB of float32.
    """

    def __init__(self, images: np.ndarray, labels: np.ndarray):
        images = np.asarray(images)
        labels = np.asarray(labels)
        if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8:
            raise ValueError(f"images must be (N, H, W, 3) uint8, got {images.shape} {images.dtype}")
        if labels.shape != (images.shape[0],):
            raise ValueError(f"labels must have shape ({images.shape[0]},), got {labels.shape}")
        self.images, self.labels = images, labels.astype(np.int64)

    def __len__(self) -> int:
        return int(self.images.shape[0])

    def __getitem__(self, i):
        import torch

        x = torch.from_numpy(np.ascontiguousarray(self.images[i].transpose(2, 0, 1))).float().div_(255.0)
        return x, int(self.labels[i])


def uint8_softmax_probabilities(model, x):
    """:func:`medeval.models.unet.softmax_probabilities` of uint8-valued NCHW batches (divided by 255 first)."""
    from medeval.models.unet import softmax_probabilities

    return softmax_probabilities(model, x / 255.0)


def uint8_nchw(images: np.ndarray):
    """(N, H, W, 3) uint8 numpy -> (N, 3, H, W) uint8 torch view (no copy, no float)."""
    import torch

    return torch.from_numpy(np.asarray(images)).permute(0, 3, 1, 2)


def score_patch_stream(models: list, batches, n: int, device: str = "auto", amp: bool = True,
                       prefetch_batches: int = 2) -> np.ndarray:
    """C-probabilities of every model on every streamed patch, reading the patches once.

    ``batches`` yields ``(positions (B,), images (B, H, W, 3) uint8)`` (e.g.
    :func:`medeval.data.camelyon16.iter_patch_batches`); returns float32 ``(len(models), n)`` with row ``k`` the
    softmax probability of class 1 under ``models[k]``. Reading runs ``prefetch_batches`` ahead in a background
    thread (:func:`medeval.models.device.prefetch`). Raises if a position is never scored.
    """
    import torch

    from medeval.models.device import autocast, prefetch, prepare_batch, prepare_model, resolve_device

    dev = resolve_device(device)
    nets = [prepare_model(m, dev).eval() for m in models]
    out = np.full((len(nets), int(n)), np.nan, dtype=np.float32)
    with torch.no_grad():
        for idx, imgs in prefetch(batches, prefetch_batches):
            x = prepare_batch(uint8_nchw(imgs).float().div_(255.0), dev)
            with autocast(dev, amp):
                for k, net in enumerate(nets):
                    out[k, idx] = torch.softmax(net(x).float(), dim=1)[:, 1].cpu().numpy()
    if np.isnan(out).any():
        raise RuntimeError(f"{int(np.isnan(out[0]).sum())} of {n} patches were never streamed")
    return out


def camelyon16_extraction_demo(seed: int, *, height: int = 1024, width: int = 1536, level: int = 2,
                               patch_size: int = 24, stride: int = 8, central_size: int = 8) -> dict:
    """The CAMELYON16 test-patch extraction (thesis §2.3: Otsu background removal, the patch grid,
    central-region labels; :func:`medeval.data.camelyon16.extract_slide_patches`) on one slide phantom
    written in the CAMELYON16 format (a tiled pyramidal TIFF and an ASAP XML of its tumour,
    :func:`medeval.data.phantoms.formats.write_camelyon16_like`, slide seed ``seed``) in a temporary folder.
    The default geometry is PCam's (96 px patches, stride 32, 32 px centres) scaled down by 4, at level 2.

    Returns ``geometry`` (:class:`medeval.data.camelyon16.PatchGeometry`), ``patches``
    (:class:`medeval.data.camelyon16.SlidePatches`), ``level`` (the slide at ``level``, RGB uint8),
    ``grey`` (its tissue channel, whose histogram sets the Otsu threshold) and ``label_map`` (the kept
    positions' central-region labels on the patch grid, NaN = background;
    :func:`medeval.data.camelyon16.patch_score_map`)."""
    import tempfile

    from medeval.data.camelyon16 import PatchGeometry, extract_slide_patches, patch_score_map, tissue_channel
    from medeval.data.phantoms.formats import write_camelyon16_like
    from medeval.data.readers import open_slide

    geometry = PatchGeometry(level=level, patch_size=patch_size, stride=stride, central_size=central_size)
    with tempfile.TemporaryDirectory() as tmp:
        written = write_camelyon16_like(tmp, n_slides=1, height=height, width=width, seed=seed)[0]
        patches = extract_slide_patches(written["path"], written["annotation"], geometry)
        with open_slide(written["path"]) as slide:
            image = slide.read_level(geometry.level)
    label_map = patch_score_map(patches.x, patches.y, patches.label.astype(float), patches.level_size,
                                geometry.stride)
    return {"geometry": geometry, "patches": patches, "level": image,
            "grey": tissue_channel(image, geometry.tissue_channel), "label_map": label_map}


def camelyon16_test_patch_table(root=None, geometry=None, *, slides=None, cache_dir=None, scheduler=None,
                                max_workers: int | None = None):
    """Every kept test patch of CAMELYON16: a DataFrame (slide, x, y, label, tissue_fraction) in slide order,
    and a per-slide summary (slide, path, annotation, level_size, otsu, positions, patches, positives).

    ``geometry`` is a :class:`medeval.data.camelyon16.PatchGeometry` (default: PCam's). Each slide is one grid run of
    the data layer's extraction (:func:`medeval.data.camelyon16.extract_slide_patches`, returned as arrays).
    ``root`` defaults to the data layer's ``camelyon16`` folder (``DatasetUnavailableError`` naming it when
    absent); ``slides`` restricts to some slide names; a test set missing slides, annotation files or its reference
    standard raises :class:`medeval.data.camelyon16.IncompleteTestSetError` naming them; one grid run per slide
    (``cache_dir`` makes it resumable).
    """
    from medeval.data.camelyon16 import PatchGeometry, camelyon16_test_slides, extract_slide_patch_arrays
    from medeval.runtime.grid import run_grid

    if root is None:
        from medeval.data.manifest import require

        root = require("camelyon16")
    g = geometry or PatchGeometry()
    if slides is not None and not len(slides):
        raise ValueError("slides: give at least one slide name, or None for every test slide")
    listing = camelyon16_test_slides(root, slides)  # IncompleteTestSetError naming what is missing
    grid = [{"slide_path": r.path, "annotation_path": r.annotation if isinstance(r.annotation, str) else None,
             "geometry": dataclasses.asdict(g), "has_tumour": bool(r.tumour)}
            for r in listing.itertuples()]
    results = run_grid(extract_slide_patch_arrays, grid, cache_dir=cache_dir, scheduler=scheduler,
                       max_workers=max_workers, desc="CAMELYON16 test slides")
    import pandas as pd

    table = pd.concat(
        [pd.DataFrame({"slide": res["slide"], "x": res["x"], "y": res["y"], "label": res["label"],
                       "tissue_fraction": res["tissue_fraction"]}) for res in results],
        ignore_index=True,
    )
    table["slide"] = table["slide"].astype("category")
    summary = listing.assign(
        level_size=[tuple(res["level_size"]) for res in results], otsu=[res["otsu"] for res in results],
        positions=[res["n_positions"] for res in results], patches=[int(res["x"].size) for res in results],
        positives=[int(res["label"].sum()) for res in results],
    )
    return table, summary
