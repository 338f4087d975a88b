"""The package's layers, enforced on the source: what each layer of ``src/medeval`` may import.

    _files       nothing of medeval (the one atomic writer and project-root finder, shared by data and runtime)
    core         core only: the claims vocabulary and rules, the parameter-schema base and the chapter protocol,
                 shared by experiments and runtime so that neither imports the other for them
    metrics      nothing of medeval outside medeval.metrics (numpy and scipy)
    data         metrics and data only (and the private YAML reader and file helpers): never experiments, models
                 or runtime
    models       metrics, data and models only: never experiments or runtime
    experiments  core, metrics, data, models, plots and experiments; of the runtime only what
                 :data:`EXPERIMENTS_USE_OF_RUNTIME` lists, each with its reason; never cli
    plots        metrics only
    runtime      anything but the command line (it runs the chapters and builds the book)
    notebooks    experiments, plots, runtime.notebook, runtime.grid and runtime.params in the page's own cells;
                 exercise cells (``exercise-setup``, ``solution``, ``check``: the student's workspace) may use any
                 public module

Each layer lists what it *may* import, so a new module is outside every layer until it is placed. Imports inside
functions count (a late import is still an arrow in the graph), and so do relative imports: ``from ..runtime.grid
import run_grid`` in ``data/`` is ``medeval.runtime.grid``.
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

#: The runtime modules ``experiments`` may import, and why (the rest of the runtime runs the chapters and imports
#: ``experiments``, so an arrow back would be a cycle through the executor and the book).
EXPERIMENTS_USE_OF_RUNTIME = {
    "medeval.runtime.grid": "the one grid executor every chapter's runs go through (CONTRIBUTING, 'Grids of runs'); imported "
                            "inside the functions that run a grid",
}
ALLOWED = {
    "_files": (),  # the one atomic writer and project-root finder, below every layer: imports nothing of medeval
    "core": ("medeval.core",),
    "metrics": ("medeval.metrics",),
    "data": ("medeval.metrics", "medeval.data", "medeval._yaml", "medeval._files"),
    "models": ("medeval.metrics", "medeval.data", "medeval.models"),
    "experiments": ("medeval.core", "medeval.metrics", "medeval.data", "medeval.models", "medeval.experiments", "medeval.plots",
                    *EXPERIMENTS_USE_OF_RUNTIME),
    "plots": ("medeval.metrics",),
    "runtime": ("medeval", "medeval._yaml", "medeval._files", "medeval.core", "medeval.metrics", "medeval.data", "medeval.models",
                "medeval.experiments", "medeval.plots", "medeval.runtime"),
}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``medeval.data.splits`` for ``<package>/data/splits.py`` (``medeval.data`` for its ``__init__.py``)."""
    parts = path.relative_to(package).with_suffix("").parts
    return ".".join(("medeval", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _absolute(node: ast.ImportFrom, module: str | None, is_package: bool) -> str | None:
    """The absolute module an ``ImportFrom`` names: relative ones resolved from the importing ``module``."""
    if node.level == 0:
        return node.module
    if module is None:
        return f"<relative import {'.' * node.level}{node.module or ''} outside the package>"
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def medeval_imports(path: Path, module: str | None = None, is_package: bool = False) -> list[tuple[int, str]]:
    """Every ``medeval...`` module that ``path`` imports, with its line, at any depth of the file.

    ``module`` is the file's own module name (relative imports are resolved from it); files of the package get it
    from their path."""
    if module is None and path.is_relative_to(PACKAGE):
        module, is_package = module_name(path), path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "medeval"]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, module, is_package)
            if target.startswith("<"):
                found.append((node.lineno, target))
            elif target.split(".")[0] == "medeval":
                for a in node.names:  # from medeval.runtime import notebook: the module medeval.runtime.notebook
                    sub = f"{target}.{a.name}"
                    found.append((node.lineno, sub if _is_module(target) and _is_module(sub) else target))
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ModuleNotFoundError, ValueError):
        return False


def _within(module: str, allowed: tuple[str, ...]) -> bool:
    """``module`` is one of ``allowed`` or inside one (the bare package ``medeval`` only as itself)."""
    return any(module == a or (a != "medeval" and module.startswith(a + ".")) for a in allowed)


def layer_files(layer: str, package: Path = PACKAGE) -> list[Path]:
    single = package / f"{layer}.py"
    return [single] if single.is_file() else sorted((package / layer).rglob("*.py"))


def violations(layer: str, package: Path = PACKAGE) -> list[str]:
    bad = []
    for path in layer_files(layer, package):
        for line, module in medeval_imports(path, module_name(path, package), path.name == "__init__.py"):
            if not _within(module, ALLOWED[layer]):
                bad.append(f"{path.relative_to(package)}:{line} imports {module}")
    return bad


def test_every_module_of_the_package_is_in_a_layer():
    top = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
           if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    assert top - set(ALLOWED) == {"__init__", "_yaml", "cli"}  # the package itself, a leaf reader, the top


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_what_is_below_it(layer):
    assert layer_files(layer) and violations(layer) == []


def test_the_check_sees_late_and_package_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import numpy\nfrom medeval import plots\n\n"
                      "def f():\n    from medeval.runtime.grid import run_grid\n")
    assert medeval_imports(sample) == [(2, "medeval.plots"), (5, "medeval.runtime.grid")]


def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "medeval"
    for name, source in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    return package


def test_the_check_sees_relative_imports(tmp_path):
    """The probe of issue #32: ``from ..runtime.grid import run_grid`` in ``data/`` passed the old check."""
    package = _fake_package(tmp_path, {
        "data/__init__.py": "from . import splits\nfrom .. import metrics\n",
        "data/probe.py": "from ..runtime.grid import run_grid\n\ndef f():\n    from .splits import x\n",
        "data/sub/deep.py": "from ...experiments import eve\nfrom ..bagging import y\n",
    })
    assert violations("data", package) == [
        "data/probe.py:1 imports medeval.runtime.grid",
        "data/sub/deep.py:1 imports medeval.experiments.eve",
    ]
    init = package / "data/__init__.py"
    assert medeval_imports(init, "medeval.data", is_package=True) == [(1, "medeval.data.splits"),
                                                                      (2, "medeval.metrics")]


def test_the_check_covers_experiments_and_the_runtime(tmp_path):
    package = _fake_package(tmp_path, {
        "experiments/probe.py": ("from medeval.runtime.grid import run_grid\nfrom ..core.schema import MIB\n"
                                 "from ..runtime.execution import execute\nimport medeval.cli\n"
                                 "from medeval import runtime\n"),
        "runtime/probe.py": "from .. import cli\nfrom ..experiments import eve\nimport medeval\n",
        "plots.py": "from medeval.data import splits\n",
    })
    assert violations("experiments", package) == [
        "experiments/probe.py:3 imports medeval.runtime.execution",
        "experiments/probe.py:4 imports medeval.cli",
        "experiments/probe.py:5 imports medeval.runtime",
    ]
    assert violations("runtime", package) == ["runtime/probe.py:1 imports medeval.cli"]
    assert violations("plots", package) == ["plots.py:1 imports medeval.data.splits"]


NOTEBOOK_ALLOWED = ("medeval.core", "medeval.experiments", "medeval.plots", "medeval.runtime.notebook", "medeval.runtime.grid",
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
