"""What a chapter notebook calls: set-up, recording of headline numbers, and the provenance cell.

A chapter records every number its prose, its scorecard row or its tests rely on with :func:`record`;
the values land in ``<executed notebook>.results.json`` (path given by the runner in
``$MEDEVAL_RESULTS_FILE``), which the book's scorecard and reproducibility pages and the tests read.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from medeval.runtime import provenance as _provenance
from medeval.runtime.params import ChapterParams, ParameterError, get_chapter, resolve_params
from medeval.runtime.paths import project_root, runs_dir

SCORECARD_COLUMNS = ("claim", "paper", "ours", "verdict", "reason")
VERDICTS = ("[Re]", "[¬Re]", "[n/a]")
_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open", "display"}

_state: dict[str, Any] = {}


def _results_file(chapter_id: str) -> Path:
    env = os.environ.get("MEDEVAL_RESULTS_FILE")
    return Path(env) if env else runs_dir() / "interactive" / f"{chapter_id}.results.json"


def setup(chapter_id: str, namespace: dict[str, Any]) -> ChapterParams:
    """Resolve and validate the notebook's parameters, seed every generator, start the clock.

    ``namespace`` is the notebook's ``globals()``: ``profile`` plus one variable per schema field (``None``
    meaning "the profile's value"). Values injected by papermill (``-p name value``) override the profile.
    Any other public name present at this point is an unknown parameter and is refused.
    """
    chapter = get_chapter(chapter_id)
    schema = chapter.schema
    profile = namespace.get("profile", "default")
    stray = sorted(
        name for name in namespace
        if not name.startswith("_") and name not in _IPYTHON_NAMES and name != "profile"
        and name not in schema.model_fields and not callable(namespace[name])
        and type(namespace[name]).__name__ != "module"
    )
    if stray:
        raise ParameterError(
            f"unknown parameter(s) {stray} for chapter {chapter_id!r}; valid parameters: "
            f"{', '.join(schema.model_fields)}"
        )
    overrides = {k: namespace[k] for k in schema.model_fields if namespace.get(k) is not None}
    params = resolve_params(chapter_id, profile, overrides)
    seed_everything(params.seed)
    _configure_display()
    _state.clear()
    _state.update(
        chapter=chapter_id, profile=profile, params=params, start=time.perf_counter(),
        results={}, results_file=_results_file(chapter_id),
    )
    record("profile", profile)
    record("params", params.model_dump(mode="json"))
    return params


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        import torch

        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
    except ImportError:
        pass


def _configure_display() -> None:
    import matplotlib

    matplotlib.rcParams.update({"figure.dpi": 96, "savefig.dpi": 96, "figure.figsize": (7.0, 4.0)})
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png")
    except ImportError:
        pass


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
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(_state["results"], indent=1, sort_keys=True))
    os.replace(tmp, path)


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


def paper_vs_us(frame):
    """Record the chapter's paper-versus-us table (columns ``claim, paper, ours, verdict, reason``).

    The verdict is one of ``[Re]`` (reproduced), ``[¬Re]`` (not reproduced) or ``[n/a]`` (not testable here).
    The book's Scorecard page gathers these tables from every chapter.
    """
    missing = [c for c in SCORECARD_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"paper_vs_us: missing columns {missing}; expected {list(SCORECARD_COLUMNS)}")
    bad = sorted(set(frame["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"paper_vs_us: verdicts must be one of {VERDICTS}, got {bad}")
    record("paper_vs_us", frame[list(SCORECARD_COLUMNS)].astype(str).to_dict(orient="records"))
    return frame


def cache_dir(name: str) -> Path:
    """A per-chapter, per-profile folder for resumable grid results (see :func:`medeval.runtime.grid.run_grid`),
    inside a sub-folder named after the chapter's local data (:func:`medeval.runtime.execution.local_data_digest`),
    so runs computed on other data files are never reused."""
    _require_setup()
    from medeval.runtime.execution import local_data_digest

    data = local_data_digest(get_chapter(_state["chapter"]).datasets)[:12]  # new local data: fresh grid caches
    path = runs_dir() / "grid-cache" / _state["profile"] / _state["chapter"] / f"data-{data}" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def elapsed() -> float:
    _require_setup()
    return time.perf_counter() - _state["start"]


def provenance():
    """The last cell of every chapter: records and displays versions, commit, device, profile, params, time."""
    _require_setup()
    info = _provenance.collect(project_root())
    info["profile"] = _state["profile"]
    info["wall_time_s"] = round(elapsed(), 1)
    record("provenance", info)
    record("wall_time_s", info["wall_time_s"])
    import pandas as pd

    rows = {**info, "parameters": json.dumps(_state["params"].model_dump(mode="json"))}
    return pd.DataFrame({"value": [str(v) for v in rows.values()]}, index=pd.Index(list(rows), name="provenance"))
