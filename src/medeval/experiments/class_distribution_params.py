"""Parameters of Chapters 4 and 5 (the shared :class:`HistologyParams`) and of Chapter 4 (:class:`Params`): the
schemas, every rule across fields, the data the parameters need and their resource estimate.

A light module (stdlib, pydantic and :mod:`medeval.core.schema` only), so that a parameter set is validated,
pre-flighted and estimated before numpy, torch or a kernel loads. :mod:`medeval.experiments.class_distribution`
re-exports everything here.

Where real data stand in for the phantoms (``data_source="real"``, profile ``full``), the large imbalanced test set
of the classification study is chosen by ``cls_imbalanced_test``:

* ``camelyon16`` (the default): every test patch of the CAMELYON16 test slides, the thesis's set. The test set must
  be complete (:mod:`medeval.data.camelyon16_layout`: every selected slide, every tumour slide's XML, the
  reference standard); a partial one is refused before any compute, naming each missing slide and file.
* ``pcam_subsample``: a 1:``imbalance`` subsample of the PCam test split, as asked.
* ``auto``: the explicit request for the fallback: CAMELYON16 when complete, else the PCam subsample, and the
  page states what stood in and why (:func:`imbalanced_test_choice`: which slides or files were missing).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, field_validator

from medeval.core.schema import MIB, ChapterParams, Distinct, ResourceEstimate, Violation, distinct

#: E1.a ... E4.c (Tables 4.5-4.8) and their sizes in units U (E1: 9U, E2-E4: 4U); the same names and weights as
#: :data:`medeval.data.training_sets.HYPOTHESIS_DISTRIBUTIONS` (a test keeps them equal).
HYPOTHESIS_UNITS = {"E1.a": 9, "E1.b": 9, "E2.a": 4, "E2.b": 4, "E2.c": 4, "E3.a": 4, "E3.b": 4, "E3.c": 4,
                    "E4.a": 4, "E4.b": 4, "E4.c": 4}
HYPOTHESIS_NAMES = tuple(HYPOTHESIS_UNITS)
#: Table 4.3's five sets (:data:`medeval.data.training_sets.PRELIMINARY_DISTRIBUTIONS`).
PRELIMINARY_NAMES = ("Balanced_S", "C-biased", "notC-biased", "Balanced_L", "Natural")
#: The slide-phantom defaults (:func:`medeval.data.phantoms.slide.slide_layout`) of the calibration fields.
PHANTOM_DEFAULTS = {"germinal_similarity": 0.0, "germinal_fraction": 0.12}
#: PCam (Veeling et al. 2018): 96 px patches with a 32 px central region; 262,144 training patches (half positive,
#: so U = floor(131,072 / 3) = 43,690) and 32,768 test patches.
PCAM_PATCH, PCAM_CENTRAL = 96, 32
PCAM_UNIT, PCAM_TEST = 43_690, 32_768
#: CAMELYON16: 10,487,709 test patches on 129 slides at level 2, stride 32 (the thesis's count).
C16_PATCHES, C16_SLIDES = 10_487_709, 129
#: fewest phantom training patches a run may start from: about 3-7 % of the patches are C, so fewer would leave
#: some draws without the 3 C (or ¬C) patches that U = floor(min(#C, #¬C) / 3) >= 1 needs
MIN_TRAIN_PATCHES = 300
#: fewest phantom classification test patches: 10-20 % of them are positive, so 100 keep a few positives in the
#: balanced and the 1:imbalance test sets, which need at least 4 x (imbalance + 1)
MIN_TEST_PATCHES = 100
#: fewest patches the Table 4.3 sets may draw from (preliminary_fraction x training patches): the smallest set,
#: Balanced_S, takes the mixed patches, 5-20 % of them, and a run needs at least 2 (a training and a validation one)
MIN_PRELIMINARY_PATCHES = 60
#: share of the phantom's training patches that each Table 4.3 set takes (measured at the default profile: O 68 %,
#: C 5 %, ¬C 13 %, mixed 14 %), for the memory of its runs
PRELIMINARY_SHARES = {"Balanced_S": 0.14, "C-biased": 0.19, "notC-biased": 0.27, "Balanced_L": 0.32, "Natural": 1.0}

# ---- memory model (bytes); constants measured on the 2-core reference machine (see tests/experiments) -------
#: bytes per training patch pixel of a run's training tensors: float32 RGB (12, briefly twice while converting),
#: the int64 mask (8), the uint8 gather (3); measured ~32
SEG_TRAIN_BYTES_PER_PX = 32
#: bytes per slide pixel of a segmentation run's inference on one test slide (float32 patches and probabilities at
#: 4x overlap) and per kept test slide (probability map, argmax)
SEG_INFER_BYTES_PER_PX, SEG_KEPT_BYTES_PER_PX = 40, 20
#: bytes per test patch pixel of a classifier run's scoring: the uint8 gather of the scored patches (3), the
#: float32 batches and the labels; measured ~5
CLS_TEST_BYTES_PER_PX = 5
#: activations kept for the backward pass, per image pixel and channel of the first U-Net level
ACTIVATION_FACTOR = 24
#: the phantom generator's transient arrays while it draws one slide, per pixel
SLIDE_GENERATION_BYTES_PER_PX = 64


def _grid(n: int, size: int, stride: int) -> int:
    return (n - size) // stride + 1 if n >= size else 0


class HistologyParams(ChapterParams):
    """The fields Chapters 4 and 5 share: slide phantoms, the binary patch classifier (PCam-like task), the
    training hyper-parameters, the fixed-threshold curves and the real-data switches (profile ``full``)."""

    slide_size: int = Field(384, ge=64, le=8192, description="side of each slide phantom (pixels)")
    n_train_slides: int = Field(8, ge=1, le=500, description="training slide phantoms")
    n_test_slides: int = Field(4, ge=1, le=500, description="test slide phantoms")
    patch_size: int = Field(32, ge=8, le=512, description="patch side l (4a: training/inference stride l/2)")
    batch_size: int = Field(32, ge=1, le=1024, description="mini-batch size")
    lr: float = Field(3e-3, gt=0, le=1, description="Adam learning rate (thesis U-Net: 1e-5 for 35 epochs at 384 px)")
    n_thresholds: int = Field(
        101, ge=101, le=10001, description="fixed thresholds of the precision / FPR / PR-T curves (Alg. 2: >= 101)")
    cls_central_size: int = Field(16, ge=1, description="central region of the binary patch label (PCam: 32 of 96)")
    cls_test_stride: int = Field(8, ge=1, description="stride of the classification test patches (CAMELYON16: 32)")
    cls_extra_test_slides: int = Field(4, ge=0, le=500, description="extra test slides for the 1:12 test set")
    imbalance: int = Field(12, ge=1, le=1000, description="negatives per positive in the imbalanced test set")
    cls_base_channels: int = Field(8, ge=2, le=256, description="patch classifier width")
    cls_n_blocks: int = Field(3, ge=1, le=6, description="patch classifier conv blocks")
    cls_epochs: int = Field(6, ge=1, le=200, description="patch classifier epochs")
    cls_unit_cap: int | None = Field(150, ge=1, description="cap on U for the patch classifier (null = from the data)")

    data_source: Literal["phantom", "real"] = Field(
        "phantom", description="phantom: slide phantoms (4b: and digits); real: PCam for training, PCam and "
                               "CAMELYON16 for testing (4b: and CIFAR-10)"
    )
    cls_imbalanced_test: Literal["camelyon16", "pcam_subsample", "auto"] = Field(
        "camelyon16", description="data_source=real: the large imbalanced test set: camelyon16 = every CAMELYON16 "
                                  "test patch (refused when slides or annotation files are missing); pcam_subsample "
                                  "= a 1:imbalance subsample of the PCam test split; auto = CAMELYON16 when "
                                  "complete, else the PCam subsample, stated on the page")
    c16_slides: list[str] | None = Field(
        None, min_length=1, description="CAMELYON16 test slides to use, e.g. [test_001] (null = all; distinct)")
    c16_level: int = Field(2, ge=0, le=9, description="CAMELYON16 pyramid level of the patches (PCam: 2)")
    c16_min_tissue_fraction: float = Field(
        0.5, ge=0, le=1, description="CAMELYON16: tissue fraction (Otsu) a patch's central region needs")
    c16_tissue_channel: Literal["grey", "saturation"] = Field("grey", description="CAMELYON16: Otsu channel")

    #: private memory of one forked grid worker once torch has trained in it (pages copied on write, torch's
    #: pools), beyond its run's arrays; measured (PSS) on the smoke profile
    worker_memory: ClassVar[int] = 140 * MIB

    # ---- time: rough wall times on the 2-core reference machine (the parts both chapters share) -----------
    #: drawing a slide phantom pixel and cutting its patch tables (measured: 1.9 s for the default profile's
    #: 20 slides of 384 px)
    slide_seconds: ClassVar[float] = 0.6e-6
    #: a patch classifier's training pixel and epoch, 1 thread: ``a + b x`` its multiply-adds per input pixel,
    #: and one Adam step beyond its pixels (measured 0.18-0.19 us at 2-3 blocks of 4-8 channels, 0.35 us at 3
    #: blocks of 16, batches of 32); its scoring per test pixel as a share of that (measured in the chapters'
    #: runs: 0.1)
    cls_pixel_seconds: ClassVar[tuple[float, float]] = (0.12e-6, 7.5e-11)
    cls_step_seconds: ClassVar[float] = 0.5e-3
    cls_predict_share: ClassVar[float] = 0.1
    #: wall time of a 2-process grid over its single-process work: one half, plus the pool's start and its
    #: uneven tail (measured: the 4a default grid, 62.4 s for 117 s of runs timed one by one)
    grid_overhead: ClassVar[float] = 1.07

    def cls_pixel_cost(self) -> float:
        """Seconds per training pixel and epoch of the patch classifier (``cls_n_blocks`` conv3x3 blocks of
        ``cls_base_channels * 2**i`` channels, each at 1 / 4**i of the pixels)."""
        c, macs = 3, 0.0
        for i in range(self.cls_n_blocks):
            w = self.cls_base_channels * 2**i
            macs += 9 * c * w / 4**i
            c = w
        a, b = self.cls_pixel_seconds
        return a + b * macs

    def cls_unit(self) -> int:
        """U of the phantom patch classifier: ``cls_unit_cap`` or about a 20th of the training patches (a
        third of the fewer of the binary C and ¬C patches; measured: 53 of 900, 205 of 4,232)."""
        return min(self.cls_unit_cap or 10**9, max(self.phantom_train_patches() // 20, 1))

    def classifier_run_seconds(self, epochs: int | None = None) -> float:
        """One phantom patch-classifier run (1 thread): training on 80 % of 4 U patches, then scoring every
        classification test patch."""
        epochs = self.cls_epochs if epochs is None else epochs
        n, l2, cost = 0.8 * 4 * self.cls_unit(), self.patch_size**2, self.cls_pixel_cost()
        train = epochs * (n * l2 * cost + -(-int(n) // self.batch_size) * self.cls_step_seconds)
        return train + self.phantom_test_patches() * l2 * cost * self.cls_predict_share

    def parallel_seconds(self, runs: list[float]) -> float:
        """Wall time of a grid of runs (single-process seconds each) on the 2-core reference machine."""
        processes = self.reference_processes(len(runs))
        if processes == 1:
            return sum(runs)
        return max(sum(runs) / processes * self.grid_overhead, max(runs))

    @field_validator("c16_slides")
    @classmethod
    def _distinct_slides(cls, value):
        return None if value is None else distinct(value)

    # ---- rules --------------------------------------------------------------------------------------------
    def violations(self) -> list[Violation]:
        out = super().violations()
        if self.cls_central_size > self.patch_size or (self.patch_size - self.cls_central_size) % 2:
            out.append(Violation(("cls_central_size", "patch_size"),
                                 "cls_central_size must be <= patch_size with an even difference (a centred region)"))
        if self.patch_size > self.slide_size:
            out.append(Violation(("patch_size", "slide_size"), "patch_size must be <= slide_size (patches are cut "
                                                               "from the slide phantoms)"))
        elif self.slide_size % (self.patch_size // 2):
            out.append(Violation(("slide_size", "patch_size"), f"slide_size must be a multiple of patch_size / 2 "
                                                               f"(= {self.patch_size // 2}, the patch stride)"))
        if self.data_source == "real" and (self.patch_size, self.cls_central_size) != (PCAM_PATCH, PCAM_CENTRAL):
            out.append(Violation(("data_source", "patch_size", "cls_central_size"),
                                 f"data_source=real uses PCam's {PCAM_PATCH} px patches with a {PCAM_CENTRAL} px "
                                 f"central region: patch_size must be {PCAM_PATCH} and cls_central_size "
                                 f"{PCAM_CENTRAL}"))
        if self.data_source == "phantom":
            if self.c16_slides is not None:
                out.append(Violation(("c16_slides", "data_source"),
                                     "c16_slides selects CAMELYON16 slides: it needs data_source=real"))
            if self.cls_imbalanced_test != type(self).model_fields["cls_imbalanced_test"].default:
                out.append(Violation(("cls_imbalanced_test", "data_source"),
                                     "cls_imbalanced_test chooses among real test sets: it needs data_source=real "
                                     "(the phantom's imbalanced set is cut from the test slide phantoms)"))
            out += self._training_patch_rule()
            n, need = self.phantom_test_patches(), max(MIN_TEST_PATCHES, 4 * (self.imbalance + 1))
            if n < need and self.patch_size <= self.slide_size:
                out.append(Violation(
                    ("imbalance", "n_test_slides", "cls_extra_test_slides", "cls_test_stride", "slide_size"),
                    f"the phantom's classification test set has {n} patches ((n_test_slides + cls_extra_test_slides)"
                    f" x ((slide_size - patch_size) // cls_test_stride + 1)^2); it needs at least max("
                    f"{MIN_TEST_PATCHES}, 4 x (imbalance + 1)) = {need} to keep positives in the balanced and the "
                    "1:imbalance test sets"))
        return out

    def _training_patch_rule(self) -> list[Violation]:
        n = self.phantom_train_patches()
        if n >= MIN_TRAIN_PATCHES or self.patch_size > self.slide_size:
            return []
        return [Violation(("n_train_slides", "slide_size", "patch_size"),
                          f"the training slide phantoms give {n} patches (n_train_slides x ((slide_size - patch_size)"
                          f" // (patch_size / 2) + 1)^2); at least {MIN_TRAIN_PATCHES} are needed so that the C and "
                          "¬C categories hold patches")]

    def phantom_test_patches(self) -> int:
        """Patches of the phantom classification test slides (before the balanced / imbalanced subsets)."""
        return (self.n_test_slides + self.cls_extra_test_slides) * _grid(
            self.slide_size, self.patch_size, self.cls_test_stride) ** 2

    def phantom_train_patches(self) -> int:
        """Training patches of the slide phantoms (stride patch_size / 2)."""
        return self.n_train_slides * _grid(self.slide_size, self.patch_size, max(self.patch_size // 2, 1)) ** 2

    # ---- pre-flight ---------------------------------------------------------------------------------------
    def required_datasets(self) -> tuple[str, ...]:
        # CAMELYON16 is checked by preflight_problems, which names every missing slide and file
        return ("pcam",) if self.data_source == "real" else ()

    def preflight_problems(self) -> list[str]:
        out = super().preflight_problems()
        if self.data_source == "real" and self.cls_imbalanced_test == "camelyon16":
            problems = camelyon16_problems(self)
            if problems:
                out.append("cls_imbalanced_test=camelyon16 needs the complete CAMELYON16 test set (or set "
                           "cls_imbalanced_test=auto or pcam_subsample to let a PCam subsample stand in):\n    "
                           + "\n    ".join(problems))
            else:
                out += camelyon16_level_problems(self)
        return out

    # ---- memory: the parts both chapters share -------------------------------------------------------------
    def classifier_task_bytes(self) -> tuple[int, dict[str, int]]:
        """Private bytes of one patch-classifier run (training tensors, test tensors) and its terms."""
        l2 = self.patch_size ** 2
        if self.data_source == "real":
            unit = min(self.cls_unit_cap or PCAM_UNIT, PCAM_UNIT)
            terms = {"pcam_train_patches": 4 * unit * PCAM_PATCH ** 2 * 3,
                     "pcam_test_patches": PCAM_TEST * PCAM_PATCH ** 2 * 3}
        else:
            # the classifier's U is about a 20th of the training patches on the phantom (measured: 53 of 900,
            # 205 of 4,232), not the U-Nets' 60th
            unit = min(self.cls_unit_cap or 10**9, max(self.phantom_train_patches() // 20, 1))
            terms = {"cls_train_tensors": int(0.8 * 4 * unit * l2 * SEG_TRAIN_BYTES_PER_PX),
                     "cls_test_tensors": self.phantom_test_patches() * l2 * CLS_TEST_BYTES_PER_PX}
        return sum(terms.values()), terms

    def camelyon16_kernel_bytes(self, n_models: int) -> dict[str, int]:
        """The CAMELYON16 scoring pass in the kernel: the patch table and the score matrix (models x patches)."""
        if self.data_source != "real" or self.cls_imbalanced_test == "pcam_subsample":
            return {}
        slides = len(self.c16_slides) if self.c16_slides else C16_SLIDES
        patches = C16_PATCHES * slides / C16_SLIDES * (32 / self.cls_test_stride) ** 2 * 4.0 ** (2 - self.c16_level)
        return {"camelyon16_patch_table": int(patches * 40), "camelyon16_scores": int(patches * 4 * n_models)}


def camelyon16_root():
    from medeval.data.manifest import dataset_dir

    return dataset_dir("camelyon16")


def camelyon16_problems(P: HistologyParams) -> list[str]:
    """What the CAMELYON16 test set under the data folder lacks for ``P.c16_slides`` (empty when complete), each
    naming the slides or files (:func:`medeval.data.camelyon16_layout.test_set_layout`); once complete, what the
    data layer's cheap content check (:func:`medeval.data.manifest.require`: sizes against the recorded content)
    finds damaged."""
    from medeval.data.camelyon16_layout import test_set_layout
    from medeval.data.manifest import DatasetUnavailableError, require

    root = camelyon16_root()
    problems = list(test_set_layout(root, P.c16_slides).problems) if root.is_dir() else []
    if not problems:
        try:
            require("camelyon16")
        except DatasetUnavailableError as exc:
            problems.append(str(exc))
    return problems


def camelyon16_level_problems(P: HistologyParams) -> list[str]:
    """Selected slides without pyramid level ``c16_level`` (reads each slide's header; only for real data)."""
    from medeval.data.camelyon16_layout import test_set_layout
    from medeval.data.readers import SlideReader

    short = []
    for name, path in test_set_layout(camelyon16_root(), P.c16_slides).slides.items():
        with SlideReader(path) as slide:
            if slide.level_count <= P.c16_level:
                short.append(f"{name} (levels 0..{slide.level_count - 1})")
    if short:
        return [f"c16_level={P.c16_level}: slides without that pyramid level: {', '.join(short)}"]
    return []


def imbalanced_test_choice(P: HistologyParams) -> tuple[str, str]:
    """``(source, note)``: the large imbalanced test set of the classification runs and, when something stood in
    for the thesis's CAMELYON16 test patches, what and why (empty otherwise). ``source`` is ``phantom``,
    ``camelyon16`` or ``pcam_subsample``. ``cls_imbalanced_test="camelyon16"`` with an incomplete test set raises
    :class:`medeval.data.camelyon16_layout.IncompleteTestSetError` naming what is missing (the pre-flight check
    refuses such a run before any compute)."""
    if P.data_source == "phantom":
        return "phantom", ""
    subsample = f"a 1:{P.imbalance} subsample of the PCam test split (every negative, a fixed subset of positives)"
    if P.cls_imbalanced_test == "pcam_subsample":
        return "pcam_subsample", (f"cls_imbalanced_test=pcam_subsample: {subsample} stands in for the CAMELYON16 "
                                  "test patches, as asked.")
    problems = camelyon16_problems(P)
    if not problems:
        return "camelyon16", ""
    if P.cls_imbalanced_test == "camelyon16":
        from medeval.data.camelyon16_layout import IncompleteTestSetError

        raise IncompleteTestSetError(problems)
    return "pcam_subsample", ("cls_imbalanced_test=auto: the CAMELYON16 test set is incomplete ("
                              + "; ".join(problems) + f"), so {subsample} stands in for the CAMELYON16 test patches.")


class Params(HistologyParams):
    """Parameters of Chapter 4 (``medeval params 04a-class-distribution`` prints them with their ranges)."""

    unit_cap: int | None = Field(
        60, ge=1, description="cap on the unit U (patches); null = U from the data as in the thesis"
    )
    preliminary_fraction: float = Field(
        0.2, gt=0, le=1, description="fraction of every category used by the Table 4.3 sets (keeps composition)"
    )
    base_channels: int = Field(8, ge=2, le=128, description="U-Net width at the first level")
    depth: int = Field(2, ge=1, le=5, description="U-Net down/up levels")
    epochs: int = Field(16, ge=1, le=200, description="U-Net training epochs (fewer leave more runs that never "
                                                       "predict a class; every row names the runs it left out)")
    n_runs: int = Field(10, ge=2, le=50, description="runs per hypothesis distribution (thesis: 10; 4 halve the "
                                                      "chapter's CPU time and leave more rows [~])")
    n_preliminary_runs: int = Field(3, ge=1, le=50, description="runs per Table 4.3 distribution (tests need >= 2)")
    hypothesis_experiments: Distinct[list[Literal[HYPOTHESIS_NAMES]]] = Field(
        list(HYPOTHESIS_NAMES), min_length=2, description="which of E1.a ... E4.c to run"
    )
    tile_sizes: Distinct[list[Annotated[int, Field(ge=1, le=8192)]]] = Field(
        [1, 2, 4, 8, 16, 32, 64], min_length=1, description="evaluation patch sizes e (method 1 sweep)"
    )
    evaluation_tile: int = Field(16, ge=1, description="e of the Table 4.4 analogue (thesis: 500 px)")
    cls_runs: int = Field(10, ge=2, le=50, description="runs per E2 distribution in the classification study "
                                                        "(thesis: 10)")
    ensemble_size: int = Field(
        1, ge=1, le=50, description="U-Net runs of one distribution trained together as one stacked ensemble "
                                    "(each exactly as alone; pays on a GPU, not on the CPU); 1 = one at a time")
    germinal_similarity: float = Field(
        0.0, ge=0, le=1, description="slide phantom: how far germinal centres (¬C) look like tumour (C), 0 = as "
                                     "drawn, 1 = textured like C; calibrates the task off the ceiling")
    germinal_fraction: float = Field(
        0.12, ge=0, le=0.5, description="slide phantom: fraction of lymph-node area covered by germinal centres")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="level of every test of the Paper-vs-us rules")
    quality_floor: float = Field(
        0.9, ge=0.5, lt=1, description="a run is compared only if its patch ROC-AUC (C vs rest) exceeds this")
    noninferiority_margin: float = Field(
        0.05, gt=0, le=0.5, description="H4 'at least as good': margin on argmax precision")
    roc_margin: float = Field(0.02, gt=0, le=0.5, description="'ROC insensitive': equivalence margin on ROC-AUC")

    #: the kernel once the chapter's imports are loaded (numpy, pandas, matplotlib, torch, the experiments)
    base_memory = 450 * MIB

    def violations(self) -> list[Violation]:
        out = super().violations()
        step = max(4, 2 ** self.depth)
        if self.patch_size % step:
            out.append(Violation(("patch_size", "depth"),
                                 f"patch_size must be a multiple of {step} (2**depth for the U-Net's {self.depth} "
                                 "poolings, and 4 so that the inference patches' central regions, patch_size / 2, "
                                 "split evenly around their centre)"))
        if self.data_source == "real":  # the segmentation studies still train on slide phantoms
            out += self._training_patch_rule()
        drawn = self.preliminary_fraction * self.phantom_train_patches()
        if drawn < MIN_PRELIMINARY_PATCHES and self.phantom_train_patches() >= MIN_TRAIN_PATCHES:
            out.append(Violation(("preliminary_fraction", "n_train_slides", "slide_size", "patch_size"),
                                 f"the Table 4.3 sets draw preliminary_fraction x {self.phantom_train_patches()} "
                                 f"training patches = {drawn:.0f}; at least {MIN_PRELIMINARY_PATCHES} are needed "
                                 "(the smallest set, Balanced_S, keeps only the mixed patches)"))
        if self.evaluation_tile not in self.tile_sizes:
            out.append(Violation(("evaluation_tile", "tile_sizes"), "evaluation_tile must be one of tile_sizes"))
        too_big = [e for e in self.tile_sizes if e > self.slide_size]
        if too_big:
            out.append(Violation(("tile_sizes", "slide_size"),
                                 f"every evaluation tile must fit in a slide (<= slide_size); too large: {too_big}"))
        return out

    # ---- time ----------------------------------------------------------------------------------------------
    #: seconds outside the terms below: kernel start, imports, the figures, the CAMELYON16 demo and the
    #: exercise (the smoke profile's 13.6 s recorded in results/timings.json less its runs, 1.3 s timed one by
    #: one, and its slides)
    start_seconds: ClassVar[float] = 12.0
    #: a U-Net training pixel and epoch, 1 thread: ``a + b x`` its multiply-adds per input pixel (measured
    #: 0.42 us at base 4 / depth 1, 0.93 at 8 / 2, 0.97 at 8 / 3, 1.9 at 16 / 2; the chapter's runs timed one
    #: by one gave 0.70 us at 8 / 2, which sets the scale); its sliding-window inference per pixel as a share
    #: of that
    unet_pixel_seconds: ClassVar[tuple[float, float]] = (0.35e-6, 5.5e-11)
    unet_predict_share: ClassVar[float] = 0.3
    #: one Adam step of the U-Net beyond its pixels (measured ~1.5 ms at 16 px patches)
    step_seconds: ClassVar[float] = 1.5e-3

    def unet_pixel_cost(self) -> float:
        """Seconds per training pixel and epoch of the U-Net (``models.unet.UNet``: double conv3x3 blocks
        down, a bottleneck, transposed convolutions and double blocks up, ``base_channels * 2**level``
        channels at level ``level``)."""
        w = [self.base_channels * 2**i for i in range(self.depth + 1)]
        c, macs = 3, 0.0
        for i in range(self.depth):
            macs += 9 * (c * w[i] + w[i] ** 2) / 4**i
            c = w[i]
        macs += 9 * (w[-2] * w[-1] + w[-1] ** 2) / 4**self.depth
        macs += sum((w[i + 1] * w[i] + 27 * w[i] ** 2) / 4**i for i in range(self.depth))
        a, b = self.unet_pixel_seconds
        return a + b * (macs + 3 * w[0])

    def segmentation_train_sizes(self) -> list[float]:
        """Training patches of every U-Net run (80 % of its training set): the Table 4.3 sets take
        ``preliminary_fraction`` of their share of the training patches, the hypothesis sets their units of
        U."""
        train = self.phantom_train_patches()
        unit = min(self.unit_cap or 10**9, max(train // 60, 1))
        sizes = ([self.preliminary_fraction * train * PRELIMINARY_SHARES[d] for d in PRELIMINARY_NAMES]
                 * self.n_preliminary_runs
                 + [HYPOTHESIS_UNITS[d] * unit for d in self.hypothesis_experiments] * self.n_runs)
        return [0.8 * min(train, n) for n in sizes]

    def time_estimate(self) -> float | None:
        """Rough wall time (seconds) on the 2-core reference machine: ``start_seconds`` + the slide phantoms +
        the grid of U-Net and patch-classifier runs over its processes (at most the reference's 2 cores).

        A U-Net run costs ``epochs x`` its training patches ``x patch_size**2`` pixels (plus one Adam step per
        batch) and the sliding-window inference of the test slides (4 patches cover each pixel); a classifier
        run ``cls_epochs x 4 x 0.8 U`` patches and the scoring of every classification test patch. Calibrated
        on single-thread micro-benchmarks of both networks, the default grid timed run by run (117 s in 1
        process) and the smoke run (model 12 s, recorded 13.6 s); checked against the default run (80 s,
        recorded 79.1 s) and a third run (slides of 512 px, U-Nets of base 12, 5 epochs: 69 s, measured
        78.2 s). ``None`` where no model was calibrated: ``device='cuda'`` (``auto`` counts as the CPU) and
        ``data_source='real'`` (PCam and CAMELYON16 were never timed here)."""
        if self.device == "cuda" or self.data_source == "real":
            return None
        l2, cost = self.patch_size**2, self.unet_pixel_cost()
        inference = self.n_test_slides * self.slide_size**2 * 4 * cost * self.unet_predict_share
        runs = [self.epochs * (n * l2 * cost + -(-int(n) // self.batch_size) * self.step_seconds) + inference
                for n in self.segmentation_train_sizes()]
        runs += [self.classifier_run_seconds()] * (3 * self.cls_runs)
        slides = 2 * self.n_test_slides + self.n_train_slides + self.cls_extra_test_slides
        render = self.slide_seconds * slides * self.slide_size**2
        return self.start_seconds + render + self.parallel_seconds(runs)

    def resource_estimate(self) -> ResourceEstimate:
        s2, l2 = self.slide_size ** 2, self.patch_size ** 2
        n_tasks = 5 * self.n_preliminary_runs + len(self.hypothesis_experiments) * self.n_runs + 3 * self.cls_runs
        pool = self.pool_size(n_tasks)
        train = self.phantom_train_patches()
        real = self.data_source == "real"
        # the kernel builds the slides and the patch tables before the pool forks (warm_up); workers share them
        cls_slides = 0 if real else self.n_test_slides + self.cls_extra_test_slides
        kernel = {
            "kernel": self.base_memory,
            "slides": s2 * 4 * (self.n_train_slides + self.n_test_slides + cls_slides)
            + s2 * SLIDE_GENERATION_BYTES_PER_PX,
            "training_patch_table": train * l2 * 4,
        }
        if not real:
            kernel["cls_test_patch_table"] = self.phantom_test_patches() * l2 * 4
        # the workers: each run holds its own training tensors and inference arrays; the grid starts the largest
        # runs first, so the `pool` largest run together
        unit = min(self.unit_cap or 10**9, max(train // 60, 1))
        seg_sizes = ([self.preliminary_fraction * train * PRELIMINARY_SHARES[d] for d in PRELIMINARY_NAMES]
                     * self.n_preliminary_runs
                     + [HYPOTHESIS_UNITS[d] * unit for d in self.hypothesis_experiments] * self.n_runs)
        largest = 0.8 * min(train, max(seg_sizes))
        seg = {"segmentation_train_tensors": int(largest * l2 * SEG_TRAIN_BYTES_PER_PX),
               "segmentation_activations": self.batch_size * self.base_channels * l2 * 4 * ACTIVATION_FACTOR,
               "segmentation_inference": s2 * (SEG_INFER_BYTES_PER_PX + SEG_KEPT_BYTES_PER_PX * self.n_test_slides)}
        fixed = seg["segmentation_activations"] + seg["segmentation_inference"]
        cls_total, cls = self.classifier_task_bytes()
        runs = sorted([fixed + 0.8 * min(train, n) * l2 * SEG_TRAIN_BYTES_PER_PX for n in seg_sizes]
                      + [cls_total] * (3 * self.cls_runs), reverse=True)
        terms = {**kernel, **seg, **cls}
        # without a pool the runs go one by one in the kernel
        workers = sum(runs[:pool]) + pool * self.worker_memory if pool else runs[0]
        terms["workers"] = workers
        terms.update(self.camelyon16_kernel_bytes(3 * self.cls_runs))
        c16 = sum(v for k, v in terms.items() if k.startswith("camelyon16"))
        peak = sum(kernel.values()) + max(workers, c16)
        drivers = {"slide_size": self.slide_size, "n_train_slides": self.n_train_slides, "patch_size": self.patch_size}
        if self.preliminary_fraction * train > 9 * unit:
            drivers["preliminary_fraction"] = self.preliminary_fraction
        elif self.unit_cap is None or 9 * self.unit_cap > self.preliminary_fraction * train:
            drivers["unit_cap"] = self.unit_cap
        if real:
            drivers["cls_unit_cap"] = self.cls_unit_cap
        return ResourceEstimate(int(peak), self.time_estimate(), drivers,
                                {k: int(v) for k, v in terms.items()})
