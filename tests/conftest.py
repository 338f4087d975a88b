"""Shared fixtures. ``run_chapter_smoke(id)`` executes a chapter once per session under the smoke profile.

Executions are cached under ``_runs/smoke`` by their content key (notebook, parameters, src/medeval, manifest
entries, installed versions), so a re-run of the suite with nothing changed reuses them; any change re-executes.
"""

from __future__ import annotations

import pytest

from medeval.runtime.execution import run_chapter

_executed: dict = {}


@pytest.fixture(scope="session")
def run_chapter_smoke():
    def run(chapter_id: str):
        if chapter_id not in _executed:
            _executed[chapter_id] = run_chapter(chapter_id, "smoke")
        return _executed[chapter_id]

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
