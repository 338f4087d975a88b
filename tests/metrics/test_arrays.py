"""Tests of medeval.metrics._arrays.to_numpy, the one conversion of array inputs (every metric's acceptance of
tensors, plain and requiring grad, is checked over the registry in test_common.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from medeval.metrics._arrays import is_tensor, to_numpy


def test_arrays_and_sequences_go_through_np_asarray():
    a = np.arange(4)
    assert to_numpy(a) is a  # no copy
    assert to_numpy(a, dtype=np.float64).dtype == np.float64
    assert to_numpy([[1, 0], [0, 1]]).shape == (2, 2)
    assert to_numpy(0.5).shape == ()
    assert not is_tensor(a) and not is_tensor([1.0])


def test_a_tensor_requiring_grad_is_detached():
    torch = pytest.importorskip("torch")
    t = torch.tensor([0.25, 0.5, 1.0], requires_grad=True) * 2  # not a leaf: part of a graph
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(t)  # why the converter exists
    out = to_numpy(t)
    assert is_tensor(t) and isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, [0.5, 1.0, 2.0])
    assert to_numpy(t, dtype=np.float64).dtype == np.float64
    assert to_numpy(torch.tensor([1, 0], dtype=torch.bool)).dtype == bool


def test_low_precision_float_tensors_are_widened_exactly():
    """bfloat16 (what mixed-precision training on a GPU produces) and the float8 types have no numpy dtype; they
    arrive as float32 holding the same values, and a metric gives the float32 tensor's result."""
    torch = pytest.importorskip("torch")
    from medeval.metrics import roc_auc

    scores = torch.tensor([0.1, 0.35, 0.4, 0.8, 0.9, 0.05])
    labels = torch.tensor([0, 0, 1, 1, 1, 0])
    for dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        low = scores.to(dtype)
        out = to_numpy(low)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, low.float().numpy())
        assert roc_auc(labels, low) == roc_auc(labels, low.float())
    assert to_numpy(scores.half()).dtype == np.float16  # numpy has float16: kept as it is


class _DeviceTensor:
    """A stand-in for a CUDA tensor: numpy can read it only after ``.cpu()``."""

    def __init__(self, values, on_host=False):
        self.values, self.on_host = np.asarray(values), on_host

    @property
    def dtype(self):
        return self.values.dtype

    def is_floating_point(self):
        return self.values.dtype.kind == "f"

    def detach(self):
        return self

    def cpu(self):
        return _DeviceTensor(self.values, on_host=True)

    def numpy(self):
        if not self.on_host:
            raise TypeError("can't convert cuda:0 device type tensor to numpy")
        return self.values


def test_a_device_tensor_is_copied_to_the_host_first():
    np.testing.assert_array_equal(to_numpy(_DeviceTensor([1.0, 2.0]), dtype=np.float64), [1.0, 2.0])


def test_a_cuda_tensor_requiring_grad():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    t = torch.tensor([0.1, 0.9], device="cuda", requires_grad=True)
    np.testing.assert_array_equal(to_numpy(t), np.array([0.1, 0.9], dtype=np.float32))


def test_the_metrics_do_not_import_torch():
    code = "import sys, medeval.metrics; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
