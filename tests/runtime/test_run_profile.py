"""The time profile of a kept run: each grid's runs timed where they compute, recorded by ``run_grid``, read back per
kind of run with the notebook's cell times (medeval.runtime.run_profile)."""

import json
import time

import pytest

from medeval.runtime.grid import run_grid, run_label
from medeval.runtime.run_profile import (
    GRID_PROFILE,
    grid_profile,
    profile_markdown,
    read_grid_records,
    time_profile,
)


def sleepy(kind: str, run: int, seconds: float) -> int:
    time.sleep(seconds)
    return run


def test_run_label_names_the_kind_of_run_without_its_replicate_number():
    assert run_label({"task": "segmentation", "distribution": "E2.a", "run": 3, "seed": 7}) == (
        "distribution=E2.a task=segmentation")
    assert run_label({"run": 1, "data": {"slide_size": 384}}) == "-"  # an unnamed nested and a replicate argument
    assert run_label({"dataset": {"kind": "cxr", "n": 400}, "index": 2, "operator": "max"}) == "dataset=cxr operator=max"
    assert run_label({"name": "x" * 41, "k": 2}) == "k=2"  # a long value is left out
    assert len(run_label({f"a{i}": "v" * 30 for i in range(5)}, limit=50)) == 50


def test_run_grid_records_each_computed_run_and_then_the_cache_hits(tmp_path, monkeypatch):
    target = tmp_path / GRID_PROFILE
    monkeypatch.setenv("MEDEVAL_GRID_PROFILE", str(target))
    grid = [{"kind": k, "run": r, "seconds": 0.05 if k == "slow" else 0.0} for k in ("slow", "fast") for r in range(2)]
    assert run_grid(sleepy, grid, cache_dir=tmp_path / "cache", max_workers=1, desc="demo") == [0, 1, 0, 1]
    assert run_grid(sleepy, grid, cache_dir=tmp_path / "cache", max_workers=1, desc="demo") == [0, 1, 0, 1]
    first, second = read_grid_records(target)
    assert (first["grid"], first["where"], first["runs"], first["computed"], first["cached"]) == ("demo", "kernel", 4, 4, 0)
    assert [t["label"] for t in first["tasks"]] == ["kind=slow seconds=0.05"] * 2 + ["kind=fast seconds=0.0"] * 2
    assert all(t["seconds"] >= 0.05 for t in first["tasks"][:2])
    assert (second["computed"], second["cached"], second["tasks"]) == (0, 4, [])
    profile = grid_profile(first)
    assert list(profile.by_kind) == ["kind=slow seconds=0.05", "kind=fast seconds=0.0"]  # largest first
    assert profile.by_kind["kind=slow seconds=0.05"]["count"] == 2
    assert 0 < profile.pool_use <= 1.0


def test_run_grid_records_the_runs_of_a_local_pool(tmp_path, monkeypatch):
    target = tmp_path / GRID_PROFILE
    monkeypatch.setenv("MEDEVAL_GRID_PROFILE", str(target))
    run_grid(sleepy, [{"kind": "a", "run": r, "seconds": 0.0} for r in range(3)], max_workers=2)
    (record,) = read_grid_records(target)
    assert (record["where"], record["computed"], len(record["tasks"])) == ("pool of 2", 3, 3)


def test_without_the_variable_nothing_is_written_and_an_unwritable_target_is_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MEDEVAL_GRID_PROFILE", raising=False)
    run_grid(sleepy, [{"kind": "a", "run": 0, "seconds": 0.0}], max_workers=1)
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("MEDEVAL_GRID_PROFILE", str(tmp_path / "missing-folder" / GRID_PROFILE))
    assert run_grid(sleepy, [{"kind": "a", "run": 0, "seconds": 0.0}], max_workers=1) == [0]
    assert "grid time profile" in capsys.readouterr().err


def test_time_profile_reads_cells_and_grids_of_a_kept_run(tmp_path):
    cells = [{"cell_type": "code", "source": ["# setup\n", "import x\n"], "metadata": {"papermill": {"duration": 0.4}}},
             {"cell_type": "markdown", "source": "text", "metadata": {}},
             {"cell_type": "code", "source": "results = run(P)\n", "metadata": {"papermill": {"duration": 12.5}}},
             {"cell_type": "code", "source": "plot()\n", "metadata": {"papermill": {"duration": 2.0}}}]
    (tmp_path / "notebook.ipynb").write_text(json.dumps({"cells": cells}))
    (tmp_path / "meta.json").write_text(json.dumps({"wall_time_s": 16.0}))
    record = {"grid": "runs", "fn": "m.f", "where": "pool of 2", "runs": 3, "computed": 3, "cached": 0,
              "wall_seconds": 10.0, "tasks": [{"label": "a", "seconds": 8.0, "cpu_seconds": 7.9},
                                              {"label": "b", "seconds": 5.0, "cpu_seconds": 5.0},
                                              {"label": "a", "seconds": 4.0, "cpu_seconds": 4.0}]}
    (tmp_path / GRID_PROFILE).write_text(json.dumps(record) + "\n")
    profile = time_profile(tmp_path)
    assert profile.wall_seconds == 16.0 and profile.cells_seconds == pytest.approx(14.9)
    assert [(i, s, line) for i, s, line in profile.cells] == [(2, 12.5, "results = run(P)"), (3, 2.0, "plot()")]
    (grid,) = profile.grids
    assert grid.by_kind["a"] == {"count": 2, "seconds": 12.0, "cpu_seconds": 11.9}
    assert grid.worker_seconds == 17.0 and grid.pool_use == pytest.approx(17.0 / 20.0)
    text = profile_markdown("Chapter X", profile)
    assert "pool use 85%" in text and "| `a` | 2 | 12.0 | 71% | 6.00 | 0.99 |" in text


def test_a_run_without_grids_has_none_and_a_damaged_record_is_named(tmp_path):
    (tmp_path / "notebook.ipynb").write_text(json.dumps({"cells": []}))
    assert time_profile(tmp_path).grids == []
    (tmp_path / GRID_PROFILE).write_text('{"grid": "g"}\nnot json\n')
    with pytest.raises(ValueError, match="line 1 is not a grid record"):
        time_profile(tmp_path)
    (tmp_path / GRID_PROFILE).write_text("not json\n")
    with pytest.raises(ValueError, match=f"{GRID_PROFILE}: line 1 is not JSON"):
        time_profile(tmp_path)
    with pytest.raises(FileNotFoundError, match="no notebook.ipynb"):
        time_profile(tmp_path / "nothing")
