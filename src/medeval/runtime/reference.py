"""The committed reference of a build, and ``medeval verify``: does this build give the book we published?

``results/reference/<profile>.json`` holds, for a build made on a stated reference machine (its CPU, the numerics
mode, the library versions and the commit): every claim row's verdict with the numbers it rests on, every check's
outcome, every recorded number of every chapter, and a digest of all recorded values. It is written only by
``medeval verify --update`` (``make reference``), on purpose, and its diff is reviewed like code.

:func:`verify` compares a build's recorded results with it, chapter by chapter: are the verdicts identical, what
is the largest relative difference of the numbers, which rows or values differ. A verdict that differs, or a
number that differs by more than the tolerance the reference states for it (none: bit-identical), fails.
Values that describe the machine rather than the science (wall times, memory, provenance) are not compared.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medeval.runtime.paths import atomic_write_text, project_root

REFERENCE_VERSION = 1

#: recorded keys that describe the machine or the run, not the result: never compared
MACHINE_KEYS = ("provenance", "wall_time_s", "peak_memory_bytes", "resource_estimate", "profile", "params")

#: recorded values that are durations measured on the machine (``cnn_train_seconds``): never compared
MACHINE_VALUE_PATTERNS = ("*_seconds", "*.*_seconds")

#: what a claim row's verdict rests on (compared as text: the numbers in it are printed by the rule)
ROW_FIELDS = ("verdict", "ours", "effect", "n", "test", "basis", "substitution")


def reference_file(profile: str) -> Path:
    return project_root() / "results" / "reference" / f"{profile}.json"


def recorded_values(results: dict[str, Any]) -> dict[str, Any]:
    """Every recorded value of a chapter run, flattened to ``key.sub[row].column`` paths (the claim rows, checks and
    errata included; the machine's own values left out)."""
    from medeval.runtime.runs import _flatten

    out: dict[str, Any] = {}
    for key in sorted(results):
        if key not in MACHINE_KEYS:
            _flatten(key, results[key], out, None)
    return {k: v for k, v in out.items() if not is_machine_value(k)}


def is_machine_value(key: str) -> bool:
    """A flattened value that measures the machine, not the result (:data:`MACHINE_VALUE_PATTERNS`)."""
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in MACHINE_VALUE_PATTERNS)


def values_digest(values: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=repr).encode()).hexdigest()


def chapter_snapshot(results: dict[str, Any]) -> dict[str, Any]:
    """What the reference keeps of one chapter's run."""
    values = recorded_values(results)
    return {
        "rows": {r["id"]: {k: r.get(k) for k in ROW_FIELDS} for r in results.get("paper_vs_us") or []},
        "checks": {str(c.get("check")): c.get("passed") for c in results.get("checks") or []},
        "values": {k: v for k, v in values.items() if not k.startswith(("paper_vs_us", "checks", "errata"))},
        "digest": values_digest(values),
    }


def snapshot(results_by_chapter: dict[str, dict[str, Any]], profile: str, *,
             tolerances: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """A reference for ``profile`` from each chapter's recorded results (``{chapter: results.json}``)."""
    from medeval.runtime import numerics, provenance

    first = next(iter(results_by_chapter.values()), {}).get("provenance", {})
    return {
        "version": REFERENCE_VERSION,
        "profile": profile,
        "machine": {"device": provenance.device_name(), "numerics": first.get("numerics", numerics.describe())},
        "versions": {k: first.get(k) for k in ("medeval", "python", "torch", "numpy", "scikit-learn")},
        "git_commit": str(first.get("git_commit", "unknown")),
        "tolerances": tolerances or {},
        "chapters": {cid: chapter_snapshot(res) for cid, res in results_by_chapter.items()},
    }


def load_reference(profile: str) -> dict[str, Any]:
    path = reference_file(profile)
    if not path.exists():
        raise FileNotFoundError(f"no committed reference for profile {profile!r} ({path}); `medeval verify "
                                f"--profile {profile} --update` writes one from this build")
    data = json.loads(path.read_text())
    if data.get("version") != REFERENCE_VERSION:
        raise ValueError(f"{path}: reference version {data.get('version')!r}, expected {REFERENCE_VERSION}")
    return data


def write_reference(results_by_chapter: dict[str, dict[str, Any]], profile: str) -> Path:
    """Write the committed reference (keeping the tolerances it states)."""
    path = reference_file(profile)
    old = json.loads(path.read_text()) if path.exists() else {}
    data = snapshot(results_by_chapter, profile, tolerances=old.get("tolerances"))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True, allow_nan=True) + "\n")
    return path


def relative_difference(a: Any, b: Any) -> float:
    """``|a − b| / max(|a|, |b|)`` for two numbers (0 when equal, NaN and inf equal to themselves); ``inf`` when one
    is missing or not a number while the other is."""
    if a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
        return 0.0
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b))
    if not numbers or not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b))


def tolerance_for(reference: dict[str, Any], chapter: str, key: str) -> float:
    """The relative tolerance the reference states for a value (``tolerances: {chapter: {glob: tol}}``); 0."""
    for pattern, tol in (reference.get("tolerances") or {}).get(chapter, {}).items():
        if fnmatch.fnmatchcase(key, pattern):
            return float(tol)
    return 0.0


@dataclass
class ChapterVerification:
    chapter: str
    verdicts_identical: bool
    largest_relative_difference: float
    rows_differing: list[tuple[str, str, str]] = field(default_factory=list)  # (claim, reference, this build)
    checks_differing: list[tuple[str, Any, Any]] = field(default_factory=list)
    values_differing: list[tuple[str, Any, Any, float, float]] = field(default_factory=list)  # key, ref, ours, rel, tol
    missing: str | None = None

    @property
    def failed(self) -> bool:
        return (self.missing is not None or not self.verdicts_identical or bool(self.checks_differing)
                or any(rel > tol for *_, rel, tol in self.values_differing))

    @property
    def identical(self) -> bool:
        return not self.failed and not self.values_differing and not self.rows_differing


@dataclass
class Verification:
    profile: str
    reference_commit: str
    reference_machine: str
    chapters: list[ChapterVerification]

    @property
    def failed(self) -> bool:
        return any(c.failed for c in self.chapters)

    def summary(self) -> str:
        if not self.failed and all(c.identical for c in self.chapters):
            return f"identical to the reference ({self.reference_machine}, commit {self.reference_commit[:12]})"
        bad = [c.chapter for c in self.chapters if c.failed]
        if bad:
            return "differs from the reference in " + ", ".join(bad)
        parts = []
        if any(c.values_differing for c in self.chapters):
            parts.append("some numbers differ within their stated tolerances")
        if any(c.rows_differing for c in self.chapters):
            parts.append("some rows' wording differs (verdicts and numbers identical)")
        return "verdicts identical to the reference; " + "; ".join(parts)

    def to_text(self, limit: int = 20) -> str:
        out = [f"medeval verify ({self.profile}): {self.summary()}", ""]
        for c in self.chapters:
            if c.missing:
                out.append(f"{c.chapter}: FAIL, {c.missing}")
                continue
            state = "identical" if c.identical else ("FAIL" if c.failed else "within tolerance")
            out.append(f"{c.chapter}: {state}; verdicts {'identical' if c.verdicts_identical else 'DIFFER'}; "
                       f"largest relative difference of the numbers {c.largest_relative_difference:.3g}")
            for cid, ref, ours in c.rows_differing[:limit]:
                out.append(f"    claim {cid}: reference {ref} | this build {ours}")
            for name, ref, ours in c.checks_differing[:limit]:
                out.append(f"    check {name}: reference {ref}, this build {ours}")
            for key, ref, ours, rel, tol in c.values_differing[:limit]:
                out.append(f"    {key}: reference {ref!r}, this build {ours!r} (relative {rel:.3g}, tolerance {tol:g})")
            hidden = max(0, len(c.values_differing) - limit)
            if hidden:
                out.append(f"    ... and {hidden} more values")
        return "\n".join(out)

    def to_markdown(self) -> str:
        lines = [f"**This build: {self.summary()}.**", "",
                 "| chapter | verdicts | largest relative difference | values differing (beyond tolerance) |",
                 "|---|---|---|---|"]
        for c in self.chapters:
            if c.missing:
                lines.append(f"| `{c.chapter}` | not compared: {c.missing} | | |")
                continue
            beyond = sum(rel > tol for *_, rel, tol in c.values_differing)
            lines.append(f"| `{c.chapter}` | {'identical' if c.verdicts_identical else '**differ**'} | "
                         f"{c.largest_relative_difference:.3g} | {len(c.values_differing)} ({beyond}) |")
        return "\n".join(lines)


def _row_text(row: dict[str, Any] | None, fields=ROW_FIELDS) -> str:
    if row is None:
        return "absent"
    return "; ".join(f"{k}={row.get(k)}" for k in fields if row.get(k) not in (None, ""))


def _row_difference(a: dict[str, Any] | None, b: dict[str, Any] | None) -> tuple[str, str]:
    """The two sides of a differing row, each showing only the fields that differ (the verdict always)."""
    if a is None or b is None:
        return _row_text(a), _row_text(b)
    fields = ["verdict", *(k for k in ROW_FIELDS if k != "verdict" and a.get(k) != b.get(k))]
    return _row_text(a, fields), _row_text(b, fields)


def new_chapters(profile: str = "smoke") -> list[str]:
    """The registry's chapters that the committed reference of ``profile`` does not hold: chapters added since it
    was written (a scaffolded chapter), which ``make reference`` and ``make calibrate`` on the reference machine
    take in. ``medeval verify`` refuses them ("not in the reference"); the test suite reports them."""
    from medeval.runtime.params import chapters

    held = set(load_reference(profile).get("chapters") or {})
    return [cid for cid in chapters() if cid not in held]


def verify_chapter(reference: dict[str, Any], chapter: str, results: dict[str, Any] | None) -> ChapterVerification:
    ref = (reference.get("chapters") or {}).get(chapter)
    if ref is None:
        return ChapterVerification(chapter, False, math.inf, missing="not in the reference")
    if results is None:
        return ChapterVerification(chapter, False, math.inf, missing="no run of the current code in this build")
    ours = chapter_snapshot(results)
    rows = []
    verdicts_identical = True
    for cid in [*ref["rows"], *[c for c in ours["rows"] if c not in ref["rows"]]]:
        a, b = ref["rows"].get(cid), ours["rows"].get(cid)
        if (a or {}).get("verdict") != (b or {}).get("verdict"):
            verdicts_identical = False
        if a != b:
            rows.append((cid, *_row_difference(a, b)))
    checks = [(k, ref["checks"].get(k, "absent"), ours["checks"].get(k, "absent"))
              for k in [*ref["checks"], *[k for k in ours["checks"] if k not in ref["checks"]]]
              if ref["checks"].get(k, "absent") != ours["checks"].get(k, "absent")]
    values, largest = [], 0.0
    ref_values = {k: v for k, v in ref["values"].items() if not is_machine_value(k)}  # an older reference kept them
    for key in [*ref_values, *[k for k in ours["values"] if k not in ref_values]]:
        a, b = ref_values.get(key, "absent"), ours["values"].get(key, "absent")
        rel = relative_difference(a, b)
        if rel > 0:
            values.append((key, a, b, rel, tolerance_for(reference, chapter, key)))
            largest = max(largest, rel)
    return ChapterVerification(chapter, verdicts_identical, largest, rows, checks, values)


def verify(results_by_chapter: dict[str, dict[str, Any] | None], reference: dict[str, Any]) -> Verification:
    """Compare each chapter's recorded results (``None``: no run of the current code) with ``reference``."""
    names = [*reference.get("chapters", {}), *[c for c in results_by_chapter if c not in reference.get("chapters", {})]]
    return Verification(reference.get("profile", "?"), reference.get("git_commit", "?"),
                        reference.get("machine", {}).get("device", "?"),
                        [verify_chapter(reference, c, results_by_chapter.get(c)) for c in names])


def current_results(profile: str, chapter_ids: list[str] | None = None) -> dict[str, dict[str, Any] | None]:
    """Each chapter's recorded results from this checkout's run store: the run of the profile's own parameters
    with the current cache key (the code, parameters, data and environment of now), ``None`` where none exists.
    Nothing is executed."""
    from medeval.runtime import runs
    from medeval.runtime.cache_keys import cache_key
    from medeval.runtime.params import chapters, resolve_params
    from medeval.runtime.paths import runs_dir

    registry = chapters()
    out: dict[str, dict[str, Any] | None] = {}
    for cid in chapter_ids or list(registry):
        params_json = resolve_params(cid, profile).model_dump(mode="json")
        key, _ = cache_key(registry[cid], profile, params_json)
        run = runs.find_good_run(runs_dir() / profile, cid, key)
        out[cid] = run.results() if run is not None else None
    return out
