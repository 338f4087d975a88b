"""Chapter 5, CIFAR-10 "automobile vs rest": the En / Ep trial-models of thesis chapter 5 (Reshma 2021).

Thesis §5.5.1-5.5.4 and Table 5.3:

* data: CIFAR-10 (Krizhevsky 2009), 50,000 training and 10,000 test images of 32x32 pixels; "automobile"
  (label 1) is the positive class, the nine others the negative class, so both sets are 1:9;
* training subsets (:func:`medeval.data.one_vs_rest.biased_subset`): ``U = floor(5000 / 3) = 1666``, computed
  from the data; 4U = 6,664 images, En = U positives + 3U negatives, Ep = 3U positives + U negatives, the
  negatives split equally over the nine negative classes; 20 % of the subset is held out for validation;
* model: ResNet50 pre-trained on ImageNet (Keras), fine-tuned; here the torch ResNet50 of
  :mod:`medeval.models.backbones` with a local torchvision ImageNet checkpoint (``weights_path``), global
  average pooling and a 2-way linear layer (softmax). The thesis does not describe its head; Keras' usual
  fine-tuning head is the same (``include_top=False`` + pooling + ``Dense(2, softmax)``);
* training (:func:`medeval.models.training.train_with_validation`): Adam, starting lr 1e-4, mini-batch 32,
  categorical cross-entropy, lr x 0.3 when the validation loss has not improved for 10 epochs, early stopping
  on the validation loss (patience not stated: a parameter), augmentation as Keras
  ``ImageDataGenerator(rotation_range=15, width_shift_range=5/32, height_shift_range=5/32,
  horizontal_flip=True)`` (:mod:`medeval.models.augmentation`);
* 10 trial-models per distribution, each on its own random subset, all scored on the whole test set.

:func:`cifar10_run` trains and scores one trial-model; its result has the shape of
:func:`medeval.experiments.evaluation_measures.digits_run` (key ``"imbalanced"``), which the chapter's
analyses consume.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from medeval.data import training_sets as ts
from medeval.data.manifest import file_hash
from medeval.data.one_vs_rest import OneVsRestSubset, biased_subset, equal_counts
from medeval.models.device import limit_cpu_threads

__all__ = [
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "MODELS",
    "POSITIVE_CLASS",
    "BinaryImageClassifier",
    "OneVsRestSubset",
    "biased_subset",
    "build_classifier",
    "cifar10_run",
    "run_rng",
    "scored_test_indices",
]

#: CIFAR-10 label of "automobile", the positive class (thesis §5.5.3).
POSITIVE_CLASS = 1
#: Backbones :func:`cifar10_run` accepts (``resnet50`` is the thesis's).
MODELS = ("resnet50", "resnet18", "small_cnn")
#: Channel statistics torchvision's ImageNet checkpoints were trained with (RGB, on [0, 1] pixels).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class BinaryImageClassifier(nn.Module):
    """Pixels -> normalisation -> (resize) -> backbone -> global average pooling -> linear logits.

    ``forward`` takes raw pixel values in [0, 255] (any float dtype, (N, 3, H, W)) and returns
    ``(N, n_classes)`` logits. Normalisation: ``x / 255``, then ``(x - mean) / std`` per channel when
    ``mean``/``std`` are given (ImageNet statistics for pre-trained weights). Keeping it inside the model makes
    training, validation and test inputs go through the same steps and lets the data stay uint8.
    """

    def __init__(
        self, backbone: nn.Module, n_classes: int = 2, *, mean=None, std=None, input_size: int | None = None
    ):
        super().__init__()
        if (mean is None) != (std is None):
            raise ValueError("mean and std must be given together (or both None)")
        self.backbone = backbone
        self.classifier = nn.Linear(backbone.out_channels, n_classes)
        self.input_size = input_size
        if mean is not None:
            self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
            self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))
        else:
            self.mean = self.std = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x / 255.0
        if self.mean is not None:
            x = (x - self.mean) / self.std
        if self.input_size is not None and tuple(x.shape[-2:]) != (self.input_size, self.input_size):
            x = F.interpolate(
                x, size=(self.input_size, self.input_size), mode="bilinear", align_corners=False
            )
        features = self.backbone(x)
        return self.classifier(features.mean(dim=(2, 3)))


def build_classifier(
    model: str = "resnet50",
    *,
    weights_path: str | Path | None = None,
    n_classes: int = 2,
    input_size: int | None = None,
) -> BinaryImageClassifier:
    """A :class:`BinaryImageClassifier` on an RGB backbone of :data:`MODELS`.

    With ``weights_path`` (a local torchvision ImageNet state dict, ResNets only; nothing is downloaded) the
    backbone is initialised from it and inputs are normalised with :data:`IMAGENET_MEAN` / :data:`IMAGENET_STD`
    after scaling to [0, 1], as torchvision's checkpoints expect (Keras' own ResNet50 weights use "caffe"
    preprocessing instead: BGR, mean-pixel subtraction; the statistics must match the checkpoint). Without it
    the backbone is randomly initialised and pixels are only scaled to [0, 1]. ``input_size`` resizes
    (bilinearly) to ``input_size`` x ``input_size`` before the backbone; ``None`` keeps CIFAR-10's 32 x 32.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if input_size is not None and (int(input_size) != input_size or input_size < 32):
        raise ValueError(
            f"input_size must be an integer >= 32 (or None for the native size), got {input_size!r}"
        )
    if weights_path is not None and model == "small_cnn":
        raise ValueError(
            "weights_path is only supported for the ResNet models (model='resnet50' or 'resnet18')"
        )
    from medeval.models.backbones import build_backbone

    backbone = build_backbone(model, in_channels=3, weights_path=weights_path)
    stats = {"mean": IMAGENET_MEAN, "std": IMAGENET_STD} if weights_path is not None else {}
    return BinaryImageClassifier(
        backbone, n_classes, input_size=None if input_size is None else int(input_size), **stats
    )


def run_rng(seed: int, run: int, distribution: str) -> np.random.Generator:
    """The generator of one trial-model, seeded by ``(seed, run, crc32(distribution))``: runs and distributions
    get distinct, reproducible streams (subset draw, validation split, torch init, shuffling, augmentation)."""
    return np.random.default_rng([int(seed), int(run), zlib.crc32(distribution.encode())])


def scored_test_indices(labels, size: int | None, *, seed: int) -> np.ndarray:
    """Indices of the test images to score: all of them (``size=None``, the thesis), or ``size`` images drawn
    equally from every class (:func:`~medeval.data.one_vs_rest.equal_counts`; keeps CIFAR-10's 1:9 when
    ``size`` is a multiple of 10) with a generator seeded by ``seed`` only, so every trial-model of a
    study shares them. Sorted."""
    y = np.asarray(labels)
    if size is None:
        return np.arange(y.size)
    if int(size) != size or not 1 <= size <= y.size:
        raise ValueError(f"test_size must be None or an integer in [1, {y.size}], got {size!r}")
    rng = np.random.default_rng([int(seed), 0x7E57])
    classes = np.unique(y)
    parts = []
    for c, k in zip(classes, equal_counts(int(size), classes.size), strict=True):
        pool = np.flatnonzero(y == c)
        if pool.size < k:
            raise ValueError(f"test_size={size}: class {c} has {pool.size} test images, {k} are needed")
        parts.append(rng.choice(pool, size=int(k), replace=False))
    return np.sort(np.concatenate(parts))


def _nchw(images: np.ndarray) -> torch.Tensor:
    """(N, H, W, C) uint8 -> contiguous (N, C, H, W) uint8 tensor (pixels stay raw; the model normalises)."""
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2)))


def _check_run_arguments(distribution: str, model: str, run: int, weights_path, weights_sha256) -> None:
    """:func:`cifar10_run`'s arguments, checked before any data is read: ValueError naming the parameter."""
    if distribution not in ts.BINARY_DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {list(ts.BINARY_DISTRIBUTIONS)}, got {distribution!r}")
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if int(run) != run or run < 0:
        raise ValueError(f"run must be a non-negative integer, got {run!r}")
    if weights_sha256 is not None:
        if weights_path is None:
            raise ValueError("weights_sha256 given without weights_path")
        if file_hash(weights_path) != weights_sha256:
            raise ValueError(f"weights_path {weights_path} changed since the run was configured (sha256 differs)")


def cifar10_run(
    *,
    distribution: str,
    run: int,
    seed: int = 0,
    model: str = "resnet50",
    weights_path: str | Path | None = None,
    weights_sha256: str | None = None,
    input_size: int | None = None,
    max_epochs: int = 100,
    batch_size: int = 32,
    lr: float = 1e-4,
    lr_factor: float = 0.3,
    lr_patience: int = 10,
    early_stopping_patience: int | None = 20,
    validation_fraction: float = 0.2,
    augment: bool = True,
    unit_cap: int | None = None,
    test_size: int | None = None,
    device: str = "cpu",
    amp: bool = True,
    eval_batch_size: int = 256,
) -> dict:
    """Train one En or Ep trial-model on CIFAR-10 "automobile vs rest" and score the test set (thesis §5.5).

    Steps (every random choice from :func:`run_rng` ``(seed, run, distribution)``):

    1. read CIFAR-10 from ``require("cifar10")`` (:class:`~medeval.data.manifest.DatasetUnavailableError`
       when it is absent; nothing is downloaded);
    2. draw the 4U subset (:func:`~medeval.data.one_vs_rest.biased_subset`, positive class 1 "automobile",
       ``U = floor(#automobile / 3)`` = 1666, optionally capped by ``unit_cap``) and hold out
       ``validation_fraction`` of it (:func:`~medeval.data.training_sets.train_validation_split`; 1,333 of
       6,664);
    3. build the classifier (:func:`build_classifier`; torch initialised from the run's stream) and train it with
       :func:`~medeval.models.training.train_with_validation`: Adam (``lr``), mini-batch ``batch_size``,
       cross-entropy on the 2-way softmax (= categorical cross-entropy), lr x ``lr_factor`` after
       ``lr_patience`` epochs without validation-loss improvement, early stopping after
       ``early_stopping_patience`` such epochs (``None``: run ``max_epochs``), best weights restored; with
       ``augment`` the thesis's Keras augmentation (:class:`~medeval.models.augmentation.RandomAffineFlip`) is
       applied to every training batch on the device;
    4. score the whole test set (10,000 images, 1:9; or :func:`scored_test_indices` of ``test_size``) with the
       positive-class softmax probability, in float32 (no mixed precision for scoring, so scores are not
       rounded to bfloat16 and do not tie artificially).

    ``weights_sha256``, when given, must equal :func:`medeval.data.manifest.file_hash` of ``weights_path`` (the chapter's grid passes
    it, so cached runs are keyed by the weights' bytes, not only their path; a changed file raises ValueError).
    ``amp`` enables mixed precision for training on CUDA only (no effect on the CPU). On the CPU the run uses
    one torch thread (runs execute one per process). Raises ``ValueError`` naming the parameter for an unknown
    ``distribution`` or ``model``.

    Returns ``{"distribution", "run", "seed", "model", "unit", "n_pos", "n_neg", "negatives_per_class",
    "train_size", "val_size", "test_size", "epochs_run", "best_epoch", "best_val_loss", "stopped_early",
    "history": {"train_loss", "val_loss", "lr"}, "imbalanced": {"y_true": bool (n_test,), "score_c": float32
    (n_test,), "argmax_c": bool (n_test,)}}``.
    """
    from medeval.data.manifest import require
    from medeval.data.readers import read_cifar10
    from medeval.models.augmentation import RandomAffineFlip
    from medeval.models.training import predict, train_with_validation

    _check_run_arguments(distribution, model, run, weights_path, weights_sha256)
    rng = run_rng(seed, run, distribution)
    limit_cpu_threads(device)

    root = require("cifar10")
    x_train, d_train = read_cifar10(root, "train")
    x_test, d_test = read_cifar10(root, "test")

    subset = biased_subset(d_train, distribution, positive_class=POSITIVE_CLASS, seed=rng, unit_cap=unit_cap)
    tr, va = ts.train_validation_split(subset.size, validation_fraction=validation_fraction, seed=rng)
    idx_tr, idx_va = subset.indices[tr], subset.indices[va]
    torch_seed = int(rng.integers(2**31 - 1))
    augment_seed = int(rng.integers(2**31 - 1))

    torch.manual_seed(torch_seed)
    net = build_classifier(model, weights_path=weights_path, n_classes=2, input_size=input_size)
    train = (_nchw(x_train[idx_tr]), torch.from_numpy((d_train[idx_tr] == POSITIVE_CLASS).astype(np.int64)))
    val = (_nchw(x_train[idx_va]), torch.from_numpy((d_train[idx_va] == POSITIVE_CLASS).astype(np.int64)))
    history = train_with_validation(
        net,
        train,
        val,
        F.cross_entropy,
        max_epochs=max_epochs,
        batch_size=batch_size,
        lr=lr,
        lr_factor=lr_factor,
        lr_patience=lr_patience,
        early_stopping_patience=early_stopping_patience,
        restore_best_weights=True,
        augment=RandomAffineFlip(seed=augment_seed) if augment else None,
        device=device,
        seed=torch_seed,
        amp=amp,
        eval_batch_size=eval_batch_size,
    )

    test_idx = scored_test_indices(d_test, test_size, seed=seed)
    probs = predict(
        net,
        _nchw(x_test[test_idx]),
        batch_size=eval_batch_size,
        device=device,
        forward=lambda m, x: torch.softmax(m(x).float(), dim=1),
        amp=False,
    )
    y_true = d_test[test_idx] == POSITIVE_CLASS
    return {
        "distribution": distribution,
        "run": int(run),
        "seed": int(seed),
        "model": model,
        "unit": subset.unit,
        "n_pos": subset.n_pos,
        "n_neg": subset.n_neg,
        "negatives_per_class": subset.negatives_per_class,
        "train_size": int(idx_tr.size),
        "val_size": int(idx_va.size),
        "test_size": int(test_idx.size),
        "epochs_run": history.epochs_run,
        "best_epoch": history.best_epoch,
        "best_val_loss": float(history.best_val_loss),
        "stopped_early": history.stopped_early,
        "history": {"train_loss": history.train_loss, "val_loss": history.val_loss, "lr": history.lr},
        "imbalanced": {
            "y_true": np.asarray(y_true, dtype=bool),
            "score_c": probs[:, 1].astype(np.float32),
            "argmax_c": probs.argmax(axis=1) == 1,
        },
    }
