"""Every MEDEVAL_* environment variable is checked when a command starts (medeval.runtime.environment)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from medeval.runtime.environment import VARIABLES, environment_problems


def test_a_clean_environment_has_no_problems(tmp_path):
    assert environment_problems({}) == []
    good = {"MEDEVAL_KEEP_RUNS": "3", "MEDEVAL_MEMORY_LIMIT": "8G", "MEDEVAL_NUMERICS": "native",
            "MEDEVAL_PROBE_SECONDS": "0.15", "MEDEVAL_GRID_FRESH": "0", "MEDEVAL_RUNS": str(tmp_path / "new"),
            "MEDEVAL_ROOT": str(tmp_path), "PATH": "/bin"}
    assert environment_problems(good) == []


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("MEDEVAL_KEEP_RUNS", "0", "MEDEVAL_KEEP_RUNS='0': expected a whole number >= 1"),
    ("MEDEVAL_KEEP_RUNS", "abc", "MEDEVAL_KEEP_RUNS='abc': expected a whole number >= 1"),
    ("MEDEVAL_MEMORY_LIMIT", "lots", "MEDEVAL_MEMORY_LIMIT='lots': expected bytes"),
    ("MEDEVAL_MEMORY_LIMIT", "-1G", "expected a positive size"),
    ("MEDEVAL_NUMERICS", "fast", "MEDEVAL_NUMERICS='fast': expected pinned or native"),
    ("MEDEVAL_PROBE_SECONDS", "nan", "expected a positive number of seconds"),
    ("MEDEVAL_GRID_FRESH", "yes", "MEDEVAL_GRID_FRESH='yes': expected 0 or 1"),
    ("MEDEVAL_KEEP_RUN", "3", "MEDEVAL_KEEP_RUN: not a variable medeval reads (a typo?)"),
    ("MEDEVAL_RUNS", "", "MEDEVAL_RUNS='': expected a folder"),
])
def test_a_bad_variable_is_named_with_what_is_expected(name, value, expected):
    problems = environment_problems({name: value})
    assert len(problems) == 1 and expected in problems[0], problems


def test_folders_that_are_files_or_not_writable(tmp_path):
    a_file = tmp_path / "store"
    a_file.write_text("")
    assert "expected a folder, found a file" in environment_problems({"MEDEVAL_RUNS": str(a_file)})[0]
    assert "expected an existing folder" in environment_problems({"MEDEVAL_ROOT": str(tmp_path / "nope")})[0]
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        if os.geteuid() != 0:  # root writes anywhere
            assert "not writable" in environment_problems({"MEDEVAL_RUNS": str(read_only)})[0]
    finally:
        read_only.chmod(0o700)


def test_every_variable_medeval_reads_is_known():
    """Every MEDEVAL_* name in src/medeval is in VARIABLES (else check_environment would refuse medeval's own)."""
    import re
    from pathlib import Path

    import medeval

    used = set()
    for path in Path(medeval.__file__).parent.rglob("*.py"):
        if path.name != "environment.py":  # its docstring names a typo as an example
            used |= set(re.findall(r"MEDEVAL_[A-Z_]+[A-Z]", path.read_text()))
    assert used <= set(VARIABLES), used - set(VARIABLES)


@pytest.mark.parametrize("env", [{"MEDEVAL_KEEP_RUNS": "abc"}, {"MEDEVAL_KEEP_RUN": "3"}])
def test_a_command_refuses_a_bad_variable_before_it_acts(env, tmp_path):
    """`medeval run` with MEDEVAL_KEEP_RUNS=abc used to compute 18-33 s and then crash with a traceback."""
    full = {**os.environ, "MEDEVAL_RUNS": str(tmp_path), **env}
    done = subprocess.run([sys.executable, "-m", "medeval.cli", "run", "A2-rerun", "--profile", "smoke"], env=full,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "environment:" in done.stderr and next(iter(env)) in done.stderr
    assert "Traceback" not in done.stderr and not any(tmp_path.iterdir())  # nothing ran, nothing stored


def test_a_run_estimated_above_two_hours_needs_yes(monkeypatch, tmp_path):
    """A parameter set estimated at 1,706 hours used to start without a word: above LONG_RUN_SECONDS on this
    machine a run is refused before compute unless --yes."""
    from medeval.runtime import execution
    from medeval.runtime.params import PreflightError

    huge = ["--set", "drawstring_n_pairs=100000", "--set", "drawstring_n_parents=10000"]
    done = subprocess.run([sys.executable, "-m", "medeval.cli", "run", "03-eve", "--profile", "smoke", *huge],
                          env={**os.environ, "MEDEVAL_RUNS": str(tmp_path)}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "add --yes" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "smoke").exists()

    class Passed(Exception):
        pass

    def stop(*args, **kwargs):
        raise Passed

    monkeypatch.setattr(execution, "LONG_RUN_SECONDS", 0.0)
    monkeypatch.setattr(execution, "cache_key", stop)  # the next step after the check
    with pytest.raises(PreflightError, match="more than 0 s .*add --yes"):
        execution.run_chapter("A2-rerun", "smoke", out_dir=tmp_path)
    with pytest.raises(Passed):
        execution.run_chapter("A2-rerun", "smoke", out_dir=tmp_path, confirm_long=True)
