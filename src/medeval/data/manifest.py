"""The data manifest (``data_manifest.yaml``): schema, lookup, fetching and verification.

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
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import importlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from medeval import _yaml
from medeval._files import atomic_write_text, project_root

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

ACCESS_KINDS = ("shipped", "bundled", "auto", "manual", "private")


class DatasetUnavailableError(FileNotFoundError):
    """A dataset (or one of its files) is not available locally; the message says how to get it."""


class DatasetCorruptError(DatasetUnavailableError, ValueError):
    """A dataset file is missing, truncated or altered; the message names the dataset, the file(s), what was
    expected and the remedy.

    A :class:`DatasetUnavailableError` (so ``require`` callers and the pre-flight check catch it as before) and a
    ``ValueError`` (so callers of the readers, which raise ValueError for malformed files, catch it too).
    """


class ChecksumError(ValueError):
    """A file's checksum differs from the manifest's; the message names the file and both checksums."""


# ----------------------------------------------------------------------------------------------------------
# schema


class DataFile(BaseModel):
    """One file of a dataset."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="repo-relative (shipped) or relative to the dataset directory")
    url: str | None = Field(None, description="download URL (auto datasets)")
    size: int | None = Field(None, ge=0, description="size in bytes, where known")
    sha256: str | None = Field(None, description="sha256 hex digest, where public")
    md5: str | None = Field(None, description="md5 hex digest, where the publisher gives only md5")
    origin: str | None = Field(None, description="where a shipped file was taken from")
    unpack: Literal["untar", "unzip", "gunzip"] | None = Field(None, description="post-download processing")
    unpack_to: str | None = Field(None, description="extraction folder, relative to the dataset directory")
    note: str | None = None

    @field_validator("sha256")
    @classmethod
    def _sha256_hex(cls, v):
        if v is not None and (len(v) != 64 or any(c not in "0123456789abcdef" for c in v)):
            raise ValueError(f"sha256 must be 64 lower-case hex digits, got {v!r}")
        return v

    @field_validator("md5")
    @classmethod
    def _md5_hex(cls, v):
        if v is not None and (len(v) != 32 or any(c not in "0123456789abcdef" for c in v)):
            raise ValueError(f"md5 must be 32 lower-case hex digits, got {v!r}")
        return v

    @property
    def known_hash(self) -> str | None:
        """The strongest published checksum in pooch's ``"algo:hex"`` form, or None."""
        if self.sha256:
            return f"sha256:{self.sha256}"
        if self.md5:
            return f"md5:{self.md5}"
        return None


class DatasetEntry(BaseModel):
    """One dataset of the manifest."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    description: str = ""
    citation: str
    licence: str
    access: Literal["shipped", "bundled", "auto", "manual", "private"]
    homepage: str | None = None
    files: list[DataFile] = Field(default_factory=list)
    layout: str | None = Field(None, description="expected folder layout once obtained")
    instructions: str | None = Field(None, description="how to obtain a manual/private dataset")
    reader: str = Field(description="dotted path of the function/class that reads it")
    stand_in: str = Field(description="what the default profile uses instead")
    notes: str | None = None

    @model_validator(mode="after")
    def _consistent(self):
        if self.access == "shipped":
            if not self.files:
                raise ValueError(f"dataset {self.id!r}: shipped datasets must list their files")
            for f in self.files:
                if not f.sha256 or f.size is None or not f.origin:
                    raise ValueError(
                        f"dataset {self.id!r}: shipped file {f.path!r} needs sha256, size and origin"
                    )
        if self.access == "auto":
            if not self.files:
                raise ValueError(f"dataset {self.id!r}: auto datasets must list their files")
            for f in self.files:
                if not f.url:
                    raise ValueError(f"dataset {self.id!r}: auto file {f.path!r} needs a url")
        if self.access in ("manual", "private") and not self.instructions:
            raise ValueError(f"dataset {self.id!r}: {self.access} datasets need instructions")
        if "." not in self.reader:
            raise ValueError(f"dataset {self.id!r}: reader must be a dotted path, got {self.reader!r}")
        return self


class Manifest(BaseModel):
    """The whole ``data_manifest.yaml``."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    datasets: list[DatasetEntry]

    @model_validator(mode="after")
    def _unique_ids(self):
        ids = [d.id for d in self.datasets]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate dataset ids in the manifest: {dupes}")
        return self

    def ids(self) -> list[str]:
        return [d.id for d in self.datasets]


# ----------------------------------------------------------------------------------------------------------
# locations


def repo_root() -> Path:
    """The repository checkout (``medeval._files.project_root``, without requiring its ``params/``)."""
    return project_root(require_params=False)


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


# ----------------------------------------------------------------------------------------------------------
# loading


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


# ----------------------------------------------------------------------------------------------------------
# checksums


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


# ----------------------------------------------------------------------------------------------------------
# content records: what fetch unpacked (or what the user placed), file by file

CONTENT_MANIFEST = ".medeval-content.json"
CONTENT_FORMAT = "medeval-content/1"
PROBLEM_STATUSES = ("missing", "truncated", "corrupt")
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


# ----------------------------------------------------------------------------------------------------------
# fetch / require / verify


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


def _file_downloader(url: str, output_file, pooch_instance=None, check_only: bool = False):
    """A pooch downloader for ``file://`` URLs (local mirrors, tests); pooch still checks the hash."""
    import shutil
    from urllib.parse import unquote, urlparse

    source = Path(unquote(urlparse(url).path))
    if check_only:
        return source.is_file()
    if not source.is_file():
        raise FileNotFoundError(f"{url}: no such file")
    if hasattr(output_file, "write"):
        with open(source, "rb") as fh:
            shutil.copyfileobj(fh, output_file)
    else:
        shutil.copyfile(source, output_file)
    return None


def _download(url: str, known_hash: str | None, path: Path, progress: bool) -> Path:
    import pooch

    path.parent.mkdir(parents=True, exist_ok=True)
    downloader = _file_downloader if url.startswith("file://") else None
    return Path(
        pooch.retrieve(
            url,
            known_hash=known_hash,
            fname=path.name,
            path=path.parent,
            progressbar=progress,
            downloader=downloader,
        )
    )


def _unpack(archive: Path, extract_to: Path, kind: str) -> list[str]:
    """Extract ``archive`` into ``extract_to``; return the regular files it wrote, relative to ``extract_to``."""
    import tarfile
    import zipfile

    extract_to.mkdir(parents=True, exist_ok=True)
    if kind == "untar":
        with tarfile.open(archive) as tar:
            tar.extractall(extract_to, filter="data")  # refuses absolute paths and links out of the folder
            names = [m.name for m in tar.getmembers() if m.isfile()]
    else:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(extract_to)
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
    return [Path(os.path.normpath(n)).as_posix() for n in names]


def _forget_fetch(entry: DatasetEntry, root: Path) -> None:
    """Before ``fetch(force=True)``: drop the content record, the step markers and downloads pooch would keep."""
    (root / CONTENT_MANIFEST).unlink(missing_ok=True)
    for f in entry.files:
        _marker_path(entry, f).unlink(missing_ok=True)
        if f.known_hash is None:  # pooch re-downloads a file with a known hash only when it does not match
            (root / f.path).unlink(missing_ok=True)


def fetch(dataset_id: str, *, progress: bool = True, keep_archives: bool = False, force: bool = False) -> Path:
    """Download (and unpack) an ``auto`` dataset into ``data_dir()/<id>``; return that folder.

    Shipped and bundled datasets need nothing and return their location. Manual and private datasets
    raise :class:`DatasetUnavailableError` with the instructions. Files already present and verified
    are skipped; a checksum mismatch raises ``ValueError`` (pooch) naming the file, and the corrupt
    download is not kept. Archives are deleted after unpacking unless ``keep_archives``; a marker file
    ``<archive>.unpacked`` (or the gunzipped file itself) records that the step finished.

    After each step the dataset's content record (``<id>/.medeval-content.json``, see
    :func:`read_content_record`) gets the size and sha256 of every file the step produced, so
    :func:`verify` can later tell an intact dataset from a truncated or altered one. The record is written
    before the step's marker, atomically: an interrupted fetch resumes at the first unfinished step.
    ``force=True`` starts over: it drops the record and the markers, then downloads (pooch keeps a download
    only when it matches its published checksum) and unpacks every file again.
    """
    entry = get_dataset(dataset_id)
    if entry.access == "shipped":
        for f in entry.files:
            verify_file(_local_path(entry, f), sha256=f.sha256)
        return repo_root() / Path(entry.files[0].path).parent
    if entry.access == "bundled":
        return require(dataset_id)
    if entry.access in ("manual", "private"):
        raise DatasetUnavailableError(_how_to_get(entry))

    root = data_dir() / entry.id
    root.mkdir(parents=True, exist_ok=True)
    if force:
        _forget_fetch(entry, root)
        record = _new_record(entry, "fetch")
    else:
        try:
            existing = read_content_record(root)
        except DatasetCorruptError:
            existing = None
        record = json.loads(json.dumps(existing)) if existing is not None else _new_record(entry, "fetch")
    for f in entry.files:
        marker = _marker_path(entry, f)
        if marker.exists():
            continue
        target = root / f.path
        downloaded = _download(f.url, f.known_hash, target, progress)
        archive_size = downloaded.stat().st_size
        if f.unpack == "gunzip":
            import gzip
            import shutil

            tmp = marker.with_suffix(marker.suffix + ".part")
            with gzip.open(downloaded, "rb") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, length=1 << 22)
            tmp_rel = tmp.relative_to(root).as_posix()
            produced = _hash_files(root, [tmp_rel], f.path)[tmp_rel]
            _store(record, f, archive_size, {marker.relative_to(root).as_posix(): produced})
            _write_record(root, record)
            tmp.replace(marker)
            if not keep_archives:
                downloaded.unlink()
        elif f.unpack in ("untar", "unzip"):
            base = Path(f.unpack_to or ".")
            extract_to = root / base
            names = _unpack(downloaded, extract_to, f.unpack)
            rels = [Path(os.path.normpath(base / n)).as_posix() for n in names]
            _store(record, f, archive_size, _hash_files(root, rels, f.path))
            _write_record(root, record)
            marker.write_text(f"unpacked into {extract_to}\n")
            if not keep_archives:
                downloaded.unlink()
        else:
            _store(record, f, archive_size, _hash_files(root, [f.path], f.path))
            _write_record(root, record)
    return root


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
