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
