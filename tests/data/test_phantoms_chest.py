"""Chest X-ray phantoms: determinism, ground truth, and agreement with the real label/box tables."""

import numpy as np
import pandas as pd
import pytest

from medeval.data.chestxray14 import IMAGE_SIZE, LABELS, load_boxes, load_labels
from medeval.data.phantoms.chest import (
    ChestPhantoms,
    generate_chest_phantoms,
    label_statistics,
    raked_row_weights,
    sample_label_sets,
)


@pytest.fixture(scope="module")
def real_labels():
    return load_labels()[list(LABELS)].to_numpy()


@pytest.fixture(scope="module")
def batch():
    return generate_chest_phantoms(60, 128, seed=11)


def _tight_box(mask):
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return cols[0], rows[0], cols[-1] - cols[0] + 1, rows[-1] - rows[0] + 1


def test_shapes_dtypes_ranges(batch):
    assert isinstance(batch, ChestPhantoms) and len(batch) == 60
    assert batch.images.shape == (60, 128, 128) and batch.images.dtype == np.float32
    assert batch.images.min() >= 0 and batch.images.max() <= 1
    assert batch.labels.shape == (60, 14) and batch.labels.dtype == np.uint8
    assert batch.masks.shape == (60, 128, 128) and batch.masks.dtype == np.uint16
    assert batch.label_names == tuple(LABELS)
    assert batch.patient_id.shape == (60,) and batch.follow_up.shape == (60,)
    assert batch.confounder_mask is None
    assert list(batch.boxes.columns[:6]) == ["image", "finding", "x", "y", "w", "h"]


def test_masks_match_labels_and_boxes_exactly(batch):
    boxes = batch.boxes
    # one box per (image, positive finding), none for negative findings
    expected = {(i, LABELS[k]) for i, k in zip(*np.nonzero(batch.labels), strict=True)}
    assert set(zip(boxes["image"], boxes["finding"], strict=True)) == expected
    assert len(boxes) == len(expected)
    for k, finding in enumerate(LABELS):
        m = batch.class_mask(finding)
        assert (m.reshape(60, -1).any(axis=1) == batch.labels[:, k].astype(bool)).all(), finding
    for row in boxes.itertuples():
        m = batch.class_mask(row.finding)[row.image]
        assert _tight_box(m) == (row.x, row.y, row.w, row.h)
    # the bitmask has no bits beyond the 14 findings
    assert (batch.masks >> 14).max() == 0


def test_deterministic_and_independent_of_n():
    a = generate_chest_phantoms(7, 64, seed=3)
    b = generate_chest_phantoms(7, 64, seed=3)
    c = generate_chest_phantoms(3, 64, seed=3)
    d = generate_chest_phantoms(7, 64, seed=4)
    np.testing.assert_array_equal(a.images, b.images)
    np.testing.assert_array_equal(a.masks, b.masks)
    pd.testing.assert_frame_equal(a.boxes, b.boxes)
    np.testing.assert_array_equal(a.images[:3], c.images)
    np.testing.assert_array_equal(a.labels[:3], c.labels)
    assert not np.array_equal(a.images, d.images)


def test_sample_label_sets_equals_generated_labels(batch):
    np.testing.assert_array_equal(sample_label_sets(60, seed=11), batch.labels)


def test_label_frequencies_match_real_table(real_labels):
    n = 4000
    y = sample_label_sets(n, seed=0)
    p_real = real_labels.mean(axis=0)
    p_hat = y.mean(axis=0)
    se = np.sqrt(p_real * (1 - p_real) / n)
    assert (np.abs(p_hat - p_real) <= 4.5 * se + 1e-9).all(), (p_hat, p_real)
    # labels per image and the most common co-occurrence follow too
    real_stats, ours = label_statistics(real_labels), label_statistics(y)
    k = min(len(real_stats["labels_per_image"]), 4)
    diff = np.abs(ours["labels_per_image"].reindex(range(k), fill_value=0) - real_stats["labels_per_image"][:k])
    assert diff.max() < 0.03
    co_real = real_stats["cooccurrence"].to_numpy()
    co_ours = ours["cooccurrence"].to_numpy()
    iu = np.triu_indices(14, 1)
    assert np.corrcoef(co_real[iu], co_ours[iu])[0, 1] > 0.9


def test_prevalence_override(real_labels):
    w = raked_row_weights(real_labels, {"Cardiomegaly": 0.5, "Effusion": 0.3})
    assert w.sum() == pytest.approx(1.0)
    assert w @ real_labels[:, LABELS.index("Cardiomegaly")] == pytest.approx(0.5, abs=1e-9)
    assert w @ real_labels[:, LABELS.index("Effusion")] == pytest.approx(0.3, abs=1e-9)
    n = 3000
    y = sample_label_sets(n, seed=1, prevalence={"Cardiomegaly": 0.5})
    k = LABELS.index("Cardiomegaly")
    assert abs(y[:, k].mean() - 0.5) < 4 * np.sqrt(0.25 / n)
    # co-occurrence is kept: Effusion is more common among Cardiomegaly images, as in the real table
    real_cond = real_labels[real_labels[:, k] == 1, LABELS.index("Effusion")].mean()
    ours_cond = y[y[:, k] == 1, LABELS.index("Effusion")].mean()
    assert abs(real_cond - ours_cond) < 0.05


def test_findings_subset_zeroes_the_rest():
    p = generate_chest_phantoms(20, 64, seed=2, findings=["Cardiomegaly", "Nodule"], prevalence={"Nodule": 0.5})
    keep = [LABELS.index("Cardiomegaly"), LABELS.index("Nodule")]
    others = np.delete(p.labels, keep, axis=1)
    assert others.sum() == 0
    assert set(p.boxes["finding"]) <= {"Cardiomegaly", "Nodule"}


@pytest.mark.parametrize("size", [64, 512])
def test_extreme_sizes(size):
    p = generate_chest_phantoms(3, size, seed=5, prevalence={"Nodule": 1.0})
    assert p.images.shape == (3, size, size)
    assert p.class_mask("Nodule").reshape(3, -1).any(axis=1).all()


def test_boxes_follow_real_box_distribution():
    n, size = 150, 64
    real = load_boxes()
    for finding in ("Cardiomegaly", "Nodule"):
        p = generate_chest_phantoms(n, size, seed=9, findings=[finding], prevalence={finding: 1.0})
        b = p.boxes
        assert (b["box_source"] == "nih").all()
        r = real[real["finding"] == finding]
        for col_c, col_s, _sz in (("x", "w", "w"), ("y", "h", "h")):
            real_centre = ((r[col_c] + r[col_s] / 2) / IMAGE_SIZE).mean()
            ours_centre = ((b[col_c] + b[col_s] / 2) / size).mean()
            assert abs(real_centre - ours_centre) < 0.05, (finding, col_c)
        if finding == "Nodule":  # lesion size is scaled by 0.6 + 0.4 * difficulty = 1.0 at the default
            real_w = (r["w"] / IMAGE_SIZE).median()
            ours_w = (b["w"] / size).median()
            assert abs(np.log(ours_w / real_w)) < 0.35


def test_difficulty_lowers_lesion_contrast():
    easy = generate_chest_phantoms(30, 64, seed=4, findings=["Mass"], prevalence={"Mass": 1.0}, difficulty=1.0)
    hard = generate_chest_phantoms(30, 64, seed=4, findings=["Mass"], prevalence={"Mass": 1.0}, difficulty=0.3)

    def contrast(p):
        m = p.class_mask("Mass")
        return np.mean([p.images[i][m[i]].mean() - p.images[i][~m[i]].mean() for i in range(len(p))])

    assert contrast(hard) < contrast(easy)
    assert hard.class_mask("Mass").sum() < easy.class_mask("Mass").sum()


@pytest.mark.parametrize("kind", ["marker", "padding"])
def test_confounder_correlation(kind):
    n = 120
    p = generate_chest_phantoms(n, 64, seed=6, prevalence={"Cardiomegaly": 0.5}, confounder=kind,
                                confounder_strength=1.0)
    pos = p.labels[:, LABELS.index("Cardiomegaly")] == 1
    np.testing.assert_array_equal(p.confounder_present, pos)
    assert (p.confounder_mask.reshape(n, -1).any(axis=1) == pos).all()
    if kind == "padding":
        assert (p.images[p.confounder_mask] == 0).all()
    else:
        assert (p.images[p.confounder_mask] > 0.9).all()
    # the masks never claim confounder pixels
    assert not (p.masks.astype(bool) & p.confounder_mask).any()
    # strength s: P(c | pos) = (1 + s) / 2, P(c | neg) = (1 - s) / 2
    q = generate_chest_phantoms(400, 64, seed=7, findings=["Cardiomegaly"], prevalence={"Cardiomegaly": 0.5},
                                confounder=kind, confounder_strength=0.6)
    pos = q.labels[:, LABELS.index("Cardiomegaly")] == 1
    assert abs(q.confounder_present[pos].mean() - 0.8) < 0.1
    assert abs(q.confounder_present[~pos].mean() - 0.2) < 0.1


def test_padding_boxes_still_match_masks():
    p = generate_chest_phantoms(20, 96, seed=8, prevalence={"Effusion": 0.8}, confounder="padding")
    for row in p.boxes.itertuples():
        assert _tight_box(p.class_mask(row.finding)[row.image]) == (row.x, row.y, row.w, row.h)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"image_size": 63}, "image_size"),
        ({"image_size": 513}, "image_size"),
        ({"image_size": 100.0}, "image_size"),
        ({"findings": ["Pneumonitis"]}, "findings"),
        ({"confounder": "ruler"}, "confounder"),
        ({"difficulty": 0.0}, "difficulty"),
        ({"difficulty": 1.5}, "difficulty"),
        ({"prevalence": {"Nodule": 1.5}}, "prevalence"),
        ({"findings": ["Mass"], "prevalence": {"Nodule": 0.5}}, "prevalence"),
        ({"confounder": "marker", "confounder_strength": 2.0}, "confounder_strength"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_input_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        generate_chest_phantoms(2, **{"image_size": 64, **kwargs})


def test_class_mask_unknown_finding(batch):
    with pytest.raises(ValueError, match="finding"):
        batch.class_mask("Pneumonitis")


@pytest.mark.parametrize("finding", LABELS)
def test_every_finding_changes_only_its_mask(finding):
    """Render the same patient with and without the finding: the images differ only inside the mask."""
    from medeval.data.phantoms.chest import _default_boxes, _render_image

    k = LABELS.index(finding)
    for i in range(4):
        with_lesion = np.zeros(14, np.uint8)
        with_lesion[k] = 1
        img1, msk1 = _render_image(64, 64, with_lesion, np.random.default_rng([5, i]),
                                   np.random.default_rng([6, i]), 1.0, _default_boxes())
        img0, msk0 = _render_image(64, 64, np.zeros(14, np.uint8), np.random.default_rng([5, i]),
                                   np.random.default_rng([6, i]), 1.0, _default_boxes())
        lesion = ((msk1 >> k) & 1).astype(bool)
        assert msk0.max() == 0 and lesion.any()
        changed = img1 != img0
        assert not (changed & ~lesion).any(), f"{finding}: {int((changed & ~lesion).sum())} pixels outside the mask"
        assert changed.any()
    p = generate_chest_phantoms(6, 64, seed=12, findings=[finding], prevalence={finding: 1.0})
    assert p.class_mask(finding).reshape(6, -1).any(axis=1).all()
    prior = ("Consolidation", "Edema", "Emphysema", "Fibrosis", "Hernia", "Pleural_Thickening")
    assert (p.boxes["box_source"] == ("prior" if finding in prior else "nih")).all()
