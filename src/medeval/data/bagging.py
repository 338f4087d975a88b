"""Images as multiple-instance-learning bags: a P x P grid of instances (chapter 1, Eq. 11, Table IV).

In the chapter-1 paper (Romanova et al.) a bag is an image and an instance is one cell of the backbone's
final P x P feature grid (P = 16 for a 512-px input to ResNet-50: 256 instances per bag). Instance labels
come from the ground truth through Eq. 11:

    y_ij = 1  iff  x_ij in BoundingBox_i,  else 0.                                        (Eq. 11)

"x_ij in BoundingBox_i" leaves open what happens to grid cells the lesion only partly covers. This module
makes the rule explicit:

* ``rule="fraction"`` (default): instance j of image i is positive iff the lesion covers at least
  ``min_fraction`` of the cell's pixels. Default ``min_fraction = 0.5`` ("the cell is mostly lesion"). A
  lesion smaller than half a cell can give a positive bag without positive instances; lower
  ``min_fraction`` (any value in (0, 1]; a tiny value means "any overlap") if that matters.
* ``rule="authors_code"`` (boxes only): the convention of the authors' public code (romanovar/evaluation_MIL,
  cnn/preprocessor/load_data.py: ``translate_on_patches``, ``make_label_matrix_localization_v2``): box
  corners are mapped to grid indices by ``round(coordinate / image_size * P)`` and the cells
  ``[y_min : y_max + 1, x_min : x_max + 1]`` (inclusive) are positive. This is our choice
  for reproducing the paper's numbers; along each axis it includes a cell when the box covers at least half
  of it at the start, and, by the inclusive upper index, one more cell at the end. Indices past the grid
  are truncated as numpy slicing truncates them, so a narrow box whose start rounds to P (e.g. x >= 992
  of 1024 with P = 16) gets no positive cell under this rule.

Instances are numbered in row-major order: instance ``j = row * P + col``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "BAG_LABEL_RULES",
    "DEFAULT_MIN_FRACTION",
    "image_to_bag",
    "instance_coverage",
    "instance_labels_from_boxes",
    "instance_labels_from_mask",
    "rasterize_boxes",
]

DEFAULT_MIN_FRACTION = 0.5
BAG_LABEL_RULES = ("fraction", "authors_code")


def _check_grid(grid_size, height: int, width: int) -> int:
    if isinstance(grid_size, bool) or not isinstance(grid_size, (int, np.integer)) or grid_size < 1:
        raise ValueError(f"grid_size must be a positive integer, got {grid_size!r}")
    if height % grid_size or width % grid_size:
        raise ValueError(
            f"grid_size ({grid_size}) must divide the image height and width ({height} x {width}); "
            "resize or pad the images first"
        )
    return int(grid_size)


def _check_min_fraction(min_fraction) -> float:
    value = float(min_fraction)
    if not (0.0 < value <= 1.0):
        raise ValueError(f"min_fraction must be in (0, 1], got {min_fraction}")
    return value


def image_to_bag(images, grid_size: int) -> np.ndarray:
    """Split images into a P x P grid of instances.

    images: (N, H, W) or (N, H, W, C) array (torch tensors are converted); ``grid_size`` P must divide H
    and W. Returns (N, P*P, H/P, W/P[, C]) (a copy), instance ``j = row * P + col``.
    """
    arr = np.asarray(images.detach().cpu() if hasattr(images, "detach") else images)
    if arr.ndim not in (3, 4):
        raise ValueError(f"images must have shape (N, H, W) or (N, H, W, C), got {arr.shape}")
    n, h, w = arr.shape[:3]
    p = _check_grid(grid_size, h, w)
    rest = arr.shape[3:]
    cells = arr.reshape(n, p, h // p, p, w // p, *rest)
    cells = np.moveaxis(cells, 3, 2)  # (N, P, P, h, w, ...)
    return cells.reshape(n, p * p, h // p, w // p, *rest).copy()


def instance_coverage(masks, grid_size: int) -> np.ndarray:
    """(N, P*P) float: fraction of each grid cell covered by the (boolean / non-zero) mask."""
    arr = np.asarray(masks.detach().cpu() if hasattr(masks, "detach") else masks)
    if arr.ndim == 2:
        raise ValueError(f"masks must have shape (N, H, W); got a single (H, W) mask {arr.shape}: add a batch axis")
    if arr.ndim != 3:
        raise ValueError(f"masks must have shape (N, H, W), got {arr.shape}")
    n, h, w = arr.shape
    p = _check_grid(grid_size, h, w)
    covered = (arr != 0).reshape(n, p, h // p, p, w // p).sum(axis=(2, 4), dtype=np.int64)
    return covered.reshape(n, p * p) / float((h // p) * (w // p))


def instance_labels_from_mask(masks, grid_size: int, min_fraction: float = DEFAULT_MIN_FRACTION) -> np.ndarray:
    """(N, P*P) bool instance labels: positive iff the lesion covers >= ``min_fraction`` of the cell.

    masks: (N, H, W) bool or integer (non-zero = lesion); P must divide H and W; ``min_fraction`` in (0, 1]
    (default 0.5, see the module docstring).
    """
    min_fraction = _check_min_fraction(min_fraction)
    # compare counts, not rounded fractions, so that e.g. exactly half a cell counts at 0.5
    cov = instance_coverage(masks, grid_size)
    return cov >= min_fraction - 1e-12


def _box_frame(boxes_df, n_images: int, image_size: int) -> pd.DataFrame:
    if not isinstance(boxes_df, pd.DataFrame):
        raise ValueError(f"boxes_df must be a pandas DataFrame, got {type(boxes_df).__name__}")
    missing = [c for c in ("image", "x", "y", "w", "h") if c not in boxes_df.columns]
    if missing:
        raise ValueError(f"boxes_df must have the columns image, x, y, w, h (top-left xywh pixels); missing {missing}")
    if isinstance(n_images, bool) or not isinstance(n_images, (int, np.integer)) or n_images < 0:
        raise ValueError(f"n_images must be a non-negative integer, got {n_images!r}")
    if isinstance(image_size, bool) or not isinstance(image_size, (int, np.integer)) or image_size < 1:
        raise ValueError(f"image_size must be a positive integer, got {image_size!r}")
    if len(boxes_df):
        img = boxes_df["image"].to_numpy()
        if (img < 0).any() or (img >= n_images).any():
            raise ValueError(f"boxes_df['image'] must be in [0, {n_images}), got values in [{img.min()}, {img.max()}]")
        vals = boxes_df[["x", "y", "w", "h"]].to_numpy(np.float64)
        if not np.isfinite(vals).all() or (vals[:, 2:] <= 0).any():
            raise ValueError("boxes_df must have finite x, y and positive w, h")
    return boxes_df


def rasterize_boxes(boxes_df, n_images: int, image_size: int) -> np.ndarray:
    """(N, S, S) bool: the union of each image's boxes, a pixel being inside when its centre is.

    Boxes are in top-left xywh pixel-edge coordinates (``medeval.metrics.boxes``); pixel (r, c) has its
    centre at (r + 0.5, c + 0.5). Boxes are clipped to the image.
    """
    boxes_df = _box_frame(boxes_df, n_images, image_size)
    out = np.zeros((n_images, image_size, image_size), bool)
    for i, x, y, w, h in boxes_df[["image", "x", "y", "w", "h"]].itertuples(index=False):
        c0 = max(int(np.ceil(x - 0.5)), 0)
        c1 = min(int(np.ceil(x + w - 0.5)), image_size)
        r0 = max(int(np.ceil(y - 0.5)), 0)
        r1 = min(int(np.ceil(y + h - 0.5)), image_size)
        out[int(i), r0:r1, c0:c1] = True
    return out


def instance_labels_from_boxes(
    boxes_df,
    n_images: int,
    image_size: int,
    grid_size: int,
    *,
    rule: str = "fraction",
    min_fraction: float = DEFAULT_MIN_FRACTION,
) -> np.ndarray:
    """(N, P*P) bool instance labels of square images from their boxes (Eq. 11).

    boxes_df: DataFrame with columns image (0..n_images-1), x, y, w, h (top-left xywh in pixels of the
    ``image_size`` x ``image_size`` image), e.g. ``ChestPhantoms.boxes`` filtered to one finding. Images with
    no box get all-negative instances.
    rule: "fraction" (default: the boxes are rasterised and :func:`instance_labels_from_mask` is applied with
    ``min_fraction``) or "authors_code" (the rounding convention of the paper's code, see the module
    docstring; ``min_fraction`` is then ignored).
    """
    if rule not in BAG_LABEL_RULES:
        raise ValueError(f"rule must be one of {list(BAG_LABEL_RULES)}, got {rule!r}")
    boxes_df = _box_frame(boxes_df, n_images, image_size)
    p = _check_grid(grid_size, image_size, image_size) if rule == "fraction" else grid_size
    if rule == "fraction":
        return instance_labels_from_mask(rasterize_boxes(boxes_df, n_images, image_size), p, min_fraction)
    if isinstance(grid_size, bool) or not isinstance(grid_size, (int, np.integer)) or grid_size < 1:
        raise ValueError(f"grid_size must be a positive integer, got {grid_size!r}")
    labels = np.zeros((n_images, p, p), bool)
    for i, x, y, w, h in boxes_df[["image", "x", "y", "w", "h"]].itertuples(index=False):
        # np.round is round-half-to-even, like Python's round() in the authors' code
        # (indices past the grid are truncated by the slice, as numpy slicing did in the authors' code)
        x0, x1 = (max(int(np.round(v / image_size * p)), 0) for v in (x, x + w))
        y0, y1 = (max(int(np.round(v / image_size * p)), 0) for v in (y, y + h))
        labels[int(i), y0:y1 + 1, x0:x1 + 1] = True
    return labels.reshape(n_images, p * p)
