"""The same numbers on any x86-64 CPU: the numerical libraries' code paths and thread counts, pinned.

torch, MKL, oneDNN and OpenBLAS each pick their kernels by the instruction sets the CPU offers (AMX on some Xeons,
AVX-512 on this project's Xeon and EPYC, AVX2 only on older CPUs) and by its vendor, and a parallel reduction's
order follows the thread count. The same commit then computes different floating-point numbers on different
machines, and a verdict that sits near its threshold can move. Measured on Chapter 1's smoke run (188 recorded
values; ``benchmarks/RESULTS.md``): oneDNN's instruction set alone changes 21 of them, MKL's code path 13.

``pinned`` (the default) sets, in every chapter kernel and grid worker, before the libraries load:

- ``ATEN_CPU_CAPABILITY=avx2``: torch's own vectorised kernels (reductions, activations);
- ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN's JIT kernels, where oneDNN is used at all (it is switched off, below);
- ``MKL_CBWR=AVX2,STRICT``: MKL's conditional numerical reproducibility branch (matrix products, the convolutions'
  im2col products). MKL honours it on Intel CPUs only: on any other CPU it runs its ``AUTO`` branch instead (Intel's
  oneMKL developer guide, "Getting Started with Conditional Numerical Reproducibility"). Built on an AMD EPYC, five
  of the eight chapters computed other numbers than on the Intel Xeon of the references, and in the default book
  Chapters 1 and 4 (its class-distribution study) reached other verdicts (``medeval verify``). So on a CPU that is
  not Intel's, a pinned process also loads :func:`mkl_intel_branch_library`, one C function that answers MKL's "is
  this an Intel CPU?" yes (``mkl_serv_intel_cpu_true``), before torch loads: MKL then runs the AVX2 branch there
  too, whose instructions (AVX2, FMA) such a CPU has, with the branch's fixed blocking. A kernel or worker started
  by medeval gets it with ``LD_PRELOAD``; :func:`pin_this_process` loads it into the global symbol scope when torch
  is not loaded yet; :func:`check_pinned` reads the branch MKL actually runs;
- ``OPENBLAS_CORETYPE=Haswell``: OpenBLAS's kernels (numpy, scipy, scikit-learn);
- ``NPY_DISABLE_CPU_FEATURES=X86_V4 AVX512_ICL AVX512_SPR``: numpy's own loops (ufuncs, sorting) at the AVX2 level;
- ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` = 1, and one torch intra-op thread;
- torch's oneDNN backend off (:func:`pin_torch`): convolutions become torch's im2col + MKL products and NNPACK,
  except the models' stride-1 3 x 3 and 1 x 1 convolutions, which :mod:`medeval.models.convolution` runs on
  oneDNN's direct AVX2 kernels, whose blocking the shape alone fixes (a chapter 4 U-Net run: 9.0 s on im2col,
  5.3 s on them).

One thread per process costs little: the chapters' grids run one process per core. ``MEDEVAL_NUMERICS=native``
opts out (each library's fastest path and thread count); every page's provenance says which mode ran, and the
mode is part of every cache key, so the two never share cached results.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

MODES = ("pinned", "native")

#: the environment of a pinned kernel or worker (read by the libraries when they load)
PINNED_ENVIRONMENT: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2,STRICT",
    "OPENBLAS_CORETYPE": "Haswell",
    # numpy 2.4's dispatch groups above AVX2 (X86_V3): its AVX-512 loops are not on every CPU
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_DYNAMIC": "FALSE",
}


def numerics_mode() -> str:
    """``MEDEVAL_NUMERICS`` (``pinned`` when unset); anything else is refused with the allowed values."""
    mode = os.environ.get("MEDEVAL_NUMERICS", "pinned").strip().lower() or "pinned"
    if mode not in MODES:
        from medeval.runtime.params import ParameterError

        raise ParameterError(f"MEDEVAL_NUMERICS={os.environ['MEDEVAL_NUMERICS']!r}: expected one of "
                             f"{', '.join(MODES)} (pinned: the same numbers on any x86-64 CPU; native: each "
                             "library's fastest path)")
    return mode


#: MKL's codes for its conditional-numerical-reproducibility branches (``mkl_cbwr_get(MKL_CBWR_BRANCH)``; oneMKL
#: developer reference, "Named Constants for CNR Control"), by name
MKL_BRANCHES = {0: "OFF", 1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2",
                9: "AVX", 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}

#: the one function of the library that makes MKL take its CNR branches on a CPU that is not Intel's: MKL asks
#: ``mkl_serv_intel_cpu_true()`` whether it runs on an Intel CPU, and this definition, found first in the global
#: symbol scope, answers yes
MKL_INTEL_BRANCH_SOURCE = "int mkl_serv_intel_cpu_true(void) { return 1; }\n"


def cpu_vendor() -> str | None:
    """The CPU's vendor string (``GenuineIntel``, ``AuthenticAMD``, ...) from ``/proc/cpuinfo``; None where it
    cannot be read (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def needs_mkl_intel_branch() -> bool:
    """Whether MKL would ignore ``MKL_CBWR=AVX2`` here: an x86-64 Linux CPU that is not Intel's."""
    return (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
            and cpu_vendor() not in (None, "GenuineIntel"))


def mkl_intel_branch_library() -> Path | None:
    """The shared library of :data:`MKL_INTEL_BRANCH_SOURCE`, compiled on first use with the C compiler Python was
    built with (``cc`` otherwise) next to the environment's libraries (``<prefix>/lib``), or in
    ``~/.cache/medeval`` where that is not writable; None when no compiler is at hand (a pinned process then
    reports that MKL's branch is not pinned, :func:`check_pinned`). Written under a temporary name and renamed, so
    processes that build it at once never load half a file."""
    name = "libmedeval-mkl-intel-branch.so"
    places = [Path(sys.prefix) / "lib", Path.home() / ".cache" / "medeval"]
    for place in places:
        if (place / name).is_file():
            return place / name
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    for place in places:
        try:
            place.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=place) as tmp:
                source, built = Path(tmp) / "branch.c", Path(tmp) / name
                source.write_text(MKL_INTEL_BRANCH_SOURCE)
                subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(built), str(source)], check=True,
                               capture_output=True, timeout=60)
                os.replace(built, place / name)
            return place / name
        except (OSError, subprocess.SubprocessError):
            continue
    return None


def _preload(library: Path) -> str:
    """``LD_PRELOAD`` with ``library`` first and whatever the caller preloads kept after it."""
    kept = [p for p in os.environ.get("LD_PRELOAD", "").replace(":", " ").split() if p and p != str(library)]
    return " ".join([str(library), *kept])


def numerics_environment(mode: str | None = None) -> dict[str, str]:
    """The variables a kernel or worker of ``mode`` starts with (none for ``native``); pinned, on a CPU that is not
    Intel's, also ``LD_PRELOAD`` with :func:`mkl_intel_branch_library` (when it could be built)."""
    mode = mode or numerics_mode()
    if mode != "pinned":
        return {}
    env = dict(PINNED_ENVIRONMENT)
    if needs_mkl_intel_branch() and (library := mkl_intel_branch_library()) is not None:
        env["LD_PRELOAD"] = _preload(library)
    return env


def load_mkl_intel_branch() -> bool:
    """Pinned, on a CPU that is not Intel's, with torch not loaded yet: load :func:`mkl_intel_branch_library` into
    the global symbol scope, where torch's MKL finds it when it loads. True when it is loaded (or preloaded)."""
    if not needs_mkl_intel_branch():
        return False
    library = mkl_intel_branch_library()
    if library is None or "torch" in sys.modules:
        return library is not None and str(library) in os.environ.get("LD_PRELOAD", "")
    import ctypes

    ctypes.CDLL(str(library), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    return True


def mkl_branch() -> str | None:
    """The CNR branch torch's MKL computes with in this process (``AVX2`` when pinned), read from MKL itself;
    None when torch is not loaded or its MKL cannot be asked (a build without MKL)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    import ctypes

    try:
        lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        code = lib.mkl_serv_cbwr_get(1)  # MKL_CBWR_BRANCH
    except (OSError, AttributeError):
        return None
    return MKL_BRANCHES.get(code, str(code))


def pin_this_process(mode: str | None = None) -> None:
    """Apply ``mode`` here: the variables for libraries not loaded yet, one thread for those already loaded."""
    mode = mode or numerics_mode()
    if mode != "pinned":
        return
    os.environ.update(PINNED_ENVIRONMENT)
    load_mkl_intel_branch()
    if "numpy" in sys.modules or "torch" in sys.modules:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
    torch = sys.modules.get("torch")
    if torch is not None:
        pin_torch(torch, mode)


def pin_torch(torch, mode: str | None = None) -> None:
    """Pinned: one intra-op thread, and oneDNN off. oneDNN's kernels choose their blocking by the CPU (its caches
    as well as its instruction set), which no variable pins: with it on, the U-Net's transposed convolutions run on
    its ``brgconv`` kernels, whose blocking follows the caches (``ONEDNN_VERBOSE=1``). Its direct AVX2 kernels do
    not, and :func:`medeval.models.convolution.conv2d` switches it on for the convolutions that run on them
    alone (stride 1, 3 x 3 or 1 x 1, float32, NCHW). For the others, torch computes a
    convolution's backward, and its forward for a batch under 16, as im2col + MKL matrix products, which
    ``MKL_CBWR`` makes the same on every CPU of the branch (on a CPU that is not Intel's, with
    :func:`load_mkl_intel_branch`); the forward of a batch of 16 or more goes to NNPACK,
    whose only x86-64 kernels are its AVX2/FMA3 ones. NNPACK blocks the input channels (the sum) by the L1 cache's
    size (``input_channels_block_max`` in its ``convolution-output.c``: L1 / (tuple bytes x (mr + nr)), rounded
    down to even), and adds the blocks' partial sums, so a convolution with more input channels than one block
    holds would sum in another order on a CPU with another L1. With an L1 of 32 KiB or more a block holds at
    least 128 channels (Fourier tiles; 146 for 3x3 Winograd), more than any layer of the smoke and default
    profiles (at most 64; the ``gpu`` and ``full`` U-Nets reach 256, on a GPU),
    and the smoke and default books built on an AMD EPYC (32 KiB) were bit-identical to the references built on
    an Intel Xeon (48 KiB). Called by :func:`pin_this_process` and when a chapter kernel first imports torch."""
    if (mode or numerics_mode()) != "pinned":
        return
    torch.set_num_threads(1)
    torch.backends.mkldnn.enabled = os.environ.get("MEDEVAL_ONEDNN") == "1"


def pinned_threads(threads: int) -> int:
    """A grid worker's thread count: 1 when pinned (a reduction's order must not follow the machine's cores)."""
    return 1 if numerics_mode() == "pinned" else threads


def effective_settings() -> dict[str, str]:
    """What this process actually computes with: the mode, torch's CPU capability and threads, the variables."""
    out = {"mode": numerics_mode()}
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        out["torch_threads"] = str(torch.get_num_threads())
        # off under pinned numerics, but for the direct convolutions of medeval.models.convolution
        out["onednn"] = ("on" if torch.backends.mkldnn.enabled
                         else "direct convolutions only" if out["mode"] == "pinned" else "off")
        if (branch := mkl_branch()) is not None:
            out["mkl_branch"] = branch
    for var in PINNED_ENVIRONMENT:
        out[var] = os.environ.get(var, "unset")
    return out


def describe() -> str:
    """One line for a page's provenance: ``pinned (torch AVX2, 1 thread; oneDNN AVX2; MKL AVX2,STRICT; …)``."""
    s = effective_settings()
    torch_part = (f"torch {s['torch_cpu_capability']}, {s['torch_threads']} thread(s), oneDNN {s['onednn']}; "
                  if "torch_cpu_capability" in s else "")
    mkl = s["MKL_CBWR"]
    if s["mode"] == "pinned" and s.get("mkl_branch") not in (None, mkl.split(",")[0]):
        mkl += f" (runs {s['mkl_branch']} here)"
    return (f"{s['mode']} ({torch_part}oneDNN ISA {s['ONEDNN_MAX_CPU_ISA']}; MKL {mkl}; OpenBLAS "
            f"{s['OPENBLAS_CORETYPE']}; OMP threads {s['OMP_NUM_THREADS']})")


def check_pinned() -> list[str]:
    """Where a pinned process does not compute as pinned (a library loaded before the variables were set); empty
    when all is as asked. The notebook setup reports these on the page instead of claiming bit-identity."""
    if numerics_mode() != "pinned":
        return []
    problems = [f"{var}={os.environ.get(var)!r}, expected {value!r}" for var, value in PINNED_ENVIRONMENT.items()
                if os.environ.get(var) != value]
    if "numpy" in sys.modules:
        from numpy._core._multiarray_umath import __cpu_features__ as numpy_features

        above = [f for f in ("X86_V4", "AVX512_ICL", "AVX512_SPR") if numpy_features.get(f)]
        if above:
            problems.append(f"numpy dispatches {', '.join(above)} (numpy was loaded before pinning)")
    torch = sys.modules.get("torch")
    if torch is not None:
        capability = torch.backends.cpu.get_cpu_capability()
        if capability not in ("AVX2", "DEFAULT"):  # DEFAULT: a CPU without AVX2 (pinning cannot raise it)
            problems.append(f"torch computes with {capability}, not AVX2 (torch was loaded before pinning)")
        if torch.get_num_threads() != 1:
            problems.append(f"torch uses {torch.get_num_threads()} threads, not 1")
        if torch.backends.mkldnn.enabled and os.environ.get("MEDEVAL_ONEDNN") != "1":
            problems.append("oneDNN is on")
        expected = PINNED_ENVIRONMENT["MKL_CBWR"].split(",")[0]
        if (branch := mkl_branch()) not in (None, expected):
            why = ""
            if needs_mkl_intel_branch():
                why = (f" (a {cpu_vendor()} CPU: MKL honours MKL_CBWR only on Intel's; " + (
                    "no C compiler was found to build the library that lifts this)"
                    if mkl_intel_branch_library() is None else
                    "the library that lifts this was not loaded before torch: start the process with `medeval "
                    "run`, or call medeval.runtime.numerics.pin_this_process() before importing torch)"))
            problems.append(f"MKL computes on its {branch} branch, not {expected}{why}")
    return problems


#: the bits (SHA-256 prefixes) that each kernel family of :func:`kernel_digests` computes under pinned numerics, the
#: same on every x86-64 CPU with AVX2: recorded on an AMD EPYC with MKL's branch pinned, where the smoke and default
#: books were bit-identical to the references made on an Intel Xeon (``medeval verify``)
KERNEL_BITS = {"conv_im2col": "f8cf5fb0bfb90489", "conv_batch16": "698e8d036343c786",
               "conv_transpose": "302872e6a16911de", "linear": "39f9a82610659ede", "bmm": "c1d87a6c2cf29471",
               "torch_elementwise": "c9863b3c7499d1b2", "numpy_blas": "5f9414156ee4024e",
               "numpy_ufuncs": "0b8a57a901cb6fe3", "onednn_direct_convolution": "7a3be511daa4d728"}


def kernel_digests() -> dict[str, str]:
    """The bits each kernel family the chapters compute with gives on fixed inputs, in this process: a convolution
    of a batch under 16 (im2col + MKL products) and of 16 (forward on NNPACK) with their backward, a transposed
    convolution, the convolutions the models run on oneDNN's direct AVX2 kernels
    (:mod:`medeval.models.convolution`: 3 x 3 and 1 x 1, 136 input channels crossing its 96-channel call), a
    linear layer, a batched product, torch's vectorised element-wise kernels and reductions (with
    MKL's vector exp), OpenBLAS through numpy, numpy's own loops. Compared with :data:`KERNEL_BITS` by
    :func:`check_kernels`."""
    import hashlib

    import numpy as np
    import torch

    pin_torch(torch)
    torch.manual_seed(0)
    parts: dict[str, str] = {}

    def record(name, *arrays):
        data = b"".join(np.ascontiguousarray(a.detach().numpy() if hasattr(a, "detach") else a).tobytes()
                        for a in arrays)
        parts[name] = hashlib.sha256(data).hexdigest()[:16]

    x = torch.randn(4, 16, 24, 24, requires_grad=True)
    conv = torch.nn.Conv2d(16, 48, 3, padding=1)
    y = conv(x)
    y.square().mean().backward()
    record("conv_im2col", y, x.grad, conv.weight.grad, conv.bias.grad)
    x2 = torch.randn(16, 64, 20, 20, requires_grad=True)
    conv2 = torch.nn.Conv2d(64, 32, 3, padding=1)
    y2 = conv2(x2)
    y2.square().mean().backward()
    record("conv_batch16", y2, x2.grad, conv2.weight.grad)
    record("conv_transpose", torch.nn.ConvTranspose2d(32, 16, 2, stride=2)(y2.detach()))
    record("linear", torch.nn.Linear(300, 70)(torch.randn(64, 300)).tanh())
    record("bmm", torch.bmm(torch.randn(5, 40, 90), torch.randn(5, 90, 30)))
    z = torch.randn(10_000)
    record("torch_elementwise", z.exp(), z.sigmoid(), torch.log_softmax(z.reshape(100, 100), 1), z.sum(),
           z.cumsum(0))
    rng = np.random.default_rng(0)
    a = rng.random((300, 300))
    record("numpy_blas", a @ a, np.linalg.solve(a + 300 * np.eye(300), a[:, 0]))
    record("numpy_ufuncs", np.exp(a), np.log1p(a), np.sort(rng.random(10_000)), a.sum(0))
    from medeval.models.convolution import Conv2d

    torch.manual_seed(1)  # its own inputs: the families above keep theirs
    direct = []
    for c_in, c_out, k, side in ((3, 8, 3, 24), (16, 24, 3, 20), (136, 16, 3, 6), (8, 3, 1, 24)):
        x3 = torch.randn(8, c_in, side, side, requires_grad=True)
        layer = Conv2d(c_in, c_out, k, padding=k // 2)
        y3 = layer(x3)
        y3.square().mean().backward()
        direct += [y3, x3.grad, layer.weight.grad, layer.bias.grad]
    record("onednn_direct_convolution", *direct)
    return parts


def check_kernels(extra_environment: dict[str, str] | None = None, mode: str = "pinned") -> dict:
    """Run :func:`kernel_digests` in a fresh interpreter of ``mode`` (started as ``medeval run`` starts a kernel,
    with ``extra_environment`` on top) and compare with :data:`KERNEL_BITS`: ``{"parts", "moved", "problems"}``,
    where ``moved`` names the kernel families whose bits differ here and ``problems`` is :func:`check_pinned`
    there. A second's check that this machine will compute the reference's numbers, before a build of minutes."""
    import json

    env = {k: v for k, v in os.environ.items() if k not in PINNED_ENVIRONMENT and k != "LD_PRELOAD"}
    env.update(numerics_environment(mode), MEDEVAL_NUMERICS=mode)
    env.update(extra_environment or {})
    code = ("import json; from medeval.runtime import numerics; "
            "print(json.dumps({'parts': numerics.kernel_digests(), 'problems': numerics.check_pinned()}))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"the kernel check failed:\n{out.stderr[-3000:]}")
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    seen["moved"] = sorted(k for k, v in seen["parts"].items() if KERNEL_BITS.get(k) != v)
    return seen
