"""Which kernels give the same bits on every CPU: the digests of ``medeval.runtime.numerics.kernel_digests`` under
each numerics mode, on this machine, against those recorded for pinned numerics (issue #33).

    .venv/bin/python benchmarks/bench_kernel_bits.py [--out benchmarks/results/kernel-bits-<vendor>.md]

Modes: ``pinned`` (what the book computes with), ``pinned, MKL AUTO branch`` (what MKL computed on a CPU that is
not Intel's before its branch was pinned there: on an Intel CPU the same as its own AUTO choice), ``pinned +
oneDNN`` (oneDNN's kernels, ISA capped at AVX2: twice as fast for the chapters' convolutions,
``bench_training_step.py``, but its blocking follows the CPU's caches) and ``native``. Each writes one report per
CPU vendor, so that the reports of two machines side by side say which kernels moved between them: the evidence
for or against letting oneDNN into the pinned mode.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

MODES = {"pinned": ("pinned", {}), "pinned, MKL AUTO branch": ("pinned", {"MKL_CBWR": "AUTO,STRICT", "LD_PRELOAD": ""}),
         "pinned + oneDNN": ("pinned", {"MEDEVAL_ONEDNN": "1"}), "native": ("native", {})}


def main() -> None:
    from _report import load_average, machine, write_report

    from medeval.runtime import numerics

    vendor = numerics.cpu_vendor() or "unknown"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / f"kernel-bits-{vendor}.md"))
    args = parser.parse_args()
    seen = {name: numerics.check_kernels(env, mode) for name, (mode, env) in MODES.items()}
    lines = ["# Kernel bits by numerics mode", "",
             "Command: `.venv/bin/python benchmarks/bench_kernel_bits.py`  ",
             f"Machine: {machine()}, vendor {vendor}; load average at the end {load_average()}.", "",
             "SHA-256 prefixes of each kernel family's outputs on fixed inputs "
             "(`medeval.runtime.numerics.kernel_digests`); **bold**: differs from the bits recorded for pinned "
             "numerics (`KERNEL_BITS`).", "",
             "| kernel family | recorded (pinned) | " + " | ".join(MODES) + " |",
             "|---|---|" + "---|" * len(MODES)]
    for name, recorded in numerics.KERNEL_BITS.items():
        cells = [(f"**{s['parts'][name]}**" if name in s["moved"] else s["parts"][name]) for s in seen.values()]
        lines.append(f"| {name} | {recorded} | " + " | ".join(cells) + " |")
    lines += ["", "Kernel families that differ from the record, by mode: " + "; ".join(
        f"{mode}: {', '.join(s['moved']) or 'none'}" for mode, s in seen.items()) + "."]
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
