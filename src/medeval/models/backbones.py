"""Convolutional backbones written in torch (no torchvision): a small CPU-sized CNN and ResNet-18/50.

Every backbone maps ``(N, C_in, H, W)`` images to a feature map ``(N, out_channels, H/stride, W/stride)``.
The ResNets follow He et al., "Deep Residual Learning for Image Recognition" (CVPR 2016), with torchvision's
parameter names, so a local torchvision checkpoint (``weights_path``) loads; its RGB stem is summed over
channels when ``in_channels == 1``.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from medeval.models.convolution import Conv2d

BACKBONES = ("small_cnn", "resnet18", "resnet50")


class SmallCNN(nn.Module):
    """``len(widths)`` blocks of conv3x3-BN-ReLU-conv3x3-BN-ReLU-maxpool2; stride ``2**len(widths)``."""

    def __init__(self, in_channels: int = 1, widths: tuple[int, ...] = (16, 32, 64, 128)):
        super().__init__()
        layers: list[nn.Module] = []
        prev = in_channels
        for w in widths:
            layers += [
                Conv2d(prev, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                Conv2d(w, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                nn.MaxPool2d(2),
            ]
            prev = w
        self.features = nn.Sequential(*layers)
        self.out_channels = prev
        self.stride = 2 ** len(widths)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None):
        super().__init__()
        self.conv1 = Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None):
        super().__init__()
        self.conv1 = Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """ResNet feature extractor (no pooling or classifier): stride 32, torchvision parameter names."""

    def __init__(self, block, layers: tuple[int, int, int, int], in_channels: int = 1):
        super().__init__()
        self.inplanes = 64
        self.conv1 = Conv2d(in_channels, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        self.out_channels = 512 * block.expansion
        self.stride = 32
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def _make_layer(self, block, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))


def resnet18(in_channels: int = 1) -> ResNet:
    return ResNet(BasicBlock, (2, 2, 2, 2), in_channels)


def resnet50(in_channels: int = 1) -> ResNet:
    return ResNet(Bottleneck, (3, 4, 6, 3), in_channels)


def load_weights(model: nn.Module, weights_path: str | Path) -> nn.Module:
    """Load a local checkpoint (a state dict, e.g. torchvision's); classifier keys (``fc.*``) are ignored."""
    path = Path(weights_path)
    if not path.is_file():
        raise FileNotFoundError(f"weights_path {path} does not exist (expected a local torch state-dict file)")
    state = torch.load(path, map_location="cpu", weights_only=True)
    state = {k: v for k, v in state.items() if not k.startswith("fc.")}
    stem = state.get("conv1.weight")
    if stem is not None and stem.shape[1] != model.conv1.weight.shape[1]:
        if model.conv1.weight.shape[1] != 1:
            raise ValueError(f"{path}: stem has {stem.shape[1]} input channels, model has {model.conv1.weight.shape[1]}")
        state["conv1.weight"] = stem.sum(dim=1, keepdim=True)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or missing:
        raise ValueError(f"{path}: does not fit the backbone (missing {missing[:5]}, unexpected {unexpected[:5]})")
    return model


def build_backbone(name: str, in_channels: int = 1, weights_path: str | Path | None = None) -> nn.Module:
    """One of :data:`BACKBONES`; ``weights_path`` loads local weights into a ResNet."""
    if name == "small_cnn":
        if weights_path is not None:
            raise ValueError("weights_path is only supported for the ResNet backbones")
        return SmallCNN(in_channels)
    if name == "resnet18":
        model = resnet18(in_channels)
    elif name == "resnet50":
        model = resnet50(in_channels)
    else:
        raise ValueError(f"unknown backbone {name!r}; choose one of {BACKBONES}")
    return load_weights(model, weights_path) if weights_path is not None else model
