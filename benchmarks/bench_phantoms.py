"""Phantom generation speed: 1,000 chest phantoms at 256 x 256 with masks against the 30 s budget.

Times, in one run:
  * ``generate_chest_phantoms(1000, 256)`` (all 14 findings, label sets from the real table) against the
    budget of 30 s on a 2-core CPU (the target of the data-layer issue);
  * the peer: a naive per-pixel Python loop that rasterises the same lesion (a compactly supported blob with
    its mask and tight box) on a few images, against the vectorised ``_blob`` + box code on the same
    regions, giving the speed-up of vectorisation for that step;
  * whole-slide phantoms: ``generate_slide(2048, 2048)`` and streaming its 384-px patches with stride 192.

Usage:  .venv/bin/python benchmarks/bench_phantoms.py [--n 1000] [--size 256] [--out benchmarks/results/phantoms.md]
"""

from __future__ import annotations

import argparse
import time

import _report
import numpy as np

from medeval.data.phantoms import chest
from medeval.data.phantoms.slide import generate_slide, iter_slide_patches

BUDGET_S = 30.0


def _naive_blob(size, region):
    """Per-pixel loop: the mask, profile and tight box of an ellipse blob (the peer)."""
    cx, cy, w, h = region
    ax, ay = max(w / 2, 0.75 / size), max(h / 2, 0.75 / size)
    mask = [[False] * size for _ in range(size)]
    prof = [[0.0] * size for _ in range(size)]
    x0 = y0 = size
    x1 = y1 = -1
    for r in range(size):
        v = (r + 0.5) / size
        for c in range(size):
            u = (c + 0.5) / size
            q = ((u - cx) / ax) ** 2 + ((v - cy) / ay) ** 2
            if q < 1:
                mask[r][c] = True
                prof[r][c] = (1 - q) ** 0.5
                x0, x1, y0, y1 = min(x0, c), max(x1, c), min(y0, r), max(y1, r)
    return mask, prof, (x0, y0, x1 - x0 + 1, y1 - y0 + 1)


def _vector_blob(size, region):
    u, v = chest._grids(size, size)
    cv = chest._Canvas(size, size, u, v, np.random.default_rng(0), 1.0, 1.0)
    mask, prof = chest._blob(cv, region)
    return mask, prof, chest._tight_box(mask)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--out", default="benchmarks/results/phantoms.md")
    args = ap.parse_args(argv)

    chest.generate_chest_phantoms(2, args.size, seed=0)  # load the real tables once (cached)
    t0 = time.perf_counter()
    batch = chest.generate_chest_phantoms(args.n, args.size, seed=0)
    t_chest = time.perf_counter() - t0
    n_lesions = len(batch.boxes)

    regions = [(0.3, 0.4, 0.2, 0.15), (0.7, 0.6, 0.1, 0.1), (0.5, 0.5, 0.4, 0.3)]
    t0 = time.perf_counter()
    naive = [_naive_blob(args.size, r) for r in regions]
    t_naive = (time.perf_counter() - t0) / len(regions)
    t0 = time.perf_counter()
    reps = 50
    for _ in range(reps):
        vec = [_vector_blob(args.size, r) for r in regions]
    t_vec = (time.perf_counter() - t0) / (reps * len(regions))
    for (m1, _, b1), (m2, _, b2) in zip(naive, vec, strict=True):
        assert np.array_equal(np.array(m1), m2) and tuple(b1) == tuple(b2), "naive and vectorised blobs differ"

    t0 = time.perf_counter()
    slide = generate_slide(2048, 2048, seed=0)
    t_slide = time.perf_counter() - t0
    t0 = time.perf_counter()
    n_patches = sum(1 for _ in iter_slide_patches(2048, 2048, 384, 192, seed=0))
    t_stream = time.perf_counter() - t0

    machine = _report.machine()
    lines = [
        "# Phantom generation speed",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_phantoms.py --n {args.n} --size {args.size}`  ",
        f"Machine: {machine} (the shared 2-core development CPU; other jobs may run at the same time).",
        "",
        "| what | time | reference | ratio |",
        "| --- | --- | --- | --- |",
        f"| {args.n} chest phantoms at {args.size} px with masks and boxes ({n_lesions} lesions) | "
        f"{t_chest:.2f} s ({1000 * t_chest / max(args.n, 1):.1f} ms/image) | budget {BUDGET_S:.0f} s | "
        f"{t_chest / BUDGET_S:.2f} of the budget |",
        f"| one lesion blob + mask + tight box at {args.size} px, vectorised vs per-pixel Python loop | "
        f"{1000 * t_vec:.2f} ms | {1000 * t_naive:.1f} ms (loop) | {t_naive / t_vec:.0f}x faster |",
        f"| whole-slide phantom 2048 x 2048 (image + mask) | {t_slide:.2f} s | - | - |",
        f"| streaming its {n_patches} patches of 384 px, stride 192 | {t_stream:.2f} s | "
        f"whole slide {t_slide:.2f} s | {t_stream / t_slide:.2f} |",
        "",
        f"Slide class fractions: {', '.join(f'{k} {v:.3f}' for k, v in slide.class_fractions.items())}.",
        f"Load average (1, 5, 15 min) at the end of the run: {_report.load_average()} "
        "on 2 cores: other engineers' jobs shared the CPU, so the times are upper bounds.",
        "The per-pixel loop is the peer for one rendering step only (the loop version of a whole phantom",
        "was not written); the headline comparison is the wall time against the 30 s budget.",
    ]
    _report.write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
