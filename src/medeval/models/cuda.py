"""Whether torch has a CUDA device to compute on, asked without loading torch where no GPU can be there.

The run records (provenance, the grid cache's device) and the choice of an engine need the answer in every
chapter, also in those that never use torch; loading torch to be told "no" costs such a kernel 1.2 s and some
150 MB.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: Device files through which a CUDA driver reaches a GPU: the NVIDIA driver's on Linux (a container given a GPU
#: sees them too), and WSL 2's GPU paravirtualisation.
CUDA_DEVICE_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg")


def cuda_device_name() -> str | None:
    """The name of the first CUDA device torch can use, or ``None``.

    Torch is asked wherever a GPU can be there, and whenever it is already loaded. It is not loaded on Linux
    when none of :data:`CUDA_DEVICE_FILES` exists (no driver can reach a GPU), nor on macOS (torch has no CUDA
    build there): the answer is then ``None``.
    """
    if "torch" not in sys.modules and (
        sys.platform == "darwin"
        or (sys.platform.startswith("linux") and not any(Path(p).exists() for p in CUDA_DEVICE_FILES))
    ):
        return None
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
