"""Chapter 1 executes under the smoke profile and records Tables II/III/IX, the score-choice correlations, the
chance level, the threshold sweep, the Table V/VI/VII analogues, Fig. 8 and the paper-versus-us table."""

from __future__ import annotations

import math

import pytest

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

CHAPTER = "01-mil-stability"


@pytest.fixture(scope="module")
def results(run_chapter_smoke):
    return run_chapter_smoke(CHAPTER).results


def test_tables_ii_iii_ix_exact(results):
    assert results["table_ii_iii_max_abs_error"] <= 5e-3
    rows = {r["table"]: r for r in results["table_ii_iii"]}
    assert rows["II a (balanced)"]["S_APJ (ours)"] == pytest.approx(3 / 7)
    assert rows["III b (asymmetric imbalance)"]["S_AJ (ours)"] == pytest.approx(0.2380952, abs=1e-6)
    assert results["table_ix_green_end"] == pytest.approx(-1 / 7)
    assert results["table_ix_black_end"] == pytest.approx(1 / 9)


def test_chance_level(results):
    chance = results["chance_level"]
    assert abs(chance["adjusted_positive_jaccard"]) < 0.05 and abs(chance["spearman"]) < 0.05
    assert abs(chance["positive_jaccard"] - 1 / 3) < 0.05


def test_protocol_outputs(results):
    assert set(results["datasets"]) == {"cxr", "digits", "digits_confounded"}
    t7 = results["table_vii"]
    assert {r["op"] for r in t7} == set(results["params"]["operators"])
    for r in t7:
        assert r["split_bag_auc"] is None or 0 <= r["split_bag_auc"] <= 1
        for key in ("S_APJ", "S_S"):
            assert r[key] is None or -1 <= r[key] <= 1
    for r in results["table_v"]:
        assert r["bag_auc"] is None or 0 <= r["bag_auc"] <= 1
    sweep = results["threshold_sweep"]
    assert [r["threshold"] for r in sweep] == results["params"]["thresholds"]
    assert all(0 <= r["nan_pair_fraction"] <= 1 for r in sweep)
    for key in ("corr_apj_aj", "corr_spearman_kendall"):
        v = results[key]
        assert v is None or -1 <= v <= 1
    assert len(results["fig8"]) >= len(results["params"]["difficulty_levels"])


def test_paper_vs_us(results):
    rows = results["paper_vs_us"]
    assert len(rows) >= 10
    assert all(r["verdict"] in ("[Re]", "[¬Re]", "[n/a]") for r in rows)
    exact = [r for r in rows if r["claim"].startswith("Tables II/III") or r["claim"].startswith("Table IX")]
    assert all(r["verdict"] == "[Re]" for r in exact)
    assert math.isfinite(results["wall_time_s"]) and results["wall_time_s"] < 300
