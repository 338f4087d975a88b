"""Chapter 4's real-data path (profile full) end to end on files in the real formats: PCam HDF5 written here and
a CAMELYON16-layout phantom test set (pyramidal TIFFs + ASAP XML)."""

import numpy as np
import pytest

from medeval.data import camelyon16 as c16
from medeval.data.phantoms.formats import write_camelyon16_like, write_pcam_like
from medeval.experiments import class_distribution as cd
from medeval.experiments import histology as H
from medeval.runtime.grid import run_grid
from medeval.runtime.params import ParameterError, PreflightError, preflight, resolve_params

CHAPTER = "04a-class-distribution"


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("medeval-data")
    write_pcam_like(root / "pcam", n_train=160, n_valid=16, n_test=16, seed=0)
    write_camelyon16_like(root / "camelyon16", n_slides=3, height=512, width=768, seed=5, tumour_slides=2)
    return root


def _partial(data_root, tmp_path, drop: str):
    """A data folder whose CAMELYON16 test set lacks ``drop`` (a path under camelyon16/), the rest linked."""
    root = tmp_path / "partial"
    (root / "camelyon16").mkdir(parents=True)
    (root / "pcam").symlink_to(data_root / "pcam", target_is_directory=True)
    for path in (data_root / "camelyon16").rglob("*"):
        rel = path.relative_to(data_root / "camelyon16")
        if path.is_dir() or str(rel) == drop or drop in [str(p) for p in rel.parents]:
            continue
        (root / "camelyon16" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "camelyon16" / rel).symlink_to(path)
    return root


def _params(**kw):
    base = dict(data_source="real", patch_size=96, cls_central_size=32, cls_test_stride=32, cls_epochs=1,
                cls_base_channels=4, cls_n_blocks=2, cls_runs=2, cls_unit_cap=None, batch_size=16, max_workers=1,
                device="cpu")
    return cd.Params(**{**base, **kw})


@pytest.fixture(scope="module")
def pcam_runs(data_root):
    mp = pytest.MonkeyPatch()
    mp.setenv("MEDEVAL_DATA", str(data_root))
    try:
        P = _params()
        preflight(CHAPTER, P)  # PCam and the complete CAMELYON16 test set present
        grid = [g for g in cd.classification_grid(P) if g["distribution"] in ("E2.a", "E2.b")]
        yield P, run_grid(cd.pcam_classification_run, grid, max_workers=1)
    finally:
        mp.undo()


def test_pcam_runs_train_on_the_requested_distribution(pcam_runs):
    _, runs = pcam_runs
    for r in runs:
        assert r["imbalanced_source"] == "pcam_subsample"
        assert r["balanced"]["y_true"].mean() == 0.5  # the PCam test split is balanced
        y = r["imbalanced"]["y_true"]
        assert y.sum() == (~y).sum() // 12 or y.sum() == 0
        taken = r["taken"]
        if r["distribution"] == "E2.a":
            assert taken["C"] == taken["notC"]
        else:  # E2.b: notC-biased 1:3
            assert taken["notC"] == 3 * taken["C"]
        assert set(r["model_state"]) and r["model_config"] == {"base_channels": 4, "n_blocks": 2}


def test_camelyon16_scores_equal_direct_prediction(pcam_runs, data_root, monkeypatch, tmp_path):
    monkeypatch.setenv("MEDEVAL_DATA", str(data_root))
    P, runs = pcam_runs
    assert cd.imbalanced_test_source(P) == "camelyon16"
    new, source, note, table, summary = cd.with_imbalanced_test(runs, P, cache_dir=tmp_path)
    assert source == "camelyon16" and note == "" and len(table) > 0
    assert list(summary["slide"]) == ["test_001", "test_002", "test_003"]
    assert table["label"].any() and not table["label"].all()
    for k, r in enumerate(new):
        assert r["imbalanced_source"] == "camelyon16"
        np.testing.assert_array_equal(r["imbalanced"]["y_true"], table["label"].to_numpy())
        assert r["balanced"] is runs[k]["balanced"]  # untouched
    assert not np.array_equal(new[0]["imbalanced"]["score_c"], new[1]["imbalanced"]["score_c"])
    # oracle: the same patches cut from the whole level and scored one model at a time
    geometry = cd.camelyon16_geometry(P)
    rows = np.r_[0, len(table) // 2, len(table) - 1, np.flatnonzero(table["label"].to_numpy())[:3]]
    from medeval.data.readers import SlideReader
    from medeval.models.training import predict

    crops = []
    for i in rows:
        t = table.iloc[i]
        path = summary.set_index("slide").loc[t.slide, "path"]
        with SlideReader(path) as slide:
            level = slide.read_level(geometry.level)
        crops.append(level[t.y : t.y + 96, t.x : t.x + 96])
    crops = np.stack(crops)
    for k, r in enumerate(runs):
        net = cd.rebuild_patch_classifier(r)
        direct = predict(net, H.uint8_nchw(crops), device="cpu", forward=H.uint8_softmax_probabilities)[:, 1]
        np.testing.assert_allclose(new[k]["imbalanced"]["score_c"][rows], direct, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(new[k]["imbalanced"]["argmax_c"], new[k]["imbalanced"]["score_c"] > 0.5)
    # cached: the score matrix is one verified grid-cache entry, reused
    cached = [p for p in tmp_path.glob("*.json") if '"camelyon16-scores"' in p.read_text()]
    assert len(cached) == 1
    again = cd.with_imbalanced_test(runs, P, cache_dir=tmp_path).runs
    np.testing.assert_array_equal(again[1]["imbalanced"]["score_c"], new[1]["imbalanced"]["score_c"])
    # the chapter's analysis runs on the result
    s = cd.summarise_runs(new, key="imbalanced")
    assert set(s) == {"E2.a", "E2.b"} and 0 <= cd.auc_table(s)["roc_auc"].min() <= 1


def test_source_selection_and_errors(data_root, tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "pcam").symlink_to(data_root / "pcam", target_is_directory=True)
    monkeypatch.setenv("MEDEVAL_DATA", str(empty))
    source, note = cd.imbalanced_test_choice(_params(cls_imbalanced_test="auto"))  # auto: CAMELYON16 absent
    assert source == "pcam_subsample" and "camelyon16" in note and "PCam test split" in note
    assert cd.imbalanced_test_source(_params(data_source="phantom", cls_imbalanced_test="camelyon16")) == "phantom"
    with pytest.raises(PreflightError, match="cls_imbalanced_test=camelyon16 needs"):
        preflight(CHAPTER, _params(cls_imbalanced_test="camelyon16"))
    with pytest.raises(ParameterError, match="96 px"):
        resolve_params(CHAPTER, "full", {"patch_size": 64})
    monkeypatch.setenv("MEDEVAL_DATA", str(data_root))
    source, note = cd.imbalanced_test_choice(_params(cls_imbalanced_test="pcam_subsample"))
    assert source == "pcam_subsample" and note.startswith("cls_imbalanced_test=pcam_subsample")
    with pytest.raises(ValueError, match="distribution"):
        cd.pcam_classification_run(distribution="E9", run=0, data={"seed": 0}, cls={})


def test_geometry_follows_the_parameters():
    g = cd.camelyon16_geometry(_params(c16_min_tissue_fraction=0.25, c16_tissue_channel="saturation"))
    assert g == c16.PatchGeometry(level=2, patch_size=96, stride=32, central_size=32, min_tissue_fraction=0.25,
                                  tissue_channel="saturation")


def test_uint8_dataset_and_stream_validation():
    x = np.zeros((3, 8, 8, 3), np.uint8)
    x[1] = 255
    ds = H.UInt8PatchDataset(x, np.array([0, 1, 0]))
    img, lab = ds[1]
    assert img.shape == (3, 8, 8) and float(img.max()) == 1.0 and lab == 1
    with pytest.raises(ValueError, match="uint8"):
        H.UInt8PatchDataset(x.astype(float), np.zeros(3))
    with pytest.raises(ValueError, match="labels"):
        H.UInt8PatchDataset(x, np.zeros(2))
    from medeval.models.unet import PatchClassifier

    with pytest.raises(RuntimeError, match="never streamed"):
        H.score_patch_stream([PatchClassifier(base_channels=2, n_blocks=1)], [(np.array([0]), x[:1])], 2,
                             device="cpu")


def test_c16_slides_must_not_be_empty():
    from medeval.runtime.params import ParameterError, resolve_params

    with pytest.raises(ParameterError, match="c16_slides"):
        resolve_params("04a-class-distribution", "default", {"c16_slides": []})


@pytest.mark.parametrize(("drop", "named"), [
    ("testing/lesion_annotations/test_002.xml", "test_002.xml"),
    ("testing/lesion_annotations", "lesion_annotations"),
    ("testing/images/test_003.tif", "test_003"),
])
def test_partial_camelyon16_is_refused_unless_a_fallback_is_asked(data_root, tmp_path, monkeypatch, drop, named):
    """Item 6: a partial CAMELYON16 test set is a pre-flight error naming what is missing; with
    cls_imbalanced_test=auto the PCam subsample stands in and the note (shown on the page) says what and why; a
    tumour slide never becomes all-negative."""
    monkeypatch.setenv("MEDEVAL_DATA", str(_partial(data_root, tmp_path, drop)))
    with pytest.raises(PreflightError) as err:
        preflight(CHAPTER, _params())
    assert named in str(err.value) and "cls_imbalanced_test" in str(err.value)
    with pytest.raises(c16.IncompleteTestSetError, match=named):
        cd.imbalanced_test_choice(_params())  # a direct caller is refused too
    P = _params(cls_imbalanced_test="auto")
    preflight(CHAPTER, P)
    imb = cd.with_imbalanced_test([], P)
    assert imb.source == "pcam_subsample" and imb.table is None
    assert named in imb.note and "cls_imbalanced_test=auto" in imb.note and "PCam test split" in imb.note
    # the selection that avoids the missing part runs on CAMELYON16
    if drop.endswith(".xml"):
        assert cd.imbalanced_test_choice(_params(c16_slides=["test_001", "test_003"])) == ("camelyon16", "")
