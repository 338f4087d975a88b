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

from medeval.experiments.claims import (  # a leaf module: no medeval imports
    BASES,
    CHECK_COLUMNS,
    CLAIM_COLUMNS,
    ERRATUM_COLUMNS,
    REQUIRED_CLAIM_COLUMNS,
    VERDICTS,
    ClaimList,
)
from medeval.runtime import provenance as _provenance
from medeval.runtime.params import ChapterParams, ParameterError, get_chapter, resolve_params
from medeval.runtime.paths import project_root, runs_dir

SCORECARD_COLUMNS = REQUIRED_CLAIM_COLUMNS
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


def _rows(items, columns, required, what: str) -> list[dict]:
    """Rows from Claim/Check/Erratum objects (``.row()``), dicts or a DataFrame, checked for ``required`` columns."""
    if hasattr(items, "to_dict"):
        rows = items.to_dict(orient="records")
    else:
        rows = [x.row() if hasattr(x, "row") else dict(x) for x in items]
    for i, r in enumerate(rows):
        missing = [c for c in required if c not in r]
        if missing:
            raise ValueError(f"{what}: row {i} misses columns {missing}; expected at least {list(required)}")
    return [{c: _jsonable(r.get(c, "")) for c in columns} for r in rows]


def paper_vs_us(claims):
    """Record the chapter's paper-versus-us table and return it for display.

    ``claims`` is a :class:`~medeval.experiments.claims.ClaimList` (its checks and errata are recorded too), a list
    of :class:`~medeval.experiments.claims.Claim`, or a DataFrame with at least the columns
    ``claim, paper, ours, basis, n, test, verdict, reason``. Verdicts are ``[Re]``, ``[¬Re]``, ``[~]`` or ``[n/a]``;
    the basis is ``exact``, ``real`` or ``phantom``. The book's Scorecard page gathers these tables.
    """
    if isinstance(claims, ClaimList):
        record_checks(claims.checks)
        record_errata(claims.errata)
        items = claims.claims
    else:
        items = claims
    rows = _rows(items, CLAIM_COLUMNS, REQUIRED_CLAIM_COLUMNS, "paper_vs_us")
    for i, r in enumerate(rows):
        if r["verdict"] not in VERDICTS:
            raise ValueError(f"paper_vs_us: row {i} verdict must be one of {VERDICTS}, got {r['verdict']!r}")
        if r["basis"] not in BASES:
            raise ValueError(f"paper_vs_us: row {i} basis must be one of {BASES}, got {r['basis']!r}")
        r["id"] = r["id"] or f"row{i + 1}"
        r["scale"] = r["scale"] or _state.get("profile", "")
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"paper_vs_us: duplicate claim ids {sorted({i for i in ids if ids.count(i) > 1})}")
    record("paper_vs_us", rows)
    return claims_display(rows)


def record_checks(checks) -> list[dict]:
    """Record the chapter's checks (formula identities, pass/fail); they are not claims."""
    rows = _rows(checks, CHECK_COLUMNS, ("check", "passed"), "checks")
    record("checks", rows)
    return rows


def record_errata(errata) -> list[dict]:
    """Record the chapter's errata (arithmetic on numbers printed in the paper); they are not claims."""
    rows = _rows(errata, ERRATUM_COLUMNS, ("where", "printed", "recomputed"), "errata")
    record("errata", rows)
    return rows


def _html_escape(value) -> str:
    import html

    return html.escape(str(value))


class _HTMLTable:
    """An HTML table for notebook display (and a plain-text fallback); wraps text inside the content column."""

    def __init__(self, html_text: str, text: str):
        self._html, self._text = html_text, text

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        return self._text


_VERDICT_CLASS = {"[Re]": "re", "[¬Re]": "not-re", "[~]": "inconclusive", "[n/a]": "na"}


_NARROW = {"verdict", "basis", "scale"}


def claims_display(rows: list[dict], columns=("verdict", "claim", "where", "paper", "ours", "basis", "n", "test",
                                                "effect", "reason")) -> _HTMLTable:
    """The paper-versus-us table as HTML, one row per claim with the anchor ``claim-<id>`` the Scorecard links to.

    The table keeps a readable width (short columns do not wrap, text columns wrap at word boundaries) and scrolls
    horizontally inside the page's content column when it is wider."""
    head = "".join(f"<th>{c}</th>" for c in columns)
    body = []
    for r in rows:
        cells = []
        for c in columns:
            value = _html_escape(r.get(c, ""))
            if c == "verdict":
                cells.append(f'<td class="verdict {_VERDICT_CLASS.get(r.get("verdict"), "")}" '
                             f'style="white-space:nowrap"><strong>{value}</strong></td>')
            elif c in _NARROW:
                cells.append(f'<td style="white-space:nowrap">{value}</td>')
            else:
                cells.append(f'<td style="min-width:9em">{value}</td>')
        body.append(f'<tr id="claim-{_html_escape(r["id"])}">{"".join(cells)}</tr>')
    html_text = (
        '<div class="medeval-claims" style="overflow-x:auto"><table class="medeval-claims-table" '
        'style="min-width:1500px;font-size:0.8em;word-break:normal;overflow-wrap:normal">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")
    text = "\n".join(f"{r.get('verdict')} {r.get('id')}: {r.get('claim')}" for r in rows)
    return _HTMLTable(html_text, text)


def checks_display(rows: list[dict]) -> _HTMLTable:
    """The checks table (pass/fail) as HTML."""
    head = "".join(f"<th>{c}</th>" for c in CHECK_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{'pass' if r[c] is True else ('FAIL' if r[c] is False else _html_escape(r[c]))}</td>"
                         for c in CHECK_COLUMNS) + "</tr>" for r in rows)
    html_text = (f'<div style="overflow-x:auto"><table style="width:100%;font-size:0.85em">'
                 f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
    return _HTMLTable(html_text, "\n".join(f"{'pass' if r['passed'] else 'FAIL'} {r['check']}" for r in rows))


def errata_display(rows: list[dict]) -> _HTMLTable:
    """The errata table as HTML."""
    head = "".join(f"<th>{c}</th>" for c in ERRATUM_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{_html_escape(r[c])}</td>" for c in ERRATUM_COLUMNS) + "</tr>" for r in rows)
    html_text = (f'<div style="overflow-x:auto"><table style="width:100%;font-size:0.85em">'
                 f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
    return _HTMLTable(html_text, "\n".join(f"{r['where']}: {r['printed']} vs {r['recomputed']}" for r in rows))


def time_to_run_table() -> _HTMLTable:
    """The chapter's "Time to run" table: the last measured wall time per profile, from recorded runs.

    Reads ``results/timings.json`` (written by every run of a profile's own parameters); a profile that was never
    run says so instead of guessing. Nothing here is typed by hand.
    """
    _require_setup()
    from medeval.runtime.execution import recorded_timings
    from medeval.runtime.params import PROFILES

    timings = recorded_timings(_state["chapter"])
    rows = []
    for profile in PROFILES:
        t = timings.get(profile)
        if t:
            rows.append((profile, _format_duration(t["wall_time_s"]), f"{t['device']} ({t['cpu_count']} cores)",
                         t["started"][:10], t["git_commit"]))
        else:
            rows.append((profile, "not measured yet", "—", "—", "—"))
    head = "".join(f"<th>{c}</th>" for c in ("profile", "last measured wall time", "machine", "date", "commit"))
    body = "".join("<tr>" + "".join(f"<td>{_html_escape(v)}</td>" for v in r) + "</tr>" for r in rows)
    html_text = (f'<div style="overflow-x:auto"><table style="font-size:0.85em"><thead><tr>{head}</tr></thead>'
                 f"<tbody>{body}</tbody></table></div>")
    return _HTMLTable(html_text, "\n".join(f"{r[0]}: {r[1]}" for r in rows))


def _format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


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
