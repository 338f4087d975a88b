"""Stacked ensembles (medeval.models.ensemble): every member trains exactly as it would alone.

Bit-identity is asserted under the pinned numerics the chapters run with (oneDNN off but for the direct
convolutions of medeval.models.convolution, torch's own kernels for the rest, one thread; medeval.runtime.numerics). Under native numerics oneDNN computes a grouped convolution in another order
than the plain one; that case is measured, not asserted (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from medeval.models.ensemble import StackedBatchNorm, member_batches, train_ensemble
from medeval.models.training import train_model
from medeval.models.unet import PatchClassifier, UNet, classification_loss, segmentation_loss


@pytest.fixture(autouse=True)
def pinned_torch():
    """The chapters' pinned torch settings for the test, restored afterwards."""
    threads, onednn = torch.get_num_threads(), torch.backends.mkldnn.enabled
    torch.set_num_threads(1)
    torch.backends.mkldnn.enabled = False
    yield
    torch.set_num_threads(threads)
    torch.backends.mkldnn.enabled = onednn


def test_the_members_convolutions_run_on_the_direct_kernels_here():
    """The bit-identity tests below cover the kernels the chapters train with: the U-Net's 3 x 3 and 1 x 1
    convolutions on oneDNN's direct kernels, its transposed ones on torch's path."""
    from medeval.models.convolution import runs_on_direct_kernels

    x = torch.zeros(2, 8, 16, 16)
    assert runs_on_direct_kernels(x, torch.zeros(8, 8, 3, 3), 1, 1)
    assert runs_on_direct_kernels(x, torch.zeros(3, 8, 1, 1), 1, 0)


def _seeded(factory, seeds):
    models = []
    for s in seeds:
        torch.manual_seed(s)
        models.append(factory())
    return models


def _segmentation_data(n_members, n=21, size=16, seed=0):
    """Images as the chapters hold them: NHWC arrays seen as NCHW (a strided view, not a contiguous array)."""
    rng = np.random.default_rng(seed)
    return [(rng.random((n, size, size, 3), dtype=np.float32).transpose(0, 3, 1, 2), rng.integers(0, 3, (n, size, size)))
            for _ in range(n_members)]


def _assert_same_state(a: torch.nn.Module, b: torch.nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sa:
        assert torch.equal(sa[k], sb[k]), f"{k} differs by {(sa[k].double() - sb[k].double()).abs().max():.3g}"


@pytest.mark.parametrize(("norm", "n", "batch_size"), [("batch", 21, 8), ("none", 21, 8), ("group", 21, 8),
                                                       ("batch", 70, 32)])
def test_unet_members_train_exactly_as_alone(norm, n, batch_size):
    """A partial last batch every epoch; at batch 32 PyTorch's grouped convolution (the 1 x 1 head with its bias)
    already computes in another order than the layer alone, which the exact mode avoids."""
    seeds = [3, 11, 7]
    data = _segmentation_data(len(seeds), n=n)
    options = {"epochs": 3, "batch_size": batch_size, "lr": 3e-3, "device": "cpu", "amp": False, "warmup_epochs": 0.5,
               "recalibrate_bn": norm == "batch"}
    members = _seeded(lambda: UNet(base_channels=4, depth=1, norm=norm), seeds)
    alone = [copy.deepcopy(m) for m in members]
    histories = train_ensemble(members, data, segmentation_loss, seeds=[100 + s for s in seeds], **options)
    for m, (model, x, s) in enumerate(zip(alone, data, seeds, strict=True)):
        expected = train_model(model, x, segmentation_loss, seed=100 + s, **options)
        assert histories[m] == expected
        _assert_same_state(model, members[m])


def test_classifier_members_with_linear_heads_train_exactly_as_alone():
    seeds = [0, 1]
    rng = np.random.default_rng(4)
    data = [(rng.random((30, 3, 8, 8), dtype=np.float32), rng.integers(0, 2, 30)) for _ in seeds]
    members = _seeded(lambda: PatchClassifier(base_channels=4, n_blocks=2), seeds)
    alone = [copy.deepcopy(m) for m in members]
    histories = train_ensemble(members, data, classification_loss, seeds=seeds, epochs=2, batch_size=7, lr=1e-2,
                               device="cpu", amp=False)
    for m, model in enumerate(alone):
        assert histories[m] == train_model(model, data[m], classification_loss, epochs=2, batch_size=7, lr=1e-2,
                                           device="cpu", seed=seeds[m], amp=False)
        _assert_same_state(model, members[m])


def test_the_grouped_mode_equals_training_alone_up_to_rounding():
    """``exact=False`` (the GPU default: one grouped convolution for all members) on the CPU: after one epoch every
    weight is within 1e-4 of training alone (rounding, amplified by a few Adam steps), and not always equal."""
    seeds = [0, 1]
    data = _segmentation_data(2, n=64)
    members = _seeded(lambda: UNet(base_channels=4, depth=1), seeds)
    alone = [copy.deepcopy(m) for m in members]
    train_ensemble(members, data, segmentation_loss, seeds=seeds, epochs=1, batch_size=32, device="cpu", amp=False,
                   exact=False)
    for m, model in enumerate(alone):
        train_model(model, data[m], segmentation_loss, epochs=1, batch_size=32, device="cpu", seed=seeds[m], amp=False)
        for k, v in model.state_dict().items():
            torch.testing.assert_close(members[m].state_dict()[k], v, rtol=0, atol=1e-4, msg=k)


def test_one_member_is_a_plain_training_run():
    data = _segmentation_data(1, n=12)
    (member,) = _seeded(lambda: UNet(base_channels=4, depth=1), [5])
    alone = copy.deepcopy(member)
    h = train_ensemble([member], data, segmentation_loss, seeds=[9], epochs=2, batch_size=5, device="cpu", amp=False)
    assert h == [train_model(alone, data[0], segmentation_loss, epochs=2, batch_size=5, device="cpu", seed=9,
                             amp=False)]
    _assert_same_state(alone, member)


def test_a_member_does_not_depend_on_its_companions():
    """Member 0's result is the same whichever other members train beside it (and however many)."""
    data = _segmentation_data(3, n=10, seed=1)
    results = []
    for companions in ([], [1], [1, 2]):
        models = _seeded(lambda: UNet(base_channels=4, depth=1), [0, *companions])
        train_ensemble(models, [data[0], *[data[c] for c in companions]], segmentation_loss,
                       seeds=[0, *companions], epochs=2, batch_size=4, device="cpu", amp=False)
        results.append(models[0])
    _assert_same_state(results[0], results[1])
    _assert_same_state(results[0], results[2])


def test_member_batches_are_the_training_loops_batches():
    """The index batches drawn for a member are those train_model's loader draws (same seed, one draw per epoch):
    training on the indices themselves records them."""
    seen = []

    class Probe(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))

        def forward(self, x):
            seen.append(x[:, 0].long().tolist())
            return self.w * x

    n, bs, seed = 11, 4, 42
    x = torch.arange(n, dtype=torch.float32).reshape(n, 1)
    train_model(Probe(), (x, torch.zeros(n)), lambda out, y: (out.squeeze(1) - y).pow(2).mean(), epochs=3,
                batch_size=bs, device="cpu", seed=seed, amp=False)
    batches = member_batches(n, bs, seed)
    drawn = [b[0].tolist() for _ in range(3) for b in batches]
    assert drawn == seen
    assert sorted(sum(drawn[:3], [])) == list(range(n))


def test_stacked_batch_norm_equals_batch_norm_outside_vmap():
    torch.manual_seed(0)
    x = torch.randn(6, 5, 4, 4)
    for training in (True, False):
        ref = torch.nn.BatchNorm2d(5)
        ref.running_mean.uniform_()
        ref.train(training)
        mine = copy.deepcopy(ref)
        mine.__class__ = StackedBatchNorm
        assert torch.equal(ref(x), mine(x))
        _assert_same_state(ref, mine)


def test_refusals_name_what_is_wrong():
    data = _segmentation_data(2, n=8)
    models = _seeded(lambda: UNet(base_channels=4, depth=1), [0, 1])
    kw = {"epochs": 1, "device": "cpu", "amp": False}
    with pytest.raises(ValueError, match="same number of training examples, got \\[8, 5\\]"):
        train_ensemble(models, [data[0], (data[1][0][:5], data[1][1][:5])], segmentation_loss, seeds=[0, 1], **kw)
    with pytest.raises(ValueError, match="one entry per member"):
        train_ensemble(models, data, segmentation_loss, seeds=[0], **kw)
    with pytest.raises(ValueError, match=r"models\[1\] differs"):
        train_ensemble([models[0], UNet(base_channels=8, depth=1)], data, segmentation_loss, seeds=[0, 1], **kw)
    with pytest.raises(ValueError, match="at least one model"):
        train_ensemble([], [], segmentation_loss, seeds=[], **kw)
    with pytest.raises(ValueError, match="epochs must be an integer >= 0"):
        train_ensemble(models, data, segmentation_loss, seeds=[0, 1], epochs=-1, device="cpu")
    for m in models:
        for bn in m.modules():
            if isinstance(bn, torch.nn.BatchNorm2d):
                bn.momentum = None
    with pytest.raises(ValueError, match="momentum=None"):
        train_ensemble(models, data, segmentation_loss, seeds=[0, 1], **kw)


def test_stacked_linear_and_group_norm_equal_their_layers_outside_vmap():
    from medeval.models.ensemble import StackedGroupNorm, StackedLinear

    torch.manual_seed(1)
    for ref, cls, shape in ((torch.nn.Linear(5, 3), StackedLinear, (4, 5)),
                            (torch.nn.GroupNorm(2, 6), StackedGroupNorm, (3, 6, 2, 2))):
        mine = copy.deepcopy(ref)
        mine.__class__ = cls
        x = torch.randn(*shape, requires_grad=True)
        x2 = x.detach().clone().requires_grad_()
        ref(x).square().sum().backward()
        mine(x2).square().sum().backward()
        assert torch.equal(x.grad, x2.grad)
        for (k, p), q in zip(ref.named_parameters(), mine.parameters(), strict=True):
            assert torch.equal(p.grad, q.grad), k
