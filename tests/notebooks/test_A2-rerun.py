"""The re-execution demo records its grid summary and one check (``rerun_demo.shrinkage_check``), which can pass
and can fail."""

import numpy as np
import pytest

from medeval.experiments import rerun_demo


@pytest.mark.notebook
def test_a2_rerun_smoke(run_chapter_smoke):
    res = run_chapter_smoke("A2-rerun").results
    summary = res["accuracy_by_test_size"]
    assert [r["test_size"] for r in summary] == [20, 80] and all(r["count"] == 8 for r in summary)
    assert "paper_vs_us" not in res  # a demo, not a reproduction: a check, not a claim
    (check,) = res["checks"]
    assert check["check"] == "the SD of a hold-out accuracy shrinks as the test set grows"
    assert check["passed"] in (True, False, None) and ("F = " in check["computed"] or "no spread" in check["computed"])


def _runs(sds, n=20, seed=0):
    rng = np.random.default_rng(seed)
    return [{"test_size": size, "repeat": r, "accuracy": 0.9 + sd * z}
            for size, sd in sds.items() for r, z in enumerate(rng.standard_normal(n))]


def test_shrinkage_check_passes_when_the_spread_shrinks():
    assert rerun_demo.shrinkage_check(_runs({20: 0.05, 160: 0.015})).passed


def test_shrinkage_check_fails_when_the_spread_grows():
    assert rerun_demo.shrinkage_check(_runs({20: 0.01, 160: 0.03})).passed is False


@pytest.mark.parametrize("sds,n", [({20: 0.02, 160: 0.02}, 20),   # same spread: not significant either way
                                   ({20: 0.05, 160: 0.03}, 3),    # too few repeats to tell
                                   ({20: 0.05}, 20)])             # one size only
def test_shrinkage_check_is_undecided_without_evidence(sds, n):
    check = rerun_demo.shrinkage_check(_runs(sds, n))
    assert check.passed is None and check.outcome == "undecided"


def test_shrinkage_check_is_undecided_without_spread_at_the_largest_size():
    runs = _runs({20: 0.05, 160: 0.0})
    check = rerun_demo.shrinkage_check(runs)
    assert check.passed is None and "no spread" in check.computed


def test_shrinkage_check_under_the_null_passes_and_fails_at_most_alpha_each():
    """Equal spreads at both sizes (the null): false passes and false failures each stay within α + 3 SE."""
    draws = 400
    outcomes = [rerun_demo.shrinkage_check(_runs({20: 0.03, 160: 0.03}, 8, seed)).passed for seed in range(draws)]
    bound = 0.05 + 3 * (0.05 * 0.95 / draws) ** 0.5
    assert outcomes.count(True) / draws <= bound and outcomes.count(False) / draws <= bound


@pytest.mark.notebook
def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke("A2-rerun").results)


def test_a_large_explicit_pool_is_refused_naming_max_workers():
    """The page's memory grows only with its worker processes: 512 of them ask for tens of GiB."""
    from medeval.runtime.params import GIB, PreflightError, preflight, resolve_params

    params = resolve_params("A2-rerun", "default", {"max_workers": 512, "n_repeats": 100})
    assert params.resource_estimate().peak_bytes > 24 * GIB
    with pytest.raises(PreflightError, match=r"exceeds the 24.00 GiB available.*lower max_workers"):
        preflight("A2-rerun", params, available=24 * GIB)
    preflight("A2-rerun", resolve_params("A2-rerun", "full"), available=24 * GIB)


@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_time_estimate_within_factor_two_of_the_recorded_run(profile, recorded_time_within):
    from medeval.runtime.params import resolve_params

    recorded_time_within("A2-rerun", profile, resolve_params("A2-rerun", profile).resource_estimate().seconds)


def test_wdbc_is_read_once_read_only_and_fits_as_freshly_loaded_data():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = rerun_demo.wdbc()
    assert rerun_demo.wdbc()[0] is x and x.shape == (rerun_demo.WDBC_CASES, 30)
    assert not x.flags.writeable and not y.flags.writeable
    fresh_x, fresh_y = load_breast_cancer(return_X_y=True)
    for test_size, repeat in ((20, 0), (160, 3)):
        state = np.random.SeedSequence([1, test_size, repeat]).generate_state(1)[0]
        x_tr, x_te, y_tr, y_te = train_test_split(fresh_x, fresh_y, test_size=test_size, stratify=fresh_y,
                                                  random_state=state)
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(x_tr, y_tr)
        assert rerun_demo.holdout_accuracy(test_size, repeat, 1, 1.0)["accuracy"] == model.score(x_te, y_te)
