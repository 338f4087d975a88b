"""The API pages show a chapter equation's formula typeset, as the chapter does, and link back to the equation
(``medeval.runtime.sphinx_book``: "Used in Eq. N.k (chapter)")."""

import re

import pytest


def _entry(page: str, name: str) -> str:
    """The HTML of one documented object of an API page: from its anchor to the next object of the module."""
    start = page.index(f'id="{name}"')
    module = name.rsplit(".", 1)[0]
    following = re.compile(rf'<dt class="sig sig-object py" id="{re.escape(module)}\.[^."]+"')
    nxt = following.search(page, start + 1)
    return page[start: nxt.start() if nxt else len(page)]


@pytest.mark.parametrize(("module", "name", "chapter", "label"), [
    ("medeval.metrics.variance", "empirical_variance_estimate", "03-eve", "eq-eve-eve"),
    ("medeval.metrics.stability", "adjusted_positive_jaccard", "01-mil-stability", "eq-mil-apj"),
])
def test_an_api_entry_typesets_its_formula_and_links_to_the_chapter_equation(smoke_book, module, name, chapter,
                                                                             label):
    html, _, _ = smoke_book
    entry = _entry((html / "api" / f"{module}.html").read_text(), f"{module}.{name}")
    assert 'class="math' in entry and "\\[" in entry, "the docstring's formula is typeset display math"
    assert "\\(" in entry, "and its symbols inline math"
    link = f"../chapters/{chapter}.html#equation-{label}"
    assert f'href="{link}"' in entry, f"'Used in' links to {link}"
    used_in = entry[entry.index("Used in"):]
    assert re.match(r"Used in <a [^>]*>(?:<span[^>]*>)?Eq\. \d+\.\d+(?:</span>)?</a>", used_in), used_in[:300]
    assert f'href="../chapters/{chapter}.html"' in used_in[:2000], "and names the chapter"
