"""Real-format readers, each on a tiny fixture written in that format inside the test."""

import os
import pickle

import h5py
import numpy as np
import pandas as pd
import pytest
import tifffile
from PIL import Image

from medeval.data import readers as r
from medeval.data.chestxray14 import LABELS, load_labels

# ------------------------------------------------------------------------------------------ ChestX-ray14


def test_chestxray14_png_folder(tmp_path):
    labels = load_labels()
    wanted = ["00000001_001.png", "00000005_000.png", "00000032_012.png"]
    folder = tmp_path / "images"
    folder.mkdir()
    rng = np.random.default_rng(0)
    arrays = {}
    for i, name in enumerate(wanted):
        arr = rng.integers(0, 256, (64, 64), dtype=np.uint8)
        arrays[name] = arr
        mode_img = Image.fromarray(arr)
        if i == 1:  # the release has a few RGBA PNGs
            mode_img = mode_img.convert("RGBA")
        mode_img.save(folder / name)
    ds = r.ChestXray14Images(folder, labels)
    assert len(ds) == 3 and ds.table["image_index"].tolist() == wanted
    for i, name in enumerate(wanted):
        img = ds.image(i)
        assert img.dtype == np.float32 and img.shape == (64, 64)
        np.testing.assert_allclose(img, arrays[name] / 255.0, atol=1e-6)
    assert ds.image(0, size=32).shape == (32, 32)
    lab = ds.labels()
    assert lab.shape == (3, 14) and lab[0, LABELS.index("Emphysema")] == 1 and lab[1].sum() == 0
    with pytest.raises(FileNotFoundError, match="missing from"):
        r.ChestXray14Images(folder, labels, require_all=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no image"):
        r.ChestXray14Images(empty, labels)


# ------------------------------------------------------------------------------------------------- MURA


def _write_mura(root):
    base = root / "MURA-v1.1"
    spec = {  # (part, patient, study, outcome, n_images)
        "train": [
            ("XR_SHOULDER", 1, 1, "positive", 2),
            ("XR_SHOULDER", 2, 1, "negative", 1),
            ("XR_WRIST", 3, 2, "negative", 3),
        ],
        "valid": [("XR_SHOULDER", 11185, 1, "positive", 1)],
    }
    for split, studies in spec.items():
        img_lines, study_lines = [], []
        for part, patient, study, outcome, n in studies:
            rel_dir = f"MURA-v1.1/{split}/{part}/patient{patient:05d}/study{study}_{outcome}/"
            (root / rel_dir).mkdir(parents=True)
            for k in range(1, n + 1):
                Image.fromarray(np.zeros((8, 8), np.uint8)).save(root / rel_dir / f"image{k}.png")
                img_lines.append(rel_dir + f"image{k}.png")
            study_lines.append(f"{rel_dir},{int(outcome == 'positive')}")
        (base / f"{split}_image_paths.csv").write_text("\n".join(img_lines) + "\n")
        (base / f"{split}_labeled_studies.csv").write_text("\n".join(study_lines) + "\n")
    return base


def test_mura_layout(tmp_path):
    _write_mura(tmp_path)
    df = r.read_mura(tmp_path, "train")
    assert list(df.columns) == ["path", "split", "body_part", "patient_id", "study", "image", "label"]
    assert len(df) == 6
    assert df.groupby("body_part")["label"].sum().to_dict() == {"XR_SHOULDER": 2, "XR_WRIST": 0}
    sh = r.read_mura(tmp_path / "MURA-v1.1", "train", body_part="XR_SHOULDER")
    assert sh["patient_id"].tolist() == [1, 1, 2] and sh["label"].tolist() == [1, 1, 0]
    assert all(p.endswith(".png") for p in sh["path"])
    v = r.read_mura(tmp_path, "valid")
    assert v["patient_id"].tolist() == [11185] and v["label"].tolist() == [1]


def test_mura_inconsistencies_raise(tmp_path):
    base = _write_mura(tmp_path)
    csv = base / "train_labeled_studies.csv"
    csv.write_text(csv.read_text().replace("study1_positive/,1", "study1_positive/,0"))
    with pytest.raises(ValueError, match="disagrees with its folder name"):
        r.read_mura(tmp_path, "train")
    csv.write_text(csv.read_text().replace("study1_positive/,0", "study1_positive/,1"))
    (base / "train" / "XR_WRIST" / "patient00003" / "study2_negative" / "image3.png").unlink()
    with pytest.raises(FileNotFoundError, match="image3.png"):
        r.read_mura(tmp_path, "train")
    with pytest.raises(ValueError, match="body_part"):
        r.read_mura(tmp_path, "train", body_part="XR_KNEE")


# -------------------------------------------------------------------------------------------- VOC 2005

VOC_TEXT = """# PASCAL Annotation Version 1.00

Image filename : "TUGraz_cars/carsgraz_001.png"
Image size (X x Y x C) : 640 x 480 x 3
Database : "The TU Graz-02 Database"
Objects with ground truth : 2 { "PAScarSide" "PAScarRear" }

# Note that there might be other objects in the image
# for which ground truth data has not been provided.

# Top left pixel co-ordinates : (1, 1)

# Details for object 1 ("PAScarSide")
Original label for object 1 "PAScarSide" : "carSide"
Bounding box for object 1 "PAScarSide" (Xmin, Ymin) - (Xmax, Ymax) : (2, 151) - (383, 379)
Pixel mask for object 1 "PAScarSide" : "TUGraz_cars/carsgraz_001.mask.0.png"

# Details for object 2 ("PAScarRear")
Original label for object 2 "PAScarRear" : "carRear"
Bounding box for object 2 "PAScarRear" (Xmin, Ymin) - (Xmax, Ymax) : (400, 200) - (640, 480)
"""


def test_voc2005_annotation(tmp_path):
    p = tmp_path / "Annotations" / "TUGraz_cars" / "carsgraz_001.txt"
    p.parent.mkdir(parents=True)
    p.write_text(VOC_TEXT)
    a = r.read_voc2005_annotation(p)
    assert (a.filename, a.width, a.height, a.channels) == ("TUGraz_cars/carsgraz_001.png", 640, 480, 3)
    assert a.database == "The TU Graz-02 Database"
    o = a.objects
    assert o["label"].tolist() == ["PAScarSide", "PAScarRear"]
    assert o.iloc[0][["xmin", "ymin", "xmax", "ymax"]].tolist() == [2, 151, 383, 379]
    assert o.iloc[0][["x", "y", "w", "h"]].tolist() == [1.0, 150.0, 382.0, 229.0]
    assert o.iloc[0]["mask"] == "TUGraz_cars/carsgraz_001.mask.0.png" and pd.isna(o.iloc[1]["mask"])
    assert o.iloc[0]["original_label"] == "carSide"
    # a second file without objects in a sub-folder
    q = tmp_path / "Annotations" / "other" / "neg.txt"
    q.parent.mkdir()
    q.write_text(
        VOC_TEXT.split("Objects with")[0].replace("carsgraz_001", "neg")
        + "Objects with ground truth : 0 { }\n"
    )
    images, objects = r.read_voc2005_folder(tmp_path / "Annotations")
    assert images["n_objects"].tolist() == [2, 0] and len(objects) == 2


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda t: t.replace("# PASCAL Annotation Version 1.00", "# something else"), "Version 1.00"),
        (lambda t: t.replace("(400, 200) - (640, 480)", "(400, 200) - (641, 480)"), "outside"),
        (lambda t: t.replace("Objects with ground truth : 2", "Objects with ground truth : 3"), "declares 3"),
        (lambda t: t.replace("Image size (X x Y x C) : 640 x 480 x 3\n", ""), "Image size"),
    ],
)
def test_voc2005_malformed(tmp_path, edit, match):
    p = tmp_path / "a.txt"
    p.write_text(edit(VOC_TEXT))
    with pytest.raises(ValueError, match=match):
        r.read_voc2005_annotation(p)


# ------------------------------------------------------------------------------------------------ PCam


def _write_pcam(tmp_path, n=10, split="valid"):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (n, 96, 96, 3), dtype=np.uint8)
    y = rng.integers(0, 2, (n, 1, 1, 1), dtype=np.uint8)
    stem = tmp_path / f"camelyonpatch_level_2_split_{split}"
    with h5py.File(f"{stem}_x.h5", "w") as f:
        f.create_dataset("x", data=x, chunks=(1, 96, 96, 3))
    with h5py.File(f"{stem}_y.h5", "w") as f:
        f.create_dataset("y", data=y)
    return x, y


def test_pcam_lazy_reads(tmp_path):
    x, y = _write_pcam(tmp_path)
    ds = r.PCamH5.from_dir(tmp_path, "valid")
    assert ds._x is None  # nothing opened yet
    assert len(ds) == 10
    img, lab = ds[3]
    np.testing.assert_array_equal(img, x[3])
    assert lab == int(y[3, 0, 0, 0])
    xs, ys = ds[2:5]
    np.testing.assert_array_equal(xs, x[2:5])
    np.testing.assert_array_equal(ys, y[2:5].reshape(-1))
    xs, ys = ds[np.array([7, 1, 4])]  # unsorted fancy index keeps the caller's order
    np.testing.assert_array_equal(xs, x[[7, 1, 4]])
    np.testing.assert_array_equal(ds.labels(), y.reshape(-1))
    clone = pickle.loads(pickle.dumps(ds))  # picklable for DataLoader workers
    np.testing.assert_array_equal(clone[-1][0], x[-1])
    with pytest.raises(IndexError):
        ds[10]
    ds.close()


def test_pcam_damaged_file_outside_a_dataset_names_the_file(tmp_path):
    _write_pcam(tmp_path)
    x_path = tmp_path / "camelyonpatch_level_2_split_valid_x.h5"
    x_path.write_bytes(x_path.read_bytes()[: x_path.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"valid_x\.h5: HDF5 cannot open it .*truncated") as info:
        len(r.PCamH5.from_dir(tmp_path, "valid"))
    assert not isinstance(info.value, FileNotFoundError)  # no dataset to name: a plain ValueError


def test_pcam_rejects_wrong_shapes(tmp_path):
    with h5py.File(tmp_path / "bad_x.h5", "w") as f:
        f.create_dataset("x", data=np.zeros((2, 32, 32, 3), np.uint8))
    with h5py.File(tmp_path / "bad_y.h5", "w") as f:
        f.create_dataset("y", data=np.zeros((2, 1, 1, 1), np.uint8))
    with pytest.raises(ValueError, match=r"\(N, 96, 96, 3\) uint8"):
        len(r.PCamH5(tmp_path / "bad_x.h5", tmp_path / "bad_y.h5"))
    with pytest.raises(ValueError, match="split"):
        r.PCamH5.from_dir(tmp_path, "val")


# ----------------------------------------------------------------------------------------- CAMELYON16


def _slide_image(h=512, w=768):
    yy, xx = np.mgrid[0:h, 0:w]
    return np.stack([xx % 256, yy % 256, (xx + yy) % 256], axis=-1).astype(np.uint8)


def _write_pyramid(path, img, subifds=False):
    levels = [img, img[::2, ::2].copy(), img[::4, ::4].copy()]
    with tifffile.TiffWriter(path) as tw:
        if subifds:
            tw.write(img, tile=(128, 128), photometric="rgb", compression="zlib", subifds=2, metadata=None)
            for lvl in levels[1:]:
                tw.write(
                    lvl, tile=(128, 128), photometric="rgb", compression="zlib", subfiletype=1, metadata=None
                )
        else:
            for i, lvl in enumerate(levels):
                tw.write(
                    lvl,
                    tile=(128, 128),
                    photometric="rgb",
                    compression="zlib",
                    subfiletype=1 if i else 0,
                    metadata=None,
                )
    return levels


@pytest.mark.parametrize("subifds, backend", [(False, "openslide"), (True, "tifffile")])
def test_pyramidal_tiff(tmp_path, subifds, backend):
    img = _slide_image()
    levels = _write_pyramid(tmp_path / "slide.tif", img, subifds=subifds)
    with r.open_slide(tmp_path / "slide.tif") as s:
        assert s.backend == backend
        assert s.level_dimensions == [(768, 512), (384, 256), (192, 128)]
        assert s.level_downsamples == [1.0, 2.0, 4.0]
        # location is in level-0 pixels, as in openslide
        np.testing.assert_array_equal(s.read_region((256, 128), 1, (100, 50)), levels[1][64:114, 128:228])
        np.testing.assert_array_equal(s.read_region((100, 60), 0, (200, 130)), img[60:190, 100:300])
        np.testing.assert_array_equal(s.read_level(2), levels[2])
        edge = s.read_region((700, 400), 0, (100, 150))  # beyond the slide: zeros
        np.testing.assert_array_equal(edge[:112, :68], img[400:, 700:])
        assert not edge[112:].any() and not edge[:, 68:].any()
    np.testing.assert_array_equal(r.read_wsi_region(tmp_path / "slide.tif", 2), levels[2])


def test_untiled_tiff_falls_back_to_tifffile(tmp_path):
    img = _slide_image(64, 96)
    tifffile.imwrite(tmp_path / "flat.tif", img, photometric="rgb")
    with r.open_slide(tmp_path / "flat.tif") as s:
        assert s.backend == "tifffile" and s.level_count == 1
        np.testing.assert_array_equal(s.read_region((10, 5), 0, (20, 30)), img[5:35, 10:30])


def test_unreadable_slide_error_names_both_backends(tmp_path):
    bad = tmp_path / "bad.tif"
    bad.write_bytes(b"II*\x00" + b"garbage" * 20)
    with pytest.raises(ValueError, match="neither openslide nor the tifffile fallback") as info:
        r.open_slide(bad)
    assert "openslide:" in str(info.value) and "tifffile:" in str(info.value)


ASAP_XML = """<?xml version="1.0"?>
<ASAP_Annotations>
  <Annotations>
    <Annotation Name="Annotation 0" Type="Polygon" PartOfGroup="_0" Color="#F4FA58">
      <Coordinates>
        <Coordinate Order="1" X="400" Y="80" />
        <Coordinate Order="0" X="80" Y="80" />
        <Coordinate Order="2" X="400" Y="320" />
        <Coordinate Order="3" X="80" Y="320" />
      </Coordinates>
    </Annotation>
    <Annotation Name="Annotation 1" Type="Polygon" PartOfGroup="_2" Color="#64FE2E">
      <Coordinates>
        <Coordinate Order="0" X="160" Y="160" />
        <Coordinate Order="1" X="240" Y="160" />
        <Coordinate Order="2" X="240" Y="240" />
        <Coordinate Order="3" X="160" Y="240" />
      </Coordinates>
    </Annotation>
    <Annotation Name="Annotation 2" Type="Polygon" PartOfGroup="Tumor" Color="#F4FA58">
      <Coordinates>
        <Coordinate Order="0" X="600,0" Y="400" />
        <Coordinate Order="1" X="680" Y="400" />
        <Coordinate Order="2" X="680" Y="480" />
      </Coordinates>
    </Annotation>
  </Annotations>
  <AnnotationGroups>
    <Group Name="_0" PartOfGroup="None" Color="#ff0000"><Attributes /></Group>
    <Group Name="_2" PartOfGroup="None" Color="#00ff00"><Attributes /></Group>
  </AnnotationGroups>
</ASAP_Annotations>
"""


def test_asap_annotations_rasterised_at_a_level(tmp_path):
    xml = tmp_path / "test_001.xml"
    xml.write_text(ASAP_XML)
    polys = r.read_asap_annotations(xml)
    assert [p.group for p in polys] == ["_0", "_2", "Tumor"]
    # coordinates sorted by Order (the file lists order 1 first), decimal comma accepted
    np.testing.assert_array_equal(polys[0].coords, [[80, 80], [400, 80], [400, 320], [80, 320]])
    assert polys[2].coords[0, 0] == 600.0
    img = _slide_image()
    _write_pyramid(tmp_path / "slide.tif", img)
    with r.open_slide(tmp_path / "slide.tif") as s:
        mask = r.rasterize_asap_annotations(xml, s.level_dimensions[2], s.level_downsamples[2])
    assert mask.shape == (128, 192) and mask.dtype == np.uint8
    # level 2 (downsample 4): tumour rectangle cols 20..99, rows 20..79; exclusion cols 40..59, rows 40..59
    expected = np.zeros((128, 192), np.uint8)
    expected[20:80, 20:100] = 1
    expected[40:60, 40:60] = 0
    np.testing.assert_array_equal(mask[:, :140], expected[:, :140])  # the triangle lies right of column 150
    # triangle (150,100)-(170,100)-(170,120) at level 2: inside where y - 100 < x - 150 (pixel centres)
    tri = mask[:, 140:]
    rows, cols = np.mgrid[0:128, 140:192] + 0.5
    inside = (rows > 100) & (cols < 170) & (rows - 100 < cols - 150)
    assert np.abs(tri.astype(int) - inside).sum() <= 20  # only pixels whose centre is on the diagonal
    assert mask[102, 168] == 1 and mask[118, 152] == 0
    full = r.rasterize_asap_annotations(polys, (768, 512), 1.0)
    assert full[200, 120] == 1 and full[200, 200] == 0


def test_asap_unknown_group_and_bad_xml(tmp_path):
    p = tmp_path / "a.xml"
    p.write_text(ASAP_XML.replace('PartOfGroup="_2"', 'PartOfGroup="Mystery"'))
    with pytest.raises(ValueError, match="Mystery"):
        r.rasterize_asap_annotations(p, (10, 10), 1.0)
    p.write_text("<ASAP_Annotations><Annotations>")
    with pytest.raises(ValueError, match="not valid XML"):
        r.read_asap_annotations(p)


# --------------------------------------------------------------------------------------------- CIFAR-10


def _write_cifar(root, n_per_batch=4):
    folder = root / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(0)
    images = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        hwc = rng.integers(0, 256, (n_per_batch, 32, 32, 3), dtype=np.uint8)
        data = hwc.transpose(0, 3, 1, 2).reshape(n_per_batch, 3072)  # channel-major rows, as released
        labels = rng.integers(0, 10, n_per_batch).tolist()
        with open(folder / name, "wb") as fh:
            pickle.dump(
                {
                    b"batch_label": name.encode(),
                    b"labels": labels,
                    b"data": data,
                    b"filenames": [b"x.png"] * n_per_batch,
                },
                fh,
                protocol=2,
            )
        images[name] = (hwc, np.array(labels))
    return images


def test_cifar10_batches(tmp_path):
    images = _write_cifar(tmp_path)
    x, y = r.read_cifar10_batch(tmp_path / "cifar-10-batches-py" / "data_batch_2")
    np.testing.assert_array_equal(x, images["data_batch_2"][0])
    np.testing.assert_array_equal(y, images["data_batch_2"][1])
    xt, yt = r.read_cifar10(tmp_path, "train")
    assert xt.shape == (20, 32, 32, 3) and yt.shape == (20,)
    np.testing.assert_array_equal(xt[4:8], images["data_batch_2"][0])
    xs, _ = r.read_cifar10(tmp_path / "cifar-10-batches-py", "test")
    np.testing.assert_array_equal(xs, images["test_batch"][0])
    assert r.CIFAR10_CLASSES[1] == "automobile"


def test_cifar10_rejects_other_pickles(tmp_path):
    p = tmp_path / "b"
    with open(p, "wb") as fh:
        pickle.dump({b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]}, fh)
    with pytest.raises(ValueError, match=r"\(N, 3072\) uint8"):
        r.read_cifar10_batch(p)
    with open(p, "wb") as fh:
        pickle.dump([1, 2], fh)
    with pytest.raises(ValueError, match="not a CIFAR-10"):
        r.read_cifar10_batch(p)


class _RunsCode:
    def __reduce__(self):
        return (os.makedirs, (str(_RunsCode.target),))


def test_cifar10_reader_never_runs_code_from_the_file(tmp_path):
    """A pickle that would call os.makedirs when unpickled is refused by name, and the call never happens; a batch
    written the way the original CIFAR-10 files were (numpy 1's numpy.core.multiarray) still reads; a truncated
    batch names the file and the remedy."""
    _RunsCode.target = tmp_path / "made-by-the-pickle"
    p = tmp_path / "data_batch_1"
    p.write_bytes(pickle.dumps({b"data": _RunsCode(), b"labels": [0]}))
    with pytest.raises(ValueError, match=r"os\.makedirs is not allowed in a CIFAR-10 batch"):
        r.read_cifar10_batch(p)
    assert not _RunsCode.target.exists()
    data = np.arange(2 * 3072, dtype=np.uint8).reshape(2, 3072)
    blob = pickle.dumps({b"data": data, b"labels": [3, 7]}, protocol=2).replace(b"numpy._core.multiarray",
                                                                             b"numpy.core.multiarray")
    assert b"numpy.core.multiarray" in blob
    p.write_bytes(blob)
    x, y = r.read_cifar10_batch(p)
    assert y.tolist() == [3, 7] and x.shape == (2, 32, 32, 3)
    p.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match=r"data_batch_1: not a readable CIFAR-10 python batch.*--force"):
        r.read_cifar10_batch(p)


# ------------------------------------------------------------------------------------------------ ADNI


def test_regional_volumes(tmp_path):
    p = tmp_path / "adni.csv"
    df = pd.DataFrame(
        {
            "subject_id": ["002_S_0295", "002_S_0413", "005_S_0221"],
            "diagnosis": ["HC", "HC", "AD"],
            "hippocampus_l": [0.0021, 0.0020, 0.0015],
            "precuneus_r": [0.0061, 0.0063, 0.0055],
        }
    )
    df.to_csv(p, index=False)
    t = r.read_regional_volumes(p)
    assert list(t.columns) == ["subject_id", "diagnosis", "hippocampus_l", "precuneus_r"]
    assert list(t["diagnosis"].cat.categories) == ["HC", "AD"]
    X, y = r.regional_volume_arrays(t)
    assert X.shape == (3, 2) and y.tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: d.assign(diagnosis=["HC", "CN", "AD"]), "must be one of"),
        (lambda d: d.drop(columns="diagnosis"), "missing column 'diagnosis'"),
        (lambda d: d.assign(subject_id=["a", "a", "b"]), "duplicate subject_id"),
        (lambda d: d[["subject_id", "diagnosis"]], "no region columns"),
        (lambda d: d.assign(r1=[0.1, None, 0.2]), "'r1' has missing"),
        (lambda d: d.assign(r1=[0.1, -0.2, 0.2]), "'r1' has negative"),
        (lambda d: d.assign(r1=["a", "b", "c"]), "'r1' has missing or non-numeric"),
    ],
)
def test_regional_volumes_validation(tmp_path, edit, match):
    base = pd.DataFrame(
        {"subject_id": ["a", "b", "c"], "diagnosis": ["HC", "AD", "AD"], "r0": [0.1, 0.2, 0.3]}
    )
    p = tmp_path / "t.csv"
    edit(base).to_csv(p, index=False)
    with pytest.raises(ValueError, match=match):
        r.read_regional_volumes(p)


def test_chestxray14_images_batch_equals_one_by_one(tmp_path):
    from medeval.data.phantoms.formats import write_chestxray14_like

    names = write_chestxray14_like(tmp_path, 9, 96, seed=2)
    reader = r.ChestXray14Images(tmp_path / "images")
    one_by_one = np.stack([reader.image(i, 64) for i in range(len(reader))])
    for workers in (None, 1, 3):
        np.testing.assert_array_equal(reader.images(size=64, workers=workers), one_by_one)
    np.testing.assert_array_equal(reader.images([4, 0], 64), one_by_one[[4, 0]])
    assert reader.images(size=None).shape == (len(names), 96, 96)
    assert reader.images([], 32).shape == (0, 32, 32)
    with pytest.raises(IndexError, match="indices"):
        reader.images([len(names)], 32)
    with pytest.raises(ValueError, match="workers"):
        reader.images(size=32, workers=0)
