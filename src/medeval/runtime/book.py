"""Render the book with jupyter-book 1.x from executed chapters: staging, the scorecard and reproducibility
pages, the API reference pages, and the build (:func:`build_book`, what ``medeval book`` runs).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from medeval import _yaml
from medeval.runtime.cache_keys import digest_files, source_digest
from medeval.runtime.chapter_sections import OFF_PATH_PAGES, section_page, section_title, split_at_headings
from medeval.runtime.execution import ChapterExecutionError, ExecutionResult, run_chapter
from medeval.runtime.exercises import _EXERCISE, _OPTION
from medeval.runtime.params import (
    ParameterError,
    chapters,
)
from medeval.runtime.paths import atomic_write_text, project_root, runs_dir


def _copy_if_changed(src: Path, dst: Path) -> None:
    """Copy keeping the destination's mtime when the content is unchanged (Sphinx rebuilds only what changed)."""
    if dst.exists() and dst.read_bytes() == src.read_bytes():
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def _write_if_changed(dst: Path, text: str) -> None:
    if dst.exists() and dst.read_text() == text:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(dst, text)


def _html_cell(value: Any) -> str:
    import html

    return html.escape(str(value)).replace("|", "&#124;").replace("\n", " ")


#: what the Scorecard counts: the verdicts, and directional verdicts that too few seeds share
SCORECARD_COLUMNS = ("[Re]", "[¬Re]", "[~]", "[n/a]", "seed-sensitive")


def scorecard_totals(executed: list[ExecutionResult]) -> dict[str, dict[str, int]]:
    """Verdict totals, summed over every chapter's recorded ``paper_vs_us`` rows.

    ``empirical`` counts the claims decided on data we ran (basis ``real`` or ``phantom``): the headline.
    ``exact`` counts the exact recomputations of a paper's printed tables and examples, which cannot be noisy and
    are kept apart. ``verdict`` is both together. The ``basis:<b>`` lines count only the rows that were tested on
    that basis: an [n/a] row ran on nothing, so it is counted on the ``not testable`` line instead. A [Re] or [¬Re]
    that fewer than 4 of 5 seeds share (the committed robustness record) counts as ``seed-sensitive``."""
    from medeval.core.claims import BASES
    from medeval.runtime.robustness import counted_verdict

    def zero():
        return dict.fromkeys(SCORECARD_COLUMNS, 0)

    by_verdict, empirical, exact, not_testable = zero(), zero(), zero(), zero()
    by_basis = {b: zero() for b in BASES}
    for res in executed:
        for row in res.results.get("paper_vs_us") or []:
            counted = counted_verdict(res.chapter, res.profile, row.get("id", ""), row["verdict"],
                                      rule=row.get("rule"), seed=_seed_of(res))
            by_verdict[counted] += 1
            (exact if row["basis"] == "exact" else empirical)[counted] += 1
            if row["verdict"] == "[n/a]":
                not_testable[counted] += 1
            else:
                by_basis[row["basis"]][counted] += 1
    return {"empirical": empirical, "exact": exact, "verdict": by_verdict,
            **{f"basis:{b}": v for b, v in by_basis.items()}, "not testable": not_testable}


def _check_counts(executed: list[ExecutionResult]) -> tuple[int, int]:
    """(checks, of which sentences of a paper shown as checks because no data of ours could contradict them)."""
    checks = [c for res in executed for c in res.results.get("checks") or []]
    return len(checks), sum(1 for c in checks if c.get("why"))


#: the line of ``book/intro.md`` that the build replaces with :func:`verdict_matrix_markdown`
VERDICT_MATRIX_MARKER = "% verdict matrix: generated from the chapters' recorded rows when the book is built"


def verdict_matrix_markdown(executed: list[ExecutionResult]) -> str:
    """The book's verdicts at a glance: one row per numbered chapter (linked), the number of its rows with each
    verdict, and a total row; counted from the recorded paper-versus-us rows, nothing typed by hand. A verdict
    that no row has is shown as "·", so the eye finds the counts."""
    from medeval.core.claims import VERDICTS
    from medeval.runtime.chapter_tables import chapter_numbers_by_id

    registry = chapters()
    numbers = chapter_numbers_by_id(registry)
    lines = ["| chapter | " + " | ".join(VERDICTS) + " | rows |", "|---|" + "---:|" * (len(VERDICTS) + 1)]
    total = dict.fromkeys(VERDICTS, 0)
    for res in sorted(executed, key=lambda r: numbers.get(r.chapter, 99)):
        rows = res.results.get("paper_vs_us") or []
        if not rows or res.chapter not in numbers:
            continue
        counts = dict.fromkeys(VERDICTS, 0)
        for row in rows:
            counts[row["verdict"]] += 1
            total[row["verdict"]] += 1
        ch = registry[res.chapter]
        label = ch.summary.get("label")
        name = f"{{ref}}`{numbers[res.chapter]} <{label}>`" if label else str(numbers[res.chapter])
        lines.append(f"| {name} {ch.title.split(':')[0]} | "
                     + " | ".join(str(counts[v]) if counts[v] else "·" for v in VERDICTS) + f" | {len(rows)} |")
    lines.append("| **all chapters** | " + " | ".join(f"**{total[v]}**" for v in VERDICTS)
                 + f" | **{sum(total.values())}** |")
    return "\n".join(lines)


def scorecard_markdown(executed: list[ExecutionResult]) -> str:
    """The Scorecard page: every chapter's recorded paper-versus-us rows, totals by kind, verdict and data basis.

    Each claim links to its row on the chapter page (anchor ``claim-<id>``). The headline counts the empirical
    claims; exact recomputations are counted apart. Checks (formula identities, and paper sentences that follow
    from mathematics or the design) and errata are not claims and are not counted here.
    """
    from medeval.core.claims import BASIS_HELP, VERDICTS
    from medeval.runtime.chapter_tables import chapter_numbers_by_id

    registry = chapters()
    totals = scorecard_totals(executed)
    n_checks, n_design = _check_counts(executed)
    substituted = [(res, row) for res in executed for row in res.results.get("paper_vs_us") or []
                   if row.get("substitution")]
    lines = [
        "(scorecard)=", "# Scorecard", "",
        "The verdicts of every chapter at a glance (rows of the chapters' paper-versus-us tables):", "",
        verdict_matrix_markdown(executed), "",
        "Every claim of the five papers that this book tests, gathered from the chapters' recorded outputs "
        "(nothing here is typed by hand). Each verdict is decided by a stated rule in `medeval.experiments` "
        "that has a test on which it passes and one on which it fails. Verdicts: **[Re]** reproduced; "
        "**[¬Re]** contradicted by the stated test or tolerance; **[~]** inconclusive at this scale (the reason "
        "says which way the estimate leans, or that no effect is seen, and the n that would detect a stated "
        "effect); **[n/a]** not testable here (the reason says why). The sign of a noisy "
        "difference, a tie, or \"no significant difference\" never supports a directional claim.", "",
        "The headline line counts the **empirical claims**, decided on data we ran. **Exact recomputations** of a "
        "paper's printed tables and worked examples cannot be noisy and are counted apart. "
        f"The chapters also show {n_checks} checks, which are not counted here: formula identities, and "
        f"{n_design} sentences of the papers that follow from mathematics or from the design of the experiment, so "
        "that no data of ours could contradict them (each says why). Arithmetic on printed numbers is in the "
        "chapters' errata.", "",
        "Data basis: " + "; ".join(f"**{b}**, {h}" for b, h in BASIS_HELP.items()) + ". A basis line counts "
        "only rows that were tested on it; [n/a] rows ran on nothing and are counted on their own line.", "",
        "Each row's agreement across master seeds comes from the committed robustness record "
        "(`medeval robustness`, `results/robustness/<profile>.json`): a [Re] or [¬Re] that fewer than 4 of 5 "
        "seeds share is counted as *seed-sensitive*, not as a finding.", "",
        "| | " + " | ".join(SCORECARD_COLUMNS) + " | total |", "|---|" + "---|" * (len(SCORECARD_COLUMNS) + 1),
    ]
    def total_row(label, counts):
        return (f"| {label} | " + " | ".join(str(counts[v]) for v in SCORECARD_COLUMNS)
                + f" | {sum(counts.values())} |")

    lines.append(total_row("**empirical claims**", totals["empirical"]))
    lines.append(total_row("exact recomputations", totals["exact"]))
    lines.append(total_row("all rows", totals["verdict"]))
    for key, counts in totals.items():
        if key.startswith("basis:") and sum(counts.values()):
            lines.append(total_row(f"tested on basis *{key.split(':', 1)[1]}*", counts))
    if sum(totals["not testable"].values()):
        lines.append(total_row("not testable (no basis)", totals["not testable"]))
    from medeval.runtime.robustness import agreement

    seen = [agreement(res.chapter, res.profile, row.get("id", ""), row["verdict"], rule=row.get("rule"),
                      seed=_seed_of(res)) for res in executed for row in res.results.get("paper_vs_us") or []]
    stale, never = sum(1 for a in seen if a and a.get("stale")), sum(1 for a in seen if a is None)
    if stale or never:
        lines += ["", f"Seed agreement is measured for {len(seen) - stale - never} of {len(seen)} rows; "
                  + (f"{stale} were not re-measured since their rule changed" if stale else "")
                  + ("; " if stale and never else "") + (f"{never} were never measured" if never else "")
                  + " (these count as their verdict, unconfirmed across seeds)."]
    if substituted:
        lines += ["", f"{len(substituted)} rows run on a stand-in for the paper's data or models; each row names it: "
                  + "; ".join(f"{sub} ({n} rows)" for sub, n in _count_by(r.get("substitution") for _, r in substituted))
                  + "."]
    lines.append("")
    body: list[str] = []
    numbers = chapter_numbers_by_id(registry)
    for res in executed:
        rows = res.results.get("paper_vs_us")
        if not rows:
            continue
        counts = dict.fromkeys(VERDICTS, 0)
        for row in rows:
            counts[row["verdict"]] += 1
        part = registry[res.chapter].part if res.chapter in registry else "chapters"
        name = f"Chapter {numbers[res.chapter]}" if res.chapter in numbers else "The chapter"
        body += [f"## {res.meta['title']}", "",
                 f"{name} (`{res.chapter}`), profile `{res.profile}`: "
                 + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + ".", ""]
        # the rows folded under their count: the page is the verdict matrix and one line per chapter until a
        # reader opens a chapter's rows
        body += [f":::{{dropdown}} The {len(rows)} row{'s' if len(rows) != 1 else ''} of "
                 f"{name.replace('The chapter', 'the chapter')}", "",
                 "| verdict (across seeds) | claim | basis | scale | n | test and p / CI | reason |",
                 "|---|---|---|---|---|---|---|"]
        for row in rows:
            link = f'<a href="{part}/{res.chapter}.html#claim-{_html_cell(row["id"])}">{_html_cell(row["claim"])}</a>'
            test = _html_cell(row["test"]) + (f"; {_html_cell(row['effect'])}" if row.get("effect") else "")
            verdict = f"**{_html_cell(row['verdict'])}**<br><small>{_html_cell(_seeds_text(res, row))}</small>"
            basis = _html_cell(row["basis"]) + (f"<br><small>{_html_cell(row['substitution'])}</small>"
                                                if row.get("substitution") else "")
            body.append("| " + " | ".join([verdict, link, basis,
                                           _html_cell(row["scale"]), _html_cell(row["n"]), test,
                                           _html_cell(row["reason"])]) + " |")
        body += ["", ":::", ""]
    return "\n".join(lines + body)


def _count_by(values) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _seeds_text(res: ExecutionResult, row: dict) -> str:
    from medeval.runtime.robustness import agreement

    a = agreement(res.chapter, res.profile, row.get("id", ""), row["verdict"], rule=row.get("rule"),
                  seed=_seed_of(res))
    return a["text"] if a else "not measured"


def _seed_of(res: ExecutionResult) -> int | None:
    seed = (res.results.get("params") or {}).get("seed")
    return seed if isinstance(seed, int) else None


def short_commit(commit) -> str:
    """``a3209b6d587e`` or ``a3209b6d587e-dirty``: a shortened sha that keeps saying whether sources differed."""
    text = str(commit)
    return text[:12] + ("-dirty" if text.endswith("-dirty") else "")


def verification_markdown(executed: list[ExecutionResult]) -> str:
    """``medeval verify`` for the build being read: its recorded results against ``results/reference/<profile>.json``."""
    from medeval.runtime import reference

    if not executed:
        return "No chapter was built."
    profile = executed[0].profile
    try:
        ref = reference.load_reference(profile)
    except (FileNotFoundError, ValueError) as exc:
        return f"Not compared: {exc}."
    report = reference.verify({res.chapter: res.results for res in executed}, ref)
    if len(executed) < len(ref.get("chapters", {})):  # a partial build (--only): the others were not built
        built = {res.chapter for res in executed}
        report.chapters = [c for c in report.chapters if c.chapter in built]
    return (f"The reference was built on {ref.get('machine', {}).get('device', '?')} with numerics "
            f"{ref.get('machine', {}).get('numerics', '?')}, at commit `{short_commit(ref.get('git_commit', '?'))}`. "
            "`medeval verify --profile " + profile + "` prints the same comparison, value by value.\n\n"
            + report.to_markdown())


def reproducibility_markdown(executed: list[ExecutionResult]) -> str:
    lines = [
        "# Reproducibility", "",
        "Every page of this book is an executed notebook. This table lists, for each, the profile it ran with, "
        "its cache key (a hash of the notebook source, the resolved parameters, every file of `src/medeval`, "
        "the manifest entries it reads and the installed package versions), its measured wall time and where "
        "it ran. Re-run any page with `medeval run <id> --profile <profile> [--set name=value]`.", "",
        "| page | profile | cache key | wall time (s) | commit | device | executed |",
        "|---|---|---|---|---|---|---|",
    ]
    total = 0.0
    for res in executed:
        m = res.meta
        total += m["wall_time_s"]
        prov = m.get("provenance", {})
        lines.append(
            f"| `{res.chapter}` | {m['profile']} | `{m['key'][:12]}` | {m['wall_time_s']:.1f} | "
            f"`{short_commit(prov.get('git_commit', '?'))}` | {_html_cell(prov.get('device', '?'))} | {m['started']} |"
        )
    lines += ["", f"Total execution time of the pages: {total:.0f} s.", "", "## Parameters", ""]
    for res in executed:
        lines += [f"**{res.chapter}**: `{json.dumps(res.meta['params'], sort_keys=True)}`", ""]
    lines += ["## Library versions", ""]
    if executed:
        prov = executed[0].meta.get("provenance", {})
        lines += [f"- {k}: `{v}`" for k, v in sorted(prov.items()) if k not in ("wall_time_s",)]
    lines += ["", "## Against the committed reference", "", verification_markdown(executed)]
    from medeval.runtime.gpu_record import gpu_record_markdown

    lines += ["", gpu_record_markdown()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# A chapter's reading path: the main page, and sub-pages for what a reader consults rather than reads


#: the sections of a chapter page whose "### " parts are folded (:func:`fold_subsections`): the formulas of the
#: Method, which the experiments link to equation by equation (a link into a fold opens it, book/_static/medeval.js)
FOLDED_SECTIONS = ("Method",)
_SUBHEADING = re.compile(r"^### (?P<title>.+)$")
_TARGET = re.compile(r"^\(\S+\)=\s*$")
_FENCE = re.compile(r"^(:{3,})")


def fold_subsections(source: str) -> str:
    """A Markdown cell's "### " parts, each as a collapsed dropdown titled by its heading (what comes before the
    first one stays open); a "(label)=" line above a heading stays above its dropdown. A cell without a "### "
    heading comes back unchanged."""
    lines = source.splitlines(keepends=True)
    starts = [k for k, line in enumerate(lines) if _SUBHEADING.match(line.rstrip("\n"))]
    if not starts:
        return source
    colons = max([len(m.group(1)) for line in lines if (m := _FENCE.match(line))] + [3])
    fence = ":" * (colons + 1)  # outside every colon fence of the part
    out, ends = [], starts[1:] + [len(lines)]
    head_end = starts[0] - (1 if starts[0] and _TARGET.match(lines[starts[0] - 1]) else 0)
    out.append("".join(lines[:head_end]))
    for a, b in zip(starts, ends, strict=True):
        target = lines[a - 1] if a and _TARGET.match(lines[a - 1]) else ""
        if b < len(lines) and _TARGET.match(lines[b - 1]):
            b -= 1  # the next part's label
        body = "".join(lines[a + 1:b]).strip("\n")
        title = _SUBHEADING.match(lines[a].rstrip("\n"))["title"].strip()
        out.append(f"{target}{fence}{{dropdown}} {title}\n\n{body}\n{fence}\n\n")
    return "".join(out).rstrip("\n") + "\n"


def _fold_sections(cells: list[dict]) -> list[dict]:
    """The cells of a chapter page with the "### " parts of :data:`FOLDED_SECTIONS` folded: adjacent Markdown
    cells of such a section are joined first (a part may run on into the next cell), code cells stay as they are."""
    out: list[dict] = []
    folding = False
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            heading = section_title(cell["source"])
            if heading is not None:
                folding = heading.startswith(FOLDED_SECTIONS)
            if folding and out and out[-1].get("cell_type") == "markdown" and out[-1].get("_fold") and heading is None:
                out[-1] = {**out[-1], "source": out[-1]["source"] + "\n\n" + "".join(cell["source"])}
                continue
            if folding:
                cell = {**cell, "source": "".join(cell["source"]), "_fold": True}
        out.append(cell)
    for cell in out:
        if cell.pop("_fold", False):
            cell["source"] = fold_subsections(cell["source"])
    return out


# sphinx-design badge colours of the exercise kinds (:data:`~medeval.runtime.exercises.KINDS`)
KIND_BADGES = {"by-hand": "primary", "coding": "success", "experimental": "info", "critical": "warning"}


def exercise_badge_line(kind: str, minutes: int | None) -> str:
    """The badges an exercise opens with: its kind, and the student minutes that ``teaching/course.yaml`` plans
    for it (none when the course file plans none)."""
    badges = [f"{{bdg-{KIND_BADGES.get(kind, 'primary')}}}`{kind}`"]
    if minutes is not None:
        badges.append(f"{{bdg-secondary}}`≈ {minutes} min`")
    return " ".join(badges)


def with_exercise_badges(text: str, minutes: dict[str, int]) -> str:
    """A chapter's executed notebook (JSON ``text``) with a badge line (:func:`exercise_badge_line`) as the first
    line of the body of every ``{exercise}`` directive, after its options; ``minutes`` maps an exercise label to
    its planned student minutes. Only the staged book gets the badges: the notebooks, and the student notebooks
    made from them (:mod:`medeval.runtime.teaching`), stay as they are."""
    nb = json.loads(text)
    changed = False
    for cell in nb["cells"]:
        if cell.get("cell_type") != "markdown":
            continue
        source = cell["source"]
        lines = ("".join(source) if isinstance(source, list) else str(source)).split("\n")
        out: list[str] = []
        found = False
        i = 0
        while i < len(lines):
            out.append(lines[i])
            if not _EXERCISE.match(lines[i]):
                i += 1
                continue
            i += 1
            options: dict[str, str] = {}
            while i < len(lines) and (m := _OPTION.match(lines[i].strip())):
                options[m["key"]] = m["value"].strip()
                out.append(lines[i])
                i += 1
            out += ["", exercise_badge_line(options.get("class", ""), minutes.get(options.get("label", ""))), ""]
            while i < len(lines) and not lines[i].strip():  # the blank line(s) between the options and the body
                i += 1
            found = True
        if found:
            cell["source"] = "\n".join(out)
            changed = True
    return json.dumps(nb, indent=1, ensure_ascii=False) if changed else text


def split_chapter_notebook(text: str, doc: str, title: str) -> dict[str, str]:
    """A chapter's executed notebook (JSON ``text``) as its main page and sub-pages
    (:data:`~medeval.runtime.chapter_sections.OFF_PATH_PAGES`):
    ``{"": main, "further": ..., "exercises": ..., "reference": ...}``, each a notebook of the same kernel and
    metadata; a sub-page exists only when the chapter has one of its sections (:func:`section_page`). On the main
    page the Method's parts are folded (:func:`fold_subsections`). ``doc`` is the chapter's page (its link back),
    ``title`` its title. Nothing is re-executed: the cells keep their outputs, in their order."""
    nb = json.loads(text)
    pages: dict[str, list[dict]] = {"": []}
    current = ""
    for cell in nb["cells"]:
        pieces = split_at_headings(cell) if cell.get("cell_type") == "markdown" else [cell]
        for k, piece in enumerate(pieces):
            if k and "id" in piece:
                piece["id"] = f"{piece['id']}-{k}"
            page = section_page(piece) if piece.get("cell_type") == "markdown" else None
            if page is not None:
                current = page
            pages.setdefault(current, []).append(piece)
    out = {}
    titles = {s: t for s, t, _ in OFF_PATH_PAGES}
    subs = [stem for stem, _, _ in OFF_PATH_PAGES if pages.get(stem)]
    for stem, cells in pages.items():
        if stem == "":
            cells = _fold_sections(cells)
            if subs:  # the main page ends by pointing at its sub-pages
                cells = [*cells, {"cell_type": "markdown", "metadata": {}, "id": "medeval-sub-pages",
                                  "source": "## Going further\n\n" + "\n".join(
                                      f"* {{doc}}`{titles[x]} </{doc}/{x}>`" for x in subs)}]
            out[stem] = json.dumps({**nb, "cells": cells}, indent=1, ensure_ascii=False)
            continue
        sub_title = titles[stem]
        head = {"cell_type": "markdown", "metadata": {}, "id": f"medeval-{stem}-title",
                "source": f"# {sub_title}\n\nPart of the chapter {{doc}}`{title} </{doc}>`."}
        out[stem] = json.dumps({**nb, "cells": [head, *cells]}, indent=1, ensure_ascii=False)
    return out


def _toc_without_empty_globs(toc: dict, stage: Path) -> dict:
    """Drop ``glob`` entries that match no staged page (e.g. a book built with ``--only``) and empty parts; a glob
    whose pages have sub-pages (:func:`split_chapter_notebook`) becomes one entry per page with its sub-pages as
    sections, in the glob's (alphabetical) order."""
    parts = []
    for part in toc.get("parts", []):
        entries = []
        for e in part.get("chapters", []):
            if "glob" not in e:
                entries.append(e)
                continue
            pages = sorted(stage.glob(e["glob"] + ".*"))
            if not any(p.with_suffix("").is_dir() for p in pages):
                entries.extend([e] if pages else [])
                continue
            for p in pages:
                doc = p.relative_to(stage).with_suffix("").as_posix()
                subs = [f"{doc}/{stem}" for stem, _, _ in OFF_PATH_PAGES
                        if any(p.with_suffix("").glob(f"{stem}.*"))]
                entries.append({"file": doc, **({"sections": [{"file": x} for x in subs]} if subs else {})})
        if entries:
            parts.append({**part, "chapters": entries})
    return {**toc, "parts": parts}


API_PACKAGES = ("medeval.metrics", "medeval.data", "medeval.models", "medeval.core", "medeval.experiments",
                "medeval.plots", "medeval.runtime")
API_TITLES = {"medeval.metrics": "Metrics", "medeval.data": "Data", "medeval.models": "Models",
              "medeval.core": "Claims, parameters and the chapter protocol", "medeval.experiments": "Experiments and claims", "medeval.plots": "Figures",
              "medeval.runtime": "For developers: the runtime"}
#: what a section of the API index says under its heading (a reader of the chapters can skip the runtime)
API_NOTES = {"medeval.runtime": "What runs the chapters and builds this book (parameters and pre-flight, execution, "
                                "grids, the run store, provenance, the teaching edition). A reader of the chapters "
                                "does not need it; a developer adding a chapter does (CONTRIBUTING)."}


def api_modules(packages=API_PACKAGES) -> dict[str, list[str]]:
    """Every public module of the API reference, per package (sub-packages included, private modules skipped)."""
    import importlib
    import pkgutil

    found: dict[str, list[str]] = {}
    for package in packages:
        mod = importlib.import_module(package)
        names = [package]
        if hasattr(mod, "__path__"):
            names += sorted(m.name for m in pkgutil.walk_packages(mod.__path__, package + ".")
                            if not any(part.startswith("_") for part in m.name.split(".")))
        found[package] = names
    return found


def _is_package(module_name: str) -> bool:
    """Whether ``module_name`` is a package, found without importing it (its parent package is imported)."""
    import importlib.util

    spec = importlib.util.find_spec(module_name)
    return spec is not None and spec.submodule_search_locations is not None


def _flat_namespace_page(module_name: str) -> str | None:
    """A package that re-exports its submodules' names (``medeval.metrics``): its docstring and one table of every
    name, each linked to where it is documented, instead of documenting every object a second time."""
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if not hasattr(module, "__path__") or not names:
        return None
    targets = [f"{obj.__module__}.{name}".removeprefix(module_name + ".") for name in names  # relative to the page
               if (inspect.isfunction(obj := getattr(module, name)) or inspect.isclass(obj)) and obj.__doc__]
    return "\n".join([f"# `{module_name}`", "", "```{eval-rst}", f".. automodule:: {module_name}", "   :no-members:",
                      "```", "", "## Every name", "", "```{eval-rst}", ".. autosummary::", "",
                      *[f"   {t}" for t in targets], "```", ""])


API_PAGE_FRONT_MATTER = "---\ntocdepth: 2\n---\n"


def api_pages() -> dict[str, str]:
    """The API reference as MyST pages (``api/<module>.md`` and ``api/index.md``): Sphinx autodoc renders each
    module from its docstrings (formulas and sources included), viewcode links every object to its source, and the
    index lists the modules per package with autosummary. Chapters link here with ``{func}`` roles.

    A module page's table of contents (its *On this page* list, and what the navigation copies of it for every
    page of the book) stops at the module's sections and top-level objects (``tocdepth: 2``): the members of each
    class stay documented on the page, unlisted. Listing them too made every page's navigation copy some 3000
    entries and the whole render 22 % slower (59.6 s against 48.8 s for the smoke book).
    """
    pages: dict[str, str] = {}
    index = ["(api-reference)=", "# API reference", "",
             "Every function the chapters use, rendered from its docstring: the formula with its source in the paper, "
             "the policy for degenerate inputs and, for the metrics, a worked example that the test suite runs as a "
             "doctest. `[source]` next to an object opens its code.", ""]
    for package, modules in api_modules().items():
        index += [f"## {API_TITLES.get(package, package)}", ""]
        index += [API_NOTES[package], ""] if package in API_NOTES else []
        index += ["```{eval-rst}", ".. autosummary::", ""]
        index += [f"   {m}" for m in modules] + ["```", ""]
        for m in modules:
            # only a package can be a flat namespace: a plain module is not imported here (the torch-based ones
            # took 2 s of every build that had nothing to render)
            flat = _flat_namespace_page(m) if _is_package(m) else None
            pages[f"api/{m}.md"] = API_PAGE_FRONT_MATTER + (flat or "\n".join([
                f"# `{m}`", "", "```{eval-rst}", f".. automodule:: {m}", "   :members:", "   :show-inheritance:",
                "```", ""]))
    pages["api/index.md"] = "\n".join(index)
    return pages


_SOLUTION_DIRECTIVE = re.compile(r"^\s*(`{3,}|:{3,})\{solution(-start)?\}", re.M)
_SOLUTION_ELEMENT = re.compile(r'class="[^"]*\bsolution\b')
#: a solution directive anywhere in a file's text (JSON escapes a notebook's line breaks, so no line anchor): what
#: a downloadable notebook of the student edition must not hold, in its cells or in its metadata
_SOLUTION_ANYWHERE = re.compile(r"(`{3,}|:{3,})\{solution(-start)?\}")


def _staged_solutions(stage: Path) -> list[str]:
    """Staged pages that still hold a solution directive (a student edition must hold none)."""
    found = []
    for path in sorted(stage.rglob("*")):
        if path.suffix == ".md":
            text = path.read_text()
        elif path.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                             for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown")
        else:
            continue
        if _SOLUTION_DIRECTIVE.search(text) or (path.suffix == ".ipynb"
                                                 and _SOLUTION_ANYWHERE.search(path.read_text())):
            found.append(path.relative_to(stage).as_posix())
    return found


def _downloadable_solutions(html: Path) -> list[str]:
    """Files a reader of the rendered book can download (the page sources jupyter-book copies under
    ``_sources``, any notebook) that hold a solution directive anywhere, metadata included: papermill once kept
    the whole teacher notebook in every executed notebook's metadata, so the student edition's download buttons
    handed out every solution while its HTML pages held none."""
    found = []
    for path in sorted(html.rglob("*")):
        if path.is_file() and (path.suffix == ".ipynb" or "_sources" in path.parts):
            if _SOLUTION_ANYWHERE.search(path.read_text(errors="replace")):
                found.append(path.relative_to(html).as_posix())
    return found


def _start_from_teacher_render(build_root: Path, teacher_root: Path) -> bool:
    """Make the student edition's Sphinx environment and HTML a copy of the teacher edition's last complete render
    of the same staged sources. Sphinx then reads and writes again only the pages whose sources differ (the
    chapters, with their solutions cut); every other page is the teacher's, which is the same page. False when the
    teacher edition has no complete render (the student edition then renders from scratch)."""
    teacher = teacher_root / "_build"
    if not (teacher / ".doctrees" / "environment.pickle").exists() or not (teacher_root / "built.sha256").exists():
        return False
    shutil.rmtree(build_root / "_build", ignore_errors=True)
    shutil.copytree(teacher, build_root / "_build")
    return True


def build_book(
    profile: str = "default", *, force: bool = False, chapters_only: list[str] | None = None,
    out_dir: Path | None = None, log=None, solutions: bool = True, reruns: list[str] | None = None,
    teacher_edition: Path | None = None, confirm_long: bool = False,
) -> Path:
    """Execute every chapter under ``profile`` (cached), stage the book, render it; returns the HTML folder.
    ``confirm_long`` (``--yes``) lets a chapter estimated above two hours here start
    (:func:`~medeval.runtime.execution.run_chapter`).

    ``solutions=False`` builds a student edition in ``_build/book/<profile>-student`` (or ``out_dir``): every
    gated solution of the exercises (its explanation, code, outputs and checks) is cut from the staged notebooks,
    a page that still holds a solution directive is refused before rendering, and a rendered page with a solution
    element fails the build, so no solution reaches the HTML. The student edition is staged in the teacher
    edition's folder (``teacher_edition``; ``_build/book/<profile>`` unless ``out_dir`` is given; a lock there
    serialises the two) and starts from a copy of the teacher's last complete render, so only the chapter pages are
    rendered again.

    ``reruns`` names kept runs (ids or unique prefixes, any profile) to add as a *Re-runs* part, one page each
    with its parameters and provenance (:func:`medeval.runtime.runs.rerun_notebook`).
    """
    from filelock import FileLock

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    root = project_root()
    registry = chapters()
    ids = chapters_only or list(registry)
    from medeval.runtime import runs as run_store

    try:
        chosen = [run_store.find_run(r, runs_dir()) for r in reruns or []]
    except LookupError as exc:
        raise ParameterError(str(exc)) from None
    unusable = [r.id for r in chosen if r.status != "ok"]
    if unusable:
        raise ParameterError(f"runs {unusable} did not finish (status failed or interrupted); `medeval runs` lists them")
    executed = [run_chapter(cid, profile, force=force, log=log, confirm_long=confirm_long) for cid in ids]

    build_root = Path(out_dir or root / "_build" / "book" / (profile if solutions else f"{profile}-student"))
    if solutions:
        teacher_root = build_root
    elif teacher_edition is not None or out_dir is None:
        teacher_root = Path(teacher_edition or root / "_build" / "book" / profile)
    else:  # a student edition elsewhere, with no teacher edition named: staged and rendered on its own
        teacher_root = build_root
    stage = teacher_root / "source"
    stage.mkdir(parents=True, exist_ok=True)
    with FileLock(teacher_root / "stage.lock"):
        return _stage_and_render(profile, executed, chosen, build_root, teacher_root, stage, solutions, force, log)


def _stage_and_render(profile, executed, chosen, build_root, teacher_root, stage, solutions, force, log) -> Path:
    """Stage the book's sources in ``stage`` and render them into ``build_root`` (under the stage's lock)."""
    from medeval.runtime import runs as run_store

    root = project_root()
    registry = chapters()
    book = root / "book"
    wanted: set[Path] = set()
    for src in book.rglob("*"):
        if src.is_file() and "_build" not in src.relative_to(book).parts:
            dst = stage / src.relative_to(book)
            if src == book / "intro.md":  # the landing page opens with the verdicts at a glance
                _write_if_changed(dst, src.read_text().replace(VERDICT_MATRIX_MARKER,
                                                               verdict_matrix_markdown(executed)))
            else:
                _copy_if_changed(src, dst)
            wanted.add(dst)
    from medeval.runtime.course import load_course

    minutes = {cid: {label: plan.minutes for label, plan in plans.items()}
               for cid, plans in load_course(check=False).exercises.items()}
    for res in executed:
        part = registry[res.chapter].part
        text = res.notebook.read_text()
        if not solutions:
            from medeval.runtime.exercises import without_solutions

            text = without_solutions(text)
        text = with_exercise_badges(text, minutes.get(res.chapter, {}))
        # the chapter's page and its sub-pages (exercises; checks, errata and provenance)
        for stem, page in split_chapter_notebook(text, f"{part}/{res.chapter}", registry[res.chapter].title).items():
            dst = stage / part / (f"{res.chapter}.ipynb" if not stem else f"{res.chapter}/{stem}.ipynb")
            _write_if_changed(dst, page)
            wanted.add(dst)
    for run in chosen:
        dst = stage / "reruns" / f"{run.id}.ipynb"
        _write_if_changed(dst, run_store.rerun_notebook(run))
        wanted.add(dst)
    from medeval.runtime.teachers_page import teachers_markdown

    for name, text in (("scorecard.md", scorecard_markdown(executed)),
                       ("teaching.md", teachers_markdown(built={res.chapter for res in executed})),
                       ("reproducibility.md", reproducibility_markdown(executed)), *api_pages().items()):
        _write_if_changed(stage / name, text)
        wanted.add(stage / name)
    wanted.add(stage / "_toc.yml")
    for stale in [p for p in stage.rglob("*") if p.is_file() and p not in wanted]:
        stale.unlink()  # before the table of contents is made: a glob must not count a page that is going away
    toc = _toc_without_empty_globs(_yaml.safe_load((book / "_toc.yml").read_text()), stage)
    _write_if_changed(stage / "_toc.yml", yaml.safe_dump(toc, sort_keys=False))
    if not solutions and (left := _staged_solutions(stage)):
        raise ChapterExecutionError(f"student edition: {left} still hold a solution directive outside a gated "
                                    "{solution-start} ... {solution-end} block; gate it (README, 'Writing an exercise')")

    html = build_root / "_build" / "html"
    stamp = build_root / "built.sha256"
    h = hashlib.sha256()
    digest_files(sorted(wanted), stage, h)
    h.update(source_digest(root).encode())  # the API reference renders the package's docstrings
    h.update(b"teacher" if solutions else b"student")
    digest = h.hexdigest()
    if html.joinpath("index.html").exists() and stamp.exists() and stamp.read_text() == digest and not force:
        log(f"[medeval] book ({profile}): unchanged, {html}")
        return html
    stamp.unlink(missing_ok=True)
    if teacher_root != build_root and _start_from_teacher_render(build_root, teacher_root):
        log(f"[medeval] book ({profile}, student edition): starting from the teacher edition's render")
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(stage), "--path-output", str(build_root),
           "--warningiserror", "--nitpick", "--keep-going", "--quiet"]
    log(f"[medeval] book ({profile}): rendering with jupyter-book")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ChapterExecutionError(
            f"jupyter-book build failed (warnings are errors):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
        )
    if not solutions and (shown := sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                                           if _SOLUTION_ELEMENT.search(p.read_text()))):
        raise ChapterExecutionError(f"student edition: the rendered pages {shown} show a solution")
    if not solutions and (downloads := _downloadable_solutions(html)):
        raise ChapterExecutionError(f"student edition: the downloadable files {downloads} hold a solution")
    atomic_write_text(stamp, digest)
    log(f"[medeval] book ({profile}): {html / 'index.html'}")
    return html

