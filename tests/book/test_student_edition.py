"""The student edition of the smoke book: the same executed notebooks, rendered without any solution."""

import re

import pytest

from medeval.runtime.book import build_book
from medeval.runtime.params import chapters

pytestmark = [pytest.mark.book, pytest.mark.slow]


@pytest.fixture(scope="module")
def student_book(smoke_book, tmp_path_factory):
    """The student edition of the smoke book: the same executed notebooks and re-run pages, staged in the smoke
    book's folder and rendered without solutions, starting from the smoke book's render. ``(html, logs)``."""
    _, teacher, _ = smoke_book
    reruns = sorted(p.stem for p in (teacher / "source" / "reruns").glob("*.ipynb"))
    logs: list[str] = []
    out = tmp_path_factory.mktemp("student-book")
    html = build_book("smoke", out_dir=out, log=logs.append, solutions=False, teacher_edition=teacher, reruns=reruns)
    return html, logs


def test_student_edition_leaves_every_solution_out(student_book, request, chapter_html):
    from medeval.runtime.teaching import read_exercises

    html, logs = student_book
    assert any("starting from the teacher edition's render" in m for m in logs), logs
    for cid, ch in chapters().items():
        text = chapter_html(html, ch.part, cid)
        exercises = read_exercises(cid).exercises
        for e in exercises:
            assert f'id="{e.label}"' in text, f"{cid}: exercise {e.label} lost"
            first_line = e.explanation.strip().splitlines()[0][:40] if e.explanation.strip() else ""
            if len(first_line) > 20:
                assert first_line not in text, f"{cid}: the explanation of {e.label} is in the student edition"
            for code in e.solution_cells:
                longest = max(code.splitlines(), key=len).strip()
                if len(longest) > 25:
                    assert longest not in text, f"{cid}: solution code of {e.label} is in the student edition"
        assert not re.search(r'class="[^"]*\bsolution\b', text), f"{cid}: a solution element is left"
    teacher_html = request.getfixturevalue("smoke_book")[0]  # the teacher's edition shows what was cut
    for cid, ch in chapters().items():
        teacher = chapter_html(teacher_html, ch.part, cid)
        assert re.search(r'class="[^"]*\bsolution\b', teacher), f"{cid}: the teacher's edition has no solution"
    # the download buttons: every chapter's notebook is offered, and none holds a solution, in its cells or in its
    # metadata (papermill's record once held the whole teacher notebook)
    from medeval.runtime.book import _downloadable_solutions

    offered = sorted(p.name for p in html.rglob("*.ipynb") if "_sources" in p.parts)
    assert {f"{cid}.ipynb" for cid in chapters()} <= set(offered), offered
    assert _downloadable_solutions(html) == []
    assert _downloadable_solutions(teacher_html)  # the teacher's downloads keep them


def test_a_solution_left_outside_a_gate_is_found_in_the_staged_pages(tmp_path):
    """The student edition refuses to render a page that still holds a solution directive: an ungated
    ``{solution}`` in a markdown page or a notebook's markdown cell is named; a page that only mentions one is not."""
    import json

    from medeval.runtime.book import _SOLUTION_ELEMENT, _staged_solutions

    (tmp_path / "chapters").mkdir()
    (tmp_path / "intro.md").write_text("# Intro\n\nWrite the ``{solution}`` directive inside a gate.\n")
    assert _staged_solutions(tmp_path) == []
    (tmp_path / "notes.md").write_text("# Notes\n\n````{solution} ex-one\nThe answer.\n````\n")
    nb = {"cells": [{"cell_type": "markdown", "source": ["Text\n", ":::{solution-start} ex-two\n"]},
                    {"cell_type": "code", "source": "x = 1"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "chapters" / "c.ipynb").write_text(json.dumps(nb))
    assert _staged_solutions(tmp_path) == ["chapters/c.ipynb", "notes.md"]
    # a solution in a notebook's metadata (papermill's record of its input), not in any cell
    nb = {"cells": [{"cell_type": "code", "source": "x = 1"}], "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"papermill": {"input_path": "{'cells': [{'source': '```{solution-start} ex-one\\n'}]}"}}}
    (tmp_path / "chapters" / "c.ipynb").write_text(json.dumps(nb))
    assert _staged_solutions(tmp_path) == ["chapters/c.ipynb", "notes.md"]
    assert _SOLUTION_ELEMENT.search('<details class="solution dropdown">')
    assert not _SOLUTION_ELEMENT.search('<div class="exercise"> a solution follows')
