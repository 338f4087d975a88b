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
# (ch-template-chapter)=
# # Template chapter title
#
# The paper in one paragraph: its question, its data and its answer (scaffold: replace this text and cite the
# paper from `book/references.bib`). The scaffold's experiment asks how well one feature of the Wisconsin
# diagnostic breast-cancer data {cite:p}`street1995wdbc` ranks malignant above benign cases, as a {term}`ROC-AUC`.
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
# * What the ROC-AUC of a single score measures, and how ties count.
# * How a bootstrap percentile interval decides whether it lies above chance, and why the same rule must fail
#   on a control.
#
# ## Prerequisites
#
# The {term}`TPR` and the {term}`FPR` of a threshold, and the ROC curve that joins them over all thresholds.

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
import numpy as np

from medeval import plots
from medeval.experiments import template_chapter, template_chapter_claims
from medeval.runtime import notebook

P = notebook.setup("00-template-chapter", globals())

# %% [markdown]
# **Time to run**, measured by recorded runs of each profile:

# %% tags=["remove-input"]
notebook.time_to_run_table()

# %% [markdown]
# ## Parameters

# %% tags=["remove-input"]
notebook.parameters_table()

# %% [markdown]
# (template-chapter-method)=
# ## Method
#
# The ROC-AUC of a score $s$ is the probability that a random positive case scores above a random negative one,
# ties counting one half:
#
# $$
# \operatorname{AUC} = \frac{1}{n_+ n_-} \sum_{i: y_i = 1} \sum_{j: y_j = 0}
#   \left( [s_i > s_j] + \tfrac12 [s_i = s_j] \right).
# $$ (eq-template-chapter-auc)
#
# It is computed by {func}`medeval.metrics.curves.roc_auc`. Over $B$ bootstrap resamples of the cases, the claim
# "better than chance" holds when the whole two-sided percentile interval of the $B$ AUCs at level $\alpha$ lies
# above $1/2$. The same rule runs on the resamples with their labels permuted, where the true AUC is $1/2$: there
# it must not say [Re], or it could not fail on these data.
#
# ## Experiment

# %%
results = template_chapter.run(P, cache_dir=notebook.cache_dir("runs"))
summary = notebook.record_table("summary", results.summary)
notebook.record_table("control", results.control)
notebook.show_table(summary, caption=f"ROC-AUC of {P.feature!r} over the bootstrap resamples, with its "
                    f"{100 * (1 - P.alpha):.0f} % percentile interval.",
                    labels={"mean_auc": "mean ROC-AUC", "low": "interval low", "high": "interval high"})

# %% tags=["hide-input"]
fig, (ax,) = plots.new_axes(width=5.0, height=3.0)
for permuted, name, colour in ((False, "true labels", plots.PALETTE[0]), (True, "labels permuted", plots.NEUTRAL)):
    ax.hist([r["auc"] for r in results.runs if r["permuted"] == permuted], bins=20, alpha=0.7, label=name,
            color=colour)
ax.axvline(0.5, color="black", linestyle=":")
ax.set_xlabel("ROC-AUC of one resample")
ax.set_ylabel("resamples")
ax.legend(frameon=False)
true_auc = np.array([r["auc"] for r in results.runs if not r["permuted"]])
null_auc = np.array([r["auc"] for r in results.runs if r["permuted"]])
plots.glue_figure("fig-template-chapter-auc", fig, takeaway=(
    f"With the true labels the resamples' ROC-AUC lies between {true_auc.min():.2f} and {true_auc.max():.2f}; "
    f"with permuted labels their mean is {null_auc.mean():.2f} (chance: 0.50)."))

# %% [markdown]
# ```{glue:figure} fig-template-chapter-auc
# :name: fig-template-chapter-auc
# :alt: Two histograms of the ROC-AUC over the bootstrap resamples, with the true and with permuted labels, and a dotted vertical line at 0.5.
#
# ROC-AUC of the chosen feature over the bootstrap resamples ({eq}`eq-template-chapter-auc`), with the true labels
# and with the labels permuted (the control); the dotted line is chance.
# {glue:md}`fig-template-chapter-auc-takeaway:myst`
# ```
#
# (template-chapter-paper-vs-us)=
# ## Paper vs us
#
# One row per claim: the paper's evidence, our figures, the rule, the test with its n and effect, the data basis
# and the verdict. The rules live in {mod}`medeval.experiments.template_chapter_claims`.

# %%
claims = template_chapter_claims.CLAIMS.decide(template_chapter_claims.claim_inputs(results, P), scale=profile)
tail = notebook.claims_sections(claims)
tail.table()

# %% [markdown]
# ### Rows that are not reproduced, and why

# %% tags=["hide-input"]
tail.why()

# %% [markdown]
# ## Checks
#
# The claim's rule on its control: the same resamples with the labels permuted. They are not claims and do not
# count in the scorecard.

# %% tags=["hide-input"]
tail.checks()

# %% [markdown]
# ## Deviations and errata
#
# Errata: arithmetic on the paper's numbers that does not add up, recomputed (the scaffold has none).

# %% tags=["hide-input"]
tail.errata()

# %% [markdown]
# ## Self-check
#
# Three quick questions on this chapter's formula and its rule; each answer tells you why.

# %% tags=["remove-input"]
notebook.self_check()

# %% [markdown]
# ## Exercises
#
# The student version of this chapter (`medeval student 00-template-chapter`) has the same exercises with the
# solutions removed; `medeval grade` runs the checks.

# %% tags=["exercise-setup"]
import numpy as np

# A tiny test set: 3 positives, 2 negatives, one tie across the classes.
ex_toy_scores = np.array([0.9, 0.6, 0.5, 0.5, 0.4])
ex_toy_labels = np.array([1, 1, 1, 0, 0])

# %% [markdown]
# ```{exercise} The ROC-AUC by hand
# :label: ex-template-chapter-hand
# :class: by-hand
#
# The scores $s$ = (0.9, 0.6, 0.5, 0.5, 0.4) have the labels (1, 1, 1, 0, 0) (`ex_toy_scores` and
# `ex_toy_labels` in the setup cell). Count the positive-negative pairs, {eq}`eq-template-chapter-auc`, and store
# the ROC-AUC in `ex_hand_auc` (a float). Does the AUC change when every score is squared?
# ```

# %% [markdown]
# ```{solution-start} ex-template-chapter-hand
# :class: dropdown
# ```
# Six pairs: 0.9 and 0.6 beat both negatives (4 wins), 0.5 beats 0.4 and ties with 0.5 (1.5): $5.5/6 \approx
# 0.917$. Squaring keeps the order of positive scores, so the AUC does not change.

# %% tags=["solution"]
ex_hand_auc = 5.5 / 6

# %% tags=["remove-cell", "check"]
from medeval.metrics.curves import roc_auc

assert np.isscalar(ex_hand_auc) and np.isclose(ex_hand_auc, roc_auc(ex_toy_labels, ex_toy_scores)), (
    "ex_hand_auc is not the ROC-AUC: count the pairs the positive wins (a tie counts 1/2) and divide by 3 * 2 = 6")

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} The ROC-AUC in a few lines of numpy
# :label: ex-template-chapter-code
# :class: coding
#
# Write `ex_code_auc(y_true, y_score)`, the ROC-AUC of {eq}`eq-template-chapter-auc` by comparing every positive
# with every negative (ties count one half), without medeval. The checks compare it with
# {func}`medeval.metrics.curves.roc_auc` on the toy set and on random scores with ties.
# ```

# %% [markdown]
# ```{solution-start} ex-template-chapter-code
# :class: dropdown
# ```
# One comparison matrix (positives × negatives) gives every pair at once.

# %% tags=["solution"]
def ex_code_auc(y_true, y_score):
    """ROC-AUC: the share of positive-negative pairs the positive wins, ties counting one half."""
    y = np.asarray(y_true).astype(bool)
    s = np.asarray(y_score, dtype=float)
    pos, neg = s[y][:, None], s[~y][None, :]
    return float(((pos > neg) + 0.5 * (pos == neg)).mean())


# %% tags=["remove-cell", "check"]
from medeval.metrics.curves import roc_auc

assert np.isclose(ex_code_auc(ex_toy_labels, ex_toy_scores), roc_auc(ex_toy_labels, ex_toy_scores)), (
    "ex_code_auc differs from the ROC-AUC on the toy set: a tie between a positive and a negative counts 1/2")

# %% tags=["remove-cell", "check"]
from medeval.metrics.curves import roc_auc

_rng = np.random.default_rng(3)
_y = _rng.random(200) < 0.3
_s = np.round(_rng.normal(_y.astype(float), 1.0), 1)
assert np.isclose(ex_code_auc(_y, _s), roc_auc(_y, _s)), (
    "ex_code_auc differs from the ROC-AUC on random scores with ties: compare every positive with every negative")

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Another feature
# :label: ex-template-chapter-experiment
# :class: experimental
#
# Run the chapter's experiment for the feature "mean fractal dimension": 100 resamples of 200 cases, seed 0,
# with `template_chapter.feature_auc(feature, n_samples, repeat, seed)` for `repeat` in `range(100)`, and store
# `template_chapter.summarise(runs, 0.05)` in `ex_exp_summary`. Then answer in a few sentences: does the claim
# hold for this feature, and what does its interval say?
# ```

# %% [markdown]
# ```{solution-start} ex-template-chapter-experiment
# :class: dropdown
# ```
# The mean fractal dimension barely separates the classes: its interval contains 0.5, so the rule says [~].

# %% tags=["solution"]
from medeval.experiments import template_chapter

ex_exp_runs = [template_chapter.feature_auc("mean fractal dimension", 200, r, 0) for r in range(100)]
ex_exp_summary = template_chapter.summarise(ex_exp_runs, 0.05)

# %% tags=["remove-cell", "check"]
from medeval.experiments import template_chapter

_ref = template_chapter.summarise([template_chapter.feature_auc("mean fractal dimension", 200, r, 0)
                                   for r in range(100)], 0.05)
assert hasattr(ex_exp_summary, "columns") and np.allclose(
    ex_exp_summary[["mean_auc", "low", "high"]].to_numpy(float), _ref[["mean_auc", "low", "high"]].to_numpy(float)), (
    "ex_exp_summary is not the summary of 100 resamples of 200 cases of 'mean fractal dimension' with seed 0")

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} What would the paper need?
# :label: ex-template-chapter-critical
# :class: critical
#
# The claim of this chapter rests on one bundled data set and one feature. Judge it: what does its verdict allow
# you to say about other data, and what would you need to settle it there (which data, how many cases, which
# rule)? Answer in about 150 words.
# ```

# %% [markdown]
# ```{solution-start} ex-template-chapter-critical
# :class: dropdown
# ```
# A good answer says that the verdict holds for the WDBC cases only (a real but small data set), that the
# bootstrap interval describes the sampling of these cases and not of another population, and that another
# population needs its own cases, enough for the interval to exclude 0.5 at the effect expected, and the same
# rule run on its control.
#
# ```{solution-end}
# ```

# %% [markdown]
# ## Try it
#
# * `medeval run 00-template-chapter --set "feature=mean fractal dimension"`: does the verdict change?
# * `--set n_samples=20`: what happens to the interval, and to the control?

# %% [markdown]
# ## Provenance

# %% tags=["remove-input"]
notebook.provenance()
