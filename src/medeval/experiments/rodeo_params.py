"""Parameters of chapter 2 (:mod:`medeval.experiments.rodeo`): the schema, its cross-field rules and its resource
estimate.

A light module: the standard library, pydantic and :mod:`medeval.core.schema` only, so that a parameter set is
validated, and its resource estimate computed, before numpy, torch or a kernel load.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from medeval.core.schema import MIB, ChapterParams, Distinct, ResourceEstimate, Violation, ranked_drivers

#: the 8 ChestX-ray8 box classes (the detector's outputs)
N_CLASSES = 8
#: images of the full ChestX-ray14 release whose patient has no boxed image: the pool the real detector's training
#: images are drawn from (:func:`medeval.experiments.rodeo.chestxray14_detection_data`; a test recounts it)
CHESTXRAY14_TRAIN_POOL = 96_182
#: boxed images of the oracle test half (patient-level 50/50 split of the 880 boxed images), the real detector's
#: test set at oracle_test_fraction = 0.5
BOXED_IMAGES = 880
#: oracle figures, each one task of the grid
N_FIGURES = 8

FloatList = Distinct[list[Annotated[float, Field(ge=0, le=10)]]]
ProbList = Distinct[list[Annotated[float, Field(ge=0, le=1)]]]


class Params(ChapterParams):
    """Parameters of chapter 2 (RoDeO)."""

    n_runs: int = Field(5, ge=1, le=100, description="repetitions of each oracle setting (the paper: 5)")
    oracle_test_fraction: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="fraction of boxed NIH images (by patient) forming the oracle test set, also the detector's "
        "test set with detector_data=chestxray14 (paper: 0.5)",
    )
    sigma_pos: FloatList = Field(
        [0, 0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0],
        min_length=2,
        description="position-noise std (box sizes), Figs. 3 and 8",
    )
    sigma_shape: FloatList = Field(
        [0, 0.25, 0.5, 0.75, 1.0, 1.5], min_length=2,
        description="log-normal shape-noise std, Fig. 3",
    )
    p_values: ProbList = Field(
        [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
        min_length=2,
        description="probabilities for under-/over-prediction and class confusion, Figs. 4, 7, 10, 11",
    )
    expected_duplicates: FloatList = Field(
        [0, 0.25, 0.5, 1, 2, 3, 4], min_length=2,
        description="E[D] of the box duplication, Fig. 5",
    )
    position_bias: FloatList = Field(
        [0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0],
        min_length=2,
        description="position bias |Δp| (box sizes), Fig. 8",
    )
    sigma_size: FloatList = Field(
        [0, 0.25, 0.5, 0.75, 1.0, 1.5], min_length=2,
        description="size-noise std, Fig. 9",
    )
    sigma_ratio: FloatList = Field(
        [0, 0.25, 0.5, 0.75, 1.0, 1.5], min_length=2,
        description="aspect-ratio-noise std, Fig. 9",
    )
    random_box_sizes: Distinct[list[Annotated[float, Field(gt=0, le=1)]]] = Field(
        [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7],
        min_length=2,
        description="side s of the random square boxes (fraction of the image), Fig. 7",
    )
    shift_grid_size: int = Field(
        41, ge=5, le=201, description="grid points per axis of the Fig. 2 shift maps"
    )
    shift_range: float = Field(
        1.5, gt=0, le=5, description="largest offset of the Fig. 2 maps (target sizes)"
    )
    # Table 1 analogue
    detector_data: Literal["phantom", "chestxray14"] = Field(
        "phantom",
        description="data of the Table-1 detector: CXR phantoms, or the real ChestX-ray14 images (full)",
    )
    n_train: int = Field(
        800,
        ge=16,
        le=200_000,
        description="training images of the weakly supervised CNN (chestxray14: drawn from the "
        f"{CHESTXRAY14_TRAIN_POOL:,} images of patients without boxes)",
    )
    n_test: int = Field(
        300, ge=8, le=50_000, description="phantom test images (those with boxes are evaluated)"
    )
    image_size: int = Field(64, ge=64, le=512, description="image side in pixels")
    backbone: Literal["small_cnn", "resnet18", "resnet50"] = Field("small_cnn", description="CNN backbone")
    epochs: int = Field(5, ge=0, le=500, description="training epochs")
    batch_size: int = Field(64, ge=1, le=1024, description="training batch size")
    lr: float = Field(1e-3, gt=0, le=1, description="Adam learning rate (paper: 3.6e-5 for 50k iterations)")
    weight_decay: float = Field(1e-6, ge=0, le=1, description="Adam weight decay (paper: 1e-6)")
    cam_thresholds: Distinct[list[Annotated[int, Field(ge=1, le=254)]]] = Field(
        [60, 180], min_length=1,
        description="thresholds of the per-image 0-255 CAM map (paper: 60 and 180)",
    )
    cam_min_probability: float = Field(
        0.25,
        ge=0,
        le=1,
        description="box only classes whose image-level probability reaches this (0 = box every class map)",
    )
    n_bootstrap: int = Field(
        200, ge=0, le=10_000, description="bootstrap resamples of the test images for CIs"
    )

    # ---- cross-field rules ---------------------------------------------------------------------------------
    def violations(self) -> list[Violation]:
        out = super().violations()
        if self.detector_data == "chestxray14" and self.n_train > CHESTXRAY14_TRAIN_POOL:
            out.append(Violation(
                ("detector_data", "n_train"),
                f"with detector_data='chestxray14' the training images are drawn from the {CHESTXRAY14_TRAIN_POOL:,} "
                f"images of patients without boxes, so n_train must be at most {CHESTXRAY14_TRAIN_POOL:,}",
            ))
        return out

    def required_datasets(self) -> tuple[str, ...]:
        shipped = ("chestxray14-boxes", "chestxray14-labels")
        return shipped + (("chestxray14-images",) if self.detector_data == "chestxray14" else ())

    # ---- resources ---------------------------------------------------------------------------------------
    #: a kernel with the chapter's imports (numpy, pandas, scipy, matplotlib, torch) and its figures, before the
    #: detector's data; measured: 664 MiB PSS for a whole smoke run, of which ~225 MiB training activations
    base_memory: ClassVar[int] = 450 * MIB
    #: a forked worker of the oracle grid (one figure: the NIH test boxes, its corrupted copies and metric tables);
    #: measured: 504 MiB PSS for a smoke run with a 16-image detector, i.e. ~30 MiB per worker beside the kernel
    worker_memory: ClassVar[int] = 40 * MIB
    #: share of the phantom test images that hold a box of the 8 classes (measured: 28 of 64, 254 of 617 and 399
    #: of 1,000 at seed 0)
    boxed_share: ClassVar[float] = 0.42
    #: bytes per pixel of every phantom while they are made (float32 image, uint16 lesion mask) and the float32
    #: copies of the training and test images taken from them (measured: 9.8 for 1,800 phantoms of 128 px)
    phantom_bytes: ClassVar[float] = 10.0
    #: bytes per pixel of a real image while the reader decodes and resizes it, and the float32 copy kept
    real_bytes: ClassVar[float] = 8.0
    #: bytes per pixel of each training image during training (the float32 images and the temporary of the
    #: training-set standard deviation)
    train_bytes: ClassVar[float] = 8.0
    #: bytes per pixel and per evaluated test image of the class activation maps: 8 classes at the input size,
    #: float32 from the network (its batches and their concatenation), a float64 copy and two float64 temporaries
    #: of the normalisation in ``cam_boxes`` (measured: 255 in a chapter run on 399 test images of 128 px, of
    #: which ``cam_boxes`` alone 166)
    cam_bytes: ClassVar[float] = N_CLASSES * 32
    #: bytes per pixel and per channel of one training batch (activations kept for backward and their gradients)
    #: summed over the SmallCNN's blocks (16, 32, 64, 128 channels); per input pixel for the ResNets
    #: (measured: the peak resident memory of a CPU training epoch, 22-36 B for the SmallCNN at 64-128 px, 700 B
    #: for ResNet-18 and 2000 B for ResNet-50 at 128 px; on a GPU this memory is the device's, not the host's)
    activation_bytes: ClassVar[float] = 30.0
    resnet_activation_bytes: ClassVar[dict[str, float]] = {"resnet18": 700.0, "resnet50": 2000.0}

    # ---- time: a rough wall time on the 2-core reference machine ------------------------------------------
    #: seconds outside the terms below: kernel start, imports, the shift maps, closed forms and every figure
    #: (the smoke profile's 11.2 s recorded in results/timings.json less its model's terms, 0.6 s)
    start_seconds: ClassVar[float] = 10.6
    #: one oracle evaluation (a corrupted copy of the NIH test boxes scored by every metric), per setting and
    #: run: ``a + b x oracle_test_fraction`` (measured, 1 process: 2.7 ms at 0.25, 3.4 ms at 0.5)
    oracle_eval_seconds: ClassVar[tuple[float, float]] = (2.2e-3, 2.4e-3)
    #: rendering a phantom pixel (measured 0.08-0.12 us for 1,100 phantoms of 64-128 px)
    render_seconds: ClassVar[float] = 0.1e-6
    #: a training image pixel and epoch of the detector at 64 px, forward and backward on the kernel's 2
    #: threads (measured: SmallCNN 0.47-0.51 us; ResNet-18 0.84, ResNet-50 2.4 us); the SmallCNN's cost per
    #: pixel grows with the image as ``(image_size / 64) ** small_cnn_size_exponent`` (measured 0.69-0.75 us
    #: at 128 px, the ResNets' did not grow); one Adam step beyond its pixels
    train_pixel_seconds: ClassVar[dict[str, float]] = {"small_cnn": 0.47e-6, "resnet18": 0.85e-6,
                                                       "resnet50": 2.4e-6}
    small_cnn_size_exponent: ClassVar[float] = 0.65
    step_seconds: ClassVar[float] = 2e-3
    #: a boxed test image pixel: its class activation maps and their boxes (measured 0.5 us at 64 px,
    #: 1.0-1.6 us at 128 px, SmallCNN; the more boxes, the slower)
    cam_pixel_seconds: ClassVar[float] = 1.0e-6
    #: a bootstrap replicate, per boxed test image (Table 1 on a resample; measured 0.68 s for 200 x 126)
    bootstrap_image_seconds: ClassVar[float] = 27e-6

    def oracle_settings(self) -> dict[str, int]:
        """Settings of every oracle figure (``rodeo.figure_settings``; a test keeps the counts equal)."""
        p, ratio = len(self.p_values), len(self.sigma_ratio)
        return {"fig3": len(self.sigma_pos) * len(self.sigma_shape), "fig4": p,
                "fig5": len(self.expected_duplicates), "fig7": 3 * len(self.random_box_sizes),
                "fig8": 3 * len(self.position_bias),
                "fig9": len(self.sigma_size) + ratio - (0.0 in self.sigma_size and 0.0 in self.sigma_ratio),
                "fig10": p, "fig11": p}

    def time_estimate(self) -> float | None:
        """Rough wall time (seconds) on the 2-core reference machine: ``start_seconds`` + the oracle grid
        (settings x ``n_runs`` evaluations, over the pool's processes, at least its largest figure) + the
        detector (phantom rendering, ``epochs x n_train`` image pixels of training, class activation maps of
        the boxed test images) + the bootstrap of Table 1 (replicates x boxed test images).

        Calibrated on micro-benchmarks of these functions (the constants above) and the smoke run (model
        11 s, recorded 11.2 s); checked against the default run (27 s, recorded 30.1 s) and two more runs
        (1,000 + 500 phantoms of 128 px, 3 epochs: 56 s, measured 71.6 s, where the SmallCNN trained slower
        than in its micro-benchmark; 2,000 + 400 of 96 px: 52 s, measured 47.5 s). ``None`` where no model was
        calibrated: ``device='cuda'`` (a GPU's speed cannot be measured on the CPU reference; ``auto`` counts
        as the CPU) and ``detector_data='chestxray14'`` (reading the real images was never timed)."""
        if self.device == "cuda" or self.detector_data != "phantom":
            return None
        a, b = self.oracle_eval_seconds
        per_setting = self.n_runs * (a + b * self.oracle_test_fraction)
        settings = self.oracle_settings()
        processes = self.reference_processes(N_FIGURES)
        oracle = per_setting * max(sum(settings.values()) / processes, max(settings.values()))
        px, boxed = self.image_size**2, self.n_test_images()
        pixel = self.train_pixel_seconds[self.backbone] * (
            (self.image_size / 64) ** self.small_cnn_size_exponent if self.backbone == "small_cnn" else 1.0)
        detector = (self.render_seconds * (self.n_train + self.n_test) * px
                    + self.epochs * (self.n_train * px * pixel
                                     + -(-self.n_train // self.batch_size) * self.step_seconds)
                    + self.cam_pixel_seconds * boxed * px)
        bootstrap = self.bootstrap_image_seconds * self.n_bootstrap * boxed
        return self.start_seconds + oracle + detector + bootstrap

    def n_test_images(self) -> float:
        """Test images the detector is evaluated on: the boxed phantoms, or the boxed NIH test half."""
        if self.detector_data == "phantom":
            return self.boxed_share * self.n_test
        return BOXED_IMAGES * self.oracle_test_fraction

    def resource_estimate(self) -> ResourceEstimate:
        px = self.image_size**2
        n_test = self.n_test_images()
        if self.detector_data == "phantom":
            data = self.phantom_bytes * (self.n_train + self.n_test) * px
        else:
            data = self.real_bytes * (self.n_train + n_test) * px
        train = self.train_bytes * self.n_train * px
        if self.backbone == "small_cnn":
            act = self.activation_bytes * self.batch_size * sum(
                w * px / 4**i for i, w in enumerate((16, 32, 64, 128)))
        else:
            act = self.resnet_activation_bytes[self.backbone] * self.batch_size * px
        if self.device == "cuda":  # the activations live in the GPU's memory
            act = 0.0
        cam = self.cam_bytes * n_test * px + 4.0 * self.n_train * px  # the training images are still held
        workers = self.pool_size(N_FIGURES)
        terms = {
            "kernel": self.base_memory,
            "detector data": int(data),
            "training images": int(train),
            "activations": int(act),
            "class activation maps": int(cam),
            "oracle grid workers": int(workers * self.worker_memory),
        }
        # the oracle grid runs first, alone; then the detector: data, training, CAM boxes one after the other
        peak = self.base_memory + max(terms["oracle grid workers"], data, train + act, cam)
        size = {"image_size": self.image_size}
        n = self.n_train + self.n_test
        if self.detector_data == "phantom":
            images = ({"n_train": self.n_train} if self.n_train >= 0.1 * n else {}) | (
                {"n_test": self.n_test} if self.n_test >= 0.1 * n else {})
            tested = {"n_test": self.n_test}
        else:
            images, tested = {"n_train": self.n_train}, {"oracle_test_fraction": self.oracle_test_fraction}
        held = {"n_train": self.n_train} if 4.0 * self.n_train * px >= 0.5 * cam else {}
        net = {"batch_size": self.batch_size} | size | ({"backbone": self.backbone} if self.backbone != "small_cnn"
                                                        else {})
        drivers = ranked_drivers([(data, images | size), (train + act, {"n_train": self.n_train} | size),
                                  (act, net), (cam, tested | size | held)])
        if workers > 1 and terms["oracle grid workers"] >= max(data, train + act, cam, 256 * MIB):
            drivers["max_workers"] = self.max_workers
        return ResourceEstimate(peak_bytes=int(peak), seconds=self.time_estimate(), drivers=drivers,
                                terms=terms)
