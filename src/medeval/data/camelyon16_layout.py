"""The CAMELYON16 test-set layout, checked for completeness without reading a slide (stdlib only, so that the
chapters' pre-flight check is fast and imports nothing heavy).

Layout under the dataset folder (``$MEDEVAL_DATA/camelyon16``)::

    testing/images/test_NNN.tif               the test slides
    testing/lesion_annotations/test_NNN.xml   ASAP XML tumour polygons, one per tumour slide
    testing/reference.csv                     the reference standard, one row per slide: test_NNN,Tumor,... or
                                              test_NNN,Normal,... (no header), distributed with the slides

The reference standard is what tells a tumour-free slide (no XML, by design) from a tumour slide whose XML is
missing: without it a missing XML would silently turn a tumour slide into an all-negative one. So a test set is
*complete* for a selection of slides when the three parts are present, every selected slide of the reference has
its image, every tumour slide its XML, no image is missing from the reference, and no normal slide has an XML.
:func:`test_set_layout` lists every way a folder falls short, naming the slides and files;
:class:`IncompleteTestSetError` carries that list. ``test_114``, which the challenge withdrew, may be absent.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WITHDRAWN", "IncompleteTestSetError", "TestSetLayout", "read_reference", "test_set_layout",
           "write_reference"]

#: Test slides the challenge withdrew (the manifest: test_001 ... test_130 without test_114); absent is fine.
WITHDRAWN = frozenset({"test_114"})
_CLASSES = {"tumor": True, "tumour": True, "normal": False}


class IncompleteTestSetError(FileNotFoundError):
    """The CAMELYON16 test set is missing slides, annotation files or its reference standard; the message names
    each missing slide and file."""

    def __init__(self, problems):
        self.problems = tuple(problems)
        super().__init__("CAMELYON16 test set incomplete:\n" + "\n".join(f"  {p}" for p in self.problems))


def _names(items) -> str:
    return ", ".join(sorted(items))


def read_reference(path) -> dict[str, bool]:
    """``testing/reference.csv`` as ``{slide: has tumour}`` (first column the slide, e.g. ``test_001`` or
    ``Test_001.tif``; second column ``Tumor`` or ``Normal``; a header row is skipped)."""
    out: dict[str, bool] = {}
    with open(path, newline="") as fh:
        for k, row in enumerate(csv.reader(fh)):
            if not row or not row[0].strip():
                continue
            cls = row[1].strip().lower() if len(row) > 1 else ""
            if cls not in _CLASSES:
                if k == 0:  # a header
                    continue
                raise ValueError(f"{path}, line {k + 1}: expected 'test_NNN,Tumor|Normal,...', got {','.join(row)!r}")
            out[Path(row[0].strip()).stem.lower()] = _CLASSES[cls]
    return out


def write_reference(root, tumour) -> Path:
    """Write ``testing/reference.csv`` under ``root`` in CAMELYON16's format from ``{slide: has tumour}`` (e.g. for
    a stand-in test set written by :func:`medeval.data.phantoms.formats.write_camelyon16_like`: a slide has tumour
    when it got an annotation file). Returns the file."""
    path = Path(root) / "testing" / "reference.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{name},{'Tumor' if has else 'Normal'}\n" for name, has in sorted(tumour.items())))
    return path


@dataclass(frozen=True)
class TestSetLayout:
    """What a CAMELYON16 folder holds for the selected slides: ``slides`` (name -> image), ``annotations``
    (name -> XML), ``reference`` (name -> has tumour; None without ``reference.csv``) and ``problems`` (empty when
    the selection is complete)."""

    __test__ = False  # not a pytest test class

    root: Path
    slides: dict[str, Path]
    annotations: dict[str, Path]
    reference: dict[str, bool] | None
    problems: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return not self.problems

    def raise_if_incomplete(self) -> TestSetLayout:
        if self.problems:
            raise IncompleteTestSetError(self.problems)
        return self


def test_set_layout(root, slides=None) -> TestSetLayout:
    """Check the CAMELYON16 test set under ``root`` for the slides named in ``slides`` (None = every slide of the
    reference standard and of ``testing/images``). Never raises for missing files: they are listed in
    ``problems``, each naming the slides or files concerned."""
    root = Path(root)
    images, notes, ref_path = (root / "testing" / "images", root / "testing" / "lesion_annotations",
                               root / "testing" / "reference.csv")
    problems: list[str] = []
    present = ({p.stem.lower(): p for p in images.iterdir() if p.is_file() and p.suffix.lower() in (".tif", ".tiff")}
               if images.is_dir() else {})
    xmls = ({p.stem.lower(): p for p in notes.iterdir() if p.is_file() and p.suffix.lower() == ".xml"}
            if notes.is_dir() else {})
    reference = None
    if ref_path.is_file():
        try:
            reference = read_reference(ref_path)
        except (ValueError, OSError) as exc:
            problems.append(f"the reference standard cannot be read: {exc}")
    if not images.is_dir():
        problems.append(f"the slide folder {images} is missing (expected test_001.tif ... test_130.tif)")
    elif not present:
        problems.append(f"the slide folder {images} holds no .tif slide (expected test_001.tif ... test_130.tif)")
    if not notes.is_dir():
        problems.append(f"the annotation folder {notes} is missing: the tumour slides' ASAP XMLs (test_NNN.xml) are "
                        "needed, without them every tumour slide would be scored tumour-free")
    if not ref_path.is_file():
        problems.append(f"the reference standard {ref_path} is missing: it says which test slides hold tumour, so "
                        "that a tumour slide whose XML is missing is refused instead of scored tumour-free; copy "
                        "testing/reference.csv from the CAMELYON16 distribution")
    known = set(present) | set(reference or {})
    if slides is None:
        selected = known - (WITHDRAWN - set(present))
    else:
        selected = {str(s).lower() for s in slides}
        unknown = selected - known
        if unknown and present:
            problems.append(f"slides asked for but neither in {images} nor in the reference standard: "
                            f"{_names(unknown)}")
            selected -= unknown
    if reference is not None:
        missing = {s for s in selected if s in reference and s not in present and s not in WITHDRAWN}
        if missing:
            listed = sum(1 for s in selected if s in reference)
            problems.append(f"{len(missing)} of the {listed} selected test slides of the reference standard are "
                            f"missing from {images}: {_names(missing)}")
        tumour_without_xml = {s for s in selected if reference.get(s) and s in present and s not in xmls}
        if tumour_without_xml and notes.is_dir():
            problems.append(f"{len(tumour_without_xml)} tumour slides (reference standard: Tumor) have no annotation "
                            f"XML in {notes}: {_names(f'{s}.xml' for s in tumour_without_xml)}")
        unlisted = {s for s in selected if s in present and s not in reference}
        if unlisted:
            problems.append(f"slides not in the reference standard {ref_path.name} (tumour or not is unknown): "
                            f"{_names(unlisted)}")
        normal_with_xml = {s for s in selected if reference.get(s) is False and s in xmls}
        if normal_with_xml:
            problems.append(f"slides listed as Normal in {ref_path.name} have an annotation XML (which is right?): "
                            f"{_names(normal_with_xml)}")
    orphans = {s for s in xmls if s not in present and s not in (reference or {})} if slides is None else set()
    if orphans and present:
        problems.append(f"annotation XMLs without their slide in {images}: {_names(f'{s}.xml' for s in orphans)}")
    return TestSetLayout(root=root, slides={s: p for s, p in sorted(present.items()) if s in selected},
                         annotations={s: p for s, p in sorted(xmls.items()) if s in selected},
                         reference=reference, problems=tuple(problems))
