"""Chapter 3 executes under the smoke profile and records sane EVE results."""

import math

import pytest

pytestmark = pytest.mark.notebook


def test_03_eve_smoke(run_chapter_smoke):
    res = run_chapter_smoke("03-eve").results
    assert res["profile"] == "smoke"
    assert res["pool"] == {"dataset": "adni_phantom", "n_negative": 370, "n_positive": 252, "n_features": 80}
    assert res["hard_margin_in_limit"] is True
    # drawstring: P=25 < 2n=50 has no EVE (omitted, as in the paper); NEVE is near 0 at P = n
    assert res["drawstring_omitted_parent_sizes"] == [25]
    rows = {r["parent_size"]: r for r in res["drawstring"]}
    assert rows[25]["eve"] is None and rows[50]["eve"] > 0
    assert res["drawstring_neve_smallest_P"] < res["drawstring_neve_largest_P"]
    assert 0 < res["drawstring_eve_mean"] < 0.05
    # characterization: every size recorded, variances positive
    sizes = [r["subset_size"] for r in res["characterization"]]
    assert sizes == [10, 25]
    for r in res["characterization"]:
        assert 0.5 < r["mean_score"] <= 1
        assert r["eve"] > 0 and r["binomial"] > 0 and r["nfw"] >= 0
    # strategies: LOO normalises itself to 1 / 0 / 1 and MSE = var + bias^2 exactly
    strat = res["strategies"]
    assert {r["strategy"] for r in strat} == {"10x1", "10x10", "3x1", "3x10", "LOO"}
    loo = next(r for r in strat if r["strategy"] == "LOO")
    assert loo["sd_ratio"] == pytest.approx(1) and loo["bias_ratio"] == 0 and loo["mse_ratio"] == pytest.approx(1)
    for r in strat:
        assert r["mse_identity_error"] < 1e-12
    # known truth: within a generous tolerance at smoke scale (the 3-SE test runs in tests/experiments)
    assert res["truth_max_abs_z"] < 4
    # comparison and bridge
    pc = res["comparison"]["paired"]
    assert pc["ci_low"] <= pc["mean_difference"] <= pc["ci_high"] and 0 <= pc["p_value"] <= 1
    assert res["bridge"]["max_abs_difference_vs_sklearn"] < 1e-12
    assert 0.5 < res["bridge"]["mean_macro_auc"] < 1 and res["bridge"]["eve"] > 0
    assert len(res["setting_eve_to_binomial"]) == 4
    assert all(math.isfinite(v) for v in res["setting_eve_to_binomial"].values())
    verdicts = {r["verdict"] for r in res["paper_vs_us"]}
    assert verdicts <= {"[Re]", "[¬Re]", "[n/a]"} and len(res["paper_vs_us"]) >= 9
    assert res["wall_time_s"] < 120
