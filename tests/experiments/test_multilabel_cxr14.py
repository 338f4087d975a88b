"""Tests of medeval.experiments.multilabel_cxr14 (chapter 5): tables on the real label table, the toy
example, the split experiment, patient-aware splits, the bootstrap/EVE/threshold evaluation and the CNN."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medeval.experiments import multilabel_cxr14 as ex
from medeval.metrics import multilabel as ml


@pytest.fixture(scope="module")
def real():
    return ex.load_label_matrix()


def test_label_tables_on_the_real_table(real):
    _, y, labels = real
    freq = ex.label_frequency_table(y, labels)
    assert list(freq["label"][:3]) == ["Infiltration", "Effusion", "Atelectasis"]
    assert freq["count"].iloc[-1] == 227 and freq["label"].iloc[-1] == "Hernia"
    assert freq["proportion"].iloc[0] == pytest.approx(19894 / 112120)
    counts = ex.label_count_table(y)
    assert list(counts["count"]) == [60361, 30963, 14306, 4856, 1247, 301, 67, 16, 1, 2]
    assert counts["proportion"].sum() == pytest.approx(1.0)
    row = ex.indicator_row(y).iloc[0]
    assert (row["N"], row["K"], row["LDiv"]) == (112120, 14, 801)
    assert row["PLDiv"] == pytest.approx(0.007144, abs=1e-6) and row["PMax"] == pytest.approx(0.53836, abs=1e-5)


def test_dependence_on_the_real_table(real):
    _, y, labels = real
    corr, cooc = ex.dependence_matrices(y, labels)
    assert corr.shape == (14, 14) and np.allclose(corr.to_numpy(), corr.to_numpy().T)
    assert cooc.loc["Cardiomegaly", "Effusion"] == pytest.approx(0.383, abs=5e-4)
    dep = ex.dependence_summary(y, labels)
    assert dep["max_corr_pair"] == ["Emphysema", "Pneumothorax"]
    assert dep["min_corr_pair"] == ["Edema", "Pneumothorax"] and dep["min_corr"] == pytest.approx(-0.0225, abs=5e-5)
    assert dep["max_abs_phi2_minus_chi2_over_n"] < 1e-10
    assert dep["n_pairs_never_cooccurring"] == 0
    assert dep["pairs_below_5"] == ["Consolidation-Hernia (4)", "Edema-Hernia (3)", "Emphysema-Hernia (4)", "Hernia-Pneumonia (3)"]


def test_toy_example_table_and_claims():
    toy = ex.toy_example()
    m = toy["metrics"]
    np.testing.assert_allclose(m.loc["subsetacc", ["h1", "h2", "h3"]], [1 / 3, 0, 1 / 3])
    np.testing.assert_allclose(m.loc["F1 macro (mldr 0.4.0: F of macro P, R)", ["h1", "h2", "h3"]],
                               [0.84706, 0.6, 0.84706], atol=1e-5)
    np.testing.assert_allclose(m.loc["hloss", "h2 (printed f2)"], 2 / 15)
    # the text: "the hamming loss is equivalent to the err^macro and err^micro"
    np.testing.assert_allclose(m.loc["err micro"], m.loc["hloss"])
    np.testing.assert_allclose(m.loc["err macro"], m.loc["hloss"])


def test_mean_label_odds_and_expected_fold_label_zeros():
    y = np.zeros((10, 2), dtype=np.uint8)
    y[:2, 0] = 1  # label 0: 2 positives of 10 -> odds 0.25; label 1 never positive -> odds 0
    assert ex.mean_label_odds(y) == pytest.approx(0.125)
    # 2 folds of 5: P(fold has no positive of label 0) = C(8, 5)/C(10, 5) = 56/252; label 1 is always empty
    assert ex.expected_fold_label_zeros(y, 2) == pytest.approx(2 * 56 / 252 + 2)
    # agrees with random splits by simulation
    from medeval.data.splits import random_kfold
    from medeval.metrics import split_quality as sq

    rng = np.random.default_rng(0)
    y = (rng.random((200, 3)) < [0.02, 0.05, 0.3]).astype(np.uint8)
    sim = np.mean([sq.fold_label_zeros(y, random_kfold(200, 5, s)) for s in range(400)])
    assert ex.expected_fold_label_zeros(y, 5) == pytest.approx(sim, rel=0.1)


def test_split_experiment_and_summary(real):
    _, y, _ = real
    sub = y[np.random.default_rng(0).choice(len(y), 10000, replace=False)]
    rand = ex.split_experiment(sub, n_repetitions=3, n_folds=5, seed=222, method="random")
    it = ex.split_experiment(sub, n_repetitions=2, n_folds=5, seed=222, method="iterative")
    assert len(rand) == 3 and len(it) == 2
    assert (rand["ED"] == 0).all()  # 10000 divisible by 5
    assert (rand["LPD (code, 1/K)"] / rand["LPD"]).round(6).eq(round(91 / 14, 6)).all()
    assert it["LD"].mean() < rand["LD"].mean()  # iterative stratification balances single labels better
    summary = ex.summarise_split_experiment(pd.concat([rand, it]))
    assert list(summary.columns) == ["random mean", "random std", "iterative mean", "iterative std"]
    assert summary.loc["LD", "random mean"] == pytest.approx(rand["LD"].mean())
    # reproducible
    again = ex.split_experiment(sub, n_repetitions=3, n_folds=5, seed=222, method="random")
    pd.testing.assert_series_equal(again["LD"], rand["LD"])
    with pytest.raises(ValueError, match="method"):
        ex.split_experiment(sub, n_repetitions=1, n_folds=5, seed=0, method="stratified")


@pytest.mark.parametrize("strategy", ["random", "patient", "later_followup"])
def test_three_way_split_is_a_partition_with_the_right_proportions(real, strategy):
    table, _, _ = real
    parts = ex.three_way_split(table, strategy, seed=3)
    allidx = np.concatenate(list(parts.values()))
    assert len(allidx) == len(table) and len(np.unique(allidx)) == len(table)
    n = len(table)
    tol = 0.005 * n if strategy != "patient" else 0.01 * n  # patient splits are exact in patients, not images
    assert abs(len(parts["train"]) - 0.7 * n) <= tol
    assert abs(len(parts["validation"]) - 0.1 * n) <= tol
    assert abs(len(parts["test"]) - 0.2 * n) <= tol
    pid, fu = table["patient_id"].to_numpy(), table["follow_up"].to_numpy()
    for earlier, later in (("train", "validation"), ("train", "test"), ("validation", "test")):
        a = pd.Series(fu[parts[earlier]]).groupby(pid[parts[earlier]]).max()
        b = pd.Series(fu[parts[later]]).groupby(pid[parts[later]]).min()
        shared = a.index.intersection(b.index)
        if strategy == "patient":
            assert len(shared) == 0
        elif strategy == "later_followup":
            assert len(shared) > 0 and (a[shared] < b[shared]).all()
        else:
            assert (a[shared] >= b[shared]).any()


def test_patient_overlap_table(real):
    table, _, _ = real
    ov = ex.patient_overlap(table, seed=1)
    assert len(ov) == 9
    assert ov.loc[ov["strategy"] == "patient", "shared_patients"].eq(0).all()
    assert ov.loc[ov["strategy"] == "later_followup", "rule_violations"].eq(0).all()
    assert ov.loc[ov["strategy"] == "random", "rule_violations"].gt(0).all()


def test_patient_bootstrap_resamples_whole_patients():
    pid = np.array([1, 1, 1, 2, 3, 3])
    seen = []
    ex.patient_bootstrap(pid, lambda idx: (seen.append(np.sort(idx)), [len(idx)])[1], n_bootstrap=30, seed=0)
    for idx in seen:
        counts = np.bincount(idx, minlength=6)
        assert counts[0] == counts[1] == counts[2] and counts[4] == counts[5]  # patients kept whole
        assert set(np.unique(pid[idx])) <= {1, 2, 3}
    a = ex.patient_bootstrap(pid, lambda idx: [idx.sum()], n_bootstrap=20, seed=5)
    b = ex.patient_bootstrap(pid, lambda idx: [idx.sum()], n_bootstrap=20, seed=5)
    np.testing.assert_array_equal(a, b)


def test_patient_bootstrap_with_one_image_per_patient_is_the_ordinary_bootstrap():
    x = np.random.default_rng(0).normal(size=400)
    reps = ex.patient_bootstrap(np.arange(400), lambda idx: [x[idx].mean()], n_bootstrap=2000, seed=1)
    assert reps.std() == pytest.approx(x.std() / np.sqrt(400), rel=0.1)


def _synthetic(n=600, k=5, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < [0.3, 0.2, 0.1, 0.05, 0.4]).astype(np.uint8)
    p = 1 / (1 + np.exp(-(2 * (2 * y.astype(int) - 1) + rng.normal(0, 1.5, (n, k)))))
    pid = np.repeat(np.arange(n // 3), 3)
    return y, p, pid


def test_evaluate_scores_point_values_and_intervals():
    y, p, pid = _synthetic()
    labels = [f"L{j}" for j in range(5)]
    ev = ex.evaluate_scores(y, p, pid, labels=labels, n_bootstrap=200, seed=0).set_index("metric")
    np.testing.assert_allclose(ev.loc[[f"AUC {lab}" for lab in labels], "value"], ml.per_label_auc(y, p))
    assert ev.loc["mAP", "value"] == pytest.approx(ml.mean_average_precision(y, p))
    assert ev.loc["F1 micro", "value"] == pytest.approx(ml.f1_micro(y, p > 0.5))
    finite = ev.dropna(subset=["value"])
    assert (finite["ci_low"] <= finite["value"] + 1e-12).all() and (finite["value"] <= finite["ci_high"] + 1e-12).all()
    # a label without positives: undefined, counted in every replicate, excluded from the macro AUC
    y2 = y.copy()
    y2[:, 3] = 0
    ev2 = ex.evaluate_scores(y2, p, pid, labels=labels, n_bootstrap=50, seed=0).set_index("metric")
    assert np.isnan(ev2.loc["AUC L3", "value"]) and ev2.loc["AUC L3", "n_undefined_replicates"] == 50
    assert ev2.loc["AUC macro", "value"] == pytest.approx(np.nanmean(ml.per_label_auc(y2, p)))


def test_eve_agrees_with_the_bootstrap_on_synthetic_scores():
    y, p, pid = _synthetic(n=1200, seed=3)
    eve = ex.eve_test_set_variance(y, p, pid, n_pairs=60, n_bootstrap=300, seed=0).set_index("metric")
    assert (eve["n_pairs_used"] == 60).all()
    ratio = eve["eve_sd_full_test_set"] / eve["bootstrap_sd_full_test_set"]
    assert ratio.between(0.5, 2.0).all()
    np.testing.assert_allclose(eve["eve_sd_half_test_set"], np.sqrt(2) * eve["eve_sd_full_test_set"])


def test_threshold_comparison_tuned_on_the_evaluation_data_is_at_least_as_good():
    y, p, pid = _synthetic(seed=4)
    p = 0.4 * p  # scores below 0.5: the fixed threshold predicts almost nothing
    out = ex.threshold_comparison(y, p, y, p, pid, labels=[f"L{j}" for j in range(5)], n_bootstrap=50, seed=0)
    m = out["metrics"].set_index("metric")
    assert m.loc["F1 macro", "tuned"] >= m.loc["F1 macro", "at_0.5"]
    assert m.loc["F1 macro", "difference"] == pytest.approx(m.loc["F1 macro", "tuned"] - m.loc["F1 macro", "at_0.5"])
    assert out["thresholds"]["tuned_on_validation"].all()
    per_label = ml.per_label_f1(y, ml.binarize(p, out["thresholds"]["threshold"].to_numpy()), zero_division=0.0)
    for k in range(5):
        for t in np.unique(p[:, k])[::7]:
            assert per_label[k] >= ml.binary_f1(y[:, k], p[:, k] > t, zero_division=0.0) - 1e-12


def test_downsample_images():
    x = np.arange(2 * 4 * 4, dtype=np.float32).reshape(2, 4, 4)
    d = ex.downsample_images(x, 2)
    assert d.shape == (2, 2, 2) and d[0, 0, 0] == pytest.approx(np.mean([0, 1, 4, 5]))
    assert ex.downsample_images(x, 4) is x
    with pytest.raises(ValueError, match="input_size"):
        ex.downsample_images(x, 3)


def test_params_validation():
    with pytest.raises(ValueError, match="split_folds"):
        ex.Params(split_folds=1)
    with pytest.raises(ValueError, match="data_source"):
        ex.Params(data_source="mnist")
    with pytest.raises(ValueError, match="unknown_field|extra"):
        ex.Params(unknown_field=1)


def _refusal(overrides) -> str:
    from medeval.runtime.params import ParameterError, resolve_params

    with pytest.raises(ParameterError) as err:
        resolve_params("05-multilabel", "smoke", overrides)
    return str(err.value)


def test_cross_field_rules_are_refused_before_any_compute_naming_their_fields():
    msg = _refusal({"image_size": 96, "input_size": 64})
    assert "parameters input_size=64, image_size=96: input_size must divide image_size" in msg
    assert ex.Params(data_source="real", image_size=96, input_size=64).input_size == 64  # real images are resized
    msg = _refusal({"weights_path": "resnet.pt"})
    assert "weights_path='resnet.pt', backbone='small_cnn': weights_path initialises a ResNet" in msg
    msg = _refusal({"real_protocols": ["kfold_5", "kfold_5"]})
    assert "'real_protocols' = ['kfold_5', 'kfold_5']: entries must be distinct" in msg
    assert "'data_source' = 'phantoms'" in _refusal({"data_source": "phantoms"})  # renamed 'phantom' (issue #18)


def test_preflight_names_missing_real_images_and_weights(tmp_path, monkeypatch):
    from medeval.runtime.params import PreflightError, preflight, resolve_params

    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    params = resolve_params("05-multilabel", "full", {"device": "cpu", "weights_path": str(tmp_path / "w.pt")})
    with pytest.raises(PreflightError) as err:
        preflight("05-multilabel", params, available=2**40)
    assert "dataset 'chestxray14-images'" in str(err.value) and "weights_path: the weights file" in str(err.value)
    preflight("05-multilabel", resolve_params("05-multilabel", "smoke"), available=2**40)


def test_an_estimate_above_the_available_memory_is_refused_naming_its_drivers():
    from medeval.runtime.params import GIB, PreflightError, preflight, resolve_params

    params = resolve_params("05-multilabel", "smoke", {"n_images": 500_000, "image_size": 512, "input_size": None})
    estimate = params.resource_estimate()
    assert estimate.peak_bytes > 24 * GIB and {"n_images", "image_size"} <= set(estimate.drivers)
    with pytest.raises(PreflightError, match=r"exceeds the 24.00 GiB available.*lower n_images, image_size"):
        preflight("05-multilabel", params, available=24 * GIB)
    for profile in ("smoke", "default"):
        preflight("05-multilabel", resolve_params("05-multilabel", profile), available=24 * GIB)


def test_the_phantom_term_matches_a_measurement(peak_growth):
    """The estimate's phantom term (1,500 phantoms of 128 px block-averaged to 64 px, with the 70/10/20 copies)
    against the peak resident memory they add in a fresh interpreter."""
    measured = peak_growth(
        "ph = generate_chest_phantoms(1500, 128, seed=0)\n"
        "x = ex.downsample_images(ph.images, 64)[:, None]\n"
        "idx = np.random.default_rng(0).permutation(1500)\n"
        "parts = [x[idx[:1050]], x[idx[1050:1200]], x[idx[1200:]]]  # train, validation, test (copies)",
        setup="import numpy as np\nfrom medeval.data.phantoms.chest import generate_chest_phantoms\n"
              "from medeval.experiments import multilabel_cxr14 as ex")
    estimated = ex.Params(n_images=1500, image_size=128, input_size=64).resource_estimate().terms["phantoms"]
    assert 0.5 <= measured / estimated <= 2, (measured / 2**20, estimated / 2**20)


@pytest.mark.slow
def test_phantom_cnn_runs_end_to_end():
    params = ex.Params(n_images=80, epochs=1, device="cpu", batch_size=16)
    run = ex.run_phantom_cnn(params, seed=0)
    assert run.p_test.shape == run.y_test.shape and run.y_test.shape[1] == 14
    assert run.p_val.shape == run.y_val.shape
    assert np.all((run.p_test >= 0) & (run.p_test <= 1)) and len(run.loss_history) == 1
    assert run.n_train + run.info["n_validation"] + run.info["n_test"] == 80
    assert len(run.patient_test) == len(run.y_test)


def test_real_cnn_names_the_missing_dataset(tmp_path, monkeypatch):
    from medeval.data.manifest import DatasetUnavailableError

    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    with pytest.raises(DatasetUnavailableError, match="chestxray14-images"):
        ex.run_real_cnn(ex.Params(data_source="real", device="cpu"), seed=0, protocol="holdout_70_10_20")


def test_published_auc_comparison():
    ours = pd.Series(0.7, index=ex.PUBLISHED_AUC.index)
    comp = ex.published_auc_comparison(ours)
    assert list(comp.columns) == ["ours", "Wang 2017", "Yao 2017", "CheXNet"]
    assert comp.loc["mean", "CheXNet"] == pytest.approx(ex.PUBLISHED_AUC["CheXNet"].mean())
    assert comp.loc["mean", "CheXNet"] == pytest.approx(0.841, abs=1e-3)  # "0.841 of the original CheXNet"


def test_cnn_quality_reports_floor_band_and_ceiling():
    labels = ["a", "b", "c"]
    ev = pd.DataFrame({"metric": ["AUC a", "AUC b", "AUC c", "AUC macro"], "value": [0.7, 0.96, np.nan, 0.83],
                       "ci_low": [0.6, 0.9, np.nan, 0.8], "ci_high": [0.8, 1.0, np.nan, 0.86]})
    q = ex.cnn_quality(ev, labels)
    assert q["macro_auc"] == 0.83 and q["macro_auc_ci"] == [0.8, 0.86]
    assert (q["per_label_auc_min"], q["per_label_auc_max"]) == (0.7, 0.96)
    assert q["n_labels_defined"] == 2 and q["n_labels_at_ceiling"] == 1
    assert q["above_floor"] and q["in_band"]
    ev.loc[3, "value"] = 0.65
    q = ex.cnn_quality(ev, labels)
    assert not q["above_floor"] and not q["in_band"]


class _FakeReader:
    """Stands in for ChestXray14Images in a test of the real-data code path (a slice of the real table)."""

    def __init__(self, image_dir, labels=None, *, require_all=False):
        from medeval.data.chestxray14 import LABELS, load_labels

        self.table = load_labels().iloc[:240].reset_index(drop=True)
        self._labels = LABELS

    def image(self, i, size=None):
        return np.random.default_rng(i).random((size, size)).astype(np.float32)

    def images(self, indices, size=None, workers=None):
        return np.stack([self.image(int(i), size) for i in indices])

    def labels(self):
        return self.table[list(self._labels)].to_numpy(dtype=np.uint8)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["holdout_70_10_20", "kfold_5"])
def test_real_cnn_code_path_with_a_stand_in_reader(monkeypatch, tmp_path, protocol):
    import medeval.data.readers as readers

    monkeypatch.setattr(ex, "require_real_images", lambda: tmp_path)
    monkeypatch.setattr(readers, "ChestXray14Images", _FakeReader)
    epochs = 1 if protocol == "holdout_70_10_20" else 0  # one training pass through the Dataset path is enough
    params = ex.Params(data_source="real", device="cpu", epochs=epochs, batch_size=32, input_size=32)
    with pytest.warns(UserWarning, match="111880 of the 112120 ChestX-ray14 images are missing"):
        runs = ex.run_real_cnn(params, seed=0, protocol=protocol)
    assert len(runs) == (1 if protocol == "holdout_70_10_20" else 5)
    table = _FakeReader(None).table
    pid, fu = table["patient_id"].to_numpy(), table["follow_up"].to_numpy()
    tested = 0
    for r in runs:
        assert r.p_test.shape == r.y_test.shape == (r.info["n_test"], 14)
        assert r.p_val.shape == (r.info["n_validation"], 14)
        assert r.n_train + r.info["n_validation"] + r.info["n_test"] == 240
        tested += r.info["n_test"]
    if protocol == "kfold_5":
        assert tested == 240  # every image is a test image exactly once
    else:
        assert abs(runs[0].info["n_test"] - 48) <= 1
    assert set(np.unique(runs[0].patient_test)) <= set(pid) and fu.size == 240


def test_most_frequent_labelset_and_the_no_finding_hamming_loss():
    y = np.array([[0, 0, 0], [1, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 0], [1, 0, 1]])
    top, count = ex.most_frequent_labelset(y)
    assert not top.any() and count == 3 and isinstance(count, int)
    top, count = ex.most_frequent_labelset(y[[1, 3, 5]])
    assert top.tolist() == [True, False, True] and count == 2
    assert ex.no_finding_hamming_loss(y) == pytest.approx(5 / 18)
    assert ex.no_finding_hamming_loss(y) == pytest.approx(ex.indicator_row(y)["LDens"].iloc[0])  # = LDens
    assert ex.UndefinedMetricWarning is ml.UndefinedMetricWarning


@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_the_time_estimate_is_within_a_factor_two_of_the_recorded_wall_time(profile, recorded_time_within):
    """``Params.time_estimate`` against the wall time that results/timings.json records for the profile on the
    2-core reference machine (no time is measured here). A third run, measured when the model was made
    (default with 30 random and 30 iterative split repetitions, 3,000 phantoms of 128 px at input 64,
    epochs=4, n_bootstrap=2000, eve_pairs=100): 70 s estimated, 71.0 s measured."""
    from medeval.runtime.params import resolve_params

    assert resolve_params("05-multilabel", profile, {"device": "cuda"}).resource_estimate().seconds is None
    recorded_time_within("05-multilabel", profile, resolve_params("05-multilabel", profile).resource_estimate().seconds)


def test_the_memory_estimate_counts_no_batch_larger_than_the_training_split():
    """batch_size=4096 on the smoke profile (200 phantoms, 140 training images) was estimated at 4.21 GiB and used
    0.65 GiB (issue #35): a batch holds at most the training split, so the estimate is that of a 140-image batch
    (0.73 GiB), and it still grows with batch_size below that."""
    from medeval.runtime.params import resolve_params

    def peak(**kw):
        return resolve_params("05-multilabel", "smoke", kw).resource_estimate().peak_bytes

    assert peak(batch_size=4096) == peak(batch_size=140) < 2 * 0.65 * 2**30
    assert peak(batch_size=16) < peak(batch_size=64) < peak(batch_size=140)


@pytest.mark.slow
def test_run_returns_results_whose_fields_feed_the_claims():
    """``run`` on a tiny parameter set (the smoke profile on 2,000 split images and 80 phantoms, no cache): every
    computation of the page, and ``claim_inputs`` / ``CLAIMS.decide`` take the result as it is."""
    from medeval.experiments import multilabel_cxr14_claims as mc
    from medeval.runtime.params import resolve_params

    P = resolve_params("05-multilabel", "smoke", {"device": "cpu", "split_subsample": 2000, "n_images": 80,
                                                  "n_bootstrap": 10, "eve_pairs": 2})
    results = ex.run(P, cache_dir=None)
    assert isinstance(results, ex.Results)
    assert (results.n_images, results.n_labels, results.n_patients) == (112120, 14, 30805)
    assert results.label_proportions["Hernia"] == pytest.approx(227 / 112120)
    assert sum(results.labels_per_image_pct.values()) == pytest.approx(100.0)
    assert (results.max_labels, results.max_labels_count) == (9, 2) and not results.most_frequent_labelset.any()
    assert results.toy_best == ex.toy_best_sets(results.toy_metrics)
    runs = results.split_runs
    assert results.split_n_images == 2000 and list(runs["method"].unique()) == ["random", "iterative"]
    assert results.split_figures["LD_mean"] == runs.loc[runs["method"] == "random", "LD"].mean()
    assert len(results.split_figures["LD_iterative_runs"]) == 1 and "LD_iterative_mean" in results.split_figures
    assert results.overlap_figures["patient_level_shared"] == 0
    assert results.overlap_figures["later_followup_rule_violations"] == 0
    assert list(results.cnn_runs) == ["phantom"] and results.evaluated_run is results.cnn_runs["phantom"][0]
    assert results.cnn_real_runs is None and list(results.published_auc) == ["phantom"]
    assert results.cnn_quality == ex.cnn_quality(results.evaluation, results.evaluated_run.labels)
    inputs = mc.claim_inputs(results, P)
    assert inputs.toy_metrics is results.toy_metrics and inputs.cnn_n_test == len(results.evaluated_run.y_test)
    claims = mc.CLAIMS.decide(inputs, scale="smoke")
    assert [c.id for c in claims.claims] == [s.id for s in mc.CLAIMS.specs]
    assert claims.checks and all(c.passed for c in claims.checks)
