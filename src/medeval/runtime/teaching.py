"""The teaching edition: exercises read from a chapter, student notebooks, and grading with otter-grader.

A chapter's ``## Exercises`` section is written with sphinx-exercise's directives, so the book shows each prompt
and a collapsed solution. Every exercise is one prompt cell (an ``{exercise}`` directive with ``:label:`` and
``:class:`` one of :data:`KINDS`), then a gated solution: a ``{solution-start}`` cell, code cells tagged
``solution``, code cells tagged ``check`` (each one graded test case: plain ``assert`` statements) and a
``{solution-end}`` cell. A code cell tagged ``exercise-setup`` holds the imports the exercises need.

From that section this module writes an otter-grader *master notebook* (otter's own format) and runs
``otter assign`` on it, which gives the student notebook (solutions replaced by stubs, a ``grader.check`` cell
after each exercise) and the teacher's autograder (solutions, test files and a zip for ``otter run``).
Only one check per exercise (:func:`public_check_index`) reaches the student's ``tests/`` folder; the others are
otter *hidden* tests, and ``medeval.runtime.grading`` stores every check with its expected values as constants in
the teacher folder and grades handed-in notebooks in isolation.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
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


def read_exercises(chapter_id: str, source: Path | None = None) -> ChapterExercises:
    """Read the exercises of a chapter from its jupytext source.

    Raises :class:`ExerciseFormatError` naming the file, the exercise and what is expected when the markup is
    incomplete: an exercise without a label or with an unknown kind, a solution for another label, solution or
    check cells outside a solution, a coding exercise without checks.
    """
    import jupytext

    from medeval.runtime.params import chapters

    chapter = chapters()[chapter_id]
    path = Path(source) if source is not None else chapter.notebook
    nb = jupytext.read(path)
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


def stub(solution: str) -> str:
    """The student's version of a solution cell.

    Imports are kept; every top-level function keeps its signature and docstring and gets ``...`` as body;
    every top-level assignment becomes ``name = ...``; every other statement is dropped. A line
    ``# Your code here.`` marks where the work goes.
    """
    tree = ast.parse(solution)
    lines = solution.split("\n")
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append("\n".join(lines[node.lineno - 1:node.end_lineno]))
        elif isinstance(node, ast.FunctionDef):
            first_body = node.body[0]
            head_end = first_body.lineno - 1
            if node.decorator_list:
                start = node.decorator_list[0].lineno - 1
            else:
                start = node.lineno - 1
            header = lines[start:head_end]
            indent = re.match(r"\s*", lines[first_body.lineno - 1]).group(0) or "    "
            doc = ast.get_docstring(node, clean=False)
            body = lines[first_body.lineno - 1:first_body.end_lineno] if doc is not None else []
            out.append("\n".join([*header, *body, f"{indent}# Your code here.", f"{indent}..."]))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [ast.unparse(n) for t in targets for n in (t.elts if isinstance(t, ast.Tuple | ast.List) else [t])]
            out.append("\n".join(f"{name} = ...  # Your code here." for name in dict.fromkeys(names)))
    return "\n\n".join(out) if out else "# Your code here."


# --------------------------------------------------------------------------------------------------------------
# Self-check questions (rendered by jupyterquiz, offline: the questions are embedded in the page)

_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")


def validate_self_check(questions: list[dict]) -> list[dict]:
    """Check self-check questions in jupyterquiz's format and return them ready to embed.

    Every question has text and a type (``multiple_choice`` or ``numeric``); every answer has feedback; a
    multiple-choice question has exactly one correct answer; a numeric question has exactly one correct
    ``value`` answer and a ``default`` answer (the feedback for anything else). Inline ``$…$`` math becomes
    ``\\(…\\)``, the delimiters the book's MathJax reads. Raises ``ValueError`` naming the question.
    """
    if not isinstance(questions, list) or not questions:
        raise ValueError("self-check: expected a non-empty list of questions")
    ready = []
    for i, q in enumerate(questions, start=1):
        where = f"self-check question {i} ({str(q.get('question', ''))[:60]!r})"
        if not str(q.get("question", "")).strip():
            raise ValueError(f"{where}: has no question text")
        answers = q.get("answers") or []
        if not answers:
            raise ValueError(f"{where}: has no answers")
        for a in answers:
            if not str(a.get("feedback", "")).strip():
                raise ValueError(f"{where}: answer {a.get('answer', a.get('value', a.get('type')))!r} has no feedback")
        if q.get("type") == "multiple_choice":
            if sum(bool(a.get("correct")) for a in answers) != 1:
                raise ValueError(f"{where}: a multiple-choice question needs exactly one correct answer")
            if any(not str(a.get("answer", "")).strip() for a in answers):
                raise ValueError(f"{where}: an answer has no text")
        elif q.get("type") == "numeric":
            values = [a for a in answers if a.get("type") == "value" and a.get("correct")]
            if len(values) != 1 or not isinstance(values[0].get("value"), int | float):
                raise ValueError(f"{where}: a numeric question needs exactly one correct 'value' answer")
            if not any(a.get("type") == "default" for a in answers):
                raise ValueError(f"{where}: a numeric question needs a 'default' answer with feedback")
            if not isinstance(q.get("precision", 0), int):
                raise ValueError(f"{where}: 'precision' must be an integer number of significant digits")
        else:
            raise ValueError(f"{where}: type {q.get('type')!r}; expected 'multiple_choice' or 'numeric'")
        ready.append(json.loads(_INLINE_MATH.sub(r"\\\\(\1\\\\)", json.dumps(q))))
    return ready


def shuffled_answers(questions: list[dict]) -> list[dict]:
    """Multiple-choice questions with their answers in a shuffled order that is the same on every build.

    Each question's permutation is drawn from a generator seeded with the SHA-256 of its text, so the correct
    answer is not always where the author wrote it (first, mostly) and a page does not change between builds.
    Numeric questions are returned as they are.
    """
    import hashlib

    import numpy as np

    out = []
    for q in questions:
        if q.get("type") == "multiple_choice":
            seed = int.from_bytes(hashlib.sha256(str(q["question"]).encode()).digest()[:8], "little")
            order = np.random.default_rng(seed).permutation(len(q["answers"]))
            q = {**q, "answers": [q["answers"][i] for i in order]}
        out.append(q)
    return out


# --------------------------------------------------------------------------------------------------------------
# Student notebooks: an otter-grader master notebook, then ``otter assign``

_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<text>[^`]*)`")


#: a reader's pace through the chapters' technical prose, in words a minute (what :func:`reading_time` assumes)
READING_WORDS_PER_MINUTE = 200
#: the sections of a chapter (by the start of their "## " heading) that are not on its reading path, per sub-page of
#: the chapter that holds them in the book: (file stem, title, sections). They are worked on (self-check, exercises)
#: or looked up (checks, errata, provenance); the chapter's page keeps its objectives, key findings, method,
#: experiments and Paper-vs-us table (:func:`medeval.runtime.book.split_chapter_notebook`). The first page holds no
#: section by its title: an experiment goes there when the cell that opens it is tagged :data:`FURTHER_TAG`.
OFF_PATH_PAGES = (
    ("further", "More experiments", ()),
    ("exercises", "Self-check and exercises", ("Self-check", "Exercises", "Try it")),
    ("reference", "Checks, errata and provenance", ("Checks", "Deviations", "Provenance")),
)
#: the cell tag that sends the experiment a cell opens (its "## " section) to the chapter's "More experiments" page:
#: an ablation or a secondary figure a reader may skip; its claims stay in the chapter's Paper-vs-us table
FURTHER_TAG = "further"


_HEADING = re.compile(r"^## (?P<title>.+)$")
_LABEL = re.compile(r"^\(\S+\)=\s*$")


def split_at_headings(cell: dict) -> list[dict]:
    """A notebook cell (a dict) cut before each "## " heading of its source (a "(label)=" line right above stays
    with its heading), so that every piece starts at most one section; a cell without one comes back whole."""
    source = cell["source"]
    lines = ("".join(source) if isinstance(source, list) else str(source)).splitlines(keepends=True)
    starts = [0]
    for i, line in enumerate(lines):
        if i and _HEADING.match(line.rstrip("\n")):
            start = i - 1 if _LABEL.match(lines[i - 1]) else i
            if start > starts[-1]:
                starts.append(start)
    if len(starts) == 1:
        return [cell]
    pieces = []
    for a, b in zip(starts, starts[1:] + [len(lines)], strict=True):
        text = "".join(lines[a:b])
        if text.strip():
            pieces.append({**cell, "source": text, "metadata": dict(cell.get("metadata", {}))})
    return pieces


def section_title(source) -> str | None:
    """The title of the "## " section a cell's source opens (after blank and "(label)=" lines), else None."""
    for line in ("".join(source) if isinstance(source, list) else str(source)).splitlines():
        if _LABEL.match(line) or not line.strip():
            continue
        m = _HEADING.match(line)
        return m.group("title").strip() if m else None
    return None


def section_page(piece: dict) -> str | None:
    """The page of the chapter that the section a cell (or a piece of one, :func:`split_at_headings`) opens goes to:
    ``""`` for the chapter's own page, a stem of :data:`OFF_PATH_PAGES` for a sub-page (by the heading's start, or
    ``"further"`` for a cell tagged :data:`FURTHER_TAG`); None when the piece opens no section."""
    heading = section_title(piece["source"])
    if heading is None:
        return None
    if FURTHER_TAG in (piece.get("metadata") or {}).get("tags", []):
        return "further"
    return next((stem for stem, _, prefixes in OFF_PATH_PAGES if heading.startswith(prefixes)), "")


def reading_time(nb, words_per_minute: int = READING_WORDS_PER_MINUTE) -> dict:
    """How long a chapter takes to read: the words of its Markdown cells on the chapter's own page (not on a
    sub-page, :func:`section_page`; math, directive lines and MyST targets not counted; a folded part counts), at
    ``words_per_minute``, rounded up to whole minutes.
    ``nb`` is a notebook (nbformat); returns ``{"minutes", "words", "words_per_minute"}``."""
    words, on_path = 0, True
    pieces = [piece for cell in nb.cells if cell.cell_type == "markdown"  # sections as the book's pages cut them
              for piece in split_at_headings({"source": cell.source, "metadata": dict(cell.get("metadata", {}))})]
    for piece in pieces:
        page = section_page(piece)
        if page is not None:
            on_path = page == ""
        if not on_path:
            continue
        text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", piece["source"], flags=re.S)
        text = "\n".join(line for line in text.splitlines()
                          if not re.match(r"^\s*(`{3,}|:{3,}|\(\S+\)=|:\w+:|%)", line))
        words += len(re.findall(r"[A-Za-zÀ-ÿ0-9¬][\w'’-]*", text))
    return {"minutes": max(1, -(-words // words_per_minute)), "words": words, "words_per_minute": words_per_minute}


def _plain_role(match: re.Match) -> str:
    role, text = match["role"], match["text"]
    shown = re.sub(r"\s*<[^>]*>$", "", text).lstrip("~!") if "<" in text else text.lstrip("~!")
    if role == "math":
        return f"${text}$"
    if role == "eq":
        return f"Eq. ({text}) of the chapter"
    if role in ("func", "class", "meth", "mod", "attr", "data", "obj", "py:func"):
        name = shown if "<" in text else shown.split(".")[-1] if text.startswith("~") else shown
        return f"`{name}`"
    if role.startswith("cite"):
        return f"[{text}]"
    if role == "numref" and "%s" in shown:  # "Chapter %s <ch-ml>": the book's number of that chapter
        label = re.search(r"<([^>]*)>$", text)
        from medeval.runtime.chapter_tables import chapter_numbers

        number = chapter_numbers().get(label.group(1)) if label else None
        return f"*{shown.replace('%s', str(number)) if number else shown.replace(' %s', '').replace('%s', '')}*"
    if role in ("ref", "numref", "doc"):
        return f"*{shown}*" if "<" in text else f"*the chapter's section `{text}`*"
    return f"`{text}`"


def notebook_markdown(text: str) -> str:
    """MyST book text as plain Jupyter markdown: roles become their text, math fences become ``$$…$$``."""
    text = re.sub(r"^\s*`{3,}\{math\}[^\n]*\n(?:\s*:label:[^\n]*\n)?(.*?)^\s*`{3,}\s*$",
                  lambda m: "$$\n" + m.group(1).strip() + "\n$$", text, flags=re.M | re.S)
    return _ROLE.sub(_plain_role, text)


def _prompt_block(stub_code: str) -> str:
    quote = "'''" if '"""' in stub_code else '"""'
    return f"{quote} # BEGIN PROMPT\n{stub_code}\n{quote} # END PROMPT"


def public_check_index(exercise: Exercise) -> int:
    """The index of an exercise's public check: the check cell whose first line is ``# public``, else the first."""
    marked = [i for i, c in enumerate(exercise.check_cells) if c.lstrip().lower().startswith("# public")]
    return marked[0] if marked else 0


ANSWER_MARKER = "<!-- medeval-answer: {name} -->"
"""Written into the (read-only) prompt cell of every teacher-read question, so that :func:`written_answers` finds
the student's answer below it."""

_ANSWER_MARKER = re.compile(r"<!-- medeval-answer: (?P<name>[\w-]+) -->")


def _manual_question(cells: list, name: str, prompt: str, model_answer: str) -> None:
    """Append a teacher-read otter question: its prompt (with :data:`ANSWER_MARKER`) and, as its solution, the
    model answer; ``otter assign`` puts an empty markdown answer cell in its place for the student."""
    import nbformat

    v4 = nbformat.v4
    cells.append(v4.new_raw_cell(f"# BEGIN QUESTION\nname: {name}\npoints: 2\nmanual: true"))
    cells.append(v4.new_markdown_cell(f"{prompt}\n\n{ANSWER_MARKER.format(name=name)}"))
    cells.append(v4.new_raw_cell("# BEGIN SOLUTION"))
    cells.append(v4.new_markdown_cell(notebook_markdown(model_answer) or "(no model answer)"))
    cells.append(v4.new_raw_cell("# END SOLUTION"))
    cells.append(v4.new_raw_cell("# END QUESTION"))


def master_notebook(exercises: ChapterExercises, written: dict[str, str] | None = None):
    """The chapter's exercises as an otter-grader master notebook (otter's assignment format).

    Each exercise is one otter question named by its label: the prompt, the solution in a ``BEGIN SOLUTION NO
    PROMPT`` block followed by the stub (:func:`stub`) as its prompt, and one otter test case per check cell. A
    critical exercise, and the interpretation asked by an experimental one, are manually graded questions whose
    solution is the book's explanation. ``written`` (label → question, from ``teaching/course.yaml``) adds to a
    by-hand or coding exercise a teacher-read question ``<label>-written`` with an answer cell for the part asked in
    words ("why", "prove", "show"). Every teacher-read prompt carries :data:`ANSWER_MARKER`.
    """
    import nbformat

    v4 = nbformat.v4
    written = dict(written or {})
    unknown = sorted(set(written) - {ex.label for ex in exercises.exercises})
    if unknown:
        raise ExerciseFormatError(f"{exercises.chapter}: written parts for unknown exercises {', '.join(unknown)}")
    config = {
        "name": exercises.chapter,
        "init_cell": True, "check_all_cell": False, "export_cell": False, "solutions_pdf": False,
        "generate": {"zips": False},
        "tests": {"files": True, "ok_format": True},
        "run_tests": True,
    }
    import yaml

    cells = [v4.new_raw_cell("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False))]
    cells.append(v4.new_markdown_cell(
        f"# Exercises: {exercises.title}\n\n"
        f"The exercises of the medeval chapter *{exercises.title}* (`{exercises.chapter}`), to do alongside the "
        "chapter in the book. Fill in every cell that holds `...`, then run the `grader.check` cell below it: it "
        "tells you what is still wrong. Exercises marked *read by your teacher* have no automatic check.\n\n"
        "Run the cells in order; the first code cells import what the exercises need."))
    for code in exercises.setup_cells:
        cells.append(v4.new_code_cell(code))
    for number, ex in enumerate(exercises.exercises, start=1):
        graded_by = "checked automatically" if ex.autograded else "read by your teacher"
        heading = f"## Exercise {number} ({ex.kind}, {graded_by}): {notebook_markdown(ex.title)}"
        manual = not ex.autograded
        cells.append(v4.new_raw_cell(
            f"# BEGIN QUESTION\nname: {ex.label}\npoints: {ex.points}\nmanual: {str(manual).lower()}"))
        marker = f"\n\n{ANSWER_MARKER.format(name=ex.label)}" if manual else ""
        cells.append(v4.new_markdown_cell(f"{heading}\n\n{notebook_markdown(ex.prompt)}{marker}"))
        cells.append(v4.new_raw_cell("# BEGIN SOLUTION"))
        if ex.autograded:
            for code in ex.solution_cells:
                cells.append(v4.new_code_cell(
                    f"# BEGIN SOLUTION NO PROMPT\n{code}\n# END SOLUTION\n{_prompt_block(stub(code))}"))
        else:
            cells.append(v4.new_markdown_cell(notebook_markdown(ex.explanation) or "(no model answer)"))
        cells.append(v4.new_raw_cell("# END SOLUTION"))
        if ex.autograded:
            cells.append(v4.new_raw_cell("# BEGIN TESTS"))
            public = public_check_index(ex)
            for index, check in enumerate(ex.check_cells):
                # only the public check reaches the student's tests/ folder; the graded ones stay hidden
                cells.append(v4.new_code_cell(
                    "from medeval.runtime.grading import public_check\n"
                    f"public_check({check!r}, globals())" if index == public else f"# HIDDEN\n{check}"))
            cells.append(v4.new_raw_cell("# END TESTS"))
        cells.append(v4.new_raw_cell("# END QUESTION"))
        if ex.label in written:
            if ex.kind not in ("by-hand", "coding"):
                raise ExerciseFormatError(f"{exercises.chapter}: {ex.label} is {ex.kind}; only a by-hand or coding "
                                          "exercise has a written part")
            _manual_question(cells, f"{ex.label}-written",
                             f"**Exercise {number}, in words (read by your teacher).** {written[ex.label]} "
                             "Answer in the cell below: a short argument, with the equations you use.",
                             ex.explanation)
        if ex.autograded and ex.kind == "experimental":
            _manual_question(cells, f"{ex.label}-interpretation",
                             f"**Exercise {number}, interpretation (read by your teacher).** What does your result "
                             "show? Answer in a few sentences.", ex.explanation)
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["medeval"] = {"chapter": exercises.chapter}
    return nb


@dataclass
class StudentMaterial:
    """What :func:`write_student_notebooks` wrote for one chapter."""

    chapter: str
    student_notebook: Path
    teacher_notebook: Path
    tests_dir: Path


class _Quiet:
    """Send this process's stdout and stderr, file descriptors included (the kernels otter starts write to them),
    to a temporary file; ``text`` holds what was written."""

    def __enter__(self):
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile(mode="w+")
        self._saved = [os.dup(1), os.dup(2)]
        os.dup2(self._file.fileno(), 1)
        os.dup2(self._file.fileno(), 2)
        self.text = ""
        return self

    def __exit__(self, *exc):
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self._saved, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        self._file.seek(0)
        self.text = self._file.read()
        self._file.close()
        return False


def _otter_assign(master: Path, result: Path, run_tests: bool) -> None:
    """Run ``otter assign`` quietly; raise with otter's own output when it fails (e.g. a solution fails a check)."""
    import contextlib
    import io
    import logging

    from otter.assign import main as assign

    buffer = io.StringIO()
    logging.getLogger("otter").setLevel(logging.ERROR)
    quiet = _Quiet()
    try:
        with quiet, contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            assign(str(master), str(result), no_pdfs=True, no_run_tests=not run_tests)
    except Exception as exc:  # otter raises plain exceptions with its message, e.g. failing tests
        raise RuntimeError(f"otter assign failed for {master.name}: {exc}\n{buffer.getvalue()[-3000:]}") from exc


def _written_parts(chapter_id: str, exercises: ChapterExercises) -> dict[str, str]:
    """The parts of a chapter's exercises asked in words, from ``teaching/course.yaml`` (for the exercises the
    source at hand has: a draft or a test's fixture may have fewer)."""
    from medeval.runtime.course import load_course

    labels = {ex.label for ex in exercises.exercises}
    return {k: v for k, v in load_course(check=False).written_parts(chapter_id).items() if k in labels}


def write_student_notebooks(chapter_ids: list[str] | None = None, out_dir: Path | None = None, *,
                            run_tests: bool = True, sources: dict[str, Path] | None = None,
                            written: dict[str, dict[str, str]] | None = None) -> list[StudentMaterial]:
    """Write the student and teacher versions of the chapters' exercises.

    ``<out_dir>/student/<chapter>/<chapter>.ipynb`` (solutions replaced by stubs, a check after each exercise, an
    answer cell for each teacher-read part, the check files in ``tests/``) is what students get; ``<out_dir>/teacher/<chapter>/`` holds the solutions
    and the same checks and is what :func:`grade_notebook` grades against. With ``run_tests`` (the default) otter
    executes the teacher version and refuses to write anything if a solution fails its own checks. ``sources``
    replaces a chapter's source file (a draft, or a test's fixture); ``written`` (chapter → label → question)
    replaces the parts asked in words that ``teaching/course.yaml`` lists.
    """
    import nbformat

    from medeval.runtime.params import chapters
    from medeval.runtime.paths import project_root

    known = chapters()
    chapter_ids = list(chapter_ids or known)
    unknown = [c for c in chapter_ids if c not in known]
    if unknown:
        raise ValueError(f"unknown chapter(s) {', '.join(unknown)}; expected some of {', '.join(known)}")
    out_dir = Path(out_dir) if out_dir is not None else project_root() / "_build" / "teaching"
    materials = []
    for cid in chapter_ids:
        exercises = read_exercises(cid, (sources or {}).get(cid))
        if not exercises.exercises:
            raise ExerciseFormatError(f"{known[cid].notebook}: the chapter has no exercises")
        with tempfile.TemporaryDirectory(prefix=f"medeval-assign-{cid}-") as tmp:
            master = Path(tmp) / f"{cid}.ipynb"
            parts = written[cid] if written and cid in written else _written_parts(cid, exercises)
            nbformat.write(master_notebook(exercises, parts), master)
            _otter_assign(master, Path(tmp) / "dist", run_tests)
            for role in ("student", "teacher"):
                target = out_dir / role / cid
                if target.exists():
                    shutil.rmtree(target)
                source = Path(tmp) / "dist" / ("student" if role == "student" else "autograder")
                shutil.copytree(source, target)
        from medeval.runtime.grading import write_hidden_checks

        write_hidden_checks(exercises, out_dir / "teacher" / cid)
        for role in ("student", "teacher"):
            path = out_dir / role / cid / f"{cid}.ipynb"
            nb = nbformat.read(path, as_version=4)
            nb.metadata["medeval"] = {"chapter": cid, "version": role}
            nbformat.write(nb, path)
        materials.append(StudentMaterial(cid, out_dir / "student" / cid / f"{cid}.ipynb",
                                       out_dir / "teacher" / cid / f"{cid}.ipynb", out_dir / "teacher" / cid / "tests"))
    return materials


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


# --------------------------------------------------------------------------------------------------------------
# The "For teachers" page of the book

_MATH_ROLE_EQ = re.compile(r"\{eq\}`([^`]*)`")


def _section(source: str, heading: str) -> str:
    """The text of a ``## heading`` section of a jupytext chapter (up to the next heading of level 1 or 2)."""
    import jupytext

    text = "\n\n".join(c.source for c in jupytext.reads(source, fmt="py:percent").cells if c.cell_type == "markdown")
    m = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^#{{1,2}} |\Z)", text, flags=re.M | re.S)
    if not m:
        return ""
    # a paragraph that opens with its own bold title ("**What we reproduce.** …") is another section run in
    body = re.split(r"^\*\*[^*\n]+\*\*", m.group(1), maxsplit=1, flags=re.M)[0]
    return body.strip()


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "not measured"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def _page_name(chapter_id: str, linked: bool) -> str:
    """A chapter's or appendix's name on the teachers page: a reference to its label, or its plain title."""
    from medeval.runtime.params import chapters

    ch = chapters()[chapter_id]
    if not linked:
        return f"*{ch.title}*"
    m = re.search(r"^# \(((?:ch|app)-[\w-]+)\)=", ch.notebook.read_text(), flags=re.M)
    return f"{{ref}}`{m.group(1)}`" if m else f"*{ch.title}*"


def _exercise_list(labels: list[str], course, linked: bool) -> str:
    if not labels:
        return "—"
    shown = (lambda label: f"{{ref}}`{label} <{label}>`") if linked else (lambda label: f"`{label}`")
    return ", ".join(f"{shown(label)} ({course.plan_of(label).minutes} min)" for label in labels)


def semester_markdown(course, linked: bool = True) -> str:
    """The semester template of the teachers page: one row per week (its chapter sections, the in-class and the
    homework part with the exercises and their estimated minutes), then the assessment weights and the rubrics."""
    rows = []
    for w in course.weeks:
        parts = "; ".join(f"{_page_name(p.chapter, linked)}: {p.sections}" for p in w.parts)
        needs = ", ".join(f"{n} (wk {next(x.week for x in course.weeks if n in x.teaches)})" for n in w.needs)
        homework_min = sum(course.plan_of(label).minutes for label in w.homework.exercises)
        rows.append(f"| {w.week} | **{w.title}**<br>{parts} | {needs or '—'} | {w.in_class.activity}<br>"
                    f"{_exercise_list(w.in_class.exercises, course, linked)} | {w.homework.activity}<br>"
                    f"{_exercise_list(w.homework.exercises, course, linked)} | {homework_min} min |")
    assessment = "\n".join(f"| {a.item} | {a.counts} | {a.weight:g} % |" for a in course.assessment)
    rubric_titles = {"written": "Written answer (a by-hand or coding exercise's part in words)",
                     "interpretation": "Interpretation (the last part of an experimental exercise)",
                     "critical": "Critical essay"}
    rubrics = "\n\n".join(
        f"**{rubric_titles[kind]}**, {sum(c.points for c in criteria):g} points:\n\n"
        + "\n".join(f"* {c.points:g} — {c.criterion}" for c in criteria)
        for kind, criteria in course.rubrics.items())
    total = sum(p.minutes for plans in course.exercises.values() for p in plans.values())
    return f"""## Course plan: a semester of {len(course.weeks)} weeks

One 90-minute class a week and the homework that follows it. A chapter whose exercises take 3–4 hours is spread
over two weeks, and the weeks follow the prerequisites: every concept a week *needs* is taught in that week or an
earlier one (the week is given), which `teaching/course.yaml` records and a test checks. Where two chapters refer
to each other, the part that needs the other comes later (04b's experiments on En and Ep after 04a; 03's
multi-label bridge after 05's measures). The minutes are estimates of a student's working time per exercise
({total / 60:.0f} hours for all of them), not measurements; the homework column adds them up.

| Week | Topic and sections | Needs (taught in week) | In class (90 min) | Homework | Homework time |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

### Assessment

| Part | What it is made of | Weight |
| --- | --- | --- |
{assessment}

### Rubrics for the answers the teacher reads

`medeval answers` collects them from the handed-in notebooks, each beside its model answer and this rubric.

{rubrics}
"""


def teachers_markdown(timings: dict[str, dict[str, dict]] | None = None, built: set[str] | None = None,
                      course=None) -> str:
    """The book's *For teachers* page: the semester template of ``teaching/course.yaml``
    (:mod:`medeval.runtime.course`), every chapter's exercises with measured running times, the prerequisites and learning objectives of
    every chapter (read from the chapters), and how to hand out and grade the exercises.

    Running times come from ``results/timings.json`` (``timings``: chapter → profile → record); a profile that was
    never run on a machine of that kind is shown as not measured, never estimated. When ``built`` names only some
    chapters (``medeval book --only``), links become plain text so that no reference points at a missing page.
    """
    from medeval.runtime.course import load_course
    from medeval.runtime.params import chapters

    registry = chapters()
    course = course if course is not None else load_course()
    linked = built is None or set(registry) <= set(built)
    text_of = (lambda t: t) if linked else notebook_markdown
    if timings is None:
        from medeval.runtime.calibration import recorded_timings

        timings = {cid: recorded_timings(cid) for cid in registry}
    rows, objectives, prerequisites = [], [], []
    numbers = {c: i for i, c in enumerate((c for c, ch in registry.items() if ch.part == "chapters"), start=1)}
    letters = {c: f"{chr(65 + i)}" for i, c in enumerate(c for c, ch in registry.items() if ch.part != "chapters")}
    weeks_of = {cid: [w.week for w in course.weeks if any(p.chapter == cid for p in w.parts)] for cid in registry}
    for cid, ch in registry.items():
        source = ch.notebook.read_text()
        try:
            exercises = read_exercises(cid).exercises
        except ExerciseFormatError:
            exercises = []
        kinds = ", ".join(f"{sum(e.kind == k for e in exercises)} {k}" for k in KINDS
                          if any(e.kind == k for e in exercises)) or "none yet"
        minutes = sum(p.minutes for p in course.exercises.get(cid, {}).values())
        t = timings.get(cid, {})
        cpu = " / ".join(_minutes(t.get(p, {}).get("wall_time_s")) for p in ("smoke", "default"))
        gpu = t.get("gpu")
        gpu_text = f"{_minutes(gpu['wall_time_s'])} ({gpu.get('device', '?')})" if gpu else "not measured"
        name = _page_name(cid, linked)
        number = numbers.get(cid) or letters[cid]
        weeks = ", ".join(str(w) for w in weeks_of[cid]) or "—"
        import jupytext

        reading = reading_time(jupytext.reads(source, fmt="py:percent"))["minutes"]
        rows.append(f"| {number}. {name} | {weeks} | {reading} min | {kinds} | {minutes / 60:.1f} h | {cpu} "
                    f"| {gpu_text} |")
        if ch.part == "chapters":
            objectives.append(f"### {name}\n\n{text_of(_section(source, 'What you will learn'))}")
            prerequisites.append(f"### {name}\n\n{text_of(_section(source, 'Prerequisites'))}")
    cpu_device = next((rec.get("device") for t in timings.values() for p, rec in t.items()
                       if p in ("smoke", "default") and rec.get("device")), "this project's CI machine")
    gpu_note = ("A GPU time is the last recorded run of the `gpu` profile; a chapter never run on a GPU says so, and "
                "no GPU time is estimated." if any("gpu" in t for t in timings.values()) else
                "No chapter has been run on a GPU yet, so no GPU time is given (none is estimated); "
                "`medeval run <chapter> --profile gpu` on a GPU machine records one.")
    return f"""(for-teachers)=
# For teachers

Every chapter is a lesson: its objectives, prerequisites, a *Self-check* of multiple-choice and numeric questions
that answer in the page, and at least four exercises, one of each kind — **by hand** (a metric on a tiny example from
the paper), **coding** (implement the metric and check it against medeval), **experimental** (re-run a piece of the
chapter with another parameter and interpret it) and **critical** (is the paper's claim supported? the chapter's
Paper-vs-us table and figures are the evidence). Solutions are collapsed under each exercise; a student edition of the
book leaves them out entirely. Students work in notebooks that hold the exercises with stubs and a check after each
one, and an answer cell for every part asked in words; `medeval grade` scores a handed-in notebook exercise by
exercise with otter-grader, and `medeval answers` collects the written answers for the teacher.

{semester_markdown(course, linked)}
## Chapters, exercises and running times

| Chapter | Weeks | Reading | Exercises | Student time (estimated) | Time to run on 2 CPU cores (smoke / default) | On a GPU (`gpu` profile) |
| --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

*Reading* is the chapter's text without its self-check, exercises and provenance, at {READING_WORDS_PER_MINUTE} words
a minute (the same figure heads each chapter page). The running times are the last measured runs of the whole
chapter ({cpu_device}), read from `results/timings.json`;
a laptop with more cores is faster. {gpu_note} The exercises of a chapter run in seconds. **In class**, run the
`smoke` profile (seconds; the numbers are too few to decide claims, which the chapter says) or show the book, which
was built with `default`; give `default` runs (`medeval run <chapter>`) as homework, and the `gpu` and `full`
profiles to students with a GPU.

## Handing out and grading

1. `make student` (or `medeval student 03-eve 04b-evaluation-measures`) writes, for each chapter,
   `_build/teaching/student/<chapter>/<chapter>.ipynb` with the exercises, stubs in place of the solutions, a
   `grader.check("…")` cell after each exercise and an answer cell for each part asked in words, and its `tests/`
   folder; hand out that folder. It also writes `_build/teaching/teacher/<chapter>/` (solutions and checks; keep
   it). Before writing anything it executes the teacher version and refuses if a solution fails its own checks.
   Students do not need this repository, which holds every solution: the README's *Teaching* section says how to
   install medeval for them from a wheel, with `params/` and `data/` only.
2. Students open the notebook in JupyterLab (`make lab`; it works as root too) or any Jupyter, fill in the cells
   that hold `...` and the answer cells, and run each `grader.check` cell for feedback.
3. `medeval grade path/to/handed-in.ipynb` executes the notebook in a kernel of its own, in an empty folder, with a
   timeout per cell and per notebook, and scores each exercise against the hidden checks, whose expected values
   were stored as constants when the assignment was made (the student's `tests/` folder holds one public sanity
   check per exercise); `--json` for a gradebook, `medeval grade FOLDER --csv` for a class (with
   `--teacher-scores` to merge the marks given by hand). A cell that raises costs its exercise the points and is
   reported by name; past a timeout or a dying kernel, the exercises before keep their scores. Code that imports
   otter, names a `tests` folder, assigns to a module's attribute or calls the function an exercise is checked
   against is flagged for the teacher.
4. `medeval answers FOLDER --out answers.html` reads every handed-in notebook in a folder and writes one HTML page
   with, per student, each teacher-read answer (the written parts, the interpretations of experimental exercises and
   the critical essays) beside the model answer and the rubric above.
5. `medeval book --no-solutions` builds a student edition of the book (`_build/book/default-student/`) without any
   solution.

## Learning objectives

{chr(10).join(objectives)}

## Prerequisites

{chr(10).join(prerequisites)}

## Licence

The code is MIT-licensed; the text and figures of the book are licensed under
[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/) (`LICENSE-CONTENT`): reuse them in a course, with
attribution. `CITATION.cff` says how to cite the compendium and the five papers it reproduces.
"""


def _short(chapter_id: str) -> str:
    """A chapter's label stem (``ch-<stem>``), as the chapters declare it."""
    from medeval.runtime.params import chapters

    m = re.search(r"^\(ch-([\w-]+)\)=", chapters()[chapter_id].notebook.read_text().replace("# ", ""), flags=re.M)
    if not m:
        raise ExerciseFormatError(f"{chapter_id}: the chapter has no (ch-…)= label")
    return m.group(1)
