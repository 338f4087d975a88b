"""Time the ChestX-ray14 table loaders against the usual pandas idiom on the same shipped files.

    .venv/bin/python benchmarks/bench_data_tables.py [--repeats 7]

Ours: ``medeval.data.chestxray14.load_labels()`` (sha256 check + read_csv + one parse per distinct
label set). Peer: ``pd.read_csv`` + ``Series.str.get_dummies(sep="|")`` (no checksum), the idiom most
ChestX-ray14 code uses. Prints the median wall time of each and the ratio peer / ours.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.data import chestxray14 as cx
from medeval.data import manifest as m

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine as cpu_machine  # noqa: E402


def _median_time(fn, repeats: int) -> float:
    fn()  # warm the OS file cache and imports
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peer_labels(path):
    raw = pd.read_csv(path)
    dummies = raw["Finding Labels"].str.get_dummies(sep="|").drop(columns="No Finding")
    return pd.concat([raw, dummies[list(cx.LABELS)].astype(np.uint8)], axis=1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    path = m.repo_root() / m.get_dataset("chestxray14-labels").files[0].path

    ours = cx.load_labels()
    peer = peer_labels(path)
    assert np.array_equal(ours[list(cx.LABELS)].to_numpy(), peer[list(cx.LABELS)].to_numpy())

    t_ours = _median_time(cx.load_labels, args.repeats)
    t_peer = _median_time(lambda: peer_labels(path), args.repeats)
    t_sha = _median_time(lambda: m.file_hash(path), args.repeats)
    t_boxes = _median_time(cx.load_boxes, args.repeats)
    print(
        f"machine: {cpu_machine()}, python {platform.python_version()}, "
        f"pandas {pd.__version__}"
    )
    print(f"rows={len(ours)} patients={ours['patient_id'].nunique()} repeats={args.repeats}")
    print(f"load_labels (ours, incl. sha256)     median {t_ours * 1e3:8.1f} ms")
    print(f"  of which sha256 of the 978 KB file median {t_sha * 1e3:8.1f} ms")
    print(f"read_csv + str.get_dummies (peer)    median {t_peer * 1e3:8.1f} ms")
    print(f"ratio peer / ours                    {t_peer / t_ours:8.2f}x")
    print(f"load_boxes (ours, incl. sha256)      median {t_boxes * 1e3:8.1f} ms")
    print(f"budget check: load_labels < 2 s -> {'PASS' if t_ours < 2 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
