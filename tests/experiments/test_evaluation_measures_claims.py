"""Chapter 4b's claim rules on constructed inputs: each can return [Re] and each can fail ([¬Re] or [~]), and
comparisons of models below the quality floor are [n/a]."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medeval.experiments import evaluation_measures as em
from medeval.experiments import evaluation_measures_claims as emc
from medeval.experiments.claims import BASES, VERDICTS
from medeval.experiments.claims import explain as explain_claims

pytestmark = pytest.mark.claim

#: Column -> (mean, sd) defaults of a trained model; tests override what they exercise.
BASE = {
    "ROC-AUC": (0.9, 0.01), "PR-AUC (Alg. 4-5)": (0.6, 0.02), "PR-AUC (Alg. 4-5, 1001 points)": (0.6, 0.02),
    "average precision": (0.6, 0.02), "linear PR-AUC": (0.6, 0.02), "precision-AUC (PR-T)": (0.5, 0.02),
    "recall-AUC (PR-T)": (0.7, 0.02), "precision-AUC (prior-corrected)": (0.5, 0.02),
    "recall-AUC (prior-corrected)": (0.7, 0.02), "precision at t": (0.5, 0.02), "recall at t": (0.6, 0.02),
    "FP at t": (100, 10), "FN at t": (50, 5), "precision at recall < 0.3": (0.9, 0.02),
    "PR-AUC share at recall ≤ 0.3": (0.35, 0.01), "precision at matched recall": (0.5, 0.02),
}


def trials(spec: dict[str, dict], n: int = 8, seed: int = 0, exact: tuple[str, ...] = ()) -> pd.DataFrame:
    """Per-trial rows: every model of ``spec`` with ``n`` trials; each column N(mean, sd) from BASE overridden by
    ``spec[model]``; the columns in ``exact`` get the identical values for every model (paired differences 0)."""
    rng = np.random.default_rng(seed)
    rows = []
    shared = {c: rng.normal(*BASE[c], n) for c in exact}
    for model, over in spec.items():
        cols = {c: shared[c] if c in exact else rng.normal(*{**BASE, **over}.get(c), n) for c in BASE}
        for k in range(n):
            rows.append({"model": model, "trial": k, **{c: float(v[k]) for c, v in cols.items()},
                         "test positives": 300, "test negatives": 3600})
    return pd.DataFrame(rows)


# ----- Table 5.2 -----------------------------------------------------------------------------------------------


def test_claim_table_5_2_rules_reproduce_the_thesis_table():
    t52 = em.table_5_2()
    assert emc.rule_table_5_2_large(t52).verdict == "[Re]"
    assert emc.rule_table_5_2_small(t52).verdict == "[Re]"


def test_claim_table_5_2_rules_fail_on_other_tables():
    t51 = em.table_5_1()
    # a Large row where m2 has far fewer TP: ΔTPR is no longer ≈ 0
    t51.loc[(t51["test set"] == "Large") & (t51.model == "m2"), ["TP", "FN"]] = (60_000, 20_400)
    assert emc.rule_table_5_2_large(em.table_5_2(t51)).verdict == "[¬Re]"
    # a Small row where the two models make the same errors: ΔTPR = ΔFPR = 0, not separable
    t51 = em.table_5_1()
    t51.loc[(t51["test set"] == "Small") & (t51.model == "m2"), ["TP", "FN", "FP", "TN"]] = (8_000, 400, 4_000, 100_000)
    assert emc.rule_table_5_2_small(em.table_5_2(t51)).verdict == "[¬Re]"


# ----- En vs Ep ---------------------------------------------------------------------------------------------------


def test_claim_fixed_threshold_curves_pass_and_fail():
    good = trials({"En": {"precision-AUC (PR-T)": (0.8, 0.02), "recall-AUC (PR-T)": (0.6, 0.02)},
                   "Ep": {"precision-AUC (PR-T)": (0.4, 0.02), "recall-AUC (PR-T)": (0.9, 0.02)}})
    assert emc.rule_fixed_threshold_curves(good).verdict == "[Re]"
    bad = trials({"En": {"precision-AUC (PR-T)": (0.4, 0.02)}, "Ep": {"precision-AUC (PR-T)": (0.8, 0.02)}})
    assert emc.rule_fixed_threshold_curves(bad).verdict == "[¬Re]"
    tie = trials({"En": {}, "Ep": {}}, n=3, exact=("precision-AUC (PR-T)", "recall-AUC (PR-T)"))
    assert emc.rule_fixed_threshold_curves(tie).verdict == "[~]"


def test_claim_better_at_matched_recall_all_outcomes():
    col = "precision at matched recall"
    better = trials({"En": {col: (0.7, 0.02)}, "Ep": {col: (0.5, 0.02)}})
    assert emc.rule_better_at_matched_recall(better).verdict == "[Re]"
    worse = trials({"En": {col: (0.5, 0.02)}, "Ep": {col: (0.7, 0.02)}})
    assert emc.rule_better_at_matched_recall(worse).verdict == "[¬Re]"
    # equally good and precisely measured: Welch cannot decide, TOST shows |Δ| < 0.02 -> contradicted
    same = trials({"En": {col: (0.6, 0.003)}, "Ep": {col: (0.6, 0.003)}}, n=20)
    d = emc.rule_better_at_matched_recall(same)
    assert d.verdict == "[¬Re]" and "no better" in d.reason
    # equally good but noisy and few: neither test decides
    noisy = trials({"En": {col: (0.6, 0.1)}, "Ep": {col: (0.6, 0.1)}}, n=3, seed=3)
    d = emc.rule_better_at_matched_recall(noisy)
    assert d.verdict == "[~]" and d.reason


def test_claim_separates_more_pass_and_fail():
    sep = trials({"En": {"precision-AUC (PR-T)": (0.8, 0.02), "ROC-AUC": (0.9, 0.02)},
                  "Ep": {"precision-AUC (PR-T)": (0.4, 0.02), "ROC-AUC": (0.9, 0.02)}}, n=10)
    assert emc.rule_separates_more(sep, "precision-AUC (PR-T)", "ROC-AUC", n_boot=500).verdict == "[Re]"
    rev = trials({"En": {"precision-AUC (PR-T)": (0.6, 0.02), "ROC-AUC": (0.95, 0.005)},
                  "Ep": {"precision-AUC (PR-T)": (0.6, 0.02), "ROC-AUC": (0.85, 0.005)}}, n=10)
    assert emc.rule_separates_more(rev, "precision-AUC (PR-T)", "ROC-AUC", n_boot=500).verdict == "[¬Re]"


def test_claim_varies_more_pass_and_fail():
    more = trials({"En": {"precision-AUC (PR-T)": (0.6, 0.1), "ROC-AUC": (0.9, 0.002)},
                   "Ep": {"precision-AUC (PR-T)": (0.5, 0.1), "ROC-AUC": (0.9, 0.002)}}, n=10)
    assert emc.rule_varies_more(more, "precision-AUC (PR-T)", "ROC-AUC", n_boot=500).verdict == "[Re]"
    less = trials({"En": {"precision-AUC (PR-T)": (0.6, 0.002), "ROC-AUC": (0.9, 0.1)},
                   "Ep": {"precision-AUC (PR-T)": (0.5, 0.002), "ROC-AUC": (0.8, 0.1)}}, n=10)
    assert emc.rule_varies_more(less, "precision-AUC (PR-T)", "ROC-AUC", n_boot=500).verdict == "[¬Re]"


def test_claim_errors_at_threshold_pass_and_fail():
    good = trials({"En": {"FN at t": (80, 5), "FP at t": (20, 5)}, "Ep": {"FN at t": (10, 3), "FP at t": (300, 20)}})
    assert emc.rule_errors_at_threshold(good).verdict == "[Re]"
    bad = trials({"En": {"FN at t": (10, 3), "FP at t": (300, 20)}, "Ep": {"FN at t": (80, 5), "FP at t": (20, 5)}})
    assert emc.rule_errors_at_threshold(bad).verdict == "[¬Re]"


def test_claim_fp_dominate_pass_and_fail():
    fp_heavy = trials({"En": {"FP at t": (200, 10), "FN at t": (20, 3)}, "Ep": {"FP at t": (500, 20),
                                                                                  "FN at t": (5, 2)}})
    assert emc.rule_fp_dominate(fp_heavy).verdict == "[Re]"
    en_fn = trials({"En": {"FP at t": (20, 3), "FN at t": (80, 5)}, "Ep": {"FP at t": (500, 20), "FN at t": (5, 2)}})
    assert emc.rule_fp_dominate(en_fn).verdict == "[¬Re]"


def test_claim_precision_below_recall_pass_and_fail():
    below = trials({"En": {"recall-AUC (PR-T)": (0.8, 0.02), "precision-AUC (PR-T)": (0.5, 0.02)}})
    assert emc.rule_precision_below_recall(below).verdict == "[Re]"
    above = trials({"En": {"recall-AUC (PR-T)": (0.5, 0.02), "precision-AUC (PR-T)": (0.8, 0.02)}})
    assert emc.rule_precision_below_recall(above).verdict == "[¬Re]"


def test_claim_abs_difference_margin_rules():
    rng = np.random.default_rng(0)
    a = rng.normal(0.6, 0.05, 12)
    # linear interpolation "wrong": differences of 0.05 are material, of 1e-5 negligible
    assert emc.rule_abs_difference(a + 0.05, a, direction="greater").verdict == "[Re]"
    d = emc.rule_abs_difference(a + 1e-5 * rng.standard_normal(12), a, direction="greater")
    assert d.verdict == "[¬Re]"
    # grid invariance: the same numbers agree, a 0.05 shift does not
    assert emc.rule_abs_difference(a + 1e-5, a, direction="less").verdict == "[Re]"
    assert emc.rule_abs_difference(a + 0.05, a, direction="less").verdict == "[¬Re]"
    # a mean |Δ| near the margin with a wide spread cannot be decided
    wide = emc.rule_abs_difference(a + np.tile([0.0005, 0.0105], 6), a, direction="greater")
    assert wide.verdict == "[~]"


def test_claim_low_recall_inflation_pass_and_fail():
    infl = trials({"En": {"precision at recall < 0.3": (0.99, 0.005), "PR-AUC share at recall ≤ 0.3": (0.4, 0.01)}})
    assert emc.rule_low_recall_inflation(infl).verdict == "[Re]"
    flat = trials({"En": {"precision at recall < 0.3": (0.7, 0.02), "PR-AUC share at recall ≤ 0.3": (0.25, 0.01)}})
    assert emc.rule_low_recall_inflation(flat).verdict == "[¬Re]"


# ----- Fig. 5.5 ---------------------------------------------------------------------------------------------------


def test_claim_highest_precision_lowest_recall_pass_and_fail():
    good = trials({"E2.a": {"precision-AUC (PR-T)": (0.6, 0.02), "recall-AUC (PR-T)": (0.8, 0.02)},
                   "E2.b": {"precision-AUC (PR-T)": (0.8, 0.02), "recall-AUC (PR-T)": (0.6, 0.02)},
                   "E2.c": {"precision-AUC (PR-T)": (0.4, 0.02), "recall-AUC (PR-T)": (0.9, 0.02)}})
    assert emc.rule_highest_precision_lowest_recall(good).verdict == "[Re]"
    bad = trials({"E2.a": {"precision-AUC (PR-T)": (0.9, 0.02)}, "E2.b": {"precision-AUC (PR-T)": (0.6, 0.02)},
                  "E2.c": {}})
    assert emc.rule_highest_precision_lowest_recall(bad).verdict == "[¬Re]"


def test_claim_largest_spread_pass_and_fail():
    col = "recall-AUC (PR-T)"
    wide = trials({"E2.a": {col: (0.8, 0.005)}, "E2.b": {col: (0.6, 0.1)}, "E2.c": {col: (0.9, 0.005)}}, n=10)
    assert emc.rule_largest_spread(wide, col, n_boot=500).verdict == "[Re]"
    narrow = trials({"E2.a": {col: (0.8, 0.1)}, "E2.b": {col: (0.6, 0.005)}, "E2.c": {col: (0.9, 0.1)}}, n=10)
    assert emc.rule_largest_spread(narrow, col, n_boot=500).verdict == "[¬Re]"


def test_claim_fail_to_separate_pass_and_fail():
    models = ("E2.a", "E2.b", "E2.c")
    same = trials({m: {"ROC-AUC": (0.9, 0.003), "PR-AUC (Alg. 4-5)": (0.6, 0.003)} for m in models}, n=10)
    assert emc.rule_fail_to_separate(same, ("ROC-AUC", "PR-AUC (Alg. 4-5)"), models).verdict == "[Re]"
    apart = trials({"E2.a": {"ROC-AUC": (0.9, 0.003)}, "E2.b": {"ROC-AUC": (0.8, 0.003)},
                    "E2.c": {"ROC-AUC": (0.9, 0.003)}}, n=10)
    assert emc.rule_fail_to_separate(apart, ("ROC-AUC",), models).verdict == "[¬Re]"


# ----- quality floor and the chapter table -------------------------------------------------------------------------


def test_claim_quality_floor_gives_na():
    untrained = trials({"En": {"ROC-AUC": (0.6, 0.02)}, "Ep": {"ROC-AUC": (0.9, 0.01)}})
    text, gate = emc.quality_gate(untrained, ("En", "Ep"))
    assert gate is not None and gate.verdict == "[n/a]" and "did not train" in gate.reason and "En" in gate.reason
    assert "En 0.6" in text
    trained = trials({"En": {}, "Ep": {}})
    assert emc.quality_gate(trained, ("En", "Ep"))[1] is None


def _results(hist_auc=(0.9, 0.01)):
    en_ep = {"En": {"ROC-AUC": hist_auc, "precision-AUC (PR-T)": (0.8, 0.02), "recall-AUC (PR-T)": (0.6, 0.02)},
             "Ep": {"ROC-AUC": hist_auc, "precision-AUC (PR-T)": (0.4, 0.02), "recall-AUC (PR-T)": (0.9, 0.02)}}
    fig55 = trials({"E2.a": {}, "E2.b": {"precision-AUC (PR-T)": (0.8, 0.02)}, "E2.c": {}})
    return {
        "table_5_2": em.table_5_2(), "tie_cases": em.tie_cases(),
        "tasks": {"histology": {"name": "phantom patches", "basis": "phantom", "trials": trials(en_ep),
                                "matched_recall": 0.6, "ordering_share": 0.9, "fig55": {"trials": fig55}},
                  "cifar": {"name": "digits", "basis": "real", "trials": trials(en_ep, seed=1), "matched_recall": 0.6,
                            "ordering_share": 0.8}},
        "checks": em.table_checks(em.table_5_2(), em.tie_cases()),
    }


def test_claim_chapter_table_is_complete_and_valid():
    cl = emc.chapter_claims(_results(), scale="test")
    ids = [c.id for c in cl.claims]
    assert len(ids) == len(set(ids))
    expected = {"t52-large", "t52-small", "fig54-inflated", "fig54-fp-fn", "fig55-h2", "fig55-recall-std",
                "fig55-roc-pr", "fig56"}
    for role in ("histology", "cifar"):
        expected |= {f"{k}-{role}" for k in ("fixed-curves", "en-better", "prt-vs-roc", "prt-vs-pr", "spread",
                                             "fn-fp", "fp-dominate", "linear-pr", "grid")}
    assert expected <= set(ids)
    for c in cl.claims:
        row = c.row()
        assert row["verdict"] in VERDICTS and row["basis"] in BASES and row["scale"] == "test"
        assert row["rule"] and row["claim"] and row["paper"]
        if row["verdict"] != "[Re]":
            assert row["reason"], row["id"]
    verdicts = {c.id: c.verdict for c in cl.claims}
    assert verdicts["t52-large"] == "[Re]" and verdicts["fixed-curves-histology"] == "[Re]"
    assert verdicts["fig56"] == "[n/a]"
    # the Small ΔPrec erratum is an erratum, not a claim or a failed check
    assert [e.where for e in cl.errata] == ["Table 5.2, Small ΔPrec"]
    assert cl.checks and all(ch.passed for ch in cl.checks)
    assert "fig56" in explain_claims(cl)


def test_claim_chapter_table_below_floor_is_na():
    cl = emc.chapter_claims(_results(hist_auc=(0.6, 0.01)), scale="test")
    verdicts = {c.id: c for c in cl.claims}
    for k in ("fixed-curves", "en-better", "prt-vs-roc", "fn-fp", "fp-dominate"):
        c = verdicts[f"{k}-histology"]
        assert c.verdict == "[n/a]" and "did not train" in c.decision.reason
        assert "quality" in c.ours
    # exact rows do not depend on models
    assert verdicts["t52-large"].verdict == "[Re]"
