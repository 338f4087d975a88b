"""The pre-flight: whether this machine can run a chapter's resolved parameters, checked before any compute.

:func:`preflight` refuses, every problem listed at once, what would fail later: a missing or incomplete dataset,
``device='cuda'`` without CUDA, an estimated peak memory above what this run may use
(:func:`medeval.runtime.resources.available_memory_bytes`), a Dask scheduler that does not answer or has no
workers (:func:`scheduler_problems`), or a chapter's own problem (``ChapterParams.preflight_problems``).
"""

from __future__ import annotations

from medeval.core.schema import (
    ChapterParams,
    PreflightError,
    ResourceEstimate,
    format_bytes,
    scheduler_endpoint,
)
from medeval.runtime.calibration import reference_seconds
from medeval.runtime.resources import available_memory_bytes

#: seconds a scheduler has to accept a connection, and to report its workers, before the run is refused
SCHEDULER_TIMEOUT = 3.0


def scheduler_problems(address: str, timeout: float = SCHEDULER_TIMEOUT) -> list[str]:
    """Why the scheduler at ``address`` cannot take a run, checked in seconds before any compute: no connection
    within ``timeout`` (a wrong host or port: a Dask client would wait 30 s, then the run would die mid-way), or a
    scheduler without workers (a grid would wait for ever)."""
    import socket

    host, port = scheduler_endpoint(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        return [f"scheduler={address!r}: nothing answers there within {timeout:g} s ({exc.__class__.__name__}: "
                f"{exc.strerror or exc}); start the scheduler, or set scheduler=null for local processes"]
    try:
        from distributed import Client

        with Client(address, timeout=timeout) as client:
            workers = client.scheduler_info().get("workers", {})
    except Exception as exc:  # noqa: BLE001 - any failure to talk to it is reported as such
        return [f"scheduler={address!r}: a connection opens but no Dask scheduler answers ({exc.__class__.__name__})"]
    if not workers:
        return [f"scheduler={address!r}: the scheduler has no workers, so the grid would wait for ever; start "
                "workers (dask worker ADDRESS) or set scheduler=null"]
    return []


def preflight(chapter_id: str, params: ChapterParams, *, available: int | None = None) -> ResourceEstimate:
    """Check, before any compute, that this machine can run ``params``; return the resource estimate.

    Refuses (:class:`PreflightError`, every problem listed) when a required dataset is missing or incomplete
    (sizes checked, ``medeval data verify`` hashes), ``device='cuda'`` without CUDA, the estimated peak memory
    above ``available`` (default :func:`available_memory_bytes`), or a chapter-specific problem.
    """
    problems: list[str] = []
    estimate = params.resource_estimate()
    available = available_memory_bytes() if available is None else available
    if available is not None and estimate.peak_bytes > available:
        problems.append(
            f"{estimate.describe(reference_seconds)} exceeds the {format_bytes(available)} available on this machine; lower "
            + (", ".join(estimate.drivers) if estimate.drivers else "the sizes") + " or run where more memory is")
    if params.required_datasets():
        from medeval.data.manifest import DatasetUnavailableError, require

        for dataset_id in params.required_datasets():
            try:
                require(dataset_id)
            except (DatasetUnavailableError, ValueError) as exc:
                message = str(exc)
                problems.append(message if message.startswith(f"dataset {dataset_id!r}")
                                else f"dataset {dataset_id!r}: {message}")
    if params.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            problems.append("device='cuda' but no CUDA device is visible to torch; use device=auto or cpu")
    if params.scheduler is not None:
        problems += scheduler_problems(params.scheduler)
    problems += params.preflight_problems()
    if problems:
        raise PreflightError(f"chapter {chapter_id!r} cannot run here:\n" + "\n".join(f"  {p}" for p in problems))
    return estimate
