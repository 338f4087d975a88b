"""The appendix page "Data": the manifest, the phantoms, and how closely the phantoms follow the real tables.

Pure functions of the page's parameters returning tidy DataFrames (the notebook only shows and plots them):

* :func:`manifest_table` - every dataset of ``data_manifest.yaml``: id, title, access, licence, size, stand-in.
* :func:`local_status_table` - which datasets are present on this machine (``full`` profile only: it hashes
  the files).
* :func:`label_comparison` - label frequencies, labels-per-image histogram and co-occurrences of the real
  ChestX-ray14 label table next to ``n_label_samples`` phantom label sets, with summary numbers.
* :func:`box_comparison` - box centre and size per class (normalised to the image side) of the NIH box list
  next to the boxes of rendered phantoms.
* :func:`finding_gallery` / :func:`slide_example` - one phantom per finding, one slide phantom.
* :func:`stand_in_checks` - the page's checks that the stand-ins follow the real data (checks, not claims: the
  page reproduces no paper).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from medeval.core.claims import Check
from medeval.data import manifest as _manifest
from medeval.data.chestxray14 import IMAGE_SIZE, LABELS, load_boxes, load_labels
from medeval.data.phantoms.chest import (
    NIH_BOX_FINDINGS,
    generate_chest_phantoms,
    label_statistics,
    sample_label_sets,
)
from medeval.data.phantoms.slide import generate_slide
from medeval.experiments.data_appendix_params import Params

__all__ = [
    "Params",
    "box_comparison",
    "finding_gallery",
    "label_comparison",
    "local_status_table",
    "manifest_table",
    "slide_example",
    "stand_in_checks",
    "MAX_ABS_Z",
    "MIN_COOCCURRENCE_R",
    "MAX_CENTRE_DIFFERENCE",
    "MLNTO_O_RANGE",
]

#: Largest ``|z|`` (phantom minus real prevalence, in binomial standard errors of the phantom estimate) over the 14
#: findings that we accept: 14 ``|z|`` values of independent draws exceed 5 with probability below 1e-5.
MAX_ABS_Z = 5.0
#: Smallest Pearson r between the 91 real and phantom pairwise co-occurrence frequencies that we accept.
MIN_COOCCURRENCE_R = 0.9
#: Largest ``|phantom − NIH|`` per-class mean box centre (fraction of the image side) that we accept.
MAX_CENTRE_DIFFERENCE = 0.08
#: Range of the O (background) fraction accepted for the slide phantom: MLNTO's 78.3 % (train) / 79.4 % (test)
#: of thesis Table 2.2, ±0.08 for the variation of a single slide.
MLNTO_O_RANGE = (0.70, 0.86)


def _human_size(n_bytes: float | None) -> str:
    if n_bytes is None or not np.isfinite(n_bytes):
        return "unknown"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n_bytes < 1000 or unit == "TB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1000
    return "unknown"  # pragma: no cover


def manifest_table() -> pd.DataFrame:
    """One row per dataset of the manifest: id, title, access, licence, size, stand-in, used by.

    ``size`` is the sum of the file sizes the manifest records ("unknown" when some are not recorded, with
    the known part shown as a lower bound; "-" for bundled/private datasets without files). ``used_by`` is
    derived from the chapters' ``params/*.yaml`` (:func:`medeval.data.manifest.dataset_users`).
    """
    users = _manifest.dataset_users()
    rows = []
    for d in _manifest.load_manifest().datasets:
        sizes = [f.size for f in d.files]
        if not sizes:
            size = "-"
        elif all(s is not None for s in sizes):
            size = _human_size(float(sum(sizes)))
        else:
            known = sum(s for s in sizes if s is not None)
            size = f">= {_human_size(float(known))} (not all sizes recorded)" if known else "unknown"
        licence = " ".join(d.licence.split())
        rows.append({
            "id": d.id, "title": d.title, "access": d.access,
            "licence": licence,
            "size": size, "stand_in": " ".join(d.stand_in.split()), "used_by": ", ".join(users.get(d.id, [])),
        })
    return pd.DataFrame(rows)


def local_status_table() -> pd.DataFrame:
    """``medeval data verify --quick`` as a table: one row per checked file (dataset_id, path, status, detail).

    Sizes only, against the manifest and each dataset's content record: hashing every file of a fetched
    ChestX-ray14 (42 GB) or CAMELYON16 (~700 GB) would make the page take hours; ``medeval data verify`` hashes.
    """
    return pd.DataFrame(
        [{"dataset_id": s.dataset_id, "path": s.path, "status": s.status, "detail": s.detail}
         for s in _manifest.verify(quick=True)]
    )


def label_comparison(params: Params) -> dict[str, object]:
    r"""Real label table vs ``n_label_samples`` phantom label sets.

    .. math::

       z_f = \frac{\hat\pi_f - \pi_f}{\sqrt{\pi_f\,(1 - \pi_f)/n}}

    with :math:`\pi_f` the real prevalence of finding :math:`f`, :math:`\hat\pi_f` the phantom one and :math:`n`
    = ``n_label_samples``.

    Returns a dict: ``frequency`` (finding, real, phantom, abs_diff, z: :math:`z_f` above), ``labels_per_image``
    (n_labels, real, phantom), ``top_pairs`` (the ``top_pairs`` most frequent
    real co-occurring pairs with their phantom frequency), ``cooccurrence_real`` / ``cooccurrence_phantom``
    (14 x 14 P(both)), and the summary numbers ``max_abs_frequency_difference``, ``max_abs_z``,
    ``frequency_correlation`` (Pearson over the 14 findings), ``cooccurrence_correlation`` (Pearson over the
    91 pairs) and ``max_abs_labels_per_image_difference``.
    """
    real = load_labels()[list(LABELS)].to_numpy()
    ours = sample_label_sets(params.n_label_samples, seed=params.seed)
    rs, ps = label_statistics(real), label_statistics(ours)
    n = len(ours)
    p_real = rs["frequency"].to_numpy()
    se = np.sqrt(p_real * (1 - p_real) / n)
    freq = pd.DataFrame({
        "finding": list(LABELS), "real": p_real, "phantom": ps["frequency"].to_numpy(),
    })
    freq["abs_diff"] = (freq["phantom"] - freq["real"]).abs()
    freq["z"] = (freq["phantom"] - freq["real"]) / se
    k = max(len(rs["labels_per_image"]), len(ps["labels_per_image"]))
    per_image = pd.DataFrame({
        "n_labels": np.arange(k),
        "real": rs["labels_per_image"].reindex(range(k), fill_value=0.0).to_numpy(),
        "phantom": ps["labels_per_image"].reindex(range(k), fill_value=0.0).to_numpy(),
    })
    co_r, co_p = rs["cooccurrence"], ps["cooccurrence"]
    iu = np.triu_indices(len(LABELS), 1)
    pairs = pd.DataFrame({
        "pair": [f"{LABELS[i]} + {LABELS[j]}" for i, j in zip(*iu, strict=True)],
        "real": co_r.to_numpy()[iu], "phantom": co_p.to_numpy()[iu],
    }).sort_values("real", ascending=False, ignore_index=True)
    return {
        "frequency": freq,
        "labels_per_image": per_image,
        "top_pairs": pairs.head(params.top_pairs).reset_index(drop=True),
        "cooccurrence_real": co_r,
        "cooccurrence_phantom": co_p,
        "max_abs_frequency_difference": float(freq["abs_diff"].max()),
        "max_abs_z": float(np.abs(freq["z"]).max()),
        "frequency_correlation": float(np.corrcoef(freq["real"], freq["phantom"])[0, 1]),
        "cooccurrence_correlation": float(np.corrcoef(pairs["real"], pairs["phantom"])[0, 1]),
        "max_abs_labels_per_image_difference": float((per_image["real"] - per_image["phantom"]).abs().max()),
        "n_real": int(len(real)),
        "n_phantom": int(n),
    }


def _box_frame(frame: pd.DataFrame, side: float, source: str) -> pd.DataFrame:
    return pd.DataFrame({
        "source": source, "finding": frame["finding"].to_numpy(),
        "cx": ((frame["x"] + frame["w"] / 2) / side).to_numpy(float),
        "cy": ((frame["y"] + frame["h"] / 2) / side).to_numpy(float),
        "w": (frame["w"] / side).to_numpy(float), "h": (frame["h"] / side).to_numpy(float),
    })


def box_comparison(params: Params) -> dict[str, object]:
    """NIH boxes vs phantom boxes for the 8 findings with NIH boxes (coordinates as fractions of the side).

    For each finding, ``n_box_phantoms`` phantoms showing only that finding (``prevalence = 1``) are rendered
    at ``box_image_size``. Returns ``samples`` (long table: source, finding, cx, cy, w, h), ``summary`` (per
    finding and source: mean and SD of cx, cy, w, h) and ``max_abs_mean_centre_difference``,
    ``max_abs_median_log_size_ratio`` (``|log(phantom median / real median)|`` over w and h) and
    ``mean_centre_correlation`` (Pearson over the 16 per-class mean centre coordinates).
    """
    real = _box_frame(load_boxes(), IMAGE_SIZE, "real")
    parts = [real]
    for k, finding in enumerate(NIH_BOX_FINDINGS):
        p = generate_chest_phantoms(params.n_box_phantoms, params.box_image_size, seed=params.seed + 1000 * (k + 1),
                                    findings=[finding], prevalence={finding: 1.0})
        parts.append(_box_frame(p.boxes, params.box_image_size, "phantom"))
    samples = pd.concat(parts, ignore_index=True)
    summary = samples.groupby(["finding", "source"])[["cx", "cy", "w", "h"]].agg(["mean", "std"])
    means = samples.groupby(["finding", "source"])[["cx", "cy"]].mean().unstack("source")
    centre_diff = (means.xs("phantom", axis=1, level=1) - means.xs("real", axis=1, level=1)).abs()
    medians = samples.groupby(["finding", "source"])[["w", "h"]].median().unstack("source")
    log_ratio = np.log(medians.xs("phantom", axis=1, level=1) / medians.xs("real", axis=1, level=1)).abs()
    real_c = means.xs("real", axis=1, level=1).to_numpy().ravel()
    ours_c = means.xs("phantom", axis=1, level=1).to_numpy().ravel()
    return {
        "samples": samples,
        "summary": summary,
        "max_abs_mean_centre_difference": float(centre_diff.to_numpy().max()),
        "max_abs_median_log_size_ratio": float(log_ratio.to_numpy().max()),
        "mean_centre_correlation": float(np.corrcoef(real_c, ours_c)[0, 1]),
    }


def finding_gallery(params: Params):
    """One phantom per finding (that finding only): list of (finding, image, mask, box (x, y, w, h))."""
    out = []
    for k, finding in enumerate(LABELS):
        p = generate_chest_phantoms(1, params.gallery_image_size, seed=params.seed + k,
                                    findings=[finding], prevalence={finding: 1.0})
        b = p.boxes.iloc[0]
        out.append((finding, p.images[0], p.class_mask(finding)[0], (int(b.x), int(b.y), int(b.w), int(b.h))))
    return out


def slide_example(params: Params):
    """A ``slide_size`` x ``slide_size`` slide phantom with its class fractions."""
    return generate_slide(params.slide_size, params.slide_size, seed=params.seed)


def stand_in_checks(labels: dict, boxes: dict, slide_fractions: dict) -> list[Check]:
    """The page's four checks that the stand-ins follow the real data they replace (pass/fail, not claims).

    ``labels`` is :func:`label_comparison`'s result, ``boxes`` :func:`box_comparison`'s (only the summary numbers
    are read, so small dicts work), ``slide_fractions`` the slide phantom's class fractions (keys O, notC, C).
    """
    z, r_co = float(labels["max_abs_z"]), float(labels["cooccurrence_correlation"])
    centre = float(boxes["max_abs_mean_centre_difference"])
    o = float(slide_fractions["O"])
    n = labels.get("n_phantom")
    return [
        Check("phantom label prevalences follow the ChestX-ray14 label table",
              where=f"real table ({labels.get('n_real', 112120):,} images) vs {n:,} phantom label sets" if n else
              "real label table vs phantom label sets",
              expected=f"max |z| < {MAX_ABS_Z:g} over the 14 findings (binomial SE)",
              computed=f"max |z| {z:.2f}, max |diff| {float(labels['max_abs_frequency_difference']):.4f}",
              passed=bool(np.isfinite(z) and z < MAX_ABS_Z)),
        Check("phantom co-occurrences follow the label table", where="91 pairwise co-occurrence frequencies",
              expected=f"Pearson r > {MIN_COOCCURRENCE_R:g}", computed=f"r = {r_co:.3f}",
              passed=bool(np.isfinite(r_co) and r_co > MIN_COOCCURRENCE_R)),
        Check("phantom box centres follow the NIH box list", where="984 NIH boxes, 8 findings",
              expected=f"every per-class mean centre within {MAX_CENTRE_DIFFERENCE:g} of the image side",
              computed=f"max |mean diff| {centre:.3f}",
              passed=bool(np.isfinite(centre) and centre < MAX_CENTRE_DIFFERENCE)),
        Check("slide phantom has MLNTO's natural prior (about 78 % O)",
              where="thesis Table 2.2: 78.3 % O (train), 79.4 % (test)",
              expected=f"O fraction in [{MLNTO_O_RANGE[0]:.2f}, {MLNTO_O_RANGE[1]:.2f}]", computed=f"{100 * o:.1f} % O",
              passed=bool(MLNTO_O_RANGE[0] <= o <= MLNTO_O_RANGE[1])),
    ]
