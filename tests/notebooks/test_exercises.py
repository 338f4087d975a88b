"""Every chapter's teaching material (issue #15): at least four exercises of the four kinds, self-check questions
that validate, and student notebooks whose checks pass on the solutions and fail on the stubs.

``write_student_notebooks`` runs ``otter assign`` with its tests on: otter executes the teacher version (the
solutions, standalone, outside the chapter) and refuses when any check fails, so a written set is a proven one.
"""

from __future__ import annotations

import ast

import jupytext
import nbformat
import pytest

from medeval.runtime.grading import grade_notebook
from medeval.runtime.params import chapters
from medeval.runtime.teaching import (
    AUTOGRADED_KINDS,
    KINDS,
    read_exercises,
    stub,
    validate_self_check,
    write_student_notebooks,
)

CHAPTERS = list(chapters())
MAIN_CHAPTERS = [cid for cid, ch in chapters().items() if ch.part == "chapters"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_has_four_exercises_of_the_four_kinds(chapter):
    ex = read_exercises(chapter)
    assert len(ex.exercises) >= 4, [e.label for e in ex.exercises]
    kinds = {e.kind for e in ex.exercises}
    if chapter in MAIN_CHAPTERS:
        assert kinds == set(KINDS), kinds
    else:  # the appendices: at least one exercise with checks and one read by the teacher
        assert kinds & set(AUTOGRADED_KINDS) and "critical" in kinds, kinds
    assert ex.setup_cells, "no cell tagged exercise-setup"
    for e in ex.exercises:
        assert e.label.startswith("ex-"), e.label
        assert e.explanation or e.solution_cells, f"{e.label} has no solution"
        if e.kind in AUTOGRADED_KINDS:
            assert e.check_cells, f"{e.label} has no checks"
        for code in e.solution_cells:
            for node in ast.parse(code).body:
                if isinstance(node, ast.Assign | ast.FunctionDef):
                    names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
                    names += [node.name] if isinstance(node, ast.FunctionDef) else []
                    assert all(n.startswith("ex_") for n in names), f"{e.label}: {names} should start with ex_"


def _self_check_questions(chapter) -> list[list[dict]]:
    """The chapter's quizzes: its questions file (``teaching/quizzes/<chapter>.yaml``), once per self-check cell of
    its notebook (which reads the file)."""
    import yaml

    from medeval.runtime.quiz import quiz_path

    nb = jupytext.read(chapters()[chapter].notebook)
    cells = [c for c in nb.cells if c.cell_type == "code" and "notebook.self_check(" in c.source]
    assert all(c.source.strip() == "notebook.self_check()" for c in cells), "the questions live in the quiz file"
    return [yaml.safe_load(quiz_path(chapter).read_text()) for _ in cells]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_has_valid_self_check_questions(chapter):
    quizzes = _self_check_questions(chapter)
    assert len(quizzes) == 1, "one self-check cell per chapter"
    questions = validate_self_check(quizzes[0])
    assert 3 <= len(questions) <= 6


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_stub_runs_as_handed_out(chapter):
    """A student's untouched stub executes without error (its checks then fail, see the grading test below)."""
    for e in read_exercises(chapter).exercises:
        for code in e.solution_cells:
            ns: dict = {}
            exec(compile("import numpy as np\n" + stub(code), e.label, "exec"), ns)


@pytest.fixture(scope="module")
def material(tmp_path_factory, lazy_chapters, solution_check_values):
    """Each chapter's student and teacher notebooks, written when a test first asks for the chapter. otter's own run
    of the teacher version is skipped here: the book executes every solution and its check (a failing one fails the
    smoke build), the full-marks test below grades two chapters' solutions, and
    ``test_a_solution_that_fails_its_own_check_is_refused`` covers the refusal. The hidden checks' reference values
    come from the session's one run of each chapter's solutions (``solution_check_values``), which the mutation
    tests share."""
    from medeval.runtime import grading

    out = tmp_path_factory.mktemp("teaching")

    def write(chapter: str):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(grading, "reference_values", lambda exercises, **_: solution_check_values(exercises.chapter))
            [m] = write_student_notebooks([chapter], out, run_tests=False)
        return m

    return lazy_chapters(write)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_untouched_student_notebook_scores_zero_on_every_check(material, chapter):
    m = material[chapter]
    report = grade_notebook(m.student_notebook, teacher_dir=m.teacher_notebook.parent)
    graded = [g for g in report.grades if g.score is not None]
    assert graded and report.possible > 0
    assert all(g.score == 0 for g in graded), report.to_text()
    coding = [g for g in graded if g.kind == "coding"]
    assert all(len(g.problems) >= g.points for g in coding), report.to_text()


@pytest.mark.slow
@pytest.mark.parametrize("chapter", ["03-eve", "04b-evaluation-measures"])
def test_student_notebook_filled_with_the_solutions_gets_full_marks(material, chapter, tmp_path):
    m = material[chapter]
    student = nbformat.read(m.student_notebook, as_version=4)
    answers = [code for e in read_exercises(chapter).exercises for code in e.solution_cells]
    slots = [c for c in student.cells if "otter_answer_cell" in c.metadata.get("tags", []) and c.cell_type == "code"]
    assert len(answers) == len(slots) > 0
    for slot, answer in zip(slots, answers, strict=True):
        slot.source = answer
    filled = tmp_path / "filled.ipynb"
    nbformat.write(student, filled)
    report = grade_notebook(filled, teacher_dir=m.teacher_notebook.parent)
    assert report.score == report.possible > 0, report.to_text()
    assert not report.flags, report.to_text()  # the solutions themselves are never flagged
