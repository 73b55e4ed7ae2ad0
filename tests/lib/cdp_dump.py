#!/usr/bin/env python3
"""tests/lib/cdp_dump.py - the DOM (and a screenshot) of a page as headless
Chromium renders it, also with JavaScript disabled.

    cdp_dump.py URL DOM_OUT [PNG_OUT] -- CHROMIUM [FLAGS...]

Chromium's own --dump-dom and --screenshot read the page with a script,
so they give nothing when the page's scripts are off
(--blink-settings=scriptEnabled=false). This talks the DevTools protocol
over --remote-debugging-pipe (fds 3 and 4, NUL-separated JSON) instead:
open URL, wait for its load event, write DOM.getOuterHTML of the document
(no script involved) to DOM_OUT and, when given, Page.captureScreenshot
to PNG_OUT. Standard library only; exits 1 with one line on any failure,
after at most 45 s.
"""
import base64
import json
import os
import subprocess
import sys
import time

DEADLINE = time.monotonic() + 45


def fail(msg):
    print("cdp_dump: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if "--" not in sys.argv:
        fail("usage: cdp_dump.py URL DOM_OUT [PNG_OUT] -- CHROMIUM [FLAGS...]")
    sep = sys.argv.index("--")
    args, cmd = sys.argv[1:sep], sys.argv[sep + 1:]
    if len(args) not in (2, 3) or not cmd:
        fail("usage: cdp_dump.py URL DOM_OUT [PNG_OUT] -- CHROMIUM [FLAGS...]")
    url, dom_out = args[0], args[1]
    png_out = args[2] if len(args) == 3 else None

    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()

    def fds():
        # through fresh copies: a pipe may already sit on 3 or 4 (close-on-exec)
        a, b = os.dup(to_child_r), os.dup(from_child_w)
        os.dup2(a, 3)
        os.dup2(b, 4)

    proc = subprocess.Popen(cmd + ["--remote-debugging-pipe", "about:blank"],
                            preexec_fn=fds, close_fds=False,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    os.close(to_child_r)
    os.close(from_child_w)
    out = os.fdopen(to_child_w, "wb", buffering=0)
    inp = os.fdopen(from_child_r, "rb", buffering=0)
    pending = b""
    next_id = [0]

    def read_message():
        nonlocal pending
        while b"\0" not in pending:
            if time.monotonic() > DEADLINE:
                fail("timed out waiting for the browser")
            chunk = inp.read(65536)
            if not chunk:
                fail("the browser closed the pipe")
            pending += chunk
        msg, pending = pending.split(b"\0", 1)
        return json.loads(msg)

    def call(method, params=None, session=None, wait_event=None):
        """Send a command; return its result (and wait for WAIT_EVENT after)."""
        next_id[0] += 1
        mid = next_id[0]
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        out.write(json.dumps(msg).encode() + b"\0")
        result, seen = None, wait_event is None
        while result is None or not seen:
            m = read_message()
            if m.get("id") == mid:
                if "error" in m:
                    fail("%s: %s" % (method, m["error"].get("message")))
                result = m.get("result", {})
            elif wait_event and m.get("method") == wait_event:
                seen = True
        return result

    try:
        target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = call("Target.attachToTarget",
                       {"targetId": target, "flatten": True})["sessionId"]
        call("Page.enable", session=session)
        call("Emulation.setDeviceMetricsOverride",
             {"width": 1280, "height": 1700, "deviceScaleFactor": 1, "mobile": False},
             session=session)
        call("Page.navigate", {"url": url}, session=session, wait_event="Page.loadEventFired")
        root = call("DOM.getDocument", {"depth": -1}, session=session)["root"]["nodeId"]
        html = call("DOM.getOuterHTML", {"nodeId": root}, session=session)["outerHTML"]
        with open(dom_out, "w", encoding="utf-8") as f:
            f.write(html + "\n")
        if png_out:
            shot = call("Page.captureScreenshot", {"format": "png"}, session=session)
            with open(png_out, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        try:
            call("Browser.close")
        except SystemExit:
            pass
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
