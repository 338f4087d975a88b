"""Grading handed-in student notebooks so that a hostile notebook can neither fool nor hang the grader.

A chapter's check cells (``teaching.read_exercises``) are plain ``assert`` statements. Each assertion is split
into what the student computes and what it is compared with (:func:`hidden_checks`): in ``assert
np.isclose(ex_auc(y, s), roc_auc(y, s))`` the left side calls the student's answer (a name bound by a solution
cell, or derived from one), the right side does not. When the assignment is made (``medeval student``) the
teacher version runs once and every side that does not depend on the student is stored as a constant
(:func:`reference_values`, written to ``hidden-checks.json`` in the teacher folder). Nothing in a student's
namespace can redefine those constants.

Grading (:func:`grade_notebook`) executes the submission in a kernel of its own, started by a child process in
a fresh folder that holds no test, with a per-cell timeout and a whole-notebook deadline (the child's and the
kernel's process groups are killed when it passes). After each exercise a probe cell evaluates the student's
sides and prints them as JSON; the comparisons run afterwards in the grader's own process, against the stored
constants, with the grader's numpy. A kernel that dies or a cell that times out still leaves the probes of the
exercises before it. A static reading of the code (:func:`suspicious_code`) flags what a fair answer does not
do: importing otter, touching a ``tests`` folder, assigning to an attribute of an imported module (``np.isclose
= …``) and naming the reference implementation an exercise is checked against.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from medeval.runtime.exercises import ChapterExercises, read_exercises
from medeval.runtime.student_notebooks import public_check_index

HIDDEN_CHECKS_FILE = "hidden-checks.json"
"""The file in a teacher folder that holds every check with its expected values as constants."""

DEFAULT_CELL_TIMEOUT_S = 300.0
"""Seconds one cell of a submission may run. Every chapter's teacher notebook (all solutions, the experimental
ones included) grades in at most 15 s on a 2-core Xeon (measured: A2-rerun 14.8 s, 04a 10.6 s, 03-eve 7.2 s), so a
correct notebook meets this with a wide margin on a machine many times slower."""

DEFAULT_TIMEOUT_S = 1200.0
"""Seconds a whole submission may run, kernel start included."""

_MARKER = "@@medeval-probe@@"
_CLOSE_CALLS = {"np.isclose": "isclose", "numpy.isclose": "isclose", "math.isclose": "isclose",
                "np.allclose": "allclose", "numpy.allclose": "allclose",
                "np.array_equal": "array_equal", "numpy.array_equal": "array_equal"}
_NOT_REFERENCES = {"np", "numpy", "math", "len", "float", "int", "list", "tuple", "sorted", "set", "dict", "abs",
                   "sum", "min", "max", "range", "zip", "round", "bool", "str", "isinstance", "hasattr", "type"}


class GradingError(ValueError):
    """A notebook cannot be graded (not a notebook, not a medeval student notebook, no checks found)."""


# --------------------------------------------------------------------------------------------------------------
# Checks as probes (student side, run in the submission's kernel) and constants (reference side)

@dataclass
class Condition:
    """One assertion of a check cell: ``kind`` is ``isclose``, ``allclose``, ``array_equal``, ``equal`` (both
    sides compared by the grader) or ``true`` (the whole expression, probed as a bool). A side is
    ``{"probe": key}`` (evaluated in the submission's kernel) or ``{"constant": value}``."""

    kind: str
    sides: list[dict]
    message: str
    options: dict = field(default_factory=dict)


@dataclass
class HiddenCheck:
    """One check cell of an exercise: the code to run in a kernel and the conditions it records.

    ``grading_code`` probes only the student's sides; ``teacher_code`` probes every side (run once on the
    solutions to compute the constants)."""

    label: str
    number: int
    public: bool
    grading_code: str
    teacher_code: str
    conditions: list[Condition]
    reference_names: list[str]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def answer_names(exercises: ChapterExercises) -> set[str]:
    """The names the solution cells bind at top level (functions and values): what a student writes."""
    names: set[str] = set()
    for ex in exercises.exercises:
        for code in ex.solution_cells:
            for node in ast.parse(code).body:
                if isinstance(node, ast.FunctionDef | ast.ClassDef):
                    names.add(node.name)
                elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.For | ast.With):
                    names |= _bound(node)
    return names


def _called_names(node: ast.AST, modules: set[str]) -> set[str]:
    """The functions an expression calls: plain names, and ``module.function`` where ``module`` is imported
    (``eve.characterization_unit`` → that name); a method of a value (``LABELS.index``) is not one."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            func = n.func
            if isinstance(func, ast.Name):
                found.add(func.id)
            elif isinstance(func, ast.Attribute):
                root = func
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in modules - {"np", "numpy", "math", "pd", "pandas"}:
                    found.add(func.attr)
    return found - _NOT_REFERENCES


def _static_message(node: ast.AST | None) -> str:
    """An assertion's message without anything computed: an f-string's fields become ``…`` (they may hold the
    expected value)."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.BinOp):  # "a" "b" + f"…" and the like
        return _static_message(node.left) + _static_message(node.right)
    return ""


def public_check(code: str, namespace: dict) -> None:
    """Run an exercise's public check in the student's namespace and print one line when it fails: the check's
    own message, or the exception the student's code raised (what ``grader.check`` shows instead of a doctest
    log). Prints nothing when the check passes."""
    try:
        exec(compile(code, "check", "exec"), namespace)
    except AssertionError as exc:
        print(f"✗ {exc}" if str(exc) else "✗ the check failed")
    except Exception as exc:  # the student's code raised: say what, without a traceback
        text = f"{type(exc).__name__}: {str(exc)[:200]}"
        if "ellipsis" in text.lower() or "NoneType" in text:
            text = f"not answered yet ({text})"
        print(f"✗ your code raised {text}")


def _split_check(label: str, number: int, code: str, answers: set[str], public: bool,
                 modules: frozenset[str] = frozenset()) -> HiddenCheck:
    tree = ast.parse(code)
    modules = set(modules) | imported_modules(code)
    tainted = set(answers)
    grading: list[str] = []
    teacher: list[str] = []
    conditions: list[Condition] = []
    references: set[str] = set()

    def probe(expr: ast.AST, key: str, as_bool: bool = False) -> str:
        text = ast.unparse(expr)
        return f"__medeval_record__({key!r}, lambda: {'bool(' + text + ')' if as_bool else '(' + text + ')'})"

    for node in tree.body:
        if not isinstance(node, ast.Assert):
            text = ast.unparse(node)
            grading.append(text)
            teacher.append(text)
            if _names(node) & tainted:
                tainted |= _bound(node)
            continue
        message = _static_message(node.msg)
        tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) else [
            node.test]
        for test in tests:
            index = len(conditions)
            kind, operands, options = "true", [test], {}
            if isinstance(test, ast.Call) and ast.unparse(test.func) in _CLOSE_CALLS and len(test.args) == 2:
                try:
                    options = {k.arg: ast.literal_eval(k.value) for k in test.keywords}
                    kind, operands = _CLOSE_CALLS[ast.unparse(test.func)], list(test.args)
                except (ValueError, TypeError):
                    pass
            elif (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
                kind, operands = "equal", [test.left, test.comparators[0]]
            student_side = [bool(_names(op) & tainted) for op in operands]
            if kind != "true" and not any(student_side):
                student_side = [True] * len(operands)  # nothing to hold constant: probe both
            sides = []
            for side, (op, by_student) in enumerate(zip(operands, student_side, strict=True)):
                key = f"{label}/{number}/{index}/{side}"
                teacher.append(probe(op, key, as_bool=kind == "true"))
                if by_student or kind == "true":
                    grading.append(probe(op, key, as_bool=kind == "true"))
                    sides.append({"probe": key})
                else:
                    sides.append({"reference": key})
                    references |= _called_names(op, modules)
            conditions.append(Condition(kind, sides, str(message), options))
    # the cell ran to its end: an assert nested in a loop, or any statement that raises, fails the check
    done = f"__medeval_record__({label + '/' + str(number) + '/done'!r}, lambda: True)"
    return HiddenCheck(label, number, public, "\n".join([*grading, done]), "\n".join([*teacher, done]),
                       conditions, sorted(references))


def hidden_checks(exercises: ChapterExercises) -> dict[str, list[HiddenCheck]]:
    """Every check cell of every autograded exercise, split into probes and reference sides.

    The public check of an exercise (the one a student's ``tests/`` folder holds) is its check cell whose first
    line is the comment ``# public``, else its first check cell.
    """
    answers = answer_names(exercises)
    modules = frozenset().union(*(imported_modules(code) for code in exercises.setup_cells))
    found = {}
    for ex in exercises.exercises:
        if not ex.autograded:
            continue
        public = public_check_index(ex)
        found[ex.label] = [_split_check(ex.label, i + 1, code, answers, i == public, modules)
                           for i, code in enumerate(ex.check_cells)]
        # what the exercise's own solution uses is allowed (a later exercise may build on medeval's function)
        allowed = set().union(*(_names(ast.parse(code)) | {n.attr for n in ast.walk(ast.parse(code))
                                                            if isinstance(n, ast.Attribute)}
                                for code in ex.solution_cells))
        for check in found[ex.label]:
            check.reference_names = sorted(set(check.reference_names) - allowed)
    return found


_PROBE_PRELUDE = '''
def __medeval_probe__(label, codes):
    import json as _json
    import numpy as _np
    values, errors = {}, {}

    def serialize(v):
        if isinstance(v, bool | _np.bool_):
            return bool(v)
        if isinstance(v, str):
            return v
        if v is None or v is Ellipsis:
            return {"type": repr(v)}
        try:
            arr = _np.asarray(v, dtype=float)
            return {"array": arr.tolist(), "shape": list(arr.shape)}
        except Exception:
            pass
        if isinstance(v, list | tuple):
            return [serialize(x) for x in v]
        return {"type": type(v).__name__}

    def record(key, thunk):
        try:
            values[key] = serialize(thunk())
        except BaseException as exc:
            errors[key] = f"{type(exc).__name__}: {str(exc)[:160]}"

    for number, code in codes:
        scope = globals()
        scope["__medeval_record__"] = record
        try:
            exec(code, scope)
        except BaseException as exc:
            errors[f"{label}/{number}"] = f"{type(exc).__name__}: {str(exc)[:160]}"
    print(MARKER + _json.dumps({"label": label, "values": values, "errors": errors}))
'''.replace("MARKER", repr(_MARKER))


def _probe_cell(label: str, checks: list[HiddenCheck], teacher: bool) -> str:
    codes = [(c.number, c.teacher_code if teacher else c.grading_code) for c in checks]
    return f"{_PROBE_PRELUDE}\n__medeval_probe__({label!r}, {codes!r})\ndel __medeval_probe__"


# --------------------------------------------------------------------------------------------------------------
# Running a notebook in its own process, with timeouts

@dataclass
class Execution:
    """What an isolated run left: the probes by exercise, the error outputs of each cell, and why it stopped
    early (``None`` when every cell ran)."""

    probes: dict[str, dict]
    cell_errors: dict[int, str]
    stopped: str | None


def _execute_child(notebook: str, record: str, cell_timeout: float, workdir: str) -> None:
    """The child process: execute ``notebook`` cell by cell in a fresh kernel, appending one JSON line per cell
    to ``record`` (flushed, so a killed run leaves what it did). Each line starts with a token read from stdin,
    which the kernel never sees, so a line the submission writes into the file is ignored."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    token = sys.stdin.readline().strip()
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=cell_timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": workdir}})
    with open(record, "a") as out:
        def write(entry):
            out.write(f"{token} {json.dumps(entry)}\n")
            out.flush()

        with client.setup_kernel():
            process = getattr(client.km.provisioner, "process", None)
            if process is not None:
                write({"kernel_pid": process.pid})
            for index, cell in enumerate(nb.cells):
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    write({"stopped": f"cell {index + 1} ran past the {cell_timeout:g}-s cell timeout", "cell": index})
                    return
                except DeadKernelError:
                    write({"stopped": f"the kernel died in cell {index + 1}", "cell": index})
                    return
                stdout = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream"
                                 and o.get("name") == "stdout")
                errors = [f"{o.get('ename')}: {str(o.get('evalue', ''))[:200]}" for o in cell.outputs
                          if o.get("output_type") == "error"]
                write({"cell": index, "probe": [ln[len(_MARKER):] for ln in stdout.splitlines()
                                                if ln.startswith(_MARKER)], "errors": errors})


def execute_isolated(nb, *, cell_timeout: float, timeout: float, probe_cells: dict[int, str]) -> Execution:
    """Execute a notebook object in a child process and a kernel of its own, in an empty temporary folder.

    Each cell may run ``cell_timeout`` seconds and the whole run ``timeout`` seconds; past the deadline the
    child's and the kernel's process groups are killed. Returns what the cells before the end left. Probe results
    are read only from the cells in ``probe_cells`` (index → exercise label), the last one each printed.
    """
    import nbformat

    with tempfile.TemporaryDirectory(prefix="medeval-run-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        notebook, record = Path(tmp) / "submission.ipynb", Path(tmp) / "record.jsonl"
        nbformat.write(nb, notebook)
        record.touch()
        code = ("import sys; from medeval.runtime.grading import _execute_child; "
                "_execute_child(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4])")
        child = subprocess.Popen([sys.executable, "-c", code, str(notebook), str(record), str(cell_timeout),
                                  str(work)], cwd=work, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        token = secrets.token_hex(16)
        child.stdin.write(f"{token}\n".encode())
        child.stdin.close()
        stopped = None
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stopped = f"the notebook ran past the {timeout:g}-s timeout"
        entries = []
        for line in record.read_text(errors="replace").splitlines():
            if line.startswith(token + " "):
                try:
                    entries.append(json.loads(line[len(token) + 1:]))
                except ValueError:
                    continue
        for pid in [e["kernel_pid"] for e in entries if "kernel_pid" in e] + [child.pid]:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        child.wait()
    probes, cell_errors = {}, {}
    for entry in entries:
        if "stopped" in entry:
            stopped = entry["stopped"]
        for text in entry.get("probe", []) if probe_cells.get(entry.get("cell")) is not None else []:
            try:
                result = json.loads(text)
                if result["label"] == probe_cells[entry["cell"]] and isinstance(result["values"], dict) \
                        and isinstance(result["errors"], dict):
                    probes[result["label"]] = result
            except (ValueError, KeyError, TypeError):
                continue
        if entry.get("errors"):
            cell_errors[entry["cell"]] = "; ".join(entry["errors"])
    if stopped is None and child.returncode != 0:
        stopped = f"the grading process ended with status {child.returncode}"
    return Execution(probes, cell_errors, stopped)


# --------------------------------------------------------------------------------------------------------------
# Constants from the teacher's solutions

def _teacher_notebook(exercises: ChapterExercises, checks: dict[str, list[HiddenCheck]]):
    import nbformat

    v4 = nbformat.v4
    cells = [v4.new_code_cell(code) for code in exercises.setup_cells]
    for ex in exercises.exercises:
        if ex.label in checks:
            cells += [v4.new_code_cell(code) for code in ex.solution_cells]
            cells.append(v4.new_code_cell(_probe_cell(ex.label, checks[ex.label], teacher=True),
                                          metadata={"medeval_probe": ex.label}))
    return v4.new_notebook(cells=cells)


def reference_values(exercises: ChapterExercises, *, cell_timeout: float = DEFAULT_CELL_TIMEOUT_S,
                     timeout: float = DEFAULT_TIMEOUT_S) -> dict:
    """Run the solutions once (isolated, like a submission) and return the hidden checks with every reference
    side replaced by its value: the content of ``hidden-checks.json``.

    Raises ``RuntimeError`` naming the exercise, the check and its message when a solution fails one of its
    own checks, or a reference side cannot be evaluated.
    """
    checks = hidden_checks(exercises)
    nb = _teacher_notebook(exercises, checks)
    probe_cells = {i: c.metadata["medeval_probe"] for i, c in enumerate(nb.cells) if "medeval_probe" in c.metadata}
    run = execute_isolated(nb, cell_timeout=cell_timeout, timeout=timeout, probe_cells=probe_cells)
    if run.stopped:
        raise RuntimeError(f"{exercises.chapter}: the teacher's solutions did not finish: {run.stopped}")
    stored = {}
    for label, cells in checks.items():
        probe = run.probes.get(label)
        if probe is None:
            raise RuntimeError(f"{exercises.chapter}: {label}: the checks did not run on the solution "
                               f"({'; '.join(run.cell_errors.values())[:300]})")
        for check in cells:
            for condition in check.conditions:
                passed, why = _condition_passes(condition, probe)
                if not passed:
                    raise RuntimeError(f"{exercises.chapter}: {label}: the solution fails its check {check.number} "
                                       f"({condition.message or why}): {why}")
                for side in condition.sides:
                    if "reference" in side:
                        side["constant"] = probe["values"][side.pop("reference")]
        stored[label] = [asdict(c) for c in cells]
    return {"chapter": exercises.chapter, "exercises": stored}


def write_hidden_checks(exercises: ChapterExercises, teacher_dir: Path, **timeouts) -> Path:
    """Compute the reference values (:func:`reference_values`) and write them to the teacher folder."""
    path = Path(teacher_dir) / HIDDEN_CHECKS_FILE
    if path.exists():
        path.chmod(0o644)
    path.write_text(json.dumps(reference_values(exercises, **timeouts), indent=1))
    path.chmod(0o444)  # read-only: grading never writes it
    return path


def _parse_checks(text: bytes, path: Path, chapter: str) -> dict[str, list[HiddenCheck]]:
    try:
        data = json.loads(text)
        if data.get("chapter") != chapter:
            raise GradingError(f"{path}: holds the checks of chapter {data.get('chapter')!r}, not {chapter!r}")
        return {label: [HiddenCheck(**{**c, "conditions": [Condition(**d) for d in c["conditions"]]})
                        for c in cells] for label, cells in data["exercises"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        if isinstance(exc, GradingError):
            raise
        raise GradingError(f"{path}: not a readable {HIDDEN_CHECKS_FILE} ({exc}); write it again with "
                           f"`medeval student {chapter}`") from exc


# --------------------------------------------------------------------------------------------------------------
# Comparing, in the grader's process

def _as_array(value):
    import numpy as np

    if isinstance(value, bool):
        return np.asarray(float(value))
    if isinstance(value, dict) and "array" in value:
        return np.asarray(value["array"], dtype=float).reshape(value["shape"])
    return None


def _condition_passes(condition: Condition, probe: dict) -> tuple[bool, str]:
    """Whether one condition holds, and if not, why (never the expected value). What a probe sent is data from
    the submission: anything malformed fails the condition, never the grader."""
    try:
        return _compare(condition, probe)
    except Exception:
        return False, "the value could not be compared"


def _compare(condition: Condition, probe: dict) -> tuple[bool, str]:
    import numpy as np

    values = []
    for side in condition.sides:
        if "constant" in side:
            values.append(side["constant"])
            continue
        key = side.get("probe") or side.get("reference")
        if key in probe["errors"]:
            return False, f"your code raised {probe['errors'][key]}"
        if key not in probe["values"]:
            number = key.split("/")[1]
            error = probe["errors"].get(f"{key.split('/')[0]}/{number}")
            return False, f"your code raised {error}" if error else "this check did not run"
        values.append(probe["values"][key])
    if condition.kind == "true":
        return values[0] is True, "the condition does not hold"
    first, second = values
    if any(isinstance(v, dict) and v.get("type") in ("Ellipsis", "None") for v in values):
        return False, "not answered yet: a value is still `...` or a function returns None"
    a, b = _as_array(first), _as_array(second)
    if a is None or b is None:
        return (condition.kind == "equal" and first == second), "the value is not what was expected"
    try:
        a_b = np.broadcast_arrays(a, b)
    except ValueError:
        return False, f"the shape {a.shape} is not the expected one"
    if condition.kind == "array_equal" or (condition.kind == "equal" and a.shape != b.shape):
        ok = a.shape == b.shape and bool(np.array_equal(a, b))
    elif condition.kind == "equal":
        ok = bool(np.all(a == b))
    else:
        options = {k: v for k, v in condition.options.items() if k in ("rtol", "atol", "equal_nan", "rel_tol",
                                                                          "abs_tol")}
        options = {{"rel_tol": "rtol", "abs_tol": "atol"}.get(k, k): v for k, v in options.items()}
        ok = bool(np.all(np.isclose(*a_b, **options)))
    return ok, "the value is not what was expected"


def score_probe(checks: list[HiddenCheck], probe: dict) -> tuple[float, list[str]]:
    """One exercise's score from its probe: one point per check whose every condition holds (a check is all or
    nothing), and a line per failed check with its message and why (never the expected value)."""
    score, problems = 0.0, []
    for check in checks:
        failures = []
        if probe["values"].get(f"{check.label}/{check.number}/done") is not True:
            error = probe["errors"].get(f"{check.label}/{check.number}")
            if error and error.startswith("AssertionError"):
                # an assert nested in a loop: its own message was computed in the kernel and may hold the
                # expected value, so say what its source says
                nested = [_static_message(n.msg) for n in ast.walk(ast.parse(check.grading_code))
                          if isinstance(n, ast.Assert)]
                failures.append(nested[0] if len(nested) == 1 and nested[0] else "an assertion of this check failed")
            else:
                failures.append(f"your code raised {error}" if error else "this check did not run")
        for condition in check.conditions:
            passed, why = _condition_passes(condition, probe)
            if not passed:
                failures.append(f"{condition.message} ({why})" if condition.message else why)
        if failures:
            problems.append(f"check {check.number} failed: {failures[0]}"[:300])
        else:
            score += 1
    return score, problems


# --------------------------------------------------------------------------------------------------------------
# What a fair answer does not do

def imported_modules(code: str) -> set[str]:
    """The names under which ``code`` binds modules (``import numpy as np`` → ``np``; ``from medeval.metrics
    import curves`` → ``curves``: a lower-case name imported from a package may be a module)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules |= {a.asname or a.name for a in node.names if (a.asname or a.name)[:1].islower()}
    return modules


def suspicious_code(code: str, *, reference_names: set[str] = frozenset(), modules: set[str] = frozenset()
                    ) -> list[str]:
    """Why a cell of a submission looks like an attempt to fool the grader (empty when it does not).

    Flags importing otter, any string that names a ``tests`` folder, assigning to (or ``setattr`` on) an
    attribute of a module (imported in this cell, named in ``modules`` — the notebook's other imports — or
    ``builtins``), and any mention of a name in ``reference_names`` (the medeval functions an exercise's checks
    compare with: calling, importing or redefining them).
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: list[str] = []
    modules = {"builtins", "__builtins__", "np", "numpy", "medeval", *modules}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if any((n or "").split(".")[0] == "otter" for n in names):
                found.append("imports otter")
    modules |= imported_modules(code)
    modules -= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute | ast.Subscript) and isinstance(t.ctx, ast.Store | ast.Del):
                    root = t
                    while isinstance(root, ast.Attribute | ast.Subscript):
                        root = root.value
                    if isinstance(root, ast.Name) and root.id in modules:
                        found.append(f"assigns to {ast.unparse(t)} (a module's attribute)")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            found.append(f"calls {node.func.id}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(
                r"(^|[/\\])tests([/\\]|$)", node.value):
            found.append(f"names a tests folder ({node.value[:40]!r})")
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, ast.alias):
            name = node.asname or node.name.split(".")[-1]
        if name in reference_names:
            found.append(f"uses {name}, the reference implementation the checks compare with")
    return list(dict.fromkeys(found))


# --------------------------------------------------------------------------------------------------------------
# The report

@dataclass
class ExerciseGrade:
    """The score of one exercise: ``score`` is None for an exercise the teacher reads."""

    label: str
    kind: str
    title: str
    points: float
    score: float | None
    problems: list[str] = field(default_factory=list)


@dataclass
class GradeReport:
    """Scores per exercise for one notebook, and what in it looks like an attempt to fool the grader."""

    notebook: Path
    chapter: str
    grades: list[ExerciseGrade]
    flags: list[str] = field(default_factory=list)
    stopped: str | None = None

    @property
    def score(self) -> float:
        return sum(g.score for g in self.grades if g.score is not None)

    @property
    def possible(self) -> float:
        return sum(g.points for g in self.grades if g.score is not None)

    def to_text(self) -> str:
        width = max([len(g.label) for g in self.grades] + [8])
        lines = [f"{self.notebook.name} — chapter {self.chapter}", ""]
        if self.stopped:
            lines += [f"  stopped early: {self.stopped}; the exercises before it are graded", ""]
        for g in self.grades:
            score = "read by the teacher" if g.score is None else f"{g.score:g} / {g.points:g}"
            lines.append(f"  {g.label:<{width}}  {g.kind:<12}  {score}")
            lines.extend(f"  {'':<{width}}    - {p}" for p in g.problems)
        lines += ["", f"  automatic checks: {self.score:g} / {self.possible:g} points"]
        if self.flags:
            lines += ["", "  FLAGGED for the teacher to read:"] + [f"    - {f}" for f in self.flags]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"notebook": str(self.notebook), "chapter": self.chapter, "score": self.score,
                "possible": self.possible, "stopped": self.stopped, "flags": list(self.flags),
                "exercises": [asdict(g) for g in self.grades]}


def _chapter_of(nb, path: Path) -> str:
    meta = nb.metadata.get("medeval", {})
    chapter = meta.get("chapter") if isinstance(meta, dict) else None
    if not chapter:
        raise GradingError(
            f"{path}: this notebook carries no medeval chapter in its metadata; grade a notebook written by "
            "`medeval student` (or pass --chapter)")
    return chapter


_CHECK_CALL = re.compile(r"grader\.check\(\s*['\"]([^'\"]+)['\"]\s*\)")


def _grading_notebook(nb, checks: dict[str, list[HiddenCheck]]):
    """The submission's code cells, without otter's cells, with a probe cell where each ``grader.check`` was
    (or at the end for an exercise whose check cell was removed). Returns the notebook and, per cell, its role
    (``"student"`` or ``"probe"``) with the exercise whose check follows it (``None`` after the last check)."""
    import nbformat

    v4 = nbformat.v4
    cells, owner, pending_cells = [], [], []
    placed = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = cell.source
        lines = [ln for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")]
        if "otter.Notebook(" in source or (lines and all(ln.strip().startswith("grader.") for ln in lines)):
            for label in _CHECK_CALL.findall(source):
                if label in checks and label not in placed:
                    cells.append(v4.new_code_cell(_probe_cell(label, checks[label], teacher=False)))
                    owner.append(("probe", label))
                    for i in pending_cells:
                        owner[i] = ("student", label)
                    pending_cells = []
                    placed.add(label)
            continue
        cells.append(v4.new_code_cell(source))
        owner.append(("student", None))
        pending_cells.append(len(owner) - 1)
    for label in checks:
        if label not in placed:
            cells.append(v4.new_code_cell(_probe_cell(label, checks[label], teacher=False)))
            owner.append(("probe", label))
    out = v4.new_notebook(cells=cells)
    out.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return out, owner


def _check_timeouts(cell_timeout: float, timeout: float) -> None:
    for name, value in (("cell_timeout", cell_timeout), ("timeout", timeout)):
        if not (isinstance(value, int | float) and value > 0):
            raise GradingError(f"{name} must be a positive number of seconds, got {value!r}")


def grade_notebook(notebook: Path, *, chapter: str | None = None, teacher_dir: Path | None = None,
                   source: Path | None = None, cell_timeout: float = DEFAULT_CELL_TIMEOUT_S,
                   timeout: float = DEFAULT_TIMEOUT_S) -> GradeReport:
    """Execute a filled-in student notebook in isolation and score every exercise against the hidden checks.

    The checks and their expected values come from the teacher folder's ``hidden-checks.json`` (``teacher_dir``;
    by default computed afresh from the chapter's source), never from the student's copy. The submission runs
    with errors allowed in a kernel of its own, in an empty folder, each cell for at most ``cell_timeout`` and
    the whole notebook for at most ``timeout`` seconds. A cell that raises costs that exercise its points and is
    reported by name; a cell past its timeout or a dying kernel ends the run, and the exercises probed before
    it keep their scores. Code that looks like an attempt to fool the grader is listed in ``flags``.
    """
    import nbformat

    notebook = Path(notebook)
    if not notebook.is_file():
        raise GradingError(f"{notebook}: no such notebook")
    _check_timeouts(cell_timeout, timeout)
    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception as exc:
        raise GradingError(f"{notebook}: not a readable Jupyter notebook ({exc})") from exc
    chapter = chapter or _chapter_of(nb, notebook)
    exercises = read_exercises(chapter, source)
    stored, original = None, b""
    if teacher_dir is not None:
        stored = Path(teacher_dir) / HIDDEN_CHECKS_FILE
        if not stored.is_file():
            raise GradingError(f"{teacher_dir}: no {HIDDEN_CHECKS_FILE}; write it with `medeval student {chapter}`")
        original = stored.read_bytes()  # held in memory: nothing the submission does to the file counts
        checks = _parse_checks(original, stored, chapter)
    else:
        checks = _parse_checks(json.dumps(reference_values(exercises)).encode(), Path("<computed>"), chapter)
    graded_nb, owner = _grading_notebook(nb, checks)
    run = execute_isolated(graded_nb, cell_timeout=cell_timeout, timeout=timeout,
                           probe_cells={i: label for i, (role, label) in enumerate(owner) if role == "probe"})

    references = {label: {n for c in cells for n in c.reference_names} for label, cells in checks.items()}
    kinds = {ex.label: ex.kind for ex in exercises.exercises}
    flags, errors = [], {}
    if stored is not None and (not stored.is_file() or stored.read_bytes() != original):
        flags.append(f"the teacher's {HIDDEN_CHECKS_FILE} changed while this notebook ran (restored)")
        stored.write_bytes(original)
    modules = set().union(*(imported_modules(c.source) for c in graded_nb.cells))
    setup = {code.strip() for code in exercises.setup_cells}
    for index, (role, label) in enumerate(owner):
        if role != "student":
            continue
        if graded_nb.cells[index].source.strip() in setup:
            label = None  # the setup as handed out: its imports are the chapter's, not the student's
        names = references.get(label, set()) if kinds.get(label) in ("coding", "by-hand") else set()
        where = f"exercise {label}" if label else "a cell outside the exercises"
        for reason in suspicious_code(graded_nb.cells[index].source, reference_names=names, modules=modules):
            flags.append(f"{where}: {reason}")
        if index in run.cell_errors:
            errors.setdefault(label, []).append(f"your code raised {run.cell_errors[index]}")

    grades = []
    for ex in exercises.exercises:
        if not ex.autograded:
            grades.append(ExerciseGrade(ex.label, ex.kind, ex.title, ex.points, None))
            continue
        problems = list(errors.get(ex.label, []))
        probe = run.probes.get(ex.label)
        if probe is None:
            why = run.stopped or "its checks did not run"
            grades.append(ExerciseGrade(ex.label, ex.kind, ex.title, ex.points, 0.0,
                                        problems + [f"not graded: {why}"]))
            continue
        score, failed = score_probe(checks[ex.label], probe)
        grades.append(ExerciseGrade(ex.label, ex.kind, ex.title, float(ex.points), score, problems + failed))
    return GradeReport(notebook, chapter, grades, list(dict.fromkeys(flags)), run.stopped)


# --------------------------------------------------------------------------------------------------------------
# A class folder

def grade_folder(folder: Path, *, chapter: str | None = None, teacher_dir: Path | None = None,
                 source: Path | None = None, cell_timeout: float = DEFAULT_CELL_TIMEOUT_S,
                 timeout: float = DEFAULT_TIMEOUT_S) -> list[GradeReport]:
    """Grade every ``*.ipynb`` in ``folder`` (one per student, named after the student), each in isolation.

    A notebook that cannot be graded at all (unreadable, not a medeval notebook) is reported with no grades and
    its reason in ``stopped``. The reference values are computed once per chapter when ``teacher_dir`` is not
    given.
    """
    import nbformat

    _check_timeouts(cell_timeout, timeout)
    folder = Path(folder)
    if not folder.is_dir():
        raise GradingError(f"{folder}: no such folder")
    notebooks = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    if not notebooks:
        raise GradingError(f"{folder}: holds no .ipynb notebook to grade")
    reports = []
    teacher_dirs: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="medeval-class-") as tmp:
        for path in notebooks:
            try:
                try:
                    nb = nbformat.read(path, as_version=4)
                except Exception as exc:
                    raise GradingError(f"{path}: not a readable Jupyter notebook ({exc})") from exc
                nb_chapter = chapter or _chapter_of(nb, path)
                directory = teacher_dir
                if directory is None:
                    if nb_chapter not in teacher_dirs:
                        teacher_dirs[nb_chapter] = Path(tmp) / nb_chapter
                        teacher_dirs[nb_chapter].mkdir()
                        write_hidden_checks(read_exercises(nb_chapter, source), teacher_dirs[nb_chapter])
                    directory = teacher_dirs[nb_chapter]
                reports.append(grade_notebook(path, chapter=nb_chapter, teacher_dir=directory, source=source,
                                              cell_timeout=cell_timeout, timeout=timeout))
            except GradingError as exc:
                reports.append(GradeReport(path, chapter or "?", [], [], f"not graded: {exc}"))
    return reports


def read_teacher_scores(path: Path) -> dict[tuple[str, str], float]:
    """Scores the teacher gave by hand: a CSV with the columns ``student``, ``exercise`` and ``score``."""
    path = Path(path)
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text())))
    except OSError as exc:
        raise GradingError(f"{path}: cannot read the teacher's scores ({exc})") from exc
    if not rows or not {"student", "exercise", "score"} <= set(rows[0]):
        raise GradingError(f"{path}: expected a CSV with the columns student, exercise, score")
    scores = {}
    for number, row in enumerate(rows, start=2):
        try:
            scores[(row["student"].strip(), row["exercise"].strip())] = float(row["score"])
        except ValueError as exc:
            raise GradingError(f"{path}, line {number}: score {row['score']!r} is not a number") from exc
    return scores


def reports_csv(reports: list[GradeReport], teacher_scores: dict[tuple[str, str], float] | None = None) -> str:
    """One row per student (the notebook's file name without ``.ipynb``): a score column per exercise (teacher-read
    exercises from ``teacher_scores``, blank when not given), the automatic and the total score, the possible
    points, whether the run stopped early and the flags."""
    teacher_scores = teacher_scores or {}
    labels = list(dict.fromkeys(g.label for r in reports for g in r.grades))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "chapter", *labels, "automatic", "total", "possible", "stopped", "flags"])
    for r in reports:
        student = r.notebook.stem
        by_label = {g.label: g for g in r.grades}
        cells, total, possible = [], r.score, r.possible
        for label in labels:
            g = by_label.get(label)
            if g is None:
                cells.append("")
            elif g.score is None:
                given = teacher_scores.get((student, label))
                cells.append("" if given is None else f"{given:g}")
                total += given or 0.0
                possible += g.points
            else:
                cells.append(f"{g.score:g}")
        writer.writerow([student, r.chapter, *cells, f"{r.score:g}", f"{total:g}", f"{possible:g}", r.stopped or "",
                         "; ".join(r.flags)])
    return out.getvalue()
