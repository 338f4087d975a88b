"""``decision_value_scores`` refuses what it cannot score (issue #32): labels outside {0, 1} and non-finite decision
values under the mask, for every measure alike (the AUC already refused a NaN decision; accuracy counted it as a
negative prediction and read the label 2 as positive)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, recall_score

from medeval.metrics.decision_values import DECISION_VALUE_SCORES, decision_value_scores

F = np.array([[0.5, -0.2, 0.3, -1.0]])
MASK = np.ones((1, 4), dtype=bool)


@pytest.mark.parametrize("metric", DECISION_VALUE_SCORES)
@pytest.mark.parametrize("labels", [[1, 0, 2, 0], [1, 0, -1, 0], [1, 0, 0.5, 0], [1, 0, np.nan, 0]])
def test_labels_outside_0_1_are_refused(metric, labels):
    with pytest.raises(ValueError, match=r"labels must hold binary labels \(0/1 or bool\)"):
        decision_value_scores(F, np.array([labels]), MASK, metric)


@pytest.mark.parametrize("metric", DECISION_VALUE_SCORES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_decision_under_the_mask_is_refused(metric, bad):
    f = F.copy()
    f[0, 1] = bad
    with pytest.raises(ValueError, match="decision must be finite .* where mask is true"):
        decision_value_scores(f, [[1, 0, 1, 0]], MASK, metric)
    outside = MASK.copy()
    outside[0, 1] = False  # outside the mask it takes no part
    y = np.array([[1, 0, 1, 0]])
    expected = decision_value_scores(np.delete(F, 1, axis=1), np.delete(y, 1, axis=1), np.ones((1, 3), bool), metric)
    assert decision_value_scores(f, y, outside, metric).tolist() == expected.tolist()


def test_bool_and_float_labels_give_the_integer_labels_scores():
    rng = np.random.default_rng(0)
    f = np.round(rng.normal(size=(4, 30)), 1)
    y = (rng.random((4, 30)) < 0.5).astype(int)
    y[:, :2] = [1, 0]
    for metric in DECISION_VALUE_SCORES:
        want = decision_value_scores(f, y, np.ones_like(f, dtype=bool), metric)
        for labels in (y.astype(bool), y.astype(float)):
            assert decision_value_scores(f, labels, np.ones_like(f, dtype=bool), metric).tolist() == want.tolist()
    acc = decision_value_scores(f, y, np.ones_like(f, dtype=bool), "accuracy")
    sens = decision_value_scores(f, y, np.ones_like(f, dtype=bool), "sensitivity")
    for i in range(4):
        assert acc[i] == pytest.approx(accuracy_score(y[i], f[i] > 0))
        assert sens[i] == pytest.approx(recall_score(y[i], f[i] > 0))
