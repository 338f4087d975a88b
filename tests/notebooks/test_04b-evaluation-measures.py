"""Chapter 4b executes under the smoke profile and records Tables 5.1-5.2, the tie cases and the En/Ep analyses."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

CHAPTER = "04b-evaluation-measures"


@pytest.fixture(scope="module")
def results(run_chapter_smoke):
    return run_chapter_smoke(CHAPTER).results


def test_table_5_2_and_erratum(results):
    assert results["small_delta_prec"] == pytest.approx(8_200 / 10_200 - 8_000 / 12_000)
    assert results["large_delta_prec"] == pytest.approx(80_200 / 82_200 - 80_000 / 84_000)
    rows = {r["test set"]: r for r in results["table_5_2"]}
    assert "ΔPrec" in rows["Small"]["erratum"] and rows["Large"]["erratum"] == "none"


def test_example_1(results):
    assert results["example1_model1_endpoint"] == pytest.approx(2 / 3)
    assert results["example1_model2_endpoint"] == pytest.approx(2 / 5)
    start = next(r for r in results["tie_cases"] if r["case"].startswith("Case 1"))
    assert start["prec at recall 0 (Alg. 3)"] == 0.0


def test_en_ep_findings(results):
    for task in ("phantom_patches", "digits"):
        f = results[f"findings_{task}"]
        for k in ("d_roc", "d_pr", "d_prec", "std_roc", "std_prec"):
            assert f[k] >= 0
        assert 0 <= f["en_precision_higher"] <= 1
        comp = results[f"metric_comparison_{task}"]
        assert {r["model"] for r in comp} == {"En", "Ep"}
        for r in comp:
            assert 0 <= r["PR-AUC (Alg. 4-5)"] <= 1 and 0 <= r["ROC-AUC"] <= 1
    assert {r["claim"] for r in results["paper_vs_us"]}
