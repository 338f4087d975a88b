"""The grid cache stores no pickle, verifies every entry on read, and recomputes what it cannot use (issue #16)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from medeval.runtime import grid, grid_store
from medeval.runtime.grid_store import GridEntryError, read_entry, write_entry


def _equal(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
            a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b) and list(a.columns) == list(b.columns)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**62, 2**62), st.floats(allow_nan=True),
                    st.text(max_size=20))
arrays = hnp.arrays(dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.bool_, np.uint16]),
                    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
values = st.recursive(
    st.one_of(scalars, arrays),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=8).filter(lambda k: not k.startswith("__")), inner, max_size=4),
        st.dictionaries(st.integers(0, 9), inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(value=values)
def test_any_supported_value_round_trips_exactly(tmp_path_factory, value):
    cache = tmp_path_factory.mktemp("entry")
    write_entry(cache, "k" * 64, value)
    assert _equal(value, read_entry(cache, "k" * 64))


@dataclasses.dataclass
class _Foreign:
    x: int


def test_frames_series_scalars_and_medeval_dataclasses_round_trip(tmp_path):
    from medeval.metrics.curves import roc_curve

    frame = pd.DataFrame({"operator": ["max", "mean"], "auc": [0.91, np.nan], "n": np.array([3, 4], np.int32)},
                         index=pd.Index([10, 20], name="size"))
    value = {"frame": frame, "series": frame["auc"], "scalar": np.float32(0.5), "int": np.int64(7),
             "roc": roc_curve(np.array([0, 1, 1, 0]), np.array([0.1, 0.8, 0.4, 0.4]))}
    write_entry(tmp_path, "a" * 64, value)
    back = read_entry(tmp_path, "a" * 64)
    pd.testing.assert_frame_equal(back["frame"], frame)
    pd.testing.assert_series_equal(back["series"], frame["auc"])
    assert back["scalar"] == np.float32(0.5) and back["scalar"].dtype == np.float32
    assert type(back["roc"]) is type(value["roc"])
    for f in dataclasses.fields(value["roc"]):
        assert _equal(getattr(value["roc"], f.name), getattr(back["roc"], f.name)), f.name


def test_what_would_need_pickle_is_refused_on_write(tmp_path):
    with pytest.raises(TypeError, match="dtype object"):
        write_entry(tmp_path, "b" * 64, {"a": np.array([{"x": 1}], dtype=object)})
    with pytest.raises(TypeError, match="medeval dataclasses only"):
        write_entry(tmp_path, "b" * 64, _Foreign(1))
    with pytest.raises(TypeError, match="without pickle"):
        write_entry(tmp_path, "b" * 64, {1, 2})
    assert not list(tmp_path.iterdir())


class _Exploit:
    def __reduce__(self):
        return (Path(_MARKER).write_text, ("executed",))


_MARKER = ""


def square(x: int, log_dir: str) -> dict:
    Path(log_dir, f"call-{x}-{len(os.listdir(log_dir))}").write_text("")
    return {"x": x, "square": np.array([x * x])}


def _calls(log: Path) -> int:
    return sum(1 for p in log.iterdir() if p.name.startswith("call-"))


@pytest.fixture
def cached_grid(tmp_path):
    log, cache = tmp_path / "log", tmp_path / "cache"
    log.mkdir()
    grid_ = [{"x": x, "log_dir": str(log)} for x in range(3)]
    first = grid.run_grid(square, grid_, cache_dir=cache, max_workers=1)
    assert _calls(log) == 3
    return grid_, cache, log, first


def _entry_of(cache: Path, x: int) -> tuple[Path, Path]:
    for meta in cache.glob("*.json"):
        if read_entry(cache, meta.stem)["x"] == x:
            return meta, meta.with_suffix(".npz")
    raise AssertionError(x)


def test_a_planted_entry_is_reported_and_recomputed_without_being_executed(cached_grid, tmp_path):
    global _MARKER
    grid_, cache, log, first = cached_grid
    _MARKER = str(tmp_path / "exploit-ran")
    meta, npz = _entry_of(cache, 1)
    planted = pickle.dumps(_Exploit())
    meta.write_bytes(planted)
    npz.write_bytes(planted)
    messages: list[str] = []
    again = grid.run_grid(square, grid_, cache_dir=cache, max_workers=1, log=messages.append)
    assert not Path(_MARKER).exists(), "the planted bytes were executed"
    assert _calls(log) == 4  # only the planted entry was recomputed
    assert len(messages) == 1 and meta.stem[:12] in messages[0] and "recomputing" in messages[0]
    assert [r["x"] for r in again] == [0, 1, 2] and all(_equal(a, b) for a, b in zip(first, again, strict=True))
    assert read_entry(cache, meta.stem)["x"] == 1  # and the entry is sound again


@pytest.mark.parametrize("damage", ["truncate-npz", "flip-npz-byte", "garbage-json", "other-key", "delete-npz",
                                    "edit-value", "swap-and-edit-key", "edit-key-part"])
def test_a_damaged_entry_is_never_used(cached_grid, damage):
    grid_, cache, log, _ = cached_grid
    meta, npz = _entry_of(cache, 2)
    if damage == "truncate-npz":
        npz.write_bytes(npz.read_bytes()[: len(npz.read_bytes()) // 2])
    elif damage == "flip-npz-byte":
        data = bytearray(npz.read_bytes())
        data[len(data) // 2] ^= 0xFF
        npz.write_bytes(bytes(data))
    elif damage == "garbage-json":
        meta.write_text("{not json")
    elif damage == "other-key":  # a valid entry of another run copied under this run's name
        other_meta, other_npz = _entry_of(cache, 0)
        meta.write_text(other_meta.read_text())
        npz.write_bytes(other_npz.read_bytes())
    elif damage == "edit-value":  # a value changed by hand in the JSON, the file otherwise intact
        entry = json.loads(meta.read_text())
        assert entry["value"]["x"] == 2
        entry["value"]["x"] = 7
        meta.write_text(json.dumps(entry))
    elif damage == "swap-and-edit-key":  # another run's entry under this name, its key field edited to match
        other_meta, other_npz = _entry_of(cache, 0)
        entry = json.loads(other_meta.read_text())
        entry["key"] = meta.stem
        meta.write_text(json.dumps(entry))
        npz.write_bytes(other_npz.read_bytes())
    elif damage == "edit-key-part":  # the recorded code digest changed
        entry = json.loads(meta.read_text())
        entry["key_parts"]["code"] = "0" * 64
        meta.write_text(json.dumps(entry))
    else:
        npz.unlink()
    with pytest.raises(GridEntryError):
        read_entry(cache, meta.stem)
    messages: list[str] = []
    results = grid.run_grid(square, grid_, cache_dir=cache, max_workers=1, log=messages.append)
    assert [r["x"] for r in results] == [0, 1, 2] and results[2]["square"][0] == 4
    assert _calls(log) == 4 and len(messages) == 1


def test_an_upgrade_or_another_device_invalidates_the_entries(cached_grid, monkeypatch):
    grid_, cache, log, _ = cached_grid
    grid.run_grid(square, grid_, cache_dir=cache, max_workers=1)
    assert _calls(log) == 3  # unchanged context: every run from the cache
    real = grid.grid_context()
    monkeypatch.setattr(grid, "grid_context", lambda: {**real, "environment": "numpy==0.0.1 (simulated upgrade)"})
    grid.run_grid(square, grid_, cache_dir=cache, max_workers=1)
    assert _calls(log) == 6
    monkeypatch.setattr(grid, "grid_context", lambda: {**real, "device": "cuda:Simulated GPU"})
    grid.run_grid(square, grid_, cache_dir=cache, max_workers=1)
    assert _calls(log) == 9
    entry = json.loads(next(cache.glob("*.json")).read_text())
    assert {"code", "environment", "device", "fn"} <= set(entry["key_parts"])


def test_fresh_bypasses_the_cache(cached_grid, monkeypatch):
    grid_, cache, log, _ = cached_grid
    grid.run_grid(square, grid_, cache_dir=cache, max_workers=1, fresh=True)
    assert _calls(log) == 6
    monkeypatch.setenv("MEDEVAL_GRID_FRESH", "1")  # what `medeval run --force` sets for the kernel
    grid.run_grid(square, grid_, cache_dir=cache, max_workers=1)
    assert _calls(log) == 9


def test_cache_ls_and_clear(tmp_path):
    env = {**os.environ, "MEDEVAL_RUNS": str(tmp_path)}
    folder = tmp_path / "grid-cache" / "smoke" / "03-eve" / "data-x" / "unit"
    folder.mkdir(parents=True)
    write_entry(folder, "c" * 64, {"a": np.arange(3)})
    ls = subprocess.run([sys.executable, "-m", "medeval.cli", "cache", "ls"], env=env, capture_output=True, text=True)
    assert ls.returncode == 0 and "03-eve" in ls.stdout and "1 entries" in ls.stdout
    bad = subprocess.run([sys.executable, "-m", "medeval.cli", "cache", "clear", "03-evee"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown chapter '03-evee'" in bad.stderr
    clear = subprocess.run([sys.executable, "-m", "medeval.cli", "cache", "clear", "03-eve"], env=env,
                           capture_output=True, text=True)
    assert clear.returncode == 0 and "removed 1" in clear.stdout and not folder.exists()


def test_cache_verify_reports_every_damaged_entry(tmp_path):
    env = {**os.environ, "MEDEVAL_RUNS": str(tmp_path)}
    folder = tmp_path / "grid-cache" / "smoke" / "03-eve" / "data-x" / "unit"
    folder.mkdir(parents=True)
    for k, key in enumerate(("a" * 64, "b" * 64, "c" * 64)):
        write_entry(folder, key, {"accuracy": 0.5 + k / 10, "a": np.arange(3)})
    ok = subprocess.run([sys.executable, "-m", "medeval.cli", "cache", "verify"], env=env, capture_output=True,
                        text=True)
    assert ok.returncode == 0 and "checked 3 grid-cache entries: all usable" in ok.stdout
    edited = folder / f"{'b' * 64}.json"
    edited.write_text(edited.read_text().replace('"accuracy": 0.6', '"accuracy": 0.0'))
    bad = subprocess.run([sys.executable, "-m", "medeval.cli", "cache", "verify", "03-eve", "--profile", "smoke"],
                         env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and "1 cannot be used" in bad.stdout and "content digest mismatch" in bad.stdout
    assert "b" * 12 in bad.stdout


def test_cache_clear_waits_for_a_computing_run_and_compare_checks_its_output_folders(tmp_path):
    """`cache clear` while a run computed killed that run; `compare --markdown` into a missing folder failed after
    printing. Both are refused first, by name."""
    env = {**os.environ, "MEDEVAL_RUNS": str(tmp_path)}
    folder = tmp_path / "grid-cache" / "smoke" / "03-eve" / "data-x"
    folder.mkdir(parents=True)
    write_entry(folder, "c" * 64, {"a": np.arange(3)})
    live = tmp_path / "smoke" / "03-eve" / ".staging" / f"20261127-000000-abcdef12-{os.getpid()}"
    live.mkdir(parents=True)  # this test process stands for a runner that is computing
    busy = subprocess.run([sys.executable, "-m", "medeval.cli", "cache", "clear", "03-eve"], env=env,
                          capture_output=True, text=True)
    assert busy.returncode == 2 and "a run is computing" in busy.stderr and folder.exists()
    live.rmdir()
    done = subprocess.run([sys.executable, "-m", "medeval.cli", "cache", "clear", "03-eve"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0 and not folder.exists()
    cmp = subprocess.run([sys.executable, "-m", "medeval.cli", "compare", "a", "b", "--markdown",
                          str(tmp_path / "missing" / "cmp.md")], env=env, capture_output=True, text=True)
    assert cmp.returncode == 2 and "does not exist" in cmp.stderr and not cmp.stdout


def test_no_pickle_anywhere_in_the_grid_module():
    for module in (grid, grid_store):
        source = Path(module.__file__).read_text()
        assert "import pickle" not in source and "pickle.load" not in source
