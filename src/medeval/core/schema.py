"""The parameter schema every chapter builds on: :class:`ChapterParams` and its vocabulary.

A chapter's parameters are one pydantic model, a subclass of :class:`ChapterParams` in
``medeval.experiments.<chapter>_params``: the single source of defaults, ranges and help text. Cross-field rules
(:meth:`ChapterParams.violations`) and the resource model (:class:`ResourceEstimate`) live on the schema, so that
every value is checked before any compute. The registry of chapters, the profiles and the pre-flight that uses
them are the runtime's (:mod:`medeval.runtime.params`).
"""

from __future__ import annotations

import os
import re
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator


class ParameterError(ValueError):
    """An unknown chapter, profile or parameter, or a value outside its allowed range."""


class PreflightError(ParameterError):
    """Valid parameters that this machine cannot run: data missing or incomplete, no CUDA, too little memory."""


class Violation(NamedTuple):
    """One broken cross-field rule: the fields it involves and the rule, in words."""

    fields: tuple[str, ...]
    rule: str


class CrossFieldError(ValueError):
    """Raised by :meth:`ChapterParams.violations` checks; carries every broken rule."""

    def __init__(self, violations: Sequence[Violation]):
        self.violations = tuple(violations)
        super().__init__("; ".join(f"{', '.join(v.fields)}: {v.rule}" for v in self.violations))


def distinct(values: list) -> list:
    """A list-field validator: refuses repeated entries (a repeated size or threshold would be computed twice and
    counted twice in every summary), naming them."""
    seen, repeated = set(), []
    for v in values:
        key = repr(v)
        if key in seen and v not in repeated:
            repeated.append(v)
        seen.add(key)
    if repeated:
        raise ValueError(f"entries must be distinct; repeated: {repeated}")
    return values


def _distinct_entries(values: list) -> list:  # private, so the API reference need not link the annotation
    return distinct(values)


#: ``list[int]`` and friends whose entries must be distinct: ``Distinct[list[int]]``.
Distinct = typing.Annotated[typing.TypeVar("_L"), AfterValidator(_distinct_entries)]

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True)
class ResourceEstimate:
    """What a parameter set will need, estimated before any compute.

    ``peak_bytes`` is the peak resident memory of the kernel and its worker processes together; ``seconds`` a rough
    wall time from the chapter's time model (``None`` where no model exists), which
    :func:`medeval.runtime.calibration.reference_seconds` scales to the committed reference machine and
    :func:`~medeval.runtime.calibration.local_estimate` to this one; ``drivers`` the
    parameters (with their values) the estimate grows with.
    """

    peak_bytes: int
    seconds: float | None = None
    drivers: dict[str, Any] = field(default_factory=dict)
    terms: dict[str, int] = field(default_factory=dict)

    def describe(self, on_reference: Callable[[float], float] | None = None) -> str:
        """The estimate in words; ``on_reference`` (the runtime's
        :func:`medeval.runtime.calibration.reference_seconds`) adds the model's seconds scaled to the reference
        machine (see :func:`medeval.runtime.calibration.describe_local_estimate` for this machine's)."""
        text = f"estimated peak memory {format_bytes(self.peak_bytes)}"
        if on_reference is not None and self.seconds is not None:
            text += f", time ~{format_seconds(on_reference(self.seconds))} on the reference machine"
        if self.drivers:
            text += " (driven by " + ", ".join(f"{k}={v!r}" for k, v in self.drivers.items()) + ")"
        return text


def ranked_drivers(parts, *, floor: float = 256 * MIB, share: float = 0.25) -> dict:
    """The drivers of an estimate from its ``(bytes, {field: value})`` parts: the fields of every part of at least
    ``floor`` bytes and ``share`` of the largest part, largest part first."""
    largest = max((b for b, _ in parts), default=0.0)
    drivers: dict = {}
    for b, fields in sorted(parts, key=lambda part: -part[0]):
        if b >= floor and b >= share * largest:
            for name, value in fields.items():
                drivers.setdefault(name, value)
    return drivers


def format_bytes(n: float) -> str:
    if n >= 1024 * GIB:
        return f"{n / (1024 * GIB):.2f} TiB"
    return f"{n / GIB:.2f} GiB" if n >= GIB / 4 else f"{n / MIB:.0f} MiB"


def format_seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else (f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h")



#: the address forms of a Dask scheduler medeval accepts: scheme://host:port (host a name, an IPv4 address or a
#: bracketed IPv6 address)
_SCHEDULER_ADDRESS = re.compile(r"^(?P<scheme>tcp|tls)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(?P<port>\d{1,5})$")


def scheduler_endpoint(address: str) -> tuple[str, int]:
    """``(host, port)`` of a scheduler address ``tcp://host:port`` or ``tls://host:port``; ValueError else."""
    match = _SCHEDULER_ADDRESS.match(address.strip()) if isinstance(address, str) else None
    port = int(match["port"]) if match else 0
    if not match or not 1 <= port <= 65535:
        raise ValueError(f"expected a Dask scheduler address tcp://host:port or tls://host:port (port 1-65535), got "
                         f"{address!r}")
    return match["host"].strip("[]"), port


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

    #: resident memory of a kernel that has imported what the chapter needs (numpy, pandas, matplotlib, torch ...)
    base_memory: typing.ClassVar[int] = 400 * MIB

    @field_validator("scheduler")
    @classmethod
    def _scheduler_address(cls, value: str | None) -> str | None:
        if value is not None:
            scheduler_endpoint(value)  # raises ValueError naming the expected form
        return value

    # ---- cross-field rules: checked whenever a parameter set is built or changed, before any compute ----------
    def violations(self) -> list[Violation]:
        """The cross-field rules this parameter set breaks (empty when it is valid). Chapters override this and
        extend ``super().violations()``; each rule names its fields and states the constraint."""
        return []

    @model_validator(mode="after")
    def _check_cross_field_rules(self):
        broken = self.violations()
        if broken:
            raise CrossFieldError(broken)
        return self

    # ---- pre-flight: what this machine must offer ----------------------------------------------------------
    def required_datasets(self) -> tuple[str, ...]:
        """Manifest ids of the datasets this parameter set reads (checked present and complete before a run)."""
        return ()

    def resource_estimate(self) -> ResourceEstimate:
        """Peak memory (and roughly time) of a run with these parameters; chapters override with their model."""
        return ResourceEstimate(self.base_memory)

    def preflight_problems(self) -> list[str]:
        """Chapter-specific environment or data problems (e.g. a pool too small for the asked subset sizes)."""
        return []

    def pool_size(self, n_tasks: int) -> int:
        """Worker processes that a local grid of ``n_tasks`` runs starts beside the kernel (as
        :func:`medeval.runtime.grid.run_grid` does): none on a Dask cluster, with ``max_workers=1`` or for one
        run (those run in the kernel), else ``min(n_tasks, max_workers or cores)``."""
        if self.scheduler is not None or n_tasks <= 1 or self.max_workers == 1:
            return 0
        return min(n_tasks, self.max_workers or os.cpu_count() or 1)

    def reference_processes(self, n_tasks: int) -> int:
        """Processes that share a local grid of ``n_tasks`` runs on the 2-core reference machine of the time
        estimates (``ResourceEstimate.seconds``), whatever this machine's cores: 1 where the runs go one by
        one (``max_workers=1``, a single run; a Dask cluster is counted so too), else
        ``min(n_tasks, max_workers, 2)``."""
        if self.scheduler is not None or n_tasks <= 1 or self.max_workers == 1:
            return 1
        return min(n_tasks, self.max_workers or 2, 2)
