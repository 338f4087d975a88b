"""Shared ends of the benchmark scripts: the machine line, the load-average line and writing the Markdown report."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_topology() -> str:
    """How the logical cores map onto physical ones, from Linux's ``/sys/devices/system/cpu/cpu*/topology``:
    e.g. ``2 cores x 1 thread`` (two vCPUs that are separate cores) or ``1 core x 2 threads`` (hyperthreads of
    one core, which share its execution units). Empty where the kernel does not say."""
    from pathlib import Path

    cores, threads = set(), 0
    for topo in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology"):
        try:
            package = (topo / "physical_package_id").read_text().strip()
            core = (topo / "core_id").read_text().strip()
        except OSError:
            return ""
        cores.add((package, core))
        threads += 1
    if not cores:
        return ""
    per_core = threads / len(cores)
    per = f"{per_core:g} thread{'s' if per_core != 1 else ''}"
    return f"{len(cores)} core{'s' if len(cores) != 1 else ''} x {per}"


def machine() -> str:
    """CPU model, logical cores, their topology and system, e.g. ``Intel(R) Xeon(R) Processor (x86_64), 2 logical
    cores (2 cores x 1 thread), Linux``: benchmark figures differ about 2x between this project's machines, so each
    names its CPU."""
    from medeval.runtime.provenance import cpu_name

    topology = cpu_topology()
    return (f"{cpu_name()} ({platform.machine()}), {os.cpu_count()} logical cores"
            f"{f' ({topology})' if topology else ''}, {platform.system()}")


def load_average() -> str:
    """The 1, 5 and 15 min load averages, to judge whether other jobs shared the CPU during the run."""
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def write_report(lines: list[str], out) -> str:
    """Join ``lines``, print them and write them to ``out`` (folders created); returns the text."""
    text = "\n".join(lines) + "\n"
    print(text)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text)
    return text
