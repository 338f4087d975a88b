"""The one conversion of a caller's array input in :mod:`medeval.metrics`: numpy arrays, nested sequences and
torch tensors.

Every public function of the package that takes arrays converts them with :func:`to_numpy` (and keeps its
own validation and error messages), so they all accept the same inputs. Why not ``np.asarray`` alone: numpy
reads a torch tensor through ``Tensor.__array__``, which refuses a tensor that requires grad (torch's
``RuntimeError: Can't call numpy() on Tensor that requires grad``) and a tensor in GPU memory (``TypeError:
can't convert cuda:0 device type tensor to numpy``). A metric's inputs are often a network's outputs, which
can be both. So a tensor is detached from the autograd graph and copied to host memory first.

A tensor is recognised by its ``detach`` method, without importing torch: the package depends on numpy and
scipy only, and importing torch would slow down every ``import medeval.metrics``.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []  # private helpers of the medeval.metrics modules


def is_tensor(x) -> bool:
    """Whether ``x`` is a torch tensor (duck-typed on ``detach``, without importing torch)."""
    return hasattr(x, "detach")


def to_numpy(x, dtype=None) -> np.ndarray:
    """``x`` as a numpy array (of ``dtype``, when given).

    A torch tensor (CPU or CUDA, with or without ``requires_grad``) is detached and copied to the host first
    (``x.detach().cpu().numpy()``; a CPU tensor's memory is shared, not copied, as ``np.asarray`` shares an
    array's). A floating-point tensor of a type numpy has no dtype for (bfloat16, which mixed-precision training
    on a GPU produces, and the float8 types) is widened to float32 first, which holds its values exactly.
    Anything else goes to ``np.asarray(x, dtype=dtype)``, so a numpy array of the right dtype is returned as it
    is. Validating the result (shape, dtype, values) is the caller's job.

    Examples
    --------
    >>> from medeval.metrics._arrays import to_numpy
    >>> to_numpy([1, 0, 1]).tolist(), to_numpy([1, 0, 1], dtype=np.float64).dtype
    ([1, 0, 1], dtype('float64'))
    >>> a = np.zeros(3)
    >>> to_numpy(a) is a
    True
    """
    if is_tensor(x):
        x = x.detach().cpu()
        if x.is_floating_point() and x.dtype.itemsize <= 2 and str(x.dtype) != "torch.float16":
            x = x.float()
        x = x.numpy()
    return np.asarray(x, dtype=dtype)
