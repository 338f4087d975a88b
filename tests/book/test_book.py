"""The whole book builds offline from the smoke-profile notebooks, warnings as errors, with no error output
and nothing loaded from the network."""

import re

import nbformat
import pytest

from medeval.runtime.execution import build_book
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


def test_no_error_outputs_in_any_page(smoke_book):
    _, out, _ = smoke_book
    notebooks = list((out / "source").rglob("*.ipynb"))
    assert len(notebooks) == len(chapters())
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                assert output.get("output_type") != "error", f"{path.name}: error output"
                assert output.get("name") != "stderr" or "Traceback" not in output.get("text", ""), path.name


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
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if output.get("metadata", {}).get("scrapbook"):
                    continue  # a glued value, pasted into the text by {glue:} roles
                if output.get("output_type") in ("execute_result", "display_data") and set(data) == {"text/plain"}:
                    problems.append(f"{path.name} cell {i}: {data['text/plain'][:60]!r}")
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


def test_scorecard_gathers_every_chapter_table(smoke_book):
    html, _, _ = smoke_book
    text = (html / "scorecard.html").read_text()
    for cid, ch in chapters().items():
        if ch.part == "chapters":
            assert ch.title.split(":")[0][:30] in text, cid


def test_second_build_with_nothing_changed_reuses_everything(smoke_book):
    _, out, _ = smoke_book
    logs: list[str] = []
    build_book("smoke", out_dir=out, log=logs.append)
    assert all("cached" in m for m in logs if "executing" in m or "cached" in m)
    assert any("unchanged" in m for m in logs), logs
