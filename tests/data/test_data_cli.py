"""`medeval data list | fetch | verify`: offline, with file:// URLs in a temporary manifest."""

import gzip
import hashlib
import io
import tarfile

import pytest
import yaml

from medeval.data import cli
from medeval.data import manifest as m


def test_list_shows_every_dataset(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for entry in m.load_manifest().datasets:
        assert entry.id in out
    assert "shipped" in out and "private" in out


def test_verify_real_checkout_passes(capsys):
    assert cli.main(["verify"]) == 0
    out = capsys.readouterr().out
    assert "OK          chestxray14-labels" in out and "OK          chestxray14-boxes" in out


@pytest.mark.parametrize(
    "dataset_id, words",
    [
        ("mura", ["manually", "stanfordmlgroup", "MURA-v1.1"]),
        ("adni", ["adni.loni.usc.edu", "adni_regional_volumes.csv"]),
        ("mlnto", ["private", "phantoms.slide"]),
    ],
)
def test_fetch_manual_or_private_prints_how(capsys, dataset_id, words):
    assert cli.main(["fetch", dataset_id]) == 1
    out = capsys.readouterr().out
    for w in words:
        assert w in out
    assert "stand-in" in out


def test_usage_errors(capsys):
    assert cli.main(["fetch", "no-such-dataset"]) == 2
    assert "dataset_id must be one of" in capsys.readouterr().err
    assert cli.main([]) == 2
    assert cli.main(["--help"]) == 0


@pytest.fixture
def offline_repo(tmp_path, monkeypatch):
    """A manifest whose auto datasets point at file:// sources (a tar.gz, a .gz and a plain file)."""
    src = tmp_path / "src"
    src.mkdir()
    # tar.gz holding a cifar-like folder
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"hello batch"
        info = tarfile.TarInfo("batches/data_batch_1")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (src / "arch.tar.gz").write_bytes(buf.getvalue())
    (src / "x.h5.gz").write_bytes(gzip.compress(b"fake hdf5 payload"))
    (src / "plain.csv").write_bytes(b"a,b\n1,2\n")

    def sha(p):
        return hashlib.sha256(p.read_bytes()).hexdigest()

    def md5(p):
        return hashlib.md5(p.read_bytes()).hexdigest()

    common = dict(
        title="t", citation="c", licence="l", reader="medeval.data.readers.read_cifar10", stand_in="s"
    )
    doc = {
        "version": 1,
        "datasets": [
            dict(
                id="tarred",
                access="auto",
                **common,
                files=[
                    {
                        "path": "arch.tar.gz",
                        "url": (src / "arch.tar.gz").as_uri(),
                        "sha256": sha(src / "arch.tar.gz"),
                        "unpack": "untar",
                        "unpack_to": ".",
                    }
                ],
            ),
            dict(
                id="gz",
                access="auto",
                **common,
                files=[
                    {
                        "path": "x.h5.gz",
                        "url": (src / "x.h5.gz").as_uri(),
                        "md5": md5(src / "x.h5.gz"),
                        "unpack": "gunzip",
                    }
                ],
            ),
            dict(
                id="plain",
                access="auto",
                **common,
                files=[
                    {
                        "path": "sub/plain.csv",
                        "url": (src / "plain.csv").as_uri(),
                        "sha256": sha(src / "plain.csv"),
                    }
                ],
            ),
            dict(
                id="wrong",
                access="auto",
                **common,
                files=[{"path": "plain.csv", "url": (src / "plain.csv").as_uri(), "sha256": "0" * 64}],
            ),
            dict(
                id="nohash",
                access="auto",
                **common,
                files=[{"path": "plain.csv", "url": (src / "plain.csv").as_uri()}],
            ),
        ],
    }
    root = tmp_path / "repo"
    root.mkdir()
    (root / "data_manifest.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.setenv("MEDEVAL_ROOT", str(root))
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path / "cache"))

    def no_network(*args, **kwargs):  # any attempt to use HTTP fails the test
        raise AssertionError("network access attempted")

    import pooch

    monkeypatch.setattr(pooch.downloaders.HTTPDownloader, "__call__", no_network)
    return tmp_path


def test_fetch_untar_and_verify(offline_repo, capsys):
    cache = offline_repo / "cache"
    assert cli.main(["fetch", "tarred", "--no-progress"]) == 0
    assert (cache / "tarred" / "batches" / "data_batch_1").read_bytes() == b"hello batch"
    assert not (cache / "tarred" / "arch.tar.gz").exists()  # archive removed after unpacking
    assert m.require("tarred") == cache / "tarred"
    assert cli.main(["verify", "tarred"]) == 0
    # a second fetch is a no-op even when the source is gone (resumes from finished files)
    (offline_repo / "src" / "arch.tar.gz").unlink()
    assert cli.main(["fetch", "tarred", "--no-progress"]) == 0


def test_fetch_gunzip_with_md5(offline_repo):
    assert cli.main(["fetch", "gz", "--no-progress"]) == 0
    assert (offline_repo / "cache" / "gz" / "x.h5").read_bytes() == b"fake hdf5 payload"


def test_fetch_wrong_checksum_fails_and_keeps_nothing(offline_repo, capsys):
    assert cli.main(["fetch", "wrong", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "fetch wrong failed" in err and "0" * 64 in err
    assert not (offline_repo / "cache" / "wrong" / "plain.csv").exists()
    with pytest.raises(m.DatasetUnavailableError, match="medeval data fetch wrong"):
        m.require("wrong")


def test_verify_names_corrupt_and_missing_files_with_expected_checksum(offline_repo, capsys):
    assert cli.main(["fetch", "plain", "--no-progress"]) == 0
    expected = m.get_dataset("plain").files[0].sha256
    capsys.readouterr()
    assert cli.main(["verify", "plain"]) == 0
    (offline_repo / "cache" / "plain" / "sub" / "plain.csv").write_bytes(b"changed\n")
    assert cli.main(["verify", "plain"]) == 1
    out = capsys.readouterr().out
    assert "CORRUPT" in out and "sub/plain.csv" in out and f"sha256:{expected}" in out
    (offline_repo / "cache" / "plain" / "sub" / "plain.csv").unlink()
    assert cli.main(["verify", "plain", "gz"]) == 1
    out = capsys.readouterr().out
    assert "MISSING" in out and f"sha256:{expected}" in out and "x.h5.gz" in out


def test_file_without_published_hash_is_recorded_at_fetch(offline_repo, capsys):
    assert cli.main(["fetch", "nohash", "--no-progress"]) == 0
    statuses = m.verify(["nohash"])
    assert [s.status for s in statuses] == ["ok"] and "fetch-time" in statuses[0].detail
    record = m.read_content_record(offline_repo / "cache" / "nohash")
    assert record["files"]["plain.csv"]["size"] == len(b"a,b\n1,2\n")
    (offline_repo / "cache" / "nohash" / "plain.csv").write_bytes(b"x")
    assert [s.status for s in m.verify(["nohash"])] == ["truncated"]
    (offline_repo / "cache" / "nohash" / "plain.csv").write_bytes(b"a,b\n1,3\n")  # same size, other bytes
    assert [s.status for s in m.verify(["nohash"])] == ["corrupt"]
    assert [s.status for s in m.verify(["nohash"], quick=True)] == ["ok"]  # --quick compares sizes only
