"""The student kit (issue #34): students install medeval from a wheel and run their notebooks with ``MEDEVAL_ROOT``
pointing at the kit's ``params/`` and ``data/``, without the repository and its solutions. The README's recipe,
run offline in a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from medeval.runtime.kit import KitError, solutions_in, write_student_kit

CHAPTER = "A1-data"  # its exercises read the shipped ChestX-ray14 table through MEDEVAL_ROOT


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return write_student_kit([CHAPTER], tmp_path_factory.mktemp("kit") / "kit", run_tests=False)


def test_the_kit_holds_what_students_need_and_no_solution(kit):
    names = sorted(p.name for p in kit.iterdir())
    assert names == sorted([CHAPTER, "README.md", "data", "data_manifest.yaml", "params",
                            next(p.name for p in kit.glob("medeval-*.whl"))])
    assert (kit / CHAPTER / f"{CHAPTER}.ipynb").is_file() and (kit / CHAPTER / "tests").is_dir()
    assert not list(kit.rglob("notebooks")) and not list(kit.rglob("teacher"))
    assert solutions_in(kit, [CHAPTER]) == []
    readme = (kit / "README.md").read_text()
    assert "MEDEVAL_ROOT" in readme and "pip install ./medeval-" in readme


def test_the_solution_check_finds_a_solution_left_in_the_kit(kit, tmp_path):
    from medeval.runtime.teaching import read_exercises

    leaked = tmp_path / "leaked"
    leaked.mkdir()
    nb = nbformat.read(kit / CHAPTER / f"{CHAPTER}.ipynb", as_version=4)
    code = read_exercises(CHAPTER).by_label("ex-data-code").solution_cells[0]
    nb.cells.append(nbformat.v4.new_code_cell(code))
    nbformat.write(nb, leaked / "handed.ipynb")
    assert solutions_in(leaked, [CHAPTER]) == ["handed.ipynb: ex-data-code"]


def test_a_kit_is_written_only_into_a_new_folder(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "x.txt").write_text("x")
    with pytest.raises(KitError, match="exists and is not an empty folder"):
        write_student_kit([CHAPTER], tmp_path / "old")
    with pytest.raises(KitError, match="unknown chapter"):
        write_student_kit(["99-none"], tmp_path / "new")
    assert not (tmp_path / "new").exists()


@pytest.mark.slow
def test_the_student_notebook_runs_from_the_installed_wheel_without_the_repository(kit, tmp_path):
    """pip installs the kit's wheel (offline, into a folder: the dependencies are this environment's) and the
    untouched student notebook runs with MEDEVAL_ROOT=kit: medeval is the wheel's copy, not this checkout."""
    site = tmp_path / "site"
    wheel = next(kit.glob("medeval-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
                    str(site), str(wheel)], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(site), "MEDEVAL_ROOT": str(kit)}
    where = subprocess.run([sys.executable, "-c", "import medeval, medeval.runtime.paths as p; "
                            "print(medeval.__file__); print(p.project_root())"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert Path(where[0]).is_relative_to(site) and Path(where[1]) == kit
    run = f"""
import nbformat
from nbclient import NotebookClient
nb = nbformat.read({str(kit / CHAPTER / f"{CHAPTER}.ipynb")!r}, as_version=4)
NotebookClient(nb, timeout=300, kernel_name="python3", resources={{"metadata": {{"path": {str(kit / CHAPTER)!r}}}}}).execute()
errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
print("errors", len(errors), [e.get("ename") for e in errors])
"""
    out = subprocess.run([sys.executable, "-c", run], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "errors 0 []" in out.stdout
