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
# (app-rerun)=
# # Appendix B. Re-executing a chapter with new parameters
#
# Every page of this book is a parametrised notebook. This page is a small, real experiment that shows how to
# re-run a page with other parameters, and what the runtime records when it does.
#
# **The experiment.** How much does a hold-out accuracy estimate vary with the size of the test set? On the
# Wisconsin diagnostic breast-cancer data {cite:p}`street1995wdbc` (WDBC, 569 cases: 212 malignant, 357 benign,
# as bundled with scikit-learn {cite:p}`pedregosa2011sklearn`) we draw `n_repeats` random stratified hold-out
# splits per test-set size, fit a logistic regression on the rest, and record the accuracy on the held-out
# cases. The chapter {numref}`Chapter %s <ch-eve>` answers this question properly {cite:p}`mendelson2014eve`; here it only
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
# hold-out estimate of accuracy is; the variance of such estimates is the subject of {numref}`Chapter %s <ch-eve>`.
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
# {class}`medeval.experiments.rerun_demo_params.Params`. Three equivalent ways to change a value:
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
# A value outside its range, or a list with a repeated entry, is refused before anything runs, with the
# parameter's name and what it allows (every problem at once):

# %%
from medeval.runtime.params import ParameterError, resolve_params

try:
    resolve_params("A2-rerun", "default", {"n_repeats": 1, "test_sizes": [20, 20, 80]})
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
                      summary["mean"] + summary["std"], limits=(0, 1), label="mean ± SD over repeats", color=acc,
                      marker="o")
for sign in (-1, 1):
    ax.plot(summary["test_size"], summary["mean"] + sign * summary["binomial_sd"], color=binom, linestyle="--",
            label="mean ± binomial SD" if sign > 0 else None)
ax.set_xscale("log")
ax.set_xticks(summary["test_size"], [str(int(n)) for n in summary["test_size"]])
ax.minorticks_off()
ax.set_xlabel("test-set size (cases held out)")
ax.set_ylabel("hold-out accuracy")
fig.legend(loc="outside lower center", ncols=2, frameon=False)
first, last = summary.iloc[0], summary.iloc[-1]
change = ("narrows" if last["std"] < first["std"] else "widens" if last["std"] > first["std"] else "keeps its width")
above = int((summary["std"] > summary["binomial_sd"]).sum())
below = int((summary["std"] < summary["binomial_sd"]).sum())
versus = ("above the binomial SD at every test-set size" if above == len(summary) else
          "below the binomial SD at every test-set size" if below == len(summary) else
          f"above the binomial SD at {above} of the {len(summary)} test-set sizes")
plots.glue_figure("fig-rerun-spread", fig, takeaway=(
    f"From {int(first['test_size'])} to {int(last['test_size'])} held-out cases the band {change}: the SD over "
    f"{int(first['count'])} repeats goes from {first['std']:#.2g} to {last['std']:#.2g}; it is {versus}."
    if len(summary) > 1 else
    f"With {int(first['test_size'])} held-out cases the SD over {int(first['count'])} repeats is "
    f"{first['std']:#.2g}; it is {versus.removesuffix(' at every test-set size')}."))

# %% [markdown]
# ```{glue:figure} fig-rerun-spread
# :name: fig-rerun-spread
# :alt: Line plot of the mean hold-out accuracy against the test-set size on a log axis, with a shaded band of plus or minus one standard deviation over the repeats that narrows as the test set grows, and dashed lines at plus or minus the binomial standard deviation.
#
# Spread of a hold-out accuracy estimate on WDBC: mean ± SD over the repeats for each test-set size (shaded), and
# mean ± the binomial SD of {eq}`eq-rerun-binomial-sd` (dashed). {glue:md}`fig-rerun-spread-takeaway:myst`
# ```
#
# (rerun-reading)=
# ## Reading the result
#
# If the only source of variation were the choice of test cases, the accuracy $\hat p$ on $n$ held-out cases
# would be a binomial proportion: with mean performance $p$ on $n$ items its variance is $p(1-p)/n$, the naive
# binomial model of {cite:t}`mendelson2014eve` (Section 3.2), so its standard deviation is
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
    f"{large['binomial_sd']:.3f}: "
    + ("below what the repeats measured at both sizes, as a model that ignores the variance of the training set "
       "(which changes with every split) would be." if small["std"] > small["binomial_sd"] and
       large["std"] > large["binomial_sd"] else
       "not below what the repeats measured at every size, so this run does not show the training set's share of "
       "the variance; the next paragraph says where it is measured.")
))

# %% [markdown]
# Each split also draws a new training set, so the repeats vary with the classifier as well as with the test
# cases. {numref}`Chapter %s <ch-eve>` measures that total variance with the {term}`empirical variance estimator <EVE>` {eq}`eq-eve-eve`;
# the paper behind it argues that independence-based models such as {eq}`eq-rerun-binomial-sd` can underestimate
# it, and that chapter's rows test the claim.
#
# (rerun-check)=
# ## Check
#
# This page reproduces no paper, so it has no claims; its one check (a variance-ratio test on the recorded runs,
# {func}`medeval.experiments.rerun_demo.shrinkage_check`) does not count in the scorecard.

# %% tags=["hide-input"]
notebook.checks_display(notebook.record_checks([rerun_demo.shrinkage_check(runs)]))

# %% [markdown]
# ## Self-check
#
# Five quick questions on this page; each answer explains itself.

# %% tags=["remove-input"]
notebook.self_check()

# %% [markdown]
# ## Exercises
#
# The student version of this page (`medeval student A2-rerun`) has the same exercises with the solutions
# removed; `medeval grade` runs the checks.

# %% tags=["exercise-setup"]
import numpy as np

from medeval.experiments import rerun_demo
from medeval.metrics.variance import naive_binomial_variance

# %% [markdown]
# ```{exercise} What a parameter change re-computes
# :label: ex-rerun-hand
# :class: by-hand
#
# The default run of this page has seed 0, `test_sizes = [20, 40, 80, 160]`, `n_repeats = 20` and
# `regularisation_c = 1`. Each run is one call `holdout_accuracy(test_size, repeat, seed, regularisation_c)`
# and is cached under a key made of the function, these keyword arguments and the code digest; its test set is
# drawn with the random state `SeedSequence([seed, test_size, repeat])`. Starting from a cache that holds the
# default run, count by hand:
#
# 1. the number of runs of the default grid; store it in `ex_hand_n_runs`;
# 2. the runs computed anew by `--set "test_sizes=[20, 40, 80, 160, 320]"`; store it in `ex_hand_new_test_size`;
# 3. the runs computed anew by `--set n_repeats=30`; store it in `ex_hand_new_repeats`;
# 4. the runs computed anew by `--set seed=1`; store it in `ex_hand_new_seed`;
# 5. the runs computed anew by `--set max_workers=1`; store it in `ex_hand_new_workers`.
#
# All five are integers. Finally, the default run's row for 160 test cases has mean accuracy 0.975: compute its
# binomial SD, {eq}`eq-rerun-binomial-sd`, and store it in `ex_hand_binomial_sd` (a float).
# ```

# %% [markdown]
# ```{solution-start} ex-rerun-hand
# :class: dropdown
# ```
# 1. One run per (test-set size, repeat): $4 \times 20 = 80$.
# 2. The four old sizes keep their keys; only the new size 320 needs its 20 repeats: 20.
# 3. Repeats 0 to 19 keep their keys (and their splits, because the random state depends only on seed, size and
#    repeat, not on how many repeats there are); repeats 20 to 29 are new at each of the 4 sizes: 40.
# 4. The seed is an argument of every run and changes every split: all 80.
# 5. `max_workers` says where the runs execute, not what they compute; it is not an argument of a run: 0.
#
# Binomial SD: $\sqrt{0.975 \times 0.025 / 160} = \sqrt{1.523 \times 10^{-4}} = 0.0123$.

# %% tags=["solution"]
ex_hand_n_runs = 80
ex_hand_new_test_size = 20
ex_hand_new_repeats = 40
ex_hand_new_seed = 80
ex_hand_new_workers = 0
ex_hand_binomial_sd = 0.0123

# %% tags=["remove-cell", "check"]
from medeval.runtime.grid import run_key

ex_keys = {run_key(rerun_demo.holdout_accuracy, kw) for kw in rerun_demo.grid(rerun_demo.Params())}
assert ex_hand_n_runs == len(rerun_demo.grid(rerun_demo.Params())), \
    "ex_hand_n_runs: one run per test-set size and repeat"
assert ex_hand_new_test_size == len(
    {run_key(rerun_demo.holdout_accuracy, kw)
     for kw in rerun_demo.grid(rerun_demo.Params(test_sizes=[20, 40, 80, 160, 320]))} - ex_keys), \
    "ex_hand_new_test_size: which (size, repeat) pairs are not in the cache yet?"
assert ex_hand_new_repeats == len(
    {run_key(rerun_demo.holdout_accuracy, kw) for kw in rerun_demo.grid(rerun_demo.Params(n_repeats=30))}
    - ex_keys), "ex_hand_new_repeats: repeats 0-19 are cached at every size; count the others"

# %% tags=["remove-cell", "check"]
from medeval.runtime.grid import run_key

ex_keys = {run_key(rerun_demo.holdout_accuracy, kw) for kw in rerun_demo.grid(rerun_demo.Params())}
assert ex_hand_new_seed == len(
    {run_key(rerun_demo.holdout_accuracy, kw) for kw in rerun_demo.grid(rerun_demo.Params(seed=1))} - ex_keys), \
    "ex_hand_new_seed: is the seed one of a run's keyword arguments?"
assert ex_hand_new_workers == len(
    {run_key(rerun_demo.holdout_accuracy, kw) for kw in rerun_demo.grid(rerun_demo.Params(max_workers=1))}
    - ex_keys), "ex_hand_new_workers: is max_workers one of a run's keyword arguments?"
assert np.isclose(ex_hand_binomial_sd, np.sqrt(naive_binomial_variance(0.975, 160)), rtol=0.01), \
    "ex_hand_binomial_sd: sqrt(p (1 - p) / n) with p = 0.975 and n = 160"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} The summary table, in numpy
# :label: ex-rerun-code
# :class: coding
#
# Write `ex_code_summarise(test_size, accuracy)`, the numpy version of the page's summary table
# ({func}`medeval.experiments.rerun_demo.summarise`). It takes two 1-D arrays of equal length, one entry per
# run, and returns a float array of shape `(m, 4)` with one row per distinct test-set size, sizes in increasing
# order: `(test_size, mean, sd, binomial_sd)`, where `sd` is the SD over the runs of that size with $n - 1$ in
# the denominator (NaN for a single run) and `binomial_sd` is {eq}`eq-rerun-binomial-sd` at the mean.
# ```

# %% [markdown]
# ```{solution-start} ex-rerun-code
# :class: dropdown
# ```
# Group by the distinct sizes (`np.unique` sorts them), then mean, the sample SD (`ddof=1`) and the binomial SD
# at the mean. A single run has no spread to estimate: its SD is NaN, as in pandas. At the ceiling (every run
# 100 % correct) both SDs are 0, which the binomial formula gives by itself.

# %% tags=["solution"]
def ex_code_summarise(test_size, accuracy):
    """Per test-set size: (test_size, mean, sd, binomial_sd), one row per distinct size in increasing order.

    test_size, accuracy: 1-D arrays, one entry per run. sd uses ddof = 1 (NaN for a single run);
    binomial_sd = sqrt(mean (1 - mean) / test_size). Returns a float array of shape (m, 4).
    """
    n = np.asarray(test_size)
    a = np.asarray(accuracy, dtype=float)
    rows = []
    for size in np.unique(n):
        x = a[n == size]
        mean = x.mean()
        sd = x.std(ddof=1) if len(x) > 1 else np.nan
        rows.append((size, mean, sd, np.sqrt(mean * (1 - mean) / size)))
    return np.array(rows, dtype=float)


# %% tags=["remove-cell", "check"]
ex_rng = np.random.default_rng(4)
ex_sizes = ex_rng.permutation(np.repeat([80, 20, 40], 6))
ex_acc = ex_rng.binomial(ex_sizes, 0.9) / ex_sizes
ex_runs = [{"test_size": int(n), "repeat": i, "accuracy": float(a)}
           for i, (n, a) in enumerate(zip(ex_sizes, ex_acc, strict=True))]
ex_want = rerun_demo.summarise(ex_runs)[["test_size", "mean", "std", "binomial_sd"]].to_numpy(float)
ex_got = np.asarray(ex_code_summarise(ex_sizes, ex_acc), dtype=float)
assert ex_got.shape == ex_want.shape, f"expected shape {ex_want.shape} (one row per size), got {ex_got.shape}"
assert np.allclose(ex_got, ex_want), \
    "rows differ from rerun_demo.summarise: sizes in increasing order? SD with ddof = 1? binomial SD at the mean?"

# %% tags=["remove-cell", "check"]
# edge cases: a single run (SD undefined) and a size at the ceiling (every run 100 % correct)
ex_runs = [{"test_size": 10, "repeat": 0, "accuracy": 0.7},
           {"test_size": 50, "repeat": 0, "accuracy": 1.0}, {"test_size": 50, "repeat": 1, "accuracy": 1.0}]
ex_want = rerun_demo.summarise(ex_runs)[["test_size", "mean", "std", "binomial_sd"]].to_numpy(float)
ex_got = np.asarray(ex_code_summarise([10, 50, 50], [0.7, 1.0, 1.0]), dtype=float)
assert ex_got.shape == ex_want.shape, f"expected shape {ex_want.shape}, got {ex_got.shape}"
assert np.allclose(ex_got, ex_want, equal_nan=True), \
    "edge cases: the SD of a single run is NaN, and at 100 % accuracy both SDs are 0"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} What changed between two runs?
# :label: ex-rerun-code-2
# :class: coding
#
# Each run of a page writes its recorded numbers to the `results.json` of its run folder. Write
# `ex_code_compare(old, new, rtol=0.05)`, which compares two such dicts. Only top-level values that are numbers
# (`int` or `float`, not `bool`) in both dicts are compared. It returns a dict with three sorted lists of keys:
#
# - `"changed"`: keys whose values differ by more than `rtol` relative to the old value, that is
#   `not np.isclose(new[k], old[k], rtol=rtol, atol=0)`; two NaNs count as equal, NaN against a number as changed;
# - `"only_old"` and `"only_new"`: keys (with values of any type) present in one dict only.
# ```

# %% [markdown]
# ```{solution-start} ex-rerun-code-2
# :class: dropdown
# ```
# A purely relative tolerance (`atol=0`) means that any change from an old value of 0 counts; `equal_nan=True`
# makes two undefined values (a metric that was NaN in both runs) agree. `bool` is a subclass of `int` in Python,
# so it must be excluded explicitly.

# %% tags=["solution"]
def ex_code_compare(old, new, rtol=0.05):
    """Compare the top-level numbers of two results dicts.

    Returns {"changed": [...], "only_old": [...], "only_new": [...]}, each a sorted list of keys; "changed" holds
    the keys numeric (int or float, not bool) in both dicts with not np.isclose(new, old, rtol=rtol, atol=0),
    two NaNs counting as equal.
    """
    def is_number(value):
        return isinstance(value, int | float) and not isinstance(value, bool)

    changed = [k for k in old.keys() & new.keys()
               if is_number(old[k]) and is_number(new[k])
               and not np.isclose(new[k], old[k], rtol=rtol, atol=0, equal_nan=True)]
    return {"changed": sorted(changed), "only_old": sorted(old.keys() - new.keys()),
            "only_new": sorted(new.keys() - old.keys())}


# %% tags=["remove-cell", "check"]
# two runs of the Data page: the smoke profile against a run with ten times more label sets
ex_old = {"max_abs_z": 1.83, "max_abs_frequency_difference": 0.0089, "frequency_correlation": 0.9972,
          "n_phantom": 2000, "n_datasets": 12, "profile": "smoke", "top_pairs": [{"pair": "a + b"}]}
ex_new = {"max_abs_z": 1.80, "max_abs_frequency_difference": 0.0043, "frequency_correlation": 0.9996,
          "n_phantom": 20000, "n_datasets": 12, "profile": "default", "cooccurrence_correlation": 0.998}
ex_got = ex_code_compare(ex_old, ex_new)
assert isinstance(ex_got, dict), "ex_code_compare must return a dict with keys changed, only_old, only_new"
assert list(ex_got.get("changed", [])) == ["max_abs_frequency_difference", "n_phantom"], \
    "changed: the keys numeric in both dicts whose values differ beyond rtol (atol = 0), sorted"
assert list(ex_got.get("only_old", [])) == ["top_pairs"] and list(ex_got.get("only_new", [])) == [
    "cooccurrence_correlation"], "only_old / only_new: keys of any type that are in one dict only, sorted"

# %% tags=["remove-cell", "check"]
# edge cases: an old value of 0, NaN in both or in one, bools, an int against an equal float, rtol
ex_old = {"zero": 0.0, "both_nan": float("nan"), "one_nan": float("nan"), "flag": True, "count": 3,
          "near": 1.0}
ex_new = {"zero": 1e-9, "both_nan": float("nan"), "one_nan": 0.5, "flag": False, "count": 3.0, "near": 1.04}
assert list(ex_code_compare(ex_old, ex_new)["changed"]) == ["one_nan", "zero"], \
    "edge cases: 0 -> 1e-9 is a change (atol = 0), NaN = NaN, NaN -> 0.5 is a change, bools are not compared"
assert list(ex_code_compare(ex_old, ex_new, rtol=0.01)["changed"]) == ["near", "one_nan", "zero"], \
    "rtol must be the relative tolerance: 1.0 -> 1.04 changes by 4 %"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} How much does the SD itself move with the seed?
# :label: ex-rerun-experiment
# :class: experimental
#
# The page's table comes from one seed. Re-run a small piece of it with other seeds: for seeds 0, 1, 2 and 3 and
# test-set sizes 20 and 160, compute the SD (with `ddof=1`) of the hold-out accuracy over 20 repeats, each run
# being `rerun_demo.holdout_accuracy(test_size, repeat, seed, 1.0)` for `repeat` in 0 to 19. Write the helper
# `ex_exp_holdout_sd(seed, test_size, n_repeats=20)` and store a `(4, 2)` array `ex_exp_sd` (rows: seeds 0 to
# 3; columns: sizes 20 and 160). Store also `ex_exp_relative_spread`, per column the largest minus the smallest
# SD over the seeds divided by their mean (2 floats).
#
# Interpret: how much does the SD estimate move between seeds, compared with the rough relative standard error
# $1/\sqrt{2(R-1)}$ of an SD from $R = 20$ repeats? Does the SD shrink from 20 to 160 cases for every seed, and by
# how much compared with the binomial factor $\sqrt 8$? What does this say about reading the page's table from a
# single seed?
# ```

# %% [markdown]
# ```{solution-start} ex-rerun-experiment
# :class: dropdown
# ```
# The SD at 20 cases lies between about 0.022 and 0.026 over the four seeds, and at 160 cases between about 0.010
# and 0.013: relative spreads (max - min over mean) of about 0.16 and 0.24. With $R = 20$ the relative standard
# error of an SD is about $1/\sqrt{38} = 0.16$, so four seeds spread over one to one and a half of those, as
# expected from sampling alone: the second significant digit of the page's SD column is not reproducible across
# seeds. The SD shrinks from 20 to 160 cases for every seed, by factors of about 1.9 to 2.4: all four below the
# binomial $\sqrt 8 = 2.83$, but each ratio of two SDs from 20 repeats is itself uncertain by about a quarter.
# Candidates for a real shortfall: near 98 % accuracy 20 cases allow only a few error counts (0, 1, 2), so the
# binomial SD describes them poorly, and at 160 cases the smaller training set (409 instead of 549 cases) adds
# variance of its own. A single-seed table shows the trend, but its individual SDs (and their comparison with the
# binomial SD) carry errors of 15–25 %; more repeats (`--set n_repeats=200`) or several seeds are needed before
# reading differences of that size.

# %% tags=["solution"]
def ex_exp_holdout_sd(seed, test_size, n_repeats=20):
    """SD (ddof = 1) of the hold-out accuracy over repeats 0 .. n_repeats - 1 at one seed and test-set size."""
    accuracy = [rerun_demo.holdout_accuracy(test_size, repeat, seed, 1.0)["accuracy"]
                for repeat in range(n_repeats)]
    return float(np.std(accuracy, ddof=1))


ex_exp_sd = np.array([[ex_exp_holdout_sd(seed, size) for size in (20, 160)] for seed in (0, 1, 2, 3)])
ex_exp_relative_spread = np.ptp(ex_exp_sd, axis=0) / ex_exp_sd.mean(axis=0)

# %% tags=["remove-cell", "check"]
assert np.shape(ex_exp_sd) == (4, 2), \
    f"ex_exp_sd must have shape (4, 2) (seeds 0-3 x sizes 20, 160), got {np.shape(ex_exp_sd)}"
ex_acc = [rerun_demo.holdout_accuracy(160, r, 2, 1.0)["accuracy"] for r in range(20)]
assert np.isclose(np.asarray(ex_exp_sd, dtype=float)[2, 1], np.std(ex_acc, ddof=1)), \
    "ex_exp_sd[2, 1] is not the SD (ddof = 1) over repeats 0-19 of seed 2 with 160 test cases"
assert np.all(np.asarray(ex_exp_sd, dtype=float) > 0), "an SD over 20 random splits should be positive"

# %% tags=["remove-cell", "check"]
assert np.shape(ex_exp_relative_spread) == (2,), "ex_exp_relative_spread must hold one value per test-set size"
assert np.allclose(ex_exp_relative_spread, np.ptp(np.asarray(ex_exp_sd, dtype=float), axis=0)
                   / np.asarray(ex_exp_sd, dtype=float).mean(axis=0)), \
    "ex_exp_relative_spread: (largest - smallest SD over the seeds) / mean SD, per column"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Does the binomial model understate the spread here?
# :label: ex-rerun-critical
# :class: critical
#
# {ref}`rerun-reading` says that the binomial model "ignores the variance that comes from the training set",
# and points to {numref}`Chapter %s <ch-eve>`, whose paper finds independence-based variance models below the empirical
# variance. This page reproduces no paper, so it has no Paper-vs-us table; use the summary table,
# {numref}`fig-rerun-spread` and the check of {ref}`rerun-check` instead (and, if you like, your result of the
# previous exercise). Judge the implied claim "on this page the binomial SD understates the spread of a hold-out
# accuracy":
#
# 1. At which test-set sizes is the SD over repeats above the binomial SD, and at which below? Is any of these
#    differences larger than the uncertainty of an SD estimated from the page's number of repeats?
# 2. Name two features of the design that pull the observed spread *below* the binomial value, and one that
#    pushes it above. (The section "Is 'naive < EVE' a law?" of {numref}`Chapter %s <ch-eve>` names some.)
# 3. The page's check passes an F-test that the SD shrinks. What does that test assume, and does passing it
#    support the binomial model?
# ```

# %% [markdown]
# ```{solution-start} ex-rerun-critical
# :class: dropdown
# ```
# A good answer makes points like these.
#
# 1. In the default run the SD over repeats is *below* the binomial SD at 20 cases (0.025 against 0.031) and at
#    40 (0.024 against 0.024, equal), and slightly above it at 80 and 160 (0.016 against 0.014, 0.013 against
#    0.012). With 20 repeats an SD is uncertain by about 16 % (relative SE $1/\sqrt{2 \cdot 19}$), so none of these
#    differences is clearly outside the noise; the previous exercise shows the SDs moving by that much between
#    seeds. The data neither show that the binomial model understates the spread nor that it overstates it.
# 2. Below binomial: the splits are stratified (each test set has the class ratio of WDBC, which removes the
#    variation of the class mix); the test set is drawn without replacement from only 569 cases (finite-population
#    correction $(N - n)/(N - 1)$, about 0.72 in variance at $n = 160$); and near the ceiling accuracy takes only a
#    few values. Above binomial: a new training set per split, so the classifier itself changes (the variance that
#    EVE measures), and per-case difficulty that correlates with the training set. Which one wins depends on the
#    setting, which is the point of "Is 'naive < EVE' a law?".
# 3. The variance-ratio F-test assumes independent, normally distributed accuracies; they are discrete and bounded
#    near 1, and their training sets overlap heavily, so the p-value is approximate. Passing it shows only that the
#    spread shrinks with the test-set size, which every model predicts; it does not test the binomial *amount* of
#    spread. A fitting test would compare the observed variance with $p(1 - p)/n$ at each size, with enough
#    repeats (hundreds) to resolve differences of 10–20 %.

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ## Try it
#
# - Re-run with `--set n_repeats=200`: does the SD curve get smoother, and does it move? Each execution is kept as
#   a run of its own (this page, the profile's own run, is never replaced): `medeval runs A2-rerun` lists them,
#   and `medeval compare RUN_A RUN_B` prints the parameters that differ and every recorded number side by side
#   with its difference (`--markdown` / `--html` write the report to a file); `medeval book --runs RUN_A RUN_B`
#   adds both runs to this book as pages of a *Re-runs* part.
# - Add a test-set size of 400 and compare its SD with the binomial prediction.
# - Start a Dask cluster (`dask scheduler` and `dask worker tcp://HOST:8786`) and pass
#   `--set scheduler=tcp://HOST:8786`.
#
# ## Provenance

# %% tags=["remove-input"]
notebook.provenance()
