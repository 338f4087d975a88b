"""All multi-label metrics on 112,120 x 14 scores: medeval.metrics.multilabel versus scikit-learn.

The labels are the real ChestX-ray14 label table (shipped); the scores are synthetic,
p_ik = sigmoid(1.5 (2 y_ik - 1) + noise), rounded to 3 decimals so that ties occur as in real,
quantised model outputs. Both sides compute the same set of measures on the same inputs:

    Hamming loss, subset accuracy, F1 micro, F1 macro, example-based precision / recall / F1 /
    accuracy, per-label AUC, per-label AP (and mAP), LRAP (example-based AP), coverage error,
    ranking loss, plus (ours only, no scikit-learn counterpart) one-error, example-based AUC and
    macro-F as the F of macro precision and recall.

Each side is timed as the best of ``--repeats`` runs; the ratio is scikit-learn time / our time.
Equality of the shared values is checked before timing. Usage:

    .venv/bin/python benchmarks/bench_multilabel.py [--repeats 5] [--out benchmarks/results/multilabel.md]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn import metrics as skm

from medeval.data.chestxray14 import LABELS, load_labels
from medeval.metrics import multilabel as ml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine as cpu_machine  # noqa: E402


def make_scores(y: np.ndarray, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logits = 1.5 * (2 * y.astype(np.int64) - 1) + rng.normal(0, 1.5, size=y.shape)  # y is uint8: cast first
    return np.round(1 / (1 + np.exp(-logits)), 3)


def ours_all(y, p):
    """Every measure, through the one-call summary (shares the sorts)."""
    return ml.multilabel_metrics(y, p, threshold=0.5)


def ours_individual(y, p):
    """Every measure, each through its own public function."""
    yp = ml.binarize(p, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.UndefinedMetricWarning)
        return {
            "hamming_loss": ml.hamming_loss(y, yp),
            "subset_accuracy": ml.subset_accuracy(y, yp),
            "f1_micro": ml.f1_micro(y, yp, zero_division=0.0),
            "f1_macro": ml.f1_macro(y, yp, zero_division=0.0),
            "example_precision": ml.example_precision(y, yp, zero_division=0.0),
            "example_recall": ml.example_recall(y, yp, zero_division=0.0),
            "example_f1": ml.example_f1(y, yp, zero_division=0.0),
            "example_accuracy": ml.example_accuracy(y, yp, zero_division=0.0),
            "per_label_auc": ml.per_label_auc(y, p, ties="half"),
            "per_label_ap": ml.per_label_average_precision(y, p),
            "lrap": ml.example_average_precision(y, p, undefined=1.0),
            "coverage_error": ml.coverage_error(y, p, undefined=0.0),
            "ranking_loss": ml.ranking_loss(y, p, undefined=0.0),
            "one_error": ml.one_error(y, p),
            "example_auc": ml.example_auc(y, p),
            "f1_macro_f_of_macro_pr": ml.f1_macro(y, yp, convention="f_of_macro_pr"),
        }


def sklearn_all(y, p):
    yp = p > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "hamming_loss": skm.hamming_loss(y, yp),
            "subset_accuracy": skm.accuracy_score(y, yp),
            "f1_micro": skm.f1_score(y, yp, average="micro", zero_division=0.0),
            "f1_macro": skm.f1_score(y, yp, average="macro", zero_division=0.0),
            "example_precision": skm.precision_score(y, yp, average="samples", zero_division=0.0),
            "example_recall": skm.recall_score(y, yp, average="samples", zero_division=0.0),
            "example_f1": skm.f1_score(y, yp, average="samples", zero_division=0.0),
            "example_accuracy": skm.jaccard_score(y, yp, average="samples", zero_division=0.0),
            "per_label_auc": skm.roc_auc_score(y, p, average=None),
            "per_label_ap": skm.average_precision_score(y, p, average=None),
            "lrap": skm.label_ranking_average_precision_score(y, p),
            "coverage_error": skm.coverage_error(y, p),
            "ranking_loss": skm.label_ranking_loss(y, p),
        }


def best_of(fn, repeats, *args):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None, help="write a markdown report here")
    args = ap.parse_args(argv)

    y = load_labels()[list(LABELS)].to_numpy()
    p = make_scores(y)
    ref = sklearn_all(y, p)
    mine = ours_individual(y, p)
    for k, v in ref.items():
        np.testing.assert_allclose(mine[k], v, rtol=0, atol=1e-10, err_msg=k)
    summary = ours_all(y, p)
    np.testing.assert_allclose(summary["per_label_ap"], ref["per_label_ap"], atol=1e-10)

    t_sk = best_of(sklearn_all, args.repeats, y, p)
    t_ind = best_of(ours_individual, args.repeats, y, p)
    t_all = best_of(ours_all, args.repeats, y, p)
    lines = [
        "# Multi-label metrics: medeval vs scikit-learn",
        "",
        f"Inputs: the real ChestX-ray14 label table ({y.shape[0]:,} x {y.shape[1]}) and synthetic scores rounded to 3 "
        "decimals (ties present). Same measures on both sides (13 shared; ours also computes one-error, "
        "example AUC and the mldr-0.4.0 macro-F). Values checked equal (atol 1e-10) before timing; best of "
        f"{args.repeats} runs.",
        "",
        "| implementation | seconds | scikit-learn / ours |",
        "|---|---|---|",
        f"| scikit-learn 1.9 (13 functions) | {t_sk:.3f} | 1.0 |",
        f"| medeval, one public function per measure (16 measures) | {t_ind:.3f} | {t_sk / t_ind:.1f} |",
        f"| medeval `multilabel_metrics` (all measures, shared sorts) | {t_all:.3f} | {t_sk / t_all:.1f} |",
        "",
        f"Machine: {cpu_machine()}, shared with other jobs "
        f"(load average at the end: {', '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}); "
        f"Python {platform.python_version()}, numpy {np.__version__}.",
        "",
        "Command: `.venv/bin/python benchmarks/bench_multilabel.py --out benchmarks/results/multilabel.md`",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)


if __name__ == "__main__":
    main()
