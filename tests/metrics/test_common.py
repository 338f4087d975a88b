"""One harness for every name of ``medeval.metrics``, in the style of scikit-learn's
``sklearn/metrics/tests/test_common.py``.

Every name of ``medeval.metrics.__all__`` is in exactly one of two tables:

* :data:`REGISTRY`: the metrics. A :class:`MetricSpec` says how to call the metric on generated inputs
  (an input *kind*: binary labels and scores, label matrices, box sets, per-image box lists, 2x2 agreement
  tables, prediction maps of several models, fold scores ...) and declares its properties:
  ``symmetric`` (the two compared arguments exchanged give the same value, or a stated transform of it),
  ``order`` (a shared permutation of the samples changes nothing, or permutes the output), ``monotone``
  (a strictly increasing map of the scores changes nothing; on [0, 1] the map keeps 0, 0.5 and 1, the
  threshold of every thresholded score here), ``torch`` (a torch tensor gives the numpy result; ``"grad"``:
  also one that requires grad, declared wherever an input is floating), ``geometric`` / ``formats`` (boxes
  translated and scaled per axis, or given in another box format), ``bounds`` (the value lies in [lo, hi],
  with at least ``finite_share`` of the values finite, so a table of NaNs cannot pass), ``scale`` (the scores
  multiplied by 1e-170 and by 1e-300 change nothing, or change the result by the stated map: a metric that
  squares deviations before rescaling them fails), ``non_finite`` (a NaN, inf or -inf score raises a
  ``ValueError`` whose message matches, naming the argument), ``bad_labels`` (a label 2 or -1 among 0/1
  labels raises a ``ValueError`` whose message matches) and ``degenerate``
  (the documented policy for a single class, an empty input, constant scores ...: ``ValueError`` naming the
  problem, NaN, or a stated value).
  ``False`` is a declaration too: the test shows the property failing on one of the random inputs.
* :data:`NOT_METRICS`: result classes, constants and helpers (format conversion, validation, thresholding,
  grids, masks), each with the reason. The helpers still get a spec in :data:`HELPERS`, for the properties
  every callable has (deterministic, inputs not modified, torch tensors) and their own contracts (round
  trips, shapes).

Every function of the package is checked for determinism and for leaving its inputs unmodified.
:func:`test_registry_is_complete` fails when a new name is exported without being registered here.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import itertools
import math
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pytest

import medeval.metrics as M

# --------------------------------------------------------------------------------------------------
# comparing results: every result becomes a flat {path: leaf} dict (dataclasses, named tuples, dicts,
# sequences and scipy results are opened; numeric leaves become arrays)
# --------------------------------------------------------------------------------------------------


def _leaves(obj, path: str = "") -> dict[str, Any]:
    if hasattr(obj, "statistic") and hasattr(obj, "pvalue"):  # scipy's test results
        return {f"{path}.statistic": np.asarray(obj.statistic), f"{path}.pvalue": np.asarray(obj.pvalue)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        items = [(f".{f.name}", getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    elif isinstance(obj, tuple) and hasattr(obj, "_fields"):
        items = [(f".{name}", getattr(obj, name)) for name in obj._fields]
    elif isinstance(obj, dict):
        items = [(f"[{key!r}]", value) for key, value in obj.items()]
    elif isinstance(obj, (list, tuple)):
        items = [(f"[{i}]", value) for i, value in enumerate(obj)]
    elif obj is None or isinstance(obj, (str, bytes)):
        return {path: obj}
    else:
        arr = np.asarray(obj)
        if arr.dtype == object:
            raise TypeError(f"cannot compare {path} of type {type(obj).__name__}")
        return {path: arr}
    out: dict[str, Any] = {} if items else {path: f"empty {type(obj).__name__}"}
    for suffix, value in items:
        out.update(_leaves(value, path + suffix))
    return out


def assert_same(got, expected, tol: float = 0.0, what: str = "") -> None:
    """Equal structure and values (NaN equal to NaN); ``tol`` is an absolute and relative tolerance."""
    assert_leaves_same(_leaves(got), _leaves(expected), tol, what)


def assert_leaves_same(a: dict, b: dict, tol: float = 0.0, what: str = "") -> None:
    assert list(a) == list(b), f"{what}: the results differ in structure: {list(a)} vs {list(b)}"
    for key, x in a.items():
        y = b[key]
        if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
            assert x == y, f"{what}{key}: {x!r} != {y!r}"
            continue
        assert x.shape == y.shape, f"{what}{key}: shape {x.shape} != {y.shape}"
        if np.issubdtype(x.dtype, np.number) and np.issubdtype(y.dtype, np.number) and tol > 0:
            np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True, err_msg=f"{what}{key}")
        else:
            np.testing.assert_array_equal(x, y, err_msg=f"{what}{key}")


def differs(got, expected, tol: float = 1e-9) -> bool:
    try:
        assert_same(got, expected, tol)
    except AssertionError:
        return True
    return False


def numbers(value) -> list[float]:
    """Every numeric leaf of a result, flattened, as floats (booleans and strings are left out)."""
    out: list[float] = []
    for leaf in _leaves(value).values():
        if isinstance(leaf, np.ndarray) and np.issubdtype(leaf.dtype, np.number):
            out.extend(float(v) for v in leaf.ravel())
    return out


@contextlib.contextmanager
def _quiet():
    """Undefined items are part of the random inputs (NaN, excluded and counted): their warnings are
    expected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        warnings.filterwarnings("ignore", "RoDeO: no matched box pairs", UserWarning)
        yield


def _to_torch(obj, grad: bool = False):
    """numpy arrays (inside dicts and lists) as CPU tensors; floating ones require grad when ``grad``."""
    import torch

    if isinstance(obj, dict):
        return {k: _to_torch(v, grad) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_torch(v, grad) for v in obj]
    if isinstance(obj, np.ndarray):
        t = torch.from_numpy(obj.copy())
        return t.requires_grad_(True) if grad and t.is_floating_point() else t
    return obj


# --------------------------------------------------------------------------------------------------
# input kinds: seeded random inputs and the transforms the properties need
# --------------------------------------------------------------------------------------------------

Inputs = dict[str, Any]


@dataclass(frozen=True)
class InputKind:
    """``make(rng)`` random inputs; ``permute(d, rng) -> (d, perm)`` one permutation of the samples of
    every argument; ``swap(d)`` the two compared arguments exchanged; ``monotone(d)`` the scores through a
    strictly increasing map (on [0, 1]: one that keeps 0, 0.5 and 1; decision values: one that keeps 0);
    ``geometric(d)`` the boxes translated
    and scaled per axis; ``formats(d, fmt)`` the boxes given in ``fmt``; ``scale(d, c)`` the scores times
    ``c > 0``; ``non_finite(d, v)`` the value ``v`` (NaN, inf) put into one scored entry; ``bad_labels(d, v)``
    the value ``v`` put into one 0/1 label."""

    make: Callable[[np.random.Generator], Inputs]
    permute: Callable[[Inputs, np.random.Generator], tuple[Inputs, Any]] | None = None
    swap: Callable[[Inputs], Inputs] | None = None
    monotone: Callable[[Inputs], Inputs] | None = None
    geometric: Callable[[Inputs], Inputs] | None = None
    formats: Callable[[Inputs, str], Inputs] | None = None
    scale: Callable[[Inputs, float], Inputs] | None = None
    non_finite: Callable[[Inputs, float], Inputs] | None = None
    bad_labels: Callable[[Inputs, float], Inputs] | None = None


def _permuting(*keys: str, axis: int = 0):
    """The same permutation of ``axis`` of every array ``keys`` (lists are permuted as sequences)."""

    def permute(d: Inputs, rng: np.random.Generator):
        first = d[keys[0]]
        perm = rng.permutation(len(first) if isinstance(first, list) else first.shape[axis])
        out = dict(d)
        for k in keys:
            out[k] = [d[k][i] for i in perm] if isinstance(d[k], list) else np.take(d[k], perm, axis=axis)
        return out, perm

    return permute


def _swapping(*pairs: tuple[str, str]):
    def swap(d: Inputs) -> Inputs:
        out = dict(d)
        for a, b in pairs:
            out[a], out[b] = d[b], d[a]
        return out

    return swap


def _mapping(f: Callable[[np.ndarray], np.ndarray], *keys: str):
    def apply(d: Inputs) -> Inputs:
        return {**d, **{k: f(d[k]) for k in keys}}

    return apply


def _scaling(*keys: str):
    """The arrays ``keys`` times ``c`` (NaN stays NaN)."""

    def scale(d: Inputs, c: float) -> Inputs:
        return {**d, **{k: np.asarray(d[k], dtype=np.float64) * c for k in keys}}

    return scale


def _setting(key: str, index: tuple[int, ...] = (0,)):
    """``d[key]`` with the entry at ``index`` replaced by the given value (a float copy where needed)."""

    def put(d: Inputs, value: float) -> Inputs:
        a = np.array(d[key], dtype=np.result_type(np.asarray(d[key]).dtype, type(value)))
        a[index] = value
        return {**d, key: a}

    return put


def _increasing(s: np.ndarray) -> np.ndarray:
    """A strictly increasing map of the real line."""
    return np.exp(s) - 3.0


def _increasing_unit(p: np.ndarray) -> np.ndarray:
    """A strictly increasing map of [0, 1] onto itself that keeps 0, 0.5 and 1 (so every ``p >= 0.5`` and
    ``p > 0.5`` decision): ``2 p^2`` below 0.5, ``1 - 2 (1 - p)^2`` above."""
    p = np.asarray(p, dtype=np.float64)
    return np.where(p <= 0.5, 2 * p * p, 1 - 2 * (1 - p) ** 2)


_SHIFT, _SCALE = np.array([13.7, -4.2]), np.array([3.0, 0.5])


def _move_xywh(boxes: np.ndarray) -> np.ndarray:
    """xywh boxes translated by ``_SHIFT`` and scaled by ``_SCALE`` (x and y separately)."""
    out = np.array(boxes, dtype=np.float64, copy=True)
    out[..., :2] = out[..., :2] * _SCALE + _SHIFT
    out[..., 2:4] = out[..., 2:4] * _SCALE
    return out


def _random_xywh(rng, n: int, size: float = 50.0) -> np.ndarray:
    return np.column_stack([rng.uniform(0, size, (n, 2)), rng.uniform(2, size / 2, (n, 2))])


def _jitter(rng, boxes: np.ndarray) -> np.ndarray:
    out = boxes.copy()
    out[:, :2] += rng.normal(0, 0.2, (len(boxes), 2)) * boxes[:, 2:4]
    out[:, 2:4] *= np.exp(rng.normal(0, 0.3, (len(boxes), 2)))
    return out


def _box_kind(*keys: str, pairwise: bool = False) -> InputKind:
    def geometric(d):
        return {**d, **{k: _move_xywh(d[k]) for k in keys}}

    def formats(d, fmt):
        return {**d, "box_format": fmt, **{k: M.convert_boxes(d[k], "xywh", fmt) for k in keys}}

    def permute_sets(d, rng):
        perms = tuple(rng.permutation(len(d[k])) for k in keys)
        return {**d, **{k: d[k][p] for k, p in zip(keys, perms, strict=True)}}, perms

    def make(rng):
        if len(keys) == 1:
            return {keys[0]: _random_xywh(rng, 20), "box_format": "xywh"}
        first = _random_xywh(rng, 7 if pairwise else 20)
        second = _jitter(rng, first)[:5] if pairwise else _jitter(rng, first)
        return {keys[0]: first, keys[1]: second, "box_format": "xywh"}

    return InputKind(
        make=make,
        permute=permute_sets if pairwise else _permuting(*keys),
        swap=_swapping((keys[0], keys[1])) if len(keys) == 2 else None,
        geometric=geometric,
        formats=formats,
    )


def _detection_make(rng) -> Inputs:
    """8 images, 3 classes: targets, and predictions = jittered targets (some dropped, some classes flipped)
    plus extra boxes, each with a confidence (rounded: tied confidences)."""
    preds, targets = [], []
    for _ in range(8):
        nt = int(rng.integers(0, 4))
        t = np.column_stack([_random_xywh(rng, nt), rng.integers(0, 3, nt)])
        p = np.column_stack([_jitter(rng, t[:, :4]), t[:, 4]])
        flip = rng.random(nt) < 0.25
        p[flip, 4] = rng.integers(0, 3, int(flip.sum()))
        p = p[rng.random(nt) > 0.2]
        ne = int(rng.integers(0, 3))
        p = np.concatenate([p, np.column_stack([_random_xywh(rng, ne), rng.integers(0, 3, ne)])])
        preds.append(np.column_stack([p, np.round(rng.random(len(p)), 1)]))
        targets.append(t.reshape(-1, 5))
    return {"predictions": preds, "targets": targets, "class_names": ("a", "b", "c"), "box_format": "xywh"}


def _detection_permute(d: Inputs, rng):
    """Images in another order, and the boxes of each image in another order."""
    order = rng.permutation(len(d["targets"]))
    preds = [d["predictions"][i] for i in order]
    targets = [d["targets"][i] for i in order]
    preds = [p[rng.permutation(len(p))] for p in preds]
    targets = [t[rng.permutation(len(t))] for t in targets]
    return {**d, "predictions": preds, "targets": targets}, order


def _detection_boxes(d: Inputs, f) -> Inputs:
    def each(a):
        out = a.copy()
        out[:, :4] = f(a[:, :4])
        return out

    return {**d, **{k: [each(a) for a in d[k]] for k in ("predictions", "targets")}}


def _detection_formats(d: Inputs, fmt: str) -> Inputs:
    return {**_detection_boxes(d, lambda b: M.convert_boxes(b, "xywh", fmt)), "box_format": fmt}


def _binary_make(rng, n: int = 60) -> Inputs:
    y = (rng.random(n) < 0.4).astype(np.int64)
    y[:2] = [1, 0]
    return {"y": y, "s": np.round(rng.normal(size=n) + y, 1)}  # rounded: ties, also between the classes


def _trials_make(rng) -> Inputs:
    d = _binary_make(rng, 50)
    return {"y": d["y"], "S": np.round(rng.normal(size=(3, 50)) + d["y"], 1)}


def _permute_trials(d: Inputs, rng):
    perm = rng.permutation(d["y"].size)
    return {**d, "y": d["y"][perm], "S": d["S"][:, perm]}, perm


def _counts_make(rng) -> Inputs:
    """50 agreement tables (n00, n01, n10, n11), with degenerate ones: both models all negative, both all
    positive, no agreement at all."""
    c = rng.integers(0, 15, (4, 50))
    c[:, :3] = [[7, 0, 0], [0, 0, 3], [0, 0, 4], [0, 7, 0]]
    c[0, c.sum(axis=0) == 0] = 1
    return dict(zip(("n00", "n01", "n10", "n11"), c, strict=True))


def _maps_make(rng, shape) -> np.ndarray:
    """Probability maps with ties and exact 0.5s (the threshold)."""
    p = np.round(rng.random(shape), 2)
    p[..., 0] = 0.5
    return p


def _probability_pair_make(rng) -> Inputs:
    a = _maps_make(rng, (6, 40))
    b = np.clip(np.round(a + rng.normal(0, 0.3, a.shape), 2), 0, 1)
    a[5] = 0.3  # constant on one bag
    return {"pred_a": a, "pred_b": b}


def _stability_make(rng) -> Inputs:
    signal = rng.random((1, 5, 30))
    p = np.clip(np.round(signal + rng.normal(0, 0.3, (3, 5, 30)), 1), 0, 1)
    p[:, 4] = 0.2  # every model constant and negative on the last bag
    return {"predictions": p}


def _reverse_models(d: Inputs) -> Inputs:
    return {**d, "predictions": d["predictions"][::-1].copy()}


def _instances_make(rng) -> Inputs:
    labels = (rng.random((6, 30)) < 0.3).astype(np.int64)
    p = np.clip(np.round(labels * 0.5 + rng.random((6, 30)) * 0.6, 2), 0, 1)
    labels[5], p[5] = 0, 0.1  # no labelled and no predicted positive: undefined
    return {"predictions": p, "instance_labels": labels}


def _multilabel_pred_make(rng) -> Inputs:
    y = (rng.random((40, 5)) < 0.35).astype(np.int64)
    y_pred = np.where(rng.random(y.shape) < 0.2, 1 - y, y)
    return {"Y": y, "Y_pred": y_pred}


def _binary_pred_make(rng) -> Inputs:
    d = _multilabel_pred_make(rng)
    return {"y": d["Y"].ravel(), "y_pred": d["Y_pred"].ravel()}


def _multilabel_scores_make(rng) -> Inputs:
    y = (rng.random((40, 6)) < 0.35).astype(np.int64)
    y[0], y[1] = 1, 0  # every label has a positive and a negative
    y[2, :] = 0  # a row without labels
    p = np.round(np.clip(0.3 * y + rng.random(y.shape) * 0.7, 0, 1), 1)
    return {"Y": y, "P": p}


def _label_matrix_make(rng) -> Inputs:
    y = (rng.random((50, 5)) < [0.5, 0.3, 0.2, 0.4, 0.1]).astype(np.int64)
    y[:2] = [[1, 1, 1, 1, 1], [0, 0, 0, 0, 0]]  # no constant label
    y[2:6] = y[6:10]  # repeated label sets
    return {"Y": y}


def _split_make(rng) -> Inputs:
    y = (rng.random((40, 4)) < [0.3, 0.25, 0.2, 0.4]).astype(np.int64)
    return {"Y": y, "folds": rng.permutation(np.arange(40) % 5), "n_samples": 40}


def _segmentation_images_make(rng) -> Inputs:
    shapes = [(13, 17), (12, 12), (9, 20), (16, 11)]
    trues = [rng.integers(0, 3, s) for s in shapes]
    preds = [np.where(rng.random(t.shape) < 0.3, rng.integers(0, 3, t.shape), t) for t in trues]
    trues[3][trues[3] == 2] = 0  # an image without class 2
    return {"pred_masks": preds, "true_masks": trues}


def _segmentation_pair_make(rng) -> Inputs:
    d = _segmentation_images_make(rng)
    return {"pred_mask": d["pred_masks"][0], "true_mask": d["true_masks"][0]}


def _probabilities_make(rng) -> Inputs:
    logits = rng.normal(size=(4, 3, 9, 9))
    return {"probabilities": np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)}


def _scores_make(rng, n: int = 12) -> np.ndarray:
    return rng.uniform(0.6, 0.9, n)


def _decision_values_make(rng) -> Inputs:
    """5 runs of 24 points: decision values (rounded: ties, and exact 0s, which predict class 0), labels and
    the scored points; NaN where no decision was made (outside the mask). The last run scores negatives only
    (its sensitivity and AUC are undefined)."""
    y = (rng.random((5, 24)) < 0.5).astype(np.int64)
    y[:, :2] = [1, 0]
    f = np.round(rng.normal(size=y.shape) + y - 0.5, 1)
    mask = rng.random(y.shape) < 0.7
    mask[:, :2] = True
    mask[4] &= y[4] == 0
    f[~mask & (rng.random(y.shape) < 0.5)] = np.nan
    return {"f": f, "y": y, "mask": mask}


def _increasing_keeping_zero(f: np.ndarray) -> np.ndarray:
    """A strictly increasing map of the real line that keeps 0 (the threshold of decision values)."""
    return np.sinh(2 * np.asarray(f, dtype=np.float64))


KINDS: dict[str, InputKind] = {
    "binary": InputKind(
        _binary_make, _permuting("y", "s"), monotone=_mapping(_increasing, "s"), scale=_scaling("s"),
        non_finite=_setting("s"), bad_labels=_setting("y"),
    ),
    "binary_trials": InputKind(
        _trials_make, _permute_trials, monotone=_mapping(_increasing, "S"), scale=_scaling("S"),
        non_finite=_setting("S", (0, 0)), bad_labels=_setting("y"),
    ),
    "binary_pred": InputKind(
        _binary_pred_make, _permuting("y", "y_pred"), _swapping(("y", "y_pred")), bad_labels=_setting("y"),
    ),
    "two_groups": InputKind(
        lambda rng: {"a": _scores_make(rng, 6), "b": _scores_make(rng, 8)},
        lambda d, rng: ({"a": rng.permutation(d["a"]), "b": rng.permutation(d["b"])}, None),
        _swapping(("a", "b")),
    ),
    "curve_xy": InputKind(lambda rng: {"x": np.r_[0, np.sort(rng.random(18)), 1], "y": rng.random(20)}),
    "counts": InputKind(_counts_make, _permuting("n00", "n01", "n10", "n11"), _swapping(("n01", "n10"))),
    "three_scores": InputKind(
        lambda rng: dict(zip(("loc", "shape", "cls"), rng.random((3, 30)), strict=True)),
        _permuting("loc", "shape", "cls"), _swapping(("loc", "shape")),
    ),
    "probability_pair": InputKind(
        _probability_pair_make, _permuting("pred_a", "pred_b", axis=-1), _swapping(("pred_a", "pred_b")),
        _mapping(_increasing_unit, "pred_a", "pred_b"), scale=_scaling("pred_a", "pred_b"),
        non_finite=_setting("pred_a", (0, 1)),
    ),
    "model_predictions": InputKind(
        _stability_make, _permuting("predictions", axis=-1), _reverse_models,
        _mapping(_increasing_unit, "predictions"), scale=_scaling("predictions"),
        non_finite=_setting("predictions", (0, 0, 1)),
    ),
    "instance_labels": InputKind(
        _instances_make, _permuting("predictions", "instance_labels", axis=-1),
        monotone=_mapping(_increasing_unit, "predictions"),
    ),
    "jaccard_values": InputKind(
        lambda rng: {"jaccard": np.where(rng.random(40) < 0.1, np.nan, np.round(rng.random(40), 2))},
        _permuting("jaccard"),
    ),
    "per_pair": InputKind(
        lambda rng: {"per_pair": np.where(rng.random((6, 10)) < 0.2, np.nan, rng.uniform(-1, 1, (6, 10)))
                     * np.r_[np.ones(9), np.nan]},
        _permuting("per_pair"),
    ),
    "bag_labels": InputKind(lambda rng: {"bag_labels": rng.integers(0, 2, 12)}, _permuting("bag_labels")),
    "instance_label_table": InputKind(
        lambda rng: {"instance_labels": np.where(
            np.arange(8)[:, None] % 3 == 0, np.nan, rng.integers(0, 2, (8, 10)).astype(np.float64))},
        _permuting("instance_labels"),
    ),
    "n_models": InputKind(lambda rng: {"n_models": 4}),
    "boxes": _box_kind("boxes"),
    "paired_boxes": _box_kind("boxes1", "boxes2"),
    "box_sets": _box_kind("boxes1", "boxes2", pairwise=True),
    "detection": InputKind(
        _detection_make, _detection_permute, _swapping(("predictions", "targets")),
        geometric=lambda d: _detection_boxes(d, _move_xywh), formats=_detection_formats,
    ),
    "multilabel_pred": InputKind(
        _multilabel_pred_make, _permuting("Y", "Y_pred"), _swapping(("Y", "Y_pred")),
        bad_labels=_setting("Y", (0, 0)),
    ),
    "multilabel_scores": InputKind(
        _multilabel_scores_make, _permuting("Y", "P"), monotone=_mapping(lambda p: np.exp(3 * p) - 7, "P"),
        scale=_scaling("P"), non_finite=_setting("P", (0, 0)), bad_labels=_setting("Y", (0, 0)),
    ),
    "label_matrix": InputKind(_label_matrix_make, _permuting("Y"), bad_labels=_setting("Y", (0, 0))),
    "split": InputKind(_split_make, _permuting("Y", "folds")),
    "segmentation_images": InputKind(
        _segmentation_images_make, _permuting("pred_masks", "true_masks"),
        _swapping(("pred_masks", "true_masks")),
    ),
    "segmentation_pair": InputKind(_segmentation_pair_make, swap=_swapping(("pred_mask", "true_mask"))),
    "mask": InputKind(lambda rng: {"binary_mask": rng.random((13, 17)) < 0.05}),
    "probabilities": InputKind(_probabilities_make, _permuting("probabilities")),
    "fold_scores": InputKind(
        lambda rng: {"first": _scores_make(rng), "second": _scores_make(rng)},
        _permuting("first", "second"), _swapping(("first", "second")),
    ),
    "scores": InputKind(lambda rng: {"scores": _scores_make(rng)}, _permuting("scores")),
    "fold_matrix": InputKind(
        lambda rng: {"fold_scores": rng.uniform(0.5, 1, (4, 5))}, _permuting("fold_scores")
    ),
    "binomial": InputKind(
        lambda rng: {"performance": rng.random(10), "n_items": rng.integers(1, 200, 10)},
        _permuting("performance", "n_items"),
    ),
    "two_strategies": InputKind(
        lambda rng: {k: _scores_make(rng) for k in ("first_a", "second_a", "first_b", "second_b")},
        _permuting("first_a", "second_a", "first_b", "second_b"),
        _swapping(("first_a", "first_b"), ("second_a", "second_b")),
    ),
    "estimate": InputKind(lambda rng: {"estimate": rng.random(), "variance": rng.random() / 100}),
    "decision_values": InputKind(  # point 0 of every run is under the mask
        _decision_values_make, _permuting("f", "y", "mask", axis=-1),
        monotone=_mapping(_increasing_keeping_zero, "f"), scale=_scaling("f"),
        non_finite=_setting("f", (0, 0)), bad_labels=_setting("y", (0, 0)),
    ),
    "nothing": InputKind(lambda rng: {}),
}


# --------------------------------------------------------------------------------------------------
# the specs
# --------------------------------------------------------------------------------------------------


class In(NamedTuple):
    """A keyword argument taken from the inputs, e.g. ``box_format=In("box_format")``."""

    key: str


def call(*keys: str, **kwargs):
    """Call with the inputs ``keys`` as positional arguments and ``kwargs`` (``In`` taken from the inputs)."""

    def run(fn, d: Inputs):
        kw = {k: d[v.key] if isinstance(v, In) else v for k, v in kwargs.items()}
        return fn(*(d[k] for k in keys), **kw)

    return run


BOXES = {"box_format": In("box_format")}
DETECTION = {"box_format": In("box_format"), "class_names": In("class_names")}


@dataclass(frozen=True)
class Degenerate:
    """A degenerate input and its documented policy: ``raises`` (a ``ValueError`` whose message matches),
    or ``check`` (a predicate of the result), optionally with a documented warning ``warns``. ``call``
    replaces the spec's call (another argument, e.g. ``undefined=np.nan``)."""

    what: str
    inputs: Inputs
    raises: str | None = None
    check: Callable[[Any], bool] | None = None
    warns: type[Warning] | None = None
    call: Callable | None = None


@dataclass(frozen=True)
class MetricSpec:
    """How to call one metric on inputs of ``kind`` and the properties it has (module docstring).

    ``order``: ``"invariant"``, an output axis that the permutation permutes (equivariant), or ``"pairwise"``
    (rows and columns permuted by the permutations of the two sets). ``scale``: ``True`` (invariant),
    ``False`` (a counterexample exists) or ``f(result, c)``, the result on the scores times ``c`` mapped back
    to the result on the scores. ``non_finite`` / ``bad_labels``: the message of the ``ValueError`` raised.
    ``views`` maps a property ("default", "order", "monotone", "scale", "bounds") to the part of the result
    it concerns (default: all of it; "scale" falls back on "monotone": a positive factor is a monotone
    map)."""

    kind: str
    call: Callable[[Callable, Inputs], Any]
    symmetric: bool | Callable | None = None
    order: str | int | None = None
    monotone: bool | None = None
    torch: str | None = None
    geometric: bool = False
    formats: bool = False
    image_boxes: bool = False
    bounds: tuple[float, float] | None = None
    finite_share: float = 1.0
    scale: bool | Callable | None = None
    non_finite: str | None = None
    bad_labels: str | None = None
    degenerate: tuple[Degenerate, ...] = ()
    contract: Callable[[Inputs, Any], None] | None = None
    views: dict[str, Callable] = dataclasses.field(default_factory=dict)
    tol: float = 1e-12

    def view(self, prop: str, result):
        fallback = self.views.get("monotone") if prop == "scale" else None
        f = self.views.get(prop, fallback or self.views.get("default"))
        return result if f is None else f(result)


def arr(*values, dtype=None) -> np.ndarray:
    return np.array(values, dtype=dtype)


# shared degenerate cases
ONE_CLASS = {"y": arr(1, 1, 1), "s": arr(0.1, 0.2, 0.3)}
RAISES_ONE_CLASS = Degenerate("one class only", ONE_CLASS, raises="both classes")
TIED = {"y": arr(1, 0, 0, 1, 0), "s": np.zeros(5)}  # every score equal: a ranking without skill
EMPTY_Y = {"Y": np.zeros((0, 4), dtype=int), "Y_pred": np.zeros((0, 4), dtype=int), "P": np.zeros((0, 4))}
RAISES_EMPTY = Degenerate("no examples", EMPTY_Y, raises="must not be empty")
NOTHING_1D = {"y": arr(0, 0), "y_pred": arr(0, 0)}
NOTHING_TRUE_OR_PREDICTED = {"Y": np.zeros((3, 2), dtype=int), "Y_pred": np.zeros((3, 2), dtype=int)}
NO_TABLE = {"n00": 0, "n01": 0, "n10": 0, "n11": 0}
RAISES_NO_TABLE = Degenerate("a table without instances (N = 0)", NO_TABLE, raises="at least one instance")
ALL_NEGATIVE = {"n00": 9, "n01": 0, "n10": 0, "n11": 0}  # both models predict no positive instance
ALL_POSITIVE = {"n00": 0, "n01": 0, "n10": 0, "n11": 9}
ONE_MODEL = {"predictions": np.full((1, 2, 5), 0.7)}
BAD_FOLDS = {"Y": np.eye(4, dtype=int), "folds": [arr(0, 1), arr(2, 9)], "n_samples": 4}
ONE_LABEL = {"Y": arr([1], [0], [1], [0]), "folds": arr(0, 0, 1, 1)}  # no label pair
RAISES_BAD_FOLDS = Degenerate("a fold index outside 0..N-1", BAD_FOLDS, raises="outside")
BOX_FORMAT = {"box_format": "xywh"}
ZERO_WIDTH = {"boxes1": arr([0, 0, 0, 1.0]), "boxes2": arr([0, 0, 1, 1.0]), **BOX_FORMAT}
RAISES_ZERO_WIDTH = Degenerate("a box of width 0", ZERO_WIDTH, raises="positive width")
NO_PREDICTIONS = {
    "predictions": [np.zeros((0, 5)), np.zeros((0, 5))],
    "targets": [arr([0, 0, 2, 2, 0.0]), np.zeros((0, 5))],
    "class_names": ("a", "b"),
    "box_format": "xywh",
}
NO_BOXES = {**NO_PREDICTIONS, "targets": [np.zeros((0, 5)), np.zeros((0, 5))]}
NO_IMAGES = {**NO_BOXES, "predictions": [], "targets": []}
ONE_CLASS_NAME = {**NO_PREDICTIONS, "class_names": ("a",)}
RAISES_ONE_CLASS_NAME = Degenerate("one class name (MCC needs two)", ONE_CLASS_NAME, raises="at least 2")
ONE_PAIR = {k: arr(0.7) for k in ("first", "second", "first_a", "second_a", "first_b", "second_b")}


PREVALENCE = Degenerate("every score equal: the prevalence", TIED, check=lambda v: v == pytest.approx(0.4))
NO_TRIAL = Degenerate("no trial", {"y": arr(0, 1), "S": np.zeros((0, 2))}, raises="at least one ROC")


def nan(value) -> bool:
    return bool(np.all(np.isnan(np.asarray(value, dtype=np.float64))))


GRID_11 = np.linspace(0, 1, 11)


def _rocs(d: Inputs) -> list:
    return [M.roc_curve(d["y"], s) for s in d["S"]]


def _matching(fn, d: Inputs):
    """Hungarian matching as comparable values: the matched (prediction, target) flat indices, the matched
    boxes themselves (coordinates and class, which do not depend on the order of images and boxes) and
    ω_cls."""
    mp, mt, w = fn(d["predictions"], d["targets"], box_format=d["box_format"], class_names=d["class_names"])

    def boxes(x):
        if isinstance(x, M.ImageBoxes):
            return x
        return M.ImageBoxes.from_per_image(x, box_format=d["box_format"])

    p, t = boxes(d["predictions"]), boxes(d["targets"])
    rows = sorted(
        (tuple(p.boxes[i].tolist()) + (int(p.labels[i]),), tuple(t.boxes[j].tolist()) + (int(t.labels[j]),))
        for i, j in zip(mp.tolist(), mt.tolist(), strict=True)
    )
    return {"pairs": sorted(zip(mp.tolist(), mt.tolist(), strict=True)), "boxes": rows, "class_weight": w}


def _matching_swapped(v):
    """The matching of the exchanged sets is the same matching: (prediction, target) pairs reversed."""
    pairs, class_weight = v
    return sorted((t, p) for p, t in pairs), class_weight


def _swap_pairwise_stability(result):
    """Scores of the models in reverse order: pair (i, j) of the reversed stack is (M-1-j, M-1-i)."""
    m = int(result.pairs.max()) + 1
    index = {tuple(pair): k for k, pair in enumerate(result.pairs.tolist())}
    rows = [index[(m - 1 - j, m - 1 - i)] for i, j in result.pairs.tolist()]
    return dataclasses.replace(result, scores={k: v[rows] for k, v in result.scores.items()})


def _swap_patch_evaluation(ev):
    """Prediction and truth exchanged: FP <-> FN, recall <-> precision, F unchanged."""
    return dataclasses.replace(
        ev, counts=ev.counts[..., [0, 2, 1, 3]], recall=ev.precision, precision=ev.recall,
        mean_recall=ev.mean_precision, mean_precision=ev.mean_recall,
        n_undefined_recall=ev.n_undefined_precision, n_undefined_precision=ev.n_undefined_recall,
    )


def _swap_counts(c: dict) -> dict:
    return {"tp": c["tp"], "fp": c["fn"], "fn": c["fp"], "tn": c["tn"]}


PRED_A = "pred_a must be finite"
PREDICTIONS = "predictions must be finite"


def _only(*keys: str):
    return lambda r: {k: r.scores[k] for k in keys}


def _without(*keys: str):
    return lambda result: {k: v for k, v in result.scores.items() if k not in keys}


def _rodeo_scores(r):
    subs = ("localization", "shape_matching", "classification", "total")
    return [getattr(r, s) for s in subs] + [r.per_class[s] for s in subs]


def _mean_curve(c):
    return (c.grid, c.mean, c.std, c.per_trial)


CURVE_INPUTS = {"scale": True, "non_finite": "y_score must be finite", "bad_labels": "y_true must hold binary labels"}
# PR-T counts at fixed thresholds of min-max-normalised scores: a normalised score that lands on a threshold (1.0 / 5.0
# = 0.2) can come out one ulp lower once the scores are scaled (0.19999999999999998), and the count at that threshold
# changes; exact only in rational arithmetic. Declared, so the check shows the counterexample.
PRT_INPUTS = {**CURVE_INPUTS, "scale": False}
BIN = {"order": "invariant", "torch": "grad", "bounds": (0.0, 1.0), **CURVE_INPUTS}  # binary labels and scores
ROC = {"order": "invariant", "monotone": True, "bounds": (0.0, 1.0), **CURVE_INPUTS}  # of the ROC curve of (y, s)
ML_LABELS = "must hold only 0 and 1"
ML_PRED = {"order": "invariant", "torch": "grad", "bounds": (0.0, 1.0), "bad_labels": ML_LABELS}  # predicted labels
ML_SCORES = {"order": "invariant", "monotone": True, "torch": "grad", "bounds": (0.0, 1.0),  # ... scores
             "scale": True, "non_finite": "[Pp] must be finite", "bad_labels": ML_LABELS}
# torch="tensor" (TABLE, SPLIT and a few specs below) where every input is integer or boolean: only a floating
# tensor can require grad, so "grad" would test nothing more (test_tensor_declared_only_where_grad_cannot_be)
TABLE = {"symmetric": True, "order": 0, "torch": "tensor"}  # a score of 2x2 agreement tables (integer counts)
PAIRED = {"order": 0, "torch": "grad", "geometric": True, "formats": True}  # box i vs box i of another set
PAIRWISE = {**PAIRED, "symmetric": lambda m: m.T, "order": "pairwise"}  # every box vs every box
DET = {"order": "invariant", "torch": "grad", "geometric": True, "formats": True, "image_boxes": True}
MAPS = {"order": "invariant", "torch": "grad"}  # per bag, over the instances
FOLD = {"order": "invariant", "torch": "grad"}
SPLIT = {"order": "invariant", "torch": "tensor"}  # integer labels and fold numbers only
INDICATOR = {"order": "invariant", "torch": "grad", "degenerate": (RAISES_EMPTY,),  # of a label matrix
             "bad_labels": ML_LABELS}
UNDEFINED = M.UndefinedMetricWarning

REGISTRY: dict[str, MetricSpec] = {
    # ---------------------------------------------------------------------------------------------- curves
    "roc_curve": MetricSpec(
        "binary", call("y", "s"), **BIN, monotone=True, degenerate=(RAISES_ONE_CLASS,),
        views={"monotone": lambda r: (r.fpr, r.tpr, r.tp, r.fp), "bounds": lambda r: (r.fpr, r.tpr)},
    ),
    "roc_auc": MetricSpec(
        "binary", call("y", "s"), **BIN, monotone=True,
        degenerate=(
            RAISES_ONE_CLASS,
            Degenerate("one class, undefined=np.nan", ONE_CLASS, check=nan,
                       call=call("y", "s", undefined=np.nan)),
            Degenerate("every score equal: AUC 1/2", TIED, check=lambda v: v == 0.5),
        ),
    ),
    "pr_curve": MetricSpec(
        "binary", call("y", "s"), **BIN, monotone=True, degenerate=(RAISES_ONE_CLASS,),
        views={"monotone": lambda r: (r.recall, r.precision), "bounds": lambda r: (r.recall, r.precision)},
    ),
    "pr_t_curve": MetricSpec(
        "binary", call("y", "s"), **{**BIN, **PRT_INPUTS}, monotone=False,
        degenerate=(RAISES_ONE_CLASS, Degenerate("constant scores", TIED, raises="constant")),
        views={"bounds": lambda c: (c.precision, c.recall, c.fpr)},
    ),
    "pr_t_auc": MetricSpec(
        "binary", lambda fn, d: fn(M.pr_t_curve(d["y"], d["s"])), order="invariant", monotone=False,
        bounds=(0.0, 1.0), **PRT_INPUTS,
        degenerate=(Degenerate(
            "fewer than 101 thresholds (Algorithm 2)", _binary_make(np.random.default_rng(0)), raises="101",
            call=lambda fn, d: fn(M.pr_t_curve(d["y"], d["s"], n_thresholds=11)),
        ),),
    ),
    "interpolated_pr_points": MetricSpec(
        "binary", lambda fn, d: fn(M.roc_curve(d["y"], d["s"])), **ROC,
        degenerate=(Degenerate(
            "precision 0/0 at recall 0 is the next point's",
            {"y": arr(1, 0, 1, 1, 0), "s": arr(5, 4, 3, 2, 1)},
            check=lambda r: not np.isnan(r[1]).any() and r[1][0] == r[1][1],
        ),),
    ),
    "pr_auc_roc_interpolated": MetricSpec(
        "binary", lambda fn, d: fn(M.roc_curve(d["y"], d["s"])), **ROC,
        degenerate=(PREVALENCE,),
    ),
    "linear_pr_auc": MetricSpec(
        "binary", lambda fn, d: fn(M.pr_curve(d["y"], d["s"])), **ROC,
        degenerate=(PREVALENCE,),
    ),
    "mean_pr_auc": MetricSpec(
        "binary_trials", lambda fn, d: fn(_rocs(d)), **ROC,
        degenerate=(
            NO_TRIAL,
            Degenerate("one trial, ddof=1: std NaN", {"y": arr(0, 1), "S": arr([0.1, 0.9])},
                       check=lambda r: r[0] == 1.0 and nan(r[1]), call=lambda fn, d: fn(_rocs(d), ddof=1)),
        ),
    ),
    "mean_pr_curve": MetricSpec(
        "binary_trials", lambda fn, d: fn(_rocs(d)), **ROC, views={"default": _mean_curve},
        degenerate=(NO_TRIAL,),
    ),
    "mean_roc_curve": MetricSpec(
        "binary_trials", lambda fn, d: fn(_rocs(d)), **ROC, views={"default": _mean_curve},
        degenerate=(NO_TRIAL,),
    ),
    "mean_prt_curves": MetricSpec(
        "binary_trials", lambda fn, d: fn([M.pr_t_curve(d["y"], s) for s in d["S"]]), order="invariant",
        monotone=False, bounds=(0.0, 1.0), **PRT_INPUTS,
        degenerate=(
            Degenerate("no trial", {}, raises="at least one PR-T", call=lambda fn, d: fn([])),
            Degenerate(
                "different thresholds", {"y": arr(0, 1, 1), "s": arr(0.1, 0.2, 0.9)},
                raises="same thresholds",
                call=lambda fn, d: fn([M.pr_t_curve(d["y"], d["s"], n_thresholds=n) for n in (101, 5)]),
            ),
        ),
    ),
    "confusion_rates": MetricSpec(
        "counts", call("n11", "n10", "n01", "n00"), symmetric=False, order=0, torch="tensor",  # integer counts
        bounds=(0.0, 1.0), finite_share=0.9,
        degenerate=(
            Degenerate("zero denominators: NaN, never 0 or 1", {"n11": 0, "n10": 0, "n01": 0, "n00": 4},
                       check=lambda r: nan([r.recall, r.precision, r.f_measure]) and r.fpr == 0),
            Degenerate("P = R = 0: F = 0", {"n11": 0, "n10": 2, "n01": 3, "n00": 4},
                       check=lambda r: r.f_measure == 0),
            Degenerate("a negative count", {"n11": -1, "n10": 0, "n01": 0, "n00": 0}, raises="tp"),
        ),
    ),
    "argmax_precision_ttest": MetricSpec(
        "two_groups", call("a", "b"), symmetric=lambda v: (-v[0], v[1]), order="invariant", torch="grad",
        bounds=(0.0, 1.0), views={"default": lambda r: (r.statistic, r.pvalue), "bounds": lambda r: r.pvalue},
        degenerate=(
            Degenerate("a NaN precision", {"a": arr(0.5, 0.6), "b": arr(0.5, np.nan)}, raises="contains NaN"),
            Degenerate("one run", {"a": arr(0.5, 0.6), "b": arr(0.5)}, raises="at least 2 runs"),
        ),
    ),
    # ------------------------------------------------------------------------------------------ segmentation
    "tile_confusion_counts": MetricSpec(
        "segmentation_pair", call("pred_mask", "true_mask", tile_size=3, positive_class=1),
        symmetric=lambda c: c[[0, 2, 1, 3]], torch="tensor", bounds=(0, 30),  # integer label maps
        contract=lambda d, c: c.sum() == 30,  # ceil(13 / 3) * ceil(17 / 3) tiles, partial edge tiles kept
        degenerate=(
            Degenerate("tile size 0", _segmentation_pair_make(np.random.default_rng(0)), raises="tile_size",
                       call=call("pred_mask", "true_mask", tile_size=0, positive_class=1)),
            Degenerate("a tile larger than the image: one image-level decision",
                       {"pred_mask": np.eye(4, dtype=int), "true_mask": np.zeros((4, 4), dtype=int)},
                       check=lambda c: c.tolist() == [0, 1, 0, 0],
                       call=call("pred_mask", "true_mask", tile_size=10, positive_class=1)),
        ),
    ),
    "false_positives_in_true_tiles": MetricSpec(
        # swapped, it counts the false negatives in predicted tiles: not symmetric
        "segmentation_pair", call("pred_mask", "true_mask", tile_size=3, positive_class=1), symmetric=False,
        torch="tensor", bounds=(0, 13 * 17),  # integer label maps; pixel counts of a 13 x 17 image
        contract=lambda d, c: 0 <= c[1] <= c[0],  # the ones in true tiles are some of the false positives
        degenerate=(
            Degenerate("tile size 0", _segmentation_pair_make(np.random.default_rng(0)), raises="tile_size",
                       call=call("pred_mask", "true_mask", tile_size=0, positive_class=1)),
            Degenerate("a tile larger than the image holding the class: every false positive is in it",
                       {"pred_mask": np.eye(4, dtype=int), "true_mask": np.pad(np.ones((1, 1), int), ((0, 3), (3, 0)))},
                       check=lambda c: c == (4, 4),
                       call=call("pred_mask", "true_mask", tile_size=10, positive_class=1)),
            Degenerate("pixel level: no false positive is in a true tile",
                       _segmentation_pair_make(np.random.default_rng(0)), check=lambda c: c[0] > 0 and c[1] == 0,
                       call=call("pred_mask", "true_mask", tile_size=1, positive_class=1)),
        ),
    ),
    "patch_based_evaluation": MetricSpec(
        "segmentation_images", call("pred_masks", "true_masks", tile_size=3),
        symmetric=_swap_patch_evaluation, order="invariant", torch="tensor",  # integer label maps
        bounds=(0.0, 1.0),
        views={
            "order": lambda e: (e.mean_recall, e.mean_precision, e.mean_f_measure, e.n_undefined_recall),
            "bounds": lambda e: (e.mean_recall, e.mean_precision, e.mean_f_measure),
        },
        degenerate=(
            Degenerate("a class absent from every image: mean NaN, every image counted",
                       {"pred_masks": [np.zeros((4, 4), int)] * 2, "true_masks": [np.zeros((4, 4), int)] * 2},
                       check=lambda e: nan(e.mean_recall[2]) and e.n_undefined_recall[2] == 2),
            Degenerate("no image", {"pred_masks": [], "true_masks": []}, raises="pred_masks"),
        ),
    ),
    "central_region_class_max": MetricSpec(
        "probabilities", call("probabilities", central_size=5), order=0, torch="grad", bounds=(0.0, 1.0),
        degenerate=(Degenerate("a central region larger than the patch",
                               {"probabilities": np.ones((1, 2, 9, 9))},
                               raises="central_size", call=call("probabilities", central_size=10)),),
    ),
    # ------------------------------------------------------------------------------------------- box overlap
    "paired_iou": MetricSpec(
        "paired_boxes", call("boxes1", "boxes2", **BOXES), symmetric=True, **PAIRED, bounds=(0.0, 1.0),
        degenerate=(RAISES_ZERO_WIDTH, Degenerate(
            "no boxes: an empty result",
            {"boxes1": np.zeros((0, 4)), "boxes2": np.zeros((0, 4)), **BOX_FORMAT},
            check=lambda v: v.shape == (0,))),
    ),
    "paired_generalized_iou": MetricSpec(
        "paired_boxes", call("boxes1", "boxes2", **BOXES), symmetric=True, **PAIRED, bounds=(-1.0, 1.0),
        degenerate=(RAISES_ZERO_WIDTH,),
    ),
    "paired_centered_iou": MetricSpec(
        "paired_boxes", call("boxes1", "boxes2", **BOXES), symmetric=True, **PAIRED, bounds=(0.0, 1.0),
        degenerate=(RAISES_ZERO_WIDTH,),
    ),
    "pairwise_iou": MetricSpec(
        "box_sets", call("boxes1", "boxes2", **BOXES), **PAIRWISE, bounds=(0.0, 1.0),
        degenerate=(RAISES_ZERO_WIDTH, Degenerate(
            "an empty set: an (0, M) matrix", {**ZERO_WIDTH, "boxes1": np.zeros((0, 4))},
            check=lambda v: v.shape == (0, 1))),
    ),
    "pairwise_generalized_iou": MetricSpec(
        "box_sets", call("boxes1", "boxes2", **BOXES), **PAIRWISE, bounds=(-1.0, 1.0),
        degenerate=(RAISES_ZERO_WIDTH,),
    ),
    # ---------------------------------------------------------------------------------------------- detection
    "localization_similarity": MetricSpec(  # offsets in units of the *target* size: not symmetric
        "paired_boxes", call("boxes1", "boxes2", **BOXES), symmetric=False, **PAIRED, bounds=(0.0, 1.0),
        degenerate=(RAISES_ZERO_WIDTH,),
    ),
    "binary_mcc_from_counts": MetricSpec(
        "counts", call("n11", "n10", "n01", "n00"), **TABLE, bounds=(-1.0, 1.0),
        degenerate=(Degenerate("zero denominator: 0", {"n11": 5, "n10": 0, "n01": 0, "n00": 0},
                               check=lambda v: v == 0.0),),
    ),
    "rodeo_harmonic_mean": MetricSpec(
        "three_scores", call("loc", "shape", "cls"), symmetric=True, order=0, torch="grad",
        bounds=(0.0, 1.0 + 1e-6),
        degenerate=(
            Degenerate("a zero sub-score with eps=0: 0", {"loc": 0.0, "shape": 1.0, "cls": 1.0},
                       check=lambda v: v == 0.0, call=call("loc", "shape", "cls", eps=0.0)),
            Degenerate("a NaN sub-score: NaN", {"loc": np.nan, "shape": 1.0, "cls": 1.0}, check=nan),
            Degenerate("eps < 0", {"loc": 1.0, "shape": 1.0, "cls": 1.0}, raises="eps",
                       call=call("loc", "shape", "cls", eps=-1.0)),
        ),
    ),
    "class_weight_for_matching": MetricSpec(  # max(0, MCC) of the image-level class matrices: symmetric
        "detection", call("predictions", "targets", **DETECTION), symmetric=True, **DET, bounds=(0.0, 1.0),
        degenerate=(Degenerate("no images: undefined MCC gives 0", NO_IMAGES, check=lambda w: w == 0.0),
                    RAISES_ONE_CLASS_NAME),
    ),
    "hungarian_box_matching": MetricSpec(
        "detection", _matching, symmetric=_matching_swapped, **DET,
        views={"default": lambda v: (v["pairs"], v["class_weight"]),
               "order": lambda v: (v["boxes"], v["class_weight"])},
        degenerate=(Degenerate("no predictions: no pairs", NO_PREDICTIONS, check=lambda v: v["pairs"] == []),
                    RAISES_ONE_CLASS_NAME),
    ),
    "iou_threshold_counts": MetricSpec(
        "detection", call("predictions", "targets", **DETECTION, iou_threshold=0.3), symmetric=_swap_counts,
        **DET, bounds=(0, 100),
        degenerate=(Degenerate("no predictions: every target a FN", NO_PREDICTIONS,
                               check=lambda c: c["fn"].tolist() == [1, 0] and c["tn"].tolist() == [1, 2],
                               call=call("predictions", "targets", **DETECTION, iou_threshold=0.5)),),
    ),
    "accuracy_at_iou": MetricSpec(  # (TP + TN) / all cells; the greedy matching is role-free (no IoU ties)
        "detection", call("predictions", "targets", **DETECTION, iou_threshold=0.3),
        symmetric=lambda r: dataclasses.replace(r, counts=_swap_counts(r.counts)), **DET, bounds=(0.0, 1.0),
        views={"bounds": lambda r: (r.per_class, r.mean)},
        degenerate=(Degenerate("no images: NaN", NO_IMAGES,
                               check=lambda r: nan(r.mean) and r.n_undefined == 2,
                               call=call("predictions", "targets", **DETECTION, iou_threshold=0.5)),),
    ),
    "average_precision_at_iou": MetricSpec(  # confidences belong to the predictions: not symmetric
        "detection", call("predictions", "targets", **DETECTION, iou_threshold=0.3), symmetric=False, **DET,
        bounds=(0.0, 1.0), finite_share=0.9, views={"bounds": lambda r: (r.per_class, r.mean)},
        degenerate=(Degenerate(
            "a class without targets: NaN, excluded; with targets but no predictions: 0", NO_PREDICTIONS,
            check=lambda r: r.per_class[0] == 0 and nan(r.per_class[1]) and r.n_undefined == 1,
            call=call("predictions", "targets", **DETECTION, iou_threshold=0.5)),),
    ),
    "detection_mean_average_precision": MetricSpec(
        "detection", call("predictions", "targets", **DETECTION), symmetric=False, **DET, bounds=(0.0, 1.0),
        finite_share=0.9, views={"bounds": lambda r: (r.per_class, r.mean)},
        degenerate=(Degenerate(
            "a class without targets: NaN, excluded; with targets but no predictions: 0", NO_PREDICTIONS,
            check=lambda r: r.per_class[0] == 0 and nan(r.per_class[1]) and r.mean == 0),),
    ),
    "robust_detection_outcome": MetricSpec(  # localisation in units of the target size: not symmetric
        "detection", call("predictions", "targets", **DETECTION), symmetric=False, **DET,
        bounds=(0.0, 1.0 + 1e-6), finite_share=0.8, views={"bounds": _rodeo_scores},
        degenerate=(
            Degenerate("no predictions: every score 0", NO_PREDICTIONS, warns=UserWarning,
                       check=lambda r: _rodeo_scores(r)[:4] == [0.0] * 4 and r.n_missed == 1),
            Degenerate("no boxes at all: NaN", NO_BOXES, warns=UserWarning,
                       check=lambda r: nan(_rodeo_scores(r)[:4])),
            RAISES_ONE_CLASS_NAME,
        ),
    ),
}

Y_PRED_CASES = {  # label 0 never true, label 1 never predicted, label 2 neither: 0/0 in every convention
    "Y": arr([0, 1, 0, 1], [0, 1, 0, 0], [0, 0, 0, 1]),
    "Y_pred": arr([1, 0, 0, 1], [0, 0, 0, 1], [1, 0, 0, 0]),
}
Y_SCORE_CASES = {  # label 0 without positives, row 2 without labels
    "Y": arr([0, 1, 1], [0, 0, 1], [0, 0, 0], [0, 1, 0]),
    "P": arr([0.2, 0.9, 0.8], [0.5, 0.1, 0.7], [0.3, 0.3, 0.3], [0.1, 0.6, 0.2]),
}


_A = 0.7
ADJACENT_DOUBLES = {  # 0.5 * (a + b) rounds to a: a cut "a > t" at the midpoint predicts a negative
    "Y": arr([1, 1], [0, 0], [0, 1]),
    "P": arr([_A, 0.3], [np.nextafter(_A, 0), np.nextafter(0.3, 1)], [0.1, np.nextafter(np.nextafter(0.3, 1), 1)]),
}
HUGE_SCORES = {"Y": arr([1], [0], [1], [0]), "P": arr([1.7e308], [1.6e308], [1.65e308], [-1.7e308])}  # a + b = inf


def _attains_the_best_cut(Y, P, t) -> bool:
    """``binarize(P, t)`` reaches, on every label with a positive, the largest F1 of any cut of its scores."""
    Y, P = np.asarray(Y), np.asarray(P)
    for k in range(Y.shape[1]):
        if not Y[:, k].any():
            continue
        y, p = Y[:, k].astype(bool), P[:, k]
        best = max(2 * np.sum(y & c) / (y.sum() + c.sum()) for c in [p >= v for v in np.unique(p)])
        got = M.binarize(P, t)[:, k]
        if 2 * np.sum(y & got) / (y.sum() + got.sum()) != best:
            return False
    return True


def _ml_undefined(check, call_=None, warns=UNDEFINED):
    what = "0/0 items: NaN, excluded and counted"
    return Degenerate(what, Y_PRED_CASES, check=check, warns=warns, call=call_)


def _ml_scores_undefined(check, call_=None, warns=UNDEFINED):
    what = "a label without positives, a row without labels"
    return Degenerate(what, Y_SCORE_CASES, check=check, warns=warns, call=call_)


COUNTED = call("Y", "Y_pred", return_count=True)
COUNTED_P = call("Y", "P", return_count=True)

REGISTRY |= {
    # ------------------------------------------------------------------------------------------- multi-label
    "binary_error_rate": MetricSpec(
        "binary_pred", call("y", "y_pred"), symmetric=True, **ML_PRED,
        degenerate=(Degenerate("no examples", {"y": arr(), "y_pred": arr()}, raises="must not be empty"),),
    ),
    "binary_f1": MetricSpec(
        "binary_pred", call("y", "y_pred"), symmetric=True, **ML_PRED,
        degenerate=(
            Degenerate("nothing true, nothing predicted: NaN", NOTHING_1D, check=nan),
            Degenerate("... with mldr's rule: 1", NOTHING_1D, check=lambda v: v == 1.0,
                       call=call("y", "y_pred", zero_division="diagnose")),
        ),
    ),
    "binary_average_precision": MetricSpec(
        "binary", call("y", "s"), **ML_SCORES,
        degenerate=(Degenerate("no positive: NaN", {"y": arr(0, 0), "s": arr(0.1, 0.2)}, check=nan),),
    ),
    "binary_auc": MetricSpec(
        "binary", call("y", "s"), **ML_SCORES,
        degenerate=(Degenerate("one class only: NaN", ONE_CLASS, check=nan),),
    ),
    "example_average": MetricSpec(
        "multilabel_pred", lambda fn, d: fn(M.binary_f1, d["Y"], d["Y_pred"]), symmetric=True, **ML_PRED,
        degenerate=(Degenerate("every row undefined: NaN, counted", NOTHING_TRUE_OR_PREDICTED,
                               warns=UNDEFINED, check=lambda r: nan(r[0]) and r[1] == 3,
                               call=lambda fn, d: fn(M.binary_f1, d["Y"], d["Y_pred"], return_count=True)),),
    ),
    "macro_average": MetricSpec(
        "multilabel_pred", lambda fn, d: fn(M.binary_f1, d["Y"], d["Y_pred"]), symmetric=True, **ML_PRED,
        degenerate=(Degenerate("every label undefined: NaN, counted", NOTHING_TRUE_OR_PREDICTED,
                               warns=UNDEFINED, check=lambda r: nan(r[0]) and r[1] == 2,
                               call=lambda fn, d: fn(M.binary_f1, d["Y"], d["Y_pred"], return_count=True)),),
    ),
    "micro_average": MetricSpec(
        "multilabel_pred", lambda fn, d: fn(M.binary_f1, d["Y"], d["Y_pred"]), symmetric=True, **ML_PRED,
        degenerate=(Degenerate("nothing true, nothing predicted: NaN", NOTHING_TRUE_OR_PREDICTED, check=nan,
                               call=lambda fn, d: fn(M.binary_f1, d["Y"], d["Y_pred"])),),
    ),
    "hamming_loss": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=True, **ML_PRED, degenerate=(RAISES_EMPTY,),
    ),
    "subset_accuracy": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=True, **ML_PRED, degenerate=(RAISES_EMPTY,),
    ),
    "per_label_precision": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED, finite_share=0.8,
        degenerate=(_ml_undefined(lambda v: nan(v[[1, 2]]) and v[0] == 0 and v[3] == 0.5, warns=None),
                    RAISES_EMPTY),
    ),
    "per_label_recall": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED, finite_share=0.8,
        degenerate=(_ml_undefined(lambda v: nan(v[[0, 2]]) and v[1] == 0 and v[3] == 0.5, warns=None),),
    ),
    "per_label_f1": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=True, **ML_PRED, finite_share=0.8,
        degenerate=(_ml_undefined(lambda v: nan(v[2]) and v[0] == v[1] == 0, warns=None),),
    ),
    "precision_micro": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED,
        degenerate=(Degenerate("nothing predicted: NaN, counted", NOTHING_TRUE_OR_PREDICTED, warns=UNDEFINED,
                               check=lambda r: nan(r[0]) and r[1] == 1, call=COUNTED),),
    ),
    "recall_micro": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED,
        degenerate=(Degenerate("nothing true: NaN, counted", NOTHING_TRUE_OR_PREDICTED, warns=UNDEFINED,
                               check=lambda r: nan(r[0]) and r[1] == 1, call=COUNTED),),
    ),
    "f1_micro": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=True, **ML_PRED,
        degenerate=(Degenerate("nothing true, nothing predicted: NaN, counted", NOTHING_TRUE_OR_PREDICTED,
                               warns=UNDEFINED, check=lambda r: nan(r[0]) and r[1] == 1, call=COUNTED),),
    ),
    "precision_macro": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED,
        degenerate=(_ml_undefined(lambda r: r == (0.25, 2), COUNTED),),  # labels 0, 3: (0 + 0.5) / 2
    ),
    "recall_macro": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED,
        degenerate=(_ml_undefined(lambda r: r == (0.25, 2), COUNTED),),
    ),
    "f1_macro": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=True, **ML_PRED,
        degenerate=(_ml_undefined(lambda r: r == (1 / 6, 1), COUNTED),),  # (0 + 0 + 1/2) / 3, not label 2
    ),
    "example_precision": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED,
        degenerate=(Degenerate("rows with nothing predicted: NaN, counted", NOTHING_TRUE_OR_PREDICTED,
                               warns=UNDEFINED, check=lambda r: nan(r[0]) and r[1] == 3, call=COUNTED),),
    ),
    "example_recall": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=False, **ML_PRED,
        degenerate=(Degenerate("rows without labels: NaN, counted", NOTHING_TRUE_OR_PREDICTED,
                               warns=UNDEFINED, check=lambda r: nan(r[0]) and r[1] == 3, call=COUNTED),),
    ),
    "example_f1": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=True, **ML_PRED,
        degenerate=(Degenerate("rows with nothing true or predicted: NaN, counted", NOTHING_TRUE_OR_PREDICTED,
                               warns=UNDEFINED, check=lambda r: nan(r[0]) and r[1] == 3, call=COUNTED),),
    ),
    "example_accuracy": MetricSpec(
        "multilabel_pred", call("Y", "Y_pred"), symmetric=True, **ML_PRED,
        degenerate=(Degenerate("rows with nothing true or predicted: NaN, counted", NOTHING_TRUE_OR_PREDICTED,
                               warns=UNDEFINED, check=lambda r: nan(r[0]) and r[1] == 3, call=COUNTED),),
    ),
    "per_label_auc": MetricSpec(
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda v: nan(v[0]) and not np.isnan(v[1:]).any(), warns=None),),
    ),
    "macro_auc": MetricSpec(
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda r: r[1] == 1 and not nan(r[0]), COUNTED_P),),
    ),
    "per_label_average_precision": MetricSpec(
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda v: nan(v[0]) and not np.isnan(v[1:]).any(), warns=None),),
    ),
    "mean_average_precision": MetricSpec(
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda r: r[1] == 1 and not nan(r[0]), COUNTED_P),),
    ),
    "example_average_precision": MetricSpec(
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda r: r[1] == 1 and not nan(r[0]), COUNTED_P),),
    ),
    "example_auc": MetricSpec(  # row 2 has no positive label
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda r: r[1] == 1 and not nan(r[0]), COUNTED_P),),
    ),
    "one_error": MetricSpec(
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda r: r == (0.0, 1), COUNTED_P),),
    ),
    "coverage_error": MetricSpec(
        "multilabel_scores", call("Y", "P"), **{**ML_SCORES, "bounds": (1.0, 6.0)},
        degenerate=(_ml_scores_undefined(lambda r: r[1] == 1 and not nan(r[0]), COUNTED_P),),
    ),
    "ranking_loss": MetricSpec(
        "multilabel_scores", call("Y", "P"), **ML_SCORES,
        degenerate=(_ml_scores_undefined(lambda r: r[1] == 1 and not nan(r[0]), COUNTED_P),),
    ),
    "f1_optimal_thresholds": MetricSpec(  # midpoints between scores: a monotone map moves them, a factor scales them
        "multilabel_scores", call("Y", "P"),
        **{**ML_SCORES, "monotone": False, "bounds": (-1e-12, 1.0), "scale": lambda t, c: t / c},
        contract=lambda d, t: _attains_the_best_cut(d["Y"], d["P"], t),
        degenerate=(
            _ml_scores_undefined(lambda v: nan(v[0]) and not np.isnan(v[1:]).any(), warns=None),
            Degenerate("adjacent doubles: the cut between them is reproduced", ADJACENT_DOUBLES,
                       check=lambda t: _attains_the_best_cut(ADJACENT_DOUBLES["Y"], ADJACENT_DOUBLES["P"], t)),
            Degenerate("scores near the largest double: no overflow", HUGE_SCORES,
                       check=lambda t: _attains_the_best_cut(HUGE_SCORES["Y"], HUGE_SCORES["P"], t)),
        ),
    ),
    "multilabel_metrics": MetricSpec(  # bipartitions at the threshold 0.5: not monotone invariant
        "multilabel_scores", call("Y", "P"), **{**ML_SCORES, "monotone": False, "scale": False},
        views={"bounds": lambda m: [v for k, v in m.items() if not k.startswith(("n_", "coverage"))]},
        degenerate=(_ml_scores_undefined(lambda m: m["n_undefined_macro_auc"] == 1
                                         and m["n_undefined_example_ap"] == 1, warns=None),),
    ),
    # -------------------------------------------------------------------------------------------- indicators
    "label_counts": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0, 50),
    ),
    "label_cardinality": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0, 5),
    ),
    "label_density": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0, 1),
    ),
    "labelset_counts": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(1, 50),
        views={"bounds": lambda r: r[1]},
        contract=lambda d, r: r[1].sum() == len(d["Y"]) and np.all(np.diff(r[1]) <= 0),  # most frequent first
    ),
    "label_diversity": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(1, 50),
    ),
    "proportion_distinct_labelsets": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0.02, 1),
    ),
    "proportion_most_frequent_labelset": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0.02, 1),
    ),
    "labels_per_example_histogram": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0, 50),
        contract=lambda d, h: h.sum() == len(d["Y"]) and h.shape == (6,),
    ),
    "multilabel_indicators": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0, 1),
        views={"bounds": lambda r: (r["LDens"], r["PLDiv"], r["PMax"])},
    ),
    "label_pair_counts": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0, 50),
        contract=lambda d, c: np.array_equal(c, c.T),
    ),
    "label_correlation": MetricSpec(
        "label_matrix", call("Y"), order="invariant", torch="grad", bad_labels=ML_LABELS, bounds=(-1, 1),
        degenerate=(Degenerate("a constant label: NaN row and column", {"Y": arr([1, 0], [1, 1], [1, 0])},
                               warns=UNDEFINED, check=lambda c: nan([c[0], c[:, 0]]) and c[1, 1] == 1),),
    ),
    "pairwise_chi2": MetricSpec(
        "label_matrix", call("Y"), order="invariant", torch="grad", bad_labels=ML_LABELS, bounds=(0, 50),
        degenerate=(Degenerate("a constant label: NaN", {"Y": arr([1, 0], [1, 1], [1, 0])},
                               check=lambda c: nan(c[0]) and c[1, 1] == 3),),
    ),
    "mean_pairwise_chi2": MetricSpec(
        "label_matrix", call("Y"), **INDICATOR, bounds=(0, 50),
    ),
    "conditional_cooccurrence": MetricSpec(
        "label_matrix", call("Y"), order="invariant", torch="grad", bad_labels=ML_LABELS, bounds=(0, 1),
        degenerate=(Degenerate("a label without positives: NaN row", {"Y": arr([0, 1], [0, 1])},
                               warns=UNDEFINED, check=lambda m: nan(m[0]) and m[1].tolist() == [0, 1]),),
    ),
    # ----------------------------------------------------------------------------------------- split quality
    "fold_label_counts": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, 40), degenerate=(RAISES_BAD_FOLDS,),
    ),
    "fold_label_pair_counts": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, 40), degenerate=(RAISES_BAD_FOLDS,),
    ),
    "label_distribution": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, math.inf),
        degenerate=(RAISES_BAD_FOLDS, Degenerate(
            "a label in every example of a fold: the infinite odds are excluded and counted",
            {"Y": arr([1], [1], [0], [1]), "folds": arr(0, 0, 1, 1)}, warns=UNDEFINED,  # fold 1: |1/1 - 3/1|
            check=lambda r: r == (2.0, 1), call=call("Y", "folds", return_count=True))),
    ),
    "label_pair_distribution": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, math.inf),
        degenerate=(RAISES_BAD_FOLDS, Degenerate(
            "a label pair in every example of a fold: excluded and counted",
            {"Y": arr([1, 1], [1, 1], [0, 0], [1, 1]), "folds": arr(0, 0, 1, 1)}, warns=UNDEFINED,
            check=lambda r: r == (2.0, 1), call=call("Y", "folds", return_count=True)),
            Degenerate("one label: no label pair, NaN", ONE_LABEL, check=nan)),
    ),
    "example_distribution": MetricSpec(
        "split", call("folds", "n_samples"), **SPLIT, bounds=(0, 40),
        degenerate=(Degenerate("desired sizes of the wrong length", {"folds": arr(0, 1, 1), "n_samples": 3},
                               raises="desired_sizes",
                               call=call("folds", "n_samples", desired_sizes=[1] * 3)),),
    ),
    "folds_missing_a_label": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, 5), degenerate=(RAISES_BAD_FOLDS,),
    ),
    "fold_label_zeros": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, 20), degenerate=(RAISES_BAD_FOLDS,),
    ),
    "fold_label_pair_zeros": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, 30),
        degenerate=(RAISES_BAD_FOLDS, Degenerate("one label, the code's proportion: NaN", ONE_LABEL,
                                                 check=nan, call=call("Y", "folds", variant="code"))),
    ),
    "split_quality_measures": MetricSpec(
        "split", call("Y", "folds"), **SPLIT, bounds=(0, math.inf),
        degenerate=(RAISES_BAD_FOLDS, Degenerate(
            "a label in every example of a fold: counted",  # label 0: |1/1 - 3/1|; label 1: 2/3, 1/3
            {"Y": arr([1, 0], [1, 1], [0, 0], [1, 0]), "folds": arr(0, 0, 1, 1)},
            check=lambda q: q["LD"] == pytest.approx(1.25) and q["n_undefined_LD"] == 1)),
    ),
}


def _count_nan(table: Inputs, what: str) -> Degenerate:
    return Degenerate(f"{what}: NaN (0/0)", table, check=nan)


CONSTANT_MAP = _count_nan({"pred_a": arr(0.3, 0.3, 0.3), "pred_b": arr(0.1, 0.5, 0.2)}, "a constant map")


_N_MAX = 4 * 14  # the largest table of the counts kind


def _every_decision_value_score(fn, d: Inputs) -> dict:
    return {m: fn(d["f"], d["y"], d["mask"], m) for m in M.DECISION_VALUE_SCORES}


REGISTRY |= {
    # ---------------------------------------------------------------------------------------------- stability
    "positive_jaccard": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(0, 1), finite_share=0.9,
        degenerate=(RAISES_NO_TABLE, _count_nan(ALL_NEGATIVE, "no positive instance")),
    ),
    "positive_overlap": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(0, 1), finite_share=0.9,
        degenerate=(RAISES_NO_TABLE, _count_nan({**NO_TABLE, "n00": 5, "n01": 3}, "a model, no positive")),
    ),
    "adjusted_positive_overlap": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(1 - _N_MAX, 1), finite_share=0.9,
        degenerate=(RAISES_NO_TABLE, _count_nan({**NO_TABLE, "n10": 3, "n11": 4}, "a model all positive")),
    ),
    "heuristic_adjusted_positive_jaccard": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(0, 1), finite_share=0.9,
        degenerate=(RAISES_NO_TABLE, _count_nan(ALL_POSITIVE, "both models all positive")),
    ),
    "adjusted_positive_jaccard": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(-1 / 3, 1), finite_share=0.9,
        degenerate=(
            RAISES_NO_TABLE, _count_nan(ALL_NEGATIVE, "both models all negative"),
            Degenerate("exactly one model constant: 0", {"n00": 6, "n01": 0, "n10": 10, "n11": 0},
                       check=lambda v: v == 0),
        ),
    ),
    "adjusted_jaccard": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(-1, 1), finite_share=0.9,
        degenerate=(
            RAISES_NO_TABLE, _count_nan(ALL_POSITIVE, "both models all positive"),
            Degenerate("opposite constant models: 0", {"n00": 0, "n01": 9, "n10": 0, "n11": 0},
                       check=lambda v: v == 0),
        ),
    ),
    "total_agreement_ratio": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(0, 1),
        degenerate=(RAISES_NO_TABLE, Degenerate("both models all negative: 1, never NaN", ALL_NEGATIVE,
                                                check=lambda v: v == 1)),
    ),
    "positive_agreement_ratio": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(0, 1), finite_share=0.9,
        degenerate=(RAISES_NO_TABLE, _count_nan(ALL_NEGATIVE, "no positive instance")),
    ),
    "negative_agreement_ratio": MetricSpec(
        "counts", call("n00", "n01", "n10", "n11"), **TABLE, bounds=(0, 1), finite_share=0.9,
        degenerate=(RAISES_NO_TABLE, _count_nan(ALL_POSITIVE, "no negative instance")),
    ),
    "kappa_paradox_indicators": MetricSpec(  # the two models' imbalances change places
        "counts", call("n00", "n01", "n10", "n11"), **{**TABLE, "symmetric": lambda r: {
            **r, "n0_minus_n1": r["n_0_minus_n_1"], "n_0_minus_n_1": r["n0_minus_n1"]}},
        bounds=(-1, 1), finite_share=0.9,
        views={"bounds": lambda r: [r[k] for k in ("TAR", "TAR_printed", "PAR", "NAR", "PAR_minus_NAR")]},
        degenerate=(RAISES_NO_TABLE,),
    ),
    "agreement_counts": MetricSpec(  # n01 and n10 change places; thresholded at 0.5, which the map keeps
        "probability_pair", call("pred_a", "pred_b"), symmetric=lambda c: type(c)(c.n00, c.n10, c.n01, c.n11),
        **MAPS, monotone=True, bounds=(0, 40), scale=False, non_finite=PRED_A,
        degenerate=(
            Degenerate("maps of different shapes", {"pred_a": np.zeros((2, 3)), "pred_b": np.zeros((2, 4))},
                       raises="same shape"),
            Degenerate("a probability above 1", {"pred_a": arr(0.5, 1.5), "pred_b": arr(0.5, 0.5)},
                       raises=r"\[0, 1\]"),
        ),
    ),
    "pearson_correlation": MetricSpec(
        "probability_pair", call("pred_a", "pred_b"), symmetric=True, **MAPS, monotone=False, bounds=(-1, 1),
        finite_share=0.8, scale=True, non_finite=PRED_A,
        degenerate=(CONSTANT_MAP,),
    ),
    "spearman_correlation": MetricSpec(
        "probability_pair", call("pred_a", "pred_b"), symmetric=True, **MAPS, monotone=True, bounds=(-1, 1),
        finite_share=0.8, scale=True, non_finite=PRED_A,
        degenerate=(CONSTANT_MAP,),
    ),
    "kendall_tau": MetricSpec(
        "probability_pair", call("pred_a", "pred_b"), symmetric=True, **MAPS, monotone=True, bounds=(-1, 1),
        finite_share=0.8, scale=True, non_finite=PRED_A,
        degenerate=(CONSTANT_MAP,),
    ),
    "pairwise_stability": MetricSpec(  # Pearson is not rank-based; APO is not bounded by 1 in absolute value
        "model_predictions", call("predictions"), symmetric=_swap_pairwise_stability, **MAPS, monotone=True,
        bounds=(-1, 1), finite_share=0.7, scale=True, non_finite=PREDICTIONS,
        views={"monotone": _without("pearson"), "bounds": _without("adjusted_positive_overlap"),
               "scale": _only(*M.PROBABILITY_SCORES)},  # the binary scores see the threshold 0.5
        degenerate=(
            Degenerate("one model", ONE_MODEL, raises="at least two models"),
            Degenerate("every model constant and negative: APJ NaN, TAR 1",
                       {"predictions": np.full((2, 1, 4), 0.1)},
                       check=lambda r: nan(r.scores["adjusted_positive_jaccard"])
                       and r.scores["total_agreement_ratio"].tolist() == [[1.0]]),
        ),
    ),
    "positive_votes": MetricSpec(  # a count over the models: any model order
        "model_predictions", call("predictions"), symmetric=True, order=-1, monotone=True, torch="grad",
        bounds=(0, 3), scale=False, non_finite=PREDICTIONS, degenerate=(Degenerate("one model", ONE_MODEL, raises="at least two models"),),
    ),
    "vote_histogram": MetricSpec(
        "model_predictions", call("predictions"), symmetric=True, **MAPS, monotone=True, bounds=(0, 30),
        scale=False, non_finite=PREDICTIONS,
        contract=lambda d, h: np.all(h.sum(axis=1) == d["predictions"].shape[-1]),
        degenerate=(Degenerate("one model", ONE_MODEL, raises="at least two models"),),
    ),
    "instance_dice": MetricSpec(
        "instance_labels", call("predictions", "instance_labels"), **MAPS, monotone=True, bounds=(0, 1),
        finite_share=0.8,
        degenerate=(_count_nan({"predictions": arr(0.1, 0.2), "instance_labels": arr(0, 0)},
                               "no labelled and no predicted positive"),),
    ),
    "instance_jaccard": MetricSpec(
        "instance_labels", call("predictions", "instance_labels"), **MAPS, monotone=True, bounds=(0, 1),
        finite_share=0.8,
        degenerate=(_count_nan({"predictions": arr(0.1, 0.2), "instance_labels": arr(0, 0)},
                               "no labelled and no predicted positive"),),
    ),
    "localization_accuracy": MetricSpec(
        "jaccard_values", call("jaccard"), order=0, torch="grad", bounds=(0, 1), finite_share=0.8,
        degenerate=(
            Degenerate("a NaN Jaccard stays NaN", {"jaccard": arr(np.nan, 0.5)},
                       check=lambda v: nan(v[0]) and v[1] == 1),
            Degenerate("a threshold above 1", {"jaccard": arr(0.5)}, raises="jaccard_threshold",
                       call=call("jaccard", jaccard_threshold=2)),
        ),
    ),
    "aggregate_over_pairs": MetricSpec(
        "per_pair", call("per_pair"), order="invariant", torch="grad", bounds=(-1, 1), finite_share=0.9,
        views={"bounds": lambda r: r[0]},
        degenerate=(Degenerate("a bag whose pairs are all NaN: NaN, every pair counted",
                               {"per_pair": arr([0.5, np.nan], [0.7, np.nan])},
                               check=lambda r: nan(r[0][1]) and r[1].tolist() == [0, 2]),),
    ),
    # ---------------------------------------------------------------------------------------------- variance
    "empirical_variance_estimate": MetricSpec(
        "fold_scores", call("first", "second"), symmetric=True, **FOLD, bounds=(0, math.inf),
        degenerate=(
            Degenerate("no pairs", {"first": arr(), "second": arr()}, raises="at least 1"),
            Degenerate("one pair of equal scores: 0", ONE_PAIR, check=lambda v: v == 0.0),
        ),
    ),
    "empirical_variance_estimate_standard_error": MetricSpec(
        "fold_scores", call("first", "second"), symmetric=True, **FOLD, bounds=(0, math.inf),
        degenerate=(Degenerate("one pair", ONE_PAIR, raises="at least 2 pairs"),),
    ),
    "pair_variances": MetricSpec(
        "fold_scores", call("first", "second"), symmetric=True, **{**FOLD, "order": 0}, bounds=(0, math.inf),
        degenerate=(Degenerate("lengths differ", {"first": arr(0.5, 0.6), "second": arr(0.5)},
                               raises="same length"),),
    ),
    "eve_confidence_interval": MetricSpec(
        "fold_scores", call("first", "second"), symmetric=True, **FOLD, bounds=(0.6, 0.9),
        views={"bounds": lambda r: r[0]}, contract=lambda d, r: r[1] <= r[0] <= r[2],
        degenerate=(Degenerate("a non-finite score", {"first": arr(0.5, np.inf), "second": arr(0.5, 0.6)},
                               raises="non-finite"),),
    ),
    "naive_empirical_variance_estimate": MetricSpec(
        "scores", call("scores"), **FOLD, bounds=(0, math.inf),
        degenerate=(Degenerate("one score", {"scores": arr(0.5)}, raises="at least 2"),),
    ),
    "naive_foldwise_variance": MetricSpec(
        "fold_matrix", call("fold_scores"), **FOLD, bounds=(0, math.inf),
        degenerate=(Degenerate("one fold", {"fold_scores": arr([0.5])}, raises="2 folds"),),
    ),
    "naive_binomial_variance": MetricSpec(
        "binomial", call("performance", "n_items"), order=0, torch="grad", bounds=(0, 0.25),
        degenerate=(
            Degenerate("a performance above 1", {"performance": 1.2, "n_items": 10}, raises="performance"),
            Degenerate("no items", {"performance": 0.5, "n_items": 0}, raises="n_items"),
        ),
    ),
    "sample_variance_standard_error": MetricSpec(
        "scores", call("scores"), **FOLD, bounds=(0, math.inf),
        degenerate=(Degenerate("three values", {"scores": arr(0.5, 0.6, 0.7)}, raises="at least 4"),),
    ),
    "paired_comparison": MetricSpec(  # B - A = -(A - B): the interval mirrored, the p-value unchanged
        "two_strategies", call("first_a", "second_a", "first_b", "second_b"),
        symmetric=lambda r: dataclasses.replace(
            r, mean_difference=-r.mean_difference, z=-r.z, ci_low=-r.ci_high, ci_high=-r.ci_low),
        **FOLD, bounds=(0, 1), views={"bounds": lambda r: r.p_value},
        degenerate=(
            Degenerate("identical differences on every subset: z infinite, p 0",
                       {"first_a": arr(0.8, 0.7), "second_a": arr(0.8, 0.7), "first_b": arr(0.6, 0.5),
                        "second_b": arr(0.6, 0.5)}, check=lambda r: r.z == math.inf and r.p_value == 0.0),
            Degenerate("algorithms on different pairs", {**ONE_PAIR, "first_b": arr(0.5, 0.6),
                                                         "second_b": arr(0.5, 0.6)}, raises="share pairs"),
        ),
    ),
    "strategy_bias_variance_mse": MetricSpec(
        "two_strategies", call("first_a", "second_a", "first_b", "second_b"), symmetric=False, **FOLD,
        bounds=(0, math.inf), views={"bounds": lambda e: (e.variance, e.mse, e.reference_variance)},
        degenerate=(Degenerate("a reference without variance: NaN ratios",
                               {**ONE_PAIR, "first_a": arr(0.8), "second_a": arr(0.6)},
                               check=lambda e: nan([e.sd_ratio, e.bias_ratio, e.mse_ratio])
                               and e.variance > 0),),
    ),
    # ------------------------------------------------------------------------------------- decision values
    "decision_value_scores": MetricSpec(  # every measure at once; thresholded at 0, which the map keeps
        "decision_values", _every_decision_value_score, order="invariant", monotone=True, torch="grad",
        bounds=(0, 1), finite_share=0.85, scale=True, non_finite="decision must be finite",
        bad_labels=r"labels must hold binary labels \(0/1 or bool\)",
        degenerate=(
            Degenerate("no positive under the mask: sensitivity and AUC NaN",
                       {"f": arr(0.5, -0.2, 0.0, 0.3), "y": arr(0, 0, 0, 1),
                        "mask": arr(True, True, True, False)},
                       check=lambda r: nan([r["sensitivity"], r["auc"]])
                       and r["accuracy"] == r["specificity"] == pytest.approx(2 / 3)),
            Degenerate("nothing under the mask: NaN",
                       {"f": arr(0.5, -0.2), "y": arr(0, 1), "mask": arr(False, False)},
                       check=lambda r: nan(list(r.values()))),
            Degenerate("an unknown measure", {"f": arr(0.5, -0.2), "y": arr(0, 1), "mask": arr(True, True)},
                       raises="metric must be one of", call=call("f", "y", "mask", metric="precision")),
        ),
    ),
}


def _round_trip(d: Inputs, converted) -> bool:
    """xyxy is (x, y, x + w, y + h); every source -> target -> xywh conversion gives the boxes back, also with
    leading dimensions."""
    b = d["boxes"]
    np.testing.assert_allclose(converted, np.column_stack([b[:, :2], b[:, :2] + b[:, 2:]]), rtol=1e-15)
    b = b.reshape(4, 5, 4)
    for source, target in itertools.product(M.BOX_FORMATS, repeat=2):
        there = M.convert_boxes(M.convert_boxes(b, "xywh", source), source, target)
        np.testing.assert_allclose(M.convert_boxes(there, target, "xywh"), b, rtol=1e-10, atol=1e-9)
    return True


def _fold_partition(d: Inputs, folds) -> bool:
    """Fold j holds exactly the examples numbered j; together the folds are every example once."""
    assert sorted(np.concatenate(folds).tolist()) == list(range(d["n_samples"]))
    return all(np.all(d["folds"][f] == j) for j, f in enumerate(folds))


HELPERS: dict[str, MetricSpec] = {
    "convert_boxes": MetricSpec(
        "boxes", lambda fn, d: fn(d["boxes"], d["box_format"], "xyxy"), order=0, torch="grad",
        contract=_round_trip,
    ),
    "validate_boxes": MetricSpec(
        "boxes", lambda fn, d: fn(d["boxes"], d["box_format"]), order=0, torch="grad",
        contract=lambda d, v: v.dtype == np.float64 and np.array_equal(v, d["boxes"]),
        degenerate=(Degenerate("a NaN coordinate", {"boxes": arr([0, 0, np.nan, 1.0]), "box_format": "xywh"},
                               raises="finite"),),
    ),
    "box_area": MetricSpec(
        "boxes", lambda fn, d: fn(d["boxes"], d["box_format"]), order=0, torch="grad", formats=True,
        bounds=(0, math.inf), contract=lambda d, a: np.allclose(a, d["boxes"][:, 2] * d["boxes"][:, 3]),
    ),
    "fixed_threshold_grid": MetricSpec(
        "nothing", lambda fn, d: fn(101),
        contract=lambda d, t: [float(v) for v in t] == [i / 100 for i in range(101)],  # each one division
    ),
    "min_max_normalize": MetricSpec(
        "binary", call("s"), order=0, monotone=False, torch="grad", bounds=(0, 1), scale=True,
        non_finite="y_score must be finite", contract=lambda d, v: v.min() == 0 and v.max() == 1,
        degenerate=(
            Degenerate("constant scores", TIED, raises="constant", call=call("s")),
            Degenerate("scores spanning more than the largest double: no overflow",
                       {"s": arr(-1e308, 0.0, 1e308)}, check=lambda v: v.tolist() == [0.0, 0.5, 1.0]),
        ),
    ),
    "trapezoid_auc": MetricSpec(
        "curve_xy", call("x", "y"), torch="grad",
        contract=lambda d, v: v == pytest.approx(np.trapezoid(d["y"], d["x"]), abs=1e-15),
        degenerate=(Degenerate("x decreasing", {"x": arr(1.0, 0.0), "y": arr(0.0, 1.0)},
                               raises="non-decreasing"),),
    ),
    "vertical_average": MetricSpec(
        "binary_trials", lambda fn, d: fn([r.fpr for r in _rocs(d)], [r.tpr for r in _rocs(d)], GRID_11),
        order="invariant", monotone=True, bounds=(0, 1), views={"default": _mean_curve},
        contract=lambda d, c: c[3].shape == (3, 11),  # one row per trial
        degenerate=(
            Degenerate("a NaN x", {"x": arr(0, np.nan, 1), "y": arr(0, 0.5, 1)}, raises="x and y must be finite",
                       call=lambda fn, d: fn([d["x"]], [d["y"]], [0, 0.5, 1])),
            Degenerate("a NaN in the grid", {"x": arr(0, 0.5, 1), "y": arr(0, 0.5, 1)}, raises="grid must be",
                       call=lambda fn, d: fn([d["x"]], [d["y"]], [0, np.nan, 1])),
        ),
    ),
    "binarize": MetricSpec(
        "multilabel_scores", call("P"), order=0, monotone=False, torch="grad", scale=False,
        non_finite="P must be finite", contract=lambda d, b: np.array_equal(b, d["P"] > 0.5),
    ),
    "binarize_instances": MetricSpec(
        "probability_pair", call("pred_a"), order=-1, monotone=True, torch="grad", scale=False,
        non_finite="predictions must be finite", contract=lambda d, b: np.array_equal(b, d["pred_a"] >= 0.5),
    ),
    "model_pairs": MetricSpec(
        "n_models", call("n_models"),
        contract=lambda d, p: p.tolist() == [list(c) for c in itertools.combinations(range(4), 2)],
    ),
    "positive_bag_mask": MetricSpec(
        "bag_labels", call("bag_labels"), order=0, torch="tensor",  # integer bag labels
        contract=lambda d, m: np.array_equal(m, d["bag_labels"] == 1),
    ),
    "annotated_bag_mask": MetricSpec(
        "instance_label_table", call("instance_labels"), order=0, torch="grad",
        contract=lambda d, m: np.array_equal(m, ~np.isnan(d["instance_labels"]).any(axis=1)),
    ),
    "fold_indices": MetricSpec(  # integer fold numbers
        "split", call("folds", "n_samples"), torch="tensor", contract=_fold_partition,
    ),
    "tile_presence": MetricSpec(
        "mask", lambda fn, d: fn(d["binary_mask"], 3), torch="tensor",  # a boolean mask
        contract=lambda d, t: t.shape == (5, 6) and t.sum() <= d["binary_mask"].sum(),
    ),
    "normal_confidence_interval": MetricSpec(
        "estimate", call("estimate", "variance"),
        contract=lambda d, ci: ci[0] + ci[1] == pytest.approx(2 * d["estimate"]) and ci[0] < ci[1],
    ),
}

_RESULT = "the result class of"
NOT_METRICS: dict[str, str] = {
    # result classes
    "ConfusionRates": f"{_RESULT} confusion_rates",
    "MeanCurve": f"{_RESULT} the mean curves",
    "PRTCurve": f"{_RESULT} pr_t_curve",
    "PRTAUC": f"{_RESULT} pr_t_auc",
    "PRCurve": f"{_RESULT} pr_curve",
    "RocCurve": f"{_RESULT} roc_curve",
    "PatchEvaluation": f"{_RESULT} patch_based_evaluation",
    "ImageBoxes": "the input container of the detection metrics (tested through image_boxes)",
    "PerClassScore": f"{_RESULT} acc@IoU, AP@IoU and mAP",
    "RoDeOResult": f"{_RESULT} robust_detection_outcome",
    "UndefinedMetricWarning": "the warning class of the undefined-value policy",
    "AgreementCounts": f"{_RESULT} agreement_counts",
    "PairwiseStability": f"{_RESULT} pairwise_stability",
    "PairedComparison": f"{_RESULT} paired_comparison",
    "StrategyErrors": f"{_RESULT} strategy_bias_variance_mse",
    # constants
    "BOX_FORMATS": "constant: the box formats",
    "AUC_TIES": "constant: the tie policies of roc_auc",
    "AP_INTERPOLATIONS": "constant: the AP interpolation schemes",
    "MAP_IOU_THRESHOLDS": "constant: the IoU thresholds of the paper's mAP",
    "BINARY_SCORES": "constant: names of pairwise_stability's scores",
    "AGREEMENT_INDICATORS": "constant: names of pairwise_stability's scores",
    "PROBABILITY_SCORES": "constant: names of pairwise_stability's scores",
    "SCORE_NAMES": "constant: names of pairwise_stability's scores",
    "EVE_TARGETS": "constant: the targets of the EVE",
    "DECISION_VALUE_SCORES": "constant: the measures of decision_value_scores",
    # helpers (specs in HELPERS)
    "convert_boxes": "helper: box format conversion",
    "validate_boxes": "helper: box validation",
    "box_area": "helper: box areas",
    "fixed_threshold_grid": "helper: the thesis's threshold grid",
    "min_max_normalize": "helper: score normalisation of PR-T",
    "trapezoid_auc": "helper: the trapezoid rule",
    "vertical_average": "helper: averaging curves on a grid",
    "binarize": "helper: thresholding scores into labels",
    "binarize_instances": "helper: thresholding instance probabilities",
    "model_pairs": "helper: the pairs of models",
    "positive_bag_mask": "helper: a bag selection",
    "annotated_bag_mask": "helper: a bag selection",
    "fold_indices": "helper: normalises the fold formats",
    "tile_presence": "helper: tiling a mask",
    "normal_confidence_interval": "helper: a normal interval from a given estimate and variance",
}

SPECS: dict[str, MetricSpec] = {**REGISTRY, **HELPERS}


def _names(predicate: Callable[[MetricSpec], bool], specs: dict[str, MetricSpec] = SPECS) -> list[str]:
    return sorted(name for name, spec in specs.items() if predicate(spec))


def registry_problems(exported, namespace, registry, not_metrics, helpers) -> list[str]:
    """Why the tables do not describe ``exported`` (the names of ``namespace``) exactly; [] when they do."""
    problems = []
    for name in exported:
        if name in registry and name in not_metrics:
            problems.append(f"{name} is both a metric and not a metric")
        elif name not in registry and name not in not_metrics:
            problems.append(f"{name} is exported but neither registered nor listed in NOT_METRICS")
    problems += [f"{name} is registered but no longer exported" for name in [*registry, *not_metrics]
                 if name not in exported]
    for name in registry:
        if name in exported and not inspect.isfunction(getattr(namespace, name, None)):
            problems.append(f"{name} is registered as a metric but is not a function")
    for name in not_metrics:
        if name in exported and inspect.isfunction(getattr(namespace, name, None)) and name not in helpers:
            problems.append(f"{name} is a function without a spec in HELPERS")
    problems += [f"{name} has a helper spec but is not in NOT_METRICS" for name in helpers
                 if name not in not_metrics]
    return problems


# --------------------------------------------------------------------------------------------------
# the checks (functions of the metric, so that a broken metric can be shown to fail them)
# --------------------------------------------------------------------------------------------------


def _inputs(spec: MetricSpec, seed: int = 0) -> Inputs:
    return KINDS[spec.kind].make(np.random.default_rng(seed))


def _run(fn, spec: MetricSpec, d: Inputs, prop: str = "default"):
    with _quiet():
        return spec.view(prop, spec.call(fn, d))


SEEDS = range(3)  # the random inputs of each property check


def check_symmetric(fn, spec: MetricSpec) -> None:
    """Declared symmetric (or a transform): on every seed. Not symmetric: a counterexample on a seed."""
    counterexamples = 0
    for seed in SEEDS:
        d = _inputs(spec, seed)
        got, expected = _run(fn, spec, KINDS[spec.kind].swap(d)), _run(fn, spec, d)
        if spec.symmetric is False:
            counterexamples += differs(got, expected)
        else:
            expected = expected if spec.symmetric is True else spec.symmetric(expected)
            assert_same(got, expected, spec.tol, f"symmetric (seed {seed}): ")
    assert spec.symmetric is not False or counterexamples, "declared not symmetric, but no input shows it"


def _has_axis(v, axis: int, n: int) -> bool:
    return isinstance(v, np.ndarray) and v.ndim > 0 and v.shape[axis] == n


def check_order(fn, spec: MetricSpec) -> None:
    for seed in SEEDS:
        d = _inputs(spec, seed)
        permuted, perm = KINDS[spec.kind].permute(d, np.random.default_rng(100 + seed))
        got, ref = _leaves(_run(fn, spec, permuted, "order")), _leaves(_run(fn, spec, d, "order"))
        if spec.order == "pairwise":
            ref = {k: v[np.ix_(*perm)] if isinstance(v, np.ndarray) else v for k, v in ref.items()}
        elif spec.order != "invariant":
            n, axis = len(perm), spec.order
            ref = {k: np.take(v, perm, axis=axis) if _has_axis(v, axis, n) else v for k, v in ref.items()}
        assert_leaves_same(got, ref, spec.tol, f"order {spec.order} (seed {seed}): ")


def check_monotone(fn, spec: MetricSpec) -> None:
    counterexamples = 0
    for seed in SEEDS:
        d = _inputs(spec, seed)
        transformed = KINDS[spec.kind].monotone(d)
        assert differs(transformed, d), "the monotone map left the scores unchanged"
        got, ref = _run(fn, spec, transformed, "monotone"), _run(fn, spec, d, "monotone")
        if spec.monotone is False:
            counterexamples += differs(got, ref)
        else:
            assert_same(got, ref, spec.tol, f"monotone (seed {seed}): ")
    assert spec.monotone is not False or counterexamples, "declared not invariant, but no input shows it"


SCALES = (1e-170, 1e-300)  # squares of deviations of these sizes underflow to 0


def check_scale(fn, spec: MetricSpec) -> None:
    """The scores times 1e-170 and 1e-300 (a monotone map; exact in the ranks, so only arithmetic that loses
    the small values can fail): declared invariant, or mapped back by ``spec.scale``, on every seed and factor;
    declared ``False``: a counterexample."""
    counterexamples = 0
    for seed, c in itertools.product(SEEDS, SCALES):
        d = _inputs(spec, seed)
        got, ref = _run(fn, spec, KINDS[spec.kind].scale(d, c), "scale"), _run(fn, spec, d, "scale")
        if spec.scale is False:
            counterexamples += differs(got, ref)
            continue
        if callable(spec.scale):
            got = spec.scale(got, c)
        assert_same(got, ref, spec.tol, f"scores times {c:g} (seed {seed}): ")
    assert spec.scale is not False or counterexamples, "declared not scale invariant, but no input shows it"


BAD_LABELS = (2, -1)
NON_FINITE = (np.nan, np.inf, -np.inf)


def check_refuses(fn, spec: MetricSpec, put: Callable, values, match: str) -> None:
    """``put(inputs, v)`` for each ``v`` raises a ``ValueError`` matching ``match`` (before any result)."""
    for v in values:
        with pytest.raises(ValueError, match=match):
            _run(fn, spec, put(_inputs(spec), v))


def check_same_under(fn, spec: MetricSpec, transform: Callable, what: str, tol: float) -> None:
    """The result on ``transform(inputs)`` equals the result on the inputs (torch, moved boxes ...)."""
    for seed in SEEDS:
        d = _inputs(spec, seed)
        assert_same(_run(fn, spec, transform(d)), _run(fn, spec, d), tol, f"{what} (seed {seed}): ")


def check_torch(fn, spec: MetricSpec, grad: bool = False) -> None:
    check_same_under(fn, spec, lambda d: _to_torch(d, grad), "torch", spec.tol)


def check_bounds(fn, spec: MetricSpec, in_range) -> None:
    values = [v for seed in range(5) for v in numbers(_run(fn, spec, _inputs(spec, seed), "bounds"))]
    in_range(values, *spec.bounds, finite_share=spec.finite_share)


def check_degenerate(fn, spec: MetricSpec, case: Degenerate) -> None:
    run = case.call or spec.call
    if case.raises is not None:
        with pytest.raises(ValueError, match=case.raises):
            run(fn, case.inputs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", M.UndefinedMetricWarning)  # an undocumented warning fails
        warnings.simplefilter("error", UserWarning)
        if case.warns is not None:
            with pytest.warns(case.warns):
                result = run(fn, case.inputs)
        else:
            result = run(fn, case.inputs)
    assert case.check(result), f"{case.what}: got {result!r}"


# --------------------------------------------------------------------------------------------------
# the registry
# --------------------------------------------------------------------------------------------------


def test_registry_is_complete():
    """Every exported name is a registered metric or listed, with a reason, as not a metric; every function
    has a spec (metric or helper); nothing registered has disappeared."""
    assert registry_problems(M.__all__, M, REGISTRY, NOT_METRICS, HELPERS) == []
    assert len(REGISTRY) + len(NOT_METRICS) == len(M.__all__)


def test_the_completeness_check_fails_on_each_kind_of_gap():
    namespace = types.SimpleNamespace(**{n: getattr(M, n) for n in M.__all__}, new_metric=lambda y, s: 0.0)
    exported = [*M.__all__, "new_metric"]
    assert registry_problems(exported, namespace, REGISTRY, NOT_METRICS, HELPERS) == [
        "new_metric is exported but neither registered nor listed in NOT_METRICS"]
    assert registry_problems([n for n in M.__all__ if n != "roc_auc"], M, REGISTRY, NOT_METRICS, HELPERS) == [
        "roc_auc is registered but no longer exported"]
    assert registry_problems(exported, namespace, REGISTRY, {**NOT_METRICS, "new_metric": "?"}, HELPERS) == [
        "new_metric is a function without a spec in HELPERS"]
    both = {**REGISTRY, "AUC_TIES": REGISTRY["roc_auc"]}
    assert registry_problems(M.__all__, M, both, NOT_METRICS, HELPERS) == [
        "AUC_TIES is both a metric and not a metric",
        "AUC_TIES is registered as a metric but is not a function",
    ]
    helpers = {**HELPERS, "roc_auc": REGISTRY["roc_auc"]}
    assert registry_problems(M.__all__, M, REGISTRY, NOT_METRICS, helpers) == [
        "roc_auc has a helper spec but is not in NOT_METRICS"]


def test_every_metric_declares_its_degenerate_policy():
    assert _names(lambda s: not s.degenerate, REGISTRY) == []


UNDECLARED: dict[tuple[str, str], str] = {  # a property the input kind offers that a metric does not declare
    **{(name, "torch"): "takes medeval curves (the arrays go to roc_curve, pr_curve or pr_t_curve)"
       for name in ("interpolated_pr_points", "pr_auc_roc_interpolated", "linear_pr_auc", "pr_t_auc",
                    "mean_pr_auc", "mean_pr_curve", "mean_roc_curve", "mean_prt_curves")},
    ("hungarian_box_matching", "bounds"): "returns indices",
}


def test_every_applicable_property_is_declared():
    """Like scikit-learn's SYMMETRIC_METRICS | NOT_SYMMETRIC_METRICS == ALL_METRICS: where the input kind
    offers a property's transform, the metric declares it (True, False or a transform) or UNDECLARED says
    why not."""
    missing = []
    for name, spec in REGISTRY.items():
        kind = KINDS[spec.kind]
        for prop, offered, declared in (
            ("symmetric", kind.swap, spec.symmetric is not None),
            ("order", kind.permute, spec.order is not None),
            ("monotone", kind.monotone, spec.monotone is not None),
            ("geometric", kind.geometric, spec.geometric),
            ("formats", kind.formats, spec.formats),
            ("scale", kind.scale, spec.scale is not None),
            ("non_finite", kind.non_finite, spec.non_finite is not None),
            ("bad_labels", kind.bad_labels, spec.bad_labels is not None),
            ("torch", True, spec.torch is not None),
            ("bounds", True, spec.bounds is not None),
        ):
            if offered and not declared and (name, prop) not in UNDECLARED:
                missing.append((name, prop))
    assert missing == []
    assert [key for key in UNDECLARED if key[0] not in REGISTRY] == []


def test_declarations_fit_their_input_kinds():
    """A declared property needs the transform its test applies; a range needs a positive finite share."""
    for name, spec in SPECS.items():
        kind = KINDS[spec.kind]
        assert spec.symmetric is None or kind.swap, name
        assert spec.order is None or kind.permute, name
        assert spec.monotone is None or kind.monotone, name
        assert not spec.geometric or kind.geometric, name
        assert not spec.formats or kind.formats, name
        assert spec.scale is None or kind.scale, name
        assert spec.non_finite is None or kind.non_finite, name
        assert spec.bad_labels is None or kind.bad_labels, name
        assert not spec.image_boxes or spec.kind == "detection", name
        assert spec.torch in (None, "tensor", "grad"), name
        assert spec.bounds is None or 0 < spec.finite_share <= 1, name
        assert set(spec.views) <= {"default", "order", "monotone", "scale", "bounds"}, name


def test_the_checks_fail_on_broken_metrics():
    """Each check catches a metric that breaks its property (a check that cannot fail proves nothing)."""
    auc = REGISTRY["roc_auc"]
    FAILS = (AssertionError, pytest.fail.Exception)  # noqa: N806
    broken = {
        "order": lambda y, s: float(s[0]),  # looks at the first example
        "monotone": lambda y, s: float(np.mean(s[np.asarray(y) == 1])),  # uses the score values
        "torch": lambda y, s: float(type(s).__module__ == "numpy"),  # treats tensors differently
    }
    with pytest.raises(FAILS):
        check_order(broken["order"], auc)
    with pytest.raises(FAILS):
        check_monotone(broken["monotone"], auc)
    with pytest.raises(FAILS):
        check_torch(broken["torch"], auc)
    with pytest.raises(FAILS):
        check_symmetric(lambda a, b, box_format: np.asarray(a)[:, 0], REGISTRY["paired_iou"])
    with pytest.raises(FAILS):  # a symmetric function declared not symmetric
        check_symmetric(M.paired_iou, REGISTRY["localization_similarity"])
    with pytest.raises(FAILS):  # a table of NaNs is not in range
        check_bounds(lambda y, s: np.nan, auc, _in_range)
    with pytest.raises(FAILS):  # a NaN where the policy says ValueError
        check_degenerate(lambda y, s: np.nan, auc, RAISES_ONE_CLASS)
    with pytest.raises(M.UndefinedMetricWarning):  # an undocumented warning fails the check
        check_degenerate(_warns_and_returns_half, auc, auc.degenerate[2])
    pearson = REGISTRY["pearson_correlation"]
    with pytest.raises(FAILS):  # squares the centred values before rescaling them: NaN below ~1e-154
        check_scale(_pearson_squaring_first, pearson)
    with pytest.raises(FAILS):  # a scale-invariant metric declared not invariant
        check_scale(M.pearson_correlation, dataclasses.replace(pearson, scale=False))
    with pytest.raises(FAILS):  # a NaN score counted as a negative prediction
        check_refuses(lambda y, s: float(np.mean((np.asarray(s) > 0) == np.asarray(y))), auc,
                      KINDS["binary"].non_finite, NON_FINITE, auc.non_finite)
    with pytest.raises(FAILS):  # the label 2 read as positive
        check_refuses(lambda y, s: float(np.mean(np.asarray(y).astype(bool))), auc,
                      KINDS["binary"].bad_labels, BAD_LABELS, auc.bad_labels)
    with pytest.raises(FAILS):  # a ValueError that does not name the argument
        check_refuses(lambda y, s: M.roc_auc(y, s) if np.isfinite(s).all() else int("NaN"), auc,
                      KINDS["binary"].non_finite, NON_FINITE, auc.non_finite)


def _pearson_squaring_first(a, b):
    """Pearson's r as the issue found it: the centred values are squared before any rescaling."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ca, cb = a - a.mean(axis=-1, keepdims=True), b - b.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ca * cb).sum(-1) / np.sqrt((ca * ca).sum(-1) * (cb * cb).sum(-1))


def _warns_and_returns_half(y, s):
    warnings.warn("an undocumented warning", M.UndefinedMetricWarning, stacklevel=2)
    return 0.5


def _in_range(values, lo, hi, finite_share=1.0):
    finite = [v for v in values if math.isfinite(v)]
    assert values and all(lo <= v <= hi for v in finite) and len(finite) >= finite_share * len(values)


# --------------------------------------------------------------------------------------------------
# the properties, one test per property over the registry
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SPECS))
def test_deterministic(name):
    spec, fn = SPECS[name], getattr(M, name)
    d = _inputs(spec)
    with _quiet():
        assert_same(spec.call(fn, d), spec.call(fn, d), 0.0, "a second call: ")


@pytest.mark.parametrize("name", sorted(SPECS))
def test_no_input_mutation(name):
    spec, fn = SPECS[name], getattr(M, name)
    d = _inputs(spec)
    before = copy.deepcopy(d)
    _run(fn, spec, d)
    assert_same(d, before, 0.0, "the inputs after the call: ")


@pytest.mark.parametrize("name", _names(lambda s: s.symmetric is not None))
def test_symmetric(name):
    check_symmetric(getattr(M, name), SPECS[name])


@pytest.mark.parametrize("name", _names(lambda s: s.order is not None))
def test_order_invariant(name):
    check_order(getattr(M, name), SPECS[name])


@pytest.mark.parametrize("name", _names(lambda s: s.monotone is not None))
def test_monotone_score_invariant(name):
    check_monotone(getattr(M, name), SPECS[name])


@pytest.mark.parametrize("name", _names(lambda s: s.scale is not None))
def test_scale_invariant_down_to_1e_300(name):
    check_scale(getattr(M, name), SPECS[name])


@pytest.mark.parametrize("name", _names(lambda s: s.non_finite is not None))
def test_non_finite_scores_are_refused(name):
    spec = SPECS[name]
    check_refuses(getattr(M, name), spec, KINDS[spec.kind].non_finite, NON_FINITE, spec.non_finite)


@pytest.mark.parametrize("name", _names(lambda s: s.bad_labels is not None))
def test_labels_outside_0_1_are_refused(name):
    spec = SPECS[name]
    check_refuses(getattr(M, name), spec, KINDS[spec.kind].bad_labels, BAD_LABELS, spec.bad_labels)


@pytest.mark.parametrize("name", _names(lambda s: s.torch is not None))
def test_accepts_torch(name):
    pytest.importorskip("torch")
    check_torch(getattr(M, name), SPECS[name])


@pytest.mark.parametrize("name", _names(lambda s: s.torch == "grad"))
def test_accepts_torch_requiring_grad(name):
    pytest.importorskip("torch")
    check_torch(getattr(M, name), SPECS[name], grad=True)


def _tensors(obj) -> list:
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tensors(v)]
    if isinstance(obj, list):
        return [t for v in obj for t in _tensors(v)]
    return [obj] if hasattr(obj, "requires_grad") else []


@pytest.mark.parametrize("name", _names(lambda s: s.torch == "tensor"))
def test_tensor_declared_only_where_grad_cannot_be(name):
    """``torch="tensor"`` only for integer and boolean inputs: a floating input can come as a tensor that
    requires grad (a network's output), and the metric must take it (``torch="grad"``)."""
    pytest.importorskip("torch")
    tensors = _tensors(_to_torch(_inputs(SPECS[name]), grad=True))
    assert tensors and not any(t.requires_grad for t in tensors), "declare torch='grad'"


@pytest.mark.parametrize("name", _names(lambda s: s.geometric))
def test_translation_and_axis_scaling_invariant(name):
    spec = SPECS[name]
    check_same_under(getattr(M, name), spec, KINDS[spec.kind].geometric, "moved boxes", 1e-9)


@pytest.mark.parametrize("fmt", ["xyxy", "cxcywh"])
@pytest.mark.parametrize("name", _names(lambda s: s.formats))
def test_box_format_invariant(name, fmt):
    spec = SPECS[name]
    check_same_under(getattr(M, name), spec, lambda d: KINDS[spec.kind].formats(d, fmt), fmt, 1e-9)


def _as_image_boxes(d: Inputs) -> Inputs:
    fmt = d["box_format"]
    return {**d, **{k: M.ImageBoxes.from_per_image(d[k], box_format=fmt) for k in ("predictions", "targets")}}


@pytest.mark.parametrize("name", _names(lambda s: s.image_boxes))
def test_accepts_image_boxes(name):
    check_same_under(getattr(M, name), SPECS[name], _as_image_boxes, "ImageBoxes", SPECS[name].tol)


@pytest.mark.parametrize("name", _names(lambda s: s.bounds is not None))
def test_bounds(name, in_range):
    check_bounds(getattr(M, name), SPECS[name], in_range)


@pytest.mark.parametrize(
    "name, case", [(name, i) for name, spec in sorted(SPECS.items()) for i in range(len(spec.degenerate))]
)
def test_degenerate(name, case):
    check_degenerate(getattr(M, name), SPECS[name], SPECS[name].degenerate[case])


@pytest.mark.parametrize("name", _names(lambda s: s.contract is not None))
def test_contract(name):
    spec, fn = SPECS[name], getattr(M, name)
    d = _inputs(spec)
    assert spec.contract(d, _run(fn, spec, d)), name
