"""Chapter 4a executes under the smoke profile and records its per-run tables, quality band, claims, checks and
errata."""

from __future__ import annotations

import pytest

from medeval.core.claims import BASES, CLAIM_COLUMNS, VERDICTS

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

CHAPTER = "04a-class-distribution"
EXPECTED_IDS = {
    "t44-c-recall", "t44-c-precision", "t44-c-f", "t44-notc-reversed", "t44-natural-tradeoff", "t44-fp-dominated",
    "t44-o-well", "t44-recall-cheaper", "sweep-natural", "sweep-c-biased", "h1", "h2-e2b-vs-e2a", "h2-e2b-vs-e2c",
    "h2-e3", "h2-e4", "h2-fpr", "h3-e3a", "h3-e3b", "h3-e3c", "h4-e4c", "h4-noninferior", "e2-curves", "e3-curves",
    "e3-roc-insensitive", "fig413-h2", "fig414-h2", "fig413-curves", "fig414-curves", "fig414-roc-insensitive",
    "cls-less-sensitive",
}


@pytest.fixture(scope="module")
def results(run_chapter_smoke):
    return run_chapter_smoke(CHAPTER).results


def test_records_exist(results):
    for key in ("patch_categories", "table_4_4", "patch_size_sweep", "hypothesis_aucs", "preliminary_runs",
                "hypothesis_runs", "classification_runs", "classification_aucs", "quality_band", "quality_floor",
                "phantom_calibration", "paper_vs_us", "checks", "errata", "verdict_counts", "provenance", "unit",
                "unit_used"):
        assert key in results, key


def test_patch_categories_partition_and_unit(results):
    cats = {r["category"]: r["patches"] for r in results["patch_categories"]}
    assert set(cats) == {"O", "C", "notC", "mixed"}
    assert cats["O"] > 0 and sum(cats.values()) > 0
    assert results["unit"] == min(cats["C"], cats["notC"]) // 3
    assert results["unit_used"] <= results["unit"]


def test_table_4_4_and_replicates(results, in_range):
    rows = results["table_4_4"]
    assert {(r["distribution"], r["class"]) for r in rows} == {
        (d, c) for d in ("Balanced_S", "C-biased", "notC-biased", "Balanced_L", "Natural") for c in ("O", "notC", "C")}
    # a class the smoke U-Nets never predict has no precision: at least 80 % of the cells are numbers
    in_range((r[k] for r in rows for k in ("R", "P", "F")), 0.0, 1.0, finite_share=0.8)
    params = results["params"]
    runs = {(r["distribution"], r["run"]) for r in results["preliminary_runs"]}
    assert len(runs) == 5 * params["n_preliminary_runs"]
    assert {r["e"] for r in results["preliminary_runs"]} == set(params["tile_sizes"])


def test_per_run_tables_cover_every_distribution(results):
    params = results["params"]
    hyp = results["hypothesis_runs"]
    assert {r["distribution"] for r in hyp} == {f"E{g}.{s}" for g in "1234" for s in "abc"} - {"E1.c"}
    assert len(hyp) == 11 * params["n_runs"]
    for r in hyp:
        assert 0.0 <= r["roc_auc"] <= 1.0 and 0.0 <= r["argmax_fpr"] <= 1.0
    cls = {(r["distribution"], r["test_set"]) for r in results["classification_runs"]}
    assert cls == {(d, t) for d in ("E2.a", "E2.b", "E2.c") for t in ("balanced", "imbalanced")}
    assert results["classification_imbalanced_test"] == "phantom"


def test_quality_band_recorded(results):
    band = results["quality_band"]
    assert {"preliminary", "hypotheses", "classification (balanced)", "classification (imbalanced)"} <= set(band)
    for q in band.values():
        lo, hi = q["roc_auc"]
        assert 0.0 <= lo <= hi <= 1.0 and 0 <= q["runs_trained"] <= q["runs"]
    assert results["phantom_calibration"]["germinal_similarity"] == results["params"]["germinal_similarity"]


def test_paper_vs_us_rows(results):
    rows = results["paper_vs_us"]
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) and set(ids) == EXPECTED_IDS
    for r in rows:
        assert set(CLAIM_COLUMNS) <= set(r)
        assert r["verdict"] in VERDICTS and r["basis"] in BASES
        assert r["scale"] == "smoke"
        assert r["test"] and r["n"] is not None and r["claim"] and r["rule"] and r["ours"]
        if r["verdict"] != "[Re]":
            assert r["reason"], r["id"]
    counts = results["verdict_counts"]
    assert sum(counts.values()) == len(rows)
    assert counts == {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}


def test_checks_and_errata(results):
    assert results["checks"] and all(set(c) >= {"check", "expected", "computed", "passed"} for c in results["checks"])
    assert any("Table 4.2" in c["where"] for c in results["checks"])
    assert any("4,922" in e["recomputed"] for e in results["errata"])


def test_camelyon16_extraction_demo(results):
    demo = results["camelyon16_demo"]
    assert demo["positions"] == 30 * 46  # level 2 of 1024 x 1536: (256 - 24) / 8 + 1 rows, (384 - 24) / 8 + 1 cols
    assert 0 < demo["tumour"] < demo["kept"] < demo["positions"]


def test_the_phantom_test_set_needs_no_stand_in(results):
    assert results["classification_imbalanced_test"] == "phantom"
    assert results["classification_imbalanced_note"] == ""


def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke(CHAPTER).results)
