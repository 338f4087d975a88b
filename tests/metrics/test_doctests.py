"""The ``Examples`` sections of medeval.metrics are executable and every public metric has one.

The examples are worked toy cases (the IoU of two boxes, EVE of three pairs, PR-T at one threshold ...)
that the API reference shows next to each formula; running them keeps the documentation honest.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import medeval.metrics

MODULES = sorted(
    f"medeval.metrics.{info.name}" for info in pkgutil.iter_modules(medeval.metrics.__path__)
)


def _public_functions(module) -> list[str]:
    """Functions defined in ``module`` that are public: in ``__all__`` if it exists, else not ``_``."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return [
        n
        for n in names
        if inspect.isfunction(getattr(module, n, None)) and getattr(module, n).__module__ == module.__name__
    ]


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests_pass(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name}"


@pytest.mark.parametrize("name", MODULES)
def test_every_public_function_has_an_example(name):
    module = importlib.import_module(name)
    missing = [n for n in _public_functions(module) if ">>>" not in (inspect.getdoc(getattr(module, n)) or "")]
    assert not missing, f"public functions of {name} without a '>>>' example: {missing}"


def test_the_metric_modules_are_found():
    assert "medeval.metrics.detection" in MODULES and "medeval.metrics.variance" in MODULES
