"""A real browser for the tests and the docs' screenshots: Debian's chromium, headless, driven over the
DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ending in a NUL byte, commands on the
child's fd 3, answers and events on its fd 4), in the standard library alone.

The window is set by Emulation.setDeviceMetricsOverride, not --window-size: headless Chromium lays a page out
at least 500 px wide whatever the window, so a 360 px screenshot of it would be a crop, not a phone's view.
Every request the page makes is paused (Fetch) and recorded before it may go; only the page's own file and
data: URLs are let through, so a page that asks the network for anything is caught, and loads nothing."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

TIMEOUT = 60.0  # seconds for any one answer: a loaded CI machine is slow, a hung browser is not waited for


def find() -> str | None:
    """Chromium's command, or None where none is installed."""
    return next((found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None)


class Browser:
    """One headless Chromium, one page (tab) of it."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="gpt2emb-chromium-")
        to_child, from_us = os.pipe()
        to_us, from_child = os.pipe()
        # above 10, so that the shell's 3< and 4> cannot overwrite one before it is duplicated (bash: dash
        # takes one digit after &); no preexec_fn, which the fake Hub's threads make unsafe
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]
        os.close(to_child)
        os.close(from_child)
        command, bash = find(), shutil.which("bash")
        if command is None or bash is None:
            raise RuntimeError("no chromium or no bash on PATH")
        args = [
            command,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--mute-audio",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            [bash, "-c", f'exec "$@" 3<&{high[0]} 4>&{high[1]}', "bash", *args],
            pass_fds=high,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fd in high:
            os.close(fd)
        self.out, self.inp = from_us, to_us
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.requests: list[str] = []
        self.page_url = ""
        try:
            targets = self.call("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
                "sessionId"
            ]
            self.call("Page.enable", session=True)
            self.call("Runtime.enable", session=True)
            self.call("Fetch.enable", session=True, patterns=[{"urlPattern": "*"}])
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self.out, self.inp):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method: str, session: bool = False, **params: Any) -> int:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        return self.next_id

    def receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.inp], [], [], left)[0]:
                raise RuntimeError("chromium did not answer in time")
            chunk = os.read(self.inp, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe (it exited)")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        answer: dict[str, Any] = json.loads(message)
        if answer.get("method") == "Fetch.requestPaused":
            self.paused(answer["params"])
        elif "method" in answer:
            self.events.append(answer)
        return answer

    def paused(self, params: dict[str, Any]) -> None:
        """A request the page makes: recorded; let through only when it is the page itself (or data:)."""
        url = params["request"]["url"]
        self.requests.append(url)
        own = url == self.page_url or url.startswith("data:")
        method = "Fetch.continueRequest" if own else "Fetch.failRequest"
        extra = {} if own else {"errorReason": "BlockedByClient"}
        self.send(method, session=True, requestId=params["requestId"], **extra)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        sent = self.send(method, session, **params)
        deadline = time.monotonic() + TIMEOUT
        while True:
            answer = self.receive(deadline)
            if answer.get("id") == sent:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def wait_for(self, event: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not any(e["method"] == event for e in self.events):
            self.receive(deadline)

    def open(self, path: Path, width: int, height: int = 800) -> None:
        """Show the file at path in a window width CSS pixels wide, and wait until it has loaded."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.page_url = path.resolve().as_uri()
        self.events.clear()
        self.requests.clear()
        self.call("Page.navigate", session=True, url=self.page_url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """A script's value, run in the page (JSON-able values only)."""
        answer = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"the script failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self, target: Path) -> tuple[int, int]:
        """The whole page (not only the window) as a PNG at target; its width and height in pixels."""
        width, height = self.evaluate(
            "[document.documentElement.clientWidth, document.documentElement.scrollHeight]"
        )
        shot = self.call(
            "Page.captureScreenshot",
            session=True,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        )
        target.write_bytes(base64.b64decode(shot["data"]))
        return width, height
