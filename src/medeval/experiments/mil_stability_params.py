"""Parameters of chapter 1 (:mod:`medeval.experiments.mil_stability`): the schema, its cross-field rules and its
resource estimate.

A light module: the standard library, pydantic and :mod:`medeval.core.schema` only, so that a parameter set is
validated, and its resource estimate computed, before numpy, torch or a kernel load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal, get_args

from pydantic import Field

from medeval.core.schema import MIB, ChapterParams, Distinct, ResourceEstimate, Violation, ranked_drivers

OperatorName = Literal["noisy_or", "noisy_or_li", "mean", "lse_r0.1", "lse_r1", "max"]
OPERATOR_NAMES: tuple[str, ...] = get_args(OperatorName)
DataSource = Literal["phantom", "real"]

#: side of the chest phantoms in pixels (:func:`medeval.data.phantoms.chest.generate_chest_phantoms`; a test keeps
#: these equal to its ``MIN_IMAGE_SIZE`` and ``MAX_IMAGE_SIZE``)
PHANTOM_MIN_SIZE, PHANTOM_MAX_SIZE = 64, 512
#: the SmallCNN blocks of the digit bags: stride 8, one instance per 8 x 8 tile
DIGITS_WIDTHS: tuple[int, ...] = (4, 8, 16)
#: the real datasets of ``data_source="real"`` (manifest ids)
REAL_DATASETS: tuple[str, ...] = ("chestxray14-images", "mura", "pascal-voc-2005")
#: images each real dataset holds (ChestX-ray14: every image of the patients with a Cardiomegaly-positive image, from
#: the shipped label table; MURA v1.1 XR_SHOULDER train + valid; PASCAL VOC 2005 set 1)
REAL_IMAGES: dict[str, int] = {"chestxray14": 18035, "mura": 8942, "voc2005": 1578}
#: the shipped NIH tables: the phantoms follow their label and box statistics, the real cohort reads them
SHIPPED_TABLES: tuple[str, ...] = ("chestxray14-labels", "chestxray14-boxes")


def backbone_stride(backbone: str, small_cnn_widths) -> int:
    """Pixels per cell of the backbone's feature map: ``2 ** len(widths)`` for the SmallCNN, 32 for the ResNets."""
    return 2 ** len(small_cnn_widths) if backbone == "small_cnn" else 32


class Params(ChapterParams):
    """Parameters of chapter 1 (``medeval params 01-mil-stability`` shows this help)."""

    data_source: DataSource = Field(
        "phantom", description="phantom: CXR phantoms + digit bags; real: ChestX-ray14, MURA, PASCAL VOC 2005"
    )
    operators: Distinct[list[OperatorName]] = Field(
        ["noisy_or", "mean", "lse_r0.1", "lse_r1", "max"], min_length=1,
        description="MIL pooling operators",
    )
    n_models: int = Field(5, ge=2, le=50, description="models trained per operator on subsets (paper: 5)")
    subset_fraction: float = Field(0.95, gt=0.5, le=1.0, description="share of the training set per model")
    cv_folds: int = Field(3, ge=2, le=10, description="patient-grouped CV folds for bag AUC / DICE (paper: 5)")
    test_fraction: float = Field(0.25, gt=0.05, lt=0.6, description="share of patients in the fixed test set")
    backbone: Literal["small_cnn", "resnet18", "resnet50"] = Field("small_cnn", description="feature extractor")
    small_cnn_widths: list[Annotated[int, Field(ge=1, le=1024)]] = Field(
        [8, 16, 32], min_length=1, max_length=5,
        description="SmallCNN blocks (channels of each; stride 2 ** number of blocks)",
    )
    weights_path: str | None = Field(
        None, description="local ResNet checkpoint (ImageNet weights), optional; needs a ResNet backbone"
    )
    head_channels: int = Field(32, ge=4, le=1024, description="channels of the conv3x3 head (paper: 512)")
    image_size: int = Field(
        64, ge=32, le=1024,
        description=f"CXR image side in pixels (paper: 512; phantoms: {PHANTOM_MIN_SIZE} to {PHANTOM_MAX_SIZE})",
    )
    grid_size: int = Field(
        8, ge=2, le=32,
        description="P: instances per bag = P * P (paper: 16); divides image_size on phantoms",
    )
    n_images: int = Field(400, ge=40, le=200000, description="CXR phantoms generated (train + test)")
    difficulty: float = Field(
        0.1, gt=0.0, le=1.0,
        description="CXR lesion contrast: the enlarged heart blended into the normal one (1 = as rendered); size fixed",
    )
    annotated_fraction: float = Field(
        0.1, ge=0.0, le=1.0,
        description="share of positive training bags with instance labels (supervised pooling)",
    )
    annotated_weight: float = Field(5.0, ge=0.0, le=100.0, description="loss weight of annotated bags (Li et al.: 5)")
    epochs: int = Field(5, ge=1, le=200, description="training epochs")
    max_pooling_extra_epochs: int = Field(2, ge=0, le=100, description="extra epochs for max pooling (Table VIII)")
    lr: float = Field(3e-3, gt=0.0, le=1.0, description="Adam learning rate")
    batch_size: int = Field(12, ge=1, le=1024, description="batch size (small: more Adam steps per epoch)")
    threshold: float = Field(0.5, gt=0.0, lt=1.0, description="T(binary) of Eq. 10")
    jaccard_threshold: float = Field(0.1, gt=0.0, lt=1.0, description="T(Jacc) of Eq. 14")
    thresholds: Distinct[list[Annotated[float, Field(gt=0.0, lt=1.0)]]] = Field(
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], min_length=2,
        description="threshold sweep (Sec. IV-G)",
    )
    difficulty_levels: Distinct[list[Annotated[float, Field(gt=0.0, le=1.0)]]] = Field(
        [0.04, 0.06, 0.08, 0.1, 0.13, 0.17], min_length=2,
        description="CXR lesion contrasts for Fig. 8",
    )
    fig8_operators: Distinct[list[OperatorName]] = Field(
        ["noisy_or"], min_length=1, description="operators run per level"
    )
    digits_epochs: int = Field(8, ge=1, le=500, description="training epochs on the digit bags")
    digits_n_bags: int = Field(400, ge=40, le=100000, description="digit bags generated (train + test)")
    digits_tiles: int = Field(4, ge=2, le=16, description="digit tiles per canvas side (P of the digit bags)")
    digits_target: int = Field(3, ge=0, le=9, description="the target digit (the 'car')")
    confounder_strength: float = Field(
        1.0, ge=0.0, le=1.0, description="marker/label association of the confounded digits"
    )
    confounded_operators: Distinct[list[OperatorName]] = Field(
        ["noisy_or"], min_length=1, description="operators run on the confounded digits (stable but wrong)"
    )
    chance_n_bags: int = Field(2000, ge=10, le=1000000, description="random bag pairs for the chance level")

    # ---- cross-field rules ---------------------------------------------------------------------------------
    def stride(self) -> int:
        return backbone_stride(self.backbone, self.small_cnn_widths)

    def violations(self) -> list[Violation]:
        out = super().violations()
        phantom = self.data_source == "phantom"
        if phantom and not PHANTOM_MIN_SIZE <= self.image_size <= PHANTOM_MAX_SIZE:
            out.append(Violation(
                ("data_source", "image_size"),
                f"the chest phantoms are rendered at {PHANTOM_MIN_SIZE} to {PHANTOM_MAX_SIZE} px, so with "
                f"data_source='phantom' image_size must lie in [{PHANTOM_MIN_SIZE}, {PHANTOM_MAX_SIZE}]",
            ))
        if phantom and self.image_size % self.grid_size:
            out.append(Violation(
                ("image_size", "grid_size"),
                "grid_size must divide image_size (data_source='phantom': each instance is one of grid_size x "
                "grid_size equal cells of the lesion mask)",
            ))
        stride = self.stride()
        cells = self.image_size // stride
        if cells < self.grid_size:
            fields = ("image_size", "grid_size", "backbone") + (
                ("small_cnn_widths",) if self.backbone == "small_cnn" else ())
            what = (f"a SmallCNN of {len(self.small_cnn_widths)} blocks (stride {stride})"
                    if self.backbone == "small_cnn" else f"{self.backbone} (stride 32)")
            out.append(Violation(
                fields,
                f"{what} gives a {cells} x {cells} feature map, smaller than the grid_size x grid_size instance "
                f"grid; image_size // {stride} must be at least grid_size",
            ))
        base = self.operators[0]
        if phantom and base not in self.confounded_operators:
            out.append(Violation(
                ("operators", "confounded_operators"),
                f"the baseline operator (the first of operators, {base!r}) must be among confounded_operators: the "
                "vote histograms and the stable-but-wrong comparison read it on the confounded digits",
            ))
        if phantom and self.n_cxr_datasets() > 1 and base not in self.fig8_operators:
            out.append(Violation(
                ("operators", "fig8_operators"),
                f"the baseline operator (the first of operators, {base!r}) must be among fig8_operators: Fig. 8 and "
                "its trend claim join the lesion-contrast levels of the baseline",
            ))
        if self.weights_path is not None and self.backbone == "small_cnn":
            out.append(Violation(
                ("weights_path", "backbone"),
                "weights_path holds ResNet weights; it needs backbone 'resnet18' or 'resnet50' (the SmallCNN "
                "would ignore it)",
            ))
        return out

    # ---- pre-flight ---------------------------------------------------------------------------------------
    def required_datasets(self) -> tuple[str, ...]:
        return SHIPPED_TABLES + (REAL_DATASETS if self.data_source == "real" else ())

    def preflight_problems(self) -> list[str]:
        problems = []
        if self.weights_path is not None and not Path(self.weights_path).expanduser().is_file():
            problems.append(f"weights_path={self.weights_path!r}: no such file")
        return problems

    # ---- resources ---------------------------------------------------------------------------------------
    #: a kernel with the chapter's imports (numpy, pandas, scipy, matplotlib, torch) and its figures, before any
    #: data is made; measured: 522 MiB PSS for a whole smoke run (~60 MiB of it data and training)
    base_memory: ClassVar[int] = 450 * MIB
    #: a forked grid worker beyond its data (its private pages: torch's CPU allocator, OpenMP arenas, the
    #: scikit-learn digits); measured: 86 MiB PSS per worker of a smoke run with 2 workers, ~30 MiB of it data
    worker_memory: ClassVar[int] = 70 * MIB
    #: bytes per CXR pixel held by a process that built the chest phantoms: the cached pair of renderings
    #: (enlarged and normal heart, float32 each) and the lesion mask (bool); 13 while the second pair renders
    cxr_pair_bytes: ClassVar[float] = 13.0
    #: bytes per CXR pixel of each contrast level's blended images (float32) that a process keeps (LRU of 8)
    cxr_level_bytes: ClassVar[float] = 4.0
    #: bytes per digit-canvas pixel while a set of digit bags is made (float64 noise, float32 canvas and copies)
    digits_make_bytes: ClassVar[float] = 24.0
    #: bytes per pixel of a training run's inputs: the normalised copy of the training images (float32) and its
    #: temporaries, per image of the dataset
    train_copy_bytes: ClassVar[float] = 8.0
    #: bytes per pixel and per channel of one training batch (activations kept for the backward pass and their
    #: gradients, float32), summed over the SmallCNN's blocks; and per input pixel for the ResNets
    #: (measured: the peak resident memory of a CPU training epoch, 22-36 B for the SmallCNN at 64-128 px, 700 B
    #: for ResNet-18 and 2000 B for ResNet-50 at 128 px; on a GPU this memory is the device's, not the host's)
    activation_bytes: ClassVar[float] = 30.0
    resnet_activation_bytes: ClassVar[dict[str, float]] = {"resnet18": 700.0, "resnet50": 2000.0}
    #: bytes per (bag, instance) of the chance level: two float64 random maps and the scorer's copy of them
    chance_bytes: ClassVar[float] = 32.0

    def n_cxr_datasets(self) -> int:
        """Contrast levels whose images are held: the main level and every other Fig. 8 level (LRU of 8)."""
        if self.data_source == "real":
            return 1
        extra = sum(abs(d - self.difficulty) > 1e-12 for d in self.difficulty_levels)
        return min(1 + extra, 8)

    def n_grid_runs(self) -> int:
        datasets = 3 if self.data_source == "real" else 2
        runs = datasets * len(self.operators) * (self.n_models + self.cv_folds)
        if self.data_source == "phantom":
            runs += len(self.confounded_operators) * self.n_models
            runs += (self.n_cxr_datasets() - 1) * len(self.fig8_operators) * self.n_models
        return runs

    def _activations(self, side: int, widths) -> float:
        return self.activation_bytes * self.batch_size * sum(
            w * (side / 2**i) ** 2 for i, w in enumerate(widths))

    # ---- time: a rough wall time on the 2-core reference machine ------------------------------------------
    #: seconds of a run outside the grid: kernel start, imports, the metric-only tables and the figures (the
    #: smoke profile's 7.9 s recorded in results/timings.json less its model's grid and data terms)
    start_seconds: ClassVar[float] = 6.5
    #: one Adam step on the CPU, beyond its pixels (1 thread; measured: 1.5-1.9 ms per step at batch 3-48)
    step_seconds: ClassVar[float] = 1.7e-3
    #: seconds per input pixel of a training image and epoch (forward and backward, 1 thread): a SmallCNN
    #: costs ``pixel_seconds + mac_seconds x`` its multiply-adds per input pixel (measured: 0.21 us at widths
    #: 4-8-16, 612 MACs, 0.30 us at 8-16-32, 2,376 MACs, at 32-128 px); the ResNets per pixel (measured at
    #: 128-256 px)
    pixel_seconds: ClassVar[float] = 0.18e-6
    mac_seconds: ClassVar[float] = 5.1e-11
    resnet_pixel_seconds: ClassVar[dict[str, float]] = {"resnet18": 1.6e-6, "resnet50": 4.5e-6}
    #: prediction of a test image, as a share of a training epoch's per-pixel cost (measured ~1/3)
    predict_share: ClassVar[float] = 1 / 3
    #: rendering one CXR phantom pixel (measured 0.16-0.22 us at 400 images of 64-128 px); each rendering is
    #: done twice (enlarged and normal heart), in the workers (in parallel) and again in the kernel
    render_seconds: ClassVar[float] = 0.2e-6

    def _pixel_cost(self, side: int, backbone: str, widths, head: int) -> float:
        """Seconds per training image and epoch at ``side`` px, beyond the Adam steps."""
        if backbone != "small_cnn":
            return self.resnet_pixel_seconds[backbone] * side**2
        prev, macs = 1, 0.0
        for i, w in enumerate(widths):  # two conv3x3 per block at 1 / 4**i of the input pixels
            macs += 9 * (prev * w + w * w) / 4**i
            prev = w
        macs += 9 * prev * head / 4 ** len(widths)  # the conv3x3 head on the feature map
        return side**2 * (self.pixel_seconds + self.mac_seconds * macs)

    def time_estimate(self) -> float | None:
        """Rough wall time (seconds) on the 2-core reference machine: ``start_seconds`` + the phantom
        renderings + the grid's trainings over the processes that run them (at most the reference's 2 cores).

        Each training counts ``epochs x (ceil(n_train / batch_size) x step_seconds + n_train x pixel cost)``
        plus the prediction of its test images; ``n_train`` is the subset, ``subset_fraction x
        (1 - test_fraction)`` of the bags, or the CV training folds. Calibrated on single-thread
        micro-benchmarks of ``train_model`` (the constants above) and the smoke run (model 8 s, recorded
        7.9 s); checked against the default run (96 s, recorded 99.1 s) and a third run (a 4-block SmallCNN
        on 320 phantoms of 128 px, batch 6, 2 workers: 40 s, measured 46.0 s). ``None`` where no model was
        calibrated: ``device='cuda'`` (a GPU's speed cannot be measured on the CPU reference; ``auto`` counts
        as the CPU) and the real datasets (their decoding was never timed)."""
        if self.device == "cuda" or self.data_source == "real":
            return None
        cxr = self._pixel_cost(self.image_size, self.backbone, self.small_cnn_widths, self.head_channels)
        digits = self._pixel_cost(8 * self.digits_tiles, "small_cnn", DIGITS_WIDTHS, self.head_channels)

        def runs(n_bags: int, cost: float, epochs: int, operators, *, cv: bool, datasets: int = 1) -> float:
            sub, test = self.subset_fraction * (1 - self.test_fraction) * n_bags, self.test_fraction * n_bags
            folds = [(sub, test)] * self.n_models
            if cv:
                k = self.cv_folds
                folds += [(n_bags * (k - 1) / k, n_bags / k)] * k
            total = 0.0
            for op in operators:
                ep = epochs + (self.max_pooling_extra_epochs if op == "max" else 0)
                total += sum(ep * (-(-n // self.batch_size) * self.step_seconds + n * cost)
                             + m * cost * self.predict_share for n, m in folds)
            return datasets * total

        levels = sum(abs(d - self.difficulty) > 1e-12 for d in self.difficulty_levels)
        train = (runs(self.n_images, cxr, self.epochs, self.operators, cv=True)
                 + runs(self.digits_n_bags, digits, self.digits_epochs, self.operators, cv=True)
                 + runs(self.digits_n_bags, digits, self.digits_epochs, self.confounded_operators, cv=False)
                 + runs(self.n_images, cxr, self.epochs, self.fig8_operators, cv=False, datasets=levels))
        processes = self.reference_processes(self.n_grid_runs())
        render = 2 * 2 * self.render_seconds * self.n_images * self.image_size**2
        return self.start_seconds + render + train / processes

    def resource_estimate(self) -> ResourceEstimate:
        side2 = self.image_size**2
        digit_px = self.digits_n_bags * (8 * self.digits_tiles) ** 2
        if self.data_source == "phantom":
            px = self.n_images * side2  # CXR pixels of one rendering
            cxr = px * (self.cxr_pair_bytes + self.cxr_level_bytes * self.n_cxr_datasets())
            digits = digit_px * (self.digits_make_bytes + 4.0)  # the second set is made while the first is held
        else:  # the three real datasets at image_size, each held as float32 (their sizes are fixed)
            px = max(REAL_IMAGES.values()) * side2
            cxr, digits, digit_px = sum(REAL_IMAGES.values()) * side2 * self.cxr_level_bytes, 0.0, 0
        train = max(px, digit_px) * self.train_copy_bytes
        if self.backbone == "small_cnn":
            act = self._activations(self.image_size, self.small_cnn_widths)
        else:
            act = self.resnet_activation_bytes[self.backbone] * self.batch_size * self.image_size**2
        act = max(act, self._activations(8 * self.digits_tiles, DIGITS_WIDTHS))
        if self.device == "cuda":  # the activations live in the GPU's memory
            act = 0.0
        chance = self.chance_bytes * self.chance_n_bags * self.grid_size**2
        per_process = cxr + digits + train + act  # what one process holds that trains on every dataset
        workers = self.pool_size(self.n_grid_runs())
        terms = {
            "kernel": self.base_memory,
            "CXR images": int(cxr),
            "digit bags": int(digits),
            "training copies": int(train),
            "activations": int(act),
            "grid workers": int(workers * (self.worker_memory + per_process)),
        }
        # the kernel trains itself with no pool, or builds every dataset again after the pool has gone;
        # the chance level runs before, alone
        kernel = max(per_process, chance)
        peak = self.base_memory + max(kernel, terms["grid workers"])
        terms["chance level"] = int(chance)
        size = {"image_size": self.image_size}
        images = ({"n_images": self.n_images} if self.data_source == "phantom" else {}) | size
        levels = {"difficulty_levels": self.difficulty_levels} if self.n_cxr_datasets() > 2 else {}
        digit_fields = {"digits_n_bags": self.digits_n_bags, "digits_tiles": self.digits_tiles}
        net = {"batch_size": self.batch_size} | (
            size | ({"backbone": self.backbone} if self.backbone != "small_cnn" else {})
            if act > self._activations(8 * self.digits_tiles, DIGITS_WIDTHS) else {"digits_tiles": self.digits_tiles})
        parts = [(cxr, images | levels), (digits, digit_fields),
                 (train, images if px >= digit_px else digit_fields), (act, net),
                 (chance if chance >= per_process else 0.0, {"chance_n_bags": self.chance_n_bags,
                                                             "grid_size": self.grid_size})]
        drivers = ranked_drivers(parts)
        if workers > 1 and terms["grid workers"] > kernel and terms["grid workers"] >= 256 * MIB:
            drivers["max_workers"] = self.max_workers
        return ResourceEstimate(peak_bytes=int(peak), seconds=self.time_estimate(), drivers=drivers,
                                terms=terms)
