"""The Paper-vs-us, Checks and Errata tables of a chapter page, as HTML, from their recorded rows.

:func:`claims_display` shows each claim's verdict, where the paper makes it, the headline figures
(:func:`figures_at_a_glance`) and why in one line (:func:`reason_at_a_glance`), with how it was decided in a
dropdown; :func:`checks_display` and :func:`errata_display` fold their tables under a one-line count. The rows are
recorded by :mod:`medeval.runtime.claims_page`.
"""

from __future__ import annotations

import re

from medeval.core.claims import CHECK_COLUMNS, ERRATUM_COLUMNS, VERDICTS, check_outcome_label
from medeval.runtime.display import _TABLE_BOX, MISSING, HTMLTable, _collapsed, _html_escape
from medeval.runtime.recording import _state

_VERDICT_CLASS = {"[Re]": "re", "[¬Re]": "not-re", "[~]": "inconclusive", "[n/a]": "na"}


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
    """The rows of :func:`claims_display` as one table; the "why" column only when some row has a reason (a table
    of reproduced rows has none, and an empty column would only take width from the figures)."""
    from medeval.runtime.robustness import agreement

    with_why = any(reason_at_a_glance(r.get("reason", "")) for r in rows)
    head = ("<tr><th>verdict</th><th>claim</th><th>paper</th><th>ours</th>" + ("<th>why</th>" if with_why else "")
            + "</tr>")

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
            f"<td>{_html_escape(ours) or MISSING}</td>" + (f"<td>{why}</td>" if with_why else "") + "</tr>")
    widths = (8, 30, 20, 22, 20) if with_why else (8, 36, 26, 30)
    return _TABLE_BOX.format(
        '<table class="medeval-table medeval-claims-table"><colgroup>'
        + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")


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
