"""A U-Net for 3-class histology segmentation and a small patch classifier (Reshma 2021, §3.2).

The thesis trains the U-Net of Ronneberger et al. (2015) from scratch on 384 x 384 patches with 3 output
classes (O, ¬C, C), a per-pixel softmax, categorical cross-entropy and Adam (lr 1e-5, batch 5, 35 epochs);
its widths appear only in a figure (the standard U-Net has 64 -> 1024 channels). Here the width and depth are
parameters (``base_channels``, ``depth``) so the same module serves the CPU phantoms (8-16 channels, 2 levels)
and the GPU profile. The network returns logits; :func:`segmentation_loss` is the categorical cross-entropy of
their per-pixel softmax and :func:`softmax_probabilities` the class-probability map.

The patch classifier stands in for the thesis's G-CNN (Veeling et al. 2018) on PCam-like binary patches: a small
conv net with global average pooling and a 2-way softmax.

``init_std`` reproduces Keras's default initialiser used in the thesis (zero-mean Gaussian, std 0.05) when given;
``None`` keeps PyTorch's default (Kaiming-uniform), which trains faster at small widths.

``norm`` picks the U-Net's normalisation layer (default: BatchNorm, or none with ``batch_norm=False``):
``"group"`` uses GroupNorm (Wu & He 2018, *Group normalization*), which normalises each example by its own
statistics and so behaves identically in train and eval mode (no running statistics to estimate).
``input_mean`` / ``input_std`` (per input channel) standardise the input inside the network,
``(x - mean) / std`` (e.g. the training set's channel statistics; LeCun et al. 1998, *Efficient BackProp*,
§4.3); the default leaves the input as given.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from medeval.models.convolution import Conv2d

__all__ = ["PatchClassifier", "UNet", "classification_loss", "segmentation_loss", "softmax_probabilities"]


def _init_gaussian(module: nn.Module, std: float) -> None:
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
            nn.init.normal_(m.weight, mean=0.0, std=std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


NORMS = ("batch", "group", "none")


def _norm_layer(norm: str, channels: int, groups: int) -> nn.Module | None:
    if norm == "batch":
        return nn.BatchNorm2d(channels)
    if norm == "group":
        return nn.GroupNorm(math.gcd(channels, groups), channels)
    return None


class _DoubleConv(nn.Sequential):
    def __init__(self, c_in: int, c_out: int, batch_norm: bool | str, groups: int = 4):
        norm = batch_norm if isinstance(batch_norm, str) else ("batch" if batch_norm else "none")
        layers: list[nn.Module] = []
        for c in (c_in, c_out):
            layers.append(Conv2d(c, c_out, 3, padding=1, bias=norm == "none"))
            layer = _norm_layer(norm, c_out, groups)
            if layer is not None:
                layers.append(layer)
            layers.append(nn.ReLU(inplace=True))
        super().__init__(*layers)


class UNet(nn.Module):
    """U-Net with ``depth`` down/up levels; channels ``base_channels * 2**level``; 'same' padding.

    Input ``(N, in_channels, H, W)`` with ``H`` and ``W`` divisible by ``2**depth``; output logits
    ``(N, n_classes, H, W)``. ``norm`` (``"batch"``, ``"group"`` or ``"none"``; ``None`` = follow ``batch_norm``)
    picks the normalisation after each convolution; GroupNorm uses ``gcd(channels, norm_groups)`` groups.
    ``input_mean`` / ``input_std`` (length ``in_channels``) standardise the input first.
    """

    def __init__(
        self,
        in_channels: int = 3,
        n_classes: int = 3,
        *,
        base_channels: int = 16,
        depth: int = 2,
        batch_norm: bool = True,
        init_std: float | None = None,
        norm: str | None = None,
        norm_groups: int = 4,
        input_mean=None,
        input_std=None,
    ):
        super().__init__()
        if norm is None:
            norm = "batch" if batch_norm else "none"
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS} or None, got {norm!r}")
        if norm_groups < 1:
            raise ValueError(f"norm_groups must be >= 1, got {norm_groups}")
        if (input_mean is None) != (input_std is None):
            raise ValueError("give both input_mean and input_std, or neither")
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if base_channels < 1:
            raise ValueError(f"base_channels must be >= 1, got {base_channels}")
        if n_classes < 2:
            raise ValueError(f"n_classes must be >= 2, got {n_classes}")
        self.depth = depth
        self.standardise = input_mean is not None
        if self.standardise:
            mean = torch.as_tensor(input_mean, dtype=torch.float32).reshape(1, -1, 1, 1)
            std = torch.as_tensor(input_std, dtype=torch.float32).reshape(1, -1, 1, 1)
            if mean.shape[1] != in_channels or std.shape[1] != in_channels or not bool((std > 0).all()):
                raise ValueError(f"input_mean / input_std must hold {in_channels} values (std > 0)")
            self.register_buffer("input_mean", mean)
            self.register_buffer("input_std", std)
        widths = [base_channels * 2**i for i in range(depth + 1)]
        self.down = nn.ModuleList()
        c = in_channels
        for w in widths[:-1]:
            self.down.append(_DoubleConv(c, w, norm, norm_groups))
            c = w
        self.bottleneck = _DoubleConv(widths[-2], widths[-1], norm, norm_groups)
        self.up = nn.ModuleList()
        self.up_conv = nn.ModuleList()
        for w_hi, w_lo in zip(widths[::-1][:-1], widths[::-1][1:], strict=True):
            self.up.append(nn.ConvTranspose2d(w_hi, w_lo, 2, stride=2))
            self.up_conv.append(_DoubleConv(2 * w_lo, w_lo, norm, norm_groups))
        self.head = Conv2d(widths[0], n_classes, 1)
        if init_std is not None:
            _init_gaussian(self, init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        factor = 2**self.depth
        if x.shape[-1] % factor or x.shape[-2] % factor:
            raise ValueError(f"input height and width must be divisible by {factor}, got {tuple(x.shape[-2:])}")
        if self.standardise:
            x = (x - self.input_mean) / self.input_std
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottleneck(x)
        for up, conv, skip in zip(self.up, self.up_conv, reversed(skips), strict=True):
            x = conv(torch.cat([up(x), skip], dim=1))
        return self.head(x)


class PatchClassifier(nn.Module):
    """A small CNN for binary (or K-class) patch classification: ``n_blocks`` conv-BN-ReLU-pool blocks,
    global average pooling, a linear layer to ``n_classes`` logits."""

    def __init__(
        self,
        in_channels: int = 3,
        n_classes: int = 2,
        *,
        base_channels: int = 16,
        n_blocks: int = 3,
        init_std: float | None = None,
    ):
        super().__init__()
        if n_blocks < 1:
            raise ValueError(f"n_blocks must be >= 1, got {n_blocks}")
        layers: list[nn.Module] = []
        c = in_channels
        for i in range(n_blocks):
            w = base_channels * 2**i
            layers += [Conv2d(c, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
            if i < n_blocks - 1:
                layers.append(nn.MaxPool2d(2))
            c = w
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c, n_classes)
        if init_std is not None:
            _init_gaussian(self, init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


def segmentation_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Categorical cross-entropy of the per-pixel softmax: ``-mean_pixels log softmax(logits)[target]``.

    ``target`` holds class indices ``(N, H, W)``. No class weights (the thesis manipulates the class
    distribution only by sampling).
    """
    return F.cross_entropy(logits, target.long())


def classification_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Categorical cross-entropy of the softmax over ``n_classes`` logits; ``target`` holds class indices."""
    return F.cross_entropy(logits, target.long())


def softmax_probabilities(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Class probabilities ``softmax(model(x))`` over dim 1 (a ``forward`` for ``medeval.models.training.predict``)."""
    return torch.softmax(model(x).float(), dim=1)
