"""Chapter 2 (RoDeO) executes under the smoke profile; assertions on its recorded outputs."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def results(run_chapter_smoke):
    return run_chapter_smoke("02-rodeo").results


def test_data_counts(results):
    assert results["nih_n_boxes"] == 984 and results["nih_n_images"] == 880
    assert 400 <= results["oracle_n_images"] <= 480


def test_fig2_isotropy(results):
    f = results["fig2"]
    assert f["loc_axis"] == pytest.approx(2**-0.25) and f["loc_diagonal"] == pytest.approx(2**-0.25)
    assert f["iou_axis"] == pytest.approx(1 / 3) and f["iou_diagonal"] < f["iou_axis"]
    assert f["loc_nonzero_area_fraction"] > f["ap50_nonzero_area_fraction"]


def test_oracle_figures_recorded(results):
    assert results["fig8"]["loc_max_abs_dev_from_analytic"] < 1e-6
    assert results["fig9"]["loc_min"] > 0.999 and results["fig9"]["cls_min"] > 0.999
    acc, rodeo = results["fig4"]["acc@50"], results["fig4"]["RoDeO"]
    assert acc[1] > acc[0] and rodeo[1] < rodeo[0]  # Fig. 4: acc rises, RoDeO falls
    assert results["fig11"]["acc30_at_p_max"] > 0.3
    assert 0 < results["fig7"]["shape_argmax_size"] <= 0.5


def test_table1(results):
    assert results["paper_table1_inconsistent_rows"] == ["Atelectasis"]
    assert results["paper_atelectasis_total_recomputed"] == pytest.approx(12.0, abs=0.05)
    assert results["ours_table1_max_hm_difference"] < 1e-3
    table = results["table1_ours"]
    assert [r["class"] for r in table][-1] == "Total" and len(table) == 9
    for row in table:
        for key in ("acc@30", "mAP"):
            assert row[key] is None or 0 <= row[key] <= 100
    assert len(results["table1_ci"]) > 0


def test_paper_vs_us_and_provenance(results):
    rows = results["paper_vs_us"]
    assert len(rows) >= 10 and {r["verdict"] for r in rows} <= {"[Re]", "[¬Re]", "[n/a]"}
    assert any("Atelectasis" in r["ours"] for r in rows)
    assert results["profile"] == "smoke" and not math.isnan(results["wall_time_s"])
