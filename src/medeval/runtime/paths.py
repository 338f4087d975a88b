"""Where the compendium's files live."""

from __future__ import annotations

import os
from pathlib import Path

from medeval._files import atomic_write_bytes, atomic_write_text, project_root

__all__ = ["atomic_write_bytes", "atomic_write_text", "project_root", "runs_dir"]


def runs_dir() -> Path:
    """The run store (:mod:`medeval.runtime.runs`) and the grid cache: ``<root>/_runs/`` (``MEDEVAL_RUNS`` moves it)."""
    env = os.environ.get("MEDEVAL_RUNS")
    return Path(env) if env else project_root() / "_runs"
