"""The models' 2-D convolution (:mod:`medeval.models.convolution`): oneDNN's direct AVX2 kernels for the shapes
whose blocking no CPU property changes, torch's own path for every other one."""

import pytest
import torch
import torch.nn.functional as F

from medeval.models.convolution import Conv2d, conv2d, runs_on_direct_kernels


@pytest.fixture
def onednn_off():
    """Pinned numerics' setting: oneDNN off for everything but the direct convolutions."""
    was = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    yield
    torch.backends.mkldnn.enabled = was


def _forward_backward(fn, x, w, b, padding):
    x = x.detach().requires_grad_(True)
    w = w.detach().requires_grad_(True)
    b = None if b is None else b.detach().requires_grad_(True)
    y = fn(x, w, b, padding=padding)
    y.backward(torch.linspace(-1, 1, y.numel()).reshape(y.shape))
    return [y.detach(), x.grad, w.grad] + ([] if b is None else [b.grad])


@pytest.mark.parametrize("c_in, c_out, k, bias", [(3, 8, 3, True), (16, 8, 3, False), (136, 16, 3, True),
                                                  (8, 3, 1, True), (1, 8, 3, True)])
def test_a_direct_convolution_computes_onednns_bits_and_agrees_with_im2col(onednn_off, c_in, c_out, k, bias):
    torch.manual_seed(0)
    x, w = torch.randn(6, c_in, 12, 12), torch.randn(c_out, c_in, k, k) / (c_in * k * k) ** 0.5
    b = torch.randn(c_out) if bias else None
    assert runs_on_direct_kernels(x, w, 1, k // 2)
    mine = _forward_backward(conv2d, x, w, b, k // 2)
    im2col = _forward_backward(F.conv2d, x, w, b, k // 2)  # oneDNN off: torch's own kernels
    torch.backends.mkldnn.enabled = True
    onednn = _forward_backward(F.conv2d, x, w, b, k // 2)
    for a, o, ref in zip(mine, onednn, im2col, strict=True):
        assert torch.equal(a, o)  # the very kernels oneDNN runs when it is on
        # the same convolution, summed in another order: float32 rounding relative to the array's scale
        assert float((a - ref).abs().max()) <= 1e-5 * float(ref.abs().max())


@pytest.mark.parametrize("change", ["stride", "groups", "dilation", "padding", "float64", "kernel5", "onednn_on"])
def test_every_other_convolution_stays_on_torchs_path(onednn_off, change):
    x, w = torch.randn(2, 4, 9, 9), torch.randn(4, 4, 3, 3)
    kw = {"stride": 1, "padding": 1, "dilation": 1, "groups": 1}
    if change == "stride":
        kw["stride"] = 2
    elif change == "groups":
        kw["groups"], w = 2, w[:, :2]
    elif change == "dilation":
        kw["dilation"] = 2
    elif change == "padding":
        kw["padding"] = 0
    elif change == "float64":
        x, w = x.double(), w.double()
    elif change == "kernel5":
        w = torch.randn(4, 4, 5, 5)
        kw["padding"] = 2
    elif change == "onednn_on":  # native numerics: oneDNN runs every convolution anyway
        torch.backends.mkldnn.enabled = True
    assert not runs_on_direct_kernels(x, w, **kw)
    assert torch.equal(conv2d(x, w, None, **kw), F.conv2d(x, w, None, **kw))


def test_under_vmap_the_convolution_stays_on_torchs_batching_rule(onednn_off):
    """A batched (vmapped) input is left to torch's own rule: the direct path's autograd function has none, so
    routing it there would raise."""
    torch.manual_seed(2)
    xs, w = torch.randn(3, 2, 4, 6, 6), torch.randn(5, 4, 3, 3)
    stacked = torch.vmap(lambda x: conv2d(x, w, None, padding=1))(xs)
    for i in range(3):
        assert float((stacked[i] - conv2d(xs[i], w, None, padding=1)).abs().max()) <= 1e-5 * float(stacked.abs().max())


def test_channels_last_input_is_computed_on_the_plain_layout(onednn_off):
    """oneDNN's kernels for channels-last data block by the caches (brgconv): such input is made NCHW first."""
    torch.manual_seed(1)
    x, w = torch.randn(4, 8, 10, 10), torch.randn(8, 8, 3, 3)
    channels_last = x.to(memory_format=torch.channels_last)
    assert torch.equal(conv2d(channels_last, w, None, padding=1), conv2d(x, w, None, padding=1))


def test_the_layer_keeps_nn_conv2d_parameters_and_modes():
    torch.manual_seed(2)
    ref = torch.nn.Conv2d(3, 5, 3, padding=1)
    layer = Conv2d(3, 5, 3, padding=1)
    layer.load_state_dict(ref.state_dict())
    assert list(layer.state_dict()) == list(ref.state_dict())
    x = torch.randn(2, 3, 7, 7)
    torch.testing.assert_close(layer(x), ref(x), rtol=1e-5, atol=1e-6)
    circular = Conv2d(3, 5, 3, padding=1, padding_mode="circular")
    circular.load_state_dict(ref.state_dict())
    torch.testing.assert_close(circular(x), F.conv2d(F.pad(x, (1, 1, 1, 1), mode="circular"), ref.weight, ref.bias))


def test_gradients_match_finite_differences(onednn_off):
    torch.manual_seed(3)
    x = torch.randn(2, 3, 5, 5, dtype=torch.float32, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    y = conv2d(x, w, b, padding=1)
    y.square().sum().backward()
    eps = 1e-2
    for t, idx in ((x, (1, 2, 3, 4)), (w, (2, 1, 0, 2)), (b, (3,))):
        with torch.no_grad():
            t[idx] += eps
            up = conv2d(x, w, b, padding=1).square().sum()
            t[idx] -= 2 * eps
            down = conv2d(x, w, b, padding=1).square().sum()
            t[idx] += eps
        assert abs(float(t.grad[idx]) - float(up - down) / (2 * eps)) < 2e-2 * max(1.0, abs(float(t.grad[idx])))
