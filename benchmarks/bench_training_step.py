"""Where a training step of the chapters' CPU networks spends its time, under each numerics mode (issue #33).

    python benchmarks/bench_training_step.py [--steps 30] [--out benchmarks/results/training-step.md]

Networks at their default-profile sizes: chapter 4's U-Net (base 8, depth 2, 32-px patches of 3 channels, batch 32)
and patch classifier (base 8, 3 blocks, 32-px patches, batch 32), chapter 1's MIL network (SmallCNN 8-16-32, head 32,
64-px images of 1 channel, an 8 x 8 grid, batch 12). One step is forward, loss, backward and an Adam update on a fixed
random batch. Each network runs in a fresh process per mode, so that the variables reach the libraries before they
load:

* ``pinned`` - what the chapters compute with on a CPU (:mod:`medeval.runtime.numerics`: AVX2 kernels, one thread,
  MKL's strict AVX2 branch, oneDNN off except for the stride-1 3 x 3 and 1 x 1 convolutions, which
  :mod:`medeval.models.convolution` runs on oneDNN's direct AVX2 kernels);
* ``pinned, im2col`` - pinned with those convolutions on torch's own path too (im2col + MKL products, NNPACK for a
  forward of a batch of 16 or more): what the chapters computed with before;
* ``pinned + oneDNN`` - pinned with oneDNN on for every convolution (``MEDEVAL_ONEDNN=1``; its ISA capped at AVX2),
  the transposed ones included, which run on ``brgconv`` kernels that block by the CPU's caches: not used for the
  book;
* ``native, 1 thread`` - each library's own choice of kernels, one thread (a grid worker's share on 2 cores).

Reported: milliseconds per step (best of 3 timings of ``--steps`` steps after 3 warm-up steps), and under the two
pinned modes the share of the step's CPU time in torch's convolution operators (``torch.profiler``): the forward
(``mkldnn_convolution`` on the direct kernels, ``_nnpack_spatial_convolution`` for a batch of 16 or more, else
``_slow_conv2d_forward``) and the backward (``convolution_backward`` and ``_slow_conv2d_backward``).

Under ``pinned`` it also measures what limits a stacked ensemble (issue #33 asks 3x the sequential throughput per
member at 10 members): the step's floating-point operations (``torch.utils.flop_counter.FlopCounterMode``: the
convolutions and products) per second, against a 2048 x 2048 float32 matrix product on the same thread (the rate
the core attains on the most favourable kernel), and the training images per second of the *same* network on a
batch 10 times larger. That one-model, ten-fold batch is the best case of any 10-member ensemble: the same
arithmetic and activations with one set of weights instead of ten, one kernel call per layer, one optimiser
update; so its throughput ratio bounds what stacking 10 members can gain per member on this CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

NETWORKS = ("unet-04", "patch-classifier-04", "mil-small-cnn-01")
MODES = {
    "pinned": {"MEDEVAL_NUMERICS": "pinned"},
    "pinned, im2col": {"MEDEVAL_NUMERICS": "pinned", "BENCH_IM2COL": "1"},
    "pinned + oneDNN": {"MEDEVAL_NUMERICS": "pinned", "MEDEVAL_ONEDNN": "1"},
    "native, 1 thread": {"MEDEVAL_NUMERICS": "native", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
}


#: torch's CPU operators that compute a (non-transposed) convolution's forward and backward; their self time is the
#: convolutions' own (``convolution_backward`` keeps what it does not hand to ``_slow_conv2d_backward``)
FORWARD_OPS = ("aten::mkldnn_convolution", "aten::_nnpack_spatial_convolution", "aten::_slow_conv2d_forward")
BACKWARD_OPS = ("aten::convolution_backward", "aten::_slow_conv2d_backward")


def _convolutions_on_im2col():
    """Route no convolution to oneDNN's direct kernels (:func:`medeval.models.convolution.runs_on_direct_kernels`
    answers no): every convolution on torch's own path, as the chapters computed before."""
    from medeval.models import convolution

    convolution.runs_on_direct_kernels = lambda *args, **kwargs: False


def build(name: str):
    """The network, its batch and its loss for ``name`` (one of :data:`NETWORKS`)."""
    import torch

    torch.manual_seed(0)
    if name == "unet-04":
        from medeval.models.unet import UNet, segmentation_loss

        net = UNet(3, 3, base_channels=8, depth=2)
        batch = (torch.rand(32, 3, 32, 32), torch.randint(0, 3, (32, 32, 32)))
        return net, batch, segmentation_loss
    if name == "patch-classifier-04":
        from medeval.models.unet import PatchClassifier, classification_loss

        net = PatchClassifier(base_channels=8, n_blocks=3)
        batch = (torch.rand(32, 3, 32, 32), torch.randint(0, 2, (32,)))
        return net, batch, classification_loss
    if name == "mil-small-cnn-01":
        from medeval.models.mil import build_mil_model, mil_bag_loss

        net = build_mil_model("small_cnn", 8, head_channels=32, small_cnn_widths=(8, 16, 32))
        batch = (torch.rand(12, 1, 64, 64) * 2 - 1, torch.randint(0, 2, (12,)).float())
        return net, batch, lambda probs, y: mil_bag_loss(probs, y, "noisy_or", None)
    raise ValueError(f"network must be one of {NETWORKS}, got {name!r}")


def worker(name: str, steps: int) -> dict:
    """Time ``steps`` training steps of ``name`` in this process (its numerics set by the environment)."""
    from medeval.runtime.numerics import describe, pin_this_process

    pin_this_process()
    import torch

    from medeval.runtime.numerics import pin_torch

    pin_torch(torch)
    if os.environ.get("MEDEVAL_NUMERICS") == "native":
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if os.environ.get("BENCH_IM2COL") == "1":
        _convolutions_on_im2col()
    net, (x, y), loss_fn = build(name)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - t0) / steps)
    shares = {}
    if os.environ.get("MEDEVAL_NUMERICS") == "pinned" and "MEDEVAL_ONEDNN" not in os.environ:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(10):
                step()
        events = {e.key: e.self_cpu_time_total for e in prof.key_averages()}
        total = sum(events.values())
        forward = sum(v for k, v in events.items() if k in FORWARD_OPS)
        backward = sum(v for k, v in events.items() if k in BACKWARD_OPS)
        shares = {"conv_forward": forward / total, "conv_backward": backward / total}
        shares.update(_ensemble_ceiling(net, x, y, loss_fn, steps, best))
    return {"ms_per_step": best * 1000, "numerics": describe(), **shares}


def _ensemble_ceiling(net, x, y, loss_fn, steps: int, seconds_per_step: float, members: int = 10) -> dict:
    """The step's GFLOP/s, the thread's float32 matrix-product GFLOP/s, and the throughput of one step on a batch
    ``members`` times larger relative to the step's (images per second, best of 3)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def step(xb, yb):
        opt.zero_grad(set_to_none=True)
        loss_fn(net(xb), yb).backward()
        opt.step()

    with FlopCounterMode(display=False) as counter:
        step(x, y)
    flops = counter.get_total_flops()
    xb, yb = x.repeat(members, *[1] * (x.dim() - 1)), y.repeat(members, *[1] * (y.dim() - 1))
    step(xb, yb)
    big = _best_of(lambda: step(xb, yb), max(3, steps // members))
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    a @ b
    gemm = _best_of(lambda: a @ b, 3)
    return {"gflops": flops / seconds_per_step / 1e9, "gemm_gflops": 2 * 2048**3 / gemm / 1e9,
            "batch_x10_throughput": members * seconds_per_step / big}


def _best_of(fn, calls: int, repeats: int = 3) -> float:
    """Seconds per call of ``fn``: the best of ``repeats`` timings of ``calls`` calls."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "training-step.md"))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps)))
        return
    from _report import load_average, machine, write_report

    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEDEVAL_", "OMP_", "MKL_", "BENCH_"))}
    rows = {}
    for name in NETWORKS:
        for mode, env in MODES.items():
            out = subprocess.run([sys.executable, __file__, "--worker", name, "--steps", str(args.steps)],
                                 env={**base, **env, "PYTHONPATH": str(ROOT / "src")}, capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit(f"{name} ({mode}) failed:\n{out.stderr[-3000:]}")
            rows[name, mode] = json.loads(out.stdout.strip().splitlines()[-1])
    lines = ["# Training step of the chapters' CPU networks, by numerics mode", "",
             f"Command: `.venv/bin/python benchmarks/bench_training_step.py --steps {args.steps}`  ",
             f"Machine: {machine()}; load average at the end {load_average()}.", "",
             "Milliseconds per training step (forward, loss, backward, Adam); the share of the step's CPU time in the "
             "convolutions under the two pinned modes; how much faster `pinned` is than `pinned, im2col`, and each "
             "other mode than `pinned`.", "",
             "| network | pinned (ms) | conv fwd / bwd | pinned, im2col (ms) | conv fwd / bwd | speed-up | "
             "pinned + oneDNN (ms) | speed-up | native, 1 thread (ms) | speed-up |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def share(r: dict) -> str:
        return f"{r['conv_forward']:.0%} / {r['conv_backward']:.0%}"

    for name in NETWORKS:
        p, im2col, *others = (rows[name, m] for m in MODES)
        cells = " | ".join(f"{r['ms_per_step']:.1f} | {p['ms_per_step'] / r['ms_per_step']:.2f}x" for r in others)
        lines.append(f"| {name} | {p['ms_per_step']:.1f} | {share(p)} | {im2col['ms_per_step']:.1f} | "
                     f"{share(im2col)} | {im2col['ms_per_step'] / p['ms_per_step']:.2f}x | {cells} |")
    lines += ["", f"Pinned: {rows[NETWORKS[0], 'pinned']['numerics']}.", ""]
    lines += ["What a stacked ensemble could gain here, under `pinned`: the step's rate of floating-point work "
              "(convolutions and products), against a 2048 x 2048 float32 matrix product on the same thread, and "
              "the training images per second of the same network on a batch 10 times larger, relative to its own "
              "batch. One model on a ten-fold batch does the arithmetic of a 10-member ensemble with one set of "
              "weights, one kernel call per layer and one optimiser update: the best case of any way of stacking "
              "10 members, so its ratio bounds their gain per member.", "",
              "| network | GFLOP/s | share of the matrix product's | one model, 10x batch: images/s ratio |",
              "|---|---|---|---|"]
    for name in NETWORKS:
        p = rows[name, "pinned"]
        lines.append(f"| {name} | {p['gflops']:.1f} | {p['gflops'] / p['gemm_gflops']:.0%} of "
                     f"{p['gemm_gflops']:.0f} | {p['batch_x10_throughput']:.2f}x |")
    ceiling = [rows[n, "pinned"]["batch_x10_throughput"] for n in NETWORKS]
    lines += ["", f"The ten-fold batch gains {min(ceiling):.2f}-{max(ceiling):.2f}x per image: on this CPU these "
              "steps are limited by arithmetic and memory traffic per image, not by per-call overhead, so no stacking "
              "of 10 members reaches the 3x per member that issue #33 asks of a CPU (`bench_ensemble.py` measures "
              "the stacked ensembles themselves).", ""]

    def spread(slow: str, fast: str) -> str:
        ratios = [rows[n, slow]["ms_per_step"] / rows[n, fast]["ms_per_step"] for n in NETWORKS]
        return f"{min(ratios):.2f}-{max(ratios):.2f}x"

    lines.append(
        f"Reading: the direct convolutions make the pinned steps {spread('pinned, im2col', 'pinned')} faster than "
        f"torch's im2col path. oneDNN on for every convolution would give {spread('pinned', 'pinned + oneDNN')} "
        "more, but its transposed convolutions run on `brgconv` kernels whose blocking follows the CPU's caches "
        "(`ONEDNN_VERBOSE=1`), so the book keeps those on torch's path (`medeval.models.convolution`).")
    write_report(lines, args.out)


if __name__ == "__main__":
    main()
