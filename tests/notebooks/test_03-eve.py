"""Chapter 3 executes under the smoke profile and records its EVE results and a complete claims table."""

import math

import pytest

from medeval.core.claims import BASES, CLAIM_COLUMNS, VERDICTS

pytestmark = pytest.mark.notebook

EXPECTED_IDS = {
    "eve-flat", "neve-finite-bias", "neve-to-eve", "drawstring-any-metric", "eve-unbiased", "half-eve-unbiased",
    "eve-conservative-full", "eve-any-metric", "eve-ci-coverage", "binomial-ci-undercovers", "paired-test-valid",
    "size-effects", "neve-bias-grows", "naive-below-eve", "three-fold-bias", "repeats-reduce-variance",
    "repeated-lowest-mse", "repeated-mse-small-n", "loo-not-best", "loo-high-variance", "adni-figures",
}


@pytest.fixture(scope="module")
def res(run_chapter_smoke):
    return run_chapter_smoke("03-eve").results


def test_03_eve_smoke_sections(res):
    assert res["profile"] == "smoke"
    assert res["pool"] == {"dataset": "adni_phantom", "n_negative": 370, "n_positive": 252, "n_features": 80}
    assert res["hard_margin_in_limit"] is True
    assert res["engine_check"]["engine"] == "active_set" and res["engine_check"]["agreement"] >= 0.999
    # drawstring: P=25 < 2n=50 has no EVE (omitted, as in the paper)
    assert res["drawstring_omitted_parent_sizes"] == [25]
    rows = {r["parent_size"]: r for r in res["drawstring"]}
    assert rows[25]["eve"] is None and rows[50]["eve"] > 0 and rows[75]["eve"] > 0
    assert 0 <= rows[25]["neve"] < rows[75]["neve"]
    # characterization: every size recorded, variances positive
    assert [r["subset_size"] for r in res["characterization"]] == [10, 25]
    for r in res["characterization"]:
        assert 0.5 < r["mean_score"] <= 1
        assert r["eve"] > 0 and r["binomial"] > 0 and r["nfw"] >= 0
    # strategies: LOO normalises itself to 1 / 0 / 1 and MSE = var + bias^2 exactly
    strat = res["strategies"]
    assert {r["strategy"] for r in strat} == {"10x1", "10x10", "3x1", "3x10", "LOO"}
    assert {r["subset_size"] for r in strat} == {10, 20}
    loo = [r for r in strat if r["strategy"] == "LOO"]
    assert all(r["sd_ratio"] == pytest.approx(1) and r["bias_ratio"] == 0 for r in loo)
    assert all(r["mse_identity_error"] < 1e-12 for r in strat)
    # known truth: every metric at both sizes, the smoke profile's draws
    truth = res["known_truth"]
    assert {(r["metric"], r["subset_size"]) for r in truth} == {(m, n) for m in ("accuracy", "sensitivity",
                                                                                  "specificity", "auc") for n in (10, 20)}
    assert all(r["n_draws"] == 60 and r["eve"] > 0 and r["true_variance"] > 0 for r in truth)
    assert res["truth_n_draws"] == 60
    pc = res["comparison"]["paired"]
    assert pc["ci_low"] <= pc["mean_difference"] <= pc["ci_high"] and 0 <= pc["p_value"] <= 1
    assert res["bridge"]["max_abs_difference_vs_sklearn"] < 1e-12
    assert len(res["setting_eve_to_binomial"]) == 4
    assert all(math.isfinite(v) for v in res["setting_eve_to_binomial"].values())


def test_03_eve_quality_band_is_recorded(res):
    band = res["quality_band"]
    assert band["floor"] == 0.7 and set(band) >= {"min", "max", "per_model"}
    assert 0.5 < band["min"] <= band["max"] < 1
    assert len(band["per_model"]) == 3  # the main pool and both truth sizes


def test_03_eve_claims_table(res):
    rows = res["paper_vs_us"]
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert set(ids) == EXPECTED_IDS
    for r in rows:
        assert set(CLAIM_COLUMNS) <= set(r), r
        assert r["verdict"] in VERDICTS and r["basis"] in BASES
        assert r["scale"] == "smoke"
        assert r["claim"] and r["rule"] and r["test"]
        if r["verdict"] != "[Re]":
            assert r["reason"], r  # every [¬Re], [~] and [n/a] says why
    by = {r["id"]: r for r in rows}
    assert by["adni-figures"]["verdict"] == "[n/a]" and by["adni-figures"]["basis"] == "real"
    assert by["eve-unbiased"]["basis"] == "phantom" and "±10%" in by["eve-unbiased"]["rule"]
    assert "TOST" in by["eve-unbiased"]["test"] and "TOST" in by["eve-flat"]["test"]
    assert sum(res["verdict_counts"].values()) == len(rows)


def test_03_eve_checks_pass(res):
    checks = res["checks"]
    assert len(checks) >= 8
    assert all(c["passed"] is True for c in checks), [c for c in checks if not c["passed"]]


def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke("03-eve").results)
