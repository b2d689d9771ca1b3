"""Headless Chromium for the tests that look at a page as a person would (the Dagster UI,
a snapshot store's catalogue): Debian's ``chromium`` with no sandbox, no GPU, no network
of its own beyond the page asked for, and a throw-away profile."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

__all__ = ["find_chromium", "chromium_argv", "dump_dom", "DevTools"]


def find_chromium() -> str | None:
    """The Chromium executable, or None (``scripts/install-system-deps.sh`` installs it)."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_argv(exe: str, profile: str) -> list[str]:
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
            "--virtual-time-budget=25000"]


def dump_dom(exe: str, url: str, *, window: str = "1400,1000", timeout: float = 120) -> str:
    """The DOM of ``url`` after its scripts ran, as Chromium serialises it."""
    profile = tempfile.mkdtemp(prefix="taxoforge-chromium-")
    try:
        out = subprocess.run(chromium_argv(exe, profile) + [f"--window-size={window}", "--dump-dom", url],
                             capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert out.returncode == 0, f"chromium failed on {url}: {out.stderr[-2000:]}"
    return out.stdout


class DevTools:
    """Headless Chromium driven over the Chrome DevTools Protocol (one page, a websocket on
    127.0.0.1): navigate, evaluate JavaScript (awaiting promises), type, screenshot. What the
    page does is measured in the page itself (``performance``), so the protocol's own latency
    never enters a figure.

    >>> with DevTools(find_chromium()) as page:                      # doctest: +SKIP
    ...     page.navigate("http://127.0.0.1:8000/index.html")
    ...     page.evaluate("document.title")
    """

    def __init__(self, exe: str, *, window: str = "1400,1000", timeout: float = 60) -> None:
        import json
        import os
        import time
        import urllib.request

        from websockets.sync.client import connect

        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="taxoforge-chromium-")
        argv = [a for a in chromium_argv(exe, self.profile) if not a.startswith("--virtual-time-budget")]
        self.proc = subprocess.Popen(argv + [f"--window-size={window}", "--remote-debugging-address=127.0.0.1",
                                             "--remote-debugging-port=0", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + timeout
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(open(port_file).read().split()[0])
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout))
        url = next(p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page")
        self.ws = connect(url, max_size=None, open_timeout=timeout)
        self._id = 0
        self.events: list[dict] = []
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Network.enable")

    def send(self, method: str, **params):
        """Call one protocol method; its result (protocol errors raise ``RuntimeError``)."""
        import json

        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=self.timeout))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str) -> dict:
        """The next event ``method`` (those already received first)."""
        import json

        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            msg = json.loads(self.ws.recv(timeout=self.timeout))
            if msg.get("method") == method:
                return msg
            self.events.append(msg)

    def navigate(self, url: str, *, cache: bool = False) -> None:
        """Open ``url`` (with the HTTP cache off unless ``cache``) and wait for its load event."""
        self.send("Network.setCacheDisabled", cacheDisabled=not cache)
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        res = self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression[:80]}…: {res['exceptionDetails']}")
        return res["result"].get("value")

    def screenshot(self, path) -> None:
        """A PNG of the viewport."""
        import base64
        from pathlib import Path

        Path(path).write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "DevTools":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
