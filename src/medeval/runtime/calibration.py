"""Time estimates that hold on any machine: the committed calibration record, local timings, a speed probe.

Two files, with different owners:

- ``results/timings.json`` (:func:`calibration_file`) is **committed**: the wall time of every chapter and profile
  measured on one stated reference machine, that machine's speed-probe time, and ``estimate_scale``, the factor
  that turns the chapters' time models (``ResourceEstimate.seconds``) into seconds on that machine (fitted so that
  the largest miss of any chapter and profile is as small as it can be). Only
  ``medeval calibrate`` (``make calibrate``) writes it, on purpose; its diff is reviewed like code. The pages'
  "Time to run" tables and the time-estimate tests read it, so neither depends on the machine that builds.
- ``_runs/timings.json`` (:func:`local_timings_file`) is this checkout's own record: every run of a profile's own
  parameters writes its wall time there. It is git-ignored; a build never dirties the tree.

A time estimate on another machine is the reference machine's seconds times the ratio of the two machines' times
on a short fixed workload (:func:`speed_probe_seconds`, measured once per machine and kept in the run store): on a
machine twice as slow, the estimate doubles.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from medeval.runtime.paths import atomic_write_text, project_root, runs_dir

#: the format of the committed record
_CALIBRATION_VERSION = 1


def calibration_file() -> Path:
    """``results/timings.json``: the committed calibration record (written only by :func:`calibrate`)."""
    return project_root() / "results" / "timings.json"


def local_timings_file() -> Path:
    """``_runs/timings.json``: the wall times this checkout measured (git-ignored, written by every own-profile run)."""
    return runs_dir() / "timings.json"


def _read_json(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def calibration_record() -> dict[str, Any]:
    """The committed record: ``{"reference_machine": {...}, "estimate_scale": float, "chapters": {id: {profile:
    {...}}}}`` (empty where the file is missing)."""
    return _read_json(calibration_file())


def recorded_timings(chapter_id: str) -> dict[str, dict]:
    """The reference machine's measured run of ``chapter_id`` per profile, from the committed record: its
    ``wall_time_s`` and, where it was measured, its ``peak_memory_bytes`` (kernel and grid workers together)."""
    return calibration_record().get("chapters", {}).get(chapter_id, {})


def local_timings(chapter_id: str | None = None) -> dict:
    """What this checkout measured: per chapter and profile (all chapters when ``chapter_id`` is None)."""
    data = _read_json(local_timings_file())
    return data if chapter_id is None else data.get(chapter_id, {})


def record_local_timing(chapter_id: str, profile: str, meta: dict, peak_memory_bytes: int | None = None) -> None:
    """Store the measured wall time (and the peak memory of kernel and grid workers together, where measured) of a
    run of the profile's own parameters in :func:`local_timings_file`."""
    from filelock import FileLock

    path = local_timings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.parent / ".timings.lock"), timeout=60):
        data = _read_json(path)
        prov = meta.get("provenance", {})
        data.setdefault(chapter_id, {})[profile] = {
            "wall_time_s": meta["wall_time_s"], "started": meta["started"],
            "device": prov.get("device", "?"), "cpu_count": os.cpu_count(),
            "git_commit": str(prov.get("git_commit", "?")), "numerics": prov.get("numerics", "?"),
        }
        if isinstance(peak_memory_bytes, int) and peak_memory_bytes > 0:
            data[chapter_id][profile]["peak_memory_bytes"] = peak_memory_bytes
        atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


# ---- the speed probe -------------------------------------------------------------------------------------------

def _probe_workload() -> None:
    """A fixed mix of what the chapters spend time on: numpy sorting (ROC/PR curves, ranks), float32 matrix
    products (the networks' layers, through BLAS) and interpreted Python (loops over runs and rows)."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.random(400_000)
    for _ in range(3):
        np.argsort(x, kind="stable")
    a = rng.random((256, 256), dtype=np.float32)
    for _ in range(20):
        a = (a @ a) / 256.0
    total = 0
    for i in range(300_000):
        total += i % 7


def speed_probe_seconds(repeats: int = 5) -> float:
    """The fastest of ``repeats`` timings of :func:`_probe_workload` on one thread (about 0.1 s each)."""
    from threadpoolctl import threadpool_limits

    best = math.inf
    with threadpool_limits(limits=1):
        _probe_workload()  # warm-up: first-call costs are not speed
        for _ in range(repeats):
            t0 = time.perf_counter()
            _probe_workload()
            best = min(best, time.perf_counter() - t0)
    return best


def _machine_id() -> str:
    from medeval.runtime.provenance import cpu_name

    return f"{cpu_name()} ({os.cpu_count()} cores)"


def parse_probe_seconds(text: str) -> float:
    """A ``MEDEVAL_PROBE_SECONDS`` value: a positive, finite number of seconds; ParameterError naming it else."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        from medeval.runtime.params import ParameterError

        raise ParameterError(f"MEDEVAL_PROBE_SECONDS={text!r}: expected a positive number of seconds")
    return value


def local_probe_seconds() -> float:
    """This machine's probe time, measured once and kept in ``_runs/machine-speed.json`` (per CPU model and core
    count, so a run store moved to another machine measures again). ``MEDEVAL_PROBE_SECONDS`` overrides it."""
    forced = os.environ.get("MEDEVAL_PROBE_SECONDS")
    if forced:
        return parse_probe_seconds(forced)
    path = runs_dir() / "machine-speed.json"
    known = _read_json(path)
    machine = _machine_id()
    if isinstance(known.get(machine), int | float) and known[machine] > 0:
        return float(known[machine])
    value = speed_probe_seconds()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({**known, machine: value}, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only run store: measure again next time
    return value


def speed_factor() -> float | None:
    """How many times longer this machine takes than the reference machine (probe time here / probe time there);
    ``None`` when the committed record holds no probe."""
    reference = calibration_record().get("reference_machine", {}).get("probe_s")
    if not isinstance(reference, int | float) or reference <= 0:
        return None
    return local_probe_seconds() / float(reference)


def reference_seconds(model_seconds: float | None) -> float | None:
    """A chapter time model's seconds (``ResourceEstimate.seconds``) as seconds on the reference machine: times the
    record's ``estimate_scale`` (√(min · max) of measured / modelled over its chapters and profiles)."""
    if model_seconds is None:
        return None
    scale = calibration_record().get("estimate_scale", 1.0)
    return float(model_seconds) * (float(scale) if isinstance(scale, int | float) and scale > 0 else 1.0)


def local_estimate(model_seconds: float | None) -> float | None:
    """The time a run is expected to take on *this* machine: :func:`reference_seconds` times :func:`speed_factor`."""
    seconds = reference_seconds(model_seconds)
    if seconds is None:
        return None
    factor = speed_factor()
    return seconds * (factor if factor is not None else 1.0)


def local_seconds(model_seconds: float | None) -> float | None:
    """The estimate scaled to this machine (the reference machine's when this one's speed is unknown); None
    when no model was calibrated for these parameters."""
    ref = reference_seconds(model_seconds)
    if ref is None:
        return None
    factor = speed_factor()
    return ref * (factor if factor is not None else 1.0)


def describe_local_estimate(model_seconds: float | None) -> str:
    """``time ~96 s here (48 s on the reference machine, AMD EPYC (2 cores); this machine is 2.0x slower)``."""
    from medeval.runtime.params import format_seconds

    ref = reference_seconds(model_seconds)
    if ref is None:
        return "no time estimate for these parameters (no model was calibrated for them)"
    machine = calibration_record().get("reference_machine", {}).get("device", "the reference machine")
    factor = speed_factor()
    if factor is None:
        return f"time ~{format_seconds(ref)} on the reference machine ({machine}); this machine's speed is unknown"
    speed = f"{factor:.1f}x slower" if factor >= 1.05 else (f"{1 / factor:.1f}x faster" if factor <= 0.95
                                                              else "as fast")
    return (f"time ~{format_seconds(ref * factor)} here ({format_seconds(ref)} on the reference machine, {machine}; "
            f"this machine is {speed} on the speed probe)")


# ---- writing the committed record ------------------------------------------------------------------------------

class CalibrationError(RuntimeError):
    """``medeval calibrate`` cannot write a record: a chapter's run is missing, failed, or from another commit."""


def calibrate(profiles: list[str], *, log=print) -> Path:
    """Write :func:`calibration_file` from this checkout's measured runs of ``profiles`` (every chapter must have
    one, of its own parameters, on the current commit with a clean tree), this machine's probe time and the
    ``estimate_scale`` fitted to them. Profiles not named keep their committed records only when no machine
    change is involved; otherwise they are dropped, so the record never mixes machines."""
    from medeval.runtime.params import chapters, resolve_params
    from medeval.runtime.provenance import device_name, git_commit

    commit = git_commit(project_root())
    if commit.endswith("-dirty") or commit == "unknown":
        raise CalibrationError(f"the checkout is {commit!r}: calibrate from a clean, committed tree")
    local = local_timings()
    problems, measured = [], {}
    for cid in chapters():
        for profile in profiles:
            rec = local.get(cid, {}).get(profile)
            if rec is None:
                problems.append(f"{cid} ({profile}): never run here; `medeval book --profile {profile}` first")
            elif rec.get("git_commit") != commit:
                problems.append(f"{cid} ({profile}): measured on commit {rec.get('git_commit')}, not {commit}; "
                                "re-run it")
            else:
                measured.setdefault(cid, {})[profile] = {**rec, "git_commit": commit[:12]}
    if problems:
        raise CalibrationError("cannot calibrate:\n" + "\n".join(f"  {p}" for p in problems))
    machine = device_name()
    old = calibration_record()
    same_machine = old.get("reference_machine", {}).get("device") == machine
    chapters_out: dict = {}
    for cid in chapters():
        kept = {p: r for p, r in old.get("chapters", {}).get(cid, {}).items()
                if p not in profiles and (same_machine or p == "gpu")}
        chapters_out[cid] = {**kept, **measured.get(cid, {})}
    ratios = []
    for cid, by_profile in chapters_out.items():
        for profile, rec in by_profile.items():
            if profile == "gpu":
                continue
            model = resolve_params(cid, profile).resource_estimate().seconds
            if model:
                ratios.append(rec["wall_time_s"] / model)
    # the scale that minimises the largest factor by which any model misses its measured run (the midpoint of the
    # extreme ratios in log space): pinned numerics slow convolution-heavy chapters more than the others, and the
    # estimates must hold within the same factor for every chapter
    scale = math.sqrt(min(ratios) * max(ratios)) if ratios else 1.0
    probe = speed_probe_seconds()
    record = {
        "version": _CALIBRATION_VERSION,
        "reference_machine": {"device": machine, "cpu_count": os.cpu_count(), "probe_s": round(probe, 4),
                              "measured": time.strftime("%Y-%m-%d"), "git_commit": commit[:12]},
        "estimate_scale": round(scale, 4),
        "chapters": chapters_out,
    }
    path = calibration_file()
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    log(f"[medeval] calibration written to {path}: {machine}, probe {probe:.3f} s, estimate scale {scale:.3f} "
        f"over {len(ratios)} runs")
    return path
