"""What pinned numerics cost, and that they pin: chapters run under both modes, side by side, in one run.

    python benchmarks/bench_numerics.py [--profile smoke] [--chapters 01-mil-stability 04a-class-distribution ...]
                                        [--out benchmarks/results/numerics.md]

Each chapter is executed (``--force``, each mode in its own scratch run store, so nothing is reused) three times:
``pinned``, ``pinned`` again with a hostile environment (``ONEDNN_MAX_CPU_ISA=SSE41``, ``MKL_CBWR=COMPATIBLE``,
``ATEN_CPU_CAPABILITY=default``, 2 threads) that pinning must override, and ``native`` (each library's own choice).
The report gives each run's wall time, the pinned/native time ratio, and how many recorded values differ from the
first pinned run: 0 for the hostile pinned run is the claim; native's count shows what pinning changes here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _report import load_average, machine, write_report  # noqa: E402

HOSTILE = {"ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default",
           "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
MODES = {"pinned": ({"MEDEVAL_NUMERICS": "pinned"}), "pinned, hostile environment": {"MEDEVAL_NUMERICS": "pinned",
                                                                                     **HOSTILE},
         "native": {"MEDEVAL_NUMERICS": "native"}}


def run(chapter: str, profile: str, env_extra: dict, store: Path) -> tuple[float, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEDEVAL_", "ONEDNN", "MKL_", "ATEN_", "OMP_",
                                                                      "OPENBLAS", "NPY_"))}
    env.update(env_extra, MEDEVAL_RUNS=str(store), MEDEVAL_RECORD_TIMINGS="0")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "medeval.cli", "run", chapter, "--profile", profile, "--force"], env=env,
                   cwd=ROOT, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    results = json.loads(next((store / profile / chapter).glob("*/results.json")).read_text())
    return wall, results


def main() -> None:
    from medeval.runtime.reference import recorded_values

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--chapters", nargs="+", default=["01-mil-stability", "02-rodeo", "03-eve",
                                                           "04a-class-distribution", "04b-evaluation-measures",
                                                           "05-multilabel", "A1-data", "A2-rerun"])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "numerics.md"))
    args = parser.parse_args()
    modes = {m: MODES[m] for m in args.modes if m in MODES}
    if "pinned" not in modes or "native" not in modes:
        parser.error("--modes must include pinned and native")
    rows, totals = [], dict.fromkeys(modes, 0.0)
    with tempfile.TemporaryDirectory(prefix="medeval-numerics-") as tmp:
        for chapter in args.chapters:
            seen = {}
            for mode, env in modes.items():
                store = Path(tmp) / "".join(c if c.isalnum() else "_" for c in mode) / chapter  # one per mode
                wall, results = run(chapter, args.profile, env, store)
                seen[mode] = (wall, recorded_values(results), results["provenance"].get("numerics", "?"))
                totals[mode] += wall
            base = seen["pinned"][1]
            cells = []
            for mode in modes:
                wall, values, _ = seen[mode]
                differ = sum(1 for k in set(base) | set(values) if json.dumps(base.get(k)) != json.dumps(values.get(k)))
                cells.append(f"{wall:.1f} s, {differ} of {len(base)} values differ")
            ratio = seen["pinned"][0] / seen["native"][0]
            rows.append(f"| `{chapter}` | " + " | ".join(cells) + f" | {ratio:.2f} |")
    lines = [f"# Pinned numerics vs native ({args.profile} profile)", "",
             f"Machine: {machine()}; load average before/after: {load_average()}.", "",
             "Each cell: wall time of `medeval run --force` and how many recorded values differ from the pinned run.",
             "", "| chapter | " + " | ".join(modes) + " | pinned / native time |",
             "|---|" + "---|" * (len(modes) + 1), *rows, "",
             "Total: " + ", ".join(f"{m} {t:.0f} s" for m, t in totals.items())
             + f"; pinned / native {totals['pinned'] / totals['native']:.2f}."]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
