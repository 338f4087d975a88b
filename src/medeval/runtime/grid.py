"""Grid executor: independent runs (models x seeds x settings) on local processes or a Dask cluster.

Each finished run is pickled into ``cache_dir`` under a key made of the function's qualified name, its keyword
arguments and the digest of ``src/medeval``; an interrupted grid therefore resumes where it stopped, and any
code change starts afresh. Progress uses ``tqdm.std`` on stderr and is disabled when ``TQDM_DISABLE`` is set
(the notebook runner sets it), so rendered pages carry no progress-bar noise.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

# Text progress bars on stderr: a notebook widget bar (tqdm.auto with ipywidgets installed) would make the book
# page load the widget manager's scripts from the network.
from tqdm.std import tqdm


def run_key(fn: Callable, kwargs: dict[str, Any], code_digest: str = "") -> str:
    """Stable key of one run: function, arguments (as JSON, keys sorted) and the code digest."""
    payload = json.dumps(
        {"fn": f"{fn.__module__}.{fn.__qualname__}", "kwargs": kwargs, "code": code_digest},
        sort_keys=True, default=repr,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def _code_digest() -> str:
    try:
        from medeval.runtime.execution import source_digest

        return source_digest()
    except RuntimeError:  # not running from a checkout: the installed version stands for the code
        import medeval

        return medeval.__version__


def _atomic_pickle(path: Path, value: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def _call(fn: Callable, kwargs: dict[str, Any]) -> Any:
    return fn(**kwargs)


def run_grid(
    fn: Callable[..., Any],
    grid: Sequence[dict[str, Any]],
    *,
    cache_dir: str | Path | None = None,
    scheduler: str | None = None,
    max_workers: int | None = None,
    desc: str | None = None,
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
        the number of cores, capped at the number of pending runs.
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
    if cache_dir is not None:
        cache = Path(cache_dir)
        cache.mkdir(parents=True, exist_ok=True)
        digest = _code_digest()
        pending = []
        for i, kw in enumerate(grid):
            paths[i] = cache / f"{run_key(fn, kw, digest)}.pkl"
            if paths[i].exists():
                with open(paths[i], "rb") as fh:
                    results[i] = pickle.load(fh)
            else:
                pending.append(i)

    def finish(i: int, value: Any) -> None:
        results[i] = value
        if paths[i] is not None:
            _atomic_pickle(paths[i], value)

    bar = tqdm(total=len(grid), initial=len(grid) - len(pending), desc=desc or fn.__name__, leave=False)
    try:
        if not pending:
            return results
        if scheduler is not None:
            _run_dask(fn, grid, pending, scheduler, finish, bar)
        elif max_workers == 1 or len(pending) == 1:
            for i in pending:
                finish(i, fn(**grid[i]))
                bar.update()
        else:
            workers = min(max_workers or os.cpu_count() or 1, len(pending))
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(_call, fn, grid[i]): i for i in pending}
                for fut in as_completed(futures):
                    finish(futures[fut], fut.result())
                    bar.update()
    finally:
        bar.close()
    return results


def _run_dask(fn, grid, pending, scheduler, finish, bar) -> None:
    from distributed import Client
    from distributed import as_completed as dask_as_completed

    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        futures = {client.submit(_call, fn, grid[i], pure=False): i for i in pending}
        for fut in dask_as_completed(list(futures)):
            finish(futures[fut], fut.result())
            bar.update()
    finally:
        if own:
            client.close()
