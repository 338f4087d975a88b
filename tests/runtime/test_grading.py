"""Grading that cheating cannot pass and a hostile notebook cannot hang (issue #34, items 2-3).

The students are played on the miniature exercise section (``exercises_fixture.py``): an honest student who gets
the formulas wrong sets the bar, and every cheater must score at most that, or be flagged, and finish within its
timeout.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from medeval.runtime import grading
from medeval.runtime.grading import GradingError, grade_folder, grade_notebook, hidden_checks, suspicious_code
from medeval.runtime.teaching import read_exercises, write_student_notebooks

FIXTURE = Path(__file__).with_name("exercises_fixture.py")
CHAPTER = "03-eve"  # the fixture stands in for this chapter's source

pytestmark = pytest.mark.slow

RIGHT = {
    "ex_hand_auc": "ex_hand_auc = 0.75",
    "def ex_auc": "def ex_auc(y, s):\n    import numpy as np\n    y, s = np.asarray(y), np.asarray(s)\n"
                  "    pos, neg = s[y == 1], s[y == 0]\n"
                  "    return float(np.mean((pos[:, None] > neg) + 0.5 * (pos[:, None] == neg)))",
    "ex_shifted_auc": "ex_shifted_auc = 1.0",
}
HONEST_WRONG = {
    "ex_hand_auc": "ex_hand_auc = 0.5",
    # ties count 0 instead of 1/2: right on the check without ties
    "def ex_auc": "def ex_auc(y, s):\n    import numpy as np\n    y, s = np.asarray(y), np.asarray(s)\n"
                  "    return float(np.mean(s[y == 1][:, None] > s[y == 0][None, :]))",
    "ex_shifted_auc": "ex_shifted_auc = 0.9",
}
WRONG_CODE = HONEST_WRONG["def ex_auc"]


@pytest.fixture(scope="module")
def material(tmp_path_factory):
    out = tmp_path_factory.mktemp("teaching")
    [m] = write_student_notebooks([CHAPTER], out, sources={CHAPTER: FIXTURE}, run_tests=False)
    return m


def _filled(material, tmp_path, answers: dict[str, str], name="filled.ipynb", extra: list[str] = ()):
    """The student notebook with the answer cells (found by a name they hold) replaced, and extra cells
    inserted before the first ``grader.check``."""
    nb = nbformat.read(material.student_notebook, as_version=4)
    for key, source in answers.items():
        [cell] = [c for c in nb.cells if c.cell_type == "code" and key.split()[-1] in c.source
                  and "grader." not in c.source]
        cell.source = source
    first_check = next(i for i, c in enumerate(nb.cells) if "grader.check(" in c.source)
    for offset, source in enumerate(extra):
        nb.cells.insert(first_check + offset, nbformat.v4.new_code_cell(source))
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _grade(path, material, **options):
    return grade_notebook(path, teacher_dir=material.teacher_notebook.parent, source=FIXTURE, **options)


def _scores(report):
    return {g.label: g.score for g in report.grades}


@pytest.fixture(scope="module")
def honest_wrong_score(material, tmp_path_factory):
    report = _grade(_filled(material, tmp_path_factory.mktemp("honest"), HONEST_WRONG), material)
    assert _scores(report) == {"ex-eve-hand": 0, "ex-eve-code": 1, "ex-eve-experiment": 0, "ex-eve-critical": None}
    assert not report.flags and report.stopped is None
    return report.score


def test_the_student_gets_one_public_check_and_the_teacher_keeps_the_rest_as_constants(material):
    student_tests = material.student_notebook.parent / "tests"
    code = (student_tests / "ex-eve-code.py").read_text()
    assert "ex_auc([0, 1], [0.2, 0.9])" in code  # the public sanity check
    assert "0.5, 0.5, 0.1, 0.9" not in code  # the graded case is not handed out
    assert "0.5, 0.5, 0.1, 0.9" in (material.teacher_notebook.parent / "tests" / "ex-eve-code.py").read_text()
    stored = json.loads((material.teacher_notebook.parent / grading.HIDDEN_CHECKS_FILE).read_text())
    [tie_case] = [c for c in stored["exercises"]["ex-eve-code"] if c["number"] == 2]
    assert not tie_case["public"]
    assert tie_case["conditions"][0]["sides"][1] == {"constant": {"array": 0.875, "shape": []}}
    assert "roc_auc" not in tie_case["grading_code"].split("\n", 1)[1]  # the kernel never calls the reference
    assert tie_case["reference_names"] == ["roc_auc"]


def test_checks_split_into_the_students_side_and_a_reference_side():
    checks = hidden_checks(read_exercises(CHAPTER, FIXTURE))
    hand = checks["ex-eve-hand"][0].conditions[0]
    assert hand.kind == "isclose" and "probe" in hand.sides[0] and "reference" in hand.sides[1]
    assert hand.message == "not the AUC"
    [experiment] = checks["ex-eve-experiment"][0].conditions
    assert experiment.kind == "equal" and "reference" in experiment.sides[1]


def test_the_teacher_version_gets_full_marks_and_the_stub_nothing(material):
    teacher = _grade(material.teacher_notebook, material)
    assert teacher.score == teacher.possible == 4 and not teacher.flags, teacher.to_text()
    student = _grade(material.student_notebook, material)
    assert student.score == 0 and not student.flags, student.to_text()
    assert all("not answered yet" in p for g in student.grades for p in g.problems)


def test_failure_messages_give_no_expected_value(material, tmp_path, honest_wrong_score):
    report = _grade(_filled(material, tmp_path, HONEST_WRONG), material)
    text = report.to_text()
    assert "check 2 failed" in text and "0.875" not in text and "0.75" not in text
    assert "Traceback" not in text and "Failed example" not in text


CHEATERS = {
    "delegates to the reference": (
        {**HONEST_WRONG, "ex_hand_auc": "from medeval.metrics.curves import roc_auc\n"
                                        "ex_hand_auc = roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])",
         "def ex_auc": "def ex_auc(y, s):\n    from medeval.metrics import curves\n    return curves.roc_auc(y, s)"},
        [], "uses roc_auc, the reference implementation"),
    "redefines the reference": (
        {**HONEST_WRONG, "def ex_auc": "def ex_auc(y, s):\n    return 0.0"},
        ["roc_auc = lambda *a, **k: 0.0\nex_hand_auc = 0.0"], "uses roc_auc"),
    "patches np.isclose": (
        HONEST_WRONG, ["np.isclose = lambda *a, **k: True\nnp.allclose = lambda *a, **k: True"],
        "assigns to np.isclose"),
    "patches otter": (
        HONEST_WRONG, ["import otter\notter.Notebook.check = lambda self, *a, **k: None"], "imports otter"),
    "rewrites the tests": (
        HONEST_WRONG, ["import pathlib\nfor p in pathlib.Path('.').glob('tests/*.py'):\n"
                       "    p.write_text('OK_FORMAT = True\\ntest = {\"name\": p.stem, \"points\": 1, \"suites\": []}')\n"
                       "import os\nos.chmod(TEACHER_CHECKS, 0o644)\nopen(TEACHER_CHECKS, 'w').write('{}')"],
        "names a tests folder"),
}


@pytest.mark.parametrize("cheater", CHEATERS)
def test_a_cheater_scores_no_more_than_an_honest_wrong_answer_or_is_flagged(material, tmp_path, cheater,
                                                                             honest_wrong_score):
    answers, extra, flag = CHEATERS[cheater]
    hidden = material.teacher_notebook.parent / grading.HIDDEN_CHECKS_FILE
    digest = hashlib.sha256(hidden.read_bytes()).hexdigest()
    # the cheater knows where the teacher keeps the constants
    extra = [code.replace("TEACHER_CHECKS", repr(str(hidden))) for code in extra]
    report = _grade(_filled(material, tmp_path, answers, extra=extra), material)
    assert any(flag in f for f in report.flags), report.to_text()
    assert report.stopped is None
    if cheater != "delegates to the reference":  # delegation is right by construction: the flag is what counts
        assert report.score <= honest_wrong_score, report.to_text()
    assert hashlib.sha256(hidden.read_bytes()).hexdigest() == digest  # the teacher's constants are untouched


def test_a_dying_kernel_still_reports_the_exercises_graded_before_it(material, tmp_path):
    path = _filled(material, tmp_path, {**RIGHT, "ex_shifted_auc": "import os\nos._exit(1)"})
    report = _grade(path, material)
    assert "the kernel died" in report.stopped
    assert _scores(report) == {"ex-eve-hand": 1, "ex-eve-code": 2, "ex-eve-experiment": 0, "ex-eve-critical": None}
    assert "stopped early" in report.to_text()


@pytest.mark.parametrize("code, reason", [
    ("import otter", "imports otter"),
    ("from otter.check import notebook", "imports otter"),
    ("import numpy\nnumpy.testing.assert_allclose = print", "assigns to numpy.testing.assert_allclose"),
    ("import medeval.metrics.curves as c\nc.roc_auc = max", "assigns to c.roc_auc"),
    ("setattr(x, 'y', 1)", "calls setattr"),
    ("open('tests/ex-a.py', 'w')", "names a tests folder"),
    ("__builtins__.print = None", "assigns to __builtins__.print"),
    ("from medeval.metrics.curves import roc_auc as r", "uses r, the reference"),
])
def test_suspicious_code_is_flagged_with_the_reason(code, reason):
    assert any(reason in f for f in suspicious_code(code, reference_names={"roc_auc", "r"}))


@pytest.mark.parametrize("code", [
    "import numpy as np\nx = np.zeros(3)\nx[0] = 1",
    "def f(y):\n    y.attr = 1\n    return y",
    "ex_auc = 0.5  # tests pass",
])
def test_fair_code_is_not_flagged(code):
    assert suspicious_code(code, reference_names={"roc_auc"}) == []


def test_a_class_folder_gives_one_csv_row_per_student_with_teacher_scores_merged(material, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    _filled(material, folder, RIGHT, name="ada.ipynb")
    _filled(material, folder, HONEST_WRONG, name="bob.ipynb", extra=["import otter"])
    (folder / "broken.ipynb").write_text("not json")
    reports = grade_folder(folder, teacher_dir=material.teacher_notebook.parent, source=FIXTURE)
    scores = tmp_path / "teacher.csv"
    scores.write_text("student,exercise,score\nada,ex-eve-critical,2\nbob,ex-eve-critical,1\n")
    table = list(csv.DictReader(io.StringIO(grading.reports_csv(reports, grading.read_teacher_scores(scores)))))
    by_student = {row["student"]: row for row in table}
    assert set(by_student) == {"ada", "bob", "broken"}
    assert by_student["ada"]["automatic"] == "4" and by_student["ada"]["total"] == "6"
    assert by_student["ada"]["possible"] == "6" and by_student["ada"]["ex-eve-critical"] == "2"
    assert by_student["bob"]["total"] == "2" and "imports otter" in by_student["bob"]["flags"]
    assert "not a readable" in by_student["broken"]["stopped"]


def test_cli_grades_a_folder_as_csv(material, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    _filled(material, folder, RIGHT, name="ada.ipynb")
    proc = subprocess.run([sys.executable, "-m", "medeval.cli", "grade", str(folder), "--csv", "--teacher",
                           str(material.teacher_notebook.parent), "--cell-timeout", "60"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    [row] = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert row["student"] == "ada" and row["ex-eve-code"] == "2"


@pytest.mark.parametrize("args, message", [
    (["--timeout", "0"], "timeout must be a positive number of seconds"),
    (["--teacher-scores", "x.csv"], "add --csv"),
])
def test_cli_refuses_bad_grading_options_before_running_anything(tmp_path, args, message):
    nbformat.write(nbformat.v4.new_notebook(metadata={"medeval": {"chapter": CHAPTER}}), tmp_path / "a.ipynb")
    proc = subprocess.run([sys.executable, "-m", "medeval.cli", "grade", str(tmp_path / "a.ipynb"), *args],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_teacher_scores_with_a_bad_value_are_refused_by_line(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("student,exercise,score\nada,ex-a,two\n")
    with pytest.raises(GradingError, match="line 2: score 'two' is not a number"):
        grading.read_teacher_scores(bad)
    bad.write_text("name,score\n")
    with pytest.raises(GradingError, match="columns student, exercise, score"):
        grading.read_teacher_scores(bad)


def test_the_public_check_prints_one_line_and_no_log(material, capsys):
    code = (material.student_notebook.parent / "tests" / "ex-eve-hand.py").read_text()
    assert "public_check(" in code and "0.75" not in code
    check = read_exercises(CHAPTER, FIXTURE).by_label("ex-eve-hand").check_cells[0]
    import numpy as np

    grading.public_check(check, {"np": np, "ex_hand_auc": 0.5})
    assert capsys.readouterr().out == "✗ not the AUC\n"
    grading.public_check(check, {"np": np, "ex_hand_auc": ...})
    assert capsys.readouterr().out.startswith("✗ your code raised not answered yet (TypeError")
    grading.public_check(check, {"np": np, "ex_hand_auc": 0.75})
    assert capsys.readouterr().out == ""


def test_a_computed_message_keeps_its_text_but_not_its_values():
    [check] = grading._split_check("ex-a", 1, 'assert ex_a == 1, f"expected {2 * 3:.2f}, got {ex_a}"', {"ex_a"},
                                   True).conditions
    assert check.message == "expected …, got …"


def test_a_forged_probe_line_or_malformed_values_do_not_count(material, tmp_path, honest_wrong_score):
    forged = ("import glob, json\nfor p in glob.glob('../*.jsonl'):\n"
              "    open(p, 'a').write(json.dumps({'cell': 0, 'probe': [json.dumps({'label': 'ex-eve-hand', "
              "'values': {'ex-eve-hand/1/0/0': {'array': 0.75, 'shape': []}}, 'errors': {}})]}) + '\\n')\n"
              "print('@@medeval-probe@@' + json.dumps({'label': 'ex-eve-code', 'values': {'ex-eve-code/1/0/0': "
              "{'array': [1, 2], 'shape': [5]}}, 'errors': {}}))")
    report = _grade(_filled(material, tmp_path, HONEST_WRONG, extra=[forged]), material)
    assert report.score <= honest_wrong_score, report.to_text()


def test_without_a_teacher_folder_the_constants_are_computed_from_the_solutions(material, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    _filled(material, folder, RIGHT, name="ada.ipynb")
    _filled(material, folder, HONEST_WRONG, name="bob.ipynb")
    reports = grade_folder(folder, source=FIXTURE, chapter=CHAPTER)
    assert [(r.notebook.stem, r.score) for r in reports] == [("ada", 4), ("bob", 1)]
    single = grade_notebook(folder / "ada.ipynb", source=FIXTURE)
    assert single.score == single.possible == 4


def test_a_notebook_without_its_check_cells_is_still_graded(material, tmp_path):
    path = _filled(material, tmp_path, RIGHT)
    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if "grader." not in c.source and "otter" not in c.source]
    nbformat.write(nb, path)
    report = _grade(path, material)
    assert report.score == report.possible == 4, report.to_text()


# the sleeping gradings (started with the module, see sleeping_gradings): last, so that their 20 s of waiting
# overlap the tests above
@pytest.fixture(scope="module", autouse=True)
def sleeping_gradings(request, material, tmp_path_factory):
    """The two gradings of a notebook whose experiment cell sleeps, started together when the module starts (each
    waits out its timeout in a subprocess, while the module's other tests run) and read by its last two tests:
    ``{"cell": future, "whole": future}``; nothing is started when neither of those tests was selected."""
    from concurrent.futures import ThreadPoolExecutor

    if not any(item.module is request.module and "sleeping_gradings" in item.fixturenames
               and item.originalname in SLEEPING_TESTS for item in request.session.items):
        yield {}
        return

    path = _filled(material, tmp_path_factory.mktemp("sleeping"),
                   {**RIGHT, "ex_shifted_auc": "import time\ntime.sleep(600)"})
    with ThreadPoolExecutor(max_workers=2) as pool:
        # 20 s: ten times what any other cell of the fixture takes on a slow, loaded machine, so only the sleeping
        # cell can meet it (with 2 s, a slow import in the setup cell would stop the run early and fail the test)
        yield {"cell": pool.submit(_grade, path, material, cell_timeout=20),
               "whole": pool.submit(_grade, path, material, cell_timeout=600, timeout=8)}


SLEEPING_TESTS = ("test_a_sleeping_cell_is_stopped_by_the_cell_timeout_and_earlier_exercises_keep_their_score",
                  "test_a_notebook_past_the_whole_timeout_is_killed")


def test_a_sleeping_cell_is_stopped_by_the_cell_timeout_and_earlier_exercises_keep_their_score(sleeping_gradings):
    report = sleeping_gradings["cell"].result()
    assert "ran past the 20-s cell timeout" in report.stopped
    assert _scores(report) == {"ex-eve-hand": 1, "ex-eve-code": 2, "ex-eve-experiment": 0, "ex-eve-critical": None}
    experiment = next(g for g in report.grades if g.label == "ex-eve-experiment")
    assert any("not graded" in p and "timeout" in p for p in experiment.problems)


def test_a_notebook_past_the_whole_timeout_is_killed(sleeping_gradings):
    report = sleeping_gradings["whole"].result()
    assert "ran past the 8-s timeout" in report.stopped
    assert _scores(report)["ex-eve-experiment"] == 0
