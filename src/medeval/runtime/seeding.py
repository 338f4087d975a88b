"""Seeding a chapter kernel: Python's, numpy's and torch's generators, torch seeded the moment it is imported.

:func:`seed_everything` is what :func:`medeval.runtime.notebook.setup` calls with the chapter's ``seed``. Torch is
not imported for it: an import hook (``_SeedTorchOnImport``) seeds torch, and pins its numerics
(:func:`medeval.runtime.numerics.pin_torch`), as soon as a chapter module or a grid worker first imports it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import random
import sys

import numpy as np


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's generators and ask torch for deterministic kernels (warning where an
    operation has none; cuDNN's benchmark mode off).

    Torch is seeded where it is loaded: at once if it is already imported, else the moment it is first imported
    (by this process or by a grid worker forked from it), before any code can use it. A chapter that never uses
    torch does not load it (1.2 s and about 150 MB in every kernel).
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    _SeedTorchOnImport.uninstall()
    if "torch" in sys.modules:
        _seed_torch(sys.modules["torch"], seed)
    else:
        sys.meta_path.insert(0, _SeedTorchOnImport(seed))


def _seed_torch(torch, seed: int) -> None:
    from medeval.runtime.numerics import pin_torch

    pin_torch(torch)  # one thread and oneDNN off (but for the direct convolutions) when pinned, before torch computes
    torch.manual_seed(seed)
    if "torch._inductor" in sys.modules:
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:  # what the public call does, less importing the compiler (1.2 s per kernel) to set its flag too
        torch._C._set_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False


class _SeedTorchOnImport(importlib.abc.MetaPathFinder):
    """A one-shot import hook: finds ``torch`` through the other finders and seeds it (:func:`_seed_torch`) as
    soon as its module has executed, before the import statement that loaded it returns."""

    def __init__(self, seed: int):
        self.seed = seed

    @classmethod
    def uninstall(cls) -> None:
        sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, cls)]

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        self.uninstall()  # before looking torch up, so that the look-up does not come back here
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, seed = spec.loader, self.seed
        execute = loader.exec_module

        def exec_module(module):
            execute(module)
            _seed_torch(module, seed)

        loader.exec_module = exec_module
        return spec
