"""A chapter's exercise section: its markup read into exercises, or cut out of a page for the student edition.

A chapter's ``## Exercises`` section is written with sphinx-exercise's directives, so the book shows each prompt
and a collapsed solution. Every exercise is one prompt cell (an ``{exercise}`` directive with ``:label:`` and
``:class:`` one of :data:`KINDS`), then a gated solution: a ``{solution-start}`` cell, code cells tagged
``solution``, code cells tagged ``check`` (each one graded test case: plain ``assert`` statements) and a
``{solution-end}`` cell. A code cell tagged ``exercise-setup`` holds the imports the exercises need.

:func:`read_exercises` reads that markup (refusing what does not follow it, :class:`ExerciseFormatError`);
:func:`without_solutions` cuts every gated solution out of an executed page (the student edition of the book). The
student notebooks made from the exercises: :mod:`medeval.runtime.student_notebooks`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("by-hand", "coding", "experimental", "critical")
"""The kinds of exercise, in the order a chapter presents them (the ``:class:`` of an ``{exercise}``)."""


AUTOGRADED_KINDS = ("by-hand", "coding", "experimental")


_EXERCISE = re.compile(r"^\s*(`{3,}|:{3,})\{exercise\}\s*(?P<title>.*)$", re.M)


_SOLUTION_START = re.compile(r"^\s*(`{3,}|:{3,})\{solution-start\}\s*(?P<label>\S+)", re.M)


_SOLUTION_END = re.compile(r"^\s*(`{3,}|:{3,})\{solution-end\}", re.M)


_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


class ExerciseFormatError(ValueError):
    """A chapter's exercise section does not follow the markup this module reads."""


@dataclass
class Exercise:
    """One exercise of a chapter: its prompt, the solution's explanation and code, and its checks."""

    label: str
    kind: str
    title: str
    prompt: str
    explanation: str = ""
    solution_cells: list[str] = field(default_factory=list)
    check_cells: list[str] = field(default_factory=list)

    @property
    def autograded(self) -> bool:
        """Whether the exercise has checks (a ``critical`` exercise is read by the teacher)."""
        return bool(self.check_cells)

    @property
    def points(self) -> int:
        """One point per check cell; a teacher-graded exercise is worth 2 points."""
        return len(self.check_cells) if self.check_cells else 2


@dataclass
class ChapterExercises:
    """The exercise section of one chapter."""

    chapter: str
    title: str
    setup_cells: list[str]
    exercises: list[Exercise]

    def by_label(self, label: str) -> Exercise:
        for ex in self.exercises:
            if ex.label == label:
                return ex
        raise KeyError(label)


def _directive_body(source: str, match: re.Match) -> tuple[str, dict[str, str], str]:
    """Split an ``{exercise}`` fence into its options and body; return (title, options, body)."""
    fence = match.group(1)
    rest = source[match.end():].split("\n")[1:]
    options: dict[str, str] = {}
    body: list[str] = []
    in_options = True
    for line in rest:
        if line.strip() == fence or (line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0])):
            break
        if in_options and _OPTION.match(line.strip()):
            m = _OPTION.match(line.strip())
            options[m["key"]] = m["value"].strip()
            continue
        in_options = False
        body.append(line)
    return match["title"].strip(), options, "\n".join(body).strip()


@functools.lru_cache(maxsize=32)
def _parsed_source(text: str, fmt: str):
    import jupytext

    return jupytext.reads(text, fmt=fmt)


def read_chapter_source(path: Path):
    """A chapter's jupytext source as a notebook, parsed once per content: ``medeval book`` reads each chapter for
    its exercises, the course plan, its reading time and its objectives, and parsing the same text again cost a
    second of every build. The file is read every time (an edited file is parsed afresh, whatever its timestamp);
    the copy returned is the caller's own, so a caller that changes it changes nothing the next caller reads."""
    import copy

    path = Path(path)
    return copy.deepcopy(_parsed_source(path.read_text(encoding="utf-8"), path.suffix.lstrip(".") or "py"))


def read_exercises(chapter_id: str, source: Path | None = None) -> ChapterExercises:
    """Read the exercises of a chapter from its jupytext source.

    Raises :class:`ExerciseFormatError` naming the file, the exercise and what is expected when the markup is
    incomplete: an exercise without a label or with an unknown kind, a solution for another label, solution or
    check cells outside a solution, a coding exercise without checks.
    """
    from medeval.runtime.params import chapters

    chapter = chapters()[chapter_id]
    path = Path(source) if source is not None else chapter.notebook
    nb = read_chapter_source(path)
    setup: list[str] = []
    exercises: list[Exercise] = []
    open_solution: Exercise | None = None
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        text = cell.source
        if cell.cell_type == "markdown":
            m = _EXERCISE.search(text)
            if m:
                if open_solution is not None:
                    raise ExerciseFormatError(f"{path}: exercise {open_solution.label!r} has no {{solution-end}}")
                title, options, body = _directive_body(text, m)
                label, kind = options.get("label", ""), options.get("class", "")
                if not label.startswith("ex-"):
                    raise ExerciseFormatError(f"{path}: exercise {title!r} needs a ':label: ex-…' option")
                if kind not in KINDS:
                    raise ExerciseFormatError(
                        f"{path}: exercise {label!r} has ':class: {kind}'; expected one of {', '.join(KINDS)}")
                if any(ex.label == label for ex in exercises):
                    raise ExerciseFormatError(f"{path}: exercise label {label!r} is used twice")
                exercises.append(Exercise(label=label, kind=kind, title=title, prompt=body))
                continue
            m = _SOLUTION_START.search(text)
            if m:
                if not exercises or exercises[-1].label != m["label"]:
                    raise ExerciseFormatError(
                        f"{path}: {{solution-start}} {m['label']!r} does not follow the prompt of that exercise")
                open_solution = exercises[-1]
                end = _SOLUTION_END.search(text, m.end())
                after = text[m.end():end.start() if end else None].split("\n")
                # drop the directive's option lines and its closing fence
                rest = [ln for ln in after[1:] if not _OPTION.match(ln.strip())]
                while rest and (not rest[0].strip() or set(rest[0].strip()) <= set("`:")):
                    rest.pop(0)
                open_solution.explanation = "\n".join(rest).strip()
                if end:  # the whole solution in one cell
                    open_solution = None
                continue
            if _SOLUTION_END.search(text):
                if open_solution is None:
                    raise ExerciseFormatError(f"{path}: {{solution-end}} without a {{solution-start}}")
                open_solution = None
                continue
            if open_solution is not None and text.strip():
                open_solution.explanation = (open_solution.explanation + "\n\n" + text).strip()
            continue
        if cell.cell_type != "code":
            continue
        if "exercise-setup" in tags:
            setup.append(text)
        elif "solution" in tags or "check" in tags:
            if open_solution is None:
                raise ExerciseFormatError(
                    f"{path}: a cell tagged {'solution' if 'solution' in tags else 'check'} lies outside a "
                    f"{{solution-start}} … {{solution-end}} block:\n{text[:200]}")
            (open_solution.solution_cells if "solution" in tags else open_solution.check_cells).append(text)
    if open_solution is not None:
        raise ExerciseFormatError(f"{path}: exercise {open_solution.label!r} has no {{solution-end}}")
    for ex in exercises:
        if ex.kind in ("by-hand", "coding") and not ex.check_cells:
            raise ExerciseFormatError(f"{path}: {ex.kind} exercise {ex.label!r} has no cell tagged 'check'")
        if ex.check_cells and not ex.solution_cells:
            raise ExerciseFormatError(f"{path}: exercise {ex.label!r} has checks but no cell tagged 'solution'")
    return ChapterExercises(chapter=chapter_id, title=chapter.title, setup_cells=setup, exercises=exercises)


def without_solutions(notebook_json: str) -> str:
    """An executed chapter notebook (JSON text) with every gated solution cut out: the ``{solution-start}``
    cell, the explanation, the solution and check cells with their outputs, and the ``{solution-end}`` cell; and
    without papermill's notebook metadata (which can hold the executed input notebook)."""
    import nbformat

    nb = nbformat.reads(notebook_json, as_version=4)
    kept, inside = [], False
    for cell in nb.cells:
        text = cell.source if cell.cell_type == "markdown" else ""
        start = _SOLUTION_START.search(text)
        if start:
            inside = not _SOLUTION_END.search(text, start.end())
            continue
        if _SOLUTION_END.search(text):
            inside = False
            continue
        if not inside:
            kept.append(cell)
    if inside:
        raise ExerciseFormatError("a {solution-start} has no {solution-end}")
    nb.cells = kept
    # papermill's record of the run: its "input_path" held the whole input notebook, solutions included, when a
    # notebook object (not a path) was executed; the student edition keeps none of it
    nb.metadata.pop("papermill", None)
    return nbformat.writes(nb)
