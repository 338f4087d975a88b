"""Batch image augmentation on the device, reproducing Keras' ``ImageDataGenerator`` geometric settings.

Thesis §5.5.4 (Reshma 2021, CIFAR-10 task) augments with Keras ``ImageDataGenerator(rotation_range=15,
width_shift_range=5.0/32, height_shift_range=5.0/32, horizontal_flip=True)`` (``fill_mode="nearest"`` and
bilinear interpolation are Keras' defaults). Keras draws, independently for every image,

* an angle ``theta ~ U(-rotation_range, rotation_range)`` degrees,
* a vertical shift ``ty ~ U(-h, h)`` and a horizontal shift ``tx ~ U(-w, w)``, where a range ``r < 1`` is a
  fraction of the image size (``h = r * H``, ``w = r * W``; 5/32 of 32 pixels = 5 pixels) and ``r >= 1`` a
  number of pixels,
* a horizontal flip with probability 0.5,

then resamples the image with ``scipy.ndimage.affine_transform`` (``order=1``: bilinear; ``mode="nearest"``:
points outside the image take the value of the nearest border pixel), rotating about the image centre
``((W - 1) / 2, (H - 1) / 2)`` and shifting, and flips the result left-right (``flip_axis`` after
``apply_affine_transform`` in ``ImageDataGenerator.apply_transform``).

This module does the same for a whole ``(N, C, H, W)`` float batch on its device (CPU or CUDA) with
:func:`torch.nn.functional.affine_grid` / :func:`~torch.nn.functional.grid_sample` (``mode="bilinear"``,
``padding_mode="border"`` = Keras' ``"nearest"`` fill, ``align_corners=False`` = pixel centres at
``(i + 0.5) / size``). Per output pixel ``o`` (pixel coordinates ``(x, y)``, ``y`` downwards) the sampled
input location is

    ``i = c + R(theta) (o - c - d)``,  ``R(theta) = [[cos, -sin], [sin, cos]]``,  ``c = ((W-1)/2, (H-1)/2)``,

so a positive ``theta`` turns the content counter-clockwise as displayed and ``d = (dx, dy)`` moves it by
``dx`` pixels right and ``dy`` pixels down. Keras composes the same matrices (``R`` then the shift, about the
centre); its sign conventions for ``theta`` and the shift may differ from these, which changes nothing because
both are drawn from distributions symmetric about 0. Resampling is linear and border padding repeats pixels,
so augmenting after a per-channel affine normalisation (``(x / 255 - mean) / std``) equals normalising the
augmented raw image, as Keras does. The random parameters come from a ``torch.Generator`` (drawn on the CPU,
so a seed gives the same parameters on any device).
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

__all__ = [
    "KERAS_THESIS_SETTINGS",
    "RandomAffineFlip",
    "affine_flip",
    "random_affine_flip",
    "sample_affine_flip_parameters",
]

#: The ``ImageDataGenerator`` settings of thesis §5.5.4 (CIFAR-10, ResNet50 fine-tuning).
KERAS_THESIS_SETTINGS = {
    "rotation_range": 15.0,
    "width_shift_range": 5.0 / 32,
    "height_shift_range": 5.0 / 32,
    "horizontal_flip": True,
}


def _check_batch(x: torch.Tensor) -> None:
    if not torch.is_tensor(x) or x.dim() != 4:
        raise ValueError(f"x must be a 4-D tensor (N, C, H, W), got {getattr(x, 'shape', type(x))}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got dtype {x.dtype}")


def affine_flip(
    x: torch.Tensor,
    angle: torch.Tensor,
    shift: torch.Tensor,
    flip: torch.Tensor,
) -> torch.Tensor:
    """Rotate, shift and (where ``flip``) mirror every image of a batch with its own parameters.

    Parameters
    ----------
    x : (N, C, H, W) floating-point tensor, on any device.
    angle : (N,) rotation angles in degrees; positive turns the content counter-clockwise as displayed.
    shift : (N, 2) content displacement in pixels, ``(dx, dy)``: ``dx > 0`` moves it right, ``dy > 0`` down.
    flip : (N,) booleans; flagged images are mirrored left-right *after* the affine resampling (Keras order).

    Returns a new tensor of the shape, dtype and device of ``x``: bilinear resampling at
    ``i = c + R(angle) (o - c - shift)`` with border (Keras ``"nearest"``) padding, see the module docstring.
    When every angle and shift is 0 no resampling is done, so the result equals ``x`` (or its flip) exactly.
    """
    _check_batch(x)
    n, _, h, w = x.shape
    angle = torch.as_tensor(angle, dtype=torch.float64).detach().cpu().reshape(-1)
    shift = torch.as_tensor(shift, dtype=torch.float64).detach().cpu()
    flip = torch.as_tensor(flip).detach().cpu().reshape(-1).bool()
    if angle.numel() != n:
        raise ValueError(f"angle must have one value per image ({n}), got {angle.numel()}")
    if shift.shape != (n, 2):
        raise ValueError(f"shift must have shape ({n}, 2) (dx, dy in pixels), got {tuple(shift.shape)}")
    if flip.numel() != n:
        raise ValueError(f"flip must have one flag per image ({n}), got {flip.numel()}")
    if bool(torch.any(angle != 0)) or bool(torch.any(shift != 0)):
        rad = angle * (math.pi / 180.0)
        cos, sin = torch.cos(rad), torch.sin(rad)
        dx, dy = shift[:, 0], shift[:, 1]
        # normalised coordinates n = (p - c) / (size / 2) per axis: n_in = D^-1 R D n_out - D^-1 R d
        theta = torch.empty((n, 2, 3), dtype=torch.float64)
        theta[:, 0, 0] = cos
        theta[:, 0, 1] = -sin * (h / w)
        theta[:, 1, 0] = sin * (w / h)
        theta[:, 1, 1] = cos
        theta[:, 0, 2] = -(cos * dx - sin * dy) * (2.0 / w)
        theta[:, 1, 2] = -(sin * dx + cos * dy) * (2.0 / h)
        theta = theta.to(device=x.device, dtype=x.dtype)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        out = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    else:
        out = x.clone()
    if bool(torch.any(flip)):
        mask = flip.to(x.device).view(n, 1, 1, 1)
        out = torch.where(mask, out.flip(-1), out)
    return out


def _shift_pixels(shift_range: float, size: int, name: str) -> float:
    if not math.isfinite(shift_range) or shift_range < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {shift_range!r}")
    return shift_range * size if shift_range < 1 else float(shift_range)


def sample_affine_flip_parameters(
    n: int,
    height: int,
    width: int,
    *,
    rotation_range: float = 15.0,
    width_shift_range: float = 5.0 / 32,
    height_shift_range: float = 5.0 / 32,
    horizontal_flip: bool = True,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw Keras ``ImageDataGenerator`` parameters for ``n`` images of size ``height`` x ``width``.

    ``angle ~ U(-rotation_range, rotation_range)`` degrees; ``dy ~ U(-h, h)`` and ``dx ~ U(-w, w)`` pixels,
    where ``h = height_shift_range * height`` if ``height_shift_range < 1`` else ``height_shift_range`` pixels
    (likewise ``w``); ``flip ~ Bernoulli(0.5)`` if ``horizontal_flip`` else all False. Drawn in that order
    (Keras' order) as float64 on the CPU from ``generator`` (default: torch's global generator).
    Returns ``(angle (n,), shift (n, 2) as (dx, dy), flip (n,) bool)``, all on the CPU.
    """
    if int(n) != n or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if not math.isfinite(rotation_range) or rotation_range < 0:
        raise ValueError(f"rotation_range must be a finite number of degrees >= 0, got {rotation_range!r}")
    h = _shift_pixels(height_shift_range, height, "height_shift_range")
    w = _shift_pixels(width_shift_range, width, "width_shift_range")
    device = generator.device if generator is not None else torch.device("cpu")

    def uniform(bound: float) -> torch.Tensor:
        u = torch.rand(int(n), generator=generator, dtype=torch.float64, device=device).cpu()
        return (2.0 * u - 1.0) * bound

    angle = uniform(float(rotation_range))
    dy = uniform(h)
    dx = uniform(w)
    if horizontal_flip:
        flip = torch.rand(int(n), generator=generator, dtype=torch.float64, device=device).cpu() < 0.5
    else:
        flip = torch.zeros(int(n), dtype=torch.bool)
    return angle, torch.stack([dx, dy], dim=1), flip


def random_affine_flip(
    x: torch.Tensor,
    *,
    rotation_range: float = 15.0,
    width_shift_range: float = 5.0 / 32,
    height_shift_range: float = 5.0 / 32,
    horizontal_flip: bool = True,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Augment a (N, C, H, W) float batch like Keras ``ImageDataGenerator`` (defaults: thesis §5.5.4).

    Draws one set of parameters per image (:func:`sample_affine_flip_parameters`) and applies them
    (:func:`affine_flip`). Shape, dtype and device are preserved.
    """
    _check_batch(x)
    angle, shift, flip = sample_affine_flip_parameters(
        x.shape[0],
        x.shape[2],
        x.shape[3],
        rotation_range=rotation_range,
        width_shift_range=width_shift_range,
        height_shift_range=height_shift_range,
        horizontal_flip=horizontal_flip,
        generator=generator,
    )
    return affine_flip(x, angle, shift, flip)


class RandomAffineFlip:
    """A seeded augmentation callable ``aug(x) -> x'`` for training loops (see :func:`random_affine_flip`).

    Holds its own CPU ``torch.Generator`` seeded with ``seed``, so a training run draws the same sequence of
    augmentations on every device. The defaults are the thesis settings (:data:`KERAS_THESIS_SETTINGS`).
    """

    def __init__(
        self,
        *,
        rotation_range: float = 15.0,
        width_shift_range: float = 5.0 / 32,
        height_shift_range: float = 5.0 / 32,
        horizontal_flip: bool = True,
        seed: int = 0,
    ):
        # validate once, eagerly
        sample_affine_flip_parameters(
            0,
            1,
            1,
            rotation_range=rotation_range,
            width_shift_range=width_shift_range,
            height_shift_range=height_shift_range,
            horizontal_flip=horizontal_flip,
        )
        self.rotation_range = float(rotation_range)
        self.width_shift_range = float(width_shift_range)
        self.height_shift_range = float(height_shift_range)
        self.horizontal_flip = bool(horizontal_flip)
        self.seed = int(seed)
        self.generator = torch.Generator().manual_seed(self.seed)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return random_affine_flip(
            x,
            rotation_range=self.rotation_range,
            width_shift_range=self.width_shift_range,
            height_shift_range=self.height_shift_range,
            horizontal_flip=self.horizontal_flip,
            generator=self.generator,
        )

    def __repr__(self) -> str:
        return (
            f"RandomAffineFlip(rotation_range={self.rotation_range}, width_shift_range={self.width_shift_range}, "
            f"height_shift_range={self.height_shift_range}, horizontal_flip={self.horizontal_flip}, "
            f"seed={self.seed})"
        )
