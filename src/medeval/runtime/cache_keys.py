"""Cache keys of executed chapters: what an executed notebook depends on, hashed.

The key hashes the notebook source and its self-check questions (``teaching/quizzes``), the resolved parameters and profile, every file of ``src/medeval``, the
manifest entries the chapter reads (and a digest of the local data folders it reads), and the installed
distributions' versions. An unchanged key reuses the newest good run with that key
(:func:`medeval.runtime.execution.run_chapter`); any change executes a new run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path

from medeval import _yaml
from medeval.data.manifest import file_hash
from medeval.runtime.numerics import numerics_mode
from medeval.runtime.params import (
    Chapter,
    ParameterError,
)
from medeval.runtime.paths import project_root
from medeval.runtime.quiz import quiz_path
from medeval.runtime.robustness import chapter_record_digest

KEY_VERSION = "1"


def digest_files(paths: list[Path], root: Path, h) -> None:
    """Feed each file's path relative to ``root`` and its bytes into the hash ``h`` (``hashlib`` object)."""
    for path in paths:
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")


def source_files(root: Path | None = None) -> list[Path]:
    """Every file of ``src/medeval`` that can change behaviour (no bytecode caches)."""
    root = root or project_root()
    pkg = root / "src" / "medeval"
    return sorted(
        p for p in pkg.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )


def source_digest(root: Path | None = None) -> str:
    root = root or project_root()
    h = hashlib.sha256()
    digest_files(source_files(root), root, h)
    return h.hexdigest()


_ENVIRONMENT_DIGEST: tuple[tuple, str] | None = None  # (the sys.path folders' state, the digest) last computed


def environment_digest() -> str:
    """Hash of ``name==version`` of every installed distribution (the locked environment).

    Reading every distribution's metadata costs about 0.1 s per 100 distributions, and a process asks once per
    chapter run and grid run, so the digest is kept for as long as the folders on ``sys.path`` are unchanged:
    installing, upgrading or removing a distribution adds or removes a ``*.dist-info`` folder in one of them, which
    changes that folder's modification time (and a changed ``sys.path`` is a different set of folders).
    """
    global _ENVIRONMENT_DIGEST
    state = _path_folders_state()
    if _ENVIRONMENT_DIGEST is not None and _ENVIRONMENT_DIGEST[0] == state:
        return _ENVIRONMENT_DIGEST[1]
    pins = []
    for dist in metadata.distributions():
        meta = dist.metadata  # parsed anew on each access: read it once
        name = (meta["Name"] or "").lower()
        if name != "medeval":
            pins.append(f"{name}=={meta['Version']}")
    digest = hashlib.sha256("\n".join(sorted(pins)).encode()).hexdigest()
    _ENVIRONMENT_DIGEST = (state, digest)
    return digest


def _path_folders_state() -> tuple:
    """The folders on ``sys.path`` with their modification times (where distributions are looked up)."""
    state = []
    for entry in sys.path:
        folder = os.path.abspath(entry)  # "" is the working folder, which can change
        try:
            state.append((folder, os.stat(folder).st_mtime_ns))
        except OSError:
            state.append((folder, None))
    return tuple(state)


def manifest_entries(dataset_ids: tuple[str, ...], root: Path | None = None) -> list[dict]:
    root = root or project_root()
    if not dataset_ids:
        return []
    manifest_path = root / "data_manifest.yaml"
    if not manifest_path.exists():
        raise ParameterError(f"{manifest_path} is missing; chapters read datasets {list(dataset_ids)} from it")
    manifest = _yaml.safe_load(manifest_path.read_text()) or {}
    entries = manifest.get("datasets", manifest)
    by_id = {e["id"]: e for e in entries} if isinstance(entries, list) else entries
    unknown = [d for d in dataset_ids if d not in by_id]
    if unknown:
        raise ParameterError(f"datasets {unknown} are not in data_manifest.yaml; known: {sorted(by_id)}")
    return [by_id[d] for d in dataset_ids]


def local_data_digest(dataset_ids) -> str:
    """Fingerprint of the local files of a chapter's downloaded or hand-placed datasets.

    Per dataset: "absent" when :func:`medeval.data.manifest.require` refuses it, else a sha256 over every file's
    relative path, size and modification time under its folder (not the contents: ChestX-ray14 alone is 42 GB).
    Shipped and bundled datasets are skipped (the manifest entry and the installed versions cover them). Fetching,
    placing or replacing data therefore changes the key of every chapter that lists the dataset.
    """
    from medeval.data.manifest import DatasetUnavailableError, get_dataset, require

    out: dict[str, str] = {}
    for d in sorted(set(dataset_ids)):
        if get_dataset(d).access in ("shipped", "bundled"):
            continue
        try:
            root = Path(require(d))
        except DatasetUnavailableError:
            out[d] = "absent"
            continue
        h = hashlib.sha256()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = Path(dirpath) / name
                st = path.stat()
                h.update(f"{path.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        out[d] = h.hexdigest()
    return hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()


def cache_key(chapter: Chapter, profile: str, params_json: dict) -> tuple[str, dict[str, str]]:
    """The cache key and its parts (so a stale cache can say what changed)."""
    root = project_root()
    parts = {
        "key_version": KEY_VERSION,
        "notebook": file_hash(chapter.notebook),
        # the page shows the chapter's self-check questions, read from their file when it runs
        "quiz": file_hash(quiz_path(chapter.id)) if quiz_path(chapter.id).is_file() else "",
        "params": hashlib.sha256(json.dumps({"profile": profile, **params_json}, sort_keys=True).encode()).hexdigest(),
        "src": source_digest(root),
        "manifest": hashlib.sha256(
            json.dumps(manifest_entries(chapter.datasets, root), sort_keys=True, default=str).encode()
        ).hexdigest(),
        "environment": environment_digest(),
        "data": local_data_digest(chapter.datasets),
        "numerics": numerics_mode(),  # pinned and native numbers differ: never served for each other
        # the page shows each claim's agreement across seeds from the committed record
        "robustness": chapter_record_digest(chapter.id, profile),
    }
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return key, parts


