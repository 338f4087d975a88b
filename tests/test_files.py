"""The package's one atomic writer and one project-root finder (medeval._files)."""

from __future__ import annotations

import threading

import pytest

from medeval import _files


def test_an_atomic_write_replaces_whole_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "record.json"
    _files.atomic_write_text(target, "old")
    _files.atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new" and sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_a_failed_atomic_write_keeps_the_old_file_and_removes_its_temporary(tmp_path):
    target = tmp_path / "record.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        _files.atomic_write_bytes(target, "not bytes")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_threads_writing_one_file_never_leave_a_partial_one(tmp_path):
    target = tmp_path / "shared.txt"
    texts = [str(i) * 10_000 for i in range(8)]
    threads = [threading.Thread(target=lambda t=t: [_files.atomic_write_text(target, t) for _ in range(20)])
               for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_text() in texts and sorted(p.name for p in tmp_path.iterdir()) == ["shared.txt"]


def test_one_project_root_for_every_layer(tmp_path, monkeypatch):
    from medeval.data.manifest import repo_root
    from medeval.runtime.paths import project_root

    assert project_root() == _files.project_root() == repo_root() and (project_root() / "params").is_dir()
    monkeypatch.setenv("MEDEVAL_ROOT", str(tmp_path))
    assert repo_root() == tmp_path  # the data layer does not need params/
    with pytest.raises(RuntimeError, match="no params/ folder; set MEDEVAL_ROOT"):
        project_root()
