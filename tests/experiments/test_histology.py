"""Units of chapter 4's experiments: sliding-window stitching, method-2 scores, tables, digits En/Ep."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from medeval.experiments import evaluation_measures as em
from medeval.experiments import histology as H


class PixelwiseModel(torch.nn.Module):
    """A 1x1 convolution: each output pixel depends only on its input pixel, so stitching must be exact."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 3, 1)

    def forward(self, x):
        return self.conv(x) * 5


def test_stitched_probabilities_equal_whole_image_inference():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8)
    model = PixelwiseModel().eval()
    prob_map, patch_scores = H.stitched_probabilities(model, image, 16, "cpu")
    with torch.no_grad():
        x = torch.as_tensor(H._to_tensor_images(image[None]))
        direct = torch.softmax(model(x), 1)[0].numpy()
    np.testing.assert_allclose(prob_map, direct, atol=1e-5)
    # method 2: one score vector per central 8x8 tile, the class-wise max of that tile
    assert patch_scores.shape == (6 * 8, 3)
    tiles = direct.reshape(3, 6, 8, 8, 8).max(axis=(2, 4)).reshape(3, -1).T
    np.testing.assert_allclose(patch_scores, tiles, atol=1e-5)


def test_centre_truth_marks_tiles_with_cancer():
    mask = np.zeros((32, 32), dtype=np.uint8)
    mask[3, 20] = 2
    mask[20, 3] = 1
    truth = H._centre_truth(mask, 8).reshape(4, 4)
    assert truth.sum() == 1 and truth[0, 2]


def test_argmax_precision_policy():
    assert H.argmax_precision([1, 0, 1], [1, 1, 0]) == pytest.approx(0.5)
    assert np.isnan(H.argmax_precision([1, 0], [0, 0]))


def test_table_5_2_flags_only_the_small_delta_prec():
    t = em.table_5_2().set_index("test set")
    assert t.loc["Large", "erratum"] == "none"
    assert t.loc["Small", "erratum"].startswith("ΔPrec")
    assert t.loc["Small", "ΔPrec"] == pytest.approx(0.1373, abs=1e-4)


def test_tie_cases_table():
    t = em.tie_cases().set_index("case")
    assert t.loc["Example 1, model 1", "prec at recall 1 (Alg. 3)"] == pytest.approx(2 / 3)
    assert t.loc["Example 1, model 1", "plain PR endpoint"] == pytest.approx(2 / 5)
    assert t.loc["Case 1: start tie", "prec at recall 0 (Alg. 3)"] == 0


def test_digits_en_ep_composition_and_prior_shift():
    en = em.digits_run(distribution="En", run=0, positive_digit=8, seed=0, test_fraction=0.5)
    ep = em.digits_run(distribution="Ep", run=0, positive_digit=8, seed=0, test_fraction=0.5)
    assert en["n_neg"] == 3 * en["unit"] and en["n_pos"] == en["unit"]
    assert ep["n_pos"] == 3 * ep["unit"] and ep["train_size"] == round(0.8 * 4 * ep["unit"])
    np.testing.assert_array_equal(en["imbalanced"]["y_true"], ep["imbalanced"]["y_true"])
    # the positive-biased model predicts more positives (higher recall, more FP)
    assert ep["imbalanced"]["argmax_c"].sum() > en["imbalanced"]["argmax_c"].sum()
    with pytest.raises(ValueError, match="distribution"):
        em.digits_run(distribution="E2.a", run=0, positive_digit=8, seed=0, test_fraction=0.5)


def test_camelyon16_extraction_demo_is_the_data_layers_extraction(tmp_path):
    from medeval.data import camelyon16 as c16
    from medeval.data.phantoms.formats import write_camelyon16_like

    demo = H.camelyon16_extraction_demo(3, height=512, width=768)
    g = demo["geometry"]
    assert g == c16.PatchGeometry(level=2, patch_size=24, stride=8, central_size=8)
    written = write_camelyon16_like(tmp_path, n_slides=1, height=512, width=768, seed=3)[0]
    direct = c16.extract_slide_patches(written["path"], written["annotation"], g)
    p = demo["patches"]
    assert (p.otsu, p.n_positions, p.level_size) == (direct.otsu, direct.n_positions, direct.level_size)
    for field in ("x", "y", "label"):
        np.testing.assert_array_equal(getattr(p, field), getattr(direct, field))
    assert p.label.any() and demo["level"].shape == (*p.level_size[::-1], 3)
    assert demo["grey"].shape == demo["level"].shape[:2]
    kept = ~np.isnan(demo["label_map"])
    assert kept.sum() == p.x.size and demo["label_map"][kept].sum() == p.label.sum()
