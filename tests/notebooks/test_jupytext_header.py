"""Saving a chapter in JupyterLab leaves its source byte for byte as it was (issue #34): the header is pinned, so
git sees no change and the chapter's cache key (a hash of its source) stays valid."""

from __future__ import annotations

import shutil

import jupytext
import pytest

from medeval.runtime.params import chapters
from medeval.runtime.paths import project_root

CHAPTERS = list(chapters())


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_jupytext_read_and_write_give_back_the_source(chapter):
    path = chapters()[chapter].notebook
    assert jupytext.writes(jupytext.read(path), fmt="py:percent") == path.read_text()


def test_a_jupyterlab_save_through_jupytext_changes_no_byte(tmp_path):
    """What JupyterLab does on open and save, with the repository's notebooks/jupytext.toml: jupytext's contents
    manager reads the .py, pairs it with an .ipynb, and writes both back; twice, the second time from the pair."""
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    shutil.copy(project_root() / "notebooks" / "jupytext.toml", tmp_path / "jupytext.toml")
    for ch in chapters().values():
        shutil.copy(ch.notebook, tmp_path / ch.notebook.name)
    manager = build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(tmp_path))
    for ch in chapters().values():
        name = ch.notebook.name
        original = ch.notebook.read_bytes()
        manager.save(manager.get(name), name)
        assert (tmp_path / name).with_suffix(".ipynb").is_file(), "the toml pairs the chapter with an .ipynb"
        manager.save(manager.get(name), name)
        assert (tmp_path / name).read_bytes() == original, f"{name}: a save changed the source"


def test_the_scaffold_writes_the_same_header():
    from medeval.runtime.paths import project_root
    from medeval.runtime.scaffold import TEMPLATE

    header = chapters()["03-eve"].notebook.read_text().split("# %%", 1)[0]
    template = project_root() / TEMPLATE / "notebooks" / "00-template-chapter.py"
    assert template.read_text().startswith(header)
