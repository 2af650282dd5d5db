"""Drive a headless Chromium over the DevTools protocol, on a pipe.

Chromium started with --remote-debugging-pipe reads protocol commands on
its descriptor 3 and writes replies and events on descriptor 4, each
message a JSON object ended by a NUL byte: no WebSocket library needed.

    with Browser() as b:          # Browser.skip (exit 77) if none
        page = b.open("file:///tmp/x.svg")
        page.eval("1 + 1")         # -> 2
        page.errors                # console errors, uncaught exceptions
        page.screenshot("x.png")

The binary is $CHROMIUM, else chromium, chromium-browser or
google-chrome on PATH.
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

SKIP = 77


class BrowserError(Exception):
    pass


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Page:
    def __init__(self, browser, session):
        self.b = browser
        self.session = session
        self.errors = []

    def call(self, method, params=None, timeout=30):
        return self.b.call(method, params, session=self.session,
                           timeout=timeout)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr,
                                           "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path, width=1280, height=800):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": False})
        r = self.call("Page.captureScreenshot", {"format": "png"})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def mouse(self, kind, x, y, clicks=1, modifiers=0, buttons=None):
        """kind: mouseMoved, mousePressed or mouseReleased.  modifiers:
        1 Alt, 2 Ctrl, 4 Meta, 8 Shift; buttons: those held (1 left)."""
        params = {"type": kind, "x": x, "y": y, "modifiers": modifiers}
        if kind != "mouseMoved":
            params.update(button="left", clickCount=clicks)
        if buttons is not None:
            params["buttons"] = buttons
        self.call("Input.dispatchMouseEvent", params)

    def wheel(self, x, y, dy, dx=0, modifiers=0):
        self.call("Input.dispatchMouseEvent",
                  {"type": "mouseWheel", "x": x, "y": y, "deltaX": dx,
                   "deltaY": dy, "modifiers": modifiers})

    def requests_now(self):
        """The page's requests, with those made since it loaded."""
        self.b.call("Runtime.evaluate", {"expression": "0"},
                    session=self.session)
        self.requests += self.b.page_requests(self.session)
        return self.requests

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)


class Browser:
    def __init__(self, binary=None):
        self.binary = binary or find_chromium()
        self.proc = None
        self.next_id = 0
        self.buf = b""
        self.events = []

    def __enter__(self):
        if not self.binary:
            raise BrowserError("no chromium found")
        self.profile = tempfile.mkdtemp(prefix="pt-chromium-")
        to_chrome_r, self.w = os.pipe()
        self.r, from_chrome_w = os.pipe()
        # The child sees its ends as descriptors 3 and 4 (which may be
        # where the pipes are in this process: move them out of the way).
        def fds():
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self.proc = subprocess.Popen(
            [self.binary, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run",
             "--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.r)
        os.close(self.w)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline):
        import select
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from chromium")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, session, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.events):
                if m.get("method") == method and \
                   m.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._read(deadline))

    def open(self, url, timeout=60, network=False):
        """A new tab at url, loaded; its errors so far in page.errors.
        With network, the URLs of the requests it made in page.requests
        (page.requests_now() adds those made since)."""
        target = self.call("Target.createTarget",
                           {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log") + \
                (("Network",) if network else ()):
            page.call(domain + ".enable")
        page.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", session, timeout)
        page.requests = self.page_requests(session)
        page.errors = self.page_errors(session)
        return page

    def page_requests(self, session):
        """URLs a session asked for (Network.requestWillBeSent, and any
        load that failed), taken from the events seen so far."""
        out, keep = [], []
        for m in self.events:
            meth, p = m.get("method"), m.get("params", {})
            if m.get("sessionId") == session and \
                    meth == "Network.requestWillBeSent":
                out.append(p["request"]["url"])
            elif m.get("sessionId") == session and \
                    meth == "Network.loadingFailed":
                out.append("failed: " + p.get("errorText", ""))
            else:
                keep.append(m)
        self.events = keep
        return out

    def page_errors(self, session):
        """Console errors and exceptions of a session, taken from the
        events seen so far."""
        out, keep = [], []
        for m in self.events:
            meth, p = m.get("method"), m.get("params", {})
            if m.get("sessionId") != session:
                keep.append(m)
            elif meth == "Runtime.exceptionThrown":
                out.append(json.dumps(p["exceptionDetails"])[:500])
            elif meth == "Runtime.consoleAPICalled" and \
                    p.get("type") in ("error", "assert"):
                out.append("console." + p["type"] + ": " +
                           json.dumps(p.get("args"))[:500])
            elif meth == "Log.entryAdded" and \
                    p["entry"].get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
        self.events = keep
        return out
