"""CAMELYON16 test-patch extraction (Otsu, grid, labels, streaming) on a phantom test set in the real layout."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medeval.data import camelyon16 as c
from medeval.data import camelyon16_layout as layout
from medeval.data.manifest import DatasetUnavailableError
from medeval.data.phantoms.formats import mask_runs_to_asap_xml, write_camelyon16_like, write_pyramidal_tiff
from medeval.data.readers import SlideReader, rasterize_asap_annotations, read_asap_annotations
from medeval.experiments.histology import camelyon16_test_patch_table

GEOMETRY = c.PatchGeometry(level=2, patch_size=24, stride=8, central_size=8)


@pytest.fixture(scope="module")
def testset(tmp_path_factory):
    root = tmp_path_factory.mktemp("camelyon16")
    info = write_camelyon16_like(root, n_slides=3, height=512, width=768, seed=11, tumour_slides=2)
    return root, info


@pytest.fixture(scope="module")
def table(testset):
    root, _ = testset
    return camelyon16_test_patch_table(root, GEOMETRY, max_workers=1)


# ---------------------------------------------------------------------------------------------- Otsu


def _brute_force_otsu(hist):
    """Otsu as the minimum of the within-class variance over every split (independent formulation)."""
    levels = np.arange(hist.size)
    best, arg = np.inf, None
    for t in range(hist.size - 1):
        lo, hi = hist[: t + 1], hist[t + 1 :]
        if lo.sum() == 0 or hi.sum() == 0:
            continue
        var = sum(
            part.sum() * np.average((levels[sl] - np.average(levels[sl], weights=part)) ** 2, weights=part)
            for part, sl in ((lo, slice(0, t + 1)), (hi, slice(t + 1, None)))
        )
        if arg is None or var < best - 1e-9 * best:
            best, arg = var, t
    return arg


@pytest.mark.parametrize("seed", range(6))
def test_otsu_matches_scikit_image_and_brute_force(seed):
    from skimage.filters import threshold_otsu

    rng = np.random.default_rng(seed)
    n = rng.integers(200, 5000)
    a, b = sorted(rng.integers(10, 245, 2))
    values = np.clip(np.r_[rng.normal(a, rng.uniform(3, 30), n), rng.normal(b, rng.uniform(3, 30), n // 3)], 0, 255)
    image = values.astype(np.uint8)
    hist = np.bincount(image, minlength=256)
    t = c.otsu_threshold(hist)
    assert t == _brute_force_otsu(hist)
    assert t == int(threshold_otsu(image))


def test_otsu_edge_cases():
    assert c.otsu_threshold(np.bincount([7, 7, 7], minlength=256)) == 7  # one level: nothing is foreground
    hist = np.zeros(256)
    hist[[20, 200]] = [10, 10]
    t = c.otsu_threshold(hist)
    assert 20 <= t < 200  # any split of the gap has the same variance: the first is taken
    assert t == 20
    for bad, match in ((np.zeros(256), "empty"), (np.array([1.0]), ">= 2 bins"), (-np.ones(4), ">= 0")):
        with pytest.raises(ValueError, match=match):
            c.otsu_threshold(bad)


def test_tissue_channels_against_definitions():
    from skimage.color import rgb2hsv

    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
    rgb[0, 0] = 0
    sat = c.tissue_channel(rgb, "saturation")
    np.testing.assert_allclose(sat, rgb2hsv(rgb)[..., 1] * 255, atol=0.5 + 1e-9)
    grey = c.tissue_channel(rgb, "grey")
    luma = rgb @ np.array([0.299, 0.587, 0.114])
    expect = 255 - np.floor(luma + 0.5 + 1e-9)  # BT.601 luma rounded half up
    expect[0, 0] = 0  # pure black (outside the scan) is background
    np.testing.assert_array_equal(grey, expect)
    assert c.tissue_channel(np.full((1, 1, 3), 255, np.uint8), "grey")[0, 0] == 0  # white glass
    with pytest.raises(ValueError, match="channel"):
        c.tissue_channel(rgb, "hue")
    with pytest.raises(ValueError, match="uint8"):
        c.tissue_channel(rgb.astype(float), "grey")


# ---------------------------------------------------------------------------------------------- geometry


@pytest.mark.parametrize(
    "kwargs, match",
    [({"central_size": 30}, "central_size"), ({"central_size": 9}, "even"), ({"min_tissue_fraction": 1.5}, "min_tissue"),
     ({"tissue_channel": "hue"}, "tissue_channel"), ({"stride": 0}, "stride"), ({"level": -1}, "level")],
)
def test_geometry_validation_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        c.PatchGeometry(**{**{"patch_size": 24, "stride": 8, "central_size": 8}, **kwargs})


def test_pcam_geometry_defaults():
    g = c.PatchGeometry()
    assert (g.level, g.patch_size, g.stride, g.central_size, g.border) == (2, 96, 32, 32, 32)
    assert g.grid_shape((96 + 32 * 9, 96)) == (1, 10)
    assert g.grid_shape((95, 200)) == (4, 0)


# ---------------------------------------------------------------------------------------------- extraction


def test_window_rasterisation_equals_crop_of_the_whole_level(testset):
    _, info = testset
    polys = read_asap_annotations(info[0]["annotation"])
    full = rasterize_asap_annotations(polys, (192, 128), 4.0)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x0, y0 = rng.integers(0, 150), rng.integers(0, 100)
        w, h = rng.integers(1, 192 - x0), rng.integers(1, 128 - y0)
        win = rasterize_asap_annotations(polys, (w, h), 4.0, origin=(x0, y0))
        np.testing.assert_array_equal(win, full[y0 : y0 + h, x0 : x0 + w])


def test_phantom_annotations_rasterise_to_the_mask(testset):
    _, info = testset
    s = info[0]
    level0 = rasterize_asap_annotations(str(s["annotation"]), (768, 512), 1.0)
    np.testing.assert_array_equal(level0, s["tumour_mask"])
    level2 = rasterize_asap_annotations(str(s["annotation"]), (192, 128), 4.0)
    np.testing.assert_array_equal(level2, s["tumour_mask"][2::4, 2::4])  # pixel-centre rule


def test_labels_tissue_and_positions_match_a_direct_computation(testset, table):
    root, info = testset
    tab, summary = table
    assert list(summary["slide"]) == ["test_001", "test_002", "test_003"]
    assert summary["annotation"].notna().tolist() == [True, True, False]
    g = GEOMETRY
    for s, row in zip(info, summary.itertuples(), strict=True):
        with SlideReader(s["path"]) as slide:
            img = slide.read_level(2)
        grey = c.tissue_channel(img, "grey")
        t = c.otsu_threshold(np.bincount(grey.ravel(), minlength=256))
        assert row.otsu == t
        tissue = grey > t
        tumour = s["tumour_mask"][2::4, 2::4]
        n_rows, n_cols = g.grid_shape((img.shape[1], img.shape[0]))
        assert row.positions == n_rows * n_cols
        expect = []
        for j in range(n_rows):
            for i in range(n_cols):
                x, y = i * g.stride, j * g.stride
                centre = (slice(y + g.border, y + g.border + 8), slice(x + g.border, x + g.border + 8))
                frac = tissue[centre].mean()
                if frac >= g.min_tissue_fraction:
                    expect.append((x, y, bool(tumour[centre].any()), frac))
        sub = tab[tab["slide"] == s["slide"]]
        got = list(zip(sub.x, sub.y, sub.label, sub.tissue_fraction, strict=True))
        assert [(x, y, lab) for x, y, lab, _ in got] == [(x, y, lab) for x, y, lab, _ in expect]
        np.testing.assert_allclose([f for *_, f in got], [f for *_, f in expect], rtol=1e-6)
    assert summary["positives"].tolist()[2] == 0  # no annotation: tumour-free
    assert summary["positives"].iloc[0] > 0
    assert 0 < tab["label"].mean() < 0.5


def test_background_filter_is_monotone(testset):
    root, info = testset
    path, xml = info[0]["path"], info[0]["annotation"]
    everything = c.extract_slide_patches(path, xml, c.PatchGeometry(level=2, patch_size=24, stride=8,
                                                                    central_size=8, min_tissue_fraction=0.0))
    assert everything.x.size == everything.n_positions
    keys = {}
    for frac in (0.25, 0.5, 0.9):
        sp = c.extract_slide_patches(path, xml, c.PatchGeometry(level=2, patch_size=24, stride=8, central_size=8,
                                                                min_tissue_fraction=frac))
        keys[frac] = set(zip(sp.x.tolist(), sp.y.tolist(), strict=True))
        assert (sp.tissue_fraction >= frac).all()
    assert keys[0.9] <= keys[0.5] <= keys[0.25]
    # the band size is an implementation detail
    a = c.extract_slide_patches(path, xml, GEOMETRY, band_patch_rows=1)
    b = c.extract_slide_patches(path, xml, GEOMETRY, band_patch_rows=64)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.label, b.label)


def test_streamed_patches_equal_crops(testset, table):
    tab, summary = table
    paths = dict(zip(summary["slide"], summary["path"], strict=True))
    seen = np.zeros(len(tab), int)
    levels = {}
    for s in summary.itertuples():
        with SlideReader(s.path) as slide:
            levels[s.slide] = slide.read_level(2)
    sizes = []
    for idx, imgs in c.iter_patch_batches(tab, paths, GEOMETRY, batch_size=97, band_patch_rows=3):
        sizes.append(len(idx))
        seen[idx] += 1
        for k in (0, len(idx) // 2, len(idx) - 1):
            r = tab.iloc[idx[k]]
            np.testing.assert_array_equal(imgs[k], levels[r.slide][r.y : r.y + 24, r.x : r.x + 24])
        assert imgs.dtype == np.uint8 and imgs.shape[1:] == (24, 24, 3)
    assert (seen == 1).all()
    assert all(n == 97 for n in sizes[:-1]) and 0 < sizes[-1] <= 97
    with pytest.raises(KeyError, match="test_001"):
        next(c.iter_patch_batches(tab, {}, GEOMETRY))


def test_table_is_cached_and_restricted(testset, table, tmp_path):
    root, _ = testset
    tab, _ = table
    one, summary = camelyon16_test_patch_table(root, GEOMETRY, slides=["test_002"], max_workers=1,
                                                 cache_dir=tmp_path / "cache")
    assert set(one["slide"].astype(str)) == {"test_002"} and len(summary) == 1
    pd.testing.assert_frame_equal(one.reset_index(drop=True).assign(slide=one.slide.astype(str)),
                                  tab[tab.slide == "test_002"].reset_index(drop=True).assign(slide="test_002"))
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1 and not list((tmp_path / "cache").glob("*.pkl"))
    again, _ = camelyon16_test_patch_table(root, GEOMETRY, slides=["test_002"], max_workers=1,
                                             cache_dir=tmp_path / "cache")
    pd.testing.assert_frame_equal(one, again)
    with pytest.raises(c.IncompleteTestSetError, match="test_999"):
        camelyon16_test_patch_table(root, GEOMETRY, slides=["test_999"])
    with pytest.raises(ValueError, match="at least one slide"):
        camelyon16_test_patch_table(root, GEOMETRY, slides=[])


def test_errors_name_what_is_missing(tmp_path, monkeypatch, testset):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    with pytest.raises(DatasetUnavailableError, match="camelyon16"):
        camelyon16_test_patch_table()
    with pytest.raises(c.IncompleteTestSetError, match="testing/images"):
        c.camelyon16_test_slides(tmp_path)
    _, info = testset
    with pytest.raises(ValueError, match="band_patch_rows"):
        c.extract_slide_patches(info[0]["path"], None, GEOMETRY, band_patch_rows=0)
    with pytest.raises(ValueError, match="band_patch_rows"):
        next(c.iter_patch_batches(pd.DataFrame({"slide": [], "x": [], "y": []}), {}, GEOMETRY, band_patch_rows=0))
    with pytest.raises(ValueError, match="level 5"):
        c.extract_slide_patches(info[0]["path"], None, c.PatchGeometry(level=5))


def test_single_level_slide_and_score_map(tmp_path):
    rng = np.random.default_rng(2)
    img = np.full((64, 96, 3), 245, np.uint8)
    img[16:48, 24:72] = rng.integers(60, 160, (32, 48, 3))
    sizes = write_pyramidal_tiff(tmp_path / "s.tif", img, n_levels=1)
    assert sizes == [(96, 64)]
    g = c.PatchGeometry(level=0, patch_size=24, stride=8, central_size=8)
    sp = c.extract_slide_patches(tmp_path / "s.tif", None, g)
    assert sp.x.size > 0 and not sp.label.any()
    # every kept centre lies inside the tissue rectangle
    assert ((sp.x + 8 >= 16) & (sp.x + 16 <= 80) & (sp.y + 8 >= 8) & (sp.y + 16 <= 56)).all()
    m = c.patch_score_map(sp.x, sp.y, np.arange(sp.x.size), sp.level_size, 8)
    assert m.shape == (8, 12)
    assert np.isfinite(m).sum() == sp.x.size and m[sp.y[3] // 8, sp.x[3] // 8] == 3
    with pytest.raises(ValueError, match="multiples of stride"):
        c.patch_score_map([3], [0], [1.0], (96, 64), 8)


def test_asap_xml_from_mask_runs_round_trips(tmp_path):
    rng = np.random.default_rng(3)
    mask = rng.random((20, 30)) < 0.3
    xml = tmp_path / "m.xml"
    xml.write_text(mask_runs_to_asap_xml(mask))
    np.testing.assert_array_equal(rasterize_asap_annotations(str(xml), (30, 20), 1.0), mask)


# ---------------------------------------------------------------------------------------------- completeness


def _partial_copy(root, dst, drop=()):
    """A copy of the test set under ``dst`` (files linked) without the relative paths in ``drop``."""
    import os

    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_dir() or any(rel == Path(d) or Path(d) in rel.parents for d in drop):
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(path, dst / rel)
    return dst


def test_a_complete_test_set_lists_every_slide_with_its_class(testset):
    root, info = testset
    listing = c.camelyon16_test_slides(root)
    assert list(listing["slide"]) == ["test_001", "test_002", "test_003"]
    assert list(listing["tumour"]) == [i["annotation"] is not None for i in info] == [True, True, False]
    assert listing["annotation"].isna().tolist() == [False, False, True]
    assert layout.test_set_layout(root).complete


@pytest.mark.parametrize(("drop", "named"), [
    (["testing/lesion_annotations/test_002.xml"], ["1 tumour slides", "test_002.xml"]),
    (["testing/lesion_annotations"], ["annotation folder", "lesion_annotations"]),
    (["testing/images/test_003.tif"], ["1 of the 3", "test_003"]),
    (["testing/reference.csv"], ["reference standard", "reference.csv"]),
])
def test_a_partial_test_set_is_refused_naming_what_is_missing(testset, tmp_path, drop, named):
    root, _ = testset
    partial = _partial_copy(root, tmp_path / "c16", drop)
    problems = layout.test_set_layout(partial).problems
    assert problems and all(any(n in p for p in problems) for n in named), problems
    with pytest.raises(c.IncompleteTestSetError) as err:
        c.camelyon16_test_slides(partial)
    assert all(n in str(err.value) for n in named)
    with pytest.raises(c.IncompleteTestSetError):
        camelyon16_test_patch_table(partial, GEOMETRY, max_workers=1)


def test_a_selection_needs_only_its_own_slides(testset, tmp_path):
    root, _ = testset
    partial = _partial_copy(root, tmp_path / "c16", ["testing/lesion_annotations/test_002.xml"])
    assert list(c.camelyon16_test_slides(partial, ["test_001", "test_003"])["slide"]) == ["test_001", "test_003"]
    with pytest.raises(c.IncompleteTestSetError, match="test_002.xml"):
        c.camelyon16_test_slides(partial, ["test_002"])


def test_reference_and_annotations_must_agree(testset, tmp_path):
    root, _ = testset
    partial = _partial_copy(root, tmp_path / "c16", ["testing/reference.csv"])
    layout.write_reference(partial, {"test_001": True, "test_002": True})  # test_003 unlisted
    assert any("not in the reference standard" in p and "test_003" in p
               for p in layout.test_set_layout(partial).problems)
    layout.write_reference(partial, {"test_001": False, "test_002": True, "test_003": False})
    assert any("Normal" in p and "test_001" in p for p in layout.test_set_layout(partial).problems)
    (partial / "testing" / "reference.csv").write_text("image,class\ntest_001,Tumor\ntest_002,Tumor\n"
                                                        "test_003,Normal\ntest_114,Tumor\n")
    assert layout.test_set_layout(partial).complete  # header skipped; the withdrawn test_114 may be absent
    (partial / "testing" / "reference.csv").write_text("test_001,Tumor\ntest_002,maybe\n")
    assert any("line 2" in p for p in layout.test_set_layout(partial).problems)


def test_a_tumour_slide_is_never_labelled_without_its_annotation(testset):
    _, info = testset
    with pytest.raises(c.IncompleteTestSetError, match="test_001"):
        c.extract_slide_patches(info[0]["path"], None, GEOMETRY, has_tumour=True)
    assert not c.extract_slide_patches(info[2]["path"], None, GEOMETRY, has_tumour=False).label.any()
