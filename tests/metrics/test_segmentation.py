"""Tests of medeval.metrics.segmentation (patch-based evaluation, thesis §3.3)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix

from medeval.metrics import segmentation as S


def _masks(seed: int, shape=(37, 53), n_classes: int = 3):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_classes, size=shape), rng.integers(0, n_classes, size=shape)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [0, 1, 2])
def test_method_1_with_e_1_is_pixel_level(seed, k):
    pred, true = _masks(seed)
    tn, fp, fn, tp = confusion_matrix(true.ravel() == k, pred.ravel() == k, labels=[False, True]).ravel()
    np.testing.assert_array_equal(S.tile_confusion_counts(pred, true, 1, k), [tp, fp, fn, tn])


@pytest.mark.parametrize("e", [1, 2, 5, 8, 16, 100])
def test_counts_sum_to_number_of_tiles_including_partial_edges(e):
    pred, true = _masks(4)
    counts = S.tile_confusion_counts(pred, true, e, 2)
    assert counts.sum() == -(-37 // e) * -(-53 // e)


def test_tile_presence_matches_loop():
    rng = np.random.default_rng(0)
    m = rng.random((23, 30)) < 0.02
    e = 7
    got = S.tile_presence(m, e)
    want = np.array([[m[i : i + e, j : j + e].any() for j in range(0, 30, e)] for i in range(0, 23, e)])
    np.testing.assert_array_equal(got, want)


def test_all_positive_prediction_gives_recall_one_and_full_image_tile_is_image_decision():
    _, true = _masks(1)
    pred = np.full_like(true, 2)
    ev = S.patch_based_evaluation([pred], [true], 4, classes=(2,))
    assert ev.mean_recall[0] == 1.0
    whole = S.tile_confusion_counts(pred, true, 1000, 2)
    np.testing.assert_array_equal(whole, [1, 0, 0, 0])
    empty = S.tile_confusion_counts(np.zeros_like(true), true, 1000, 2)
    np.testing.assert_array_equal(empty, [0, 0, 1, 0])


def test_undefined_recall_is_nan_and_excluded_from_mean_with_count():
    pred_a, true_a = _masks(2)
    true_b = np.zeros_like(true_a)  # image without class 2
    pred_b = true_b.copy()
    ev = S.patch_based_evaluation([pred_a, pred_b], [true_a, true_b], 3, classes=(0, 2))
    assert np.isnan(ev.recall[1, 1]) and np.isnan(ev.precision[1, 1])
    assert ev.n_undefined_recall[1] == 1 and ev.n_undefined_precision[1] == 1
    assert ev.mean_recall[1] == pytest.approx(ev.recall[0, 1])
    assert ev.n_undefined_recall[0] == 0


def test_recall_rises_with_tile_size_for_scattered_predictions():
    rng = np.random.default_rng(5)
    true = np.zeros((64, 64), dtype=int)
    true[20:40, 20:40] = 2
    pred = np.where(rng.random((64, 64)) < 0.3, 2, 0)
    recalls = [S.patch_based_evaluation([pred], [true], e, classes=(2,)).mean_recall[0] for e in (1, 4, 16, 64)]
    assert recalls == sorted(recalls) and recalls[-1] == 1.0


@pytest.mark.parametrize("seed", range(4))
def test_false_positives_in_true_tiles_matches_a_loop_and_grows_with_nested_tiles(seed):
    """Against a pixel loop over the tiles, on images whose sides are not multiples of e (partial edge tiles);
    with nested tiles (e divides e') a false positive in a true tile stays in one, so the count cannot fall."""
    pred, true = _masks(seed, shape=(37, 53))
    for k in (0, 1, 2):
        counts = []
        for e in (1, 2, 4, 8, 16, 64):
            n_fp, n_in = S.false_positives_in_true_tiles(pred, true, e, k)
            want_in = sum(int(pred[i, j] == k and true[i, j] != k
                              and (true[i - i % e : i - i % e + e, j - j % e : j - j % e + e] == k).any())
                          for i in range(37) for j in range(53))
            assert n_fp == int(np.sum((pred == k) & (true != k))) and n_in == want_in, (k, e)
            counts.append(n_in)
        assert counts[0] == 0 and counts == sorted(counts) and counts[-1] == n_fp


def test_false_positives_next_to_the_truth_are_absorbed_and_far_ones_are_not():
    """The mechanism the count measures: a false-positive rim around a true square joins true tiles at a small e;
    scattered false positives far from it do not, until the tile covers the square."""
    true = np.zeros((64, 64), dtype=int)
    true[17:31, 17:31] = 1
    rim = np.zeros_like(true)
    rim[16:32, 16:32] = 1  # one pixel around the square, inside the 4-px tiles that hold its edges
    n_fp, n_in = S.false_positives_in_true_tiles(rim, true, 4, 1)
    assert n_fp == 16 * 16 - 14 * 14 and n_in == n_fp
    assert S.false_positives_in_true_tiles(rim, true, 1, 1) == (n_fp, 0)
    far = np.zeros_like(true)
    far[48:64:4, 48:64:4] = 1
    assert S.false_positives_in_true_tiles(far, true, 4, 1) == (16, 0)
    assert S.false_positives_in_true_tiles(far, true, 64, 1) == (16, 16)


def test_bad_inputs_raise():
    pred, true = _masks(0)
    with pytest.raises(ValueError, match="same shape"):
        S.tile_confusion_counts(pred[:5], true, 2, 1)


def test_method_2_central_region_class_max():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(6, 3, 16, 16))
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    scores = S.central_region_class_max(probs, 8)
    np.testing.assert_allclose(scores, probs[:, :, 4:12, 4:12].max(axis=(2, 3)))
    assert scores.shape == (6, 3) and np.all((scores >= 0) & (scores <= 1))
    channels_last = S.central_region_class_max(np.moveaxis(probs, 1, -1), 8, channel_axis=-1)
    np.testing.assert_allclose(channels_last, scores)
    # a probability outside the central region does not count
    probs2 = probs.copy()
    probs2[:, 2, 0, 0] = 5.0
    np.testing.assert_allclose(S.central_region_class_max(probs2, 8), scores)
