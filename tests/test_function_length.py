"""No function of ``medeval.experiments`` is longer than 80 lines of code (issue #32): a chapter is built of one
function per concept. The length counts from the first statement after the docstring to the function's end, so
that the docstring (its formula and source) and a long keyword signature cost nothing. A numerical kernel may be
longer; each is named here with why."""

from __future__ import annotations

import ast
from pathlib import Path

import medeval

EXPERIMENTS = Path(medeval.__file__).parent / "experiments"
MAX_LINES = 80
#: numerical kernels allowed to be longer, with why
KERNELS: dict[str, str] = {}


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the function."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str) and len(body) > 1:
        body = body[1:]
    return node.end_lineno - body[0].lineno + 1


def long_functions(folder: Path = EXPERIMENTS, limit: int = MAX_LINES) -> dict[str, int]:
    found = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and code_lines(node) > limit:
                found[f"{path.stem}.{node.name}"] = code_lines(node)
    return found


def test_no_experiments_function_is_longer_than_80_lines_unless_a_named_kernel():
    assert {k: v for k, v in long_functions().items() if k not in KERNELS} == {}


def test_the_length_check_can_fail(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(81))
    (tmp_path / "probe.py").write_text(f'def long():\n    """Doc."""\n{body}\n\n\ndef short():\n    return 1\n')
    assert long_functions(tmp_path) == {"probe.long": 81}
