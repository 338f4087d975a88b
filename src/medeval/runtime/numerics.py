"""The same numbers on any x86-64 CPU: the numerical libraries' code paths and thread counts, pinned.

torch, MKL, oneDNN and OpenBLAS each pick their kernels by the instruction sets the CPU offers (AVX-512 and AMX
on one Xeon, AVX2 on an older EPYC), and a parallel reduction's order follows the thread count. The same commit
then computes different floating-point numbers on different machines, and a verdict that sits near its threshold
can move. Measured on Chapter 1's smoke run (188 recorded values; ``benchmarks/RESULTS.md``): oneDNN's instruction
set alone changes 21 of them, MKL's code path 13.

``pinned`` (the default) sets, in every chapter kernel and grid worker, before the libraries load:

- ``ATEN_CPU_CAPABILITY=avx2``: torch's own vectorised kernels (reductions, activations);
- ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN's JIT kernels, where oneDNN is used at all (it is switched off, below);
- ``MKL_CBWR=AVX2,STRICT``: MKL's conditional numerical reproducibility branch (matrix products, the
  convolutions' im2col products), the same on Intel and compatible processors;
- ``OPENBLAS_CORETYPE=Haswell``: OpenBLAS's kernels (numpy, scipy, scikit-learn);
- ``NPY_DISABLE_CPU_FEATURES=X86_V4 AVX512_ICL AVX512_SPR``: numpy's own loops (ufuncs, sorting) at the AVX2 level;
- ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` = 1, and one torch intra-op thread;
- torch's oneDNN backend off (:func:`pin_torch`): convolutions become torch's im2col + MKL products.

One thread per process costs little: the chapters' grids run one process per core. oneDNN off costs most where
convolutions dominate (chapter 04a's smoke run: 17.7 s with oneDNN, 21.5 s without; ``benchmarks/RESULTS.md``). ``MEDEVAL_NUMERICS=native``
opts out (each library's fastest path and thread count); every page's provenance says which mode ran, and the
mode is part of every cache key, so the two never share cached results.
"""

from __future__ import annotations

import os
import sys

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


def numerics_environment(mode: str | None = None) -> dict[str, str]:
    """The variables a kernel or worker of ``mode`` starts with (none for ``native``)."""
    mode = mode or numerics_mode()
    return dict(PINNED_ENVIRONMENT) if mode == "pinned" else {}


def pin_this_process(mode: str | None = None) -> None:
    """Apply ``mode`` here: the variables for libraries not loaded yet, one thread for those already loaded."""
    mode = mode or numerics_mode()
    if mode != "pinned":
        return
    os.environ.update(PINNED_ENVIRONMENT)
    if "numpy" in sys.modules or "torch" in sys.modules:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
    torch = sys.modules.get("torch")
    if torch is not None:
        pin_torch(torch, mode)


def pin_torch(torch, mode: str | None = None) -> None:
    """Pinned: one intra-op thread, and oneDNN off. oneDNN's kernels choose their blocking by the CPU (its caches
    as well as its instruction set), which no variable pins: with it on, the U-Net's transposed convolutions run on
    its ``brgconv`` kernels, whose blocking follows the caches (``ONEDNN_VERBOSE=1``). Without it, torch computes a
    convolution's backward, and its forward for a batch under 16, as im2col + MKL matrix products, which
    ``MKL_CBWR`` makes the same on every CPU of the branch; the forward of a batch of 16 or more goes to NNPACK,
    whose only x86-64 kernels are its AVX2/FMA3 ones. NNPACK blocks the input channels (the sum) by the L1 cache's
    size (``input_channels_block_max`` in its ``convolution-output.c``), so a convolution with more input channels
    than one block holds may sum them in another order on a CPU with another L1 cache; not measured here, where one
    CPU type was at hand. Called by :func:`pin_this_process` and when a chapter kernel first imports torch."""
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
        out["onednn"] = "on" if torch.backends.mkldnn.enabled else "off"
    for var in PINNED_ENVIRONMENT:
        out[var] = os.environ.get(var, "unset")
    return out


def describe() -> str:
    """One line for a page's provenance: ``pinned (torch AVX2, 1 thread; oneDNN AVX2; MKL AVX2,STRICT; …)``."""
    s = effective_settings()
    torch_part = (f"torch {s['torch_cpu_capability']}, {s['torch_threads']} thread(s), oneDNN {s['onednn']}; "
                  if "torch_cpu_capability" in s else "")
    return (f"{s['mode']} ({torch_part}oneDNN ISA {s['ONEDNN_MAX_CPU_ISA']}; MKL {s['MKL_CBWR']}; OpenBLAS "
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
    return problems
