"""Chapter 4a's units: the phantom's difficulty calibration, the data configuration, the single study grid and the
per-run tables the claims are built from."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medeval.data.phantoms.slide import generate_slide, slide_layout
from medeval.experiments import class_distribution as cd
from medeval.experiments import histology as H


def _germinal_pixels(slide):
    """Pixels that are germinal centres: ¬C pixels inside a germinal blob of the layout."""
    from medeval.data.phantoms.slide import _blob_inside

    h, w = slide.mask.shape
    rows = np.arange(h, dtype=float)[:, None]
    cols = np.arange(w, dtype=float)[None, :]
    inside = np.zeros((h, w), bool)
    for b in slide.layout.germinal_centres:
        _blob_inside(b, slide.layout.seed, rows, cols, inside)
    return inside & (slide.mask == 1)


def test_germinal_similarity_zero_is_the_plain_phantom_and_one_looks_like_tumour():
    plain = generate_slide(256, 256, seed=3)
    same = generate_slide(256, 256, seed=3, germinal_similarity=0.0)
    np.testing.assert_array_equal(plain.image, same.image)
    like = generate_slide(256, 256, seed=3, germinal_similarity=1.0, germinal_fraction=0.5)
    base = generate_slide(256, 256, seed=3, germinal_fraction=0.5)
    np.testing.assert_array_equal(like.mask, base.mask)  # the layout and the labels do not move
    g = _germinal_pixels(base)
    assert g.sum() > 100
    tumour = like.image[like.mask == 2].mean(0)
    far = np.abs(base.image[g].mean(0) - tumour).sum()
    near = np.abs(like.image[g].mean(0) - tumour).sum()
    assert near < far / 3  # germinal centres now have the tumour's colours
    changed = (like.image != base.image).any(-1)
    assert not changed[~g].any()  # no pixel outside the germinal centres changes


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_germinal_similarity_out_of_range_raises(value):
    with pytest.raises(ValueError, match="germinal_similarity"):
        slide_layout(64, 64, germinal_similarity=value)


def test_data_config_carries_the_phantom_layout_only_when_it_differs():
    plain = cd.data_config(cd.Params())
    assert "slide_layout" not in plain  # chapter 4b (class defaults) keeps its cache keys
    calibrated = cd.data_config(cd.Params(germinal_similarity=0.9, germinal_fraction=0.5))
    assert calibrated["slide_layout"] == {"germinal_similarity": 0.9, "germinal_fraction": 0.5}
    assert H.slide_layout_key(calibrated) == (("germinal_fraction", 0.5), ("germinal_similarity", 0.9))
    small = {**calibrated, "n_train_slides": 1, "n_test_slides": 1, "slide_size": 64}
    train, _ = H.train_test_slides(small)
    expected = generate_slide(64, 64, seed=small["seed"] * 10_000, germinal_similarity=0.9, germinal_fraction=0.5)
    np.testing.assert_array_equal(train.images[0], expected.image)


def test_default_profile_is_calibrated_and_4b_shared_fields_are_untouched():
    from medeval.runtime.params import resolve_params

    P = resolve_params("04a-class-distribution", "default")
    assert P.germinal_similarity > 0 and P.n_runs >= 2 and P.n_preliminary_runs >= 2
    assert cd.HistologyParams.model_fields.keys().isdisjoint({"germinal_similarity", "germinal_fraction"})


def test_study_grid_holds_every_run_once_largest_first():
    P = cd.Params(n_runs=2, n_preliminary_runs=2, cls_runs=2, slide_size=128, n_train_slides=2, n_test_slides=1,
                  patch_size=16, depth=1, unit_cap=12, cls_central_size=8, cls_extra_test_slides=1)
    grid = cd.study_grid(P)
    studies = pd.Series([g["study"] for g in grid]).value_counts().to_dict()
    assert studies == {"preliminary": 10, "hypotheses": 22, "classification": 6}
    keys = {(g["study"], g["distribution"], g["run"]) for g in grid}
    assert len(keys) == len(grid)
    assert grid[0]["distribution"] in ("Natural", "E1.a", "E1.b")  # a large training set first
    assert {g["task"] for g in grid} == {"segmentation", "classification"}
    with pytest.raises(ValueError, match="task"):
        cd.study_task(task="nope")


def test_run_table_and_preliminary_run_table_columns():
    rng = np.random.default_rng(0)
    y = rng.random(200) < 0.3
    score = np.clip(y * 0.5 + rng.random(200) * 0.6, 0, 1)
    runs = [{"distribution": d, "run": r, "y_true": y, "score_c": score, "argmax_c": score > 0.5}
            for d in ("E2.a", "E2.b") for r in range(2)]
    t = cd.run_table(cd.summarise_runs(runs), test_set="balanced")
    assert list(t.columns[:2]) == ["distribution", "run"] and set(cd.RUN_METRICS) <= set(t.columns)
    assert len(t) == 4 and (t["test_set"] == "balanced").all()
    fp = ((score > 0.5) & ~y).sum() / (~y).sum()
    assert t["argmax_fpr"].iloc[0] == pytest.approx(fp)
    m1 = {16: {c: {"recall": 0.5, "precision": 0.4, "f_measure": 0.44, "n_undefined_recall": 0,
                   "n_undefined_precision": 0} for c in ("O", "notC", "C")}}
    pre = cd.preliminary_run_table([{**runs[0], "distribution": "Natural", "method1": m1}])
    assert set(pre.columns) == {"distribution", "run", "e", "class", "R", "P", "F", "roc_auc"}
    assert len(pre) == 3 and 0.5 < pre["roc_auc"].iloc[0] <= 1


def test_quality_band_reports_ranges_and_trained_runs():
    hyp = pd.DataFrame({"distribution": ["E1.a", "E1.a", "E1.b", "E1.b"], "run": [0, 1, 0, 1],
                        "roc_auc": [0.95, 0.85, 0.97, 0.99], "argmax_precision": [0.8, 0.9, 0.7, 0.75]})
    prelim = pd.DataFrame({"distribution": ["Natural"], "run": [0], "roc_auc": [0.93]})
    cls = hyp.assign(test_set="balanced")
    band = cd.quality_band({"prelim": prelim, "hyp": hyp, "cls": cls}, 0.9)
    assert band["hypotheses"]["roc_auc"] == pytest.approx([0.90, 0.98])
    assert band["hypotheses"]["argmax_precision"] == pytest.approx([0.725, 0.85])
    assert band["hypotheses"]["runs_trained"] == 3 and band["preliminary"]["runs"] == 1
    assert "3 of 4 runs" in cd.quality_band_text(band, 0.9)


def test_f_measure_is_zero_when_the_class_is_never_found():
    assert cd.f_measure_of({"recall": 0.0, "precision": float("nan"), "f_measure": float("nan")}) == 0.0
    assert np.isnan(cd.f_measure_of({"recall": float("nan"), "precision": float("nan"), "f_measure": float("nan")}))
    assert cd.f_measure_of({"recall": 0.5, "precision": 0.5, "f_measure": 0.5}) == 0.5
