"""Chapter 4a executes under the smoke profile and records its tables, curves and verdicts."""

from __future__ import annotations

import math

import pytest

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

CHAPTER = "04a-class-distribution"


@pytest.fixture(scope="module")
def results(run_chapter_smoke):
    return run_chapter_smoke(CHAPTER).results


def test_records_exist(results):
    for key in ("patch_categories", "table_4_4", "patch_size_sweep", "hypothesis_aucs", "argmax_precision_ttests",
                "hypothesis_verdicts", "classification_aucs", "paper_vs_us", "provenance", "unit", "unit_used"):
        assert key in results, key


def test_patch_categories_partition_and_unit(results):
    cats = {r["category"]: r["patches"] for r in results["patch_categories"]}
    assert set(cats) == {"O", "C", "notC", "mixed"}
    assert cats["O"] > 0 and sum(cats.values()) > 0
    assert results["unit"] == min(cats["C"], cats["notC"]) // 3
    assert results["unit_used"] <= results["unit"]


def test_table_4_4_shape_and_ranges(results):
    rows = results["table_4_4"]
    assert {(r["distribution"], r["class"]) for r in rows} == {
        (d, c) for d in ("Balanced_S", "C-biased", "notC-biased", "Balanced_L", "Natural") for c in ("O", "notC", "C")}
    for r in rows:
        for k in ("R", "P", "F"):
            assert r[k] is None or 0.0 <= r[k] <= 1.0


def test_hypothesis_aucs_cover_all_experiments(results):
    rows = {r["distribution"]: r for r in results["hypothesis_aucs"]}
    assert set(rows) == {f"E{g}.{s}" for g in "1234" for s in "abc"} - {"E1.c"}
    for r in rows.values():
        assert r["runs"] == 2
        for k in ("roc_auc", "pr_auc", "precision_auc", "recall_auc", "fpr_auc"):
            assert 0.0 <= r[k] <= 1.0


def test_classification_and_verdicts(results):
    sets = {(r["distribution"], r["test_set"]) for r in results["classification_aucs"]}
    assert sets == {(d, t) for d in ("E2.a", "E2.b", "E2.c") for t in ("balanced", "imbalanced")}
    assert {v["verdict"] for v in results["paper_vs_us"]} <= {"[Re]", "[¬Re]", "[n/a]"}
    assert len(results["hypothesis_verdicts"]) == 4
    assert not math.isnan(results["roc_auc_spread"])


def test_camelyon16_extraction_demo(results):
    demo = results["camelyon16_demo"]
    assert demo["positions"] == 30 * 46  # level 2 of 1024 x 1536: (256 - 24) / 8 + 1 rows, (384 - 24) / 8 + 1 cols
    assert 0 < demo["tumour"] < demo["kept"] < demo["positions"]
    assert results["classification_imbalanced_test"] == "phantom"
