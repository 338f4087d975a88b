"""NIH ChestX-ray14 label table and bounding-box list, as tidy DataFrames.

Both tables ship with the repository (``data/Data_Entry_2017_v2020.csv.gz`` and
``data/BBox_List_2017.csv.gz``, copied byte-for-byte from the ``torchxrayvision==1.5.7`` wheel; origin,
licence and sha256 in ``data_manifest.yaml``). The loaders verify the sha256 of the shipped files
before parsing and raise :class:`medeval.data.manifest.ChecksumError` naming the file and the expected
checksum on mismatch. A user-supplied ``path`` (e.g. the original NIH CSV) is read as is, without a
checksum, but its columns and labels are validated.

Reference: Wang et al., "ChestX-ray8: Hospital-scale chest X-ray database and benchmarks on
weakly-supervised classification and localization of common thorax diseases", CVPR 2017.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.data import manifest as _manifest
from medeval.metrics.boxes import BOX_FORMATS, convert_boxes, validate_boxes

__all__ = ["BOX_COLUMNS", "IMAGE_SIZE", "LABELS", "NO_FINDING", "load_boxes", "load_labels", "patient_id_of"]

#: The 14 findings in alphabetical order (the thesis's lambda_1 ... lambda_14; CSV spelling).
LABELS: tuple[str, ...] = (
    "Atelectasis",
    "Cardiomegaly",
    "Consolidation",
    "Edema",
    "Effusion",
    "Emphysema",
    "Fibrosis",
    "Hernia",
    "Infiltration",
    "Mass",
    "Nodule",
    "Pleural_Thickening",
    "Pneumonia",
    "Pneumothorax",
)
#: The label-table entry for an image with none of the 14 findings.
NO_FINDING = "No Finding"
#: Side of the released (resized) images in pixels; boxes are given in this frame.
IMAGE_SIZE = 1024
#: Names of the 4 coordinate columns of :func:`load_boxes` for each box format.
BOX_COLUMNS = {
    "xywh": ("x", "y", "w", "h"),
    "xyxy": ("x1", "y1", "x2", "y2"),
    "cxcywh": ("cx", "cy", "w", "h"),
}

# spellings in BBox_List_2017.csv that differ from the label table
_BOX_FINDING_ALIASES = {"Infiltrate": "Infiltration"}

_LABEL_COLUMNS_RAW = {
    "Image Index": "image_index",
    "Patient ID": "patient_id",
    "Follow-up #": "follow_up",
    "View Position": "view_position",
    "Patient Age": "age",
    "Patient Gender": "sex",
}


def _default_path(dataset_id: str) -> Path:
    entry = _manifest.get_dataset(dataset_id)
    f = entry.files[0]
    path = _manifest.repo_root() / f.path
    _manifest.verify_file(path, sha256=f.sha256)
    return path


def _resolve(path, dataset_id: str) -> Path:
    if path is None:
        return _default_path(dataset_id)
    p = Path(os.fspath(path))
    if not p.is_file():
        raise FileNotFoundError(
            f"path {p} does not exist (expected the {dataset_id} CSV, optionally gzipped)"
        )
    return p


def _label_matrix(finding_labels: pd.Series) -> np.ndarray:
    """(N, 14) uint8 indicator matrix from the "|"-separated ``Finding Labels`` column.

    Parses each distinct label set once (801 distinct sets for 112,120 rows), then indexes.
    Unknown finding names raise ValueError.
    """
    codes, uniques = pd.factorize(finding_labels, sort=False)
    if (codes < 0).any():
        raise ValueError("Finding Labels has missing values")
    index = {name: k for k, name in enumerate(LABELS)}
    table = np.zeros((len(uniques), len(LABELS)), dtype=np.uint8)
    for row, combo in enumerate(uniques):
        for name in str(combo).split("|"):
            name = name.strip()
            if name == NO_FINDING:
                continue
            if name not in index:
                raise ValueError(
                    f"Finding Labels contains unknown finding {name!r}; expected one of {LABELS}"
                )
            table[row, index[name]] = 1
    return table[codes]


def load_labels(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The ChestX-ray14 label table, one row per image.

    Columns, in order: ``image_index`` (str, e.g. "00000001_000.png"), ``patient_id`` (int),
    ``follow_up`` (int, the ``Follow-up #`` column), ``view_position`` ("PA" | "AP"), ``age`` (int,
    years), ``sex`` ("M" | "F"), then the 14 :data:`LABELS` as uint8 0/1 columns. "No Finding" rows
    have all 14 labels 0.

    ``path=None`` reads the shipped, checksum-verified ``Data_Entry_2017_v2020.csv.gz``; any other
    path must have the NIH columns (Data_Entry_2017.csv or its v2020 revision, gzipped or not).
    """
    p = _resolve(path, "chestxray14-labels")
    raw = pd.read_csv(
        p,
        usecols=list(_LABEL_COLUMNS_RAW) + ["Finding Labels"],
        dtype={"Image Index": str, "Finding Labels": str, "View Position": str, "Patient Gender": str},
    )
    missing = [c for c in [*_LABEL_COLUMNS_RAW, "Finding Labels"] if c not in raw.columns]
    if missing:  # pragma: no cover - usecols already raises, kept for clarity
        raise ValueError(f"path {p} lacks columns {missing}")
    out = raw[list(_LABEL_COLUMNS_RAW)].rename(columns=_LABEL_COLUMNS_RAW)
    for col in ("patient_id", "follow_up", "age"):
        out[col] = out[col].astype(np.int64)
    labels = pd.DataFrame(_label_matrix(raw["Finding Labels"]), columns=list(LABELS), index=out.index)
    return pd.concat([out, labels], axis=1)


def load_boxes(path: str | os.PathLike | None = None, box_format: str = "xywh") -> pd.DataFrame:
    """The ChestX-ray14 bounding-box list, one row per box.

    Columns: ``image_index``, ``finding`` (spelled as in :data:`LABELS`: the file's "Infiltrate" is
    reconciled to "Infiltration"), then four float64 coordinate columns in pixels of the 1024x1024
    images, named by ``box_format`` (:data:`BOX_COLUMNS`): ``"xywh"`` -> x, y, w, h (top-left corner,
    width, height; the file's own convention), ``"xyxy"`` -> x1, y1, x2, y2, ``"cxcywh"`` -> cx, cy, w, h.
    Conversions use :func:`medeval.metrics.boxes.convert_boxes`. Boxes with non-positive size or
    non-finite coordinates raise ValueError.

    ``path=None`` reads the shipped, checksum-verified ``BBox_List_2017.csv.gz``.
    """
    if box_format not in BOX_FORMATS:
        raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
    p = _resolve(path, "chestxray14-boxes")
    raw = pd.read_csv(p, dtype={"Image Index": str, "Finding Label": str})
    # header: Image Index, Finding Label, "Bbox [x", y, w, "h]" (+ three empty trailing columns)
    if list(raw.columns[:2]) != ["Image Index", "Finding Label"] or raw.shape[1] < 6:
        raise ValueError(f"path {p} is not a BBox_List_2017.csv: columns {list(raw.columns)}")
    coords = raw.iloc[:, 2:6].to_numpy(dtype=np.float64)
    extra = raw.iloc[:, 6:]
    if extra.notna().any().any():
        raise ValueError(f"path {p} has unexpected values after the four box columns")
    findings = raw["Finding Label"].str.strip().replace(_BOX_FINDING_ALIASES)
    unknown = sorted(set(findings) - set(LABELS))
    if unknown:
        raise ValueError(f"path {p} has box findings {unknown} not in LABELS")
    validate_boxes(coords, "xywh", name=f"boxes in {p.name}")
    coords = convert_boxes(coords, "xywh", box_format)
    out = pd.DataFrame({"image_index": raw["Image Index"].str.strip(), "finding": findings})
    for k, name in enumerate(BOX_COLUMNS[box_format]):
        out[name] = coords[:, k]
    return out


def patient_id_of(image_index) -> np.ndarray:
    """Patient id encoded in image file names ("00000013_005.png" -> 13), as int64."""
    s = pd.Series(np.atleast_1d(np.asarray(image_index, dtype=object))).astype(str)
    ids = s.str.extract(r"^(\d+)_\d+\.png$")[0]
    if ids.isna().any():
        bad = s[ids.isna()].iloc[0]
        raise ValueError(f"image_index must look like '00000013_005.png', got {bad!r}")
    return ids.astype(np.int64).to_numpy()
