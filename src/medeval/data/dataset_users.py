"""Which chapters read each dataset (the manifest's ``used_by``), derived from the chapters' ``params/*.yaml``.

Never written by hand: a chapter states what it reads once, in the ``datasets:`` of its parameter file (which the
pre-flight checks), and :func:`dataset_users` reads it from there for the data appendix and the data CLI.
"""

from __future__ import annotations

import os
from pathlib import Path

from medeval import _yaml
from medeval.data.manifest_loading import repo_root


def dataset_users(params_dir: str | os.PathLike | None = None) -> dict[str, list[str]]:
    """Which chapters read each dataset: ``{dataset id: [chapter ids]}``, from the ``datasets:`` list of every
    chapter's ``params/<chapter>.yaml`` (default ``<repo>/params``), the one place where a chapter states what it
    reads (the pre-flight checks those datasets). Derived, never written by hand, so the two cannot disagree.
    ValueError naming the file for a ``datasets:`` that is not a list of ids."""
    folder = Path(params_dir) if params_dir is not None else repo_root() / "params"
    users: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.yaml")):
        with open(path, encoding="utf-8") as fh:
            raw = _yaml.safe_load(fh) or {}
        listed = raw.get("datasets", []) if isinstance(raw, dict) else []
        if not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
            raise ValueError(f"{path}: 'datasets' must be a list of dataset ids, got {listed!r}")
        for dataset_id in listed:
            users.setdefault(dataset_id, []).append(path.stem)
    return users
