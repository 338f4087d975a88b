"""Execute every chapter's ``gpu`` profile on a lent GPU within a fixed time, and keep what ran.

    python benchmarks/gpu_session.py --out DIR [--deadline 300] [--jobs 8] [--reduced] [--profile gpu]

The chapters run as concurrent ``medeval run CHAPTER --profile gpu`` processes (the GPU is shared; each gets
``cores / jobs`` CPU threads). At the deadline every chapter still running gets SIGTERM, which ``medeval run``
turns into a kept, *interrupted* run. ``--reduced`` adds the ``--set`` overrides in :data:`REDUCED`, which cut
repetition counts (runs, epochs, pairs) but keep every GPU-scale setting (backbone, image and slide size,
device): the ``gpu`` profiles are sized for a GPU session of hours, and a lent machine may give minutes. A
reduced run is recorded as such: its parameters that differ from the profile are in its ``meta.json`` and
listed by ``medeval runs``.

Chapters start while their summed pre-flight estimates of peak host memory stay below ``--memory-fraction`` of
the machine's memory (one chapter may always start): chapters 4a and 4b together (53 + 63 GiB of 128) slowed the
session of 2026-11-27b past its call's limit.

Writes to DIR: ``summary.json`` (per chapter: exit code, wall time, status, the overrides, the memory estimate;
rewritten at every start and exit, so a session killed from outside keeps it), ``logs/`` (each
process's output), ``smi.csv`` (GPU utilisation and memory every second, from nvidia-smi) and ``runs/`` (a copy
of ``_runs/<profile>/``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: ``--set`` overrides of ``--reduced``: repetition counts only (every GPU-scale parameter kept)
REDUCED: dict[str, dict] = {
    "01-mil-stability": {"epochs": 3, "digits_epochs": 5, "n_models": 2, "cv_folds": 2, "n_images": 2000,
                         "digits_n_bags": 2000, "difficulty_levels": [0.03, 0.06, 0.1]},
    "02-rodeo": {"n_runs": 2, "epochs": 4, "n_train": 8000, "n_test": 1000, "n_bootstrap": 200},
    # the batched SVM engine is slow on the gpu profile's largest subsets (see bench_gpu.py): the default
    # profile's sizes and counts, on the GPU engine
    "03-eve": {"drawstring_parent_sizes": [25, 35, 50, 100, 155], "drawstring_n_parents": 96, "drawstring_n_pairs": 24,
               "characterization_sizes": [10, 25, 50, 100], "characterization_n_pairs": 100,
               "characterization_n_pairs_small": 400, "strategy_sizes": [10, 25], "strategy_n_pairs": 300,
               "truth_sizes": [10, 20], "truth_n_pools": 500, "truth_n_draws": 5000, "setting_sizes": [10, 25],
               "setting_n_pairs": 60, "comparison_n_pairs": 40, "bridge_n_pairs": 30},
    "04a-class-distribution": {"n_runs": 2, "n_preliminary_runs": 2, "epochs": 5, "cls_epochs": 4, "cls_runs": 2},
    "04b-evaluation-measures": {"n_trials": 2, "cls_epochs": 4},
    "05-multilabel": {},
    "A1-data": {},
    "A2-rerun": {},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--deadline", type=float, default=300.0, help="seconds before running chapters are stopped")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--profile", default="gpu")
    parser.add_argument("--reduced", action="store_true")
    parser.add_argument("--chapters", nargs="*", default=list(REDUCED))
    parser.add_argument("--memory-fraction", type=float, default=0.85,
                        help="start a chapter only while the running chapters' estimated peak host memory, its own "
                             "included, stays below this fraction of the machine's memory (one chapter always may)")
    args = parser.parse_args()
    if not 0 < args.memory_fraction <= 1:
        parser.error(f"--memory-fraction must be in (0, 1], got {args.memory_fraction}")
    out = args.out
    (out / "logs").mkdir(parents=True, exist_ok=True)
    threads = max(1, (os.cpu_count() or 1) // max(1, min(args.jobs, len(args.chapters))))
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")
    smi = None
    if shutil.which("nvidia-smi"):
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,utilization.gpu,memory.used",
                                "--format=csv,noheader,nounits", "-l", "1"],
                               stdout=open(out / "smi.csv", "w"), stderr=subprocess.DEVNULL)
    pending = list(args.chapters)
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    summary: dict[str, dict] = {}
    t_start = time.monotonic()
    stopping = False
    budget = args.memory_fraction * _total_memory()
    estimates = {ch: _estimated_peak(ch, args.profile, REDUCED.get(ch, {}) if args.reduced else {})
                 for ch in pending}
    while pending or running:
        while pending and len(running) < args.jobs and not stopping:
            ch = next_chapter(pending, list(running), estimates, budget)
            if ch is None:
                break  # wait for a running chapter to finish (the session of 2026-11-27b ran out of memory)
            pending.remove(ch)
            sets = REDUCED.get(ch, {}) if args.reduced else {}
            cmd = [sys.executable, "-m", "medeval.cli", "run", ch, "--profile", args.profile]
            for k, v in sets.items():
                cmd += ["--set", f"{k}={json.dumps(v)}"]
            log = open(out / "logs" / f"{ch}.log", "w")
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            running[ch] = (proc, time.monotonic())
            summary[ch] = {"command": " ".join(cmd[1:]), "overrides": sets,
                           "estimated_peak_gib": round(estimates[ch] / 2**30, 2),
                           "started_at_s": round(time.monotonic() - t_start, 1)}
            _write_summary(out, summary)
        for ch, (proc, t0) in list(running.items()):
            if proc.poll() is not None:
                summary[ch].update(exit_code=proc.returncode, wall_s=round(time.monotonic() - t0, 1),
                                   stopped_at_deadline=stopping)
                print(f"{ch:26s} exit {proc.returncode:4d}  {time.monotonic() - t0:7.1f} s", flush=True)
                del running[ch]
                _write_summary(out, summary)
        if not stopping and time.monotonic() - t_start > args.deadline:
            stopping = True
            for ch in pending:
                summary[ch] = {"not_started": True, "overrides": REDUCED.get(ch, {}) if args.reduced else {}}
            pending = []
            for ch, (proc, _) in running.items():
                print(f"{ch:26s} deadline: SIGTERM", flush=True)
                proc.send_signal(signal.SIGTERM)
            t_stop = time.monotonic()
        if stopping and running and time.monotonic() - t_stop > 30:
            for proc, _ in running.values():
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.5)
    if smi is not None:
        smi.terminate()
    runs = Path(os.environ.get("MEDEVAL_RUNS", ROOT / "_runs")) / args.profile
    if runs.is_dir():
        shutil.copytree(runs, out / "runs", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".lock", ".staging"))
    _write_summary(out, summary)


def next_chapter(pending: list[str], running: list[str], estimates: dict[str, float], budget: float) -> str | None:
    """The first pending chapter whose estimated peak memory fits beside the running ones within ``budget``
    (bytes); any chapter when none is running; None when none fits now."""
    in_use = sum(estimates[c] for c in running)
    return next((c for c in pending if not running or in_use + estimates[c] <= budget), None)


def _write_summary(out: Path, summary: dict) -> None:
    """Write ``summary.json`` now (at every start and exit), so that a session killed from outside keeps it."""
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1))
    tmp.replace(out / "summary.json")


def _total_memory() -> float:
    import psutil

    return float(psutil.virtual_memory().total)


def _estimated_peak(chapter: str, profile: str, overrides: dict) -> float:
    """The chapter's pre-flight estimate of its peak host memory (bytes) on this machine; 0 when it cannot be
    made (the chapter's own pre-flight then reports why)."""
    try:
        from medeval.runtime.params import resolve_params

        return float(resolve_params(chapter, profile, overrides).resource_estimate().peak_bytes)
    except Exception:  # noqa: BLE001 - the estimate only orders the starts
        return 0.0


if __name__ == "__main__":
    main()
