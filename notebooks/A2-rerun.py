# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# (app-rerun)=
# # Re-executing a chapter with new parameters
#
# Every page of this book is a parametrised notebook. This page is a small, real experiment that shows how to
# re-run a page with other parameters, and what the runtime records when it does.
#
# **The experiment.** How much does a hold-out accuracy estimate vary with the size of the test set? On the
# Wisconsin diagnostic breast-cancer data {cite:p}`street1995wdbc` (WDBC, 569 cases: 212 malignant, 357 benign,
# as bundled with scikit-learn {cite:p}`pedregosa2011sklearn`) we draw `n_repeats` random stratified hold-out
# splits per test-set size, fit a logistic regression on the rest, and record the accuracy on the held-out
# cases. The chapter {ref}`ch-eve` answers this question properly {cite:p}`mendelson2015eve`; here it only
# drives the pipeline.
#
# ## What you will learn
#
# - Re-run any page of the book with other parameter values, from the command line or with papermill.
# - Read a page's parameters table and find the range and meaning of each parameter.
# - Recognise the error raised by a value outside its range before anything runs.
# - Run a grid of independent runs on a local process pool or a Dask cluster, and resume it from its cache.
# - Compare the spread of a hold-out accuracy with the binomial model of {eq}`eq-rerun-binomial-sd`.
#
# ## Prerequisites
#
# A shell with the `medeval` package installed (see the book's introduction). For the experiment: what a
# hold-out estimate of accuracy is; the variance of such estimates is the subject of {ref}`ch-eve`.
#
# **Time to run.** The table gives the last recorded wall time of each profile.

# %% tags=["parameters", "remove-cell"]
profile = "default"
seed = None
device = None
scheduler = None
max_workers = None
test_sizes = None
n_repeats = None
regularisation_c = None

# %% tags=["remove-input"]
import numpy as np
from IPython.display import Markdown, display

from medeval import plots
from medeval.experiments import rerun_demo
from medeval.runtime import notebook
from medeval.runtime.grid import run_grid

P = notebook.setup("A2-rerun", globals())

# %% tags=["remove-input"]
notebook.time_to_run_table()

# %% [markdown]
# ## Parameters
#
# The page's parameters are declared in a hidden cell at its top. `None` means "take the profile's value"; the
# profiles live in `params/A2-rerun.yaml` and the schema, with ranges and help, in
# {class}`medeval.experiments.rerun_demo.Params`. Three equivalent ways to change a value:
#
# ```bash
# medeval run A2-rerun --set n_repeats=100 --set "test_sizes=[10, 50, 250]"
# papermill -p n_repeats 100 notebook.ipynb out.ipynb     # after: jupytext --to ipynb notebooks/A2-rerun.py
# medeval params A2-rerun                                  # print the schema
# ```
#
# The values of this run:

# %% tags=["remove-input"]
notebook.parameters_table()

# %% [markdown]
# A value outside its range is refused before anything runs, with the parameter's name and allowed range:

# %%
from medeval.runtime.params import ParameterError, resolve_params

try:
    resolve_params("A2-rerun", "default", {"n_repeats": 1})
except ParameterError as err:
    print(err)

# %% [markdown]
# ## The grid of runs
#
# The runs are independent, so they go through the grid executor: a local process pool by default, a Dask
# cluster when `scheduler` is set. Each finished run is cached, so an interrupted grid resumes where it stopped.

# %%
runs = run_grid(rerun_demo.holdout_accuracy, rerun_demo.grid(P),
                cache_dir=notebook.cache_dir("holdout"),
                scheduler=P.scheduler, max_workers=P.max_workers)
summary = rerun_demo.summarise(runs)

# %% tags=["hide-input"]
notebook.record_table("accuracy_by_test_size", summary)
notebook.show_table(
    summary, caption="Hold-out accuracy over the repeats, per test-set size, next to the binomial SD "
    "√(p(1−p)/n) evaluated at the mean accuracy.",
    formats={"mean": "{:.3f}", "std": "{:.3f}", "binomial_sd": "{:.3f}"},
    labels={"test_size": "test-set size", "mean": "mean accuracy", "std": "SD over repeats", "count": "repeats",
            "binomial_sd": "binomial SD"})

# %% tags=["hide-input"]
fig, (ax,) = plots.new_axes(width=6.0, height=3.2)
acc, binom = plots.color("metric", "accuracy"), plots.color("estimator", "binomial")
plots.curve_with_band(ax, summary["test_size"], summary["mean"], summary["mean"] - summary["std"],
                      summary["mean"] + summary["std"], label="mean ± SD over repeats", color=acc, marker="o")
for sign in (-1, 1):
    ax.plot(summary["test_size"], summary["mean"] + sign * summary["binomial_sd"], color=binom, linestyle="--",
            label="mean ± binomial SD" if sign > 0 else None)
ax.set_xscale("log")
ax.set_xticks(summary["test_size"], [str(int(n)) for n in summary["test_size"]])
ax.minorticks_off()
ax.set_xlabel("test-set size (cases held out)")
ax.set_ylabel("hold-out accuracy")
fig.legend(loc="outside lower center", ncols=2, frameon=False)
plots.glue_figure("fig-rerun-spread", fig)

# %% [markdown]
# ```{glue:figure} fig-rerun-spread
# :name: fig-rerun-spread
# :alt: Line plot of the mean hold-out accuracy against the test-set size on a log axis, with a shaded band of plus or minus one standard deviation over the repeats that narrows as the test set grows, and dashed lines at plus or minus the binomial standard deviation.
#
# Spread of a hold-out accuracy estimate on WDBC: mean ± SD over the repeats for each test-set size (shaded), and
# mean ± the binomial SD of {eq}`eq-rerun-binomial-sd` (dashed).
# ```
#
# {numref}`fig-rerun-spread` shows the band narrowing as the test set grows.
#
# ## Reading the result
#
# If the only source of variation were the choice of test cases, the accuracy $\hat p$ on $n$ held-out cases
# would be a binomial proportion: with mean performance $p$ on $n$ items its variance is $p(1-p)/n$, the naive
# binomial model of {cite:t}`mendelson2015eve` (Section 3.2), so its standard deviation is
#
# $$
# \operatorname{SD}(\hat p) = \sqrt{\frac{p\,(1-p)}{n}}.
# $$ (eq-rerun-binomial-sd)
#
# It assumes that the results on the $n$ cases are independent Bernoulli trials and that the classifier is fixed;
# the table evaluates it at the mean accuracy over the repeats. Implemented (as the variance) by
# {func}`medeval.metrics.variance.naive_binomial_variance`.
#
# The numbers in the next paragraph are read from the recorded outputs, not typed by hand.

# %% tags=["hide-input"]
small, large = summary.iloc[0], summary.iloc[-1]
ratio = notebook.record("sd_ratio_smallest_to_largest", float(small["std"] / large["std"]))
display(Markdown(
    f"With {int(small['test_size'])} held-out cases the accuracy varies with an SD of {small['std']:.3f}; with "
    f"{int(large['test_size'])} it is {large['std']:.3f}, {ratio:.1f} times smaller "
    f"(the binomial model predicts a factor of {np.sqrt(large['test_size'] / small['test_size']):.1f} from the "
    f"test-set sizes alone). The binomial model predicts {small['binomial_sd']:.3f} and "
    f"{large['binomial_sd']:.3f}: it ignores the variance that comes from the training set, which changes with "
    "every split."
))

# %% [markdown]
# Each split also draws a new training set, so the repeats vary with the classifier as well as with the test
# cases. {ref}`ch-eve` measures that total variance with the empirical variance estimator {eq}`eq-eve-eve`
# and shows that independence-based models such as {eq}`eq-rerun-binomial-sd` can underestimate it.
#
# ## Check
#
# This page reproduces no paper, so it has no claims; its one check (a variance-ratio test on the recorded runs,
# {func}`medeval.experiments.rerun_demo.shrinkage_check`) does not count in the scorecard.

# %% tags=["hide-input"]
notebook.checks_display(notebook.record_checks([rerun_demo.shrinkage_check(runs)]))

# %% [markdown]
# ## Try it
#
# - Re-run with `--set n_repeats=200`: does the SD curve get smoother, and does it move?
# - Add a test-set size of 400 and compare its SD with the binomial prediction.
# - Start a Dask cluster (`dask scheduler` and `dask worker tcp://HOST:8786`) and pass
#   `--set scheduler=tcp://HOST:8786`.
#
# ## Provenance

# %% tags=["remove-input"]
notebook.provenance()
