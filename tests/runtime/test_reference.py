"""The committed reference and `medeval verify`: identical builds pass, a changed verdict or number fails."""

from __future__ import annotations

import copy
import json
import math

import pytest

from medeval.runtime import reference


def _results(verdict="[Re]", value=0.25, nan=math.nan):
    return {"paper_vs_us": [{"id": "c1", "verdict": verdict, "ours": f"mean {value}", "effect": "", "n": "3 runs",
                             "test": "Welch; p = 0.01", "basis": "phantom"}],
            "checks": [{"check": "identity", "passed": True}],
            "table": [{"operator": "max", "auc": value, "ap": nan}, {"operator": "mean", "auc": 0.5, "ap": 0.1}],
            "scalar": 3, "cnn_train_seconds": 1.5, "provenance": {"device": "CPU: x", "git_commit": "abc"},
            "wall_time_s": 9.0,
            "peak_memory_bytes": 1, "resource_estimate": {"seconds": 1.0}}


def _reference(results, tolerances=None):
    return reference.snapshot({"01-mil-stability": results}, "smoke", tolerances=tolerances)


def test_an_identical_build_is_identical_and_machine_values_are_not_compared():
    ref = _reference(_results())
    other = _results()
    other.update(provenance={"device": "CPU: y"}, wall_time_s=99.0, peak_memory_bytes=7, cnn_train_seconds=2.7)
    report = reference.verify({"01-mil-stability": other}, ref)
    assert not report.failed and report.summary().startswith("identical to the reference")
    assert report.chapters[0].largest_relative_difference == 0.0  # NaN equals NaN here


def test_a_changed_verdict_fails_and_names_the_row():
    ref = _reference(_results())
    report = reference.verify({"01-mil-stability": _results(verdict="[~]")}, ref)
    assert report.failed and not report.chapters[0].verdicts_identical
    assert "claim c1: reference verdict=[Re] | this build verdict=[~]" in report.to_text()  # only what differs


def test_a_changed_number_fails_unless_the_reference_states_a_tolerance_for_it():
    changed = _results(value=0.25 * (1 + 1e-12))
    report = reference.verify({"01-mil-stability": changed}, _reference(_results()))
    assert report.failed and report.chapters[0].largest_relative_difference == pytest.approx(1e-12, rel=0.01)
    assert "table[operator=max].auc" in report.to_text()
    tolerant = _reference(_results(), tolerances={"01-mil-stability": {"table*.auc": 1e-9}})
    tolerant["chapters"]["01-mil-stability"]["rows"]["c1"]["ours"] = changed["paper_vs_us"][0]["ours"]
    report = reference.verify({"01-mil-stability": changed}, tolerant)
    assert not report.failed and "within their stated tolerances" in report.summary()
    reworded = _results()
    reworded["paper_vs_us"][0]["test"] = "Welch; p = 0.010"
    summary = reference.verify({"01-mil-stability": reworded}, _reference(_results())).summary()
    assert summary == "verdicts identical to the reference; some rows' wording differs (verdicts and numbers identical)"
    beyond = _results(value=0.26)
    assert reference.verify({"01-mil-stability": beyond}, tolerant).failed


def test_a_missing_chapter_a_changed_check_or_a_new_value_fails():
    ref = _reference(_results())
    assert reference.verify({}, ref).failed
    flipped = _results()
    flipped["checks"][0]["passed"] = False
    assert reference.verify({"01-mil-stability": flipped}, ref).failed
    extra = _results()
    extra["new_number"] = 1.0
    assert reference.verify({"01-mil-stability": extra}, ref).failed
    nan_now = _results()
    nan_now["table"][1]["ap"] = math.nan
    assert reference.verify({"01-mil-stability": nan_now}, ref).failed


def test_the_reference_round_trips_through_its_file(tmp_path, monkeypatch):
    monkeypatch.setattr(reference, "reference_file", lambda profile: tmp_path / f"{profile}.json")
    (tmp_path / "smoke.json").write_text(json.dumps({"tolerances": {"01-mil-stability": {"x": 0.1}}}))
    reference.write_reference({"01-mil-stability": _results()}, "smoke")
    ref = reference.load_reference("smoke")
    assert ref["tolerances"] == {"01-mil-stability": {"x": 0.1}}  # kept across updates
    assert not reference.verify({"01-mil-stability": copy.deepcopy(_results())}, ref).failed


@pytest.mark.slow
def test_the_smoke_build_is_the_committed_smoke_reference(run_chapter_smoke):
    """`make test` verifies the smoke build: every chapter's verdicts and checks must be those of the committed
    reference on any machine; every number must be bit-identical too (within a tolerance the reference states)
    on the reference machine and on any machine whose pinned kernels compute the recorded bits (`medeval verify
    --kernels`: an AMD EPYC as well as the reference's Intel Xeon). On a CPU whose kernels differ, the numbers
    that moved are reported as a warning (the kernel test fails there), while `medeval verify` stays strict
    everywhere. Machine-specific values (times, memory) are not compared."""
    from medeval.runtime.params import chapters

    ref = reference.load_reference("smoke")
    new = reference.new_chapters("smoke")  # added since the reference was written: `make reference` takes them in
    assert set(ref["chapters"]) <= set(chapters()), "the reference holds a chapter the registry has lost"
    results = {cid: run_chapter_smoke(cid).results for cid in chapters() if cid not in new}
    for res in results.values():
        assert res["provenance"]["numerics"].startswith("pinned") and "incomplete" not in res["provenance"]["numerics"]
    report = reference.verify(results, ref)
    from medeval.runtime.provenance import device_name

    verdicts_and_checks = [c for c in report.chapters if c.missing or not c.verdicts_identical or c.checks_differing]
    assert not verdicts_and_checks, report.to_text()  # on any machine
    from medeval.runtime.numerics import check_kernels

    if device_name() == ref["machine"]["device"] or not check_kernels()["moved"]:
        assert not report.failed, report.to_text()  # where the kernels compute the recorded bits, every number too
    elif report.failed:  # another CPU: `medeval verify` (strict everywhere) is the check; say what moved here
        import warnings

        warnings.warn(f"numbers differ from the reference made on {ref['machine']['device']}:\n{report.to_text()}",
                      stacklevel=1)


def test_the_command_exits_non_zero_on_a_changed_verdict_and_says_so(monkeypatch, capsys):
    from medeval.cli import main

    ref = _reference(_results())
    monkeypatch.setattr(reference, "load_reference", lambda profile: ref)
    monkeypatch.setattr(reference, "current_results", lambda profile: {"01-mil-stability": _results()})
    assert main(["verify", "--profile", "smoke"]) == 0
    assert "identical to the reference" in capsys.readouterr().out
    monkeypatch.setattr(reference, "current_results", lambda profile: {"01-mil-stability": _results("[¬Re]")})
    assert main(["verify", "--profile", "smoke"]) == 1
    assert "verdicts DIFFER" in capsys.readouterr().out
    monkeypatch.setattr(reference, "current_results", lambda profile: {"01-mil-stability": None})
    assert main(["verify", "--profile", "smoke"]) == 1
    assert "no run of the current code" in capsys.readouterr().out
    assert main(["verify", "--profile", "nope"]) == 2
