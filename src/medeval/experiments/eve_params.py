"""Parameters of chapter 3 (:mod:`medeval.experiments.eve`): the schema, its cross-field rules and its resource model.

A light module: the standard library, pydantic and :mod:`medeval.core.schema` only, so that a parameter set is
validated, and its resource estimate computed, before numpy, torch or a kernel load. The rules here are the ones
the experiment code would otherwise hit after the kernel started (a fold count larger than a subset, a size that
the pool cannot hold twice, ...); the code keeps its own checks for direct callers.
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal, NamedTuple

from pydantic import Field

from medeval.core.schema import MIB, ChapterParams, Distinct, ResourceEstimate, Violation

DATASETS = ("adni_phantom", "wdbc", "adni")
PAPER_COUNTS = {
    "drawstring_parent_sizes": list(range(25, 156, 2)),
    "drawstring_n_parents": 500,
    "drawstring_n_pairs": 500,
    "characterization_n_pairs": 10_000,
    "characterization_sizes": "10 .. 125 per class (step not stated)",
    "strategy_n_pairs": 2_500,
}
#: (negatives, positives) of the pools whose size the parameters decide: the ADNI-like phantom (the paper's
#: 370 HC / 252 AD, also every pool of the known-truth check) and scikit-learn's WDBC (357 benign / 212 malignant)
POOL_CLASSES = {"adni_phantom": (370, 252), "wdbc": (357, 212)}
#: features of WDBC; the phantom has ``n_features``
WDBC_FEATURES = 30
#: samples of the multi-label pool of the bridge experiment (``eve.bridge_unit``)
BRIDGE_POOL = 2000
#: folds of the hard-margin check when the chapter's ``n_splits`` is not given (the paper's 10-fold CV)
HARD_MARGIN_SPLITS = 10
#: subsets validated together at most (problems x points, ``medeval.experiments.eve.run_validation``)
MAX_PROBLEM_POINTS = 2**22

PerClass = Annotated[int, Field(ge=2, le=1000)]

_KFOLD = re.compile(r"^(\d+)\s*[x×]\s*(\d+)$")
_HOLDOUT = re.compile(r"^holdout(0?\.\d+)?(?:x(\d+))?$")


class StrategyShape(NamedTuple):
    """What the parameters need to know of a validation strategy (the grammar of
    ``medeval.data.splits.parse_strategy``, which the tests keep in step): kind, folds K (0 for LOO and hold-out),
    repeats M, and a canonical name."""

    kind: str
    n_splits: int
    n_repeats: int
    name: str


def strategy_shape(spec: str) -> StrategyShape | str:
    """The shape of a strategy name, or the reason it is not one ("10x1", "3x10", "LOO", "holdout0.3x5")."""
    text = str(spec).strip().lower()
    if text == "loo":
        return StrategyShape("loo", 0, 1, "LOO")
    match = _KFOLD.match(text)
    if match:
        k, m = int(match.group(1)), int(match.group(2))
        if k < 2 or m < 1:
            return f"{spec!r}: K-fold needs K >= 2 folds and at least 1 repeat"
        return StrategyShape("kfold", k, m, f"{k}x{m}")
    match = _HOLDOUT.match(text)
    if match:
        fraction = float(match.group(1)) if match.group(1) else 0.5
        repeats = int(match.group(2) or 1)
        if not 0 < fraction < 1 or repeats < 1:
            return f"{spec!r}: a hold-out needs a test fraction in (0, 1) and at least 1 repeat"
        return StrategyShape("holdout", 0, repeats, f"holdout{fraction:g}x{repeats}")
    return f"{spec!r} is not a strategy: write K-fold as '10x1' or '3x10' (K x repeats), 'LOO' or 'holdout0.3x5'"


def _parts(total: int, size: int) -> list[int]:
    """``total`` in parts of at most ``size`` (``eve._split``)."""
    return [size] * (total // size) + ([total % size] if total % size else [])


class Params(ChapterParams):
    """Parameters of chapter 3 (counts default to a few minutes on a 2-core CPU; paper values in `full`)."""

    dataset: Literal["adni_phantom", "wdbc", "adni"] = Field(
        "adni_phantom",
        description="main pool: 'adni_phantom' (synthetic 370 HC / 252 AD), 'wdbc' (scikit-learn), 'adni' (your CSV)",
    )
    adni_csv: str | None = Field(
        None, description="path of an ADNI regional-volume CSV (subject_id, diagnosis HC|AD, regions); "
        "null = $MEDEVAL_DATA/adni/adni_regional_volumes.csv via the data manifest; read only with dataset='adni'"
    )
    effect_size: float = Field(1.5, gt=0, le=5, description="AD atrophy in medial temporal regions (HC SDs), phantom only")
    n_features: int = Field(80, ge=6, le=200, description="regions of the ADNI-like phantom")
    classifier: Literal["svm", "nearest_centroid"] = Field("svm", description="main learner (the paper: hard-margin linear SVM)")
    engine: Literal["auto", "batched", "sklearn", "active_set"] = Field(
        "auto", description="SVM fitting: 'batched' torch SMO (CPU/GPU), a scikit-learn SVC loop, 'active_set' (the "
        "exact optimum of problems with at most d training points by a batched active-set method, the rest by "
        "scikit-learn), or 'auto' (batched on CUDA, active_set on the CPU)"
    )
    svm_c: float = Field(1e4, gt=0, le=1e9, description="SVM box constraint C (verified to be in the hard-margin limit)")
    svm_tol: float = Field(1e-3, gt=0, le=0.1, description="SVM stopping tolerance (LIBSVM eps)")
    hard_margin_factor: float = Field(100.0, ge=2, le=1e6, description="C is in the hard-margin limit if C x factor changes no prediction")
    metric: Literal["accuracy", "sensitivity", "specificity", "auc"] = Field("accuracy", description="performance metric")
    n_splits: int = Field(10, ge=2, le=50, description="K of the K-fold CV in the drawstring, characterization, "
                          "known-truth, learner x data and comparison experiments and the hard-margin check; at most "
                          "the 2n subjects of the smallest of their subsets")

    drawstring_parent_sizes: Distinct[list[PerClass]] = Field(
        [25, 35, 50, 100, 155], min_length=2, max_length=100, description="parent sizes P (per class); paper 25..155 step 2"
    )
    drawstring_subset_size: PerClass = Field(25, description="subjects per class in each drawstring subset (paper 25)")
    drawstring_n_parents: int = Field(96, ge=2, le=10_000, description="parents per P (paper 500)")
    drawstring_n_pairs: int = Field(24, ge=2, le=100_000, description="disjoint pairs per parent (paper 500); NEVE uses "
                                    "their 2x subsets, or as many independently drawn ones where no pair fits")

    characterization_sizes: Distinct[list[PerClass]] = Field(
        [10, 25, 50, 100], min_length=2, max_length=100, description="subset sizes per class (paper 10..125)"
    )
    characterization_n_pairs: int = Field(100, ge=2, le=1_000_000, description="disjoint pairs per size (paper 10,000)")
    characterization_n_pairs_small: int | None = Field(
        400, ge=2, le=1_000_000, description="disjoint pairs per size at sizes up to 25 per class, where fits are cheap "
        "(null: characterization_n_pairs)")

    strategy_sizes: Distinct[list[PerClass]] = Field([10, 25], min_length=1, max_length=20, description="subset sizes for the strategy comparison")
    strategy_n_pairs: int = Field(300, ge=2, le=100_000, description="disjoint pairs per size (paper 2,500)")
    strategies: Distinct[list[str]] = Field(
        ["10x1", "10x10", "3x1", "3x10", "LOO"], min_length=2, description="strategies compared with leave-one-out (must "
        "include LOO): 'KxM' (K-fold, M repeats), 'LOO', 'holdout<fraction>x<M>'"
    )

    truth_sizes: Distinct[list[PerClass]] = Field([10, 20], min_length=1, max_length=20, description="sizes of the known-truth "
                                                  "check (phantom); a size n with 2n also listed tests EVE as conservative for 2n")
    truth_n_pools: int = Field(500, ge=2, le=100_000, description="independent finite phantom pools (370/252) in the known-truth check")
    truth_pairs_per_pool: int = Field(10, ge=1, le=100_000, description="disjoint pairs per pool in the known-truth check")
    truth_n_draws: int = Field(5000, ge=10, le=1_000_000, description="fresh draws for the Monte Carlo true variance (2000 or more keep its error small)")
    truth_null_pairs: int = Field(5, ge=0, le=100_000, description="pairs per pool re-validated with a second fold partition: "
                                  "the paired test under a true null (0 = skip)")
    n_bootstrap: int = Field(2000, ge=100, le=100_000, description="bootstrap resamples of pairs for the intervals of the claims")

    setting_sizes: Distinct[list[PerClass]] = Field([10, 25], min_length=1, max_length=20, description="sizes of the learner x data comparison")
    setting_n_pairs: int = Field(60, ge=2, le=100_000, description="disjoint pairs per size in the learner x data comparison")

    comparison_size: PerClass = Field(25, description="subset size (per class) of the worked CI / comparison example")
    comparison_n_pairs: int = Field(40, ge=2, le=100_000, description="pairs in the worked CI / comparison example")

    bridge_n_pairs: int = Field(30, ge=2, le=100_000, description="pairs for EVE on the multi-label macro-AUC")
    bridge_size: int = Field(100, ge=20, le=BRIDGE_POOL // 2, description="images per subset in the multi-label bridge "
                             "(two disjoint subsets of its 2,000-sample pool)")

    # ---- cross-field rules ---------------------------------------------------------------------------------
    def violations(self) -> list[Violation]:
        out = super().violations()
        if self.truth_null_pairs > self.truth_pairs_per_pool:
            out.append(Violation(("truth_null_pairs", "truth_pairs_per_pool"),
                                 "truth_null_pairs must not exceed truth_pairs_per_pool (the null pairs are re-validated "
                                 "pairs of each pool)"))
        shapes = [strategy_shape(s) for s in self.strategies]
        bad = [s for s in shapes if isinstance(s, str)]
        for reason in bad:
            out.append(Violation(("strategies",), reason))
        if not bad:
            names = [s.name for s in shapes]
            if "LOO" not in names:
                out.append(Violation(("strategies",), "strategies must include 'LOO' (the reference of the comparison)"))
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                out.append(Violation(("strategies",), f"strategies name the same strategy twice: {twice}"))
            kfold = [s for s in shapes if s.kind == "kfold"]
            if kfold and max(s.n_splits for s in kfold) > 2 * min(self.strategy_sizes):
                k = max(s.n_splits for s in kfold)
                out.append(Violation(("strategies", "strategy_sizes"),
                                     f"a {k}-fold strategy needs at least {k} subjects in a subset, but the smallest "
                                     f"strategy size {min(self.strategy_sizes)} per class gives "
                                     f"{2 * min(self.strategy_sizes)}"))
        small = [p for p in self.drawstring_parent_sizes if p < self.drawstring_subset_size]
        if small:
            out.append(Violation(("drawstring_parent_sizes", "drawstring_subset_size"),
                                 f"drawstring_parent_sizes {small} are below drawstring_subset_size: a parent must "
                                 "hold at least one subset"))
        if max(self.drawstring_parent_sizes) < 2 * self.drawstring_subset_size:
            out.append(Violation(("drawstring_parent_sizes", "drawstring_subset_size"),
                                 f"at least one of drawstring_parent_sizes must be >= 2 x drawstring_subset_size = "
                                 f"{2 * self.drawstring_subset_size}, where a disjoint pair (EVE) fits"))
        cv_sizes = self.cv_sizes()
        smallest = min(cv_sizes.values())
        if self.n_splits > 2 * smallest:
            names = [k for k, v in cv_sizes.items() if v == smallest]
            out.append(Violation(("n_splits", *names),
                                 f"n_splits-fold CV needs at least n_splits = {self.n_splits} subjects in a subset, but "
                                 f"the smallest subset ({', '.join(names)}: {smallest} per class) has {2 * smallest}"))
        for dataset, (neg, pos) in POOL_CLASSES.items():
            if dataset == self.dataset:
                out += self.pool_violations(f"the {dataset!r} pool", neg, pos)
        out += self.fixed_pool_violations()
        if self.adni_csv is not None and self.dataset != "adni":
            out.append(Violation(("adni_csv", "dataset"), "adni_csv is read only with dataset='adni': set "
                                 "dataset='adni' or leave adni_csv null"))
        return out

    def cv_sizes(self) -> dict[str, int]:
        """The smallest subset size (per class) of every experiment validated with ``n_splits``-fold CV."""
        return {"drawstring_subset_size": self.drawstring_subset_size,
                "characterization_sizes": min(self.characterization_sizes), "truth_sizes": min(self.truth_sizes),
                "setting_sizes": min(self.setting_sizes), "comparison_size": self.comparison_size}

    def pool_violations(self, where: str, negatives: int, positives: int) -> list[Violation]:
        """The sizes that a main pool of ``negatives`` / ``positives`` cannot hold (each rule names its parameter
        and the largest value that fits); used for the pools of known size here and, for an ADNI CSV, by the
        pre-flight and by ``eve.check_pool_fits``."""
        smallest = min(negatives, positives)
        pair_max = smallest // 2
        out = []
        too_big = [p for p in self.drawstring_parent_sizes if p > smallest]
        if too_big:
            out.append(Violation(("drawstring_parent_sizes", "dataset"),
                                 f"drawstring_parent_sizes {too_big} exceed the smaller class (at most {smallest} per "
                                 f"class) of {where}"))
        too_big = [n for n in self.strategy_sizes if n > pair_max]
        if too_big:
            out.append(Violation(("strategy_sizes", "dataset"),
                                 f"strategy_sizes {too_big} too large for two disjoint subsets of {where} (at most "
                                 f"{pair_max} per class)"))
        if self.comparison_size > pair_max:
            out.append(Violation(("comparison_size", "dataset"),
                                 f"comparison_size={self.comparison_size} too large for two disjoint subsets of {where} "
                                 f"(at most {pair_max} per class)"))
        if sum(n <= pair_max for n in self.characterization_sizes) < 2:
            out.append(Violation(("characterization_sizes", "dataset"),
                                 f"characterization_sizes {self.characterization_sizes}: fewer than two sizes fit two "
                                 f"disjoint subsets of {where} (at most {pair_max} per class; larger sizes are omitted, "
                                 "as in the paper)"))
        too_big = [n for n in self.setting_sizes if n > pair_max]
        if too_big:
            out.append(Violation(("setting_sizes", "dataset"),
                                 f"setting_sizes {too_big} too large for two disjoint subsets of {where}, one of the "
                                 f"pools of the learner x data comparison (at most {pair_max} per class)"))
        return out

    def fixed_pool_violations(self) -> list[Violation]:
        """Sizes of the experiments that always use the phantom (known truth) or every pool (learner x data)."""
        out = []
        pair_max = min(POOL_CLASSES["adni_phantom"]) // 2
        too_big = [n for n in self.truth_sizes if n > pair_max]
        if too_big:
            out.append(Violation(("truth_sizes",), f"truth_sizes {too_big} too large for two disjoint subsets of a "
                                 f"370/252 phantom pool (at most {pair_max} per class)"))
        for dataset, (neg, pos) in POOL_CLASSES.items():
            pair_max = min(neg, pos) // 2
            too_big = [n for n in self.setting_sizes if n > pair_max]
            if too_big and dataset != self.dataset:
                out.append(Violation(("setting_sizes",),
                                     f"setting_sizes {too_big} too large for two disjoint subsets of the {dataset!r} "
                                     f"pool of the learner x data comparison (at most {pair_max} per class)"))
        return out

    # ---- pre-flight --------------------------------------------------------------------------------------------
    def required_datasets(self) -> tuple[str, ...]:
        return ("adni",) if self.dataset == "adni" and self.adni_csv is None else ()

    def preflight_problems(self) -> list[str]:
        """For ``dataset='adni'``: the CSV exists and its HC / AD counts hold the asked sizes (the pool of a CSV is
        known only once it is read; the header and the diagnosis column are enough)."""
        if self.dataset != "adni":
            return []
        import csv
        from pathlib import Path

        if self.adni_csv is None:
            from medeval.data.manifest import DatasetUnavailableError, require

            try:
                path = require("adni") / "adni_regional_volumes.csv"
            except DatasetUnavailableError:
                return []  # reported by the dataset check
        else:
            path = Path(self.adni_csv).expanduser()
        if not path.is_file():
            return [f"adni_csv: the ADNI regional-volume CSV {str(path)!r} does not exist; see `medeval data list` "
                    "(id 'adni') for how to obtain ADNI access and build it"]
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            if "diagnosis" not in (reader.fieldnames or ()):
                return [f"adni_csv: {path} has no 'diagnosis' column (columns: {reader.fieldnames})"]
            counts = {"HC": 0, "AD": 0}
            for row in reader:
                label = (row["diagnosis"] or "").strip()
                counts[label] = counts.get(label, 0) + 1
        rules = self.pool_violations(f"the ADNI CSV {path.name} ({counts['HC']} HC, {counts['AD']} AD)",
                                     counts["HC"], counts["AD"])
        return [f"{', '.join(v.fields)}: {v.rule}" for v in rules]

    # ---- resources -----------------------------------------------------------------------------------------------
    #: measured: the kernel after the chapter's imports (numpy, pandas, scipy, matplotlib, torch, scikit-learn);
    #: the smoke profile peaks at 622 MiB
    base_memory: ClassVar[int] = 600 * MIB
    #: measured: a forked grid worker's own pages once it has run units (PSS)
    worker_memory: ClassVar[int] = 120 * MIB
    #: bytes per subset x repeat x point of one validation call over all its subsets (fold ids and their
    #: temporaries: keys, sort order, ranks, class counts, all int64/float64, the index and label arrays)
    fold_point_bytes: ClassVar[int] = 96
    #: bytes per fitted problem x point of a chunk of subsets (decision values, train masks, pooled decisions)
    problem_point_bytes: ClassVar[int] = 32
    #: bytes per pair and bootstrap replicate of the claims' pair bootstraps (measured at 2,000 x 10,000: indices,
    #: resampled scores and their EVE terms of a characterization size; the strategies' MSE per strategy)
    bootstrap_bytes: ClassVar[int] = 48
    strategy_bootstrap_bytes: ClassVar[int] = 10

    def main_features(self) -> int:
        return WDBC_FEATURES if self.dataset == "wdbc" else self.n_features

    def validation_bytes(self, n_subsets: int, subset_size: int, repeats: int = 1, n_eval: int | None = None,
                         features: int | None = None) -> int:
        """Peak bytes of one ``run_validation`` on ``n_subsets`` subsets of ``subset_size`` per class (m = 2n points)
        with ``repeats`` x ``n_eval`` fitted problems per subset: the fold ids of every subset at once, then chunks
        of at most :data:`MAX_PROBLEM_POINTS` problem points (features of the chunk's subsets, their linear kernels
        where the exact active-set solver takes the problems, and per-problem decisions)."""
        m, d = 2 * subset_size, features or self.main_features()
        n_eval = self.n_splits if n_eval is None else n_eval
        folds = n_subsets * repeats * m * self.fold_point_bytes
        chunk = min(n_subsets, max(1, MAX_PROBLEM_POINTS // (repeats * n_eval * m)))
        active_set = self.classifier == "svm" and m - m // max(n_eval, 1) <= d
        work = chunk * (m * d * 8 + (m * m * 8 if active_set else 0)
                        + repeats * n_eval * m * self.problem_point_bytes)
        return folds + work

    def unit_bytes(self) -> dict[str, int]:
        """Peak bytes of the largest unit of every kind of the chapter's grid (``eve.chapter_grid``)."""
        d_phantom = self.n_features
        pair_max = min(POOL_CLASSES.get(self.dataset, (10**9, 10**9))) // 2
        n = self.drawstring_subset_size
        parents = min(self.drawstring_n_parents, max(1, 400 // self.drawstring_n_pairs))
        units = {"drawstring": self.validation_bytes(parents * 2 * self.drawstring_n_pairs, n)}
        fitting = [s for s in self.characterization_sizes if s <= pair_max] or self.characterization_sizes
        units["characterization"] = max(self.validation_bytes(2 * self.characterization_pairs(s), s) for s in fitting)
        shapes = [s for s in map(strategy_shape, self.strategies) if not isinstance(s, str)]
        pairs = min(self.strategy_n_pairs, 50)
        units["strategies"] = max(
            (self.validation_bytes(2 * pairs, s, sh.n_repeats, 2 * s if sh.kind == "loo" else max(sh.n_splits, 1))
             for s in self.strategy_sizes for sh in shapes), default=0)
        draws = min(self.truth_n_draws, 1000)
        units["truth draws"] = max(self.validation_bytes(draws, s, features=d_phantom) + 3 * draws * 2 * s * d_phantom * 8
                                   for s in self.truth_sizes)
        pools = min(self.truth_n_pools, max(1, 1000 // self.truth_pairs_per_pool))
        units["truth pools"] = max(
            self.validation_bytes(pools * self.truth_pairs_per_pool * 2, s, features=d_phantom)
            + pools * 622 * d_phantom * 8 * 2 for s in self.truth_sizes)
        units["settings"] = max(self.validation_bytes(2 * self.setting_n_pairs, s, features=max(d_phantom, WDBC_FEATURES))
                                for s in self.setting_sizes)
        units["comparison"] = self.validation_bytes(2 * self.comparison_n_pairs, self.comparison_size)
        return units

    def characterization_pairs(self, size: int) -> int:
        small = self.characterization_n_pairs_small
        return small if small is not None and size <= 25 else self.characterization_n_pairs

    def kernel_results_bytes(self) -> dict[str, int]:
        """What the kernel holds and computes at the end: the known-truth score arrays of every metric, the raw pair
        scores, and the claims' pair bootstraps (replicates x pairs at once)."""
        sizes = len(self.truth_sizes)
        truth = sizes * 4 * 8 * (self.truth_n_draws + self.truth_n_pools * 2
                                 * (self.truth_pairs_per_pool + self.truth_null_pairs))
        char_pairs = max(self.characterization_pairs(s) for s in self.characterization_sizes)
        bootstrap = self.n_bootstrap * max(self.bootstrap_bytes * char_pairs,
                                           self.strategy_bootstrap_bytes * len(self.strategies) * self.strategy_n_pairs)
        return {"known-truth scores": truth, "claims bootstrap": bootstrap}

    def n_units(self) -> int:
        per_part = max(1, 400 // self.drawstring_n_pairs)
        n = len(self.drawstring_parent_sizes) * -(-self.drawstring_n_parents // per_part)
        n += len(self.characterization_sizes) + len(self.strategy_sizes) * -(-self.strategy_n_pairs // 50)
        n += len(self.truth_sizes) * (-(-self.truth_n_draws // 1000)
                                      + -(-self.truth_n_pools // max(1, 1000 // self.truth_pairs_per_pool)))
        return n + 6 * len(self.setting_sizes) + 4

    # ---- time: a rough wall time on the 2-core reference machine ------------------------------------------
    #: seconds outside the grid: kernel start, imports, tables, figures, the claims' bootstraps and the
    #: exercise (the smoke profile's 9.1 s recorded in results/timings.json less its grid, 0.75 s measured
    #: unit by unit)
    start_seconds: ClassVar[float] = 8.3
    #: one SVM fit on t training points, measured unit by unit on the default grid (1 process): the exact
    #: active-set engine (t <= d) ``active_set_seconds x t**2`` (12-15 us at t = 18, 59 us at 36, 92 us at
    #: 45); LIBSVM (t > d) ``sklearn_seconds[0] + sklearn_seconds[1] x t`` (0.87 ms at 90, 1.44 ms at 180 with
    #: d = 80, 0.59 ms at 45 with d = 30); a nearest-centroid fit; a ridge fit of the multi-label bridge
    active_set_seconds: ClassVar[float] = 4.5e-8
    sklearn_seconds: ClassVar[tuple[float, float]] = (3e-4, 6.3e-6)
    centroid_seconds: ClassVar[float] = 5e-6
    ridge_seconds: ClassVar[float] = 1.2e-3
    #: wall time of the 2-process grid over its single-process work: one half, plus the pool's start and its
    #: uneven tail (measured: default grid 28.6 s for 52.6 s of units)
    grid_overhead: ClassVar[float] = 1.09

    def _fit_seconds(self, train: float, features: int, classifier: str) -> float:
        if classifier == "nearest_centroid":
            return self.centroid_seconds
        engine = "active_set" if self.engine == "auto" else self.engine
        if engine == "active_set" and train <= features:
            return self.active_set_seconds * train**2
        return self.sklearn_seconds[0] + self.sklearn_seconds[1] * train

    def _validation_seconds(self, n_subsets: int, size: int, strategy: str, features: int,
                            classifier: str | None = None) -> float:
        """One ``run_validation`` of ``strategy`` on ``n_subsets`` subsets of ``size`` per class."""
        shape, m = strategy_shape(strategy), 2 * size
        classifier = classifier or self.classifier
        if shape.kind == "kfold":
            fits = [(shape.n_repeats * shape.n_splits, m * (shape.n_splits - 1) / shape.n_splits)]
        elif shape.kind == "loo":
            fits = [(m, m - 1)]
        else:  # holdout<fraction>x<M>
            fraction = float(shape.name.removeprefix("holdout").split("x")[0])
            fits = [(shape.n_repeats, m * (1 - fraction))]
        if classifier == "svm" and m <= features and self.engine in ("auto", "active_set"):
            fits.append((1, m))  # the active-set engine's warm start: each subset's full problem
        return n_subsets * sum(k * self._fit_seconds(t, features, classifier) for k, t in fits)

    def unit_seconds(self) -> list[float]:
        """Single-process seconds of every unit of the chapter's grid (``eve.chapter_grid``, in its parts)."""
        d, k = self.main_features(), f"{self.n_splits}x1"
        out: list[float] = []
        per_part = max(1, 400 // self.drawstring_n_pairs)
        for _ in self.drawstring_parent_sizes:
            for count in _parts(self.drawstring_n_parents, per_part):
                out.append(self._validation_seconds(count * 2 * self.drawstring_n_pairs,
                                                    self.drawstring_subset_size, k, d))
        for size in self.characterization_sizes:
            out.append(self._validation_seconds(2 * self.characterization_pairs(size), size, k, d))
        shapes = [strategy_shape(st) for st in self.strategies]
        repeated = {sh.n_splits for sh in shapes if sh.kind == "kfold" and sh.n_repeats > 1}
        # a Kx1 next to a repeated K-fold is read off the latter's first repeat: no fits of its own
        run = [sh.name for sh in shapes
               if not (sh.kind == "kfold" and sh.n_repeats == 1 and sh.n_splits in repeated)]
        for size in self.strategy_sizes:
            for count in _parts(self.strategy_n_pairs, 50):
                out.append(sum(self._validation_seconds(2 * count, size, st, d) for st in run))
        phantom = self.n_features
        for size in self.truth_sizes:
            for count in _parts(self.truth_n_draws, 1000):
                out.append(self._validation_seconds(count, size, k, phantom))
            for count in _parts(self.truth_n_pools, max(1, 1000 // self.truth_pairs_per_pool)):
                subsets = count * 2 * (self.truth_pairs_per_pool + self.truth_null_pairs)
                out.append(self._validation_seconds(subsets, size, k, phantom))
        for dataset in dict.fromkeys(["adni_phantom", "wdbc", self.dataset]):
            features = WDBC_FEATURES if dataset == "wdbc" else self.n_features
            for classifier in ("svm", "nearest_centroid"):
                out += [self._validation_seconds(2 * self.setting_n_pairs, size, k, features, classifier)
                        for size in self.setting_sizes]
        hard_margin = sorted(set(self.characterization_sizes) | {self.drawstring_subset_size})
        out.append(sum(2 * self._validation_seconds(5, size, k, d) for size in hard_margin))
        # the engine check: the engine's fits and LIBSVM's on the same 5 subsets
        out.append(self._validation_seconds(5, self.comparison_size, k, d)
                   + 5 * self.n_splits * self._fit_seconds(2 * self.comparison_size, 0, "svm"))
        out.append(sum(self._validation_seconds(2 * self.comparison_n_pairs, self.comparison_size, k, d, c)
                       for c in ("svm", "nearest_centroid")))
        out.append(self.bridge_n_pairs * 2 * 5 * self.ridge_seconds)
        return out

    def time_estimate(self) -> float | None:
        """Rough wall time (seconds) on the 2-core reference machine: ``start_seconds`` + the grid's units
        (their SVM fits: subsets x repeats x folds, each costed by its training points, see the constants
        above) over the pool's processes (at most the reference's 2 cores), at least its largest unit.

        Calibrated on the default grid timed unit by unit (52.6 s in 1 process; the fit costs above) and the
        smoke run (model 9 s, recorded 9.1 s); checked against the default run (40 s, recorded 38.8 s) and a
        third run (5-fold CV, characterization sizes up to 125 at 800 pairs, more drawstring parents, setting
        pairs and strategy sizes: 55 s, measured 63.5 s). ``None`` where no model was calibrated:
        ``device='cuda'`` or the batched engine (never timed here; ``auto`` on the CPU is the active-set
        engine) and ``dataset='adni'`` (its pool, features and reading are not on the reference machine)."""
        if self.device == "cuda" or self.engine == "batched" or self.dataset == "adni":
            return None
        units = self.unit_seconds()
        processes = self.reference_processes(self.n_units())
        grid = max(sum(units) / processes * (self.grid_overhead if processes > 1 else 1.0), max(units))
        return self.start_seconds + grid

    def resource_estimate(self) -> ResourceEstimate:
        units = self.unit_bytes()
        largest_kind = max(units, key=units.get)
        workers = self.pool_size(self.n_units())
        grid = max(1, workers) * units[largest_kind] + workers * self.worker_memory
        kernel = self.kernel_results_bytes()
        terms = {"kernel": self.base_memory, f"grid ({largest_kind} unit x {max(1, workers)})": grid, **kernel}
        drivers_of = {
            "drawstring": ("drawstring_n_pairs", "drawstring_subset_size"),
            "characterization": ("characterization_n_pairs", "characterization_sizes")
            if self.characterization_n_pairs_small is None or min(self.characterization_sizes) > 25
            else ("characterization_n_pairs", "characterization_n_pairs_small", "characterization_sizes"),
            "strategies": ("strategies", "strategy_sizes"),
            "truth draws": ("truth_n_draws", "truth_sizes"),
            "truth pools": ("truth_pairs_per_pool", "truth_sizes"),
            "settings": ("setting_n_pairs", "setting_sizes"),
            "comparison": ("comparison_n_pairs", "comparison_size"),
            "known-truth scores": ("truth_n_pools", "truth_pairs_per_pool", "truth_n_draws"),
            "claims bootstrap": ("n_bootstrap", "characterization_n_pairs", "strategy_n_pairs"),
        }
        big = {largest_kind: units[largest_kind], **kernel}
        top = max(big.values())
        drivers = {f: getattr(self, f) for name, v in big.items() if v >= top / 4 and v > 64 * MIB
                   for f in drivers_of[name]}
        return ResourceEstimate(peak_bytes=self.base_memory + grid + sum(kernel.values()),
                                seconds=self.time_estimate(),
                                drivers=drivers, terms=terms)
