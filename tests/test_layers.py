"""The package's layers, enforced on the source: what each layer of ``src/medeval`` may import.

    metrics      nothing of medeval outside medeval.metrics (numpy and scipy)
    data         metrics and data only: never experiments, models or runtime
    models       metrics, data and models only: never experiments or runtime
    experiments  anything below runtime: metrics, data, models, plots and the runtime's parameter schema
    runtime      anything (it runs the chapters and builds the book)
    notebooks    experiments, plots, runtime.notebook, runtime.grid and runtime.params in the page's own cells;
                 exercise cells (``exercise-setup``, ``solution``, ``check``: the student's workspace) may use any
                 public module

Imports inside functions count: a late import is still an arrow in the graph.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import jupytext
import pytest

import medeval
from medeval.runtime.paths import project_root

PACKAGE = Path(medeval.__file__).parent
FORBIDDEN = {
    "metrics": ("medeval.data", "medeval.models", "medeval.experiments", "medeval.runtime", "medeval.plots",
                "medeval.cli"),
    "data": ("medeval.models", "medeval.experiments", "medeval.runtime", "medeval.cli"),
    "models": ("medeval.experiments", "medeval.runtime", "medeval.cli"),
}


def medeval_imports(path: Path) -> list[tuple[int, str]]:
    """Every ``medeval...`` module that ``path`` imports, with its line, at any depth of the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "medeval"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "medeval":
            for a in node.names:  # from medeval.runtime import notebook: the module medeval.runtime.notebook
                sub = f"{node.module}.{a.name}"
                found.append((node.lineno, sub if importlib.util.find_spec(node.module) and _is_module(sub)
                              else node.module))
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def violations(layer: str) -> list[str]:
    bad = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for line, module in medeval_imports(path):
            if module.startswith(FORBIDDEN[layer]) or module == "medeval" and layer == "metrics":
                bad.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_what_is_below_it(layer):
    assert violations(layer) == []


def test_the_check_sees_late_and_package_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import numpy\nfrom medeval import plots\n\n"
                      "def f():\n    from medeval.runtime.grid import run_grid\n")
    assert medeval_imports(sample) == [(2, "medeval.plots"), (5, "medeval.runtime.grid")]


NOTEBOOK_ALLOWED = ("medeval.experiments", "medeval.plots", "medeval.runtime.notebook", "medeval.runtime.grid",
                    "medeval.runtime.params")
EXERCISE_TAGS = {"exercise-setup", "solution", "check"}


def notebook_violations(path: Path) -> list[str]:
    """The imports of a chapter notebook's own (non-exercise) code cells that reach past its allowed layers."""
    bad = []
    for index, cell in enumerate(jupytext.read(path).cells):
        if cell.cell_type != "code" or EXERCISE_TAGS & set(cell.metadata.get("tags", [])):
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        sample = path.parent / f".{path.stem}.cell.py"
        try:
            sample.write_text(source)
            imports = medeval_imports(sample)
        finally:
            sample.unlink(missing_ok=True)
        bad += [f"{path.name} cell {index}: imports {module}" for _, module in imports
                if not module.startswith(NOTEBOOK_ALLOWED)]
    return bad


@pytest.mark.parametrize("notebook", sorted((project_root() / "notebooks").glob("*.py")), ids=lambda p: p.stem)
def test_notebooks_import_experiments_plots_and_the_runtime_only(notebook):
    assert notebook_violations(notebook) == []


def test_the_notebook_check_sees_a_metrics_import_outside_the_exercises(tmp_path):
    sample = tmp_path / "nb.py"
    sample.write_text('# %%\nfrom medeval.metrics import roc_auc\n\n# %% tags=["solution"]\n'
                      "from medeval.data import splits\n")
    assert notebook_violations(sample) == ["nb.py cell 0: imports medeval.metrics"]
