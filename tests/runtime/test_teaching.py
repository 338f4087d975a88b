"""The teaching edition (issue #15): exercises read from a chapter, stubs, self-check questions, student notebooks
written and graded with otter-grader.

The otter round trip runs on a miniature exercise section (``exercises_fixture.py``); the chapters' own
exercises are checked the same way in ``tests/notebooks/test_exercises.py``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from medeval.runtime import grading, teachers_page, teaching
from medeval.runtime.exercises import read_chapter_source
from medeval.runtime.grading import GradingError, grade_notebook
from medeval.runtime.teaching import (
    ExerciseFormatError,
    notebook_markdown,
    read_exercises,
    stub,
    validate_self_check,
    without_solutions,
    write_student_notebooks,
)

FIXTURE = Path(__file__).with_name("exercises_fixture.py")
CHAPTER = "03-eve"  # the fixture stands in for this chapter's source


def test_the_fixture_is_read_as_four_exercises():
    ex = read_exercises(CHAPTER, FIXTURE)
    assert [(e.label, e.kind) for e in ex.exercises] == [
        ("ex-eve-hand", "by-hand"), ("ex-eve-code", "coding"), ("ex-eve-experiment", "experimental"),
        ("ex-eve-critical", "critical")]
    assert [e.points for e in ex.exercises] == [1, 2, 1, 2]
    assert [e.autograded for e in ex.exercises] == [True, True, True, False]
    assert ex.exercises[0].explanation == "Three of four pairs are ordered: 0.75."
    assert ex.exercises[3].explanation == "Model answer here."
    assert "import numpy as np" in ex.setup_cells[0]
    assert "roc_auc" not in ex.setup_cells[0]  # the setup does not hand out the function to be implemented


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace(":label: ex-eve-hand\n", ""), "needs a ':label: ex-"),
    (lambda s: s.replace(":class: by-hand", ":class: homework"), "expected one of by-hand, coding"),
    (lambda s: s.replace("{solution-start} ex-eve-code", "{solution-start} ex-eve-other"), "does not follow"),
    (lambda s: s.replace('# %% tags=["remove-cell", "check"]\nfrom medeval.metrics.curves import roc_auc\n\n'
                         'assert np.isclose(ex_hand_auc',
                         '# %% tags=["remove-cell"]\nfrom medeval.metrics.curves import roc_auc\n\n'
                         'assert np.isclose(ex_hand_auc'), "has no cell tagged 'check'"),
    (lambda s: s.replace("# ```{solution-end}\n# ```\n\n# %% [markdown]\n# ```{exercise} AUC in code",
                         "# %% [markdown]\n# ```{exercise} AUC in code", 1), "has no {solution-end}"),
])
def test_broken_markup_is_refused_with_the_exercise_named(tmp_path, edit, message):
    broken = tmp_path / "broken.py"
    broken.write_text(edit(FIXTURE.read_text()))
    assert broken.read_text() != FIXTURE.read_text()
    with pytest.raises(ExerciseFormatError, match=message.replace("(", r"\(").replace("{", r"\{")):
        read_exercises(CHAPTER, broken)


def test_a_check_outside_a_solution_is_refused(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(FIXTURE.read_text() + '\n# %% tags=["check"]\nassert True\n')
    with pytest.raises(ExerciseFormatError, match="outside a"):
        read_exercises(CHAPTER, broken)


def test_stub_keeps_the_interface_and_drops_the_work():
    solution = '''import numpy as np
from math import sqrt

def ex_norm(x, *, p=2):
    """The p-norm of x."""
    return float(np.sum(np.abs(x) ** p) ** (1 / p))

ex_value = ex_norm([3, 4])
ex_a, ex_b = 1, 2
ex_total: float = ex_a + ex_b
print(ex_value)
ex_value
'''
    student = stub(solution)
    tree = ast.parse(student)
    assert "import numpy as np" in student and "from math import sqrt" in student
    assert "def ex_norm(x, *, p=2):" in student and '"""The p-norm of x."""' in student
    assert "np.sum" not in student and "print" not in student
    ns: dict = {}
    exec(compile(tree, "stub", "exec"), ns)
    assert ns["ex_norm"]([3, 4]) is None
    assert ns["ex_value"] is Ellipsis and ns["ex_a"] is Ellipsis and ns["ex_b"] is Ellipsis
    assert ns["ex_total"] is Ellipsis


def test_stub_of_a_function_without_docstring_is_callable():
    ns: dict = {}
    exec(stub("def f(a):\n    return a + 1\n"), ns)
    assert ns["f"](1) is None


def test_book_markup_becomes_plain_notebook_markdown():
    text = ("See {eq}`eq-eve-eve`, {func}`~medeval.metrics.curves.roc_auc`, {func}`medeval.metrics.x.f`, "
            "{ref}`the drawstring <eve-drawstring>`, {ref}`eve-method`, {cite:t}`mendelson2014eve` and {math}`x^2`.")
    out = notebook_markdown(text)
    assert "{" not in out
    assert "Eq. (eq-eve-eve)" in out and "`roc_auc`" in out and "`medeval.metrics.x.f`" in out
    assert "*the drawstring*" in out and "$x^2$" in out and "[mendelson2014eve]" in out
    block = notebook_markdown("```{math}\n:label: eq-a\nx = 1\n```")
    assert block == "$$\nx = 1\n$$"


MC = {"question": "Which is $x$?", "type": "multiple_choice",
      "answers": [{"answer": "a", "correct": True, "feedback": "yes"}, {"answer": "b", "correct": False, "feedback": "no"}]}
NUM = {"question": "How much?", "type": "numeric", "precision": 3,
       "answers": [{"type": "value", "value": 0.5, "correct": True, "feedback": "yes"},
                   {"type": "default", "feedback": "think again"}]}


def test_valid_self_check_questions_pass_and_math_is_delimited_for_mathjax():
    ready = validate_self_check([MC, NUM])
    assert ready[0]["question"] == "Which is \\(x\\)?"
    assert ready[1] == NUM


@pytest.mark.parametrize("question, message", [
    ({**MC, "answers": [{**a, "correct": True} for a in MC["answers"]]}, "exactly one correct answer"),
    ({**MC, "answers": [{**MC["answers"][0], "feedback": ""}, MC["answers"][1]]}, "has no feedback"),
    ({**NUM, "answers": NUM["answers"][:1]}, "'default' answer"),
    ({**NUM, "answers": [{"type": "range", "range": [0, 1], "correct": True, "feedback": "x"},
                         NUM["answers"][1]]}, "exactly one correct 'value' answer"),
    ({**MC, "type": "essay"}, "expected 'multiple_choice' or 'numeric'"),
    ({**MC, "question": " "}, "has no question text"),
])
def test_invalid_self_check_questions_are_refused_by_number(question, message):
    with pytest.raises(ValueError, match=f"self-check question 2 .*{message}"):
        validate_self_check([MC, question])


def test_the_student_edition_of_a_page_has_no_solution_cells():
    import jupytext

    nb = jupytext.read(FIXTURE)
    stripped = nbformat.reads(without_solutions(nbformat.writes(nb)), as_version=4)
    text = "\n".join(c.source for c in stripped.cells)
    assert "solution" not in text and "Three of four pairs" not in text and "Model answer" not in text
    assert "ex_hand_auc = 3 / 4" not in text and "assert" not in text
    assert text.count("{exercise}") == 4


# ---------------------------------------------------------------------------------------------------------------
# otter round trip on the fixture

@pytest.fixture(scope="module")
def material(tmp_path_factory):
    out = tmp_path_factory.mktemp("teaching")
    [m] = write_student_notebooks([CHAPTER], out, sources={CHAPTER: FIXTURE})
    return m


def _grade(path, material):
    return grade_notebook(path, teacher_dir=material.teacher_notebook.parent, source=FIXTURE)


def _scores(report):
    return {g.label: g.score for g in report.grades}


@pytest.mark.slow
def test_student_notebook_has_stubs_checks_and_no_solution(material):
    nb = nbformat.read(material.student_notebook, as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert nb.metadata["medeval"] == {"chapter": CHAPTER, "version": "student"}
    assert "ex_hand_auc = ...  # Your code here." in text and "3 / 4" not in text
    assert "np.mean((pos" not in text and "Model answer" not in text
    for label in ("ex-eve-hand", "ex-eve-code", "ex-eve-experiment"):
        assert f'grader.check("{label}")' in text
    assert sorted(p.name for p in (material.student_notebook.parent / "tests").glob("*.py")) == [
        "ex-eve-code.py", "ex-eve-experiment.py", "ex-eve-hand.py"]


@pytest.mark.slow
def test_the_teacher_version_gets_full_marks(material):
    report = _grade(material.teacher_notebook, material)
    assert _scores(report) == {"ex-eve-hand": 1, "ex-eve-code": 2, "ex-eve-experiment": 1, "ex-eve-critical": None}
    assert report.score == report.possible == 4
    assert all(not g.problems for g in report.grades)


@pytest.mark.slow
def test_the_untouched_student_notebook_fails_every_check(material):
    report = _grade(material.student_notebook, material)
    assert _scores(report) == {"ex-eve-hand": 0, "ex-eve-code": 0, "ex-eve-experiment": 0, "ex-eve-critical": None}
    assert report.possible == 4
    code = next(g for g in report.grades if g.label == "ex-eve-code")
    assert len(code.problems) == 2 and all(p.startswith("check ") for p in code.problems)


def _filled(material, tmp_path, answers: dict[str, str], name="filled.ipynb"):
    nb = nbformat.read(material.student_notebook, as_version=4)
    for cell in nb.cells:
        for start, source in answers.items():
            if cell.cell_type == "code" and start in cell.source and "grader." not in cell.source:
                cell.source = source
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
def test_a_partly_solved_notebook_gets_partial_credit(material, tmp_path):
    path = _filled(material, tmp_path, {
        "ex_hand_auc": "ex_hand_auc = 0.75",
        # right on one check (no ties), wrong on the other (ties count 0 instead of 1/2)
        "def ex_auc": "def ex_auc(y, s):\n    import numpy as np\n    y, s = np.asarray(y), np.asarray(s)\n"
                      "    return float(np.mean(s[y == 1][:, None] > s[y == 0][None, :]))",
    })
    report = _grade(path, material)
    assert _scores(report) == {"ex-eve-hand": 1, "ex-eve-code": 1, "ex-eve-experiment": 0, "ex-eve-critical": None}
    assert 0 < report.score < report.possible


@pytest.mark.slow
def test_a_notebook_that_raises_is_graded_and_the_exercise_named(material, tmp_path):
    path = _filled(material, tmp_path, {"ex_hand_auc": "ex_hand_auc = 3 / 0",
                                        "ex_shifted_auc": "ex_shifted_auc = 1.0"})
    report = _grade(path, material)
    hand = next(g for g in report.grades if g.label == "ex-eve-hand")
    assert hand.score == 0
    assert any("your code raised ZeroDivisionError: division by zero" in p for p in hand.problems)
    assert not any("Traceback" in p for g in report.grades for p in g.problems)
    assert _scores(report)["ex-eve-experiment"] == 1  # the exercises after the error are still graded


@pytest.mark.slow
def test_a_solution_that_fails_its_own_check_is_refused(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(FIXTURE.read_text().replace("ex_hand_auc = 3 / 4", "ex_hand_auc = 2 / 4"))
    with pytest.raises(RuntimeError, match="(?s)Some autograder tests failed.*ex-eve-hand.*not the AUC"):
        write_student_notebooks([CHAPTER], tmp_path / "out", sources={CHAPTER: bad})
    assert not (tmp_path / "out" / "student").exists()


def test_grading_refuses_what_is_not_a_student_notebook(tmp_path):
    with pytest.raises(GradingError, match="no such notebook"):
        grade_notebook(tmp_path / "missing.ipynb")
    (tmp_path / "text.ipynb").write_text("not json")
    with pytest.raises(GradingError, match="not a readable Jupyter notebook"):
        grade_notebook(tmp_path / "text.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "plain.ipynb")
    with pytest.raises(GradingError, match="carries no medeval chapter"):
        grade_notebook(tmp_path / "plain.ipynb")


def test_cli_grade_names_the_problem_without_a_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "medeval.cli", "grade", str(tmp_path / "missing.ipynb")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "medeval: error:" in proc.stderr and "no such notebook" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_report_text_and_json():
    report = grading.GradeReport(Path("x.ipynb"), CHAPTER, [
        grading.ExerciseGrade("ex-a", "coding", "A", 2, 1.0, ["check 2 failed: AssertionError: no"]),
        grading.ExerciseGrade("ex-b", "critical", "B", 2, None)])
    text = report.to_text()
    assert "1 / 2" in text and "read by the teacher" in text and "check 2 failed" in text
    assert "automatic checks: 1 / 2 points" in text
    assert json.loads(json.dumps(report.to_dict()))["score"] == 1


def test_for_teachers_page_states_measured_times_and_never_estimates_a_gpu_time():
    from medeval.runtime.params import chapters

    timings = {"03-eve": {"smoke": {"wall_time_s": 12.0, "device": "CPU: test"},
                          "default": {"wall_time_s": 95.0, "device": "CPU: test"},
                          "gpu": {"wall_time_s": 30.0, "device": "GPU: test"}}}
    page = teachers_markdown = teaching.teachers_markdown(timings=timings)
    row = next(line for line in page.splitlines() if line.startswith("| 3. {ref}`ch-eve`"))
    assert "12 s / 1.6 min" in row and "30 s (GPU: test)" in row
    other = next(line for line in page.splitlines() if line.startswith("| 2. {ref}`ch-rodeo`"))
    assert other.endswith("not measured / not measured | not measured |")
    assert "no GPU time is estimated" in teachers_markdown
    registry = chapters()
    for cid, ch in registry.items():
        if ch.part == "chapters":
            objectives = teachers_page._section(read_chapter_source(ch.notebook), "What you will learn")
            assert objectives and objectives in page, cid
    plain = teaching.teachers_markdown(timings=timings, built={"03-eve"})
    assert "{ref}" not in plain and "{eq}" not in plain


def test_for_teachers_page_shows_the_semester_template():
    """Issue #34 item 6: the page shows the weeks of ``teaching/course.yaml`` in order, each with its in-class and
    homework part, every exercise with its estimated minutes, the assessment weights and the rubrics; 04b's
    objectives stop before its "What we reproduce" paragraph."""
    from medeval.runtime.course import load_course

    course = load_course()
    page = teaching.teachers_markdown(timings={})
    week_rows = [line for line in page.splitlines() if line.startswith("| ") and "<br>" in line]
    assert [int(r.split("|")[1]) for r in week_rows] == [w.week for w in course.weeks]
    for week, row in zip(course.weeks, week_rows, strict=True):
        for label in week.in_class.exercises + week.homework.exercises:
            assert f"{{ref}}`{label} <{label}>` ({course.plan_of(label).minutes} min)" in row
        assert week.in_class.activity in row and week.homework.activity in row
    for item in course.assessment:
        assert f"| {item.item} | {item.counts} | {item.weight:g} % |" in page
    assert course.rubrics["critical"][0].criterion in page
    objectives = page.split("## Learning objectives")[1].split("## Prerequisites")[0]
    assert "What we reproduce" not in objectives
    assert "Time to run" not in page.split("## Prerequisites")[1]


def test_quiz_answers_are_shuffled_the_same_way_on_every_build():
    from medeval.runtime.teaching import shuffled_answers

    q = {**MC, "answers": [{"answer": str(i), "correct": i == 0, "feedback": "f"} for i in range(4)]}
    orders = {tuple(a["answer"] for a in shuffled_answers([{**q, "question": f"Question {k}?"}])[0]["answers"])
              for k in range(12)}
    assert len(orders) > 1  # the permutation depends on the question
    assert shuffled_answers([q]) == shuffled_answers([q])  # and on nothing else
    assert sorted(a["answer"] for a in shuffled_answers([q])[0]["answers"]) == ["0", "1", "2", "3"]
    assert shuffled_answers([NUM]) == [NUM]


def test_the_chapters_correct_quiz_answers_are_not_mostly_first():
    """Issue #34: 14 of the 24 multiple-choice answers were the first option."""


    from medeval.runtime.params import chapters
    from medeval.runtime.quiz import load_quiz
    from medeval.runtime.teaching import shuffled_answers

    positions = []
    for cid in chapters():
        positions += [[bool(a.get("correct")) for a in q["answers"]].index(True)
                      for q in shuffled_answers(load_quiz(cid)) if q["type"] == "multiple_choice"]
    assert len(positions) >= 20
    assert positions.count(0) <= len(positions) / 3, positions


def test_the_self_check_waits_for_mathjax_before_drawing(monkeypatch):
    """The quiz script calls jupyterquiz's try_show only through medevalWhenMathJaxReady."""
    import IPython.display

    from medeval.runtime import notebook

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs: shown.extend(objs))
    notebook.self_check([MC, NUM])
    [script] = [o for o in shown if isinstance(o, IPython.display.Javascript)]
    assert "medevalWhenMathJaxReady(try_show);" in script.data
    assert "\n  try_show();\n" not in script.data


@pytest.mark.skipif(not __import__("shutil").which("node"), reason="needs node to run the page's JavaScript")
def test_the_mathjax_wait_runs_after_mathjax_starts_and_without_mathjax(tmp_path):
    from medeval.runtime.quiz import _WAIT_FOR_MATHJAX

    script = _WAIT_FOR_MATHJAX + """
var log = [];
globalThis.document = {readyState: "complete"};
// 1. the book's page: window.MathJax is the configuration until the MathJax script has loaded
globalThis.window = {MathJax: {tex: {inlineMath: [["\\\\(", "\\\\)"]]}}};
medevalWhenMathJaxReady(function () { log.push("book:" + (window.MathJax.typeset ? "typeset" : "none")); });
setTimeout(function () {
  log.push("loaded");
  window.MathJax = {typeset: function () {}, startup: {promise: Promise.resolve()}};
}, 350);
// 2. a notebook without MathJax: at once
setTimeout(function () {
  globalThis.window = {};
  medevalWhenMathJaxReady(function () { log.push("plain"); });
  setTimeout(function () { console.log(JSON.stringify(log)); }, 50);
}, 700);
"""
    path = tmp_path / "wait.js"
    path.write_text(script)
    out = subprocess.run(["node", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["loaded", "book:typeset", "plain"]


def test_a_numbered_chapter_reference_reads_as_its_book_number_in_a_student_notebook():
    from medeval.runtime.chapter_tables import chapter_numbers
    from medeval.runtime.teaching import notebook_markdown

    assert {"ch-mil": 1, "ch-rodeo": 2, "ch-eve": 3, "ch-cd": 4, "ch-em": 5, "ch-ml": 6}.items() <= chapter_numbers().items()
    text = notebook_markdown("as {numref}`Chapter %s <ch-ml>` shows; see {numref}`Chapter %s <ch-none>`")
    assert text == "as *Chapter 6* shows; see *Chapter*"


def test_reading_time_counts_the_prose_of_the_reading_path_only():
    import nbformat

    from medeval.runtime.execution import _timing_note
    from medeval.runtime.teaching import reading_time

    v4 = nbformat.v4
    nb = v4.new_notebook(cells=[
        v4.new_markdown_cell("(ch-x)=\n# A title of four\n\nThe text has $x^2 + y$ six words here."),
        v4.new_code_cell("print('code is not read')"),
        v4.new_markdown_cell("## Method\n\n$$\na = b\n$$\n\n```{note}\nTwo words\n```"),
        v4.new_markdown_cell("## Exercises\n\nnot on the path at all"),
        v4.new_markdown_cell("more exercise text"),
        v4.new_markdown_cell("## Paper vs us\n\nback on path"),
        # a section opened by a label line, or in the middle of a cell, is cut where the book's pages cut it
        v4.new_markdown_cell("(ch-x-checks)=\n## Checks\n\noff the path"),
        v4.new_markdown_cell("## Provenance\n\noff\n\n## Deviations and errata\n\nstill off"),
        # an experiment whose cell is tagged for the "More experiments" page is off the path too
        v4.new_markdown_cell("## An ablation\n\nnot read here", metadata={"tags": ["further"]}),
        v4.new_markdown_cell("its other words neither"),
    ])
    got = reading_time(nb, words_per_minute=5)
    # "A title of four" 4 + "The text has six words here" 6 + "Method" 1 + "Two words" 2 + "Paper vs us back on path" 6
    assert got == {"minutes": 4, "words": 19, "words_per_minute": 5}
    meta = {"profile": "smoke", "wall_time_s": 3.0, "key": "k" * 64, "chapter": "03-eve", "reading": got}
    note = _timing_note(meta, {"provenance": {"device": "CPU: test"}}).source
    assert "Reading time: about **4 min** (19 words at 5 a minute" in note and "executed with the **smoke**" in note


def _nb(*cells):
    import json

    return json.dumps({"cells": list(cells), "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
                       "nbformat_minor": 5})


def _md(source, tags=()):
    return {"cell_type": "markdown", "metadata": {"tags": list(tags)} if tags else {}, "source": source}


def test_a_chapter_is_cut_into_its_page_and_sub_pages_and_its_method_parts_are_folded():
    import json

    from medeval.runtime.book import split_chapter_notebook

    code = {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": 1}
    pages = split_chapter_notebook(_nb(
        _md("# Title\n\n## Key findings\n\nkf"),
        _md("## Method\n\nIntro stays open.\n\n### Scores\n\n$$\na\n$$ (eq-a)\n\nImplemented by f."),
        _md("The Scores part runs on into this cell.\n\n(lab-b)=\n### Curves\n\n:::{note}\nn\n:::"),
        code,
        _md("## An experiment\n\ntext"),
        _md("## An ablation\n\nmoved", tags=["further"]),
        code,
        _md("## Paper vs us\n\nrows"),
        _md("## Exercises\n\nex"),
        _md("## Checks\n\nc"),
    ), "chapters/01-x", "Chapter title")
    assert set(pages) == {"", "further", "exercises", "reference"}
    main = [c["source"] for c in json.loads(pages[""])["cells"]]
    method = next(c for c in main if c.startswith("## Method"))
    # the intro stays open; each "### " part is a dropdown (a colon fence longer than any inside), and a part that
    # ran on into the next cell is in its dropdown; a label above a heading stays above its dropdown
    assert method.startswith("## Method\n\nIntro stays open.\n\n::::{dropdown} Scores\n")
    assert "Implemented by f.\n\nThe Scores part runs on into this cell.\n::::\n" in method
    assert "(lab-b)=\n::::{dropdown} Curves\n\n:::{note}\nn\n:::\n::::" in method
    assert "### " not in method
    assert not any("An ablation" in c for c in main) and any(c.startswith("## An experiment") for c in main)
    assert main[-1].startswith("## Going further") and "</chapters/01-x/further>" in main[-1]
    assert main[-1].index("further") < main[-1].index("exercises") < main[-1].index("reference")
    further = json.loads(pages["further"])["cells"]
    assert further[0]["source"].startswith("# More experiments") and further[1]["source"] == "## An ablation\n\nmoved"
    assert further[2]["cell_type"] == "code"  # the experiment's cells go with it, outputs and all
    # sections not folded elsewhere: an experiment's "### " stays a heading
    assert split_chapter_notebook(_nb(_md("## Exp\n\n### Sub\n\ntext")), "c/x", "t").keys() == {""}
    assert "### Sub" in json.loads(split_chapter_notebook(_nb(_md("## Exp\n\n### Sub\n\nt")), "c/x", "t")[""])[
        "cells"][0]["source"]


def test_a_chapter_s_quiz_is_data_and_a_missing_or_malformed_file_is_refused_naming_it(tmp_path, monkeypatch):
    from medeval.runtime import quiz

    assert [q["type"] for q in quiz.load_quiz("03-eve")]  # every chapter's file validates (test_exercises too)
    monkeypatch.setattr(quiz, "quiz_path", lambda cid: tmp_path / f"{cid}.yaml")
    with pytest.raises(FileNotFoundError, match="09-none.yaml"):
        quiz.load_quiz("09-none")
    (tmp_path / "09-bad.yaml").write_text("question: not a list\n")
    with pytest.raises(ValueError, match="09-bad.yaml: expected a list"):
        quiz.load_quiz("09-bad")
    (tmp_path / "09-worse.yaml").write_text("- {question: 'Q?', type: essay, answers: []}\n")
    with pytest.raises(ValueError, match="09-worse.yaml"):
        quiz.load_quiz("09-worse")
