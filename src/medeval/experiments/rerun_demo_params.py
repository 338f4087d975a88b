"""Parameters of the appendix page "Re-executing a chapter with new parameters" (:mod:`medeval.experiments.rerun_demo`).

A light module: the standard library, pydantic and :mod:`medeval.core.schema` only, so that a parameter set is
validated, and its resource estimate computed, before numpy, scikit-learn or a kernel load.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from medeval.core.schema import MIB, ChapterParams, Distinct, ResourceEstimate

#: cases in scikit-learn's copy of WDBC (212 malignant, 357 benign)
WDBC_CASES = 569


class Params(ChapterParams):
    """Parameters of the re-execution demo."""

    test_sizes: Distinct[list[Annotated[int, Field(ge=10, le=400)]]] = Field(
        [20, 40, 80, 160], min_length=1, max_length=20,
        description="test-set sizes (number of cases held out), each between 10 and 400, no size twice",
    )
    n_repeats: int = Field(20, ge=2, le=10_000, description="random hold-out splits per test-set size")
    regularisation_c: float = Field(1.0, gt=0, le=1e6, description="inverse L2 strength C of the logistic regression")

    # ---- resources: the kernel (numpy, pandas, scipy, matplotlib, scikit-learn) and the grid's workers; each
    # run fits a logistic regression on at most 559 x 30 values, so no term grows with the parameters
    #: measured: the kernel of a smoke run with its imports (RSS; 235 MiB with max_workers=1, scikit-learn included;
    #: torch is not loaded, the page does not use it)
    base_memory: ClassVar[int] = 240 * MIB
    #: measured: a forked grid worker with scikit-learn loaded, and the kernel pages it comes to own (copy on
    #: write) over a long grid (PSS: 521 MiB for the smoke profile's 16 runs, 644 MiB for full's 6,000 on 2 workers)
    worker_memory: ClassVar[int] = 80 * MIB
    #: measured on the 2-core reference: kernel start-up and the page's figures (smoke 3.7 s, default 3.8 s for 16
    #: and 80 runs); one hold-out run on one core (8 ms in the kernel, grid overhead on top)
    start_seconds: ClassVar[float] = 3.5
    run_seconds: ClassVar[float] = 0.01

    def n_runs(self) -> int:
        return len(self.test_sizes) * self.n_repeats

    def resource_estimate(self) -> ResourceEstimate:
        workers = self.pool_size(self.n_runs())
        terms = {"kernel": self.base_memory, "grid workers": workers * self.worker_memory}
        # only a large explicit pool makes this page big: then the pool size is what to lower
        drivers = ({"max_workers": self.max_workers}
                   if self.max_workers is not None and terms["grid workers"] > self.base_memory else {})
        return ResourceEstimate(
            peak_bytes=sum(terms.values()),
            seconds=self.start_seconds + self.n_runs() * self.run_seconds / max(1, min(workers, 2)),
            drivers=drivers, terms=terms,
        )
