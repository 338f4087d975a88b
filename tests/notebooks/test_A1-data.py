"""The Data appendix page executes under the smoke profile and records sane comparison numbers and its checks;
the checks (``data_appendix.stand_in_checks``) can pass and can fail."""

import pytest

from medeval.experiments import data_appendix


@pytest.mark.notebook
def test_a1_data_smoke(run_chapter_smoke):
    res = run_chapter_smoke("A1-data").results
    assert res["profile"] == "smoke"
    assert res["n_datasets"] >= 10
    assert {row["id"] for row in res["manifest"]} >= {"chestxray14-labels", "chestxray14-boxes", "mlnto"}
    assert res["n_phantom"] == 2000
    # 2,000 draws: every prevalence within a few binomial standard errors of the real table
    assert 0 <= res["max_abs_frequency_difference"] < 0.03
    assert res["max_abs_z"] < 5
    assert res["frequency_correlation"] > 0.98
    assert res["cooccurrence_correlation"] > 0.8
    assert len(res["label_frequency"]) == 14
    assert res["max_abs_mean_centre_difference"] < 0.15
    fr = res["slide_class_fractions"]
    assert abs(sum(fr.values()) - 1) < 1e-9 and 0.65 < fr["O"] < 0.9
    # the page reproduces no paper: its rows are checks, not claims, and do not reach the scorecard
    assert "paper_vs_us" not in res
    checks = res["checks"]
    assert len(checks) == 4 and all(isinstance(c["passed"], bool) for c in checks)
    assert {c["check"] for c in checks} >= {"phantom label prevalences follow the ChestX-ray14 label table",
                                            "phantom box centres follow the NIH box list"}
    # the recorded verdicts are those the recorded numbers give
    by_name = {c["check"]: c["passed"] for c in checks}
    assert by_name["phantom label prevalences follow the ChestX-ray14 label table"] == (res["max_abs_z"] < 5)
    assert res["wall_time_s"] > 0  # a wall time, not a budget (machine-dependent)


GOOD = ({"max_abs_z": 2.1, "max_abs_frequency_difference": 0.004, "cooccurrence_correlation": 0.99,
         "n_phantom": 20000, "n_real": 112120},
        {"max_abs_mean_centre_difference": 0.03}, {"O": 0.78, "notC": 0.11, "C": 0.11})


def test_stand_in_checks_pass_on_data_that_follow_the_real_tables():
    checks = data_appendix.stand_in_checks(*GOOD)
    assert len(checks) == 4 and all(c.passed for c in checks)


@pytest.mark.parametrize("which,key,value", [
    (0, "max_abs_z", 6.0), (0, "cooccurrence_correlation", 0.5), (1, "max_abs_mean_centre_difference", 0.2),
    (2, "O", 0.6), (2, "O", 0.9), (0, "max_abs_z", float("nan")),
])
def test_stand_in_checks_fail_when_a_stand_in_departs(which, key, value):
    args = [dict(a) for a in GOOD]
    args[which][key] = value
    checks = data_appendix.stand_in_checks(*args)
    assert sum(not c.passed for c in checks) == 1


@pytest.mark.notebook
def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke("A1-data").results)


def test_an_estimate_above_the_available_memory_is_refused_naming_its_drivers():
    from medeval.runtime.params import GIB, PreflightError, preflight, resolve_params

    params = resolve_params("A1-data", "smoke", {"n_box_phantoms": 20_000, "box_image_size": 512})
    estimate = params.resource_estimate()
    assert estimate.peak_bytes > 24 * GIB and set(estimate.drivers) == {"n_box_phantoms", "box_image_size"}
    with pytest.raises(PreflightError, match=r"exceeds the 24.00 GiB available.*lower n_box_phantoms, box_image_size"):
        preflight("A1-data", params, available=24 * GIB)
    preflight("A1-data", resolve_params("A1-data", "full"), available=24 * GIB)


def test_the_label_set_term_matches_a_measurement(peak_growth):
    """The estimate's dominant term at 400,000 label sets against the peak resident memory that
    ``label_comparison`` adds in a fresh interpreter (within a factor of 2)."""
    from medeval.runtime.params import resolve_params

    params = resolve_params("A1-data", "smoke", {"n_label_samples": 400_000})
    measured = peak_growth("d.label_comparison(P)", setup=(
        "from medeval.experiments import data_appendix as d\n"
        "from medeval.runtime.params import resolve_params\n"
        "P = resolve_params('A1-data', 'smoke', {'n_label_samples': 400_000})"))
    estimated = params.resource_estimate().terms["label sets"]
    assert 0.5 <= measured / estimated <= 2, (measured / 2**20, estimated / 2**20)




@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_time_estimate_within_factor_two_of_the_recorded_run(profile, recorded_time_within):
    from medeval.runtime.params import resolve_params

    recorded_time_within("A1-data", profile, resolve_params("A1-data", profile).resource_estimate().seconds)
