"""``medeval new-chapter``: a new chapter from the template passes its own tests as generated, and the chapter
tables of README.md and book/intro.md are generated from the registry (issue #18, item 6)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from medeval.runtime.params import (
    TABLE_MARKERS,
    ParameterError,
    chapter_tables,
    chapters,
    stale_chapter_tables,
)
from medeval.runtime.paths import project_root
from medeval.runtime.scaffold import module_name, new_chapter

ROOT = project_root()
COPIED = ("src", "params", "notebooks", "data", "book", "data_manifest.yaml", "pyproject.toml", "README.md")


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
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "_build", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    (dest / "tests").mkdir()
    shutil.copy2(ROOT / "tests" / "conftest.py", dest / "tests" / "conftest.py")
    return dest


@pytest.mark.slow
@pytest.mark.notebook
def test_a_scaffolded_chapter_passes_its_tests_as_generated(tmp_path):
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
            "tests/experiments/test_scaffold_check.py"} == written
    assert "| `09-scaffold-check` |" in (project / "README.md").read_text()
    assert "{ref}`7 <ch-scaffold-check>`" in (project / "book/intro.md").read_text()

    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "--rootdir", str(project),
         "-c", str(project / "pyproject.toml"), "tests/notebooks/test_09-scaffold-check.py",
         "tests/experiments/test_scaffold_check.py"], env=env, cwd=project, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert "5 passed" in tests.stdout, tests.stdout[-2000:]

    refused = subprocess.run([sys.executable, "-m", "medeval.cli", "run", "09-scaffold-check", "--set",
                              "n_repeats=2"], env=env, cwd=project, capture_output=True, text=True)
    assert refused.returncode == 2 and "n_repeats * alpha / 2 >= 1" in refused.stderr, refused.stderr
