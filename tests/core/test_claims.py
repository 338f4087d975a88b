"""The shared claim rules: each can pass, each can fail, and none lets a sign, a tie or a null result decide."""

import numpy as np
import pytest
from scipy import stats

from medeval.core import claims as C

pytestmark = pytest.mark.claim

RNG = np.random.default_rng(20261123)


def test_claim_difference_passes_on_a_real_effect_and_fails_against_it():
    a, b = RNG.normal(1.0, 0.5, 20), RNG.normal(0.0, 0.5, 20)
    assert C.decide_difference(a, b, direction="greater").verdict == "[Re]"
    assert C.decide_difference(a, b, direction="less").verdict == "[¬Re]"
    d = C.decide_difference(a, b, direction="greater")
    # the p-value is scipy's Welch test
    assert d.p_value == pytest.approx(stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue)


def test_claim_difference_sign_of_noise_is_inconclusive_with_needed_n():
    a, b = [0.80, 0.84], [0.79, 0.83]  # a noisy difference with the claimed sign
    d = C.decide_difference(a, b, direction="greater")
    assert d.verdict == "[~]" and d.needed_n is not None and d.needed_n > 2
    assert str(d.needed_n) in d.reason.replace(",", "")


def test_claim_difference_tie_and_too_few_runs_never_support():
    assert C.decide_difference([1.0, 1.0], [1.0, 1.0], direction="greater").verdict == "[~]"
    assert "tie" in C.decide_difference([1.0, 1.0], [1.0, 1.0], direction="less").reason
    assert C.decide_difference([0.9], [0.1], direction="greater").verdict == "[~]"
    assert C.decide_difference([0.9, np.nan], [0.1, 0.2], direction="greater").verdict == "[~]"


def test_claim_paired_passes_fails_and_ties():
    d = RNG.normal(0.5, 0.2, 15)
    assert C.decide_paired(d, direction="greater").verdict == "[Re]"
    assert C.decide_paired(d, direction="less").verdict == "[¬Re]"
    assert C.decide_paired(np.zeros(5), direction="greater").verdict == "[~]"
    assert C.decide_paired([0.1, -0.1, 0.05, -0.04], direction="greater").verdict == "[~]"


def test_claim_trend_passes_fails_and_is_inconclusive_on_noise():
    x = np.arange(12)
    assert C.decide_trend(x, x + RNG.normal(0, 0.5, 12), direction="greater").verdict == "[Re]"
    assert C.decide_trend(x, -x + RNG.normal(0, 0.5, 12), direction="greater").verdict == "[¬Re]"
    d = C.decide_trend([1, 2, 3, 4], [0.2, 0.1, 0.3, 0.25], direction="greater")
    assert d.verdict == "[~]" and d.needed_n is not None
    assert C.decide_trend([1, 2, 3], [1, 1, 1], direction="greater").verdict == "[~]"
    assert C.decide_trend(x, x, direction="less", method="spearman").verdict == "[¬Re]"


def test_claim_proportions_contrast_with_control():
    assert C.decide_proportions(40, 100, 10, 100, direction="greater").verdict == "[Re]"
    # the same share in the control group: no contrast, so no support
    assert C.decide_proportions(50, 100, 50, 100, direction="greater").verdict == "[~]"
    assert C.decide_proportions(5, 100, 40, 100, direction="greater").verdict == "[¬Re]"
    with pytest.raises(ValueError, match="k <= n"):
        C.decide_proportions(5, 4, 1, 4, direction="greater")


def test_claim_equivalence_inside_outside_and_undecided():
    assert C.decide_equivalence(0.001, 0.002, margin=0.01, n=2000).verdict == "[Re]"
    assert C.decide_equivalence(0.05, 0.002, margin=0.01, n=2000).verdict == "[¬Re]"
    d = C.decide_equivalence(0.004, 0.004, margin=0.01, n=300)
    assert d.verdict == "[~]" and d.needed_n > 300
    # a large noisy estimate: not equivalent, not shown different either
    assert C.decide_equivalence(0.02, 0.02, margin=0.01, n=10).verdict == "[~]"


def test_claim_bound_by_interval():
    assert C.decide_bound(0.3, 0.2, 0.4, bound=0.9, direction="less").verdict == "[Re]"
    assert C.decide_bound(0.95, 0.93, 0.97, bound=0.9, direction="less").verdict == "[¬Re]"
    assert C.decide_bound(0.9, 0.85, 0.95, bound=0.9, direction="less").verdict == "[~]"
    assert C.decide_bound(0.9, 0.9, 0.9, bound=0.9, direction="greater").verdict == "[~]"  # exact tie


def test_claim_tolerance_and_exact():
    assert C.decide_tolerance(0.1234, 0.123, tolerance=5e-4).verdict == "[Re]"
    assert C.decide_tolerance(0.13, 0.123, tolerance=5e-4).verdict == "[¬Re]"
    assert C.decide_exact(True, test="recount", reason_if_not="x").verdict == "[Re]"
    assert C.decide_exact(False, test="recount", reason_if_not="the recount differs").verdict == "[¬Re]"


def test_claim_quality_floor_blocks_models_that_did_not_train():
    failed, d = C.below_quality_floor({"max": 0.91, "mean": 0.64, "lse": float("nan")}, 0.7, measure="CV AUC")
    assert failed == ["mean", "lse"] and d.verdict == "[n/a]" and "did not train" in d.reason and "0.640" in d.reason
    assert C.below_quality_floor({"max": 0.91}, 0.7, measure="CV AUC") == ([], None)


def test_claim_combine_all_parts_must_hold():
    re, not_re = C.Decision("[Re]", "t"), C.Decision("[¬Re]", "t", reason="r")
    inc, na = C.Decision("[~]", "t", reason="more n"), C.Decision("[n/a]", "t", reason="absent")
    assert C.combine([re, re]).verdict == "[Re]"
    assert C.combine([re, not_re, inc]).verdict == "[¬Re]"
    assert C.combine([re, inc]).verdict == "[~]"
    assert C.combine([re, na]).verdict == "[~]"
    assert C.combine([na, na]).verdict == "[n/a]"


def test_claim_records_validate_their_vocabulary():
    with pytest.raises(ValueError, match="verdict"):
        C.Decision("[?]", "t")
    with pytest.raises(ValueError, match="basis"):
        C.Claim("a", "c", "w", "p", "r", "o", "made-up", "default", C.Decision("[Re]", "t"))
    cl = C.ClaimList("default")
    cl.claim("x1", "c", where="w", paper="p", rule="r", ours="o", basis="phantom", decision=C.Decision("[Re]", "t"))
    with pytest.raises(ValueError, match="duplicate"):
        cl.claim("x1", "c", where="w", paper="p", rule="r", ours="o", basis="phantom", decision=C.Decision("[Re]", "t"))
    assert C.verdict_counts(cl.claims) == {"[Re]": 1, "[¬Re]": 0, "[~]": 0, "[n/a]": 0}


def test_sample_size_formulas_match_known_values():
    # Cohen (1988): d = 0.5, one-sided α = 0.05, power 0.8 -> 50 per group (normal approx. 49.5)
    assert C.two_sample_n_for_power(0.5) in (50, 51)
    assert C.two_sample_n_for_power(0.0) is None
    # r = 0.3, one-sided: ((1.645 + 0.842) / atanh 0.3)^2 + 3 = 67.1 -> 68
    assert C.correlation_n_for_power(0.3) == 68
    assert C.one_sample_n_for_power(0.5) in (26, 27)


# ---- every rule family under a simulated null: false [Re] and false [¬Re] at most α (within Monte Carlo error) ----

NULL_DRAWS = 2000


def _rates(decisions) -> tuple[float, float]:
    verdicts = [d.verdict for d in decisions]
    return verdicts.count("[Re]") / len(verdicts), verdicts.count("[¬Re]") / len(verdicts)


def _bound(alpha: float = C.DEFAULT_ALPHA, draws: int = NULL_DRAWS) -> float:
    return alpha + 3 * (alpha * (1 - alpha) / draws) ** 0.5


@pytest.mark.claim
@pytest.mark.parametrize("n", [3, 10])
def test_null_calibration_of_the_difference_and_paired_rules(n):
    rng = np.random.default_rng(n)
    diff = [C.decide_difference(rng.normal(0, 1, n), rng.normal(0, 1, n), direction="greater")
            for _ in range(NULL_DRAWS)]
    paired = [C.decide_paired(rng.normal(0, 1, n), direction="less") for _ in range(NULL_DRAWS)]
    for decisions in (diff, paired):
        false_re, false_not_re = _rates(decisions)
        assert false_re <= _bound() and false_not_re <= _bound(), (false_re, false_not_re)


@pytest.mark.claim
def test_null_calibration_of_the_trend_and_proportion_rules():
    rng = np.random.default_rng(7)
    x = np.arange(6)
    trend = [C.decide_trend(x, rng.normal(0, 1, 6), direction="greater") for _ in range(NULL_DRAWS)]
    shares = [C.decide_proportions(int(rng.binomial(40, 0.3)), 40, int(rng.binomial(40, 0.3)), 40,
                                   direction="greater") for _ in range(NULL_DRAWS)]
    for decisions in (trend, shares):
        false_re, false_not_re = _rates(decisions)
        assert false_re <= _bound() and false_not_re <= _bound(), (false_re, false_not_re)


@pytest.mark.claim
@pytest.mark.parametrize("parts", [2, 6, 11])
def test_null_calibration_of_combine_holds_across_its_parts(parts):
    """k parts under the null: without a correction any of k parts contradicting gives 1 − 0.95^k false [¬Re]
    (43 % at k = 11, as in ch1 ss-above-apj); Holm keeps the row at α."""
    rng = np.random.default_rng(parts)
    draws = 600
    rows = [C.combine([C.decide_difference(rng.normal(0, 1, 4), rng.normal(0, 1, 4), direction="greater")
                       for _ in range(parts)]) for _ in range(draws)]
    false_re, false_not_re = _rates(rows)
    assert false_re <= _bound(draws=draws) and false_not_re <= _bound(draws=draws), (false_re, false_not_re)
    assert f"{parts} parts" in rows[0].test or parts == 1


@pytest.mark.claim
@pytest.mark.parametrize("direction", ["greater", "less"])
def test_null_calibration_of_the_bound_rule(direction):
    """decide_bound on a 95 % t-interval of a mean whose true value is the bound itself (the least favourable
    null for both verdicts): each of [Re] and [¬Re] needs the whole interval on one side, α/2 each."""
    rng = np.random.default_rng(11)
    bound, n = 0.3, 6
    q = stats.t.ppf(0.975, n - 1)
    decisions = []
    for _ in range(NULL_DRAWS):
        x = rng.normal(bound, 0.1, n)
        half = q * x.std(ddof=1) / np.sqrt(n)
        decisions.append(C.decide_bound(x.mean(), x.mean() - half, x.mean() + half, bound=bound,
                                        direction=direction))
    false_re, false_not_re = _rates(decisions)
    assert false_re <= _bound() and false_not_re <= _bound(), (false_re, false_not_re)


@pytest.mark.claim
@pytest.mark.parametrize("true_difference", [0.1, -0.1, 0.0])
def test_null_calibration_of_the_equivalence_rule(true_difference):
    """TOST with margin 0.1 on the mean of n = 8 differences: at a true difference on the margin (±0.1, the null of
    equivalence) it returns [Re] at most α of the time; at a true difference of 0 (equivalent, the null of
    [¬Re]) it returns [¬Re] at most α of the time."""
    rng = np.random.default_rng(int(100 * true_difference) + 50)
    margin, n = 0.1, 8
    decisions = []
    for _ in range(NULL_DRAWS):
        d = rng.normal(true_difference, 0.15, n)
        decisions.append(C.decide_equivalence(d.mean(), d.std(ddof=1) / np.sqrt(n), margin=margin, df=n - 1, n=n))
    false_re, false_not_re = _rates(decisions)
    if true_difference:
        assert false_re <= _bound(), false_re
    else:
        assert false_not_re <= _bound(), false_not_re


@pytest.mark.claim
def test_null_calibration_of_nested_combines():
    """Rows combined per dataset and then across datasets (ch1's threshold sweep, per-class rows): each inner row
    holds its size, and without passing its p-value on, the outer combine would add their chances (4 inner rows
    at α: about 1 − 0.95^4 = 19 % false [¬Re]). The combined row's p_against keeps the whole row at α."""
    rng = np.random.default_rng(3)
    draws = 800
    rows = [C.combine([C.combine([C.decide_difference(rng.normal(0, 1, 5), rng.normal(0, 1, 5), direction="greater")
                                  for _ in range(2)]) for _ in range(4)]) for _ in range(draws)]
    false_re, false_not_re = _rates(rows)
    assert false_re <= _bound(draws=draws) and false_not_re <= _bound(draws=draws), (false_re, false_not_re)
    strong = C.combine([C.decide_difference([0.1, 0.12, 0.11, 0.13], [0.9, 0.91, 0.92, 0.9], direction="greater"),
                        C.decide_paired([0.2, 0.3, 0.25], direction="greater")])
    assert strong.verdict == "[¬Re]" and strong.p_against < 0.01
    assert C.combine([strong, C.Decision("[Re]", "t", p_against=0.9)]).verdict == "[¬Re]"
    exact = C.combine([C.decide_tolerance(0.2, 0.1, tolerance=0.01), C.decide_paired([0.2, 0.3], direction="greater")])
    assert exact.verdict == "[¬Re]" and exact.p_against is None  # an exact miss is not a p-value


def test_combine_still_contradicts_on_a_strong_part_and_on_an_exact_one():
    strong = C.decide_difference([0.1, 0.12, 0.11, 0.13], [0.9, 0.91, 0.92, 0.9], direction="greater")
    weak = [C.decide_difference([0.5, 0.6, 0.55], [0.52, 0.58, 0.57], direction="greater") for _ in range(5)]
    assert strong.verdict == "[¬Re]" and strong.p_against < 0.001
    assert C.combine([strong, *weak]).verdict == "[¬Re]"
    exact = C.decide_tolerance(0.2, 0.1, tolerance=0.01)
    assert C.combine([exact, *weak]).verdict == "[¬Re]"  # no test, no correction: an exact miss is a miss
    borderline = C.Decision("[¬Re]", "t", p_against=0.03, reason="r")
    demoted = C.combine([borderline, C.Decision("[Re]", "t", p_against=0.9)])
    assert demoted.verdict == "[~]" and "Holm" in demoted.reason


def test_constant_groups_and_constant_differences_never_decide_by_sign():
    """[1.0, 1.0] vs [0.999, 0.999] is a ceiling, not evidence: no spread, no test, [~] with the lean."""
    d = C.decide_difference([1.0, 1.0], [0.999, 0.999], direction="greater")
    assert d.verdict == "[~]" and "leans towards the claim" in d.reason and "no spread" in d.effect
    assert C.decide_difference([0.5, 0.5], [0.9, 0.9], direction="greater").verdict == "[~]"
    p = C.decide_paired([0.01, 0.01, 0.01], direction="less")
    assert p.verdict == "[~]" and "leans against the claim" in p.reason


def test_an_undecided_row_says_which_way_it_leans_and_the_n_for_a_stated_effect():
    towards = C.decide_difference([0.80, 0.86, 0.83], [0.78, 0.84, 0.79], direction="greater")
    assert towards.verdict == "[~]" and towards.reason.startswith("leans towards the claim")
    against = C.decide_difference([0.78, 0.84, 0.79], [0.80, 0.86, 0.83], direction="greater")
    assert against.reason.startswith("leans against the claim")
    flat = C.decide_difference([0.5, 0.6, 0.4, 0.55], [0.5, 0.61, 0.4, 0.54], direction="greater")
    assert flat.reason.startswith("no effect seen")
    # the n is for the stated effect (d = 0.5), the same whatever was observed
    assert towards.needed_n == against.needed_n == C.two_sample_n_for_power(0.5) and "d = 0.50" in towards.reason
    big = C.decide_difference([0.5, 0.6, 0.4], [0.5, 0.61, 0.4], direction="greater", effect_of_interest=1.0)
    assert big.needed_n == C.two_sample_n_for_power(1.0) < towards.needed_n


def test_key_findings_are_generated_from_the_rows_and_never_announce_a_seed_sensitive_verdict():
    from medeval.core.claims import key_findings

    def row(i, verdict, basis="phantom", reason=""):
        return {"id": f"c{i}", "claim": f"Claim {i}.", "verdict": verdict, "basis": basis, "reason": reason}

    rows = [row(1, "[Re]"), row(2, "[¬Re]", reason="the difference is significant against the claim (p = 0.002). "
                                                     "More text."),
            row(3, "[~]", reason="leans against the claim (d = -0.4)"), row(4, "[~]", reason="no effect seen (d = 0.01)"),
            row(5, "[n/a]", reason="did not train: E1.a has 1 of 4 runs above the floor"), row(6, "[Re]", "exact"),
            row(7, "[Re]")]
    text = key_findings(rows, seed_sensitive={"c7"})
    assert text.startswith("Of 6 empirical claims, **2 reproduced**, **1 contradicted**, 2 inconclusive at this scale "
                           "and 1 not testable here; 1 of 1 exact recomputations")
    assert '* Claim 2 (<a href="#claim-c2">c2</a>): The difference is significant against the claim (p = 0.002).' in text
    assert "More text" not in text
    assert '1 leans against the claim (<a href="#claim-c3">c3</a>); 1 no effect seen (<a href="#claim-c4">c4</a>)' in text
    assert 'did not train (<a href="#claim-c5">c5</a>)' in text
    reproduced = next(line for line in text.splitlines() if line.startswith("**Reproduced:**"))
    assert "c1" in reproduced and "c7" not in reproduced  # seed-sensitive: listed apart, not as a finding
    assert "**Seed-sensitive**" in text and '<a href="#claim-c7">c7</a> [Re]' in text
    assert key_findings([row(8, "[¬Re]", "exact", reason="printed 882, recounted 880.")]).count(
        '<a href="#claim-c8">c8</a>, exact recomputation') == 1
    assert key_findings([]) == "This chapter decides no claims."


def test_blocked_trend_sees_trends_within_blocks_not_between_their_levels():
    """The stratified Mann–Kendall test decides on within-block trends: runs at different levels with no trend
    inside are not a trend (a pooled Kendall τ over all points is fooled when the levels line up with x's order
    within the pooled sample), a consistent within-run rise is, and under the null it holds its size."""
    from medeval.core.claims import decide_blocked_trend, decide_trend

    x = np.tile(np.arange(6.0), 4)
    blocks = np.repeat(np.arange(4), 6)
    rise = np.concatenate([np.arange(6.0) * 0.1 + b for b in range(4)])
    assert decide_blocked_trend(x, rise, blocks, direction="greater").verdict == "[Re]"
    assert decide_blocked_trend(x, rise, blocks, direction="less").verdict == "[¬Re]"
    # a single block without ties: S and its variance are Kendall's (τ = S / (n(n-1)/2)), as scipy computes τ
    from medeval.core.claims import _kendall_s

    rng = np.random.default_rng(0)
    y = rng.normal(size=12)
    s, var = _kendall_s(np.arange(12.0), y)
    assert s / 66 == pytest.approx(stats.kendalltau(np.arange(12.0), y)[0]) and var == pytest.approx(12 * 11 * 29 / 18)
    # control: levels differ between runs, x is confounded with the run inside the pooled sample, no trend within
    xc = np.concatenate([np.arange(3.0) + 3 * b for b in range(4)])
    yc = np.concatenate([np.full(3, float(b)) + rng.normal(0, 0.01, 3) for b in range(4)])
    bc = np.repeat(np.arange(4), 3)
    assert decide_trend(xc, yc, direction="greater").verdict == "[Re]"  # pooled: fooled by the levels
    assert decide_blocked_trend(xc, yc, bc, direction="greater").verdict != "[Re]"
    # null calibration: false [Re] and false [¬Re] within α + 3 SE
    draws, fr, fn = 1500, 0, 0
    for _ in range(draws):
        yn = rng.normal(size=24) + np.repeat(rng.normal(0, 3, 4), 6)
        v = decide_blocked_trend(x, yn, blocks, direction="greater").verdict
        fr += v == "[Re]"
        fn += v == "[¬Re]"
    se = np.sqrt(0.05 * 0.95 / draws)
    assert fr / draws <= 0.05 + 3 * se and fn / draws <= 0.05 + 3 * se, (fr, fn)


def test_a_check_is_tri_state_and_an_undecided_check_is_neither_passed_nor_failed():
    from medeval.core.claims import Check, ClaimList, check_outcome, explain
    from medeval.runtime.notebook import checks_display

    assert [check_outcome(v) for v in ("[Re]", "[¬Re]", "[~]", "[n/a]")] == [True, False, None, None]
    with pytest.raises(ValueError, match="unknown verdict"):
        check_outcome("Re")
    with pytest.raises(TypeError, match="True, False or None"):
        Check("c", "w", "e", "x", "yes")
    cl = ClaimList(scale="smoke")
    for verdict in ("[Re]", "[¬Re]", "[~]"):
        cl.check(f"design check {verdict}", where="§1", expected="e", computed="x", passed=check_outcome(verdict))
    assert [c.outcome for c in cl.checks] == ["pass", "FAIL", "undecided"]
    text = explain(cl)
    assert "Check failed: design check [¬Re]" in text and "Check undecided at this scale: design check [~]" in text
    assert "design check [Re]" not in text
    table = checks_display([c.row() for c in cl.checks])
    assert repr(table).splitlines() == ["pass design check [Re]", "FAIL design check [¬Re]",
                                       "undecided design check [~]"]
    assert "<th>outcome</th>" in table._repr_html_()


def test_the_claims_table_never_prints_an_empty_n():
    from medeval.runtime.notebook import claims_display

    row = {"id": "x", "claim": "c", "where": "§1", "paper": "p", "ours": "o", "test": "—", "effect": "", "n": "",
           "basis": "phantom", "scale": "smoke", "verdict": "[n/a]", "reason": "r"}
    html = claims_display([row])._repr_html_()
    assert "n = ;" not in html and "n = <" not in html and "phantom; smoke" in html
    assert "n = 12 runs; phantom; smoke" in claims_display([{**row, "n": "12 runs"}])._repr_html_()


def test_the_why_section_gives_mechanisms_and_names_the_inconclusive_rows_without_repeating_statistics():
    from medeval.core.claims import ClaimList, Decision, explain

    cl = ClaimList(scale="smoke")
    for i, (verdict, reason) in enumerate([("[Re]", ""), ("[¬Re]", "the phantom's prior sets the threshold"),
                                           ("[~]", "leans towards the claim; about 40 runs would decide d = 0.5"),
                                           ("[~]", "no effect seen"), ("[n/a]", "no real boxes here")]):
        cl.claim(f"c{i}", f"claim {i}", where="§1", paper="p", rule="r", ours=f"ours {i} with Δ = 0.5",
                 basis="phantom", decision=Decision(verdict, "Welch t-test", "Δ = 0.5 [0.1, 0.9]", "4 runs", reason))
    text = explain(cl)
    lines = text.splitlines()
    assert lines[0] == '* **Contradicted**, <a href="#claim-c1">c1</a>: Claim 1. The phantom\'s prior sets the threshold.'
    assert lines[1] == '* **Not testable here** (1): no real boxes here (<a href="#claim-c4">c4</a>).'
    assert lines[2].startswith('* **Inconclusive at this scale** (2): <a href="#claim-c2">c2</a>, <a href="#claim-c3">')
    assert "Δ = 0.5" not in text and "c0" not in text and len(lines) == 3  # no statistics repeated, [Re] not listed
    # a contradiction that other master seeds do not share is not presented as a finding
    sensitive = explain(cl, seed_sensitive={"c1"}).splitlines()[0]
    assert sensitive.startswith('* **Contradicted at this seed only** (seed-sensitive, not a finding), '
                                '<a href="#claim-c1">c1</a>: Claim 1.')


def test_the_power_searches_evaluate_scipy_stats_own_functions_bit_for_bit():
    """``_t_quantile`` and ``_noncentral_t_sf`` skip scipy.stats' argument checks (ten times the cost of the function
    in the power searches) and must give the very numbers scipy.stats gives, so that every 'n would decide it' in
    the book stays as recorded."""
    rng = np.random.default_rng(3)
    for _ in range(3000):
        df, q = float(rng.integers(1, 500)), float(rng.uniform(0.5, 0.99999))
        x, nc = float(rng.normal(0, 8)), float(rng.uniform(0, 60))
        assert C._t_quantile(q, df) == float(stats.t.ppf(q, df)), (q, df)
        assert C._noncentral_t_sf(x, df, nc) == float(stats.nct.sf(x, df, nc)), (x, df, nc)
    for x, df, nc in ((1e6, 3.0, 0.0), (-1e6, 3.0, 0.0), (40.0, 2.0, 35.0), (0.0, 1e5, 0.0)):  # tails, large df
        assert C._noncentral_t_sf(x, df, nc) == float(stats.nct.sf(x, df, nc)), (x, df, nc)

    def two_sample_with_scipy_stats(d, alpha=0.05, power=0.8):
        return C._smallest_n(lambda n: float(stats.nct.sf(stats.t.ppf(1 - alpha, 2 * n - 2), 2 * n - 2,
                                                          d * np.sqrt(n / 2))), power)

    for d in (0.05, 0.2, 0.5, 1.3, 4.0):
        assert C.two_sample_n_for_power(d) == two_sample_with_scipy_stats(d)
