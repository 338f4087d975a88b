"""The Data appendix page executes under the smoke profile and records sane comparison numbers."""

import pytest

pytestmark = pytest.mark.notebook


def test_a1_data_smoke(run_chapter_smoke):
    res = run_chapter_smoke("A1-data").results
    assert res["profile"] == "smoke"
    assert res["n_datasets"] >= 10
    assert {row["id"] for row in res["manifest"]} >= {"chestxray14-labels", "chestxray14-boxes", "mlnto"}
    assert res["n_phantom"] == 2000
    # 2,000 draws: every prevalence within a few binomial standard errors of the real table
    assert 0 <= res["max_abs_frequency_difference"] < 0.03
    assert res["max_abs_z"] < 5
    assert res["frequency_correlation"] > 0.98
    assert res["cooccurrence_correlation"] > 0.8
    assert len(res["label_frequency"]) == 14
    assert res["max_abs_mean_centre_difference"] < 0.15
    fr = res["slide_class_fractions"]
    assert abs(sum(fr.values()) - 1) < 1e-9 and 0.65 < fr["O"] < 0.9
    verdicts = {row["verdict"] for row in res["paper_vs_us"]}
    assert verdicts <= {"[Re]", "[¬Re]", "[n/a]"}
    assert res["wall_time_s"] < 120
