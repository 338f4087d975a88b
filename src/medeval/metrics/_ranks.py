"""Rank statistics of scores within tie groups, shared by the ranking measures: the one AUC
(:func:`medeval.metrics.curves.roc_auc`) and the multi-label average precision, coverage and ranking loss.

Everything works along the last axis, so one call handles every row (label or example) of a score matrix.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []  # private helpers of medeval.metrics.curves and medeval.metrics.multilabel


def tie_group_stats(y: np.ndarray, p: np.ndarray, mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Sort every row of ``p`` ascending and describe each element's tie group (equal scores).

    For each element, in sorted order: ``ys`` whether it is a positive (and kept by ``mask``), ``start`` /
    ``end`` the first / last sorted position of its tie group, ``pos_before`` the positives strictly below its
    score, ``neg_before`` / ``neg_through`` the negatives with a score below / at most its score. Per row:
    ``n_pos`` and ``n_neg``. Elements outside ``mask`` (boolean, shape of ``p``) count as neither class.
    """
    n = p.shape[-1]
    order = np.argsort(p, axis=-1)
    # gathers along the last axis through flat indices (several times faster than take_along_axis)
    offsets = (np.arange(p.size // n, dtype=np.intp) * n).reshape(p.shape[:-1] + (1,))

    def gather(a, index):
        return np.take(a.ravel(), (index + offsets).ravel()).reshape(p.shape)

    ps = gather(p, order)
    ys = gather(y, order)
    idx = np.arange(n)
    new_group = np.empty(ps.shape, dtype=bool)
    new_group[..., 0] = True
    np.not_equal(ps[..., 1:], ps[..., :-1], out=new_group[..., 1:])
    start = np.maximum.accumulate(np.where(new_group, idx, 0), axis=-1)
    is_end = np.empty_like(new_group)
    is_end[..., -1] = True
    is_end[..., :-1] = new_group[..., 1:]
    end = np.minimum.accumulate(np.where(is_end, idx, n - 1)[..., ::-1], axis=-1)[..., ::-1]
    if mask is None:
        cpos = np.cumsum(ys, axis=-1, dtype=np.int64)
        pos_before = gather(cpos - ys, start)
        pos_through = gather(cpos, end)
        neg_before, neg_through = start - pos_before, end + 1 - pos_through
        n_pos = cpos[..., -1]
        n_neg = n - n_pos
    else:
        kept = gather(np.ascontiguousarray(np.broadcast_to(mask, p.shape)), order)
        negs = ~ys & kept
        ys = ys & kept
        cpos = np.cumsum(ys, axis=-1, dtype=np.int64)
        cneg = np.cumsum(negs, axis=-1, dtype=np.int64)
        pos_before = gather(cpos - ys, start)
        neg_before, neg_through = gather(cneg - negs, start), gather(cneg, end)
        n_pos, n_neg = cpos[..., -1], cneg[..., -1]
    return {
        "ys": ys,
        "start": start,
        "pos_before": pos_before,
        "end": end,
        "neg_before": neg_before,
        "neg_through": neg_through,
        "n_pos": n_pos,
        "n_neg": n_neg,
    }


def auc_from_stats(stats: dict[str, np.ndarray], ties: str) -> tuple[np.ndarray, np.ndarray]:
    r"""Per row :math:`\sum_{u \in \text{positives}} c_u / (n_{pos} n_{neg})` and the rows where it is undefined
    (:math:`n_{pos} n_{neg} = 0`).

    ``c_u`` counts the negatives below ``s_u``, plus those tied with it: all (``ties="correct"``), half
    (``"half"``) or none (``"incorrect"``)."""
    if ties == "correct":
        credit = stats["neg_through"]
    elif ties == "half":
        credit = 0.5 * (stats["neg_before"] + stats["neg_through"])
    else:
        credit = stats["neg_before"]
    numerator = np.where(stats["ys"], credit, 0).sum(axis=-1, dtype=np.float64)
    denominator = stats["n_pos"].astype(np.float64) * stats["n_neg"]
    undefined = denominator == 0
    value = np.divide(numerator, denominator, out=np.full(np.shape(numerator), np.nan), where=~undefined)
    return value, undefined
