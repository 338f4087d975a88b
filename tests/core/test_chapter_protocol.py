"""Every chapter follows one protocol (:mod:`medeval.core.chapter`): ``run(P, cache_dir) -> Results`` in its
experiments module; ``claim_inputs(results, P) -> Inputs`` and the ``CLAIMS`` registry in its claims module."""

from __future__ import annotations

import dataclasses
import importlib
import types

import pytest

from medeval.core import claims as C
from medeval.core.chapter import ClaimRegistry, protocol_problems
from medeval.runtime.params import chapters

CHAPTERS = sorted(c.id for c in chapters().values() if c.part == "chapters")
#: chapters being moved onto the protocol (issue #32); strict, so a chapter that follows it must leave this set
NOT_YET: set[str] = set()


def _modules(chapter_id):
    c = chapters()[chapter_id]
    return importlib.import_module(c.experiments_module), importlib.import_module(c.claims_module)


@pytest.mark.parametrize("chapter_id", [pytest.param(c, marks=pytest.mark.xfail(c in NOT_YET, strict=True,
                                                                               reason="not yet on the protocol"))
                                        for c in CHAPTERS])
def test_every_chapter_follows_the_protocol(chapter_id):
    experiments, claims = _modules(chapter_id)
    assert protocol_problems(experiments, claims) == []
    assert claims.CLAIMS.chapter == chapter_id


def test_the_book_s_six_chapters_are_on_the_protocol():
    assert {"01-mil-stability", "02-rodeo", "03-eve", "04a-class-distribution", "04b-evaluation-measures",
            "05-multilabel"} <= set(CHAPTERS)


@dataclasses.dataclass
class _Inputs:
    values: list


def _probe_modules(**claims_attrs):
    experiments = types.ModuleType("probe_experiments")

    @dataclasses.dataclass
    class Results:
        x: int

    def run(P, cache_dir=None) -> Results:
        return Results(1)

    experiments.run, experiments.Results = run, Results
    claims = types.ModuleType("probe_claims")
    claims._Inputs = _Inputs
    for k, v in claims_attrs.items():
        setattr(claims, k, v)
    return experiments, claims


def test_the_protocol_check_fails_on_what_a_chapter_lacks():
    registry = ClaimRegistry("probe", _Inputs)

    @registry.claim("up", "values go up", where="Fig. 1", rules=C.decide_trend, inputs="values",
                    control="the same values shuffled")
    def up(inp):
        return dict(paper="up", rule="trend", ours="—", basis="phantom",
                    decision=C.decide_trend(range(len(inp.values)), inp.values, direction="greater"))

    def claim_inputs(results, P) -> _Inputs:
        return _Inputs([1, 2, 3])

    experiments, claims = _probe_modules(CLAIMS=registry, claim_inputs=claim_inputs)
    assert protocol_problems(experiments, claims) == []
    experiments.run = lambda P: None
    claims.chapter_claims = lambda inp, scale: None
    problems = protocol_problems(experiments, claims)
    assert any("run must take (P, cache_dir=None)" in p for p in problems)
    assert any("annotated to return a dataclass" in p for p in problems)
    assert any("chapter_claims remains" in p for p in problems)
    assert protocol_problems(*_probe_modules()) == [
        "probe_claims has no claim_inputs(results, P)", "probe_claims.CLAIMS must be a ClaimRegistry"]


def test_a_registry_entry_must_name_a_rule_its_inputs_a_control_and_where():
    registry = ClaimRegistry("probe", _Inputs)
    with pytest.raises(ValueError, match="rules must be rules of medeval.core.claims"):
        registry.claim("a", "claim", where="Sec. 1", rules=sorted, inputs="values", control="null")(lambda i: {})
    with pytest.raises(ValueError, match="unknown \\['nope'\\]"):
        registry.claim("b", "claim", where="Sec. 1", rules=C.decide_paired, inputs="nope", control="null")(lambda i: {})
    with pytest.raises(ValueError, match="control is empty"):
        registry.claim("c", "claim", where="Sec. 1", rules=C.decide_paired, inputs="values", control=" ")(lambda i: {})
    with pytest.raises(ValueError, match="where is empty"):
        registry.claim("d", "claim", where="", rules=C.decide_paired, inputs="values", control="null")(lambda i: {})


def test_decide_builds_rows_checks_and_errata_and_refuses_malformed_rows():
    registry = ClaimRegistry("probe", _Inputs)

    @registry.claim("diff", "a above b", where="Table 1", rules=C.decide_difference, inputs="values",
                    control="a null with equal means")
    def diff(inp):
        return dict(paper="0.9 vs 0.8", rule="Welch", ours="—", basis="phantom",
                    decision=C.decide_difference(inp.values, [0.0, 0.1, -0.1, 0.05], direction="greater"))

    @registry.claim("fam-*", where="Fig. 2", rules=C.decide_exact, inputs="values", control="exact", family=True)
    def fam(inp):
        return [dict(id=f"fam-{i}", claim=f"value {i} is positive", paper="+", rule="> 0", ours=str(v),
                     basis="exact", decision=C.decide_exact(v > 0, test="sign", reason_if_not="not positive"))
                for i, v in enumerate(inp.values[:2])]

    @registry.checks
    def checks(cl, inp):
        cl.check("len", where="—", expected="4", computed=str(len(inp.values)), passed=len(inp.values) == 4)

    @registry.errata
    def errata(cl):
        cl.erratum("Table 1", printed="1 + 1 = 3", recomputed="2", note="typo")

    cl = registry.decide(_Inputs([5.0, 5.1, 4.9, 5.05]), scale="smoke")
    assert [c.id for c in cl.claims] == ["diff", "fam-0", "fam-1"]
    assert cl.claims[0].verdict == "[Re]" and cl.claims[0].where == "Table 1" and cl.claims[1].where == "Fig. 2"
    assert len(cl.checks) == 1 and len(cl.errata) == 1
    assert [c.id for c in registry.decide(_Inputs([1.0, 2.0, 3.0, 4.0]), scale="s", only=["diff"]).claims] == ["diff"]
    with pytest.raises(TypeError, match="needs _Inputs"):
        registry.decide({"values": []}, scale="smoke")

    bad = ClaimRegistry("probe", _Inputs)
    bad.claim("x", "x", where="W", rules=C.decide_exact, inputs="values", control="c")(lambda inp: {"paper": "p"})
    with pytest.raises(ValueError, match="row misses"):
        bad.decide(_Inputs([]), scale="smoke")


def test_decide_per_group_combines_what_it_decides_and_says_why_when_nothing_is():
    groups = {"a": [0.2, 0.3, 0.25, 0.31, 0.28], "b": [0.1, 0.2, 0.15, 0.12, 0.18], "skip": None}

    def decide(values):
        return None if values is None else C.decide_paired(values, direction="greater", unit="bags")

    d = C.decide_per_group(groups, decide, if_empty="no groups")
    assert d.verdict == "[Re]" and "2 parts" in d.test
    assert C.decide_per_group({}, decide, if_empty="no dataset has two operators").reason == "no dataset has two operators"
    assert C.decide_per_group({"skip": None}, decide, if_empty="none").verdict == "[n/a]"
    with pytest.raises(TypeError, match="not a Decision"):
        C.decide_per_group({"a": 1}, lambda v: v, if_empty="none")
