"""U-Net and patch classifier: shapes, softmax, loss, and that a few Adam steps learn a toy task."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from medeval.models.training import predict, train_model
from medeval.models.unet import (
    PatchClassifier,
    UNet,
    classification_loss,
    segmentation_loss,
    softmax_probabilities,
)


@pytest.mark.parametrize("depth, width", [(1, 4), (2, 8), (3, 4)])
def test_unet_shapes_and_softmax(depth, width):
    torch.manual_seed(0)
    net = UNet(base_channels=width, depth=depth)
    x = torch.rand(2, 3, 32, 32)
    out = net(x)
    assert out.shape == (2, 3, 32, 32)
    p = softmax_probabilities(net, x)
    torch.testing.assert_close(p.sum(dim=1), torch.ones(2, 32, 32))
    with pytest.raises(ValueError, match="divisible"):
        net(torch.rand(1, 3, 31, 31))


def test_losses_are_categorical_cross_entropy():
    logits = torch.randn(2, 3, 4, 4)
    target = torch.randint(0, 3, (2, 4, 4))
    manual = -torch.log_softmax(logits, 1).gather(1, target[:, None]).mean()
    torch.testing.assert_close(segmentation_loss(logits, target), manual)
    lg = torch.randn(5, 2)
    t = torch.tensor([0, 1, 1, 0, 1])
    torch.testing.assert_close(classification_loss(lg, t), -torch.log_softmax(lg, 1)[torch.arange(5), t].mean())


def test_gaussian_init_std():
    net = UNet(base_channels=8, depth=1, init_std=0.05)
    w = torch.cat([m.weight.detach().flatten() for m in net.modules() if isinstance(m, torch.nn.Conv2d)])
    assert float(w.std()) == pytest.approx(0.05, rel=0.1)


def test_unet_learns_a_colour_segmentation():
    rng = np.random.default_rng(0)
    masks = rng.integers(0, 3, size=(24, 1, 4, 4)).repeat(4, axis=2).repeat(4, axis=3)[:, 0]
    colours = np.array([[0.9, 0.9, 0.9], [0.2, 0.2, 0.8], [0.8, 0.2, 0.2]], dtype=np.float32)
    x = colours[masks].transpose(0, 3, 1, 2) + rng.normal(0, 0.05, size=(24, 3, 16, 16)).astype(np.float32)
    net = UNet(base_channels=4, depth=1)
    hist = train_model(net, (x.astype(np.float32), masks.astype(np.int64)), segmentation_loss, epochs=15,
                       batch_size=8, lr=1e-2, device="cpu", seed=0)
    assert hist[-1] < hist[0] * 0.5
    probs = predict(net, x, device="cpu", forward=softmax_probabilities)
    assert (probs.argmax(1) == masks).mean() > 0.9


def test_patch_classifier_learns_brightness():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 64)
    x = (rng.random((64, 3, 16, 16)) * 0.5 + 0.4 * y[:, None, None, None]).astype(np.float32)
    net = PatchClassifier(base_channels=4, n_blocks=2)
    train_model(net, (x, y.astype(np.int64)), classification_loss, epochs=10, batch_size=16, lr=1e-2,
                device="cpu", seed=0)
    probs = predict(net, x, device="cpu", forward=softmax_probabilities)
    assert probs.shape == (64, 2)
    assert (probs.argmax(1) == y).mean() > 0.9
