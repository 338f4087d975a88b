"""Bags and instance labels on hand-built masks and boxes (chapter 1, Eq. 11)."""

import numpy as np
import pandas as pd
import pytest

from medeval.data.bagging import (
    image_to_bag,
    instance_coverage,
    instance_labels_from_boxes,
    instance_labels_from_mask,
    rasterize_boxes,
)


def test_image_to_bag_row_major():
    rng = np.random.default_rng(0)
    images = rng.random((3, 12, 12))
    bag = image_to_bag(images, 3)
    assert bag.shape == (3, 9, 4, 4)
    for r in range(3):
        for c in range(3):
            np.testing.assert_array_equal(bag[:, r * 3 + c], images[:, 4 * r:4 * r + 4, 4 * c:4 * c + 4])
    rgb = rng.random((2, 8, 8, 3))
    bag_rgb = image_to_bag(rgb, 2)
    assert bag_rgb.shape == (2, 4, 4, 4, 3)
    np.testing.assert_array_equal(bag_rgb[1, 3], rgb[1, 4:, 4:])


def test_mask_labels_hand_built():
    mask = np.zeros((1, 8, 8), bool)
    mask[0, 0:4, 0:4] = True  # cell 0 fully
    mask[0, 0:4, 4:6] = True  # cell 1 half
    mask[0, 7, 7] = True  # cell 3: 1 pixel of 16
    cov = instance_coverage(mask, 2)
    np.testing.assert_allclose(cov, [[1.0, 0.5, 0.0, 1 / 16]])
    np.testing.assert_array_equal(instance_labels_from_mask(mask, 2), [[True, True, False, False]])
    np.testing.assert_array_equal(instance_labels_from_mask(mask, 2, min_fraction=0.6), [[True, False, False, False]])
    np.testing.assert_array_equal(instance_labels_from_mask(mask, 2, min_fraction=1e-9), [[True, True, False, True]])


def test_labels_invariant_to_mask_dtype_and_consistent_with_bag():
    rng = np.random.default_rng(1)
    masks = rng.random((4, 16, 16)) < 0.3
    a = instance_labels_from_mask(masks, 4, 0.25)
    b = instance_labels_from_mask(masks.astype(np.uint16) * 7, 4, 0.25)
    np.testing.assert_array_equal(a, b)
    frac = image_to_bag(masks.astype(float), 4).mean(axis=(2, 3))
    np.testing.assert_array_equal(a, frac >= 0.25)


def test_box_labels_fraction_rule():
    boxes = pd.DataFrame({"image": [0, 2], "x": [0, 8], "y": [0, 4], "w": [6, 8], "h": [4, 4]})
    labels = instance_labels_from_boxes(boxes, 3, 16, 4)  # cells of 4 x 4 px
    expected = np.zeros((3, 16), bool)
    expected[0, [0, 1]] = True  # x 0..6 covers cell 0 fully and half of cell 1
    expected[2, [6, 7]] = True  # row 1, columns 2 and 3
    np.testing.assert_array_equal(labels, expected)
    r = rasterize_boxes(boxes, 3, 16)
    assert r[0].sum() == 24 and r[1].sum() == 0 and r[2].sum() == 32


def test_box_labels_authors_code_rule():
    # 1024-px image, P = 16 (64-px cells): x 100..300 -> round(1.5625) = 2 .. round(4.6875) = 5, inclusive
    boxes = pd.DataFrame({"image": [0], "x": [100.0], "y": [640.0], "w": [200.0], "h": [30.0]})
    lab = instance_labels_from_boxes(boxes, 1, 1024, 16, rule="authors_code").reshape(16, 16)
    rows, cols = np.nonzero(lab)
    assert set(cols) == {2, 3, 4, 5}
    # y 640..670: round(10.0) = 10 .. round(10.47) = 10 -> row 10 only
    assert set(rows) == {10}
    assert lab.sum() == 4
    # the inclusive upper index adds a cell the box does not touch: x 100..300 ends in cell 4 (256..320)
    # yet cell 5 (320..384) is positive; the fraction rule does not do that
    frac = instance_labels_from_boxes(boxes.assign(h=64.0), 1, 1024, 16).reshape(16, 16)
    assert set(np.nonzero(frac)[1]) == {2, 3, 4}
    # a narrow box at the far edge: round(1000 / 64) = 16 is past the grid, and numpy slicing (as in the
    # authors' code) makes the slice 16:17 empty, so the box yields no positive instance under that rule
    edge = pd.DataFrame({"image": [0], "x": [1000.0], "y": [0.0], "w": [24.0], "h": [64.0]})
    assert instance_labels_from_boxes(edge, 1, 1024, 16, rule="authors_code").sum() == 0
    assert instance_labels_from_boxes(edge, 1, 1024, 16, min_fraction=0.25).sum() == 1


def test_box_labels_bad_input():
    boxes = pd.DataFrame({"image": [0], "x": [0], "y": [0], "w": [4], "h": [4]})
    with pytest.raises(ValueError, match="grid_size"):
        instance_labels_from_boxes(boxes, 1, 10, 4)
    with pytest.raises(ValueError, match="rule"):
        instance_labels_from_boxes(boxes, 1, 16, 4, rule="centre")
    with pytest.raises(ValueError, match="image"):
        instance_labels_from_boxes(boxes.assign(image=5), 1, 16, 4)
    with pytest.raises(ValueError, match="positive w, h"):
        instance_labels_from_boxes(boxes.assign(w=0), 1, 16, 4)
    with pytest.raises(ValueError, match="columns"):
        instance_labels_from_boxes(boxes.drop(columns="h"), 1, 16, 4)


def test_mask_bad_input():
    with pytest.raises(ValueError, match="min_fraction"):
        instance_labels_from_mask(np.zeros((1, 4, 4)), 2, min_fraction=0)
    with pytest.raises(ValueError, match="grid_size"):
        instance_labels_from_mask(np.zeros((1, 6, 6)), 4)
    with pytest.raises(ValueError, match="batch axis"):
        instance_labels_from_mask(np.zeros((4, 4)), 2)
    with pytest.raises(ValueError, match="images"):
        image_to_bag(np.zeros((4, 4)), 2)


def test_phantom_boxes_give_positive_instances():
    from medeval.data.phantoms.chest import generate_chest_phantoms

    p = generate_chest_phantoms(8, 64, seed=0, findings=["Cardiomegaly"], prevalence={"Cardiomegaly": 0.5})
    pos = p.labels[:, 1] == 1
    from_mask = instance_labels_from_mask(p.class_mask("Cardiomegaly"), 8)
    b = p.boxes[p.boxes.finding == "Cardiomegaly"]
    from_box = instance_labels_from_boxes(b, 8, 64, 8)
    assert (from_mask.any(axis=1) == pos).all()
    assert (from_mask <= from_box).all()  # the heart ellipse lies inside its box
