"""Shared figure helpers, so that every chapter's figures look alike."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np


def new_axes(ncols: int = 1, nrows: int = 1, width: float = 4.0, height: float = 3.2, **kwargs):
    """A figure with a grid of axes sized per panel; returns (fig, axes) with axes always a flat array."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False,
                             layout="constrained", **kwargs)
    return fig, axes.ravel()


def curve_with_band(ax, x, mean, low=None, high=None, *, label=None, color=None, alpha=0.2, **kwargs):
    """A mean curve with an optional shaded band (e.g. +-1 SD over runs or a confidence interval)."""
    line, = ax.plot(x, mean, label=label, color=color, **kwargs)
    if low is not None and high is not None:
        ax.fill_between(x, low, high, color=line.get_color(), alpha=alpha, linewidth=0)
    return line


def heatmap(ax, matrix, row_labels: Sequence[str], col_labels: Sequence[str] | None = None, *,
            cmap="viridis", fmt: str | None = ".2f", vmin=None, vmax=None, colorbar: bool = True):
    """A labelled matrix; values printed in the cells when ``fmt`` is given and the matrix is small."""
    matrix = np.asarray(matrix, dtype=float)
    col_labels = row_labels if col_labels is None else col_labels
    im = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(col_labels)), col_labels, rotation=90)
    ax.set_yticks(range(len(row_labels)), row_labels)
    if fmt and matrix.size <= 400:
        finite = matrix[np.isfinite(matrix)]
        mid = (finite.max() + finite.min()) / 2 if finite.size else 0
        for (i, j), v in np.ndenumerate(matrix):
            if np.isfinite(v):
                ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=7,
                        color="white" if v < mid else "black")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return im


def image_gallery(images, *, masks=None, boxes=None, titles=None, ncols: int = 4, size: float = 2.2, cmap="gray"):
    """Show images with optional mask contours and boxes.

    ``boxes``: per image a list of ``(x, y, w, h)`` top-left boxes (pixels), or ``(x, y, w, h, label)``.
    """
    n = len(images)
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols, size * nrows), squeeze=False, layout="constrained")
    for i, ax in enumerate(axes.ravel()):
        ax.axis("off")
        if i >= n:
            continue
        ax.imshow(images[i], cmap=cmap if np.asarray(images[i]).ndim == 2 else None)
        if masks is not None and np.any(masks[i]):
            ax.contour(np.asarray(masks[i]).astype(float), levels=[0.5], colors="red", linewidths=0.8)
        if boxes is not None:
            for box in boxes[i]:
                x, y, w, h = box[:4]
                # boxes cover whole pixels: pixel i spans [i - 0.5, i + 0.5] in imshow coordinates
                ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), w, h, fill=False, edgecolor="yellow", linewidth=1))
                if len(box) > 4:
                    ax.text(x, y, str(box[4]), color="yellow", fontsize=6, va="bottom")
        if titles is not None:
            ax.set_title(titles[i], fontsize=8)
    return fig
