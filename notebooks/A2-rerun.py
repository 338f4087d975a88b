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
# # Re-executing a chapter with new parameters
#
# Every page of this book is a parametrised notebook. This page is a small, real experiment that shows how to
# re-run a page with other parameters, and what the runtime records when it does.
#
# **The experiment.** How much does a hold-out accuracy estimate vary with the size of the test set? On
# scikit-learn's breast-cancer data (WDBC, 569 cases: 212 malignant, 357 benign) we draw `n_repeats` random
# stratified hold-out splits per test-set size, fit a logistic regression on the rest, and record the accuracy
# on the held-out cases. This is the question chapter 3 answers properly; here it only drives the pipeline.
#
# **Time to run:** the table below the parameters gives the last recorded wall time of each profile.
#
# ## Parameters
#
# The cell below declares the parameters (hidden in the book). `None` means "take the profile's value"; the
# profiles live in `params/A2-rerun.yaml` and the schema, with ranges and help, in
# `medeval.experiments.rerun_demo.Params`. Three equivalent ways to change a value:
#
# ```bash
# medeval run A2-rerun --set n_repeats=100 --set "test_sizes=[10, 50, 250]"
# papermill -p n_repeats 100 notebook.ipynb out.ipynb     # after: jupytext --to ipynb notebooks/A2-rerun.py
# medeval params A2-rerun                                  # print the schema
# ```

# %% tags=["parameters", "remove-cell"]
profile = "default"
seed = None
device = None
scheduler = None
max_workers = None
test_sizes = None
n_repeats = None
regularisation_c = None

# %%
from IPython.display import Markdown, display

from medeval import plots
from medeval.experiments import rerun_demo
from medeval.runtime import notebook
from medeval.runtime.grid import run_grid

P = notebook.setup("A2-rerun", globals())
P

# %%
notebook.time_to_run_table()

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
runs = run_grid(rerun_demo.holdout_accuracy, rerun_demo.grid(P), cache_dir=notebook.cache_dir("holdout"),
                scheduler=P.scheduler, max_workers=P.max_workers)
summary = rerun_demo.summarise(runs)
notebook.record_table("accuracy_by_test_size", summary)
summary

# %%
fig, (ax,) = plots.new_axes()
plots.curve_with_band(ax, summary["test_size"], summary["mean"], summary["mean"] - summary["std"],
                      summary["mean"] + summary["std"], label="mean ± SD over repeats", marker="o")
ax.set_xscale("log")
ax.set_xlabel("test-set size")
ax.set_ylabel("hold-out accuracy")
ax.legend()
ax.set_title("Spread of a hold-out accuracy estimate")

# %% [markdown]
# ## Reading the result
#
# If the only source of variation were the choice of test cases, the accuracy $\hat p$ on $n$ held-out cases
# would be a binomial proportion with standard deviation
#
# $$ \operatorname{SD}(\hat p) = \sqrt{\frac{p\,(1-p)}{n}}. $$
#
# The numbers in the next cell are read from the recorded outputs, not typed by hand.

# %%
small, large = summary.iloc[0], summary.iloc[-1]
ratio = notebook.record("sd_ratio_smallest_to_largest", float(small["std"] / large["std"]))
display(Markdown(
    f"With {int(small['test_size'])} held-out cases the accuracy varies with an SD of {small['std']:.3f}; with "
    f"{int(large['test_size'])} it is {large['std']:.3f}, {ratio:.1f} times smaller. The binomial model "
    f"$\\sqrt{{p(1-p)/n}}$ predicts {small['binomial_sd']:.3f} and {large['binomial_sd']:.3f}: it ignores the "
    "variance that comes from the training set, which chapter 3 measures with the empirical variance estimator."
))

# %% [markdown]
# ## Check
#
# This page reproduces no paper, so it has no claims; its one check (a variance-ratio test on the recorded runs,
# `medeval.experiments.rerun_demo.shrinkage_check`) does not count in the scorecard.

# %%
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

# %%
notebook.provenance()
