"""Provenance of an executed chapter: code version, library versions, hardware, profile, parameters, time."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import medeval

#: the tracked paths whose changes change what a chapter computes (the inputs of its cache key); an edited README,
#: test or benchmark does not make a page's provenance "-dirty"
SOURCE_PATHS = ("src", "notebooks", "params", "data", "data_manifest.yaml", "pyproject.toml")


def git_commit(root: Path) -> str:
    """``<sha>``, or ``<sha>-dirty`` when a tracked source file (:data:`SOURCE_PATHS`) differs from the commit, for
    the checkout at ``root``; ``unknown`` outside git."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", *SOURCE_PATHS],
            cwd=root, capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}-dirty" if dirty else sha


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_name() -> str:
    """The GPU's name when CUDA is available, else the CPU model."""
    import os

    from medeval.models.cuda import cuda_device_name

    gpu = cuda_device_name()
    return f"GPU: {gpu}" if gpu else f"CPU: {cpu_name()} ({os.cpu_count()} cores)"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def collect(root: Path) -> dict:
    return {
        "medeval": medeval.__version__,
        "git_commit": git_commit(root),
        "python": sys.version.split()[0],
        "torch": _version("torch"),
        "numpy": _version("numpy"),
        "scikit-learn": _version("scikit-learn"),
        "device": device_name(),
        "platform": platform.platform(),
    }
