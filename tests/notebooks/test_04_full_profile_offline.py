"""Chapters 4a and 4b execute their ``full`` (real-data) branches end to end, offline, on phantom data sets written
in the real formats (PCam HDF5, CAMELYON16 pyramidal TIFF + ASAP XML, CIFAR-10 python batches), with the full
profile's sizes shrunk through parameter overrides."""

from __future__ import annotations

import math

import pytest

from medeval.data.camelyon16 import PatchGeometry
from medeval.data.phantoms.formats import write_camelyon16_like, write_cifar10_like, write_pcam_like
from medeval.experiments.histology import camelyon16_test_patch_table
from medeval.runtime.execution import run_chapter

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

SMALL_4A = {
    "slide_size": 768, "n_train_slides": 4, "n_test_slides": 1, "unit_cap": 12, "preliminary_fraction": 0.2,
    "base_channels": 4, "depth": 1, "epochs": 1, "n_runs": 2, "n_preliminary_runs": 1, "tile_sizes": [1, 16, 96],
    "evaluation_tile": 96, "cls_base_channels": 4, "cls_n_blocks": 2, "cls_epochs": 1, "cls_unit_cap": 20,
    "cls_runs": 2, "device": "cpu",
}
SMALL_4B = {
    "n_trials": 2, "n_cifar_trials": 2, "cifar_model": "small_cnn", "cifar_max_epochs": 2, "cls_base_channels": 4,
    "cls_n_blocks": 2, "cls_epochs": 1, "cls_unit_cap": 20, "device": "cpu",
}


@pytest.fixture(scope="module")
def real_format_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("real-format-data")
    write_pcam_like(root / "pcam", n_train=160, n_valid=16, n_test=32, seed=0)
    write_camelyon16_like(root / "camelyon16", n_slides=3, height=512, width=768, seed=5, tumour_slides=2)
    write_cifar10_like(root / "cifar10", n_train_per_class=30, n_test_per_class=10, seed=0)
    mp = pytest.MonkeyPatch()
    mp.setenv("MEDEVAL_DATA", str(root))
    mp.setenv("MEDEVAL_RUNS", str(root / "_runs"))
    yield root
    mp.undo()


def test_04a_full_scores_the_camelyon16_test_patches(real_format_env):
    res = run_chapter("04a-class-distribution", "full", SMALL_4A, out_dir=real_format_env / "_runs" / "full").results
    assert res["classification_imbalanced_test"] == "camelyon16"
    table, summary = camelyon16_test_patch_table(real_format_env / "camelyon16", PatchGeometry(), max_workers=1)
    assert res["camelyon16_test_patches"] == len(table) > 0
    assert res["camelyon16_test_positives"] == int(table["label"].sum()) > 0
    ratio = (len(table) - table["label"].sum()) / table["label"].sum()
    assert math.isclose(res["classification_imbalanced_ratio"], ratio, rel_tol=1e-9)
    sets = {(r["distribution"], r["test_set"]) for r in res["classification_aucs"]}
    assert sets == {(d, t) for d in ("E2.a", "E2.b", "E2.c") for t in ("balanced", "imbalanced")}
    for r in res["classification_aucs"]:
        assert 0.0 <= r["roc_auc"] <= 1.0
    assert any("1:" in row["reason"] and "camelyon16" in row["reason"] for row in res["paper_vs_us"])


def test_04b_full_runs_pcam_camelyon16_and_cifar10(real_format_env):
    res = run_chapter("04b-evaluation-measures", "full", SMALL_4B,
                      out_dir=real_format_env / "_runs" / "full").results
    # the real tasks replace the phantom and digits tasks under the same roles
    assert res["tasks"] == {"histology": "PCam→CAMELYON16", "cifar": "CIFAR-10"}
    for role in ("histology", "cifar"):
        rows = res[f"trials_{role}"]
        assert {r["model"] for r in rows} == {"En", "Ep"}
        assert all(0 <= r["ROC-AUC"] <= 1 and not math.isnan(r["precision-AUC (PR-T)"]) for r in rows)
    cifar = res["trials_cifar"]
    assert all(r["test positives"] == 10 and r["test negatives"] == 90 for r in cifar)  # 1:9 test set
    rows = {r["id"]: r for r in res["paper_vs_us"]}
    # the claims on the real tasks rest on real data
    assert rows["fixed-curves-histology"]["basis"] == "real" and rows["fixed-curves-cifar"]["basis"] == "real"
