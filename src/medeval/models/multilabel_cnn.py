"""A weakly supervised multi-label CNN with class activation maps (Zhou et al., CVPR 2016).

Backbone feature map f_k(x, y) -> global average pooling -> linear layer (weights w_k^c) -> one logit per
class. The class activation map of class c is M_c(x, y) = sum_k w_k^c f_k(x, y) (Zhou et al. Eq. 2), upsampled
bilinearly to the input size. Used by chapter 2 (boxes from thresholded CAMs, as in Wang et al. 2017) and
chapter 5 (multi-label classification on chest phantoms).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from medeval.models.backbones import build_backbone


class MultiLabelCNN(nn.Module):
    def __init__(self, n_classes: int, backbone: str = "small_cnn", in_channels: int = 1,
                 weights_path: str | Path | None = None):
        super().__init__()
        if n_classes < 1:
            raise ValueError(f"n_classes must be >= 1, got {n_classes}")
        self.backbone = build_backbone(backbone, in_channels, weights_path)
        self.classifier = nn.Linear(self.backbone.out_channels, n_classes)
        self.n_classes = n_classes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(N, n_classes)``; apply a sigmoid for probabilities."""
        features = self.backbone(x)
        return self.classifier(features.mean(dim=(2, 3)))

    def class_activation_maps(self, x: torch.Tensor, upsample: bool = True) -> torch.Tensor:
        """``(N, n_classes, H, W)`` maps M_c = sum_k w_k^c f_k (no bias), at the input size when ``upsample``."""
        features = self.backbone(x)
        cams = torch.einsum("nkhw,ck->nchw", features, self.classifier.weight)
        if upsample:
            cams = F.interpolate(cams, size=x.shape[-2:], mode="bilinear", align_corners=False)
        return cams
