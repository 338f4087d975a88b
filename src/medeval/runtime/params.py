"""Chapter parameters: one pydantic schema per chapter, profiles in ``params/<chapter>.yaml``.

The schema (a subclass of :class:`ChapterParams` in ``medeval.experiments.<module>``) is the single source of
defaults, ranges and help text. A profile lists only the values that differ from the schema defaults.
Resolution order: schema default < profile < explicit overrides (``--set`` or ``papermill -p``). Every value
is validated before any compute; an error names the parameter and its allowed range.
"""

from __future__ import annotations

import importlib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from medeval.runtime.paths import project_root

PROFILES = ("smoke", "default", "gpu", "full")
PARTS = ("chapters", "appendix")


class ParameterError(ValueError):
    """An unknown chapter, profile or parameter, or a value outside its allowed range."""


class ChapterParams(BaseModel):
    """Fields every chapter has. Chapters subclass this and add their own fields with ``Field(...)``."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    seed: int = Field(0, ge=0, le=2**31 - 1, description="master random seed of the chapter")
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="torch device: 'auto' picks CUDA when present, else the CPU"
    )
    scheduler: str | None = Field(
        None, description="Dask scheduler address (e.g. tcp://host:8786) for grids of runs; null = local processes"
    )
    max_workers: int | None = Field(
        None, ge=1, le=1024, description="local process-pool size for grids of runs; null = number of cores"
    )


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
    raw = yaml.safe_load(path.read_text()) or {}
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
    )


def chapters() -> dict[str, Chapter]:
    """All chapters and appendix pages, in book order (by id)."""
    paths = sorted((project_root() / "params").glob("*.yaml"))
    return {p.stem: load_chapter(p) for p in paths}


def get_chapter(chapter_id: str) -> Chapter:
    known = chapters()
    if chapter_id not in known:
        raise ParameterError(f"unknown chapter {chapter_id!r}; valid chapters: {', '.join(known) or '(none)'}")
    return known[chapter_id]


def allowed_range(info) -> str:
    """A human-readable description of a field's type and bounds, e.g. ``integer, 2 <= value <= 50``."""
    parts = [_type_name(info.annotation)]
    for meta in info.metadata:
        for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            bound = getattr(meta, attr, None)
            if bound is not None:
                parts.append(f"{sym} {bound}")
    return ", ".join(parts)


def _type_name(annotation) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " or ".join(_type_name(a) for a in args)
    if origin in (list, tuple, set):
        return f"list of ({', '.join(_type_name(a) for a in args if a is not Ellipsis)})"
    if origin is dict:
        return "mapping"
    return {int: "integer", float: "number", bool: "true/false", str: "text", type(None): "null"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def _validation_message(chapter_id: str, schema: type[ChapterParams], exc: ValidationError, values: dict) -> str:
    lines = [f"invalid parameters for chapter {chapter_id!r}:"]
    for err in exc.errors():
        name = str(err["loc"][0]) if err["loc"] else "?"
        if err["type"] == "extra_forbidden":
            lines.append(
                f"  unknown parameter {name!r}; valid parameters: {', '.join(schema.model_fields)}"
            )
            continue
        info = schema.model_fields.get(name)
        allowed = allowed_range(info) if info is not None else "?"
        lines.append(f"  parameter {name!r} = {values.get(name)!r}: {err['msg']} (allowed: {allowed})")
    return "\n".join(lines)


def resolve_params(chapter_id: str, profile: str = "default", overrides: dict[str, Any] | None = None):
    """Schema defaults < profile < overrides, validated. Raises :class:`ParameterError`."""
    chapter = get_chapter(chapter_id)
    if profile not in PROFILES:
        raise ParameterError(f"unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
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
        parsed = yaml.safe_load(value)
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
