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
# (ch-eve)=
# # The empirical variance estimator for validating CAD classifiers
#
# {cite:t}`mendelson2014eve` ask how uncertain a cross-validated performance is. Naive variance estimates assume
# independence, either of the test subjects (a binomial model) or of the {term}`cross-validation <CV>` (CV) folds, and so
# ignore training-set variability and the correlations between folds. Following {cite:t}`nadeau2003inference`,
# the paper proposes the **{term}`empirical variance estimator <EVE>` (EVE)**: run the whole {term}`validation strategy` on the two
# halves of each of R pairs of disjoint random subsets, and average the two-sample variances ({eq}`eq-eve-eve`).
# EVE is unbiased for the variance at the subset size, half of it is unbiased for the mean of the two halves, and
# it is conservative for the full sample. The paper supports this with resampling experiments on ADNI
# {cite:p}`jack2008adni` (Alzheimer's disease against healthy controls, a hard-margin linear SVM, LIBSVM's
# balanced CV {cite:p}`chang2011libsvm`), and uses EVE to compare validation strategies by bias, variance and
# mean squared error.
#
# ## Key findings
#
# Generated from this page's Paper-vs-us rows when the page was built; each claim links to its row.
#
# ```{glue:md} key-findings
# :format: myst
# ```
#
# ## What you will learn
#
# - Compute EVE from disjoint subset pairs and explain why it is unbiased where naive estimates are not.
# - Show how the binomial and fold-wise variance models, and the naive empirical estimate on overlapping subsets,
#   understate the variance of a cross-validated performance.
# - Build a confidence interval and a paired z-test for two learners on EVE.
# - Compare validation strategies (K-fold, repeated K-fold, {term}`leave-one-out <LOO>`) by bias, variance and {term}`MSE`.
# - Check a variance estimator against a known truth with a synthetic data-generating model.
#
# ## What we reproduce
#
# Every claim is decided by a stated rule in `medeval.experiments.eve_claims`; the table *Paper vs us* lists them
# with their statistics.
#
# 1. *Drawstring* (Sec. 3.1, Fig. 1): E[EVE] stays flat in the parent size P, E[{term}`NEVE`] is pulled down by the
#    finite parent and converges to EVE as P grows; the same for {term}`sensitivity <TPR>`, specificity and AUC.
# 2. *Characterization* (Sec. 3.2, Fig. 2): accuracy rises and variance falls with the subset size; NEVE's
#    negative bias grows with the subsets' share of the pool; the binomial and fold-wise models fall below EVE.
# 3. *Validation strategies* (Sec. 3.3, Fig. 3): 3-fold CV is biased down; repetition reduces the variance;
#    the repeated strategies have the lowest MSE, particularly at small sizes; LOO is not the best estimator
#    of its own expectation and has a high variance.
# 4. *Unbiasedness and inference*, tested against a known truth (the paper could only argue them): EVE and
#    {term}`½EVE` are unbiased for any metric, EVE is conservative for the full sample, its intervals cover and its
#    paired test holds its level, while binomial intervals undercover.
#
# ## Prerequisites
#
# - Cross-validation (K-fold, repeated K-fold, leave-one-out) and what a CV performance estimate is.
# - Bias, variance and mean squared error of an estimator; the sample variance; normal-theory confidence
#   intervals and z-tests.
# - The performance measures used here: accuracy, sensitivity, specificity and the {term}`ROC-AUC` (see {numref}`Chapter %s <ch-em>` and
#   {eq}`eq-em-roc-auc`). The last section applies EVE to the multi-label macro-AUC of {numref}`Chapter %s <ch-ml>`.
#
# ## Time to run
#
# The last measured run of each profile:

# %% tags=["parameters", "remove-cell"]
profile = "default"
seed = None
device = None
scheduler = None
max_workers = None
dataset = None
adni_csv = None
effect_size = None
n_features = None
classifier = None
engine = None
svm_c = None
svm_tol = None
hard_margin_factor = None
metric = None
n_splits = None
drawstring_parent_sizes = None
drawstring_subset_size = None
drawstring_n_parents = None
drawstring_n_pairs = None
characterization_sizes = None
characterization_n_pairs = None
characterization_n_pairs_small = None
strategy_sizes = None
strategy_n_pairs = None
strategies = None
truth_sizes = None
truth_n_pools = None
truth_pairs_per_pool = None
truth_n_draws = None
truth_null_pairs = None
n_bootstrap = None
setting_sizes = None
setting_n_pairs = None
comparison_size = None
comparison_n_pairs = None
bridge_n_pairs = None
bridge_size = None

# %% tags=["remove-input"]
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from medeval import plots
from medeval.core.claims import verdict_counts
from medeval.experiments import eve, eve_claims
from medeval.runtime import notebook
from medeval.runtime.params import resolve_params

P = notebook.setup("03-eve", globals())
METRICS = ("accuracy", "sensitivity", "specificity", "auc")
METRIC_NAMES = {"accuracy": "accuracy", "sensitivity": "sensitivity", "specificity": "specificity", "auc": "AUC"}


def strategy_style(name: str, i: int) -> dict:
    """The book-wide colour and line style of a validation strategy; a strategy set with --set that has no colour
    gets the palette's."""
    try:
        return plots.style("strategy", name)
    except KeyError:
        return {**plots.FAMILY_STYLES["strategy"], "color": plots.PALETTE[i % len(plots.PALETTE)]}


def pct(x: float, sign: str = "") -> str:
    """A percentage in a takeaway with 2–3 significant digits: +1.0, -14, +130."""
    return f"{x:{sign}.{1 if abs(x) < 10 else 0}f}"


def span(values, digits: int = 2) -> str:
    """'runs from a to b' over ``values`` (their minimum and maximum), or 'is a at every size' when they agree."""
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return f"is {lo} at every size" if lo == hi else f"runs from {lo} to {hi}"


# %% tags=["remove-input"]
notebook.time_to_run_table()

# %% [markdown]
# ## Parameters
#
# Change any of them with `medeval run 03-eve --set name=value` (see *Try it* at the end of the page).

# %% tags=["remove-input"]
notebook.parameters_table()

# %% [markdown]
# ## Data and classifier
#
# ADNI {cite:p}`jack2008adni` is access-restricted, so the `default` and `gpu` profiles use a **synthetic ADNI-like
# pool** (`medeval.data.phantoms.adni`). It has 370 HC and 252 AD subjects, like the paper's cohort, and
# `n_features` regional grey-matter fractions. A factor covariance (one global and six lobar factors) makes the
# regions strongly correlated, and an atrophy pattern concentrates the AD effect in medial-temporal regions. Its
# distribution is explicit, so the *true* variance of any strategy can be computed from fresh draws. The `full`
# profile reads your own ADNI CSV through `medeval.data.readers.read_regional_volumes`. We also use the Wisconsin
# diagnostic breast cancer table WDBC {cite:p}`street1995wdbc` (212 malignant / 357 benign, 30 features, as shipped
# with scikit-learn) as a small real CAD table. Features are z-scored; the paper does not say whether it
# standardised.

# %%
# every computation of the chapter (the pools, the grid of runs, and what the page shows and records from them)
results = eve.run(P, cache_dir=notebook.cache_dir("runs"))
pool = results.pool

# %% tags=["hide-input"]
notebook.record("pool", pool)
display(Markdown(
    f"Pool `{pool['dataset']}`: {pool['n_negative']} negatives (HC / benign), {pool['n_positive']} positives "
    f"(AD / malignant), {pool['n_features']} features."))

# %% [markdown]
# The classifier is a linear SVM with C large enough to be in the hard-margin limit. On the CPU every problem
# with at most d training points (all the small-sample work of this chapter) is solved exactly by a batched
# primal–dual active-set method ({func}`medeval.models.linear_svm.active_set_linear_svm`); larger problems go
# to scikit-learn's LIBSVM loop {cite:p}`chang2011libsvm,pedregosa2011sklearn`, and on a GPU our batched SMO
# (`medeval.models.batched_svm`) fits them all. The *Checks* table compares the engine with LIBSVM run to a
# tight tolerance. CV is LIBSVM's stratified K-fold: class c gives fold i its elements
# $[\lfloor i n_c/K\rfloor, \lfloor (i+1)n_c/K\rfloor)$ ({func}`medeval.data.splits.libsvm_fold_ids`). The
# paper checks the hard-margin limit by raising C until the solutions stop changing; we do the same (factor
# `hard_margin_factor`).
#
# (eve-method)=
# ## Method
#
# A *validation strategy* (10-fold CV, 10 × 10-fold CV, leave-one-out, ...) run on one subset of the data gives one
# performance estimate x. Every subset is balanced, with $n_c$ subjects of each class (the "subjects per class" or
# subset size of the figures), so it holds $2n_c$ subjects. For an M × K-fold strategy, each repeat m pools the
# held-out decisions of its K folds, so every subject is tested once, and the performance is the mean over repeats
# of a measure μ of the pooled decisions:
#
# $$
# \begin{aligned}
# x &= \frac{1}{M}\sum_{m=1}^{M}\mu_m,\\
# \mathrm{accuracy} &= \frac{TP+TN}{n_{+}+n_{-}},\qquad \mathrm{sensitivity} = \frac{TP}{n_{+}},\qquad
# \mathrm{specificity} = \frac{TN}{n_{-}},
# \end{aligned}
# $$ (eq-eve-performance)
#
# with $n_{+}$, $n_{-}$ the positives and negatives tested and TP, TN the correct decisions among them; the AUC is
# the Mann–Whitney statistic of the pooled decision values ({eq}`eq-em-roc-auc`). Leave-one-out is K = $2n_c$,
# M = 1. Implemented by {func}`medeval.experiments.eve.run_validation` with the measures of
# {func}`medeval.metrics.decision_values.decision_value_scores`.
#
# ### The empirical variance estimator
#
# Draw R pairs of disjoint subsets of the same size, run the strategy on
# both members of pair r to get $x_r^{(1)}$ and $x_r^{(2)}$, and average the unbiased two-sample variances (the
# paper's Sec. 2, Eq. 1):
#
# $$
# \begin{aligned}
# \mathcal{V} &= \frac{1}{R}\sum_{r=1}^{R}\left(\frac{1}{n-1}\sum_{i=1}^{n}\bigl(x_r^{(i)}-\bar{x}_r\bigr)^2\right),
# \quad \text{where } n = 2,\\
# &= \frac{1}{2R}\sum_{r=1}^{R}\bigl(x_r^{(1)}-x_r^{(2)}\bigr)^2 .
# \end{aligned}
# $$ (eq-eve-eve)
#
# The two members of a pair share no subject, so their scores are independent draws of the strategy's performance
# at that size, and each summand is an unbiased estimate of its variance; averaging over pairs only reduces the
# noise. Implemented by {func}`medeval.metrics.variance.empirical_variance_estimate` (each pair's summand by
# {func}`medeval.metrics.variance.pair_variances`).
#
# With N subjects available and subsets of ½N, the paper (Sec. 2) gives two uses of $\mathcal V$: scheme 1 reads
# it as a *conservative* estimate of the variance of CV on the full N (performance is more stable at larger
# sizes, {cite:p}`nadeau2003inference`); scheme 2 reads it as unbiased at ½N. As the two half-size estimates of a
# pair are independent with the same variance,
#
# $$
# \operatorname{E}\bigl[\tfrac12\,\mathcal{V}\bigr] = \operatorname{Var}\Bigl(\tfrac12\bigl(x^{(1)}+x^{(2)}\bigr)\Bigr) .
# $$ (eq-eve-half-eve)
#
# ½EVE is an unbiased estimate of the variance of the mean of two independent half-size estimates (scheme 2).
# Implemented by {func}`medeval.metrics.variance.empirical_variance_estimate` with `target="mean_of_halves"`
# (`target="full_size"` is scheme 1).
#
# ### Naive estimators (the paper's Sec. 3)
#
# The *naive empirical variance estimate* treats the performances
# $x_1,\dots,x_S$ on S randomly selected subsets, which may overlap, as independent:
#
# $$
# \mathrm{NEVE} = \frac{1}{S-1}\sum_{s=1}^{S}\bigl(x_s-\bar{x}\bigr)^2 .
# $$ (eq-eve-neve)
#
# Overlapping subsets have positively correlated scores, so NEVE is biased down when the subsets are a large share
# of the pool. Implemented by {func}`medeval.metrics.variance.naive_empirical_variance_estimate`.
#
# The *{term}`naive fold-wise model <NFW>`* treats the performances $a_{s,1},\dots,a_{s,K}$ in the K folds of subset s as
# independent observations, so the variance of their mean is $s^2(a_s)/K$, and the paper takes the mean over all
# subsets used:
#
# $$
# \mathrm{NFW} = \frac{1}{S}\sum_{s=1}^{S}\frac{1}{K(K-1)}\sum_{k=1}^{K}\bigl(a_{s,k}-\bar{a}_s\bigr)^2 .
# $$ (eq-eve-nfw)
#
# The paper states it in words only; this formula is our reading. Implemented by
# {func}`medeval.metrics.variance.naive_foldwise_variance`.
#
# The *{term}`naive binomial model`* (the paper's Sec. 3.2) assumes the results on the n test items are independent
# Bernoulli trials with the mean performance p as success probability:
#
# $$
# \mathrm{Var}_{\mathrm{bin}} = \frac{p(1-p)}{n} .
# $$ (eq-eve-binomial)
#
# A balanced subset with $n_c$ per class has $n = 2n_c$ items (the n here is the paper's, not the n = 2 of
# {eq}`eq-eve-eve`). Implemented by {func}`medeval.metrics.variance.naive_binomial_variance`.
#
# ### Inference with EVE
#
# The paper says an unbiased variance allows "confidence intervals" and "statistically
# convincing comparison" (abstract, Sec. 2) but writes no formula; we use the normal-theory forms of
# {cite:t}`nadeau2003inference`. The interval for the expected performance at the subset size is centred on the mean
# of all 2R scores and uses scheme 2:
#
# $$
# \bar{x} \pm z_{1-\alpha/2}\sqrt{\tfrac12\,\mathcal{V}},\qquad
# \bar{x} = \frac{1}{2R}\sum_{r=1}^{R}\bigl(x_r^{(1)}+x_r^{(2)}\bigr),
# $$ (eq-eve-ci)
#
# with $\sqrt{\mathcal V}$ in place of $\sqrt{\mathcal V/2}$ for a single run at the subset size or (conservatively)
# on the full N. Implemented by {func}`medeval.metrics.variance.eve_confidence_interval` (the interval itself by
# {func}`medeval.metrics.variance.normal_confidence_interval`).
#
# Two learners A and B validated on the **same** pairs and folds give paired differences
# $d_r^{(i)} = x_{A,r}^{(i)} - x_{B,r}^{(i)}$. The difference is itself a performance statistic, so
# {eq}`eq-eve-eve` applies to it, and the paired z-test is
#
# $$
# \mathcal{V}_d = \frac{1}{2R}\sum_{r=1}^{R}\bigl(d_r^{(1)}-d_r^{(2)}\bigr)^2,\qquad
# z = \frac{\bar{d}}{\sqrt{\mathcal{V}_d/2}},\qquad p = 2\bigl(1-\Phi(|z|)\bigr),
# $$ (eq-eve-paired)
#
# with $\bar d$ the mean of the 2R differences and Φ the standard normal distribution function; the interval of the
# difference is $\bar d \pm z_{1-\alpha/2}\sqrt{\mathcal V_d/2}$. Implemented by
# {func}`medeval.metrics.variance.paired_comparison`, which returns a
# {class}`medeval.metrics.variance.PairedComparison`.
#
# ### Comparing validation strategies (the paper's Sec. 3.3)
#
# Each strategy s is an estimator of the expected
# leave-one-out performance θ = E[$x_{\mathrm{LOO}}$]. All strategies run on the same R pairs, and under the paper's
# normality assumptions
#
# $$
# \mathrm{bias}_s = \bar{x}_s - \bar{x}_{\mathrm{LOO}},\qquad
# \mathrm{var}_s = \mathcal{V}_s,\qquad
# \mathrm{MSE}_s = \mathrm{var}_s + \mathrm{bias}_s^2 ,
# $$ (eq-eve-mse)
#
# with the means over the same 2R subsets and $\mathcal V_s$ the EVE of strategy s. Fig. 3 of the paper
# normalises "by those of the leave one out validation itself"; as LOO has no bias of its own we divide the bias by
# its SD (our reading):
#
# $$
# \frac{\sqrt{\mathcal{V}_s}}{\sqrt{\mathcal{V}_{\mathrm{LOO}}}},\qquad
# \frac{\mathrm{bias}_s}{\sqrt{\mathcal{V}_{\mathrm{LOO}}}},\qquad
# \frac{\mathrm{MSE}_s}{\mathcal{V}_{\mathrm{LOO}}} .
# $$ (eq-eve-ratios)
#
# Both are implemented by {func}`medeval.metrics.variance.strategy_bias_variance_mse`, which returns a
# {class}`medeval.metrics.variance.StrategyErrors`.
#
# ### The known truth (ours)
#
# On the synthetic pool the true variance $\sigma^2(n_c)$ of a strategy at size $n_c$
# is the sample variance of its scores $x_1,\dots,x_D$ on D subsets drawn fresh from the generating model, and
# EVE's relative bias compares the mean EVE of independent finite pools with it:
#
# $$
# \hat\sigma^2(n_c) = \frac{1}{D-1}\sum_{d=1}^{D}\bigl(x_d-\bar{x}\bigr)^2,\qquad
# \text{relative bias} = \frac{\overline{\mathcal{V}}}{\hat\sigma^2(n_c)} - 1 .
# $$ (eq-eve-truth)
#
# The true variance of the mean of two halves pairs consecutive draws in the same way, and ½EVE is compared with
# it. Implemented by {func}`medeval.experiments.eve.truth_summary` (the Monte Carlo error of
# $\hat\sigma^2$ by {func}`medeval.metrics.variance.sample_variance_standard_error`).

# %% [markdown] tags=["further"]
#
# ## The experiment grid and the hard-margin check
#
# All experiments of the chapter run as one grid of independent units (local processes or a Dask cluster), each
# cached, so an interrupted run resumes. The first unit repeats the paper's hard-margin check: does C ×
# `hard_margin_factor` change any held-out prediction?

# %%
hard_margin = results.hard_margin
band = results.quality_band

# %% tags=["hide-input"]
notebook.record_table("hard_margin", hard_margin)
notebook.record("hard_margin_in_limit", results.hard_margin_in_limit)
notebook.record("engine_check", results.engine_check)
notebook.record("quality_band", band)
display(Markdown(
    f"Hard-margin check (C = {P.svm_c:g} vs {P.svm_c * P.hard_margin_factor:g}): held-out predictions agree in "
    f"{100 * hard_margin['prediction_agreement'].min():.2f} % of cases at every size; "
    f"{int(hard_margin['n_unconverged'].sum())} fits hit the SVM iteration limit.\n\n"
    f"**Quality band.** The SVM's mean 10-fold CV accuracy where the claims use it lies between {band['min']:.3f} and "
    f"{band['max']:.3f} (" + ", ".join(f"{k}: {v:.3f}" for k, v in band["per_model"].items()) +
    f"); the chapter's floor is {band['floor']}, and the phantom's `effect_size` puts the task off the ceiling."))
notebook.show_table(
    hard_margin[["subset_size", "C", "C_larger", "prediction_agreement", "max_accuracy_change", "n_unconverged", "in_limit"]],
    caption="Hard-margin check: held-out predictions of the SVM at C and at a larger C, per subset size.",
    formats={"prediction_agreement": "{:.2%}", "C": "{:g}", "C_larger": "{:g}"},
    labels={"subset_size": "subjects per class", "C_larger": "larger C", "prediction_agreement": "agreement",
            "max_accuracy_change": "max. accuracy change", "n_unconverged": "unconverged fits",
            "in_limit": "in the limit"})

# %% [markdown]
# ## The drawstring experiment
#
# The paper's Sec. 3.1 and Fig. 1. From the pool we draw `drawstring_n_parents` parents with P subjects of each
# class. Within each parent we draw `drawstring_n_pairs` disjoint pairs of subsets (n = `drawstring_subset_size`
# per class, 10-fold CV on each): EVE ({eq}`eq-eve-eve`) comes from the pairs, NEVE ({eq}`eq-eve-neve`) from the
# same 2R subsets, which overlap across pairs (the paper produced all its estimators from its disjoint pairs).
# Where P < 2n no pair fits: EVE is omitted, as in the paper, and NEVE comes from 2R independently drawn subsets of
# the parent. At P = n every subset *is* the parent, so NEVE there only reflects the random fold partition. Every
# metric is computed from the same fits. Both estimators must converge to the true variance as P grows, so an EVE
# that does not move with P is unbiased at every P ({numref}`fig-eve-drawstring`).

# %%
drawstring = results.drawstring
ds = results.drawstring_summary
line = results.drawstring_slope

# %% tags=["hide-input"]
notebook.record_table("drawstring", ds)
notebook.record("drawstring_eve_slope", line)
notebook.record("drawstring_omitted_parent_sizes", results.drawstring_omitted_parent_sizes)
fig, axes = plots.new_axes(2, 2, width=4.0, height=2.6, sharex=True)
for ax, m in zip(axes, METRICS, strict=True):
    s = results.drawstring_summary_by_metric[m]
    ax.errorbar(s["parent_size"], s["eve"], yerr=2 * s["eve_se"], capsize=3,
                **plots.style("estimator", "EVE"), label="EVE (disjoint pairs)")
    ax.errorbar(s["parent_size"], s["neve"], yerr=2 * s["neve_se"], capsize=3,
                **plots.style("estimator", "NEVE"), label="NEVE (overlapping subsets)")
    ax.axvline(2 * P.drawstring_subset_size, color=plots.NEUTRAL, ls=":", lw=1)
    ax.set_title(METRIC_NAMES[m])
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
for ax in axes[2:]:
    ax.set_xlabel("parent size P (per class)")
for ax in axes[::2]:
    ax.set_ylabel("E[variance]")
handles, labels_ = axes[0].get_legend_handles_labels()
fig.legend(handles, labels_, loc="outside upper center", ncol=2, frameon=False)
valid = ds.dropna(subset=["eve"])
if np.isfinite(line["relative_change"]):
    eve_text = (f"With n = {P.drawstring_subset_size} per class and {int(ds['n_parents'].min())} parents per P, the "
                f"least-squares line of the {METRIC_NAMES[P.metric]} EVE changes by "
                f"{pct(100 * line['relative_change'], '+')} % ± {pct(100 * line['relative_change_se'])} % (SE) of its mean "
                f"over P = {int(valid['parent_size'].min())}–{int(valid['parent_size'].max())}")
elif valid.empty:
    eve_text = (f"EVE is omitted at every P on this run: no parent holds a disjoint pair of "
                f"n = {P.drawstring_subset_size} per class")
else:
    eve_text = (f"The {METRIC_NAMES[P.metric]} EVE is defined at {len(valid)} parent size{'s' * (len(valid) != 1)} "
                "only, too few for a line")
neve_first, neve_last = ds["neve"].iloc[0], ds["neve"].iloc[-1]
neve_text = (f"E[NEVE] {'rises' if neve_last > neve_first else 'falls' if neve_last < neve_first else 'stays'} from "
             f"{plots.math_sci(neve_first)} at P = {int(ds['parent_size'].iloc[0])} to {plots.math_sci(neve_last)} at P = "
             f"{int(ds['parent_size'].iloc[-1])}")
ratio = results.drawstring_neve_to_eve_largest_p
if np.isfinite(ratio) and ds["eve"].notna().iloc[-1]:
    neve_text += f", where NEVE/EVE = {ratio:.2f}"
plots.glue_figure("fig-eve-drawstring", fig, takeaway=f"{eve_text}; {neve_text}.")

# %% [markdown]
# ```{glue:figure} fig-eve-drawstring
# :name: fig-eve-drawstring
# :alt: Four panels, one per metric (accuracy, sensitivity, specificity, AUC), each plotting the mean EVE and the mean NEVE with two-standard-error bars against the parent size P per class; a dotted vertical line marks P = 2n, the smallest parent that holds a disjoint pair. The EVE points stay level while the NEVE points start low and rise towards them.
#
# The drawstring: mean EVE (disjoint pairs) and mean NEVE (overlapping subsets) over the parents against the
# parent size P, ±2 standard errors, for each metric. The dotted line is P = 2n; EVE is omitted to its left.
# {glue:md}`fig-eve-drawstring-takeaway:myst`
# ```

# %% tags=["remove-input"]
notebook.show_table(
    ds, caption=f"Drawstring ({P.metric}): mean EVE and NEVE over the parents at each parent size, with their "
                "Monte Carlo standard errors.",
    labels={"parent_size": "parent size P", "eve": "E[EVE]", "eve_se": "SE EVE", "neve": "E[NEVE]",
            "neve_se": "SE NEVE", "mean_score": f"mean {P.metric}", "n_parents": "parents"})

# %% [markdown]
# (eve-characterization)=
# ## Characterization
#
# The paper's Sec. 3.2 and Fig. 2. For each subset size we draw disjoint pairs from the whole pool
# (`characterization_n_pairs_small` pairs up to 25 per class, `characterization_n_pairs` above) and compute four
# estimates of the variance of a 10-fold CV accuracy: EVE ({eq}`eq-eve-eve`); NEVE over the 2R subsets, which
# overlap across pairs ({eq}`eq-eve-neve`); the fold-wise NFW ({eq}`eq-eve-nfw`); and the binomial
# ({eq}`eq-eve-binomial`). {numref}`fig-eve-characterization` shows them as standard deviations and, as in the
# paper, divided by the binomial variance.

# %%
char = results.characterization
ok = char.dropna(subset=["eve"])

# %% tags=["hide-input"]
notebook.record_table("characterization", eve.without_raw(char).drop(columns=["note"]))
notebook.record("characterization_omitted_sizes", results.characterization_omitted_sizes)
notebook.record("characterization_eve_to_binomial", ok["eve_to_binomial"].tolist())
notebook.record("characterization_nfw_to_eve", ok["nfw_to_eve"].tolist())
notebook.record("characterization_neve_to_eve", ok["neve_to_eve"].tolist())
fig, (a0, a1, a2) = plots.new_axes(3, 1, width=2.7, height=2.9, sharex=True)
a0.plot(ok["subset_size"], ok["mean_score"], marker="o", color="black")  # not a metric colour: blue is EVE here
a0.set(xlabel="subjects per class", ylabel=f"mean {METRIC_NAMES[P.metric]}", title="performance")
estimators = (("eve", "EVE"), ("neve", "NEVE"), ("nfw", "NFW"), ("binomial", "binomial"))
for col, lab in estimators:
    a1.plot(ok["subset_size"], np.sqrt(ok[col]), **plots.style("estimator", lab), label=lab)
a1.set(xlabel="subjects per class", ylabel="SD estimate", title="standard deviation")
for col, lab in estimators[:3]:
    a2.plot(ok["subset_size"], ok[f"{col}_to_binomial"], **plots.style("estimator", lab))
a2.axhline(1, color=plots.NEUTRAL, lw=1, ls=":")
a2.set(xlabel="subjects per class", ylabel="variance / binomial", title="relative to binomial")
fig.legend(*a1.get_legend_handles_labels(), loc="outside upper center", ncol=4, frameon=False)
if ok.empty:
    char_text = "EVE is omitted at every subset size on this run."
else:
    (n0, r0), (n1, r1) = ((int(ok["subset_size"].iloc[i]), ok["neve_to_eve"].iloc[i]) for i in (0, -1))
    neve = (f"is {r0:.2f} at n = {n0}" if n0 == n1 else f"is {r0:.2f} at both n = {n0} and n = {n1}"
            if f"{r0:.2f}" == f"{r1:.2f}" else f"{'rises' if r1 > r0 else 'falls'} from {r0:.2f} at n = {n0} to {r1:.2f} at n = {n1}")
    char_text = (f"EVE/binomial {span(ok['eve_to_binomial'])} (above 1 at {(ok['eve_to_binomial'] > 1).sum()} of the "
                 f"{len(ok)} sizes), NFW/EVE {span(ok['nfw_to_eve'])} (below 1 at {(ok['nfw_to_eve'] < 1).sum()} of them), "
                 f"and NEVE/EVE {neve} subjects per class.")
plots.glue_figure("fig-eve-characterization", fig, takeaway=char_text)

# %% [markdown]
# ```{glue:figure} fig-eve-characterization
# :name: fig-eve-characterization
# :alt: Three panels against the number of subjects per class. Left, the mean cross-validated performance rising with size; middle, the standard deviation estimated by EVE, NEVE, NFW and the binomial model, all falling with size; right, the EVE, NEVE and NFW variances divided by the binomial variance, with a dotted line at 1.
#
# Variance characterization of 10-fold CV: mean performance (left), the four standard-deviation estimates (middle),
# and the variances relative to the naive binomial model (right), against the subset size.
# {glue:md}`fig-eve-characterization-takeaway:myst`
# ```

# %% tags=["remove-input"]
notebook.show_table(
    eve.without_raw(char)[["subset_size", "n_pairs", "mean_score", "eve", "neve", "nfw", "binomial", "eve_to_binomial",
                           "nfw_to_binomial", "neve_to_eve"] + (["note"] if char["note"].astype(bool).any() else [])],
    caption=f"Characterization ({P.metric}, {P.n_splits}-fold CV): the four variance estimates and their ratios per "
            "subset size.",
    labels={"subset_size": "subjects per class", "n_pairs": "pairs", "mean_score": f"mean {P.metric}", "eve": "EVE",
            "neve": "NEVE", "nfw": "NFW", "eve_to_binomial": "EVE / binomial", "nfw_to_binomial": "NFW / binomial",
            "neve_to_eve": "NEVE / EVE"})

# %% [markdown]
# (eve-strategies)=
# ## Comparing validation strategies
#
# The paper's Sec. 3.3 and Fig. 3. Each strategy estimates the expected leave-one-out performance. All strategies
# run on the same `strategy_n_pairs` disjoint pairs; 10x1 and 3x1 are the first repeats of the 10x10 and 3x10 runs
# (the same fits, so the comparisons are paired). Bias is measured against LOO on the same subsets, the variance is
# EVE, and MSE = variance + bias² ({eq}`eq-eve-mse`). Every quantity is divided by the matching LOO value
# ({eq}`eq-eve-ratios`): its SD; its SD for the bias, since LOO has no bias of its own (our reading); its variance
# for the MSE ({numref}`fig-eve-strategies`).

# %%
strat = results.strategies
best = results.lowest_mse

# %% tags=["hide-input"]
notebook.record_table("strategies", eve.without_raw(strat))
fig, axes = plots.new_axes(3, 1, width=2.7, height=2.9, sharex=True)
panels = (("sd_ratio", "SD / SD(LOO)", 1), ("bias_ratio", "bias / SD(LOO)", 0), ("mse_ratio", "MSE / MSE(LOO)", 1))
for ax, (col, lab, ref) in zip(axes, panels, strict=True):
    for i, (name, g) in enumerate(strat.groupby("strategy", sort=False)):
        ax.plot(g["subset_size"], g[col], **strategy_style(name, i), label=name)
    ax.axhline(ref, color=plots.NEUTRAL, lw=1, ls=":")
    ax.set(xlabel="subjects per class", title=lab)
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=5, frameon=False)
others = strat[strat["strategy"] != "LOO"]
plots.glue_figure("fig-eve-strategies", fig, takeaway=(
    "The lowest MSE belongs to " + plots.word_list(
        f"LOO itself at n = {r.subset_size}" if r.strategy == "LOO" else
        f"{r.strategy} at n = {r.subset_size} ({r.mse_ratio:.2f} × LOO's)" for r in best.itertuples())
    + f"; the SD of the other strategies is below LOO's in {(others['sd_ratio'] < 1).sum()} of their "
      f"{len(others)} (strategy, size) cells."))

# %% [markdown]
# ```{glue:figure} fig-eve-strategies
# :name: fig-eve-strategies
# :alt: Three panels against the number of subjects per class, one line per validation strategy (10x1, 10x10, 3x1, 3x10, LOO). Left, the standard deviation relative to leave-one-out; middle, the bias relative to the standard deviation of leave-one-out; right, the mean squared error relative to that of leave-one-out. Dotted lines mark the leave-one-out values.
#
# Validation strategies as estimators of the expected leave-one-out performance: SD, bias and MSE of each strategy,
# each divided by the matching leave-one-out quantity (dotted line).
# {glue:md}`fig-eve-strategies-takeaway:myst`
# ```

# %% tags=["remove-input"]
notebook.show_table(
    eve.without_raw(strat)[["subset_size", "strategy", "mean", "bias", "variance", "mse", "sd_ratio", "bias_ratio", "mse_ratio"]],
    caption=f"Validation strategies ({P.metric}): mean, bias against LOO, EVE variance and MSE, and their ratios to LOO.",
    labels={"subset_size": "subjects per class", "mse": "MSE", "sd_ratio": "SD / SD(LOO)",
            "bias_ratio": "bias / SD(LOO)", "mse_ratio": "MSE / MSE(LOO)"})

# %% [markdown]
# (eve-truth)=
# ## Unbiasedness and inference against a known truth
#
# This section is ours. The paper infers unbiasedness from the flat drawstring curve; with the {term}`phantom` we can test
# it directly ({eq}`eq-eve-truth`). The true variance σ²(n) of 10-fold CV on n + n **fresh** subjects comes from
# `truth_n_draws` independent draws from the generating model; EVE comes from `truth_n_pools` independent finite
# 370/252 pools with `truth_pairs_per_pool` pairs each, as the paper computes it. The same fits give every metric
# ({numref}`fig-eve-truth`). The fresh draws also test intervals: does x ± 1.96√EVE (or the binomial
# x ± 1.96√(x(1−x)/2n)) cover the true expected performance? And in each pool the first `truth_null_pairs` pairs are
# validated a second time with a new fold partition: comparing the two runs is a paired comparison
# ({eq}`eq-eve-paired`) under a true null, so its rejection rate is the type-I error of the EVE paired test.

# %%
truth = results.known_truth
main_truth = truth[truth["metric"] == P.metric]

# %% tags=["hide-input"]
notebook.record_table("known_truth", truth)
notebook.record("truth_n_draws", results.truth_n_draws)
fig, axes = plots.new_axes(2, 1, width=4.0, height=2.9, sharey=True)
sizes = sorted(truth["subset_size"].unique())
offsets = np.linspace(-0.24, 0.24, len(METRICS))
for ax, (col, se_col, title) in zip(axes, (("relative_bias", "relative_bias_se", "EVE vs σ²"),
                                           ("half_relative_bias", "half_relative_bias_se", "½EVE vs σ² of the mean of halves")),
                                    strict=True):
    ax.axhspan(-100 * eve_claims.UNBIASED_MARGIN, 100 * eve_claims.UNBIASED_MARGIN, color=plots.NEUTRAL, alpha=0.15, lw=0)
    ax.axhline(0, color=plots.NEUTRAL, lw=1, ls=":")
    for off, m in zip(offsets, METRICS, strict=True):
        t = truth[truth["metric"] == m].sort_values("subset_size")
        x = np.searchsorted(sizes, t["subset_size"]) + off
        ax.errorbar(x, 100 * t[col], yerr=200 * t[se_col], capsize=3,
                    **{**plots.style("metric", m), "linestyle": "none", "marker": "^"}, label=METRIC_NAMES[m])
    ax.set_xticks(range(len(sizes)), [str(s) for s in sizes])
    ax.set(xlabel="subjects per class", title=title)
axes[0].set_ylabel("relative bias (%)")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=4, frameon=False)


def in_band(col: str, short: bool = False) -> str:
    """How many (metric, size) cells of ``col`` (a relative bias) lie inside the ±margin band, and the largest
    (``short``: without naming the band and the cells again)."""
    t = truth.dropna(subset=[col])
    if t.empty:
        return "is undefined in every cell on this run"
    worst = t.loc[t[col].abs().idxmax()]
    bias = 100 * worst[col]
    where = "" if short else f"lies inside the ±{100 * eve_claims.UNBIASED_MARGIN:g} % band "
    cells = "" if short else " metric × size cells"
    return (f"{where}in {(t[col].abs() <= eve_claims.UNBIASED_MARGIN).sum()} of {len(t)}{cells} (largest: "
            f"{pct(bias, '+')} % for {METRIC_NAMES[worst['metric']]} at n = {int(worst['subset_size'])})")


plots.glue_figure("fig-eve-truth", fig, takeaway=(
    f"EVE's relative bias {in_band('relative_bias')}; ½EVE's {in_band('half_relative_bias', short=True)}."))

# %% [markdown]
# ```{glue:figure} fig-eve-truth
# :name: fig-eve-truth
# :alt: Two panels of relative bias in percent against the number of subjects per class, one colour per metric (accuracy, sensitivity, specificity, AUC) with two-standard-error bars. Left, EVE against the true variance; right, half EVE against the true variance of the mean of two halves. A grey band marks the ±10 % margin of the unbiasedness rule and a dotted line zero.
#
# EVE against a known truth: the relative bias of EVE (left) and of ½EVE (right), ±2 standard errors, for every
# metric and size. The grey band is the ±10 % margin within which the claims call an estimator unbiased.
# {glue:md}`fig-eve-truth-takeaway:myst`
# ```

# %% tags=["remove-input"]
display(Markdown(
    "EVE against the truth (" + P.metric + "): " + "; ".join(
        f"n = {r.subset_size}: EVE {r.eve:.2e} vs σ² {r.true_variance:.2e} from {r.n_draws:,} draws and "
        f"{r.n_pools} × {r.pairs_per_pool} pool pairs" for r in main_truth.itertuples()) + "."))
notebook.show_table(
    truth[["metric", "subset_size", "true_variance", "true_variance_se", "eve", "eve_se", "relative_bias",
           "relative_bias_se", "true_variance_mean_of_halves", "half_eve", "half_relative_bias", "n_draws", "n_pools"]],
    caption="Known truth: EVE and ½EVE of finite pools against the true variances from fresh draws, per metric and size.",
    formats={"relative_bias": "{:+.1%}", "relative_bias_se": "{:.1%}", "half_relative_bias": "{:+.1%}"},
    labels={"subset_size": "subjects per class", "true_variance": "σ²", "true_variance_se": "SE σ²", "eve": "EVE",
            "eve_se": "SE EVE", "relative_bias": "relative bias", "relative_bias_se": "SE rel. bias",
            "true_variance_mean_of_halves": "σ² mean of halves", "half_eve": "½EVE",
            "half_relative_bias": "½EVE rel. bias", "n_draws": "draws", "n_pools": "pools"})

# %% [markdown]
# ## Is "naive < EVE" a law? The setting matters
#
# The paper finds the binomial and fold-wise variances below EVE. This is an **empirical** result, not a
# theorem. Balanced sampling can make the variance smaller than binomial, and a stable learner adds little
# training-set variability. Below, the high-variance learner (hard-margin SVM, d comparable to n) and a
# stable one (nearest centroid) run on the same pools: the phantom, WDBC {cite:p}`street1995wdbc` and, under
# `full`, your ADNI CSV.

# %%
setting = results.settings
summary = results.settings_summary

# %% tags=["hide-input"]
notebook.record_table("settings", setting[["dataset", "classifier", "subset_size", "mean_score", "eve", "eve_to_binomial", "nfw_to_eve"]])
notebook.record("setting_eve_to_binomial", results.setting_eve_to_binomial)
notebook.show_table(
    summary, caption=f"EVE against the naive models per data set and learner ({P.metric}, mean over the setting sizes).",
    labels={"mean_score": f"mean {P.metric}", "eve_to_binomial": "EVE / binomial", "nfw_to_eve": "NFW / EVE"})

# %% [markdown]
# What to look for: in which (data, learner) settings is EVE/binomial above 1, and does NFW/EVE stay below 1
# for the stable learner too?
#
# ## A worked confidence interval and a paired comparison
#
# Scheme 2 of the paper: the mean of the two halves has variance ½V ({eq}`eq-eve-half-eve`), which gives the
# interval {eq}`eq-eve-ci`. For two algorithms evaluated on the **same** pairs and folds, EVE of the paired
# difference gives the z-test {eq}`eq-eve-paired` (the normal-theory test the paper alludes to, written out by us).

# %%
# (R, 2) scores of each learner on the same pairs and folds -> EVE intervals (½V, 95 %) and the paired test
# (eve.comparison_statistics, computed by the grid's comparison unit in eve.run)
comp = results.comparison
pc = comp["paired"]

# %% tags=["hide-input"]
notebook.record("comparison", comp)
ci_table = pd.DataFrame({k: comp[k] for k in ("ci_svm", "ci_nearest_centroid", "binomial_ci_svm")}).T
ci_table.index = ["SVM, EVE (½V)", "nearest centroid, EVE (½V)", "SVM, binomial"]
ci_table.index.name = "learner and variance"
display(Markdown(
    f"SVM − nearest centroid on {comp['n_pairs']} pairs of {comp['subset_size']}+{comp['subset_size']} subjects: "
    f"mean difference {pc['mean_difference']:+.3f}, 95 % CI [{pc['ci_low']:+.3f}, {pc['ci_high']:+.3f}], "
    f"z = {pc['z']:.2f}, p = {pc['p_value']:.3g}. The EVE interval of the SVM is "
    f"{results.interval_width_ratio:.2f} times as wide as the binomial one."))
notebook.show_table(ci_table, caption=f"95 % confidence intervals of the expected {P.metric} at "
                                      f"{comp['subset_size']} subjects per class.",
                    labels={"centre": "centre", "low": "lower limit", "high": "upper limit"})

# %% [markdown] tags=["further"]
# ## Bridge: EVE for another chapter's metric
#
# EVE does not depend on the metric. Here it is applied to the **macro-AUC** ({eq}`eq-ml-macro-auc`) of a
# multi-label problem, using {numref}`Chapter %s <ch-ml>`'s {func}`medeval.metrics.multilabel.macro_auc`, checked against
# scikit-learn's `roc_auc_score(average="macro")` {cite:p}`pedregosa2011sklearn`. The task is scikit-learn's
# `make_multilabel_classification` (5 labels), with 5-fold CV of a per-label ridge classifier. {numref}`Chapter %s <ch-ml>` reports a
# fold-wise SD, which is exactly the NFW model ({eq}`eq-eve-nfw`).

# %%
bridge = results.bridge

# %% tags=["hide-input"]
notebook.record("bridge", bridge)
notebook.show_table(
    pd.DataFrame([bridge]), caption="EVE, NEVE and NFW of a cross-validated multi-label macro-AUC.",
    formats={"max_abs_difference_vs_sklearn": "{:.1e}"},
    labels={"n_pairs": "pairs", "subset_size": "images per subset", "mean_macro_auc": "mean macro-AUC", "eve": "EVE",
            "eve_se": "SE EVE", "neve": "NEVE", "nfw": "NFW", "n_subsets_without_foldwise": "subsets without NFW",
            "max_abs_difference_vs_sklearn": "max. |ours − sklearn|"})

# %% [markdown]
# (eve-paper-vs-us)=
# ## Paper vs us
#
# Every row is decided in `medeval.experiments.eve_claims` from the results above: the rule, the test with its
# level, n, the effect with its interval or p-value, and the data basis. The paper prints no numbers (its figures'
# values are not in the text), so every row compares our statistics with the paper's words. The replicates are
# the disjoint pairs (paired t-tests on per-pair terms, bootstrap intervals over pairs {cite:p}`efron1993bootstrap`),
# the drawstring's parents, and for the known truth the fresh draws and the independent pools.

# %%
claims = eve_claims.CLAIMS.decide(eve_claims.claim_inputs(results, P, gpu=resolve_params("03-eve", "gpu")),
                                  scale=profile)
notebook.record("verdict_counts", verdict_counts(claims.claims))
tail = notebook.claims_sections(claims)
tail.table()

# %% [markdown]
# ### Rows that are not reproduced, and why
#
# Built from each row's decision: the mechanism behind every contradicted row, why a row cannot be tested here,
# and which rows this scale leaves open (their rows say which way they lean).

# %% tags=["remove-input"]
tail.why()

# %% [markdown]
# ## Checks
#
# Identities of the formulas and properties of the implementation: computed, pass or fail, not claims.

# %% tags=["remove-input"]
tail.checks()

# %% [markdown]
# ## Deviations and errata
#
# The paper prints no numbers in its text, so there is no arithmetic to recompute (no errata table).
#
# - **Data.** The book uses a synthetic ADNI-like pool and WDBC {cite:p}`street1995wdbc` instead of ADNI
#   {cite:p}`jack2008adni`. The qualitative claims are about the estimator, not about ADNI. Profile `full` runs on
#   your ADNI CSV.
# - **Counts.** The `default` counts are far below the paper's (500 × 500 per P, 10,000 and 2,500 pairs), so
#   some rows are inconclusive; their reasons name the n that would decide them. Profile `gpu` runs the paper's counts per
#   P on a coarser P grid.
# - **Readings of under-specified steps** (ours):
#   - NFW = mean over subsets of s²(fold scores)/K ({eq}`eq-eve-nfw`);
#   - NEVE comes from the subsets of the disjoint pairs (independently drawn subsets where no pair fits);
#   - the bias in Fig. 3 is normalised by the SD of LOO; 10x1 and 3x1 are the first repeats of 10x10 and 3x10
#     ({eq}`eq-eve-ratios`);
#   - the CI and the paired test are normal-theory with ½V (scheme 2; {eq}`eq-eve-ci`, {eq}`eq-eve-paired`);
#   - every margin of an equivalence rule (unbiased, flat, converged, nominal coverage) is ours and is stated in
#     its rule.
# - **SVM solver.** The active-set engine finds the exact C-SVC optimum; LIBSVM {cite:p}`chang2011libsvm` stops at
#   tolerance 1e-3, so a few boundary points can differ from a LIBSVM run (see *Checks*). Problems with more training
#   points than features go to LIBSVM, which stops at max(100 000, 100 m) iterations; such fits are counted
#   (`n_unconverged`).
# - **The paper's claim that naive estimators are "biased down"** is a property of the setting (see *Is "naive <
#   EVE" a law? The setting matters* above).

# %% [markdown]
# ## Self-check
#
# Five quick questions on this chapter; each answer gives feedback. Numbers are checked to three significant
# digits (fractions such as 1/3 are accepted).

# %% tags=["remove-input"]
notebook.self_check()

# %% [markdown]
# ## Exercises
#
# The student version of this notebook (`medeval student 03-eve`) has the same exercises with the solutions
# removed, and `medeval grade` runs the checks. Every exercise needs only the setup cell below and your own
# solutions.

# %% tags=["exercise-setup"]
import numpy as np
import pandas as pd

from medeval.experiments import eve
from medeval.runtime.params import resolve_params

# the chapter's default settings, fitted by the exact CPU solver so that every run gives the same numbers
ex_config = eve.make_config(resolve_params("03-eve", "default", {"engine": "active_set", "device": "cpu"}))

# %% [markdown]
# ```{exercise} EVE on a 3-fold toy
# :label: ex-eve-hand
# :class: by-hand
#
# Two disjoint pairs (R = 2) of balanced subsets hold $n_c = 6$ subjects per class, so 12 subjects each. Every
# subset is validated by stratified 3-fold CV, so each fold tests 4 subjects (2 of each class). The table gives the
# number of correct held-out decisions in every fold:
#
# | pair r | subset i | fold 1 | fold 2 | fold 3 |
# |---|---|---|---|---|
# | 1 | 1 | 3 | 2 | 4 |
# | 1 | 2 | 2 | 2 | 3 |
# | 2 | 1 | 4 | 3 | 3 |
# | 2 | 2 | 2 | 2 | 2 |
#
# By hand (fractions are fine):
#
# 1. the accuracy $x_r^{(i)}$ of each subset, from its pooled held-out decisions ({eq}`eq-eve-performance`);
# 2. EVE ({eq}`eq-eve-eve`) and ½EVE ({eq}`eq-eve-half-eve`);
# 3. the naive fold-wise variance NFW ({eq}`eq-eve-nfw`) over the four subsets, with the fold accuracies as
#    $a_{s,k}$;
# 4. the naive binomial variance ({eq}`eq-eve-binomial`) at the mean accuracy p of the four subsets.
#
# Which is largest, and does the order match {numref}`fig-eve-characterization`?
#
# Store the accuracies in `ex_hand_scores` (a (2, 2) array: row r is the pair, column i the subset) and the four
# variances in `ex_hand_eve`, `ex_hand_half_eve`, `ex_hand_nfw` and `ex_hand_binomial` (floats).
# ```

# %% [markdown]
# ```{solution-start} ex-eve-hand
# :class: dropdown
# ```
# The folds have equal sizes, so the pooled accuracy is the number correct over 12 (equal to the mean of the fold
# accuracies): $x^{(1)}_1 = 9/12$, $x^{(2)}_1 = 7/12$, $x^{(1)}_2 = 10/12$, $x^{(2)}_2 = 6/12$. The differences
# within the pairs are 2/12 and 4/12, so
# $\mathcal V = \bigl((2/12)^2 + (4/12)^2\bigr)/(2\cdot 2) = 5/144 \approx 0.0347$ and ½EVE $= 5/288$.
#
# Fold accuracies of the four subsets: (3/4, 2/4, 4/4), (2/4, 2/4, 3/4), (4/4, 3/4, 3/4) and (2/4, 2/4, 2/4).
# Their sample variances are 1/16, 1/48, 1/48 and 0; divided by K = 3 and averaged, NFW $= 5/576 \approx 0.0087$.
# The mean accuracy is p = 32/48 = 2/3, so the binomial variance is $(2/3)(1/3)/12 = 1/54 \approx 0.0185$.
#
# EVE is the largest, then the binomial model, then NFW: the order of {numref}`fig-eve-characterization`. The
# fold-wise model treats the folds as independent although they share training subjects, and neither naive model
# sees that a different subset gives a different trained classifier. Two pairs are of course far too few for a
# precise EVE; the point is the arithmetic.

# %% tags=["solution"]
ex_hand_scores = np.array([[9 / 12, 7 / 12], [10 / 12, 6 / 12]])
ex_hand_eve = ((9 / 12 - 7 / 12) ** 2 + (10 / 12 - 6 / 12) ** 2) / (2 * 2)
ex_hand_half_eve = ex_hand_eve / 2
ex_hand_nfw = (1 / 16 + 1 / 48 + 1 / 48 + 0) / 3 / 4
ex_hand_binomial = (2 / 3) * (1 - 2 / 3) / 12
print(f"EVE = {ex_hand_eve:.4f}, EVE/2 = {ex_hand_half_eve:.4f}, NFW = {ex_hand_nfw:.4f}, "
      f"binomial = {ex_hand_binomial:.4f}")

# %% tags=["remove-cell", "check"]
ex_toy_folds = np.array([[3, 2, 4], [2, 2, 3], [4, 3, 3], [2, 2, 2]]) / 4  # rows: pair 1 (i = 1, 2), pair 2 (i = 1, 2)
assert np.shape(ex_hand_scores) == (2, 2), "ex_hand_scores must be a (2, 2) array: row = pair, column = subset"
assert np.allclose(ex_hand_scores, ex_toy_folds.mean(axis=1).reshape(2, 2)), \
    "the accuracy of a subset is its number of correct held-out decisions over its 12 subjects"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import empirical_variance_estimate

assert np.isclose(ex_hand_eve, empirical_variance_estimate([9 / 12, 10 / 12], [7 / 12, 6 / 12])), \
    "EVE = (1/(2R)) Σ_r (x_r^(1) − x_r^(2))² with R = 2 pairs"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import empirical_variance_estimate

assert np.isclose(ex_hand_half_eve, empirical_variance_estimate([9 / 12, 10 / 12], [7 / 12, 6 / 12],
                                                                target="mean_of_halves")), \
    "½EVE is half of EVE"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import naive_foldwise_variance

assert np.isclose(ex_hand_nfw, naive_foldwise_variance(np.array([[3, 2, 4], [2, 2, 3], [4, 3, 3], [2, 2, 2]]) / 4)), \
    "NFW: for each subset the sample variance (ddof = 1) of its 3 fold accuracies divided by K = 3, then the mean"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import naive_binomial_variance

assert np.isclose(ex_hand_binomial, naive_binomial_variance(2 / 3, 12)), \
    "binomial: p(1 − p)/n with p the mean accuracy of the four subsets and n = 2 n_c = 12 items"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} EVE from paired disjoint subsets
# :label: ex-eve-code
# :class: coding
#
# Write `ex_code_eve(scores_first, scores_second, target="half_size")` with numpy. `scores_first[r]` and
# `scores_second[r]` are the performances of a validation strategy on the two disjoint subsets of pair r. Return
# EVE ({eq}`eq-eve-eve`) as a float for `target="half_size"` and `"full_size"` (the same number, read as unbiased at
# the subset size or as conservative for the full sample) and ½EVE ({eq}`eq-eve-half-eve`) for
# `"mean_of_halves"`. One pair (R = 1) is allowed. Raise `ValueError` if the two inputs differ in length or the
# target is unknown.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-code
# :class: dropdown
# ```
# Each pair's two-sample variance with n = 2 is $(x^{(1)}-x^{(2)})^2/2$; EVE is their mean. The checks compare
# with {func}`medeval.metrics.variance.empirical_variance_estimate`, which also refuses non-finite scores.

# %% tags=["solution"]
def ex_code_eve(scores_first, scores_second, target="half_size"):
    """EVE of R disjoint subset pairs: (1/(2R)) Σ_r (x_r^(1) − x_r^(2))² as a float.

    target: "half_size" or "full_size" give EVE, "mean_of_halves" gives ½EVE. A length mismatch or an unknown
    target raises ValueError.
    """
    first = np.atleast_1d(np.asarray(scores_first, dtype=float))
    second = np.atleast_1d(np.asarray(scores_second, dtype=float))
    if first.shape != second.shape:
        raise ValueError(f"one score per subset pair is needed on both sides, got {first.size} and {second.size}")
    if target not in ("half_size", "full_size", "mean_of_halves"):
        raise ValueError(f"unknown target {target!r}")
    value = float(np.mean((first - second) ** 2) / 2)
    return value / 2 if target == "mean_of_halves" else value


# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import empirical_variance_estimate

ex_rng = np.random.default_rng(3)
ex_first, ex_second = ex_rng.uniform(0.6, 0.9, 50), ex_rng.uniform(0.6, 0.9, 50)
assert np.isclose(ex_code_eve(ex_first, ex_second), empirical_variance_estimate(ex_first, ex_second)) and \
    np.isclose(ex_code_eve(ex_first, ex_second, target="full_size"), empirical_variance_estimate(ex_first, ex_second)) \
    and np.isclose(ex_code_eve(ex_first, ex_second, target="mean_of_halves"),
                   empirical_variance_estimate(ex_first, ex_second, target="mean_of_halves")), \
    "EVE (every target) of 50 random pairs differs from medeval's: average (x1 − x2)²/2 over the pairs"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import empirical_variance_estimate

ex_first, ex_second = [0.80, 0.70, 0.75], [0.78, 0.74, 0.71]
assert np.isclose(ex_code_eve(ex_first, ex_second, target="mean_of_halves"),
                  empirical_variance_estimate(ex_first, ex_second, target="mean_of_halves")), \
    "target='mean_of_halves' must return ½EVE"
assert np.isclose(ex_code_eve(ex_first, ex_second, target="full_size"),
                  empirical_variance_estimate(ex_first, ex_second)), "target='full_size' must return EVE itself"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import empirical_variance_estimate

assert np.isclose(ex_code_eve([0.9], [0.6]), empirical_variance_estimate([0.9], [0.6])), \
    "one pair (R = 1) must give (x1 − x2)²/2"
assert ex_code_eve([0.7, 0.8], [0.7, 0.8]) == 0.0, "identical scores within every pair must give EVE = 0"

# %% tags=["remove-cell", "check"]
ex_raised = False
try:
    ex_code_eve([0.8, 0.7], [0.75])
except ValueError:
    ex_raised = True
assert ex_raised, "inputs of different lengths must raise ValueError (every pair needs two scores)"
ex_raised = False
try:
    ex_code_eve([0.8, 0.7], [0.75, 0.72], target="half")
except ValueError:
    ex_raised = True
assert ex_raised, "an unknown target must raise ValueError"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} The paired z-test
# :label: ex-eve-code-2
# :class: coding
#
# Write `ex_code_paired_z(first_a, second_a, first_b, second_b)`, the scheme-2 paired comparison of learners A and
# B validated on the same R pairs and folds ({eq}`eq-eve-paired`). Return the tuple `(mean_difference, z, p_value)`:
# the mean of the 2R differences $d_r^{(i)} = x_{A,r}^{(i)} - x_{B,r}^{(i)}$, $z = \bar d/\sqrt{\mathcal V_d/2}$ and
# the two-sided normal p-value. You may assume $\mathcal V_d > 0$.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-code-2
# :class: dropdown
# ```
# EVE applied to the differences gives $\mathcal V_d$; scheme 2 reads the mean of the two halves, so the variance
# of the centre is taken as $\tfrac12\mathcal V_d$. {func}`medeval.metrics.variance.paired_comparison` does the
# same and also returns the interval; {ref}`ex-eve-critical-2` asks what this choice of variance does to the test.

# %% tags=["solution"]
from scipy.stats import norm


def ex_code_paired_z(first_a, second_a, first_b, second_b):
    """Paired z-test of A − B on shared disjoint pairs (scheme 2): (mean difference, z, two-sided p-value)."""
    d1 = np.asarray(first_a, dtype=float) - np.asarray(first_b, dtype=float)
    d2 = np.asarray(second_a, dtype=float) - np.asarray(second_b, dtype=float)
    variance = np.mean((d1 - d2) ** 2) / 2 / 2  # ½V_d
    mean_difference = float(np.mean(np.concatenate([d1, d2])))
    z = mean_difference / np.sqrt(variance)
    return mean_difference, float(z), float(2 * norm.sf(abs(z)))


# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import paired_comparison

ex_res = paired_comparison([0.80, 0.70, 0.75], [0.78, 0.74, 0.71], [0.76, 0.66, 0.73], [0.75, 0.71, 0.66])
assert np.allclose(ex_code_paired_z([0.80, 0.70, 0.75], [0.78, 0.74, 0.71], [0.76, 0.66, 0.73], [0.75, 0.71, 0.66]),
                   (ex_res.mean_difference, ex_res.z, ex_res.p_value)), \
    "(mean difference, z, p) differ from medeval's paired_comparison on its docstring example"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import paired_comparison

ex_rng = np.random.default_rng(5)
ex_a = ex_rng.uniform(0.7, 0.9, (20, 2))
ex_b = ex_a - 0.02 + ex_rng.normal(0, 0.03, (20, 2))
ex_res = paired_comparison(ex_a[:, 0], ex_a[:, 1], ex_b[:, 0], ex_b[:, 1])
assert np.allclose(ex_code_paired_z(ex_a[:, 0], ex_a[:, 1], ex_b[:, 0], ex_b[:, 1]),
                   (ex_res.mean_difference, ex_res.z, ex_res.p_value)), \
    "20 random pairs: the variance of the centre is ½V_d, with V_d the EVE of the paired differences"

# %% tags=["remove-cell", "check"]
ex_a, ex_b = np.array([[0.81, 0.77], [0.74, 0.80], [0.85, 0.79]]), np.array([[0.78, 0.76], [0.75, 0.74], [0.80, 0.79]])
ex_ab = ex_code_paired_z(ex_a[:, 0], ex_a[:, 1], ex_b[:, 0], ex_b[:, 1])
ex_ba = ex_code_paired_z(ex_b[:, 0], ex_b[:, 1], ex_a[:, 0], ex_a[:, 1])
assert np.allclose([ex_ba[0], ex_ba[1], ex_ba[2]], [-ex_ab[0], -ex_ab[1], ex_ab[2]]), \
    "swapping A and B must flip the sign of the difference and of z and keep the p-value"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} The characterization with 3-fold CV
# :label: ex-eve-experiment
# :class: experimental
#
# The characterization ({ref}`eve-characterization`) uses 10-fold CV. Re-run it with K = 3 and with K = 10 at 10 and
# 25 subjects per class, with 400 disjoint pairs and `seed=0` each:
# `eve.characterization_unit(ex_config, subset_size, 400, n_splits, seed=0)` returns one row per call, and
# `eve.characterization_ratios` adds the ratios. The seed fixes the pairs, so both K see the same subsets and the
# comparison is paired. Store the four rows in one DataFrame `ex_exp_frame` with an extra column `n_splits`.
#
# Then interpret: does K change the mean accuracy, and in which direction (compare {numref}`fig-eve-strategies`)?
# Does it change EVE? Does the fold-wise model NFW stay below EVE, and the binomial model below EVE, for both K?
# Use the `eve_se` column to judge which differences in EVE are larger than the noise; for the mean accuracy, the
# differences between the `pair_scores` arrays of the two K (same subsets) give a paired standard error.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-experiment
# :class: dropdown
# ```
# Read the table the cell prints. With 3 folds every classifier is trained on two thirds of the subset instead of
# nine tenths, so the mean accuracy is lower: the negative bias of 3-fold CV of {numref}`fig-eve-strategies`. The
# deficit is larger at 10 than at 25 per class, where the learning curve is flatter. EVE changes by about its
# standard error between K = 3 and K = 10 but by a large factor between the two sizes: most of the variance comes
# from which subjects are in the subset, not from how it is partitioned. The paired differences of `pair_scores`
# put the deficit of the mean many standard errors from zero, although its size is within the spread of single
# scores. NFW/EVE stays well below 1 for both K, so the fold-wise model understates the variance whatever K is: its
# folds share training subjects and are not independent. EVE/binomial stays above 1 for this high-variance
# learner; the section *Is "naive < EVE" a law?* shows settings where it does not.

# %% tags=["solution"]
ex_exp_frame = pd.concat(
    [eve.characterization_ratios(eve.characterization_unit(ex_config, size, 400, k, seed=0)).assign(n_splits=k)
     for k in (3, 10) for size in (10, 25)],
    ignore_index=True,
)
print(ex_exp_frame[["n_splits", "subset_size", "mean_score", "eve", "eve_se", "nfw", "binomial", "nfw_to_eve",
                    "eve_to_binomial"]].to_string(index=False, float_format="{:.4g}".format))

# %% tags=["remove-cell", "check"]
assert hasattr(ex_exp_frame, "columns") and {"n_splits", "subset_size", "n_pairs", "eve", "nfw", "binomial",
                                             "mean_score"} <= set(ex_exp_frame.columns), \
    "ex_exp_frame must be a DataFrame with the columns of characterization_unit plus n_splits"
assert sorted(zip(ex_exp_frame["n_splits"], ex_exp_frame["subset_size"], strict=True)) == \
    [(3, 10), (3, 25), (10, 10), (10, 25)], "ex_exp_frame needs one row per K in (3, 10) and size in (10, 25)"
assert (ex_exp_frame["n_pairs"] == 400).all(), "use 400 disjoint pairs per row"

# %% tags=["remove-cell", "check"]
ex_row = ex_exp_frame[(ex_exp_frame["n_splits"] == 3) & (ex_exp_frame["subset_size"] == 10)].iloc[0]
ex_ref = eve.characterization_unit(ex_config, 10, 400, 3, seed=0).iloc[0]
assert np.isclose(ex_row["eve"], ex_ref["eve"]) and np.isclose(ex_row["mean_score"], ex_ref["mean_score"]), \
    "the K = 3 row at 10 per class was not computed with n_splits=3, 400 pairs, seed=0 and ex_config"

# %% tags=["remove-cell", "check"]
from medeval.metrics.variance import naive_binomial_variance

assert np.allclose(ex_exp_frame["binomial"], naive_binomial_variance(ex_exp_frame["mean_score"].to_numpy(),
                                                                    2 * ex_exp_frame["subset_size"].to_numpy())), \
    "the binomial column must be p(1 − p)/(2 n_c) of the row's mean accuracy"
assert np.allclose(ex_exp_frame["nfw_to_eve"], ex_exp_frame["nfw"] / ex_exp_frame["eve"]) and \
    (ex_exp_frame["eve"] > 0).all(), "apply eve.characterization_ratios to every row (NFW/EVE, EVE/binomial)"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Is leave-one-out's variance a reason to avoid it?
# :label: ex-eve-critical
# :class: critical
#
# The paper concludes: "Because of its high variance, we recommend against the use of leave one out validation"
# (Sec. 5), and "leave one out is not the best estimator for its own expected performance" (Sec. 4.3). Is this
# supported? Use the rows `loo-high-variance`, `loo-not-best` and `repeated-lowest-mse` of {ref}`eve-paper-vs-us`,
# {numref}`fig-eve-strategies` with the table under it ({ref}`eve-strategies`), and the book's Scorecard page.
# Address (a) how large the variance difference is, not only whether it is significant; (b) what the MSE is
# measured against, and whom that target favours; (c) the data basis and the scale of the rows; (d) what evidence
# would change your verdict. Answer in about 200 words.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-critical
# :class: dropdown
# ```
# A good answer separates the statistical verdict from the size of the effect and from the recommendation.
#
# (a) `loo-high-variance` asks only whether LOO's per-pair EVE terms exceed those of 10x10 and 3x10: a directional
# test, which many pairs can pass for a small difference. The SD ratios in the left panel of
# {numref}`fig-eve-strategies` give the size: compare LOO with the repeated strategies and judge whether the
# difference matters next to the spread between sizes. (b) The MSE is measured against E[$x_{\mathrm{LOO}}$],
# LOO's own expectation, so LOO has no bias by construction and every other strategy pays for its bias. LOO losing
# even on this target (`loo-not-best`) is therefore strong evidence for the alternatives; for the performance of a
# model trained on all N subjects, a different target, the ranking could change, since 3-fold CV is biased down
# (the figure's middle panel). (c) Under the `default` profile the rows run on the synthetic ADNI-like pool, not on
# ADNI (row `adni-figures`), and with far fewer pairs than the paper's 2,500 per size; the reason column says which
# rows this scale cannot decide. (d) The `gpu` or `full` profile, other learners
# (`--set classifier=nearest_centroid`) and a stated margin for a "high" variance would settle it.
#
# A fair verdict: the direction is supported where the rows say [Re], but "high" is a matter of degree that
# the paper never quantifies; the evidence favours repeated K-fold over LOO rather than condemning LOO.

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Why does the paired test reject so rarely?
# :label: ex-eve-critical-2
# :class: critical
#
# In {ref}`eve-truth` each pool's first pairs are validated a second time with a new fold partition, so comparing
# the two runs with the scheme-2 paired z-test ({eq}`eq-eve-paired`) is a comparison under a true null. Row
# `paired-test-valid` of {ref}`eve-paper-vs-us` counts how often it rejects. Why does it reject so rarely? Is the
# paper's claim that EVE "is able to provide statistically convincing comparison" supported: is a test that holds
# its level also a convincing one? Hint: compare the variance the test uses, $\tfrac12\mathcal V_d$, with the
# variance of the centre $\bar d$, which averages all 2R subsets.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-critical-2
# :class: dropdown
# ```
# Its variance $\tfrac12\mathcal V_d$ is that of the mean of *one* pair's two halves, but the centre averages all
# 2R subsets, whose partition noise is nearly independent: the centre varies much less than $\tfrac12\mathcal V_d$
# says, so |z| is too small and the test rejects far less often than α. Compare the rejection counts in row
# `paired-test-valid` with α.
#
# A conservative test is *valid*, but a test that never rejected would be valid too. So the rule of the row also
# asks for power: on the same runs with one algorithm lowered by a stated difference (one SD of a single CV run),
# the test must reject in favour of the better one in more than 80 % of the pools. A test whose z is shrunk
# rejects real differences rarely too; compare the two rejection counts the row reports. The paper cannot use the
# variance of the average over pairs, because pairs drawn from one pool overlap and their correlation is unknown;
# this is the problem {cite:t}`nadeau2003inference` address with a corrected variance. With very few pairs per pool
# (the `smoke` profile) $\tfrac12\mathcal V_d$ is itself so noisy, sometimes near zero, that the test can reject
# far too often instead, which the row then reports.

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ## Try it
# - `medeval run 03-eve --set metric=auc`: which rows change, and which become not testable because they need accuracy?
# - `--set classifier=nearest_centroid` or `--set dataset=wdbc`: does "naive < EVE" survive?
# - `--set effect_size=0.8`: where does the quality band land, and does the hard-margin check still pass?
#
# ## Provenance

# %% tags=["remove-input"]
notebook.provenance()
