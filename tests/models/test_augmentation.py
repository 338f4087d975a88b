"""Keras-ImageDataGenerator-like batch augmentation (thesis §5.5.4): geometry, randomness, devices."""

from __future__ import annotations

import math

import pytest
import torch

from medeval.models import augmentation as A


def _batch(n=6, c=3, h=8, w=8, seed=0):
    return torch.rand(n, c, h, w, generator=torch.Generator().manual_seed(seed))


def test_zero_ranges_and_no_flip_are_the_identity():
    x = _batch()
    out = A.random_affine_flip(
        x, rotation_range=0, width_shift_range=0, height_shift_range=0, horizontal_flip=False
    )
    assert out is not x
    assert torch.equal(out, x)


def test_flip_only_equals_torch_flip_on_the_flagged_samples():
    x = _batch(n=64)
    gen = torch.Generator().manual_seed(3)
    out = A.random_affine_flip(
        x, rotation_range=0, width_shift_range=0, height_shift_range=0, horizontal_flip=True, generator=gen
    )
    _, _, flags = A.sample_affine_flip_parameters(
        64, 8, 8, rotation_range=0, width_shift_range=0, height_shift_range=0,
        generator=torch.Generator().manual_seed(3),
    )  # fmt: skip
    assert 10 < int(flags.sum()) < 54  # p = 0.5
    for i in range(64):
        expected = torch.flip(x[i], dims=(-1,)) if flags[i] else x[i]
        assert torch.equal(out[i], expected), i


@pytest.mark.parametrize("k,angle", [(1, 90.0), (-1, -90.0), (2, 180.0)])
def test_right_angle_rotation_equals_rot90(k, angle):
    x = _batch(n=2, h=7, w=7)
    out = A.affine_flip(x, torch.full((2,), angle), torch.zeros(2, 2), torch.zeros(2, dtype=torch.bool))
    torch.testing.assert_close(out, torch.rot90(x, k, dims=(-2, -1)), atol=1e-5, rtol=0)


def test_integer_shift_moves_content_and_pads_with_the_border():
    x = torch.arange(1 * 1 * 5 * 6, dtype=torch.float32).reshape(1, 1, 5, 6)
    out = A.affine_flip(x, torch.zeros(1), torch.tensor([[2.0, -1.0]]), torch.zeros(1, dtype=torch.bool))
    # content moves 2 px right and 1 px up: out[r, c] = x[r + 1, c - 2], indices clamped ("nearest" fill)
    expected = torch.empty_like(x)
    for r in range(5):
        for c in range(6):
            expected[0, 0, r, c] = x[0, 0, min(r + 1, 4), max(c - 2, 0)]
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=0)


def test_flip_is_applied_after_the_affine_part():
    x = _batch(n=1, h=6, w=10)
    angle, shift = torch.tensor([20.0]), torch.tensor([[1.5, -0.5]])
    plain = A.affine_flip(x, angle, shift, torch.tensor([False]))
    flipped = A.affine_flip(x, angle, shift, torch.tensor([True]))
    assert torch.equal(flipped, torch.flip(plain, dims=(-1,)))


def test_shape_dtype_device_are_preserved_and_values_stay_in_range():
    x = _batch(n=5, c=3, h=12, w=16).double()
    out = A.random_affine_flip(x, generator=torch.Generator().manual_seed(0))
    assert out.shape == x.shape and out.dtype == x.dtype and out.device == x.device
    # bilinear interpolation with border padding is a convex combination of input pixels
    assert out.min() >= x.min() - 1e-9 and out.max() <= x.max() + 1e-9
    assert not torch.equal(out, x)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_tensors_give_the_cpu_result():
    x = _batch(n=4)
    cpu = A.random_affine_flip(x, generator=torch.Generator().manual_seed(1))
    gpu = A.random_affine_flip(x.cuda(), generator=torch.Generator().manual_seed(1))
    assert gpu.device.type == "cuda"
    torch.testing.assert_close(gpu.cpu(), cpu, atol=1e-5, rtol=0)


def test_parameters_follow_the_keras_ranges():
    n = 4000
    angle, shift, flip = A.sample_affine_flip_parameters(
        n, 32, 64, rotation_range=15, width_shift_range=5 / 32, height_shift_range=3.0,
        generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    assert angle.shape == (n,) and shift.shape == (n, 2) and flip.shape == (n,) and flip.dtype == torch.bool
    assert angle.abs().max() <= 15 and angle.abs().max() > 14.5
    assert shift[:, 0].abs().max() <= 10 and shift[:, 0].abs().max() > 9.5  # 5/32 of width 64 px
    assert shift[:, 1].abs().max() <= 3 and shift[:, 1].abs().max() > 2.9  # >= 1: pixels
    assert abs(float(angle.mean())) < 0.5 and abs(float(flip.float().mean()) - 0.5) < 0.05
    _, _, no_flip = A.sample_affine_flip_parameters(10, 8, 8, horizontal_flip=False)
    assert not no_flip.any()


def test_same_generator_seed_same_augmentation_and_callable_is_stateful():
    x = _batch()
    a = A.random_affine_flip(x, generator=torch.Generator().manual_seed(5))
    b = A.random_affine_flip(x, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    aug = A.RandomAffineFlip(seed=5)
    first, second = aug(x), aug(x)
    assert torch.equal(first, a) and not torch.equal(first, second)
    assert torch.equal(A.RandomAffineFlip(seed=5)(x), a)
    assert A.KERAS_THESIS_SETTINGS["width_shift_range"] == 5.0 / 32 and "seed=5" in repr(aug)


def test_rotation_keeps_the_centre_pixel_of_an_odd_image():
    x = _batch(n=1, c=1, h=9, w=9)
    out = A.affine_flip(x, torch.tensor([math.degrees(0.3)]), torch.zeros(1, 2), torch.tensor([False]))
    torch.testing.assert_close(out[0, 0, 4, 4], x[0, 0, 4, 4], atol=1e-5, rtol=0)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="x must be a 4-D"):
        A.random_affine_flip(torch.zeros(3, 8, 8))
    with pytest.raises(ValueError, match="floating-point"):
        A.random_affine_flip(torch.zeros(1, 3, 8, 8, dtype=torch.uint8))
    with pytest.raises(ValueError, match="rotation_range"):
        A.RandomAffineFlip(rotation_range=-1)
    with pytest.raises(ValueError, match="width_shift_range"):
        A.random_affine_flip(torch.zeros(1, 3, 8, 8), width_shift_range=float("nan"))
    with pytest.raises(ValueError, match="shift must have shape"):
        A.affine_flip(
            torch.zeros(2, 1, 4, 4), torch.zeros(2), torch.zeros(2), torch.zeros(2, dtype=torch.bool)
        )
