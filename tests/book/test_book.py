"""The whole book builds offline from the smoke-profile notebooks, warnings as errors, with no error output
and nothing loaded from the network."""

import collections
import re

import nbformat
import pytest

from medeval.runtime.book import build_book
from medeval.runtime.params import chapters

pytestmark = [pytest.mark.book, pytest.mark.slow]

REMOTE_SCRIPT = re.compile(r"<script[^>]+src=[\"'](?:https?:)?//", re.I)
REMOTE_STYLE = re.compile(r"<link[^>]+href=[\"'](?:https?:)?//[^\"']+[\"'][^>]*rel=[\"']?stylesheet|"
                          r"<link[^>]+rel=[\"']?stylesheet[^>]+href=[\"'](?:https?:)?//", re.I)
REMOTE_IMPORT = re.compile(r"@import\s+(?:url\()?[\"']?(?:https?:)?//", re.I)


def test_book_builds_with_every_page(smoke_book):
    html, out, _ = smoke_book
    assert (html / "index.html").exists()
    for name in ("intro", "scorecard", "reproducibility", "bibliography"):
        assert (html / f"{name}.html").exists(), name
    for cid, ch in chapters().items():
        assert (html / ch.part / f"{cid}.html").exists(), cid


#: the book's six chapters (a scaffolded chapter joins the registry beside them)
BOOK_CHAPTERS = {"01-mil-stability", "02-rodeo", "03-eve", "04a-class-distribution", "04b-evaluation-measures",
                 "05-multilabel"}


def test_no_error_outputs_in_any_page(smoke_book):
    _, out, _ = smoke_book
    notebooks = list((out / "source").rglob("*.ipynb"))
    pages = [p for p in notebooks if p.parent.name in ("chapters", "appendix", "reruns")]
    assert len(pages) == len(chapters()) + 1  # and the re-run in the Re-runs part
    # every chapter's exercises and its checks, errata and provenance are on its sub-pages
    subs = {(p.parent.name, p.stem) for p in notebooks if p not in pages}
    assert {cid for cid, _ in subs} == set(chapters()) and {stem for _, stem in subs} == {"further", "exercises",
                                                                                           "reference"}
    further = {cid for cid, stem in subs if stem == "further"}  # a new chapter has none until it tags a section
    assert BOOK_CHAPTERS <= further <= {cid for cid in chapters() if cid[0].isdigit()}
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                assert output.get("output_type") != "error", f"{path.name}: error output"
                assert output.get("name") != "stderr" or "Traceback" not in output.get("text", ""), path.name
                # the runner's log lines stay in the terminal (the estimate was printed on all 8 executed pages)
                assert "[medeval]" not in output.get("text", ""), f"{path.name}: a log line on the page"


def test_no_cell_shows_a_bare_repr(smoke_book):
    """A cell's result is a formatted table, a figure, Markdown or nothing, never a bare ``text/plain`` repr; the
    parameters cells are hidden."""
    _, out, _ = smoke_book
    problems = []
    for path in (out / "source").rglob("*.ipynb"):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            tags = cell.get("metadata", {}).get("tags", [])
            if "parameters" in tags or "injected-parameters" in tags:
                assert "remove-cell" in tags, f"{path.name}: parameters cell {i} is shown"
            if "solution" in tags:
                continue  # a worked solution may end by showing the value it computed
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if output.get("metadata", {}).get("scrapbook"):
                    continue  # a glued value, pasted into the text by {glue:} roles
                if output.get("output_type") in ("execute_result", "display_data") and set(data) == {"text/plain"}:
                    problems.append(f"{path.name} cell {i}: {data['text/plain'][:60]!r}")
    assert not problems, problems


#: Python output that is not meant for a reader: numpy scalar reprs, unrounded floats (12+ digits), raw dicts,
#: pandas' raw DataFrame HTML and pydantic model reprs; and the generated glitches of the claims tables (an empty
#: "n = ;", "above 0 and below 0")
STRAY_OUTPUT = re.compile(r"\bnp\.(?:int|uint|float|bool_|str_)\w*\(|\b\d\.\d{12,}|\{'|class=\"dataframe\"|"
                          r"\bmodel_config =|\bn = ;|\babove 0 and below 0\b")


def test_stray_output_pattern_is_not_vacuous():
    for text in ("P ∈ [np.int64(25), np.int64(35)]", "(0.034722222222222224, 0.01)", "{'mean_of_f1': 1}",
                 '<table border="1" class="dataframe">', "model_config = {'extra': 'forbid'}", "np.float64(0.5)",
                 "n = ; phantom", "NOR is significantly above 0 and below 0 of 4 operators"):
        assert STRAY_OUTPUT.search(text), text
    for text in ("P ∈ [25, 35]", "EVE = 0.0347", "S_APJ 0.412 ± 0.031", "{glue:}`x`", "1.2e-05"):
        assert not STRAY_OUTPUT.search(text), text


def test_no_stray_python_output_in_any_cell(smoke_book):
    """No cell, solutions included, prints or shows a numpy scalar repr, an unrounded float, a raw dict, a raw
    DataFrame or a model repr: results are formatted (``show_table`` or a formatted print)."""
    _, out, _ = smoke_book
    problems = []
    for path in (out / "source").rglob("*.ipynb"):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            for output in cell.get("outputs", []):
                if output.get("metadata", {}).get("scrapbook"):
                    continue  # a glued value: formatted where the text pastes it
                texts = [output.get("text", "")] + [v for k, v in output.get("data", {}).items()
                                                    if k in ("text/plain", "text/html", "text/markdown")]
                for text in texts:
                    m = STRAY_OUTPUT.search(text if isinstance(text, str) else "".join(text))
                    if m:
                        problems.append(f"{path.name} cell {i}: {m.group(0)!r}")
    assert not problems, problems


def test_no_page_loads_scripts_or_styles_from_the_network(smoke_book):
    html, _, _ = smoke_book
    pages = list(html.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(errors="replace")
        for pattern in (REMOTE_SCRIPT, REMOTE_STYLE, REMOTE_IMPORT):
            match = pattern.search(text)
            assert match is None, f"{page.relative_to(html)} loads from the network: {match.group(0)[:120]}"
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists(), "MathJax is served locally"


def test_no_source_map_ships_and_search_works_from_disk(smoke_book):
    html, _, _ = smoke_book
    assert not list(html.rglob("*.map")), "source maps ship with the book"
    assert not any("sourceMappingURL" in p.read_text(errors="replace") for p in (html / "_static").rglob("*.js"))
    # without summaries, a search hit does not fetch the page's text (which file:// pages may not do)
    assert "SHOW_SEARCH_SUMMARY: false" in (html / "_static" / "documentation_options.js").read_text()


def test_no_id_repeats_on_any_page(smoke_book):
    html, _, _ = smoke_book
    problems = {}
    for page in html.rglob("*.html"):
        if "_modules" in page.relative_to(html).parts:
            continue  # source listings: an id in the code is text
        counts = collections.Counter(re.findall(r'\sid="([^"]+)"', page.read_text(errors="replace")))
        repeated = sorted(i for i, n in counts.items() if n > 1)
        if repeated:
            problems[str(page.relative_to(html))] = repeated[:5]
    assert not problems, problems


def test_scorecard_gathers_every_chapter_table(smoke_book):
    html, _, _ = smoke_book
    text = (html / "scorecard.html").read_text()
    intro = (html / "intro.html").read_text()
    for page in (text, intro):  # both open with the chapter x verdict matrix
        assert "all chapters" in page and "verdict matrix" not in page
    for cid, ch in chapters().items():
        if ch.part == "chapters":
            assert ch.title.split(":")[0][:30] in text, cid


def test_second_build_with_nothing_changed_reuses_everything(smoke_book):
    _, out, _ = smoke_book
    logs: list[str] = []
    reruns = [p.stem for p in (out / "source" / "reruns").glob("*.ipynb")]
    build_book("smoke", out_dir=out, log=logs.append, reruns=reruns)
    assert all("cached" in m for m in logs if "executing" in m or "cached" in m)
    assert any("unchanged" in m for m in logs), logs


def test_every_chapter_has_exercises_with_collapsed_solutions_and_a_self_check(smoke_book, chapter_html):
    from medeval.runtime.teaching import read_exercises

    html, _, _ = smoke_book
    for cid, ch in chapters().items():
        text = chapter_html(html, ch.part, cid)
        labels = [e.label for e in read_exercises(cid).exercises]
        for label in labels:
            assert f'id="{label}"' in text, f"{cid}: exercise {label} is not on the page"
        solutions = re.findall(r'<(?:div|details)[^>]*class="[^"]*\bsolution\b[^"]*"', text)
        assert len(solutions) == len(labels), f"{cid}: {len(solutions)} solutions for {len(labels)} exercises"
        assert all("dropdown" in tag for tag in solutions), f"{cid}: a solution is not collapsed"
        assert "data-shufflequestions" in text and "show_questions(" in text, f"{cid}: no self-check quiz"
        assert "assert " not in re.sub(r"<[^>]+>", "", text).split("Exercises")[-1], f"{cid}: a check is shown"


def test_for_teachers_page_has_the_course_plan_and_every_objective(smoke_book):
    html, _, _ = smoke_book
    text = re.sub(r"<[^>]+>", "", (html / "teaching.html").read_text())
    assert "Course plan: a semester of 14 weeks" in text and "Handing out and grading" in text
    assert "Learning objectives" in text and "Assessment" in text and "Rubrics" in text
    assert "medeval grade" in text and "make student" in text and "CC BY 4.0" in text
    for cid, ch in chapters().items():
        if ch.part == "chapters":
            assert ch.title[:25] in text, cid
    footer = (html / "intro.html").read_text()
    assert "creativecommons.org/licenses/by/4.0" in footer and "CC BY 4.0" in footer


def test_a_kept_run_appears_in_the_re_runs_part_with_its_parameters(smoke_book):
    html, out, _ = smoke_book
    pages = list((html / "reruns").glob("*.html"))
    assert len(pages) == 1
    text = pages[0].read_text()
    plain = re.sub(r"<[^>]+>", "", text)
    assert "Re-run" in plain and "n_repeats=5" in plain and "Provenance" in plain
    assert "ex-rerun-hand" not in text and "data-shufflequestions" not in text  # the teaching part stays in the chapter
    assert 'id="rerun-' in text  # its labels are its own, next to the chapter's
    assert "Re-runs" in (html / "intro.html").read_text()


def test_api_pages_list_top_level_objects_on_the_page_and_document_every_member(smoke_book):
    """A module page's *On this page* list stops at its sections and top-level objects (``tocdepth: 2``); the
    members of its classes are documented on the page all the same."""
    html, _, _ = smoke_book
    page = (html / "api" / "medeval.metrics.detection.html").read_text()
    listed = set(re.findall(r'class="reference internal nav-link" href="#([^"]+)"', page))
    assert {"medeval.metrics.detection.ImageBoxes", "medeval.metrics.detection.rodeo_harmonic_mean"} <= listed
    assert not {a for a in listed if a.startswith("medeval.metrics.detection.ImageBoxes.")}, sorted(listed)
    assert 'id="medeval.metrics.detection.ImageBoxes.from_arrays"' in page


def _sidebar_links(page: str) -> list[str]:
    nav = page[page.index('<nav class="bd-links bd-docs-nav"'):]
    return re.findall(r'<a class="reference internal" href="([^"#]+)"', nav[:nav.index("</nav>")])


def test_the_sidebar_lists_the_api_modules_only_on_the_api_pages(smoke_book):
    """Every page's sidebar lists the chapters, the appendices and the API reference; the 83 module pages are
    listed under the API reference on its own pages only (``collapse_navbar``), where each is one click away."""
    html, _, _ = smoke_book
    modules = sorted(p.name for p in (html / "api").glob("medeval.*.html"))
    assert len(modules) > 50
    chapter = _sidebar_links((html / "chapters" / "01-mil-stability.html").read_text())
    assert "02-rodeo.html" in chapter and "../api/index.html" in chapter and "../appendix/A1-data.html" in chapter
    assert not [link for link in chapter if "/api/medeval." in link], chapter
    api = {link.removeprefix("./") for link in _sidebar_links((html / "api" / "index.html").read_text())}
    assert set(modules) <= api, sorted(set(modules) - api)
    assert "../chapters/01-mil-stability.html" in api
