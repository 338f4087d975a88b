"""Benchmark: medeval's RoDeO against the reference implementation (rodeometric 0.0.1) on the same inputs.

10,000 images × 8 classes, targets with 0-3 boxes per image, predictions = targets with position and size
noise, 30% class flips, 20% drops and 0-2 random extra boxes (so the matching has work to do). Both
implementations get identical per-image (M, 5) arrays (top-left xywh + class id). rodeometric runs with the
compatibility patch for scikit-learn >= 1.7 (its matthews_corrcoef on empty inputs). Values are compared key by key (global and per
class), then each is timed (best of ``--repeats``) and the speed ratio printed.

    .venv/bin/python benchmarks/bench_rodeo.py [--images 10000] [--repeats 3] [--out benchmarks/results/rodeo.md]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine as cpu_machine  # noqa: E402


def make_dataset(n_images: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    preds, targets = [], []
    for _ in range(n_images):
        nt = int(rng.integers(0, 4))
        t = np.column_stack(
            [rng.uniform(0, 0.8, (nt, 2)), rng.uniform(0.02, 0.3, (nt, 2)), rng.integers(0, k, nt)]
        )
        p = t.copy()
        p[:, :2] += rng.normal(0, 0.05, (nt, 2))
        p[:, 2:4] *= np.exp(rng.normal(0, 0.3, (nt, 2)))
        flip = rng.random(nt) < 0.3
        p[flip, 4] = rng.integers(0, k, int(flip.sum()))
        p = p[rng.random(nt) > 0.2]
        ne = int(rng.integers(0, 3))
        e = np.column_stack(
            [rng.uniform(0, 0.8, (ne, 2)), rng.uniform(0.02, 0.3, (ne, 2)), rng.integers(0, k, ne)]
        )
        preds.append(np.concatenate([p, e]).reshape(-1, 5))
        targets.append(t.reshape(-1, 5))
    return preds, targets


def patched_oracle():
    import rodeo.rodeo as rr
    import sklearn.metrics
    from rodeo import RoDeO

    def mcc_compat(y_true, y_pred, **kw):
        if len(y_true) == 0:
            return np.float64(0.0)
        return np.float64(sklearn.metrics.matthews_corrcoef(y_true, y_pred, **kw))

    rr.matthews_corrcoef = mcc_compat
    return RoDeO


def best_time(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=10_000)
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="write a markdown report here")
    args = ap.parse_args(argv)

    from medeval.metrics.detection import ImageBoxes, robust_detection_outcome

    RoDeO = patched_oracle()
    names = [f"class{i}" for i in range(args.classes)]
    preds, targets = make_dataset(args.images, args.classes)
    n_boxes = (sum(len(p) for p in preds), sum(len(t) for t in targets))

    lines = []
    for per_class in (False, True):

        def oracle(per_class=per_class):
            m = RoDeO(class_names=names, return_per_class=per_class)
            m.add(preds, targets)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return m.compute()

        def ours_lists(per_class=per_class):
            return robust_detection_outcome(
                preds, targets, box_format="xywh", class_names=names, per_class=per_class
            )

        p_flat = ImageBoxes.from_per_image(preds, box_format="xywh")
        t_flat = ImageBoxes.from_per_image(targets, box_format="xywh")

        def ours_flat(per_class=per_class, p_flat=p_flat, t_flat=t_flat):
            return robust_detection_outcome(
                p_flat, t_flat, box_format="xywh", class_names=names, per_class=per_class
            )

        t_oracle, ref = best_time(oracle, args.repeats)
        t_lists, res = best_time(ours_lists, args.repeats)
        t_flat_s, res_flat = best_time(ours_flat, args.repeats)
        got = res.as_dict(per_class=per_class)
        diff = max(abs(got[k] - v) for k, v in ref.items() if not np.isnan(v))
        diff_flat = max(
            abs(res_flat.as_dict(per_class=per_class)[k] - v) for k, v in ref.items() if not np.isnan(v)
        )
        assert set(ref) == set(got), "key sets differ"
        assert diff <= 1e-9 and diff_flat <= 1e-9, f"values differ by {max(diff, diff_flat)}"
        row = (
            f"| {'yes' if per_class else 'no'} | {t_oracle:.3f} | {t_lists:.4f} | {t_oracle / t_lists:.1f}× | "
            f"{t_flat_s:.4f} | {t_oracle / t_flat_s:.1f}× | {max(diff, diff_flat):.1e} |"
        )
        print(row, flush=True)
        lines.append(row)

    import scipy
    import sklearn

    import medeval

    header = [
        "# RoDeO: medeval vs rodeometric",
        "",
        f"Inputs: {args.images:,} images × {args.classes} classes, {n_boxes[0]:,} predicted and {n_boxes[1]:,} target "
        "boxes (targets 0-3 per image; predictions with position/size noise, 30% class flips, 20% drops, 0-2 extras).",
        f"Best of {args.repeats} runs. Machine: {cpu_machine()} (shared), Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, medeval {medeval.__version__}, rodeometric 0.0.1 "
        "(+ the matthews_corrcoef patch above).",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_rodeo.py --images {args.images} --repeats {args.repeats} "
        "--out benchmarks/results/rodeo.md`",
        "",
        "| per class | rodeometric (s) | medeval, per-image lists (s) | speed-up | medeval, ImageBoxes (s) | speed-up | max abs diff |",
        "|---|---|---|---|---|---|---|",
    ]
    footer = [
        "",
        '"per-image lists" includes validating and flattening the 10,000 arrays; "ImageBoxes" starts from '
        "already validated flat arrays. Every key (global and, with per class, every class) agrees within 1e-9.",
    ]
    report = "\n".join(header + lines + footer) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
