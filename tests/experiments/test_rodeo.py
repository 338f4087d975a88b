"""Tests of medeval.experiments.rodeo (chapter 2's pure experiment functions)."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from medeval.experiments import rodeo as R
from medeval.metrics.detection import ImageBoxes


@pytest.fixture(scope="module")
def oracle_targets():
    return R.load_oracle_targets(0.5, 0)


def test_box_list_and_oracle_split(oracle_targets):
    s = R.box_list_summary()
    assert s["n_boxes"] == 984 and s["n_images"] == 880
    assert sum(s["boxes_per_class"].values()) == 984
    targets, table = oracle_targets
    assert 400 <= targets.n_images <= 480 and len(targets) == len(table)
    assert (targets.boxes >= 0).all() and (targets.boxes[:, :2] + targets.boxes[:, 2:] <= 1.0 + 1e-9).all()
    assert set(np.unique(targets.image_ids)) == set(range(targets.n_images))  # every test image has a box


def test_perfect_oracle_scores(oracle_targets):
    targets, _ = oracle_targets
    m = R.evaluate_detections(R.oracle_predictions(targets, 0), targets)
    assert m["RoDeO"] == pytest.approx(1.000001, abs=1e-9)
    assert m["RoDeO loc"] == m["RoDeO cls"] == 1.0
    for k in ("acc@10", "acc@30", "acc@50", "AP@10", "AP@30", "AP@50", "mAP"):
        assert m[k] == pytest.approx(1.0), k


def test_underprediction_raises_acc_but_lowers_rodeo_and_ap(oracle_targets):
    """Fig. 4 and Sec. 5: with σ_pos = 0.5, dropping boxes raises acc@50 (TNs) and lowers AP@50, RoDeO."""
    targets, _ = oracle_targets
    lo = R.evaluate_detections(R.oracle_predictions(targets, 1, sigma_pos=0.5), targets)
    hi = R.evaluate_detections(R.oracle_predictions(targets, 1, sigma_pos=0.5, p_underpred=0.8), targets)
    assert hi["acc@50"] > lo["acc@50"]
    assert hi["RoDeO"] < lo["RoDeO"] and hi["AP@50"] < lo["AP@50"]


def test_run_oracle_figure_records(oracle_targets):
    params = R.Params(n_runs=2, p_values=[0, 1.0])
    rows = R.run_oracle_figure("fig11", params.model_dump(mode="json"), seed=0)
    assert len(rows) == 2 * 2
    assert {"figure", "setting", "run", "p_confuse", "sigma_pos", "RoDeO", "mAP"} <= set(rows[0])
    summary = R.summarise_runs(rows, ["p_confuse"])
    assert set(summary["metric"]) >= {"RoDeO", "acc@30"} and (summary["min"] <= summary["max"]).all()
    for fig in R.FIGURES:
        assert R.figure_settings(fig, R.Params())
    with pytest.raises(ValueError, match="figure"):
        R.figure_settings("fig6", R.Params())


def test_analytic_curves_match_the_monte_carlo_values():
    a = R.analytic_curves(np.array([0.25, 0.5, 1.0]))
    np.testing.assert_allclose(a["loc_position_noise"], [0.9203, 0.7426, 0.4191], atol=1e-4)
    np.testing.assert_allclose(a["loc_position_bias"], [2**-0.0625, 2**-0.25, 0.5])
    np.testing.assert_allclose(
        R.shape_noise_expectation([0.25, 0.5, 1.0]), [0.6946, 0.5073, 0.2982], atol=5e-4
    )  # MC: 2e6 draws; our earlier Monte-Carlo estimate with rodeometric (N=4000, K=8): 0.694, 0.510, 0.301
    # Monte Carlo check of the size-noise expectation
    rng = np.random.default_rng(0)
    s = np.exp(0.5 * rng.standard_normal(200_000))
    assert R.analytic_curves(np.array([0.5]))["shape_size_noise"][0] == pytest.approx(
        np.mean(np.minimum(s, 1 / s) ** 2), abs=3e-3
    )
    assert R.confusion_accuracy(np.array([0.0]))[0] == 1.0
    np.testing.assert_allclose(R.classification_closed_form([1 / 8, 0.5, 1.0]), [0.0, 3 / 7, 1.0])


def test_shift_map_geometry():
    m = R.shift_map(5, 1.0)  # offsets -1, -0.5, 0, 0.5, 1
    assert m["RoDeO loc"][2, 2] == 1.0 and m["IoU"][2, 2] == 1.0 and m["AP@50"][2, 2] == 1.0
    assert m["RoDeO loc"][2, 4] == pytest.approx(0.5) and m["IoU"][2, 4] == 0.0 and m["mAP"][2, 4] == 0.0
    assert m["IoU"][2, 3] == pytest.approx(1 / 3) and m["mAP"][2, 3] == pytest.approx(3 / 7)
    np.testing.assert_allclose(m["RoDeO loc"], m["RoDeO loc"].T)


def test_cam_boxes_connected_components_and_joint_normalisation():
    cams = np.zeros((1, 2, 20, 20))
    cams[0, 0, 2:6, 3:9] = 10.0  # strong blob of class 0 -> box at both thresholds
    cams[0, 0, 12:14, 12:14] = 3.0  # weaker blob: above 60/255 of the max only
    cams[0, 1, 10:12, 1:4] = 1.0  # class 1 weak relative to the image maximum: below 60
    b = R.cam_boxes(cams, (60, 180), scores=np.array([[0.9, 0.2]]))
    rows = sorted(map(tuple, np.column_stack([b.boxes, b.labels]).astype(int).tolist()))
    assert rows == [(3, 2, 6, 4, 0), (3, 2, 6, 4, 0), (12, 12, 2, 2, 0)]
    assert b.scores.tolist() == [0.9, 0.9, 0.9]
    with pytest.raises(ValueError, match="cams"):
        R.cam_boxes(np.zeros((2, 20, 20)))


def test_paper_table1_consistency_finds_atelectasis():
    check = R.paper_table1_consistency()
    assert check.loc[~check["consistent"], "class"].tolist() == ["Atelectasis"]
    atel = check.set_index("class").loc["Atelectasis"]
    assert atel["total_recomputed"] == pytest.approx(12.0, abs=0.05)
    totals = R.paper_total_rows()
    assert totals["acc@30_mean_of_classes"] == pytest.approx(55.1, abs=0.01)
    assert totals["mAP_mean_of_classes"] == pytest.approx(5.8, abs=0.02)
    assert totals["classification_mean_of_classes"] == pytest.approx(21.7, abs=0.05)  # != 19.8: pooled


def test_detector_table_and_bootstrap_on_oracle(oracle_targets):
    targets, _ = oracle_targets
    preds = R.oracle_predictions(targets, 3, sigma_pos=0.3)
    scored = ImageBoxes(
        preds.boxes,
        preds.labels,
        preds.image_ids,
        preds.n_images,
        preds.box_format,
        np.random.default_rng(0).random(len(preds)),
    )
    table = R.detector_table(scored, targets)
    assert table["class"].tolist() == [*R.CLASSES, "Total"]
    check = R.paper_table1_consistency(table, tolerance=1e-3)
    assert check["consistent"].all()  # our totals are the harmonic means of our sub-scores
    ci = R.bootstrap_table(scored, targets, 5, 0)
    assert (ci["low"] <= ci["high"]).all() and len(ci) == 9 * 6


def test_params_validation():
    with pytest.raises(pydantic.ValidationError):
        R.Params(n_runs=0)
    with pytest.raises(pydantic.ValidationError):
        R.Params(p_values=[0, 1.5])
    with pytest.raises(pydantic.ValidationError):
        R.Params(unknown=1)


def test_full_profile_without_images_names_the_dataset(monkeypatch, tmp_path):
    from medeval.data.manifest import DatasetUnavailableError

    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    with pytest.raises(DatasetUnavailableError, match="chestxray14-images"):
        R.chestxray14_detection_data(R.Params(detector_data="chestxray14"), 0)


def test_oracle_cells_literal_eq8_and_fig6(oracle_targets):
    targets, _ = oracle_targets
    cells = R.oracle_target_cells(targets)
    assert cells["n_cells"] == 8 * targets.n_images and targets.n_images <= cells["n_occupied_cells"] <= len(targets)
    loc = R.literal_eq8_localization(targets, [0.0, 1.0], 0)
    assert loc[0.0] == pytest.approx(1.0) and loc[1.0] < 0.01  # |Δp|/w² box widths: far off for boxes of ~0.24
    curves = R.fig6_curves(max_factor=4.0, n=7)
    size = curves["size"]
    np.testing.assert_allclose(size["cIoU"], 1 / size["factor"] ** 2)  # cIoU of a uniform scale f: 1/f²
    np.testing.assert_allclose(size["Hausdorff similarity"], 2 - size["factor"])  # d_H = (f − 1)·half-diagonal
    np.testing.assert_allclose(curves["aspect"]["cIoU"], 1 / (2 * curves["aspect"]["factor"] - 1))
    assert R.hausdorff_distance_centred(1, 1, 3, 1) == pytest.approx(1.0)


def test_bootstrap_samples_and_intervals(oracle_targets):
    targets, _ = oracle_targets
    preds = R.oracle_predictions(targets, 3, sigma_pos=0.3)
    samples = R.bootstrap_samples(preds, targets, 3, 0)
    assert sorted(samples["resample"].unique()) == [0, 1, 2] and len(samples) == 3 * 9
    assert {"tp@30", "tn@30"} <= set(samples.columns)
    table = R.detector_table(preds, targets)
    t = table.set_index("class")
    acc = (t["tp@30"] + t["tn@30"]) / t[["tp@30", "fp@30", "fn@30", "tn@30"]].sum(axis=1) * 100
    np.testing.assert_allclose(acc.drop("Total"), t["acc@30"].drop("Total"))  # the counts behind acc@30
    ci = R.bootstrap_intervals(samples)
    assert (ci["low"] <= ci["high"]).all()


def test_run_returns_results_that_feed_the_claims(tmp_path):
    """``run`` on a tiny parameter set: a :class:`Results` whose fields feed ``claim_inputs``, from which every
    registered claim, the checks and the errata are decided; the oracle grid is cached in its own sub-folder."""
    from medeval.experiments import rodeo_claims as RC

    P = R.Params(n_runs=1, oracle_test_fraction=0.1, sigma_pos=[0, 0.5, 1.0], sigma_shape=[0, 0.5],
                 p_values=[0, 0.5, 1.0], expected_duplicates=[0, 1, 3], position_bias=[0, 1.0], sigma_size=[0, 0.5],
                 sigma_ratio=[0, 0.5], random_box_sizes=[0.1, 0.25], shift_grid_size=5, n_train=32, n_test=16,
                 image_size=64, epochs=1, n_bootstrap=2, max_workers=1, device="cpu")
    res = R.run(P, cache_dir=tmp_path)
    assert isinstance(res, R.Results) and (tmp_path / "oracle-figures").is_dir()
    assert set(res.oracle) == set(R.FIGURES) and res.oracle_runs == {f: len(v) for f, v in res.oracle.items()}
    assert res.empty_cell_share == pytest.approx(1 - res.cells["n_occupied_cells"] / res.cells["n_cells"])
    assert res.detector_quality["floor_on_mean"] == R.AUC_FLOOR and res.table1["class"].tolist()[-1] == "Total"
    assert res.table1_ci is not None and not (res.table1_ci["low"] > res.table1_ci["high"]).any()  # NaN: no box
    assert res.paper_table1_check.loc[~res.paper_table1_check["consistent"], "class"].tolist() == ["Atelectasis"]
    cl = RC.CLAIMS.decide(RC.claim_inputs(res, P), scale="test")
    assert [c.id for c in cl.claims] == [s.id for s in RC.CLAIMS.specs] and cl.checks and cl.errata
    assert not [c.id for c in cl.claims if "missing" in c.decision.reason]  # every input reached its claims


# ---- the schema's rules, pre-flight and resource estimate (issue #17) ------------------------------------------
def _refusal(**overrides) -> str:
    from medeval.runtime.params import ParameterError, resolve_params

    with pytest.raises(ParameterError) as err:
        resolve_params("02-rodeo", "smoke", overrides)
    return str(err.value)


def test_rules_and_distinct_lists_refuse_before_any_compute():
    msg = _refusal(detector_data="chestxray14", n_train=100_000)
    assert "detector_data='chestxray14', n_train=100000" in msg and "at most 96,182" in msg
    for field, value in (("sigma_pos", [0.5, 0.5]), ("p_values", [0, 0.0, 1]), ("cam_thresholds", [60, 60]),
                         ("random_box_sizes", [0.1, 0.1])):
        msg = _refusal(**{field: value})
        assert f"parameter {field!r}" in msg and "distinct" in msg and "(Annotated)" not in msg
    assert "sigma_pos" in _refusal(sigma_pos=[0, 20])


def test_light_schema_constants_agree_with_the_data():
    from medeval.data.chestxray14 import load_boxes, load_labels, patient_id_of
    from medeval.experiments import rodeo_params as rp

    assert R.Params is rp.Params and len(R.CLASSES) == rp.N_CLASSES and len(R.FIGURES) == rp.N_FIGURES
    labels, boxes = load_labels(), load_boxes()
    boxed = np.array(sorted(boxes["image_index"].unique()))
    assert len(boxed) == rp.BOXED_IMAGES
    assert (~labels["patient_id"].isin(set(patient_id_of(boxed).tolist()))).sum() == rp.CHESTXRAY14_TRAIN_POOL


def test_fig9_keeps_every_ratio_level_and_the_origin_once():
    settings = R.figure_settings("fig9", R.Params(sigma_size=[0.25, 1.0], sigma_ratio=[0.5, 0, 1.5]))
    ratio = [s["sigma_ratio"] for s in settings if s["sigma_size"] == 0.0]
    assert sorted(ratio) == [0.0, 0.5, 1.5]  # the first entry is not dropped when it is not 0
    settings = R.figure_settings("fig9", R.Params(sigma_size=[0, 1.0], sigma_ratio=[0, 0.5]))
    assert [(s["sigma_size"], s["sigma_ratio"]) for s in settings] == [(0, 0), (1.0, 0), (0, 0.5)]


def test_an_estimate_above_the_machine_is_refused_naming_its_drivers():
    from medeval.runtime.params import GIB, PreflightError, preflight, resolve_params

    P = resolve_params("02-rodeo", "smoke", {"n_train": 200_000, "n_test": 50_000, "image_size": 512})
    assert P.resource_estimate().peak_bytes > 244 * GIB
    with pytest.raises(PreflightError, match="exceeds the 24.00 GiB available") as err:
        preflight("02-rodeo", P, available=24 * GIB)
    assert all(f in str(err.value) for f in ("n_train=200000", "image_size=512", "n_test=50000"))
    cams = resolve_params("02-rodeo", "smoke", {"n_train": 64, "n_test": 50_000, "image_size": 512})
    with pytest.raises(PreflightError, match="n_test=50000, image_size=512"):
        preflight("02-rodeo", cams, available=24 * GIB)
    preflight("02-rodeo", resolve_params("02-rodeo", "default"), available=24 * GIB)


RODEO_SETUP = ("import numpy, scipy.ndimage\nfrom medeval.experiments import rodeo as R\n"
               "import medeval.data.phantoms.chest, medeval.data.splits, medeval.data.chestxray14")

def test_the_data_terms_of_the_estimate_match_measurements(peak_growth):
    """The phantoms of the detector and the class activation maps of its test images, each measured in a fresh
    process (peak resident memory beyond what it held before) against its term of the estimate."""
    P = R.Params(n_train=800, n_test=400, image_size=128)
    measured = peak_growth("R.phantom_detection_data(R.Params(n_train=800, n_test=400, image_size=128), 0)",
                           setup=RODEO_SETUP)
    estimated = P.resource_estimate().terms["detector data"]
    assert 0.5 <= measured / estimated <= 2, (measured / 2**20, estimated / 2**20)
    n, side = 40, 128
    blob = f"g = numpy.exp(-numpy.linspace(-2, 2, {side}) ** 2); g = g[:, None] * g[None, :]\n"
    measured = peak_growth(blob + f"cams = numpy.broadcast_to(g, ({n}, 8, {side}, {side})).astype(numpy.float32)\n"
                           f"R.cam_boxes(cams, [60, 180], scores=numpy.ones(({n}, 8)))", setup=RODEO_SETUP)
    estimated = P.cam_bytes * n * side**2
    assert 0.5 <= measured / estimated <= 2, (measured / 2**20, estimated / 2**20)


@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_the_time_estimate_is_within_a_factor_two_of_the_recorded_wall_time(profile, recorded_time_within):
    """``Params.time_estimate`` against the wall time that results/timings.json records for the profile on the
    2-core reference machine (no time is measured here), with its count of oracle settings kept equal to the
    code's. Two more runs, measured when the model was made (smoke with n_runs=30, n_bootstrap=300, epochs=3
    and image_size=128, n_train=1000, n_test=500, oracle_test_fraction=0.3; image_size=96, n_train=2000,
    n_test=400, batch_size=32): 56 s and 52 s estimated, 71.6 s and 47.5 s measured."""
    from medeval.runtime.params import resolve_params

    P = resolve_params("02-rodeo", profile)
    assert P.oracle_settings() == {f: len(R.figure_settings(f, P)) for f in R.FIGURES}
    assert resolve_params("02-rodeo", profile, {"device": "cuda"}).resource_estimate().seconds is None
    recorded_time_within("02-rodeo", profile, P.resource_estimate().seconds)
