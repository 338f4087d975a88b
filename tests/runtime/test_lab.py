"""`make lab` (issue #15): starts as root and as a normal user, opens the jupytext sources as notebooks, and
opens student notebooks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _make_lab_command(user_id: str) -> str:
    proc = subprocess.run(["make", "-n", "-W", ".venv/bin/medeval", "lab", f"USER_ID={user_id}"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return next(line for line in proc.stdout.splitlines() if "jupyter lab" in line)


def test_lab_allows_root_only_for_root():
    assert "--allow-root" in _make_lab_command("0")
    assert "--allow-root" not in _make_lab_command("1000")


def test_lab_settings_open_python_sources_as_notebooks():
    overrides = json.loads((ROOT / "config" / "jupyterlab-overrides.json").read_text())
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["python"] == "Jupytext Notebook"
    assert "ipynb,py:percent" in (ROOT / "notebooks" / "jupytext.toml").read_text()
    assert "notebooks/*.ipynb" in (ROOT / ".gitignore").read_text()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_lab_serves_chapters_and_student_notebooks_as_notebooks(tmp_path):
    student = ROOT / "_build" / "test-lab" / "student.ipynb"
    student.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("ex_value = ...")]), student)
    port, token = _free_port(), "medeval-test"
    args = f"--port={port} --ServerApp.token={token} --ServerApp.ip=127.0.0.1 --no-browser"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    proc = subprocess.Popen(["make", "-W", ".venv/bin/medeval", "lab", f"LAB_ARGS={args}"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                _get(f"{base}/api/status?token={token}")
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"make lab exited: {proc.stderr.read().decode()[-2000:]}")
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s")
        chapter = _get(f"{base}/api/contents/notebooks/03-eve.py?type=notebook&content=1&token={token}")
        assert chapter["type"] == "notebook"
        assert any("(ch-eve)=" in "".join(c["source"]) for c in chapter["content"]["cells"])
        opened = _get(f"{base}/api/contents/_build/test-lab/student.ipynb?content=1&token={token}")
        assert opened["type"] == "notebook" and opened["content"]["cells"][0]["source"] == "ex_value = ..."
        settings = _get(f"{base}/lab/api/settings/@jupyterlab/docmanager-extension:plugin?token={token}")
        assert settings["schema"]["properties"]["defaultViewers"]["default"]["python"] == "Jupytext Notebook"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(student.parent, ignore_errors=True)
