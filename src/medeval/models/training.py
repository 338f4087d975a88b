"""The shared training loops and batched prediction, device-agnostic (mixed precision and channels_last on CUDA).

* :func:`train_model`: a fixed number of epochs of Adam, no validation; opt-in linear learning-rate warm-up,
  gradient-norm clipping and a re-estimation of the BatchNorm statistics after training
  (:func:`recalibrate_batch_norm`).
* :func:`train_with_validation`: Adam with a validation set, Keras-style ``ReduceLROnPlateau`` and
  ``EarlyStopping`` (restoring the best weights) and optional on-device augmentation of the training batches
  (thesis §5.5.4: the CIFAR-10 ResNet50 fine-tuning).
* :func:`predict`: batched inference.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from medeval.models.device import (
    autocast,
    dataloader_kwargs,
    grad_scaler,
    prepare_batch,
    prepare_model,
    resolve_device,
)


def load_optimizer_machinery() -> None:
    """Import in this process what torch's first optimiser brings in (``torch._dynamo`` and its compiler: 1.2 s
    and about 180 MB), so that the workers of a local pool forked afterwards share it instead of each importing its
    own (Chapter 5's smoke run: 38 MB of private memory in its two workers, against 406 MB without)."""
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])


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
    augment: Callable[[torch.Tensor], torch.Tensor] | None = None,
    warmup_epochs: float = 0.0,
    max_grad_norm: float | None = None,
    recalibrate_bn: bool = False,
    select_epoch: Callable[[torch.nn.Module], float] | None = None,
) -> list[float]:
    """Train with Adam; ``loss_fn(model(x), *targets)`` per batch. Returns the mean loss of each epoch.

    ``data`` is a Dataset yielding ``(x, *targets)`` or a tuple of arrays. Shuffling uses a generator seeded with
    ``seed``, so a run is reproducible on the CPU (and as far as cuDNN allows on the GPU). ``augment(x)``, if
    given, transforms every training batch on the device (e.g. :class:`medeval.models.augmentation.RandomAffineFlip`).

    Opt-in (the defaults train exactly as without them):

    * ``warmup_epochs``: linear learning-rate warm-up over the first ``ceil(warmup_epochs * batches per epoch)``
      optimiser steps, step ``k`` (1-based) using ``lr * k / n_warmup`` and every later step ``lr`` (the "gradual
      warm-up" of Goyal et al. 2017, *Accurate, large minibatch SGD*, §2.2);
    * ``max_grad_norm``: clip the global L2 norm of the gradients to this value before each step
      (``torch.nn.utils.clip_grad_norm_``; Pascanu et al. 2013, *On the difficulty of training recurrent neural
      networks*, §3.2);
    * ``recalibrate_bn``: after the last epoch, replace every BatchNorm layer's running mean and variance by
      their average over one pass of the (un-augmented) training data with the final weights
      (:func:`recalibrate_batch_norm`; the ``update_bn`` step of Izmailov et al. 2018, *Averaging weights leads to
      wider optima*, §3.2). It changes no trained weight, only the statistics used in eval mode.
    * ``select_epoch(model)``: a score (higher is better, e.g. minus the validation loss or the validation macro
      recall) computed after every epoch (after the recalibration when ``recalibrate_bn``); the model ends with
      the weights (and BatchNorm statistics) of the first epoch with the highest finite score, i.e. best-epoch
      selection on a held-out set (Prechelt 1998, *Early stopping -- but when?*). All ``epochs`` run (no early
      stop), so the history is the same as without selection.
    """
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    if not (math.isfinite(warmup_epochs) and warmup_epochs >= 0):
        raise ValueError(f"warmup_epochs must be a finite number >= 0, got {warmup_epochs!r}")
    if max_grad_norm is not None and not (math.isfinite(max_grad_norm) and max_grad_norm > 0):
        raise ValueError(f"max_grad_norm must be a finite number > 0 or None, got {max_grad_norm!r}")
    dev = resolve_device(device)
    torch.manual_seed(seed)
    dataset = _as_dataset(data)
    gen = torch.Generator().manual_seed(seed)
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=True,
        generator=gen,
        drop_last=False,
        **dataloader_kwargs(dev, num_workers),
    )
    model = prepare_model(model, dev)
    optim = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    scaler = grad_scaler(dev, amp)
    n_warmup = math.ceil(warmup_epochs * len(loader))
    steps = [0]

    def before_step() -> None:
        steps[0] += 1
        if n_warmup:
            for group in optim.param_groups:
                group["lr"] = lr * min(1.0, steps[0] / n_warmup)

    history: list[float] = []
    best_score, best_state = -math.inf, None
    for epoch in range(epochs):
        history.append(_train_epoch(model, loader, loss_fn, optim, scaler, dev, amp, augment,
                                    max_grad_norm=max_grad_norm, before_step=before_step))
        if select_epoch is None:
            continue
        if recalibrate_bn:
            recalibrate_batch_norm(model, dataset, batch_size=batch_size, device=dev, num_workers=num_workers)
        score = float(select_epoch(model))
        if math.isfinite(score) and score > best_score:
            best_score = score
            best_state = {k: t.detach().clone() for k, t in model.state_dict().items()}
            best_epoch = epoch
    if select_epoch is not None:
        if best_state is not None and best_epoch != epochs - 1:
            model.load_state_dict(best_state)
    elif recalibrate_bn:
        recalibrate_batch_norm(model, dataset, batch_size=batch_size, device=dev, num_workers=num_workers)
    return history


@torch.no_grad()
def recalibrate_batch_norm(
    model: torch.nn.Module,
    data,
    *,
    batch_size: int = 32,
    device: str | torch.device = "auto",
    num_workers: int | None = None,
) -> torch.nn.Module:
    """Re-estimate the running mean and variance of every BatchNorm layer of ``model`` from ``data``.

    The running statistics are reset and accumulated as an equal-weight (cumulative) average over the batches of
    one unshuffled pass of ``data`` (a Dataset yielding ``(x, ...)`` or a tuple of arrays) in train mode, without
    gradients; the layers' momenta and the model's train/eval mode are restored afterwards. This is
    :func:`torch.optim.swa_utils.update_bn` (Izmailov et al. 2018, §3.2), which does it. Why it matters: the running
    statistics are an exponential average (momentum 0.1) started at mean 0, variance 1, so after ``n`` steps a
    fraction ``0.9**n`` of the initial variance 1 remains (8 % after 24 steps), besides the lag behind the
    changing weights; a short training leaves eval-mode BatchNorm far from the statistics the weights were
    trained with. A model without BatchNorm layers is returned unchanged.
    """
    from torch.optim.swa_utils import update_bn

    dev = resolve_device(device)
    loader = DataLoader(_as_dataset(data), batch_size=batch_size, shuffle=False,
                        **dataloader_kwargs(dev, num_workers))
    # update_bn resets the statistics, averages them cumulatively over one pass in train mode without gradients,
    # and restores the momenta and the train/eval mode; the batches are prepared as in training
    update_bn((prepare_batch(b[0] if isinstance(b, (tuple, list)) else b, dev).float() for b in loader), model)
    return model


def _train_epoch(model, loader, loss_fn, optim, scaler, dev, amp, augment=None, *,
                 max_grad_norm: float | None = None, before_step: Callable[[], None] | None = None) -> float:
    """One pass over ``loader``; returns the mean training loss (weighted by batch size).

    ``before_step()`` (if given) runs before each optimiser step (e.g. to set a warm-up learning rate);
    ``max_grad_norm`` clips the global gradient norm (after unscaling)."""
    model.train()
    total, count = 0.0, 0
    for batch in loader:
        x, *targets = batch
        x = prepare_batch(x.float(), dev)
        if augment is not None:
            with torch.no_grad():
                x = augment(x)
        targets = [t.to(dev, non_blocking=True) for t in targets]
        optim.zero_grad(set_to_none=True)
        with autocast(dev, amp):
            out = model(x)
        loss = loss_fn(_to_float(out), *targets)
        scaler.scale(loss).backward()
        if before_step is not None:
            before_step()
        if max_grad_norm is not None:
            scaler.unscale_(optim)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        scaler.step(optim)
        scaler.update()
        total += float(loss.detach()) * len(x)
        count += len(x)
    return total / max(count, 1)


@torch.no_grad()
def _evaluate_loss(model, loader, loss_fn, dev, amp) -> float:
    """Mean loss over ``loader`` in eval mode (batch means weighted by batch size), no gradients."""
    model.eval()
    total, count = 0.0, 0
    for batch in loader:
        x, *targets = batch
        x = prepare_batch(x.float(), dev)
        targets = [t.to(dev, non_blocking=True) for t in targets]
        with autocast(dev, amp):
            out = model(x)
        loss = loss_fn(_to_float(out), *targets)
        total += float(loss) * len(x)
        count += len(x)
    return total / max(count, 1)


@dataclass
class TrainingHistory:
    """What :func:`train_with_validation` did, epoch by epoch (lists have one entry per epoch run).

    ``lr[k]`` is the learning rate used during epoch ``k + 1`` (a reduction decided at the end of an epoch
    shows from the next one). ``best_epoch`` is 1-based (``val_loss[best_epoch - 1] == best_val_loss``;
    0 when no epoch ran or no validation loss was finite); ``stopped_early`` is True when early stopping ended
    the run before ``max_epochs``; ``restored_best`` when the weights of ``best_epoch`` were put back.
    """

    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    best_epoch: int = 0
    best_val_loss: float = math.inf
    stopped_early: bool = False
    restored_best: bool = False

    @property
    def epochs_run(self) -> int:
        return len(self.train_loss)


def _check_non_negative(name: str, value, integer: bool = False) -> None:
    ok = value is not None and (not integer or int(value) == value) and math.isfinite(value) and value >= 0
    if not ok:
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"{name} must be {kind} >= 0, got {value!r}")


def train_with_validation(
    model: torch.nn.Module,
    train_data,
    validation_data,
    loss_fn: Callable[..., torch.Tensor],
    *,
    max_epochs: int,
    batch_size: int = 32,
    lr: float = 1e-4,
    weight_decay: float = 0.0,
    lr_factor: float = 0.3,
    lr_patience: int = 10,
    lr_min_delta: float = 1e-4,
    min_lr: float = 0.0,
    early_stopping_patience: int | None = None,
    early_stopping_min_delta: float = 0.0,
    restore_best_weights: bool = True,
    augment: Callable[[torch.Tensor], torch.Tensor] | None = None,
    device: str | torch.device = "auto",
    seed: int = 0,
    amp: bool = True,
    num_workers: int | None = None,
    eval_batch_size: int | None = None,
) -> TrainingHistory:
    """Train with Adam, monitoring the validation loss like Keras' ``ReduceLROnPlateau`` and ``EarlyStopping``.

    Each epoch: one shuffled pass over ``train_data`` (``loss_fn(model(x), *targets)`` per mini-batch of
    ``batch_size``; ``augment(x)``, if given, is applied on the device to every training batch, never to the
    validation data), then the validation loss ``v`` = mean of ``loss_fn`` over ``validation_data`` in eval
    mode. Then, as the Keras callbacks do at the end of an epoch (thesis §5.5.4: Adam, starting lr ``1e-4``,
    lr x ``0.3`` when the validation loss has not improved for 10 epochs, early stopping):

    * learning-rate schedule (``ReduceLROnPlateau(monitor="val_loss", factor=lr_factor, patience=lr_patience,
      min_delta=lr_min_delta, min_lr=min_lr)``): if ``v < best_lr - lr_min_delta`` then ``best_lr = v`` and
      ``wait_lr = 0``, else ``wait_lr += 1``; when ``wait_lr >= lr_patience`` the learning rate becomes
      ``max(lr * lr_factor, min_lr)`` (if it is above ``min_lr``) and ``wait_lr = 0``;
    * early stopping (``EarlyStopping(monitor="val_loss", patience=early_stopping_patience,
      min_delta=early_stopping_min_delta, restore_best_weights=...)``): if ``v < best - early_stopping_min_delta``
      the epoch is the new best (its weights are kept); training stops once ``early_stopping_patience`` epochs
      in a row have not improved. ``None`` disables early stopping (all ``max_epochs`` run).

    With ``restore_best_weights`` the model ends with the weights of the best epoch (lowest validation loss),
    whether or not training stopped early (Keras restores only on an early stop; here the best epoch's
    weights are what the caller wants to test). Non-finite validation losses never count as improvements.

    ``train_data`` / ``validation_data``: Datasets yielding ``(x, *targets)`` or tuples of arrays (as
    :func:`train_model`). Shuffling uses a generator seeded with ``seed`` and ``torch.manual_seed(seed)`` is
    called first. Returns a :class:`TrainingHistory`; the model is trained in place (moved to the device).
    """
    _check_non_negative("max_epochs", max_epochs, integer=True)
    if int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    if not (0 < lr_factor < 1):
        raise ValueError(f"lr_factor must be in (0, 1) (Keras ReduceLROnPlateau), got {lr_factor!r}")
    _check_non_negative("lr_patience", lr_patience, integer=True)
    _check_non_negative("lr_min_delta", lr_min_delta)
    _check_non_negative("min_lr", min_lr)
    _check_non_negative("early_stopping_min_delta", early_stopping_min_delta)
    if early_stopping_patience is not None:
        _check_non_negative("early_stopping_patience", early_stopping_patience, integer=True)
    dev = resolve_device(device)
    torch.manual_seed(seed)
    train_set, val_set = _as_dataset(train_data), _as_dataset(validation_data)
    if len(val_set) == 0:
        raise ValueError("validation_data must hold at least one example")
    gen = torch.Generator().manual_seed(seed)
    loader_kw = dataloader_kwargs(dev, num_workers)
    train_loader = DataLoader(
        train_set, batch_size=int(batch_size), shuffle=True, generator=gen, drop_last=False, **loader_kw
    )
    val_loader = DataLoader(
        val_set, batch_size=int(eval_batch_size or batch_size), shuffle=False, **loader_kw
    )
    model = prepare_model(model, dev)
    optim = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    scaler = grad_scaler(dev, amp)

    hist = TrainingHistory()
    current_lr = float(lr)
    best_lr_monitor, wait_lr = math.inf, 0
    wait_stop = 0
    best_state: dict[str, torch.Tensor] | None = None
    for epoch in range(1, int(max_epochs) + 1):
        for group in optim.param_groups:
            group["lr"] = current_lr
        hist.lr.append(current_lr)
        hist.train_loss.append(_train_epoch(model, train_loader, loss_fn, optim, scaler, dev, amp, augment))
        v = _evaluate_loss(model, val_loader, loss_fn, dev, amp)
        hist.val_loss.append(v)
        finite = math.isfinite(v)
        # ReduceLROnPlateau
        if finite and v < best_lr_monitor - lr_min_delta:
            best_lr_monitor, wait_lr = v, 0
        else:
            wait_lr += 1
            if wait_lr >= lr_patience:
                if current_lr > min_lr:
                    current_lr = max(current_lr * lr_factor, float(min_lr))
                wait_lr = 0
        # EarlyStopping (+ best weights)
        if finite and v < hist.best_val_loss - early_stopping_min_delta:
            hist.best_val_loss, hist.best_epoch, wait_stop = v, epoch, 0
            if restore_best_weights:
                best_state = {k: t.detach().clone() for k, t in model.state_dict().items()}
        else:
            wait_stop += 1
            if early_stopping_patience is not None and wait_stop >= early_stopping_patience:
                hist.stopped_early = epoch < max_epochs
                break
    if restore_best_weights and best_state is not None and hist.best_epoch != hist.epochs_run:
        model.load_state_dict(best_state)
        hist.restored_best = True
    return hist


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
        x = prepare_batch(x_all[start : start + batch_size].float(), dev)
        with autocast(dev, amp):
            y = forward(model, x) if forward is not None else model(x)
        outs.append(y.float().cpu().numpy())
    return np.concatenate(outs) if outs else np.zeros((0,), dtype=np.float32)
