"""Chapter parameters: the registry of chapters, their profiles in ``params/<chapter>.yaml``, and resolution.

The schema (a subclass of :class:`medeval.core.schema.ChapterParams` in ``medeval.experiments.<module>``) is the single source of
defaults, ranges and help text. A profile lists only the values that differ from the schema defaults.
Resolution order: schema default < profile < explicit overrides (``--set`` or ``papermill -p``). Every value
is validated before any compute; an error names the parameter and its allowed range.

What the machine must offer is checked next, by the pre-flight (:mod:`medeval.runtime.preflight`, with the memory
this run may use from :mod:`medeval.runtime.resources`); the chapter tables of the README and the book's introduction
are generated from the registry by :mod:`medeval.runtime.chapter_tables`. The pre-flight's and the schema's names stay
importable from here, where the chapters' tests import them.
"""

from __future__ import annotations

import functools
import importlib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError
from pydantic.fields import FieldInfo

from medeval import _yaml
from medeval.core.schema import (  # noqa: F401  (the schema names the runtime's users import from here)
    GIB,
    MIB,
    ChapterParams,
    CrossFieldError,
    Distinct,
    ParameterError,
    PreflightError,
    ResourceEstimate,
    Violation,
    _distinct_entries,
    distinct,
    format_bytes,
    format_seconds,
    ranked_drivers,
    scheduler_endpoint,
)
from medeval.runtime.paths import project_root
from medeval.runtime.preflight import SCHEDULER_TIMEOUT, preflight, scheduler_problems  # noqa: F401  (as above)
from medeval.runtime.resources import available_memory_bytes, parse_memory  # noqa: F401  (as above)

PROFILES = ("smoke", "default", "gpu", "full")
PARTS = ("chapters", "appendix")


@dataclass(frozen=True)
class Chapter:
    """A registry entry, read from ``params/<id>.yaml``."""

    id: str
    title: str
    part: str
    notebook: Path
    schema_path: str
    datasets: tuple[str, ...]
    profiles: dict[str, dict[str, Any]] = field(hash=False)
    yaml_path: Path = field(hash=False, default=Path())
    #: bounds of the executed property-based test: ``field: [lo, hi]`` or ``field: {choices: [...]}``; the
    #: fields not named keep their smoke values, so that every draw runs in seconds
    fuzz: dict[str, Any] = field(hash=False, default_factory=dict)
    #: the chapter's rows of the README and introduction tables: ``label`` (the page's MyST target), ``paper``
    #: and ``reproduces`` (README), ``cite`` (a bibliography key) and ``about`` (introduction)
    summary: dict[str, Any] = field(hash=False, default_factory=dict)

    @property
    def experiments_module(self) -> str:
        """The module of the chapter's ``run`` (:mod:`medeval.core.chapter`): the schema's module without ``_params``."""
        return self.schema_path.partition(":")[0].removesuffix("_params")

    @property
    def claims_module(self) -> str:
        """The module of the chapter's ``claim_inputs`` and ``CLAIMS`` registry: ``<experiments module>_claims``."""
        return self.experiments_module + "_claims"

    @property
    def schema(self) -> type[ChapterParams]:
        module_name, _, attr = self.schema_path.partition(":")
        try:
            schema = getattr(importlib.import_module(module_name), attr or "Params")
        except (ImportError, AttributeError) as exc:
            raise ParameterError(f"{self.yaml_path}: schema {self.schema_path!r} cannot be imported: {exc}") from exc
        if not (isinstance(schema, type) and issubclass(schema, ChapterParams)):
            raise ParameterError(f"{self.yaml_path}: schema {self.schema_path!r} is not a ChapterParams subclass")
        return schema


def load_chapter(path: Path) -> Chapter:
    try:
        raw = _yaml.safe_load(path.read_text()) or {}
    except _yaml.YAMLExpansionError as exc:
        raise ParameterError(f"{path}: {exc}") from None
    required = ("title", "notebook", "schema", "profiles")
    missing = [k for k in required if k not in raw]
    if missing:
        raise ParameterError(f"{path}: missing keys {missing}; expected {list(required)} (+ part, datasets)")
    profiles = raw["profiles"] or {}
    unknown = sorted(set(profiles) - set(PROFILES))
    if unknown or set(profiles) != set(PROFILES):
        raise ParameterError(f"{path}: profiles must be exactly {list(PROFILES)}; got {sorted(profiles)}")
    part = raw.get("part", "chapters")
    if part not in PARTS:
        raise ParameterError(f"{path}: part must be one of {list(PARTS)}, got {part!r}")
    return Chapter(
        id=path.stem,
        title=raw["title"],
        part=part,
        notebook=project_root() / raw["notebook"],
        schema_path=raw["schema"],
        datasets=tuple(raw.get("datasets") or ()),
        profiles={k: dict(v or {}) for k, v in profiles.items()},
        yaml_path=path,
        fuzz=dict(raw.get("fuzz") or {}),
        summary=dict(raw.get("summary") or {}),
    )


def chapters() -> dict[str, Chapter]:
    """All chapters and appendix pages, in book order (by id)."""
    paths = sorted((project_root() / "params").glob("*.yaml"))
    return {p.stem: _load_chapter_cached(p, p.stat().st_mtime_ns) for p in paths}


@functools.lru_cache(maxsize=256)
def _load_chapter_cached(path: Path, mtime_ns: int) -> Chapter:
    """:func:`load_chapter`, read again only when the file changed (every parameter resolution lists them)."""
    return load_chapter(path)


def get_chapter(chapter_id: str) -> Chapter:
    known = chapters()
    if chapter_id not in known:
        raise ParameterError(f"unknown chapter {chapter_id!r}; valid chapters: {', '.join(known) or '(none)'}")
    return known[chapter_id]


def allowed_range(info) -> str:
    """A human-readable description of a field's type and bounds, e.g. ``integer, >= 2, <= 50``."""
    return _describe(info.annotation, info.metadata)


def _bounds_text(metadata) -> list[str]:
    parts = []
    for meta in metadata:
        if isinstance(meta, FieldInfo):  # Annotated[int, Field(ge=...)]: its constraints are in its metadata
            parts += _bounds_text(meta.metadata)
            continue
        for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            bound = getattr(meta, attr, None)
            if bound is not None:
                parts.append(f"{sym} {bound}")
        for attr, words in (("min_length", "at least"), ("max_length", "at most")):
            length = getattr(meta, attr, None)
            if length is not None:
                parts.append(f"{words} {length} {'entry' if length == 1 else 'entries'}")
        if getattr(meta, "func", None) is _distinct_entries:
            parts.append("distinct entries")
    return parts


def _describe(annotation, metadata=()) -> str:
    if typing.get_origin(annotation) is typing.Annotated:
        args = typing.get_args(annotation)
        return _describe(args[0], (*metadata, *annotation.__metadata__))
    return ", ".join([_type_name(annotation), *_bounds_text(metadata)])


def _type_name(annotation) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " or ".join(_describe(a) for a in args)
    if origin in (list, tuple, set):
        return f"list of ({', '.join(_describe(a) for a in args if a is not Ellipsis)})"
    if origin is dict:
        return "mapping"
    return {int: "integer", float: "number", bool: "true/false", str: "text", type(None): "null"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def _validation_message(chapter_id: str, schema: type[ChapterParams], exc: ValidationError, values: dict) -> str:
    lines = [f"invalid parameters for chapter {chapter_id!r}:"]
    for err in exc.errors():
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, CrossFieldError):
            for v in cause.violations:
                shown = ", ".join(f"{f}={values.get(f, schema.model_fields[f].default)!r}" for f in v.fields
                                  if f in schema.model_fields)
                lines.append(f"  parameters {shown}: {v.rule}")
            continue
        msg = err["msg"].removeprefix("Value error, ")
        if not err["loc"]:  # a model-level rule that is not a CrossFieldError: its message must name the fields
            lines.append(f"  {msg}")
            continue
        name = str(err["loc"][0])
        if err["type"] == "extra_forbidden":
            lines.append(
                f"  unknown parameter {name!r}; valid parameters: {', '.join(schema.model_fields)}"
            )
            continue
        info = schema.model_fields.get(name)
        allowed = allowed_range(info) if info is not None else "?"
        where = "".join(f" entry {i}:" for i in err["loc"][1:] if isinstance(i, int))
        lines.append(f"  parameter {name!r} = {values.get(name)!r}:{where} {msg} (allowed: {allowed})")
    return "\n".join(lines)


def check_profile(*profiles: str | None) -> None:
    """Refuse any profile (None = not given) that is not one of :data:`PROFILES`, naming all of them at once."""
    bad = [p for p in profiles if p is not None and p not in PROFILES]
    if bad:
        names = ", ".join(repr(p) for p in bad)
        raise ParameterError(f"unknown profile{'s' if len(bad) > 1 else ''} {names}; valid profiles: "
                             f"{', '.join(PROFILES)}")


def resolve_params(chapter_id: str, profile: str = "default", overrides: dict[str, Any] | None = None):
    """Schema defaults < profile < overrides, validated. Raises :class:`ParameterError`."""
    chapter = get_chapter(chapter_id)
    check_profile(profile)
    schema = chapter.schema
    values = {**chapter.profiles[profile], **(overrides or {})}
    try:
        return schema(**values)
    except ValidationError as exc:
        raise ParameterError(_validation_message(chapter_id, schema, exc, values)) from None


def parse_assignment(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as YAML (``3``, ``0.5``, ``true``, ``[a, b]``, ``null``)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ParameterError(f"--set expects key=value, got {text!r}")
    try:
        parsed = _yaml.safe_load(value)
    except _yaml.YAMLExpansionError as exc:
        raise ParameterError(f"--set {key.strip()}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ParameterError(f"--set {key}: cannot read value {value!r}: {exc}") from None
    return key.strip(), parsed


def describe_schema(chapter_id: str) -> str:
    """The text ``medeval params CHAPTER`` prints: every field, its allowed range, defaults per profile, help."""
    chapter = get_chapter(chapter_id)
    schema = chapter.schema
    lines = [f"{chapter.id}: {chapter.title}", f"schema {chapter.schema_path}; profiles in {chapter.yaml_path.name}", ""]
    for name, info in schema.model_fields.items():
        lines.append(f"{name}  ({allowed_range(info)})")
        lines.append(f"    default: {info.default!r}")
        for profile in PROFILES:
            if name in chapter.profiles[profile]:
                lines.append(f"    {profile}: {chapter.profiles[profile][name]!r}")
        if info.description:
            lines.append(f"    {info.description}")
    return "\n".join(lines)
