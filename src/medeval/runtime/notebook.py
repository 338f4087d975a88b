"""What a chapter notebook calls: set-up, recording of headline numbers, the page's tables, and the provenance cell.

The one module a chapter imports from the runtime (``from medeval.runtime import notebook``). It sets a page up
(:func:`setup`) and closes it (:func:`provenance`); the rest is implemented, one job each, in

* :mod:`medeval.runtime.recording`: the kernel's state and :func:`record`, :func:`record_table`, :func:`elapsed`;
* :mod:`medeval.runtime.seeding`: :func:`seed_everything`; :mod:`medeval.runtime.memory`: :class:`PeakMemory`;
* :mod:`medeval.runtime.display`: :func:`show_table`, :func:`column_formatter`, :func:`mean_sd`, :class:`HTMLTable`;
* :mod:`medeval.runtime.claims_page`: :func:`claims_sections`, :func:`paper_vs_us`, :func:`record_checks`,
  :func:`record_errata`; :mod:`medeval.runtime.claims_tables`: :func:`claims_display`, :func:`checks_display`,
  :func:`errata_display`;
* :mod:`medeval.runtime.run_tables`: :func:`parameters_table`, :func:`time_to_run_table`;
* :mod:`medeval.runtime.quiz`: :func:`self_check`;

and named here (``__all__``), so that a chapter needs this module only.

A chapter records every number its prose, its scorecard row or its tests rely on with :func:`record`;
the values land in ``<executed notebook>.results.json`` (path given by the runner in
``$MEDEVAL_RESULTS_FILE``), which the book's scorecard and reproducibility pages and the tests read.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from medeval.core.claims import REQUIRED_CLAIM_COLUMNS  # a leaf module: no medeval imports
from medeval.core.schema import ChapterParams, ParameterError, format_bytes
from medeval.runtime import provenance as _provenance
from medeval.runtime.claims_page import (
    ClaimsSections,
    claims_sections,
    paper_vs_us,
    record_checks,
    record_errata,
)
from medeval.runtime.claims_tables import (
    FIGURES_GLANCE_CHARS,
    REASON_GLANCE_CHARS,
    checks_display,
    claims_display,
    errata_display,
    figures_at_a_glance,
    reason_at_a_glance,
)
from medeval.runtime.display import (
    DENSE_COLUMNS,
    FOLD_ROWS,
    MISSING,
    HTMLTable,
    column_formatter,
    mean_sd,
    show_table,
)
from medeval.runtime.memory import PeakMemory
from medeval.runtime.params import get_chapter, resolve_params
from medeval.runtime.paths import project_root, runs_dir
from medeval.runtime.preflight import preflight
from medeval.runtime.quiz import self_check
from medeval.runtime.recording import _require_setup, _results_file, _state, elapsed, record, record_table
from medeval.runtime.run_tables import (
    INFRASTRUCTURE_FIELDS,
    parameters_table,
    provenance_table,
    time_to_run_table,
)
from medeval.runtime.seeding import seed_everything

__all__ = [
    "DENSE_COLUMNS",
    "FIGURES_GLANCE_CHARS",
    "FOLD_ROWS",
    "INFRASTRUCTURE_FIELDS",
    "MISSING",
    "REASON_GLANCE_CHARS",
    "SCORECARD_COLUMNS",
    "ClaimsSections",
    "HTMLTable",
    "PeakMemory",
    "cache_dir",
    "checks_display",
    "claims_display",
    "claims_sections",
    "column_formatter",
    "elapsed",
    "errata_display",
    "figures_at_a_glance",
    "mean_sd",
    "paper_vs_us",
    "parameters_table",
    "provenance",
    "reason_at_a_glance",
    "record",
    "record_checks",
    "record_errata",
    "record_table",
    "seed_everything",
    "self_check",
    "setup",
    "show_table",
    "time_to_run_table",
]

SCORECARD_COLUMNS = REQUIRED_CLAIM_COLUMNS
_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open", "display"}


def setup(chapter_id: str, namespace: dict[str, Any]) -> ChapterParams:
    """Resolve and validate the notebook's parameters, seed every generator, start the clock.

    ``namespace`` is the notebook's ``globals()``: ``profile`` plus one variable per schema field (``None``
    meaning "the profile's value"). Values injected by papermill (``-p name value``) override the profile.
    Any other public name present at this point is an unknown parameter and is refused. ``medeval run`` injects
    every field already resolved, with ``_medeval_resolved = True``: then each value is used as it is, ``None``
    included (``--set name=null`` for a field that accepts null), so the page computes what its records say.
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
    if namespace.get("_medeval_resolved"):
        overrides = {k: namespace[k] for k in schema.model_fields if k in namespace}
    else:
        overrides = {k: namespace[k] for k in schema.model_fields if namespace.get(k) is not None}
    params = resolve_params(chapter_id, profile, overrides)
    estimate = preflight(chapter_id, params)  # data, device and memory, before any compute
    from medeval.runtime import numerics

    seed_everything(params.seed)  # pins torch (one thread, oneDNN only for direct convolutions) if already imported
    # `medeval run` set the variables before the kernel started. Setting them now (papermill alone) would pin only
    # the worker processes this kernel starts, not the libraries it has loaded: a mix worse than either mode.
    # Checked after seed_everything: before it, a chapter that imported torch first (04a, 04b, 05) was reported
    # "oneDNN is on" although pin_torch switched it off before any compute.
    for problem in numerics.check_pinned():
        print(f"[medeval] numerics not fully pinned: {problem}; start the kernel with `medeval run` (or export "
              "the variables of medeval.runtime.numerics.PINNED_ENVIRONMENT) for the same numbers on any CPU",
              file=sys.stderr)
    _configure_display()
    if os.environ.get("MEDEVAL_RESULTS_FILE"):  # a kernel started by `medeval run` dies with it
        from medeval.runtime.lifetime import watch_parent

        watch_parent()
    if _state.get("memory") is not None:
        _state["memory"].stop()
    _state.clear()
    _state.update(
        chapter=chapter_id, profile=profile, params=params, start=time.perf_counter(),
        results={}, results_file=_results_file(chapter_id), memory=PeakMemory().start(),
    )
    record("profile", profile)
    record("params", params.model_dump(mode="json"))
    record("resource_estimate", {"peak_bytes": estimate.peak_bytes, "seconds": estimate.seconds,
                                 "drivers": estimate.drivers, "terms": estimate.terms})
    if not os.environ.get("MEDEVAL_RESULTS_FILE"):
        # run by hand (Jupyter, papermill): say what it will cost here; under `medeval run` the runner has said it
        # in the terminal, and a log line does not belong on the rendered page
        from medeval.runtime.calibration import reference_seconds

        print(f"[medeval] {chapter_id} ({profile}): {estimate.describe(reference_seconds)}")
    return params


def _configure_display() -> None:
    from medeval.plots import apply_book_style

    apply_book_style()
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png")
    except ImportError:
        pass


def cache_dir(name: str) -> Path:
    """A per-chapter, per-profile folder for resumable grid results (see :func:`medeval.runtime.grid.run_grid`),
    inside a sub-folder named after the chapter's local data (:func:`medeval.runtime.cache_keys.local_data_digest`),
    so runs computed on other data files are never reused."""
    _require_setup()
    from medeval.runtime.cache_keys import local_data_digest

    data = local_data_digest(get_chapter(_state["chapter"]).datasets)[:12]  # new local data: fresh grid caches
    path = runs_dir() / "grid-cache" / _state["profile"] / _state["chapter"] / f"data-{data}" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def provenance():
    """The last cell of every chapter: records and displays versions, commit, device, profile, params, time."""
    _require_setup()
    info = _provenance.collect(project_root())
    from medeval.runtime import numerics

    problems = numerics.check_pinned()
    info["numerics"] = numerics.describe() + (f" — incomplete: {'; '.join(problems)}" if problems else "")
    info["profile"] = _state["profile"]
    info["wall_time_s"] = round(elapsed(), 1)
    memory: PeakMemory = _state["memory"]
    memory.sample()
    info["peak_memory"] = format_bytes(memory.peak)
    record("peak_memory_bytes", memory.peak)
    record("provenance", info)
    record("wall_time_s", info["wall_time_s"])
    return provenance_table(info, _state["params"])
