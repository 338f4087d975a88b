"""Headless Chromium (Debian's package) renders the built book: navigation, a figure and typeset math."""

import os
import re
import shutil
import subprocess

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.book, pytest.mark.slow]


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs Debian's chromium package")
        pytest.skip("chromium is not installed (CI installs it)")
    return path


def render_dom(page, tmp_path) -> str:
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=20000", "--dump-dom", page.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_index_shows_navigation(smoke_book, tmp_path):
    html, _, _ = smoke_book
    dom = render_dom(html / "intro.html", tmp_path)
    nav = re.search(r'<nav[^>]*class="[^"]*bd-docs-nav[^"]*".*?</nav>', dom, re.S)
    assert nav, "the sidebar navigation is rendered"
    assert "A2-rerun.html" in nav.group(0) and "scorecard.html" in nav.group(0)


def test_notebook_page_shows_figure_and_typeset_math(smoke_book, tmp_path):
    html, _, _ = smoke_book
    page = html / "appendix" / "A2-rerun.html"
    dom = render_dom(page, tmp_path)
    images = re.findall(r'<img[^>]+src="([^"]+\.png)"', dom)
    assert images, "the page shows a figure"
    assert all((page.parent / src).resolve().exists() for src in images if not src.startswith("data:"))
    assert "<mjx-container" in dom, "MathJax (served locally) typeset the math"
