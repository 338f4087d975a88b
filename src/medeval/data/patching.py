"""Systematic patch extraction and the patch categories of the thesis (chapter 4, Table 4.1).

Extraction (thesis §3.2.1 and §4.3): square patches of side l, taken from pixel (0, 0) to the end of the
image with stride l/2 (overlapping), only where a whole patch fits.

Categories of a multi-class patch (Table 4.1), with O = other, C = cancer, ¬C = non-cancer pixels, a patch
of N pixels and t = 0.001 % = 1e-5:

=========  ==============================================  =========================================
category   Table 4.1 definition                            as implemented (counts nO, nC, nN)
=========  ==============================================  =========================================
O          > 99.999 % O pixels                             nO > (1 - t) N
C          > 0.001 % C pixels and no ¬C pixels             nC > t N and nN <= t N   (see below)
notC       > 0.001 % ¬C pixels and no C pixels             nN > t N and nC <= t N   (see below)
mixed      > 0.001 % C and > 0.001 % ¬C pixels             nC > t N and nN > t N
=========  ==============================================  =========================================

Read literally, the four rules leave some patches without a category: a patch with a large tumour and a
single ¬C pixel (nN = 1 <= t N when N = 384^2, so it is not "mixed", and it is not "C" because it has a ¬C
pixel), or one C and one ¬C pixel in a 384-px patch. The thesis says that the patches which are not O
"belong to the other categories" and its Table 4.2 counts add up to the total, so the categories are meant
to partition the patches. We therefore read "no ¬C pixels" as "no more than the 0.001 % threshold of ¬C
pixels" (and symmetrically for C), and send the remaining non-O patches - traces of both classes, each at
most t N, together at least t N, possible only when t N >= 1, i.e. for patches of at least 100,000 pixels -
to the class with more pixels (``"mixed"`` on a tie). ``rule="literal"`` applies Table 4.1 word for word and
returns ``"unassigned"`` where no rule applies. For patches under 100,000 pixels (e.g. the 32 x 32 patches
of the scaled-down reproduction) t N < 1 and both readings reduce to: O = all O; C = any C and no ¬C;
notC = any ¬C and no C; mixed = both (our reading of Table 4.1).

Binary data sets (PCam, CAMELYON16): a patch is C iff its central region holds a C pixel, see
:func:`central_region_labels`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CATEGORY_RULES",
    "CATEGORY_THRESHOLD",
    "PATCH_CATEGORIES",
    "categorize_patches",
    "category_counts",
    "central_region_labels",
    "extract_patches",
    "patch_grid",
]

#: The multi-class patch categories of Table 4.1 ("notC" = ¬C, "mixed" = C&¬C).
PATCH_CATEGORIES = ("O", "C", "notC", "mixed")
#: 0.001 %: the presence threshold of Table 4.1 (O needs more than 1 - threshold).
CATEGORY_THRESHOLD = 1e-5
CATEGORY_RULES = ("partition", "literal")
_O, _NOTC, _C = 0, 1, 2  # mask values, as in medeval.data.phantoms.slide.SLIDE_CLASSES


def _check_int(value, name: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def patch_grid(height: int, width: int, patch_size: int, stride: int | None = None) -> np.ndarray:
    """(K, 2) int64 top-left (row, col) of the systematic patches, in raster order.

    Positions 0, s, 2s, ... along each axis with ``pos + patch_size <= side``; the stride ``s`` defaults to
    ``patch_size // 2`` (the thesis's l/2). An image smaller than a patch has no patches.
    """
    patch_size = _check_int(patch_size, "patch_size")
    stride = max(1, patch_size // 2) if stride is None else _check_int(stride, "stride")
    rows = np.arange(0, height - patch_size + 1, stride, dtype=np.int64)
    cols = np.arange(0, width - patch_size + 1, stride, dtype=np.int64)
    rr, cc = np.meshgrid(rows, cols, indexing="ij")
    return np.stack([rr.ravel(), cc.ravel()], axis=1)


def extract_patches(image, patch_size: int, stride: int | None = None):
    """Systematic overlapping patches of an image.

    image: (H, W) or (H, W, C) array (e.g. a slide or its mask). Returns ``(patches, coords)``: patches
    (K, l, l[, C]) - a read-only strided view into ``image``, copy it before writing - and coords (K, 2)
    int64 top-left (row, col), in raster order (see :func:`patch_grid`).
    """
    arr = np.asarray(image)
    if arr.ndim not in (2, 3):
        raise ValueError(f"image must have shape (H, W) or (H, W, C), got {arr.shape}")
    patch_size = _check_int(patch_size, "patch_size")
    h, w = arr.shape[:2]
    if patch_size > min(h, w):
        raise ValueError(f"patch_size ({patch_size}) must not exceed the image sides ({h} x {w})")
    coords = patch_grid(h, w, patch_size, stride)
    stride = max(1, patch_size // 2) if stride is None else int(stride)
    windows = np.lib.stride_tricks.sliding_window_view(arr, (patch_size, patch_size), axis=(0, 1))
    windows = windows[::stride, ::stride]  # (nr, nc, [C,] l, l)
    if arr.ndim == 3:
        windows = np.moveaxis(windows, 2, -1)  # (nr, nc, l, l, C)
    patches = windows.reshape(-1, *windows.shape[2:])
    return patches, coords


def _class_counts(mask_patches) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    arr = np.asarray(mask_patches)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise ValueError(f"mask_patches must have shape (K, h, w) (or one (h, w) patch), got {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() > 2):
        raise ValueError("mask_patches values must be class indices 0 = O, 1 = notC, 2 = C")
    flat = arr.reshape(len(arr), -1)
    n_c = (flat == _C).sum(axis=1)
    n_n = (flat == _NOTC).sum(axis=1)
    return n_c, n_n, flat.shape[1] - n_c - n_n, flat.shape[1]


def categorize_patches(mask_patches, *, threshold: float = CATEGORY_THRESHOLD, rule: str = "partition") -> np.ndarray:
    r"""Category of each multi-class mask patch: an array of str in ``PATCH_CATEGORIES``.

    .. math::

       \operatorname{cat} =
       \begin{cases}
       \mathbb{O} & n_{\mathbb{O}} > (1-t)\,N,\\
       \mathbb{C} & n_{\mathbb{C}} > tN \text{ and } n_{\neg\mathbb{C}} \le tN,\\
       \neg\mathbb{C} & n_{\neg\mathbb{C}} > tN \text{ and } n_{\mathbb{C}} \le tN,\\
       \mathbb{C}\&\neg\mathbb{C} & n_{\mathbb{C}} > tN \text{ and } n_{\neg\mathbb{C}} > tN.
       \end{cases}

    (the ``"partition"`` rule, with :math:`n_{\cdot}` the pixel counts of the patch's :math:`N` pixels and
    :math:`t` = ``threshold``).

    mask_patches: (K, h, w) (or one (h, w)) integer mask with 0 = O, 1 = ¬C, 2 = C (the convention of
    ``medeval.data.phantoms.slide``). ``threshold`` is the 0.001 % of Table 4.1. ``rule="partition"``
    (default) or ``"literal"``; see the module docstring for the exact rules and why they differ. With
    ``rule="literal"`` a patch that no rule of Table 4.1 covers gets ``"unassigned"``.
    """
    if rule not in CATEGORY_RULES:
        raise ValueError(f"rule must be one of {list(CATEGORY_RULES)}, got {rule!r}")
    t = float(threshold)
    if not 0.0 <= t < 0.5:
        raise ValueError(f"threshold must be in [0, 0.5), got {threshold}")
    n_c, n_n, n_o, n = _class_counts(mask_patches)
    limit = t * n
    has_c, has_n = n_c > limit, n_n > limit
    is_o = n_o > (1.0 - t) * n
    out = np.full(len(n_c), "unassigned", dtype="<U10")
    if rule == "literal":
        out[is_o] = "O"
        out[has_c & (n_n == 0)] = "C"
        out[has_n & (n_c == 0)] = "notC"
        out[has_c & has_n] = "mixed"
        return out
    out[has_c & has_n] = "mixed"
    out[has_c & ~has_n] = "C"
    out[has_n & ~has_c] = "notC"
    out[is_o] = "O"
    rest = ~is_o & ~has_c & ~has_n  # traces of both ROI classes, each within the threshold
    out[rest & (n_c > n_n)] = "C"
    out[rest & (n_n > n_c)] = "notC"
    out[rest & (n_c == n_n)] = "mixed"
    return out


def category_counts(categories) -> dict[str, int]:
    """Number of patches in each of ``PATCH_CATEGORIES`` (the layout of thesis Table 4.2)."""
    cats = np.asarray(categories)
    return {c: int((cats == c).sum()) for c in PATCH_CATEGORIES}


def central_region_labels(mask_patches, center_size: int, *, positive_class: int = _C) -> np.ndarray:
    r"""(K,) bool binary patch labels (Table 4.1, binary data sets; PCam): C iff a C pixel lies in the centre.

    .. math::

       y_{ij} = \mathbb{1}\bigl[\exists p \in R_{ij} : m(p) = \mathbb{C}\bigr]

    The central region is the ``center_size`` x ``center_size`` square in the middle of the patch (PCam:
    32 x 32 in a 96 x 96 patch); ``(h - center_size)`` must be even so the region is centred exactly.
    """
    arr = np.asarray(mask_patches)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise ValueError(f"mask_patches must have shape (K, h, w), got {arr.shape}")
    center_size = _check_int(center_size, "center_size")
    h, w = arr.shape[1:]
    if center_size > min(h, w) or (h - center_size) % 2 or (w - center_size) % 2:
        raise ValueError(
            f"center_size ({center_size}) must be at most the patch side ({h} x {w}) and leave an even border"
        )
    r0, c0 = (h - center_size) // 2, (w - center_size) // 2
    centre = arr[:, r0:r0 + center_size, c0:c0 + center_size]
    return (centre == positive_class).any(axis=(1, 2))
