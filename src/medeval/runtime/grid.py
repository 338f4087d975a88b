"""Grid executor: independent runs (models x seeds x settings) on local processes or a Dask cluster.

Each finished run is stored in ``cache_dir`` (never as pickle: :mod:`medeval.runtime.grid_store`) under a key made
of the function's qualified name, its keyword arguments, the digest of ``src/medeval``, the installed versions
and the resolved compute device; the chapter's local data digest names the folder (``notebook.cache_dir``). An
interrupted grid therefore resumes where it stopped, and a code change, an upgrade or another device starts
afresh. An entry that is corrupt, planted or for another key is reported and recomputed, never used. Every value
returned from a cached grid is the stored one read back, so a first run and a resumed run give the same objects.

Where the time goes: each run is timed where it computes (wall and CPU seconds of the function call in its worker),
and, when ``MEDEVAL_GRID_PROFILE`` names a file (the notebook runner sets it to ``grids.jsonl`` of the run being
executed), every :func:`run_grid` call appends one JSON line there: its description, the number of runs computed and
read from the cache, its wall time, and each computed run's label (:func:`run_label`), seconds and CPU seconds
(:func:`medeval.runtime.run_profile.time_profile` reads them back).

Progress uses ``tqdm.std`` on stderr and is disabled when ``TQDM_DISABLE`` is set (the notebook runner sets it), so
rendered pages carry no progress-bar noise.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

# Text progress bars on stderr: a notebook widget bar (tqdm.auto with ipywidgets installed) would make the book
# page load the widget manager's scripts from the network.
from tqdm.std import tqdm

from medeval.runtime import grid_store


def run_key(fn: Callable, kwargs: dict[str, Any], code_digest: str = "") -> str:
    """Stable key of one run: function, arguments (as JSON, keys sorted) and the context digest."""
    payload = json.dumps(
        {"fn": f"{fn.__module__}.{fn.__qualname__}", "kwargs": kwargs, "code": code_digest},
        sort_keys=True, default=repr,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def _code_digest() -> str:
    try:
        from medeval.runtime.cache_keys import source_digest

        return source_digest()
    except RuntimeError:  # not running from a checkout: the installed version stands for the code
        import medeval

        return medeval.__version__


def resolved_device_name() -> str:
    """The device a grid run with ``device="auto"`` computes on: ``cuda:<name>`` or ``cpu``."""
    from medeval.models.cuda import cuda_device_name

    gpu = cuda_device_name()
    return f"cuda:{gpu}" if gpu else "cpu"


def grid_context() -> dict[str, str]:
    """What besides a run's arguments decides its result: the code, the installed versions and the device."""
    from medeval.runtime.cache_keys import environment_digest
    from medeval.runtime.numerics import numerics_mode

    return {"code": _code_digest(), "environment": environment_digest(), "device": resolved_device_name(),
            "numerics": numerics_mode()}


def context_digest(context: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(context, sort_keys=True).encode()).hexdigest()


def _call(fn: Callable, kwargs: dict[str, Any]) -> tuple[Any, float, float]:
    """``fn(**kwargs)`` and the wall and CPU seconds it took in this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn(**kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


#: argument names that tell a grid's runs apart without saying what kind of run they are (a run's number, its seed)
REPLICATE_ARGUMENTS = ("run", "runs", "seed", "seeds", "fold", "index", "repeat", "model_index", "keep_heatmap",
                       "keep_heatmap_runs")
#: the entries that name a nested argument (a dataset's spec) in a run's label, the first one present
NAMING_ENTRIES = ("name", "dataset", "kind")


def _label_value(value: Any) -> Any:
    """A nested argument by the entry that names it (:data:`NAMING_ENTRIES`), a scalar as it is, else ``None``."""
    if isinstance(value, dict):
        return next((value[k] for k in NAMING_ENTRIES if isinstance(value.get(k), str)), None)
    return value if isinstance(value, (str, int, float, bool)) else None


def run_label(kwargs: dict[str, Any], limit: int = 80) -> str:
    """What kind of run ``kwargs`` describe, for a time profile: its short text and number arguments, and each
    nested one by the entry that names it (``dataset=cxr kind=subset operator=max``), leaving out those that only
    number replicates (:data:`REPLICATE_ARGUMENTS`) and any value longer than 40 characters; ``"-"`` when none is
    left."""
    values = {k: _label_value(v) for k, v in sorted(kwargs.items()) if k not in REPLICATE_ARGUMENTS}
    parts = [f"{k}={v}" for k, v in values.items() if v is not None and len(str(v)) <= 40]
    text = " ".join(parts) or "-"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _append_profile(record: dict[str, Any]) -> None:
    """Append one grid's record to the file ``MEDEVAL_GRID_PROFILE`` names (nothing when it is unset); a record
    that cannot be written is reported, never fatal: the profile describes a run, it is not one of its results."""
    target = os.environ.get("MEDEVAL_GRID_PROFILE")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
    except OSError as exc:
        print(f"[medeval] grid time profile {target}: not written ({exc})", file=sys.stderr, flush=True)


def _call_by_name(module: str, qualname: str, kwargs: dict[str, Any], numerics: str) -> Any:
    """A Dask task: pin this worker's numerics (``numerics``, the submitting kernel's mode) *before* the function's
    module is imported, so that torch, MKL, oneDNN and OpenBLAS load with the pinned variables, then call it."""
    import importlib

    from medeval.runtime.numerics import pin_this_process

    os.environ["MEDEVAL_NUMERICS"] = numerics
    pin_this_process(numerics)
    fn: Any = importlib.import_module(module)
    for part in qualname.split("."):
        fn = getattr(fn, part)
    return _call(fn, kwargs)


def share_cores(threads: int) -> None:
    """Give this process ``threads`` BLAS, OpenMP and torch threads: a pool worker's share of the cores.

    Each library otherwise starts a thread per core in every process, and a pool of one worker per core then runs
    cores x cores threads that spin against each other (two processes fitting scikit-learn models at once on two
    cores ran 4.5x slower). The environment variables reach the libraries the worker loads later; ``threadpoolctl``
    limits those already loaded (a forked worker inherits its parent's).
    """
    from medeval.runtime.numerics import pinned_threads

    threads = pinned_threads(threads)  # pinned numerics: one thread, whatever the machine's cores
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    from medeval.runtime.lifetime import watch_parent

    watch_parent()  # a worker dies with its kernel (medeval.runtime.lifetime)


def run_grid(
    fn: Callable[..., Any],
    grid: Sequence[dict[str, Any]],
    *,
    cache_dir: str | Path | None = None,
    scheduler: str | None = None,
    max_workers: int | None = None,
    desc: str | None = None,
    fresh: bool = False,
    log: Callable[[str], None] | None = None,
) -> list[Any]:
    """Run ``fn(**kwargs)`` for every ``kwargs`` in ``grid``; results in grid order.

    Parameters
    ----------
    fn : a module-level (picklable) function of keyword arguments.
    grid : the runs, each a dict of JSON-serialisable keyword arguments.
    cache_dir : folder for per-run results; finished runs are reused, so an interrupted grid resumes.
    scheduler : a Dask distributed scheduler address (``tcp://host:8786``) or a ``distributed.Client``;
        ``None`` runs on a local process pool.
    max_workers : local pool size; ``1`` runs in this process (no pickling, easiest to debug). ``None`` uses
        the number of cores, capped at the number of pending runs. Each worker gets its share of the cores as
        BLAS, OpenMP and torch threads (:func:`share_cores`).
    fresh : recompute every run (and overwrite its entry) instead of reading the cache; ``medeval run --force``
        sets it for the whole notebook through ``MEDEVAL_GRID_FRESH``.
    log : where to report an entry that cannot be used (default: stderr).
    """
    if not callable(fn):
        raise TypeError(f"run_grid: fn must be callable, got {type(fn).__name__}")
    for i, kw in enumerate(grid):
        if not isinstance(kw, dict):
            raise TypeError(f"run_grid: grid[{i}] must be a dict of keyword arguments, got {type(kw).__name__}")
    grid = [dict(kw) for kw in grid]
    if max_workers is not None and max_workers < 1:
        raise ValueError(f"run_grid: max_workers must be >= 1 or None, got {max_workers}")

    results: list[Any] = [None] * len(grid)
    pending: list[int] = list(range(len(grid)))
    paths: list[Path | None] = [None] * len(grid)
    keys: list[str | None] = [None] * len(grid)
    fresh = fresh or os.environ.get("MEDEVAL_GRID_FRESH") == "1"
    report = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    if cache_dir is not None:
        cache = Path(cache_dir)
        cache.mkdir(parents=True, exist_ok=True)
        context = grid_context()
        digest = context_digest(context)
        pending = []
        for i, kw in enumerate(grid):
            keys[i] = run_key(fn, kw, digest)
            paths[i] = cache
            if fresh or not grid_store.entry_paths(cache, keys[i])[0].exists():
                pending.append(i)
                continue
            try:
                results[i] = grid_store.read_entry(cache, keys[i])
            except grid_store.GridEntryError as exc:
                report(f"[medeval] grid cache {cache}: entry {keys[i][:12]} cannot be used ({exc}); recomputing it")
                pending.append(i)

    timings: dict[int, tuple[float, float]] = {}

    def finish(i: int, outcome: tuple[Any, float, float]) -> None:
        value, seconds, cpu_seconds = outcome
        timings[i] = (seconds, cpu_seconds)
        results[i] = value
        if paths[i] is not None:
            grid_store.write_entry(paths[i], keys[i], value,
                                   {"fn": f"{fn.__module__}.{fn.__qualname__}", **context})
            results[i] = grid_store.read_entry(paths[i], keys[i])  # what a resumed run would get

    bar = tqdm(total=len(grid), initial=len(grid) - len(pending), desc=desc or fn.__name__, leave=False)
    started = time.perf_counter()
    where = ("dask" if scheduler is not None else "kernel" if max_workers == 1 or len(pending) <= 1
             else f"pool of {_pool_size(max_workers, len(pending))}")
    try:
        if not pending:
            return results
        if scheduler is not None:
            _run_dask(fn, grid, pending, scheduler, finish, bar)
        elif max_workers == 1 or len(pending) == 1:
            for i in pending:
                finish(i, _call(fn, grid[i]))
                bar.update()
        else:
            _run_pool(fn, grid, pending, max_workers, finish, bar, report)
    finally:
        bar.close()
        _append_profile({
            "grid": desc or fn.__name__, "fn": f"{fn.__module__}.{fn.__qualname__}", "where": where,
            "runs": len(grid), "computed": len(timings), "cached": len(grid) - len(pending),
            "wall_seconds": round(time.perf_counter() - started, 3),
            "tasks": [{"label": run_label(grid[i]), "seconds": round(t[0], 3), "cpu_seconds": round(t[1], 3)}
                      for i, t in sorted(timings.items())],
        })
    return results


def cached_value(compute: Callable[[], Any], *, cache_dir: str | Path, name: str, key: str,
                 fresh: bool = False, log: Callable[[str], None] | None = None) -> Any:
    """``compute()``, stored once per ``(name, key)`` and context (code, versions, device; as :func:`run_grid`) in
    the grid cache ``cache_dir`` as a verified entry of :mod:`medeval.runtime.grid_store`, and read back from it
    on the next call. For one in-process computation that is not a grid of runs (scoring every run's model on one
    large test set), so that no chapter keeps a cache of its own. ``key`` is the caller's digest of the inputs;
    an entry that cannot be used is reported and recomputed, ``fresh`` (or ``MEDEVAL_GRID_FRESH=1``) recomputes."""
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    context = grid_context()
    full_key = hashlib.sha256(json.dumps({"value": name, "key": key, "code": context_digest(context)},
                                         sort_keys=True).encode()).hexdigest()
    fresh = fresh or os.environ.get("MEDEVAL_GRID_FRESH") == "1"
    if not fresh and grid_store.entry_paths(cache, full_key)[0].exists():
        try:
            return grid_store.read_entry(cache, full_key)
        except grid_store.GridEntryError as exc:
            (log or (lambda msg: print(msg, file=sys.stderr, flush=True)))(
                f"[medeval] grid cache {cache}: {name} {full_key[:12]} cannot be used ({exc}); recomputing it")
    grid_store.write_entry(cache, full_key, compute(), {"value": name, **context})
    return grid_store.read_entry(cache, full_key)  # what the next call gets


class GridWorkerError(RuntimeError):
    """A grid run killed the worker process that ran it, again on a fresh worker of its own."""


def _pool_size(max_workers: int | None, n_pending: int) -> int:
    """Worker processes of a local pool: ``max_workers`` (``None``: one per core), no more than the runs to do."""
    return min(max_workers or os.cpu_count() or 1, n_pending)


def _run_pool(fn, grid, pending, max_workers, finish, bar, report) -> None:
    """The local process pool. A worker that dies (killed by a signal, by the out-of-memory killer, or by
    ``os._exit`` in the function) breaks the whole pool; the runs it left unfinished are then retried one at a time,
    each on a fresh worker of its own, twice at most: a run that kills its own worker twice is named
    (:class:`GridWorkerError`, with its arguments), and every other run completes as it would have."""
    from concurrent.futures.process import BrokenProcessPool

    cores = os.cpu_count() or 1
    workers = _pool_size(max_workers, len(pending))
    done: set[int] = set()
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(), initializer=share_cores,
                                 initargs=(max(1, cores // workers),)) as pool:
            futures = {pool.submit(_call, fn, grid[i]): i for i in pending}
            for fut in as_completed(futures):
                finish(futures[fut], fut.result())
                done.add(futures[fut])
                bar.update()
        return
    except BrokenProcessPool:
        left = [i for i in pending if i not in done]
        report(f"[medeval] a grid worker died (killed, or out of memory) with {len(left)} run(s) unfinished; "
               "retrying them one at a time, each on a fresh worker")
    for i in left:
        for attempt in (1, 2):
            try:
                with ProcessPoolExecutor(max_workers=1, mp_context=pool_context(), initializer=share_cores,
                                         initargs=(cores,)) as pool:
                    value = pool.submit(_call, fn, grid[i]).result()
                break
            except BrokenProcessPool:
                if attempt == 2:
                    raise GridWorkerError(
                        f"grid run {i} of {fn.__module__}.{fn.__qualname__} killed its worker twice, on fresh "
                        f"workers of its own (out of memory? a crash in native code?): {_describe(grid[i])}"
                    ) from None
        finish(i, value)
        bar.update()


def _describe(kwargs: dict[str, Any], limit: int = 400) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return text if len(text) <= limit else text[:limit] + " ..."


def pool_context():
    """The start method of the local process pool: fork, unless CUDA is initialised in this process.

    A forked child cannot use CUDA once the parent has initialised it ("Cannot re-initialize CUDA in forked
    subprocess", seen when the chapters' ``gpu`` profiles ran a pooled grid after a warm-up on the GPU), so the
    pool then starts its workers with spawn; the grid functions are module-level, so they pickle by reference.
    """
    import multiprocessing

    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return multiprocessing.get_context("spawn")
    return None


def _run_dask(fn, grid, pending, scheduler, finish, bar) -> None:
    from distributed import Client
    from distributed import as_completed as dask_as_completed

    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        from medeval.runtime.numerics import numerics_mode

        mode = numerics_mode()
        futures = {client.submit(_call_by_name, fn.__module__, fn.__qualname__, grid[i], mode, pure=False): i
                   for i in pending}
        for fut in dask_as_completed(list(futures)):
            finish(futures[fut], fut.result())
            bar.update()
    finally:
        if own:
            client.close()
