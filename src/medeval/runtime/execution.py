"""Execute chapter notebooks with papermill behind a content cache, and render the book with jupyter-book 1.x.

Pipeline: ``notebooks/<id>.py`` (jupytext) -> parameters resolved and validated -> papermill executes a copy in
a private staging folder, published as one run ``_runs/<profile>/<id>/<run-id>/`` (:mod:`medeval.runtime.runs`)
-> jupyter-book renders the executed notebooks with execution off.

The cache key of an executed notebook hashes the notebook source, the resolved parameters and profile, every
file of ``src/medeval``, the manifest entries the chapter reads, and the installed distributions' versions.
An unchanged key reuses the newest good run with that key; any change executes a new run, and the old runs stay.
A run is published by one rename under a file lock, and a notebook that raises is kept as a run with status
``failed`` (or ``interrupted``), never served from the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from medeval.runtime.params import PROFILES, Chapter, ParameterError, chapters, get_chapter, resolve_params
from medeval.runtime.paths import project_root, runs_dir

KEY_VERSION = "1"


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


def _digest_files(paths: list[Path], root: Path, h) -> None:
    for path in paths:
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")


def source_files(root: Path | None = None) -> list[Path]:
    """Every file of ``src/medeval`` that can change behaviour (no bytecode caches)."""
    root = root or project_root()
    pkg = root / "src" / "medeval"
    return sorted(
        p for p in pkg.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )


def source_digest(root: Path | None = None) -> str:
    root = root or project_root()
    h = hashlib.sha256()
    _digest_files(source_files(root), root, h)
    return h.hexdigest()


def environment_digest() -> str:
    """Hash of ``name==version`` of every installed distribution (the locked environment)."""
    pins = sorted(
        f"{(d.metadata['Name'] or '').lower()}=={d.version}" for d in metadata.distributions()
        if (d.metadata["Name"] or "").lower() != "medeval"
    )
    return hashlib.sha256("\n".join(pins).encode()).hexdigest()


def manifest_entries(dataset_ids: tuple[str, ...], root: Path | None = None) -> list[dict]:
    root = root or project_root()
    if not dataset_ids:
        return []
    manifest_path = root / "data_manifest.yaml"
    if not manifest_path.exists():
        raise ParameterError(f"{manifest_path} is missing; chapters read datasets {list(dataset_ids)} from it")
    manifest = yaml.safe_load(manifest_path.read_text()) or {}
    entries = manifest.get("datasets", manifest)
    by_id = {e["id"]: e for e in entries} if isinstance(entries, list) else entries
    unknown = [d for d in dataset_ids if d not in by_id]
    if unknown:
        raise ParameterError(f"datasets {unknown} are not in data_manifest.yaml; known: {sorted(by_id)}")
    return [by_id[d] for d in dataset_ids]


def local_data_digest(dataset_ids) -> str:
    """Fingerprint of the local files of a chapter's downloaded or hand-placed datasets.

    Per dataset: "absent" when :func:`medeval.data.manifest.require` refuses it, else a sha256 over every file's
    relative path, size and modification time under its folder (not the contents: ChestX-ray14 alone is 42 GB).
    Shipped and bundled datasets are skipped (the manifest entry and the installed versions cover them). Fetching,
    placing or replacing data therefore changes the key of every chapter that lists the dataset.
    """
    from medeval.data.manifest import DatasetUnavailableError, get_dataset, require

    out: dict[str, str] = {}
    for d in sorted(set(dataset_ids)):
        if get_dataset(d).access in ("shipped", "bundled"):
            continue
        try:
            root = Path(require(d))
        except DatasetUnavailableError:
            out[d] = "absent"
            continue
        h = hashlib.sha256()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(dirpath) / name
                st = path.stat()
                h.update(f"{path.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        out[d] = h.hexdigest()
    return hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()


def cache_key(chapter: Chapter, profile: str, params_json: dict) -> tuple[str, dict[str, str]]:
    """The cache key and its parts (so a stale cache can say what changed)."""
    root = project_root()
    parts = {
        "key_version": KEY_VERSION,
        "notebook": hashlib.sha256(chapter.notebook.read_bytes()).hexdigest(),
        "params": hashlib.sha256(json.dumps({"profile": profile, **params_json}, sort_keys=True).encode()).hexdigest(),
        "src": source_digest(root),
        "manifest": hashlib.sha256(
            json.dumps(manifest_entries(chapter.datasets, root), sort_keys=True, default=str).encode()
        ).hexdigest(),
        "environment": environment_digest(),
        "data": local_data_digest(chapter.datasets),
    }
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return key, parts


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


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


def load_cached(chapter_id: str, profile: str, out_dir: Path | None = None) -> ExecutionResult | None:
    """The newest good run of a chapter under a profile, whatever its key (for reports)."""
    from medeval.runtime import runs

    good = [r for r in runs.list_runs(Path(out_dir or runs_dir() / profile), chapter_id) if r.status == "ok"]
    return _result_of(good[-1], cached=True) if good else None


def _result_of(run, cached: bool) -> ExecutionResult:
    return ExecutionResult(run.chapter, run.meta["profile"], run.notebook, run.results(), run.meta, cached)


def _timing_note(meta: dict, results: dict):
    import nbformat

    device = results.get("provenance", {}).get("device", "unknown device")
    text = (
        f"```{{note}}\nThis page was executed with the **{meta['profile']}** profile in "
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


def _kill_kernels(managers: list) -> None:
    """Kill each kernel's process group: the kernel and the pool workers it started (they share its group, since
    jupyter_client starts a kernel in a session of its own)."""
    import signal

    for km in managers:
        pgid = getattr(getattr(km, "provisioner", None), "pgid", None)
        if pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)


def run_chapter(
    chapter_id: str,
    profile: str = "default",
    overrides: dict[str, Any] | None = None,
    *,
    force: bool = False,
    out_dir: Path | None = None,
    log=None,
) -> ExecutionResult:
    """Execute one chapter (or reuse its cached execution) and return its recorded results."""
    import jupytext
    import nbformat
    import papermill

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    chapter = get_chapter(chapter_id)
    if profile not in PROFILES:
        raise ParameterError(f"unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
    params = resolve_params(chapter_id, profile, overrides)  # refuses bad values before any compute
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
    log(f"[medeval] {chapter_id} ({profile}): executing {chapter.notebook.name}")

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

    def publish(status: str, **extra) -> Path:
        meta.update(status=status, wall_time_s=round(time.perf_counter() - t0, 1), **extra)
        (staging / "log.txt").write_text("\n".join(lines) + "\n")
        _atomic_write_text(staging / "meta.json", json.dumps(meta, indent=1, sort_keys=True))
        with runs.lock(out_dir, chapter_id):
            path = runs.publish(staging, out_dir, chapter_id, run_id)
            runs.prune(out_dir, chapter_id, log)
        return path

    t0 = time.perf_counter()
    import logging
    import tempfile

    kernel_dir = Path(tempfile.mkdtemp(prefix="medeval-kernel-"))  # mode 0700: the kernel's sockets live here
    managers: list = []
    papermill_log = logging.getLogger("papermill")
    if not any(isinstance(f, _NotUnknown) for f in papermill_log.filters):
        papermill_log.addFilter(_NotUnknown())
    try:
        with _environment(MEDEVAL_RESULTS_FILE=str(tmp_results), TQDM_DISABLE="1",
                          MPLBACKEND="module://matplotlib_inline.backend_inline", PYTHONHASHSEED="0",
                          MEDEVAL_GRID_FRESH="1" if force else "0"):
            papermill.execute_notebook(
                nb, str(tmp_nb), parameters={"profile": profile, **params_json, "_medeval_resolved": True},
                kernel_name="python3", cwd=str(project_root()), progress_bar=False, log_output=False,
                request_save_on_cell_execute=False,
                kernel_manager_class=private_kernel_manager_class(kernel_dir, managers),
                shutdown_kernel="immediate",
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
    _hide_parameter_cells(executed)
    executed.cells.insert(1, _timing_note(meta, results))
    nbformat.write(executed, tmp_nb)
    note(f"[medeval] {chapter_id} ({profile}): done in {wall:.1f} s")
    path = publish("ok")
    meta["run_id"] = path.name
    if own and out_dir == runs_dir() / profile:
        record_timing(chapter_id, profile, meta)
    return ExecutionResult(chapter_id, profile, path / "notebook.ipynb", results, meta, False)


def _param_difference(asked: dict, used: dict) -> str:
    names = sorted(k for k in set(asked) | set(used) if asked.get(k) != used.get(k))
    return "; ".join(f"{k}: asked {asked.get(k)!r}, used {used.get(k)!r}" for k in names)


def timings_file() -> Path:
    """``results/timings.json``: the last measured wall time of every chapter per profile (committed with the book)."""
    return project_root() / "results" / "timings.json"


def record_timing(chapter_id: str, profile: str, meta: dict) -> None:
    """Store the measured wall time of a run of the profile's own parameters, where it ran and on which commit."""
    from filelock import FileLock

    path = timings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    runs_dir().mkdir(parents=True, exist_ok=True)
    with FileLock(str(runs_dir() / ".timings.lock"), timeout=60):
        try:
            data = json.loads(path.read_text()) if path.exists() else {}
        except json.JSONDecodeError:
            data = {}
        prov = meta.get("provenance", {})
        data.setdefault(chapter_id, {})[profile] = {
            "wall_time_s": meta["wall_time_s"], "started": meta["started"],
            "device": prov.get("device", "?"), "cpu_count": os.cpu_count(),
            "git_commit": str(prov.get("git_commit", "?"))[:12],
        }
        _atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def recorded_timings(chapter_id: str) -> dict[str, dict]:
    """The last measured run of ``chapter_id`` per profile, from :func:`timings_file` (empty when never run)."""
    path = timings_file()
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text()).get(chapter_id, {})
    except json.JSONDecodeError:
        return {}


# ---------------------------------------------------------------------------------------------------------------
# The book


def _copy_if_changed(src: Path, dst: Path) -> None:
    """Copy keeping the destination's mtime when the content is unchanged (Sphinx rebuilds only what changed)."""
    if dst.exists() and dst.read_bytes() == src.read_bytes():
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def _write_if_changed(dst: Path, text: str) -> None:
    if dst.exists() and dst.read_text() == text:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write_text(dst, text)


def _html_cell(value: Any) -> str:
    import html

    return html.escape(str(value)).replace("|", "&#124;").replace("\n", " ")


def scorecard_totals(executed: list[ExecutionResult]) -> dict[str, dict[str, int]]:
    """Verdict totals overall and per basis, summed over every chapter's recorded ``paper_vs_us`` rows."""
    from medeval.experiments.claims import BASES, VERDICTS

    by_verdict = dict.fromkeys(VERDICTS, 0)
    by_basis = {b: dict.fromkeys(VERDICTS, 0) for b in BASES}
    for res in executed:
        for row in res.results.get("paper_vs_us") or []:
            by_verdict[row["verdict"]] += 1
            by_basis[row["basis"]][row["verdict"]] += 1
    return {"verdict": by_verdict, **{f"basis:{b}": v for b, v in by_basis.items()}}


def scorecard_markdown(executed: list[ExecutionResult]) -> str:
    """The Scorecard page: every chapter's recorded paper-versus-us rows, totals by verdict and by data basis.

    Each claim links to its row on the chapter page (anchor ``claim-<id>``). Checks (formula identities) and errata
    are not claims and are not counted here.
    """
    from medeval.experiments.claims import BASIS_HELP, VERDICTS

    registry = chapters()
    totals = scorecard_totals(executed)
    lines = [
        "(scorecard)=", "# Scorecard", "",
        "Every claim of the five papers that this book tests, gathered from the chapters' recorded outputs "
        "(nothing here is typed by hand). Each verdict is decided by a stated rule in `medeval.experiments` "
        "that has a test on which it passes and one on which it fails. Verdicts: **[Re]** reproduced; "
        "**[¬Re]** contradicted by the stated test or tolerance; **[~]** inconclusive at this scale (the reason "
        "says which n would decide it); **[n/a]** not testable here (the reason says why). The sign of a noisy "
        "difference, a tie, or \"no significant difference\" never supports a directional claim. Formula "
        "identities (checks) and arithmetic on printed numbers (errata) are on the chapter pages and are not "
        "counted here.", "",
        "Data basis: " + "; ".join(f"**{b}**, {h}" for b, h in BASIS_HELP.items()) + ".", "",
        "| | " + " | ".join(VERDICTS) + " | total |", "|---|" + "---|" * (len(VERDICTS) + 1),
    ]
    def total_row(label, counts):
        return f"| {label} | " + " | ".join(str(counts[v]) for v in VERDICTS) + f" | {sum(counts.values())} |"

    lines.append(total_row("**all claims**", totals["verdict"]))
    for key, counts in totals.items():
        if key.startswith("basis:") and sum(counts.values()):
            lines.append(total_row(f"basis *{key.split(':', 1)[1]}*", counts))
    lines.append("")
    body: list[str] = []
    for res in executed:
        rows = res.results.get("paper_vs_us")
        if not rows:
            continue
        counts = dict.fromkeys(VERDICTS, 0)
        for row in rows:
            counts[row["verdict"]] += 1
        part = registry[res.chapter].part if res.chapter in registry else "chapters"
        body += [f"## {res.meta['title']}", "",
                 f"Chapter `{res.chapter}`, profile `{res.profile}`: "
                 + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + ".", ""]
        body += ["| verdict | claim | basis | scale | n | test and p / CI | reason |", "|---|---|---|---|---|---|---|"]
        for row in rows:
            link = f'<a href="{part}/{res.chapter}.html#claim-{_html_cell(row["id"])}">{_html_cell(row["claim"])}</a>'
            test = _html_cell(row["test"]) + (f"; {_html_cell(row['effect'])}" if row.get("effect") else "")
            body.append("| " + " | ".join([f"**{_html_cell(row['verdict'])}**", link, _html_cell(row["basis"]),
                                           _html_cell(row["scale"]), _html_cell(row["n"]), test,
                                           _html_cell(row["reason"])]) + " |")
        body.append("")
    return "\n".join(lines + body)


def reproducibility_markdown(executed: list[ExecutionResult]) -> str:
    lines = [
        "# Reproducibility", "",
        "Every page of this book is an executed notebook. This table lists, for each, the profile it ran with, "
        "its cache key (a hash of the notebook source, the resolved parameters, every file of `src/medeval`, "
        "the manifest entries it reads and the installed package versions), its measured wall time and where "
        "it ran. Re-run any page with `medeval run <id> --profile <profile> [--set name=value]`.", "",
        "| page | profile | cache key | wall time (s) | commit | device | executed |",
        "|---|---|---|---|---|---|---|",
    ]
    total = 0.0
    for res in executed:
        m = res.meta
        total += m["wall_time_s"]
        prov = m.get("provenance", {})
        lines.append(
            f"| `{res.chapter}` | {m['profile']} | `{m['key'][:12]}` | {m['wall_time_s']:.1f} | "
            f"`{str(prov.get('git_commit', '?'))[:12]}` | {_html_cell(prov.get('device', '?'))} | {m['started']} |"
        )
    lines += ["", f"Total execution time of the pages: {total:.0f} s.", "", "## Parameters", ""]
    for res in executed:
        lines += [f"**{res.chapter}**: `{json.dumps(res.meta['params'], sort_keys=True)}`", ""]
    lines += ["## Library versions", ""]
    if executed:
        prov = executed[0].meta.get("provenance", {})
        lines += [f"- {k}: `{v}`" for k, v in sorted(prov.items()) if k not in ("wall_time_s",)]
    from medeval.runtime.gpu_record import gpu_record_markdown

    lines += ["", gpu_record_markdown()]
    return "\n".join(lines) + "\n"


def _toc_without_empty_globs(toc: dict, stage: Path) -> dict:
    """Drop ``glob`` entries that match no staged page (e.g. a book built with ``--only``) and empty parts."""
    parts = []
    for part in toc.get("parts", []):
        entries = [e for e in part.get("chapters", []) if "glob" not in e or any(stage.glob(e["glob"] + ".*"))]
        if entries:
            parts.append({**part, "chapters": entries})
    return {**toc, "parts": parts}


API_PACKAGES = ("medeval.metrics", "medeval.data", "medeval.models", "medeval.experiments", "medeval.validation",
                "medeval.plots", "medeval.runtime")
API_TITLES = {"medeval.metrics": "Metrics", "medeval.data": "Data", "medeval.models": "Models",
              "medeval.experiments": "Experiments and claims", "medeval.validation": "Validation engines",
              "medeval.plots": "Figures", "medeval.runtime": "Runtime: parameters, execution, grids, provenance"}


def api_modules(packages=API_PACKAGES) -> dict[str, list[str]]:
    """Every public module of the API reference, per package (sub-packages included, private modules skipped)."""
    import importlib
    import pkgutil

    found: dict[str, list[str]] = {}
    for package in packages:
        mod = importlib.import_module(package)
        names = [package]
        if hasattr(mod, "__path__"):
            names += sorted(m.name for m in pkgutil.walk_packages(mod.__path__, package + ".")
                            if not any(part.startswith("_") for part in m.name.split(".")))
        found[package] = names
    return found


def _flat_namespace_page(module_name: str) -> str | None:
    """A package that re-exports its submodules' names (``medeval.metrics``): its docstring and one table of every
    name, each linked to where it is documented, instead of documenting every object a second time."""
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if not hasattr(module, "__path__") or not names:
        return None
    targets = [f"{obj.__module__}.{name}".removeprefix(module_name + ".") for name in names  # relative to the page
               if (inspect.isfunction(obj := getattr(module, name)) or inspect.isclass(obj)) and obj.__doc__]
    return "\n".join([f"# `{module_name}`", "", "```{eval-rst}", f".. automodule:: {module_name}", "   :no-members:",
                      "```", "", "## Every name", "", "```{eval-rst}", ".. autosummary::", "",
                      *[f"   {t}" for t in targets], "```", ""])


def api_pages() -> dict[str, str]:
    """The API reference as MyST pages (``api/<module>.md`` and ``api/index.md``): Sphinx autodoc renders each
    module from its docstrings (formulas and sources included), viewcode links every object to its source, and the
    index lists the modules per package with autosummary. Chapters link here with ``{func}`` roles."""
    pages: dict[str, str] = {}
    index = ["(api-reference)=", "# API reference", "",
             "Every function the chapters use, rendered from its docstring: the formula with its source in the paper, "
             "the policy for degenerate inputs and, for the metrics, a worked example that the test suite runs as a "
             "doctest. `[source]` next to an object opens its code.", ""]
    for package, modules in api_modules().items():
        index += [f"## {API_TITLES.get(package, package)}", "", "```{eval-rst}", ".. autosummary::", ""]
        index += [f"   {m}" for m in modules] + ["```", ""]
        for m in modules:
            pages[f"api/{m}.md"] = _flat_namespace_page(m) or "\n".join([
                f"# `{m}`", "", "```{eval-rst}", f".. automodule:: {m}", "   :members:", "   :show-inheritance:",
                "```", ""])
    pages["api/index.md"] = "\n".join(index)
    return pages


def build_book(
    profile: str = "default", *, force: bool = False, chapters_only: list[str] | None = None,
    out_dir: Path | None = None, log=None, solutions: bool = True, reruns: list[str] | None = None,
) -> Path:
    """Execute every chapter under ``profile`` (cached), stage the book, render it; returns the HTML folder.

    ``solutions=False`` builds a student edition in ``_build/book/<profile>-student``: every gated solution of
    the exercises (its explanation, code, outputs and checks) is cut from the staged notebooks and
    sphinx-exercise's ``hide_solutions`` drops any other solution, so no solution reaches the HTML.

    ``reruns`` names kept runs (ids or unique prefixes, any profile) to add as a *Re-runs* part, one page each
    with its parameters and provenance (:func:`medeval.runtime.runs.rerun_notebook`).
    """
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    root = project_root()
    registry = chapters()
    ids = chapters_only or list(registry)
    from medeval.runtime import runs as run_store

    try:
        chosen = [run_store.find_run(r, runs_dir()) for r in reruns or []]
    except LookupError as exc:
        raise ParameterError(str(exc)) from None
    unusable = [r.id for r in chosen if r.status != "ok"]
    if unusable:
        raise ParameterError(f"runs {unusable} did not finish (status failed or interrupted); `medeval runs` lists them")
    executed = [run_chapter(cid, profile, force=force, log=log) for cid in ids]

    build_root = Path(out_dir or root / "_build" / "book" / (profile if solutions else f"{profile}-student"))
    stage = build_root / "source"
    book = root / "book"
    stage.mkdir(parents=True, exist_ok=True)
    wanted: set[Path] = set()
    for src in book.rglob("*"):
        if src.is_file() and "_build" not in src.relative_to(book).parts:
            dst = stage / src.relative_to(book)
            if src.name == "_config.yml" and not solutions:
                config = yaml.safe_load(src.read_text())
                config.setdefault("sphinx", {}).setdefault("config", {})["hide_solutions"] = True
                _write_if_changed(dst, yaml.safe_dump(config, sort_keys=False))
            else:
                _copy_if_changed(src, dst)
            wanted.add(dst)
    for res in executed:
        dst = stage / registry[res.chapter].part / f"{res.chapter}.ipynb"
        if solutions:
            _copy_if_changed(res.notebook, dst)
        else:
            from medeval.runtime.teaching import without_solutions

            _write_if_changed(dst, without_solutions(res.notebook.read_text()))
        wanted.add(dst)
    for run in chosen:
        dst = stage / "reruns" / f"{run.id}.ipynb"
        _write_if_changed(dst, run_store.rerun_notebook(run))
        wanted.add(dst)
    from medeval.runtime.teaching import teachers_markdown

    for name, text in (("scorecard.md", scorecard_markdown(executed)), ("teaching.md", teachers_markdown(built=set(ids))),
                       ("reproducibility.md", reproducibility_markdown(executed)), *api_pages().items()):
        _write_if_changed(stage / name, text)
        wanted.add(stage / name)
    wanted.add(stage / "_toc.yml")
    for stale in [p for p in stage.rglob("*") if p.is_file() and p not in wanted]:
        stale.unlink()  # before the table of contents is made: a glob must not count a page that is going away
    toc = _toc_without_empty_globs(yaml.safe_load((book / "_toc.yml").read_text()), stage)
    _write_if_changed(stage / "_toc.yml", yaml.safe_dump(toc, sort_keys=False))

    html = build_root / "_build" / "html"
    stamp = build_root / "built.sha256"
    h = hashlib.sha256()
    _digest_files(sorted(wanted), stage, h)
    h.update(source_digest(root).encode())  # the API reference renders the package's docstrings
    digest = h.hexdigest()
    if html.joinpath("index.html").exists() and stamp.exists() and stamp.read_text() == digest and not force:
        log(f"[medeval] book ({profile}): unchanged, {html}")
        return html
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(stage), "--path-output", str(build_root),
           "--warningiserror", "--nitpick", "--keep-going", "--quiet"]
    log(f"[medeval] book ({profile}): rendering with jupyter-book")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        stamp.unlink(missing_ok=True)
        raise ChapterExecutionError(
            f"jupyter-book build failed (warnings are errors):\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
        )
    _atomic_write_text(stamp, digest)
    log(f"[medeval] book ({profile}): {html / 'index.html'}")
    return html


# ---------------------------------------------------------------------------------------------------------------
# The grid cache on disk (``medeval cache ls|clear``)

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


def clear_grid_cache(chapter_id: str | None = None, profile: str | None = None) -> list[Path]:
    """Delete the grid cache of one chapter (or all), for one profile (or all); returns the folders removed."""
    removed = []
    for row in grid_cache_summary(chapter_id):
        if profile is None or row["profile"] == profile:
            shutil.rmtree(row["path"])
            removed.append(row["path"])
    return removed
