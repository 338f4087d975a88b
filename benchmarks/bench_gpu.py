"""GPU figures (issue #19, item 5): training throughput, the data pipeline, GPU utilisation and EVE fits/s.

    python benchmarks/bench_gpu.py --out results/gpu/bench_gpu.json [--seconds-per-variant 3]

Every figure is a ratio or a rate measured in this one run on the same inputs:

* **training throughput** (images/s) of the chapters' GPU models -- ResNet-18 at 224 px, batch 128 (chapter 2's
  detector classifier), the MIL ResNet-18 at 256 px on an 8 x 8 grid, batch 32 (chapter 1), the U-Net of
  chapter 4a (base 32, depth 3) on 64-px patches, batch 64 -- with and without bf16 autocast (AMP) and
  channels_last, on batches already on the GPU (compute only);
* **the data pipeline**: one epoch of :func:`medeval.models.training.train_model` (what the chapters call) from a
  CPU dataset with the default loader (worker processes, pinned memory) and with in-process loading, against
  the compute-only rate; GPU utilisation sampled every 50 ms during that epoch;
* **EVE**: 10-fold CV fits/s of the batched torch SVM on the GPU (float64, and float32 where it agrees) against
  the scikit-learn ``SVC`` loop on one CPU core and on every core, on the same LIBSVM partitions of the ADNI-like
  phantom (25 + 25 and 60 + 60 subjects), with the agreement of the held-out predictions and the largest
  decision-value difference; and the projected time of the paper-scale drawstring experiment (chapter 3's
  ``full`` profile: 66 parent sizes x 500 parents x 500 pairs) at the measured rate.

Without a GPU the script stops with a message: no GPU figure is ever estimated from a CPU run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import threading
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn


def _sync():
    torch.cuda.synchronize()


class _Classifier(nn.Module):
    """A backbone with global average pooling and one logit (chapter 2's image classifier)."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.fc = nn.Linear(backbone.out_channels, 1)

    def forward(self, x):
        return self.fc(self.backbone(x).mean(dim=(2, 3)))[:, 0]


def _models():
    from medeval.models.backbones import build_backbone
    from medeval.models.mil import build_mil_model
    from medeval.models.unet import UNet

    return {
        "resnet18_224_b128 (ch2)": (lambda: _Classifier(build_backbone("resnet18", in_channels=1)), (1, 224, 224), 128),
        "mil_resnet18_256_b32 (ch1)": (lambda: build_mil_model("resnet18", 8, head_channels=256), (1, 256, 256), 32),
        "unet_b32_d3_64_b64 (ch4a)": (lambda: UNet(3, 3, base_channels=32, depth=3), (3, 64, 64), 64),
    }


def _loss(out):
    return out.float().square().mean()


def train_throughput(make, shape, batch, *, amp: bool, channels_last: bool, seconds: float) -> float:
    """Images/s of Adam training steps on batches already on the GPU (4 rotating random batches)."""
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = make().to(dev)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    xs = [torch.randn(batch, *shape, device=dev).contiguous(memory_format=fmt) for _ in range(4)]

    def step(x):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            out = model(x)
        _loss(out).backward()
        opt.step()

    for i in range(5):
        step(xs[i % 4])
    _sync()
    n, t0 = 0, time.perf_counter()
    while True:
        step(xs[n % 4])
        n += 1
        if n % 10 == 0:
            _sync()
            if time.perf_counter() - t0 >= seconds:
                break
    return n * batch / (time.perf_counter() - t0)


class _Utilisation:
    """GPU utilisation (%) sampled in a thread (NVML via torch.cuda.utilization)."""

    def __init__(self, every=0.05):
        self.every, self.samples, self._stop = every, [], threading.Event()

    def __enter__(self):
        def run():
            while not self._stop.is_set():
                try:
                    self.samples.append(torch.cuda.utilization())
                except Exception:  # NVML missing: no samples, reported as None
                    return
                time.sleep(self.every)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    @property
    def mean(self):
        return float(np.mean(self.samples)) if self.samples else None


def pipeline(make, shape, batch, n_batches: int, num_workers) -> dict:
    """One epoch of medeval's ``train_model`` from a CPU TensorDataset; images/s and GPU utilisation."""
    from medeval.models.training import train_model

    n = batch * n_batches
    x = torch.randn(n, *shape)
    y = torch.zeros(n)
    model = make()
    train_model(model, (x[: 2 * batch], y[: 2 * batch]), lambda out, t: _loss(out), epochs=1, batch_size=batch,
                device="cuda", num_workers=num_workers)  # warm-up (cuDNN autotuning, worker start)
    _sync()
    with _Utilisation() as util:
        t0 = time.perf_counter()
        train_model(model, (x, y), lambda out, t: _loss(out), epochs=1, batch_size=batch, device="cuda",
                    num_workers=num_workers)
        _sync()
        dt = time.perf_counter() - t0
    return {"images_per_s": n / dt, "gpu_utilisation_mean_pct": util.mean, "n_images": n}


def eve(per_class: int, n_subsets: int, n_sklearn: int, n_sklearn_parallel: int, device="cuda") -> dict:
    """Fits/s of the batched engine (GPU) and of the scikit-learn loop (1 core, all cores) on the same folds."""
    from joblib import Parallel, delayed

    from medeval.data.phantoms.adni import generate_adni_pool
    from medeval.data.splits import draw_balanced_subsets, libsvm_fold_ids
    from medeval.models.batched_svm import batched_linear_svm
    from medeval.models.linear_svm import fit_decision_values

    pool = generate_adni_pool(seed=0)
    X, y = pool.model.standardize(pool.features), pool.labels
    subsets = draw_balanced_subsets(y, per_class, n_subsets, rng=0)
    k, m = 10, subsets.shape[1]
    folds = libsvm_fold_ids(y[subsets], k, rng=1)
    mask = (folds[:, None, :] != np.arange(k)[None, :, None]).reshape(-1, m)
    sidx = np.repeat(np.arange(n_subsets), k)
    Xs, ys = X[subsets], y[subsets]
    out: dict = {"per_class": per_class, "n_features": int(X.shape[1]), "folds": k}

    def sk(lo, hi):
        return fit_decision_values(Xs, ys, mask[lo * k: hi * k], sidx[lo * k: hi * k], engine="sklearn")[0]

    t0 = time.perf_counter()
    ref = sk(0, n_sklearn)
    t_sk = time.perf_counter() - t0
    out["sklearn_1core_fits_per_s"] = n_sklearn * k / t_sk
    cores = os.cpu_count() or 1
    bounds = np.linspace(0, n_sklearn_parallel, cores + 1).astype(int)
    Parallel(n_jobs=cores)(delayed(sk)(a, a + 1) for a in range(cores))  # start the workers (not timed)
    t0 = time.perf_counter()
    Parallel(n_jobs=cores)(delayed(sk)(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a)
    out["sklearn_all_cores_fits_per_s"] = n_sklearn_parallel * k / (time.perf_counter() - t0)
    out["cores"] = cores
    held = ~mask[: n_sklearn * k]
    for label, dtype, chunk in [("float64_chunk4096", torch.float64, 4096), ("float64_chunk65536", torch.float64, 65536),
                                ("float32_chunk65536", torch.float32, 65536)]:
        batched_linear_svm(Xs[:4], ys[:4], mask[:40], sidx[:40], device=device, dtype=dtype, chunk_size=chunk)
        _sync()
        t0 = time.perf_counter()
        model = batched_linear_svm(Xs, ys, mask, sidx, device=device, dtype=dtype, chunk_size=chunk)
        _sync()
        dt = time.perf_counter() - t0
        dec = model.decision[: n_sklearn * k]
        scale = np.abs(ref[held]).max()
        out[label] = {
            "fits": int(mask.shape[0]), "seconds": dt, "fits_per_s": mask.shape[0] / dt,
            "unconverged": model.n_unconverged,
            "held_out_sign_agreement_pct": float(100 * np.mean((dec > 0)[held] == (ref > 0)[held])),
            "max_abs_decision_difference_over_max_abs": float(np.abs(dec[held] - ref[held]).max() / scale),
            "vs_sklearn_1core": mask.shape[0] / dt / out["sklearn_1core_fits_per_s"],
            "vs_sklearn_all_cores": mask.shape[0] / dt / out["sklearn_all_cores_fits_per_s"],
        }
    return out


def drawstring_projection(fits_per_s: float) -> dict:
    """Fits of chapter 3's paper-scale drawstring (the full profile) and the time at ``fits_per_s``."""
    from medeval.runtime.params import resolve_params

    P = resolve_params("03-eve", "full", {"dataset": "adni_phantom"})
    n_sizes = len(P.drawstring_parent_sizes)
    fits = n_sizes * P.drawstring_n_parents * 2 * P.drawstring_n_pairs * 10
    return {"parent_sizes": n_sizes, "n_parents": P.drawstring_n_parents, "n_pairs": P.drawstring_n_pairs,
            "subset_size_per_class": P.drawstring_subset_size, "fits": fits, "fits_per_s": fits_per_s,
            "projected_hours": fits / fits_per_s / 3600}


def write_markdown(report: dict, source: Path) -> None:
    """``benchmarks/results/gpu.md`` (gathered into RESULTS.md) from a JSON report measured on a GPU."""
    from medeval.runtime.gpu_record import benchmark_markdown

    m = report["machine"]
    text = "\n".join([
        "# GPU: training throughput, data pipeline, EVE engines", "",
        "Command (on the GPU machine): `python3 benchmarks/bench_gpu.py --out bench_gpu.json`; this section: "
        f"`python benchmarks/bench_gpu.py --report {source}`.  ",
        f"Machine: {m['gpu']}, {m['cpu_cores']} CPU cores, Python {m['python']}, torch {m['torch']} (CUDA {m['cuda']}), "
        f"measured {report['started']}. The data-pipeline figures and the chapters' runs are in `results/gpu/README.md`.",
        "", benchmark_markdown(report)])
    out = Path(__file__).parent / "results" / "gpu.md"
    out.write_text(text)
    print(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="where to write the JSON report (on the GPU machine)")
    parser.add_argument("--seconds-per-variant", type=float, default=3.0)
    parser.add_argument("--report", type=Path, help="write benchmarks/results/gpu.md from this JSON report and stop")
    args = parser.parse_args()
    if args.report is not None:
        write_markdown(json.loads(args.report.read_text()), args.report)
        return
    if args.out is None:
        parser.error("--out is required (or --report)")
    if not torch.cuda.is_available():
        raise SystemExit("bench_gpu.py: no CUDA device here; GPU figures are measured on a GPU, never estimated")
    torch.backends.cudnn.benchmark = True
    report: dict = {
        "machine": {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
                    "cpu_cores": os.cpu_count(), "python": platform.python_version(),
                    "cudnn_tf32": torch.backends.cudnn.allow_tf32, "matmul_tf32": torch.backends.cuda.matmul.allow_tf32},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    throughput = {}
    for name, (make, shape, batch) in _models().items():
        row = {}
        for amp in (False, True):
            for cl in (False, True):
                key = f"{'amp_bf16' if amp else 'fp32'}_{'channels_last' if cl else 'nchw'}"
                row[key] = train_throughput(make, shape, batch, amp=amp, channels_last=cl,
                                            seconds=args.seconds_per_variant)
                print(f"{name:30s} {key:24s} {row[key]:10.0f} img/s", flush=True)
        throughput[name] = row
    report["train_images_per_s"] = throughput
    pipe = {}
    for name, (make, shape, batch) in list(_models().items())[:2]:
        compute = throughput[name]["amp_bf16_channels_last"]
        n_batches = max(20, int(compute * 4 / batch))  # about 4 s of compute
        for workers in (None, 0):
            label = "default_loader" if workers is None else "in_process"
            r = pipeline(make, shape, batch, n_batches, workers)
            r["vs_compute_only"] = r["images_per_s"] / compute
            pipe[f"{name} {label}"] = r
            print(f"pipeline {name:30s} {label:15s} {r['images_per_s']:8.0f} img/s "
                  f"({100 * r['vs_compute_only']:.0f}% of compute-only, GPU util {r['gpu_utilisation_mean_pct']})",
                  flush=True)
    report["pipeline"] = pipe
    eves = {}
    for per_class, n_subsets, n_sk, n_par in [(25, 2000, 40, 800), (60, 1000, 20, 400)]:
        r = eve(per_class, n_subsets, n_sk, n_par)
        eves[f"{per_class}+{per_class}"] = r
        for label in ("float64_chunk4096", "float64_chunk65536", "float32_chunk65536"):
            e = r[label]
            print(f"EVE {per_class}+{per_class} {label:20s} {e['fits_per_s']:9.0f} fits/s  "
                  f"{e['vs_sklearn_1core']:6.1f}x 1 core, {e['vs_sklearn_all_cores']:5.1f}x {r['cores']} cores; "
                  f"agree {e['held_out_sign_agreement_pct']:.2f}%, max diff {e['max_abs_decision_difference_over_max_abs']:.1e}, "
                  f"unconverged {e['unconverged']}", flush=True)
        print(f"EVE {per_class}+{per_class} sklearn: {r['sklearn_1core_fits_per_s']:.0f} fits/s on 1 core, "
              f"{r['sklearn_all_cores_fits_per_s']:.0f} on {r['cores']}", flush=True)
    report["eve"] = eves
    best = max(eves["25+25"][k]["fits_per_s"] for k in ("float64_chunk4096", "float64_chunk65536"))
    report["drawstring_projection"] = drawstring_projection(best)
    print(f"paper-scale drawstring: {report['drawstring_projection']['fits']:,} fits, "
          f"{report['drawstring_projection']['projected_hours']:.2f} h at {best:.0f} fits/s", flush=True)
    report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
