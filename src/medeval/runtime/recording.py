"""The record of a chapter kernel: its state since :func:`medeval.runtime.notebook.setup` and the values it records.

A chapter records every number its prose, its scorecard row or its tests rely on with :func:`record`; the values
land in ``<executed notebook>.results.json`` (path given by the runner in ``$MEDEVAL_RESULTS_FILE``; run by hand,
``<run store>/interactive/<chapter>.results.json``), written whole after every record, which the book's scorecard
and reproducibility pages and the tests read. ``_state`` is the one state of the kernel (chapter, profile,
parameters, clock, memory sampler, results) that the page's other helpers read.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from medeval.runtime.paths import atomic_write_text, runs_dir

_state: dict[str, Any] = {}


def _results_file(chapter_id: str) -> Path:
    env = os.environ.get("MEDEVAL_RESULTS_FILE")
    return Path(env) if env else runs_dir() / "interactive" / f"{chapter_id}.results.json"


def _require_setup() -> None:
    if not _state:
        raise RuntimeError("call medeval.runtime.notebook.setup(chapter_id, globals()) first")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def _write() -> None:
    path: Path = _state["results_file"]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(_state["results"], indent=1, sort_keys=True))


def record(key: str, value: Any) -> Any:
    """Record a headline value (number, string, list or dict); returns it unchanged for inline use."""
    _require_setup()
    _state["results"][key] = _jsonable(value)
    _write()
    return value


def record_table(key: str, frame) -> Any:
    """Record a pandas DataFrame as a list of row records (its index becomes a column if named)."""
    data = frame.reset_index() if frame.index.name is not None else frame
    record(key, data.to_dict(orient="records"))
    return frame


def elapsed() -> float:
    """Seconds since :func:`medeval.runtime.notebook.setup` started the clock."""
    _require_setup()
    return time.perf_counter() - _state["start"]
