#!/usr/bin/env python3
"""tests/tools/devtools.py PORT eval EXPRESSION | PORT screenshot FILE

A minimal client of the Chrome DevTools Protocol for tests/metrics.sh: it finds the one page
target of a headless Chromium started with --remote-debugging-port=PORT and either evaluates a
JavaScript EXPRESSION in it (the value, returned by value, printed as JSON) or writes a PNG
screenshot of it to FILE. Only the standard library: the WebSocket (RFC 6455) handshake and
framing it needs are written here (text frames, client frames masked, no extensions).
Exits 1 with a message when the page or the answer does not come within 10 s."""
import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.request
from urllib.parse import urlparse


def page_url(port):
    deadline = time.time() + 10
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=2) as r:
                for t in json.load(r):
                    if t.get("type") == "page" and t.get("webSocketDebuggerUrl"):
                        return t["webSocketDebuggerUrl"]
        except OSError:
            pass
        if time.time() > deadline:
            sys.exit("devtools: no page target on port %d" % port)
        time.sleep(0.1)


class WebSocket:
    def __init__(self, url):
        u = urlparse(url)
        self.s = socket.create_connection((u.hostname, u.port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                        % (u.path, u.hostname, u.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.s.recv(4096)
            if not chunk:
                sys.exit("devtools: the handshake was cut")
            head += chunk
        status, _, self.buf = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n")[0]:
            sys.exit("devtools: handshake refused: %s" % status.split(b"\r\n")[0].decode(errors="replace"))

    def send(self, text):
        data = text.encode()
        n = len(data)
        head = bytes([0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _take(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                sys.exit("devtools: the connection was cut")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        """the next whole text message (fragments joined; control frames skipped)"""
        parts = []
        while True:
            b0, b1 = self._take(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._take(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._take(8))[0]
            payload = self._take(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                sys.exit("devtools: the page closed the connection")
            if opcode in (0x9, 0xA):
                continue
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode()


def call(ws, method, params):
    ws.send(json.dumps({"id": 1, "method": method, "params": params}))
    while True:
        m = json.loads(ws.recv())
        if m.get("id") == 1:
            if "error" in m:
                sys.exit("devtools: %s failed: %s" % (method, m["error"]))
            return m["result"]


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("eval", "screenshot"):
        sys.exit(__doc__)
    ws = WebSocket(page_url(int(sys.argv[1])))
    if sys.argv[2] == "eval":
        r = call(ws, "Runtime.evaluate", {"expression": sys.argv[3], "returnByValue": True})
        if "exceptionDetails" in r:
            sys.exit("devtools: the expression threw: %s" % r["exceptionDetails"].get("text"))
        print(json.dumps(r["result"].get("value")))
    else:
        r = call(ws, "Page.captureScreenshot", {"format": "png"})
        with open(sys.argv[3], "wb") as f:
            f.write(base64.b64decode(r["data"]))


if __name__ == "__main__":
    main()
