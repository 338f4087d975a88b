"""Whole-slide phantoms: H&E-like lymph-node tissue with exact three-class masks (chapter 4's stand-in).

MLNTO, the thesis's multi-class lymph-node data set, is private (thesis §2.4.1), so chapter 4 runs on these
phantoms by default. A slide has the three pixel classes of the thesis:

* **C** (2, tumour / metastasis): dense, dark-purple tissue with large, pleomorphic nuclei. One
  macro-metastasis-like region per slide (when ``tumour_fraction > 0``) plus ``n_micro`` small
  micro-metastasis-like foci, all inside lymph nodes.
* **¬C** (1, ``"notC"``, lymph-node tissue): light purple with dense small lymphocyte nuclei, made
  heterogeneous by germinal-centre-like sub-regions whose nuclei and colours are close to C (the
  inter-class similarity the thesis blames for false positives).
* **O** (0, other): white background, fat (white vacuoles with thin pink membranes) around each node and a
  pink fibrous capsule.

Small "common structures" (red vessel/fibrin spots) appear in O tissue, C and ¬C alike and keep the label of
the region around them, as annotations at superpixel level would (thesis §2.4.1, §4.5.3.1.1, Figs. 4.5, 4.7).

The natural prior of MLNTO (Table 2.2: 78-79 % O, 11-14 % C, 7-11 % ¬C) is the default:
``tissue_fraction = 0.22`` of the slide is lymph node (C + ¬C) and ``tumour_fraction = 0.11`` is C; the
realised fractions differ by the irregular boundaries (a few percentage points; see the tests).

Streaming
---------
Every pixel is a pure function of its global (row, column) and of a small deterministic layout (node
ellipses, tumour and germinal-centre blobs, drawn from ``np.random.default_rng(seed)``): random textures come
from a counter-based hash (splitmix64) of global lattice coordinates and are interpolated with arithmetic
only. A region can therefore be rendered without the rest of the slide, and :func:`iter_slide_patches`
streams patches of an arbitrarily large slide in bounded memory; its patches equal the crops of
:func:`generate_slide` bit for bit (tested).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from medeval.data.phantoms._checks import check_seed

__all__ = [
    "SLIDE_CLASSES",
    "Slide",
    "SlideLayout",
    "class_fractions",
    "generate_slide",
    "iter_slide_patches",
    "render_region",
    "slide_layout",
]

#: Pixel classes of the mask, by value: 0 = O (other), 1 = ¬C (lymph node), 2 = C (tumour).
SLIDE_CLASSES = ("O", "notC", "C")
MIN_SLIDE_SIDE = 32
_TILE = 1024  # generate_slide renders in tiles of this side to bound temporary memory

# ----------------------------------------------------------------------------------------------------------
# Counter-based hashing: uniform numbers as a pure function of integer coordinates

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _hash_uniform(seed: int, salt: int, *coords) -> np.ndarray:
    """Uniform [0, 1) numbers, one per broadcast element of the integer coordinate arrays."""
    with np.errstate(over="ignore"):
        h = _mix(np.asarray(np.uint64(seed) * _GOLDEN + np.uint64(salt), dtype=np.uint64))
        for a in coords:
            h = _mix(h ^ (np.asarray(a, dtype=np.int64).astype(np.uint64) * _GOLDEN))
        return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def _value_noise(seed: int, salt: int, rows: np.ndarray, cols: np.ndarray, spacing: float) -> np.ndarray:
    """Smooth value noise in [0, 1] on global integer pixel coordinates (lattice every ``spacing`` px).

    The lattice values are hashed from global lattice indices and interpolated with a smoothstep: only
    +, - and * on identical inputs, so any crop of a region equals the same region rendered on its own.
    """
    spacing = float(spacing)
    fr_rows = rows / spacing
    fr_cols = cols / spacing
    gr = np.floor(fr_rows).astype(np.int64)
    gc = np.floor(fr_cols).astype(np.int64)
    tr = fr_rows - gr
    tc = fr_cols - gc
    r0, c0 = int(gr.min()), int(gc.min())
    lat_r = np.arange(r0, int(gr.max()) + 2)[:, None]
    lat_c = np.arange(c0, int(gc.max()) + 2)[None, :]
    lattice = _hash_uniform(seed, salt, lat_r, lat_c)
    ir, ic = gr - r0, gc - c0
    sr = tr * tr * (3.0 - 2.0 * tr)
    sc = tc * tc * (3.0 - 2.0 * tc)
    a = lattice[ir, ic]
    b = lattice[ir, ic + 1]
    c = lattice[ir + 1, ic]
    d = lattice[ir + 1, ic + 1]
    return (a + (b - a) * sc) + ((c + (d - c) * sc) - (a + (b - a) * sc)) * sr


# ----------------------------------------------------------------------------------------------------------
# Layout


@dataclass(frozen=True)
class _Blob:
    """An irregular ellipse: inside iff ``q < 1 + roughness * (2 * noise - 1)``.

    :meta public:
    """

    cy: float
    cx: float
    ry: float
    rx: float
    roughness: float
    noise_spacing: float
    salt: int

    def bbox(self) -> tuple[int, int, int, int]:
        grow = np.sqrt(1.0 + self.roughness) + 1e-9
        return (
            int(np.floor(self.cy - self.ry * grow)) - 1, int(np.ceil(self.cy + self.ry * grow)) + 2,
            int(np.floor(self.cx - self.rx * grow)) - 1, int(np.ceil(self.cx + self.rx * grow)) + 2,
        )

    def q(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        dy = (rows - self.cy) / self.ry
        dx = (cols - self.cx) / self.rx
        return dy * dy + dx * dx

    def threshold(self, seed: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        if self.roughness == 0:
            return np.ones((rows.shape[0], cols.shape[1]))
        noise = _value_noise(seed, self.salt, rows, cols, self.noise_spacing)
        return 1.0 + self.roughness * (2.0 * noise - 1.0)


@dataclass(frozen=True)
class SlideLayout:
    """The deterministic low-resolution description of a slide (everything but the per-pixel texture)."""

    height: int
    width: int
    seed: int
    nodes: tuple[_Blob, ...]
    tumours: tuple[_Blob, ...]  # the macro-metastasis first (if any), then micro-metastases
    germinal_centres: tuple[_Blob, ...]
    fat_margin: float  # fat ring around each node, as a factor on the node's radii
    capsule_width: float  # fibrous capsule, as a fraction of the node's radii
    stain: tuple[float, float, float]  # per-slide colour factors (staining variation)
    structure_density: float
    nucleus_scale: float
    germinal_similarity: float = 0.0  # 0: germinal centres as drawn; 1: textured exactly like tumour (C)


def _check_side(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < MIN_SLIDE_SIDE:
        raise ValueError(f"{name} must be an integer >= {MIN_SLIDE_SIDE}, got {value!r}")
    return int(value)


def _check_fraction(value, name: str, low: float, high: float) -> float:
    value = float(value)
    if not (low <= value <= high) or not np.isfinite(value):
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return value


def slide_layout(
    height: int,
    width: int,
    *,
    seed: int = 0,
    tissue_fraction: float = 0.22,
    tumour_fraction: float = 0.11,
    n_nodes: int | None = None,
    n_micro: int | None = None,
    germinal_fraction: float = 0.12,
    structure_density: float = 0.3,
    nucleus_scale: float = 1.0,
    germinal_similarity: float = 0.0,
) -> SlideLayout:
    """Draw the layout of a slide phantom.

    Parameters
    ----------
    height, width : slide size in pixels.
    seed : seed of the layout.
    tissue_fraction : target fraction of the slide that is lymph node (C + ¬C), in [0.02, 0.6].
    tumour_fraction : target fraction of the slide that is C, in [0, tissue_fraction); 0 = a slide
        without metastasis. About 80 % of it goes to the macro-metastasis, the rest to micro-metastases.
    n_nodes : lymph nodes (default: 1 for slides under 1024 px on the shorter side, else 1-3 at random).
    n_micro : micro-metastasis-like foci (default 2-6 at random; 0 when ``tumour_fraction`` is 0).
    germinal_fraction : approximate fraction of node area covered by C-like germinal centres (¬C).
    structure_density : probability that a 64 x 64 px cell holds a common structure (vessel/fibrin spot).
    nucleus_scale : multiplies nucleus sizes and spacings (1.0: lymphocytes ~2 px, tumour nuclei ~3 px).
    germinal_similarity : in [0, 1], how far the germinal centres' texture (colours, nucleus sizes and density)
        moves toward the tumour's: 0 (default) leaves them as drawn, 1 textures them exactly like C (only the
        mask tells them apart). It sets the inter-class similarity behind the thesis's false positives, so it
        calibrates how hard C is to separate from ¬C; the layout and every other pixel do not depend on it.
    """
    height, width = _check_side(height, "height"), _check_side(width, "width")
    seed = check_seed(seed)
    tissue = _check_fraction(tissue_fraction, "tissue_fraction", 0.02, 0.6)
    tumour = _check_fraction(tumour_fraction, "tumour_fraction", 0.0, 0.6)
    if tumour >= tissue:
        raise ValueError(f"tumour_fraction ({tumour}) must be smaller than tissue_fraction ({tissue})")
    germinal_fraction = _check_fraction(germinal_fraction, "germinal_fraction", 0.0, 0.5)
    structure_density = _check_fraction(structure_density, "structure_density", 0.0, 1.0)
    nucleus_scale = _check_fraction(nucleus_scale, "nucleus_scale", 0.25, 4.0)
    germinal_similarity = _check_fraction(germinal_similarity, "germinal_similarity", 0.0, 1.0)
    rng = np.random.default_rng([seed, 7])
    if n_nodes is None:
        n_nodes = 1 if min(height, width) < 1024 else int(rng.integers(1, 4))
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, (int, np.integer)) or not 1 <= n_nodes <= 10:
        raise ValueError(f"n_nodes must be an integer in [1, 10], got {n_nodes!r}")
    if n_micro is None:
        n_micro = int(rng.integers(2, 7)) if tumour > 0 else 0
    if isinstance(n_micro, bool) or not isinstance(n_micro, (int, np.integer)) or not 0 <= n_micro <= 100:
        raise ValueError(f"n_micro must be an integer in [0, 100], got {n_micro!r}")
    if tumour == 0:
        n_micro = 0

    area = float(height) * width
    salt = iter(range(1000, 100000))
    shares = rng.dirichlet(np.full(n_nodes, 4.0)) if n_nodes > 1 else np.ones(1)
    nodes = []
    for share in shares:
        aspect = rng.uniform(0.65, 1.0)
        node_area = tissue * area * share
        ry = np.sqrt(node_area / (np.pi * aspect))
        rx = ry * aspect
        if rng.random() < 0.5:
            ry, rx = rx, ry
        # keep the node (and most of its fat) inside the slide
        ry, rx = min(ry, 0.45 * height), min(rx, 0.45 * width)
        cy = rng.uniform(min(1.1 * ry, height / 2), max(height - 1.1 * ry, height / 2))
        cx = rng.uniform(min(1.1 * rx, width / 2), max(width - 1.1 * rx, width / 2))
        nodes.append(_Blob(cy, cx, ry, rx, 0.18, max(4.0, min(ry, rx) / 2), next(salt)))

    tumours = []
    if tumour > 0:
        macro_area = tumour * area * rng.uniform(0.75, 0.85)
        host = nodes[int(np.argmax([n.ry * n.rx for n in nodes]))]
        r = np.sqrt(macro_area / np.pi)
        ry, rx = r * rng.uniform(0.85, 1.15), 0.0
        rx = macro_area / (np.pi * ry)
        ry, rx = min(ry, 0.95 * host.ry), min(rx, 0.95 * host.rx)
        angle = rng.uniform(0, 2 * np.pi)
        room_y, room_x = max(host.ry - ry, 0.0), max(host.rx - rx, 0.0)
        dist = rng.uniform(0.0, 0.8)
        tumours.append(_Blob(host.cy + dist * room_y * np.sin(angle), host.cx + dist * room_x * np.cos(angle),
                             ry, rx, 0.35, max(3.0, min(ry, rx) / 1.5), next(salt)))
        micro_area = max(tumour * area - macro_area, 0.0) / max(n_micro, 1)
        for _ in range(n_micro):
            host = nodes[int(rng.integers(len(nodes)))]
            r = max(np.sqrt(micro_area / np.pi) * rng.uniform(0.6, 1.4), 1.5)
            angle, dist = rng.uniform(0, 2 * np.pi), np.sqrt(rng.uniform(0, 0.7))
            tumours.append(_Blob(host.cy + dist * host.ry * np.sin(angle), host.cx + dist * host.rx * np.cos(angle),
                                 r, r * rng.uniform(0.7, 1.3), 0.3, max(2.0, r / 1.5), next(salt)))

    germinal = []
    for host in nodes:
        rg = max(2.5, 0.11 * min(host.ry, host.rx))
        k = int(round(germinal_fraction * host.ry * host.rx / (rg * rg)))
        for _ in range(k):
            angle, dist = rng.uniform(0, 2 * np.pi), np.sqrt(rng.uniform(0, 0.75))
            g = rg * rng.uniform(0.7, 1.3)
            germinal.append(_Blob(host.cy + dist * host.ry * np.sin(angle), host.cx + dist * host.rx * np.cos(angle),
                                  g, g * rng.uniform(0.8, 1.2), 0.25, max(2.0, g / 1.5), next(salt)))
    stain = tuple(float(s) for s in rng.uniform(0.95, 1.05, size=3))
    return SlideLayout(
        height=height, width=width, seed=seed, nodes=tuple(nodes), tumours=tuple(tumours),
        germinal_centres=tuple(germinal), fat_margin=float(rng.uniform(1.18, 1.3)),
        capsule_width=float(rng.uniform(0.03, 0.05)), stain=stain, structure_density=structure_density,
        nucleus_scale=nucleus_scale, germinal_similarity=germinal_similarity,
    )


# ----------------------------------------------------------------------------------------------------------
# Rendering

#: (background RGB, nucleus RGB, smallest and largest nucleus radius, nucleus presence) of the textures that
#: ``germinal_similarity`` interpolates between (both nuclei lattices have 8 px cells).
_GERMINAL_LOOK = ((0.78, 0.62, 0.82), (0.40, 0.24, 0.57), 2.3, 3.2, 0.8)
_TUMOUR_LOOK = ((0.72, 0.52, 0.76), (0.30, 0.14, 0.46), 2.4, 3.7, 0.92)


def _blob_inside(blob: _Blob, seed: int, rows, cols, out: np.ndarray, scale: float = 1.0) -> None:
    """OR into ``out`` the pixels inside ``blob`` with its radii multiplied by ``scale``."""
    r0, r1, c0, c1 = blob.bbox() if scale == 1.0 else _scaled_bbox(blob, scale)
    lo_r, lo_c = int(rows[0, 0]), int(cols[0, 0])
    a0, a1 = max(r0 - lo_r, 0), min(r1 - lo_r, rows.shape[0])
    b0, b1 = max(c0 - lo_c, 0), min(c1 - lo_c, cols.shape[1])
    if a0 >= a1 or b0 >= b1:
        return
    rr, cc = rows[a0:a1], cols[:, b0:b1]
    q = blob.q(rr, cc)
    out[a0:a1, b0:b1] |= q < blob.threshold(seed, rr, cc) * (scale * scale)


def _scaled_bbox(blob: _Blob, scale: float):
    grow = np.sqrt(1.0 + blob.roughness) * scale + 1e-9
    return (
        int(np.floor(blob.cy - blob.ry * grow)) - 1, int(np.ceil(blob.cy + blob.ry * grow)) + 2,
        int(np.floor(blob.cx - blob.rx * grow)) - 1, int(np.ceil(blob.cx + blob.rx * grow)) + 2,
    )


def _nuclei_layer(seed, salt, rows, cols, cell, r_low, r_high, presence):
    """One lattice of nuclei: one jittered round nucleus per ``cell`` x ``cell`` cell, wholly inside it."""
    gr, gc = rows // cell, cols // cell
    lr, lc = rows - gr * cell, cols - gc * cell
    r0, c0 = int(gr.min()), int(gc.min())
    lat_r = np.arange(r0, int(gr.max()) + 1)[:, None]
    lat_c = np.arange(c0, int(gc.max()) + 1)[None, :]
    radius = r_low + (r_high - r_low) * _hash_uniform(seed, salt, lat_r, lat_c)
    margin = np.minimum(radius + 0.5, cell / 2.0)
    oy = margin + (cell - 2 * margin) * _hash_uniform(seed, salt + 1, lat_r, lat_c)
    ox = margin + (cell - 2 * margin) * _hash_uniform(seed, salt + 2, lat_r, lat_c)
    alive = _hash_uniform(seed, salt + 3, lat_r, lat_c) < presence
    ir, ic = gr - r0, gc - c0
    dy = (lr + 0.5) - oy[ir, ic]
    dx = (lc + 0.5) - ox[ir, ic]
    rad = radius[ir, ic]
    d2 = dy * dy + dx * dx
    inten = np.clip((rad * rad - d2) / (rad + 0.5), 0.0, 1.0)
    return inten * alive[ir, ic]


def _nuclei(seed, salt, rows, cols, cell, r_low, r_high, presence, layers=2):
    """Nucleus intensity in [0, 1] from ``layers`` offset lattices of jittered nuclei (their maximum).

    Each lattice has cells of ``cell * sqrt(layers)`` px (same density overall) and is offset by a fraction
    of a cell, so nuclei are irregularly placed and may touch, yet every pixel only looks at one cell per
    lattice (a nucleus never leaves its cell).
    """
    big = max(int(round(cell * np.sqrt(layers))), int(np.ceil(2 * r_high + 2)))
    out = None
    for k in range(layers):
        off = (big * k) // layers
        layer = _nuclei_layer(seed, salt + 10 * k, rows + off, cols + (off * 7) % big, big, r_low, r_high, presence)
        out = layer if out is None else np.maximum(out, layer)
    return out


def _texture(base, nucleus, inten):
    """Blend a background colour and a nucleus colour (RGB tuples) by nucleus intensity (H, W)."""
    base = np.asarray(base)[None, None, :]
    nucleus = np.asarray(nucleus)[None, None, :]
    return base + (nucleus - base) * inten[..., None]


def render_region(layout: SlideLayout, row0: int, col0: int, height: int, width: int):
    """Render rows ``row0 .. row0 + height`` and columns ``col0 .. col0 + width`` of a slide.

    Returns ``(image, mask)``: (height, width, 3) uint8 RGB and (height, width) uint8 class mask
    (0 = O, 1 = ¬C, 2 = C). The region must lie inside the slide.
    """
    if not (0 <= row0 and 0 <= col0 and height >= 1 and width >= 1
            and row0 + height <= layout.height and col0 + width <= layout.width):
        raise ValueError(
            f"region rows [{row0}, {row0 + height}) x cols [{col0}, {col0 + width}) must lie inside the "
            f"{layout.height} x {layout.width} slide"
        )
    seed = layout.seed
    rows = np.arange(row0, row0 + height, dtype=np.int64)[:, None]
    cols = np.arange(col0, col0 + width, dtype=np.int64)[None, :]
    frows, fcols = rows.astype(np.float64), cols.astype(np.float64)
    shape = (height, width)

    node = np.zeros(shape, bool)
    inner = np.zeros(shape, bool)  # node minus its capsule
    fat = np.zeros(shape, bool)
    for blob in layout.nodes:
        _blob_inside(blob, seed, frows, fcols, node)
        _blob_inside(blob, seed, frows, fcols, inner, scale=1.0 - layout.capsule_width)
        _blob_inside(blob, seed, frows, fcols, fat, scale=layout.fat_margin)
    capsule = node & ~inner
    fat &= ~node
    tumour = np.zeros(shape, bool)
    for blob in layout.tumours:
        _blob_inside(blob, seed, frows, fcols, tumour)
    tumour &= inner
    germinal = np.zeros(shape, bool)
    for blob in layout.germinal_centres:
        _blob_inside(blob, seed, frows, fcols, germinal)
    germinal &= inner & ~tumour
    lymph = inner & ~tumour

    mask = np.zeros(shape, np.uint8)
    mask[lymph] = 1
    mask[tumour] = 2

    s = layout.nucleus_scale
    grain = _hash_uniform(seed, 11, rows, cols) - 0.5  # per-pixel grain
    smooth = _value_noise(seed, 12, frows, fcols, 24.0 * s) - 0.5
    image = np.empty((height, width, 3))
    image[...] = (0.95, 0.94, 0.96)
    # fat: white vacuoles separated by thin pink membranes (level lines of a value-noise field)
    membrane_field = _value_noise(seed, 13, frows, fcols, 9.0 * s)
    membrane = np.abs(membrane_field - 0.5) < 0.035
    fat_rgb = np.where(membrane[..., None], np.array((0.86, 0.62, 0.76)), np.array((0.97, 0.95, 0.97)))
    image = np.where(fat[..., None], fat_rgb, image)
    # fibrous capsule: pink with streaks
    streak = _value_noise(seed, 14, frows, fcols, 5.0 * s)
    fib = np.array((0.90, 0.62, 0.74))[None, None, :] - 0.08 * streak[..., None]
    image = np.where(capsule[..., None], fib, image)
    # lymph-node tissue (¬C): small dense lymphocyte nuclei on light purple
    lym = _texture((0.80, 0.68, 0.86), (0.28, 0.18, 0.52),
                   _nuclei(seed, 20, rows, cols, max(3, round(5 * s)), 1.4 * s, 2.0 * s, 0.85))
    image = np.where((lymph & ~germinal)[..., None], lym, image)
    # germinal centres (¬C, but C-like): larger, paler nuclei, closer to the tumour colours; germinal_similarity
    # moves every texture parameter toward the tumour's (below)
    g = layout.germinal_similarity
    ger_look = _GERMINAL_LOOK if g == 0 else tuple(
        tuple(a + (b - a) * g for a, b in zip(pa, pb, strict=True)) if isinstance(pa, tuple) else pa + (pb - pa) * g
        for pa, pb in zip(_GERMINAL_LOOK, _TUMOUR_LOOK, strict=True))
    ger = _texture(ger_look[0], ger_look[1],
                   _nuclei(seed, 30, rows, cols, max(4, round(8 * s)), ger_look[2] * s, ger_look[3] * s, ger_look[4]))
    image = np.where(germinal[..., None], ger, image)
    # tumour (C): large pleomorphic dark nuclei on pink-purple cytoplasm
    tum = _texture(_TUMOUR_LOOK[0], _TUMOUR_LOOK[1],
                   _nuclei(seed, 40, rows, cols, max(4, round(8 * s)), _TUMOUR_LOOK[2] * s, _TUMOUR_LOOK[3] * s,
                           _TUMOUR_LOOK[4]))
    image = np.where(tumour[..., None], tum, image)
    # common structures: red vessel / fibrin spots inside any tissue, keeping the surrounding label
    tissue = node | fat
    if layout.structure_density > 0 and tissue.any():
        spots = _nuclei_layer(seed, 50, rows, cols, 64, 3.0 * s, 7.0 * s, layout.structure_density)
        spot_rgb = _texture((0.0, 0.0, 0.0), (0.84, 0.34, 0.44), spots)
        image = np.where((tissue & (spots > 0))[..., None],
                         image * (1 - spots[..., None]) + spot_rgb, image)
    image = image * np.asarray(layout.stain)[None, None, :]
    image = image + 0.03 * smooth[..., None] * tissue[..., None] + 0.04 * grain[..., None]
    return np.clip(np.round(image * 255.0), 0, 255).astype(np.uint8), mask


@dataclass
class Slide:
    """A whole-slide phantom: ``image`` (H, W, 3) uint8 RGB, ``mask`` (H, W) uint8 (0 = O, 1 = ¬C, 2 = C)."""

    image: np.ndarray
    mask: np.ndarray
    layout: SlideLayout

    @property
    def class_fractions(self) -> dict[str, float]:
        return class_fractions(self.mask)


def class_fractions(mask) -> dict[str, float]:
    """Fraction of pixels of each class (keys ``SLIDE_CLASSES``) in a class mask."""
    mask = np.asarray(mask)
    counts = np.bincount(mask.ravel(), minlength=len(SLIDE_CLASSES))
    if len(counts) > len(SLIDE_CLASSES):
        raise ValueError(f"mask values must be in 0..{len(SLIDE_CLASSES) - 1}")
    return {c: float(counts[k] / mask.size) for k, c in enumerate(SLIDE_CLASSES)}


def generate_slide(height: int, width: int, *, seed: int = 0, tumour_fraction: float = 0.11, **layout_kwargs) -> Slide:
    """Generate a whole-slide phantom of ``height`` x ``width`` pixels (see the module docstring).

    ``tumour_fraction`` (fraction of the slide that is C) and the other keyword arguments go to
    :func:`slide_layout`. The slide is rendered in 1024-px tiles; for slides too large for memory use
    :func:`iter_slide_patches`.
    """
    layout = slide_layout(height, width, seed=seed, tumour_fraction=tumour_fraction, **layout_kwargs)
    image = np.empty((layout.height, layout.width, 3), np.uint8)
    mask = np.empty((layout.height, layout.width), np.uint8)
    for r in range(0, layout.height, _TILE):
        for c in range(0, layout.width, _TILE):
            h, w = min(_TILE, layout.height - r), min(_TILE, layout.width - c)
            image[r:r + h, c:c + w], mask[r:r + h, c:c + w] = render_region(layout, r, c, h, w)
    return Slide(image=image, mask=mask, layout=layout)


def patch_positions(length: int, patch_size: int, stride: int) -> np.ndarray:
    """Top-left offsets 0, stride, 2 * stride, ... of the patches that fit wholly in ``length`` pixels."""
    if length < patch_size:
        return np.zeros(0, np.int64)
    return np.arange(0, length - patch_size + 1, stride, dtype=np.int64)


def iter_slide_patches(
    height: int,
    width: int,
    patch_size: int,
    stride: int | None = None,
    *,
    seed: int = 0,
    block_patches: int = 16,
    **layout_kwargs,
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """Stream ``(row, col, image_patch, mask_patch)`` of a slide phantom without materialising the slide.

    Patches are taken systematically from pixel (0, 0) with ``stride`` (default ``patch_size // 2``, the
    thesis's l/2) and only where they fit wholly (the positions of
    :func:`medeval.data.patching.extract_patches`), in raster order. Memory is bounded by a block of
    ``patch_size`` x (``patch_size + (block_patches - 1) * stride``) pixels. Layout keyword arguments are
    those of :func:`slide_layout`; the patches equal the crops of ``generate_slide`` with the same arguments.
    """
    if isinstance(patch_size, bool) or not isinstance(patch_size, (int, np.integer)) or patch_size < 1:
        raise ValueError(f"patch_size must be a positive integer, got {patch_size!r}")
    if stride is None:
        stride = max(1, patch_size // 2)
    if isinstance(stride, bool) or not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"stride must be a positive integer, got {stride!r}")
    layout = slide_layout(height, width, seed=seed, **layout_kwargs)
    if patch_size > min(layout.height, layout.width):
        raise ValueError(f"patch_size ({patch_size}) must not exceed the slide's sides ({layout.height} x {layout.width})")
    col_positions = patch_positions(layout.width, patch_size, stride)
    for r in patch_positions(layout.height, patch_size, stride):
        for start in range(0, len(col_positions), block_patches):
            block = col_positions[start:start + block_patches]
            c0 = int(block[0])
            c1 = int(block[-1]) + patch_size
            image, mask = render_region(layout, int(r), c0, patch_size, c1 - c0)
            for c in block:
                off = int(c) - c0
                yield int(r), int(c), image[:, off:off + patch_size].copy(), mask[:, off:off + patch_size].copy()
