"""Chapter 3's claim rules on constructed inputs: each can pass ([Re]) and each can fail ([¬Re] or [~])."""

import numpy as np
import pandas as pd
import pytest

from medeval.core.claims import explain as explain_claims
from medeval.experiments import eve
from medeval.experiments import eve_claims as ec
from medeval.metrics.variance import naive_binomial_variance

pytestmark = pytest.mark.claim

METRICS = ("accuracy", "sensitivity", "specificity", "auc")


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------------------------------------------
# constructed inputs


def drawstring_frame(slope=0.0, noise=0.05, sizes=(25, 50, 100, 155), n_parents=40, neve_ratio_small=0.7,
                     neve_ratio_large=0.95, n=25, seed=0, neve_noise=0.02):
    """Per-parent EVE = 0.004 (1 + slope (P − Pmin)/(Pmax − Pmin)) with relative noise; NEVE = ratio × EVE."""
    r = rng(seed)
    rows = []
    valid = [p for p in sizes if p >= 2 * n]
    for p in sizes:
        frac = (p - min(valid)) / max(max(valid) - min(valid), 1)
        ratio = neve_ratio_small + (neve_ratio_large - neve_ratio_small) * frac
        for k in range(n_parents):
            e = 0.004 * (1 + slope * frac) * (1 + noise * r.standard_normal())
            row = {"parent_size": p, "parent": k, "eve_note": ""}
            for m in METRICS:
                row[f"eve_{m}"] = e if p >= 2 * n else np.nan
                row[f"neve_{m}"] = ratio * e * (1 + neve_noise * r.standard_normal()) if p >= 2 * n else 1e-4
                row[f"mean_{m}"] = 0.85
            row["eve"], row["neve"], row["mean_score"] = row["eve_accuracy"], row["neve_accuracy"], 0.85
            rows.append(row)
    return pd.DataFrame(rows)


def truth_rows(var_truth=0.01, var_eve=0.01, sizes=(10, 20), n_draws=4000, n_pools=400, pairs=10, seed=0):
    """truth_summary rows from normal draws (variance var_truth / n·10) and pools (var_eve / n·10)."""
    r = rng(seed)
    out = []
    for n in sizes:
        scale = 10 / n
        draws = 0.8 + np.sqrt(var_truth * scale) * r.standard_normal(n_draws)
        pools = 0.8 + np.sqrt(var_eve * scale) * r.standard_normal((n_pools, pairs, 2))
        out.append(eve.truth_summary(draws, pools, n))
    return out


def char_frame(eve_to_binomial=2.0, nfw_to_eve=0.5, sizes=(10, 25, 50, 100), pairs=300, within_corr=None,
               mean_by_size=None, seed=0):
    """Characterization rows: pair scores with variance eve_to_binomial × p(1−p)/2n; optional within-pair
    correlations per size (for NEVE/EVE) and means per size."""
    r = rng(seed)
    rows = []
    for i, n in enumerate(sizes):
        p = 0.8 if mean_by_size is None else mean_by_size[i]
        var = eve_to_binomial * naive_binomial_variance(p, 2 * n)
        rho = 0.0 if within_corr is None else within_corr[i]
        z = r.standard_normal((pairs, 2))
        z[:, 1] = rho * z[:, 0] + np.sqrt(1 - rho**2) * z[:, 1]
        s = p + np.sqrt(var) * z
        nfw = np.full(2 * pairs, nfw_to_eve * var) * (1 + 0.05 * r.standard_normal(2 * pairs))
        e = float(np.mean(0.5 * (s[:, 0] - s[:, 1]) ** 2))
        rows.append({"subset_size": n, "mean_score": float(s.mean()), "eve": e, "neve": float(np.var(s, ddof=1)),
                     "nfw": float(nfw.mean()), "binomial": naive_binomial_variance(float(s.mean()), 2 * n),
                     "pair_scores": s, "nfw_subset": nfw, "note": ""})
    return eve.characterization_ratios(pd.DataFrame(rows))


def strategy_frames(sizes=(10, 25), pairs=400, sd=None, bias=None, seed=0):
    """Strategy rows with per-strategy SD and bias against LOO (defaults: repeated quieter, 3-fold biased down).

    Kx1 shares its subset-level component with Kx10 (the same subsets), so their pair variances are paired."""
    r = rng(seed)
    sd = sd or {"LOO": 0.10, "10x1": 0.095, "10x10": 0.085, "3x1": 0.095, "3x10": 0.07}
    bias = bias or {"LOO": 0.0, "10x1": 0.0, "10x10": 0.0, "3x1": -0.02, "3x10": -0.02}
    frames = []
    for n in sizes:
        k = 10 / n
        base = r.standard_normal((pairs, 2))
        scores = {}
        for name in ("10x1", "10x10", "3x1", "3x10", "LOO"):
            own = r.standard_normal((pairs, 2))
            common = 0.06 * np.sqrt(k)
            extra = np.sqrt(max(sd[name] ** 2 * k - common**2, 0))
            scores[name] = 0.8 + bias[name] + common * base + extra * own
        frames.append(eve.strategy_frame(scores, n))
    return pd.concat(frames, ignore_index=True)


# ------------------------------------------------------------------------------------------------------------
# drawstring


def test_claim_eve_flat_passes_and_fails():
    d, ours = ec.decide_eve_flat(drawstring_frame(slope=0.0, noise=0.05))
    assert d.verdict == "[Re]" and "TOST" in d.test and "%" in ours
    assert ec.decide_eve_flat(drawstring_frame(slope=0.6, noise=0.05))[0].verdict == "[¬Re]"
    assert ec.decide_eve_flat(drawstring_frame(slope=0.0, noise=1.5, n_parents=4))[0].verdict == "[~]"
    # a single valid parent size: nothing to fit
    assert ec.decide_eve_flat(drawstring_frame(sizes=(25, 50)))[0].verdict == "[n/a]"


def test_claim_eve_flat_reads_other_metrics():
    frame = drawstring_frame(slope=0.0)
    frame["eve_auc"] = frame["eve_auc"] * (1 + 2.0 * (frame["parent_size"] - 50) / 105)
    assert ec.decide_eve_flat(frame, "accuracy")[0].verdict == "[Re]"
    assert ec.decide_eve_flat(frame, "auc")[0].verdict == "[¬Re]"


def test_claim_neve_finite_bias_passes_and_fails():
    assert ec.decide_neve_finite_bias(drawstring_frame(neve_ratio_small=0.7))[0].verdict == "[Re]"
    assert ec.decide_neve_finite_bias(drawstring_frame(neve_ratio_small=1.3))[0].verdict == "[¬Re]"
    assert ec.decide_neve_finite_bias(drawstring_frame(neve_ratio_small=1.0))[0].verdict in ("[~]", "[¬Re]", "[Re]")


def test_claim_neve_to_eve_passes_and_fails():
    d, ours = ec.decide_neve_to_eve(drawstring_frame(neve_ratio_large=0.97))
    assert d.verdict == "[Re]" and "τ" in d.effect and "P = 155" in ours
    d, ours = ec.decide_neve_to_eve(drawstring_frame(neve_ratio_large=0.5))  # falls away from EVE
    assert d.verdict == "[¬Re]" and "0.50" in ours
    noisy = drawstring_frame(neve_ratio_large=0.9, n_parents=3, noise=0.3, neve_noise=0.4)
    assert ec.decide_neve_to_eve(noisy)[0].verdict == "[~]"
    # rises towards 1 but ends far below it: the trend alone is not convergence
    assert ec.decide_neve_to_eve(drawstring_frame(neve_ratio_small=0.3, neve_ratio_large=0.6))[0].verdict == "[¬Re]"


def test_claim_neve_to_eve_is_not_reproduced_on_its_control():
    """The control: NEVE/EVE flat in P (no approach at all), at a level inside the margin or at exactly 1; the old
    rule (closeness at the largest P only) gave [Re] here."""
    for level in (0.9, 1.0):
        for seed in range(5):
            flat = drawstring_frame(neve_ratio_small=level, neve_ratio_large=level, neve_noise=0.1, seed=seed)
            d, _ = ec.decide_neve_to_eve(flat)
            assert d.verdict != "[Re]", (level, seed, d)


def test_neve_to_eve_null_calibration():
    """Under the null of no approach (NEVE/EVE = 1 at every P, per-parent noise), false [Re] and false [¬Re] each
    occur in at most α + 3 Monte-Carlo SE of the draws."""
    draws, re, nre = 300, 0, 0
    for seed in range(draws):
        v = ec.decide_neve_to_eve(drawstring_frame(neve_ratio_small=1.0, neve_ratio_large=1.0, neve_noise=0.1,
                                                   n_parents=20, seed=seed))[0].verdict
        re += v == "[Re]"
        nre += v == "[¬Re]"
    bound = 0.05 + 3 * np.sqrt(0.05 * 0.95 / draws)
    assert re / draws <= bound and nre / draws <= bound, (re, nre)


# ------------------------------------------------------------------------------------------------------------
# known truth


def test_claim_eve_unbiased_passes_and_fails():
    d, ours = ec.decide_unbiased(truth_rows(0.01, 0.01))
    assert d.verdict == "[Re]" and "n=10" in ours and "n=20" in ours
    assert ec.decide_unbiased(truth_rows(0.01, 0.013))[0].verdict == "[¬Re]"  # 30 % too high
    assert ec.decide_unbiased(truth_rows(0.01, 0.01, n_draws=200, n_pools=20))[0].verdict == "[~]"
    assert ec.decide_unbiased([])[0].verdict == "[n/a]"


def test_claim_half_eve_unbiased_passes_and_fails():
    assert ec.decide_unbiased(truth_rows(0.01, 0.01, n_draws=8000), half=True)[0].verdict == "[Re]"
    assert ec.decide_unbiased(truth_rows(0.01, 0.007, n_draws=8000), half=True)[0].verdict == "[¬Re]"


def test_claim_eve_conservative_passes_and_fails():
    rows = truth_rows(0.01, 0.01, sizes=(10, 20))  # variance halves from n=10 to n=20: EVE(10) > σ²(20)
    d, ours = ec.decide_conservative(rows)
    assert d.verdict == "[Re]" and "EVE(10)" in ours
    low = truth_rows(0.01, 0.004, sizes=(10, 20))  # EVE biased far down: below σ²(20)
    assert ec.decide_conservative(low)[0].verdict == "[¬Re]"
    assert ec.decide_conservative(truth_rows(sizes=(10, 25)))[0].verdict == "[n/a]"


def test_claim_eve_ci_coverage_passes_and_fails():
    r = rng(1)
    draws = {10: 0.8 + 0.1 * r.standard_normal(4000)}
    assert ec.decide_eve_coverage(draws, {10: 0.01})[0].verdict == "[Re]"
    assert ec.decide_eve_coverage(draws, {10: 0.0025})[0].verdict == "[¬Re]"  # half the SD: ~68 % coverage
    assert ec.decide_eve_coverage({10: draws[10][:50]}, {10: 0.0085})[0].verdict == "[~]"


def test_claim_binomial_undercovers_passes_and_fails():
    r = rng(2)
    wide = {10: np.clip(0.8 + 0.15 * r.standard_normal(3000), 0, 1)}  # SD 0.15 ≫ √(0.16/20) = 0.089
    assert ec.decide_binomial_undercovers(wide)[0].verdict == "[Re]"
    narrow = {10: np.clip(0.8 + 0.03 * r.standard_normal(3000), 0, 1)}
    assert ec.decide_binomial_undercovers(narrow)[0].verdict == "[¬Re]"


def _null_runs(seed=3, pools=300, pairs=5):
    """Two runs of one algorithm on the same pairs: a shared subset component (SD 0.08) plus independent
    partition noise (SD 0.02) per run, so a single run's SD is about 0.082."""
    r = rng(seed)
    subset = r.standard_normal((pools, pairs, 2)) * 0.08
    a = 0.8 + subset + 0.02 * r.standard_normal((pools, pairs, 2))
    b = 0.8 + subset + 0.02 * r.standard_normal((pools, pairs, 2))
    return a, b


def test_claim_paired_test_valid_passes_and_fails():
    a, b = _null_runs()
    d, ours = ec.decide_paired_valid({10: (a, b)}, {10: 0.082})
    assert d.verdict == "[Re]" and "under the null" in ours and "at δ = 0.082" in ours
    assert "power" in d.effect and "type-I error" in d.effect
    assert ec.decide_paired_valid({10: (a, b + 0.05)}, {10: 0.082})[0].verdict == "[¬Re]"  # not a null: rejects often
    # a stated difference the test cannot resolve with 5 pairs: power far below 0.8
    assert ec.decide_paired_valid({10: (a, b)}, {10: 0.01})[0].verdict == "[¬Re]"
    assert ec.decide_paired_valid({10: (a[:, :0], b[:, :0])}, {10: 0.082})[0].verdict == "[n/a]"
    # no stated difference (truth draws absent): the power part is [n/a], so the row is undecided
    assert ec.decide_paired_valid({10: (a, b)}, {})[0].verdict == "[~]"


def test_claim_paired_test_valid_is_not_reproduced_on_its_control():
    """The control: a comparison that never rejects holds its size perfectly (0 rejections under the null) and
    the old rule (size only) gave it [Re]; with the power part it is contradicted."""
    a, b = _null_runs()
    never = lambda x, y: (1.0, float(np.mean(x - y)))  # noqa: E731
    d, ours = ec.decide_paired_valid({10: (a, b), 20: (a, b)}, {10: 0.082, 20: 0.082}, test=never)
    assert d.verdict == "[¬Re]" and "0/300 at δ" in ours
    # ... and so is a test whose variance is inflated tenfold (valid, but blind at δ)
    from medeval.metrics.variance import paired_comparison

    def inflated(x, y):
        pc = paired_comparison(x[:, 0], x[:, 1], y[:, 0], y[:, 1])
        from scipy import stats

        return float(2 * stats.norm.sf(abs(pc.z) / np.sqrt(10))), pc.mean_difference

    assert ec.decide_paired_valid({10: (a, b)}, {10: 0.082}, test=inflated)[0].verdict != "[Re]"


def test_null_rejections_counts_power_in_the_claimed_direction_only():
    a, b = _null_runs(pools=50)
    k0, m = ec.null_rejections(a, b)
    up, _ = ec.null_rejections(a, b, shift=0.1)
    down, _ = ec.null_rejections(a, b, shift=-0.1)  # B better: rejections against A do not count as power
    assert m == 50 and k0 <= 5 and up >= 45 and down == 0


# ------------------------------------------------------------------------------------------------------------
# characterization


def test_claim_naive_below_eve_passes_and_fails():
    d, ours = ec.decide_naive_below(char_frame(2.0, 0.5), n_boot=300)
    assert d.verdict == "[Re]" and "EVE/binomial" in ours
    assert ec.decide_naive_below(char_frame(0.5, 0.5), n_boot=300)[0].verdict == "[¬Re]"
    assert ec.decide_naive_below(char_frame(2.0, 1.5), n_boot=300)[0].verdict == "[¬Re]"  # NFW above EVE


def test_claim_neve_bias_grows_passes_and_fails():
    falling = char_frame(within_corr=[0.0, -0.1, -0.3, -0.5])  # EVE grows relative to NEVE with the size
    assert ec.decide_neve_bias_grows(falling, n_boot=300)[0].verdict == "[Re]"
    rising = char_frame(within_corr=[-0.5, -0.3, -0.1, 0.0])
    assert ec.decide_neve_bias_grows(rising, n_boot=300)[0].verdict == "[¬Re]"
    assert ec.decide_neve_bias_grows(char_frame(sizes=(10,)), n_boot=100)[0].verdict == "[n/a]"


def test_claim_size_effects_passes_and_fails():
    good = char_frame(mean_by_size=[0.78, 0.82, 0.85, 0.87])  # variance ∝ 1/n falls too
    assert ec.decide_size_effects(good)[0].verdict == "[Re]"
    bad = char_frame(mean_by_size=[0.87, 0.85, 0.82, 0.78])
    assert ec.decide_size_effects(bad)[0].verdict == "[¬Re]"


# ------------------------------------------------------------------------------------------------------------
# validation strategies


def test_claim_three_fold_bias_passes_and_fails():
    assert ec.decide_three_fold_bias(strategy_frames())[0].verdict == "[Re]"
    up = {"LOO": 0.0, "10x1": 0.0, "10x10": 0.0, "3x1": 0.02, "3x10": 0.02}
    assert ec.decide_three_fold_bias(strategy_frames(bias=up))[0].verdict == "[¬Re]"
    tiny = {"LOO": 0.0, "10x1": 0.0, "10x10": 0.0, "3x1": -0.0005, "3x10": -0.0005}
    assert ec.decide_three_fold_bias(strategy_frames(bias=tiny, pairs=30))[0].verdict == "[~]"


def test_claim_repeats_reduce_variance_passes_and_fails():
    assert ec.decide_repeats_reduce_variance(strategy_frames())[0].verdict == "[Re]"
    louder = {"LOO": 0.10, "10x1": 0.08, "10x10": 0.12, "3x1": 0.07, "3x10": 0.11}
    assert ec.decide_repeats_reduce_variance(strategy_frames(sd=louder))[0].verdict == "[¬Re]"


def test_claim_repeated_lowest_mse_passes_and_fails():
    assert ec.decide_repeated_lowest_mse(strategy_frames(), n_boot=300)[0].verdict == "[Re]"
    worse = {"LOO": 0.08, "10x1": 0.08, "10x10": 0.11, "3x1": 0.08, "3x10": 0.11}
    assert ec.decide_repeated_lowest_mse(strategy_frames(sd=worse), n_boot=300)[0].verdict == "[¬Re]"


def test_claim_repeated_mse_small_n_passes_and_fails():
    small = strategy_frames(sizes=(10,), seed=1)
    big_gain = {"LOO": 0.10, "10x1": 0.095, "10x10": 0.06, "3x1": 0.095, "3x10": 0.06}
    no_gain = {"LOO": 0.10, "10x1": 0.099, "10x10": 0.099, "3x1": 0.099, "3x10": 0.099}
    zero = {k: 0.0 for k in big_gain}
    good = pd.concat([strategy_frames(sizes=(10,), sd=big_gain, bias=zero),
                      strategy_frames(sizes=(25,), sd=no_gain, bias=zero, seed=2)], ignore_index=True)
    assert ec.decide_repeated_small_n(good, n_boot=300)[0].verdict == "[Re]"
    bad = pd.concat([strategy_frames(sizes=(10,), sd=no_gain, bias=zero),
                     strategy_frames(sizes=(25,), sd=big_gain, bias=zero, seed=2)], ignore_index=True)
    assert ec.decide_repeated_small_n(bad, n_boot=300)[0].verdict == "[¬Re]"
    assert ec.decide_repeated_small_n(small, n_boot=100)[0].verdict == "[n/a]"


def test_claim_loo_not_best_passes_and_fails():
    assert ec.decide_loo_not_best(strategy_frames(), n_boot=300)[0].verdict == "[Re]"
    loo_best = {"LOO": 0.07, "10x1": 0.10, "10x10": 0.09, "3x1": 0.10, "3x10": 0.09}
    assert ec.decide_loo_not_best(strategy_frames(sd=loo_best), n_boot=300)[0].verdict == "[¬Re]"


def test_claim_loo_high_variance_passes_and_fails():
    assert ec.decide_loo_high_variance(strategy_frames())[0].verdict == "[Re]"
    quiet = {"LOO": 0.06, "10x1": 0.095, "10x10": 0.09, "3x1": 0.095, "3x10": 0.09}
    assert ec.decide_loo_high_variance(strategy_frames(sd=quiet))[0].verdict == "[¬Re]"


# ------------------------------------------------------------------------------------------------------------
# the chapter: every row present, the quality floor, checks


def synthetic_inputs(accuracy=0.85, P=None, **changes):
    """ClaimInputs of the whole chapter from constructed rows (the SVM's accuracy ``accuracy`` everywhere), with
    the settings of ``P`` (default: the schema's, 200 bootstrap replicates) and ``changes`` to the fields."""
    P = P or eve.Params(n_bootstrap=200)
    r = rng(5)
    ds = drawstring_frame()
    for m in METRICS:
        ds[f"mean_{m}"] = accuracy
    truth = {}
    for n in (10, 20):
        draws = {m: np.clip(accuracy + np.sqrt(0.1 / n) * 0.3 * r.standard_normal(4000), 0, 1) for m in METRICS}
        pools = {m: accuracy + np.sqrt(0.1 / n) * 0.3 * r.standard_normal((400, 10, 2)) for m in METRICS}
        null = {m: pools[m][:, :5] + 0.01 * r.standard_normal((400, 5, 2)) for m in METRICS}
        truth[n] = {"draws": draws, "pools": pools, "null": null}
    hm = pd.DataFrame({"subset_size": [10, 25], "prediction_agreement": [1.0, 1.0], "in_limit": [True, True]})
    fields = dict(
        metric=P.metric, dataset=P.dataset, n_bootstrap=P.n_bootstrap, seed=P.seed,
        drawstring_subset_size=P.drawstring_subset_size, drawstring_n_pairs=P.drawstring_n_pairs,
        quality=eve.quality_figures(ds, truth), gpu_counts={}, drawstring=ds, **ec.known_truth_inputs(truth, P.metric),
        characterization=char_frame(), strategies=strategy_frames(), hard_margin=hm,
        engine_check={"engine": "active_set", "agreement": 1.0, "n_problems": 50, "max_relative_difference": 1e-5},
        bridge={"max_abs_difference_vs_sklearn": 0.0}, pair_check={"subset_size": 25, "n_pairs": 10, "valid": 10},
    )
    return ec.ClaimInputs(**{**fields, **changes})


def test_claim_chapter_rows_complete_and_decided():
    cl = ec.CLAIMS.decide(synthetic_inputs(0.85), scale="default")
    ids = [c.id for c in cl.claims]
    assert len(ids) == len(set(ids)) == 21
    assert ids == [s.id for s in ec.CLAIMS.specs]  # the registry's order is the table's
    verdicts = {c.id: c.verdict for c in cl.claims}
    assert verdicts["adni-figures"] == "[n/a]"
    assert verdicts["eve-unbiased"] == "[Re]" and verdicts["three-fold-bias"] == "[Re]"
    assert all(c.scale == "default" for c in cl.claims)
    assert all(c.decision.reason for c in cl.claims if c.verdict != "[Re]")
    assert len(cl.checks) == 8 and all(c.passed for c in cl.checks)


def test_claim_adni_figures_row_only_off_adni():
    assert [c.id for c in ec.CLAIMS.decide(synthetic_inputs(dataset="adni"), scale="full").claims
            if c.id == "adni-figures"] == []
    (row,) = ec.CLAIMS.decide(synthetic_inputs(dataset="wdbc"), scale="default", only=["adni-figures"]).claims
    assert row.verdict == "[n/a]" and "the wdbc pool" in row.decision.reason and row.where == "Sec. 3-4, Figs. 1-3"


def test_claim_quality_floor_gives_not_applicable():
    inp = synthetic_inputs(0.6)
    cl = ec.CLAIMS.decide(inp, scale="default")
    assert {c.verdict for c in cl.claims} == {"[n/a]"}
    assert all("did not train" in c.decision.reason or c.id == "adni-figures" for c in cl.claims)
    band = eve.quality_band(inp.quality)
    assert band["max"] < band["floor"] == ec.QUALITY_FLOOR


def test_claim_reason_names_the_gpu_counts_for_inconclusive_rows():
    strategies = strategy_frames(pairs=20, bias={k: 0.0 for k in ("LOO", "10x1", "10x10", "3x1", "3x10")})
    gpu = eve.Params(strategy_n_pairs=2500)
    inp = synthetic_inputs(0.85, strategies=strategies,
                           gpu_counts={g: ec.gpu_profile_counts(gpu, g) for g in ec.GROUPS})
    (row,) = ec.CLAIMS.decide(inp, scale="default", only=["three-fold-bias"]).claims
    assert row.verdict == "[~]" and "2,500 pairs per size" in row.decision.reason


def test_claim_explanations_cover_every_row_not_reproduced():
    cl = ec.CLAIMS.decide(synthetic_inputs(0.85), scale="default")
    text = explain_claims(cl)
    for c in cl.claims:
        assert (f'href="#claim-{c.id}"' in text) == (c.verdict != "[Re]")


def test_bootstrap_pairs_and_helpers():
    s = rng(7).standard_normal((200, 2))
    est, lo, hi, reps = ec.bootstrap_pairs([s], lambda a: a.mean(axis=(-2, -1)), n_boot=500)
    assert lo < est < hi and reps.shape == (500,)
    assert ec.clopper_pearson(0, 100)[0] == 0 and ec.clopper_pearson(100, 100)[1] == 1
    slope, se = ec.weighted_slope([1, 2, 3], [1, 2, 3], [1, 1, 1])
    assert slope == pytest.approx(1) and se > 0
