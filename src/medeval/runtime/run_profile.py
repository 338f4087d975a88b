"""Where a kept run's time went: its notebook's cells and, inside them, its grids of runs by kind.

A run of the store (:mod:`medeval.runtime.runs`) keeps the executed notebook, whose cells carry papermill's
``duration``, and ``grids.jsonl``, one line per :func:`medeval.runtime.grid.run_grid` call of the run: each computed
grid run's label (its kind: ``task=segmentation distribution=E2.a``), wall seconds and CPU seconds in its worker.
:func:`time_profile` reads both back; :func:`profile_markdown` writes them as a short report.

Two numbers say how well a grid used the machine:

* **worker seconds** — the sum of its runs' wall times, the time one worker alone would have taken;
* **pool use** — worker seconds / (the grid's wall time x its workers): 1.0 when every worker computed for the
  whole grid, lower when workers waited (a long run last, fewer runs than workers) or the pool's start-up and the
  kernel's own work between runs took a share.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GRID_PROFILE = "grids.jsonl"


@dataclass
class GridProfile:
    """One ``run_grid`` call of a run: where it ran (``kernel``, ``pool of N``, ``dask``), its runs and wall time,
    and, per kind of run (label), how many were computed and their summed wall and CPU seconds."""

    name: str
    where: str
    runs: int
    computed: int
    cached: int
    wall_seconds: float
    by_kind: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def worker_seconds(self) -> float:
        """The computed runs' wall seconds, summed: what one worker alone would have taken."""
        return sum(k["seconds"] for k in self.by_kind.values())

    @property
    def workers(self) -> int:
        """The grid's worker processes: N of ``pool of N``, else 1 (the kernel; a Dask cluster is not sized)."""
        match = re.fullmatch(r"pool of (\d+)", self.where)
        return int(match.group(1)) if match else 1

    @property
    def pool_use(self) -> float | None:
        """Worker seconds / (wall seconds x workers); ``None`` when nothing was computed or for a Dask cluster
        (its size is not recorded)."""
        if not self.computed or self.wall_seconds <= 0 or self.where == "dask":
            return None
        return self.worker_seconds / (self.wall_seconds * self.workers)


@dataclass
class TimeProfile:
    """A kept run's time: total, the cells that took at least ``min_seconds`` (index, seconds, first code line)
    and its grids (:class:`GridProfile`, in call order)."""

    wall_seconds: float | None
    cells: list[tuple[int, float, str]]
    cells_seconds: float
    grids: list[GridProfile]


def _first_code_line(source: str | list[str]) -> str:
    text = "".join(source) if isinstance(source, list) else source
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    line = lines[0] if lines else ""
    return line if len(line) <= 90 else line[:87] + "..."


def read_grid_records(path: Path) -> list[dict[str, Any]]:
    """The records of a ``grids.jsonl``; a missing file is no grid (a run from before grids were profiled, or a
    chapter without grids), a line that is not a record is an error naming the file and line."""
    if not path.exists():
        return []
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {n} is not JSON ({exc.msg})") from None
        if not isinstance(record, dict) or not {"grid", "where", "runs", "wall_seconds", "tasks"} <= record.keys():
            raise ValueError(f"{path}: line {n} is not a grid record (grid, where, runs, wall_seconds, tasks)")
        records.append(record)
    return records


def grid_profile(record: dict[str, Any]) -> GridProfile:
    """A ``grids.jsonl`` record summed per kind of run."""
    kinds: dict[str, dict[str, float]] = defaultdict(lambda: {"count": 0, "seconds": 0.0, "cpu_seconds": 0.0})
    for task in record["tasks"]:
        k = kinds[task["label"]]
        k["count"] += 1
        k["seconds"] += float(task["seconds"])
        k["cpu_seconds"] += float(task["cpu_seconds"])
    return GridProfile(name=record["grid"], where=record["where"], runs=int(record["runs"]),
                       computed=int(record.get("computed", len(record["tasks"]))), cached=int(record.get("cached", 0)),
                       wall_seconds=float(record["wall_seconds"]),
                       by_kind=dict(sorted(kinds.items(), key=lambda kv: -kv[1]["seconds"])))


def time_profile(run_dir: Path, min_seconds: float = 1.0) -> TimeProfile:
    """Where the kept run in ``run_dir`` spent its time (cells of at least ``min_seconds``, largest first)."""
    run_dir = Path(run_dir)
    notebook = run_dir / "notebook.ipynb"
    if not notebook.exists():
        raise FileNotFoundError(f"{run_dir}: no notebook.ipynb; not a kept run of the run store")
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    cells, total = [], 0.0
    for index, cell in enumerate(nb.get("cells", [])):
        seconds = (cell.get("metadata", {}).get("papermill", {}) or {}).get("duration")
        if cell.get("cell_type") != "code" or seconds is None:
            continue
        total += float(seconds)
        if seconds >= min_seconds:
            cells.append((index, float(seconds), _first_code_line(cell.get("source", ""))))
    meta_path = run_dir / "meta.json"
    wall = json.loads(meta_path.read_text()).get("wall_time_s") if meta_path.exists() else None
    grids = [grid_profile(r) for r in read_grid_records(run_dir / GRID_PROFILE)]
    return TimeProfile(wall_seconds=wall, cells=sorted(cells, key=lambda c: -c[1]), cells_seconds=total, grids=grids)


def profile_markdown(title: str, profile: TimeProfile, top_kinds: int = 8) -> str:
    """A report section: the run's wall time, its slowest cells, and each grid's kinds of run with their worker
    seconds and share, and the grid's pool use."""
    wall = f"{profile.wall_seconds:.1f} s" if profile.wall_seconds is not None else "not recorded"
    out = [f"### {title}", "", f"Wall time {wall}; its cells {profile.cells_seconds:.1f} s.", ""]
    if profile.cells:
        out += ["| cell | seconds | first line |", "|---|---|---|"]
        out += [f"| {i} | {s:.1f} | `{line.replace('|', '/')}` |" for i, s, line in profile.cells]
        out.append("")
    for g in profile.grids:
        use = "" if g.pool_use is None else f", pool use {g.pool_use:.0%}"
        out.append(f"Grid *{g.name}* ({g.where}): {g.computed} runs computed, {g.cached} read from the cache, "
                   f"{g.wall_seconds:.1f} s wall, {g.worker_seconds:.1f} worker seconds{use}.")
        if g.by_kind:
            out += ["", "| kind of run | runs | worker s | share | mean s | CPU / wall |", "|---|---|---|---|---|---|"]
            shown = list(g.by_kind.items())[:top_kinds]
            for label, k in shown:
                share = k["seconds"] / g.worker_seconds if g.worker_seconds else 0.0
                ratio = k["cpu_seconds"] / k["seconds"] if k["seconds"] else 0.0
                out.append(f"| `{label}` | {k['count']} | {k['seconds']:.1f} | {share:.0%} | "
                           f"{k['seconds'] / k['count']:.2f} | {ratio:.2f} |")
            rest = list(g.by_kind.values())[top_kinds:]
            if rest:
                seconds = sum(k["seconds"] for k in rest)
                out.append(f"| {len(rest)} other kinds | {sum(k['count'] for k in rest)} | {seconds:.1f} | "
                           f"{seconds / g.worker_seconds:.0%} | | |")
        out.append("")
    return "\n".join(out)
