"""Phantom data sets in the formats of the real ones, so the ``full`` profiles run (and are tested) offline.

* :func:`write_camelyon16_like`: CAMELYON16 test slides (pyramidal TIFF + ASAP XML) from slide phantoms;
* :func:`write_pcam_like`: PatchCamelyon HDF5 splits cut from slide phantoms (96 px, central-32 label rule);
* :func:`write_cifar10_like`: CIFAR-10 python batches of class-dependent random textures;
* :func:`write_chestxray14_like`: a ChestX-ray14 ``images/`` folder of chest phantoms named after real table rows
  with the same label set (so the shipped label table joins with them).

None of these is a stand-in for a result: they exercise the real readers and code paths end to end.

CAMELYON16 is ~700 GB and cannot be fetched automatically. :func:`write_camelyon16_like` writes slide phantoms
(:func:`medeval.data.phantoms.slide.generate_slide`) in the dataset's own layout so that the real pipeline
(:mod:`medeval.data.camelyon16`: reader, Otsu, patch grid, ASAP rasterisation, streaming inference) can be run
and tested end to end on a laptop::

    <root>/testing/images/test_001.tif ...          tiled pyramidal TIFF, levels 0 .. n_levels-1 (downsample 2^k)
    <root>/testing/lesion_annotations/test_001.xml  ASAP XML, group "_0"; only for slides with tumour

The tumour (C) pixels of the phantom mask become one rectangle polygon per horizontal run of C pixels, with
vertices on pixel edges, so the annotation rasterises back to the level-0 C mask exactly (pixel-centre rule),
and at level ``k`` to the level-0 mask sampled at ``(2^k r + 2^(k-1), 2^k c + 2^(k-1))``. The ¬C and O classes
both count as negative, as in CAMELYON16.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medeval.data.camelyon16_layout import write_reference
from medeval.data.phantoms.slide import SLIDE_CLASSES, generate_slide

__all__ = [
    "mask_runs_to_asap_xml",
    "write_camelyon16_like",
    "add_chestxray14_copies",
    "write_chestxray14_like",
    "write_cifar10_like",
    "write_pcam_like",
    "write_pyramidal_tiff",
]


def write_pyramidal_tiff(path, image: np.ndarray, n_levels: int = 4, tile: int = 128) -> list[tuple[int, int]]:
    """Write ``image`` (H, W, 3) uint8 as a tiled TIFF pyramid (one page per level, level k = image[::2^k, ::2^k]).

    Returns the (width, height) of every level. Both openslide (generic tiled TIFF) and the tifffile fallback of
    :class:`medeval.data.readers.SlideReader` read it.
    """
    import tifffile

    image = np.asarray(image)
    if image.ndim != 3 or image.shape[-1] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image must be (H, W, 3) uint8, got {image.shape} {image.dtype}")
    if n_levels < 1:
        raise ValueError(f"n_levels must be >= 1, got {n_levels}")
    if tile % 16:
        raise ValueError(f"tile must be a multiple of 16 (TIFF), got {tile}")
    sizes = []
    with tifffile.TiffWriter(path) as tw:
        for k in range(n_levels):
            level = np.ascontiguousarray(image[:: 2**k, :: 2**k])
            if min(level.shape[:2]) < 1:
                raise ValueError(f"n_levels={n_levels} is too many for an image of {image.shape[:2]}")
            tw.write(level, tile=(tile, tile), photometric="rgb", compression="zlib",
                     subfiletype=1 if k else 0, metadata=None)
            sizes.append((level.shape[1], level.shape[0]))
    return sizes


def mask_runs_to_asap_xml(mask: np.ndarray, group: str = "_0") -> str:
    """ASAP XML with one rectangle polygon per horizontal run of True pixels of ``mask`` (level-0 coordinates)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D, got shape {mask.shape}")
    lines = ['<?xml version="1.0"?>', "<ASAP_Annotations>", "  <Annotations>"]
    k = 0
    padded = np.pad(mask, ((0, 0), (1, 1)))
    edges = np.diff(padded.astype(np.int8), axis=1)
    for r in np.flatnonzero(mask.any(axis=1)):
        starts = np.flatnonzero(edges[r] == 1)
        stops = np.flatnonzero(edges[r] == -1)
        for c0, c1 in zip(starts, stops, strict=True):
            corners = ((c0, r), (c1, r), (c1, r + 1), (c0, r + 1))
            coords = "".join(f'<Coordinate Order="{i}" X="{x}" Y="{y}" />' for i, (x, y) in enumerate(corners))
            lines.append(f'    <Annotation Name="Annotation {k}" Type="Polygon" PartOfGroup="{group}" '
                         f'Color="#F4FA58"><Coordinates>{coords}</Coordinates></Annotation>')
            k += 1
    lines += ["  </Annotations>", "  <AnnotationGroups>",
              f'    <Group Name="{group}" PartOfGroup="None" Color="#ff0000"><Attributes /></Group>',
              "  </AnnotationGroups>", "</ASAP_Annotations>", ""]
    return "\n".join(lines)


def write_camelyon16_like(root, n_slides: int = 3, height: int = 1024, width: int = 1536, *, seed: int = 0,
                          tumour_slides: int | None = None, n_levels: int = 4, tumour_fraction: float = 0.11
                          ) -> list[dict]:
    """Write ``n_slides`` phantom test slides in the CAMELYON16 layout under ``root`` (see the module docstring).

    The first ``tumour_slides`` slides (default: about 40 %, as 49 of the 129 real test slides, at least one)
    contain tumour and get an annotation file; the others are tumour-free and get none; ``testing/reference.csv``
    says which is which, as CAMELYON16's reference standard does. Slide ``i`` uses seed
    ``seed + i``. Returns, per slide, its name, paths and level-0 mask (uint8, 1 = tumour) for checking.
    """
    if n_slides < 1:
        raise ValueError(f"n_slides must be >= 1, got {n_slides}")
    if tumour_slides is None:
        tumour_slides = max(1, round(0.38 * n_slides))
    if not 0 <= tumour_slides <= n_slides:
        raise ValueError(f"tumour_slides must be in [0, n_slides={n_slides}], got {tumour_slides}")
    root = Path(root)
    images = root / "testing" / "images"
    notes = root / "testing" / "lesion_annotations"
    images.mkdir(parents=True, exist_ok=True)
    notes.mkdir(parents=True, exist_ok=True)
    c_value = SLIDE_CLASSES.index("C")
    out = []
    for i in range(n_slides):
        name = f"test_{i + 1:03d}"
        has_tumour = i < tumour_slides
        slide = generate_slide(height, width, seed=int(seed) + i, tumour_fraction=tumour_fraction if has_tumour else 0.0)
        tif = images / f"{name}.tif"
        write_pyramidal_tiff(tif, slide.image, n_levels=n_levels)
        tumour = (slide.mask == c_value).astype(np.uint8)
        xml = None
        if has_tumour and tumour.any():
            xml = notes / f"{name}.xml"
            xml.write_text(mask_runs_to_asap_xml(tumour))
        out.append({"slide": name, "path": tif, "annotation": xml, "tumour_mask": tumour})
    write_reference(root, {o["slide"]: o["annotation"] is not None for o in out})
    return out


def write_pcam_like(root, *, n_train: int = 64, n_valid: int = 16, n_test: int = 16, seed: int = 0) -> dict:
    """PatchCamelyon-format HDF5 splits under ``root`` (``camelyonpatch_level_2_split_{split}_{x,y}.h5``): 96 x 96
    patches cut at stride 32 from slide phantoms, labelled 1 when the central 32 x 32 region holds a C pixel,
    every split balanced 1:1 like PCam's. Sizes are rounded down to even numbers; returns the label counts."""
    import h5py

    want = {"train": n_train // 2, "valid": n_valid // 2, "test": n_test // 2}
    if min(want.values()) < 1:
        raise ValueError(f"each split needs >= 2 patches, got n_train={n_train}, n_valid={n_valid}, n_test={n_test}")
    need = sum(want.values())
    imgs, labels = [], []
    slide_seed = int(seed)
    while min(sum(labels), len(labels) - sum(labels)) < need:
        slide = generate_slide(576, 768, seed=slide_seed)
        slide_seed += 1
        for r in range(0, 576 - 96 + 1, 32):
            for c in range(0, 768 - 96 + 1, 32):
                imgs.append(slide.image[r : r + 96, c : c + 96])
                labels.append(bool((slide.mask[r + 32 : r + 64, c + 32 : c + 64] == SLIDE_CLASSES.index("C")).any()))
        if slide_seed - int(seed) > 200:
            raise RuntimeError("could not cut enough positive patches from slide phantoms")
    imgs, labels = np.stack(imgs), np.asarray(labels)
    rng = np.random.default_rng(seed)
    pos, neg = rng.permutation(np.flatnonzero(labels)), rng.permutation(np.flatnonzero(~labels))
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    start, counts = 0, {}
    for split, k in want.items():
        idx = rng.permutation(np.r_[pos[start : start + k], neg[start : start + k]])
        start += k
        stem = root / f"camelyonpatch_level_2_split_{split}"
        with h5py.File(f"{stem}_x.h5", "w") as f:
            f.create_dataset("x", data=imgs[idx], chunks=(1, 96, 96, 3))
        with h5py.File(f"{stem}_y.h5", "w") as f:
            f.create_dataset("y", data=labels[idx].astype(np.uint8).reshape(-1, 1, 1, 1))
        counts[split] = {"positive": k, "negative": k}
    return counts


def write_cifar10_like(root, *, n_train_per_class: int = 50, n_test_per_class: int = 10, seed: int = 0) -> Path:
    """CIFAR-10-format python batches under ``root/cifar-10-batches-py`` (five train batches, one test batch,
    ``batches.meta``) plus the data layer's presence marker ``cifar-10-python.tar.gz.unpacked``. Each class is a
    noisy colour/texture pattern of its own, so a classifier can learn it. Returns the batches folder."""
    import pickle

    from medeval.data.readers import CIFAR10_CLASSES

    if n_train_per_class < 1 or n_test_per_class < 1:
        raise ValueError("n_train_per_class and n_test_per_class must be >= 1")
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:32, 0:32]

    def images(labels):
        out = np.empty((labels.size, 32, 32, 3), np.float64)
        for k in range(10):
            sel = labels == k
            base = np.stack([128 + 90 * np.sin((xx * (k + 1) + yy * (10 - k)) / 9.0 + ch) for ch in range(3)], -1)
            out[sel] = base + rng.normal(0, 40, (int(sel.sum()), 32, 32, 3))
        return np.clip(out, 0, 255).astype(np.uint8)

    folder = Path(root) / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    train_labels = rng.permutation(np.repeat(np.arange(10), n_train_per_class))
    test_labels = rng.permutation(np.repeat(np.arange(10), n_test_per_class))
    parts = np.array_split(np.arange(train_labels.size), 5)
    batches = [(f"data_batch_{i + 1}", train_labels[p]) for i, p in enumerate(parts)] + [("test_batch", test_labels)]
    for name, labels in batches:
        data = images(labels).transpose(0, 3, 1, 2).reshape(labels.size, 3072)
        with open(folder / name, "wb") as fh:
            pickle.dump({b"data": data, b"labels": labels.tolist(), b"batch_label": name.encode()}, fh)
    with open(folder / "batches.meta", "wb") as fh:
        pickle.dump({b"label_names": [c.encode() for c in CIFAR10_CLASSES]}, fh)
    (Path(root) / "cifar-10-python.tar.gz.unpacked").write_text("phantom CIFAR-10 written by write_cifar10_like\n")
    return folder


def write_chestxray14_like(root, n_images: int = 40, image_size: int = 128, *, seed: int = 0,
                           boxed_images: int = 0) -> list[str]:
    """A ChestX-ray14-layout folder ``root/images/<Image Index>.png`` (8-bit grey PNGs) plus the data layer's
    twelve ``images_0NN.tar.gz.unpacked`` presence markers.

    Each of the ``n_images`` chest phantoms (:func:`medeval.data.phantoms.chest.generate_chest_phantoms`) is saved
    under the Image Index of an unused row of the shipped label table with exactly the phantom's label set, so the
    table's labels describe the pixels. ``boxed_images`` more phantoms are saved under the first Image Indexes of
    the NIH box list (for detection code paths; their pixels do not match those boxes). Returns the names written.
    """
    from PIL import Image

    from medeval.data import manifest
    from medeval.data.chestxray14 import LABELS, load_boxes, load_labels
    from medeval.data.phantoms.chest import generate_chest_phantoms

    if n_images < 0 or boxed_images < 0 or n_images + boxed_images < 1:
        raise ValueError(f"need n_images + boxed_images >= 1, got {n_images} + {boxed_images}")
    table = load_labels()
    folder = Path(root) / "images"
    folder.mkdir(parents=True, exist_ok=True)
    phantoms = generate_chest_phantoms(n_images + boxed_images, image_size, seed=seed)
    rng = np.random.default_rng(seed)
    keys = table[list(LABELS)].to_numpy(dtype=np.uint8) @ (1 << np.arange(len(LABELS), dtype=np.int64))
    used: set[str] = set()
    boxed = list(dict.fromkeys(load_boxes()["image_index"]))[:boxed_images]
    names = []
    for i in range(n_images + boxed_images):
        if i < n_images:
            key = int(phantoms.labels[i].astype(np.int64) @ (1 << np.arange(len(LABELS), dtype=np.int64)))
            candidates = [n for n in table["image_index"].to_numpy()[keys == key] if n not in used]
            if not candidates:
                raise RuntimeError(f"no unused table row has the label set of phantom {i}")
            name = str(candidates[int(rng.integers(len(candidates)))])
        else:
            name = str(boxed[i - n_images])
        used.add(name)
        Image.fromarray(np.rint(phantoms.images[i] * 255).astype(np.uint8), mode="L").save(folder / name)
        names.append(name)
    entry = manifest.get_dataset("chestxray14-images")
    for f in entry.files:
        (Path(root) / (f.path + ".unpacked")).write_text("phantom images written by write_chestxray14_like\n")
    return names


def add_chestxray14_copies(image_dir, per_finding: int, followups: int) -> list[str]:
    """Add copies of one PNG of ``image_dir`` (a :func:`write_chestxray14_like` folder) named after (a) the first
    ``per_finding`` boxed images of each of the 8 boxed findings (the NIH box list is sorted by finding, so
    ``boxed_images`` alone covers Atelectasis only) and (b) up to 2 unboxed follow-up images of ``followups``
    boxed and ``followups`` unboxed patients already present (patients with several images, for patient-level
    splits). Existing files are kept; returns the names added. Their pixels do not match their labels or boxes.
    """
    import shutil

    from medeval.data.chestxray14 import load_boxes, load_labels, patient_id_of

    image_dir = Path(image_dir)
    template = next(image_dir.glob("*.png"), None)
    if template is None:
        raise FileNotFoundError(f"{image_dir} holds no PNG to copy (write_chestxray14_like first)")
    boxes, labels = load_boxes(), load_labels()
    boxed = set(boxes["image_index"])
    present = sorted(p.name for p in image_dir.glob("*.png"))
    names = [n for _, g in boxes.groupby("finding", sort=False) for n in list(dict.fromkeys(g["image_index"]))[:per_finding]]
    for group in ([n for n in present if n in boxed], [n for n in present if n not in boxed]):
        for name in group[:followups]:
            same = labels["image_index"][labels["patient_id"] == patient_id_of(name)[0]]
            names += [n for n in same if n not in boxed and n not in present][:2]
    names = [n for n in dict.fromkeys(names) if not (image_dir / n).exists()]
    for name in names:
        shutil.copyfile(template, image_dir / name)
    return names
