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
