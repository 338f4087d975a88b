"""A small driver for headless Chromium over the DevTools protocol (Debian's ``chromium`` package, a websocket).

One browser opens page after page, records what the console reports (exceptions, console errors, failed loads),
evaluates an audit script in the page and takes a screenshot: what a reader would see, without a network.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """``with Browser(profile_dir) as b: report = b.open(url, audit_js, screenshot=path)``."""

    def __init__(self, profile_dir: Path, width: int = 1400, height: int = 1000):
        self.profile_dir, self.width, self.height = Path(profile_dir), width, height
        self._ids = itertools.count(1)

    def __enter__(self):
        import websocket

        port = _free_port()
        self.proc = subprocess.Popen(
            [chromium_path(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
             f"--user-data-dir={self.profile_dir}", f"--remote-debugging-port={port}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    targets = [t for t in json.load(r) if t.get("type") == "page"]
                if targets:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.proc.kill()
                raise RuntimeError("chromium did not start its DevTools endpoint within 30 s")
            time.sleep(0.2)
        self.ws = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=60,
                                              suppress_origin=True)
        self.events: list[dict] = []
        for method in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(method)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
        return self

    def __exit__(self, *exc):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def call(self, method: str, params: dict | None = None) -> dict:
        msg_id = next(self._ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def _wait_for(self, method: str, timeout: float = 60) -> None:
        if any(e.get("method") == method for e in self.events):
            return
        deadline = time.time() + timeout
        while time.time() < deadline:
            msg = json.loads(self.ws.recv())
            self.events.append(msg)
            if msg.get("method") == method:
                return
        raise TimeoutError(f"no {method} within {timeout} s")

    def open(self, url: str, audit_js: str, screenshot: Path | None = None, max_height: int = 16000,
             full_page: bool = True) -> dict:
        """Load ``url``, run ``audit_js`` (an expression returning a JSON string, may be async) and return
        ``{"audit": ..., "console_errors": [...]}``; write a PNG to ``screenshot`` at half scale (readable, and a
        quarter of the pixels to encode: the whole audit took 31 s instead of 42 s): the full page (cut at
        ``max_height``), or the first screen with ``full_page=False`` (a full-page capture costs about 0.6 s)."""
        self.events = []
        self.call("Page.navigate", {"url": url})
        self._wait_for("Page.loadEventFired")
        result = self.call("Runtime.evaluate", {"expression": audit_js, "awaitPromise": True, "returnByValue": True,
                                                "timeout": 30000})
        if "exceptionDetails" in result:
            raise RuntimeError(f"audit script failed on {url}: {result['exceptionDetails']}")
        audit = json.loads(result["result"]["value"])
        if screenshot is not None:
            height = min(int(audit.get("pageHeight", self.height)), max_height) if full_page else self.height
            shot = self.call("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": full_page,
                "clip": {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 0.5}})
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        return {"audit": audit, "console_errors": console_errors(self.events)}


def console_errors(events: list[dict]) -> list[str]:
    """Uncaught exceptions, ``console.error`` calls and error log entries (failed loads) among DevTools events."""
    errors = []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            errors.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            errors.append(f"{entry.get('text', '')} {entry.get('url', '')}".strip())
    return errors


def artefact_dir() -> Path:
    """Where the browser test keeps its screenshots (``MEDEVAL_TEST_ARTEFACTS`` or ``_build/test-artefacts``)."""
    root = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("MEDEVAL_TEST_ARTEFACTS", root / "_build" / "test-artefacts")) / "browser"
