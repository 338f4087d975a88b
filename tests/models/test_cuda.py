"""The CUDA probe answers without loading torch where no GPU can be there, and asks torch everywhere else."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = ("import sys\nimport medeval.models.cuda as cuda\ncuda.CUDA_DEVICE_FILES = ({files!r},)\n"
         "name = cuda.cuda_device_name()\nprint(repr(name), 'torch' in sys.modules)\n")


def probe(files: str) -> tuple[str, bool]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(files=files)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    name, loaded = out.stdout.split()
    return name, loaded == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the device files are Linux's")
def test_without_a_driver_device_file_torch_is_not_loaded(tmp_path):
    assert probe(str(tmp_path / "no-such-device")) == ("None", False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the device files are Linux's")
def test_with_a_driver_device_file_torch_is_asked(tmp_path):
    import torch

    device = tmp_path / "nvidiactl"
    device.touch()
    name, loaded = probe(str(device))
    assert loaded
    assert name == (repr(torch.cuda.get_device_name(0)) if torch.cuda.is_available() else "None")


def test_a_loaded_torch_is_asked_whatever_the_device_files(tmp_path, monkeypatch):
    """With torch loaded, its answer is taken even where no device file is seen (a stand-in GPU here)."""
    import torch

    from medeval.models import cuda

    monkeypatch.setattr(cuda, "CUDA_DEVICE_FILES", (str(tmp_path / "no-such-device"),))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "Stand-in GPU")
    assert cuda.cuda_device_name() == "Stand-in GPU"
