#!/usr/bin/env python3
"""slow_http.py - a slow HTTP client, for tests of a server's deadlines.

    slow_http.py HOST PORT [--from ADDR,...] [--count N] [--interval SECS]
                 [--limit SECS]

Opens COUNT connections to HOST:PORT, spread round-robin over the source
addresses of --from (all of 127.0.0.0/8 is local on Linux, so one machine
can look like several clients), sends a request line and a Host header on
each, then one more header line every INTERVAL seconds on every connection
still open: the request never ends, each connection stays busy without
ever being idle.

Prints on stdout, flushed:
    open N                      once all connections are made
    closed I AFTER              connection I was closed by the server
                                AFTER seconds after it was opened
    done CLOSED OPEN            at the end: all closed, or --limit passed

Exits 0; 2 on bad arguments or when a connection cannot be made.
"""
import argparse
import select
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser(description="a slow HTTP client")
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--from", dest="sources", default="",
                    help="comma-separated source addresses")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--limit", type=float, default=120.0,
                    help="give up after this many seconds")
    a = ap.parse_args()
    sources = [s for s in a.sources.split(",") if s] or [None]

    conns = {}      # socket -> (index, time opened)
    for i in range(a.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        src = sources[i % len(sources)]
        try:
            if src:
                s.bind((src, 0))
            s.connect((a.host, a.port))
            s.sendall(b"GET /static/mxq-web.css HTTP/1.1\r\nHost: %s:%d\r\n"
                      % (a.host.encode(), a.port))
        except OSError as e:
            print("slow_http: connection %d from %s: %s" % (i, src or "any", e),
                  file=sys.stderr)
            sys.exit(2)
        conns[s] = (i, time.monotonic())
    print("open %d" % len(conns), flush=True)

    start = time.monotonic()
    next_send = start + a.interval
    closed = 0
    line = 0
    while conns and time.monotonic() - start < a.limit:
        timeout = max(0.0, next_send - time.monotonic())
        readable, _, _ = select.select(list(conns), [], [], timeout)
        gone = []
        for s in readable:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                gone.append(s)
        if time.monotonic() >= next_send:
            line += 1
            for s in conns:
                if s in gone:
                    continue
                try:
                    s.sendall(b"X-Slow-%d: still sending\r\n" % line)
                except OSError:
                    gone.append(s)
            next_send += a.interval
        for s in gone:
            i, opened = conns.pop(s)
            print("closed %d %.2f" % (i, time.monotonic() - opened), flush=True)
            s.close()
            closed += 1
    print("done %d %d" % (closed, len(conns)), flush=True)


if __name__ == "__main__":
    main()
