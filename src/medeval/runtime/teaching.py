"""The teaching edition: exercises read from a chapter, student notebooks, and grading with otter-grader.

One name for the teaching edition's parts, each a module with one job:

* :mod:`medeval.runtime.exercises`: a chapter's exercise markup read into exercises (:func:`read_exercises`), and
  cut out of a page for the student edition of the book (:func:`without_solutions`);
* :mod:`medeval.runtime.student_notebooks`: the otter-grader master notebook and ``otter assign``
  (:func:`write_student_notebooks`, :func:`stub`, :func:`public_check_index`);
* :mod:`medeval.runtime.quiz`: the self-check questions (:func:`validate_self_check`, :func:`shuffled_answers`);
* :mod:`medeval.runtime.chapter_sections`: a chapter's reading path and sub-pages, and its reading time;
* :mod:`medeval.runtime.teachers_page`: the book's *For teachers* page (:func:`teachers_markdown`).

Grading handed-in notebooks is :mod:`medeval.runtime.grading`'s, the course plan :mod:`medeval.runtime.course`'s.
Every name below (``__all__``) stays importable from here.
"""

from __future__ import annotations

from medeval.runtime.chapter_sections import (
    FURTHER_TAG,
    OFF_PATH_PAGES,
    READING_WORDS_PER_MINUTE,
    reading_time,
    section_page,
    section_title,
    split_at_headings,
)
from medeval.runtime.exercises import (
    AUTOGRADED_KINDS,
    KINDS,
    ChapterExercises,
    Exercise,
    ExerciseFormatError,
    read_exercises,
    without_solutions,
)
from medeval.runtime.quiz import shuffled_answers, validate_self_check
from medeval.runtime.student_notebooks import (
    ANSWER_MARKER,
    StudentMaterial,
    master_notebook,
    notebook_markdown,
    public_check_index,
    stub,
    write_student_notebooks,
)
from medeval.runtime.teachers_page import semester_markdown, teachers_markdown

__all__ = [
    "ANSWER_MARKER",
    "AUTOGRADED_KINDS",
    "FURTHER_TAG",
    "KINDS",
    "OFF_PATH_PAGES",
    "READING_WORDS_PER_MINUTE",
    "ChapterExercises",
    "Exercise",
    "ExerciseFormatError",
    "StudentMaterial",
    "master_notebook",
    "notebook_markdown",
    "public_check_index",
    "read_exercises",
    "reading_time",
    "section_page",
    "section_title",
    "semester_markdown",
    "shuffled_answers",
    "split_at_headings",
    "stub",
    "teachers_markdown",
    "validate_self_check",
    "without_solutions",
    "write_student_notebooks",
]
