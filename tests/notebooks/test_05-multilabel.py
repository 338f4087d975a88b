"""Chapter 5 executes under the smoke profile and records the label facts, the toy table, the split
statistics, the patient overlap, the CNN evaluation with its quality figures, and the claims, checks and errata."""

from __future__ import annotations

import math

import pytest

from medeval.core.claims import BASES, CLAIM_COLUMNS, VERDICTS

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

CHAPTER = "05-multilabel"


@pytest.fixture(scope="module")
def results(run_chapter_smoke):
    return run_chapter_smoke(CHAPTER).results


def test_records_exist(results):
    for key in ("N", "n_patients", "label_frequency", "label_count_histogram", "LCard", "LDens", "LDiv", "PLDiv",
                "PMax", "max_corr_pair", "toy_metrics", "split_summary", "patient_overlap", "cnn_evaluation",
                "cnn_eve", "threshold_comparison", "cnn_quality", "paper_vs_us", "checks", "errata", "provenance"):
        assert key in results, key


def test_dataset_facts(results):
    assert results["N"] == 112120 and results["K"] == 14 and results["n_patients"] == 30805
    assert results["LDiv"] == 801
    assert results["LCard"] == pytest.approx(0.72401, abs=1e-5)
    assert results["PMax"] == pytest.approx(60361 / 112120)
    assert results["pmax_is_empty_set"] is True
    assert results["max_labels"] == 9 and results["max_labels_count"] == 2
    assert [r["count"] for r in results["label_count_histogram"]] == [60361, 30963, 14306, 4856, 1247, 301, 67, 16, 1, 2]
    assert sorted(results["max_corr_pair"]) == ["Emphysema", "Pneumothorax"]
    assert results["max_corr"] == pytest.approx(0.17818, abs=1e-5)
    assert results["p_eff_given_card"] > results["p_card_given_eff"]
    assert results["hloss_all_zero"] == results["LDens"]
    assert results["phi2_chi2_max_abs_diff"] < 1e-10


def test_toy_table(results):
    rows = {r["metric"]: r for r in results["toy_metrics"]}
    assert rows["hloss"]["h1"] == rows["hloss"]["h2"] == rows["hloss"]["h3"] == pytest.approx(0.2)
    assert rows["AP example (mldr ties 'last')"]["h1"] == pytest.approx(0.9625)
    assert rows["F1 macro (mldr 0.4.0: F of macro P, R)"]["h1"] == pytest.approx(0.84706, abs=1e-5)
    assert rows["F1 macro (text: mean of per-label F1)"]["h3"] == pytest.approx(0.8)
    assert rows["err micro"]["h2"] == pytest.approx(rows["hloss"]["h2"])
    assert results["toy_hloss_h2_printed"] == pytest.approx(2 / 15)


def test_split_statistics(results):
    assert results["split_n_images"] == 20000  # smoke subsample
    assert 0 < results["LD_mean"] < 0.02
    assert results["ED_max"] == 0.0
    assert results["FZ_max"] >= 0 and results["FLZ_max"] >= 0
    stats = {r["statistic"] for r in results["split_summary"]}
    assert {"LD", "LPD", "LPD (code, 1/K)", "FZ", "FLZ", "FLPZ", "FLPZ (code, proportion)"} <= stats
    assert results["LD_iterative_mean"] >= 0
    assert len(results["LD_random_runs"]) == 2 and len(results["LD_iterative_runs"]) == 1
    assert 0.05 < results["mean_label_odds"] < 0.07
    assert 0 <= results["expected_flz"] < 0.01  # 4,000-image folds: Hernia (about 40 positives) is rarely missing


def test_patient_overlap(results):
    assert results["patient_level_shared"] == 0
    assert results["later_followup_rule_violations"] == 0
    assert results["random_rule_violations"] > 0
    assert 50 < results["random_test_images_shared_pct"] < 100
    for r in results["patient_overlap"]:
        assert abs(r["train_pct"] - 70) < 1 and abs(r["test_pct"] - 20) < 1


def test_cnn_evaluation(results, in_range):
    rows = {r["metric"]: r for r in results["cnn_evaluation"]}
    assert len([m for m in rows if m.startswith("AUC ") and m != "AUC macro"]) == 14
    in_range((rows[key]["value"] for key in ("F1 micro", "F1 macro", "mAP", "AUC macro")), 0.0, 1.0)
    lo, hi = results["cnn_AUC_macro_ci"]
    if lo is not None:
        assert lo <= results["cnn_AUC_macro"] <= hi
    assert results["cnn_n_test"] > 0 and results["cnn_n_train"] > results["cnn_n_test"]
    for r in results["cnn_eve"]:
        assert r["n_pairs_used"] <= 5
    in_range((r[k] for r in results["cnn_eve"] for k in ("eve_sd_half_test_set", "eve_sd_full_test_set")),
             0.0, math.inf, finite_share=0.5)
    metrics = {r["metric"] for r in results["threshold_comparison"]}
    assert {"F1 micro", "F1 macro", "Hamming loss"} <= metrics


def test_quality_figures(results):
    q = results["cnn_quality"]
    assert q["floor"] == 0.7 and q["band"] == [0.75, 0.95]
    assert 0.0 <= q["macro_auc"] <= 1.0 and q["macro_auc_ci"][0] <= q["macro_auc"] <= q["macro_auc_ci"][1]
    assert q["above_floor"] == (q["macro_auc"] > 0.7)
    assert 0 <= q["n_labels_at_ceiling"] <= q["n_labels_defined"] <= 14


EXACT = {  # the label-table and toy rows: noise-free, so their smoke verdicts are those of every profile
    "n-images-patients": "[Re]", "labels-over-10pct": "[Re]", "rare-label-prevalence": "[Re]",
    "labels-per-image": "[Re]", "max-label-count": "[Re]", "pmax-empty-set": "[Re]", "mlprop-comparison": "[n/a]",
    "max-correlation": "[Re]", "toy-no-best-classifier": "[Re]",
    "toy-hloss-equal": "[Re]", "toy-h1-h3-equal": "[¬Re]", "toy-ap-vs-f1micro": "[Re]",
    "toy-f1-micro-macro-differ": "[Re]",
}


def test_paper_vs_us(results):
    card = results["paper_vs_us"]
    ids = [r["id"] for r in card]
    assert len(ids) == len(set(ids))
    for r in card:
        assert set(CLAIM_COLUMNS) <= set(r), r["id"]
        assert r["verdict"] in VERDICTS and r["basis"] in BASES and r["scale"] == "smoke"
        assert r["claim"] and r["paper"] and r["rule"] and r["ours"] and r["test"]
        if r["verdict"] != "[Re]":
            assert r["reason"], r["id"]
    by_id = {r["id"]: r for r in card}
    assert set(ids) == set(EXACT) | {"random-splits-small-ld", "stratification-unnecessary", "cnn-per-label-auc"}
    for cid, verdict in EXACT.items():
        assert by_id[cid]["verdict"] == verdict and by_id[cid]["basis"] == "exact", cid
    assert by_id["random-splits-small-ld"]["basis"] == "real"
    # one iterative repetition has no spread: the equivalence cannot be decided on smoke
    assert by_id["stratification-unnecessary"]["verdict"] == "[~]"
    cnn = by_id["cnn-per-label-auc"]
    assert cnn["basis"] == "phantom" and cnn["verdict"] == "[n/a]"
    assert ("phantoms" in cnn["reason"]) or ("did not train" in cnn["reason"])


#: ClaimInputs field -> the recorded key that holds it (every field of the claims' inputs is recorded)
RECORDED_INPUTS = {
    "n_images": "N", "n_labels": "K", "n_patients": "n_patients", "label_proportions": "label_proportions",
    "labels_per_image_pct": "labels_per_image_pct", "max_labels": "max_labels", "max_labels_count": "max_labels_count",
    "pmax_is_empty_set": "pmax_is_empty_set", "label_cardinality": "LCard", "label_density": "LDens",
    "proportion_distinct_labelsets": "PLDiv", "proportion_most_frequent_labelset": "PMax",
    "max_corr_pair": "max_corr_pair", "max_corr": "max_corr", "p_effusion_given_cardiomegaly": "p_eff_given_card",
    "p_cardiomegaly_given_effusion": "p_card_given_eff", "phi2_chi2_max_abs_diff": "phi2_chi2_max_abs_diff",
    "max_joint_count_asymmetry": "max_joint_count_asymmetry", "no_finding_hamming_loss": "hloss_all_zero",
    "split_n_images": "split_n_images", "split_folds": "split_folds", "ld_random_runs": "LD_random_runs",
    "ld_iterative_runs": "LD_iterative_runs", "mean_label_odds": "mean_label_odds", "expected_flz": "expected_flz",
    "fz_max": "FZ_max", "flz_max": "FLZ_max", "flpz_mean": "FLPZ_mean", "ed_max": "ED_max", "lpd_mean": "LPD_mean",
    "lpd_code_mean": "LPD_code_mean", "patient_level_shared": "patient_level_shared",
    "later_followup_rule_violations": "later_followup_rule_violations", "data_source": "data_source",
    "cnn_quality": "cnn_quality", "cnn_n_test": "cnn_n_test",
}


def test_claims_are_rebuilt_from_the_recorded_results(results):
    import dataclasses

    import pandas as pd

    from medeval.experiments.multilabel_cxr14_claims import CLAIMS, ClaimInputs

    assert set(RECORDED_INPUTS) | {"toy_metrics"} == {f.name for f in dataclasses.fields(ClaimInputs)}
    inputs = ClaimInputs(**{field: results[key] for field, key in RECORDED_INPUTS.items()},
                         toy_metrics=pd.DataFrame(results["toy_metrics"]).set_index("metric"))
    rebuilt = [c.row() for c in CLAIMS.decide(inputs, scale="smoke").claims]
    assert [(r["id"], r["verdict"]) for r in rebuilt] == [(r["id"], r["verdict"]) for r in results["paper_vs_us"]]


def test_checks_and_errata(results):
    checks = {c["check"]: c for c in results["checks"]}
    assert len(checks) >= 8 and all(c["passed"] is True for c in checks.values()), checks
    assert "Hamming loss of the all-zero prediction = LDens" in checks
    where = [e["where"] for e in results["errata"]]
    assert any("Hamming loss" in w for w in where) and any("toymlpred" in w for w in where)
    assert not math.isnan(results["wall_time_s"])


def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke("05-multilabel").results)
