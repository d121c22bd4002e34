#!/usr/bin/env python3
"""Headless Chromium driven over the Chrome DevTools Protocol, with Python's standard library only.

The web panel's browser tests use it to load a page, run JavaScript in it, size its viewport like a phone's,
take screenshots, and fail on the page's own JavaScript errors:

    with Browser() as browser:
        page = browser.new_page()
        page.set_viewport(390, 844, mobile=True, scale=3)
        page.navigate("http://127.0.0.1:8080/")
        page.wait_for("document.querySelector('#status') !== null")
        print(page.evaluate("document.title"))
        page.screenshot("/tmp/panel.png", full_page=True)
        assert not page.errors(), page.errors()

The browser runs in a process group of its own and a temporary profile; leaving the `with` block ends the
group and deletes the profile, whatever happened, and the browser is also killed if this process dies.

Run as a script it does the same for one URL and exits non-zero if the page logged an error:

    scripts/web/cdp.py URL [--viewport 390x844 --mobile --scale 3] [--wait JS] [--eval JS] [--screenshot PNG]
"""

import argparse
import base64
import collections
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from wsclient import WebSocket, WebSocketError

# DevTools messages carry whole screenshots (base64): a full-page one of a long page passes 4 MB.
MAX_MESSAGE = 256 * 1024 * 1024

# prctl(PR_SET_PDEATHSIG): the kernel signals the browser when the process that started it dies, the one
# case (SIGKILL, a crash) where our clean-up cannot run. Looked up here, not in the forked child, where
# loading a library could deadlock on a lock another thread held at the fork.
_PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl


class CDPError(Exception):
    """The browser could not start, or refused a command."""


class JavaScriptError(CDPError):
    """JavaScript evaluated in the page threw; the message is the exception's text."""


ConsoleMessage = collections.namedtuple("ConsoleMessage", "kind text")
ConsoleMessage.__doc__ = "A console call (kind: 'log', 'error', 'warning', …) or an uncaught exception ('exception')."


class Browser:
    """Headless Chromium listening for DevTools on a free port of 127.0.0.1. Use it as a context manager."""

    def __init__(self, executable="chromium", timeout=30.0, arguments=()):
        """`timeout` (seconds) bounds the start and each command; `arguments` are added to Chromium's."""
        self.executable = executable
        self.timeout = timeout
        self.arguments = list(arguments)
        self.port = None
        self._process = None
        self._stderr_reader = None
        self._profile = None
        self._pages = []
        self._stderr_tail = collections.deque(maxlen=20)  # for saying why the browser did not start

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, *exception):
        self._stop()

    def new_page(self):
        """Opens a new tab (about:blank) and attaches to it."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            target = json.load(response)
        ws = WebSocket.connect(target["webSocketDebuggerUrl"], timeout=self.timeout, max_message=MAX_MESSAGE)
        page = Page(ws, self.timeout)
        self._pages.append(page)
        return page

    def _start(self):
        self._profile = tempfile.mkdtemp(prefix="aulos-chromium-")
        command = [self.executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0"]
        command += [f"--user-data-dir={self._profile}", *self.arguments, "about:blank"]
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",  # the reader thread must not die on a stray byte
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as error:
            raise CDPError(f"cannot run {self.executable}: {error.strerror}") from None
        # Chromium says where DevTools listens on stderr. The pipe is read to its end by a thread, so that
        # the browser never blocks on a full pipe however much it logs.
        listening = []
        found = threading.Event()

        def read_stderr():
            for line in self._process.stderr:
                self._stderr_tail.append(line.rstrip())
                if not listening and line.startswith("DevTools listening on ws://"):
                    listening.append(line.split()[-1])
                    found.set()
            found.set()  # the browser exited: stop waiting

        self._stderr_reader = threading.Thread(target=read_stderr, name="chromium-stderr", daemon=True)
        self._stderr_reader.start()
        if not found.wait(self.timeout) or not listening:
            tail = " | ".join(list(self._stderr_tail)[-3:]) or "no output"
            status = self._process.poll()
            if status is not None:
                raise CDPError(f"{self.executable} exited with status {status} before DevTools started: {tail}")
            raise CDPError(f"Chromium did not start DevTools within {self.timeout:g} s: {tail}")
        self.port = urllib.parse.urlsplit(listening[0]).port

    def _stop(self):
        for page in self._pages:
            page.close()
        if self._process:
            # The whole group: Chromium's zygote, renderer and GPU helpers are processes of their own.
            _signal_group(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(self._process.pid, signal.SIGKILL)  # any helper still there
            self._process.wait()
            # The group is gone, so the pipe is at its end: the reader finishes and the pipe can be closed.
            self._stderr_reader.join(5)
            self._process.stderr.close()
        if self._profile:
            shutil.rmtree(self._profile, ignore_errors=True)


class Page:
    """One tab, attached over its DevTools WebSocket. Commands are answered in order; the events that
    arrive meanwhile are kept: console messages in `console`, the rest for `wait_event`."""

    def __init__(self, ws, timeout):
        self.timeout = timeout
        self.console = []  # ConsoleMessage, in arrival order
        self._ws = ws
        self._next_id = 0
        self._events = collections.deque(maxlen=1000)  # (method, params); the oldest go first
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, **params):
        """Sends a DevTools command and returns its result; raises CDPError with the browser's message."""
        self._next_id += 1
        ident = self._next_id
        self._ws.send_text(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline, f"the answer to {method}")
            if message.get("id") == ident:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})

    def wait_event(self, method, timeout=None):
        """The parameters of the first `method` event not yet waited for, waiting up to `timeout` seconds."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            for index, (name, params) in enumerate(self._events):
                if name == method:
                    del self._events[index]
                    return params
            self._receive(deadline, method)

    def navigate(self, url, timeout=None):
        """Loads `url` and waits for its load event. A change of the #fragment alone fires none: use evaluate."""
        # A load event still kept from an earlier page must not end this wait.
        self._events = collections.deque(
            ((name, params) for name, params in self._events if name != "Page.loadEventFired"), maxlen=1000
        )
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise CDPError(f"cannot load {url}: {result['errorText']}")
        self.wait_event("Page.loadEventFired", timeout)

    def evaluate(self, expression):
        """The value of a JavaScript expression (a promise is awaited), as JSON would carry it.

        Raises JavaScriptError with the exception's text if it throws or the promise rejects."""
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise JavaScriptError(_exception_text(result["exceptionDetails"]))
        return result["result"].get("value")

    def wait_for(self, condition, timeout=None, interval=0.05):
        """Evaluates `condition` every `interval` seconds until it is truthy, and returns its value."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            value = self.evaluate(condition)
            if value:
                return value
            if time.monotonic() >= deadline:
                raise TimeoutError(f"still false after {timeout or self.timeout:g} s: {condition}")
            time.sleep(interval)

    def set_viewport(self, width, height, mobile=False, scale=1.0):
        """Sizes the viewport in CSS pixels; `mobile` also emulates a phone's touch screen and meta viewport."""
        self.call(
            "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=scale, mobile=mobile
        )
        # Without touch, (pointer: coarse) and (hover: none) media queries would still see a mouse.
        self.call("Emulation.setTouchEmulationEnabled", enabled=mobile)

    def screenshot(self, path, full_page=False):
        """Writes a PNG of the viewport, or of the whole page when `full_page`; returns `path`."""
        params = {"format": "png"}
        if full_page:
            metrics = self.call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
            params.update(captureBeyondViewport=True, clip=clip)
        data = base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])
        with open(path, "wb") as file:
            file.write(data)
        return path

    def errors(self):
        """The console errors and uncaught exceptions so far, after taking in the events that have arrived."""
        for message in self._ws.read_available():
            self._record(json.loads(message))
        return [message for message in self.console if message.kind in ("error", "assert", "exception")]

    def close(self):
        self._ws.close()

    def _receive(self, deadline, waiting_for):
        """Reads one message, records it if it is an event, and returns it."""
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            message = json.loads(self._ws.recv(timeout=remaining))
        except TimeoutError:
            raise TimeoutError(f"no {waiting_for} within {self.timeout:g} s") from None
        self._record(message)
        return message

    def _record(self, message):
        method, params = message.get("method"), message.get("params", {})
        if method is None:
            return  # an answer, not an event
        if method == "Runtime.consoleAPICalled":
            self.console.append(ConsoleMessage(params["type"], " ".join(map(_describe, params.get("args", [])))))
        elif method == "Runtime.exceptionThrown":
            self.console.append(ConsoleMessage("exception", _exception_text(params["exceptionDetails"])))
        elif method == "Inspector.targetCrashed":
            raise CDPError("the page crashed")
        else:
            self._events.append((method, params))


def _describe(remote_object):
    """A console argument as text: its value when it is a primitive, else DevTools' description of it."""
    if "value" in remote_object:
        value = remote_object["value"]
        return value if isinstance(value, str) else json.dumps(value)
    return remote_object.get("unserializableValue") or remote_object.get("description") or remote_object["type"]


def _exception_text(details):
    """An exception's message and stack as DevTools describes it, with where it was thrown."""
    text = details.get("exception", {}).get("description") or details.get("text", "exception")
    where = details.get("url")
    return f"{text} ({where}:{details.get('lineNumber', 0) + 1})" if where else text


def _die_with_parent():
    """In the child before exec: asks the kernel for SIGKILL when its parent dies."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _signal_group(pid, signum):
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass  # already gone


def _first_line(text):
    # A JavaScript exception's text goes on with its stack, already printed with the console messages.
    return text.splitlines()[0] if text else text


def main():
    parser = argparse.ArgumentParser(
        description="Load a page in headless Chromium; fail if it logs a JavaScript error.")
    parser.add_argument("url")
    parser.add_argument("--viewport", default="1280x800", help="WIDTHxHEIGHT in CSS pixels (default 1280x800)")
    parser.add_argument("--mobile", action="store_true", help="emulate a phone (touch, meta viewport)")
    parser.add_argument("--scale", type=float, default=1.0, help="device pixel ratio (default 1)")
    parser.add_argument("--wait", metavar="JS", help="wait until this expression is truthy")
    parser.add_argument("--eval", metavar="JS", help="print this expression's value as JSON")
    parser.add_argument("--screenshot", metavar="PNG", help="write a screenshot here")
    parser.add_argument("--full-page", action="store_true", help="screenshot the whole page, not the viewport")
    parser.add_argument("--chromium", default="chromium", help="the browser to run (default chromium)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds for each step (default 30)")
    arguments = parser.parse_args()
    try:
        width, height = (int(side) for side in arguments.viewport.split("x"))
    except ValueError:
        parser.error(f"--viewport takes WIDTHxHEIGHT, not {arguments.viewport!r}")
    try:
        with Browser(arguments.chromium, arguments.timeout) as browser:
            page = browser.new_page()
            page.set_viewport(width, height, arguments.mobile, arguments.scale)
            page.navigate(arguments.url)
            if arguments.wait:
                page.wait_for(arguments.wait)
            if arguments.eval:
                print(json.dumps(page.evaluate(arguments.eval)))
            if arguments.screenshot:
                page.screenshot(arguments.screenshot, arguments.full_page)
            errors = page.errors()
            for message in page.console:
                print(f"console {message.kind}: {message.text}", file=sys.stderr)
    except (CDPError, WebSocketError, TimeoutError, OSError) as error:
        sys.exit(f"cdp: {_first_line(str(error))}")
    if errors:
        sys.exit(f"cdp: the page logged {len(errors)} error(s), the first: {_first_line(errors[0].text)}")



if __name__ == "__main__":
    main()
