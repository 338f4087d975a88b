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
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "ACCESS_KINDS",
    "ChecksumError",
    "DataFile",
    "DatasetEntry",
    "DatasetUnavailableError",
    "FileStatus",
    "Manifest",
    "data_dir",
    "dataset_dir",
    "fetch",
    "file_hash",
    "get_dataset",
    "load_manifest",
    "manifest_path",
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
    used_by: list[str] = Field(default_factory=list)
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
    """The repository checkout: ``$MEDEVAL_ROOT`` if set, else the folder three levels above ``src/medeval``."""
    env = os.environ.get("MEDEVAL_ROOT")
    return Path(env) if env else Path(__file__).resolve().parents[3]


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
        raw = yaml.safe_load(fh)
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


def _unpack(archive: Path, extract_to: Path, kind: str) -> None:
    import tarfile
    import zipfile

    extract_to.mkdir(parents=True, exist_ok=True)
    if kind == "untar":
        with tarfile.open(archive) as tar:
            tar.extractall(extract_to, filter="data")  # refuses absolute paths and links out of the folder
    else:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(extract_to)


def fetch(dataset_id: str, *, progress: bool = True, keep_archives: bool = False) -> Path:
    """Download (and unpack) an ``auto`` dataset into ``data_dir()/<id>``; return that folder.

    Shipped and bundled datasets need nothing and return their location. Manual and private datasets
    raise :class:`DatasetUnavailableError` with the instructions. Files already present and verified
    are skipped; a checksum mismatch raises ``ValueError`` (pooch) naming the file, and the corrupt
    download is not kept. Archives are deleted after unpacking unless ``keep_archives``; a marker file
    ``<archive>.unpacked`` (or the gunzipped file itself) records that the step finished.
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
    for f in entry.files:
        marker = _marker_path(entry, f)
        if marker.exists():
            continue
        target = root / f.path
        downloaded = _download(f.url, f.known_hash, target, progress)
        if f.known_hash is None:
            # nothing published to check against: record what we got so `verify` can detect later changes
            (root / (f.path + ".sha256")).write_text(file_hash(downloaded) + "\n")
        if f.unpack == "gunzip":
            import gzip
            import shutil

            tmp = marker.with_suffix(marker.suffix + ".part")
            with gzip.open(downloaded, "rb") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, length=1 << 22)
            tmp.replace(marker)
            if not keep_archives:
                downloaded.unlink()
        elif f.unpack in ("untar", "unzip"):
            extract_to = root / (f.unpack_to or ".")
            _unpack(downloaded, extract_to, f.unpack)
            marker.write_text(f"unpacked into {extract_to}\n")
            if not keep_archives:
                downloaded.unlink()
    return root


def require(dataset_id: str) -> Path:
    """The local path of a dataset, or :class:`DatasetUnavailableError` saying how to get it.

    Shipped single-file datasets return the file; bundled datasets the scikit-learn data folder; other
    datasets their folder ``data_dir()/<id>`` once every listed file (or its unpacked marker) is present.
    Nothing is downloaded and nothing is substituted.
    """
    entry = get_dataset(dataset_id)
    if entry.access == "shipped":
        paths = [_local_path(entry, f) for f in entry.files]
        missing = [p for p in paths if not p.is_file()]
        if missing:
            raise DatasetUnavailableError(
                f"shipped file(s) of {dataset_id!r} missing from the checkout: {[str(p) for p in missing]}"
            )
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
    paths = [_marker_path(entry, f) if entry.access == "auto" else root / f.path for f in entry.files]
    missing = [p for p in paths if not p.exists()]
    if missing or not root.is_dir():
        shown = ", ".join(str(p) for p in missing[:3]) + (" ..." if len(missing) > 3 else "")
        raise DatasetUnavailableError(f"{_how_to_get(entry)} Missing: {shown or root}")
    return root


@dataclass(frozen=True)
class FileStatus:
    """Result of checking one file: ``status`` is ok | missing | corrupt | unchecked | unavailable."""

    dataset_id: str
    path: str
    status: str
    expected: str | None
    detail: str = ""

    def line(self) -> str:
        exp = f" (expected {self.expected})" if self.expected else ""
        det = f": {self.detail}" if self.detail else ""
        return f"{self.status.upper():11s} {self.dataset_id}: {self.path}{exp}{det}"


def _check(entry: DatasetEntry, f: DataFile, path: Path) -> FileStatus:
    expected = f"sha256:{f.sha256}" if f.sha256 else (f"md5:{f.md5}" if f.md5 else None)
    if not path.exists():
        return FileStatus(entry.id, str(path), "missing", expected)
    if path.is_dir():
        return FileStatus(entry.id, str(path), "ok", None, "folder present")
    if expected is None:
        stamp = path.parent / (path.name + ".sha256")
        if stamp.is_file():
            want = stamp.read_text().strip()
            got = file_hash(path)
            if got != want:
                return FileStatus(entry.id, str(path), "corrupt", f"sha256:{want}", f"got sha256:{got}")
            return FileStatus(entry.id, str(path), "ok", f"sha256:{want}", "checked against fetch-time hash")
        return FileStatus(entry.id, str(path), "unchecked", None, "no published checksum")
    algo, want = expected.split(":", 1)
    got = file_hash(path, algo)
    if got != want:
        return FileStatus(entry.id, str(path), "corrupt", expected, f"got {algo}:{got}")
    return FileStatus(entry.id, str(path), "ok", expected)


def verify(ids: list[str] | None = None) -> list[FileStatus]:
    """Check datasets' files against the manifest; return one :class:`FileStatus` per file.

    With ``ids=None`` every dataset is checked; datasets that were never fetched/placed (their folder
    does not exist) are reported once with status ``unavailable`` rather than file by file. With
    explicit ids every listed file is reported. Archives removed after unpacking are reported from
    their unpacked marker. Private datasets report ``unavailable``; bundled ones ``ok`` if importable.
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
        for f in entry.files:
            path = _local_path(entry, f)
            if entry.access == "auto" and f.unpack and not path.exists():
                marker = _marker_path(entry, f)
                status = "ok" if marker.exists() else "missing"
                expected = f.known_hash
                out.append(
                    FileStatus(
                        entry.id,
                        str(path),
                        status,
                        expected,
                        "archive removed; unpacked copy present" if status == "ok" else "",
                    )
                )
                continue
            out.append(_check(entry, f, path))
    return out
