"""The data manifest (``data_manifest.yaml``): verification of the datasets' files, and every name of its interface.

Every dataset the chapters use has one entry (:class:`DatasetEntry`). Where a dataset's files live:

* ``shipped`` files: in the repository, ``<repo>/<file.path>`` (e.g. ``data/BBox_List_2017.csv.gz``);
* everything else: ``data_dir() / <id> / <file.path>``, where :func:`data_dir` is ``$MEDEVAL_DATA``
  or, if unset, the user cache directory ``pooch.os_cache("medeval")``.

:func:`fetch` downloads ``auto`` datasets with pooch. Each file is checked against its sha256 (or the
publisher's md5 where only that is published) and written atomically (pooch downloads to a temporary
file and renames it), so an interrupted fetch resumes at file granularity: finished, verified files
are kept and skipped; the interrupted file is downloaded again. ``manual`` and ``private`` datasets are
never downloaded: :func:`fetch` raises :class:`DatasetUnavailableError` with the instructions.

Content verification. A published archive checksum says nothing about the files unpacked from it, so
:func:`fetch` also writes a *content record* per dataset folder, ``<id>/.medeval-content.json``: the
relative path, size and sha256 of every file it unpacked, plus the archives' published checksums
(:func:`read_content_record`). For datasets placed by hand, ``medeval data verify ID --record``
(:func:`record_content`) writes the same record from the files present. Then

* :func:`verify` hashes every recorded file and reports ok / missing / truncated / corrupt / unchecked
  per file, with the dataset id, the expected sha256 and size, and the remedy (``quick=True``: sizes only);
* :func:`require` (the pre-flight check before a chapter runs) compares sizes only, one ``stat`` per file;
* the readers call :func:`check_file` when they open a file (its size against the record) and
  :func:`damaged_file_error` when they cannot parse one; both name the dataset, the file and the remedy.

A file with nothing recorded (a dataset fetched before records existed, or placed and never recorded) is
reported as ``unchecked``, never as ok. All file digests go through :func:`file_hash`.

This module verifies; the rest of the interface, named here (``__all__``), is implemented one job per module: the
schema (:mod:`medeval.data.manifest_schema`), locations and loading (:mod:`medeval.data.manifest_loading`), which
chapters read a dataset (:mod:`medeval.data.dataset_users`), checksums and content records
(:mod:`medeval.data.content_records`) and fetching (:mod:`medeval.data.fetching`).
"""

from __future__ import annotations

import importlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from medeval._files import atomic_write_text
from medeval.data.content_records import (  # noqa: F401  (the whole interface is named here)
    CONTENT_FORMAT,
    CONTENT_MANIFEST,
    ContentRecordResult,
    _content_files,
    content_manifest_path,
    file_hash,
    read_content_record,
    record_content,
    verify_file,
)
from medeval.data.dataset_users import dataset_users
from medeval.data.fetching import fetch
from medeval.data.manifest_loading import (
    _how_to_get,
    _local_path,
    _marker_path,
    _presence_paths,
    data_dir,
    dataset_dir,
    get_dataset,
    load_manifest,
    manifest_path,
    repair_instructions,
    repo_root,
    resolve_reader,
    shipped_path,
)
from medeval.data.manifest_schema import (
    ACCESS_KINDS,
    ChecksumError,
    DataFile,
    DatasetCorruptError,
    DatasetEntry,
    DatasetUnavailableError,
    Manifest,
)

__all__ = [
    "ACCESS_KINDS",
    "CONTENT_MANIFEST",
    "ChecksumError",
    "ContentRecordResult",
    "DataFile",
    "DatasetCorruptError",
    "DatasetEntry",
    "DatasetUnavailableError",
    "FileStatus",
    "Manifest",
    "check_file",
    "content_manifest_path",
    "damaged_file_error",
    "data_dir",
    "dataset_dir",
    "dataset_users",
    "fetch",
    "file_hash",
    "get_dataset",
    "load_manifest",
    "manifest_path",
    "read_content_record",
    "record_content",
    "repair_instructions",
    "repo_root",
    "require",
    "resolve_reader",
    "shipped_path",
    "verify",
    "verify_file",
]

PROBLEM_STATUSES = ("missing", "truncated", "corrupt")


def require(dataset_id: str) -> Path:
    """The local path of a dataset, or :class:`DatasetUnavailableError` saying how to get it.

    Shipped single-file datasets return the file; bundled datasets the scikit-learn data folder; other
    datasets their folder ``data_dir()/<id>`` once every listed file (or its unpacked marker) is present.
    Nothing is downloaded and nothing is substituted.

    Present files are also checked cheaply: their sizes against ``data_manifest.yaml`` and the dataset's
    content record (one ``stat`` per file, no hashing; ``medeval data verify`` hashes). A missing, truncated
    or grown file raises :class:`DatasetCorruptError` (a DatasetUnavailableError) naming the dataset, the
    files and the remedy. This is what the pre-flight check before a chapter run relies on.
    """
    entry = get_dataset(dataset_id)
    if entry.access == "shipped":
        paths = [_local_path(entry, f) for f in entry.files]
        missing = [p for p in paths if not p.is_file()]
        if missing:
            raise DatasetUnavailableError(
                f"shipped file(s) of {dataset_id!r} missing from the checkout: {[str(p) for p in missing]}"
            )
        _raise_if_damaged(entry, _entry_statuses(entry, quick=True))
        return paths[0] if len(paths) == 1 else paths[0].parent
    if entry.access == "bundled":
        module_name = entry.reader.rpartition(".")[0]
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # pragma: no cover - sklearn is a dependency
            raise DatasetUnavailableError(f"dataset {dataset_id!r} needs {module_name}: {exc}") from exc
        return Path(module.__file__).resolve().parent
    if entry.access == "private":
        raise DatasetUnavailableError(_how_to_get(entry))
    root = data_dir() / entry.id
    missing = [p for p in _presence_paths(entry, root) if not p.exists()]
    if missing or not root.is_dir():
        shown = ", ".join(str(p) for p in missing[:3]) + (" ..." if len(missing) > 3 else "")
        raise DatasetUnavailableError(f"{_how_to_get(entry)} Missing: {shown or root}")
    _raise_if_damaged(entry, _entry_statuses(entry, quick=True))
    return root


@dataclass(frozen=True)
class FileStatus:
    """Result of checking one file.

    ``status`` is one of

    * ``ok``: present and matching its recorded sha256 (with ``quick``: its recorded size);
    * ``missing``: recorded or listed, but not there;
    * ``truncated``: smaller than its recorded size;
    * ``corrupt``: larger than recorded, or the right size with another hash;
    * ``unchecked``: present, but nothing was recorded to compare it with (never reported as ok);
    * ``unrecorded``: present in a recorded dataset folder, but not in its record (an extra file; a warning);
    * ``unavailable``: a dataset not fetched or placed (or private), reported once.

    ``expected`` is the recorded checksum (``"sha256:<hex>"`` or ``"md5:<hex>"``) and ``expected_size`` the
    recorded size in bytes, where known; ``remedy`` says how to repair or check the file.
    """

    dataset_id: str
    path: str
    status: str
    expected: str | None
    detail: str = ""
    remedy: str = ""
    expected_size: int | None = None

    @property
    def is_problem(self) -> bool:
        """True for missing, truncated and corrupt files (what makes ``medeval data verify`` exit 1)."""
        return self.status in PROBLEM_STATUSES

    def describe_expected(self) -> str:
        parts = [self.expected] if self.expected else []
        if self.expected_size is not None:
            parts.append(f"{self.expected_size} bytes")
        return ", ".join(parts)

    def line(self) -> str:
        exp = self.describe_expected()
        exp = f" (expected {exp})" if exp else ""
        det = f": {self.detail}" if self.detail else ""
        fix = f"; remedy: {self.remedy}" if self.remedy and self.status != "ok" else ""
        return f"{self.status.upper():11s} {self.dataset_id}: {self.path}{exp}{det}{fix}"


def _check_path(
    dataset_id: str,
    path: Path,
    *,
    size: int | None,
    checksum: str | None,
    quick: bool,
    source: str,
    remedy: str,
    once_per_version: bool = False,
) -> FileStatus:
    """Compare one file with what was recorded for it (``checksum`` as ``"algo:hex"``) in ``source``.
    ``once_per_version`` (a reader's check) skips the hash when the file has not changed since its hash last matched;
    ``medeval data verify`` always hashes."""

    def status(kind: str, detail: str = "") -> FileStatus:
        return FileStatus(dataset_id, str(path), kind, checksum, detail, remedy, size)

    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return status("missing")
    if stat.S_ISDIR(st.st_mode):
        return status("corrupt", "a folder where a file was recorded")
    actual = st.st_size
    if size is not None and actual < size:
        return status("truncated", f"{actual} of {size} bytes ({actual / size:.0%})" if size else "")
    if size is not None and actual > size:
        return status("corrupt", f"{actual} bytes, {actual - size} more than {source} records")
    if checksum is None:
        return status("unchecked", f"{source} records its size but no hash")
    if quick:
        if size is None:
            return status("unchecked", f"{source} records no size; --quick does not hash")
        return status("ok", f"size matches {source} (not hashed: --quick)")
    algo, want = checksum.split(":", 1)
    stamp = _stamp(st)
    if once_per_version and _verified_stamps().get(str(path)) == [*stamp, checksum]:
        return status("ok", f"{algo} matched {source} when the file last changed (size, mtime and inode since)")
    got = file_hash(path, algo)
    if got != want:
        return status("corrupt", f"got {algo}:{got}")
    _remember_verified(path, stamp, checksum)
    return status("ok", f"{algo} matches {source}")


# ---- content verified once per file version ------------------------------------------------------------------
# A run reads a data file only after its content was hashed against the record since the file last changed: the
# (size, mtime, inode) at which its hash last matched is kept in the run store (``data-verified.json``), so a file
# is hashed once per version, and damage that keeps its size (4 KiB flipped or zeroed in place) changes its mtime
# and is found before it is read.


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return int(st.st_size), int(st.st_mtime_ns), int(st.st_ino)


def _verified_path() -> Path | None:
    """``data-verified.json`` in the run store (``MEDEVAL_RUNS``, else ``_runs`` of the checkout, as
    :func:`medeval.runtime.paths.runs_dir`, which the data layer does not import); None where there is no run
    store (a data folder used outside a medeval checkout: every read then hashes)."""
    env = os.environ.get("MEDEVAL_RUNS")
    if env:
        return Path(env) / "data-verified.json"
    root = repo_root()
    return root / "_runs" / "data-verified.json" if (root / "params").is_dir() else None


_VERIFIED: dict[str, dict] = {}


def _verified_stamps() -> dict:
    path = _verified_path()
    if path is None:
        return {}
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return {}
    cached = _VERIFIED.get(str(path))
    if cached is None or cached["mtime"] != stamp:
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            data = {}
        cached = {"mtime": stamp, "data": data if isinstance(data, dict) else {}}
        _VERIFIED[str(path)] = cached
    return cached["data"]


def _remember_verified(path: Path, stamp: tuple[int, int, int], checksum: str) -> None:
    """Keep that ``path`` at ``stamp`` matched ``checksum`` (best effort: a read-only store only re-hashes)."""
    target = _verified_path()
    if target is None:
        return
    data = dict(_verified_stamps())
    data[str(path)] = [*stamp, checksum]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, json.dumps(data, sort_keys=True))
    except OSError:
        return
    _VERIFIED.pop(str(target), None)


def _listed_checksum(f: DataFile) -> str | None:
    return f"sha256:{f.sha256}" if f.sha256 else (f"md5:{f.md5}" if f.md5 else None)


def _entry_statuses(entry: DatasetEntry, *, quick: bool) -> list[FileStatus]:
    """Every file of one shipped, auto or manual dataset, checked (see :func:`verify`)."""
    remedy = repair_instructions(entry)
    if entry.access == "shipped":
        return [
            _check_path(entry.id, repo_root() / f.path, size=f.size, checksum=_listed_checksum(f), quick=quick,
                        source="data_manifest.yaml", remedy=remedy)
            for f in entry.files
        ]
    root = data_dir() / entry.id
    out: list[FileStatus] = []
    try:
        record = read_content_record(root)
    except DatasetCorruptError as exc:
        out.append(FileStatus(entry.id, str(root / CONTENT_MANIFEST), "corrupt", None, str(exc), remedy))
        record = None
    recorded = record["files"] if record else {}
    archives = record.get("archives", {}) if record else {}
    source = (
        "the content record written by `verify --record`"
        if record and record.get("source") == "record"
        else "the fetch-time content record"
    )
    record_remedy = (
        f"`medeval data verify {entry.id} --record` records the files as they are now"
        if entry.access == "manual"
        else f"`medeval data fetch {entry.id} --force` fetches it again and records every file (or "
        f"`medeval data verify {entry.id} --record` records the files as they are now)"
    )
    checked: set[str] = set()
    for f in entry.files:
        path = root / f.path
        listed = _listed_checksum(f)
        if entry.access == "auto" and f.unpack:
            marker = _marker_path(entry, f)
            if path.is_file():  # an archive kept after unpacking (or an unfinished fetch): its published checksum
                size = f.size if f.size is not None else archives.get(f.path, {}).get("size")
                out.append(_check_path(entry.id, path, size=size, checksum=listed, quick=quick,
                                       source="data_manifest.yaml", remedy=remedy))
            elif not marker.exists():
                out.append(FileStatus(
                    entry.id, str(path), "missing", listed, "not downloaded, or the download was interrupted",
                    f"run `medeval data fetch {entry.id}` (it resumes: finished files are kept)", f.size))
            if marker.exists() and f.path not in archives:
                shown = marker if f.unpack == "gunzip" else path
                out.append(FileStatus(
                    entry.id, str(shown), "unchecked", None,
                    "unpacked without a content record (fetched by an older medeval, or written by a phantom "
                    "generator): its files cannot be checked", record_remedy))
            continue
        if listed is not None or f.size is not None:
            checked.add(f.path)
            out.append(_check_path(entry.id, path, size=f.size, checksum=listed, quick=quick,
                                   source="data_manifest.yaml", remedy=remedy))
        elif f.path in recorded:
            continue  # checked below, against the record
        elif not path.exists():
            how = remedy if entry.access == "auto" else _how_to_get(entry)
            out.append(FileStatus(entry.id, str(path), "missing", None, "", how))
        elif path.is_dir():
            prefix = f.path.rstrip("/") + "/"
            if not any(r.startswith(prefix) for r in recorded):
                out.append(FileStatus(entry.id, str(path), "unchecked", None,
                                      "folder present; none of its files is recorded", record_remedy))
        else:
            out.append(FileStatus(entry.id, str(path), "unchecked", None, "no recorded hash", record_remedy))
    for rel, rec in recorded.items():
        if rel in checked:
            continue
        out.append(_check_path(entry.id, root / rel, size=rec.get("size"),
                               checksum=f"sha256:{rec['sha256']}" if rec.get("sha256") else None,
                               quick=quick, source=source, remedy=remedy))
    return out


def _damage_message(dataset_id: str, title: str | None, damaged: list[FileStatus], remedy: str) -> str:
    """One error message for damaged files: the dataset, each file with what was expected, the remedy."""
    shown = "; ".join(
        f"{s.path} {s.status.upper()}"
        + (f": {s.detail}" if s.detail else "")
        + (f", expected {s.describe_expected()}" if s.describe_expected() else "")
        for s in damaged[:5]
    )
    more = f"; and {len(damaged) - 5} more" if len(damaged) > 5 else ""
    name = f"dataset {dataset_id!r}" + (f" ({title})" if title else "")
    return (
        f"{name}: {len(damaged)} damaged file(s): {shown}{more}. Remedy: {remedy.rstrip('.')}. "
        f"`medeval data verify {dataset_id}` hashes every file."
    )


def _raise_if_damaged(entry: DatasetEntry, statuses: list[FileStatus]) -> None:
    damaged = [s for s in statuses if s.is_problem]
    if damaged:
        raise DatasetCorruptError(_damage_message(entry.id, entry.title, damaged, repair_instructions(entry)))


def _find_record(path: Path) -> tuple[Path, dict] | tuple[None, None]:
    for folder in path.parents:
        record = read_content_record(folder)
        if record is not None:
            return folder, record
    return None, None


def _entry_or_none(dataset_id: str | None) -> DatasetEntry | None:
    if not dataset_id:
        return None
    try:
        return get_dataset(dataset_id)
    except (ValueError, FileNotFoundError):  # the manifest changed or is not reachable
        return None


def _dataset_of(path: Path) -> DatasetEntry | None:
    """The dataset a file belongs to: from the nearest content record, else from ``data_dir()/<id>/...``."""
    _, record = _find_record(path)
    if record is not None:
        return _entry_or_none(record.get("dataset_id"))
    try:
        rel = path.relative_to(data_dir().absolute())
    except ValueError:
        return None
    return _entry_or_none(rel.parts[0]) if len(rel.parts) > 1 else None


def check_file(path: str | os.PathLike) -> None:
    """The check a reader makes when it opens a dataset file: its size and content against the dataset's content
    record.

    If ``path`` lies in a dataset folder whose content record (see :func:`read_content_record`) lists it, a
    missing file, a size other than the recorded one, or content whose sha256 differs raises
    :class:`DatasetCorruptError` (both a DatasetUnavailableError and a ValueError) naming the dataset, the file,
    the expected size and sha256, and the remedy. The hash is computed once per version of the file: the size,
    mtime and inode at which it last matched are kept in the run store (``data-verified.json``), and only a change
    of any of them hashes again, so damage that keeps the size is never read silently. Files outside any recorded
    dataset pass unchecked.
    """
    p = Path(os.path.abspath(path))
    folder, record = _find_record(p)
    if record is None:
        return
    rec = record["files"].get(p.relative_to(folder).as_posix())
    if rec is None:
        return
    dataset_id = record.get("dataset_id") or folder.name
    entry = _entry_or_none(dataset_id)
    if entry is not None:
        remedy = repair_instructions(entry)
    elif record.get("access") == "manual":
        remedy = f"copy the file again and run `medeval data verify {dataset_id} --record`"
    else:
        remedy = f"run `medeval data fetch {dataset_id} --force`"
    status = _check_path(dataset_id, p, size=rec.get("size"),
                         checksum=f"sha256:{rec['sha256']}" if rec.get("sha256") else None,
                         quick=not rec.get("sha256"), source=f"the content record {folder / CONTENT_MANIFEST}",
                         remedy=remedy, once_per_version=True)
    if status.is_problem:
        raise DatasetCorruptError(_damage_message(dataset_id, entry.title if entry else None, [status], remedy))


def damaged_file_error(path: str | os.PathLike, problem: str, *, remedy: str | None = None) -> ValueError:
    """The error a reader raises when it cannot parse a file: it names the file and the ``problem`` and, when
    the file lies in a dataset folder, the dataset and how to repair it (:class:`DatasetCorruptError`).
    Elsewhere a plain ValueError naming the file, with ``remedy`` if given."""
    p = Path(os.path.abspath(path))
    entry = _dataset_of(p)
    if entry is None:
        return ValueError(f"{p}: {problem}" + (f"; {remedy}" if remedy else ""))
    return DatasetCorruptError(
        f"dataset {entry.id!r} ({entry.title}): {p}: {problem}. Remedy: {repair_instructions(entry).rstrip('.')}. "
        f"`medeval data verify {entry.id}` checks every file."
    )


def verify(ids: list[str] | None = None, *, quick: bool = False) -> list[FileStatus]:
    """Check datasets' files; return one :class:`FileStatus` per file.

    What a file is checked against: shipped files against the size and sha256 in ``data_manifest.yaml``;
    archives kept after a fetch against their published checksum; every file a fetch unpacked, and every
    file recorded with ``medeval data verify ID --record``, against the dataset's content record (size and
    sha256). A file smaller than recorded is ``truncated``, a larger one or one with another hash ``corrupt``;
    a file with nothing recorded is ``unchecked`` (never ``ok``). ``quick=True`` compares sizes only (no
    hashing), so it catches truncation but not a block overwritten in place.

    With ``ids=None`` every dataset is checked; datasets that were never fetched/placed (their folder
    does not exist) are reported once with status ``unavailable`` rather than file by file. With
    explicit ids every listed file is reported. Private datasets report ``unavailable``; bundled ones
    ``ok`` if importable.
    """
    m = load_manifest()
    entries = m.datasets if ids is None else [get_dataset(i, m) for i in ids]
    out: list[FileStatus] = []
    for entry in entries:
        if entry.access == "private":
            out.append(FileStatus(entry.id, "-", "unavailable", None, "private dataset"))
            continue
        if entry.access == "bundled":
            try:
                resolve_reader(entry)
                out.append(FileStatus(entry.id, entry.reader, "ok", None, "bundled"))
            except (ImportError, AttributeError) as exc:
                out.append(FileStatus(entry.id, entry.reader, "missing", None, str(exc)))
            continue
        root = data_dir() / entry.id
        if entry.access != "shipped" and ids is None and not root.exists():
            out.append(FileStatus(entry.id, str(root), "unavailable", None, "not fetched/placed"))
            continue
        out.extend(_entry_statuses(entry, quick=quick))
        if entry.access != "shipped":
            out.extend(_unrecorded_files(entry, root))
    return out


def _unrecorded_files(entry: DatasetEntry, root: Path) -> list[FileStatus]:
    """Files in a recorded dataset folder that its content record does not list (an extra slide copied in after
    the record was written): status ``unrecorded``, a warning (``medeval data verify --strict`` fails on it)."""
    try:
        record = read_content_record(root) if root.is_dir() else None
    except DatasetCorruptError:
        return []
    if not record:
        return []
    known = set(record.get("files", {})) | {f.path for f in entry.files}
    return [FileStatus(entry.id, str(root / rel), "unrecorded", None,
                       "present but not in the dataset's content record: not part of what was fetched or recorded",
                       f"remove it, or `medeval data verify {entry.id} --record` to record the folder as it is now")
            for rel in _content_files(entry, root) if rel not in known]
