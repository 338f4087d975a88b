"""Patch extraction (stride l/2 from (0, 0)) and the Table 4.1 patch categories."""

import numpy as np
import pytest

from medeval.data.patching import (
    PATCH_CATEGORIES,
    categorize_patches,
    category_counts,
    central_region_labels,
    extract_patches,
    patch_grid,
)


def test_extract_patches_are_the_crops():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 255, (70, 90, 3), dtype=np.uint8)
    patches, coords = extract_patches(img, 32)
    rows, cols = np.arange(0, 39, 16), np.arange(0, 59, 16)
    assert len(patches) == len(rows) * len(cols) == len(coords)
    assert patches.shape[1:] == (32, 32, 3)
    for p, (r, c) in zip(patches, coords, strict=True):
        np.testing.assert_array_equal(p, img[r:r + 32, c:c + 32])
    assert coords[:, 0].max() + 32 <= 70 and coords[:, 1].max() + 32 <= 90
    p2, c2 = extract_patches(img[..., 0], 20, stride=20)
    assert p2.shape == (3 * 4, 20, 20)
    np.testing.assert_array_equal(c2, patch_grid(70, 90, 20, 20))


def test_thesis_patch_count_formula():
    # MLNTO: l = 384, stride 192 -> per axis floor((L - 384) / 192) + 1 positions
    assert len(patch_grid(9488, 14648, 384)) == ((9488 - 384) // 192 + 1) * ((14648 - 384) // 192 + 1)


def _patch(n_c, n_n, side=384):
    flat = np.zeros(side * side, np.uint8)
    flat[:n_c] = 2
    flat[n_c:n_c + n_n] = 1
    return flat.reshape(side, side)


def test_table_4_1_worked_examples():
    cases = {  # (nC, nN) in a 384 x 384 patch: threshold 0.001 % = 1.47 px
        (0, 0): ("O", "O"),
        (1, 0): ("O", "O"),  # 99.9993 % O
        (2, 0): ("C", "C"),
        (0, 2): ("notC", "notC"),
        (2, 2): ("mixed", "mixed"),
        (5000, 1): ("C", "unassigned"),  # literal Table 4.1 has no category for it
        (1, 1): ("mixed", "unassigned"),
        (0, 1): ("O", "O"),
    }
    patches = np.stack([_patch(*k) for k in cases])
    np.testing.assert_array_equal(categorize_patches(patches), [v[0] for v in cases.values()])
    np.testing.assert_array_equal(categorize_patches(patches, rule="literal"), [v[1] for v in cases.values()])


def test_categories_partition_random_patches():
    rng = np.random.default_rng(3)
    side = 40
    patches = []
    for _ in range(400):
        m = np.zeros((side, side), np.uint8)
        kind = rng.integers(5)
        if kind:
            m[rng.random((side, side)) < rng.uniform(0, 0.02) * kind] = 1
            m[rng.random((side, side)) < rng.uniform(0, 0.02) * (4 - kind)] = 2
        patches.append(m)
    patches = np.stack(patches)
    cats = categorize_patches(patches)
    assert set(cats) <= set(PATCH_CATEGORIES)
    counts = category_counts(cats)
    assert sum(counts.values()) == len(patches)  # every patch in exactly one category
    # for patches under 100,000 px the literal rules are complete and agree
    np.testing.assert_array_equal(categorize_patches(patches, rule="literal"), cats)
    has_c = (patches == 2).any(axis=(1, 2))
    has_n = (patches == 1).any(axis=(1, 2))
    np.testing.assert_array_equal(cats == "O", ~has_c & ~has_n)
    np.testing.assert_array_equal(cats == "mixed", has_c & has_n)
    np.testing.assert_array_equal(cats == "C", has_c & ~has_n)


def test_partition_at_thesis_scale_agrees_with_literal_where_defined():
    rng = np.random.default_rng(4)
    patches = []
    for _ in range(60):
        n_c, n_n = rng.choice([0, 1, 2, 3, 1000], size=2)
        patches.append(_patch(int(n_c), int(n_n)))
    patches = np.stack(patches)
    part = categorize_patches(patches)
    lit = categorize_patches(patches, rule="literal")
    assert set(part) <= set(PATCH_CATEGORIES)
    defined = lit != "unassigned"
    np.testing.assert_array_equal(part[defined], lit[defined])


def test_central_region_labels():
    m = np.zeros((3, 96, 96), np.uint8)
    m[0, 47, 47] = 2  # in the centre
    m[1, 10, 10] = 2  # only in the context border
    m[2, 40:50, 40:50] = 1  # ¬C in the centre
    np.testing.assert_array_equal(central_region_labels(m, 32), [True, False, False])
    with pytest.raises(ValueError, match="center_size"):
        central_region_labels(m, 33)


def test_bad_input():
    with pytest.raises(ValueError, match="patch_size"):
        extract_patches(np.zeros((10, 10)), 11)
    with pytest.raises(ValueError, match="stride"):
        extract_patches(np.zeros((10, 10)), 4, stride=0)
    with pytest.raises(ValueError, match="mask_patches values"):
        categorize_patches(np.full((1, 4, 4), 3))
    with pytest.raises(ValueError, match="rule"):
        categorize_patches(np.zeros((1, 4, 4), np.uint8), rule="majority")
    with pytest.raises(ValueError, match="image"):
        extract_patches(np.zeros(10), 2)
