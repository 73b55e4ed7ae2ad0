"""relay_cli - the command line the test relays share (tests/db_cut.py,
tests/udp_stall.py): --dir (its control directory, where it writes the
port it listens on), --port, --to (the server's port on 127.0.0.1); one
line for a bad argument (exit 2) or a port it cannot listen on (exit 1);
SIGTERM and SIGINT end it at once."""
import argparse
import os
import signal
import sys

HOST = "127.0.0.1"


def run(name, description, make_relay):
    """Parse the arguments, build the relay with make_relay(dir, port, to)
    and serve until a signal; the exit status."""

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            """One line, no usage block."""
            self.exit(2, f"{name}: {message}\n")

    p = Parser(description=description)
    p.add_argument("--dir", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--to", type=int, required=True, help="the server's port on 127.0.0.1")
    a = p.parse_args()
    for what, v in (("--port", a.port), ("--to", a.to)):
        if not 0 < v < 65536:
            p.error(f"{what} {v} is not a port number (1..65535)")
    if not os.path.isdir(a.dir):
        p.error(f"--dir {a.dir}: not a directory")
    try:
        relay = make_relay(a.dir, a.port, a.to)
    except OSError as e:
        print(f"{name}: cannot listen on {HOST}:{a.port}: {e.strerror}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    with open(os.path.join(a.dir, "port"), "w") as f:
        f.write(f"{a.port}\n")
    relay.serve()
    return 0
