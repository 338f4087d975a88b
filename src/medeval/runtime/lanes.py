"""A book's chapters executed in two lanes: the long chapters in this process, the others beside them.

A chapter spends most of its time in a grid of runs that keeps every core busy (Chapters 1 and 4), or in work on
one core (Chapter 2's one detector, Chapter 6, the appendices, and every chapter's set-up, claims and figures).
Run one after the other, the one-core stretches leave the other cores idle: on the 2-core machines of
``benchmarks/RESULTS.md`` about an eighth of the default book's chapter time. :func:`execute_chapters` runs a
second lane of chapters in a child process (``medeval run``'s executor, one chapter after the other) while this
process runs the first, then reads every chapter's result back through
:func:`~medeval.runtime.execution.run_chapter`, which finds the second lane's runs in the cache. A chapter the child
could not finish (an error, a refusal) is run again there, so its error reaches the caller as from a sequential
build. The numbers do not depend on the lanes: each run is seeded by its parameters and computes with one thread
per process (:mod:`medeval.runtime.numerics`).

The lanes are balanced on the reference machine's recorded wall times (``results/timings.json``), longest first,
each chapter to the lane with less work so far. Ctrl-C reaches both lanes (one process group); a SIGTERM to this
process stops the child as an interruption, and every run it had started is kept with status ``interrupted``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from medeval.runtime.execution import ExecutionResult, run_chapter

_CHILD = """
import json, signal, sys
from medeval.runtime.execution import run_chapter

def stop(signum, frame):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, stop)
job = json.loads(sys.argv[1])
failed = []
for chapter_id in job["chapters"]:
    try:
        run_chapter(chapter_id, job["profile"], force=job["force"], confirm_long=job["confirm_long"])
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # read again by the parent, which raises it
        failed.append(chapter_id)
        print(f"[medeval] {chapter_id} ({job['profile']}): failed in the second lane ({exc.__class__.__name__}); "
              "it is run again in the first", file=sys.stderr, flush=True)
sys.exit(1 if failed else 0)
"""


def split_lanes(chapter_ids: list[str], profile: str) -> tuple[list[str], list[str]]:
    """Two lanes of ``chapter_ids``: longest first by the recorded wall time under ``profile``, each chapter to the
    lane with less recorded time so far (a chapter never measured counts as no time). Each lane keeps the book's
    order of its chapters."""
    from medeval.runtime.calibration import recorded_timings

    def seconds(chapter_id: str) -> float:
        return float(recorded_timings(chapter_id).get(profile, {}).get("wall_time_s") or 0.0)

    load = [0.0, 0.0]
    lane_of = {}
    for chapter_id in sorted(chapter_ids, key=seconds, reverse=True):
        lane = 0 if load[0] <= load[1] else 1
        lane_of[chapter_id] = lane
        load[lane] += seconds(chapter_id)
    return ([c for c in chapter_ids if lane_of[c] == 0], [c for c in chapter_ids if lane_of[c] == 1])


def execute_chapters(chapter_ids: list[str], profile: str, *, force: bool = False, log=None,
                     confirm_long: bool = False, lanes: int = 1) -> list[ExecutionResult]:
    """Execute ``chapter_ids`` under ``profile`` (cached) and return their results in that order; ``lanes=2`` runs
    a second lane beside this process (:func:`split_lanes`), ``lanes=1`` one chapter after the other."""
    if lanes not in (1, 2):
        raise ValueError(f"lanes must be 1 or 2, got {lanes!r}")
    if lanes == 1 or len(chapter_ids) < 2:
        return [run_chapter(c, profile, force=force, log=log, confirm_long=confirm_long) for c in chapter_ids]
    first, second = split_lanes(chapter_ids, profile)
    job = {"chapters": second, "profile": profile, "force": force, "confirm_long": confirm_long}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(job)], env=os.environ.copy())
    try:
        done = {c: run_chapter(c, profile, force=force, log=log, confirm_long=confirm_long) for c in first}
        child.wait()
    except BaseException:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            child.wait()
        raise
    # the second lane's runs are cached now (or are run here, where the child failed, raising its error)
    done.update({c: run_chapter(c, profile, log=log, confirm_long=confirm_long) for c in second})
    return [done[c] for c in chapter_ids]
