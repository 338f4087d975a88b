"""A student kit: what students get instead of this repository, which holds every solution.

The kit holds medeval as a wheel, the files it reads at run time (``params/``, ``data/``, ``data_manifest.yaml``,
found through ``MEDEVAL_ROOT``), each chosen chapter's student folder from
:func:`medeval.runtime.student_notebooks.write_student_notebooks` (the notebook with stubs and its ``tests/``), and a
``README.md`` with the install steps.
It holds no chapter source (``notebooks/``), no teacher folder and no solution, which :func:`write_student_kit`
checks before it returns.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KIT_README = """# medeval exercises: {chapters}

This folder holds the exercises of a course built on the medeval compendium: one folder per chapter, each with a
notebook to fill in and the checks it runs (`tests/`), and the medeval package it uses ({wheel}) with the parameter
files and small data tables that package reads (`params/`, `data/`, `data_manifest.yaml`).

Install (Python 3.11; the package's pinned dependencies come from PyPI):

```bash
cd this-folder
python3.11 -m venv .venv
.venv/bin/python -m pip install ./{wheel}
export MEDEVAL_ROOT="$PWD"          # where medeval finds params/, data/ and data_manifest.yaml
.venv/bin/jupyter lab               # then open <chapter>/<chapter>.ipynb
```

On Windows, `py -3.11 -m venv .venv`, `.venv\\Scripts\\python -m pip install .\\{wheel}`,
`set MEDEVAL_ROOT=%CD%` and `.venv\\Scripts\\jupyter lab`.

In each notebook, fill in every cell that holds `...`, run the `grader.check` cell under it for feedback, and write
the parts marked *read by your teacher* in the answer cell below them. Hand in the notebook file.
"""


class KitError(ValueError):
    """A student kit cannot be written where asked."""


def build_wheel(out_dir: Path) -> Path:
    """Build medeval's wheel into ``out_dir`` from a copy of the package source, offline (no build isolation:
    the installed setuptools builds it), so that nothing is written into the repository."""
    from medeval.runtime.paths import project_root

    root = project_root()
    with tempfile.TemporaryDirectory(prefix="medeval-wheel-") as tmp:
        tmp = Path(tmp)
        shutil.copytree(root / "src" / "medeval", tmp / "src" / "medeval",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy(root / name, tmp / name)
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(tmp), "--no-deps", "--no-build-isolation",
                               "--no-index", "-q", "-w", str(out_dir)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building medeval's wheel failed:\n{proc.stderr[-2000:]}")
    wheels = sorted(Path(out_dir).glob("medeval-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"{out_dir}: expected one medeval wheel, found {[w.name for w in wheels]}")
    return wheels[0]


def solutions_in(folder: Path, chapter_ids: list[str]) -> list[str]:
    """Files under ``folder`` (notebooks and text files, not the wheel) that hold a line of a solution of the
    chapters' exercises (a solution cell's line longer than 25 characters that neither its stub nor the prompt
    holds, or an explanation's first line longer than 20), as ``"path: exercise"``."""
    from medeval.runtime.exercises import read_exercises
    from medeval.runtime.student_notebooks import stub

    needles: list[tuple[str, str]] = []
    for cid in chapter_ids:
        for ex in read_exercises(cid).exercises:
            for code in ex.solution_cells:
                handed_out = stub(code) + ex.prompt  # the stub keeps signatures and docstrings; a prompt gives lines
                needles += [(line.strip(), ex.label) for line in code.splitlines()
                            if len(line.strip()) > 25 and line.strip() not in handed_out]
            first = ex.explanation.strip().splitlines()[0] if ex.explanation.strip() else ""
            if len(first) > 20:
                needles.append((first, ex.label))
    found = []
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file() and p.suffix != ".whl"):
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # the gzipped data tables
        if path.suffix == ".ipynb":  # the JSON escapes quotes and newlines; compare the cells' text
            import nbformat

            text = "\n".join(c.source for c in nbformat.reads(text, as_version=4).cells)
        found += [f"{path.relative_to(folder)}: {label}" for needle, label in needles if needle in text]
    return sorted(set(found))


def write_student_kit(chapter_ids: list[str] | None, out_dir: Path, *, run_tests: bool = True) -> Path:
    """Write the folder to hand out to students (see the module's docstring) and return it.

    ``out_dir`` must not exist or be empty. With ``run_tests`` (the default) the teacher version of every chapter
    is executed first, and nothing is written if a solution fails its own checks. Raises :class:`KitError` before
    any work when ``out_dir`` holds files, and ``RuntimeError`` if a solution is found in the kit.
    """
    from medeval.runtime.params import chapters
    from medeval.runtime.paths import project_root
    from medeval.runtime.student_notebooks import write_student_notebooks

    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise KitError(f"{out_dir}: exists and is not an empty folder; the kit needs a new one")
    known = chapters()
    chapter_ids = list(chapter_ids or known)
    unknown = [c for c in chapter_ids if c not in known]
    if unknown:
        raise KitError(f"unknown chapter(s) {', '.join(unknown)}; expected some of {', '.join(known)}")
    root = project_root()
    with tempfile.TemporaryDirectory(prefix="medeval-kit-") as tmp:
        staging = Path(tmp) / "kit"
        staging.mkdir()
        material = write_student_notebooks(chapter_ids, Path(tmp) / "material", run_tests=run_tests)
        for m in material:
            shutil.copytree(m.student_notebook.parent, staging / m.chapter)
        wheel = build_wheel(staging)
        shutil.copytree(root / "params", staging / "params")
        shutil.copytree(root / "data", staging / "data")
        shutil.copy(root / "data_manifest.yaml", staging / "data_manifest.yaml")
        (staging / "README.md").write_text(KIT_README.format(chapters=", ".join(chapter_ids), wheel=wheel.name))
        leaked = solutions_in(staging, chapter_ids)
        if leaked:
            raise RuntimeError("the student kit would hold solutions:\n  " + "\n  ".join(leaked))
        out_dir.mkdir(parents=True, exist_ok=True)
        for item in staging.iterdir():
            shutil.move(str(item), out_dir / item.name)
    return out_dir
