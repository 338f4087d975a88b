"""Shared ends of the benchmark scripts: the machine line, the load-average line and writing the Markdown report."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine() -> str:
    """CPU model, logical cores and system, e.g. ``Intel(R) Xeon(R) Processor (x86_64), 2 logical cores, Linux``:
    benchmark figures differ about 2x between this project's machines, so each names its CPU."""
    from medeval.runtime.provenance import cpu_name

    return f"{cpu_name()} ({platform.machine()}), {os.cpu_count()} logical cores, {platform.system()}"


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
