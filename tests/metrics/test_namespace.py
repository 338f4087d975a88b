"""``medeval.metrics`` is one flat namespace: every public name of every metric module, each defined once."""

from __future__ import annotations

import collections
import importlib
import pkgutil

import medeval.metrics as metrics


def _metric_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(metrics.__path__) if not m.name.startswith("_"))


def test_every_metric_module_is_in_the_flat_namespace():
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in metrics.SUBMODULES) == _metric_modules()
    for module in metrics.SUBMODULES:
        for name in module.__all__:
            assert name in metrics.__all__, f"{module.__name__}.{name} is not exported by medeval.metrics"
            assert getattr(metrics, name) is getattr(module, name), f"{name} is not {module.__name__}.{name}"


def test_no_name_is_defined_twice_or_hides_a_module():
    """Two metrics with one name (two binarize, two mean_average_precision) would leave only the last in the flat
    namespace; a function named like its module would hide the module (``from medeval.metrics import X``)."""
    owners = collections.defaultdict(list)
    for name in _metric_modules():
        for exported in importlib.import_module(f"medeval.metrics.{name}").__all__:
            owners[exported].append(name)
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}
    assert not set(owners) & set(_metric_modules())
    assert len(metrics.__all__) == len(set(metrics.__all__)) == len(owners)


def test_the_flat_names_are_the_documented_functions():
    assert metrics.roc_auc([0, 1], [0.2, 0.8]) == 1.0
    assert metrics.roc_auc is importlib.import_module("medeval.metrics.curves").roc_auc
    assert metrics.pairwise_stability.__module__ == "medeval.metrics.stability"


def test_the_api_reference_lists_the_flat_names_once_and_documents_them_in_their_modules():
    """The book's page for medeval.metrics is a table of every function and class, each linked to its module's
    page, not a second copy of the 158 objects; an ordinary module keeps its full autodoc page."""
    from medeval.runtime.book import _flat_namespace_page, api_pages

    page = _flat_namespace_page("medeval.metrics")
    assert ":no-members:" in page and ".. autosummary::" in page
    listed = [line.strip() for line in page.splitlines() if line.startswith("   ") and "." in line]
    assert "curves.roc_auc" in listed and "stability.pairwise_stability" in listed
    assert len(listed) == len(set(listed)) >= 100
    assert _flat_namespace_page("medeval.metrics.curves") is None
    assert ":members:" in api_pages()["api/medeval.metrics.curves.md"]
