"""What a chapter notebook calls: set-up, recording of headline numbers, and the provenance cell.

A chapter records every number its prose, its scorecard row or its tests rely on with :func:`record`;
the values land in ``<executed notebook>.results.json`` (path given by the runner in
``$MEDEVAL_RESULTS_FILE``), which the book's scorecard and reproducibility pages and the tests read.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import math
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from medeval.core.claims import (  # a leaf module: no medeval imports
    BASES,
    CHECK_COLUMNS,
    CLAIM_COLUMNS,
    ERRATUM_COLUMNS,
    REQUIRED_CLAIM_COLUMNS,
    VERDICTS,
    ClaimList,
    check_outcome_label,
    explain,
)
from medeval.runtime import provenance as _provenance
from medeval.runtime.params import (
    ChapterParams,
    ParameterError,
    format_bytes,
    get_chapter,
    preflight,
    resolve_params,
)
from medeval.runtime.paths import atomic_write_text, project_root, runs_dir

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

    seed_everything(params.seed)  # pins torch (one thread, oneDNN off) if a chapter module already imported it
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


_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class PeakMemory:
    """The peak memory of this process and all its descendants together (grid workers included), sampled every
    ``interval`` seconds in a daemon thread; what the resource estimate is checked against.

    This process counts its resident set (RSS, shared libraries included: what it needs when it runs alone), each
    descendant only its private pages (a forked grid worker shares the kernel's pages, which are counted once, in
    the kernel). Neither depends on unrelated processes: the proportional set size (PSS) used before shrank when
    other programs mapped the same libraries (a kernel with torch: 354 MB alone, 264 MB beside five similar
    processes), so a run measured in a busy test suite looked smaller than it is. On Linux the kernel's own sums
    (``/proc/<pid>/smaps_rollup``, a walk of the page tables: 3 ms a process) are read for the descendants, and
    the resident count in ``/proc/<pid>/statm`` (0.05 ms, the same figure) for this process, which is sampled
    whether or not it has workers; elsewhere psutil's RSS and USS.
    """

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.peak = 0
        self._stop = None

    @staticmethod
    def _footprint(proc, root: bool) -> int:
        """Bytes ``proc`` adds to the total: its RSS for the root process, its private pages for a descendant."""
        try:
            if root:
                with open(f"/proc/{proc.pid}/statm", "rb") as f:
                    return int(f.read().split()[1]) * _PAGE_BYTES
            private = 0
            with open(f"/proc/{proc.pid}/smaps_rollup", "rb") as f:
                for line in f:
                    name, _, rest = line.partition(b":")
                    if name in (b"Private_Clean", b"Private_Dirty"):
                        private += int(rest.split()[0]) * 1024
            return private
        except OSError:
            pass
        info = proc.memory_full_info()
        return info.rss if root else getattr(info, "uss", info.rss)

    def sample(self) -> int:
        import psutil

        me = psutil.Process()
        total = 0
        for proc in [me, *me.children(recursive=True)]:
            try:
                total += self._footprint(proc, root=proc is me)
            except psutil.Error:  # a worker that just exited
                pass
        self.peak = max(self.peak, total)
        return total

    def start(self) -> PeakMemory:
        import threading

        self._stop = threading.Event()
        self.sample()

        def loop():
            while not self._stop.wait(self.interval):
                self.sample()

        threading.Thread(target=loop, name="medeval-peak-memory", daemon=True).start()
        return self

    def stop(self) -> int:
        if self._stop is not None:
            self._stop.set()
        return self.sample()


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's generators and ask torch for deterministic kernels (warning where an
    operation has none; cuDNN's benchmark mode off).

    Torch is seeded where it is loaded: at once if it is already imported, else the moment it is first imported
    (by this process or by a grid worker forked from it), before any code can use it. A chapter that never uses
    torch does not load it (1.2 s and about 150 MB in every kernel).
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    _SeedTorchOnImport.uninstall()
    if "torch" in sys.modules:
        _seed_torch(sys.modules["torch"], seed)
    else:
        sys.meta_path.insert(0, _SeedTorchOnImport(seed))


def _seed_torch(torch, seed: int) -> None:
    from medeval.runtime.numerics import pin_torch

    pin_torch(torch)  # one thread and oneDNN off when the numerics are pinned, before torch computes anything
    torch.manual_seed(seed)
    if "torch._inductor" in sys.modules:
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:  # what the public call does, less importing the compiler (1.2 s per kernel) to set its flag too
        torch._C._set_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False


class _SeedTorchOnImport(importlib.abc.MetaPathFinder):
    """A one-shot import hook: finds ``torch`` through the other finders and seeds it (:func:`_seed_torch`) as
    soon as its module has executed, before the import statement that loaded it returns."""

    def __init__(self, seed: int):
        self.seed = seed

    @classmethod
    def uninstall(cls) -> None:
        sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, cls)]

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        self.uninstall()  # before looking torch up, so that the look-up does not come back here
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, seed = spec.loader, self.seed
        execute = loader.exec_module

        def exec_module(module):
            execute(module)
            _seed_torch(module, seed)

        loader.exec_module = exec_module
        return spec


def _configure_display() -> None:
    from medeval.plots import apply_book_style

    apply_book_style()
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


def _record_claims(claims) -> list[dict]:
    """Record the chapter's paper-versus-us table (and a ClaimList's checks and errata); return its rows.

    ``claims`` is a :class:`~medeval.core.claims.ClaimList` (its checks and errata are recorded too), a list
    of :class:`~medeval.core.claims.Claim`, or a DataFrame with at least the columns
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
    _glue_key_findings(rows)
    return rows


def paper_vs_us(claims) -> HTMLTable:
    """Record the chapter's paper-versus-us table (:func:`_record_claims`) and return it for display."""
    return claims_display(_record_claims(claims))


class ClaimsSections:
    """The recorded tail of a chapter page (:func:`claims_sections`): each method returns what one cell shows."""

    def __init__(self, claims: ClaimList, rows: list[dict]):
        self.claims, self._rows = claims, rows

    def table(self) -> HTMLTable:
        """The Paper-vs-us table (:func:`claims_display`)."""
        return claims_display(self._rows)

    def why(self):
        """The "not reproduced, and why" text (:func:`medeval.core.claims.explain`), as Markdown."""
        from IPython.display import Markdown

        return Markdown(explain(self.claims))

    def checks(self) -> HTMLTable:
        """The Checks table (:func:`checks_display`)."""
        return checks_display([c.row() for c in self.claims.checks])

    def errata(self) -> HTMLTable:
        """The Errata table (:func:`errata_display`)."""
        return errata_display([e.row() for e in self.claims.errata])


def claims_sections(claims: ClaimList) -> ClaimsSections:
    """Record a chapter's decided claims, checks and errata in one call (:func:`paper_vs_us`), and return the tail
    of its page: ``.table()`` (the Paper-vs-us table), ``.why()``, ``.checks()`` and ``.errata()``, each shown in
    its own cell under the page's headings *Paper vs us*, *Checks* and *Deviations and errata*.

    ``claims`` is what ``CLAIMS.decide(inputs, scale=profile)`` returns (:class:`medeval.core.chapter.ClaimRegistry`).
    """
    if not isinstance(claims, ClaimList):
        raise TypeError(f"claims_sections needs the ClaimList of CLAIMS.decide(...), got {type(claims).__name__}")
    return ClaimsSections(claims, _record_claims(claims))


def _glue_key_findings(rows: list[dict]) -> None:
    """Glue the chapter's generated Key findings (``{glue:md}`key-findings```, shown at the top of the page)."""
    from IPython.display import Markdown

    from medeval.core.claims import key_findings
    from medeval.runtime.robustness import agreement

    seed = getattr(_state.get("params"), "seed", None)
    sensitive = set()
    if _state.get("chapter"):
        for r in rows:
            a = agreement(_state["chapter"], _state["profile"], r["id"], r["verdict"], rule=r.get("rule"),
                          seed=seed if isinstance(seed, int) else None)
            if a and a.get("seed_sensitive"):
                sensitive.add(r["id"])
    text = key_findings(rows, seed_sensitive=sensitive)
    # glued, not recorded: the recorded outputs (and the committed references) stay independent of the
    # robustness record, which only marks rows
    try:
        from myst_nb import glue
    except ImportError:  # outside the book's environment there is no page to show it on
        return
    glue("key-findings", Markdown(text), display=False)


def record_checks(checks) -> list[dict]:
    """Record the chapter's checks (formula identities and design checks; ``passed`` True, False or None for
    undecided at this scale); they are not claims."""
    rows = _rows(checks, CHECK_COLUMNS, ("check", "passed"), "checks")
    bad = [r["check"] for r in rows if r["passed"] not in (True, False, None)]
    if bad:
        raise ValueError(f"checks {bad}: 'passed' must be True, False or None (undecided)")
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


class HTMLTable:
    """An HTML table for notebook display (and a plain-text fallback); wraps text inside the content column."""

    def __init__(self, html_text: str, text: str):
        self._html, self._text = html_text, text

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        return self._text


# Every table of the book sits in this box: it never grows wider than the page's content column; a table that
# cannot wrap further scrolls inside it.
_TABLE_BOX = '<div class="medeval-table-box" style="overflow-x:auto;max-width:100%">{}</div>'
_VERDICT_CLASS = {"[Re]": "re", "[¬Re]": "not-re", "[~]": "inconclusive", "[n/a]": "na"}
MISSING = "—"


def _decimals(values, digits: int) -> int:
    """Decimals that show ``digits`` significant digits of the column's largest magnitude (at most 6)."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return 0
    return int(min(6, max(0, digits - 1 - math.floor(math.log10(max(finite))))))


def column_formatter(values, digits: int = 3):
    """One format for a whole column, so its numbers line up: integers with thousands separators; floats with
    ``digits`` significant digits of the column's largest value, or scientific notation for columns of tiny or huge
    numbers; booleans as yes/no; missing values as an em dash; sequences joined with commas."""
    vals = list(values)

    def is_num(v):
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))

    nums = [float(v) for v in vals if is_num(v) and not (isinstance(v, float) and math.isnan(v))]
    integral = bool(nums) and all(math.isfinite(v) and v == round(v) and abs(v) < 1e15 for v in nums) and not any(
        isinstance(v, (float, np.floating)) and not float(v).is_integer() for v in vals if is_num(v))
    finite = [abs(v) for v in nums if math.isfinite(v) and v != 0]
    scientific = bool(finite) and not integral and (max(finite) < 1e-3 or max(finite) >= 1e6)
    decimals = _decimals(nums, digits)

    def fmt(v):
        if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)):
            return MISSING
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        if is_num(v):
            v = float(v)
            if not math.isfinite(v):
                return "∞" if v > 0 else "−∞"
            if integral:
                return f"{int(round(v)):,}"
            if scientific:
                return f"{v:.{max(digits - 1, 0)}e}"
            return f"{v:,.{decimals}f}"
        if isinstance(v, dict):
            return ", ".join(f"{k}: {fmt(x)}" for k, x in v.items())
        if isinstance(v, (list, tuple, np.ndarray)):
            return ", ".join(fmt(x) for x in v)
        return str(v)

    return fmt


def mean_sd(mean, sd, digits: int = 3) -> list[str]:
    """``"mean ± sd"`` strings for a table column, one NaN policy for every chapter: ``"—"`` where the mean is not
    finite, the mean alone where only the SD is not (a single run has no SD). Non-breaking spaces keep each entry on
    one line when the table wraps."""
    means, sds = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
    if means.shape != sds.shape:
        raise ValueError(f"mean_sd: mean has shape {means.shape} and sd {sds.shape}; expected the same")
    return ["—" if not np.isfinite(m) else (f"{m:.{digits}f}\u00a0±\u00a0{s:.{digits}f}" if np.isfinite(s)
                                             else f"{m:.{digits}f}") for m, s in zip(means, sds, strict=True)]


#: a table of more rows than this is shown folded under its caption (:func:`show_table`): the figure beside it
#: carries the reading path, the numbers are one click away
FOLD_ROWS = 6
#: a table of this many columns or more is set in smaller type (book/_static/medeval.css), so it fits the column
DENSE_COLUMNS = 8


def show_table(frame, *, caption: str | None = None, digits: int = 3, formats: dict | None = None,
               index: bool | None = None, labels: dict[str, str] | None = None,
               fold: bool | None = None) -> HTMLTable:
    """A DataFrame as a formatted table of the book (pandas Styler): numbers rounded to ``digits`` significant
    digits with one format per column (see :func:`column_formatter`), column names without underscores, an optional
    caption, and a box that keeps the table inside the page's content column (text wraps; a table too wide to wrap
    scrolls inside the box). ``formats`` maps a column to a format string (``"{:.1%}"``) or a callable; ``labels``
    renames columns for display; the index is shown when it is named (or when ``index`` is true). ``fold``: the
    table collapsed under its caption and size, a reader opens it (default: when it has more than
    :data:`FOLD_ROWS` rows)."""
    import pandas as pd

    if isinstance(frame, pd.Series):
        frame = frame.to_frame(frame.name if frame.name is not None else "value")
    show_index = (frame.index.name is not None or any(n is not None for n in frame.index.names)) if index is None else index
    data = frame.reset_index() if show_index else frame.reset_index(drop=True)
    data = data.loc[:, ~data.columns.duplicated()]
    data.columns = [str(c) for c in data.columns]
    formatters = {}
    for col in data.columns:
        given = (formats or {}).get(col)
        if isinstance(given, str):
            formatters[col] = (lambda g: lambda v: MISSING if v is None or (isinstance(v, float) and math.isnan(v))
                               else g.format(v))(given)
        elif callable(given):
            formatters[col] = given
        else:
            formatters[col] = column_formatter(data[col].tolist(), digits)
    shown = pd.DataFrame({c: [formatters[c](v) for v in data[c].tolist()] for c in data.columns}, index=data.index)
    names = {c: (labels or {}).get(c, c.replace("_", " ")) for c in shown.columns}
    shown = shown.rename(columns=names)
    numeric = [names[c] for c in data.columns if pd.api.types.is_numeric_dtype(data[c]) and data[c].dtype != bool]
    dense = " medeval-dense" if len(shown.columns) >= DENSE_COLUMNS else ""  # smaller type: it fits the column
    styler = shown.style.hide(axis="index").set_table_attributes(f'class="medeval-table{dense}"')
    styler = styler.set_properties(subset=numeric, **{"text-align": "right", "white-space": "nowrap"})
    folded = len(shown) > FOLD_ROWS if fold is None else fold
    if caption and not folded:
        styler = styler.set_caption(_html_escape(caption))
    html_text = _TABLE_BOX.format(styler.to_html())
    if folded:
        size = f"{len(shown)} rows × {len(shown.columns)} columns"
        html_text = _collapsed(f"{_html_escape(caption)} ({size})" if caption else f"The table ({size})", html_text)
    return HTMLTable(html_text, shown.to_string(index=False))


#: the fields that say how a chapter ran, not what it computes (the device, the Dask scheduler, the pool size):
#: shown in one line under the table, not as rows
INFRASTRUCTURE_FIELDS = ("device", "scheduler", "max_workers")


def parameters_table() -> HTMLTable:
    """The chapter's parameters, collapsed under a one-line summary that names the profile and every value the run
    changed from it: a table of name, value (the profile's value where the run changed it) and the help text from
    the schema (the single source of defaults, ranges and help), then one line for how the run was executed
    (:data:`INFRASTRUCTURE_FIELDS`)."""
    _require_setup()
    params: ChapterParams = _state["params"]
    profile_values = resolve_params(_state["chapter"], _state["profile"]).model_dump(mode="json")
    rows, infrastructure = [], []
    for name, field in type(params).model_fields.items():
        value = getattr(params, name)
        value = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        changed = _jsonable(value) != profile_values.get(name)
        row = (name, _format_param(value), _format_param(profile_values.get(name)) if changed else "",
               field.description or "")
        (infrastructure if name in INFRASTRUCTURE_FIELDS else rows).append(row)
    any_changed = any(pv for _, _, pv, _ in rows)
    columns = ("parameter", "value", f"{_state['profile']} profile's value", "meaning") if any_changed else (
        "parameter", "value", "meaning")
    head = "".join(f"<th>{c}</th>" for c in columns)
    body = "".join(
        f'<tr><td><code>{_html_escape(n)}</code></td><td style="overflow-wrap:anywhere">{_html_escape(v)}</td>'
        + (f"<td>{_html_escape(pv)}</td>" if any_changed else "") + f"<td>{_html_escape(h)}</td></tr>"
        for n, v, pv, h in rows)
    changed = [f"<code>{_html_escape(n)}</code> = {_html_escape(v)}" for n, v, pv, _ in rows + infrastructure if pv]
    profile = _html_escape(_state["profile"])
    summary = (f"Parameters of this run: {len(rows)} values of the <code>{profile}</code> profile"
               + (f"; changed from it: {', '.join(changed)}" if changed else ", none changed"))
    ran = "; ".join(f"<code>{_html_escape(n)}</code> = {_html_escape(v)}" + (f" (profile: {_html_escape(pv)})" if pv
                                                                             else "")
                    for n, v, pv, _ in infrastructure)
    html_text = (f'<details class="medeval-params"><summary>{summary}</summary>'
                 + _TABLE_BOX.format(f'<table class="medeval-table medeval-params"><thead><tr>{head}</tr></thead>'
                                     f"<tbody>{body}</tbody></table>")
                 + f"<p>How it ran: {ran}. <code>medeval params {_html_escape(_state['chapter'])}</code> prints every "
                   "parameter's range.</p></details>")
    return HTMLTable(html_text, "\n".join(f"{n} = {v}" for n, v, _, _ in rows + infrastructure))


def _format_param(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_format_param(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_format_param(v)}" for k, v in value.items())
    return str(value)


#: the longest reason shown in a claims table's row; the whole reason is in the row's "how it was decided"
REASON_GLANCE_CHARS = 200


def reason_at_a_glance(reason: str, limit: int = REASON_GLANCE_CHARS) -> str:
    """The first sentence (or clause before ";") of a row's reason, at most ``limit`` characters (cut at a word,
    with "…"); the full reason stays one click away in the row's dropdown."""
    text = " ".join(str(reason or "").split())
    first = re.split(r"(?<=[.;])\s", text, maxsplit=1)[0].rstrip(";")
    if len(first) <= limit:
        return first
    cut = first[:limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;: ") + "…"


#: the most characters of a row's paper or ours figures shown in the Paper-vs-us table (the rest in its dropdown)
FIGURES_GLANCE_CHARS = 150


def figures_at_a_glance(text: str, limit: int = FIGURES_GLANCE_CHARS) -> str:
    """The headline of a row's paper or ours figures: whole when at most ``limit`` characters, else the clauses
    (separated by "; ") that fit, or the first clause cut at a word with "…". The row's dropdown shows the whole
    text whenever this shortens it."""
    text = " ".join(str(text or "").split())
    if len(text) <= limit:
        return text
    kept = ""
    for clause in text.split("; "):
        candidate = f"{kept}; {clause}" if kept else clause
        if len(candidate) > limit - 2:
            break
        kept = candidate
    if kept:
        return kept + "; …"
    return text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;: ") + " …"


def claims_display(rows: list[dict]) -> HTMLTable:
    """The paper-versus-us table as HTML, one row per claim with the anchor ``claim-<id>`` the Scorecard links to,
    grouped by verdict ([Re], [¬Re], [~], [n/a]; the chapter's order within a group).

    Five columns that a reader takes in at a glance: the verdict (with its agreement across seeds), the claim with
    where the paper makes it, the paper's figure, ours (their headlines, :func:`figures_at_a_glance`), and why in
    one line (:func:`reason_at_a_glance`). How the row was decided (the test, its effect, n, data basis, scale,
    substitution, the whole reason and the whole figures) is in a dropdown under the claim; nothing is cut from it.
    The decided rows ([Re], [¬Re]) are shown; the inconclusive and untestable ones ([~], [n/a]) follow in a second
    table, collapsed under a line that counts them (the Key findings name each with the way it leans, and a link
    to one of them opens the block: ``book/_static/medeval.js``)."""
    order = {v: i for i, v in enumerate(VERDICTS)}
    ordered = sorted(rows, key=lambda r: order.get(r.get("verdict"), len(order)))
    decided = [r for r in ordered if r.get("verdict") in ("[Re]", "[¬Re]")]
    undecided = [r for r in ordered if r.get("verdict") not in ("[Re]", "[¬Re]")]
    html_text = _claims_table(decided) if decided or not undecided else ""
    if undecided:
        counts = [f"{sum(r.get('verdict') == v for r in undecided)} {name}"
                  for v, name in (("[~]", "inconclusive at this scale"), ("[n/a]", "not testable here"))
                  if any(r.get("verdict") == v for r in undecided)]
        html_text += _collapsed(f"{' and '.join(counts)}: the rows, each with which way it leans or why",
                                _claims_table(undecided))
    text = "\n".join(f"{r.get('verdict')} {r.get('id')}: {r.get('claim')}" for r in rows)
    return HTMLTable(html_text, text)


def _claims_table(rows: list[dict]) -> str:
    """The rows of :func:`claims_display` as one table."""
    head = "<tr><th>verdict</th><th>claim</th><th>paper</th><th>ours</th><th>why</th></tr>"
    from medeval.runtime.robustness import agreement

    body = []
    for r in rows:
        verdict = _html_escape(r.get("verdict", ""))
        seed = getattr(_state.get("params"), "seed", None)
        seeds = (agreement(_state["chapter"], _state["profile"], r["id"], r.get("verdict", ""), rule=r.get("rule"),
                           seed=seed if isinstance(seed, int) else None)
                 if _state.get("chapter") else None)
        if seeds:
            verdict += '<br><span class="medeval-seeds">' + _html_escape(seeds["text"]) + "</span>"
        where = f'<br><span class="medeval-where">{_html_escape(r["where"])}</span>' if r.get("where") else ""
        scope = "; ".join(str(x) for x in (f"n = {r['n']}" if str(r.get("n", "")).strip() else "", r.get("basis", ""),
                                          r.get("scale", "")) if str(x).strip())
        paper, ours = (figures_at_a_glance(r.get(k, "")) for k in ("paper", "ours"))
        decided = [("test", r.get("test", "")), ("effect", r.get("effect", "")), ("scope", scope),
                   ("substitution", r.get("substitution", "")), ("reason", r.get("reason", "")),
                   ("paper, in full", r.get("paper", "") if paper != " ".join(str(r.get("paper", "")).split()) else ""),
                   ("ours, in full", r.get("ours", "") if ours != " ".join(str(r.get("ours", "")).split()) else "")]
        details = ("<details><summary>how it was decided</summary>"
                   + "".join(f"<p><strong>{k}</strong>: {_html_escape(v)}</p>" for k, v in decided if str(v).strip())
                   + "</details>")
        why = _html_escape(reason_at_a_glance(r.get("reason", ""))) or "—"
        body.append(
            f'<tr id="claim-{_html_escape(r["id"])}">'
            f'<td class="verdict {_VERDICT_CLASS.get(r.get("verdict"), "")}"><strong>{verdict}</strong></td>'
            f"<td>{_html_escape(r.get('claim', ''))}{where}{details}</td><td>{_html_escape(paper) or MISSING}</td>"
            f"<td>{_html_escape(ours) or MISSING}</td><td>{why}</td></tr>")
    return _TABLE_BOX.format(
        '<table class="medeval-table medeval-claims-table">'
        '<colgroup><col style="width:8%"><col style="width:30%"><col style="width:20%"><col style="width:22%">'
        '<col style="width:20%"></colgroup>'
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")


def _collapsed(summary: str, table_html: str, *, open_: bool = False) -> str:
    """``table_html`` under a one-line ``summary`` a reader opens when they want the detail (open already when
    ``open_``: a failed check is never hidden)."""
    return (f'<details class="medeval-params"{" open" if open_ else ""}><summary>{summary}</summary>'
            f"{table_html}</details>")


def checks_display(rows: list[dict]) -> HTMLTable:
    """The checks table as HTML, collapsed under a one-line count of its outcomes (open when a check failed): each
    check's outcome is ``pass``, ``FAIL`` or ``undecided`` (a statistical check that the data at this scale cannot
    decide; :class:`medeval.core.claims.Check`)."""
    columns = [c for c in CHECK_COLUMNS if c != "why" or any(r.get("why") for r in rows)]
    names = {"why": "why a check, not a claim", "passed": "outcome"}
    head = "".join(f"<th>{names.get(c, c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{check_outcome_label(r[c]) if c == 'passed' else _html_escape(r[c])}</td>"
                         for c in columns) + "</tr>" for r in rows)
    outcomes = [check_outcome_label(r["passed"]) for r in rows]
    counts = ", ".join(f"{outcomes.count(o)} {o}" for o in ("pass", "FAIL", "undecided") if outcomes.count(o))
    html_text = _collapsed(f"{len(rows)} checks: {counts or 'none'}",
                           _TABLE_BOX.format(f'<table class="medeval-table medeval-wrap"><thead><tr>{head}</tr>'
                                             f"</thead><tbody>{body}</tbody></table>"),
                           open_="FAIL" in outcomes)
    return HTMLTable(html_text, "\n".join(f"{check_outcome_label(r['passed'])} {r['check']}" for r in rows))


def errata_display(rows: list[dict]) -> HTMLTable:
    """The errata table as HTML, collapsed under a one-line count."""
    head = "".join(f"<th>{c}</th>" for c in ERRATUM_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{_html_escape(r[c])}</td>" for c in ERRATUM_COLUMNS) + "</tr>" for r in rows)
    html_text = _collapsed(f"Errata ({len(rows)}): numbers printed in the paper that do not add up, recomputed",
                           _TABLE_BOX.format(f'<table class="medeval-table medeval-wrap"><thead><tr>{head}</tr>'
                                             f"</thead><tbody>{body}</tbody></table>"))
    return HTMLTable(html_text, "\n".join(f"{r['where']}: {r['printed']} vs {r['recomputed']}" for r in rows))


def time_to_run_table() -> HTMLTable:
    """The chapter's "Time to run" table: the wall time per profile measured on the reference machine.

    Reads the committed calibration record (``results/timings.json``, written only by ``medeval calibrate``), so the
    page says the same on every machine that builds it; a profile never measured there says so instead of guessing.
    This build's own wall time is in the note at the top of the page. Nothing here is typed by hand.
    """
    _require_setup()
    from medeval.runtime.calibration import calibration_record, recorded_timings
    from medeval.runtime.params import PROFILES

    timings = recorded_timings(_state["chapter"])
    machine = calibration_record().get("reference_machine", {}).get("device", MISSING)
    rows = []
    for profile in PROFILES:
        t = timings.get(profile)
        if t:
            rows.append((profile, _format_duration(t["wall_time_s"]), t.get("device", machine),
                         t["started"][:10], t["git_commit"]))
        else:
            rows.append((profile, "not measured yet", MISSING, MISSING, MISSING))
    head = "".join(f"<th>{c}</th>" for c in ("profile", "measured wall time", "machine", "date", "commit"))
    body = "".join("<tr>" + "".join(f"<td>{_html_escape(v)}</td>" for v in r) + "</tr>" for r in rows)
    measured = ", ".join(f"{r[0]} {r[1]}" for r in rows if r[1] != "not measured yet")
    html_text = _collapsed(
        f"Measured on the reference machine: {_html_escape(measured or 'no profile yet')}",
        _TABLE_BOX.format(
            '<table class="medeval-table"><caption>Time to run on the reference machine (a machine twice as slow '
            "takes twice as long; <code>medeval run</code> prints an estimate scaled to yours)</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"))
    return HTMLTable(html_text, "\n".join(f"{r[0]}: {r[1]}" for r in rows))


def _format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


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


def elapsed() -> float:
    _require_setup()
    return time.perf_counter() - _state["start"]


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

    shown = {k: v for k, v in info.items() if k != "parameters"}
    body = "".join(f"<tr><th>{_html_escape(k.replace('_', ' '))}</th><td style=\"overflow-wrap:anywhere\">"
                   f"{_html_escape(_format_param(v))}</td></tr>" for k, v in shown.items())
    params_json = _html_escape(json.dumps(_state["params"].model_dump(mode="json"), indent=1))
    html_text = _TABLE_BOX.format(
        f'<table class="medeval-table medeval-provenance"><caption>Provenance of this page</caption><tbody>{body}'
        f"<tr><th>parameters</th><td><details><summary>all {len(_state['params'].model_dump())} values (JSON)"
        f"</summary><pre>{params_json}</pre></details></td></tr></tbody></table>")
    return HTMLTable(html_text, "\n".join(f"{k}: {v}" for k, v in shown.items()))


_WAIT_FOR_MATHJAX = """
// medeval: show the questions only once MathJax has typeset the page. Until MathJax 3 has loaded, window.MathJax
// is the book's configuration object; jupyterquiz, finding no MathJax.typeset there, would fetch MathJax from a CDN.
function medevalWhenMathJaxReady(run, waited) {
  var mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(run);
  } else if (mj && mj.Hub) {
    run();  // MathJax 2 (the classic notebook): jupyterquiz queues its typesetting itself
  } else if ((mj || document.readyState !== "complete") && (waited || 0) < 10000) {
    setTimeout(function () { medevalWhenMathJaxReady(run, (waited || 0) + 100); }, 100);
  } else {
    run();  // no MathJax on this page (a notebook without it), or it never started: show the questions anyway
  }
}
"""

_QUIZ_INVOCATION = "{\n  try_show();\n}"  # the end of jupyterquiz's static_suffix.js.tpl


def self_check(questions: list[dict]) -> None:
    """Show self-check questions (multiple choice or numeric, with feedback) that work in the offline book.

    The questions are checked by :func:`medeval.runtime.teaching.validate_self_check`, their answers put in a
    fixed shuffled order (:func:`medeval.runtime.teaching.shuffled_answers`) and embedded in the page with
    jupyterquiz, so answering them needs no server and no network. The quiz is drawn once MathJax has typeset the
    page (``MathJax.startup.promise``), never before: jupyterquiz would otherwise load MathJax from a CDN.
    """
    from unittest import mock

    import jupyterquiz.dynamic.display as quiz_display
    from IPython.display import Javascript, display

    from medeval.runtime.teaching import shuffled_answers, validate_self_check

    shown: list = []
    with mock.patch.object(quiz_display, "display", lambda *objs: shown.extend(objs)):
        quiz_display.display_quiz(
            shuffled_answers(validate_self_check(questions)), shuffle_answers=False, max_width=760,
            colors={"--jq-multiple-choice-bg": "#0072B2", "--jq-numeric-bg": "#0072B2",
                    "--jq-correct-color": "#009E73", "--jq-incorrect-color": "#D55E00"})
    for obj in shown:
        if isinstance(obj, Javascript):
            if obj.data.count(_QUIZ_INVOCATION) != 1:
                raise RuntimeError("jupyterquiz's script no longer ends with try_show(); self_check cannot make it "
                                   "wait for MathJax (was jupyterquiz upgraded?)")
            obj = Javascript(_WAIT_FOR_MATHJAX + obj.data.replace(
                _QUIZ_INVOCATION, "{\n  medevalWhenMathJaxReady(try_show);\n}"))
        display(obj)
