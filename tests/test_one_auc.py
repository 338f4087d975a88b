"""One AUC in the package (issue #32): every AUC of ``src/medeval`` is :func:`medeval.metrics.curves.roc_auc` or its
core, :mod:`medeval.metrics._ranks`. The guard reads the code, not only its imports: it finds an *implementation*
of the AUC outside ``medeval.metrics`` (a rank sum minus ``n (n + 1) / 2``, ``mannwhitneyu``, or every
positive-negative pair compared by broadcasting, ``ufunc.outer`` or nested loops) in the package and in the chapter
notebooks' own cells (exercise cells, the student's workspace, may rebuild what the chapter teaches). Each
detector is shown to fail on a probe: issue #32's 6-line rank-sum AUC appended to ``experiments/eve.py`` passed the
import-only check.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import pytest

import medeval
from medeval.runtime.paths import project_root

PACKAGE = Path(medeval.__file__).parent
EXERCISE_TAGS = {"exercise-setup", "solution", "check"}

RANKING = {"rankdata", "rank", "mannwhitneyu"}  # scipy.stats.rankdata, pandas' .rank(); argsort twice below
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
ORDERING = (ast.Gt, ast.Lt, ast.GtE, ast.LtE)
OUTER_UFUNCS = {"greater", "less", "greater_equal", "less_equal", "subtract"}


def _name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_one(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1


def _factors(node) -> list:
    """The factors of a product, a division by 2 giving the factor "1/2": ``0.5 * n * (n + 1)`` -> [1/2, n, n + 1]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv))
            and isinstance(node.right, ast.Constant) and node.right.value == 2):
        return [*_factors(node.left), "1/2"]
    if isinstance(node, ast.Constant) and node.value == 0.5:
        return ["1/2"]
    return [node]


def _triangular(node) -> bool:
    """``n (n + 1) / 2`` in any arrangement of its factors (``n * (n + 1) // 2``, ``0.5 * n * (n + 1)`` ...)."""
    if not isinstance(node, ast.BinOp):
        return False
    factors = _factors(node)
    if "1/2" not in factors:
        return False
    terms = [ast.dump(f) for f in factors if not isinstance(f, str)]
    for f in factors:
        if isinstance(f, ast.BinOp) and isinstance(f.op, ast.Add):
            for x, one in ((f.left, f.right), (f.right, f.left)):
                if _is_one(one) and ast.dump(x) in terms:
                    return True
    return False


def _newaxis_positions(node) -> tuple[int, ...] | None:
    """Where ``x[:, None]`` / ``x[None, :]`` / ``x[..., np.newaxis]`` put a new axis (None if it is no such index)."""
    if not isinstance(node, ast.Subscript):
        return None
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    where = tuple(i for i, p in enumerate(parts)
                  if (isinstance(p, ast.Constant) and p.value is None) or _name(p) == "newaxis")
    return where or None


def _is_arange(node) -> bool:
    """``np.arange(k)[None, :]``: positions, compared with counts to build a prefix mask, not scores."""
    return isinstance(node.value, ast.Call) and _name(node.value.func) == "arange"


def _scope(node):
    """The nodes of one scope: ``node`` and what it contains, without the bodies of the functions defined in it
    (each is a scope of its own)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, FUNCTIONS):
            yield from _scope(child)


def _comprehension_targets(node) -> list[set[str]]:
    return [{n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)} for g in node.generators]


def auc_implementations(source: str) -> list[str]:
    """Rank-sum (Mann-Whitney) and pair-counting code in ``source``: ``"line: what"`` for each finding."""
    tree = ast.parse(source)
    found = []
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, FUNCTIONS))]:
        body = list(_scope(scope))
        ranks = [n for n in body if isinstance(n, ast.Call) and _name(n.func) in RANKING]
        ranks += [n for n in body if isinstance(n, ast.Call) and _name(n.func) == "argsort"
                  and any(isinstance(a, ast.Call) and _name(a.func) == "argsort"
                          for a in [*n.args, getattr(n.func, "value", None)])]
        tri = [n for n in body if _triangular(n)]
        if ranks and tri:
            found.append(f"{tri[0].lineno}: rank sum minus n(n+1)/2 (Mann-Whitney U)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) == "mannwhitneyu":
            found.append(f"{node.lineno}: mannwhitneyu")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "outer"
                and _name(node.func.value) in OUTER_UFUNCS):
            found.append(f"{node.lineno}: every pair compared ({_name(node.func.value)}.outer)")
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ORDERING):
            a, b = _newaxis_positions(node.left), _newaxis_positions(node.comparators[0])
            if a and b and a != b and not any(_is_arange(x) for x in (node.left, node.comparators[0])):
                found.append(f"{node.lineno}: every pair compared (broadcast {ast.unparse(node)})")
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            targets = _comprehension_targets(node)
            inner = [c for c in ast.walk(node.elt) if isinstance(c, (ast.ListComp, ast.GeneratorExp))]
            for c in inner:
                targets += _comprehension_targets(c)
            if len(targets) < 2:
                continue
            for cmp in ast.walk(node.elt):
                if isinstance(cmp, ast.Compare) and any(isinstance(op, ORDERING) for op in cmp.ops):
                    sides = [{n.id for n in ast.walk(x) if isinstance(n, ast.Name)} for x in (cmp.left, *cmp.comparators)]
                    owners = {i for side in sides for i, t in enumerate(targets) if side & t}
                    if len(owners) >= 2 and all(any(side & t for t in targets) for side in sides):
                        found.append(f"{cmp.lineno}: every pair compared (nested loops {ast.unparse(cmp)})")
                        break
    return sorted(set(found), key=lambda f: int(f.split(":")[0]))


def package_findings(package: Path = PACKAGE) -> list[str]:
    """``"<file>:<line>: what"`` for every AUC implementation of ``package`` outside ``metrics/``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if not rel.startswith("metrics/"):
            found += [f"{rel}:{f}" for f in auc_implementations(path.read_text())]
    return found


def notebook_findings(path: Path) -> list[str]:
    """The same for a chapter notebook's own (non-exercise) code cells."""
    found = []
    for index, cell in enumerate(jupytext.read(path).cells):
        if cell.cell_type != "code" or EXERCISE_TAGS & set(cell.metadata.get("tags", [])):
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        found += [f"{path.name} cell {index} line {f}" for f in auc_implementations(source)]
    return found


def test_no_auc_is_implemented_outside_the_metrics():
    assert package_findings() == []


@pytest.mark.parametrize("notebook", sorted((project_root() / "notebooks").glob("*.py")), ids=lambda p: p.stem)
def test_no_chapter_cell_implements_an_auc(notebook):
    assert notebook_findings(notebook) == []


def test_the_one_auc_is_imported_only_where_it_belongs():
    """scikit-learn's roc_auc_score only where chapter 3 cross-checks chapter 5's macro-AUC against it; the core
    (medeval.metrics._ranks) only by curves.roc_auc and the multi-label report, which shares its sort with average
    precision."""
    imports_sklearn_auc, uses_core = set(), set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any(a.name == "roc_auc_score" for a in node.names):
                imports_sklearn_auc.add(rel)
            if isinstance(node, ast.ImportFrom) and (node.module == "medeval.metrics._ranks"
                                                     or (node.level and node.module == "_ranks")):
                uses_core.add(rel)
    assert imports_sklearn_auc == {"experiments/eve.py"}, imports_sklearn_auc
    assert uses_core == {"metrics/curves.py", "metrics/multilabel.py"}, uses_core


# --------------------------------------------------------------------------------------------------
# the guard fails on what it claims to find

RANK_SUM_AUC = """

def rank_sum_auc(y, s):
    r = scipy.stats.rankdata(s)
    n1 = int(y.sum())
    n0 = len(y) - n1
    return (r[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)
"""

PROBES = {
    "rank sum": (RANK_SUM_AUC, "rank sum minus n(n+1)/2"),
    "double argsort, 0.5 n (n + 1)": (
        "def auc(y, s):\n    ranks = s.argsort().argsort() + 1\n    n = y.sum()\n"
        "    return (ranks[y == 1].sum() - 0.5 * n * (n + 1)) / (n * (len(y) - n))\n", "rank sum minus"),
    "pandas rank, n (n + 1) // 2": (
        "def auc(df):\n    r = df.score.rank()\n    n = df.y.sum()\n"
        "    return (r[df.y == 1].sum() - n * (n + 1) // 2) / (n * (len(df) - n))\n", "rank sum minus"),
    "mannwhitneyu": ("def auc(a, b):\n    return stats.mannwhitneyu(a, b).statistic / (len(a) * len(b))\n",
                     "mannwhitneyu"),
    "broadcast pairs": ("def auc(p, n):\n    return (p[:, None] > n[None, :]).mean() "
                        "+ 0.5 * (p[:, None] == n[None, :]).mean()\n", "every pair compared (broadcast"),
    "ufunc.outer": ("def auc(p, n):\n    d = np.subtract.outer(p, n)\n    return (d > 0).mean()\n",
                    "every pair compared (subtract.outer)"),
    "nested comprehensions": (
        "def auc(pos, neg):\n    return np.mean([[1.0 if u > v else 0.5 if u == v else 0.0 for v in neg] "
        "for u in pos])\n", "every pair compared (nested loops"),
    "at module level (a notebook cell)": (
        "r = rankdata(s)\nn = y.sum()\nauc = (r[y == 1].sum() - n * (n + 1) / 2) / (n * (len(y) - n))\n",
        "rank sum minus"),
    "one comprehension, two loops": (
        "def auc(pos, neg):\n    return sum(u > v for u in pos for v in neg) / (len(pos) * len(neg))\n",
        "every pair compared (nested loops"),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_each_detector_finds_its_probe(probe):
    source, what = PROBES[probe]
    findings = auc_implementations(source)
    assert len(findings) == 1 and what in findings[0], findings


def test_the_guard_fails_on_a_rank_sum_auc_added_to_eve(tmp_path):
    """Issue #32's probe: the 6-line rank-sum AUC appended to experiments/eve.py, in a copy of the package."""
    copy = tmp_path / "medeval"
    for path in PACKAGE.rglob("*.py"):
        target = copy / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    assert package_findings(copy) == []
    eve = copy / "experiments" / "eve.py"
    eve.write_text(eve.read_text() + RANK_SUM_AUC)
    line = len(eve.read_text().splitlines())
    assert package_findings(copy) == [f"experiments/eve.py:{line}: rank sum minus n(n+1)/2 (Mann-Whitney U)"]


def test_the_notebook_guard_fails_on_an_auc_in_a_chapter_cell_but_not_in_a_solution(tmp_path):
    notebook = tmp_path / "nb.py"
    notebook.write_text("# %%\nimport numpy as np\n\n# %% tags=[\"solution\"]\n"
                        "def f(p, n):\n    return (p[:, None] > n[None, :]).mean()\n\n# %%\n"
                        "auc = np.mean([u > v for u in pos for v in neg])\n")
    assert notebook_findings(notebook) == ["nb.py cell 2 line 1: every pair compared (nested loops u > v)"]


def test_masks_and_thresholds_are_not_pairs():
    """What the package does that looks like pair counting and is not: a prefix mask from counts, one map against
    one threshold, a product without its half, ranks without a rank sum."""
    for source in ("m = np.arange(k)[None, :] < n_sel[:, None]\n",
                   "b = s > t\n",
                   "def f(n):\n    return n * (n - 1) // 2\n",
                   "def f(s):\n    return scipy.stats.rankdata(s)\n",
                   "x = [a > 0.5 for a in scores]\n",
                   "def f(s):\n    return scipy.stats.rankdata(s)\n\ndef g(n):\n    return n * (n + 1) / 2\n"):
        assert auc_implementations(source) == [], source
