"""Replicate runs trained together: one stacked ensemble, one optimiser step for all members.

Runs that differ only in their seed (their initialisation, their training subset and data order) are trained as
one *stacked ensemble*: the members' parameters and buffers are stacked along a new leading dimension
(:func:`torch.func.stack_module_state`), one forward pass evaluates every member on its own batch
(:func:`torch.func.vmap` over :func:`torch.func.functional_call`; PyTorch's batching rules turn the members'
convolutions into one grouped convolution), and one Adam step updates all members. Adam is elementwise
(Kingma & Ba 2015, *Adam*, Algorithm 1), and the loss minimised is the sum of the members' own losses, so each
member's gradient and update are its own: member ``m`` follows the training it would have alone, given its seed
and its data order.

*Exactly* alone: each member sees the batches that :func:`medeval.models.training.train_model` would give it
(the same seeded sampler, one index draw per epoch), its loss is computed by the loss function's own kernel, and
its layers compute the numbers they would compute alone: BatchNorm runs PyTorch's batch-norm kernel on the
members' channels side by side (:class:`StackedBatchNorm`, whose batching rule folds the members into the channel
axis, where each channel's statistics are computed alone), and in the exact mode (the CPU default) convolutions,
linear layers and group norm run member by member (:class:`_PerMemberFunction`). PyTorch's own batching rules
compute in another order (batch norm's reduction; a grouped convolution's bias and blocking once the batch is
large): their rounding differences, 1e-10 after one step, grew over Chapter 4's 16 epochs into patch scores
0.85 apart. On the CPU a member's weights, buffers and losses equal training alone bit for bit
(``tests/models/test_ensemble.py``, ``tests/experiments/test_class_distribution.py``); on a GPU the convolutions
run grouped (cuDNN gives no bit-identity in either case).

Where it pays: on a GPU, a small model (Chapter 4's U-Net) leaves the device mostly idle, and M members fill it
(``benchmarks/bench_ensemble.py`` measures members 1-16). On the CPU with pinned numerics (torch's own im2col
convolutions, one thread) a grouped convolution costs what its groups cost one after the other, so the CPU
profiles train one run at a time (``benchmarks/RESULTS.md``, "Ensembles").
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from medeval.models.convolution import conv2d
from medeval.models.device import autocast, grad_scaler, resolve_device
from medeval.models.training import _to_float

__all__ = ["StackedBatchNorm", "StackedGroupNorm", "StackedLinear", "member_batches", "train_ensemble"]


class _BatchNormFunction(torch.autograd.Function):
    """``aten.native_batch_norm`` and its backward (what ``nn.BatchNorm*`` computes), with a batching rule that
    folds the vmapped members into the channel axis: ``(M, B, C, ...)`` becomes ``(B, M * C, ...)``, one call of
    the same kernel, whose channels are normalised independently, so each member gets the numbers it would get
    alone (its running statistics are updated in place in the stacked buffers)."""

    @staticmethod
    def forward(x, weight, bias, running_mean, running_var, training, momentum, eps):
        return torch.ops.aten.native_batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight, _, running_mean, running_var, training, _, eps = inputs
        _, save_mean, save_invstd = output
        ctx.save_for_backward(x, weight, running_mean, running_var, save_mean, save_invstd)
        ctx.training, ctx.eps = training, eps
        ctx.mark_non_differentiable(save_mean, save_invstd)

    @staticmethod
    def backward(ctx, grad_out, _grad_mean, _grad_invstd):
        x, weight, running_mean, running_var, save_mean, save_invstd = ctx.saved_tensors
        mask = [bool(ctx.needs_input_grad[i]) for i in range(3)]
        gx, gw, gb = torch.ops.aten.native_batch_norm_backward(grad_out, x, weight, running_mean, running_var,
                                                               save_mean, save_invstd, ctx.training, ctx.eps, mask)
        return gx, gw, gb, None, None, None, None, None

    @staticmethod
    def vmap(info, in_dims, x, weight, bias, running_mean, running_var, training, momentum, eps):
        members = info.batch_size

        def physical(t, dim):
            return t.movedim(dim, 0) if dim is not None else t.expand(members, *t.shape)

        xb = physical(x, in_dims[0])  # (M, B, C, ...)
        batch, channels, rest = xb.shape[1], xb.shape[2], xb.shape[3:]
        folded = xb.transpose(0, 1).reshape(batch, members * channels, *rest)
        flat = [physical(t, d).reshape(members * channels) if t is not None else None
                for t, d in zip((weight, bias, running_mean, running_var), in_dims[1:5], strict=True)]
        out, mean, invstd = _BatchNormFunction.apply(folded, *flat, training, momentum, eps)
        out = out.reshape(batch, members, channels, *rest).transpose(0, 1)
        return (out, mean.reshape(members, channels), invstd.reshape(members, channels)), (0, 0, 0)


class StackedBatchNorm(torch.nn.modules.batchnorm._BatchNorm):
    """A BatchNorm layer (any of ``nn.BatchNorm1d/2d/3d``, whose class it replaces in an ensemble's template
    module) that computes through :class:`_BatchNormFunction`: the same kernel as ``nn.BatchNorm*``, and under
    :func:`torch.func.vmap` each member's statistics exactly as alone. Train-mode momentum must be a number (the
    cumulative average of ``momentum=None`` reads a counter, which a vmapped buffer cannot give)."""

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2-D input (batch, channels, ...), got {input.dim()}-D")

    def forward(self, x):
        self._check_input_dim(x)
        factor = 0.0
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            if self.momentum is None:
                raise ValueError("StackedBatchNorm: momentum=None (a cumulative average) cannot be vmapped; "
                                 "give the layer a numeric momentum")
            self.num_batches_tracked.add_(1)
            factor = self.momentum
        use_stats = not self.training or self.track_running_stats
        return _BatchNormFunction.apply(x, self.weight, self.bias, self.running_mean if use_stats else None,
                                        self.running_var if use_stats else None,
                                        self.training or not self.track_running_stats, factor, self.eps)[0]


class _PerMemberFunction(torch.autograd.Function):
    """``fn(*args)``, whose batching rule calls ``fn`` member by member on the members' own tensors (and stacks the
    results): each member gets the kernels it would get alone. For the layers whose PyTorch batching rule computes
    in another order than the layer alone (a linear layer's bias is added after the product instead of inside it;
    group norm's statistics are reduced differently)."""

    @staticmethod
    def forward(fn, *args):
        return fn(*args)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.fn = inputs[0]
        ctx.save_for_backward(*[a if torch.is_tensor(a) else None for a in inputs[1:]])
        ctx.others = [None if torch.is_tensor(a) else a for a in inputs[1:]]

    @staticmethod
    def backward(ctx, grad_out):  # outside vmap: recompute and differentiate
        args = [t if t is not None else o for t, o in zip(ctx.saved_tensors, ctx.others, strict=True)]
        with torch.enable_grad():
            inputs = [a.detach().requires_grad_(a.requires_grad) if torch.is_tensor(a) else a for a in args]
            out = ctx.fn(*inputs)
            wanted = [a for a in inputs if torch.is_tensor(a) and a.requires_grad]
            grads = iter(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
        return (None, *[next(grads) if torch.is_tensor(a) and a.requires_grad else None for a in inputs])

    @staticmethod
    def vmap(info, in_dims, fn, *args):
        members = info.batch_size
        outs = [fn(*[a.select(d, m) if torch.is_tensor(a) and d is not None else a
                     for a, d in zip(args, in_dims[1:], strict=True)]) for m in range(members)]
        return torch.stack(outs), 0


class StackedLinear(torch.nn.Linear):
    """``nn.Linear`` computing through :class:`_PerMemberFunction` (``F.linear`` member by member under vmap)."""

    def forward(self, x):
        return _PerMemberFunction.apply(torch.nn.functional.linear, x, self.weight, self.bias)


class StackedGroupNorm(torch.nn.GroupNorm):
    """``nn.GroupNorm`` computing through :class:`_PerMemberFunction` (``F.group_norm`` member by member)."""

    def forward(self, x):
        return _PerMemberFunction.apply(_group_norm(self.num_groups, self.eps), x, self.weight, self.bias)


def _group_norm(groups: int, eps: float):
    def fn(x, weight, bias):
        return torch.nn.functional.group_norm(x, groups, weight, bias, eps)

    return fn


class StackedConv2d(torch.nn.Conv2d):
    """``nn.Conv2d`` computing through :class:`_PerMemberFunction` (:func:`medeval.models.convolution.conv2d`,
    the layer's own kernels, member by member under vmap)."""

    def forward(self, x):
        return _PerMemberFunction.apply(_conv(self, conv2d), x, self.weight, self.bias)


class StackedConvTranspose2d(torch.nn.ConvTranspose2d):
    """``nn.ConvTranspose2d`` through :class:`_PerMemberFunction` (``F.conv_transpose2d`` member by member)."""

    def forward(self, x, output_size=None):
        if output_size is not None:
            raise ValueError("StackedConvTranspose2d: output_size is not supported in an ensemble")
        return _PerMemberFunction.apply(_conv(self, torch.nn.functional.conv_transpose2d), x, self.weight, self.bias)


def _conv(layer, fn):
    import functools

    if layer.padding_mode != "zeros":
        raise ValueError(f"an ensemble's exact convolutions support padding_mode='zeros', got {layer.padding_mode!r}")
    kw = {"stride": layer.stride, "padding": layer.padding, "dilation": layer.dilation, "groups": layer.groups}
    if fn is torch.nn.functional.conv_transpose2d:
        kw["output_padding"] = layer.output_padding
    return functools.partial(fn, **kw)


#: the layers whose class a template takes: always (PyTorch's batching rules compute these in another order than
#: the layer alone), and in the exact mode also the convolutions (their batching rule, one grouped convolution,
#: adds a bias after the product or blocks the product differently once the batch is large: Chapter 4's 1 x 1
#: head at batch 32). Pooling, activations and element-wise arithmetic compute as alone under vmap.
_STACKED = ((torch.nn.modules.batchnorm._BatchNorm, StackedBatchNorm), (torch.nn.Linear, StackedLinear),
            (torch.nn.GroupNorm, StackedGroupNorm))
_STACKED_EXACT = ((torch.nn.Conv2d, StackedConv2d), (torch.nn.ConvTranspose2d, StackedConvTranspose2d))


def _member(out, m: int):
    """Member ``m`` of a vmapped model output (a tensor, or a tuple / list / dict of them)."""
    if torch.is_tensor(out):
        return out[m]
    if isinstance(out, (tuple, list)):
        return type(out)(_member(o, m) for o in out)
    if isinstance(out, dict):
        return {k: _member(v, m) for k, v in out.items()}
    return out


def _stackable_template(model: torch.nn.Module, exact: bool = True) -> torch.nn.Module:
    """A weightless (``meta``) copy of ``model`` whose BatchNorm, Linear and GroupNorm layers (and with ``exact``
    its 2-D convolutions) are their stacked versions (:class:`StackedBatchNorm`, :class:`StackedLinear`,
    :class:`StackedGroupNorm`, :class:`StackedConv2d`, :class:`StackedConvTranspose2d`)."""
    base = copy.deepcopy(model).to("meta")
    for module in base.modules():
        for layer, stacked in _STACKED + (_STACKED_EXACT if exact else ()):
            if type(module) is not stacked and isinstance(module, layer):
                module.__class__ = stacked
    return base


def member_batches(n: int, batch_size: int, seed: int) -> DataLoader:
    """The shuffled index batches that :func:`~medeval.models.training.train_model` draws for ``n`` examples with
    ``seed`` (a :class:`~torch.utils.data.DataLoader` over ``arange(n)`` with ``shuffle=True``, a generator seeded
    with ``seed``, in-process loading): iterate it once per epoch; each item is a 1-tuple holding the batch's
    indices."""
    gen = torch.Generator().manual_seed(int(seed))
    return DataLoader(TensorDataset(torch.arange(int(n))), batch_size=int(batch_size), shuffle=True, generator=gen,
                      drop_last=False, num_workers=0)


def _as_tensors(data) -> tuple[torch.Tensor, ...]:
    if not isinstance(data, (tuple, list)) or not data:
        raise TypeError("each member's data must be a tuple of arrays (inputs, *targets)")
    # contiguous, as the training loop's batches are (its loader stacks examples): a strided array (e.g. NHWC
    # images transposed to NCHW) would give channels-last batches, for which batch norm reduces in another order
    out = tuple((a if torch.is_tensor(a) else torch.as_tensor(np.asarray(a))).contiguous() for a in data)
    n = out[0].shape[0]
    if any(a.shape[0] != n for a in out):
        raise ValueError(f"a member's arrays differ in length: {[a.shape[0] for a in out]}")
    return out


def _check_same_architecture(models: Sequence[torch.nn.Module]) -> None:
    ref = [(k, tuple(v.shape), v.dtype) for k, v in models[0].state_dict().items()]
    for i, m in enumerate(models[1:], start=1):
        mine = [(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]
        if mine != ref or type(m) is not type(models[0]):
            raise ValueError(f"models[{i}] differs from models[0] in its class, parameter names, shapes or dtypes: "
                             "an ensemble stacks members of one architecture")


def train_ensemble(
    models: Sequence[torch.nn.Module],
    data: Sequence,
    loss_fn: Callable[..., torch.Tensor],
    *,
    epochs: int,
    seeds: Sequence[int],
    batch_size: int = 32,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    device: str | torch.device = "auto",
    amp: bool = True,
    warmup_epochs: float = 0.0,
    recalibrate_bn: bool = False,
    exact: bool | None = None,
) -> list[list[float]]:
    """Train ``models`` (one architecture) as one stacked ensemble; returns each member's mean loss per epoch.

    Member ``m`` trains on ``data[m]`` (a tuple of arrays ``(inputs, *targets)``, moved to the device once and kept
    there) in the order of :func:`member_batches` with ``seeds[m]``, and minimises ``loss_fn(model(x), *targets)``
    with Adam (``lr``, ``weight_decay``), as :func:`medeval.models.training.train_model` does for one model. The
    ensemble minimises the sum of the members' losses, so each member's gradient is its own. Every member must
    hold as many examples as the others (each optimiser step takes one batch of every member).

    ``warmup_epochs`` and ``recalibrate_bn`` are those of :func:`~medeval.models.training.train_model` (the same
    learning rate for every member; after training, each member's BatchNorm statistics re-estimated from one
    unshuffled pass of its own data by :func:`~medeval.models.training.recalibrate_batch_norm`, as alone). The
    models are trained in place: their weights and buffers hold each member's result afterwards (on ``device``).

    ``exact`` (default: on the CPU) computes every convolution, linear and normalisation layer member by member with
    the kernel it would use alone, so that each member's result equals training alone bit for bit; otherwise
    (default on a GPU) the convolutions run as one grouped convolution, which fills the device, and equal training
    alone up to rounding.
    """
    from torch.func import functional_call, stack_module_state, vmap

    if not models:
        raise ValueError("models: give at least one model")
    if len(data) != len(models) or len(seeds) != len(models):
        raise ValueError(f"models, data and seeds must have one entry per member; got {len(models)}, {len(data)}, "
                         f"{len(seeds)}")
    if int(epochs) != epochs or epochs < 0:
        raise ValueError(f"epochs must be an integer >= 0, got {epochs!r}")
    if int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not (math.isfinite(warmup_epochs) and warmup_epochs >= 0):
        raise ValueError(f"warmup_epochs must be a finite number >= 0, got {warmup_epochs!r}")
    _check_same_architecture(models)
    arrays = [_as_tensors(d) for d in data]
    sizes = [a[0].shape[0] for a in arrays]
    if len(set(sizes)) != 1:
        raise ValueError(f"every member must hold the same number of training examples, got {sizes}")
    if len({len(a) for a in arrays}) != 1:
        raise ValueError("every member's data must hold the same number of arrays (inputs, *targets)")
    n = sizes[0]
    dev = resolve_device(device)
    cpu_arrays = arrays
    arrays = [tuple(t.to(dev) for t in a) for a in arrays]
    members = [m.to(dev) for m in models]
    params, buffers = stack_module_state(members)
    params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    buffers = {k: v.detach().clone() for k, v in buffers.items()}
    base = _stackable_template(members[0], exact=dev.type == "cpu" if exact is None else bool(exact))

    def member_forward(p, b, x):
        with autocast(dev, amp):
            return functional_call(base, (p, b), (x,))

    batched_forward = vmap(member_forward)
    optim = torch.optim.Adam(list(params.values()), lr=lr, weight_decay=weight_decay)
    scaler = grad_scaler(dev, amp)
    loaders = [member_batches(n, batch_size, s) for s in seeds]
    n_batches = len(loaders[0])
    n_warmup = math.ceil(warmup_epochs * n_batches)
    step = 0
    history: list[list[float]] = [[] for _ in members]
    base.train()
    for _ in range(int(epochs)):
        total = torch.zeros(len(members), device=dev, dtype=torch.float64)
        for batch in zip(*loaders, strict=True):
            idx = [b[0].to(dev) for b in batch]
            xs = torch.stack([a[0][i].float() for a, i in zip(arrays, idx, strict=True)])
            targets = [torch.stack([a[j][i] for a, i in zip(arrays, idx, strict=True)])
                       for j in range(1, len(arrays[0]))]
            optim.zero_grad(set_to_none=True)
            out = batched_forward(params, buffers, xs)
            # each member's loss by the loss function's own kernel (a vmapped reduction would round differently)
            losses = torch.stack([loss_fn(_to_float(_member(out, m)), *[t[m] for t in targets])
                                  for m in range(len(members))])
            scaler.scale(losses.sum()).backward()
            step += 1
            if n_warmup:
                for group in optim.param_groups:
                    group["lr"] = lr * min(1.0, step / n_warmup)
            scaler.step(optim)
            scaler.update()
            total += losses.detach().double() * xs.shape[1]  # no per-step read-back: summed on the device
        for m, value in enumerate((total / max(n, 1)).tolist()):
            history[m].append(value)
    with torch.no_grad():
        for m, model in enumerate(members):
            model.load_state_dict({**{k: v[m] for k, v in params.items()}, **{k: v[m] for k, v in buffers.items()}})
    if recalibrate_bn:
        from medeval.models.training import recalibrate_batch_norm

        for model, a in zip(members, cpu_arrays, strict=True):  # per member: the statistics of its own data, as alone
            recalibrate_batch_norm(model, a, batch_size=batch_size, device=dev, num_workers=0)
    return history
