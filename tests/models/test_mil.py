"""Tests of medeval.models.mil: pooling operators (Eqs. 1-5), supervised pooling (corrected Eq. 23), the loss,
the network's shapes and the determinism sanity check (identically trained models are perfectly stable)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from medeval.metrics.stability import pairwise_stability
from medeval.models import mil


def random_probs(seed=0, batch=64, n=49):
    g = torch.Generator().manual_seed(seed)
    p = torch.rand(batch, n, generator=g, dtype=torch.float64)
    p[0] = 0.0
    p[1] = 1.0
    p[2, :] = 0.0
    p[2, 7] = 1.0  # one-hot bag
    return p


def test_pooling_inequalities_and_limits():
    p = random_probs()
    mean, mx = mil.pool_instances(p, "mean"), mil.pool_instances(p, "max")
    for r in (1e-3, 0.1, 1.0, 10.0, 100.0):
        lse = mil.pool_instances(p, "lse", r)
        assert torch.all(mean <= lse + 1e-12) and torch.all(lse <= mx + 1e-12)
    assert torch.allclose(mil.pool_instances(p, "lse", 1e-6), mean, atol=1e-6)
    assert torch.allclose(mil.pool_instances(p, "lse", 1e4), mx, atol=1e-3)
    # r = 1 is mean-like on [0, 1] inputs: LSE_1 - mean <= 1/8 (the paper calls LSE_1 "an estimation of the Max")
    assert float((mil.pool_instances(p, "lse", 1.0) - mean).max()) <= 0.125
    onehot = torch.zeros(1, 256, dtype=torch.float64)
    onehot[0, 0] = 1
    assert float(mil.pool_instances(onehot, "lse", 1.0)) == pytest.approx(math.log((255 + math.e) / 256))


def test_noisy_or_forms():
    p = random_probs()
    exact = 1 - torch.prod(1 - p, dim=1)
    log_form = mil.pool_instances(p, "noisy_or_log")
    assert torch.allclose(log_form, exact, atol=1e-6)
    assert torch.all(log_form >= mil.pool_instances(p, "max") - 1e-6)  # Eq. 5 >= max
    li = mil.pool_instances(p, "noisy_or")
    assert torch.allclose(li, 1 - torch.prod(0.98 + 0.02 * (1 - p), dim=1), atol=1e-12)
    assert torch.allclose(li, 1 - torch.exp(-0.02 * p.sum(1)), atol=1e-2)  # a saturating soft count
    assert float(li[2]) < float(mil.pool_instances(p, "max")[2])  # ... and not >= max
    for name in mil.POOLINGS:
        r = 1.0 if name == "lse" else None
        y = mil.pool_instances(p, name, r)
        assert torch.all((y >= 0) & (y <= 1)), name
        rank = mil.bag_ranking_score(p, name, r)
        order_y, order_rank = torch.argsort(y[3:]), torch.argsort(rank[3:])
        assert torch.equal(order_y, order_rank) or name.startswith("noisy_or"), name
    big = torch.full((3, 256), 0.9, dtype=torch.float32)
    big[1] = 0.95
    scores = mil.bag_ranking_score(big, "noisy_or_log")
    assert mil.pool_instances(big, "noisy_or_log")[0] == mil.pool_instances(big, "noisy_or_log")[1] == 1.0
    assert scores[1] > scores[0]  # the ranking score does not tie where the probability saturates


def test_supervised_pooling_corrected_eq23():
    p = random_probs(1)[3:]
    s = (torch.rand(p.shape, generator=torch.Generator().manual_seed(2)) < 0.3).double()
    expected = torch.prod(torch.where(s == 1, p, 1 - p), dim=1)  # prod_S y * prod_notS (1 - y)
    assert torch.allclose(mil.supervised_pool(p, s, "noisy_or_log"), expected, rtol=1e-6, atol=1e-300)
    li = torch.prod(torch.where(s == 1, 0.98 + 0.02 * p, 0.98 + 0.02 * (1 - p)), dim=1)
    assert torch.allclose(mil.supervised_pool(p, s, "noisy_or"), li, rtol=1e-9)
    mean = (torch.where(s == 1, p, 1 - p)).sum(1) / p.shape[1]
    assert torch.allclose(mil.supervised_pool(p, s, "mean"), mean.clamp(min=1e-6))
    mx = torch.where(s == 1, p, torch.full_like(p, -1)).max(1).values
    assert torch.allclose(mil.supervised_pool(p, s, "max"), mx.clamp(min=1e-6))
    lse = torch.log(torch.where(s == 1, torch.exp(0.1 * p), torch.exp(0.1 * (1 - p))).mean(1)) / 0.1
    assert torch.allclose(mil.supervised_pool(p, s, "lse", 0.1), lse)
    perfect = s.clone()
    assert torch.allclose(mil.supervised_pool(perfect, s, "noisy_or_log"), torch.ones(len(s), dtype=p.dtype))


def test_loss_weights_annotated_bags_and_is_stable():
    p = random_probs(3)
    y = (torch.arange(len(p)) % 2).double()
    s = (p > 0.7).double()
    annotated = torch.zeros(len(p), dtype=torch.bool)
    annotated[[5, 7]] = True
    for name in mil.POOLINGS:
        r = 0.5 if name == "lse" else None
        base = mil.mil_bag_loss(p, y, name, r)
        assert torch.isfinite(base) and base > 0, name
        w1 = mil.mil_bag_loss(p, y, name, r, instance_labels=s, annotated=annotated, annotated_weight=1.0)
        w5 = mil.mil_bag_loss(p, y, name, r, instance_labels=s, annotated=annotated, annotated_weight=5.0)
        if name == "noisy_or_log":  # evaluated in log space, no clipping: -sum log(y on S, 1 - y off S)
            agree = torch.where(s[annotated] == 1, p[annotated], 1 - p[annotated])
            sup = -torch.log(agree.clamp(min=1e-7)).sum(1)
        else:
            sup = -torch.log(mil.supervised_pool(p[annotated], s[annotated], name, r).clamp(min=1e-6))
        assert torch.allclose(w5 - w1, 4 * sup.sum() / len(p), rtol=1e-5), name
    # BCE on the noisy-OR probability, computed in log space
    q = torch.full((2, 10), 0.3, dtype=torch.float64)
    yb = torch.tensor([1.0, 0.0], dtype=torch.float64)
    bag = 1 - 0.7**10
    expected = -(math.log(bag) + math.log(1 - bag)) / 2
    assert float(mil.mil_bag_loss(q, yb, "noisy_or_log")) == pytest.approx(expected)


def test_bad_pooling_and_shapes_raise():
    p = random_probs()
    with pytest.raises(ValueError, match="pooling"):
        mil.pool_instances(p, "attention")
    with pytest.raises(ValueError, match="pooling"):
        mil.mil_bag_loss(p, torch.zeros(len(p)), "sum")
    with pytest.raises(ValueError, match="r"):
        mil.pool_instances(p, "lse")
    with pytest.raises(ValueError, match="r"):
        mil.pool_instances(p, "lse", -1.0)
    with pytest.raises(ValueError, match="shape"):
        mil.pool_instances(p[0], "mean")
    with pytest.raises(ValueError, match="bag_labels"):
        mil.mil_bag_loss(p, torch.zeros(3), "mean")


def test_network_shapes_and_grid_check():
    model = mil.build_mil_model("small_cnn", 8, small_cnn_widths=(4, 8, 8), head_channels=8)
    x = torch.randn(3, 1, 64, 64)
    out = model(x)
    assert out.shape == (3, 64) and torch.all((out >= 0) & (out <= 1))
    with pytest.raises(ValueError, match="grid"):
        model(torch.randn(2, 1, 32, 32))
    resnet = mil.build_mil_model("resnet18", 4, head_channels=8)
    assert resnet(torch.randn(2, 1, 128, 128)).shape == (2, 16)


def _train_identically(seed, x, y):
    torch.manual_seed(seed)
    model = mil.build_mil_model("small_cnn", 4, small_cnn_widths=(4, 8), head_channels=8)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        for b in range(0, len(x), 8):
            loss = mil.mil_bag_loss(model(x[b : b + 8]), y[b : b + 8], "noisy_or")
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        return model(x).numpy()


def test_identically_trained_models_are_perfectly_stable():
    torch.use_deterministic_algorithms(True, warn_only=True)
    g = torch.Generator().manual_seed(0)
    x = torch.rand(24, 1, 16, 16, generator=g)
    y = (torch.arange(24) % 2).float()
    preds = np.stack([_train_identically(7, x, y) for _ in range(3)])
    assert np.array_equal(preds[0], preds[1]) and np.array_equal(preds[0], preds[2])
    threshold = float(np.median(preds))  # a threshold inside the range, so that the binary maps vary
    result = pairwise_stability(
        preds, threshold=threshold, scores=["adjusted_positive_jaccard", "spearman", "adjusted_jaccard"]
    )
    for name, values in result.scores.items():
        finite = values[~np.isnan(values)]
        assert finite.size > 0 and np.allclose(finite, 1.0, rtol=0, atol=1e-12), name
