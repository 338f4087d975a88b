"""Readers of the real datasets' on-disk formats.

Each reader takes paths (from :func:`medeval.data.manifest.require` or the user) and returns numpy
arrays, tidy DataFrames or lazy array-like objects. Readers never download and never substitute a
stand-in: missing or malformed files raise ``FileNotFoundError`` / ``ValueError`` naming the file.

When a reader opens a file of a fetched or recorded dataset, it first compares the file's size with the
dataset's content record (:func:`medeval.data.manifest.check_file`, one ``stat``), and a file it cannot parse
is reported through :func:`medeval.data.manifest.damaged_file_error`: a truncated CIFAR-10 batch, PCam HDF5
file, ChestX-ray14 PNG or CAMELYON16 slide raises :class:`~medeval.data.manifest.DatasetCorruptError` (a
ValueError) naming the dataset, the file, the expected size and the remedy. Contents are hashed only by
``medeval data verify``.

Formats (each tested on tiny fixtures written in that format by ``tests/data/test_readers.py``):

* ChestX-ray14: a folder of 1024x1024 PNGs named by ``Image Index`` + the label/box CSVs
  (:class:`ChestXray14Images`).
* MURA v1.1: ``MURA-v1.1/{train,valid}/XR_<PART>/patientNNNNN/studyN_{positive,negative}/imageN.png``
  with ``{split}_image_paths.csv`` and ``{split}_labeled_studies.csv`` (:func:`read_mura`).
* PASCAL VOC 2005: "PASCAL Annotation Version 1.00" text files (:func:`read_voc2005_annotation`,
  :func:`read_voc2005_folder`).
* PatchCamelyon: HDF5 ``x`` (N, 96, 96, 3) uint8 and ``y`` (N, 1, 1, 1), read lazily (:class:`PCamH5`).
* CAMELYON16: pyramidal TIFF whole-slide images via openslide, with a tifffile fallback for tiled
  TIFFs (:class:`SlideReader`), and ASAP XML tumour annotations rasterised to masks at any level
  (:func:`read_asap_annotations`, :func:`rasterize_asap_annotations`).
* CIFAR-10: python pickled batches (:func:`read_cifar10_batch`, :func:`read_cifar10`).
* ADNI-like regional grey-matter volumes CSV (:func:`read_regional_volumes`).
"""

from __future__ import annotations

import os
import pickle
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.data import manifest as _manifest

__all__ = [
    "ADNI_DIAGNOSES",
    "ASAP_EXCLUSION_GROUPS",
    "ASAP_TUMOUR_GROUPS",
    "CIFAR10_CLASSES",
    "AsapPolygon",
    "ChestXray14Images",
    "MURA_BODY_PARTS",
    "PCamH5",
    "SlideReader",
    "VOC2005Annotation",
    "open_slide",
    "read_asap_annotations",
    "rasterize_asap_annotations",
    "read_cifar10",
    "read_cifar10_batch",
    "read_mura",
    "read_regional_volumes",
    "read_voc2005_annotation",
    "read_voc2005_folder",
    "read_wsi_region",
    "regional_volume_arrays",
]


def _existing(path, what: str) -> Path:
    p = Path(os.fspath(path))
    if not p.exists():
        raise FileNotFoundError(f"{what} not found: {p}")
    return p


def _existing_file(path, what: str) -> Path:
    """``_existing`` for a file of a dataset: a file its dataset's content record lists must be there with the
    recorded size (DatasetCorruptError naming the dataset and the remedy otherwise); files outside a recorded
    dataset are only checked for existence."""
    _manifest.check_file(path)
    return _existing(path, what)


# ==========================================================================================================
# ChestX-ray14 PNG folder


class ChestXray14Images:
    """The ChestX-ray14 PNGs of a folder, joined with the label table.

    Parameters
    ----------
    image_dir : folder holding ``<Image Index>.png`` files (e.g. ``require("chestxray14-images") / "images"``).
    labels : the label table (:func:`medeval.data.chestxray14.load_labels`); default: the shipped table.
    require_all : if True (default False), every image of ``labels`` must be present (FileNotFoundError
        naming the count and the first missing file); otherwise the table is restricted to the images
        found, and an empty intersection is an error.

    ``table`` is the label table restricted to the available images (index reset). ``image(i)`` returns
    image ``i`` as float32 in [0, 1] of shape (H, W) (RGBA/RGB PNGs, which exist in the release, are
    converted to grey levels), optionally resized to ``size`` x ``size`` with bilinear interpolation.
    """

    def __init__(self, image_dir, labels: pd.DataFrame | None = None, *, require_all: bool = False):
        self.image_dir = _existing(image_dir, "ChestX-ray14 image folder")
        if labels is None:
            from medeval.data.chestxray14 import load_labels

            labels = load_labels()
        if "image_index" not in labels.columns:
            raise ValueError("labels must have an 'image_index' column (see chestxray14.load_labels)")
        present = {p.name for p in self.image_dir.glob("*.png")}
        have = labels["image_index"].isin(present)
        if require_all and not have.all():
            first = labels.loc[~have, "image_index"].iloc[0]
            raise FileNotFoundError(
                f"{int((~have).sum())} images of the label table are missing from {self.image_dir} (first: {first})"
            )
        if not have.any():
            raise FileNotFoundError(f"no image of the label table was found in {self.image_dir}")
        self.table = labels.loc[have].reset_index(drop=True)

    def __len__(self) -> int:
        return len(self.table)

    def path(self, i: int) -> Path:
        return self.image_dir / self.table["image_index"].iloc[i]

    def image(self, i: int, size: int | None = None) -> np.ndarray:
        from PIL import Image

        if size is not None and size <= 0:
            raise ValueError(f"size must be a positive int, got {size}")
        path = self.path(i)
        _manifest.check_file(path)
        try:
            with Image.open(path) as im:
                im = im.convert("L")
                if size is not None:
                    im = im.resize((size, size), Image.BILINEAR)
                return np.asarray(im, dtype=np.float32) / 255.0
        except FileNotFoundError:
            raise
        except (OSError, SyntaxError) as exc:  # PIL: truncated or undecodable PNG
            if isinstance(exc, _manifest.DatasetCorruptError):
                raise
            raise _manifest.damaged_file_error(path, f"not a readable PNG ({exc})") from exc

    def images(self, indices=None, size: int | None = None, workers: int | None = None) -> np.ndarray:
        """Images ``indices`` (default: all) as one (k, H, W) float32 array, decoded by ``workers`` threads
        (default: the number of cores, at most 32; PNG decoding and resizing release the GIL, so this scales with
        cores: 1.5-2x on 2 cores, see ``benchmarks/bench_image_loading.py``). Same values as :meth:`image` one by
        one."""
        from concurrent.futures import ThreadPoolExecutor

        idx = np.arange(len(self)) if indices is None else np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError(f"indices must be in [0, {len(self)}), got {idx.min()}..{idx.max()}")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if idx.size == 0:
            return np.zeros((0, size or 0, size or 0), np.float32)
        first = self.image(int(idx[0]), size)
        out = np.empty((idx.size, *first.shape), dtype=np.float32)
        out[0] = first

        def load(k: int) -> None:
            img = self.image(int(idx[k]), size)
            if img.shape != first.shape:
                raise ValueError(f"{self.path(int(idx[k]))}: shape {img.shape} differs from {first.shape}; pass size")
            out[k] = img

        n_workers = workers or min(32, os.cpu_count() or 1)
        if n_workers == 1:
            for k in range(1, idx.size):
                load(k)
        else:
            with ThreadPoolExecutor(max_workers=n_workers) as pool:
                list(pool.map(load, range(1, idx.size)))
        return out

    def labels(self) -> np.ndarray:
        from medeval.data.chestxray14 import LABELS

        return self.table[list(LABELS)].to_numpy(dtype=np.uint8)


# ==========================================================================================================
# MURA

MURA_BODY_PARTS = ("XR_ELBOW", "XR_FINGER", "XR_FOREARM", "XR_HAND", "XR_HUMERUS", "XR_SHOULDER", "XR_WRIST")
_MURA_PATH = re.compile(
    r"^(?:.*/)?(?P<split>train|valid)/(?P<body_part>XR_[A-Z]+)/patient(?P<patient>\d+)/"
    r"study(?P<study>\d+)_(?P<outcome>positive|negative)/image(?P<image>\d+)\.png$"
)


def read_mura(
    root, split: str = "train", body_part: str | None = None, *, check_files: bool = True
) -> pd.DataFrame:
    """The MURA v1.1 image table of one split, one row per image.

    ``root`` is the folder holding ``MURA-v1.1/`` (or ``MURA-v1.1`` itself). Reads
    ``{split}_image_paths.csv`` (one path per line, no header) and ``{split}_labeled_studies.csv``
    (``study_path,label``) and checks they agree with the ``studyN_positive|negative`` folder names.

    Columns: ``path`` (absolute), ``split``, ``body_part`` (e.g. "XR_SHOULDER"), ``patient_id`` (int),
    ``study`` (int), ``image`` (int), ``label`` (uint8, 1 = abnormal). ``body_part`` filters one part.
    ``check_files`` verifies every listed PNG exists (FileNotFoundError with the first missing one).
    """
    if split not in ("train", "valid"):
        raise ValueError(f"split must be 'train' or 'valid', got {split!r}")
    if body_part is not None and body_part not in MURA_BODY_PARTS:
        raise ValueError(f"body_part must be one of {MURA_BODY_PARTS} or None, got {body_part!r}")
    root = _existing(root, "MURA folder")
    base = root if (root / f"{split}_image_paths.csv").exists() else root / "MURA-v1.1"
    images_csv = _existing_file(base / f"{split}_image_paths.csv", "MURA image list")
    studies_csv = _existing_file(base / f"{split}_labeled_studies.csv", "MURA study labels")
    paths = pd.read_csv(images_csv, header=None, names=["rel"], dtype=str)["rel"].str.strip()
    studies = pd.read_csv(studies_csv, header=None, names=["study_path", "label"], dtype={"study_path": str})
    if not set(studies["label"].unique()) <= {0, 1}:
        raise ValueError(f"{studies_csv}: labels must be 0 or 1, got {sorted(studies['label'].unique())}")
    study_label = dict(zip(studies["study_path"].str.rstrip("/"), studies["label"].astype(int), strict=True))

    parsed = paths.str.extract(_MURA_PATH)
    bad = parsed["split"].isna()
    if bad.any():
        raise ValueError(f"{images_csv}: path does not follow the MURA layout: {paths[bad].iloc[0]!r}")
    if (parsed["split"] != split).any():
        raise ValueError(
            f"{images_csv}: lists images of another split ({paths[parsed['split'] != split].iloc[0]!r})"
        )
    study_dirs = paths.str.rsplit("/", n=1).str[0]
    labels = study_dirs.map(study_label)
    if labels.isna().any():
        raise ValueError(f"{studies_csv}: no label for study {study_dirs[labels.isna()].iloc[0]!r}")
    from_name = (parsed["outcome"] == "positive").astype(int)
    if (from_name != labels.astype(int)).any():
        i = int(np.flatnonzero((from_name != labels.astype(int)).to_numpy())[0])
        raise ValueError(f"{studies_csv}: label of {study_dirs.iloc[i]!r} disagrees with its folder name")

    # the CSVs list paths starting with "MURA-v1.1/"; resolve them against the folder above it
    anchor = base.parent if paths.iloc[0].startswith(base.name + "/") else base
    out = pd.DataFrame(
        {
            "path": [str(anchor / p) for p in paths],
            "split": split,
            "body_part": parsed["body_part"],
            "patient_id": parsed["patient"].astype(np.int64),
            "study": parsed["study"].astype(np.int64),
            "image": parsed["image"].astype(np.int64),
            "label": labels.astype(np.uint8),
        }
    )
    if body_part is not None:
        out = out[out["body_part"] == body_part].reset_index(drop=True)
    if check_files:
        exists = out["path"].map(os.path.exists)
        if not exists.all():
            raise FileNotFoundError(
                f"{int((~exists).sum())} MURA images listed in {images_csv} are missing (first: {out.loc[~exists, 'path'].iloc[0]})"
            )
    return out


# ==========================================================================================================
# PASCAL VOC 2005


@dataclass
class VOC2005Annotation:
    """One "PASCAL Annotation Version 1.00" file.

    ``objects`` has one row per object: ``object`` (1-based index), ``label`` (e.g. "PAScarSide"),
    ``original_label``, ``xmin, ymin, xmax, ymax`` exactly as written (1-based, inclusive pixel
    indices, top-left pixel (1, 1)), ``x, y, w, h`` the same box as continuous 0-based xywh
    (``x = xmin - 1``, ``w = xmax - xmin + 1``), and ``mask`` (the pixel-mask file or None).
    """

    filename: str
    width: int
    height: int
    channels: int
    database: str
    objects: pd.DataFrame = field(repr=False)


_VOC_BOX = re.compile(
    r'^Bounding box for object (\d+) "([^"]*)" \(Xmin, Ymin\) - \(Xmax, Ymax\) : '
    r"\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)\s*-\s*\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)"
)
_VOC_ORIG = re.compile(r'^Original label for object (\d+) "([^"]*)" : "([^"]*)"')
_VOC_MASK = re.compile(r'^Pixel mask for object (\d+) "([^"]*)" : "([^"]*)"')
_VOC_SIZE = re.compile(r"^Image size \(X x Y x C\) : (\d+) x (\d+) x (\d+)")
_VOC_FILE = re.compile(r'^Image filename : "([^"]*)"')
_VOC_DB = re.compile(r'^Database : "([^"]*)"')
_VOC_OBJS = re.compile(r"^Objects with ground truth : (\d+)")


def read_voc2005_annotation(path) -> VOC2005Annotation:
    """Parse one PASCAL VOC 2005 annotation text file (see :class:`VOC2005Annotation`).

    Raises ValueError naming the file if the header line is not "# PASCAL Annotation Version 1.00",
    the image size or file name is missing, a box is degenerate or outside the image, or the number of
    boxes differs from "Objects with ground truth".
    """
    p = _existing_file(path, "PASCAL annotation file")
    lines = p.read_text(encoding="latin-1").splitlines()
    if not lines or "PASCAL Annotation Version 1.00" not in lines[0]:
        raise ValueError(f"{p}: first line must be '# PASCAL Annotation Version 1.00'")
    filename = database = None
    size = None
    n_declared = None
    boxes: dict[int, dict] = {}
    for line in lines[1:]:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if m := _VOC_FILE.match(line):
            filename = m.group(1)
        elif m := _VOC_SIZE.match(line):
            size = tuple(int(g) for g in m.groups())
        elif m := _VOC_DB.match(line):
            database = m.group(1)
        elif m := _VOC_OBJS.match(line):
            n_declared = int(m.group(1))
        elif m := _VOC_BOX.match(line):
            k = int(m.group(1))
            xmin, ymin, xmax, ymax = (int(g) for g in m.groups()[2:])
            boxes.setdefault(k, {}).update(label=m.group(2), xmin=xmin, ymin=ymin, xmax=xmax, ymax=ymax)
        elif m := _VOC_ORIG.match(line):
            boxes.setdefault(int(m.group(1)), {}).update(original_label=m.group(3))
        elif m := _VOC_MASK.match(line):
            boxes.setdefault(int(m.group(1)), {}).update(mask=m.group(3))
    if filename is None or size is None:
        raise ValueError(f"{p}: missing 'Image filename' or 'Image size' line")
    width, height, channels = size
    rows = []
    for k in sorted(boxes):
        b = boxes[k]
        if "xmin" not in b:
            raise ValueError(f"{p}: object {k} has no 'Bounding box' line")
        if not (1 <= b["xmin"] <= b["xmax"] <= width and 1 <= b["ymin"] <= b["ymax"] <= height):
            raise ValueError(f"{p}: box of object {k} {b} is empty or outside the {width}x{height} image")
        rows.append(
            {
                "object": k,
                "label": b["label"],
                "original_label": b.get("original_label"),
                "xmin": b["xmin"],
                "ymin": b["ymin"],
                "xmax": b["xmax"],
                "ymax": b["ymax"],
                "x": float(b["xmin"] - 1),
                "y": float(b["ymin"] - 1),
                "w": float(b["xmax"] - b["xmin"] + 1),
                "h": float(b["ymax"] - b["ymin"] + 1),
                "mask": b.get("mask"),
            }
        )
    if n_declared is not None and n_declared != len(rows):
        raise ValueError(f"{p}: declares {n_declared} objects with ground truth but has {len(rows)} boxes")
    cols = ["object", "label", "original_label", "xmin", "ymin", "xmax", "ymax", "x", "y", "w", "h", "mask"]
    return VOC2005Annotation(
        filename, width, height, channels, database or "", pd.DataFrame(rows, columns=cols)
    )


def read_voc2005_folder(annotation_dir) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parse every ``*.txt`` under ``annotation_dir`` (recursively).

    Returns ``(images, objects)``: ``images`` one row per file (``annotation``, ``filename``, ``width``,
    ``height``, ``channels``, ``database``, ``n_objects``); ``objects`` one row per box with the
    columns of :class:`VOC2005Annotation` plus ``filename``.
    """
    root = _existing(annotation_dir, "PASCAL annotation folder")
    files = sorted(root.rglob("*.txt"))
    if not files:
        raise FileNotFoundError(f"no *.txt annotation files under {root}")
    images, objects = [], []
    for f in files:
        a = read_voc2005_annotation(f)
        images.append(
            {
                "annotation": str(f),
                "filename": a.filename,
                "width": a.width,
                "height": a.height,
                "channels": a.channels,
                "database": a.database,
                "n_objects": len(a.objects),
            }
        )
        if len(a.objects):
            objects.append(a.objects.assign(filename=a.filename))
    obj = pd.concat(objects, ignore_index=True) if objects else pd.DataFrame()
    return pd.DataFrame(images), obj


# ==========================================================================================================
# PatchCamelyon HDF5


class PCamH5:
    """Lazy reader of a PatchCamelyon split: ``x`` (N, 96, 96, 3) uint8 and ``y`` (N, 1, 1, 1).

    The files are opened on first access (so the object pickles to DataLoader workers) and only the
    requested rows are read. ``reader[i]`` -> (image (96, 96, 3) uint8, label int); ``reader[a:b]`` or
    ``reader[idx_array]`` -> (images (k, 96, 96, 3), labels (k,) uint8); ``labels()`` reads all labels.
    Shapes and dtypes are validated on opening (ValueError naming the file).
    """

    PATCH_SHAPE = (96, 96, 3)

    def __init__(self, x_path, y_path):
        self.x_path = _existing_file(x_path, "PCam x file")
        self.y_path = _existing_file(y_path, "PCam y file")
        self._x = self._y = None
        self._files = []

    @classmethod
    def from_dir(cls, root, split: str) -> PCamH5:
        """``root/camelyonpatch_level_2_split_{split}_{x,y}.h5`` for split in train | valid | test."""
        if split not in ("train", "valid", "test"):
            raise ValueError(f"split must be 'train', 'valid' or 'test', got {split!r}")
        root = Path(root)
        stem = f"camelyonpatch_level_2_split_{split}"
        return cls(root / f"{stem}_x.h5", root / f"{stem}_y.h5")

    def _open(self):
        if self._x is not None:
            return
        import h5py

        for path in (self.x_path, self.y_path):
            _existing_file(path, "PCam file")
        for path in (self.x_path, self.y_path):
            try:
                self._files.append(h5py.File(path, "r"))
            except OSError as exc:  # HDF5: "truncated file", "file signature not found", ...
                self.close()
                raise _manifest.damaged_file_error(path, f"HDF5 cannot open it ({exc})") from exc
        fx, fy = self._files
        if "x" not in fx or "y" not in fy:
            self.close()
            raise ValueError(f"PCam files must hold datasets 'x' ({self.x_path}) and 'y' ({self.y_path})")
        x, y = fx["x"], fy["y"]
        problem = None
        if x.ndim != 4 or tuple(x.shape[1:]) != self.PATCH_SHAPE or x.dtype != np.uint8:
            problem = f"{self.x_path}: 'x' must be (N, 96, 96, 3) uint8, got {x.shape} {x.dtype}"
        elif y.ndim < 1 or int(np.prod(y.shape[1:])) != 1 or y.shape[0] != x.shape[0]:
            problem = f"{self.y_path}: 'y' must be (N, 1, 1, 1) with N = {x.shape[0]}, got {y.shape}"
        if problem:
            self.close()
            raise ValueError(problem)
        self._x, self._y = x, y

    def close(self):
        for f in self._files:
            f.close()
        self._files, self._x, self._y = [], None, None

    def __enter__(self):
        self._open()
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        return {"x_path": self.x_path, "y_path": self.y_path}

    def __setstate__(self, state):
        self.__init__(state["x_path"], state["y_path"])

    def __len__(self) -> int:
        self._open()
        return int(self._x.shape[0])

    def __getitem__(self, key):
        self._open()
        try:
            return self._getitem(key)
        except OSError as exc:  # HDF5 read errors: a failed checksum (fletcher32) or decompression filter
            if isinstance(exc, _manifest.DatasetCorruptError):
                raise
            raise _manifest.damaged_file_error(
                self.x_path, f"HDF5 read failed ({exc}); this file or {self.y_path.name} is damaged"
            ) from exc

    def _getitem(self, key):
        if isinstance(key, (int, np.integer)):
            n = len(self)
            k = int(key) + n if key < 0 else int(key)
            if not 0 <= k < n:
                raise IndexError(f"index {key} out of range for {n} patches")
            return self._x[k], int(np.asarray(self._y[k]).reshape(-1)[0])
        if isinstance(key, slice):
            return self._x[key], np.asarray(self._y[key]).reshape(-1).astype(np.uint8)
        idx = np.asarray(key)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        order = np.argsort(idx, kind="stable")  # h5py fancy indexing needs increasing indices
        sorted_idx = idx[order]
        if len(np.unique(sorted_idx)) != len(sorted_idx):
            raise ValueError("index arrays passed to PCamH5 must not repeat indices")
        xs = self._x[sorted_idx]
        ys = np.asarray(self._y[sorted_idx]).reshape(-1).astype(np.uint8)
        inv = np.empty_like(order)
        inv[order] = np.arange(len(order))
        return xs[inv], ys[inv]

    def labels(self) -> np.ndarray:
        self._open()
        try:
            return np.asarray(self._y[...]).reshape(-1).astype(np.uint8)
        except OSError as exc:
            raise _manifest.damaged_file_error(self.y_path, f"HDF5 read of the labels failed ({exc})") from exc


# ==========================================================================================================
# CAMELYON16 whole-slide images


class SlideReader:
    """A pyramidal whole-slide image: openslide first, tifffile tiled-TIFF fallback.

    Attributes mirror openslide: ``level_count``, ``level_dimensions`` (list of (width, height)),
    ``level_downsamples``; ``backend`` is "openslide" or "tifffile". ``read_region((x, y), level,
    (w, h))`` takes the top-left corner in level-0 pixels (as openslide) and returns an RGB uint8 array
    of shape (h, w, 3); pixels outside the slide are 0.
    """

    def __init__(self, path):
        self.path = _existing_file(path, "slide")
        self._osr = None
        self._tif = None
        errors = []
        try:
            import openslide

            self._osr = openslide.OpenSlide(str(self.path))
            self.backend = "openslide"
            self.level_dimensions = [tuple(int(v) for v in d) for d in self._osr.level_dimensions]
        except Exception as exc:  # openslide raises OpenSlideUnsupportedFormatError / OpenSlideError
            errors.append(f"openslide: {exc}")
            self._osr = None
        if self._osr is not None and len(self.level_dimensions) == 1:
            # openslide reads a TIFF whose pyramid is stored in SubIFDs as a single level; prefer the
            # tifffile reader when it finds the other levels
            try:
                self._open_tifffile()
            except Exception:
                self._tif = None
            if self._tif is not None and len(self._pages) > 1:
                self._osr.close()
                self._osr = None
                self.backend = "tifffile"
            elif self._tif is not None:
                self._tif.close()
                self._tif = None
                self.level_dimensions = [tuple(int(v) for v in d) for d in self._osr.level_dimensions]
        if self._osr is None and self._tif is None:
            try:
                self._open_tifffile()
                self.backend = "tifffile"
            except Exception as exc:
                errors.append(f"tifffile: {exc}")
                raise _manifest.damaged_file_error(
                    self.path,
                    f"cannot open the slide: neither openslide nor the tifffile fallback can read it "
                    f"({'; '.join(errors)}). The fallback needs a tiled TIFF whose pyramid levels are "
                    "separate pages or SubIFDs with uncompressed/deflate/LZW tiles",
                ) from exc
        self.level_count = len(self.level_dimensions)
        w0 = self.level_dimensions[0][0]
        self.level_downsamples = [w0 / d[0] for d in self.level_dimensions]

    def _open_tifffile(self):
        import tifffile

        tif = tifffile.TiffFile(str(self.path))
        try:
            series = tif.series[0]
            pages = [lvl.pages[0] if hasattr(lvl, "pages") else lvl for lvl in series.levels]
            if len(pages) == 1:  # levels stored as plain pages of decreasing size
                pages = [p for p in tif.pages if p.is_tiled or p is tif.pages[0]]
                pages = sorted(pages, key=lambda p: -p.imagewidth)
            for p in pages:
                if p.samplesperpixel not in (1, 3, 4) or p.dtype != np.uint8:
                    raise ValueError(f"unsupported page: {p.samplesperpixel} samples of {p.dtype}")
        except Exception:
            tif.close()
            raise
        self._tif = tif
        self._pages = pages
        self.level_dimensions = [(int(p.imagewidth), int(p.imagelength)) for p in pages]

    def close(self):
        if self._osr is not None:
            self._osr.close()
        if self._tif is not None:
            self._tif.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def read_region(self, location, level: int, size) -> np.ndarray:
        if not 0 <= level < self.level_count:
            raise ValueError(f"level must be in [0, {self.level_count - 1}], got {level}")
        w, h = (int(v) for v in size)
        if w <= 0 or h <= 0:
            raise ValueError(f"size must be positive (width, height), got {size}")
        if self._osr is not None:
            rgba = np.asarray(self._osr.read_region(tuple(int(v) for v in location), level, (w, h)))
            # openslide returns premultiplied RGBA; transparent (outside) pixels become 0
            return np.ascontiguousarray(rgba[..., :3])
        ds = self.level_downsamples[level]
        x0, y0 = int(location[0] // ds), int(location[1] // ds)
        return self._read_tiles(self._pages[level], x0, y0, w, h)

    def _read_tiles(self, page, x0, y0, w, h) -> np.ndarray:
        out = np.zeros((h, w, 3), dtype=np.uint8)
        W, H = page.imagewidth, page.imagelength
        xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + w, W), min(y0 + h, H)
        if xa >= xb or ya >= yb:
            return out
        if not page.is_tiled:
            arr = self._to_rgb(page.asarray())
            out[ya - y0 : yb - y0, xa - x0 : xb - x0] = arr[ya:yb, xa:xb]
            return out
        tw, tl = page.tilewidth, page.tilelength
        tiles_across = -(-W // tw)
        fh = page.parent.filehandle
        for ty in range(ya // tl, (yb - 1) // tl + 1):
            for tx in range(xa // tw, (xb - 1) // tw + 1):
                index = ty * tiles_across + tx
                fh.seek(page.dataoffsets[index])
                data = fh.read(page.databytecounts[index])
                tile = page.decode(data, index)[0]
                tile = self._to_rgb(np.asarray(tile).reshape(tl, tw, -1))
                # intersection of this tile with the requested window, in page coordinates
                px0, py0 = tx * tw, ty * tl
                ix0, iy0 = max(px0, xa), max(py0, ya)
                ix1, iy1 = min(px0 + tw, xb), min(py0 + tl, yb)
                out[iy0 - y0 : iy1 - y0, ix0 - x0 : ix1 - x0] = tile[
                    iy0 - py0 : iy1 - py0, ix0 - px0 : ix1 - px0
                ]
        return out

    @staticmethod
    def _to_rgb(arr: np.ndarray) -> np.ndarray:
        arr = np.asarray(arr)
        if arr.ndim == 2:
            arr = arr[..., None]
        if arr.shape[-1] == 1:
            return np.repeat(arr, 3, axis=-1)
        return arr[..., :3]

    def read_level(self, level: int) -> np.ndarray:
        """The whole of one level as (H, W, 3) uint8 (use only for low-resolution levels)."""
        w, h = self.level_dimensions[level]
        return self.read_region((0, 0), level, (w, h))


def open_slide(path) -> SlideReader:
    """Open a whole-slide image (see :class:`SlideReader`)."""
    return SlideReader(path)


def read_wsi_region(path, level: int, location=(0, 0), size=None) -> np.ndarray:
    """Read a region of a slide at ``level`` (whole level if ``size`` is None) as (h, w, 3) uint8."""
    with SlideReader(path) as slide:
        if size is None:
            return slide.read_level(level)
        return slide.read_region(location, level, size)


#: ASAP annotation groups holding tumour polygons in CAMELYON16 (``_0``, ``_1``; "Tumor" in some files).
ASAP_TUMOUR_GROUPS = ("_0", "_1", "Tumor", "metastases")
#: ASAP groups marking non-tumour regions inside tumour polygons (CAMELYON16 ``_2``).
ASAP_EXCLUSION_GROUPS = ("_2", "Exclusion")


@dataclass
class AsapPolygon:
    """One ASAP annotation: ``name``, ``group`` (PartOfGroup), ``type`` and ``coords`` (K, 2) level-0 (x, y)."""

    name: str
    group: str
    type: str
    coords: np.ndarray


def read_asap_annotations(path) -> list[AsapPolygon]:
    """Parse an ASAP XML file (``ASAP_Annotations/Annotations/Annotation/Coordinates/Coordinate X, Y``).

    Coordinates are sorted by their ``Order`` attribute; decimal commas are accepted. Raises ValueError
    naming the file for malformed XML or annotations with fewer than 3 coordinates.
    """
    p = _existing_file(path, "ASAP annotation file")
    try:
        root = ET.parse(p).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"{p}: not valid XML ({exc})") from exc
    out = []
    for ann in root.iter("Annotation"):
        pts = []
        for c in ann.iter("Coordinate"):
            try:
                order = int(c.get("Order", len(pts)))
                x = float(c.get("X").replace(",", "."))
                y = float(c.get("Y").replace(",", "."))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{p}: bad Coordinate attributes {c.attrib}") from exc
            pts.append((order, x, y))
        if len(pts) < 3:
            raise ValueError(f"{p}: annotation {ann.get('Name')!r} has {len(pts)} coordinates (need >= 3)")
        pts.sort(key=lambda t: t[0])
        out.append(
            AsapPolygon(
                name=ann.get("Name", ""),
                group=ann.get("PartOfGroup", ""),
                type=ann.get("Type", "Polygon"),
                coords=np.array([(x, y) for _, x, y in pts], dtype=np.float64),
            )
        )
    return out


def _fill_polygon(mask: np.ndarray, xy: np.ndarray, value: int) -> None:
    """Set ``mask`` pixels whose centre (c + 0.5, r + 0.5) lies inside polygon ``xy`` (even-odd rule)."""
    h, w = mask.shape
    x1, y1 = xy[:, 0], xy[:, 1]
    r0 = max(int(np.floor(y1.min() - 0.5)), 0)
    r1 = min(int(np.ceil(y1.max() - 0.5)), h - 1)
    if r0 > r1 or x1.max() < 0 or x1.min() > w:  # outside the mask (window rasterisation)
        return
    x2, y2 = np.roll(x1, -1), np.roll(y1, -1)
    for r in range(r0, r1 + 1):
        yc = r + 0.5
        crosses = ((y1 <= yc) & (yc < y2)) | ((y2 <= yc) & (yc < y1))
        if not crosses.any():
            continue
        xs = np.sort(
            x1[crosses] + (yc - y1[crosses]) * (x2[crosses] - x1[crosses]) / (y2[crosses] - y1[crosses])
        )
        for xa, xb in zip(xs[0::2], xs[1::2], strict=False):
            c0 = max(int(np.ceil(xa - 0.5)), 0)
            c1 = min(int(np.ceil(xb - 0.5)), w)  # exclusive
            if c1 > c0:
                mask[r, c0:c1] = value


def rasterize_asap_annotations(path_or_polygons, level_size, downsample: float, origin=(0, 0)) -> np.ndarray:
    """Rasterise tumour annotations to a (height, width) uint8 mask at one pyramid level.

    ``level_size`` = (width, height) of the level (``slide.level_dimensions[level]``) and
    ``downsample`` = its factor (``slide.level_downsamples[level]``); level-0 coordinates are divided
    by it. With ``origin`` = (x, y) in pixels of that level, the mask is the window whose top-left pixel
    is ``origin`` and whose size is ``level_size`` (window rasterisation of a large slide, band by band);
    a window equals the same crop of the whole-level mask. Tumour groups (:data:`ASAP_TUMOUR_GROUPS`) are filled with 1, then exclusion groups
    (:data:`ASAP_EXCLUSION_GROUPS`) are cleared to 0 (CAMELYON16 convention: ``_2`` marks non-tumour
    tissue inside a tumour outline). An unknown group raises ValueError (no silent guess).
    Pixel (r, c) is inside a polygon when its centre (c + 0.5, r + 0.5) is (even-odd rule, half-open
    edges), so a polygon with vertices on pixel edges covers exactly the pixels it encloses.
    """
    polys = (
        read_asap_annotations(path_or_polygons)
        if not isinstance(path_or_polygons, list)
        else path_or_polygons
    )
    width, height = (int(v) for v in level_size)
    if width <= 0 or height <= 0:
        raise ValueError(f"level_size must be positive (width, height), got {level_size}")
    if not downsample > 0:
        raise ValueError(f"downsample must be > 0, got {downsample}")
    unknown = sorted({p.group for p in polys} - set(ASAP_TUMOUR_GROUPS) - set(ASAP_EXCLUSION_GROUPS))
    if unknown:
        raise ValueError(
            f"annotation groups {unknown} are neither tumour {ASAP_TUMOUR_GROUPS} nor exclusion {ASAP_EXCLUSION_GROUPS}"
        )
    shift = np.asarray(origin, dtype=np.float64).reshape(1, 2)
    mask = np.zeros((height, width), dtype=np.uint8)
    for value, groups in ((1, ASAP_TUMOUR_GROUPS), (0, ASAP_EXCLUSION_GROUPS)):
        for p in polys:
            if p.group in groups:
                _fill_polygon(mask, np.asarray(p.coords, dtype=np.float64) / downsample - shift, value)
    return mask


# ==========================================================================================================
# CIFAR-10

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


class _CifarBatchUnpickler(pickle.Unpickler):
    """Unpickles only what a CIFAR-10 python batch holds: builtins (dict, list, bytes, int, str) and numpy arrays.

    Any other global a file names (``os.system``, a class of any package) is refused before it is looked up, so
    a file that is not a CIFAR-10 batch cannot run code when it is read."""

    ALLOWED = {
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),  # how pickle protocols < 3 store bytes (a pure function)
    }

    def find_class(self, module: str, name: str):
        if module == "numpy.core.multiarray":  # the batches were written by numpy 1 (numpy 2 moved the module)
            module = "numpy._core.multiarray"
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a CIFAR-10 batch")
        return super().find_class(module, name)


def read_cifar10_batch(path) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-10 python batch: images (N, 32, 32, 3) uint8 (HWC) and labels (N,) int64.

    The pickle holds a dict with ``b"data"`` (N, 3072) uint8, channel-major (1024 R, 1024 G, 1024 B,
    each row-major), and ``b"labels"`` (N ints in 0..9). It is read with an unpickler that admits only
    builtins and numpy arrays (a file naming any other global is refused without running it). ValueError
    naming the file otherwise.
    """
    p = _existing_file(path, "CIFAR-10 batch")
    with open(p, "rb") as fh:
        try:
            batch = _CifarBatchUnpickler(fh, encoding="bytes").load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
            raise _manifest.damaged_file_error(
                p,
                f"not a readable CIFAR-10 python batch ({exc})",
                remedy="`medeval data fetch cifar10 --force` downloads the batches again",
            ) from None
    if not isinstance(batch, dict) or b"data" not in batch or b"labels" not in batch:
        raise ValueError(f"{p}: not a CIFAR-10 python batch (need a dict with b'data' and b'labels')")
    data = np.asarray(batch[b"data"])
    labels = np.asarray(batch[b"labels"], dtype=np.int64)
    if data.ndim != 2 or data.shape[1] != 3072 or data.dtype != np.uint8 or len(labels) != len(data):
        raise ValueError(f"{p}: b'data' must be (N, 3072) uint8 with N labels, got {data.shape} {data.dtype}")
    if len(labels) and (labels.min() < 0 or labels.max() > 9):
        raise ValueError(f"{p}: labels must be in 0..9")
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy(), labels


def read_cifar10(root, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """All batches of a split: train = ``data_batch_1..5`` (50,000), test = ``test_batch`` (10,000).

    ``root`` is the ``cifar-10-batches-py`` folder or its parent.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root = _existing(root, "CIFAR-10 folder")
    if (root / "cifar-10-batches-py").is_dir():
        root = root / "cifar-10-batches-py"
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    parts = [read_cifar10_batch(root / n) for n in names]
    return np.concatenate([x for x, _ in parts]), np.concatenate([y for _, y in parts])


# ==========================================================================================================
# ADNI-like regional volumes

ADNI_DIAGNOSES = ("HC", "AD")


def read_regional_volumes(
    path, *, id_column: str = "subject_id", diagnosis_column: str = "diagnosis"
) -> pd.DataFrame:
    """A regional grey-matter volume table (the chapter-3 ADNI features), validated.

    Expected CSV: ``subject_id`` (unique), ``diagnosis`` (``HC`` or ``AD``), then one numeric column per
    brain region (grey-matter volume / intracranial volume; finite, >= 0). Returns the table with
    ``diagnosis`` as a categorical with categories (HC, AD) and region columns as float64.
    Raises ValueError naming the file and the problem: missing columns, duplicate ids, other diagnosis
    values (e.g. ADNI's "CN"/"MCI" must be mapped/excluded by the user), no region columns,
    non-numeric, missing or negative values.
    """
    p = _existing_file(path, "regional volume table")
    df = pd.read_csv(p)
    for col in (id_column, diagnosis_column):
        if col not in df.columns:
            raise ValueError(f"{p}: missing column {col!r} (columns: {list(df.columns)})")
    if df[id_column].duplicated().any():
        raise ValueError(
            f"{p}: duplicate {id_column} {df.loc[df[id_column].duplicated(), id_column].iloc[0]!r}"
        )
    diag = df[diagnosis_column].astype(str).str.strip()
    bad = ~diag.isin(ADNI_DIAGNOSES)
    if bad.any():
        raise ValueError(
            f"{p}: {diagnosis_column} must be one of {ADNI_DIAGNOSES}, got {sorted(diag[bad].unique())[:5]}"
        )
    regions = [c for c in df.columns if c not in (id_column, diagnosis_column)]
    if not regions:
        raise ValueError(f"{p}: no region columns after {id_column!r} and {diagnosis_column!r}")
    values = df[regions].apply(pd.to_numeric, errors="coerce")
    if values.isna().any().any():
        col = values.columns[values.isna().any()][0]
        raise ValueError(f"{p}: region column {col!r} has missing or non-numeric values")
    arr = values.to_numpy(dtype=np.float64)
    if not np.isfinite(arr).all() or (arr < 0).any():
        col = values.columns[(~np.isfinite(arr) | (arr < 0)).any(axis=0)][0]
        raise ValueError(f"{p}: region column {col!r} has negative or infinite values")
    out = pd.DataFrame(
        {id_column: df[id_column], diagnosis_column: pd.Categorical(diag, categories=list(ADNI_DIAGNOSES))}
    )
    return pd.concat([out, values.astype(np.float64)], axis=1)


def regional_volume_arrays(
    table: pd.DataFrame, *, id_column: str = "subject_id", diagnosis_column: str = "diagnosis"
) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) from :func:`read_regional_volumes`: X (n, d) float64 regions, y (n,) int (1 = AD, 0 = HC)."""
    regions = [c for c in table.columns if c not in (id_column, diagnosis_column)]
    y = (table[diagnosis_column].astype(str) == "AD").to_numpy(dtype=np.int64)
    return table[regions].to_numpy(dtype=np.float64), y
