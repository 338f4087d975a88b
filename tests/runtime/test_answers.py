"""Written answers (issue #34, item 5): every teacher-read part gets an answer cell in the student notebook, and
``medeval answers`` collects them per student beside the model answer and the rubric."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from medeval.runtime.answers import (
    AnswersError,
    answers_html,
    student_notebooks,
    write_answers,
    written_answers,
)
from medeval.runtime.teaching import (
    ExerciseFormatError,
    master_notebook,
    read_exercises,
    write_student_notebooks,
)

FIXTURE = Path(__file__).with_name("exercises_fixture.py")
CHAPTER = "03-eve"  # the fixture stands in for this chapter's source
WRITTEN = {"ex-eve-hand": "Why is the AUC three quarters?"}


@pytest.fixture(scope="module")
def material(tmp_path_factory):
    out = tmp_path_factory.mktemp("answers")
    [m] = write_student_notebooks([CHAPTER], out, run_tests=False, sources={CHAPTER: FIXTURE},
                                  written={CHAPTER: WRITTEN})
    return m


def _answer(nb, name: str, text: str) -> None:
    """Write ``text`` into the answer cell under the question ``name``, as a student would."""
    marker = f"<!-- medeval-answer: {name} -->"
    index = next(i for i, c in enumerate(nb.cells) if marker in c.source)
    assert nb.cells[index + 1].source == "_Type your answer here, replacing this text._"
    nb.cells[index + 1].source = text


def test_a_written_part_is_a_teacher_read_question_with_an_answer_cell(material):
    nb = nbformat.read(material.student_notebook, as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "**Exercise 1, in words (read by your teacher).** Why is the AUC three quarters?" in text
    assert "Three of four pairs" not in text  # the model answer stays in the teacher's version
    teacher = "\n".join(c.source for c in nbformat.read(material.teacher_notebook, as_version=4).cells)
    assert "Three of four pairs are ordered" in teacher
    chapter, answers = written_answers(material.student_notebook)
    assert chapter == CHAPTER
    assert [(a.name, a.exercise, a.kind) for a in answers] == [
        ("ex-eve-hand-written", "ex-eve-hand", "written"),
        ("ex-eve-experiment-interpretation", "ex-eve-experiment", "interpretation"),
        ("ex-eve-critical", "ex-eve-critical", "critical")]
    assert all(a.answer == "" for a in answers)


def test_only_a_by_hand_or_coding_exercise_gets_a_written_part():
    exercises = read_exercises(CHAPTER, FIXTURE)
    with pytest.raises(ExerciseFormatError, match="ex-eve-critical is critical"):
        master_notebook(exercises, {"ex-eve-critical": "Why?"})
    with pytest.raises(ExerciseFormatError, match="unknown exercises ex-none"):
        master_notebook(exercises, {"ex-none": "Why?"})


def test_every_written_part_of_the_course_file_becomes_a_question():
    """The chapters' own master notebooks: each exercise listed with a written part in teaching/course.yaml has its
    teacher-read question, and no other exercise has one."""
    from medeval.runtime.course import load_course
    from medeval.runtime.params import chapters

    course = load_course(check=False)
    for cid in chapters():
        nb = master_notebook(read_exercises(cid), course.written_parts(cid))
        names = {line.split(": ", 1)[1] for c in nb.cells if c.cell_type == "raw"
                 for line in c.source.splitlines() if line.startswith("name: ") and line.endswith("-written")}
        assert names == {f"{label}-written" for label in course.written_parts(cid)}, cid


def test_answers_are_collected_per_student_beside_the_model_answer_and_rubric(material, tmp_path):
    folder = tmp_path / "handed-in"
    (folder / "alice").mkdir(parents=True)
    (folder / ".ipynb_checkpoints").mkdir()
    nb = nbformat.read(material.student_notebook, as_version=4)
    _answer(nb, "ex-eve-hand-written", "Because **three** of the four pairs are ordered. <script>alert(1)</script>")
    _answer(nb, "ex-eve-critical", "It is not true: the evidence is one run.")
    nb.cells.insert(next(i for i, c in enumerate(nb.cells) if "It is not true" in c.source) + 1,
                    nbformat.v4.new_markdown_cell("A second paragraph in a cell the student added."))
    nbformat.write(nb, folder / "alice" / "03-eve.ipynb")
    nbformat.write(nbformat.read(material.student_notebook, as_version=4), folder / "bob.ipynb")
    nbformat.write(nb, folder / ".ipynb_checkpoints" / "bob-checkpoint.ipynb")
    assert [p.relative_to(folder).as_posix() for p in student_notebooks(folder)] == ["alice/03-eve.ipynb",
                                                                                       "bob.ipynb"]
    _, answers = written_answers(folder / "alice" / "03-eve.ipynb")
    critical = next(a for a in answers if a.kind == "critical")
    assert critical.answer == ("It is not true: the evidence is one run.\n\n"
                               "A second paragraph in a cell the student added.")
    page = answers_html(student_notebooks(folder), root=folder, sources={CHAPTER: FIXTURE})
    alice, bob = page.split("<h2>alice/03-eve.ipynb — 03-eve</h2>")[1].split("<h2>bob.ipynb — 03-eve</h2>")
    assert "Because <strong>three</strong> of the four pairs are ordered." in alice
    assert "<script>" not in page and "&lt;script&gt;" in alice  # a student's HTML is shown, never run
    assert "Three of four pairs are ordered: 0.75." in alice  # the model answer of ex-eve-hand
    assert "Model answer here." in alice  # the model answer of the critical exercise
    assert alice.count("<b>Rubric</b>") == 3 and "States a verdict on the claim" in alice
    assert bob.count("(no answer: the cell is as handed out)") == 3


def test_answers_refuse_what_they_cannot_read(tmp_path, material):
    with pytest.raises(AnswersError, match="no such folder"):
        student_notebooks(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnswersError, match="holds no .ipynb notebook"):
        student_notebooks(tmp_path / "empty")
    (tmp_path / "mixed").mkdir()
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "mixed" / "plain.ipynb")
    with pytest.raises(AnswersError, match="plain.ipynb: carries no medeval chapter"):
        write_answers(tmp_path / "mixed", tmp_path / "out.html")
    assert not (tmp_path / "out.html").exists()
    with pytest.raises(AnswersError, match="expected a file name ending in .html"):
        write_answers(tmp_path / "mixed", tmp_path / "out.txt")


def test_cli_answers_writes_the_page_and_names_a_bad_folder(tmp_path, material):
    folder = tmp_path / "in"
    folder.mkdir()
    nbformat.write(nbformat.read(material.student_notebook, as_version=4), folder / "carol.ipynb")
    out = tmp_path / "answers.html"
    proc = subprocess.run([sys.executable, "-m", "medeval.cli", "answers", str(folder), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "<h2>carol.ipynb — 03-eve</h2>" in out.read_text()
    proc = subprocess.run([sys.executable, "-m", "medeval.cli", "answers", str(tmp_path / "nope")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "no such folder" in proc.stderr and "Traceback" not in proc.stderr
