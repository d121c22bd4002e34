#!/usr/bin/env python3
"""The web panel in a real browser: does the page a player opens work against a real, running aulos?

Starts `aulos play --service --device null` (a live instrument on alsa-lib's null PCM: no sound card needed)
on a two-rig set (presets/rigs/band.yaml and synth-layers.yaml, copied into a scratch directory) with the
panel, OSC and the control socket on free ports, then drives headless Chromium (scripts/web/cdp.py) through
what a player does: opens the page, switches rigs with the rig menu, moves a volume slider, uploads a broken
rig and then a good one, sees an AppleMIDI session's counters, and takes a phone-sized and a desktop-sized
screenshot. Around that, from Python:
writes from another origin, without the CSRF token or naming another Host are refused.

Prints one line per check (PASS or FAIL, and what was seen) and exits 1 if any failed, 2 if the test could
not run at all. aulos and Chromium are stopped whatever happens, and the scratch directory removed.

    scripts/web/panel-test.py --aulos .build/release/aulos [--screenshots docs/images]
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from cdp import Browser, CDPError
from wsclient import WebSocket, WebSocketError

REPOSITORY = Path(__file__).resolve().parents[2]
RIGS = ("band.yaml", "synth-layers.yaml")  # the set's rigs 1 and 2; band.yaml has the parts Piano and Bass
BAD_RIG = "name: x\nparts: 3\n"
SLIDER_VALUE = 0.37  # on the volume slider's grid (0…2 in steps of 0.002), so the browser keeps it exact
SWITCH_SECONDS = 2.0  # a rig switch must show in the page within this
START_SECONDS = 60.0  # a debug build loads the sampler's SoundFont slowly
RELOAD_SECONDS = 30.0  # an uploaded rig is rebuilt in full (SoundFont included) before it plays
# The screenshots: (file, width, height, mobile, device pixel ratio).
SCREENSHOTS = (("panel-phone.png", 390, 844, True, 2), ("panel-desktop.png", 1280, 900, False, 1))


class Abort(Exception):
    """The test cannot go on (aulos did not start, the browser did not); the message says why."""


class Checks:
    """The checks' results, printed as they are made."""

    def __init__(self):
        self.failed = []

    def record(self, name, ok, detail=""):
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
        if not ok:
            self.failed.append(name)
        return ok

    def run(self, name, function):
        """Records `function()`'s (ok, detail); an exception fails the check (not the test) with its text."""
        try:
            ok, detail = function()
        except (CDPError, WebSocketError, TimeoutError, OSError, ValueError, KeyError, TypeError) as error:
            ok, detail = False, f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        return self.record(name, ok, detail)


# MARK: aulos


class Aulos:
    """`aulos play --service` on the null device with the panel, OSC and a control socket, in `directory`."""

    def __init__(self, binary, rig, directory):
        self.binary = binary
        self.rig = rig
        self.directory = directory
        self.web_port = free_port(socket.SOCK_STREAM)
        self.osc_port = free_port(socket.SOCK_DGRAM)
        self.base = f"http://127.0.0.1:{self.web_port}"
        self.log_path = os.path.join(directory, "aulos.log")
        self.process = None
        self.csrf = None

    def start(self):
        command = [
            # The demo piece in the file player, as a box playing a song is driven from a phone.
            self.binary, "play", str(REPOSITORY / "presets" / "scores" / "demo.score"), "--service", "--device", "null",
            "--rig", self.rig,
            "--web", f"127.0.0.1:{self.web_port}", "--osc", f"127.0.0.1:{self.osc_port}",
            "--control-socket", os.path.join(self.directory, "control.sock"),
            # Network MIDI on loopback (a port the kernel picks): the status shows a session's counters.
            "--network-midi", "127.0.0.1:0",
        ]
        with open(self.log_path, "wb") as log:
            # A session of its own: a Ctrl-C meant for the test reaches aulos only through stop(), in order.
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=_die_with_parent)

    def wait_until_playing(self, timeout):
        """Waits until the panel answers and the rig plays (the web server starts before the rig is built)."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise Abort(f"aulos exited with status {self.process.returncode}: {self.log_tail()}")
            try:
                if self.csrf is None:
                    self.csrf = http_json("GET", self.base + "/api/session")[1]["csrf"]
                code, answer = self.control("status")
                if code == 200 and "activeRig" in answer:
                    return
                last = answer.get("error", f"HTTP {code}")
            except (OSError, ValueError, KeyError) as error:
                last = str(error)
            time.sleep(0.2)
        raise Abort(f"aulos did not start playing within {timeout:g} s ({last}): {self.log_tail()}")

    def control(self, request, headers=None, csrf=True):
        """POST /api/control from Python; (HTTP status, JSON answer)."""
        sent = {"Content-Type": "application/json", **({"X-Aulos-CSRF": self.csrf} if csrf else {})}
        return http_json("POST", self.base + "/api/control", json.dumps({"request": request}).encode(),
                         {**sent, **(headers or {})})

    def status(self):
        """The next status pushed on a fresh WebSocket: (sequence, status). A socket kept open and not read
        would fill up between checks, and what it held would be old news."""
        ws = WebSocket.connect(f"ws://127.0.0.1:{self.web_port}/api/status", timeout=5)
        try:
            message = json.loads(ws.recv())
        finally:
            ws.close()
        return message["sequence"], message["status"]

    def wait_status(self, condition, timeout):
        """The first (sequence, status) for which condition(status) holds, polled for up to `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            sequence, status = self.status()
            if condition(status) or time.monotonic() >= deadline:
                return sequence, status
            time.sleep(0.1)

    def stop(self):
        """SIGTERM, as systemd stops it; SIGKILL if it has not ended 10 s later. Returns the exit status."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None

    def log_tail(self, lines=5):
        try:
            with open(self.log_path, errors="replace") as log:
                # FlyingFox's request log (stdout, block-buffered) says nothing about why aulos stopped.
                kept = [line for line in log.read().splitlines() if not line.startswith("[FlyingFox]")]
                return " | ".join(kept[-lines:]) or "no output"
        except OSError:
            return "no log"


def free_port(kind):
    """A port of 127.0.0.1 nothing uses now: the kernel's pick for port 0. Another program could take it
    before aulos binds it; on a test machine that is rare enough."""
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_json(method, url, body=None, headers=None, timeout=10):
    """(status, JSON answer) of one request; an error status is an answer too, not an exception."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            code, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        code, text = error.code, error.read()
    try:
        return code, json.loads(text)
    except ValueError:
        return code, {"text": text.decode(errors="replace")}


_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """In the child before exec: SIGKILL when the test dies, the one case (SIGKILL) where stop() cannot run."""
    import ctypes  # here: only a child that execs aulos needs it

    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


# MARK: The set


def write_set(directory):
    """A set of the two preset rigs beside their copies (a set names its rigs relative to itself)."""
    for name in RIGS:
        shutil.copy(REPOSITORY / "presets" / "rigs" / name, directory)
    path = os.path.join(directory, "set.yaml")
    entries = "".join(f"  - program: {program}\n    rig: {name}\n" for program, name in enumerate(RIGS))
    with open(path, "w") as file:
        file.write(f"name: Panel test\ncontrol-channel: 16\nrigs:\n{entries}")
    return path


def good_rig():
    """band.yaml under another name: a valid rig whose reload the status shows by its name."""
    text = (REPOSITORY / "presets" / "rigs" / RIGS[0]).read_text()
    return re.sub(r"^name: .*$", "name: Band Uploaded", text, count=1, flags=re.MULTILINE), "Band Uploaded"


# MARK: The page


def js(value):
    """A Python value as a JavaScript literal."""
    return json.dumps(value)


def text_of(selector):
    return f"document.querySelector({js(selector)})?.textContent"


LIVE_WITH_PARTS = (
    "document.querySelector('#connection').textContent === 'live'"
    " && document.querySelector('article.part[data-part=\"Piano\"] input[data-target=\"Piano.volume\"]') !== null"
    " && document.querySelector('#status-rig').textContent !== '–'"
)
# Counts the status pushes the page has drawn: #status-xruns is rewritten on every one.
COUNT_UPDATES = (
    "window.testUpdates = 0; new MutationObserver(() => window.testUpdates++)"
    ".observe(document.querySelector('#status-xruns'), {childList: true, subtree: true, characterData: true}); true"
)
# The buttons, fields and sliders of the part cards that reach past their card's edge, described.
OUTSIDE_CARDS = """[...document.querySelectorAll('article.part')].flatMap((card) => {
  const box = card.getBoundingClientRect();
  return [...card.querySelectorAll('button, input, select, output')].filter((element) => {
    const rect = element.getBoundingClientRect();
    return element.offsetParent && (rect.right > box.right + 0.5 || rect.left < box.left - 0.5);
  }).map((element) => `${card.dataset.part}: ${element.textContent || element.tagName.toLowerCase()} of `
    + `${element.closest('.control')?.querySelector('[data-target]')?.dataset.target ?? 'the card'} ends at `
    + `${Math.round(element.getBoundingClientRect().right)} px, the card at ${Math.round(box.right)} px`);
})"""
PARTS_FETCHES = "performance.getEntriesByType('resource').filter((entry) => entry.name.endsWith('/api/parts')).length"


def open_panel(browser, aulos, width, height, mobile=False, scale=1):
    page = browser.new_page()
    page.set_viewport(width, height, mobile=mobile, scale=scale)
    page.navigate(aulos.base + "/")
    page.wait_for(LIVE_WITH_PARTS, timeout=15)
    return page


def choose_rig(page, number, name):
    """Picks rig `number` in the rig menu as a player would; (seconds until #status-rig named it, text seen)."""
    started = time.monotonic()
    page.evaluate(
        f"(() => {{ const menu = document.querySelector('#rig-select'); menu.value = {js(str(number))};"
        " menu.dispatchEvent(new Event('change', {bubbles: true})); })()")
    expected = f"{number} {name}"
    try:
        page.wait_for(f"{text_of('#status-rig')} === {js(expected)}", timeout=SWITCH_SECONDS, interval=0.02)
    except TimeoutError:
        return None, page.evaluate(text_of("#status-rig"))
    return time.monotonic() - started, expected


def main():
    parser = argparse.ArgumentParser(description="Test the web panel in headless Chromium against a live aulos.")
    parser.add_argument("--aulos", required=True, help="the aulos binary (its resource bundles beside it)")
    parser.add_argument("--screenshots", metavar="DIR", help="write panel-phone.png and panel-desktop.png here")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium", help="the browser")
    arguments = parser.parse_args()
    # SIGTERM (a CI job's timeout, make's) unwinds like Ctrl-C, through the clean-up below: aulos stopped in
    # order and the scratch directory removed, not just aulos and Chromium killed by their death signal.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not os.access(arguments.aulos, os.X_OK):
        parser.error(f"{arguments.aulos} is not an executable")
    directory = tempfile.mkdtemp(prefix="aulos-panel-test-")
    aulos = Aulos(os.path.abspath(arguments.aulos), write_set(directory), directory)
    checks = Checks()
    try:
        aulos.start()
        aulos.wait_until_playing(START_SECONDS)
        print(f"aulos playing {aulos.rig} with the panel on {aulos.base}/ (OSC {aulos.osc_port})", flush=True)
        refusals(checks, aulos)
        with Browser(arguments.chromium, timeout=30) as browser:
            in_browser(checks, aulos, browser, arguments.screenshots or directory)
        alive = aulos.process.poll() is None
        checks.record("aulos played throughout", alive, "still running" if alive else aulos.log_tail())
        status = aulos.stop()
        checks.record("aulos stops on SIGTERM with status 0", status == 0, f"status {status}")
    except (Abort, CDPError, WebSocketError, OSError) as error:
        print(f"panel-test: cannot go on: {error}", file=sys.stderr)
        return 2
    finally:
        aulos.stop()
        shutil.rmtree(directory, ignore_errors=True)
    if checks.failed:
        print(f"panel-test: {len(checks.failed)} check(s) failed: {', '.join(checks.failed)}")
        return 1
    print("panel-test: all checks passed")
    return 0


def refusals(checks, aulos):
    """Writes a page of another site could attempt are refused, and change nothing."""

    def volume():
        return aulos.control("get Piano.volume")[1]["value"]

    def cross_origin():
        before = volume()
        code, answer = aulos.control("set Piano.volume 0.11", headers={"Origin": "http://evil.example"})
        after = volume()
        detail = f"HTTP {code} {answer.get('error')!r}, Piano.volume {before} → {after}"
        return code == 403 and after == before, detail

    def without_token():
        before = volume()
        code, answer = aulos.control("set Piano.volume 0.11", csrf=False)
        after = volume()
        detail = f"HTTP {code} {answer.get('error')!r}, Piano.volume {before} → {after}"
        return code == 403 and after == before, detail

    def same_origin():
        # The same request from the page's own origin goes through: the refusals above are not blanket ones.
        code, answer = aulos.control("get Piano.volume", headers={"Origin": aulos.base})
        return code == 200 and "value" in answer, f"HTTP {code} {answer}"

    def other_host():
        # DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own name as Host.
        code, answer = aulos.control("get Piano.volume", headers={"Host": f"evil.example:{aulos.web_port}"})
        return code == 403, f"HTTP {code} {answer.get('error')!r}"

    def rig_upload_without_token():
        before = Path(aulos.rig).read_bytes()
        code, answer = http_json("PUT", aulos.base + "/api/rig-file", good_rig()[0].encode(),
                                 {"Content-Type": "application/yaml", "Origin": "http://evil.example"})
        same = Path(aulos.rig).read_bytes() == before
        return code == 403 and same, f"HTTP {code} {answer.get('error')!r}, rig file unchanged: {same}"

    def websocket_cross_origin():
        try:
            ws = WebSocket.connect(f"ws://127.0.0.1:{aulos.web_port}/api/status", {"Origin": "http://evil.example"})
        except WebSocketError as error:
            return "403" in str(error), str(error)
        ws.close()
        return False, "the status WebSocket opened for another origin"

    checks.run("cross-origin POST /api/control is refused (403), nothing set", cross_origin)
    checks.run("POST /api/control without X-Aulos-CSRF is refused (403), nothing set", without_token)
    checks.run("POST /api/control from the panel's own origin is answered (200)", same_origin)
    checks.run("a request naming another Host is refused (403)", other_host)
    checks.run("cross-origin PUT /api/rig-file without the token is refused (403), file unchanged",
               rig_upload_without_token)
    checks.run("the status WebSocket refuses another origin", websocket_cross_origin)


def in_browser(checks, aulos, browser, screenshots):
    aulos.control("player loop on")  # the demo plays throughout (19 s a pass)
    parts = http_json("GET", aulos.base + "/api/parts")[1]
    rigs = parts["rigs"]
    page = browser.new_page()
    page.set_viewport(1280, 900)
    pages = [page]

    # (a) The page opens, its status socket goes live and the rig's parts are drawn.
    def opens():
        page.navigate(aulos.base + "/")
        page.wait_for(LIVE_WITH_PARTS, timeout=15)
        page.evaluate(COUNT_UPDATES)
        cards = page.evaluate("[...document.querySelectorAll('article.part')].map((card) => card.dataset.part)")
        expected = [group["name"] for group in parts["groups"]]
        rig = page.evaluate(text_of("#status-rig"))
        return cards == expected and rig == f"1 {rigs[0]}", f"cards {cards}; #status-rig {rig!r}"

    if not checks.run("(a) page live with the rig's parts drawn", opens):
        return  # nothing else can be seen in a page that did not start

    # (b) The rig menu switches rigs, and the status shows it quickly; then back to the first.
    def switch(number):
        def check():
            fetches = page.evaluate(PARTS_FETCHES)
            seconds, seen = choose_rig(page, number, rigs[number - 1])
            if seconds is None:
                return False, f"#status-rig still {seen!r} after {SWITCH_SECONDS:g} s"
            # The new rig's parts replace the old's (fetched 100 ms after the switch).
            first_part = http_json("GET", aulos.base + "/api/parts")[1]["groups"][0]["name"]
            page.wait_for(f"document.querySelector('article.part[data-part={js(first_part)}]') !== null", timeout=3)
            time.sleep(0.5)  # let every /api/parts fetch the switch started finish before the next step
            fetches = page.evaluate(PARTS_FETCHES) - fetches
            return True, f"{seen!r} after {seconds * 1000:.0f} ms; part {first_part} drawn; {fetches} /api/parts GETs"
        return check

    checks.run(f"(b) rig menu → rig 2 shows in #status-rig within {SWITCH_SECONDS:g} s", switch(2))
    checks.run(f"(b) rig menu → rig 1 shows in #status-rig within {SWITCH_SECONDS:g} s", switch(1))

    # (c) A volume slider moved in the page sets the part's volume.
    def slider():
        page.wait_for("document.querySelector('input[data-target=\"Piano.volume\"]') !== null", timeout=3)
        page.evaluate(
            "(() => { const slider = document.querySelector('input[data-target=\"Piano.volume\"]');"
            f" slider.value = {js(str(SLIDER_VALUE))};"
            " slider.dispatchEvent(new Event('input', {bubbles: true})); })()")
        deadline = time.monotonic() + 2
        while (value := aulos.control("get Piano.volume")[1].get("value")) is not None and time.monotonic() < deadline:
            if abs(value - SLIDER_VALUE) < 1e-3:
                break
            time.sleep(0.05)
        in_page = page.evaluate("window.aulos.act('get Piano.volume').then((answer) => answer && answer.value)")
        shown = page.evaluate("document.querySelector('input[data-target=\"Piano.volume\"]').nextElementSibling.value")
        # Drawn again from /api/parts, the slider shows what the server holds, not what the page last sent.
        page.evaluate("window.aulos.loadParts().then(() => true)")
        redrawn = page.evaluate("Number(document.querySelector('input[data-target=\"Piano.volume\"]').value)")
        ok = all(abs(number - SLIDER_VALUE) < 1e-3 for number in (value, in_page, redrawn))
        ok = ok and shown == f"{SLIDER_VALUE:.2f}"
        return ok, f"get from Python {value}, from the page {in_page}; output {shown!r}; slider redrawn at {redrawn}"

    checks.run(f"(c) Piano.volume slider → {SLIDER_VALUE} reaches the server and the page", slider)
    # (c) A value changed elsewhere (here the control API, as OSC or a controller would) reaches the slider.
    def follows():
        page.evaluate("document.activeElement && document.activeElement.blur()")
        aulos.control("set Piano.pan 0.55")
        expression = "Number(document.querySelector('input[data-target=\"Piano.pan\"]').value)"
        started = time.monotonic()
        while time.monotonic() - started < 5:
            if abs(page.evaluate(expression) - 0.55) < 1e-3:
                return True, f"slider at 0.55 after {time.monotonic() - started:.1f} s"
            time.sleep(0.1)
        return False, f"slider still at {page.evaluate(expression)} after 5 s"

    checks.run("(c) Piano.pan set from outside the page reaches its slider within 5 s", follows)
    # (e) What plays is what the page shows: a keyboard's program change moves the part's preset menu, the
    # drums part's menu names a drum kit, a synth part names its preset, the tempo set elsewhere is read back,
    # and a part card lists sends to its own rig's returns only (Band has hall and chorus; the set also
    # builds Synth Layers' plate and echo).
    def menus_follow():
        page.evaluate("document.activeElement && document.activeElement.blur()")
        aulos.control("midi C0 05")  # program 6 on channel 1, as a keyboard sends it
        menu = "document.querySelector('select[data-presets=\"Piano\"]')"
        try:
            page.wait_for(f"{menu}?.value === '0 5'", timeout=3)
        except TimeoutError:
            return False, f"Piano's menu at {page.evaluate(menu + '?.value')!r} 3 s after program change 5"
        piano = page.evaluate(f"{menu}.selectedOptions[0].textContent")
        drums = page.evaluate("document.querySelector('select[data-presets=\"Drums\"]').selectedOptions[0].textContent")
        strings = page.evaluate(
            "document.querySelector('select[data-presets=\"Strings\"]')?.selectedOptions[0]?.textContent")
        ok = piano.startswith("0:5 ") and drums.startswith("128:0 ") and strings.endswith("String Ensemble")
        aulos.control("midi C0 00")
        return ok, f"Piano {piano!r}, Drums {drums!r}, Strings {strings!r}"

    checks.run("(e) preset menus show what each part plays and follow a program change", menus_follow)

    def tempo_read_back():
        aulos.control("tempo 90")
        try:
            page.wait_for("document.querySelector('#tempo').value === '90'", timeout=3)
            return True, "tempo field at 90"
        except TimeoutError:
            shown = page.evaluate("document.querySelector('#tempo').value")
            return False, f"tempo field at {shown!r}"
        finally:
            aulos.control("tempo 120")

    checks.run("(e) a tempo set elsewhere is read back into the tempo field", tempo_read_back)

    def own_sends():
        sends = page.evaluate(
            "[...document.querySelectorAll('input[data-target*=\".send-\"]')].map((input) => input.dataset.target)")
        meters = page.evaluate(
            "[...document.querySelectorAll('#meters .meter > span:first-child')].map((span) => span.textContent)")
        foreign = [name for name in sends + meters if "plate" in name or "echo" in name]
        expected = {"Piano.send-hall", "Piano.send-chorus", "Strings.send-hall"}
        return not foreign and expected <= set(sends), f"send sliders {sends}; meters {meters}"

    checks.run("(e) the page shows the active rig's sends, returns and meters only", own_sends)

    # (e) Each part card shows its CPU load (status.cpu, measured per unit), and the rig menu says of each rig
    # what is known of its load (rig 2 played in (b): measured).
    def part_cpu():
        labels = "[...document.querySelectorAll('article.part .cpu')].map((label) => label.textContent)"
        titles = "[...document.querySelectorAll('#rig-select option')].map((option) => option.title)"
        try:
            page.wait_for(f"{labels}.length > 0 && {labels}.every((text) => /^CPU \\d+\\.\\d %$/.test(text))",
                          timeout=3)
        except TimeoutError:
            return False, f"part cards' CPU labels {page.evaluate(labels)}"
        shown, rig_titles = page.evaluate(labels), page.evaluate(titles)
        ok = len(rig_titles) == 2 and all(title.startswith("its parts took ") for title in rig_titles)
        return ok, f"cards {shown}; rig menu titles {rig_titles}"

    checks.run("(e) each part card shows its CPU load; the rig menu the rigs' measured peaks", part_cpu)

    # (e) A snapshot recalled from the page: the sliders show its values, the menu names it.
    def snapshot():
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.evaluate(
            "(() => { const menu = document.querySelector('#snapshot'); menu.value = 'Chorus';"
            " menu.dispatchEvent(new Event('change', {bubbles: true})); })()")
        slider = "Number(document.querySelector('input[data-target=\"Strings.volume\"]').value)"
        try:
            page.wait_for(f"Math.abs({slider} - 0.85) < 1e-3", timeout=3)
            page.wait_for(f"{text_of('#snapshot option')} === 'Snapshot: Chorus'", timeout=3)
        except TimeoutError:
            return False, f"Strings.volume slider {page.evaluate(slider)}; menu {page.evaluate(text_of('#snapshot option'))!r}"
        value = aulos.control("get Strings.volume")[1].get("value")
        aulos.control("snapshot Verse")
        return abs(value - 0.85) < 1e-3, f"slider at 0.85, server {value}, menu 'Snapshot: Chorus'"

    checks.run("(e) a snapshot recalled from the page moves the sliders and is named", snapshot)

    # (h) The file player: the page shows the file and where it is; its Pause and Play buttons work.
    def player():
        shown = page.evaluate(text_of("#player-file"))
        if not shown or "demo.score" not in shown or page.evaluate("document.querySelector('#player').hidden"):
            return False, f"#player-file {shown!r}"
        # One file, no playlist: no song menu, no previous and next.
        if not page.evaluate("['#player-songs', '#player-previous', '#player-next']"
                             ".every(id => document.querySelector(id).hidden)"):
            return False, "a song menu for a single file"
        page.evaluate("document.querySelector('[data-player=\"pause\"]').click()")
        try:
            page.wait_for(f"{text_of('#player-file')}.endsWith('paused')", timeout=3)
        except TimeoutError:
            return False, f"after Pause: {page.evaluate(text_of('#player-file'))!r}"
        held = page.evaluate(text_of("#player-time"))
        time.sleep(0.5)
        still = page.evaluate(text_of("#player-time"))
        page.evaluate("document.querySelector('[data-player=\"play\"]').click()")
        try:
            page.wait_for(f"{text_of('#player-file')}.endsWith('playing')", timeout=3)
        except TimeoutError:
            return False, f"after Play: {page.evaluate(text_of('#player-file'))!r}"
        return held == still, f"{shown!r}; paused at {held}, {still} half a second later; playing again"

    checks.run("(h) the file player shows the file and pauses and plays from the page", player)

    # (i) A network MIDI session: an AppleMIDI peer from raw bytes (IN on both ports, RTP-MIDI packets 0 and 2)
    # shows in the status with its counters; after its BY, "no sessions".
    def network_session():
        with open(aulos.log_path, encoding="utf-8", errors="replace") as log:
            found = re.search(r"network MIDI \(AppleMIDI\) on 127\.0\.0\.1:(\d+)", log.read())
        if not found:
            return False, f"no network MIDI line in the log: {aulos.log_tail()}"
        port = int(found.group(1))
        ssrc = bytes([0x51, 0x50, 0xCA, 0xFE])
        invitation = b"\xff\xffIN\x00\x00\x00\x02\x12\x34\x56\x78" + ssrc + b"Panel Peer\x00"
        control = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for sock, target in ((control, port), (data, port + 1)):
                sock.bind(("127.0.0.1", 0))
                sock.settimeout(5)
                sock.sendto(invitation, ("127.0.0.1", target))
                if sock.recv(1500)[:4] != b"\xff\xffOK":
                    return False, f"no OK on port {target}"
            for sequence, note in ((0, 60), (2, 62)):
                packet = bytes([0x80, 0x61, 0, sequence, 0, 0, 0, 0]) + ssrc + bytes([0x03, 0x90, note, 0x64])
                data.sendto(packet, ("127.0.0.1", port + 1))
            expected = f"Panel Peer (AppleMIDI 127.0.0.1:{control.getsockname()[1]}) · 2 packets, 1 lost, 0 repaired"
            try:
                page.wait_for(f"{text_of('#status-network')}.includes({js(expected)})", timeout=5)
            except TimeoutError:
                return False, f"#status-network {page.evaluate(text_of('#status-network'))!r}"
            control.sendto(b"\xff\xffBY\x00\x00\x00\x02\x12\x34\x56\x78" + ssrc, ("127.0.0.1", port))
            try:
                page.wait_for(f"{text_of('#status-network')} === 'no sessions'", timeout=5)
            except TimeoutError:
                return False, f"after BY: #status-network {page.evaluate(text_of('#status-network'))!r}"
            return True, f"{expected!r}, then 'no sessions'"
        finally:
            control.close()
            data.close()

    checks.run("(i) a network MIDI session shows in the status with packets, loss and repairs", network_session)

    initial = {item["target"]: item["value"] for group in parts["groups"] for item in group["controls"]}
    for target in ("Piano.volume", "Piano.pan"):
        aulos.control(f"set {target} {initial[target]}")  # back as the rig has it, for the screenshots

    # (g) Screenshots, on pages of their own sized before they load, with a chord sounding so that the meters
    # and the MIDI log show something.
    os.makedirs(screenshots, exist_ok=True)
    aulos.control("midi 90 3C 64 90 40 5A 90 43 50 91 24 6E")
    time.sleep(0.4)
    for name, width, height, mobile, scale in SCREENSHOTS:
        def screenshot(name=name, width=width, height=height, mobile=mobile, scale=scale):
            shot = open_panel(browser, aulos, width, height, mobile, scale)
            pages.append(shot)
            time.sleep(0.3)  # a few status pushes: meters and the MIDI log drawn
            path = shot.screenshot(os.path.join(screenshots, name))
            # Nothing wider than the screen (a phone would scroll the whole panel sideways), and no control
            # drawn outside its card, where it reads as another card's or is cut off by the screen's edge.
            overflow = shot.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            outside = shot.evaluate(OUTSIDE_CARDS)
            return overflow <= 0 and not outside, (
                f"{path} ({width}×{height}, scale {scale}); page {overflow} px wider than the viewport; "
                f"controls outside their card: {'; '.join(outside) or 'none'}")
        checks.run(f"(g) screenshot {name}: nothing wider than the screen or outside its card", screenshot)
    aulos.control("midi B0 7B 00 B1 7B 00")  # all notes off on both channels

    # (d) A broken rig uploaded from the page is refused, and nothing else changes.
    def bad_upload():
        before = Path(aulos.rig).read_bytes()
        sequence, status = aulos.status()
        updates = page.evaluate("window.testUpdates")
        accepted = page.evaluate(f"window.aulos.uploadRig({js(BAD_RIG)})")
        error = page.evaluate("(() => { const box = document.querySelector('#error');"
                              " return box.hidden || box.offsetHeight === 0 ? null : box.textContent; })()")
        time.sleep(1)
        sequence_after, after = aulos.status()
        updates = page.evaluate("window.testUpdates") - updates
        same_file = Path(aulos.rig).read_bytes() == before
        leftovers = glob.glob(aulos.rig + ".checking-*")
        same_rig = (after["activeRig"], after["rig"], after["reloads"]) == (
            status["activeRig"], status["rig"], status["reloads"])
        ok = accepted is False and bool(error and error.strip()) and sequence_after > sequence and updates >= 10
        ok = ok and same_file and not leftovers and same_rig
        return ok, (f"uploadRig → {accepted}; #error {error!r}; sequence {sequence} → {sequence_after}, "
                    f"{updates} pushes drawn in the page meanwhile; rig {after['rig']!r} (reloads {after['reloads']}); "
                    f"file byte-identical: {same_file}; scratch files left: {leftovers or 'none'}")

    def bad_upload_status():
        code, answer = http_json("PUT", aulos.base + "/api/rig-file", BAD_RIG.encode(),
                                 {"Content-Type": "application/yaml", "X-Aulos-CSRF": aulos.csrf})
        return code == 400 and bool(answer.get("error")), f"HTTP {code} {answer}"

    checks.run("(d) broken rig upload: #error shown, status goes on, same rig, file unchanged", bad_upload)
    checks.run("(d) PUT /api/rig-file with a broken rig → 400 with an error", bad_upload_status)

    # (e) A good rig uploaded from the page replaces the file and is reloaded.
    def good_upload():
        text, name = good_rig()
        _, before = aulos.status()
        started = time.monotonic()
        accepted = page.evaluate(f"window.aulos.uploadRig({js(text)})")
        _, after = aulos.wait_status(lambda status: status["reloads"] > before["reloads"], RELOAD_SECONDS)
        seconds = time.monotonic() - started
        on_disk = Path(aulos.rig).read_text() == text
        # The page follows: the status names the new rig, the menu is rebuilt (1.5 s after the upload).
        page.wait_for(f"{text_of('#status-rig')} === {js('1 ' + name)}"
                      " && document.querySelector('#rig-select').options.length === 1", timeout=10)
        shown = page.evaluate("[...document.querySelector('#rig-select').options].map((option) => option.text)")
        error_hidden = page.evaluate("document.querySelector('#error').hidden")
        live = page.evaluate(text_of("#connection"))
        ok = accepted is True and after["reloads"] == before["reloads"] + 1 and after["rig"] == name and on_disk
        ok = ok and error_hidden and live == "live"
        return ok, (f"uploadRig → {accepted}; reloads {before['reloads']} → {after['reloads']} "
                    f"after {seconds:.1f} s; "
                    f"rig {before['rig']!r} → {after['rig']!r}; file replaced: {on_disk}; menu {shown}; "
                    f"#error hidden: {error_hidden}; connection {live!r}")

    checks.run("(e) good rig upload: file replaced, rig reloaded, page follows", good_upload)

    # (f) No JavaScript errors in any page opened.
    def no_errors():
        errors = [message.text.splitlines()[0] for opened in pages for message in opened.errors()]
        return not errors, f"{len(errors)} error(s){': ' + '; '.join(errors[:3]) if errors else ''}"

    checks.run("(f) no JavaScript errors in the pages", no_errors)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)  # cleaned up already (main's finally); the traceback would say nothing more
