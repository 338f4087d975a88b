"""Whole-slide phantoms: shapes, class prior, determinism, and streaming == crops of the full slide."""

import numpy as np
import pytest

from medeval.data.patching import categorize_patches, extract_patches
from medeval.data.phantoms.slide import (
    SLIDE_CLASSES,
    class_fractions,
    generate_slide,
    iter_slide_patches,
    render_region,
    slide_layout,
)


def test_shapes_and_dtypes():
    s = generate_slide(96, 160, seed=1)
    assert s.image.shape == (96, 160, 3) and s.image.dtype == np.uint8
    assert s.mask.shape == (96, 160) and s.mask.dtype == np.uint8
    assert set(np.unique(s.mask)) <= {0, 1, 2}
    assert SLIDE_CLASSES == ("O", "notC", "C")


def test_deterministic():
    a, b, c = generate_slide(128, 128, seed=4), generate_slide(128, 128, seed=4), generate_slide(128, 128, seed=5)
    np.testing.assert_array_equal(a.image, b.image)
    np.testing.assert_array_equal(a.mask, b.mask)
    assert not np.array_equal(a.mask, c.mask)


@pytest.mark.parametrize("seed", range(6))
def test_natural_class_prior(seed):
    """Table 2.2: about 78-79 % O; C and ¬C each about 7-14 %."""
    fr = generate_slide(256, 256, seed=seed).class_fractions
    assert 0.72 <= fr["O"] <= 0.85
    assert 0.05 <= fr["C"] <= 0.16
    assert 0.04 <= fr["notC"] <= 0.16
    assert sum(fr.values()) == pytest.approx(1.0)


def test_tumour_fraction_controls_c():
    assert generate_slide(128, 128, seed=2, tumour_fraction=0.0).class_fractions["C"] == 0
    small = generate_slide(256, 256, seed=2, tumour_fraction=0.03).class_fractions["C"]
    large = generate_slide(256, 256, seed=2, tumour_fraction=0.15).class_fractions["C"]
    assert small < large


def test_streaming_patches_equal_crops_of_full_slide():
    h, w, side = 200, 264, 48
    full = generate_slide(h, w, seed=7)
    streamed = list(iter_slide_patches(h, w, side, seed=7, block_patches=3))
    patches, coords = extract_patches(full.image, side)
    assert [(r, c) for r, c, _, _ in streamed] == [tuple(x) for x in coords]
    for (r, c, im, m), ref in zip(streamed, patches, strict=True):
        np.testing.assert_array_equal(im, ref)
        np.testing.assert_array_equal(m, full.mask[r:r + side, c:c + side])


def test_render_region_equals_crop_and_multi_tile():
    layout = slide_layout(1100, 300, seed=3)
    full = generate_slide(1100, 300, seed=3)  # rendered in 1024-px tiles
    img, msk = render_region(layout, 1000, 17, 100, 200)
    np.testing.assert_array_equal(img, full.image[1000:1100, 17:217])
    np.testing.assert_array_equal(msk, full.mask[1000:1100, 17:217])


def test_shared_structures_and_c_like_notc():
    """The phantom has the inter-class similarity the thesis names: C-like regions labelled ¬C."""
    s = generate_slide(512, 512, seed=0)
    layout = s.layout
    assert len(layout.germinal_centres) > 0 and len(layout.tumours) >= 1
    rgb = s.image.reshape(-1, 3).astype(float)
    m = s.mask.ravel()
    mean = {k: rgb[m == k].mean(axis=0) for k in (0, 1, 2)}
    # tissue classes are darker than O, C is the darkest
    assert mean[2].sum() < mean[1].sum() < mean[0].sum()


def test_patch_categories_cover_all_four():
    s = generate_slide(256, 256, seed=1)
    patches, _ = extract_patches(s.mask, 32)
    cats = categorize_patches(patches)
    assert set(cats) == {"O", "C", "notC", "mixed"}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"height": 16}, "height"),
        ({"width": 10.5}, "width"),
        ({"tumour_fraction": 0.5, "tissue_fraction": 0.2}, "tumour_fraction"),
        ({"tissue_fraction": 0.9}, "tissue_fraction"),
        ({"seed": -3}, "seed"),
        ({"n_nodes": 0}, "n_nodes"),
    ],
)
def test_bad_input_raises(kwargs, match):
    args = {"height": 64, "width": 64, **kwargs}
    with pytest.raises(ValueError, match=match):
        generate_slide(args.pop("height"), args.pop("width"), **args)


def test_bad_streaming_input():
    with pytest.raises(ValueError, match="patch_size"):
        next(iter_slide_patches(64, 64, 128))
    with pytest.raises(ValueError, match="stride"):
        next(iter_slide_patches(64, 64, 32, 0))
    with pytest.raises(ValueError, match="region"):
        render_region(slide_layout(64, 64), 60, 0, 10, 10)
    with pytest.raises(ValueError, match="mask values"):
        class_fractions(np.array([[0, 3]]))
