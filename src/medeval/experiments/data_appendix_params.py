"""Parameters of the appendix page "Data" (:mod:`medeval.experiments.data_appendix`).

A light module: the standard library, pydantic and :mod:`medeval.core.schema` only, so that a parameter set is
validated, and its resource estimate computed, before numpy or a kernel load.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from medeval.core.schema import MIB, ChapterParams, ResourceEstimate

#: findings of the NIH box list (one batch of box phantoms each)
N_BOX_FINDINGS = 8
#: findings of the ChestX-ray14 label table (one gallery phantom each)
N_FINDINGS = 14
#: side of the tiles a slide phantom is rendered in (``medeval.data.phantoms.slide``)
SLIDE_TILE = 1024


class Params(ChapterParams):
    """Parameters of the Data appendix page."""

    n_label_samples: int = Field(20_000, ge=100, le=2_000_000,
                                 description="phantom label sets drawn to compare with the real label table")
    n_box_phantoms: int = Field(150, ge=5, le=20_000,
                                description="phantoms rendered per box class to compare with the NIH boxes")
    box_image_size: int = Field(128, ge=64, le=512, description="image side (px) of the box-comparison phantoms")
    gallery_image_size: int = Field(256, ge=64, le=512, description="image side (px) of the gallery phantoms")
    slide_size: int = Field(512, ge=64, le=8192, description="side (px) of the example slide phantom")
    top_pairs: int = Field(10, ge=1, le=91, description="co-occurring pairs of findings listed")
    check_local_data: bool = Field(False, description="hash the locally present datasets (slow for large ones)")

    # ---- resources, measured (VmHWM growth of one section at a scale where it dominates, and whole runs) -----
    #: the kernel after the page's imports (numpy, pandas, matplotlib, the shipped label and box tables; not torch,
    #: which the page does not use): 268 MiB of the smoke run's 282 MiB peak (RSS), the sections' terms the rest
    base_memory: ClassVar[int] = 270 * MIB
    #: one phantom label set while the label statistics are computed (the drawn rows, their stack, float64 copies)
    label_sample_bytes: ClassVar[int] = 370
    #: one rendered chest phantom pixel (float32 image, masks); two batches of box phantoms are alive at once
    phantom_pixel_bytes: ClassVar[int] = 6
    #: the slide phantom: its RGB image and mask (4 bytes a pixel), one tile's rendering buffers, and the figure of
    #: image and mask (matplotlib's float RGBA resampling of both)
    slide_pixel_bytes: ClassVar[int] = 4
    slide_tile_bytes: ClassVar[int] = 280
    slide_figure_pixel_bytes: ClassVar[int] = 58

    def resource_estimate(self) -> ResourceEstimate:
        tile = min(self.slide_size, SLIDE_TILE) ** 2
        pixels = self.slide_size**2
        sections = {
            "label sets": self.n_label_samples * self.label_sample_bytes,
            "box phantoms": 2 * self.n_box_phantoms * self.box_image_size**2 * self.phantom_pixel_bytes,
            "slide": pixels * self.slide_pixel_bytes
            + max(tile * self.slide_tile_bytes, pixels * self.slide_figure_pixel_bytes),
        }
        kept = {"gallery": N_FINDINGS * self.gallery_image_size**2 * (self.phantom_pixel_bytes + 4)}
        # the sections run one after another: the peak is the largest one on top of the kernel
        drivers_of = {"label sets": ("n_label_samples",), "box phantoms": ("n_box_phantoms", "box_image_size"),
                      "slide": ("slide_size",)}
        largest = max(sections.values())
        drivers = {f: getattr(self, f) for name, v in sections.items() if v >= largest / 2 and v > 64 * MIB
                   for f in drivers_of[name]}
        seconds = (4.4 + 11e-6 * self.n_label_samples  # start-up and imports: 4.4 s of the smoke run's 4.6 s
                   + 1.0e-7 * N_BOX_FINDINGS * self.n_box_phantoms * self.box_image_size**2
                   + 3.8e-7 * pixels + 1.0e-7 * N_FINDINGS * self.gallery_image_size**2)
        return ResourceEstimate(peak_bytes=self.base_memory + largest + sum(kept.values()), seconds=seconds,
                                drivers=drivers, terms={"kernel": self.base_memory, **sections, **kept})
