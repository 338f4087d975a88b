"""How much logic the chapter notebooks hold (not a speed benchmark: a measure of where the code lives).

Notebooks should orchestrate, plot and explain; logic belongs in ``src/medeval``. This script reads every chapter
notebook (jupytext percent format) and counts, in the page's own code cells (exercise cells — tags
``exercise-setup``, ``solution``, ``check`` — are the student's workspace and are left out):

* code lines: non-blank lines that are not comments;
* logic lines: the lines of top-level statements that define or decide something — ``def``, ``class``, ``for``,
  ``while``, ``if``, ``try``, ``with`` blocks, ``lambda`` and comprehensions.

Usage: ``.venv/bin/python benchmarks/notebook_logic.py [--root PATH]`` (``--root`` a checkout, e.g. an older
commit exported with ``git worktree add``).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import jupytext

EXERCISE_TAGS = {"exercise-setup", "solution", "check"}
BLOCKS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While, ast.If, ast.Try,
          ast.With, ast.AsyncWith)
INLINE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _code_lines(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.strip() and not line.strip().startswith("#")}


def cell_counts(source: str) -> tuple[int, int]:
    """(code lines, logic lines) of one code cell."""
    source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    code = _code_lines(source)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return len(code), 0
    logic: set[int] = set()
    for stmt in tree.body:
        if isinstance(stmt, BLOCKS) or any(isinstance(node, INLINE) for node in ast.walk(stmt)):
            logic |= set(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return len(code), len(logic & code)


def notebook_counts(path: Path) -> tuple[int, int]:
    code = logic = 0
    for cell in jupytext.read(path).cells:
        if cell.cell_type == "code" and not EXERCISE_TAGS & set(cell.metadata.get("tags", [])):
            c, g = cell_counts(cell.source)
            code, logic = code + c, logic + g
    return code, logic


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    total_code = total_logic = 0
    print(f"{'notebook':32s} {'code':>6s} {'logic':>6s} {'share':>6s}")
    for path in sorted((args.root / "notebooks").glob("*.py")):
        code, logic = notebook_counts(path)
        total_code, total_logic = total_code + code, total_logic + logic
        print(f"{path.stem:32s} {code:6d} {logic:6d} {logic / max(code, 1):6.1%}")
    src = sum(len(_code_lines(p.read_text())) for p in (args.root / "src" / "medeval").rglob("*.py"))
    print(f"{'all notebooks':32s} {total_code:6d} {total_logic:6d} {total_logic / max(total_code, 1):6.1%}")
    print(f"src/medeval code lines: {src}; notebook logic lines per 1000 package lines: "
          f"{1000 * total_logic / max(src, 1):.1f}")


if __name__ == "__main__":
    main()
