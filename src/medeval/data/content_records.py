"""File checksums and content records: what a dataset folder held when it was fetched or recorded, file by file.

A published archive checksum says nothing about the files unpacked from it, so :func:`medeval.data.fetching.fetch`
writes a *content record* per dataset folder, ``<id>/.medeval-content.json``: the relative path, size and sha256
of every file it unpacked, plus the archives' published checksums (:func:`read_content_record`). For datasets
placed by hand, ``medeval data verify ID --record`` (:func:`record_content`) writes the same record from the files
present. All file digests go through :func:`file_hash`. What the records are checked against, and when, is
:mod:`medeval.data.manifest`'s (verification).
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from medeval._files import atomic_write_text
from medeval.data.manifest_loading import (
    _how_to_get,
    _marker_path,
    _presence_paths,
    data_dir,
    dataset_dir,
    get_dataset,
)
from medeval.data.manifest_schema import (
    ChecksumError,
    DataFile,
    DatasetCorruptError,
    DatasetEntry,
    DatasetUnavailableError,
)


def file_hash(path: str | os.PathLike, algorithm: str = "sha256", chunk_size: int = 1 << 20) -> str:
    """Hex digest of a file, streamed."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(chunk_size), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_file(path: str | os.PathLike, *, sha256: str | None = None, md5: str | None = None) -> None:
    """Raise :class:`ChecksumError` (naming the file and the expected checksum) unless the file matches.

    The sha256 is checked when given, else the md5. A missing file raises FileNotFoundError.
    """
    p = Path(path)
    if not p.is_file():
        expected = f"sha256 {sha256}" if sha256 else (f"md5 {md5}" if md5 else "no checksum")
        raise FileNotFoundError(f"file {p} is missing (expected {expected})")
    algo, expected = ("sha256", sha256) if sha256 else ("md5", md5)
    if expected is None:
        return
    actual = file_hash(p, algo)
    if actual != expected:
        raise ChecksumError(f"checksum mismatch for {p}: expected {algo} {expected}, got {actual}")


CONTENT_MANIFEST = ".medeval-content.json"


CONTENT_FORMAT = "medeval-content/1"


# bookkeeping files of the data layer, never part of a dataset's content
_BOOKKEEPING_SUFFIXES = (".unpacked", ".part", ".sha256")


@dataclass(frozen=True)
class ContentRecordResult:
    """What :func:`record_content` wrote: the record's path, the number and total size of the recorded files,
    and the relative paths added, removed or changed (other size or sha256) since the previous record."""

    dataset_id: str
    path: Path
    n_files: int
    n_bytes: int
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


def content_manifest_path(dataset_id: str) -> Path:
    """``data_dir() / <id> / .medeval-content.json``, the dataset's content record (may not exist)."""
    return dataset_dir(dataset_id) / CONTENT_MANIFEST


@functools.lru_cache(maxsize=16)
def _read_content_cached(path: str, stamp: tuple[int, int, int]) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        doc = {"format": f"unreadable ({exc})"}
    if not isinstance(doc, dict) or doc.get("format") != CONTENT_FORMAT or not isinstance(doc.get("files"), dict):
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        dataset_id = Path(path).parent.name
        raise DatasetCorruptError(
            f"dataset {dataset_id!r}: its content record {path} is damaged (format {found!r}, expected "
            f"{CONTENT_FORMAT!r}). Remedy: `medeval data fetch {dataset_id} --force` (auto datasets) or "
            f"`medeval data verify {dataset_id} --record` (datasets you placed) writes it again."
        )
    return doc


def read_content_record(folder: str | os.PathLike) -> dict | None:
    """The content record of a dataset folder (``<folder>/.medeval-content.json``), or None where there is none.

    The record is a JSON object::

        {"format": "medeval-content/1", "dataset_id": "cifar10", "access": "auto",
         "source": "fetch" | "record", "created": "...", "updated": "...", "algorithm": "sha256",
         "archives": {"cifar-10-python.tar.gz": {"url": ..., "size": ..., "sha256": ..., "md5": ...}},
         "files": {"cifar-10-batches-py/data_batch_1": {"size": 31035704, "sha256": "...",
                                                        "from": "cifar-10-python.tar.gz"}, ...}}

    ``files`` maps every unpacked (or placed) file, by its path relative to the folder, to its size and sha256;
    ``archives`` lists the downloads whose contents were recorded, with their published checksums. The parsed
    record is cached by the file's mtime, size and inode, so loaders may call this on every open; treat the
    returned dict as read-only. A record that is not valid raises :class:`DatasetCorruptError`.
    """
    p = Path(folder) / CONTENT_MANIFEST
    try:
        st = p.stat()
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return None
    return _read_content_cached(str(p), (st.st_mtime_ns, st.st_size, st.st_ino))


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _new_record(entry: DatasetEntry, source: str) -> dict:
    return {
        "format": CONTENT_FORMAT,
        "dataset_id": entry.id,
        "access": entry.access,
        "source": source,
        "created": _now(),
        "algorithm": "sha256",
        "archives": {},
        "files": {},
    }


def _write_record(root: Path, record: dict) -> Path:
    """Write ``record`` atomically (temporary file in the same folder, fsync, rename)."""
    path = root / CONTENT_MANIFEST
    record = {**record, "updated": _now()}
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return path


def _hash_files(root: Path, rels, origin: str) -> dict[str, dict]:
    out = {}
    for rel in rels:
        p = root / rel
        out[rel] = {"size": p.stat().st_size, "sha256": file_hash(p), "from": origin}
    return out


def _store(record: dict, f: DataFile, archive_size: int | None, files: dict[str, dict]) -> None:
    """Replace what ``record`` says about download ``f`` (its archive entry and the files it produced)."""
    for rel in [r for r, rec in record["files"].items() if rec.get("from") == f.path]:
        del record["files"][rel]
    record["files"].update(files)
    info = {"url": f.url, "size": archive_size if archive_size is not None else f.size}
    info.update({k: v for k, v in (("sha256", f.sha256), ("md5", f.md5)) if v})
    record["archives"][f.path] = info


def _content_files(entry: DatasetEntry, root: Path) -> list[str]:
    """Relative paths of every file under a dataset folder except the data layer's bookkeeping and kept archives
    (those are checked against their published checksums)."""
    archives = {f.path for f in entry.files if f.unpack}
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            rel = (Path(dirpath) / name).relative_to(root).as_posix()
            if name.startswith(CONTENT_MANIFEST) or name.endswith(_BOOKKEEPING_SUFFIXES) or rel in archives:
                continue
            out.append(rel)
    return out


def record_content(dataset_id: str) -> ContentRecordResult:
    """Hash every file of a placed (``manual``) or fetched (``auto``) dataset folder and write its content record.

    This is how a dataset you copied by hand (MURA, ADNI, CAMELYON16) becomes checkable: afterwards
    :func:`verify` detects files that went missing, were truncated or changed, :func:`require` and the readers
    refuse truncated files. Run it once the copy is complete (``medeval data verify ID --record``); it reads every
    byte (CAMELYON16's ~700 GB take a while). For ``auto`` datasets ``medeval data fetch ID --force`` is the
    trustworthy way (it records what it unpacked from checksummed archives); recording trusts the files as they
    are. The previous record is replaced; the result lists what changed since it.
    """
    entry = get_dataset(dataset_id)
    if entry.access not in ("auto", "manual"):
        raise ValueError(
            f"dataset {dataset_id!r} is {entry.access}: only auto and manual datasets have a content record "
            + ("(shipped files are checked against data_manifest.yaml)" if entry.access == "shipped" else "")
        )
    root = data_dir() / entry.id
    missing = [p for p in _presence_paths(entry, root) if not p.exists()]
    if missing or not root.is_dir():
        shown = ", ".join(str(p) for p in missing[:3]) + (" ..." if len(missing) > 3 else "")
        raise DatasetUnavailableError(f"{_how_to_get(entry)} Nothing recorded; missing: {shown or root}")
    try:
        previous = read_content_record(root)
    except DatasetCorruptError:
        previous = None
    record = _new_record(entry, "record")
    record["files"] = _hash_files(root, _content_files(entry, root), "verify --record")
    for f in entry.files:
        if f.unpack and _marker_path(entry, f).exists():
            _store(record, f, None, {})
            record["archives"][f.path]["note"] = "contents recorded as found on disk, not from a checked unpack"
    path = _write_record(root, record)
    old, new = (previous or {}).get("files", {}), record["files"]
    return ContentRecordResult(
        dataset_id=entry.id,
        path=path,
        n_files=len(new),
        n_bytes=sum(r["size"] for r in new.values()),
        added=tuple(sorted(set(new) - set(old))),
        removed=tuple(sorted(set(old) - set(new))),
        changed=tuple(sorted(r for r in set(new) & set(old) if new[r]["sha256"] != old[r].get("sha256"))),
    )
