"""Chest X-ray phantoms: radiograph-like images with the 14 ChestX-ray14 findings and exact ground truth.

The default stand-in for chapters 1, 2 and 5 (the NIH ChestX-ray14 images themselves are 42 GB and are
fetched only by the ``full`` profiles). Every phantom comes with an exact per-pixel mask and a box for each
lesion it shows, so localisation metrics can be computed against a known truth.

What follows the real data
--------------------------
* **Label sets** are whole rows drawn from the real label table (``Data_Entry_2017_v2020.csv``, read with
  :func:`medeval.data.chestxray14.load_labels`): the empirical joint distribution, so single-label
  frequencies, the number of labels per image and the co-occurrences all match the real table up to
  sampling error. With ``prevalence`` given, the rows are re-weighted by iterative proportional fitting
  (raking) so that each named finding hits its target prevalence in expectation while the rest of the
  joint distribution is changed as little as possible (the raked weights are the minimum-KL re-weighting
  of the empirical distribution with those marginals).
* **Lesion regions** of the 8 findings that have boxes in ``BBox_List_2017.csv`` (Atelectasis,
  Cardiomegaly, Effusion, Infiltration, Mass, Nodule, Pneumonia, Pneumothorax) are drawn from that
  finding's real boxes (one real box picked uniformly, scaled from 1024 px to the image, its centre jittered
  by N(0, 0.015) of the image side and its size by a log-normal factor with sigma 0.08 - a kernel density
  estimate of the empirical box distribution). The other 6 findings have no NIH boxes and use the
  anatomical priors documented in :data:`ANATOMICAL_PRIORS`.
* ``patient_id`` and ``follow_up`` are those of the sampled real row (so patient-level splitters have real
  ids to group on; two phantoms with the same id do not look alike, and with a few thousand phantoms out of
  112,120 rows repeats are rare).

Ground truth
------------
``masks[i]`` is a uint16 bitmask: bit ``k`` is set exactly on the pixels that the lesion of finding
``LABELS[k]`` is rendered into: every lesion profile has compact support inside its mask, so the lesion
changes no pixel outside its mask (tested by rendering the same image with and without the finding). The box of a lesion is the tight bounding box of its mask in
the ``"xywh"`` convention of :mod:`medeval.metrics.boxes` (pixel edges: ``x = min column``,
``w = max column - min column + 1``). One lesion (one mask, one box) per finding per image; a finding whose
lesion has several parts (Edema, Emphysema, Infiltration) gets the box around all parts.

Cardiomegaly: the lesion is the *whole enlarged heart* (mask = the enlarged cardiac silhouette, drawn as the
union of the patient's normal heart and an ellipse inscribed in a box drawn from the NIH Cardiomegaly
boxes, which outline the whole heart); the normal heart of the other phantoms carries no mask bit.
Emphysema: the whole hyperinflated, hyperlucent lung fields. Pneumothorax: the ellipse inscribed in the
sampled NIH box, clipped to the lung field (so its tight box is on average smaller than the NIH boxes; the
Data appendix page measures by how much). Atelectasis: a plate-like band filling 85 % of its box's height.

Difficulty
----------
``difficulty`` in (0, 1] is a *conspicuity*: 1.0 (the default) is the easiest setting; smaller values are
harder. Lesion contrast is multiplied by ``difficulty``, lesion linear size by ``0.6 + 0.4 * difficulty``
(Cardiomegaly: the enlargement beyond the normal heart is multiplied by ``difficulty``) and the white-noise
standard deviation is ``0.02 + 0.06 * (1 - difficulty)``.

Confounders ("stable but wrong" studies)
----------------------------------------
``confounder="marker"`` draws a bright letter-like marker ("L") in the top-right corner;
``confounder="padding"`` renders the radiograph into a narrower canvas, centred, with black (0) columns on
both sides (the zero-padding of chapter 1's preprocessing). Whether an image carries the confounder is drawn
with ``P(confounder | positive) = (1 + s) / 2`` and ``P(confounder | negative) = (1 - s) / 2`` where
``s = confounder_strength`` in [0, 1]: ``s = 0`` makes it independent of the label, ``s = 1`` a perfect
shortcut. "Positive" means the image shows ``confounder_finding`` (default: the single finding named in
``prevalence`` if there is exactly one, else any rendered finding). ``confounder_mask`` marks the
confounder's pixels (marker or padding).

Determinism: image ``i`` depends only on (``seed``, ``i``) and the other arguments, never on ``n``; its
label set is drawn from ``np.random.default_rng([seed, i, 0])``, the white noise from
``np.random.default_rng([seed, i, 2])`` and everything else from ``np.random.default_rng([seed, i, 1])``,
so ``generate_chest_phantoms(10, seed=3)`` is the first 10 images of
``generate_chest_phantoms(1000, seed=3)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from medeval.data.chestxray14 import IMAGE_SIZE as NIH_IMAGE_SIZE
from medeval.data.chestxray14 import LABELS
from medeval.data.phantoms._checks import check_seed

__all__ = [
    "ANATOMICAL_PRIORS",
    "CONFOUNDERS",
    "ChestPhantoms",
    "LABELS",
    "MAX_IMAGE_SIZE",
    "MIN_IMAGE_SIZE",
    "NIH_BOX_FINDINGS",
    "generate_chest_phantoms",
    "label_statistics",
    "raked_row_weights",
    "sample_label_sets",
]

MIN_IMAGE_SIZE = 64
MAX_IMAGE_SIZE = 512
CONFOUNDERS = (None, "marker", "padding")

#: Findings with boxes in the NIH box list (their lesion regions follow the real boxes).
NIH_BOX_FINDINGS = (
    "Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule", "Pneumonia", "Pneumothorax",
)

#: Anatomical priors of the 6 findings without NIH boxes, in image-relative coordinates (0 = left/top,
#: 1 = right/bottom; the patient's right lung is on the image's left). "lung" = the side is drawn at random.
ANATOMICAL_PRIORS = {
    "Consolidation": "lobar opacity in one lung: centre x = lung centre +- 0.06, y ~ U(0.42, 0.70); "
                     "width ~ U(0.12, 0.22), height ~ U(0.10, 0.20); dense, homogeneous, lobulated edge",
    "Edema": "bilateral perihilar ('bat-wing') haze: two ellipses either side of the hila, centre y ~ "
             "U(0.45, 0.55), each width ~ U(0.16, 0.22), height ~ U(0.22, 0.32); faint, diffuse",
    "Emphysema": "both lung fields, hyperinflated (lower edge moved down by 0.04) and hyperlucent, lung "
                 "markings reduced to 30 %",
    "Fibrosis": "reticular (net-like) opacity at the periphery of the lower zone of one lung: centre x = "
                "lateral third of the lung, y ~ U(0.55, 0.72); width ~ U(0.10, 0.16), height ~ U(0.14, 0.22)",
    "Hernia": "hiatal hernia: round retrocardiac opacity with an air-fluid level, centre (0.52 +- 0.02, "
              "0.70 +- 0.02), radius ~ U(0.05, 0.08)",
    "Pleural_Thickening": "band 0.012-0.025 of the image side thick along the lateral chest wall of one lung, "
                          "from the apex down to y ~ U(0.35, 0.60)",
}

_BOX_JITTER_CENTRE = 0.015
_BOX_JITTER_LOG_SIZE = 0.08
_MARKER_INTENSITY = 0.97


# ----------------------------------------------------------------------------------------------------------
# Statistics of the real tables


@dataclass(frozen=True)
class _LabelTable:
    labels: np.ndarray  # (R, 14) uint8 in LABELS order
    patient_id: np.ndarray
    follow_up: np.ndarray


def _table_from_frame(frame: pd.DataFrame, name: str) -> _LabelTable:
    missing = [c for c in (*LABELS, "patient_id", "follow_up") if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} must have the columns of medeval.data.chestxray14.load_labels(); missing {missing}")
    if len(frame) == 0:
        raise ValueError(f"{name} must have at least one row")
    labels = frame[list(LABELS)].to_numpy(dtype=np.uint8)
    return _LabelTable(labels, frame["patient_id"].to_numpy(np.int64), frame["follow_up"].to_numpy(np.int64))


@lru_cache(maxsize=1)
def _default_label_table() -> _LabelTable:
    from medeval.data.chestxray14 import load_labels

    return _table_from_frame(load_labels(), "the shipped label table")


def _boxes_by_finding(frame: pd.DataFrame, name: str) -> dict[str, np.ndarray]:
    missing = [c for c in ("finding", "x", "y", "w", "h") if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} must have the columns of medeval.data.chestxray14.load_boxes(); missing {missing}")
    out = {}
    for finding, group in frame.groupby("finding"):
        if finding in LABELS:
            out[finding] = group[["x", "y", "w", "h"]].to_numpy(np.float64) / NIH_IMAGE_SIZE
    return out


@lru_cache(maxsize=1)
def _default_boxes() -> dict[str, np.ndarray]:
    from medeval.data.chestxray14 import load_boxes

    return _boxes_by_finding(load_boxes(), "the shipped box table")


def label_statistics(labels) -> dict[str, object]:
    r"""Summary statistics of a (N, 14) binary label matrix (real or phantom), for side-by-side comparisons.

    .. math::

       \pi_f = \frac{1}{N}\sum_{i=1}^{N} y_{if}, \qquad
       \pi_{fg} = \frac{1}{N}\sum_{i=1}^{N} y_{if}\, y_{ig}, \qquad
       h_k = \frac{1}{N}\sum_{i=1}^{N} \mathbb 1\Bigl[\textstyle\sum_{f} y_{if} = k\Bigr].

    Returns a dict with ``frequency`` (Series: prevalence of each finding), ``labels_per_image`` (Series:
    fraction of images with 0, 1, 2, ... findings) and ``cooccurrence`` (DataFrame: :math:`\pi_{fg}` for every
    pair of findings, the diagonal being the prevalence). Raises ValueError for an empty or non-binary matrix.
    """
    y = np.asarray(labels)
    if y.ndim != 2 or y.shape[1] != len(LABELS) or y.shape[0] == 0:
        raise ValueError(f"labels must have shape (N >= 1, {len(LABELS)}), got {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be binary (0/1)")
    y = y.astype(np.float64)
    counts = y.sum(axis=1).astype(int)
    per_image = pd.Series(np.bincount(counts) / len(y), name="fraction")
    per_image.index.name = "n_labels"
    return {
        "frequency": pd.Series(y.mean(axis=0), index=list(LABELS), name="prevalence"),
        "labels_per_image": per_image,
        "cooccurrence": pd.DataFrame(y.T @ y / len(y), index=list(LABELS), columns=list(LABELS)),
    }


# ----------------------------------------------------------------------------------------------------------
# Label-set sampling


def _check_findings(findings) -> tuple[str, ...]:
    if findings is None:
        return tuple(LABELS)
    if isinstance(findings, str):
        findings = [findings]
    findings = tuple(findings)
    unknown = [f for f in findings if f not in LABELS]
    if unknown or not findings:
        raise ValueError(f"findings must be a non-empty subset of {list(LABELS)}; unknown: {unknown}")
    return tuple(f for f in LABELS if f in findings)


def _check_prevalence(prevalence, findings: tuple[str, ...]) -> dict[str, float]:
    if prevalence is None:
        return {}
    if not isinstance(prevalence, dict):
        raise ValueError(f"prevalence must be a dict finding -> target prevalence, got {type(prevalence).__name__}")
    out = {}
    for finding, p in prevalence.items():
        if finding not in findings:
            raise ValueError(
                f"prevalence names {finding!r}, which is not among the rendered findings {list(findings)}"
            )
        p = float(p)
        if not 0.0 <= p <= 1.0 or not np.isfinite(p):
            raise ValueError(f"prevalence[{finding!r}] must be in [0, 1], got {p}")
        out[finding] = p
    return out


def raked_row_weights(labels, prevalence: dict[str, float], *, max_iter: int = 1000, tol: float = 1e-12):
    r"""Row weights of a label table re-weighted so that each named finding has its target prevalence.

    Iterative proportional fitting (raking, Deming & Stephan 1940) on the binary margins: starting from
    uniform weights :math:`w_r`, each finding :math:`f` in turn rescales the rows,

    .. math::

       w_r \leftarrow w_r \times
       \begin{cases} p_f / q_f & \text{if } y_{rf} = 1,\\ (1 - p_f) / (1 - q_f) & \text{if } y_{rf} = 0,\end{cases}
       \qquad q_f = \sum_{r=1}^{R} w_r\, y_{rf},

    where :math:`q_f` is the current weighted prevalence. At convergence
    the weights are the minimum Kullback-Leibler re-weighting of the empirical distribution with the target
    margins, so co-occurrences with unnamed findings are kept as far as the targets allow.

    Raises ValueError when a target is not reachable (a target in (0, 1) for a finding that never or always
    occurs in the table) or when raking does not converge (incompatible targets).
    Returns weights that sum to 1.
    """
    y = np.asarray(labels)
    w = np.full(len(y), 1.0 / len(y))
    cols = [(LABELS.index(f), p) for f, p in prevalence.items()]
    for k, p in cols:
        q = y[:, k].mean()
        if (q == 0 and p > 0) or (q == 1 and p < 1):
            raise ValueError(
                f"prevalence[{LABELS[k]!r}] = {p} is unreachable: the finding has prevalence {q} in the label table"
            )
    for _ in range(max_iter):
        worst = 0.0
        for k, p in cols:
            pos = y[:, k] == 1
            q = w[pos].sum()
            worst = max(worst, abs(q - p))
            if 0 < q < 1:
                w[pos] *= p / q
                w[~pos] *= (1 - p) / (1 - q)
            w /= w.sum()
        if worst < tol:
            return w
    raise ValueError(f"prevalence targets {prevalence} are incompatible with the label table (raking did not converge)")


@dataclass(frozen=True)
class _LabelSampler:
    table: _LabelTable
    cumulative: np.ndarray
    keep: np.ndarray  # (14,) bool: rendered findings

    def row_index(self, seed: int, i: int) -> int:
        u = np.random.default_rng([seed, i, 0]).random()
        return int(min(np.searchsorted(self.cumulative, u, side="right"), len(self.cumulative) - 1))

    def labels_of(self, row: int) -> np.ndarray:
        return self.table.labels[row] * self.keep


def _make_sampler(findings, prevalence, label_table) -> _LabelSampler:
    table = _default_label_table() if label_table is None else _table_from_frame(label_table, "label_table")
    if prevalence:
        weights = raked_row_weights(table.labels, prevalence)
    else:
        weights = np.full(len(table.labels), 1.0 / len(table.labels))
    cumulative = np.cumsum(weights)
    cumulative /= cumulative[-1]
    keep = np.array([f in findings for f in LABELS], dtype=np.uint8)
    return _LabelSampler(table, cumulative, keep)


def sample_label_sets(n: int, seed: int = 0, *, findings=None, prevalence=None, label_table=None) -> np.ndarray:
    r"""The (n, 14) uint8 label matrix that ``generate_chest_phantoms(n, seed=seed, ...)`` would produce.

    .. math::

       \boldsymbol y^{(i)} = \boldsymbol y_{r_i}, \qquad P(r_i = r) = w_r, \qquad w_r = \frac{1}{R}
       \quad\text{unless a prevalence is imposed.}

    Cheap (no rendering): for statistics and tests. Rows of the real label table are drawn with replacement
    (uniformly, or with raked weights when ``prevalence`` is given, see :func:`raked_row_weights`); findings
    not in ``findings`` are set to 0 because they are not rendered.
    """
    n = _check_n(n)
    seed = check_seed(seed)
    findings = _check_findings(findings)
    sampler = _make_sampler(findings, _check_prevalence(prevalence, findings), label_table)
    return np.stack([sampler.labels_of(sampler.row_index(seed, i)) for i in range(n)]) if n else np.zeros(
        (0, len(LABELS)), np.uint8
    )


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    return int(n)


# ----------------------------------------------------------------------------------------------------------
# Rendering


@dataclass
class _Canvas:
    """Pixel grids and the layers of one radiograph under construction."""

    height: int
    width: int
    u: np.ndarray  # (1, W) column centres in [0, 1]
    v: np.ndarray  # (H, 1) row centres in [0, 1]
    rng: np.random.Generator
    contrast: float
    size_factor: float
    base: np.ndarray = field(default=None)
    markings: np.ndarray = field(default=None)
    marking_weight: np.ndarray = field(default=None)
    lucency: np.ndarray = field(default=None)
    opacity_keep: np.ndarray = field(default=None)  # product of (1 - alpha) over opacities
    lungs: list = field(default_factory=list)  # [(cx, cy, ax, ay)] right lung (image left) then left lung
    lung_mask: np.ndarray = field(default=None)
    heart: tuple = ()

    def ellipse_q(self, cx, cy, ax, ay, angle=0.0):
        du = self.u - cx
        dv = self.v - cy
        if angle:
            c, s = np.cos(angle), np.sin(angle)
            du, dv = c * du + s * dv, -s * du + c * dv
        return (du / ax) ** 2 + (dv / ay) ** 2

    def min_axis(self, a: float, pixels: float = 0.75) -> float:
        """Half-axes never below ``pixels`` pixels, so that small lesions at 64 px stay visible."""
        return max(a, pixels / min(self.height, self.width))

    def add_opacity(self, alpha: np.ndarray) -> None:
        self.opacity_keep *= 1.0 - np.clip(alpha, 0.0, 1.0)


def _ramp(d, eps):
    return np.clip(0.5 + d / eps, 0.0, 1.0)


def _smooth_noise(rng, height, width, cells):
    """A smooth random field in about [-1, 1]: bilinear up-sampling of a coarse Gaussian grid."""
    coarse = rng.standard_normal((cells + 1, cells + 1))
    rows = np.linspace(0, cells, height)
    cols = np.linspace(0, cells, width)
    r0 = np.minimum(rows.astype(int), cells - 1)
    c0 = np.minimum(cols.astype(int), cells - 1)
    fr = (rows - r0)[:, None]
    fc = (cols - c0)[None, :]
    a = coarse[r0][:, c0]
    b = coarse[r0][:, c0 + 1]
    c = coarse[r0 + 1][:, c0]
    d = coarse[r0 + 1][:, c0 + 1]
    return (a * (1 - fc) + b * fc) * (1 - fr) + (c * (1 - fc) + d * fc) * fr


def _draw_anatomy(cv: _Canvas) -> None:
    rng, u, v, H, W = cv.rng, cv.u, cv.v, cv.height, cv.width
    px = 1.0 / min(H, W)
    body_half = rng.uniform(0.40, 0.46)
    body_cx = 0.5 + rng.normal(0, 0.01)
    # torso: a wide ellipse, flat top (shoulders) beyond the image border
    q_body = ((u - body_cx) / body_half) ** 2 + ((v - 0.62) / 0.75) ** 2
    body = _ramp(1 - np.sqrt(q_body), 3 * px / body_half)
    base = 0.04 + body * (0.50 + 0.10 * v)
    # lungs: right lung (patient's right = image left) then left lung
    dy = rng.normal(0, 0.015)
    scale = rng.uniform(0.95, 1.05)
    cv.lungs = [
        (0.5 - 0.17 * scale + rng.normal(0, 0.008), 0.46 + dy, 0.135 * scale, 0.31 * scale),
        (0.5 + 0.17 * scale + rng.normal(0, 0.008), 0.47 + dy, 0.125 * scale, 0.30 * scale),
    ]
    lung_soft = np.zeros((H, W))
    for cx, cy, ax, ay in cv.lungs:
        q = cv.ellipse_q(cx, cy, ax, ay)
        lung_soft = np.maximum(lung_soft, _ramp(1 - np.sqrt(q), 6 * px / ax))
    cv.lung_mask = lung_soft > 0.5
    base = base - lung_soft * 0.30
    # ribs: curved bands over the lung fields (posterior ribs slope down laterally)
    rib_period = rng.uniform(0.075, 0.09)
    phase = rng.uniform(0, 1)
    curve = (v - 0.9 * (u - 0.5) ** 2) / rib_period + phase
    ribs = np.clip(np.cos(2 * np.pi * curve), 0, 1) ** 3
    base = base + 0.07 * ribs * lung_soft * (v > 0.12)
    # clavicles
    for side in (-1, 1):
        cl = np.abs(v - (0.15 + 0.12 * np.abs(u - 0.5) ** 1.5 * 2)) < 0.012
        base = base + 0.08 * (cl & (side * (u - 0.5) > 0.03) & (np.abs(u - 0.5) < 0.33))
    # mediastinum and spine
    medi = _ramp(0.055 - np.abs(u - 0.5), 4 * px) * _ramp(v - 0.08, 4 * px)
    base = np.maximum(base, medi * (0.66 + 0.06 * v))
    # normal heart (lower mediastinum, bulging to the image right)
    hx, hy = 0.56 + rng.normal(0, 0.01), 0.585 + rng.normal(0, 0.01)  # near the NIH Cardiomegaly box centre
    hax, hay = rng.uniform(0.14, 0.16), rng.uniform(0.11, 0.125)
    cv.heart = (hx, hy, hax, hay)
    cv.base = base
    # lung markings: vessels fanning out of the hila + mottled texture
    markings = np.zeros((H, W))
    for cx, cy, ax, _ in cv.lungs:
        hilum_x = cx + np.sign(0.5 - cx) * 0.6 * ax
        r = np.sqrt((u - hilum_x) ** 2 + (v - (cy - 0.02)) ** 2)
        markings += 0.10 * np.exp(-r / 0.09)
    markings += 0.035 * _smooth_noise(rng, H, W, 24)
    cv.markings = markings * cv.lung_mask
    cv.marking_weight = np.ones((H, W))
    cv.lucency = np.zeros((H, W))
    cv.opacity_keep = np.ones((H, W))


def _draw_heart(cv: _Canvas, hearts: list[tuple]) -> np.ndarray:
    """Draw the union of the given heart ellipses (normal, and enlarged if any); return its mask."""
    px = 1.0 / min(cv.height, cv.width)
    soft = np.zeros((cv.height, cv.width))
    mask = np.zeros((cv.height, cv.width), bool)
    for hx, hy, hax, hay in hearts:
        q = cv.ellipse_q(hx, hy, hax, hay)
        soft = np.maximum(soft, _ramp(1 - np.sqrt(q), 3 * px / hax))
        mask |= q < 1
    soft = soft * mask  # compact support: the heart changes only the pixels of its mask
    cv.base = np.maximum(cv.base, soft * 0.68)
    cv.marking_weight = cv.marking_weight * (1 - soft)
    return mask


def _sample_box(cv: _Canvas, boxes: np.ndarray) -> tuple[float, float, float, float]:
    """Region (cx, cy, w, h) in image-relative units from the empirical box list of one finding."""
    x, y, w, h = boxes[cv.rng.integers(len(boxes))]
    cx = x + w / 2 + cv.rng.normal(0, _BOX_JITTER_CENTRE)
    cy = y + h / 2 + cv.rng.normal(0, _BOX_JITTER_CENTRE)
    w = w * np.exp(cv.rng.normal(0, _BOX_JITTER_LOG_SIZE))
    h = h * np.exp(cv.rng.normal(0, _BOX_JITTER_LOG_SIZE))
    return float(np.clip(cx, 0.02, 0.98)), float(np.clip(cy, 0.02, 0.98)), float(w), float(h)


def _random_lung(cv: _Canvas):
    return cv.lungs[int(cv.rng.integers(2))]


def _region(cv: _Canvas, finding: str, boxes: dict) -> tuple[float, float, float, float]:
    if finding in boxes and len(boxes[finding]):
        return _sample_box(cv, boxes[finding])
    rng = cv.rng
    lx, ly, lax, lay = _random_lung(cv)
    if finding == "Consolidation":
        return (lx + rng.uniform(-0.06, 0.06), rng.uniform(0.42, 0.70), rng.uniform(0.12, 0.22), rng.uniform(0.10, 0.20))
    if finding == "Fibrosis":
        lateral = np.sign(lx - 0.5)
        return (lx + lateral * lax * 0.45, rng.uniform(0.55, 0.72), rng.uniform(0.10, 0.16), rng.uniform(0.14, 0.22))
    if finding == "Hernia":
        r = rng.uniform(0.05, 0.08)
        return (0.52 + rng.normal(0, 0.02), 0.70 + rng.normal(0, 0.02), 2 * r, 2 * r)
    if finding == "Pneumothorax":  # fallback prior when no real box lands in a lung: lateral apex
        return (lx + np.sign(lx - 0.5) * lax * 0.3, ly - lay * 0.6, lax * 1.2, lay * 0.7)
    raise ValueError(f"no region prior for {finding!r}")  # pragma: no cover - guarded by callers


def _scaled(region, factor):
    cx, cy, w, h = region
    return cx, cy, w * factor, h * factor


def _blob(cv: _Canvas, region, *, lobulation=0.0, angle=0.0):
    """Compactly supported blob profile inscribed in a region; returns (mask, profile in [0, 1])."""
    cx, cy, w, h = region
    ax, ay = cv.min_axis(w / 2), cv.min_axis(h / 2)
    q = cv.ellipse_q(cx, cy, ax, ay, angle)
    if lobulation:
        theta = np.arctan2((cv.v - cy) / ay, (cv.u - cx) / ax)
        k = cv.rng.integers(3, 6)
        wobble = 1 + lobulation * (np.sin(k * theta + cv.rng.uniform(0, 6.3)) + 0.5 * np.sin((k + 2) * theta))
        q = q / wobble**2
    mask = q < 1
    if not mask.any():  # a region smaller than a pixel: its nearest pixel
        mask = np.zeros_like(mask)
        mask[min(int(cy * cv.height), cv.height - 1), min(int(cx * cv.width), cv.width - 1)] = True
    profile = np.where(mask, np.sqrt(np.clip(1 - q, 0, 1)), 0.0)
    profile[mask & (profile == 0)] = 1.0
    return mask, profile


def _render_atelectasis(cv, boxes):
    # plate-like (discoid) band opacity: a flattened, slightly tilted ellipse filling most of its box
    cx, cy, w, h = _scaled(_region(cv, "Atelectasis", boxes), cv.size_factor)
    angle = cv.rng.uniform(-0.15, 0.15)
    mask, prof = _blob(cv, (cx, cy, w, h * 0.85), angle=angle)
    cv.add_opacity(0.30 * cv.contrast * np.sqrt(prof))
    return mask


def _render_cardiomegaly(cv, boxes):
    cx, cy, w, h = _region(cv, "Cardiomegaly", boxes)
    hx, hy, hax, hay = cv.heart
    # enlargement beyond the normal heart, scaled by difficulty; never smaller than 110 % of normal
    ax = max(hax + (w / 2 - hax) * cv.contrast, 1.10 * hax)
    ay = max(hay + (h / 2 - hay) * cv.contrast, 1.05 * hay)
    x = hx + (cx - hx) * cv.contrast
    y = hy + (cy - hy) * cv.contrast
    cv.heart = (x, y, ax, ay)
    return None  # drawn (and its mask taken) once all findings are known, see _render_image


def _render_consolidation(cv, boxes):
    region = _scaled(_region(cv, "Consolidation", boxes), cv.size_factor)
    mask, prof = _blob(cv, region, lobulation=0.12)
    cv.add_opacity(np.where(mask, 0.55 * cv.contrast * np.minimum(1, 3 * prof), 0))
    return mask


def _render_edema(cv, boxes):
    rng = cv.rng
    cy = rng.uniform(0.45, 0.55)
    mask = np.zeros((cv.height, cv.width), bool)
    alpha = np.zeros((cv.height, cv.width))
    for lx, _, lax, _ in cv.lungs:
        hilum_x = lx + np.sign(0.5 - lx) * 0.35 * lax
        w = rng.uniform(0.16, 0.22) * cv.size_factor
        h = rng.uniform(0.22, 0.32) * cv.size_factor
        m, prof = _blob(cv, (hilum_x, cy, w, h))
        mask |= m
        alpha = np.maximum(alpha, 0.22 * cv.contrast * prof)
    cv.add_opacity(alpha)
    return mask


def _render_effusion(cv, boxes):
    # basal opacity with a meniscus rising towards the lateral chest wall
    cx, cy, w, h = _scaled(_region(cv, "Effusion", boxes), cv.size_factor)
    x0, x1 = cx - w / 2, cx + w / 2
    y1 = cy + h / 2
    lateral_left = cx < 0.5
    t = np.clip((cv.u - x0) / max(w, 1e-6), 0, 1)
    t = 1 - t if lateral_left else t  # 1 at the lateral edge
    top = y1 - h * (0.45 + 0.55 * t)
    inside_x = (cv.u >= x0) & (cv.u <= x1)
    depth = (cv.v - top) / max(h, 1e-6)
    mask = inside_x & (depth > 0) & (cv.v <= y1)
    if not mask.any():
        mask[min(int(cy * cv.height), cv.height - 1), min(int(cx * cv.width), cv.width - 1)] = True
    alpha = np.where(mask, 0.6 * cv.contrast * np.clip(0.25 + 4 * depth, 0, 1), 0)
    cv.add_opacity(alpha)
    cv.marking_weight = np.where(mask, cv.marking_weight * 0.3, cv.marking_weight)
    return mask


def _render_emphysema(cv, boxes):
    mask = np.zeros((cv.height, cv.width), bool)
    for cx, cy, ax, ay in cv.lungs:
        q = cv.ellipse_q(cx, cy + 0.02, ax * 1.04, ay + 0.02)
        mask |= q < 1
    depth = 0.09 * cv.contrast
    cv.lucency = np.where(mask, np.maximum(cv.lucency, depth), cv.lucency)
    cv.marking_weight = np.where(mask, cv.marking_weight * (1 - 0.7 * cv.contrast), cv.marking_weight)
    # hyperinflation: the lower lung edge (diaphragm) drops
    cv.base = np.where(mask & ~cv.lung_mask, cv.base - 0.25 * cv.contrast, cv.base)
    return mask


def _render_fibrosis(cv, boxes):
    region = _scaled(_region(cv, "Fibrosis", boxes), cv.size_factor)
    mask, prof = _blob(cv, region)
    period = cv.rng.uniform(0.018, 0.026)
    net = np.maximum(np.cos(2 * np.pi * cv.u / period), np.cos(2 * np.pi * (cv.v + 0.3 * cv.u) / period))
    texture = np.clip(net, 0, 1) ** 4
    cv.add_opacity(np.where(mask, cv.contrast * (0.08 + 0.30 * texture) * np.minimum(1, 2 * prof), 0))
    return mask


def _render_hernia(cv, boxes):
    cx, cy, w, h = _scaled(_region(cv, "Hernia", boxes), cv.size_factor)
    mask, prof = _blob(cv, (cx, cy, w, h))
    air = mask & (cv.v < cy - 0.15 * h)  # air above the fluid level
    cv.add_opacity(np.where(mask & ~air, 0.35 * cv.contrast * np.minimum(1, 3 * prof), 0))
    cv.lucency = np.where(air, np.maximum(cv.lucency, 0.35 * cv.contrast), cv.lucency)
    return mask


def _render_infiltration(cv, boxes):
    cx, cy, w, h = _scaled(_region(cv, "Infiltration", boxes), cv.size_factor)
    mask = np.zeros((cv.height, cv.width), bool)
    alpha = np.zeros((cv.height, cv.width))
    k = int(cv.rng.integers(4, 9))
    corner = cv.rng.choice([-1.0, 1.0])
    for j in range(k):
        if j < 2:  # two patches at opposite corners span the box
            sign = 1.0 if j == 0 else -1.0
            px_, py_, r = cx + sign * 0.35 * w, cy + sign * corner * 0.35 * h, 0.3
        else:
            px_ = cx + cv.rng.uniform(-0.35, 0.35) * w
            py_ = cy + cv.rng.uniform(-0.35, 0.35) * h
            r = cv.rng.uniform(0.15, 0.3)
        m, prof = _blob(cv, (px_, py_, r * w, r * h * cv.rng.uniform(0.7, 1.4)))
        mask |= m
        alpha = np.maximum(alpha, 0.28 * cv.contrast * np.minimum(1, 2 * prof))
    cv.add_opacity(alpha)
    return mask


def _render_mass(cv, boxes):
    region = _scaled(_region(cv, "Mass", boxes), cv.size_factor)
    mask, prof = _blob(cv, region, lobulation=0.06)
    cv.add_opacity(0.45 * cv.contrast * np.minimum(1, 2.5 * prof))
    return mask


def _render_nodule(cv, boxes):
    region = _scaled(_region(cv, "Nodule", boxes), cv.size_factor)
    mask, prof = _blob(cv, region)
    cv.add_opacity(0.45 * cv.contrast * np.minimum(1, 2.5 * prof))
    return mask


def _render_pleural_thickening(cv, boxes):
    lx, ly, lax, lay = _random_lung(cv)
    thick = cv.rng.uniform(0.012, 0.025) * cv.size_factor
    bottom = cv.rng.uniform(0.35, 0.60)
    q = cv.ellipse_q(lx, ly, lax, lay)
    rad = np.sqrt(q)
    lateral = np.sign(lx - 0.5) * (cv.u - lx) > -0.2 * lax
    mask = (rad < 1) & (rad > 1 - thick / min(lax, lay)) & lateral & (cv.v < bottom)
    if not mask.any():
        mask[int(ly * cv.height) - int(lay * cv.height) + 1, int(lx * cv.width)] = True
    cv.add_opacity(np.where(mask, 0.45 * cv.contrast, 0))
    return mask


def _render_pneumonia(cv, boxes):
    region = _scaled(_region(cv, "Pneumonia", boxes), cv.size_factor)
    mask, prof = _blob(cv, region, lobulation=0.15)
    patchy = 0.6 + 0.4 * _smooth_noise(cv.rng, cv.height, cv.width, 20)
    cv.add_opacity(np.where(mask, 0.40 * cv.contrast * np.clip(patchy, 0.2, 1) * np.minimum(1, 2 * prof), 0))
    return mask


def _render_pneumothorax(cv, boxes):
    # a lucent rim without lung markings between the chest wall and the collapsed lung's pleural line
    mask = None
    for _ in range(8):
        region = _scaled(_region(cv, "Pneumothorax", boxes), cv.size_factor)
        m, _ = _blob(cv, region)
        m &= cv.lung_mask
        if m.any():
            mask = m
            break
    if mask is None:
        lx, ly, lax, lay = _random_lung(cv)
        mask, _ = _blob(cv, (lx, ly - 0.6 * lay, lax, 0.5 * lay))
        mask &= cv.lung_mask
        if not mask.any():
            mask = cv.lung_mask.copy()
    cv.marking_weight = np.where(mask, 0.0, cv.marking_weight)
    cv.lucency = np.where(mask, np.maximum(cv.lucency, 0.10 * cv.contrast), cv.lucency)
    # the visceral pleural line: the mask's edge facing the collapsed lung, drawn inside the mask
    edge = mask & ~(np.roll(mask, 1, 0) & np.roll(mask, -1, 0) & np.roll(mask, 1, 1) & np.roll(mask, -1, 1))
    cv.add_opacity(np.where(edge & cv.lung_mask, 0.25 * cv.contrast, 0))
    return mask


_RENDERERS = {
    "Atelectasis": _render_atelectasis,
    "Cardiomegaly": _render_cardiomegaly,
    "Consolidation": _render_consolidation,
    "Edema": _render_edema,
    "Effusion": _render_effusion,
    "Emphysema": _render_emphysema,
    "Fibrosis": _render_fibrosis,
    "Hernia": _render_hernia,
    "Infiltration": _render_infiltration,
    "Mass": _render_mass,
    "Nodule": _render_nodule,
    "Pleural_Thickening": _render_pleural_thickening,
    "Pneumonia": _render_pneumonia,
    "Pneumothorax": _render_pneumothorax,
}
# Anatomy-changing findings first, so that opacities are drawn over the changed anatomy.
_ORDER = ("Cardiomegaly", "Emphysema") + tuple(f for f in LABELS if f not in ("Cardiomegaly", "Emphysema"))


@lru_cache(maxsize=8)
def _grids(height: int, width: int):
    u = ((np.arange(width) + 0.5) / width)[None, :]
    v = ((np.arange(height) + 0.5) / height)[:, None]
    return u, v


def _render_image(height, width, labels, rng, noise_rng, difficulty, boxes):
    u, v = _grids(height, width)
    cv = _Canvas(height, width, u, v, rng, contrast=difficulty, size_factor=0.6 + 0.4 * difficulty)
    _draw_anatomy(cv)
    normal_heart = cv.heart
    masks = np.zeros((height, width), np.uint16)
    for finding in _ORDER:
        k = LABELS.index(finding)
        if labels[k]:
            m = _RENDERERS[finding](cv, boxes)
            if m is not None:
                masks |= (m.astype(np.uint16) << k).astype(np.uint16)
    # Cardiomegaly: the heart grows from the normal one, so the enlarged heart is the union of both
    heart_mask = _draw_heart(cv, [normal_heart] if cv.heart == normal_heart else [normal_heart, cv.heart])
    k_cardio = LABELS.index("Cardiomegaly")
    if labels[k_cardio]:
        masks |= (heart_mask.astype(np.uint16) << k_cardio).astype(np.uint16)
    image = cv.base + cv.markings * cv.marking_weight - cv.lucency
    image = image + (1.0 - np.clip(image, 0, 1)) * (1.0 - cv.opacity_keep)
    noise_sd = 0.02 + 0.06 * (1.0 - difficulty)
    image = image + noise_rng.normal(0, noise_sd, size=image.shape)
    return np.clip(image, 0, 1).astype(np.float32), masks


_LETTER_L = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 1]], bool)


def _marker_mask(size: int, rng) -> np.ndarray:
    """A letter 'L' in the top-right corner, about 6-8 % of the image side tall."""
    mask = np.zeros((size, size), bool)
    cell = max(1, int(round(size * rng.uniform(0.012, 0.016))))
    glyph = np.kron(_LETTER_L, np.ones((cell, cell), bool))
    gh, gw = glyph.shape
    top = int(round(size * rng.uniform(0.03, 0.06)))
    left = size - gw - int(round(size * rng.uniform(0.03, 0.06)))
    mask[top:top + gh, left:left + gw] = glyph
    return mask


def _tight_box(mask: np.ndarray) -> tuple[int, int, int, int]:
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


@dataclass
class ChestPhantoms:
    """A batch of chest X-ray phantoms with their exact ground truth (see the module docstring).

    images: (N, H, W) float32 in [0, 1]; labels: (N, 14) uint8 in ``label_names`` order; masks: (N, H, W)
    uint16 bitmask (bit k = finding ``label_names[k]``); boxes: DataFrame (image, finding, x, y, w, h,
    box_source) in top-left xywh pixels of this image size, one row per lesion, ``box_source`` = "nih"
    (region drawn from the real boxes) or "prior" (anatomical prior); patient_id, follow_up: (N,) int64;
    confounder_mask: (N, H, W) bool or None; confounder_present: (N,) bool or None.
    """

    images: np.ndarray
    labels: np.ndarray
    label_names: tuple[str, ...]
    masks: np.ndarray
    boxes: pd.DataFrame
    patient_id: np.ndarray
    follow_up: np.ndarray
    confounder_mask: np.ndarray | None = None
    confounder_present: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.images)

    def class_mask(self, finding: str) -> np.ndarray:
        """(N, H, W) bool: the pixels of ``finding``'s lesions."""
        if finding not in self.label_names:
            raise ValueError(f"finding must be one of {list(self.label_names)}, got {finding!r}")
        k = self.label_names.index(finding)
        return ((self.masks >> np.uint16(k)) & np.uint16(1)).astype(bool)


def _check_image_size(image_size) -> int:
    if isinstance(image_size, bool) or not isinstance(image_size, (int, np.integer)):
        raise ValueError(f"image_size must be an integer in [{MIN_IMAGE_SIZE}, {MAX_IMAGE_SIZE}], got {image_size!r}")
    if not MIN_IMAGE_SIZE <= image_size <= MAX_IMAGE_SIZE:
        raise ValueError(f"image_size must be in [{MIN_IMAGE_SIZE}, {MAX_IMAGE_SIZE}], got {image_size}")
    return int(image_size)


def generate_chest_phantoms(
    n: int,
    image_size: int = 256,
    *,
    seed: int = 0,
    findings=None,
    prevalence: dict[str, float] | None = None,
    difficulty: float = 1.0,
    confounder: str | None = None,
    confounder_strength: float = 1.0,
    confounder_finding: str | None = None,
    label_table: pd.DataFrame | None = None,
    box_table: pd.DataFrame | None = None,
) -> ChestPhantoms:
    """Generate ``n`` chest X-ray phantoms of ``image_size`` x ``image_size`` pixels.

    Parameters
    ----------
    n : number of images (>= 0).
    image_size : side in pixels, 64 to 512.
    seed : non-negative int; image i depends only on (seed, i) (see the module docstring).
    findings : subset of LABELS to render (default all 14). Findings outside it are set to 0 in ``labels``
        (they are not rendered, so the image does not show them).
    prevalence : optional {finding: target prevalence}, e.g. ``{"Cardiomegaly": 0.5}`` for a balanced binary
        task; label sets are then drawn with raked weights (:func:`raked_row_weights`).
    difficulty : conspicuity in (0, 1]; 1.0 = default and easiest, smaller = harder.
    confounder : None, "marker" or "padding"; confounder_strength s in [0, 1] gives
        P(confounder | positive) = (1 + s) / 2 and P(confounder | negative) = (1 - s) / 2.
    confounder_finding : the finding that defines "positive" for the confounder (default: the only key of
        ``prevalence`` if it has exactly one, else "any rendered finding").
    label_table, box_table : DataFrames in the format of ``chestxray14.load_labels()`` / ``load_boxes()``
        (default: the shipped real tables).

    Raises ValueError for every out-of-range argument (naming it).
    """
    n = _check_n(n)
    size = _check_image_size(image_size)
    seed = check_seed(seed)
    findings = _check_findings(findings)
    prevalence = _check_prevalence(prevalence, findings)
    difficulty = float(difficulty)
    if not (0.0 < difficulty <= 1.0):
        raise ValueError(f"difficulty must be in (0, 1] (1 = easiest), got {difficulty}")
    if confounder not in CONFOUNDERS:
        raise ValueError(f"confounder must be one of {list(CONFOUNDERS)}, got {confounder!r}")
    strength = float(confounder_strength)
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"confounder_strength must be in [0, 1], got {confounder_strength}")
    if confounder_finding is None and len(prevalence) == 1:
        confounder_finding = next(iter(prevalence))
    if confounder_finding is not None and confounder_finding not in findings:
        raise ValueError(f"confounder_finding must be one of the rendered findings {list(findings)}, got {confounder_finding!r}")

    sampler = _make_sampler(findings, prevalence, label_table)
    boxes_by_finding = _default_boxes() if box_table is None else _boxes_by_finding(box_table, "box_table")

    images = np.empty((n, size, size), np.float32)
    masks = np.zeros((n, size, size), np.uint16)
    labels = np.zeros((n, len(LABELS)), np.uint8)
    patient_id = np.empty(n, np.int64)
    follow_up = np.empty(n, np.int64)
    conf_mask = np.zeros((n, size, size), bool) if confounder else None
    conf_present = np.zeros(n, bool) if confounder else None
    box_rows = []
    for i in range(n):
        row = sampler.row_index(seed, i)
        y = sampler.labels_of(row)
        labels[i] = y
        patient_id[i] = sampler.table.patient_id[row]
        follow_up[i] = sampler.table.follow_up[row]
        rng = np.random.default_rng([seed, i, 1])
        noise_rng = np.random.default_rng([seed, i, 2])
        has_conf = False
        if confounder:
            positive = y[LABELS.index(confounder_finding)] == 1 if confounder_finding else y.any()
            p = (1 + strength) / 2 if positive else (1 - strength) / 2
            has_conf = bool(rng.random() < p)
            conf_present[i] = has_conf
        if confounder == "padding" and has_conf:
            content = int(round(size * rng.uniform(0.65, 0.85)))
            left = (size - content) // 2
            img, msk = _render_image(size, content, y, rng, noise_rng, difficulty, boxes_by_finding)
            images[i] = 0.0
            images[i, :, left:left + content] = img
            masks[i, :, left:left + content] = msk
            conf_mask[i] = True
            conf_mask[i, :, left:left + content] = False
        else:
            images[i], masks[i] = _render_image(size, size, y, rng, noise_rng, difficulty, boxes_by_finding)
            if confounder == "marker" and has_conf:
                marker = _marker_mask(size, rng)
                images[i][marker] = _MARKER_INTENSITY
                conf_mask[i] = marker
        for k, finding in enumerate(LABELS):
            if y[k]:
                m = (masks[i] >> np.uint16(k)) & np.uint16(1)
                if confounder == "marker" and has_conf:  # the marker paints over whatever lies beneath it
                    m = m & ~conf_mask[i]
                    masks[i] &= ~(conf_mask[i].astype(np.uint16) << k).astype(np.uint16)
                if not m.any():
                    raise RuntimeError(f"internal error: empty mask for {finding} in image {i}")  # pragma: no cover
                x, yy, w, h = _tight_box(m.astype(bool))
                src = "nih" if finding in boxes_by_finding else "prior"
                box_rows.append((i, finding, x, yy, w, h, src))
    boxes = pd.DataFrame(box_rows, columns=["image", "finding", "x", "y", "w", "h", "box_source"])
    boxes = boxes.astype({"image": np.int64, "x": np.int64, "y": np.int64, "w": np.int64, "h": np.int64})
    return ChestPhantoms(
        images=images, labels=labels, label_names=tuple(LABELS), masks=masks, boxes=boxes,
        patient_id=patient_id, follow_up=follow_up, confounder_mask=conf_mask, confounder_present=conf_present,
    )
