"""Chapters 4a and 4b execute their ``full`` (real-data) branches end to end, offline, on phantom data sets written
in the real formats (PCam HDF5, CAMELYON16 pyramidal TIFF + ASAP XML + reference standard, CIFAR-10 python
batches), with the full profile's sizes shrunk through parameter overrides. 4a scores the complete CAMELYON16 test
set; 4b runs on a partial one (a tumour slide's XML missing) with ``cls_imbalanced_test=auto``, and its page says
what stood in and why; without that request a partial test set is refused before any kernel starts."""

from __future__ import annotations

import math

import pytest

from medeval.data.camelyon16 import PatchGeometry
from medeval.data.phantoms.formats import write_camelyon16_like, write_cifar10_like, write_pcam_like
from medeval.experiments.histology import camelyon16_test_patch_table
from medeval.runtime.execution import run_chapter
from medeval.runtime.params import PreflightError

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

SMALL_4A = {
    "slide_size": 768, "n_train_slides": 3, "n_test_slides": 1, "unit_cap": 12, "preliminary_fraction": 0.2,
    "base_channels": 4, "depth": 1, "epochs": 1, "n_runs": 2, "n_preliminary_runs": 1, "tile_sizes": [1, 16, 96],
    "evaluation_tile": 96, "cls_base_channels": 4, "cls_n_blocks": 2, "cls_epochs": 1, "cls_unit_cap": 20,
    "cls_runs": 2, "device": "cpu",
    "hypothesis_experiments": ["E2.a", "E2.b"],  # the phantom segmentation study: all 11 run in the smoke book
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


@pytest.fixture
def partial_camelyon16(real_format_env, tmp_path, monkeypatch):
    """The same data with test_002's annotation XML missing (test_002 is a tumour slide)."""
    root = tmp_path / "data"
    for name in ("pcam", "cifar10"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).symlink_to(real_format_env / name, target_is_directory=True)
    for path in (real_format_env / "camelyon16").rglob("*"):
        rel = path.relative_to(real_format_env / "camelyon16")
        if path.is_file() and rel.name != "test_002.xml":
            (root / "camelyon16" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "camelyon16" / rel).symlink_to(path)
    monkeypatch.setenv("MEDEVAL_DATA", str(root))
    return root


def test_partial_camelyon16_is_refused_before_the_kernel_starts(partial_camelyon16):
    for chapter, small in (("04a-class-distribution", SMALL_4A), ("04b-evaluation-measures", SMALL_4B)):
        with pytest.raises(PreflightError) as err:
            run_chapter(chapter, "full", small, out_dir=partial_camelyon16 / "_runs")
        assert "test_002.xml" in str(err.value) and "cls_imbalanced_test" in str(err.value)
    assert not (partial_camelyon16 / "_runs").exists()  # nothing ran


def test_04b_full_runs_pcam_and_cifar10_and_states_what_stood_in(partial_camelyon16):
    run = run_chapter("04b-evaluation-measures", "full", {**SMALL_4B, "cls_imbalanced_test": "auto"},
                      out_dir=partial_camelyon16 / "_runs" / "full")
    res = run.results
    # the real tasks replace the phantom and digits tasks under the same roles; CAMELYON16 is incomplete, so a
    # subsample of the PCam test split stood in, as cls_imbalanced_test=auto allows, and the page says so
    assert res["tasks"] == {"histology": "PCam→PCam subsample", "cifar": "CIFAR-10"}
    note = res["histology_test_set_note"]
    assert "cls_imbalanced_test=auto" in note and "test_002.xml" in note and "PCam test split" in note
    page = page_text(run.notebook)
    assert "What stood in:" in page and "test_002.xml" in page
    for role in ("histology", "cifar"):
        rows = res[f"trials_{role}"]
        assert {r["model"] for r in rows} == {"En", "Ep"}
        assert all(0 <= r["ROC-AUC"] <= 1 and not math.isnan(r["precision-AUC (PR-T)"]) for r in rows)
    cifar = res["trials_cifar"]
    assert all(r["test positives"] == 10 and r["test negatives"] == 90 for r in cifar)  # 1:9 test set
    rows = {r["id"]: r for r in res["paper_vs_us"]}
    # the claims on the real tasks rest on real data
    assert rows["prt-vs-roc-histology"]["basis"] == "real" and rows["prt-vs-roc-cifar"]["basis"] == "real"


def page_text(notebook) -> str:
    """The text and Markdown outputs of an executed notebook."""
    import json

    cells = json.loads(notebook.read_text())["cells"]
    return "\n".join(str(o.get("data", {}).get("text/markdown", "")) + str(o.get("text", ""))
                     for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
