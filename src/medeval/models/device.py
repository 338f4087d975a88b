"""Device selection and the GPU conveniences the training loops use (mixed precision, channels_last).

Nothing in medeval calls ``.cuda()``: code asks :func:`resolve_device` and moves tensors with ``.to(device)``.
On the CPU every helper here is a no-op, so each GPU path also runs (and is tested) on the CPU.
"""

from __future__ import annotations

import contextlib
import os

import torch


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU. ``"cuda"`` without a GPU raises a clear error."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} was requested but CUDA is not available; use 'auto' or 'cpu'")
        return torch.device(device)
    if device == "cpu":
        return torch.device("cpu")
    raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")


def autocast(device: torch.device, enabled: bool = True):
    """bfloat16/float16 autocast on CUDA (bf16 where supported); a no-op context on the CPU."""
    if device.type == "cuda" and enabled:
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.autocast(device_type="cuda", dtype=dtype)
    return contextlib.nullcontext()


def grad_scaler(device: torch.device, enabled: bool = True) -> torch.amp.GradScaler:
    """A gradient scaler that is active only for float16 autocast on CUDA (bf16 needs none)."""
    active = enabled and device.type == "cuda" and not torch.cuda.is_bf16_supported()
    return torch.amp.GradScaler("cuda" if device.type == "cuda" else "cpu", enabled=active)


def prepare_model(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """Move a model to ``device``; use channels_last memory format for convolutions on CUDA."""
    model = model.to(device)
    if device.type == "cuda":
        model = model.to(memory_format=torch.channels_last)
    return model


def prepare_batch(x: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Move an image batch to ``device`` (non-blocking from pinned memory; channels_last for 4-D on CUDA)."""
    x = x.to(device, non_blocking=True)
    if device.type == "cuda" and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    return x


def dataloader_kwargs(device: torch.device, num_workers: int | None = None) -> dict:
    """DataLoader settings: pinned memory and worker processes on CUDA, in-process loading on the CPU."""
    if device.type == "cuda":
        workers = num_workers if num_workers is not None else min(8, os.cpu_count() or 1)
        return {"pin_memory": True, "num_workers": workers, "persistent_workers": workers > 0}
    return {"pin_memory": False, "num_workers": num_workers or 0}


def limit_cpu_threads(device, threads: int = 1) -> torch.device:
    """On the CPU, give this process ``threads`` intra-op threads (grids of runs are the parallel unit: one run per
    process, and oversubscribed BLAS threads made a U-Net epoch 7x slower on the 2-core machine); a no-op on CUDA.
    Returns the resolved device."""
    dev = resolve_device(device)
    if dev.type == "cpu":
        torch.set_num_threads(threads)
    return dev


def prefetch(iterable, depth: int = 2):
    """Iterate ``iterable`` in a background thread, keeping up to ``depth`` items ready.

    Overlaps reading (slide decoding and HDF5 reads release the GIL) with computation on the GPU or in torch's
    CPU kernels. Items come out in the original order; an exception raised by the producer is re-raised here.
    ``depth = 0`` iterates in the calling thread.
    """
    import queue
    import threading

    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    if depth == 0:
        yield from iterable
        return
    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def produce():
        try:
            for item in iterable:
                while not stop.is_set():
                    try:
                        q.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(("done", done))
        except BaseException as exc:  # handed to the consumer
            q.put(("error", exc))

    thread = threading.Thread(target=produce, name="medeval-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = q.get()
            if kind == "done":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()
        thread.join(timeout=5)
