"""The book's Sphinx extension (book/_ext/medeval_autodoc.py) keeps napoleon's ``autodoc-skip-member`` handler away
from pydantic's class internals: Sphinx calls every handler of that event before it takes the first answer, and
napoleon reading ``__doc__`` of a pydantic placeholder that cannot be rebuilt broke the warnings-as-errors build
intermittently ("`Params` is not fully defined")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

EXT = Path(__file__).resolve().parents[2] / "book" / "_ext" / "medeval_autodoc.py"


class Unbuildable:
    """Stands in for pydantic's MockValSer of a model that cannot be rebuilt: every attribute read raises."""

    def __getattr__(self, name):
        raise RuntimeError("`Params` is not fully defined")


def make_app(tmp_path, with_guard: bool) -> Sphinx:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon']\n")
    (src / "index.rst").write_text("Index\n=====\n")
    app = Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html", status=None,
                 warning=None, freshenv=True)
    if with_guard:
        spec = importlib.util.spec_from_file_location("medeval_autodoc_under_test", EXT)
        ext = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ext)
        ext.setup(app)
        app.events.emit("builder-inited")
    return app


def ask(app, name: str, obj):
    return app.emit_firstresult("autodoc-skip-member", "class", name, obj, False, None)


def test_napoleon_alone_reads_a_pydantic_internal_and_fails(tmp_path):
    with pytest.raises(ExtensionError, match="not fully defined"):
        ask(make_app(tmp_path, with_guard=False), "__pydantic_serializer__", Unbuildable())


def test_the_extension_skips_pydantic_internals_without_napoleon_reading_them(tmp_path):
    app = make_app(tmp_path, with_guard=True)
    for name in ("__pydantic_serializer__", "__pydantic_validator__", "model_config", "model_fields"):
        assert ask(app, name, Unbuildable()) is True, name
    with pytest.raises(ExtensionError):  # napoleon still reads every member that is not a pydantic internal
        ask(app, "ordinary_member", Unbuildable())
