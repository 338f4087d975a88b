"""Tests of the App. A corruption models (medeval.data.corruptions), checked through RoDeO's closed forms."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from medeval.data import corruptions as C
from medeval.metrics.boxes import convert_boxes
from medeval.metrics.detection import ImageBoxes, robust_detection_outcome

K = 8
NAMES = [f"c{i}" for i in range(K)]


def single_box_dataset(n, seed=0, fmt="xywh"):
    """n images with one box each, normalised coordinates, classes cycling."""
    rng = np.random.default_rng(seed)
    c = np.column_stack([rng.uniform(0.3, 0.7, (n, 2)), rng.uniform(0.05, 0.3, (n, 2))])
    return ImageBoxes.from_arrays(
        convert_boxes(c, "cxcywh", fmt), np.arange(n) % K, np.arange(n), box_format=fmt, n_images=n
    )


def multi_box_dataset(n=200, seed=1):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, n)
    m = int(counts.sum())
    c = np.column_stack([rng.uniform(0.2, 0.8, (m, 2)), rng.uniform(0.05, 0.3, (m, 2))])
    return ImageBoxes.from_arrays(
        convert_boxes(c, "cxcywh", "xywh"),
        rng.integers(0, K, m),
        np.repeat(np.arange(n), counts),
        box_format="xywh",
        n_images=n,
    )


def rodeo(p, t, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return robust_detection_outcome(p, t, box_format=t.box_format, class_names=NAMES, **kw)


ALL = [
    lambda b, s, r: C.position_noise(b, s, r),
    lambda b, s, r: C.position_bias(b, s, r),
    lambda b, s, r: C.shape_noise(b, s, r),
    lambda b, s, r: C.size_noise(b, s, r),
    lambda b, s, r: C.aspect_ratio_noise(b, s, r),
    lambda b, s, r: C.class_underprediction(b, min(s, 1), r),
    lambda b, s, r: C.class_overprediction(b, min(s, 1), r, num_classes=K, image_size=1.0),
    lambda b, s, r: C.box_duplication(b, s, r),
    lambda b, s, r: C.class_confusion(b, min(s, 1), r, num_classes=K),
]


@pytest.mark.parametrize("i", range(len(ALL)))
def test_determinism_and_zero_strength(i):
    t = multi_box_dataset()
    f = ALL[i]
    a, b = f(t, 0.5, 3), f(t, 0.5, np.random.default_rng(3))
    assert np.array_equal(a.boxes, b.boxes) and np.array_equal(a.labels, b.labels)
    assert a.box_format == t.box_format and a.n_images == t.n_images
    z = f(t, 0.0, 3)
    np.testing.assert_allclose(z.boxes, t.boxes, atol=1e-12)
    assert np.array_equal(z.labels, t.labels) and np.array_equal(z.image_ids, t.image_ids)


def test_position_noise_expected_localization():
    """E1: E[loc] = 1/(1 + 2 ln2 σ²) for one box per image; shape and cls stay 1."""
    t = single_box_dataset(4000)
    for sigma in (0.25, 0.5, 1.0):
        p = C.position_noise(t, sigma, 0)
        r = rodeo(p, t)
        assert r.shape_matching == pytest.approx(1.0, abs=1e-12) and r.classification == 1.0
        expected = 1 / (1 + 2 * np.log(2) * sigma**2)
        assert r.localization == pytest.approx(expected, abs=0.02)


def test_position_bias_exact_localization_and_literal_variant():
    t = single_box_dataset(300, fmt="cxcywh")
    for mag in (0.5, 1.0, 2.0):
        r = rodeo(C.position_bias(t, mag, 1), t)
        assert r.localization == pytest.approx(2.0 ** (-(mag**2)), abs=1e-9)
        assert r.shape_matching == pytest.approx(1.0, abs=1e-12)
    lit = C.position_bias(t, 0.01, 1, literal_eq8=True)  # Eq. 8 as printed: offset divided by w, h
    d = lit.boxes[:, :2] - t.boxes[:, :2]
    np.testing.assert_allclose((d[:, 0] * t.boxes[:, 2]) ** 2 + (d[:, 1] * t.boxes[:, 3]) ** 2, 0.01**2)


def test_shape_size_aspect_keep_centre_and_match_closed_forms():
    t = single_box_dataset(500)
    tc = convert_boxes(t.boxes, "xywh", "cxcywh")
    for f in (C.shape_noise, C.size_noise, C.aspect_ratio_noise):
        p = f(t, 0.5, 2)
        pc = convert_boxes(p.boxes, "xywh", "cxcywh")
        np.testing.assert_allclose(pc[:, :2], tc[:, :2], atol=1e-12)
        r = rodeo(p, t)
        assert r.localization == pytest.approx(1.0, abs=1e-12) and r.classification == 1.0
    ps = convert_boxes(C.size_noise(t, 0.5, 2).boxes, "xywh", "cxcywh")
    s = ps[:, 2] / tc[:, 2]
    np.testing.assert_allclose(ps[:, 3] / tc[:, 3], s)
    assert rodeo(C.size_noise(t, 0.5, 2), t).shape_matching == pytest.approx(
        np.mean(np.minimum(s, 1 / s) ** 2)
    )
    pa = convert_boxes(C.aspect_ratio_noise(t, 0.5, 2).boxes, "xywh", "cxcywh")
    np.testing.assert_allclose(pa[:, 2] * pa[:, 3], tc[:, 2] * tc[:, 3])
    dlog = np.abs(np.log(pa[:, 2] / pa[:, 3]) - np.log(tc[:, 2] / tc[:, 3]))
    assert rodeo(C.aspect_ratio_noise(t, 0.5, 2), t).shape_matching == pytest.approx(
        np.mean(1 / (2 * np.exp(dlog / 2) - 1))
    )


def test_class_underprediction_drops_whole_cells():
    t = multi_box_dataset(2000)
    p = C.class_underprediction(t, 0.3, 5)
    cells_t = set(zip(t.image_ids.tolist(), t.labels.tolist(), strict=True))
    cells_p = set(zip(p.image_ids.tolist(), p.labels.tolist(), strict=True))
    assert cells_p <= cells_t
    assert len(cells_p) / len(cells_t) == pytest.approx(0.7, abs=0.03)
    for cell in list(cells_p)[:200]:  # a kept cell keeps all its boxes
        n_t = np.sum((t.image_ids == cell[0]) & (t.labels == cell[1]))
        n_p = np.sum((p.image_ids == cell[0]) & (p.labels == cell[1]))
        assert n_t == n_p
    assert len(C.class_underprediction(t, 1.0, 5)) == 0


def test_class_overprediction_adds_boxes_for_absent_classes_inside_image():
    t = multi_box_dataset(1000)
    p = C.class_overprediction(t, 0.2, 6, num_classes=K, image_size=(1024, 512))
    new = slice(len(t), None)
    np.testing.assert_array_equal(p.boxes[: len(t)], t.boxes)
    nb = p.boxes[new]
    np.testing.assert_allclose(nb[:, 2], 256) and np.testing.assert_allclose(nb[:, 3], 128)
    assert (
        (nb[:, 0] >= 0).all() and (nb[:, 0] + nb[:, 2] <= 1024).all() and (nb[:, 1] + nb[:, 3] <= 512).all()
    )
    present = set(zip(t.image_ids.tolist(), t.labels.tolist(), strict=True))
    added = list(zip(p.image_ids[new].tolist(), p.labels[new].tolist(), strict=True))
    assert not present & set(added) and len(set(added)) == len(added)
    n_absent = 1000 * K - len(present)
    assert len(added) / n_absent == pytest.approx(0.2, abs=0.02)


def test_box_duplication_mean_and_count_factor():
    t = single_box_dataset(4000)
    for e in (0.5, 2.0):
        p = C.box_duplication(t, e, 7)
        assert (len(p) - len(t)) / len(t) == pytest.approx(e, rel=0.08)
        r = rodeo(p, t)
        assert r.localization == pytest.approx(len(t) / len(p), abs=1e-12)  # exact copies: factor only


def test_class_confusion_permutes_within_image():
    t = multi_box_dataset(500)
    p = C.class_confusion(t, 1.0, 8, num_classes=K)
    np.testing.assert_array_equal(p.boxes, t.boxes)
    for i in range(50):  # same partition of boxes into classes, relabelled injectively
        lt, lp = t.labels[t.image_ids == i], p.labels[p.image_ids == i]
        pairs = set(zip(lt.tolist(), lp.tolist(), strict=True))
        assert len({a for a, _ in pairs}) == len(pairs) == len({b for _, b in pairs})
    # with p = 1 the classes are a uniform random permutation: accuracy ≈ 1/K -> cls ≈ 0
    r = rodeo(p, t, class_weight_matching=0.0)
    assert r.classification < 0.1
    half = rodeo(C.class_confusion(t, 0.5, 8, num_classes=K), t, class_weight_matching=0.0)
    assert 0.2 < half.classification < 0.9


def test_random_boxes_of_size():
    t = multi_box_dataset(300)
    p = C.random_boxes_of_size(t, 0.2, 4, num_classes=K, image_size=1.0)
    cells_t = sorted(set(zip(t.image_ids.tolist(), t.labels.tolist(), strict=True)))
    cells_p = sorted(zip(p.image_ids.tolist(), p.labels.tolist(), strict=True))
    assert cells_p == cells_t  # one box per positive class
    np.testing.assert_allclose(p.boxes[:, 2:], 0.2)
    assert (p.boxes[:, :2] >= 0).all() and (p.boxes[:, :2] + 0.2 <= 1).all()
    more = C.random_boxes_of_size(t, 0.2, 4, num_classes=K, image_size=1.0, p_overpred=0.5)
    assert len(more) > len(p)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda t: C.position_noise(t, -1, 0), "sigma"),
        (lambda t: C.class_underprediction(t, 1.5, 0), "p must lie"),
        (lambda t: C.position_noise(t.boxes, 0.1, 0), "ImageBoxes"),
        (lambda t: C.position_noise(t, 0.1, "seed"), "rng"),
        (lambda t: C.class_confusion(t, 0.5, 0, num_classes=2), "num_classes"),
        (lambda t: C.class_overprediction(t, 0.5, 0, num_classes=K, image_size=0), "image_size"),
        (lambda t: C.random_boxes_of_size(t, 0, 0, num_classes=K, image_size=1), "size"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call(multi_box_dataset(20))
