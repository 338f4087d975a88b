"""``medeval new-chapter``: a new chapter from the template (``templates/chapter/``, real files) passes its own
tests and every test of the suite that runs per chapter, as generated (issue #32, item 2); the chapter tables of
README.md and book/intro.md are generated from the registry (issue #18, item 6)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from medeval.runtime.chapter_tables import TABLE_MARKERS, chapter_tables, stale_chapter_tables
from medeval.runtime.params import ParameterError, chapters
from medeval.runtime.paths import project_root
from medeval.runtime.scaffold import module_name, new_chapter

ROOT = project_root()
#: what a copy of the project leaves out: the environment, builds and runs, the repository
NOT_COPIED = (".git", ".venv", "_build", "_runs", "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache")
#: the suite's tests that run once per chapter (parametrized over the registry), run on the scaffolded chapter
PER_CHAPTER_TESTS = ("tests/notebooks", "tests/core", "tests/test_layers.py", "tests/test_one_auc.py",
                     "tests/runtime/test_answers.py", "tests/runtime/test_book_style.py",
                     "tests/runtime/test_calibration.py", "tests/runtime/test_course.py",
                     "tests/runtime/test_exercise_badges.py", "tests/runtime/test_examples.py",
                     "tests/runtime/test_param_fuzz.py", "tests/runtime/test_params.py",
                     "tests/runtime/test_reference.py", "tests/runtime/test_teaching.py",
                     "tests/data/test_seeding.py", "tests/data/test_manifest.py")


def test_the_chapter_tables_are_generated_from_the_registry():
    assert stale_chapter_tables() == [], "run `medeval chapters --write-tables`"
    tables = chapter_tables()
    for cid in chapters():
        assert f"| `{cid}` |" in tables["README.md"]
    numbered = [line for line in tables["book/intro.md"].splitlines() if line.startswith("| {ref}")]
    assert len(numbered) == sum(ch.part == "chapters" for ch in chapters().values())


def test_a_hand_edited_table_is_stale(tmp_path, monkeypatch):
    for name in TABLE_MARKERS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / name).read_text()
        (tmp_path / name).write_text(text.replace("| `03-eve` |", "| `03-eve-typo` |").replace(
            "<ch-eve>", "<ch-typo>"))
    assert sorted(stale_chapter_tables(tmp_path)) == sorted(TABLE_MARKERS)


@pytest.mark.parametrize(("chapter_id", "message"), [
    ("6-x", "chapter id"), ("06_bad", "chapter id"), ("03-eve", "exists already"),
])
def test_new_chapter_refuses_bad_or_taken_ids(chapter_id, message, tmp_path):
    with pytest.raises(ParameterError, match=message):
        new_chapter(chapter_id, "A title", root=tmp_path)


def test_module_name_is_the_id_without_its_number():
    assert module_name("06-my-paper") == "my_paper" and module_name("A3-extra") == "extra"


def _project_copy(dest: Path) -> Path:
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(*NOT_COPIED))
    return dest


@pytest.mark.slow
@pytest.mark.notebook
def test_a_scaffolded_chapter_passes_its_tests_and_every_per_chapter_test_as_generated(tmp_path):
    project = _project_copy(tmp_path / "project")
    env = {**os.environ, "MEDEVAL_ROOT": str(project), "PYTHONPATH": str(project / "src"),
           "MEDEVAL_RUNS": str(tmp_path / "runs")}
    made = subprocess.run([sys.executable, "-m", "medeval.cli", "new-chapter", "09-scaffold-check",
                           "--title", "A scaffolded chapter"], env=env, cwd=project, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    written = {line.strip() for line in made.stdout.splitlines()[1:] if line.startswith("  ")}
    assert {"params/09-scaffold-check.yaml", "notebooks/09-scaffold-check.py", "README.md", "book/intro.md",
            "src/medeval/experiments/scaffold_check_params.py", "src/medeval/experiments/scaffold_check.py",
            "src/medeval/experiments/scaffold_check_claims.py", "tests/notebooks/test_09-scaffold-check.py",
            "tests/experiments/test_scaffold_check.py", "teaching/course.yaml",
            "teaching/mutants/09-scaffold-check.yaml", "teaching/quizzes/09-scaffold-check.yaml"} == written
    assert "| `09-scaffold-check` |" in (project / "README.md").read_text()
    assert "{ref}`7 <ch-scaffold-check>`" in (project / "book/intro.md").read_text()
    assert "template" not in "".join((project / p).read_text() for p in written if p.endswith((".py", ".yaml")))

    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "--rootdir", str(project),
         "-c", str(project / "pyproject.toml"), "tests/experiments/test_scaffold_check.py", *PER_CHAPTER_TESTS,
         "-k", "09-scaffold-check or scaffold_check or course_file_is_sound or every_exercise_of_every_chapter or "
         "every_coding_exercise_of_every_chapter", "-rA"], env=env, cwd=project, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    passed = set(re.findall(r"^PASSED (\S+)", tests.stdout, flags=re.M))
    for expected in ("tests/notebooks/test_09-scaffold-check.py::test_scaffold_check_smoke",
                     "tests/core/test_chapter_protocol.py::test_every_chapter_follows_the_protocol[09-scaffold-check]",
                     "tests/notebooks/test_exercises.py::test_chapter_has_four_exercises_of_the_four_kinds[09-scaffold-check]",
                     "tests/notebooks/test_exercises.py::test_untouched_student_notebook_scores_zero_on_every_check"
                     "[09-scaffold-check]",
                     "tests/runtime/test_course.py::test_the_course_file_is_sound",
                     "tests/test_layers.py::test_notebooks_import_experiments_plots_and_the_runtime_only[09-scaffold-check]"):
        assert expected in passed, (expected, tests.stdout[-3000:])
    assert len(passed) >= 25, tests.stdout[-2000:]

    refused = subprocess.run([sys.executable, "-m", "medeval.cli", "run", "09-scaffold-check", "--set",
                              "n_repeats=2"], env=env, cwd=project, capture_output=True, text=True)
    assert refused.returncode == 2 and "n_repeats * alpha / 2 >= 1" in refused.stderr, refused.stderr


TEMPLATE = ROOT / "templates" / "chapter"


def test_the_template_is_real_files_that_ruff_jupytext_and_the_layer_test_read():
    import jupytext

    from tests.test_layers import ALLOWED, medeval_imports

    ruff = Path(sys.executable).with_name("ruff")
    linted = subprocess.run([str(ruff), "check", str(TEMPLATE)], cwd=ROOT, capture_output=True, text=True)
    assert linted.returncode == 0, linted.stdout[-2000:]
    notebook = jupytext.read(TEMPLATE / "notebooks" / "00-template-chapter.py")
    tags = {t for c in notebook.cells for t in c.metadata.get("tags", [])}
    assert {"parameters", "exercise-setup", "solution", "check"} <= tags
    experiments = sorted((TEMPLATE / "src" / "medeval" / "experiments").glob("*.py"))
    assert len(experiments) == 3
    for path in experiments:
        module = f"medeval.experiments.{path.stem}"
        bad = [m for _, m in medeval_imports(path, module) if not any(
            m == a or m.startswith(a + ".") for a in ALLOWED["experiments"])]
        assert bad == [], (path.name, bad)


def test_the_template_s_claims_follow_the_protocol():
    """The template's modules, imported under their placeholder names, satisfy :func:`protocol_problems`."""
    import importlib.util

    from medeval.core.chapter import protocol_problems

    loaded = {}
    for stem in ("template_chapter_params", "template_chapter", "template_chapter_claims"):
        spec = importlib.util.spec_from_file_location(f"medeval.experiments.{stem}",
                                                      TEMPLATE / "src/medeval/experiments" / f"{stem}.py")
        loaded[stem] = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded[stem]
        try:
            spec.loader.exec_module(loaded[stem])
        except Exception:
            del sys.modules[spec.name]
            raise
    try:
        assert protocol_problems(loaded["template_chapter"], loaded["template_chapter_claims"]) == []
    finally:
        for stem in loaded:
            sys.modules.pop(f"medeval.experiments.{stem}", None)
