r"""Overlap measures between axis-aligned boxes: IoU, generalized IoU and centred IoU.

Definitions follow Meissen, Müller et al., "Robust Detection Outcome", MIDL 2023, App. E:

* IoU (Eq. 15-16): :math:`|\mathcal B^t \cap \mathcal B^p| / (\mathcal B^t_w \mathcal B^t_h + \mathcal B^p_w
  \mathcal B^p_h - |\mathcal B^t \cap \mathcal B^p|)`.
* gIoU (Eq. 17, Rezatofighi et al. 2019): :math:`\mathrm{IoU} - (|\mathcal C| - |\mathcal B^t \cup \mathcal
  B^p|) / |\mathcal C|` where :math:`\mathcal C` is the smallest axis-aligned box enclosing both (the paper's
  "convex hull").
* cIoU ("centred IoU"): the IoU after moving both boxes to the same centre, i.e.
  :math:`\min(\mathcal B^t_w, \mathcal B^p_w) \min(\mathcal B^t_h, \mathcal B^p_h) / (\mathcal B^t_w \mathcal
  B^t_h + \mathcal B^p_w \mathcal B^p_h - \min(\mathcal B^t_w, \mathcal B^p_w) \min(\mathcal B^t_h, \mathcal
  B^p_h))`.

Every public function names the box format explicitly (``box_format`` is one of
:data:`medeval.metrics.boxes.BOX_FORMATS`; there is no default) and validates its input with
:func:`medeval.metrics.boxes.validate_boxes`, so NaN coordinates and zero or negative sizes raise
``ValueError`` (zero-area boxes would make IoU 0/0).

The ``pairwise_*`` functions return the ``(N, M)`` matrix between two sets; the ``paired_*``
functions compare box ``i`` of the first set with box ``i`` of the second (broadcasting over the
leading dimensions). The private ``_*_xywh`` kernels take already validated top-left ``xywh``
float arrays and broadcast; they compute gIoU with the same operation order as the reference
implementation (rodeometric), so that Hungarian matchings agree bit for bit on ordinary inputs.

Imports nothing from medeval except other ``medeval.metrics`` modules.
"""

from __future__ import annotations

import numpy as np

from medeval.metrics.boxes import convert_boxes

__all__ = [
    "paired_centered_iou",
    "paired_generalized_iou",
    "paired_iou",
    "pairwise_generalized_iou",
    "pairwise_iou",
]


def _as_xywh(boxes, box_format: str, name: str) -> np.ndarray:
    try:
        return convert_boxes(boxes, box_format, "xywh")
    except ValueError as err:  # re-raise naming the caller's argument
        raise ValueError(f"{name}: {err}") from None


def _intersection_union_xywh(a: np.ndarray, b: np.ndarray):
    """Corners, intersection area and union area of broadcast xywh boxes ``a`` and ``b``."""
    ax1, ay1 = a[..., 0], a[..., 1]
    ax2, ay2 = ax1 + a[..., 2], ay1 + a[..., 3]
    bx1, by1 = b[..., 0], b[..., 1]
    bx2, by2 = bx1 + b[..., 2], by1 + b[..., 3]
    area_a = a[..., 2] * a[..., 3]
    area_b = b[..., 2] * b[..., 3]
    inter = np.maximum(0, np.minimum(ax2, bx2) - np.maximum(ax1, bx1)) * np.maximum(
        0, np.minimum(ay2, by2) - np.maximum(ay1, by1)
    )
    union = area_a + area_b - inter
    return (ax1, ay1, ax2, ay2, bx1, by1, bx2, by2), inter, union


def _iou_xywh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, inter, union = _intersection_union_xywh(a, b)
    return inter / union


def _generalized_iou_xywh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (ax1, ay1, ax2, ay2, bx1, by1, bx2, by2), inter, union = _intersection_union_xywh(a, b)
    enclosing = np.maximum(0, np.maximum(ax2, bx2) - np.minimum(ax1, bx1)) * np.maximum(
        0, np.maximum(ay2, by2) - np.minimum(ay1, by1)
    )
    return inter / union - (enclosing - union) / enclosing


def _centered_iou_xywh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    inter = np.minimum(a[..., 2], b[..., 2]) * np.minimum(a[..., 3], b[..., 3])
    return inter / (a[..., 2] * a[..., 3] + b[..., 2] * b[..., 3] - inter)


def pairwise_iou(boxes1, boxes2, *, box_format: str) -> np.ndarray:
    r"""IoU (paper Eq. 15) between every box of ``boxes1`` (N, 4) and every box of ``boxes2`` (M, 4).

    .. math::

       \begin{aligned}
       \mathrm{IoU}(\mathcal B^t, \mathcal B^p)
         &= \frac{|\mathcal B^t \cap \mathcal B^p|}{|\mathcal B^t \cup \mathcal B^p|}
         = \frac{|\mathcal B^t \cap \mathcal B^p|}
                {\mathcal B^t_w \mathcal B^t_h + \mathcal B^p_w \mathcal B^p_h - |\mathcal B^t \cap \mathcal B^p|},\\
       |\mathcal B^t \cap \mathcal B^p|
         &= \bigl[\min(\mathcal B^t_{x^+}, \mathcal B^p_{x^+}) - \max(\mathcal B^t_{x^-}, \mathcal B^p_{x^-})\bigr]_+
           \bigl[\min(\mathcal B^t_{y^+}, \mathcal B^p_{y^+}) - \max(\mathcal B^t_{y^-}, \mathcal B^p_{y^-})\bigr]_+
       \end{aligned}

    Returns an ``(N, M)`` float64 array in [0, 1]. Raises ``ValueError`` on malformed boxes.

    Examples
    --------
    >>> from medeval.metrics.box_overlap import pairwise_iou
    >>> a = [[0, 0, 2, 2]]
    >>> b = [[1, 1, 2, 2], [0, 0, 2, 2]]
    >>> np.round(pairwise_iou(a, b, box_format="xywh"), 4).tolist()  # 1 / (4 + 4 - 1), identical
    [[0.1429, 1.0]]
    """
    a = _as_xywh(boxes1, box_format, "boxes1").reshape(-1, 4)
    b = _as_xywh(boxes2, box_format, "boxes2").reshape(-1, 4)
    return _iou_xywh(a[:, None, :], b[None, :, :])


def pairwise_generalized_iou(boxes1, boxes2, *, box_format: str) -> np.ndarray:
    r"""Generalized IoU (paper Eq. 17) between every pair; ``(N, M)`` array in (−1, 1].

    .. math::

       \begin{aligned}
       \mathrm{gIoU}(\mathcal B^t, \mathcal B^p)
         &= \mathrm{IoU}(\mathcal B^t, \mathcal B^p) - \frac{|\mathcal C| - |\mathcal B^t \cup \mathcal B^p|}{|\mathcal C|},\\
       |\mathcal C| &= \bigl(\max(\mathcal B^t_{x^+}, \mathcal B^p_{x^+}) - \min(\mathcal B^t_{x^-}, \mathcal B^p_{x^-})\bigr)
                      \bigl(\max(\mathcal B^t_{y^+}, \mathcal B^p_{y^+}) - \min(\mathcal B^t_{y^-}, \mathcal B^p_{y^-})\bigr).
       \end{aligned}

    Examples
    --------
    >>> from medeval.metrics.box_overlap import pairwise_generalized_iou
    >>> a = [[0, 0, 2, 2]]
    >>> b = [[1, 1, 2, 2], [0, 0, 2, 2]]
    >>> np.round(pairwise_generalized_iou(a, b, box_format="xywh"), 4).tolist()  # 1/7 - (9 - 7)/9
    [[-0.0794, 1.0]]
    """
    a = _as_xywh(boxes1, box_format, "boxes1").reshape(-1, 4)
    b = _as_xywh(boxes2, box_format, "boxes2").reshape(-1, 4)
    return _generalized_iou_xywh(a[:, None, :], b[None, :, :])


def paired_iou(boxes1, boxes2, *, box_format: str) -> np.ndarray:
    r"""IoU (Eq. 15) of box ``i`` of ``boxes1`` with box ``i`` of ``boxes2`` (shapes broadcast).

    .. math::

       \begin{aligned}
       \mathrm{IoU}(\mathcal B^t, \mathcal B^p)
         &= \frac{|\mathcal B^t \cap \mathcal B^p|}{|\mathcal B^t \cup \mathcal B^p|}
         = \frac{|\mathcal B^t \cap \mathcal B^p|}
                {\mathcal B^t_w \mathcal B^t_h + \mathcal B^p_w \mathcal B^p_h - |\mathcal B^t \cap \mathcal B^p|},\\
       |\mathcal B^t \cap \mathcal B^p|
         &= \bigl[\min(\mathcal B^t_{x^+}, \mathcal B^p_{x^+}) - \max(\mathcal B^t_{x^-}, \mathcal B^p_{x^-})\bigr]_+
           \bigl[\min(\mathcal B^t_{y^+}, \mathcal B^p_{y^+}) - \max(\mathcal B^t_{y^-}, \mathcal B^p_{y^-})\bigr]_+
       \end{aligned}

    Examples
    --------
    >>> from medeval.metrics.box_overlap import paired_iou
    >>> np.round(paired_iou([[0, 0, 2, 2]], [[1, 1, 3, 3]], box_format="xyxy"), 4).tolist()
    [0.1429]
    """
    return _iou_xywh(_as_xywh(boxes1, box_format, "boxes1"), _as_xywh(boxes2, box_format, "boxes2"))


def paired_generalized_iou(boxes1, boxes2, *, box_format: str) -> np.ndarray:
    """Generalized IoU (Eq. 17) of corresponding boxes (shapes broadcast).

    Examples
    --------
    >>> from medeval.metrics.box_overlap import paired_generalized_iou
    >>> np.round(paired_generalized_iou([[0, 0, 1, 1]], [[2, 0, 1, 1]], box_format="xywh"), 4).tolist()
    [-0.3333]
    """
    return _generalized_iou_xywh(
        _as_xywh(boxes1, box_format, "boxes1"), _as_xywh(boxes2, box_format, "boxes2")
    )


def paired_centered_iou(boxes1, boxes2, *, box_format: str) -> np.ndarray:
    r"""Centred IoU (cIoU, App. E; RoDeO's shape term, Eq. 3) of corresponding boxes.

    .. math::

       \mathrm{cIoU}(\mathcal B^t, \mathcal B^p)
         = \frac{\min(\mathcal B^t_w, \mathcal B^p_w)\,\min(\mathcal B^t_h, \mathcal B^p_h)}
                {\mathcal B^t_w \mathcal B^t_h + \mathcal B^p_w \mathcal B^p_h
                 - \min(\mathcal B^t_w, \mathcal B^p_w)\,\min(\mathcal B^t_h, \mathcal B^p_h)} .

    Independent of the positions, symmetric. For a uniform scale :math:`s` it is :math:`\min(s, 1/s)^2`; for an
    aspect change :math:`(w r, h/r)` at constant area (:math:`r \ge 1`) it is :math:`1 / (2r - 1)`.

    Examples
    --------
    >>> from medeval.metrics.box_overlap import paired_centered_iou
    >>> target = [[0, 0, 2, 2], [0, 0, 4, 1]]
    >>> pred = [[9, 9, 4, 4], [5, 0, 2, 2]]  # scale s = 2 (far away); aspect r = 2 at equal area
    >>> np.round(paired_centered_iou(target, pred, box_format="xywh"), 4).tolist()  # min(s, 1/s)^2, 1/(2r-1)
    [0.25, 0.3333]
    """
    return _centered_iou_xywh(_as_xywh(boxes1, box_format, "boxes1"), _as_xywh(boxes2, box_format, "boxes2"))
