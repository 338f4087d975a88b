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
# # RoDeO and IoU-based metrics for pathology detection
#
# Meissen, Müller, Kaissis and Rueckert (MIDL 2023) argue that the detection metrics of natural images
# (AP@IoU, mAP, acc@IoU) suit pathology detection in chest X-rays badly: they collapse as soon as the
# overlap falls below a threshold, they prefer offsets along the axes, they cannot tell a misplaced box
# from a misclassified one, and acc@IoU is dominated by true negatives. They propose **RoDeO** (Robust
# Detection Outcome): a Hungarian matching of predicted and target boxes, three sub-scores on the matched
# pairs — localisation `2^(−d²)`, shape (centred IoU) and classification (clipped MCC) — each scaled by the
# share of matched boxes, and their harmonic mean. They study all metrics with *oracle* models that corrupt
# the true boxes of the NIH ChestX-ray8 test set in controlled ways, and with a weakly supervised CheXNet.
#
# **What we reproduce.**
# 1. Fig. 2: IoU-based metrics collapse quickly and are anisotropic; RoDeO localisation is smooth and isotropic.
# 2. Figs. 3, 8, 9: AP@IoU falls sharply with position error but barely with size; acc@IoU keeps a high floor;
#    RoDeO declines smoothly and its sub-scores separate position (loc) from shape (shape).
# 3. Fig. 4: acc@50 *rises* when boxes are dropped; AP@IoU and RoDeO fall.
# 4. Fig. 5: duplicated boxes barely lower AP@IoU at IoU > 0.1; RoDeO decays.
# 5. Figs. 7, 10, 11: acc@IoU stays high for random boxes and never reaches 0 under class confusion; RoDeO
#    shape peaks near the mean box size; loc and shape ignore class errors.
# 6. Table 1: per-class RoDeO, acc@30 and mAP of a weakly supervised detector (here trained on CXR phantoms),
#    and the harmonic-mean consistency of the paper's own table.
#
# **Prerequisites.** Detection metrics (IoU, AP), the Hungarian method, MCC. **Time to run** (measured on a 2-core
# CPU): smoke about 10 s, default about 25 s; `gpu` and `full` (real ChestX-ray14 images) have not been timed here
# (no GPU was available); every page states its own measured time at its top.
#
# ## Parameters
#
# `medeval params 02-rodeo` lists every parameter with its range; `medeval run 02-rodeo --set n_runs=10`
# changes one.

# %% tags=["parameters", "remove-cell"]
profile = "default"
seed = None
device = None
scheduler = None
max_workers = None
n_runs = None
oracle_test_fraction = None
sigma_pos = None
sigma_shape = None
p_values = None
expected_duplicates = None
position_bias = None
sigma_size = None
sigma_ratio = None
random_box_sizes = None
shift_grid_size = None
shift_range = None
detector_data = None
n_train = None
n_test = None
image_size = None
backbone = None
epochs = None
batch_size = None
lr = None
weight_decay = None
cam_thresholds = None
cam_min_probability = None
n_bootstrap = None

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from medeval import plots
from medeval.experiments import rodeo as R
from medeval.runtime import notebook
from medeval.runtime.grid import run_grid

P = notebook.setup("02-rodeo", globals())
P

# %% [markdown]
# ## Data
#
# The oracle experiments use the **real NIH box list** (`BBox_List_2017.csv`, shipped with the package):
# radiologist boxes of the 8 ChestX-ray8 findings. As in the paper, the boxed images are split 50/50 (here by
# patient, seed = `seed`) and the oracles run on the test half. Coordinates are divided by the image size
# (1024 px), so that App. A's over-predicted boxes of side 0.25 are a quarter of the image. The Table-1
# analogue uses CXR phantoms by default; the `full` profile uses the real ChestX-ray14 images.

# %%
summary = R.box_list_summary()
targets, target_table = R.load_oracle_targets(P.oracle_test_fraction, P.seed)
notebook.record("nih_n_boxes", summary["n_boxes"])
notebook.record("nih_n_images", summary["n_images"])
notebook.record("oracle_n_images", targets.n_images)
notebook.record("oracle_n_boxes", len(targets))
notebook.record("nih_mean_box_side", summary["mean_box_side_sqrt_area"])
display(Markdown(
    f"The box list has **{summary['n_boxes']} boxes in {summary['n_images']} images** (the paper says 882 images). "
    f"The oracle test set has **{targets.n_images} images with {len(targets)} boxes**. The mean box is "
    f"{summary['mean_box_width']:.3f} × {summary['mean_box_height']:.3f} of the image (the paper: 0.25)."
))
pd.Series(summary["boxes_per_class"], name="boxes").to_frame().T

# %% [markdown]
# ## Fig. 2 — sensitivity to position offsets
#
# A square target and an equal-sized prediction offset by (Δx, Δy) target sizes. Each cell is evaluated by
# the library's metrics as a one-image dataset.

# %%
maps = R.shift_map(P.shift_grid_size, P.shift_range)
off = maps["offsets"]
fig, axes = plots.new_axes(4, width=3.2, height=3.0)
for ax, name in zip(axes, ["AP@50", "mAP", "IoU", "RoDeO loc"], strict=True):
    im = ax.imshow(maps[name], origin="lower", extent=[off[0], off[-1], off[0], off[-1]], vmin=0, vmax=1, cmap="viridis")
    ax.set_title(name)
    ax.set_xlabel("Δx (target widths)")
axes[0].set_ylabel("Δy (target heights)")
fig.colorbar(im, ax=axes[-1], shrink=0.8)
plt.show()


def at(name, dx, dy):
    i, j = np.argmin(np.abs(off - dy)), np.argmin(np.abs(off - dx))
    return float(maps[name][i, j])


diag = 1 / np.sqrt(2)
from medeval.metrics.box_overlap import paired_iou  # noqa: E402
from medeval.metrics.detection import localization_similarity  # noqa: E402

box = np.array([[0.0, 0.0, 1.0, 1.0]])
offsets_probe = {"axis": np.array([[0.5, 0.0, 1.0, 1.0]]), "diagonal": np.array([[0.5 * diag, 0.5 * diag, 1.0, 1.0]])}
fig2 = {
    f"{metric}_{where}": float(fn(b, box, box_format="xywh")[0])
    for where, b in offsets_probe.items()
    for metric, fn in (("iou", paired_iou), ("loc", localization_similarity))
}
fig2["ap50_nonzero_area_fraction"] = float((maps["AP@50"] > 0).mean())
fig2["loc_nonzero_area_fraction"] = float((maps["RoDeO loc"] > 0.01).mean())
notebook.record("fig2", fig2)
display(Markdown(
    f"At a distance of half a target size, IoU is {fig2['iou_axis']:.3f} along an axis but "
    f"{fig2['iou_diagonal']:.3f} along the diagonal; RoDeO loc is {fig2['loc_axis']:.3f} in both directions. "
    f"AP@50 is non-zero on {100 * fig2['ap50_nonzero_area_fraction']:.0f}% of the map, RoDeO loc (> 0.01) on "
    f"{100 * fig2['loc_nonzero_area_fraction']:.0f}%."
))

# %% [markdown]
# ## Oracle experiments (Figs. 3, 4, 5, 7, 8, 9, 10, 11)
#
# Every setting is run `n_runs` times (the paper: 5) with independent corruptions; curves show the mean and
# bands the range over runs. AP@IoU needs confidences that oracle boxes do not have: all boxes share one
# confidence, so AP = precision × recall (all-point interpolation; see `medeval.metrics.detection`). acc@IoU
# and AP@IoU are class means, as the paper's Table 1 "Total" rows are; RoDeO pools all boxes.

# %%
params_json = P.model_dump(mode="json")
figures = list(R.FIGURES)
results = run_grid(
    R.run_oracle_figure,
    [{"figure": f, "params_json": params_json, "seed": P.seed} for f in figures],
    cache_dir=notebook.cache_dir("oracle-figures"),
    scheduler=P.scheduler,
    max_workers=P.max_workers,
    desc="oracle figures",
)
oracle = {f: pd.DataFrame(rows) for f, rows in zip(figures, results, strict=True)}
METRIC_GROUPS = {
    "acc@IoU": ["acc@10", "acc@30", "acc@50"],
    "AP@IoU": ["AP@10", "AP@30", "AP@50", "mAP"],
    "RoDeO": ["RoDeO", "RoDeO loc", "RoDeO shape", "RoDeO cls"],
}


def curves(frame, x, title, analytic=None, xlabel=None):
    """Three panels (acc@IoU, AP@IoU, RoDeO): mean over runs with a min-max band; analytic curves dashed."""
    g = frame.groupby(x)
    fig, axes = plots.new_axes(3, width=3.6, height=2.9)
    for ax, (group, metrics) in zip(axes, METRIC_GROUPS.items(), strict=True):
        for m in metrics:
            plots.curve_with_band(ax, g[m].mean().index, g[m].mean(), g[m].min(), g[m].max(), label=m, marker=".")
        for label, (xs, ys) in (analytic or {}).items():
            if group == "RoDeO":
                ax.plot(xs, ys, "k--", lw=1, label=label)
        ax.set_title(f"{group}")
        ax.set_xlabel(xlabel or x)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    plt.show()


def mean_at(frame, metric, **where):
    sel = np.ones(len(frame), bool)
    for k, v in where.items():
        sel &= np.isclose(frame[k], v)
    return float(frame.loc[sel, metric].mean())


# %% [markdown]
# ### Fig. 3 — position noise × shape noise

# %%
f3 = oracle["fig3"]
fig, axes = plots.new_axes(3, 2, width=3.3, height=2.8)
for ax, m in zip(axes, ["acc@30", "AP@30", "mAP", "RoDeO", "RoDeO loc", "RoDeO shape"], strict=True):
    grid = f3.groupby(["sigma_shape", "sigma_pos"])[m].mean().unstack()
    plots.heatmap(ax, grid.to_numpy(), [f"{v:g}" for v in grid.index], [f"{v:g}" for v in grid.columns],
                  vmin=0, vmax=1, fmt=".2f", colorbar=False)
    ax.invert_yaxis()
    ax.set_title(m)
    ax.set_xlabel("σ_pos")
    ax.set_ylabel("σ_shape")
plt.show()
s_pos = np.array(P.sigma_pos)
s_shape = np.array(P.sigma_shape)
an = R.analytic_curves(s_pos)
loc_at_shape0 = f3[np.isclose(f3["sigma_shape"], 0)].groupby("sigma_pos")["RoDeO loc"].mean()
shape_at_pos0 = f3[np.isclose(f3["sigma_pos"], 0)].groupby("sigma_shape")["RoDeO shape"].mean()
fig, axes = plots.new_axes(2, width=3.6, height=2.8)
axes[0].plot(loc_at_shape0.index, loc_at_shape0, "o-", label="oracle (σ_shape = 0)")
axes[0].plot(s_pos, an["loc_position_noise"], "k--", label="1/(1 + 2 ln2 σ²)")
axes[0].set_xlabel("σ_pos")
axes[0].set_title("RoDeO loc")
axes[1].plot(shape_at_pos0.index, shape_at_pos0, "o-", label="oracle (σ_pos = 0)")
axes[1].plot(s_shape, R.shape_noise_expectation(s_shape), "k--", label="E[cIoU], independent log-normal w, h")
axes[1].set_xlabel("σ_shape")
axes[1].set_title("RoDeO shape")
for ax in axes:
    ax.legend(fontsize=7)
plt.show()
fig3 = {
    "loc_max_abs_dev_from_analytic": float(np.max(np.abs(loc_at_shape0.to_numpy() - R.analytic_curves(loc_at_shape0.index.to_numpy())["loc_position_noise"]))),
    "shape_max_abs_dev_from_analytic": float(np.max(np.abs(shape_at_pos0.to_numpy() - R.shape_noise_expectation(shape_at_pos0.index.to_numpy())))),
    "ap30_at_pos_0.5": mean_at(f3, "AP@30", sigma_pos=0.5, sigma_shape=0),
    "ap30_at_shape_0.5": mean_at(f3, "AP@30", sigma_pos=0, sigma_shape=s_shape[np.argmin(np.abs(s_shape - 0.5))]),
    "rodeo_loc_spread_over_shape": float(f3.groupby("sigma_pos")["RoDeO loc"].agg(lambda v: v.max() - v.min()).max()),
    "acc30_min": float(f3.groupby(["sigma_pos", "sigma_shape"])["acc@30"].mean().min()),
}
notebook.record("fig3", fig3)

# %% [markdown]
# ### Fig. 4 — class under-prediction (σ_pos = 0.5)

# %%
f4 = oracle["fig4"]
base4 = {m: mean_at(f4, m, p_underpred=0) for m in ["RoDeO loc", "RoDeO shape", "RoDeO cls"]}
pu = np.array(P.p_values)
curves(f4, "p_underpred", "Fig. 4: class under-prediction, σ_pos = 0.5",
       {"loc(p=0)·(1 − p)": (pu, base4["RoDeO loc"] * (1 - pu))})
fig4 = {m: [mean_at(f4, m, p_underpred=p) for p in (pu.min(), pu.max() if pu.max() < 1 else sorted(pu)[-2])] for m in
        ["acc@50", "AP@50", "RoDeO"]}
notebook.record("fig4", fig4)

# %% [markdown]
# ### Fig. 5 — box duplication (σ_pos = 0.5)

# %%
f5 = oracle["fig5"]
ed = np.array(P.expected_duplicates)
base5 = mean_at(f5, "RoDeO loc", expected_duplicates=0)
curves(f5, "expected_duplicates", "Fig. 5: box duplication, σ_pos = 0.5",
       {"loc(0)/(1 + E[D])": (ed, base5 / (1 + ed))}, xlabel="E[D]")
fig5 = {m: [mean_at(f5, m, expected_duplicates=e) for e in (ed.min(), ed.max())] for m in
        ["AP@10", "AP@30", "AP@50", "RoDeO", "RoDeO loc", "acc@30"]}
notebook.record("fig5", fig5)

# %% [markdown]
# ### Fig. 7 — class oracle with randomly placed boxes of size s

# %%
f7 = oracle["fig7"]
for p_over, frame in f7.groupby("p_overpred"):
    curves(frame, "random_box_size", f"Fig. 7: random square boxes, p_overpred = {p_over:g}", xlabel="box side s")
f7_0 = f7[np.isclose(f7["p_overpred"], 0)].groupby("random_box_size").mean(numeric_only=True)
fig7 = {
    "shape_argmax_size": float(f7_0["RoDeO shape"].idxmax()),
    "mean_box_side": summary["mean_box_side_sqrt_area"],
    "acc30_max": float(f7_0["acc@30"].max()),
    "ap30_max": float(f7_0["AP@30"].max()),
    "rodeo_max": float(f7_0["RoDeO"].max()),
}
notebook.record("fig7", fig7)

# %% [markdown]
# ### Fig. 8 — position bias and position noise

# %%
f8 = oracle["fig8"]
bias = np.array(P.position_bias)
for s, frame in f8.groupby("sigma_pos"):
    an8 = {"2^(−|Δp|²)": (bias, R.analytic_curves(bias)["loc_position_bias"])} if s == 0 else None
    curves(frame, "position_bias", f"Fig. 8: position bias, σ_pos = {s:g}", an8, xlabel="|Δp|")
f8_0 = f8[np.isclose(f8["sigma_pos"], 0)].groupby("position_bias").mean(numeric_only=True)
fig8 = {
    "loc_max_abs_dev_from_analytic": float(np.max(np.abs(f8_0["RoDeO loc"].to_numpy() - 2.0 ** (-f8_0.index.to_numpy() ** 2)))),
    "shape_min": float(f8["RoDeO shape"].min()),
    "cls_min": float(f8["RoDeO cls"].min()),
}
notebook.record("fig8", fig8)

# %% [markdown]
# ### Fig. 9 — size and aspect-ratio noise

# %%
f9 = oracle["fig9"]
size_panel = f9[np.isclose(f9["sigma_ratio"], 0)]
ratio_panel = f9[np.isclose(f9["sigma_size"], 0)]
ss, sr = np.array(P.sigma_size), np.array(P.sigma_ratio)
curves(size_panel, "sigma_size", "Fig. 9a: size noise", {"E[min(s, 1/s)²]": (ss, R.analytic_curves(ss)["shape_size_noise"])})
curves(ratio_panel, "sigma_ratio", "Fig. 9b: aspect-ratio noise",
       {"E[1/(2e^{|Δln a|/2} − 1)]": (sr, R.analytic_curves(sr)["shape_aspect_noise"])})
g9s = size_panel.groupby("sigma_size")["RoDeO shape"].mean()
g9r = ratio_panel.groupby("sigma_ratio")["RoDeO shape"].mean()
fig9 = {
    "size_shape_max_abs_dev": float(np.max(np.abs(g9s.to_numpy() - R.analytic_curves(g9s.index.to_numpy())["shape_size_noise"]))),
    "ratio_shape_max_abs_dev": float(np.max(np.abs(g9r.to_numpy() - R.analytic_curves(g9r.index.to_numpy())["shape_aspect_noise"]))),
    "loc_min": float(f9["RoDeO loc"].min()),
    "cls_min": float(f9["RoDeO cls"].min()),
    "acc30_range": float(f9.groupby(["sigma_size", "sigma_ratio"])["acc@30"].mean().agg(np.ptp)),
}
notebook.record("fig9", fig9)

# %% [markdown]
# ### Fig. 10 — class over-prediction (σ_pos = 0.5)

# %%
f10 = oracle["fig10"]
n_absent = targets.n_images * len(R.CLASSES) - len(set(zip(targets.image_ids, targets.labels, strict=True)))
pv = np.array(P.p_values)
factor10 = len(targets) / (len(targets) + pv * n_absent)
curves(f10, "p_overpred", "Fig. 10: class over-prediction, σ_pos = 0.5",
       {"loc(0)·N/(N + p·#absent)": (pv, mean_at(f10, "RoDeO loc", p_overpred=0) * factor10)})
fig10 = {m: [mean_at(f10, m, p_overpred=p) for p in (pv.min(), pv.max())] for m in ["acc@30", "AP@30", "RoDeO"]}
notebook.record("fig10", fig10)

# %% [markdown]
# ### Fig. 11 — class confusion (σ_pos = 0.5)

# %%
f11 = oracle["fig11"]
cls_closed = R.classification_closed_form(R.confusion_accuracy(pv, seed=P.seed))
curves(f11, "p_confuse", "Fig. 11: class confusion, σ_pos = 0.5",
       {"cls closed form, (K·acc − 1)/(K − 1)": (pv, cls_closed)})
g11 = f11.groupby("p_confuse").mean(numeric_only=True)
fig11 = {
    "cls_max_abs_dev_from_closed_form": float(np.max(np.abs(g11["RoDeO cls"].to_numpy() - R.classification_closed_form(R.confusion_accuracy(g11.index.to_numpy(), seed=P.seed))))),
    "acc30_at_p_max": float(g11["acc@30"].iloc[-1]),
    "loc_range": float(np.ptp(g11["RoDeO loc"])),
    "shape_range": float(np.ptp(g11["RoDeO shape"])),
    "rodeo_at_p_max": float(g11["RoDeO"].iloc[-1]),
}
notebook.record("fig11", fig11)

# %% [markdown]
# ## Table 1 analogue — a weakly supervised detector
#
# A multi-label CNN (backbone → global average pooling → linear head) is trained with image-level labels
# only, on CXR phantoms of the 8 classes (`detector_data="phantoms"`; the `full` profile trains on `n_train`
# real ChestX-ray14 images of patients without any boxed image and evaluates on the boxed images of the oracle
# test part, their NIH boxes rescaled to `image_size`). Boxes come from its class activation maps as in
# App. B: per image, the 8 maps are normalised jointly to 0-255, binarised at 60 and at 180, and a box is drawn
# around each connected component. AP uses the image-level class probability as each box's confidence. Only classes whose
# probability reaches `cam_min_probability` are boxed (0 gives the literal procedure, which boxes every class
# map of every image).

# %%
detector = R.train_cam_detector(P, P.seed)
ours = R.detector_table(detector["predictions"], detector["targets"])
notebook.record_table("table1_ours", ours)
notebook.record("detector_auc", detector["auc"])
notebook.record("detector_final_loss", detector["history"][-1] if detector["history"] else None)
data_info = detector["data"]
notebook.record("detector_data_counts", {k: v for k, v in data_info.items() if not k.endswith("_image_index")})
if "test_image_index" in data_info:  # real images: which boxed images were evaluated
    notebook.record("detector_test_images", data_info["test_image_index"])
display(Markdown(
    f"Data: **{data_info['data']}**; {data_info['n_train']} training images of {data_info['n_train_patients']} "
    f"patients. Test images with boxes: **{detector['targets'].n_images}** ({len(detector['targets'])} boxes); "
    f"CAM boxes: **{len(detector['predictions'])}**. Classifier test AUC per class: "
    + ", ".join(f"{c} {v:.2f}" for c, v in detector["auc"].items()) + "."
))
ours.round(1)

# %% [markdown]
# Bootstrap confidence intervals (percentile, 95%) over test images:

# %%
if P.n_bootstrap > 0:
    ci = R.bootstrap_table(detector["predictions"], detector["targets"], P.n_bootstrap, P.seed)
    wide = ci.assign(ci=lambda d: d["low"].round(1).astype(str) + "–" + d["high"].round(1).astype(str))
    ci_table = wide.pivot(index="class", columns="metric", values="ci").reindex([*R.CLASSES, "Total"])
    notebook.record_table("table1_ci", ci)
    display(ci_table)

# %% [markdown]
# ### Harmonic-mean consistency of Table 1
#
# RoDeO's total is the harmonic mean of its three sub-scores (Eq. 6). Recomputing it from the paper's own
# sub-scores reproduces every reported total to ±0.1 except **Atelectasis**; our table is consistent by
# construction (up to `eps`). The paper's Total row for acc@30 and mAP is the mean of the class rows, while
# RoDeO's Total pools all boxes (its cls Total is not the class mean).

# %%
paper_check = R.paper_table1_consistency()
ours_check = R.paper_table1_consistency(ours, tolerance=1e-3)
notebook.record_table("paper_table1_consistency", paper_check)
inconsistent = paper_check.loc[~paper_check["consistent"], "class"].tolist()
notebook.record("paper_table1_inconsistent_rows", inconsistent)
atel = paper_check.set_index("class").loc["Atelectasis"]
notebook.record("paper_atelectasis_total_recomputed", float(atel["total_recomputed"]))
notebook.record("ours_table1_max_hm_difference", float(ours_check["difference"].abs().max()))
totals = R.paper_total_rows()
notebook.record("paper_total_rows", totals)
display(paper_check.round(2))
display(Markdown(
    f"Inconsistent rows: **{', '.join(inconsistent) or 'none'}**; Atelectasis reports 28.4 but its sub-scores give "
    f"**{atel['total_recomputed']:.1f}**. Mean of the class rows vs reported Total: acc@30 "
    f"{totals['acc@30_mean_of_classes']:.2f} vs {totals['acc@30_reported_total']:.1f}, mAP "
    f"{totals['mAP_mean_of_classes']:.2f} vs {totals['mAP_reported_total']:.1f}, RoDeO cls "
    f"{totals['classification_mean_of_classes']:.2f} vs {totals['classification_reported_total']:.1f} (pooled)."
))

# %% [markdown]
# ## Paper vs us

# %%
rows = [
    ("Fig. 2: RoDeO loc isotropic (same value along axis and diagonal)", "isotropic",
     f"{fig2['loc_axis']:.3f} vs {fig2['loc_diagonal']:.3f}", abs(fig2["loc_axis"] - fig2["loc_diagonal"]) < 1e-9, ""),
    ("Fig. 2: IoU prefers axis-aligned offsets", "anisotropic",
     f"IoU {fig2['iou_axis']:.3f} (axis) vs {fig2['iou_diagonal']:.3f} (diagonal)", fig2["iou_axis"] > fig2["iou_diagonal"], ""),
    ("Fig. 3: RoDeO loc follows E[loc] = 1/(1 + 2 ln2 σ²)", "closed form (spec §4.4)",
     f"max |dev| {fig3['loc_max_abs_dev_from_analytic']:.3f}", fig3["loc_max_abs_dev_from_analytic"] < 0.05,
     "Monte Carlo over ~440 images; matching swaps pairs in multi-box images"),
    ("Fig. 3: AP@IoU falls sharply with position error but much less under shape noise", "qualitative",
     f"AP@30 {fig3['ap30_at_pos_0.5']:.2f} at σ_pos=0.5; {fig3['ap30_at_shape_0.5']:.2f} at σ_shape=0.5",
     fig3["ap30_at_pos_0.5"] < fig3["ap30_at_shape_0.5"], "AP with one shared confidence = precision × recall"),
    ("Fig. 4: acc@50 rises with under-prediction; AP@50 and RoDeO fall", "qualitative",
     f"acc@50 {fig4['acc@50'][0]:.3f}→{fig4['acc@50'][1]:.3f}; AP@50 {fig4['AP@50'][0]:.3f}→{fig4['AP@50'][1]:.3f}; "
     f"RoDeO {fig4['RoDeO'][0]:.3f}→{fig4['RoDeO'][1]:.3f}",
     fig4["acc@50"][1] > fig4["acc@50"][0] and fig4["RoDeO"][1] < fig4["RoDeO"][0] and fig4["AP@50"][1] <= fig4["AP@50"][0], ""),
    ("Fig. 5: AP@IoU > 0.1 does not fall with duplicates (AP@50 may rise); RoDeO decays", "qualitative",
     f"AP@50 {fig5['AP@50'][0]:.3f}→{fig5['AP@50'][1]:.3f}; RoDeO {fig5['RoDeO'][0]:.3f}→{fig5['RoDeO'][1]:.3f}",
     fig5["AP@50"][1] >= 0.9 * fig5["AP@50"][0] and fig5["RoDeO"][1] < fig5["RoDeO"][0], ""),
    ("Fig. 7: RoDeO shape peaks near the mean box size (≈0.2); acc@IoU high for random boxes", "qualitative",
     f"argmax s = {fig7['shape_argmax_size']:g} (mean side {fig7['mean_box_side']:.2f}); max acc@30 {fig7['acc30_max']:.2f}, AP@30 {fig7['ap30_max']:.2f}",
     abs(fig7["shape_argmax_size"] - fig7["mean_box_side"]) <= 0.1 and fig7["acc30_max"] > fig7["ap30_max"], ""),
    ("Fig. 8: loc = 2^(−|Δp|²) under bias; shape and cls unaffected", "closed form",
     f"max |dev| {fig8['loc_max_abs_dev_from_analytic']:.1e}; min shape {fig8['shape_min']:.3f}, min cls {fig8['cls_min']:.3f}",
     fig8["loc_max_abs_dev_from_analytic"] < 1e-6 and fig8["shape_min"] > 0.999, "Eq. 8 read with ·w, ·h (erratum)"),
    ("Fig. 9: shape follows the size/aspect closed forms; loc, cls unaffected; acc@IoU barely moves", "qualitative",
     f"max |dev| size {fig9['size_shape_max_abs_dev']:.3f}, aspect {fig9['ratio_shape_max_abs_dev']:.3f}; min loc {fig9['loc_min']:.3f}; acc@30 range {fig9['acc30_range']:.3f}",
     fig9["size_shape_max_abs_dev"] < 0.05 and fig9["ratio_shape_max_abs_dev"] < 0.05 and fig9["loc_min"] > 0.999, ""),
    ("Fig. 10: all metrics fall with class over-prediction", "qualitative",
     f"acc@30 {fig10['acc@30'][0]:.3f}→{fig10['acc@30'][1]:.3f}; RoDeO {fig10['RoDeO'][0]:.3f}→{fig10['RoDeO'][1]:.3f}",
     fig10["acc@30"][1] < fig10["acc@30"][0] and fig10["RoDeO"][1] < fig10["RoDeO"][0], ""),
    ("Fig. 11: acc@IoU never reaches 0 under class confusion; loc and shape unchanged", "qualitative",
     f"acc@30 at p=1: {fig11['acc30_at_p_max']:.3f}; loc range {fig11['loc_range']:.3f}; cls vs closed form {fig11['cls_max_abs_dev_from_closed_form']:.3f}",
     fig11["acc30_at_p_max"] > 0.3 and fig11["loc_range"] < 0.05, ""),
    ("Table 1: RoDeO total = harmonic mean of sub-scores", "all rows but Atelectasis (28.4 vs 12.0)",
     f"inconsistent: {', '.join(inconsistent)}; recomputed {atel['total_recomputed']:.1f}",
     inconsistent == ["Atelectasis"], "erratum in the paper"),
    ("Table 1: acc@30 ranks classes high where mAP and RoDeO are low (TN dominance)", "qualitative",
     f"our Total acc@30 {ours['acc@30'].iloc[-1]:.1f} vs mAP {ours['mAP'].iloc[-1]:.1f}, RoDeO {ours['total'].iloc[-1]:.1f}",
     ours["acc@30"].iloc[-1] > max(ours["mAP"].iloc[-1], ours["total"].iloc[-1]),
     "phantoms, not CheXNet on ChestX-ray8" if P.detector_data == "phantoms"
     else f"{P.backbone} on {data_info['n_train']} ChestX-ray14 images, not CheXNet (DenseNet-121)"),
]
pvu = pd.DataFrame(rows, columns=["claim", "paper", "ours", "ok", "reason"])
pvu["verdict"] = np.where(pvu["ok"], "[Re]", "[¬Re]")
notebook.paper_vs_us(pvu)
pvu[["claim", "paper", "ours", "verdict", "reason"]]

# %% [markdown]
# ## Deviations and errata
#
# * **Table 1, Atelectasis:** the reported RoDeO total (28.4) is not the harmonic mean of the reported
#   sub-scores (12.0); every other row is consistent to ±0.1 (recomputed above).
# * **Eq. 8** divides the position bias by w and h; a *relative* offset needs a multiplication. We multiply
#   (then loc = 2^(−|Δp|²) exactly, Fig. 8); `literal_eq8=True` in `medeval.data.corruptions.position_bias`
#   gives the printed form.
# * **Box format:** the paper describes (x, y) as the box centre; the reference code (rodeometric) uses the
#   top-left corner. Our functions require `box_format=` explicitly, so either reading is explicit.
# * **RoDeO's eps:** the reference code adds 1e-6 inside the harmonic mean (a perfect prediction scores
#   1.000001); we keep it as the default for parity and expose `eps` (0 = the paper's Eq. 6).
# * **Per-class RoDeO without a matched pair:** Eq. 5's factor is 0, so we return 0 (the reference code
#   returns NaN for loc/shape/total); a class without any box is NaN.
# * **AP@IoU:** the paper does not give the confidence or interpolation. Oracle boxes share one confidence
#   (AP = precision × recall); the detector uses the image-level class probability; all-point interpolation.
#   Matching follows App. E (greedy by IoU, recomputed at each confidence threshold).
# * **acc@IoU and mAP "Total"** are class means (they equal the mean of the paper's class rows); RoDeO pools.
# * **Fig. 5's x-axis:** the caption says p_overpred, App. A says E[D]; we sweep E[D].
# * **CAM normalisation:** "normalise the heatmaps per image" is read as joint min-max over the 8 class maps
#   of an image (per-class normalisation would give boxes of every class in every image).
# * **Detector:** CXR phantoms and a small CNN on the CPU instead of CheXNet (DenseNet-121) on 108k
#   radiographs; the learning rate is raised from 3.6e-5 to 1e-3 for the short CPU schedule.
# * **Box list:** 880 boxed images (984 boxes) in the public list, not the paper's 882.
#
# ## Try it
#
# * `--set n_runs=20` tightens the oracle bands; `--set "sigma_pos=[0, 0.1, 0.2, 0.3]"` zooms in on the
#   region where AP@50 collapses.
# * Compare `robust_detection_outcome(..., eps=0)` with the default on a prediction with one wrong class.
# * Exercise: change `cam_thresholds` to `[100]` and see which RoDeO sub-score moves.
#
# ## Provenance

# %%
notebook.provenance()
