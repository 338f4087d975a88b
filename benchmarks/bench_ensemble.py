"""Stacked ensembles against sequential training: throughput per member, members 1-16 (issue #33, item 1).

    python benchmarks/bench_ensemble.py [--device cpu|cuda] [--numerics pinned|native] [--config default|gpu]
                                        [--members 1 2 4 8 16] [--epochs 2] [--out FILE.json] [--md FILE.md]

The model is chapter 4a's U-Net (``--config default``: base 8, depth 2, 32-px patches, batch 32, the CPU
profile; ``gpu``: base 32, depth 3, 64-px patches, batch 32). For every ensemble size M the script trains M
members with :func:`medeval.models.ensemble.train_ensemble` and, in the same run, M models one after the other
with :func:`medeval.models.training.train_model` (each model on its own random patches, its own seed, the
chapter's options: Adam, BatchNorm recalibration). It reports training images per second over all members,
M x (examples x epochs) / wall time (the sequential rate is one model's rate, whatever M), and the speed-up,
sequential time / ensemble time: the throughput per member of the ensemble against training alone. Sequential time is measured for min(M, 4) models and
scaled to M (one model's time does not depend on how many others follow it). Every number is measured in this one
run; without a GPU, ``--device cuda`` stops with a message.

``--mode``: :func:`~medeval.models.ensemble.train_ensemble`'s ``exact`` (``exact``: every layer member by
member, bit for bit as alone; ``grouped``: one grouped convolution for all members; ``auto``: exact on the CPU,
grouped on a GPU).

``--numerics`` sets the process's numerics before torch loads (:mod:`medeval.runtime.numerics`: ``pinned`` is
what the chapters run with on the CPU, oneDNN off and one thread; ``native`` is each library's fastest path).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

CONFIGS = {
    "default": {"base_channels": 8, "depth": 2, "patch": 32, "batch_size": 32, "n": 192},
    "gpu": {"base_channels": 32, "depth": 3, "patch": 64, "batch_size": 32, "n": 768},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--numerics", choices=("pinned", "native"), default="pinned")
    parser.add_argument("--config", choices=tuple(CONFIGS), default="default")
    parser.add_argument("--members", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--mode", choices=("auto", "exact", "grouped"), default="auto",
                        help="train_ensemble's exact mode: auto = exact on the CPU, grouped on a GPU")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--md", type=Path)
    args = parser.parse_args()
    os.environ["MEDEVAL_NUMERICS"] = args.numerics
    from medeval.runtime.numerics import describe, pin_this_process

    pin_this_process(args.numerics)
    import numpy as np
    import torch

    from medeval.runtime.numerics import pin_torch

    pin_torch(torch, args.numerics)
    from medeval.models.ensemble import train_ensemble
    from medeval.models.training import train_model
    from medeval.models.unet import UNet, segmentation_loss

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no GPU here: a GPU figure is never estimated from a CPU run")
    cfg = CONFIGS[args.config]
    rng = np.random.default_rng(0)
    p, n = cfg["patch"], cfg["n"]
    max_m = max(args.members)
    data = [(rng.random((n, 3, p, p), dtype=np.float32), rng.integers(0, 3, (n, p, p))) for _ in range(max_m)]
    options = {"epochs": args.epochs, "batch_size": cfg["batch_size"], "lr": 3e-3, "device": args.device,
               "amp": False, "recalibrate_bn": True}
    exact = {"auto": None, "exact": True, "grouped": False}[args.mode]

    def models(m):
        out = []
        for s in range(m):
            torch.manual_seed(s)
            out.append(UNet(base_channels=cfg["base_channels"], depth=cfg["depth"]))
        return out

    def sync():
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()

    # warm-up (kernel selection, first-call costs) of both paths
    train_ensemble(models(2), data[:2], segmentation_loss, seeds=[0, 1], exact=exact, **{**options, "epochs": 1})
    train_model(models(1)[0], data[0], segmentation_loss, seed=0, **{**options, "epochs": 1})
    sync()
    rows = []
    for m in args.members:
        nets = models(m)
        sync()
        t0 = time.perf_counter()
        train_ensemble(nets, data[:m], segmentation_loss, seeds=list(range(m)), exact=exact, **options)
        sync()
        t_ens = time.perf_counter() - t0
        k = min(m, 4)
        nets = models(k)
        sync()
        t0 = time.perf_counter()
        for s, net in enumerate(nets):
            train_model(net, data[s], segmentation_loss, seed=s, **options)
        sync()
        t_seq = (time.perf_counter() - t0) * m / k
        per_member = n * args.epochs
        rows.append({"members": m, "ensemble_s": round(t_ens, 3), "sequential_s": round(t_seq, 3),
                     "ensemble_img_per_s": round(per_member * m / t_ens, 1),
                     "sequential_img_per_s": round(per_member * m / t_seq, 1),
                     "speedup": round(t_seq / t_ens, 2)})
        print(rows[-1], flush=True)
    from _report import load_average, machine

    if args.device.startswith("cuda"):
        where = f"{torch.cuda.get_device_name(0)}; host {machine()}"
    else:
        where = machine()
    mode = args.mode if args.mode != "auto" else ("exact" if args.device == "cpu" else "grouped")
    report = {"device": args.device, "where": where, "mode": mode, "numerics": describe(), "config": {**cfg, **options},
              "torch": torch.__version__, "load_average": load_average(), "rows": rows}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))
    lines = [f"Ensembles ({mode} mode), chapter 4a U-Net ({args.config} config: base {cfg['base_channels']}, depth {cfg['depth']}, "
             f"{p}-px patches, batch {cfg['batch_size']}, {n} patches x {args.epochs} epochs per member) on "
             f"{where}; numerics {describe()}; load {report['load_average']}.", "",
             "| members | ensemble (s) | sequential (s) | training images/s, ensemble | training images/s, sequential "
             "| speed-up |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['members']} | {r['ensemble_s']} | {r['sequential_s']} | {r['ensemble_img_per_s']} "
              f"| {r['sequential_img_per_s']} | {r['speedup']}x |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text(text)


if __name__ == "__main__":
    main()
