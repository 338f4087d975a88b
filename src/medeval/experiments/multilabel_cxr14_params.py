"""Parameters of chapter 5 (:mod:`medeval.experiments.multilabel_cxr14`): the schema, its cross-field rules and
its resource model.

A light module: the standard library, pydantic and :mod:`medeval.core.schema` only, so that a parameter set is
validated, and its resource estimate computed, before numpy, torch or a kernel load.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from medeval.core.schema import MIB, ChapterParams, Distinct, ResourceEstimate, Violation

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

    # ---- time: a rough wall time on the 2-core reference machine ------------------------------------------
    #: seconds outside the terms below: kernel start, imports, the label table and its statistics, figures and
    #: the exercise (the smoke profile's 7.5 s recorded in results/timings.json less its model's terms, 0.4 s)
    start_seconds: ClassVar[float] = 7.1
    #: one repetition of the split experiment, per image: random K-fold and iterative stratification with the
    #: split statistics (measured at 20,000 and 112,120 images, 5 and 10 folds: 0.35 us and 6.8 us)
    random_split_seconds: ClassVar[float] = 0.35e-6
    iterative_split_seconds: ClassVar[float] = 6.8e-6
    #: rendering a phantom pixel, with its block-averaging and the predictions (measured 0.15 us at 64 px)
    render_seconds: ClassVar[float] = 0.15e-6
    #: a training pixel and epoch of the CNN on the kernel's 2 threads, Adam steps included (measured:
    #: SmallCNN 0.41-0.7 us at 32-64 px; ResNet-18 0.85 us, ResNet-50 2.4 us at 64 px with chapter 2's CNN)
    train_pixel_seconds: ClassVar[dict[str, float]] = {"small_cnn": 0.55e-6, "resnet18": 0.85e-6,
                                                       "resnet50": 2.4e-6}
    #: a patient-clustered bootstrap replicate, per test image: of the evaluation table (measured 2.4 us) and
    #: of EVE's comparison (8.2 us); one EVE halving of the test set (0.8 ms at 244 test images)
    evaluation_bootstrap_seconds: ClassVar[float] = 2.4e-6
    eve_bootstrap_seconds: ClassVar[float] = 8.2e-6
    eve_pair_seconds: ClassVar[float] = 0.8e-3

    def time_estimate(self) -> float | None:
        """Rough wall time (seconds) on the 2-core reference machine: ``start_seconds`` + the split experiment
        (repetitions x images, random and iterative) + the CNN on phantoms (rendering, ``epochs`` x its 70 %
        training images x input pixels) + the bootstraps of the test set (replicates x its 20 % test images).

        Calibrated on micro-benchmarks of these functions (the constants above) and the smoke run (model
        7.5 s, recorded 7.5 s); checked against the default run (20 s, recorded 22.0 s) and a third run (30 +
        30 split repetitions, 3,000 phantoms of 128 px at input 64, 2,000 bootstrap replicates: 70 s, measured
        71.0 s). ``None`` where no model was calibrated: ``device='cuda'`` (``auto`` counts as the CPU) and
        ``data_source='real'`` (reading the ChestX-ray14 images was never timed)."""
        if self.device == "cuda" or self.data_source == "real":
            return None
        n = self.split_subsample or N_IMAGES_REAL
        split = n * (self.split_repetitions * self.random_split_seconds
                     + self.iterative_repetitions * self.iterative_split_seconds)
        side = self.cnn_input_size()
        cnn = (self.render_seconds * self.n_images * self.image_size**2
               + self.epochs * 0.7 * self.n_images * side**2 * self.train_pixel_seconds[self.backbone])
        test = 0.2 * self.n_images
        per_replicate = test * (self.evaluation_bootstrap_seconds + self.eve_bootstrap_seconds)
        bootstrap = self.n_bootstrap * per_replicate + self.eve_pairs * self.eve_pair_seconds
        return self.start_seconds + split + cnn + bootstrap

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
            # a batch never holds more images than the training split (70 % of n_images on phantoms): batch_size
            # 4096 on the smoke profile's 140 training images was estimated at 4.2 GiB and used 0.65 GiB
            batch = self.batch_size if self.data_source != "phantom" else min(self.batch_size,
                                                                              max(1, int(0.7 * self.n_images)))
            terms["training"] = (self.model_bytes[self.backbone]
                                 + batch * side**2 * self.activation_pixel_bytes[self.backbone])
            model_drivers = ("backbone", "batch_size", "input_size" if self.input_size else "image_size")
        big = {k: v for k, v in terms.items() if k != "kernel"}
        top = max(big.values())
        if terms.get("phantoms", terms.get("image batches", 0)) >= top / 4 and top > 64 * MIB:
            drivers.update({f: getattr(self, f) for f in data_drivers})
        if terms.get("training", 0) >= top / 4 and top > 64 * MIB:
            drivers.update({f: getattr(self, f) for f in model_drivers})
        return ResourceEstimate(peak_bytes=sum(terms.values()), seconds=self.time_estimate(), drivers=drivers,
                                terms=terms)
