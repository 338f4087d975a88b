"""The shared training loop and batched prediction, device-agnostic (mixed precision and channels_last on CUDA)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from medeval.runtime.device import (
    autocast,
    dataloader_kwargs,
    grad_scaler,
    prepare_batch,
    prepare_model,
    resolve_device,
)


def _as_dataset(data) -> Dataset:
    if isinstance(data, Dataset):
        return data
    if isinstance(data, (tuple, list)):
        return TensorDataset(*[torch.as_tensor(np.asarray(a)) if not torch.is_tensor(a) else a for a in data])
    raise TypeError("data must be a torch Dataset or a tuple of arrays (inputs, *targets)")


def train_model(
    model: torch.nn.Module,
    data,
    loss_fn: Callable[..., torch.Tensor],
    *,
    epochs: int,
    batch_size: int = 32,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    device: str | torch.device = "auto",
    seed: int = 0,
    amp: bool = True,
    num_workers: int | None = None,
) -> list[float]:
    """Train with Adam; ``loss_fn(model(x), *targets)`` per batch. Returns the mean loss of each epoch.

    ``data`` is a Dataset yielding ``(x, *targets)`` or a tuple of arrays. Shuffling uses a generator seeded with
    ``seed``, so a run is reproducible on the CPU (and as far as cuDNN allows on the GPU).
    """
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    dev = resolve_device(device)
    torch.manual_seed(seed)
    dataset = _as_dataset(data)
    gen = torch.Generator().manual_seed(seed)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=gen, drop_last=False,
                        **dataloader_kwargs(dev, num_workers))
    model = prepare_model(model, dev)
    optim = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    scaler = grad_scaler(dev, amp)
    history: list[float] = []
    for _ in range(epochs):
        model.train()
        total, count = 0.0, 0
        for batch in loader:
            x, *targets = batch
            x = prepare_batch(x.float(), dev)
            targets = [t.to(dev, non_blocking=True) for t in targets]
            optim.zero_grad(set_to_none=True)
            with autocast(dev, amp):
                out = model(x)
            loss = loss_fn(_to_float(out), *targets)
            scaler.scale(loss).backward()
            scaler.step(optim)
            scaler.update()
            total += float(loss.detach()) * len(x)
            count += len(x)
        history.append(total / max(count, 1))
    return history


def _to_float(out):
    if torch.is_tensor(out):
        return out.float()
    if isinstance(out, (tuple, list)):
        return type(out)(_to_float(o) for o in out)
    if isinstance(out, dict):
        return {k: _to_float(v) for k, v in out.items()}
    return out


@torch.no_grad()
def predict(
    model: torch.nn.Module,
    inputs,
    *,
    batch_size: int = 64,
    device: str | torch.device = "auto",
    forward: Callable[[torch.nn.Module, torch.Tensor], torch.Tensor] | None = None,
    amp: bool = True,
) -> np.ndarray:
    """Evaluate ``forward(model, x)`` (default ``model(x)``) over ``inputs`` in batches; returns float32 numpy."""
    dev = resolve_device(device)
    model = prepare_model(model, dev).eval()
    x_all = inputs if torch.is_tensor(inputs) else torch.as_tensor(np.asarray(inputs))
    outs = []
    for start in range(0, len(x_all), batch_size):
        x = prepare_batch(x_all[start:start + batch_size].float(), dev)
        with autocast(dev, amp):
            y = forward(model, x) if forward is not None else model(x)
        outs.append(y.float().cpu().numpy())
    return np.concatenate(outs) if outs else np.zeros((0,), dtype=np.float32)
