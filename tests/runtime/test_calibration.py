"""The committed calibration record, this checkout's own timings, and time estimates scaled to the machine."""

from __future__ import annotations

import json

import pytest

from medeval.runtime import calibration
from medeval.runtime.params import chapters, resolve_params

COMMIT = "0123456789abcdef0000"
META = {"wall_time_s": 12.3, "started": "2026-11-23T17:00:00",
        "provenance": {"device": "CPU: test", "git_commit": "0123456789abcdef", "numerics": "pinned"}}


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private run store and a private copy of the committed record."""
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    committed = tmp_path / "results" / "timings.json"
    committed.parent.mkdir()
    committed.write_text(calibration.calibration_file().read_text())
    monkeypatch.setattr(calibration, "calibration_file", lambda: committed)
    monkeypatch.delenv("MEDEVAL_PROBE_SECONDS", raising=False)
    return tmp_path


def test_a_run_records_its_time_in_the_run_store_never_in_the_committed_record(store):
    before = calibration.calibration_file().read_bytes()
    calibration.record_local_timing("A2-rerun", "smoke", META)
    calibration.record_local_timing("A2-rerun", "default", {**META, "wall_time_s": 40.0})
    assert calibration.calibration_file().read_bytes() == before
    got = calibration.local_timings("A2-rerun")
    assert calibration.local_timings_file() == store / "runs" / "timings.json"
    assert got["smoke"]["wall_time_s"] == 12.3 and got["default"]["wall_time_s"] == 40.0
    assert got["smoke"]["git_commit"] == "0123456789abcdef" and got["smoke"]["numerics"] == "pinned"
    assert calibration.local_timings("01-mil-stability") == {}


def test_the_committed_record_names_its_machine_and_covers_every_chapter():
    record = calibration.calibration_record()
    assert record["version"] == 1 and record["reference_machine"]["device"].startswith("CPU: ")
    assert record["estimate_scale"] > 0
    from medeval.runtime.reference import new_chapters

    new = set(new_chapters("smoke"))  # chapters added since the reference machine's last build (make calibrate)
    for cid in chapters():
        if cid in new and not calibration.recorded_timings(cid):
            continue
        assert {"smoke", "default"} <= set(calibration.recorded_timings(cid)), cid


def test_an_estimate_scales_with_the_speed_probe(store, monkeypatch):
    """On a machine that takes twice as long on the probe, every chapter's estimate doubles, and stays within a
    factor two of what the reference machine measured times two (what a 2x slower machine takes)."""
    record = json.loads(calibration.calibration_file().read_text())
    record["reference_machine"]["probe_s"] = 0.25
    calibration.calibration_file().write_text(json.dumps(record))
    monkeypatch.setenv("MEDEVAL_PROBE_SECONDS", "0.5")
    assert calibration.speed_factor() == pytest.approx(2.0)
    checked = 0
    for cid in chapters():
        for profile, rec in calibration.recorded_timings(cid).items():
            if profile == "gpu":
                continue
            model = resolve_params(cid, profile).resource_estimate().seconds
            if model is None:
                continue
            here = calibration.local_estimate(model)
            assert here == pytest.approx(2 * calibration.reference_seconds(model))
            assert 0.5 <= here / (2 * rec["wall_time_s"]) <= 2.0, (cid, profile, here, rec["wall_time_s"])
            checked += 1
    assert checked >= 10
    assert "2.0x slower" in calibration.describe_local_estimate(10.0)
    monkeypatch.setenv("MEDEVAL_PROBE_SECONDS", "0.125")
    assert "2.0x faster" in calibration.describe_local_estimate(10.0)


def test_an_unknown_speed_or_a_bad_override_is_said_not_guessed(store, monkeypatch):
    record = json.loads(calibration.calibration_file().read_text())
    record["reference_machine"].pop("probe_s", None)
    calibration.calibration_file().write_text(json.dumps(record))
    assert calibration.speed_factor() is None
    assert "speed is unknown" in calibration.describe_local_estimate(10.0)
    record["reference_machine"]["probe_s"] = 0.2
    calibration.calibration_file().write_text(json.dumps(record))
    monkeypatch.setenv("MEDEVAL_PROBE_SECONDS", "abc")
    with pytest.raises(ValueError, match="MEDEVAL_PROBE_SECONDS"):
        calibration.speed_factor()


def test_the_probe_is_measured_once_per_machine(store, monkeypatch):
    calls = []
    monkeypatch.setattr(calibration, "speed_probe_seconds", lambda: calls.append(1) or 0.3)
    assert calibration.local_probe_seconds() == 0.3 == calibration.local_probe_seconds()
    assert len(calls) == 1
    assert calibration._machine_id() in json.loads((store / "runs" / "machine-speed.json").read_text())


def test_calibrate_refuses_a_dirty_tree_and_missing_runs(store, monkeypatch):
    monkeypatch.setattr("medeval.runtime.provenance.git_commit", lambda root: "abc123-dirty")
    with pytest.raises(calibration.CalibrationError, match="clean, committed tree"):
        calibration.calibrate(["smoke"], log=lambda m: None)
    monkeypatch.setattr("medeval.runtime.provenance.git_commit", lambda root: COMMIT)
    calibration.record_local_timing("A2-rerun", "smoke", META)  # measured on another commit
    with pytest.raises(calibration.CalibrationError) as err:
        calibration.calibrate(["smoke"], log=lambda m: None)
    assert "01-mil-stability (smoke): never run here" in str(err.value)
    assert "A2-rerun (smoke): measured on commit 0123456789abcdef, not " + COMMIT in str(err.value)


def test_calibrate_writes_the_machine_its_probe_and_the_fitted_scale(store, monkeypatch):
    monkeypatch.setattr("medeval.runtime.provenance.git_commit", lambda root: COMMIT)
    monkeypatch.setattr("medeval.runtime.provenance.device_name", lambda: "CPU: Test CPU (2 cores)")
    monkeypatch.setattr(calibration, "speed_probe_seconds", lambda: 0.2)
    for i, cid in enumerate(chapters()):
        model = resolve_params(cid, "smoke").resource_estimate().seconds or 5.0
        factor = 2.0 if i == 0 else (8.0 if i == 1 else 3.0)  # one model 4x too slow, one 4x too fast
        meta = {**META, "wall_time_s": factor * model, "provenance": {**META["provenance"], "git_commit": COMMIT}}
        calibration.record_local_timing(cid, "smoke", meta)
    calibration.calibrate(["smoke"], log=lambda m: None)
    record = calibration.calibration_record()
    assert record["reference_machine"]["device"] == "CPU: Test CPU (2 cores)"
    assert record["reference_machine"]["probe_s"] == 0.2
    assert record["estimate_scale"] == pytest.approx(4.0, rel=0.01)  # √(2 · 8): every model within 2x
    # a new machine: the other profiles' records (from the old machine) are dropped, never mixed in
    assert all(set(by_profile) == {"smoke"} for by_profile in record["chapters"].values())


def test_provenance_is_dirty_only_when_a_source_file_differs(tmp_path):
    """A README or test edited after the commit does not change what a page computed; a source file does."""
    import subprocess

    from medeval.runtime.provenance import git_commit

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("hello\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "c")
    clean = git_commit(tmp_path)
    (tmp_path / "README.md").write_text("hello again\n")
    assert git_commit(tmp_path) == clean and not clean.endswith("-dirty")
    (tmp_path / "src" / "m.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == f"{clean}-dirty"


@pytest.mark.parametrize("profile", ["smoke", "default"])
@pytest.mark.parametrize("chapter_id", sorted(chapters()))
def test_the_memory_estimate_is_within_a_factor_two_of_the_recorded_peak(chapter_id, profile):
    """Each chapter's memory estimate at two settings (its smoke and default parameters) against the peak that
    kernel and grid workers reached together in the reference machine's measured run (``results/timings.json``,
    written by ``medeval calibrate``). Nothing is measured here; the pool size, hence the estimate, depends on the
    core count, so a machine with another count than the reference's compares other settings."""
    import os

    reference = calibration.calibration_record()["reference_machine"]
    if os.cpu_count() != reference.get("cpu_count"):
        pytest.skip(f"{os.cpu_count()} cores here, {reference.get('cpu_count')} on the reference machine")
    from medeval.runtime.reference import new_chapters

    recorded_profiles = calibration.recorded_timings(chapter_id)
    if not recorded_profiles and chapter_id in new_chapters("smoke"):  # its own smoke test checks the estimate
        pytest.skip(f"{chapter_id}: no run recorded on the reference machine yet (make calibrate)")
    recorded = recorded_profiles[profile]
    assert "peak_memory_bytes" in recorded, f"{chapter_id} ({profile}): no peak memory recorded; run make calibrate"
    estimate = resolve_params(chapter_id, profile).resource_estimate().peak_bytes
    ratio = recorded["peak_memory_bytes"] / estimate
    assert 0.5 <= ratio <= 2.0, (chapter_id, profile, recorded["peak_memory_bytes"], estimate)


def test_a_run_records_its_peak_memory_beside_its_time(store):
    calibration.record_local_timing("A2-rerun", "smoke", META, 123 * 2**20)
    calibration.record_local_timing("A1-data", "smoke", META, None)
    assert calibration.local_timings("A2-rerun")["smoke"]["peak_memory_bytes"] == 123 * 2**20
    assert "peak_memory_bytes" not in calibration.local_timings("A1-data")["smoke"]
