"""Shared fixtures and the suite's layout on pytest-xdist workers.

``run_chapter_smoke(id)`` executes a chapter once per session under the smoke profile. Executions are cached under
``_runs/smoke`` by their content key (notebook, parameters, src/medeval, manifest entries, installed versions), so a
re-run of the suite with nothing changed reuses them; any change re-executes. The suite runs on one xdist worker per
core (``-n auto`` in pyproject.toml): a chapter is executed under a lock shared by the workers, so two workers never
execute the same chapter at once; the second finds the first's run in the cache.

Each test module is one xdist work unit (its module-scoped fixtures are built once). The smoke book is built once
per session in a folder the workers share; a worker that needs it while another builds it waits for it. Units that
take a minute or more go first, so that no worker starts one when the others are about to finish.
"""

from __future__ import annotations

import os

# One BLAS/OpenMP thread per process: the suite runs one xdist worker per core, and each worker's notebook kernels
# and grid workers inherit this. With the libraries' default (a thread per core in every process), two kernels
# computing at once on two cores spin against each other: chapter A2's exercise cell took 24 s instead of 1.4 s.
# Set before numpy or torch is imported; a value the caller set is kept.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from filelock import FileLock  # noqa: E402

from medeval.runtime.execution import run_chapter  # noqa: E402

# Chapter runs in the tests share the cores with each other: their wall times would be noise in this checkout's
# own record of measured runs (_runs/timings.json, what `medeval calibrate` reads).
os.environ["MEDEVAL_RECORD_TIMINGS"] = "0"

_executed: dict = {}

# Work units that take 20 s or more on a 2-core machine (benchmarks/bench_suite.py lists them), scheduled before
# everything else, largest first, so that no worker starts a long unit when the other is about to finish: the smoke
# book first, the units that read it (the student edition starts from its render, the browser opens it) last, once
# it is likely to be there.
LONG_UNITS = ("book", "tests/runtime/test_grading.py", "tests/notebooks/test_exercises.py",
              "tests/notebooks/test_04_full_profile_offline.py", "tests/runtime/test_runs.py",
              "tests/runtime/test_execution.py", "tests/notebooks/test_02_05_full_profile_offline.py",
              "tests/runtime/test_scaffold.py", "tests/runtime/test_teaching.py", "tests/runtime/test_robustness.py",
              "tests/experiments/test_class_distribution_claims.py", "tests/experiments/test_class_distribution.py",
              "tests/experiments/test_mil_stability_claims.py", "tests/core/test_claims.py",
              "tests/book/test_student_edition.py", "tests/book/test_browser.py")
BOOK_UNIT = ("tests/book/test_book.py", "tests/book/test_bibliography.py", "tests/book/test_glossary.py")


@pytest.fixture(scope="session")
def shared_tmp(tmp_path_factory) -> Path:
    """A folder that every xdist worker of this session sees (the parent of the workers' own temporary folders);
    the session's temporary folder when the suite runs in one process."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a test: its module; the book's build, bibliography and glossary tests are one unit."""
    path = nodeid.split("::", 1)[0]
    return "book" if path in BOOK_UNIT else path


def pytest_xdist_make_scheduler(config, log):
    """Work units per :func:`work_unit`, handed out in collection order (xdist's ``loadgroup`` cannot be used: with
    pytest 9 it no longer tags the test ids with their groups)."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False  # keep the order set in pytest_collection_modifyitems
    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_UNITS)}
    items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(LONG_UNITS)))  # stable otherwise


@pytest.fixture(scope="session")
def run_chapter_smoke(shared_tmp):
    locks = shared_tmp

    def run(chapter_id: str):
        if chapter_id not in _executed:
            with FileLock(locks / f"smoke-{chapter_id}.lock"):
                _executed[chapter_id] = run_chapter(chapter_id, "smoke")
        return _executed[chapter_id]

    return run


class LazyChapters(dict):
    """A mapping chapter -> value computed on first access by ``make(chapter)``: a test that selects one chapter (the
    scaffold test runs the per-chapter tests for its new chapter only) pays for that chapter alone."""

    def __init__(self, make):
        super().__init__()
        self._make = make

    def __missing__(self, chapter: str):
        self[chapter] = value = self._make(chapter)
        return value


@pytest.fixture(scope="session")
def lazy_chapters():
    """:class:`LazyChapters`, for module fixtures that hold one value per chapter."""
    return LazyChapters


@pytest.fixture(scope="session")
def solution_check_values(shared_tmp):
    """``solution_check_values(chapter)``: the chapter's hidden checks with their reference values, computed by running
    its solutions (:func:`medeval.runtime.grading.reference_values`) once per session, however many workers and
    modules ask (the student notebooks and the mutation tests both need them); kept as JSON under the shared folder,
    keyed by the exercises' content, so an edited notebook is run again."""
    import hashlib
    import json

    from medeval.runtime import grading
    from medeval.runtime.exercises import read_exercises

    run_solutions = grading.reference_values  # the function itself, also while a module patches it to call here

    def values(chapter: str) -> dict:
        exercises = read_exercises(chapter)
        key = hashlib.sha256(repr(exercises).encode()).hexdigest()[:16]
        path = shared_tmp / f"solution-values-{chapter}-{key}.json"
        with FileLock(shared_tmp / f"solution-values-{chapter}.lock"):
            if not path.exists():
                path.write_text(json.dumps(run_solutions(exercises)))
        return json.loads(path.read_text())

    return values


@pytest.fixture(scope="session")
def estimate_within():
    """``estimate_within(results, factor=2)``: the peak memory a chapter run measured (kernel and grid workers
    together, :class:`medeval.runtime.notebook.PeakMemory`) lies within ``factor`` of the resource estimate its
    parameters gave before the run (:meth:`medeval.runtime.params.ChapterParams.resource_estimate`)."""

    def check(results: dict, factor: float = 2.0) -> float:
        measured, estimated = results["peak_memory_bytes"], results["resource_estimate"]["peak_bytes"]
        ratio = measured / estimated
        assert 1 / factor <= ratio <= factor, (
            f"measured peak {measured / 2**20:.0f} MiB vs estimate {estimated / 2**20:.0f} MiB (ratio {ratio:.2f}); "
            f"terms {results['resource_estimate']['terms']}")
        return ratio

    return check


@pytest.fixture(scope="session")
def recorded_time_within():
    """``recorded_time_within(chapter_id, profile, seconds, factor=2)``: a time estimate lies within ``factor`` of
    the wall time that the committed ``results/timings.json`` records for the chapter and profile (measured on
    the 2-core reference machine; nothing is timed in the test); skipped where no run is recorded."""
    from medeval.runtime.calibration import recorded_timings, reference_seconds

    def check(chapter_id: str, profile: str, seconds: float | None, factor: float = 2.0) -> float:
        recorded = recorded_timings(chapter_id).get(profile)
        if recorded is None:
            pytest.skip(f"results/timings.json records no {profile} run of {chapter_id}")
        assert seconds is not None, f"{chapter_id} ({profile}) gives no time estimate"
        ratio = reference_seconds(seconds) / recorded["wall_time_s"]
        assert 1 / factor <= ratio <= factor, (chapter_id, profile, seconds, recorded["wall_time_s"])
        return ratio

    return check


@pytest.fixture(scope="session")
def peak_growth():
    """``peak_growth(work, setup="")``: bytes by which a fresh interpreter's peak resident memory grows while it
    runs the Python source ``work`` (after ``setup``, whose imports and data do not count). The high-water mark is
    Linux's VmHWM, which starts afresh with the new program; not ``ru_maxrss``, which a child keeps from the (large)
    test process it was forked from. What a resource estimate's data term is checked against."""
    import subprocess
    import sys

    prelude = ("def _peak():\n"
               "    status = open('/proc/self/status').read().splitlines()\n"
               "    return int(next(x for x in status if x.startswith('VmHWM:')).split()[1]) * 1024\n")

    def run(work: str, setup: str = "") -> int:
        code = f"{prelude}{setup}\n_before = _peak()\n{work}\nprint(_peak() - _before)\n"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-3000:]
        return int(out.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture(scope="session")
def in_range():
    """``in_range(values, lo, hi, finite_share)``: every finite value lies in ``[lo, hi]`` and at least
    ``finite_share`` of the values are finite (None and NaN count as not finite), so a table of NaNs cannot pass."""
    import math

    def check(values, lo: float, hi: float, finite_share: float = 1.0) -> None:
        values = list(values)
        assert values, "no values to check"
        finite = [v for v in values if v is not None and math.isfinite(v)]
        assert all(lo <= v <= hi for v in finite), [v for v in finite if not lo <= v <= hi]
        assert len(finite) >= finite_share * len(values), (
            f"only {len(finite)} of {len(values)} values are finite (at least {finite_share:.0%} expected)")

    return check
