"""Where each chapter's run spends its time: cells, grids of runs, and kinds of run (issue #33, item 2).

    python benchmarks/bench_chapters.py [--profile default] [--runs _runs] [--out benchmarks/results/chapters-default.md]

Reads the run store after a build (`make book`, or `medeval run <chapter>`): for every chapter, the newest run of the
profile's own parameters that finished, and from it (:func:`medeval.runtime.run_profile.time_profile`) the cells of a
second or more and each grid of runs summed per kind of run (worker seconds, their share, the mean per run, CPU /
wall) with the grid's pool use. Nothing is executed here; the figures are those of the runs read, measured by the
runner and by :func:`medeval.runtime.grid.run_grid` as they computed. A run from before grids were profiled shows
its cells only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> None:
    from _report import load_average, machine, write_report

    from medeval.runtime.chapter_tables import chapter_numbers_by_id
    from medeval.runtime.params import chapters
    from medeval.runtime.paths import runs_dir
    from medeval.runtime.run_profile import profile_markdown, time_profile
    from medeval.runtime.runs import list_runs

    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="default")
    parser.add_argument("--runs", type=Path, default=None, help="the run store (default: the project's _runs)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    store = (args.runs or runs_dir()) / args.profile
    out = args.out or ROOT / "benchmarks" / "results" / f"chapters-{args.profile}.md"
    numbers = chapter_numbers_by_id()
    summary, sections, commits, devices = [], [], set(), set()
    for chapter_id in chapters():
        own = [r for r in list_runs(store, chapter_id) if r.status == "ok" and not r.meta.get("overrides")]
        if not own:
            summary.append(f"| {chapter_id} | no finished run in {store} | | | |")
            continue
        run = own[-1]
        profile = time_profile(run.path)
        provenance = run.results().get("provenance", {})
        commits.add(str(provenance.get("git_commit", "?"))[:7])
        devices.add(str(provenance.get("device", "?")))
        grid_wall = sum(g.wall_seconds for g in profile.grids)
        worker = sum(g.worker_seconds for g in profile.grids)
        pooled = [g for g in profile.grids if g.pool_use is not None]
        capacity = sum(g.wall_seconds * g.workers for g in pooled)
        use = f"{sum(g.worker_seconds for g in pooled) / capacity:.0%}" if capacity else "-"
        wall = profile.wall_seconds or 0.0
        summary.append(f"| {chapter_id} | {wall:.1f} | {grid_wall:.1f} ({grid_wall / wall:.0%}) | {worker:.1f} | {use} |"
                       if wall else f"| {chapter_id} | ? | {grid_wall:.1f} | {worker:.1f} | {use} |")
        title = f"Chapter {numbers[chapter_id]}" if chapter_id in numbers else "Appendix"
        sections.append(profile_markdown(f"{title} (`{chapter_id}`, run {run.id})", profile))
    lines = [f"# Where each chapter's time goes ({args.profile} profile)", "",
             f"Command: `.venv/bin/python benchmarks/bench_chapters.py --profile {args.profile}` (reads the runs of "
             f"`{store.relative_to(ROOT) if store.is_relative_to(ROOT) else store}`; commit(s) {', '.join(sorted(commits))}).  ",
             f"Machine: {machine()}; the runs' device: {'; '.join(sorted(devices))}; load average now {load_average()}.",
             "", "Per chapter: the run's wall time, the wall time of its grids of runs (and their share of the run), "
             "the grids' worker seconds (each run's own time, summed: what one worker alone would take), and the pool "
             "use (worker seconds / (grid wall x workers)).", "",
             "| chapter | wall (s) | grids, wall (s) | grids, worker s | pool use |", "|---|---|---|---|---|",
             *summary, "", *sections]
    write_report(lines, out)


if __name__ == "__main__":
    main()
