"""The student edition of the smoke book: the same executed notebooks, rendered without any solution."""

import re

import pytest

from medeval.runtime.book import build_book
from medeval.runtime.params import chapters

pytestmark = [pytest.mark.book, pytest.mark.slow]


@pytest.fixture(scope="module")
def student_book(run_chapter_smoke, tmp_path_factory):
    """The student edition of the smoke book: the same executed notebooks, rendered without solutions."""
    for chapter_id in chapters():  # executed once per session, whichever worker comes first (tests/conftest.py)
        run_chapter_smoke(chapter_id)
    out = tmp_path_factory.mktemp("student-book")
    return build_book("smoke", out_dir=out, log=lambda _: None, solutions=False)


def test_student_edition_leaves_every_solution_out(student_book, request):
    from medeval.runtime.teaching import read_exercises

    html = student_book
    for cid, ch in chapters().items():
        text = (html / ch.part / f"{cid}.html").read_text()
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
        teacher = (teacher_html / ch.part / f"{cid}.html").read_text()
        assert re.search(r'class="[^"]*\bsolution\b', teacher), f"{cid}: the teacher's edition has no solution"
