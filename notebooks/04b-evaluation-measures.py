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
# # Evaluation measures for imbalanced test sets: PR-T and the tie-aware mean PR curve
#
# Chapter 5 of Reshma (2021) argues that ROC curves — and PR curves on large imbalanced test sets — cannot
# separate models that differ in their false positives, that mean PR curves are usually computed wrongly
# (linear interpolation in PR space, ties at the start, in between and at the end of the curve), and proposes
# **PR-T**: precision and recall plotted against a fixed grid of thresholds on min-max-normalised scores, with
# trapezoidal AUCs (Algorithms 1–2), plus an algorithm for the mean PR curve and PR-AUC that interpolates in ROC
# space with explicit tie rules (Algorithms 3–5).
#
# **What we reproduce**
# 1. Tables 5.1–5.2: with large test sets TPR and FPR differences vanish while precision still separates (and
#    the Small ΔPrec printed in the thesis is an arithmetic error).
# 2. Example 1 and the tie cases of Fig. 5.7: endpoint precision 2/3 vs 2/5.
# 3. En (3:1) vs Ep (1:3) models: ROC hardly separates them, PR somewhat, PR-T clearly (Figs 5.2–5.3); the
#    negative-biased model has the higher precision curve, the positive-biased one the higher recall curve.
# 4. Across-trial spread is larger in PR-T than in ROC.
#
# **Data.** By default the thesis's PCam→CAMELYON16 task is replaced by PCam-like binary patches from slide
# phantoms (test set at C:¬C = 1:12); its CIFAR-10 automobile-vs-rest task by scikit-learn's bundled digits, one
# digit vs the rest (1:9). The `full` profile runs the real PCam→CAMELYON16 and CIFAR-10 tasks.
#
# **Time to run** (measured on a 2-core CPU): smoke about 8 s, default about 20 s; `gpu` and `full` have not been
# timed here (no GPU was available); every page states its own measured time at its top.

# %% tags=["parameters", "remove-cell"]
profile = "default"
seed = None
device = None
scheduler = None
max_workers = None
n_trials = None
n_digit_trials = None
positive_digit = None
digits_test_fraction = None
digits_model = None
n_thresholds = None
n_recall_points = None
hist_bins = None
slide_size = None
n_train_slides = None
n_test_slides = None
patch_size = None
cls_central_size = None
cls_test_stride = None
cls_extra_test_slides = None
imbalance = None
cls_base_channels = None
cls_n_blocks = None
cls_epochs = None
cls_unit_cap = None
batch_size = None
lr = None
data_source = None
cls_imbalanced_test = None
c16_slides = None
c16_level = None
c16_min_tissue_fraction = None
c16_tissue_channel = None
n_cifar_trials = None
cifar_model = None
cifar_weights = None
cifar_max_epochs = None
cifar_batch_size = None
cifar_lr = None
cifar_lr_patience = None
cifar_early_stopping_patience = None
cifar_augment = None

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from medeval import plots
from medeval.experiments import class_distribution as cd
from medeval.experiments import evaluation_measures as em
from medeval.experiments.cifar10_binary import cifar10_run
from medeval.metrics import curves as C
from medeval.runtime import notebook
from medeval.runtime.grid import run_grid

P = notebook.setup("04b-evaluation-measures", globals())
em.validate(P)
P

# %% [markdown]
# ## Tables 5.1 and 5.2: performance inseparability on large test sets

# %%
t51 = em.table_5_1()
t52 = em.table_5_2(t51)
notebook.record_table("table_5_2", t52)
small = t52.set_index("test set").loc["Small"]
large = t52.set_index("test set").loc["Large"]
notebook.record("small_delta_prec", float(small["ΔPrec"]))
notebook.record("large_delta_prec", float(large["ΔPrec"]))
display(t51)
display(t52.round(4))
display(Markdown(
    f"On the large test set ΔTPR = {large['ΔTPR']:.4f} and ΔFPR = {large['ΔFPR']:.4f} while ΔPrec = "
    f"{large['ΔPrec']:.4f}. **Erratum:** for the small test set the thesis prints ΔPrec = "
    f"{small['printed ΔPrec']:.3f}, but its own formula gives 8,200/10,200 − 8,000/12,000 = {small['ΔPrec']:.4f}."))

# %% [markdown]
# ## Example 1 and the tie cases of Fig. 5.7
#
# Ranked lists (first = highest score). Algorithm 3 takes the maximum FPR for a tie at the start (the cost of
# negatives ranked first), the median in between, and the minimum at TPR = 1 (a reward); Algorithm 5 keeps every
# tied FPR for the AUC (zero-width steps). The "plain PR endpoint" is what Saito & Rehmsmeier's tool reports.

# %%
ties = em.tie_cases(P.n_recall_points)
notebook.record_table("tie_cases", ties)
ex = ties.set_index("case")
notebook.record("example1_model1_endpoint", float(ex.loc["Example 1, model 1", "prec at recall 1 (Alg. 3)"]))
notebook.record("example1_model2_endpoint", float(ex.loc["Example 1, model 2", "prec at recall 1 (Alg. 3)"]))
ties.round(4)

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
for name in ("Example 1, model 1", "Example 1, model 2"):
    y, s = em.ranked_scores(em.TIE_CASES[name])
    roc = C.roc_curve(y, s)
    r, p = C.interpolated_pr_points(roc, n_points=P.n_recall_points)
    axes[0].plot(roc.fpr, roc.tpr, marker="o", label=name)
    axes[1].plot(r, p, label=f"{name} (Alg. 3)")
    pr = C.pr_curve(y, s)
    axes[1].plot(pr.recall, pr.precision, "o--", alpha=0.5, label=f"{name} (PR points)")
axes[0].set_xlabel("FPR")
axes[0].set_ylabel("TPR")
axes[0].legend(fontsize=7)
axes[1].set_xlabel("recall")
axes[1].set_ylabel("precision")
axes[1].legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## En and Ep models
#
# En is trained with negative:positive = 3:1 and Ep with 1:3, 4U examples each (Table 5.3); every trial-model
# draws a different subset. Phantom patches: a small CNN, test set at 1:`imbalance`. Digits: a logistic
# regression on the 64 pixels, test set 1:9. With `data_source=real` (profile `full`) the thesis's own tasks run
# instead: a CNN trained on PCam and tested on every CAMELYON16 test patch (when the slides are present; else a
# 1:`imbalance` subsample of the PCam test split), and a ResNet50 on CIFAR-10 automobile vs rest (test set 1:9).

# %%
if P.data_source == "real":
    hist_runs = run_grid(em.histology_fn(P), em.phantom_grid(P), cache_dir=notebook.cache_dir("en-ep-pcam"),
                         scheduler=P.scheduler, max_workers=P.max_workers, desc="En/Ep PCam trials")
    hist_runs, hist_source, _, _ = cd.with_imbalanced_test(hist_runs, P, cache_dir=notebook.cache_dir("camelyon16"))
    hist_name = "PCam-CAMELYON16" if hist_source == "camelyon16" else "PCam-PCam-subsample"
    cifar_runs = run_grid(cifar10_run, em.cifar10_grid(P), cache_dir=notebook.cache_dir("en-ep-cifar10"),
                          scheduler=P.scheduler, max_workers=P.max_workers, desc="En/Ep CIFAR-10 trials")
    tasks = {hist_name: hist_runs, "CIFAR-10": cifar_runs}
    trials = {hist_name: P.n_trials, "CIFAR-10": P.n_cifar_trials}
else:
    phantom_runs = run_grid(em.histology_fn(P), em.phantom_grid(P), cache_dir=notebook.cache_dir("en-ep-phantom"),
                            scheduler=P.scheduler, max_workers=P.max_workers, desc="En/Ep phantom trials")
    digit_runs = run_grid(em.digits_run, em.digits_grid(P), cache_dir=notebook.cache_dir("en-ep-digits"),
                          scheduler=P.scheduler, max_workers=1, desc="En/Ep digits trials")
    tasks = {"phantom patches": phantom_runs, "digits": digit_runs}
    trials = {"phantom patches": P.n_trials, "digits": P.n_digit_trials}
notebook.record("tasks", list(tasks))
for name, runs in tasks.items():
    y = runs[0]["imbalanced"]["y_true"]
    display(Markdown(f"**{name}**: test set of {y.size} examples, {int(y.sum())} positive "
                     f"(1:{(y.size - y.sum()) / y.sum():.1f}); trial-models trained on {runs[0]['train_size']} examples."))

# %% [markdown]
# ### Score histograms (Fig. 5.1)
# Mean count per score bin over the trial-models (log scale), actual negatives (top) and positives (bottom).

# %%
fig, axes = plt.subplots(2, 2, figsize=(10, 5), sharex=True)
for j, (name, runs) in enumerate(tasks.items()):
    hist = em.score_histograms(runs, bins=P.hist_bins)
    for i, actual in enumerate(("negative", "positive")):
        for model, color in (("En", "tab:blue"), ("Ep", "tab:orange")):
            h = hist[(hist.model == model) & (hist.actual == actual)]
            axes[i, j].step(h.bin_left, h.mean_count, where="post", color=color, label=model)
        axes[i, j].set_yscale("symlog", linthresh=1)
        axes[i, j].axvline(0.5, color="k", ls="--")
        axes[i, j].set_title(f"{name}: actual {actual}", fontsize=9)
    axes[1, j].set_xlabel("predicted score")
axes[0, 0].legend()
plt.tight_layout()
plt.show()
errs = pd.concat([em.errors_at_threshold(r).assign(task=n) for n, r in tasks.items()], ignore_index=True)
notebook.record_table("errors_at_0.5", errs)
errs

# %% [markdown]
# ### Single trial-models: ROC, PR and PR-T (Fig. 5.2)

# %%
summaries = {name: cd.summarise_runs(runs, key="imbalanced", n_thresholds=P.n_thresholds)
             for name, runs in tasks.items()}
fig, axes = plt.subplots(2, 3, figsize=(13, 7))
for i, (name, summ) in enumerate(summaries.items()):
    for model, color in (("En", "tab:blue"), ("Ep", "tab:orange")):
        m = summ[model]["runs"][0]
        roc, prt = m["roc"], m["prt"]
        pr_r, pr_p = C.interpolated_pr_points(roc, n_points=P.n_recall_points)
        axes[i, 0].plot(roc.fpr, roc.tpr, color=color, label=f"{model} ({m['roc_auc']:.3f})")
        axes[i, 1].plot(pr_r, pr_p, color=color, label=f"{model} ({m['pr_auc']:.3f})")
        axes[i, 2].plot(prt.thresholds, prt.precision, color=color, label=f"{model} precision ({m['precision_auc']:.3f})")
        axes[i, 2].plot(prt.thresholds, prt.recall, ":", color=color, label=f"{model} recall ({m['recall_auc']:.3f})")
    for ax, (xl, yl) in zip(axes[i], [("FPR", "TPR"), ("recall", "precision"), ("threshold", "")], strict=True):
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.legend(fontsize=7)
        ax.set_title(name, fontsize=9)
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Mean curves over trial-models with std bands (Fig. 5.3)
# Mean ROC by vertical averaging; mean PR by Algorithm 3 (ROC-space interpolation and tie rules); mean PR-T
# threshold-wise, without interpolation.

# %%
fig, axes = plt.subplots(2, 3, figsize=(13, 7))
for i, (name, summ) in enumerate(summaries.items()):
    for model, color in (("En", "tab:blue"), ("Ep", "tab:orange")):
        s = summ[model]
        r, p = s["mean_roc"], s["mean_pr"]
        pc, rc = s["mean_prt"]["precision"], s["mean_prt"]["recall"]
        plots.curve_with_band(axes[i, 0], r.grid, r.mean, r.mean - r.std, r.mean + r.std, label=model, color=color)
        plots.curve_with_band(axes[i, 1], p.grid, p.mean, p.mean - p.std, p.mean + p.std, label=model, color=color)
        plots.curve_with_band(axes[i, 2], pc.grid, pc.mean, pc.mean - pc.std, pc.mean + pc.std,
                              label=f"{model} precision", color=color)
        plots.curve_with_band(axes[i, 2], rc.grid, rc.mean, rc.mean - rc.std, rc.mean + rc.std,
                              label=f"{model} recall", color=color, ls=":")
    for ax, (xl, yl) in zip(axes[i], [("FPR", "TPR"), ("recall", "precision"), ("threshold", "")], strict=True):
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.legend(fontsize=7)
        ax.set_title(f"{name}: mean", fontsize=9)
plt.tight_layout()
plt.show()

# %% [markdown]
# ### AUCs, PR-AUC methods and separability
#
# PR-AUC by Algorithms 4–5 next to scikit-learn's average precision (a step function) and naive linear
# interpolation in PR space. "|Δ|" is the difference between En and Ep; "mean std" the across-trial spread.

# %%
comparisons, seps = {}, {}
for name, summ in summaries.items():
    comparisons[name] = em.metric_comparison(summ)
    seps[name] = em.separability(comparisons[name])
    notebook.record_table(f"metric_comparison_{name.replace(' ', '_')}", comparisons[name])
    notebook.record_table(f"separability_{name.replace(' ', '_')}", seps[name])
    display(Markdown(f"**{name}**"))
    display(comparisons[name].groupby("model").agg(["mean", "std"]).drop(columns="trial").round(4).T)
    display(seps[name].round(4))

# %%
findings = {}
for name, summ in summaries.items():
    sep = seps[name].set_index("metric")
    en_prec = summ["En"]["mean_prt"]["precision"].mean
    ep_prec = summ["Ep"]["mean_prt"]["precision"].mean
    en_rec = summ["En"]["mean_prt"]["recall"].mean
    ep_rec = summ["Ep"]["mean_prt"]["recall"].mean
    findings[name] = {
        "d_roc": float(sep.loc["ROC-AUC", "|Δ|"]),
        "d_pr": float(sep.loc["PR-AUC (Alg. 4-5)", "|Δ|"]),
        "d_prec": float(sep.loc["precision-AUC (PR-T)", "|Δ|"]),
        "std_roc": float(sep.loc["ROC-AUC", "mean std"]),
        "std_prec": float(sep.loc["precision-AUC (PR-T)", "mean std"]),
        "en_precision_higher": float(np.mean(en_prec >= ep_prec)),
        "ep_recall_higher": float(np.mean(ep_rec >= en_rec)),
        "alg4_minus_ap": float((comparisons[name]["PR-AUC (Alg. 4-5)"] - comparisons[name]["average precision"]).mean()),
        "linear_minus_alg4": float((comparisons[name]["linear PR-AUC"] - comparisons[name]["PR-AUC (Alg. 4-5)"]).mean()),
    }
    notebook.record(f"findings_{name.replace(' ', '_')}", findings[name])
pd.DataFrame(findings).T.round(4)

# %% [markdown]
# ## Paper vs us

# %%
def verdict(ok):
    return "[Re]" if ok else "[¬Re]"


ex1, ex2 = ex.loc["Example 1, model 1", "prec at recall 1 (Alg. 3)"], ex.loc["Example 1, model 2", "prec at recall 1 (Alg. 3)"]
rows = [
    {"claim": "Table 5.2 Large: ΔTPR, ΔFPR ≈ 0 while ΔPrec = .024", "paper": ".003 / .000 / .024",
     "ours": f"{large['ΔTPR']:.4f} / {large['ΔFPR']:.4f} / {large['ΔPrec']:.4f}",
     "verdict": verdict(round(large["ΔPrec"], 3) in (0.023, 0.024)), "reason": "arithmetic"},
    {"claim": "Table 5.2 Small: ΔPrec", "paper": ".005", "ours": f"{small['ΔPrec']:.4f}",
     "verdict": "[¬Re]", "reason": "erratum: 8,200/10,200 − 8,000/12,000 = 0.137"},
    {"claim": "Example 1 endpoint precisions (Alg. 3)", "paper": "2/3 and 2/5", "ours": f"{ex1:.4f} and {ex2:.4f}",
     "verdict": verdict(abs(ex1 - 2 / 3) < 1e-12 and abs(ex2 - 0.4) < 1e-12), "reason": "Algorithm 3"},
]
for name, f in findings.items():
    rows += [
        {"claim": f"{name}: PR-T separates En/Ep more than ROC", "paper": "Fig. 5.2",
         "ours": f"|ΔROC-AUC| {f['d_roc']:.4f} vs |Δprecision-AUC| {f['d_prec']:.4f}",
         "verdict": verdict(f["d_prec"] > f["d_roc"]), "reason": f"{trials[name]} trials"},
        {"claim": f"{name}: PR-T separates En/Ep more than PR", "paper": "Fig. 5.2",
         "ours": f"|ΔPR-AUC| {f['d_pr']:.4f} vs |Δprecision-AUC| {f['d_prec']:.4f}",
         "verdict": verdict(f["d_prec"] > f["d_pr"]), "reason": "PR-AUC by Algorithms 4-5"},
        {"claim": f"{name}: En has the higher precision curve, Ep the higher recall curve", "paper": "Fig. 5.2",
         "ours": f"En precision ≥ Ep at {f['en_precision_higher']:.0%} of thresholds; Ep recall ≥ En at "
                 f"{f['ep_recall_higher']:.0%}",
         "verdict": verdict(f["en_precision_higher"] > 0.5 and f["ep_recall_higher"] > 0.5), "reason": "mean PR-T"},
        {"claim": f"{name}: across-trial std larger in PR-T than in ROC", "paper": "Fig. 5.3",
         "ours": f"std precision-AUC {f['std_prec']:.4f} vs ROC-AUC {f['std_roc']:.4f}",
         "verdict": verdict(f["std_prec"] > f["std_roc"]), "reason": "mean over En, Ep"},
    ]
pvu = pd.DataFrame(rows)
notebook.paper_vs_us(pvu)
pvu

# %% [markdown]
# ## Deviations and errata
#
# * **Erratum (Table 5.2).** The Small ΔPrec is 0.137, not .005 (the Large row's .024 is 0.0233 rounded up).
# * **Algorithm 3's "end" case.** Read literally (`j == |ROC|`) the tie at TPR = 1 would fall in the
#   intermediate case (median) whenever it spans several ROC points, contradicting the thesis's own Example 1; we
#   apply the end rule to the tie group at TPR = 1. The undefined start precision is 0/0 (NaN), not ∞ as the
#   algorithm tests.
# * **ROC input.** Our ROC curves have one point per distinct score (order-independent); the thesis ranks
#   examples one by one, which makes mixed ties order-dependent.
# * **Fig. 5.1 text** swaps which model makes more FN and FP in one sentence; the histograms (and ours) show
#   En → more FN, Ep → more FP.
# * **Stand-ins.** By default phantom patches and a small CNN replace PCam→CAMELYON16 and the G-CNN; digits and a
#   logistic regression replace CIFAR-10 and a fine-tuned ResNet50. With `data_source=real` the real data sets
#   are used; the CNN is still our small patch classifier (the thesis's G-CNN settings are not given), and the
#   ResNet50 is ImageNet-initialised only when `cifar_weights` names a local torchvision state dict (nothing is
#   downloaded); early-stopping patience (`cifar_early_stopping_patience`) is not stated in the thesis.
#
# ## Try it
# * `--set positive_digit=1` (an easy digit): all curves saturate and separability vanishes.
# * `--set imbalance=50`: the precision curve of both models drops, ROC does not move.
# * `--set n_recall_points=1001`: the PR-AUC of Algorithms 4–5 barely changes (thesis §5.9).

# %% [markdown]
# ## Provenance

# %%
notebook.provenance()
