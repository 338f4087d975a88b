"""2-D convolutions on CPU kernels that compute the same bits on every x86-64 CPU with AVX2, and fast.

Pinned numerics (:mod:`medeval.runtime.numerics`) switch torch's oneDNN backend off, because some of oneDNN's
kernels choose how they block a sum by the CPU's caches (its ``brgconv`` kernels: the U-Net's transposed
convolutions, and any convolution on channels-last data). Without oneDNN a convolution runs on torch's im2col +
MKL products and NNPACK, which cost a training step of the chapters' networks 1.2-1.8x the time of oneDNN's
(``benchmarks/bench_training_step.py``).

One family of oneDNN kernels does not look at the caches: its direct AVX2 convolutions, ``jit:avx2`` (3 x 3) and
``jit_1x1:avx2`` (1 x 1), forward and both backward passes. Their blocking is fixed by the shape alone: 8
channels a block, 12 input-channel blocks a call (forward), and the register tiling follows the output width
(``jit_avx2_conv_kernel_f32.cpp``, ``jit_avx2_1x1_conv_kernel_f32.cpp``, oneDNN 3.12); the L1 and L2 sizes they
read only cap the thread count or split the rows among threads, which with one thread changes no sum. With the
ISA capped at AVX2 (``ONEDNN_MAX_CPU_ISA``) every implementation oneDNN lists before them turns a float32
training convolution on torch's plain (NCHW) layout down for its layout, stride or kernel size, not for the
machine (``ONEDNN_VERBOSE=dispatch``). So :func:`conv2d` runs exactly those convolutions on oneDNN, with the
backend switched on for that call only: float32 on the CPU, NCHW (channels-last input is made contiguous
first), stride 1, dilation 1, one group, a 1 x 1 kernel without padding or a 3 x 3 kernel with padding 1, while
pinned numerics keep oneDNN off. Every other convolution (strided, grouped, transposed, on a GPU, under
``vmap``) computes as before. ``medeval verify --kernels`` compares these kernels' bits with the ones recorded
(:data:`medeval.runtime.numerics.KERNEL_BITS`, family ``onednn_direct_convolution``).
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["Conv2d", "conv2d", "runs_on_direct_kernels"]


@contextlib.contextmanager
def _onednn_on():
    """oneDNN on for the block, nothing else touched (``torch.backends.mkldnn.flags`` would also set its
    deterministic, TF32 and fp32-precision flags)."""
    was = torch._C._get_mkldnn_enabled()
    torch._C._set_mkldnn_enabled(True)
    try:
        yield
    finally:
        torch._C._set_mkldnn_enabled(was)


def _pair(v) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else tuple(int(u) for u in v)


def runs_on_direct_kernels(x: torch.Tensor, weight: torch.Tensor, stride=1, padding=0, dilation=1,
                           groups: int = 1) -> bool:
    """Whether :func:`conv2d` computes this convolution on oneDNN's direct AVX2 kernels: pinned numerics (oneDNN
    off for everything else), float32 on the CPU, outside ``vmap``, stride 1, dilation 1, one group, and a 1 x 1
    kernel without padding or a 3 x 3 kernel with padding 1."""
    if torch._C._get_mkldnn_enabled() or x.device.type != "cpu" or weight.device.type != "cpu":
        return False  # oneDNN already on for everything (native numerics), or a GPU
    if x.dtype != torch.float32 or weight.dtype != torch.float32 or x.dim() != 4 or int(groups) != 1:
        return False
    if torch._C._functorch.is_batchedtensor(x) or torch._C._functorch.is_batchedtensor(weight):
        return False
    if _pair(stride) != (1, 1) or _pair(dilation) != (1, 1) or isinstance(padding, str):
        return False
    kernel = tuple(weight.shape[2:])
    return (kernel, _pair(padding)) in (((1, 1), (0, 0)), ((3, 3), (1, 1)))


class _DirectConvolution(torch.autograd.Function):
    """A convolution and its backward on oneDNN's direct AVX2 kernels (the backend on for this call only)."""

    @staticmethod
    def forward(x, weight, bias, padding):
        with _onednn_on():
            return F.conv2d(x, weight, bias, 1, padding)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight, bias, padding = inputs
        ctx.save_for_backward(x, weight)
        ctx.padding = padding
        ctx.has_bias = bias is not None

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        mask = [need[0], need[1], ctx.has_bias and need[2]]
        with _onednn_on():
            gx, gw, gb = torch.ops.aten.convolution_backward(
                grad_out.contiguous(), x, weight, [weight.shape[0]] if ctx.has_bias else None, [1, 1],
                list(ctx.padding), [1, 1], False, [0, 0], 1, mask)
        return gx, gw, gb if ctx.has_bias else None, None


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> torch.Tensor:
    r"""``torch.nn.functional.conv2d``, on oneDNN's direct AVX2 kernels where :func:`runs_on_direct_kernels` says
    so (the same bits on every AVX2 CPU; a training step of the chapters' networks 1.15-1.7x faster than on
    torch's im2col path), else unchanged.

    .. math::

       y_{n,o,i,j} = b_o + \sum_{c} \sum_{u,v} w_{o,c,u,v}\, x_{n,c,\,i+u-p,\,j+v-p}
    """
    if runs_on_direct_kernels(x, weight, stride, padding, dilation, groups):
        return _DirectConvolution.apply(x.contiguous(), weight.contiguous(), bias, _pair(padding))
    return F.conv2d(x, weight, bias, stride, padding, dilation, groups)


class Conv2d(nn.Conv2d):
    """``nn.Conv2d`` computing through :func:`conv2d` (same parameters and state dict)."""

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return super()._conv_forward(input, weight, bias)
        return conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)
