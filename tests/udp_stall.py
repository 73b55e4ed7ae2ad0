#!/usr/bin/env python3
"""tests/udp_stall.py - a UDP relay for the tests that delays or stalls answers.

    udp_stall.py --dir DIR --port PORT --to TARGET_PORT

Relays datagrams between clients and a UDP server on 127.0.0.1:TARGET_PORT
(an ipmi_sim BMC), listening on 127.0.0.1:PORT (only there). Each client
address gets its own socket towards the server, so that answers go back to
the client that asked. Requests are always passed on at once; only answers
are held back, as by a BMC that is slow or stops answering.

Faults, files in DIR the test writes (read again at every datagram):
  delay        present: every answer passed on waits that many seconds
  stall_after  present: after that many requests (counted from when the
               file was last written) no answer is passed on: a BMC that
               goes silent
  silence_when present: holds a path; each time that path is created or
               touched, the client whose answer arrives next gets no answer
               any more (a Chassis Control: ipmi_sim runs its
               chassis_control program before it answers, and the test's
               program touches the path), while clients that come later (a
               new session, from a new socket) are answered: a BMC that
               carried out the control and lost the rest of that session
Written by the relay:
  port         written once listening (the test waits for it)
  requests.log one line per request: "EPOCH CLIENT_PORT LENGTH"
  answers.log  one line per answer from the server:
               "EPOCH CLIENT_PORT LENGTH passed|dropped|held SECONDS"
Stops on SIGTERM or SIGINT.
"""

import os
import select
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import relay_cli  # noqa: E402

HOST = relay_cli.HOST


def read_file(d, name):
    try:
        with open(os.path.join(d, name)) as f:
            return f.read().strip()
    except OSError:
        return None


def number(text, what):
    try:
        v = float(text)
    except (TypeError, ValueError):
        print(f"udp_stall.py: {what} is not a number: {text!r}", file=sys.stderr)
        return None
    return v if v >= 0 else None


class Relay:
    def __init__(self, d, port, target):
        self.dir = d
        self.target = (HOST, target)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind((HOST, port))
        self.backs = {}             # client address -> socket towards the server
        self.owner = {}             # that socket's fileno -> client address
        self.requests = 0
        self.stall_after_mtime = None
        self.stall_after_base = 0   # requests counted when stall_after was written
        self.silence_path = None    # silence_when's path, and its mtime as last seen
        self.silence_mtime = None
        self.silenced = set()       # client addresses that get no answer
        self.lock = threading.Lock()

    def log(self, name, line):
        with open(os.path.join(self.dir, name), "a") as f:
            f.write(f"{time.time():.6f} {line}\n")

    def stalled(self, addr):
        """Whether an answer for ADDR that arrives now is dropped."""
        path = read_file(self.dir, "silence_when")
        if path:
            try:
                mtime = os.stat(path).st_mtime_ns
            except OSError:
                mtime = None
            if path != self.silence_path:
                self.silence_path = path  # as it is now: only a change counts
            elif mtime is not None and mtime != self.silence_mtime:
                self.silenced.add(addr)
            self.silence_mtime = mtime
        if addr in self.silenced:
            return True
        try:
            st = os.stat(os.path.join(self.dir, "stall_after"))
        except OSError:
            self.stall_after_mtime = None
            return False
        if st.st_mtime_ns != self.stall_after_mtime:
            self.stall_after_mtime = st.st_mtime_ns
            self.stall_after_base = self.requests
        n = number(read_file(self.dir, "stall_after"), "stall_after")
        return n is not None and self.requests - self.stall_after_base >= n

    def back_for(self, addr):
        s = self.backs.get(addr)
        if s is None:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((HOST, 0))
            s.connect(self.target)
            self.backs[addr] = s
            self.owner[s.fileno()] = addr
        return s

    def answer(self, addr, data, delay):
        if delay:
            time.sleep(delay)
        with self.lock:
            self.front.sendto(data, addr)

    def serve(self):
        while True:
            socks = [self.front] + list(self.backs.values())
            ready, _, _ = select.select(socks, [], [])
            for s in ready:
                if s is self.front:
                    data, addr = self.front.recvfrom(65536)
                    self.requests += 1
                    self.log("requests.log", f"{addr[1]} {len(data)}")
                    try:
                        self.back_for(addr).send(data)
                    except OSError:
                        pass  # the server is gone: the client times out
                    continue
                addr = self.owner[s.fileno()]
                try:
                    data = s.recv(65536)
                except OSError:
                    continue  # ICMP port unreachable: nobody listens there
                if self.stalled(addr):
                    self.log("answers.log", f"{addr[1]} {len(data)} dropped 0")
                    continue
                delay = 0.0
                if os.path.exists(os.path.join(self.dir, "delay")):
                    delay = number(read_file(self.dir, "delay"), "delay") or 0.0
                self.log("answers.log", f"{addr[1]} {len(data)} "
                                        f"{'held' if delay else 'passed'} {delay:g}")
                if delay:
                    threading.Thread(target=self.answer, args=(addr, data, delay),
                                     daemon=True).start()
                else:
                    self.answer(addr, data, 0)


if __name__ == "__main__":
    sys.exit(relay_cli.run("udp_stall.py", "UDP relay that delays or stalls answers", Relay))
