"""A chapter's decided claims, checks and errata: recorded once, then shown in the tail of its page.

:func:`claims_sections` (or :func:`paper_vs_us`) checks the rows against the vocabulary of
:mod:`medeval.core.claims`, records them (``paper_vs_us``, ``checks``, ``errata``), glues the generated Key findings
shown at the top of the page, and returns what each cell of the tail shows (the tables of
:mod:`medeval.runtime.claims_tables`).
"""

from __future__ import annotations

from medeval.core.claims import (
    BASES,
    CHECK_COLUMNS,
    CLAIM_COLUMNS,
    ERRATUM_COLUMNS,
    REQUIRED_CLAIM_COLUMNS,
    VERDICTS,
    ClaimList,
    explain,
)
from medeval.runtime.claims_tables import checks_display, claims_display, errata_display
from medeval.runtime.display import HTMLTable
from medeval.runtime.recording import _jsonable, _state, record


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
        """The "not reproduced, and why" text (:func:`medeval.core.claims.explain`), as Markdown; a contradicted row
        that the committed robustness record finds seed-sensitive is said to be contradicted at this seed only."""
        from IPython.display import Markdown

        return Markdown(explain(self.claims, seed_sensitive=_seed_sensitive_ids(self._rows)))

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


def _seed_sensitive_ids(rows: list[dict]) -> set[str]:
    """The rows of this chapter run that the committed robustness record finds seed-sensitive
    (:func:`medeval.runtime.robustness.agreement` at the run's master seed); none outside a chapter run."""
    from medeval.runtime.robustness import agreement

    if not _state.get("chapter"):
        return set()
    seed = getattr(_state.get("params"), "seed", None)
    sensitive = set()
    for r in rows:
        a = agreement(_state["chapter"], _state["profile"], r["id"], r["verdict"], rule=r.get("rule"),
                      seed=seed if isinstance(seed, int) else None)
        if a and a.get("seed_sensitive"):
            sensitive.add(r["id"])
    return sensitive


def _glue_key_findings(rows: list[dict]) -> None:
    """Glue the chapter's generated Key findings (``{glue:md}`key-findings```, shown at the top of the page)."""
    from IPython.display import Markdown

    from medeval.core.claims import key_findings

    text = key_findings(rows, seed_sensitive=_seed_sensitive_ids(rows))
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
