r"""Corruption models of RoDeO's oracle experiments (Meissen, Müller et al., MIDL 2023, App. A).

An *oracle* returns the target boxes as predictions after a parameterised random corruption. Each
function here implements one corruption of App. A on an :class:`~medeval.metrics.detection.ImageBoxes`
and returns a new ``ImageBoxes`` in the same ``box_format`` (internally the centre format of App. A,
``(x, y, w, h)`` with ``(x, y)`` the centre). Every function takes ``rng``: a ``numpy.random.Generator``
or an integer seed; the same seed gives the same output. Strength 0 returns the boxes unchanged.

* ``position_noise`` — ``x̂ ~ N(x, (w·σ)²), ŷ ~ N(y, (h·σ)²)`` (Eq. 7)
* ``position_bias`` — ``x̂ = x + |Δp|·cos φ·w, ŷ = y + |Δp|·sin φ·h, φ ~ U[0,2π)`` (Eq. 8 (*))
* ``shape_noise`` — ``ln ŵ ~ N(ln w, σ²), ln ĥ ~ N(ln h, σ²) independently`` (Eq. 9)
* ``size_noise`` — ``ln Δs ~ N(0, σ²); ŵ = Δs·w, ĥ = Δs·h`` (Eqs. 10-11)
* ``aspect_ratio_noise`` — ``ln â ~ N(ln(w/h), σ²); ŵ = √(A·â), ĥ = √(A/â), A = wh`` (Eqs. 12-13)
* ``class_underprediction`` — each (image, present class) dropped with prob. p (App. A)
* ``class_overprediction`` — each (image, absent class) gets one box w.p. p (App. A)
* ``box_duplication`` — ``each box copied D times, D ~ Geometric, E[D] given`` (App. A)
* ``class_confusion`` — per image, classes selected w.p. p are permuted (App. A)
* ``random_boxes_of_size`` — class oracle: one random s×s box per positive class (App. A)

(*) Eq. 8 as printed divides the offset by w and h, which is dimensionally inconsistent with a
*relative* offset (and makes RoDeO's localisation depend on the absolute box size). We multiply, so
that the offset is ``|Δp|`` target sizes and RoDeO loc = ``2^(−|Δp|²)`` exactly; ``literal_eq8=True``
gives the printed formula.

The paper composes several of these (e.g. underprediction followed by ``position_noise`` with
σ = 0.5); composition is left to the caller (``medeval.experiments.rodeo``).

Edge-case policy: negative strengths or probabilities outside [0, 1] raise ``ValueError``.
"""

from __future__ import annotations

import numpy as np

from medeval.data.seeding import as_generator
from medeval.metrics.boxes import convert_boxes
from medeval.metrics.detection import ImageBoxes

__all__ = [
    "aspect_ratio_noise",
    "box_duplication",
    "class_confusion",
    "class_overprediction",
    "class_underprediction",
    "position_bias",
    "position_noise",
    "random_boxes_of_size",
    "shape_noise",
    "size_noise",
]


def _rng(rng) -> np.random.Generator:
    return as_generator(rng, name="rng", required=True)


def _check_boxes(boxes) -> ImageBoxes:
    if not isinstance(boxes, ImageBoxes):
        raise ValueError(f"boxes must be an ImageBoxes, got {type(boxes).__name__}")
    return boxes


def _nonneg(value, name) -> float:
    v = float(value)
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def _prob(value, name) -> float:
    v = float(value)
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return v


def _n_classes(num_classes) -> int:
    if not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
        raise ValueError(f"num_classes must be a positive integer, got {num_classes!r}")
    return int(num_classes)


def _extent(image_size) -> tuple[float, float]:
    w, h = (image_size, image_size) if np.ndim(image_size) == 0 else tuple(image_size)
    w, h = float(w), float(h)
    if not (w > 0 and h > 0 and np.isfinite(w) and np.isfinite(h)):
        raise ValueError(f"image_size must be a positive number or (width, height), got {image_size!r}")
    return w, h


def _centre(boxes: ImageBoxes) -> np.ndarray:
    if len(boxes) == 0:
        return np.zeros((0, 4))
    return convert_boxes(boxes.boxes, boxes.box_format, "cxcywh")


def _with(
    boxes: ImageBoxes, cxcywh=None, labels=None, image_ids=None, n_images=None, keep=None
) -> ImageBoxes:
    """A new ImageBoxes in ``boxes``' format (validated)."""
    c = _centre(boxes) if cxcywh is None else cxcywh
    lab = boxes.labels if labels is None else labels
    img = boxes.image_ids if image_ids is None else image_ids
    if keep is not None:
        c, lab, img = c[keep], lab[keep], img[keep]
    coords = convert_boxes(c, "cxcywh", boxes.box_format) if len(lab) else np.zeros((0, 4))
    return ImageBoxes.from_arrays(
        coords,
        lab,
        img,
        box_format=boxes.box_format,
        n_images=boxes.n_images if n_images is None else n_images,
        name="corrupted boxes",
    )


def position_noise(boxes: ImageBoxes, sigma: float, rng) -> ImageBoxes:
    r"""Eq. 7: move each centre by Gaussian noise with std ``sigma`` box widths / heights.

    .. math::

       \hat x \sim \mathcal N\bigl(x, (w\,\sigma_{pos})^2\bigr),\quad \hat y \sim \mathcal N\bigl(y, (h\,\sigma_{pos})^2\bigr)

    For one box, RoDeO's expected localisation is :math:`1 / (1 + 2 \ln 2\, \sigma_{pos}^2)`.
    """
    boxes, sigma, g = _check_boxes(boxes), _nonneg(sigma, "sigma"), _rng(rng)
    c = _centre(boxes).copy()
    if sigma > 0 and len(boxes):
        noise = g.standard_normal((len(boxes), 2))
        c[:, 0] += noise[:, 0] * c[:, 2] * sigma
        c[:, 1] += noise[:, 1] * c[:, 3] * sigma
    return _with(boxes, c)


def position_bias(boxes: ImageBoxes, magnitude: float, rng, *, literal_eq8: bool = False) -> ImageBoxes:
    """Eq. 8: move each centre by ``magnitude`` box sizes in a uniformly random direction φ.

    ``x̂ = x + |Δp| cos φ · w``, ``ŷ = y + |Δp| sin φ · h`` (RoDeO loc = 2^(−|Δp|²) for every φ).
    ``literal_eq8=True`` divides by w and h as printed in the paper (see the module docstring).
    """
    boxes, mag, g = _check_boxes(boxes), _nonneg(magnitude, "magnitude"), _rng(rng)
    c = _centre(boxes).copy()
    if mag > 0 and len(boxes):
        phi = g.uniform(0.0, 2 * np.pi, len(boxes))
        if literal_eq8:
            c[:, 0] += mag * np.cos(phi) / c[:, 2]
            c[:, 1] += mag * np.sin(phi) / c[:, 3]
        else:
            c[:, 0] += mag * np.cos(phi) * c[:, 2]
            c[:, 1] += mag * np.sin(phi) * c[:, 3]
    return _with(boxes, c)


def shape_noise(boxes: ImageBoxes, sigma: float, rng) -> ImageBoxes:
    r"""Eq. 9: log-normal width and height; centre kept.

    .. math::

       \ln \hat w \sim \mathcal N(\ln w, \sigma_{shape}^2),\quad \ln \hat h \sim \mathcal N(\ln h, \sigma_{shape}^2)
"""
    boxes, sigma, g = _check_boxes(boxes), _nonneg(sigma, "sigma"), _rng(rng)
    c = _centre(boxes).copy()
    if sigma > 0 and len(boxes):
        c[:, 2:4] *= np.exp(sigma * g.standard_normal((len(boxes), 2)))
    return _with(boxes, c)


def size_noise(boxes: ImageBoxes, sigma: float, rng) -> ImageBoxes:
    """Eqs. 10-11: scale width and height by one factor ``Δs``, ``ln Δs ~ N(0, σ²)``; centre kept.

    RoDeO's shape score of one box is then ``min(Δs, 1/Δs)²``.
    """
    boxes, sigma, g = _check_boxes(boxes), _nonneg(sigma, "sigma"), _rng(rng)
    c = _centre(boxes).copy()
    if sigma > 0 and len(boxes):
        c[:, 2:4] *= np.exp(sigma * g.standard_normal(len(boxes)))[:, None]
    return _with(boxes, c)


def aspect_ratio_noise(boxes: ImageBoxes, sigma: float, rng) -> ImageBoxes:
    """Eqs. 12-13: keep the area ``A = wh``, draw ``ln â ~ N(ln(w/h), σ²)``, ``ŵ = √(Aâ)``, ``ĥ = √(A/â)``.

    RoDeO's shape score of one box is then ``1 / (2·exp(|ln â − ln a|/2) − 1)``.
    """
    boxes, sigma, g = _check_boxes(boxes), _nonneg(sigma, "sigma"), _rng(rng)
    c = _centre(boxes).copy()
    if sigma > 0 and len(boxes):
        area = c[:, 2] * c[:, 3]
        ratio = np.exp(np.log(c[:, 2] / c[:, 3]) + sigma * g.standard_normal(len(boxes)))
        c[:, 2] = np.sqrt(area * ratio)
        c[:, 3] = np.sqrt(area / ratio)
    return _with(boxes, c)


def class_underprediction(boxes: ImageBoxes, p: float, rng) -> ImageBoxes:
    """For each image and each class present in it, drop all its boxes with probability ``p``."""
    boxes, p, g = _check_boxes(boxes), _prob(p, "p"), _rng(rng)
    if len(boxes) == 0 or p == 0:
        return _with(boxes)
    cells, inverse = np.unique(boxes.image_ids * (boxes.labels.max() + 1) + boxes.labels, return_inverse=True)
    dropped = g.random(cells.size) < p
    return _with(boxes, keep=~dropped[inverse])


def class_overprediction(
    boxes: ImageBoxes, p: float, rng, *, num_classes: int, image_size, box_size: float = 0.25
) -> ImageBoxes:
    """For each image and each class absent from it, flip it to present with probability ``p`` and add
    one box of ``box_size × box_size`` (fractions of the image; 0.25 = "the mean box size in the
    dataset" per the paper) placed uniformly so that it lies inside the image.

    ``image_size``: the image extent in the boxes' units (1.0 for normalised coordinates, or
    ``(width, height)``, e.g. 1024 for NIH pixels).
    """
    boxes, p, g = _check_boxes(boxes), _prob(p, "p"), _rng(rng)
    k = _n_classes(num_classes)
    if len(boxes) and boxes.labels.max() >= k:
        raise ValueError(f"boxes contain class id {int(boxes.labels.max())} >= num_classes={k}")
    width, height = _extent(image_size)
    s = _prob(box_size, "box_size")
    if s == 0:
        raise ValueError("box_size must be > 0")
    present = np.zeros((boxes.n_images, k), bool)
    present[boxes.image_ids, boxes.labels] = True
    flip = (g.random((boxes.n_images, k)) < p) & ~present
    img, lab = np.nonzero(flip)
    new = _uniform_boxes_inside(g, img.size, s * width, s * height, width, height)
    return _concat(boxes, new, lab, img)


def _uniform_boxes_inside(g, n, bw, bh, width, height) -> np.ndarray:
    cx = g.uniform(bw / 2, width - bw / 2, n)
    cy = g.uniform(bh / 2, height - bh / 2, n)
    return np.column_stack([cx, cy, np.full(n, bw), np.full(n, bh)])


def _concat(boxes: ImageBoxes, new_cxcywh, new_labels, new_images) -> ImageBoxes:
    c = np.concatenate([_centre(boxes), new_cxcywh])
    lab = np.concatenate([boxes.labels, np.asarray(new_labels, np.int64)])
    img = np.concatenate([boxes.image_ids, np.asarray(new_images, np.int64)])
    return _with(boxes, c, lab, img)


def box_duplication(boxes: ImageBoxes, expected_duplicates: float, rng) -> ImageBoxes:
    """Copy each box ``D`` times, ``D ~ Geometric`` on {0, 1, 2, …} with mean ``expected_duplicates``
    (``P(D = d) = (1 − q) q^d``, ``q = E/(1 + E)``). Copies are exact; the paper then applies
    ``position_noise`` (σ = 0.5) to originals and copies. With unit weights RoDeO's count factor
    is then ``N / (N + ΣD) ≈ 1 / (1 + E[D])``.
    """
    boxes, e, g = _check_boxes(boxes), _nonneg(expected_duplicates, "expected_duplicates"), _rng(rng)
    if e == 0 or len(boxes) == 0:
        return _with(boxes)
    d = g.geometric(1.0 / (1.0 + e), len(boxes)) - 1
    idx = np.repeat(np.arange(len(boxes)), d)
    c = _centre(boxes)
    return _concat(boxes, c[idx], boxes.labels[idx], boxes.image_ids[idx])


def class_confusion(boxes: ImageBoxes, p: float, rng, *, num_classes: int) -> ImageBoxes:
    """Per image, select each of the ``num_classes`` classes with probability ``p`` and relabel the
    boxes of the selected classes by a uniformly random permutation of the selected set
    (unselected classes unchanged; a permutation may fix some classes)."""
    boxes, p, g = _check_boxes(boxes), _prob(p, "p"), _rng(rng)
    k = _n_classes(num_classes)
    if len(boxes) and boxes.labels.max() >= k:
        raise ValueError(f"boxes contain class id {int(boxes.labels.max())} >= num_classes={k}")
    mapping = np.tile(np.arange(k), (boxes.n_images, 1))
    selected = g.random((boxes.n_images, k)) < p
    # a random permutation of each image's selected classes: sort random keys within the selection
    keys = np.where(selected, g.random((boxes.n_images, k)), np.inf)
    order = np.argsort(keys, axis=1, kind="stable")  # selected classes in random order, first
    sel_sorted = np.sort(np.where(selected, np.arange(k), k), axis=1)  # selected classes ascending, first
    n_sel = selected.sum(axis=1)
    rows, cols = np.nonzero(np.arange(k)[None, :] < n_sel[:, None])
    mapping[rows, sel_sorted[rows, cols]] = order[rows, cols]
    return _with(boxes, labels=mapping[boxes.image_ids, boxes.labels])


def random_boxes_of_size(
    boxes: ImageBoxes, size: float, rng, *, num_classes: int, image_size, p_overpred: float = 0.0
) -> ImageBoxes:
    """Class oracle with randomly placed boxes (Fig. 7): the positive classes of each image (those
    with a box in ``boxes``) plus each absent class with probability ``p_overpred``; one square box
    of side ``size`` (fraction of the image) per positive class, placed uniformly inside the image."""
    boxes, g = _check_boxes(boxes), _rng(rng)
    s, p = _prob(size, "size"), _prob(p_overpred, "p_overpred")
    if s == 0:
        raise ValueError("size must be > 0")
    k = _n_classes(num_classes)
    if len(boxes) and boxes.labels.max() >= k:
        raise ValueError(f"boxes contain class id {int(boxes.labels.max())} >= num_classes={k}")
    width, height = _extent(image_size)
    present = np.zeros((boxes.n_images, k), bool)
    present[boxes.image_ids, boxes.labels] = True
    positive = present | (g.random((boxes.n_images, k)) < p)
    img, lab = np.nonzero(positive)
    new = _uniform_boxes_inside(g, img.size, s * width, s * height, width, height)
    coords = convert_boxes(new, "cxcywh", boxes.box_format) if img.size else np.zeros((0, 4))
    return ImageBoxes.from_arrays(
        coords, lab, img, box_format=boxes.box_format, n_images=boxes.n_images, name="random boxes"
    )
