"""Content verification (issue #17, item 5): fetch records every unpacked file's size and sha256; `verify` finds
missing, truncated and altered files; `require` and the readers refuse truncated ones, naming the dataset, the
file and the remedy.

The datasets are small fakes in the real formats (a CIFAR-10 batch, PCam HDF5 files, a pyramidal TIFF slide,
ChestX-ray14 PNGs), served from file:// URLs of a temporary manifest and fetched through the real code path; the
corruptions are the issue's: a batch truncated to 30 %, an HDF5 file truncated to 50 % or with 4 KiB zeroed in
the middle, a slide truncated to 40 %, a deleted file. Nothing is downloaded.
"""

import gzip
import hashlib
import io
import json
import pickle
import tarfile

import h5py
import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from medeval.data import cli
from medeval.data import manifest as m
from medeval.data import readers as r
from medeval.data.phantoms.formats import write_pyramidal_tiff

CIFAR_BATCH = "cifar-10-batches-py/data_batch_1"
PCAM_TEST_X = "camelyonpatch_level_2_split_test_x.h5"
PCAM_VALID_X = "camelyonpatch_level_2_split_valid_x.h5"
SLIDE = "testing/images/test_001.tif"
PNGS = ("00000001_000.png", "00000001_001.png", "00000002_000.png")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _cifar_batch(rng, n: int) -> bytes:
    batch = {b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), b"labels": rng.integers(0, 10, n).tolist()}
    return pickle.dumps(batch, protocol=2)


def _pcam_h5(path, rng, n: int, **dataset_kw) -> None:
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=rng.integers(0, 256, (n, 96, 96, 3), dtype=np.uint8), **dataset_kw)
    with h5py.File(str(path).replace("_x.h5", "_y.h5"), "w") as f:
        f.create_dataset("y", data=rng.integers(0, 2, (n, 1, 1, 1), dtype=np.uint8))


def _png(rng) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (64, 64), dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A manifest with fake auto datasets (cifar10, pcam, slides, chestxray14-images) served from file:// URLs,
    and a manual one (camelyon16), via MEDEVAL_ROOT / MEDEVAL_DATA; HTTP is blocked."""
    rng = np.random.default_rng(0)
    src = tmp_path / "src"
    src.mkdir()
    (src / "cifar.tar.gz").write_bytes(
        _tar_gz({CIFAR_BATCH: _cifar_batch(rng, 100), "cifar-10-batches-py/test_batch": _cifar_batch(rng, 20)})
    )
    _pcam_h5(src / PCAM_TEST_X, rng, 40)  # contiguous, uncompressed: a zeroed block reads back silently
    _pcam_h5(src / PCAM_VALID_X, rng, 32, chunks=(8, 96, 96, 3), fletcher32=True)  # chunk checksums
    for name in (PCAM_TEST_X, PCAM_VALID_X):
        for part in (name, name.replace("_x.h5", "_y.h5")):
            (src / (part + ".gz")).write_bytes(gzip.compress((src / part).read_bytes()))
    yy, xx = np.mgrid[0:512, 0:768]
    slide = np.stack([xx % 256, yy % 256, (xx * yy) % 251], axis=-1).astype(np.uint8)
    write_pyramidal_tiff(src / "test_001.tif", slide, n_levels=3)
    (src / "slides.tar.gz").write_bytes(_tar_gz({SLIDE: (src / "test_001.tif").read_bytes()}))
    (src / "images.tar.gz").write_bytes(_tar_gz({f"images/{n}": _png(rng) for n in PNGS}))

    def auto_file(path, name, unpack):
        data = (src / name).read_bytes()
        return {"path": path, "url": (src / name).as_uri(), "sha256": _sha256(data), "size": len(data),
                "unpack": unpack, **({"unpack_to": "."} if unpack == "untar" else {})}

    pcam_parts = [PCAM_TEST_X, PCAM_TEST_X.replace("_x", "_y"), PCAM_VALID_X, PCAM_VALID_X.replace("_x", "_y")]
    common = dict(citation="c", licence="l", stand_in="s")
    doc = {"version": 1, "datasets": [
        dict(id="cifar10", title="CIFAR-10 (fake)", access="auto", reader="medeval.data.readers.read_cifar10",
             files=[auto_file("cifar-10-python.tar.gz", "cifar.tar.gz", "untar")], **common),
        dict(id="pcam", title="PCam (fake)", access="auto", reader="medeval.data.readers.PCamH5",
             files=[auto_file(p + ".gz", p + ".gz", "gunzip") for p in pcam_parts], **common),
        dict(id="slides", title="slides (fake)", access="auto", reader="medeval.data.readers.SlideReader",
             files=[auto_file("slides.tar.gz", "slides.tar.gz", "untar")], **common),
        dict(id="chestxray14-images", title="ChestX-ray14 images (fake)", access="auto",
             reader="medeval.data.readers.ChestXray14Images",
             files=[auto_file("images_001.tar.gz", "images.tar.gz", "untar")], **common),
        dict(id="camelyon16", title="CAMELYON16 (fake)", access="manual", reader="medeval.data.readers.SlideReader",
             instructions="Copy testing/images from the CAMELYON16 bucket.", layout="<id dir>/testing/images/*.tif",
             files=[{"path": "testing/images"}], **common),
    ]}
    root = tmp_path / "repo"
    root.mkdir()
    (root / "data_manifest.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.setenv("MEDEVAL_ROOT", str(root))
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path / "cache"))

    import pooch

    def no_network(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(pooch.downloaders.HTTPDownloader, "__call__", no_network)
    return tmp_path


def _fetch(*ids):
    for dataset_id in ids:
        assert cli.main(["fetch", dataset_id, "--no-progress"]) == 0


def _truncate(path, fraction: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


def _zero_block(path, n: int = 4096) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 2 - n // 2)
        before = fh.read(n)
        assert any(before), "the block must hold data for the test to mean anything"
        fh.seek(size // 2 - n // 2)
        fh.write(bytes(n))


def _status_of(statuses, path):
    found = [s for s in statuses if s.path == str(path)]
    assert len(found) == 1, [s.line() for s in statuses]
    return found[0]


# ------------------------------------------------------------------------------------------------ the record


def test_fetch_records_every_unpacked_file(repo):
    _fetch("cifar10", "pcam")
    cache = repo / "cache"
    record = json.loads((cache / "cifar10" / m.CONTENT_MANIFEST).read_text())
    assert record["format"] == "medeval-content/1" and record["dataset_id"] == "cifar10"
    assert record["source"] == "fetch" and record["algorithm"] == "sha256"
    assert set(record["files"]) == {CIFAR_BATCH, "cifar-10-batches-py/test_batch"}
    batch = cache / "cifar10" / CIFAR_BATCH
    assert record["files"][CIFAR_BATCH] == {
        "size": batch.stat().st_size, "sha256": m.file_hash(batch), "from": "cifar-10-python.tar.gz"}
    published = m.get_dataset("cifar10").files[0]
    assert record["archives"]["cifar-10-python.tar.gz"]["sha256"] == published.sha256
    # gunzipped files are recorded under their unpacked name, with the .gz they came from
    pcam = m.read_content_record(cache / "pcam")
    assert pcam["files"][PCAM_TEST_X]["from"] == PCAM_TEST_X + ".gz" and len(pcam["files"]) == 4
    assert not list((cache / "pcam").glob("*.tmp")) and not list((cache / "pcam").glob("*.part"))
    # nothing damaged yet: every file OK, by hash and by size
    for quick in (False, True):
        statuses = m.verify(["cifar10", "pcam"], quick=quick)
        assert {s.status for s in statuses} == {"ok"} and len(statuses) == 6
    assert m.require("cifar10") == cache / "cifar10"


# -------------------------------------------------------------------------------------- the scenarios

SCENARIOS = [
    # dataset, file, corruption, status (full verify), status (--quick)
    ("cifar10", CIFAR_BATCH, lambda p: _truncate(p, 0.30), "truncated", "truncated"),
    ("pcam", PCAM_TEST_X, lambda p: _truncate(p, 0.50), "truncated", "truncated"),
    ("pcam", PCAM_TEST_X, _zero_block, "corrupt", "ok"),  # --quick cannot see an overwrite in place
    ("slides", SLIDE, lambda p: _truncate(p, 0.40), "truncated", "truncated"),
    ("cifar10", CIFAR_BATCH, lambda p: p.unlink(), "missing", "missing"),
    ("pcam", PCAM_TEST_X, lambda p: p.write_bytes(p.read_bytes() + b"\0"), "corrupt", "corrupt"),
]


@pytest.mark.parametrize("dataset_id, rel, corrupt, full, quick", SCENARIOS,
                         ids=["cifar-30%", "pcam-50%", "pcam-zeroed-4KiB", "slide-40%", "deleted", "grown"])
def test_verify_reports_each_corruption(repo, capsys, dataset_id, rel, corrupt, full, quick):
    _fetch(dataset_id)
    path = repo / "cache" / dataset_id / rel
    want_sha, want_size = m.file_hash(path), path.stat().st_size
    corrupt(path)

    for is_quick, status in ((False, full), (True, quick)):
        statuses = m.verify([dataset_id], quick=is_quick)
        s = _status_of(statuses, path)
        assert s.status == status and s.dataset_id == dataset_id
        assert s.expected == f"sha256:{want_sha}" and s.expected_size == want_size
        assert {o.status for o in statuses if o is not s} <= {"ok"}  # the other files are intact
        if s.is_problem:
            line = s.line()
            assert line.startswith(status.upper()) and f"{dataset_id}: {path}" in line
            assert want_sha in line and f"{want_size} bytes" in line
            assert f"remedy: run `medeval data fetch {dataset_id} --force`" in line

    capsys.readouterr()
    assert cli.main(["verify", dataset_id]) == 1
    out = capsys.readouterr().out
    assert f"{full.upper():11s} {dataset_id}: {path}" in out and want_sha in out
    assert f"remedy: run `medeval data fetch {dataset_id} --force`" in out
    assert cli.main(["verify", dataset_id, "--quick"]) == (0 if quick == "ok" else 1)


def test_truncation_detail_gives_the_fraction(repo):
    _fetch("cifar10")
    path = repo / "cache" / "cifar10" / CIFAR_BATCH
    size = path.stat().st_size
    _truncate(path, 0.30)
    s = _status_of(m.verify(["cifar10"], quick=True), path)
    assert s.detail == f"{int(size * 0.3)} of {size} bytes (30%)"


# ------------------------------------------------------------------------------------------ require, loaders


def test_require_refuses_truncated_files_naming_dataset_file_and_remedy(repo):
    _fetch("cifar10")
    path = repo / "cache" / "cifar10" / CIFAR_BATCH
    _truncate(path, 0.30)
    with pytest.raises(m.DatasetCorruptError) as info:
        m.require("cifar10")
    msg = str(info.value)
    assert "dataset 'cifar10'" in msg and str(path) in msg and "TRUNCATED" in msg
    assert "medeval data fetch cifar10 --force" in msg
    # callers that catch the old exception types still catch it (pre-flight catches DatasetUnavailableError)
    assert isinstance(info.value, m.DatasetUnavailableError) and isinstance(info.value, ValueError)


def test_require_does_not_hash(repo):
    """The pre-flight check compares sizes only: a zeroed block is found by `verify`, not by require."""
    _fetch("pcam")
    _zero_block(repo / "cache" / "pcam" / PCAM_TEST_X)
    assert m.require("pcam") == repo / "cache" / "pcam"
    assert _status_of(m.verify(["pcam"]), repo / "cache" / "pcam" / PCAM_TEST_X).status == "corrupt"


def test_cifar_reader_refuses_a_truncated_batch(repo):
    _fetch("cifar10")
    root = repo / "cache" / "cifar10"
    assert r.read_cifar10_batch(root / CIFAR_BATCH)[0].shape == (100, 32, 32, 3)
    _truncate(root / CIFAR_BATCH, 0.30)
    with pytest.raises(m.DatasetCorruptError,
                       match=r"dataset 'cifar10'.*data_batch_1 TRUNCATED.*medeval data fetch cifar10 --force"):
        r.read_cifar10(root, "train")
    (root / CIFAR_BATCH).unlink()
    with pytest.raises(m.DatasetCorruptError, match=r"data_batch_1 MISSING.*fetch cifar10 --force"):
        r.read_cifar10_batch(root / CIFAR_BATCH)


def test_pcam_reader_refuses_truncated_file_and_failed_chunk_checksums(repo):
    _fetch("pcam")
    root = repo / "cache" / "pcam"
    with r.PCamH5.from_dir(root, "valid") as ds:
        assert ds[:][0].shape == (32, 96, 96, 3)
    # a zeroed block (size kept): the reader hashes a file once per version, so the changed file is refused by its
    # sha256 before HDF5 reads it (its chunk checksums would also fail the read)
    _zero_block(root / PCAM_VALID_X)
    with pytest.raises(m.DatasetCorruptError, match=r"dataset 'pcam'.*valid_x\.h5 CORRUPT.*--force"):
        with r.PCamH5.from_dir(root, "valid") as ds:
            ds[:]
    # truncated: refused on open (the reader opens lazily, e.g. in a DataLoader worker), before HDF5 reads
    ds = r.PCamH5.from_dir(root, "test")
    _truncate(root / PCAM_TEST_X, 0.50)
    with pytest.raises(m.DatasetCorruptError, match=r"dataset 'pcam'.*test_x\.h5 TRUNCATED.*fetch pcam --force"):
        len(ds)
    with pytest.raises(m.DatasetCorruptError, match=r"test_x\.h5 TRUNCATED"):
        r.PCamH5.from_dir(root, "test")


def test_a_reader_hashes_each_file_once_per_version_and_refuses_damage_that_keeps_the_size(repo, monkeypatch):
    """Size-preserving damage (4 KiB zeroed in a contiguous HDF5 file, which HDF5 reads back silently) was caught
    by a full `data verify` but read silently by a run. A reader now checks the file's sha256 against the record the
    first time it meets each version of the file (size, mtime, inode), and only then."""
    monkeypatch.setenv("MEDEVAL_RUNS", str(repo / "runs"))
    _fetch("pcam")
    root = repo / "cache" / "pcam"
    hashed: list[str] = []
    real = m.file_hash
    monkeypatch.setattr(m, "file_hash", lambda path, *a, **k: hashed.append(str(path)) or real(path, *a, **k))
    for _ in range(3):
        with r.PCamH5.from_dir(root, "test") as ds:
            assert ds[:][0].shape == (40, 96, 96, 3)
    assert hashed.count(str(root / PCAM_TEST_X)) == 1  # once for this version, whatever the number of reads
    assert (repo / "runs" / "data-verified.json").is_file()
    _zero_block(root / PCAM_TEST_X)
    with pytest.raises(m.DatasetCorruptError, match=r"dataset 'pcam'.*test_x\.h5 CORRUPT.*fetch pcam --force"):
        with r.PCamH5.from_dir(root, "test") as ds:
            ds[:]
    # `data verify` always hashes (a file can change without its mtime changing: bit rot)
    hashed.clear()
    m.verify(["pcam"])
    assert str(root / PCAM_TEST_X) in hashed


def test_slide_reader_refuses_a_truncated_slide(repo):
    _fetch("slides")
    path = repo / "cache" / "slides" / SLIDE
    with r.SlideReader(path) as s:
        assert s.level_count == 3
    _truncate(path, 0.40)
    with pytest.raises(m.DatasetCorruptError, match=r"dataset 'slides'.*test_001\.tif TRUNCATED"):
        r.SlideReader(path)


def test_chestxray14_reader_refuses_a_truncated_png(repo):
    _fetch("chestxray14-images")
    folder = repo / "cache" / "chestxray14-images" / "images"
    ds = r.ChestXray14Images(folder, pd.DataFrame({"image_index": PNGS}))
    assert ds.images().shape == (3, 64, 64)
    _truncate(folder / PNGS[1], 0.5)
    i = ds.table["image_index"].tolist().index(PNGS[1])
    with pytest.raises(m.DatasetCorruptError, match=r"chestxray14-images.*00000001_001\.png TRUNCATED.*--force"):
        ds.image(i)
    with pytest.raises(m.DatasetCorruptError):
        ds.images()


def test_unrecorded_damaged_file_still_names_its_dataset(repo):
    """A file in a dataset folder without a record (fetched by an older medeval) cannot be size-checked, but
    when the reader fails to parse it, the error names the dataset and the remedy."""
    _fetch("cifar10")
    root = repo / "cache" / "cifar10"
    (root / m.CONTENT_MANIFEST).unlink()
    _truncate(root / CIFAR_BATCH, 0.30)
    with pytest.raises(m.DatasetCorruptError, match=r"dataset 'cifar10'.*not a readable CIFAR-10.*--force"):
        r.read_cifar10_batch(root / CIFAR_BATCH)


# ------------------------------------------------------------------------------------ repair, unrecorded data


def test_fetch_force_repairs_and_plain_fetch_does_not(repo, capsys):
    _fetch("cifar10")
    path = repo / "cache" / "cifar10" / CIFAR_BATCH
    good = path.read_bytes()
    _truncate(path, 0.30)
    _fetch("cifar10")  # finished steps are skipped: a plain fetch does not notice the damage
    assert path.stat().st_size < len(good)
    assert cli.main(["fetch", "cifar10", "--no-progress", "--force"]) == 0
    assert path.read_bytes() == good
    assert cli.main(["verify", "cifar10"]) == 0
    assert "all checked files are present and match" in capsys.readouterr().out


def test_a_dataset_without_record_is_unchecked_never_ok(repo, capsys):
    _fetch("cifar10", "pcam")
    for dataset_id in ("cifar10", "pcam"):
        (repo / "cache" / dataset_id / m.CONTENT_MANIFEST).unlink()
    _truncate(repo / "cache" / "cifar10" / CIFAR_BATCH, 0.30)
    statuses = m.verify(["cifar10", "pcam"])
    assert {s.status for s in statuses} == {"unchecked"} and len(statuses) == 5
    assert all("--force" in s.remedy and "--record" in s.remedy for s in statuses)
    assert m.require("cifar10")  # nothing recorded, nothing to compare: require cannot tell
    capsys.readouterr()
    assert cli.main(["verify", "cifar10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("UNCHECKED   cifar10:") and "OK " not in out and "1 UNCHECKED" in out


def test_damaged_record_is_reported(repo, capsys):
    _fetch("cifar10")
    (repo / "cache" / "cifar10" / m.CONTENT_MANIFEST).write_text("{not json")
    statuses = m.verify(["cifar10"])
    assert statuses[0].status == "corrupt" and statuses[0].path.endswith(m.CONTENT_MANIFEST)
    with pytest.raises(m.DatasetCorruptError, match="'cifar10': its content record .* is damaged.*cifar10 --force"):
        m.require("cifar10")
    assert cli.main(["verify", "cifar10"]) == 1
    assert cli.main(["fetch", "cifar10", "--no-progress", "--force"]) == 0
    assert {s.status for s in m.verify(["cifar10"])} == {"ok"}


# ------------------------------------------------------------------------------------- manually placed data


def test_manual_dataset_is_recorded_on_request_then_checked(repo, capsys):
    root = repo / "cache" / "camelyon16"
    (root / "testing" / "images").mkdir(parents=True)
    slide = root / SLIDE
    slide.write_bytes((repo / "src" / "test_001.tif").read_bytes())
    statuses = m.verify(["camelyon16"])
    assert [s.status for s in statuses] == ["unchecked"] and "--record" in statuses[0].remedy
    assert cli.main(["verify", "camelyon16"]) == 0

    capsys.readouterr()
    assert cli.main(["verify", "camelyon16", "--record"]) == 0
    assert "camelyon16: recorded 1 file(s)" in capsys.readouterr().out
    record = m.read_content_record(root)
    assert record["source"] == "record" and record["files"]["testing/images/test_001.tif"]["sha256"] == (
        m.file_hash(slide))
    assert [s.status for s in m.verify(["camelyon16"])] == ["ok"]

    want = m.file_hash(slide)
    _truncate(slide, 0.40)
    s = _status_of(m.verify(["camelyon16"], quick=True), slide)
    assert s.status == "truncated" and s.expected == f"sha256:{want}"
    assert "`medeval data verify camelyon16 --record`" in s.remedy and "CAMELYON16 bucket" in s.remedy
    with pytest.raises(m.DatasetCorruptError, match=r"dataset 'camelyon16'.*test_001\.tif TRUNCATED.*--record"):
        m.require("camelyon16")
    with pytest.raises(m.DatasetCorruptError, match=r"dataset 'camelyon16'.*CAMELYON16 bucket"):
        r.SlideReader(slide)
    capsys.readouterr()
    assert cli.main(["verify", "camelyon16"]) == 1
    out = capsys.readouterr().out
    assert "TRUNCATED   camelyon16:" in out and "1 truncated" in out
    # re-recording reports what changed since the previous record
    assert cli.main(["verify", "camelyon16", "--record"]) == 0
    assert "1 file(s) changed since the previous record: testing/images/test_001.tif" in capsys.readouterr().out


def test_a_file_the_record_does_not_list_is_reported_and_strict_fails_on_it(repo, capsys):
    """An extra slide copied into a recorded CAMELYON16 folder passed `data verify` unnoticed: it is now reported
    as UNRECORDED (a warning), and --strict fails on it."""
    root = repo / "cache" / "camelyon16"
    (root / "testing" / "images").mkdir(parents=True)
    (root / SLIDE).write_bytes((repo / "src" / "test_001.tif").read_bytes())
    assert cli.main(["verify", "camelyon16", "--record"]) == 0
    assert [s.status for s in m.verify(["camelyon16"])] == ["ok"]
    extra = root / "testing" / "images" / "test_099.tif"
    extra.write_bytes((repo / "src" / "test_001.tif").read_bytes())
    statuses = m.verify(["camelyon16"])
    assert sorted(s.status for s in statuses) == ["ok", "unrecorded"]
    [unrecorded] = [s for s in statuses if s.status == "unrecorded"]
    assert unrecorded.path == str(extra) and not unrecorded.is_problem and "--record" in unrecorded.remedy
    capsys.readouterr()
    assert cli.main(["verify", "camelyon16"]) == 0
    assert "warning: 1 file(s) not in their dataset's content record" in capsys.readouterr().out
    assert cli.main(["verify", "camelyon16", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "UNRECORDED  camelyon16:" in out and "test_099.tif" in out and "1 unrecorded" in out


def test_record_refusals(repo, capsys):
    assert cli.main(["verify", "--record"]) == 2  # which dataset?
    assert cli.main(["verify", "camelyon16", "--record"]) == 1  # nothing placed yet
    assert "must be obtained manually" in capsys.readouterr().err
    doc = yaml.safe_load((repo / "repo" / "data_manifest.yaml").read_text())
    doc["datasets"].append(dict(id="priv", title="p", access="private", reader="a.b", citation="c", licence="l",
                                stand_in="s", instructions="none"))
    (repo / "repo" / "data_manifest.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(ValueError, match="only auto and manual"):
        m.record_content("priv")


# ---------------------------------------------------------------------------------------------- large output


def test_large_dataset_output_lists_problems_and_counts_the_rest(repo, capsys):
    rng = np.random.default_rng(1)
    names = [f"images/{i:08d}_000.png" for i in range(1, 31)]
    archive = repo / "src" / "many.tar.gz"
    archive.write_bytes(_tar_gz({n: _png(rng) for n in names}))
    doc = yaml.safe_load((repo / "repo" / "data_manifest.yaml").read_text())
    entry = next(d for d in doc["datasets"] if d["id"] == "chestxray14-images")
    entry["files"] = [{"path": "images_001.tar.gz", "url": archive.as_uri(), "sha256": _sha256(archive.read_bytes()),
                       "unpack": "untar", "unpack_to": "."}]
    (repo / "repo" / "data_manifest.yaml").write_text(yaml.safe_dump(doc))
    _fetch("chestxray14-images")
    _truncate(repo / "cache" / "chestxray14-images" / names[4], 0.5)
    capsys.readouterr()
    assert cli.main(["verify", "chestxray14-images"]) == 1
    out = capsys.readouterr().out
    assert out.count("TRUNCATED   chestxray14-images:") == 1
    assert "OK          chestxray14-images: 29 files, sha256 match" in out
    assert "1 truncated" in out and "remedy: run `medeval data fetch chestxray14-images --force`" in out
    assert cli.main(["verify", "chestxray14-images", "--verbose"]) == 1
    assert capsys.readouterr().out.count("OK          chestxray14-images: ") == 29


# ------------------------------------------------------------------------------------- kept archives, zip


def test_kept_archive_is_checked_against_its_published_checksum(repo):
    assert cli.main(["fetch", "cifar10", "--no-progress", "--keep-archives"]) == 0
    archive = repo / "cache" / "cifar10" / "cifar-10-python.tar.gz"
    statuses = m.verify(["cifar10"])
    assert [s.path for s in statuses][0] == str(archive) and {s.status for s in statuses} == {"ok"}
    assert len(statuses) == 3  # the archive and the two batches it unpacked
    published = m.get_dataset("cifar10").files[0].sha256
    _truncate(archive, 0.5)
    s = _status_of(m.verify(["cifar10"], quick=True), archive)
    assert s.status == "truncated" and s.expected == f"sha256:{published}"


def test_zip_archives_are_recorded_too(repo):
    import zipfile

    archive = repo / "src" / "voc.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("VOC2005_1/Annotations/a.txt", "# PASCAL Annotation Version 1.00\n")
        zf.writestr("VOC2005_1/PNGImages/", "")  # a folder entry: not a file, not recorded
    doc = yaml.safe_load((repo / "repo" / "data_manifest.yaml").read_text())
    doc["datasets"].append(dict(
        id="voc", title="VOC (fake)", access="auto", reader="a.b", citation="c", licence="l", stand_in="s",
        files=[{"path": "voc.zip", "url": archive.as_uri(), "sha256": _sha256(archive.read_bytes()),
                "unpack": "unzip", "unpack_to": "."}]))
    (repo / "repo" / "data_manifest.yaml").write_text(yaml.safe_dump(doc))
    _fetch("voc")
    record = m.read_content_record(repo / "cache" / "voc")
    assert list(record["files"]) == ["VOC2005_1/Annotations/a.txt"]
    (repo / "cache" / "voc" / "VOC2005_1" / "Annotations" / "a.txt").write_text("# PASCAL Annotation Version 1.01\n")
    assert [s.status for s in m.verify(["voc"])] == ["corrupt"]
