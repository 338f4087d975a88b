"""Chapters 2 and 5 execute their ``full`` (real ChestX-ray14 images) branches end to end, offline, on a small
ChestX-ray14-layout phantom folder (``images/<Image Index>.png`` named after rows of the shipped label table and
of the NIH box list), with the full profile's sizes shrunk through parameter overrides."""

from __future__ import annotations

import math

import numpy as np
import pytest

from medeval.data.chestxray14 import load_boxes, patient_id_of
from medeval.data.phantoms.formats import add_chestxray14_copies, write_chestxray14_like
from medeval.runtime.execution import run_chapter

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

N_UNBOXED, N_BOXED, PER_CLASS, FOLLOWUPS = 40, 4, 3, 4
SMALL_02 = {  # the smoke profile's oracle sweeps; a small CNN on the phantom folder
    "n_runs": 1, "sigma_pos": [0, 0.5, 1.0], "sigma_shape": [0, 0.5], "p_values": [0, 0.5, 1.0],
    "expected_duplicates": [0, 1, 3], "position_bias": [0, 1.0], "sigma_size": [0, 0.5], "sigma_ratio": [0, 0.5],
    "random_box_sizes": [0.1, 0.25], "shift_grid_size": 9, "n_train": 24, "image_size": 64, "backbone": "small_cnn",
    "epochs": 1, "batch_size": 16, "n_bootstrap": 5, "device": "cpu",
}
SMALL_05 = {
    "split_repetitions": 1, "iterative_repetitions": 0, "split_subsample": 1000, "image_size": 64, "input_size": 32,
    "backbone": "small_cnn", "epochs": 1, "batch_size": 16, "n_bootstrap": 10, "eve_pairs": 2, "device": "cpu",
}


@pytest.fixture(scope="module")
def cxr14_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("cxr14-real-format")
    names = write_chestxray14_like(root / "chestxray14-images", N_UNBOXED, 64, seed=0, boxed_images=N_BOXED)
    names += add_chestxray14_copies(root / "chestxray14-images" / "images", PER_CLASS, FOLLOWUPS)
    mp = pytest.MonkeyPatch()
    mp.setenv("MEDEVAL_DATA", str(root))
    mp.setenv("MEDEVAL_RUNS", str(root / "_runs"))
    yield root, names
    mp.undo()


def test_02_full_trains_the_detector_on_the_chestxray14_folder(cxr14_env, in_range):
    from medeval.experiments import rodeo as R

    root, names = cxr14_env
    res = run_chapter("02-rodeo", "full", SMALL_02, out_dir=root / "_runs" / "full").results
    boxes = load_boxes()
    boxed_patients = set(patient_id_of(boxes["image_index"].unique()))
    _, oracle_table = R.load_oracle_targets(R.Params().oracle_test_fraction, R.Params().seed)
    expected_test = sorted(set(names) & set(oracle_table["image_index"]))
    counts = res["detector_data_counts"]
    assert counts["data"] == "chestxray14" and counts["n_images_found"] == len(names)
    assert counts["n_train"] == SMALL_02["n_train"] and counts["n_train_patients"] <= counts["n_train"]
    assert counts["n_train_pool"] == sum(p not in boxed_patients for p in patient_id_of(names))
    # the detector's test set is the oracle test half of the box list, restricted to the images present
    assert sorted(res["detector_test_images"]) == expected_test and counts["n_test"] == len(expected_test) > 0
    assert counts["n_test_listed"] == res["oracle_n_images"]
    assert counts["n_test_missing"] == counts["n_test_listed"] - counts["n_test"]
    assert counts["n_test_boxes"] == int(boxes["image_index"].isin(expected_test).sum())
    assert res["nih_n_boxes"] == 984  # the oracle part still runs on the whole box list
    table = {r["class"]: r for r in res["table1_ours"]}
    assert list(table) == [*R.CLASSES, "Total"]
    assert sum(r["n_matched"] + r["n_missed"] for r in res["table1_ours"][:-1]) == counts["n_test_boxes"]
    columns = ("classification", "localization", "shape_matching", "total", "acc@30", "mAP")
    in_range((row[col] for row in res["table1_ours"] for col in columns), 0.0, 100.0, finite_share=0.0)
    in_range((table["Total"][col] for col in columns), 0.0, 100.0)  # the whole test set is always scored
    aucs = [v for v in res["detector_auc"].values() if v is not None and not math.isnan(v)]
    assert aucs and all(0.0 <= v <= 1.0 for v in aucs)
    assert {r["metric"] for r in res["table1_ci"]} >= {"total", "acc@30", "mAP"}
    rows = {row["id"]: row for row in res["paper_vs_us"]}
    # the detector rows now rest on real images: their basis says so and the phantom [n/a] reason is gone
    for cid in ("table1-tn-dominance", "table1-class-readings"):
        assert rows[cid]["basis"] == "real", rows[cid]
    assert "small CNN trained on CXR phantoms" not in rows["table1-class-readings"]["reason"]


def test_05_full_trains_the_cnn_on_the_chestxray14_folder(cxr14_env, in_range):
    root, names = cxr14_env
    res = run_chapter("05-multilabel", "full", SMALL_05, out_dir=root / "_runs" / "full").results
    runs = res["cnn_real_runs"]
    assert [(r["protocol"], r["fold"]) for r in runs] == [("holdout_70_10_20", 0)] + [("kfold_5", j) for j in range(5)]
    n_patients = len(set(patient_id_of(names)))
    for r in runs:
        assert r["n_images"] == len(names) and r["n_patients"] == n_patients
        assert r["n_train"] + r["n_validation"] + r["n_test"] == len(names)
        assert r["n_train"] > 0 and r["n_validation"] > 0 and r["n_test"] > 0
    kfold = [r for r in runs if r["protocol"] == "kfold_5"]
    assert sum(r["n_test"] for r in kfold) == len(names)  # every image tested once
    assert sum(r["n_test_patients"] for r in kfold) == n_patients  # folds are patient-disjoint
    holdout = runs[0]
    assert abs(holdout["n_test"] - 0.2 * len(names)) <= 2
    assert res["cnn_n_train"] == holdout["n_train"] and res["cnn_n_test"] == holdout["n_test"]
    assert res["N"] == 112120  # the label analyses still use the whole shipped table
    in_range((res[key] for key in ("cnn_AUC_macro", "cnn_F1_micro", "cnn_mAP")), 0.0, 1.0)
    for protocol in ("holdout_70_10_20", "kfold_5"):
        table = res[f"published_auc_{protocol}"]
        assert [r["label"] for r in table][-1] == "mean" and len(table) == 15
        ours = [r["ours"] for r in table[:-1] if r["ours"] is not None and not math.isnan(r["ours"])]
        assert ours and all(0.0 <= v <= 1.0 for v in ours)
    assert "real images" in res["cnn_auc_summary"]
    assert np.isfinite(res["cnn_loss_history"]).all()
