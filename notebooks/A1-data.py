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
# (app-data)=
# # Appendix A. Datasets, phantoms and how the phantoms follow the real tables
#
# The chapters use ten datasets. Two small real tables ship with the book: the ChestX-ray14 label table and its
# bounding-box list {cite:p}`wang2017chestxray8`. The large image collections are fetched on demand by
# `medeval data fetch ID`, two of them (MURA, ADNI) need a registration and one (MLNTO) is private. So that every
# page runs offline on a laptop, the `default` profiles use **{term}`phantoms <phantom>`**: deterministic generators whose ground
# truth (masks, boxes, {term}`instance` labels) is known exactly.
#
# This page lists the datasets, shows the phantoms, states the rules by which the chest phantoms are generated,
# and checks that they follow the real ChestX-ray14 statistics: the label frequencies and co-occurrences of the
# 112,120-image label table and the positions and sizes of the 984 NIH boxes.
#
# ## What you will learn
#
# - Find, for every dataset of the book, its origin, licence, size, how to obtain it, the chapters that use it
#   and the phantom that stands in for it.
# - State how a chest phantom's label set and lesion boxes are drawn from the real tables, and how a target
#   prevalence is imposed by raking.
# - Judge whether phantom label sets follow the real label table, with binomial z-scores and co-occurrence
#   correlations.
# - Compare phantom boxes with the NIH box list by centre and size, and explain why the tight boxes of rendered
#   lesions are smaller.
# - Use the whole-slide phantom that stands in for the private lymph-node data of chapter 4.
#
# ## Prerequisites
#
# Binomial proportions and their standard errors; the box convention $(x, y, w, h)$ with the top-left corner and
# the width and height in pixels. The chapters that use each dataset are linked in the list below.
#
# **Time to run.** The table gives the last recorded wall time of each profile; `full` also hashes the datasets
# present on this machine, which takes as long as reading them.

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

# %% tags=["remove-input"]
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from medeval import plots
from medeval.experiments import data_appendix
from medeval.runtime import notebook

P = notebook.setup("A1-data", globals())
REAL, PHANTOM = plots.color("data source", "real"), plots.color("data source", "phantom")

# %% tags=["remove-input"]
notebook.time_to_run_table()

# %% [markdown]
# ## Parameters
#
# The sample sizes of the comparisons and the image sizes of the phantoms;
# {class}`medeval.experiments.data_appendix_params.Params` holds their ranges.

# %% tags=["remove-input"]
notebook.parameters_table()

# %% [markdown]
# ## The datasets
#
# Every dataset is described in `data_manifest.yaml` (origin, licence, files with checksums, how to obtain it, and
# the stand-in the default profile uses). `access` is `shipped` (in `data/` of the repository), `bundled` (inside an
# installed package), `auto` (public: `medeval data fetch ID`), `manual` (public after registration: `fetch` prints
# how) or `private` (not obtainable). The datasets, their sources and the chapters that use them:
#
# - **NIH ChestX-ray14** {cite:p}`wang2017chestxray8`: the label table (`chestxray14-labels`) in {numref}`Chapter %s <ch-mil>` and
#   {numref}`Chapter %s <ch-ml>`, the NIH box list (`chestxray14-boxes`) in {numref}`Chapter %s <ch-mil>` and {numref}`Chapter %s <ch-rodeo>`, the images
#   (`chestxray14-images`) in {numref}`Chapter %s <ch-mil>` and {numref}`Chapter %s <ch-ml>`; the chest phantoms below stand in for the images.
# - **MURA** musculoskeletal radiographs {cite:p}`rajpurkar2018mura`: {numref}`Chapter %s <ch-mil>`.
# - **PASCAL VOC 2005** {cite:p}`everingham2006pascal2005`: {numref}`Chapter %s <ch-mil>`.
# - **ADNI** regional grey-matter volumes {cite:p}`jack2008adni`: {numref}`Chapter %s <ch-eve>`.
# - **WDBC**, Wisconsin diagnostic breast cancer {cite:p}`street1995wdbc`: {numref}`Chapter %s <ch-eve>` and {ref}`app-rerun`.
# - **UCI optical digits** (scikit-learn's digits) {cite:p}`alpaydin1998digits`: {numref}`Chapter %s <ch-mil>` and {numref}`Chapter %s <ch-em>`.
# - **PatchCamelyon** {cite:p}`veeling2018pcam`: {numref}`Chapter %s <ch-cd>` and {numref}`Chapter %s <ch-em>`.
# - **CAMELYON16** {cite:p}`bejnordi2017camelyon16`: {numref}`Chapter %s <ch-cd>` and {numref}`Chapter %s <ch-em>`.
# - **MLNTO**, the private lymph-node data of {cite:t}`reshma2021histology`: {numref}`Chapter %s <ch-cd>`; the slide phantom below
#   stands in for it.
# - **CIFAR-10** {cite:p}`krizhevsky2009cifar`: {numref}`Chapter %s <ch-em>`.

# %%
manifest = data_appendix.manifest_table()

# %% tags=["hide-input"]
notebook.record("n_datasets", len(manifest))
notebook.record_table("manifest", manifest[["id", "access", "size"]])
display(notebook.show_table(
    manifest[["id", "title", "access", "size", "used_by"]],
    caption="The datasets of data_manifest.yaml: what they are, how they are obtained, their size on disk and "
    "the pages that use them.",
    labels={"id": "dataset id", "used_by": "used by"}))
notebook.show_table(manifest[["id", "licence", "stand_in"]],
                    caption="Licence of every dataset and the stand-in the default profiles use instead.",
                    labels={"id": "dataset id", "stand_in": "stand-in (default profile)"})

# %% tags=["hide-input"]
if P.check_local_data:
    display(notebook.show_table(data_appendix.local_status_table(),
                                caption="Datasets present on this machine (medeval data verify --quick: sizes; "
                                "medeval data verify also compares hashes).",
                                labels={"dataset_id": "dataset id"}))
else:
    display(Markdown("Run `medeval data verify` (or this page with `--set check_local_data=true`) to see "
                     "which datasets are present on your machine."))

# %% [markdown]
# ## Chest X-ray phantoms
#
# {func}`medeval.data.phantoms.chest.generate_chest_phantoms` draws radiograph-like images: body outline, dark
# lung fields with vessel markings, ribs, mediastinum and heart, noise. Each of the 14 ChestX-ray14 findings has
# its own renderer (enlarged heart for Cardiomegaly, basal opacity with a meniscus for Effusion, small and large
# round opacities for Nodule and Mass, patchy opacities for Infiltration, a lucent rim without lung markings for
# Pneumothorax, ...). Every lesion comes with an exact pixel mask and the tight box around it;
# {numref}`fig-data-chest-gallery` shows one phantom per finding.

# %%
gallery = data_appendix.finding_gallery(P)

# %% tags=["hide-input"]
fig = plots.image_gallery([g[1] for g in gallery], masks=[g[2] for g in gallery], boxes=[[g[3]] for g in gallery],
                          titles=[g[0].replace("_", " ") for g in gallery], ncols=5, size=1.6)


def finding_name(label):
    """A finding's name in a sentence: 'pleural thickening' for 'Pleural_Thickening'."""
    return label.replace("_", " ").lower()


def percent(v):
    """A share as a percentage with two significant digits (no exponent)."""
    return f"{100 * v:.2g}" if v < 0.1 else f"{100 * v:.0f}"


mask_share = {name: float(np.mean(mask > 0)) for name, _, mask, _ in gallery}
smallest, largest = min(mask_share, key=mask_share.get), max(mask_share, key=mask_share.get)
plots.glue_figure("fig-data-chest-gallery", fig, takeaway=(
    f"The lesion masks of these {len(gallery)} phantoms cover from {percent(mask_share[smallest])} % of the image "
    f"({finding_name(smallest)}) to {percent(mask_share[largest])} % ({finding_name(largest)})."))

# %% [markdown]
# ```{glue:figure} fig-data-chest-gallery
# :name: fig-data-chest-gallery
# :alt: A grid of fourteen grey-scale chest radiograph phantoms, one per ChestX-ray14 finding named above each image; on each, the lesion's mask is outlined in red-orange and its tight bounding box drawn in yellow.
#
# One chest phantom per ChestX-ray14 finding (that finding only). Red-orange contour: the exact pixel mask of the
# lesion; yellow rectangle: the tight box around the mask, the box that the localisation metrics are scored
# against. {glue:md}`fig-data-chest-gallery-takeaway:myst`
# ```

# %% [markdown]
# (data-method)=
# ## How the chest phantoms are generated
#
# **Label sets.** Let $\boldsymbol y_1, \dots, \boldsymbol y_R \in \{0, 1\}^{14}$ be the rows of the real label
# table ($R = 112{,}120$ images, one bit per finding). Phantom $i$ takes a whole row, drawn with replacement:
#
# $$
# \boldsymbol y^{(i)} = \boldsymbol y_{r_i}, \qquad P(r_i = r) = w_r, \qquad w_r = \frac{1}{R}
# \quad\text{unless a prevalence is imposed.}
# $$ (eq-data-label-sampling)
#
# With uniform weights the label sets follow the empirical joint distribution of the table, so the prevalences,
# the number of findings per image and every co-occurrence match the real ones up to sampling error. Implemented
# by {func}`medeval.data.phantoms.chest.sample_label_sets` (the labels {func}`~medeval.data.phantoms.chest.generate_chest_phantoms`
# renders).
#
# **Imposed prevalences (raking).** With target prevalences $p_f$ for some findings $f$ (e.g. a balanced
# Cardiomegaly task, $p_{\text{Cardiomegaly}} = 0.5$), the weights of {eq}`eq-data-label-sampling` are found by
# iterative proportional fitting (raking; {cite:t}`deming1940raking`): starting from $w_r = 1/R$, each named finding
# in turn rescales
#
# $$
# w_r \leftarrow w_r \times
# \begin{cases} p_f / q_f & \text{if } y_{rf} = 1,\\ (1 - p_f) / (1 - q_f) & \text{if } y_{rf} = 0,\end{cases}
# \qquad q_f = \sum_{r=1}^{R} w_r\, y_{rf},
# $$ (eq-data-raking)
#
# until every $|q_f - p_f| < 10^{-12}$. The limit is the re-weighting of the table closest to uniform in
# Kullback–Leibler divergence that has the target margins, so co-occurrences with the other findings are kept as far
# as the targets allow. Implemented by {func}`medeval.data.phantoms.chest.raked_row_weights`.
#
# **Statistics compared.** For $N$ label sets $\boldsymbol y_1, \dots, \boldsymbol y_N$ (real or phantom), the
# prevalence of finding $f$, the co-occurrence of findings $f$ and $g$ and the fraction of images with $k$
# findings are
#
# $$
# \pi_f = \frac{1}{N}\sum_{i=1}^{N} y_{if}, \qquad
# \pi_{fg} = \frac{1}{N}\sum_{i=1}^{N} y_{if}\, y_{ig}, \qquad
# h_k = \frac{1}{N}\sum_{i=1}^{N} \mathbb 1\Bigl[\textstyle\sum_{f} y_{if} = k\Bigr].
# $$ (eq-data-label-statistics)
#
# Implemented by {func}`medeval.data.phantoms.chest.label_statistics`. A phantom prevalence $\hat\pi_f$ from $n$ draws
# is compared with the real $\pi_f$ in binomial standard errors of the phantom estimate,
#
# $$
# z_f = \frac{\hat\pi_f - \pi_f}{\sqrt{\pi_f\,(1 - \pi_f)/n}},
# $$ (eq-data-z)
#
# which is approximately standard normal when the phantoms follow the table; the page's check asks
# $\max_f |z_f| < 5$ over the 14 findings, and Pearson's $r$ over the 91 pairs $\pi_{fg}$, $f < g$, above 0.9.
# Implemented by {func}`medeval.experiments.data_appendix.label_comparison`.
#
# **Lesion boxes.** For the 8 findings with NIH boxes, let $\mathcal B_f$ be the boxes $(x_b, y_b, w_b, h_b)$ of
# finding $f$ in the NIH list, divided by the 1,024-pixel image side. A phantom's lesion region is one of them,
# picked uniformly, with its centre jittered by Gaussian noise and its size by log-normal factors:
#
# $$
# \begin{aligned}
# b = (x_b, y_b, w_b, h_b) &\sim \mathcal U(\mathcal B_f), \\
# (c_x,\ c_y) &= \bigl(x_b + \tfrac{w_b}{2} + \varepsilon_x,\ y_b + \tfrac{h_b}{2} + \varepsilon_y\bigr), &
# \varepsilon_x, \varepsilon_y &\sim \mathcal N(0,\, 0.015^2),\\
# (w,\ h) &= \bigl(w_b\, e^{\eta_w},\ h_b\, e^{\eta_h}\bigr), & \eta_w, \eta_h &\sim \mathcal N(0,\, 0.08^2),
# \end{aligned}
# $$ (eq-data-box)
#
# with the centre clipped to $[0.02, 0.98]$: a kernel density estimate of the real box distribution, in fractions
# of the image side. The lesion is drawn inside this region and the reported box is the tight box of the rendered
# mask. The other 6 findings use the anatomical priors of `medeval.data.phantoms.chest.ANATOMICAL_PRIORS`.
# Implemented inside {func}`medeval.data.phantoms.chest.generate_chest_phantoms`; compared with the NIH list by
# {func}`medeval.experiments.data_appendix.box_comparison`.

# %% [markdown]
# ## Label sets follow the real table
#
# We draw `n_label_samples` label sets by {eq}`eq-data-label-sampling` and compare their statistics
# {eq}`eq-data-label-statistics` with those of the real table.

# %%
labels = data_appendix.label_comparison(P)

# %% tags=["hide-input"]
for key in ("max_abs_frequency_difference", "max_abs_z", "frequency_correlation", "cooccurrence_correlation",
            "max_abs_labels_per_image_difference", "n_phantom"):
    notebook.record(key, labels[key])
notebook.record_table("label_frequency", labels["frequency"])
notebook.show_table(
    labels["frequency"],
    caption=f"Prevalence of each finding in the real label table ({labels['n_real']:,} images) and in "
    f"{labels['n_phantom']:,} phantom label sets; z in binomial standard errors of the phantom estimate.",
    formats={"real": "{:.2%}", "phantom": "{:.2%}", "abs_diff": "{:.2%}", "z": "{:+.2f}"},
    labels={"real": "real prevalence", "phantom": "phantom prevalence", "abs_diff": "|difference|"})

# %% tags=["hide-input"]
fig, axes = plots.new_axes(ncols=2, width=4.0, height=3.6)
freq = labels["frequency"]
x = np.arange(len(freq))
axes[0].bar(x - 0.2, freq["real"], width=0.4, color=REAL, label=f"real (n = {labels['n_real']:,})")
axes[0].bar(x + 0.2, freq["phantom"], width=0.4, color=PHANTOM, label=f"phantoms (n = {labels['n_phantom']:,})")
axes[0].set_xticks(x, [f.replace("_", " ") for f in freq["finding"]], rotation=90)
axes[0].set_ylabel("prevalence")
per_image = labels["labels_per_image"]
axes[1].bar(per_image["n_labels"] - 0.2, per_image["real"], width=0.4, color=REAL)
axes[1].bar(per_image["n_labels"] + 0.2, per_image["phantom"], width=0.4, color=PHANTOM)
axes[1].set_yscale("log")
axes[1].set_xlabel("findings per image")
axes[1].set_ylabel("fraction of images")
fig.legend(loc="outside upper center", ncols=2, frameon=False)
worst = freq.loc[freq["z"].abs().idxmax()]
most_real, most_phantom = (int(per_image.loc[per_image[col] > 0, "n_labels"].max()) for col in ("real", "phantom"))
plots.glue_figure("fig-data-label-frequency", fig, takeaway=(
    f"Over {labels['n_phantom']:,} phantom label sets, no prevalence differs from the real table's by more than "
    f"{labels['max_abs_frequency_difference']:.2g} (largest $|z|$ = {abs(worst['z']):.2f}, "
    f"{finding_name(worst['finding'])}), and the findings-per-image fractions by at most "
    f"{labels['max_abs_labels_per_image_difference']:.2g}; "
    + (f"both reach {most_real} findings on an image." if most_real == most_phantom else
       f"phantoms reach {most_phantom} findings on an image, the real table {most_real}.")))

# %% [markdown]
# ```{glue:figure} fig-data-label-frequency
# :name: fig-data-label-frequency
# :alt: Left, paired bars of the prevalence of each of the 14 findings in the real label table and in the phantom label sets; right, paired bars on a log scale of the fraction of images with 0, 1, 2 and more findings. Real and phantom bars have nearly the same heights everywhere.
#
# Phantom label sets against the real ChestX-ray14 label table: prevalence of each finding (left) and the
# distribution of the number of findings per image (right, log scale).
# {glue:md}`fig-data-label-frequency-takeaway:myst`
# ```
#
# {numref}`fig-data-label-frequency` shows the prevalences and the findings-per-image histogram side by side; the
# table below lists the most frequent pairs of findings, whose co-occurrence $\pi_{fg}$ the phantoms inherit from
# the rows they copy.

# %% tags=["hide-input"]
notebook.record_table("top_pairs", labels["top_pairs"])
notebook.show_table(
    labels["top_pairs"],
    caption=f"The {len(labels['top_pairs'])} most frequent co-occurring pairs of findings in the real table: "
    "fraction of images showing both, real and phantom.",
    formats={"real": "{:.2%}", "phantom": "{:.2%}"},
    labels={"pair": "pair of findings", "real": "real", "phantom": "phantom"})

# %% tags=["hide-input"]
display(Markdown(
    f"Phantom and real prevalences correlate at r = {labels['frequency_correlation']:.4f}, the 91 pairwise "
    f"co-occurrence frequencies at r = {labels['cooccurrence_correlation']:.4f}."
))

# %% [markdown]
# ## Boxes follow the NIH box list
#
# For each of the 8 findings with NIH boxes we render `n_box_phantoms` phantoms that show only that finding, with
# lesion regions drawn by {eq}`eq-data-box`, and compare the tight boxes of their masks with the NIH boxes. Box
# centres $(c_x, c_y)$ and sizes $(w, h)$ are fractions of the image side.

# %%
boxes = data_appendix.box_comparison(P)

# %% tags=["hide-input"]
for key in ("max_abs_mean_centre_difference", "max_abs_median_log_size_ratio", "mean_centre_correlation"):
    notebook.record(key, boxes[key])
summary = boxes["summary"].copy()
summary.columns = [f"{col}_{stat}" for col, stat in summary.columns]
summary = summary.reset_index()
stat_names = {"mean": "mean", "std": "SD"}
notebook.show_table(
    summary, caption="Box centre (cx, cy) and size (w, h) per finding, NIH boxes (real) and tight boxes of the "
    "rendered phantom lesions: mean and SD, as fractions of the image side.",
    formats={c: "{:.3f}" for c in summary.columns if c not in ("finding", "source")},
    labels={c: f"{c.split('_')[0]} {stat_names[c.split('_')[1]]}" for c in summary.columns
            if c not in ("finding", "source")})

# %% tags=["hide-input"]
samples = boxes["samples"]
findings = sorted(samples["finding"].unique())
fig, axes = plots.new_axes(ncols=4, nrows=2, width=2.0, height=2.2)
for ax, finding in zip(axes, findings, strict=False):
    for source, marker, colour, alpha in (("real", "o", REAL, 0.35), ("phantom", "x", PHANTOM, 0.9)):
        s = samples[(samples["finding"] == finding) & (samples["source"] == source)]
        ax.scatter(s["cx"], s["cy"], s=10, marker=marker, alpha=alpha, color=colour, linewidths=0.9)
    ax.set_xlim(0, 1)
    ax.set_ylim(1, 0)
    ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
    ax.set_yticks([0, 0.5, 1], ["0", "0.5", "1"])
    ax.set_title(finding)
    ax.set_aspect("equal")
for ax in axes[4:]:
    ax.set_xlabel("$c_x$")
for ax in axes[::4]:
    ax.set_ylabel("$c_y$")
fig.legend(handles=[plt.Line2D([], [], color=REAL, marker="o", linestyle="", label="real (NIH)"),
                    plt.Line2D([], [], color=PHANTOM, marker="x", linestyle="", label="phantom")],
           loc="outside lower center", ncols=2, frameon=False)
centres = samples.groupby(["source", "finding"])[["cx", "cy"]].mean()
centre_gap = (centres.loc["phantom"] - centres.loc["real"]).abs().stack()  # (finding, coordinate) -> |difference|
gap_finding, gap_coordinate = centre_gap.idxmax()
plots.glue_figure("fig-data-box-centres", fig, takeaway=(
    f"Per finding, the phantoms' mean box centre lies within {centre_gap.max():.3f} of the image side of the NIH "
    f"mean (largest for {finding_name(gap_finding)}'s $c_{gap_coordinate[1]}$); over the {len(centre_gap)} mean "
    f"coordinates r = {boxes['mean_centre_correlation']:.3f}."))

# %% [markdown]
# ```{glue:figure} fig-data-box-centres
# :name: fig-data-box-centres
# :alt: Eight square scatter plots, one per finding with NIH boxes, of box centres in image-relative coordinates with the vertical axis pointing down: NIH box centres as blue circles and phantom box centres as orange crosses, which occupy the same regions of the image.
#
# Box centres of the NIH boxes and of the phantom lesions per finding, as fractions of the image side ($c_y$ grows
# downwards, as in the image; the patient's right lung is on the left).
# {glue:md}`fig-data-box-centres-takeaway:myst`
# ```

# %% tags=["hide-input"]
fig, axes = plots.new_axes(ncols=1, nrows=2, width=8.0, height=2.4, sharex=True)
for ax, col in zip(axes, ("w", "h"), strict=False):
    for k, (source, colour) in enumerate((("real", REAL), ("phantom", PHANTOM))):
        data = [samples[(samples["finding"] == f) & (samples["source"] == source)][col] for f in findings]
        parts = ax.boxplot(data, positions=np.arange(len(findings)) + (k - 0.5) * 0.36, widths=0.3,
                           showfliers=False, patch_artist=True)
        for box in parts["boxes"]:
            box.set(facecolor=colour, alpha=0.6, edgecolor=colour)
        for item in parts["medians"]:
            item.set(color="black")
    ax.set_ylabel(f"box {col} / side")
axes[1].set_xticks(np.arange(len(findings)), findings, rotation=30, ha="right")
fig.legend(handles=[Patch(color=REAL, alpha=0.6, label="real (NIH)"), Patch(color=PHANTOM, alpha=0.6,
                                                                           label="phantom")],
           loc="outside upper center", ncols=2, frameon=False)
medians = samples.groupby(["source", "finding"])[["w", "h"]].median()
size_ratio = (medians.loc["phantom"] / medians.loc["real"]).stack()  # (finding, w or h) -> phantom / NIH median
ratio_finding, ratio_side = np.log(size_ratio).abs().idxmax()
plots.glue_figure("fig-data-box-sizes", fig, takeaway=(
    f"In {int((size_ratio < 1).sum())} of the {len(size_ratio)} finding × width/height comparisons the phantoms' "
    f"median lies below the NIH median; the largest gap is {finding_name(ratio_finding)}'s "
    f"{'width' if ratio_side == 'w' else 'height'}, {size_ratio[(ratio_finding, ratio_side)]:.2f} times the NIH "
    "median."))

# %% [markdown]
# ```{glue:figure} fig-data-box-sizes
# :name: fig-data-box-sizes
# :alt: Two rows of paired box plots, width on top and height below, as fractions of the image side, for the eight findings with NIH boxes; blue boxes for the NIH boxes, orange boxes for the phantom lesions.
#
# Box widths (top) and heights (bottom) of the NIH boxes and of the tight boxes of the phantom lesions, per finding
# (box plots without outliers). {glue:md}`fig-data-box-sizes-takeaway:myst`
# ```
#
# {numref}`fig-data-box-centres` and {numref}`fig-data-box-sizes` compare the boxes finding by finding. Lesions are
# drawn inside their region (an ellipse inscribed in the box, a pneumothorax clipped to the lung field, a plate-like
# atelectasis band), so their tight boxes can be smaller than the real boxes.

# %% [markdown]
# ## Whole-slide phantoms
#
# Chapter 4's multi-class lymph-node data (MLNTO, {cite:t}`reshma2021histology`) is private, so its stand-in in
# {numref}`Chapter %s <ch-cd>` is {mod}`medeval.data.phantoms.slide`: H&E-like tissue with three classes, {term}`C <O>` (tumour: dense, dark,
# large nuclei), ¬C (lymph node, with paler germinal-centre-like regions that resemble C) and O (background, fat
# with thin membranes, the pink fibrous capsule), with red "common structures" in every class. The class prior
# follows MLNTO's (about 78 % O): a fraction 0.22 of the slide is lymph node (C and ¬C) and 0.11 is tumour. Any
# region can be rendered alone, so patches of very large slides are streamed with
# {func}`medeval.data.phantoms.slide.iter_slide_patches`. {numref}`fig-data-slide` shows one slide and its mask.

# %%
slide = data_appendix.slide_example(P)
fractions = notebook.record("slide_class_fractions", slide.class_fractions)

# %% tags=["hide-input"]
classes = ("O", "notC", "C")
fig, axes = plots.new_axes(ncols=2, width=3.6, height=3.9)
axes[0].imshow(slide.image)
axes[0].set_title("slide phantom")
axes[1].imshow(slide.mask, cmap=ListedColormap([plots.color("tissue class", c) for c in classes]), vmin=-0.5,
               vmax=2.5, interpolation="nearest")
axes[1].set_title("pixel classes")
for ax in axes:
    ax.axis("off")
fig.legend(handles=[Patch(color=plots.color("tissue class", c), label=name)
                    for c, name in zip(classes, ("O (other)", "¬C (lymph node)", "C (tumour)"), strict=True)],
           loc="outside lower center", ncols=3, frameon=False)
plots.glue_figure("fig-data-slide", fig, takeaway=(
    f"This slide's class fractions are O {fractions['O']:.3f}, ¬C {fractions['notC']:.3f} and C "
    f"{fractions['C']:.3f}; MLNTO's training mean (thesis Table 2.2) is O 0.783, ¬C 0.106 and C 0.111."))

# %% [markdown]
# ```{glue:figure} fig-data-slide
# :name: fig-data-slide
# :alt: Left, a square H&E-like tissue image with purple lymph-node regions, a darker tumour region and white fatty background; right, its pixel-class mask with O in yellow, ¬C in blue and C in red-orange.
#
# A whole-slide phantom (left) and its exact three-class mask (right): O (background, fat, capsule), ¬C (lymph-node
# tissue) and C (tumour). {glue:md}`fig-data-slide-takeaway:myst`
# ```

# %% [markdown]
# (data-checks)=
# ## Checks: the stand-ins follow the real data
#
# This page reproduces no paper, so it has no claims: its table checks that the stand-ins follow the real data
# they replace, with the statistics of {eq}`eq-data-z` and the box comparison above (the thresholds are in
# {mod}`medeval.experiments.data_appendix`). Checks do not count in the scorecard.

# %% tags=["hide-input"]
notebook.checks_display(notebook.record_checks(data_appendix.stand_in_checks(labels, boxes, fractions)))

# %% [markdown]
# ## Self-check
#
# Five quick questions on this page; each answer explains itself.

# %% tags=["remove-input"]
notebook.self_check()

# %% [markdown]
# ## Exercises
#
# The student version of this page (`medeval student A1-data`) has the same exercises with the solutions removed;
# `medeval grade` runs the checks. The exercises use only the cell below and the label table shipped with the book.

# %% tags=["exercise-setup"]
import numpy as np

from medeval.data.chestxray14 import LABELS, load_labels
from medeval.data.phantoms.chest import (
    generate_chest_phantoms,
    label_statistics,
    raked_row_weights,
    sample_label_sets,
)
from medeval.data.splits import iterative_stratified_kfold, random_kfold

# The real ChestX-ray14 label table as a (112120, 14) 0/1 matrix, columns in LABELS order.
ex_real_labels = load_labels()[list(LABELS)].to_numpy()
# The six-image toy table of the first exercise as a (6, 14) matrix (all other findings 0).
ex_toy_labels = np.zeros((6, len(LABELS)), dtype=np.uint8)
for ex_finding, ex_column in {"Cardiomegaly": [1, 0, 0, 0, 0, 1], "Effusion": [1, 1, 0, 1, 0, 1],
                              "Infiltration": [0, 1, 0, 0, 0, 1]}.items():
    ex_toy_labels[:, LABELS.index(ex_finding)] = ex_column

# %% [markdown]
# ```{exercise} Label statistics and one raking step on a toy table
# :label: ex-data-hand
# :class: by-hand
#
# A toy label table has six images and three findings (every other finding is 0); it is `ex_toy_labels` in the
# setup cell:
#
# | image | Cardiomegaly | Effusion | Infiltration |
# |---|---|---|---|
# | 1 | 1 | 1 | 0 |
# | 2 | 0 | 1 | 1 |
# | 3 | 0 | 0 | 0 |
# | 4 | 0 | 1 | 0 |
# | 5 | 0 | 0 | 0 |
# | 6 | 1 | 1 | 1 |
#
# By hand, with {eq}`eq-data-label-statistics`:
#
# 1. the prevalence $\pi_{\text{Effusion}}$; store it in `ex_hand_prevalence`;
# 2. the co-occurrence $\pi_{\text{Cardiomegaly},\,\text{Effusion}}$; store it in `ex_hand_cooccurrence`;
# 3. the fraction $h_1$ of images with exactly one finding; store it in `ex_hand_h1`.
#
# Now impose a Cardiomegaly prevalence of $p = 0.5$ by raking, {eq}`eq-data-raking`, starting from uniform weights
# $w_r = 1/6$ (with one named finding, one pass converges):
#
# 4. the new weight of image 1; store it in `ex_hand_weight_image1`;
# 5. the weighted Effusion prevalence $\sum_r w_r\, y_{r,\text{Effusion}}$ under the raked weights; store it in
#    `ex_hand_effusion_raked`.
#
# All five are floats. Why did the Effusion prevalence move although only Cardiomegaly was named?
# ```

# %% [markdown]
# ```{solution-start} ex-data-hand
# :class: dropdown
# ```
# 1. Effusion is present in images 1, 2, 4 and 6: $\pi_{\text{Effusion}} = 4/6 = 0.667$.
# 2. Both findings are present in images 1 and 6: $\pi_{\text{Cardiomegaly},\,\text{Effusion}} = 2/6 = 0.333$.
# 3. The counts per image are 2, 2, 0, 1, 0, 3, so one image (image 4) has exactly one finding: $h_1 = 1/6$.
# 4. $q = 2/6$. Positive rows are scaled by $p / q = 0.5 / (1/3) = 1.5$: $w_1 = 1/6 \times 1.5 = 0.25$.
#    Negative rows are scaled by $(1 - p)/(1 - q) = 0.5 / (2/3) = 0.75$: $w = 1/6 \times 0.75 = 0.125$.
#    Check: $2 \times 0.25 + 4 \times 0.125 = 1$.
# 5. Effusion rows 1 and 6 (positive, 0.25 each) and 2 and 4 (negative, 0.125 each): $0.75$.
#
# Effusion goes from 0.667 to 0.75 because both Cardiomegaly images also show Effusion: raking re-weights whole
# rows, so every finding that co-occurs with the named one comes along. This is how a balanced Cardiomegaly
# task keeps the real co-occurrences.

# %% tags=["solution"]
ex_hand_prevalence = 4 / 6
ex_hand_cooccurrence = 2 / 6
ex_hand_h1 = 1 / 6
ex_hand_weight_image1 = 0.25
ex_hand_effusion_raked = 0.75

# %% tags=["remove-cell", "check"]
ex_stats = label_statistics(ex_toy_labels)
assert np.isclose(ex_hand_prevalence, ex_stats["frequency"]["Effusion"]), \
    "ex_hand_prevalence: count the images with Effusion and divide by the number of images"
assert np.isclose(ex_hand_cooccurrence, ex_stats["cooccurrence"].loc["Cardiomegaly", "Effusion"]), \
    "ex_hand_cooccurrence: the fraction of images with BOTH Cardiomegaly and Effusion"
assert np.isclose(ex_hand_h1, ex_stats["labels_per_image"][1]), \
    "ex_hand_h1: the fraction of images whose row sums to exactly 1"

# %% tags=["remove-cell", "check"]
ex_weights = raked_row_weights(ex_toy_labels, {"Cardiomegaly": 0.5})
assert np.isclose(ex_hand_weight_image1, ex_weights[0]), \
    "ex_hand_weight_image1: image 1 has Cardiomegaly, so its weight 1/6 is multiplied by p / q"
assert np.isclose(ex_hand_effusion_raked, ex_weights @ ex_toy_labels[:, LABELS.index("Effusion")]), \
    "ex_hand_effusion_raked: add the raked weights of the four images that show Effusion"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Prevalence in every test fold: a stratification check
# :label: ex-data-code
# :class: coding
#
# A split is *stratified* when every fold has about the prevalences of the whole set. Write the function that
# checks it: the prevalence $\pi_f$ of {eq}`eq-data-label-statistics`, computed on the images of each test
# fold, in a few lines of numpy.
#
# `ex_code_fold_prevalence(labels, splits)` takes an (N, K) 0/1 label matrix and a list of
# `(train_idx, test_idx)` pairs as returned by the splitters of `medeval.data.splits`, and returns a float array
# of shape `(len(splits), K)` whose row $k$ holds the prevalence of every column among the images of test fold
# $k$. It must work for a test fold of a single image and for a finding that never occurs.
# ```

# %% [markdown]
# ```{solution-start} ex-data-code
# :class: dropdown
# ```
# Index the rows of the test fold and average each column; converting to float first avoids integer arithmetic
# on the `uint8` label matrices the phantoms use.

# %% tags=["solution"]
def ex_code_fold_prevalence(labels, splits):
    """Prevalence of every column of ``labels`` in every test fold.

    labels: (N, K) 0/1 array; splits: list of (train_idx, test_idx) index arrays. Returns a float array of
    shape (len(splits), K); row k is the mean of each column over the rows in test fold k.
    """
    y = np.asarray(labels, dtype=float)
    return np.array([y[np.asarray(test)].mean(axis=0) for _, test in splits])


# %% tags=["remove-cell", "check"]
ex_y = sample_label_sets(600, seed=2)
ex_splits = random_kfold(600, 5, seed=3)
ex_got = np.asarray(ex_code_fold_prevalence(ex_y, ex_splits), dtype=float)
ex_want = np.array([label_statistics(ex_y[test])["frequency"].to_numpy() for _, test in ex_splits])
assert ex_got.shape == (5, len(LABELS)), f"expected shape (5, {len(LABELS)}) (folds x findings), got {ex_got.shape}"
assert np.allclose(ex_got, ex_want), "the fold prevalences differ from label_statistics on each test fold"

# %% tags=["remove-cell", "check"]
# edge cases: a test fold of one image, findings that never occur (all but three columns of the toy table)
ex_splits = [(np.arange(1, 6), np.array([0])), (np.array([0]), np.arange(1, 6))]
ex_got = np.asarray(ex_code_fold_prevalence(ex_toy_labels, ex_splits), dtype=float)
ex_want = np.array([label_statistics(ex_toy_labels[test])["frequency"].to_numpy() for _, test in ex_splits])
assert ex_got.shape == ex_want.shape, f"expected shape {ex_want.shape}, got {ex_got.shape}"
assert np.allclose(ex_got, ex_want), \
    "wrong prevalences for a one-image test fold or for findings that never occur (they must be 0, not NaN)"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Phantoms with a balanced Cardiomegaly prevalence
# :label: ex-data-experiment
# :class: experimental
#
# Generate 400 chest phantoms of 64 x 64 pixels with seed 5 and an imposed Cardiomegaly prevalence of 0.5,
# `generate_chest_phantoms(400, 64, seed=5, prevalence={"Cardiomegaly": 0.5})`, and store the result in
# `ex_exp_phantoms`. Then store
#
# - `ex_exp_ratio`: for each of the 14 findings (in `LABELS` order), the phantom prevalence divided by the real
#   prevalence in `ex_real_labels` (an array of 14 floats);
# - `ex_exp_expected_ratio`: the same ratio with the phantom prevalence replaced by its expectation under the raked
#   weights, `raked_row_weights(ex_real_labels, {"Cardiomegaly": 0.5}) @ ex_real_labels` (14 floats).
#
# Interpret: which findings became at least 1.5 times more frequent, which became rarer, and why? For which
# findings is the ratio from 400 phantoms too noisy to read, and how does `ex_exp_expected_ratio` help?
# ```

# %% [markdown]
# ```{solution-start} ex-data-experiment
# :class: dropdown
# ```
# Raking re-weights whole rows of the real table ({eq}`eq-data-raking`), so findings that co-occur with
# Cardiomegaly follow it: in expectation Effusion becomes about 2.1 times and Edema about 1.6 times as frequent
# (the heart-failure picture of an enlarged heart with fluid), while Pneumothorax (about 0.7), Mass and Nodule
# (about 0.85) become rarer, because the rows without Cardiomegaly, where those findings live, lose weight.
# Cardiomegaly itself goes from 2.5 % to 50 %, a factor of about 20.
#
# From 400 phantoms the ratios of the less frequent findings are mostly noise: Hernia (real prevalence 0.2 %) is
# expected in about one image, Pneumonia and Fibrosis in about six. In this draw Effusion comes out at about 1.85
# (expected 2.1), but Edema at about 1.0 although its expected ratio is 1.6: only 8 of the 400 phantoms show
# Edema. The expected ratio removes the sampling error and shows what the generator aims at; the 400 draws
# scatter around it with binomial standard errors, so read the observed ratios against it, not alone.

# %% tags=["solution"]
ex_exp_phantoms = generate_chest_phantoms(400, 64, seed=5, prevalence={"Cardiomegaly": 0.5})
ex_exp_ratio = ex_exp_phantoms.labels.mean(axis=0) / ex_real_labels.mean(axis=0)
ex_exp_expected_ratio = (raked_row_weights(ex_real_labels, {"Cardiomegaly": 0.5}) @ ex_real_labels
                         / ex_real_labels.mean(axis=0))

# %% tags=["remove-cell", "check"]
assert ex_exp_phantoms.images.shape == (400, 64, 64), \
    f"expected 400 phantoms of 64 x 64 pixels, got images of shape {getattr(ex_exp_phantoms, 'images', None)}"
assert np.array_equal(ex_exp_phantoms.labels,
                      sample_label_sets(400, seed=5, prevalence={"Cardiomegaly": 0.5})), \
    "the phantoms' labels are not those of seed 5 with prevalence {'Cardiomegaly': 0.5}"
ex_k = LABELS.index("Cardiomegaly")
ex_positives = int(ex_exp_phantoms.labels[:, ex_k].sum())
assert ex_positives == int((ex_exp_phantoms.boxes["finding"] == "Cardiomegaly").sum()), \
    "every Cardiomegaly phantom should come with exactly one Cardiomegaly box"
assert abs(ex_positives / 400 - 0.5) < 5 * np.sqrt(0.25 / 400), \
    "the Cardiomegaly prevalence is not near 0.5: was the prevalence imposed?"

# %% tags=["remove-cell", "check"]
ex_k = LABELS.index("Cardiomegaly")
ex_real = ex_real_labels.mean(axis=0)
assert np.shape(ex_exp_ratio) == (len(LABELS),), "ex_exp_ratio must hold one ratio per finding (14 values)"
assert np.allclose(ex_exp_ratio, ex_exp_phantoms.labels.mean(axis=0) / ex_real), \
    "ex_exp_ratio should be the phantom prevalence divided by the real prevalence, finding by finding"
ex_w = raked_row_weights(ex_real_labels, {"Cardiomegaly": 0.5})
assert np.allclose(ex_exp_expected_ratio, ex_w @ ex_real_labels / ex_real), \
    "ex_exp_expected_ratio should be the raked expected prevalence divided by the real prevalence"
assert np.isclose(ex_exp_expected_ratio[ex_k], 0.5 / ex_real[ex_k]), \
    "under the raked weights the Cardiomegaly prevalence must be exactly 0.5"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Random versus stratified folds of phantom label sets
# :label: ex-data-experiment-2
# :class: experimental
#
# Draw 2,000 phantom label sets, `ex_exp2_labels = sample_label_sets(2000, seed=1)`, and split them into 5 folds
# twice: `random_kfold(2000, 5, seed=0)` and the multi-label iterative stratification
# `iterative_stratified_kfold(ex_exp2_labels, 5, seed=0)` that {numref}`Chapter %s <ch-ml>` compares with random folds. For each
# split compute, per finding, the spread of the test-fold prevalences (largest minus smallest over the 5 folds;
# your `ex_code_fold_prevalence` and `np.ptp` do it). Store a dict `ex_exp2_spread` with keys `"random"` and
# `"iterative"`, each an array of 14 spreads in `LABELS` order.
#
# Interpret: which findings vary most between random folds, in absolute terms and relative to their prevalence? What
# does that mean for a metric computed per fold for a rare finding such as Hernia (about 4 of the 2,000 images)?
# ```

# %% [markdown]
# ```{solution-start} ex-data-experiment-2
# :class: dropdown
# ```
# Random folds of 400 images leave the prevalences free to vary binomially: the common findings (Effusion,
# Atelectasis, Infiltration) spread by 3 to 5 percentage points between folds, more than 40 % of their
# prevalence for Effusion and Atelectasis. Iterative stratification makes every spread 1/400 = 0.0025, one image,
# for all 14 findings at once. Rarer findings move less in absolute terms but more relative to their prevalence:
# Edema and Pleural thickening spread by more than their own prevalence, and of the 4 Hernia images two of the
# five random folds get none, so a per-fold sensitivity or AUC for Hernia is undefined there. Stratification
# gives every fold its share (for Hernia, at most one image per fold).

# %% tags=["solution"]
ex_exp2_labels = sample_label_sets(2000, seed=1)
ex_exp2_spread = {
    "random": np.ptp(ex_code_fold_prevalence(ex_exp2_labels, random_kfold(2000, 5, seed=0)), axis=0),
    "iterative": np.ptp(ex_code_fold_prevalence(
        ex_exp2_labels, iterative_stratified_kfold(ex_exp2_labels, 5, seed=0)), axis=0),
}

# %% tags=["remove-cell", "check"]
assert isinstance(ex_exp2_spread, dict) and set(ex_exp2_spread) == {"random", "iterative"}, \
    "ex_exp2_spread must be a dict with the keys 'random' and 'iterative'"
ex_y = sample_label_sets(2000, seed=1)
ex_want = np.ptp([label_statistics(ex_y[test])["frequency"].to_numpy()
                  for _, test in random_kfold(2000, 5, seed=0)], axis=0)
assert np.allclose(ex_exp2_spread["random"], ex_want), \
    "the random-fold spreads differ from those of sample_label_sets(2000, seed=1) with random_kfold(2000, 5, seed=0)"

# %% tags=["remove-cell", "check"]
ex_it = np.asarray(ex_exp2_spread["iterative"], dtype=float)
assert ex_it.shape == (len(LABELS),), "ex_exp2_spread['iterative'] must hold 14 spreads"
# folds of 400 images: a prevalence spread is a whole number of images divided by 400
assert np.allclose(ex_it * 400, np.round(ex_it * 400)), "a spread between folds of 400 images is a multiple of 1/400"
assert ex_it.max() < np.max(ex_exp2_spread["random"]), \
    "iterative stratification should spread the prevalences less than random folds"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Do the stand-ins follow the real data?
# :label: ex-data-critical
# :class: critical
#
# The page states that the phantoms follow the real ChestX-ray14 statistics and backs this with the table of
# {ref}`data-checks`, {numref}`fig-data-label-frequency`, {numref}`fig-data-box-centres` and
# {numref}`fig-data-box-sizes` (this page reproduces no paper, so it has no Paper-vs-us table; its checks play
# that role and do not count in the scorecard). Judge the statement:
#
# 1. For each of the four checks: could it fail, given how the stand-in is made ({ref}`data-method`)? What does
#    passing it therefore show?
# 2. What do the checks not test at all? Name at least two properties of the real data that matter to the
#    chapters and that no check compares.
# 3. Are the thresholds (max |z| < 5, r > 0.9, centres within 0.08 of the side) strict or lax for what they
#    compare? What check would you add, and what would make it fail?
# ```

# %% [markdown]
# ```{solution-start} ex-data-critical
# :class: dropdown
# ```
# A good answer makes points like these.
#
# 1. The two label checks can hardly fail: a phantom label set *is* a row of the real table, drawn with
#    replacement, so prevalences, co-occurrences and counts agree up to binomial noise by construction. Passing
#    them shows that the sampler is implemented correctly (no bug in the weights or the indexing), not that the
#    phantoms are realistic. The box-centre check can fail (the rendering may move a lesion away from its
#    region), and the slide check compares a single slide with MLNTO's class prior, which the layout is built to
#    hit.
# 2. Not compared: the box *sizes* (the page shows them in {numref}`fig-data-box-sizes`, and in the default run
#    the Pneumothorax medians differ by a factor of about 1.4, but no check has a threshold); the boxes of the 6
#    findings drawn from anatomical priors; how the images look (intensity, texture, how conspicuous a finding
#    is, which decides how hard the classification and localisation tasks of {numref}`Chapter %s <ch-mil>` and {numref}`Chapter %s <ch-ml>`
#    are); the patient
#    structure (a phantom copies a row's patient id, so the same row drawn twice gives two images of one
#    "patient" with identical labels); and the slide phantom's tissue appearance.
# 3. Lax where the statistic is precise: with 20,000 label sets a max |z| of 5 over 14 findings is a wide
#    tolerance for something that holds by construction, and Pearson's r over 91 co-occurrences is dominated by
#    the few frequent pairs (r > 0.9 would survive large errors in rare pairs). A centre tolerance of 0.08 of the
#    image side is about 80 pixels at 1,024 px, more than the width of a typical nodule box. Useful additions: a
#    size check (e.g. |log median ratio| below a stated bound per finding, which Pneumothorax would currently fail
#    at a tight bound), two-sample tests of the full centre and size distributions per finding, and, under `full`,
#    a comparison of image statistics or of a classifier's accuracy between real images and phantoms.

# %% [markdown]
# ```{solution-end}
# ```

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

# %% tags=["remove-input"]
notebook.provenance()
