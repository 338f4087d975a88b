"""Execute chapter notebooks with papermill behind the content cache.

Pipeline: ``notebooks/<id>.py`` (jupytext) -> parameters resolved, validated and pre-flighted -> papermill executes
a copy in a private staging folder, published as one run ``_runs/<profile>/<id>/<run-id>/``
(:mod:`medeval.runtime.runs`). The cache key (:mod:`medeval.runtime.cache_keys`) decides whether a good run can be
reused. A run is published by one rename under a file lock, and a notebook that raises is kept as a run with
status ``failed`` (or ``interrupted``), never served from the cache.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medeval.runtime.cache_keys import cache_key
from medeval.runtime.calibration import describe_local_estimate, local_seconds, record_local_timing
from medeval.runtime.numerics import numerics_environment, numerics_mode
from medeval.runtime.params import (
    ParameterError,
    check_profile,
    get_chapter,
    resolve_params,
)
from medeval.runtime.paths import atomic_write_text, project_root, runs_dir
from medeval.runtime.preflight import preflight
from medeval.runtime.run_profile import GRID_PROFILE


class ChapterExecutionError(RuntimeError):
    """A chapter notebook raised; the message names the chapter and the failing cell."""


@dataclass
class ExecutionResult:
    chapter: str
    profile: str
    notebook: Path
    results: dict[str, Any]
    meta: dict[str, Any]
    cached: bool


@contextlib.contextmanager
def _environment(**values: str):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _result_of(run, cached: bool) -> ExecutionResult:
    return ExecutionResult(run.chapter, run.meta["profile"], run.notebook, run.results(), run.meta, cached)


def _timing_note(meta: dict, results: dict):
    import nbformat

    device = results.get("provenance", {}).get("device", "unknown device")
    reading = meta.get("reading")
    read = (f"Reading time: about **{reading['minutes']} min** ({reading['words']:,} words at "
            f"{reading['words_per_minute']} a minute; the exercises and their solutions come on top). "
            if reading else "")
    text = (
        f"```{{note}}\n{read}This page was executed with the **{meta['profile']}** profile in "
        f"**{meta['wall_time_s']:.0f} s** on {device} (cache key `{meta['key'][:12]}`). "
        f"Re-run it with `medeval run {meta['chapter']} --profile {meta['profile']}`; the Provenance section "
        f"at the end lists versions and parameters.\n```"
    )
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = ["medeval-timing"]
    return cell


def _hide_parameter_cells(nb) -> None:
    """Hide the defaults cell and the cell papermill injects: the page shows the parameters as a formatted table
    (:func:`medeval.runtime.notebook.parameters_table`); the executed notebook keeps both cells."""
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if ("parameters" in tags or "injected-parameters" in tags) and "remove-cell" not in tags:
            tags.append("remove-cell")


class _NotUnknown:
    """Papermill warns that ``_medeval_resolved`` is not in a notebook's parameters cell; it is ours, on purpose."""

    def filter(self, record) -> bool:
        return "_medeval_resolved" not in record.getMessage()


def private_kernel_manager_class(private_dir: Path, started: list | None = None):
    """A kernel manager that talks to its kernel over IPC sockets in ``private_dir`` (mode 0700), not over TCP on
    localhost: no other user of the machine can connect to the kernel, and ipykernel has nothing to warn about.
    Each manager created is appended to ``started``, so an interrupted run can stop the kernel's process group."""
    from jupyter_client import AsyncKernelManager

    class PrivateIPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = str(private_dir / "kernel")
            self.connection_file = str(private_dir / "kernel.json")
            if started is not None:
                started.append(self)

    return PrivateIPCKernelManager


class _KernelMemory:
    """The runner's own record of the kernel's memory: the resident memory of each kernel process group (the kernel
    and its grid workers), sampled every ``interval`` seconds in a thread; ``peak`` survives a kernel that dies
    (the kernel's own sampler dies with it)."""

    def __init__(self, managers: list, interval: float = 0.5):
        import threading

        self.managers, self.interval, self.peak = managers, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="medeval-kernel-memory", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(self.interval):
            total = 0
            for km in list(self.managers):
                pid = getattr(getattr(km, "provisioner", None), "pid", None)
                if not pid:
                    continue
                try:
                    kernel = psutil.Process(pid)
                    total += sum(p.memory_info().rss for p in [kernel, *kernel.children(recursive=True)])
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)


def _kill_kernels(managers: list) -> None:
    """Kill each kernel's process group: the kernel and the pool workers it started (they share its group, since
    jupyter_client starts a kernel in a session of its own)."""
    import signal

    for km in managers:
        pgid = getattr(getattr(km, "provisioner", None), "pgid", None)
        if pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)


#: a run estimated above this on this machine needs ``--yes`` (``confirm_long``) to start
LONG_RUN_SECONDS = 2 * 3600.0


def run_chapter(
    chapter_id: str,
    profile: str = "default",
    overrides: dict[str, Any] | None = None,
    *,
    force: bool = False,
    out_dir: Path | None = None,
    log=None,
    confirm_long: bool = False,
) -> ExecutionResult:
    """Execute one chapter (or reuse its cached execution) and return its recorded results.

    A run estimated at more than :data:`LONG_RUN_SECONDS` on this machine is refused unless ``confirm_long``
    (``--yes``): a parameter set estimated at 1,706 hours used to start without a word."""
    import jupytext
    import nbformat
    import papermill

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    chapter = get_chapter(chapter_id)
    check_profile(profile)
    params = resolve_params(chapter_id, profile, overrides)  # refuses bad values before any compute
    numerics = numerics_mode()  # refuses a bad MEDEVAL_NUMERICS before any compute
    estimate = preflight(chapter_id, params)  # refuses what this machine cannot run: data, CUDA, memory
    local = local_seconds(estimate.seconds)
    if local is not None and local > LONG_RUN_SECONDS and not confirm_long:
        from medeval.runtime.params import PreflightError, format_seconds

        raise PreflightError(
            f"chapter {chapter_id!r}: estimated {format_seconds(local)} on this machine, more than "
            f"{format_seconds(LONG_RUN_SECONDS)} ({estimate.describe()}); add --yes to start it anyway, or "
            "lower " + (", ".join(estimate.drivers) if estimate.drivers else "the sizes"))
    params_json = params.model_dump(mode="json")
    if not chapter.notebook.exists():
        raise ParameterError(f"chapter {chapter_id!r}: notebook {chapter.notebook} does not exist")
    key, parts = cache_key(chapter, profile, params_json)
    from medeval.runtime import runs

    out_dir = Path(out_dir or runs_dir() / profile)
    own = not runs.differing_parameters(chapter_id, profile, params_json)
    if not force:
        with runs.lock(out_dir, chapter_id):
            hit = runs.find_good_run(out_dir, chapter_id, key)
            if hit is not None:
                runs.note_cache_hit(hit)
        if hit is not None:
            log(f"[medeval] {chapter_id} ({profile}): cached, run {hit.id}")
            return _result_of(hit, cached=True)
        previous = [r for r in runs.list_runs(out_dir, chapter_id) if r.status == "ok"
                    and not r.meta.get("overrides") and own]
        if previous:
            changed = [k for k, v in parts.items() if previous[-1].meta.get("key_parts", {}).get(k) != v]
            log(f"[medeval] {chapter_id} ({profile}): re-executing, changed: {', '.join(changed) or 'unknown'}")
    log(f"[medeval] {chapter_id} ({profile}): executing {chapter.notebook.name}; {estimate.describe()}; "
        f"{describe_local_estimate(estimate.seconds)}")

    nb = jupytext.read(chapter.notebook)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    started = time.time()
    run_id = runs.new_run_id(key, started)
    staging = runs.staging_folder(out_dir, chapter_id, run_id)
    tmp_nb, tmp_results = staging / "notebook.ipynb", staging / "results.json"
    lines: list[str] = []

    def note(msg: str) -> None:
        lines.append(msg)
        log(msg)

    meta = {
        "chapter": chapter_id, "title": chapter.title, "part": chapter.part, "profile": profile,
        "params": params_json, "overrides": runs.differing_parameters(chapter_id, profile, params_json),
        "key": key, "key_parts": parts, "status": "running",
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)), "cache_hits": 0,
        "pid": os.getpid(),
    }
    # the staging record: if this process is killed (SIGKILL, the OOM killer), the next medeval command finds it
    # and lists the run as killed (medeval.runtime.runs.reap_stale)
    atomic_write_text(staging / "meta.json", json.dumps(meta, indent=1, sort_keys=True))

    def publish(status: str, **extra) -> Path:
        meta.update(status=status, wall_time_s=round(time.perf_counter() - t0, 1), **extra)
        (staging / "log.txt").write_text("\n".join(lines) + "\n")
        atomic_write_text(staging / "meta.json", json.dumps(meta, indent=1, sort_keys=True))
        with runs.lock(out_dir, chapter_id):
            path = runs.publish(staging, out_dir, chapter_id, run_id)
            runs.prune(out_dir, chapter_id, log)
        return path

    t0 = time.perf_counter()
    import logging
    import tempfile

    # mode 0700: the kernel's sockets live here; the runner's pid in the name lets a later command remove the folder
    # of a runner that was killed (medeval.runtime.runs.reap_stale)
    kernel_dir = Path(tempfile.mkdtemp(prefix=f"medeval-kernel-{os.getpid()}-"))
    managers: list = []
    memory_watch = _KernelMemory(managers)
    running_cell: list[int | None] = [None]  # the cell the kernel executes now (where it died, if it dies)
    papermill_log = logging.getLogger("papermill")
    if not any(isinstance(f, _NotUnknown) for f in papermill_log.filters):
        papermill_log.addFilter(_NotUnknown())
    try:
        # the numerics mode's variables (pinned: the same numbers on any x86-64 CPU) reach the kernel before it
        # loads torch, MKL, oneDNN or OpenBLAS; the kernel's grid workers inherit them
        with _environment(**numerics_environment(numerics), MEDEVAL_NUMERICS=numerics,
                          MEDEVAL_RESULTS_FILE=str(tmp_results), TQDM_DISABLE="1",
                          MPLBACKEND="module://matplotlib_inline.backend_inline", PYTHONHASHSEED="0",
                          MEDEVAL_GRID_FRESH="1" if force else "0",
                          MEDEVAL_GRID_PROFILE=str(staging / GRID_PROFILE)), memory_watch:
            papermill.execute_notebook(
                nb, str(tmp_nb), parameters={"profile": profile, **params_json, "_medeval_resolved": True},
                kernel_name="python3", cwd=str(project_root()), progress_bar=False, log_output=False,
                request_save_on_cell_execute=False,
                kernel_manager_class=private_kernel_manager_class(kernel_dir, managers),
                shutdown_kernel="immediate",
                on_cell_start=lambda cell, cell_index: running_cell.__setitem__(0, cell_index),  # nbclient's hook
            )
    except papermill.PapermillExecutionError as exc:
        message = (f"chapter {chapter_id!r} ({profile}) failed in cell {exc.cell_index} (execution count "
                   f"{exc.exec_count}): {exc.ename}: {exc.evalue}")
        note(message)
        path = publish("failed", error=f"{exc.ename}: {exc.evalue}")
        raise ChapterExecutionError(f"{message}\npartial notebook kept in run {path.name}: {path / 'notebook.ipynb'}"
                                    ) from None
    except KeyboardInterrupt:
        _kill_kernels(managers)
        note("interrupted; the grid runs that finished are kept in the grid cache")
        path = publish("interrupted")
        log(f"[medeval] {chapter_id} ({profile}): interrupted, kept as run {path.name}; finished grid runs are "
            f"cached, so `medeval run {chapter_id} --profile {profile}` with the same parameters resumes")
        raise
    except Exception as exc:  # the kernel died, a file could not be written ...: kept as a failed run, then raised
        _kill_kernels(managers)
        if type(exc).__name__ == "DeadKernelError":
            from medeval.runtime.params import format_bytes

            cell = running_cell[0]
            message = (f"chapter {chapter_id!r} ({profile}): the kernel died"
                       + (f" in cell {cell}" if cell is not None else "")
                       + f" (killed, or out of memory: peak memory seen {format_bytes(memory_watch.peak)}, estimated "
                       f"{format_bytes(estimate.peak_bytes)})")
            note(message)
            path = publish("failed", error="the kernel died", peak_memory_seen_bytes=memory_watch.peak)
            raise ChapterExecutionError(f"{message}; partial notebook kept in run {path.name}; the grid runs that "
                                        f"finished are cached, so the next `medeval run {chapter_id}` resumes from "
                                        "them") from None
        note(f"the run stopped: {type(exc).__name__}: {exc}")
        publish("failed", error=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        shutil.rmtree(kernel_dir, ignore_errors=True)
    wall = time.perf_counter() - t0

    results = json.loads(tmp_results.read_text()) if tmp_results.exists() else {}
    if "provenance" not in results:
        message = (f"chapter {chapter_id!r} ({profile}) ran but recorded no provenance: its last cell must call "
                   "medeval.runtime.notebook.provenance()")
        note(message)
        path = publish("failed", error="no provenance recorded")
        raise ChapterExecutionError(f"{message}; notebook kept in run {path.name}")
    if results.get("params") != params_json:
        message = (f"chapter {chapter_id!r} ({profile}): the notebook computed with other parameters than the run "
                   f"was asked for: {_param_difference(params_json, results.get('params') or {})}")
        note(message)
        path = publish("failed", error="parameters differ from the request")
        raise ChapterExecutionError(f"{message}; notebook kept in run {path.name}")
    meta["provenance"] = results["provenance"]
    meta["wall_time_s"] = round(wall, 1)
    executed = nbformat.read(tmp_nb, as_version=4)
    # papermill records the input as given: a notebook object became a repr of the whole notebook (solutions
    # included) in every executed notebook's metadata; keep its path instead
    record = executed.metadata.get("papermill")
    if isinstance(record, dict):
        source = chapter.notebook
        record["input_path"] = (source.relative_to(project_root()).as_posix()
                                if source.is_relative_to(project_root()) else source.name)
    _hide_parameter_cells(executed)
    from medeval.runtime.chapter_sections import reading_time

    meta["reading"] = reading_time(executed)
    executed.cells.insert(1, _timing_note(meta, results))
    nbformat.write(executed, tmp_nb)
    note(f"[medeval] {chapter_id} ({profile}): done in {wall:.1f} s")
    path = publish("ok")
    meta["run_id"] = path.name
    if own and out_dir == runs_dir() / profile and os.environ.get("MEDEVAL_RECORD_TIMINGS", "1") != "0":
        # this checkout's own record (git-ignored); the committed one changes only through `medeval calibrate`
        record_local_timing(chapter_id, profile, meta, results.get("peak_memory_bytes"))
    return ExecutionResult(chapter_id, profile, path / "notebook.ipynb", results, meta, False)


def _param_difference(asked: dict, used: dict) -> str:
    names = sorted(k for k in set(asked) | set(used) if asked.get(k) != used.get(k))
    return "; ".join(f"{k}: asked {asked.get(k)!r}, used {used.get(k)!r}" for k in names)


def grid_cache_root() -> Path:
    """``_runs/grid-cache``: per profile and chapter, the resumable grid results (``notebook.cache_dir``)."""
    return runs_dir() / "grid-cache"


def grid_cache_summary(chapter_id: str | None = None) -> list[dict[str, Any]]:
    """One row per (profile, chapter) folder of the grid cache: entries and bytes on disk."""
    root = grid_cache_root()
    rows = []
    if not root.exists():
        return rows
    for profile_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for chapter_dir in sorted(p for p in profile_dir.iterdir() if p.is_dir()):
            if chapter_id is not None and chapter_dir.name != chapter_id:
                continue
            files = [f for f in chapter_dir.rglob("*") if f.is_file()]
            rows.append({"profile": profile_dir.name, "chapter": chapter_dir.name,
                         "entries": sum(f.suffix == ".json" and not f.name.startswith(".") for f in files),
                         "bytes": sum(f.stat().st_size for f in files), "path": chapter_dir})
    return rows


def verify_grid_cache(chapter_id: str | None = None, profile: str | None = None) -> dict[str, Any]:
    """Read every grid-cache entry of one chapter (or all), for one profile (or all), as a run would
    (:func:`medeval.runtime.grid_store.read_entry`: key, ``.npz`` checksum, content digest, format).

    Returns ``{"checked": n, "bad": [{"path", "problem"}, ...]}``; nothing is changed (a run recomputes a bad
    entry when it meets it, and ``medeval cache clear`` removes a chapter's folder)."""
    from medeval.runtime.grid_store import GridEntryError, read_entry

    checked, bad = 0, []
    for row in grid_cache_summary(chapter_id):
        if profile is not None and row["profile"] != profile:
            continue
        for meta in sorted(row["path"].rglob("*.json")):
            if meta.name.startswith("."):
                continue
            checked += 1
            try:
                read_entry(meta.parent, meta.stem)
            except GridEntryError as exc:
                bad.append({"path": meta, "problem": str(exc)})
    return {"checked": checked, "bad": bad}


def clear_grid_cache(chapter_id: str | None = None, profile: str | None = None) -> list[Path]:
    """Delete the grid cache of one chapter (or all), for one profile (or all); returns the folders removed.

    Refused (:class:`~medeval.core.schema.ParameterError`) while a run of such a chapter and profile is computing
    (a staging folder whose runner is alive): removing its cache under it made that run fail."""
    from medeval.runtime.lifetime import pid_alive

    rows = [r for r in grid_cache_summary(chapter_id) if profile is None or r["profile"] == profile]
    busy = []
    for row in rows:
        for staging in (runs_dir() / row["profile"] / row["chapter"] / ".staging").glob("*-*"):
            pid = staging.name.rsplit("-", 1)[-1]
            if pid.isdigit() and pid_alive(int(pid)):
                busy.append(f"{row['chapter']} ({row['profile']}, pid {pid})")
    if busy:
        raise ParameterError(f"a run is computing with this grid cache: {', '.join(busy)}; wait for it to finish or "
                             "stop it, then clear")
    for row in rows:
        shutil.rmtree(row["path"])
    return [row["path"] for row in rows]
