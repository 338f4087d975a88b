"""Where the compendium's files live."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The repository root: ``$MEDEVAL_ROOT`` if set, else the checkout that holds this package.

    The package is installed in editable mode from ``src/``, so the root is two levels above it.
    """
    env = os.environ.get("MEDEVAL_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[3]
    if not (root / "params").is_dir():
        raise RuntimeError(
            f"medeval project root {root} has no params/ folder; set MEDEVAL_ROOT to the repository checkout"
        )
    return root


def runs_dir() -> Path:
    """The run store (:mod:`medeval.runtime.runs`) and the grid cache: ``<root>/_runs/`` (``MEDEVAL_RUNS`` moves it)."""
    env = os.environ.get("MEDEVAL_RUNS")
    return Path(env) if env else project_root() / "_runs"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old content or the new, never a partial file: a
    temporary file named for this process in the same folder, then one rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
