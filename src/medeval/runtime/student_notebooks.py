"""Student notebooks: a chapter's exercises as an otter-grader master notebook, then ``otter assign``.

From the exercises of a chapter (:func:`medeval.runtime.exercises.read_exercises`) this module writes an
otter-grader *master notebook* (otter's own format, :func:`master_notebook`) and runs ``otter assign`` on it
(:func:`write_student_notebooks`), which gives the student notebook (solutions replaced by stubs, :func:`stub`; a
``grader.check`` cell after each exercise) and the teacher's autograder (solutions, test files and a zip for
``otter run``). Only one check per exercise (:func:`public_check_index`) reaches the student's ``tests/`` folder; the
others are otter *hidden* tests, and ``medeval.runtime.grading`` stores every check with its expected values as
constants in the teacher folder and grades handed-in notebooks in isolation.
"""

from __future__ import annotations

import ast
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from medeval.runtime.exercises import ChapterExercises, Exercise, ExerciseFormatError, read_exercises


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


_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<text>[^`]*)`")


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
