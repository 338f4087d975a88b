"""The book's tables: a DataFrame or rows as HTML that stays inside the page's content column.

:class:`HTMLTable` (HTML for the page, plain text elsewhere), one number format per column
(:func:`column_formatter`, :func:`mean_sd`), :func:`show_table` for a chapter's DataFrames, and the pieces every
table of the book shares: the scrolling box, the em dash of a missing value, a table folded under a one-line
summary.
"""

from __future__ import annotations

import math

import numpy as np


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


def _collapsed(summary: str, table_html: str, *, open_: bool = False) -> str:
    """``table_html`` under a one-line ``summary`` a reader opens when they want the detail (open already when
    ``open_``: a failed check is never hidden)."""
    return (f'<details class="medeval-params"{" open" if open_ else ""}><summary>{summary}</summary>'
            f"{table_html}</details>")


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


def _format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
