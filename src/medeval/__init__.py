"""medeval: a research compendium reproducing five papers on evaluating medical-image AI.

The package holds the compendium's logic: ``metrics`` (pure numpy/scipy metric functions), ``data``
(manifest, readers, phantoms, splitters), ``models`` (torch modules and training loops), ``experiments``
(one module per chapter) and ``runtime`` (parameters, execution, caching, grids, provenance, devices).
"""

__version__ = "0.1.0"
