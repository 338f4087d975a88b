"""The answers a teacher reads: collected from handed-in student notebooks into one HTML page.

A student notebook written by ``medeval student`` has a markdown answer cell under every teacher-read question:
the part of a by-hand or coding exercise asked in words (``<label>-written``), the interpretation of an experimental
exercise (``<label>-interpretation``) and the critical essay (``<label>``). Each such question's read-only prompt
cell carries :data:`medeval.runtime.student_notebooks.ANSWER_MARKER`, and otter closes the question with an ``<!-- END
QUESTION -->`` comment, so the answer is whatever the student wrote between the two. :func:`answers_html` puts,
per student, each answer beside the model answer (the chapter's solution text) and the rubric of
``teaching/course.yaml``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

_PLACEHOLDER = "_Type your answer here, replacing this text._"  # what otter assign puts in an answer cell
_END = "<!-- END QUESTION -->"


class AnswersError(ValueError):
    """A folder or notebook cannot be read for answers."""


@dataclass
class WrittenAnswer:
    """One teacher-read answer of one student notebook."""

    name: str  # the otter question: ``ex-…``, ``ex-…-written`` or ``ex-…-interpretation``
    exercise: str  # the exercise's label
    kind: str  # ``written``, ``interpretation`` or ``critical`` (the rubric that applies)
    prompt: str
    answer: str  # empty when the student left the answer cell as handed out


def _split_name(name: str) -> tuple[str, str]:
    for suffix in ("written", "interpretation"):
        if name.endswith(f"-{suffix}"):
            return name[: -len(suffix) - 1], suffix
    return name, "critical"


def written_answers(notebook: Path) -> tuple[str, list[WrittenAnswer]]:
    """The chapter of a handed-in student notebook and its teacher-read answers, in notebook order.

    The answer of a question is the text of the cells between its prompt (the cell with the answer marker) and the
    end of the question (otter's ``<!-- END QUESTION -->``), otter's placeholder removed; a student may have added
    cells. Raises :class:`AnswersError` naming the file when it is not a medeval student notebook.
    """
    import nbformat

    from medeval.runtime.student_notebooks import _ANSWER_MARKER, notebook_markdown

    notebook = Path(notebook)
    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception as exc:
        raise AnswersError(f"{notebook}: not a readable Jupyter notebook ({exc})") from exc
    meta = nb.metadata.get("medeval", {})
    chapter = meta.get("chapter") if isinstance(meta, dict) else None
    if not chapter:
        raise AnswersError(f"{notebook}: carries no medeval chapter in its metadata; expected a notebook written by "
                           "`medeval student`")
    answers: list[WrittenAnswer] = []
    current: WrittenAnswer | None = None
    parts: list[str] = []
    for cell in nb.cells:
        text = cell.source
        if current is not None:
            if _END in text:
                current.answer = "\n\n".join(parts).strip()
                answers.append(current)
                current = None
            else:
                part = text.replace(_PLACEHOLDER, "").strip()
                if part:
                    parts.append(part if cell.cell_type == "markdown" else f"```python\n{part}\n```")
                continue
        m = _ANSWER_MARKER.search(text) if cell.cell_type == "markdown" else None
        if m:
            exercise, kind = _split_name(m["name"])
            prompt = notebook_markdown(text.replace(m.group(0), "").replace("<!-- BEGIN QUESTION -->", "")
                                       .replace(_END, "")).strip()
            current, parts = WrittenAnswer(m["name"], exercise, kind, prompt, ""), []
    if current is not None:  # the last question's end marker was deleted: keep what follows the prompt
        current.answer = "\n\n".join(parts).strip()
        answers.append(current)
    return chapter, answers


def student_notebooks(folder: Path) -> list[Path]:
    """The ``.ipynb`` files under a folder of handed-in notebooks (hidden folders such as Jupyter's
    ``.ipynb_checkpoints`` left out), sorted by path."""
    folder = Path(folder)
    if not folder.is_dir():
        raise AnswersError(f"{folder}: no such folder of handed-in notebooks")
    found = sorted(p for p in folder.rglob("*.ipynb")
                   if not any(part.startswith(".") for part in p.relative_to(folder).parts))
    if not found:
        raise AnswersError(f"{folder}: holds no .ipynb notebook")
    return found


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 110em; }
table { border-collapse: collapse; width: 100%; margin-bottom: 2em; }
th, td { border: 1px solid #bbb; padding: .5em; vertical-align: top; text-align: left; width: 33%; }
th { background: #eee; }
.missing { color: #a00; font-style: italic; }
.rubric { border-top: 1px dashed #999; margin-top: .8em; padding-top: .4em; }
h2 { border-bottom: 2px solid #333; margin-top: 2em; }
"""


def _markdown_html(text: str) -> str:
    """Markdown as HTML, with raw HTML in the text escaped (a student's answer is shown, never executed)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def answers_html(notebooks: list[Path], *, root: Path | None = None, course=None,
                 sources: dict[str, Path] | None = None) -> str:
    """One HTML page: per student notebook, a table with each teacher-read answer beside the model answer (the
    chapter's solution text, from the chapter's source) and the rubric of its kind (from ``teaching/course.yaml``).

    Every notebook is read first, so a notebook that is not a student notebook is refused before anything is
    written. ``root`` (the folder of handed-in notebooks) shortens the names shown; ``sources`` replaces a
    chapter's source (a draft, or a test's fixture) where the model answers are read.
    """
    from medeval.runtime.course import load_course
    from medeval.runtime.exercises import read_exercises
    from medeval.runtime.student_notebooks import notebook_markdown

    course = course if course is not None else load_course(check=False)
    read = [(Path(p), *written_answers(Path(p))) for p in notebooks]
    exercises = {chapter: read_exercises(chapter, (sources or {}).get(chapter)) for _, chapter, _ in read}
    rubrics = {kind: "<div class='rubric'><b>Rubric</b><ul>" + "".join(
        f"<li>{c.points:g} — {html.escape(c.criterion)}</li>" for c in criteria) + "</ul></div>"
        for kind, criteria in course.rubrics.items()}
    sections = []
    for path, chapter, answers in read:
        name = path.relative_to(root) if root is not None else path
        rows = []
        for a in answers:
            try:
                model = notebook_markdown(exercises[chapter].by_label(a.exercise).explanation)
            except KeyError:
                model = ""
            student = (_markdown_html(a.answer) if a.answer
                       else "<p class='missing'>(no answer: the cell is as handed out)</p>")
            rows.append(f"<tr><td><b>{html.escape(a.name)}</b> ({a.kind})\n{_markdown_html(a.prompt)}</td>"
                        f"<td>{student}</td><td>{_markdown_html(model or '(no model answer)')}"
                        f"{rubrics.get(a.kind, '')}</td></tr>")
        body = ("<table><tr><th>Question</th><th>Answer</th><th>Model answer and rubric</th></tr>\n"
                + "\n".join(rows) + "</table>") if rows else (
            "<p class='missing'>No answer cells found: was this notebook written by an older "
            "<code>medeval student</code>?</p>")
        sections.append(f"<h2>{html.escape(str(name))} — {html.escape(chapter)}</h2>\n{body}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Written answers</title>"
            f"<style>{_STYLE}</style></head><body>\n<h1>Written answers ({len(read)} notebooks)</h1>\n"
            + "\n".join(sections) + "\n</body></html>\n")


def write_answers(folder: Path, out: Path) -> Path:
    """Collect the teacher-read answers of every notebook under ``folder`` into the HTML page ``out``."""
    from medeval.runtime.paths import atomic_write_text

    folder, out = Path(folder), Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise AnswersError(f"--out {out}: expected a file name ending in .html")
    if not out.parent.is_dir():
        raise AnswersError(f"--out {out}: the folder {out.parent} does not exist")
    page = answers_html(student_notebooks(folder), root=folder)
    atomic_write_text(out, page)
    return out
