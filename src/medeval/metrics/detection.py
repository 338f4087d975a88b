r"""Detection metrics for pathology localisation: RoDeO and the IoU-threshold baselines.

Source: F. Meissen*, P. Müller*, G. Kaissis, D. Rueckert, "Robust Detection Outcome: A Metric for
Pathology Detection in Medical Images", MIDL 2023 (equation numbers below refer to this paper).
Reference code: ``rodeometric`` 0.0.1 (github.com/FeliMe/RoDeO); our tests compare against it.

Inputs
------
Every public function takes ``predictions`` and ``targets`` for the same ``n_images`` images and a
**required** keyword ``box_format`` (one of ``"xywh"`` = top-left corner + size, ``"xyxy"``,
``"cxcywh"``; see :mod:`medeval.metrics.boxes`). No format is ever guessed. Each of
``predictions``/``targets`` is either

* a sequence with one array per image of shape ``(M_i, 5)`` — four coordinates in ``box_format``
  then the integer class id — or ``(M_i, 6)`` with a confidence score as the sixth column
  (predictions only; used by AP). Empty images may be ``np.zeros((0, 5))`` or ``[]``; or
* an :class:`ImageBoxes` (flat arrays plus image ids; its ``box_format`` must equal the
  ``box_format`` argument, so the format is still named at the call).

Class ids are integers in ``[0, len(class_names))``. Bad input raises ``ValueError`` naming the
argument: wrong shapes, NaN/inf coordinates, zero or negative widths/heights (zero-area boxes make
IoU and RoDeO's localisation 0/0), non-integer or unknown class ids, mismatched image counts.

RoDeO (Sec. 3)
--------------
1. **Matching (Eq. 1).** Per image, the Hungarian method (``scipy.optimize.linear_sum_assignment``)
   on the cost :math:`C = -\mathrm{gIoU}(\mathcal B^p, \mathcal B^t)\,\omega_{shape} - \omega_{cls}\,
   \mathbb 1[y^p = y^t]` with :math:`\omega_{shape} = 1`; it pairs :math:`\min(M_p, M_t)` boxes per image, with
   no IoU gate. :math:`\omega_{cls}` defaults to the data-driven :math:`\max(0, \mathrm{MCC})` of the image-level multi-hot class matrices of the whole dataset (see
   :func:`class_weight_for_matching`) and can be overridden with ``class_weight_matching``.
2. **Localisation (Eq. 2).** :math:`2^{-d^2}` per matched pair with
   :math:`d^2 = \bigl((c^t_x - c^p_x)/w_t\bigr)^2 + \bigl((c^t_y - c^p_y)/h_t\bigr)^2` (:math:`1/C = \ln 2`),
   averaged over pairs.
3. **Shape (Eq. 3).** centred IoU (cIoU) averaged over pairs.
4. **Classification (Eq. 4).** :math:`\max(0, \mathrm{MCC})` with MCC (Eq. 14) counted on the one-hot class
   matrices of the matched pairs (:math:`n \times K` entries; the reading used by the reference code). With
   :math:`a` correct pairs out of :math:`n` it equals :math:`\max\bigl(0, (K a/n - 1)/(K - 1)\bigr)`.
5. **Counts (Eq. 5, generalised as in the reference code).** each sub-score is multiplied by
   :math:`w_m|\mathcal M| / (w_m|\mathcal M| + w_o|\mathcal U^p| + w_u|\mathcal U^t|)` (all weights 1 in the
   paper).
6. **Total (Eq. 6).** harmonic mean :math:`3 / \sum_s 1/(s + \epsilon)` of the three sub-scores; ``eps`` (default
   1e-6, as in the reference code, so a perfect prediction scores 1.000001) is a parameter;
   ``eps=0`` gives the paper's formula (a zero sub-score gives a total of exactly 0).
7. **Per class (Sec. 3.1).** pairs whose *target* has class ``c``; unmatched predictions with
   *predicted* class ``c``; unmatched targets of class ``c``; the global matching and ``ω_cls``.
   Scores are pooled over all images (micro averages), so the global row is not the mean of the
   class rows.

Edge-case policy (RoDeO)
^^^^^^^^^^^^^^^^^^^^^^^^
* No matched pair but at least one box (e.g. no predictions at all): Eq. 5's factor is 0, so
  every score, including the total, is exactly ``0.0``; a ``UserWarning`` is issued for the global
  scores (the reference code warns and returns zeros too). Per class, a class with boxes but no
  matched pair also gets ``0.0`` for all four keys (the reference returns NaN for localisation,
  shape and total there and 0 for classification — a documented divergence). The counts
  ``n_matched``, ``n_overpredicted`` and ``n_missed`` are returned so the reason is visible.
* No boxes at all (globally, or of one class): nothing to evaluate, so the scores are ``NaN``
  (with a ``UserWarning`` globally); the reference returns zeros globally and NaN per class.
* ``len(class_names) < 2``: ``ValueError`` (MCC on one class is undefined).

Baselines (Sec. 1 and App. E)
-----------------------------
For a threshold ``t``, per image and class, a prediction is a TP if it has the target's class and
``IoU ≥ t``; the correspondence is one-to-one and, where several predictions qualify for one
target, the one with the highest IoU wins. We realise this as a greedy matching in order of
decreasing IoU (ties broken by prediction, then target index). Remaining predictions are FP,
remaining targets FN, and a TN is an (image, class) with neither predictions nor targets.

* :func:`accuracy_at_iou` — per class ``(TP + TN)/(TP + TN + FP + FN)``; the summary is the mean
  over classes, which is how the paper's Table 1 "Total" row for acc@30 is formed (it equals the
  mean of the eight class rows: 55.1).
* :func:`average_precision_at_iou` — App. E: "at every point on the curve, only boxes with a
  confidence ≥ the current threshold are considered": for every distinct confidence the greedy
  matching is redone on the retained predictions, giving one (recall, precision) point. The paper
  does not say which interpolation it uses; default ``"all_point"`` (area under the monotone
  precision envelope, PASCAL VOC 2010+), with ``"coco101"`` and ``"voc11"`` available.
  **Confidence**: the oracle predictions of the paper carry none; predictions without a score
  column all share one confidence, so the curve has a single point and AP = precision × recall
  (all-point). A class without targets has undefined AP (NaN, excluded from the class mean and
  counted in ``n_undefined``).
* :func:`detection_mean_average_precision` — mean of AP@IoU over ``t = 0.1, 0.2, …, 0.7`` (the paper's mAP,
  Table 1 and Fig. 2; not COCO's 0.5:0.95); the summary is the mean over classes.

This module imports nothing from medeval except other ``medeval.metrics`` modules.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from medeval.metrics._arrays import to_numpy
from medeval.metrics.box_overlap import _centered_iou_xywh, _generalized_iou_xywh, _iou_xywh
from medeval.metrics.boxes import BOX_FORMATS, convert_boxes, validate_boxes

__all__ = [
    "AP_INTERPOLATIONS",
    "MAP_IOU_THRESHOLDS",
    "ImageBoxes",
    "PerClassScore",
    "RoDeOResult",
    "accuracy_at_iou",
    "average_precision_at_iou",
    "binary_mcc_from_counts",
    "class_weight_for_matching",
    "hungarian_box_matching",
    "iou_threshold_counts",
    "localization_similarity",
    "detection_mean_average_precision",
    "rodeo_harmonic_mean",
    "robust_detection_outcome",
]

#: IoU thresholds of the paper's mAP (Table 1, Fig. 2): 0.1, 0.2, ..., 0.7.
MAP_IOU_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
#: Supported AP interpolation schemes.
AP_INTERPOLATIONS = ("all_point", "coco101", "voc11")

_LN2 = float(np.log(2.0))


# --------------------------------------------------------------------------------------------------
# Input container
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ImageBoxes:
    """Boxes of a set of images as flat arrays.

    Fields (documented here rather than as attributes, which the dataclass lists itself):

    * ``boxes``: (N, 4) float64, coordinates in ``box_format``.
    * ``labels``: (N,) int64 class ids (≥ 0; the upper bound is checked by each metric).
    * ``image_ids``: (N,) int64 in ``[0, n_images)``.
    * ``n_images``: number of images (images without boxes count: they give TNs and enter ω_cls).
    * ``box_format``: one of :data:`~medeval.metrics.boxes.BOX_FORMATS`.
    * ``scores``: optional (N,) float64 confidences (used by AP only).

    Build with :meth:`from_arrays` or :meth:`from_per_image`, which validate everything.
    """

    boxes: np.ndarray
    labels: np.ndarray
    image_ids: np.ndarray
    n_images: int
    box_format: str
    scores: np.ndarray | None = field(default=None)

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @classmethod
    def from_arrays(
        cls,
        boxes,
        labels,
        image_ids,
        *,
        box_format: str,
        n_images: int,
        scores=None,
        name: str = "boxes",
    ) -> ImageBoxes:
        """Validate flat arrays: ``boxes`` (N, 4) in ``box_format``, ``labels`` and ``image_ids`` (N,)."""
        if box_format not in BOX_FORMATS:
            raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
        arr = to_numpy(boxes, dtype=np.float64)
        if arr.size == 0:
            arr = arr.reshape(0, 4)
        if arr.ndim != 2 or arr.shape[1] != 4:
            raise ValueError(f"{name} must have shape (N, 4), got {arr.shape}")
        arr = validate_boxes(arr, box_format, name=name)
        n = arr.shape[0]
        lab = _integer_array(labels, n, f"{name} labels")
        if (lab < 0).any():
            raise ValueError(f"{name} labels must be class ids >= 0, got {int(lab.min())}")
        if not isinstance(n_images, (int, np.integer)) or n_images < 0:
            raise ValueError(f"n_images must be a non-negative integer, got {n_images!r}")
        img = _integer_array(image_ids, n, f"{name} image_ids")
        if n and (img.min() < 0 or img.max() >= n_images):
            raise ValueError(
                f"{name} image_ids must lie in [0, n_images={n_images}), got {img.min()}..{img.max()}"
            )
        sc = None
        if scores is not None:
            sc = to_numpy(scores, dtype=np.float64).reshape(-1)
            if sc.shape[0] != n:
                raise ValueError(f"{name} scores must have length {n}, got {sc.shape[0]}")
            if not np.isfinite(sc).all():
                raise ValueError(f"{name} scores must be finite")
        return cls(arr, lab, img, int(n_images), box_format, sc)

    @classmethod
    def from_per_image(cls, per_image, *, box_format: str, name: str = "boxes") -> ImageBoxes:
        """One ``(M_i, 5)`` array per image (coordinates in ``box_format``, class id), or ``(M_i, 6)``
        with a score in the last column. Empty images: ``np.zeros((0, 5))`` or ``[]``."""
        if isinstance(per_image, np.ndarray) or not isinstance(per_image, Sequence):
            raise ValueError(
                f"{name} must be a sequence with one (M_i, 5) array per image (or an ImageBoxes), "
                f"got {type(per_image).__name__}"
            )
        fast = cls._from_uniform_arrays(per_image, box_format, name)
        if fast is not None:
            return fast
        arrays = []
        n_cols = None
        for i, a in enumerate(per_image):
            a = to_numpy(a, dtype=np.float64)
            if a.size == 0:
                arrays.append(None)
                continue
            if a.ndim != 2 or a.shape[1] not in (5, 6):
                raise ValueError(
                    f"{name}[{i}] must have shape (M, 5) [4 coordinates in {box_format!r}, class id] "
                    f"or (M, 6) [..., score], got {a.shape}"
                )
            if n_cols is None:
                n_cols = a.shape[1]
            elif a.shape[1] != n_cols:
                raise ValueError(f"{name}: every image must have the same number of columns (5 or 6)")
            arrays.append(a)
        n_cols = n_cols or 5
        counts = np.array([0 if a is None else a.shape[0] for a in arrays], dtype=np.int64)
        nonempty = [a for a in arrays if a is not None]
        flat = np.concatenate(nonempty) if nonempty else np.zeros((0, n_cols))
        image_ids = np.repeat(np.arange(len(arrays)), counts)
        return cls.from_arrays(
            flat[:, :4],
            flat[:, 4],
            image_ids,
            box_format=box_format,
            n_images=len(arrays),
            scores=flat[:, 5] if n_cols == 6 else None,
            name=name,
        )

    @classmethod
    def _from_uniform_arrays(cls, per_image, box_format: str, name: str) -> ImageBoxes | None:
        """The common case in one ``np.concatenate``: every image a 2-D numpy array with the same 5 or 6 numeric
        columns (empty images as ``(0, 5)`` arrays). ``None`` for anything else, which the checked loop handles.

        numpy's concatenation itself refuses items of different dimensions or column counts (an empty ``[]`` is
        1-D) and objects it cannot convert (a CUDA tensor, a tensor that requires grad), so no item is inspected
        one by one."""
        if not per_image:
            return None
        try:
            flat = np.concatenate(per_image, axis=0)
        except (ValueError, TypeError, RuntimeError):
            return None
        if flat.ndim != 2 or flat.shape[1] not in (5, 6) or not np.issubdtype(flat.dtype, np.number):
            return None
        flat = flat.astype(np.float64, copy=False)
        counts = np.fromiter(map(len, per_image), dtype=np.int64, count=len(per_image))
        return cls.from_arrays(
            flat[:, :4],
            flat[:, 4],
            np.repeat(np.arange(len(per_image)), counts),
            box_format=box_format,
            n_images=len(per_image),
            scores=flat[:, 5] if flat.shape[1] == 6 else None,
            name=name,
        )

    def xywh(self) -> np.ndarray:
        """The boxes in top-left ``xywh``."""
        return convert_boxes(self.boxes, self.box_format, "xywh") if len(self) else self.boxes.reshape(0, 4)

    def to_per_image(self, box_format: str | None = None) -> list[np.ndarray]:
        """One ``(M_i, 5)`` array per image (``box_format``, default this object's format)."""
        fmt = box_format or self.box_format
        b = convert_boxes(self.boxes, self.box_format, fmt) if len(self) else self.boxes.reshape(0, 4)
        rows = np.column_stack([b, self.labels.astype(np.float64)])
        order = np.argsort(self.image_ids, kind="stable")
        counts = np.bincount(self.image_ids, minlength=self.n_images)
        return np.split(rows[order], np.cumsum(counts)[:-1])

    def subset_images(self, image_indices) -> ImageBoxes:
        """The boxes of the given images (renumbered 0..len(image_indices)-1, in the given order);
        images may repeat (bootstrap resampling)."""
        idx = to_numpy(image_indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_images):
            raise ValueError(f"image_indices must lie in [0, {self.n_images})")
        order = np.argsort(self.image_ids, kind="stable")
        counts = np.bincount(self.image_ids, minlength=self.n_images)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        take_counts = counts[idx]
        rows = order[_ranges(starts[idx], take_counts)]
        new_ids = np.repeat(np.arange(idx.size), take_counts)
        return ImageBoxes(
            self.boxes[rows],
            self.labels[rows],
            new_ids,
            int(idx.size),
            self.box_format,
            None if self.scores is None else self.scores[rows],
        )


def _integer_array(values, n: int, name: str) -> np.ndarray:
    arr = to_numpy(values).reshape(-1)  # a scalar: one value
    if arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n}, got {arr.shape[0]}")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    as_float = arr.astype(np.float64)
    if not np.isfinite(as_float).all() or (as_float != np.round(as_float)).any():
        raise ValueError(
            f"{name} must be integers, got e.g. {arr[~(as_float == np.round(as_float))][:3].tolist()}"
        )
    return as_float.astype(np.int64)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for each (s, l), vectorised."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - first, lengths) + np.arange(total)


def _coerce(obj, box_format: str, name: str) -> ImageBoxes:
    if box_format not in BOX_FORMATS:
        raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
    if isinstance(obj, ImageBoxes):
        if obj.box_format != box_format:
            raise ValueError(
                f"{name} holds boxes in format {obj.box_format!r} but box_format={box_format!r} was given"
            )
        return obj
    return ImageBoxes.from_per_image(obj, box_format=box_format, name=name)


def _check_class_names(class_names) -> tuple[str, ...]:
    if isinstance(class_names, str) or not isinstance(class_names, Sequence):
        raise ValueError(f"class_names must be a sequence of names, got {class_names!r}")
    names = tuple(str(c) for c in class_names)
    if len(names) < 2:
        raise ValueError(f"class_names must name at least 2 classes (MCC needs K >= 2), got {names}")
    if len(set(names)) != len(names):
        raise ValueError(f"class_names must be unique, got {names}")
    return names


def _prepare(predictions, targets, box_format, class_names):
    names = _check_class_names(class_names)
    preds = _coerce(predictions, box_format, "predictions")
    targs = _coerce(targets, box_format, "targets")
    if preds.n_images != targs.n_images:
        raise ValueError(
            f"predictions and targets must cover the same images: {preds.n_images} vs {targs.n_images} images"
        )
    k = len(names)
    for obj, nm in ((preds, "predictions"), (targs, "targets")):
        if len(obj) and obj.labels.max() >= k:
            raise ValueError(
                f"{nm} contain unknown class id {int(obj.labels.max())}; class ids must lie in [0, {k}) "
                f"for class_names={names}"
            )
    return preds, targs, names


# --------------------------------------------------------------------------------------------------
# Small building blocks
# --------------------------------------------------------------------------------------------------


def binary_mcc_from_counts(tp, fp, fn, tn):
    r"""Matthews correlation coefficient (paper Eq. 14) from confusion counts (broadcasting).

    .. math::

       \mathrm{MCC} = \frac{\mathrm{TP}\cdot\mathrm{TN} - \mathrm{FP}\cdot\mathrm{FN}}
         {\sqrt{(\mathrm{TP} + \mathrm{FP})(\mathrm{TP} + \mathrm{FN})(\mathrm{TN} + \mathrm{FP})(\mathrm{TN} + \mathrm{FN})}},

    where the denominator is 0 the value is defined as 0 (as in scikit-learn; the caller documents when this can happen).

    Examples
    --------
    >>> from medeval.metrics.detection import binary_mcc_from_counts
    >>> round(float(binary_mcc_from_counts(tp=3, fp=1, fn=2, tn=4)), 4)  # 10 / sqrt(4 * 5 * 6 * 5)
    0.4082
    """
    tp, fp, fn, tn = (to_numpy(v, dtype=np.float64) for v in (tp, fp, fn, tn))
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        mcc = np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1.0), 0.0)
    return mcc if mcc.ndim else float(mcc)


def localization_similarity(pred_boxes, target_boxes, *, box_format: str) -> np.ndarray:
    r"""RoDeO's per-pair localisation score (Eq. 2): :math:`2^{-d^2}`, element-wise over pairs.

    .. math::

       \mathrm{RoDeO}^{loc}_{matched} = \frac{1}{|\mathcal M|} \sum_{(\mathcal B^t, \mathcal B^p) \in \mathcal M}
         \exp\left[-\frac{\left(\frac{\mathcal B^t_x - \mathcal B^p_x}{\mathcal B^t_w}\right)^2
                         + \left(\frac{\mathcal B^t_y - \mathcal B^p_y}{\mathcal B^t_h}\right)^2}{C}\right],
       \qquad \frac{1}{C} = \ln 2,

    with :math:`d^2 = \bigl((\mathcal B^t_x - \mathcal B^p_x)/\mathcal B^t_w\bigr)^2
    + \bigl((\mathcal B^t_y - \mathcal B^p_y)/\mathcal B^t_h\bigr)^2` the term in the brackets: centre offsets
    in units of the *target* size, so the score is 0.5 at a relative distance of 1 and isotropic in that relative space.

    Examples
    --------
    >>> from medeval.metrics.detection import localization_similarity
    >>> target = [[0, 0, 10, 10], [0, 0, 10, 10]]
    >>> pred = [[2, 0, 10, 10], [10, 0, 10, 10]]  # centre offsets 0.2 and 1 target widths
    >>> np.round(localization_similarity(pred, target, box_format="xywh"), 4).tolist()
    [0.9727, 0.5]
    """
    p = convert_boxes(pred_boxes, box_format, "xywh")
    t = convert_boxes(target_boxes, box_format, "xywh")
    return _localization_xywh(p, t)


def _localization_xywh(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    dx = ((p[..., 0] + p[..., 2] / 2) - (t[..., 0] + t[..., 2] / 2)) / t[..., 2]
    dy = ((p[..., 1] + p[..., 3] / 2) - (t[..., 1] + t[..., 3] / 2)) / t[..., 3]
    return np.exp(-(dx * dx + dy * dy) * _LN2)


def rodeo_harmonic_mean(localization, shape_matching, classification, *, eps: float = 1e-6):
    r"""RoDeO total (Eq. 6), harmonic mean of the three sub-scores (broadcasting).

    .. math::

       \mathrm{RoDeO} = 3 \left( \frac{1}{\mathrm{RoDeO}^{loc}} + \frac{1}{\mathrm{RoDeO}^{shape}}
         + \frac{1}{\mathrm{RoDeO}^{cls}} \right)^{-1} .

    With ``eps`` (:math:`\epsilon \ge 0`) each sub-score :math:`s` enters as :math:`1/(s + \epsilon)`,
    the reference code's regularisation (default 1e-6: a perfect
    prediction scores 1.000001 and a zero sub-score gives ≈ 3e-6); ``eps=0`` is the paper's formula,
    for which a zero sub-score gives exactly 0. NaN sub-scores give NaN.

    Examples
    --------
    >>> from medeval.metrics.detection import rodeo_harmonic_mean
    >>> float(rodeo_harmonic_mean(0.5, 1.0, 1.0, eps=0))  # 3 / (2 + 1 + 1)
    0.75
    >>> float(rodeo_harmonic_mean(0.0, 1.0, 1.0, eps=0))
    0.0
    """
    if not np.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    subs = [to_numpy(v, dtype=np.float64) + eps for v in (localization, shape_matching, classification)]
    with np.errstate(divide="ignore"):
        inv = 1.0 / subs[0] + 1.0 / subs[1] + 1.0 / subs[2]
        out = 3.0 / inv
    return out if out.ndim else float(out)


# --------------------------------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------------------------------


def _class_weight(preds: ImageBoxes, targs: ImageBoxes, k: int) -> float:
    n = preds.n_images
    if n == 0:
        return 0.0
    # the (image, class) cells holding a predicted / a target box, as flags over all n * k cells
    predicted = np.zeros(n * k, dtype=bool)
    predicted[preds.image_ids * k + preds.labels] = True
    present = np.zeros(n * k, dtype=bool)
    present[targs.image_ids * k + targs.labels] = True
    tp = int(np.count_nonzero(predicted & present))
    fp = int(np.count_nonzero(predicted)) - tp
    fn = int(np.count_nonzero(present)) - tp
    tn = n * k - tp - fp - fn
    return max(0.0, float(binary_mcc_from_counts(tp, fp, fn, tn)))


def class_weight_for_matching(predictions, targets, *, box_format: str, class_names) -> float:
    r"""Data-driven ``ω_cls = max(0, MCC(y^t, y^p))`` of Eq. 1.

    .. math::

       \begin{aligned}
       \mathcal C_{\mathcal B^t, \mathcal B^p}
         &= -\mathbb 1_{[y_{\mathcal B^t} = y_{\mathcal B^p}]}\,\omega_{cls}
           - \mathrm{gIoU}(\mathcal B^t, \mathcal B^p)\,\omega_{shape}
         \quad \forall\, \mathcal B^t \in \mathcal M^t,\ \mathcal B^p \in \mathcal M^p,\\
       \omega_{shape} &= 1,\qquad \omega_{cls} = \max\bigl(0, \mathrm{MCC}(\mathbf y^t, \mathbf y^p)\bigr),
       \end{aligned}

    ``y^t``/``y^p`` are the image-level multi-hot class matrices (``n_images × K``: class ``c``
    present among the target/predicted boxes of image ``i``), flattened and compared with the binary
    MCC of Eq. 14 (the paper's "sample-wise classification performance"; the reference code does
    the same). One value for the whole dataset, so adding images can change matchings elsewhere.
    Undefined MCC (e.g. every image has every class on both sides, or no images) gives 0.

    Examples
    --------
    >>> from medeval.metrics.detection import class_weight_for_matching
    >>> targets = [np.array([[0, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1]])]
    >>> preds = [np.array([[2, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1], [0, 0, 5, 5, 0]])]
    >>> w = class_weight_for_matching(preds, targets, box_format="xywh", class_names=["a", "b"])
    >>> round(w, 4)  # max(0, MCC) of the image-level class matrices
    0.5774
    """
    preds, targs, names = _prepare(predictions, targets, box_format, class_names)
    return _class_weight(preds, targs, len(names))


def _pairs_by_key(p_keys: np.ndarray, t_keys: np.ndarray, n_keys: int):
    """All (prediction, target) index pairs that share a key (image, or image×class).

    Returns sorted-order arrays: ``p_order``, ``t_order`` (argsorts), ``pair_p``, ``pair_t``
    (positions in the sorted arrays, pred-major within each key) and the per-key counts.
    """
    p_order = np.argsort(p_keys, kind="stable")
    t_order = np.argsort(t_keys, kind="stable")
    p_counts = np.bincount(p_keys, minlength=n_keys)
    t_counts = np.bincount(t_keys, minlength=n_keys)
    t_starts = np.cumsum(t_counts) - t_counts
    p_sorted_keys = p_keys[p_order]
    rep = t_counts[p_sorted_keys]
    pair_p = np.repeat(np.arange(p_keys.size), rep)
    pair_t = _ranges(t_starts[p_sorted_keys], rep)
    return p_order, t_order, pair_p, pair_t, p_counts, t_counts


_MAX_ENUMERATED_ASSIGNMENTS = 720


def _blocks_by_shape(m_all: np.ndarray, n_all: np.ndarray, s_all: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Start offsets of the cost blocks, grouped by block shape (predictions x targets)."""
    shapes: dict[tuple[int, int], np.ndarray] = {}
    if m_all.size:
        pair = m_all.astype(np.int64) * (int(n_all.max()) + 1) + n_all
        for code in np.unique(pair).tolist():
            sel = pair == code
            shapes[(int(m_all[sel][0]), int(n_all[sel][0]))] = s_all[sel]
    return shapes


@functools.cache
def _assignments(m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every maximal matching of an ``m x k`` block as flat cell offsets ``(A, min(m, k))`` in row order."""
    if m <= k:
        cols = np.array(list(itertools.permutations(range(k), m)), dtype=np.int64)
        rows = np.broadcast_to(np.arange(m), cols.shape)
    else:
        rows = np.array(list(itertools.permutations(range(m), k)), dtype=np.int64)
        cols = np.broadcast_to(np.arange(k), rows.shape)
        order = np.argsort(rows, axis=1)
        rows, cols = np.take_along_axis(rows, order, 1), np.take_along_axis(cols, order, 1)
    return rows * k + cols


def _enumerated_assignment(cost: np.ndarray, starts: np.ndarray, m: int, k: int):
    """Minimum-cost matching of every ``m x k`` block starting at ``starts`` (the optimum that
    ``linear_sum_assignment`` finds), by evaluating every assignment at once. Returns the matched cells' flat
    offsets ``(B, min(m, k))`` and a mask of blocks whose best two totals are within 1e-9: those are left to
    ``linear_sum_assignment``, so that its choice among (near-)equal optima is kept."""
    cells = _assignments(m, k)
    blocks = cost[starts[:, None] + np.arange(m * k)]  # (B, m*k)
    totals = blocks[:, cells].sum(axis=-1)  # (B, A)
    two = np.partition(totals, 1, axis=1)[:, :2] if totals.shape[1] > 1 else np.hstack([totals, totals + np.inf])
    ambiguous = two[:, 1] - two[:, 0] <= 1e-9
    best = starts[:, None] + cells[np.argmin(totals, axis=1)]
    return best, ambiguous


def _hungarian(preds: ImageBoxes, targs: ImageBoxes, class_weight: float):
    """Per-image Hungarian matching on Eq. 1's cost; returns matched (pred, target) original indices.

    All costs are computed in one vectorised pass. Images where one side has a single box are
    solved by a segmented argmin (what ``linear_sum_assignment`` returns there, first minimum on
    ties); the remaining images call ``linear_sum_assignment`` on a view of the cost array.
    """
    n = preds.n_images
    if len(preds) == 0 or len(targs) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    p_order, t_order, pair_p, pair_t, p_counts, t_counts = _pairs_by_key(preds.image_ids, targs.image_ids, n)
    pxywh = preds.xywh()[p_order]
    txywh = targs.xywh()[t_order]
    plab = preds.labels[p_order]
    tlab = targs.labels[t_order]
    cost = -_generalized_iou_xywh(pxywh[pair_p], txywh[pair_t]) - class_weight * (
        plab[pair_p] == tlab[pair_t]
    )

    sizes = p_counts * t_counts
    block_start = np.cumsum(sizes) - sizes
    has = np.flatnonzero(sizes > 0)
    m_all, n_all, s_all = p_counts[has], t_counts[has], block_start[has]

    matched_p, matched_t = [], []
    # single-row or single-column blocks: segmented argmin over the contiguous block
    simple = (m_all == 1) | (n_all == 1)
    if simple.any():
        seg_starts = s_all[simple]
        seg_sizes = sizes[has][simple]
        idx = _ranges(seg_starts, seg_sizes)
        seg_id = np.repeat(np.arange(seg_starts.size), seg_sizes)
        vals = cost[idx]
        seg_min = np.minimum.reduceat(vals, np.cumsum(seg_sizes) - seg_sizes)
        is_min = vals == seg_min[seg_id]
        minima = seg_id[is_min]  # non-decreasing: each segment's first minimum is where the segment id changes
        first = np.flatnonzero(np.r_[True, minima[1:] != minima[:-1]])
        best = idx[np.flatnonzero(is_min)[first]]
        matched_p.append(pair_p[best])
        matched_t.append(pair_t[best])
    # general blocks: small shapes by enumerating every assignment for all blocks of a shape at once
    general = ~simple
    for (m, k), starts in _blocks_by_shape(m_all[general], n_all[general], s_all[general]).items():
        loop = starts
        if math.perm(max(m, k), min(m, k)) <= _MAX_ENUMERATED_ASSIGNMENTS:
            best, ambiguous = _enumerated_assignment(cost, starts, m, k)
            matched_p.append(pair_p[best[~ambiguous].ravel()])
            matched_t.append(pair_t[best[~ambiguous].ravel()])
            loop = starts[ambiguous]
        for s in loop.tolist():
            rows, cols = linear_sum_assignment(cost[s : s + m * k].reshape(m, k))
            best = s + rows * k + cols
            matched_p.append(pair_p[best])
            matched_t.append(pair_t[best])
    mp = np.concatenate(matched_p) if matched_p else np.zeros(0, dtype=np.int64)
    mt = np.concatenate(matched_t) if matched_t else np.zeros(0, dtype=np.int64)
    return p_order[mp], t_order[mt]


def hungarian_box_matching(
    predictions,
    targets,
    *,
    box_format: str,
    class_names,
    class_weight_matching: float | None = None,
):
    r"""RoDeO's matching (Eq. 1): per image, Hungarian method on the cost below.

    .. math::

       \begin{aligned}
       \mathcal C_{\mathcal B^t, \mathcal B^p}
         &= -\mathbb 1_{[y_{\mathcal B^t} = y_{\mathcal B^p}]}\,\omega_{cls}
           - \mathrm{gIoU}(\mathcal B^t, \mathcal B^p)\,\omega_{shape}
         \quad \forall\, \mathcal B^t \in \mathcal M^t,\ \mathcal B^p \in \mathcal M^p,\\
       \omega_{shape} &= 1,\qquad \omega_{cls} = \max\bigl(0, \mathrm{MCC}(\mathbf y^t, \mathbf y^p)\bigr),
       \end{aligned}

    Returns ``(pred_index, target_index, class_weight)``: flat indices (into the
    :class:`ImageBoxes` order, i.e. images concatenated) of the matched pairs, and the ``ω_cls``
    used (data-driven unless ``class_weight_matching`` is given).

    Examples
    --------
    >>> from medeval.metrics.detection import hungarian_box_matching
    >>> targets = [np.array([[0, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1]])]
    >>> preds = [np.array([[2, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1], [0, 0, 5, 5, 0]])]
    >>> p, t, w = hungarian_box_matching(preds, targets, box_format="xywh", class_names=["a", "b"])
    >>> p.tolist(), t.tolist(), round(w, 4)
    ([0, 1], [0, 1], 0.5774)
    """
    preds, targs, names = _prepare(predictions, targets, box_format, class_names)
    w = _resolve_class_weight(preds, targs, len(names), class_weight_matching)
    mp, mt = _hungarian(preds, targs, w)
    return mp, mt, w


def _resolve_class_weight(preds, targs, k, class_weight_matching):
    if class_weight_matching is None:
        return _class_weight(preds, targs, k)
    w = float(class_weight_matching)
    if not np.isfinite(w) or w < 0:
        raise ValueError(
            f"class_weight_matching must be a finite number >= 0 or None, got {class_weight_matching!r}"
        )
    return w


# --------------------------------------------------------------------------------------------------
# RoDeO
# --------------------------------------------------------------------------------------------------

_SUBS = ("localization", "shape_matching", "classification", "total")


@dataclass(frozen=True)
class RoDeOResult:
    """RoDeO scores. Global scores are floats; ``per_class`` maps each key of
    ``("localization", "shape_matching", "classification", "total", "n_matched",
    "n_overpredicted", "n_missed")`` to a length-K array (or is None if not requested)."""

    localization: float
    shape_matching: float
    classification: float
    total: float
    n_matched: int
    n_overpredicted: int
    n_missed: int
    class_weight_matching: float
    class_names: tuple[str, ...]
    per_class: dict[str, np.ndarray] | None = None

    def as_dict(self, per_class: bool = True) -> dict[str, float]:
        """rodeometric-compatible keys: ``RoDeO/<sub>`` then ``RoDeO/<class>/<sub>``."""
        out = {f"RoDeO/{s}": float(getattr(self, s)) for s in _SUBS}
        if per_class and self.per_class is not None:
            for i, c in enumerate(self.class_names):
                for s in _SUBS:
                    out[f"RoDeO/{c}/{s}"] = float(self.per_class[s][i])
        return out

    def per_class_records(self) -> list[dict]:
        """One dict per class (class, the four scores and the three counts), then a "Total" row."""
        if self.per_class is None:
            raise ValueError("per-class scores were not computed (per_class=False)")
        keys = (*_SUBS, "n_matched", "n_overpredicted", "n_missed")
        rows = [
            {"class": c, **{k: self.per_class[k][i].item() for k in keys}}
            for i, c in enumerate(self.class_names)
        ]
        rows.append({"class": "Total", **{k: getattr(self, k) for k in keys}})
        return rows


def _weighted_scores(sum_loc, sum_shape, cls_matched, n_m, n_o, n_u, weights, eps):
    """Eq. 5 and Eq. 6 on (broadcast) sums over matched pairs; degenerate cases per the policy."""
    w_m, w_o, w_u = weights
    n_m = np.asarray(n_m, dtype=np.float64)
    matched = n_m * w_m
    total_w = matched + np.asarray(n_o, dtype=np.float64) * w_o + np.asarray(n_u, dtype=np.float64) * w_u
    has_match = n_m > 0
    has_any = (n_m + n_o + n_u) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        safe_n = np.where(has_match, n_m, 1.0)
        safe_tw = np.where(total_w > 0, total_w, 1.0)
        loc = (sum_loc / safe_n) * matched / safe_tw
        shape = (sum_shape / safe_n) * matched / safe_tw
        cls = cls_matched * matched / safe_tw
    loc, shape, cls = (np.where(has_match, v, np.where(has_any, 0.0, np.nan)) for v in (loc, shape, cls))
    total = rodeo_harmonic_mean(loc, shape, cls, eps=eps)
    total = np.where(has_match, total, np.where(has_any, 0.0, np.nan))
    return loc, shape, cls, total


def robust_detection_outcome(
    predictions,
    targets,
    *,
    box_format: str,
    class_names,
    class_weight_matching: float | None = None,
    w_matched: float = 1.0,
    w_overpred: float = 1.0,
    w_missed: float = 1.0,
    eps: float = 1e-6,
    per_class: bool = True,
) -> RoDeOResult:
    r"""Robust Detection Outcome (RoDeO; Meissen, Müller et al., MIDL 2023, Eqs. 1-6, Sec. 3.1).

    .. math::

       \mathrm{RoDeO} = 3 \left( \frac{1}{\mathrm{RoDeO}^{loc}} + \frac{1}{\mathrm{RoDeO}^{shape}}
         + \frac{1}{\mathrm{RoDeO}^{cls}} \right)^{-1} .

    with :math:`\mathrm{RoDeO}^{sub} = \frac{w_m|\mathcal M|}{w_m|\mathcal M| + w_o|\mathcal U^p| + w_u|\mathcal
    U^t|}\,\mathrm{RoDeO}^{sub}_{matched}` for the sub-scores loc (Eq. 2, :math:`2^{-d^2}`), shape (Eq. 3,
    cIoU) and cls (Eq. 4, :math:`\max(0, \mathrm{MCC})`), and ``eps`` added to each sub-score in Eq. 6. See the module docstring
    for the matching, the per-class rules and the edge-case policy.

    Parameters
    ----------
    predictions, targets : per-image sequences of ``(M_i, 5)`` arrays or :class:`ImageBoxes`.
    box_format : {"xywh", "xyxy", "cxcywh"}, required — the format of the coordinates given.
    class_names : K ≥ 2 names; class ids index them.
    class_weight_matching : ω_cls of Eq. 1 (≥ 0); None = data-driven (:func:`class_weight_for_matching`).
    w_matched (> 0), w_overpred (≥ 0), w_missed (≥ 0) : weights of Eq. 5 (1 in the paper).
    eps : regularisation of the harmonic mean (≥ 0; 1e-6 as in the reference code).
    per_class : also compute the per-class scores.

    Returns
    -------
    RoDeOResult; ``.as_dict()`` gives the reference code's keys.

    Examples
    --------
    >>> from medeval.metrics.detection import robust_detection_outcome
    >>> targets = [np.array([[0, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1]])]
    >>> preds = [np.array([[2, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1], [0, 0, 5, 5, 0]])]
    >>> r = robust_detection_outcome(preds, targets, box_format="xywh", class_names=["a", "b"], eps=0)
    >>> r.n_matched, r.n_overpredicted, r.n_missed  # Eq. 5 factor 2 / (2 + 1 + 0)
    (2, 1, 0)
    >>> print(f"loc={r.localization:.4f} shape={r.shape_matching:.4f} "
    ...       f"cls={r.classification:.4f} total={r.total:.4f}")
    loc=0.6576 shape=0.6667 cls=0.6667 total=0.6636
    """
    preds, targs, names = _prepare(predictions, targets, box_format, class_names)
    for nm, v, lo_ok in (
        ("w_matched", w_matched, False),
        ("w_overpred", w_overpred, True),
        ("w_missed", w_missed, True),
    ):
        if not np.isfinite(v) or v < 0 or (v == 0 and not lo_ok):
            raise ValueError(f"{nm} must be a finite number {'>= 0' if lo_ok else '> 0'}, got {v!r}")
    if not np.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    k = len(names)
    w = _resolve_class_weight(preds, targs, k, class_weight_matching)
    mp, mt = _hungarian(preds, targs, w)

    pm = preds.xywh()[mp]
    tm = targs.xywh()[mt]
    loc_pair = _localization_xywh(pm, tm)
    shape_pair = _centered_iou_xywh(pm, tm)
    correct = preds.labels[mp] == targs.labels[mt]

    n_m = mp.size
    n_o = len(preds) - n_m
    n_u = len(targs) - n_m
    weights = (float(w_matched), float(w_overpred), float(w_missed))

    def cls_from(n, a):
        n = np.asarray(n, dtype=np.float64)
        a = np.asarray(a, dtype=np.float64)
        # one-hot n×K matrices of matched pairs: TP = a, FP = FN = n − a, TN = nK − TP − FP − FN
        return np.maximum(0.0, binary_mcc_from_counts(a, n - a, n - a, n * k - a - 2 * (n - a)))

    # mean() (pairwise summation) times n, as the reference averages over pairs
    sum_loc = loc_pair.mean() * n_m if n_m else 0.0
    sum_shape = shape_pair.mean() * n_m if n_m else 0.0
    loc, shape, cls, total = _weighted_scores(
        sum_loc, sum_shape, cls_from(n_m, correct.sum()), n_m, n_o, n_u, weights, eps
    )
    if n_m == 0:
        warnings.warn(
            "RoDeO: no matched box pairs "
            + (
                f"({n_o} predictions, {n_u} targets); every score is 0"
                if n_o + n_u
                else "and no boxes at all; scores are NaN"
            ),
            UserWarning,
            stacklevel=2,
        )

    pcs = None
    if per_class:
        t_cls = targs.labels[mt]
        unmatched_p = np.ones(len(preds), bool)
        unmatched_p[mp] = False
        unmatched_t = np.ones(len(targs), bool)
        unmatched_t[mt] = False
        n_m_c = np.bincount(t_cls, minlength=k)
        n_o_c = np.bincount(preds.labels[unmatched_p], minlength=k)
        n_u_c = np.bincount(targs.labels[unmatched_t], minlength=k)
        a_c = np.bincount(t_cls, weights=correct.astype(np.float64), minlength=k)
        c_loc, c_shape, c_cls, c_total = _weighted_scores(
            np.bincount(t_cls, weights=loc_pair, minlength=k),
            np.bincount(t_cls, weights=shape_pair, minlength=k),
            cls_from(n_m_c, a_c),
            n_m_c,
            n_o_c,
            n_u_c,
            weights,
            eps,
        )
        pcs = {
            "localization": c_loc,
            "shape_matching": c_shape,
            "classification": c_cls,
            "total": c_total,
            "n_matched": n_m_c,
            "n_overpredicted": n_o_c,
            "n_missed": n_u_c,
        }
    return RoDeOResult(
        localization=float(loc),
        shape_matching=float(shape),
        classification=float(cls),
        total=float(total),
        n_matched=int(n_m),
        n_overpredicted=int(n_o),
        n_missed=int(n_u),
        class_weight_matching=float(w),
        class_names=names,
        per_class=pcs,
    )


# --------------------------------------------------------------------------------------------------
# IoU-threshold baselines (App. E)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PerClassScore:
    """A per-class detection score and its summary.

    ``per_class`` (K,) values (NaN where undefined); ``mean`` the mean over classes where defined
    (the paper's Table 1 "Total" for acc@30 and mAP); ``n_undefined`` how many classes were left
    out of the mean; ``counts`` optional per-class confusion counts.
    """

    per_class: np.ndarray
    mean: float
    class_names: tuple[str, ...]
    n_undefined: int
    counts: dict[str, np.ndarray] | None = None

    def as_dict(self, name: str) -> dict[str, float]:
        out = {name: self.mean}
        out.update({f"{name}/{c}": float(v) for c, v in zip(self.class_names, self.per_class, strict=True)})
        return out


def _class_mean(values: np.ndarray) -> tuple[float, int]:
    defined = ~np.isnan(values)
    return (float(values[defined].mean()) if defined.any() else float("nan")), int((~defined).sum())


def _same_class_pairs(preds: ImageBoxes, targs: ImageBoxes, k: int):
    """All same-image, same-class (prediction, target) pairs with their IoU (original indices)."""
    n_keys = max(preds.n_images * k, 1)
    p_keys = preds.image_ids * k + preds.labels
    t_keys = targs.image_ids * k + targs.labels
    p_order, t_order, pair_p, pair_t, _, _ = _pairs_by_key(p_keys, t_keys, n_keys)
    pp = p_order[pair_p]
    tt = t_order[pair_t]
    iou = _iou_xywh(preds.xywh()[pp], targs.xywh()[tt]) if pp.size else np.zeros(0)
    return pp, tt, iou


def _greedy_iou_matching(pair_p, pair_t, iou, n_p, n_t):
    """Greedy one-to-one matching in order of decreasing IoU (App. E, rules 1-2).

    Equivalent to scanning the candidate pairs sorted by (−IoU, pred, target) and keeping a pair
    when both its boxes are still free; done in rounds, each keeping every pair that is the best
    remaining one for both its prediction and its target. Returns a boolean mask over pairs.
    """
    m = pair_p.size
    selected = np.zeros(m, bool)
    if m == 0:
        return selected
    order = np.lexsort((pair_t, pair_p, -iou))
    rank = np.empty(m, np.int64)
    rank[order] = np.arange(m)
    alive = np.ones(m, bool)
    big = np.iinfo(np.int64).max
    while alive.any():
        ai = np.flatnonzero(alive)
        best_p = np.full(n_p, big)
        best_t = np.full(n_t, big)
        np.minimum.at(best_p, pair_p[ai], rank[ai])
        np.minimum.at(best_t, pair_t[ai], rank[ai])
        r = rank[ai]
        win = ai[(r == best_p[pair_p[ai]]) & (r == best_t[pair_t[ai]])]
        selected[win] = True
        used_p = np.zeros(n_p, bool)
        used_t = np.zeros(n_t, bool)
        used_p[pair_p[win]] = True
        used_t[pair_t[win]] = True
        alive &= ~(used_p[pair_p] | used_t[pair_t])
    return selected


def _check_threshold(t, name="iou_threshold"):
    t = float(t)
    if not (0 < t <= 1):
        raise ValueError(f"{name} must lie in (0, 1], got {t!r}")
    return t


def iou_threshold_counts(predictions, targets, *, box_format: str, class_names, iou_threshold: float):
    """Per-class TP, FP, FN, TN at an IoU threshold (App. E rules 1-5).

    TP, FP and FN count boxes; TN counts (image, class) cells without predictions and targets.
    Returns a dict of length-K int arrays ``tp``, ``fp``, ``fn``, ``tn``.

    Examples
    --------
    >>> from medeval.metrics.detection import iou_threshold_counts
    >>> targets = [np.array([[0, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1]])]
    >>> preds = [np.array([[2, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1], [0, 0, 5, 5, 0]])]
    >>> c = iou_threshold_counts(preds, targets, box_format="xywh", class_names=["a", "b"],
    ...                          iou_threshold=0.5)
    >>> {k: v.tolist() for k, v in c.items()}
    {'tp': [1, 1], 'fp': [1, 0], 'fn': [0, 0], 'tn': [0, 1]}
    """
    preds, targs, names = _prepare(predictions, targets, box_format, class_names)
    return _threshold_counts(preds, targs, len(names), _check_threshold(iou_threshold))


def _threshold_counts(preds, targs, k, thr, pairs=None):
    pp, tt, iou = pairs if pairs is not None else _same_class_pairs(preds, targs, k)
    ok = iou >= thr
    sel = _greedy_iou_matching(pp[ok], tt[ok], iou[ok], len(preds), len(targs))
    tp = np.bincount(preds.labels[pp[ok][sel]], minlength=k)
    n_pred = np.bincount(preds.labels, minlength=k)
    n_targ = np.bincount(targs.labels, minlength=k)
    occupied = np.unique(
        np.concatenate([preds.image_ids * k + preds.labels, targs.image_ids * k + targs.labels])
    )
    tn = preds.n_images - np.bincount(occupied % k, minlength=k)
    return {"tp": tp, "fp": n_pred - tp, "fn": n_targ - tp, "tn": tn}


def accuracy_at_iou(
    predictions, targets, *, box_format: str, class_names, iou_threshold: float
) -> PerClassScore:
    r"""acc@IoU (Wang et al. 2017 with IoU instead of IoBB; paper App. E).

    .. math::

       \mathrm{acc@}t = \frac{1}{K} \sum_{c=1}^{K}
         \frac{\mathrm{TP}_c(t) + \mathrm{TN}_c}{\mathrm{TP}_c(t) + \mathrm{TN}_c + \mathrm{FP}_c(t) + \mathrm{FN}_c(t)} .

    Per class ``(TP + TN) / (TP + TN + FP + FN)`` with the counts of :func:`iou_threshold_counts`;
    ``mean`` is the mean over classes (Table 1's Total). Undefined (NaN) only when there are no
    images. Note that TNs dominate when most (image, class) cells are empty, which is why acc@IoU
    rises when predictions are dropped (paper Fig. 4).

    Examples
    --------
    >>> from medeval.metrics.detection import accuracy_at_iou
    >>> targets = [np.array([[0, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1]])]
    >>> preds = [np.array([[2, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1], [0, 0, 5, 5, 0]])]
    >>> acc = accuracy_at_iou(preds, targets, box_format="xywh", class_names=["a", "b"],
    ...                       iou_threshold=0.5)
    >>> np.round(acc.per_class, 4).tolist(), round(acc.mean, 4)
    ([0.5, 1.0], 0.75)
    """
    preds, targs, names = _prepare(predictions, targets, box_format, class_names)
    c = _threshold_counts(preds, targs, len(names), _check_threshold(iou_threshold))
    den = (c["tp"] + c["tn"] + c["fp"] + c["fn"]).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(den > 0, (c["tp"] + c["tn"]) / np.where(den > 0, den, 1), np.nan)
    mean, n_undef = _class_mean(acc)
    return PerClassScore(acc, mean, names, n_undef, c)


def _interpolated_ap(recall: np.ndarray, precision: np.ndarray, interpolation: str) -> float:
    """Area under the precision envelope ``p(r) = max{p_j : r_j ≥ r}`` (0 beyond the last recall)."""
    if recall.size == 0:
        return 0.0
    order = np.argsort(recall, kind="stable")
    r = recall[order]
    p = precision[order]
    env = np.maximum.accumulate(p[::-1])[::-1]  # max precision at recall >= r_j
    if interpolation == "all_point":
        r_prev = np.concatenate([[0.0], r[:-1]])
        return float(np.sum((r - r_prev) * env))
    grid = np.linspace(0, 1, 101 if interpolation == "coco101" else 11)
    pos = np.searchsorted(r, grid, side="left")
    vals = np.where(pos < r.size, env[np.minimum(pos, r.size - 1)], 0.0)
    return float(vals.mean())


def _ap_per_class(preds, targs, k, thr, interpolation, pairs):
    pp, tt, iou = pairs
    ok = iou >= thr
    pp, tt, iou = pp[ok], tt[ok], iou[ok]
    n_pos = np.bincount(targs.labels, minlength=k)
    n_p = len(preds)
    scores = preds.scores
    if scores is None or n_p == 0 or np.all(scores == scores[0]):
        # one shared confidence: a single operating point
        sel = _greedy_iou_matching(pp, tt, iou, n_p, len(targs))
        tp = np.bincount(preds.labels[pp[sel]], minlength=k).astype(np.float64)
        n_pred = np.bincount(preds.labels, minlength=k)
        ap = np.full(k, np.nan)
        for c in range(k):
            if n_pos[c] == 0:
                continue
            if n_pred[c] == 0:
                ap[c] = 0.0
                continue
            ap[c] = _interpolated_ap(
                np.array([tp[c] / n_pos[c]]), np.array([tp[c] / n_pred[c]]), interpolation
            )
        return ap
    # Confidence sweep. The greedy matching decomposes over (image, class) cells, so TP(τ) is the
    # sum over cells of TP_cell(number of the cell's predictions with score ≥ τ).
    cell = preds.image_ids * k + preds.labels
    order = np.lexsort((np.arange(n_p), -scores, cell))
    cell_sorted = cell[order]
    starts = np.flatnonzero(np.r_[True, cell_sorted[1:] != cell_sorted[:-1]])
    lengths = np.diff(np.r_[starts, n_p])
    rank = np.empty(n_p, np.int64)
    rank[order] = np.arange(n_p) - np.repeat(starts, lengths)
    cell_index = np.empty(n_p, np.int64)
    cell_index[order] = np.repeat(np.arange(starts.size), lengths)
    tp_cell = np.zeros((int(lengths.max()) + 1, starts.size), dtype=np.int64)
    for j in range(1, int(lengths.max()) + 1):
        keep = rank[pp] < j
        sel = _greedy_iou_matching(pp[keep], tt[keep], iou[keep], n_p, len(targs))
        tp_cell[j] = np.bincount(cell_index[pp[keep][sel]], minlength=starts.size)
    delta = tp_cell[rank + 1, cell_index] - tp_cell[rank, cell_index]
    ap = np.full(k, np.nan)
    for c in range(k):
        if n_pos[c] == 0:
            continue
        idx = np.flatnonzero(preds.labels == c)
        if idx.size == 0:
            ap[c] = 0.0
            continue
        o = idx[np.argsort(-scores[idx], kind="stable")]
        cum_tp = np.cumsum(delta[o])
        s = scores[o]
        last = np.r_[s[1:] != s[:-1], True]  # end of each tied-score run
        n_kept = np.arange(1, o.size + 1)[last]
        tp_at = cum_tp[last].astype(np.float64)
        ap[c] = _interpolated_ap(tp_at / n_pos[c], tp_at / n_kept, interpolation)
    return ap


def _check_interpolation(interpolation):
    if interpolation not in AP_INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {AP_INTERPOLATIONS}, got {interpolation!r}")


def average_precision_at_iou(
    predictions,
    targets,
    *,
    box_format: str,
    class_names,
    iou_threshold: float,
    interpolation: str = "all_point",
) -> PerClassScore:
    r"""AP@IoU (paper Sec. 1 and App. E), per class, and its mean over classes.

    .. math::

       \mathrm{AP@}t = \frac{1}{|\{c : N_c > 0\}|} \sum_{c : N_c > 0}\;
         \sum_{j \ge 1} \bigl(R_c(\tau_j) - R_c(\tau_{j-1})\bigr) \max_{j' \ge j} P_c(\tau_{j'}) .

    For every distinct confidence τ (descending) the predictions with score ≥ τ are matched to the
    targets by the greedy rule of App. E, giving recall ``TP/#targets`` and precision
    ``TP/#kept predictions``; AP is the area under the interpolated precision-recall curve
    (``interpolation``: "all_point" (default), "coco101", "voc11"). Predictions without scores
    share one confidence: AP = precision × recall for "all_point". Classes without targets: NaN
    (excluded from ``mean``, counted in ``n_undefined``); a class with targets but no predictions: 0.

    Examples
    --------
    >>> from medeval.metrics.detection import average_precision_at_iou
    >>> targets = [np.array([[0, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1]])]
    >>> preds = [np.array([[2, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1], [0, 0, 5, 5, 0]])]
    >>> ap = average_precision_at_iou(preds, targets, box_format="xywh", class_names=["a", "b"],
    ...                               iou_threshold=0.5)
    >>> np.round(ap.per_class, 4).tolist(), round(ap.mean, 4)
    ([0.5, 1.0], 0.75)
    """
    _check_interpolation(interpolation)
    preds, targs, names = _prepare(predictions, targets, box_format, class_names)
    k = len(names)
    ap = _ap_per_class(
        preds, targs, k, _check_threshold(iou_threshold), interpolation, _same_class_pairs(preds, targs, k)
    )
    mean, n_undef = _class_mean(ap)
    return PerClassScore(ap, mean, names, n_undef)


def detection_mean_average_precision(
    predictions,
    targets,
    *,
    box_format: str,
    class_names,
    iou_thresholds: Sequence[float] = MAP_IOU_THRESHOLDS,
    interpolation: str = "all_point",
) -> PerClassScore:
    r"""mAP as in the paper (Table 1, Fig. 2): mean of AP@IoU over ``iou_thresholds``
    (default 0.1, 0.2, …, 0.7), per class; ``mean`` is the mean of the per-class values over
    classes with targets. See :func:`average_precision_at_iou` for confidence and interpolation.

    .. math::

       \mathrm{mAP} = \frac{1}{7} \sum_{t \in \{0.1, 0.2, \dots, 0.7\}} \mathrm{AP@}t .

    Examples
    --------
    >>> from medeval.metrics.detection import detection_mean_average_precision
    >>> targets = [np.array([[0, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1]])]
    >>> preds = [np.array([[2, 0, 10, 10, 0]]), np.array([[20, 20, 10, 10, 1], [0, 0, 5, 5, 0]])]
    >>> m = detection_mean_average_precision(preds, targets, box_format="xywh", class_names=["a", "b"])
    >>> np.round(m.per_class, 4).tolist(), round(m.mean, 4)
    ([0.4286, 1.0], 0.7143)
    """
    _check_interpolation(interpolation)
    thresholds = [_check_threshold(t, "iou_thresholds") for t in iou_thresholds]
    if not thresholds:
        raise ValueError("iou_thresholds must not be empty")
    preds, targs, names = _prepare(predictions, targets, box_format, class_names)
    k = len(names)
    pairs = _same_class_pairs(preds, targs, k)
    aps = np.stack([_ap_per_class(preds, targs, k, t, interpolation, pairs) for t in thresholds])
    per_class = aps.mean(axis=0)
    mean, n_undef = _class_mean(per_class)
    return PerClassScore(per_class, mean, names, n_undef)
