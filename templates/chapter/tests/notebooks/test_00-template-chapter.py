"""Chapter 00-template-chapter under the smoke profile: its recorded outputs."""

import pytest


@pytest.mark.notebook
def test_template_chapter_smoke(run_chapter_smoke, in_range):
    res = run_chapter_smoke("00-template-chapter").results
    (summary,) = res["summary"]
    (control,) = res["control"]
    assert summary["resamples"] == control["resamples"] == res["params"]["n_repeats"]
    in_range([summary["mean_auc"], summary["low"], summary["high"], control["mean_auc"]], 0.0, 1.0)
    assert summary["low"] <= summary["mean_auc"] <= summary["high"]
    (row,) = res["paper_vs_us"]
    assert row["id"] == "auc-above-chance" and row["verdict"] in ("[Re]", "[¬Re]", "[~]")
    (check,) = res["checks"]
    assert check["passed"] is True, check  # the rule does not say [Re] on permuted labels


@pytest.mark.notebook
def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke("00-template-chapter").results)
