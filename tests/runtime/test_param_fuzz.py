"""Property-based tests of the chapters' parameters (issue #17, items 1, 2 and 4).

* Every parameter set drawn from a schema's declared ranges is either accepted (its resource estimate computes)
  or refused before any compute by a message that names the field(s) and the constraint.
* Validation and the pre-flight hook import nothing heavy: the CLI refuses a bad ``--set`` before numpy, torch or
  papermill load.

Draws: :func:`declared_overrides` takes every field from its schema's declared range (``ge``/``le``,
``Literal`` choices, list item types); :func:`bounded_overrides` the fields of a chapter's ``fuzz:`` section in
``params/<id>.yaml`` from the bounds stated there, the rest at their smoke values.

* ``make fuzz`` (``MEDEVAL_FUZZ_EXAMPLES=N``): N draws per chapter from the bounds of its ``fuzz:`` section are
  *executed* under the smoke profile; each must be refused before a kernel starts or run to completion.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medeval.runtime.params import (
    GIB,
    ChapterParams,
    ParameterError,
    PreflightError,
    chapters,
    resolve_params,
)
from medeval.runtime.preflight import preflight

CHAPTERS = list(chapters())
HEAVY = ("numpy", "pandas", "scipy", "torch", "matplotlib", "sklearn", "papermill", "jupytext", "nbformat")
FUZZ_EXAMPLES = int(os.environ.get("MEDEVAL_FUZZ_EXAMPLES", "0"))

#: fields every chapter has that the fuzz keeps fixed: the seed changes nothing structural, the device and the
#: scheduler are the machine's business, and the pool size only changes how runs are spread
FIXED = {"seed", "device", "scheduler", "max_workers"}
#: the upper end drawn for an integer or number field without a declared upper bound
OPEN_UPPER = 10**6


def _bounds(metadata) -> dict[str, Any]:
    out = {}
    for meta in metadata:
        for attr in ("ge", "gt", "le", "lt", "min_length", "max_length"):
            value = getattr(meta, attr, None)
            if value is not None:
                out[attr] = value
    return out


def strategy_for(annotation, metadata=()) -> st.SearchStrategy:
    """A strategy for a value of ``annotation`` within the bounds in ``metadata`` (pydantic's field metadata)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return strategy_for(args[0], (*metadata, *annotation.__metadata__))
    b = _bounds(metadata)
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([strategy_for(a, metadata) if a is not type(None) else st.none() for a in args])
    if origin in (list, tuple, set):
        item = strategy_for(args[0]) if args else st.integers(0, 10)
        return st.lists(item, min_size=b.get("min_length", 0), max_size=min(b.get("max_length", 6), 6))
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        lo = b.get("ge", b["gt"] + 1 if "gt" in b else -OPEN_UPPER)
        hi = b.get("le", b["lt"] - 1 if "lt" in b else OPEN_UPPER)
        return st.integers(lo, hi)
    if annotation is float:
        lo = b.get("ge", b.get("gt", -OPEN_UPPER))
        hi = b.get("le", b.get("lt", OPEN_UPPER))
        return st.floats(lo, hi, exclude_min="gt" in b, exclude_max="lt" in b, allow_nan=False)
    if annotation is str:
        return st.text(max_size=12)
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):  # a nested pydantic model
        return st.fixed_dictionaries({}, optional={
            name: strategy_for(f.annotation, f.metadata) for name, f in annotation.model_fields.items()})
    raise TypeError(f"no strategy for {annotation!r}")


def declared_overrides(schema) -> st.SearchStrategy[dict[str, Any]]:
    """Any subset of the schema's fields, each from its declared range."""
    fields = {name: strategy_for(info.annotation, info.metadata)
              for name, info in schema.model_fields.items() if name not in FIXED}
    return st.fixed_dictionaries({}, optional=fields)


def bounded_overrides(fuzz: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Any subset of the fields in a chapter's ``fuzz:`` section, each from its bounds there."""
    def one(spec):
        if isinstance(spec, dict):
            return st.sampled_from(spec["choices"])
        lo, hi = spec
        if isinstance(lo, int) and isinstance(hi, int):
            return st.integers(lo, hi)
        return st.floats(float(lo), float(hi), allow_nan=False)

    return st.fixed_dictionaries({}, optional={name: one(spec) for name, spec in fuzz.items()})


def _names_a_field(message: str, fields) -> bool:
    return any(re.search(rf"(?<![\w]){re.escape(f)}(?![\w])", message) for f in fields)


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_declared_draws_are_accepted_or_refused_naming_the_field(chapter_id):
    schema = chapters()[chapter_id].schema
    fields = [f for f in schema.model_fields if f not in FIXED]

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(declared_overrides(schema))
    def check(overrides):
        try:
            params = resolve_params(chapter_id, "smoke", overrides)
        except ParameterError as exc:
            message = str(exc)
            assert "'?'" not in message and "(Annotated)" not in message, message
            assert _names_a_field(message, overrides), f"refusal names none of {sorted(overrides)}:\n{message}"
            return
        estimate = params.resource_estimate()
        assert estimate.peak_bytes >= ChapterParams.base_memory // 2
        assert set(estimate.drivers) <= set(fields), estimate.drivers
        try:
            preflight(chapter_id, params, available=1024 * GIB)
        except PreflightError as exc:  # data absent here, or an estimate above a terabyte: named
            assert "dataset" in str(exc) or _names_a_field(str(exc), estimate.drivers), str(exc)

    check()


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_an_estimate_above_the_available_memory_is_refused_with_its_drivers(chapter_id):
    params = resolve_params(chapter_id, "smoke")
    estimate = params.resource_estimate()
    with pytest.raises(PreflightError, match="exceeds the .* available") as err:
        preflight(chapter_id, params, available=estimate.peak_bytes // 2)
    assert all(name in str(err.value) for name in estimate.drivers)


def test_validation_and_preflight_import_nothing_heavy():
    """Resolving and pre-flighting every chapter's parameters in a fresh interpreter loads none of the heavy
    libraries, so a refusal is fast."""
    code = (
        "import sys, json\n"
        "from medeval.runtime.params import chapters, resolve_params\nfrom medeval.runtime.preflight import preflight\n"
        "out = {}\n"
        "for cid in chapters():\n"
        "    P = resolve_params(cid, 'smoke'); P.resource_estimate()\n"
        f"    out[cid] = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == {cid: [] for cid in CHAPTERS}, loaded


@pytest.mark.parametrize(("chapter_id", "assignment", "field"), [
    ("01-mil-stability", "image_size=9999", "image_size"),
    ("04a-class-distribution", "evaluation_tile=3", "evaluation_tile"),
])
def test_cli_refuses_before_loading_the_runner(chapter_id, assignment, field):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "medeval.cli", "run", chapter_id, "--profile", "smoke",
         "--set", assignment], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr[-2000:]
    message = [line for line in proc.stderr.splitlines() if not line.startswith("import time:")]
    assert any(field in line for line in message), message
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert not {m for m in imported if m.split(".")[0] in HEAVY}, sorted(m for m in imported if m in HEAVY)


@pytest.mark.skipif(FUZZ_EXAMPLES <= 0, reason="executed fuzz: `make fuzz` (MEDEVAL_FUZZ_EXAMPLES=N)")
@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_bounded_draws_run_or_are_refused_before_compute(chapter_id, tmp_path, monkeypatch):
    from medeval.runtime.execution import run_chapter

    chapter = chapters()[chapter_id]
    assert chapter.fuzz, f"params/{chapter_id}.yaml has no fuzz: section"
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    stats = {"chapter": chapter_id, "draws": 0, "refused": 0, "completed": 0, "failed": 0, "refusals": [],
             "seconds": []}

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(bounded_overrides(chapter.fuzz))
    def check(overrides):
        stats["draws"] += 1
        t0 = time.perf_counter()
        try:
            run_chapter(chapter_id, "smoke", overrides, log=lambda msg: None)
        except ParameterError as exc:  # refused before a kernel started
            stats["refused"] += 1
            stats["refusals"].append(str(exc).splitlines()[1:])
            assert _names_a_field(str(exc), overrides) or "dataset" in str(exc), str(exc)
            return
        except Exception:
            stats["failed"] += 1
            raise
        stats["completed"] += 1
        stats["seconds"].append(round(time.perf_counter() - t0, 1))

    try:
        check()
    finally:
        report = Path(os.environ.get("MEDEVAL_FUZZ_REPORT", "_build/fuzz"))
        report.mkdir(parents=True, exist_ok=True)
        (report / f"{chapter_id}.json").write_text(json.dumps(stats, indent=1))


# ---- invalid draws: every one refused before compute (issue #35, item 1) ------------------------------------


def _numeric_list_fields(schema) -> dict[str, tuple[float, float]]:
    """Fields that are lists of numbers, with their elements' (lower, upper) bounds."""
    out = {}
    for name, info in schema.model_fields.items():
        annotation = info.annotation
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) is not list or not args:
            continue
        element = args[0]
        if typing.get_origin(element) is not typing.Annotated or typing.get_args(element)[0] not in (int, float):
            continue
        b = _bounds([m for a in typing.get_args(element)[1:] for m in getattr(a, "metadata", [a])])
        out[name] = (b.get("ge", b.get("gt")), b.get("le", b.get("lt")))
    return out


def _alias_bomb(levels: int, width: int) -> str:
    nodes = ["&a0 [" + ", ".join(["1"] * width) + "]"]
    nodes += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "[" + ", ".join(nodes) + "]"


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_invalid_draws_are_refused_naming_what_is_wrong(chapter_id):
    """Hypothesis draws invalid inputs of four kinds and every one is refused before any compute, naming the field
    or variable: a list element beyond its bound, a YAML alias bomb, a malformed scheduler address, a bad
    MEDEVAL_* variable."""
    from medeval.runtime.environment import environment_problems
    from medeval.runtime.params import parse_assignment

    schema = chapters()[chapter_id].schema
    lists = _numeric_list_fields(schema)

    def out_of_bounds(name):
        lower, upper = lists[name]
        is_int = typing.get_args(typing.get_args(schema.model_fields[name].annotation)[0])[0] is int
        below = (lower - 1 if is_int else lower - 0.5) if lower is not None else None
        above = (upper + 1 if is_int else upper + 0.5) if upper is not None else None
        return st.sampled_from([v for v in (below, above) if v is not None])

    kinds = [
        st.tuples(st.just("scheduler"), st.text(max_size=30).filter(lambda t: "://" not in t)),
        st.tuples(st.just("bomb"), st.tuples(st.integers(6, 9), st.integers(8, 12))),
        st.tuples(st.just("env"), st.sampled_from(["MEDEVAL_KEEP_RUNS", "MEDEVAL_GRID_FRESH", "MEDEVAL_NUMERICS",
                                                   "MEDEVAL_PROBE_SECONDS", "MEDEVAL_KEEP_RUN"])),
    ]
    if lists:
        kinds.append(st.tuples(st.just("element"), st.sampled_from(sorted(lists)).flatmap(
            lambda name: st.tuples(st.just(name), out_of_bounds(name)))))

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(kinds))
    def check(draw):
        kind, value = draw
        if kind == "env":
            problems = environment_problems({value: "not-a-value"})
            assert len(problems) == 1 and problems[0].startswith(value), problems
            return
        if kind == "bomb":
            with pytest.raises(ParameterError, match="expands to more than"):
                parse_assignment(f"{next(iter(lists), 'seed')}={_alias_bomb(*value)}")
        elif kind == "scheduler":
            with pytest.raises(ParameterError, match="scheduler"):
                resolve_params(chapter_id, "smoke", {"scheduler": value})
        else:
            name, bad = value
            smoke = resolve_params(chapter_id, "smoke")
            with pytest.raises(ParameterError, match=re.escape(name)):
                resolve_params(chapter_id, "smoke", {name: [*getattr(smoke, name)[:-1], bad]})

    check()
