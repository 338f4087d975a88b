"""Axis-aligned bounding boxes: formats, validation, conversion and area.

Three conventions are used across the chapters:

``"xywh"``
    ``(x, y, w, h)``: top-left corner ``(x, y)``, width ``w``, height ``h``. This is the
    convention of the NIH ChestX-ray14 box list (``BBox_List_2017.csv``: ``Bbox [x, y, w, h]``),
    of the phantom generators and of RoDeO's reference code (rodeometric).
``"xyxy"``
    ``(x1, y1, x2, y2)``: top-left and bottom-right corners, ``x2 = x + w``, ``y2 = y + h``
    (the convention of torchvision and torchmetrics).
``"cxcywh"``
    ``(cx, cy, w, h)``: centre ``cx = x + w / 2``, ``cy = y + h / 2`` plus width and height.

Coordinates are continuous (pixel edges): a box covering pixel columns 10..19 inclusive is
``x = 10, w = 10`` (``x2 = 20``). No ``+1`` convention is applied anywhere.

Edge-case policy: malformed boxes (wrong trailing dimension, NaN/inf, non-positive width or
height) raise ``ValueError`` naming the argument; nothing is clipped or dropped silently.
Empty box arrays of shape ``(0, 4)`` are valid and convert/measure to empty arrays.

This module imports nothing from medeval except :mod:`medeval.metrics._arrays` (the conversion of array
inputs, numpy only), so the two can be lifted out together.
"""

from __future__ import annotations

import numpy as np

from medeval.metrics._arrays import to_numpy

__all__ = ["BOX_FORMATS", "box_area", "convert_boxes", "validate_boxes"]

#: Supported box conventions (see the module docstring).
BOX_FORMATS = ("xywh", "xyxy", "cxcywh")


def _check_format(box_format: str, name: str) -> None:
    if box_format not in BOX_FORMATS:
        raise ValueError(f"{name} must be one of {BOX_FORMATS}, got {box_format!r}")


def _as_box_array(boxes, name: str) -> np.ndarray:
    arr = to_numpy(boxes, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] != 4:
        raise ValueError(f"{name} must be an array of shape (..., 4), got shape {arr.shape}")
    return arr


def _to_xywh(arr: np.ndarray, source: str) -> np.ndarray:
    a, b, c, d = np.moveaxis(arr, -1, 0)
    if source == "xywh":
        return arr.copy()
    if source == "xyxy":
        return np.stack([a, b, c - a, d - b], axis=-1)
    # cxcywh
    return np.stack([a - c / 2.0, b - d / 2.0, c, d], axis=-1)


def _from_xywh(arr: np.ndarray, target: str) -> np.ndarray:
    x, y, w, h = np.moveaxis(arr, -1, 0)
    if target == "xywh":
        return arr.copy()
    if target == "xyxy":
        return np.stack([x, y, x + w, y + h], axis=-1)
    return np.stack([x + w / 2.0, y + h / 2.0, w, h], axis=-1)


def validate_boxes(boxes, box_format: str, name: str = "boxes") -> np.ndarray:
    """Check boxes and return them as a float64 array of shape ``(..., 4)``.

    Raises
    ------
    ValueError
        If ``box_format`` is not one of :data:`BOX_FORMATS`; if the array's last dimension is not
        4; if any coordinate is NaN or infinite; or if any width or height is not strictly
        positive (for ``"xyxy"``: ``x2 <= x1`` or ``y2 <= y1``). The message names ``name`` and
        the index of the first offending box.

    Examples
    --------
    >>> from medeval.metrics.boxes import validate_boxes
    >>> validate_boxes([[10, 20, 5, 5]], "xywh").shape
    (1, 4)
    >>> validate_boxes([[10, 20, 0, 5]], "xywh")
    Traceback (most recent call last):
        ...
    ValueError: boxes must have strictly positive width and height (format 'xywh'); box (0,) is ...
    """
    _check_format(box_format, "box_format")
    arr = _as_box_array(boxes, name)
    if arr.size == 0:
        return arr
    finite = np.isfinite(arr).all(axis=-1)
    if not finite.all():
        idx = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise ValueError(f"{name} must contain finite coordinates; box {idx} is {arr[idx].tolist()}")
    xywh = _to_xywh(arr, box_format)
    positive = (xywh[..., 2] > 0) & (xywh[..., 3] > 0)
    if not positive.all():
        idx = tuple(int(i) for i in np.argwhere(~positive)[0])
        raise ValueError(
            f"{name} must have strictly positive width and height (format {box_format!r}); "
            f"box {idx} is {arr[idx].tolist()}"
        )
    return arr


def convert_boxes(boxes, source: str, target: str) -> np.ndarray:
    """Convert boxes between formats.

    ``xyxy = (x, y, x + w, y + h)`` and ``cxcywh = (x + w/2, y + h/2, w, h)`` from
    ``xywh = (x, y, w, h)``; conversions are exact inverses up to floating-point rounding.

    Parameters
    ----------
    boxes : array-like of shape (..., 4)
        Boxes in the ``source`` format (numpy arrays, lists or torch tensors).
    source, target : {"xywh", "xyxy", "cxcywh"}

    Returns
    -------
    np.ndarray of float64, same shape as ``boxes``. The input is validated first
    (see :func:`validate_boxes`).

    Examples
    --------
    >>> from medeval.metrics.boxes import convert_boxes
    >>> convert_boxes([[10, 20, 10, 5]], "xywh", "xyxy").tolist()
    [[10.0, 20.0, 20.0, 25.0]]
    >>> convert_boxes([[10, 20, 10, 5]], "xywh", "cxcywh").tolist()
    [[15.0, 22.5, 10.0, 5.0]]
    """
    _check_format(source, "source")
    _check_format(target, "target")
    arr = validate_boxes(boxes, source, name="boxes")
    if source == target:
        return arr.copy()
    return _from_xywh(_to_xywh(arr, source), target)


def box_area(boxes, box_format: str) -> np.ndarray:
    """Area ``w * h`` of each box, shape ``boxes.shape[:-1]`` (validated first).

    Examples
    --------
    >>> from medeval.metrics.boxes import box_area
    >>> box_area([[0, 0, 4, 3], [1, 1, 3, 3]], "xyxy").tolist()
    [12.0, 4.0]
    """
    arr = validate_boxes(boxes, box_format, name="boxes")
    xywh = _to_xywh(arr, box_format)
    return xywh[..., 2] * xywh[..., 3]
