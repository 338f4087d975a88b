"""Chapter 1 on real-format data: :func:`mil_stability.load_real_bags` reads ChestX-ray14 (PNG folder + shipped label
and box tables), MURA v1.1 shoulder (folders + CSVs) and PASCAL VOC 2005 (text annotations + PNGs) written in their
on-disk formats, and gives the bag labels, instance labels and patients of the files written.

The private writers below (``write_mura_like``, ``write_voc2005_like``, ``write_real_format_data``) are also used by
``tests/notebooks/test_01_full_profile_offline.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from medeval.experiments import mil_stability as ms

IMAGE_SIZE, GRID = 64, 8
CXR_IMAGES, CXR_BOXED = 40, 170  # the first Cardiomegaly boxes of the NIH list start at its 162nd image


# ------------------------------------------------------------------------------------------- writers
def write_mura_like(root, *, n_train_patients: int = 12, n_valid_patients: int = 4, seed: int = 0) -> pd.DataFrame:
    """MURA v1.1 under ``root/MURA-v1.1``: shoulder and wrist studies of train and valid patients (paths in the CSVs
    start with ``MURA-v1.1/``, as in the release), grey and RGB PNGs of varied sizes (some larger than IMAGE_SIZE);
    abnormal images carry a bright patch. Returns the shoulder images in CSV order (train, then valid): ``rel``,
    ``label``, ``patient``, ``height``, ``width``."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    base = root / "MURA-v1.1"
    rows, patient = [], 0
    for split, n_patients in (("train", n_train_patients), ("valid", n_valid_patients)):
        img_lines, study_lines = [], []
        if split == "valid":
            patient = 11184  # the release's valid patients are numbered after the train patients
        for _ in range(n_patients):
            patient += 1
            for part in ("XR_SHOULDER", "XR_WRIST"):
                for study in (1, 2):
                    positive = bool(rng.random() < 0.5)
                    rel_dir = f"MURA-v1.1/{split}/{part}/patient{patient:05d}/study{study}_{'positive' if positive else 'negative'}/"
                    (root / rel_dir).mkdir(parents=True)
                    for k in (1, 2):
                        h, w = (int(v) for v in rng.integers(40, 130, 2))
                        img = (rng.random((h, w)) * 100).astype(np.uint8)
                        if positive:
                            img[h // 3 : h // 2, w // 3 : w // 2] = 250
                        im = Image.fromarray(img)
                        (im.convert("RGB") if k == 2 else im).save(root / rel_dir / f"image{k}.png")
                        img_lines.append(rel_dir + f"image{k}.png")
                        if part == "XR_SHOULDER":
                            rows.append({"rel": rel_dir + f"image{k}.png", "label": int(positive), "patient": patient,
                                         "height": h, "width": w})
                    study_lines.append(f"{rel_dir},{int(positive)}")
        (base / f"{split}_image_paths.csv").write_text("\n".join(img_lines) + "\n")
        (base / f"{split}_labeled_studies.csv").write_text("\n".join(study_lines) + "\n")
    return pd.DataFrame(rows)


_VOC_HEADER = """# PASCAL Annotation Version 1.00

Image filename : "{filename}"
Image size (X x Y x C) : {w} x {h} x 3
Database : "The VOC2005 Database"
Objects with ground truth : {n} {{ {labels} }}

# Note that there might be other objects in the image
# for which ground truth data has not been provided.

# Top left pixel co-ordinates : (1, 1)
"""
_VOC_OBJECT = """
# Details for object {k} ("{label}")
Original label for object {k} "{label}" : "{orig}"
Bounding box for object {k} "{label}" (Xmin, Ymin) - (Xmax, Ymax) : ({xmin}, {ymin}) - ({xmax}, {ymax})
"""


def write_voc2005_like(root, n_images: int = 40, *, seed: int = 0) -> pd.DataFrame:
    """PASCAL VOC 2005 dataset 1 as unpacked from voc2005_1.tar.gz: ``root/VOC2005_1/Annotations/<db>/<name>.txt``
    ("PASCAL Annotation Version 1.00", 1-based inclusive boxes, ``Image filename`` relative to ``root``) and
    ``root/VOC2005_1/PNGImages/<db>/<name>.png``, plus the data layer's marker ``voc2005_1.tar.gz.unpacked``.

    Even images show a car (PAScarSide or PAScarRear; every fourth also a motorbike), odd ones a motorbike only.
    Car boxes are painted bright (240) on a dark background (<= 80), other boxes mid-grey (150). Returns one row
    per image: ``filename``, ``width``, ``height``, ``car``, ``car_box`` (xmin, ymin, xmax, ymax) or None."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    rows = []
    for i in range(n_images):
        car = i % 2 == 0
        db = "TUGraz_cars" if car else "ETHZ_motorbike-testset"
        filename = f"VOC2005_1/PNGImages/{db}/img{i:03d}.png"
        w, h = int(rng.integers(100, 161)), int(rng.integers(80, 141))  # boxes stay >= 1 grid cell once letterboxed
        img = (rng.random((h, w, 3)) * 80).astype(np.uint8)
        objects, car_box = [], None
        if car:
            bw, bh = int(rng.integers(w // 3, w // 2)), int(rng.integers(h // 3, h // 2))
            x0, y0 = int(rng.integers(w // 2, w - bw + 1)), int(rng.integers(1, h - bh + 1))  # right half
            car_box = (x0, y0, x0 + bw - 1, y0 + bh - 1)
            objects.append(("PAScarSide" if i % 3 else "PAScarRear", "car", *car_box))
        if not car or i % 4 == 0:  # motorbikes in the left quarter
            objects.append(("PASmotorbikeSide", "motorbikeSide", 1, 1, w // 4, h // 2))
        for label, _, xmin, ymin, xmax, ymax in reversed(objects):
            img[ymin - 1 : ymax, xmin - 1 : xmax] = 240 if "car" in label else 150
        path = root / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(img).save(path)
        text = _VOC_HEADER.format(filename=filename, w=w, h=h, n=len(objects),
                                  labels=" ".join(f'"{o[0]}"' for o in objects))
        for k, (label, orig, xmin, ymin, xmax, ymax) in enumerate(objects, 1):
            text += _VOC_OBJECT.format(k=k, label=label, orig=orig, xmin=xmin, ymin=ymin, xmax=xmax, ymax=ymax)
        ann = root / "VOC2005_1" / "Annotations" / db / f"img{i:03d}.txt"
        ann.parent.mkdir(parents=True, exist_ok=True)
        ann.write_text(text, encoding="latin-1")
        rows.append({"filename": filename, "width": w, "height": h, "car": car, "car_box": car_box})
    (root / "voc2005_1.tar.gz.unpacked").write_text("phantom VOC 2005 written by tests/experiments/test_mil_stability_real.py\n")
    return pd.DataFrame(rows)


def write_real_format_data(root) -> dict:
    """The three datasets of the chapter's full profile under ``root`` (the MEDEVAL_DATA folder).

    Returns what was written: ``chestxray14`` (the cohort images in label-table order with Cardiomegaly label,
    patient and whether they have a Cardiomegaly box), ``mura`` and ``voc2005`` (the writers' tables)."""
    from medeval.data.chestxray14 import load_boxes, load_labels
    from medeval.data.phantoms.formats import write_chestxray14_like

    root = Path(root)
    names = set(write_chestxray14_like(root / "chestxray14-images", n_images=CXR_IMAGES, image_size=IMAGE_SIZE,
                                       seed=0, boxed_images=CXR_BOXED))
    labels = load_labels()
    cardio_patients = set(labels.loc[labels["Cardiomegaly"] == 1, "patient_id"])
    cxr = labels[labels["image_index"].isin(names) & labels["patient_id"].isin(cardio_patients)]
    boxed = set(load_boxes().query("finding == 'Cardiomegaly'")["image_index"])
    cxr = pd.DataFrame({"name": cxr["image_index"].to_numpy(), "label": cxr["Cardiomegaly"].to_numpy(int),
                        "patient": cxr["patient_id"].to_numpy(int), "boxed": cxr["image_index"].isin(boxed).to_numpy()})
    return {"chestxray14": cxr, "mura": write_mura_like(root / "mura"), "voc2005": write_voc2005_like(root / "pascal-voc-2005")}


# ------------------------------------------------------------------------------------------- tests
@pytest.fixture(scope="module")
def real_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("mil-real-format")
    written = write_real_format_data(root)
    mp = pytest.MonkeyPatch()
    mp.setenv("MEDEVAL_DATA", str(root))
    yield root, written
    mp.undo()


def _cells(data: ms.MILData, i: int) -> np.ndarray:
    return data.instance_labels[i].reshape(data.grid_size, data.grid_size)


def _authors_cells(boxes, frame_size: float, grid: int = GRID) -> np.ndarray:
    """The authors' rule written out (romanovar/evaluation_MIL, cnn/preprocessor/load_data.py): edges x, x + w
    (pixels of a ``frame_size`` square) map to cells round(v / frame_size * P), both ends inclusive, indices past
    the grid dropped."""
    cells = np.zeros((grid, grid), bool)
    for x, y, w, h in boxes:
        c0, c1 = (int(np.round(v / frame_size * grid)) for v in (x, x + w))
        r0, r1 = (int(np.round(v / frame_size * grid)) for v in (y, y + h))
        cells[max(r0, 0) : r1 + 1, max(c0, 0) : c1 + 1] = True
    return cells


def test_chestxray14_cohort_labels_and_boxes(real_data):
    from medeval.data.chestxray14 import load_boxes

    _, written = real_data
    want = written["chestxray14"]
    assert want["label"].sum() >= 5 and want["boxed"].sum() >= 5 and (want["label"] == 0).sum() >= 5  # a usable phantom
    data = ms.load_real_bags("chestxray14", IMAGE_SIZE, GRID, seed=0)
    assert data.name == "chestxray14" and data.grid_size == GRID
    assert data.images.shape == (len(want), IMAGE_SIZE, IMAGE_SIZE) and data.images.dtype == np.float32
    assert 0.0 <= data.images.min() and data.images.max() <= 1.0 and data.images.std() > 0.05
    assert sorted(data.names) == sorted(want["name"])  # exactly the written images of the Cardiomegaly cohort
    by_name = want.set_index("name").loc[data.names]
    np.testing.assert_array_equal(data.bag_labels, by_name["label"].to_numpy())
    np.testing.assert_array_equal(data.patient_id, by_name["patient"].to_numpy())
    np.testing.assert_array_equal(data.truth_known, by_name["boxed"].to_numpy())
    np.testing.assert_array_equal(data.annotated, data.truth_known)
    assert not data.instance_labels[~data.truth_known].any()
    # every Cardiomegaly box (1024-px frame) marks the grid cell of its centre and only cells it touches (+1 cell)
    boxes = load_boxes().query("finding == 'Cardiomegaly'")
    for i in np.flatnonzero(data.truth_known):
        cells = _cells(data, i)
        mine = boxes[boxes["image_index"] == data.names[i]]
        np.testing.assert_array_equal(cells, _authors_cells(mine[["x", "y", "w", "h"]].to_numpy(), 1024.0))
        allowed = np.zeros_like(cells)
        for b in mine.itertuples():
            cx, cy = (b.x + b.w / 2) / 1024 * GRID, (b.y + b.h / 2) / 1024 * GRID
            assert cells[int(cy), int(cx)], (data.names[i], b)
            c0, c1 = int(b.x / 1024 * GRID), int(min((b.x + b.w) / 1024 * GRID, GRID - 1))
            r0, r1 = int(b.y / 1024 * GRID), int(min((b.y + b.h) / 1024 * GRID, GRID - 1))
            allowed[r0 : r1 + 2, c0 : c1 + 2] = True
        assert not (cells & ~allowed).any(), data.names[i]
    # the pixels are the written PNGs, resized
    k = int(np.flatnonzero(data.names == want["name"].iloc[0])[0])
    png = np.asarray(Image.open(real_data[0] / "chestxray14-images" / "images" / data.names[k]), np.float32) / 255
    assert abs(float(data.images[k].mean()) - float(png.mean())) < 0.02


def test_mura_shoulder_labels_patients_and_letterbox(real_data):
    _, written = real_data
    want = written["mura"]
    data = ms.load_real_bags("mura", IMAGE_SIZE, GRID, seed=0)
    assert data.names.tolist() == want["rel"].tolist()  # shoulder only (no wrist), train then valid
    np.testing.assert_array_equal(data.bag_labels, want["label"].to_numpy())
    np.testing.assert_array_equal(data.patient_id, want["patient"].to_numpy())
    assert 0 < data.bag_labels.sum() < len(data.bag_labels)
    assert not data.truth_known.any() and not data.annotated.any() and not data.instance_labels.any()
    assert data.images.shape == (len(want), IMAGE_SIZE, IMAGE_SIZE)
    for i, row in want.iterrows():  # letterbox: scaled down when larger (never up), centred, zero padding
        scale = min(1.0, IMAGE_SIZE / max(row["height"], row["width"]))
        h, w = round(row["height"] * scale), round(row["width"] * scale)
        top, left = (IMAGE_SIZE - h) // 2, (IMAGE_SIZE - w) // 2
        img = data.images[i]
        inside = np.zeros_like(img, bool)
        inside[top : top + h, left : left + w] = True
        assert not img[~inside].any(), row["rel"]
        if row["label"]:  # the bright patch of abnormal images survives
            assert img[inside].max() > 0.9
    with pytest.raises(ValueError, match="dataset"):
        ms.load_real_bags("mura_shoulder", IMAGE_SIZE, GRID, seed=0)


def test_voc2005_cars_vs_rest_and_box_cells(real_data):
    _, written = real_data
    want = written["voc2005"]
    data = ms.load_real_bags("voc2005", IMAGE_SIZE, GRID, seed=0)
    assert sorted(data.names) == sorted(want["filename"])
    by_name = want.set_index("filename").loc[data.names]
    np.testing.assert_array_equal(data.bag_labels, by_name["car"].to_numpy(np.uint8))  # motorbikes are negative
    np.testing.assert_array_equal(data.truth_known, data.bag_labels == 1)
    assert not data.annotated.any()
    assert len(np.unique(data.patient_id)) == len(data.names)  # one photograph, one group for the splits
    assert not data.instance_labels[data.bag_labels == 0].any()
    cell = IMAGE_SIZE // GRID
    for i in np.flatnonzero(data.bag_labels):
        cells = _cells(data, i)
        row = by_name.iloc[i]
        scale = min(1.0, IMAGE_SIZE / max(row["width"], row["height"]))
        top = (IMAGE_SIZE - round(row["height"] * scale)) // 2
        left = (IMAGE_SIZE - round(row["width"] * scale)) // 2
        xmin, ymin, xmax, ymax = row["car_box"]
        box = ((xmin - 1) * scale + left, (ymin - 1) * scale + top, (xmax - xmin + 1) * scale, (ymax - ymin + 1) * scale)
        np.testing.assert_array_equal(cells, _authors_cells([box], IMAGE_SIZE), err_msg=data.names[i])
        bright = data.images[i] > 0.85  # the car, at its letterboxed position
        rows, cols = np.nonzero(bright)
        assert cells[int(rows.mean()) // cell, int(cols.mean()) // cell], data.names[i]
        # positive cells touch the car (the authors' rule adds at most one cell after the box)
        near = np.zeros_like(cells)
        near[rows.min() // cell : rows.max() // cell + 2, cols.min() // cell : cols.max() // cell + 2] = True
        assert not (cells & ~near).any(), data.names[i]
        # cells the car fills are positive; the motorbike (left quarter, mid-grey) is never a positive instance
        full = bright.reshape(GRID, cell, GRID, cell).mean(axis=(1, 3)) > 0.95
        assert not (full & ~cells).any(), data.names[i]


def test_voc2005_size_mismatch_and_missing_image_raise(tmp_path, monkeypatch):
    root = tmp_path / "pascal-voc-2005"
    want = write_voc2005_like(root, n_images=4)
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    ann = root / "VOC2005_1" / "Annotations" / "TUGraz_cars" / "img000.txt"
    w, h = want.loc[0, ["width", "height"]]
    ann.write_text(ann.read_text(encoding="latin-1").replace(f"{w} x {h} x 3", f"{w + 1} x {h} x 3"), encoding="latin-1")
    with pytest.raises(ValueError, match="img000.*declares"):
        ms.load_real_bags("voc2005", IMAGE_SIZE, GRID, seed=0)
    ann.write_text(ann.read_text(encoding="latin-1").replace(f"{w + 1} x {h} x 3", f"{w} x {h} x 3"), encoding="latin-1")
    (root / want.loc[1, "filename"]).unlink()
    with pytest.raises(FileNotFoundError, match="img001.png"):
        ms.load_real_bags("voc2005", IMAGE_SIZE, GRID, seed=0)


def test_real_params_check_the_instance_grid():
    with pytest.raises(ValueError, match="grid_size"):
        ms.Params(data_source="real", image_size=64, grid_size=16)  # stride-8 SmallCNN: an 8 x 8 map
    with pytest.raises(ValueError, match="grid_size"):
        ms.Params(data_source="real", backbone="resnet50", image_size=256, grid_size=16)
    ms.Params(data_source="real", backbone="resnet50", image_size=512, grid_size=16)  # the full profile's geometry
