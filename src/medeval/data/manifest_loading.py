"""Where the manifest and each dataset's files live, the manifest read and looked up, and how to obtain a dataset.

``shipped`` files are in the repository, ``<repo>/<file.path>`` (:func:`shipped_path`); everything else is in
``data_dir() / <id> / <file.path>``, where :func:`data_dir` is ``$MEDEVAL_DATA`` or, if unset, the user cache
directory ``pooch.os_cache("medeval")``. :func:`load_manifest` reads and validates ``data_manifest.yaml``
(:mod:`medeval.data.manifest_schema`), cached by its mtime; :func:`get_dataset` looks an entry up;
:func:`repair_instructions` is the remedy every message about a damaged file ends with.
"""

from __future__ import annotations

import functools
import importlib
import os
from pathlib import Path

from medeval import _yaml
from medeval._files import project_root
from medeval.data.manifest_schema import DataFile, DatasetEntry, Manifest


def repo_root() -> Path:
    """The repository checkout (``medeval._files.project_root``, without requiring its ``params/``)."""
    return project_root(require_params=False)


def manifest_path() -> Path:
    """``<repo>/data_manifest.yaml``."""
    return repo_root() / "data_manifest.yaml"


def data_dir() -> Path:
    """Where downloaded datasets live: ``$MEDEVAL_DATA`` if set, else ``pooch.os_cache("medeval")``."""
    env = os.environ.get("MEDEVAL_DATA")
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("medeval"))


def dataset_dir(dataset_id: str) -> Path:
    """``data_dir() / dataset_id`` (not created)."""
    get_dataset(dataset_id)  # validates the id
    return data_dir() / dataset_id


def shipped_path(dataset_id: str, index: int = 0) -> Path:
    """Absolute path of a shipped file (``<repo>/data/...``)."""
    entry = get_dataset(dataset_id)
    if entry.access != "shipped":
        raise ValueError(f"dataset_id {dataset_id!r} is not shipped (access {entry.access!r})")
    return repo_root() / entry.files[index].path


@functools.lru_cache(maxsize=4)
def _load_manifest_cached(path: str, mtime_ns: int) -> Manifest:
    with open(path, encoding="utf-8") as fh:
        raw = _yaml.safe_load(fh)
    return Manifest.model_validate(raw)


def load_manifest(path: str | os.PathLike | None = None) -> Manifest:
    """Read and validate the manifest (default ``<repo>/data_manifest.yaml``); cached by file mtime."""
    p = Path(path) if path is not None else manifest_path()
    if not p.is_file():
        raise FileNotFoundError(
            f"data manifest not found at {p}; set MEDEVAL_ROOT to the repository checkout"
        )
    return _load_manifest_cached(str(p.resolve()), p.stat().st_mtime_ns)


def get_dataset(dataset_id: str, manifest: Manifest | None = None) -> DatasetEntry:
    """The manifest entry of ``dataset_id``; ValueError listing the known ids otherwise."""
    m = manifest if manifest is not None else load_manifest()
    for entry in m.datasets:
        if entry.id == dataset_id:
            return entry
    raise ValueError(f"dataset_id must be one of {m.ids()}, got {dataset_id!r}")


def resolve_reader(entry: DatasetEntry):
    """Import and return the object named by ``entry.reader``."""
    module_name, _, attr = entry.reader.rpartition(".")
    module = importlib.import_module(module_name)
    return getattr(module, attr)


def _local_path(entry: DatasetEntry, f: DataFile) -> Path:
    if entry.access == "shipped":
        return repo_root() / f.path
    return data_dir() / entry.id / f.path


def _marker_path(entry: DatasetEntry, f: DataFile) -> Path:
    """What proves a file is present: for unpacked archives a stamp file, for gunzipped files the .h5."""
    base = data_dir() / entry.id
    if f.unpack == "gunzip":
        return base / f.path.removesuffix(".gz")
    if f.unpack in ("untar", "unzip"):
        return base / (f.path + ".unpacked")
    return base / f.path


def _presence_paths(entry: DatasetEntry, root: Path) -> list[Path]:
    """The paths whose existence means the dataset was fetched (auto: the markers) or placed (manual)."""
    return [_marker_path(entry, f) if entry.access == "auto" else root / f.path for f in entry.files]


def _how_to_get(entry: DatasetEntry) -> str:
    where = data_dir() / entry.id
    if entry.access == "private":
        return f"dataset {entry.id!r} ({entry.title}) is private and cannot be obtained. {entry.instructions or ''}"
    if entry.access == "manual":
        return (
            f"dataset {entry.id!r} ({entry.title}) must be obtained manually: {entry.instructions} "
            f"Expected layout: {entry.layout or 'see data_manifest.yaml'} (dataset folder {where})."
        )
    if entry.access == "auto":
        return (
            f"dataset {entry.id!r} ({entry.title}) is not downloaded; run `medeval data fetch {entry.id}` "
            f"(downloads into {where}; set MEDEVAL_DATA to choose the folder)."
        )
    return f"dataset {entry.id!r} ({entry.title}) is not available"


def repair_instructions(entry: DatasetEntry) -> str:
    """How to replace a damaged file of ``entry``: the remedy every corrupt-data message ends with."""
    if entry.access == "auto":
        return (
            f"run `medeval data fetch {entry.id} --force` (downloads and unpacks {entry.id} again and rewrites "
            "its content record)"
        )
    if entry.access == "manual":
        return (
            f"copy the damaged file(s) again from your download of {entry.id}, then run "
            f"`medeval data verify {entry.id} --record` to record the intact copy. How to obtain it: "
            f"{_how_to_get(entry)}"
        )
    if entry.access == "shipped":
        return "restore the file from the repository (e.g. `git restore <path>`); it is part of the checkout"
    return _how_to_get(entry)
