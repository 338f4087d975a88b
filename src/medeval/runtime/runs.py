"""The run store: every execution of a chapter is kept as its own run, listed, compared, never overwritten.

Layout, per profile folder (``_runs/<profile>``, or the ``out_dir`` a caller gives)::

    <chapter>/<run-id>/notebook.ipynb   the executed notebook (the partial one for a failed run)
                       results.json     the numbers the notebook recorded
                       meta.json        parameters, the ones that differ from the profile, key, status, times
                       log.txt          what the runner reported for this run
                       grids.jsonl      the run's grids of runs, each run's kind and seconds
                                        (:mod:`medeval.runtime.run_profile`; absent when it ran no grid)
    <chapter>/.staging/<run-id>/        a run while it executes (moved into place when it ends)
    <chapter>/.lock                     a file lock (filelock) held while a run is published or looked up

A run id is readable: the start time and the first 8 hex digits of the run's cache key
(``20261125-213501-3fa2b0c1``). Runs execute in their own staging folder and are published by one rename under the
lock, so two processes running the same chapter never see each other's half-written files. The book takes, per
chapter, the newest good run whose key is the current key of the profile's own parameters; runs with ``--set``
parameters are kept (the newest :func:`keep_runs` of them) and never replaced by ``make book``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from medeval.runtime.paths import atomic_write_text

RUN_FILES = ("notebook.ipynb", "results.json", "meta.json", "log.txt")
STATUSES = ("ok", "failed", "interrupted")
DEFAULT_KEEP = 10


def keep_runs() -> int:
    """How many runs with ``--set`` parameters, and how many of the profile's own, are kept per chapter and
    profile (``MEDEVAL_KEEP_RUNS``, default 10); older ones are pruned with a message."""
    value = os.environ.get("MEDEVAL_KEEP_RUNS", str(DEFAULT_KEEP))
    try:
        keep = int(value)
    except ValueError:
        raise ValueError(f"MEDEVAL_KEEP_RUNS must be a whole number >= 1, got {value!r}") from None
    if keep < 1:
        raise ValueError(f"MEDEVAL_KEEP_RUNS must be a whole number >= 1, got {value!r}")
    return keep


@dataclass
class Run:
    """One published run: its folder and its ``meta.json``."""

    path: Path
    meta: dict[str, Any]

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def chapter(self) -> str:
        return self.meta.get("chapter", self.path.parent.name)

    @property
    def status(self) -> str:
        return self.meta.get("status", "?")

    @property
    def notebook(self) -> Path:
        return self.path / "notebook.ipynb"

    def results(self) -> dict[str, Any]:
        path = self.path / "results.json"
        return json.loads(path.read_text()) if path.exists() else {}


def chapter_folder(profile_dir: Path, chapter_id: str) -> Path:
    return Path(profile_dir) / chapter_id


def lock(profile_dir: Path, chapter_id: str, timeout: float = 600) -> FileLock:
    """The lock that guards looking up, publishing and pruning the runs of one chapter and profile."""
    folder = chapter_folder(profile_dir, chapter_id)
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(str(folder / ".lock"), timeout=timeout)


def new_run_id(key: str, started: float) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S', time.localtime(started))}-{key[:8]}"


def staging_folder(profile_dir: Path, chapter_id: str, run_id: str) -> Path:
    """A fresh private folder for a run while it executes."""
    base = chapter_folder(profile_dir, chapter_id) / ".staging"
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{run_id}-{os.getpid()}"
    path.mkdir()
    return path


def list_runs(profile_dir: Path, chapter_id: str | None = None) -> list[Run]:
    """The published runs under one profile folder (of one chapter, or all), oldest first."""
    profile_dir = Path(profile_dir)
    if not profile_dir.is_dir():
        return []
    folders = [profile_dir / chapter_id] if chapter_id else sorted(p for p in profile_dir.iterdir() if p.is_dir())
    runs = []
    for folder in folders:
        if not folder.is_dir() or folder.name.startswith((".", "grid-cache")):
            continue
        for run_dir in folder.iterdir():
            meta_path = run_dir / "meta.json"
            if run_dir.name.startswith(".") or not meta_path.is_file():
                continue
            try:
                meta = json.loads(meta_path.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                _skip(meta_path, "not readable JSON")
                continue
            if not isinstance(meta, dict) or not isinstance(meta.get("started", ""), str):
                _skip(meta_path, "not a run record (a JSON object with the run's fields)")
                continue
            runs.append(Run(run_dir, meta))
    return sorted(runs, key=lambda r: (r.meta.get("started", ""), r.id))


def _skip(path: Path, why: str) -> None:
    """Say once per process that a file of the run store is skipped (junk beside the runs never stops a command)."""
    if str(path) not in _SKIPPED:
        _SKIPPED.add(str(path))
        print(f"[medeval] skipping {path}: {why}", file=sys.stderr, flush=True)


_SKIPPED: set[str] = set()


def find_good_run(profile_dir: Path, chapter_id: str, key: str) -> Run | None:
    """The newest run that finished, was computed with ``key`` and whose results and notebook are intact; a damaged
    one (a truncated ``results.json``, a missing notebook) is skipped with a message, so the chapter is computed
    again instead of every cached lookup failing until ``--force``."""
    good = [r for r in list_runs(profile_dir, chapter_id) if r.status == "ok" and r.meta.get("key") == key]
    for run in reversed(good):
        problem = _damage(run)
        if problem is None:
            return run
        _skip(run.path, f"a cached run that cannot be used ({problem}); computing it again")
    return None


def _damage(run: Run) -> str | None:
    if not run.notebook.is_file():
        return "notebook.ipynb is missing"
    try:
        results = json.loads((run.path / "results.json").read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"results.json is not readable ({exc.__class__.__name__})"
    return None if isinstance(results, dict) else "results.json is not a JSON object"


def publish(staging: Path, profile_dir: Path, chapter_id: str, run_id: str) -> Path:
    """Move a finished (or failed) run from its staging folder into place; call with the chapter's lock held."""
    folder = chapter_folder(profile_dir, chapter_id)
    target, n = folder / run_id, 2
    while target.exists():  # two runs with one key started in the same second
        target, n = folder / f"{run_id}-{n}", n + 1
    meta_path = staging / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["run_id"] = target.name
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True))
    os.rename(staging, target)
    return target


def reap_stale(runs_root: Path, log=None) -> list[str]:
    """Tidy what killed runners left: a staging folder whose runner (the pid its name ends with) is no longer alive
    is published as a run with status ``killed`` when it holds its record (``meta.json``), else removed; a kernel
    folder ``medeval-kernel-<pid>-*`` of a dead runner in the temporary directory is removed. Returns what was done,
    one line each (also given to ``log``). Called by every medeval command as it starts."""
    import tempfile

    from medeval.runtime.lifetime import pid_alive

    done: list[str] = []
    root = Path(runs_root)
    stagings = root.glob("*/*/.staging/*") if root.is_dir() else []
    for staging in sorted(stagings):
        pid = staging.name.rsplit("-", 1)[-1]
        if not staging.is_dir() or not pid.isdigit() or pid_alive(int(pid)):
            continue
        profile_dir, chapter_id = staging.parent.parent.parent, staging.parent.parent.name
        meta_path = staging / "meta.json"
        try:
            meta = json.loads(meta_path.read_text()) if meta_path.is_file() else None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            meta = None
        try:
            with lock(profile_dir, chapter_id, timeout=5):
                if not staging.exists():
                    continue
                if isinstance(meta, dict) and meta.get("status") == "running":
                    meta.update(status="killed", ended_by="its runner (pid " + pid + ") died without finishing")
                    atomic_write_text(meta_path, json.dumps(meta, indent=1, sort_keys=True))
                    target = publish(staging, profile_dir, chapter_id, staging.name.rsplit("-", 1)[0])
                    done.append(f"run {target.name} of {chapter_id}: its runner was killed; kept as 'killed'")
                else:
                    shutil.rmtree(staging, ignore_errors=True)
                    done.append(f"removed the staging folder {staging} of a killed runner")
        except Exception as exc:  # noqa: BLE001 - tidying must never stop the command that called it
            done.append(f"could not tidy {staging}: {exc.__class__.__name__}")
    for kernel_dir in Path(tempfile.gettempdir()).glob("medeval-kernel-*-*"):
        pid = kernel_dir.name.split("-")[2]
        if kernel_dir.is_dir() and pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(kernel_dir, ignore_errors=True)
            done.append(f"removed the kernel folder {kernel_dir} of a killed runner")
    for line in done:
        (log or (lambda m: print(f"[medeval] {m}", file=sys.stderr, flush=True)))(line)
    return done


def note_cache_hit(run: Run) -> None:
    """Count that a run was served again from the cache; call with the chapter's lock held."""
    run.meta["cache_hits"] = int(run.meta.get("cache_hits", 0)) + 1
    run.meta["last_served"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    atomic_write_text(run.path / "meta.json", json.dumps(run.meta, indent=1, sort_keys=True))


def prune(profile_dir: Path, chapter_id: str, log, keep: int | None = None) -> list[str]:
    """Delete the oldest runs beyond ``keep`` per kind (the profile's own; with ``--set`` parameters), never the
    newest good run of the profile's own parameters; call with the chapter's lock held. Returns the ids removed."""
    keep = keep or keep_runs()
    runs = list_runs(profile_dir, chapter_id)
    removed = []
    for own in (True, False):
        kind = [r for r in runs if (not r.meta.get("overrides")) == own]
        newest_good = next((r for r in reversed(kind) if r.status == "ok"), None)
        for run in kind[:-keep] if len(kind) > keep else []:
            if run is newest_good:
                continue
            shutil.rmtree(run.path, ignore_errors=True)
            removed.append(run.id)
    if removed:
        log(f"[medeval] {chapter_id}: pruned {len(removed)} old run(s) (keeping {keep} per kind; "
            f"MEDEVAL_KEEP_RUNS changes it): {', '.join(removed)}")
    return removed


def find_run(run_id: str, runs_root: Path) -> Run:
    """A run by its id (or a unique prefix of it), in any profile and chapter under ``runs_root``."""
    matches = []
    if runs_root.is_dir():
        for profile_dir in sorted(p for p in runs_root.iterdir() if p.is_dir() and p.name != "grid-cache"):
            matches += [r for r in list_runs(profile_dir) if r.id == run_id or r.id.startswith(run_id)]
    exact = [r for r in matches if r.id == run_id]
    if len(exact) == 1:
        return exact[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LookupError(f"no run {run_id!r} under {runs_root}; `medeval runs` lists them")
    raise LookupError(f"run id {run_id!r} is ambiguous: {', '.join(r.id for r in matches[:6])}")


def differing_parameters(chapter_id: str, profile: str, params_json: dict[str, Any]) -> dict[str, Any]:
    """The resolved parameters of a run that differ from the profile's own: ``{name: value used}``."""
    from medeval.runtime.params import resolve_params

    base = resolve_params(chapter_id, profile).model_dump(mode="json")
    return {k: v for k, v in params_json.items() if base.get(k) != v}


# --------------------------------------------------------------------------------------------------------------
# Comparing two runs

_SKIP = ("profile", "params", "provenance", "paper_vs_us", "checks", "errata", "wall_time_s")


@dataclass
class Comparison:
    """Two runs side by side: parameters that differ, numbers with their difference, verdicts that changed."""

    a: Run
    b: Run
    parameters: list[tuple[str, Any, Any]]
    numbers: list[tuple[str, float | None, float | None]]
    verdicts: list[tuple[str, str, str, str]]
    checks: list[tuple[str, Any, Any]]
    other: list[tuple[str, str]]

    def sections(self) -> list[tuple[str, list[str], list[list[str]]]]:
        def num(x):
            return "—" if x is None else f"{x:.6g}"

        def diff(x, y):
            return "—" if x is None or y is None else f"{y - x:+.4g}"

        return [
            ("Parameters that differ", ["parameter", self.a.id, self.b.id],
             [[k, json.dumps(x), json.dumps(y)] for k, x, y in self.parameters]),
            ("Verdicts", ["claim", self.a.id, self.b.id, "changed"],
             [[cid, va, vb, "yes" if va != vb else ""] for cid, _, va, vb in self.verdicts]),
            ("Checks", ["check", self.a.id, self.b.id], [[c, str(x), str(y)] for c, x, y in self.checks]),
            ("Recorded numbers", ["value", self.a.id, self.b.id, "difference (B − A)"],
             [[k, num(x), num(y), diff(x, y)] for k, x, y in self.numbers]),
            ("Other recorded values that differ", ["value", "how"], [[k, how] for k, how in self.other]),
        ]

    def to_text(self) -> str:
        out = [f"A = {self.a.id}  ({self.a.meta.get('profile')}, {self.a.chapter}, {self.a.status})",
               f"B = {self.b.id}  ({self.b.meta.get('profile')}, {self.b.chapter}, {self.b.status})"]
        for title, head, rows in self.sections():
            out += ["", f"{title}:"]
            if not rows:
                out.append("  (none)")
                continue
            widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
            out.append("  " + "  ".join(str(h).ljust(w) for h, w in zip(head, widths, strict=True)))
            out += ["  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        return "\n".join(out)

    def to_markdown(self) -> str:
        out = [f"# {self.a.chapter}: run {self.a.id} (A) against run {self.b.id} (B)", ""]
        for title, head, rows in self.sections():
            out += [f"## {title}", ""]
            if not rows:
                out += ["(none)", ""]
                continue
            cell = lambda c: str(c).replace("|", "\\|")  # noqa: E731
            out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
            out.append("")
        return "\n".join(out)

    def to_html(self) -> str:
        from markdown_it import MarkdownIt

        body = MarkdownIt("commonmark").enable("table").render(self.to_markdown())
        return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>medeval compare</title><style>"
                "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
                "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}</style></head><body>"
                f"{body}</body></html>")


def _is_number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _records(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def _join_columns(a, b) -> list[str] | None:
    """The columns two recorded tables are joined on: those that hold no floats and have the same values in both
    (``test_size``, ``operator``, …); a column such as a count that differs between runs is compared instead."""
    if not (_records(a) and _records(b)):
        return None
    columns = [c for c in a[0] if c in b[0]
               and all(not isinstance(r.get(c), float) for r in [*a, *b])
               and {json.dumps(r.get(c)) for r in a} == {json.dumps(r.get(c)) for r in b}]
    return columns or None


def _flatten(prefix: str, value, out: dict, keys: list[str] | None = None) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif _records(value):
        keys = keys if keys is not None else [c for c in value[0]
                                              if all(not isinstance(r.get(c), float) for r in value)]
        labels = [", ".join(f"{c}={r.get(c)}" for c in keys) for r in value]
        if len(set(labels)) != len(labels) or not keys:
            labels = [str(i) for i in range(len(value))]
        for label, row in zip(labels, value, strict=True):
            for c, v in row.items():
                if c not in keys:
                    _flatten(f"{prefix}[{label}].{c}", v, out)
    else:
        out[prefix] = value


def compare(a: Run, b: Run) -> Comparison:
    """Compare the recorded results of two runs (of the same chapter, usually)."""
    ra, rb = a.results(), b.results()
    pa, pb = a.meta.get("params", {}), b.meta.get("params", {})
    parameters = [(k, pa.get(k), pb.get(k)) for k in sorted(set(pa) | set(pb)) if pa.get(k) != pb.get(k)]
    va = {r.get("id"): r for r in ra.get("paper_vs_us", [])}
    vb = {r.get("id"): r for r in rb.get("paper_vs_us", [])}
    verdicts = [(cid, (va.get(cid) or vb.get(cid) or {}).get("claim", ""), (va.get(cid) or {}).get("verdict", "—"),
                 (vb.get(cid) or {}).get("verdict", "—")) for cid in [*va, *[c for c in vb if c not in va]]]
    ca = {r.get("check"): r.get("passed") for r in ra.get("checks", [])}
    cb = {r.get("check"): r.get("passed") for r in rb.get("checks", [])}
    checks = [(c, ca.get(c, "—"), cb.get(c, "—")) for c in [*ca, *[c for c in cb if c not in ca]]
              if ca.get(c) != cb.get(c)]
    fa, fb = {}, {}
    for key in sorted(set(ra) | set(rb)):
        if key in _SKIP:
            continue
        join = _join_columns(ra.get(key), rb.get(key))
        _flatten(key, ra.get(key), fa, join)
        _flatten(key, rb.get(key), fb, join)
    numbers, other = [], []
    for k in [*fa, *[k for k in fb if k not in fa]]:
        x, y = fa.get(k), fb.get(k)
        if (_is_number(x) or x is None) and (_is_number(y) or y is None) and (x is not None or y is not None):
            if x != y:
                numbers.append((k, x, y))
        elif x != y:
            other.append((k, "only in A" if k not in fb else "only in B" if k not in fa else "differs"))
    return Comparison(a, b, parameters, numbers, verdicts, checks, other)


def runs_table(rows: list[Run]) -> str:
    """The text ``medeval runs`` prints: one line per run, oldest first."""
    head = ["run id", "profile", "chapter", "started", "status", "wall", "cache hits", "parameters that differ"]
    lines = []
    for r in rows:
        m = r.meta
        differ = ", ".join(f"{k}={json.dumps(v)}" for k, v in (m.get("overrides") or {}).items()) or "(profile's own)"
        wall = f"{m['wall_time_s']:.0f} s" if isinstance(m.get("wall_time_s"), int | float) else "—"
        lines.append([r.id, m.get("profile", "?"), r.chapter, str(m.get("started", "?")).replace("T", " "),
                      r.status, wall, str(m.get("cache_hits", 0)), differ])
    widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head) - 1)]
    fmt = lambda row: "  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]  # noqa: E731
    return "\n".join([fmt(head), *map(fmt, lines)])


# --------------------------------------------------------------------------------------------------------------
# Re-runs in the book (``medeval book --runs RUN ...``)

_TARGET = re.compile(r"^\((?P<label>[\w.:-]+)\)=\s*$", re.M)
_EQ_LABEL = re.compile(r"(\$\$\s*)\((?P<label>[\w.:-]+)\)")
_OPTION_LABEL = re.compile(r"^(?P<head>\s*:(?:label|name):\s*)(?P<label>[\w.:-]+)\s*$", re.M)
_SECTION = re.compile(r"^#{1,6} ")


def rerun_notebook(run: Run) -> str:
    """The executed notebook of ``run`` made into a page of the book's *Re-runs* part (JSON text).

    Every label the page defines (section targets, equation labels, ``:label:`` and ``:name:`` options) gets the
    run id as a prefix, so the page can sit next to its chapter; references keep pointing at the chapter. The
    self-check and exercises are left out (they belong to the chapter), and a first cell states the run, the
    parameters that differ from the profile and where its provenance is.
    """
    import nbformat

    nb = nbformat.read(run.notebook, as_version=4)
    prefix = f"rerun-{run.id}-"
    kept, skipping = [], False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heading = next((ln for ln in cell.source.splitlines() if _SECTION.match(ln)), "")
            if re.match(r"^## (Self-check|Exercises)\b", heading):
                skipping = True
            elif heading.startswith("## "):
                skipping = False
        if skipping or "exercise-setup" in cell.metadata.get("tags", []):
            continue
        if cell.cell_type == "markdown":
            src = _TARGET.sub(lambda m: f"({prefix}{m['label']})=", cell.source)
            src = _EQ_LABEL.sub(lambda m: f"{m.group(1)}({prefix}{m['label']})", src)
            src = _OPTION_LABEL.sub(lambda m: f"{m['head']}{prefix}{m['label']}", src)
            src = re.sub(r"^# (?=\S)", "## ", src, flags=re.M)  # the chapter's title under the re-run's own
            cell.source = src
        kept.append(cell)
    m = run.meta
    differ = ", ".join(f"`{k}={json.dumps(v)}`" for k, v in (m.get("overrides") or {}).items()) or "none"
    header = nbformat.v4.new_markdown_cell(
        f"# Re-run {run.id}: {m.get('title', run.chapter)}\n\n"
        f"```{{note}}\nA re-run of chapter `{run.chapter}` with the **{m.get('profile')}** profile, kept by "
        f"`medeval run` and added to the book with `medeval book --runs {run.id}`. Parameters that differ from the "
        f"profile: {differ}. Started {m.get('started')}, {m.get('wall_time_s', '?')} s, status {run.status}. "
        f"The chapter's own page explains the method; the Provenance section at the end of this page lists the "
        f"versions and every parameter.\n```")
    header.id = "medeval-rerun-header"  # a fixed id: the same run gives the same page (the book's cache)
    nb.cells = [header, *kept]
    return nbformat.writes(nb)
