"""The metrics of the five papers, one function per concept, in one flat namespace.

``from medeval import metrics`` then ``metrics.roc_auc(y, s)``, ``metrics.robust_detection_outcome(...)``,
``metrics.pairwise_stability(...)``. Every name is defined in exactly one submodule, whose docstring gives the
formula, its source in the paper and the policy for undefined cases:

* :mod:`~medeval.metrics.curves` — ROC, PR, PR-T curves and their areas, the one ROC-AUC (thesis, ch. 2, 4, 5);
* :mod:`~medeval.metrics.segmentation` — patch-based evaluation of segmentations (thesis, ch. 4);
* :mod:`~medeval.metrics.boxes`, :mod:`~medeval.metrics.box_overlap`, :mod:`~medeval.metrics.detection` — box
  formats, IoU variants, RoDeO, acc@IoU and mAP (Meissen et al. 2023);
* :mod:`~medeval.metrics.stability` — localization stability of MIL models (Romanova et al.);
* :mod:`~medeval.metrics.variance` — the empirical variance estimator EVE (Mendelson et al.);
* :mod:`~medeval.metrics.decision_values` — accuracy, sensitivity, specificity and AUC of a classifier's
  decision values, one per run of a batch (the scores EVE is computed from, Mendelson et al.);
* :mod:`~medeval.metrics.multilabel`, :mod:`~medeval.metrics.split_quality` — multi-label measures and the
  quality of multi-label splits (the ChestX-ray14 chapter).

This package imports nothing of medeval outside it (numpy and scipy only; torch tensors are accepted as input
without importing torch).
"""

from medeval.metrics import (
    box_overlap,
    boxes,
    curves,
    decision_values,
    detection,
    multilabel,
    segmentation,
    split_quality,
    stability,
    variance,
)

SUBMODULES = (boxes, box_overlap, curves, decision_values, detection, multilabel, segmentation, split_quality,
              stability, variance)

from medeval.metrics.box_overlap import *  # noqa: E402, F403
from medeval.metrics.boxes import *  # noqa: E402, F403
from medeval.metrics.curves import *  # noqa: E402, F403
from medeval.metrics.decision_values import *  # noqa: E402, F403
from medeval.metrics.detection import *  # noqa: E402, F403
from medeval.metrics.multilabel import *  # noqa: E402, F403
from medeval.metrics.segmentation import *  # noqa: E402, F403
from medeval.metrics.split_quality import *  # noqa: E402, F403
from medeval.metrics.stability import *  # noqa: E402, F403
from medeval.metrics.variance import *  # noqa: E402, F403

__all__ = [name for module in SUBMODULES for name in module.__all__]
