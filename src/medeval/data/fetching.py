"""Fetching an ``auto`` dataset: download with pooch, check the published checksum, unpack, record the content.

:func:`fetch` downloads ``auto`` datasets with pooch. Each file is checked against its sha256 (or the publisher's md5
where only that is published) and written atomically (pooch downloads to a temporary file and renames it), so an
interrupted fetch resumes at file granularity: finished, verified files are kept and skipped; the interrupted file is
downloaded again. ``manual`` and ``private`` datasets are never downloaded: :func:`fetch` raises
:class:`~medeval.data.manifest_schema.DatasetUnavailableError` with the instructions. After each step the dataset's
content record (:mod:`medeval.data.content_records`) gets every file the step produced.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from medeval.data.content_records import (
    CONTENT_MANIFEST,
    _hash_files,
    _new_record,
    _store,
    _write_record,
    read_content_record,
    verify_file,
)
from medeval.data.manifest_loading import (
    _how_to_get,
    _local_path,
    _marker_path,
    data_dir,
    get_dataset,
    repo_root,
)
from medeval.data.manifest_schema import DatasetCorruptError, DatasetEntry, DatasetUnavailableError


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
        from medeval.data.manifest import require  # the verification layer above this module

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
