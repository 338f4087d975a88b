"""Verdicts are decided in src/medeval/experiments, never in a notebook."""

import re
from pathlib import Path

import pytest

from medeval.runtime.params import chapters

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.py"))
VERDICT_LITERAL = re.compile(r"""["'](\[(Re|¬Re|~|n/a)\])["']""")


@pytest.mark.claim
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_claim_no_verdict_literal_or_rule_in_notebooks(path):
    text = path.read_text()
    assert not VERDICT_LITERAL.search(text), f"{path.name} writes a verdict literal"
    assert not re.search(r"^\s*def\s+verdict", text, re.M), f"{path.name} defines a verdict rule"


def test_every_chapter_notebook_is_checked():
    assert {p.stem for p in NOTEBOOKS} >= {cid for cid in chapters()}


def test_every_chapter_with_claims_opens_with_its_generated_key_findings():
    """A chapter's findings are stated once, generated from its rows (``notebook.paper_vs_us`` glues them), so no
    hand-written summary can contradict a verdict: every chapter that decides claims shows the glued block before
    its learning objectives."""
    from pathlib import Path

    from medeval.runtime.params import chapters

    root = Path(__file__).resolve().parents[2] / "notebooks"
    deciding = [nb for nb in sorted(root.glob("*.py")) if "claims_sections(" in nb.read_text()
                or "paper_vs_us(" in nb.read_text()]
    assert {nb.stem for nb in deciding} >= {c for c, ch in chapters().items() if ch.part == "chapters"}
    for nb in deciding:
        text = nb.read_text()
        assert "```{glue:md} key-findings" in text, nb.name
        assert text.index("## Key findings") < text.index("## What you will learn"), nb.name
