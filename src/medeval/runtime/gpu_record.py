"""What the chapters' ``gpu`` profiles did on a lent GPU, read from ``results/gpu/`` for the Reproducibility page.

``results/gpu/`` holds what ``benchmarks/gpu_session.py`` and ``benchmarks/bench_gpu.py`` produced on a GPU
(the kept runs with their notebooks, parameters and provenance, the process logs, nvidia-smi samples and the
benchmark figures) and a ``README.md`` with the commands and commits. Nothing here estimates a GPU figure: a
page built without that folder says that no GPU run is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from medeval.runtime.paths import project_root


def gpu_results_dir(root: Path | None = None) -> Path:
    return (root or project_root()) / "results" / "gpu"


def session_names(root: Path | None = None) -> list[str]:
    """The recorded GPU sessions: ``session`` (the first) and ``session-<date>`` folders, oldest first."""
    folder = gpu_results_dir(root)
    if not folder.is_dir():
        return []
    names = [p.name for p in folder.iterdir() if p.is_dir() and (p / "summary.json").is_file()
             and (p.name == "session" or p.name.startswith("session-"))]
    return sorted(names, key=lambda n: (n != "session", n))


def session_runs(root: Path | None = None, name: str = "session") -> list[dict]:
    """One row per chapter of a recorded GPU session: status, wall time, verdicts, overrides, device."""
    from medeval.core.claims import VERDICTS

    session = gpu_results_dir(root) / name
    summary_file = session / "summary.json"
    if not summary_file.is_file():
        return []
    summary = json.loads(summary_file.read_text())
    rows = []
    for chapter, entry in summary.items():
        metas = sorted((session / "runs" / chapter).glob("*/meta.json"))
        meta = json.loads(metas[-1].read_text()) if metas else {}
        results_file = metas[-1].with_name("results.json") if metas else None
        results = json.loads(results_file.read_text()) if results_file and results_file.is_file() else {}
        verdicts = dict.fromkeys(VERDICTS, 0)
        for row in results.get("paper_vs_us") or []:
            verdicts[row["verdict"]] += 1
        error = ""
        log_file = session / "logs" / f"{chapter}.log"
        refused = False
        if log_file.is_file():
            log_lines = log_file.read_text().splitlines()
            failed = [line for line in log_lines if line.startswith(f"chapter '{chapter}'")]
            error = failed[-1].split(": ", 1)[-1] if failed else ""
            at = [i for i, line in enumerate(log_lines) if "cannot run here" in line]
            if at and not metas:  # the pre-flight refused it: nothing ran, the reason is on the next line
                refused, error = True, log_lines[at[-1] + 1].strip() if at[-1] + 1 < len(log_lines) else ""
        rows.append({
            "error": error,
            "stopped_at_deadline": bool(entry.get("stopped_at_deadline")),
            "chapter": chapter,
            "status": meta.get("status", "refused before compute" if refused else
                               "not started" if entry.get("not_started") else "no run kept"),
            "wall_s": entry.get("wall_s"),
            "run_id": meta.get("run_id", ""),
            "verdicts": verdicts,
            "overrides": entry.get("overrides", {}),
            "device": (results.get("provenance") or {}).get("device", ""),
        })
    return rows


def benchmark(root: Path | None = None) -> dict | None:
    path = gpu_results_dir(root) / "bench_gpu.json"
    return json.loads(path.read_text()) if path.is_file() else None


def gpu_record_markdown(root: Path | None = None) -> str:
    """The "Runs on a GPU" section of the Reproducibility page (empty-record sentence when none is kept)."""
    lines = ["## Runs on a GPU", ""]
    sessions = {name: session_runs(root, name) for name in session_names(root)}
    rows, bench = [r for rs in sessions.values() for r in rs], benchmark(root)
    if not rows and bench is None:
        return "\n".join(lines + ["No run on a GPU is recorded in `results/gpu/`: no GPU figure is given.", ""])
    lines += [
        "The `gpu` profiles were executed on a lent GPU by `benchmarks/gpu_session.py`; the kept runs (executed "
        "notebooks, parameters, provenance), the logs and the benchmark figures are in `results/gpu/`, whose "
        "`README.md` gives the commands and commits. The `gpu` profiles are sized for a session of hours; where the "
        "lease gave minutes, repetition counts were cut in the first session (the overrides below) and every "
        "GPU-scale setting was kept; the later sessions ran the profiles unreduced, each session's `README.md` says "
        "what became of every chapter.",
    ]
    for name, session_rows in sessions.items():
        lines += ["", *_session_markdown(name, session_rows)]
    if bench is not None:
        lines += ["", benchmark_markdown(bench)]
    return "\n".join(lines) + "\n"


def _session_markdown(name: str, rows: list[dict]) -> list[str]:
    lines = [f"### `results/gpu/{name}/`", "",
             "| chapter | status | wall (s) | [Re] | [¬Re] | [~] | [n/a] |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        v = r["verdicts"]
        wall = "–" if r["wall_s"] is None else r["wall_s"]
        lines.append(f"| `{r['chapter']}` | {r['status']} | {wall} | {v['[Re]']} | {v['[¬Re]']} | "
                     f"{v['[~]']} | {v['[n/a]']} |")
    for r in rows:
        if r["status"] == "interrupted" and r["stopped_at_deadline"]:
            lines += ["", f"`{r['chapter']}` was stopped at the session's deadline, still computing."]
        elif r["status"] == "failed" and r["error"]:
            lines += ["", f"`{r['chapter']}` failed: `{r['error']}`."]
        elif r["status"] == "refused before compute" and r["error"]:
            lines += ["", f"`{r['chapter']}` was refused by the pre-flight check, before any compute: {r['error']}."]
    if any(r["status"] != "ok" for r in rows):
        readme = "results/gpu/README.md" if name == "session" else f"results/gpu/{name}/README.md"
        lines += ["", f"`{readme}` says what was done about each of these."]
    if any(r["overrides"] for r in rows):
        lines += ["", "Overrides of the `gpu` profile in these runs:", ""]
        for r in rows:
            overrides = ", ".join(f"`{k}={json.dumps(x)}`" for k, x in r["overrides"].items()) or "none"
            lines.append(f"- `{r['chapter']}`: {overrides}")
    else:
        lines += ["", "Every profile ran unreduced (no overrides)."]
    devices = sorted({r["device"] for r in rows if r["device"]})
    if devices:
        lines += ["", f"Device recorded by the runs: {', '.join(devices)}."]
    return lines


def benchmark_markdown(bench: dict) -> str:
    """Training throughput, EVE fits/s and the drawstring projection of a ``bench_gpu.py`` report, as tables."""
    machine = bench["machine"]
    lines = [f"Training throughput on the {machine['gpu']} (torch {machine['torch']}, images/s of Adam steps "
             "on batches already on the GPU; `benchmarks/bench_gpu.py`):", "",
             "| model | fp32 | fp32, channels_last | bf16 AMP | bf16 AMP, channels_last |", "|---|---|---|---|---|"]
    for name, t in bench["train_images_per_s"].items():
        lines.append(f"| {name} | {t['fp32_nchw']:,.0f} | {t['fp32_channels_last']:,.0f} | "
                     f"{t['amp_bf16_nchw']:,.0f} | {t['amp_bf16_channels_last']:,.0f} |")
    eve = bench["eve"]
    cores = next(iter(eve.values()))["cores"]
    lines += ["", "EVE fits per second (10-fold CV of hard-margin linear SVMs on the ADNI-like phantom; the fastest "
              "batched variant):", "",
              f"| subjects | batched engine on the GPU | scikit-learn, 1 core | scikit-learn, {cores} cores | "
              "GPU / 1 core | GPU / all cores |", "|---|---|---|---|---|---|"]
    for size, e in eve.items():
        best = max((v for v in e.values() if isinstance(v, dict)), key=lambda v: v["fits_per_s"])
        lines.append(f"| {size} | {best['fits_per_s']:,.0f} | {e['sklearn_1core_fits_per_s']:,.0f} | "
                     f"{e['sklearn_all_cores_fits_per_s']:,.0f} | {best['vs_sklearn_1core']:.1f}x | "
                     f"{best['vs_sklearn_all_cores']:.1f}x |")
    proj = bench["drawstring_projection"]
    lines += ["", f"The paper-scale drawstring experiment ({proj['fits']:,} fits) would take "
              f"{proj['projected_hours']:.1f} h at the measured {proj['fits_per_s']:,.0f} fits/s (float64, the engine's default)."]
    return "\n".join(lines) + "\n"
