import os
from pathlib import Path

import pytest

from medeval.runtime.grid import run_grid


def record_call(x: int, log_dir: str, fail_on: int | None = None) -> int:
    Path(log_dir, f"call-{x}-{os.getpid()}-{len(os.listdir(log_dir))}").write_text("")
    if fail_on is not None and x == fail_on and not Path(log_dir, "allow").exists():
        raise RuntimeError(f"simulated interruption at x={x}")
    return x * x


def calls(log_dir: Path, x: int) -> int:
    return sum(1 for p in log_dir.iterdir() if p.name.startswith(f"call-{x}-"))


def test_results_in_grid_order_local_pool(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    grid = [{"x": x, "log_dir": str(log)} for x in range(7)]
    assert run_grid(record_call, grid, max_workers=2) == [x * x for x in range(7)]


def test_interrupted_grid_resumes_where_it_stopped(tmp_path):
    log, cache = tmp_path / "log", tmp_path / "cache"
    log.mkdir()
    grid = [{"x": x, "log_dir": str(log), "fail_on": 3} for x in range(6)]
    with pytest.raises(RuntimeError, match="simulated interruption"):
        run_grid(record_call, grid, cache_dir=cache, max_workers=1)
    assert [calls(log, x) for x in range(6)] == [1, 1, 1, 1, 0, 0]
    (log / "allow").write_text("")
    assert run_grid(record_call, grid, cache_dir=cache, max_workers=1) == [x * x for x in range(6)]
    # runs 0-2 came from the cache; 3 was retried; 4-5 ran for the first time
    assert [calls(log, x) for x in range(6)] == [1, 1, 1, 2, 1, 1]
    assert run_grid(record_call, grid, cache_dir=cache, max_workers=2) == [x * x for x in range(6)]
    assert [calls(log, x) for x in range(6)] == [1, 1, 1, 2, 1, 1]


def test_bad_arguments():
    with pytest.raises(TypeError, match=r"grid\[1\]"):
        run_grid(record_call, [{"x": 1}, 3])
    with pytest.raises(ValueError, match="max_workers"):
        run_grid(record_call, [], max_workers=0)


@pytest.mark.slow
def test_dask_local_cluster(tmp_path):
    from distributed import Client, LocalCluster

    from medeval.experiments.rerun_demo import holdout_accuracy

    grid = [{"test_size": 40, "repeat": r, "seed": 0, "regularisation_c": 1.0} for r in range(4)]
    local = run_grid(holdout_accuracy, grid, max_workers=1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        via_address = run_grid(holdout_accuracy, grid, scheduler=cluster.scheduler_address)
        with Client(cluster) as client:
            via_client = run_grid(holdout_accuracy, grid, scheduler=client, cache_dir=tmp_path)
    assert via_address == local == via_client
    assert len(list(tmp_path.glob("*.json"))) == len(list(tmp_path.glob("*.npz"))) == 4
    assert not list(tmp_path.glob("*.pkl"))


def die_once(x: int, log_dir: str, die_on: int) -> int:
    """x * x, but the first call with ``die_on`` kills its worker process (as SIGKILL or the OOM killer would)."""
    marker = Path(log_dir, f"died-{x}")
    if x == die_on and not marker.exists():
        marker.write_text("")
        os._exit(9)
    return x * x


def die_always(x: int, die_on: int) -> int:
    if x == die_on:
        os._exit(9)
    return x * x


def test_a_dead_worker_is_retried_and_the_grid_completes_as_undisturbed(tmp_path):
    messages: list[str] = []
    grid = [{"x": x, "log_dir": str(tmp_path), "die_on": 2} for x in range(6)]
    assert run_grid(die_once, grid, max_workers=2, log=messages.append) == [x * x for x in range(6)]
    assert (tmp_path / "died-2").exists() and len(messages) == 1 and "a grid worker died" in messages[0]


def test_a_run_that_kills_its_worker_twice_is_named():
    from medeval.runtime.grid import GridWorkerError

    with pytest.raises(GridWorkerError, match=r"grid run 3 of .*die_always killed its worker twice.*x=3, die_on=3"):
        run_grid(die_always, [{"x": x, "die_on": 3} for x in range(5)], max_workers=2, log=lambda m: None)


@pytest.mark.slow
def test_dask_retries_the_tasks_of_a_killed_worker():
    """A Dask worker killed mid-grid: the scheduler reruns its tasks on the other worker (and the nanny restarts
    it), and the grid completes with every result."""
    import subprocess
    import threading
    import time

    import psutil
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        grid = [{"args": ["sleep", "0.2"], "check": True} for _ in range(30)]
        out: dict = {}
        runner = threading.Thread(target=lambda: out.update(r=run_grid(subprocess.run, grid,
                                                                        scheduler=cluster.scheduler_address)))
        runner.start()
        time.sleep(1.0)  # tasks are running on both workers
        victim = next(iter(cluster.scheduler.workers.values()))
        psutil.Process(victim.pid).kill()
        runner.join(timeout=120)
        assert not runner.is_alive()
    assert len(out["r"]) == 30 and all(r.returncode == 0 for r in out["r"])


def test_pool_spawns_its_workers_once_cuda_is_initialised(monkeypatch):
    """A forked child cannot use CUDA that the parent initialised (the failure of chapters 4a/4b's gpu profile on
    an H200): with CUDA initialised the local pool uses spawn, and the grid still runs; on the CPU it forks."""
    import json

    import torch

    import medeval.runtime.grid as grid_module

    contexts = []
    real_pool = grid_module.ProcessPoolExecutor

    def recording_pool(*args, **kwargs):
        contexts.append(kwargs.get("mp_context"))
        return real_pool(*args, **kwargs)

    monkeypatch.setattr(grid_module, "ProcessPoolExecutor", recording_pool)
    grid = [{"obj": [x, "a"]} for x in range(3)]
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    assert grid_module.pool_context() is None
    assert run_grid(json.dumps, grid, max_workers=2) == [json.dumps([x, "a"]) for x in range(3)]
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    assert grid_module.pool_context().get_start_method() == "spawn"
    assert run_grid(json.dumps, grid, max_workers=2) == [json.dumps([x, "a"]) for x in range(3)]
    assert contexts[0] is None
    assert contexts[1] is not None and contexts[1].get_start_method() == "spawn"


def worker_threads(x: int) -> dict:
    """The thread counts a pool worker computes with: BLAS and OpenMP (threadpoolctl), torch, and the environment."""
    import torch
    from threadpoolctl import threadpool_info

    pools = {p["user_api"]: p["num_threads"] for p in threadpool_info()}
    return {"pools": pools, "torch": torch.get_num_threads(), "omp": os.environ.get("OMP_NUM_THREADS")}


@pytest.mark.parametrize("workers", [1, 2])
def test_pool_workers_get_their_share_of_the_cores_as_threads(monkeypatch, workers):
    """Each pool worker computes with cores // workers BLAS, OpenMP and torch threads (here the test fakes 4 cores,
    whatever the machine has), including libraries the parent had loaded before forking with a thread per core."""
    import numpy  # noqa: F401  (BLAS loaded in the parent, as in a notebook kernel)
    import torch
    from threadpoolctl import threadpool_limits

    import medeval.runtime.grid as grid_module

    monkeypatch.setattr(grid_module.os, "cpu_count", lambda: 4)
    monkeypatch.setenv("MEDEVAL_NUMERICS", "native")  # pinned numerics give every worker one thread (below)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "4")
    before = torch.get_num_threads()
    try:
        with threadpool_limits(limits=4):
            torch.set_num_threads(4)
            seen = run_grid(worker_threads, [{"x": x} for x in range(2 * workers)], max_workers=workers + 1)
    finally:
        torch.set_num_threads(before)
    expected = 4 // (workers + 1)
    for s in seen:
        assert s["torch"] == expected and s["omp"] == str(expected), s
        assert s["pools"] and set(s["pools"].values()) == {expected}, s


def test_pinned_numerics_give_every_pool_worker_one_thread_whatever_the_cores(monkeypatch):
    """Pinned numerics (the default): a reduction's order must not follow the machine's cores, so each worker
    computes with one BLAS, OpenMP and torch thread even where its share of the cores is larger."""
    import torch
    from threadpoolctl import threadpool_limits

    import medeval.runtime.grid as grid_module

    monkeypatch.setattr(grid_module.os, "cpu_count", lambda: 8)
    monkeypatch.setenv("MEDEVAL_NUMERICS", "pinned")
    before = torch.get_num_threads()
    try:
        with threadpool_limits(limits=4):
            torch.set_num_threads(4)
            seen = run_grid(worker_threads, [{"x": x} for x in range(2)], max_workers=2)
    finally:
        torch.set_num_threads(before)
    for s in seen:
        assert s["torch"] == 1 and s["omp"] == "1", s
        assert set(s["pools"].values()) == {1}, s


def test_a_cached_value_is_computed_once_read_back_verified_and_recomputed_when_damaged(tmp_path):
    import numpy as np

    from medeval.runtime.grid import cached_value

    calls = []

    def compute():
        calls.append(1)
        return np.arange(6, dtype=np.float32).reshape(2, 3)

    first = cached_value(compute, cache_dir=tmp_path, name="scores", key="k1")
    (entry,) = tmp_path.glob("*.json")
    again = cached_value(compute, cache_dir=tmp_path, name="scores", key="k1")
    assert len(calls) == 1 and np.array_equal(first, again) and again.dtype == np.float32
    cached_value(compute, cache_dir=tmp_path, name="scores", key="k2")  # other inputs: computed
    assert len(calls) == 2
    entry.write_text(entry.read_text().replace('"scores"', '"other"'))  # a key part edited: caught, recomputed
    said = []
    assert np.array_equal(cached_value(compute, cache_dir=tmp_path, name="scores", key="k1", log=said.append), first)
    assert len(calls) == 3 and len(said) == 1 and "cannot be used" in said[0]
