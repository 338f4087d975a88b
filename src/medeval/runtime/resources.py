"""How much memory this run may use: the ``MEDEVAL_MEMORY_LIMIT`` setting read as bytes, else what the machine has.

The pre-flight (:mod:`medeval.runtime.preflight`) checks a chapter's resource estimate against
:func:`available_memory_bytes`; the command line checks the variable when it starts
(:mod:`medeval.runtime.environment`). The byte formats are :func:`medeval.core.schema.format_bytes` and
:func:`medeval.core.schema.format_seconds`.
"""

from __future__ import annotations

import math
import os

from medeval.core.schema import GIB, MIB, ParameterError


def parse_memory(text: str, name: str = "MEDEVAL_MEMORY_LIMIT") -> int:
    """Bytes from ``8G``, ``512M``, ``1.5GiB`` or a plain number; :class:`ParameterError` naming ``name`` else."""
    units = {"K": 1024, "M": MIB, "G": GIB}
    value = text.strip().upper().removesuffix("IB").removesuffix("B")
    try:
        out = float(value[:-1]) * units[value[-1]] if value[-1] in units else float(value)
    except (ValueError, IndexError):
        raise ParameterError(f"{name}={text!r}: expected bytes, e.g. 8G or 512M") from None
    if not math.isfinite(out):
        raise ParameterError(f"{name}={text!r}: expected bytes, e.g. 8G or 512M")
    return int(out)


def available_memory_bytes() -> int | None:
    """Memory this run may use: ``MEDEVAL_MEMORY_LIMIT`` (bytes, or with a K/M/G suffix) when set, else the
    operating system's available memory (psutil), else ``None`` (unknown: not checked)."""
    limit = os.environ.get("MEDEVAL_MEMORY_LIMIT")
    if limit:
        return parse_memory(limit)
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        return None
    return int(psutil.virtual_memory().available)
