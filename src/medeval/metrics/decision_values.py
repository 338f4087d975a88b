"""Scores of a validation run from a classifier's decision values, one per row of a batch.

Reference: A. F. Mendelson, M. A. Zuluaga, L. Thurfjell, B. F. Hutton, S. Ourselin, "The empirical
variance estimator for computer aided diagnosis: lessons for algorithm validation" (MICCAI 2014), Sec. 3:
the performance of a validation strategy is its accuracy, sensitivity, specificity or AUC. As LIBSVM's
``svm_cross_validation`` does, a K-fold CV run is scored on its pooled held-out decisions: every point is
tested once, in the fold that left it out, and the measure is taken over all of them.

Here a row holds the decision values f(x) of one run (one CV repeat of one subset, or one fold) and a
boolean mask marks the points it is scored on; rows are scored together (chapter 3 scores up to millions
of runs). Labels are binary in {0, 1}, 1 the positive class; f(x) > 0 predicts class 1.

Edge-case policy: a row without a point under its mask (or, for sensitivity, specificity and AUC, without
the class the measure needs) gives NaN, never a silent 0 or 1. Labels other than 0 and 1 (or bool), and a
decision value under the mask that is NaN or infinite, raise ``ValueError`` for every measure: such a point has
no class, or no side of the threshold 0, and counting it as a negative would be a silent guess. Array inputs may be numpy arrays, sequences or
torch tensors (converted by ``medeval.metrics._arrays.to_numpy``). This module imports nothing from medeval
outside ``medeval.metrics``.
"""

from __future__ import annotations

import numpy as np

from medeval.metrics._arrays import to_numpy
from medeval.metrics.curves import roc_auc

__all__ = [
    "DECISION_VALUE_SCORES",
    "decision_value_scores",
]

#: The measures :func:`decision_value_scores` computes (the paper's accuracy, sensitivity, specificity, AUC).
DECISION_VALUE_SCORES: tuple[str, ...] = ("accuracy", "sensitivity", "specificity", "auc")


def decision_value_scores(decision, labels, mask, metric: str) -> np.ndarray:
    r"""A metric of each row (last axis = points) over the points where ``mask`` is true.

    With :math:`f` the decision values, :math:`y` the labels, a point predicted positive when :math:`f > 0`,
    and the counts taken over the masked points of a row (:math:`n_{+}`, :math:`n_{-}` its positives and
    negatives):

    .. math::

       \mathrm{accuracy} = \frac{TP+TN}{n_{+}+n_{-}},\qquad \mathrm{sensitivity} = \frac{TP}{n_{+}},\qquad
       \mathrm{specificity} = \frac{TN}{n_{-}};

    AUC is :func:`medeval.metrics.curves.roc_auc` (ties count :math:`\tfrac{1}{2}`, as in
    ``sklearn.metrics.roc_auc_score``).
    ``metric`` is one of :data:`DECISION_VALUE_SCORES`. ``labels`` and ``mask`` broadcast to the shape of
    ``decision``; points outside the mask may hold anything (NaN where no decision was made). A row without
    points (or, for sensitivity/specificity/AUC, without the class it needs) gives NaN. Labels outside
    {0, 1} and non-finite decision values under the mask raise ``ValueError``, whatever the ``metric``.

    Examples
    --------
    >>> from medeval.metrics.decision_values import decision_value_scores
    >>> f = [[1.5, -0.2, 0.3, -1.0], [0.4, 0.1, -0.3, np.nan]]
    >>> y = [[1, 1, 0, 0], [1, 0, 0, 1]]
    >>> mask = [[True, True, True, True], [True, True, True, False]]
    >>> decision_value_scores(f, y, mask, "accuracy").tolist()
    [0.5, 0.6666666666666666]
    >>> decision_value_scores(f, y, mask, "sensitivity").tolist()
    [0.5, 1.0]
    >>> decision_value_scores(f, y, mask, "auc").tolist()
    [0.75, 1.0]
    """
    if metric not in DECISION_VALUE_SCORES:
        raise ValueError(f"metric must be one of {DECISION_VALUE_SCORES}, got {metric!r}")
    f = to_numpy(decision, dtype=float)
    y = to_numpy(labels)
    if y.dtype != bool:
        if y.dtype == object or not np.issubdtype(y.dtype, np.number):
            raise ValueError(f"labels must hold binary labels (0/1 or bool), got dtype {y.dtype}")
        if not np.all((y == 0) | (y == 1)):
            raise ValueError("labels must hold binary labels (0/1 or bool)")
    y = np.broadcast_to(y, f.shape).astype(bool)
    mask = np.broadcast_to(to_numpy(mask, dtype=bool), f.shape)
    if not np.all(np.isfinite(f) | ~mask):
        raise ValueError("decision must be finite (no NaN or inf) where mask is true; points outside the mask "
                         "may hold anything")
    pred = f > 0
    n_pos = (mask & y).sum(-1)
    n_neg = (mask & ~y).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "accuracy":
            return ((pred == y) & mask).sum(-1) / (n_pos + n_neg)
        if metric == "sensitivity":
            return (pred & y & mask).sum(-1) / n_pos
        if metric == "specificity":
            return (~pred & ~y & mask).sum(-1) / n_neg
        # points outside the mask may hold anything (NaN where no decision was made): they take no part
        return np.asarray(roc_auc(y, np.where(mask, f, 0.0), sample_mask=mask, undefined=np.nan))
