"""ChestX-ray14 label table and box list: structure, reference counts (NIH Data_Entry_2017_v2020.csv),
checksum policy."""

import gzip
import shutil
import time

import numpy as np
import pandas as pd
import pytest

from medeval.data import chestxray14 as cx
from medeval.data import manifest as m
from medeval.metrics.boxes import convert_boxes

# per-label counts computed by us from the NIH label file Data_Entry_2017_v2020.csv, independent of our parser
NIH_COUNTS = {
    "Infiltration": 19894,
    "Effusion": 13317,
    "Atelectasis": 11559,
    "Nodule": 6331,
    "Mass": 5782,
    "Pneumothorax": 5302,
    "Consolidation": 4667,
    "Pleural_Thickening": 3385,
    "Cardiomegaly": 2776,
    "Emphysema": 2516,
    "Edema": 2303,
    "Fibrosis": 1686,
    "Pneumonia": 1431,
    "Hernia": 227,
}


@pytest.fixture(scope="module")
def labels():
    return cx.load_labels()


@pytest.fixture(scope="module")
def boxes():
    return cx.load_boxes()


def test_labels_constant():
    assert cx.LABELS == tuple(sorted(cx.LABELS)) and len(cx.LABELS) == 14
    assert cx.IMAGE_SIZE == 1024


def test_label_table_columns_and_types(labels):
    assert list(labels.columns) == [
        "image_index",
        "patient_id",
        "follow_up",
        "view_position",
        "age",
        "sex",
        *cx.LABELS,
    ]
    assert all(labels[c].dtype == np.uint8 for c in cx.LABELS)
    assert labels["patient_id"].dtype == np.int64 and labels["follow_up"].dtype == np.int64
    assert set(labels["view_position"]) == {"PA", "AP"} and set(labels["sex"]) == {"M", "F"}


def test_label_table_reference_numbers(labels):
    assert len(labels) == 112_120
    assert labels["patient_id"].nunique() == 30_805
    assert labels[list(cx.LABELS)].sum().to_dict() == NIH_COUNTS
    n_labels = labels[list(cx.LABELS)].sum(axis=1)
    assert int((n_labels == 0).sum()) == 60_361  # "No Finding"
    assert int(n_labels.max()) == 9 and int((n_labels == 9).sum()) == 2
    assert labels["view_position"].value_counts().to_dict() == {"PA": 67_310, "AP": 44_810}
    assert np.isclose(n_labels.mean() / 14, 0.051715, atol=5e-7)  # LDens
    # the thesis's Table mlc_def examples
    row = labels.set_index("image_index")
    assert {c for c in cx.LABELS if row.loc["00000001_001.png", c]} == {"Cardiomegaly", "Emphysema"}
    assert not row.loc["00000005_000.png", list(cx.LABELS)].any()
    assert {c for c in cx.LABELS if row.loc["00000032_012.png", c]} == {
        "Atelectasis",
        "Consolidation",
        "Edema",
        "Pneumonia",
    }


def test_labels_match_independent_string_parse(labels):
    raw = pd.read_csv(m.repo_root() / "data" / "Data_Entry_2017_v2020.csv.gz")
    dummies = raw["Finding Labels"].str.get_dummies(sep="|").drop(columns="No Finding")
    np.testing.assert_array_equal(dummies[list(cx.LABELS)].to_numpy(), labels[list(cx.LABELS)].to_numpy())
    np.testing.assert_array_equal(raw["Patient ID"].to_numpy(), labels["patient_id"].to_numpy())
    np.testing.assert_array_equal(
        cx.patient_id_of(labels["image_index"].head(1000)), labels["patient_id"].head(1000)
    )


def test_label_table_loads_under_two_seconds():
    cx.load_labels()  # warm the file cache
    t0 = time.perf_counter()
    cx.load_labels()
    assert time.perf_counter() - t0 < 2.0


def test_boxes_reconciled_and_counted(boxes):
    assert list(boxes.columns) == ["image_index", "finding", "x", "y", "w", "h"]
    assert len(boxes) == 984 and boxes["image_index"].nunique() == 880
    assert "Infiltrate" not in set(boxes["finding"]) and set(boxes["finding"]) <= set(cx.LABELS)
    assert boxes["finding"].value_counts().to_dict() == {
        "Atelectasis": 180,
        "Effusion": 153,
        "Cardiomegaly": 146,
        "Infiltration": 123,
        "Pneumonia": 120,
        "Pneumothorax": 98,
        "Mass": 85,
        "Nodule": 79,
    }
    assert (boxes[["w", "h"]] > 0).all().all()
    assert boxes.iloc[0][["x", "y", "w", "h"]].tolist() == pytest.approx(
        [225.084745762712, 547.019216763771, 86.7796610169491, 79.1864406779661]
    )


def test_every_box_image_is_in_the_label_table(labels, boxes):
    assert boxes["image_index"].isin(labels["image_index"]).all()
    # after reconciling "Infiltrate", every box's finding is one of its image's labels
    lab = labels.set_index("image_index")
    assert all(lab.at[i, f] == 1 for i, f in zip(boxes["image_index"], boxes["finding"], strict=True))
    xyxy = cx.load_boxes(box_format="xyxy")
    assert (xyxy[["x1", "y1"]] >= 0).all().all() and (xyxy[["x2", "y2"]] <= cx.IMAGE_SIZE).all().all()


@pytest.mark.parametrize("fmt", ["xyxy", "cxcywh"])
def test_box_formats(boxes, fmt):
    other = cx.load_boxes(box_format=fmt)
    cols = list(cx.BOX_COLUMNS[fmt])
    assert list(other.columns) == ["image_index", "finding", *cols]
    np.testing.assert_allclose(
        other[cols].to_numpy(), convert_boxes(boxes[["x", "y", "w", "h"]], "xywh", fmt)
    )
    if fmt == "xyxy":
        np.testing.assert_allclose(other["x2"] - other["x1"], boxes["w"])


def test_bad_box_format():
    with pytest.raises(ValueError, match="box_format"):
        cx.load_boxes(box_format="ltrb")


def test_checksum_mismatch_names_file_and_expected(tmp_path, monkeypatch):
    # a copy of the repo root whose shipped label file is altered by one byte
    root = tmp_path / "repo"
    (root / "data").mkdir(parents=True)
    shutil.copy(m.manifest_path(), root / "data_manifest.yaml")
    src = m.repo_root() / "data" / "BBox_List_2017.csv.gz"
    data = bytearray(gzip.decompress(src.read_bytes()))
    data[-3:-2] = b"9" if data[-3:-2] != b"9" else b"8"
    (root / "data" / "BBox_List_2017.csv.gz").write_bytes(gzip.compress(bytes(data)))
    monkeypatch.setenv("MEDEVAL_ROOT", str(root))
    expected = m.get_dataset("chestxray14-boxes").files[0].sha256
    with pytest.raises(m.ChecksumError, match=f"BBox_List_2017.csv.gz: expected sha256 {expected}"):
        cx.load_boxes()


def test_user_path_is_read_and_validated(tmp_path):
    good = tmp_path / "labels.csv"
    good.write_text(
        "Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position\n"
        "00000001_000.png,Cardiomegaly|Effusion,0,1,57,M,PA\n00000002_000.png,No Finding,0,2,80,F,AP\n"
    )
    df = cx.load_labels(good)
    assert (
        df[["Cardiomegaly", "Effusion"]].iloc[0].tolist() == [1, 1] and df[list(cx.LABELS)].iloc[1].sum() == 0
    )
    bad = tmp_path / "bad.csv"
    bad.write_text(good.read_text().replace("Effusion", "Effusoin"))
    with pytest.raises(ValueError, match="unknown finding 'Effusoin'"):
        cx.load_labels(bad)
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        cx.load_labels(tmp_path / "nope.csv")
    boxes = tmp_path / "boxes.csv"
    boxes.write_text("Image Index,Finding Label,Bbox [x,y,w,h],,,\n00000001_000.png,Infiltrate,1,2,0,4,,,\n")
    with pytest.raises(ValueError, match="positive width and height"):
        cx.load_boxes(boxes)


def test_patient_id_of_rejects_bad_names():
    with pytest.raises(ValueError, match="image_index"):
        cx.patient_id_of(["foo.png"])
