"""Units of chapter 4b: threshold-matched precision, prior correction, degraded phantom patches, error counts,
the per-trial table and the computed checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medeval.experiments import evaluation_measures as em
from medeval.metrics import curves as C


def test_precision_at_recall_vertices_and_interpolation():
    y, s = em.ranked_scores([1, 0, 1, 0, 0])
    roc = C.roc_curve(y, s)
    assert em.precision_at_recall(roc, 0.5) == pytest.approx(1.0)  # first positive before any negative
    assert em.precision_at_recall(roc, 1.0) == pytest.approx(2 / 3)  # the first point reaching recall 1
    # recall 0.75 = TP 1.5 lies between the vertices (TP 1, FP 1) and (TP 2, FP 1): FP 1 (Eq. 5.2)
    assert em.precision_at_recall(roc, 0.75) == pytest.approx(1.5 / 2.5)
    assert np.isnan(em.precision_at_recall(roc, 0.0))
    with pytest.raises(ValueError, match="recall"):
        em.precision_at_recall(roc, 1.5)


def test_precision_at_recall_depends_on_the_ranking_only():
    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.2
    s = rng.random(400) + y
    a = em.precision_at_recall(C.roc_curve(y, s), 0.6)
    b = em.precision_at_recall(C.roc_curve(y, em.prior_corrected(s / s.max(), 0.25)), 0.6)
    assert a == pytest.approx(b)


def test_prior_correction():
    s = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    assert np.allclose(em.prior_corrected(s, 0.5, 0.5), s)
    up = em.prior_corrected(s, 0.25, 0.5)  # a model trained on few positives under-calls them: scores rise
    assert np.all(np.diff(up) > 0) and up[2] == pytest.approx(0.75) and up[0] == 0 and up[-1] == 1
    assert np.allclose(em.prior_corrected(up, 0.5, 0.25), s)
    with pytest.raises(ValueError, match="priors"):
        em.prior_corrected(s, 0.0)


def test_degrade_patches_is_fixed_per_seed_and_off_at_zero():
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (5, 8, 8, 3), dtype=np.uint8)
    assert em.degrade_patches(images, stain_jitter=0, pixel_noise=0, seed=3) is images
    a = em.degrade_patches(images, stain_jitter=1.0, pixel_noise=60, seed=3)
    b = em.degrade_patches(images, stain_jitter=1.0, pixel_noise=60, seed=3)
    c = em.degrade_patches(images, stain_jitter=1.0, pixel_noise=60, seed=4)
    assert a.dtype == np.uint8 and a.shape == images.shape
    assert np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(a, images)


def test_error_counts_by_threshold_match_counting_on_the_exact_grid():
    rng = np.random.default_rng(2)
    y = rng.random(300) < 0.3
    s = np.round(rng.random(300), 2)  # scores on the grid itself: 0.35, 0.41 ... included
    runs = [{"distribution": "En", "imbalanced": {"y_true": y, "score_c": s}}]
    counts = em.error_counts_by_threshold(runs, n_thresholds=101)
    t = np.arange(101) / 100
    assert counts.threshold.tolist() == t.tolist()
    assert counts.FP.tolist() == [np.sum(~y & (s >= x)) for x in t]
    assert counts.FN.tolist() == [np.sum(y & (s < x)) for x in t]


def test_a_score_at_a_threshold_is_a_positive_prediction():
    """A positive and a negative both scored 0.35: at t = 0.35 both are predicted positive (FP, FN = 1, 0).
    ``np.linspace(0, 1, 101)`` puts this threshold one ulp above 0.35 and counted FP, FN = 0, 1."""
    runs = [{"distribution": "En", "imbalanced": {"y_true": np.array([True, False]), "score_c": np.r_[0.35, 0.35]}}]
    for n, at in ((101, 35), (21, 7)):  # 0.35 in both grids; linspace(0, 1, 21)[7] is not 0.35 either
        row = em.error_counts_by_threshold(runs, n_thresholds=n).iloc[at]
        assert row.threshold == 0.35 and (row.FP, row.FN) == (1, 0)


def test_ordering_share():
    counts = pd.DataFrame([
        {"model": m, "threshold": t, "FP": fp, "FN": fn}
        for t, (en, ep) in {0.0: ((9, 0), (9, 0)), 0.25: ((3, 5), (8, 1)), 0.5: ((2, 6), (7, 2)),
                            0.75: ((1, 1), (1, 1)), 1.0: ((0, 9), (0, 9))}.items()
        for m, (fp, fn) in (("En", en), ("Ep", ep))])
    assert em.ordering_share(counts) == pytest.approx(1.0)  # t = 0.75 (a tie) and the ends are left out
    counts.loc[(counts.model == "En") & (counts.threshold == 0.5), "FN"] = 1
    assert em.ordering_share(counts) == pytest.approx(0.5)


def _runs(n=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(500) < 0.1
    runs = []
    for d, shift in (("En", -1.0), ("Ep", 1.0)):
        for r in range(n):
            z = 2.0 * y + rng.normal(0, 1, y.size) + shift
            s = 1 / (1 + np.exp(-z))
            runs.append({"distribution": d, "run": r, "imbalanced": {"y_true": y, "score_c": s, "argmax_c": s >= 0.5}})
    return runs


def test_trial_table_columns_and_matched_recall():
    runs = _runs()
    table, extra = em.trial_table(runs)
    assert len(table) == 6 and set(table.model) == {"En", "Ep"}
    for col in ("ROC-AUC", "PR-AUC (Alg. 4-5)", "precision-AUC (PR-T)", "precision at matched recall", "FP at t",
                "precision-AUC (prior-corrected)", "precision at recall < 0.3", "PR-AUC share at recall ≤ 0.3"):
        assert table[col].notna().all(), col
    assert extra["matched_recall"] == pytest.approx(table.loc[table.model == "En", "recall at t"].mean())
    # a pure shift of the scores: fixed thresholds see it, precision at matched recall does not
    en, ep = table[table.model == "En"], table[table.model == "Ep"]
    assert en["precision-AUC (PR-T)"].mean() > ep["precision-AUC (PR-T)"].mean() + 0.05
    assert en["FN at t"].mean() > ep["FN at t"].mean() and ep["FP at t"].mean() > en["FP at t"].mean()
    assert abs(en["precision at matched recall"].mean() - ep["precision at matched recall"].mean()) < 0.1
    band = em.quality_band(table)
    assert band["min"] <= min(band["means"].values()) and isinstance(band["in_band"], bool)


def test_trial_table_recalibrated_columns_move_ep_to_ens_prior():
    table, _ = em.trial_table(_runs())
    en, ep = table[table.model == "En"], table[table.model == "Ep"]
    # En is trained at the common prior: recalibration leaves it where it is
    assert np.allclose(en["precision-AUC (recalibrated)"], en["precision-AUC (PR-T)"], atol=1e-9)
    assert (en["FP at t (recalibrated)"] == en["FP at t"]).all()
    # Ep's odds are divided by 9: fewer FP, more FN at the same threshold
    assert (ep["FP at t (recalibrated)"] <= ep["FP at t"]).all() and (ep["FN at t (recalibrated)"] >= ep["FN at t"]).all()
    assert ep["precision-AUC (recalibrated)"].mean() > ep["precision-AUC (PR-T)"].mean()
    assert set(em.RECALIBRATED_COLUMNS.values()) <= set(table.columns)
    assert em.RECALIBRATION_PRIOR == em.TRAINING_PRIOR["En"]


def test_grid_control_is_random_rankings_of_the_test_set():
    rnd = em.grid_control(30, 270, n_draws=5, seed=1)
    assert len(rnd) == 5 and rnd["PR-AUC (Alg. 4-5)"].between(0, 1).all()
    assert rnd["PR-AUC (Alg. 4-5)"].mean() < 0.3  # no model: about the prevalence 0.1
    assert rnd.equals(em.grid_control(30, 270, n_draws=5, seed=1))


def test_digits_substitution_names_the_data_and_the_model():
    P = em.Params()
    text = em.digits_substitution(P)
    assert "8×8 handwritten digits" in text and f"digit {P.positive_digit} vs rest" in text
    assert "for CIFAR-10" in text and "logistic regression" in text


def test_computed_checks_pass():
    rows = em.table_checks(em.table_5_2(), em.tie_cases())
    assert rows and all(r["passed"] for r in rows)
    assert not any("Small ΔPrec" in r["check"] for r in rows)  # an erratum, not a check
    rows = em.pr_t_checks(_runs(), task="synthetic")
    assert len(rows) == 5 and all(r["passed"] for r in rows)


# ---------------------------------------------------------------------------------------------- the schema (#17)

CHAPTER = "04b-evaluation-measures"


@pytest.mark.parametrize(("overrides", "named"), [
    ({"cifar_weights": "/tmp/w.pt", "cifar_model": "small_cnn"}, ["cifar_weights='/tmp/w.pt', cifar_model=",
                                                                  "resnet50 or resnet18"]),
    ({"slide_size": 100}, ["slide_size=100, patch_size=16", "multiple of patch_size / 2"]),
    ({"cls_central_size": 9}, ["cls_central_size=9, patch_size=16", "even difference"]),
    ({"imbalance": 1000}, ["imbalance=1000", "4 x (imbalance + 1)"]),
    ({"data_source": "real", "patch_size": 64}, ["data_source='real', patch_size=64", "96 px"]),
])
def test_rules_across_fields_refuse_before_any_compute_naming_the_fields(overrides, named):
    from medeval.runtime.params import ParameterError, resolve_params

    with pytest.raises(ParameterError) as err:
        resolve_params(CHAPTER, "smoke", overrides)
    assert all(n in str(err.value) for n in named), str(err.value)


def test_an_odd_patch_size_needs_no_u_net_here():
    """4b trains no U-Net, so chapter 4a's multiple-of-4 rule does not apply (the data configuration is 4a's)."""
    from medeval.runtime.params import resolve_params

    P = resolve_params(CHAPTER, "smoke", {"patch_size": 18, "slide_size": 126, "cls_central_size": 8})
    data, cls = em.phantom_configs(P)
    assert data["patch_size"] == 18 and cls["central_size"] == 8 and "slide_layout" not in data


def test_an_estimate_above_24_gib_is_refused_naming_its_drivers():
    from medeval.runtime.params import GIB, PreflightError, preflight, resolve_params

    P = resolve_params(CHAPTER, "smoke", {"slide_size": 8192, "n_train_slides": 30, "cls_test_stride": 4})
    estimate = P.resource_estimate()
    assert estimate.peak_bytes > 24 * GIB
    with pytest.raises(PreflightError) as err:
        preflight(CHAPTER, P, available=24 * GIB)
    for name in ("slide_size", "n_train_slides", "cls_test_stride"):
        assert f"{name}=" in str(err.value) and name in estimate.drivers
    assert resolve_params(CHAPTER, "default").resource_estimate().peak_bytes < 4 * GIB


def test_the_per_process_data_terms_match_a_measurement(peak_growth):
    """Each process that runs histology trials builds its slides, patch tables and degraded copies: the estimate's
    terms against the peak resident memory a fresh process adds while it builds them, where they dominate."""
    overrides = {"slide_size": 1536, "n_train_slides": 2, "n_test_slides": 1, "cls_extra_test_slides": 1,
                 "patch_size": 32, "cls_central_size": 16, "cls_test_stride": 16, "max_workers": 1}
    measured = peak_growth(
        "keys = [json.dumps(v, sort_keys=True) for v in (*em.phantom_configs(P), em.degradation_config(P))]\n"
        "em._degraded('train', *keys); em._degraded('test', *keys)",
        setup="import json\nfrom medeval.runtime.params import resolve_params\n"
              "from medeval.experiments import evaluation_measures as em\n"
              f"P = resolve_params({CHAPTER!r}, 'smoke', {overrides!r})")
    from medeval.runtime.params import resolve_params

    terms = resolve_params(CHAPTER, "smoke", overrides).resource_estimate().terms
    estimated = terms["slides"] + terms["patch_tables"] + terms["degraded_patches"]
    assert 0.5 <= measured / estimated <= 2, (measured / 2**20, estimated / 2**20)


def test_tie_case_curves_are_the_curves_of_the_tie_table():
    table = em.tie_cases(101).set_index("case")
    for name in em.TIE_CASES:
        curves = em.tie_case_curves(name, 101)
        assert curves["recall"].size == curves["precision"].size == 101
        assert curves["precision"][0] == pytest.approx(table.loc[name, "prec at recall 0 (Alg. 3)"])
        assert curves["precision"][-1] == pytest.approx(table.loc[name, "prec at recall 1 (Alg. 3)"])
        assert curves["pr"].precision[-1] == pytest.approx(table.loc[name, "plain PR endpoint"])
        assert (curves["roc"].fpr[-1], curves["roc"].tpr[-1]) == (1, 1)
    roc = em.tie_case_curves("Example 1, model 1", 5)["roc"]
    recall, precision = em.algorithm3_pr_points(roc, 5)
    assert recall.tolist() == [0, 0.25, 0.5, 0.75, 1] and precision[-1] == pytest.approx(2 / 3)
    np.testing.assert_array_equal(precision, C.interpolated_pr_points(roc, n_points=5)[1])


@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_the_time_estimate_is_within_a_factor_two_of_the_recorded_wall_time(profile, recorded_time_within):
    """``Params.time_estimate`` against the wall time that results/timings.json records for the profile on the
    2-core reference machine (no time is measured here). A third run, measured when the model was made
    (default with slide_size=512, n_train_slides=10, n_trials=10, cls_epochs=8, cls_base_channels=12,
    cls_unit_cap=300): 49 s estimated, 55.6 s measured."""
    from medeval.runtime.params import resolve_params

    assert resolve_params(CHAPTER, profile, {"device": "cuda"}).resource_estimate().seconds is None
    recorded_time_within(CHAPTER, profile, resolve_params(CHAPTER, profile).resource_estimate().seconds)


def test_run_returns_results_whose_fields_feed_the_claims():
    """``run`` on a tiny parameter set (the smoke profile, one process, two digits trial-models per model, no cache):
    every task of both roles, and ``claim_inputs`` / ``CLAIMS.decide`` take the result as it is."""
    from medeval.experiments import evaluation_measures_claims as emc
    from medeval.runtime.params import resolve_params

    P = resolve_params(CHAPTER, "smoke", {"max_workers": 1, "n_digit_trials": 2})
    results = em.run(P, cache_dir=None)
    assert isinstance(results, em.Results) and list(results.tasks) == list(em.TASK_ROLES)
    for task in results.tasks.values():
        assert isinstance(task, em.TaskResults) and set(task.trials.model) == {"En", "Ep"}
        assert set(task.first_trial_pr) == {"En", "Ep"} and len(task.random_rankings) == 40
    assert results.tasks["histology"].fig55 is not None and results.tasks["cifar"].fig55 is None
    assert list(results.overview.task) == ["phantom patches", "digits"]
    inputs = emc.claim_inputs(results, P)
    assert inputs.histology.fig55_trials is results.tasks["histology"].fig55.trials
    claims = emc.CLAIMS.decide(inputs, scale="smoke")
    assert [c.id for c in claims.claims] == [s.id for s in emc.CLAIMS.specs]
    assert len(claims.checks) == len(inputs.computed_checks) + 2 * 6 and len(claims.errata) == 1
