"""Every claim rule of chapter 2 (RoDeO) can pass and can fail: constructed inputs for each rule.

Each rule is reached through ``rodeo_claims.CLAIMS.decide(inputs, only=[id])`` (the same path the chapter takes),
on a :class:`~medeval.experiments.rodeo_claims.ClaimInputs` built from small synthetic oracle frames (one row per
(setting, run)) or detector tables; no chapter run is needed.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pandas as pd
import pytest

from medeval.core.claims import BASES, VERDICTS
from medeval.core.claims import explain as explain_claims
from medeval.experiments import rodeo as R
from medeval.experiments import rodeo_claims as RC

ALL = RC.ACC + RC.AP + ("mAP", "RoDeO") + RC.SUB
RUNS = 5
#: the registered claims, in the order of the Paper-vs-us table
IDS = [spec.id for spec in RC.CLAIMS.specs]


def frame(axes: dict, fns: dict, runs: int = RUNS, noise: float = 0.004, seed: int = 0, default=0.5) -> pd.DataFrame:
    """One row per (grid point, run): every metric of ``ALL`` (``default`` unless given in ``fns``, a function of
    the grid point's parameters) plus Gaussian noise of sd ``noise``."""
    rng = np.random.default_rng(seed)
    names = list(axes)
    rows = []
    for values in itertools.product(*axes.values()):
        point = dict(zip(names, values, strict=True))
        for r in range(runs):
            row = {**point, "run": r}
            for m in ALL:
                base = fns[m](**point) if m in fns else default
                row[m] = float(base + noise * rng.standard_normal())
            rows.append(row)
    return pd.DataFrame(rows)


def decided(cid: str, inputs: RC.ClaimInputs):
    """The row of claim ``cid`` decided alone from ``inputs``."""
    (claim,) = RC.CLAIMS.decide(inputs, scale="smoke", only=[cid]).claims
    assert claim.id == cid and claim.verdict in VERDICTS
    assert isinstance(claim.ours, str)
    return claim


def decide(cid: str, inputs: RC.ClaimInputs):
    return decided(cid, inputs).decision


def oracle(fig: str, f: pd.DataFrame, **fields) -> RC.ClaimInputs:
    return RC.ClaimInputs(oracle={fig: f}, **fields)


def with_fields(inputs: RC.ClaimInputs, **fields) -> RC.ClaimInputs:
    return dataclasses.replace(inputs, **fields)


def chapter(**fields):
    """Every claim, check and erratum decided from a ClaimInputs with ``fields`` (the others empty)."""
    return RC.CLAIMS.decide(RC.ClaimInputs(**fields), scale="smoke")


def step(x, at):  # a cliff: 1 before ``at``, 0 after
    return 1.0 if x < at else 0.0


def linear(x, span):
    return max(0.0, 1 - x / span)


# --------------------------------------------------------------------------------------------------- helpers


def test_claim_helpers_steepness_fit_and_peak():
    x = np.array([0, 0.5, 1, 1.5, 2.0])
    assert RC.steepness(x, 1 - x / 2) == pytest.approx(1.0)
    assert RC.steepness(x, [1, 1, 0, 0, 0]) == pytest.approx(4.0)  # one step of 0.5 on a range of 2
    assert np.isnan(RC.steepness(x, [1, 1, 1, 1, 0.99]))  # no decline to shape
    xs = np.linspace(0, 1, 11)
    assert RC.fit_rss(xs, 2 - 3 * xs, "linear") == pytest.approx(0, abs=1e-20)
    assert RC.fit_rss(xs, np.exp(-3 * xs), "exponential") == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="form"):
        RC.fit_rss(xs, xs, "cubic")
    s = np.array([0.1, 0.15, 0.2, 0.3, 0.5])
    assert RC.parabola_peak(s, -((s - 0.22) ** 2)) == pytest.approx(0.22, abs=1e-9)
    assert RC.parabola_peak(s, s) == 0.5  # the maximum at the grid end
    f = frame({"x": [0.0, 1.0], "by": [0, 1]}, {"RoDeO": lambda x, by: 0.1 * x}, noise=0.0)
    est, se, _ = RC.endpoint_change(f, "x", "RoDeO", "by")
    assert est == pytest.approx(0.1) and se == 0


# --------------------------------------------------------------------------------------------------- Fig. 3

SIG = [0.0, 0.25, 0.5, 1.0, 1.5]


def fig3(pos_fn, shape_fn, extra=None):
    fns = {m: (lambda f: (lambda sigma_pos, sigma_shape: f(sigma_pos) * (1 - 0.2 * sigma_shape)))(pos_fn)
           for m in RC.AP}
    fns.update({m: (lambda sigma_pos, sigma_shape: 0.8) for m in RC.ACC})
    fns["RoDeO loc"] = lambda sigma_pos, sigma_shape: linear(sigma_pos, 3)
    fns["RoDeO shape"] = lambda sigma_pos, sigma_shape: linear(sigma_shape, 3)
    fns["RoDeO"] = lambda sigma_pos, sigma_shape: shape_fn(sigma_pos, sigma_shape)
    fns.update(extra or {})
    return frame({"sigma_pos": SIG, "sigma_shape": SIG}, fns)


@pytest.mark.claim
def test_claim_fig3_ap_position_can_pass_and_fail():
    good = fig3(lambda s: np.exp(-4 * s), lambda p, q: 0.5)
    assert decide("fig3-ap-position", oracle("fig3", good)).verdict == "[Re]"
    # AP falls with shape, not with position
    bad = frame({"sigma_pos": SIG, "sigma_shape": SIG}, {m: (lambda sigma_pos, sigma_shape: np.exp(-4 * sigma_shape))
                                                         for m in RC.AP})
    assert decide("fig3-ap-position", oracle("fig3", bad)).verdict == "[¬Re]"
    assert decide("fig3-ap-position", RC.ClaimInputs()).verdict == "[n/a]"


@pytest.fixture(scope="module")
def all_wrong():
    """The control of the acc@IoU readings on the real NIH test half: every box moved off its object."""
    targets, _ = R.load_oracle_targets(0.5, 0)
    return targets, R.all_wrong_control(targets)


def test_all_wrong_control_is_the_true_negative_floor(all_wrong):
    targets, ctl = all_wrong
    preds = R.all_wrong_predictions(targets)
    assert len(preds) == len(targets)
    # no box overlaps its object: AP is 0 and acc@t = TN_c / (TN_c + 2 n_c) at every threshold (App. E)
    assert ctl["AP@10"] == ctl["AP@30"] == ctl["AP@50"] == 0
    assert ctl["acc@10"] == ctl["acc@30"] == ctl["acc@50"]
    cells = R.oracle_target_cells(targets)
    k = len(R.CLASSES)
    n_c = np.bincount(targets.labels, minlength=k)
    occupied = np.bincount(np.unique(targets.image_ids * k + targets.labels) % k, minlength=k)
    tn = targets.n_images - occupied
    assert np.allclose(list(ctl["acc@30 per class"].values()), tn / (tn + 2 * n_c))
    assert ctl["empty_cell_share"] == pytest.approx(1 - cells["n_occupied_cells"] / cells["n_cells"])
    assert ctl["acc@30"] > RC.ACC_FLOOR  # the floor that makes the acc@IoU readings checks
    assert ctl["RoDeO loc"] == pytest.approx(2.0 ** -8)  # 2^(−2·shift²) with shift 2 (Eq. 2)
    with pytest.raises(ValueError, match="shift"):
        R.all_wrong_predictions(targets, shift=0.5)


def control_frame(axes: dict, ctl: dict) -> pd.DataFrame:
    """An oracle frame in which every setting is the all-wrong control (its metrics, tiny noise)."""
    return frame(axes, {m: (lambda _v=ctl[m], **k: _v) for m in RC.ACC + RC.AP + ("RoDeO",) + RC.SUB}, noise=1e-4)


@pytest.mark.claim
def test_reading_fig3_acc_floor_holds_on_its_control_so_it_is_a_check(all_wrong):
    _, ctl = all_wrong
    good = fig3(lambda s: 1.0, lambda p, q: 0.5)
    assert RC.decide_fig3_acc_floor(good, {"n_cells": 80, "n_occupied_cells": 10})[0].verdict == "[Re]"
    bad = fig3(lambda s: 1.0, lambda p, q: 0.5, {"acc@30": lambda sigma_pos, sigma_shape: 0.9 - 0.4 * sigma_pos})
    assert RC.decide_fig3_acc_floor(bad, None)[0].verdict == "[¬Re]"
    # the control passes the rule: every box wrong still gives acc@IoU above the bound
    control = control_frame({"sigma_pos": SIG, "sigma_shape": SIG}, ctl)
    assert RC.decide_fig3_acc_floor(control, None)[0].verdict == "[Re]"
    cl = chapter(oracle={"fig3": bad}, all_wrong_control=ctl)
    (chk,) = [k for k in cl.checks if "high base value" in k.check]
    assert not chk.passed and "true-negative share" in chk.why and f"{ctl['acc@30']:.3f}" in chk.why
    assert "fig3-acc-floor" not in IDS


def smooth_rodeo(sigma_pos, sigma_shape):
    return linear(sigma_pos, 3) * linear(sigma_shape, 3)


def cliff(sigma_pos, sigma_shape):
    return step(sigma_pos, 0.3) * step(sigma_shape, 0.3)


@pytest.mark.claim
def test_claim_fig3_rodeo_smoother_can_pass_and_fail():
    others = {m: cliff for m in RC.ACC + RC.AP}
    good = frame({"sigma_pos": SIG, "sigma_shape": SIG}, {**others, "RoDeO": smooth_rodeo})
    assert decide("fig3-rodeo-smoother", oracle("fig3", good)).verdict == "[Re]"
    swapped = frame({"sigma_pos": SIG, "sigma_shape": SIG},
                    {**{m: smooth_rodeo for m in RC.ACC + RC.AP}, "RoDeO": cliff})
    assert decide("fig3-rodeo-smoother", oracle("fig3", swapped)).verdict == "[¬Re]"


@pytest.mark.claim
def test_claim_fig3_separation_can_pass_and_fail():
    good = fig3(lambda s: 1.0, lambda p, q: 0.5)
    assert decide("fig3-separation", oracle("fig3", good)).verdict == "[Re]"
    bad = fig3(lambda s: 1.0, lambda p, q: 0.5,
               {"RoDeO loc": lambda sigma_pos, sigma_shape: linear(sigma_pos, 3) * (1 - 0.1 * sigma_shape)})
    assert decide("fig3-separation", oracle("fig3", bad)).verdict == "[¬Re]"


# --------------------------------------------------------------------------------------------------- Figs. 4, 5

P = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
ED = [0.0, 0.5, 1.0, 2.0, 3.0, 4.0]


def _of(name, fn):
    return lambda **point: fn(point[name])


def one_axis(x: str, xs, fns, **kw):
    return frame({x: xs}, {m: _of(x, fn) for m, fn in fns.items()}, **kw)


@pytest.mark.claim
def test_claim_fig4_acc50_rises_can_pass_and_fail():
    up = one_axis("p_underpred", P, {"acc@50": lambda p: 0.8 + 0.05 * p})
    assert decide("fig4-acc50-rises", oracle("fig4", up)).verdict == "[Re]"
    down = one_axis("p_underpred", P, {"acc@50": lambda p: 0.8 - 0.05 * p})
    assert decide("fig4-acc50-rises", oracle("fig4", down)).verdict == "[¬Re]"


@pytest.mark.claim
def test_claim_fig4_acc_rises_can_pass_and_fail():
    up = one_axis("p_underpred", P, {m: (lambda p: 0.8 + 0.05 * p) for m in RC.ACC})
    assert decide("fig4-acc-rises", oracle("fig4", up)).verdict == "[Re]"
    mixed = one_axis("p_underpred", P, {**{m: (lambda p: 0.8 + 0.05 * p) for m in RC.ACC},
                                        "acc@10": lambda p: 0.9 - 0.05 * p})
    d = decide("fig4-acc-rises", oracle("fig4", mixed))
    assert d.verdict == "[¬Re]" and "true positive" in d.reason


@pytest.mark.claim
def test_claim_fig4_ap_rodeo_fall_can_pass_and_fail():
    down = one_axis("p_underpred", P, {m: (lambda p: 0.8 * (1 - p)) for m in RC.AP + ("RoDeO",)})
    assert decide("fig4-ap-rodeo-fall", oracle("fig4", down)).verdict == "[Re]"
    flat = one_axis("p_underpred", P, {**{m: (lambda p: 0.8 * (1 - p)) for m in RC.AP + ("RoDeO",)},
                                       "AP@50": lambda p: 0.02}, noise=0.01)
    assert decide("fig4-ap-rodeo-fall", oracle("fig4", flat)).verdict in ("[~]", "[¬Re]")


@pytest.mark.claim
def test_claim_fig5_ap_high_iou_is_not_testable_as_stated():
    """Whether duplicates lower AP depends on their unstated confidence: [n/a] whatever AP does."""
    flat = one_axis("expected_duplicates", ED, {"AP@30": lambda e: 0.14, "AP@50": lambda e: 0.02 + 0.005 * e},
                    noise=0.001)
    falling = one_axis("expected_duplicates", ED, {"AP@30": lambda e: 0.14 * (1 - 0.06 * e),
                                                   "AP@50": lambda e: 0.02 + 0.005 * e}, noise=0.001)
    for f in (flat, falling):
        d = decide("fig5-ap-high-iou", oracle("fig5", f))
        assert d.verdict == "[n/a]" and "not testable as stated" in d.reason and "confidence" in d.reason
    ours = decided("fig5-ap-high-iou", oracle("fig5", falling)).ours
    assert "AP@30" in ours and "AP@50" in ours
    assert decide("fig5-ap-high-iou", RC.ClaimInputs()).verdict == "[n/a]"


@pytest.mark.claim
def test_claim_fig5_ap50_rises_can_pass_and_fail():
    up = one_axis("expected_duplicates", ED, {"AP@50": lambda e: 0.02 + 0.005 * e}, noise=0.001)
    assert decide("fig5-ap50-rises", oracle("fig5", up)).verdict == "[Re]"
    flat = one_axis("expected_duplicates", ED, {"AP@50": lambda e: 0.02}, noise=0.001, seed=3)
    assert decide("fig5-ap50-rises", oracle("fig5", flat)).verdict in ("[~]", "[¬Re]")


@pytest.mark.claim
def test_claim_fig5_rodeo_acc_fall_can_pass_and_fail():
    fns = {m: (lambda e: 1 / (1 + e)) for m in ("RoDeO",) + RC.SUB + RC.ACC}
    assert decide("fig5-rodeo-acc-fall", oracle("fig5", one_axis("expected_duplicates", ED, fns))).verdict == "[Re]"
    fns["acc@30"] = lambda e: 0.5 + 0.05 * e
    assert decide("fig5-rodeo-acc-fall", oracle("fig5", one_axis("expected_duplicates", ED, fns))).verdict == "[¬Re]"


@pytest.mark.claim
def test_claim_fig5_rodeo_exponential_can_pass_and_fail():
    expo = one_axis("expected_duplicates", ED, {m: (lambda e: np.exp(-0.7 * e)) for m in RC.SUB}, noise=0.002)
    assert decide("fig5-rodeo-exponential", oracle("fig5", expo)).verdict == "[Re]"
    lin = one_axis("expected_duplicates", ED, {m: (lambda e: 1 - 0.2 * e) for m in RC.SUB}, noise=0.002)
    d = decide("fig5-rodeo-exponential", oracle("fig5", lin))
    assert d.verdict == "[¬Re]" and "hyperbola" in d.reason


# --------------------------------------------------------------------------------------------------- Fig. 7

SIZES = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7]


def fig7(peak=0.21, acc=0.8, rodeo=0.3, rising=True):
    def up(random_box_size, p_overpred):
        return (0.1 + 0.2 * random_box_size) if rising else (0.3 - 0.2 * random_box_size)

    fns = {"RoDeO shape": lambda random_box_size, p_overpred: 0.4 - 4 * (random_box_size - peak) ** 2,
           "RoDeO": lambda random_box_size, p_overpred: rodeo}
    fns.update({m: (lambda random_box_size, p_overpred: acc + up(random_box_size, p_overpred) - 0.1) for m in RC.ACC})
    fns.update({m: up for m in RC.AP})
    return frame({"random_box_size": SIZES, "p_overpred": [0.0, 0.1]}, fns, noise=0.002)


@pytest.mark.claim
def test_reading_fig7_acc_high_holds_on_its_control_so_it_is_a_check(all_wrong):
    _, ctl = all_wrong
    assert RC.decide_fig7_acc_high(fig7())[0].verdict == "[Re]"
    assert RC.decide_fig7_acc_high(fig7(acc=0.1, rodeo=0.6))[0].verdict == "[¬Re]"
    control = control_frame({"random_box_size": SIZES, "p_overpred": [0.0, 0.1]}, ctl)
    assert RC.decide_fig7_acc_high(control)[0].verdict == "[Re]"  # every box wrong passes it too
    cl = chapter(oracle={"fig7": fig7()}, all_wrong_control=ctl)
    (chk,) = [k for k in cl.checks if "randomly placed" in k.check]
    assert chk.passed and "true-negative share" in chk.why and "fig7-acc-high" not in IDS


@pytest.mark.claim
def test_claim_fig7_shape_peak_can_pass_and_fail():
    summary = {"mean_box_side_sqrt_area": 0.24, "mean_box_width": 0.25, "mean_box_height": 0.25}
    assert decide("fig7-shape-peak", oracle("fig7", fig7(), box_summary=summary)).verdict == "[Re]"
    assert decide("fig7-shape-peak", oracle("fig7", fig7(peak=0.45))).verdict == "[¬Re]"


@pytest.mark.claim
def test_claim_fig7_larger_boxes_can_pass_and_fail():
    assert decide("fig7-larger-boxes", oracle("fig7", fig7())).verdict == "[Re]"
    assert decide("fig7-larger-boxes", oracle("fig7", fig7(rising=False))).verdict == "[¬Re]"


# --------------------------------------------------------------------------------------------------- Fig. 8

BIAS = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]


@pytest.mark.claim
def test_claim_fig8_sharp_vs_smooth_can_pass_and_fail():
    axes = {"position_bias": BIAS, "sigma_pos": [0.0, 0.25]}
    sharp = {m: (lambda position_bias, sigma_pos: step(position_bias, 0.6)) for m in RC.ACC + RC.AP}
    smooth = {m: (lambda position_bias, sigma_pos: linear(position_bias, 2.5)) for m in RC.ACC + RC.AP}
    good = frame(axes, {**sharp, "RoDeO": lambda position_bias, sigma_pos: linear(position_bias, 2.5)})
    f3 = frame({"sigma_pos": SIG, "sigma_shape": [0.0]}, {**{m: cliff for m in RC.ACC + RC.AP}, "RoDeO": smooth_rodeo})
    assert decide("fig8-sharp-vs-smooth", RC.ClaimInputs(oracle={"fig8": good, "fig3": f3})).verdict == "[Re]"
    bad = frame(axes, {**smooth, "RoDeO": lambda position_bias, sigma_pos: step(position_bias, 0.6)})
    assert decide("fig8-sharp-vs-smooth", oracle("fig8", bad)).verdict == "[¬Re]"


# --------------------------------------------------------------------------------------------------- Fig. 9

S9 = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5]


def fig9(acc_drop=0.0, ap10_drop=0.0, rodeo=lambda s: 1 - 0.3 * s):
    rows = []
    for panel in ("size", "ratio"):
        f = frame({"s": S9}, {**{m: (lambda s: 0.9 - acc_drop * s / 1.5) for m in RC.ACC},
                              "AP@10": lambda s: 1 - ap10_drop * s / 1.5, "RoDeO": rodeo}, seed=len(rows))
        f["sigma_size"] = f["s"] if panel == "size" else 0.0
        f["sigma_ratio"] = f["s"] if panel == "ratio" else 0.0
        rows.append(f.drop(columns="s") if panel == "size" else f[f["s"] > 0].drop(columns="s"))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.claim
def test_claim_fig9_acc_invariant_can_pass_and_fail():
    assert decide("fig9-acc-invariant", oracle("fig9", fig9())).verdict == "[Re]"
    d = decide("fig9-acc-invariant", oracle("fig9", fig9(acc_drop=0.3)))
    assert d.verdict == "[¬Re]" and "narrow band" in d.reason


@pytest.mark.claim
def test_claim_fig9_ap10_ratio_can_pass_and_fail():
    assert decide("fig9-ap10-ratio", oracle("fig9", fig9(ap10_drop=0.03))).verdict == "[Re]"
    assert decide("fig9-ap10-ratio", oracle("fig9", fig9(ap10_drop=0.4))).verdict == "[¬Re]"


@pytest.mark.claim
def test_claim_fig9_rodeo_smooth_can_pass_and_fail():
    assert decide("fig9-rodeo-smooth", oracle("fig9", fig9())).verdict == "[Re]"
    cliffy = fig9(rodeo=lambda s: 1.0 if s < 0.3 else 0.4)
    assert decide("fig9-rodeo-smooth", oracle("fig9", cliffy)).verdict == "[¬Re]"


# --------------------------------------------------------------------------------------------------- Figs. 10, 11


@pytest.mark.claim
def test_claim_fig10_all_fall_can_pass_and_fail():
    fns = {m: (lambda p: 0.9 - 0.8 * p) for m in RC.ACC + RC.AP + ("RoDeO",)}
    assert decide("fig10-all-fall", oracle("fig10", one_axis("p_overpred", P, fns))).verdict == "[Re]"
    fns["AP@10"] = lambda p: 0.2 + 0.1 * p
    assert decide("fig10-all-fall", oracle("fig10", one_axis("p_overpred", P, fns))).verdict == "[¬Re]"


@pytest.mark.claim
def test_claim_fig10_decay_forms_can_pass_and_fail():
    fns = {**{m: (lambda p: 0.9 * np.exp(-3 * p)) for m in RC.AP + ("RoDeO",)},
           **{m: (lambda p: 0.9 - 0.8 * p) for m in RC.ACC}}
    assert decide("fig10-decay-forms", oracle("fig10", one_axis("p_overpred", P, fns, noise=0.002))).verdict == "[Re]"
    lin = {m: (lambda p: 0.9 - 0.8 * p) for m in RC.ACC + RC.AP + ("RoDeO",)}
    d = decide("fig10-decay-forms", oracle("fig10", one_axis("p_overpred", P, lin, noise=0.002)))
    assert d.verdict == "[¬Re]" and "RoDeO" in d.reason


@pytest.mark.claim
def test_claim_fig11_all_fall_can_pass_and_fail():
    fns = {m: (lambda p: 0.9 - 0.5 * p) for m in RC.ACC + RC.AP + ("RoDeO",)}
    assert decide("fig11-all-fall", oracle("fig11", one_axis("p_confuse", P, fns))).verdict == "[Re]"
    fns["RoDeO"] = lambda p: 0.5
    assert decide("fig11-all-fall", oracle("fig11", one_axis("p_confuse", P, fns, seed=5))).verdict in ("[~]", "[¬Re]")


@pytest.mark.claim
def test_reading_fig11_acc_nonzero_holds_on_its_control_so_it_is_a_check(all_wrong):
    _, ctl = all_wrong
    ok = one_axis("p_confuse", P, {m: (lambda p: 0.9 - 0.2 * p) for m in RC.ACC})
    assert RC.decide_fig11_acc_nonzero(ok)[0].verdict == "[Re]"
    zero = one_axis("p_confuse", P, {m: (lambda p: 0.9 * (1 - p)) for m in RC.ACC}, noise=0.0)
    assert RC.decide_fig11_acc_nonzero(zero)[0].verdict in ("[~]", "[¬Re]")
    assert RC.decide_fig11_acc_nonzero(control_frame({"p_confuse": P}, ctl))[0].verdict == "[Re]"
    cl = chapter(oracle={"fig11": zero}, cells={"n_cells": 80, "n_occupied_cells": 10})
    (chk,) = [k for k in cl.checks if "never reaches zero" in k.check]
    assert not chk.passed and "87.5 %" in chk.why and "fig11-acc-nonzero" not in IDS


@pytest.mark.claim
def test_claim_fig11_loc_shape_can_pass_and_fail():
    ok = one_axis("p_confuse", P, {"RoDeO loc": lambda p: 0.74, "RoDeO shape": lambda p: 1.0})
    assert decide("fig11-loc-shape", oracle("fig11", ok)).verdict == "[Re]"
    bad = one_axis("p_confuse", P, {"RoDeO loc": lambda p: 0.74 - 0.1 * p, "RoDeO shape": lambda p: 1.0})
    assert decide("fig11-loc-shape", oracle("fig11", bad)).verdict == "[¬Re]"


# --------------------------------------------------------------------------------------------------- Fig. 6


def test_fig6_closed_form_is_a_check():
    curves = R.fig6_curves()
    assert RC.decide_fig6(curves)[0].verdict == "[Re]"
    broken = {k: v.copy() for k, v in curves.items()}
    broken["size"]["Hausdorff similarity"] = np.exp(-broken["size"]["factor"])  # bounded, not linear
    d = RC.decide_fig6(broken)[0]
    assert d.verdict == "[¬Re]" and "HS linear" in d.reason
    for c, passed in ((curves, True), (broken, False)):
        (chk,) = [k for k in chapter(fig6=c).checks if "Hausdorff" in k.check]
        assert chk.passed is passed and chk.why.startswith("a closed form")
    assert "fig6-ciou-hausdorff" not in IDS


# --------------------------------------------------------------------------------------------------- Table 1

METRICS = ("classification", "localization", "shape_matching", "total", "acc@30", "mAP")


def detector(acc_pneu=96.0, tp_pneu=0, boots=50, seed=0, readings=None, noise=1.0):
    """A detector table (per class and Total) and bootstrap resamples around it."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, c in enumerate(R.CLASSES):
        row = {"class": c, "classification": 20.0, "localization": 20.0, "shape_matching": 10.0, "total": 15.0,
               "acc@30": 50.0 + i, "mAP": 3.0, "tp@30": 5, "fp@30": 20, "fn@30": 10, "tn@30": 60}
        if c == "Pneumonia":
            row.update({"acc@30": acc_pneu, "total": 1.0, "mAP": 0.5, "tp@30": tp_pneu, "tn@30": 119, "fn@30": 5})
        row.update((readings or {}).get(c, {}))
        rows.append(row)
    rows.append({"class": "Total", **{m: 15.0 for m in METRICS}, "tp@30": 0, "fp@30": 0, "fn@30": 0, "tn@30": 0})
    table = pd.DataFrame(rows)
    boot = pd.concat([table.assign(**{m: table[m] + rng.normal(0, noise, len(table)) for m in METRICS}, resample=b)
                      for b in range(boots)], ignore_index=True)
    return table, boot


GOOD_AUC = dict.fromkeys(R.CLASSES, 0.85)


@pytest.mark.claim
def test_claim_table1_tn_dominance_can_pass_fail_and_floor():
    table, boot = detector()
    ins = RC.ClaimInputs(table1_ours=table, table1_boot=boot, detector_auc=GOOD_AUC)
    assert decide("table1-tn-dominance", ins).verdict == "[Re]"
    table, boot = detector(acc_pneu=20.0, tp_pneu=100)  # low acc, mostly true positives
    assert decide("table1-tn-dominance", with_fields(ins, table1_ours=table, table1_boot=boot)).verdict == "[¬Re]"
    floor = decide("table1-tn-dominance", with_fields(ins, detector_auc=dict.fromkeys(R.CLASSES, 0.55)))
    assert floor.verdict == "[n/a]" and "did not train" in floor.reason


@pytest.mark.claim
def test_claim_table1_tn_dominance_floor_is_per_class():
    """Gated on the Pneumonia classifier itself: a good mean AUC does not let a failed class through, and other
    classes below the floor do not block it."""
    table, boot = detector()
    ins = RC.ClaimInputs(table1_ours=table, table1_boot=boot)
    weak_pneu = GOOD_AUC | {"Pneumonia": 0.53}
    assert np.mean(list(weak_pneu.values())) > RC.AUC_FLOOR
    d = decide("table1-tn-dominance", with_fields(ins, detector_auc=weak_pneu))
    assert d.verdict == "[n/a]" and "Pneumonia classifier 0.530" in d.reason and str(RC.AUC_FLOOR) in d.reason
    others_weak = dict.fromkeys(R.CLASSES, 0.55) | {"Pneumonia": 0.85}
    assert decide("table1-tn-dominance", with_fields(ins, detector_auc=others_weak)).verdict == "[Re]"
    assert decide("table1-tn-dominance", with_fields(ins, detector_auc={})).verdict == "[n/a]"  # no AUC: no evidence


@pytest.mark.claim
def test_claim_table1_tn_dominance_on_its_control_is_not_reproduced(all_wrong):
    """The control: every NIH test box moved off its object, scored as a detector. acc@30 = TN_c/(TN_c + 2 n_c)
    ranks Pneumonia by its box count alone, which does not put it among the top 3: the rule can fail there."""
    targets, ctl = all_wrong
    preds = R.all_wrong_predictions(targets)
    table = R.detector_table(preds, targets)
    boot = R.bootstrap_samples(preds, targets, 40, 0)
    row = decided("table1-tn-dominance", RC.ClaimInputs(table1_ours=table, table1_boot=boot, detector_auc=GOOD_AUC,
                                                        all_wrong_control=ctl))
    assert row.verdict != "[Re]"
    assert "control (every NIH test box moved off its object)" in row.ours


@pytest.mark.claim
def test_claim_table1_class_readings_can_pass_fail_and_floor():
    ok = {"Atelectasis": {"classification": 30.0, "shape_matching": 5.0, "mAP": 2.0},
          "Pneumonia": {"classification": 5.0, "localization": 40.0, "shape_matching": 20.0, "mAP": 2.1},
          "Nodule": {"classification": 20.0, "localization": 5.0, "shape_matching": 1.0}}
    table, boot = detector(readings=ok, noise=0.3)
    ins = RC.ClaimInputs(table1_ours=table, table1_boot=boot, detector_auc=GOOD_AUC, detector_data="chestxray14")
    assert decide("table1-class-readings", ins).verdict == "[Re]"
    bad = {**ok, "Nodule": {"classification": 1.0, "localization": 5.0, "shape_matching": 20.0}}
    table, boot = detector(readings=bad, noise=0.3)
    assert decide("table1-class-readings", with_fields(ins, table1_ours=table, table1_boot=boot)).verdict == "[¬Re]"
    assert decide("table1-class-readings", with_fields(ins, detector_data="phantom")).verdict == "[n/a]"
    low = decide("table1-class-readings", with_fields(ins, detector_auc=dict.fromkeys(R.CLASSES, 0.6)))
    assert low.verdict == "[n/a]" and "did not train" in low.reason
    # per class: one of the row's classes below the floor makes the row [n/a], naming it; others do not matter
    nodule = decide("table1-class-readings", with_fields(ins, detector_auc=GOOD_AUC | {"Nodule": 0.6}))
    assert nodule.verdict == "[n/a]" and "Nodule classifier 0.600" in nodule.reason
    assert "Atelectasis classifier" not in nodule.reason
    assert decide("table1-class-readings", with_fields(ins, detector_auc=GOOD_AUC | {"Mass": 0.5})).verdict == "[Re]"


# --------------------------------------------------------------------------------------------------- data


@pytest.mark.claim
def test_claim_data_rows_can_pass_and_fail():
    s = {"n_images": 882, "n_boxes": 984, "mean_box_width": 0.2503, "mean_box_height": 0.2464,
         "mean_box_side_sqrt_area": 0.24}
    # the count of boxed images is arithmetic on the shipped list: a check when it agrees, an erratum when not
    cl = chapter(box_summary=s)
    assert not [e for e in cl.errata if e.where.startswith("Sec. 4")]
    assert [k for k in cl.checks if "882 boxed images" in k.check][0].passed
    cl = chapter(box_summary=s | {"n_images": 880})
    (err,) = [e for e in cl.errata if e.where.startswith("Sec. 4")]
    assert err.printed == "882 images" and err.recomputed == "880 images with 984 boxes"
    assert "data-boxed-images" not in IDS
    assert {c.id: c.basis for c in cl.claims}["data-mean-box-size"] == "exact"
    assert decide("data-mean-box-size", RC.ClaimInputs(box_summary=s)).verdict == "[Re]"
    assert decide("data-mean-box-size", RC.ClaimInputs(box_summary=s | {"mean_box_height": 0.2})).verdict == "[¬Re]"
    assert decide("data-mean-box-size", RC.ClaimInputs()).verdict == "[n/a]"


# --------------------------------------------------------------------------------------------------- the table


def test_claim_every_rule_has_a_test():
    tested = {"fig3-ap-position", "fig3-rodeo-smoother", "fig3-separation", "fig4-acc50-rises",
              "fig4-acc-rises", "fig4-ap-rodeo-fall", "fig5-ap-high-iou", "fig5-ap50-rises", "fig5-rodeo-acc-fall",
              "fig5-rodeo-exponential", "fig7-shape-peak", "fig7-larger-boxes",
              "fig8-sharp-vs-smooth", "fig9-acc-invariant", "fig9-ap10-ratio", "fig9-rodeo-smooth", "fig10-all-fall",
              "fig10-decay-forms", "fig11-all-fall", "fig11-loc-shape",
              "table1-tn-dominance", "table1-class-readings", "data-mean-box-size"}
    assert set(IDS) == tested and len(IDS) == len(tested)


def test_every_control_names_a_test_of_this_module():
    """A registry entry's control names the test that runs its rule on inputs where it must fail: that test exists."""
    here = globals()
    for spec in RC.CLAIMS.specs:
        named = re.findall(r"\btest_\w+", spec.control)
        assert named, spec.id
        assert all(callable(here.get(name)) for name in named), (spec.id, named)


def test_claim_basis_and_substitution():
    """Oracle rows run on the real NIH boxes with simulated predictions; detector rows follow the detector's data."""
    rows = {c.id: c for c in chapter().claims}
    oracle_ids = [cid for cid in IDS if cid.startswith("fig")]
    assert oracle_ids and all(rows[c].basis == "real" and rows[c].substitution == RC.ORACLE_SUBSTITUTION
                              for c in oracle_ids)
    assert rows["table1-tn-dominance"].basis == "phantom" and "phantoms" in rows["table1-tn-dominance"].substitution
    real = {c.id: c for c in chapter(detector_data="chestxray14").claims}
    assert real["table1-class-readings"].basis == "real"


@pytest.mark.claim
def test_claim_registry_rows_checks_and_errata():
    cl = chapter()  # nothing computed: every claim is [n/a], paper arithmetic remains
    assert [c.id for c in cl.claims] == IDS
    assert {c.verdict for c in cl.claims} == {"[n/a]"} and all(c.decision.reason for c in cl.claims)
    assert all(c.basis in BASES and c.scale == "smoke" and c.paper and c.rule for c in cl.claims)
    assert [e.where for e in cl.errata] == ["Table 1, Atelectasis, RoDeO total"]
    assert cl.errata[0].printed == "28.4" and cl.errata[0].recomputed == "12.0"
    assert all(k.passed for k in cl.checks)  # the paper's other Table 1 arithmetic adds up
    # a closed-form check can fail: loc far from 2^(−|Δp|²)
    f8 = frame({"position_bias": [0.0, 1.0], "sigma_pos": [0.0]}, {"RoDeO loc": lambda position_bias, sigma_pos: 1.0,
                                                                      "RoDeO shape": lambda **k: 1.0,
                                                                      "RoDeO cls": lambda **k: 1.0}, noise=0.0)
    cl = chapter(oracle={"fig8": f8}, eq8_literal_loc={1.0: 0.001})
    bias = [k for k in cl.checks if "position bias" in k.check]
    assert len(bias) == 1 and not bias[0].passed
    assert any("Eq. 8" in e.where for e in cl.errata)
    assert "fig8-sharp-vs-smooth" in explain_claims(cl)


def test_claim_paper_column_holds_paper_figures_only():
    """The paper column quotes the paper; our recomputed numbers (e.g. Atelectasis' 12.0) never appear there."""
    for c in chapter().claims:
        assert "12.0" not in c.paper and "ours" not in c.paper.lower(), c.id
