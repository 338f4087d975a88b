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
# # Data: datasets, phantoms, and how the phantoms follow the real tables
#
# The five chapters use seven real datasets. Two small real tables ship with the book (the ChestX-ray14
# label table and its bounding-box list); the large image collections are fetched on demand by
# `medeval data fetch ID`, and two (MURA, ADNI) need a registration. So that every page runs offline on
# a laptop, the `default` profiles use **phantoms**: deterministic generators whose ground truth (masks,
# boxes, instance labels) is known exactly.
#
# This page lists the datasets, shows the phantoms, and checks that the chest phantoms follow the real
# ChestX-ray14 statistics: the label frequencies and co-occurrences of the 112,120-image label table and
# the positions and sizes of the 984 NIH boxes.
#
# **Time to run:** the table below the parameters gives the last recorded wall time of each profile; `full` also
# hashes the datasets present on this machine, which takes as long as reading them.

# %% tags=["parameters", "remove-cell"]
profile = "default"
seed = None
device = None
scheduler = None
max_workers = None
n_label_samples = None
n_box_phantoms = None
box_image_size = None
gallery_image_size = None
slide_size = None
top_pairs = None
check_local_data = None

# %%
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from medeval import plots
from medeval.experiments import data_appendix
from medeval.runtime import notebook

P = notebook.setup("A1-data", globals())
P

# %%
notebook.time_to_run_table()

# %% [markdown]
# ## The datasets
#
# Every dataset is described in `data_manifest.yaml` (origin, licence, files with checksums, how to
# obtain it, and the stand-in the default profile uses). `access` is `shipped` (in `data/` of the
# repository), `bundled` (inside an installed package), `auto` (public: `medeval data fetch ID`),
# `manual` (public after registration: `fetch` prints how) or `private` (not obtainable).

# %%
manifest = data_appendix.manifest_table()
notebook.record("n_datasets", len(manifest))
notebook.record_table("manifest", manifest[["id", "access", "size"]])
with pd.option_context("display.max_colwidth", 80):
    display(manifest.set_index("id"))

# %%
if P.check_local_data:
    display(data_appendix.local_status_table())
else:
    display(Markdown("Run `medeval data verify` (or this page with `--set check_local_data=true`) to see "
                     "which datasets are present on your machine."))

# %% [markdown]
# ## Chest X-ray phantoms
#
# `medeval.data.phantoms.chest.generate_chest_phantoms` draws radiograph-like images: body outline, dark
# lung fields with vessel markings, ribs, mediastinum and heart, noise. Each of the 14 ChestX-ray14
# findings has its own renderer (enlarged heart for Cardiomegaly, basal opacity with a meniscus for
# Effusion, small and large round opacities for Nodule and Mass, patchy opacities for Infiltration, a
# lucent rim without lung markings for Pneumothorax, ...). Every lesion comes with an exact pixel mask
# (red) and the tight box around it (yellow). One phantom per finding:

# %%
gallery = data_appendix.finding_gallery(P)
fig = plots.image_gallery([g[1] for g in gallery], masks=[g[2] for g in gallery], boxes=[[g[3]] for g in gallery],
                          titles=[g[0] for g in gallery], ncols=7, size=2.0)

# %% [markdown]
# ## Label sets follow the real table
#
# A phantom's label set is a whole row drawn from the real label table, so the frequencies, the number of
# findings per image and the co-occurrences follow the real ones up to sampling error. With `prevalence`
# given (e.g. a balanced Cardiomegaly task) the rows are re-weighted by raking so the named findings hit
# their targets.

# %%
labels = data_appendix.label_comparison(P)
for key in ("max_abs_frequency_difference", "max_abs_z", "frequency_correlation", "cooccurrence_correlation",
            "max_abs_labels_per_image_difference", "n_phantom"):
    notebook.record(key, labels[key])
notebook.record_table("label_frequency", labels["frequency"])
labels["frequency"].round(4)

# %%
fig, axes = plots.new_axes(ncols=2, width=5.0, height=3.6)
freq = labels["frequency"]
x = np.arange(len(freq))
axes[0].bar(x - 0.2, freq["real"], width=0.4, label=f"real (n = {labels['n_real']:,})")
axes[0].bar(x + 0.2, freq["phantom"], width=0.4, label=f"phantoms (n = {labels['n_phantom']:,})")
axes[0].set_xticks(x, freq["finding"], rotation=90)
axes[0].set_ylabel("prevalence")
axes[0].legend(fontsize=7)
per_image = labels["labels_per_image"]
axes[1].bar(per_image["n_labels"] - 0.2, per_image["real"], width=0.4, label="real")
axes[1].bar(per_image["n_labels"] + 0.2, per_image["phantom"], width=0.4, label="phantoms")
axes[1].set_yscale("log")
axes[1].set_xlabel("findings per image")
axes[1].set_ylabel("fraction of images")
axes[1].legend(fontsize=7)

# %%
notebook.record_table("top_pairs", labels["top_pairs"])
labels["top_pairs"].round(4)

# %%
display(Markdown(
    f"Over {labels['n_phantom']:,} phantom label sets the largest absolute difference in a finding's "
    f"prevalence is {labels['max_abs_frequency_difference']:.4f} (largest |z| = {labels['max_abs_z']:.2f} "
    f"binomial standard errors); the prevalences correlate at r = {labels['frequency_correlation']:.4f}, the "
    f"91 pairwise co-occurrence frequencies at r = {labels['cooccurrence_correlation']:.4f}, and the "
    f"findings-per-image histograms differ by at most {labels['max_abs_labels_per_image_difference']:.4f}."
))

# %% [markdown]
# ## Boxes follow the NIH box list
#
# For the 8 findings with NIH boxes, a phantom's lesion region is one real box of that finding (scaled
# from 1,024 px, its centre and size slightly jittered); the reported box is the tight box of the rendered
# mask. The other 6 findings use documented anatomical priors (`ANATOMICAL_PRIORS`). Box centres and
# sizes as fractions of the image side:

# %%
boxes = data_appendix.box_comparison(P)
for key in ("max_abs_mean_centre_difference", "max_abs_median_log_size_ratio", "mean_centre_correlation"):
    notebook.record(key, boxes[key])
boxes["summary"].round(3)

# %%
samples = boxes["samples"]
findings = sorted(samples["finding"].unique())
fig, axes = plots.new_axes(ncols=4, nrows=2, width=2.6, height=2.6)
for ax, finding in zip(axes, findings, strict=False):
    for source, marker in (("real", "o"), ("phantom", "x")):
        s = samples[(samples["finding"] == finding) & (samples["source"] == source)]
        ax.scatter(s["cx"], s["cy"], s=6, marker=marker, alpha=0.5, label=source)
    ax.set_xlim(0, 1)
    ax.set_ylim(1, 0)
    ax.set_title(finding, fontsize=8)
    ax.set_aspect("equal")
axes[0].legend(fontsize=6)
fig.suptitle("box centres (image-relative; y down)", fontsize=9)

# %%
fig, axes = plots.new_axes(ncols=2, width=5.0, height=3.2)
for ax, col in zip(axes, ("w", "h"), strict=False):
    data = [samples[(samples["finding"] == f) & (samples["source"] == src)][col]
            for f in findings for src in ("real", "phantom")]
    ax.boxplot(data, showfliers=False)
    ax.set_xticks(np.arange(1, 2 * len(findings) + 1, 2) + 0.5, findings, rotation=90, fontsize=7)
    ax.set_ylabel(f"box {col} / image side (real | phantom)")

# %%
display(Markdown(
    f"The per-class mean box centres of the phantoms are within {boxes['max_abs_mean_centre_difference']:.3f} "
    f"of the image side of the NIH means (correlation over the 16 mean coordinates r = "
    f"{boxes['mean_centre_correlation']:.3f}). Median box sizes differ by a factor of at most "
    f"{np.exp(boxes['max_abs_median_log_size_ratio']):.2f}: lesions are drawn inside their region (an "
    "ellipse inscribed in the box, a pneumothorax clipped to the lung field, a plate-like atelectasis band), "
    "so their tight boxes can be smaller than the real boxes."
))

# %% [markdown]
# ## Whole-slide phantoms
#
# Chapter 4's multi-class lymph-node data (MLNTO) is private, so its stand-in is
# `medeval.data.phantoms.slide`: H&E-like tissue with three classes, C (tumour: dense, dark, large nuclei),
# ¬C (lymph node, with paler germinal-centre-like regions that resemble C) and O (background, fat with
# thin membranes, the pink fibrous capsule), with red "common structures" in every class. The class
# prior follows MLNTO's (about 78 % O). Any region can be rendered alone, so patches of very large slides
# are streamed with `iter_slide_patches`.

# %%
slide = data_appendix.slide_example(P)
fractions = notebook.record("slide_class_fractions", slide.class_fractions)
fig, axes = plots.new_axes(ncols=2, width=4.0, height=4.0)
axes[0].imshow(slide.image)
axes[0].set_title("slide phantom", fontsize=9)
im = axes[1].imshow(slide.mask, cmap="viridis", vmin=0, vmax=2, interpolation="nearest")
axes[1].set_title("mask: 0 = O, 1 = ¬C, 2 = C", fontsize=9)
for ax in axes:
    ax.axis("off")
display(Markdown(
    f"Class fractions of this slide: O {fractions['O']:.3f}, ¬C {fractions['notC']:.3f}, C {fractions['C']:.3f} "
    "(MLNTO training mean, thesis Table 2.2: O 0.783, ¬C 0.106, C 0.111)."
))

# %% [markdown]
# ## Checks: the stand-ins follow the real data
#
# This page reproduces no paper, so it has no claims: its table checks that the stand-ins follow the real data
# they replace (the thresholds are in `medeval.experiments.data_appendix`). Checks do not count in the scorecard.

# %%
notebook.checks_display(notebook.record_checks(data_appendix.stand_in_checks(labels, boxes, fractions)))

# %% [markdown]
# ## Try it
#
# - `medeval run A1-data --set n_label_samples=200000`: how do the largest |z| and the largest absolute
#   difference move with ten times more phantom label sets, and why should they move differently?
# - Draw a balanced Cardiomegaly set, `generate_chest_phantoms(200, prevalence={"Cardiomegaly": 0.5})`, and
#   check which other findings became more frequent (raking keeps the co-occurrences).
# - Add a confounder (`confounder="marker", confounder_strength=0.8`) and look at where a classifier's
#   saliency goes.
#
# ## Provenance

# %%
notebook.provenance()
