"""Tests of medeval.metrics.detection (RoDeO, acc@IoU, AP@IoU, mAP) and medeval.metrics.box_overlap.

Oracle: rodeometric 0.0.1 (import name ``rodeo``), with our compatibility patch
applied by a fixture (scikit-learn >= 1.7 returns a Python float from ``matthews_corrcoef``, which
rodeometric 0.0.1 then calls ``.clip`` on). Golden values: rodeometric 0.0.1 output (the FeliMe/RoDeO
README example and our own cases).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from medeval.metrics.box_overlap import (
    paired_centered_iou,
    paired_generalized_iou,
    paired_iou,
    pairwise_generalized_iou,
    pairwise_iou,
)
from medeval.metrics.boxes import convert_boxes
from medeval.metrics.detection import (
    MAP_IOU_THRESHOLDS,
    ImageBoxes,
    accuracy_at_iou,
    average_precision_at_iou,
    class_weight_for_matching,
    detection_mean_average_precision,
    hungarian_box_matching,
    iou_threshold_counts,
    localization_similarity,
    robust_detection_outcome,
    rodeo_harmonic_mean,
)

SUBS = ("localization", "shape_matching", "classification", "total")


# --------------------------------------------------------------------------------------------------
# oracle
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rodeo_oracle():
    """rodeometric with our compatibility patch; returns a function (preds, targets, class_names, **kw) -> dict."""
    rodeo = pytest.importorskip("rodeo")
    import rodeo.rodeo as rr
    import sklearn.metrics

    original = rr.matthews_corrcoef

    def mcc_compat(y_true, y_pred, **kw):
        if len(y_true) == 0:  # per-class with no matched pair: sklearn >= 1.7 raises, <= 1.6 returned 0
            return np.float64(0.0)
        return np.float64(sklearn.metrics.matthews_corrcoef(y_true, y_pred, **kw))

    rr.matthews_corrcoef = mcc_compat

    def run(preds, targets, class_names, **kw):
        m = rodeo.RoDeO(class_names=list(class_names), **kw)
        m.add(
            [np.asarray(p, float).reshape(-1, 5) for p in preds],
            [np.asarray(t, float).reshape(-1, 5) for t in targets],
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return m.compute()

    yield run
    rr.matthews_corrcoef = original


def random_dataset(rng, k, n_images, scale=(1.0, 1.0), max_targets=3):
    """Targets, and predictions = corrupted targets (noise, size change, class flips, drops, extras)."""
    sx, sy = scale
    preds, targets = [], []
    for _ in range(n_images):
        nt = int(rng.integers(0, max_targets + 1))
        t = np.column_stack(
            [
                rng.uniform(0, 0.8, nt) * sx,
                rng.uniform(0, 0.8, nt) * sy,
                rng.uniform(0.02, 0.3, nt) * sx,
                rng.uniform(0.02, 0.3, nt) * sy,
                rng.integers(0, k, nt),
            ]
        )
        p = t.copy()
        p[:, 0] += rng.normal(0, 0.05, nt) * sx
        p[:, 1] += rng.normal(0, 0.05, nt) * sy
        p[:, 2:4] *= np.exp(rng.normal(0, 0.3, (nt, 2)))
        flip = rng.random(nt) < 0.3
        p[flip, 4] = rng.integers(0, k, int(flip.sum()))
        p = p[rng.random(nt) > 0.2]
        ne = int(rng.integers(0, 3))
        extra = np.column_stack(
            [
                rng.uniform(0, 0.8, ne) * sx,
                rng.uniform(0, 0.8, ne) * sy,
                rng.uniform(0.02, 0.3, ne) * sx,
                rng.uniform(0.02, 0.3, ne) * sy,
                rng.integers(0, k, ne),
            ]
        )
        preds.append(np.concatenate([p, extra]).reshape(-1, 5))
        targets.append(t.reshape(-1, 5))
    return preds, targets


def ours(preds, targets, names, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return robust_detection_outcome(preds, targets, box_format="xywh", class_names=names, **kw)


def test_oracle_agreement_on_random_datasets(rodeo_oracle):
    """A1/A2: >= 200 random multi-image datasets; all global keys and every per-class key defined by
    both agree with rodeometric within 1e-9 (default and fixed class weight; pixels and [0, 1])."""
    rng = np.random.default_rng(20230303)
    compared = per_class_compared = 0
    for trial in range(240):
        k = int(rng.integers(2, 9))
        scale = [(1.0, 1.0), (1024.0, 1024.0), (640.0, 480.0)][trial % 3]
        preds, targets = random_dataset(rng, k, int(rng.integers(1, 12)), scale)
        names = [f"class{j}" for j in range(k)]
        kw = {} if trial % 3 else {"class_weight_matching": float(rng.uniform(0, 2))}
        expected = rodeo_oracle(preds, targets, names, return_per_class=True, **kw)
        got = ours(preds, targets, names, **kw)
        got_d = got.as_dict()
        if "RoDeO/overprediction" in expected:  # oracle's degenerate branch: no matched pair
            assert got.n_matched == 0
            has_boxes = len(np.concatenate(preds + targets)) > 0
            for s in SUBS:  # ours: 0 when there are boxes, NaN when there are none (documented)
                assert (got_d[f"RoDeO/{s}"] == 0.0) if has_boxes else np.isnan(got_d[f"RoDeO/{s}"])
            continue
        for s in SUBS:
            assert got_d[f"RoDeO/{s}"] == pytest.approx(expected[f"RoDeO/{s}"], abs=1e-9), (trial, s)
        compared += 1
        for c in names:
            for s in SUBS:
                key = f"RoDeO/{c}/{s}"
                if np.isnan(expected[key]):  # the oracle's NaN for a class without matched pairs (documented)
                    continue
                assert got_d[key] == pytest.approx(expected[key], abs=1e-9), (trial, key)
                per_class_compared += 1
    assert compared >= 200
    assert per_class_compared >= 1000


def test_oracle_agreement_every_class_matched(rodeo_oracle):
    """A2 restricted to datasets where every class has a matched pair: all per-class keys agree."""
    rng = np.random.default_rng(7)
    n_full = 0
    for _ in range(60):
        k = int(rng.integers(2, 4))
        preds, targets = random_dataset(rng, k, 15)
        names = [f"c{j}" for j in range(k)]
        got = ours(preds, targets, names)
        if (got.per_class["n_matched"] == 0).any():
            continue
        expected = rodeo_oracle(preds, targets, names, return_per_class=True)
        for key, value in expected.items():
            assert got.as_dict()[key] == pytest.approx(value, abs=1e-9), key
        n_full += 1
    assert n_full >= 20


def test_class_weight_matches_oracle_matching(rodeo_oracle):
    """Our data-driven ω_cls and matching agree with the oracle: forcing the oracle to our ω gives
    identical results, on datasets where ω is not 0."""
    rng = np.random.default_rng(3)
    nonzero = 0
    for _ in range(30):
        preds, targets = random_dataset(rng, 3, 8)
        names = ["a", "b", "c"]
        w = class_weight_for_matching(preds, targets, box_format="xywh", class_names=names)
        nonzero += w > 0
        a = rodeo_oracle(preds, targets, names)
        b = rodeo_oracle(preds, targets, names, class_weight_matching=w)
        assert a == pytest.approx(b, abs=1e-12)
    assert nonzero >= 10


# --------------------------------------------------------------------------------------------------
# golden vectors (rodeometric 0.0.1 output: FeliMe/RoDeO README example; G2-G4 our own cases)
# --------------------------------------------------------------------------------------------------

README_PRED = [[[0.1, 0.1, 0.2, 0.1, 0], [0, 0.3, 0.1, 0.1, 1], [0.2, 0.2, 0.1, 0.1, 0]]]
README_TARGET = [[[0, 0, 0.1, 0.1, 0], [0, 0.2, 0.1, 0.1, 1]]]


def test_readme_example_golden_values():
    r = ours(README_PRED, README_TARGET, ["a", "b"]).as_dict()
    expected = {
        "RoDeO/localization": 0.20170401730223822,
        "RoDeO/shape_matching": 0.5000000000000001,
        "RoDeO/classification": 0.6666666666666666,
        "RoDeO/total": 0.35470516149167075,
        "RoDeO/a/localization": 0.05255602595335717,
        "RoDeO/a/shape_matching": 0.25,
        "RoDeO/a/classification": 0.5,
        "RoDeO/a/total": 0.1198708664320262,
        "RoDeO/b/localization": 0.5000000000000003,
        "RoDeO/b/shape_matching": 1.0000000000000004,
        "RoDeO/b/classification": 1.0,
        "RoDeO/b/total": 0.7500011249998129,
    }
    assert list(r) == list(expected)  # A3: oracle-compatible keys, in the oracle's order
    for key, value in expected.items():
        assert r[key] == pytest.approx(value, abs=1e-12), key
    # hand check: loc = (2^-3.25 + 2^-1)/2 * 2/3
    assert r["RoDeO/localization"] == pytest.approx((2**-3.25 + 0.5) / 2 * 2 / 3, abs=1e-15)
    assert (
        class_weight_for_matching(README_PRED, README_TARGET, box_format="xywh", class_names=["a", "b"])
        == 0.0
    )


G2_T = [[[0.10, 0.40, 0.10, 0.10, 0], [0.30, 0.40, 0.10, 0.10, 1]]]
G2_P = [[[0.14, 0.40, 0.10, 0.10, 1], [0.26, 0.40, 0.10, 0.10, 0]]]


@pytest.mark.parametrize(
    "weight, expected",
    [
        (0.0, (0.8950250709279726, 0.9999999999999997, 0.0, 2.999993648158779e-06)),
        (None, (0.8950250709279726, 0.9999999999999997, 0.0, 2.999993648158779e-06)),
        (1.0, (0.16957554093095906, 0.9999999999999997, 1.0, 0.3798891691501082)),
        (5.0, (0.16957554093095906, 0.9999999999999997, 1.0, 0.3798891691501082)),
    ],
)
def test_g2_class_weight_decides_the_match(weight, expected):
    r = ours(G2_P, G2_T, ["a", "b"], class_weight_matching=weight)
    got = (r.localization, r.shape_matching, r.classification, r.total)
    assert got == pytest.approx(expected, abs=1e-12)


def test_g3_pixels_four_images():
    preds = [[[10, 20, 30, 40, 0], [100, 100, 20, 20, 2]], [], [[50, 50, 10, 30, 1]], [[0, 0, 5, 5, 1]]]
    targets = [[[12, 18, 28, 44, 0]], [[5, 5, 10, 10, 1]], [[55, 45, 12, 25, 1], [200, 200, 30, 30, 2]], []]
    names = ["x", "y", "z"]
    assert class_weight_for_matching(preds, targets, box_format="xywh", class_names=names) == pytest.approx(
        0.25
    )
    r = ours(preds, targets, names)
    assert (r.localization, r.shape_matching, r.classification, r.total) == pytest.approx(
        (0.29819293104621764, 0.2613240418118467, 0.3333333333333333, 0.2946906953102396), abs=1e-12
    )
    # class z: one unmatched prediction and one missed target, no matched pair -> 0 (our policy)
    z = {s: r.per_class[s][2] for s in (*SUBS, "n_matched", "n_overpredicted", "n_missed")}
    assert z == {
        "localization": 0,
        "shape_matching": 0,
        "classification": 0,
        "total": 0,
        "n_matched": 0,
        "n_overpredicted": 1,
        "n_missed": 1,
    }


def test_g4_swapped_classes():
    r = ours([[[0, 0, 1, 1, 1], [2, 2, 1, 1, 0]]], [[[0, 0, 1, 1, 0], [2, 2, 1, 1, 1]]], ["a", "b"])
    assert (r.localization, r.shape_matching, r.classification) == (1.0, 1.0, 0.0)
    assert r.total == pytest.approx(2.999994000018e-06, abs=1e-15)


# --------------------------------------------------------------------------------------------------
# analytic properties (derived here from Eqs. 2-6 and App. E; cls from rodeometric's binary MCC)
# --------------------------------------------------------------------------------------------------

T0 = np.array([[0.3, 0.4, 0.2, 0.1]])  # a non-square target (xywh)


def one_box(pred_xywh, pred_cls=0, target=T0, target_cls=0, k=2, **kw):
    p = [np.column_stack([np.atleast_2d(pred_xywh), [pred_cls]])]
    t = [np.column_stack([target, [target_cls]])]
    return ours(p, t, [f"c{j}" for j in range(k)], **kw)


def test_perfect_prediction_and_eps():
    r = one_box(T0)
    assert (r.localization, r.shape_matching, r.classification) == (1.0, 1.0, 1.0)
    assert r.total == pytest.approx(1.000001, abs=1e-15)
    assert one_box(T0, eps=0.0).total == 1.0  # A4


@pytest.mark.parametrize(
    "d, expected", [(0.25, 0.957603), (0.5, 0.840896), (1, 0.5), (1.5, 0.210224), (2, 0.0625), (3, 0.001953)]
)
def test_shift_along_x(d, expected):
    p = T0.copy()
    p[0, 0] += d * T0[0, 2]
    r = one_box(p)
    assert r.localization == pytest.approx(expected, abs=1e-6)
    assert r.localization == pytest.approx(2.0 ** (-(d**2)), abs=1e-12)
    assert (r.shape_matching, r.classification) == (1.0, 1.0)


@pytest.mark.parametrize("theta_deg", [0, 30, 45, 90, 135, 200, 333])
def test_isotropy(theta_deg):
    th = math.radians(theta_deg)
    p = T0.copy()
    p[0, 0] += math.cos(th) * T0[0, 2]
    p[0, 1] += math.sin(th) * T0[0, 3]
    assert one_box(p).localization == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("s", [0.25, 0.5, 0.8, 1.25, 2, 4])
def test_uniform_scale(s):
    c = convert_boxes(T0, "xywh", "cxcywh")
    c[0, 2:] *= s
    r = one_box(convert_boxes(c, "cxcywh", "xywh"))
    assert r.shape_matching == pytest.approx(min(s, 1 / s) ** 2, abs=1e-12)
    assert r.localization == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("ratio, expected", [(1.5, 0.5), (2, 1 / 3), (4, 0.142857)])
def test_aspect_ratio_at_constant_area(ratio, expected):
    c = convert_boxes(T0, "xywh", "cxcywh")
    c[0, 2] *= ratio
    c[0, 3] /= ratio
    r = one_box(convert_boxes(c, "cxcywh", "xywh"))
    assert r.shape_matching == pytest.approx(expected, abs=1e-6)
    assert r.shape_matching == pytest.approx(1 / (2 * ratio - 1), abs=1e-12)
    assert r.localization == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "k, acc, expected",
    [
        (3, 0.75, 0.625),
        (3, 0.5, 0.25),
        (3, 0.25, 0.0),
        (8, 0.75, 0.714286),
        (8, 0.5, 0.428571),
        (8, 0.25, 0.142857),
        (2, 0.5, 0.0),
    ],
)
def test_classification_closed_form(k, acc, expected):
    """cls = max(0, (K·acc − 1)/(K − 1)) for N matched pairs with accuracy acc (one pair per image)."""
    n = 8
    n_correct = round(acc * n)
    targets = [np.array([[0.1, 0.1, 0.2, 0.2, i % k]]) for i in range(n)]
    preds = [np.array([[0.1, 0.1, 0.2, 0.2, (i % k) if i < n_correct else (i + 1) % k]]) for i in range(n)]
    r = ours(preds, targets, [f"c{j}" for j in range(k)], class_weight_matching=0.0)
    assert r.classification == pytest.approx(expected, abs=1e-6)
    assert r.classification == pytest.approx(max(0.0, (k * acc - 1) / (k - 1)), abs=1e-12)


def test_all_wrong_classes_total_near_zero():
    r = one_box(T0, pred_cls=1)
    assert r.classification == 0.0
    assert r.total == pytest.approx(3e-6, rel=1e-4)
    assert one_box(T0, pred_cls=1, eps=0.0).total == 0.0


def test_duplicates_and_missed_count_factor():
    t = np.array([[0.1, 0.1, 0.2, 0.2, 0], [0.5, 0.5, 0.2, 0.3, 1]])
    dup = ours([np.concatenate([t, t])], [t], ["a", "b"])
    assert (dup.localization, dup.shape_matching, dup.classification) == pytest.approx(
        (0.5, 0.5, 0.5), abs=1e-12
    )
    missed = ours([t[:1]], [t], ["a", "b"])
    assert (missed.localization, missed.shape_matching, missed.classification) == pytest.approx(
        (0.5,) * 3, abs=1e-12
    )
    no_penalty = ours([t[:1]], [t], ["a", "b"], w_missed=0.0)
    assert (no_penalty.localization, no_penalty.shape_matching, no_penalty.classification) == (1.0, 1.0, 1.0)


def test_count_factor_formula_on_random_data():
    """Global factor = Σ min(P_i, T_i) / Σ max(P_i, T_i): perfect predictions plus random extras/drops."""
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(20):
        preds, targets = [], []
        for _ in range(10):
            nt = int(rng.integers(0, 4))
            t = np.column_stack([rng.uniform(0, 0.7, (nt, 2)), rng.uniform(0.1, 0.3, (nt, 2)), np.zeros(nt)])
            p = t[: int(rng.integers(0, nt + 1))]
            ne = int(rng.integers(0, 3)) if len(p) == nt else 0
            p = np.concatenate(
                [p, np.column_stack([rng.uniform(0, 0.7, (ne, 2)) + 5, np.full((ne, 2), 0.2), np.zeros(ne)])]
            )
            preds.append(p)
            targets.append(t)
        mins = sum(min(len(p), len(t)) for p, t in zip(preds, targets, strict=True))
        maxs = sum(max(len(p), len(t)) for p, t in zip(preds, targets, strict=True))
        if mins == 0:
            continue
        r = ours(preds, targets, ["a", "b"])
        # matched boxes are perfect (extras are far away, never matched while a perfect box waits)
        assert r.classification == pytest.approx(mins / maxs, abs=1e-12)
        checked += 1
    assert checked >= 15


def test_no_predictions_no_targets_policy():
    t = [np.array([[0.1, 0.1, 0.2, 0.2, 0]]), np.zeros((0, 5))]
    with pytest.warns(UserWarning, match="no matched box pairs"):
        r = robust_detection_outcome([[], []], t, box_format="xywh", class_names=["a", "b"])
    assert (r.localization, r.shape_matching, r.classification, r.total) == (0.0, 0.0, 0.0, 0.0)
    assert r.n_missed == 1
    assert r.per_class["total"][0] == 0.0 and np.isnan(r.per_class["total"][1])  # class b has no boxes
    with pytest.warns(UserWarning, match="no boxes at all"):
        e = robust_detection_outcome([[]], [[]], box_format="xywh", class_names=["a", "b"])
    assert np.isnan(e.total)


def test_monotonicity_and_bounds():
    locs = [one_box(T0 + [[d * 0.2, 0, 0, 0]]).localization for d in np.linspace(0, 3, 13)]
    assert np.all(np.diff(locs) < 0)
    c = convert_boxes(T0, "xywh", "cxcywh")
    shapes = []
    for s in np.linspace(1, 4, 10):
        cc = c.copy()
        cc[0, 2:] *= s
        shapes.append(one_box(convert_boxes(cc, "cxcywh", "xywh")).shape_matching)
    assert np.all(np.diff(shapes) < 0)
    rng = np.random.default_rng(5)
    subs = rng.uniform(0.01, 1, (1000, 3))
    tot = rodeo_harmonic_mean(*subs.T, eps=0.0)
    assert np.all(tot >= subs.min(1) - 1e-12) and np.all(tot <= subs.mean(1) + 1e-12)
    assert np.all(tot <= 3 * subs.min(1))


# --------------------------------------------------------------------------------------------------
# input containers (translation, axis scaling, box formats, image and box order, ImageBoxes and torch input
# are checked for every detection metric in test_common.py)
# --------------------------------------------------------------------------------------------------


def test_image_boxes_round_trip_and_subsets():
    rng = np.random.default_rng(9)
    preds, _ = random_dataset(rng, 3, 10)
    p = ImageBoxes.from_per_image(preds, box_format="xywh")
    back = p.to_per_image()
    assert all(np.array_equal(a.reshape(-1, 5), b) for a, b in zip(preds, back, strict=True))
    sub = p.subset_images([3, 3, 0])
    assert sub.n_images == 3 and len(sub) == 2 * len(preds[3]) + len(preds[0])


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preds, match",
    [
        ([np.zeros((1, 4))], "shape"),
        ([np.array([[0.1, 0.1, 0.2, np.nan, 0]])], "finite"),
        ([np.array([[0.1, 0.1, 0.0, 0.2, 0]])], "positive"),
        ([np.array([[0.1, 0.1, -0.1, 0.2, 0]])], "positive"),
        ([np.array([[0.1, 0.1, 0.2, 0.2, 2]])], "unknown class id"),
        ([np.array([[0.1, 0.1, 0.2, 0.2, -1]])], "class ids >= 0"),
        ([np.array([[0.1, 0.1, 0.2, 0.2, 0.5]])], "integers"),
        ([np.array([[0.1, 0.1, 0.2, 0.2, 0]]), np.zeros((0, 5))], "same images"),
        (np.zeros((1, 5)), "sequence"),
    ],
)
def test_bad_input_raises(preds, match):
    targets = [np.array([[0.1, 0.1, 0.2, 0.2, 0]])]
    with pytest.raises(ValueError, match=match):
        robust_detection_outcome(preds, targets, box_format="xywh", class_names=["a", "b"])
    with pytest.raises(ValueError, match=match):
        accuracy_at_iou(preds, targets, box_format="xywh", class_names=["a", "b"], iou_threshold=0.5)


def test_bad_arguments_raise():
    t = [np.array([[0.1, 0.1, 0.2, 0.2, 0]])]
    with pytest.raises(TypeError):
        robust_detection_outcome(t, t, class_names=["a", "b"])  # box_format is required: never guessed
    with pytest.raises(ValueError, match="box_format"):
        robust_detection_outcome(t, t, box_format="ltrb", class_names=["a", "b"])
    with pytest.raises(ValueError, match="eps"):
        robust_detection_outcome(t, t, box_format="xywh", class_names=["a", "b"], eps=-1)
    with pytest.raises(ValueError, match="w_matched"):
        robust_detection_outcome(t, t, box_format="xywh", class_names=["a", "b"], w_matched=0)
    with pytest.raises(ValueError, match="class_weight_matching"):
        robust_detection_outcome(t, t, box_format="xywh", class_names=["a", "b"], class_weight_matching=-1)
    ib = ImageBoxes.from_per_image(t, box_format="xywh")
    with pytest.raises(ValueError, match="holds boxes in format 'xywh'"):
        robust_detection_outcome(ib, ib, box_format="xyxy", class_names=["a", "b"])
    with pytest.raises(ValueError, match="iou_threshold"):
        accuracy_at_iou(t, t, box_format="xywh", class_names=["a", "b"], iou_threshold=0)
    with pytest.raises(ValueError, match="interpolation"):
        average_precision_at_iou(
            t, t, box_format="xywh", class_names=["a", "b"], iou_threshold=0.5, interpolation="x"
        )
    with pytest.raises(ValueError, match="image_ids"):
        ImageBoxes.from_arrays([[0, 0, 1, 1]], [0], [3], box_format="xywh", n_images=2)


# --------------------------------------------------------------------------------------------------
# overlap helpers
# --------------------------------------------------------------------------------------------------


def test_overlap_helpers_hand_values():
    a = np.array([[0.0, 0.0, 2.0, 2.0]])
    b = np.array([[1.0, 1.0, 2.0, 2.0]])
    assert pairwise_iou(a, b, box_format="xywh")[0, 0] == pytest.approx(1 / 7)
    # enclosing 3x3 = 9, union 7: gIoU = 1/7 - 2/9
    assert pairwise_generalized_iou(a, b, box_format="xywh")[0, 0] == pytest.approx(1 / 7 - 2 / 9)
    far = np.array([[10.0, 0.0, 2.0, 2.0]])
    assert paired_iou(a, far, box_format="xywh")[0] == 0.0
    assert paired_generalized_iou(a, far, box_format="xywh")[0] == pytest.approx(0 - (24 - 8) / 24)
    assert paired_centered_iou(a, np.array([[5.0, 5.0, 1.0, 4.0]]), box_format="xywh")[0] == pytest.approx(
        2 / 6
    )
    xyxy = convert_boxes(np.vstack([a, b]), "xywh", "xyxy")
    np.testing.assert_allclose(
        pairwise_iou(xyxy, xyxy, box_format="xyxy"),
        pairwise_iou(np.vstack([a, b]), np.vstack([a, b]), box_format="xywh"),
    )
    with pytest.raises(ValueError, match="boxes1"):
        pairwise_iou(np.array([[0, 0, 0, 1.0]]), b, box_format="xywh")


def test_overlap_against_torchvision_style_reference():
    """gIoU against an independent scalar implementation on random boxes."""
    rng = np.random.default_rng(4)
    a = np.column_stack([rng.uniform(0, 1, (50, 2)), rng.uniform(0.05, 0.5, (50, 2))])
    b = np.column_stack([rng.uniform(0, 1, (40, 2)), rng.uniform(0.05, 0.5, (40, 2))])
    g = pairwise_generalized_iou(a, b, box_format="xywh")
    for i, j in itertools.product(range(0, 50, 7), range(0, 40, 5)):
        ax1, ay1, aw, ah = a[i]
        bx1, by1, bw, bh = b[j]
        iw = max(0.0, min(ax1 + aw, bx1 + bw) - max(ax1, bx1))
        ih = max(0.0, min(ay1 + ah, by1 + bh) - max(ay1, by1))
        union = aw * ah + bw * bh - iw * ih
        enc = (max(ax1 + aw, bx1 + bw) - min(ax1, bx1)) * (max(ay1 + ah, by1 + bh) - min(ay1, by1))
        assert g[i, j] == pytest.approx(iw * ih / union - (enc - union) / enc, abs=1e-12)


def test_localization_similarity_and_matching_indices():
    t = np.array([[0.0, 0.0, 1.0, 2.0]])
    p = np.array([[1.0, 0.0, 1.0, 2.0]])
    assert localization_similarity(p, t, box_format="xywh")[0] == pytest.approx(0.5)
    preds = [np.array([[5, 5, 1, 1, 0], [0, 0, 1, 1, 0]])]
    targets = [np.array([[0, 0, 1, 1, 0]])]
    mp, mt, w = hungarian_box_matching(preds, targets, box_format="xywh", class_names=["a", "b"])
    assert mp.tolist() == [1] and mt.tolist() == [0] and w == 1.0  # image-level classes agree: MCC 1


# --------------------------------------------------------------------------------------------------
# IoU-threshold baselines
# --------------------------------------------------------------------------------------------------


def test_acc_at_iou_hand_example_with_tns_per_image_and_class():
    # image 0: target a; prediction a with IoU 1/7 (below 0.3) and one with IoU 1 -> TP 1, FP 1
    # image 1: target b, prediction of class a (wrong) -> FN b, FP a
    # image 2: nothing -> TN for a and b; class b TN also in image 0
    preds = [np.array([[1, 1, 2, 2, 0], [0, 0, 2, 2, 0]]), np.array([[0, 0, 1, 1, 0]]), np.zeros((0, 5))]
    targets = [np.array([[0, 0, 2, 2, 0]]), np.array([[0, 0, 1, 1, 1]]), np.zeros((0, 5))]
    c = iou_threshold_counts(preds, targets, box_format="xywh", class_names=["a", "b"], iou_threshold=0.3)
    assert c["tp"].tolist() == [1, 0] and c["fp"].tolist() == [2, 0] and c["fn"].tolist() == [0, 1]
    assert c["tn"].tolist() == [1, 2]
    acc = accuracy_at_iou(preds, targets, box_format="xywh", class_names=["a", "b"], iou_threshold=0.3)
    np.testing.assert_allclose(acc.per_class, [2 / 4, 2 / 3])
    assert acc.mean == pytest.approx((0.5 + 2 / 3) / 2)


def test_greedy_prefers_highest_iou_and_is_one_to_one():
    t = np.array([[0, 0, 10, 10, 0], [20, 0, 10, 10, 0]])
    p = np.array([[1, 0, 10, 10, 0], [0, 0, 10, 10, 0], [21, 0, 10, 10, 0]])
    c = iou_threshold_counts([p], [t], box_format="xywh", class_names=["a", "b"], iou_threshold=0.5)
    assert c["tp"][0] == 2 and c["fp"][0] == 1 and c["fn"][0] == 0


def naive_ap(preds, targets, k, thr, interpolation="all_point"):
    """Independent reference of App. E: per confidence threshold, sequential IoU-greedy matching."""
    out = []
    for c in range(k):
        n_pos = sum(int((t[:, 4] == c).sum()) for t in targets)
        if n_pos == 0:
            out.append(np.nan)
            continue
        scores = sorted({float(s) for p in preds for s in p[p[:, 4] == c, 5]}, reverse=True)
        pts = []
        for tau in scores:
            tp = n_kept = 0
            for p, t in zip(preds, targets, strict=True):
                pc = p[(p[:, 4] == c) & (p[:, 5] >= tau)]
                tc = t[t[:, 4] == c]
                n_kept += len(pc)
                cand = []
                for i, j in itertools.product(range(len(pc)), range(len(tc))):
                    iou = pairwise_iou(pc[i : i + 1, :4], tc[j : j + 1, :4], box_format="xywh")[0, 0]
                    if iou >= thr:
                        cand.append((-iou, i, j))
                used_p, used_t = set(), set()
                for _, i, j in sorted(cand):
                    if i not in used_p and j not in used_t:
                        used_p.add(i)
                        used_t.add(j)
                        tp += 1
            pts.append((tp / n_pos, tp / n_kept))
        if not pts:
            out.append(0.0)
            continue
        r = np.array([q[0] for q in pts])
        pr = np.array([q[1] for q in pts])
        if interpolation == "all_point":
            grid = np.unique(np.r_[r])
            ap, prev = 0.0, 0.0
            for rv in grid:
                ap += (rv - prev) * pr[r >= rv].max()
                prev = rv
        else:
            g = np.linspace(0, 1, 101)
            ap = float(np.mean([pr[r >= gv].max() if (r >= gv).any() else 0.0 for gv in g]))
        out.append(ap)
    return np.array(out)


@pytest.mark.parametrize("interpolation", ["all_point", "coco101"])
def test_average_precision_against_naive_reference(interpolation):
    rng = np.random.default_rng(21)
    for _ in range(6):
        preds, targets = random_dataset(rng, 3, 8)
        dup = [np.concatenate([p, p + [0.01, 0.0, 0, 0, 0]]) for p in preds]  # several preds per cell
        scored = [np.column_stack([p, np.round(rng.uniform(0, 1, len(p)), 1)]) for p in dup]
        for thr in (0.1, 0.5):
            got = average_precision_at_iou(
                scored,
                targets,
                box_format="xywh",
                class_names=list("abc"),
                iou_threshold=thr,
                interpolation=interpolation,
            ).per_class
            np.testing.assert_allclose(got, naive_ap(scored, targets, 3, thr, interpolation), atol=1e-12)


def test_ap_without_scores_is_precision_times_recall_and_map_geometry():
    t = np.array([[0.0, 0.0, 1.0, 1.0, 0]])
    for dx in (0.0, 0.1, 0.3, 0.6, 0.9):
        p = t + [dx, 0, 0, 0, 0]
        iou = (1 - dx) / (1 + dx)
        ap50 = average_precision_at_iou(
            [p], [t], box_format="xywh", class_names=["a", "b"], iou_threshold=0.5
        )
        assert ap50.per_class[0] == (1.0 if iou >= 0.5 else 0.0) and np.isnan(ap50.per_class[1])
        assert ap50.n_undefined == 1 and ap50.mean == ap50.per_class[0]
        m = detection_mean_average_precision([p], [t], box_format="xywh", class_names=["a", "b"])
        assert m.mean == pytest.approx(np.mean([iou >= th for th in MAP_IOU_THRESHOLDS]))
    # two targets, three predictions (one TP at 0.5): precision 1/3, recall 1/2
    t2 = np.array([[0, 0, 1, 1, 0], [5, 5, 1, 1, 0]])
    p2 = np.array([[0, 0, 1, 1, 0], [3, 3, 1, 1, 0], [8, 8, 1, 1, 0]])
    ap = average_precision_at_iou([p2], [t2], box_format="xywh", class_names=["a", "b"], iou_threshold=0.5)
    assert ap.per_class[0] == pytest.approx(1 / 6)


@pytest.mark.parametrize("m,k", [(2, 2), (2, 3), (3, 2), (3, 3), (4, 3), (5, 3), (3, 5), (4, 4), (6, 3)])
def test_enumerated_assignment_is_the_linear_sum_assignment_optimum(m, k):
    """The vectorised small-block matching returns linear_sum_assignment's matching on every block it does not
    flag as ambiguous, and flags blocks with two equal optima, which stay with scipy: two identical predictions
    (rows) when every prediction is matched (m <= k), two identical targets (columns) when every target is."""
    from scipy.optimize import linear_sum_assignment

    from medeval.metrics import detection

    rng = np.random.default_rng(m * 10 + k)
    n_blocks = 200
    cost = rng.normal(size=n_blocks * m * k)
    tied = cost.reshape(n_blocks, m, k)
    if m <= k:
        tied[:20, 1] = tied[:20, 0]
    else:
        tied[:20, :, 1] = tied[:20, :, 0]
    starts = np.arange(n_blocks) * m * k
    best, ambiguous = detection._enumerated_assignment(cost, starts, m, k)
    assert ambiguous[:20].all() and not ambiguous[20:].any()
    for b in np.flatnonzero(~ambiguous):
        rows, cols = linear_sum_assignment(cost[starts[b]: starts[b] + m * k].reshape(m, k))
        np.testing.assert_array_equal(best[b], starts[b] + rows * k + cols)


def test_per_image_lists_and_flat_arrays_give_the_same_rodeo():
    """The one-concatenate path for uniform numpy lists and the checked loop (lists with [] for empty images)
    build the same boxes."""
    rng = np.random.default_rng(3)
    per_image = [np.column_stack([rng.random((n, 2)) * 50, rng.random((n, 2)) * 20 + 1, rng.integers(0, 3, n)])
                 for n in rng.integers(0, 4, 60)]
    mixed = [a if len(a) else [] for a in per_image]
    fast = ImageBoxes.from_per_image(per_image, box_format="xywh")
    slow = ImageBoxes.from_per_image(mixed, box_format="xywh")
    np.testing.assert_array_equal(fast.boxes, slow.boxes)
    np.testing.assert_array_equal(fast.labels, slow.labels)
    np.testing.assert_array_equal(fast.image_ids, slow.image_ids)
    with pytest.raises(ValueError, match=r"boxes\[1\] must have shape"):
        ImageBoxes.from_per_image([per_image[0], np.zeros((2, 4))], box_format="xywh")
    with pytest.raises(ValueError, match=r"boxes\[1\] must have shape"):  # one box as a 1-D row
        ImageBoxes.from_per_image([per_image[0], np.array([1.0, 1.0, 2.0, 2.0, 0.0])], box_format="xywh")
    with pytest.raises(ValueError, match="same number of columns"):
        ImageBoxes.from_per_image([per_image[0], np.ones((1, 6))], box_format="xywh")
    scored = [np.column_stack([a, rng.random(len(a))]) for a in per_image]  # 6 columns: the scores survive
    fast = ImageBoxes.from_per_image(scored, box_format="xywh")
    slow = ImageBoxes.from_per_image([a if len(a) else [] for a in scored], box_format="xywh")
    np.testing.assert_array_equal(fast.scores, slow.scores)
    np.testing.assert_array_equal(fast.image_ids, slow.image_ids)
