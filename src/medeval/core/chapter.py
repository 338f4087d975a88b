"""The chapter protocol: every chapter is entered, run and judged the same way.

A chapter is two modules of :mod:`medeval.experiments`, named in its ``params/<id>.yaml``:

``experiments: medeval.experiments.<name>``
    ``run(P, cache_dir=None) -> Results``: every computation of the chapter for the parameters ``P`` (the grids of
    runs go through :func:`medeval.runtime.grid.run_grid`, cached under ``cache_dir``), returned as one typed
    record, a dataclass the module defines. The notebook calls it once and then only displays, records and
    explains what it holds.
``claims: medeval.experiments.<name>_claims``
    ``claim_inputs(results, P) -> Inputs``: the small tidy tables the claims are decided from (a dataclass), and
    ``CLAIMS``, a :class:`ClaimRegistry`: one declarative entry per claim (:meth:`ClaimRegistry.claim`), naming
    its rule from :mod:`medeval.core.claims`, the fields of ``Inputs`` it reads, its control (what the rule is run
    on to show that it can fail) and where the paper makes the claim; plus the chapter's checks and errata.
    ``CLAIMS.decide(inputs, scale=profile)`` returns the :class:`~medeval.core.claims.ClaimList` that
    :func:`medeval.runtime.notebook.claims_sections` records and shows.

The unit tests of a chapter build ``Inputs`` from a few constructed rows and call ``CLAIMS.decide`` on them.
:func:`protocol_problems` says what a chapter's modules lack; a test runs it on every chapter.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from medeval.core.claims import RULES, ClaimList, Decision

#: what a claim's decide function returns, besides the decision: the row's text fields (``substitution`` optional)
ROW_FIELDS = ("paper", "rule", "ours", "basis", "decision")
OPTIONAL_ROW_FIELDS = ("substitution",)


@dataclass(frozen=True)
class ClaimSpec:
    """One entry of a chapter's claims registry.

    ``id`` (a fnmatch pattern such as ``t44-*`` for a family of rows decided together), ``claim`` (the paper's
    claim in one sentence; empty for a family, whose rows carry their own), ``where`` (the paper's section,
    figure, table or equation), ``rules`` (the rules of :mod:`medeval.core.claims` that decide it, by their
    functions), ``inputs`` (the fields of the chapter's ``Inputs`` it reads), ``control`` (what the rule is run on
    to show that it can fail on these data: a null, the unconfounded group, random inputs, ...; where it is tested)
    and ``decide``, the function of ``Inputs`` that returns the row (or, for a family, the rows).
    """

    id: str
    claim: str
    where: str
    rules: tuple[Callable[..., Decision], ...]
    inputs: tuple[str, ...]
    control: str
    decide: Callable[[Any], Any]
    family: bool = False

    def rows(self, inputs) -> list[dict]:
        """The decided row(s) as :meth:`ClaimList.claim` keyword arguments, validated."""
        out = self.decide(inputs)
        if self.family:
            if not isinstance(out, list | tuple):
                raise TypeError(f"claim family {self.id!r}: its decide function must return a list of rows")
            rows = [dict(r) for r in out]
        else:
            if not isinstance(out, Mapping):
                raise TypeError(f"claim {self.id!r}: its decide function must return a mapping of {ROW_FIELDS}")
            rows = [{"id": self.id, "claim": self.claim, "where": self.where, **out}]
        for r in rows:
            r.setdefault("where", self.where)
            missing = [k for k in ("id", "claim", *ROW_FIELDS) if k not in r]
            extra = sorted(set(r) - {"id", "claim", "where", *ROW_FIELDS, *OPTIONAL_ROW_FIELDS})
            if missing or extra:
                raise ValueError(f"claim {r.get('id', self.id)!r}: row misses {missing} or has unknown fields {extra}")
            if not isinstance(r["decision"], Decision):
                raise TypeError(f"claim {r['id']!r}: 'decision' must be a Decision, got {type(r['decision']).__name__}")
            if not fnmatch.fnmatchcase(r["id"], self.id):
                raise ValueError(f"claim family {self.id!r} returned a row with id {r['id']!r} outside its pattern")
        return rows


@dataclass
class ClaimRegistry:
    """A chapter's claims, checks and errata, declared once, decided by :meth:`decide`.

    ``chapter`` is the chapter id, ``inputs`` the dataclass its decide functions take. Claims are registered with
    the :meth:`claim` decorator in the order of the Paper-vs-us table; checks and errata with :meth:`checks` and
    :meth:`errata` (functions of ``(claim_list, inputs)`` that add rows)."""

    chapter: str
    inputs: type
    specs: list[ClaimSpec] = field(default_factory=list)
    check_builders: list[Callable[[ClaimList, Any], None]] = field(default_factory=list)
    erratum_builders: list[Callable[..., None]] = field(default_factory=list)

    def claim(self, id: str, claim: str = "", *, where: str, rules, inputs, control: str, family: bool = False):
        """Register the decorated function ``f(inputs) -> {paper, rule, ours, basis, decision[, substitution]}``
        (for ``family=True``: a list of such rows, each with its own ``id``, ``claim`` and optionally ``where``)."""
        rules = tuple(rules) if isinstance(rules, list | tuple) else (rules,)
        inputs = (inputs,) if isinstance(inputs, str) else tuple(inputs)

        def register(decide):
            spec = ClaimSpec(id=id, claim=claim, where=where, rules=rules, inputs=inputs, control=control,
                             decide=decide, family=family)
            problems = spec_problems(spec, self.inputs)
            if any(s.id == id for s in self.specs):
                problems.append(f"duplicate claim id {id!r}")
            if problems:
                raise ValueError(f"{self.chapter}: claim {id!r}: " + "; ".join(problems))
            self.specs.append(spec)
            return decide

        return register

    def checks(self, build: Callable[[ClaimList, Any], None]):
        """Register ``build(claim_list, inputs)``, which adds the chapter's checks (decorator)."""
        self.check_builders.append(build)
        return build

    def errata(self, build: Callable[..., None]):
        """Register ``build(claim_list)`` or ``build(claim_list, inputs)``, which adds errata (decorator)."""
        self.erratum_builders.append(build)
        return build

    def spec(self, id: str) -> ClaimSpec:
        for s in self.specs:
            if s.id == id or fnmatch.fnmatchcase(id, s.id):
                return s
        raise KeyError(f"{self.chapter}: no claim {id!r}; registered: {[s.id for s in self.specs]}")

    def decide(self, inputs, *, scale: str, only: Iterable[str] | None = None) -> ClaimList:
        """Every claim, check and erratum decided from ``inputs`` (an instance of :attr:`inputs`); ``only`` decides
        the named claims alone (no checks or errata), for tests."""
        if not isinstance(inputs, self.inputs):
            raise TypeError(f"{self.chapter}: CLAIMS.decide needs {self.inputs.__name__}, got {type(inputs).__name__}")
        wanted = None if only is None else set(only)
        cl = ClaimList(scale)
        for spec in self.specs:
            if wanted is not None and spec.id not in wanted:
                continue
            for row in spec.rows(inputs):
                cl.claim(**row)
        if wanted is None:
            for build in self.check_builders:
                build(cl, inputs)
            for build in self.erratum_builders:
                build(cl, inputs) if len(inspect.signature(build).parameters) > 1 else build(cl)
        return cl


def spec_problems(spec: ClaimSpec, inputs_type: type) -> list[str]:
    """What a registry entry lacks: a rule of :mod:`medeval.core.claims`, inputs that are fields of the chapter's
    ``Inputs``, a control, the paper's location."""
    problems = []
    if not spec.rules or any(r not in RULES for r in spec.rules):
        bad = [getattr(r, "__name__", repr(r)) for r in spec.rules if r not in RULES]
        problems.append(f"rules must be rules of medeval.core.claims ({', '.join(sorted(f.__name__ for f in RULES))})"
                        + (f"; not {bad}" if bad else ""))
    names = {f.name for f in dataclasses.fields(inputs_type)} if dataclasses.is_dataclass(inputs_type) else set()
    unknown = [i for i in spec.inputs if i not in names]
    if not spec.inputs or unknown:
        problems.append(f"inputs must name fields of {inputs_type.__name__}" + (f"; unknown {unknown}" if unknown else ""))
    if not spec.control.strip():
        problems.append("control is empty: say what the rule is run on to show that it can fail")
    if not spec.where.strip():
        problems.append("where is empty: the paper's section, figure, table or equation")
    if not spec.family and not spec.claim.strip():
        problems.append("claim is empty")
    return problems


def _returns(function, module: ModuleType):
    """The return annotation of ``function``, resolved in ``module``."""
    try:
        return typing.get_type_hints(function, vars(module)).get("return")
    except Exception:  # noqa: BLE001 - an unresolvable annotation is reported as missing
        return None


def protocol_problems(experiments: ModuleType, claims: ModuleType) -> list[str]:
    """What a chapter's two modules lack of the protocol (empty when it follows it)."""
    problems = []
    run = getattr(experiments, "run", None)
    if not callable(run):
        problems.append(f"{experiments.__name__} has no run(P, cache_dir=None)")
    else:
        params = list(inspect.signature(run).parameters.values())
        if len(params) < 2 or params[0].name != "P" or params[1].name != "cache_dir" or params[1].default is not None:
            problems.append(f"{experiments.__name__}.run must take (P, cache_dir=None)")
        if any(p.default is inspect.Parameter.empty for p in params[2:]):
            problems.append(f"{experiments.__name__}.run: parameters after cache_dir must have defaults")
        results = _returns(run, experiments)
        if not (isinstance(results, type) and dataclasses.is_dataclass(results)):
            problems.append(f"{experiments.__name__}.run must be annotated to return a dataclass (the chapter's Results)")
    inputs_fn = getattr(claims, "claim_inputs", None)
    registry = getattr(claims, "CLAIMS", None)
    if not callable(inputs_fn):
        problems.append(f"{claims.__name__} has no claim_inputs(results, P)")
    else:
        params = list(inspect.signature(inputs_fn).parameters.values())
        if len(params) < 2 or [p.name for p in params[:2]] != ["results", "P"]:
            problems.append(f"{claims.__name__}.claim_inputs must take (results, P)")
        if any(p.default is inspect.Parameter.empty for p in params[2:]):
            problems.append(f"{claims.__name__}.claim_inputs: parameters after P must have defaults")
        if isinstance(registry, ClaimRegistry) and _returns(inputs_fn, claims) is not registry.inputs:
            problems.append(f"{claims.__name__}.claim_inputs must be annotated to return {registry.inputs.__name__}")
    if not isinstance(registry, ClaimRegistry):
        problems.append(f"{claims.__name__}.CLAIMS must be a ClaimRegistry")
    else:
        if not registry.specs:
            problems.append(f"{claims.__name__}.CLAIMS registers no claim")
        for spec in registry.specs:
            problems += [f"claim {spec.id!r}: {p}" for p in spec_problems(spec, registry.inputs)]
    if hasattr(claims, "chapter_claims"):
        problems.append(f"{claims.__name__}.chapter_claims remains: CLAIMS.decide replaces it")
    return problems

