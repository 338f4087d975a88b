"""The package's layers, enforced on the source: what each layer of ``src/medeval`` may import.

    metrics      nothing of medeval outside medeval.metrics (numpy and scipy)
    data         metrics and data only: never experiments, models or runtime
    models       metrics, data and models only: never experiments or runtime
    experiments  anything below runtime: metrics, data, models, plots and the runtime's parameter schema
    runtime      anything (it runs the chapters and builds the book)

Imports inside functions count: a late import is still an arrow in the graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import medeval

PACKAGE = Path(medeval.__file__).parent
FORBIDDEN = {
    "metrics": ("medeval.data", "medeval.models", "medeval.experiments", "medeval.runtime", "medeval.plots",
                "medeval.validation", "medeval.cli"),
    "data": ("medeval.models", "medeval.experiments", "medeval.runtime", "medeval.validation", "medeval.cli"),
    "models": ("medeval.experiments", "medeval.runtime", "medeval.validation", "medeval.cli"),
}


def medeval_imports(path: Path) -> list[tuple[int, str]]:
    """Every ``medeval...`` module that ``path`` imports, with its line, at any depth of the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "medeval"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "medeval":
            if node.module == "medeval":  # from medeval import plots, ...
                found += [(node.lineno, f"medeval.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


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
