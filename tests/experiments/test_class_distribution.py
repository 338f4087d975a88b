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


def test_ensemble_grid_groups_the_runs_of_each_distribution_and_keeps_every_run_once():
    small = {"n_runs": 5, "n_preliminary_runs": 2, "cls_runs": 2, "slide_size": 128, "n_train_slides": 2,
             "n_test_slides": 1, "patch_size": 16, "depth": 1, "unit_cap": 12, "cls_central_size": 8,
             "cls_extra_test_slides": 1}
    one = cd.study_grid(cd.Params(**small))
    grid = cd.study_grid(cd.Params(**small, ensemble_size=2))
    seg = [g for g in grid if g["study"] != "classification"]
    assert {g["task"] for g in seg} == {"segmentation_ensemble"}
    runs = sorted((g["study"], g["distribution"], r) for g in seg for r in g["runs"])
    assert runs == sorted((g["study"], g["distribution"], g["run"]) for g in one if g["study"] != "classification")
    assert sorted(len(g["runs"]) for g in seg if g["distribution"] == "E3.a") == [1, 2, 2]  # 5 runs in chunks of 2
    assert [g["keep_heatmap_runs"] for g in seg if g["distribution"] == "E3.a" and 0 in g["runs"]] == [[0]]
    cls = [g for g in grid if g["study"] == "classification"]
    assert {g["task"] for g in cls} == {"classification_ensemble"} and all("keep_heatmap_runs" not in g for g in cls)
    assert sorted(len(g["runs"]) for g in cls) == [2, 2, 2]
    assert cd.ensemble_grid(one, 1) is one
    with pytest.raises(ValueError, match="ensemble_size"):
        cd.Params(ensemble_size=0)


def test_runs_trained_as_an_ensemble_equal_the_runs_trained_alone():
    """Under the pinned numerics the chapters run with, a distribution's runs trained together give every result of
    the runs trained one at a time, bit for bit (scores, decisions, method-1 values, loss histories)."""
    import torch

    from medeval.experiments import histology as H

    P = cd.Params(slide_size=128, n_train_slides=2, n_test_slides=1, patch_size=16, depth=1, base_channels=4,
                  epochs=2, unit_cap=12, n_runs=2)
    kw = {"distribution": "E2.b", "data": cd.data_config(P), "model": cd.model_config(P), "tile_sizes": [1, 4],
          "unit_cap": P.unit_cap, "device": "cpu"}
    threads, onednn = torch.get_num_threads(), torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        together = H.segmentation_runs(runs=[0, 1, 2], keep_heatmap_runs=[1], **kw)
        alone = [H.segmentation_run(run=r, keep_heatmap=r == 1, **kw) for r in (0, 1, 2)]
    finally:
        torch.set_num_threads(threads)
        torch.backends.mkldnn.enabled = onednn
    for a, b in zip(alone, together, strict=True):
        assert a.keys() == b.keys() and a["run"] == b["run"]
        for k in a:
            if isinstance(a[k], np.ndarray):
                np.testing.assert_array_equal(a[k], b[k], err_msg=k)
            else:
                assert a[k] == b[k], k
    assert together[1]["heatmap"] is not None and together[0]["heatmap"] is None
    with pytest.raises(ValueError, match="one decision per run"):
        H.segmentation_runs(runs=[0, 1], **{**kw, "model": {**kw["model"], "max_grad_norm": 1.0}})
    cls = {"data": kw["data"], "cls": cd.cls_config(P), "device": "cpu"}
    torch.backends.mkldnn.enabled = False
    try:
        together = H.classification_runs(distribution="E2.c", runs=[0, 1], **cls)
        alone = [H.classification_run(distribution="E2.c", run=r, **cls) for r in (0, 1)]
    finally:
        torch.set_num_threads(threads)
        torch.backends.mkldnn.enabled = onednn
    for a, b in zip(alone, together, strict=True):
        assert a.keys() == b.keys()
        for name in ("balanced", "imbalanced"):
            for k in a[name]:
                np.testing.assert_array_equal(a[name][k], b[name][k], err_msg=f"{name} {k}")


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
    assert set(pre.columns) == {"distribution", "run", "e", "class", "R", "P", "F", "roc_auc", "fp_in_true_tiles"}
    assert len(pre) == 3 and 0.5 < pre["roc_auc"].iloc[0] <= 1
    assert pre["fp_in_true_tiles"].isna().all()  # not recorded: no share is made up
    m1[16]["C"].update(fp_pixels=40, fp_in_true_tiles=30)
    m1[16]["O"].update(fp_pixels=0, fp_in_true_tiles=0)
    pre = cd.preliminary_run_table([{**runs[0], "distribution": "Natural", "method1": m1}]).set_index("class")
    assert pre.loc["C", "fp_in_true_tiles"] == 0.75 and np.isnan(pre.loc["O", "fp_in_true_tiles"])


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


# ---------------------------------------------------------------------------------------------- the schema (#17)

CHAPTER = "04a-class-distribution"


@pytest.mark.parametrize(("overrides", "named"), [
    ({"patch_size": 18, "slide_size": 126, "depth": 1}, ["patch_size=18, depth=1", "multiple of 4"]),
    ({"patch_size": 20, "slide_size": 120, "depth": 3}, ["patch_size=20, depth=3", "multiple of 8"]),
    ({"slide_size": 100}, ["slide_size=100, patch_size=16", "multiple of patch_size / 2"]),
    ({"patch_size": 256}, ["patch_size=256, slide_size=128", "<= slide_size"]),
    ({"evaluation_tile": 3}, ["evaluation_tile=3", "must be one of tile_sizes"]),
    ({"tile_sizes": [1, 4, 256]}, ["tile_sizes=[1, 4, 256], slide_size=128", "too large: [256]"]),
    ({"tile_sizes": [1, 4, 4]}, ["'tile_sizes'", "repeated: [4]"]),
    ({"hypothesis_experiments": ["E1.a", "E1.a"]}, ["'hypothesis_experiments'", "repeated: ['E1.a']"]),
    ({"hypothesis_experiments": ["E1.a", "E9"]}, ["'hypothesis_experiments'", "entry 1", "'E4.c'"]),
    ({"cls_central_size": 9}, ["cls_central_size=9, patch_size=16", "even difference"]),
    ({"data_source": "real", "patch_size": 64}, ["data_source='real', patch_size=64", "96 px"]),
    ({"c16_slides": ["test_001"]}, ["c16_slides=['test_001'], data_source='phantom'", "needs data_source=real"]),
    ({"c16_slides": ["test_001", "test_001"]}, ["'c16_slides'", "repeated: ['test_001']"]),
    ({"cls_imbalanced_test": "auto"}, ["cls_imbalanced_test='auto'", "needs data_source=real"]),
    ({"imbalance": 1000}, ["imbalance=1000", "4 x (imbalance + 1)) = 4004"]),
    ({"cls_test_stride": 32, "slide_size": 96}, ["cls_test_stride=32, slide_size=96", "27 patches"]),
    ({"n_train_slides": 1}, ["n_train_slides=1, slide_size=128, patch_size=16", "225 patches"]),
    ({"preliminary_fraction": 0.005}, ["preliminary_fraction=0.005", "= 4; at least 60"]),
])
def test_rules_across_fields_refuse_before_any_compute_naming_the_fields(overrides, named):
    from medeval.runtime.params import ParameterError, resolve_params

    with pytest.raises(ParameterError) as err:
        resolve_params(CHAPTER, "smoke", overrides)
    assert all(n in str(err.value) for n in named), str(err.value)


def test_the_light_schema_module_agrees_with_the_data_layer():
    from medeval.data import training_sets as ts
    from medeval.experiments import class_distribution_params as cdp

    assert cd.Params is cdp.Params and cd.HistologyParams is cdp.HistologyParams
    assert cdp.HYPOTHESIS_UNITS == {k: d.total_units for k, d in ts.HYPOTHESIS_DISTRIBUTIONS.items()}
    assert cdp.PRELIMINARY_NAMES == tuple(ts.PRELIMINARY_DISTRIBUTIONS)


def test_an_estimate_above_24_gib_is_refused_naming_its_drivers():
    from medeval.runtime.params import GIB, PreflightError, preflight, resolve_params

    P = resolve_params(CHAPTER, "smoke", {"slide_size": 8192, "n_train_slides": 40, "preliminary_fraction": 1.0})
    estimate = P.resource_estimate()
    assert estimate.peak_bytes > 24 * GIB
    with pytest.raises(PreflightError) as err:
        preflight(CHAPTER, P, available=24 * GIB)
    message = str(err.value)
    assert "exceeds the 24.00 GiB available" in message
    for name in ("slide_size", "n_train_slides", "preliminary_fraction"):
        assert f"{name}=" in message and name in estimate.drivers
    # the default and smoke profiles fit a laptop
    assert resolve_params(CHAPTER, "default").resource_estimate().peak_bytes < 4 * GIB


def test_the_slide_and_patch_table_terms_match_a_measurement(peak_growth):
    """The kernel's data terms (slides and patch tables, built before the pool forks) against the peak resident
    memory a fresh process adds while it builds them, at a size where they dominate."""
    overrides = {"slide_size": 1536, "n_train_slides": 2, "n_test_slides": 1, "cls_extra_test_slides": 1,
                 "patch_size": 32, "cls_central_size": 16, "max_workers": 1}
    measured = peak_growth(
        "data = cd.data_config(P)\n"
        "H.train_test_slides(data); H.training_patches(data); H.classification_test_sets(data, cd.cls_config(P))",
        setup="from medeval.runtime.params import resolve_params\n"
              "from medeval.experiments import class_distribution as cd, histology as H\n"
              f"P = resolve_params({CHAPTER!r}, 'smoke', {overrides!r})")
    from medeval.runtime.params import resolve_params

    terms = resolve_params(CHAPTER, "smoke", overrides).resource_estimate().terms
    estimated = terms["slides"] + terms["training_patch_table"] + terms["cls_test_patch_table"]
    assert 0.5 <= measured / estimated <= 2, (measured / 2**20, estimated / 2**20)


def test_distribution_proportions_apply_every_distribution_to_the_patch_counts():
    categories = pd.DataFrame({"category": ["O", "C", "notC", "mixed"], "patches": [800, 60, 90, 40]})
    categories.attrs["unit_used"] = 20
    t = cd.distribution_proportions(categories).set_index("distribution")
    assert list(t.index) == list(cd.TRAINING_DISTRIBUTIONS) == [*cd.PRELIMINARY_DISTRIBUTIONS,
                                                                *cd.HYPOTHESIS_DISTRIBUTIONS]
    shares = [f"π {k}" for k in cd.CATEGORIES]
    np.testing.assert_allclose(t[shares].sum(axis=1), 1)
    assert t.loc["E1.a", "size"] == 9 * 20 and t.loc["E1.a", "π O"] == pytest.approx(1 / 3)
    assert t.loc["E2.b", "π notC"] == pytest.approx(0.75) and t.loc["E2.b", "thesis table"] == "4.6"
    assert t.loc["Natural", "size"] == 990 and t.loc["Natural", "π O"] == pytest.approx(800 / 990)
    assert t.loc["C-biased", "size"] == 100 and t.loc["C-biased", "π O"] == 0


def test_camelyon16_most_tumour_slide_maps_stitch_the_slide_with_most_tumour_patches():
    P = cd.Params()
    stride = cd.camelyon16_geometry(P).stride
    table = pd.DataFrame({"slide": ["a", "a", "b", "b", "b"], "x": np.array([0, 1, 0, 2, 1]) * stride,
                          "y": np.array([0, 0, 1, 1, 0]) * stride, "label": [1, 0, 1, 1, 0]})
    summary = pd.DataFrame({"slide": ["a", "b"], "level_size": [(3 * stride, 2 * stride)] * 2,
                            "positives": [1, 2]})
    maps = cd.camelyon16_most_tumour_slide_maps(table, summary, np.array([0.1, 0.2, 0.3, 0.4, 0.5]), P)
    assert maps["slide"] == "b"
    np.testing.assert_array_equal(maps["truth"], [[np.nan, 0, np.nan], [1, np.nan, 1]])
    np.testing.assert_allclose(maps["score"], [[np.nan, 0.5, np.nan], [0.3, np.nan, 0.4]])


@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_the_time_estimate_is_within_a_factor_two_of_the_recorded_wall_time(profile, recorded_time_within):
    """``Params.time_estimate`` against the wall time that results/timings.json records for the profile on the
    2-core reference machine (no time is measured here). A third run, measured when the model was made
    (default with slide_size=512, n_train_slides=6, n_test_slides=3, base_channels=12, epochs=5, n_runs=2,
    n_preliminary_runs=2, cls_runs=2, cls_epochs=4, unit_cap=80): 69 s estimated, 78.2 s measured."""
    from medeval.runtime.params import resolve_params

    P = resolve_params(CHAPTER, profile)
    assert resolve_params(CHAPTER, profile, {"device": "cuda"}).resource_estimate().seconds is None
    recorded_time_within(CHAPTER, profile, P.resource_estimate().seconds)


def test_display_name_says_what_a_hypothesis_set_favours():
    from medeval.experiments.class_distribution import TRAINING_DISTRIBUTIONS, display_name

    assert display_name("E2.b") == "E2.b (¬C-heavy)" and display_name("E2.c") == "E2.c (C-heavy)"
    assert display_name("E4.a") == "E4.a (balanced)" and display_name("E1.b") == "E1.b (natural)"
    assert display_name("notC-biased") == "¬C-biased" and display_name("Balanced_S") == "Balanced_S"
    assert display_name("Ep") == "Ep"
    # every hypothesis set names what it favours, and no two sets of one experiment read alike
    names = {n: display_name(n) for n in TRAINING_DISTRIBUTIONS if n.startswith("E")}
    assert all(v.endswith(("(balanced)", "(natural)", "-heavy)")) for v in names.values()), names
    for group in ("E1", "E2", "E3", "E4"):
        shown = [v.split(" ", 1)[1] for n, v in names.items() if n.startswith(group)]
        assert len(set(shown)) == len(shown), shown


def test_run_returns_results_whose_fields_feed_the_claims(tmp_path):
    """``run`` on a tiny parameter set (two hypothesis distributions, one-epoch models; ~10 s): a ``Results`` whose
    tables hold every run of the grid, whose fields :func:`~medeval.experiments.class_distribution_claims.claim_inputs`
    turns into the claims' inputs, and on which the registry decides every row in its order."""
    import dataclasses

    from medeval.experiments import class_distribution_claims as cdc

    P = cd.Params(slide_size=128, n_train_slides=2, n_test_slides=1, patch_size=16, depth=1, base_channels=4,
                  epochs=1, unit_cap=4, n_runs=2, n_preliminary_runs=2, hypothesis_experiments=["E1.a", "E1.b"],
                  tile_sizes=[1, 4], evaluation_tile=4, cls_central_size=8, cls_extra_test_slides=0,
                  cls_base_channels=2, cls_n_blocks=1, cls_epochs=1, cls_unit_cap=4, cls_runs=2, max_workers=1)
    results = cd.run(P, cache_dir=tmp_path)
    assert isinstance(results, cd.Results)
    assert all(getattr(results, f.name) is not None for f in dataclasses.fields(results) if f.name != "camelyon16_maps")
    assert len(results.study["preliminary"]) == 5 * 2 and len(results.study["hypotheses"]) == 2 * 2
    assert len(results.tables["hyp"]) == 4 and set(results.tables["cls"]["test_set"]) == {"balanced", "imbalanced"}
    for r in results.study["preliminary"]:  # the false positives behind the sweep's precision, per e and class
        for e, per in r["method1"].items():
            for m in per.values():
                assert 0 <= m["fp_in_true_tiles"] <= m["fp_pixels"] and (e > 1 or m["fp_in_true_tiles"] == 0)
    share = results.tables["prelim"]["fp_in_true_tiles"]
    assert share.notna().any() and share.dropna().between(0, 1).all()
    assert list(results.preliminary_sets["distribution"]) == list(cd.PRELIMINARY_NAMES)
    assert list(results.hypothesis_sets["distribution"]) == ["E1.a", "E1.b"]
    assert results.camelyon16_maps is None and results.camelyon16_demo["patches"].x.size > 0
    assert results.imbalanced_label.startswith(f"1:{results.imbalanced_ratio:.1f} test set")
    gpu = cd.Params(n_runs=7, n_preliminary_runs=6, cls_runs=5)
    inputs = cdc.claim_inputs(results, P, gpu=gpu, scale="tiny")
    assert inputs.prelim is results.tables["prelim"] and inputs.cls is results.tables["cls"]
    assert inputs.category_counts == dict(zip(results.categories["category"], results.categories["patches"],
                                              strict=True))
    assert (inputs.settings.runs_here, inputs.settings.runs_gpu, inputs.settings.prelim_runs_gpu,
            inputs.settings.cls_runs_gpu) == (2, 7, 6, 5)
    claims = cdc.CLAIMS.decide(inputs, scale="tiny")
    assert [c.id for c in claims.claims][:3] == ["t44-c-recall", "t44-c-precision", "t44-c-f"]
    assert len(claims.claims) == 30 and claims.checks and claims.errata
    assert claims.claims[[c.id for c in claims.claims].index("h2-e3")].verdict == "[n/a]"  # E3 was not run
    assert any(tmp_path.iterdir())  # the runs were cached under cache_dir
