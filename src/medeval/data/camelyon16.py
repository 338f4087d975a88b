"""CAMELYON16 test patches by the PCam procedure (thesis §2.3, §3.2.3 "Inference", Fig. 2.10(ii)).

The thesis scores its PCam-trained classifiers on every patch of the 129 CAMELYON16 test slides: "the patches
were extracted after filtering out the background of WSIs at level 2, the stride being 32 and the central
region being 32x32 pixels" (10,487,709 patches, C:notC = 1:12). A patch is 96 x 96 pixels at level 2 and is
labelled C when its central 32 x 32 region holds at least one tumour pixel (the PCam rule).

The procedure here, one slide at a time and in bands, so memory stays bounded for a 50,000-pixel-wide level:

1. **Otsu threshold** (:func:`otsu_threshold`) of a tissue channel (:func:`tissue_channel`: inverted grey by
   default, or HSV saturation; the thesis names neither) from the 256-bin histogram of the whole level (``otsu_level``, by default the
   extraction level itself), accumulated band by band (:func:`slide_channel_histogram`).
2. **Patch grid**: top-left corners ``(x, y) = (i * stride, j * stride)`` from pixel (0, 0) while the patch fits
   (thesis §3.2.1: systematic extraction from the first pixel), so with stride = central size the central regions
   tile the level without overlap ("while the patches overlap, the central regions do not").
3. **Background filter**: a patch is kept when at least ``min_tissue_fraction`` of its central region lies above
   the Otsu threshold. The thesis does not say how much tissue a kept patch needs; 0.5 is our choice (a
   parameter).
4. **Label**: tumour polygons of the ASAP XML rasterised at the level, band by band
   (:func:`medeval.data.readers.rasterize_asap_annotations` with ``origin``; exclusion groups cleared); a patch
   is C when its central region holds a tumour pixel. A slide is tumour-free only when the reference standard
   (``testing/reference.csv``) says so; a tumour slide without its annotation file is an error, never an
   all-negative slide (:mod:`medeval.data.camelyon16_layout` checks the test set before anything is read).

:func:`extract_slide_patches` returns the kept patches of one slide (the experiment layer runs it over the test
set, in parallel and cached: :func:`medeval.experiments.histology.camelyon16_test_patch_table`) and
:func:`iter_patch_batches` streams the patch pixels back for inference.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.data.camelyon16_layout import IncompleteTestSetError, test_set_layout
from medeval.data.readers import SlideReader, rasterize_asap_annotations, read_asap_annotations

__all__ = [
    "IncompleteTestSetError",
    "PatchGeometry",
    "SlidePatches",
    "camelyon16_test_slides",
    "extract_slide_patches",
    "iter_patch_batches",
    "otsu_threshold",
    "patch_score_map",
    "slide_channel_histogram",
    "tissue_channel",
]

TISSUE_CHANNELS = ("grey", "saturation")


@dataclass(frozen=True)
class PatchGeometry:
    """How test patches are cut: the PCam procedure by default (thesis §2.3).

    ``level`` pyramid level (2 = 4x downsampled, PCam's 10x); ``patch_size`` l; ``stride``; ``central_size`` r
    (the labelled centre, ``(l - r)`` must be even); ``min_tissue_fraction`` of the central region above the Otsu
    threshold for a patch to be kept; ``tissue_channel`` "grey" (255 - luma) or "saturation" (HSV S);
    ``otsu_level`` the level whose histogram sets the threshold (None = ``level``).
    """

    level: int = 2
    patch_size: int = 96
    stride: int = 32
    central_size: int = 32
    min_tissue_fraction: float = 0.5
    tissue_channel: str = "grey"
    otsu_level: int | None = None

    def __post_init__(self):
        if self.level < 0:
            raise ValueError(f"level must be >= 0, got {self.level}")
        if self.patch_size < 1 or self.stride < 1 or self.central_size < 1:
            raise ValueError(
                f"patch_size, stride and central_size must be >= 1, got {self.patch_size}, {self.stride}, "
                f"{self.central_size}"
            )
        if self.central_size > self.patch_size or (self.patch_size - self.central_size) % 2:
            raise ValueError(
                f"central_size ({self.central_size}) must be <= patch_size ({self.patch_size}) with an even "
                "difference (a centred region)"
            )
        if not 0.0 <= self.min_tissue_fraction <= 1.0:
            raise ValueError(f"min_tissue_fraction must be in [0, 1], got {self.min_tissue_fraction}")
        if self.tissue_channel not in TISSUE_CHANNELS:
            raise ValueError(f"tissue_channel must be one of {TISSUE_CHANNELS}, got {self.tissue_channel!r}")
        if self.otsu_level is not None and self.otsu_level < 0:
            raise ValueError(f"otsu_level must be >= 0 or None, got {self.otsu_level}")

    @property
    def border(self) -> int:
        """Pixels between the patch edge and its central region, ``(l - r) / 2``."""
        return (self.patch_size - self.central_size) // 2

    def grid_shape(self, level_size) -> tuple[int, int]:
        """(rows, columns) of patch positions on a level of (width, height) ``level_size``."""
        w, h = (int(v) for v in level_size)
        n_cols = (w - self.patch_size) // self.stride + 1 if w >= self.patch_size else 0
        n_rows = (h - self.patch_size) // self.stride + 1 if h >= self.patch_size else 0
        return n_rows, n_cols


# --------------------------------------------------------------------------------------------------
# Otsu


def otsu_threshold(histogram) -> int:
    r"""Otsu's threshold (Otsu 1979) of a grey-level histogram; foreground is ``value > threshold``.

    .. math::

       k^* = \arg\max_k \sigma_B^2(k), \qquad
       \sigma_B^2(k) = \frac{\bigl(\mu_T\,\omega(k) - \mu(k)\bigr)^2}{\omega(k)\,\bigl(1 - \omega(k)\bigr)}

    with :math:`p_i = h_i / N`, :math:`\omega(k) = \sum_{i \le k} p_i`, :math:`\mu(k) = \sum_{i \le k} i\,p_i` and
    :math:`\mu_T = \mu(L-1)` (Otsu 1979, Eq. 18); the threshold is the first :math:`k` maximising it. A histogram with a single occupied
    level returns that level (nothing is foreground), as scikit-image's ``threshold_otsu`` does.
    """
    h = np.asarray(histogram, dtype=np.float64)
    if h.ndim != 1 or h.size < 2:
        raise ValueError(f"histogram must be 1-D with >= 2 bins, got shape {h.shape}")
    if np.any(h < 0) or not np.isfinite(h).all():
        raise ValueError("histogram counts must be finite and >= 0")
    total = h.sum()
    if total <= 0:
        raise ValueError("histogram is empty (no pixels)")
    occupied = np.flatnonzero(h)
    if occupied.size == 1:
        return int(occupied[0])
    p = h / total
    omega = np.cumsum(p)
    mu = np.cumsum(np.arange(h.size) * p)
    mu_t = mu[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma_b = (mu_t * omega - mu) ** 2 / (omega * (1.0 - omega))
    sigma_b[~np.isfinite(sigma_b)] = -1.0  # omega = 0 or 1: no split
    # only thresholds between the lowest and highest occupied level split the pixels
    return int(occupied[0] + np.argmax(sigma_b[occupied[0] : occupied[-1]]))


def tissue_channel(rgb: np.ndarray, channel: str = "grey") -> np.ndarray:
    """The uint8 channel that is high on tissue: inverted grey ``255 - floor((299 R + 587 G + 114 B + 500) / 1000)``
    (ITU-R BT.601 luma, rounded half up, in integers), with pure black (0, 0, 0) -- what the readers return outside the scanned area or for
    transparent pixels -- mapped to 0 (background); or HSV saturation ``round(255 (max - min) / max)`` (0 where
    max = 0)."""
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[-1] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"rgb must be (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
    if channel == "saturation":
        mx = rgb.max(axis=-1).astype(np.int32)
        mn = rgb.min(axis=-1).astype(np.int32)
        out = np.zeros(mx.shape, dtype=np.int32)
        nz = mx > 0
        out[nz] = ((mx[nz] - mn[nz]) * 255 * 2 + mx[nz]) // (2 * mx[nz])  # round half up
        return out.astype(np.uint8)
    if channel == "grey":
        r, g, b = (rgb[..., k].astype(np.int32) for k in range(3))
        out = (255 - (299 * r + 587 * g + 114 * b + 500) // 1000).astype(np.uint8)
        out[(rgb[..., 0] | rgb[..., 1] | rgb[..., 2]) == 0] = 0
        return out
    raise ValueError(f"channel must be one of {TISSUE_CHANNELS}, got {channel!r}")


def slide_channel_histogram(slide: SlideReader, level: int, channel: str = "grey",
                            band_rows: int = 1024) -> np.ndarray:
    """256-bin histogram of :func:`tissue_channel` over a whole level, read ``band_rows`` rows at a time."""
    _check_level(slide, level)
    w, h = slide.level_dimensions[level]
    ds = slide.level_downsamples[level]
    hist = np.zeros(256, dtype=np.int64)
    for y in range(0, h, band_rows):
        rows = min(band_rows, h - y)
        band = slide.read_region((0, int(round(y * ds))), level, (w, rows))
        hist += np.bincount(tissue_channel(band, channel).ravel(), minlength=256)
    return hist


def _check_level(slide: SlideReader, level: int) -> None:
    if not 0 <= level < slide.level_count:
        raise ValueError(
            f"{slide.path}: level {level} requested but the slide has levels 0..{slide.level_count - 1} "
            f"(dimensions {slide.level_dimensions})"
        )


# --------------------------------------------------------------------------------------------------
# one slide


@dataclass
class SlidePatches:
    """The kept patches of one slide: top-left ``x``, ``y`` in pixels of ``geometry.level``, ``label`` (central
    region holds tumour), ``tissue_fraction`` of the central region; ``otsu`` the threshold used, ``n_positions``
    the grid positions before the background filter."""

    slide: str
    geometry: PatchGeometry
    level_size: tuple[int, int]
    otsu: int
    n_positions: int
    x: np.ndarray
    y: np.ndarray
    label: np.ndarray
    tissue_fraction: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"slide": self.slide, "x": self.x, "y": self.y, "label": self.label,
                             "tissue_fraction": self.tissue_fraction})


def _central_box_sums(band: np.ndarray, xs: np.ndarray, size: int) -> np.ndarray:
    """Sums of ``band`` (size rows x W) over the ``size``-wide column windows starting at ``xs``."""
    col = band.sum(axis=0, dtype=np.int64)
    cum = np.concatenate([[0], np.cumsum(col)])
    return cum[xs + size] - cum[xs]


def extract_slide_patches(slide_path, annotation_path=None, geometry: PatchGeometry | None = None,
                          band_patch_rows: int = 16, *, has_tumour: bool | None = None) -> SlidePatches:
    """Kept patches and labels of one slide (steps 1-4 of the module docstring).

    ``annotation_path`` None means a tumour-free slide; ``has_tumour=True`` (the reference standard's word) with
    no annotation file raises instead of labelling every patch negative. The central regions are read
    ``band_patch_rows`` patch rows at a time (memory: about ``band_patch_rows * stride * level width * 4`` bytes).
    """
    g = geometry or PatchGeometry()
    if band_patch_rows < 1:
        raise ValueError(f"band_patch_rows must be >= 1, got {band_patch_rows}")
    if has_tumour and annotation_path is None:
        raise IncompleteTestSetError([f"{Path(slide_path).stem} is a tumour slide but no annotation XML was given: "
                                      "its patches would all be labelled tumour-free"])
    polygons = read_asap_annotations(annotation_path) if annotation_path is not None else []
    with SlideReader(slide_path) as slide:
        _check_level(slide, g.level)
        otsu_level = g.level if g.otsu_level is None else g.otsu_level
        _check_level(slide, otsu_level)
        threshold = otsu_threshold(slide_channel_histogram(slide, otsu_level, g.tissue_channel))
        w, h = slide.level_dimensions[g.level]
        ds = slide.level_downsamples[g.level]
        n_rows, n_cols = g.grid_shape((w, h))
        xs = np.arange(n_cols, dtype=np.int64) * g.stride
        b, r = g.border, g.central_size
        need = int(np.ceil(g.min_tissue_fraction * r * r))
        out_x, out_y, out_label, out_tissue = [], [], [], []
        left, right = b, (n_cols - 1) * g.stride + b + r
        for j0 in range(0, n_rows if n_cols else 0, band_patch_rows):
            j1 = min(j0 + band_patch_rows, n_rows)
            top = j0 * g.stride + b
            bottom = (j1 - 1) * g.stride + b + r
            window = slide.read_region((int(round(left * ds)), int(round(top * ds))), g.level,
                                       (right - left, bottom - top))
            tissue = tissue_channel(window, g.tissue_channel) > threshold
            tumour = (rasterize_asap_annotations(polygons, (right - left, bottom - top), ds, origin=(left, top))
                      if polygons else None)
            for j in range(j0, j1):
                r0 = j * g.stride + b - top
                t_sum = _central_box_sums(tissue[r0 : r0 + r], xs, r)
                keep = t_sum >= max(need, 1) if g.min_tissue_fraction > 0 else np.ones(n_cols, bool)
                if not keep.any():
                    continue
                if tumour is not None:
                    c_sum = _central_box_sums(tumour[r0 : r0 + r], xs, r)
                    lab = c_sum[keep] > 0
                else:
                    lab = np.zeros(int(keep.sum()), bool)
                out_x.append(xs[keep].astype(np.int32))
                out_y.append(np.full(int(keep.sum()), j * g.stride, dtype=np.int32))
                out_label.append(lab)
                out_tissue.append((t_sum[keep] / (r * r)).astype(np.float32))

    def cat(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    return SlidePatches(slide=Path(slide_path).stem, geometry=g, level_size=(int(w), int(h)), otsu=threshold,
                        n_positions=int(n_rows * n_cols), x=cat(out_x, np.int32), y=cat(out_y, np.int32),
                        label=cat(out_label, bool), tissue_fraction=cat(out_tissue, np.float32))


# --------------------------------------------------------------------------------------------------
# the test set


def camelyon16_test_slides(root, slides=None) -> pd.DataFrame:
    """The test slides under ``root`` (``testing/images/test_NNN.tif``; ``slides`` restricts to some names) with
    their class from the reference standard (``tumour``, from ``testing/reference.csv``) and their annotation file
    (``testing/lesion_annotations/test_NNN.xml``, None for the tumour-free ones), sorted by name.

    Raises :class:`IncompleteTestSetError` naming every missing slide, annotation file or folder and a missing
    reference standard (:func:`medeval.data.camelyon16_layout.test_set_layout`): a partial test set is never
    scored as if it were whole, and a tumour slide is never taken as tumour-free for want of its XML.
    """
    layout = test_set_layout(root, slides).raise_if_incomplete()
    rows = [{"slide": name, "path": str(path), "tumour": bool(layout.reference[name]),
             "annotation": str(layout.annotations[name]) if name in layout.annotations else None}
            for name, path in layout.slides.items()]
    return pd.DataFrame(rows, columns=["slide", "path", "tumour", "annotation"], dtype=object)


def extract_slide_patch_arrays(*, slide_path: str, annotation_path: str | None, geometry: dict,
                               has_tumour: bool | None = None) -> dict:
    """:func:`extract_slide_patches` with plain arguments and a dict result (a picklable grid run)."""
    sp = extract_slide_patches(slide_path, annotation_path, PatchGeometry(**geometry), has_tumour=has_tumour)
    return {"slide": sp.slide, "level_size": sp.level_size, "otsu": sp.otsu, "n_positions": sp.n_positions,
            "x": sp.x, "y": sp.y, "label": sp.label, "tissue_fraction": sp.tissue_fraction}


def iter_patch_batches(table: pd.DataFrame, slide_paths: dict, geometry: PatchGeometry | None = None,
                       batch_size: int = 512, band_patch_rows: int = 8) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream the pixels of ``table``'s patches: yields ``(row positions in table, images (B, l, l, 3) uint8)``.

    ``slide_paths`` maps each slide name of the table to its file. Each slide is read once, in bands of
    ``band_patch_rows`` patch rows, so memory is about one band plus one batch.
    """
    g = geometry or PatchGeometry()
    if batch_size < 1 or band_patch_rows < 1:
        raise ValueError(f"batch_size and band_patch_rows must be >= 1, got {batch_size} and {band_patch_rows}")
    l = g.patch_size  # noqa: E741 - the thesis's name for the patch side
    pending_idx: list[np.ndarray] = []
    pending_img: list[np.ndarray] = []
    n_pending = 0
    slide_col = table["slide"].astype(str).to_numpy()
    for name in pd.unique(slide_col):
        if name not in slide_paths:
            raise KeyError(f"slide_paths has no file for slide {name!r}")
        rows = np.flatnonzero(slide_col == name)
        ys = table["y"].to_numpy()[rows]
        xs = table["x"].to_numpy()[rows]
        order = np.lexsort((xs, ys))
        rows, ys, xs = rows[order], ys[order], xs[order]
        with SlideReader(slide_paths[name]) as slide:
            _check_level(slide, g.level)
            ds = slide.level_downsamples[g.level]
            band_h = band_patch_rows * g.stride
            starts = np.unique(ys // band_h)
            for band in starts:
                sel = (ys // band_h) == band
                by, bx, brow = ys[sel], xs[sel], rows[sel]
                top, left = int(by.min()), int(bx.min())
                bottom, right = int(by.max()) + l, int(bx.max()) + l
                window = slide.read_region((int(round(left * ds)), int(round(top * ds))), g.level,
                                           (right - left, bottom - top))
                imgs = np.stack([window[y - top : y - top + l, x - left : x - left + l] for y, x in zip(by, bx,
                                                                                                      strict=True)])
                pending_idx.append(brow)
                pending_img.append(imgs)
                n_pending += brow.size
                while n_pending >= batch_size:
                    idx = np.concatenate(pending_idx)
                    img = np.concatenate(pending_img)
                    yield idx[:batch_size], img[:batch_size]
                    pending_idx, pending_img = [idx[batch_size:]], [img[batch_size:]]
                    n_pending -= batch_size
    if n_pending:
        yield np.concatenate(pending_idx), np.concatenate(pending_img)


def patch_score_map(x, y, scores, level_size, stride: int, fill: float = np.nan) -> np.ndarray:
    """Stitch patch scores into a probability matrix downsampled by the stride (thesis Fig. 3.4,
    classification): cell ``(y / stride, x / stride)`` holds the score of the patch whose top-left is (x, y);
    background positions are ``fill``."""
    w, h = (int(v) for v in level_size)
    x, y, scores = np.asarray(x), np.asarray(y), np.asarray(scores, dtype=np.float32)
    if not x.shape == y.shape == scores.shape:
        raise ValueError(f"x, y and scores must have one shape, got {x.shape}, {y.shape}, {scores.shape}")
    if np.any(x % stride) or np.any(y % stride):
        raise ValueError(f"patch corners must be multiples of stride ({stride})")
    out = np.full((max(h // stride, 1), max(w // stride, 1)), fill, dtype=np.float32)
    out[y // stride, x // stride] = scores
    return out
