"""Chapter 2 (RoDeO) executes under the smoke profile; assertions on its recorded outputs."""

from __future__ import annotations

import math

import pytest

from medeval.core.claims import BASES, CHECK_COLUMNS, CLAIM_COLUMNS, ERRATUM_COLUMNS, VERDICTS
from medeval.experiments import rodeo_claims as RC

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def results(run_chapter_smoke):
    return run_chapter_smoke("02-rodeo").results


def test_data_counts(results):
    assert results["nih_n_boxes"] == 984 and results["nih_n_images"] == 880
    assert 400 <= results["oracle_n_images"] <= 480
    cells = results["oracle_cells"]
    assert cells["n_cells"] == 8 * results["oracle_n_images"] and 0 < cells["n_occupied_cells"] < cells["n_cells"]


def test_fig2_probe(results):
    f = results["fig2"]
    assert f["loc_axis"] == pytest.approx(2**-0.25) and f["loc_diagonal"] == pytest.approx(2**-0.25)
    assert f["iou_axis"] == pytest.approx(1 / 3) and f["iou_diagonal"] < f["iou_axis"]
    assert f["loc_max_abs_dev_from_radial"] < 1e-12


def test_paper_vs_us_rows_complete(results):
    rows = results["paper_vs_us"]
    ids = [r["id"] for r in rows]
    assert ids == [spec.id for spec in RC.CLAIMS.specs]  # every claim of the chapter, once, in order
    for r in rows:
        assert set(CLAIM_COLUMNS) <= set(r), r["id"]
        assert r["verdict"] in VERDICTS and r["basis"] in BASES and r["scale"] == "smoke"
        assert r["claim"] and r["paper"] and r["rule"] and r["test"], r["id"]
        if r["verdict"] != "[Re]":
            assert r["reason"], r["id"]  # every row that is not reproduced says why
    basis = {r["id"]: r["basis"] for r in rows}
    assert basis["data-mean-box-size"] == "exact"  # a recount of the shipped box list
    oracle_rows = [r for r in rows if r["id"].startswith("fig")]
    assert all(r["basis"] == "real" and r["substitution"] == RC.ORACLE_SUBSTITUTION for r in oracle_rows)
    verdict = {r["id"]: r["verdict"] for r in rows}
    assert verdict["fig5-ap-high-iou"] == "[n/a]"  # depends on the oracle boxes' unstated confidence
    assert verdict["table1-class-readings"] == "[n/a]"  # phantom detector: CheXNet's readings are not testable
    assert "12.0" not in " ".join(r["paper"] for r in rows)  # the paper column holds the paper's numbers only


def test_checks_and_errata(results):
    checks, errata = results["checks"], results["errata"]
    assert all(set(CHECK_COLUMNS) <= set(c) for c in checks) and all(set(ERRATUM_COLUMNS) <= set(e) for e in errata)
    names = " ".join(c["check"] for c in checks)
    assert "isotropic" in names and "2^(−|Δp|²)" in names  # identities are checks, not claims
    assert all(c["passed"] for c in checks), [c["check"] for c in checks if not c["passed"]]
    atel = [e for e in errata if "Atelectasis" in e["where"]]
    assert len(atel) == 1 and atel[0]["printed"] == "28.4" and atel[0]["recomputed"] == "12.0"
    assert any("Eq. 8" in e["where"] for e in errata)
    # the public list has 880 boxed images, the paper says 882: an erratum of a count, not a claim
    assert [e["recomputed"] for e in errata if e["where"].startswith("Sec. 4")] == ["880 images with 984 boxes"]
    # sentences that hold on their control (every box wrong) or follow from a closed form are checks with why
    why = {c["check"]: c["why"] for c in checks}
    for text in ("high base value", "randomly placed", "never reaches zero"):
        (w,) = [v for k, v in why.items() if text in k]
        assert "true-negative share" in w and "every box wrong" in w
    assert [v for k, v in why.items() if "Hausdorff" in k][0].startswith("a closed form")
    assert results["paper_table1_inconsistent_rows"] == ["Atelectasis"]


def test_quality_band_recorded(results):
    q = results["detector_quality"]
    assert 0 <= q["min"] <= q["mean"] <= q["max"] <= 1 and q["floor_on_mean"] == RC.AUC_FLOOR
    assert q["passes_floor"] == (q["mean"] > RC.AUC_FLOOR)
    row = {r["id"]: r for r in results["paper_vs_us"]}["table1-tn-dominance"]
    pneumonia = results["detector_auc"]["Pneumonia"]
    if not pneumonia > RC.AUC_FLOOR:  # the row is about Pneumonia: gated on that class's classifier
        assert row["verdict"] == "[n/a]" and "did not train" in row["reason"] and "Pneumonia" in row["reason"]


def test_table1(results, in_range):
    table = results["table1_ours"]
    assert [r["class"] for r in table][-1] == "Total" and len(table) == 9
    in_range((row[key] for row in table for key in ("acc@30", "mAP")), 0, 100)
    assert all(row["tn@30"] >= 0 for row in table)
    assert len(results["table1_ci"]) > 0


def test_provenance(results):
    assert results["profile"] == "smoke" and not math.isnan(results["wall_time_s"])


def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke("02-rodeo").results)
