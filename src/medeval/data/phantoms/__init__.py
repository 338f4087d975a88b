"""Phantom generators: deterministic stand-ins with exact ground truth.

* :mod:`medeval.data.phantoms.chest` - chest X-ray phantoms with the 14 ChestX-ray14 findings (chapters 1, 2, 5).
* :mod:`medeval.data.phantoms.slide` - H&E-like whole-slide phantoms with C / ¬C / O masks (chapter 4).

Submodules are imported on use (``from medeval.data.phantoms.chest import generate_chest_phantoms``), so that
importing one does not load the other's dependencies.
"""
