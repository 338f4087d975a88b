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
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["PatchClassifier", "UNet", "classification_loss", "segmentation_loss", "softmax_probabilities"]


def _init_gaussian(module: nn.Module, std: float) -> None:
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
            nn.init.normal_(m.weight, mean=0.0, std=std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


class _DoubleConv(nn.Sequential):
    def __init__(self, c_in: int, c_out: int, batch_norm: bool):
        layers: list[nn.Module] = []
        for c in (c_in, c_out):
            layers.append(nn.Conv2d(c, c_out, 3, padding=1, bias=not batch_norm))
            if batch_norm:
                layers.append(nn.BatchNorm2d(c_out))
            layers.append(nn.ReLU(inplace=True))
        super().__init__(*layers)


class UNet(nn.Module):
    """U-Net with ``depth`` down/up levels; channels ``base_channels * 2**level``; 'same' padding.

    Input ``(N, in_channels, H, W)`` with ``H`` and ``W`` divisible by ``2**depth``; output logits
    ``(N, n_classes, H, W)``.
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
    ):
        super().__init__()
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if base_channels < 1:
            raise ValueError(f"base_channels must be >= 1, got {base_channels}")
        if n_classes < 2:
            raise ValueError(f"n_classes must be >= 2, got {n_classes}")
        self.depth = depth
        widths = [base_channels * 2**i for i in range(depth + 1)]
        self.down = nn.ModuleList()
        c = in_channels
        for w in widths[:-1]:
            self.down.append(_DoubleConv(c, w, batch_norm))
            c = w
        self.bottleneck = _DoubleConv(widths[-2], widths[-1], batch_norm)
        self.up = nn.ModuleList()
        self.up_conv = nn.ModuleList()
        for w_hi, w_lo in zip(widths[::-1][:-1], widths[::-1][1:], strict=True):
            self.up.append(nn.ConvTranspose2d(w_hi, w_lo, 2, stride=2))
            self.up_conv.append(_DoubleConv(2 * w_lo, w_lo, batch_norm))
        self.head = nn.Conv2d(widths[0], n_classes, 1)
        if init_std is not None:
            _init_gaussian(self, init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        factor = 2**self.depth
        if x.shape[-1] % factor or x.shape[-2] % factor:
            raise ValueError(f"input height and width must be divisible by {factor}, got {tuple(x.shape[-2:])}")
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
            layers += [nn.Conv2d(c, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
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
