"""The tables that say how a chapter page ran: its parameters, its measured time to run, its provenance.

:func:`parameters_table` (what the run changed from its profile), :func:`time_to_run_table` (the committed
calibration record, the same on every machine) and :func:`provenance_table` (versions, commit, device, time), each
collapsed or boxed like every table of the book (:mod:`medeval.runtime.display`).
"""

from __future__ import annotations

import json

from medeval.core.schema import ChapterParams
from medeval.runtime.display import (
    _TABLE_BOX,
    MISSING,
    HTMLTable,
    _collapsed,
    _format_duration,
    _format_param,
    _html_escape,
)
from medeval.runtime.params import resolve_params
from medeval.runtime.recording import _jsonable, _require_setup, _state

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


def provenance_table(info: dict, params: ChapterParams) -> HTMLTable:
    """The Provenance table of a page: every entry of ``info`` (:func:`medeval.runtime.provenance.collect`, with
    what :func:`medeval.runtime.notebook.provenance` adds) but the parameters, one row each, then ``params`` in full
    as JSON under a one-line summary."""
    shown = {k: v for k, v in info.items() if k != "parameters"}
    body = "".join(f"<tr><th>{_html_escape(k.replace('_', ' '))}</th><td style=\"overflow-wrap:anywhere\">"
                   f"{_html_escape(_format_param(v))}</td></tr>" for k, v in shown.items())
    params_json = _html_escape(json.dumps(params.model_dump(mode="json"), indent=1))
    html_text = _TABLE_BOX.format(
        f'<table class="medeval-table medeval-provenance"><caption>Provenance of this page</caption><tbody>{body}'
        f"<tr><th>parameters</th><td><details><summary>all {len(params.model_dump())} values (JSON)"
        f"</summary><pre>{params_json}</pre></details></td></tr></tbody></table>")
    return HTMLTable(html_text, "\n".join(f"{k}: {v}" for k, v in shown.items()))
