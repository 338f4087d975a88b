"""Patch-based evaluation of segmentation maps (Reshma 2021, thesis §3.3).

Method 1 (single-threshold metrics): the predicted (argmax) mask and the ground-truth mask of an image are
tiled into non-overlapping *evaluation patches* of size ``e x e``; for a class ``k`` a tile is

* TP if the predicted tile contains at least one pixel of ``k`` and the ground-truth tile does too,
* FP if the predicted tile contains ``k`` and the ground-truth tile does not,
* FN if the ground-truth tile contains ``k`` and the predicted tile does not,
* TN if neither contains ``k``.

``e = 1`` is pixel-level evaluation; ``e >= max(H, W)`` is an image-level decision. Recall, precision and
F-measure are computed per image and then averaged over images (the thesis's Table 4.4 averages over the 27
test WSIs, so its F is not the harmonic mean of the averaged P and R).

Method 2 (single- and multi-threshold metrics): for each inference patch the class-probability map is
restricted to its central ``r x r`` region and reduced by a class-wise maximum to one score per class; the
argmax of that vector is the patch label and the class-``k`` entry is the patch score for ROC/PR/PR-T.

Edge-case policy (the thesis does not state one; these are our choices):

* Partial edge tiles: when ``H`` or ``W`` is not a multiple of ``e`` the last row/column of tiles is smaller
  and still counts as one tile (the whole image is covered, nothing is dropped).
* A per-image rate whose denominator is zero (recall on an image without the class, precision on an image
  where the class is never predicted) is ``NaN``; image means skip NaN and report the number of images that
  were undefined for each rate (``n_undefined``). A class undefined on every image gives a mean of ``NaN``.

Masks and probability maps may be numpy arrays, sequences or torch tensors (also on the GPU or requiring
grad; converted by ``medeval.metrics._arrays.to_numpy``). This module imports only numpy,
:mod:`medeval.metrics.curves` and ``medeval.metrics._arrays``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medeval.metrics._arrays import to_numpy
from medeval.metrics.curves import confusion_rates

__all__ = [
    "PatchEvaluation",
    "central_region_class_max",
    "false_positives_in_true_tiles",
    "patch_based_evaluation",
    "tile_confusion_counts",
    "tile_presence",
]


def _check_mask(mask, name: str, ndim: int) -> np.ndarray:
    m = to_numpy(mask)
    if m.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {m.shape}")
    if not (np.issubdtype(m.dtype, np.integer) or m.dtype == bool):
        raise ValueError(f"{name} must hold integer class labels, got dtype {m.dtype}")
    return m


def _check_mask_pair(pred_mask, true_mask) -> tuple[np.ndarray, np.ndarray]:
    p = _check_mask(pred_mask, "pred_mask", 2)
    t = _check_mask(true_mask, "true_mask", 2)
    if p.shape != t.shape:
        raise ValueError(f"pred_mask and true_mask must have the same shape, got {p.shape} and {t.shape}")
    return p, t


def _check_tile_size(tile_size) -> int:
    if int(tile_size) != tile_size or tile_size < 1:
        raise ValueError(f"tile_size must be a positive integer (pixels), got {tile_size!r}")
    return int(tile_size)


def tile_presence(binary_mask, tile_size: int) -> np.ndarray:
    """Whether each ``e x e`` tile of a 2-D (or batched ``(N, H, W)``) boolean mask contains a ``True`` pixel.

    Partial edge tiles are kept (padding with ``False``). Returns shape ``(..., ceil(H/e), ceil(W/e))``.

    Examples
    --------
    >>> from medeval.metrics.segmentation import tile_presence
    >>> mask = np.zeros((4, 4), dtype=bool)
    >>> mask[0, 3] = True
    >>> tile_presence(mask, 2).tolist()
    [[False, True], [False, False]]
    """
    e = _check_tile_size(tile_size)
    m = to_numpy(binary_mask, dtype=bool)
    if m.ndim not in (2, 3):
        raise ValueError(f"binary_mask must be (H, W) or (N, H, W), got shape {m.shape}")
    if e == 1:
        return m.copy()
    h, w = m.shape[-2:]
    nh, nw = -(-h // e), -(-w // e)
    pad = [(0, 0)] * (m.ndim - 2) + [(0, nh * e - h), (0, nw * e - w)]
    m = np.pad(m, pad)
    m = m.reshape(*m.shape[:-2], nh, e, nw, e)
    return m.any(axis=(-3, -1))


def tile_confusion_counts(pred_mask, true_mask, tile_size: int, positive_class: int) -> np.ndarray:
    r"""Method-1 confusion counts ``[TP, FP, FN, TN]`` of one image for class ``positive_class``.

    A tile :math:`\tau` of side :math:`e` is predicted and truly positive for the class :math:`c` when

    .. math::

       \hat y_\tau = \mathbb{1}\bigl[\exists p \in \tau : \hat m(p) = c\bigr], \qquad
       y_\tau = \mathbb{1}\bigl[\exists p \in \tau : m(p) = c\bigr]

    and TP, FP, FN, TN count the tiles by :math:`(\hat y_\tau, y_\tau)`. ``pred_mask`` (:math:`\hat m`) and
    ``true_mask`` (:math:`m`) are ``(H, W)`` integer label maps; the counts sum to the number of tiles
    :math:`\lceil H/e \rceil \lceil W/e \rceil`. With :math:`e = 1` they are the pixel-level confusion matrix.

    Examples
    --------
    >>> from medeval.metrics.segmentation import tile_confusion_counts
    >>> true = np.zeros((4, 4), dtype=int)
    >>> true[0, 3] = 1
    >>> pred = np.zeros((4, 4), dtype=int)
    >>> pred[0, 2] = pred[3, 0] = 1
    >>> tile_confusion_counts(pred, true, tile_size=2, positive_class=1).tolist()  # TP, FP, FN, TN
    [1, 1, 0, 2]
    """
    p, t = _check_mask_pair(pred_mask, true_mask)
    pp = tile_presence(p == positive_class, tile_size)
    tt = tile_presence(t == positive_class, tile_size)
    tp = int(np.count_nonzero(pp & tt))
    fp = int(np.count_nonzero(pp & ~tt))
    fn = int(np.count_nonzero(~pp & tt))
    tn = int(pp.size - tp - fp - fn)
    return np.array([tp, fp, fn, tn], dtype=np.int64)


def false_positives_in_true_tiles(pred_mask, true_mask, tile_size: int, positive_class: int) -> tuple[int, int]:
    r"""How many of an image's pixel-level false positives for class ``positive_class`` method 1 counts inside a
    truly positive tile of side ``tile_size``: ``(n_false_positive_pixels, n_in_true_tiles)``.

    With the pixel-level false positives :math:`F = \{p : \hat m(p) = c,\ m(p) \neq c\}` and :math:`y_\tau` the
    truth of the tile :math:`\tau(p)` of side :math:`e` holding :math:`p` (thesis §3.3, method 1, as in
    :func:`tile_confusion_counts`),

    .. math::

       n_{\text{in true tiles}} = \bigl|\{p \in F : y_{\tau(p)} = 1\}\bigr| .

    Such a pixel is a false positive at :math:`e = 1` and part of a true-positive tile at :math:`e`: the share
    :math:`n_{\text{in true tiles}} / |F|` says whether a method-1 precision that changes with :math:`e` does so
    because the false positives lie next to the true regions (the share rises quickly with :math:`e`) or away from
    them (it stays low). It is 0 at :math:`e = 1`; with :math:`e \geq \max(H, W)` it is :math:`|F|` when the
    image holds the class at all. Partial edge tiles count as tiles (module docstring).

    Examples
    --------
    >>> from medeval.metrics.segmentation import false_positives_in_true_tiles
    >>> true = np.zeros((4, 4), dtype=int)
    >>> true[0, 3] = 1
    >>> pred = np.zeros((4, 4), dtype=int)
    >>> pred[0, 2] = pred[3, 0] = 1
    >>> false_positives_in_true_tiles(pred, true, tile_size=2, positive_class=1)  # [0, 2] shares a tile with [0, 3]
    (2, 1)
    """
    p, t = _check_mask_pair(pred_mask, true_mask)
    e = _check_tile_size(tile_size)
    truth = t == positive_class
    false_positive = (p == positive_class) & ~truth
    h, w = t.shape
    tiles = tile_presence(truth, e)
    in_true_tile = np.repeat(np.repeat(tiles, e, axis=0), e, axis=1)[:h, :w]
    return int(np.count_nonzero(false_positive)), int(np.count_nonzero(false_positive & in_true_tile))


@dataclass(frozen=True)
class PatchEvaluation:
    """Method-1 results for ``n_images`` images and the classes in ``classes``.

    ``counts[i, k] = [TP, FP, FN, TN]``; ``recall``, ``precision``, ``f_measure`` are per image ``(N, K)``
    with NaN where undefined; ``mean_*`` are NaN-skipping means over images ``(K,)`` and ``n_undefined_*``
    the number of images skipped for each class.
    """

    classes: tuple[int, ...]
    tile_size: int
    counts: np.ndarray
    recall: np.ndarray
    precision: np.ndarray
    f_measure: np.ndarray
    mean_recall: np.ndarray
    mean_precision: np.ndarray
    mean_f_measure: np.ndarray
    n_undefined_recall: np.ndarray
    n_undefined_precision: np.ndarray
    n_undefined_f_measure: np.ndarray


def _nanmean_count(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    undefined = np.isnan(values)
    n_def = (~undefined).sum(axis=0)
    total = np.where(undefined, 0.0, values).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_def > 0, total / np.maximum(n_def, 1), np.nan)
    return mean, undefined.sum(axis=0)


def patch_based_evaluation(pred_masks, true_masks, tile_size: int, classes=(0, 1, 2)) -> PatchEvaluation:
    r"""Patch-based evaluation method 1 (thesis §3.3) over a list/array of images.

    Per image and class: tile confusion counts (:func:`tile_confusion_counts`), then recall, precision and F
    (Eqs. 2.1-2.3 via :func:`medeval.metrics.curves.confusion_rates`),

    .. math::

       \mathrm{Recall} = \frac{TP}{TP + FN}, \qquad
       \mathrm{Precision} = \frac{TP}{TP + FP}, \qquad
       F = \frac{2\,\mathrm{Precision}\cdot\mathrm{Recall}}{\mathrm{Precision} + \mathrm{Recall}};

    then the mean over images skipping NaN,
    with the number of undefined images reported (module docstring). Images may differ in size.

    Examples
    --------
    >>> from medeval.metrics.segmentation import patch_based_evaluation
    >>> true = np.zeros((4, 4), dtype=int)
    >>> true[0, 3] = 1
    >>> pred = np.zeros((4, 4), dtype=int)
    >>> pred[0, 2] = pred[3, 0] = 1
    >>> ev = patch_based_evaluation([pred], [true], tile_size=2, classes=(0, 1))
    >>> np.round(ev.mean_recall, 4).tolist(), np.round(ev.mean_precision, 4).tolist()
    ([1.0, 1.0], [1.0, 0.5])
    """
    if len(pred_masks) != len(true_masks) or len(pred_masks) == 0:
        raise ValueError(
            f"pred_masks and true_masks must be non-empty with the same number of images, "
            f"got {len(pred_masks)} and {len(true_masks)}"
        )
    e = _check_tile_size(tile_size)
    classes = tuple(int(k) for k in classes)
    if not classes:
        raise ValueError("classes must list at least one class label")
    counts = np.array(
        [[tile_confusion_counts(p, t, e, k) for k in classes] for p, t in zip(pred_masks, true_masks, strict=True)]
    )
    rates = confusion_rates(counts[..., 0], counts[..., 1], counts[..., 2], counts[..., 3])
    mean_r, und_r = _nanmean_count(rates.recall)
    mean_p, und_p = _nanmean_count(rates.precision)
    mean_f, und_f = _nanmean_count(rates.f_measure)
    return PatchEvaluation(
        classes=classes,
        tile_size=e,
        counts=counts,
        recall=rates.recall,
        precision=rates.precision,
        f_measure=rates.f_measure,
        mean_recall=mean_r,
        mean_precision=mean_p,
        mean_f_measure=mean_f,
        n_undefined_recall=und_r,
        n_undefined_precision=und_p,
        n_undefined_f_measure=und_f,
    )


def central_region_class_max(probabilities, central_size: int, *, channel_axis: int = 1) -> np.ndarray:
    r"""Patch-based evaluation method 2 (thesis §3.3): class-wise maximum over the central ``r x r`` region.

    .. math::

       s^{\mathbb{C}}_{ij} = \max_{p \in R_{ij}} \hat g^{\mathbb{C}}_{ij}(p)

    with :math:`R_{ij}` the central :math:`r \times r` region of patch :math:`I_{ij}` and
    :math:`\hat g^{\mathbb{C}}_{ij}` its class-:math:`\mathbb{C}` probability map. ``probabilities`` is a batch of
    per-pixel class-probability maps ``(N, C, l, l)`` (``channel_axis=1``) or ``(N, l, l, C)``
    (``channel_axis=-1``). Returns the ``(N, C)`` score vectors :math:`s_{ij}`; they are not re-normalised (as
    in the thesis). The patch label is ``argmax`` over classes and the class-``k`` column is the score for the
    multi-threshold curves. ``central_size`` (:math:`r`) must not exceed :math:`l`; when :math:`l - r` is odd the
    extra pixel goes to the bottom/right border.

    Examples
    --------
    >>> from medeval.metrics.segmentation import central_region_class_max
    >>> prob = np.zeros((1, 2, 4, 4))
    >>> prob[0, 1] = 0.2
    >>> prob[0, 1, 1, 2] = 0.9  # inside the central 2 x 2 region
    >>> prob[0, 1, 0, 0] = 1.0  # on the border: ignored
    >>> prob[0, 0] = 1 - prob[0, 1]
    >>> central_region_class_max(prob, central_size=2).tolist()
    [[0.8, 0.9]]
    """
    p = to_numpy(probabilities, dtype=np.float64)
    if p.ndim != 4:
        raise ValueError(f"probabilities must be 4-D (N, C, l, l) or (N, l, l, C), got shape {p.shape}")
    if channel_axis not in (1, -1, 3):
        raise ValueError(f"channel_axis must be 1 or -1, got {channel_axis!r}")
    if channel_axis in (-1, 3):
        p = np.moveaxis(p, -1, 1)
    h, w = p.shape[2:]
    r = int(central_size)
    if r != central_size or r < 1 or r > min(h, w):
        raise ValueError(f"central_size must be an integer in [1, {min(h, w)}], got {central_size!r}")
    top, left = (h - r) // 2, (w - r) // 2
    return p[:, :, top : top + r, left : left + r].max(axis=(2, 3))
