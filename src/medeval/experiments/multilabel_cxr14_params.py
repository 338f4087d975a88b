"""Parameters of chapter 5 (:mod:`medeval.experiments.multilabel_cxr14`): the schema, its cross-field rules and
its resource model.

A light module: the standard library, pydantic and :mod:`medeval.runtime.params` only, so that a parameter set is
validated, and its resource estimate computed, before numpy, torch or a kernel load.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from medeval.runtime.params import MIB, ChapterParams, Distinct, ResourceEstimate, Violation

#: images of the ChestX-ray14 label table
N_IMAGES_REAL = 112_120
#: total stride of the ResNet backbones (``medeval.models.backbones``): their last stage is input / 32 pixels wide
RESNET_STRIDE = 32
#: DataLoader worker processes on CUDA (``medeval.models.device.dataloader_kwargs``)
CUDA_LOADER_WORKERS = 8


class Params(ChapterParams):
    """Parameters of chapter 5 (``medeval params 05-multilabel`` prints this help)."""

    split_repetitions: int = Field(10, ge=1, le=1000, description="repetitions of random K-fold CV in the split experiment (thesis: 10)")
    split_folds: int = Field(5, ge=2, le=20, description="folds K of the split experiment (thesis: 5)")
    split_seed: int = Field(222, ge=0, le=2**31 - 1, description="seed of the split experiment (thesis: R set.seed(222); numpy's RNG differs)")
    iterative_repetitions: int = Field(10, ge=0, le=1000, description="repetitions with iterative stratification (0 = skip); about 5 s each on 2 CPU cores")
    split_subsample: int | None = Field(
        None, ge=1000, le=N_IMAGES_REAL, description="random subset of images for the split experiment; null = all 112,120"
    )
    data_source: Literal["phantom", "real"] = Field(
        "phantom", description="CNN data: chest phantoms with the real label distribution, or the real ChestX-ray14 "
        "images (dataset chestxray14-images)"
    )
    n_images: int = Field(1200, ge=60, le=500_000, description="phantoms generated for the CNN (split 70/10/20 at "
                          "patient level; data_source='phantom' only)")
    image_size: int = Field(64, ge=64, le=512, description="side in pixels of the rendered phantoms "
                            "(data_source='phantom'; real images are resized straight to input_size)")
    input_size: int | None = Field(
        32, ge=16, le=512, description="side of the CNN input: phantoms are block-averaged from image_size (it must "
        "divide image_size), real images resized to it; null = image_size"
    )
    difficulty: float = Field(1.0, gt=0, le=1.0, description="phantom conspicuity in (0, 1]; smaller is harder")
    backbone: Literal["small_cnn", "resnet18", "resnet50"] = Field("small_cnn", description="CNN backbone (medeval.models.backbones)")
    weights_path: str | None = Field(None, description="local torch state dict to initialise a ResNet backbone (optional)")
    epochs: int = Field(4, ge=0, le=500, description="training epochs")
    batch_size: int = Field(32, ge=1, le=4096, description="training batch size")
    learning_rate: float = Field(1e-3, gt=0, le=1.0, description="Adam learning rate")
    n_bootstrap: int = Field(1000, ge=10, le=100_000, description="patient-clustered bootstrap replicates for the CIs")
    eve_pairs: int = Field(50, ge=2, le=10_000, description="random patient-level halvings of the test set for EVE")
    real_protocols: Distinct[list[Literal["holdout_70_10_20", "kfold_5"]]] = Field(
        ["holdout_70_10_20", "kfold_5"], min_length=1, description="protocols for data_source=real (70/10/20 hold-out, "
        "5-fold CV), each at most once"
    )

    # ---- cross-field rules ---------------------------------------------------------------------------------
    def violations(self) -> list[Violation]:
        out = super().violations()
        if self.data_source == "phantom" and self.input_size is not None and self.image_size % self.input_size:
            out.append(Violation(("input_size", "image_size"),
                                 "input_size must divide image_size: phantoms are block-averaged from image_size to "
                                 "input_size (e.g. image_size=128 with input_size 16, 32, 64 or 128)"))
        if self.backbone != "small_cnn" and self.cnn_input_size() <= RESNET_STRIDE:
            out.append(Violation(("backbone", "input_size" if self.input_size else "image_size"),
                                 f"a ResNet needs a CNN input larger than {RESNET_STRIDE} px: its last stage would be "
                                 "1 x 1 pixel, where batch normalisation fails on a batch of one image (the last "
                                 "batch of an epoch can hold one); use a larger input or backbone='small_cnn'"))
        if self.weights_path is not None and self.backbone == "small_cnn":
            out.append(Violation(("weights_path", "backbone"),
                                 "weights_path initialises a ResNet: set backbone to resnet18 or resnet50, or leave "
                                 "weights_path null"))
        return out

    # ---- pre-flight --------------------------------------------------------------------------------------------
    def required_datasets(self) -> tuple[str, ...]:
        return ("chestxray14-labels",) + (("chestxray14-images",) if self.data_source == "real" else ())

    def preflight_problems(self) -> list[str]:
        from pathlib import Path

        if self.weights_path is not None and not Path(self.weights_path).expanduser().is_file():
            return [f"weights_path: the weights file {self.weights_path!r} does not exist"]
        return []

    # ---- resources, measured (ru_maxrss of one section at a scale where it dominates, and whole runs) ----------
    #: the kernel after the chapter's imports (numpy, pandas, scipy, matplotlib, torch) and the label table; the
    #: split experiment adds about 40 MiB at all 112,120 images
    base_memory: ClassVar[int] = 520 * MIB
    #: bytes per rendered phantom pixel (float32 image, finding masks)
    phantom_pixel_bytes: ClassVar[int] = 6
    #: bytes per CNN input pixel held for training (the block-averaged images and their train / validation / test
    #: copies, float32)
    input_pixel_bytes: ClassVar[int] = 8
    #: CPU training of one batch: the model with its gradients and Adam state, and the activations kept for the
    #: backward pass per sample and input pixel (measured: forward + backward + Adam steps on random batches)
    model_bytes: ClassVar[dict[str, int]] = {"small_cnn": 100 * MIB, "resnet18": 270 * MIB, "resnet50": 480 * MIB}
    activation_pixel_bytes: ClassVar[dict[str, int]] = {"small_cnn": 920, "resnet18": 810, "resnet50": 2200}
    #: a DataLoader worker process on CUDA (a fork of the kernel, its own pages)
    loader_worker_memory: ClassVar[int] = 100 * MIB

    def cnn_input_size(self) -> int:
        return self.input_size or self.image_size

    def resource_estimate(self) -> ResourceEstimate:
        side = self.cnn_input_size()
        terms: dict[str, int] = {"kernel": self.base_memory}
        drivers: dict[str, object] = {}
        if self.data_source == "phantom":
            terms["phantoms"] = self.n_images * (self.image_size**2 * self.phantom_pixel_bytes
                                                 + side**2 * self.input_pixel_bytes)
            data_drivers = ("n_images", "image_size") if self.input_size is None else ("n_images", "image_size",
                                                                                       "input_size")
        else:  # real images are read lazily, a batch (or a 512-image chunk for the predictions) at a time
            terms["image batches"] = max(self.batch_size, 512) * side**2 * self.input_pixel_bytes
            data_drivers = ("batch_size", "input_size" if self.input_size else "image_size")
        if self.device == "cuda":  # the model and its activations live on the GPU; the loader workers here
            terms["loader workers"] = CUDA_LOADER_WORKERS * self.loader_worker_memory
            model_drivers: tuple[str, ...] = ()
        else:  # device cpu, or auto (counted as the CPU: where there is a GPU this over-estimates)
            terms["training"] = (self.model_bytes[self.backbone]
                                 + self.batch_size * side**2 * self.activation_pixel_bytes[self.backbone])
            model_drivers = ("backbone", "batch_size", "input_size" if self.input_size else "image_size")
        big = {k: v for k, v in terms.items() if k != "kernel"}
        top = max(big.values())
        if terms.get("phantoms", terms.get("image batches", 0)) >= top / 4 and top > 64 * MIB:
            drivers.update({f: getattr(self, f) for f in data_drivers})
        if terms.get("training", 0) >= top / 4 and top > 64 * MIB:
            drivers.update({f: getattr(self, f) for f in model_drivers})
        return ResourceEstimate(peak_bytes=sum(terms.values()), seconds=None, drivers=drivers, terms=terms)
