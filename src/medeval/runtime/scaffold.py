"""``medeval new-chapter ID --title ...``: a new chapter from the chapter template, runnable as generated.

The scaffold writes the files a chapter is made of, each following the conventions of the existing chapters:

* ``params/<id>.yaml`` — the registry entry: title, notebook, schema, datasets, the four profiles, the bounds of
  the executed parameter fuzz and the chapter's rows of the README and introduction tables;
* ``src/medeval/experiments/<module>_params.py`` — the :class:`~medeval.runtime.params.ChapterParams` schema with
  its cross-field rules and resource estimate (imports nothing heavy, so refusals are fast);
* ``src/medeval/experiments/<module>.py`` — the experiment functions;
* ``src/medeval/experiments/<module>_claims.py`` — the claim rules and ``chapter_claims``;
* ``notebooks/<id>.py`` — the chapter notebook (jupytext percent format) following the chapter template;
* ``tests/notebooks/test_<id>.py`` and ``tests/experiments/test_<module>.py`` — the smoke test and the claim
  rule's tests (one on which it passes, one on which it must fail).

The book's table of contents picks the notebook up by its part's glob, and the README and introduction chapter
tables are regenerated from the registry (:func:`medeval.runtime.params.write_chapter_tables`). The generated
experiment is small and real — the ROC-AUC of one WDBC feature over bootstrap resamples — so the chapter
passes its smoke test before anything is edited; every piece is then replaced by the paper's experiment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from medeval.runtime.params import PARTS, ParameterError, chapters
from medeval.runtime.paths import project_root

CHAPTER_ID = re.compile(r"^(?:\d{2}[a-z]?|A\d+)-[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Scaffold:
    """The files :func:`new_chapter` wrote, relative to the project root."""

    chapter_id: str
    module: str
    files: tuple[Path, ...]


def module_name(chapter_id: str) -> str:
    """``06-my-paper`` -> ``my_paper``: the chapter id without its number, as a Python identifier."""
    return chapter_id.split("-", 1)[1].replace("-", "_")


def new_chapter(chapter_id: str, title: str, *, part: str = "chapters", module: str | None = None,
                root: Path | None = None) -> Scaffold:
    """Write a new chapter's files (refusing to overwrite any) and regenerate the chapter tables."""
    root = Path(root or project_root())
    if not CHAPTER_ID.match(chapter_id):
        raise ParameterError(f"chapter id {chapter_id!r}: expected a number and words joined by '-', e.g. "
                             "'06-my-paper' or 'A3-extra'")
    if part not in PARTS:
        raise ParameterError(f"part must be one of {list(PARTS)}, got {part!r}")
    if not title.strip():
        raise ParameterError("--title must not be empty")
    if chapter_id in chapters():
        raise ParameterError(f"chapter {chapter_id!r} exists already (params/{chapter_id}.yaml)")
    module = module or module_name(chapter_id)
    if not module.isidentifier():
        raise ParameterError(f"module name {module!r} is not a Python identifier; pass --module")
    values = {"id": chapter_id, "module": module, "title": title.strip().replace('"', "'"), "part": part,
              "label": "ch-" + module.replace("_", "-")}
    targets = {
        Path("params") / f"{chapter_id}.yaml": _PARAMS_YAML,
        Path("src/medeval/experiments") / f"{module}_params.py": _SCHEMA,
        Path("src/medeval/experiments") / f"{module}.py": _EXPERIMENT,
        Path("src/medeval/experiments") / f"{module}_claims.py": _CLAIMS,
        Path("notebooks") / f"{chapter_id}.py": _NOTEBOOK,
        Path("tests/notebooks") / f"test_{chapter_id}.py": _NOTEBOOK_TEST,
        Path("tests/experiments") / f"test_{module}.py": _EXPERIMENT_TEST,
    }
    existing = [str(p) for p in targets if (root / p).exists()]
    if existing:
        raise ParameterError(f"refusing to overwrite existing files: {existing}")
    for path, template in targets.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(Template(template).substitute(values))
    from medeval.runtime.params import write_chapter_tables

    changed = write_chapter_tables(root)
    return Scaffold(chapter_id, module, tuple(targets) + tuple(p.relative_to(root) for p in changed))


# ---------------------------------------------------------------------------------------------------------------
# Templates (string.Template: $$ is a literal dollar sign)

_PARAMS_YAML = '''\
title: "$title"
part: $part
notebook: notebooks/$id.py
schema: medeval.experiments.${module}_params:Params
datasets: [wdbc]
# the chapter's rows of the README and book/intro.md tables (`medeval chapters --write-tables` rewrites them)
summary:
  label: $label
  paper: "the paper: authors, title, venue"
  cite: null          # a key of book/references.bib
  reproduces: "what the chapter reproduces (scaffold: ROC-AUC of one WDBC feature over bootstrap resamples)"
  about: "what the chapter is about, in one line"
profiles:
  smoke:
    n_samples: 80
    n_repeats: 40
  default: {}
  gpu:
    n_repeats: 400
  full:
    n_repeats: 1000
# bounds of the executed parameter fuzz (`make fuzz`): every draw runs in seconds
fuzz:
  feature: {choices: [mean radius, mean texture, mean smoothness, mean fractal dimension]}
  n_samples: [20, 200]
  n_repeats: [2, 80]
'''

_SCHEMA = '''\
"""Parameters of chapter $id ("$title"): the single source of defaults, ranges and help.

Imports nothing heavy: ``medeval run $id --set ...`` refuses a bad value before numpy or torch load.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from medeval.runtime.params import MIB, ChapterParams, ResourceEstimate, Violation

#: the cases of scikit-learn's bundled WDBC table (212 malignant, 357 benign)
WDBC_CASES = 569
Feature = Literal["mean radius", "mean texture", "mean smoothness", "mean fractal dimension"]


class Params(ChapterParams):
    """Parameters of chapter $id (``medeval params $id`` prints them with their ranges)."""

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
        workers = self.pool_size(self.n_repeats)
        return ResourceEstimate(
            peak_bytes=self.base_memory + workers * (self.worker_memory + per_run),
            seconds=0.05 * self.n_repeats,
            drivers={"n_repeats": self.n_repeats} if workers else {},
            terms={"kernel": self.base_memory, "workers": workers * (self.worker_memory + per_run)},
        )
'''

_EXPERIMENT = '''\
"""Chapter $id: $title.

Scaffold experiment (replace it with the paper's): the ROC-AUC of one feature of the Wisconsin diagnostic
breast-cancer data (WDBC, as bundled with scikit-learn) as a score for malignancy, over ``n_repeats`` bootstrap
resamples of ``n_samples`` cases each.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from medeval.experiments.${module}_params import Params
from medeval.metrics import roc_auc

__all__ = ["Params", "feature_auc", "grid", "summarise"]


def feature_auc(feature: str, n_samples: int, repeat: int, seed: int) -> dict:
    """One bootstrap resample: the ROC-AUC of ``feature`` as a score for malignancy on ``n_samples`` cases drawn
    with replacement (random state ``SeedSequence([seed, repeat])``)."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    column = list(data.feature_names).index(feature)
    rng = np.random.default_rng([seed, repeat])
    rows = rng.integers(0, len(data.target), n_samples)
    malignant = data.target[rows] == 0  # scikit-learn codes malignant as 0
    return {"repeat": repeat, "auc": float(roc_auc(malignant, data.data[rows, column], undefined=np.nan))}


def grid(params: Params) -> list[dict]:
    """The runs of the chapter: one per bootstrap resample."""
    return [{"feature": params.feature, "n_samples": params.n_samples, "repeat": r, "seed": params.seed}
            for r in range(params.n_repeats)]


def summarise(runs: list[dict], alpha: float) -> pd.DataFrame:
    """Mean ROC-AUC over the resamples and its two-sided percentile interval at level ``alpha``."""
    auc = np.array([r["auc"] for r in runs], dtype=float)
    auc = auc[np.isfinite(auc)]
    low, high = np.quantile(auc, [alpha / 2, 1 - alpha / 2]) if len(auc) else (np.nan, np.nan)
    return pd.DataFrame([{"resamples": len(auc), "mean_auc": float(np.mean(auc)) if len(auc) else np.nan,
                          "low": float(low), "high": float(high)}])
'''

_CLAIMS = '''\
"""The claims of chapter $id, each decided by a rule that can fail (scaffold: one claim; replace it)."""

from __future__ import annotations

import pandas as pd

from medeval.core.claims import ClaimList, decide_bound


def chapter_claims(summary: pd.DataFrame, *, scale: str) -> ClaimList:
    """The chapter's paper-versus-us rows, decided from the summary of :func:`medeval.experiments.$module.summarise`.

    Scaffold claim: the feature separates malignant from benign cases better than chance, i.e. its ROC-AUC lies
    above 0.5 — [Re] when the whole percentile interval lies above 0.5, [¬Re] when it lies wholly below, [~] when
    it contains 0.5.
    """
    claims = ClaimList(scale)
    row = summary.iloc[0]
    decision = decide_bound(row["mean_auc"], row["low"], row["high"], bound=0.5, direction="greater",
                            n=f"{int(row['resamples'])} bootstrap resamples", what="the ROC-AUC")
    claims.claim("auc-above-chance", "The feature ranks malignant above benign cases better than chance.",
                 where="scaffold (replace with the paper's section)", paper="AUC > 0.5",
                 rule="the percentile interval of the ROC-AUC lies above 0.5",
                 ours=f"{row['mean_auc']:.3f} [{row['low']:.3f}, {row['high']:.3f}]", basis="real",
                 decision=decision)
    return claims
'''

_NOTEBOOK = '''\
# ---
# jupyter:
#   jupytext:
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# ($label)=
# # $title
#
# The paper in one paragraph: its question, its data and its answer (scaffold: replace this text and cite the
# paper from `book/references.bib`). The scaffold's experiment asks how well one feature of the Wisconsin
# diagnostic breast-cancer data {cite:p}`street1995wdbc` ranks malignant above benign cases.
#
# ## What you will learn
#
# - What the ROC-AUC of a single score measures.
# - How a bootstrap percentile interval decides whether it lies above chance.
#
# ## Prerequisites
#
# Sensitivity, specificity and the ROC curve.
#
# **Time to run.** The table gives the last recorded wall time of each profile.

# %% tags=["parameters", "remove-cell"]
profile = "default"
seed = None
device = None
scheduler = None
max_workers = None
feature = None
n_samples = None
n_repeats = None
alpha = None

# %% tags=["remove-input"]
from medeval import plots
from medeval.experiments import $module, ${module}_claims
from medeval.runtime import notebook
from medeval.runtime.grid import run_grid

P = notebook.setup("$id", globals())

# %% tags=["remove-input"]
notebook.time_to_run_table()

# %% [markdown]
# ## Parameters

# %% tags=["remove-input"]
notebook.parameters_table()

# %% [markdown]
# ## Method
#
# The ROC-AUC of a score $$s$$ is the probability that a random positive case scores above a random negative one,
# ties counting one half:
#
# $$$$
# \\operatorname{AUC} = \\frac{1}{n_+ n_-} \\sum_{i: y_i = 1} \\sum_{j: y_j = 0}
#   \\left( [s_i > s_j] + \\tfrac12 [s_i = s_j] \\right).
# $$$$ (eq-${module}-auc)
#
# {func}`medeval.metrics.curves.roc_auc`.
#
# ## Experiment

# %%
runs = run_grid($module.feature_auc, $module.grid(P), cache_dir=notebook.cache_dir("auc"),
                scheduler=P.scheduler, max_workers=P.max_workers)
summary = notebook.record_table("summary", $module.summarise(runs, P.alpha))
notebook.show_table(summary, caption=f"ROC-AUC of {P.feature!r} over the bootstrap resamples, with its "
                    f"{100 * (1 - P.alpha):.0f} % percentile interval.",
                    labels={"mean_auc": "mean ROC-AUC", "low": "interval low", "high": "interval high"})

# %% tags=["hide-input"]
fig, (ax,) = plots.new_axes(width=5.0, height=3.0)
ax.hist([r["auc"] for r in runs], bins=20, color=plots.color("metric", "auc"))
ax.axvline(0.5, color="black", linestyle=":")
ax.set_xlabel("ROC-AUC of one resample")
ax.set_ylabel("resamples")
plots.glue_figure("fig-${module}-auc", fig)

# %% [markdown]
# ```{glue:figure} fig-${module}-auc
# :name: fig-${module}-auc
# :alt: Histogram of the ROC-AUC over the bootstrap resamples, with a dotted vertical line at 0.5.
#
# ROC-AUC of the chosen feature over the bootstrap resamples ({eq}`eq-${module}-auc`); the dotted line is chance.
# ```
#
# ## Paper vs us

# %%
claim_list = ${module}_claims.chapter_claims(summary, scale=profile)
notebook.paper_vs_us(claim_list)

# %% [markdown]
# ## Try it
# - `medeval run $id --set "feature=mean fractal dimension"`: does the verdict change?
#
# ## Provenance

# %% tags=["remove-input"]
notebook.provenance()
'''

_NOTEBOOK_TEST = '''\
"""Chapter $id under the smoke profile: its recorded outputs."""

import pytest


@pytest.mark.notebook
def test_${module}_smoke(run_chapter_smoke, in_range):
    res = run_chapter_smoke("$id").results
    (summary,) = res["summary"]
    assert summary["resamples"] == res["params"]["n_repeats"]
    in_range([summary["mean_auc"], summary["low"], summary["high"]], 0.0, 1.0)
    assert summary["low"] <= summary["mean_auc"] <= summary["high"]
    (row,) = res["paper_vs_us"]
    assert row["id"] == "auc-above-chance" and row["verdict"] in ("[Re]", "[¬Re]", "[~]")


@pytest.mark.notebook
def test_peak_memory_within_factor_two_of_the_estimate(run_chapter_smoke, estimate_within):
    estimate_within(run_chapter_smoke("$id").results)
'''

_EXPERIMENT_TEST = '''\
"""The claim rule of chapter $id can pass and can fail."""

import pandas as pd
import pytest

from medeval.experiments import ${module}_claims


def _summary(mean, low, high):
    return pd.DataFrame([{"resamples": 100, "mean_auc": mean, "low": low, "high": high}])


@pytest.mark.claim
def test_auc_above_chance_is_reproduced_when_the_interval_lies_above_one_half():
    (claim,) = ${module}_claims.chapter_claims(_summary(0.8, 0.7, 0.9), scale="smoke").claims
    assert claim.verdict == "[Re]"


@pytest.mark.claim
@pytest.mark.parametrize(("low", "high", "verdict"), [(0.2, 0.4, "[¬Re]"), (0.45, 0.6, "[~]")])
def test_auc_above_chance_fails_when_the_interval_does_not_lie_above_one_half(low, high, verdict):
    (claim,) = ${module}_claims.chapter_claims(_summary((low + high) / 2, low, high), scale="smoke").claims
    assert claim.verdict == verdict
'''
