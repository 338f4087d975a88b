"""Pinned numerics: the same numbers whatever the machine's libraries would pick, and the mode on every record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from medeval.runtime import numerics
from medeval.runtime.params import ParameterError, get_chapter

# the kernel families the chapters compute with (medeval.runtime.numerics.kernel_digests), and the settings in force
PROBE = ("import json; from medeval.runtime import numerics; "
         "print(json.dumps({'digest': numerics.kernel_digests(), 'settings': numerics.effective_settings()}))")


def _probe(outside: dict[str, str], mode: str) -> dict:
    """Run the probe in a fresh interpreter whose environment is ``outside`` (what the user had) with the mode's
    variables applied on top, as ``medeval run`` starts a kernel."""
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED_ENVIRONMENT}
    env.update(outside, MEDEVAL_NUMERICS=mode)
    env.update(numerics.numerics_environment(mode))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True,
                         timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_pinned_runs_compute_the_same_bits_whatever_the_unpinned_settings_were():
    """The user's own instruction-set caps, MKL branch and thread counts are overridden in a pinned kernel: the
    same bits come out (on this machine, several of these settings change the numbers when not pinned)."""
    hostile = [{}, {"ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "2"},
               {"ATEN_CPU_CAPABILITY": "default", "MKL_NUM_THREADS": "2", "OPENBLAS_CORETYPE": "Prescott"}]
    seen = [_probe(outside, "pinned") for outside in hostile]
    assert all(s["digest"] == seen[0]["digest"] for s in seen), seen
    for s in seen:
        assert s["settings"]["mode"] == "pinned" and s["settings"]["torch_threads"] == "1"
        assert s["settings"]["onednn"] == "direct convolutions only"
        assert s["settings"]["torch_cpu_capability"] in ("AVX2", "DEFAULT")  # DEFAULT: a CPU without AVX2


def test_the_mode_is_read_from_the_environment_and_a_bad_value_is_refused(monkeypatch):
    monkeypatch.delenv("MEDEVAL_NUMERICS", raising=False)
    assert numerics.numerics_mode() == "pinned"
    assert numerics.numerics_environment()["MKL_CBWR"] == "AVX2,STRICT"
    monkeypatch.setenv("MEDEVAL_NUMERICS", "Native")
    assert numerics.numerics_mode() == "native" and numerics.numerics_environment() == {}
    monkeypatch.setenv("MEDEVAL_NUMERICS", "fast")
    with pytest.raises(ParameterError, match="MEDEVAL_NUMERICS='fast': expected one of pinned, native"):
        numerics.numerics_mode()


def test_pinned_and_native_runs_never_share_a_cache_entry(monkeypatch):
    from medeval.runtime.cache_keys import cache_key
    from medeval.runtime.params import resolve_params

    chapter = get_chapter("A2-rerun")
    params = resolve_params("A2-rerun", "smoke").model_dump(mode="json")
    monkeypatch.setenv("MEDEVAL_NUMERICS", "pinned")
    pinned, parts = cache_key(chapter, "smoke", params)
    monkeypatch.setenv("MEDEVAL_NUMERICS", "native")
    native, _ = cache_key(chapter, "smoke", params)
    assert pinned != native and parts["numerics"] == "pinned"


def test_a_bad_mode_is_refused_before_a_kernel_starts(monkeypatch, tmp_path):
    from medeval.runtime.execution import run_chapter

    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path))
    monkeypatch.setenv("MEDEVAL_NUMERICS", "turbo")
    with pytest.raises(ParameterError, match="MEDEVAL_NUMERICS"):
        run_chapter("A2-rerun", "smoke")
    assert not any(tmp_path.rglob("meta.json"))


def test_a_chapter_setup_does_not_change_the_environment_of_its_process(monkeypatch, tmp_path):
    """Pinning after numpy loaded would pin only the processes started later (a kernel computing with AVX-512
    numpy beside workers with AVX2 numpy): setup only checks, and the page says what is not pinned."""
    from medeval.runtime import notebook

    for var in numerics.PINNED_ENVIRONMENT:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEDEVAL_RESULTS_FILE", str(tmp_path / "r.json"))
    before = dict(os.environ)
    notebook.setup("A2-rerun", {"profile": "smoke"})
    assert dict(os.environ) == before
    assert any("MKL_CBWR" in p for p in numerics.check_pinned())


def test_check_pinned_names_what_is_not_pinned(monkeypatch):
    monkeypatch.setenv("MEDEVAL_NUMERICS", "pinned")
    for var, value in numerics.PINNED_ENVIRONMENT.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    problems = numerics.check_pinned()
    assert any("MKL_CBWR='AUTO'" in p for p in problems)
    monkeypatch.setenv("MEDEVAL_NUMERICS", "native")
    assert numerics.check_pinned() == []


# what a pinned process's MKL says it computes with, and what the page would say is not pinned
BRANCH_PROBE = r"""
import json, sys
from medeval.runtime import numerics
if sys.argv[1] == "pin-first":
    numerics.pin_this_process("pinned")
import torch
numerics.pin_torch(torch)
torch.randn(8, 8) @ torch.randn(8, 8)
print(json.dumps({"branch": numerics.mkl_branch(), "problems": numerics.check_pinned(),
                  "describe": numerics.describe()}))
"""


def _branch_probe(how: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINNED_ENVIRONMENT and k != "LD_PRELOAD"}
    env["MEDEVAL_NUMERICS"] = "pinned"
    if how == "started":  # as `medeval run` starts a kernel and a kernel its grid workers
        env.update(numerics.numerics_environment("pinned"))
    out = subprocess.run([sys.executable, "-c", BRANCH_PROBE, how], env=env, capture_output=True, text=True,
                         check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("how", ["started", "pin-first"])
def test_a_pinned_process_computes_on_mkls_avx2_branch_whatever_the_cpus_vendor(how):
    """MKL takes ``MKL_CBWR=AVX2`` on Intel CPUs only (on an AMD EPYC it ran its AUTO branch, and the smoke book's
    torch chapters computed other numbers than on the reference Xeon). A kernel started pinned, and a process
    that pins itself before torch loads (a Dask worker), compute on the AVX2 branch on either vendor."""
    seen = _branch_probe(how)
    if seen["branch"] is None:
        pytest.skip("this torch has no MKL to ask")
    if numerics.needs_mkl_intel_branch() and numerics.mkl_intel_branch_library() is None:
        pytest.fail(f"a {numerics.cpu_vendor()} CPU and no C compiler to build the library that pins MKL's branch")
    assert seen["branch"] == "AVX2", seen
    assert seen["problems"] == [], seen
    assert "MKL AVX2,STRICT;" in seen["describe"], seen


def test_check_pinned_and_the_provenance_name_the_branch_mkl_runs(monkeypatch):
    monkeypatch.setenv("MEDEVAL_NUMERICS", "pinned")
    for var, value in numerics.PINNED_ENVIRONMENT.items():
        monkeypatch.setenv(var, value)
    pytest.importorskip("torch")
    monkeypatch.setattr(numerics, "mkl_branch", lambda: "AUTO")
    monkeypatch.setattr(numerics, "needs_mkl_intel_branch", lambda: True)
    monkeypatch.setattr(numerics, "cpu_vendor", lambda: "AuthenticAMD")
    monkeypatch.setattr(numerics, "mkl_intel_branch_library", lambda: None)
    problems = numerics.check_pinned()
    assert any(p.startswith("MKL computes on its AUTO branch, not AVX2 (a AuthenticAMD CPU") and "no C compiler" in p
               for p in problems), problems
    monkeypatch.setattr(numerics, "mkl_intel_branch_library", lambda: Path("/x.so"))
    assert any("was not loaded before torch" in p for p in numerics.check_pinned())
    assert "MKL AVX2,STRICT (runs AUTO here);" in numerics.describe()
    monkeypatch.setattr(numerics, "mkl_branch", lambda: "AVX2")
    assert not any("MKL computes" in p for p in numerics.check_pinned())


def test_the_branch_library_is_preloaded_only_where_mkl_needs_it_and_keeps_the_callers(monkeypatch, tmp_path):
    library = tmp_path / "lib.so"
    monkeypatch.setattr(numerics, "mkl_intel_branch_library", lambda: library)
    monkeypatch.setenv("LD_PRELOAD", f"/opt/a.so:{library}")
    monkeypatch.setattr(numerics, "needs_mkl_intel_branch", lambda: True)
    assert numerics.numerics_environment("pinned")["LD_PRELOAD"] == f"{library} /opt/a.so"
    assert numerics.numerics_environment("native") == {}
    monkeypatch.setattr(numerics, "needs_mkl_intel_branch", lambda: False)
    assert "LD_PRELOAD" not in numerics.numerics_environment("pinned")


def test_the_branch_library_exports_the_function_mkl_asks():
    import ctypes

    library = numerics.mkl_intel_branch_library()
    if library is None:
        pytest.skip("no C compiler here")
    assert ctypes.CDLL(str(library)).mkl_serv_intel_cpu_true() == 1


def test_the_pinned_kernels_compute_the_same_bits_on_every_cpu():
    """The promise of pinned numerics, checked in seconds on whatever machine runs the suite: each kernel family
    the chapters use gives the recorded bits (``medeval verify --kernels``). Before MKL's branch was pinned on
    non-Intel CPUs, MKL's vector exp (``torch_elementwise``) gave other bits on the AMD EPYC, and the numbers of
    five chapters moved with it (two chapters' verdicts in the default book)."""
    seen = numerics.check_kernels()
    assert seen["problems"] == [], seen["problems"]
    assert not seen["moved"], (f"on this CPU ({numerics.cpu_vendor()}) these kernels give other bits than "
                               f"recorded: {seen['moved']}; the chapters' numbers will differ from results/reference")
    assert set(seen["parts"]) == set(numerics.KERNEL_BITS)


def test_the_kernel_check_sees_a_kernel_that_computes_otherwise():
    """The check can fail: MKL's COMPATIBLE branch (SSE2) gives other bits in every MKL product, and the page
    would say MKL is not on its pinned branch."""
    seen = numerics.check_kernels({"MKL_CBWR": "COMPATIBLE,STRICT"})
    if not seen["parts"] or "linear" not in seen["parts"]:
        pytest.skip("no torch here")
    assert {"conv_im2col", "linear", "bmm"} <= set(seen["moved"]), seen
    assert "numpy_blas" not in seen["moved"]
    assert any("MKL_CBWR" in p for p in seen["problems"])


def test_the_kernel_check_sees_onednn_on_another_instruction_set():
    """The direct convolutions' bits follow oneDNN's instruction set (AVX-512 kernels sum in 16-channel blocks),
    which is why a pinned process caps it at AVX2; nothing else moves with it."""
    seen = numerics.check_kernels({"ONEDNN_MAX_CPU_ISA": "SSE41"})
    assert seen["moved"] == ["onednn_direct_convolution"], seen
