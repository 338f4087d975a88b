"""Parameters of chapter 00-template-chapter ("Template chapter title"): the single source of defaults, ranges
and help.

Imports nothing heavy: ``medeval run 00-template-chapter --set ...`` refuses a bad value before numpy or torch load.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from medeval.core.schema import MIB, ChapterParams, ResourceEstimate, Violation

#: the cases of scikit-learn's bundled WDBC table (212 malignant, 357 benign)
WDBC_CASES = 569
Feature = Literal["mean radius", "mean texture", "mean smoothness", "mean fractal dimension"]


class Params(ChapterParams):
    """Parameters of chapter 00-template-chapter (``medeval params 00-template-chapter`` prints them with their
    ranges)."""

    feature: Feature = Field("mean radius", description="the WDBC feature used as the score")
    n_samples: int = Field(200, ge=20, le=WDBC_CASES, description="cases per bootstrap resample")
    n_repeats: int = Field(100, ge=2, le=10_000, description="bootstrap resamples")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="level of the claim's two-sided percentile interval")

    #: measured for the scaffold: the kernel after its imports (numpy, pandas, scikit-learn, matplotlib; no torch),
    #: and a forked grid worker's own pages (kernel and two workers: 344 MiB, RSS); remeasure for your experiment
    base_memory: ClassVar[int] = 250 * MIB
    worker_memory: ClassVar[int] = 80 * MIB

    def violations(self) -> list[Violation]:
        broken = super().violations()
        if self.n_repeats * self.alpha / 2 < 1:
            broken.append(Violation(("n_repeats", "alpha"), "the percentile interval needs at least one resample "
                                    "in each tail: n_repeats * alpha / 2 >= 1"))
        return broken

    def resource_estimate(self) -> ResourceEstimate:
        per_run = 8 * WDBC_CASES * 31  # each run loads the WDBC table (float64)
        tasks = 2 * self.n_repeats  # the resamples and their label-permuted controls
        workers = self.pool_size(tasks)
        return ResourceEstimate(
            peak_bytes=self.base_memory + workers * (self.worker_memory + per_run),
            seconds=0.05 * tasks,
            drivers={"n_repeats": self.n_repeats} if workers else {},
            terms={"kernel": self.base_memory, "workers": workers * (self.worker_memory + per_run)},
        )
