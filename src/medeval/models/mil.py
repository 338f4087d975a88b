"""Deep multiple-instance learning on a P x P grid of instances (chapter 1; Li et al., CVPR 2018).

A bag is an image; an instance is one cell of a P x P grid laid over the backbone's feature map. The
instance scorer of Romanova et al. (Sec. IV-A, Fig. 3) is::

    backbone (SmallCNN / ResNet-18 / ResNet-50 from :mod:`medeval.models.backbones`)
    -> adaptive max pooling of the feature map to P x P (the paper's locality-preserving max pooling;
       the identity when the map is already P x P, as in the authors' code)
    -> conv3x3 (+ ReLU, as in the authors' code) -> BatchNorm -> conv1x1 -> sigmoid

giving instance probabilities ``y_ij`` in [0, 1], shape ``(batch, P * P)`` (row-major, like
:func:`medeval.data.bagging.image_to_bag`). A MIL pooling operator turns them into a bag probability
(Sec. II-B), with N the number of instances:

* ``"max"`` (Eq. 1): ``Y = max_j y_j``
* ``"mean"`` (Eq. 2): ``Y = (1/N) sum_j y_j``
* ``"lse"`` (Eqs. 3-4): ``Y = (1/r) log[(1/N) sum_j exp(r y_j)]``; ``mean <= LSE_r <= max``, tending to
  mean as r -> 0 and to max as r -> inf. On [0, 1] inputs r = 1 is still mean-like (LSE_1 - mean <= 0.125).
* ``"noisy_or"`` (Eq. 5, Li et al.'s normalised form, the authors' code): ``Y = 1 - prod_j (0.98 + 0.02 (1 - y_j))``,
  i.e. each factor mapped into [0.98, 1] so the product does not underflow; about ``1 - exp(-0.02 sum_j y_j)``,
  a saturating soft count, *not* >= max.
* ``"noisy_or_log"`` (Eq. 5 exactly, evaluated in log space): ``Y = 1 - exp(sum_j log(1 - y_j))``; >= max.

For bags with instance labels (segmented images, Sec. III-D) the pooling is supervised, with
``S = {j : y_true_j = 1}`` and target 1:

* noisy-OR, the *corrected* Eq. 23 (the printed Eq. 23 drops the ``(1 - y)`` factor):
  ``Y = prod_{j in S} y_j * prod_{j not in S} (1 - y_j)`` (``"noisy_or_log"``, in log space) or its Li-normalised
  form ``prod_{j in S} (0.98 + 0.02 y_j) * prod_{j not in S} (0.98 + 0.02 (1 - y_j))`` (``"noisy_or"``);
* max: ``max_{j in S} y_j``; mean: ``(1/N)(sum_S y_j + sum_{not S} (1 - y_j))``;
  LSE: ``(1/r) log[(1/N)(sum_S exp(r y_j) + sum_{not S} exp(r (1 - y_j)))]`` (the paper's r; the authors'
  code always uses r = 1 here, available as ``supervised_lse_r=1.0``).

The loss is the bag binary cross-entropy, with annotated bags weighted ``annotated_weight`` (5 in Li et al.
and the authors' code). Unknown pooling names raise ``ValueError``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from medeval.models.backbones import SmallCNN, build_backbone
from medeval.models.convolution import Conv2d

__all__ = [
    "NOISY_OR_FACTOR",
    "POOLINGS",
    "MILNet",
    "bag_ranking_score",
    "build_mil_model",
    "check_pooling",
    "mil_bag_loss",
    "pool_instances",
    "supervised_pool",
]

POOLINGS = ("noisy_or", "noisy_or_log", "mean", "max", "lse")
#: Li et al.'s normalisation: each (1 - y) is mapped to 0.98 + 0.02 (1 - y) = 1 - 0.02 y.
NOISY_OR_FACTOR = 0.02
_EPS = 1e-6


def check_pooling(pooling: str, r: float | None = None) -> tuple[str, float | None]:
    """Validate a pooling name (and LSE's r > 0); returns ``(pooling, r)``."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    if pooling == "lse":
        if r is None or not (float(r) > 0 and math.isfinite(float(r))):
            raise ValueError(f"LSE pooling needs a finite r > 0, got r={r!r}")
        return pooling, float(r)
    return pooling, None


def _check_probs(probs: torch.Tensor) -> torch.Tensor:
    if probs.dim() != 2:
        raise ValueError(f"instance probabilities must have shape (batch, n_instances), got {tuple(probs.shape)}")
    return probs


def _noisy_or_log_negative(probs: torch.Tensor, pooling: str) -> torch.Tensor:
    """``log(1 - Y)`` of the noisy-OR bag probability (the log of the product of the per-instance factors)."""
    if pooling == "noisy_or":
        return torch.log1p(-NOISY_OR_FACTOR * probs).sum(dim=1)
    return torch.log1p(-probs.clamp(max=1 - 1e-7)).sum(dim=1)


def pool_instances(probs: torch.Tensor, pooling: str, r: float | None = None) -> torch.Tensor:
    r"""Bag probabilities ``(batch,)`` from instance probabilities ``(batch, N)`` (Eqs. 1-5; see module doc).

    ``pooling="noisy_or"`` is the Li et al. form of noisy-OR (the authors' code):

    .. math::

       \hat Y_i = 1 - \prod_j \bigl(0.98 + 0.02\,(1 - \hat y_{ij})\bigr) = 1 - \prod_j (1 - 0.02\, \hat y_{ij})
    """
    pooling, r = check_pooling(pooling, r)
    probs = _check_probs(probs)
    if pooling == "max":
        return probs.max(dim=1).values
    if pooling == "mean":
        return probs.mean(dim=1)
    if pooling == "lse":
        n = probs.shape[1]
        value = (torch.logsumexp(r * probs, dim=1) - math.log(n)) / r
        return torch.minimum(value, probs.max(dim=1).values)  # mean <= LSE <= max; removes round-off above max
    return -torch.expm1(_noisy_or_log_negative(probs, pooling))


def bag_ranking_score(probs: torch.Tensor, pooling: str, r: float | None = None) -> torch.Tensor:
    r"""A bag score for ranking (AUC): the pooled probability :math:`\hat Y_i`, except for noisy-OR, where the
    monotone equivalent :math:`-\log(1 - \hat Y_i)` is returned so that saturated bags (:math:`\hat Y_i = 1.0` in
    floating point) do not tie."""
    pooling, r = check_pooling(pooling, r)
    if pooling in ("noisy_or", "noisy_or_log"):
        return -_noisy_or_log_negative(_check_probs(probs), pooling)
    return pool_instances(probs, pooling, r)


def supervised_pool(
    probs: torch.Tensor, instance_labels: torch.Tensor, pooling: str, r: float | None = None
) -> torch.Tensor:
    r"""Supervised bag probability of annotated bags (Sec. III-D, corrected Eq. 23); target 1.

    .. math::

       \begin{aligned}
       \text{NOR:}\quad \hat Y_i &= \prod_{j \in S_i} \hat y_{ij} \prod_{j \in N_i \setminus S_i} (1 - \hat y_{ij}),
       \qquad \text{Max:}\quad \hat Y_i = \max_{j \in S_i} \hat y_{ij}, \\
       \text{Mean:}\quad \hat Y_i &= \frac{1}{N_i} \Bigl( \sum_{j \in S_i} \hat y_{ij}
       + \sum_{j \in N_i \setminus S_i} (1 - \hat y_{ij}) \Bigr), \\
       \text{LSE:}\quad \hat Y_i &= \frac{1}{r} \log \Bigl[ \frac{1}{N_i} \Bigl( \sum_{j \in S_i} e^{r \hat y_{ij}}
       + \sum_{j \in N_i \setminus S_i} e^{r (1 - \hat y_{ij})} \Bigr) \Bigr].
       \end{aligned}

    with :math:`S_i` the annotated (positive) instances of bag :math:`i` and :math:`N_i` all its instances.

    ``instance_labels`` is 0/1 of the same shape as ``probs``. Noisy-OR values can be tiny (a product of N
    factors); :func:`mil_bag_loss` therefore uses their logarithm directly.
    """
    return torch.exp(_supervised_log_prob(probs, instance_labels, pooling, r))


def _supervised_log_prob(probs, instance_labels, pooling, r):
    pooling, r = check_pooling(pooling, r)
    probs = _check_probs(probs)
    if instance_labels.shape != probs.shape:
        raise ValueError(
            f"instance_labels must have the shape of probs {tuple(probs.shape)}, got {tuple(instance_labels.shape)}"
        )
    s = instance_labels.to(probs.dtype)
    agree = s * probs + (1 - s) * (1 - probs)  # y on S, 1 - y off S
    if pooling == "noisy_or":
        return torch.log1p(-NOISY_OR_FACTOR * (1 - agree)).sum(dim=1)  # log prod (0.98 + 0.02 agree)
    if pooling == "noisy_or_log":
        return torch.log(agree.clamp(min=1e-7)).sum(dim=1)
    if pooling == "max":
        masked = probs.masked_fill(s == 0, float("-inf"))
        value = masked.max(dim=1).values
        return torch.log(torch.where(torch.isfinite(value), value, torch.zeros_like(value)).clamp(min=_EPS))
    if pooling == "mean":
        return torch.log(agree.mean(dim=1).clamp(min=_EPS))
    n = probs.shape[1]
    value = (torch.logsumexp(r * agree, dim=1) - math.log(n)) / r
    return torch.log(value.clamp(min=_EPS))


def _bag_log_probs(probs, pooling, r):
    """``(log Y, log(1 - Y))`` of the unsupervised bag probability, stable for noisy-OR."""
    if pooling in ("noisy_or", "noisy_or_log"):
        log_neg = _noisy_or_log_negative(probs, pooling).clamp(max=math.log1p(-_EPS))
        log_pos = torch.log(-torch.expm1(log_neg))
        return log_pos.clamp(min=math.log(_EPS)), log_neg
    y = pool_instances(probs, pooling, r).clamp(_EPS, 1 - _EPS)
    return torch.log(y), torch.log1p(-y)


def mil_bag_loss(
    probs: torch.Tensor,
    bag_labels: torch.Tensor,
    pooling: str,
    r: float | None = None,
    *,
    instance_labels: torch.Tensor | None = None,
    annotated: torch.Tensor | None = None,
    annotated_weight: float = 5.0,
    supervised_lse_r: float | None = None,
) -> torch.Tensor:
    """Mean bag BCE over the batch; annotated bags use :func:`supervised_pool` with target 1 and weight
    ``annotated_weight``. Pooled probabilities are clipped to [1e-6, 1 - 1e-6]."""
    pooling, r = check_pooling(pooling, r)
    probs = _check_probs(probs)
    y = bag_labels.to(probs.dtype).reshape(-1)
    if y.shape[0] != probs.shape[0]:
        raise ValueError(f"bag_labels must have one label per bag ({probs.shape[0]}), got {tuple(bag_labels.shape)}")
    log_pos, log_neg = _bag_log_probs(probs, pooling, r)
    loss = -(y * log_pos + (1 - y) * log_neg)
    if annotated is not None and instance_labels is not None and bool(annotated.any()):
        mask = annotated.to(torch.bool).reshape(-1)
        sup_r = supervised_lse_r if (pooling == "lse" and supervised_lse_r is not None) else r
        sup = -_supervised_log_prob(probs[mask], instance_labels[mask], pooling, sup_r)
        loss = loss.clone()
        loss[mask] = annotated_weight * sup
    return loss.mean()


class MILNet(nn.Module):
    """Instance scorer on a P x P grid: backbone -> adaptive max pool to P x P -> conv3x3-ReLU-BN-conv1x1-sigmoid.

    ``forward`` returns instance probabilities ``(batch, P * P)``; :meth:`instance_logits` the logits.
    """

    def __init__(self, backbone: nn.Module, grid_size: int, head_channels: int = 64):
        super().__init__()
        if int(grid_size) < 1:
            raise ValueError(f"grid_size must be a positive integer, got {grid_size}")
        self.backbone = backbone
        self.grid_size = int(grid_size)
        self.pool = nn.AdaptiveMaxPool2d(self.grid_size)
        c = backbone.out_channels
        self.head = nn.Sequential(
            Conv2d(c, head_channels, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.BatchNorm2d(head_channels),
            Conv2d(head_channels, 1, 1),
        )

    def instance_logits(self, x: torch.Tensor) -> torch.Tensor:
        features = self.backbone(x)
        if features.shape[-1] < self.grid_size or features.shape[-2] < self.grid_size:
            raise ValueError(
                f"the backbone's feature map {tuple(features.shape[-2:])} is smaller than the {self.grid_size} x "
                f"{self.grid_size} instance grid; use larger images or a backbone with a smaller stride"
            )
        return self.head(self.pool(features)).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.instance_logits(x))


def build_mil_model(
    backbone: str = "small_cnn",
    grid_size: int = 8,
    *,
    in_channels: int = 1,
    head_channels: int = 64,
    weights_path=None,
    small_cnn_widths: tuple[int, ...] | None = None,
) -> MILNet:
    """A :class:`MILNet` on a backbone of :mod:`medeval.models.backbones`.

    ``small_cnn_widths`` sets the SmallCNN's blocks (stride ``2 ** len(widths)``), e.g. ``(8, 16, 32)`` for a
    stride-8 network giving an 8 x 8 grid on 64-px images; ResNets have stride 32 (16 x 16 at 512 px).
    """
    if backbone == "small_cnn" and small_cnn_widths is not None:
        if weights_path is not None:
            raise ValueError("weights_path is only supported for the ResNet backbones")
        net = SmallCNN(in_channels, tuple(int(w) for w in small_cnn_widths))
    else:
        net = build_backbone(backbone, in_channels=in_channels, weights_path=weights_path)
    return MILNet(net, grid_size, head_channels=head_channels)
