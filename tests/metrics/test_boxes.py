"""Tests of medeval.metrics.boxes: conversions against torchvision-free hand formulas, validation errors, and
area invariances (the round trips between every pair of formats: test_common.py)."""

import numpy as np
import pytest

from medeval.metrics.boxes import BOX_FORMATS, box_area, convert_boxes, validate_boxes


def _random_xywh(rng, shape=(20,)):
    xy = rng.uniform(-50, 500, size=(*shape, 2))
    wh = rng.uniform(0.5, 200, size=(*shape, 2))
    return np.concatenate([xy, wh], axis=-1)


def test_formats_constant():
    assert BOX_FORMATS == ("xywh", "xyxy", "cxcywh")


def test_known_example():
    xywh = np.array([[10.0, 20.0, 30.0, 40.0]])
    np.testing.assert_allclose(convert_boxes(xywh, "xywh", "xyxy"), [[10, 20, 40, 60]])
    np.testing.assert_allclose(convert_boxes(xywh, "xywh", "cxcywh"), [[25, 40, 30, 40]])
    np.testing.assert_allclose(convert_boxes([[10, 20, 40, 60]], "xyxy", "cxcywh"), [[25, 40, 30, 40]])
    np.testing.assert_allclose(box_area(xywh, "xywh"), [1200.0])
    np.testing.assert_allclose(box_area([[10, 20, 40, 60]], "xyxy"), [1200.0])


def test_matches_torchvision_style_reference():
    # independent reference: torchmetrics/torchvision use xyxy; compute with torch ops directly
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    xywh = _random_xywh(rng)
    t = torch.as_tensor(xywh)
    ref_xyxy = torch.cat([t[:, :2], t[:, :2] + t[:, 2:]], dim=1).numpy()
    np.testing.assert_allclose(convert_boxes(t, "xywh", "xyxy"), ref_xyxy)
    ref_area = (ref_xyxy[:, 2] - ref_xyxy[:, 0]) * (ref_xyxy[:, 3] - ref_xyxy[:, 1])
    np.testing.assert_allclose(box_area(ref_xyxy, "xyxy"), ref_area)


@pytest.mark.parametrize("fmt", BOX_FORMATS)
def test_area_translation_invariant_and_scales_quadratically(fmt):
    rng = np.random.default_rng(2)
    xywh = _random_xywh(rng)
    shifted = xywh.copy()
    shifted[:, :2] += rng.uniform(-100, 100, size=(len(xywh), 2))
    a = box_area(convert_boxes(xywh, "xywh", fmt), fmt)
    np.testing.assert_allclose(box_area(convert_boxes(shifted, "xywh", fmt), fmt), a)
    np.testing.assert_allclose(box_area(convert_boxes(xywh * 3.0, "xywh", fmt), fmt), 9.0 * a)


def test_empty_boxes():
    empty = np.zeros((0, 4))
    assert convert_boxes(empty, "xywh", "xyxy").shape == (0, 4)
    assert box_area(empty, "xyxy").shape == (0,)


@pytest.mark.parametrize(
    "boxes, fmt, match",
    [
        (np.zeros((3, 3)), "xywh", "shape"),
        (np.array([[0, 0, 1, np.nan]]), "xywh", "finite"),
        (np.array([[0, 0, np.inf, 1]]), "xyxy", "finite"),
        (np.array([[0, 0, 0, 1]]), "xywh", "positive"),
        (np.array([[0, 0, 1, -1]]), "cxcywh", "positive"),
        (np.array([[5, 5, 5, 10]]), "xyxy", "positive"),
        (np.array([[5, 5, 4, 10]]), "xyxy", "positive"),
    ],
)
def test_validate_rejects(boxes, fmt, match):
    with pytest.raises(ValueError, match=match) as info:
        validate_boxes(boxes, fmt, name="pred_boxes")
    assert "pred_boxes" in str(info.value)


def test_bad_format_names():
    with pytest.raises(ValueError, match="box_format"):
        validate_boxes(np.zeros((1, 4)) + 1, "xyhw")
    with pytest.raises(ValueError, match="target"):
        convert_boxes([[0, 0, 1, 1]], "xywh", "yxyx")
    with pytest.raises(ValueError, match="source"):
        convert_boxes([[0, 0, 1, 1]], "ltrb", "xywh")
